/* SPDX-License-Identifier: MIT */
/*
 * The attention module on AVX2 (+F16C): each kernel reproduces its reference
 * in src/attention.c bit for bit (docs/numerics.md 13.7 says why).
 *
 * - scores_avx2: per position, per query head, the lanes of fdot as the fp32
 *   kernels keep them (lane l is lane l % 8 of acc<l / 8>), the row widened
 *   in registers (F16C for binary16, a shift for bfloat16), under the
 *   DAZ-only MXCSR; a tail updates only the lanes it has elements for.
 * - weighted_avx2: 32 lane accumulators per output element, a tile of 32
 *   elements at a time and up to four heads sharing each value row's load
 *   (whole tiles a block of 128 positions lane by lane, the lane's
 *   accumulators in registers over its four rows); the lanes fold with the
 *   tree as 32 vectors, element by element.
 * - scores_int8_avx2: integer chunk sums by _mm256_madd_epi16, combined in
 *   binary64 under the query's fast plan (exact), else the reference.
 * - weighted_int8_avx2: the block step (weights, power-of-two scale,
 *   codes), then pairs of positions by _mm256_madd_epi16 in int32.
 * - cache_row_avx2: the int8 cache's row, 32 codes a step after the
 *   reference's scalar scale step.
 */
#include "../attention_kernels.h"
#include "../bits.h"
#include "../fp32_kernels.h"
#include "decodenum/fp32.h"
#include "attention_int8.h"
#include "avx2_common.h"

#include <string.h>

/* ---- widening cached elements -------------------------------------------------------- */

static inline __m256 load8(uint32_t type, const void *row, size_t i)
{
    if (type == DN_KV_F16)
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)row + i)));
    if (type == DN_KV_BF16) {
        __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)row + i));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    return _mm256_loadu_ps((const float *)row + i);
}

/* The first `count` (< 8) elements from i, the rest +0; never reads past them. */
static inline __m256 load_part(uint32_t type, const void *row, size_t i, size_t count)
{
    uint16_t h[8] = {0};
    float f[8] = {0};
    if (type == DN_KV_F32) {
        memcpy(f, (const float *)row + i, count * sizeof(float));
        return _mm256_loadu_ps(f);
    }
    memcpy(h, (const uint16_t *)row + i, count * sizeof(uint16_t));
    return load8(type, h, 0);
}

/* ---- scores --------------------------------------------------------------------------- */

/* acc + q[i..]*row[i..] over `left` elements (8 or more: all 8), only the
   lanes with elements changed. */
static inline __m256 lane_add(__m256 acc, uint32_t type, const float *q, const void *row, size_t i,
                              size_t left)
{
    if (left >= 8)
        return _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(q + i), load8(type, row, i)));
    if (left == 0) return acc;
    float qt[8] = {0};
    memcpy(qt, q + i, left * sizeof(float));
    __m256 sum =
        _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(qt), load_part(type, row, i, left)));
    return _mm256_blendv_ps(acc, sum, _mm256_castsi256_ps(dn_avx2_tail_mask(left)));
}

static inline __attribute__((always_inline)) float dot_row(uint32_t type, const float *q,
                                                           const void *row, size_t d)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= d; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(q + i), load8(type, row, i)));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(q + i + 8), load8(type, row, i + 8)));
        a2 =
            _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(q + i + 16), load8(type, row, i + 16)));
        a3 =
            _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(q + i + 24), load8(type, row, i + 24)));
    }
    if (i < d) {
        size_t left = d - i;
        a0 = lane_add(a0, type, q, row, i, left);
        a1 = lane_add(a1, type, q, row, i + 8, left > 8 ? left - 8 : 0);
        a2 = lane_add(a2, type, q, row, i + 16, left > 16 ? left - 16 : 0);
        a3 = lane_add(a3, type, q, row, i + 24, left > 24 ? left - 24 : 0);
    }
    return dn_avx2_tree32(a0, a1, a2, a3);
}

/* Two heads' dots with one row, each in its own four accumulators: the
   row's chunks are widened once for both. */
