/* SPDX-License-Identifier: MIT */
/*
 * The attention module on NEON: each kernel reproduces its reference in
 * src/attention.c bit for bit (docs/numerics.md 13.7). As every NEON kernel,
 * they run in the caller's default environment and flush explicitly where
 * the references do: every operand, product and sum (neon_common.h).
 *
 * - scores_neon: per position, per query head, fdot's 32 lanes as eight
 *   4-lane accumulators (lane l is lane l % 4 of acc[l / 4]), the key row
 *   widened in registers (FCVTL for binary16, a shift for bfloat16).
 * - weighted_neon: 32 lane accumulators per output element, a tile of 16
 *   elements and up to four heads per pass over the value rows; the tree
 *   over the lanes element by element.
 * - scores_int8_neon: chunk sums by SMLAL in int32, combined in binary64
 *   under the query's fast plan (exact), else the reference.
 * - weighted_int8_neon: the shared block step, then SMLAL by each position's
 *   code in int32 (|S| < 2^20), the pieces exact in binary64.
 */
#include "../attention_kernels.h"
#include "../bits.h"
#include "../fp32_kernels.h"
#include "decodenum/fp32.h"
#include "neon_common.h"

#include <string.h>

/* ---- widening cached elements ------------------------------------------------------- */

static inline float32x4_t load4(uint32_t type, const void *row, size_t i)
{
    if (type == DN_KV_F16)
        return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)row + i)));
    if (type == DN_KV_BF16)
        return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *)row + i), 16));
    return vld1q_f32((const float *)row + i);
}

/* The first `count` (< 4) elements from i, the rest +0. */
static inline float32x4_t load_part(uint32_t type, const void *row, size_t i, size_t count)
{
    if (type == DN_KV_F32) {
        float f[4] = {0};
        memcpy(f, (const float *)row + i, count * sizeof(float));
        return vld1q_f32(f);
    }
    uint16_t h[4] = {0};
    memcpy(h, (const uint16_t *)row + i, count * sizeof(uint16_t));
    return load4(type, h, 0);
}

/* fmul's product: operands and result flushed. */
static inline float32x4_t fmul4(float32x4_t a, float32x4_t b)
{
    return dn_neon_flush(vmulq_f32(dn_neon_flush(a), dn_neon_flush(b)));
}

static inline float32x4_t fadd4(float32x4_t a, float32x4_t b)
{
    return dn_neon_flush(vaddq_f32(a, b));
}

/* ---- scores --------------------------------------------------------------------------- */

static inline __attribute__((always_inline)) float dot_row(uint32_t type, const float *q,
                                                           const void *row, size_t d)
{
    float32x4_t acc[8];
    for (int j = 0; j < 8; j++) acc[j] = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 32 <= d; i += 32)
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            acc[j] = fadd4(acc[j], fmul4(vld1q_f32(q + i + 4 * j), load4(type, row, i + 4 * j)));
    for (int j = 0; j < 8 && i + 4 * (size_t)j < d; j++) {
        size_t at = i + 4 * (size_t)j, left = d - at;
        if (left >= 4) {
            acc[j] = fadd4(acc[j], fmul4(vld1q_f32(q + at), load4(type, row, at)));
            continue;
        }
        float qt[4] = {0};
        memcpy(qt, q + at, left * sizeof(float));
        float32x4_t t = fadd4(acc[j], fmul4(vld1q_f32(qt), load_part(type, row, at, left)));
        acc[j] = vbslq_f32(dn_neon_tail_mask(left), t, acc[j]);
    }
    return dn_result(dn_neon_tree32(acc));
}

static void scores_neon(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                        size_t stride, size_t n, float scale, float *s)
{
    size_t es = type == DN_KV_F32 ? 4 : 2;
    for (size_t j = 0; j < n; j++) {
        const void *row = (const char *)k + j * stride * es;
        for (size_t g = 0; g < heads; g++) {
            float r = type == DN_KV_F16    ? dot_row(DN_KV_F16, q + g * d, row, d)
                      : type == DN_KV_BF16 ? dot_row(DN_KV_BF16, q + g * d, row, d)
                                           : dot_row(DN_KV_F32, q + g * d, row, d);
            s[g * n + j] = dn_fmul(r, scale);
        }
    }
}

