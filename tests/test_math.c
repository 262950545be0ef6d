/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals against expectations derived by hand from the rules in
 * docs/numerics.md section 8: special values, the overflow and underflow
 * thresholds, each seed sentence (softplus past 16, softmax's order, the
 * norms' order, rope's pairing and pass-through, hadamard twice), argument
 * errors; dn_exp_table rebuilt from the AVX2 kernels' two factor tables.
 * Runs under every DECODENUM_ISA (tests/CMakeLists.txt).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "decodenum.h"
#include "math_tables.h"
#include "testutil.h"

#define NAN_BITS 0x7FC00000u

/* The AVX2 kernels form 2^(j/64) = 2^(j1/8) 2^(j0/64) from dn_exp_factors
   (src/x86/math_avx2.c, exp_table) instead of reading dn_exp_table: the
   same operations here, in binary32 with the same three fused operations,
   give every word's T_hi and T_lo exactly. */
static void exp_factors_rebuild_table(void **state)
{
    (void)state;
    const float sh = 0x1.8p-9f;
    for (int j = 0; j < 64; j++) {
        float ah = dn_exp_factors[0][j >> 3], al = dn_exp_factors[1][j >> 3];
        float bh = dn_exp_factors[2][j & 7], bl = dn_exp_factors[3][j & 7];
        float c = fmaf(ah, bl, al * bh);
        float t_hi = fmaf(ah, bh, c);
        float t_lo = ((fmaf(ah, bh, -t_hi) + c) + sh) - sh;
        uint32_t w = dn_exp_table[j];
        assert_bits(t_hi, 0x3F800000u | (w & 0x7FFFFFu));
        assert_true(t_lo == (float)((int32_t)w >> 23) * 0x1p-32f);
    }
}

/* The AVX2 and AVX-512 fast paths form the reciprocal's residual
   1 - (m_hi + m_lo)(y_hi + y_lo), four subtractions of exact products in
   the reference (src/math.c, recip_split), as two fused steps, 1 - m_hi y1
   then minus m_lo y1 (recip_residual in src/x86/math_act_avx2.h). The
   first is exact by Sterbenz's lemma; the second is not a theorem, so
   every m in [1, 2), with the reference's own seed and Newton step, is
   tried here: the same binary32 value each time. */
static void recip_residual_two_steps(void **state)
{
    (void)state;
    uint32_t differ = 0;
    for (uint32_t f = 0; f < (1u << 23); f++) {
        float m = tf(0x3F800000u | f);
        float y0 = dn_recip_seed[f >> 16];
        float y1 = y0 * (2.0f - m * y0);
        float m_hi = tf(tbits(m) & 0xFFFFF000u), m_lo = m - m_hi;
        float y_hi = tf(tbits(y1) & 0xFFFFF000u), y_lo = y1 - y_hi;
        float four = 1.0f - m_hi * y_hi;
        four = four - m_hi * y_lo;
        four = four - m_lo * y_hi;
        four = four - m_lo * y_lo;
        float two = fmaf(-m_lo, y1, fmaf(-m_hi, y1, 1.0f));
        differ += tbits(four) != tbits(two);
    }
    assert_int_equal(differ, 0);
}

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

/* |ours - exact| in units of the last place of exact's binary32 (normal range) */
static double ulps(float ours, double exact)
{
    int e;
    frexp(fabs(exact), &e);
    return fabs((double)ours - exact) / ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
}

