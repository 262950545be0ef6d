/* SPDX-License-Identifier: MIT */
/*
 * attention_int8.h: what the x86 int8 score kernels share (AVX2 and
 * AVX-512): a query head's int32 factors, a key's scale as an exact double,
 * the four-head finish, and the int8 weighted sum's block step, each the reference's (src/attention.c,
 * docs/numerics.md 13.7). Included by src/x86/attention_avx2.c and
 * attention_avx512.c only; every function is static inline, compiled with
 * its includer's target flags (AVX2 at least).
 */
#ifndef DN_X86_ATTENTION_INT8_H
#define DN_X86_ATTENTION_INT8_H

#include "../attention_kernels.h"
#include "../bits.h"
#include "avx2_common.h"
#include "decodenum/fp32.h"

#include <immintrin.h>
#include <string.h>

/* When every chunk factor and the whole sum fit int32 (Gaussian-like
   queries: the block exponents lie within a few places), the chunk sums are
   scaled by their factors in int32 lanes and totalled once: fi[c] = f[c],
   and sum_c f[c] * 128 * sum |codes of c| < 2^31 bounds every partial sum. */
static inline int int32_factors(const dn_attn_plan *plan, const int16_t *codes, int32_t *fi)
{
    double bound = 0.0;
    for (size_t c = 0; c < plan->chunks; c++) {
        if (plan->f[c] > 0x1p30) return 0;
        fi[c] = (int32_t)plan->f[c];
        int32_t mag = 0;
        for (size_t i = 0; i < 32; i++)
            mag += codes[32 * c + i] < 0 ? -codes[32 * c + i] : codes[32 * c + i];
        bound += plan->f[c] * 128.0 * (double)mag;
    }
    return bound < 0x1p31;
}

/* A key's binary16 scale as the exact double sig * 2^exp; NaN for an
   infinite or NaN scale (its scores are NaN). */
static inline double key_scale(uint16_t h)
{
    uint32_t e = (h >> 10) & 31u, f = h & 1023u;
    if (e == 31) return __builtin_nan("");
    double v = e ? (double)(1024 + f) * (double)(1u << e) * 0x1p-25 : (double)f * 0x1p-24;
    return (h & 0x8000u) ? -v : v;
}

/* 2^e as a binary64, -1022 <= e <= 1023. */
static inline double pow2(int32_t e)
{
    uint64_t b = (uint64_t)(1023 + e) << 52;
    double p;
    memcpy(&p, &b, 8);
    return p;
}

/* 2^e as a binary32, -126 <= e <= 127. */
static inline float pow2f(int32_t e)
{
    uint32_t b = (uint32_t)(127 + e) << 23;
    float p;
    memcpy(&p, &b, 4);
    return p;
}

/* The four heads' int32 totals: lane g = the sum of a[g]'s eight lanes. */
static inline __m128i hsum4(__m256i a0, __m256i a1, __m256i a2, __m256i a3)
{
    __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
    return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

/* dn_result of four lanes: a denormal flushed to its sign's zero, a NaN made 0x7FC00000. */
static inline __m128 result4(__m128 x)
{
    __m128i u = _mm_castps_si128(x), mag = _mm_and_si128(u, _mm_set1_epi32(0x7FFFFFFF));
    __m128i tiny =
        _mm_cmpeq_epi32(_mm_and_si128(u, _mm_set1_epi32(0x7F800000)), _mm_setzero_si128());
    __m128i nan = _mm_cmpgt_epi32(mag, _mm_set1_epi32(0x7F800000));
    u = _mm_andnot_si128(_mm_and_si128(tiny, mag), u);
    return _mm_castsi128_ps(_mm_blendv_epi8(u, _mm_set1_epi32(0x7FC00000), nan));
}

/* finish() of four heads' totals t against one key: (t * key) * 2^emin in
   binary64 (exact), rounded once to f32, +0 for an exact zero, then times
   scale, each result as dn_result makes it: the scalar steps lane by lane. */
static inline __m128 finish4(__m128i t, double key, __m256d pow_emin, float scale)
{
    __m256d v = _mm256_mul_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(t), _mm256_set1_pd(key)), pow_emin);
    __m256i zero64 = _mm256_castpd_si256(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_EQ_OQ));
    __m128i zero = _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(zero64, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
    __m128 r = _mm_andnot_ps(_mm_castsi128_ps(zero), result4(_mm256_cvtpd_ps(v)));
    return result4(_mm_mul_ps(r, _mm_set1_ps(scale)));
}

