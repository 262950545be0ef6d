/* SPDX-License-Identifier: MIT */
/*
 * The FP8 E4M3 module on AArch64 NEON: src/fp8.c's order in 4-lane
 * vectors. A block's 16 lanes are four registers (lanes 0-3, 4-7, 8-11,
 * 12-15); mat_vec runs four rows at once (sixteen FMLA chains, the
 * activation loaded once), as the AVX2 kernel does.
 *
 * The decode is bit arithmetic (docs/fp8.md): a code sign-extended to 32
 * bits and shifted left by 20 has its exponent field at bits 26..23 and its
 * fraction at 22..20, the sign at 31 (copies at 30..27); clearing the
 * copies leaves the code's value times 2^-120 (a denormal for exponent
 * field 0), and one multiply by 2^120 gives it exactly. FMLA rounds once,
 * as fmaf. Runs in the default FPCR (round to nearest, no flush): denormal
 * operands and results are IEEE's. A NaN code decodes to +-480 here;
 * mat_vec finds NaN codes with a byte maximum, the decoder selects them.
 */
#include "../fp8_kernels.h"
#include "../bits.h"
#include "decodenum/fp32.h"

#include <arm_neon.h>
#include <math.h>
#include <string.h>

#define DN_INLINE static inline __attribute__((always_inline))

/* Codes i..i+4 of the 16 in b (i = 0, 4, 8, 12) placed: value * 2^-120. */
DN_INLINE int32x4_t placed(int16x8_t h, int high)
{
    int32x4_t q = high ? vmovl_high_s16(h) : vmovl_s16(vget_low_s16(h));
    return vandq_s32(vshlq_n_s32(q, 20), vdupq_n_s32((int32_t)0x87FFFFFF));
}

DN_INLINE float32x4_t value4(int32x4_t t)
{
    return vmulq_f32(vreinterpretq_f32_s32(t), vdupq_n_f32(0x1p120f));
}

/* The 16 codes at p as four vectors of four values. */
DN_INLINE void dec16(const uint8_t *p, float32x4_t v[4])
{
    int8x16_t b = vreinterpretq_s8_u8(vld1q_u8(p));
    int16x8_t h0 = vmovl_s8(vget_low_s8(b)), h1 = vmovl_high_s8(b);
    v[0] = value4(placed(h0, 0));
    v[1] = value4(placed(h0, 1));
    v[2] = value4(placed(h1, 0));
    v[3] = value4(placed(h1, 1));
}

/* ---- decode ----------------------------------------------------------------- */

static int decode_neon(const uint8_t *codes, float *out, size_t n)
{
    const int32x4_t nan_placed = vdupq_n_s32(0x07F00000), abs = vdupq_n_s32(0x7FFFFFFF);
    const float32x4_t qnan = vreinterpretq_f32_u32(vdupq_n_u32(DN_NAN_BITS));
    uint32x4_t seen = vdupq_n_u32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int8x16_t b = vreinterpretq_s8_u8(vld1q_u8(codes + i));
        int16x8_t h[2] = {vmovl_s8(vget_low_s8(b)), vmovl_high_s8(b)};
        for (int q = 0; q < 4; q++) {
            int32x4_t t = placed(h[q / 2], q % 2);
            uint32x4_t is_nan = vceqq_s32(vandq_s32(t, abs), nan_placed);
            vst1q_f32(out + i + 4 * (size_t)q, vbslq_f32(is_nan, qnan, value4(t)));
            seen = vorrq_u32(seen, is_nan);
        }
    }
    int nan = vmaxvq_u32(seen) != 0;
    return dn_ref_fp8_decode(codes + i, out + i, n - i) | nan;
}

/* ---- the fold of one sum's lanes ------------------------------------------------ */

/* l[0..4): lanes 0-3, 4-7, 8-11, 12-15. Lane j += lane j+8, j+4, j+2, j+1. */
DN_INLINE float fold(const float32x4_t l[4])
{
    float32x4_t u = vaddq_f32(vaddq_f32(l[0], l[2]), vaddq_f32(l[1], l[3]));
    float32x2_t p = vadd_f32(vget_low_f32(u), vget_high_f32(u));
    return vpadds_f32(p);
}

/* ---- mat_vec: four rows, one 128-column block at a time ------------------------- */

/* The block sums of four rows over 128 columns into s[4]; *top collects
   each code's byte doubled (0xFE only for a NaN code) by maximum. */
static void block4(const uint8_t *const w[4], const float *x, uint8x16_t *top, float s[4])
{
    float32x4_t a[4][4];
    for (int r = 0; r < 4; r++)
        for (int q = 0; q < 4; q++) a[r][q] = vdupq_n_f32(0.0f);
    uint8x16_t mx = *top;
    for (size_t i = 0; i < DN_FP8_BLOCK; i += 16) {
        float32x4_t xv[4] = {vld1q_f32(x + i), vld1q_f32(x + i + 4), vld1q_f32(x + i + 8),
                             vld1q_f32(x + i + 12)};
        for (int r = 0; r < 4; r++) {
            uint8x16_t raw = vld1q_u8(w[r] + i);
            mx = vmaxq_u8(mx, vaddq_u8(raw, raw));
            float32x4_t v[4];
            dec16(w[r] + i, v);
            for (int q = 0; q < 4; q++) a[r][q] = vfmaq_f32(a[r][q], v[q], xv[q]);
        }
    }
    *top = mx;
    for (int r = 0; r < 4; r++) s[r] = fold(a[r]);
}

