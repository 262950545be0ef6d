/* SPDX-License-Identifier: MIT */
/*
 * The ggml-compatible F16 and BF16 products on AVX2 + FMA + F16C: the
 * instructions ggml's haswell build runs, in the order src/f16.c gives.
 * Widening is exact, so weights may be widened ahead of the loop without
 * changing a bit.
 *
 * One body per kernel serves both types: its `bf` argument (a constant at
 * every call, the bodies always inlined) picks the weight load (F16C's
 * vcvtph2ps, or bfloat16 shifted up 16 bits), ggml_vec_dot's step (F16: a
 * fused multiply-add; BF16: vmulps then vaddps) and its final pairing. The
 * tables at the end hold one instance of each per type.
 */
#include "../f16_kernels.h"
#include "../bits.h"
#include "../sizes.h"
#include "avx2_common.h"

#include <immintrin.h>
#include <stdlib.h>

/* Bytes ahead in each weight row's stream of mat_vec. Measured on the
   8192^2 bench (decodenum-bench-f16 --quick, runs of 2, 3, 4 and 6 KiB
   alternated), two threads, mat_vec / read bandwidth: 2 KiB 0.89-0.94
   (median 0.92 of 7 runs), 4 KiB 0.88-0.94 (0.91), 6 KiB 0.82-0.89. No
   effect on bits. */
#define DN_F16_PREFETCH 2048

/* Rows up to this long run one at a time as one contiguous stream fetched
   DN_F16_PREFETCH_ONE_ROW ahead (k = 2048 shapes 1.15-1.22x the blocks
   from memory, docs/log/f16.md); longer rows in blocks of three, unless
   row_dot_h takes them. No effect on bits. */
#define DN_F16_ONE_ROW_MAX_K 4096
#define DN_F16_PREFETCH_ONE_ROW 4096

/* Rows up to this long also run as one stream when the activation is read
   as its 16-bit patterns (row_dot_h): BF16 at any length, F16 above
   DN_F16_ONE_ROW_MAX_K. No effect on bits. */
#define DN_F16_HALVES_MAX_K 8192

#define DN_INLINE static inline __attribute__((always_inline))

static inline __m256 load_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

/* Eight weights of type bf (0: binary16, 1: bfloat16), widened exactly. */
DN_INLINE __m256 load_w(const uint16_t *p, int bf)
{
    __m128i h = _mm_loadu_si128((const __m128i *)p);
    if (bf) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
}

/* One step of ggml_vec_dot: F16 fuses it; BF16 rounds the product first. */
DN_INLINE __m256 vd_step(__m256 w, __m256 x, __m256 acc, int bf)
{
    return bf ? _mm256_add_ps(_mm256_mul_ps(w, x), acc) : _mm256_fmadd_ps(w, x, acc);
}

static void from_f32_avx2(const float *x, uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    dn_ref_f16_from_f32(x + i, h + i, n - i);
}

static void widen_avx2(const uint16_t *h, float *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, load_f16(h + i));
    dn_ref_f16_widen(h + i, x + i, n - i);
}

static void round_f32_avx2(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
    }
    dn_ref_f16_round_f32(x + i, y + i, n - i);
}

/* ggml_compute_fp32_to_bf16 on eight patterns: each lane's bfloat16 in its
   high 16 bits, the low 16 clear (the f32 of the rounded value). */
static inline __m256i bf16_round_bits(__m256i u)
{
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF)),
                                     _mm256_set1_epi32(0x7F800000));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), nan);
    return _mm256_and_si256(r, _mm256_set1_epi32((int)0xFFFF0000u));
}

static void bf16_from_f32_avx2(const float *x, uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i r =
            _mm256_srli_epi32(bf16_round_bits(_mm256_loadu_si256((const __m256i *)(x + i))), 16);
        _mm_storeu_si128((__m128i *)(h + i), _mm_packus_epi32(_mm256_castsi256_si128(r),
                                                              _mm256_extracti128_si256(r, 1)));
    }
    dn_ref_bf16_from_f32(x + i, h + i, n - i);
}

static void bf16_widen_avx2(const uint16_t *h, float *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, load_w(h + i, 1));
    dn_ref_bf16_widen(h + i, x + i, n - i);
}

static void bf16_round_f32_avx2(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_castsi256_ps(
                                    bf16_round_bits(_mm256_loadu_si256((const __m256i *)(x + i)))));
    dn_ref_bf16_round_f32(x + i, y + i, n - i);
}

