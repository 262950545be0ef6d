/* SPDX-License-Identifier: MIT */
/*
 * Products with a prepared activation (dn_act): every format, both
 * scalings, both word counts, on the active ISA (the suite runs under each
 * DECODENUM_ISA).
 *
 *  - Every value of dn_act_mat_vec(_rows), dn_act_mat_vec_multi and
 *    dn_act_mat_mul(_rows) equals dn_mat_vec of the same column quantized by
 *    dn_quantize / dn_quantize_blocks for the format (test_dot holds
 *    dn_mat_vec to dn_dot of every row, the definition), bit for bit, on
 *    pools of 0 to 3 threads and random row and column splits; one prepared
 *    activation serves every format at once (32- and 256-element blocks).
 *  - Columns whose blocks' exponents spread far (the kernels' exact paths
 *    refused), all-zero columns, odd memory addresses (pieces next to an
 *    f32 tie: test_dot_ties.c), chains that overflow to infinities and NaNs.
 *  - Unreadable blocks named as dn_mat_vec names them; every argument error.
 *  - dn_act_prepare_for: each named format's products (plain and repacked)
 *    with those bits, every other format refused by every product form with
 *    nothing written; its refusals.
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

/* COLS columns: Gaussian-ish with outliers; magnitudes 2^-60..2^60 (the
   exponents of a group's blocks far apart); all zero; small integers. */
static void columns(uint64_t *s, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(between(s, -1000, 1000) + between(s, -1000, 1000)) / 1000.0f *
               (i % 50 ? 1.0f : 40.0f);
        x[n + i] = ldexpf((float)between(s, -1000, 1000), (int)between(s, -60, 60));
        x[2 * n + i] = 0.0f;
        x[3 * n + i] = (float)between(s, -3, 3);
    }
}

typedef struct mats {
    size_t n, rows;
    uint8_t *w[NTYPES];
    float *ref[NTYPES]; /* COLS x rows: dn_mat_vec of each column */
} mats;

/* The expected values: each column quantized for the format, dn_mat_vec. */
static void expected(mats *m, const float *x, dn_act_scaling scaling, dn_words words)
{
    int16_t *codes = malloc(m->n * sizeof *codes);
    dn_act_scale *scales = malloc(m->n / 32 * sizeof *scales);
    assert_true(codes && scales);
    for (size_t ti = 0; ti < NTYPES; ti++) {
        size_t be = dn_type_block_elements(types[ti]);
        if (!m->w[ti]) continue;
        for (size_t c = 0; c < COLS; c++) {
            dn_act_row row = {codes, scales, m->n, 0, words};
            const float *xc = x + c * m->n;
            assert_int_equal(scaling == DN_ACT_SUB32
                                 ? dn_quantize(xc, m->n, words, &row, NULL)
                                 : dn_quantize_blocks(xc, m->n, be, words, &row, NULL),
                             DN_OK);
            assert_int_equal(dn_mat_vec(types[ti], m->w[ti], m->rows, m->n, &row, scaling,
                                        m->ref[ti] + c * m->rows, NULL, NULL),
                             DN_OK);
        }
    }
    free(codes);
    free(scales);
}

#define assert_same(got, want, count) assert_same_at(got, want, count, __LINE__)
static void assert_same_at(const float *got, const float *want, size_t count, int line)
{
    for (size_t i = 0; i < count; i++) {
        if (tbits(got[i]) != tbits(want[i])) print_message("line %d, element %zu\n", line, i);
        assert_int_equal(tbits(got[i]), tbits(want[i]));
    }
}

/* Every product form of one format against the expected values. */
static void products_of(const dn_act *act, const mats *m, size_t ti, dn_pool *const pools[4],
                        uint64_t *s, float *out)
{
    const dn_type t = types[ti];
    const size_t rows = m->rows, all = COLS * rows;
    for (int p = 0; p < 4; p++) {
        for (size_t c = 0; c < COLS; c++) {
            memset(out, 0xFF, rows * sizeof *out);
            assert_int_equal(dn_act_mat_vec(act, c, t, m->w[ti], rows, out, pools[p], NULL), DN_OK);
            assert_same(out, m->ref[ti] + c * rows, rows);
        }
        memset(out, 0xFF, all * sizeof *out);
        assert_int_equal(dn_act_mat_mul(act, t, m->w[ti], rows, out, pools[p], NULL), DN_OK);
        assert_same(out, m->ref[ti], all);
    }
    memset(out, 0xFF, rows * sizeof *out);
    for (size_t r0 = 0; r0 < rows;) {
        size_t r1 = r0 + (size_t)between(s, 1, 9);
        if (r1 > rows) r1 = rows;
        assert_int_equal(dn_act_mat_vec_rows(act, 2, t, m->w[ti], rows, r0, r1, out, NULL), DN_OK);
        r0 = r1;
    }
    assert_same(out, m->ref[ti] + 2 * rows, rows);
    memset(out, 0xFF, all * sizeof *out);
    for (size_t r0 = 0; r0 < rows;) { /* a random grid of row and column ranges */
        size_t r1 = r0 + (size_t)between(s, 1, 70);
        if (r1 > rows) r1 = rows;
        for (size_t c0 = 0; c0 < COLS;) {
            size_t c1 = c0 + (size_t)between(s, 1, 3);
            if (c1 > COLS) c1 = COLS;
            assert_int_equal(dn_act_mat_mul_rows(act, c0, c1, t, m->w[ti], rows, r0, r1, out, NULL),
                             DN_OK);
            c0 = c1;
        }
        r0 = r1;
    }
    assert_same(out, m->ref[ti], all);
}

