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
 *  - tinyBLAS: the chains of one row for columns 2c and 2c+1 share a
 *    register, the row's eight weights widened into both halves and the
 *    two columns' activations one load from a packed copy
 *    (f16_avx512_pairs.h); without the copy, the chains of rows 2p and
 *    2p+1 for one column, the column's activations broadcast to both
 *    halves. Either way a tile of 6 rows x 8 columns keeps 24 registers of
 *    chains (48 8-lane chains), where the AVX2 tile keeps twelve.
 * Widening is exact, so when and how often a weight is widened changes no
 * bit. The entries left out of the table (conversions, one tinyBLAS
 * element, mad, scale) run the AVX2 kernels, as do the rows after the last
 * block of four.
 */
#include "../f16_kernels.h"
#include "../bits.h"
#include "../sizes.h"
#include "avx2_common.h"
#include "avx512_half.h"

#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Rows up to this long run one at a time as one contiguous stream fetched
   DN_F16_PREFETCH_ONE_ROW ahead; longer rows run in the blocks of eight.
   Measured from memory (AMD EPYC Zen 5 guest, 2026-12-03, idle, alternated
   rounds; docs/log/f16.md): with the kernel tables called directly, k =
   2048 shapes 36-39 GB/s against 27-31 for the blocks; through the API,
   4096^2 1.12-1.17x on one thread and 1.2-1.3x on two, 2048 x 5632 on two
   threads 38-56 GB/s against 30-35 (one thread level), 8192^2 on two
   threads 37-41 against 34.5 (one thread 0.87-1.06x); 1024 x 14336 one
   thread 0.8-1.0x, hence the limit. A distance of 2 KiB gave 1.2x less
   than 4 KiB on one row, 6 or 8 KiB no more. No effect on bits: a row's
   chains are its own whatever the rows beside it. */
#define DN_F16_ONE_ROW_MAX_K 8192
#define DN_F16_PREFETCH_ONE_ROW 4096

/* The one-row stream reads the activation as its 16-bit patterns: BF16
   always, F16 for rows longer than this (see row_dot_h). No effect on
   bits. */
#define DN_F16_HALVES_MIN_K 4096

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
   stream fetched `distance` bytes ahead (one prefetch per line). Steps go
   two at a time (64 elements): the loop's address and prefetch bookkeeping
   is then spread over twice the work; each chain still takes its elements
   in k order. */
