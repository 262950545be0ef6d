/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-attention-kernels: the attention module's four kernels on
 * one group (4 query heads of 128 sharing a KV head), called through each
 * ISA's table: over 2048 rows kept together (a per-KV-head cache; the rows
 * in L2, so the kernels' own rate), and over 4096 and 32768 rows 1024
 * elements apart (8 KV heads of 128 in one position's row, llama.cpp's
 * layout: 2 KiB for binary16 rows, 1 KiB for int8 ones), with the rows
 * starting on a cache line and 16 bytes past one (where malloc puts a large
 * block). Time is the thread's own CPU time (a thread the scheduler parks is
 * not charged), median of the samples, the ISAs alternated sample by sample,
 * and the last ISA's cycles a row at the clock the bench measures and its
 * rate over the measured peak of the instruction its arithmetic needs
 * (bench_peak); every ISA's outputs are checked equal to the first one's,
 * bit for bit.
 *
 *   ./bench/decodenum-bench-attention-kernels [--quick]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attention_kernels.h"
#include "common.h"
#include "decodenum.h"
#include "dispatch.h"

enum { D = 128, G = 4, KVH = 8, STRIDE = KVH * D, KERNELS = 4, MAX_ISAS = 4, MAX_SAMPLES = 41 };

static const char *const kernel_names[KERNELS] = {"scores f16", "weighted f16", "scores int8",
                                                  "weighted int8"};

typedef struct data {
    size_t n, stride;  /* rows, and the elements from one row to the next */
    char *base[4];     /* the four row buffers as allocated */
    void *k16, *v16;   /* binary16 rows */
    int8_t *k8, *v8;   /* int8 rows */
    uint16_t *ks, *vs; /* their scales, one per position and KV head */
    float q[G * D], *p, *out;
    int16_t codes[G * D];
    dn_act_scale qs[G * D / 32];
    dn_act_row rows[G];
} data;

static double thread_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fill(data *x, size_t n, size_t stride, size_t offset)
{
    uint32_t s = 12345;
    x->n = n, x->stride = stride;
    char **base = x->base;
    for (int i = 0; i < 4; i++) base[i] = bench_alloc(n * STRIDE * 2 + 64);
    x->ks = malloc(n * KVH * 2), x->vs = malloc(n * KVH * 2);
    x->p = malloc(G * n * 4), x->out = malloc(G * (n > D ? n : D) * 4);
    if (!base[0] || !base[1] || !base[2] || !base[3] || !x->ks || !x->vs || !x->p || !x->out)
        return -1;
    x->k16 = base[0] + offset, x->v16 = base[1] + offset;
    x->k8 = (int8_t *)(base[2] + offset), x->v8 = (int8_t *)(base[3] + offset);
    for (size_t i = 0; i < n * STRIDE; i++) {
        ((uint16_t *)x->k16)[i] = (uint16_t)(0x3000 + (bench_lcg(&s) >> 20));
        ((uint16_t *)x->v16)[i] = (uint16_t)(0x3000 + (bench_lcg(&s) >> 20));
        x->k8[i] = (int8_t)(bench_lcg(&s) >> 24), x->v8[i] = (int8_t)(bench_lcg(&s) >> 24);
    }
    for (size_t i = 0; i < n * KVH; i++) x->ks[i] = x->vs[i] = (uint16_t)(0x2000 + i % 500);
    bench_fill(x->q, G * D, 7u);
    for (int g = 0; g < G; g++) {
        x->rows[g] = (dn_act_row){x->codes + g * D, x->qs + g * D / 32, D, 0, DN_WORDS_ONE};
        if (dn_quantize_head(x->q + g * D, D, DN_ACT_SUB32, DN_WORDS_ONE, &x->rows[g], NULL))
            return -1;
    }
    for (size_t i = 0; i < G * n; i++) x->p[i] = 1.0f / (float)n;
    return 0;
}

static void free_data(data *x)
{
    for (int i = 0; i < 4; i++) free(x->base[i]);
    free(x->ks), free(x->vs), free(x->p), free(x->out);
}

/* One call of kernel `which`; the bytes of its output. */
static size_t call(const dn_attention_kernels *a, int which, data *x)
{
    size_t n = x->n, st = x->stride, ss = st / D; /* scales: one per row of the stride */
    switch (which) {
    case 0: a->scores(DN_KV_F16, x->q, G, D, x->k16, st, n, 0.088f, x->out); return G * n * 4;
    case 1: a->weighted(DN_KV_F16, x->p, G, n, x->v16, st, D, x->out); return G * D * 4;
    case 2:
        a->scores_int8(x->rows, G, D, x->k8, st, x->ks, ss, n, 0.088f, x->out);
        return G * n * 4;
    default: a->weighted_int8(x->p, G, n, x->v8, st, x->vs, ss, D, x->out); return G * D * 4;
    }
}

