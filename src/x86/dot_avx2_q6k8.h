/* SPDX-License-Identifier: MIT */
/*
 * dot_avx2_q6k8.h: the repacked Q6_K product on AVX2, eight rows
 * interleaved eight bytes at a time (decodenum/repack.h), the rows in the
 * lanes; included by src/x86/dot_avx2.c (and, for the reference's pieces,
 * dot_avx512_q6k8.h). The pieces are big_sub32_4's (dot_avx2_pieces.h,
 * has_o 0) for eight rows: the same integers C_k (the sub-blocks' scaled
 * sums less the zero point), the same A = sum_k C_k S_k (exact in any
 * order under gok), the same limit test and rounding, so the same bits.
 */
#ifndef DN_DOT_AVX2_Q6K8_H
#define DN_DOT_AVX2_Q6K8_H

#include "dot_avx2_pieces.h"

/* Offsets in an interleaved chunk (decodenum/repack.h): the eight d, the
   scales (byte 8 s + r), the eight 192-byte steps. */
#define Q6K8_SC 16
#define Q6K8_Q 144

/* The pieces of the rows in `rows` (a mask) of the group at g by the
   reference's piece function, each row's block put back together first
   (the other lanes 0). */
static __attribute__((noinline)) __m256 q6k8_ref_pieces(const dn_mv_ctx *c, const uint8_t *grp,
                                                        size_t g, int rows)
{
    uint8_t blk[DN_Q6K8_BYTES / DN_Q4K8_ROWS];
    float f[8] = {0};
    for (int r = 0; r < 8; r++)
        if (rows >> r & 1) {
            dn_q6k8_get(grp, r, blk);
            f[r] = dn_dot_piece_of_bytes(DN_TYPE_Q6_K, blk, c->act, c->scaling, g, g + 256);
        }
    return _mm256_loadu_ps(f);
}

/* The digits (0..63) of chunk 4h + k of four rows, from one step's half
   st (ql bytes at st: chunks 4h low nibbles, 4h + 2 high; at st + 64:
   4h + 1, 4h + 3; qh bytes at st + 128: chunk 4h + k in bits 2k, 2k + 1),
   the high bits moved to bits 4-5 by 16-bit shifts below 8 (from the same
   byte) and masked. */
AI __m256i q6k8_half_digits(const uint8_t *st, int k)
{
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    const __m256i x = load32(st + 64 * (k & 1)), y = load32(st + 128);
    const __m256i lo = k < 2 ? x : _mm256_srli_epi16(x, 4);
    const __m256i hi = k == 0   ? _mm256_slli_epi16(y, 4)
                       : k == 1 ? _mm256_slli_epi16(y, 2)
                       : k == 2 ? y
                                : _mm256_srli_epi16(y, 2);
    return _mm256_or_si256(_mm256_and_si256(lo, m4), _mm256_and_si256(hi, m30));
}

/* C_j = [C_j of rows 0..7] (int32) of chunk j = 4h + k of an interleaved
   chunk group, C_j = sum over the chunk's two sub-blocks s of sc_s (sum q c
   - 32 bs16_s). A 32-byte half hf of a step holds eight bytes of four rows
   (rows 4 hf ..): one broadcast of eight codes feeds both halves' maddubs,
   row r's pairs in words 4 (r % 4) ..; a pair is <= 2 * 63 * 127 = 16002,
   so the two steps of one sub-block (elements 0-15 or 16-31 of the chunk)
   add in int16 exactly (<= 32004), and madd with the rows' scale (<= 128)
   gives int32 lanes <= 2 * 32004 * 128. hadd then adds each row's two
   lanes: |raw_j| <= 32 * 63 * 127 * 128 < 2^25, the zero point 32 sum sc
   bs16 <= 32 * 2 * 128 * 2032. One chunk at a time, so that its working
   set (two halves' sums, the broadcast, a digit vector, the scales) stays
   in registers: the four chunks of a step at once spilled a third of the
   loop's instructions to the stack. */
