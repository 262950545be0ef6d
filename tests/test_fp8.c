/* SPDX-License-Identifier: MIT */
/*
 * The FP8 E4M3 module: the decoder against a first-principles decoder on
 * all 256 codes; each rounding point of the products' contract
 * (docs/numerics.md, "FP8 E4M3 products") pinned by a case whose result is
 * derived by hand and which a different order, lane count or a separate
 * multiply would change; the scale layout and partial blocks; NaN codes;
 * bad input; pools and row ranges; the error against the exact product,
 * under whichever ISA DECODENUM_ISA selects.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"
#include "testutil.h"

/* ---- the decoder ------------------------------------------------------------ */

/* The value of E4M3 bits by the format's definition, in double: sign,
   exponent field e (bias 7), fraction f/8; e = 0 is subnormal
   (0.f * 2^(1 - 7)); S.1111.111 is NaN. */
static double e4m3_by_definition(unsigned code, int *is_nan)
{
    unsigned s = code >> 7, e = (code >> 3) & 15, f = code & 7;
    *is_nan = e == 15 && f == 7;
    double v = e == 0 ? ldexp(f / 8.0, 1 - 7) : ldexp(1.0 + f / 8.0, (int)e - 7);
    return s ? -v : v;
}

static void decoder_all_256_codes(void **state)
{
    (void)state;
    uint8_t codes[256];
    float out[256];
    int nans = 0;
    for (unsigned c = 0; c < 256; c++) codes[c] = (uint8_t)c;
    assert_int_equal(dn_fp8_decode(codes, out, 256), DN_ERR_NON_FINITE);
    for (unsigned c = 0; c < 256; c++) {
        int is_nan;
        double v = e4m3_by_definition(c, &is_nan);
        float one = dn_fp8_e4m3_to_f32((uint8_t)c);
        if (is_nan) {
            nans++;
            assert_bits(one, 0x7FC00000u);
            assert_bits(out[c], 0x7FC00000u);
            continue;
        }
        assert_true((double)(float)v == v); /* at most 4 significant bits: exact */
        assert_same_float(one, (float)v);
        assert_same_float(out[c], (float)v);
    }
    assert_int_equal(nans, 2);
    /* landmarks of the format */
    assert_same_float(dn_fp8_e4m3_to_f32(0x7E), DN_FP8_E4M3_MAX);
    assert_same_float(dn_fp8_e4m3_to_f32(0x7E), 448.0f);
    assert_same_float(dn_fp8_e4m3_to_f32(0x01), 0x1p-9f);
    assert_same_float(dn_fp8_e4m3_to_f32(0x08), 0x1p-6f);
    assert_same_float(dn_fp8_e4m3_to_f32(0x38), 1.0f);
    assert_bits(dn_fp8_e4m3_to_f32(0x80), 0x80000000u);
    for (unsigned c = 1; c < 0x7F; c++) /* strictly increasing magnitudes */
        assert_true(dn_fp8_e4m3_to_f32((uint8_t)c) > dn_fp8_e4m3_to_f32((uint8_t)(c - 1)));
    /* without the NaN codes: DN_OK, every length (the vector steps and tails) */
    for (size_t n = 0; n <= 254; n++) {
        uint8_t clean[254];
        for (size_t i = 0; i < n; i++) clean[i] = (uint8_t)(i < 127 ? i : i + 1);
        assert_int_equal(dn_fp8_decode(clean, out, n), DN_OK);
        for (size_t i = 0; i < n; i++) assert_same_float(out[i], dn_fp8_e4m3_to_f32(clean[i]));
    }
}

/* ---- the rounding points, by hand ----------------------------------------------- */

