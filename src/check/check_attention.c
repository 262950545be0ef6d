/* SPDX-License-Identifier: MIT */
/*
 * The attention module's kernels held to their references, every output's
 * bits: scores and weighted sums over f32, binary16 and bfloat16 rows; int8
 * scores (both scalings, both word counts, queries whose block exponents
 * spread past the kernels' fast plan) and int8 weighted sums. Positions are
 * the plan's lengths (0..300 and random ones, capped at 3000), head sizes
 * cycle through 1, 31, 32, 64, 80, 96, 128, 256 and random ones, groups of
 * 1, 2, 4 or 8 heads, rows at strides longer than a row. Rows are Gaussian-
 * like, every-bit random (NaN, infinities, denormals), all equal, all zero,
 * or large enough that scores overflow exp. Besides, the int8 kernels meet
 * blocks whose integer sums reach their bounds (run_saturated), and the
 * weighted sums value rows 40 MiB apart (run_far_weighted).
 */
#include "attention_kernels.h"
#include "check.h"
#include "dispatch.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 3000
#define MAX_D 256
#define MAX_G 8
#define MAX_STRIDE (MAX_D + 8)

static const size_t head_sizes[] = {1, 31, 32, 64, 80, 96, 128, 256};
static const size_t groups[] = {1, 2, 4, 8};

enum { SCORES, WEIGHTED, SCORES_INT8, WEIGHTED_INT8, COUNT };
static const char *const names[COUNT] = {"scores", "weighted", "scores_int8", "weighted_int8"};
/* the int8 kernels of the AVX-512 table without VNNI ("nv"), checked
   beside the table a VNNI CPU runs (the other two kernels are shared) */
static const char *const names_no_vnni[COUNT] = {"", "", "scores_int8 nv", "weighted_int8 nv"};

enum { ROWS_NORMAL, ROWS_BITS, ROWS_EQUAL, ROWS_ZERO, ROWS_LARGE, ROWS_MODES };
#define ROWS_SATURATED ROWS_MODES /* the mode run_saturated's mismatches name */

typedef struct bufs {
    void *rows;       /* MAX_N * MAX_STRIDE elements of 4 bytes */
    uint16_t *scales; /* MAX_N * 2 */
    float *q, *p, *ref, *got;
    int16_t *codes;
    dn_act_scale *qs;
} bufs;

typedef struct shape {
    size_t n, d, g, stride;
    uint32_t type;
    int mode;
} shape;

static void cmp(dn_check_result *res, const shape *s, const float *a, const float *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (dn_bits(a[i]) != dn_bits(b[i]))
            dn_check_mismatch(res,
                              "%s type=%u n=%zu d=%zu g=%zu mode=%d i=%zu: reference 0x%08" PRIx32
                              ", kernel 0x%08" PRIx32,
                              res->kernel, (unsigned)s->type, s->n, s->d, s->g, s->mode, i,
                              dn_bits(a[i]), dn_bits(b[i]));
    res->compared += count;
}

/* Binary16 (or bfloat16) of a moderate value, or any bits. */
static uint16_t half_of(dn_rng *r, uint32_t type, int any)
{
    uint64_t z = dn_rng_next(r);
    if (any) return (uint16_t)z;
    float x = (float)((int64_t)(z >> 40) - (1 << 23)) / (float)(1 << 22);
    return type == DN_KV_BF16 ? dn_f32_to_bf16(x) : dn_f32_to_f16(x);
}

/* An int8 row's scale: typical, every-bit random, or (1 in 64) infinite,
   which random bits almost never give (the scores' NaN rule). */
static uint16_t int8_scale(dn_rng *r)
{
    uint64_t k = dn_rng_below(r, 64);
    if (k == 0) return (uint16_t)(0x7C00u | (dn_rng_next(r) & 1u) << 15);
    return k % 8 ? half_of(r, DN_KV_F16, 0) & 0x7FFF : half_of(r, DN_KV_F16, 1);
}

