/* SPDX-License-Identifier: MIT */
/*
 * Activation quantization on AVX2: bit for bit the reference of src/quant.c
 * (dn_ref_quantize). A block's largest magnitude by vector maxima, its scale
 * by one exact double division (dn_quant_fast_scale), its codes by codes4.
 * code_sums_avx2: the codes' per-16 facts the products' activation side
 * reads (src/dot_act.c), 32 codes a step.
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

/* The largest magnitude of 16 codes: vpabsw leaves -32768 as 0x8000, which
   the unsigned maxima read as 32768; phminposuw finds the least complement. */
AI int32_t amax16_of(__m256i v)
{
    const __m256i a = _mm256_abs_epi16(v);
    const __m128i m = _mm_max_epu16(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    const __m128i c = _mm_minpos_epu16(_mm_xor_si128(m, _mm_set1_epi16(-1)));
    return 0xFFFF - (_mm_cvtsi128_si32(c) & 0xFFFF);
}

/* dn_ref_code_sums 32 codes at a time: the low bytes by a mask and an
   unsigned pack (which then cannot saturate), the sums by vpmaddwd against
   ones and two horizontal adds. */
static int code_sums_avx2(const int16_t *codes, size_t n, int8_t *low8, int32_t *sum16,
                          int32_t *sum32, int32_t *amax16)
{
    const __m256i ones = _mm256_set1_epi16(1), byte = _mm256_set1_epi16(0xFF);
    int32_t all = 0;
    for (size_t u = 0; u < n / 16; u += 2) {
        const __m256i v0 = _mm256_loadu_si256((const __m256i *)(codes + 16 * u));
        const __m256i v1 = _mm256_loadu_si256((const __m256i *)(codes + 16 * u + 16));
        __m256i b = _mm256_packus_epi16(_mm256_and_si256(v0, byte), _mm256_and_si256(v1, byte));
        _mm256_storeu_si256((__m256i *)(low8 + 16 * u), _mm256_permute4x64_epi64(b, 0xD8));
        __m256i h = _mm256_hadd_epi32(_mm256_madd_epi16(v0, ones), _mm256_madd_epi16(v1, ones));
        h = _mm256_hadd_epi32(h, h); /* per lane: the halves' sums of v0, v1, v0, v1 */
        const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        _mm_storel_epi64((__m128i *)(sum16 + u), s);
        sum32[u / 2] = _mm_cvtsi128_si32(_mm_hadd_epi32(s, s));
        amax16[u] = amax16_of(v0);
        amax16[u + 1] = amax16_of(v1);
        all |= amax16[u] | amax16[u + 1];
    }
    return (all & ~127) == 0;
}

const dn_quant_kernels dn_quant_avx2 = {
    .quantize = quantize_avx2,
    .code_sums = code_sums_avx2,
};
