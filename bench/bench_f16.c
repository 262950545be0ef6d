/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-f16: the F16 or BF16 products (ggml's bits) through the public API,
 * on 1 and 2 threads, against the machine's read bandwidth measured in the
 * same run with the same number of threads, and against ggml: ggml_mul_mat
 * on the same buffers in the same run when the bench is built with a ggml
 * (DECODENUM_BENCH_GGML, bench/ggml_peer.h), else ggml's figures from issue 4
 * (constants, not measured here).
 *
 *   decodenum-bench-f16           full run (~10 s)
 *   decodenum-bench-f16 --quick   short run (~3 s), fewer and shorter samples
 *   decodenum-bench-f16 --bf16    the same cases with BF16 weights (dn_bf16_*; the
 *                                 ggml peer given GGML_TYPE_BF16 weights)
 *
 * Cases:
 *  - dn_f16_mat_vec of an 8192 x 8192 F16 matrix (128 MiB of weights) with
 *    pool NULL, a pool of 1 and a pool of 2 threads: ms per call, GB/s of
 *    weights (2 * rows * k bytes per call) and the ratio to the best
 *    streaming-read kernel reading the same 128 MiB with as many threads
 *    (1 thread: the caller; 2 threads: each reads its own half). One call
 *    per sample, sampled round-robin with the read kernels; beside them the
 *    active kernel table's mat_vec_rows on the matrix's first 32 rows
 *    (512 KiB, in L2, the activation rounded beforehand), whose rate times
 *    the threads is the product's compute limit: the fraction of it reached
 *    from memory says how much of the time the memory takes.
 *  - dn_f16_mat_mul of a 4096 x 4096 matrix (the first 32 MiB of the same
 *    weights) times n = 8 and n = 64 columns (tinyBLAS path), 1 and 2 threads,
 *    with the fraction of the peak of the instruction the kernel is built on
 *    (bench_peak: vfmadd231ps, or vdpbf16ps for BF16's AVX-512 tile, measured
 *    on one thread, times the threads).
 *  - with a ggml peer, ggml_mul_mat of each of those products (activation
 *    converted to F16 in every call, as ggml does) sampled round-robin with
 *    ours, and our speed over ggml's paired round by round.
 *  - per ISA, single thread, the kernel tables called directly
 *    (dn_kernels_for(isa)->f16->fp16.mat_vec_rows / sgemm_rows) on 2048 x 2048:
 *    scalar (the reference) against avx2, avx512 or neon, bits checked equal
 *    (on x86 the avx512 over avx2 ratio of the same run too).
 * Every figure is the median of repeated CLOCK_MONOTONIC samples after a
 * warm-up; cases compared with each other are sampled round-robin, so load
 * from other processes falls on all of them alike. Outputs of 1 and 2
 * threads are checked bit-identical.
 *
 * Weights: random finite binary16 (or bfloat16), Gaussian-ish (sum of four
 * uniforms), sigma 0.02. Activations: uniform in [-1, 1).
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "decodenum/bf16.h"
#include "decodenum/f16.h"
#include "decodenum/pool.h"
#include "dispatch.h"
#include "f16_shapes.h"
#ifdef DN_BENCH_GGML
#include "ggml_peer.h"
#endif

#define MV_DIM ((size_t)8192)  /* mat_vec: MV_DIM x MV_DIM */
#define MM_DIM ((size_t)4096)  /* mat_mul: MM_DIM x MM_DIM */
#define ISA_DIM ((size_t)2048) /* per-ISA kernels: ISA_DIM x ISA_DIM */
#define ISA_N ((size_t)8)      /* columns of the per-ISA sgemm */
#define L2_ROWS ((size_t)32)   /* mat_vec in L2: 32 x 8192 (512 KiB) */
#define MM_MAX_N ((size_t)64)

/* ggml on this machine as issue 4 gives it (not measured here; printed when
   the bench has no ggml peer). */
#define GGML_MV_1T_GBPS 20.1 /* 8192^2 mat_vec, 1 thread, GB/s of weights */
#define GGML_MV_2T_GBPS 36.6 /* 8192^2 mat_vec, 2 threads */
#define GGML_MM8_1T_MS 3.43  /* 4096^2 x 8 columns, 1 thread, ms per call */
#define GGML_MM64_1T_MS 20.5 /* 4096^2 x 64 columns, 1 thread */

/* ---- the weight type --------------------------------------------------------- */

/* What differs between an F16 and a BF16 run: the public functions, the
   half of each kernel table, ggml's type number, the name printed. */
typedef struct elem_type {
    const char *name;
    int ggml_type; /* GGML_TYPE_F16 = 1, GGML_TYPE_BF16 = 30 */
    dn_status (*mat_vec)(const uint16_t *, size_t, size_t, const float *, float *, dn_pool *);
    dn_status (*mat_mul)(const uint16_t *, size_t, size_t, const float *, size_t, float *,
                         dn_pool *);
    dn_status (*from_f32)(const float *, uint16_t *, size_t);
    int bf; /* which half of a dn_f16_kernels */
    dn_status (*mat_mul_path)(dn_f16_path, const uint16_t *, size_t, size_t, const float *, size_t,
                              float *, dn_pool *);
} elem_type;

static const elem_type f16_type = {"F16",           1, dn_f16_mat_vec,     dn_f16_mat_mul,
                                   dn_f16_from_f32, 0, dn_f16_mat_mul_path};
static const elem_type bf16_type = {"BF16",           30, dn_bf16_mat_vec,     dn_bf16_mat_mul,
                                    dn_bf16_from_f32, 1,  dn_bf16_mat_mul_path};
static const elem_type *T = &f16_type; /* this run's, set from the command line */

static const dn_w16_kernels *table_of(const dn_f16_kernels *k)
{
    return T->bf ? &k->bf16 : &k->fp16;
}

/* ---- one product, as a bench case's ctx ------------------------------------- */

typedef struct product {
    const uint16_t *w;
    size_t rows, k, n;
    const float *act;           /* n columns of k (rounded for the kernel forms) */
    float *out;                 /* n * rows */
    dn_pool *pool;              /* public API forms */
    const dn_w16_kernels *kern; /* kernel forms */
    const uint16_t *act16;      /* act as the type's patterns (mat_vec_rows) */
} product;

static void fail_status(const char *what, dn_status st)
{
    fprintf(stderr, "decodenum-bench-f16: %s: %s\n", what, dn_status_str(st));
    exit(1);
}

static void call_mat_vec(bench_case *c)
{
    const product *p = c->ctx;
    dn_status st = T->mat_vec(p->w, p->rows, p->k, p->act, p->out, p->pool);
    if (st != DN_OK) fail_status("mat_vec", st);
}

static void call_mat_mul(bench_case *c)
{
    const product *p = c->ctx;
    dn_status st = T->mat_mul(p->w, p->rows, p->k, p->act, p->n, p->out, p->pool);
    if (st != DN_OK) fail_status("mat_mul", st);
}

static void call_mat_mul_vec_dot(bench_case *c)
{
    const product *p = c->ctx;
    dn_status st =
        T->mat_mul_path(DN_F16_PATH_VEC_DOT, p->w, p->rows, p->k, p->act, p->n, p->out, p->pool);
    if (st != DN_OK) fail_status("mat_mul_path", st);
}

static void call_kern_mat_vec(bench_case *c)
{
    const product *p = c->ctx;
    p->kern->mat_vec_rows(p->w, p->k, p->act, p->act16, 0, p->rows, p->out);
}

static void call_kern_sgemm(bench_case *c)
{
    const product *p = c->ctx;
    /* as a product runs it: the table's packed columns first, if it has them */
    size_t bytes = p->kern->pack_bytes(p->k, p->n);
    void *packed = bytes ? malloc(bytes) : NULL;
    if (packed) p->kern->pack(p->act, p->k, p->n, 0, p->n, packed);
    p->kern->sgemm_rows(p->w, p->rows, p->k, p->act, packed, p->n, 0, p->rows, p->out);
    free(packed);
}

/* A case over *p: weights read once per call (2 * rows * k bytes). */
static bench_case mk(const char *op, const char *impl, bench_call_fn call, product *p, int want)
{
    return (bench_case){.op = op,
                        .impl = impl,
                        .call = call,
                        .ctx = p,
                        .n = p->rows * p->k,
                        .bytes = 2.0 * (double)p->rows * (double)p->k,
                        .reps = 1,
                        .want = want};
}

static double ms(double secs) { return secs * 1e3; }
static double gflops(const bench_case *c, const product *p)
{
    return 2.0 * (double)p->rows * (double)p->k * (double)p->n / c->med * 1e-9;
}

/* ---- data ------------------------------------------------------------------- */

/* w[0..n) = binary16 (bfloat16) of sigma * (a sum of four uniforms, centred and scaled
   to unit variance): finite, Gaussian-ish, from a fixed LCG. */
static int fill_weights(uint16_t *w, size_t n, float sigma, uint32_t seed)
{
    enum { CHUNK = 1 << 16 };
    static float tmp[CHUNK];
    uint32_t s = seed;
    const float scale = sigma * 1.7320508f / 2147483648.0f; /* sqrt(3) / 2^31 */
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t m = n - i < CHUNK ? n - i : CHUNK;
        for (size_t j = 0; j < m; j++) {
            int64_t sum = 0;
            for (int u = 0; u < 4; u++)
                sum += (int64_t)bench_lcg(&s) - 2147483648LL; /* uniform in [-2^31, 2^31) */
            tmp[j] = (float)sum * 0.5f * scale; /* sum/2 has the variance of one uniform */
        }
        if (T->from_f32(tmp, w + i, m) != DN_OK) return -1;
    }
    return 0;
}

