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
 *    register. A pass widens eight rows of weights into a buffer that holds
 *    each pair's rows eight elements at a time, side by side, and a column's
 *    eight activations are broadcast to both halves: a tile of 8 rows x 5
 *    columns keeps twenty registers of chains (forty 8-lane chains), where
 *    the AVX2 tile keeps twelve.
 * Widening is exact, so weights widened ahead of the loop give the same bits.
 * The entries left out of the table (conversions, one tinyBLAS element, mad,
 * scale) run the AVX2 kernels, as do rows past the last block of eight.
 */
#include "../f16_kernels.h"
#include "../bits.h"

#include <immintrin.h>
#include <stdlib.h>

/* Bytes ahead in each of mat_vec's four weight streams. Measured on this
   file's mat_vec against the AVX2 kernel, alternated, one thread, 2048^2
   (from L3) and 8192^2 (from memory): 1 KiB gave 1.20-1.30x and
   1.06-1.09x, 2 KiB 1.07-1.13x and 1.04-1.12x, 4 KiB 1.11x and 1.00x.
   No effect on bits. */
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

/* R rows (1..4, stride k) against one column: each row's four chains in two
   registers, the column loaded once per step for all rows, each weight
   stream fetched DN_F16_PREFETCH ahead. */
DN_INLINE void vec_dot_r(const uint16_t *w, size_t k, const float *x, float *out, int R, int bf)
{
    __m512 lo[4], hi[4];
    for (int i = 0; i < R; i++) lo[i] = hi[i] = _mm512_setzero_ps();
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32) {
        __m512 x0 = _mm512_loadu_ps(x + b), x1 = _mm512_loadu_ps(x + b + 16);
        for (int i = 0; i < R; i++) {
            const uint16_t *wi = w + (size_t)i * k + b;
            _mm_prefetch((const char *)wi + DN_F16_PREFETCH, _MM_HINT_T0);
            lo[i] = vd_step(load_w(wi, bf), x0, lo[i], bf);
            hi[i] = vd_step(load_w(wi + 16, bf), x1, hi[i], bf);
        }
    }
    /* every fold before the tails: the tails call out, and vector registers
       live across a call would be kept on the stack through the loop */
    float f[4];
    for (int i = 0; i < R; i++) f[i] = fold2(lo[i], hi[i], bf);
    for (int i = 0; i < R; i++) out[i] = double_tail(f[i], w + (size_t)i * k, x, whole, k, bf);
}

DN_INLINE void mat_vec_rows_t(const uint16_t *w, size_t k, const float *x, size_t r0, size_t r1,
                              float *out, int bf)
{
    size_t r = r0;
    for (; r + 4 <= r1; r += 4) vec_dot_r(w + r * k, k, x, out + r, 4, bf);
    for (; r + 3 <= r1; r += 3) vec_dot_r(w + r * k, k, x, out + r, 3, bf);
    switch (r1 - r) {
    case 2: vec_dot_r(w + r * k, k, x, out + r, 2, bf); break;
    case 1: vec_dot_r(w + r * k, k, x, out + r, 1, bf); break;
    default: break;
    }
}

/* Elements of k per pass over the columns: eight rows of widened weights
   (16 KiB) stay in L1 while every column tile runs through them. */
#define DN_F16_KC 512
#define DN_F16_TILE_N 5 /* columns of a full tile */

/* One tile of tinyBLAS outputs, rows r .. r + 7 x columns c .. c + N - 1
   (N <= 5), over elements [l0, l1) of k. wf: the pass's widened weights,
   row pair p's eight-element step s at wf[2 kc p + 16 s] (row 2p low, row
   2p + 1 high). Each output is its own 8-lane FMA chain, carried between
   passes in acc (16 floats per pair and column) and folded by hsum after
   the last pass; storing a chain and loading it back changes no bit.
   w16: NULL, or the eight 16-bit rows (stride k) this tile widens itself,
   storing them into wf for the pass's other tiles. next: NULL, or the
   eight rows of weights the next pass widens, asked for into L2 two lines
   per step (the kc / 8 steps cover their 8 x kc / 32 lines). */
