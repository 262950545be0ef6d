/* SPDX-License-Identifier: MIT */
/*
 * The quantized matrix product of prefill on AVX2 (+FMA, F16C), register
 * blocked: a batch of four rows against a block of MM_NC prepared columns,
 * each row's blocks decoded (digits to bytes, sub-block scales, binary16
 * scales) once and multiplied with every column's codes, so a weight is
 * decoded once per MM_NC columns instead of once per column. Bit for bit
 * the matrix-vector product of each column (dot_avx2.c), hence the
 * reference (src/dot.c):
 *
 * - the integer chunk sums of a (row, column) are the integers the
 *   matrix-vector kernel computes, in the same lanes (the instructions and
 *   their bounds are dot_avx2_decode.h's: only the loops are reordered, the
 *   columns innermost);
 * - each column's four row pieces are finished by the matrix-vector
 *   kernel's own functions (dot_avx2_pieces.h: big_sub32_AB, big_sub32_4,
 *   small_sub32_4) with the same exactness checks, the lanes they cannot
 *   prove going to the reference's piece function;
 * - a row's pieces are added in order from +0, a row meeting a tiny piece
 *   is redone by the reference, and a batch meeting an unreadable block
 *   hands the rest of the range to the reference, which reports it (the
 *   first column block runs every row in order, and readability does not
 *   depend on the column, so the first unreadable block of the range is
 *   the one reported).
 *
 * Covered: Q4_K, Q5_K (factored groups; the others per column), Q6_K and
 * Q8_0 under Sub32 scaling with narrow codes (one word) and every column's
 * side usable. Everything else runs dn_dot_mm_tiled over the table's
 * matrix-vector kernel.
 */
#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "dot_avx2_decode.h"
#include "dot_avx2_pieces.h"

#include <immintrin.h>
#include <string.h>

#include "dot_mm_types.h"

/* ---- one row's integer sums against MM_NC columns ------------------------------- */

/* Q4_K, Q5_K, a factored group (every column's fok): big_k_factored's sums
   for one row and each column, C[j] and mb[j] lane for lane. */
AI void k_factored_cols(dn_type t, const uint8_t *blk, const mm_col *col, size_t g, int fk,
                        __m256i C[MM_NC], __m256i mb[MM_NC])
{
    const __m128i sm = k_scales_mins(blk);
    const __m128i sc = _mm_cvtepu8_epi16(sm);
    const __m256i mins = _mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8));
    __m256i M2[MM_NC];
    for (int j = 0; j < MM_NC; j++) { /* a column not in fk: zero multipliers, its sums unused */
        const __m128i f = fk >> j & 1 ? _mm_loadu_si128((const __m128i *)(col[j].a->f16 + g / 32))
                                      : _mm_setzero_si128();
        const __m256i fb = fk >> j & 1 ? load32(col[j].a->fbs + g / 32) : _mm256_setzero_si256();
        M2[j] = _mm256_broadcastsi128_si256(_mm_mullo_epi16(sc, f));
        mb[j] = _mm256_mullo_epi32(mins, fb);
        C[j] = _mm256_setzero_si256();
    }
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++) {
        const __m256i sel = _mm256_set1_epi16((short)(2 * c | (2 * c + 1) << 8));
        const __m256i q = digits(t, blk, c);
        for (int j = 0; j < MM_NC; j++) {
            __m256i p = _mm256_maddubs_epi16(q, load32(col[j].a->c8 + g + 32 * c));
            C[j] = _mm256_add_epi32(C[j], _mm256_madd_epi16(p, _mm256_shuffle_epi8(M2[j], sel)));
        }
    }
}

/* The hadd tree of big_narrow / small_narrow_2rows, one chunk pair at a
   time: after the pairs (0,1) (2,3) (4,5) (6,7), [C_0..C_7]. */
