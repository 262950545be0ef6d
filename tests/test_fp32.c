/* SPDX-License-Identifier: MIT */
/*
 * The fp32 core's references against expectations derived by hand from the
 * rules in docs/numerics.md. Each test names the rule it holds; the values
 * are chosen so that a plausible wrong implementation gives other bits.
 */
#include <float.h>
#include <math.h>

#include "decodenum.h"
#include "testutil.h"

#define DENORM_POS 0x00400000u /* 2^-127 */
#define DENORM_NEG 0x80400000u

/* ftz keeps the sign; everything else passes unchanged, a NaN included. */
static void ftz_keeps_sign(void **state)
{
    (void)state;
    assert_bits(dn_ftz(tf(0x00000001)), 0x00000000);
    assert_bits(dn_ftz(tf(0x807FFFFF)), 0x80000000);
    assert_bits(dn_ftz(tf(0x00800000)), 0x00800000);
    assert_bits(dn_ftz(tf(0xFFC00001)), 0xFFC00001);
    assert_bits(dn_ftz(-0.0f), 0x80000000);
}

/* Operands read through ftz; a denormal result is flushed keeping its sign. */
static void add_flushes_operands_and_results(void **state)
{
    (void)state;
    /* denormal + 1 = 1 exactly (without FTZ it would still be 1: check the zero case) */
    assert_bits(dn_fadd(tf(DENORM_POS), -0.0f), 0x00000000);          /* +0 + -0 = +0 */
    assert_bits(dn_fadd(tf(DENORM_NEG), -0.0f), 0x80000000);          /* -0 + -0 = -0 */
    assert_bits(dn_fadd(tf(DENORM_POS), tf(DENORM_POS)), 0x00000000); /* not 2^-126 */
    /* 1.5*2^-126 - 2^-126 = 2^-127, denormal: flushed to +0, and its negative to -0 */
    assert_bits(dn_fadd(tf(0x00C00000), tf(0x80800000)), 0x00000000);
    assert_bits(dn_fsub(tf(0x80C00000), tf(0x80800000)), 0x80000000);
    assert_bits(dn_fsub(1.0f, 1.0f), 0x00000000);
}

/* FTZ applies after IEEE rounding: (1 - 2^-24) * 2^-126 = 2^-126 - 2^-150 lies
   halfway between the denormal 2^-126 - 2^-149 (odd) and 2^-126 (even), so it
   rounds to the normal 2^-126 and is kept. A flush that judged the exact value
   (or rounded with an unbounded exponent first) would give 0. */
static void mul_flushes_after_rounding(void **state)
{
    (void)state;
    assert_bits(dn_fmul(tf(0x3F7FFFFF), tf(0x00800000)), 0x00800000);
    assert_bits(dn_fmul(tf(0xBF7FFFFF), tf(0x00800000)), 0x80800000);
    /* (1 - 2^-23) * 2^-126 = 2^-126 - 2^-149 is exactly a denormal: flushed */
    assert_bits(dn_fmul(tf(0x3F7FFFFE), tf(0x00800000)), 0x00000000);
    /* a denormal operand is zero: denormal * 2^100 = 0, not 2^-27 */
    assert_bits(dn_fmul(tf(DENORM_POS), 0x1p100f), 0x00000000);
    assert_bits(dn_fmul(tf(DENORM_NEG), 0x1p100f), 0x80000000);
}

/* The engine's NaN is 0x7FC00000, whatever produced it. */
static void one_nan(void **state)
{
    (void)state;
    assert_bits(dn_nan(), 0x7FC00000);
    assert_int_equal(DN_NAN_BITS, 0x7FC00000u);
    assert_bits(dn_fadd(INFINITY, -INFINITY), 0x7FC00000); /* x86 gives 0xFFC00000 */
    assert_bits(dn_fmul(0.0f, INFINITY), 0x7FC00000);
    assert_bits(dn_fsub(tf(0xFFC00123), 1.0f), 0x7FC00000);
    assert_bits(dn_fmul(tf(0x7F800001), 2.0f), 0x7FC00000);
}