/* ---- the weighted sum ------------------------------------------------------------------ */

#define TILE 16
#define HEADS 4

static inline __attribute__((always_inline)) void lane_update(float *a, float32x4_t p,
                                                              const float32x4_t x[4])
{
    for (int c = 0; c < 4; c++) vst1q_f32(a + 4 * c, fadd4(vld1q_f32(a + 4 * c), fmul4(p, x[c])));
}

static inline __attribute__((always_inline)) void weigh_tile(uint32_t type, const float *p,
                                                             size_t hn, size_t n, const void *v,
                                                             size_t stride, size_t i0, size_t w,
                                                             float acc[HEADS][DN_LANES][TILE])
{
    size_t es = type == DN_KV_F32 ? 4 : 2;
    for (size_t j = 0; j < n; j++) {
        const char *row = (const char *)v + j * stride * es;
        float32x4_t x[4];
        for (size_t c = 0; c < 4; c++)
            x[c] = 4 * c + 4 <= w ? load4(type, row, i0 + 4 * c)
                   : 4 * c < w    ? load_part(type, row, i0 + 4 * c, w - 4 * c)
                                  : vdupq_n_f32(0.0f);
        size_t l = j % DN_LANES;
        for (size_t g = 0; g < hn; g++) lane_update(acc[g][l], vdupq_n_f32(p[g * n + j]), x);
    }
}

/* The tree over the 32 lanes of 4 elements at once, into out. */
static void fold4(float lanes[DN_LANES][TILE], size_t c, float *out, size_t count)
{
    float32x4_t l[DN_LANES];
    for (size_t i = 0; i < DN_LANES; i++) l[i] = vld1q_f32(lanes[i] + 4 * c);
    for (size_t width = DN_LANES; width > 1; width /= 2)
        for (size_t i = 0; i < width / 2; i++) l[i] = fadd4(l[2 * i], l[2 * i + 1]);
    float r[4];
    vst1q_f32(r, l[0]);
    for (size_t i = 0; i < count; i++) out[i] = dn_result(r[i]);
}

static void weighted_neon(uint32_t type, const float *p, size_t heads, size_t n, const void *v,
                          size_t stride, size_t d, float *out)
{
    float acc[HEADS][DN_LANES][TILE];
    for (size_t g0 = 0; g0 < heads; g0 += HEADS) {
        size_t hn = heads - g0 < HEADS ? heads - g0 : HEADS;
        for (size_t i0 = 0; i0 < d; i0 += TILE) {
            size_t w = d - i0 < TILE ? d - i0 : TILE;
            memset(acc, 0, sizeof acc);
            if (type == DN_KV_F16)
                weigh_tile(DN_KV_F16, p + g0 * n, hn, n, v, stride, i0, w, acc);
            else if (type == DN_KV_BF16)
                weigh_tile(DN_KV_BF16, p + g0 * n, hn, n, v, stride, i0, w, acc);
            else
                weigh_tile(DN_KV_F32, p + g0 * n, hn, n, v, stride, i0, w, acc);
            for (size_t g = 0; g < hn; g++)
                for (size_t c = 0; c * 4 < w; c++)
                    fold4(acc[g], c, out + (g0 + g) * d + i0 + 4 * c,
                          w - 4 * c < 4 ? w - 4 * c : 4);
        }
    }
}

/* ---- int8 scores ------------------------------------------------------------------------ */

