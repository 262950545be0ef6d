/* SPDX-License-Identifier: MIT */
/*
 * The attention module's vector path on AVX-512, bit for bit the references
 * of src/attention.c (and so the AVX2 kernels; src/x86/attention_avx2.c and
 * docs/numerics.md 13.7 say how the bits are kept: the lanes of fdot, the
 * DAZ-only MXCSR, the result rule applied once at the end).
 *
 * - scores: four query heads per pass over a key row, the row widened once
 *   for the four; lane l of a head's 32 is lane l % 16 of accumulator
 *   l / 16 % 2. The four heads' trees run together, one register per level
 *   (tree4): the tree pairs adjacent lanes, so which register holds a pair
 *   does not matter, only which lanes are paired, and IEEE addition is
 *   commutative.
 * - weighted: 32 lane accumulators per element, a tile of 64 elements,
 *   four heads sharing each value row's load, rows whole once at long
 *   contexts (attention_weighted_avx512.h).
 * - scores_int8: four query heads per pass over a key row, each head's
 *   codes multiplied by its chunk factors once per call (int16, where every
 *   product fits: always for one-word codes and factors up to 258), so a
 *   key chunk of 32 codes costs one widening and, per head, one
 *   _mm512_madd_epi16 and one add (one vpdpwssd with VNNI); the int32
 *   totals are the AVX2 kernel's (integer sums: exact in any order under
 *   the plan's bound), finished as it finishes them (attention_int8.h). A head outside that (wide factors,
 *   a query the fast plan refuses), a head size not a multiple of 32 or
 *   past 512 runs the AVX2 kernel for its group of four.
 * - weighted_int8: the AVX2 kernel's block step (attention_int8.h), then
 *   32 elements of two value rows per pair of zmm registers, the pair
 *   sums by _mm512_madd_epi16 (or vpdpwssd) as the AVX2 kernel forms them
 *   16 at a time.
 * Head sizes that are not a multiple of 32 run the AVX2 kernels.
 */
#include "../attention_kernels.h"
#include "../bits.h"
#include "attention_int8.h"
#include "avx2_common.h"
#include "decodenum/fp32.h"

#include <string.h>

#define INLINE static inline __attribute__((always_inline))
#define VNNI_INLINE static inline __attribute__((always_inline, target("avx512vnni")))
#define GROUP 4 /* heads per pass */

/* acc + the sums of a's and b's int16 pairs, lane by lane (int32 lanes
   wrapping as the integer sums allow: they never do, see the bounds below):
   two instructions, or VNNI's one vpdpwssd (its non-saturating form). The
   int8 kernels take one of the two as a parameter. */
typedef __m512i (*pair_sums_fn)(__m512i acc, __m512i a, __m512i b);

INLINE __m512i pair_sums(__m512i acc, __m512i a, __m512i b)
{
    return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
}

VNNI_INLINE __m512i pair_sums_vnni(__m512i acc, __m512i a, __m512i b)
{
    return _mm512_dpwssd_epi32(acc, a, b);
}

