/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals against expectations derived by hand from the rules in
 * docs/numerics.md section 8: special values, the overflow and underflow
 * thresholds, each seed sentence (softplus past 16, softmax's order, the
 * norms' order, rope's pairing and pass-through, hadamard twice), argument
 * errors. Runs under every DECODENUM_ISA (tests/CMakeLists.txt).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "decodenum.h"
#include "testutil.h"

#define NAN_BITS 0x7FC00000u

static void exp_specials(void **state)
{
    (void)state;
    assert_bits(dn_exp(0.0f), 0x3F800000);
    assert_bits(dn_exp(-0.0f), 0x3F800000);
    assert_bits(dn_exp(tf(0x80400000)), 0x3F800000); /* a denormal reads as -0 */
    assert_bits(dn_exp(INFINITY), 0x7F800000);
    assert_bits(dn_exp(-INFINITY), 0x00000000);
    assert_bits(dn_exp(tf(0xFFC00001)), NAN_BITS);
    assert_bits(dn_exp(1.0f), 0x402DF854);           /* e, correctly rounded */
    assert_bits(dn_exp(tf(0x42B17217)), 0x7F7FFF84); /* 88.7228317: finite */
    assert_bits(dn_exp(tf(0x42B17218)), 0x7F800000); /* 88.7228394: e^x > FLT_MAX rounds up */
    assert_true(dn_exp(-87.33654f) >= 0x1p-126f);    /* e^x just above 2^-126 */
    assert_bits(dn_exp(-87.3366f), 0x00000000);      /* below 2^-126: flushed */
    assert_bits(dn_exp(-100.0f), 0x00000000);
    assert_bits(dn_exp(1000.0f), 0x7F800000);
    /* tiny arguments: 1 + x rounds to 1 above, to 1 - 2^-24 below */
    assert_bits(dn_exp(0x1p-30f), 0x3F800000);
    assert_bits(dn_exp(-0x1p-24f), 0x3F7FFFFF);
}

static void ln_specials(void **state)
{
    (void)state;
    assert_bits(dn_ln(1.0f), 0x00000000);
    assert_bits(dn_ln(0.0f), 0xFF800000);
    assert_bits(dn_ln(-0.0f), 0xFF800000);
    assert_bits(dn_ln(tf(0x00000001)), 0xFF800000); /* denormal: zero: -inf */
    assert_bits(dn_ln(-1.0f), NAN_BITS);
    assert_bits(dn_ln(-INFINITY), NAN_BITS);
    assert_bits(dn_ln(INFINITY), 0x7F800000);
    assert_bits(dn_ln(tf(0x7FC00001)), NAN_BITS);
    assert_bits(dn_ln(2.0f), 0x3F317218); /* ln 2 */
    assert_bits(dn_ln(0.5f), 0xBF317218);
    assert_bits(dn_ln(0x1p-126f), 0xC2AEAC50); /* -87.33654 */
    assert_bits(dn_ln(FLT_MAX), 0x42B17218);
    /* near 1, E = 0 and c_j = 1: ln(1 + 2^-23) = 2^-23 - 2^-47 rounds to 2^-23 - 2^-47 */
    assert_bits(dn_ln(tf(0x3F800001)), 0x33FFFFFF);
}

static void ln1p_specials(void **state)
{
    (void)state;
    assert_bits(dn_ln1p(0.0f), 0x00000000);
    assert_bits(dn_ln1p(-0.0f), 0x80000000);
    assert_bits(dn_ln1p(tf(0x80000001)), 0x80000000);
    assert_bits(dn_ln1p(-1.0f), 0xFF800000);
    assert_bits(dn_ln1p(-1.5f), NAN_BITS);
    assert_bits(dn_ln1p(-INFINITY), NAN_BITS);
    assert_bits(dn_ln1p(INFINITY), 0x7F800000);
    /* 1 + 2^-30 rounds to 1: the correction alone gives 2^-30 (ln1p(t) = t - t^2/2) */
    assert_bits(dn_ln1p(0x1p-30f), 0x30800000);
    assert_bits(dn_ln1p(-0x1p-30f), 0xB0800000);
    assert_bits(dn_ln1p(1.0f), 0x3F317218); /* ln 2 */
}

