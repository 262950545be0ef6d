/* SPDX-License-Identifier: MIT */
/*
 * The Gated-DeltaNet module's AVX2 kernels, bit for bit the references of
 * src/gdn.c.
 *
 * How they keep the bits (docs/numerics.md sections 7 and 13): every entry
 * runs with MXCSR = DAZ only, so a denormal operand reads as the zero of its
 * sign the engine reads, and a product that comes out denormal is only ever
 * the operand of the next add. A row's dots keep DN_LANES lanes as four
 * 8-lane accumulators (lane l in lane l % 8 of accumulator l / 8 % 4) and
 * fold them by dn_avx2_tree32; a tail of fewer than 32 elements updates only
 * the lanes it has elements for. Every element written (a state element, a
 * folded query, a carried sum) is flushed and its NaN made the engine's one
 * NaN before the store rounds it: bfloat16 by the integer nearest-even
 * rounding of dn_f32_to_bf16, binary16 by F16C (nearest even, subnormals
 * kept, the one NaN mapping to 0x7E00). The scalar steps (coef, the
 * read-out) call the engine's scalar operations themselves.
 */
#include "../gdn_kernels.h"
#include "../bits.h"
#include "../math_kernels.h"
#include "avx2_common.h"

#include "decodenum/fp32.h"

#include <immintrin.h>
#include <string.h>

#define INLINE static inline __attribute__((always_inline))

/* Longest row a flush keeps in its working buffer; longer rows replay
   through the reference (same bits, slower). */
#define FLUSH_MAX_DK 4096

static inline void leave(unsigned old) { __asm__ volatile("vldmxcsr %0" : : "m"(old) : "memory"); }

/* ---- elements through the store ------------------------------------------- */

INLINE __m256 widen8(const void *row, dn_gdn_store store, size_t i)
{
    if (store == DN_GDN_STORE_F32) return _mm256_loadu_ps((const float *)row + i);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)row + i));
    if (store == DN_GDN_STORE_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* The engine's result rule: a denormal flushed to a zero of its sign, any
   NaN the one NaN. Only under the kernels' MXCSR (DAZ): x * 1 reads a
   denormal x as the zero of its sign and leaves every other value as it is
   (no FTZ: the product is exact). The empty asm hides the 1 from the
   compiler, which would fold x * 1 to x. */
INLINE __m256 result8(__m256 x)
{
    __m256 one = _mm256_set1_ps(1.0f);
    __asm__("" : "+x"(one));
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(_mm256_mul_ps(x, one),
                            _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)), nan);
}

/* dn_f32_to_bf16's bits of a result x, in the low halves of 32-bit lanes. */
INLINE __m256i bf16_bits(__m256 x)
{
    __m256i u = _mm256_castps_si256(x);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    u = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), odd));
    return _mm256_srli_epi32(u, 16);
}

/* A result x as the store keeps it, read back. */
INLINE __m256 round8(__m256 x, dn_gdn_store store)
{
    if (store == DN_GDN_STORE_F32) return x;
    if (store == DN_GDN_STORE_F16)
        return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    return _mm256_castsi256_ps(_mm256_slli_epi32(bf16_bits(x), 16));
}

/* Writes a result x through the store. */
INLINE void store8(void *row, dn_gdn_store store, size_t i, __m256 x)
{
    if (store == DN_GDN_STORE_F32) {
        _mm256_storeu_ps((float *)row + i, x);
        return;
    }
    __m128i h;
    if (store == DN_GDN_STORE_F16) {
        h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
    } else {
        __m256i b = bf16_bits(x);
        h = _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    }
    _mm_storeu_si128((__m128i *)((uint16_t *)row + i), h);
}

/* The scalar form of store8, for tails. */
static void put1(void *row, dn_gdn_store store, size_t i, float x)
{
    if (store == DN_GDN_STORE_F32) {
        memcpy((float *)row + i, &x, 4);
        return;
    }
    uint16_t h = store == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(x) : dn_f32_to_f16(x);
    memcpy((uint16_t *)row + i, &h, 2);
}

/* ---- a stored row's dots ---------------------------------------------------- */

typedef struct lanes {
    __m256 l0, l1, l2, l3;
} lanes;

INLINE __m256 madd(__m256 acc, __m256 m, const float *a)
{
    return _mm256_add_ps(acc, _mm256_mul_ps(m, _mm256_loadu_ps(a)));
}

/* acc + m * a on the lanes below `count` only (a tail: +0 added to a -0
   lane would change it). */
