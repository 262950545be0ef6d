/* SPDX-License-Identifier: MIT */
/*
 * The Gated-DeltaNet module's kernels held to their references, every
 * output's bits: the rows (gdn_row over a head's rows), the flush, the fold
 * (trailing included), the read and the convolution, over row lengths 1..40,
 * S = 16, 32, 64, 128, 256 and the odd sizes around them, every store, states
 * drawn from every input regime (denormals, infinities and NaNs included) and
 * finite tokens, as the public functions pass them.
 */
#include "check.h"
#include "dispatch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS, FLUSH, FOLD, READ, CONV, COUNT };
static const char *const names[COUNT] = {"rows", "flush_rows", "fold", "read_rows", "conv"};

#define MAX_DK 257
#define MAX_DV 40
#define MAX_LOG 12
#define MAX_CH 8200

static const size_t sizes[] = {1,  2,  3,  5,  7,  8,  9,  15, 16,  17,  23,  31,  32,  33,
                               40, 47, 63, 64, 65, 95, 96, 97, 127, 128, 129, 255, 256, 257};

typedef struct bufs {
    float q[MAX_DK], k[MAX_LOG][MAX_DK], v[MAX_LOG][MAX_DV];
    float y[4][MAX_DK], c[4][MAX_DV], out[2][MAX_DV];
    uint32_t state[2][MAX_DV * MAX_DK];
    dn_gdn_logged log[MAX_LOG];
    float ring[7 * MAX_CH], kernel[8 * MAX_CH], x[MAX_CH], cy[2][MAX_CH];
} bufs;

static void cmp(dn_check_result *res, const void *a, const void *b, size_t bytes, size_t dk)
{
    if (memcmp(a, b, bytes) != 0)
        dn_check_mismatch(
            res, "%s dk=%zu: outputs differ (first word 0x%08" PRIx32 " / 0x%08" PRIx32 ")",
            res->kernel, dk, *(const uint32_t *)a, *(const uint32_t *)b);
    res->compared += bytes / 4 ? bytes / 4 : 1;
}

/* Finite values of a regime (a non-finite draw becomes 0.5). */
static void fill_finite(dn_rng *r, float *x, size_t n)
{
    static const dn_regime finite[] = {DN_REGIME_NORMAL, DN_REGIME_NORMAL, DN_REGIME_TINY,
                                       DN_REGIME_ZEROS,  DN_REGIME_CANCEL, DN_REGIME_SPECIAL};
    dn_fill_f32(r, finite[dn_rng_below(r, 6)], x, n);
    for (size_t i = 0; i < n; i++)
        if ((dn_bits(x[i]) & DN_EXP_BITS) == DN_EXP_BITS) x[i] = 0.5f;
}

/* A state of n elements: any regime, or any bits for the two-byte stores. */
static void fill_state(dn_rng *r, dn_gdn_store store, uint32_t *s, size_t n)
{
    if (store == DN_GDN_STORE_F32) {
        dn_fill_f32(r, (dn_regime)dn_rng_below(r, DN_REGIME_COUNT), (float *)s, n);
        return;
    }
    if (dn_rng_below(r, 2)) {
        dn_fill_u16(r, (uint16_t *)s, n);
        return;
    }
    float tmp[64];
    for (size_t i = 0; i < n; i += 64) {
        size_t m = n - i < 64 ? n - i : 64;
        dn_fill_f32(r, (dn_regime)dn_rng_below(r, DN_REGIME_COUNT), tmp, m);
        for (size_t e = 0; e < m; e++)
            ((uint16_t *)s)[i + e] =
                store == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(tmp[e]) : dn_f32_to_f16(tmp[e]);
    }
}

/* A log of n tokens with decays in (0, 1] (or 0 and 1 exactly, sometimes). */
static void fill_log(dn_rng *r, bufs *b, size_t n, size_t dk, size_t dv)
{
    for (size_t t = 0; t < n; t++) {
        fill_finite(r, b->k[t], dk);
        fill_finite(r, b->v[t], dv);
        float gb[2];
        dn_fill_f32(r, DN_REGIME_NORMAL, gb, 2);
        float g = -(gb[0] < 0 ? -gb[0] : gb[0]) * 0x1p-10f;
        float beta = gb[1] < 0 ? -gb[1] * 0x1p-12f : gb[1] * 0x1p-12f;
        b->log[t] = (dn_gdn_logged){b->k[t], b->v[t], g, dn_exp(g), beta};
    }
}

