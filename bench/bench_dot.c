/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-dot: the engine's quantized matrix-vector product through
 * the public API, on 1 and 2 threads, against the machine's read bandwidth
 * measured in the same run with the same number of threads, and against
 * ggml: ggml_mul_mat on the same weight bytes and activation in the same run
 * when the bench is built with a ggml (DECODENUM_BENCH_GGML,
 * bench/ggml_peer.h), else ggml's figures from issue 5 (constants, not
 * measured here).
 *
 *   decodenum-bench-dot           full run (~1 min)
 *   decodenum-bench-dot --quick   short run, fewer samples
 *
 * Cases:
 *  - Q4_K, Q6_K and Q8_0 matrices of 8192 rows x 16384 columns (72, 105 and
 *    136 MiB of weights): one call = dn_quantize of a 16384-float activation
 *    (Sub32 scales, one word) + dn_mat_vec with a pool of 1 and of 2
 *    threads. ms per call, GB/s of weights, and the ratio to the best
 *    streaming-read kernel over the same bytes with as many threads, sampled
 *    round-robin with them (paired per round, and of the medians).
 *  - with a ggml peer, ggml_mul_mat of the same three matrices on 1 and 2
 *    threads (its own activation quantization, Q8_K or Q8_0, in every
 *    call), sampled round-robin with ours and paired round by round;
 *  - the other scalings and word counts on 1 thread: per-block scales (one
 *    word) and Sub32 with two words, quantization included;
 *  - per ISA, single thread, dn_kernels_for(isa)->dot->mat_vec_rows called
 *    directly on the first 512 rows: scalar (the reference) against avx2 and
 *    avx512, or neon, bits checked equal.
 *  - repacked weights (decodenum/repack.h): dn_act_prepare + dn_repacked_mat_vec
 *    against the same on the plain matrix and ggml on its repacked weights,
 *    32 rows (in cache) and 8192 rows (from memory), 1 and 2 threads,
 *    alternated round by round: the minimum CPU time and wall time per call
 *    (`--repacked` as the last argument: this comparison alone).
 * Every other figure is the median of CLOCK_MONOTONIC samples after a warm-up;
 * outputs of 1 and 2 threads are checked bit-identical.
 *
 * Weights: every block built byte by byte: random digits and sub-block
 * scales, binary16 scales d (and dmin) of typical trained magnitudes
 * (2^-12 .. 2^-7). Activations: uniform in
 * [-1, 1) with every 64th element an outlier 30 times larger.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "common.h"
#include "decodenum/dot.h"
#include "decodenum/pool.h"
#include "dispatch.h"
#include "dot_repacked.h"
#ifdef DN_BENCH_GGML
#include "ggml_peer.h"
#endif

#define ROWS ((size_t)8192)
#define COLS ((size_t)16384)
#define ISA_ROWS ((size_t)512)
#define L2_ROWS ((size_t)32) /* the product in L2: 288-544 KiB of weights */

/* ggml on this machine as issue 5 gives it (its own benchmark of the same
   shapes; not measured here, printed when the bench has no ggml peer): ms
   per 8192 x 16384 mat_vec, activation quantization included. */
#define GGML_Q4_K_1T_MS 6.21
#define GGML_Q4_K_2T_MS 3.17
#define GGML_Q8_0_1T_MS 9.42
#define GGML_Q8_0_2T_MS 5.09

typedef struct product {
    dn_type type;
    const uint8_t *w;
    size_t rows, n;
    dn_act_scaling scaling;
    dn_words words;
    const float *x;  /* the activation, n floats */
    dn_act_row *act; /* its quantized form (buffers owned by main) */
    float *out;
    dn_pool *pool;
    const dn_dot_kernels *kern; /* kernel forms: the table called directly */
} product;

static void fail_status(const char *what, dn_status st)
{
    fprintf(stderr, "decodenum-bench-dot: %s: %s\n", what, dn_status_str(st));
    exit(1);
}

