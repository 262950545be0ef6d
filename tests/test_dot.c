/* SPDX-License-Identifier: MIT */
/*
 * The engine's dot product of a coded row with a quantized activation row.
 *
 *  - By hand: one rounding per group (Sub32) against one per weight block
 *    (per-block scaling) on the same integers.
 *  - Against an exact model (exact_model.h, GMP/MPFR, nothing from src/):
 *    10^6 random groups and 10^6 random blocks, with scale exponents spread
 *    far past DN_SUM_WINDOW, every result bit for bit.
 *  - Matrix-vector products: the pool and the row range never change a bit;
 *    an unreadable block is reported by its index.
 */
#include <math.h>
#include <stdlib.h>

#include "decodenum.h"
#include "random_blocks.h"
#include "exact_model.h"
#include "testutil.h"

/* The engine's add, from the C operator: FTZ on the result, one NaN. The
   pieces added are never denormal (they come from the exact model's FTZ). */
static float model_fadd(float a, float b)
{
    uint32_t u = tbits(a + b);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return tf(0x7FC00000u);
    if ((u & 0x7F800000u) == 0) u &= 0x80000000u;
    return tf(u);
}

/* Sub32 rounds a group once; per-block scaling rounds each block. Three
   blocks of 32 under a = 1: the integer sums are 2^24, 1 and 1 (two-word
   codes reach 4096 * 4096). One group: 2^24 + 2 exactly. Per block:
   2^24 + 1 ties to 2^24, and again. */
static void one_rounding_per_group_or_block(void **state)
{
    (void)state;
    int16_t coef[96] = {0}, offs[96] = {0}, codes[96] = {0};
    dn_segment seg[3];
    for (int s = 0; s < 3; s++) seg[s] = (dn_segment){{1, 0}, {0, 0}, (uint32_t)(32 * s), 32};
    coef[0] = 4096;
    codes[0] = 4096;
    coef[32] = 1;
    codes[32] = 1;
    coef[64] = 1;
    codes[64] = 1;
    dn_coded_row row = {coef, offs, seg, 96, 3};
    dn_act_scale sub[3] = {{8, -3}, {8, -3}, {8, -3}};        /* 1 */
    dn_act_scale wide[3] = {{128, -7}, {128, -7}, {128, -7}}; /* 1 */
    dn_act_row a_sub = {codes, sub, 96, 32, DN_WORDS_TWO},
               a_wide = {codes, wide, 96, 32, DN_WORDS_TWO};
    float v;
    assert_int_equal(dn_dot(&row, &a_sub, DN_ACT_SUB32, &v), DN_OK);
    assert_same_float(v, 0x1p24f + 2.0f);
    assert_int_equal(dn_dot(&row, &a_wide, DN_ACT_PER_BLOCK, &v), DN_OK);
    assert_same_float(v, 0x1p24f);
    /* the second scale counts too: b * offs with offs * code = -3 at b = 2^-1 */
    seg[1].b = (dn_scale){1, -1};
    offs[33] = -3;
    codes[33] = 1;
    assert_int_equal(dn_dot(&row, &a_sub, DN_ACT_SUB32, &v), DN_OK);
    assert_same_float(v, 0x1p24f); /* 2^24 + 2 - 1.5 = 2^24 + 0.5: below the half ulp, 2^24 */
}

/* ---- the model -------------------------------------------------------------- */

/* The group (Sub32) or block (per block) value of elements [from, to) of the
   row, from first principles: per activation block, the two terms
   sig * m * sum(...) at 2^(exp + e), summed by the exact model. */