DN_INLINE void vec_dot_r(const uint16_t *w, size_t k, const float *x, float *out, int R, int bf,
                         size_t distance)
{
    __m512 lo[8], hi[8];
    for (int i = 0; i < R; i++) lo[i] = hi[i] = _mm512_setzero_ps();
    size_t whole = k & ~(size_t)31, pairs = k & ~(size_t)63, b = 0;
    for (; b < pairs; b += 64) {
        __m512 x0 = _mm512_loadu_ps(x + b), x1 = _mm512_loadu_ps(x + b + 16);
        __m512 x2 = _mm512_loadu_ps(x + b + 32), x3 = _mm512_loadu_ps(x + b + 48);
        /* past its row's end a stream runs on into the same row of the
           next block, not into the next row (another stream's, fetched
           already): the next block's rows then start warm, their pages'
           translations too. Alternated with running on into the next row,
           one thread, from memory, medians of 3-4 runs under a load of
           1.4-2.5: TinyLlama's 5632 x 2048 on 4 KiB pages 1.11x the speed,
           2048 x 5632 1.14x; on 2 MiB pages 5632 x 2048 1.28x, 8192^2
           1.08x. No effect on bits. */
        size_t ahead = 2 * b + distance >= 2 * k ? (size_t)R * k : 0;
        for (int i = 0; i < R; i++) {
            const char *pf =
                (const char *)(w + (size_t)i * k + b + ahead - (ahead ? k : 0)) + distance;
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

#include "f16_avx512_cols.h"

/* 32 weights as two 32-byte loads. GGUF aligns a tensor's data to 32
   bytes, so a mapped row starts on a line or half-way into one; a 64-byte
   load then straddles two lines at every step. TinyLlama's BF16 file (every
   tensor 32 bytes past a line): its decode on one thread 12.0-12.5
   tokens/s with 64-byte loads, the AVX2 kernel's 15.0-15.4 (whose 32-byte
   loads never straddle); see docs/f16.md. The weights' patterns (xh) are
   the library's own, line-aligned. */
DN_INLINE __m512i load_halves(const uint16_t *p)
{
    __m256i lo = _mm256_loadu_si256((const __m256i *)p);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo),
                              _mm256_loadu_si256((const __m256i *)(p + 16)), 1);
}

/* One row against the activation's patterns xh: vec_dot_r's chains, with
   the activation read at two bytes an element. From memory the stream of
   the row then shares L1 with 16 KiB of activation, not 32: measured on
   8192^2 and 2048 x 5632, one thread (docs/f16.md, "The activation at two
   bytes"), F16 1.10-1.13x and BF16 1.13-1.19x the one-row stream's speed
   on f32; at k = 2048 F16 gains nothing (its activation widened again by
   F16C costs what the footprint saves), hence DN_F16_HALVES_MIN_K.
   BF16 widens in lanes: a 64-byte load of 32 values b .. b+31 unpacked
   with zero words below them gives lo = b+0..3 | b+8..11 | b+16..19 |
   b+24..27 and hi = the 4..7 of each eight. Quarter q of lo holds lanes
   0..3 of ggml's chain a_q, of hi its lanes 4..7, and the activation's
   patterns unpack the same way, so every chain lane takes its elements in
   k order as in vec_dot_r; the quarters go back to a0|a1, a2|a3 before
   the fold. Two in-lane unpacks per 32 weights where load_w spends two
   lane-crossing extensions and two shifts. */
DN_INLINE float row_dot_h(const uint16_t *w, size_t k, const float *x, const uint16_t *xh, int bf)
{
    __m512 lo = _mm512_setzero_ps(), hi = lo;
    const __m512i zero = _mm512_setzero_si512();
    size_t whole = k & ~(size_t)31;
    for (size_t b = 0; b < whole; b += 32) {
        _mm_prefetch((const char *)(w + b) + DN_F16_PREFETCH_ONE_ROW, _MM_HINT_T0);
        if (bf) {
            __m512i v = load_halves(w + b);
            __m512i u = _mm512_loadu_si512((const void *)(xh + b));
            __m512 wl = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, v));
            __m512 wh = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, v));
            lo = vd_step(wl, _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, u)), lo, 1);
            hi = vd_step(wh, _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, u)), hi, 1);
        } else {
            lo = vd_step(load_w(w + b, 0), load_w(xh + b, 0), lo, 0);
            hi = vd_step(load_w(w + b + 16, 0), load_w(xh + b + 16, 0), hi, 0);
        }
    }
    if (bf) { /* lo = L0 L1 L2 L3, hi = H0 H1 H2 H3 -> L0 H0 L1 H1 and L2 H2 L3 H3 */
        __m512 t01 = _mm512_shuffle_f32x4(lo, hi, 0x44), t23 = _mm512_shuffle_f32x4(lo, hi, 0xEE);
        lo = _mm512_shuffle_f32x4(t01, t01, 0xD8);
        hi = _mm512_shuffle_f32x4(t23, t23, 0xD8);
    }
    return double_tail(fold2(lo, hi, bf), w, x, whole, k, bf);
}

/* Rows up to DN_F16_ONE_ROW_MAX_K long one at a time (one contiguous
   stream); longer ones in blocks of eight rows (sixteen registers of
   chains), then four, three, two, one. Measured on 8192^2 and TinyLlama's
   shapes (2048 x 2048, 5632 x 2048, 2048 x 5632, 32000 x 2048) from
   memory, one thread, alternated with the four-row form: see
   docs/log/f16.md, "Profile of mat_vec from memory". */