/* One call: quantize the activation, then the product over all rows. */
static void call_mat_vec(bench_case *c)
{
    const product *p = c->ctx;
    dn_act_row *a = p->act;
    a->n = p->n;
    dn_status st =
        p->scaling == DN_ACT_SUB32
            ? dn_quantize(p->x, p->n, p->words, a, NULL)
            : dn_quantize_blocks(p->x, p->n, dn_type_block_elements(p->type), p->words, a, NULL);
    if (st != DN_OK) fail_status("quantize", st);
    st = dn_mat_vec(p->type, p->w, p->rows, p->n, a, p->scaling, p->out, p->pool, NULL);
    if (st != DN_OK) fail_status("dn_mat_vec", st);
}

/* The kernel table directly, on an activation quantized beforehand. */
static void call_kern(bench_case *c)
{
    const product *p = c->ctx;
    dn_status st = p->kern->mat_vec_rows(p->type, p->w, p->rows, p->n, p->act, p->scaling, 0,
                                         p->rows, p->out, NULL);
    if (st != DN_OK) fail_status("mat_vec_rows", st);
}

/* The rows in L2: the product alone (dn_act_mat_vec, no pool) on an
   activation prepared once. */
typedef struct l2_product {
    dn_type type;
    const uint8_t *w;
    const dn_act *act;
    float *out;
} l2_product;

static void call_l2(bench_case *c)
{
    const l2_product *p = c->ctx;
    dn_status st = dn_act_mat_vec(p->act, 0, p->type, p->w, L2_ROWS, p->out, NULL, NULL);
    if (st != DN_OK) fail_status("dn_act_mat_vec", st);
}

static size_t row_bytes(dn_type t)
{
    return COLS / dn_type_block_elements(t) * dn_type_block_bytes(t);
}

static bench_case mk(const char *op, const char *impl, bench_call_fn call, product *p, int want)
{
    return (bench_case){.op = op,
                        .impl = impl,
                        .call = call,
                        .ctx = p,
                        .n = p->rows * p->n,
                        .bytes = (double)p->rows * (double)row_bytes(p->type),
                        .reps = 1,
                        .want = want};
}

static double ms(double secs) { return secs * 1e3; }

/* ---- data -------------------------------------------------------------------------- */

/* A binary16 of magnitude 2^-12 .. 2^-7, random fraction. */
static uint16_t typical_f16(uint32_t *s, int negative)
{
    uint32_t z = bench_lcg(s);
    return (uint16_t)((negative ? 0x8000u : 0) | ((3u + (z >> 28) % 5) << 10) | ((z >> 8) & 1023));
}

static void fill_matrix(dn_type t, uint8_t *w, size_t rows, uint32_t seed)
{
    size_t bb = dn_type_block_bytes(t), blocks = rows * (COLS / dn_type_block_elements(t));
    uint32_t s = seed;
    for (size_t b = 0; b < blocks; b++) {
        uint8_t *blk = w + b * bb;
        for (size_t i = 0; i < bb; i += 4) {
            uint32_t z = bench_lcg(&s);
            for (size_t k = 0; k < 4 && i + k < bb; k++) blk[i + k] = (uint8_t)(z >> (8 * k));
        }
        uint16_t d = typical_f16(&s, 0), m = typical_f16(&s, 0);
        switch (t) {
        case DN_TYPE_Q8_0: memcpy(blk, &d, 2); break;
        case DN_TYPE_Q4_K:
            memcpy(blk, &d, 2);
            memcpy(blk + 2, &m, 2);
            break;
        case DN_TYPE_Q6_K:
            memcpy(blk + 208, &d, 2);
            for (int k = 0; k < 16; k++)
                blk[192 + k] = (uint8_t)(int8_t)(((int)(blk[192 + k] % 64)) - 32);
            break;
        default: break;
        }
    }
}

static void fill_activation(float *x, size_t n)
{
    bench_fill(x, n, 11u);
    for (size_t i = 0; i < n; i += 64) x[i] *= 30.0f;
}

/* ---- output ------------------------------------------------------------------------- */