DN_INLINE void tile(float *wf, const uint16_t *w16, const float *act, size_t k, size_t l0,
                    size_t l1, size_t rows, size_t r, size_t c, int N, float *acc, float *out,
                    const char *const *next, int bf)
{
    const size_t kc = DN_F16_KC;
    const unsigned lsh = 4; /* log2 of the kc / 32 lines of a row */
    __m512 sum[4][DN_F16_TILE_N];
    for (int p = 0; p < 4; p++)
        for (int j = 0; j < N; j++)
            sum[p][j] =
                l0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + 16 * (DN_F16_TILE_N * p + j));
    for (size_t l = l0; l < l1; l += 8) {
        size_t s = (l - l0) / 8;
        if (next)
            for (size_t q = 2 * s; q < 2 * s + 2; q++)
                _mm_prefetch(next[(q >> lsh) & 7] + 64 * (q & ((1u << lsh) - 1)), _MM_HINT_T1);
        __m512 b[DN_F16_TILE_N];
        for (int j = 0; j < N; j++)
            b[j] = _mm512_broadcast_f32x8(_mm256_loadu_ps(act + (c + (size_t)j) * k + l));
        for (int p = 0; p < 4; p++) {
            float *wp = wf + 2 * kc * (size_t)p + 16 * s;
            __m512 a;
            if (w16) { /* the pass's first tile widens the weights for the others */
                a = load_w2(w16 + 2 * (size_t)p * k + l, w16 + (2 * (size_t)p + 1) * k + l, bf);
                _mm512_store_ps(wp, a);
            } else {
                a = _mm512_load_ps(wp);
            }
            for (int j = 0; j < N; j++) sum[p][j] = _mm512_fmadd_ps(a, b[j], sum[p][j]);
        }
    }
    for (int p = 0; p < 4; p++)
        for (int j = 0; j < N; j++) {
            float *o = out + (c + (size_t)j) * rows + r + 2 * (size_t)p;
            if (l1 == k) {
                o[0] = dn_f16_result(hsum8(_mm512_castps512_ps256(sum[p][j])));
                o[1] = dn_f16_result(hsum8(_mm512_extractf32x8_ps(sum[p][j], 1)));
            } else {
                _mm512_storeu_ps(acc + 16 * (DN_F16_TILE_N * p + j), sum[p][j]);
            }
        }
}

/* Few columns (N <= 8): rows r .. r + 3 x columns 0 .. N - 1 over the whole
   of k in one go, the weights widened as they are loaded (rows r, r + 1 in
   one register, r + 2, r + 3 in another) and each column's eight
   activations broadcast to both halves: 2N chains in registers, nothing
   stored between steps. */
DN_INLINE void narrow4(const uint16_t *w, const float *act, size_t k, size_t rows, size_t r, int N,
                       float *out, int bf)
{
    __m512 sum[2][8];
    for (int p = 0; p < 2; p++)
        for (int j = 0; j < N; j++) sum[p][j] = _mm512_setzero_ps();
    const uint16_t *w0 = w + r * k;
    for (size_t l = 0; l < k; l += 8) {
        if ((l & 31) == 0)
            for (size_t i = 0; i < 4; i++)
                _mm_prefetch((const char *)(w0 + i * k + l) + DN_F16_PREFETCH, _MM_HINT_T0);
        __m512 a0 = load_w2(w0 + l, w0 + k + l, bf),
               a1 = load_w2(w0 + 2 * k + l, w0 + 3 * k + l, bf);
        for (int j = 0; j < N; j++) {
            __m512 b = _mm512_broadcast_f32x8(_mm256_loadu_ps(act + (size_t)j * k + l));
            sum[0][j] = _mm512_fmadd_ps(a0, b, sum[0][j]);
            sum[1][j] = _mm512_fmadd_ps(a1, b, sum[1][j]);
        }
    }
    for (int p = 0; p < 2; p++)
        for (int j = 0; j < N; j++) {
            float *o = out + (size_t)j * rows + r + 2 * (size_t)p;
            o[0] = dn_f16_result(hsum8(_mm512_castps512_ps256(sum[p][j])));
            o[1] = dn_f16_result(hsum8(_mm512_extractf32x8_ps(sum[p][j], 1)));
        }
}

/* tinyBLAS outputs of rows [r0, r1) for n <= 8 columns: blocks of four
   rows by narrow4, the rows after the last block of four by the AVX2 kernel.
   Measured against the 8-row tiles below, alternated, 4096^2 n = 8, one
   thread: 1.6-1.8x the AVX2 kernel's speed, where those gave 0.8-1.2x (the
   widened-weight buffer and a second column tile cost more than widening
   each weight again as it is loaded). */
