/* SPDX-License-Identifier: MIT */
/*
 * The ggml-compatible BF16 products: every output of ../shared/oracle's
 * ggml-bf16-matmul.bin (computed by the real ggml) reproduced bit for bit
 * with no pool and with a pool of two threads, under whichever ISA
 * DECODENUM_ISA selects; the two reductions, vec_dot's rounded products,
 * its final pairing and its double tail, each on both sides of the path
 * rule, derived by hand; the conversions against ggml's definition.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"
#include "oracle.h"
#include "testutil.h"

#define BF_4096 0x4580 /* 2^12: 4096 * 4096 = 2^24 */
#define BF_ONE 0x3F80

/* w = x = 0 except a 2^24 product at element 0 and products of 1 at `ones`. */
static void make_ordered_row(uint16_t *w, uint16_t *x, size_t k, const size_t *ones, size_t nones)
{
    for (size_t i = 0; i < k; i++) w[i] = x[i] = 0;
    w[0] = x[0] = BF_4096;
    for (size_t i = 0; i < nones; i++) w[ones[i]] = x[ones[i]] = BF_ONE;
}

/* 4 rows of w times `cols` columns of x (widened): *out by dn_bf16_mat_mul. */
static void product_of_copies(const uint16_t *w, const uint16_t *x, size_t cols, float *out)
{
    uint16_t wm[4 * 32];
    float act[2 * 32];
    for (int r = 0; r < 4; r++) memcpy(wm + 32 * r, w, 32 * sizeof *w);
    for (size_t c = 0; c < cols; c++) assert_int_equal(dn_bf16_widen(x, act + 32 * c, 32), DN_OK);
    assert_int_equal(dn_bf16_mat_mul(wm, 4, 32, act, cols, out, NULL), DN_OK);
}

/* As for F16: vec_dot folds element 0's lane with element 16's, then with
   (8 + 24): (2^24 + 1) + (1 + 1) = 2^24 + 2. tinyBLAS chains lane 0
   through 8, 16, 24: ((2^24 + 1) + 1) + 1, each add a tie to even: 2^24. */
static void the_two_reductions_differ(void **state)
{
    (void)state;
    uint16_t w[32], x[32];
    const size_t ones[3] = {8, 16, 24};
    make_ordered_row(w, x, 32, ones, 3);
    float v, s, out[8];
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_VEC_DOT, w, x, 32, &v), DN_OK);
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_SGEMM, w, x, 32, &s), DN_OK);
    assert_same_float(v, 0x1p24f + 2.0f);
    assert_same_float(s, 0x1p24f);
    assert_true(dn_f16_takes_sgemm(4, 32, 2));
    product_of_copies(w, x, 2, out); /* tinyBLAS */
    for (int i = 0; i < 8; i++) assert_same_float(out[i], 0x1p24f);
    product_of_copies(w, x, 1, out); /* one column: vec_dot */
    for (int i = 0; i < 4; i++) assert_same_float(out[i], 0x1p24f + 2.0f);
}

/* vec_dot rounds each product to f32 before adding it; tinyBLAS fuses.
   Elements 0 and 32 share lane 0 of the first accumulator. Element 0:
   2^-75 * 2^-74 = 2^-149 (exact). Element 32: 1.5 * 2^-75 * 2^-74 =
   1.5 * 2^-149, which f32 rounds (a tie) to 2 * 2^-149. vec_dot:
   2^-149 + 2 * 2^-149 = 3 * 2^-149. A fused step: 2.5 * 2^-149, a tie to
   even, 2 * 2^-149. */
