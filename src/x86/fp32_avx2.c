/* SPDX-License-Identifier: MIT */
/*
 * The fp32 core on AVX2 (+F16C): each kernel reproduces its reference in
 * src/fp32.c bit for bit. Lane l of the reference is lane
 * l % 8 of accumulator l / 8; a tail updates only the lanes it has elements
 * for (adding +0 to a lane holding -0 would change its bits).
 */
#include "../fp32_kernels.h"
#include "../bits.h"
#include "avx2_common.h"

#include <math.h>

static void ftz_v_avx2(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, dn_avx2_flush(_mm256_loadu_ps(x + i)));
    dn_ref_ftz_v(x + i, y + i, n - i);
}

static void f32_to_f16_v_avx2(const float *x, uint16_t *y, size_t n)
{
    const __m128i nan16 = _mm_set1_epi16((short)DN_F16_NAN_BITS);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        /* vcvtps2ph rounds to nearest even, keeps subnormals, overflows to
           inf, and turns an f32 denormal into a zero of its sign as FTZ does. */
        __m256 v = _mm256_loadu_ps(x + i);
        __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
        __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        __m128i nan16m =
            _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
        _mm_storeu_si128((__m128i *)(y + i), _mm_blendv_epi8(h, nan16, nan16m));
    }
    dn_ref_f32_to_f16_v(x + i, y + i, n - i);
}

static void f16_to_f32_v_avx2(const uint16_t *x, float *y, size_t n)
{
    const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32((int)DN_NAN_BITS));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_ps(y + i, _mm256_blendv_ps(v, qnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    }
    dn_ref_f16_to_f32_v(x + i, y + i, n - i);
}

static void f32_to_bf16_v_avx2(const float *x, uint16_t *y, size_t n)
{
    const __m256i nan16 = _mm256_set1_epi32((int)DN_BF16_NAN_BITS);
    const __m256i bias = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = dn_avx2_flush(_mm256_loadu_ps(x + i));
        __m256i u = _mm256_castps_si256(v);
        __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
        __m256i b = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(bias, odd)), 16);
        b = _mm256_blendv_epi8(b, nan16, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(b, b), 0x08);
        _mm_storeu_si128((__m128i *)(y + i), _mm256_castsi256_si128(packed));
    }
    dn_ref_f32_to_bf16_v(x + i, y + i, n - i);
}

