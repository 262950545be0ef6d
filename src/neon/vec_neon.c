/* SPDX-License-Identifier: MIT */
/*
 * The element-wise operations on NEON: each kernel is its reference in
 * src/vec.c, four elements at a time, operation for operation (no FMA:
 * vmulq then vaddq, and the build passes -ffp-contract=off).
 *
 * No FPCR flush mode (neon_common.h says why): every operand is read
 * through dn_neon_flush, every product and sum flushed as it is formed,
 * every stored value made canonical (result()). Tails go through a
 * zero-padded buffer, so no byte past an array is touched.
 */
#include "../vec_kernels.h"
#include "../math_kernels.h"
#include "../fp32_kernels.h"
#include "../bits.h"
#include "neon_common.h"

#include <string.h>

typedef float32x4_t V;

/* The engine's add, sub, mul on four lanes: operands and result flushed. */
static inline V add_(V a, V b)
{
    return dn_neon_flush(vaddq_f32(dn_neon_flush(a), dn_neon_flush(b)));
}
static inline V sub_(V a, V b)
{
    return dn_neon_flush(vsubq_f32(dn_neon_flush(a), dn_neon_flush(b)));
}
static inline V mul_(V a, V b)
{
    return dn_neon_flush(vmulq_f32(dn_neon_flush(a), dn_neon_flush(b)));
}

/* A stored result: flushed already; a NaN made DN_NAN_BITS. */
static inline V canon(V v)
{
    return vbslq_f32(dn_neon_is_num(v), v, vreinterpretq_f32_u32(vdupq_n_u32(DN_NAN_BITS)));
}

enum op { ADD, SUB, MUL, SCALE, AXPY };

static inline V apply(enum op op, V a, V b, V s, V y)
{
    switch (op) {
    case ADD: return canon(add_(a, b));
    case SUB: return canon(sub_(a, b));
    case MUL: return canon(mul_(a, b));
    case SCALE: return canon(mul_(a, s));
    case AXPY: return canon(add_(y, mul_(s, a)));
    }
    return a;
}

/* One vector's inputs loaded before its output is stored, so y may be a
   or b. b is read only by the binary ops, y only by AXPY. */
static inline __attribute__((always_inline)) void
elementwise(enum op op, const float *a, const float *b, float s, float *y, size_t n)
{
    const int uses_b = op == ADD || op == SUB || op == MUL, uses_y = op == AXPY;
    V vs = vdupq_n_f32(s), z = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        V a0 = vld1q_f32(a + i), a1 = vld1q_f32(a + i + 4);
        V b0 = uses_b ? vld1q_f32(b + i) : z, b1 = uses_b ? vld1q_f32(b + i + 4) : z;
        V y0 = uses_y ? vld1q_f32(y + i) : z, y1 = uses_y ? vld1q_f32(y + i + 4) : z;
        vst1q_f32(y + i, apply(op, a0, b0, vs, y0));
        vst1q_f32(y + i + 4, apply(op, a1, b1, vs, y1));
    }
    for (; i < n; i += 4) {
        size_t m = n - i > 4 ? 4 : n - i;
        float ta[4] = {0}, tb[4] = {0}, ty[4] = {0};
        memcpy(ta, a + i, m * sizeof(float));
        if (uses_b) memcpy(tb, b + i, m * sizeof(float));
        if (uses_y) memcpy(ty, y + i, m * sizeof(float));
        vst1q_f32(ty, apply(op, vld1q_f32(ta), vld1q_f32(tb), vs, vld1q_f32(ty)));
        memcpy(y + i, ty, m * sizeof(float));
    }
}

static void add_neon(const float *a, const float *b, float *y, size_t n)
{
    elementwise(ADD, a, b, 0.0f, y, n);
}
static void sub_neon(const float *a, const float *b, float *y, size_t n)
{
    elementwise(SUB, a, b, 0.0f, y, n);
}
static void mul_neon(const float *a, const float *b, float *y, size_t n)
{
    elementwise(MUL, a, b, 0.0f, y, n);
}
static void scale_neon(const float *x, float a, float *y, size_t n)
{
    elementwise(SCALE, x, NULL, a, y, n);
}
static void axpy_neon(float a, const float *x, float *y, size_t n)
{
    elementwise(AXPY, x, NULL, a, y, n);
}

/* ---- the gates -------------------------------------------------------------- */