static void recip_specials(void **state)
{
    (void)state;
    assert_bits(dn_recip(2.0f), 0x3F000000);
    assert_bits(dn_recip(-4.0f), 0xBE800000);
    assert_bits(dn_recip(3.0f), 0x3EAAAAAB);
    assert_bits(dn_recip(0.0f), 0x7F800000);
    assert_bits(dn_recip(-0.0f), 0xFF800000);
    assert_bits(dn_recip(tf(0x80000001)), 0xFF800000);
    assert_bits(dn_recip(INFINITY), 0x00000000);
    assert_bits(dn_recip(-INFINITY), 0x80000000);
    assert_bits(dn_recip(0x1p126f), 0x00800000); /* 2^-126 */
    assert_bits(dn_recip(0x1p127f), 0x00000000); /* 2^-127 is denormal: flushed */
    assert_bits(dn_recip(-0x1p127f), 0x80000000);
    assert_bits(dn_recip(0x1p-126f), 0x7E800000); /* 2^126 */
    assert_bits(dn_recip(tf(0xFFC00000)), NAN_BITS);
}

static void rsqrt_specials(void **state)
{
    (void)state;
    assert_bits(dn_rsqrt(4.0f), 0x3F000000);
    assert_bits(dn_rsqrt(0.25f), 0x40000000);
    assert_bits(dn_rsqrt(2.0f), 0x3F3504F3); /* 1/sqrt 2 */
    assert_bits(dn_rsqrt(0.0f), 0x7F800000);
    assert_bits(dn_rsqrt(-0.0f), 0xFF800000);
    assert_bits(dn_rsqrt(tf(0x00000001)), 0x7F800000);
    assert_bits(dn_rsqrt(-1.0f), NAN_BITS);
    assert_bits(dn_rsqrt(INFINITY), 0x00000000);
    assert_bits(dn_rsqrt(0x1p-126f), 0x5F000000); /* 2^63 */
    assert_true(dn_rsqrt(FLT_MAX) > 0x1p-65f);    /* never flushes */
}

static void sigmoid_silu_softplus(void **state)
{
    (void)state;
    assert_bits(dn_sigmoid(0.0f), 0x3F000000);
    assert_bits(dn_sigmoid(INFINITY), 0x3F800000);
    assert_bits(dn_sigmoid(-INFINITY), 0x00000000);
    assert_bits(dn_sigmoid(20.0f), 0x3F800000);
    assert_bits(dn_sigmoid(-88.0f), 0x00000000); /* e^-88 < 2^-126 */
    assert_bits(dn_sigmoid(tf(0x7FC00001)), NAN_BITS);
    assert_bits(dn_silu(0.0f), 0x00000000);
    assert_bits(dn_silu(-0.0f), 0x80000000);
    assert_bits(dn_silu(INFINITY), 0x7F800000);
    assert_bits(dn_silu(-INFINITY), 0x80000000);
    assert_bits(dn_silu(100.0f), 0x42C80000);
    /* x e^x is still normal at -90 although e^-90 is not */
    float s = dn_silu(-90.0f);
    assert_true(s < -0x1p-126f && s > -1e-37f);
    assert_bits(dn_softplus(0.0f), 0x3F317218); /* ln 2 */
    assert_bits(dn_softplus(-INFINITY), 0x00000000);
    assert_bits(dn_softplus(INFINITY), 0x7F800000);
    /* past 16: u + e^-u, and nothing else */
    assert_same_float(dn_softplus(16.5f), dn_fadd(16.5f, dn_exp(-16.5f)));
    assert_same_float(dn_softplus(tf(0x41800001)), dn_fadd(tf(0x41800001), dn_exp(tf(0xC1800001))));
    assert_same_float(dn_softplus(40.0f), 40.0f);
    assert_bits(dn_softplus(-100.0f), 0x00000000);
}

/* Array forms: NULL with n > 0 is an error; n = 0 is fine; in place works. */
static void array_forms(void **state)
{
    (void)state;
    float x[37], y[37];
    for (int i = 0; i < 37; i++) x[i] = (float)(i - 18) * 0.37f;
    assert_int_equal(dn_exp_v(NULL, y, 3), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_exp_v(NULL, NULL, 0), DN_OK);
    dn_status (*const fns[8])(const float *, float *,
                              size_t) = {dn_exp_v,   dn_ln_v,      dn_ln1p_v, dn_recip_v,
                                         dn_rsqrt_v, dn_sigmoid_v, dn_silu_v, dn_softplus_v};
    float (*const one[8])(float) = {dn_exp,   dn_ln,      dn_ln1p, dn_recip,
                                    dn_rsqrt, dn_sigmoid, dn_silu, dn_softplus};
    for (int f = 0; f < 8; f++) {
        assert_int_equal(fns[f](x, y, 37), DN_OK);
        for (int i = 0; i < 37; i++) assert_same_float(y[i], one[f](x[i]));
        float z[37];
        memcpy(z, x, sizeof z);
        assert_int_equal(fns[f](z, z, 37), DN_OK);
        for (int i = 0; i < 37; i++) assert_same_float(z[i], one[f](x[i]));
    }
}