static void usage(const char *argv0)
{
    printf("usage: %s [--quick]\n"
           "  Q4_K, Q6_K, Q8_0 8192 x 16384 dn_mat_vec (activation quantization included) on 1\n"
           "  and 2 threads against the read bandwidth with as many threads and against ggml\n"
           "  (measured in the same run when built with DECODENUM_BENCH_GGML, else its figures\n"
           "  from issue 5), round-robin and back to back; the other scalings and word counts\n"
           "  on 1 thread; the kernel tables per ISA; repacked weights against the plain ones\n"
           "  and ggml's repacked weights, in cache and from memory.\n"
           "  --quick      fewer samples\n"
           "  --repacked   (last) the repacked comparison alone\n",
           argv0);
}

static const dn_isa isas[4] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_AVX512, DN_ISA_NEON};

/* Where ggml's cases sit in a group whose first six are ours (Q4_K, Q6_K,
   Q8_0 on 1 and 2 threads): cases = the count of ours and ggml's. */
typedef struct peer_cases {
    int cases;
    int plain[6];    /* ggml on the weights in place, pairing with ours [i] */
    int repacked[6]; /* ggml on repacked weights, -1 where it has none */
} peer_cases;

#ifdef DN_BENCH_GGML
/* ggml's output of ours [i] (variant 0 in place, 1 repacked) */
static float *ggml_out(float *out, int variant, int i)
{
    return out + (32 + 6 * (size_t)variant + i) * ROWS;
}

/* Ours against ggml's cases of the same group, paired round by round. */
static void print_vs_ggml(const bench_case *g, const peer_cases *pc, const product *mv, float *out,
                          int *ggml_ok)
{
    printf("  %-26s %8s %8s %7s %8s %8s %7s %8s\n", "case", "ours ms", "ggml ms", "speed", "dist",
           "repacked", "speed", "dist");
    for (int i = 0; i < 6; i++) {
        const bench_case *c = &g[i];
        int at[2] = {pc->plain[i], pc->repacked[i]};
        char name[64], col[2][64] = {"", "        -"};
        snprintf(name, sizeof name, "%s 8192x16384, %s", c->op, c->impl);
        for (int v = 0; v < 2; v++) {
            if (at[v] < 0) continue;
            /* ours and ggml's differ by their activation schemes (ggml's
               Q8_K / Q8_0 against Sub32): a few parts in a hundred with
               this data's outliers, which coarsen ggml's per-256 Q8_K
               scale. Far more (or NaN) means ggml did not compute the
               product, and its time means nothing. */
            double d2 = 0, o2 = 0;
            const float *go = ggml_out(out, v, i);
            for (size_t r = 0; r < ROWS; r++) {
                double a = mv[i].out[r], b = go[r];
                d2 += (a - b) * (a - b);
                o2 += a * a;
            }
            double dist = sqrt(d2 / o2), rm, rp;
            *ggml_ok &= dist < 0.25;
            bench_ratio(c, &g[at[v]], &rm, &rp);
            snprintf(col[v], sizeof col[v], "%8.2f %7.3f %8.1e", ms(g[at[v]].med), rp, dist);
        }
        printf("  %-26s %8.2f %s %s\n", name, ms(c->med), col[0], col[1]);
    }
    if (!*ggml_ok) printf("  GGML'S OUTPUTS ARE FAR FROM OURS: its times mean nothing\n");
}
#else
/* Ours against ggml's figures from issue 5 (constants). */
static void print_vs_ggml(const bench_case *g, const peer_cases *pc, const product *mv, float *out,
                          int *ggml_ok)
{
    (void)pc, (void)mv, (void)out, (void)ggml_ok;
    printf("ggml's figures from issue 5 (not measured here; build with DECODENUM_BENCH_GGML to\n"
           "measure it); speed = ggml ms / ours (>1: ours faster):\n");
    printf("  %-26s %9s %9s %9s %7s %7s\n", "case", "ggml ms", "ours ms", "ours-best", "speed",
           "best");
    static const double gg[4] = {GGML_Q4_K_1T_MS, GGML_Q4_K_2T_MS, GGML_Q8_0_1T_MS,
                                 GGML_Q8_0_2T_MS};
    static const int gi[4] = {0, 1, 4, 5};
    for (int k = 0; k < 4; k++) {
        const bench_case *c = &g[gi[k]];
        char name[64];
        snprintf(name, sizeof name, "%s 8192x16384, %s", c->op, c->impl);
        printf("  %-26s %9.2f %9.2f %9.2f %7.3f %7.3f\n", name, gg[k], ms(c->med), ms(c->best),
               gg[k] / ms(c->med), gg[k] / ms(c->best));
    }
}
#endif
static const dn_type ftypes[3] = {DN_TYPE_Q4_K, DN_TYPE_Q6_K, DN_TYPE_Q8_0};
static const char *const fnames[3] = {"Q4_K", "Q6_K", "Q8_0"};