/* TF32: operands to 10 fraction bits, nearest even, then one exact product. */
static void tf32_products(void **state)
{
    (void)state;
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1 */
    assert_bits(dn_tf32(tf(0x3F801000)), 0x3F800000);
    /* 1 + 3*2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up */
    assert_bits(dn_tf32(tf(0x3F803000)), 0x3F804000);
    /* just above the tie rounds up */
    assert_bits(dn_tf32(tf(0x3F801001)), 0x3F802000);
    assert_bits(dn_tf32(FLT_MAX), 0x7F800000);
    assert_bits(dn_tf32(-FLT_MAX), 0xFF800000);
    assert_bits(dn_tf32(tf(0x807FFFFF)), 0x80000000);
    assert_bits(dn_tf32(tf(0xFFFFFFFF)), 0x7FC00000);
    /* (1 + 2^-11)^2: the vector unit keeps 1 + 2^-10 + 2^-22, TF32 sees 1 * 1 */
    float x = tf(0x3F801000);
    assert_same_float(dn_fmul(x, x), 0x1.004004p0f);
    assert_bits(dn_fmul_tf32(x, x), 0x3F800000);
    float a[3] = {x, x, 2.0f}, b[3] = {x, x, 0.5f}, got;
    assert_same_float(dn_fdot_tf32(a, b, 3), 3.0f);
    assert_int_equal(dn_fdot_unit(DN_FPU_TF32, a, b, 3, &got), DN_OK);
    assert_same_float(got, 3.0f);
    assert_int_equal(dn_fdot_unit(DN_FPU_VECTOR, a, b, 3, &got), DN_OK);
    /* lanes 0, 1, 2 then the tree: ((l0 + l1) + (l2 + 0)) */
    assert_same_float(got, (0x1.004004p0f + 0x1.004004p0f) + 1.0f);
    assert_int_equal(dn_fdot_unit((dn_fpu)7, a, b, 3, &got), DN_ERR_INVALID_ARGUMENT);
}

