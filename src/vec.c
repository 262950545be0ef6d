/* SPDX-License-Identifier: MIT */
/*
 * The element-wise operations between a layer's products: the scalar
 * references, which are the definitions (docs/numerics.md section 15), in
 * the order the kernels run, and the scalar kernel table. The public entry
 * points are in src/vec_api.c.
 *
 * Each output element is the engine's add, subtract and multiply (binary32,
 * nearest even, FTZ on operands and results, the one NaN) and the math
 * module's dn_silu / dn_sigmoid / dn_gelu_tanh / dn_gelu applied to that
 * element alone: the same value the scalar public functions give element
 * by element.
 */
#include "vec_kernels.h"
#include "fp32_kernels.h"
#include "bits.h"
#include "decodenum/math.h"

/* ---- the engine's operations, inline (dn_fadd, dn_fsub, dn_fmul) ------- */

static inline float add(float a, float b) { return dn_result(dn_flush(a) + dn_flush(b)); }
static inline float sub(float a, float b) { return dn_result(dn_flush(a) - dn_flush(b)); }
static inline float mul(float a, float b) { return dn_result(dn_flush(a) * dn_flush(b)); }

/* ---- element-wise ------------------------------------------------------- */

/* Each loop reads element i's inputs before it writes y[i], so y may be
   the same array as an input. */
void dn_ref_vec_add(const float *a, const float *b, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = add(a[i], b[i]);
}

void dn_ref_vec_sub(const float *a, const float *b, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = sub(a[i], b[i]);
}

void dn_ref_vec_mul(const float *a, const float *b, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = mul(a[i], b[i]);
}

void dn_ref_vec_scale(const float *x, float a, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = mul(x[i], a);
}

/* The product rounded and flushed (mul), then the add: never fused. */
void dn_ref_vec_axpy(float a, const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = add(y[i], mul(a, x[i]));
}

void dn_ref_vec_silu_mul(const float *g, const float *u, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = mul(dn_silu(g[i]), u[i]);
}

void dn_ref_vec_sigmoid_mul(const float *g, const float *u, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = mul(dn_sigmoid(g[i]), u[i]);
}

void dn_ref_vec_gelu_tanh_mul(const float *g, const float *u, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = mul(dn_gelu_tanh(g[i]), u[i]);
}

void dn_ref_vec_gelu_mul(const float *g, const float *u, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = mul(dn_gelu(g[i]), u[i]);
}

/* ---- the residual add and RMSNorm ---------------------------------------- */

/* The sums stored, then dn_fdot of the stored sums with themselves: the
   kernels form each lane's square as they store the sum (one pass); the
   values and their order are these. */
float dn_ref_vec_add_sumsq(float *r, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) r[i] = add(r[i], x[i]);
    return dn_ref_fdot(r, r, n);
}

/* dn_ref_rmsnorm's output step: (x[i] * a) * w[i], in that order. */
void dn_ref_vec_scale_mul(const float *x, float a, const float *w, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = mul(mul(x[i], a), w[i]);
}

/* ---- the scalar table: the references -------------------------------------- */

const dn_vec_kernels dn_vec_scalar = {
    .add = dn_ref_vec_add,
    .sub = dn_ref_vec_sub,
    .mul = dn_ref_vec_mul,
    .scale = dn_ref_vec_scale,
    .axpy = dn_ref_vec_axpy,
    .silu_mul = dn_ref_vec_silu_mul,
    .sigmoid_mul = dn_ref_vec_sigmoid_mul,
    .gelu_tanh_mul = dn_ref_vec_gelu_tanh_mul,
    .gelu_mul = dn_ref_vec_gelu_mul,
    .add_sumsq = dn_ref_vec_add_sumsq,
    .scale_mul = dn_ref_vec_scale_mul,
};