/* n rows of d elements at `stride` (the gap filled with NaN bits). */
static void fill_rows(dn_rng *r, const shape *s, void *rows)
{
    size_t es = s->type == DN_KV_F32 ? 4 : s->type == DN_KV_INT8 ? 1 : 2;
    memset(rows, 0xFF, s->n * s->stride * es);
    for (size_t j = 0; j < s->n; j++) {
        size_t src = s->mode == ROWS_EQUAL && j ? 0 : j;
        if (src != j) {
            memcpy((char *)rows + j * s->stride * es, rows, s->d * es);
            continue;
        }
        char *row = (char *)rows + j * s->stride * es;
        if (s->mode == ROWS_ZERO) {
            memset(row, 0, s->d * es);
            continue;
        }
        if (s->type == DN_KV_F32) {
            dn_regime rg = s->mode == ROWS_BITS ? DN_REGIME_BITS : DN_REGIME_NORMAL;
            dn_fill_f32(r, rg, (float *)row, s->d);
            if (s->mode == ROWS_LARGE)
                for (size_t i = 0; i < s->d; i++) ((float *)row)[i] *= 0x1p40f;
        } else if (s->type == DN_KV_INT8) {
            for (size_t i = 0; i < s->d; i++) ((int8_t *)row)[i] = (int8_t)dn_rng_next(r);
        } else {
            for (size_t i = 0; i < s->d; i++) {
                uint16_t h = half_of(r, s->type, s->mode == ROWS_BITS);
                if (s->mode == ROWS_LARGE)
                    h = (uint16_t)(h | (s->type == DN_KV_BF16 ? 0x4C00 : 0x7000));
                ((uint16_t *)row)[i] = h;
            }
        }
    }
}

/* Probabilities: a softmax of random scores, one-hot, or raw values (NaN,
   negative, denormal). */
static void fill_p(dn_rng *r, float *p, size_t count)
{
    uint64_t how = dn_rng_below(r, 4);
    if (how == 0) {
        dn_fill_f32(r, (dn_regime)dn_rng_below(r, DN_REGIME_COUNT), p, count);
        return;
    }
    for (size_t i = 0; i < count; i++)
        p[i] = how == 1 ? (float)(dn_rng_below(r, 1000)) / 64.0f : 0.0f;
    if (how == 3 && count) p[dn_rng_below(r, count)] = 1.0f;
    if (how == 1) dn_ref_softmax(p, p, count);
    if (how == 2)
        for (size_t i = 0; i < count; i++) p[i] = (float)(dn_rng_next(r) >> 40) * 0x1p-24f;
}

/* Quantized query heads: from floats, or built with block exponents apart
   (the kernels' slow path) and any codes. */
static void fill_queries(dn_rng *r, const shape *s, bufs *b, dn_act_row *rows)
{
    size_t dp = (s->d + 31) / 32 * 32;
    int scaling = (int)dn_rng_below(r, 2), words = 1 + (int)dn_rng_below(r, 2);
    int spread = dn_rng_below(r, 5) == 0;
    for (size_t g = 0; g < s->g; g++) {
        rows[g] = (dn_act_row){b->codes + g * dp, b->qs + g * (dp / 32), dp, 0, (dn_words)words};
        dn_fill_f32(r, dn_rng_below(r, 4) ? DN_REGIME_NORMAL : DN_REGIME_TINY, b->q, s->d);
        for (size_t i = 0; i < s->d; i++)
            if (!isfinite(b->q[i])) b->q[i] = 1.0f;
        dn_quantize_head(b->q, s->d, (dn_act_scaling)scaling, (dn_words)words, &rows[g], NULL);
        if (!spread) continue;
        for (size_t c = 0; c < dp / rows[g].block; c++) {
            rows[g].scales[c].m = 8 + (int32_t)dn_rng_below(r, 248);
            rows[g].scales[c].e = (int32_t)dn_rng_below(r, 120) - 60;
        }
    }
}

/* Weights that meet the codes' ties: probabilities k * 2^-10 and value
   scales that are powers of two, so w * 2^-e is often a half-integer. */
static void fill_ties(dn_rng *r, float *p, size_t count, uint16_t *scales, size_t scale_count)
{
    for (size_t i = 0; i < count; i++) p[i] = (float)dn_rng_below(r, 1024) * 0x1p-10f;
    for (size_t j = 0; j < scale_count; j++)
        scales[j] = (uint16_t)(0x3C00 + (dn_rng_below(r, 8) << 10));
}