DN_INLINE void widen_w(const uint16_t *h, float *x, size_t n, int bf)
{
    if (bf)
        bf16_widen_avx2(h, x, n);
    else
        widen_avx2(h, x, n);
}

/* ggml's GGML_F32x8_REDUCE of four accumulators: (a0 + a2) + (a1 + a3),
   high half onto low half, two horizontal adds. */
static inline float reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3));
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    t = _mm_hadd_ps(t, t);
    return _mm_cvtss_f32(_mm_hadd_ps(t, t));
}

/* tinyBLAS's hsum: high half onto low half, then (v0 + v2) + (v1 + v3). */
static inline float hsum(__m256 a)
{
    __m128 v = _mm_add_ps(_mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(a));
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(v, _mm_movehdup_ps(v)));
}

/* ggml_vec_dot's fold: F16's GGML_F32x8_REDUCE; BF16's (a0 + a2) + (a1 + a3)
   then tinyBLAS's hsum. */
DN_INLINE float fold4(__m256 a0, __m256 a1, __m256 a2, __m256 a3, int bf)
{
    if (bf) return hsum(_mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3)));
    return reduce4(a0, a1, a2, a3);
}

/* The k % 32 products after the 32-element steps, added in double. */
DN_INLINE float double_tail(float r, const uint16_t *w, const float *x, size_t from, size_t k,
                            int bf)
{
    double sum = r;
    for (size_t i = from; i < k; i++)
        sum += (double)((bf ? dn_bf16_widen1(w[i]) : dn_f16_widen1(w[i])) * x[i]);
    return dn_f16_result((float)sum);
}

/* One row's four chains; with `ahead` each line of the row is fetched that
   many bytes ahead (mat_vec's one-row stream; 0: no prefetch). The
   accumulators are named, not an array: GCC keeps an array of them on the
   stack inside the loop. */
DN_INLINE float vec_dot_t(const uint16_t *w, const float *x, size_t k, int bf, size_t ahead)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32) {
        if (ahead) _mm_prefetch((const char *)(w + b) + ahead, _MM_HINT_T0);
        a0 = vd_step(load_w(w + b, bf), _mm256_loadu_ps(x + b), a0, bf);
        a1 = vd_step(load_w(w + b + 8, bf), _mm256_loadu_ps(x + b + 8), a1, bf);
        a2 = vd_step(load_w(w + b + 16, bf), _mm256_loadu_ps(x + b + 16), a2, bf);
        a3 = vd_step(load_w(w + b + 24, bf), _mm256_loadu_ps(x + b + 24), a3, bf);
    }
    return double_tail(fold4(a0, a1, a2, a3, bf), w, x, whole, k, bf);
}

/* Two rows against one column at once: eight independent chains, the column
   loaded once; each row's chain is vec_dot's. */
DN_INLINE void vec_dot2(const uint16_t *w0, const uint16_t *w1, const float *x, size_t k, float *r0,
                        float *r1, int bf)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 c0 = a0, c1 = a0, c2 = a0, c3 = a0;
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32) {
        /* two weight streams, each fetched DN_F16_PREFETCH ahead */
        _mm_prefetch((const char *)(w0 + b) + DN_F16_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *)(w1 + b) + DN_F16_PREFETCH, _MM_HINT_T0);
        __m256 x0 = _mm256_loadu_ps(x + b), x1 = _mm256_loadu_ps(x + b + 8);
        __m256 x2 = _mm256_loadu_ps(x + b + 16), x3 = _mm256_loadu_ps(x + b + 24);
        a0 = vd_step(load_w(w0 + b, bf), x0, a0, bf);
        c0 = vd_step(load_w(w1 + b, bf), x0, c0, bf);
        a1 = vd_step(load_w(w0 + b + 8, bf), x1, a1, bf);
        c1 = vd_step(load_w(w1 + b + 8, bf), x1, c1, bf);
        a2 = vd_step(load_w(w0 + b + 16, bf), x2, a2, bf);
        c2 = vd_step(load_w(w1 + b + 16, bf), x2, c2, bf);
        a3 = vd_step(load_w(w0 + b + 24, bf), x3, a3, bf);
        c3 = vd_step(load_w(w1 + b + 24, bf), x3, c3, bf);
    }
    /* Both folds before the tails: the tails call out, and vector registers
       live across a call would be kept on the stack through the loop. */
    float fold0 = fold4(a0, a1, a2, a3, bf), fold1 = fold4(c0, c1, c2, c3, bf);
    *r0 = double_tail(fold0, w0, x, whole, k, bf);
    *r1 = double_tail(fold1, w1, x, whole, k, bf);
}