static void bf16_to_f32_v_avx2(const uint16_t *x, float *y, size_t n)
{
    const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32((int)DN_NAN_BITS));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
        __m256 v = dn_avx2_flush(_mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
        _mm256_storeu_ps(y + i, _mm256_blendv_ps(v, qnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    }
    dn_ref_bf16_to_f32_v(x + i, y + i, n - i);
}

/* dn_tf32 on eight values: flush, round the fraction to 10 bits, keep NaNs. */
static inline __m256 tf32(__m256 x)
{
    __m256i u = _mm256_castps_si256(dn_avx2_flush(x));
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 13), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x0FFF), odd));
    r = _mm256_and_si256(r, _mm256_set1_epi32(~0x1FFF));
    return _mm256_blendv_ps(_mm256_castsi256_ps(r), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

enum term { SUM, DOT, DOT_TF32 };

/* The value a lane takes from eight elements: the element, or the product
   as dn_fmul or dn_fmul_tf32 forms it. */
static inline __m256 term(enum term kind, __m256 a, __m256 b)
{
    switch (kind) {
    case SUM: return a;
    case DOT: return _mm256_mul_ps(a, b);
    case DOT_TF32: return _mm256_mul_ps(tf32(a), tf32(b));
    }
    return a;
}

/* Adds the terms of the `left` (0..8) elements at a, b to the lanes they
   belong to; the other lanes keep their bits. */
static inline __m256 tail_add(enum term kind, __m256 acc, const float *a, const float *b,
                              size_t left)
{
    if (left == 0) return acc;
    __m256i m = dn_avx2_tail_mask(left > 8 ? 8 : left);
    __m256 t = term(kind, _mm256_maskload_ps(a, m), _mm256_maskload_ps(b, m));
    return _mm256_blendv_ps(acc, _mm256_add_ps(acc, t), _mm256_castsi256_ps(m));
}

/* dn_ref_fsum / dn_ref_fdot / dn_ref_fdot_tf32: lane l is lane l % 8 of
   acc<l / 8>. Four named accumulators, not an array: they stay in registers
   at any optimization level (an array did only once -O3 unrolled its loop;
   at -O2 every add went through the stack, 0.4x the speed). */
static inline __attribute__((always_inline)) float lane_sum(enum term kind, const float *a,
                                                            const float *b, size_t n)
{
    unsigned csr = dn_avx2_enter();
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm256_add_ps(acc0, term(kind, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
        acc1 =
            _mm256_add_ps(acc1, term(kind, _mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
        acc2 = _mm256_add_ps(acc2,
                             term(kind, _mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16)));
        acc3 = _mm256_add_ps(acc3,
                             term(kind, _mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24)));
    }
    if (i < n) {
        size_t left = n - i;
        acc0 = tail_add(kind, acc0, a + i, b + i, left);
        acc1 = tail_add(kind, acc1, a + i + 8, b + i + 8, left > 8 ? left - 8 : 0);
        acc2 = tail_add(kind, acc2, a + i + 16, b + i + 16, left > 16 ? left - 16 : 0);
        acc3 = tail_add(kind, acc3, a + i + 24, b + i + 24, left > 24 ? left - 24 : 0);
    }
    float r = dn_avx2_tree32(acc0, acc1, acc2, acc3);
    return dn_result(dn_avx2_leave(csr, r));
}

static float fsum_avx2(const float *x, size_t n) { return lane_sum(SUM, x, x, n); }
static float fdot_avx2(const float *a, const float *b, size_t n) { return lane_sum(DOT, a, b, n); }
static float fdot_tf32_avx2(const float *a, const float *b, size_t n)
{
    return lane_sum(DOT_TF32, a, b, n);
}

/* max_ps(v, acc) returns acc when v is a NaN, so NaNs are passed over.
   Denormals are compared as they are and the result flushed: flushing is
   monotone, so the largest flushed value is the flushed largest value. */
static float fmax_kernel(const float *x, size_t n, int magnitude)
{
    const __m256 mag = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 init = magnitude ? _mm256_setzero_ps() : _mm256_set1_ps(-INFINITY);
    __m256 acc[4] = {init, init, init, init};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            __m256 v = _mm256_loadu_ps(x + i + 8 * j);
            if (magnitude) v = _mm256_and_ps(v, mag);
            acc[j] = _mm256_max_ps(v, acc[j]);
        }
    __m256 m = _mm256_max_ps(_mm256_max_ps(acc[0], acc[1]), _mm256_max_ps(acc[2], acc[3]));
    float lanes[8];
    _mm256_storeu_ps(lanes, m);
    float best = magnitude ? 0.0f : -INFINITY;
    for (int l = 0; l < 8; l++)
        if (lanes[l] > best) best = lanes[l];
    for (; i < n; i++) {
        float v = magnitude ? fabsf(x[i]) : x[i];
        if (v > best) best = v;
    }
    best = dn_flush(best);
    return best == 0.0f ? 0.0f : best;
}

static float fmax_avx2(const float *x, size_t n) { return fmax_kernel(x, n, 0); }
static float absmax_avx2(const float *x, size_t n) { return fmax_kernel(x, n, 1); }

/* The first index of the largest value among x[0..n), n < 2^31, or SIZE_MAX
   when every element is NaN or -inf. Each of 32 lanes keeps its first
   largest (strict >); the lanes then fold to the largest, lower index of
   equals. Values are compared after FTZ, zeros of both signs as equals. */
static size_t argmax_chunk(const float *x, size_t n, float *best_out)
{
    const __m256i exp = _mm256_set1_epi32(0x7F800000);
    __m256 best[4];
    __m256i at[4], idx[4];
    for (int j = 0; j < 4; j++) {
        best[j] = _mm256_set1_ps(-INFINITY);
        at[j] = _mm256_set1_epi32(-1);
        idx[j] =
            _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(8 * j));
    }
    const __m256i step = _mm256_set1_epi32(32);
    for (size_t i = 0; i < n; i += 32) {
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            size_t k = i + 8 * (size_t)j;
            __m256 v;
            if (k + 8 <= n) {
                v = _mm256_loadu_ps(x + k);
            } else {
                __m256i m = dn_avx2_tail_mask(k < n ? n - k : 0);
                v = _mm256_blendv_ps(_mm256_set1_ps(NAN), _mm256_maskload_ps(x + k, m),
                                     _mm256_castsi256_ps(m));
            }
            __m256i u = _mm256_castps_si256(v);
            __m256i tiny = _mm256_cmpeq_epi32(_mm256_and_si256(u, exp), _mm256_setzero_si256());
            v = _mm256_andnot_ps(_mm256_castsi256_ps(tiny), v); /* zeros and denormals to +0 */
            __m256 gt = _mm256_cmp_ps(v, best[j], _CMP_GT_OQ);
            best[j] = _mm256_blendv_ps(best[j], v, gt);
            at[j] = _mm256_blendv_epi8(at[j], idx[j], _mm256_castps_si256(gt));
            idx[j] = _mm256_add_epi32(idx[j], step);
        }
    }
    float bv[32];
    int32_t ba[32];
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps(bv + 8 * j, best[j]);
        _mm256_storeu_si256((__m256i *)(ba + 8 * j), at[j]);
    }
    size_t where = SIZE_MAX;
    float top = -INFINITY;
    for (int l = 0; l < 32; l++) {
        if (ba[l] < 0) continue;
        if (where == SIZE_MAX || bv[l] > top || (bv[l] == top && (size_t)ba[l] < where)) {
            top = bv[l];
            where = (size_t)ba[l];
        }
    }
    *best_out = top;
    return where;
}

static size_t argmax_avx2(const float *x, size_t n)
{
    return dn_argmax_by_chunks(x, n, argmax_chunk);
}

const dn_fp32_kernels dn_fp32_avx2 = {
    .ftz_v = ftz_v_avx2,
    .f32_to_f16_v = f32_to_f16_v_avx2,
    .f16_to_f32_v = f16_to_f32_v_avx2,
    .f32_to_bf16_v = f32_to_bf16_v_avx2,
    .bf16_to_f32_v = bf16_to_f32_v_avx2,
    .fsum = fsum_avx2,
    .fdot = fdot_avx2,
    .fdot_tf32 = fdot_tf32_avx2,
    .fmax = fmax_avx2,
    .absmax = absmax_avx2,
    .argmax = argmax_avx2,
};