static int same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

#ifdef DN_BENCH_GGML
/* ggml's products, in the comparison table's order: mat_vec on 1 and 2
   threads, mat_mul n = 8 and 64 on 1 thread, then on 2; each on the weights
   in place (variant 0) and repacked as llama.cpp loads them (variant 1,
   where this ggml repacks F16). at[v][i] is the case's index in its group
   (g1 for mat_vec, g2 for mat_mul), -1 when absent. */
typedef struct ggml_cases {
    ggml_peer *peer[2][6];
    float *out[2][6];
    int at[2][6];
} ggml_cases;

/* Adds ggml's product i of variant v to the group g (count *n), over p's
   shape; its output at out. 0 when the variant does not exist here. */
static int add_ggml(ggml_cases *gc, int v, int i, bench_case *g, int *n, product *p, float *out,
                    int samples)
{
    gc->at[v][i] = -1;
    unsigned threads = i == 1 || i >= 4 ? 2 : 1;
    ggml_peer *peer =
        ggml_peer_create(T->ggml_type, p->w, p->rows, p->k, p->act, p->n, out, (int)threads, v);
    if (!peer) {
        fprintf(stderr, "decodenum-bench-f16: ggml_peer_create failed\n");
        exit(1);
    }
    if (v == 1 && !ggml_peer_repacked(peer)) {
        ggml_peer_destroy(peer);
        return 0;
    }
    gc->peer[v][i] = peer;
    gc->out[v][i] = out;
    gc->at[v][i] = *n;
    g[*n] =
        mk(i < 2 ? "mat_vec" : "mat_mul", v ? "ggml repacked" : "ggml", ggml_peer_call, p, samples);
    g[(*n)++].ctx = peer;
    return 1;
}
#endif