INLINE __m512 load16(uint32_t type, const void *row, size_t i)
{
    if (type == DN_KV_F32) return _mm512_loadu_ps((const float *)row + i);
    __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + i));
    if (type == DN_KV_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* ---- scores ---------------------------------------------------------------- */

/* Sums of adjacent pairs: within each 128-bit lane, (a0+a1, a2+a3, b0+b1, b2+b3). */
INLINE __m512 pairs(__m512 a, __m512 b)
{
    return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Sums of 128-bit lanes 0+1 and 2+3 of a, then of b. */
INLINE __m512 pairs128(__m512 a, __m512 b)
{
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* dn_avx2_tree32 of four heads' lanes (lo[h]: lanes 0-15, hi[h]: 16-31):
   lanes 0-3 of the result hold heads 0-3. */
INLINE __m128 tree4(const __m512 lo[GROUP], const __m512 hi[GROUP])
{
    /* 2 lanes: per 128-bit lane k, head h: (4k, 4k+2 | 16+4k, 16+4k+2) pairs */
    __m512 p0 = pairs(lo[0], hi[0]), p1 = pairs(lo[1], hi[1]);
    __m512 p2 = pairs(lo[2], hi[2]), p3 = pairs(lo[3], hi[3]);
    /* 4 lanes: per 128-bit lane k: head 0 (4k.., 16+4k..), head 1 (same) */
    __m512 q01 = pairs(p0, p1), q23 = pairs(p2, p3);
    /* 8 lanes: 128-bit lanes: heads 0,1 (0-7, 16-23); (8-15, 24-31); heads 2,3 likewise */
    __m512 e = pairs128(q01, q23);
    /* 16 lanes: 128-bit lanes 0 and 2: heads 0,1 then 2,3 (0-15, 16-31) */
    __m512 s = pairs128(e, e);
    /* 32 lanes: within 128-bit lanes 0 and 1: heads 0, 1 | 2, 3 */
    __m512 all = pairs(s, s);
    __m128 h01 = _mm512_castps512_ps128(all), h23 = _mm512_extractf32x4_ps(all, 1);
    return _mm_movelh_ps(h01, h23);
}

/* Scores of GROUP heads (q0..q3, some repeated when fewer) against one row. */
INLINE __m128 row_scores(uint32_t type, const float *const q[GROUP], const void *row, size_t d)
{
    __m512 lo[GROUP], hi[GROUP];
    for (int h = 0; h < GROUP; h++) lo[h] = hi[h] = _mm512_setzero_ps();
    for (size_t i = 0; i < d; i += 32) {
        __m512 k0 = load16(type, row, i), k1 = load16(type, row, i + 16);
        for (int h = 0; h < GROUP; h++) {
            lo[h] = _mm512_add_ps(lo[h], _mm512_mul_ps(_mm512_loadu_ps(q[h] + i), k0));
            hi[h] = _mm512_add_ps(hi[h], _mm512_mul_ps(_mm512_loadu_ps(q[h] + i + 16), k1));
        }
    }
    return tree4(lo, hi);
}

/* dn_avx2_tree32 of eight (row, head) lanes' sums, as tree4 for two rows at
   once: lanes 0-3 of the result hold row 0's heads 0-3, lanes 4-7 row 1's.
   The levels that tree4 runs on half-empty registers (its last two) carry
   both rows here. */
INLINE __m256 tree8(const __m512 lo[2 * GROUP], const __m512 hi[2 * GROUP])
{
    __m512 p[2 * GROUP];
    for (int c = 0; c < 2 * GROUP; c++) p[c] = pairs(lo[c], hi[c]);
    __m512 e0 = pairs128(pairs(p[0], p[1]), pairs(p[2], p[3]));
    __m512 e1 = pairs128(pairs(p[4], p[5]), pairs(p[6], p[7]));
    /* 16 lanes: 128-bit lane k holds combos 2k, 2k + 1 (lanes 0-15, 16-31) */
    __m512 s = pairs128(e0, e1);
    __m512 all = pairs(s, s);
    const __m512i at = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 0, 1, 4, 5, 8, 9, 12, 13);
    return _mm512_castps512_ps256(_mm512_permutexvar_ps(at, all));
}

/* Scores of GROUP heads against rows r0 and r1 (lanes 0-3, 4-7): each
   query load feeds both rows (row_scores loads the four heads' 128 floats
   for every row: 32 zmm loads a row beside 16 multiplies and 16 adds). */
INLINE __m256 rows2_scores(uint32_t type, const float *const q[GROUP], const void *r0,
                           const void *r1, size_t d)
{
    __m512 lo[2 * GROUP], hi[2 * GROUP];
    for (int c = 0; c < 2 * GROUP; c++) lo[c] = hi[c] = _mm512_setzero_ps();
    for (size_t i = 0; i < d; i += 32) {
        __m512 a0 = load16(type, r0, i), a1 = load16(type, r0, i + 16);
        __m512 b0 = load16(type, r1, i), b1 = load16(type, r1, i + 16);
        for (int h = 0; h < GROUP; h++) {
            __m512 ql = _mm512_loadu_ps(q[h] + i), qh = _mm512_loadu_ps(q[h] + i + 16);
            lo[h] = _mm512_add_ps(lo[h], _mm512_mul_ps(ql, a0));
            hi[h] = _mm512_add_ps(hi[h], _mm512_mul_ps(qh, a1));
            lo[GROUP + h] = _mm512_add_ps(lo[GROUP + h], _mm512_mul_ps(ql, b0));
            hi[GROUP + h] = _mm512_add_ps(hi[GROUP + h], _mm512_mul_ps(qh, b1));
        }
    }
    return tree8(lo, hi);
}

#define SCORE_AHEAD 16 /* rows prefetched ahead of the scores */
/* The query heads are copied to 64-byte aligned memory up to this size:
   every 64-byte load of a head 16 bytes past a line splits over two lines
   (a group's f16 scores over 4096 rows in the cache: 48.0 cycles a row
   against 35.7 from aligned heads). */
#define ALIGNED_Q_MAX 256

INLINE void scores_of_type(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                           size_t stride, size_t n, float scale, float *s)
{
    size_t es = type == DN_KV_F32 ? 4 : 2, rs = stride * es;
    const __m128 sc = _mm_set1_ps(scale);
    float qa[GROUP * ALIGNED_Q_MAX] __attribute__((aligned(64)));
    for (size_t g = 0; g < heads; g += GROUP) {
        size_t hn = heads - g < GROUP ? heads - g : GROUP;
        const float *qs[GROUP];
        for (size_t h = 0; h < GROUP; h++) qs[h] = q + (g + (h < hn ? h : 0)) * d;
        if (d <= ALIGNED_Q_MAX)
            for (size_t h = 0; h < GROUP; h++) qs[h] = memcpy(qa + h * d, qs[h], d * sizeof(float));
        size_t j = 0;
        for (; j + 2 <= n; j += 2) {
            const char *row = (const char *)k + j * rs;
            for (size_t f = j + SCORE_AHEAD; f < j + SCORE_AHEAD + 2 && f < n; f++)
                dn_prefetch_span((const char *)k + f * rs, d * es);
            float r[2 * GROUP];
            _mm256_storeu_ps(r, _mm256_mul_ps(rows2_scores(type, qs, row, row + rs, d),
                                              _mm256_set_m128(sc, sc)));
            for (size_t h = 0; h < hn; h++) {
                s[(g + h) * n + j] = r[h];
                s[(g + h) * n + j + 1] = r[GROUP + h];
            }
        }
        if (j < n) {
            float r[GROUP];
            _mm_storeu_ps(r, _mm_mul_ps(row_scores(type, qs, (const char *)k + j * rs, d), sc));
            for (size_t h = 0; h < hn; h++) s[(g + h) * n + j] = r[h];
        }
    }
}

INLINE void scores_sized(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                         size_t stride, size_t n, float scale, float *s)
{
    if (d == 128)
        scores_of_type(type, q, heads, 128, k, stride, n, scale, s);
    else if (d == 64)
        scores_of_type(type, q, heads, 64, k, stride, n, scale, s);
    else
        scores_of_type(type, q, heads, d, k, stride, n, scale, s);
}

/* One type's scores: a noinline function per cache type calling the
   always-inline body with its type a constant, and scores_sized with the
   common head sizes as constants: the compiler then unrolls the element
   loop and keeps the 16 accumulators and the four widened key vectors in
   registers (f16, 4 heads of 128 over one row in the cache: 15 cycles a
   row against 31 with d a variable; one function per type, not one for
   all three, for the same reason). weigh_f16, weigh_bf16 and weigh_f32
   below are split the same way. */
static __attribute__((noinline)) void scores_f16(const float *q, size_t heads, size_t d,
                                                 const void *k, size_t stride, size_t n,
                                                 float scale, float *s)
{
    scores_sized(DN_KV_F16, q, heads, d, k, stride, n, scale, s);
}

static __attribute__((noinline)) void scores_bf16(const float *q, size_t heads, size_t d,
                                                  const void *k, size_t stride, size_t n,
                                                  float scale, float *s)
{
    scores_sized(DN_KV_BF16, q, heads, d, k, stride, n, scale, s);
}

static __attribute__((noinline)) void scores_f32(const float *q, size_t heads, size_t d,
                                                 const void *k, size_t stride, size_t n,
                                                 float scale, float *s)
{
    scores_sized(DN_KV_F32, q, heads, d, k, stride, n, scale, s);
}

static void scores_avx512(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                          size_t stride, size_t n, float scale, float *s)
{
    if (d % 32 != 0) {
        dn_attention_avx2.scores(type, q, heads, d, k, stride, n, scale, s);
        return;
    }
    unsigned csr = dn_avx2_enter();
    /* DAZ reads a denormal tree result as the zero the reference stores; the
       product is flushed afterwards as fmul's is. */
    if (type == DN_KV_F16)
        scores_f16(q, heads, d, k, stride, n, dn_flush(scale), s);
    else if (type == DN_KV_BF16)
        scores_bf16(q, heads, d, k, stride, n, dn_flush(scale), s);
    else
        scores_f32(q, heads, d, k, stride, n, dn_flush(scale), s);
    dn_avx2_leave(csr, 0.0f);
    for (size_t i = 0; i < heads * n; i++) s[i] = dn_result(s[i]);
}

/* ---- the result rule, and the weighted sum ----------------------------------- */

/* result4 of 16 lanes: a denormal made its sign's zero, a NaN 0x7FC00000. */
INLINE __m512 result16(__m512 x)
{
    __m512i u = _mm512_castps_si512(x);
    __mmask16 tiny = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7F800000));
    __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_epi32(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                            _mm512_set1_epi32(0x7F800000));
    u = _mm512_mask_and_epi32(u, tiny, u, _mm512_set1_epi32((int)0x80000000));
    return _mm512_castsi512_ps(_mm512_mask_mov_epi32(u, nan, _mm512_set1_epi32(0x7FC00000)));
}

