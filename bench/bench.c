/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench: throughput of the fp32 reductions, per ISA, against
 * OpenBLAS and against the machine's own single-thread read bandwidth, all
 * measured in one run.
 *
 *   decodenum-bench           full run (~15-25 s)
 *   decodenum-bench --quick   short run (~5 s), fewer and shorter samples
 *
 * Sizes: n = 4096 (both fdot inputs together 32 KiB: L1-resident, each sample
 * repeats the call many times) and n = 2^26 (256 MiB per array: memory
 * bound, one call per sample). Every figure is the median of repeated
 * samples (CLOCK_MONOTONIC) after a warm-up; cases that are compared with
 * each other are sampled round-robin, so noise from other processes falls on
 * all of them alike. GB/s counts input bytes read: 8n for a dot product, 4n
 * for a sum. Single thread throughout (OpenBLAS is set to one thread).
 *
 * The read bandwidth is the best of a few streaming-read kernels over a
 * 2^27-float (512 MiB) buffer; the fdot inputs at n = 2^26 are the two halves
 * of that same buffer, so both read exactly the same memory.
 */
#define _GNU_SOURCE /* OpenBLAS's cblas.h wants cpu_set_t */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "decodenum/fp32.h"
#include "dispatch.h"

#if defined(DN_BENCH_OPENBLAS)
#include <cblas.h>
#endif

#define SMALL_N ((size_t)4096)
#define LARGE_N ((size_t)1 << 26)
#define BW_FLOATS ((size_t)1 << 27) /* the shared buffer: a | b for n = 2^26 */

/* ---- cases -------------------------------------------------------------- */

/* ctx: the dn_fp32_kernels table. */
static void call_fdot(bench_case *c)
{
    const dn_fp32_kernels *k = c->ctx;
    c->result = k->fdot(c->a, c->b, c->n);
}

static void call_fsum(bench_case *c)
{
    const dn_fp32_kernels *k = c->ctx;
    c->result = k->fsum(c->a, c->n);
}

/* rd: a read kernel. Reads both fdot inputs, as fdot must: at n = 4096 this
   is the most bytes per second any kernel of the same vector width can load
   from L1, so its ratio to sdot bounds what fdot can reach. */
static void call_l1_read(bench_case *c)
{
    size_t bytes = c->n * sizeof(float);
    c->result = (float)(c->rd(c->a, bytes) + c->rd(c->b, bytes));
}

#if defined(DN_BENCH_OPENBLAS)
static void call_blas_sdot(bench_case *c) { c->result = cblas_sdot((int)c->n, c->a, 1, c->b, 1); }
static void call_blas_sasum(bench_case *c) { c->result = cblas_sasum((int)c->n, c->a, 1); }
#endif

/* One case: `bytes` input bytes per call, `want` samples. */
static bench_case mk(const char *op, const char *impl, bench_call_fn call, const dn_fp32_kernels *k,
                     const float *a, const float *b, size_t n, double bytes, int want)
{
    return (bench_case){.op = op,
                        .impl = impl,
                        .call = call,
                        .ctx = (void *)k,
                        .a = a,
                        .b = b,
                        .n = n,
                        .bytes = bytes,
                        .reps = 1,
                        .want = want};
}

/* ---- main --------------------------------------------------------------- */

/* The dot product in double (each product exact, the sum nearly so), and
   sum |a[i] * b[i]|, the scale a rounding error is judged by. */
static double dot_f64(const float *a, const float *b, size_t n, double *abs_sum)
{
    double s = 0.0, t = 0.0;
    for (size_t i = 0; i < n; i++) {
        double p = (double)a[i] * (double)b[i];
        s += p;
        t += fabs(p);
    }
    *abs_sum = t > 0.0 ? t : 1.0;
    return s;
}

static void print_row(const bench_case *c, double ghz, const char *check)
{
    double ns_el = c->med / (double)c->n * 1e9;
    char cyc[16] = "-";
    if (ghz > 0) snprintf(cyc, sizeof cyc, "%.3f", ns_el * ghz);
    printf("  %-5s %-9s %9zu %10.3f %8.2f %8.2f %8.4f %8s  %s\n", c->op, c->impl, c->n,
           c->med * 1e6, bench_gbps(c, c->med), bench_gbps(c, c->best), ns_el, cyc, check);
}

static void usage(const char *argv0)
{
    printf("usage: %s [--quick]\n"
           "  fdot / fsum throughput per ISA at n = 4096 and n = 2^26, OpenBLAS\n"
           "  cblas_sdot at the same sizes, and the single-thread read bandwidth.\n"
           "  --quick   about 5 s instead of about 20 s\n",
           argv0);
}

/* The plan (samples per case, seconds per small-n sample), the cases and
   where each one the summary compares sits (-1: absent). */