/* The plan, the data and the cases of one run. */
typedef struct dot_run {
    int quick, samples, isa_samples, b2b_samples;
    double warm, b2b_target, t_start;
    uint8_t *w[3]; /* the matrices, ftypes[] */
    size_t wb[3];  /* their bytes */
    float *x;      /* the activation */
    int16_t *codes;
    dn_act_scale *scales;
    float *out; /* every case's output rows */
    dn_act_row acts[16];
    dn_pool *pool1, *pool2;
    bench_team *team2;
#ifdef DN_BENCH_GGML
    ggml_peer *gp[12];
#endif
    product mv[6]; /* the three formats on 1 and 2 threads */
    void *act_mem; /* the prepared activation of the rows in L2 */
    dn_act *act;
    l2_product l2[3];  /* the three formats' first L2_ROWS rows */
    bench_case g1[64]; /* mv's cases, ggml's, the rows in L2, the read kernels' */
    int n1, l2_first, r1_first, r2_first, best1, best2;
    peer_cases peers;
    int ggml_ok; /* the peer's products look computed (no peer: trivially) */
} dot_run;

/* Format f's matrix of the run (its first `rows` rows) times act into out. */
static product product_of(const dot_run *r, int f, size_t rows, dn_act_scaling scaling,
                          dn_words words, dn_act_row *act, float *out, dn_pool *pool,
                          const dn_dot_kernels *kern)
{
    product p = {ftypes[f], r->w[f], rows, COLS, scaling, words, r->x, act, out, pool, kern};
    return p;
}

static void plan(dot_run *r, int quick)
{
    r->quick = quick;
    r->samples = quick ? 7 : 21;
    r->warm = quick ? 0.0 : 0.05;
    r->isa_samples = quick ? 3 : 7;
    r->b2b_samples = quick ? 5 : 11;
    r->b2b_target = 0.06; /* seconds per sample: 5 to 10 calls */
    r->ggml_ok = 1;
}

static void print_header(const dot_run *r, int argc, char **argv)
{
    static const char *const envs[] = {"DECODENUM_ISA"};
    bench_print_command("decodenum-bench-dot", argc, argv, envs, 1);
    bench_print_machine(bench_clock_ghz(r->quick ? 0.05 : 0.2));
    bench_print_load();
    printf("dot: the public API runs the %s kernels\n", dn_isa_name(dn_isa_active()));
    printf("data: blocks of random digits and sub-block scales, binary16 scales 2^-12..2^-7;\n"
           "      activations uniform in [-1, 1), every 64th x30; quantized in every call\n");
    fflush(stdout);
}

