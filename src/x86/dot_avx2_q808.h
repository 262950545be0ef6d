/* SPDX-License-Identifier: MIT */
/*
 * dot_avx2_q808.h: the repacked Q8_0 product on AVX2, eight rows
 * interleaved eight bytes at a time (decodenum/repack.h), the rows in the
 * lanes; included by src/x86/dot_avx2.c (and, for the reference's pieces,
 * dot_avx512_q808.h). The pieces are small_sub32_4's (dot_avx2_pieces.h)
 * for eight rows: the same integers C_k, the same terms C_k (d_k S_k), the
 * same exactness test, so the same bits.
 */
#ifndef DN_DOT_AVX2_Q808_H
#define DN_DOT_AVX2_Q808_H

#include "dot_avx2_pieces.h"

/* The pieces of the rows in `rows` (a mask) of the group at g by the
   reference's piece function, each row's G blocks put back together first
   (the other lanes 0). */
static __attribute__((noinline)) __m256 q808_ref_pieces(const dn_mv_ctx *c, const uint8_t *grp,
                                                        size_t g, int G, int rows)
{
    uint8_t blk[DN_PACK8_CHUNK_MAX / DN_Q4K8_ROWS];
    float f[8] = {0};
    for (int r = 0; r < 8; r++)
        if (rows >> r & 1) {
            dn_q808_get(grp, G, r, blk);
            f[r] =
                dn_dot_piece_of_bytes(DN_TYPE_Q8_0, blk, c->act, c->scaling, g, g + 32 * (size_t)G);
        }
    return _mm256_loadu_ps(f);
}

/* Block k's sums C_k = sum q c of the eight rows as [rows 0..7] (int32). A
   32-byte load holds eight bytes of four rows; the sign trick (|q| against
   c with q's sign: |q| <= 128, |c| <= 127) keeps maddubs's pairs below
   2 * 128 * 127 < 2^15, and madd widens them at once (two pairs would not
   fit int16). hadd then adds each row's two int32 lanes (|.| < 2^20). */
AI __m256i q808_block2(const uint8_t *qs, const int8_t *c8)
{
    const __m256i one = _mm256_set1_epi16(1);
    __m256i D[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int u = 0; u < 4; u++) {
        int64_t x;
        memcpy(&x, c8 + 8 * u, 8);
        const __m256i cb = _mm256_set1_epi64x(x);
        for (int h = 0; h < 2; h++) {
            const __m256i q = load32(qs + 64 * u + 32 * h);
            const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(q), _mm256_sign_epi8(cb, q));
            D[h] = _mm256_add_epi32(D[h], _mm256_madd_epi16(p, one));
        }
    }
    /* [r0 r1 r4 r5 | r2 r3 r6 r7] -> [r0 .. r7] */
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(D[0], D[1]), 0xD8);
}

/* Half h (rows 4h .. 4h + 3) of eight floats, as doubles. */
AI __m256d q808_pd(__m256 x, int h)
{
    return _mm256_cvtps_pd(h ? _mm256_extractf128_ps(x, 1) : _mm256_castps256_ps128(x));
}

/* The eight rows' pieces of a group of G Q8_0 blocks (grp: its chunk); the
   rows the test could not prove in *need (small_sub32_4's test, rows 0-3
   and 4-7 in two double vectors). With test 0 (a constant: a group
   q808_bounded proved exact) the same terms in the same order without the
   test's sums |t| and minima, which took 15% of the product (32 rows of
   16384 in L2, one thread): with the bounds' test 1.085x (15.2 -> 14.0 us,
   medians of six alternated runs of 400 x 10 calls, load average 2-3). */
AI __m256 q808_sub32_2(const dn_dot_act *a, const uint8_t *grp, size_t g, int G, int test,
                       int *need)
{
    const double *S = a->S + g / 32, *Sinf = a->Sinf + g / 32;
    __m256d s[2], ab[2], ym[2];
    for (int h = 0; h < 2; h++) {
        s[h] = ab[h] = _mm256_setzero_pd();
        ym[h] = _mm256_set1_pd(INFINITY);
    }
    for (int k = 0; k < G; k++) {
        const __m256i C = q808_block2(grp + 16 * G + 256 * k, a->c8 + g + 32 * k);
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(grp + 16 * k)));
        const __m256d Sk = _mm256_broadcast_sd(S + k), Ik = _mm256_broadcast_sd(Sinf + k);
        for (int h = 0; h < 2; h++) {
            const __m256d dk = q808_pd(d, h);
            const __m256d Ck =
                _mm256_cvtepi32_pd(h ? _mm256_extracti128_si256(C, 1) : _mm256_castsi256_si128(C));
            if (test)
                sub32_terms4(Ck, dk, Sk, Ik, &s[h], &ab[h], &ym[h]);
            else /* sub32_terms4's sum alone (ab 0, ym +inf: *need 0); the term
                    C_k (d_k S_k) is exact (an integer below 2^34 times a power
                    of two), so one fma adds it as its product and add do */
                s[h] = _mm256_fmadd_pd(Ck, _mm256_mul_pd(dk, Sk), s[h]);
        }
    }
    return sub32_finish4x2(s, ab, ym, a->gfac[g / DN_GROUP], need);
}