static void tanh_specials(void **state)
{
    (void)state;
    assert_bits(dn_tanh(0.0f), 0x00000000);
    assert_bits(dn_tanh(-0.0f), 0x80000000);
    assert_bits(dn_tanh(tf(0x80400000)), 0x80000000); /* a denormal reads as -0 */
    assert_bits(dn_tanh(INFINITY), 0x3F800000);
    assert_bits(dn_tanh(-INFINITY), 0xBF800000);
    assert_bits(dn_tanh(tf(0x7FC00001)), NAN_BITS);
    /* tanh x = x - x^3/3 + ...: x itself below 2^-12 */
    assert_same_float(dn_tanh(0x1p-20f), 0x1p-20f);
    assert_same_float(dn_tanh(0x1p-126f), 0x1p-126f);
    /* 1 - tanh 9.1 = 2 e^-18.2 (1 + ...) < 2^-25: rounds to 1 */
    assert_same_float(dn_tanh(9.1f), 1.0f);
    assert_same_float(dn_tanh(1e30f), 1.0f);
    /* odd, and within 2 ULP of the exact value on both sides of 9/16 */
    static const float xs[] = {0x1.1ffffep-1f, 0.5625f, 0.1f, 0.3f, 0.7f, 1.0f, 2.5f, 5.0f, 8.5f};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        assert_same_float(dn_tanh(-xs[i]), -dn_tanh(xs[i]));
        assert_true(ulps(dn_tanh(xs[i]), tanh((double)xs[i])) <= 2.0);
    }
}

/* gelu_tanh's exact value: x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) */
static double gelu_tanh_exact(double x)
{
    return x / (1 + exp(-1.5957691216057307117597842397375 * (x + 0.044715 * x * x * x)));
}

static void gelu_specials(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        float (*g)(float) = f ? dn_gelu : dn_gelu_tanh;
        assert_bits(g(0.0f), 0x00000000);
        assert_bits(g(-0.0f), 0x80000000);
        assert_bits(g(tf(0x00400000)), 0x00000000);
        assert_bits(g(INFINITY), 0x7F800000);
        assert_bits(g(-INFINITY), 0x80000000);
        assert_bits(g(tf(0xFFC00001)), NAN_BITS);
        /* x Phi(x) = x/2 + x^2/sqrt(2 pi) + ...: x/2 for tiny x */
        assert_same_float(g(0x1p-30f), 0x1p-31f);
        assert_same_float(g(-0x1p-30f), -0x1p-31f);
        /* large x: x; far below: -0 */
        assert_same_float(g(10.5f), 10.5f);
        assert_same_float(g(3e38f), 3e38f);
        assert_bits(g(-14.0f), 0x80000000);
        assert_bits(g(-1e20f), 0x80000000);
    }
    /* past the clamps the value is x: 1 - Phi(6) < 2^-29, sigmoid(87) = 1 - e^-87 */
    assert_same_float(dn_gelu(6.5f), 6.5f);
    /* within 2 ULP of the exact values, the tails included */
    static const float xs[] = {-10.0f, -7.5f, -3.0f, -1.0f, -0.25f, 0.25f, 1.0f, 3.0f, 5.5f};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        double x = xs[i];
        assert_true(ulps(dn_gelu(xs[i]), 0.5 * x * erfc(-x / sqrt(2.0))) <= 2.0);
        assert_true(ulps(dn_gelu_tanh(xs[i]), gelu_tanh_exact(x)) <= 2.0);
    }
    /* array forms: the scalar functions element by element, in place too */
    enum { N = 61 };
    float x[N], y[N];
    for (int f = 0; f < 3; f++) {
        float (*g)(float) = f == 0 ? dn_tanh : f == 1 ? dn_gelu_tanh : dn_gelu;
        dn_status (*v)(const float *, float *, size_t) = f == 0   ? dn_tanh_v
                                                         : f == 1 ? dn_gelu_tanh_v
                                                                  : dn_gelu_v;
        for (int i = 0; i < N; i++) x[i] = (float)(i - 40) * 0.37f;
        assert_int_equal(v(x, y, N), DN_OK);
        for (int i = 0; i < N; i++) assert_same_float(y[i], g(x[i]));
        assert_int_equal(v(x, x, N), DN_OK);
        for (int i = 0; i < N; i++) assert_same_float(x[i], y[i]);
        assert_int_equal(v(NULL, y, 1), DN_ERR_INVALID_ARGUMENT);
        assert_int_equal(v(NULL, NULL, 0), DN_OK);
    }
}

