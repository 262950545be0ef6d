/* SPDX-License-Identifier: MIT */
/*
 * The ggml-compatible F16 and BF16 products on AVX-512 (F, BW, VL, DQ): the
 * bits of src/f16.c, as the AVX2 kernels give them, with ZMM registers.
 *
 * ggml's chains are 8 lanes wide. A ZMM register holds two of them, one per
 * 256-bit half; each half adds its own lanes in its own order, so the bits
 * are the 8-lane chains':
 *  - ggml_vec_dot: its accumulators a0 | a1 in one register and a2 | a3 in
 *    another, so one 16-element load feeds two chains (elements b .. b+7
 *    are a0's, b+8 .. b+15 a1's) and the fold starts with a0|a1 + a2|a3;
 *  - tinyBLAS: the chains of rows 2p and 2p+1 for one column share a
 *    register, eight weights of each widened as they are loaded, and the
 *    column's eight activations are broadcast to both halves: a tile of
 *    6 rows x 8 columns keeps 24 registers of chains (48 8-lane chains),
 *    where the AVX2 tile keeps twelve.
 * Widening is exact, so when and how often a weight is widened changes no
 * bit. The entries left out of the table (conversions, one tinyBLAS
 * element, mad, scale) run the AVX2 kernels, as do the rows after the last
 * block of four.
 */
#include "../f16_kernels.h"
#include "../bits.h"

#include <immintrin.h>

/* Bytes ahead in each of mat_vec's weight streams. Measured on the
   four-row form against the AVX2 kernel, alternated, one thread, 2048^2
   (from L3) and 8192^2 (from memory): 1 KiB gave 1.20-1.30x and
   1.06-1.09x, 2 KiB 1.07-1.13x and 1.04-1.12x, 4 KiB 1.11x and 1.00x;
   against the four-row form at 1 KiB from memory, 512 B 0.91x, 4 KiB
   0.87-0.97x; on the eight-row form 768 B to 2 KiB moved less than the
   machine's load. No effect on bits. */
#ifndef DN_F16_PREFETCH
#define DN_F16_PREFETCH 1024
#endif

#define DN_INLINE static inline __attribute__((always_inline))

/* Sixteen weights of type bf (0: binary16, 1: bfloat16), widened exactly. */
DN_INLINE __m512 widen16(__m256i h, int bf)
{
    if (bf) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

DN_INLINE __m512 load_w(const uint16_t *p, int bf)
{
    return widen16(_mm256_loadu_si256((const __m256i *)p), bf);
}

/* Eight weights of row p0 in the low half, eight of row p1 in the high. */
DN_INLINE __m512 load_w2(const uint16_t *p0, const uint16_t *p1, int bf)
{
    __m256i h = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p0));
    return widen16(_mm256_inserti128_si256(h, _mm_loadu_si128((const __m128i *)p1), 1), bf);
}

/* One step of ggml_vec_dot on two chains: F16 fuses it; BF16 rounds the
   product first. */
DN_INLINE __m512 vd_step(__m512 w, __m512 x, __m512 acc, int bf)
{
    return bf ? _mm512_add_ps(_mm512_mul_ps(w, x), acc) : _mm512_fmadd_ps(w, x, acc);
}

/* tinyBLAS's hsum: high half onto low half, then (v0 + v2) + (v1 + v3). */
static inline float hsum8(__m256 a)
{
    __m128 v = _mm_add_ps(_mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(a));
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(v, _mm_movehdup_ps(v)));
}

/* ggml_vec_dot's fold of lo = a0 | a1 and hi = a2 | a3: per lane
   (a0 + a2) + (a1 + a3); then F16's GGML_F32x8_REDUCE tail (high four
   lanes onto the low four, two horizontal adds) or BF16's hsum. */
