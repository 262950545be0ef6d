/* SPDX-License-Identifier: MIT */
/*
 * The fp32 core on AArch64 Advanced SIMD (NEON): each kernel reproduces its
 * reference in src/fp32.c bit for bit. Lane l of the
 * reference is lane l % 4 of accumulator l / 4; a tail updates only the lanes
 * it has elements for (adding +0 to a lane holding -0 would change its bits).
 * No FPCR mode is touched: FTZ is applied explicitly (see neon_common.h).
 */
#include "../fp32_kernels.h"
#include "../bits.h"
#include "neon_common.h"

#include <math.h>
#include <string.h>

static void ftz_v_neon(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vst1q_f32(y + i, dn_neon_flush(vld1q_f32(x + i)));
        vst1q_f32(y + i + 4, dn_neon_flush(vld1q_f32(x + i + 4)));
    }
    dn_ref_ftz_v(x + i, y + i, n - i);
}

static void f32_to_f16_v_neon(const float *x, uint16_t *y, size_t n)
{
    const uint16x8_t nan16 = vdupq_n_u16(DN_F16_NAN_BITS);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        /* FCVTN rounds as FPCR.RMode says (nearest even by default), keeps
           binary16 subnormals (FZ16 does not apply to conversions), overflows
           to inf, and rounds an f32 denormal (< 2^-126, far below half the
           least binary16 subnormal) to a zero of its sign as FTZ does. */
        float32x4_t lo = vld1q_f32(x + i), hi = vld1q_f32(x + i + 4);
        float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(lo), hi);
        uint16x8_t num = vcombine_u16(vmovn_u32(dn_neon_is_num(lo)), vmovn_u32(dn_neon_is_num(hi)));
        vst1q_u16(y + i, vbslq_u16(num, vreinterpretq_u16_f16(h), nan16));
    }
    dn_ref_f32_to_f16_v(x + i, y + i, n - i);
}

static void f16_to_f32_v_neon(const uint16_t *x, float *y, size_t n)
{
    const float32x4_t qnan = vreinterpretq_f32_u32(vdupq_n_u32(DN_NAN_BITS));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        /* FCVTL is exact (binary16 subnormals become normal f32). */
        float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(x + i));
        float32x4_t lo = vcvt_f32_f16(vget_low_f16(h)), hi = vcvt_high_f32_f16(h);
        vst1q_f32(y + i, vbslq_f32(dn_neon_is_num(lo), lo, qnan));
        vst1q_f32(y + i + 4, vbslq_f32(dn_neon_is_num(hi), hi, qnan));
    }
    dn_ref_f16_to_f32_v(x + i, y + i, n - i);
}

/* dn_f32_to_bf16 on four values, in 16-bit lanes: flush, add just under half
   of the dropped place (plus one when the kept part is odd) and keep the high
   half (ADDHN), a NaN becomes DN_BF16_NAN_BITS. */
static inline uint16x4_t bf16_round(float32x4_t x)
{
    const uint32x4_t bias = vdupq_n_u32(0x7FFF), one = vdupq_n_u32(1);
    float32x4_t v = dn_neon_flush(x);
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint32x4_t odd = vandq_u32(vshrq_n_u32(u, 16), one);
    uint16x4_t b = vaddhn_u32(u, vaddq_u32(bias, odd));
    return vbsl_u16(vmovn_u32(dn_neon_is_num(v)), b, vdup_n_u16(DN_BF16_NAN_BITS));
}

static void f32_to_bf16_v_neon(const float *x, uint16_t *y, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        vst1q_u16(y + i,
                  vcombine_u16(bf16_round(vld1q_f32(x + i)), bf16_round(vld1q_f32(x + i + 4))));
    dn_ref_f32_to_bf16_v(x + i, y + i, n - i);
}

static void bf16_to_f32_v_neon(const uint16_t *x, float *y, size_t n)
{
    const float32x4_t qnan = vreinterpretq_f32_u32(vdupq_n_u32(DN_NAN_BITS));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16x8_t w = vld1q_u16(x + i);
        float32x4_t lo = dn_neon_flush(vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(w), 16)));
        float32x4_t hi = dn_neon_flush(vreinterpretq_f32_u32(vshll_high_n_u16(w, 16)));
        vst1q_f32(y + i, vbslq_f32(dn_neon_is_num(lo), lo, qnan));
        vst1q_f32(y + i + 4, vbslq_f32(dn_neon_is_num(hi), hi, qnan));
    }
    dn_ref_bf16_to_f32_v(x + i, y + i, n - i);
}