/* A block's value scales widened once for every head of the group (F16C
   widens exactly; a binary16 denormal is an f32 normal, so dn_flush keeps
   it), zeros past the m positions. */
static inline void value_scales(const uint16_t *vs, size_t scale_stride, size_t m,
                                float f[DN_VALUE_BLOCK])
{
    uint16_t h[DN_VALUE_BLOCK] = {0};
    for (size_t j = 0; j < m; j++) h[j] = vs[j * scale_stride];
    for (size_t j = 0; j < DN_VALUE_BLOCK; j += 8)
        _mm256_storeu_ps(f + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + j))));
}

/* dn_attn_value_block's step with the same results, eight positions a
   vector: w_j = dn_fmul(p_j, scale_j) (the operands and the product
   flushed), the codes the nearest integers of w_j * 2^-e, ties to even.
   With |e| < 100, 2^-e is an f32 normal and w_j * 2^-e is exact unless it
   is below 2^-126, where w_j < amax * 2^-133 and the code is 0 either way;
   cvtps rounds to nearest even (MXCSR's default, which the kernels keep) as
   dn_rne_div does. A non-finite weight, or e past the bound, takes the
   reference's step (which reports the weight). */
static inline int value_block_avx2(const float *p, const uint16_t *vs, size_t scale_stride,
                                   const float vsf[DN_VALUE_BLOCK], size_t m,
                                   int16_t c[DN_VALUE_BLOCK], int32_t *e)
{
    __m256 w[DN_VALUE_BLOCK / 8];
    __m256i amax = _mm256_setzero_si256();
    const __m256i mag = _mm256_set1_epi32(0x7FFFFFFF);
    for (size_t k = 0; k < DN_VALUE_BLOCK / 8; k++) {
        __m256i in = dn_avx2_tail_mask(m > 8 * k ? m - 8 * k : 0);
        __m256 pk = dn_avx2_flush(_mm256_maskload_ps(p + 8 * k, in));
        w[k] = dn_avx2_flush(_mm256_mul_ps(pk, _mm256_loadu_ps(vsf + 8 * k)));
        amax = _mm256_max_epi32(amax, _mm256_and_si256(_mm256_castps_si256(w[k]), mag));
    }
    __m128i a4 = _mm_max_epi32(_mm256_castsi256_si128(amax), _mm256_extracti128_si256(amax, 1));
    a4 = _mm_max_epi32(a4, _mm_shuffle_epi32(a4, _MM_SHUFFLE(1, 0, 3, 2)));
    a4 = _mm_max_epi32(a4, _mm_shuffle_epi32(a4, _MM_SHUFFLE(2, 3, 0, 1)));
    uint32_t top = (uint32_t)_mm_cvtsi128_si32(a4);
    if (top >= DN_EXP_BITS) return dn_attn_value_block(p, vs, scale_stride, m, c, e);
    *e = 0;
    if (top) {
        uint32_t M = (top & DN_FRAC_BITS) | 0x00800000u;
        *e = (int32_t)(top >> 23) - 150 + (M <= 127u << 17 ? 17 : 18);
    }
    if (*e <= -100 || *e >= 100) return dn_attn_value_block(p, vs, scale_stride, m, c, e);
    __m256 inv = _mm256_castsi256_ps(_mm256_set1_epi32((127 - *e) << 23));
    for (size_t k = 0; k < DN_VALUE_BLOCK / 16; k++) {
        __m256i lo = _mm256_cvtps_epi32(_mm256_mul_ps(w[2 * k], inv));
        __m256i hi = _mm256_cvtps_epi32(_mm256_mul_ps(w[2 * k + 1], inv));
        __m256i packed =
            _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256((__m256i *)(c + 16 * k), packed);
    }
    return 0;
}

/* One head's block by the reference's order, element by element: a block
   whose pieces may leave binary32's normal range, or a head's tail. */
static inline void block_scalar(const int8_t *vb, size_t stride, size_t m, const int16_t *c,
                                int32_t e, size_t i0, size_t d, float *o)
{
    for (size_t i = i0; i < d; i++) {
        int32_t sum = 0;
        for (size_t j = 0; j < m; j++) sum += c[j] * vb[j * stride + i];
        o[i] = dn_fadd(o[i], dn_attn_piece(sum, e));
    }
}