INLINE __m256 madd_tail(__m256 acc, __m256 m, const float *a, size_t count)
{
    __m256 sum = _mm256_add_ps(acc, _mm256_mul_ps(m, _mm256_loadu_ps(a)));
    return _mm256_blendv_ps(acc, sum, _mm256_castsi256_ps(dn_avx2_tail_mask(count)));
}

static inline size_t clamp8(size_t left, size_t at)
{
    return left <= at ? 0 : left - at > 8 ? 8 : left - at;
}

/* dn_fdot(row, a) and, when b is not NULL, dn_fdot(row, b), in one pass. */
INLINE void dots(const void *row, dn_gdn_store store, const float *a, const float *b, size_t n,
                 float *da, float *db)
{
    const __m256 z = _mm256_setzero_ps();
    lanes A = {z, z, z, z}, B = {z, z, z, z};
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 m0 = widen8(row, store, i), m1 = widen8(row, store, i + 8);
        __m256 m2 = widen8(row, store, i + 16), m3 = widen8(row, store, i + 24);
        A.l0 = madd(A.l0, m0, a + i), A.l1 = madd(A.l1, m1, a + i + 8);
        A.l2 = madd(A.l2, m2, a + i + 16), A.l3 = madd(A.l3, m3, a + i + 24);
        if (b) {
            B.l0 = madd(B.l0, m0, b + i), B.l1 = madd(B.l1, m1, b + i + 8);
            B.l2 = madd(B.l2, m2, b + i + 16), B.l3 = madd(B.l3, m3, b + i + 24);
        }
    }
    if (i < n) {
        size_t left = n - i;
        float m[32] = {0}, ta[32] = {0}, tb[32] = {0};
        for (size_t e = 0; e < left; e++) {
            m[e] = dn_gdn_load(row, store, i + e);
            ta[e] = a[i + e];
            tb[e] = b ? b[i + e] : 0.0f;
        }
        __m256 m0 = _mm256_loadu_ps(m), m1 = _mm256_loadu_ps(m + 8);
        __m256 m2 = _mm256_loadu_ps(m + 16), m3 = _mm256_loadu_ps(m + 24);
        A.l0 = madd_tail(A.l0, m0, ta, clamp8(left, 0));
        A.l1 = madd_tail(A.l1, m1, ta + 8, clamp8(left, 8));
        A.l2 = madd_tail(A.l2, m2, ta + 16, clamp8(left, 16));
        A.l3 = madd_tail(A.l3, m3, ta + 24, clamp8(left, 24));
        B.l0 = madd_tail(B.l0, m0, tb, clamp8(left, 0));
        B.l1 = madd_tail(B.l1, m1, tb + 8, clamp8(left, 8));
        B.l2 = madd_tail(B.l2, m2, tb + 16, clamp8(left, 16));
        B.l3 = madd_tail(B.l3, m3, tb + 24, clamp8(left, 24));
    }
    *da = dn_result(dn_avx2_tree32(A.l0, A.l1, A.l2, A.l3));
    if (b) *db = dn_result(dn_avx2_tree32(B.l0, B.l1, B.l2, B.l3));
}

/* ---- gdn_row over a head's rows ----------------------------------------------- */

/* Each element m of a stored row becomes decay * m + coef * k[i]. */
INLINE void update(void *row, dn_gdn_store store, const float *k, size_t n, float decay, float coef)
{
    const __m256 d = _mm256_set1_ps(decay), c = _mm256_set1_ps(coef);
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
        for (size_t e = i; e < i + 32; e += 8) {
            __m256 m = widen8(row, store, e);
            __m256 r = _mm256_add_ps(_mm256_mul_ps(d, m), _mm256_mul_ps(c, _mm256_loadu_ps(k + e)));
            store8(row, store, e, result8(r));
        }
    for (; i + 8 <= n; i += 8) {
        __m256 m = widen8(row, store, i);
        __m256 r = _mm256_add_ps(_mm256_mul_ps(d, m), _mm256_mul_ps(c, _mm256_loadu_ps(k + i)));
        store8(row, store, i, result8(r));
    }
    for (; i < n; i++)
        put1(row, store, i,
             dn_gdn_fadd(dn_gdn_fmul(decay, dn_gdn_load(row, store, i)), dn_gdn_fmul(coef, k[i])));
}

