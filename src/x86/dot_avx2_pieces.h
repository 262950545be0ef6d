/* SPDX-License-Identifier: MIT */
/*
 * dot_avx2_pieces.h: the AVX2 dot kernels' floating-point half, included by
 * src/x86/dot_avx2.c alone: four rows at once, one row per lane of a double
 * vector, the integer chunk sums times the blocks' and the activation's
 * scales summed where the double arithmetic is exact (each function says
 * why, as dot_shared.h's scalar twins do) and rounded once to f32; the
 * lanes it cannot prove are flagged for the reference's piece function.
 */
#ifndef DN_DOT_AVX2_PIECES_H
#define DN_DOT_AVX2_PIECES_H

#include "dot_avx2_decode.h"

#include <math.h>

/* ---- four rows at once: rows in the lanes of a double vector ------------------ */

/* Columns of four rows' chunk vectors: x[r] = [x_r0 .. x_r7] (int32) gives
   c[k] = [x_0k, x_1k, x_2k, x_3k] as doubles (exact). */
AI void columns_i(const __m256i x[4], __m256d c[8])
{
    __m256i t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpackhi_epi32(x[0], x[1]);
    __m256i t2 = _mm256_unpacklo_epi32(x[2], x[3]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2); /* k 0|4, 1|5 */
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3); /* k 2|6, 3|7 */
    c[0] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u0));
    c[1] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u1));
    c[2] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u2));
    c[3] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u3));
    c[4] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u0, 1));
    c[5] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u1, 1));
    c[6] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u2, 1));
    c[7] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u3, 1));
}

/* The same for four rows' float vectors (the blocks' scales). */
AI void columns_f(const __m256 x[4], __m256d c[8])
{
    __m256 t0 = _mm256_unpacklo_ps(x[0], x[1]), t1 = _mm256_unpackhi_ps(x[0], x[1]);
    __m256 t2 = _mm256_unpacklo_ps(x[2], x[3]), t3 = _mm256_unpackhi_ps(x[2], x[3]);
    __m256 u0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    __m256 u1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    __m256 u2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    __m256 u3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    c[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(u0));
    c[1] = _mm256_cvtps_pd(_mm256_castps256_ps128(u1));
    c[2] = _mm256_cvtps_pd(_mm256_castps256_ps128(u2));
    c[3] = _mm256_cvtps_pd(_mm256_castps256_ps128(u3));
    c[4] = _mm256_cvtps_pd(_mm256_extractf128_ps(u0, 1));
    c[5] = _mm256_cvtps_pd(_mm256_extractf128_ps(u1, 1));
    c[6] = _mm256_cvtps_pd(_mm256_extractf128_ps(u2, 1));
    c[7] = _mm256_cvtps_pd(_mm256_extractf128_ps(u3, 1));
}

/* [sum of x[0]'s lanes, ..., sum of x[3]'s] as doubles (|sums| < 2^31). */
AI __m256d row_sums(const __m256i x[4])
{
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(x[0], x[1]), _mm256_hadd_epi32(x[2], x[3]));
    return _mm256_cvtepi32_pd(
        _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
}

/* [sum of x[0]'s lanes, ..., sum of x[3]'s] as doubles, for lanes whose
   total may pass 2^31 (each lane is an int32; the totals are exact). */
AI __m256d rows_total_pd(const __m256i x[4])
{
    __m256d v[4];
    for (int r = 0; r < 4; r++)
        v[r] = _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x[r])),
                             _mm256_cvtepi32_pd(_mm256_extracti128_si256(x[r], 1)));
    __m256d h01 = _mm256_hadd_pd(v[0], v[1]), h23 = _mm256_hadd_pd(v[2], v[3]);
    return _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20),
                         _mm256_permute2f128_pd(h01, h23, 0x31));
}

