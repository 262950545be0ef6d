/* SPDX-License-Identifier: MIT */
/*
 * The ggml-compatible F16 module on AArch64 NEON: ggml's x86 orders (see
 * src/f16.c) with each 8-lane AVX register held as two 4-lane NEON
 * registers (lo: lanes 0-3, hi: lanes 4-7). FCVT widens and narrows as F16C
 * does (nearest even, NaN made quiet with its top payload bits); a product
 * of two binary16 values is exact, so FMLA gives vfmadd's bits; ARM's NaNs
 * differ from x86's, but every NaN result is replaced by the module's one.
 * Runs in the default FPCR (round to nearest, no flush, FZ16 clear).
 *
 * BF16 weights run the same bodies with `bf` set (a constant at every call,
 * the bodies always inlined): a bfloat16 widens by a 16-bit shift,
 * ggml_vec_dot's step is FMUL then FADD (the project builds with
 * -ffp-contract=off, so the two stay separate), and its final pairing is
 * tinyBLAS's hsum.
 */
#include "../f16_kernels.h"
#include "../bits.h"

#include <arm_neon.h>
#include <stdlib.h>

#define DN_INLINE static inline __attribute__((always_inline))

static inline float32x4_t load4_f16(const uint16_t *p)
{
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

/* Four weights of type bf (0: binary16, 1: bfloat16), widened exactly. */
DN_INLINE float32x4_t load4_w(const uint16_t *p, int bf)
{
    if (bf) return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
    return load4_f16(p);
}

/* One step of ggml_vec_dot: F16 fuses it; BF16 rounds the product first. */
DN_INLINE float32x4_t vd_step(float32x4_t acc, float32x4_t w, float32x4_t x, int bf)
{
    return bf ? vaddq_f32(vmulq_f32(w, x), acc) : vfmaq_f32(acc, w, x);
}

static void from_f32_neon(const float *x, uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1_u16(h + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    dn_ref_f16_from_f32(x + i, h + i, n - i);
}

static void widen_neon(const uint16_t *h, float *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(x + i, load4_f16(h + i));
    dn_ref_f16_widen(h + i, x + i, n - i);
}

static void round_f32_neon(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    dn_ref_f16_round_f32(x + i, y + i, n - i);
}

/* ggml_compute_fp32_to_bf16 on four patterns: each lane's bfloat16 in its
   high 16 bits, the low 16 clear. */
static inline uint32x4_t bf16_round_bits(uint32x4_t u)
{
    uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    uint32x4_t r = vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7FFF)), lsb);
    uint32x4_t nan = vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7FFFFFFF)), vdupq_n_u32(0x7F800000));
    r = vbslq_u32(nan, vorrq_u32(u, vdupq_n_u32(0x00400000)), r);
    return vandq_u32(r, vdupq_n_u32(0xFFFF0000u));
}

static void bf16_from_f32_neon(const float *x, uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1_u16(h + i, vshrn_n_u32(bf16_round_bits(vld1q_u32((const uint32_t *)(x + i))), 16));
    dn_ref_bf16_from_f32(x + i, h + i, n - i);
}

static void bf16_widen_neon(const uint16_t *h, float *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(x + i, load4_w(h + i, 1));
    dn_ref_bf16_widen(h + i, x + i, n - i);
}

static void bf16_round_f32_neon(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_u32((uint32_t *)(y + i), bf16_round_bits(vld1q_u32((const uint32_t *)(x + i))));
    dn_ref_bf16_round_f32(x + i, y + i, n - i);
}

/* ggml's GGML_F32x8_REDUCE: per lane (a0 + a2) + (a1 + a3); the high four
   lanes onto the low four; (T0 + T1) + (T2 + T3). */