DN_INLINE float fold2(__m512 lo, __m512 hi, int bf)
{
    __m512 s = _mm512_add_ps(lo, hi);
    __m256 t = _mm256_add_ps(_mm512_castps512_ps256(s), _mm512_extractf32x8_ps(s, 1));
    if (bf) return hsum8(t);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    q = _mm_hadd_ps(q, q);
    return _mm_cvtss_f32(_mm_hadd_ps(q, q));
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

/* R rows (1..8, stride k) against one column: each row's four chains in two
   registers, the column loaded once per step for all rows, each weight
   stream fetched DN_F16_PREFETCH ahead (one prefetch per line). Steps go
   two at a time (64 elements): the loop's address and prefetch bookkeeping
   is then spread over twice the work; each chain still takes its elements
   in k order. */
DN_INLINE void vec_dot_r(const uint16_t *w, size_t k, const float *x, float *out, int R, int bf)
{
    __m512 lo[8], hi[8];
    for (int i = 0; i < R; i++) lo[i] = hi[i] = _mm512_setzero_ps();
    size_t whole = k & ~(size_t)31, pairs = k & ~(size_t)63, b = 0;
    for (; b < pairs; b += 64) {
        __m512 x0 = _mm512_loadu_ps(x + b), x1 = _mm512_loadu_ps(x + b + 16);
        __m512 x2 = _mm512_loadu_ps(x + b + 32), x3 = _mm512_loadu_ps(x + b + 48);
        for (int i = 0; i < R; i++) {
            const char *pf = (const char *)(w + (size_t)i * k + b) + DN_F16_PREFETCH;
            _mm_prefetch(pf, _MM_HINT_T0);
            _mm_prefetch(pf + 64, _MM_HINT_T0);
        }
        for (int i = 0; i < R; i++) {
            const uint16_t *wi = w + (size_t)i * k + b;
            lo[i] = vd_step(load_w(wi, bf), x0, lo[i], bf);
            hi[i] = vd_step(load_w(wi + 16, bf), x1, hi[i], bf);
        }
        for (int i = 0; i < R; i++) {
            const uint16_t *wi = w + (size_t)i * k + b + 32;
            lo[i] = vd_step(load_w(wi, bf), x2, lo[i], bf);
            hi[i] = vd_step(load_w(wi + 16, bf), x3, hi[i], bf);
        }
    }
    if (b < whole) {
        __m512 x0 = _mm512_loadu_ps(x + b), x1 = _mm512_loadu_ps(x + b + 16);
        for (int i = 0; i < R; i++) {
            const uint16_t *wi = w + (size_t)i * k + b;
            lo[i] = vd_step(load_w(wi, bf), x0, lo[i], bf);
            hi[i] = vd_step(load_w(wi + 16, bf), x1, hi[i], bf);
        }
    }
    /* every fold before the tails: the tails call out, and vector registers
       live across a call would be kept on the stack through the loop */
    float f[8];
    for (int i = 0; i < R; i++) f[i] = fold2(lo[i], hi[i], bf);
    for (int i = 0; i < R; i++) out[i] = double_tail(f[i], w + (size_t)i * k, x, whole, k, bf);
}

/* Blocks of eight rows (sixteen registers of chains), then four, three,
   two, one. Measured on 8192^2 and TinyLlama's shapes (2048 x 2048,
   5632 x 2048, 2048 x 5632, 32000 x 2048) from memory, one thread,
   alternated with the four-row form: see docs/f16.md, "AVX-512 kernels". */
DN_INLINE void mat_vec_rows_t(const uint16_t *w, size_t k, const float *x, size_t r0, size_t r1,
                              float *out, int bf)
{
    size_t r = r0;
    for (; r + 8 <= r1; r += 8) vec_dot_r(w + r * k, k, x, out + r, 8, bf);
    for (; r + 4 <= r1; r += 4) vec_dot_r(w + r * k, k, x, out + r, 4, bf);
    for (; r + 3 <= r1; r += 3) vec_dot_r(w + r * k, k, x, out + r, 3, bf);
    switch (r1 - r) {
    case 2: vec_dot_r(w + r * k, k, x, out + r, 2, bf); break;
    case 1: vec_dot_r(w + r * k, k, x, out + r, 1, bf); break;
    default: break;
    }
}

/* One tile of tinyBLAS outputs: rows r .. r + 2P - 1 (P = 2 or 3 row
   pairs) x columns 0 .. N - 1 (N <= 8) of act and out, over the whole of k
   in one go. Rows r + 2p and r + 2p + 1 share a register (eight weights of
   each, widened as they are loaded), each column's eight activations are
   broadcast to both halves: P x N registers of chains (48 chains at most),
   nothing stored between steps; each half is one output's 8-lane FMA chain
   in k order, folded by hsum at the end. The weight rows are fetched
   DN_F16_PREFETCH ahead. */
DN_INLINE void tile(const uint16_t *w, const float *act, size_t k, size_t rows, size_t r, int P,
                    int N, float *out, int bf)
{
    __m512 sum[3][8];
    for (int p = 0; p < P; p++)
        for (int j = 0; j < N; j++) sum[p][j] = _mm512_setzero_ps();
    const uint16_t *w0 = w + r * k;
    for (size_t l = 0; l < k; l += 8) {
        if ((l & 31) == 0)
            for (size_t i = 0; i < 2 * (size_t)P; i++)
                _mm_prefetch((const char *)(w0 + i * k + l) + DN_F16_PREFETCH, _MM_HINT_T0);
        __m512 a[3];
        for (int p = 0; p < P; p++)
            a[p] = load_w2(w0 + 2 * (size_t)p * k + l, w0 + (2 * (size_t)p + 1) * k + l, bf);
        for (int j = 0; j < N; j++) {
            __m512 b = _mm512_broadcast_f32x8(_mm256_loadu_ps(act + (size_t)j * k + l));
            for (int p = 0; p < P; p++) sum[p][j] = _mm512_fmadd_ps(a[p], b, sum[p][j]);
        }
    }
    for (int p = 0; p < P; p++)
        for (int j = 0; j < N; j++) {
            float *o = out + (size_t)j * rows + r + 2 * (size_t)p;
            o[0] = dn_f16_result(hsum8(_mm512_castps512_ps256(sum[p][j])));
            o[1] = dn_f16_result(hsum8(_mm512_extractf32x8_ps(sum[p][j], 1)));
        }
}

/* tile with a compile-time column count. */
DN_INLINE void tile_n(const uint16_t *w, const float *act, size_t k, size_t rows, size_t r, int P,
                      size_t n, float *out, int bf)
{
    switch (n) {
    case 8: tile(w, act, k, rows, r, P, 8, out, bf); break;
    case 7: tile(w, act, k, rows, r, P, 7, out, bf); break;
    case 6: tile(w, act, k, rows, r, P, 6, out, bf); break;
    case 5: tile(w, act, k, rows, r, P, 5, out, bf); break;
    case 4: tile(w, act, k, rows, r, P, 4, out, bf); break;
    case 3: tile(w, act, k, rows, r, P, 3, out, bf); break;
    case 2: tile(w, act, k, rows, r, P, 2, out, bf); break;
    default: tile(w, act, k, rows, r, P, 1, out, bf); break;
    }
}

/* Bytes of weights (at most 48 rows) a superblock keeps in L2 while the
   column groups pass: measured with the kernels called directly,
   alternated, 4096^2 n = 64, one thread: 384 KiB (48 rows) 1.08-1.13x the
   speed without superblocks (the 1 MiB of activations then streamed from
   L3 for every six rows), 192 KiB 1.03-1.09x. No effect on bits. */
#define DN_F16_SUPER_BYTES ((size_t)384 * 1024)

/* tinyBLAS outputs of rows [r0, r1): superblocks of rows (above eight
   columns), then blocks of six rows, then of four, each over all columns
   eight at a time; the rows after the last block of four run the AVX2
   kernel. Measured with the kernels called directly, alternated, 4096^2,
   one thread: n = 8 with blocks of six 1.19-1.29x the speed with blocks of
   four; n = 64 (without superblocks) 1.05-1.30x the speed of 8-row x
   5-column tiles reading weights widened once per pass of 512 into a
   buffer (that design's n = 8: 0.8-1.2x the AVX2 kernel, this one's
   1.4-1.8x). */
DN_INLINE void sgemm_rows_t(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                            size_t r0, size_t r1, float *out, int bf)
{
    size_t r = r0;
    /* more than eight columns: superblocks of rows whose weights stay in L2
       while each group of eight columns passes over them */
    size_t sb = k ? DN_F16_SUPER_BYTES / 2 / k / 6 * 6 : 6;
    sb = sb < 6 ? 6 : sb > 48 ? 48 : sb;
    for (; k && n > 8 && r + sb <= r1; r += sb)
        for (size_t c = 0; c < n; c += 8)
            for (size_t q = r; q < r + sb; q += 6)
                tile_n(w, act + c * k, k, rows, q, 3, n - c < 8 ? n - c : 8, out + c * rows, bf);
    for (; k && r + 6 <= r1; r += 6)
        for (size_t c = 0; c < n; c += 8)
            tile_n(w, act + c * k, k, rows, r, 3, n - c < 8 ? n - c : 8, out + c * rows, bf);
    for (; k && r + 4 <= r1; r += 4)
        for (size_t c = 0; c < n; c += 8)
            tile_n(w, act + c * k, k, rows, r, 2, n - c < 8 ? n - c : 8, out + c * rows, bf);
    if (r < r1)
        (bf ? &dn_f16_avx2.bf16 : &dn_f16_avx2.fp16)->sgemm_rows(w, rows, k, act, n, r, r1, out);
}

/* ---- the instances: F16 (bf = 0) and BF16 (bf = 1) ---------------------------- */

static float vec_dot_avx512(const uint16_t *w, const float *x, size_t k)
{
    float r;
    vec_dot_r(w, k, x, &r, 1, 0);
    return r;
}

static void mat_vec_rows_avx512(const uint16_t *w, size_t k, const float *x, size_t r0, size_t r1,
                                float *out)
{
    mat_vec_rows_t(w, k, x, r0, r1, out, 0);
}

static void sgemm_rows_avx512(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                              size_t r0, size_t r1, float *out)
{
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 0);
}

static float bf16_vec_dot_avx512(const uint16_t *w, const float *x, size_t k)
{
    float r;
    vec_dot_r(w, k, x, &r, 1, 1);
    return r;
}

static void bf16_mat_vec_rows_avx512(const uint16_t *w, size_t k, const float *x, size_t r0,
                                     size_t r1, float *out)
{
    mat_vec_rows_t(w, k, x, r0, r1, out, 1);
}

static void bf16_sgemm_rows_avx512(const uint16_t *w, size_t rows, size_t k, const float *act,
                                   size_t n, size_t r0, size_t r1, float *out)
{
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 1);
}

const dn_f16_kernels dn_f16_avx512 = {
    .fp16 =
        {
            .vec_dot = vec_dot_avx512,
            .mat_vec_rows = mat_vec_rows_avx512,
            .sgemm_rows = sgemm_rows_avx512,
        },
    .bf16 =
        {
            .vec_dot = bf16_vec_dot_avx512,
            .mat_vec_rows = bf16_mat_vec_rows_avx512,
            .sgemm_rows = bf16_sgemm_rows_avx512,
        },
};