DN_INLINE void sgemm_narrow(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                            size_t r0, size_t r1, float *out, int bf)
{
    size_t r = r0;
    for (; k && r + 4 <= r1; r += 4) switch (n) {
        case 8: narrow4(w, act, k, rows, r, 8, out, bf); break;
        case 7: narrow4(w, act, k, rows, r, 7, out, bf); break;
        case 6: narrow4(w, act, k, rows, r, 6, out, bf); break;
        case 5: narrow4(w, act, k, rows, r, 5, out, bf); break;
        case 4: narrow4(w, act, k, rows, r, 4, out, bf); break;
        case 3: narrow4(w, act, k, rows, r, 3, out, bf); break;
        case 2: narrow4(w, act, k, rows, r, 2, out, bf); break;
        default: narrow4(w, act, k, rows, r, 1, out, bf); break;
        }
    if (r < r1)
        (bf ? &dn_f16_avx2.bf16 : &dn_f16_avx2.fp16)->sgemm_rows(w, rows, k, act, n, r, r1, out);
}

/* One pass of k over the columns for rows r .. r + 7: column tiles of as
   equal widths as five allows (8 columns: 4 + 4; 64: 12 x 5 + 4). */
DN_INLINE void pass(float *wf, const uint16_t *w16, const float *act, size_t k, size_t l0,
                    size_t l1, size_t rows, size_t r, size_t n, float *acc, float *out,
                    const char *const *next, int bf)
{
    for (size_t c = 0; c < n; acc += 16 * 4 * DN_F16_TILE_N, next = NULL, w16 = NULL) {
        size_t left = n - c, tiles = (left + DN_F16_TILE_N - 1) / DN_F16_TILE_N;
        size_t width = (left + tiles - 1) / tiles;
        switch (width) {
        case 5: tile(wf, w16, act, k, l0, l1, rows, r, c, 5, acc, out, next, bf); break;
        case 4: tile(wf, w16, act, k, l0, l1, rows, r, c, 4, acc, out, next, bf); break;
        case 3: tile(wf, w16, act, k, l0, l1, rows, r, c, 3, acc, out, next, bf); break;
        case 2: tile(wf, w16, act, k, l0, l1, rows, r, c, 2, acc, out, next, bf); break;
        default: tile(wf, w16, act, k, l0, l1, rows, r, c, 1, acc, out, next, bf); break;
        }
        c += width;
    }
}

/* tinyBLAS outputs of rows [r0, r1): blocks of eight rows, k in passes of
   DN_F16_KC; the rows after the last block of eight run the AVX2 kernel. */
DN_INLINE void sgemm_rows_t(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                            size_t r0, size_t r1, float *out, int bf)
{
    const dn_w16_kernels *avx2 = bf ? &dn_f16_avx2.bf16 : &dn_f16_avx2.fp16;
    const size_t kc = DN_F16_KC;
    if (n <= 8) {
        sgemm_narrow(w, rows, k, act, n, r0, r1, out, bf);
        return;
    }
    size_t r8 = k && n ? r0 + (r1 - r0) / 8 * 8 : r0;
    size_t tiles = (n + DN_F16_TILE_N - 1) / DN_F16_TILE_N;
    /* 64-byte aligned: the tiles load wf a whole line at a time */
    void *mem =
        r8 > r0 ? malloc((8 * kc + tiles * 16 * 4 * DN_F16_TILE_N) * sizeof(float) + 64) : NULL;
    if (!mem) r8 = r0;
    float *wf = (float *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    for (size_t r = r0; r < r8; r += 8)
        for (size_t l0 = 0; l0 < k; l0 += kc) {
            size_t l1 = l0 + kc < k ? l0 + kc : k;
            /* the next pass: the next kc of these rows, or the first of the next eight */
            size_t nr = l1 < k ? r : r + 8, nl = l1 < k ? l1 : 0;
            const char *next[8];
            for (size_t i = 0; i < 8; i++)
                next[i] = (const char *)(w + (nr + i < r1 ? nr + i : r) * k + nl);
            const char *const *pf = nr + 8 <= r8 && k - nl >= kc ? next : NULL;
            pass(wf, w + r * k, act, k, l0, l1, rows, r, n, wf + 8 * kc, out, pf, bf);
        }
    free(mem);
    if (r8 < r1) avx2->sgemm_rows(w, rows, k, act, n, r8, r1, out);
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
