/* SPDX-License-Identifier: MIT */
/*
 * Activation quantization on AVX2: bit for bit the reference of src/quant.c
 * (dn_ref_quantize). A block's largest magnitude by vector maxima, its scale
 * by one exact double division (dn_quant_fast_scale), its codes by codes4.
 */
#include "../quant_kernels.h"
#include "../bits.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

/* The first index whose value is infinite or NaN, or n. */
static size_t first_non_finite(const float *x, size_t n)
{
    const __m256i exp = _mm256_set1_epi32(0x7F800000);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i u = _mm256_loadu_si256((const __m256i *)(x + i));
        int m = _mm256_movemask_ps(
            _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(u, exp), exp)));
        if (m) return i + (size_t)__builtin_ctz((unsigned)m);
    }
    for (; i < n; i++)
        if ((dn_bits(x[i]) & DN_EXP_BITS) == DN_EXP_BITS) return i;
    return n;
}

/* Four codes: the nearest integers to x / md, ties to even, exactly. q0 =
   round(x * (1/md)) is within one of the quotient (and right but for a tie:
   the reciprocal's rounding may move an exact tie off it); r = x - q0 md is
   exact in double (q0 md has at most 24 significant bits; where x has bits
   below md's, |x| < md 2^-20 and q0 = 0), so comparing 2|r| with md finds
   the nearest integer and breaks a tie to even. */
AI __m128i codes4(__m128 x, __m256d md, __m256d rcp)
{
    const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0),
                  half = _mm256_set1_pd(0.5);
    __m256d xd = _mm256_cvtps_pd(x);
    __m256d q0 =
        _mm256_round_pd(_mm256_mul_pd(xd, rcp), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_sub_pd(xd, _mm256_mul_pd(q0, md));
    __m256d t = _mm256_andnot_pd(sign, _mm256_add_pd(r, r));
    __m256d h = _mm256_mul_pd(q0, half);
    __m256d odd =
        _mm256_cmp_pd(_mm256_round_pd(h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), h, _CMP_NEQ_UQ);
    __m256d adj = _mm256_or_pd(_mm256_cmp_pd(t, md, _CMP_GT_OQ),
                               _mm256_and_pd(_mm256_cmp_pd(t, md, _CMP_EQ_OQ), odd));
    __m256d step = _mm256_or_pd(_mm256_and_pd(r, sign), one); /* +-1 by the sign of r */
    return _mm256_cvtpd_epi32(_mm256_add_pd(q0, _mm256_and_pd(adj, step)));
}

static dn_status quantize_avx2(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                               dn_act_row *row, size_t *bad)
{
    dn_status st = dn_quant_start(first_non_finite(x, n), n, block, words, row, bad);
    if (st != DN_OK) return st;
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m256 fmin = _mm256_set1_ps(0x1p-126f);
    for (size_t b = 0; b < n / block; b++) {
        const float *xb = x + b * block;
        int16_t *cb = row->codes + b * block;
        __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps();
        for (size_t i = 0; i < block; i += 16) {
            m0 = _mm256_max_ps(m0, _mm256_and_ps(_mm256_loadu_ps(xb + i), absmask));
            m1 = _mm256_max_ps(m1, _mm256_and_ps(_mm256_loadu_ps(xb + i + 8), absmask));
        }
        m0 = _mm256_max_ps(m0, m1);
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m0), _mm256_extractf128_ps(m0, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        float amax = _mm_cvtss_f32(m4);
        dn_act_scale *sc = &row->scales[b];
        double s;
        if (!dn_quant_block_scale(amax, lo, words, block, cb, sc, &s)) continue;
        const __m256d md = _mm256_set1_pd(s), rcp = _mm256_set1_pd(1.0 / s);
        for (size_t i = 0; i < block; i += 8) {
            __m256 v = _mm256_loadu_ps(xb + i);
            v = _mm256_and_ps(v,
                              _mm256_cmp_ps(_mm256_and_ps(v, absmask), fmin, _CMP_GE_OQ)); /* FTZ */
            __m128i q0 = codes4(_mm256_castps256_ps128(v), md, rcp);
            __m128i q1 = codes4(_mm256_extractf128_ps(v, 1), md, rcp);
            _mm_storeu_si128((__m128i *)(cb + i), _mm_packs_epi32(q0, q1));
        }
    }
    return DN_OK;
}

const dn_quant_kernels dn_quant_avx2 = {
    .quantize = quantize_avx2,
};
