/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-prefill: the products with a prepared activation
 * (decodenum/dot.h's dn_act), every figure a ratio of cases sampled
 * round-robin in the same run.
 *
 *   decodenum-bench-prefill           decode cases and mat_mul 4096 x 4096
 *   decodenum-bench-prefill --quick   fewer samples, n = 8 and 64 only
 *   DN_BENCH_BIG=1 decodenum-bench-prefill   also 8192 x 16384 (n = 8, 64)
 *   DN_BENCH_ONLY=split|grouped|mat_mul|big  one part alone
 *   DN_BENCH_N=<n>                           mat_mul with n columns alone
 *
 * Cases:
 *  - row split: the 5632 x 2048 Q4_K product (an FFN's down projection's
 *    shape) on one thread, whole and in 4-row chunks, through the prepared
 *    activation (dn_act_mat_vec, dn_act_mat_vec_rows) and through
 *    dn_mat_vec / dn_mat_vec_rows (which prepare the activation side per
 *    call);
 *  - grouped: Q, K and V (three 2048 x 2048 Q4_K) as three dn_mat_vec
 *    calls (activation quantized once), three dn_act_mat_vec, and one
 *    dn_act_mat_vec_multi (dn_act_prepare included), 1 and 2 threads;
 *  - mat_mul: Q4_K, Q6_K and Q8_0 4096 x 4096 with n = 8, 64, 512 columns,
 *    1 and 2 threads: dn_act_prepare + dn_act_mat_mul against ggml_mul_mat
 *    on the same weights and activations (in place and repacked) when built
 *    with a ggml (DECODENUM_BENCH_GGML), which quantizes its activation in
 *    its call too;
 *  - the core's int8 multiply-add peak: chain-free loops of vpmaddubsw
 *    (AVX2, 32 multiply-adds each) and, where the CPU has AVX512-VNNI,
 *    vpdpbusd on 512 bits (64) on one thread; the larger is the peak the
 *    products are quoted against (bench_peak, peak.c).
 * Every output of 1 and 2 threads is checked equal to the one-thread
 * product, and every product to n dn_act_mat_vec calls, bit for bit.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "decodenum/dot.h"
#include "decodenum/pool.h"
#ifdef DN_BENCH_GGML
#include "ggml_peer.h"
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static void fail(const char *what, dn_status st)
{
    fprintf(stderr, "decodenum-bench-prefill: %s: %s\n", what, dn_status_str(st));
    exit(1);
}

static uint16_t typical_f16(uint32_t *s) /* 2^-12 .. 2^-7, either sign */
{
    uint32_t v = bench_lcg(s);
    return (uint16_t)((v & 0x8000u) | (uint16_t)((3 + (v >> 20) % 5) << 10) | ((v >> 8) & 0x3FF));
}

/* Random digits and sub-block scales; typical binary16 scales. */
static void fill_matrix(dn_type t, uint8_t *w, size_t rows, size_t n, uint32_t seed)
{
    size_t bb = dn_type_block_bytes(t), blocks = rows * (n / dn_type_block_elements(t));
    uint32_t s = seed;
    for (size_t i = 0; i < blocks * bb; i++) w[i] = (uint8_t)(bench_lcg(&s) >> 24);
    for (size_t b = 0; b < blocks; b++) {
        uint8_t *blk = w + b * bb;
        uint16_t d = typical_f16(&s), m = typical_f16(&s);
        size_t at = t == DN_TYPE_Q6_K ? 208 : 0;
        memcpy(blk + at, &d, 2);
        if (t == DN_TYPE_Q4_K) memcpy(blk + 2, &m, 2);
    }
}

/* ---- cases -------------------------------------------------------------------- */

typedef struct job {
    dn_type type;
    const uint8_t *w;
    size_t rows, n, cols, chunk;
    const float *x;
    dn_act_scaling scaling;
    void *mem;
    size_t mem_bytes;
    dn_act *act; /* prepared once (decode cases) or per call */
    dn_act_row *row;
    dn_act_matrix mats[3];
    float *out;
    dn_pool *pool;
} job;

static void prepare(job *j)
{
    /* the columns on the product's pool (NULL: this thread) */
    dn_status st = dn_act_prepare_pool(j->x, j->n, j->cols, j->scaling, DN_WORDS_ONE, NULL, 0,
                                       j->mem, j->mem_bytes, j->pool, &j->act, NULL);
    if (st != DN_OK) fail("dn_act_prepare_pool", st);
}

static void call_act_whole(bench_case *c)
{
    job *j = c->ctx;
    dn_status st = dn_act_mat_vec(j->act, 0, j->type, j->w, j->rows, j->out, NULL, NULL);
    if (st != DN_OK) fail("dn_act_mat_vec", st);
}

static void call_act_chunks(bench_case *c)
{
    job *j = c->ctx;
    for (size_t r = 0; r < j->rows; r += j->chunk) {
        dn_status st =
            dn_act_mat_vec_rows(j->act, 0, j->type, j->w, j->rows, r, r + j->chunk, j->out, NULL);
        if (st != DN_OK) fail("dn_act_mat_vec_rows", st);
    }
}

static void call_old_whole(bench_case *c)
{
    job *j = c->ctx;
    dn_status st =
        dn_mat_vec(j->type, j->w, j->rows, j->n, j->row, j->scaling, j->out, j->pool, NULL);
    if (st != DN_OK) fail("dn_mat_vec", st);
}

static void call_old_chunks(bench_case *c)
{
    job *j = c->ctx;
    for (size_t r = 0; r < j->rows; r += j->chunk) {
        dn_status st = dn_mat_vec_rows(j->type, j->w, j->rows, j->n, j->row, j->scaling, r,
                                       r + j->chunk, j->out, NULL);
        if (st != DN_OK) fail("dn_mat_vec_rows", st);
    }
}

/* Q, K, V: the activation quantized, three dn_mat_vec. */
static void call_qkv_old(bench_case *c)
{
    job *j = c->ctx;
    dn_status st = dn_quantize(j->x, j->n, DN_WORDS_ONE, j->row, NULL);
    for (int i = 0; i < 3 && st == DN_OK; i++)
        st = dn_mat_vec(j->mats[i].type, j->mats[i].w, j->mats[i].rows, j->n, j->row, j->scaling,
                        j->mats[i].out, j->pool, NULL);
    if (st != DN_OK) fail("qkv dn_mat_vec", st);
}

/* Q, K, V: the activation prepared, three dn_act_mat_vec. */
static void call_qkv_act(bench_case *c)
{
    job *j = c->ctx;
    prepare(j);
    for (int i = 0; i < 3; i++) {
        dn_status st = dn_act_mat_vec(j->act, 0, j->mats[i].type, j->mats[i].w, j->mats[i].rows,
                                      j->mats[i].out, j->pool, NULL);
        if (st != DN_OK) fail("qkv dn_act_mat_vec", st);
    }
}

/* Q, K, V: the activation prepared, one dn_act_mat_vec_multi. */
static void call_qkv_multi(bench_case *c)
{
    job *j = c->ctx;
    prepare(j);
    dn_status st = dn_act_mat_vec_multi(j->act, 0, j->mats, 3, j->pool, NULL, NULL);
    if (st != DN_OK) fail("dn_act_mat_vec_multi", st);
}

/* The prefill product: prepare the columns, then the product. */
static void call_mat_mul(bench_case *c)
{
    job *j = c->ctx;
    prepare(j);
    dn_status st = dn_act_mat_mul(j->act, j->type, j->w, j->rows, j->out, j->pool, NULL);
    if (st != DN_OK) fail("dn_act_mat_mul", st);
}

static bench_case mk(const char *op, const char *impl, bench_call_fn call, void *ctx, int want)
{
    return (bench_case){
        .op = op, .impl = impl, .call = call, .ctx = ctx, .bytes = 1, .reps = 1, .want = want};
}

/* The calling thread's CPU seconds. The machine these figures come from is
   shared by many processes (load averages of 10 to 15 on 2 cores): wall
   time of a one-thread case then mostly measures the scheduler, CPU time
   what the case costs. */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One-thread cases sampled round-robin (the order rotated every round) in
   the calling thread's CPU time, reps calls a sample (so a sample lasts
   about `target` CPU seconds); med, best and t[] as bench_run_group sets
   them, so bench_ratio pairs them. */