/* The matrices, the activation, the buffers, the pools. */
static int setup(dot_run *r)
{
    for (int f = 0; f < 3; f++) {
        r->wb[f] = ROWS * row_bytes(ftypes[f]);
        r->w[f] = bench_alloc(r->wb[f]);
        if (!r->w[f]) {
            fprintf(stderr, "decodenum-bench-dot: out of memory (needs ~320 MiB)\n");
            return -1;
        }
        fill_matrix(ftypes[f], r->w[f], ROWS, 7u + (uint32_t)f);
    }
    r->x = bench_alloc(COLS * sizeof *r->x);
    r->codes = bench_alloc(COLS * sizeof *r->codes * 16);
    r->scales = bench_alloc(COLS / 32 * sizeof *r->scales * 16);
    r->out = bench_alloc(ROWS * 45 * sizeof *r->out); /* 16 + 9 kernel cases; 12 ggml from 32; L2 */
    if (!r->x || !r->codes || !r->scales || !r->out) {
        fprintf(stderr, "decodenum-bench-dot: out of memory\n");
        return -1;
    }
    fill_activation(r->x, COLS);
    size_t abytes = 0;
    if (dn_act_size(COLS, 1, DN_ACT_SUB32, DN_WORDS_ONE, &abytes) != DN_OK ||
        !(r->act_mem = bench_alloc(abytes)) ||
        dn_act_prepare(r->x, COLS, 1, DN_ACT_SUB32, DN_WORDS_ONE, r->act_mem, abytes, &r->act,
                       NULL) != DN_OK) {
        fprintf(stderr, "decodenum-bench-dot: cannot prepare the activation\n");
        return -1;
    }
    for (int i = 0; i < 16; i++)
        r->acts[i] =
            (dn_act_row){r->codes + i * COLS, r->scales + i * (COLS / 32), COLS, 0, DN_WORDS_ONE};

    r->pool1 = dn_pool_create(1), r->pool2 = dn_pool_create(2);
    r->team2 = bench_team_create(2);
    if (!r->pool1 || !r->pool2 || !r->team2) {
        fprintf(stderr, "decodenum-bench-dot: cannot create threads\n");
        return -1;
    }
    return 0;
}

/* Ours: the three formats on 1 and 2 threads. */
static void add_thread_cases(dot_run *r)
{
    for (int f = 0; f < 3; f++)
        for (int t = 0; t < 2; t++) {
            int i = 2 * f + t;
            r->mv[i] = product_of(r, f, ROWS, DN_ACT_SUB32, DN_WORDS_ONE, &r->acts[i],
                                  r->out + i * ROWS, t ? r->pool2 : r->pool1, NULL);
            r->g1[r->n1++] =
                mk(fnames[f], t ? "2 threads" : "1 thread", call_mat_vec, &r->mv[i], r->samples);
        }
    r->peers = (peer_cases){.cases = r->n1};
}

#ifdef DN_BENCH_GGML
/* ggml's cases follow ours */
static int add_ggml_cases(dot_run *r)
{
    for (int j = 0; j < 12; j++) {
        int i = j % 6, rp = j >= 6;
        r->gp[j] = ggml_peer_create((int)ftypes[i / 2], r->w[i / 2], ROWS, COLS, r->x, 1,
                                    ggml_out(r->out, rp, i), i % 2 + 1, rp);
        if (!r->gp[j]) {
            fprintf(stderr, "decodenum-bench-dot: ggml_peer_create failed\n");
            return -1;
        }
        if (rp && !ggml_peer_repacked(r->gp[j])) {
            r->peers.repacked[i] = -1;
            continue;
        }
        (rp ? r->peers.repacked : r->peers.plain)[i] = r->n1;
        r->g1[r->n1] =
            mk(fnames[i / 2], rp ? "ggml repacked" : "ggml", ggml_peer_call, &r->mv[i], r->samples);
        r->g1[r->n1++].ctx = r->gp[j];
    }
    r->peers.cases = r->n1;
    return 0;
}
#endif

/* The read bandwidth over the largest matrix (Q8_0's) on 1 and 2 threads,
   added to ours (and ggml's), all sampled together. */
