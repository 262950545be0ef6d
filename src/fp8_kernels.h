/* SPDX-License-Identifier: MIT */
/*
 * fp8_kernels.h: the FP8 E4M3 module's kernel table.
 *
 * One table per ISA, registered in src/dispatch.c. dn_fp8_scalar holds the
 * references (src/fp8.c), which define the bits (docs/numerics.md, "FP8
 * E4M3 products"); the AVX2, AVX-512 and NEON tables reproduce them exactly. An
 * entry an ISA leaves NULL runs the ISA below it. The entry points check
 * every argument first: kernels see consistent sizes and finite scales.
 */
#ifndef DN_FP8_KERNELS_H
#define DN_FP8_KERNELS_H

#include "decodenum/fp8.h"

/* A checked weight matrix: codes, sizes, scales (NULL: all 1). */
typedef struct dn_fp8_mat {
    const uint8_t *w;
    size_t rows, k;
    const float *scales; /* ceil(rows/128) x ceil(k/128), or NULL */
    float tensor_scale;
} dn_fp8_mat;

typedef struct dn_fp8_kernels {
    /* out[i] = the value of codes[i]; 1 when some code was a NaN code */
    int (*decode)(const uint8_t *codes, float *out, size_t n);
    /* out[r] = row r . x for r in [r0, r1); 1 when one of them met a NaN code */
    int (*mat_vec_rows)(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1, float *out);
    /* out[c*rows + r] = row r . column c, r in [r0, r1), c < n; the same flag */
    int (*mat_mul_rows)(const dn_fp8_mat *m, const float *act, size_t n, size_t r0, size_t r1,
                        float *out);
} dn_fp8_kernels;

int dn_ref_fp8_decode(const uint8_t *codes, float *out, size_t n);
int dn_ref_fp8_mat_vec_rows(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1, float *out);
int dn_ref_fp8_mat_mul_rows(const dn_fp8_mat *m, const float *act, size_t n, size_t r0, size_t r1,
                            float *out);

/* What the kernels share with the references. */
/* The exact value of a code (the NaN codes: 0x7FC00000). */
float dn_fp8_value(uint8_t code);
/* The block scale of row r, block j (1 when the matrix has none). */
static inline float dn_fp8_scale(const dn_fp8_mat *m, size_t r, size_t j)
{
    if (!m->scales) return 1.0f;
    size_t kb = m->k / DN_FP8_BLOCK + (m->k % DN_FP8_BLOCK != 0);
    return m->scales[(r / DN_FP8_BLOCK) * kb + j];
}
/* One row's output from its sum: sum * tensor scale, flushed, NaN made one. */
float dn_fp8_finish(float sum, float tensor_scale);
/* The reference's row r . x (any ISA's fall-back for a single row). */
float dn_ref_fp8_row(const dn_fp8_mat *m, size_t r, const float *x);
/* 1 when w[0..n) holds a NaN code. */
int dn_fp8_has_nan(const uint8_t *w, size_t n);

extern const dn_fp8_kernels dn_fp8_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_fp8_kernels dn_fp8_avx2;
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_fp8_kernels dn_fp8_avx512;
extern const dn_fp8_kernels dn_fp8_avx512vbmi; /* with AVX512_VBMI */
#endif
#if defined(DN_HAVE_NEON)
extern const dn_fp8_kernels dn_fp8_neon;
#endif

#endif