static float model_piece(const dn_coded_row *row, const dn_act_row *act, size_t from, size_t to)
{
    dn_term t[16];
    size_t nt = 0;
    mpz_t c, o, p;
    mpz_inits(c, o, p, (mpz_ptr)0);
    for (size_t b = from; b < to; b += act->block == 32 ? 32 : act->block) {
        size_t len = act->block == 32 ? 32 : act->block;
        const dn_segment *s = row->segments;
        while (!(s->first <= b && b < s->first + s->count)) s++;
        mpz_set_ui(c, 0);
        mpz_set_ui(o, 0);
        for (size_t i = b; i < b + len; i++) {
            mpz_set_si(p, (long)row->coef[i] * act->codes[i]);
            mpz_add(c, c, p);
            mpz_set_si(p, (long)row->offs[i] * act->codes[i]);
            mpz_add(o, o, p);
        }
        dn_act_scale as = act->scales[b / len];
        mpz_mul_si(c, c, (long)s->a.sig * as.m);
        mpz_mul_si(o, o, (long)s->b.sig * as.m);
        assert_true(mpz_fits_slong_p(c) && mpz_fits_slong_p(o));
        t[nt++] = (dn_term){mpz_get_si(c), s->a.exp + as.e, 0};
        t[nt++] = (dn_term){mpz_get_si(o), s->b.exp + as.e, 0};
    }
    mpz_clears(c, o, p, (mpz_ptr)0);
    return tf(oracle_exact_sum(t, nt));
}

static float model_dot(const dn_coded_row *row, const dn_act_row *act, dn_act_scaling scaling)
{
    float acc = 0.0f;
    size_t step = scaling == DN_ACT_SUB32 ? DN_GROUP : act->block;
    for (size_t g = 0; g < row->n; g += step)
        acc = model_fadd(acc, model_piece(row, act, g, g + step < row->n ? g + step : row->n));
    return acc;
}

/* A random row of `blocks` segments of `seg` elements and its activations. */
static void random_case(uint64_t *s, size_t seg, size_t blocks, dn_act_scaling scaling,
                        dn_coded_row *row, dn_act_row *act)
{
    size_t n = seg * blocks;
    int spread = (int)between(s, 0, 3); /* 0: tame .. 3: exponents far apart */
    int words = (int)between(s, 1, 2);
    int32_t bound = words == 1 ? 127 : 32767;
    for (size_t k = 0; k < blocks; k++) {
        dn_segment *g = &row->segments[k];
        int32_t span = spread == 0 ? 2 : spread == 1 ? 20 : spread == 2 ? 70 : 140;
        g->a = (dn_scale){(int32_t)between(s, -2047, 2047),
                          (int32_t)between(s, -24 - span, -10 + span)};
        g->b = splitmix(s) & 1 ? (dn_scale){(int32_t)between(s, -2047, 2047),
                                            (int32_t)between(s, -24 - span, span)}
                               : (dn_scale){0, 0};
        g->first = (uint32_t)(k * seg);
        g->count = (uint32_t)seg;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t z = splitmix(s);
        row->coef[i] = (int16_t)between(s, -DN_COEF_BOUND, DN_COEF_BOUND);
        row->offs[i] = (z & 3) ? 0 : (int16_t)between(s, -DN_COEF_BOUND, DN_COEF_BOUND);
        act->codes[i] = (z >> 8 & 7) == 0 ? 0 : (int16_t)between(s, -bound, bound);
    }
    act->n = n;
    act->words = (dn_words)words;
    act->block = scaling == DN_ACT_SUB32 ? 32 : (uint32_t)seg;
    for (size_t b = 0; b < n / act->block; b++) {
        int32_t lo = scaling == DN_ACT_SUB32 ? 8 : 128;
        act->scales[b] = (dn_act_scale){(int32_t)between(s, lo, 2 * lo - 1),
                                        (int32_t)between(s, -40 - 40 * spread, 10 + 20 * spread)};
    }
    row->n = n;
    row->nsegments = blocks;
}

