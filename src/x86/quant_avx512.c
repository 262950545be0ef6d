/* SPDX-License-Identifier: MIT */
/*
 * Activation quantization on AVX-512: bit for bit the reference of
 * src/quant.c (dn_ref_quantize), as the AVX2 kernel, with its codes by one
 * correctly rounded binary64 division each (codes16).
 */
#include "../quant_kernels.h"
#include "../bits.h"

#include <immintrin.h>

#define AI static inline __attribute__((always_inline))

/* The first index whose value is infinite or NaN, or n. */
static size_t first_non_finite(const float *x, size_t n)
{
    const __m512i exp = _mm512_set1_epi32(0x7F800000);
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 in = n - i >= 16 ? 0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        __m512i u = _mm512_maskz_loadu_epi32(in, x + i);
        __mmask16 m = _mm512_mask_cmpeq_epi32_mask(in, _mm512_and_si512(u, exp), exp);
        if (m) return i + (size_t)__builtin_ctz(m);
    }
    return n;
}

/* Sixteen codes: the nearest integers to x / md, ties to even, exactly.
   q = x / md rounded to binary64, then to the nearest integer, ties to
   even. The two roundings give the exact quotient's nearest integer: the
   quotient Q and q lie on the same side of every half-integer T (rounding is
   monotone and T is a double), so they can differ only when Q != T = q,
   which needs |Q - T| <= 2^-38 (|Q| < 2^15: half an ulp of q). But Q - T =
   (x - T md) / md, and x - T md is a nonzero multiple of 2^min(a, e - 1)
   (x = X 2^a, |X| < 2^24; md = m 2^e, m < 256): |Q - T| >= 2^-9 when
   a >= e - 1; otherwise |Q| <= 1/4 (then |Q - T| >= 1/4) or |x| > md / 4 >=
   2^(e + 1), so a > e - 23 (x is normal after the FTZ below) and
   |Q - T| >= 2^-22 / m >= 2^-30. */
AI __m256i codes16(__m512 x, __m512d md)
{
    __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
    __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
    __m256i q0 = _mm512_cvtpd_epi32(
        _mm512_roundscale_pd(_mm512_div_pd(lo, md), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256i q1 = _mm512_cvtpd_epi32(
        _mm512_roundscale_pd(_mm512_div_pd(hi, md), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return _mm512_cvtsepi32_epi16(_mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1));
}

static dn_status quantize_avx512(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                                 dn_act_row *row, size_t *bad)
{
    dn_status st = dn_quant_start(first_non_finite(x, n), n, block, words, row, bad);
    if (st != DN_OK) return st;
    const __m512 fmin = _mm512_set1_ps(0x1p-126f);
    for (size_t b = 0; b < n / block; b++) {
        const float *xb = x + b * block;
        int16_t *cb = row->codes + b * block;
        __m512 m0 = _mm512_setzero_ps(), m1 = _mm512_setzero_ps();
        for (size_t i = 0; i < block; i += 32) {
            m0 = _mm512_max_ps(m0, _mm512_abs_ps(_mm512_loadu_ps(xb + i)));
            m1 = _mm512_max_ps(m1, _mm512_abs_ps(_mm512_loadu_ps(xb + i + 16)));
        }
        float amax = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
        dn_act_scale *sc = &row->scales[b];
        double s;
        if (!dn_quant_block_scale(amax, lo, words, block, cb, sc, &s)) continue;
        const __m512d md = _mm512_set1_pd(s);
        for (size_t i = 0; i < block; i += 16) {
            __m512 v = _mm512_loadu_ps(xb + i);
            /* FTZ: a denormal's code is 0 */
            v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_abs_ps(v), fmin, _CMP_GE_OQ), v);
            _mm256_storeu_si256((__m256i *)(cb + i), codes16(v, md));
        }
    }
    return DN_OK;
}

const dn_quant_kernels dn_quant_avx512 = {
    .quantize = quantize_avx512,
};
