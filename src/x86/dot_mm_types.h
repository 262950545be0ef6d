/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_types.h: what the x86 register-blocked matrix product's group
 * functions and loops share (src/x86/dot_mm_avx2.c, dot_mm_avx512.c,
 * dot_mm_groups.h, dot_mm_loops.h) besides src/dot_mm.h.
 */
#ifndef DN_DOT_MM_TYPES_H
#define DN_DOT_MM_TYPES_H

#include "../dot_kernels.h"
#include "../dot_mm.h"
#include "dot_avx2_pieces.h"

#include <immintrin.h>

/* What the group functions of both ISAs share (SSE/AVX only, so they
   inline into either ISA's functions). */
#define MM_SHARED static inline __attribute__((always_inline))

/* Column j of four rows' C vectors. */
MM_SHARED void col_of(const __m256i C[4][MM_NC], int j, __m256i out[4])
{
    for (int r = 0; r < 4; r++) out[r] = C[r][j];
}

/* 1 where column a's group gi has no fast path (its activation exponents
   spread past the exactness bound): a zero piece with every row's lane
   left to the reference. */
MM_SHARED int mm_no_fast(const dn_dot_act *a, size_t gi, __m128 *p, int *need)
{
    if (a->gok[gi]) return 0;
    *p = _mm_setzero_ps();
    *need = 15;
    return 1;
}

/* Q4_K, Q5_K, a group that does not factor: four rows' pieces from their
   chunk sums C and mins O with the activation's S and products P (the
   matrix-vector kernels' unfactored path). */
MM_SHARED __m128 mm_chunk_pieces(const __m256i C[4], const __m256i O[4], const dn_dot_act *a,
                                 size_t g, __m256d d, __m256d dm, int *need)
{
    const double *S = a->S + g / 32, *P = a->P + g / 32;
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    __m256d P0 = _mm256_loadu_pd(P), P1 = _mm256_loadu_pd(P + 4);
    __m256d B = _mm256_sub_pd(_mm256_setzero_pd(), rows_dot_S(O, P0, P1));
    return big_sub32_AB(rows_dot_S(C, S0, S1), B, 1, a->glim[g / DN_GROUP], d, dm, need);
}

#endif