/* ---- output -------------------------------------------------------------------- */

static void usage(const char *argv0)
{
    printf("usage: %s [--quick] [--bf16] [--shapes]\n"
           "  dn_f16_mat_vec 8192x8192 and dn_f16_mat_mul 4096x4096 (n = 8, 64) on 1 and 2\n"
           "  threads, against the read bandwidth with as many threads and against ggml\n"
           "  (measured in the same run when built with DECODENUM_BENCH_GGML, else its figures\n"
           "  from issue 4); the F16 kernel tables per ISA on 2048x2048.\n"
           "  --quick   fewer and shorter samples\n"
           "  --bf16    BF16 weights: dn_bf16_mat_vec / dn_bf16_mat_mul (no ggml figures\n"
           "            without a ggml peer)\n"
           "  --shapes  only mat_vec from memory, 1 thread, per ISA table, on 8192x8192 and a\n"
           "            TinyLlama-sized model's shapes, against the read bandwidth\n",
           argv0);
}

#define NISA 4
static const dn_isa isas[NISA] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_AVX512, DN_ISA_NEON};

static const char *kern_name(const dn_w16_kernels *k)
{
    for (int i = 0; i < NISA; i++)
        if (dn_kernels_for(isas[i]) && table_of(dn_kernels_for(isas[i])->f16) == k)
            return dn_isa_name(isas[i]);
    return "?";
}

/* The measured peak (bench_peak) of the instruction table k's sgemm tile
   is built on; BENCH_PEAK_KINDS where unknown (bench_peak gives 0 for it,
   bench_peak_name "-"). */
static bench_peak_kind peak_kind(const dn_w16_kernels *k)
{
#if defined(DN_HAVE_AVX512)
    if (k == &dn_f16_avx512.fp16 || k == &dn_f16_avx512.bf16) return BENCH_PEAK_FMA_ZMM;
#endif
    const char *isa = kern_name(k);
    if (!strcmp(isa, "avx2")) return BENCH_PEAK_FMA_YMM;
    if (strcmp(isa, "avx512")) return BENCH_PEAK_KINDS;
    return T->bf ? BENCH_PEAK_BF16_ZMM : BENCH_PEAK_FMA_ZMM; /* BF16: vdpbf16ps's table */
}

/* "%8.3f" of the fraction, or "       -" without a peak. */
static const char *fraction(char buf[16], double part, double whole)
{
    if (whole > 0)
        snprintf(buf, 16, "%8.3f", part / whole);
    else
        snprintf(buf, 16, "%8s", "-");
    return buf;
}

/* The plan, the data and the cases of one run. */
typedef struct f16_run {
    int quick;
    int mv_samples; /* one call per sample */
    double mv_warm; /* seconds of warm-up calls per case */
    int mm_samples;
    double mm_target; /* seconds per sample */
    int isa_samples, isa_scalar_samples;
    double isa_target;
    double t_start;
    const dn_w16_kernels *kt[NISA]; /* isas[]' tables, NULL where absent */
    uint16_t *w;                    /* one 8192^2 weight matrix; the 4096^2 and 2048^2
                            matrices are its first 32 MiB and 8 MiB */
    float *act, *act_r;             /* activations; the kernels' rounded ones */
    uint16_t *act_h;                /* act_r as the type's patterns */
    float *out, *o;                 /* every case's outputs; the next free place */
    dn_pool *pool1, *pool2;
    bench_team *team2;
#ifdef DN_BENCH_GGML
    ggml_cases gc;
#endif
    product mv[4], mm[8]; /* mv[3]: the rows in L2 */
    bench_case g1[64];    /* mat_vec: ours, ggml's, the read kernels' */
    bench_case g2[16];    /* mat_mul: ours 4, ggml up to 8, ours on the vec_dot path 4 */
    int ggml_bits_ok;     /* no peer, or ours = ggml's where they must be */
    int l2_case;          /* g1's index of the mat_vec in L2 */
} f16_run;

