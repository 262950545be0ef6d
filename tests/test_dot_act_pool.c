/* SPDX-License-Identifier: MIT */
/*
 * dn_act_prepare_pool: an activation prepared on a pool is the one
 * dn_act_prepare_for (or, with no types named, dn_act_prepare) makes, on the
 * active ISA (the suite runs under each DECODENUM_ISA).
 *
 *  - Every product of every format, both scalings and word counts, from
 *    activations prepared on pools of 0 to 3 threads (column counts below,
 *    at and above the pool's task limits), equals the product from
 *    dn_act_prepare's, bit for bit.
 *  - A non-finite element in two columns: the status and *bad name the
 *    first of them, as without a pool, whichever task meets it.
 *  - Formats named: the same refusals as dn_act_prepare_for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "random_blocks.h"
#include "testutil.h"

static const dn_type types[] = {DN_TYPE_Q4_0, DN_TYPE_Q8_0, DN_TYPE_Q4_K,
                                DN_TYPE_Q5_K, DN_TYPE_Q6_K, DN_TYPE_IQ4_XS};
#define NTYPES (sizeof types / sizeof types[0])
#define N 512
#define ROWS 9
#define MAXCOLS 70

static void fill(uint64_t *s, float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        x[i] = (float)between(s, -100000, 100000) / 50000.0f * (i % 61 == 0 ? 40.0f : 1.0f);
}

/* out = act's product with w of type t, column by column; outs compared. */
static void same_products(const dn_act *ref, const dn_act *act, size_t cols, uint8_t *const *w,
                          float *a, float *b)
{
    for (size_t ti = 0; ti < NTYPES; ti++) {
        assert_int_equal(dn_act_mat_mul(ref, types[ti], w[ti], ROWS, a, NULL, NULL), DN_OK);
        assert_int_equal(dn_act_mat_mul(act, types[ti], w[ti], ROWS, b, NULL, NULL), DN_OK);
        assert_memory_equal(a, b, cols * ROWS * sizeof *a);
    }
}

static void pooled_equals_prepared(void **state)
{
    (void)state;
    uint64_t s = 0x706f6f6c6163u;
    test_seed_from_env(&s);
    dn_pool *pools[4] = {NULL, dn_pool_create(1), dn_pool_create(2), dn_pool_create(3)};
    uint8_t *w[NTYPES];
    float *x = malloc(MAXCOLS * N * sizeof *x);
    float *a = malloc(MAXCOLS * ROWS * sizeof *a), *b = malloc(MAXCOLS * ROWS * sizeof *b);
    assert_true(pools[1] && pools[2] && pools[3] && x && a && b);
    for (size_t ti = 0; ti < NTYPES; ti++) {
        const size_t blocks = ROWS * (N / dn_type_block_elements(types[ti]));
        w[ti] = malloc(blocks * dn_type_block_bytes(types[ti]));
        assert_non_null(w[ti]);
        random_blocks(&s, types[ti], w[ti], blocks);
    }
    fill(&s, x, MAXCOLS * N);
    static const size_t col_counts[] = {1, 2, 5, 13, 64, MAXCOLS};
    for (int k = 0; k < 4; k++) {
        const dn_act_scaling scaling = k & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
        const dn_words words = k & 2 ? DN_WORDS_TWO : DN_WORDS_ONE;
        for (size_t ci = 0; ci < sizeof col_counts / sizeof col_counts[0]; ci++) {
            const size_t cols = col_counts[ci];
            dn_act *ref = NULL;
            assert_int_equal(dn_act_create(x, N, cols, scaling, words, &ref, NULL), DN_OK);
            size_t bytes = 0;
            assert_int_equal(dn_act_size(N, cols, scaling, words, &bytes), DN_OK);
            uint8_t *mem = malloc(bytes + 1);
            assert_non_null(mem);
            for (int p = 0; p < 4; p++) {
                dn_act *act = NULL;
                memset(mem, 0x5A, bytes + 1);
                assert_int_equal(dn_act_prepare_pool(x, N, cols, scaling, words, NULL, 0, mem + 1,
                                                     bytes, pools[p], &act, NULL),
                                 DN_OK);
                same_products(ref, act, cols, w, a, b);
            }
            free(mem);
            dn_act_destroy(ref);
        }
    }
    for (size_t ti = 0; ti < NTYPES; ti++) free(w[ti]);
    free(x), free(a), free(b);
    for (int p = 1; p < 4; p++) dn_pool_destroy(pools[p]);
}