#include "attention_weighted_avx512.h"

/* ---- int8 scores ----------------------------------------------------------- */

#define PRESCALED_MAX_D 512 /* the prescaled query codes live on the stack */

/* qs[i] = fi[i / 32] * codes[i] for the d codes of a head, when every
   product fits int16; 0 when one does not. */
static int prescale(const int16_t *codes, const int32_t *fi, size_t d, int16_t *qs)
{
    for (size_t i = 0; i < d; i++) {
        int64_t v = (int64_t)fi[i / 32] * codes[i];
        if (v > 32767 || v < -32767) return 0;
        qs[i] = (int16_t)v;
    }
    return 1;
}

/* The 16 int32 lanes of a as 8 (sums of its halves). */
INLINE __m256i halves(__m512i a)
{
    return _mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1));
}

/* Lane k of the result = the sum of v[k]'s 16 lanes, for 16 vectors: pairs
   of vectors interleaved and added (32-bit, then 64-bit), then the four
   128-bit lanes. Integer sums: any order gives the same totals. */
INLINE __m512i totals16(const __m512i v[16])
{
    __m512i p[8], q[4];
    for (int m = 0; m < 8; m++)
        p[m] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * m], v[2 * m + 1]),
                                _mm512_unpackhi_epi32(v[2 * m], v[2 * m + 1]));
    for (int m = 0; m < 4; m++)
        q[m] = _mm512_add_epi32(_mm512_unpacklo_epi64(p[2 * m], p[2 * m + 1]),
                                _mm512_unpackhi_epi64(p[2 * m], p[2 * m + 1]));
    __m512i r0 = _mm512_add_epi32(_mm512_shuffle_i32x4(q[0], q[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                  _mm512_shuffle_i32x4(q[0], q[1], _MM_SHUFFLE(3, 1, 3, 1)));
    __m512i r1 = _mm512_add_epi32(_mm512_shuffle_i32x4(q[2], q[3], _MM_SHUFFLE(2, 0, 2, 0)),
                                  _mm512_shuffle_i32x4(q[2], q[3], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_add_epi32(_mm512_shuffle_i32x4(r0, r1, _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_i32x4(r0, r1, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* finish4 of 16 totals, lane 4g + r = head g against row r: key (the four
   rows' exact scales, repeated per head) and pe (each head's 2^emin,
   repeated per row) as two halves of eight doubles. */
INLINE __m512 finish16(__m512i t, __m512d key, const __m512d pe[2], float scale)
{
    __m512d v0 =
        _mm512_mul_pd(_mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(t)), key), pe[0]);
    __m512d v1 = _mm512_mul_pd(
        _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(t, 1)), key), pe[1]);
    __mmask16 zero = (__mmask16)(_mm512_cmp_pd_mask(v0, _mm512_setzero_pd(), _CMP_EQ_OQ) |
                                 (_mm512_cmp_pd_mask(v1, _mm512_setzero_pd(), _CMP_EQ_OQ) << 8));
    __m512 r =
        _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(v0)), _mm512_cvtpd_ps(v1), 1);
    r = _mm512_maskz_mov_ps((__mmask16)~zero, result16(r));
    return result16(_mm512_mul_ps(r, _mm512_set1_ps(scale)));
}

/* key_scale of four rows' binary16 scales at once: F16C widens them
   exactly (the int8 kernels run in the caller's MXCSR, and a binary16
   denormal is an f32 normal), binary64 holds them exactly; an infinite or
   NaN scale is NaN, as key_scale makes it. */
INLINE __m256d key_scales4(const uint16_t *ks, size_t scale_stride)
{
    __m128i h = _mm_setr_epi32(ks[0], ks[scale_stride], ks[2 * scale_stride], ks[3 * scale_stride]);
    __m128 f = _mm_cvtph_ps(_mm_packus_epi32(h, h));
    __m128i top = _mm_set1_epi32(0x7C00);
    __m128 inf_nan = _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(h, top), top));
    return _mm256_cvtps_pd(_mm_blendv_ps(f, _mm_castsi128_ps(_mm_set1_epi32(0x7FC00000)), inf_nan));
}

