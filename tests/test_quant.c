/* SPDX-License-Identifier: MIT */
/*
 * Activation quantization: the least scale on the 4-bit and 8-bit
 * significand grids, codes as exact nearest integers, the all-zero block's
 * canonical scale, non-finite inputs. Expectations derived by hand, and a
 * sweep against the definition (bound * scale >= amax, and no smaller grid
 * value does) checked with exact integer comparisons.
 */
#include <math.h>

#include "decodenum.h"
#include "testutil.h"

static void block_scale_by_hand(void **state)
{
    (void)state;
    dn_act_scale s;
    /* 127 * s >= 127: s = 1 = 8 * 2^-3 */
    assert_int_equal(dn_block_scale(127.0f, DN_WORDS_ONE, &s), DN_OK);
    assert_int_equal(s.m, 8);
    assert_int_equal(s.e, -3);
    /* 127.5 / 127 = 1.0039..: 8 * 2^-3 is too small, 9 * 2^-3 */
    assert_int_equal(dn_block_scale(127.5f, DN_WORDS_ONE, &s), DN_OK);
    assert_int_equal(s.m, 9);
    assert_int_equal(s.e, -3);
    /* 1 / 127 = 0.0078740: 8 * 2^-10 = 0.0078125 is below, 9 * 2^-10 above
       (15 * 2^-11 = 0.0073 is below too) */
    assert_int_equal(dn_block_scale(1.0f, DN_WORDS_ONE, &s), DN_OK);
    assert_int_equal(s.m, 9);
    assert_int_equal(s.e, -10);
    /* 8-bit grid: 129 * 2^-14 = 0.00787354 < 1/127 < 130 * 2^-14 */
    assert_int_equal(dn_wide_scale(1.0f, DN_WORDS_ONE, &s), DN_OK);
    assert_int_equal(s.m, 130);
    assert_int_equal(s.e, -14);
    /* two words: bound 32767 */
    assert_int_equal(dn_block_scale(32767.0f, DN_WORDS_TWO, &s), DN_OK);
    assert_int_equal(s.m, 8);
    assert_int_equal(s.e, -3);
    /* 15 * 2^e exactly reached: 127 * 15 = 1905 */
    assert_int_equal(dn_block_scale(1905.0f, DN_WORDS_ONE, &s), DN_OK);
    assert_int_equal(s.m, 15);
    assert_int_equal(s.e, 0);
    /* just past it: the next grid value is 16 = 8 * 2^1 */
    assert_int_equal(dn_block_scale(nextafterf(1905.0f, INFINITY), DN_WORDS_ONE, &s), DN_OK);
    assert_int_equal(s.m, 8);
    assert_int_equal(s.e, 1);
    assert_int_equal(dn_block_scale(0.0f, DN_WORDS_ONE, &s), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_block_scale(-1.0f, DN_WORDS_ONE, &s), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_block_scale(INFINITY, DN_WORDS_ONE, &s), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_block_scale(tf(0x00400000), DN_WORDS_ONE, &s), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_block_scale(1.0f, (dn_words)3, &s), DN_ERR_INVALID_ARGUMENT);
}

/* bound * m * 2^e >= amax, and the grid value just below the scale is not,
   compared exactly: amax = M * 2^E against bound * m * 2^e as integers. */
static int holds(float amax, int64_t bound, int64_t m, int32_t e)
{
    int E;
    double f = frexp((double)amax, &E); /* amax = f * 2^E, f in [1/2, 1) */
    int64_t M = (int64_t)ldexp(f, 24);
    E -= 24;
    /* compare bound * m * 2^e with M * 2^E: shift the larger exponent down */
    __int128 lhs = (__int128)bound * m, rhs = M;
    int shift = e - E;
    if (shift >= 0) {
        if (shift > 80) return 1;
        lhs <<= shift;
    } else {
        if (-shift > 80) return 0;
        rhs <<= -shift;
    }
    return lhs >= rhs;
}