AI void tree_add(__m256i *ab, __m256i *cd, int c, __m256i h)
{
    if (c == 0) *ab = h;
    if (c == 2) *ab = _mm256_hadd_epi32(*ab, h);
    if (c == 4) *cd = h;
    if (c == 6) *cd = _mm256_hadd_epi32(*cd, h);
}

AI __m256i tree_end(__m256i ab, __m256i cd)
{
    return _mm256_add_epi32(_mm256_permute2x128_si256(ab, cd, 0x20),
                            _mm256_permute2x128_si256(ab, cd, 0x31));
}

/* Q6_K, one row's block: big_narrow's C (zero point applied) for each
   column, the digits and per-16 scale multipliers decoded once. */
AI void q6_k_cols(const uint8_t *blk, const mm_col *col, size_t g, __m256i C[MM_NC])
{
    const dn_type t = DN_TYPE_Q6_K;
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
    const __m256i half[2] = {_mm256_permute2x128_si256(sc16, sc16, 0x00),
                             _mm256_permute2x128_si256(sc16, sc16, 0x11)};
    __m256i ab[MM_NC], cd[MM_NC];
#pragma GCC unroll 4
    for (int c = 0; c < 8; c += 2) {
        const __m256i q0 = digits(t, blk, c), q1 = digits(t, blk, c + 1);
        const __m256i m0 = sub16_scale(half[c / 4], c), m1 = sub16_scale(half[(c + 1) / 4], c + 1);
        for (int j = 0; j < MM_NC; j++) {
            const int8_t *c8 = col[j].a->c8 + g + 32 * c;
            __m256i v0 = _mm256_madd_epi16(_mm256_maddubs_epi16(q0, load32(c8)), m0);
            __m256i v1 = _mm256_madd_epi16(_mm256_maddubs_epi16(q1, load32(c8 + 32)), m1);
            tree_add(&ab[j], &cd[j], c, _mm256_hadd_epi32(v0, v1));
        }
    }
    for (int j = 0; j < MM_NC; j++) {
        __m256i zs = _mm256_madd_epi16(sc16, load32(col[j].a->bs16n + g / 16));
        C[j] = _mm256_sub_epi32(tree_end(ab[j], cd[j]), _mm256_slli_epi32(zs, 5));
    }
}

/* Q8_0, one row's group of eight blocks: small_narrow_2rows's C for each
   column (signed digits through the sign trick: |q| once per chunk). */
AI void q8_0_cols(const uint8_t *blk, size_t bb, const mm_col *col, size_t g, __m256i C[MM_NC])
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i ab[MM_NC], cd[MM_NC];
#pragma GCC unroll 4
    for (int c = 0; c < 8; c += 2) {
        const __m256i q0 = load32(blk + c * bb + 2), q1 = load32(blk + (c + 1) * bb + 2);
        const __m256i a0 = _mm256_sign_epi8(q0, q0), a1 = _mm256_sign_epi8(q1, q1);
        for (int j = 0; j < MM_NC; j++) {
            const int8_t *c8 = col[j].a->c8 + g + 32 * c;
            __m256i v0 =
                _mm256_madd_epi16(_mm256_maddubs_epi16(a0, _mm256_sign_epi8(load32(c8), q0)), ones);
            __m256i v1 = _mm256_madd_epi16(
                _mm256_maddubs_epi16(a1, _mm256_sign_epi8(load32(c8 + 32), q1)), ones);
            tree_add(&ab[j], &cd[j], c, _mm256_hadd_epi32(v0, v1));
        }
    }
    for (int j = 0; j < MM_NC; j++) C[j] = tree_end(ab[j], cd[j]);
}

/* ---- four rows' pieces of a group against MM_NC columns ------------------------ */

/* Q4_K, Q5_K, one column whose group is not factored: dot_avx2.c's
   big_group for it (the reference, the factored sums, or the chunk sums
   with the mins and the activation's products P). */