/* dn_tf32 on four values: flush, round the fraction to 10 bits, keep NaNs
   (the integer add would carry a NaN's payload into its sign). */
static inline float32x4_t tf32(float32x4_t x)
{
    uint32x4_t u = vreinterpretq_u32_f32(dn_neon_flush(x));
    uint32x4_t odd = vandq_u32(vshrq_n_u32(u, 13), vdupq_n_u32(1));
    uint32x4_t r = vaddq_u32(u, vaddq_u32(vdupq_n_u32(0x0FFF), odd));
    r = vandq_u32(r, vdupq_n_u32(~0x1FFFu));
    return vbslq_f32(dn_neon_is_num(x), vreinterpretq_f32_u32(r), x);
}

enum term { SUM, DOT, DOT_TF32 };

/* The value a lane takes from four elements, as the reference's dn_fadd
   reads it: the element flushed, or the product as dn_fmul or dn_fmul_tf32
   forms it (operands flushed, IEEE product, result flushed). */
static inline float32x4_t term(enum term kind, float32x4_t a, float32x4_t b)
{
    switch (kind) {
    case SUM: return dn_neon_flush(a);
    case DOT: return dn_neon_flush(vmulq_f32(dn_neon_flush(a), dn_neon_flush(b)));
    case DOT_TF32: return dn_neon_flush(vmulq_f32(tf32(a), tf32(b)));
    }
    return a;
}

/* dn_ref_fsum / dn_ref_fdot / dn_ref_fdot_tf32: lane l is lane l % 4 of
   acc[l / 4]; every sum is flushed as dn_fadd flushes it; a tail updates only
   the lanes it has elements for. */
static inline __attribute__((always_inline)) float lane_sum(enum term kind, const float *a,
                                                            const float *b, size_t n)
{
    float32x4_t acc[8];
    for (int j = 0; j < 8; j++) acc[j] = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 8 /* keeps the accumulators in registers */
        for (int j = 0; j < 8; j++) {
            float32x4_t t = term(kind, vld1q_f32(a + i + 4 * j), vld1q_f32(b + i + 4 * j));
            acc[j] = dn_neon_flush(vaddq_f32(acc[j], t));
        }
    if (i < n) {
        /* NEON has no masked load: the tail is copied into zeroed buffers. */
        float ta[32] = {0}, tb[32] = {0};
        memcpy(ta, a + i, (n - i) * sizeof *a);
        if (kind != SUM) memcpy(tb, b + i, (n - i) * sizeof *b);
        for (int j = 0; j < 8 && i + 4 * (size_t)j < n; j++) {
            size_t left = n - i - 4 * (size_t)j;
            uint32x4_t m = dn_neon_tail_mask(left > 4 ? 4 : left);
            float32x4_t t = term(kind, vld1q_f32(ta + 4 * j), vld1q_f32(tb + 4 * j));
            acc[j] = vbslq_f32(m, dn_neon_flush(vaddq_f32(acc[j], t)), acc[j]);
        }
    }
    return dn_result(dn_neon_tree32(acc));
}

static float fsum_neon(const float *x, size_t n) { return lane_sum(SUM, x, x, n); }
static float fdot_neon(const float *a, const float *b, size_t n) { return lane_sum(DOT, a, b, n); }
static float fdot_tf32_neon(const float *a, const float *b, size_t n)
{
    return lane_sum(DOT_TF32, a, b, n);
}

/* acc where v is not larger (or is a NaN), else v. Not vmaxnmq: FMAXNM
   passes over a quiet NaN but returns a signalling one. */
static inline float32x4_t max_skip_nan(float32x4_t acc, float32x4_t v)
{
    return vbslq_f32(vcgtq_f32(v, acc), v, acc);
}

/* A NaN never enters an accumulator, so they fold with FMAX. Denormals are
   compared as they are and the result flushed: flushing is monotone, so the
   largest flushed value is the flushed largest value. */