/* NaN in column 41 and infinity in column 23 of 70: every pool reports
   23's, as dn_act_prepare does (on pools of two and three threads the two
   columns fall in different tasks: of 8, the third and fifth; of 12, the
   fifth and eighth). */
static void first_bad_column_wins(void **state)
{
    (void)state;
    uint64_t s = 0x626164636f6cu;
    dn_pool *pools[4] = {NULL, dn_pool_create(1), dn_pool_create(2), dn_pool_create(3)};
    float *x = malloc(MAXCOLS * N * sizeof *x);
    assert_true(pools[1] && pools[2] && pools[3] && x);
    fill(&s, x, MAXCOLS * N);
    x[41 * N + 7] = NAN;
    x[23 * N + 300] = INFINITY;
    size_t bytes = 0;
    assert_int_equal(dn_act_size(N, MAXCOLS, DN_ACT_SUB32, DN_WORDS_ONE, &bytes), DN_OK);
    void *mem = malloc(bytes);
    assert_non_null(mem);
    size_t want_bad = 0;
    dn_act *act = (dn_act *)mem;
    assert_int_equal(
        dn_act_prepare(x, N, MAXCOLS, DN_ACT_SUB32, DN_WORDS_ONE, mem, bytes, &act, &want_bad),
        DN_ERR_NON_FINITE);
    assert_int_equal(want_bad, 23 * N + 300);
    for (int p = 0; p < 4; p++) {
        size_t bad = 0;
        act = (dn_act *)mem;
        assert_int_equal(dn_act_prepare_pool(x, N, MAXCOLS, DN_ACT_SUB32, DN_WORDS_ONE, NULL, 0,
                                             mem, bytes, pools[p], &act, &bad),
                         DN_ERR_NON_FINITE);
        assert_null(act);
        assert_int_equal(bad, want_bad);
    }
    free(mem);
    free(x);
    for (int p = 1; p < 4; p++) dn_pool_destroy(pools[p]);
}

/* Named formats as dn_act_prepare_for: the named served, another refused;
   the same refusals for bad names and arguments. */
static void named_formats_and_refusals(void **state)
{
    (void)state;
    uint64_t s = 0x6e616d6564u;
    dn_pool *pool = dn_pool_create(2);
    float *x = malloc(3 * N * sizeof *x), *out = malloc(3 * ROWS * sizeof *out);
    uint8_t *w = malloc(ROWS * (N / 32) * dn_type_block_bytes(DN_TYPE_Q8_0));
    assert_true(pool && x && out && w);
    fill(&s, x, 3 * N);
    random_blocks(&s, DN_TYPE_Q8_0, w, ROWS * (N / 32));
    size_t bytes = 0;
    assert_int_equal(dn_act_size(N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, &bytes), DN_OK);
    void *mem = malloc(bytes);
    assert_non_null(mem);
    const dn_type q4k[1] = {DN_TYPE_Q4_K}, f16[1] = {DN_TYPE_F16};
    dn_act *act = NULL;
    assert_int_equal(dn_act_prepare_pool(x, N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, q4k, 1, mem,
                                         bytes, pool, &act, NULL),
                     DN_OK);
    assert_int_equal(dn_act_mat_mul(act, DN_TYPE_Q8_0, w, ROWS, out, pool, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_pool(x, N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, f16, 1, mem,
                                         bytes, pool, &act, NULL),
                     DN_ERR_UNSUPPORTED_TYPE);
    assert_null(act);
    assert_int_equal(dn_act_prepare_pool(x, N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, NULL, 1, mem,
                                         bytes, pool, &act, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_pool(x, N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, q4k, 0, mem,
                                         bytes, pool, &act, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_pool(x, N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, NULL, 0, mem,
                                         bytes - 1, pool, &act, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_pool(NULL, N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, NULL, 0, mem,
                                         bytes, pool, &act, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_pool(x, 100, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, NULL, 0, mem,
                                         bytes, pool, &act, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_act_prepare_pool(x, N, 3, DN_ACT_PER_BLOCK, DN_WORDS_ONE, NULL, 0, mem,
                                         bytes, pool, NULL, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    free(mem), free(x), free(out), free(w);
    dn_pool_destroy(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pooled_equals_prepared),
        cmocka_unit_test(first_bad_column_wins),
        cmocka_unit_test(named_formats_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