AI __m256i q6k8_chunk(const uint8_t *grp, const int8_t *c8, const int16_t *bs16n, int h, int k)
{
    /* words 4 r .. 4 r + 3 of the scale of row 4 hf + r: byte pairs of
       words 4 hf + r (low 128-bit lane: r = 0, 1; high: 2, 3) */
    const __m256i pick[2] = {_mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 4, 5,
                                              4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7),
                             _mm256_setr_epi8(8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10,
                                              11, 12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15,
                                              14, 15, 14, 15)};
    const int j = 4 * h + k;
    __m256i T[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int e = 0; e < 2; e++) { /* sub-block 2 j + e */
        __m256i P[2];
        for (int v = 0; v < 2; v++) {
            const int u = 2 * e + v;
            int64_t x;
            memcpy(&x, c8 + 32 * j + 8 * u, 8);
            const __m256i b = _mm256_set1_epi64x(x);
            for (int hf = 0; hf < 2; hf++) {
                const __m256i q = q6k8_half_digits(grp + Q6K8_Q + 192 * (4 * h + u) + 32 * hf, k);
                const __m256i p = _mm256_maddubs_epi16(q, b);
                P[hf] = v ? _mm256_add_epi16(P[hf], p) : p;
            }
        }
        const __m256i w = _mm256_broadcastsi128_si256(
            _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(grp + Q6K8_SC + 8 * (2 * j + e)))));
        for (int hf = 0; hf < 2; hf++)
            T[hf] =
                _mm256_add_epi32(T[hf], _mm256_madd_epi16(P[hf], _mm256_shuffle_epi8(w, pick[hf])));
    }
    /* [r0 r1 r4 r5 | r2 r3 r6 r7] -> [r0 .. r7], less 32 sum_s sc_s bs16_s */
    const __m128i il = _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    const __m256i sc = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(
        _mm_loadu_si128((const __m128i *)(grp + Q6K8_SC + 16 * j)), il)); /* s = 2j, 2j + 1 */
    int32_t bz;
    memcpy(&bz, bs16n + 2 * j, 4);
    const __m256i z = _mm256_madd_epi16(sc, _mm256_set1_epi32(bz));
    return _mm256_sub_epi32(_mm256_permute4x64_epi64(_mm256_hadd_epi32(T[0], T[1]), 0xD8),
                            _mm256_slli_epi32(z, 5));
}

/* The eight rows of an interleaved Q6_K row group (grp0: its first chunk),
   narrow Sub32 codes: the row values into v[8]. Returns -1 when a block is
   unreadable, else the mask of rows that met a tiny piece. */
AI int batch8_q6k2(const dn_mv_ctx *c, const uint8_t *grp0, float v[8])
{
    const dn_dot_act *a = c->a;
    __m256 acc = _mm256_setzero_ps();
    __m256i tiny = _mm256_setzero_si256();
    for (size_t g = 0; g < c->n; g += DN_GROUP) {
        const size_t gi = g / DN_GROUP;
        const uint8_t *grp = grp0 + gi * DN_Q6K8_BYTES;
        /* unrolled: 27 prefetches, not 27 loop turns (32 rows of 16384 in L2:
           1.014-1.026x, two alternated sessions, load average 3.3) */
#pragma GCC unroll 32
        for (int o = 0; o < DN_Q6K8_BYTES; o += 64)
            _mm_prefetch((const char *)grp + 4 * DN_Q6K8_BYTES + o, _MM_HINT_T0);
        const __m128i h = _mm_loadu_si128((const __m128i *)grp), e = _mm_set1_epi16(0x7C00);
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, e), e))) return -1;
        __m256 p;
        if (a->gok[gi]) {
            const double *S = a->S + g / 32;
            __m256d A[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
            /* unrolled: each chunk's digit steps are fixed at compile time */
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++) {
                const __m256i C = q6k8_chunk(grp, a->c8 + g, a->bs16n + g / 16, j / 4, j % 4);
                for (int hf = 0; hf < 2; hf++)
                    A[hf] = _mm256_fmadd_pd(_mm256_cvtepi32_pd(hf ? _mm256_extracti128_si256(C, 1)
                                                                  : _mm256_castsi256_si128(C)),
                                            _mm256_broadcast_sd(S + j), A[hf]);
            }
            const __m256 d = _mm256_cvtph_ps(h);
            __m128 q[2];
            int need = 0;
            for (int hf = 0; hf < 2; hf++) {
                int nd = 0;
                q[hf] = big_sub32_AB(
                    A[hf], _mm256_setzero_pd(), 0, a->glim[gi],
                    _mm256_cvtps_pd(hf ? _mm256_extractf128_ps(d, 1) : _mm256_castps256_ps128(d)),
                    _mm256_setzero_pd(), &nd);
                need |= nd << 4 * hf;
            }
            p = _mm256_set_m128(q[1], q[0]);
            if (need)
                p = _mm256_blendv_ps(
                    p, q6k8_ref_pieces(c, grp, g, need),
                    _mm256_castsi256_ps(_mm256_cmpgt_epi32(
                        _mm256_and_si256(_mm256_set1_epi32(need),
                                         _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
                        _mm256_setzero_si256())));
        } else {
            p = q6k8_ref_pieces(c, grp, g, 0xFF);
        }
        tiny = _mm256_or_si256(tiny, tiny8(p));
        acc = _mm256_add_ps(acc, p);
    }
    _mm256_storeu_ps(v, acc);
    return _mm256_movemask_ps(_mm256_castsi256_ps(tiny));
}

#endif
