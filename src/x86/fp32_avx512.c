/* SPDX-License-Identifier: MIT */
/*
 * The fp32 core's reductions on AVX-512 (F, BW, VL, DQ): each kernel
 * reproduces its reference in src/fp32.c bit for bit, as the AVX2 ones do.
 * Lane l of the reference's 32 is lane l % 16 of accumulator l / 16, so the
 * 32 lanes are two ZMM registers, each add the reference's add of those
 * lanes (multiply then add, no FMA); a tail updates only the lanes it has
 * elements for, under a mask. The tree is the AVX2 one, on the four 8-lane
 * halves. The MXCSR section (DAZ, round to nearest, no FTZ) is the AVX2
 * kernels', for the same reason (src/x86/avx2_common.h).
 *
 * What the wider registers buy is instructions, not a shorter chain: each of
 * the 32 lanes still adds once per 32 elements. Where that chain, not the
 * instruction count, is the limit, AVX-512 gains nothing, and the entries
 * left out of the table below (conversions, argmax) run the AVX2 kernels.
 */
#include "../fp32_kernels.h"
#include "../bits.h"
#include "avx2_common.h"

#include <math.h>

/* A mask of the first `count` (0..16) lanes. */
static inline __mmask16 first(size_t count)
{
    return (__mmask16)(count >= 16 ? 0xFFFFu : (1u << count) - 1u);
}

/* dn_tf32 on sixteen values: flush, round the fraction to 10 bits, keep NaNs. */
static inline __m512 tf32(__m512 x)
{
    __m512i u = _mm512_castps_si512(x);
    __mmask16 tiny = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7F800000));
    u = _mm512_mask_and_epi32(u, tiny, u, _mm512_set1_epi32((int)DN_SIGN_BIT));
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 13), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x0FFF), odd));
    r = _mm512_and_si512(r, _mm512_set1_epi32(~0x1FFF));
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, _mm512_castsi512_ps(r), x);
}

enum term { SUM, DOT, DOT_TF32 };

static inline __m512 term(enum term kind, __m512 a, __m512 b)
{
    switch (kind) {
    case SUM: return a;
    case DOT: return _mm512_mul_ps(a, b);
    case DOT_TF32: return _mm512_mul_ps(tf32(a), tf32(b));
    }
    return a;
}

/* acc's lanes with elements among the `left` at a, b, each plus its term. */
static inline __m512 tail_add(enum term kind, __m512 acc, const float *a, const float *b,
                              size_t left)
{
    __mmask16 m = first(left);
    __m512 t = term(kind, _mm512_maskz_loadu_ps(m, a), _mm512_maskz_loadu_ps(m, b));
    return _mm512_mask_add_ps(acc, m, acc, t);
}

/* dn_ref_fsum / dn_ref_fdot / dn_ref_fdot_tf32 over the 32 lanes. */
static inline __attribute__((always_inline)) float lane_sum(enum term kind, const float *a,
                                                            const float *b, size_t n)
{
    unsigned csr = dn_avx2_enter();
    __m512 lo = _mm512_setzero_ps(), hi = lo;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        lo = _mm512_add_ps(lo, term(kind, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
        hi =
            _mm512_add_ps(hi, term(kind, _mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16)));
    }
    if (i < n) {
        size_t left = n - i;
        lo = tail_add(kind, lo, a + i, b + i, left);
        if (left > 16) hi = tail_add(kind, hi, a + i + 16, b + i + 16, left - 16);
    }
    float r = dn_avx2_tree32(_mm512_castps512_ps256(lo), _mm512_extractf32x8_ps(lo, 1),
                             _mm512_castps512_ps256(hi), _mm512_extractf32x8_ps(hi, 1));
    return dn_result(dn_avx2_leave(csr, r));
}

static float fsum_avx512(const float *x, size_t n) { return lane_sum(SUM, x, x, n); }
static float fdot_avx512(const float *a, const float *b, size_t n)
{
    return lane_sum(DOT, a, b, n);
}
static float fdot_tf32_avx512(const float *a, const float *b, size_t n)
{
    return lane_sum(DOT_TF32, a, b, n);
}

/* max_ps(v, acc) returns acc when v is a NaN, so NaNs are passed over; a
   masked-off tail lane keeps its accumulator. Denormals are compared as they
   are and the result flushed: flushing is monotone, so the largest flushed
   value is the flushed largest value. */
static float fmax_kernel(const float *x, size_t n, int magnitude)
{
    const __m512 init = magnitude ? _mm512_setzero_ps() : _mm512_set1_ps(-INFINITY);
    __m512 a0 = init, a1 = init;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
        if (magnitude) v0 = _mm512_abs_ps(v0), v1 = _mm512_abs_ps(v1);
        a0 = _mm512_max_ps(v0, a0);
        a1 = _mm512_max_ps(v1, a1);
    }
    for (; i < n; i += 16) {
        __mmask16 m = first(n - i);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        if (magnitude) v = _mm512_abs_ps(v);
        a0 = _mm512_mask_max_ps(a0, m, v, a0);
    }
    float best = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
    best = dn_flush(best);
    return best == 0.0f ? 0.0f : best;
}

static float fmax_avx512(const float *x, size_t n) { return fmax_kernel(x, n, 0); }
static float absmax_avx512(const float *x, size_t n) { return fmax_kernel(x, n, 1); }

const dn_fp32_kernels dn_fp32_avx512 = {
    .fsum = fsum_avx512,
    .fdot = fdot_avx512,
    .fdot_tf32 = fdot_tf32_avx512,
    .fmax = fmax_avx512,
    .absmax = absmax_avx512,
};