static inline __attribute__((always_inline)) void dot_row2(uint32_t type, const float *q0,
                                                           const float *q1, const void *row,
                                                           size_t d, float *r0, float *r1)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    size_t i = 0;
    for (; i + 32 <= d; i += 32) {
        __m256 k0 = load8(type, row, i), k1 = load8(type, row, i + 8);
        __m256 k2 = load8(type, row, i + 16), k3 = load8(type, row, i + 24);
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(q0 + i), k0));
        b0 = _mm256_add_ps(b0, _mm256_mul_ps(_mm256_loadu_ps(q1 + i), k0));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(q0 + i + 8), k1));
        b1 = _mm256_add_ps(b1, _mm256_mul_ps(_mm256_loadu_ps(q1 + i + 8), k1));
        a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(q0 + i + 16), k2));
        b2 = _mm256_add_ps(b2, _mm256_mul_ps(_mm256_loadu_ps(q1 + i + 16), k2));
        a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(q0 + i + 24), k3));
        b3 = _mm256_add_ps(b3, _mm256_mul_ps(_mm256_loadu_ps(q1 + i + 24), k3));
    }
    if (i < d) {
        size_t left = d - i;
        a0 = lane_add(a0, type, q0, row, i, left);
        a1 = lane_add(a1, type, q0, row, i + 8, left > 8 ? left - 8 : 0);
        a2 = lane_add(a2, type, q0, row, i + 16, left > 16 ? left - 16 : 0);
        a3 = lane_add(a3, type, q0, row, i + 24, left > 24 ? left - 24 : 0);
        b0 = lane_add(b0, type, q1, row, i, left);
        b1 = lane_add(b1, type, q1, row, i + 8, left > 8 ? left - 8 : 0);
        b2 = lane_add(b2, type, q1, row, i + 16, left > 16 ? left - 16 : 0);
        b3 = lane_add(b3, type, q1, row, i + 24, left > 24 ? left - 24 : 0);
    }
    *r0 = dn_avx2_tree32(a0, a1, a2, a3);
    *r1 = dn_avx2_tree32(b0, b1, b2, b3);
}

static inline __attribute__((always_inline)) void scores_of_type(uint32_t type, const float *q,
                                                                 size_t heads, size_t d,
                                                                 const void *k, size_t stride,
                                                                 size_t n, float scale, float *s)
{
    size_t es = type == DN_KV_F32 ? 4 : 2;
    for (size_t j = 0; j < n; j++) {
        const void *row = (const char *)k + j * stride * es;
        if (j + 8 < n) dn_prefetch_span((const char *)k + (j + 8) * stride * es, d * es);
        /* DAZ reads a denormal tree result as the zero the reference
           stores; the product is flushed afterwards as fmul's is. */
        size_t g = 0;
        for (; g + 2 <= heads; g += 2) {
            float r0, r1;
            dot_row2(type, q + g * d, q + (g + 1) * d, row, d, &r0, &r1);
            s[g * n + j] = r0 * scale;
            s[(g + 1) * n + j] = r1 * scale;
        }
        if (g < heads) s[g * n + j] = dot_row(type, q + g * d, row, d) * scale;
    }
}

static inline __attribute__((always_inline)) void scores_sized(uint32_t type, const float *q,
                                                               size_t heads, size_t d,
                                                               const void *k, size_t stride,
                                                               size_t n, float scale, float *s)
{
    if (d == 128)
        scores_of_type(type, q, heads, 128, k, stride, n, scale, s);
    else if (d == 64)
        scores_of_type(type, q, heads, 64, k, stride, n, scale, s);
    else
        scores_of_type(type, q, heads, d, k, stride, n, scale, s);
}

/* One type's scores: a noinline function per cache type calling the
   always-inline body with its type a constant, so that each type's loops
   get a register allocation of their own, not one shared by the three
   types; scores_sized makes head sizes 64 and 128 constants too (the
   element loop unrolled; measured on the AVX-512 kernel: 61.6 -> 37.8
   cycles a row of four heads of 128). weigh_f16, weigh_bf16 and weigh_f32
   below are split the same way for the same reason. */
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

static void scores_avx2(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                        size_t stride, size_t n, float scale, float *s)
{
    unsigned csr = dn_avx2_enter();
    if (type == DN_KV_F16)
        scores_f16(q, heads, d, k, stride, n, dn_flush(scale), s);
    else if (type == DN_KV_BF16)
        scores_bf16(q, heads, d, k, stride, n, dn_flush(scale), s);
    else
        scores_f32(q, heads, d, k, stride, n, dn_flush(scale), s);
    dn_avx2_leave(csr, 0.0f);
    for (size_t i = 0; i < heads * n; i++) s[i] = dn_result(s[i]);
}

