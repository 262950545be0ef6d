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

#endif