static void scales_are_least_on_their_grid(void **state)
{
    (void)state;
    uint64_t z = 12345;
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)(lcg64(&z) >> 33) & 0x7FFFFFFFu;
        if ((u & 0x7F800000u) == 0 || (u & 0x7F800000u) == 0x7F800000u) continue;
        float amax = tf(u);
        for (int wide = 0; wide < 2; wide++)
            for (int words = 1; words <= 2; words++) {
                dn_act_scale s;
                dn_status st = wide ? dn_wide_scale(amax, (dn_words)words, &s)
                                    : dn_block_scale(amax, (dn_words)words, &s);
                assert_int_equal(st, DN_OK);
                int64_t lo = wide ? 128 : 8, bound = words == 1 ? 127 : 32767;
                assert_true(s.m >= lo && s.m < 2 * lo);
                assert_true(holds(amax, bound, s.m, s.e));
                /* the grid value below: m - 1 at e, or (2 lo - 1) at e - 1 */
                int64_t pm = s.m > lo ? s.m - 1 : 2 * lo - 1;
                int32_t pe = s.m > lo ? s.e : s.e - 1;
                assert_false(holds(amax, bound, pm, pe));
            }
    }
}

static void codes_are_nearest_integers(void **state)
{
    (void)state;
    float x[32] = {127.0f, 2.5f, -2.5f, 3.5f, 0.49f, -126.5f, tf(0x00400000), -0.0f};
    int16_t codes[32];
    dn_act_scale sc[1];
    dn_act_row row = {codes, sc, 32, 0, DN_WORDS_ONE};
    assert_int_equal(dn_quantize(x, 32, DN_WORDS_ONE, &row, NULL), DN_OK);
    assert_int_equal(row.block, 32);
    assert_int_equal(sc[0].m, 8); /* amax 127: scale 1 */
    assert_int_equal(sc[0].e, -3);
    const int16_t want[8] = {127, 2, -2, 4, 0, -126, 0, 0};
    for (int i = 0; i < 8; i++) assert_int_equal(codes[i], want[i]);
    for (int i = 8; i < 32; i++) assert_int_equal(codes[i], 0);
}

/* A block whose largest magnitude is FLT_MIN has a scale far below 2^-126,
   so a denormal beside it would be a large code if it were read as it is:
   FTZ reads it as zero, code 0, and the block quantizes as the same block
   with zeros in its place. The normal element's code is dn_rne_div's. */
static void denormals_beside_a_tiny_amax_are_zeros(void **state)
{
    (void)state;
    float x[32] = {0x1p-126f, tf(0x00400000), tf(0x807FFFFF), 0.0f, tf(0x00000001)};
    float z[32] = {0x1p-126f};
    for (int words = 1; words <= 2; words++) {
        int16_t codes[32], zcodes[32];
        dn_act_scale sc[1], zsc[1];
        dn_act_row row = {codes, sc, 32, 0, DN_WORDS_ONE};
        dn_act_row zrow = {zcodes, zsc, 32, 0, DN_WORDS_ONE};
        assert_int_equal(dn_quantize(x, 32, (dn_words)words, &row, NULL), DN_OK);
        assert_int_equal(dn_quantize(z, 32, (dn_words)words, &zrow, NULL), DN_OK);
        dn_act_scale want;
        assert_int_equal(dn_block_scale(0x1p-126f, (dn_words)words, &want), DN_OK);
        assert_int_equal(sc[0].m, want.m);
        assert_int_equal(sc[0].e, want.e);
        int64_t q0;
        assert_int_equal(dn_rne_div(0x1p-126f, (uint32_t)want.m, want.e, &q0), DN_OK);
        assert_int_equal(codes[0], q0);
        for (int i = 1; i < 32; i++) assert_int_equal(codes[i], 0);
        for (int i = 0; i < 32; i++) assert_int_equal(codes[i], zcodes[i]);
    }
}