static void cpu_group(bench_case *g, int count, double target)
{
    for (int c = 0; c < count; c++) {
        double t = cpu_s();
        g[c].call(&g[c]);
        t = cpu_s() - t;
        g[c].reps = t > 0 && target / t > 1 ? (size_t)(target / t) : 1;
        g[c].have = 0;
    }
    for (int s = 0; s < g[0].want && s < BENCH_MAX_SAMPLES; s++)
        for (int k = 0; k < count; k++) {
            bench_case *c = &g[(k + s) % count];
            double t = cpu_s();
            for (size_t r = 0; r < c->reps; r++) c->call(c);
            c->t[c->have++] = (cpu_s() - t) / (double)c->reps;
        }
    for (int c = 0; c < count; c++) {
        double v[BENCH_MAX_SAMPLES];
        memcpy(v, g[c].t, sizeof(double) * (size_t)g[c].have);
        g[c].med = median(v, g[c].have);
        g[c].best = v[0];
    }
}

static int same_bits(const float *a, const float *b, size_t count)
{
    return memcmp(a, b, count * sizeof *a) == 0;
}

/* ---- the row split ------------------------------------------------------------ */

/* 5632 x 2048 Q4_K on one thread: whole and in 4-row chunks, through the
   prepared activation and through the per-call forms. */
