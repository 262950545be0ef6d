/* SPDX-License-Identifier: MIT */
/*
 * The register-blocked matrix product of prefill on AVX-512 with VNNI:
 * dot_mm_avx2.c's kernel (four rows against four columns, each row's blocks
 * decoded once for the four; the loops are dot_mm_loops.h) with each
 * (row, column)'s integer chunk sums taken 64 elements per instruction as
 * the AVX-512 matrix-vector kernels take them (dot_avx512_decode.h:
 * maddubs + vpdpwssd for Q4_K, Q5_K, Q6_K, vpdpbusd for Q8_0). The sums are
 * the same integers, and every piece is finished by the matrix-vector
 * kernels' functions (dot_avx2_pieces.h) with their exactness checks and
 * fallbacks, so each value is the bit of dn_mat_vec of its column (why:
 * dot_mm_avx2.c's top).
 *
 * Covered as dot_mm_avx2.c; the rest runs dn_dot_mm_tiled over the AVX-512
 * table's matrix-vector kernel.
 */
#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "dot_avx2_decode.h"
#include "dot_avx2_pieces.h"
#include "dot_avx512_decode.h"

#include <immintrin.h>
#include <string.h>

#include "dot_mm_types.h"

/* ---- one row's integer sums against MM_NC columns ------------------------------- */

/* Q4_K, Q5_K, a factored group: k_factored4's sums for row r and each
   column (zero multipliers for a column not factored), M[j] holding the four rows'
   multipliers M_k = sc_k f_k of column j, row r in 128-bit lane r: the
   pairs of chunks 2i, 2i + 1 weighted with vpdpwssd, the two 256-bit
   halves added (k_factored4's lanes and bound). */
AIV void k_factored_cols(dn_type t, const uint8_t *blk, int r, const mm_col *col, size_t g,
                         const __m512i M[MM_NC], __m256i C[MM_NC])
{
    const __m512i lane =
        _mm512_add_epi32(_mm512_set1_epi32(4 * r),
                         _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3));
    __m512i M4[MM_NC], acc[MM_NC];
    for (int j = 0; j < MM_NC; j++) {
        M4[j] = _mm512_permutexvar_epi32(lane, M[j]); /* zero for a column not in fk */
        acc[j] = _mm512_setzero_si512();
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        /* M_2i on the low half, M_2i+1 on the high */
        const __m512i sel =
            _mm512_inserti64x4(_mm512_set1_epi16((short)(4 * i | (4 * i + 1) << 8)),
                               _mm256_set1_epi16((short)((4 * i + 2) | (4 * i + 3) << 8)), 1);
        const __m512i q = k_digits_pair(t, blk, i);
        for (int j = 0; j < MM_NC; j++) {
            __m512i p = _mm512_maddubs_epi16(q, _mm512_loadu_si512(col[j].a->c8 + g + 64 * i));
            acc[j] = _mm512_dpwssd_epi32(acc[j], p, _mm512_shuffle_epi8(M4[j], sel));
        }
    }
    for (int j = 0; j < MM_NC; j++)
        C[j] =
            _mm256_add_epi32(_mm512_castsi512_si256(acc[j]), _mm512_extracti64x4_epi64(acc[j], 1));
}

/* The four rows' scales and mins (k_scales_mins4, row r in 128-bit lane r)
   against column a's factors: M = sc_k f_k (int16, < 2^15) and, as
   doubles, -B / 2^emin = sum_k (m_k f_k) bs32_k per row (k_factored4's
   vpdpwssd and bound). */
AIV __m256d k_factors4(__m512i sm4, const dn_dot_act *a, size_t g, __m512i *M)
{
    const __m512i z = _mm512_setzero_si512();
    const __m512i f = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(a->f16 + g / 32)));
    const __m512i bs = _mm512_broadcast_i32x4(
        _mm_packs_epi32(_mm_loadu_si128((const __m128i *)(a->bs32 + g / 32)),
                        _mm_loadu_si128((const __m128i *)(a->bs32 + g / 32 + 4))));
    *M = _mm512_mullo_epi16(_mm512_unpacklo_epi8(sm4, z), f);
    return lane_sums_pd(
        _mm512_dpwssd_epi32(z, _mm512_mullo_epi16(_mm512_unpackhi_epi8(sm4, z), f), bs));
}

/* Q6_K, one row's block: q6_k_chunks's C for each column, the digits and
   the scale multipliers decoded once. */
