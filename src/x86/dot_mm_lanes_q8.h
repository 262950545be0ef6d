/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_lanes_q8.h: Q8_0 with the rows in the lanes, for the AVX-512 prefill
 * product (src/x86/dot_mm_lanes_avx512.c alone includes it, after defining
 * LN_ROWS, ln_transpose and ln_ref_pieces). A tile of 16 rows x one group of G <= 8 blocks
 * is transposed once (l8_tile: each 64-byte vector four digits of each of
 * the 16 rows, the rows' d as doubles in the lanes), then every column of a
 * block of columns runs over it: one broadcast of four codes feeds a
 * vpdpbusd whose 16 int32 lanes are the 16 rows (q8_0_chunks4's integers,
 * C_k = sum q c, by the same q + 128 against the codes), and each block's
 * term C_k (d_k S_k) (small_sub32_z's) is added in double for 16 rows in
 * two vectors.
 *
 * The sum of a row's terms must be exact (then one rounding gives the
 * reference's bit, the column's group being gok). small_sub32_z proves it
 * per row from the terms' magnitudes; here a test with no per-block work
 * proves it for most groups, and the rest take that same test:
 *
 *   d_k = M 2^E (binary16, M < 2^11 an integer) and S_k = m 2^e (m <
 *   2^mbits) make t_k a multiple of 2^(E + e) > |d_k| S_k / 2^(11 +
 *   mbits), so every term and partial sum is a multiple of U > dmin Smin /
 *   2^(11 + mbits) (dmin, Smin the least non-zero |d_k|, S_k of the row and
 *   column); |C_k| <= 32 * 128 * 127 gives sum |t_k| < 2^22 dmax Smax. Every
 *   partial sum is exact when that is at most 2^53 U, which
 *   2^22 dmax Smax <= 2 gfac dmin Smin (gfac = 2^(41 - mbits)) implies. The
 *   two sides are products of a binary16, a power of two and an S: exact in
 *   double, so the comparison is too.
 *
 * A row that fails it (widely spread d or S) gets small_sub32_z's test on
 * its terms (l8_fine), then the reference's piece where that fails too.
 */
#ifndef DN_DOT_MM_LANES_Q8_H
#define DN_DOT_MM_LANES_Q8_H

#define L8_BYTES 34 /* bytes of a Q8_0 block */

/* One tile: 16 rows' group of G blocks in the lanes. */
typedef struct l8_tile {
    __m512i q[8][8];   /* block k, dword u: lane r = row r's digits 4u..4u+3, + 128 */
    __m512d d[8][2];   /* block k: d of rows 0-7, 8-15 */
    __m512d dmax22[2]; /* 2^22 max_k |d_k| */
    __m512d dmin[2];   /* the least non-zero |d_k|, +inf when none */
    int G;
} l8_tile;

/* The tile of the 16 rows' group (blk[r]: row r's first block of it, G
   blocks, all readable: checked by the caller). */
AIV void l8_load(l8_tile *T, const uint8_t *const blk[LN_ROWS], int G)
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    uint16_t h[8][LN_ROWS];
    T->G = G;
    for (int k = 0; k < G; k++) {
        const size_t at = (size_t)k * L8_BYTES;
        __m512i X[8];
        for (int i = 0; i < 8; i++) X[i] = load2x32(blk[i] + at + 2, blk[i + 8] + at + 2);
        ln_transpose(X);
        for (int u = 0; u < 8; u++) T->q[k][u] = _mm512_xor_si512(X[u], flip);
        for (int r = 0; r < LN_ROWS; r++) h[k][r] = dn_load_u16(blk[r] + at);
    }
    const __m512 inf = _mm512_set1_ps(INFINITY);
    __m512 mx = _mm512_setzero_ps(), mn = inf;
    for (int k = 0; k < G; k++) {
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)h[k]));
        const __m512 ad = _mm512_abs_ps(d);
        T->d[k][0] = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
        T->d[k][1] =
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)));
        mx = _mm512_max_ps(mx, ad);
        mn = _mm512_min_ps(
            mn, _mm512_mask_blend_ps(_mm512_cmpeq_ps_mask(ad, _mm512_setzero_ps()), ad, inf));
    }
    const __m512d two22 = _mm512_set1_pd(4194304.0);
    T->dmax22[0] = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(mx)), two22);
    T->dmax22[1] = _mm512_mul_pd(
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mx), 1))), two22);
    T->dmin[0] = _mm512_cvtps_pd(_mm512_castps512_ps256(mn));
    T->dmin[1] = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mn), 1)));
}