static void plan(f16_run *r, int quick)
{
    r->quick = quick;
    r->mv_samples = quick ? 7 : 15;
    r->mv_warm = quick ? 0.0 : 0.05;
    r->mm_samples = quick ? 7 : 15;
    r->mm_target = quick ? 0.02 : 0.05;
    r->isa_samples = quick ? 7 : 11;
    r->isa_scalar_samples = quick ? 3 : 5;
    r->isa_target = quick ? 0.01 : 0.03;
    r->ggml_bits_ok = 1;
}

static void print_header(f16_run *r, int argc, char **argv)
{
    static const char *const envs[] = {"DECODENUM_ISA"};
    bench_print_command("decodenum-bench-f16", argc, argv, envs, 1);
    bench_print_machine(bench_clock_ghz(r->quick ? 0.05 : 0.2));
    bench_print_load();
    const dn_w16_kernels *active = table_of(dn_kernels_active()->f16);
    printf("%s: the public API runs the %s kernels; tables here:", T->name, kern_name(active));
    for (int i = 0; i < NISA; i++) {
        r->kt[i] = dn_kernels_for(isas[i]) ? table_of(dn_kernels_for(isas[i])->f16) : NULL;
        if (r->kt[i]) printf(" %s", dn_isa_name(isas[i]));
    }
    printf("\ndata: weights random finite %s, Gaussian-ish (sum of 4 uniforms), sigma 0.02;"
           " activations uniform in [-1, 1)\n",
           T->bf ? "bfloat16" : "binary16");
    fflush(stdout);
}

/* The buffers, the data, the pools. */
static int setup(f16_run *r)
{
    const size_t w_elems = MV_DIM * MV_DIM;
    r->w = bench_alloc(w_elems * sizeof *r->w);
    r->act = bench_alloc(MM_MAX_N * MM_DIM * sizeof(float));
    r->act_r = bench_alloc(ISA_N * ISA_DIM * sizeof(float)); /* rounded, for the kernels */
    r->act_h = bench_alloc(ISA_N * ISA_DIM * sizeof(uint16_t));
    r->out =
        bench_alloc((7 * MV_DIM + L2_ROWS + 16 * MM_MAX_N * MM_DIM + 2 * NISA * ISA_N * ISA_DIM) *
                    sizeof(float));
    if (!r->w || !r->act || !r->act_r || !r->act_h || !r->out) {
        fprintf(stderr, "decodenum-bench-f16: out of memory (needs ~140 MiB)\n");
        return -1;
    }
    if (fill_weights(r->w, w_elems, 0.02f, 7u) != 0) {
        fprintf(stderr, "decodenum-bench-f16: from_f32 failed\n");
        return -1;
    }
    bench_fill(r->act, MM_MAX_N * MM_DIM, 11u);
    r->kt[0]->from_f32(r->act, r->act_h, ISA_N * ISA_DIM);
    r->kt[0]->widen(r->act_h, r->act_r, ISA_N * ISA_DIM);

    r->pool1 = dn_pool_create(1), r->pool2 = dn_pool_create(2);
    r->team2 = bench_team_create(2);
    if (!r->pool1 || !r->pool2 || !r->team2) {
        fprintf(stderr, "decodenum-bench-f16: cannot create threads\n");
        return -1;
    }
    r->o = r->out;
    return 0;
}

static void print_mat_vec(const f16_run *r, int r1_first, int r2_first, int best1, int best2)
{
    const bench_case *g1 = r->g1;
    const size_t w_bytes = MV_DIM * MV_DIM * sizeof *r->w;
    printf("\n%zu x %zu mat_vec (%zu MiB of %s weights), dn_%s_mat_vec, %d samples of 1 call:\n",
           MV_DIM, MV_DIM, w_bytes >> 20, T->name, T->bf ? "bf16" : "f16", r->mv_samples);
    const bench_case *l2 = &g1[r->l2_case];
    printf("  %-7s %-9s %8s %8s %8s   %-13s %s\n", "threads", "pool", "ms/call", "GB/s", "GB/s-max",
           "/ in L2 x t", "/ read bandwidth, same threads (paired, medians)");
    for (int i = 0; i < 3; i++) {
        const bench_case *c = &g1[i], *rd = &g1[i < 2 ? best1 : best2];
        unsigned t = dn_pool_threads(r->mv[i].pool);
        double rm, rp;
        bench_ratio(c, rd, &rm, &rp);
        printf("  %-7u %-9s %8.2f %8.2f %8.2f   %-13.3f %.3f, %.3f  (read %s %.2f GB/s)\n", t,
               c->impl, ms(c->med), bench_gbps(c, c->med), bench_gbps(c, c->best),
               bench_gbps(c, c->med) / (t * bench_gbps(l2, l2->med)), rp, rm, rd->impl,
               bench_gbps(rd, rd->med));
    }
    printf("  in L2: the active table's mat_vec_rows on the first %zu rows (%zu KiB), %.2f GB/s\n"
           "  (median, the same rounds); t threads' compute limit taken as t times it\n",
           L2_ROWS, L2_ROWS * MV_DIM * 2 >> 10, bench_gbps(l2, l2->med));
    printf("  read bandwidth over the same %zu MiB (median / max GB/s):\n", w_bytes >> 20);
    bench_print_read_pairs(g1, r1_first, r2_first);
    printf("    best: 1 thread %s %.2f GB/s, 2 threads %s %.2f GB/s\n", g1[best1].impl,
           bench_gbps(&g1[best1], g1[best1].med), g1[best2].impl,
           bench_gbps(&g1[best2], g1[best2].med));
    fflush(stdout);
}