DN_INLINE void mat_vec_rows_t(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                              size_t r0, size_t r1, float *out, int bf)
{
    size_t r = r0;
    if (k <= DN_F16_ONE_ROW_MAX_K && (bf || k > DN_F16_HALVES_MIN_K)) {
        for (; r < r1; r++) {
            dn_rows_page_ahead(w, 2 * k, r, r1);
            out[r] = row_dot_h(w + r * k, k, x, xh, bf);
        }
        return;
    }
    if (k <= DN_F16_ONE_ROW_MAX_K) {
        for (; r < r1; r++) {
            dn_rows_page_ahead(w, 2 * k, r, r1);
            vec_dot_r(w + r * k, k, x, out + r, 1, bf, DN_F16_PREFETCH_ONE_ROW);
        }
        return;
    }
    for (; r + 8 <= r1; r += 8) vec_dot_r(w + r * k, k, x, out + r, 8, bf, DN_F16_PREFETCH);
    for (; r + 4 <= r1; r += 4) vec_dot_r(w + r * k, k, x, out + r, 4, bf, DN_F16_PREFETCH);
    for (; r + 3 <= r1; r += 3) vec_dot_r(w + r * k, k, x, out + r, 3, bf, DN_F16_PREFETCH);
    switch (r1 - r) {
    case 2: vec_dot_r(w + r * k, k, x, out + r, 2, bf, DN_F16_PREFETCH); break;
    case 1: vec_dot_r(w + r * k, k, x, out + r, 1, bf, DN_F16_PREFETCH); break;
    default: break;
    }
}

/* One tile of tinyBLAS outputs: rows r .. r + 2P - 1 (P = 1, 2 or 3 row
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

#include "f16_avx512_pairs.h"

/* Bytes of weights (at most 48 rows) a superblock keeps in L2 while the
   column groups pass: measured with the kernels called directly,
   alternated, 4096^2 n = 64, one thread: 384 KiB (48 rows) 1.08-1.13x the
   speed without superblocks (the 1 MiB of activations then streamed from
   L3 for every six rows), 192 KiB 1.03-1.09x. No effect on bits. */
#define DN_F16_SUPER_BYTES ((size_t)384 * 1024)

/* ---- BF16 tinyBLAS by AVX512_BF16's vdpbf16ps -------------------------------

   vdpbf16ps adds to each f32 lane two products of bfloat16 pairs, the
   pair's high word first, each add one fused multiply-add (the product of
   two bfloat16 values is exact in f32): two steps of an FMA chain in one
   instruction, where the FMA kernel above takes one. With the words
   ordered so that lane p's pair is (element l + p, element l + 8 + p),
   lane p's chain takes its elements p, p + 8, p + 16, ... in k order: the
   reference's chain, bit for bit, except where the instruction reads a
   subnormal input as zero or flushes a subnormal result (it does both,
   whatever MXCSR says). dp_guard rules those out: when every nonzero
   weight and activation is normal and their exponent fields add up to at
   least 142, every product is a multiple of 2^-126 (a bfloat16 of field E
   is a multiple of 2^(E - 134)), so every partial sum is one too, and a
   nonzero multiple of 2^-126 is never subnormal. A tile that fails the
   guard, or whose activation is not bfloat16 (act's low words nonzero),
   runs the FMA tile instead; infinities and NaNs follow the FMA chain's
   rules either way. Measured on a Zen 5 (AMD EPYC) against the fmaf chain:
   2 x 10^7 random lanes of chains of 8 steps with fields 71-255 (and
   zeros, infinities, NaNs) equal; below the guard (fields 55-70) 63% of
   lanes differ. dn_f16_avx512bf16_exact runs the kernel on a probe before
   dispatch registers it, so a CPU whose instruction adds in another order
   keeps the FMA kernel. */

/* Word order of a row's 16 elements (each 256-bit half one row): dword p
   = (high word element p, low word element p + 8). */
static const uint16_t dp_order[32] = {8,  0,  9,  1,  10, 2,  11, 3,  12, 4,  13,
                                      5,  14, 6,  15, 7,  24, 16, 25, 17, 26, 18,
                                      27, 19, 28, 20, 29, 21, 30, 22, 31, 23};

