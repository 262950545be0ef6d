/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-fp8: the FP8 E4M3 products through the public API, on 1
 * and 2 threads, against the machine's read bandwidth measured in the same
 * run with the same number of threads, and beside the F16 mat_vec of the
 * same shape (two bytes a weight) sampled in the same rounds.
 *
 *   decodenum-bench-fp8           full run
 *   decodenum-bench-fp8 --quick   short run, fewer samples
 *
 * Cases:
 *  - dn_fp8_mat_vec of an 8192 x 8192 E4M3 matrix (64 MiB) with 128 x 128
 *    block scales and a tensor scale, pool NULL, 1 and 2 threads: ms per
 *    call, GB/s of weights (rows * k bytes) and the ratio to the best
 *    streaming-read kernel reading the same 64 MiB with as many threads;
 *    dn_f16_mat_vec of 8192 x 8192 (128 MiB) on 2 threads in the same
 *    rounds. One call per sample, all sampled round-robin in a shuffled
 *    order, so load from other processes falls on all alike.
 *    The one-thread cases again timed by CPU time (best of the samples),
 *    which the load of other processes does not inflate.
 *  - the active ISA's FP8 and F16 mat_vec_rows kernels on 64 x 8192 weights
 *    (in L2), best of many calls by CPU time: the decode's cost.
 *  - dn_fp8_mat_mul of 4096 x 8192 times 8 columns, 1 and 2 threads.
 *  - per ISA, single thread, dn_kernels_for(isa)->fp8->mat_vec_rows on
 *    2048 x 2048, bits checked equal to the scalar reference's.
 * Outputs of 1 and 2 threads are checked bit-identical.
 *
 * Weights: codes of a Gaussian-ish sample (sum of four uniforms) scaled per
 * 128 x 128 block to a largest magnitude of 448, rounded to E4M3 by
 * nearest; activations uniform in [-1, 1).
 */
#define _GNU_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "decodenum/f16.h"
#include "decodenum/fp8.h"
#include "decodenum/pool.h"
#include "dispatch.h"

#define DIM ((size_t)8192)
#define MM_DIM ((size_t)4096)
#define MM_N ((size_t)8)
#define ISA_DIM ((size_t)2048)

typedef struct product {
    const uint8_t *w;
    const uint16_t *w16;
    const float *scales;
    size_t rows, k, n;
    const float *act;
    float *out;
    dn_pool *pool;
    const dn_fp8_kernels *kern;
} product;

static void fail(const char *what, dn_status st)
{
    fprintf(stderr, "decodenum-bench-fp8: %s: %s\n", what, dn_status_str(st));
    exit(1);
}

static void call_mat_vec(bench_case *c)
{
    const product *p = c->ctx;
    dn_status st = dn_fp8_mat_vec(p->w, p->rows, p->k, p->scales, 0.5f, p->act, p->out, p->pool);
    if (st != DN_OK) fail("dn_fp8_mat_vec", st);
}

static void call_f16_mat_vec(bench_case *c)
{
    const product *p = c->ctx;
    dn_status st = dn_f16_mat_vec(p->w16, p->rows, p->k, p->act, p->out, p->pool);
    if (st != DN_OK) fail("dn_f16_mat_vec", st);
}

static void call_mat_mul(bench_case *c)
{
    const product *p = c->ctx;
    dn_status st =
        dn_fp8_mat_mul(p->w, p->rows, p->k, p->scales, 0.5f, p->act, p->n, p->out, p->pool);
    if (st != DN_OK) fail("dn_fp8_mat_mul", st);
}

static void call_kern(bench_case *c)
{
    const product *p = c->ctx;
    dn_fp8_mat m = {p->w, p->rows, p->k, p->scales, 0.5f};
    p->kern->mat_vec_rows(&m, p->act, 0, p->rows, p->out);
}

static bench_case mk(const char *op, const char *impl, bench_call_fn call, product *p,
                     double bytes_per_weight, int want)
{
    return (bench_case){.op = op,
                        .impl = impl,
                        .call = call,
                        .ctx = p,
                        .n = p->rows * p->k,
                        .bytes = bytes_per_weight * (double)p->rows * (double)p->k,
                        .reps = 1,
                        .want = want};
}

