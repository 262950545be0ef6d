/* SPDX-License-Identifier: MIT */
/*
 * The ggml-compatible F16 module: every output of ../shared/oracle's
 * ggml-f16-matmul.bin (computed by the real ggml) reproduced bit for bit with
 * no pool and with a pool of two threads, under whichever ISA DECODENUM_ISA
 * selects; the path rule; the two reductions' and the double tail's effect
 * on bits, derived by hand; conversions against the F16C instructions.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "decodenum.h"
#include "oracle.h"
#include "testutil.h"

/* Products that are exactly 2^24, then ones: the order of the adds decides. */
static void make_ordered_row(uint16_t *w, uint16_t *x, size_t k, const size_t *ones, size_t nones)
{
    for (size_t i = 0; i < k; i++) w[i] = x[i] = 0;
    w[0] = x[0] = 0x6C00; /* 4096 * 4096 = 2^24 */
    for (size_t i = 0; i < nones; i++) w[ones[i]] = x[ones[i]] = 0x3C00;
}

/* vec_dot folds element 0's lane with element 16's, then with (8 + 24):
   (2^24 + 1) + (1 + 1) = 2^24 + 2. tinyBLAS chains lane 0 through 8, 16,
   24 in order: ((2^24 + 1) + 1) + 1, each add a tie to even: 2^24. */
static void the_two_reductions_differ(void **state)
{
    (void)state;
    uint16_t w[32], x[32];
    const size_t ones[3] = {8, 16, 24};
    make_ordered_row(w, x, 32, ones, 3);
    float v, s;
    assert_int_equal(dn_f16_dot(DN_F16_PATH_VEC_DOT, w, x, 32, &v), DN_OK);
    assert_int_equal(dn_f16_dot(DN_F16_PATH_SGEMM, w, x, 32, &s), DN_OK);
    assert_same_float(v, 0x1p24f + 2.0f);
    assert_same_float(s, 0x1p24f);
    /* the same holds inside products: 4 rows x 32, two columns */
    uint16_t wm[4 * 32];
    float act[2 * 32], out[8];
    for (int r = 0; r < 4; r++) memcpy(wm + 32 * r, w, sizeof w);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 32; i++) act[32 * c + i] = dn_f16_to_f32(x[i]);
    assert_true(dn_f16_takes_sgemm(4, 32, 2));
    assert_int_equal(dn_f16_mat_mul(wm, 4, 32, act, 2, out, NULL), DN_OK);
    for (int i = 0; i < 8; i++) assert_same_float(out[i], 0x1p24f);
    assert_int_equal(dn_f16_mat_mul(wm, 4, 32, act, 1, out, NULL), DN_OK); /* one column: vec_dot */
    for (int i = 0; i < 4; i++) assert_same_float(out[i], 0x1p24f + 2.0f);
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
    assert_int_equal(dn_f16_dot(DN_F16_PATH_VEC_DOT, w, x, 34, &v), DN_OK);
    assert_same_float(v, 0x1p24f + 2.0f);
    assert_int_equal(dn_f16_dot(DN_F16_PATH_VEC_DOT, w, x, 33, &v), DN_OK);
    assert_same_float(v, 0x1p24f); /* 2^24 + 1 in double rounds to even */
    assert_int_equal(dn_f16_dot(DN_F16_PATH_SGEMM, w, x, 33, &v), DN_ERR_INVALID_ARGUMENT);
}

static void path_rule(void **state)
{
    (void)state;
    assert_true(dn_f16_takes_sgemm(4, 8, 2));
    assert_false(dn_f16_takes_sgemm(4, 8, 1));   /* one column: never */
    assert_false(dn_f16_takes_sgemm(13, 8, 2));  /* rows % 4 */
    assert_false(dn_f16_takes_sgemm(12, 12, 2)); /* k % 8 */
    assert_true(dn_f16_takes_sgemm(12, 1600, 6));
}

/* F16C's rules, derived from the instruction's definition: nearest even;
   a NaN keeps its sign and top 9 payload bits, made quiet. */