/* 1 when q808_sub32_2's exactness test passes for all eight rows of a full
   group (G = 8) by bounds alone, so that the terms' |t| and minima need not
   be summed. Per row: |C_k| <= 32 * 128 * 127 = 520192, so sum_k |t_k| <=
   max_k |d_k| * 520192 * sum_k S_k; the least non-zero |d_k S_k| >= min_k
   |d_k| * min_k Sinf_k; the test: twice the first (a margin far above the
   roundings of the sum of S and the products) < the second * gfac. A zero
   d, which the full test sends to the reference, takes the full test. |d|
   is ordered as its binary16 bits (no infinity or NaN here). With gfac =
   2^33 (act scales of 8 bits) it passes while (max d / min d) * (sum S /
   min S) < 2^33 / 2^20 ~ 8192: the bench's rows (d 2^-12 .. 2^-7, ratio up
   to 32) and activations (every 64th element 30 times the others) pass;
   rows or activations spread wider take the full test, the time of this
   test lost (about 8 % of the product). */
AI int q808_bounded(const dn_dot_act *a, const uint8_t *grp, size_t g)
{
    const __m256i m = _mm256_set1_epi16(0x7FFF);
    __m256i x[4];
    for (int i = 0; i < 4; i++) x[i] = _mm256_and_si256(load32(grp + 32 * i), m);
    __m256i mx = _mm256_max_epu16(_mm256_max_epu16(x[0], x[1]), _mm256_max_epu16(x[2], x[3]));
    __m256i mn = _mm256_min_epu16(_mm256_min_epu16(x[0], x[1]), _mm256_min_epu16(x[2], x[3]));
    /* blocks 2i (low 128 bits) and 2i + 1 (high) -> the rows' max and min */
    mx = _mm256_max_epu16(mx, _mm256_permute2x128_si256(mx, mx, 1));
    mn = _mm256_min_epu16(mn, _mm256_permute2x128_si256(mn, mn, 1));
    const __m128i mn8 = _mm256_castsi256_si128(mn);
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(mn8, _mm_setzero_si128()))) return 0;
    const double *S = a->S + g / 32, *Sinf = a->Sinf + g / 32;
    /* sum_k S_k and min_k Sinf_k across the lanes (a scalar loop: 2 % slower) */
    const __m256d s4 = _mm256_add_pd(_mm256_loadu_pd(S), _mm256_loadu_pd(S + 4));
    const __m256d i4 = _mm256_min_pd(_mm256_loadu_pd(Sinf), _mm256_loadu_pd(Sinf + 4));
    const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    const __m128d i2 = _mm_min_pd(_mm256_castpd256_pd128(i4), _mm256_extractf128_pd(i4, 1));
    const __m128d s1 = _mm_add_sd(s2, _mm_unpackhi_pd(s2, s2));
    const __m128d i1 = _mm_min_sd(i2, _mm_unpackhi_pd(i2, i2));
    const __m256d hi = _mm256_set1_pd(2.0 * 520192.0 * _mm_cvtsd_f64(s1));
    const __m256d lo = _mm256_set1_pd(_mm_cvtsd_f64(i1) * a->gfac[g / DN_GROUP]);
    const __m256 dx = _mm256_cvtph_ps(_mm256_castsi256_si128(mx)), dn = _mm256_cvtph_ps(mn8);
    int ok = 0;
    for (int h = 0; h < 2; h++) {
        const __m256d u = _mm256_mul_pd(q808_pd(dx, h), hi), l = _mm256_mul_pd(q808_pd(dn, h), lo);
        ok |= _mm256_movemask_pd(_mm256_cmp_pd(u, l, _CMP_LT_OQ)) << 4 * h;
    }
    return ok == 0xFF;
}

/* The eight rows of an interleaved Q8_0 row group (grp0: its first chunk),
   narrow Sub32 codes: the row values into v[8]. Returns -1 when a block is
   unreadable, else the mask of rows that met a tiny piece. */
AI int batch8_q8082(const dn_mv_ctx *c, const uint8_t *grp0, float v[8])
{
    const dn_dot_act *a = c->a;
    __m256 acc = _mm256_setzero_ps();
    __m256i tiny = _mm256_setzero_si256();
    for (size_t g = 0; g < c->n; g += DN_GROUP) {
        const int G = (int)((c->n - g < DN_GROUP ? c->n - g : DN_GROUP) / 32);
        const uint8_t *grp = grp0 + g / DN_GROUP * DN_PACK8_CHUNK_MAX;
        /* the next row group's chunk into L2: from memory 1.22-1.28x the
           plain product with it, 0.94-0.96x without (8192 x 16384, one
           thread CPU time, this host loaded; AVX-512's loop is the other
           way round, dot_avx512_q808.h) */
        for (int o = 0; o < 272 * G; o += 64)
            _mm_prefetch((const char *)grp + DN_Q4K8_ROWS * c->row_bytes + o, _MM_HINT_T1);
        /* the 8 G scales d: an infinity or a NaN is unreadable */
        const __m256i e = _mm256_set1_epi16(0x7C00);
        int bad = 0;
        for (int k = 0; k < G; k++) {
            const __m128i h = _mm_loadu_si128((const __m128i *)(grp + 16 * k));
            bad |= _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, _mm256_castsi256_si128(e)),
                                                     _mm256_castsi256_si128(e)));
        }
        if (bad) return -1;
        __m256 p;
        if (a->gok[g / DN_GROUP]) {
            int need = 0;
            if (G == 8 && q808_bounded(a, grp, g))
                p = q808_sub32_2(a, grp, g, 8, 0, &need);
            else
                p = q808_sub32_2(a, grp, g, G, 1, &need);
            if (need)
                p = _mm256_blendv_ps(
                    p, q808_ref_pieces(c, grp, g, G, need),
                    _mm256_castsi256_ps(_mm256_cmpgt_epi32(
                        _mm256_and_si256(_mm256_set1_epi32(need),
                                         _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
                        _mm256_setzero_si256())));
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
