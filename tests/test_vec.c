/* SPDX-License-Identifier: MIT */
/*
 * The element-wise operations against expectations derived by hand from
 * docs/numerics.md (sections 2 and 15): ties, flushes of operands and
 * results, the one NaN, the product of axpy rounded before the add, the
 * gates' special values (SwiGLU, sigmoid, both GeGLU forms), the fused
 * residual add and RMSNorm; then every output against the scalar public
 * functions applied element by element (lengths 0..67 and long ones, odd
 * float offsets, every input regime), the allowed in-place forms, pools of
 * 1-3 threads, and every argument error. Runs under every DECODENUM_ISA
 * (tests/CMakeLists.txt).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"
#include "check/check.h"
#include "testutil.h"

#define NAN_BITS 0x7FC00000u

/* One element through each binary operation. */
static float add1(float a, float b)
{
    float y;
    assert_int_equal(dn_vec_add(&a, &b, &y, 1, NULL), DN_OK);
    return y;
}
static float sub1(float a, float b)
{
    float y;
    assert_int_equal(dn_vec_sub(&a, &b, &y, 1, NULL), DN_OK);
    return y;
}
static float mul1(float a, float b)
{
    float y;
    assert_int_equal(dn_vec_mul(&a, &b, &y, 1, NULL), DN_OK);
    return y;
}

static void arithmetic_by_hand(void **state)
{
    (void)state;
    /* 1 + 2^-24 is halfway between 1 and 1 + 2^-23: to even, 1 */
    assert_bits(add1(1.0f, 0x1p-24f), 0x3F800000);
    assert_bits(add1(1.0f, 0x1.8p-24f), 0x3F800001);
    /* FLT_MIN + (-1.5 FLT_MIN) = -2^-127, denormal: a zero of its sign */
    assert_bits(add1(tf(0x00800000), tf(0x80C00000)), 0x80000000);
    /* denormal operands read as zeros of their signs */
    assert_bits(add1(tf(0x80000001), tf(0x80000003)), 0x80000000);
    assert_bits(add1(tf(0x00000001), tf(0x80000001)), 0x00000000);
    assert_bits(add1(1.0f, tf(0x007FFFFF)), 0x3F800000);
    assert_bits(sub1(INFINITY, INFINITY), NAN_BITS);
    assert_bits(add1(tf(0xFFC00001), 1.0f), NAN_BITS); /* any NaN: the one NaN */
    assert_bits(sub1(tf(0x7F800001), 1.0f), NAN_BITS);
    assert_bits(sub1(0.0f, 0.0f), 0x00000000);
    assert_bits(sub1(-0.0f, 0.0f), 0x80000000);
    /* (1 - 2^-24) * 2^-126 = 2^-126 - 2^-150 rounds (IEEE, ties to even in
       the denormal range) up to FLT_MIN, which is normal: kept */
    assert_bits(mul1(tf(0x3F7FFFFF), tf(0x00800000)), 0x00800000);
    /* 2^-64 * 2^-64 = 2^-128: denormal, flushed */
    assert_bits(mul1(0x1p-64f, -0x1p-64f), 0x80000000);
    assert_bits(mul1(FLT_MAX, 2.0f), 0x7F800000);
    assert_bits(mul1(tf(0x00400000), INFINITY), NAN_BITS); /* denormal reads as 0: 0 * inf */
    assert_bits(mul1(-3.0f, 0.5f), 0xBFC00000);
}

static void scale_and_axpy_by_hand(void **state)
{
    (void)state;
    float x[3] = {INFINITY, tf(0x00000005), 3.0f}, y[3];
    assert_int_equal(dn_vec_scale(x, 0.0f, y, 3, NULL), DN_OK);
    assert_bits(y[0], NAN_BITS);
    assert_bits(y[1], 0x00000000);
    assert_bits(y[2], 0x00000000);
    assert_int_equal(dn_vec_scale(x, -2.0f, x, 3, NULL), DN_OK); /* in place */
    assert_bits(x[0], 0xFF800000);
    assert_bits(x[1], 0x80000000);
    assert_bits(x[2], 0xC0C00000);
    /* a = x = 1 + 2^-12: the exact product 1 + 2^-11 + 2^-24 rounds (a tie,
       to even) to 1 + 2^-11, and y = -(1 + 2^-11) cancels it to +0; a fused
       multiply-add would give 2^-24. */
    float a = 1.0f + 0x1p-12f, xs[2] = {1.0f + 0x1p-12f, 2.0f}, ys[2] = {-(1.0f + 0x1p-11f), 1.0f};
    assert_int_equal(dn_vec_axpy(a, xs, ys, 2, NULL), DN_OK);
    assert_bits(ys[0], 0x00000000);
    assert_same_float(ys[1], 1.0f + (2.0f + 0x1p-11f));
    /* the product flushed before the add: 2^-100 * 2^-30 is 0, and
       -0 + (+0) = +0 */
    float t = 0x1p-30f, u = -0.0f;
    assert_int_equal(dn_vec_axpy(0x1p-100f, &t, &u, 1, NULL), DN_OK);
    assert_bits(u, 0x00000000);
    /* x == y: y + a*y */
    float v[1] = {3.0f};
    assert_int_equal(dn_vec_axpy(2.0f, v, v, 1, NULL), DN_OK);
    assert_same_float(v[0], 9.0f);
}

