/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-gdn-kernels: the Gated-DeltaNet rows kernel of each ISA's
 * table (AVX2, AVX-512, and AVX-512 with AVX512_BF16 where the CPU has it)
 * through one token of a layer of 32 heads of S = 128, for each store: one
 * layer's state again and again (in cache) and a stack of 36 layers' states
 * one token through each (from memory; the time quoted per layer). Time is
 * the thread's own CPU time (a thread the scheduler parks is not charged),
 * the best and the median of the samples, the variants alternated sample by
 * sample; every variant's state ends equal to the first one's, bit for bit.
 * Then the whole layer (dn_gdn_layer, 16 key heads) on the calling thread
 * and on a 2-thread pool: best wall time of blocks of 10 calls, the two
 * alternated block by block (a block keeps each thread's heads in its
 * cache, as a decode loop does).
 *
 *   ./bench/decodenum-bench-gdn-kernels [--quick]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "decodenum.h"
#include "dispatch.h"
#include "isa.h"

enum { HEADS = 32, S = 128, DEPTH = 36, MAX_VARIANTS = 3, MAX_SAMPLES = 61 };

typedef void (*rows_fn)(void *, dn_gdn_store, size_t, size_t, size_t, const dn_gdn_token *,
                        float *);

typedef struct variant {
    const char *name;
    rows_fn rows;
    void *state[DEPTH];
    double s[MAX_SAMPLES];
} variant;

static float q[S], k[S], v[HEADS * S], out[HEADS * S];

static double thread_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One token through `layers` states of heads of S = 128. */
static void run(const variant *x, dn_gdn_store st, int layers)
{
    size_t head = (size_t)S * S * dn_gdn_store_bytes(st);
    dn_gdn_token t = {q, k, v, 0.95f, 0.5f, 0.0f, 0.0883883f};
    t.kq = dn_fdot(k, q, S);
    for (int l = 0; l < layers; l++)
        for (int h = 0; h < HEADS; h++) {
            t.v = v + h * S;
            x->rows((char *)x->state[l] + h * head, st, S, 0, S, &t, out + h * S);
        }
}

static int variants(variant *x)
{
    int n = 0;
    if (dn_isa_available(DN_ISA_AVX2)) x[n++] = (variant){.name = "avx2", .rows = dn_gdn_avx2.rows};
#if defined(DN_HAVE_AVX512)
    if (dn_isa_available(DN_ISA_AVX512))
        x[n++] = (variant){.name = "avx512", .rows = dn_gdn_avx512.rows};
    if (dn_isa_available(DN_ISA_AVX512) && dn_cpu()->avx512bf16)
        x[n++] = (variant){.name = "avx512 bf16", .rows = dn_gdn_avx512bf16.rows};
#endif
    return n;
}

/* Every variant of one store and depth, alternated; 1 if any state differs. */
static int measure(dn_gdn_store st, int layers, int samples)
{
    static const char *names[3] = {"f32", "bf16", "f16"};
    variant x[MAX_VARIANTS];
    int n = variants(x), bad = 0;
    size_t bytes = (size_t)HEADS * S * S * dn_gdn_store_bytes(st);
    for (int i = 0; i < n; i++)
        for (int l = 0; l < layers; l++) {
            x[i].state[l] = bench_alloc(bytes);
            if (!x[i].state[l]) return 1;
            for (size_t e = 0; e < (size_t)HEADS * S * S; e++) {
                float f = (float)((e * 2654435761u) % 1000) / 20000.0f - 0.025f;
                if (st == DN_GDN_STORE_F32)
                    ((float *)x[i].state[l])[e] = f;
                else
                    ((uint16_t *)x[i].state[l])[e] =
                        st == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(f) : dn_f32_to_f16(f);
            }
        }
    for (int r = 0; r < samples; r++)
        for (int i = 0; i < n; i++) {
            double t0 = thread_s();
            run(&x[i], st, layers);
            x[i].s[r] = (thread_s() - t0) / layers;
        }
    for (int i = 0; i < n; i++) {
        for (int l = 0; l < layers; l++) bad |= memcmp(x[i].state[l], x[0].state[l], bytes) != 0;
        qsort(x[i].s, (size_t)samples, sizeof(double), cmp_double);
        printf("%-5s %-6s %-12s %8.1f %8.1f %7.2fx\n", names[st], layers > 1 ? "deep" : "cache",
               x[i].name, x[i].s[0] * 1e6, x[i].s[samples / 2] * 1e6, x[0].s[0] / x[i].s[0]);
    }
    for (int i = 0; i < n; i++)
        for (int l = 0; l < layers; l++) free(x[i].state[l]);
    return bad;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* dn_gdn_layer on 1 and 2 threads, one store, best wall time per call. */
static void layer_threads(dn_gdn_store st, dn_pool *pool, int rounds)
{
    static const char *names[3] = {"f32", "bf16", "f16"};
    enum { KH = 16 };
    static float lq[KH * S], lk[KH * S], g[HEADS], beta[HEADS];
    dn_gdn_shape shape = {HEADS, KH, S, S, (uint32_t)st};
    void *state = bench_alloc((size_t)HEADS * S * S * dn_gdn_store_bytes(st));
    if (!state) return;
    memset(state, 0, (size_t)HEADS * S * S * dn_gdn_store_bytes(st));
    for (int i = 0; i < KH * S; i++) lq[i] = q[i % S] * 0.1f, lk[i] = k[i % S] * 0.1f;
    for (int h = 0; h < HEADS; h++) g[h] = -0.05f, beta[h] = 0.5f;
    double best[2] = {1, 1};
    for (int r = 0; r < rounds; r++)
        for (int m = 0; m < 2; m++)
            for (int rep = 0; rep < 10; rep++) {
                double t0 = wall_s();
                dn_gdn_layer(state, &shape, 1, lq, lk, v, g, beta, 0.0883883f, out,
                             m ? pool : NULL);
                double d = wall_s() - t0;
                if (d < best[m]) best[m] = d;
            }
    printf("%-5s layer  1 thread %8.1f us, 2 threads %8.1f us: %.2fx\n", names[st], best[0] * 1e6,
           best[1] * 1e6, best[0] / best[1]);
    free(state);
}

static void usage(const char *argv0) { printf("usage: %s [--quick]\n", argv0); }

int main(int argc, char **argv)
{
    int quick = 0, rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    bench_print_command("decodenum-bench-gdn-kernels: rows of 32 heads x S=128, per ISA", argc,
                        argv, NULL, 0);
    bench_print_load();
    for (int i = 0; i < S; i++)
        q[i] = (float)(i * 37 % 17 - 8) / 50.0f, k[i] = (float)(i * 29 % 13 - 6) / 40.0f;
    for (int i = 0; i < HEADS * S; i++) v[i] = (float)(i * 7 % 11 - 5) / 10.0f;
    printf("%-5s %-6s %-12s %8s %8s %8s\n", "store", "state", "kernel", "best us", "median",
           "speed");
    int bad = 0;
    for (int st = 0; st < 3; st++) {
        bad |= measure((dn_gdn_store)st, 1, quick ? 21 : MAX_SAMPLES);
        bad |= measure((dn_gdn_store)st, DEPTH, quick ? 5 : 15);
    }
    dn_pool *pool = dn_pool_create(2);
    for (int st = 0; st < 3 && pool; st++) layer_threads((dn_gdn_store)st, pool, quick ? 30 : 100);
    dn_pool_destroy(pool);
    printf(
        "times: CPU time per layer (32 heads); speed: the first kernel's best over this one's%s\n",
        bad ? "\nSTATES DIFFER" : "");
    return bad;
}