#define K1 128
/* One row of one block: codes and activations zero but for the listed. */
static float one_row(const uint8_t *w, const float *x, size_t k, const float *scales, float t)
{
    float vec = 0.0f, out[2] = {0, 0};
    assert_int_equal(dn_fp8_mat_vec(w, 1, k, scales, t, x, &vec, NULL), DN_OK);
    /* mat_mul's kernels (two identical columns) give the same bits */
    float *act2 = malloc(2 * k * sizeof *act2 + 1);
    assert_non_null(act2);
    memcpy(act2, x, k * sizeof *x);
    memcpy(act2 + k, x, k * sizeof *x);
    assert_int_equal(dn_fp8_mat_mul(w, 1, k, scales, t, act2, 2, out, NULL), DN_OK);
    free(act2);
    assert_same_float(out[0], out[1]);
    assert_same_float(vec, out[0]);
    return vec;
}

/* Elements i and i+16 share a lane and its fused multiply-add; i and i+8
   do not. -(1.125 + 2^-23) then 1.125 * (1 + 2^-23) = 1.125 + 2^-23 + 2^-26:
   in one FMA the sum is exactly 2^-26; a rounded product (1.125 + 2^-23)
   cancels to 0. */
static void lanes_are_fused_chains_of_sixteen(void **state)
{
    (void)state;
    uint8_t w[K1] = {0};
    float x[K1] = {0};
    w[0] = 0x38; /* 1 */
    x[0] = -(1.125f + 0x1p-23f);
    for (int second = 8; second <= 16; second += 8) {
        uint8_t ws[K1];
        float xs[K1];
        memcpy(ws, w, sizeof w);
        memcpy(xs, x, sizeof x);
        ws[second] = 0x39; /* 1.125 */
        xs[second] = 1.0f + 0x1p-23f;
        assert_same_float(one_row(ws, xs, K1, NULL, 1.0f), second == 16 ? 0x1p-26f : 0.0f);
    }
}

/* The lanes fold j + j+8, j + j+4, j + j+2, then 0 + 1: with 2^24 in lane 0
   and 1 in lanes 1 and 3, lanes 1 and 3 meet first (2) and 2^24 + 2 is
   exact. Adjacent pairs first ((2^24 + 1) + (0 + 1)) or one running sum
   would tie to even twice and give 2^24. */
static void lanes_fold_by_halves(void **state)
{
    (void)state;
    uint8_t w[K1] = {0};
    float x[K1] = {0};
    w[0] = w[1] = w[3] = 0x38;
    x[0] = 0x1p24f;
    x[1] = x[3] = 1.0f;
    assert_same_float(one_row(w, x, K1, NULL, 1.0f), 0x1p24f + 2.0f);
}

/* Block sums enter as fma(block sum, block scale, sum), in order: block 0
   gives -(1.125 + 2^-23) (scale 1), block 1 gives 1 + 2^-23 under scale
   1.125: the fused result is 2^-26, a rounded product would leave 0. */
static void block_scales_are_fused(void **state)
{
    (void)state;
    uint8_t w[2 * K1] = {0};
    float x[2 * K1] = {0};
    const float scales[2] = {1.0f, 1.125f};
    w[0] = w[K1] = 0x38;
    x[0] = -(1.125f + 0x1p-23f);
    x[K1] = 1.0f + 0x1p-23f;
    assert_same_float(one_row(w, x, 2 * K1, scales, 1.0f), 0x1p-26f);
}

/* Inside the product underflow is gradual: 2^-9 * 2^-126 twice in lane 0
   is the denormal 2^-134, kept; times a tensor scale 2^20 it is 2^-114
   (flush-to-zero arithmetic would give 0). The output itself is flushed:
   with tensor scale 1 it is +0. */
static void gradual_inside_flushed_outside(void **state)
{
    (void)state;
    uint8_t w[K1] = {0};
    float x[K1] = {0};
    w[0] = w[16] = 0x01;
    x[0] = x[16] = 0x1p-126f;
    assert_same_float(one_row(w, x, K1, NULL, 0x1p20f), 0x1p-114f);
    assert_bits(one_row(w, x, K1, NULL, 1.0f), 0x00000000u);
    assert_bits(one_row(w, x, K1, NULL, -1.0f), 0x80000000u);
}

/* Activations are numbers to the arithmetic: 0 * inf is NaN, made
   0x7FC00000; that is not a NaN code (DN_OK). */