/* Three rows against one column: twelve chains (vec_dot's four per row),
   the column read from memory by each FMA, three weight streams fetched
   ahead; thirteen registers in all. */
DN_INLINE void vec_dot3(const uint16_t *w0, const uint16_t *w1, const uint16_t *w2, const float *x,
                        size_t k, float *r0, float *r1, float *r2, int bf)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 c0 = a0, c1 = a0, c2 = a0, c3 = a0;
    __m256 d0 = a0, d1 = a0, d2 = a0, d3 = a0;
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32) {
        /* past its row's end a stream runs on into its row of the next
           block of three (w1, w2 already fetch the rows after w0, w1).
           Alternated with running on into the next row, one thread, from
           memory, medians of 3-4 runs under a load of 1.8-2.3: TinyLlama's
           5632 x 2048 1.51x the speed on 4 KiB pages and 1.50x on 2 MiB,
           2048 x 5632 1.10x (4 KiB), 8192^2 1.10x (2 MiB). Same bits. */
        size_t pb = b + (2 * b + DN_F16_PREFETCH >= 2 * k ? 2 * k : 0);
        _mm_prefetch((const char *)(w0 + pb) + DN_F16_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *)(w1 + pb) + DN_F16_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *)(w2 + pb) + DN_F16_PREFETCH, _MM_HINT_T0);
        a0 = vd_step(load_w(w0 + b, bf), _mm256_loadu_ps(x + b), a0, bf);
        c0 = vd_step(load_w(w1 + b, bf), _mm256_loadu_ps(x + b), c0, bf);
        d0 = vd_step(load_w(w2 + b, bf), _mm256_loadu_ps(x + b), d0, bf);
        a1 = vd_step(load_w(w0 + b + 8, bf), _mm256_loadu_ps(x + b + 8), a1, bf);
        c1 = vd_step(load_w(w1 + b + 8, bf), _mm256_loadu_ps(x + b + 8), c1, bf);
        d1 = vd_step(load_w(w2 + b + 8, bf), _mm256_loadu_ps(x + b + 8), d1, bf);
        a2 = vd_step(load_w(w0 + b + 16, bf), _mm256_loadu_ps(x + b + 16), a2, bf);
        c2 = vd_step(load_w(w1 + b + 16, bf), _mm256_loadu_ps(x + b + 16), c2, bf);
        d2 = vd_step(load_w(w2 + b + 16, bf), _mm256_loadu_ps(x + b + 16), d2, bf);
        a3 = vd_step(load_w(w0 + b + 24, bf), _mm256_loadu_ps(x + b + 24), a3, bf);
        c3 = vd_step(load_w(w1 + b + 24, bf), _mm256_loadu_ps(x + b + 24), c3, bf);
        d3 = vd_step(load_w(w2 + b + 24, bf), _mm256_loadu_ps(x + b + 24), d3, bf);
    }
    float f0 = fold4(a0, a1, a2, a3, bf), f1 = fold4(c0, c1, c2, c3, bf),
          f2 = fold4(d0, d1, d2, d3, bf);
    *r0 = double_tail(f0, w0, x, whole, k, bf);
    *r1 = double_tail(f1, w1, x, whole, k, bf);
    *r2 = double_tail(f2, w2, x, whole, k, bf);
}

DN_INLINE float sgemm_dot_t(const uint16_t *w, const float *x, size_t k, int bf)
{
    __m256 a = _mm256_setzero_ps();
    for (size_t l = 0; l < k; l += 8)
        a = _mm256_fmadd_ps(load_w(w + l, bf), _mm256_loadu_ps(x + l), a);
    return dn_f16_result(hsum(a));
}

/* Words 0..3 (lo) or 4..7 (hi) of each 128-bit half of v, each the high
   word of an f32 lane: bfloat16 values widened exactly. */
DN_INLINE __m256 unpack_lo(__m256i v)
{
    return _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), v));
}

DN_INLINE __m256 unpack_hi(__m256i v)
{
    return _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), v));
}

/* One row against the activation's patterns xh: vec_dot_t's four chains,
   the activation read at two bytes an element (16 KiB beside the weight
   stream in L1 at k = 8192, not 32). BF16 widens by in-lane unpacks: 16
   values b .. b+15 unpacked with zero words below them give b+0..3 |
   b+8..11 (lanes 0..3 of chains a0 | a1) and b+4..7 | b+12..15 (their
   lanes 4..7); every chain lane takes its elements in k order, and the
   halves go back to a0 .. a3 before the fold. See the AVX-512 kernel's
   row_dot_h and docs/f16.md, "The activation at two bytes". */
