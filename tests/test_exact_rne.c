/* SPDX-License-Identifier: MIT */
/*
 * test_exact_rne.c: dn_rne_div and dn_rne held bit for bit to an exact
 * computation in GMP (the oracle_rne_div of exact_cases.h): x decoded
 * exactly, the quotient x / (m * 2^e) rounded to the nearest integer (ties
 * to even) by an mpz floor division and a comparison of twice the remainder
 * with the divisor; dn_rne(x) is dn_rne_div's oracle with m = 1, e = 0.
 *
 * Cases come from the same seeded generator as test_exact_oracle.c
 * (DECODENUM_TEST_SEED, DECODENUM_TEST_SCALE; 10^6 cases of each function
 * at scale 1); a mismatch prints the case in full.
 */
#include "exact_cases.h"

/* ---- dn_rne_div and dn_rne ------------------------------------------------------ */

static uint32_t gen_m(rng *r)
{
    switch (rbelow(r, 10)) {
    case 0: return 1;
    case 1: return UINT32_C(1) << rbelow(r, 32);
    case 2: return UINT32_MAX;
    case 3: return (uint32_t)rrange(r, 1, 16);
    case 4: return (uint32_t)rrange(r, 1, 1000);
    case 5: return (uint32_t)rnext(r) | 1u;
    case 6: return (uint32_t)((UINT64_C(1) << rrange(r, 1, 32)) - 1);
    default: {
        uint64_t bits = rnext(r);
        uint32_t m = (uint32_t)(bits >> (32 + rbelow(r, 32)));
        return m ? m : 1;
    }
    }
}

static float gen_normal(rng *r, int64_t bexp)
{
    uint32_t frac;
    switch (rbelow(r, 4)) {
    case 0: frac = 0; break;
    case 1: frac = 0x7FFFFFu; break;
    default: frac = (uint32_t)rnext(r) & 0x7FFFFFu; break;
    }
    return tf((rbool(r) ? 0x80000000u : 0) | ((uint32_t)bexp << 23) | frac);
}

/* A denormal, a zero or a non-finite value, of either sign. */
static float gen_not_normal(rng *r)
{
    uint32_t sign = rbool(r) ? 0x80000000u : 0;
    switch (rbelow(r, 4)) {
    case 0: return tf(sign | (uint32_t)rrange(r, 1, 0x7FFFFF));
    case 1: return tf(sign);
    case 2: return tf(sign | 0x7F800000u);
    default: return tf(sign | 0x7F800000u | (uint32_t)rrange(r, 1, 0x7FFFFF));
    }
}

/* An exact tie: x = (2k+1) m 2^(e-1), and its neighbours. */
static void gen_div_tie(rng *r, float *xo, uint32_t *mo, int32_t *eo)
{
    int mb = (int)rrange(r, 1, 23);
    uint32_t m =
        (uint32_t)((UINT64_C(1) << (mb - 1)) | (rnext(r) & ((UINT64_C(1) << (mb - 1)) - 1)));
    int kb = (int)rrange(r, 1, 24 - mb);
    uint64_t odd = ((UINT64_C(1) << (kb - 1)) | (rnext(r) & ((UINT64_C(1) << (kb - 1)) - 1))) | 1u;
    uint64_t X = odd * m; /* < 2^24: exactly a float */
    int xb = bitlen64(X);
    /* x = X 2^(e-1) normal: -126 <= e - 1 + xb - 1 <= 127 */
    int32_t e = (int32_t)rrange(r, -126 - xb + 2, 127 - xb + 2);
    float x = ldexpf((float)X, e - 1);
    if (rbool(r)) x = -x;
    if (rbelow(r, 4) == 0) x = nextafterf(x, rbool(r) ? INFINITY : -INFINITY);
    *xo = x;
    *mo = m;
    *eo = e;
}

