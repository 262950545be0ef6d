/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_lanes_avx2_q8.h: Q8_0 with the rows in the lanes, for the AVX2
 * prefill product (src/x86/dot_mm_lanes_avx2.c alone includes it, after
 * LA_ROWS, la_transpose, la_bad_f16 and la_ref_pieces): the AVX-512
 * kernel's (dot_mm_lanes_q8.h) with eight rows in the int32 lanes of a ymm
 * and AVX2 instructions only. A tile of 8 rows x one group of G <= 8 blocks
 * is transposed once (la8_tile: each 32-byte vector four digits of each of
 * the 8 rows, as |q| and as q, the rows' d as doubles in the lanes), then
 * every column of a block of columns runs over it: one broadcast of four
 * codes c, given q's signs (vpsignb), feeds a vpmaddubsw against |q| (the
 * sign trick of dot_avx2_q808.h: pairs below 2 * 128 * 127 < 2^15) widened
 * by vpmaddwd, so the eight int32 lanes are the 8 rows' C_k = sum q c with
 * no horizontal reduction. Where the group's activation scales factor
 * (S_k = f_k 2^emin, dot_act.c) the widening vpmaddwd takes the words f_k
 * instead of 1, so the lanes hold C_k f_k and a block's term is one fma
 * with the tile's d_k (2^emin once per group); elsewhere C_k (d_k S_k)
 * (small_sub32_z's term). The lanes reach double by an exponent splice
 * (la8_cvt) and the terms are added for 8 rows in two vectors.
 *
 * The sum of a row's terms must be exact (then one rounding gives the
 * reference's bit, the column's group being gok): where every column of a
 * pass factors and every row of the tile has 30 max|d| <= 2^16 min|d|
 * (la8_group), the tile-wide test of dot_mm_lanes_q8.h (2^22 dmax Smax <=
 * 2 gfac dmin Smin, exact in double: its proof is there) holds without
 * looking at the columns; else that test per column proves it for most
 * groups; a row that fails it gets small_sub32_z's own test on its terms
 * (la8_fine), then the reference's piece where that fails too, and every
 * row of a group that is not gok gets the reference's piece.
 */
#ifndef DN_DOT_MM_LANES_AVX2_Q8_H
#define DN_DOT_MM_LANES_AVX2_Q8_H

#define LA8_BYTES 34 /* bytes of a Q8_0 block */
/* Columns per pass over a block's digits: four 1.09-1.10x two and
   1.01-1.02x eight (n = 64, docs/log/dot.md, "The AVX2 Q8_0 lanes prefill"), the digit loop
   unrolled twice (1.02-1.04x the rolled loop; unrolled eight times 0.96x,
   and with the double sums in the same loop GCC spilled the four chains'
   partial sums: 1.03-1.06x slower). */
#define LA8_NQ 4
/* The fewest columns: at 2, 3 and 4 the lanes ran 0.85-0.88x the blocked
   kernel's time (4096 x 4096; a pass of four columns repeats the last
   one's codes). */
#define LA8_MIN_COLS 2
/* A bound on the ratio of two non-zero activation scales of a group that
   factors (fok): S_k = f_k 2^emin with 8 <= f_k (Sub32's m_k >= 8) and f_k
   <= dn_dot_factor_max(DN_TYPE_Q8_0) (240: 30). */
#define LA8_SPREAD ((float)dn_dot_factor_max(DN_TYPE_Q8_0) / 8.0f)

/* The lane of row r: rows 0, 1, 4, 5, 2, 3, 6, 7 in lanes 0..7, so that
   vpunpckldq / vpunpckhdq of a lane vector put rows 0-3 and 4-7 in order
   (la8_cvt). */
static const int la8_lane[LA_ROWS] = {0, 1, 4, 5, 2, 3, 6, 7};

/* One tile: 8 rows' group of G blocks in the lanes. */
typedef struct la8_tile {
    __m256i qa[8][8];  /* block k, dword u: lane la8_lane[r] = |q| of row r's digits 4u..4u+3 */
    __m256i qs[8][8];  /* the same digits q (their signs) */
    __m256d d[8][2];   /* block k: d of rows 0-3, 4-7 */
    __m256d dmax22[2]; /* 2^22 max_k |d_k| */
    __m256d dmin[2];   /* the least non-zero |d_k|, +inf when none */
    int G;
    int spread; /* rows (bit r) with LA8_SPREAD max|d_k| <= 2^16 min|d_k| (la8_group) */
} la8_tile;

/* The tile of the 8 rows' group (blk[r]: row r's first block of it, G
   blocks); 1 when one of the blocks is unreadable (d an infinity or a NaN:
   T is then not to be used). */
