/* SPDX-License-Identifier: MIT */
/*
 * Activation quantization on AArch64 NEON: bit for bit the reference of
 * src/quant.c (dn_ref_quantize), as src/x86/quant_avx2.c computes it, two
 * codes per double vector.
 */
#include "../quant_kernels.h"
#include "../bits.h"

#include <arm_neon.h>
#include <math.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

static size_t first_non_finite(const float *x, size_t n)
{
    const uint32x4_t exp = vdupq_n_u32(0x7F800000u);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32x4_t u = vreinterpretq_u32_f32(vld1q_f32(x + i));
        if (vmaxvq_u32(vceqq_u32(vandq_u32(u, exp), exp))) break;
    }
    for (; i < n; i++)
        if ((dn_bits(x[i]) & DN_EXP_BITS) == DN_EXP_BITS) return i;
    return n;
}

/* Two codes, exactly rne_div (the argument of quant_avx2.c's codes4). */
AI int32x2_t codes2(float32x2_t x, float64x2_t md, float64x2_t rcp)
{
    float64x2_t xd = vcvt_f64_f32(x);
    float64x2_t q0 = vrndnq_f64(vmulq_f64(xd, rcp));
    float64x2_t r = vsubq_f64(xd, vmulq_f64(q0, md));
    float64x2_t t = vabsq_f64(vaddq_f64(r, r));
    float64x2_t h = vmulq_f64(q0, vdupq_n_f64(0.5));
    uint64x2_t odd =
        vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(vceqq_f64(vrndq_f64(h), h))));
    uint64x2_t adj = vorrq_u64(vcgtq_f64(t, md), vandq_u64(vceqq_f64(t, md), odd));
    float64x2_t step = vbslq_f64(vcltzq_f64(r), vdupq_n_f64(-1.0), vdupq_n_f64(1.0));
    float64x2_t q =
        vaddq_f64(q0, vreinterpretq_f64_u64(vandq_u64(adj, vreinterpretq_u64_f64(step))));
    return vmovn_s64(vcvtq_s64_f64(q));
}

static dn_status quantize_neon(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                               dn_act_row *row, size_t *bad)
{
    dn_status st = dn_quant_start(first_non_finite(x, n), n, block, words, row, bad);
    if (st != DN_OK) return st;
    const float32x4_t fmin = vdupq_n_f32(0x1p-126f);
    for (size_t b = 0; b < n / block; b++) {
        const float *xb = x + b * block;
        int16_t *cb = row->codes + b * block;
        float32x4_t m = vdupq_n_f32(0.0f);
        for (size_t i = 0; i < block; i += 4) m = vmaxq_f32(m, vabsq_f32(vld1q_f32(xb + i)));
        float amax = vmaxvq_f32(m);
        dn_act_scale *sc = &row->scales[b];
        double s;
        if (!dn_quant_block_scale(amax, lo, words, block, cb, sc, &s)) continue;
        const float64x2_t md = vdupq_n_f64(s), rcp = vdupq_n_f64(1.0 / s);
        for (size_t i = 0; i < block; i += 4) {
            float32x4_t v = vld1q_f32(xb + i);
            v = vreinterpretq_f32_u32(
                vandq_u32(vreinterpretq_u32_f32(v), vcageq_f32(v, fmin))); /* FTZ */
            int32x4_t q =
                vcombine_s32(codes2(vget_low_f32(v), md, rcp), codes2(vget_high_f32(v), md, rcp));
            vst1_s16(cb + i, vmovn_s32(q));
        }
    }
    return DN_OK;
}

/* dn_ref_code_sums 16 codes at a time: vabsq_s16 leaves -32768 as 0x8000,
   which the unsigned maximum reads as 32768; vmovn keeps the low bytes. */
static int code_sums_neon(const int16_t *codes, size_t n, int8_t *low8, int32_t *sum16,
                          int32_t *sum32, int32_t *amax16)
{
    uint16_t all = 0;
    for (size_t u = 0; u < n / 16; u++) {
        const int16x8_t v0 = vld1q_s16(codes + 16 * u), v1 = vld1q_s16(codes + 16 * u + 8);
        vst1q_s8(low8 + 16 * u, vcombine_s8(vmovn_s16(v0), vmovn_s16(v1)));
        sum16[u] = vaddlvq_s16(v0) + vaddlvq_s16(v1);
        const uint16_t m = vmaxvq_u16(
            vmaxq_u16(vreinterpretq_u16_s16(vabsq_s16(v0)), vreinterpretq_u16_s16(vabsq_s16(v1))));
        amax16[u] = m;
        all |= m;
    }
    for (size_t v = 0; v < n / 32; v++) sum32[v] = sum16[2 * v] + sum16[2 * v + 1];
    return (all & ~127) == 0;
}

const dn_quant_kernels dn_quant_neon = {
    .quantize = quantize_neon,
    .code_sums = code_sums_neon,
};