/* Block k's C_k of the 16 rows against column a's codes (g: the group):
   eight vpdpbusd of the tile's digits + 128 with broadcast codes, started
   at bias = -128 bs32_k (q8_0_chunks4's sums; |raw| <= 32 * 255 * 127 in
   each lane, two chains: the second half's latency hidden). */
AIV __m512i l8_block(const l8_tile *T, const dn_dot_act *a, size_t g, int k, const int32_t *bias)
{
    const int8_t *c = a->c8 + g + 32 * (size_t)k;
    __m512i r2[2] = {_mm512_set1_epi32(*bias), _mm512_setzero_si512()};
    for (int u = 0; u < 8; u++) r2[u & 1] = dpbusd_bcst(r2[u & 1], T->q[k][u], c + 4 * u);
    return _mm512_add_epi32(r2[0], r2[1]);
}

/* -128 bs32_k of column a's G <= 8 blocks of group g, for l8_block. */
AIV void l8_bias(const dn_dot_act *a, size_t g, int G, int32_t bias[8])
{
    const __m256i b = _mm256_maskz_loadu_epi32((__mmask8)((1u << G) - 1), a->bs32 + g / 32);
    _mm256_storeu_si256((__m256i *)bias,
                        _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(b, 7)));
}

/* Four columns' sums s[j] = sum_k C_k (d_k S_k) of the 16 rows (rows 0-7
   in s[j][0], 8-15 in s[j][1]); exact where l8_piece's test passes (then
   in any order, so the product and the add may be one fma). The biases
   are formed per column and group beforehand: in the block loop each was
   a scalar load, negation, shift and a broadcast from a general register. */
AIV void l8_quad(const l8_tile *T, const dn_dot_act *const a[4], size_t g, __m512d s[4][2])
{
    int32_t bias[4][8];
    for (int j = 0; j < 4; j++) {
        s[j][0] = s[j][1] = _mm512_setzero_pd();
        l8_bias(a[j], g, T->G, bias[j]);
    }
#pragma GCC unroll 1
    for (int k = 0; k < T->G; k++) {
        for (int j = 0; j < 4; j++) {
            const __m512i C = l8_block(T, a[j], g, k, &bias[j][k]);
            const __m512d S = _mm512_set1_pd(a[j]->S[g / 32 + (size_t)k]);
            s[j][0] = _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(C)),
                                      _mm512_mul_pd(T->d[k][0], S), s[j][0]);
            s[j][1] = _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(C, 1)),
                                      _mm512_mul_pd(T->d[k][1], S), s[j][1]);
        }
    }
}

/* One column's 16 pieces with small_sub32_z's test on each row's terms
   (sub32_terms8): the rows it cannot prove in *need. */
AIV __m512 l8_fine(const l8_tile *T, const dn_dot_act *a, size_t g, int *need)
{
    const double *S = a->S + g / 32, *Sinf = a->Sinf + g / 32;
    __m512d s[2], ab[2], ym[2];
    for (int h = 0; h < 2; h++) {
        s[h] = ab[h] = _mm512_setzero_pd();
        ym[h] = _mm512_set1_pd(INFINITY);
    }
    int32_t bias[8];
    l8_bias(a, g, T->G, bias);
    for (int k = 0; k < T->G; k++) {
        const __m512i C = l8_block(T, a, g, k, &bias[k]);
        sub32_terms8(_mm512_cvtepi32_pd(_mm512_castsi512_si256(C)), T->d[k][0], S[k], Sinf[k],
                     &s[0], &ab[0], &ym[0]);
        sub32_terms8(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(C, 1)), T->d[k][1], S[k], Sinf[k],
                     &s[1], &ab[1], &ym[1]);
    }
    int n0, n1;
    const __m256 f0 = sub32_finish8(s[0], ab[0], ym[0], a->gfac[g / DN_GROUP], &n0);
    const __m256 f1 = sub32_finish8(s[1], ab[1], ym[1], a->gfac[g / DN_GROUP], &n1);
    *need = n0 | n1 << 8;
    return _mm512_insertf32x8(_mm512_castps256_ps512(f0), f1, 1);
}