/* Lanes where a + b is not a double (TwoSum's error is not zero). */
AI int inexact_lanes(__m256d a, __m256d b, __m256d s)
{
    __m256d bb = _mm256_sub_pd(s, a);
    __m256d err = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
    return _mm256_movemask_pd(_mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_NEQ_UQ));
}

/* a + b rounded once to f32 in each lane (pieces of two exact products). */
AI __m128 round_sum(__m256d a, __m256d b)
{
    __m256d s = _mm256_add_pd(a, b);
    if (inexact_lanes(a, b, s)) { /* rare: an offset term far below the coef term's last place */
        double a4[4], b4[4];
        _mm256_storeu_pd(a4, a);
        _mm256_storeu_pd(b4, b);
        for (int k = 0; k < 4; k++) a4[k] = dn_dot_sum_odd(a4[k], b4[k]);
        s = _mm256_loadu_pd(a4);
    }
    return _mm256_cvtpd_ps(_mm256_add_pd(s, _mm256_setzero_pd())); /* + 0: an exact 0 is +0 */
}

/* 4 binary16 values (one per row) at the rows' blocks + at, as doubles; the
   mask of unreadable ones in *bad. */
AI __m256d scales4(const uint8_t *const blk[4], int at, int *bad)
{
    __m128i h = _mm_setr_epi16((short)dn_load_u16(blk[0] + at), (short)dn_load_u16(blk[1] + at),
                               (short)dn_load_u16(blk[2] + at), (short)dn_load_u16(blk[3] + at), 0,
                               0, 0, 0);
    const __m128i e = _mm_set1_epi16(0x7C00);
    *bad |= _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, e), e)) & 0xFF;
    return _mm256_cvtps_pd(_mm_cvtph_ps(h));
}

/* [sum_k x[r]_k S_k for r = 0..3]: each row's eight int32 chunk values
   times the group's eight activation scales, summed (exact where gok says
   so: any order). */
AI __m256d rows_dot_S(const __m256i x[4], __m256d S0, __m256d S1)
{
    __m256d v[4];
    for (int r = 0; r < 4; r++)
        v[r] = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(x[r], 1)), S1,
                               _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x[r])), S0));
    __m256d h01 = _mm256_hadd_pd(v[0], v[1]), h23 = _mm256_hadd_pd(v[2], v[3]);
    return _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20),
                         _mm256_permute2f128_pd(h01, h23, 0x31));
}

/* The same for two adjacent binary16 values per row (d at `at`, dm after
   it): one 32-bit load per row. */
AI void scales4x2(const uint8_t *const blk[4], int at, __m256d *d, __m256d *dm, int *bad)
{
    uint32_t u[4];
    for (int r = 0; r < 4; r++) memcpy(&u[r], blk[r] + at, 4);
    __m128i h = _mm_setr_epi32((int)u[0], (int)u[1], (int)u[2], (int)u[3]);
    const __m128i e = _mm_set1_epi16(0x7C00);
    *bad |= _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, e), e));
    __m256 f = _mm256_cvtph_ps(h); /* d0 dm0 d1 dm1 ... */
    __m256 g = _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    *d = _mm256_cvtps_pd(_mm256_castps256_ps128(g));
    *dm = _mm256_cvtps_pd(_mm256_extractf128_ps(g, 1));
}

/* The four pieces of a Sub32 group of a 256-element format from A = sum_k
   C_k S_k and B = sum_k O_k S_k per row (exact: dn_dot_act_init's gok):
   d A + dm B rounded once where |A|, |B| < glim; *need gets the lanes that
   must go to the reference. */