/* ---- the weighted sum ------------------------------------------------------------------ */

#define TILE 32 /* elements per pass */
#define HEADS 4 /* heads sharing a value row's load */

/* lanes a[0..32) += p * x0..x3 */
static inline __attribute__((always_inline)) void lane_update(float *a, __m256 p, __m256 x0,
                                                              __m256 x1, __m256 x2, __m256 x3)
{
    _mm256_store_ps(a, _mm256_add_ps(_mm256_load_ps(a), _mm256_mul_ps(p, x0)));
    _mm256_store_ps(a + 8, _mm256_add_ps(_mm256_load_ps(a + 8), _mm256_mul_ps(p, x1)));
    _mm256_store_ps(a + 16, _mm256_add_ps(_mm256_load_ps(a + 16), _mm256_mul_ps(p, x2)));
    _mm256_store_ps(a + 24, _mm256_add_ps(_mm256_load_ps(a + 24), _mm256_mul_ps(p, x3)));
}

/* The value row's elements i0..i0+w (w <= TILE) widened, +0 past w. */
static inline __attribute__((always_inline)) void load_tile(uint32_t type, const void *row,
                                                            size_t i0, size_t w, __m256 x[TILE / 8])
{
    if (w == TILE) {
        for (size_t c = 0; c < TILE / 8; c++) x[c] = load8(type, row, i0 + 8 * c);
        return;
    }
    for (size_t c = 0; c < TILE / 8; c++)
        x[c] = 8 * c + 8 <= w ? load8(type, row, i0 + 8 * c)
               : 8 * c < w    ? load_part(type, row, i0 + 8 * c, w - 8 * c)
                              : _mm256_setzero_ps();
}

/* Elements i0.. (w <= TILE) of n value rows into the lanes of HN heads
   (position j in lane j % 32). */
static inline __attribute__((always_inline)) void weigh_tile(uint32_t type, const float *p,
                                                             size_t hn, size_t n, const void *v,
                                                             size_t stride, size_t i0, size_t w,
                                                             float acc[HEADS][DN_LANES][TILE])
{
    size_t es = type == DN_KV_F32 ? 4 : 2;
    for (size_t j = 0; j < n; j++) {
        const char *row = (const char *)v + j * stride * es;
        if (j + 8 < n) dn_prefetch_span(row + 8 * stride * es + i0 * es, w * es);
        __m256 x[TILE / 8];
        load_tile(type, row, i0, w, x);
        size_t l = j % DN_LANES;
        switch (hn) {
        case 4:
            lane_update(acc[3][l], _mm256_broadcast_ss(&p[3 * n + j]), x[0], x[1], x[2],
                        x[3]); /* fall through */
        case 3:
            lane_update(acc[2][l], _mm256_broadcast_ss(&p[2 * n + j]), x[0], x[1], x[2],
                        x[3]); /* fall through */
        case 2:
            lane_update(acc[1][l], _mm256_broadcast_ss(&p[n + j]), x[0], x[1], x[2],
                        x[3]); /* fall through */
        default: lane_update(acc[0][l], _mm256_broadcast_ss(&p[j]), x[0], x[1], x[2], x[3]);
        }
    }
}

#define LANE_ROWS 4 /* positions per lane per block: a block of 128 positions */
#define BLOCK_ROWS (DN_LANES * LANE_ROWS)

/* Lane l of hn heads over `count` rows of that lane (rows j, j + 32, ...,
   in order: the reference's sums), the 16 elements from i (half a tile):
   the lane's accumulators stay in eight registers across the rows, where
   weigh_tile loads and stores them for every row (the AVX-512 kernel's
   recipe, docs/attention.md; 16 elements, not a tile, so that the
   accumulators, two widened vectors and a weight fit 16 registers). */