/* The exponent field the guard needs from the activation columns [0, N)
   of act: 0 when a value is not a bfloat16 or is subnormal, else the least
   field among the nonzero values (256 when every value is zero). */
DN_INLINE unsigned dp_act_field(const float *act, size_t k, int N)
{
    __m512i least = _mm512_set1_epi32(-1), low = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi32(1), lowmask = _mm512_set1_epi32(0xFFFF);
    for (int j = 0; j < N; j++)
        for (size_t l = 0; l < k; l += 16) {
            __mmask16 m = k - l >= 16 ? 0xFFFF : (__mmask16)((1u << (k - l)) - 1);
            __m512i v = _mm512_maskz_loadu_epi32(m, act + (size_t)j * k + l);
            low = _mm512_or_si512(low, _mm512_and_si512(v, lowmask));
            /* |v| * 2 - 1: a zero wraps to the largest value */
            least = _mm512_min_epu32(least, _mm512_sub_epi32(_mm512_slli_epi32(v, 1), one));
        }
    if (_mm512_test_epi32_mask(low, low)) return 0;
    return (unsigned)(((uint64_t)_mm512_reduce_min_epu32(least) + 1) >> 24);
}

/* The guard: both sides' least fields (dp_act_field, and the weights' of
   the tile) normal and adding up to 142 or more. */
static inline int dp_guard(unsigned act_field, unsigned w_field)
{
    return act_field >= 1 && w_field >= 1 && act_field + w_field >= 142;
}

/* Elements l .. l + 15 of rows p0 (low half) and p1 (high half); when
   half, elements l .. l + 7 and zero words after them. */
DN_INLINE __m512i dp_load2(const uint16_t *p0, const uint16_t *p1, int half)
{
    __m256i a, b;
    if (half) {
        a = _mm256_maskz_loadu_epi16(0xFF, p0);
        b = _mm256_maskz_loadu_epi16(0xFF, p1);
    } else {
        a = _mm256_loadu_si256((const __m256i *)p0);
        b = _mm256_loadu_si256((const __m256i *)p1);
    }
    return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}

/* Words a column's packed activation (dp_pack) holds per step of 16
   elements: dword p = (element l + p, element l + 8 + p), zero words past
   k. */
DN_INLINE size_t dp_column_words(size_t k) { return (k + 15) / 16 * 16; }

/* The activation columns [c0, c1) of act as dp_step reads them. Packed once
   a product, not per tile: every tile reads its eight columns again (from L2
   once k passes about 1500), and packed they are half the bytes and one
   broadcast load a column a step instead of two loads, a shift and an or.
   Measured alternated with the pairs built in the tile, 4096^2, one
   thread: n = 64 1.25-1.36x the speed, n = 8 1.05-1.15x. Only the high
   words are kept: a column whose low words are not all zero never reaches
   the vdpbf16ps tile (dp_act_field). */
static void dp_pack(const float *act, size_t k, size_t c0, size_t c1, uint16_t *packed)
{
    const __m256i high = _mm256_set1_epi32((int)0xFFFF0000u);
    for (size_t j = c0; j < c1; j++)
        for (size_t l = 0; l < k; l += 16) {
            __mmask16 m = k - l >= 16 ? 0xFFFF : (__mmask16)((1u << (k - l)) - 1);
            __m512i v = _mm512_maskz_loadu_epi32(m, act + j * k + l);
            __m256i lo = _mm512_castsi512_si256(v), hi = _mm512_extracti64x4_epi64(v, 1);
            __m256i pair = _mm256_or_si256(_mm256_and_si256(lo, high), _mm256_srli_epi32(hi, 16));
            _mm256_storeu_si256((__m256i *)(packed + j * dp_column_words(k) + l), pair);
        }
}

/* One step of 16 elements (8 when half) of the tile, the weights' least
   field folded into *least as |w| * 2 - 1 (a zero wraps to the largest). */