static int row_split(int quick)
{
    const size_t rows = 5632, n = 2048;
    size_t wb = rows * (n / 256) * dn_type_block_bytes(DN_TYPE_Q4_K), bytes;
    uint8_t *w = bench_alloc(wb);
    float *x = bench_alloc(n * 4), *out = bench_alloc(4 * rows * 4);
    int16_t *codes = bench_alloc(2 * n);
    dn_act_scale *scales = bench_alloc(n / 32 * sizeof *scales);
    if (dn_act_size(n, 1, DN_ACT_SUB32, DN_WORDS_ONE, &bytes) != DN_OK) return 0;
    void *mem = bench_alloc(bytes);
    if (!w || !x || !out || !codes || !scales || !mem) fail("memory", DN_ERR_OUT_OF_MEMORY);
    fill_matrix(DN_TYPE_Q4_K, w, rows, n, 11);
    bench_fill(x, n, 12);
    dn_act_row row = {codes, scales, n, 0, DN_WORDS_ONE};
    if (dn_quantize(x, n, DN_WORDS_ONE, &row, NULL) != DN_OK) return 0;
    job j[4];
    for (int k = 0; k < 4; k++) {
        j[k] = (job){.type = DN_TYPE_Q4_K,
                     .w = w,
                     .rows = rows,
                     .n = n,
                     .cols = 1,
                     .chunk = 4,
                     .x = x,
                     .scaling = DN_ACT_SUB32,
                     .mem = mem,
                     .mem_bytes = bytes,
                     .row = &row,
                     .out = out + k * rows};
        if (k == 0) prepare(&j[0]);
        j[k].act = j[0].act;
    }
    int want = quick ? 9 : 31;
    bench_case g[4] = {mk("5632x2048 Q4_K", "dn_act_mat_vec whole", call_act_whole, &j[0], want),
                       mk("5632x2048 Q4_K", "dn_act_mat_vec_rows x4", call_act_chunks, &j[1], want),
                       mk("5632x2048 Q4_K", "dn_mat_vec whole", call_old_whole, &j[2], want),
                       mk("5632x2048 Q4_K", "dn_mat_vec_rows x4", call_old_chunks, &j[3], want)};
    cpu_group(g, 4, 0.02);
    printf("\nrow split: 5632 x 2048 Q4_K, Sub32, one word, 1 thread, CPU time (activation "
           "prepared beforehand)\n");
    printf("  %-28s %9s %14s\n", "form", "ms", "vs whole (paired)");
    for (int k = 0; k < 4; k++) {
        double rm, rp;
        bench_ratio(&g[k & 2], &g[k], &rm, &rp); /* whole's throughput over this one's */
        printf("  %-28s %9.3f %14.3f\n", g[k].impl, g[k].med * 1e3, 1.0 / rp);
    }
    int ok = 1;
    for (int k = 1; k < 4; k++) ok &= same_bits(out, out + k * rows, rows);
    free(w), free(x), free(out), free(codes), free(scales), free(mem);
    return ok;
}

/* ---- the grouped product ------------------------------------------------------------ */

