/* SPDX-License-Identifier: MIT */
/*
 * Repacked matrices (decodenum/repack.h), on the active ISA (the suite runs
 * under each DECODENUM_ISA):
 *
 *  - unpack(repack(w)) == w byte for byte, every format, row counts around
 *    the interleave (1, 3, 4, 5, 7, 9, 70), n with a short last chunk;
 *  - every product on the repacked matrix (mat_vec, its row ranges, mat_mul
 *    and its row and column ranges) equals the same product on the plain
 *    matrix bit for bit (the plain one is held to dn_dot by test_dot and
 *    test_dot_act), pools of 0 to 2 threads, both scalings and word counts,
 *    columns of ordinary values, exponents spread far, zeros and integers;
 *  - Q8_0's and Q6_K's interleaved layouts byte by byte, and a row of ones
 *    among zero rows lighting its own output alone (a row read in another's
 *    lane);
 *  - an unreadable block named as on the plain matrix;
 *  - every argument error, before anything is written.
 */
#include <math.h>
#include <stdlib.h>

#include "decodenum.h"
#include "random_blocks.h"
#include "testutil.h"

static const dn_type types[] = {DN_TYPE_Q4_0, DN_TYPE_Q4_1, DN_TYPE_Q5_0,   DN_TYPE_Q5_1,
                                DN_TYPE_Q8_0, DN_TYPE_Q2_K, DN_TYPE_Q3_K,   DN_TYPE_Q4_K,
                                DN_TYPE_Q5_K, DN_TYPE_Q6_K, DN_TYPE_IQ4_NL, DN_TYPE_IQ4_XS};
#define NTYPES (sizeof types / sizeof types[0])
#define COLS 4

static void columns(uint64_t *s, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)between(s, -2000, 2000) / 1000.0f * (i % 50 ? 1.0f : 40.0f);
        x[n + i] = ldexpf((float)between(s, -1000, 1000), (int)between(s, -60, 60));
        x[2 * n + i] = 0.0f;
        x[3 * n + i] = (float)between(s, -3, 3);
    }
}

#define assert_same(got, want, count) assert_same_at(got, want, count, __LINE__)
static void assert_same_at(const float *got, const float *want, size_t count, int line)
{
    for (size_t i = 0; i < count; i++) {
        if (tbits(got[i]) != tbits(want[i])) print_message("line %d, element %zu\n", line, i);
        assert_int_equal(tbits(got[i]), tbits(want[i]));
    }
}

static uint8_t *repack_of(dn_type t, const uint8_t *w, size_t rows, size_t n)
{
    const size_t row_bytes = n / dn_type_block_elements(t) * dn_type_block_bytes(t);
    size_t bytes = 0;
    assert_int_equal(dn_repack_size(t, rows, n, &bytes), DN_OK);
    assert_int_equal(bytes, (rows + DN_REPACK_ROWS - 1) / DN_REPACK_ROWS * DN_REPACK_ROWS *
                                row_bytes); /* the documented cost */
    uint8_t *p = malloc(bytes + 1), *back = malloc(rows * row_bytes);
    assert_true(p && back);
    memset(p, 0xA5, bytes + 1);
    assert_int_equal(dn_repack(t, w, rows, n, p + 1, bytes), DN_OK); /* an odd address */
    memset(back, 0x5A, rows * row_bytes);
    assert_int_equal(dn_repack_unpack(t, p + 1, rows, n, back, rows * row_bytes), DN_OK);
    assert_memory_equal(back, w, rows * row_bytes);
    free(back);
    return p;
}