/* Rows j .. j + 3 of the prescaled group: the four heads' sums against four
   rows at once (16 accumulators, each query load feeding four rows), their
   totals and finish as one vector. The same totals and per-lane steps as
   the row-at-a-time loop below, so the same bits. */
INLINE void prescaled_four_rows(const int16_t *qs, size_t hn, const __m512d pe[2], size_t d,
                                const int8_t *row, size_t stride, const uint16_t *ks,
                                size_t scale_stride, size_t n, float sc, float *s,
                                pair_sums_fn sums)
{
    __m512i acc[GROUP * 4];
    for (int a = 0; a < GROUP * 4; a++) acc[a] = _mm512_setzero_si512();
    for (size_t i = 0; i < d; i += 32) {
        __m512i kc[4];
        for (int r = 0; r < 4; r++)
            kc[r] = _mm512_cvtepi8_epi16(
                _mm256_loadu_si256((const __m256i *)(row + (size_t)r * stride + i)));
        for (int g = 0; g < GROUP; g++) {
            __m512i qv = _mm512_load_si512((const void *)(qs + g * d + i));
            for (int r = 0; r < 4; r++) acc[4 * g + r] = sums(acc[4 * g + r], qv, kc[r]);
        }
    }
    __m256d k4 = key_scales4(ks, scale_stride);
    float out[GROUP * 4];
    _mm512_storeu_ps(out, finish16(totals16(acc), _mm512_broadcast_f64x4(k4), pe, sc));
    for (size_t g = 0; g < hn; g++) memcpy(s + g * n, out + 4 * g, 4 * sizeof(float));
}

