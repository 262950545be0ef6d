/* SPDX-License-Identifier: MIT */
/*
 * The element-wise operations on AVX-512: the gates only. silu_mul,
 * sigmoid_mul, gelu_tanh_mul and gelu_mul compute the gate with the math
 * module's AVX-512 kernel and multiply on AVX2 (dn_vec_gate_mul_avx2: the
 * same pieces, the same product, so the same bits as every other table).
 * The other entries stay NULL and run the AVX2 kernels (src/dispatch.c):
 * one or two operations an element, bound by the bytes they move
 * (docs/vec.md, "Efficiency").
 */
#include "../vec_kernels.h"
#include "../math_kernels.h"

static void silu_mul_avx512(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx512.silu_v, g, u, y, n);
}

static void sigmoid_mul_avx512(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx512.sigmoid_v, g, u, y, n);
}

static void gelu_tanh_mul_avx512(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx512.gelu_tanh_v, g, u, y, n);
}

static void gelu_mul_avx512(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx512.gelu_v, g, u, y, n);
}

const dn_vec_kernels dn_vec_avx512 = {
    .silu_mul = silu_mul_avx512,
    .sigmoid_mul = sigmoid_mul_avx512,
    .gelu_tanh_mul = gelu_tanh_mul_avx512,
    .gelu_mul = gelu_mul_avx512,
};