typedef struct run {
    int quick;
    int small_samples, large_samples, large_scalar_samples;
    double small_target, small_warm;
    double ghz, t_start;
    float *big, *sa, *sb;
    const char *vec_name; /* the SIMD ISA, if any */
    bench_case small[16], large[32];
    int ns, nl;
    int s_vec_dot, s_blas, l_vec_dot, l_blas, l_first_read;
    int s_ref_dot, l_ref_dot, s_ref_sum, l_ref_sum;
    int s_vec_sum, l_vec_sum, s_l1;
    int s_wide_dot; /* the AVX-512 fdot at n = 4096 */
} run;

static void plan(run *r, int quick)
{
    r->quick = quick;
    r->small_samples = quick ? 11 : 41;
    r->small_target = quick ? 2e-3 : 10e-3;
    r->small_warm = quick ? 0.02 : 0.1;
    r->large_samples = quick ? 5 : 25;
    r->large_scalar_samples = quick ? 1 : 3;
}

/* The command, as run, the machine and the peer. */
static void print_header(run *r, int argc, char **argv)
{
    static const char *const envs[] = {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                       "OPENBLAS_NUM_THREADS", "DECODENUM_ISA"};
    bench_print_command("decodenum-bench", argc, argv, envs, sizeof envs / sizeof envs[0]);

    r->ghz = bench_clock_ghz(r->quick ? 0.05 : 0.2);
    bench_print_machine(r->ghz);
    printf("env: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s\n",
           bench_env_or("OPENBLAS_CORETYPE", "(unset)"),
           bench_env_or("OPENBLAS_L2_SIZE", "(unset)"));
#if defined(DN_BENCH_OPENBLAS)
    openblas_set_num_threads(1);
    printf("openblas: %s | core %s | threads %d\n", openblas_get_config(), openblas_get_corename(),
           openblas_get_num_threads());
#else
    printf("openblas: not found\n");
#endif
    fflush(stdout);
}

/* Buffers. big = a | b at n = 2^26, and the read-bandwidth buffer. */
static int alloc_buffers(run *r)
{
    r->big = bench_alloc(BW_FLOATS * sizeof(float));
    r->sa = bench_alloc(SMALL_N * sizeof(float)), r->sb = bench_alloc(SMALL_N * sizeof(float));
    if (!r->big || !r->sa || !r->sb) {
        fprintf(stderr, "decodenum-bench: out of memory (needs 512 MiB)\n");
        return -1;
    }
    bench_fill(r->big, BW_FLOATS, 1u);
    bench_fill(r->sa, SMALL_N, 2u);
    bench_fill(r->sb, SMALL_N, 3u);
    return 0;
}

/* fdot and fsum of every ISA this build and CPU run, at both sizes. */
static void add_isa_cases(run *r)
{
    static const dn_isa isas[] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_NEON, DN_ISA_AVX512};
    const dn_fp32_kernels *kt[4];
    for (int i = 0; i < 4; i++)
        kt[i] = dn_kernels_for(isas[i]) ? dn_kernels_for(isas[i])->fp32 : NULL;
    const dn_fp32_kernels *vec = kt[1] ? kt[1] : kt[2]; /* the SIMD table, if any */
    r->vec_name = kt[1] ? "avx2" : kt[2] ? "neon" : NULL;
    const float *sa = r->sa, *sb = r->sb, *la = r->big, *lb = r->big + LARGE_N;
    bench_case *small = r->small, *large = r->large;

    for (int i = 0; i < 4; i++) {
        if (!kt[i]) continue;
        const char *name = dn_isa_name(isas[i]);
        int is_ref = isas[i] == DN_ISA_SCALAR;
        if (is_ref)
            r->s_ref_dot = r->ns;
        else if (kt[i] == vec)
            r->s_vec_dot = r->ns;
        else if (isas[i] == DN_ISA_AVX512)
            r->s_wide_dot = r->ns;
        small[r->ns++] =
            mk("fdot", name, call_fdot, kt[i], sa, sb, SMALL_N, 8.0 * SMALL_N, r->small_samples);
        if (is_ref)
            r->s_ref_sum = r->ns;
        else if (kt[i] == vec)
            r->s_vec_sum = r->ns;
        small[r->ns++] =
            mk("fsum", name, call_fsum, kt[i], sa, NULL, SMALL_N, 4.0 * SMALL_N, r->small_samples);
        int want = is_ref ? r->large_scalar_samples : r->large_samples;
        if (is_ref)
            r->l_ref_dot = r->nl;
        else if (kt[i] == vec)
            r->l_vec_dot = r->nl;
        large[r->nl++] = mk("fdot", name, call_fdot, kt[i], la, lb, LARGE_N, 8.0 * LARGE_N, want);
        if (is_ref)
            r->l_ref_sum = r->nl;
        else if (kt[i] == vec)
            r->l_vec_sum = r->nl;
        large[r->nl++] = mk("fsum", name, call_fsum, kt[i], la, NULL, LARGE_N, 4.0 * LARGE_N, want);
    }
}