/* rms0 and rms_gated are rmsnorm's r times (1 + w_i), and rmsnorm's output
   times the gate, in that order: checked against dn_rmsnorm and the
   scalar functions. */
static void rms0_gated(void **state)
{
    (void)state;
    enum { N = 77 };
    float x[N], w[N], g[N], ones[N], base[N], y[N], z[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i * 7 % 23) * 0.1f - 1.1f;
        w[i] = (float)(i % 13) / 32.0f - 0.2f;
        g[i] = (float)(i * 5 % 17) * 0.6f - 5.0f;
        ones[i] = 1.0f;
    }
    float eps = 1e-6f;
    assert_int_equal(dn_rmsnorm(x, ones, eps, base, N), DN_OK); /* x_i * r */
    assert_int_equal(dn_rms0(x, w, eps, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_same_float(y[i], dn_fmul(base[i], dn_fadd(1.0f, w[i])));
    assert_int_equal(dn_rmsnorm(x, w, eps, base, N), DN_OK); /* (x_i * r) * w_i */
    for (int kind = 0; kind < 2; kind++) {
        assert_int_equal(dn_rms_gated(x, g, w, eps, (dn_gate)kind, y, N), DN_OK);
        for (int i = 0; i < N; i++)
            assert_same_float(y[i], dn_fmul(base[i], kind ? dn_silu(g[i]) : dn_sigmoid(g[i])));
        memcpy(z, g, sizeof z); /* over the gate */
        assert_int_equal(dn_rms_gated(x, z, w, eps, (dn_gate)kind, z, N), DN_OK);
        for (int i = 0; i < N; i++) assert_same_float(z[i], y[i]);
        memcpy(z, x, sizeof z); /* over x */
        assert_int_equal(dn_rms_gated(z, g, w, eps, (dn_gate)kind, z, N), DN_OK);
        for (int i = 0; i < N; i++) assert_same_float(z[i], y[i]);
    }
    memcpy(z, x, sizeof z);
    assert_int_equal(dn_rms0(z, w, eps, z, N), DN_OK); /* in place */
    assert_int_equal(dn_rms0(x, w, eps, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_same_float(z[i], y[i]);
    assert_int_equal(dn_rms0(x, NULL, eps, y, N), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rms0(NULL, NULL, eps, NULL, 0), DN_OK);
    assert_int_equal(dn_rms_gated(x, NULL, w, eps, DN_GATE_SILU, y, N), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rms_gated(x, g, w, eps, (dn_gate)2, y, N), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rms_gated(x, g, w, eps, (dn_gate)-1, y, 0), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rms_gated(NULL, NULL, NULL, eps, DN_GATE_SIGMOID, NULL, 0), DN_OK);
    /* zero-centred weights of -1 zero the output; all-zero x with eps 0: NaN */
    for (int i = 0; i < N; i++) w[i] = -1.0f;
    assert_int_equal(dn_rms0(x, w, eps, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_true(y[i] == 0.0f);
    float zero[4] = {0}, wz[4] = {0}, out[4];
    assert_int_equal(dn_rms0(zero, wz, 0.0f, out, 4), DN_OK);
    assert_bits(out[0], NAN_BITS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exp_specials),
        cmocka_unit_test(ln_specials),
        cmocka_unit_test(ln1p_specials),
        cmocka_unit_test(recip_specials),
        cmocka_unit_test(rsqrt_specials),
        cmocka_unit_test(sigmoid_silu_softplus),
        cmocka_unit_test(array_forms),
        cmocka_unit_test(softmax_order),
        cmocka_unit_test(softmax_sum_bound),
        cmocka_unit_test(norms_order),
        cmocka_unit_test(rope_pairs),
        cmocka_unit_test(hadamard_twice),
        cmocka_unit_test(tanh_specials),
        cmocka_unit_test(gelu_specials),
        cmocka_unit_test(rms0_gated),
        cmocka_unit_test(exp_factors_rebuild_table),
        cmocka_unit_test(recip_residual_two_steps),
    };
    return cmocka_run_group_tests_name("math", tests, NULL, NULL);
}