/* 8192^2 mat_vec on 1 and 2 threads, and the read bandwidth. */
static void mat_vec_section(f16_run *r)
{
    dn_pool *mv_pool[3] = {NULL, r->pool1, r->pool2};
    static const char *const mv_name[3] = {"pool NULL", "pool 1", "pool 2"};
    bench_case *g1 = r->g1;
    int n1 = 0;
    for (int i = 0; i < 3; i++, r->o += MV_DIM) {
        r->mv[i] = (product){r->w, MV_DIM, MV_DIM, 1, r->act, r->o, mv_pool[i], NULL, NULL};
        g1[n1++] = mk("mat_vec", mv_name[i], call_mat_vec, &r->mv[i], r->mv_samples);
    }
    const size_t w_bytes = MV_DIM * MV_DIM * sizeof *r->w;
#ifdef DN_BENCH_GGML
    /* ggml's mat_vec cases follow ours */
    for (int v = 0; v < 2; v++)
        for (int t = 0; t < 2; t++)
            if (add_ggml(&r->gc, v, t, g1, &n1, &r->mv[2 * t], r->o, r->mv_samples)) r->o += MV_DIM;
#endif
    r->mv[3] = (product){r->w,     L2_ROWS, MV_DIM, 1,
                         r->act_r, r->o,    NULL,   table_of(dn_kernels_active()->f16),
                         r->act_h};
    r->o += L2_ROWS;
    r->l2_case = n1;
    g1[n1++] = mk("mat_vec", "in L2", call_kern_mat_vec, &r->mv[3], r->mv_samples);
    int r1_first = n1;
    n1 = bench_add_read_cases(g1, n1, NULL, r->w, w_bytes, r->mv_samples);
    int r2_first = n1;
    n1 = bench_add_read_cases(g1, n1, r->team2, r->w, w_bytes, r->mv_samples);
    /* the rows in L2: samples of 2 ms, so the first call's misses spread */
    for (int i = 0; i < n1; i++) bench_calibrate(&g1[i], r->mv_warm, i == r->l2_case ? 0.002 : 0.0);
    bench_run_group_shuffled(g1, n1);
    int best1 = bench_best_case(g1, r1_first, r2_first), best2 = bench_best_case(g1, r2_first, n1);
    print_mat_vec(r, r1_first, r2_first, best1, best2);
}

/* 4096^2 mat_mul, n = 8 and 64, 1 and 2 threads. */
static void mat_mul_section(f16_run *r)
{
    static const size_t mm_n[4] = {8, 64, 8, 64};
    bench_case *g2 = r->g2;
    int n2 = 0;
    for (int i = 0; i < 4; i++, r->o += MM_MAX_N * MM_DIM) {
        r->mm[i] = (product){r->w, MM_DIM, MM_DIM, mm_n[i], r->act, r->o, i < 2 ? NULL : r->pool2,
                             NULL, NULL};
        g2[n2++] =
            mk("mat_mul", i < 2 ? "pool NULL" : "pool 2", call_mat_mul, &r->mm[i], r->mm_samples);
    }
#ifdef DN_BENCH_GGML
    /* ggml's mat_mul cases follow ours */
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < 4; i++)
            if (add_ggml(&r->gc, v, 2 + i, g2, &n2, &r->mm[i], r->o, r->mm_samples))
                r->o += MM_MAX_N * MM_DIM;