static void conversions_follow_f16c(void **state)
{
    (void)state;
    const float x[6] = {65520.0f, 0x1p-25f, 0x1.8p-24f, tf(0xFFC12345), tf(0x7F800001), -0.0f};
    uint16_t h[6];
    assert_int_equal(dn_f16_from_f32(x, h, 6), DN_OK);
    assert_int_equal(h[0], 0x7C00);
    assert_int_equal(h[1], 0x0000);
    assert_int_equal(h[2], 0x0002);
    assert_int_equal(h[3], 0xFE09); /* payload 0x412345 >> 13 = 0x209, low 9 bits 0x009 */
    assert_int_equal(h[4], 0x7E00); /* a signalling NaN made quiet */
    assert_int_equal(h[5], 0x8000);
    const uint16_t hh[3] = {0xFD23, 0x0001, 0x7BFF};
    float y[3];
    assert_int_equal(dn_f16_widen(hh, y, 3), DN_OK);
    assert_bits(y[0], 0xFFC00000u | (0x123u << 13)); /* quiet bit set, payload kept */
    assert_same_float(y[1], 0x1p-24f);
    assert_same_float(y[2], 65504.0f);
    const uint8_t bytes[4] = {0x00, 0x3C, 0xFF, 0x7B}; /* little-endian 1.0, 65504 */
    assert_int_equal(dn_f16_dequantize_row(bytes, y, 2), DN_OK);
    assert_same_float(y[0], 1.0f);
    assert_same_float(y[1], 65504.0f);
}