/* The scores of a group of four prescaled heads (hn of them real; the
   others' codes are 0) over n key rows: four rows at a time, the last few
   one at a time. */
INLINE void prescaled_rows(const int16_t *qs, size_t hn, const double *pe, size_t d,
                           const int8_t *k, size_t stride, const uint16_t *ks, size_t scale_stride,
                           size_t n, float sc, float *s, pair_sums_fn sums)
{
    const __m512d pe8[2] = {_mm512_setr_pd(pe[0], pe[0], pe[0], pe[0], pe[1], pe[1], pe[1], pe[1]),
                            _mm512_setr_pd(pe[2], pe[2], pe[2], pe[2], pe[3], pe[3], pe[3], pe[3])};
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        for (size_t f = j + 8; f < j + 12 && f < n; f++) dn_prefetch_span(k + f * stride, d);
        prescaled_four_rows(qs, hn, pe8, d, k + j * stride, stride, ks + j * scale_stride,
                            scale_stride, n, sc, s + j, sums);
    }
    __m256d pe4 = _mm256_loadu_pd(pe);
    for (; j < n; j++) {
        const int8_t *row = k + j * stride;
        __m512i acc[GROUP];
        for (int g = 0; g < GROUP; g++) acc[g] = _mm512_setzero_si512();
        for (size_t i = 0; i < d; i += 32) {
            __m512i kc = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(row + i)));
            for (int g = 0; g < GROUP; g++)
                acc[g] = sums(acc[g], _mm512_load_si512((const void *)(qs + g * d + i)), kc);
        }
        float out[GROUP];
        __m128i t = hsum4(halves(acc[0]), halves(acc[1]), halves(acc[2]), halves(acc[3]));
        _mm_storeu_ps(out, finish4(t, key_scale(ks[j * scale_stride]), pe4, sc));
        for (size_t g = 0; g < hn; g++) s[g * n + j] = out[g];
    }
}

/* Group g0's heads prescaled into qs and their 2^emin into pe; 0 when one
   of them cannot be. */