AI int la8_load(la8_tile *T, const uint8_t *const blk[LA_ROWS], int G)
{
    const __m256 inf = _mm256_set1_ps(INFINITY);
    __m256 mx = _mm256_setzero_ps(), mn = inf;
    int bad = 0;
    T->G = G;
    for (int k = 0; k < G; k++) {
        const size_t at = (size_t)k * LA8_BYTES;
        __m256i R[8], X[8];
        uint16_t h[LA_ROWS];
        for (int r = 0; r < 8; r++) {
            R[la8_lane[r]] = load32(blk[r] + at + 2);
            h[r] = dn_load_u16(blk[r] + at);
        }
        la_transpose(R, X);
        for (int u = 0; u < 8; u++) {
            T->qs[k][u] = X[u];
            T->qa[k][u] = _mm256_abs_epi8(X[u]); /* -128 to 0x80: 128 unsigned */
        }
        const __m128i hv = _mm_loadu_si128((const __m128i *)h);
        bad |= la_bad_f16(hv);
        const __m256 d = _mm256_cvtph_ps(hv);
        const __m256 ad = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), d);
        T->d[k][0] = _mm256_cvtps_pd(_mm256_castps256_ps128(d));
        T->d[k][1] = _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1));
        mx = _mm256_max_ps(mx, ad);
        mn = _mm256_min_ps(
            mn, _mm256_blendv_ps(ad, inf, _mm256_cmp_ps(ad, _mm256_setzero_ps(), _CMP_EQ_OQ)));
    }
    T->spread =
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_mul_ps(mx, _mm256_set1_ps(LA8_SPREAD)),
                                         _mm256_mul_ps(mn, _mm256_set1_ps(65536.0f)), _CMP_LE_OQ));
    const __m256d two22 = _mm256_set1_pd(4194304.0);
    T->dmax22[0] = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(mx)), two22);
    T->dmax22[1] = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(mx, 1)), two22);
    T->dmin[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(mn));
    T->dmin[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(mn, 1));
    return bad;
}

/* The bias of la8_block's sums: 2^31 (a lane's sum X, |X| < 2^31, is then
   X + 2^31 read unsigned). */
#define LA8_BIAS ((int)0x80000000u)

/* Block k's sums of the 8 rows against the LA8_NQ columns' codes c[j]
   (block k's 32 codes) into X[j]: per dword u of the digits, |q| times c
   with q's sign by vpmaddubsw (pairs <= 2 * 128 * 127 = 32512), widened by
   vpmaddwd with the words w[j] (the column's f_k, or 1): X = C_k w with
   |C_k| <= 32 * 128 * 127 < 2^19 and w <= 240, below 2^27. Each lane
   starts at LA8_BIAS, so holds X + 2^31 (mod 2^32, i.e. exactly, read
   unsigned); lanes in the tile's order (la8_lane). */
AI void la8_block(const la8_tile *T, int k, const int8_t *const c[LA8_NQ], const __m256i w[LA8_NQ],
                  __m256i X[LA8_NQ])
{
    for (int j = 0; j < LA8_NQ; j++) X[j] = _mm256_set1_epi32(LA8_BIAS);
#pragma GCC unroll 2
    for (int u = 0; u < 8; u++) {
        const __m256i qa = T->qa[k][u], qs = T->qs[k][u];
        for (int j = 0; j < LA8_NQ; j++) {
            int32_t four;
            memcpy(&four, c[j] + 4 * u, 4);
            const __m256i p =
                _mm256_maddubs_epi16(qa, _mm256_sign_epi8(_mm256_set1_epi32(four), qs));
            X[j] = _mm256_add_epi32(X[j], _mm256_madd_epi16(p, w[j]));
        }
    }
}

/* la8_block's biased lanes as doubles, rows 0-3 in *lo and 4-7 in *hi:
   each lane X + 2^31 spliced under the exponent of 2^52 (2^52 + 2^31 + X,
   exact) less 2^52 + 2^31. */
AI void la8_cvt(__m256i X, __m256d *lo, __m256d *hi)
{
    const __m256i e = _mm256_set1_epi32(0x43300000);
    const __m256d k = _mm256_set1_pd(4503601774854144.0); /* 2^52 + 2^31 */
    *lo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_unpacklo_epi32(X, e)), k);
    *hi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_unpackhi_epi32(X, e)), k);
}