static inline __attribute__((always_inline)) void weigh_lane16(uint32_t type, const float *p,
                                                               size_t hn, size_t n, const char *row,
                                                               size_t rstep, size_t j, size_t count,
                                                               size_t i, float *const lane[HEADS])
{
    __m256 a[HEADS][2];
    for (size_t h = 0; h < HEADS; h++)
        for (size_t c = 0; c < 2; c++)
            a[h][c] = h < hn ? _mm256_load_ps(lane[h] + 8 * c) : _mm256_setzero_ps();
    for (size_t r = 0; r < count; r++, row += DN_LANES * rstep, j += DN_LANES) {
        __m256 x0 = load8(type, row, i), x1 = load8(type, row, i + 8);
        for (size_t h = 0; h < HEADS; h++) {
            if (h >= hn) break;
            __m256 pw = _mm256_broadcast_ss(&p[h * n + j]);
            a[h][0] = _mm256_add_ps(a[h][0], _mm256_mul_ps(pw, x0));
            a[h][1] = _mm256_add_ps(a[h][1], _mm256_mul_ps(pw, x1));
        }
    }
    for (size_t h = 0; h < hn; h++)
        for (size_t c = 0; c < 2; c++) _mm256_store_ps(lane[h] + 8 * c, a[h][c]);
}

/* A whole tile (elements i0..i0+TILE) of n value rows into the lanes of hn
   heads, a block of BLOCK_ROWS positions at a time, lane by lane, the next
   block's rows prefetched meanwhile (a lane's share per lane step). */
static inline __attribute__((always_inline)) void weigh_blocks(uint32_t type, const float *p,
                                                               size_t hn, size_t n, const void *v,
                                                               size_t stride, size_t i0,
                                                               float acc[HEADS][DN_LANES][TILE])
{
    size_t es = type == DN_KV_F32 ? 4 : 2, rstep = stride * es;
    const char *base = (const char *)v;
    for (size_t k = 0; k < n && k < BLOCK_ROWS; k++)
        dn_prefetch_span(base + k * rstep + i0 * es, TILE * es);
    for (size_t j0 = 0; j0 < n; j0 += BLOCK_ROWS)
        for (size_t l = 0; l < DN_LANES; l++) {
            size_t f = j0 + BLOCK_ROWS + LANE_ROWS * l;
            for (size_t k = f; k < f + LANE_ROWS && k < n; k++)
                dn_prefetch_span(base + k * rstep + i0 * es, TILE * es);
            if (j0 + l >= n) break;
            size_t count = (n - j0 - l + DN_LANES - 1) / DN_LANES;
            if (count > LANE_ROWS) count = LANE_ROWS;
            const char *row = base + (j0 + l) * rstep;
            for (size_t half = 0; half < 2; half++) {
                float *lane[HEADS] = {acc[0][l] + 16 * half, acc[1][l] + 16 * half,
                                      acc[2][l] + 16 * half, acc[3][l] + 16 * half};
                if (hn == HEADS) /* the common case, compiled with hn a constant */
                    weigh_lane16(type, p, HEADS, n, row, rstep, j0 + l, count, i0 + 16 * half,
                                 lane);
                else
                    weigh_lane16(type, p, hn, n, row, rstep, j0 + l, count, i0 + 16 * half, lane);
            }
        }
}

/* One type's whole tiles, a function of its own (as scores_f16). */
static __attribute__((noinline)) void weigh_f16(const float *p, size_t hn, size_t n, const void *v,
                                                size_t stride, size_t i0,
                                                float acc[HEADS][DN_LANES][TILE])
{
    weigh_blocks(DN_KV_F16, p, hn, n, v, stride, i0, acc);
}

static __attribute__((noinline)) void weigh_bf16(const float *p, size_t hn, size_t n, const void *v,
                                                 size_t stride, size_t i0,
                                                 float acc[HEADS][DN_LANES][TILE])
{
    weigh_blocks(DN_KV_BF16, p, hn, n, v, stride, i0, acc);
}

static __attribute__((noinline)) void weigh_f32(const float *p, size_t hn, size_t n, const void *v,
                                                size_t stride, size_t i0,
                                                float acc[HEADS][DN_LANES][TILE])
{
    weigh_blocks(DN_KV_F32, p, hn, n, v, stride, i0, acc);
}

/* Elements i0.. (w <= TILE) of the lanes of hn heads: whole tiles by the
   blocks, a tile short of TILE row by row (weigh_tile). */
