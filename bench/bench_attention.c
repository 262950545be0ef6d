/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-attention: one decode token's attention, head size 128,
 * 32 query heads over 8 KV heads, contexts 512, 4096 and 32768, on 1 and 2
 * threads: dn_attend on a binary16 cache (the vector path) and on an int8
 * cache (Sub32, one word), beside the read bandwidth of the bytes each
 * reads ([position][kv_head][d] layout, llama.cpp's). Medians of samples
 * taken round-robin; the machine is shared, so quote ratios.
 *
 *   ./bench/decodenum-bench-attention [--quick]
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

/* A cache of `ctx` positions of `type`, filled through dn_cache_append. */
static int make_cache(dn_kv_cache *c, uint32_t type, size_t ctx)
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

static void bench_context(size_t ctx, int quick, dn_pool *pools[2])
{
    dn_kv_cache caches[2];
    if (!make_cache(&caches[0], DN_KV_F16, ctx) || !make_cache(&caches[1], DN_KV_INT8, ctx)) {
        printf("  context %zu: out of memory\n", ctx);
        return;
    }
    float q[QH * D], out[4][QH * D];
    bench_fill(q, QH * D, 77);
    for (int i = 0; i < QH * D; i++) q[i] *= 4.0f;
    run runs[4];
    bench_case cs[4];
    const char *names[4] = {"f16 vector", "f16 vector", "int8", "int8"};
    double bytes[2] = {2.0 * ctx * KVH * D * 2, 2.0 * ctx * KVH * (D + 2)};
    for (int i = 0; i < 4; i++) {
        runs[i] = (run){caches[i / 2],
                        {QH, 0, ctx, 0.08838834764f, DN_ACT_SUB32, DN_WORDS_ONE},
                        q,
                        out[i],
                        NULL,
                        0,
                        pools[i % 2]};
        dn_attend_work_size(&runs[i].cache, &runs[i].params, &runs[i].work_bytes, NULL);
        runs[i].work = malloc(runs[i].work_bytes);
        memset(&cs[i], 0, sizeof cs[i]);
        cs[i].op = names[i];
        cs[i].impl = i % 2 ? "2 threads" : "1 thread";
        cs[i].call = call_attend;
        cs[i].ctx = &runs[i];
        cs[i].bytes = bytes[i / 2];
        cs[i].want = quick ? 5 : 15;
        bench_calibrate(&cs[i], 0.05, quick ? 0.02 : 0.05);
    }
    bench_run_group(cs, 4);
    bench_bw bw[2] = {bench_read_best(caches[0].k, ctx * KVH * D * 2, 1, quick ? 3 : 7),
                      bench_read_best(caches[0].k, ctx * KVH * D * 2, 2, quick ? 3 : 7)};
    printf(
        "\n  context %zu (K+V: f16 %.1f MiB, int8 %.1f MiB); read bandwidth %.1f GB/s (1 thread), "
        "%.1f GB/s (2 threads)\n",
        ctx, bytes[0] / 1048576.0, bytes[1] / 1048576.0, bw[0].med_gbps, bw[1].med_gbps);
    for (int i = 0; i < 4; i++) {
        double gbps = bench_gbps(&cs[i], cs[i].med);
        printf("    %-11s %-9s  %9.3f ms (best %8.3f)  %6.1f GB/s = %.2f of read bandwidth\n",
               cs[i].op, cs[i].impl, cs[i].med * 1e3, cs[i].best * 1e3, gbps,
               gbps / bw[i % 2].med_gbps);
    }
    int same =
        memcmp(out[0], out[1], sizeof out[0]) == 0 && memcmp(out[2], out[3], sizeof out[2]) == 0;
    printf("    1 and 2 threads give the same bits: %s\n", same ? "yes" : "NO");
    for (int i = 0; i < 4; i++) free(runs[i].work);
    free_cache(&caches[0]);
    free_cache(&caches[1]);
}

int main(int argc, char **argv)
{
    int quick = 0, rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    bench_print_command("decodenum-bench-attention", argc, argv, NULL, 0);
    bench_print_machine(bench_clock_ghz(0.2));
    bench_print_load();
    printf("  one decode token: head size %d, %d query heads over %d KV heads; dn_attend\n", D, QH,
           KVH);
    dn_pool *pools[2] = {NULL, dn_pool_create(2)};
    const size_t ctxs[3] = {512, 4096, 32768};
    for (int i = 0; i < 3; i++) bench_context(ctxs[i], quick, pools);
    dn_pool_destroy(pools[1]);
    return 0;
}