/* ---- data ------------------------------------------------------------------- */

/* The E4M3 code nearest v (|v| <= 448), ties to the even code. */
static uint8_t to_e4m3(float v)
{
    uint8_t lo = 0, hi = 0x7E, sign = v < 0 ? 0x80 : 0;
    float a = fabsf(v);
    while (hi - lo > 1) {
        uint8_t mid = (uint8_t)((lo + hi) / 2);
        if (dn_fp8_e4m3_to_f32(mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    float dl = a - dn_fp8_e4m3_to_f32(lo), dh = dn_fp8_e4m3_to_f32(hi) - a;
    uint8_t c = dl < dh || (dl == dh && !(lo & 1)) ? lo : hi;
    return (uint8_t)(c | sign);
}

/* rows x k codes and their block scales from a Gaussian-ish sample. */
static void fill_fp8(uint8_t *w, float *scales, size_t rows, size_t k, uint32_t seed)
{
    uint32_t s = seed;
    size_t kb = k / 128;
    float *tmp = malloc(128 * k * sizeof *tmp);
    if (!tmp) exit(1);
    for (size_t g = 0; g < rows / 128; g++) {
        for (size_t i = 0; i < 128 * k; i++) {
            int64_t sum = 0;
            for (int u = 0; u < 4; u++) sum += (int64_t)bench_lcg(&s) - 2147483648LL;
            tmp[i] = (float)sum * 0x1p-32f;
        }
        for (size_t j = 0; j < kb; j++) {
            float amax = 0;
            for (size_t r = 0; r < 128; r++)
                for (size_t c = 0; c < 128; c++)
                    amax = fmaxf(amax, fabsf(tmp[r * k + j * 128 + c]));
            float sc = amax > 0 ? amax / 448.0f : 1.0f;
            scales[g * kb + j] = sc;
            for (size_t r = 0; r < 128; r++)
                for (size_t c = 0; c < 128; c++) {
                    float v = fminf(fmaxf(tmp[r * k + j * 128 + c] / sc, -448.0f), 448.0f);
                    w[(g * 128 + r) * k + j * 128 + c] = to_e4m3(v);
                }
        }
    }
    free(tmp);
}

/* ---- the run ------------------------------------------------------------------- */

typedef struct run {
    int quick, samples;
    uint8_t *w;
    uint16_t *w16;
    float *scales, *act, *out;
    dn_pool *pool1, *pool2;
    bench_team *team2;
    product mv[4], mm[2], kp[3];
    bench_case g1[40], g2[2], g3[3];
} run;

static int setup(run *r)
{
    r->w = bench_alloc(DIM * DIM);
    r->w16 = bench_alloc(DIM * DIM * 2);
    r->scales = bench_alloc((DIM / 128) * (DIM / 128) * sizeof(float));
    r->act = bench_alloc(MM_N * DIM * sizeof(float));
    r->out = bench_alloc((8 * DIM + 2 * MM_N * MM_DIM + 3 * ISA_DIM) * sizeof(float));
    if (!r->w || !r->w16 || !r->scales || !r->act || !r->out) return -1;
    fill_fp8(r->w, r->scales, DIM, DIM, 7u);
    bench_fill(r->act, MM_N * DIM, 11u);
    for (size_t i = 0; i < DIM * DIM; i++) /* the F16 matrix: codes' values / 512 */
        r->w16[i] = (uint16_t)(0x3C00 ^ (r->w[i] & 0x80 ? 0x8000 : 0) ^ (r->w[i] & 0x1F));
    r->pool1 = dn_pool_create(1), r->pool2 = dn_pool_create(2);
    r->team2 = bench_team_create(2);
    return r->pool1 && r->pool2 && r->team2 ? 0 : -1;
}

/* The one-thread cases (they run on the calling thread) timed by that
   thread's CPU time, best of the samples, in alternation: on a machine
   shared with other processes a thread's wall time includes the time it
   waited for a core, its CPU time does not (memory contention from the
   others remains). Two-thread cases are not timed this way: the process's
   CPU time (CLOCK_PROCESS_CPUTIME_ID) charges a thread running on another
   core only at the scheduler's tick or a switch, so on an idle host a
   1.4 ms two-thread call read as little as one thread's time (1.37 of the
   read bandwidth), and it charges the idle pools' spinning workers to
   whatever runs beside them (one-thread calls read 1.3x their wall time). */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void cpu_time_section(run *r, int best_read1)
{
    const int idx[3] = {0, best_read1, 1};
    double best[3] = {1e30, 1e30, 1e30};
    for (int s = 0; s < 2 * r->samples; s++)
        for (int i = 0; i < 3; i++) {
            bench_case *c = &r->g1[idx[i]];
            double t0 = cpu_s();
            c->call(c);
            double t = cpu_s() - t0;
            best[i] = t < best[i] ? t : best[i];
        }
    printf("\n  one thread by CPU time (best of %d, alternated):\n", 2 * r->samples);
    static const char *const what[3] = {"fp8 mat_vec pool NULL", "read, 1 thread",
                                        "fp8 mat_vec pool 1"};
    for (int i = 0; i < 3; i++) {
        const bench_case *c = &r->g1[idx[i]];
        printf("    %-22s %8.2f ms %8.2f GB/s\n", what[i], best[i] * 1e3,
               c->bytes / best[i] * 1e-9);
    }
    double bw1 = r->g1[best_read1].bytes / best[1];
    printf("    / read bandwidth: fp8 pool NULL %.3f, pool 1 %.3f\n",
           r->g1[0].bytes / best[0] / bw1, r->g1[1].bytes / best[2] / bw1);
}

static void mat_vec_section(run *r)
{
    dn_pool *pools[3] = {NULL, r->pool1, r->pool2};
    static const char *const names[3] = {"pool NULL", "pool 1", "pool 2"};
    int n = 0;
    for (int i = 0; i < 3; i++) {
        r->mv[i] =
            (product){r->w, NULL, r->scales, DIM, DIM, 1, r->act, r->out + i * DIM, pools[i], NULL};
        r->g1[n++] = mk("fp8 mat_vec", names[i], call_mat_vec, &r->mv[i], 1.0, r->samples);
    }
    r->mv[3] = (product){NULL, r->w16, NULL, DIM, DIM, 1, r->act, r->out + 3 * DIM, r->pool2, NULL};
    r->g1[n++] = mk("f16 mat_vec", "pool 2", call_f16_mat_vec, &r->mv[3], 2.0, r->samples);
    int r1 = n;
    n = bench_add_read_cases(r->g1, n, NULL, r->w, DIM * DIM, r->samples);
    int r2 = n;
    n = bench_add_read_cases(r->g1, n, r->team2, r->w, DIM * DIM, r->samples);
    for (int i = 0; i < n; i++) bench_calibrate(&r->g1[i], r->quick ? 0.0 : 0.05, 0.0);
    bench_run_group_shuffled(r->g1, n);
    int b1 = bench_best_case(r->g1, r1, r2), b2 = bench_best_case(r->g1, r2, n);
    printf("\n%zu x %zu mat_vec, %d samples of 1 call each:\n", DIM, DIM, r->samples);
    printf("  %-12s %-9s %8s %8s %8s   %s\n", "op", "pool", "ms/call", "GB/s", "GB/s-max",
           "/ read bandwidth, same threads (paired, of medians)");
    for (int i = 0; i < 4; i++) {
        const bench_case *c = &r->g1[i], *rd = &r->g1[i == 0 || i == 1 ? b1 : b2];
        double rm, rp;
        bench_ratio(c, rd, &rm, &rp);
        printf("  %-12s %-9s %8.2f %8.2f %8.2f   %.3f, %.3f  (read %s %.2f GB/s)\n", c->op, c->impl,
               c->med * 1e3, bench_gbps(c, c->med), bench_gbps(c, c->best), rp, rm, rd->impl,
               bench_gbps(rd, rd->med));
    }
    double tm, tp;
    bench_ratio(&r->g1[2], &r->g1[3], &tm, &tp);
    printf("  fp8 / f16 mat_vec time on 2 threads (paired, of medians): %.3f, %.3f"
           " (fp8 reads half the bytes)\n",
           1.0 / tp, 1.0 / tm);
    printf("  read bandwidth over the same 64 MiB (median / max GB/s):\n");
    bench_print_read_pairs(r->g1, r1, r2);
    cpu_time_section(r, b1);
}

static void mat_mul_section(run *r)
{
    for (int i = 0; i < 2; i++) {
        r->mm[i] = (product){r->w,
                             NULL,
                             r->scales,
                             MM_DIM,
                             DIM,
                             MM_N,
                             r->act,
                             r->out + 4 * DIM + (size_t)i * MM_N * MM_DIM,
                             i ? r->pool2 : r->pool1,
                             NULL};
        r->g2[i] =
            mk("fp8 mat_mul", i ? "pool 2" : "pool 1", call_mat_mul, &r->mm[i], 1.0, r->samples);
        bench_calibrate(&r->g2[i], 0.0, r->quick ? 0.02 : 0.05);
    }
    bench_run_group_shuffled(r->g2, 2);
    /* the products are FMAs of the active ISA's width */
    const dn_isa isa = dn_isa_active();
    const bench_peak_kind pk = isa == DN_ISA_AVX512 ? BENCH_PEAK_FMA_ZMM : BENCH_PEAK_FMA_YMM;
    const double peak = isa == DN_ISA_AVX512 || isa == DN_ISA_AVX2 ? bench_peak(pk) * 1e-9 : 0;
    printf("\n%zu x %zu mat_mul, n = %zu:\n", MM_DIM, DIM, MM_N);
    for (int i = 0; i < 2; i++) {
        double gf = 2.0 * (double)(MM_DIM * DIM * MM_N) / r->g2[i].med * 1e-9;
        printf("  %-9s %8.2f ms/call %8.2f GFLOP/s", r->g2[i].impl, r->g2[i].med * 1e3, gf);
        if (peak > 0) printf("  %.3f of the peak", gf / ((i + 1) * peak));
        printf("\n");
    }
    if (peak > 0)
        printf("  peak: %s, %.1f GFLOP/s on one thread (measured), times the threads\n",
               bench_peak_name(pk), peak);
}

static int per_isa(run *r)
{
    static const dn_isa isas[4] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_AVX512, DN_ISA_NEON};
    int n = 0, ok = 1;
    for (int i = 0; i < 4; i++) {
        const dn_kernels *ks = dn_kernels_for(isas[i]);
        if (!ks) continue;
        r->kp[n] = (product){
            r->w,    NULL,   r->scales, ISA_DIM,
            ISA_DIM, 1,      r->act,    r->out + 4 * DIM + 2 * MM_N * MM_DIM + (size_t)n * ISA_DIM,
            NULL,    ks->fp8};
        r->g3[n] = mk("mat_vec_rows", dn_isa_name(isas[i]), call_kern, &r->kp[n], 1.0,
                      isas[i] == DN_ISA_SCALAR ? 3 : r->samples);
        bench_calibrate(&r->g3[n], 0.01, 0.02);
        n++;
    }
    bench_run_group_shuffled(r->g3, n);
    printf("\nper ISA, single thread, the kernel table's mat_vec_rows, %zu x %zu:\n", ISA_DIM,
           ISA_DIM);
    for (int i = 0; i < n; i++) {
        int same = memcmp(r->kp[i].out, r->kp[0].out, ISA_DIM * sizeof(float)) == 0;
        ok &= same;
        printf("  %-7s %9.3f ms/call %8.2f GB/s  %s\n", r->g3[i].impl, r->g3[i].med * 1e3,
               bench_gbps(&r->g3[i], r->g3[i].med),
               i ? (same ? "bits = scalar" : "BITS DIFFER") : "");
    }
    return ok;
}

/* The active ISA's FP8 and F16 mat_vec_rows kernels on 64 x 8192 weights
   (512 KiB and 1 MiB: in L2), best of many calls by CPU time, alternated:
   the decode's cost without memory in the way. */
static void in_cache_section(run *r)
{
    const size_t rows = 64;
    const dn_kernels *ks = dn_kernels_active();
    dn_fp8_mat m = {r->w, rows, DIM, r->scales, 0.5f};
    float *y = r->out + 4 * DIM + 2 * MM_N * MM_DIM + 3 * ISA_DIM; /* after every other output */
    double best8 = 1e30, best16 = 1e30;
    /* the F16 kernel's activation as the F16 products pass it: rounded to
       binary16, widened, and its patterns beside it */
    const dn_w16_kernels *f16 = &ks->f16->fp16;
    uint16_t *xh = malloc(DIM * sizeof *xh);
    float *xr = malloc(DIM * sizeof *xr);
    if (!xh || !xr) {
        free(xh), free(xr);
        return;
    }
    f16->from_f32(r->act, xh, DIM);
    f16->widen(xh, xr, DIM);
    for (int s = 0; s < 30 * r->samples; s++) {
        double t0 = cpu_s();
        ks->fp8->mat_vec_rows(&m, r->act, 0, rows, y);
        double t1 = cpu_s();
        f16->mat_vec_rows(r->w16, DIM, xr, xh, 0, rows, y);
        double t2 = cpu_s();
        best8 = t1 - t0 < best8 ? t1 - t0 : best8;
        best16 = t2 - t1 < best16 ? t2 - t1 : best16;
    }
    double n = (double)(rows * DIM);
    printf(
        "\nin L2, one thread, %zu x %zu, the active kernels, best of %d by CPU time:\n"
        "  fp8 mat_vec_rows %.2f G weights/s, f16 mat_vec_rows %.2f G weights/s (fp8 / f16 %.3f)\n",
        rows, DIM, 30 * r->samples, n / best8 * 1e-9, n / best16 * 1e-9, best16 / best8);
    /* one byte a weight: the mat_vec cases' GB/s are G weights/s */
    const double l2 = n / best8 * 1e-9;
    printf(
        "  %zu x %zu fp8 mat_vec from memory / (threads x this rate, its compute limit): pool NULL "
        "%.3f, pool 2 %.3f\n",
        DIM, DIM, bench_gbps(&r->g1[0], r->g1[0].med) / l2,
        bench_gbps(&r->g1[2], r->g1[2].med) / (2 * l2));
    free(xh), free(xr);
}

static void usage(const char *argv0)
{
    printf(
        "usage: %s [--quick]\n"
        "  dn_fp8_mat_vec 8192x8192 on 1 and 2 threads against the read bandwidth with as\n"
        "  many threads and dn_f16_mat_vec; dn_fp8_mat_mul 4096x8192 x 8; the kernels per ISA.\n",
        argv0);
}

int main(int argc, char **argv)
{
    int quick = 0;
    int rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    static run r;
    double t0 = now_s();
    r.quick = quick;
    r.samples = quick ? 7 : 15;
    static const char *const envs[] = {"DECODENUM_ISA"};
    bench_print_command("decodenum-bench-fp8", argc, argv, envs, 1);
    bench_print_machine(bench_clock_ghz(quick ? 0.05 : 0.2));
    bench_print_load();
    if (setup(&r)) {
        fprintf(stderr, "decodenum-bench-fp8: out of memory or threads (needs ~200 MiB)\n");
        return 1;
    }
    mat_vec_section(&r);
    in_cache_section(&r);
    mat_mul_section(&r);
    int isa_ok = per_isa(&r);
    int same = memcmp(r.out, r.out + DIM, DIM * 4) == 0 &&
               memcmp(r.out, r.out + 2 * DIM, DIM * 4) == 0 &&
               memcmp(r.mm[0].out, r.mm[1].out, MM_N * MM_DIM * 4) == 0;
    printf("\nbits: %s (mat_vec pool NULL / 1 / 2; mat_mul 1 / 2 threads)\n",
           same ? "identical across thread counts" : "DIFFER ACROSS THREAD COUNTS");
    printf("run took %.1f s\n", now_s() - t0);
    bench_print_load();
    return same && isa_ok ? 0 : 1;
}