static void weigh_any(uint32_t type, const float *p, size_t hn, size_t n, const void *v,
                      size_t stride, size_t i0, size_t w, float acc[HEADS][DN_LANES][TILE])
{
    if (w == TILE && type == DN_KV_F16)
        weigh_f16(p, hn, n, v, stride, i0, acc);
    else if (w == TILE && type == DN_KV_BF16)
        weigh_bf16(p, hn, n, v, stride, i0, acc);
    else if (w == TILE)
        weigh_f32(p, hn, n, v, stride, i0, acc);
    else if (type == DN_KV_F16)
        weigh_tile(DN_KV_F16, p, hn, n, v, stride, i0, w, acc);
    else if (type == DN_KV_BF16)
        weigh_tile(DN_KV_BF16, p, hn, n, v, stride, i0, w, acc);
    else
        weigh_tile(DN_KV_F32, p, hn, n, v, stride, i0, w, acc);
}

/* The tree over the 32 lanes of 8 elements at once (vertical adds in the
   tree's order), flushed, into out. */
static void fold8(float lanes[DN_LANES][TILE], size_t c, float *out, size_t count)
{
    __m256 l[DN_LANES];
    for (size_t i = 0; i < DN_LANES; i++) l[i] = _mm256_load_ps(lanes[i] + 8 * c);
    for (size_t width = DN_LANES; width > 1; width /= 2)
        for (size_t i = 0; i < width / 2; i++) l[i] = _mm256_add_ps(l[2 * i], l[2 * i + 1]);
    float r[8];
    _mm256_storeu_ps(r, l[0]);
    for (size_t i = 0; i < count; i++) out[i] = r[i];
}

static void weighted_avx2(uint32_t type, const float *p, size_t heads, size_t n, const void *v,
                          size_t stride, size_t d, float *out)
{
    float acc[HEADS][DN_LANES][TILE] __attribute__((aligned(32)));
    unsigned csr = dn_avx2_enter();
    for (size_t g0 = 0; g0 < heads; g0 += HEADS) {
        size_t hn = heads - g0 < HEADS ? heads - g0 : HEADS;
        for (size_t i0 = 0; i0 < d; i0 += TILE) {
            size_t w = d - i0 < TILE ? d - i0 : TILE;
            memset(acc, 0, sizeof acc);
            weigh_any(type, p + g0 * n, hn, n, v, stride, i0, w, acc);
            for (size_t g = 0; g < hn; g++)
                for (size_t c = 0; c * 8 < w; c++)
                    fold8(acc[g], c, out + (g0 + g) * d + i0 + 8 * c,
                          w - 8 * c < 8 ? w - 8 * c : 8);
        }
    }
    dn_avx2_leave(csr, 0.0f);
    for (size_t i = 0; i < heads * d; i++) out[i] = dn_result(out[i]);
}

/* Chunk c (32 codes) of a key row widened to int16 in k[0], k[1]; a tail
   chunk is read through a zero-padded copy, so nothing past the row is read. */
static inline void key_chunk(const int8_t *key, size_t c, size_t full, size_t d, __m256i k[2])
{
    const int8_t *p = key + 32 * c;
    int8_t tmp[32];
    if (c >= full) {
        memset(tmp, 0, sizeof tmp);
        memcpy(tmp, p, d - 32 * c);
        p = tmp;
    }
    k[0] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p));
    k[1] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(p + 16)));
}

/* Chunk c of a query's codes against the key row's int8 codes: eight lanes
   of pair sums. |q * k| <= 32767 * 128, a pair below 2^24, eight pairs
   below 2^27. */
static inline __m256i chunk_pairs(const int16_t *codes, const int8_t *key, size_t c, size_t full,
                                  size_t d)
{
    __m256i k[2];
    key_chunk(key, c, full, d, k);
    __m256i k0 = k[0], k1 = k[1];
    __m256i q0 = _mm256_loadu_si256((const __m256i *)(codes + 32 * c));
    __m256i q1 = _mm256_loadu_si256((const __m256i *)(codes + 32 * c + 16));
    return _mm256_add_epi32(_mm256_madd_epi16(q0, k0), _mm256_madd_epi16(q1, k1));
}

/* ---- int8 scores ------------------------------------------------------------------------ */