AI __m128 big_sub32_AB(__m256d A, __m256d B, int has_o, double glim, __m256d d, __m256d dm,
                       int *need)
{
    const __m256d lim = _mm256_set1_pd(glim);
    __m256d ok = _mm256_cmp_pd(abs_pd(A), lim, _CMP_LT_OQ);
    __m256d pa = _mm256_mul_pd(d, A);
    if (!has_o) {
        *need = ~_mm256_movemask_pd(ok) & 15;
        return _mm256_cvtpd_ps(_mm256_add_pd(pa, _mm256_setzero_pd()));
    }
    ok = _mm256_and_pd(ok, _mm256_cmp_pd(abs_pd(B), lim, _CMP_LT_OQ));
    *need = ~_mm256_movemask_pd(ok) & 15;
    return round_sum(pa, _mm256_mul_pd(dm, B));
}

AI __m128 big_sub32_4(const __m256i C[4], const __m256i O[4], int has_o, const double *S,
                      double glim, __m256d d, __m256d dm, int *need)
{
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    __m256d A = rows_dot_S(C, S0, S1), B = has_o ? rows_dot_S(O, S0, S1) : _mm256_setzero_pd();
    return big_sub32_AB(A, B, has_o, glim, d, dm, need);
}

/* The same with the chunk sums in two byte planes: C = 256 C_hi + C_lo.
   256 A_hi + A_lo = A is exact: each part is a sum of exact terms within
   dn_dot_act_init's bound (a plane's codes are below 256 in magnitude), and
   so is their sum. */
AI __m128 big_sub32_planes(const __m256i Ch[4], const __m256i Oh[4], const __m256i Cl[4],
                           const __m256i Ol[4], int has_o, const double *S, double glim, __m256d d,
                           __m256d dm, int *need)
{
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    const __m256d k256 = _mm256_set1_pd(256.0);
    __m256d A = _mm256_fmadd_pd(rows_dot_S(Ch, S0, S1), k256, rows_dot_S(Cl, S0, S1));
    __m256d B = has_o ? _mm256_fmadd_pd(rows_dot_S(Oh, S0, S1), k256, rows_dot_S(Ol, S0, S1))
                      : _mm256_setzero_pd();
    return big_sub32_AB(A, B, has_o, glim, d, dm, need);
}

/* The four per-block pieces of a 256-element block: C (d S) + O (dm S) with
   C, O the rows' whole-block sums (|C| < 2^27: exact products). */
AI __m128 big_block_4(const __m256i C[4], const __m256i O[4], int has_o, double S, __m256d d,
                      __m256d dm)
{
    const __m256d s = _mm256_set1_pd(S);
    __m256d pa = _mm256_mul_pd(row_sums(C), _mm256_mul_pd(d, s));
    if (!has_o) return _mm256_cvtpd_ps(_mm256_add_pd(pa, _mm256_setzero_pd()));
    return round_sum(pa, _mm256_mul_pd(row_sums(O), _mm256_mul_pd(dm, s)));
}

/* Per-block pieces with the sums in two byte planes: C = 256 C_hi + C_lo
   (exact in double, |C| < 2^39); the product with d S is exact while
   |C| < 2^34, lanes beyond go to the reference (*need). */
AI __m128 big_block_planes(const __m256i Ch[4], const __m256i Oh[4], const __m256i Cl[4],
                           const __m256i Ol[4], int has_o, double S, __m256d d, __m256d dm,
                           int *need)
{
    const __m256d s = _mm256_set1_pd(S), k256 = _mm256_set1_pd(256.0);
    __m256d C = _mm256_fmadd_pd(row_sums(Ch), k256, row_sums(Cl));
    *need = _mm256_movemask_pd(_mm256_cmp_pd(abs_pd(C), _mm256_set1_pd(0x1p34), _CMP_GE_OQ));
    __m256d pa = _mm256_mul_pd(C, _mm256_mul_pd(d, s));
    if (!has_o) return _mm256_cvtpd_ps(_mm256_add_pd(pa, _mm256_setzero_pd()));
    __m256d O = _mm256_fmadd_pd(row_sums(Oh), k256, row_sums(Ol));
    return round_sum(pa, _mm256_mul_pd(O, _mm256_mul_pd(dm, s)));
}