static int prescale_group(const dn_act_row *q, size_t hn, size_t d, int16_t *qs, double pe[GROUP])
{
    int32_t fi[DN_ATTN_MAX_HEAD_DIM / 32];
    for (size_t g = 0; g < GROUP; g++) {
        if (g >= hn) {
            memset(qs + g * d, 0, d * sizeof *qs);
            pe[g] = pe[0];
            continue;
        }
        dn_attn_plan plan;
        dn_attn_plan_of(&q[g], d, &plan);
        if (!plan.fast || !int32_factors(&plan, q[g].codes, fi) ||
            !prescale(q[g].codes, fi, d, qs + g * d))
            return 0;
        pe[g] = pow2(plan.emin);
    }
    return 1;
}

INLINE void scores_int8_groups(const dn_act_row *q, size_t heads, size_t d, const int8_t *k,
                               size_t stride, const uint16_t *ks, size_t scale_stride, size_t n,
                               float scale, float *s, pair_sums_fn sums)
{
    int16_t qs[GROUP * PRESCALED_MAX_D] __attribute__((aligned(64)));
    double pe[GROUP];
    for (size_t g0 = 0; g0 < heads; g0 += GROUP) {
        size_t hn = heads - g0 < GROUP ? heads - g0 : GROUP;
        if (d % 32 == 0 && d <= PRESCALED_MAX_D && prescale_group(q + g0, hn, d, qs, pe)) {
            /* d = 128 as a constant: the chunk loop unrolled (as the f16 scores) */
            if (d == 128)
                prescaled_rows(qs, hn, pe, 128, k, stride, ks, scale_stride, n, dn_flush(scale),
                               s + g0 * n, sums);
            else
                prescaled_rows(qs, hn, pe, d, k, stride, ks, scale_stride, n, dn_flush(scale),
                               s + g0 * n, sums);
        } else
            dn_attention_avx2.scores_int8(q + g0, hn, d, k, stride, ks, scale_stride, n, scale,
                                          s + g0 * n);
    }
}

static void scores_int8_avx512(const dn_act_row *q, size_t heads, size_t d, const int8_t *k,
                               size_t stride, const uint16_t *ks, size_t scale_stride, size_t n,
                               float scale, float *s)
{
    scores_int8_groups(q, heads, d, k, stride, ks, scale_stride, n, scale, s, pair_sums);
}

static __attribute__((target("avx512vnni"))) void
scores_int8_vnni(const dn_act_row *q, size_t heads, size_t d, const int8_t *k, size_t stride,
                 const uint16_t *ks, size_t scale_stride, size_t n, float scale, float *s)
{
    scores_int8_groups(q, heads, d, k, stride, ks, scale_stride, n, scale, s, pair_sums_vnni);
}

/* ---- the int8 weighted sum ------------------------------------------------- */

/* dn_avx2_flush on 16 lanes: a denormal made its sign's zero. */
INLINE __m512 flush16(__m512 x)
{
    __mmask16 tiny = _mm512_testn_epi32_mask(_mm512_castps_si512(x), _mm512_set1_epi32(0x7F800000));
    return _mm512_castsi512_ps(_mm512_mask_and_epi32(
        _mm512_castps_si512(x), tiny, _mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000)));
}

/* out[0..16) = fadd(out, S * 2^e), S the 16 block sums in element order:
   dn_attn_piece rounds S * 2^e once, and here it is exact in binary32
   (|S| < 2^20, -100 < e < 100: value_heads_of sends other blocks to the
   reference's order), so one conversion and one multiply give it, where
   binary64 products and conversions took 1.3x the time of the whole
   weighted sum (4 heads of 128 over 4096 rows in the cache: 26.5 -> 20.1
   cycles a row). p2 = 2^e. */
INLINE void add_pieces16(__m512i sums, __m512 p2, float *out)
{
    __m512 piece = _mm512_mul_ps(_mm512_cvtepi32_ps(sums), p2);
    _mm512_storeu_ps(out, flush16(_mm512_add_ps(_mm512_loadu_ps(out), piece)));
}

/* Elements i..i+32 of a block's m rows for the heads of vh: block16 of the
   AVX2 kernel on 32 elements. Per 128-bit lane L, unpack leaves elements
   8L..8L+3 in s0 and 8L+4..8L+7 in s1; two permutes restore the order. */