/* T = sum_c f[c] * (codes of chunk c . key chunk c), exact under the plan. */
static inline double int8_dot(const dn_attn_plan *plan, const int16_t *codes, const int8_t *key,
                              size_t d)
{
    __m256d t = _mm256_setzero_pd();
    size_t full = d / 32;
    for (size_t c = 0; c < plan->chunks; c++) {
        if (plan->f[c] == 0.0) continue;
        __m256i s = chunk_pairs(codes, key, c, full, d);
        __m256d f = _mm256_set1_pd(plan->f[c]);
        t = _mm256_add_pd(t, _mm256_mul_pd(f, _mm256_cvtepi32_pd(_mm256_castsi256_si128(s))));
        t = _mm256_add_pd(t, _mm256_mul_pd(f, _mm256_cvtepi32_pd(_mm256_extracti128_si256(s, 1))));
    }
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

static inline double int8_dot32(const dn_attn_plan *plan, const int32_t *fi, const int16_t *codes,
                                const int8_t *key, size_t d)
{
    __m256i t = _mm256_setzero_si256();
    size_t full = d / 32;
    for (size_t c = 0; c < plan->chunks; c++) {
        if (fi[c] == 0) continue;
        __m256i s = chunk_pairs(codes, key, c, full, d);
        t = _mm256_add_epi32(t, fi[c] == 1 ? s : _mm256_mullo_epi32(s, _mm256_set1_epi32(fi[c])));
    }
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return (double)_mm_cvtsi128_si32(h);
}

/* fmul(RN32(t * key * 2^emin), scale) for an exact integer t (|t * sig| <
   2^53): every binary64 step is exact, the conversion rounds once, and an
   exact zero is +0 as dn_exact_sum gives. scale is already flushed. */
static inline float finish(double t, double key, double pow_emin, float scale)
{
    double v = t * key * pow_emin;
    float r = v == 0.0 ? 0.0f : dn_result((float)v);
    return dn_result(r * scale);
}

/* ---- four narrow heads at once ---------------------------------------------------------- */

/* The scores of four heads whose plans are narrow (hn <= 4 of them real;
   the others' factors are 0), each key row's codes widened once for all
   of them; the int32 totals are those of int8_dot32 (integer sums, in any
   order the same), finished as finish() does. */
static inline __attribute__((always_inline)) void
narrow_rows(const dn_act_row *q, size_t hn, const int32_t fi[][DN_ATTN_MAX_HEAD_DIM / 32],
            size_t chunks, const double *pe, size_t d, const int8_t *k, size_t stride,
            const uint16_t *ks, size_t scale_stride, size_t n, float sc, float *s)
{
    const int16_t *codes[HEADS];
    double pes[HEADS];
    for (size_t g = 0; g < HEADS; g++) {
        codes[g] = q[g < hn ? g : 0].codes;
        pes[g] = pe[g < hn ? g : 0];
    }
    __m256d pe4 = _mm256_loadu_pd(pes);
    size_t full = d / 32;
    for (size_t j = 0; j < n; j++) {
        const int8_t *row = k + j * stride;
        if (j + 8 < n) dn_prefetch_span(k + (j + 8) * stride, d);
        __m256i acc[HEADS] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                              _mm256_setzero_si256(), _mm256_setzero_si256()};
        for (size_t c = 0; c < chunks; c++) {
            __m256i kc[2];
            key_chunk(row, c, full, d, kc);
            for (size_t g = 0; g < HEADS; g++) {
                const int16_t *qc = codes[g] + 32 * c;
                __m256i sum = _mm256_add_epi32(
                    _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)qc), kc[0]),
                    _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(qc + 16)), kc[1]));
                acc[g] =
                    _mm256_add_epi32(acc[g], _mm256_mullo_epi32(sum, _mm256_set1_epi32(fi[g][c])));
            }
        }
        float out[4];
        _mm_storeu_ps(out, finish4(hsum4(acc[0], acc[1], acc[2], acc[3]),
                                   key_scale(ks[j * scale_stride]), pe4, sc));
        for (size_t g = 0; g < hn; g++) s[g * n + j] = out[g];
    }
}

/* narrow_rows with head size 128 (4 chunks) a constant: the chunk loop
   unrolled, as the AVX-512 kernel's prescaled rows. */
static void narrow_group(const dn_act_row *q, size_t hn,
                         const int32_t fi[][DN_ATTN_MAX_HEAD_DIM / 32], size_t chunks,
                         const double *pe, size_t d, const int8_t *k, size_t stride,
                         const uint16_t *ks, size_t scale_stride, size_t n, float sc, float *s)
{
    if (d == 128 && chunks == 4)
        narrow_rows(q, hn, fi, 4, pe, 128, k, stride, ks, scale_stride, n, sc, s);
    else
        narrow_rows(q, hn, fi, chunks, pe, d, k, stride, ks, scale_stride, n, sc, s);
}