INLINE void rows_in(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                    const dn_gdn_token *t, float *out)
{
    for (size_t j = r0; j < r1; j++) {
        void *row = dn_gdn_row_at(state, store, dk, j);
        float rk = 0.0f, rq = 0.0f;
        dots(row, store, t->k, t->q, dk, &rk, &rq);
        float coef = dn_gdn_fmul(t->beta, dn_gdn_fsub(t->v[j], dn_gdn_fmul(t->decay, rk)));
        update(row, store, t->k, dk, t->decay, coef);
        out[j] =
            dn_gdn_fmul(dn_gdn_fadd(dn_gdn_fmul(t->decay, rq), dn_gdn_fmul(coef, t->kq)), t->scale);
    }
}

static void rows_avx2(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                      const dn_gdn_token *t, float *out)
{
    unsigned csr = dn_avx2_enter();
    if (store == DN_GDN_STORE_F32)
        rows_in(state, DN_GDN_STORE_F32, dk, r0, r1, t, out);
    else if (store == DN_GDN_STORE_BF16)
        rows_in(state, DN_GDN_STORE_BF16, dk, r0, r1, t, out);
    else
        rows_in(state, DN_GDN_STORE_F16, dk, r0, r1, t, out);
    leave(csr);
}

/* ---- gdn_read over a head's rows ------------------------------------------------ */

INLINE void read_in(const void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                    const float *y, const float *carried, float scale, float *out)
{
    for (size_t j = r0; j < r1; j++) {
        float ry;
        dots(dn_gdn_row_at((void *)state, store, dk, j), store, y, NULL, dk, &ry, NULL);
        out[j] = dn_gdn_fmul(dn_gdn_fadd(ry, carried[j]), scale);
    }
}

static void read_rows_avx2(const void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                           const float *y, const float *carried, float scale, float *out)
{
    unsigned csr = dn_avx2_enter();
    if (store == DN_GDN_STORE_F32)
        read_in(state, DN_GDN_STORE_F32, dk, r0, r1, y, carried, scale, out);
    else if (store == DN_GDN_STORE_BF16)
        read_in(state, DN_GDN_STORE_BF16, dk, r0, r1, y, carried, scale, out);
    else
        read_in(state, DN_GDN_STORE_F16, dk, r0, r1, y, carried, scale, out);
    leave(csr);
}

/* ---- gdn_flush: the row in a working buffer, stored once ------------------------ */

/* w = the store's rounding of decay * w + coef * k, element by element. */
INLINE void replay(float *w, dn_gdn_store store, const float *k, size_t n, float decay, float coef)
{
    const __m256 d = _mm256_set1_ps(decay), c = _mm256_set1_ps(coef);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 r = _mm256_add_ps(_mm256_mul_ps(d, _mm256_loadu_ps(w + i)),
                                 _mm256_mul_ps(c, _mm256_loadu_ps(k + i)));
        _mm256_storeu_ps(w + i, round8(result8(r), store));
    }
    for (; i < n; i++)
        w[i] = dn_gdn_round(dn_gdn_fadd(dn_gdn_fmul(decay, w[i]), dn_gdn_fmul(coef, k[i])), store);
}

INLINE void flush_in(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                     const dn_gdn_logged *log, size_t count, float *w)
{
    for (size_t j = r0; j < r1; j++) {
        void *row = dn_gdn_row_at(state, store, dk, j);
        size_t i = 0;
        for (; i + 8 <= dk; i += 8) _mm256_storeu_ps(w + i, widen8(row, store, i));
        for (; i < dk; i++) w[i] = dn_gdn_load(row, store, i);
        for (size_t t = 0; t < count; t++) {
            float rk;
            dots(w, DN_GDN_STORE_F32, log[t].k, NULL, dk, &rk, NULL);
            float coef =
                dn_gdn_fmul(log[t].beta, dn_gdn_fsub(log[t].v[j], dn_gdn_fmul(log[t].decay, rk)));
            replay(w, store, log[t].k, dk, log[t].decay, coef);
        }
        for (i = 0; i + 8 <= dk; i += 8) store8(row, store, i, _mm256_loadu_ps(w + i));
        for (; i < dk; i++) put1(row, store, i, w[i]);
    }
}

static void flush_rows_avx2(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                            const dn_gdn_logged *log, size_t count)
{
    if (count == 0) return;
    if (dk > FLUSH_MAX_DK) {
        dn_ref_gdn_flush_rows(state, store, dk, r0, r1, log, count);
        return;
    }
    float w[FLUSH_MAX_DK];
    unsigned csr = dn_avx2_enter();
    if (store == DN_GDN_STORE_F32)
        flush_in(state, DN_GDN_STORE_F32, dk, r0, r1, log, count, w);
    else if (store == DN_GDN_STORE_BF16)
        flush_in(state, DN_GDN_STORE_BF16, dk, r0, r1, log, count, w);
    else
        flush_in(state, DN_GDN_STORE_F16, dk, r0, r1, log, count, w);
    leave(csr);
}