#endif
    /* then ours on the vec_dot path (dn_*_mat_mul_path): each column
       dn_*_mat_vec's bits */
    int path_first = n2;
    for (int i = 4; i < 8; i++, r->o += MM_MAX_N * MM_DIM) {
        r->mm[i] = r->mm[i - 4];
        r->mm[i].out = r->o;
        g2[n2++] = mk("mat_mul_path", i < 6 ? "pool NULL" : "pool 2", call_mat_mul_vec_dot,
                      &r->mm[i], r->mm_samples);
    }
    for (int i = 0; i < n2; i++) bench_calibrate(&g2[i], r->mm_target, r->mm_target);
    bench_run_group_shuffled(g2, n2);
    printf("\n%zu x %zu mat_mul (%zu MiB of weights), dn_%s_mat_mul, %d samples of ~%.0f ms:\n",
           MM_DIM, MM_DIM, MM_DIM * MM_DIM * 2 >> 20, T->bf ? "bf16" : "f16", r->mm_samples,
           r->mm_target * 1e3);
    const bench_peak_kind pk = peak_kind(table_of(dn_kernels_active()->f16));
    const double peak = bench_peak(pk);
    printf("  %-3s %-7s %-9s %-7s %8s %8s %8s %8s\n", "n", "threads", "pool", "path", "ms/call",
           "ms-min", "GFLOP/s", "/ peak");
    for (int i = 0; i < 4; i++) {
        const bench_case *c = &g2[i];
        unsigned t = dn_pool_threads(r->mm[i].pool);
        char f[16];
        printf("  %-3zu %-7u %-9s %-7s %8.3f %8.3f %8.1f %s\n", r->mm[i].n, t, c->impl,
               dn_f16_takes_sgemm(MM_DIM, MM_DIM, r->mm[i].n) ? "sgemm" : "vec_dot", ms(c->med),
               ms(c->best), gflops(c, &r->mm[i]),
               fraction(f, gflops(c, &r->mm[i]), t * peak * 1e-9));
    }
    if (peak > 0)
        printf("  peak: %s, %.1f GFLOP/s on one thread (measured); / peak = GFLOP/s over threads"
               " times it\n",
               bench_peak_name(pk), peak * 1e-9);
    printf("dn_%s_mat_mul_path(DN_F16_PATH_VEC_DOT), the same rounds (every column the bits of "
           "one\nmat_vec); speed = its throughput over the mat_mul above on the same columns%s:\n",
           T->bf ? "bf16" : "f16",
#ifdef DN_BENCH_GGML
           " and\nover ggml's mat_mul on the weights in place (its own bits)"
#else
           ""
#endif
    );
    printf("  %-3s %-7s %-9s %-7s %8s %8s %8s %7s %7s\n", "n", "threads", "pool", "path", "ms/call",
           "ms-min", "GFLOP/s", "speed", "/ggml");
    for (int i = 0; i < 4; i++) {
        const bench_case *c = &g2[path_first + i];
        double rm, rp, gp = 0.0;
        bench_ratio(c, &g2[i], &rm, &rp);
#ifdef DN_BENCH_GGML
        if (r->gc.at[0][2 + i] >= 0) bench_ratio(c, &g2[r->gc.at[0][2 + i]], &rm, &gp);
#endif
        char g[16] = "      -";
        if (gp > 0.0) snprintf(g, sizeof g, "%7.3f", gp);
        printf("  %-3zu %-7u %-9s %-7s %8.3f %8.3f %8.1f %7.3f %s\n", r->mm[4 + i].n,
               dn_pool_threads(r->mm[4 + i].pool), c->impl, "vec_dot", ms(c->med), ms(c->best),
               gflops(c, &r->mm[4 + i]), rp, g);
    }
}