static void measure_threads(dot_run *r)
{
    bench_case *g1 = r->g1;
    size_t bytes = r->wb[2] & ~(size_t)4095;
    r->l2_first = r->n1;
    for (int f = 0; f < 3; f++) {
        r->l2[f] = (l2_product){ftypes[f], r->w[f], r->act, r->out + 44 * ROWS + f * L2_ROWS};
        g1[r->n1] = (bench_case){.op = fnames[f],
                                 .impl = "in L2",
                                 .call = call_l2,
                                 .ctx = &r->l2[f],
                                 .n = L2_ROWS * COLS,
                                 .bytes = (double)L2_ROWS * (double)row_bytes(ftypes[f]),
                                 .reps = 1,
                                 .want = r->samples};
        r->n1++;
    }
    r->r1_first = r->n1;
    r->n1 = bench_add_read_cases(g1, r->n1, NULL, r->w[2], bytes, r->samples);
    r->r2_first = r->n1;
    r->n1 = bench_add_read_cases(g1, r->n1, r->team2, r->w[2], bytes, r->samples);
    /* the rows in L2: samples of 2 ms, so the first call's misses spread */
    for (int i = 0; i < r->n1; i++)
        bench_calibrate(&g1[i], r->warm, i >= r->l2_first && i < r->l2_first + 3 ? 0.002 : 0.0);
    bench_run_group_shuffled(g1, r->n1);
    r->best1 = bench_best_case(g1, r->r1_first, r->r2_first);
    r->best2 = bench_best_case(g1, r->r2_first, r->n1);
}

static void print_threads(dot_run *r)
{
    const bench_case *g1 = r->g1;
    printf("\n%zu x %zu mat_vec, Sub32 scales, one word: dn_quantize + dn_mat_vec, %d samples of 1 "
           "call:\n",
           ROWS, COLS, r->samples);
    printf("  %-5s %-9s %7s %8s %8s %8s   %-11s %s\n", "type", "threads", "MiB", "ms/call", "GB/s",
           "GB/s-max", "/ L2 x t", "/ read bandwidth, same threads (paired, medians)");
    for (int i = 0; i < 6; i++) {
        const bench_case *c = &g1[i], *rd = &g1[i % 2 ? r->best2 : r->best1];
        const bench_case *l2 = &g1[r->l2_first + i / 2];
        double rm, rp;
        bench_ratio(c, rd, &rm, &rp);
        printf("  %-5s %-9s %7zu %8.2f %8.2f %8.2f   %-11.3f %.3f, %.3f  (read %s %.2f GB/s)\n",
               c->op, c->impl, r->wb[i / 2] >> 20, ms(c->med), bench_gbps(c, c->med),
               bench_gbps(c, c->best),
               bench_gbps(c, c->med) / ((i % 2 + 1) * bench_gbps(l2, l2->med)), rp, rm, rd->impl,
               bench_gbps(rd, rd->med));
    }
    printf("  in L2 (the first %zu rows, dn_act_mat_vec on an activation prepared once, no pool;\n"
           "  t threads' compute limit taken as t times it), GB/s:",
           L2_ROWS);
    for (int f = 0; f < 3; f++)
        printf(" %s %.2f", fnames[f], bench_gbps(&g1[r->l2_first + f], g1[r->l2_first + f].med));
    printf("\n");
    printf("  read bandwidth over %zu MiB (median / max GB/s):\n", r->wb[2] >> 20);
    bench_print_read_pairs(g1, r->r1_first, r->r2_first);
#ifdef DN_BENCH_GGML
    printf("\nggml measured in this run: %s;\n"
           "its own activation quantization (Q8_K for Q4_K and Q6_K, Q8_0 for Q8_0) in every call, "
           "on\n"
           "the weights in place and repacked as llama.cpp loads them (where ggml repacks the "
           "format).\n"
           "speed = our throughput / ggml's (>1 = ours faster), paired round by round; dist = "
           "relative\n"
           "L2 distance of ggml's outputs from ours.\n",
           ggml_peer_build());
#endif
    printf("\nthe same products, sampled round-robin (1 call per sample):\n");
    print_vs_ggml(g1, &r->peers, r->mv, r->out, &r->ggml_ok);
}

/* Back to back: each sample a run of consecutive calls. The regime of
   ggml's own timing loops: the same product again and again, threads
   awake, the weights partly in the L3 from the last call. The same cases
   as above (ours and ggml's, at the same indices). */