static void gates_by_hand(void **state)
{
    (void)state;
    float g[5] = {0.0f, -INFINITY, INFINITY, tf(0xFFC00001), -0.0f};
    float u[5] = {INFINITY, 5.0f, 2.0f, 1.0f, 7.0f}, y[5];
    assert_int_equal(dn_vec_silu_mul(g, u, y, 5, NULL), DN_OK);
    assert_bits(y[0], NAN_BITS);   /* silu(0) = 0, times inf */
    assert_bits(y[1], 0x80000000); /* silu(-inf) = -0 */
    assert_bits(y[2], 0x7F800000); /* silu(inf) = inf */
    assert_bits(y[3], NAN_BITS);
    assert_bits(y[4], 0x80000000); /* silu(-0) = -0 */
    assert_int_equal(dn_vec_sigmoid_mul(g, u, y, 5, NULL), DN_OK);
    assert_bits(y[1], 0x00000000); /* sigmoid(-inf) = +0 */
    assert_same_float(y[2], 2.0f); /* sigmoid(inf) = 1 */
    assert_bits(y[3], NAN_BITS);
    /* in place on u */
    assert_int_equal(dn_vec_silu_mul(g + 2, u + 2, u + 2, 1, NULL), DN_OK);
    assert_bits(u[2], 0x7F800000);
}

/* Both GELU gates: gelu(±0) = ±0 (a denormal reads as -0), gelu(-inf) and
   gelu(-20) (below -12 and -13.5) are -0, gelu(inf) = inf and gelu(20) = 20
   (past 10 and 6); then the engine's product: 0 * inf and inf * 0 are the
   one NaN, 20 * 3 = 60. */
static void gelu_gates_by_hand(void **state)
{
    (void)state;
    dn_status (*gates[2])(const float *, const float *, float *, size_t,
                          dn_pool *) = {dn_vec_gelu_tanh_mul, dn_vec_gelu_mul};
    for (int k = 0; k < 2; k++) {
        float g[9] = {0.0f,  -INFINITY, INFINITY, tf(0xFFC00001), -20.0f,
                      20.0f, INFINITY,  -0.0f,    tf(0x80000001)};
        float u[9] = {INFINITY, 5.0f, 2.0f, 1.0f, 3.0f, 3.0f, 0.0f, 7.0f, 1.0f}, y[9];
        assert_int_equal(gates[k](g, u, y, 9, NULL), DN_OK);
        assert_bits(y[0], NAN_BITS);
        assert_bits(y[1], 0x80000000);
        assert_bits(y[2], 0x7F800000);
        assert_bits(y[3], NAN_BITS);
        assert_bits(y[4], 0x80000000);
        assert_same_float(y[5], 60.0f);
        assert_bits(y[6], NAN_BITS);
        assert_bits(y[7], 0x80000000);
        assert_bits(y[8], 0x80000000);
        /* in place on g and on u */
        assert_int_equal(gates[k](g, u, g, 9, NULL), DN_OK);
        assert_memory_equal(g, y, sizeof y);
        g[5] = 20.0f;
        assert_int_equal(gates[k](g + 5, u + 5, u + 5, 1, NULL), DN_OK);
        assert_same_float(u[5], 60.0f);
    }
}