/* The four pieces of a Sub32 group of G 32-element blocks: sum_k C_k d_k S_k
   (+ O_k m_k S_k) per row, exact where sum |terms| < ymin gfac
   (dn_piece_small_sub32's argument; ymin here is the least |d_k| S_k over
   non-zero ones, +inf-scaled past the row and for zero activation blocks).
   small_sub32_dc takes the rows' scales d as columns_f gives them (the
   blocked matrix product transposes them once for its columns);
   small_sub32_4 below from d. */
AI __m128 small_sub32_dc(const __m256i C[4], const __m256d dcol[8], const __m256 m[4],
                         const int32_t *bs32, int has_o, const double *S, const double *Sinf,
                         double gfac, int *need)
{
    __m256d c[8], dc[8];
    columns_i(C, c);
    for (int k = 0; k < 8; k++) dc[k] = dcol[k];
    const __m256d sign = _mm256_set1_pd(-0.0);
    __m256d s = _mm256_setzero_pd(), ab = _mm256_setzero_pd(), ym = _mm256_set1_pd(INFINITY);
    for (int k = 0; k < 8; k++) {
        __m256d D = _mm256_mul_pd(dc[k], _mm256_broadcast_sd(S + k));
        __m256d t = _mm256_mul_pd(c[k], D);
        s = _mm256_add_pd(s, t);
        ab = _mm256_add_pd(ab, _mm256_andnot_pd(sign, t));
        /* |d| * Sinf: +inf or NaN (d = 0) where S is 0, and min passes NaN over */
        ym = _mm256_min_pd(
            _mm256_mul_pd(_mm256_andnot_pd(sign, dc[k]), _mm256_broadcast_sd(Sinf + k)), ym);
    }
    if (has_o) {
        columns_f(m, dc);
        for (int k = 0; k < 8; k++) {
            __m256d E = _mm256_mul_pd(dc[k], _mm256_broadcast_sd(S + k));
            __m256d u = _mm256_mul_pd(_mm256_set1_pd((double)bs32[k]), E);
            s = _mm256_add_pd(s, u);
            ab = _mm256_add_pd(ab, _mm256_andnot_pd(sign, u));
            ym = _mm256_min_pd(
                _mm256_mul_pd(_mm256_andnot_pd(sign, dc[k]), _mm256_broadcast_sd(Sinf + k)), ym);
        }
    }
    __m256d ok = _mm256_cmp_pd(ab, _mm256_mul_pd(ym, _mm256_set1_pd(gfac)), _CMP_LT_OQ);
    *need = ~_mm256_movemask_pd(ok) & 15;
    return _mm256_cvtpd_ps(_mm256_add_pd(s, _mm256_setzero_pd()));
}

AI __m128 small_sub32_4(const __m256i C[4], const __m256 d[4], const __m256 m[4],
                        const int32_t *bs32, int has_o, const double *S, const double *Sinf,
                        double gfac, int *need)
{
    __m256d dc[8];
    columns_f(d, dc);
    return small_sub32_dc(C, dc, m, bs32, has_o, S, Sinf, gfac, need);
}

/* One row's eight per-block pieces of G 32-element blocks (lanes past G are
   0): C_k d_k S_k + O_k m_k S_k, each rounded once. */
AI __m256 small_block_8(__m256i C, __m256 d, __m256 m, const int32_t *bs32, int has_o,
                        const double *S)
{
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    __m256d pa0 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(C)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(d)), S0));
    __m256d pa1 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(C, 1)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(d, 1)), S1));
    if (!has_o)
        return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_add_pd(pa1, _mm256_setzero_pd())),
                               _mm256_cvtpd_ps(_mm256_add_pd(pa0, _mm256_setzero_pd())));
    __m256i Oi = load32(bs32);
    __m256d pb0 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(Oi)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(m)), S0));
    __m256d pb1 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(Oi, 1)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(m, 1)), S1));
    return _mm256_set_m128(round_sum(pa1, pb1), round_sum(pa0, pb0));
}

