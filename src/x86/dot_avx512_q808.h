/* SPDX-License-Identifier: MIT */
/*
 * dot_avx512_q808.h: the repacked Q8_0 product on AVX-512 with VNNI, eight
 * rows interleaved eight bytes at a time (decodenum/repack.h), the rows in
 * the lanes; included by src/x86/dot_avx512.c alone. The pieces are
 * small_sub32_z's (dot_avx512_decode.h) with eight rows where it has four:
 * the same integers C_k, the same terms C_k (d_k S_k), the same exactness
 * test, so the same bits.
 */
#ifndef DN_DOT_AVX512_Q808_H
#define DN_DOT_AVX512_Q808_H

#include "dot_avx2_q808.h"
#include "dot_avx512_decode.h"

/* Block k's raw sums of the eight rows, two int32 lanes per row (row r in
   lanes 2r, 2r + 1), less 128 bs32_k in the even lane: a 64-byte load holds
   eight bytes of each row, one broadcast of the block's eight codes feeds
   all eight rows, and the digits q + 128 (q ^ 0x80, 0..255) against the
   signed codes give sum q c + 128 sum c (q8_0_chunks4's way). Each lane
   takes 16 products, |.| <= 16 * 255 * 127, and the start 128 |bs32| <=
   128 * 32 * 127: far inside int32. */
AIV __m512i q808_block(const uint8_t *qs, const int8_t *c8, int32_t bs32)
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512i D = _mm512_maskz_set1_epi32(0x5555, -128 * bs32);
    for (int u = 0; u < 4; u++) {
        int64_t x;
        memcpy(&x, c8 + 8 * u, 8);
        D = _mm512_dpbusd_epi32(D, _mm512_xor_si512(_mm512_loadu_si512(qs + 64 * u), flip),
                                _mm512_set1_epi64(x));
    }
    return D;
}

/* The eight rows' pieces of a group of G Q8_0 blocks (grp: its chunk, the
   activation's codes, sums and scales at g); the rows whose pieces the test
   could not prove in *need. The lanes of blocks k, k + 1 are paired into
   [C_k of rows 0..7 | C_k+1 of rows 0..7] by two permutes and an add
   (exact), then each block's terms t = C_k (d_k S_k) are summed with
   their magnitudes and the least |d_k| S_k (small_sub32_z's test: any
   order is sound). */
AIV __m256 q808_sub32(const dn_dot_act *a, const uint8_t *grp, size_t g, int G, int *need)
{
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    const double *S = a->S + g / 32, *Sinf = a->Sinf + g / 32;
    __m512d s = _mm512_setzero_pd(), ab = s, ym = _mm512_set1_pd(INFINITY);
    for (int k = 0; k < G; k += 2) {
        const int two = k + 1 < G;
        const __m512i D0 =
            q808_block(grp + 16 * G + 256 * k, a->c8 + g + 32 * k, a->bs32[g / 32 + k]);
        const __m512i D1 = two ? q808_block(grp + 16 * G + 256 * (k + 1), a->c8 + g + 32 * (k + 1),
                                            a->bs32[g / 32 + k + 1])
                               : _mm512_setzero_si512();
        const __m512i C = _mm512_add_epi32(_mm512_permutex2var_epi32(D0, ev, D1),
                                           _mm512_permutex2var_epi32(D0, od, D1));
        const __m512 d = _mm512_cvtph_ps(
            two ? load32(grp + 16 * k)
                : _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)(grp + 16 * k))));
        for (int h = 0; h < 1 + two; h++) {
            const __m512d dk =
                _mm512_cvtps_pd(h ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1))
                                  : _mm512_castps512_ps256(d));
            const __m512d Ck =
                _mm512_cvtepi32_pd(h ? _mm512_extracti64x4_epi64(C, 1) : _mm512_castsi512_si256(C));
            sub32_terms8(Ck, dk, S[k + h], Sinf[k + h], &s, &ab, &ym);
        }
    }
    return sub32_finish8(s, ab, ym, a->gfac[g / DN_GROUP], need);
}

/* The eight rows of an interleaved Q8_0 row group (grp0: its first chunk),
   narrow Sub32 codes: the row values into v[8]. Returns -1 when a block is
   unreadable, else the mask of rows that met a tiny piece. */
AIV int batch8_q808(const dn_mv_ctx *c, const uint8_t *grp0, float v[8])
{
    const dn_dot_act *a = c->a;
    __m256 acc = _mm256_setzero_ps();
    __m256i tiny = _mm256_setzero_si256();
    for (size_t g = 0; g < c->n; g += DN_GROUP) {
        const int G = (int)((c->n - g < DN_GROUP ? c->n - g : DN_GROUP) / 32);
        const uint8_t *grp = grp0 + g / DN_GROUP * DN_PACK8_CHUNK_MAX;
        /* no software prefetch: the row group is one stream the hardware
           follows; a prefetch of the next row group's chunk (as the Q4_K
           loop's then and the AVX2 one's) cost 16-23 %: from memory 0.93-0.96x
           the plain product with it, 1.07-1.23x without (8192 x 16384, one
           thread CPU time, this host loaded) */
        /* the 8 G scales d: an infinity or a NaN is unreadable */
        const __mmask32 m0 = G >= 4 ? 0xFFFFFFFFu : (1u << 8 * G) - 1;
        const __mmask32 m1 = G >= 8 ? 0xFFFFFFFFu : G > 4 ? (1u << 8 * (G - 4)) - 1 : 0;
        const __m512i e = _mm512_set1_epi16(0x7C00);
        const __m512i h0 = _mm512_maskz_loadu_epi16(m0, grp),
                      h1 = _mm512_maskz_loadu_epi16(m1, grp + 64);
        if (_mm512_cmpeq_epi16_mask(_mm512_and_si512(h0, e), e) |
            _mm512_cmpeq_epi16_mask(_mm512_and_si512(h1, e), e))
            return -1;
        __m256 p;
        if (a->gok[g / DN_GROUP]) {
            int need = 0;
            p = q808_sub32(a, grp, g, G, &need);
            if (need) {
                const __m256 r = q808_ref_pieces(c, grp, g, G, need);
                p = _mm256_mask_blend_ps((__mmask8)need, p, r);
            }
        } else {
            p = q808_ref_pieces(c, grp, g, G, 0xFF);
        }
        tiny = _mm256_or_si256(tiny, tiny8(p));
        acc = _mm256_add_ps(acc, p);
    }
    _mm256_storeu_ps(v, acc);
    return _mm256_movemask_ps(_mm256_castsi256_ps(tiny));
}

#endif