DN_BF16_TARGET DN_INLINE void dp_step(const uint16_t *w0, const uint16_t *pk, size_t k, size_t l,
                                      int P, int N, int half, __m512 sum[3][8], __m512i *least)
{
    const __m512i order = _mm512_loadu_si512(dp_order), one = _mm512_set1_epi16(1);
    __m512bh a[3];
    for (int p = 0; p < P; p++) {
        __m512i raw = dp_load2(w0 + 2 * (size_t)p * k + l, w0 + (2 * (size_t)p + 1) * k + l, half);
        *least = _mm512_min_epu16(*least, _mm512_sub_epi16(_mm512_slli_epi16(raw, 1), one));
        a[p] = (__m512bh)_mm512_permutexvar_epi16(order, raw);
    }
    for (int j = 0; j < N; j++) {
        __m512bh b = (__m512bh)_mm512_broadcast_i64x4(
            _mm256_loadu_si256((const __m256i *)(pk + (size_t)j * dp_column_words(k) + l)));
        for (int p = 0; p < P; p++) sum[p][j] = _mm512_dpbf16_ps(sum[p][j], a[p], b);
    }
}

/* tile's outputs by vdpbf16ps, two chain steps an instruction; returns 0,
   storing nothing, when the guard fails. */
DN_BF16_TARGET DN_INLINE int dp_tile(const uint16_t *w, const uint16_t *pk, size_t k, size_t rows,
                                     size_t r, int P, int N, float *out, unsigned act_field)
{
    __m512 sum[3][8];
    for (int p = 0; p < P; p++)
        for (int j = 0; j < N; j++) sum[p][j] = _mm512_setzero_ps();
    __m512i least = _mm512_set1_epi16(-1);
    const uint16_t *w0 = w + r * k;
    size_t l = 0;
    for (; l + 16 <= k; l += 16) {
        if ((l & 31) == 0)
            for (size_t i = 0; i < 2 * (size_t)P; i++)
                _mm_prefetch((const char *)(w0 + i * k + l) + DN_F16_PREFETCH, _MM_HINT_T0);
        dp_step(w0, pk, k, l, P, N, 0, sum, &least);
    }
    if (l < k) dp_step(w0, pk, k, l, P, N, 1, sum, &least);
    __m512i words = _mm512_min_epu32(_mm512_srli_epi32(least, 16),
                                     _mm512_and_si512(least, _mm512_set1_epi32(0xFFFF)));
    if (!dp_guard(act_field, (unsigned)(_mm512_reduce_min_epu32(words) + 1) >> 8)) return 0;
    for (int p = 0; p < P; p++)
        for (int j = 0; j < N; j++) {
            float *o = out + (size_t)j * rows + r + 2 * (size_t)p;
            o[0] = dn_f16_result(hsum8(_mm512_castps512_ps256(sum[p][j])));
            o[1] = dn_f16_result(hsum8(_mm512_extractf32x8_ps(sum[p][j], 1)));
        }
    return 1;
}

/* dp_tile with compile-time row pairs (3 or 2) and columns (1-8). Not
   inlined: the callers are compiled without AVX512_BF16. */
DN_BF16_TARGET static int dp_tile_n(const uint16_t *w, const uint16_t *pk, size_t k, size_t rows,
                                    size_t r, int P, size_t n, float *out, unsigned f)
{
    if (P == 3) switch (n) {
        case 8: return dp_tile(w, pk, k, rows, r, 3, 8, out, f);
        case 7: return dp_tile(w, pk, k, rows, r, 3, 7, out, f);
        case 6: return dp_tile(w, pk, k, rows, r, 3, 6, out, f);
        case 5: return dp_tile(w, pk, k, rows, r, 3, 5, out, f);
        case 4: return dp_tile(w, pk, k, rows, r, 3, 4, out, f);
        case 3: return dp_tile(w, pk, k, rows, r, 3, 3, out, f);
        case 2: return dp_tile(w, pk, k, rows, r, 3, 2, out, f);
        default: return dp_tile(w, pk, k, rows, r, 3, 1, out, f);
        }
    switch (n) {
    case 8: return dp_tile(w, pk, k, rows, r, 2, 8, out, f);
    case 7: return dp_tile(w, pk, k, rows, r, 2, 7, out, f);
    case 6: return dp_tile(w, pk, k, rows, r, 2, 6, out, f);
    case 5: return dp_tile(w, pk, k, rows, r, 2, 5, out, f);
    case 4: return dp_tile(w, pk, k, rows, r, 2, 4, out, f);
    case 3: return dp_tile(w, pk, k, rows, r, 2, 3, out, f);
    case 2: return dp_tile(w, pk, k, rows, r, 2, 2, out, f);
    default: return dp_tile(w, pk, k, rows, r, 2, 1, out, f);
    }
}