/* One Q8_0 block's terms of four rows (small_sub32_z's): t = C_k (d_k S_k)
   added to *s, |t| to *ab, and |d_k| Sinf_k into the least *ym (+inf or NaN
   where S_k is 0 or d_k is 0: min passes NaN over). Every product is exact
   (|C_k| < 2^19, d_k 11 bits, S_k 8). */
AI void sub32_terms4(__m256d Ck, __m256d dk, __m256d Sk, __m256d Ik, __m256d *s, __m256d *ab,
                     __m256d *ym)
{
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256d t = _mm256_mul_pd(Ck, _mm256_mul_pd(dk, Sk));
    *s = _mm256_add_pd(*s, t);
    *ab = _mm256_add_pd(*ab, _mm256_andnot_pd(sign, t));
    *ym = _mm256_min_pd(_mm256_mul_pd(_mm256_andnot_pd(sign, dk), Ik), *ym);
}

/* small_sub32_z's test of eight rows' sums (rows 0-3 in s[0], 4-7 in s[1]):
   the rows it cannot prove exact (ab >= ym gfac) in *need; each row's sum
   rounded once, + 0 making an exact 0 +0. */
AI __m256 sub32_finish4x2(const __m256d s[2], const __m256d ab[2], const __m256d ym[2], double gfac,
                          int *need)
{
    const __m256d f = _mm256_set1_pd(gfac);
    int ok = 0;
    for (int h = 0; h < 2; h++)
        ok |= _mm256_movemask_pd(_mm256_cmp_pd(ab[h], _mm256_mul_pd(ym[h], f), _CMP_LT_OQ))
              << 4 * h;
    *need = ~ok & 0xFF;
    const __m256d z = _mm256_setzero_pd();
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_add_pd(s[1], z)),
                           _mm256_cvtpd_ps(_mm256_add_pd(s[0], z)));
}

/* Lanes (as an int mask per 32-bit lane) holding a tiny piece: non-zero and
   below 2^-100 in magnitude (dn_piece_tiny). */
AI __m256i tiny8(__m256 p)
{
    __m256i u = _mm256_and_si256(_mm256_castps_si256(p), _mm256_set1_epi32(0x7FFFFFFF));
    return _mm256_andnot_si256(_mm256_cmpeq_epi32(u, _mm256_setzero_si256()),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32(0x0D800000), u));
}

/* ---- the blocks' scales ------------------------------------------------------- */

/* The scales of the G blocks from blk as floats (lanes past G zero); 1 when
   one of them is unreadable. */
AI int small_scales(dn_type t, const uint8_t *blk, size_t bb, int G, __m256 *d, __m256 *m)
{
    __m256i x;
    if (G == 8) {
        __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                         _mm256_set1_epi32((int)bb));
        x = _mm256_i32gather_epi32((const int *)blk, idx, 1);
    } else {
        uint32_t s[8] = {0};
        for (int k = 0; k < G; k++) memcpy(&s[k], blk + k * bb, 4);
        x = _mm256_loadu_si256((const __m256i *)s);
    }
    if (dn_m_at(t) < 0) x = _mm256_and_si256(x, _mm256_set1_epi32(0xFFFF));
    const __m256i e = _mm256_set1_epi32(0x7C00), e2 = _mm256_set1_epi32(0x7C000000);
    __m256i badlo = _mm256_cmpeq_epi32(_mm256_and_si256(x, e), e);
    __m256i badhi = _mm256_cmpeq_epi32(_mm256_and_si256(x, e2), e2);
    int bad =
        !_mm256_testz_si256(badlo, badlo) || (dn_m_at(t) >= 0 && !_mm256_testz_si256(badhi, badhi));
    /* pack: [d0..3 m0..3 | d4..7 m4..7] -> [d0..7 | m0..7] */
    __m256i dm = _mm256_packus_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0xFFFF)),
                                     _mm256_srli_epi32(x, 16));
    dm = _mm256_permute4x64_epi64(dm, 0xD8);
    *d = _mm256_cvtph_ps(_mm256_castsi256_si128(dm));
    *m = _mm256_cvtph_ps(_mm256_extracti128_si256(dm, 1));
    return bad;
}