INLINE void block32(const int8_t *v, size_t stride, size_t m, const value_heads *vh, size_t i,
                    pair_sums_fn sums)
{
    __m512i s0[INT8_HEADS], s1[INT8_HEADS];
    for (size_t g = 0; g < INT8_HEADS; g++) s0[g] = s1[g] = _mm512_setzero_si512();
    for (size_t j = 0; j < m; j += 2) {
        __m512i a = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(v + j * stride + i)));
        __m512i b = j + 1 < m ? _mm512_cvtepi8_epi16(
                                    _mm256_loadu_si256((const __m256i *)(v + (j + 1) * stride + i)))
                              : _mm512_setzero_si512();
        __m512i lo = _mm512_unpacklo_epi16(a, b), hi = _mm512_unpackhi_epi16(a, b);
#pragma GCC unroll 4
        for (size_t g = 0; g < INT8_HEADS; g++) {
            if (g >= vh->nv) break;
            __m512i cc = _mm512_set1_epi32(vh->pairs[g][j / 2]);
            s0[g] = sums(s0[g], lo, cc);
            s1[g] = sums(s1[g], hi, cc);
        }
    }
    const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i second =
        _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    for (size_t g = 0; g < vh->nv; g++) {
        __m512 p2 = _mm512_set1_ps(pow2f(vh->e[g]));
        add_pieces16(_mm512_permutex2var_epi32(s0[g], first, s1[g]), p2, vh->out[g] + i);
        add_pieces16(_mm512_permutex2var_epi32(s0[g], second, s1[g]), p2, vh->out[g] + i + 16);
    }
}

INLINE void block_elements(const int8_t *vb, size_t stride, size_t m, const value_heads *vh,
                           size_t d)
{
    for (size_t i = 0; i < d; i += 32) block32(vb, stride, m, vh, i, pair_sums);
}

/* Row r of a block's m rows from element i as 64 bytes; zeros past m (a
   row that is not there is never read; its codes are 0). */
VNNI_INLINE __m512i value_row64(const int8_t *v, size_t stride, size_t m, size_t r, size_t i)
{
    return r < m ? _mm512_loadu_si512((const void *)(v + r * stride + i)) : _mm512_setzero_si512();
}

/* Out elements i..i+64 += the block's pieces for the heads of vh, four
   positions a step: the four rows' bytes interleaved per element (unpacks of
   bytes, then of 16-bit pairs: accumulator k holds, in 128-bit lane L,
   elements 16 L + 4 k .. 16 L + 4 k + 3), each head's four codes (0..127)
   as one broadcast unsigned quad, vpdpbusd summing the four products into
   the element's int32 lane. The block sums are the same integers as
   block32's (each below 2^19: 32 products of at most 127 * 128), so the
   pieces and outputs are the same. */
VNNI_INLINE void block64_quads(const int8_t *v, size_t stride, size_t m, const value_heads *vh,
                               const uint32_t quads[INT8_HEADS][DN_VALUE_BLOCK / 4], size_t i)
{
    __m512i acc[INT8_HEADS][4];
    for (size_t g = 0; g < INT8_HEADS; g++)
        for (int k = 0; k < 4; k++) acc[g][k] = _mm512_setzero_si512();
    for (size_t j = 0; j < m; j += 4) {
        __m512i r0 = value_row64(v, stride, m, j, i), r1 = value_row64(v, stride, m, j + 1, i);
        __m512i r2 = value_row64(v, stride, m, j + 2, i), r3 = value_row64(v, stride, m, j + 3, i);
        __m512i a_lo = _mm512_unpacklo_epi8(r0, r1), a_hi = _mm512_unpackhi_epi8(r0, r1);
        __m512i b_lo = _mm512_unpacklo_epi8(r2, r3), b_hi = _mm512_unpackhi_epi8(r2, r3);
        __m512i e[4] = {_mm512_unpacklo_epi16(a_lo, b_lo), _mm512_unpackhi_epi16(a_lo, b_lo),
                        _mm512_unpacklo_epi16(a_hi, b_hi), _mm512_unpackhi_epi16(a_hi, b_hi)};
#pragma GCC unroll 4
        for (size_t g = 0; g < INT8_HEADS; g++) {
            if (g >= vh->nv) break;
            __m512i c = _mm512_set1_epi32((int)quads[g][j / 4]);
            for (int k = 0; k < 4; k++) acc[g][k] = _mm512_dpbusd_epi32(acc[g][k], c, e[k]);
        }
    }
    for (size_t g = 0; g < vh->nv; g++) {
        __m512 p2 = _mm512_set1_ps(pow2f(vh->e[g]));
        __m512i t0 = _mm512_shuffle_i32x4(acc[g][0], acc[g][1], _MM_SHUFFLE(1, 0, 1, 0));
        __m512i t1 = _mm512_shuffle_i32x4(acc[g][2], acc[g][3], _MM_SHUFFLE(1, 0, 1, 0));
        __m512i t2 = _mm512_shuffle_i32x4(acc[g][0], acc[g][1], _MM_SHUFFLE(3, 2, 3, 2));
        __m512i t3 = _mm512_shuffle_i32x4(acc[g][2], acc[g][3], _MM_SHUFFLE(3, 2, 3, 2));
        float *o = vh->out[g] + i;
        add_pieces16(_mm512_shuffle_i32x4(t0, t1, _MM_SHUFFLE(2, 0, 2, 0)), p2, o);
        add_pieces16(_mm512_shuffle_i32x4(t0, t1, _MM_SHUFFLE(3, 1, 3, 1)), p2, o + 16);
        add_pieces16(_mm512_shuffle_i32x4(t2, t3, _MM_SHUFFLE(2, 0, 2, 0)), p2, o + 32);
        add_pieces16(_mm512_shuffle_i32x4(t2, t3, _MM_SHUFFLE(3, 1, 3, 1)), p2, o + 48);
    }
}