AIV void q6_k_cols(const uint8_t *blk, const mm_col *col, size_t g, __m256i C[MM_NC])
{
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
    const __m512i scz = _mm512_castsi256_si512(sc16);
    __m512i V[MM_NC][4];
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) { /* chunks 2p, 2p + 1 */
        const __m512i idx = _mm512_add_epi16(
            _mm512_set1_epi16((short)(4 * p)),
            _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_epi16(0, 0, 0, 0, 0, 0, 0, 0, 1,
                                                                        1, 1, 1, 1, 1, 1, 1)),
                               _mm256_setr_epi16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3),
                               1));
        const __m512i q = q6_digits_pair(blk, p / 2, 2 * (p % 2));
        const __m512i s = _mm512_permutexvar_epi16(idx, scz);
        for (int j = 0; j < MM_NC; j++) {
            __m512i pr = _mm512_maddubs_epi16(q, _mm512_loadu_si512(col[j].a->c8 + g + 64 * p));
            V[j][p] = _mm512_dpwssd_epi32(_mm512_setzero_si512(), pr, s);
        }
    }
    for (int j = 0; j < MM_NC; j++) {
        __m256i zs = _mm256_madd_epi16(sc16, load32(col[j].a->bs16n + g / 16));
        C[j] = _mm256_sub_epi32(reduce4x16(V[j], 0), _mm256_slli_epi32(zs, 5));
    }
}

/* Q8_0, one row's group of eight blocks: q8_0_chunks4's C for each column
   (the same sums, |.| and bound there), the chunks paired (2i, 2i + 1) so
   each column's codes come in one 64-byte load and the row's two blocks
   are gathered once for the four columns; the digits offset by 128 once
   (q ^ 0x80). */
AIV void q8_0_cols(const uint8_t *blk, size_t bb, const mm_col *col, size_t g, __m256i C[MM_NC])
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512i V[MM_NC][4];
    for (int i = 0; i < 4; i++) {
        const __m512i q =
            _mm512_xor_si512(load2x32(blk + 2 * i * bb + 2, blk + (2 * i + 1) * bb + 2), flip);
        for (int j = 0; j < MM_NC; j++)
            V[j][i] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q,
                                          _mm512_loadu_si512(col[j].a->c8 + g + 64 * i));
    }
    for (int j = 0; j < MM_NC; j++)
        C[j] = _mm256_sub_epi32(reduce4x16(V[j], 0),
                                _mm256_slli_epi32(load32(col[j].a->bs32 + g / 32), 7));
}

/* ---- four rows' pieces of a group against MM_NC columns ------------------------ */

/* Q4_K, Q5_K, one column whose group is not factored: dot_avx512.c's
   big_group4 for it (the reference, the factored sums, or the chunk sums
   with the mins and the activation's products P). */
AIV __m128 k_group_one(dn_type t, const uint8_t *const blk[4], const dn_dot_act *a, size_t g,
                       __m256d d, __m256d dm, int *need)
{
    const size_t gi = g / DN_GROUP;
    __m256i C[4], O[4];
    __m128 p;
    if (mm_no_fast(a, gi, &p, need)) return p;
    if (a->fok[gi]) {
        __m512i mb;
        k_factored4(t, blk, a->c8 + g, a->f16 + g / 32, a->bs32 + g / 32, C, &mb);
        const __m256d s = _mm256_set1_pd(a->g2e[gi]);
        return big_sub32_AB(_mm256_mul_pd(rows_total_pd(C), s),
                            _mm256_mul_pd(lane_sums_pd(mb), _mm256_sub_pd(_mm256_setzero_pd(), s)),
                            1, a->glim[gi], d, dm, need);
    }
    for (int r = 0; r < 4; r++) C[r] = k_chunks(t, blk[r], a->c8 + g, &O[r]);
    return mm_chunk_pieces(C, O, a, g, d, dm, need);
}

/* rows_total_pd's values (the sums of each row's eight int32 lanes, exact
   in double in any order: below 2^34) in 512-bit steps. */
