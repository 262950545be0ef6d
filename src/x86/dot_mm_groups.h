/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_groups.h: the group steps of the register-blocked matrix product
 * that read the same on every x86 table: Q6_K's and Q8_0's four rows'
 * pieces of a group against MM_NC columns, and each column's finish. Each
 * of src/x86/dot_mm_avx2.c and dot_mm_avx512.c includes it once, after
 * defining, with its ISA's instructions:
 *
 *   MM_AI                       its function attribute
 *   q6_k_cols(blk, col, g, C)   one Q6_K row block's C for each column
 *   q8_0_cols(blk, bb, col, g, C)
 *                               one Q8_0 row's eight blocks' C per column
 *   mm_q8s, q8_0_scales_of(blk, bb, G, col, g, &s)
 *                               the four rows' Q8_0 scales of a group (and
 *                               what its pieces need of the columns col),
 *                               as its pieces take them; nonzero when a
 *                               scale is unreadable
 *   q8_0_pieces_of(C, &s, j, a, g, &need)
 *                               small_sub32_4's pieces (its sums, checks
 *                               and lanes) of column j
 *   k_group(t, blk, col, g, p, need)
 *                               Q4_K's and Q5_K's pieces
 *
 * and defines mm_group for dot_mm_loops.h. Why the pieces are the
 * reference's bits: dot_mm_avx2.c's top.
 */
#ifndef DN_DOT_MM_GROUPS_H
#define DN_DOT_MM_GROUPS_H

#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "dot_avx2_pieces.h"

#include <immintrin.h>

#include "dot_mm_types.h"

/* Each column's pieces from the four rows' sums C[r][j] of a Q6_K block
   (big_sub32_4, no offsets, with the rows' scales d) or a Q8_0 group
   (q8_0_pieces_of with the rows' scales qs). */
MM_AI void mm_finish(dn_type t, const __m256i C[4][MM_NC], const mm_col *col, size_t g, __m256d d,
                     const mm_q8s *qs, __m128 p[MM_NC], int need[MM_NC])
{
    const size_t gi = g / DN_GROUP;
    const __m256i O[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                          _mm256_setzero_si256()};
    for (int j = 0; j < MM_NC; j++) {
        const dn_dot_act *a = col[j].a;
        if (mm_no_fast(a, gi, &p[j], &need[j])) continue;
        __m256i Cj[4];
        col_of(C, j, Cj);
        if (t == DN_TYPE_Q6_K)
            p[j] =
                big_sub32_4(Cj, O, 0, a->S + g / 32, a->glim[gi], d, _mm256_setzero_pd(), &need[j]);
        else
            p[j] = q8_0_pieces_of(Cj, qs, j, a, g, &need[j]);
    }
}

/* Q6_K: the pieces p[j] of each column (lanes in need[j] for the
   reference); -1 when a block is unreadable. The matrix-vector kernels'
   big_group_narrow / big_group4 for each column. */
MM_AI int q6_k_group(const uint8_t *const blk[4], const mm_col *col, size_t g, __m128 p[MM_NC],
                     int need[MM_NC])
{
    int bad = 0;
    const __m256d d = scales4(blk, dn_d_at(DN_TYPE_Q6_K), &bad);
    if (bad) return -1;
    __m256i C[4][MM_NC];
    for (int r = 0; r < 4; r++) q6_k_cols(blk[r], col, g, C[r]);
    mm_finish(DN_TYPE_Q6_K, C, col, g, d, NULL, p, need);
    return 0;
}

/* Q8_0, a group of G blocks: as q6_k_group (the matrix-vector kernels'
   small_group / q8_0_group4 for each column). */
MM_AI int q8_0_group(size_t bb, const uint8_t *const blk[4], const mm_col *col, size_t g, int G,
                     __m128 p[MM_NC], int need[MM_NC])
{
    const dn_type t = DN_TYPE_Q8_0;
    mm_q8s qs;
    if (q8_0_scales_of(blk, bb, G, col, g, &qs)) return -1;
    __m256i C[4][MM_NC];
    for (int r = 0; r < 4; r++) {
        if (G == 8)
            q8_0_cols(blk[r], bb, col, g, C[r]);
        else /* the row's last, partial group */
            for (int j = 0; j < MM_NC; j++)
                C[r][j] = small_narrow(t, blk[r], bb, G, col[j].a->c8 + g, NULL, 0);
    }
    mm_finish(t, C, col, g, _mm256_setzero_pd(), &qs, p, need);
    return 0;
}

/* The group functions by format (dot_mm_loops.h's mm_group). */
MM_AI int mm_group(dn_type t, size_t bb, const uint8_t *const blk[4], const mm_col *col, size_t g,
                   int G, __m128 p[MM_NC], int need[MM_NC])
{
    if (t == DN_TYPE_Q8_0) return q8_0_group(bb, blk, col, g, G, p, need);
    if (t == DN_TYPE_Q6_K) return q6_k_group(blk, col, g, p, need);
    return k_group(t, blk, col, g, p, need);
}

#endif