/* softmax: fmax, each exp(s - max), the lane sum, one recip, the products. */
static void softmax_order(void **state)
{
    (void)state;
    enum { N = 100 };
    float x[N], y[N], e[N];
    srand(7);
    for (int i = 0; i < N; i++) x[i] = (float)rand() / (float)RAND_MAX * 30.0f - 15.0f;
    float m = dn_fmax(x, N);
    for (int i = 0; i < N; i++) e[i] = dn_exp(dn_fsub(x[i], m));
    float r = dn_recip(dn_fsum(e, N));
    assert_int_equal(dn_softmax(x, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_same_float(y[i], dn_fmul(e[i], r));
    /* a NaN or +inf anywhere, or every input -inf: all NaN and a status */
    x[5] = NAN;
    assert_int_equal(dn_softmax(x, y, N), DN_ERR_NON_FINITE);
    for (int i = 0; i < N; i++) assert_bits(y[i], NAN_BITS);
    float ninf[3] = {-INFINITY, -INFINITY, -INFINITY};
    assert_int_equal(dn_softmax(ninf, y, 3), DN_ERR_NON_FINITE);
    assert_bits(y[0], NAN_BITS);
    float one_inf[3] = {1.0f, INFINITY, 2.0f};
    assert_int_equal(dn_softmax(one_inf, y, 3), DN_ERR_NON_FINITE);
    /* -inf elements among numbers get +0 */
    float some[3] = {-INFINITY, 0.0f, 0.0f};
    assert_int_equal(dn_softmax(some, y, 3), DN_OK);
    assert_bits(y[0], 0x00000000);
    assert_bits(y[1], 0x3F000000);
    assert_int_equal(dn_softmax(NULL, y, 0), DN_OK);
    assert_int_equal(dn_softmax(NULL, y, 2), DN_ERR_INVALID_ARGUMENT);
}

/* The proved bound on the sum of the outputs (docs/numerics.md 8.10). */
static void softmax_sum_bound(void **state)
{
    (void)state;
    size_t n = 200000;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    srand(11);
    for (size_t i = 0; i < n; i++) x[i] = (float)rand() / (float)RAND_MAX * 8.0f;
    assert_int_equal(dn_softmax(x, y, n), DN_OK);
    double s = 0;
    for (size_t i = 0; i < n; i++) s += y[i];
    double k = (double)((n + 31) / 32) + 4, u = ldexp(1, -24);
    double g = k * u / (1 - k * u);
    double bound = (1 + u) * (1 + ldexp(1, -24) * 1.02) / (1 - g) - 1 + (double)n * ldexp(1, -126);
    assert_true(fabs(s - 1) <= bound);
    free(x);
    free(y);
}

static void norms_order(void **state)
{
    (void)state;
    enum { N = 77 };
    float x[N], w[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i * 7 % 23) * 0.1f - 1.1f;
        w[i] = 1.0f + (float)i / 64.0f;
    }
    float eps = 1e-6f;
    float r = dn_rsqrt(dn_fadd(dn_fmul(dn_fdot(x, x, N), dn_recip((float)N)), eps));
    assert_int_equal(dn_rmsnorm(x, w, eps, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_same_float(y[i], dn_fmul(dn_fmul(x[i], r), w[i]));
    float r2 = dn_rsqrt(dn_fadd(dn_fdot(x, x, N), eps));
    assert_int_equal(dn_l2norm(x, eps, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_same_float(y[i], dn_fmul(x[i], r2));
    assert_int_equal(dn_rmsnorm(x, NULL, eps, y, N), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_l2norm(NULL, eps, y, 0), DN_OK);
    /* all zero, eps 0: rsqrt(0) = +inf, 0 * inf: NaN */
    float z[4] = {0}, out[4];
    assert_int_equal(dn_l2norm(z, 0.0f, out, 4), DN_OK);
    assert_bits(out[0], NAN_BITS);
}

static void rope_pairs(void **state)
{
    (void)state;
    float x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y[10];
    float c[3] = {0.5f, 0.0f, 1.0f}, s[3] = {0.25f, 1.0f, 0.0f};
    /* interleaved: (0,1), (2,3), (4,5); 6..9 pass through */
    assert_int_equal(dn_rope(x, 10, c, s, 3, DN_ROPE_INTERLEAVED, y), DN_OK);
    assert_same_float(y[0], 1 * 0.5f - 2 * 0.25f);
    assert_same_float(y[1], 1 * 0.25f + 2 * 0.5f);
    assert_same_float(y[2], -4.0f);
    assert_same_float(y[3], 3.0f);
    assert_same_float(y[4], 5.0f);
    assert_same_float(y[5], 6.0f);
    for (int i = 6; i < 10; i++) assert_same_float(y[i], x[i]);
    /* NEOX: (0,3), (1,4), (2,5) */
    assert_int_equal(dn_rope(x, 10, c, s, 3, DN_ROPE_NEOX, y), DN_OK);
    assert_same_float(y[0], 1 * 0.5f - 4 * 0.25f);
    assert_same_float(y[3], 1 * 0.25f + 4 * 0.5f);
    assert_same_float(y[1], -5.0f);
    assert_same_float(y[4], 2.0f);
    for (int i = 6; i < 10; i++) assert_same_float(y[i], x[i]);
    /* pass-through copies bits, a denormal included */
    float d[4] = {1, 1, tf(0x00000001), tf(0x7FC00001)}, e[4];
    assert_int_equal(dn_rope(d, 4, c, s, 1, DN_ROPE_NEOX, e), DN_OK);
    assert_bits(e[2], 0x00000001);
    assert_bits(e[3], 0x7FC00001);
    assert_int_equal(dn_rope(x, 10, c, s, 6, DN_ROPE_NEOX, y), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rope(x, 10, c, s, 1, (dn_rope_mode)2, y), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rope(x, 10, NULL, s, 1, DN_ROPE_NEOX, y), DN_ERR_INVALID_ARGUMENT);
    /* in place */
    float z[10];
    memcpy(z, x, sizeof z);
    assert_int_equal(dn_rope(z, 10, c, s, 3, DN_ROPE_INTERLEAVED, z), DN_OK);
    assert_same_float(z[0], 1 * 0.5f - 2 * 0.25f);
    assert_same_float(z[9], 10.0f);
}

static void hadamard_twice(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 4096; n *= 2) {
        float *x = malloc(n * sizeof *x), *z = malloc(n * sizeof *z);
        assert_non_null(x);
        assert_non_null(z);
        for (size_t i = 0; i < n; i++) x[i] = z[i] = (float)((int)(i * 2654435761u % 201) - 100);
        assert_int_equal(dn_hadamard(z, n), DN_OK);
        assert_int_equal(dn_hadamard(z, n), DN_OK);
        for (size_t i = 0; i < n; i++) assert_same_float(z[i], (float)n * x[i]);
        memcpy(z, x, n * sizeof *z);
        assert_int_equal(dn_hadamard(z, n), DN_OK);
        assert_int_equal(dn_hadamard_inverse(z, n), DN_OK);
        for (size_t i = 0; i < n; i++) assert_same_float(z[i], x[i]);
        free(x);
        free(z);
    }
    /* the seed's order on 4: stride 1 then stride 2 */
    float v[4] = {1, 2, 3, 4};
    assert_int_equal(dn_hadamard(v, 4), DN_OK);
    assert_same_float(v[0], 10.0f);
    assert_same_float(v[1], -2.0f);
    assert_same_float(v[2], -4.0f);
    assert_same_float(v[3], 0.0f);
    float w[6] = {0};
    assert_int_equal(dn_hadamard(w, 6), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_hadamard(NULL, 0), DN_OK);
    float one = tf(0x00000001);
    assert_int_equal(dn_hadamard(&one, 1), DN_OK);
    assert_bits(one, 0x00000001); /* n = 1: untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exp_specials),      cmocka_unit_test(ln_specials),
        cmocka_unit_test(ln1p_specials),     cmocka_unit_test(recip_specials),
        cmocka_unit_test(rsqrt_specials),    cmocka_unit_test(sigmoid_silu_softplus),
        cmocka_unit_test(array_forms),       cmocka_unit_test(softmax_order),
        cmocka_unit_test(softmax_sum_bound), cmocka_unit_test(norms_order),
        cmocka_unit_test(rope_pairs),        cmocka_unit_test(hadamard_twice),
    };
    return cmocka_run_group_tests_name("math", tests, NULL, NULL);
}