static void run_one(const dn_attention_kernels *kern, int which, bufs *b, size_t n, dn_rng *r,
                    dn_check_result *res)
{
    const dn_attention_kernels *ref = &dn_attention_scalar;
    shape s;
    s.n = n;
    uint64_t pick = dn_rng_next(r);
    s.d = (pick & 7) == 7 ? 1 + (size_t)dn_rng_below(r, MAX_D) : head_sizes[dn_rng_below(r, 8)];
    s.g = groups[dn_rng_below(r, 4)];
    s.stride = s.d + (size_t)dn_rng_below(r, 9);
    s.mode = (int)dn_rng_below(r, ROWS_MODES);
    int int8 = which == SCORES_INT8 || which == WEIGHTED_INT8;
    s.type = int8 ? DN_KV_INT8 : (uint32_t)dn_rng_below(r, 3);
    size_t sstride = 1 + (size_t)dn_rng_below(r, 2);
    fill_rows(r, &s, b->rows);
    for (size_t j = 0; j < n * sstride; j++) b->scales[j] = int8_scale(r);
    /* the scale: 1/8 mostly; 1e30 takes scores past exp's range; 2^-126
       and 2^-118 make most or some scores times it denormal (flushed by the
       result rule); 0 turns an infinite score into the one NaN */
    static const float scales[8] = {0.125f, 0.125f,    0.125f,    0.125f,
                                    1e30f,  0x1p-126f, 0x1p-118f, 0.0f};
    float scale = scales[dn_rng_below(r, 8)];
    memset(b->ref, 0, MAX_G * MAX_N * sizeof(float));
    memset(b->got, 0xEE, MAX_G * MAX_N * sizeof(float));
    switch (which) {
    case SCORES:
        dn_fill_f32(r, dn_rng_below(r, 4) ? DN_REGIME_NORMAL : DN_REGIME_SPECIAL, b->q, s.g * s.d);
        ref->scores(s.type, b->q, s.g, s.d, b->rows, s.stride, n, scale, b->ref);
        kern->scores(s.type, b->q, s.g, s.d, b->rows, s.stride, n, scale, b->got);
        cmp(res, &s, b->ref, b->got, s.g * n);
        return;
    case WEIGHTED:
        fill_p(r, b->p, s.g * n);
        ref->weighted(s.type, b->p, s.g, n, b->rows, s.stride, s.d, b->ref);
        kern->weighted(s.type, b->p, s.g, n, b->rows, s.stride, s.d, b->got);
        cmp(res, &s, b->ref, b->got, s.g * s.d);
        return;
    case SCORES_INT8: {
        dn_act_row rows[MAX_G];
        fill_queries(r, &s, b, rows);
        ref->scores_int8(rows, s.g, s.d, b->rows, s.stride, b->scales, sstride, n, scale, b->ref);
        kern->scores_int8(rows, s.g, s.d, b->rows, s.stride, b->scales, sstride, n, scale, b->got);
        cmp(res, &s, b->ref, b->got, s.g * n);
        return;
    }
    default: {
        fill_p(r, b->p, s.g * n);
        if (dn_rng_below(r, 4) == 0) fill_ties(r, b->p, s.g * n, b->scales, n * sstride);
        int fr =
            ref->weighted_int8(b->p, s.g, n, b->rows, s.stride, b->scales, sstride, s.d, b->ref);
        int fk =
            kern->weighted_int8(b->p, s.g, n, b->rows, s.stride, b->scales, sstride, s.d, b->got);
        if (fr != fk)
            dn_check_mismatch(res, "weighted_int8 n=%zu d=%zu: flag %d, kernel %d", n, s.d, fr, fk);
        cmp(res, &s, b->ref, b->got, s.g * s.d);
    }
    }
}

/* ---- rows far apart ------------------------------------------------------------------ */

/* Value rows of head size 128 spanning past 40 MiB from first to last, where
   a kernel may read them in another order than over nearer rows (the
   AVX-512 kernel takes both of its tiles a block at a time from 32 MiB on):
   each type, 1..300 positions (partial blocks and lanes), groups of 4 and 8
   and of 5 (a whole group and a remainder). Only the rows are written; the
   gaps are never read. */
static const size_t far_lengths[] = {1, 31, 129, 300};
static const size_t far_groups[] = {4, 5, 8};
#define FAR_SPAN ((size_t)40 << 20)