/* y = f(g) * u a piece at a time: f(g) by the math module's NEON kernel into
   a stack buffer, then the multiply. The piece of g is read before the
   piece of y is written, so y may be g or u. */
static inline __attribute__((always_inline)) void gate_mul(dn_unary_kernel f, const float *g,
                                                           const float *u, float *y, size_t n)
{
    float t[DN_VEC_GATE_PIECE];
    for (size_t p = 0; p < n; p += DN_VEC_GATE_PIECE) {
        size_t m = n - p < DN_VEC_GATE_PIECE ? n - p : DN_VEC_GATE_PIECE, i = 0;
        f(g + p, t, m);
        for (; i + 4 <= m; i += 4)
            vst1q_f32(y + p + i, canon(mul_(vld1q_f32(t + i), vld1q_f32(u + p + i))));
        for (; i < m; i++) y[p + i] = dn_fmul(t[i], u[p + i]);
    }
}

static void silu_mul_neon(const float *g, const float *u, float *y, size_t n)
{
    gate_mul(dn_math_neon.silu_v, g, u, y, n);
}
static void sigmoid_mul_neon(const float *g, const float *u, float *y, size_t n)
{
    gate_mul(dn_math_neon.sigmoid_v, g, u, y, n);
}
static void gelu_tanh_mul_neon(const float *g, const float *u, float *y, size_t n)
{
    gate_mul(dn_math_neon.gelu_tanh_v, g, u, y, n);
}
static void gelu_mul_neon(const float *g, const float *u, float *y, size_t n)
{
    gate_mul(dn_math_neon.gelu_v, g, u, y, n);
}

/* ---- the residual add and RMSNorm ----------------------------------------------- */

/* dn_ref_vec_add_sumsq in one pass: lane l is lane l % 4 of acc[l / 4], as
   fp32_neon.c's dn_fdot; each stored sum squared into its lane, every
   product and lane sum flushed; the tail through zero-padded buffers,
   updating only the lanes it has elements for. */
static float add_sumsq_neon(float *r, const float *x, size_t n)
{
    V acc[8];
    for (int j = 0; j < 8; j++) acc[j] = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 8 /* keeps the accumulators in registers */
        for (int j = 0; j < 8; j++) {
            V s = canon(add_(vld1q_f32(r + i + 4 * j), vld1q_f32(x + i + 4 * j)));
            vst1q_f32(r + i + 4 * j, s);
            acc[j] = dn_neon_flush(vaddq_f32(acc[j], mul_(s, s)));
        }
    if (i < n) {
        float tr[32] = {0}, tx[32] = {0};
        size_t left = n - i;
        memcpy(tr, r + i, left * sizeof(float));
        memcpy(tx, x + i, left * sizeof(float));
        for (int j = 0; j < 8 && 4 * (size_t)j < left; j++) {
            size_t l = left - 4 * (size_t)j;
            uint32x4_t m = dn_neon_tail_mask(l > 4 ? 4 : l);
            V s = canon(add_(vld1q_f32(tr + 4 * j), vld1q_f32(tx + 4 * j)));
            vst1q_f32(tr + 4 * j, s);
            acc[j] = vbslq_f32(m, dn_neon_flush(vaddq_f32(acc[j], mul_(s, s))), acc[j]);
        }
        memcpy(r + i, tr, left * sizeof(float));
    }
    return dn_result(dn_neon_tree32(acc));
}

/* y = (x * a) * w, each product flushed. */
static void scale_mul_neon(const float *x, float a, const float *w, float *y, size_t n)
{
    V va = vdupq_n_f32(a);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(y + i, canon(mul_(mul_(vld1q_f32(x + i), va), vld1q_f32(w + i))));
    for (; i < n; i++) y[i] = dn_fmul(dn_fmul(x[i], a), w[i]);
}

const dn_vec_kernels dn_vec_neon = {
    .add = add_neon,
    .sub = sub_neon,
    .mul = mul_neon,
    .scale = scale_neon,
    .axpy = axpy_neon,
    .silu_mul = silu_mul_neon,
    .sigmoid_mul = sigmoid_mul_neon,
    .gelu_tanh_mul = gelu_tanh_mul_neon,
    .gelu_mul = gelu_mul_neon,
    .add_sumsq = add_sumsq_neon,
    .scale_mul = scale_mul_neon,
};
