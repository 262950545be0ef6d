/* SPDX-License-Identifier: MIT */
/*
 * f16_avx512_pairs.h: the AVX-512 tinyBLAS tile over column pairs and the
 * packed columns it reads; included by src/x86/f16_avx512.c alone, after
 * the helpers it uses (DN_INLINE, widen16, hsum8, DN_F16_PREFETCH).
 */
#ifndef DN_F16_AVX512_PAIRS_H
#define DN_F16_AVX512_PAIRS_H

#include "../f16_kernels.h"
#include "../sizes.h"

#include <immintrin.h>

/* ---- tinyBLAS over column pairs ----------------------------------------------

   The same chains with the roles of the halves swapped: a register holds
   one row's chains for two columns (columns 2c and 2c + 1 in its halves),
   the row's eight weights widened into both halves from one broadcast
   load, and the two columns' eight activations one 64-byte load from a
   packed copy of the columns (pair_pack). Each half is still one output's
   8-lane FMA chain in k order, so the bits are tile's. One 6 x 8 tile over
   k = 4096 repeated (a development microbenchmark, Zen 5 guest, weights in
   L1, activations in L2, three rounds alternated) ran 7.5-7.6 FMA
   instructions a nanosecond, the clock's two a cycle, where tile ran
   6.2-6.3 and tile reading one packed stream 6.5-6.7: six widenings a
   step instead of three cost nothing the FMA pipes feel; eight broadcasts
   from eight streams do. Through dn_f16_mat_mul, 4096^2, one thread,
   alternated with tile: n = 64 205-215 GFLOP/s against 187-190, n = 8
   173-181 against 150-159. Tried without gain: passes of 512 or 1024
   elements of k with the chains kept in memory between them (0.93-0.98x;
   0.84-0.95x with the column groups innermost, a tile's weights in L1),
   the packed columns as binary16 (half the bytes, four more widenings a
   step: 1.00-1.02x), superblocks of 96, 192 or 768 KiB. */

/* The packed columns: per group of eight columns (zeros past n), per step
   of eight elements, the eight columns' activations in order (64 floats,
   one line per column pair). */
DN_INLINE size_t pair_group_floats(size_t k) { return k * 8; }

/* The packed copy's largest size: it doubles the columns' memory, and at
   4096^2, n = 512 (8 MiB of columns) it no longer paid: level with tile,
   alternated, one thread. Larger products run tile. */
#define DN_F16_PAIR_PACK_MAX ((size_t)8 << 20)

/* Column c's group in the packed copy (c a multiple of 8), or NULL. */
DN_INLINE const float *pair_group(const float *pairs, size_t k, size_t c)
{
    return pairs ? pairs + c / 8 * pair_group_floats(k) : NULL;
}

static size_t pair_pack_bytes(size_t k, size_t n)
{
    size_t floats;
    if (!k || k % 8 || !dn_size_mul((n + 7) / 8, pair_group_floats(k), &floats) ||
        floats > (DN_F16_PAIR_PACK_MAX - DN_LINE) / 4)
        return 0;
    return floats * 4 + DN_LINE;
}

static void pair_pack(const float *act, size_t k, size_t n, size_t c0, size_t c1, void *packed)
{
    float *pk = dn_line_up(packed);
    for (size_t g = c0 / 8; g < (c1 + 7) / 8; g++) {
        float *dst = pk + g * pair_group_floats(k);
        for (size_t l = 0; l < k; l += 8)
            for (size_t j = 0; j < 8; j++) {
                size_t c = 8 * g + j;
                __m256 v = c < n ? _mm256_loadu_ps(act + c * k + l) : _mm256_setzero_ps();
                _mm256_store_ps(dst + l * 8 + j * 8, v);
            }
    }
}

/* Rows r .. r + R - 1 x the N (<= 8) columns of one packed group, over the
   whole of k: R x ceil(N / 2) registers of chains, nothing stored between
   steps; a padding column's half is computed and dropped. */
DN_INLINE void pair_tile(const uint16_t *w, const float *pk, size_t k, size_t rows, size_t r, int R,
                         int N, float *out, int bf)
{
    const int C = (N + 1) / 2;
    __m512 sum[6][4];
    for (int p = 0; p < R; p++)
        for (int c = 0; c < C; c++) sum[p][c] = _mm512_setzero_ps();
    const uint16_t *w0 = w + r * k;
    for (size_t l = 0; l < k; l += 8) {
        if ((l & 31) == 0)
            for (int p = 0; p < R; p++)
                _mm_prefetch((const char *)(w0 + (size_t)p * k + l) + DN_F16_PREFETCH, _MM_HINT_T0);
        __m512 b[4];
        for (int c = 0; c < C; c++) b[c] = _mm512_load_ps(pk + l * 8 + 16 * (size_t)c);
        for (int p = 0; p < R; p++) {
            __m128i h = _mm_loadu_si128((const __m128i *)(w0 + (size_t)p * k + l));
            __m512 a = widen16(_mm256_broadcastsi128_si256(h), bf);
            for (int c = 0; c < C; c++) sum[p][c] = _mm512_fmadd_ps(a, b[c], sum[p][c]);
        }
    }
    for (int p = 0; p < R; p++)
        for (int c = 0; c < C; c++) {
            float *o = out + 2 * (size_t)c * rows + r + (size_t)p;
            o[0] = dn_f16_result(hsum8(_mm512_castps512_ps256(sum[p][c])));
            if (2 * c + 1 < N) o[rows] = dn_f16_result(hsum8(_mm512_extractf32x8_ps(sum[p][c], 1)));
        }
}

/* pair_tile with compile-time row and column counts. */
DN_INLINE void pair_tile_n(const uint16_t *w, const float *pk, size_t k, size_t rows, size_t r,
                           int R, size_t n, float *out, int bf)
{
    switch (n) {
    case 8: pair_tile(w, pk, k, rows, r, R, 8, out, bf); break;
    case 7: pair_tile(w, pk, k, rows, r, R, 7, out, bf); break;
    case 6: pair_tile(w, pk, k, rows, r, R, 6, out, bf); break;
    case 5: pair_tile(w, pk, k, rows, r, R, 5, out, bf); break;
    case 4: pair_tile(w, pk, k, rows, r, R, 4, out, bf); break;
    case 3: pair_tile(w, pk, k, rows, r, R, 3, out, bf); break;
    case 2: pair_tile(w, pk, k, rows, r, R, 2, out, bf); break;
    default: pair_tile(w, pk, k, rows, r, R, 1, out, bf); break;
    }
}

#endif