static void against_the_exact_model(dn_act_scaling scaling)
{
    enum { CASES = 1000000 };
    int16_t coef[512], offs[512], codes[512];
    dn_segment segs[16];
    dn_act_scale scales[16];
    uint64_t s = scaling == DN_ACT_SUB32 ? 0xD07 : 0xB10C;
    size_t differ = 0, checked = 0;
    for (int c = 0; c < CASES; c++) {
        /* Sub32: one group of 256 (8 or 1 segments), or a short group of 32..224.
           Per block: one block of 32 or 256. */
        size_t seg = splitmix(&s) & 1 ? 32 : 256;
        size_t blocks = scaling == DN_ACT_SUB32 && seg == 32 ? (size_t)between(&s, 1, 8) : 1;
        dn_coded_row row = {coef, offs, segs, 0, 0};
        dn_act_row act = {codes, scales, 0, 0, DN_WORDS_ONE};
        random_case(&s, seg, blocks, scaling, &row, &act);
        float want = model_dot(&row, &act, scaling), got;
        assert_int_equal(dn_dot(&row, &act, scaling, &got), DN_OK);
        if (tbits(want) != tbits(got) && differ++ < 5)
            printf("  case %d: model 0x%08x, dn_dot 0x%08x\n", c, tbits(want), tbits(got));
        checked++;
    }
    printf("  %s: %zu random %s compared with the exact model, %zu differ\n",
           scaling == DN_ACT_SUB32 ? "Sub32" : "per block", checked,
           scaling == DN_ACT_SUB32 ? "groups" : "blocks", differ);
    assert_int_equal(differ, 0);
}

static int model_setup(void **state)
{
    (void)state;
    oracle_init();
    return 0;
}
static int model_teardown(void **state)
{
    (void)state;
    oracle_clear();
    return 0;
}

static void sub32_groups_are_exact(void **state)
{
    (void)state;
    against_the_exact_model(DN_ACT_SUB32);
}
static void blocks_are_exact(void **state)
{
    (void)state;
    against_the_exact_model(DN_ACT_PER_BLOCK);
}

static void misaligned_inputs_are_refused(void **state)
{
    (void)state;
    int16_t coef[64] = {0}, offs[64] = {0}, codes[64] = {0};
    dn_segment seg[1] = {{{1, 0}, {0, 0}, 0, 64}};
    dn_act_scale sc[2] = {{8, 0}, {8, 0}};
    dn_coded_row row = {coef, offs, seg, 64, 1};
    dn_act_row act = {codes, sc, 64, 32, DN_WORDS_ONE};
    float v;
    assert_int_equal(dn_dot(&row, &act, DN_ACT_SUB32, &v), DN_OK);
    assert_int_equal(dn_dot(&row, &act, DN_ACT_PER_BLOCK, &v),
                     DN_ERR_INVALID_ARGUMENT); /* 64 != 32 */
    act.n = 32;
    assert_int_equal(dn_dot(&row, &act, DN_ACT_SUB32, &v), DN_ERR_INVALID_ARGUMENT);
    act.n = 64;
    assert_int_equal(dn_dot(&row, &act, (dn_act_scaling)5, &v), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_dot(NULL, &act, DN_ACT_SUB32, &v), DN_ERR_INVALID_ARGUMENT);

    /* Per block, a segment longer than DN_GROUP is refused: its integer sum
       times a.sig * m would pass int64_t (4096 extreme terms: 2^42 * 2^23). */
    static int16_t big_coef[4096], big_offs[4096], big_codes[4096];
    for (size_t i = 0; i < 4096; i++) big_coef[i] = big_codes[i] = -32768;
    dn_segment big_seg[1] = {{{32768, 0}, {0, 0}, 0, 4096}};
    dn_act_scale big_sc[1] = {{255, 0}};
    dn_coded_row big_row = {big_coef, big_offs, big_seg, 4096, 1};
    dn_act_row big_act = {big_codes, big_sc, 4096, 4096, DN_WORDS_TWO};
    assert_int_equal(dn_dot(&big_row, &big_act, DN_ACT_PER_BLOCK, &v), DN_ERR_INVALID_ARGUMENT);
    big_seg[0].count = 512, big_row.n = big_act.n = big_act.block = 512;
    assert_int_equal(dn_dot(&big_row, &big_act, DN_ACT_PER_BLOCK, &v), DN_ERR_INVALID_ARGUMENT);
    big_seg[0].count = 256, big_row.n = big_act.n = big_act.block = 256;
    assert_int_equal(dn_dot(&big_row, &big_act, DN_ACT_PER_BLOCK, &v), DN_OK);
}

/* ---- matrix-vector products --------------------------------------------- */