static void run_far_weighted(const dn_attention_kernels *kern, bufs *b, dn_rng *r,
                             dn_check_result *res)
{
    char *span = malloc(FAR_SPAN + 1024);
    if (!span) {
        dn_check_mismatch(res, "weighted far rows: no memory for the span");
        return;
    }
    size_t at = 0;
    for (uint32_t type = DN_KV_F32; type <= DN_KV_BF16; type++)
        for (size_t li = 0; li < sizeof far_lengths / sizeof *far_lengths; li++, at++) {
            size_t es = type == DN_KV_F32 ? 4 : 2, n = far_lengths[li];
            shape s = {n, 128,  far_groups[at % 3],
                       0, type, (int)(at % 2 ? ROWS_BITS : ROWS_NORMAL)};
            s.stride = (FAR_SPAN / es + n - 1) / n;
            for (size_t j = 0; j < n; j++) {
                shape one = s;
                one.n = 1, one.stride = s.d;
                fill_rows(r, &one, span + j * s.stride * es);
            }
            fill_p(r, b->p, s.g * n);
            dn_attention_scalar.weighted(type, b->p, s.g, n, span, s.stride, s.d, b->ref);
            kern->weighted(type, b->p, s.g, n, span, s.stride, s.d, b->got);
            cmp(res, &s, b->ref, b->got, s.g * s.d);
        }
    free(span);
}

/* ---- saturated blocks ---------------------------------------------------------------- */

/* Random codes keep an int8 block's integer sum near the square root of its
   bound; these cases take it to the bound: query codes near +-127 (one word)
   or +-32767 (two words) against key codes near +-127 with the same sign
   pattern, so a block of 32 sums to about +-127 * 127 * 32 = 516129 (past
   2^18) or +-32767 * 127 * 32 (past 2^26); for the weighted sum,
   probability codes near 127 against value codes near +-127, a block's sum
   near +-2^19. A kernel that lost a bit of a block sum on its way (an int32
   lane summed short, a wrap) differs here. */
static const size_t sat_sizes[] = {32, 128, 256};
static const size_t sat_lengths[] = {1, 4, 33, 67, 130};

/* A code near 127 in magnitude (124..127) with sign `sign`; -128 one time
   in eight where the sign is negative and `low` allows it. */
static int near_full(dn_rng *r, int sign, int low)
{
    if (low && sign < 0 && dn_rng_below(r, 8) == 0) return -128;
    return sign * (127 - (int)dn_rng_below(r, 4));
}

static int sign_of(dn_rng *r) { return dn_rng_below(r, 2) ? 1 : -1; }

/* Query heads whose blocks (of 32) each hold elements near their largest
   magnitude, sign sigma[i] times a sign per head and block; one block in
   four is 2 or 4 times smaller (block exponents apart: chunk factors above
   the least). The largest magnitude is 127 * m * 2^e for the scale's
   largest significand m (15 for Sub32, 255 per block), so the codes come
   out near their bound under either word count. */
static void saturated_queries(dn_rng *r, const shape *s, bufs *b, const int *sigma, int scaling,
                              int words, dn_act_row *rows)
{
    size_t dp = (s->d + 31) / 32 * 32;
    float unit = scaling == DN_ACT_SUB32 ? 15.0f * 0x1p-11f : 255.0f * 0x1p-15f;
    for (size_t g = 0; g < s->g; g++) {
        rows[g] = (dn_act_row){b->codes + g * dp, b->qs + g * (dp / 32), dp, 0, (dn_words)words};
        for (size_t c = 0; c * 32 < s->d; c++) {
            int u = sign_of(r);
            float f = dn_rng_below(r, 4) ? unit : unit / (float)(2 << dn_rng_below(r, 2));
            for (size_t i = 32 * c; i < s->d && i < 32 * c + 32; i++)
                b->q[i] =
                    (float)(sigma[i] * u * (i == 32 * c ? 127 : 127 - (int)dn_rng_below(r, 4))) * f;
        }
        dn_quantize_head(b->q, s->d, (dn_act_scaling)scaling, (dn_words)words, &rows[g], NULL);
    }
}

static void saturated_scores(const dn_attention_kernels *kern, bufs *b, const shape *s, int scaling,
                             int words, dn_rng *r, dn_check_result *res)
{
    int sigma[MAX_D];
    for (size_t i = 0; i < s->d; i++) sigma[i] = sign_of(r);
    dn_act_row rows[MAX_G];
    saturated_queries(r, s, b, sigma, scaling, words, rows);
    int8_t *k = b->rows;
    memset(k, 0x80, s->n * s->stride);
    for (size_t j = 0; j < s->n; j++) {
        int t = sign_of(r);
        for (size_t i = 0; i < s->d; i++)
            k[j * s->stride + i] = (int8_t)near_full(r, sigma[i] * t, 1);
        b->scales[j] = half_of(r, DN_KV_F16, 0);
    }
    float scale = 0.125f;
    dn_attention_scalar.scores_int8(rows, s->g, s->d, k, s->stride, b->scales, 1, s->n, scale,
                                    b->ref);
    kern->scores_int8(rows, s->g, s->d, k, s->stride, b->scales, 1, s->n, scale, b->got);
    cmp(res, s, b->ref, b->got, s->g * s->n);
}