static inline double int8_dot(const dn_attn_plan *plan, const int16_t *codes, const int8_t *key,
                              size_t d)
{
    float64x2_t t = vdupq_n_f64(0.0);
    size_t full = d / 32;
    for (size_t c = 0; c < plan->chunks; c++) {
        if (plan->f[c] == 0.0) continue;
        int8_t tmp[32] = {0};
        const int8_t *kc = key + 32 * c;
        if (c >= full) {
            memcpy(tmp, kc, d - 32 * c);
            kc = tmp;
        }
        /* |q * k| <= 32767 * 128: eight products per lane below 2^25 */
        int32x4_t s = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++) {
            int8x16_t k8 = vld1q_s8(kc + 16 * h);
            int16x8_t klo = vmovl_s8(vget_low_s8(k8)), khi = vmovl_s8(vget_high_s8(k8));
            int16x8_t q0 = vld1q_s16(codes + 32 * c + 16 * h),
                      q1 = vld1q_s16(codes + 32 * c + 16 * h + 8);
            s = vmlal_s16(s, vget_low_s16(q0), vget_low_s16(klo));
            s = vmlal_high_s16(s, q0, klo);
            s = vmlal_s16(s, vget_low_s16(q1), vget_low_s16(khi));
            s = vmlal_high_s16(s, q1, khi);
        }
        float64x2_t f = vdupq_n_f64(plan->f[c]);
        t = vaddq_f64(t, vmulq_f64(f, vcvtq_f64_s64(vmovl_s32(vget_low_s32(s)))));
        t = vaddq_f64(t, vmulq_f64(f, vcvtq_f64_s64(vmovl_high_s32(s))));
    }
    return vgetq_lane_f64(t, 0) + vgetq_lane_f64(t, 1);
}

static void scores_int8_neon(const dn_act_row *q, size_t heads, size_t d, const int8_t *k,
                             size_t stride, const uint16_t *ks, size_t scale_stride, size_t n,
                             float scale, float *s)
{
    dn_attn_plan plans[HEADS];
    for (size_t g0 = 0; g0 < heads; g0 += HEADS) {
        size_t hn = heads - g0 < HEADS ? heads - g0 : HEADS;
        for (size_t g = 0; g < hn; g++) dn_attn_plan_of(&q[g0 + g], d, &plans[g]);
        for (size_t j = 0; j < n; j++) {
            const int8_t *row = k + j * stride;
            for (size_t g = 0; g < hn; g++) {
                const dn_act_row *qg = &q[g0 + g];
                float r = plans[g].fast
                              ? dn_attn_round_score(int8_dot(&plans[g], qg->codes, row, d),
                                                    plans[g].emin, ks[j * scale_stride])
                              : dn_attn_int8_score1(qg, d, ks[j * scale_stride], row);
                s[(g0 + g) * n + j] = dn_fmul(r, scale);
            }
        }
    }
}

/* ---- the int8 weighted sum ------------------------------------------------------------- */