static void vec_dot_rounds_each_product(void **state)
{
    (void)state;
    uint16_t w[64] = {0}, x[64] = {0};
    w[0] = 0x1A00;  /* 2^-75 */
    x[0] = 0x1A80;  /* 2^-74 */
    w[32] = 0x1A40; /* 1.5 * 2^-75 */
    x[32] = 0x1A80;
    float v, s;
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_VEC_DOT, w, x, 64, &v), DN_OK);
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_SGEMM, w, x, 64, &s), DN_OK);
    assert_bits(v, 3u); /* 3 * 2^-149 */
    assert_bits(s, 2u);
    /* the same inside products: 4 rows x 64, one column and two */
    uint16_t wm[4 * 64];
    float act[2 * 64], out[8];
    for (int r = 0; r < 4; r++) memcpy(wm + 64 * r, w, sizeof w);
    for (int c = 0; c < 2; c++) assert_int_equal(dn_bf16_widen(x, act + 64 * c, 64), DN_OK);
    assert_int_equal(dn_bf16_mat_mul(wm, 4, 64, act, 1, out, NULL), DN_OK);
    for (int i = 0; i < 4; i++) assert_bits(out[i], 3u);
    assert_int_equal(dn_bf16_mat_mul(wm, 4, 64, act, 2, out, NULL), DN_OK);
    for (int i = 0; i < 8; i++) assert_bits(out[i], 2u);
    /* one row fewer: rows % 4 != 0 sends two columns to vec_dot */
    assert_int_equal(dn_bf16_mat_mul(wm, 3, 64, act, 2, out, NULL), DN_OK);
    for (int i = 0; i < 6; i++) assert_bits(out[i], 3u);
}

/* vec_dot's last step pairs the four half sums as (t0 + t2) + (t1 + t3),
   where F16's pairs (t0 + t1) + (t2 + t3). Lanes 0, 1 and 3 hold 2^24, 1
   and 1: BF16 (2^24 + 0) + (1 + 1) = 2^24 + 2; F16 (2^24 + 1) + (0 + 1),
   two ties to even: 2^24. */
static void vec_dot_pairs_as_tinyblas(void **state)
{
    (void)state;
    uint16_t w[32], x[32];
    const size_t ones[2] = {1, 3};
    make_ordered_row(w, x, 32, ones, 2);
    float v, out[8];
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_VEC_DOT, w, x, 32, &v), DN_OK);
    assert_same_float(v, 0x1p24f + 2.0f);
    product_of_copies(w, x, 1, out);
    for (int i = 0; i < 4; i++) assert_same_float(out[i], 0x1p24f + 2.0f);
    uint16_t h[32] = {0};
    h[0] = 0x6C00; /* the same values in binary16 */
    h[1] = h[3] = 0x3C00;
    assert_int_equal(dn_f16_dot(DN_F16_PATH_VEC_DOT, h, h, 32, &v), DN_OK);
    assert_same_float(v, 0x1p24f);
}

/* vec_dot adds the last k % 32 products in double: 2^24 + 1 + 1 is exact
   there and rounds once to 2^24 + 2; f32 adds would tie twice to 2^24. */
static void vec_dot_tail_is_double(void **state)
{
    (void)state;
    uint16_t w[34], x[34];
    const size_t ones[2] = {32, 33};
    make_ordered_row(w, x, 34, ones, 2);
    float v;
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_VEC_DOT, w, x, 34, &v), DN_OK);
    assert_same_float(v, 0x1p24f + 2.0f);
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_VEC_DOT, w, x, 33, &v), DN_OK);
    assert_same_float(v, 0x1p24f); /* 2^24 + 1 in double rounds to even */
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_SGEMM, w, x, 33, &v), DN_ERR_INVALID_ARGUMENT);
}

/* ggml_compute_fp32_to_bf16 from its definition: nearest even on the
   pattern, denormals rounded (not flushed), NaN = (bits >> 16) | 0x40. */