/* Every element of a block for the heads of vh: 64 at a time by
   block64_quads when every head's codes are non-negative (probabilities
   times value scales: always, but for a cache whose scales a caller made
   negative), the rest 32 at a time by block32 with vpdpwssd. */
VNNI_INLINE void block_elements_vnni(const int8_t *vb, size_t stride, size_t m,
                                     const value_heads *vh, size_t d)
{
    uint32_t quads[INT8_HEADS][DN_VALUE_BLOCK / 4];
    int unsigned_codes = 1;
    for (size_t g = 0; g < vh->nv; g++) {
        __m512i c = _mm512_loadu_si512((const void *)vh->c[g]); /* 32 codes, |c| <= 127 */
        unsigned_codes &= _mm512_movepi16_mask(c) == 0;
        _mm256_storeu_si256((__m256i *)quads[g], _mm512_cvtepi16_epi8(c));
    }
    size_t i = 0;
    if (unsigned_codes)
        for (; i + 64 <= d; i += 64) block64_quads(vb, stride, m, vh, quads, i);
    for (; i < d; i += 32) block32(vb, stride, m, vh, i, pair_sums_vnni);
}

static int weighted_int8_avx512(const float *p, size_t heads, size_t n, const int8_t *v,
                                size_t stride, const uint16_t *vs, size_t scale_stride, size_t d,
                                float *out)
{
    if (d % 32 != 0)
        return dn_attention_avx2.weighted_int8(p, heads, n, v, stride, vs, scale_stride, d, out);
    return weighted_int8_blocks(p, heads, n, v, stride, vs, scale_stride, d, 32, block_elements,
                                out);
}

static __attribute__((target("avx512vnni"))) int
weighted_int8_vnni(const float *p, size_t heads, size_t n, const int8_t *v, size_t stride,
                   const uint16_t *vs, size_t scale_stride, size_t d, float *out)
{
    if (d % 32 != 0)
        return dn_attention_avx2.weighted_int8(p, heads, n, v, stride, vs, scale_stride, d, out);
    if (d == 128) /* a constant: the element loops unrolled (as the f16 scores) */
        return weighted_int8_blocks(p, heads, n, v, stride, vs, scale_stride, 128, 32,
                                    block_elements_vnni, out);
    return weighted_int8_blocks(p, heads, n, v, stride, vs, scale_stride, d, 32,
                                block_elements_vnni, out);
}

const dn_attention_kernels dn_attention_avx512 = {
    .scores = scores_avx512,
    .weighted = weighted_avx512,
    .scores_int8 = scores_int8_avx512,
    .weighted_int8 = weighted_int8_avx512,
};

/* The same kernels with the int8 pair sums by VNNI's vpdpwssd (one
   instruction for madd + add): registered in place of the table above when
   the CPU has AVX512_VNNI (src/dispatch.c). */
const dn_attention_kernels dn_attention_avx512vnni = {
    .scores = scores_avx512,
    .weighted = weighted_avx512,
    .scores_int8 = scores_int8_vnni,
    .weighted_int8 = weighted_int8_vnni,
};