/* Probabilities near 127 * 2^-12 (the first of each block exactly) and
   value scales +-2^k per block (all positive in half the blocks, the
   unsigned-code forms), value codes sigma[i] times the position's scale's
   sign times a block sign: every head's block sums near +-127 * 127 * 32. */
static void saturated_weighted(const dn_attention_kernels *kern, bufs *b, const shape *s, dn_rng *r,
                               dn_check_result *res)
{
    int sigma[MAX_D];
    for (size_t i = 0; i < s->d; i++) sigma[i] = sign_of(r);
    int8_t *v = b->rows;
    memset(v, 0x80, s->n * s->stride);
    for (size_t j0 = 0; j0 < s->n; j0 += DN_VALUE_BLOCK) {
        int u = sign_of(r), mixed = (int)dn_rng_below(r, 2);
        uint16_t mag = (uint16_t)(0x3C00 + (dn_rng_below(r, 3) << 10));
        for (size_t j = j0; j < s->n && j < j0 + DN_VALUE_BLOCK; j++) {
            int neg = mixed && dn_rng_below(r, 2);
            b->scales[j] = (uint16_t)(mag | (neg ? 0x8000u : 0));
            for (size_t i = 0; i < s->d; i++)
                v[j * s->stride + i] = (int8_t)near_full(r, sigma[i] * u * (neg ? -1 : 1), 1);
            for (size_t g = 0; g < s->g; g++)
                b->p[g * s->n + j] =
                    (float)(j == j0 ? 127 : 127 - (int)dn_rng_below(r, 4)) * 0x1p-12f;
        }
    }
    int fr = dn_attention_scalar.weighted_int8(b->p, s->g, s->n, v, s->stride, b->scales, 1, s->d,
                                               b->ref);
    int fk = kern->weighted_int8(b->p, s->g, s->n, v, s->stride, b->scales, 1, s->d, b->got);
    if (fr != fk)
        dn_check_mismatch(res, "weighted_int8 saturated n=%zu d=%zu: flag %d, kernel %d", s->n,
                          s->d, fr, fk);
    cmp(res, s, b->ref, b->got, s->g * s->d);
}

/* Every head size of sat_sizes, scaling and word count (scores), at each of
   sat_lengths, groups of 1, 2, 4 and 8 heads in turn. */
static void run_saturated(const dn_attention_kernels *kern, int which, bufs *b, dn_rng *r,
                          dn_check_result *res)
{
    size_t at = 0;
    for (size_t di = 0; di < sizeof sat_sizes / sizeof *sat_sizes; di++)
        for (int form = 0; form < (which == SCORES_INT8 ? 4 : 1); form++)
            for (size_t li = 0; li < sizeof sat_lengths / sizeof *sat_lengths; li++, at++) {
                shape s = {sat_lengths[li], sat_sizes[di], groups[at % 4], 0,
                           DN_KV_INT8,      ROWS_SATURATED};
                s.stride = s.d + (size_t)dn_rng_below(r, 9);
                if (which == SCORES_INT8)
                    saturated_scores(kern, b, &s, form / 2, 1 + form % 2, r, res);
                else
                    saturated_weighted(kern, b, &s, r, res);
            }
}

/* A row for cache_row: every regime of dn_fill_f32, or (mode
   DN_REGIME_COUNT) products on half-integers: x_i = (k_i + 1/2) s for the
   scale s that the row's largest magnitude, |x_0|, makes. Its exponents
   reach down to binary16's subnormal scales (amax below 127 2^-14), whose
   rounding leaves products past +-127 to clamp. */
static void fill_cache_row(dn_rng *r, float *x, size_t n, int mode)
{
    if (mode < DN_REGIME_COUNT) {
        dn_fill_f32(r, (dn_regime)mode, x, n);
        return;
    }
    uint16_t h;
    const float amax =
        ldexpf(1.0f + (float)dn_rng_below(r, 1024) / 1024.0f, (int)dn_rng_below(r, 48) - 28);
    (void)dn_cache_row_scale(amax, &h);
    const float sc = dn_f16_to_f32(h);
    for (size_t i = 0; i < n; i++)
        x[i] = i % 4 == 1 ? -amax * (float)(1000 - dn_rng_below(r, 100)) / 1000.0f
                          : ((float)dn_rng_below(r, 254) - 126.5f) * sc;
    if (n) x[0] = dn_rng_below(r, 2) ? amax : -amax;
}