static void activation_inf_and_nan(void **state)
{
    (void)state;
    uint8_t w[K1] = {0};
    float x[K1] = {0};
    x[5] = INFINITY;
    assert_bits(one_row(w, x, K1, NULL, 1.0f), 0x7FC00000u);
    w[5] = 0xB8; /* -1 */
    assert_same_float(one_row(w, x, K1, NULL, 2.0f), -INFINITY);
}

/* The largest activations: a single term w * x is exact, so the row is
   that product, whatever the kernels scale to keep it exact (x * 2^8
   overflows from |x| = 2^120 on). Each value is tried at several columns
   (the vector steps, the scalar tail of a partial block). */
static void largest_activations_are_exact(void **state)
{
    (void)state;
    const float xs[] = {0x1p120f, -0x1p120f, 0x1.fffffep119f, 0x1.8p120f, FLT_MAX, -FLT_MAX};
    const size_t at[] = {0, 5, 17, 127, 130};
    for (size_t v = 0; v < sizeof xs / sizeof xs[0]; v++)
        for (size_t p = 0; p < sizeof at / sizeof at[0]; p++) {
            uint8_t w[2 * K1] = {0};
            float x[2 * K1] = {0};
            w[at[p]] = 0x30; /* 0.5 */
            x[at[p]] = xs[v];
            size_t k = at[p] < K1 ? K1 : K1 + 5; /* 130 in the scalar tail */
            assert_same_float(one_row(w, x, k, NULL, 1.0f), xs[v] * 0.5f);
        }
}

/* ---- scales and partial blocks ---------------------------------------------------- */

/* 130 x 200 ones against ones: blocks of 128 and 72 columns, row groups of
   128 and 2 rows, scales {{1, 2}, {4, 8}}, tensor scale 0.5: rows < 128
   give (128*1 + 72*2)/2 = 136, rows 128 and 129 (128*4 + 72*8)/2 = 544;
   column c of a product scaled by c + 1 gives (c + 1) times those. */
static void scale_layout_and_partial_blocks(void **state)
{
    (void)state;
    enum { R = 130, KK = 200, N = 3 };
    uint8_t *w = malloc(R * KK);
    float *act = malloc(N * KK * sizeof *act), *out = malloc(N * R * sizeof *out);
    assert_true(w && act && out);
    memset(w, 0x38, R * KK);
    for (int c = 0; c < N; c++)
        for (int i = 0; i < KK; i++) act[c * KK + i] = (float)(c + 1);
    const float scales[4] = {1, 2, 4, 8};
    size_t count = 0;
    assert_int_equal(dn_fp8_scale_count(R, KK, &count), DN_OK);
    assert_int_equal(count, 4);
    assert_int_equal(dn_fp8_mat_mul(w, R, KK, scales, 0.5f, act, N, out, NULL), DN_OK);
    for (int c = 0; c < N; c++)
        for (int r = 0; r < R; r++)
            assert_same_float(out[c * R + r], (c + 1) * (r < 128 ? 136.0f : 544.0f));
    assert_int_equal(dn_fp8_mat_vec(w, R, KK, scales, 0.5f, act, out, NULL), DN_OK);
    for (int r = 0; r < R; r++) assert_same_float(out[r], r < 128 ? 136.0f : 544.0f);
    free(w);
    free(act);
    free(out);
}

/* ---- random matrices ---------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static float uniform(void) { return (float)((double)(next() >> 11) * 0x1p-53 * 2.0 - 1.0); }
/* A code that is not a NaN code. */
static uint8_t code(void)
{
    uint8_t c = (uint8_t)next();
    return (c & 0x7F) == 0x7F ? (uint8_t)(c ^ 1) : c;
}

typedef struct mat {
    size_t rows, k, n;
    uint8_t *w;
    float *scales, *act, *out, *alt;
} mat;