static void back_to_back(dot_run *r)
{
    static bench_case g4[64];
    for (int i = 0; i < r->peers.cases; i++) {
        g4[i] = r->g1[i];
        g4[i].want = r->b2b_samples;
        g4[i].have = 0;
        bench_calibrate(&g4[i], 0.0, r->b2b_target);
    }
    bench_run_group_shuffled(g4, r->peers.cases);
    printf("\nback to back: each sample %.0f ms of consecutive calls of one case (the regime of "
           "ggml's own\n"
           "timing loops: threads awake, the weights partly in the L3 from the call before), %d "
           "samples:\n",
           r->b2b_target * 1e3, r->b2b_samples);
    print_vs_ggml(g4, &r->peers, r->mv, r->out, &r->ggml_ok);
    fflush(stdout);
}

/* The other scalings and word counts, 1 thread. */
static void other_scalings(dot_run *r)
{
    product ov[6];
    static bench_case g2[6];
    for (int f = 0; f < 3; f++) {
        ov[2 * f] = product_of(r, f, ROWS, DN_ACT_PER_BLOCK, DN_WORDS_ONE, &r->acts[6 + 2 * f],
                               r->out + (6 + 2 * f) * ROWS, r->pool1, NULL);
        ov[2 * f + 1] = product_of(r, f, ROWS, DN_ACT_SUB32, DN_WORDS_TWO, &r->acts[7 + 2 * f],
                                   r->out + (7 + 2 * f) * ROWS, r->pool1, NULL);
        g2[2 * f] =
            mk(fnames[f], "per block, one word", call_mat_vec, &ov[2 * f], r->samples / 2 + 1);
        g2[2 * f + 1] =
            mk(fnames[f], "Sub32, two words", call_mat_vec, &ov[2 * f + 1], r->samples / 2 + 1);
    }
    for (int i = 0; i < 6; i++) bench_calibrate(&g2[i], r->warm, 0.0);
    bench_run_group_shuffled(g2, 6);
    printf("\nthe other scalings and word counts, 1 thread, quantization included:\n");
    printf("  %-5s %-20s %8s %8s   %s\n", "type", "scaling", "ms/call", "GB/s",
           "/ Sub32 one word 1 thread (medians)");
    for (int i = 0; i < 6; i++) {
        const bench_case *c = &g2[i];
        printf("  %-5s %-20s %8.2f %8.2f   %.3f\n", c->op, c->impl, ms(c->med),
               bench_gbps(c, c->med), r->g1[2 * (i / 2)].med / c->med);
    }
    fflush(stdout);
}

/* Per ISA, the kernel tables directly; 1 when every ISA's bits are the
   scalar reference's. */
static int per_isa(dot_run *r)
{
    product kp[9];
    static bench_case g3[9];
    int n3 = 0, isa_of[9], fmt_of[9];
    for (int f = 0; f < 3; f++) {
        dn_act_row *a = &r->acts[12 + f];
        if (dn_quantize(r->x, COLS, DN_WORDS_ONE, a, NULL) != DN_OK)
            fail_status("dn_quantize", DN_ERR_INVALID_ARGUMENT);
        for (int i = 0; i < 4; i++) {
            const dn_dot_kernels *k = dn_kernels_for(isas[i]) ? dn_kernels_for(isas[i])->dot : NULL;
            if (!k || n3 == 9) continue; /* at most three ISAs on a machine */
            kp[n3] = product_of(r, f, ISA_ROWS, DN_ACT_SUB32, DN_WORDS_ONE, a,
                                r->out + (16 + n3) * ROWS, NULL, k);
            g3[n3] = mk(fnames[f], dn_isa_name(isas[i]), call_kern, &kp[n3], r->isa_samples);
            isa_of[n3] = i;
            fmt_of[n3] = f;
            n3++;
        }
    }
    for (int i = 0; i < n3; i++) bench_calibrate(&g3[i], 0.0, 0.02);
    bench_run_group_shuffled(g3, n3);
    printf("\nper ISA, single thread, dn_kernels_for(isa)->dot->mat_vec_rows, %zu x %zu, Sub32 one "
           "word\n"
           "(activation quantized beforehand), %d samples:\n",
           ISA_ROWS, COLS, r->isa_samples);
    printf("  %-5s %-7s %9s %8s   %s\n", "type", "isa", "ms/call", "GB/s", "check");
    int isa_ok = 1;
    for (int i = 0; i < n3; i++) {
        const bench_case *c = &g3[i];
        const char *chk = "";
        int j = i;
        while (j > 0 && fmt_of[j - 1] == fmt_of[i]) j--; /* the scalar case of this format */
        if (isa_of[i] != 0) {
            int same = memcmp(kp[i].out, kp[j].out, ISA_ROWS * sizeof(float)) == 0;
            isa_ok &= same;
            chk = same ? "bits = scalar" : "BITS DIFFER FROM SCALAR";
        }
        printf("  %-5s %-7s %9.3f %8.2f   %s\n", c->op, c->impl, ms(c->med), bench_gbps(c, c->med),
               chk);
        if (isa_of[i] != 0) printf("        speed-up over scalar: %.1fx\n", g3[j].med / c->med);
    }
    return isa_ok;
}