/* Rows of ones, decay 1, beta 1, k of half and three halves of the store's
   unit in the last place at 1, and v = row . k + 1: every new element is
   1 + k_i exactly, a tie of the store's rounding. */
static void fill_ties(bufs *b, dn_gdn_store st, size_t dk, size_t dv)
{
    float half = st == DN_GDN_STORE_F32 ? 0x1p-24f : st == DN_GDN_STORE_BF16 ? 0x1p-8f : 0x1p-11f;
    for (size_t e = 0; e < dv * dk; e++) {
        if (st == DN_GDN_STORE_F32)
            b->state[0][e] = 0x3F800000u;
        else
            ((uint16_t *)b->state[0])[e] = st == DN_GDN_STORE_BF16 ? 0x3F80 : 0x3C00;
    }
    for (size_t i = 0; i < dk; i++) b->k[0][i] = (float)(1 + 2 * (i % 2)) * half;
    float ones[MAX_DK];
    for (size_t i = 0; i < dk; i++) ones[i] = 1.0f;
    float rk = dn_fdot(ones, b->k[0], dk);
    for (size_t j = 0; j < dv; j++) b->v[0][j] = dn_fadd(rk, 1.0f);
    b->log[0] = (dn_gdn_logged){b->k[0], b->v[0], 0.0f, 1.0f, 1.0f};
}

static void run_rows(const dn_gdn_kernels *kern, bufs *b, dn_gdn_store st, size_t dk, size_t dv,
                     dn_rng *r, dn_check_result *res)
{
    size_t bytes = dv * dk * dn_gdn_store_bytes(st), r0 = (size_t)dn_rng_below(r, dv);
    if (dn_rng_below(r, 4) == 0) {
        fill_ties(b, st, dk, dv);
    } else {
        fill_state(r, st, b->state[0], dv * dk);
        fill_log(r, b, 1, dk, dv);
    }
    memcpy(b->state[1], b->state[0], bytes);
    fill_finite(r, b->q, dk);
    float kq = dn_fdot(b->k[0], b->q, dk);
    dn_gdn_token t = {b->q, b->k[0], b->v[0], b->log[0].decay, b->log[0].beta, kq, 0.0883883f};
    dn_gdn_scalar.rows(b->state[0], st, dk, r0, dv, &t, b->out[0]);
    kern->rows(b->state[1], st, dk, r0, dv, &t, b->out[1]);
    cmp(res, b->state[0], b->state[1], bytes, dk);
    cmp(res, b->out[0] + r0, b->out[1] + r0, (dv - r0) * 4, dk);
}

static void run_flush_read(const dn_gdn_kernels *kern, int which, bufs *b, dn_gdn_store st,
                           size_t dk, size_t dv, dn_rng *r, dn_check_result *res)
{
    size_t bytes = dv * dk * dn_gdn_store_bytes(st), r0 = (size_t)dn_rng_below(r, dv);
    size_t n = (size_t)dn_rng_below(r, MAX_LOG + 1);
    fill_state(r, st, b->state[0], dv * dk);
    memcpy(b->state[1], b->state[0], bytes);
    fill_log(r, b, n, dk, dv);
    if (which == FLUSH) {
        dn_gdn_scalar.flush_rows(b->state[0], st, dk, r0, dv, b->log, n);
        kern->flush_rows(b->state[1], st, dk, r0, dv, b->log, n);
        cmp(res, b->state[0], b->state[1], bytes, dk);
        return;
    }
    if (which == READ) {
        fill_finite(r, b->q, dk);
        fill_finite(r, b->c[0], dv);
        dn_gdn_scalar.read_rows(b->state[0], st, dk, r0, dv, b->q, b->c[0], 0.125f, b->out[0]);
        kern->read_rows(b->state[1], st, dk, r0, dv, b->q, b->c[0], 0.125f, b->out[1]);
        cmp(res, b->out[0] + r0, b->out[1] + r0, (dv - r0) * 4, dk);
        return;
    }
    size_t older = (size_t)dn_rng_below(r, n + 1);
    fill_finite(r, b->q, dk);
    dn_gdn_scalar.fold(b->log, n, older, b->q, dk, dv, b->y[0], b->c[0], b->y[1], b->c[1]);
    kern->fold(b->log, n, older, b->q, dk, dv, b->y[2], b->c[2], b->y[3], b->c[3]);
    cmp(res, b->y[0], b->y[2], dk * 4, dk);
    cmp(res, b->c[0], b->c[2], dv * 4, dk);
    cmp(res, b->y[1], b->y[3], dk * 4, dk);
    cmp(res, b->c[1], b->c[3], dv * 4, dk);
}