/* ---- gdn_fold, gdn_fold_trailing ------------------------------------------------- */

/* One token of the fold: c = beta * (k . y); carried += c * v;
   y = decay * (y - c * k). */
static void fold_token(const dn_gdn_logged *t, float *y, float *carried, size_t dk, size_t dv)
{
    float ky;
    dots(t->k, DN_GDN_STORE_F32, y, NULL, dk, &ky, NULL);
    float c = dn_gdn_fmul(t->beta, ky);
    const __m256 cv = _mm256_set1_ps(c), d = _mm256_set1_ps(t->decay);
    size_t j = 0;
    for (; j + 8 <= dv; j += 8) {
        __m256 s = _mm256_add_ps(_mm256_loadu_ps(carried + j),
                                 _mm256_mul_ps(cv, _mm256_loadu_ps(t->v + j)));
        _mm256_storeu_ps(carried + j, result8(s));
    }
    for (; j < dv; j++) carried[j] = dn_gdn_fadd(carried[j], dn_gdn_fmul(c, t->v[j]));
    size_t i = 0;
    for (; i + 8 <= dk; i += 8) {
        __m256 r =
            _mm256_sub_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(cv, _mm256_loadu_ps(t->k + i)));
        _mm256_storeu_ps(y + i, result8(_mm256_mul_ps(d, r)));
    }
    for (; i < dk; i++) y[i] = dn_gdn_fmul(t->decay, dn_gdn_fsub(y[i], dn_gdn_fmul(c, t->k[i])));
}

static void fold_avx2(const dn_gdn_logged *log, size_t count, size_t older, const float *q,
                      size_t dk, size_t dv, float *y_new, float *c_new, float *y_all, float *c_all)
{
    unsigned csr = dn_avx2_enter();
    memcpy(y_new, q, dk * sizeof *y_new);
    memset(c_new, 0, dv * sizeof *c_new);
    for (size_t t = count; t-- > older;) fold_token(&log[t], y_new, c_new, dk, dv);
    memcpy(y_all, y_new, dk * sizeof *y_all);
    memcpy(c_all, c_new, dv * sizeof *c_all);
    for (size_t t = older; t-- > 0;) fold_token(&log[t], y_all, c_all, dk, dv);
    leave(csr);
}

/* ---- conv --------------------------------------------------------------------- */

/* Eight channels' sums in tap order (the weights gathered from each
   channel's taps), then silu over all channels by the math module's AVX2
   kernel, which flushes its input as dn_silu does. */
static void conv_avx2(const float *ring, uint32_t head, size_t channels, size_t taps,
                      const float *kernel, const float *x, float *y)
{
    if (channels * taps > INT32_MAX - 8 * taps) {
        dn_ref_gdn_conv(ring, head, channels, taps, kernel, x, y);
        return;
    }
    unsigned csr = dn_avx2_enter();
    size_t slots = taps - 1, c = 0;
    const __m256i step =
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)taps));
    for (; c + 8 <= channels; c += 8) {
        __m256i at = _mm256_add_epi32(step, _mm256_set1_epi32((int)(c * taps)));
        __m256 s = _mm256_setzero_ps();
        for (size_t j = 0; j < slots; j++) {
            __m256 w = _mm256_i32gather_ps(kernel + j, at, 4);
            s = _mm256_add_ps(
                s, _mm256_mul_ps(_mm256_loadu_ps(ring + ((head + j) % slots) * channels + c), w));
        }
        __m256 w = _mm256_i32gather_ps(kernel + slots, at, 4);
        _mm256_storeu_ps(y + c, _mm256_add_ps(s, _mm256_mul_ps(_mm256_loadu_ps(x + c), w)));
    }
    dn_ref_gdn_conv_sums(ring, head, channels, taps, kernel, x, c, y);
    leave(csr);
    dn_math_avx2.silu_v(y, y, channels);
}

const dn_gdn_kernels dn_gdn_avx2 = {
    .conv = conv_avx2,
    .rows = rows_avx2,
    .flush_rows = flush_rows_avx2,
    .fold = fold_avx2,
    .read_rows = read_rows_avx2,
};