static void scores_int8_avx2(const dn_act_row *q, size_t heads, size_t d, const int8_t *k,
                             size_t stride, const uint16_t *ks, size_t scale_stride, size_t n,
                             float scale, float *s)
{
    dn_attn_plan plans[HEADS];
    int32_t fi[HEADS][DN_ATTN_MAX_HEAD_DIM / 32];
    int narrow[HEADS];
    double pe[HEADS];
    float sc = dn_flush(scale);
    for (size_t g0 = 0; g0 < heads; g0 += HEADS) {
        size_t hn = heads - g0 < HEADS ? heads - g0 : HEADS;
        for (size_t g = 0; g < hn; g++) {
            dn_attn_plan_of(&q[g0 + g], d, &plans[g]);
            narrow[g] = plans[g].fast && int32_factors(&plans[g], q[g0 + g].codes, fi[g]);
            pe[g] = plans[g].fast ? pow2(plans[g].emin) : 0.0;
        }
        int all_narrow = 1;
        for (size_t g = 0; g < hn; g++) all_narrow &= narrow[g];
        if (all_narrow) {
            for (size_t g = hn; g < HEADS; g++)
                memset(fi[g], 0, sizeof fi[g]); /* the missing heads add nothing */
            narrow_group(q + g0, hn, fi, plans[0].chunks, pe, d, k, stride, ks, scale_stride, n, sc,
                         s + g0 * n);
            continue;
        }
        for (size_t j = 0; j < n; j++) {
            const int8_t *row = k + j * stride;
            if (j + 8 < n) dn_prefetch_span(k + (j + 8) * stride, d);
            double key = key_scale(ks[j * scale_stride]);
            for (size_t g = 0; g < hn; g++) {
                const dn_act_row *qg = &q[g0 + g];
                float *out = &s[(g0 + g) * n + j];
                if (narrow[g])
                    *out = finish(int8_dot32(&plans[g], fi[g], qg->codes, row, d), key, pe[g], sc);
                else if (plans[g].fast)
                    *out = finish(int8_dot(&plans[g], qg->codes, row, d), key, pe[g], sc);
                else
                    *out = dn_fmul(dn_attn_int8_score1(qg, d, ks[j * scale_stride], row), scale);
            }
        }
    }
}

/* ---- the int8 weighted sum ------------------------------------------------------------- */

/* out[0..16) = fadd(out, S * 2^e) for the block sums s0 (elements 0-3,
   8-11) and s1 (4-7, 12-15) as unpack leaves them; S * 2^e is exact in
   binary32 here (the AVX-512 kernel's add_pieces16 says why). */
static inline void add_pieces(__m256i s0, __m256i s1, int32_t e, float *out)
{
    __m256i parts[2] = {_mm256_permute2x128_si256(s0, s1, 0x20),
                        _mm256_permute2x128_si256(s0, s1, 0x31)};
    __m256 p2 = _mm256_set1_ps(pow2f(e));
    for (int h = 0; h < 2; h++) {
        __m256 piece = _mm256_mul_ps(_mm256_cvtepi32_ps(parts[h]), p2);
        __m256 o = _mm256_loadu_ps(out + 8 * h);
        _mm256_storeu_ps(out + 8 * h, dn_avx2_flush(_mm256_add_ps(o, piece)));
    }
}

/* Elements i..i+16 of a block's m rows for hn (<= HEADS) heads: each pair
   of rows (v_j, v_j+1) is widened and interleaved once, then multiplied by
   each head's code pair (c_j, c_j+1) (|sum| <= 2 * 127 * 128, 32 rows below
   2^20); out[g] + i gets head g's pieces. */
static inline void block16(const int8_t *v, size_t stride, size_t m, size_t hn,
                           const int32_t pairs[HEADS][DN_VALUE_BLOCK / 2], const int32_t *e,
                           size_t i, float *const out[HEADS])
{
    __m256i s0[HEADS], s1[HEADS];
    for (size_t g = 0; g < HEADS; g++) s0[g] = s1[g] = _mm256_setzero_si256();
    for (size_t j = 0; j < m; j += 2) {
        __m256i a = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(v + j * stride + i)));
        __m256i b =
            j + 1 < m
                ? _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(v + (j + 1) * stride + i)))
                : _mm256_setzero_si256();
        __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
