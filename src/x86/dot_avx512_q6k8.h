/* SPDX-License-Identifier: MIT */
/*
 * dot_avx512_q6k8.h: the repacked Q6_K product on AVX-512 with VNNI, eight
 * rows interleaved eight bytes at a time (decodenum/repack.h), the rows in
 * the lanes; included by src/x86/dot_avx512.c alone. The pieces are
 * big_sub32_4's (dot_avx2_pieces.h, has_o 0) with eight rows where it has
 * four: the same integers C_k, the same A = sum_k C_k S_k (exact in any
 * order under gok), the same limit test and rounding, so the same bits.
 */
#ifndef DN_DOT_AVX512_Q6K8_H
#define DN_DOT_AVX512_Q6K8_H

#include "dot_avx2_q6k8.h"
#include "dot_avx512_decode.h"

/* The digits (0..63) of chunks 4h .. 4h + 3 of one step (q6k8_half_digits's,
   four at once, with 64 bytes: eight bytes of each of the eight rows). */
AIV void q6k8_digits(__m512i x0, __m512i x1, __m512i y, __m512i q[4])
{
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    /* a | (b & c) */
    q[0] = _mm512_ternarylogic_epi32(_mm512_and_si512(x0, m4), _mm512_slli_epi16(y, 4), m30, 0xF8);
    q[1] = _mm512_ternarylogic_epi32(_mm512_and_si512(x1, m4), _mm512_slli_epi16(y, 2), m30, 0xF8);
    q[2] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(x0, 4), m4), y, m30, 0xF8);
    q[3] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(x1, 4), m4),
                                     _mm512_srli_epi16(y, 2), m30, 0xF8);
}

/* The chunk sums of an interleaved chunk: acc[j] holds, per 128-bit lane L,
   [C_2j, C_2j+1] of rows 2L, 2L + 1 as [C_2j(2L), C_2j(2L+1), C_2j+1(2L),
   C_2j+1(2L+1)] (int32). One broadcast of eight codes feeds the eight rows'
   vpdpbusd, row r's sums in lanes 2r, 2r + 1, four products each: <= 4 *
   63 * 127 = 32004 < 2^15, so vpackssdw narrows chunks 2j, 2j + 1 of one
   step exactly (128-bit lane L: words 0-3 rows 2L, 2L + 1 of chunk 2j,
   words 4-7 of 2j + 1), and vpdpwssd weights them by the rows' scales of
   the step's sub-blocks (word 8 s' + r of V_j = the scale of row r and
   sub-block 4j + s', picked by one word permute per half chunk).
   |raw_k| <= 32 * 63 * 127 * 128 < 2^25; the zero point 32 sum_s sc_s
   bs16_s (vpdpwssd of the scales with bs16, |.| <= 2 * 128 * 2032, then
   times 32) is taken off first. */
AIV void q6k8_chunks(const uint8_t *grp, const int8_t *c8, const int16_t *bs16n, __m512i acc[4])
{
    const __m512i z = _mm512_setzero_si512();
    /* word 8 L + w: half 0's weights (w < 4: sub-block 0 of chunk 2j, else
       sub-block 2, of chunk 2j + 1; row 2L + (w % 4) / 2; half 1: + 8), and
       the zero point's (int32 lane w / 2: row 2L + (w / 2) % 2, sub-blocks
       2 (w / 4) and 2 (w / 4) + 1) */
    const __m512i iw = _mm512_set_epi16(23, 23, 22, 22, 7, 7, 6, 6, 21, 21, 20, 20, 5, 5, 4, 4, 19,
                                        19, 18, 18, 3, 3, 2, 2, 17, 17, 16, 16, 1, 1, 0, 0);
    const __m512i iz = _mm512_set_epi16(31, 23, 30, 22, 15, 7, 14, 6, 29, 21, 28, 20, 13, 5, 12, 4,
                                        27, 19, 26, 18, 11, 3, 10, 2, 25, 17, 24, 16, 9, 1, 8, 0);
    __m512i W[4][2];
    for (int j = 0; j < 4; j++) {
        const __m512i V = _mm512_cvtepi8_epi16(load32(grp + Q6K8_SC + 32 * j));
        W[j][0] = _mm512_permutexvar_epi16(iw, V);
        W[j][1] = _mm512_permutexvar_epi16(_mm512_add_epi16(iw, _mm512_set1_epi16(8)), V);
        int64_t b;
        memcpy(&b, bs16n + 4 * j, 8);
        const __m512i bq = _mm512_set1_epi64(b); /* words bs16 of sub-blocks 4j .. 4j + 3 */
        const __m512i Z =
            _mm512_dpwssd_epi32(z, _mm512_permutexvar_epi16(iz, V), _mm512_unpacklo_epi32(bq, bq));
        acc[j] = _mm512_sub_epi32(z, _mm512_slli_epi32(Z, 5));
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) { /* step i = 4h + u: chunks 4h .. 4h + 3, elements 8u .. */
        const int h = i / 4, u = i % 4;
        const uint8_t *st = grp + Q6K8_Q + 192 * i;
        __m512i q[4], E[4];
        q6k8_digits(_mm512_loadu_si512(st), _mm512_loadu_si512(st + 64),
                    _mm512_loadu_si512(st + 128), q);
        for (int k = 0; k < 4; k++) {
            int64_t x;
            memcpy(&x, c8 + 32 * (4 * h + k) + 8 * u, 8);
            E[k] = _mm512_dpbusd_epi32(z, q[k], _mm512_set1_epi64(x));
        }
        /* chunk pairs j = 2h (chunks 4h, 4h + 1) and 2h + 1 (4h + 2, 4h + 3) */
        acc[2 * h] =
            _mm512_dpwssd_epi32(acc[2 * h], _mm512_packs_epi32(E[0], E[1]), W[2 * h][u / 2]);
        acc[2 * h + 1] = _mm512_dpwssd_epi32(acc[2 * h + 1], _mm512_packs_epi32(E[2], E[3]),
                                             W[2 * h + 1][u / 2]);
    }
}