DN_INLINE float row_dot_h(const uint16_t *w, size_t k, const float *x, const uint16_t *xh, int bf)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32) {
        _mm_prefetch((const char *)(w + b) + DN_F16_PREFETCH_ONE_ROW, _MM_HINT_T0);
        if (bf) { /* a0: lanes 0..3 of chains 0 | 1, a1: their 4..7; a2, a3: chains 2 | 3 */
            __m256i v0 = _mm256_loadu_si256((const __m256i *)(w + b));
            __m256i v1 = _mm256_loadu_si256((const __m256i *)(w + b + 16));
            __m256i u0 = _mm256_loadu_si256((const __m256i *)(xh + b));
            __m256i u1 = _mm256_loadu_si256((const __m256i *)(xh + b + 16));
            a0 = vd_step(unpack_lo(v0), unpack_lo(u0), a0, 1);
            a1 = vd_step(unpack_hi(v0), unpack_hi(u0), a1, 1);
            a2 = vd_step(unpack_lo(v1), unpack_lo(u1), a2, 1);
            a3 = vd_step(unpack_hi(v1), unpack_hi(u1), a3, 1);
        } else {
            a0 = vd_step(load_f16(w + b), load_f16(xh + b), a0, 0);
            a1 = vd_step(load_f16(w + b + 8), load_f16(xh + b + 8), a1, 0);
            a2 = vd_step(load_f16(w + b + 16), load_f16(xh + b + 16), a2, 0);
            a3 = vd_step(load_f16(w + b + 24), load_f16(xh + b + 24), a3, 0);
        }
    }
    if (bf) {
        __m256 c0 = _mm256_permute2f128_ps(a0, a1, 0x20), c1 = _mm256_permute2f128_ps(a0, a1, 0x31);
        __m256 c2 = _mm256_permute2f128_ps(a2, a3, 0x20), c3 = _mm256_permute2f128_ps(a2, a3, 0x31);
        a0 = c0, a1 = c1, a2 = c2, a3 = c3;
    }
    return double_tail(fold4(a0, a1, a2, a3, bf), w, x, whole, k, bf);
}

/* Rows one at a time, the rows of the range one contiguous stream (each
   row's lines fetched DN_F16_PREFETCH_ONE_ROW ahead run on into the next
   row's): on the activation's patterns where row_dot_h pays (BF16 up to
   8192, F16 from 4097 to 8192, measured 1.03-1.16x from memory, F16 at k
   = 2048 0.92-1.03x: docs/f16.md), on its floats up to
   DN_F16_ONE_ROW_MAX_K; longer ones three, then two, then one at a time. */
DN_INLINE void mat_vec_rows_t(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                              size_t r0, size_t r1, float *out, int bf)
{
    size_t r = r0;
    if (k <= DN_F16_HALVES_MAX_K && (bf || k > DN_F16_ONE_ROW_MAX_K)) {
        for (; r < r1; r++) {
            dn_rows_page_ahead(w, 2 * k, r, r1);
            out[r] = row_dot_h(w + r * k, k, x, xh, bf);
        }
        return;
    }
    if (k <= DN_F16_ONE_ROW_MAX_K) {
        for (; r < r1; r++) {
            dn_rows_page_ahead(w, 2 * k, r, r1);
            out[r] = vec_dot_t(w + r * k, x, k, bf, DN_F16_PREFETCH_ONE_ROW);
        }
        return;
    }
    for (; r + 3 <= r1; r += 3)
        vec_dot3(w + r * k, w + (r + 1) * k, w + (r + 2) * k, x, k, &out[r], &out[r + 1],
                 &out[r + 2], bf);
    for (; r + 2 <= r1; r += 2)
        vec_dot2(w + r * k, w + (r + 1) * k, x, k, &out[r], &out[r + 1], bf);
    for (; r < r1; r++) out[r] = vec_dot_t(w + r * k, x, k, bf, 0);
}

/* ---- several columns on vec_dot's path ---------------------------------------- */

/* Bytes of weights a pass of vec_dot_cols keeps in L2 while the column
   triples run through them. */
#define DN_F16_COLS_ROW_BYTES ((size_t)256 * 1024)

