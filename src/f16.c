/* SPDX-License-Identifier: MIT */
/*
 * The ggml-compatible F16 and BF16 products' references: ggml's x86
 * (AVX2 + FMA + F16C) arithmetic for F16 and BF16 weights, written out as
 * scalar C.
 *
 * A product of two binary16 values is exact in binary32 (11-bit
 * significands, exponents within 2^-48 .. 2^32), so a fused multiply-add
 * fmaf(w, x, acc) and a rounded add of the exact product agree; only the
 * order of the additions decides the bits. The orders below are ggml's.
 *
 * A product of two bfloat16 values has 16 significant bits but f32's
 * exponent range: it can fall below 2^-126 (where f32 keeps fewer bits) or
 * past the top, so there the separate multiply and add of ggml_vec_dot_bf16
 * and the fused chain of tinyBLAS round differently, and each reference
 * does what its ggml code does.
 */
#include "f16_kernels.h"
#include "decodenum/fp32.h"
#include "bits.h"

#include <math.h>

/* F16C's vcvtps2ph with imm 0: nearest even; a NaN keeps its sign and the
   top 9 payload bits and gets the quiet bit. Finite values and infinities
   round as the engine's dn_f32_to_f16, without its FTZ (an f32 denormal
   rounds to a binary16 zero either way). */
uint16_t dn_f16_narrow1(float x)
{
    uint32_t u = dn_bits(x);
    if (dn_is_nan_bits(u))
        return (uint16_t)(((u >> 16) & 0x8000u) | 0x7E00u | ((u >> 13) & 0x1FFu));
    return dn_f32_to_f16(x);
}

/* F16C's vcvtph2ps: exact; a NaN keeps sign and payload and is made quiet. */
float dn_f16_widen1(uint16_t h)
{
    if ((h & 0x7C00u) == 0x7C00u && (h & 0x3FFu))
        return dn_from_bits(((uint32_t)(h & 0x8000u) << 16) | 0x7FC00000u |
                            ((uint32_t)(h & 0x1FFu) << 13));
    return dn_f16_to_f32(h);
}

static uint16_t f16_result(float r) { return r != r ? DN_F16_NAN_F16_BITS : dn_f16_narrow1(r); }

void dn_ref_f16_from_f32(const float *x, uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++) h[i] = dn_f16_narrow1(x[i]);
}

void dn_ref_f16_widen(const uint16_t *h, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = dn_f16_widen1(h[i]);
}

void dn_ref_f16_round_f32(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_f16_widen1(dn_f16_narrow1(x[i]));
}

/* ggml_vec_dot_f16: element e of each 32-element step feeds accumulator
   e / 8 % 4, lane e % 8; the accumulators fold (a0 + a2) + (a1 + a3); the
   high four lanes are added to the low four, then adjacent pairs, then the
   two pairs. The remaining k % 32 products are added in double. */
float dn_ref_f16_vec_dot(const uint16_t *w, const float *x, size_t k)
{
    float acc[4][8] = {{0}};
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32)
        for (int j = 0; j < 4; j++)
            for (int p = 0; p < 8; p++) {
                size_t e = b + 8 * (size_t)j + (size_t)p;
                acc[j][p] = fmaf(dn_f16_widen1(w[e]), x[e], acc[j][p]);
            }
    float lane[8], half[4];
    for (int p = 0; p < 8; p++) lane[p] = (acc[0][p] + acc[2][p]) + (acc[1][p] + acc[3][p]);
    for (int q = 0; q < 4; q++) half[q] = lane[q] + lane[q + 4];
    float r = (half[0] + half[1]) + (half[2] + half[3]);

    double sum = r;
    for (size_t i = whole; i < k; i++) sum += (double)(dn_f16_widen1(w[i]) * x[i]);
    return dn_f16_result((float)sum);
}