static int grouped(int quick)
{
    const size_t n = 2048, rows = 2048, wb = rows * (n / 256) * 144;
    size_t bytes;
    uint8_t *w[3];
    float *x = bench_alloc(n * 4), *out = bench_alloc(3 * 3 * 2 * rows * 4);
    int16_t *codes = bench_alloc(2 * n);
    dn_act_scale *scales = bench_alloc(n / 32 * sizeof *scales);
    if (dn_act_size(n, 1, DN_ACT_SUB32, DN_WORDS_ONE, &bytes) != DN_OK) return 0;
    void *mem[6];
    for (int i = 0; i < 6; i++) mem[i] = bench_alloc(bytes);
    for (int i = 0; i < 3; i++) {
        w[i] = bench_alloc(wb);
        if (!w[i]) fail("memory", DN_ERR_OUT_OF_MEMORY);
        fill_matrix(DN_TYPE_Q4_K, w[i], rows, n, 20 + (uint32_t)i);
    }
    if (!x || !out || !codes || !scales || !mem[5]) fail("memory", DN_ERR_OUT_OF_MEMORY);
    bench_fill(x, n, 13);
    dn_act_row row = {codes, scales, n, 0, DN_WORDS_ONE};
    dn_pool *pool2 = dn_pool_create(2);
    job j[6];
    bench_case g[6];
    static const char *const impl[3] = {"3 x dn_mat_vec", "3 x dn_act_mat_vec",
                                        "dn_act_mat_vec_multi"};
    static const bench_call_fn fn[3] = {call_qkv_old, call_qkv_act, call_qkv_multi};
    for (int k = 0; k < 6; k++) {
        j[k] = (job){.n = n,
                     .cols = 1,
                     .x = x,
                     .scaling = DN_ACT_SUB32,
                     .mem = mem[k],
                     .mem_bytes = bytes,
                     .row = &row,
                     .pool = k >= 3 ? pool2 : NULL};
        for (int i = 0; i < 3; i++)
            j[k].mats[i] = (dn_act_matrix){DN_TYPE_Q4_K, w[i], rows, out + (3 * k + i) * rows};
        g[k] = mk(k >= 3 ? "QKV 3x2048x2048 Q4_K, 2 threads" : "QKV 3x2048x2048 Q4_K, 1 thread",
                  impl[k % 3], fn[k % 3], &j[k], quick ? 9 : 31);
        bench_calibrate(&g[k], 0.05, 0.01);
    }
    cpu_group(g, 3, 0.02);
    bench_run_group_shuffled(g + 3, 3);
    printf("\ngrouped: Q, K, V of 2048 x 2048 Q4_K, Sub32, one word (quantization or preparation "
           "in every call; 1 thread: CPU time, 2 threads: wall time)\n");
    printf("  %-32s %-22s %9s %16s\n", "case", "form", "ms", "speed vs 3 mat_vec");
    int ok = 1;
    for (int k = 0; k < 6; k++) {
        double rm, rp;
        bench_ratio(&g[k], &g[k / 3 * 3], &rm, &rp);
        printf("  %-32s %-22s %9.3f %16.3f\n", g[k].op, g[k].impl, g[k].med * 1e3, rp);
        ok &= same_bits(out, out + 3 * k * rows, 3 * rows);
    }
    dn_pool_destroy(pool2);
    for (int i = 0; i < 3; i++) free(w[i]);
    for (int i = 0; i < 6; i++) free(mem[i]);
    free(x), free(out), free(codes), free(scales);
    return ok;
}

/* The core's int8 multiply-adds per CPU second on one thread: vpmaddubsw
   (AVX2, 32 u8 x s8 products) and, where the CPU has AVX512-VNNI, vpdpbusd
   on 512 bits (64), the larger the peak; printed with the per-cycle
   figures at the measured clock. */
static double int8_peak(double ghz)
{
    double mb = bench_peak(BENCH_PEAK_INT8_YMM), dp = bench_peak(BENCH_PEAK_INT8_ZMM);
    if (mb <= 0) return 0;
    printf("\nint8 multiply-add peak, one thread, CPU time, 12 independent chains: vpmaddubsw "
           "ymm %.1f G/s (%.2f instructions a cycle at %.2f GHz)",
           mb * 1e-9, ghz > 0 ? mb * 1e-9 / ghz / 32 : 0.0, ghz);
    if (dp > 0)
        printf(", vpdpbusd zmm %.1f G/s (%.2f a cycle)", dp * 1e-9,
               ghz > 0 ? dp * 1e-9 / ghz / 64 : 0.0);
    printf("; peak %.1f G/s\n", (dp > mb ? dp : mb) * 1e-9);
    return dp > mb ? dp : mb;
}