/* One row against three columns: twelve chains (vec_dot's four per
   column), eight weights widened once for the three columns, the columns
   read from memory by each FMA (from L1: a pass runs every row of its
   block against the same three); thirteen registers in all. Each chain
   takes its elements in k order, so each output is vec_dot's. */
DN_INLINE void vec_dot_row3(const uint16_t *w, size_t k, const float *x0, const float *x1,
                            const float *x2, float *o0, float *o1, float *o2, int bf)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 c0 = a0, c1 = a0, c2 = a0, c3 = a0;
    __m256 d0 = a0, d1 = a0, d2 = a0, d3 = a0;
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32) {
        __m256 v = load_w(w + b, bf);
        a0 = vd_step(v, _mm256_loadu_ps(x0 + b), a0, bf);
        c0 = vd_step(v, _mm256_loadu_ps(x1 + b), c0, bf);
        d0 = vd_step(v, _mm256_loadu_ps(x2 + b), d0, bf);
        v = load_w(w + b + 8, bf);
        a1 = vd_step(v, _mm256_loadu_ps(x0 + b + 8), a1, bf);
        c1 = vd_step(v, _mm256_loadu_ps(x1 + b + 8), c1, bf);
        d1 = vd_step(v, _mm256_loadu_ps(x2 + b + 8), d1, bf);
        v = load_w(w + b + 16, bf);
        a2 = vd_step(v, _mm256_loadu_ps(x0 + b + 16), a2, bf);
        c2 = vd_step(v, _mm256_loadu_ps(x1 + b + 16), c2, bf);
        d2 = vd_step(v, _mm256_loadu_ps(x2 + b + 16), d2, bf);
        v = load_w(w + b + 24, bf);
        a3 = vd_step(v, _mm256_loadu_ps(x0 + b + 24), a3, bf);
        c3 = vd_step(v, _mm256_loadu_ps(x1 + b + 24), c3, bf);
        d3 = vd_step(v, _mm256_loadu_ps(x2 + b + 24), d3, bf);
    }
    float f0 = fold4(a0, a1, a2, a3, bf), f1 = fold4(c0, c1, c2, c3, bf),
          f2 = fold4(d0, d1, d2, d3, bf);
    *o0 = double_tail(f0, w, x0, whole, k, bf);
    *o1 = double_tail(f1, w, x1, whole, k, bf);
    *o2 = double_tail(f2, w, x2, whole, k, bf);
}

/* Rows [r0, r1) x n columns: blocks of rows of about DN_F16_COLS_ROW_BYTES
   (read from memory once, then from L2 by each triple of columns), every
   row of a block against one triple before the next triple; the last n % 3
   columns one at a time. No effect on bits. */
DN_INLINE void vec_dot_cols_t(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                              size_t r0, size_t r1, float *out, int bf)
{
    size_t block = k ? DN_F16_COLS_ROW_BYTES / (2 * k) : r1 - r0;
    if (block == 0) block = 1;
    for (size_t b0 = r0; b0 < r1; b0 += block) {
        size_t b1 = r1 - b0 < block ? r1 : b0 + block;
        size_t c = 0;
        for (; c + 3 <= n; c += 3) {
            const float *x = act + c * k;
            float *o = out + c * rows;
            for (size_t r = b0; r < b1; r++)
                vec_dot_row3(w + r * k, k, x, x + k, x + 2 * k, o + r, o + rows + r,
                             o + 2 * rows + r, bf);
        }
        for (; c < n; c++)
            for (size_t r = b0; r < b1; r++)
                out[c * rows + r] = vec_dot_t(w + r * k, act + c * k, k, bf, 0);
    }
}

/* Elements of k per pass over the columns: four rows of widened weights
   (8 or 16 KiB) stay in L1 while every column tile runs through them. More
   columns amortize a pass's fixed costs (the chains' loads and stores, the
   first tile's widening) over more tiles and prefer longer passes: measured
   on 4096^2 products, 1024 gave n = 64 +4 % and n = 8 -5 % against 512. */
static size_t sgemm_kc(size_t n) { return n > 8 ? 1024 : 512; }