static void zero_blocks_and_bad_inputs(void **state)
{
    (void)state;
    float x[64] = {0};
    x[40] = 1.0f;
    int16_t codes[64];
    dn_act_scale sc[2];
    dn_act_row row = {codes, sc, 64, 0, DN_WORDS_ONE};
    assert_int_equal(dn_quantize(x, 64, DN_WORDS_TWO, &row, NULL), DN_OK);
    assert_int_equal(sc[0].m, 8); /* the canonical all-zero scale */
    assert_int_equal(sc[0].e, 0);
    assert_int_equal(row.words, DN_WORDS_TWO);
    /* 1 in two words: 8 * 2^-18 = 1/32768 falls short of 1/32767, so the
       scale is 9 * 2^-18 and the code rne(2^18 / 9) = rne(29127.1) = 29127 */
    assert_int_equal(sc[1].m, 9);
    assert_int_equal(sc[1].e, -18);
    assert_int_equal(codes[40], 29127);
    dn_act_scale wide[1];
    dn_act_row w = {codes, wide, 64, 0, DN_WORDS_ONE};
    float z[64] = {0};
    assert_int_equal(dn_quantize_blocks(z, 64, 64, DN_WORDS_ONE, &w, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    dn_act_scale w2[2];
    dn_act_row w2r = {codes, w2, 64, 0, DN_WORDS_ONE};
    assert_int_equal(dn_quantize_blocks(z, 64, 32, DN_WORDS_ONE, &w2r, NULL), DN_OK);
    assert_int_equal(w2[1].m, 128);
    assert_int_equal(w2[1].e, 0);
    size_t bad = 99;
    x[17] = NAN;
    assert_int_equal(dn_quantize(x, 64, DN_WORDS_ONE, &row, &bad), DN_ERR_NON_FINITE);
    assert_int_equal(bad, 17);
    x[17] = 0.0f;
    x[3] = -INFINITY;
    assert_int_equal(dn_quantize(x, 64, DN_WORDS_ONE, &row, &bad), DN_ERR_NON_FINITE);
    assert_int_equal(bad, 3);
    assert_int_equal(dn_quantize(x, 48, DN_WORDS_ONE, &row, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_quantize(NULL, 0, DN_WORDS_ONE, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
}

/* Element j of a block whose scale is s = 9 * 2^E (its largest magnitude
   127 * s: 8 * 2^E falls short), a value at or next to the half-integer
   multiple (k + 1/2) s, and the code the contract gives it, derived from
   which side of the half-integer the value lies (ties to even). */
static float near_tie(int k, int side, int E, int16_t *code)
{
    float tie = ldexpf((float)(2 * k + 1) * 9.0f, E - 1);
    float x = side < 0 ? nextafterf(tie, 0.0f) : side > 0 ? nextafterf(tie, 2.0f * tie) : tie;
    *code = (int16_t)(side < 0 ? k : side > 0 ? k + 1 : k + (k & 1));
    return x;
}

/* Codes at and beside every half-integer multiple of a scale that is not a
   power of two (so no kernel can divide by it exactly through a
   reciprocal), over many heights, through the active ISA's kernel. */
static void codes_at_ties_of_a_scale_of_nine(void **state)
{
    (void)state;
    float x[32];
    int16_t codes[32], want[32];
    dn_act_scale sc[1];
    dn_act_row row = {codes, sc, 32, 0, DN_WORDS_ONE};
    for (int E = -110; E <= 100; E += 7)
        for (int k0 = 0; k0 < 127; k0 += 31)
            for (int side = -1; side <= 1; side++) {
                x[0] = ldexpf(127.0f * 9.0f, E);
                want[0] = 127;
                for (int j = 1; j < 32; j++) {
                    int k = (k0 + j) % 126, sign = j & 1 ? -1 : 1;
                    x[j] = (float)sign * near_tie(k, side, E, &want[j]);
                    want[j] = (int16_t)(sign * want[j]);
                }
                assert_int_equal(dn_quantize(x, 32, DN_WORDS_ONE, &row, NULL), DN_OK);
                assert_int_equal(sc[0].m, 9);
                assert_int_equal(sc[0].e, E);
                for (int j = 0; j < 32; j++) assert_int_equal(codes[j], want[j]);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_scale_by_hand),
        cmocka_unit_test(scales_are_least_on_their_grid),
        cmocka_unit_test(codes_are_nearest_integers),
        cmocka_unit_test(codes_at_ties_of_a_scale_of_nine),
        cmocka_unit_test(denormals_beside_a_tiny_amax_are_zeros),
        cmocka_unit_test(zero_blocks_and_bad_inputs),
    };
    return cmocka_run_group_tests_name("quant", tests, NULL, NULL);
}