/* ---- the matrix products ----------------------------------------------------------- */

static const dn_type mm_types[3] = {DN_TYPE_Q4_K, DN_TYPE_Q6_K, DN_TYPE_Q8_0};
static const char *const mm_names[3] = {"Q4_K", "Q6_K", "Q8_0"};

/* One shape, one n: ours on 1 and 2 threads against ggml's (in place,
   repacked) on as many, for each of the three formats. */
/* The one-thread cases first (CPU time), then the two-thread ones (wall
   time); each printed with GMAC/s, ours as a fraction of the peak (per
   thread), ggml's as ours' throughput over its (>1: ours faster). */
static void sample_and_print(bench_case *g, int count, double macs, const char *fname, size_t rows,
                             size_t k, size_t n, double peak)
{
    bench_case h[6];
    int n1 = 0, n2 = 0;
    for (int c = 0; c < count; c++)
        if (g[c].op[0] == '1') h[n1++] = g[c];
    for (int c = 0; c < count; c++)
        if (g[c].op[0] == '2') h[n1 + n2++] = g[c];
    memcpy(g, h, sizeof(bench_case) * (size_t)count);
    cpu_group(g, n1, 0.0);
    for (int c = n1; c < count; c++) bench_calibrate(&g[c], 0.0, 0.0);
    bench_run_group_shuffled(g + n1, n2);
    for (int c = 0; c < count; c++) {
        const int mine = !strcmp(g[c].impl, "ours");
        const bench_case *ours = g[c].op[0] == '2' ? &g[n1] : &g[0];
        double rm, rp = 1.0;
        if (!mine) bench_ratio(ours, &g[c], &rm, &rp);
        char name[64];
        snprintf(name, sizeof name, "%s %zux%zu n=%zu", fname, rows, k, n);
        printf("  %-24s %-10s %-14s %10.2f %9.1f", name, g[c].op, g[c].impl, g[c].med * 1e3,
               macs / g[c].med * 1e-9);
        if (!mine)
            printf(" %8.3f\n", rp); /* ours' throughput over this one's, paired */
        else if (peak > 0)
            printf(" %8s peak %.3f\n", "", macs / g[c].med / (peak * (g[c].op[0] == '2' ? 2 : 1)));
        else
            printf("\n");
    }
}

static int mat_mul_n(size_t rows, size_t k, size_t n, uint8_t *const w[3], const float *x,
                     dn_pool *pool2, double peak, int quick)
{
    size_t bytes;
    if (dn_act_size(k, n, DN_ACT_SUB32, DN_WORDS_ONE, &bytes) != DN_OK) return 0;
    int ok = 1;
    for (int f = 0; f < 3; f++) {
        job j[2];
        bench_case g[6];
        int count = 0;
        float *out[6] = {0};
        void *mem[2];
        for (int t = 0; t < 2; t++) {
            mem[t] = bench_alloc(bytes);
            out[t] = bench_alloc(n * rows * 4);
            if (!mem[t] || !out[t]) fail("memory", DN_ERR_OUT_OF_MEMORY);
            j[t] = (job){.type = mm_types[f],
                         .w = w[f],
                         .rows = rows,
                         .n = k,
                         .cols = n,
                         .x = x,
                         .scaling = DN_ACT_SUB32,
                         .mem = mem[t],
                         .mem_bytes = bytes,
                         .out = out[t],
                         .pool = t ? pool2 : NULL};
            g[count++] =
                mk(t ? "2 threads" : "1 thread", "ours", call_mat_mul, &j[t], quick ? 3 : 7);
        }
#ifdef DN_BENCH_GGML
        ggml_peer *gp[4] = {0};
        for (int v = 0; v < 4; v++) {
            out[2 + v] = bench_alloc(n * rows * 4);
            gp[v] = ggml_peer_create((int)mm_types[f], w[f], rows, k, x, n, out[2 + v], v % 2 + 1,
                                     v >= 2);
            if (!gp[v] || (v >= 2 && !ggml_peer_repacked(gp[v]))) continue;
            g[count] = mk(v % 2 ? "2 threads" : "1 thread", v >= 2 ? "ggml repacked" : "ggml",
                          ggml_peer_call, NULL, quick ? 3 : 7);
            g[count++].ctx = gp[v];
        }
#endif
        sample_and_print(g, count, (double)rows * (double)k * (double)n, mm_names[f], rows, k, n,
                         peak);
        /* every column of ours equal to its own dn_act_mat_vec, both thread counts */
        float *v = bench_alloc(rows * 4);
        for (size_t c = 0; c<n; c += n> 8 ? n / 8 + 1 : 1) {
            dn_act_mat_vec(j[0].act, c, mm_types[f], w[f], rows, v, NULL, NULL);
            ok &= same_bits(v, out[0] + c * rows, rows) && same_bits(v, out[1] + c * rows, rows);
        }
        free(v);
#ifdef DN_BENCH_GGML
        for (int q = 0; q < 4; q++) ggml_peer_destroy(gp[q]);
#endif
        for (int q = 0; q < 6; q++) free(out[q]);
        free(mem[0]), free(mem[1]);
    }
    return ok;
}