/* cache_row against the reference on rows of the plan's lengths (at most
   MAX_N), scale, codes and status. */
static void check_cache_rows(const dn_attention_kernels *kern, const size_t *lengths, size_t count,
                             uint64_t seed, bufs *b, dn_check_result *res)
{
    dn_rng r = {seed * 41 + 7};
    int8_t *c_ref = (int8_t *)b->rows, *c_got = c_ref + MAX_N;
    for (size_t i = 0; i < count; i++) {
        const size_t n = lengths[i] > MAX_N ? MAX_N - (size_t)dn_rng_below(&r, 1000) : lengths[i];
        const int mode = (int)(i % (DN_REGIME_COUNT + 1));
        fill_cache_row(&r, b->p, n, mode);
        uint16_t h_ref = 0x5A5A, h_got = 0xA5A5;
        memset(c_ref, 0x5A, MAX_N);
        memset(c_got, 0x5A, MAX_N);
        const int bad_ref = dn_ref_cache_row(b->p, n, &h_ref, c_ref);
        const int bad_got = kern->cache_row(b->p, n, &h_got, c_got);
        res->compared += 2 + n;
        if (bad_ref != bad_got || h_ref != h_got)
            dn_check_mismatch(res, "cache_row n=%zu mode %d: status %d/%d, scale 0x%04x/0x%04x", n,
                              mode, bad_ref, bad_got, h_ref, h_got);
        for (size_t j = 0; j < MAX_N; j++)
            if (c_ref[j] != c_got[j]) {
                dn_check_mismatch(res,
                                  "cache_row n=%zu mode %d: code %zu of x=0x%08" PRIx32
                                  " reference %d, kernel %d",
                                  n, mode, j, j < n ? dn_bits(b->p[j]) : 0, c_ref[j], c_got[j]);
                break;
            }
    }
}

int dn_check_attention(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    size_t *lengths;
    size_t count = dn_plan_lengths(plan, &lengths);
    bufs b;
    b.rows = malloc(MAX_N * MAX_STRIDE * 4);
    b.scales = malloc(MAX_N * 2 * sizeof(uint16_t));
    b.q = malloc(MAX_G * MAX_D * sizeof(float));
    b.p = malloc(MAX_G * MAX_N * sizeof(float));
    b.ref = malloc(MAX_G * MAX_N * sizeof(float));
    b.got = malloc(MAX_G * MAX_N * sizeof(float));
    b.codes = malloc(MAX_G * MAX_D * sizeof(int16_t));
    b.qs = malloc(MAX_G * MAX_D / 32 * sizeof(dn_act_scale));
    int failed = 0;
    if (!lengths || !b.rows || !b.scales || !b.q || !b.p || !b.ref || !b.got || !b.codes || !b.qs) {
        failed = 1;
        goto out;
    }
    const dn_attention_kernels *tables[2] = {ks->attention, NULL};
#if defined(DN_HAVE_AVX512)
    if (isa == DN_ISA_AVX512 && ks->attention != &dn_attention_avx512)
        tables[1] = &dn_attention_avx512;
#endif
    for (int t = 0; t < 2 && tables[t]; t++)
        for (int which = t ? SCORES_INT8 : 0; which < COUNT; which++) {
            dn_check_result res = {"attention", (t ? names_no_vnni : names)[which], isa, 0, 0, ""};
            dn_rng r = {plan->seed * 37 + (uint64_t)which};
            for (size_t i = 0; i < count; i++) {
                size_t n = lengths[i] > MAX_N ? MAX_N - (size_t)dn_rng_below(&r, 1000) : lengths[i];
                run_one(tables[t], which, &b, n, &r, &res);
            }
            if (which == SCORES_INT8 || which == WEIGHTED_INT8)
                run_saturated(tables[t], which, &b, &r, &res);
            if (which == WEIGHTED) run_far_weighted(tables[t], &b, &r, &res);
            if (res.mismatched) failed++;
            if (sink) sink(&res, ctx);
        }
    dn_check_result cr = {"attention", "cache_row", isa, 0, 0, ""};
    check_cache_rows(ks->attention, lengths, count, plan->seed, &b, &cr);
    if (cr.mismatched) failed++;
    if (sink) sink(&cr, ctx);
out:
    free(lengths);
    free(b.rows);
    free(b.scales);
    free(b.q);
    free(b.p);
    free(b.ref);
    free(b.got);
    free(b.codes);
    free(b.qs);
    return failed;
}
