/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-attention: one decode token's attention, head size 128,
 * 32 query heads over 8 KV heads, contexts 512, 4096 and 32768, on 1 and 2
 * threads: dn_attend on a binary16 cache (the vector path) and on an int8
 * cache (Sub32, one word), beside the read bandwidth of the bytes each
 * reads ([position][kv_head][d] layout, llama.cpp's; DN_BENCH_LAYOUT=heads
 * keeps each KV head's rows together instead, [kv_head][position][d]).
 * Medians of samples taken round-robin; the machine is shared, so quote
 * ratios.
 *
 *   [DN_BENCH_LAYOUT=heads] ./bench/decodenum-bench-attention [--quick]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "decodenum.h"

#define D 128
#define QH 32
#define KVH 8

typedef struct run {
    dn_kv_cache cache;
    dn_attn_params params;
    const float *q;
    float *out;
    void *work;
    size_t work_bytes;
    dn_pool *pool;
} run;

static void call_attend(bench_case *c)
{
    run *r = c->ctx;
    dn_attend(&r->cache, &r->params, r->q, r->out, r->work, r->work_bytes, r->pool);
    c->result = r->out[0];
}

static void usage(const char *argv0) { printf("usage: %s [--quick]\n", argv0); }

/* A cache of `ctx` positions of `type`, filled through dn_cache_append;
   heads_apart: each KV head's rows together. */
static int make_cache(dn_kv_cache *c, uint32_t type, size_t ctx, int heads_apart)
{
    size_t es = type == DN_KV_INT8 ? 1 : 2, row = KVH * D;
    *c = (dn_kv_cache){bench_alloc(ctx * row * es),
                       bench_alloc(ctx * row * es),
                       NULL,
                       NULL,
                       D,
                       KVH,
                       row,
                       D,
                       KVH,
                       1,
                       type,
                       0};
    if (heads_apart) {
        c->pos_stride = D, c->head_stride = ctx * D;
        c->scale_pos_stride = 1, c->scale_head_stride = ctx;
    }
    if (type == DN_KV_INT8) {
        c->k_scale = bench_alloc(ctx * KVH * 2);
        c->v_scale = bench_alloc(ctx * KVH * 2);
    }
    float *k = malloc(row * sizeof(float)), *v = malloc(row * sizeof(float));
    if (!c->k || !c->v || !k || !v) return 0;
    for (size_t p = 0; p < ctx; p++) {
        bench_fill(k, row, (uint32_t)(2 * p + 1));
        bench_fill(v, row, (uint32_t)(2 * p + 2));
        dn_cache_append(c, p, k, v);
    }
    free(k);
    free(v);
    return 1;
}

static void free_cache(dn_kv_cache *c)
{
    free(c->k);
    free(c->v);
    free(c->k_scale);
    free(c->v_scale);
}

#ifdef DN_BENCH_GGML
#include "ggml_peer.h"

enum { GGML_F16 = 1, GGML_Q8_0 = 8 }; /* enum ggml_type values */

/* The f16 cache's rows again as ggml's Q8_0 blocks (the layout unchanged:
   one row of D elements is D / 32 blocks); NULL where memory runs out. */
static void *q8_0_side(const uint16_t *rows, size_t count)
{
    float *x = malloc(count * D * sizeof(float));
    void *q = bench_alloc(count * D / 32 * 34);
    if (!x || !q) {
        free(x), free(q);
        return NULL;
    }
    dn_f16_to_f32_v(rows, x, count * D);
    ggml_peer_quantize_q8_0(x, q, count, D);
    free(x);
    return q;
}

static void call_ggml(bench_case *c)
{
    ggml_peer_call(c);
    c->result = 0;
}
#endif

/* Up to 8 cases of one context: ours on both caches, ggml's on the f16 and
   Q8_0 ones, each on 1 and 2 threads. */
typedef struct context_cases {
    run runs[4];
    bench_case cs[8];
    float out[8][QH * D];
    int count;
#ifdef DN_BENCH_GGML
    ggml_peer *peers[4];
    void *q8[2];
#endif
} context_cases;

static void add_ours(context_cases *cc, const dn_kv_cache caches[2], const float *q, size_t ctx,
                     int quick, dn_pool *pools[2])
{
    static const char *names[2] = {"f16 vector", "int8"};
    double bytes[2] = {2.0 * ctx * KVH * D * 2, 2.0 * ctx * KVH * (D + 2)};
    for (int i = 0; i < 4; i++) {
        run *r = &cc->runs[i];
        *r = (run){caches[i / 2],
                   {QH, 0, ctx, 0.08838834764f, DN_ACT_SUB32, DN_WORDS_ONE},
                   q,
                   cc->out[i],
                   NULL,
                   0,
                   pools[i % 2]};
        dn_attend_work_size(&r->cache, &r->params, &r->work_bytes, NULL);
        r->work = malloc(r->work_bytes);
        bench_case *c = &cc->cs[cc->count++];
        *c = (bench_case){.op = names[i / 2], .impl = i % 2 ? "2 threads" : "1 thread"};
        c->call = call_attend, c->ctx = r, c->bytes = bytes[i / 2], c->want = quick ? 5 : 15;
        bench_calibrate(c, 0.05, quick ? 0.02 : 0.05);
    }
}

#ifdef DN_BENCH_GGML
static void add_ggml(context_cases *cc, const dn_kv_cache *f16, const float *q, size_t ctx,
                     int quick)
{
    cc->q8[0] = q8_0_side(f16->k, ctx * KVH), cc->q8[1] = q8_0_side(f16->v, ctx * KVH);
    static const char *names[2] = {"ggml f16", "ggml q8_0"};
    for (int i = 0; i < 4; i++) {
        int q8 = i >= 2;
        if (q8 && (!cc->q8[0] || !cc->q8[1])) break;
        const void *k = q8 ? cc->q8[0] : f16->k, *v = q8 ? cc->q8[1] : f16->v;
        float *out = cc->out[cc->count];
        cc->peers[i] = ggml_peer_attention_create(q8 ? GGML_Q8_0 : GGML_F16, k, v, ctx, D, QH, KVH,
                                                  q, 0.08838834764f, out, 1 + i % 2);
        if (!cc->peers[i]) continue;
        bench_case *c = &cc->cs[cc->count++];
        *c = (bench_case){.op = names[q8], .impl = i % 2 ? "2 threads" : "1 thread"};
        c->call = call_ggml, c->ctx = cc->peers[i], c->want = quick ? 5 : 15;
        c->bytes = q8 ? 2.0 * ctx * KVH * D / 32 * 34 : 2.0 * ctx * KVH * D * 2;
        bench_calibrate(c, 0.05, quick ? 0.02 : 0.05);
    }
}
#endif

/* Whether cases a and b (1 and 2 threads of one thing) gave the same bits. */
static const char *same_bits(const context_cases *cc, int a, int b)
{
    if (b >= cc->count) return "-";
    return memcmp(cc->out[a], cc->out[b], sizeof cc->out[a]) == 0 ? "yes" : "NO";
}

static void report(const context_cases *cc, size_t ctx, const bench_bw bw[2])
{
    printf("\n  context %zu (K+V: f16 %.1f MiB, int8 %.1f MiB); read bandwidth %.1f GB/s (1 "
           "thread), %.1f GB/s (2 threads)\n",
           ctx, cc->cs[0].bytes / 1048576.0, cc->cs[2].bytes / 1048576.0, bw[0].med_gbps,
           bw[1].med_gbps);
    for (int i = 0; i < cc->count; i++) {
        const bench_case *c = &cc->cs[i];
        double gbps = bench_gbps(c, c->med);
        printf("    %-11s %-9s  %9.3f ms (best %8.3f)  %6.1f GB/s = %.2f of read bandwidth\n",
               c->op, c->impl, c->med * 1e3, c->best * 1e3, gbps, gbps / bw[i % 2].med_gbps);
    }
    for (int t = 0; t < 2 && cc->count > 4 + t; t++)
        printf("    speed over ggml f16, %d thread%s: ours f16 %.2fx, int8 %.2fx\n", t + 1,
               t ? "s" : "", cc->cs[4 + t].med / cc->cs[t].med,
               cc->cs[4 + t].med / cc->cs[2 + t].med);
    printf("    1 and 2 threads give the same bits: ours f16 %s, int8 %s", same_bits(cc, 0, 1),
           same_bits(cc, 2, 3));
    if (cc->count > 4) printf("; ggml f16 %s, q8_0 %s", same_bits(cc, 4, 5), same_bits(cc, 6, 7));
    printf("\n");
}

static void bench_context(size_t ctx, int quick, int heads_apart, dn_pool *pools[2])
{
    dn_kv_cache caches[2];
    if (!make_cache(&caches[0], DN_KV_F16, ctx, heads_apart) ||
        !make_cache(&caches[1], DN_KV_INT8, ctx, heads_apart)) {
        printf("  context %zu: out of memory\n", ctx);
        return;
    }
    static float q[QH * D];
    bench_fill(q, QH * D, 77);
    for (int i = 0; i < QH * D; i++) q[i] *= 4.0f;
    context_cases *cc = calloc(1, sizeof *cc);
    if (!cc) return;
    add_ours(cc, caches, q, ctx, quick, pools);
#ifdef DN_BENCH_GGML
    if (!heads_apart) add_ggml(cc, &caches[0], q, ctx, quick); /* its views: llama.cpp's layout */
#endif
    bench_run_group(cc->cs, cc->count);
    bench_bw bw[2] = {bench_read_best(caches[0].k, ctx * KVH * D * 2, 1, quick ? 3 : 7),
                      bench_read_best(caches[0].k, ctx * KVH * D * 2, 2, quick ? 3 : 7)};
    report(cc, ctx, bw);
    for (int i = 0; i < 4; i++) free(cc->runs[i].work);
#ifdef DN_BENCH_GGML
    for (int i = 0; i < 4; i++) ggml_peer_destroy(cc->peers[i]);
    free(cc->q8[0]), free(cc->q8[1]);
#endif
    free(cc);
    free_cache(&caches[0]);
    free_cache(&caches[1]);
}

int main(int argc, char **argv)
{
#ifdef DN_BENCH_GGML
    ggml_peer_quiet_openmp(argv); /* before anything is printed */
#endif
    int quick = 0, rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    static const char *const envs[] = {"DN_BENCH_LAYOUT"};
    bench_print_command("decodenum-bench-attention", argc, argv, envs, 1);
    const char *layout = bench_env_or("DN_BENCH_LAYOUT", "llama");
    int heads_apart = !strcmp(layout, "heads");
    if (!heads_apart && strcmp(layout, "llama")) {
        fprintf(stderr, "DN_BENCH_LAYOUT: llama (the default) or heads, not '%s'\n", layout);
        return 2;
    }
    bench_print_machine(bench_clock_ghz(0.2));
    bench_print_load();
    printf("  one decode token: head size %d, %d query heads over %d KV heads; dn_attend\n", D, QH,
           KVH);
    printf("  cache layout: %s\n", heads_apart ? "[kv_head][position][d] (ggml peer not run)"
                                               : "[position][kv_head][d] (llama.cpp's)");
#ifdef DN_BENCH_GGML
    printf("  peer: ggml_flash_attn_ext on the same f16 K/V and on them as Q8_0, %s\n",
           ggml_peer_build());
#endif
    dn_pool *pools[2] = {NULL, dn_pool_create(2)};
    const size_t ctxs[3] = {512, 4096, 32768};
    for (int i = 0; i < 3; i++) bench_context(ctxs[i], quick, heads_apart, pools);
    dn_pool_destroy(pools[1]);
    return 0;
}