static inline float reduce4(const float32x4_t lo[4], const float32x4_t hi[4])
{
    float32x4_t slo = vaddq_f32(vaddq_f32(lo[0], lo[2]), vaddq_f32(lo[1], lo[3]));
    float32x4_t shi = vaddq_f32(vaddq_f32(hi[0], hi[2]), vaddq_f32(hi[1], hi[3]));
    float32x4_t t = vaddq_f32(slo, shi);
    float32x4_t p = vpaddq_f32(t, t); /* T0 + T1, T2 + T3, ... */
    return vgetq_lane_f32(p, 0) + vgetq_lane_f32(p, 1);
}

/* tinyBLAS's hsum: v[q] = l[q + 4] + l[q], then (v0 + v2) + (v1 + v3). */
static inline float hsum(float32x4_t lo, float32x4_t hi)
{
    float32x4_t v = vaddq_f32(hi, lo);
    float32x4_t u = vaddq_f32(v, vextq_f32(v, v, 2)); /* v0 + v2, v1 + v3, ... */
    return vgetq_lane_f32(u, 0) + vgetq_lane_f32(u, 1);
}

/* ggml_vec_dot's fold: F16's GGML_F32x8_REDUCE; BF16's (a0 + a2) + (a1 + a3)
   per lane, then tinyBLAS's hsum. */
DN_INLINE float fold4(const float32x4_t lo[4], const float32x4_t hi[4], int bf)
{
    if (!bf) return reduce4(lo, hi);
    float32x4_t slo = vaddq_f32(vaddq_f32(lo[0], lo[2]), vaddq_f32(lo[1], lo[3]));
    float32x4_t shi = vaddq_f32(vaddq_f32(hi[0], hi[2]), vaddq_f32(hi[1], hi[3]));
    return hsum(slo, shi);
}

DN_INLINE float double_tail(float r, const uint16_t *w, const float *x, size_t from, size_t k,
                            int bf)
{
    double sum = r;
    for (size_t i = from; i < k; i++)
        sum += (double)((bf ? dn_bf16_widen1(w[i]) : dn_f16_widen1(w[i])) * x[i]);
    return dn_f16_result((float)sum);
}

DN_INLINE float vec_dot_t(const uint16_t *w, const float *x, size_t k, int bf)
{
    float32x4_t lo[4], hi[4];
    for (int j = 0; j < 4; j++) lo[j] = hi[j] = vdupq_n_f32(0.0f);
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32)
        for (int j = 0; j < 4; j++) {
            lo[j] = vd_step(lo[j], load4_w(w + b + 8 * j, bf), vld1q_f32(x + b + 8 * j), bf);
            hi[j] =
                vd_step(hi[j], load4_w(w + b + 8 * j + 4, bf), vld1q_f32(x + b + 8 * j + 4), bf);
        }
    return double_tail(fold4(lo, hi, bf), w, x, whole, k, bf);
}

/* Two rows against one column: each row's chains are vec_dot's. */
DN_INLINE void vec_dot2(const uint16_t *w0, const uint16_t *w1, const float *x, size_t k, float *r0,
                        float *r1, int bf)
{
    float32x4_t alo[4], ahi[4], clo[4], chi[4];
    for (int j = 0; j < 4; j++) alo[j] = ahi[j] = clo[j] = chi[j] = vdupq_n_f32(0.0f);
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32)
        for (int j = 0; j < 4; j++) {
            float32x4_t xl = vld1q_f32(x + b + 8 * j), xh = vld1q_f32(x + b + 8 * j + 4);
            alo[j] = vd_step(alo[j], load4_w(w0 + b + 8 * j, bf), xl, bf);
            ahi[j] = vd_step(ahi[j], load4_w(w0 + b + 8 * j + 4, bf), xh, bf);
            clo[j] = vd_step(clo[j], load4_w(w1 + b + 8 * j, bf), xl, bf);
            chi[j] = vd_step(chi[j], load4_w(w1 + b + 8 * j + 4, bf), xh, bf);
        }
    float fold0 = fold4(alo, ahi, bf), fold1 = fold4(clo, chi, bf);
    *r0 = double_tail(fold0, w0, x, whole, k, bf);
    *r1 = double_tail(fold1, w1, x, whole, k, bf);
}