static void add_rmsnorm_by_hand(void **state)
{
    (void)state;
    /* sums 2, -2, 2, 2: s = 16, 16 * recip(4) = 4, rsqrt(4) = 1/2 */
    assert_same_float(dn_rsqrt(4.0f), 0.5f);
    float r[4] = {1.0f, -1.5f, 0.5f, 3.0f}, x[4] = {1.0f, -0.5f, 1.5f, -1.0f};
    float w[4] = {1.0f, 3.0f, -0.25f, 0.0f}, y[4];
    assert_int_equal(dn_vec_add_rmsnorm(r, x, w, 0.0f, y, 4), DN_OK);
    assert_same_float(r[0], 2.0f);
    assert_same_float(r[1], -2.0f);
    assert_same_float(r[3], 2.0f);
    assert_same_float(y[0], 1.0f);
    assert_same_float(y[1], -3.0f);
    assert_same_float(y[2], -0.25f);
    assert_bits(y[3], 0x00000000);
    /* an infinite sum: r = +0 from rsqrt(inf), inf * 0 = NaN there, 0 elsewhere */
    float r2[2] = {FLT_MAX, 1.0f}, x2[2] = {FLT_MAX, 1.0f}, w2[2] = {1.0f, 1.0f};
    assert_int_equal(dn_vec_add_rmsnorm(r2, x2, w2, 1e-6f, x2, 2), DN_OK); /* y on x */
    assert_bits(r2[0], 0x7F800000);
    assert_bits(x2[0], NAN_BITS);
    assert_bits(x2[1], 0x00000000);
}

/* ---- against the scalar public functions --------------------------------- */

static uint64_t seed = UINT64_C(0x7EC0);

/* Bits a regime in four: any pattern, moderate values, specials, tiny. */
static void fill(float *x, size_t n, uint64_t *s, int regime)
{
    static const uint32_t special[] = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF,
                                       0x00800000, 0x80800000, 0x7F7FFFFF, 0x7F800000,
                                       0xFF800000, 0x7FC00000, 0xFFC00001, 0x3F800000};
    for (size_t i = 0; i < n; i++) {
        uint64_t z = splitmix(s);
        uint32_t sign = (uint32_t)(z >> 63) << 31, frac = (uint32_t)(z >> 8) & 0x7FFFFFu;
        switch (regime & 3) {
        case 0: x[i] = tf((uint32_t)z); break;
        case 1: x[i] = tf(sign | (uint32_t)(115 + (z >> 40) % 25) << 23 | frac); break;
        case 2: x[i] = tf(special[(z >> 32) % (sizeof special / sizeof *special)]); break;
        default: x[i] = tf(sign | (uint32_t)(1 + (z >> 40) % 70) << 23 | frac); break;
        }
    }
}

enum { MAXN = 4099 + 2 };
static float A[MAXN], B[MAXN], W[MAXN], Y[MAXN], R[MAXN], Q[MAXN];

static void expect_elementwise(size_t n, const float *a, const float *b, float s)
{
    assert_int_equal(dn_vec_add(a, b, Y, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i], dn_fadd(a[i], b[i]));
    assert_int_equal(dn_vec_sub(a, b, Y + 1, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i + 1], dn_fsub(a[i], b[i]));
    assert_int_equal(dn_vec_mul(a, b, Y, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i], dn_fmul(a[i], b[i]));
    assert_int_equal(dn_vec_scale(a, s, Y + 1, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i + 1], dn_fmul(a[i], s));
    memcpy(Y, b, n * sizeof(float));
    assert_int_equal(dn_vec_axpy(s, a, Y, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i], dn_fadd(b[i], dn_fmul(s, a[i])));
    assert_int_equal(dn_vec_silu_mul(a, b, Y + 1, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i + 1], dn_fmul(dn_silu(a[i]), b[i]));
    assert_int_equal(dn_vec_sigmoid_mul(a, b, Y, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i], dn_fmul(dn_sigmoid(a[i]), b[i]));
    assert_int_equal(dn_vec_gelu_tanh_mul(a, b, Y + 1, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i + 1], dn_fmul(dn_gelu_tanh(a[i]), b[i]));
    assert_int_equal(dn_vec_gelu_mul(a, b, Y, n, NULL), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i], dn_fmul(dn_gelu(a[i]), b[i]));
}

