/* SPDX-License-Identifier: MIT */
/*
 * f16_kernels.h: the kernel table of the ggml-compatible 16-bit weight
 * products (F16 and BF16).
 *
 * One product framework, two element types: a dn_w16_kernels holds one
 * type's conversions and product kernels, and the entry points
 * (src/f16_api.c) run either type through the same checks, pool split and
 * working memory. The types differ only inside the kernels: how a weight
 * widens to f32, how an activation rounds, and ggml_vec_dot's step (F16:
 * fused multiply-add; BF16: multiply, then add) and final pairing.
 *
 * One table per ISA, registered in src/dispatch.c. dn_f16_scalar holds the
 * references (src/f16.c): ggml's x86 orders written out in C. The AVX2 and
 * NEON tables reproduce them bit for bit; an entry an ISA leaves NULL runs
 * the ISA below it. Activations reach the dot kernels already rounded to
 * the weight type and widened to f32 (exact), so a product widens them
 * once, not once per row; mat_vec_rows also receives the same activation
 * as 16-bit patterns, made once per product, for kernels that stream it at
 * two bytes an element.
 */
#ifndef DN_F16_KERNELS_H
#define DN_F16_KERNELS_H

#include "decodenum/bf16.h"
#include "decodenum/f16.h"

#include <stdint.h>
#include <string.h>

/* One 16-bit weight type's kernels. */
typedef struct dn_w16_kernels {
    /* h[i] = x[i] rounded to the type as ggml rounds an activation */
    void (*from_f32)(const float *x, uint16_t *h, size_t n);
    /* x[i] = the value of h[i], exactly */
    void (*widen)(const uint16_t *h, float *x, size_t n);
    /* y[i] = widen(from_f32(x[i])): an activation as ggml multiplies it */
    void (*round_f32)(const float *x, float *y, size_t n);
    float (*vec_dot)(const uint16_t *w, const float *x, size_t k);
    float (*sgemm_dot)(const uint16_t *w, const float *x, size_t k); /* k % 8 == 0 */
    /* out[r] = vec_dot(w + r*k, x, k) for r in [r0, r1); xh: x as the
       type's patterns (widen(xh) == x, bit for bit), read by kernels that
       stream the activation at two bytes an element */
    void (*mat_vec_rows)(const uint16_t *w, size_t k, const float *x, const uint16_t *xh, size_t r0,
                         size_t r1, float *out);
    /* out[c*rows + r] = vec_dot(w + r*k, act + c*k, k), r in [r0, r1), c < n:
       several columns on vec_dot's path, each output what mat_vec_rows
       gives its column alone (a weight read once for several columns) */
    void (*vec_dot_cols)(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                         size_t r0, size_t r1, float *out);
    /* The columns act[0, n*k) in a form of the table's own that sgemm_rows
       reads beside them, made once per product and shared by its tasks:
       pack_bytes(k, n) bytes (0: the table has no such form, the
       reference's choice, or the size overflows) written by pack, which
       writes the part of columns [c0, c1) of the n (c0 a multiple of 8, c1
       one or n), reading only those columns of act: packing each group of
       eight apart, in any order or at once, makes the whole form. A table
       that sets sgemm_rows sets these two beside it (the reference's when
       it reads no packed form), so the raw table is whole for its checks. */
    size_t (*pack_bytes)(size_t k, size_t n);
    void (*pack)(const float *act, size_t k, size_t n, size_t c0, size_t c1, void *packed);
    /* out[c*rows + r] = sgemm_dot(w + r*k, act + c*k, k), r in [r0, r1), c < n;
       packed: pack's bytes of all n columns, or NULL (the same bits without them) */
    void (*sgemm_rows)(const uint16_t *w, size_t rows, size_t k, const float *act,
                       const void *packed, size_t n, size_t r0, size_t r1, float *out);
} dn_w16_kernels;

typedef struct dn_f16_kernels {
    dn_w16_kernels fp16; /* binary16 weights (decodenum/f16.h) */
    dn_w16_kernels bf16; /* bfloat16 weights (decodenum/bf16.h) */
    void (*mad)(uint16_t *acc, const uint16_t *v, float s, size_t n);
    void (*scale)(uint16_t *acc, float s, size_t n);
} dn_f16_kernels;

void dn_ref_f16_from_f32(const float *x, uint16_t *h, size_t n);
void dn_ref_f16_widen(const uint16_t *h, float *x, size_t n);
void dn_ref_f16_round_f32(const float *x, float *y, size_t n);
float dn_ref_f16_vec_dot(const uint16_t *w, const float *x, size_t k);
float dn_ref_f16_sgemm_dot(const uint16_t *w, const float *x, size_t k);
void dn_ref_f16_mat_vec_rows(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                             size_t r0, size_t r1, float *out);
void dn_ref_f16_vec_dot_cols(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                             size_t r0, size_t r1, float *out);
void dn_ref_f16_sgemm_rows(const uint16_t *w, size_t rows, size_t k, const float *act,
                           const void *packed, size_t n, size_t r0, size_t r1, float *out);
/* The reference reads the columns as they are: no packed form. */
size_t dn_ref_w16_pack_bytes(size_t k, size_t n);
void dn_ref_w16_pack(const float *act, size_t k, size_t n, size_t c0, size_t c1, void *packed);
void dn_ref_f16_mad(uint16_t *acc, const uint16_t *v, float s, size_t n);
void dn_ref_f16_scale(uint16_t *acc, float s, size_t n);

void dn_ref_bf16_from_f32(const float *x, uint16_t *h, size_t n);
void dn_ref_bf16_widen(const uint16_t *h, float *x, size_t n);
void dn_ref_bf16_round_f32(const float *x, float *y, size_t n);
float dn_ref_bf16_vec_dot(const uint16_t *w, const float *x, size_t k);
float dn_ref_bf16_sgemm_dot(const uint16_t *w, const float *x, size_t k);
void dn_ref_bf16_mat_vec_rows(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                              size_t r0, size_t r1, float *out);
void dn_ref_bf16_vec_dot_cols(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                              size_t r0, size_t r1, float *out);
void dn_ref_bf16_sgemm_rows(const uint16_t *w, size_t rows, size_t k, const float *act,
                            const void *packed, size_t n, size_t r0, size_t r1, float *out);

/* The scalar forms the kernels' tails use. */
uint16_t dn_f16_narrow1(float x);
float dn_f16_widen1(uint16_t h);
uint16_t dn_bf16_narrow1(float x);
float dn_bf16_widen1(uint16_t h);
/* A NaN result becomes DN_F16_NAN_RESULT_BITS. Inline: the tinyBLAS
   tiles finish every output with it, and a call there made the compiler
   keep the tile's 24 chains on the stack around it (4096 x 4096, n = 64:
   about 0.5 ms of a 10.5 ms product did not depend on k). */
static inline float dn_f16_result(float r)
{
    if (r == r) return r;
    uint32_t u = DN_F16_NAN_RESULT_BITS;
    float nan;
    memcpy(&nan, &u, sizeof nan);
    return nan;
}

extern const dn_f16_kernels dn_f16_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_f16_kernels dn_f16_avx2;
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_f16_kernels dn_f16_avx512;
/* dn_f16_avx512 with BF16's tinyBLAS rows by AVX512_BF16's vdpbf16ps: only
   where the CPU has AVX512_BF16 and dn_f16_avx512bf16_exact() holds. */
extern const dn_f16_kernels dn_f16_avx512bf16;
int dn_f16_avx512bf16_exact(void);
#endif
#if defined(DN_HAVE_NEON)
extern const dn_f16_kernels dn_f16_neon;
#endif

#endif
