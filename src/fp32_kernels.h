/* SPDX-License-Identifier: MIT */
/*
 * fp32_kernels.h: the fp32 core's kernel table.
 *
 * One table per ISA, registered in src/dispatch.c. dn_fp32_scalar holds the
 * references (src/fp32.c, the definitions); dn_fp32_avx2 and dn_fp32_neon
 * hold kernels that reproduce them bit for bit. An entry an ISA leaves NULL
 * runs the ISA below it; in a resolved table (dn_kernels_for) no entry is
 * NULL. Length 0 is valid for every entry.
 */
#ifndef DN_FP32_KERNELS_H
#define DN_FP32_KERNELS_H

#include "decodenum/fp32.h"

typedef struct dn_fp32_kernels {
    void (*ftz_v)(const float *x, float *y, size_t n);
    void (*f32_to_f16_v)(const float *x, uint16_t *y, size_t n);
    void (*f16_to_f32_v)(const uint16_t *x, float *y, size_t n);
    void (*f32_to_bf16_v)(const float *x, uint16_t *y, size_t n);
    void (*bf16_to_f32_v)(const uint16_t *x, float *y, size_t n);
    float (*fsum)(const float *x, size_t n);
    float (*fdot)(const float *a, const float *b, size_t n);
    float (*fdot_tf32)(const float *a, const float *b, size_t n);
    float (*fmax)(const float *x, size_t n);
    float (*absmax)(const float *x, size_t n);
    size_t (*argmax)(const float *x, size_t n);
} dn_fp32_kernels;

/* The references. */
void dn_ref_ftz_v(const float *x, float *y, size_t n);
void dn_ref_f32_to_f16_v(const float *x, uint16_t *y, size_t n);
void dn_ref_f16_to_f32_v(const uint16_t *x, float *y, size_t n);
void dn_ref_f32_to_bf16_v(const float *x, uint16_t *y, size_t n);
void dn_ref_bf16_to_f32_v(const uint16_t *x, float *y, size_t n);
float dn_ref_fsum(const float *x, size_t n);
float dn_ref_fdot(const float *a, const float *b, size_t n);
float dn_ref_fdot_tf32(const float *a, const float *b, size_t n);
float dn_ref_fmax(const float *x, size_t n);
float dn_ref_absmax(const float *x, size_t n);
size_t dn_ref_argmax(const float *x, size_t n);

/* The first index of the largest value among x[0..n), n <= 2^30, or SIZE_MAX
   when no element exceeds -inf; *best gets that value. A SIMD kernel's
   lanes keep 32-bit indices, so they see an array a chunk at a time. */
typedef size_t (*dn_argmax_chunk_fn)(const float *x, size_t n, float *best);
/* dn_ref_argmax's result from a chunk kernel: chunks of 2^30 elements,
   a later chunk taken only when strictly larger, and the reference itself
   when nothing exceeds -inf (then the first number is the answer). */
size_t dn_argmax_by_chunks(const float *x, size_t n, dn_argmax_chunk_fn chunk);

extern const dn_fp32_kernels dn_fp32_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_fp32_kernels dn_fp32_avx2;
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_fp32_kernels dn_fp32_avx512;
#endif
#if defined(DN_HAVE_NEON)
extern const dn_fp32_kernels dn_fp32_neon;
#endif

#endif