/* binary16: nearest even, subnormals kept, overflow to infinity. */
static void f16_rounding(void **state)
{
    (void)state;
    assert_int_equal(dn_f32_to_f16(65504.0f), 0x7BFF);
    assert_int_equal(dn_f32_to_f16(tf(0x477FEFFF)), 0x7BFF); /* just below 65520 */
    assert_int_equal(dn_f32_to_f16(65520.0f), 0x7C00);       /* the tie rounds to even: inf */
    assert_int_equal(dn_f32_to_f16(-1e10f), 0xFC00);
    assert_int_equal(dn_f32_to_f16(INFINITY), 0x7C00);
    assert_int_equal(dn_f32_to_f16(0x1p-24f), 0x0001);           /* smallest subnormal kept */
    assert_int_equal(dn_f32_to_f16(0x1p-25f), 0x0000);           /* tie between 0 and 2^-24: 0 */
    assert_int_equal(dn_f32_to_f16(0x1.8p-25f), 0x0001);         /* above the tie */
    assert_int_equal(dn_f32_to_f16(0x1.8p-24f), 0x0002);         /* 1.5 units: tie, to even 2 */
    assert_int_equal(dn_f32_to_f16(1023.0f * 0x1p-24f), 0x03FF); /* largest subnormal */
    assert_int_equal(dn_f32_to_f16(1023.5f * 0x1p-24f), 0x0400); /* tie up to the least normal */
    assert_int_equal(dn_f32_to_f16(tf(0x3F801000)), 0x3C00);     /* 1 + 2^-11: tie, even */
    assert_int_equal(dn_f32_to_f16(tf(0x3F803000)), 0x3C02);     /* 1 + 3*2^-11: tie, even */
    assert_int_equal(dn_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(dn_f32_to_f16(tf(DENORM_NEG)), 0x8000);
    assert_int_equal(dn_f32_to_f16(tf(0xFFC00001)), 0x7E00);
    assert_same_float(dn_f16_to_f32(0x0001), 0x1p-24f);
    assert_same_float(dn_f16_to_f32(0x83FF), -1023.0f * 0x1p-24f);
    assert_same_float(dn_f16_to_f32(0x7BFF), 65504.0f);
    assert_bits(dn_f16_to_f32(0xFC00), 0xFF800000);
    assert_bits(dn_f16_to_f32(0xFC01), 0x7FC00000);
    assert_bits(dn_f16_to_f32(0x8000), 0x80000000);
}

static void bf16_rounding(void **state)
{
    (void)state;
    assert_int_equal(dn_f32_to_bf16(tf(0x3F808000)), 0x3F80); /* tie, even down */
    assert_int_equal(dn_f32_to_bf16(tf(0x3F818000)), 0x3F82); /* tie, even up */
    assert_int_equal(dn_f32_to_bf16(tf(0x3F808001)), 0x3F81);
    assert_int_equal(dn_f32_to_bf16(FLT_MAX), 0x7F80);
    assert_int_equal(dn_f32_to_bf16(tf(0x807FFFFF)), 0x8000);
    assert_int_equal(dn_f32_to_bf16(tf(0xFF800001)), 0x7FC0);
    assert_bits(dn_bf16_to_f32(0x0001), 0x00000000); /* a bfloat16 denormal reads as zero */
    assert_bits(dn_bf16_to_f32(0x8001), 0x80000000);
    assert_bits(dn_bf16_to_f32(0x3F81), 0x3F810000);
    assert_bits(dn_bf16_to_f32(0xFF81), 0x7FC00000);
}

static void ldexp_edges(void **state)
{
    (void)state;
    assert_same_float(dn_ldexp(1.0f, 127), 0x1p127f);
    assert_bits(dn_ldexp(1.0f, 128), 0x7F800000);
    assert_bits(dn_ldexp(-1.0f, 1000000), 0xFF800000);
    assert_same_float(dn_ldexp(1.0f, -126), 0x1p-126f);
    assert_bits(dn_ldexp(1.0f, -127), 0x00000000);  /* below the bottom: zero */
    assert_bits(dn_ldexp(-1.5f, -127), 0x80000000); /* 1.5*2^-127 < 2^-126: -0, no rounding up */
    assert_bits(dn_ldexp(tf(0x3FFFFFFF), -127), 0x00000000); /* (2 - 2^-23) * 2^-127 */
    assert_bits(dn_ldexp(tf(DENORM_POS), 100), 0x00000000);
    assert_same_float(dn_ldexp(3.0f, -2), 0.75f);
    assert_bits(dn_ldexp(tf(0xFFC00001), 3), 0x7FC00000);
    assert_bits(dn_ldexp(-INFINITY, -500), 0xFF800000);
    assert_bits(dn_ldexp(-0.0f, 5), 0x80000000);
}

static void scaled_to_f32_rounds_once(void **state)
{
    (void)state;
    assert_same_float(dn_scaled_to_f32(3, -1), 1.5f);
    assert_same_float(dn_scaled_to_f32((1 << 24) + 1, 0), 0x1p24f);        /* tie, even */
    assert_same_float(dn_scaled_to_f32((1 << 24) + 3, 0), 0x1p24f + 4.0f); /* tie, even up */
    assert_same_float(dn_scaled_to_f32(1, -126), 0x1p-126f);
    assert_bits(dn_scaled_to_f32(1, -127), 0x00000000);
    assert_bits(dn_scaled_to_f32(-1, -127), 0x80000000);
    /* (2^24 - 1) * 2^-150 = 2^-126 - 2^-150: rounds to the normal 2^-126 */
    assert_same_float(dn_scaled_to_f32((1 << 24) - 1, -150), 0x1p-126f);
    assert_bits(dn_scaled_to_f32(1, 128), 0x7F800000);
    assert_bits(dn_scaled_to_f32(-3, 127), 0xFF800000);
    assert_same_float(dn_scaled_to_f32(INT64_MIN, 0), -0x1p63f);
    assert_same_float(dn_scaled_to_f32(INT64_MAX, -63), 1.0f);
    assert_bits(dn_scaled_to_f32(0, 100), 0x00000000);
}

static void rne_ties_to_even(void **state)
{
    (void)state;
    const float x[] = {2.5f, 3.5f, -2.5f, 0.5f, 1.5f, -0.5f, 0.49999997f, 8388609.0f};
    const int64_t want[] = {2, 4, -2, 0, 2, 0, 0, 8388609};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        int64_t q = 99;
        assert_int_equal(dn_rne(x[i], &q), DN_OK);
        assert_int_equal(q, want[i]);
    }
    int64_t q = 7;
    assert_int_equal(dn_rne(INFINITY, &q), DN_ERR_NON_FINITE);
    assert_int_equal(dn_rne(dn_nan(), &q), DN_ERR_NON_FINITE);
    assert_int_equal(dn_rne(0x1p63f, &q), DN_ERR_OUT_OF_RANGE);
    assert_int_equal(q, 7);
    assert_int_equal(dn_rne(-0x1p63f, &q), DN_OK);
    assert_true(q == INT64_MIN);
    assert_int_equal(dn_rne(1.0f, NULL), DN_ERR_INVALID_ARGUMENT);
}