/* Every product form on the repacked matrix p + 1 against the plain w. */
static void products_of(const dn_act *act, dn_type t, const uint8_t *w, const uint8_t *p,
                        size_t rows, dn_pool *const pools[3], uint64_t *s)
{
    float *want = malloc(COLS * rows * sizeof *want), *got = malloc(COLS * rows * sizeof *got);
    assert_true(want && got);
    for (int q = 0; q < 3; q++) {
        for (size_t c = 0; c < COLS; c++) {
            assert_int_equal(dn_act_mat_vec(act, c, t, w, rows, want, pools[q], NULL), DN_OK);
            memset(got, 0xFF, rows * sizeof *got);
            assert_int_equal(dn_repacked_mat_vec(act, c, t, p, rows, got, pools[q], NULL), DN_OK);
            assert_same(got, want, rows);
        }
        assert_int_equal(dn_act_mat_mul(act, t, w, rows, want, pools[q], NULL), DN_OK);
        memset(got, 0xFF, COLS * rows * sizeof *got);
        assert_int_equal(dn_repacked_mat_mul(act, t, p, rows, got, pools[q], NULL), DN_OK);
        assert_same(got, want, COLS * rows);
    }
    memset(got, 0xFF, COLS * rows * sizeof *got);
    for (size_t r0 = 0; r0 < rows;) { /* row ranges starting and ending inside row groups */
        size_t r1 = r0 + (size_t)between(s, 1, 6);
        if (r1 > rows) r1 = rows;
        for (size_t c0 = 0; c0 < COLS;) {
            size_t c1 = c0 + (size_t)between(s, 1, 3);
            if (c1 > COLS) c1 = COLS;
            assert_int_equal(dn_repacked_mat_mul_rows(act, c0, c1, t, p, rows, r0, r1, got, NULL),
                             DN_OK);
            c0 = c1;
        }
        assert_int_equal(dn_repacked_mat_vec_rows(act, 3, t, p, rows, r0, r1, want, NULL), DN_OK);
        r0 = r1;
    }
    assert_same(want, got + 3 * rows, rows);
    assert_int_equal(dn_act_mat_mul(act, t, w, rows, want, NULL, NULL), DN_OK);
    assert_same(got, want, COLS * rows);
    free(want);
    free(got);
}

/* An infinite scale in row 2's last block: the plain product's status and
   *bad, for every form; rows before it still served. */
static void unreadable_named(const dn_act *act, dn_type t, uint8_t *w, size_t rows, size_t n,
                             dn_pool *const pools[3])
{
    const size_t blocks = n / dn_type_block_elements(t), bb = dn_type_block_bytes(t);
    int d_at, dm_at;
    block_scale_offsets(t, &d_at, &dm_at);
    const size_t blk = 2 * blocks + blocks - 1, d = (size_t)d_at;
    if (rows < 3) return;
    const uint8_t keep[2] = {w[blk * bb + d], w[blk * bb + d + 1]};
    put16(w + blk * bb + d, 0x7C00);
    uint8_t *p = repack_of(t, w, rows, n);
    float *out = malloc(COLS * rows * sizeof *out);
    assert_non_null(out);
    for (int q = 0; q < 3; q++) {
        size_t bad = 0;
        assert_int_equal(dn_repacked_mat_vec(act, 1, t, p + 1, rows, out, pools[q], &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, blk);
        bad = 0;
        assert_int_equal(dn_repacked_mat_mul(act, t, p + 1, rows, out, pools[q], &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, blk);
    }
    size_t bad = 0;
    assert_int_equal(dn_repacked_mat_vec_rows(act, 0, t, p + 1, rows, 1, rows, out, &bad),
                     DN_ERR_UNREADABLE_BLOCK);
    assert_int_equal(bad, blk);
    /* rows 0, 1 and 3 share its row group, and are served */
    assert_int_equal(dn_repacked_mat_vec_rows(act, 0, t, p + 1, rows, 0, 2, out, &bad), DN_OK);
    if (rows > 3)
        assert_int_equal(dn_repacked_mat_vec_rows(act, 0, t, p + 1, rows, 3, 4, out, &bad), DN_OK);
    w[blk * bb + d] = keep[0], w[blk * bb + d + 1] = keep[1];
    free(out);
    free(p);
}

static void one_shape(dn_type t, size_t rows, size_t n, dn_pool *const pools[3], uint64_t *s)
{
    const size_t blocks = n / dn_type_block_elements(t);
    uint8_t *w = malloc(rows * blocks * dn_type_block_bytes(t));
    float *x = malloc(COLS * n * sizeof *x);
    assert_true(w && x);
    random_blocks(s, t, w, rows * blocks);
    columns(s, x, n);
    uint8_t *p = repack_of(t, w, rows, n);
    for (int k = 0; k < 4; k++) {
        const dn_act_scaling scaling = k & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
        const dn_words words = k & 2 ? DN_WORDS_TWO : DN_WORDS_ONE;
        dn_act *act = NULL;
        assert_int_equal(dn_act_create(x, n, COLS, scaling, words, &act, NULL), DN_OK);
        products_of(act, t, w, p + 1, rows, pools, s);
        if (k == 0) unreadable_named(act, t, w, rows, n, pools);
        dn_act_destroy(act);
    }
    free(p);
    free(w);
    free(x);
}

static void repacked_equals_plain(void **state)
{
    (void)state;
    uint64_t seed = 0x72657061636b3031u;
    test_seed_from_env(&seed);
    dn_pool *pools[3] = {NULL, dn_pool_create(1), dn_pool_create(2)};
    assert_true(pools[1] && pools[2]);
    static const size_t row_counts[] = {1, 3, 4, 5, 7, 8, 9, 15, 17, 70};
    for (size_t ti = 0; ti < NTYPES; ti++)
        for (size_t ri = 0; ri < sizeof row_counts / sizeof row_counts[0]; ri++) {
            const size_t be = dn_type_block_elements(types[ti]);
            one_shape(types[ti], row_counts[ri], be == 256 ? 768 : 544, pools, &seed);
        }
    /* a long row: a tile of rows in the matrix product holds few rows */
    one_shape(DN_TYPE_Q4_K, 21, 16384, pools, &seed);
    one_shape(DN_TYPE_Q8_0, 21, 16384 + 32, pools, &seed);
    one_shape(DN_TYPE_Q6_K, 21, 16384, pools, &seed);
    for (int q = 1; q < 3; q++) dn_pool_destroy(pools[q]);
}

/* A plain matrix whose every byte is a function of its row, block and
   place (blocks of block_bytes), so a byte moved to another place shows. */
static void fill_by_place(uint8_t *w, size_t rows, size_t blocks, size_t block_bytes)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t b = 0; b < blocks; b++)
            for (size_t i = 0; i < block_bytes; i++)
                w[(r * blocks + b) * block_bytes + i] = (uint8_t)(37 * r + 11 * b + 3 * i + 1);
}