/* +-2^63 exactly and its neighbours, with m a power of two. */
static void gen_div_pow2_63(rng *r, float *xo, uint32_t *mo, int32_t *eo)
{
    int j = (int)rbelow(r, 32);
    *mo = UINT32_C(1) << j;
    int64_t pe = rrange(r, -126, 127);
    *eo = (int32_t)(pe - 63 - j);
    float x = ldexpf(1.0f, (int)pe);
    if (rbool(r)) x = -x;
    int t = (int)rbelow(r, 3);
    if (t == 1) x = nextafterf(x, 0.0f);
    if (t == 2) x = nextafterf(x, x > 0 ? INFINITY : -INFINITY);
    *xo = x;
}

/* A case of dn_rne_div (m == 0 possible). */
static void gen_div(rng *r, float *xo, uint32_t *mo, int32_t *eo)
{
    uint32_t m = gen_m(r);
    float x;
    int32_t e;
    switch (rbelow(r, 12)) {
    case 0: { /* anything */
        x = tf((uint32_t)rnext(r));
        e = rbool(r) ? rand_i32(r) : (int32_t)rrange(r, -200, 200);
        break;
    }
    case 1: { /* denormals, zeros, non-finite */
        x = gen_not_normal(r);
        e = rbool(r) ? rand_i32(r) : (int32_t)rrange(r, -200, 200);
        break;
    }
    case 2:
    case 3: gen_div_tie(r, &x, &m, &e); break;
    case 4: { /* quotients around 2^63 (and 2^62 .. 2^64): the int64 edge */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        int64_t qe = rrange(r, 61, 64);
        int64_t ee = (bexp - 127) - (bitlen64(m) - 1) - qe + rrange(r, -1, 1);
        e = clamp_e(ee);
        break;
    }
    case 5: gen_div_pow2_63(r, &x, &m, &e); break;
    case 6: { /* e at the int32 limits */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        e = rbool(r) ? (int32_t)rrange(r, INT32_MIN, (int64_t)INT32_MIN + 299)
                     : (int32_t)rrange(r, (int64_t)INT32_MAX - 299, INT32_MAX);
        break;
    }
    case 7: { /* quotients below 1: the round-to-zero / round-to-one edge */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        int64_t qe = rrange(r, -30, 1);
        e = clamp_e((bexp - 127) - (bitlen64(m) - 1) - qe + rrange(r, -1, 1));
        break;
    }
    default: { /* quotients of every size that fits */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        int64_t qe = rrange(r, -3, 66);
        e = clamp_e((bexp - 127) - (bitlen64(m) - 1) - qe + rrange(r, -1, 1));
        break;
    }
    }
    if (rbelow(r, 200) == 0) m = 0;
    *xo = x;
    *mo = m;
    *eo = e;
}

static void test_rne_div_random(void **state)
{
    (void)state;
    size_t n = scaled_count(BASE_CASES), fails = 0;
    size_t ok = 0, ties = 0, oor = 0, nonfinite = 0, invalid = 0;
    const int64_t sentinel = INT64_C(0x5A5A5A5A5A5A5A5A);
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(3, i);
        float x;
        uint32_t m;
        int32_t e;
        gen_div(&r, &x, &m, &e);
        int64_t want = sentinel, got = sentinel;
        g_oracle_tie = 0;
        dn_status sw = oracle_rne_div(x, m, e, &want);
        dn_status sg = dn_rne_div(x, m, e, &got);
        if (sw == DN_OK) {
            ok++;
            ties += (size_t)g_oracle_tie;
        }
        if (sw == DN_ERR_OUT_OF_RANGE) oor++;
        if (sw == DN_ERR_NON_FINITE) nonfinite++;
        if (sw == DN_ERR_INVALID_ARGUMENT) invalid++;
        /* m == 0 with a non-finite x: the contract names both errors, either will do. */
        if (m == 0 && !isfinite(x) && (sg == DN_ERR_NON_FINITE || sg == DN_ERR_INVALID_ARGUMENT) &&
            got == sentinel)
            continue;
        if (sg == sw && got == want) continue; /* on error both stay the sentinel */
        if (fails++ < MAX_REPORTS)
            fprintf(stderr,
                    "  dn_rne_div(%a [0x%08" PRIx32 "], %" PRIu32 ", %" PRId32
                    ") case %zu: expected status %d q %" PRId64 ", got status %d q %" PRId64 "\n",
                    (double)x, tbits(x), m, e, i, (int)sw, want, (int)sg, got);
    }
    int64_t q = 0;
    assert_int_equal(dn_rne_div(1.0f, 1, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rne_div(1.0f, 0, 0, &q), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rne_div(-0x1p63f, 1, 0, &q), DN_OK);
    assert_true(q == INT64_MIN);
    q = 7;
    assert_int_equal(dn_rne_div(0x1p63f, 1, 0, &q), DN_ERR_OUT_OF_RANGE);
    assert_true(q == 7);
    assert_int_equal(dn_rne_div(2.5f, 1, 0, &q), DN_OK);
    assert_true(q == 2);
    assert_int_equal(dn_rne_div(-7.0f, 2, 0, &q), DN_OK); /* -3.5 -> -4 */
    assert_true(q == -4);
    assert_int_equal(dn_rne_div(5.0f, 5, 1, &q), DN_OK); /* 0.5 -> 0 */
    assert_true(q == 0);
    assert_int_equal(dn_rne_div(0x1p-149f, 1, INT32_MIN, &q), DN_OK); /* denormal reads as 0 */
    assert_true(q == 0);
    fprintf(stderr,
            "[ oracle   ] dn_rne_div: %zu cases: %zu ok (%zu exact ties), %zu out of range, %zu "
            "non-finite,"
            " %zu invalid\n",
            n, ok, ties, oor, nonfinite, invalid);
    if (fails) fail_msg("dn_rne_div differs from the oracle in %zu of %zu cases", fails, n);
}