/* rne_div is exact: a tie goes to even, the neighbours of a tie go to the
   nearer side, even where an f32 division x / (m 2^e) would round onto the tie. */
static void rne_div_exact_at_ties(void **state)
{
    (void)state;
    int64_t q;
    /* scale 255 * 2^-10; x = (2k+1) * 255 * 2^-11 is exactly k + 1/2 scales */
    for (int64_t k = 0; k < 200; k++) {
        float tie = (float)((2 * k + 1) * 255) * 0x1p-11f;
        assert_int_equal(dn_rne_div(tie, 255, -10, &q), DN_OK);
        assert_int_equal(q, (k % 2 == 0) ? k : k + 1);
        assert_int_equal(dn_rne_div(-tie, 255, -10, &q), DN_OK);
        assert_int_equal(q, (k % 2 == 0) ? -k : -(k + 1));
        assert_int_equal(dn_rne_div(nextafterf(tie, 0.0f), 255, -10, &q), DN_OK);
        assert_int_equal(q, k);
        assert_int_equal(dn_rne_div(nextafterf(tie, INFINITY), 255, -10, &q), DN_OK);
        assert_int_equal(q, k + 1);
    }
    /* 3145732.25 / 3 = 1048577.41666..: an f32 quotient is 1048577.375 */
    assert_int_equal(dn_rne_div(3145732.25f, 3, 0, &q), DN_OK);
    assert_int_equal(q, 1048577);
    /* (2^24 - 1) / 2^25 is just below 1/2: 0, while the f32 quotient would be exact too */
    assert_int_equal(dn_rne_div(16777215.0f, 1, 25, &q), DN_OK);
    assert_int_equal(q, 0);
    assert_int_equal(dn_rne_div(16777215.0f, 1, 24, &q), DN_OK);
    assert_int_equal(q, 1);
    assert_int_equal(dn_rne_div(tf(DENORM_POS), 1, -200, &q), DN_OK); /* denormal reads as 0 */
    assert_int_equal(q, 0);
    assert_int_equal(dn_rne_div(1.0f, 1, -63, &q), DN_ERR_OUT_OF_RANGE);
    assert_int_equal(dn_rne_div(-1.0f, 1, -63, &q), DN_OK);
    assert_true(q == INT64_MIN);
    assert_int_equal(dn_rne_div(1.0f, 0, 0, &q), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rne_div(-INFINITY, 3, 0, &q), DN_ERR_NON_FINITE);
}

/* exact_sum keeps DN_SUM_WINDOW places below the largest term's least place
   and floors anything past them, however far past. */
static void exact_sum_floors_past_window(void **state)
{
    (void)state;
    float s;
    /* 1 + 2^-24 is a tie and rounds to 1. A positive term past the window
       (W = -24 - 64) floors to 0, so the tie stays: 1, although the exact sum
       1 + 2^-24 + 2^-1000 would round up to 1 + 2^-23. */
    dn_term up[2] = {{(1 << 24) + 1, -24, 0}, {1, -1000, 0}};
    assert_int_equal(dn_exact_sum(up, 2, &s), DN_OK);
    assert_same_float(s, 1.0f);
    up[1].e = INT32_MIN; /* however far past */
    assert_int_equal(dn_exact_sum(up, 2, &s), DN_OK);
    assert_same_float(s, 1.0f);
    /* A term inside the window counts: 2^-88 >= 2^W breaks the tie upward. */
    up[1].e = -88;
    assert_int_equal(dn_exact_sum(up, 2, &s), DN_OK);
    assert_same_float(s, 0x1.000002p0f);
    /* 1 + 3*2^-24 is a tie that rounds up to 1 + 2^-22. A negative term past
       the window floors to -2^W, not to 0, so the sum falls below the tie. */
    dn_term down[2] = {{(1 << 24) + 3, -24, 0}, {-1, -5000, 0}};
    assert_int_equal(dn_exact_sum(down, 2, &s), DN_OK);
    assert_same_float(s, 0x1.000002p0f);
    down[1].v = 0;
    assert_int_equal(dn_exact_sum(down, 2, &s), DN_OK);
    assert_same_float(s, 0x1.000004p0f);
    /* The order of the terms does not matter. */
    dn_term swapped[2] = {down[1], down[0]};
    swapped[0].v = -1;
    assert_int_equal(dn_exact_sum(swapped, 2, &s), DN_OK);
    assert_same_float(s, 0x1.000002p0f);
    /* Cancellation is exact, and the window is set by the largest term even
       when it cancels: W = 40 - 64, so -3 * 2^-100 floors to -2^-24. */
    dn_term cancel[3] = {{INT64_MAX, 40, 0}, {-INT64_MAX, 40, 0}, {-3, -100, 0}};
    assert_int_equal(dn_exact_sum(cancel, 3, &s), DN_OK);
    assert_same_float(s, -0x1p-24f);
    cancel[2].e = -24; /* inside the window: exact */
    assert_int_equal(dn_exact_sum(cancel, 3, &s), DN_OK);
    assert_same_float(s, -0x1.8p-23f);
    /* No terms and zero terms are +0. */
    assert_int_equal(dn_exact_sum(NULL, 0, &s), DN_OK);
    assert_bits(s, 0x00000000);
    dn_term zeros[2] = {{0, 5, 0}, {0, -5, 0}};
    assert_int_equal(dn_exact_sum(zeros, 2, &s), DN_OK);
    assert_bits(s, 0x00000000);
    assert_int_equal(dn_exact_sum(NULL, 1, &s), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_exact_sum(zeros, 2, NULL), DN_ERR_INVALID_ARGUMENT);
}