/* Q8_0's interleaved layout byte by byte (decodenum/repack.h): 11 rows (a
   second row group with five padding rows), n = 320 (a whole chunk of eight
   blocks, then one of two); each byte of the plain matrix a function of its
   row, block and place, so a byte in another row's lane differs. */
static void q8_0_layout_by_the_bytes(void **state)
{
    (void)state;
    const size_t rows = 11, n = 320, blocks = n / 32, row_bytes = blocks * 34;
    uint8_t w[11 * 10 * 34];
    fill_by_place(w, rows, blocks, 34);
    uint8_t *p = repack_of(DN_TYPE_Q8_0, w, rows, n);
    for (size_t r = 0; r < 16; r++)
        for (size_t b = 0; b < blocks; b++) {
            const size_t j = b / 8, k = b % 8, G = j == 0 ? 8 : 2;
            const size_t base = r / 8 * 8 * row_bytes + j * 8 * 272;
            const uint8_t *want = r < rows ? w + r * row_bytes + b * 34 : NULL;
            for (size_t i = 0; i < 34; i++) {
                const size_t at = i < 2 ? base + 16 * k + 2 * (r % 8) + i
                                        : base + 16 * G + 256 * k + 64 * ((i - 2) / 8) +
                                              8 * (r % 8) + (i - 2) % 8;
                assert_int_equal(p[1 + at], want ? want[i] : 0);
            }
        }
    free(p);
}

/* Q6_K's interleaved layout byte by byte (decodenum/repack.h): 11 rows (a
   second row group with five padding rows), two blocks a row; each byte of
   the plain matrix a function of its row, block and place. */
static void q6_k_layout_by_the_bytes(void **state)
{
    (void)state;
    const size_t rows = 11, n = 512, blocks = n / 256, row_bytes = blocks * 210;
    uint8_t w[11 * 2 * 210];
    fill_by_place(w, rows, blocks, 210);
    uint8_t *p = repack_of(DN_TYPE_Q6_K, w, rows, n);
    for (size_t r = 0; r < 16; r++)
        for (size_t b = 0; b < blocks; b++) {
            const size_t base = r / 8 * 8 * row_bytes + b * 8 * 210, k = r % 8;
            const uint8_t *want = r < rows ? w + r * row_bytes + b * 210 : NULL;
            for (size_t i = 0; i < 210; i++) {
                size_t at;
                if (i >= 208) { /* d */
                    at = 2 * k + i - 208;
                } else if (i >= 192) { /* scale s: byte 16 + 8 s + r */
                    at = 16 + 8 * (i - 192) + k;
                } else if (i >= 128) { /* qh byte 32 h + 8 u + e: step 4 h + u, third 64 */
                    const size_t q = i - 128;
                    at = 144 + 192 * (4 * (q / 32) + q % 32 / 8) + 128 + 8 * k + q % 8;
                } else { /* ql byte 64 h + 32 v + 8 u + e: step 4 h + u, 64 v on */
                    at = 144 + 192 * (4 * (i / 64) + i % 32 / 8) + 64 * (i % 64 / 32) + 8 * k +
                         i % 8;
                }
                assert_int_equal(p[1 + base + at], want ? want[i] : 0);
            }
        }
    free(p);
}