#ifndef DN_DOT_PREFETCH
#define DN_DOT_PREFETCH 512 /* bytes ahead in each row's stream */
#endif

/* Four row streams: each a few hundred bytes ahead into L1, and the same
   place four rows on (the next batch, whose row starts no stream would
   otherwise have fetched) into L2: a constant count of lines per group, a
   prefetch never faults. A repacked matrix (packed) is one stream: the
   four rows' distance ahead into L1, and the next row group's same chunk
   (4 row_bytes on, as the plain matrix's next batch) into L2. */
AI void dn_prefetch_group(const dn_mv_ctx *c, dn_type t, const uint8_t *const blk[4], int packed)
{
    const size_t chunk = dn_big(t) ? dn_bb(t) : 8 * dn_bb(t);
    if (packed) {
        for (size_t o = 0; o < 4 * chunk + 63; o += 64) {
            _mm_prefetch((const char *)blk[0] + 4 * DN_DOT_PREFETCH + o, _MM_HINT_T0);
            _mm_prefetch((const char *)blk[0] + 4 * c->row_bytes + o, _MM_HINT_T1);
        }
        return;
    }
    for (int r = 0; r < 4; r++)
        for (size_t o = 0; o < chunk + 63; o += 64) {
            _mm_prefetch((const char *)blk[r] + DN_DOT_PREFETCH + o, _MM_HINT_T0);
            _mm_prefetch((const char *)blk[r] + 4 * c->row_bytes + o, _MM_HINT_T1);
        }
}

/* ---- the eight-row interleaved Q4_K layout (decodenum/repack.h) ------------------ */

/* The eight rows' pieces of group g by the reference's piece function, each
   row's block put back together first: a group outside the kernels' fast
   path. */
AI __m256 dn_q4k8_ref_pieces(const dn_mv_ctx *c, const uint8_t *grp, size_t g)
{
    uint8_t blk[DN_Q4K8_BYTES / DN_Q4K8_ROWS];
    float f[8];
    for (int r = 0; r < 8; r++) {
        dn_q4k8_get(grp, r, blk);
        f[r] = dn_dot_piece_of_bytes(DN_TYPE_Q4_K, blk, c->act, c->scaling, g, g + 256);
    }
    return _mm256_loadu_ps(f);
}

/* An eight-row batch of the interleaved layout: v[0..8) the rows' values,
   the mask of lanes needing the reference's finish (dn_mv_finish), or -1
   for an unreadable block. */
typedef int (*dn_q4k8_batch_fn)(const dn_mv_ctx *c, const uint8_t *grp, float v[8]);

/* The repacked Q4_K product over rows [r0, r1), one interleaved row group
   at a time by `batch` (its eight rows computed, the ones in range
   written). */
AI dn_status dn_q4k8_rows(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad,
                          dn_q4k8_batch_fn batch)
{
    for (size_t r = r0; r < r1;) {
        const size_t q = r / 8 * 8, k1 = r1 - q < 8 ? r1 - q : 8;
        float v[8];
        const int tiny = batch(c, c->w + q * c->row_bytes, v);
        if (tiny < 0) /* an unreadable block: the reference finds and reports it */
            return dn_mv_ref(c, 1, r, r1, out, bad);
        dn_status st = dn_mv_finish(c, 1, q, r - q, k1, tiny, v, out, bad);
        if (st != DN_OK) return st;
        r = q + k1;
    }
    return DN_OK;
}

#endif