/* The tree: adjacent pairs, then pairs of pairs; an odd last element moves up. */
static void tree_is_pairwise(void **state)
{
    (void)state;
    const float big = 0x1p24f;
    /* (1 + 2^24) + (1 + 1) = 2^24 + 2; a left fold would give 2^24 */
    const float four[4] = {1.0f, big, 1.0f, 1.0f};
    assert_same_float(dn_tree(four, 4), big + 2.0f);
    /* three: (2^24 + 1) + 1 = 2^24 (ties to even twice), not 2^24 + (1 + 1) */
    const float three[3] = {big, 1.0f, 1.0f};
    assert_same_float(dn_tree(three, 3), big);
    /* five: ((a+b)+(c+d)) + e */
    const float five[5] = {1.0f, big, 1.0f, 1.0f, 2.0f};
    assert_same_float(dn_tree(five, 5), big + 4.0f);
    assert_bits(dn_tree(NULL, 0), 0x00000000);
    const float nz[1] = {-0.0f};
    assert_bits(dn_tree(nz, 1), 0x80000000);
}

/* Element i goes to lane i mod 32; lanes start at +0; then the tree. */
static void fsum_and_fdot_use_lanes(void **state)
{
    (void)state;
    float x[96] = {0};
    const float big = 0x1p24f;
    /* lane 0 takes 2^24, then 1, then 1: each add ties to even, lane 0 = 2^24 */
    x[0] = big;
    x[32] = 1.0f;
    x[64] = 1.0f;
    assert_same_float(dn_fsum(x, 96), big);
    /* in separate lanes the tree adds (l0 + l1) + (l2 + l3) = 2^24 + 2 */
    memset(x, 0, sizeof x);
    x[0] = 1.0f;
    x[1] = big;
    x[2] = 1.0f;
    x[3] = 1.0f;
    assert_same_float(dn_fsum(x, 4), big + 2.0f);
    /* lanes start at +0: the sum of -0 is +0 */
    const float nz[2] = {-0.0f, -0.0f};
    assert_bits(dn_fsum(nz, 2), 0x00000000);
    assert_bits(dn_fsum(NULL, 0), 0x00000000);
    assert_bits(dn_fsum(NULL, 5), 0x7FC00000);
    /* fdot: each product by dn_fmul, then the lane adds */
    const float a[3] = {tf(0x3F7FFFFF), 3.0f, 0.0f}, b[3] = {tf(0x00800000), 0.0f, -1.0f};
    assert_same_float(dn_fdot(a, b, 1), 0x1p-126f);
    assert_bits(dn_fdot(a + 1, b + 1, 2), 0x00000000);
    const float inf[2] = {INFINITY, -INFINITY}, one[2] = {1.0f, 1.0f};
    assert_bits(dn_fdot(inf, one, 2), 0x7FC00000); /* inf + -inf in the tree */
}