/* The last block of row 23 made unreadable (an infinite d): every pool
   reports its index, then the block is restored. */
static void unreadable_block_is_named(dn_type t, uint8_t *w, size_t rows, size_t n,
                                      const dn_act_row *act, dn_act_scaling scaling, float *out,
                                      dn_pool *const pools[4])
{
    size_t blocks = n / dn_type_block_elements(t), bb = dn_type_block_bytes(t);
    int d, dm;
    block_scale_offsets(t, &d, &dm);
    size_t blk = 23 * blocks + blocks - 1;
    uint8_t keep[2] = {w[blk * bb + d], w[blk * bb + d + 1]};
    put16(w + blk * bb + d, 0x7C00);
    for (int p = 0; p < 4; p++) {
        size_t bad = 0;
        assert_int_equal(dn_mat_vec(t, w, rows, n, act, scaling, out, pools[p], &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, blk);
    }
    w[blk * bb + d] = keep[0], w[blk * bb + d + 1] = keep[1];
}

/* Every format, both scalings, both word counts: dn_mat_vec on no pool and
   on pools of 1, 2 and 3 threads, and dn_mat_vec_rows over a random split,
   all equal dn_dot of each row read by dn_read_row (the definition), bit
   for bit; an unreadable block is reported by its index whatever the pool. */
static void mat_vec_is_dot_of_every_row(void **state)
{
    (void)state;
    static const dn_type types[] = {DN_TYPE_Q4_0, DN_TYPE_Q4_1, DN_TYPE_Q5_0,   DN_TYPE_Q5_1,
                                    DN_TYPE_Q8_0, DN_TYPE_Q2_K, DN_TYPE_Q3_K,   DN_TYPE_Q4_K,
                                    DN_TYPE_Q5_K, DN_TYPE_Q6_K, DN_TYPE_IQ4_NL, DN_TYPE_IQ4_XS};
    const size_t rows = 37;
    dn_pool *pools[4] = {NULL, dn_pool_create(1), dn_pool_create(2), dn_pool_create(3)};
    assert_non_null(pools[1]);
    assert_non_null(pools[2]);
    assert_non_null(pools[3]);
    uint64_t s = 0x6d61747665637421u;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        dn_type t = types[ti];
        size_t be = dn_type_block_elements(t), bb = dn_type_block_bytes(t);
        size_t n = be == 256 ? 768 : 544; /* a short last group for 32-element blocks */
        size_t blocks = n / be;
        uint8_t *w = malloc(rows * blocks * bb);
        float *x = malloc(n * sizeof *x), *ref = malloc(rows * sizeof *ref),
              *out = malloc(rows * sizeof *out);
        int16_t *codes = malloc(n * sizeof *codes), *coef = malloc(n * sizeof *coef),
                *offs = malloc(n * sizeof *offs);
        dn_act_scale *scales = malloc(n / 32 * sizeof *scales);
        dn_segment *segs = malloc(n / 16 * sizeof *segs);
        assert_true(w && x && ref && out && codes && coef && offs && scales && segs);
        random_blocks(&s, t, w, rows * blocks);
        for (size_t i = 0; i < n; i++) /* Gaussian-ish, every 50th an outlier */
            x[i] = (float)(between(&s, -1000, 1000) + between(&s, -1000, 1000)) / 1000.0f *
                   (i % 50 ? 1.0f : 40.0f);
        for (int sc = 0; sc < 2; sc++)
            for (int wd = 0; wd < 2; wd++) {
                dn_act_scaling scaling = sc ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
                dn_words words = wd ? DN_WORDS_TWO : DN_WORDS_ONE;
                dn_act_row act = {codes, scales, n, 0, words};
                size_t bad = 0;
                assert_int_equal(sc ? dn_quantize_blocks(x, n, be, words, &act, &bad)
                                    : dn_quantize(x, n, words, &act, &bad),
                                 DN_OK);
                for (size_t r = 0; r < rows; r++) {
                    dn_coded_row row = {coef, offs, segs, n, 0};
                    size_t at = 0;
                    assert_int_equal(dn_read_row(t, w + r * blocks * bb, n, &row, &at), DN_OK);
                    assert_int_equal(dn_dot(&row, &act, scaling, &ref[r]), DN_OK);
                }
                for (int p = 0; p < 4; p++) {
                    memset(out, 0xFF, rows * sizeof *out);
                    assert_int_equal(dn_mat_vec(t, w, rows, n, &act, scaling, out, pools[p], &bad),
                                     DN_OK);
                    for (size_t r = 0; r < rows; r++)
                        assert_int_equal(tbits(out[r]), tbits(ref[r]));
                }
                memset(out, 0xFF, rows * sizeof *out);
                for (size_t r0 = 0; r0 < rows;) {
                    size_t r1 = r0 + (size_t)between(&s, 1, 9);
                    if (r1 > rows) r1 = rows;
                    assert_int_equal(
                        dn_mat_vec_rows(t, w, rows, n, &act, scaling, r0, r1, out, &bad), DN_OK);
                    r0 = r1;
                }
                for (size_t r = 0; r < rows; r++) assert_int_equal(tbits(out[r]), tbits(ref[r]));

                unreadable_block_is_named(t, w, rows, n, &act, scaling, out, pools);
            }
        free(w);
        free(x);
        free(ref);
        free(out);
        free(codes);
        free(coef);
        free(offs);
        free(scales);
        free(segs);
    }
    for (int p = 1; p < 4; p++) dn_pool_destroy(pools[p]);
}

