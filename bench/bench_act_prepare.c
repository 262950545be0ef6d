/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-act-prepare: what preparing an activation costs, per
 * column, for every format (dn_act_prepare) and for the formats a model
 * uses (dn_act_prepare_for), against the quantization alone (dn_quantize,
 * dn_quantize_blocks): one column of n = 2048, 5632, 16384 (a hidden size,
 * an FFN size, a large FFN), both scalings, one word.
 *
 *   decodenum-bench-act-prepare [--quick]
 *
 * Each figure is the thread's CPU time of one call, the minimum over many
 * rounds in which the variants alternate (the machine may be loaded: the
 * minimum is the call undisturbed). Before timing, every product of the
 * named formats with a prepare_for activation is checked equal, bit for
 * bit, to the same product with dn_act_prepare's (a 16-row matrix).
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "decodenum.h"

static double thread_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { V_QUANT, V_ALL, V_K, V_Q8, NV };
static const char *const names[NV] = {"quantize", "prepare (all)", "prepare_for {Q4_K,Q6_K}",
                                      "prepare_for {Q8_0}"};
static const dn_type k_types[2] = {DN_TYPE_Q4_K, DN_TYPE_Q6_K};
static const dn_type q8_types[1] = {DN_TYPE_Q8_0};

typedef struct job {
    const float *x;
    size_t n;
    dn_act_scaling scaling;
    void *mem;
    size_t bytes;
    int16_t *codes;
    dn_act_scale *scales;
} job;

static void fail(const char *what, dn_status st)
{
    fprintf(stderr, "%s: %s\n", what, dn_status_str(st));
    exit(1);
}

static void run(const job *j, int v)
{
    dn_act *act = NULL;
    dn_status st = DN_OK;
    if (v == V_QUANT) {
        dn_act_row row = {j->codes, j->scales, j->n, 0, DN_WORDS_ONE};
        st = j->scaling == DN_ACT_SUB32
                 ? dn_quantize(j->x, j->n, DN_WORDS_ONE, &row, NULL)
                 : dn_quantize_blocks(j->x, j->n, 256, DN_WORDS_ONE, &row, NULL);
    } else if (v == V_ALL)
        st = dn_act_prepare(j->x, j->n, 1, j->scaling, DN_WORDS_ONE, j->mem, j->bytes, &act, NULL);
    else
        st = dn_act_prepare_for(j->x, j->n, 1, j->scaling, DN_WORDS_ONE,
                                v == V_K ? k_types : q8_types, v == V_K ? 2 : 1, j->mem, j->bytes,
                                &act, NULL);
    if (st != DN_OK) fail(names[v], st);
}

/* The named formats' products from prepare_for equal dn_act_prepare's. */
static int same_bits(const job *j, const dn_type *ts, size_t count)
{
    const size_t rows = 16;
    uint8_t *w = bench_alloc(rows * j->n / 32 * 34 + 64);
    float a[16], b[16];
    dn_act *all = NULL, *some = NULL;
    void *mem2 = bench_alloc(j->bytes);
    int ok = 1;
    uint32_t s = 5;
    for (size_t i = 0; i < rows * j->n / 32 * 34; i++) w[i] = (uint8_t)bench_lcg(&s);
    if (dn_act_prepare(j->x, j->n, 1, j->scaling, DN_WORDS_ONE, j->mem, j->bytes, &all, NULL) ||
        dn_act_prepare_for(j->x, j->n, 1, j->scaling, DN_WORDS_ONE, ts, count, mem2, j->bytes,
                           &some, NULL))
        ok = 0;
    for (size_t i = 0; ok && i < count; i++) {
        const size_t bb = dn_type_block_bytes(ts[i]), be = dn_type_block_elements(ts[i]);
        for (size_t k = 0; k < rows * j->n / be; k++) { /* scales 2^-8: readable */
            memcpy(w + k * bb + (ts[i] == DN_TYPE_Q6_K ? bb - 2 : 0), "\x00\x1c", 2);
            if (ts[i] == DN_TYPE_Q4_K) memcpy(w + k * bb + 2, "\x00\x1c", 2); /* dmin */
        }
        dn_status s1 = dn_act_mat_vec(all, 0, ts[i], w, rows, a, NULL, NULL);
        dn_status s2 = dn_act_mat_vec(some, 0, ts[i], w, rows, b, NULL, NULL);
        ok &= s1 == DN_OK && s2 == DN_OK && !memcmp(a, b, sizeof a);
    }
    free(w);
    free(mem2);
    return ok;
}

static void usage(const char *argv0)
{
    printf("usage: %s [--quick]\n"
           "  the CPU time of dn_act_prepare and dn_act_prepare_for (one column)\n",
           argv0);
}

int main(int argc, char **argv)
{
    int quick = 0, rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    static const char *const envs[] = {"DECODENUM_ISA"};
    bench_print_command("decodenum-bench-act-prepare", argc, argv, envs, 1);
    bench_print_machine(0);
    bench_print_load();
    static const size_t ns[3] = {2048, 5632, 16384};
    const int rounds = quick ? 200 : 2000;
    int ok = 1;
    printf("one column, one word; thread CPU time per call, the minimum of %d rounds (us)\n",
           rounds);
    for (int sc = 0; sc < 2; sc++) {
        const dn_act_scaling scaling = sc ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
        printf("%s\n%8s", sc ? "per block" : "Sub32", "n");
        for (int v = 0; v < NV; v++) printf(" %24s", names[v]);
        printf("  {Q4_K,Q6_K}/all\n");
        for (int k = 0; k < 3; k++) {
            job j = {0};
            j.n = ns[k], j.scaling = scaling;
            float *x = bench_alloc(j.n * sizeof *x);
            bench_fill(x, j.n, 11);
            j.x = x;
            if (dn_act_size(j.n, 1, scaling, DN_WORDS_ONE, &j.bytes)) return 1;
            j.mem = bench_alloc(j.bytes);
            j.codes = bench_alloc(j.n * sizeof *j.codes);
            j.scales = bench_alloc(j.n / 32 * sizeof *j.scales);
            ok &= same_bits(&j, k_types, 2) && same_bits(&j, q8_types, 1);
            double best[NV];
            for (int v = 0; v < NV; v++) best[v] = 1e9;
            for (int r = 0; r < rounds; r++)
                for (int v = 0; v < NV; v++) {
                    double t0 = thread_s();
                    run(&j, v);
                    double t = thread_s() - t0;
                    if (t < best[v]) best[v] = t;
                }
            printf("%8zu", j.n);
            for (int v = 0; v < NV; v++) printf(" %24.2f", best[v] * 1e6);
            printf("  %.2f\n", best[V_K] / best[V_ALL]);
            free(x), free(j.mem), free(j.codes), free(j.scales);
        }
    }
    bench_print_load();
    printf("%s\n", ok ? "bits: the named formats' products equal dn_act_prepare's" : "BITS DIFFER");
    return ok ? 0 : 1;
}