/* add_rmsnorm against dn_fadd element by element, then dn_rmsnorm. */
static void expect_add_rmsnorm(size_t n, const float *a, const float *b, float eps)
{
    float *r = R + (n & 1), *q = Q + 1 - (n & 1);
    memcpy(r, a, n * sizeof(float));
    for (size_t i = 0; i < n; i++) q[i] = dn_fadd(a[i], b[i]);
    assert_int_equal(dn_vec_add_rmsnorm(r, b, W, eps, Y, n), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(r[i], q[i]);
    assert_int_equal(dn_rmsnorm(q, W, eps, q, n), DN_OK);
    for (size_t i = 0; i < n; i++) assert_same_float(Y[i], q[i]);
}

static void equals_the_scalar_functions(void **state)
{
    (void)state;
    uint64_t s = seed;
    for (size_t n = 0; n <= 4099; n += n < 67 ? 1 : 1011) {
        for (int regime = 0; regime < 8; regime++) {
            size_t off = (n + (size_t)regime) & 1; /* odd float offsets too */
            fill(A + off, n, &s, regime);
            fill(B + 1 - off, n, &s, regime >> 1);
            fill(W, n, &s, 1);
            float k;
            fill(&k, 1, &s, regime + 1);
            expect_elementwise(n, A + off, B + 1 - off, k);
            static const float eps[4] = {1e-6f, 0.0f, 1e-5f, 0x1p-130f};
            expect_add_rmsnorm(n, A + off, B + 1 - off, eps[regime & 3]);
        }
    }
}

/* The in-place forms the header allows give the out-of-place bits. */
static void in_place_forms(void **state)
{
    (void)state;
    uint64_t s = seed ^ 1;
    const size_t n = 1001;
    fill(A, n, &s, 1);
    fill(B, n, &s, 0);
    dn_status (*ops[])(const float *, const float *, float *, size_t, dn_pool *) = {
        dn_vec_add,         dn_vec_sub,           dn_vec_mul,     dn_vec_silu_mul,
        dn_vec_sigmoid_mul, dn_vec_gelu_tanh_mul, dn_vec_gelu_mul};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        assert_int_equal(ops[o](A, B, Y, n, NULL), DN_OK);
        memcpy(R, A, n * sizeof(float));
        assert_int_equal(ops[o](R, B, R, n, NULL), DN_OK);
        assert_memory_equal(R, Y, n * sizeof(float));
        memcpy(R, B, n * sizeof(float));
        assert_int_equal(ops[o](A, R, R, n, NULL), DN_OK);
        assert_memory_equal(R, Y, n * sizeof(float));
        memcpy(R, A, n * sizeof(float));
        assert_int_equal(ops[o](A, A, Y, n, NULL), DN_OK);
        assert_int_equal(ops[o](R, R, R, n, NULL), DN_OK); /* a == b == y */
        assert_memory_equal(R, Y, n * sizeof(float));
    }
}

/* ---- pools ---------------------------------------------------------------- */

/* Just past the lengths the pool splits from (2^16 for the gates, 2^20 for
   the rest; short last pieces), pools of 1, 2 and 3 threads give NULL's
   bits. */
static void pools_at(size_t n)
{
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    float *want = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    assert_true(a && b && want && got);
    uint64_t s = seed ^ 2;
    fill(a, n, &s, 1);
    fill(b, n, &s, 0);
    for (unsigned threads = 1; threads <= 3; threads++) {
        dn_pool *pool = dn_pool_create(threads);
        assert_non_null(pool);
        dn_status (*ops[])(const float *, const float *, float *, size_t, dn_pool *) = {
            dn_vec_add,         dn_vec_sub,           dn_vec_mul,     dn_vec_silu_mul,
            dn_vec_sigmoid_mul, dn_vec_gelu_tanh_mul, dn_vec_gelu_mul};
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
            assert_int_equal(ops[o](a, b, want, n, NULL), DN_OK);
            assert_int_equal(ops[o](a, b, got, n, pool), DN_OK);
            assert_memory_equal(want, got, n * sizeof(float));
        }
        assert_int_equal(dn_vec_scale(a, 1.5f, want, n, NULL), DN_OK);
        assert_int_equal(dn_vec_scale(a, 1.5f, got, n, pool), DN_OK);
        assert_memory_equal(want, got, n * sizeof(float));
        memcpy(want, b, n * sizeof(float));
        memcpy(got, b, n * sizeof(float));
        assert_int_equal(dn_vec_axpy(-0.75f, a, want, n, NULL), DN_OK);
        assert_int_equal(dn_vec_axpy(-0.75f, a, got, n, pool), DN_OK);
        assert_memory_equal(want, got, n * sizeof(float));
        dn_pool_destroy(pool);
    }
    free(a);
    free(b);
    free(want);
    free(got);
}

static void pools_change_no_bit(void **state)
{
    (void)state;
    pools_at(((size_t)1 << 16) + 5);
    pools_at(((size_t)1 << 20) + 13);
}

/* ---- bad input -------------------------------------------------------------- */

