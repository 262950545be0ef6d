/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_loops.h: the x86 register-blocked product's batch loop (four rows
 * against MM_NC columns over every group: prefetch, the reference's lanes,
 * the tiny-piece test, the add chains) and, through src/dot_mm_run.h, the
 * loops above it and the table's entry. Included once by
 * src/x86/dot_mm_avx2.c and src/x86/dot_mm_avx512.c, after defining:
 *
 *   MM_AI, MM_NOINLINE, MM_ENTRY_ATTR  the function attributes of its ISA
 *   MM_ENTRY                           the name of the table's entry
 *   mm_group(t, bb, blk, col, g, G, p, need)
 *       four rows' pieces of the group at g against the MM_NC columns col:
 *       p[j] with the lanes need[j] left to the reference; -1 when a block
 *       is unreadable, else 0 (dot_mm_groups.h)
 *
 * Why the loops keep the reference's bits and statuses: dot_mm_avx2.c's
 * top.
 */
#ifndef DN_DOT_MM_LOOPS_H
#define DN_DOT_MM_LOOPS_H

#include "../dot_kernels.h"
#include "../dot_shared.h"

#include <immintrin.h>

#include "dot_mm_types.h"

/* ---- the loops ---------------------------------------------------------------------- */

#ifndef DN_DOT_PREFETCH
#define DN_DOT_PREFETCH 512 /* bytes ahead in each row's stream (as dot_avx2.c) */
#endif

/* Four rows (pointers may repeat) against MM_NC columns (entries may
   repeat): v[j][r] the rows' add chains, tiny[j] the rows that met a tiny
   piece. -1 when a block is unreadable, else 0. */
MM_AI int mm_batch(const mm_ctx *m, dn_type t, const uint8_t *const row[4], const mm_col *col,
                   float v[MM_NC][4], int tiny[MM_NC])
{
    const int big = dn_big(t);
    const size_t n = m->n, bb = m->bb, gbytes = big ? bb : 8 * bb;
    __m128 acc[MM_NC];
    for (int j = 0; j < MM_NC; j++) acc[j] = _mm_setzero_ps(), tiny[j] = 0;
    for (size_t g = 0; g < n; g += DN_GROUP) {
        const size_t gi = g / DN_GROUP;
        const int G = (int)((n - g < DN_GROUP ? n - g : DN_GROUP) / 32);
        const uint8_t *blk[4];
        for (int r = 0; r < 4; r++) {
            blk[r] = row[r] + gi * gbytes;
            /* as dot_avx2.c: each row ahead into L1, the next batch into L2
               (lines in cache already, for every block of columns after the
               first, cost a load slot each) */
            for (size_t o = 0; o < gbytes + 63; o += 64) {
                _mm_prefetch((const char *)blk[r] + DN_DOT_PREFETCH + o, _MM_HINT_T0);
                _mm_prefetch((const char *)blk[r] + 4 * m->row_bytes + o, _MM_HINT_T1);
            }
        }
        __m128 p[MM_NC];
        int need[MM_NC] = {0};
        const int st = mm_group(t, bb, blk, col, g, G, p, need);
        if (st < 0) return -1;
        for (int j = 0; j < MM_NC; j++) {
            if (need[j]) {
                const size_t to = big ? g + 256 : g + 32 * (size_t)G;
                float f[4];
                _mm_storeu_ps(f, p[j]);
                for (int r = 0; r < 4; r++)
                    if (need[j] >> r & 1)
                        f[r] = dn_dot_piece_of_bytes(t, blk[r], col[j].act, DN_ACT_SUB32, g, to);
                p[j] = _mm_loadu_ps(f);
            }
            tiny[j] |= _mm_movemask_ps(
                _mm_castsi128_ps(_mm256_castsi256_si128(tiny8(_mm256_castps128_ps256(p[j])))));
            acc[j] = _mm_add_ps(acc[j], p[j]);
        }
    }
    for (int j = 0; j < MM_NC; j++) _mm_storeu_ps(v[j], acc[j]);
    return 0;
}

#include "../dot_mm_run.h"

#endif