#pragma GCC unroll 4
        for (size_t g = 0; g < HEADS; g++) {
            if (g >= hn) break;
            __m256i cc = _mm256_set1_epi32(pairs[g][j / 2]);
            s0[g] = _mm256_add_epi32(s0[g], _mm256_madd_epi16(lo, cc));
            s1[g] = _mm256_add_epi32(s1[g], _mm256_madd_epi16(hi, cc));
        }
    }
    for (size_t g = 0; g < hn; g++) add_pieces(s0[g], s1[g], e[g], out[g] + i);
}

/* Every element of a block: 16 at a time, the tail (d not a multiple of
   16) in the reference's order. */
static inline __attribute__((always_inline)) void
block_elements(const int8_t *vb, size_t stride, size_t m, const value_heads *vh, size_t d)
{
    size_t i = 0;
    for (; i + 16 <= d; i += 16) block16(vb, stride, m, vh->nv, vh->pairs, vh->e, i, vh->out);
    for (size_t g = 0; g < vh->nv && i < d; g++)
        block_scalar(vb, stride, m, vh->c[g], vh->e[g], i, d, vh->out[g]);
}

static int weighted_int8_avx2(const float *p, size_t heads, size_t n, const int8_t *v,
                              size_t stride, const uint16_t *vs, size_t scale_stride, size_t d,
                              float *out)
{
    return weighted_int8_blocks(p, heads, n, v, stride, vs, scale_stride, d, 16, block_elements,
                                out);
}

/* ---- the int8 cache's rows ----------------------------------------------------------- */

/* Eight codes of dn_ref_int8_codes, as int32: the product rounded once (the
   flushes of fmul change no code: a denormal x, or a product below 2^-126,
   is far below half a code, the reciprocal being at most 2^24), clamped to
   +-127 (an infinity too), then the nearest integer, ties to even; a NaN
   product (which max_ps turned into -127) masked to 0. */
static inline __m256i cache_codes8(__m256 x, __m256 inv)
{
    const __m256 p = _mm256_mul_ps(x, inv);
    const __m256 nan = _mm256_cmp_ps(p, p, _CMP_UNORD_Q);
    const __m256 c =
        _mm256_min_ps(_mm256_max_ps(p, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
    const __m256i q =
        _mm256_cvtps_epi32(_mm256_round_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return _mm256_andnot_si256(_mm256_castps_si256(nan), q);
}

/* dn_ref_cache_row: the largest magnitude by the fp32 kernel, the scale by
   the reference's own step, then 32 codes a step (a zero reciprocal in
   place of an infinite one makes every product 0 or NaN: code 0, as the
   reference's all-zero rule); the tail by the reference. */
static int cache_row_avx2(const float *x, size_t n, uint16_t *scale, int8_t *codes)
{
    const float inv = dn_cache_row_scale(dn_fp32_avx2.absmax(x, n), scale);
    const int zero = (dn_bits(inv) & 0x7FFFFFFFu) == DN_EXP_BITS;
    const __m256 vinv = _mm256_set1_ps(zero ? 0.0f : inv);
    const __m256i exp = _mm256_set1_epi32(0x7F800000);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i bad = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i c[4];
        for (int k = 0; k < 4; k++) {
            const __m256 v = _mm256_loadu_ps(x + i + 8 * k);
            const __m256i e = _mm256_and_si256(_mm256_castps_si256(v), exp);
            bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(e, exp));
            c[k] = cache_codes8(v, vinv);
        }
        /* the packs interleave the four vectors' halves: dwords c0a c1a c2a
           c3a c0b c1b c2b c3b */
        const __m256i b =
            _mm256_packs_epi16(_mm256_packs_epi32(c[0], c[1]), _mm256_packs_epi32(c[2], c[3]));
        _mm256_storeu_si256((__m256i *)(codes + i), _mm256_permutevar8x32_epi32(b, order));
    }
    int any = !_mm256_testz_si256(bad, bad);
    for (size_t j = i; j < n; j++) any |= (dn_bits(x[j]) & DN_EXP_BITS) == DN_EXP_BITS;
    if (i < n) dn_ref_int8_codes(x + i, n - i, inv, codes + i);
    return any;
}

const dn_attention_kernels dn_attention_avx2 = {
    .scores = scores_avx2,
    .weighted = weighted_avx2,
    .scores_int8 = scores_int8_avx2,
    .weighted_int8 = weighted_int8_avx2,
    .cache_row = cache_row_avx2,
};