AI __m128 k_group_one(dn_type t, const uint8_t *const blk[4], const dn_dot_act *a, size_t g,
                      __m256d d, __m256d dm, int *need)
{
    const size_t gi = g / DN_GROUP;
    __m256i C[4], O[4];
    __m128 p;
    if (mm_no_fast(a, gi, &p, need)) return p;
    if (a->fok[gi]) {
        big_k_factored(t, blk, a->c8 + g, a->f16 + g / 32, a->fbs + g / 32, C, O);
        const __m256d s = _mm256_set1_pd(a->g2e[gi]);
        return big_sub32_AB(_mm256_mul_pd(rows_total_pd(C), s),
                            _mm256_mul_pd(row_sums(O), _mm256_sub_pd(_mm256_setzero_pd(), s)),
                            dn_has_offs(t), a->glim[gi], d, dm, need);
    }
    for (int r = 0; r < 4; r++) {
        O[r] = _mm256_setzero_si256();
        big_narrow(t, 1, blk + r, a->c8 + g, a->bs16n + g / 16, NULL, 0, C + r, O + r);
    }
    return mm_chunk_pieces(C, O, a, g, d, dm, need);
}

/* Q4_K, Q5_K: the pieces p[j] of each column (lanes in need[j] for the
   reference); -1 when a block is unreadable. */
AI int k_group(dn_type t, const uint8_t *const blk[4], const mm_col *col, size_t g, __m128 p[MM_NC],
               int need[MM_NC])
{
    const size_t gi = g / DN_GROUP;
    int bad = 0, fk = 0;
    __m256d d, dm;
    scales4x2(blk, dn_d_at(t), &d, &dm, &bad);
    if (bad) return -1;
    for (int j = 0; j < MM_NC; j++) fk |= col[j].a->fok[gi] << j; /* fok implies gok */
    if (fk != (1 << MM_NC) - 1)
        for (int j = 0; j < MM_NC; j++)
            if (!(fk >> j & 1)) p[j] = k_group_one(t, blk, col[j].a, g, d, dm, &need[j]);
    if (!fk) return 0;
    __m256i C[4][MM_NC], mb[4][MM_NC];
    for (int r = 0; r < 4; r++) k_factored_cols(t, blk[r], col, g, fk, C[r], mb[r]);
    for (int j = 0; j < MM_NC; j++) {
        if (!(fk >> j & 1)) continue;
        const dn_dot_act *a = col[j].a;
        __m256i Cj[4], Oj[4];
        col_of(C, j, Cj);
        col_of(mb, j, Oj);
        const __m256d s = _mm256_set1_pd(a->g2e[gi]);
        __m256d A = _mm256_mul_pd(rows_total_pd(Cj), s);
        __m256d B = _mm256_mul_pd(row_sums(Oj), _mm256_sub_pd(_mm256_setzero_pd(), s));
        p[j] = big_sub32_AB(A, B, dn_has_offs(t), a->glim[gi], d, dm, &need[j]);
    }
    return 0;
}

/* Q8_0: the four rows' scales of a group of G blocks as small_sub32_4
   takes them (dot_mm_groups.h's q8_0_group) and, for a whole group
   (G = 8), each row's eight scales as doubles and the columns whose four
   pieces take q8_0_pieces_of's row-major path (bits of fast); nonzero when
   a scale is unreadable. */
typedef struct mm_q8s {
    __m256 d[4], m[4];
    __m256d dr[4][2]; /* row r's d_k, k = 0..3 and 4..7 */
    int fast;
} mm_q8s;

/* [f(x[0]'s lanes), ..., f(x[3]'s)] as doubles, f the minimum or maximum
   (op 0 or 1) of eight floats. */