/* One tile of mode bf (0: F16, 1: BF16, 2: BF16 by vdpbf16ps from the
   packed columns pk where the guard holds and P > 1, else the FMA tile:
   the same bits). */
DN_INLINE void tile_mode(const uint16_t *w, const float *act, const uint16_t *pk,
                         const float *pairs, size_t k, size_t rows, size_t r, int P, size_t n,
                         float *out, int bf, unsigned act_field)
{
    if (bf == 2 && P > 1 && act_field && dp_tile_n(w, pk, k, rows, r, P, n, out, act_field)) return;
    if (pairs)
        pair_tile_n(w, pairs, k, rows, r, 2 * P, n, out, bf != 0);
    else
        tile_n(w, act, k, rows, r, P, n, out, bf != 0);
}

/* Rows [q, end) (end - q even) x the column group at c: tiles of six rows,
   then one of four or two, so a range's last rows share its column pass. */
DN_INLINE void group_rows(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                          size_t c, size_t q, size_t end, float *out, int bf, const uint16_t *pk,
                          const unsigned *field, const float *pairs)
{
    const uint16_t *pkc = bf == 2 ? pk + c * dp_column_words(k) : NULL;
    const float *pg = pair_group(pairs, k, c);
    const size_t N = n - c < 8 ? n - c : 8;
    const unsigned f = bf == 2 ? field[c / 8] : 0;
    for (; q + 6 <= end; q += 6)
        tile_mode(w, act + c * k, pkc, pg, k, rows, q, 3, N, out + c * rows, bf, f);
    if (q + 4 <= end) {
        tile_mode(w, act + c * k, pkc, pg, k, rows, q, 2, N, out + c * rows, bf, f);
        q += 4;
    }
    if (q + 2 <= end) tile_mode(w, act + c * k, pkc, pg, k, rows, q, 1, N, out + c * rows, bf, f);
}

/* tinyBLAS outputs of rows [r0, r1): above eight columns, superblocks of
   rows whose weights stay in L2 while each group of eight columns passes
   over them; each superblock's rows in group_rows' tiles; an odd last row
   runs the AVX2 kernel. Measured with the kernels called directly,
   alternated, 4096^2, one thread: n = 8 with blocks of six 1.19-1.29x the
   speed with blocks of four; n = 64 (without superblocks) 1.05-1.30x the
   speed of 8-row x 5-column tiles reading weights widened once per pass of
   512 into a buffer (that design's n = 8: 0.8-1.2x the AVX2 kernel, this
   one's 1.4-1.8x). The rows after the last six used to take a pass of
   their own, and two of them the AVX2 kernel: two threads, n = 64, tasks
   of 128 rows (2048 x 4096) or 32 (480 x 4096), that tail made the product
   1.13-1.16x and 1.49-1.59x slower than now. */