#define INT8_HEADS 4 /* heads sharing a value row's load */

/* The heads of a group whose value block takes the vector path: their code
   pairs (c_j, c_j+1) as one int32 for _madd_epi16, their exponents and
   their outputs; nv of them. */
typedef struct value_heads {
    size_t nv;
    int16_t c[INT8_HEADS][DN_VALUE_BLOCK + 1];
    int32_t pairs[INT8_HEADS][DN_VALUE_BLOCK / 2], e[INT8_HEADS];
    float *out[INT8_HEADS];
} value_heads;

/* The block step of hn heads (probabilities p + g * n, outputs out + g * d)
   for the m positions from j0 (rows vb): a head with a non-finite weight
   gets NaN, one whose pieces may leave binary32's normal range (or d below
   min_d) the reference's order; the rest go to vh. Returns 1 when a weight
   was not finite. */
static inline int value_heads_of(const float *p, size_t hn, size_t n, size_t j0, size_t m,
                                 const int8_t *vb, size_t stride, const uint16_t *vs,
                                 size_t scale_stride, size_t d, size_t min_d, float *out,
                                 value_heads *vh)
{
    int bad = 0;
    float vsf[DN_VALUE_BLOCK];
    value_scales(vs + j0 * scale_stride, scale_stride, m, vsf);
    vh->nv = 0;
    for (size_t g = 0; g < hn; g++) {
        float *o = out + g * d;
        int16_t *c = vh->c[vh->nv];
        int32_t e;
        c[DN_VALUE_BLOCK] = 0;
        if (value_block_avx2(p + g * n + j0, vs + j0 * scale_stride, scale_stride, vsf, m, c, &e)) {
            bad = 1;
            for (size_t i = 0; i < d; i++) o[i] = dn_fadd(o[i], dn_nan());
            continue;
        }
        if (e <= -100 || e >= 100 || d < min_d) {
            block_scalar(vb, stride, m, c, e, 0, d, o);
            continue;
        }
        /* the pairs (c_j, c_j+1) as _madd_epi16 reads them: x86 is little-endian */
        memcpy(vh->pairs[vh->nv], c, sizeof vh->pairs[vh->nv]);
        vh->e[vh->nv] = e;
        vh->out[vh->nv++] = o;
    }
    return bad;
}

/* The element step of a block: every element of the m rows vb for the
   heads of vh (adding each head's pieces to its output). */
typedef void (*value_elements_fn)(const int8_t *vb, size_t stride, size_t m, const value_heads *vh,
                                  size_t d);

/* The int8 weighted sum's loops around the includer's element step: heads
   INT8_HEADS at a time (one value row load serves them), blocks of
   DN_VALUE_BLOCK positions in order, the next block's rows prefetched (the
   value rows stream at the cache's stride), each block's step by
   value_heads_of (min_d: the element step's width) and `elements`; then
   each output as dn_result makes it. Returns 1 when a weight was not
   finite. */
static inline __attribute__((always_inline)) int
weighted_int8_blocks(const float *p, size_t heads, size_t n, const int8_t *v, size_t stride,
                     const uint16_t *vs, size_t scale_stride, size_t d, size_t min_d,
                     value_elements_fn elements, float *out)
{
    int bad = 0;
    memset(out, 0, heads * d * sizeof(float));
    for (size_t g0 = 0; g0 < heads; g0 += INT8_HEADS) {
        size_t hn = heads - g0 < INT8_HEADS ? heads - g0 : INT8_HEADS;
        for (size_t j0 = 0; j0 < n; j0 += DN_VALUE_BLOCK) {
            size_t m = n - j0 < DN_VALUE_BLOCK ? n - j0 : DN_VALUE_BLOCK;
            const int8_t *vb = v + j0 * stride;
            for (size_t j = j0 + DN_VALUE_BLOCK; j < j0 + 2 * DN_VALUE_BLOCK && j < n; j++)
                dn_prefetch_span(v + j * stride, d);
            value_heads vh;
            bad |= value_heads_of(p + g0 * n, hn, n, j0, m, vb, stride, vs, scale_stride, d, min_d,
                                  out + g0 * d, &vh);
            if (vh.nv) elements(vb, stride, m, &vh, d);
        }
    }
    for (size_t i = 0; i < heads * d; i++) out[i] = dn_result(out[i]);
    return bad;
}

#endif