/* out[0..16) = fadd(out, the block's pieces) for elements i..i+16. */
static inline void block16(const int8_t *v, size_t stride, size_t m, const int16_t *c, int32_t e,
                           size_t i, float *out)
{
    int32x4_t s[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
    for (size_t j = 0; j < m; j++) {
        int8x16_t r = vld1q_s8(v + j * stride + i);
        int16x8_t lo = vmovl_s8(vget_low_s8(r)), hi = vmovl_high_s8(r);
        s[0] = vmlal_n_s16(s[0], vget_low_s16(lo), c[j]);
        s[1] = vmlal_high_n_s16(s[1], lo, c[j]);
        s[2] = vmlal_n_s16(s[2], vget_low_s16(hi), c[j]);
        s[3] = vmlal_high_n_s16(s[3], hi, c[j]);
    }
    uint64_t pb = (uint64_t)(1023 + e) << 52;
    double pw;
    memcpy(&pw, &pb, 8);
    for (int h = 0; h < 4; h++) {
        float64x2_t lo = vmulq_n_f64(vcvtq_f64_s64(vmovl_s32(vget_low_s32(s[h]))), pw);
        float64x2_t hi = vmulq_n_f64(vcvtq_f64_s64(vmovl_high_s32(s[h])), pw);
        float32x4_t piece = dn_neon_flush(vcvt_high_f32_f64(vcvt_f32_f64(lo), hi));
        vst1q_f32(out + 4 * h, fadd4(vld1q_f32(out + 4 * h), piece));
    }
}

static int weighted_int8_neon(const float *p, size_t heads, size_t n, const int8_t *v,
                              size_t stride, const uint16_t *vs, size_t scale_stride, size_t d,
                              float *out)
{
    int bad = 0;
    for (size_t g = 0; g < heads; g++) {
        float *o = out + g * d;
        memset(o, 0, d * sizeof(float));
        for (size_t j0 = 0; j0 < n; j0 += DN_VALUE_BLOCK) {
            size_t m = n - j0 < DN_VALUE_BLOCK ? n - j0 : DN_VALUE_BLOCK;
            int16_t c[DN_VALUE_BLOCK];
            int32_t e;
            if (dn_attn_value_block(p + g * n + j0, vs + j0 * scale_stride, scale_stride, m, c,
                                    &e)) {
                bad = 1;
                for (size_t i = 0; i < d; i++) o[i] = dn_fadd(o[i], dn_nan());
                continue;
            }
            const int8_t *vb = v + j0 * stride;
            size_t i = 0;
            /* the pieces are exact unless they leave binary32's normal range */
            if (e > -100 && e < 100)
                for (; i + 16 <= d; i += 16) block16(vb, stride, m, c, e, i, o + i);
            for (; i < d; i++) {
                int32_t sum = 0;
                for (size_t j = 0; j < m; j++) sum += c[j] * vb[j * stride + i];
                o[i] = dn_fadd(o[i], dn_attn_piece(sum, e));
            }
        }
        for (size_t i = 0; i < d; i++) o[i] = dn_result(o[i]);
    }
    return bad;
}

/* ---- the int8 cache's rows ----------------------------------------------------------- */

/* Four codes of dn_ref_int8_codes (the argument of attention_avx2.c's
   cache_codes8): the product, clamped to +-127, converted to the nearest
   integer, ties to even; a NaN product 0. */
static inline int32x4_t cache_codes4(float32x4_t x, float32x4_t inv)
{
    const float32x4_t p = vmulq_f32(x, inv);
    const float32x4_t c = vminq_f32(vmaxq_f32(p, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
    return vandq_s32(vcvtnq_s32_f32(c), vreinterpretq_s32_u32(vceqq_f32(p, p)));
}

/* dn_ref_cache_row as cache_row_avx2, 16 codes a step. */
static int cache_row_neon(const float *x, size_t n, uint16_t *scale, int8_t *codes)
{
    const float inv = dn_cache_row_scale(dn_fp32_neon.absmax(x, n), scale);
    const int zero = (dn_bits(inv) & 0x7FFFFFFFu) == DN_EXP_BITS;
    const float32x4_t vinv = vdupq_n_f32(zero ? 0.0f : inv);
    const uint32x4_t exp = vdupq_n_u32(0x7F800000u);
    uint32x4_t bad = vdupq_n_u32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int16x4_t h[4];
        for (int k = 0; k < 4; k++) {
            const float32x4_t v = vld1q_f32(x + i + 4 * k);
            bad = vorrq_u32(bad, vceqq_u32(vandq_u32(vreinterpretq_u32_f32(v), exp), exp));
            h[k] = vmovn_s32(cache_codes4(v, vinv));
        }
        vst1q_s8(codes + i, vcombine_s8(vmovn_s16(vcombine_s16(h[0], h[1])),
                                        vmovn_s16(vcombine_s16(h[2], h[3]))));
    }
    int any = vmaxvq_u32(bad) != 0;
    for (size_t j = i; j < n; j++) any |= (dn_bits(x[j]) & DN_EXP_BITS) == DN_EXP_BITS;
    if (i < n) dn_ref_int8_codes(x + i, n - i, inv, codes + i);
    return any;
}

const dn_attention_kernels dn_attention_neon = {
    .scores = scores_neon,
    .weighted = weighted_neon,
    .scores_int8 = scores_int8_neon,
    .weighted_int8 = weighted_int8_neon,
    .cache_row = cache_row_neon,
};