static mat make(size_t rows, size_t k, size_t n)
{
    mat m = {rows,
             k,
             n,
             malloc(rows * k + 1),
             NULL,
             malloc(n * k * sizeof(float) + 4),
             malloc(n * rows * sizeof(float) + 4),
             malloc(n * rows * sizeof(float) + 4)};
    size_t count;
    assert_int_equal(dn_fp8_scale_count(rows, k, &count), DN_OK);
    m.scales = malloc(count * sizeof(float) + 4);
    assert_true(m.w && m.scales && m.act && m.out && m.alt);
    for (size_t i = 0; i < rows * k; i++) m.w[i] = code();
    for (size_t i = 0; i < count; i++) m.scales[i] = ldexpf(1.0f + uniform() * 0.5f, -8);
    for (size_t i = 0; i < n * k; i++) m.act[i] = uniform();
    return m;
}

static void drop(mat *m)
{
    free(m->w);
    free(m->scales);
    free(m->act);
    free(m->out);
    free(m->alt);
}

static void same_bits(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) assert_int_equal(tbits(a[i]), tbits(b[i]));
}

/* NaN codes: the rows that hold one are NaN, the others as without it;
   the call says DN_ERR_NON_FINITE; a row range without them says DN_OK. */
static void nan_codes(void **state)
{
    (void)state;
    mat m = make(9, 300, 2);
    assert_int_equal(dn_fp8_mat_mul(m.w, 9, 300, m.scales, 1.0f, m.act, 2, m.alt, NULL), DN_OK);
    m.w[5 * 300 + 211] = 0xFF;
    m.w[7 * 300 + 3] = 0x7F;
    for (int n = 1; n <= 2; n++) {
        assert_int_equal(dn_fp8_mat_mul(m.w, 9, 300, m.scales, 1.0f, m.act, (size_t)n, m.out, NULL),
                         DN_ERR_NON_FINITE);
        for (int c = 0; c < n; c++)
            for (int r = 0; r < 9; r++) {
                if (r == 5 || r == 7)
                    assert_bits(m.out[c * 9 + r], 0x7FC00000u);
                else
                    assert_same_float(m.out[c * 9 + r], m.alt[c * 9 + r]);
            }
    }
    assert_int_equal(dn_fp8_mat_vec_rows(m.w, 9, 300, m.scales, 1.0f, m.act, 0, 5, m.out), DN_OK);
    assert_int_equal(dn_fp8_mat_vec_rows(m.w, 9, 300, m.scales, 1.0f, m.act, 4, 6, m.out),
                     DN_ERR_NON_FINITE);
    drop(&m);
}