/* Three formats in one grouped product (a 32- and a 256-element one when
   the activation serves both), each out its own dn_act_mat_vec's. */
static void multi_of(const dn_act *act, const mats *m, size_t ti, dn_pool *const pools[4],
                     float *out)
{
    size_t pick[3] = {ti, (ti + 4) % NTYPES, (ti + 7) % NTYPES};
    dn_act_matrix g[3];
    size_t count = 0;
    for (int i = 0; i < 3; i++)
        if (m->w[pick[i]])
            g[count] =
                (dn_act_matrix){types[pick[i]], m->w[pick[i]], m->rows, out + count * m->rows},
            pick[count++] = pick[i];
    for (int p = 0; p < 4; p++)
        for (size_t c = 0; c < COLS; c += 3) {
            memset(out, 0xFF, 3 * m->rows * sizeof *out);
            assert_int_equal(dn_act_mat_vec_multi(act, c, g, count, pools[p], NULL, NULL), DN_OK);
            for (size_t i = 0; i < count; i++)
                assert_same(out + i * m->rows, m->ref[pick[i]] + c * m->rows, m->rows);
        }
}

/* The last block of row 23 of format ti made unreadable: every form names
   it, whatever the pool, then it is restored. */
static void unreadable_named(const dn_act *act, const mats *m, size_t ti, dn_pool *const pools[4],
                             float *out)
{
    const dn_type t = types[ti];
    size_t blocks = m->n / dn_type_block_elements(t), bb = dn_type_block_bytes(t);
    int d, dm;
    block_scale_offsets(t, &d, &dm);
    size_t blk = 23 * blocks + blocks - 1;
    uint8_t *w = m->w[ti], keep[2] = {w[blk * bb + d], w[blk * bb + d + 1]};
    put16(w + blk * bb + d, 0x7C00);
    dn_act_matrix g[2] = {{t, w, 20, out + 3 * m->rows}, {t, w, m->rows, out}};
    for (int p = 0; p < 4; p++) {
        size_t bad = 0, which = 9;
        assert_int_equal(dn_act_mat_vec(act, 1, t, w, m->rows, out, pools[p], &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, blk);
        bad = 0;
        assert_int_equal(dn_act_mat_mul(act, t, w, m->rows, out, pools[p], &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, blk);
        bad = 0;
        assert_int_equal(dn_act_mat_vec_multi(act, 0, g, 2, pools[p], &which, &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, blk);
        assert_int_equal(which, 1);
    }
    size_t bad = 0;
    assert_int_equal(dn_act_mat_mul_rows(act, 1, 3, t, w, m->rows, 5, m->rows, out, &bad),
                     DN_ERR_UNREADABLE_BLOCK);
    assert_int_equal(bad, blk);
    bad = 0;
    assert_int_equal(dn_act_mat_vec_rows(act, 2, t, w, m->rows, 21, 25, out, &bad),
                     DN_ERR_UNREADABLE_BLOCK);
    assert_int_equal(bad, blk);
    assert_int_equal(dn_act_mat_vec_rows(act, 0, t, w, m->rows, 24, m->rows, out, &bad), DN_OK);
    w[blk * bb + d] = keep[0], w[blk * bb + d + 1] = keep[1];
}

/* One n: matrices of every format whose block divides it, one activation
   per scaling and word count (in the caller's memory, one byte past an
   aligned address) serving all of them. */
static void every_form_for(size_t n, size_t rows, uint64_t seed)
{
    dn_pool *pools[4] = {NULL, dn_pool_create(1), dn_pool_create(2), dn_pool_create(3)};
    assert_true(pools[1] && pools[2] && pools[3]);
    uint64_t s = seed;
    mats m = {n, rows, {0}, {0}};
    for (size_t ti = 0; ti < NTYPES; ti++) {
        size_t be = dn_type_block_elements(types[ti]);
        if (n % be) continue;
        m.w[ti] = malloc(rows * (n / be) * dn_type_block_bytes(types[ti]));
        m.ref[ti] = malloc(COLS * rows * sizeof(float));
        assert_true(m.w[ti] && m.ref[ti]);
        random_blocks(&s, types[ti], m.w[ti], rows * (n / be));
    }
    float *x = malloc(COLS * n * sizeof *x), *out = malloc(COLS * rows * sizeof *out);
    assert_true(x && out);
    columns(&s, x, n);
    for (int k = 0; k < 4; k++) {
        dn_act_scaling scaling = k & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
        dn_words words = k & 2 ? DN_WORDS_TWO : DN_WORDS_ONE;
        expected(&m, x, scaling, words);
        size_t bytes = 0;
        assert_int_equal(dn_act_size(n, COLS, scaling, words, &bytes), DN_OK);
        uint8_t *mem = malloc(bytes + 1);
        dn_act *act = NULL;
        assert_non_null(mem);
        assert_int_equal(dn_act_prepare(x, n, COLS, scaling, words, mem + 1, bytes, &act, NULL),
                         DN_OK);
        for (size_t ti = 0; ti < NTYPES; ti++) {
            if (!m.w[ti]) continue;
            products_of(act, &m, ti, pools, &s, out);
            multi_of(act, &m, ti, pools, out);
            unreadable_named(act, &m, ti, pools, out);
        }
        free(mem);
    }
    for (size_t ti = 0; ti < NTYPES; ti++) free(m.w[ti]), free(m.ref[ti]);
    free(x);
    free(out);
    for (int p = 1; p < 4; p++) dn_pool_destroy(pools[p]);
}

/* n = 768: every format, both block sizes from one activation; 203 rows
   make several row tiles in the matrix products. n = 544: the 32-element
   formats with a short last Sub32 group. */
static void every_form_equals_mat_vec(void **state)
{
    (void)state;
    uint64_t seed = 0x61637470726570u;
    test_seed_from_env(&seed);
    every_form_for(768, 203, seed);
    every_form_for(544, 37, seed + 1);
}

/* dn_act_create's activation gives the caller-memory one's bits. */
static void created_equals_prepared(void **state)
{
    (void)state;
    const size_t n = 512, rows = 9;
    uint64_t s = 7;
    float x[2 * 512], a[2 * 9], b[2 * 9];
    uint8_t w[9 * 2 * 144];
    for (size_t i = 0; i < 2 * n; i++) x[i] = (float)between(&s, -500, 500) / 64.0f;
    random_blocks(&s, DN_TYPE_Q4_K, w, rows * 2);
    dn_act *c = NULL, *p = NULL;
    size_t bytes;
    assert_int_equal(dn_act_create(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_TWO, &c, NULL), DN_OK);
    assert_int_equal(dn_act_size(n, 2, DN_ACT_PER_BLOCK, DN_WORDS_TWO, &bytes), DN_OK);
    void *mem = malloc(bytes);
    assert_non_null(mem);
    assert_int_equal(dn_act_prepare(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_TWO, mem, bytes, &p, NULL),
                     DN_OK);
    assert_int_equal(dn_act_mat_mul(c, DN_TYPE_Q4_K, w, rows, a, NULL, NULL), DN_OK);
    assert_int_equal(dn_act_mat_mul(p, DN_TYPE_Q4_K, w, rows, b, NULL, NULL), DN_OK);
    assert_same(a, b, 2 * rows);
    dn_act_destroy(c);
    dn_act_destroy(NULL);
    free(mem);
}

/* Every refusal, with its status (decodenum/dot.h). */
static void bad_arguments_are_refused(void **state)
{
    (void)state;
    const size_t n = 96;
    float x[2 * 96] = {0}, out[64];
    uint8_t w[4 * 3 * 34] = {0};
    size_t bytes = 0, bad = 0;
    dn_act *act = NULL;
    assert_int_equal(dn_act_size(0, 1, DN_ACT_SUB32, DN_WORDS_ONE, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_size(100, 1, DN_ACT_SUB32, DN_WORDS_ONE, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_size(n, 0, DN_ACT_SUB32, DN_WORDS_ONE, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_size(n, 1, (dn_act_scaling)2, DN_WORDS_ONE, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_size(n, 1, DN_ACT_SUB32, (dn_words)3, &bytes), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_size(n, SIZE_MAX / 8, DN_ACT_SUB32, DN_WORDS_ONE, &bytes),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_size(n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_size(n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, &bytes), DN_OK);
    uint8_t *mem = malloc(bytes);
    assert_non_null(mem);
    assert_int_equal(
        dn_act_prepare(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, mem, bytes - 1, &act, NULL),
        DN_ERR_INVALID_ARGUMENT);
    assert_null(act);
    assert_int_equal(
        dn_act_prepare(NULL, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, mem, bytes, &act, NULL),
        DN_ERR_INVALID_ARGUMENT);
    x[96 + 40] = NAN;
    assert_int_equal(
        dn_act_prepare(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, mem, bytes, &act, &bad),
        DN_ERR_NON_FINITE);
    assert_int_equal(bad, 96 + 40);
    assert_null(act);
    x[96 + 40] = 1.0f;
    assert_int_equal(
        dn_act_prepare(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, mem, bytes, &act, &bad), DN_OK);
    /* n = 96 has no 256-element blocks: a Q4_K matrix cannot use it */
    assert_int_equal(dn_act_mat_vec(act, 0, DN_TYPE_Q4_K, w, 1, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec(act, 0, DN_TYPE_F32, w, 1, out, NULL, NULL),
                     DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_act_mat_vec(act, 0, (dn_type)99, w, 1, out, NULL, NULL),
                     DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_act_mat_vec(act, 2, DN_TYPE_Q8_0, w, 4, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec(NULL, 0, DN_TYPE_Q8_0, w, 4, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec(act, 0, DN_TYPE_Q8_0, NULL, 4, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec(act, 0, DN_TYPE_Q8_0, w, 4, NULL, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec(act, 0, DN_TYPE_Q8_0, w, SIZE_MAX / 8, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec_rows(act, 0, DN_TYPE_Q8_0, w, 4, 3, 5, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec_rows(act, 0, DN_TYPE_Q8_0, w, 4, 3, 2, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec_rows(act, 0, DN_TYPE_Q8_0, NULL, 4, 2, 2, NULL, NULL), DN_OK);
    assert_int_equal(dn_act_mat_mul_rows(act, 1, 3, DN_TYPE_Q8_0, w, 4, 0, 4, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_mul_rows(act, 2, 1, DN_TYPE_Q8_0, w, 4, 0, 4, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    dn_act_matrix g[2] = {{DN_TYPE_Q8_0, w, 4, out}, {DN_TYPE_Q4_K, w, 1, out + 4}};
    assert_int_equal(dn_act_mat_vec_multi(act, 0, g, 2, NULL, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec_multi(act, 0, NULL, 2, NULL, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec_multi(act, 0, g, 0, NULL, NULL, NULL), DN_OK);
    assert_int_equal(dn_act_mat_vec_multi(act, 0, g, 1, NULL, NULL, NULL), DN_OK);
    /* memory that is not a prepared activation */
    memset(mem, 0, bytes);
    assert_int_equal(dn_act_mat_vec(act, 0, DN_TYPE_Q8_0, w, 4, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_create(x, n, 1, DN_ACT_SUB32, DN_WORDS_ONE, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    free(mem);
}

/* Long rows (n = 2^16): the kernels' matrix product runs small blocks of
   columns (four at a time, then the one left, in the register-blocked
   kernels and over the AVX-512 row tiles of 16 rows in the lanes; two at a
   time over the row tiles in the others); every value as dn_act_mat_vec's,
   and an unreadable block named from every column block. */
static void column_blocks_change_no_bit(void **state)
{
    (void)state;
    const size_t n = 65536, rows = 21, cols = 5;
    static const dn_type ts[3] = {DN_TYPE_Q8_0, DN_TYPE_Q4_K, DN_TYPE_Q6_K};
    uint64_t s = 99;
    float *x = malloc(cols * n * sizeof *x), *out = malloc(cols * rows * sizeof *out),
          *v = malloc(rows * sizeof *v);
    uint8_t *w = malloc(rows * (n / 32) * 34);
    assert_true(x && out && v && w);
    columns(&s, x, n);
    for (size_t i = 0; i < n; i++) x[4 * n + i] = x[i] * 0.5f;
    dn_act *act = NULL;
    assert_int_equal(dn_act_create(x, n, cols, DN_ACT_SUB32, DN_WORDS_ONE, &act, NULL), DN_OK);
    for (int k = 0; k < 3; k++) {
        const dn_type t = ts[k];
        const size_t blocks = n / dn_type_block_elements(t);
        random_blocks(&s, t, w, rows * blocks);
        memset(out, 0xFF, cols * rows * sizeof *out);
        assert_int_equal(dn_act_mat_mul_rows(act, 0, cols, t, w, rows, 0, rows, out, NULL), DN_OK);
        for (size_t c = 0; c < cols; c++) {
            assert_int_equal(dn_act_mat_vec(act, c, t, w, rows, v, NULL, NULL), DN_OK);
            assert_same(out + c * rows, v, rows);
        }
        int d, dm;
        block_scale_offsets(t, &d, &dm);
        const size_t bb = dn_type_block_bytes(t), blk = 6 * blocks + 3;
        put16(w + blk * bb + d, 0x7E00);
        size_t bad = 0;
        assert_int_equal(dn_act_mat_mul_rows(act, 1, cols, t, w, rows, 2, rows, out, &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, blk);
    }
    dn_act_destroy(act);
    free(x), free(out), free(v), free(w);
}

/* The register-blocked products (Q4_K, Q5_K, Q6_K, Q8_0, Sub32, one word:
   four rows by four columns): 7 columns of different kinds (so the columns
   of one block take different paths: factored groups or not, fast or
   reference pieces) and 11 rows, whole and over every column range and
   ragged row ranges, against dn_act_mat_vec of each column. */
static void blocked_edges_change_no_bit(void **state)
{
    (void)state;
    const size_t n = 768, rows = 11, cols = 7;
    static const dn_type ts[4] = {DN_TYPE_Q4_K, DN_TYPE_Q5_K, DN_TYPE_Q6_K, DN_TYPE_Q8_0};
    uint64_t s = 7;
    float *x = malloc(cols * n * sizeof *x), *out = malloc(cols * rows * sizeof *out),
          *v = malloc(cols * rows * sizeof *v);
    uint8_t *w = malloc(rows * (n / 32) * 34);
    assert_true(x && out && v && w);
    columns(&s, x, n); /* columns 0-3 */
    for (size_t i = 0; i < n; i++) {
        x[4 * n + i] = ldexpf(x[i], i % 64 < 32 ? -9 : 3); /* factors beyond Q4_K's 480 */
        x[5 * n + i] = i < n / 2 ? 0.0f : x[n + i];        /* zero, then far spread */
        x[6 * n + i] = x[i] * 0x1p-128f;                   /* near the flush range */
    }
    dn_act *act = NULL;
    assert_int_equal(dn_act_create(x, n, cols, DN_ACT_SUB32, DN_WORDS_ONE, &act, NULL), DN_OK);
    for (int k = 0; k < 4; k++) {
        const dn_type t = ts[k];
        random_blocks(&s, t, w, rows * (n / dn_type_block_elements(t)));
        for (size_t c = 0; c < cols; c++)
            assert_int_equal(dn_act_mat_vec(act, c, t, w, rows, v + c * rows, NULL, NULL), DN_OK);
        memset(out, 0xFF, cols * rows * sizeof *out);
        assert_int_equal(dn_act_mat_mul(act, t, w, rows, out, NULL, NULL), DN_OK);
        assert_same(out, v, cols * rows);
        for (size_t c0 = 0; c0 < cols; c0++)
            for (size_t c1 = c0 + 1; c1 <= cols; c1++) {
                const size_t r0 = (size_t)between(&s, 0, 6), r1 = r0 + (size_t)between(&s, 1, 5);
                memset(out, 0xFF, cols * rows * sizeof *out);
                assert_int_equal(dn_act_mat_mul_rows(act, c0, c1, t, w, rows, r0, r1, out, NULL),
                                 DN_OK);
                for (size_t c = c0; c < c1; c++)
                    assert_same(out + c * rows + r0, v + c * rows + r0, r1 - r0);
            }
    }
    dn_act_destroy(act);
    free(x), free(out), free(v), free(w);
}

/* Products whose chains overflow (block scales near 65504, activations
   near 2^120): the pieces go to infinities of both signs, the chains to
   infinities and NaNs, in the row tiles of the prefill kernels (whole tiles
   of 16 rows, four columns) as in dn_act_mat_vec: the same bits, the NaNs
   the one canonical NaN. The matrix must give at least one NaN and one
   infinity, or the test proves nothing. */
static void overflowing_chains_keep_their_bits(void **state)
{
    (void)state;
    const size_t n = 2048, rows = 48, cols = 4;
    static const dn_type ts[3] = {DN_TYPE_Q8_0, DN_TYPE_Q4_K, DN_TYPE_Q6_K};
    uint64_t s = 0x6f766572u;
    float *x = malloc(cols * n * sizeof *x), *out = malloc(cols * rows * sizeof *out),
          *v = malloc(cols * rows * sizeof *v);
    uint8_t *w = malloc(rows * (n / 32) * 34);
    assert_true(x && out && v && w);
    for (size_t c = 0; c < cols; c++) /* 2^120, 2^110, 2^100, 1: some chains stay finite */
        for (size_t i = 0; i < n; i++)
            x[c * n + i] =
                ldexpf((float)between(&s, -1000, 1000), c == 3 ? -10 : 110 - 10 * (int)c);
    dn_act *act = NULL;
    assert_int_equal(dn_act_create(x, n, cols, DN_ACT_SUB32, DN_WORDS_ONE, &act, NULL), DN_OK);
    for (int k = 0; k < 3; k++) {
        const dn_type t = ts[k];
        const size_t blocks = rows * (n / dn_type_block_elements(t)), bb = dn_type_block_bytes(t);
        int d, dm;
        block_scale_offsets(t, &d, &dm);
        random_blocks(&s, t, w, blocks);
        for (size_t b = 0; b < blocks; b++) { /* row r's blocks all positive when r % 3 == 0 */
            const int neg = (b * 32 / n) % 3 != 0 && (splitmix(&s) & 1);
            put16(w + b * bb + d, (uint16_t)(0x7800 | (neg ? 0x8000 : 0) | (splitmix(&s) & 0x3FF)));
        }
        int nans = 0, infs = 0;
        for (size_t c = 0; c < cols; c++)
            assert_int_equal(dn_act_mat_vec(act, c, t, w, rows, v + c * rows, NULL, NULL), DN_OK);
        for (size_t i = 0; i < cols * rows; i++) nans += isnan(v[i]) != 0, infs += isinf(v[i]) != 0;
        assert_true(nans > 0 && infs > 0);
        memset(out, 0xFF, cols * rows * sizeof *out); /* one call: whole tiles */
        assert_int_equal(dn_act_mat_mul_rows(act, 0, cols, t, w, rows, 0, rows, out, NULL), DN_OK);
        assert_same(out, v, cols * rows);
        memset(out, 0xFF, cols * rows * sizeof *out);
        assert_int_equal(dn_act_mat_mul(act, t, w, rows, out, NULL, NULL), DN_OK);
        assert_same(out, v, cols * rows);
    }
    dn_act_destroy(act);
    free(x), free(out), free(v), free(w);
}

/* Every product form of format t refuses act (not prepared for t) with
   DN_ERR_INVALID_ARGUMENT and writes nothing, on the plain matrix w and the
   repacked one pw; a grouped product refuses it even after a served
   matrix (tg, wg). */
static void refused_everywhere(const dn_act *act, dn_type t, const uint8_t *w, const uint8_t *pw,
                               size_t rows, dn_type tg, const uint8_t *wg, float *out)
{
    const size_t all = COLS * rows;
    memset(out, 0xA5, all * sizeof *out);
    assert_int_equal(dn_act_mat_vec(act, 0, t, w, rows, out, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_vec_rows(act, 1, t, w, rows, 0, rows, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_mul(act, t, w, rows, out, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_mat_mul_rows(act, 0, COLS, t, w, rows, 0, rows, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    dn_act_matrix g[2] = {{tg, wg, rows, out}, {t, w, rows, out + rows}};
    assert_int_equal(dn_act_mat_vec_multi(act, 0, g, 2, NULL, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repacked_mat_vec(act, 0, t, pw, rows, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repacked_mat_vec_rows(act, 1, t, pw, rows, 0, rows, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repacked_mat_mul(act, t, pw, rows, out, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_repacked_mat_mul_rows(act, 0, COLS, t, pw, rows, 0, rows, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    for (size_t i = 0; i < all; i++) assert_int_equal(tbits(out[i]), 0xA5A5A5A5u);
}

/* A dn_act prepared for the formats named[0 .. count): every product of
   each named format has the expected bits (those of dn_act_prepare's
   activation, which every_form_for holds to them), on the plain and the
   repacked matrix; every other format is refused by every form. */
static void named_only(const mats *m, uint8_t *const pw[NTYPES], const dn_act *act,
                       const size_t *named, size_t count, dn_pool *const pools[4], uint64_t *s,
                       float *out)
{
    for (size_t i = 0; i < count; i++) {
        const size_t ti = named[i];
        products_of(act, m, ti, pools, s, out);
        memset(out, 0xFF, COLS * m->rows * sizeof *out);
        assert_int_equal(dn_repacked_mat_mul(act, types[ti], pw[ti], m->rows, out, pools[2], NULL),
                         DN_OK);
        assert_same(out, m->ref[ti], COLS * m->rows);
    }
    if (count > 1) { /* the named formats in one grouped product */
        dn_act_matrix g[2] = {{types[named[0]], m->w[named[0]], m->rows, out},
                              {types[named[1]], m->w[named[1]], m->rows, out + m->rows}};
        assert_int_equal(dn_act_mat_vec_multi(act, 1, g, 2, pools[3], NULL, NULL), DN_OK);
        assert_same(out, m->ref[named[0]] + m->rows, m->rows);
        assert_same(out + m->rows, m->ref[named[1]] + m->rows, m->rows);
    }
    for (size_t tj = 0; tj < NTYPES; tj++) {
        int is_named = 0;
        for (size_t i = 0; i < count; i++) is_named |= named[i] == tj;
        if (!is_named && m->w[tj])
            refused_everywhere(act, types[tj], m->w[tj], pw[tj], m->rows, types[named[0]],
                               m->w[named[0]], out);
    }
}

/* dn_act_prepare_for each format alone (named twice: repeats allowed), and
   {Q4_K, Q6_K} (a Q4_K_M model's), every scaling and word count: the named
   formats' bits, the others refused, also the formats whose group facts
   share a slot with a named one (the six 32-element formats share one). */
static void prepared_for_serves_named_only(size_t n, size_t rows, uint64_t seed)
{
    dn_pool *pools[4] = {NULL, dn_pool_create(1), dn_pool_create(2), dn_pool_create(3)};
    assert_true(pools[1] && pools[2] && pools[3]);
    uint64_t s = seed;
    mats m = {n, rows, {0}, {0}};
    uint8_t *pw[NTYPES] = {0};
    for (size_t ti = 0; ti < NTYPES; ti++) {
        const size_t be = dn_type_block_elements(types[ti]);
        size_t pb = 0;
        if (n % be) continue;
        assert_int_equal(dn_repack_size(types[ti], rows, n, &pb), DN_OK);
        m.w[ti] = malloc(rows * (n / be) * dn_type_block_bytes(types[ti]));
        m.ref[ti] = malloc(COLS * rows * sizeof(float));
        pw[ti] = malloc(pb);
        assert_true(m.w[ti] && m.ref[ti] && pw[ti]);
        random_blocks(&s, types[ti], m.w[ti], rows * (n / be));
        assert_int_equal(dn_repack(types[ti], m.w[ti], rows, n, pw[ti], pb), DN_OK);
    }
    float *x = malloc(COLS * n * sizeof *x), *out = malloc(COLS * rows * sizeof *out);
    assert_true(x && out);
    columns(&s, x, n);
    for (int k = 0; k < 4; k++) {
        const dn_act_scaling scaling = k & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
        const dn_words words = k & 2 ? DN_WORDS_TWO : DN_WORDS_ONE;
        expected(&m, x, scaling, words);
        size_t bytes = 0;
        assert_int_equal(dn_act_size(n, COLS, scaling, words, &bytes), DN_OK);
        uint8_t *mem = malloc(bytes + 1);
        assert_non_null(mem);
        for (size_t ti = 0; ti <= NTYPES; ti++) {
            size_t named[2] = {ti, ti};
            if (ti == NTYPES) named[0] = 7, named[1] = 9; /* Q4_K, Q6_K */
            if (!m.w[named[0]] || !m.w[named[1]]) continue;
            const dn_type nt[2] = {types[named[0]], types[named[1]]};
            dn_act *act = NULL;
            memset(mem, 0x5A, bytes + 1); /* nothing read that was not written */
            assert_int_equal(
                dn_act_prepare_for(x, n, COLS, scaling, words, nt, 2, mem + 1, bytes, &act, NULL),
                DN_OK);
            named_only(&m, pw, act, named, ti == NTYPES ? 2 : 1, pools, &s, out);
        }
        free(mem);
    }
    for (size_t ti = 0; ti < NTYPES; ti++) free(m.w[ti]), free(m.ref[ti]), free(pw[ti]);
    free(x);
    free(out);
    for (int p = 1; p < 4; p++) dn_pool_destroy(pools[p]);
}

/* n = 768: every format (both block sizes per block); n = 544: the
   32-element formats, the 256-element ones refused at preparation. */
static void prepared_for_equals_prepare(void **state)
{
    (void)state;
    uint64_t seed = 0x666f72616374u;
    test_seed_from_env(&seed);
    prepared_for_serves_named_only(768, 41, seed);
    prepared_for_serves_named_only(544, 13, seed + 1);
}

/* dn_act_prepare_for's and dn_act_create_for's refusals (decodenum/dot.h),
   and dn_act_create_for's activation equal to the caller-memory one. */
static void prepared_for_refusals(void **state)
{
    (void)state;
    const size_t n = 544, rows = 5; /* whole 32-element blocks, not 256 */
    float x[2 * 544], a[2 * 5], b[2 * 5];
    uint8_t w[5 * 17 * 34];
    uint64_t s = 3;
    for (size_t i = 0; i < 2 * n; i++) x[i] = (float)between(&s, -500, 500) / 64.0f;
    random_blocks(&s, DN_TYPE_Q8_0, w, rows * 17);
    size_t bytes = 0, bad = 0;
    assert_int_equal(dn_act_size(n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, &bytes), DN_OK);
    uint8_t *mem = malloc(bytes);
    assert_non_null(mem);
    dn_act *act = (dn_act *)mem;
    const dn_type q8[1] = {DN_TYPE_Q8_0};
    const dn_type bad_types[4] = {DN_TYPE_F32, DN_TYPE_F16, DN_TYPE_BF16, (dn_type)99};
#define PF(ts, count) \
    dn_act_prepare_for(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, ts, count, mem, bytes, &act, &bad)
    assert_int_equal(PF(NULL, 1), DN_ERR_INVALID_ARGUMENT);
    assert_null(act);
    assert_int_equal(PF(q8, 0), DN_ERR_INVALID_ARGUMENT);
    for (int i = 0; i < 4; i++) {
        const dn_type two[2] = {DN_TYPE_Q8_0, bad_types[i]};
        assert_int_equal(PF(two, 2), DN_ERR_UNSUPPORTED_TYPE);
    }
    const dn_type q4k[2] = {DN_TYPE_Q8_0, DN_TYPE_Q4_K}; /* n = 544: no 256-element blocks */
    assert_int_equal(PF(q4k, 2), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_for(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, q8, 1, mem,
                                        bytes - 1, &act, &bad),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(
        dn_act_prepare_for(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, q8, 1, mem, bytes, NULL, &bad),
        DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_for(NULL, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, q8, 1, mem,
                                        bytes, &act, &bad),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_for(x, 100, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, q8, 1, mem,
                                        bytes, &act, &bad),
                     DN_ERR_INVALID_ARGUMENT);
    x[n + 77] = INFINITY;
    assert_int_equal(PF(q8, 1), DN_ERR_NON_FINITE);
    assert_int_equal(bad, n + 77);
    assert_null(act);
    x[n + 77] = 0.5f;
    assert_int_equal(PF(q8, 1), DN_OK);
#undef PF
    /* per block with only a 256-element format named: the 32 quantization
       is skipped, a non-finite element still found (n = 512) */
    const dn_type k6[1] = {DN_TYPE_Q6_K};
    const float keep = x[300];
    x[300] = NAN;
    dn_act *c = NULL;
    assert_int_equal(dn_act_create_for(x, 512, 2, DN_ACT_PER_BLOCK, DN_WORDS_TWO, k6, 1, &c, &bad),
                     DN_ERR_NON_FINITE);
    assert_int_equal(bad, 300);
    assert_null(c);
    x[300] = keep;
    assert_int_equal(dn_act_create_for(x, n, 2, DN_ACT_SUB32, DN_WORDS_ONE, NULL, 2, &c, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_create_for(x, n, 2, DN_ACT_SUB32, DN_WORDS_ONE, bad_types, 1, &c, NULL),
                     DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_act_create_for(x, n, 2, DN_ACT_SUB32, DN_WORDS_ONE, q8, 1, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_create_for(x, n, 2, DN_ACT_PER_BLOCK, DN_WORDS_ONE, q8, 1, &c, NULL),
                     DN_OK);
    assert_int_equal(dn_act_mat_mul(c, DN_TYPE_Q8_0, w, rows, a, NULL, NULL), DN_OK);
    assert_int_equal(dn_act_mat_mul(act, DN_TYPE_Q8_0, w, rows, b, NULL, NULL), DN_OK);
    assert_same(a, b, 2 * rows);
    assert_int_equal(dn_act_mat_vec(c, 0, DN_TYPE_Q4_0, w, rows, a, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    dn_act_destroy(c);
    free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_form_equals_mat_vec),
        cmocka_unit_test(column_blocks_change_no_bit),
        cmocka_unit_test(blocked_edges_change_no_bit),
        cmocka_unit_test(overflowing_chains_keep_their_bits),
        cmocka_unit_test(created_equals_prepared),
        cmocka_unit_test(bad_arguments_are_refused),
        cmocka_unit_test(prepared_for_equals_prepare),
        cmocka_unit_test(prepared_for_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