/* Counts whose sizes do not fit are refused before anything is allocated:
   rows near SIZE_MAX (dn_mat_vec's split into tasks once wrapped
   rows + threads * 4 - 1 and answered DN_ERR_OUT_OF_MEMORY) and n past
   UINT32_MAX (dn_read_row's limit; dn_mat_vec_rows once allocated its
   working rows first). */
static void huge_counts_are_invalid(void **state)
{
    (void)state;
    static int16_t codes[256];
    dn_act_scale sc[8];
    for (int k = 0; k < 8; k++) sc[k] = (dn_act_scale){8, 0};
    dn_act_row act = {codes, sc, 256, 32, DN_WORDS_ONE};
    static uint8_t w[144];
    float out[1];
    dn_pool *pool = dn_pool_create(2);
    assert_non_null(pool);
    const size_t huge[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 6, SIZE_MAX / 2};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        assert_int_equal(
            dn_mat_vec(DN_TYPE_Q4_K, w, huge[i], 256, &act, DN_ACT_SUB32, out, NULL, NULL),
            DN_ERR_INVALID_ARGUMENT);
        assert_int_equal(
            dn_mat_vec(DN_TYPE_Q4_K, w, huge[i], 256, &act, DN_ACT_SUB32, out, pool, NULL),
            DN_ERR_INVALID_ARGUMENT);
        assert_int_equal(
            dn_mat_vec_rows(DN_TYPE_Q4_K, w, huge[i], 256, &act, DN_ACT_SUB32, 0, 1, out, NULL),
            DN_ERR_INVALID_ARGUMENT);
    }
#if SIZE_MAX > UINT32_MAX
    const size_t long_n[] = {(size_t)1 << 40, ((size_t)UINT32_MAX + 1) * 256};
    for (size_t i = 0; i < sizeof long_n / sizeof long_n[0]; i++) {
        dn_act_row wide = {codes, sc, long_n[i], 32, DN_WORDS_ONE};
        assert_int_equal(
            dn_mat_vec_rows(DN_TYPE_Q4_K, w, 1, long_n[i], &wide, DN_ACT_SUB32, 0, 1, out, NULL),
            DN_ERR_INVALID_ARGUMENT);
        assert_int_equal(
            dn_mat_vec(DN_TYPE_Q4_K, w, 1, long_n[i], &wide, DN_ACT_SUB32, out, pool, NULL),
            DN_ERR_INVALID_ARGUMENT);
    }
#endif
    dn_pool_destroy(pool);
}