/* The repacked layout's comparison (dot_repacked.c) on the run's matrices. */
static void repacked_section(const dot_run *r)
{
    const uint8_t *w[3] = {r->w[0], r->w[1], r->w[2]};
    dot_repacked_set set = {3, ftypes, fnames, w, ROWS, COLS, r->x, r->pool2, r->quick};
    bench_dot_repacked(&set);
}

/* 1 when the outputs of 1 and 2 threads are bit-identical, each format,
   and the in-L2 product (a prepared activation, no pool) gave the first
   L2_ROWS of them. */
static int print_thread_bits(const dot_run *r)
{
    int threads_ok = 1, l2_ok = 1;
    for (int f = 0; f < 3; f++) {
        threads_ok &= memcmp(r->mv[2 * f].out, r->mv[2 * f + 1].out, ROWS * sizeof(float)) == 0;
        l2_ok &= memcmp(r->l2[f].out, r->mv[2 * f].out, L2_ROWS * sizeof(float)) == 0;
    }
    printf("\nbits: %s (1 / 2 threads, each format); in L2: %s\n",
           threads_ok ? "identical across thread counts" : "DIFFER ACROSS THREAD COUNTS",
           l2_ok ? "the same first rows" : "FIRST ROWS DIFFER");
    return threads_ok && l2_ok;
}

static void teardown(dot_run *r)
{
#ifdef DN_BENCH_GGML
    for (int j = 0; j < 12; j++) ggml_peer_destroy(r->gp[j]);
#endif
    bench_team_destroy(r->team2);
    dn_pool_destroy(r->pool1);
    dn_pool_destroy(r->pool2);
    for (int f = 0; f < 3; f++) free(r->w[f]);
    free(r->x);
    free(r->act_mem);
    free(r->codes);
    free(r->scales);
    free(r->out);
}

int main(int argc, char **argv)
{
#ifdef DN_BENCH_GGML
    ggml_peer_quiet_openmp(argv); /* before anything is printed */
#endif
    int quick = 0, only_repacked = 0;
    if (argc > 1 && !strcmp(argv[argc - 1], "--repacked")) only_repacked = 1, argc--;
    int rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    static dot_run r;
    r.t_start = now_s();
    plan(&r, quick);
    print_header(&r, argc, argv);
    if (setup(&r)) return 1;
    if (only_repacked) {
        repacked_section(&r);
        bench_print_load();
        teardown(&r);
        return 0;
    }
    add_thread_cases(&r);
#ifdef DN_BENCH_GGML
    if (add_ggml_cases(&r)) return 1;
#endif
    measure_threads(&r);
    print_threads(&r);
    back_to_back(&r);
    other_scalings(&r);
    int isa_ok = per_isa(&r);
    int threads_ok = print_thread_bits(&r);
    repacked_section(&r);
    printf("run took %.1f s\n", now_s() - r.t_start);
    bench_print_load();
    teardown(&r);
    return threads_ok && isa_ok && r.ggml_ok ? 0 : 1;
}