DN_INLINE void sgemm_rows_t(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                            size_t r0, size_t r1, float *out, int bf, const uint16_t *pk,
                            const unsigned *field, const float *pairs)
{
    size_t r = r0, even = r0 + (r1 - r0) / 2 * 2;
    size_t sb = k ? DN_F16_SUPER_BYTES / 2 / k / 6 * 6 : 6;
    sb = sb < 6 ? 6 : sb > 48 ? 48 : sb;
    if (n <= 8) sb = SIZE_MAX; /* one group: nothing to keep in L2 between passes */
    for (size_t span; k && r < even; r += span) {
        span = even - r < sb ? even - r : sb;
        for (size_t c = 0; c < n; c += 8)
            group_rows(w, rows, k, act, n, c, r, r + span, out, bf, pk, field, pairs);
    }
    if (r < r1)
        (bf ? &dn_f16_avx2.bf16 : &dn_f16_avx2.fp16)
            ->sgemm_rows(w, rows, k, act, NULL, n, r, r1, out);
}

/* ---- the instances: F16 (bf = 0) and BF16 (bf = 1) ---------------------------- */

static float vec_dot_avx512(const uint16_t *w, const float *x, size_t k)
{
    float r;
    vec_dot_r(w, k, x, &r, 1, 0, DN_F16_PREFETCH);
    return r;
}

static void mat_vec_rows_avx512(const uint16_t *w, size_t k, const float *x, const uint16_t *xh,
                                size_t r0, size_t r1, float *out)
{
    mat_vec_rows_t(w, k, x, xh, r0, r1, out, 0);
}

static void vec_dot_cols_avx512(const uint16_t *w, size_t rows, size_t k, const float *act,
                                size_t n, size_t r0, size_t r1, float *out)
{
    vec_dot_cols_t(w, rows, k, act, n, r0, r1, out, 0);
}

/* pair_pack's columns in the block the API allocated, or NULL (no memory
   for them: tile gives the same bits from the columns themselves). */
static const float *pairs_of(const void *packed)
{
    return packed ? dn_line_up((void *)(uintptr_t)packed) : NULL;
}

static void sgemm_rows_avx512(const uint16_t *w, size_t rows, size_t k, const float *act,
                              const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 0, NULL, NULL, pairs_of(packed));
}

static float bf16_vec_dot_avx512(const uint16_t *w, const float *x, size_t k)
{
    float r;
    vec_dot_r(w, k, x, &r, 1, 1, DN_F16_PREFETCH);
    return r;
}

static void bf16_mat_vec_rows_avx512(const uint16_t *w, size_t k, const float *x,
                                     const uint16_t *xh, size_t r0, size_t r1, float *out)
{
    mat_vec_rows_t(w, k, x, xh, r0, r1, out, 1);
}

static void bf16_vec_dot_cols_avx512(const uint16_t *w, size_t rows, size_t k, const float *act,
                                     size_t n, size_t r0, size_t r1, float *out)
{
    vec_dot_cols_t(w, rows, k, act, n, r0, r1, out, 1);
}

static void bf16_sgemm_rows_avx512(const uint16_t *w, size_t rows, size_t k, const float *act,
                                   const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 1, NULL, NULL, pairs_of(packed));
}

/* The packed columns of mode 2 (dp_pack_columns): the guard's activation
   field of each group of eight columns, then the columns' words from byte
   dp_fields_bytes(n) on. */
DN_INLINE size_t dp_fields_bytes(size_t n)
{
    return ((n + 7) / 8 * sizeof(unsigned) + 63) / 64 * 64;
}

/* Bytes of the packed columns, 0 (no packed form: the FMA rows) for k = 0
   or when they would not fit in a size_t. */
static size_t dp_pack_bytes(size_t k, size_t n)
{
    size_t words;
    if (!k || !dn_size_mul(n, dp_column_words(k), &words) || words > SIZE_MAX / 4) return 0;
    return dp_fields_bytes(n) + words * sizeof(uint16_t);
}

/* Once per product (run_product's preparation, a group of eight columns
   a task), not per task of the rows: every such task reads all n columns,
   so packing and scanning them per task (eight tasks a thread) cost each
   task as much again as its columns. */
static void dp_pack_columns(const float *act, size_t k, size_t n, size_t c0, size_t c1,
                            void *packed)
{
    unsigned *field = packed;
    for (size_t g = c0 / 8; g < (c1 + 7) / 8; g++)
        field[g] = dp_act_field(act + 8 * g * k, k, n - 8 * g < 8 ? (int)(n - 8 * g) : 8);
    dp_pack(act, k, c0, c1, (uint16_t *)((char *)packed + dp_fields_bytes(n)));
}