/* One step (eight elements of k, at l) of tile() below. */
DN_INLINE void tile_step(float *wf, const uint16_t *w16, const float *act, size_t k, size_t kc,
                         size_t l, size_t l0, size_t c, int RM, int RN, __m256 sum[4][3],
                         const char *const *next, unsigned lsh, int bf)
{
    if (next) { /* step s asks for line s % lines of row s / lines */
        size_t s = (l - l0) / 8;
        _mm_prefetch(next[(s >> lsh) & 3] + 64 * (s & ((1u << lsh) - 1)), _MM_HINT_T1);
    }
    __m256 b[3];
    for (int j = 0; j < RN; j++) b[j] = _mm256_loadu_ps(act + (c + (size_t)j) * k + l);
    for (int i = 0; i < RM; i++) {
        __m256 a;
        if (w16) { /* the pass's first tile widens the weights for the others */
            a = load_w(w16 + (size_t)i * k + l, bf);
            _mm256_store_ps(wf + (size_t)i * kc + (l - l0), a);
        } else {
            a = _mm256_load_ps(wf + (size_t)i * kc + (l - l0));
        }
        for (int j = 0; j < RN; j++) sum[i][j] = _mm256_fmadd_ps(a, b[j], sum[i][j]);
    }
}

/* One RM x RN tile (RM <= 4, RN <= 3) of tinyBLAS outputs over elements
   [l0, l1) of k, from widened weights wf (RM rows of kc, element l at
   wf[l - l0]). Each output is its own FMA chain, carried between passes in
   acc (8 lanes per output) and folded by hsum after the last pass; storing a
   chain's lanes and loading them back changes no bit. w16: NULL, or the
   RM binary16 rows (stride k) this tile converts itself, storing them into
   wf for the pass's other tiles (with a separate widening loop first, n = 8
   ran 13 % slower: 0.99 against 1.14 FMAs per cycle). next: NULL, or the
   four rows of weights the next pass widens, asked for into L2 a line per
   step (the kc / 8 steps of a full pass cover their 4 x kc / 32 lines):
   read unasked, they stalled each pass on memory. The pass's other tiles,
   which neither widen nor ask, run a loop of their own without the two
   tests, which GCC 12 kept in the one loop (two compares and branches a
   step beside twelve FMAs): 4096^2 at n = 64 against ggml's AVX2 build in
   the same runs went from 0.82-0.94x its speed to 0.93-0.99x on one
   thread and from 0.83-0.93x to 0.94-1.01x on two (nine runs of each
   build, alternated; docs/f16.md). */
static inline __attribute__((always_inline)) void tile(float *wf, const uint16_t *w16,
                                                       const float *act, size_t k, size_t kc,
                                                       size_t l0, size_t l1, size_t rows, size_t r,
                                                       size_t c, int RM, int RN, float *acc,
                                                       float *out, const char *const *next, int bf)
{
    __m256 sum[4][3];
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < RN; j++)
            sum[i][j] = l0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + 8 * (3 * i + j));
    const unsigned lsh = kc == 1024 ? 5 : 4; /* log2 of the kc / 32 lines of a row */
    if (w16 || next)
        for (size_t l = l0; l < l1; l += 8)
            tile_step(wf, w16, act, k, kc, l, l0, c, RM, RN, sum, next, lsh, bf);
    else
        for (size_t l = l0; l < l1; l += 8)
            tile_step(wf, NULL, act, k, kc, l, l0, c, RM, RN, sum, NULL, lsh, bf);
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < RN; j++) {
            if (l1 == k)
                out[(c + (size_t)j) * rows + r + (size_t)i] = dn_f16_result(hsum(sum[i][j]));
            else
                _mm256_storeu_ps(acc + 8 * (3 * i + j), sum[i][j]);
        }
}

/* Groups of four rows in a superblock: each pass over the columns is run
   by every group of the superblock in turn, so the pass's slice of the
   columns (n x kc floats: 256 KiB at n = 64) is read from L2 by all of
   them; one group a pass sent the whole of the columns (1 MiB at n = 64,
   k = 4096) through L2 again for every four rows, from L3. Eight groups,
   while their chains (n x 384 bytes a group) take at most 256 KiB. */
static size_t sgemm_groups(size_t n)
{
    size_t g = ((size_t)256 << 10) / (n * 96 * sizeof(float) + 1);
    return g < 1 ? 1 : g > 8 ? 8 : g;
}

/* The columns of rows [r, r + rm) (rm <= 4) over elements [l0, l1): their
   chains in acc (96 floats per column tile), pf the rows the next pass
   widens (or NULL). */