/* The eight rows' pieces of a gok group (grp: its chunk): A = sum_k C_k
   S_k per row (exact in any order under gok: terms and partial sums are
   multiples of 2^emin below 2^(emin + 52)), then big_sub32_AB's test
   (|A| < glim) and d A rounded once; the rows the test fails in *need. */
AIV __m256 q6k8_sub32(const dn_dot_act *a, const uint8_t *grp, size_t g, __m256i h, int *need)
{
    __m512i acc[4];
    q6k8_chunks(grp, a->c8 + g, a->bs16n + g / 16, acc);
    const __m512d Sv = _mm512_loadu_pd(a->S + g / 32);
    __m512d lo = _mm512_setzero_pd(), hi = lo;
    for (int j = 0; j < 4; j++) {
        const __m512d Sj =
            _mm512_permutexvar_pd(_mm512_setr_epi64(2 * j, 2 * j, 2 * j + 1, 2 * j + 1, 2 * j,
                                                    2 * j, 2 * j + 1, 2 * j + 1),
                                  Sv);
        lo = _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(acc[j])), Sj, lo);
        hi = _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(acc[j], 1)), Sj, hi);
    }
    /* lo: rows [0 1 0 1 2 3 2 3] (chunks 2j, 2j + 1), hi the same of rows 4-7 */
    const __m512d A = _mm512_add_pd(
        _mm512_permutex2var_pd(lo, _mm512_setr_epi64(0, 1, 4, 5, 8, 9, 12, 13), hi),
        _mm512_permutex2var_pd(lo, _mm512_setr_epi64(2, 3, 6, 7, 10, 11, 14, 15), hi));
    const __mmask8 ok = _mm512_cmp_pd_mask(_mm512_andnot_pd(_mm512_set1_pd(-0.0), A),
                                           _mm512_set1_pd(a->glim[g / DN_GROUP]), _CMP_LT_OQ);
    *need = (int)(uint8_t)~ok;
    const __m512d pa =
        _mm512_mul_pd(_mm512_cvtps_pd(_mm256_cvtph_ps(_mm256_castsi256_si128(h))), A);
    return _mm512_cvtpd_ps(_mm512_add_pd(pa, _mm512_setzero_pd())); /* + 0: an exact 0 is +0 */
}

/* The eight rows of an interleaved Q6_K row group (grp0: its first chunk),
   narrow Sub32 codes: the row values into v[8]. Returns -1 when a block is
   unreadable, else the mask of rows that met a tiny piece. */
AIV int batch8_q6k(const dn_mv_ctx *c, const uint8_t *grp0, float v[8])
{
    const dn_dot_act *a = c->a;
    __m256 acc = _mm256_setzero_ps();
    __m256i tiny = _mm256_setzero_si256();
    for (size_t g = 0; g < c->n; g += DN_GROUP) {
        const size_t gi = g / DN_GROUP;
        const uint8_t *grp = grp0 + gi * DN_Q6K8_BYTES;
        /* the stream 4 chunks (6.6 KiB) ahead into L1: 8192 rows of 16384
           from memory 1.03-1.28x the plain product with it, 0.88-0.96x
           without, 0.95-1.00x with the next row group's chunk into L2 (the
           Q4_K loop's); in cache 1.47x against 1.54-1.63x without (48 rows,
           one thread CPU time, alternated, load 14-17) */
        for (int o = 0; o < DN_Q6K8_BYTES; o += 64)
            _mm_prefetch((const char *)grp + 4 * DN_Q6K8_BYTES + o, _MM_HINT_T0);
        const __m256i h = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)grp));
        const __m128i e = _mm_set1_epi16(0x7C00); /* the eight d */
        if (_mm_cmpeq_epi16_mask(_mm_and_si128(_mm256_castsi256_si128(h), e), e)) return -1;
        __m256 p;
        if (a->gok[gi]) {
            int need = 0;
            p = q6k8_sub32(a, grp, g, h, &need);
            if (need) p = _mm256_mask_blend_ps((__mmask8)need, p, q6k8_ref_pieces(c, grp, g, need));
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
