/* SPDX-License-Identifier: MIT */
/*
 * vec_kernels.h: the element-wise module's kernel table.
 *
 * One table per ISA, registered in src/dispatch.c. dn_vec_scalar holds the
 * references (src/vec.c, the definitions); dn_vec_avx2 (src/x86/vec_avx2.c)
 * and dn_vec_neon (src/neon/vec_neon.c) hold kernels that reproduce them bit
 * for bit; dn_vec_avx512 (src/x86/vec_avx512.c) only the gates. An entry an
 * ISA leaves NULL runs the ISA below it. n = 0 is valid
 * for every entry; arguments (pointers, overlaps) are already checked by the
 * public functions (src/vec_api.c). Every output may be the same array as
 * the inputs the public function allows; each kernel reads an element's
 * inputs before it writes that element's output.
 */
#ifndef DN_VEC_KERNELS_H
#define DN_VEC_KERNELS_H

#include "decodenum/vec.h"

typedef void (*dn_vec_binary_kernel)(const float *a, const float *b, float *y, size_t n);

typedef struct dn_vec_kernels {
    /* y = a + b, a - b, a * b */
    dn_vec_binary_kernel add, sub, mul;
    /* y = x * a */
    void (*scale)(const float *x, float a, float *y, size_t n);
    /* y = y + (a * x) */
    void (*axpy)(float a, const float *x, float *y, size_t n);
    /* y = silu(g) * u, sigmoid(g) * u */
    dn_vec_binary_kernel silu_mul, sigmoid_mul;
    /* y = gelu_tanh(g) * u, gelu(g) * u */
    dn_vec_binary_kernel gelu_tanh_mul, gelu_mul;
    /* r = r + x stored, and the lane sum of squares of the stored sums
       (dn_fdot(r, r, n) of the new r) returned */
    float (*add_sumsq)(float *r, const float *x, size_t n);
    /* y = (x * a) * w: the RMSNorm's output step */
    void (*scale_mul)(const float *x, float a, const float *w, float *y, size_t n);
} dn_vec_kernels;

/* The references. */
void dn_ref_vec_add(const float *a, const float *b, float *y, size_t n);
void dn_ref_vec_sub(const float *a, const float *b, float *y, size_t n);
void dn_ref_vec_mul(const float *a, const float *b, float *y, size_t n);
void dn_ref_vec_scale(const float *x, float a, float *y, size_t n);
void dn_ref_vec_axpy(float a, const float *x, float *y, size_t n);
void dn_ref_vec_silu_mul(const float *g, const float *u, float *y, size_t n);
void dn_ref_vec_sigmoid_mul(const float *g, const float *u, float *y, size_t n);
void dn_ref_vec_gelu_tanh_mul(const float *g, const float *u, float *y, size_t n);
void dn_ref_vec_gelu_mul(const float *g, const float *u, float *y, size_t n);
float dn_ref_vec_add_sumsq(float *r, const float *x, size_t n);
void dn_ref_vec_scale_mul(const float *x, float a, const float *w, float *y, size_t n);

/* The gates' kernels compute the gate function a piece at a time into a
   stack buffer of this many floats (with the math module's kernel of the
   same ISA), then multiply: the piece stays in L1. */
#define DN_VEC_GATE_PIECE 512

extern const dn_vec_kernels dn_vec_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_vec_kernels dn_vec_avx2;
/* y = f(g) * u by pieces of DN_VEC_GATE_PIECE: the gate function f of any
   x86 ISA's math table, the product on AVX2 (src/x86/vec_avx2.c). */
void dn_vec_gate_mul_avx2(void (*f)(const float *x, float *y, size_t n), const float *g,
                          const float *u, float *y, size_t n);
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_vec_kernels dn_vec_avx512;
#endif
#if defined(DN_HAVE_NEON)
extern const dn_vec_kernels dn_vec_neon;
#endif

#endif