AI __m256d rows_minmax(const __m256 x[4], int op)
{
#define MM_OP(a, b) (op ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b))
    __m256 m01 = MM_OP(_mm256_permute2f128_ps(x[0], x[1], 0x20),
                       _mm256_permute2f128_ps(x[0], x[1], 0x31)); /* row 0 | row 1, 4 each */
    __m256 m23 =
        MM_OP(_mm256_permute2f128_ps(x[2], x[3], 0x20), _mm256_permute2f128_ps(x[2], x[3], 0x31));
    __m256 h = MM_OP(_mm256_shuffle_ps(m01, m23, 0x44), _mm256_shuffle_ps(m01, m23, 0xEE));
    h = MM_OP(h, _mm256_shuffle_ps(h, h, 0xB1)); /* rows 0, 2 in lanes 0, 2; 1, 3 in 4, 6 */
#undef MM_OP
    return _mm256_cvtps_pd(_mm256_castps256_ps128(
        _mm256_permutevar8x32_ps(h, _mm256_setr_epi32(0, 4, 2, 6, 0, 0, 0, 0))));
}

/* The columns (bits) whose group g meets dn_piece_small_sub32's condition
   sum_k |C_k d_k S_k| < ymin gfac (ymin the least non-zero |d_k S_k|) in
   every row, by a bound: |C_k| <= 32 * 128 * 127 < 2^19, so the sum is at
   most 2^19 max|d| sum S, and ymin at least min|d| min S (S over the
   blocks with a code, Sinf). A column passes when 2^21 max_r(max|d| /
   min|d|) < min S gfac / sum S: the factor 4 covers the few roundings of
   these doubles. ad: the rows' |d_k|. */
AI int q8_0_fast_cols(const __m256 ad[4], const mm_col *col, size_t g)
{
    const __m256d dmin = rows_minmax(ad, 0), dmax = rows_minmax(ad, 1);
    if (_mm256_movemask_pd(_mm256_cmp_pd(dmin, _mm256_setzero_pd(), _CMP_GT_OQ)) != 15) return 0;
    const __m256d t = _mm256_div_pd(dmax, dmin); /* >= 1, finite */
    __m128d h = _mm_max_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
    h = _mm_max_pd(h, _mm_unpackhi_pd(h, h));
    const __m256d R = _mm256_mul_pd(_mm256_broadcastsd_pd(h), _mm256_set1_pd(0x1p21));
    const size_t k0 = g / 32, gi = g / DN_GROUP;
    __m256d v[4], m[4];
    for (int j = 0; j < 4; j++) {
        const dn_dot_act *a = col[j].a;
        v[j] = _mm256_add_pd(abs_pd(_mm256_loadu_pd(a->S + k0)),
                             abs_pd(_mm256_loadu_pd(a->S + k0 + 4)));
        m[j] = _mm256_min_pd(_mm256_loadu_pd(a->Sinf + k0), _mm256_loadu_pd(a->Sinf + k0 + 4));
    }
    const __m256d h01 = _mm256_hadd_pd(v[0], v[1]), h23 = _mm256_hadd_pd(v[2], v[3]);
    const __m256d sum = _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20),
                                      _mm256_permute2f128_pd(h01, h23, 0x31));
    const __m256d m01 =
        _mm256_min_pd(_mm256_unpacklo_pd(m[0], m[1]), _mm256_unpackhi_pd(m[0], m[1]));
    const __m256d m23 =
        _mm256_min_pd(_mm256_unpacklo_pd(m[2], m[3]), _mm256_unpackhi_pd(m[2], m[3]));
    const __m256d least = _mm256_min_pd(_mm256_permute2f128_pd(m01, m23, 0x20),
                                        _mm256_permute2f128_pd(m01, m23, 0x31));
    const __m256d gf = _mm256_setr_pd(col[0].a->gfac[gi], col[1].a->gfac[gi], col[2].a->gfac[gi],
                                      col[3].a->gfac[gi]);
    /* a column of zero blocks: +inf (an exact zero sum), never NaN */
    const __m256d Q = _mm256_div_pd(_mm256_mul_pd(least, gf), sum);
    return _mm256_movemask_pd(_mm256_cmp_pd(R, Q, _CMP_LT_OQ));
}

