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
#include "exact_model.h"
#include "testutil.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int64_t between(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(splitmix(s) % (uint64_t)(hi - lo + 1));
}

/* The engine's add, from the C operator: FTZ on the result, one NaN. The
   pieces added are never denormal (they come from the exact model's FTZ). */
static float model_fadd(float a, float b)
{
    uint32_t u = f2u(a + b);
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
    coef[0] = 4096; codes[0] = 4096;
    coef[32] = 1; codes[32] = 1;
    coef[64] = 1; codes[64] = 1;
    dn_coded_row row = {coef, offs, seg, 96, 3};
    dn_act_scale sub[3] = {{8, -3}, {8, -3}, {8, -3}};      /* 1 */
    dn_act_scale wide[3] = {{128, -7}, {128, -7}, {128, -7}}; /* 1 */
    dn_act_row a_sub = {codes, sub, 96, 32, DN_WORDS_TWO}, a_wide = {codes, wide, 96, 32, DN_WORDS_TWO};
    float v;
    assert_int_equal(dn_dot(&row, &a_sub, DN_ACT_SUB32, &v), DN_OK);
    assert_same_float(v, 0x1p24f + 2.0f);
    assert_int_equal(dn_dot(&row, &a_wide, DN_ACT_PER_BLOCK, &v), DN_OK);
    assert_same_float(v, 0x1p24f);
    /* the second scale counts too: b * offs with offs * code = -3 at b = 2^-1 */
    seg[1].b = (dn_scale){1, -1};
    offs[33] = -3; codes[33] = 1;
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
        g->a = (dn_scale){(int32_t)between(s, -2047, 2047), (int32_t)between(s, -24 - span, -10 + span)};
        g->b = splitmix(s) & 1 ? (dn_scale){(int32_t)between(s, -2047, 2047), (int32_t)between(s, -24 - span, span)}
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

static int model_setup(void **state) { (void)state; oracle_init(); return 0; }
static int model_teardown(void **state) { (void)state; oracle_clear(); return 0; }

static void sub32_groups_are_exact(void **state) { (void)state; against_the_exact_model(DN_ACT_SUB32); }
static void blocks_are_exact(void **state) { (void)state; against_the_exact_model(DN_ACT_PER_BLOCK); }

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
    assert_int_equal(dn_dot(&row, &act, DN_ACT_PER_BLOCK, &v), DN_ERR_INVALID_ARGUMENT); /* 64 != 32 */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_rounding_per_group_or_block),
        cmocka_unit_test(misaligned_inputs_are_refused),
        cmocka_unit_test(sub32_groups_are_exact),
        cmocka_unit_test(blocks_are_exact),
    };
    return cmocka_run_group_tests_name("dot", tests, model_setup, model_teardown);
}