/* mad: one fused multiply-add in f32, then nearest even to binary16. */
static void mad_and_scale(void **state)
{
    (void)state;
    uint16_t acc[3] = {0x3C00, 0x3C00, 0x7BFF};
    const uint16_t v[3] = {0x3C00, 0x3C00, 0x7BFF};
    /* 1 + 2^-11 is a binary16 tie: to even 1.0; 1 + 3*2^-11 goes up to 1 + 2^-9 */
    assert_int_equal(dn_f16_mad(acc, v, 0x1p-11f, 1), DN_OK);
    assert_int_equal(acc[0], 0x3C00);
    assert_int_equal(dn_f16_mad(acc + 1, v + 1, 0x1.8p-10f, 1), DN_OK);
    assert_int_equal(acc[1], 0x3C02);
    assert_int_equal(dn_f16_mad(acc + 2, v + 2, 1.0f, 1), DN_OK); /* 131008 overflows */
    assert_int_equal(acc[2], 0x7C00);
    assert_int_equal(dn_f16_scale(acc + 2, 0.0f, 1), DN_OK); /* inf * 0 */
    assert_int_equal(acc[2], DN_F16_NAN_F16_BITS);
    uint16_t one = 0x3C00;
    assert_int_equal(dn_f16_scale(&one, 0.5f, 1), DN_OK);
    assert_int_equal(one, 0x3800);
    assert_int_equal(dn_f16_mad(NULL, v, 1.0f, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_scale(NULL, 1.0f, 0), DN_OK);
}

static void arguments_are_checked(void **state)
{
    (void)state;
    float out[4];
    uint16_t w[8] = {0};
    const float x[8] = {0};
    assert_int_equal(dn_f16_mat_vec(NULL, 1, 8, x, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_vec(w, 0, 8, x, NULL, NULL), DN_OK);
    assert_int_equal(dn_f16_mat_mul(w, SIZE_MAX, 8, x, 1, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_mul_rows(w, 1, 8, w, 1, 1, 2, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_mul_rows(w, 1, 8, w, 1, 1, 0, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_dot((dn_f16_path)9, w, w, 8, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_vec_multi(NULL, 1, 8, x, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_vec_multi(NULL, 0, 8, x, NULL), DN_OK);
    /* k = 0: every output is +0 */
    out[0] = 1.0f;
    assert_int_equal(dn_f16_mat_vec(w, 1, 0, NULL, out, NULL), DN_OK);
    assert_bits(out[0], 0);
}

/* Sizes whose bytes do not fit size_t are invalid arguments, found before
   any allocation (a wrapped size would allocate too little and the widening
   would write past it). */
static void sizes_beyond_memory_are_invalid(void **state)
{
    (void)state;
    float out[4];
    uint16_t w[8] = {0};
    const float x[8] = {0};
    const size_t k_wraps = SIZE_MAX / sizeof(float) + 1; /* k * 4 wraps to 0 */
    assert_int_equal(dn_f16_dot(DN_F16_PATH_VEC_DOT, w, w, k_wraps, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_dot(DN_F16_PATH_SGEMM, w, w, k_wraps & ~(size_t)7, out),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_vec(w, 4, SIZE_MAX / 2 + 1, x, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_mul(w, 4, 8, x, SIZE_MAX / 8, out, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f16_mat_mul_rows(w, 4, 8, w, SIZE_MAX / 16, 0, 4, out),
                     DN_ERR_INVALID_ARGUMENT);
}

/* One 16-bit weight type's entry points, for tests that run both. */
typedef struct w16_api {
    const char *name;
    dn_status (*dot)(dn_f16_path, const uint16_t *, const uint16_t *, size_t, float *);
    dn_status (*widen)(const uint16_t *, float *, size_t);
    dn_status (*mat_vec)(const uint16_t *, size_t, size_t, const float *, float *, dn_pool *);
    dn_status (*rows)(const uint16_t *, size_t, size_t, const uint16_t *, size_t, size_t, float *);
    dn_status (*from_f32)(const float *, uint16_t *, size_t);
    dn_status (*mat_mul_path)(dn_f16_path, const uint16_t *, size_t, size_t, const float *, size_t,
                              float *, dn_pool *);
    dn_status (*mat_mul_path_rows)(dn_f16_path, const uint16_t *, size_t, size_t, const uint16_t *,
                                   size_t, size_t, size_t, float *);
    uint16_t sign, base; /* random patterns: sign | (base + 10 bits) */
} w16_api;

static const w16_api w16_apis[2] = {
    {"f16", dn_f16_dot, dn_f16_widen, dn_f16_mat_vec, dn_f16_mat_vec_rows, dn_f16_from_f32,
     dn_f16_mat_mul_path, dn_f16_mat_mul_path_rows, 0x8000, 0x2C00},
    {"bf16", dn_bf16_dot, dn_bf16_widen, dn_bf16_mat_vec, dn_bf16_mat_vec_rows, dn_bf16_from_f32,
     dn_bf16_mat_mul_path, dn_bf16_mat_mul_path_rows, 0x8000, 0x3C00},
};

/* out[c*rows + r] = dot(path, row r, column c rounded to the type), one
   element at a time. */
static void dots_one_by_one(const w16_api *a, dn_f16_path path, const uint16_t *w, size_t rows,
                            size_t k, const float *act, size_t n, uint16_t *col, float *out)
{
    for (size_t c = 0; c < n; c++) {
        assert_int_equal(a->from_f32(act + c * k, col, k), DN_OK);
        for (size_t r = 0; r < rows; r++)
            assert_int_equal(a->dot(path, w + r * k, col, k, &out[c * rows + r]), DN_OK);
    }
}

/* One shape of mat_mul_path_is_per_element on both paths: the outputs that
   differ from each element's dn_*_dot. */
typedef struct path_bufs {
    uint16_t *w, *col, *col16;
    float *act, *want, *got;
    dn_pool *pools[3];
} path_bufs;

static size_t path_case(const w16_api *a, path_bufs *b, size_t rows, size_t k, size_t n)
{
    size_t differ = 0;
    for (int path = 0; path < 2; path++) {
        if (path == DN_F16_PATH_SGEMM && k % 8 != 0) {
            assert_int_equal(
                a->mat_mul_path(DN_F16_PATH_SGEMM, b->w, rows, k, b->act, n, b->got, NULL),
                DN_ERR_INVALID_ARGUMENT);
            continue;
        }
        dots_one_by_one(a, (dn_f16_path)path, b->w, rows, k, b->act, n, b->col, b->want);
        for (int p = 0; p < 3; p++) {
            memset(b->got, 0xA5, rows * n * 4);
            assert_int_equal(
                a->mat_mul_path((dn_f16_path)path, b->w, rows, k, b->act, n, b->got, b->pools[p]),
                DN_OK);
            for (size_t i = 0; i < rows * n; i++) differ += tbits(b->got[i]) != tbits(b->want[i]);
        }
        /* the row-range form on [r0, r1): those rows, the others untouched */
        size_t r0 = rows / 3, r1 = rows - rows / 4;
        for (size_t c = 0; c < n; c++)
            assert_int_equal(a->from_f32(b->act + c * k, b->col16 + c * k, k), DN_OK);
        memset(b->got, 0xA5, rows * n * 4);
        assert_int_equal(
            a->mat_mul_path_rows((dn_f16_path)path, b->w, rows, k, b->col16, n, r0, r1, b->got),
            DN_OK);
        for (size_t c = 0; c < n; c++)
            for (size_t r = 0; r < rows; r++)
                differ += tbits(b->got[c * rows + r]) !=
                          (r >= r0 && r < r1 ? tbits(b->want[c * rows + r]) : 0xA5A5A5A5u);
        if (path == DN_F16_PATH_VEC_DOT)
            for (size_t c = 0; c < n; c++) {
                assert_int_equal(
                    a->mat_vec(b->w, rows, k, b->act + c * k, b->got + c * rows, b->pools[1]),
                    DN_OK);
                for (size_t r = 0; r < rows; r++)
                    differ += tbits(b->got[c * rows + r]) != tbits(b->want[c * rows + r]);
            }
    }
    return differ;
}

/* Bad arguments of both path forms. */
static void path_arguments_are_checked(const w16_api *a, path_bufs *b)
{
    assert_int_equal(a->mat_mul_path((dn_f16_path)2, b->w, 1, 8, b->act, 1, b->got, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(a->mat_mul_path(DN_F16_PATH_VEC_DOT, NULL, 1, 8, b->act, 1, b->got, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(a->mat_mul_path(DN_F16_PATH_VEC_DOT, b->w, 1, 8, b->act, 2, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(
        a->mat_mul_path(DN_F16_PATH_VEC_DOT, b->w, 4, 8, b->act, SIZE_MAX / 8, b->got, NULL),
        DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(a->mat_mul_path(DN_F16_PATH_VEC_DOT, b->w, 0, 8, b->act, 3, NULL, NULL),
                     DN_OK);
    assert_int_equal(a->mat_mul_path_rows((dn_f16_path)2, b->w, 4, 8, b->col16, 1, 0, 4, b->got),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(
        a->mat_mul_path_rows(DN_F16_PATH_SGEMM, b->w, 4, 12, b->col16, 1, 0, 4, b->got),
        DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(
        a->mat_mul_path_rows(DN_F16_PATH_VEC_DOT, b->w, 4, 8, b->col16, 2, 3, 2, b->got),
        DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(
        a->mat_mul_path_rows(DN_F16_PATH_VEC_DOT, b->w, 4, 8, b->col16, 2, 0, 5, b->got),
        DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(a->mat_mul_path_rows(DN_F16_PATH_VEC_DOT, b->w, 4, 8, NULL, 2, 0, 4, b->got),
                     DN_ERR_INVALID_ARGUMENT);
}

/* dn_f16_mat_mul_path / dn_bf16_mat_mul_path: every output is its own
   dn_*_dot on the named path, for any number of columns (1-13: the kernels'
   groups of columns and their remainders), rows (1-70: blocks of rows and
   their remainders), k (every tail of 32, past the kernels' blocks of k),
   with no pool and with pools of 2 and 3 threads, and the row-range form
   on a middle range (the other outputs untouched); the vec_dot path's
   columns are also each one dn_*_mat_vec's. Another path, SGEMM with
   k % 8 != 0 and a bad row range are invalid arguments. */
static void mat_mul_path_is_per_element(void **state)
{
    (void)state;
    static const size_t ks[] = {1, 31, 64, 200, 1056, 2087, 4160};
    static const size_t shapes[][2] = {{1, 1}, {5, 2}, {37, 6}, {70, 13}, {3, 8}, {33, 7}};
    enum { MAXR = 70, MAXN = 13, MAXK = 4160 };
    path_bufs b = {malloc((size_t)MAXR * MAXK * 2),
                   malloc(MAXK * 2),
                   malloc((size_t)MAXN * MAXK * 2),
                   malloc((size_t)MAXN * MAXK * 4),
                   malloc(MAXR * MAXN * 4),
                   malloc(MAXR * MAXN * 4),
                   {NULL, dn_pool_create(2), dn_pool_create(3)}};
    assert_true(b.w && b.col && b.col16 && b.act && b.want && b.got && b.pools[1] && b.pools[2]);
    uint64_t seed = 0xC0105;
    for (int t = 0; t < 2; t++) {
        const w16_api *a = &w16_apis[t];
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                size_t k = ks[ki], rows = shapes[si][0], n = shapes[si][1];
                for (size_t i = 0; i < rows * k; i++)
                    b.w[i] = (uint16_t)((splitmix(&seed) & a->sign) |
                                        (a->base + (splitmix(&seed) & 1023)));
                for (size_t i = 0; i < n * k; i++)
                    b.act[i] = (float)((int64_t)(splitmix(&seed) % 2001) - 1000) / 256.0f;
                size_t differ = path_case(a, &b, rows, k, n);
                if (differ)
                    printf("  %s %zu x %zu, n %zu: %zu outputs differ\n", a->name, rows, k, n,
                           differ);
                assert_int_equal(differ, 0);
            }
        path_arguments_are_checked(a, &b);
    }
    dn_pool_destroy(b.pools[1]);
    dn_pool_destroy(b.pools[2]);
    free(b.w), free(b.col), free(b.col16), free(b.act), free(b.want), free(b.got);
}

/* Every pointer placement gives the same bits: weights 0, 16, 32 and 48
   bytes past a cache line (GGUF aligns tensors to 32 bytes; the AVX-512
   BF16 stream once loaded 64 bytes at a time and is now split in halves),
   the activation's patterns at any 2-byte offset (the rows forms copy them
   into line-aligned memory), rows long enough for each ISA's one-row
   streams (on floats at 2048, on patterns past 4096, the blocks past
   8192). Each row against dn_*_dot, one row at a time. */
static void any_placement_same_bits(void **state)
{
    (void)state;
    static const size_t ks[] = {2048, 4104, 8192, 8232};
    enum { ROWS = 9, MAXK = 8232, PAD = 32 };
    uint16_t *w = malloc((ROWS * MAXK + PAD) * 2), *wb = malloc((ROWS * MAXK + PAD) * 2 + 64);
    uint16_t *x = malloc(MAXK * 2), *xb = malloc((MAXK + PAD) * 2);
    float *xf = malloc((MAXK + PAD) * 4), *want = malloc(ROWS * 4), *out = malloc(ROWS * 4);
    assert_true(w && wb && x && xb && xf && want && out);
    uint16_t *wline = (uint16_t *)(((uintptr_t)wb + 63) & ~(uintptr_t)63);
    uint64_t seed = 0x5eed;
    for (int t = 0; t < 2; t++) {
        const w16_api *a = &w16_apis[t];
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            size_t k = ks[ki], differ = 0;
            for (size_t i = 0; i < ROWS * k; i++)
                w[i] =
                    (uint16_t)((splitmix(&seed) & a->sign) | (a->base + (splitmix(&seed) & 1023)));
            for (size_t i = 0; i < k; i++)
                x[i] =
                    (uint16_t)((splitmix(&seed) & a->sign) | (a->base + (splitmix(&seed) & 1023)));
            for (size_t r = 0; r < ROWS; r++)
                assert_int_equal(a->dot(DN_F16_PATH_VEC_DOT, w + r * k, x, k, &want[r]), DN_OK);
            for (size_t wo = 0; wo < 32; wo += 8)
                for (size_t xo = 0; xo < 32; xo += 7) {
                    memcpy(wline + wo, w, ROWS * k * 2);
                    memcpy(xb + xo, x, k * 2);
                    assert_int_equal(a->rows(wline + wo, ROWS, k, xb + xo, 0, ROWS, out), DN_OK);
                    for (size_t r = 0; r < ROWS; r++) differ += tbits(out[r]) != tbits(want[r]);
                    assert_int_equal(a->widen(x, xf + xo, k), DN_OK);
                    assert_int_equal(a->mat_vec(wline + wo, ROWS, k, xf + xo, out, NULL), DN_OK);
                    for (size_t r = 0; r < ROWS; r++) differ += tbits(out[r]) != tbits(want[r]);
                }
            if (differ) printf("  %s k %zu: %zu outputs differ\n", a->name, k, differ);
            assert_int_equal(differ, 0);
        }
    }
    free(w), free(wb), free(x), free(xb), free(xf), free(want), free(out);
}

static void pools_come_and_go(void **state)
{
    (void)state;
    for (int i = 0; i < 50; i++) {
        dn_pool *p = dn_pool_create((unsigned)(1 + i % 4));
        assert_non_null(p);
        assert_int_equal(dn_pool_threads(p), (unsigned)(1 + i % 4));
        dn_pool_destroy(p);
    }
    dn_pool_destroy(NULL);
    assert_null(dn_pool_create(100000));
    dn_pool *p = dn_pool_create(0);
    assert_non_null(p);
    assert_true(dn_pool_threads(p) >= 1);
    dn_pool_destroy(p);
    assert_int_equal(dn_pool_threads(NULL), 1);
}

/* The real ggml's outputs, every one, with and without a pool; the row-range
   form, split at an odd row, gives the same outputs; one-column cases also
   through dn_f16_mat_vec and dn_f16_mat_vec_multi. */
static void oracle_ggml_matmul(void **state)
{
    (void)state;
    oracle_file f;
    if (!oracle_open(&f, "ggml-f16-matmul.bin")) {
        printf("  oracle %s/ggml-f16-matmul.bin is absent: skipped\n", DN_ORACLE_DIR);
        skip();
    }
    assert_true(oracle_has(&f, 12) && memcmp(f.data, "DNF16MM1", 8) == 0);
    f.pos = 8;
    uint32_t cases = oracle_u32(&f);
    dn_pool *pool = dn_pool_create(2);
    assert_non_null(pool);
    size_t compared = 0, differ = 0, sgemm_cases = 0;
    for (uint32_t c = 0; c < cases; c++) {
        assert_true(oracle_has(&f, 16));
        size_t m = oracle_u32(&f), k = oracle_u32(&f), n = oracle_u32(&f), path = oracle_u32(&f);
        assert_true(oracle_has(&f, 2 * m * k + 4 * n * k + 4 * n * m));
        uint16_t *w = malloc(m * k * 2), *a16 = malloc(n * k * 2);
        float *x = malloc(n * k * 4), *y = malloc(n * m * 4), *out = malloc(n * m * 4);
        for (size_t i = 0; i < m * k; i++) w[i] = oracle_u16(&f);
        for (size_t i = 0; i < n * k; i++) x[i] = oracle_f32(&f);
        for (size_t i = 0; i < n * m; i++) y[i] = oracle_f32(&f);
        assert_int_equal(dn_f16_takes_sgemm(m, k, n), path != 0);
        sgemm_cases += path != 0;
        for (int use_pool = 0; use_pool < 2; use_pool++) {
            for (size_t i = 0; i < n * m; i++) out[i] = -1.0f;
            assert_int_equal(dn_f16_mat_mul(w, m, k, x, n, out, use_pool ? pool : NULL), DN_OK);
            for (size_t i = 0; i < n * m; i++) {
                if (tbits(out[i]) != tbits(y[i]) && differ++ < 5)
                    printf("  case %u (m %zu k %zu n %zu path %zu) pool %d out %zu: ggml 0x%08x, "
                           "ours 0x%08x\n",
                           c, m, k, n, path, use_pool, i, tbits(y[i]), tbits(out[i]));
                compared++;
            }
        }
        /* the row-range form, split at row m / 2 + 1 */
        assert_int_equal(dn_f16_from_f32(x, a16, n * k), DN_OK);
        size_t split = m / 2 + 1 > m ? m : m / 2 + 1;
        for (size_t i = 0; i < n * m; i++) out[i] = -1.0f;
        assert_int_equal(dn_f16_mat_mul_rows(w, m, k, a16, n, 0, split, out), DN_OK);
        assert_int_equal(dn_f16_mat_mul_rows(w, m, k, a16, n, split, m, out), DN_OK);
        for (size_t i = 0; i < n * m; i++) differ += tbits(out[i]) != tbits(y[i]);
        if (n == 1) {
            assert_int_equal(dn_f16_mat_vec(w, m, k, x, out, pool), DN_OK);
            for (size_t i = 0; i < m; i++) differ += tbits(out[i]) != tbits(y[i]);
            assert_int_equal(dn_f16_mat_vec_rows(w, m, k, a16, 0, m, out), DN_OK);
            for (size_t i = 0; i < m; i++) differ += tbits(out[i]) != tbits(y[i]);
            float *out2 = malloc(m * 4);
            dn_f16_matrix mats[2] = {{w, out, m}, {w, out2, m}};
            assert_int_equal(dn_f16_mat_vec_multi(mats, 2, k, x, pool), DN_OK);
            for (size_t i = 0; i < m; i++)
                differ += (tbits(out[i]) != tbits(y[i])) + (tbits(out2[i]) != tbits(y[i]));
            free(out2);
        }
        free(w);
        free(a16);
        free(x);
        free(y);
        free(out);
    }
    dn_pool_destroy(pool);
    free(f.data);
    printf("  ggml oracle: %u cases (%zu tinyBLAS), %zu outputs compared with and without a pool, "
           "isa %s, %zu differ\n",
           cases, sgemm_cases, compared, dn_isa_name(dn_isa_active()), differ);
    assert_int_equal(compared, 2 * 7404);
    assert_int_equal(differ, 0);
}

/* Repeated products of one shape take their working memory from the heap
   without returning it to the system between calls: at k = 4096, n = 64
   the rounded columns and tinyBLAS's packed copy of them are 1 MiB each,
   and as two blocks glibc trimmed the heap's top after every call, so each
   call faulted 2 MiB of pages back in (512 faults; 4096^2 on two threads
   at 0.65x the speed). Counted with getrusage where the allocator is
   glibc's own (a sanitizer's allocator keeps freed blocks aside). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DN_TEST_OWN_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DN_TEST_OWN_ALLOCATOR 1
#endif
static void steady_products_fault_no_pages(void **state)
{
    (void)state;
#if defined(__GLIBC__) && !defined(DN_TEST_OWN_ALLOCATOR)
    enum { ROWS = 4, K = 4096, N = 64, CALLS = 8 };
    uint16_t *w = malloc((size_t)ROWS * K * 2);
    float *act = malloc((size_t)N * K * 4), *out = malloc((size_t)N * ROWS * 4);
    assert_true(w && act && out);
    for (size_t i = 0; i < (size_t)ROWS * K; i++) w[i] = (uint16_t)(0x3800 + (i & 255));
    for (size_t i = 0; i < (size_t)N * K; i++) act[i] = (float)(i % 97) * 0.25f;
    for (int c = 0; c < 2; c++) /* the heap grows to the product's size */
        assert_int_equal(dn_f16_mat_mul(w, ROWS, K, act, N, out, NULL), DN_OK);
    struct rusage before, after;
    assert_int_equal(getrusage(RUSAGE_SELF, &before), 0);
    for (int c = 0; c < CALLS; c++)
        assert_int_equal(dn_f16_mat_mul(w, ROWS, K, act, N, out, NULL), DN_OK);
    assert_int_equal(getrusage(RUSAGE_SELF, &after), 0);
    long faults = after.ru_minflt - before.ru_minflt;
    if (faults >= 64) fprintf(stderr, "%ld page faults in %d calls\n", faults, CALLS);
    assert_true(faults < 64); /* two blocks trimmed: 512 a call */
    free(w);
    free(act);
    free(out);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_two_reductions_differ),
        cmocka_unit_test(vec_dot_tail_is_double),
        cmocka_unit_test(path_rule),
        cmocka_unit_test(conversions_follow_f16c),
        cmocka_unit_test(mad_and_scale),
        cmocka_unit_test(arguments_are_checked),
        cmocka_unit_test(sizes_beyond_memory_are_invalid),
        cmocka_unit_test(any_placement_same_bits),
        cmocka_unit_test(mat_mul_path_is_per_element),
        cmocka_unit_test(pools_come_and_go),
        cmocka_unit_test(steady_products_fault_no_pages),
        cmocka_unit_test(oracle_ggml_matmul),
    };
    return cmocka_run_group_tests_name("f16", tests, NULL, NULL);
}