/* OpenBLAS, the L1 load ceiling and the read kernels. */
static void add_peer_cases(run *r)
{
    const float *sa = r->sa, *sb = r->sb;
    bench_case *small = r->small, *large = r->large;
#if defined(DN_BENCH_OPENBLAS)
    const float *la = r->big, *lb = r->big + LARGE_N;
    r->s_blas = r->ns;
    small[r->ns++] = mk("sdot", "openblas", call_blas_sdot, NULL, sa, sb, SMALL_N, 8.0 * SMALL_N,
                        r->small_samples);
    small[r->ns++] = mk("sasum", "openblas", call_blas_sasum, NULL, sa, NULL, SMALL_N,
                        4.0 * SMALL_N, r->small_samples);
    r->l_blas = r->nl;
    large[r->nl++] = mk("sdot", "openblas", call_blas_sdot, NULL, la, lb, LARGE_N, 8.0 * LARGE_N,
                        r->large_samples);
    large[r->nl++] = mk("sasum", "openblas", call_blas_sasum, NULL, la, NULL, LARGE_N,
                        4.0 * LARGE_N, r->large_samples);
#endif
    /* The L1 load ceiling of the SIMD kernels' vector width at n = 4096. */
    for (int i = 0; r->vec_name && i < bench_read_kernel_count(); i++) {
        char want[16];
        snprintf(want, sizeof want, "%s-int", r->vec_name);
        if (strcmp(bench_read_kernel_name(i), want)) continue;
        r->s_l1 = r->ns;
        small[r->ns] = mk("read", bench_read_kernel_name(i), call_l1_read, NULL, sa, sb, SMALL_N,
                          8.0 * SMALL_N, r->small_samples);
        small[r->ns++].rd = bench_read_kernel(i);
    }
    /* Read kernels over the whole 512 MiB buffer. */
    r->l_first_read = r->nl;
    r->nl = bench_add_read_cases(large, r->nl, NULL, r->big, BW_FLOATS * sizeof(float),
                                 r->large_samples);
}

static void measure(run *r)
{
    /* Small n: warm-up and calibration, then round-robin samples. */
    for (int i = 0; i < r->ns; i++) bench_calibrate(&r->small[i], r->small_warm, r->small_target);
    bench_run_group(r->small, r->ns);
    /* Large n: one call per sample; the full run warms each case up with one
       call first (the buffer is already faulted in by fill, so --quick skips
       that and relies on the median). */
    if (!r->quick)
        for (int i = 0; i < r->nl; i++) bench_calibrate(&r->large[i], 0.0, 0.0);
    bench_run_group(r->large, r->nl);
}

/* The table; checks: every SIMD table's bits against the scalar reference. */
static void print_table(const run *r)
{
    char chk[80];
    printf("\n  %-5s %-9s %9s %10s %8s %8s %8s %8s  %s\n", "op", "impl", "n", "us/call", "GB/s",
           "GB/s-max", "ns/elem", "cyc/elem", "check");
    for (int pass = 0; pass < 2; pass++) {
        const bench_case *cs = pass ? r->large : r->small;
        int count = pass ? r->l_first_read : r->ns;
        int ref_dot = pass ? r->l_ref_dot : r->s_ref_dot,
            ref_sum = pass ? r->l_ref_sum : r->s_ref_sum;
        for (int i = 0; i < count; i++) {
            const bench_case *c = &cs[i];
            chk[0] = 0;
            int ref = !strcmp(c->op, "fdot") ? ref_dot : !strcmp(c->op, "fsum") ? ref_sum : -1;
            if (ref >= 0 && ref != i)
                snprintf(chk, sizeof chk, "%s",
                         bench_bits_of(c->result) == bench_bits_of(cs[ref].result)
                             ? "bits = scalar"
                             : "BITS DIFFER FROM SCALAR");
            else if (!strcmp(c->op, "sdot") && ref_dot >= 0) {
                double scale, exact = dot_f64(c->a, c->b, c->n, &scale);
                snprintf(chk, sizeof chk, "err/sum|ab|: sdot %.1e, fdot %.1e",
                         fabs((double)c->result - exact) / scale,
                         fabs((double)cs[ref_dot].result - exact) / scale);
            }
            print_row(c, r->ghz, chk);
        }
        if (!pass) printf("\n");
    }
}