static float gen_rne_x(rng *r)
{
    uint32_t sign = rbool(r) ? 0x80000000u : 0;
    switch (rbelow(r, 8)) {
    case 0: return tf((uint32_t)rnext(r));
    case 1: { /* k + 1/2, and neighbours */
        float x = (float)rrange(r, 0, (1 << 23) - 1) + 0.5f;
        if (rbelow(r, 3) == 0) x = nextafterf(x, rbool(r) ? INFINITY : 0.0f);
        return sign ? -x : x;
    }
    case 2: { /* around 2^63 */
        float x = 0x1p63f;
        int t = (int)rbelow(r, 4);
        if (t == 1) x = nextafterf(x, 0.0f);
        if (t == 2) x = nextafterf(x, INFINITY);
        if (t == 3) x = tf(0x5F000000u - (uint32_t)rbelow(r, 1000));
        return sign ? -x : x;
    }
    case 3: return tf(sign | (uint32_t)rbelow(r, 0x800000u));                 /* denormals */
    case 4: return tf(sign | (uint32_t)rrange(r, 0x3E800000u, 0x3FC00000u));  /* 0.25 .. 1.5 */
    default: return tf(sign | (uint32_t)rrange(r, 0x3F000000u, 0x5F800000u)); /* 0.5 .. 2^64 */
    }
}

static void test_rne_random(void **state)
{
    (void)state;
    size_t n = scaled_count(BASE_CASES), fails = 0;
    const int64_t sentinel = INT64_C(0x3C3C3C3C3C3C3C3C);
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(4, i);
        float x = gen_rne_x(&r);
        int64_t want = sentinel, got = sentinel;
        dn_status sw = oracle_rne_div(x, 1, 0, &want);
        dn_status sg = dn_rne(x, &got);
        if (sg == sw && got == want) continue;
        if (fails++ < MAX_REPORTS)
            fprintf(stderr,
                    "  dn_rne(%a [0x%08" PRIx32 "]) case %zu: expected status %d q %" PRId64
                    ", got status %d q %" PRId64 "\n",
                    (double)x, tbits(x), i, (int)sw, want, (int)sg, got);
    }
    assert_int_equal(dn_rne(1.0f, NULL), DN_ERR_INVALID_ARGUMENT);
    if (fails) fail_msg("dn_rne differs from the oracle in %zu of %zu cases", fails, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rne_div_random),
        cmocka_unit_test(test_rne_random),
    };
    return cmocka_run_group_tests_name("exact_rne", tests, group_setup, group_teardown);
}