#ifdef DN_BENCH_GGML
/* Ours against ggml measured in this run; its peers destroyed after. */
static void versus_ggml(f16_run *r)
{
    ggml_cases *gc = &r->gc;
    printf("\nggml measured in this run: %s, on the weights in place and repacked as\n"
           "llama.cpp loads them (where ggml repacks %s); speed = our throughput / ggml's (>1 = "
           "ours\n"
           "faster), paired round by round; bits: whether ours equal ggml's, every bit:\n",
           ggml_peer_build(), T->name);
    printf("  %-32s %9s %9s %7s %5s %9s %7s %5s\n", "case", "ours ms", "ggml ms", "speed", "bits",
           "repacked", "speed", "bits");
    static const char *const gcase[6] = {
        "8192^2 mat_vec, 1 thread",      "8192^2 mat_vec, 2 threads",
        "4096^2 mat_mul n=8, 1 thread",  "4096^2 mat_mul n=64, 1 thread",
        "4096^2 mat_mul n=8, 2 threads", "4096^2 mat_mul n=64, 2 threads"};
    const bench_case *ours[6] = {&r->g1[0], &r->g1[2], &r->g2[0], &r->g2[1], &r->g2[2], &r->g2[3]};
    int same_as_ggml = 1;
    for (int i = 0; i < 6; i++) {
        const bench_case *g = i < 2 ? r->g1 : r->g2;
        const product *p = ours[i]->ctx;
        char col[2][64] = {"", "        -"};
        for (int v = 0; v < 2; v++) {
            if (gc->at[v][i] < 0) continue;
            double rm, rp;
            bench_ratio(ours[i], &g[gc->at[v][i]], &rm, &rp);
            int same = same_bits(p->out, gc->out[v][i], p->n * p->rows);
            if (v == 0) same_as_ggml &= same;
            snprintf(col[v], sizeof col[v], "%9.3f %7.3f %5s", ms(g[gc->at[v][i]].med), rp,
                     same ? "=" : "differ");
        }
        printf("  %-32s %9.3f %s %s\n", gcase[i], ms(ours[i]->med), col[0], col[1]);
    }
    /* ggml's AVX2 build computes the bits the library promises: any
       difference from it is a failure; other builds round differently */
    int ggml_expected = ggml_peer_f16_bits_are_ours();
    r->ggml_bits_ok = same_as_ggml || !ggml_expected;
    printf("bits: %s\n", same_as_ggml ? "ours = ggml's (weights in place) in all six products"
                         : ggml_expected
                             ? "OURS DIFFER FROM GGML'S AVX2 BUILD"
                             : "ours differ from ggml's (expected: not its AVX2/FMA/F16C build)");
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < 6; i++)
            if (gc->at[v][i] >= 0) ggml_peer_destroy(gc->peer[v][i]);
    fflush(stdout);
}
#else
/* Ours next to ggml's figures from issue 4 (constants). */
static void versus_ggml(f16_run *r)
{
    if (T->bf) {
        printf("\nno ggml figures for BF16 without a ggml peer (DECODENUM_BENCH_GGML)\n");
        return;
    }
    printf("\nggml on this machine (issue 4, not measured here) next to ours (median and best\n"
           "sample above); speed = ours/ggml in throughput, >1 = ours faster:\n");
    printf("  %-30s %12s %12s %12s %7s %7s\n", "case", "ggml", "ours", "ours-best", "speed",
           "best");
    static const char *const gb_case[2] = {"8192^2 mat_vec, 1 thread", "8192^2 mat_vec, 2 threads"};
    static const double gb_ggml[2] = {GGML_MV_1T_GBPS, GGML_MV_2T_GBPS};
    for (int i = 0; i < 2; i++) {
        const bench_case *c = &r->g1[2 * i]; /* pool NULL, pool 2 */
        double med = bench_gbps(c, c->med), best = bench_gbps(c, c->best);
        printf("  %-30s %7.2f GB/s %7.2f GB/s %7.2f GB/s %7.3f %7.3f\n", gb_case[i], gb_ggml[i],
               med, best, med / gb_ggml[i], best / gb_ggml[i]);
    }
    static const char *const ms_case[2] = {"4096^2 mat_mul n=8, 1 thread",
                                           "4096^2 mat_mul n=64, 1 thread"};
    static const double ms_ggml[2] = {GGML_MM8_1T_MS, GGML_MM64_1T_MS};
    for (int i = 0; i < 2; i++) {
        const bench_case *c = &r->g2[i]; /* n = 8, 64 on pool NULL */
        printf("  %-30s %9.2f ms %9.3f ms %9.3f ms %7.3f %7.3f\n", ms_case[i], ms_ggml[i],
               ms(c->med), ms(c->best), ms_ggml[i] / ms(c->med), ms_ggml[i] / ms(c->best));
    }
    fflush(stdout);
}
#endif

/* Per ISA, the kernel tables directly, single thread; 1 when every ISA's
   bits are the scalar reference's. */
static int per_isa(f16_run *r)
{
    product kp[2 * NISA + 1];
    static bench_case g3[2 * NISA + 1];
    int n3 = 0, isa_of[2 * NISA + 1];
    for (int i = 0; i < NISA; i++) {
        if (!r->kt[i]) continue;
        int want = isas[i] == DN_ISA_SCALAR ? r->isa_scalar_samples : r->isa_samples;
        kp[n3] = (product){r->w, ISA_DIM, ISA_DIM, 1, r->act_r, r->o, NULL, r->kt[i], r->act_h};
        r->o += ISA_N * ISA_DIM;
        isa_of[n3] = i;
        g3[n3] = mk("mat_vec", dn_isa_name(isas[i]), call_kern_mat_vec, &kp[n3], want);
        n3++;
        kp[n3] = (product){r->w, ISA_DIM, ISA_DIM, ISA_N, r->act_r, r->o, NULL, r->kt[i], NULL};
        r->o += ISA_N * ISA_DIM;
        isa_of[n3] = i;
        g3[n3] = mk("sgemm", dn_isa_name(isas[i]), call_kern_sgemm, &kp[n3], want);
        n3++;
    }
    int nisa = n3; /* then, where BF16's AVX-512 rows are vdpbf16ps's, the FMA rows */
#if defined(DN_HAVE_AVX512)
    const dn_kernels *ks = dn_kernels_for(DN_ISA_AVX512);
    if (T->bf && ks && ks->f16->bf16.sgemm_rows != dn_f16_avx512.bf16.sgemm_rows) {
        kp[n3] = (product){r->w, ISA_DIM, ISA_DIM, ISA_N, r->act_r, r->o, NULL, &dn_f16_avx512.bf16,
                           NULL};
        r->o += ISA_N * ISA_DIM;
        isa_of[n3] = 2;
        g3[n3] = mk("sgemm", "avx512", call_kern_sgemm, &kp[n3], r->isa_samples);
        n3++;
    }
#endif
    for (int i = 0; i < n3; i++) bench_calibrate(&g3[i], r->isa_target, r->isa_target);
    bench_run_group_shuffled(g3, n3);
    printf("\nper ISA, single thread, dn_kernels_for(isa)->f16->%s called directly, %zu x %zu "
           "weights\n(%zu MiB), activations already rounded; %d samples (scalar %d) of ~%.0f ms:\n",
           T->bf ? "bf16" : "fp16", ISA_DIM, ISA_DIM, ISA_DIM * ISA_DIM * 2 >> 20, r->isa_samples,
           r->isa_scalar_samples, r->isa_target * 1e3);
    printf("  %-8s %-7s %3s %9s %8s %8s %8s  %s\n", "op", "isa", "n", "ms/call", "GB/s", "GFLOP/s",
           "/ peak", "check");
    int isa_bits_ok = 1;
    for (int i = 0; i < n3; i++) {
        const bench_case *c = &g3[i];
        const char *chk = "";
        if (isa_of[i] != 0) {
            int same = same_bits(kp[i].out, kp[i < nisa ? i % 2 : 1].out, kp[i].n * kp[i].rows);
            isa_bits_ok &= same;
            chk = same ? "bits = scalar" : "BITS DIFFER FROM SCALAR";
        }
        char f[16];
        double pk = kp[i].n > 1 ? bench_peak(peak_kind(kp[i].kern)) * 1e-9 : 0; /* sgemm */
        printf("  %-8s %-7s %3zu %9.3f %8.2f %8.2f %s  %s%s\n", c->op, c->impl, kp[i].n, ms(c->med),
               bench_gbps(c, c->med), gflops(c, &kp[i]), fraction(f, gflops(c, &kp[i]), pk), chk,
               i < nisa ? "" : " (the FMA rows)");
    }
    if (nisa >= 4)
        printf("  speed-up over scalar: mat_vec %.1fx, sgemm n=%zu %.1fx\n",
               g3[0].med / g3[nisa - 2].med, ISA_N, g3[1].med / g3[nisa - 1].med);
    if (nisa >= 6) /* x86: avx2 then avx512, sampled round-robin */
        printf("  avx512 over avx2: mat_vec %.2fx, sgemm n=%zu %.2fx\n", g3[2].med / g3[4].med,
               ISA_N, g3[3].med / g3[5].med);
    if (n3 > nisa)
        printf("  avx512 sgemm n=%zu, vdpbf16ps over the FMA rows (last line): %.2fx\n", ISA_N,
               g3[n3 - 1].med / g3[nisa - 1].med);
    return isa_bits_ok;
}