static void fmax_and_absmax(void **state)
{
    (void)state;
    const float zeros[3] = {-0.0f, tf(DENORM_NEG), -0.0f};
    assert_bits(dn_fmax(zeros, 3), 0x00000000); /* +0 whatever zeros were folded */
    const float mixed[4] = {dn_nan(), -5.0f, tf(0xFFC00000), -2.0f};
    assert_same_float(dn_fmax(mixed, 4), -2.0f);
    assert_bits(dn_fmax(NULL, 0), 0xFF800000); /* folded from -inf */
    const float nans[2] = {dn_nan(), tf(0xFFFFFFFF)};
    assert_bits(dn_fmax(nans, 2), 0xFF800000);
    const float den[2] = {-1.0f, tf(DENORM_POS)};
    assert_bits(dn_fmax(den, 2), 0x00000000); /* the denormal is a zero */
    const float abs[4] = {-3.0f, 2.0f, dn_nan(), tf(0x80000001)};
    assert_same_float(dn_absmax(abs, 4), 3.0f);
    assert_bits(dn_absmax(NULL, 0), 0x00000000);
    assert_bits(dn_absmax(abs + 3, 1), 0x00000000);
    const float ninf[1] = {-INFINITY};
    assert_bits(dn_absmax(ninf, 1), 0x7F800000);
    assert_bits(dn_fmax(ninf, 1), 0xFF800000);
}

static void argmax_first_of_equals(void **state)
{
    (void)state;
    const float a[3] = {1.0f, 3.0f, 3.0f};
    assert_int_equal(dn_argmax(a, 3), 1);
    const float b[2] = {dn_nan(), 2.0f};
    assert_int_equal(dn_argmax(b, 2), 1);
    assert_int_equal(dn_argmax(NULL, 0), 0);
    const float c[2] = {dn_nan(), dn_nan()};
    assert_int_equal(dn_argmax(c, 2), 0);
    const float z[2] = {-0.0f, 0.0f};
    assert_int_equal(dn_argmax(z, 2), 0); /* the zeros are equal */
    const float d[3] = {-1.0f, tf(DENORM_NEG), 0.0f};
    assert_int_equal(dn_argmax(d, 3), 1); /* the denormal equals the zero after it */
    const float e[3] = {dn_nan(), -INFINITY, -INFINITY};
    assert_int_equal(dn_argmax(e, 3), 1);
    /* past the lanes: the first of equals far apart */
    float big[100];
    for (int i = 0; i < 100; i++) big[i] = (float)(i % 7);
    assert_int_equal(dn_argmax(big, 100), 6);
}

static void arrays_check_arguments(void **state)
{
    (void)state;
    uint16_t h[2];
    float y[2];
    assert_int_equal(dn_f32_to_f16_v(NULL, h, 2), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_f32_to_f16_v(NULL, NULL, 0), DN_OK);
    assert_int_equal(dn_f16_to_f32_v(h, NULL, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_ftz_v(NULL, y, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_bf16_to_f32_v(NULL, NULL, 0), DN_OK);
    assert_int_equal(dn_f32_to_bf16_v(y, NULL, 2), DN_ERR_INVALID_ARGUMENT);
    float in[2] = {tf(DENORM_NEG), 1.0f};
    assert_int_equal(dn_ftz_v(in, in, 2), DN_OK); /* in place */
    assert_bits(in[0], 0x80000000);
    assert_bits(dn_fdot(NULL, in, 1), 0x7FC00000);
    assert_int_equal(dn_argmax(NULL, 3), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ftz_keeps_sign),
        cmocka_unit_test(add_flushes_operands_and_results),
        cmocka_unit_test(mul_flushes_after_rounding),
        cmocka_unit_test(one_nan),
        cmocka_unit_test(tf32_products),
        cmocka_unit_test(f16_rounding),
        cmocka_unit_test(bf16_rounding),
        cmocka_unit_test(ldexp_edges),
        cmocka_unit_test(scaled_to_f32_rounds_once),
        cmocka_unit_test(rne_ties_to_even),
        cmocka_unit_test(rne_div_exact_at_ties),
        cmocka_unit_test(exact_sum_floors_past_window),
        cmocka_unit_test(tree_is_pairwise),
        cmocka_unit_test(fsum_and_fdot_use_lanes),
        cmocka_unit_test(fmax_and_absmax),
        cmocka_unit_test(argmax_first_of_equals),
        cmocka_unit_test(arrays_check_arguments),
    };
    return cmocka_run_group_tests_name("fp32", tests, NULL, NULL);
}