static void conversions_follow_ggml(void **state)
{
    (void)state;
    const uint32_t in[12] = {0x3F808000u, 0x3F818000u, 0x3F808001u, 0x00008000u,
                             0x00018000u, 0x00008001u, 0x7F7FFFFFu, 0xFF7F7FFFu,
                             0xFFC12345u, 0x7F800001u, 0x7F810000u, 0x80000000u};
    const uint16_t want[12] = {0x3F80, 0x3F82, 0x3F81, 0x0000, 0x0002, 0x0001,
                               0x7F80, 0xFF7F, 0xFFC1, 0x7FC0, 0x7FC1, 0x8000};
    float x[12];
    uint16_t h[12];
    for (int i = 0; i < 12; i++) x[i] = tf(in[i]);
    for (size_t n = 0; n <= 12; n++) { /* every tail length of the vector forms */
        for (int i = 0; i < 12; i++) h[i] = 0xAAAA;
        assert_int_equal(dn_bf16_from_f32(x, h, n), DN_OK);
        for (size_t i = 0; i < n; i++) assert_int_equal(h[i], want[i]);
    }
    /* the engine's dn_f32_to_bf16 flushes the denormal, ggml's does not */
    assert_int_equal(dn_f32_to_bf16(x[4]), 0x0000);
    const uint16_t hh[9] = {0x0001, 0x807F, 0x7F81, 0xFFC1, 0x3F80, 0x7F7F, 0xFF80, 0x8000, 0x4580};
    float y[9];
    assert_int_equal(dn_bf16_widen(hh, y, 9), DN_OK);
    for (int i = 0; i < 9; i++) assert_bits(y[i], (uint32_t)hh[i] << 16); /* every bit kept */
    assert_same_float(y[0], 0x1p-133f);
    assert_int_equal(dn_bf16_from_f32(NULL, h, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_widen(hh, NULL, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_widen(NULL, NULL, 0), DN_OK);
}

static void arguments_are_checked(void **state)
{
    (void)state;
    float out[4];
    uint16_t w[8] = {0};
    const float x[8] = {0};
    assert_int_equal(dn_bf16_mat_vec(NULL, 1, 8, x, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_vec(w, 1, 8, NULL, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_vec(w, 0, 8, x, NULL, NULL), DN_OK);
    assert_int_equal(dn_bf16_mat_mul(w, 1, 8, x, 1, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_mul(w, SIZE_MAX, 8, x, 1, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_mul_rows(w, 1, 8, w, 1, 1, 2, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_mul_rows(w, 1, 8, w, 1, 1, 0, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_vec_rows(w, 1, 8, NULL, 0, 1, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_dot((dn_f16_path)9, w, w, 8, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_VEC_DOT, w, w, 8, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_vec_multi(NULL, 1, 8, x, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_vec_multi(NULL, 0, 8, x, NULL), DN_OK);
    dn_bf16_matrix bad = {w, NULL, 1};
    assert_int_equal(dn_bf16_mat_vec_multi(&bad, 1, 8, x, NULL), DN_ERR_INVALID_ARGUMENT);
    /* k = 0: every output is +0 */
    out[0] = 1.0f;
    assert_int_equal(dn_bf16_mat_vec(w, 1, 0, NULL, out, NULL), DN_OK);
    assert_bits(out[0], 0);
}

/* Sizes whose bytes do not fit size_t are invalid arguments, found before
   any allocation. */
static void sizes_beyond_memory_are_invalid(void **state)
{
    (void)state;
    float out[4];
    uint16_t w[8] = {0};
    const float x[8] = {0};
    const size_t k_wraps = SIZE_MAX / sizeof(float) + 1; /* k * 4 wraps to 0 */
    assert_int_equal(dn_bf16_dot(DN_F16_PATH_VEC_DOT, w, w, k_wraps, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_vec(w, 4, SIZE_MAX / 2 + 1, x, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_mul(w, 4, 8, x, SIZE_MAX / 8, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_mat_mul_rows(w, 4, 8, w, SIZE_MAX / 16, 0, 4, out),
                     DN_ERR_INVALID_ARGUMENT);
    dn_bf16_matrix huge = {w, out, (uint64_t)SIZE_MAX};
    assert_int_equal(dn_bf16_mat_vec_multi(&huge, 1, 8, x, NULL), DN_ERR_INVALID_ARGUMENT);
}

/* One oracle case against every form that computes it; the count of
   outputs that differ from ggml's. */
static size_t check_case(const uint16_t *w, size_t m, size_t k, size_t n, const float *x,
                         const float *y, dn_pool *pool, size_t *compared)
{
    size_t differ = 0;
    float *out = malloc(n * m * 4 + 4), *out2 = malloc(m * 4 + 4);
    uint16_t *a16 = malloc(n * k * 2 + 2);
    assert_true(out && out2 && a16);
    for (int use_pool = 0; use_pool < 2; use_pool++) {
        for (size_t i = 0; i < n * m; i++) out[i] = -1.0f;
        assert_int_equal(dn_bf16_mat_mul(w, m, k, x, n, out, use_pool ? pool : NULL), DN_OK);
        for (size_t i = 0; i < n * m; i++) {
            if (tbits(out[i]) != tbits(y[i]) && differ++ < 5)
                printf("  m %zu k %zu n %zu pool %d out %zu: ggml 0x%08x, ours 0x%08x\n", m, k, n,
                       use_pool, i, tbits(y[i]), tbits(out[i]));
            (*compared)++;
        }
    }
    /* the row-range form, split at row m / 2 + 1 */
    assert_int_equal(dn_bf16_from_f32(x, a16, n * k), DN_OK);
    size_t split = m / 2 + 1 > m ? m : m / 2 + 1;
    for (size_t i = 0; i < n * m; i++) out[i] = -1.0f;
    assert_int_equal(dn_bf16_mat_mul_rows(w, m, k, a16, n, 0, split, out), DN_OK);
    assert_int_equal(dn_bf16_mat_mul_rows(w, m, k, a16, n, split, m, out), DN_OK);
    for (size_t i = 0; i < n * m; i++) differ += tbits(out[i]) != tbits(y[i]);
    if (n == 1) {
        assert_int_equal(dn_bf16_mat_vec(w, m, k, x, out, pool), DN_OK);
        for (size_t i = 0; i < m; i++) differ += tbits(out[i]) != tbits(y[i]);
        assert_int_equal(dn_bf16_mat_vec_rows(w, m, k, a16, 0, m, out), DN_OK);
        for (size_t i = 0; i < m; i++) differ += tbits(out[i]) != tbits(y[i]);
        dn_bf16_matrix mats[2] = {{w, out, m}, {w, out2, m}};
        assert_int_equal(dn_bf16_mat_vec_multi(mats, 2, k, x, pool), DN_OK);
        for (size_t i = 0; i < m; i++)
            differ += (tbits(out[i]) != tbits(y[i])) + (tbits(out2[i]) != tbits(y[i]));
    }
    free(out);
    free(out2);
    free(a16);
    return differ;
}

/* A product of 600 columns (75 groups of eight, past any chunk of columns
   a kernel takes at a time) over 52 rows: every output the tinyBLAS dot of
   its row and column, with and without a pool. Values normal bfloat16 of
   fields 110-140, so a vdpbf16ps kernel's guard holds, but for groups
   3, 40 and 74, one of whose columns holds values of field 0 or 1
   (products and sums in the subnormal range, which vdpbf16ps would
   flush): they take the FMA rows, and a group's guard field read at the
   wrong index shows. */
static void many_columns_each_its_dot(void **state)
{
    (void)state;
    enum { R = 52, K = 64, N = 600 };
    uint16_t *w = malloc(R * K * sizeof *w), *x = malloc(N * K * sizeof *x);
    float *act = malloc(N * K * sizeof *act), *out = malloc(N * R * sizeof *out);
    assert_non_null(w), assert_non_null(x), assert_non_null(act), assert_non_null(out);
    uint32_t z = 12345u;
    for (size_t i = 0; i < R * K + N * K; i++) {
        z = z * 1664525u + 1013904223u;
        uint16_t h =
            (uint16_t)(((z >> 31) << 15) | ((110 + (z >> 8) % 31) << 7) | ((z >> 16) & 127));
        if (i < R * K)
            w[i] = h;
        else
            x[i - R * K] = h;
    }
    const size_t odd[3] = {3, 40, 74};
    for (int g = 0; g < 3; g++)
        for (size_t i = 0; i < K; i++) x[(8 * odd[g] + 5) * K + i] &= 0x80FF; /* field 0, 1 */
    assert_int_equal(dn_bf16_widen(x, act, N * K), DN_OK);
    dn_pool *pool = dn_pool_create(2);
    assert_non_null(pool);
    for (int use_pool = 0; use_pool < 2; use_pool++) {
        assert_int_equal(dn_bf16_mat_mul(w, R, K, act, N, out, use_pool ? pool : NULL), DN_OK);
        for (size_t c = 0; c < N; c++)
            for (size_t r = 0; r < R; r++) {
                float want;
                assert_int_equal(dn_bf16_dot(DN_F16_PATH_SGEMM, w + r * K, x + c * K, K, &want),
                                 DN_OK);
                assert_same_float(out[c * R + r], want);
            }
    }
    dn_pool_destroy(pool);
    free(w), free(x), free(act), free(out);
}

/* The real ggml's outputs, every one, with and without a pool; the
   row-range form; one-column cases also through mat_vec and mat_vec_multi. */
static void oracle_ggml_matmul(void **state)
{
    (void)state;
    oracle_file f;
    if (!oracle_open(&f, "ggml-bf16-matmul.bin")) {
        printf("  oracle %s/ggml-bf16-matmul.bin is absent: skipped\n", DN_ORACLE_DIR);
        skip();
    }
    assert_true(oracle_has(&f, 12) && memcmp(f.data, "DNBF16M1", 8) == 0);
    f.pos = 8;
    uint32_t cases = oracle_u32(&f);
    dn_pool *pool = dn_pool_create(2);
    assert_non_null(pool);
    size_t compared = 0, differ = 0, sgemm_cases = 0;
    for (uint32_t c = 0; c < cases; c++) {
        assert_true(oracle_has(&f, 16));
        size_t m = oracle_u32(&f), k = oracle_u32(&f), n = oracle_u32(&f), path = oracle_u32(&f);
        assert_true(oracle_has(&f, 2 * m * k + 4 * n * k + 4 * n * m));
        uint16_t *w = malloc(m * k * 2 + 2);
        float *x = malloc(n * k * 4 + 4), *y = malloc(n * m * 4 + 4);
        assert_true(w && x && y);
        for (size_t i = 0; i < m * k; i++) w[i] = oracle_u16(&f);
        for (size_t i = 0; i < n * k; i++) x[i] = oracle_f32(&f);
        for (size_t i = 0; i < n * m; i++) y[i] = oracle_f32(&f);
        assert_int_equal(dn_f16_takes_sgemm(m, k, n), path != 0);
        sgemm_cases += path != 0;
        size_t d = check_case(w, m, k, n, x, y, pool, &compared);
        if (d) printf("  case %u (m %zu k %zu n %zu path %zu): %zu differ\n", c, m, k, n, path, d);
        differ += d;
        free(w);
        free(x);
        free(y);
    }
    dn_pool_destroy(pool);
    free(f.data);
    printf("  ggml oracle: %u cases (%zu tinyBLAS), %zu outputs compared with and without a pool, "
           "isa %s, %zu differ\n",
           cases, sgemm_cases, compared, dn_isa_name(dn_isa_active()), differ);
    assert_int_equal(compared, 2 * 7404);
    assert_int_equal(differ, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_two_reductions_differ),
        cmocka_unit_test(vec_dot_rounds_each_product),
        cmocka_unit_test(vec_dot_pairs_as_tinyblas),
        cmocka_unit_test(vec_dot_tail_is_double),
        cmocka_unit_test(conversions_follow_ggml),
        cmocka_unit_test(arguments_are_checked),
        cmocka_unit_test(sizes_beyond_memory_are_invalid),
        cmocka_unit_test(many_columns_each_its_dot),
        cmocka_unit_test(oracle_ggml_matmul),
    };
    return cmocka_run_group_tests_name("bf16", tests, NULL, NULL);
}