/* A partial last block: codes and activations copied, zeros after them
   (fma(+0, +0, lane) = lane: a lane is never -0). */
static void partial4(const uint8_t *const w[4], const float *x, size_t len, uint8x16_t *top,
                     float s[4])
{
    uint8_t wp[4][DN_FP8_BLOCK];
    float xp[DN_FP8_BLOCK];
    const uint8_t *p[4];
    memset(xp, 0, sizeof xp);
    memcpy(xp, x, len * sizeof *x);
    for (int r = 0; r < 4; r++) {
        memset(wp[r], 0, DN_FP8_BLOCK);
        memcpy(wp[r], w[r], len);
        p[r] = wp[r];
    }
    block4(p, xp, top, s);
}

/* Rows r[0..4) (repeats allowed): their sums before the tensor scale;
   1 when one of them may hold a NaN code. */
static int rows4(const dn_fp8_mat *m, const float *x, const size_t r[4], float sum[4])
{
    const size_t k = m->k;
    uint8x16_t top = vdupq_n_u8(0);
    for (int i = 0; i < 4; i++) sum[i] = 0.0f;
    for (size_t j = 0, col = 0; col < k; j++, col += DN_FP8_BLOCK) {
        const uint8_t *wb[4];
        for (int i = 0; i < 4; i++) wb[i] = m->w + r[i] * k + col;
        float s[4];
        if (col + DN_FP8_BLOCK <= k)
            block4(wb, x + col, &top, s);
        else
            partial4(wb, x + col, k - col, &top, s);
        for (int i = 0; i < 4; i++) sum[i] = fmaf(s[i], dn_fp8_scale(m, r[i], j), sum[i]);
    }
    return vmaxvq_u8(top) == 0xFE;
}

static int mat_vec_rows_neon(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1, float *out)
{
    int nan = 0;
    for (size_t r = r0; r < r1; r += 4) {
        size_t rr[4];
        float sum[4];
        for (int i = 0; i < 4; i++) rr[i] = r + (size_t)i < r1 ? r + (size_t)i : r1 - 1;
        int maybe = rows4(m, x, rr, sum);
        for (int i = 0; i < 4 && r + (size_t)i < r1; i++) {
            out[r + (size_t)i] = dn_fp8_finish(sum[i], m->tensor_scale);
            if (maybe && dn_fp8_has_nan(m->w + rr[i] * m->k, m->k)) {
                out[r + (size_t)i] = dn_from_bits(DN_NAN_BITS);
                nan = 1;
            }
        }
    }
    return nan;
}

/* ---- mat_mul: a row's block decoded once, then each column ---------------------- */

/* The block sum of decoded weights wf[0..128) against one column. */
static float col1(const float *wf, const float *x)
{
    float32x4_t l[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    for (size_t i = 0; i < DN_FP8_BLOCK; i += 16)
        for (int q = 0; q < 4; q++)
            l[q] = vfmaq_f32(l[q], vld1q_f32(wf + i + 4 * q), vld1q_f32(x + i + 4 * q));
    return fold(l);
}

static int mat_mul_rows_neon(const dn_fp8_mat *m, const float *act, size_t n, size_t r0, size_t r1,
                             float *out)
{
    int nan = 0;
    float wf[DN_FP8_BLOCK], xp[DN_FP8_BLOCK];
    for (size_t r = r0; r < r1; r++) {
        const uint8_t *w = m->w + r * m->k;
        for (size_t c = 0; c < n; c++) out[c * m->rows + r] = 0.0f;
        for (size_t j = 0, col = 0; col < m->k; j++, col += DN_FP8_BLOCK) {
            size_t len = m->k - col < DN_FP8_BLOCK ? m->k - col : DN_FP8_BLOCK;
            nan |= decode_neon(w + col, wf, len);
            if (len < DN_FP8_BLOCK) {
                memset(wf + len, 0, (DN_FP8_BLOCK - len) * sizeof *wf);
                memset(xp, 0, sizeof xp);
            }
            float scale = dn_fp8_scale(m, r, j);
            for (size_t c = 0; c < n; c++) {
                const float *x = act + c * m->k + col;
                if (len < DN_FP8_BLOCK) x = memcpy(xp, x, len * sizeof *x);
                float *y = &out[c * m->rows + r];
                *y = fmaf(col1(wf, x), scale, *y);
            }
        }
        for (size_t c = 0; c < n; c++)
            out[c * m->rows + r] = dn_fp8_finish(out[c * m->rows + r], m->tensor_scale);
    }
    return nan;
}

const dn_fp8_kernels dn_fp8_neon = {
    .decode = decode_neon,
    .mat_vec_rows = mat_vec_rows_neon,
    .mat_mul_rows = mat_mul_rows_neon,
};