static void bad_input(void **state)
{
    (void)state;
    mat m = make(4, 256, 1);
    float keep = 12345.0f;
    for (int i = 0; i < 4; i++) m.out[i] = keep;
    const uint8_t *w = m.w;
    const float *x = m.act, *s = m.scales;
    assert_int_equal(dn_fp8_mat_vec(NULL, 4, 256, s, 1, x, m.out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_vec(w, 4, 256, s, 1, NULL, m.out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_vec(w, 4, 256, s, 1, x, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_mul(w, 4, 256, s, 1, NULL, 2, m.out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_vec(w, SIZE_MAX / 2, 256, s, 1, x, m.out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_mul(w, 4, 256, s, 1, x, SIZE_MAX / 8, m.out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_vec_rows(w, 4, 256, s, 1, x, 3, 2, m.out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_vec_rows(w, 4, 256, s, 1, x, 0, 5, m.out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_mat_mul_rows(w, 4, 256, s, 1, x, 1, 2, 9, m.out),
                     DN_ERR_INVALID_ARGUMENT);
    /* non-finite scales: nothing written */
    const float bad[4] = {INFINITY, -INFINITY, NAN, -NAN};
    for (int i = 0; i < 4; i++) {
        m.scales[1] = bad[i];
        assert_int_equal(dn_fp8_mat_vec(w, 4, 256, m.scales, 1, x, m.out, NULL),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(dn_fp8_mat_vec_rows(w, 4, 256, m.scales, 1, x, 0, 4, m.out),
                         DN_ERR_UNREADABLE_BLOCK);
        m.scales[1] = 1.0f;
        assert_int_equal(dn_fp8_mat_mul(w, 4, 256, m.scales, bad[i], x, 1, m.out, NULL),
                         DN_ERR_UNREADABLE_BLOCK);
    }
    for (int i = 0; i < 4; i++) assert_same_float(m.out[i], keep);
    /* empty: k = 0 gives +0 times the tensor scale; no rows or columns, nothing */
    assert_int_equal(dn_fp8_mat_vec(NULL, 4, 0, NULL, -2, NULL, m.out, NULL), DN_OK);
    for (int i = 0; i < 4; i++) assert_bits(m.out[i], 0x80000000u);
    assert_int_equal(dn_fp8_mat_vec(NULL, 0, 256, NULL, 1, x, NULL, NULL), DN_OK);
    assert_int_equal(dn_fp8_mat_mul(w, 4, 256, s, 1, NULL, 0, NULL, NULL), DN_OK);
    assert_int_equal(dn_fp8_mat_vec_rows(NULL, 4, 0, NULL, 1, NULL, 1, 3, m.out), DN_OK);
    assert_int_equal(dn_fp8_decode(NULL, NULL, 0), DN_OK);
    assert_int_equal(dn_fp8_decode(NULL, m.out, 3), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_fp8_scale_count(1, 1, NULL), DN_ERR_INVALID_ARGUMENT);
    size_t count;
    assert_int_equal(dn_fp8_scale_count(SIZE_MAX, SIZE_MAX, &count), DN_ERR_INVALID_ARGUMENT);
    drop(&m);
}

/* Pools of 1-3 threads, row ranges cut anywhere, mat_mul's columns: the
   bits of mat_vec with no pool. */
static void pools_ranges_columns_agree(void **state)
{
    (void)state;
    const size_t R = 301, K = 1000, N = 5;
    mat m = make(R, K, N);
    float *ref = malloc(N * R * sizeof *ref);
    assert_non_null(ref);
    for (size_t c = 0; c < N; c++)
        assert_int_equal(
            dn_fp8_mat_vec(m.w, R, K, m.scales, 0.75f, m.act + c * K, ref + c * R, NULL), DN_OK);
    for (unsigned t = 1; t <= 3; t++) {
        dn_pool *pool = dn_pool_create(t);
        assert_non_null(pool);
        assert_int_equal(dn_fp8_mat_vec(m.w, R, K, m.scales, 0.75f, m.act, m.out, pool), DN_OK);
        same_bits(m.out, ref, R);
        assert_int_equal(dn_fp8_mat_mul(m.w, R, K, m.scales, 0.75f, m.act, N, m.out, pool), DN_OK);
        same_bits(m.out, ref, N * R);
        dn_pool_destroy(pool);
    }
    for (size_t r0 = 0; r0 < R;) {
        size_t r1 = r0 + 1 + (size_t)(next() % 37);
        r1 = r1 > R ? R : r1;
        assert_int_equal(dn_fp8_mat_vec_rows(m.w, R, K, m.scales, 0.75f, m.act, r0, r1, m.alt),
                         DN_OK);
        assert_int_equal(dn_fp8_mat_mul_rows(m.w, R, K, m.scales, 0.75f, m.act, N, r0, r1, m.out),
                         DN_OK);
        r0 = r1;
    }
    same_bits(m.alt, ref, R);
    same_bits(m.out, ref, N * R);
    free(ref);
    drop(&m);
}

/* Row ranges of every start around the row group boundary at 128, each a
   few rows long, so that the kernels' groups of rows (4 or 8 at a time from
   the range's start) straddle it at every offset: rows before 128 take the
   first group's block scales, the rest the second's. The bits of mat_vec
   over all the rows (its groups start at multiples of 8: they never
   straddle). */
static void row_groups_straddled_at_every_offset(void **state)
{
    (void)state;
    const size_t R = 272, K = 256;
    mat m = make(R, K, 1);
    float *ref = malloc(R * sizeof *ref);
    assert_non_null(ref);
    assert_int_equal(dn_fp8_mat_vec(m.w, R, K, m.scales, 1.0f, m.act, ref, NULL), DN_OK);
    for (size_t len = 2; len <= 16; len += 7)
        for (size_t r0 = 128 - len; r0 < 128; r0++) {
            memset(m.alt, 0, R * sizeof *m.alt);
            assert_int_equal(
                dn_fp8_mat_vec_rows(m.w, R, K, m.scales, 1.0f, m.act, r0, r0 + len, m.alt), DN_OK);
            same_bits(m.alt + r0, ref + r0, len);
        }
    free(ref);
    drop(&m);
}

/* ---- the error against the exact product ------------------------------------------------ */

/* The rows' error |out - exact| over sum |terms|, in units of 2^-24, where
   exact is the product in long double (each w*x exact, the sums to 64
   bits: within 2^-50 of the sum of |terms|, far below the f32 error).
   Bound (Higham's gamma_m with m roundings on any term's path: at most 8
   lane FMAs, 4 fold adds, one per block, the tensor scale): m u / (1 - m u). */
static double error_sweep(size_t rows, size_t k, int positive, double *bound_units)
{
    mat m = make(rows, k, 1);
    if (positive)
        for (size_t i = 0; i < rows * k; i++) m.w[i] &= 0x7F, m.act[i % k] = fabsf(m.act[i % k]);
    const float t = 1.0f / 3.0f;
    assert_int_equal(dn_fp8_mat_vec(m.w, rows, k, m.scales, t, m.act, m.out, NULL), DN_OK);
    size_t kb = (k + 127) / 128;
    double worst = 0;
    for (size_t r = 0; r < rows; r++) {
        long double exact = 0, mag = 0;
        for (size_t j = 0; j < kb; j++) {
            long double bs = 0, bm = 0;
            for (size_t i = j * 128; i < k && i < j * 128 + 128; i++) {
                long double p = (long double)dn_fp8_e4m3_to_f32(m.w[r * k + i]) * m.act[i];
                bs += p;
                bm += fabsl(p);
            }
            long double s = m.scales[(r / 128) * kb + j];
            exact += bs * s;
            mag += bm * fabsl(s);
        }
        exact *= t;
        mag *= fabsl((long double)t);
        double e = mag > 0 ? (double)(fabsl((long double)m.out[r] - exact) / mag) * 0x1p24 : 0;
        worst = e > worst ? e : worst;
    }
    double mm = 8 + 4 + (double)kb + 1;
    *bound_units = mm / (1 - mm * 0x1p-24);
    drop(&m);
    return worst;
}

static void error_against_exact(void **state)
{
    (void)state;
    const size_t ks[5] = {128, 1024, 7168, 8192, 18432};
    int full = getenv("DN_FP8_ERROR_TABLE") != NULL;
    size_t rows = full ? 512 : 16;
    printf("  FP8 mat_vec error over sum|terms|, units of 2^-24, %zu rows each:\n", rows);
    printf("  %6s %14s %14s %8s\n", "k", "mixed signs", "positive", "bound");
    for (int i = 0; i < 5; i++) {
        double b1, b2;
        double e1 = error_sweep(rows, ks[i], 0, &b1), e2 = error_sweep(rows, ks[i], 1, &b2);
        printf("  %6zu %14.4f %14.4f %8.1f\n", ks[i], e1, e2, b1);
        assert_true(e1 <= b1 && e2 <= b2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decoder_all_256_codes),
        cmocka_unit_test(lanes_are_fused_chains_of_sixteen),
        cmocka_unit_test(lanes_fold_by_halves),
        cmocka_unit_test(block_scales_are_fused),
        cmocka_unit_test(gradual_inside_flushed_outside),
        cmocka_unit_test(activation_inf_and_nan),
        cmocka_unit_test(largest_activations_are_exact),
        cmocka_unit_test(scale_layout_and_partial_blocks),
        cmocka_unit_test(nan_codes),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(pools_ranges_columns_agree),
        cmocka_unit_test(row_groups_straddled_at_every_offset),
        cmocka_unit_test(error_against_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