/* The API asks no alignment of the weights (bytes): every format, both
   scalings, both word counts, the matrix at 1, 2 and 3 bytes past an
   aligned buffer and the activation's codes and scales one element past
   theirs give the bits of the aligned call (and UBSan, in the sanitize
   build, sees no misaligned load). */
static void odd_addresses_change_no_bit(void **state)
{
    (void)state;
    static const dn_type types[] = {DN_TYPE_Q4_0, DN_TYPE_Q4_1, DN_TYPE_Q5_0,   DN_TYPE_Q5_1,
                                    DN_TYPE_Q8_0, DN_TYPE_Q2_K, DN_TYPE_Q3_K,   DN_TYPE_Q4_K,
                                    DN_TYPE_Q5_K, DN_TYPE_Q6_K, DN_TYPE_IQ4_NL, DN_TYPE_IQ4_XS};
    const size_t rows = 9, n = 512;
    uint64_t s = 0x6f64646164647221u;
    uint8_t *w = malloc(rows * (n / 32) * 34 + 64), *wo = malloc(rows * (n / 32) * 34 + 64);
    float *x = malloc(n * sizeof *x), ref[9], out[9];
    int16_t *codes = malloc(n * sizeof *codes), *codes_odd = malloc((n + 1) * sizeof *codes);
    dn_act_scale *scales = malloc(n / 32 * sizeof *scales),
                 *scales_odd = malloc((n / 32 + 1) * sizeof *scales);
    assert_true(w && wo && x && codes && codes_odd && scales && scales_odd);
    for (size_t i = 0; i < n; i++) x[i] = (float)(between(&s, -1000, 1000)) / 250.0f;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        dn_type t = types[ti];
        size_t be = dn_type_block_elements(t), bytes = rows * (n / be) * dn_type_block_bytes(t);
        random_blocks(&s, t, w, rows * (n / be));
        for (int k = 0; k < 4; k++) {
            dn_act_scaling scaling = k & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
            dn_words words = k & 2 ? DN_WORDS_TWO : DN_WORDS_ONE;
            dn_act_row act = {codes, scales, n, 0, words},
                       odd = {codes_odd + 1, scales_odd + 1, n, 0, words};
            assert_int_equal(scaling == DN_ACT_SUB32
                                 ? dn_quantize(x, n, words, &act, NULL)
                                 : dn_quantize_blocks(x, n, be, words, &act, NULL),
                             DN_OK);
            assert_int_equal(dn_mat_vec(t, w, rows, n, &act, scaling, ref, NULL, NULL), DN_OK);
            assert_int_equal(scaling == DN_ACT_SUB32
                                 ? dn_quantize(x, n, words, &odd, NULL)
                                 : dn_quantize_blocks(x, n, be, words, &odd, NULL),
                             DN_OK);
            for (size_t off = 1; off < 4; off++) {
                memcpy(wo + off, w, bytes);
                memset(out, 0xFF, sizeof out);
                assert_int_equal(dn_mat_vec(t, wo + off, rows, n, &odd, scaling, out, NULL, NULL),
                                 DN_OK);
                for (size_t r = 0; r < rows; r++) assert_int_equal(tbits(out[r]), tbits(ref[r]));
                memset(out, 0xFF, sizeof out);
                assert_int_equal(
                    dn_mat_vec_rows(t, wo + off, rows, n, &act, scaling, 1, rows, out, NULL),
                    DN_OK);
                for (size_t r = 1; r < rows; r++) assert_int_equal(tbits(out[r]), tbits(ref[r]));
            }
        }
    }
    free(w);
    free(wo);
    free(x);
    free(codes);
    free(codes_odd);
    free(scales);
    free(scales_odd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_rounding_per_group_or_block),
        cmocka_unit_test(misaligned_inputs_are_refused),
        cmocka_unit_test(sub32_groups_are_exact),
        cmocka_unit_test(blocks_are_exact),
        cmocka_unit_test(mat_vec_is_dot_of_every_row),
        cmocka_unit_test(huge_counts_are_invalid),
        cmocka_unit_test(odd_addresses_change_no_bit),
    };
    return cmocka_run_group_tests_name("dot", tests, model_setup, model_teardown);
}