static inline __attribute__((always_inline)) void
group_pass(float *wf, const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
           size_t r, int rm, size_t l0, size_t l1, float *acc, float *out, const char *const *pf,
           const size_t kc, int bf)
{
    if (rm < 4)
        for (int i = 0; i < rm; i++)
            widen_w(w + (r + (size_t)i) * k + l0, wf + (size_t)i * kc, l1 - l0, bf);
    const uint16_t *w16 = rm == 4 ? w + r * k : NULL;
    for (size_t c = 0, t = 0; c < n; t++, pf = NULL, w16 = NULL) {
        float *ta = acc + 96 * t;
        size_t left = n - c;
        /* four columns left go as two and two: a 4 x 1 tile loads five
           vectors for four FMAs */
        if (rm == 4 && left >= 3 && left != 4) {
            tile(wf, w16, act, k, kc, l0, l1, rows, r, c, 4, 3, ta, out, pf, bf);
            c += 3;
        } else if (rm == 4 && left >= 2) {
            tile(wf, w16, act, k, kc, l0, l1, rows, r, c, 4, 2, ta, out, pf, bf);
            c += 2;
        } else if (rm == 4) {
            tile(wf, w16, act, k, kc, l0, l1, rows, r, c, 4, 1, ta, out, pf, bf);
            c += 1;
        } else {
            /* fewer than four rows left: one row, one column at a time */
            for (int i = 0; i < rm; i++)
                tile(wf + (size_t)i * kc, NULL, act, k, kc, l0, l1, rows, r + (size_t)i, c, 1, 1,
                     ta + 8 * 3 * i, out, NULL, bf);
            c += 1;
        }
    }
}

/* tinyBLAS outputs of rows [r0, r1): superblocks of sgemm_groups() groups
   of four rows, k in passes of sgemm_kc(n), each pass run by every group
   of the superblock in turn, columns in tiles of three (then two, or two
   and two). */
static inline __attribute__((always_inline)) void sgemm_rows_kc(const uint16_t *w, size_t rows,
                                                                size_t k, const float *act,
                                                                size_t n, size_t r0, size_t r1,
                                                                float *out, const size_t kc, int bf)
{
    const size_t groups = sgemm_groups(n), tile_floats = n * 96;
    /* 64-byte aligned: a 32-byte load that splits a cache line costs two,
       and the tile loop loads wf on every step (the loop alone, measured:
       1.46 FMA per cycle with malloc's 16-byte alignment, 1.61 aligned) */
    void *mem = malloc((4 * kc + groups * tile_floats) * sizeof(float) + 64);
    if (!mem) {
        if (bf)
            dn_ref_bf16_sgemm_rows(w, rows, k, act, NULL, n, r0, r1, out);
        else
            dn_ref_f16_sgemm_rows(w, rows, k, act, NULL, n, r0, r1, out);
        return;
    }
    float *wf = dn_line_up(mem);
    float *acc = wf + 4 * kc; /* per group, 12 chains of 8 lanes per column tile */
    for (size_t s0 = r0; s0 < r1; s0 += 4 * groups) {
        size_t s1 = r1 - s0 > 4 * groups ? s0 + 4 * groups : r1;
        for (size_t l0 = 0; l0 < k; l0 += kc) {
            size_t l1 = l0 + kc < k ? l0 + kc : k;
            for (size_t r = s0; r < s1; r += 4) {
                int rm = s1 - r >= 4 ? 4 : (int)(s1 - r);
                /* the next pass: the next group's, else the superblock's
                   first group's next kc, else the next superblock's first */
                size_t nr = r + 4 < s1 ? r + 4 : l1 < k ? s0 : s1;
                size_t nl = r + 4 < s1 ? l0 : l1 < k ? l1 : 0;
                const char *next[4];
                for (int i = 0; i < 4; i++)
                    next[i] =
                        (const char *)(w + (nr + (size_t)i < r1 ? nr + (size_t)i : r) * k + nl);
                const char *const *pf = nr < r1 && k - nl >= kc ? next : NULL;
                group_pass(wf, w, rows, k, act, n, r, rm, l0, l1, acc + (r - s0) / 4 * tile_floats,
                           out, pf, kc, bf);
            }
        }
    }
    free(mem);
}

/* The pass length a compile-time constant in each copy (a variable one
   costs the tile loop its constant offsets: measured 10 % slower). */
DN_INLINE void sgemm_rows_t(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                            size_t r0, size_t r1, float *out, int bf)
{
    if (sgemm_kc(n) == 1024)
        sgemm_rows_kc(w, rows, k, act, n, r0, r1, out, 1024, bf);
    else
        sgemm_rows_kc(w, rows, k, act, n, r0, r1, out, 512, bf);
}

/* ---- the instances: F16 (bf = 0) and BF16 (bf = 1) ---------------------------- */