/* The read kernels' bandwidth; the best one's index. */
static int print_bandwidth(const run *r)
{
    printf("\n  read bandwidth, single thread, %zu MiB buffer (median GB/s, max GB/s):\n",
           BW_FLOATS * sizeof(float) >> 20);
    for (int i = r->l_first_read; i < r->nl; i++) {
        printf("    %-10s %7.2f %7.2f\n", r->large[i].impl,
               bench_gbps(&r->large[i], r->large[i].med),
               bench_gbps(&r->large[i], r->large[i].best));
    }
    int best_read = bench_best_case(r->large, r->l_first_read, r->nl);
    printf("    best: %s, %.2f GB/s\n", r->large[best_read].impl,
           bench_gbps(&r->large[best_read], r->large[best_read].med));
    return best_read;
}

static void print_summary(const run *r, int best_read)
{
    const bench_case *small = r->small, *large = r->large;
    const char *vec_name = r->vec_name;
    double bw = bench_gbps(&large[best_read], large[best_read].med);
    printf("\nsummary: throughput ratios, >1 = the first is faster. 'paired' is the median of\n"
           "the per-round ratios (both sampled back to back, robust to load drifting over\n"
           "the run); 'medians' divides the two medians.\n");
    double rm, rp;
    if (r->s_vec_dot >= 0 && r->s_blas >= 0) {
        bench_ratio(&small[r->s_vec_dot], &small[r->s_blas], &rm, &rp);
        printf(
            "  %s fdot / openblas sdot, n=4096 : paired %.3f, medians %.3f  (target >= 0.8: %s)\n",
            vec_name, rp, rm, rp >= 0.8 ? "met" : "MISSED");
        if (r->s_l1 >= 0) {
            double cm, cp;
            bench_ratio(&small[r->s_l1], &small[r->s_blas], &cm, &cp);
            printf("  %s L1 read / openblas sdot, n=4096 : paired %.3f, medians %.3f  (the ceiling "
                   "of\n"
                   "      any kernel that loads both inputs %s-wide; fdot reaches %.2f of it)\n",
                   vec_name, cp, cm, vec_name, rp / cp);
        }
        bench_ratio(&large[r->l_vec_dot], &large[r->l_blas], &rm, &rp);
        printf("  %s fdot / openblas sdot, n=2^26 : paired %.3f, medians %.3f\n", vec_name, rp, rm);
        if (r->s_wide_dot >= 0) {
            bench_ratio(&small[r->s_wide_dot], &small[r->s_blas], &rm, &rp);
            printf("  avx512 fdot / openblas sdot, n=4096 : paired %.3f, medians %.3f  (target >= "
                   "0.8 of OpenBLAS's own kernel choice: %s)\n",
                   rp, rm, rp >= 0.8 ? "met" : "MISSED");
        }
    } else {
        printf("  fdot / openblas sdot: %s\n",
               r->s_blas < 0 ? "openblas not found" : "no SIMD fdot");
    }
    if (r->l_vec_dot >= 0) {
        bench_ratio(&large[r->l_vec_dot], &large[best_read], &rm, &rp);
        printf("  %s fdot n=2^26 / read bandwidth : paired %.3f, medians %.3f  (%.2f vs %.2f GB/s; "
               "target >= 0.9: %s)\n",
               vec_name, rp, rm, bench_gbps(&large[r->l_vec_dot], large[r->l_vec_dot].med), bw,
               rp >= 0.9 ? "met" : "MISSED");
    }
    if (r->l_vec_sum >= 0) {
        bench_ratio(&large[r->l_vec_sum], &large[best_read], &rm, &rp);
        printf("  %s fsum n=2^26 / read bandwidth : paired %.3f, medians %.3f\n", vec_name, rp, rm);
    }
    printf("  samples: %d per case at n=4096 (~%.0f ms each), %d at n=2^26 (scalar %d); run took "
           "%.1f s\n",
           r->small_samples, r->small_target * 1e3, r->large_samples, r->large_scalar_samples,
           now_s() - r->t_start);
}

int main(int argc, char **argv)
{
    int quick = 0;
    int rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    static run r;
    r.t_start = now_s();
    r.s_vec_dot = r.s_blas = r.l_vec_dot = r.l_blas = r.l_first_read = -1;
    r.s_ref_dot = r.l_ref_dot = r.s_ref_sum = r.l_ref_sum = -1;
    r.s_vec_sum = r.l_vec_sum = r.s_l1 = r.s_wide_dot = -1;
    plan(&r, quick);
    print_header(&r, argc, argv);
    if (alloc_buffers(&r)) return 1;
    add_isa_cases(&r);
    add_peer_cases(&r);
    measure(&r);
    print_table(&r);
    int best_read = print_bandwidth(&r);
    print_summary(&r, best_read);
    free(r.big);
    free(r.sa);
    free(r.sb);
    return 0;
}