/* LA8_NQ columns' sums s[j] = sum_k C_k (d_k S_k) of the 8 rows (rows 0-3
   in s[j][0], 4-7 in s[j][1]); exact where la8_piece's test passes (then in
   any order, so the product and the add may be one fma). Where every
   column's group factors (fk: S_k = f_k 2^emin, dot_act.c) the words are
   the f_k and s = (sum_k (C_k f_k) d_k) 2^emin, the same exact sum. */
AI void la8_quad(const la8_tile *T, const dn_dot_act *const a[LA8_NQ], size_t g, int fk,
                 __m256d s[LA8_NQ][2])
{
    const size_t k0 = g / 32;
    __m256i X[8][LA8_NQ];
#pragma GCC unroll 1
    for (int k = 0; k < T->G; k++) {
        const int8_t *c[LA8_NQ];
        __m256i w[LA8_NQ];
        for (int j = 0; j < LA8_NQ; j++) {
            c[j] = a[j]->c8 + g + 32 * (size_t)k;
            w[j] = _mm256_set1_epi16(fk ? a[j]->f16[k0 + (size_t)k] : 1);
        }
        la8_block(T, k, c, w, X[k]);
    }
    for (int j = 0; j < LA8_NQ; j++) {
        __m256d s0 = _mm256_setzero_pd(), s1 = s0;
#pragma GCC unroll 1
        for (int k = 0; k < T->G; k++) {
            __m256d m0 = T->d[k][0], m1 = T->d[k][1], lo, hi;
            if (!fk) {
                const __m256d S = _mm256_broadcast_sd(a[j]->S + k0 + (size_t)k);
                m0 = _mm256_mul_pd(m0, S), m1 = _mm256_mul_pd(m1, S);
            }
            la8_cvt(X[k][j], &lo, &hi);
            s0 = _mm256_fmadd_pd(lo, m0, s0);
            s1 = _mm256_fmadd_pd(hi, m1, s1);
        }
        const __m256d e = _mm256_set1_pd(fk ? a[j]->g2e[g / DN_GROUP] : 1.0);
        s[j][0] = _mm256_mul_pd(s0, e), s[j][1] = _mm256_mul_pd(s1, e);
    }
}

/* One column's 8 pieces with small_sub32_z's test on each row's terms
   (sub32_terms4): the rows it cannot prove in *need. */
AI __m256 la8_fine(const la8_tile *T, const dn_dot_act *a, size_t g, int *need)
{
    const double *S = a->S + g / 32, *Sinf = a->Sinf + g / 32;
    __m256d s[2], ab[2], ym[2];
    for (int h = 0; h < 2; h++) {
        s[h] = ab[h] = _mm256_setzero_pd();
        ym[h] = _mm256_set1_pd(INFINITY);
    }
    for (int k = 0; k < T->G; k++) {
        const int8_t *c[LA8_NQ];
        __m256i X[LA8_NQ], w[LA8_NQ];
        for (int j = 0; j < LA8_NQ; j++) {
            c[j] = a->c8 + g + 32 * (size_t)k;
            w[j] = _mm256_set1_epi16(1);
        }
        la8_block(T, k, c, w, X); /* one column: the other three are its copies */
        const __m256d Sk = _mm256_broadcast_sd(S + k), Ik = _mm256_broadcast_sd(Sinf + k);
        __m256d lo, hi;
        la8_cvt(X[0], &lo, &hi);
        sub32_terms4(lo, T->d[k][0], Sk, Ik, &s[0], &ab[0], &ym[0]);
        sub32_terms4(hi, T->d[k][1], Sk, Ik, &s[1], &ab[1], &ym[1]);
    }
    return sub32_finish4x2(s, ab, ym, a->gfac[g / DN_GROUP], need);
}

/* The largest S_k and the least Sinf_k of a group's G blocks, in every lane
   of *smax and *smin (G = 8 in two vectors: per column, group and tile, a
   scalar loop took 1.0x-1.1x the time of the product at n = 8). */
AI void la8_srange(const double *S, const double *Sinf, int G, __m256d *smax, __m256d *smin)
{
    __m256d mx, mn;
    if (G == 8) {
        mx = _mm256_max_pd(_mm256_loadu_pd(S), _mm256_loadu_pd(S + 4));
        mn = _mm256_min_pd(_mm256_loadu_pd(Sinf), _mm256_loadu_pd(Sinf + 4));
    } else {
        mx = _mm256_setzero_pd(), mn = _mm256_set1_pd(INFINITY);
        for (int k = 0; k < G; k++) {
            mx = _mm256_max_pd(mx, _mm256_broadcast_sd(S + k));
            mn = _mm256_min_pd(mn, _mm256_broadcast_sd(Sinf + k));
        }
    }
    mx = _mm256_max_pd(mx, _mm256_permute2f128_pd(mx, mx, 1));
    mn = _mm256_min_pd(mn, _mm256_permute2f128_pd(mn, mn, 1));
    *smax = _mm256_max_pd(mx, _mm256_permute_pd(mx, 5));
    *smin = _mm256_min_pd(mn, _mm256_permute_pd(mn, 5));
}