static int mat_muls(int quick, size_t rows, size_t k, double peak)
{
    uint8_t *w[3];
    for (int f = 0; f < 3; f++) {
        size_t wb =
            rows * (k / dn_type_block_elements(mm_types[f])) * dn_type_block_bytes(mm_types[f]);
        w[f] = bench_alloc(wb);
        if (!w[f]) fail("memory", DN_ERR_OUT_OF_MEMORY);
        fill_matrix(mm_types[f], w[f], rows, k, 30 + (uint32_t)f);
    }
    size_t ns[3] = {8, 64, 512}, nmax = 0;
    int nn = quick ? 2 : 3;
    const char *only_n = getenv("DN_BENCH_N"); /* one column count alone */
    if (only_n && atoi(only_n) > 0) ns[0] = (size_t)atoi(only_n), nn = 1;
    for (int i = 0; i < nn; i++) nmax = ns[i] > nmax ? ns[i] : nmax;
    float *x = bench_alloc(nmax * k * 4);
    if (!x) fail("memory", DN_ERR_OUT_OF_MEMORY);
    bench_fill(x, nmax * k, 14);
    dn_pool *pool2 = dn_pool_create(2);
    printf("\nmat_mul %zu x %zu, Sub32, one word, activation prepared in every call (ggml: "
           "quantized in every call)\n",
           rows, k);
#ifdef DN_BENCH_GGML
    printf("ggml: %s\n", ggml_peer_build());
#endif
    printf("  %-24s %-10s %-14s %10s %9s %8s\n", "case", "threads", "impl", "ms", "GMAC/s",
           "ours/it");
    int ok = 1;
    for (int i = 0; i < nn; i++) ok &= mat_mul_n(rows, k, ns[i], w, x, pool2, peak, quick);
    dn_pool_destroy(pool2);
    for (int f = 0; f < 3; f++) free(w[f]);
    free(x);
    return ok;
}

static void usage(const char *argv0)
{
    printf("usage: %s [--quick]\n"
           "  the prepared activation's products against the per-call ones and against ggml,\n"
           "  every ratio from cases sampled round-robin in the same run\n"
           "  DN_BENCH_BIG=1: also the 8192 x 16384 matrices\n",
           argv0);
}

int main(int argc, char **argv)
{
#ifdef DN_BENCH_GGML
    ggml_peer_quiet_openmp(argv); /* before anything is printed */
#endif
    int quick = 0, rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time: long runs show progress */
    static const char *const envs[] = {"DECODENUM_ISA", "DN_BENCH_BIG", "DN_BENCH_ONLY",
                                       "DN_BENCH_N"};
    bench_print_command("decodenum-bench-prefill", argc, argv, envs, 4);
    double ghz = bench_clock_ghz(0.2);
    bench_print_machine(ghz);
    bench_print_load();
    const char *only = bench_env_or("DN_BENCH_ONLY", ""); /* split, grouped or mat_mul */
    int ok = 1;
    if (!*only || !strcmp(only, "split")) ok &= row_split(quick);
    if (!*only || !strcmp(only, "grouped")) ok &= grouped(quick);
    double peak = int8_peak(ghz);
    if (!*only || !strcmp(only, "mat_mul")) ok &= mat_muls(quick, 4096, 4096, peak);
    if (getenv("DN_BENCH_BIG") || !strcmp(only, "big")) ok &= mat_muls(1, 8192, 16384, peak);
    bench_print_load();
    printf("%s\n", ok ? "bits: every product equal to its matrix-vector products" : "BITS DIFFER");
    return ok ? 0 : 1;
}