DN_INLINE float sgemm_dot_t(const uint16_t *w, const float *x, size_t k, int bf)
{
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    for (size_t l = 0; l < k; l += 8) {
        lo = vfmaq_f32(lo, load4_w(w + l, bf), vld1q_f32(x + l));
        hi = vfmaq_f32(hi, load4_w(w + l + 4, bf), vld1q_f32(x + l + 4));
    }
    return dn_f16_result(hsum(lo, hi));
}

DN_INLINE void mat_vec_rows_t(const uint16_t *w, size_t k, const float *x, size_t r0, size_t r1,
                              float *out, int bf)
{
    size_t r = r0;
    for (; r + 2 <= r1; r += 2)
        vec_dot2(w + r * k, w + (r + 1) * k, x, k, &out[r], &out[r + 1], bf);
    for (; r < r1; r++) out[r] = vec_dot_t(w + r * k, x, k, bf);
}

/* An RM x RN tile (RM <= 4, RN <= 2) of tinyBLAS outputs from widened weights. */
static inline __attribute__((always_inline)) void tile(const float *wf, size_t k, const float *act,
                                                       size_t rows, size_t r, size_t c, int RM,
                                                       int RN, float *out)
{
    float32x4_t lo[4][2], hi[4][2];
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < RN; j++) lo[i][j] = hi[i][j] = vdupq_n_f32(0.0f);
    for (size_t l = 0; l < k; l += 8) {
        float32x4_t bl[2], bh[2];
        for (int j = 0; j < RN; j++) {
            bl[j] = vld1q_f32(act + (c + (size_t)j) * k + l);
            bh[j] = vld1q_f32(act + (c + (size_t)j) * k + l + 4);
        }
        for (int i = 0; i < RM; i++) {
            float32x4_t al = vld1q_f32(wf + (size_t)i * k + l),
                        ah = vld1q_f32(wf + (size_t)i * k + l + 4);
            for (int j = 0; j < RN; j++) {
                lo[i][j] = vfmaq_f32(lo[i][j], al, bl[j]);
                hi[i][j] = vfmaq_f32(hi[i][j], ah, bh[j]);
            }
        }
    }
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < RN; j++)
            out[(c + (size_t)j) * rows + r + (size_t)i] = dn_f16_result(hsum(lo[i][j], hi[i][j]));
}

DN_INLINE void sgemm_rows_t(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                            size_t r0, size_t r1, float *out, int bf)
{
    float *wf = malloc(4 * k * sizeof *wf + 1);
    if (!wf) {
        if (bf)
            dn_ref_bf16_sgemm_rows(w, rows, k, act, NULL, n, r0, r1, out);
        else
            dn_ref_f16_sgemm_rows(w, rows, k, act, NULL, n, r0, r1, out);
        return;
    }
    for (size_t r = r0; r < r1; r += 4) {
        int rm = r1 - r >= 4 ? 4 : (int)(r1 - r);
        if (bf)
            bf16_widen_neon(w + r * k, wf, (size_t)rm * k);
        else
            widen_neon(w + r * k, wf, (size_t)rm * k);
        size_t c = 0;
        if (rm == 4) {
            for (; c + 2 <= n; c += 2) tile(wf, k, act, rows, r, c, 4, 2, out);
            if (c < n) tile(wf, k, act, rows, r, c, 4, 1, out);
        } else {
            for (int i = 0; i < rm; i++)
                for (c = 0; c < n; c++)
                    tile(wf + (size_t)i * k, k, act, rows, r + (size_t)i, c, 1, 1, out);
        }
    }
    free(wf);
}

/* ---- the instances: F16 (bf = 0) and BF16 (bf = 1) ---------------------------- */

static float vec_dot_neon(const uint16_t *w, const float *x, size_t k)
{
    return vec_dot_t(w, x, k, 0);
}

static float sgemm_dot_neon(const uint16_t *w, const float *x, size_t k)
{
    return sgemm_dot_t(w, x, k, 0);
}