AIV __m256d rows_total_512(const __m256i C[4])
{
    const __m512d v0 = _mm512_cvtepi32_pd(C[0]), v1 = _mm512_cvtepi32_pd(C[1]);
    const __m512d v2 = _mm512_cvtepi32_pd(C[2]), v3 = _mm512_cvtepi32_pd(C[3]);
    /* 128-bit lane L of a01: [row 0, row 1] lanes 2L, 2L + 1 added */
    const __m512d a01 = _mm512_add_pd(_mm512_unpacklo_pd(v0, v1), _mm512_unpackhi_pd(v0, v1));
    const __m512d a23 = _mm512_add_pd(_mm512_unpacklo_pd(v2, v3), _mm512_unpackhi_pd(v2, v3));
    /* [rows 0, 1: lanes 0-3 | 4-7 | rows 2, 3: lanes 0-3 | 4-7] */
    const __m512d b = _mm512_add_pd(_mm512_shuffle_f64x2(a01, a23, _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_f64x2(a01, a23, _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512d c = _mm512_add_pd(b, _mm512_shuffle_f64x2(b, b, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm512_castpd512_pd256(_mm512_shuffle_f64x2(c, c, _MM_SHUFFLE(2, 0, 2, 0)));
}

/* big_sub32_AB (dot_avx2_pieces.h) for two columns at once, column j in
   the low four lanes and j + 1 in the high: the same checks, products and
   one rounding per lane (round_madd8). */
AIV void big_sub32_AB2(__m512d A, __m512d B, double glim0, double glim1, __m256d d, __m256d dm,
                       __m128 p[2], int need[2])
{
    const __m512d lim = _mm512_insertf64x4(_mm512_set1_pd(glim0), _mm256_set1_pd(glim1), 1);
    const __m512d d2 = _mm512_insertf64x4(_mm512_castpd256_pd512(d), d, 1);
    const __m512d dm2 = _mm512_insertf64x4(_mm512_castpd256_pd512(dm), dm, 1);
    const __m512d sign = _mm512_set1_pd(-0.0);
    const __mmask8 ok = _mm512_cmp_pd_mask(_mm512_andnot_pd(sign, A), lim, _CMP_LT_OQ) &
                        _mm512_cmp_pd_mask(_mm512_andnot_pd(sign, B), lim, _CMP_LT_OQ);
    const __m256 f = round_madd8(d2, A, _mm512_mul_pd(dm2, B));
    p[0] = _mm256_castps256_ps128(f);
    p[1] = _mm256_extractf128_ps(f, 1);
    need[0] = ~ok & 15;
    need[1] = (~ok >> 4) & 15;
}

/* Q4_K, Q5_K: the pieces p[j] of each column (lanes in need[j] for the
   reference); -1 when a block is unreadable. */
AIV int k_group(dn_type t, const uint8_t *const blk[4], const mm_col *col, size_t g,
                __m128 p[MM_NC], int need[MM_NC])
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
    const __m512i sm4 = k_scales_mins4(blk);
    __m512i M[MM_NC];
    __m256d A[MM_NC], B[MM_NC];
    for (int j = 0; j < MM_NC; j++) {
        M[j] = _mm512_setzero_si512();
        if (fk >> j & 1) B[j] = k_factors4(sm4, col[j].a, g, &M[j]);
    }
    __m256i C[4][MM_NC];
    for (int r = 0; r < 4; r++) k_factored_cols(t, blk[r], r, col, g, M, C[r]);
    for (int j = 0; j < MM_NC; j++) {
        if (!(fk >> j & 1)) continue;
        __m256i Cj[4];
        col_of(C, j, Cj);
        const __m256d s = _mm256_set1_pd(col[j].a->g2e[gi]);
        A[j] = _mm256_mul_pd(rows_total_512(Cj), s);
        B[j] = _mm256_mul_pd(B[j], _mm256_sub_pd(_mm256_setzero_pd(), s));
    }
    for (int j = 0; j < MM_NC; j += 2) { /* two columns a vector where both are factored */
        if ((fk >> j & 3) == 3) {
            big_sub32_AB2(_mm512_insertf64x4(_mm512_castpd256_pd512(A[j]), A[j + 1], 1),
                          _mm512_insertf64x4(_mm512_castpd256_pd512(B[j]), B[j + 1], 1),
                          col[j].a->glim[gi], col[j + 1].a->glim[gi], d, dm, p + j, need + j);
            continue;
        }
        for (int i = j; i < j + 2; i++)
            if (fk >> i & 1)
                p[i] = big_sub32_AB(A[i], B[i], 1, col[i].a->glim[gi], d, dm, &need[i]);
    }
    return 0;
}

/* Q8_0: the four rows' scales of a group of G blocks as small_sub32_z
   takes them (dot_mm_groups.h's q8_0_group); nonzero when one is
   unreadable. Once per group for the four columns. */
typedef struct mm_q8s {
    __m512d dz[4], az[4];
} mm_q8s;

AIV int q8_0_scales_of(const uint8_t *const blk[4], size_t bb, int G, const mm_col *col, size_t g,
                       mm_q8s *s)
{
    (void)col, (void)g;
    __m256 d[4], m[4];
    int bad = 0;
    if (G == 8) {
        for (int r = 0; r < 4; r += 2) {
            const __m512 v = q8_0_scales2(blk[r], blk[r + 1], &bad);
            d[r] = _mm512_castps512_ps256(v);
            d[r + 1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
        }
    } else {
        for (int r = 0; r < 4; r++) bad |= small_scales(DN_TYPE_Q8_0, blk[r], bb, G, &d[r], &m[r]);
    }
    if (!bad) small_scales_z(d, s->dz, s->az);
    return bad;
}

/* Q8_0, one column's four row pieces: dot_avx512.c's q8_0_group4. */
AIV __m128 q8_0_pieces_of(const __m256i C[4], const mm_q8s *s, int j, const dn_dot_act *a, size_t g,
                          int *need)
{
    (void)j;
    return small_sub32_z(C, s->dz, s->az, a->S + g / 32, a->Sinf + g / 32, a->gfac[g / DN_GROUP],
                         need);
}

#define MM_AI AIV
#include "dot_mm_groups.h"

#define MM_NOINLINE __attribute__((noinline, target("avx512vnni")))
#define MM_ENTRY_ATTR VNNI
#define MM_ENTRY dn_dot_mm_blocked_avx512
#include "dot_mm_loops.h"
