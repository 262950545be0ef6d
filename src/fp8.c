/* SPDX-License-Identifier: MIT */
/*
 * The FP8 E4M3 module's references: the definitions of docs/numerics.md
 * ("FP8 E4M3 products") in the order the kernels run them: decode, the 16
 * lanes of a 128-column block, their fold, the block scale, the tensor
 * scale.
 *
 * Each step is one IEEE binary32 operation in the default environment
 * (gradual underflow, nearest even); fmaf is the C library's fused
 * multiply-add, which C11 (7.12.13.1) requires to round once. A weight
 * times an activation is a 4-bit by 24-bit significand product, exact
 * inside the fused operation, so the only roundings are the additions.
 */
#include "fp8_kernels.h"
#include "bits.h"
#include "decodenum/fp32.h"

#include <math.h>

/* E4M3: s eeee mmm, bias 7. e = 0: m * 2^-9 (the subnormals and zero);
   e > 0: (8 + m) * 2^(e - 10), which is the f32 with exponent field
   e + 120 and fraction m << 20; S.1111.111 is NaN. */
float dn_fp8_value(uint8_t code)
{
    uint32_t sign = (uint32_t)(code & 0x80u) << 24;
    uint32_t e = (code >> 3) & 15u, m = code & 7u;
    if (e == 15 && m == 7) return dn_from_bits(DN_NAN_BITS);
    if (e == 0) return dn_from_bits(sign | dn_bits((float)m * 0x1p-9f)); /* exact */
    return dn_from_bits(sign | ((e + 120u) << 23) | (m << 20));
}

int dn_fp8_has_nan(const uint8_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((w[i] & 0x7Fu) == DN_FP8_NAN_CODE) return 1;
    return 0;
}

int dn_ref_fp8_decode(const uint8_t *codes, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = dn_fp8_value(codes[i]);
    return dn_fp8_has_nan(codes, n);
}

/* One block of len <= 128 columns: lane l takes elements l, l + 16, ...
   with one fused multiply-add each, from +0; then lane j += lane j + h for
   h = 8, 4, 2, 1. */
static float block_sum(const uint8_t *w, const float *x, size_t len)
{
    float lane[DN_FP8_LANES] = {0};
    for (size_t i = 0; i < len; i++)
        lane[i % DN_FP8_LANES] = fmaf(dn_fp8_value(w[i]), x[i], lane[i % DN_FP8_LANES]);
    for (size_t h = DN_FP8_LANES / 2; h >= 1; h /= 2)
        for (size_t j = 0; j < h; j++) lane[j] = lane[j] + lane[j + h];
    return lane[0];
}

float dn_fp8_finish(float sum, float tensor_scale) { return dn_result(sum * tensor_scale); }

/* The row's sum: from +0, sum = fma(block sum, block scale, sum) over the
   blocks in order; then the tensor scale. */
float dn_ref_fp8_row(const dn_fp8_mat *m, size_t r, const float *x)
{
    const uint8_t *w = m->w + r * m->k;
    float sum = 0.0f;
    for (size_t j = 0, c = 0; c < m->k; j++, c += DN_FP8_BLOCK) {
        size_t len = m->k - c < DN_FP8_BLOCK ? m->k - c : DN_FP8_BLOCK;
        sum = fmaf(block_sum(w + c, x + c, len), dn_fp8_scale(m, r, j), sum);
    }
    return dn_fp8_finish(sum, m->tensor_scale);
}

int dn_ref_fp8_mat_vec_rows(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1, float *out)
{
    int nan = 0;
    for (size_t r = r0; r < r1; r++) {
        out[r] = dn_ref_fp8_row(m, r, x);
        nan |= dn_fp8_has_nan(m->w + r * m->k, m->k);
    }
    return nan;
}

int dn_ref_fp8_mat_mul_rows(const dn_fp8_mat *m, const float *act, size_t n, size_t r0, size_t r1,
                            float *out)
{
    int nan = 0;
    for (size_t c = 0; c < n; c++)
        nan |= dn_ref_fp8_mat_vec_rows(m, act + c * m->k, r0, r1, out + c * m->rows);
    return nan;
}

const dn_fp8_kernels dn_fp8_scalar = {
    .decode = dn_ref_fp8_decode,
    .mat_vec_rows = dn_ref_fp8_mat_vec_rows,
    .mat_mul_rows = dn_ref_fp8_mat_mul_rows,
};