/* Blocks of weights all one: Q8_0 (d = 1, q = 1) and Q6_K (d = 1, every
   scale 1, every digit 33: ql nibbles 1, qh pairs 2). */
static void ones_block(dn_type t, uint8_t *blk)
{
    if (t == DN_TYPE_Q8_0) {
        put16(blk, 0x3C00);
        memset(blk + 2, 1, 32);
        return;
    }
    memset(blk, 0x11, 128);
    memset(blk + 128, 0xAA, 64);
    memset(blk + 192, 1, 16);
    put16(blk + 208, 0x3C00);
}

/* One row of ones among zero rows, in each place of two row groups: with
   columns of ones the product is that row's own value (the row as a
   one-row matrix: about n) in that row alone, +0 in every other, on the
   active ISA's repacked kernel, both scalings and word counts. A row's
   bytes read in another row's lane would light the wrong row. */
static void one_row_lights(dn_type t)
{
    const size_t rows = 13, n = 512, bb = dn_type_block_bytes(t);
    const size_t blocks = n / dn_type_block_elements(t), row_bytes = blocks * bb;
    uint8_t *w = calloc(rows, row_bytes);
    float x[512], out[13], plain[13];
    assert_non_null(w);
    for (size_t i = 0; i < n; i++) x[i] = 1.0f;
    for (int k = 0; k < 4; k++) {
        dn_act *act = NULL;
        assert_int_equal(dn_act_create(x, n, 1, k & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32,
                                       k & 2 ? DN_WORDS_TWO : DN_WORDS_ONE, &act, NULL),
                         DN_OK);
        for (size_t one = 0; one < rows; one++) {
            memset(w, 0, rows * row_bytes);
            for (size_t b = 0; b < blocks; b++) ones_block(t, w + one * row_bytes + b * bb);
            uint8_t *p = repack_of(t, w, rows, n);
            float alone = 0.0f; /* the row as a matrix of one row */
            assert_int_equal(dn_act_mat_vec(act, 0, t, w + one * row_bytes, 1, &alone, NULL, NULL),
                             DN_OK);
            assert_true(alone > 500.0f && alone < 524.0f); /* n, up to the codes' rounding */
            assert_int_equal(dn_repacked_mat_vec(act, 0, t, p + 1, rows, out, NULL, NULL), DN_OK);
            assert_int_equal(dn_act_mat_vec(act, 0, t, w, rows, plain, NULL, NULL), DN_OK);
            assert_same(out, plain, rows);
            for (size_t r = 0; r < rows; r++)
                if (r == one)
                    assert_int_equal(tbits(out[r]), tbits(alone));
                else
                    assert_int_equal(tbits(out[r]), 0);
            free(p);
        }
        dn_act_destroy(act);
    }
    free(w);
}

static void q8_0_one_row_lights_its_lane(void **state)
{
    (void)state;
    one_row_lights(DN_TYPE_Q8_0);
}