static void mat_vec_rows_neon(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                              size_t r0, size_t r1, float *out)
{
    (void)xh; /* the NEON kernels read the floats */
    mat_vec_rows_t(w, k, x, r0, r1, out, 0);
}

/* The columns one at a time through the one-column rows (each weight read
   once per column; the bits are vec_dot's either way). */
static void vec_dot_cols_neon(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                              size_t r0, size_t r1, float *out)
{
    for (size_t c = 0; c < n; c++) mat_vec_rows_t(w, k, act + c * k, r0, r1, out + c * rows, 0);
}

static void sgemm_rows_neon(const uint16_t *w, size_t rows, size_t k, const float *act,
                            const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    (void)packed;
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 0);
}

static float bf16_vec_dot_neon(const uint16_t *w, const float *x, size_t k)
{
    return vec_dot_t(w, x, k, 1);
}

static float bf16_sgemm_dot_neon(const uint16_t *w, const float *x, size_t k)
{
    return sgemm_dot_t(w, x, k, 1);
}

static void bf16_mat_vec_rows_neon(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                                   size_t r0, size_t r1, float *out)
{
    (void)xh; /* the NEON kernels read the floats */
    mat_vec_rows_t(w, k, x, r0, r1, out, 1);
}

static void bf16_vec_dot_cols_neon(const uint16_t *w, size_t rows, size_t k, const float *act,
                                   size_t n, size_t r0, size_t r1, float *out)
{
    for (size_t c = 0; c < n; c++) mat_vec_rows_t(w, k, act + c * k, r0, r1, out + c * rows, 1);
}

static void bf16_sgemm_rows_neon(const uint16_t *w, size_t rows, size_t k, const float *act,
                                 const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    (void)packed;
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 1);
}

/* An f32 result narrowed as F16C narrows it, a NaN as the module's one. */
static inline uint16x4_t narrow_result(float32x4_t y)
{
    uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(y));
    uint16x4_t num = vmovn_u32(vceqq_f32(y, y));
    return vbsl_u16(num, h, vdup_n_u16(DN_F16_NAN_F16_BITS));
}

static void mad_neon(uint16_t *acc, const uint16_t *v, float s, size_t n)
{
    const float32x4_t sv = vdupq_n_f32(s);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1_u16(acc + i, narrow_result(vfmaq_f32(load4_f16(acc + i), load4_f16(v + i), sv)));
    dn_ref_f16_mad(acc + i, v + i, s, n - i);
}

static void scale_neon(uint16_t *acc, float s, size_t n)
{
    const float32x4_t sv = vdupq_n_f32(s);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(acc + i, narrow_result(vmulq_f32(load4_f16(acc + i), sv)));
    dn_ref_f16_scale(acc + i, s, n - i);
}

const dn_f16_kernels dn_f16_neon = {
    .fp16 =
        {
            .from_f32 = from_f32_neon,
            .widen = widen_neon,
            .round_f32 = round_f32_neon,
            .vec_dot = vec_dot_neon,
            .sgemm_dot = sgemm_dot_neon,
            .mat_vec_rows = mat_vec_rows_neon,
            .vec_dot_cols = vec_dot_cols_neon,
            .pack_bytes = dn_ref_w16_pack_bytes, /* no packed form */
            .pack = dn_ref_w16_pack,
            .sgemm_rows = sgemm_rows_neon,
        },
    .bf16 =
        {
            .from_f32 = bf16_from_f32_neon,
            .widen = bf16_widen_neon,
            .round_f32 = bf16_round_f32_neon,
            .vec_dot = bf16_vec_dot_neon,
            .sgemm_dot = bf16_sgemm_dot_neon,
            .mat_vec_rows = bf16_mat_vec_rows_neon,
            .vec_dot_cols = bf16_vec_dot_cols_neon,
            .pack_bytes = dn_ref_w16_pack_bytes, /* no packed form */
            .pack = dn_ref_w16_pack,
            .sgemm_rows = bf16_sgemm_rows_neon,
        },
    .mad = mad_neon,
    .scale = scale_neon,
};