/* Mode 2 from the packed columns, else (no memory for them) the FMA rows:
   the same bits either way. */
static void bf16_dp_sgemm_rows(const uint16_t *w, size_t rows, size_t k, const float *act,
                               const void *packed, size_t n, size_t r0, size_t r1, float *out)
{
    if (!packed) {
        sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 1, NULL, NULL, NULL);
        return;
    }
    const uint16_t *pk = (const uint16_t *)((const char *)packed + dp_fields_bytes(n));
    sgemm_rows_t(w, rows, k, act, n, r0, r1, out, 2, pk, packed, NULL);
}

const dn_f16_kernels dn_f16_avx512 = {
    .fp16 =
        {
            .vec_dot = vec_dot_avx512,
            .mat_vec_rows = mat_vec_rows_avx512,
            .vec_dot_cols = vec_dot_cols_avx512,
            .pack_bytes = pair_pack_bytes,
            .pack = pair_pack,
            .sgemm_rows = sgemm_rows_avx512,
        },
    .bf16 =
        {
            .vec_dot = bf16_vec_dot_avx512,
            .mat_vec_rows = bf16_mat_vec_rows_avx512,
            .vec_dot_cols = bf16_vec_dot_cols_avx512,
            .pack_bytes = pair_pack_bytes,
            .pack = pair_pack,
            .sgemm_rows = bf16_sgemm_rows_avx512,
        },
};

/* dn_f16_avx512 with BF16's tinyBLAS rows by vdpbf16ps. */
const dn_f16_kernels dn_f16_avx512bf16 = {
    .fp16 =
        {
            .vec_dot = vec_dot_avx512,
            .mat_vec_rows = mat_vec_rows_avx512,
            .vec_dot_cols = vec_dot_cols_avx512,
            .pack_bytes = pair_pack_bytes,
            .pack = pair_pack,
            .sgemm_rows = sgemm_rows_avx512,
        },
    .bf16 =
        {
            .vec_dot = bf16_vec_dot_avx512,
            .mat_vec_rows = bf16_mat_vec_rows_avx512,
            .vec_dot_cols = bf16_vec_dot_cols_avx512,
            .pack_bytes = dp_pack_bytes,
            .pack = dp_pack_columns,
            .sgemm_rows = bf16_dp_sgemm_rows,
        },
};

/* The probe behind dispatch's choice of dn_f16_avx512bf16: six rows x
   eight columns x 96 elements of normal bfloat16 values of fields 110-140
   (the guard holds, so the vdpbf16ps tile runs), against the reference.
   Random chains like these differ from the reference in 3% of lanes when
   the pair's words are added in the other order, so an instruction that
   does not add as dp_tile assumes fails here. */
int dn_f16_avx512bf16_exact(void)
{
    enum { R = 6, N = 8, K = 96 };
    uint16_t w[R * K];
    float act[N * K], want[N * R], got[N * R];
    uint32_t z = 0x9E3779B9u;
    for (int i = 0; i < R * K + N * K; i++) {
        z = z * 1664525u + 1013904223u;
        uint16_t h =
            (uint16_t)(((z >> 31) << 15) | ((110 + (z >> 8) % 31) << 7) | ((z >> 16) & 0x7F));
        if (i < R * K)
            w[i] = h;
        else
            act[i - R * K] = dn_bf16_widen1(h);
    }
    uint16_t packed[(64 + N * K * 2) / 2];
    if (dp_pack_bytes(K, N) > sizeof packed) return 0;
    dp_pack_columns(act, K, N, 0, N, packed);
    dn_ref_bf16_sgemm_rows(w, R, K, act, NULL, N, 0, R, want);
    bf16_dp_sgemm_rows(w, R, K, act, packed, N, 0, R, got);
    return memcmp(want, got, sizeof want) == 0;
}