/* The instruction whose measured peak (bench_peak) caps kernel `which` of
   table a, and how many of the peak's operations a row takes: the f16
   kernels' 4 x 128 products and adds (flops; the contract rounds each
   product, so no FMA), the int8 ones' 4 x 128 multiply-adds (vpdpwssd in the
   scores, vpdpbusd in the weighted sum). BENCH_PEAK_KINDS where unknown. */
static bench_peak_kind peak_of(dn_isa isa, int which, double *ops)
{
    *ops = which < 2 ? 2.0 * G * D : (double)G * D;
    if (isa == DN_ISA_AVX2 && which < 2) return BENCH_PEAK_MULADD_YMM;
    if (isa != DN_ISA_AVX512) return BENCH_PEAK_KINDS;
    if (which < 2) return BENCH_PEAK_MULADD_ZMM;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512vnni")) /* the VNNI table's int8 kernels */
        return which == 2 ? BENCH_PEAK_INT16_ZMM : BENCH_PEAK_INT8_ZMM;
#endif
    return BENCH_PEAK_KINDS;
}

static void run(data *x, const dn_isa *isas, int count, int samples, const char *place, double ghz)
{
    double t[MAX_ISAS][MAX_SAMPLES];
    char *first = malloc(G * (x->n > D ? x->n : D) * 4);
    for (int w = 0; w < KERNELS && first; w++) {
        int same = 1;
        for (int s = 0; s < samples; s++)
            for (int i = 0; i < count; i++) {
                const dn_attention_kernels *a = dn_kernels_for(isas[i])->attention;
                double t0 = thread_s();
                size_t bytes = call(a, w, x);
                t[i][s] = thread_s() - t0;
                if (s == 0 && i == 0) memcpy(first, x->out, bytes);
                if (s == 0 && i > 0) same &= memcmp(first, x->out, bytes) == 0;
            }
        printf("  %-6zu %-14s %-13s", x->n, place, kernel_names[w]);
        for (int i = 0; i < count; i++) printf(" %8.3f ms", median(t[i], samples) * 1e3);
        double last = median(t[count - 1], samples), ops;
        bench_peak_kind pk = peak_of(isas[count - 1], w, &ops);
        double peak = bench_peak(pk);
        printf("  %7.1f", last * ghz * 1e9 / (double)x->n);
        if (peak > 0)
            printf("  %5.2f", ops * (double)x->n / last / peak);
        else
            printf("  %5s", "-");
        if (count > 1) printf("  %.2fx", median(t[0], samples) / last);
        printf("  bits %s\n", same ? "equal" : "DIFFER");
    }
    free(first);
}

static void usage(const char *argv0)
{
    printf("usage: %s [--quick]\n"
           "  the attention kernels per ISA on one group of 4 heads of 128 over rows kept\n"
           "  together and rows 1 KiB apart, 64-byte aligned and 16 bytes past a line;\n"
           "  thread CPU time, medians; cycles a row and the fraction of the measured\n"
           "  instruction peak for the last ISA\n",
           argv0);
}

int main(int argc, char **argv)
{
    int quick = 0;
    int rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    bench_print_command("decodenum-bench-attention-kernels", argc, argv, NULL, 0);
    double ghz = bench_clock_ghz(0.05);
    bench_print_machine(ghz);
    static const dn_isa all[] = {DN_ISA_AVX2, DN_ISA_NEON, DN_ISA_AVX512};
    dn_isa isas[MAX_ISAS];
    int count = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (dn_kernels_for(all[i])) isas[count++] = all[i];
    if (!count) isas[count++] = DN_ISA_SCALAR;
    printf("\n  n      rows           kernel       ");
    for (int i = 0; i < count; i++) printf(" %11s", dn_isa_name(isas[i]));
    printf("  cyc/row  /peak%s\n", count > 1 ? "  first/last" : "");
    static const struct {
        size_t n, stride, offset;
        const char *place;
    } cases[] = {{2048, D, 0, "together"},
                 {4096, STRIDE, 0, "line-aligned"},
                 {4096, STRIDE, 16, "16 past a line"},
                 {32768, STRIDE, 0, "line-aligned"},
                 {32768, STRIDE, 16, "16 past a line"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        data x;
        memset(&x, 0, sizeof x);
        int ok = fill(&x, cases[c].n, cases[c].stride, cases[c].offset) == 0;
        if (ok) run(&x, isas, count, quick ? 7 : 21, cases[c].place, ghz);
        free_data(&x);
        if (!ok) {
            fprintf(stderr, "decodenum-bench-attention-kernels: out of memory\n");
            return 1;
        }
    }
    printf("\n  cyc/row: the last ISA's cycles a row at the measured clock; /peak: its rate\n"
           "  over the measured peak of the instruction that caps it on one thread:\n");
    for (int w = 0; w < KERNELS; w++) {
        double ops;
        bench_peak_kind pk = peak_of(isas[count - 1], w, &ops);
        if (bench_peak(pk) > 0)
            printf("  %-13s %s, %.0f operations a row, peak %.1f G/s\n", kernel_names[w],
                   bench_peak_name(pk), ops, bench_peak(pk) * 1e-9);
    }
    bench_print_load();
    return 0;
}