static float fmax_kernel(const float *x, size_t n, int magnitude)
{
    float32x4_t init = vdupq_n_f32(magnitude ? 0.0f : -INFINITY);
    float32x4_t acc[8];
    for (int j = 0; j < 8; j++) acc[j] = init;
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) {
            float32x4_t v = vld1q_f32(x + i + 4 * j);
            if (magnitude) v = vabsq_f32(v);
            acc[j] = max_skip_nan(acc[j], v);
        }
    float32x4_t m = vmaxq_f32(vmaxq_f32(vmaxq_f32(acc[0], acc[1]), vmaxq_f32(acc[2], acc[3])),
                              vmaxq_f32(vmaxq_f32(acc[4], acc[5]), vmaxq_f32(acc[6], acc[7])));
    float best = vmaxvq_f32(m);
    for (; i < n; i++) {
        float v = magnitude ? fabsf(x[i]) : x[i];
        if (v > best) best = v;
    }
    best = dn_flush(best);
    return best == 0.0f ? 0.0f : best;
}

static float fmax_neon(const float *x, size_t n) { return fmax_kernel(x, n, 0); }
static float absmax_neon(const float *x, size_t n) { return fmax_kernel(x, n, 1); }

/* The first index of the largest value among x[0..n), n < 2^31, or SIZE_MAX
   when every element is NaN or -inf. Each of 32 lanes keeps its first
   largest (strict >); the lanes then fold to the largest, lower index of
   equals. Values are compared after FTZ, zeros of both signs as equals.
   Where AVX2 keeps each lane's element index, a lane here keeps the start
   of the block it took its value from (one vector for all eight
   accumulators, so best, at and the block counter fit in the 32 registers);
   lane l of a block is element block + l. */
static inline __attribute__((always_inline)) void
argmax_block(const float *p, uint32x4_t block, float32x4_t best[8], uint32x4_t at[8])
{
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        float32x4_t v = vld1q_f32(p + 4 * j);
        /* zeros and denormals to +0 */
        v = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), dn_neon_not_tiny(v)));
        uint32x4_t gt = vcgtq_f32(v, best[j]);
        best[j] = vbslq_f32(gt, v, best[j]);
        at[j] = vbslq_u32(gt, block, at[j]);
    }
}

static size_t argmax_chunk(const float *x, size_t n, float *best_out)
{
    float32x4_t best[8];
    uint32x4_t at[8];
    for (int j = 0; j < 8; j++) {
        best[j] = vdupq_n_f32(-INFINITY);
        at[j] = vdupq_n_u32(UINT32_MAX);
    }
    uint32x4_t block = vdupq_n_u32(0);
    const uint32x4_t step = vdupq_n_u32(32);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        argmax_block(x + i, block, best, at);
        block = vaddq_u32(block, step);
    }
    if (i < n) {
        /* NEON has no masked load: the tail is copied into a buffer whose
           lanes past the end read a NaN. */
        float tail[32];
        for (int l = 0; l < 32; l++) tail[l] = NAN;
        memcpy(tail, x + i, (n - i) * sizeof *x);
        argmax_block(tail, block, best, at);
    }
    float bv[32];
    uint32_t ba[32];
    for (int j = 0; j < 8; j++) {
        vst1q_f32(bv + 4 * j, best[j]);
        vst1q_u32(ba + 4 * j, at[j]);
    }
    size_t where = SIZE_MAX;
    float top = -INFINITY;
    for (int l = 0; l < 32; l++) {
        if (ba[l] == UINT32_MAX) continue;
        size_t idx = (size_t)ba[l] + (size_t)l;
        if (where == SIZE_MAX || bv[l] > top || (bv[l] == top && idx < where)) {
            top = bv[l];
            where = idx;
        }
    }
    *best_out = top;
    return where;
}

static size_t argmax_neon(const float *x, size_t n)
{
    return dn_argmax_by_chunks(x, n, argmax_chunk);
}

const dn_fp32_kernels dn_fp32_neon = {
    .ftz_v = ftz_v_neon,
    .f32_to_f16_v = f32_to_f16_v_neon,
    .f16_to_f32_v = f16_to_f32_v_neon,
    .f32_to_bf16_v = f32_to_bf16_v_neon,
    .bf16_to_f32_v = bf16_to_f32_v_neon,
    .fsum = fsum_neon,
    .fdot = fdot_neon,
    .fdot_tf32 = fdot_tf32_neon,
    .fmax = fmax_neon,
    .absmax = absmax_neon,
    .argmax = argmax_neon,
};