/* The 16 pieces of column (act, a)'s group g from its sums s (l8_quad): the
   test above where the group is gok (S and gfac its blocks'), l8_fine for
   the rows it leaves, the reference's piece for those l8_fine leaves and
   for every row of a group that is not gok. */
AIV __m512 l8_piece(const l8_tile *T, const uint8_t *const blk[LN_ROWS], const dn_act_row *act,
                    const dn_dot_act *a, size_t g, const __m512d s[2])
{
    const size_t gi = g / DN_GROUP;
    const __mmask8 in = (__mmask8)((1u << T->G) - 1);
    int need = 0xFFFF;
    __m512 p = _mm512_setzero_ps();
    if (a->gok[gi]) {
        const double smax = _mm512_mask_reduce_max_pd(in, _mm512_maskz_loadu_pd(in, a->S + g / 32));
        const double smin =
            _mm512_mask_reduce_min_pd(in, _mm512_maskz_loadu_pd(in, a->Sinf + g / 32));
        const __m512d lhs = _mm512_set1_pd(smax), rhs = _mm512_set1_pd(smin * 2.0 * a->gfac[gi]);
        const __mmask16 ok =
            (__mmask16)(_mm512_cmp_pd_mask(_mm512_mul_pd(T->dmax22[0], lhs),
                                           _mm512_mul_pd(T->dmin[0], rhs), _CMP_LE_OQ) |
                        _mm512_cmp_pd_mask(_mm512_mul_pd(T->dmax22[1], lhs),
                                           _mm512_mul_pd(T->dmin[1], rhs), _CMP_LE_OQ)
                            << 8);
        need = 0;
        const __m256 f0 = _mm512_cvtpd_ps(_mm512_add_pd(s[0], _mm512_setzero_pd()));
        const __m256 f1 = _mm512_cvtpd_ps(_mm512_add_pd(s[1], _mm512_setzero_pd()));
        p = _mm512_insertf32x8(_mm512_castps256_ps512(f0), f1, 1); /* + 0: an exact 0 is +0 */
        if (ok != 0xFFFF) {
            p = _mm512_mask_blend_ps(ok, l8_fine(T, a, g, &need), p);
            need &= ~ok;
        }
    }
    return need ? ln_ref_pieces(p, (uint32_t)need, DN_TYPE_Q8_0, blk, act, g, g + 32 * (size_t)T->G)
                : p;
}

/* One column block (nc columns, col) of the tile's group g: each column's
   pieces added to its chains acc[j] (in order), the lanes that met a tiny
   piece into tiny[j] (ln_group's way). */
AIV void l8_group(const l8_tile *T, const uint8_t *const blk[LN_ROWS], const mm_col *col, int nc,
                  size_t g, float (*acc)[LN_ROWS], uint32_t *tiny)
{
    for (int j0 = 0; j0 < nc; j0 += 4) {
        const dn_dot_act *a[4];
        for (int j = 0; j < 4; j++) a[j] = col[j0 + j < nc ? j0 + j : j0].a;
        __m512d s[4][2];
        l8_quad(T, a, g, s);
        for (int j = 0; j < 4 && j0 + j < nc; j++) {
            const __m512 p = l8_piece(T, blk, col[j0 + j].act, a[j], g, s[j]);
            ln_add_piece(p, acc[j0 + j], &tiny[j0 + j]);
        }
    }
}

#endif