static float vec_dot_avx2(const uint16_t *w, const float *x, size_t k)
{
    return vec_dot_t(w, x, k, 0, 0);
}

static float sgemm_dot_avx2(const uint16_t *w, const float *x, size_t k)
{
    return sgemm_dot_t(w, x, k, 0);
}

static void mat_vec_rows_avx2(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                              size_t r0, size_t r1, float *out)
{
    mat_vec_rows_t(w, k, x, xh, r0, r1, out, 0);
}

static void vec_dot_cols_avx2(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                              size_t r0, size_t r1, float *out)
{
    vec_dot_cols_t(w, rows, k, act, n, r0, r1, out, 0);
}

static void sgemm_rows_avx2(const uint16_t *w, size_t rows, size_t k, const float *act,
                            const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    (void)packed;
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 0);
}

static float bf16_vec_dot_avx2(const uint16_t *w, const float *x, size_t k)
{
    return vec_dot_t(w, x, k, 1, 0);
}

static float bf16_sgemm_dot_avx2(const uint16_t *w, const float *x, size_t k)
{
    return sgemm_dot_t(w, x, k, 1);
}

static void bf16_mat_vec_rows_avx2(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                                   size_t r0, size_t r1, float *out)
{
    mat_vec_rows_t(w, k, x, xh, r0, r1, out, 1);
}

static void bf16_vec_dot_cols_avx2(const uint16_t *w, size_t rows, size_t k, const float *act,
                                   size_t n, size_t r0, size_t r1, float *out)
{
    vec_dot_cols_t(w, rows, k, act, n, r0, r1, out, 1);
}

static void bf16_sgemm_rows_avx2(const uint16_t *w, size_t rows, size_t k, const float *act,
                                 const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    (void)packed;
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 1);
}

static void mad_avx2(uint16_t *acc, const uint16_t *v, float s, size_t n)
{
    const __m256 sv = _mm256_set1_ps(s);
    const __m128i nan16 = _mm_set1_epi16((short)DN_F16_NAN_F16_BITS);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 y = _mm256_fmadd_ps(load_f16(v + i), sv, load_f16(acc + i));
        __m128i h = _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT);
        __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(y, y, _CMP_UNORD_Q));
        __m128i nan16m =
            _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
        _mm_storeu_si128((__m128i *)(acc + i), _mm_blendv_epi8(h, nan16, nan16m));
    }
    dn_ref_f16_mad(acc + i, v + i, s, n - i);
}

static void scale_avx2(uint16_t *acc, float s, size_t n)
{
    const __m256 sv = _mm256_set1_ps(s);
    const __m128i nan16 = _mm_set1_epi16((short)DN_F16_NAN_F16_BITS);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 y = _mm256_mul_ps(load_f16(acc + i), sv);
        __m128i h = _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT);
        __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(y, y, _CMP_UNORD_Q));
        __m128i nan16m =
            _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
        _mm_storeu_si128((__m128i *)(acc + i), _mm_blendv_epi8(h, nan16, nan16m));
    }
    dn_ref_f16_scale(acc + i, s, n - i);
}

const dn_f16_kernels dn_f16_avx2 = {
    .fp16 =
        {
            .from_f32 = from_f32_avx2,
            .widen = widen_avx2,
            .round_f32 = round_f32_avx2,
            .vec_dot = vec_dot_avx2,
            .sgemm_dot = sgemm_dot_avx2,
            .mat_vec_rows = mat_vec_rows_avx2,
            .vec_dot_cols = vec_dot_cols_avx2,
            .pack_bytes = dn_ref_w16_pack_bytes, /* no packed form */
            .pack = dn_ref_w16_pack,
            .sgemm_rows = sgemm_rows_avx2,
        },
    .bf16 =
        {
            .from_f32 = bf16_from_f32_avx2,
            .widen = bf16_widen_avx2,
            .round_f32 = bf16_round_f32_avx2,
            .vec_dot = bf16_vec_dot_avx2,
            .sgemm_dot = bf16_sgemm_dot_avx2,
            .mat_vec_rows = bf16_mat_vec_rows_avx2,
            .vec_dot_cols = bf16_vec_dot_cols_avx2,
            .pack_bytes = dn_ref_w16_pack_bytes, /* no packed form */
            .pack = dn_ref_w16_pack,
            .sgemm_rows = bf16_sgemm_rows_avx2,
        },
    .mad = mad_avx2,
    .scale = scale_avx2,
};