static void bad_arguments(void **state)
{
    (void)state;
    float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {0}, y[8] = {0};
    const float keep = y[0];
    /* n = 0: anything goes */
    assert_int_equal(dn_vec_add(NULL, NULL, NULL, 0, NULL), DN_OK);
    assert_int_equal(dn_vec_axpy(1.0f, NULL, NULL, 0, NULL), DN_OK);
    assert_int_equal(dn_vec_add_rmsnorm(NULL, NULL, NULL, 0.0f, NULL, 0), DN_OK);
    assert_int_equal(dn_vec_gelu_tanh_mul(NULL, NULL, NULL, 0, NULL), DN_OK);
    assert_int_equal(dn_vec_gelu_mul(NULL, NULL, NULL, 0, NULL), DN_OK);
    /* NULL with n > 0 */
    assert_int_equal(dn_vec_add(NULL, b, y, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_sub(a, NULL, y, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_mul(a, b, NULL, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_scale(NULL, 2.0f, y, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_axpy(2.0f, a, NULL, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_silu_mul(a, NULL, y, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_sigmoid_mul(NULL, b, y, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_gelu_tanh_mul(a, b, NULL, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_gelu_mul(NULL, b, y, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_add_rmsnorm(b, a, NULL, 0.0f, y, 4), DN_ERR_INVALID_ARGUMENT);
    /* a length no array has, and one past the top of the address space */
    assert_int_equal(dn_vec_add(a, b, y, SIZE_MAX / 2, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_scale(a, 1.0f, y, SIZE_MAX / 4 + 1, NULL), DN_ERR_INVALID_ARGUMENT);
    float *top = (float *)(uintptr_t)(UINTPTR_MAX - 7);
    assert_int_equal(dn_vec_add(top, b, y, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    /* partial overlaps of an output with an input */
    assert_int_equal(dn_vec_add(a, b, a + 1, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_mul(a + 2, b, a, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_scale(a, 2.0f, a + 3, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_axpy(2.0f, a + 1, a, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_silu_mul(a, b + 1, b, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_gelu_tanh_mul(a + 1, b, a, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_gelu_mul(a, b, b + 3, 4, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_gelu_mul(a, b, y, SIZE_MAX / 4 + 1, NULL), DN_ERR_INVALID_ARGUMENT);
    /* add_rmsnorm: r against x, w, y; y against w */
    assert_int_equal(dn_vec_add_rmsnorm(a, a, b, 0.0f, y, 4), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_add_rmsnorm(a, b, a + 2, 0.0f, y, 4), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_add_rmsnorm(a, b, y, 0.0f, a, 4), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_add_rmsnorm(a, b, y, 0.0f, y, 4), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_vec_add_rmsnorm(a, b + 1, y, 0.0f, b, 4), DN_ERR_INVALID_ARGUMENT);
    /* nothing was written by any refused call */
    assert_same_float(y[0], keep);
    assert_same_float(a[0], 1.0f);
    assert_same_float(a[1], 2.0f);
    /* adjacent arrays do not overlap; inputs may overlap each other */
    assert_int_equal(dn_vec_add(a, a + 1, a + 4, 3, NULL), DN_OK);
    assert_int_equal(dn_vec_add_rmsnorm(a, b, b + 1, 1e-6f, y, 4), DN_OK); /* x, w overlap */
}

/* ---- the active ISA's kernels against the references ------------------------ */

static void print_result(const dn_check_result *r, void *ctx)
{
    (void)ctx;
    printf("  %-6s %-13s %10llu outputs compared, %llu differ%s%s\n", dn_isa_name(r->isa),
           r->kernel, (unsigned long long)r->compared, (unsigned long long)r->mismatched,
           r->mismatched ? "; first: " : "", r->first);
}

/* The selftest harness on this module alone (test_kernels runs every
   module): lengths 0..300 in every regime, 12 random lengths to 3*10^5. */
static void kernels_match_references(void **state)
{
    (void)state;
    if (dn_isa_active() == DN_ISA_SCALAR) skip();
    const dn_check_plan plan = {300, 12, 300000, seed};
    assert_int_equal(dn_check_vec(dn_isa_active(), &plan, print_result, NULL), 0);
}

int main(void)
{
    test_seed_from_env(&seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arithmetic_by_hand),  cmocka_unit_test(scale_and_axpy_by_hand),
        cmocka_unit_test(gates_by_hand),       cmocka_unit_test(gelu_gates_by_hand),
        cmocka_unit_test(add_rmsnorm_by_hand), cmocka_unit_test(equals_the_scalar_functions),
        cmocka_unit_test(in_place_forms),      cmocka_unit_test(pools_change_no_bit),
        cmocka_unit_test(bad_arguments),       cmocka_unit_test(kernels_match_references),
    };
    return cmocka_run_group_tests_name("vec", tests, NULL, NULL);
}