/* One tinyBLAS element of 16-bit weights widened by `widen` (binary16 or
   bfloat16: the chain is the same): lane p takes elements p, p + 8, ... in
   order; the high half is added to the low half, then (v0 + v2) + (v1 + v3). */
static inline float sgemm_dot(const uint16_t *w, const float *x, size_t k, float (*widen)(uint16_t))
{
    float lane[8] = {0};
    for (size_t l = 0; l < k; l += 8)
        for (int p = 0; p < 8; p++) lane[p] = fmaf(widen(w[l + p]), x[l + p], lane[p]);
    float v[4];
    for (int q = 0; q < 4; q++) v[q] = lane[q + 4] + lane[q];
    return dn_f16_result((v[0] + v[2]) + (v[1] + v[3]));
}

float dn_ref_f16_sgemm_dot(const uint16_t *w, const float *x, size_t k)
{
    return sgemm_dot(w, x, k, dn_f16_widen1);
}

void dn_ref_f16_mad(uint16_t *acc, const uint16_t *v, float s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc[i] = f16_result(fmaf(dn_f16_widen1(v[i]), s, dn_f16_widen1(acc[i])));
}

void dn_ref_f16_scale(uint16_t *acc, float s, size_t n)
{
    for (size_t i = 0; i < n; i++) acc[i] = f16_result(dn_f16_widen1(acc[i]) * s);
}

void dn_ref_f16_mat_vec_rows(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                             size_t r0, size_t r1, float *out)
{
    (void)xh; /* the patterns of x: the reference reads x */
    for (size_t r = r0; r < r1; r++) out[r] = dn_ref_f16_vec_dot(w + r * k, x, k);
}

/* Each output vec_dot's, however many columns come with it: a prompt's
   positions get the bits a decode step gives one. */
void dn_ref_f16_vec_dot_cols(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                             size_t r0, size_t r1, float *out)
{
    for (size_t c = 0; c < n; c++)
        for (size_t r = r0; r < r1; r++)
            out[c * rows + r] = dn_ref_f16_vec_dot(w + r * k, act + c * k, k);
}

void dn_ref_f16_sgemm_rows(const uint16_t *w, size_t rows, size_t k, const float *act,
                           const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    (void)packed;
    for (size_t c = 0; c < n; c++)
        for (size_t r = r0; r < r1; r++)
            out[c * rows + r] = dn_ref_f16_sgemm_dot(w + r * k, act + c * k, k);
}

size_t dn_ref_w16_pack_bytes(size_t k, size_t n)
{
    (void)k;
    (void)n;
    return 0;
}

void dn_ref_w16_pack(const float *act, size_t k, size_t n, size_t c0, size_t c1, void *packed)
{
    (void)act;
    (void)k;
    (void)n;
    (void)c0;
    (void)c1;
    (void)packed;
}

/* ---- BF16 ------------------------------------------------------------------ */

/* ggml_compute_fp32_to_bf16: nearest even by adding 0x7FFF plus the kept
   lowest bit to the pattern (a carry runs into the exponent, up to
   infinity; f32 denormals round to bfloat16 subnormals); a NaN keeps its
   sign and top 7 payload bits and gets the quiet bit 0x0040. */
uint16_t dn_bf16_narrow1(float x)
{
    uint32_t u = dn_bits(x);
    if (dn_is_nan_bits(u)) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* ggml's widening: the pattern shifted up, every bit kept. */
float dn_bf16_widen1(uint16_t h) { return dn_from_bits((uint32_t)h << 16); }

void dn_ref_bf16_from_f32(const float *x, uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++) h[i] = dn_bf16_narrow1(x[i]);
}

void dn_ref_bf16_widen(const uint16_t *h, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = dn_bf16_widen1(h[i]);
}

void dn_ref_bf16_round_f32(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_bf16_widen1(dn_bf16_narrow1(x[i]));
}