/* Bits across thread counts: 1 when identical. */
static int print_thread_bits(const f16_run *r)
{
    const product *mv = r->mv, *mm = r->mm;
    int threads_ok =
        same_bits(mv[0].out, mv[1].out, MV_DIM) && same_bits(mv[0].out, mv[2].out, MV_DIM) &&
        same_bits(mm[0].out, mm[2].out, 8 * MM_DIM) && same_bits(mm[1].out, mm[3].out, 64 * MM_DIM);
    printf("\nbits: %s (mat_vec pool NULL / 1 / 2; mat_mul n=8 and n=64, 1 / 2 threads)\n",
           threads_ok ? "identical across thread counts" : "DIFFER ACROSS THREAD COUNTS");
    return threads_ok;
}

static void teardown(f16_run *r)
{
    bench_team_destroy(r->team2);
    dn_pool_destroy(r->pool1);
    dn_pool_destroy(r->pool2);
    free(r->w);
    free(r->act);
    free(r->act_r);
    free(r->act_h);
    free(r->out);
}

int main(int argc, char **argv)
{
#ifdef DN_BENCH_GGML
    ggml_peer_quiet_openmp(argv); /* before anything is printed */
#endif
    int quick = 0, nargs = 0, shapes = 0;
    char *args[16];
    for (int i = 0; i < argc && nargs < 16; i++) { /* --bf16 is this program's own option */
        if (i > 0 && !strcmp(argv[i], "--bf16"))
            T = &bf16_type;
        else if (i > 0 && !strcmp(argv[i], "--shapes"))
            shapes = 1;
        else
            args[nargs++] = argv[i];
    }
    int rc = bench_parse_args(nargs, args, &quick, usage);
    if (rc >= 0) return rc;
    static f16_run r;
    r.t_start = now_s();
    plan(&r, quick);
    print_header(&r, argc, argv);
    if (setup(&r)) return 1;
    if (shapes) {
        const dn_w16_kernels *tables[NISA];
        const char *names[NISA];
        int count = 0;
        for (int i = 1; i < NISA; i++) /* the SIMD tables */
            if (r.kt[i]) tables[count] = r.kt[i], names[count++] = dn_isa_name(isas[i]);
        int st = bench_f16_shapes(tables, names, count, r.w, r.act, r.out, r.quick);
        bench_print_load();
        teardown(&r);
        return st ? 1 : 0;
    }
    mat_vec_section(&r);
    mat_mul_section(&r);
    versus_ggml(&r);
    int isa_bits_ok = per_isa(&r);
    int threads_ok = print_thread_bits(&r);
    printf("run took %.1f s\n", now_s() - r.t_start);
    bench_print_load();
    teardown(&r);
    return threads_ok && isa_bits_ok && r.ggml_bits_ok ? 0 : 1;
}