AI int q8_0_scales_of(const uint8_t *const blk[4], size_t bb, int G, const mm_col *col, size_t g,
                      mm_q8s *s)
{
    int bad = 0;
    s->fast = 0;
    if (G < 8) { /* the row's last, partial group: small_sub32_4 alone */
        for (int r = 0; r < 4; r++)
            bad |= small_scales(DN_TYPE_Q8_0, blk[r], bb, G, &s->d[r], &s->m[r]);
        for (int r = 0; r < 4; r++) s->dr[r][0] = s->dr[r][1] = _mm256_setzero_pd();
        return bad;
    }
    /* small_scales's values (the same binary16 words, m = 0) from scalar
       loads: its vpgatherdd took 14 % of this product's time (perf, 256
       rows x 64 columns of 2048 in cache, AVX2 table) */
    const __m128i e = _mm_set1_epi16(0x7C00);
    __m128i badw = _mm_setzero_si128();
    __m256 ad[4];
    for (int r = 0; r < 4; r++) {
        uint64_t lo = 0, hi = 0;
        for (int k = 0; k < 4; k++) {
            lo |= (uint64_t)dn_load_u16(blk[r] + k * bb) << (16 * k);
            hi |= (uint64_t)dn_load_u16(blk[r] + (k + 4) * bb) << (16 * k);
        }
        const __m128i w = _mm_set_epi64x((long long)hi, (long long)lo);
        badw = _mm_or_si128(badw, _mm_cmpeq_epi16(_mm_and_si128(w, e), e));
        s->d[r] = _mm256_cvtph_ps(w);
        s->m[r] = _mm256_setzero_ps();
        s->dr[r][0] = _mm256_cvtps_pd(_mm256_castps256_ps128(s->d[r]));
        s->dr[r][1] = _mm256_cvtps_pd(_mm256_extractf128_ps(s->d[r], 1));
        ad[r] = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), s->d[r]);
    }
    if (!_mm_testz_si128(badw, badw)) return 1;
    s->fast = q8_0_fast_cols(ad, col, g);
    return 0;
}

/* Q8_0, column j's four row pieces: dot_avx2.c's small_group. A column
   in s->fast meets the exactness condition in every row (q8_0_fast_cols):
   each row's exact sum sum_k C_k (d_k S_k) in any order, row by row (its
   chunks in lanes, no transpose of C, no per-term |t| and minimum); the
   others (and a partial group) take small_sub32_4's test and sums: either
   way an exact sum or the reference's lane, the same bits. */
AI __m128 q8_0_pieces_of(const __m256i C[4], const mm_q8s *s, int j, const dn_dot_act *a, size_t g,
                         int *need)
{
    const size_t k0 = g / 32;
    if (s->fast >> j & 1) {
        const __m256d S0 = _mm256_loadu_pd(a->S + k0), S1 = _mm256_loadu_pd(a->S + k0 + 4);
        __m256d v[4];
        for (int r = 0; r < 4; r++) {
            const __m256d c0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(C[r]));
            const __m256d c1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256(C[r], 1));
            v[r] = _mm256_fmadd_pd(c1, _mm256_mul_pd(s->dr[r][1], S1),
                                   _mm256_mul_pd(c0, _mm256_mul_pd(s->dr[r][0], S0)));
        }
        const __m256d h01 = _mm256_hadd_pd(v[0], v[1]), h23 = _mm256_hadd_pd(v[2], v[3]);
        const __m256d tot = _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20),
                                          _mm256_permute2f128_pd(h01, h23, 0x31));
        *need = 0;
        return _mm256_cvtpd_ps(_mm256_add_pd(tot, _mm256_setzero_pd())); /* 0 is +0 */
    }
    return small_sub32_4(C, s->d, s->m, a->bs32 + k0, 0, a->S + k0, a->Sinf + k0,
                         a->gfac[g / DN_GROUP], need);
}

#define MM_AI AI
#include "dot_mm_groups.h"

#define MM_NOINLINE __attribute__((noinline))
#define MM_ENTRY_ATTR
#define MM_ENTRY dn_dot_mm_blocked_avx2
#include "dot_mm_loops.h"