/* The 8 pieces of column (act, a)'s group g from its sums s (la8_quad): the
   tile-wide test where the group is gok (S and gfac its blocks'), la8_fine
   for the rows it leaves, the reference's piece for those la8_fine leaves
   and for every row of a group that is not gok. */
AI __m256 la8_piece(const la8_tile *T, const uint8_t *const blk[LA_ROWS], const dn_act_row *act,
                    const dn_dot_act *a, size_t g, const __m256d s[2])
{
    const size_t gi = g / DN_GROUP;
    int need = 0xFF;
    __m256 p = _mm256_setzero_ps();
    if (a->gok[gi]) {
        __m256d lhs, rhs;
        la8_srange(a->S + g / 32, a->Sinf + g / 32, T->G, &lhs, &rhs);
        rhs = _mm256_mul_pd(rhs, _mm256_set1_pd(2.0 * a->gfac[gi]));
        int ok = 0;
        for (int h = 0; h < 2; h++)
            ok |= _mm256_movemask_pd(_mm256_cmp_pd(_mm256_mul_pd(T->dmax22[h], lhs),
                                                   _mm256_mul_pd(T->dmin[h], rhs), _CMP_LE_OQ))
                  << 4 * h;
        const __m256d z = _mm256_setzero_pd(); /* + 0: an exact 0 is +0 */
        p = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_add_pd(s[1], z)),
                            _mm256_cvtpd_ps(_mm256_add_pd(s[0], z)));
        need = 0;
        if (ok != 0xFF) {
            float f[LA_ROWS], e[LA_ROWS];
            _mm256_storeu_ps(f, p);
            _mm256_storeu_ps(e, la8_fine(T, a, g, &need));
            for (int r = 0; r < LA_ROWS; r++)
                if (!(ok >> r & 1)) f[r] = e[r];
            need &= ~ok;
            p = _mm256_loadu_ps(f);
        }
    }
    return need ? la_ref_pieces(p, (uint32_t)need, DN_TYPE_Q8_0, blk, act, g, g + 32 * (size_t)T->G)
                : p;
}

/* One column block (nc columns, col) of the tile's group g: each column's
   pieces added to its chains acc[j] (in order), the lanes that met a tiny
   piece into tiny[j] (la_add_piece). Where the pass's columns all factor
   (fok, gfac >= 2^37) and every row of the tile has LA8_SPREAD max|d| <=
   2^16 min|d| (T->spread), the tile-wide test holds in every row and
   column: max S <= LA8_SPREAD min S, so 2^22 max|d| max S <= 2^38 min|d|
   min S <= 2 gfac min|d| min S; the sums are then rounded at once, and
   the other passes take la8_piece's tests. */
AI void la8_group(const la8_tile *T, const uint8_t *const blk[LA_ROWS], const mm_col *col, int nc,
                  size_t g, float (*acc)[LA_ROWS], uint32_t *tiny)
{
    const size_t gi = g / DN_GROUP;
    for (int j0 = 0; j0 < nc; j0 += LA8_NQ) {
        const dn_dot_act *a[LA8_NQ];
        int fk = 1;
        for (int j = 0; j < LA8_NQ; j++) {
            a[j] = col[j0 + j < nc ? j0 + j : j0].a;
            fk &= a[j]->fok[gi] && a[j]->gfac[gi] >= 0x1p37;
        }
        __m256d s[LA8_NQ][2];
        if (fk)
            la8_quad(T, a, g, 1, s);
        else
            la8_quad(T, a, g, 0, s);
        const int all = fk && T->spread == 0xFF;
        const __m256d z = _mm256_setzero_pd(); /* + 0: an exact 0 is +0 */
        for (int j = 0; j < LA8_NQ && j0 + j < nc; j++) {
            const __m256 p = all ? _mm256_set_m128(_mm256_cvtpd_ps(_mm256_add_pd(s[j][1], z)),
                                                   _mm256_cvtpd_ps(_mm256_add_pd(s[j][0], z)))
                                 : la8_piece(T, blk, col[j0 + j].act, a[j], g, s[j]);
            la_add_piece(p, acc[j0 + j], &tiny[j0 + j]);
        }
    }
}

#endif