static void run_conv(const dn_gdn_kernels *kern, bufs *b, size_t channels, size_t taps, dn_rng *r,
                     dn_check_result *res)
{
    uint32_t head = taps > 1 ? (uint32_t)dn_rng_below(r, taps - 1) : 0;
    dn_fill_f32(r, (dn_regime)dn_rng_below(r, DN_REGIME_COUNT), b->ring, (taps - 1) * channels);
    dn_fill_f32(r, (dn_regime)dn_rng_below(r, DN_REGIME_COUNT), b->kernel, taps * channels);
    fill_finite(r, b->x, channels);
    dn_gdn_scalar.conv(b->ring, head, channels, taps, b->kernel, b->x, b->cy[0]);
    kern->conv(b->ring, head, channels, taps, b->kernel, b->x, b->cy[1]);
    cmp(res, b->cy[0], b->cy[1], channels * 4, channels);
}

static void run_kernel(const dn_gdn_kernels *kern, int which, bufs *b, dn_rng *r,
                       dn_check_result *res)
{
    if (which == CONV) {
        for (size_t taps = 1; taps <= 8; taps++) {
            for (size_t ch = 0; ch <= 70; ch++) run_conv(kern, b, ch, taps, r, res);
            run_conv(kern, b, 127 + 2 * (size_t)dn_rng_below(r, 64), taps, r, res);
        }
        run_conv(kern, b, 8192, 4, r, res);
        run_conv(kern, b, 8191, 4, r, res);
        return;
    }
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int st = 0; st < 3; st++)
            for (int rep = 0; rep < (sizes[i] == 128 ? 40 : 4); rep++) {
                size_t dv = 1 + (size_t)dn_rng_below(r, MAX_DV);
                if (which == ROWS)
                    run_rows(kern, b, (dn_gdn_store)st, sizes[i], dv, r, res);
                else
                    run_flush_read(kern, which, b, (dn_gdn_store)st, sizes[i], dv, r, res);
            }
}

int dn_check_gdn(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    bufs *b = malloc(sizeof *b);
    if (!b) return 1;
    int failed = 0;
    for (int which = 0; which < COUNT; which++) {
        dn_check_result res = {"gdn", names[which], isa, 0, 0, ""};
        dn_rng r = {plan->seed * 37 + (uint64_t)which};
        run_kernel(ks->gdn, which, b, &r, &res);
        if (res.mismatched) failed++;
        if (sink) sink(&res, ctx);
    }
#if defined(DN_HAVE_AVX512)
    /* Where the CPU has AVX512_BF16 the rows registered are its own: the
       plain AVX-512 rows are held to the references here too. */
    if (isa == DN_ISA_AVX512 && ks->gdn->rows != dn_gdn_avx512.rows) {
        dn_gdn_kernels plain = *ks->gdn;
        plain.rows = dn_gdn_avx512.rows;
        dn_check_result res = {"gdn", "rows (no BF16)", isa, 0, 0, ""};
        dn_rng r = {plan->seed * 37 + COUNT};
        run_kernel(&plain, ROWS, b, &r, &res);
        if (res.mismatched) failed++;
        if (sink) sink(&res, ctx);
    }
#endif
    free(b);
    return failed;
}