/* ggml_vec_dot_bf16 (AVX2): element e of each 32-element step feeds
   accumulator e / 8 % 4, lane e % 8, as acc + (w * x) with the product
   rounded to f32 first; the accumulators fold (a0 + a2) + (a1 + a3); the
   high four lanes are added to the low four, then (t0 + t2) + (t1 + t3).
   The remaining k % 32 products, each rounded to f32, are added in double. */
float dn_ref_bf16_vec_dot(const uint16_t *w, const float *x, size_t k)
{
    float acc[4][8] = {{0}};
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32)
        for (int j = 0; j < 4; j++)
            for (int p = 0; p < 8; p++) {
                size_t e = b + 8 * (size_t)j + (size_t)p;
                float prod = dn_bf16_widen1(w[e]) * x[e];
                acc[j][p] = prod + acc[j][p];
            }
    float lane[8], t[4];
    for (int p = 0; p < 8; p++) lane[p] = (acc[0][p] + acc[2][p]) + (acc[1][p] + acc[3][p]);
    for (int q = 0; q < 4; q++) t[q] = lane[q + 4] + lane[q];
    float r = (t[0] + t[2]) + (t[1] + t[3]);

    double sum = r;
    for (size_t i = whole; i < k; i++) sum += (double)(dn_bf16_widen1(w[i]) * x[i]);
    return dn_f16_result((float)sum);
}

float dn_ref_bf16_sgemm_dot(const uint16_t *w, const float *x, size_t k)
{
    return sgemm_dot(w, x, k, dn_bf16_widen1);
}

void dn_ref_bf16_mat_vec_rows(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                              size_t r0, size_t r1, float *out)
{
    (void)xh; /* the patterns of x: the reference reads x */
    for (size_t r = r0; r < r1; r++) out[r] = dn_ref_bf16_vec_dot(w + r * k, x, k);
}

void dn_ref_bf16_vec_dot_cols(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                              size_t r0, size_t r1, float *out)
{
    for (size_t c = 0; c < n; c++)
        for (size_t r = r0; r < r1; r++)
            out[c * rows + r] = dn_ref_bf16_vec_dot(w + r * k, act + c * k, k);
}

void dn_ref_bf16_sgemm_rows(const uint16_t *w, size_t rows, size_t k, const float *act,
                            const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    (void)packed;
    for (size_t c = 0; c < n; c++)
        for (size_t r = r0; r < r1; r++)
            out[c * rows + r] = dn_ref_bf16_sgemm_dot(w + r * k, act + c * k, k);
}

const dn_f16_kernels dn_f16_scalar = {
    .fp16 =
        {
            .from_f32 = dn_ref_f16_from_f32,
            .widen = dn_ref_f16_widen,
            .round_f32 = dn_ref_f16_round_f32,
            .vec_dot = dn_ref_f16_vec_dot,
            .sgemm_dot = dn_ref_f16_sgemm_dot,
            .mat_vec_rows = dn_ref_f16_mat_vec_rows,
            .vec_dot_cols = dn_ref_f16_vec_dot_cols,
            .pack_bytes = dn_ref_w16_pack_bytes,
            .pack = dn_ref_w16_pack,
            .sgemm_rows = dn_ref_f16_sgemm_rows,
        },
    .bf16 =
        {
            .from_f32 = dn_ref_bf16_from_f32,
            .widen = dn_ref_bf16_widen,
            .round_f32 = dn_ref_bf16_round_f32,
            .vec_dot = dn_ref_bf16_vec_dot,
            .sgemm_dot = dn_ref_bf16_sgemm_dot,
            .mat_vec_rows = dn_ref_bf16_mat_vec_rows,
            .vec_dot_cols = dn_ref_bf16_vec_dot_cols,
            .pack_bytes = dn_ref_w16_pack_bytes,
            .pack = dn_ref_w16_pack,
            .sgemm_rows = dn_ref_bf16_sgemm_rows,
        },
    .mad = dn_ref_f16_mad,
    .scale = dn_ref_f16_scale,
};