static void q6_k_one_row_lights_its_lane(void **state)
{
    (void)state;
    one_row_lights(DN_TYPE_Q6_K);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    size_t bytes = 7;
    uint8_t w[4 * 144] = {0}, p[DN_REPACK_ROWS * 144];
    float x[256] = {0}, out[8] = {0};
    assert_int_equal(dn_repack_size(DN_TYPE_F16, 4, 256, &bytes), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_repack_size(DN_TYPE_F32, 4, 256, &bytes), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_repack_size((dn_type)999, 4, 256, &bytes), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_repack_size(DN_TYPE_Q4_K, 4, 255, &bytes), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_size(DN_TYPE_Q4_K, 4, 0, &bytes), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_size(DN_TYPE_Q4_K, 0, 256, &bytes), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_size(DN_TYPE_Q4_K, 4, 256, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_size(DN_TYPE_Q8_0, SIZE_MAX / 8, 1u << 20, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_size(DN_TYPE_Q8_0, SIZE_MAX - 1, 32, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_size(DN_TYPE_Q8_0, 1, (size_t)UINT32_MAX + 1 + 31, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(bytes, 7); /* untouched */
    assert_int_equal(dn_repack_size(DN_TYPE_Q4_K, 3, 256, &bytes), DN_OK);
    assert_int_equal(bytes, DN_REPACK_ROWS * 144);
    assert_int_equal(dn_repack(DN_TYPE_Q4_K, NULL, 3, 256, p, sizeof p), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack(DN_TYPE_Q4_K, w, 3, 256, NULL, sizeof p), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack(DN_TYPE_Q4_K, w, 3, 256, p, sizeof p - 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack(DN_TYPE_BF16, w, 3, 256, p, sizeof p), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_repack(DN_TYPE_Q4_K, w, 3, 256, p, sizeof p), DN_OK);
    assert_int_equal(dn_repack_unpack(DN_TYPE_Q4_K, p, 3, 256, w, 3 * 144 - 1),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_unpack(DN_TYPE_Q4_K, NULL, 3, 256, w, sizeof w),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repack_unpack(DN_TYPE_Q4_K, p, 3, 256, NULL, sizeof w),
                     DN_ERR_INVALID_ARGUMENT);
    dn_act *act = NULL;
    assert_int_equal(dn_act_create(x, 256, 1, DN_ACT_SUB32, DN_WORDS_ONE, &act, NULL), DN_OK);
    const dn_status e = DN_ERR_INVALID_ARGUMENT;
    assert_int_equal(dn_repacked_mat_vec(NULL, 0, DN_TYPE_Q4_K, p, 3, out, NULL, NULL), e);
    assert_int_equal(dn_repacked_mat_vec(act, 1, DN_TYPE_Q4_K, p, 3, out, NULL, NULL), e);
    assert_int_equal(dn_repacked_mat_vec(act, 0, DN_TYPE_Q4_K, NULL, 3, out, NULL, NULL), e);
    assert_int_equal(dn_repacked_mat_vec(act, 0, DN_TYPE_Q4_K, p, 3, NULL, NULL, NULL), e);
    assert_int_equal(dn_repacked_mat_vec(act, 0, DN_TYPE_F16, p, 3, out, NULL, NULL),
                     DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_repacked_mat_vec(act, 0, DN_TYPE_Q4_K, p, SIZE_MAX, out, NULL, NULL), e);
    assert_int_equal(dn_repacked_mat_vec_rows(act, 0, DN_TYPE_Q4_K, p, 3, 2, 4, out, NULL), e);
    assert_int_equal(dn_repacked_mat_vec_rows(act, 0, DN_TYPE_Q4_K, p, 3, 2, 1, out, NULL), e);
    assert_int_equal(dn_repacked_mat_vec_rows(act, 0, DN_TYPE_Q4_K, p, 3, 1, 1, NULL, NULL), DN_OK);
    assert_int_equal(dn_repacked_mat_mul_rows(act, 0, 2, DN_TYPE_Q4_K, p, 3, 0, 3, out, NULL), e);
    assert_int_equal(dn_repacked_mat_mul(act, DN_TYPE_Q4_K, p, 3, NULL, NULL, NULL), e);
    dn_act_destroy(act);
    /* per block without whole 256-element blocks: Q4_K not served, Q8_0 is */
    assert_int_equal(dn_act_create(x, 224, 1, DN_ACT_PER_BLOCK, DN_WORDS_ONE, &act, NULL), DN_OK);
    assert_int_equal(dn_repacked_mat_vec(act, 0, DN_TYPE_Q4_K, p, 3, out, NULL, NULL), e);
    dn_act_destroy(act);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(repacked_equals_plain),        cmocka_unit_test(q8_0_layout_by_the_bytes),
        cmocka_unit_test(q8_0_one_row_lights_its_lane), cmocka_unit_test(q6_k_layout_by_the_bytes),
        cmocka_unit_test(q6_k_one_row_lights_its_lane), cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
