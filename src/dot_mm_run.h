/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_run.h: the loops of the register-blocked matrix products above
 * their batch of four rows against MM_NC columns: the blocks of columns,
 * the row batches, the fallbacks, one function per format, the coverage
 * test and the table's entry. Included once by src/x86/dot_mm_loops.h (for
 * dot_mm_avx2.c and dot_mm_avx512.c) and by src/neon/dot_mm_neon.c, after
 * defining:
 *
 *   MM_AI, MM_NOINLINE, MM_ENTRY_ATTR  the function attributes of its ISA
 *   MM_ENTRY                           the name of the table's entry
 *   mm_batch(m, t, row, col, v, tiny)  four rows (pointers may repeat)
 *       against the MM_NC columns col (entries may repeat): v[j][r] the
 *       rows' add chains, bit r of tiny[j] where row r met a tiny piece;
 *       -1 when a block is unreadable, else 0
 *
 * Why the loops keep the reference's bits and statuses:
 * src/x86/dot_mm_avx2.c's top. Covered: Q4_K, Q5_K, Q6_K and Q8_0 under
 * Sub32 with narrow codes (one word), two columns or more and every
 * column's side usable; everything else runs dn_dot_mm_tiled over the
 * table's matrix-vector kernel.
 */
#ifndef DN_DOT_MM_RUN_H
#define DN_DOT_MM_RUN_H

#include "dot_kernels.h"
#include "dot_mm.h"
#include "dot_shared.h"

/* Columns [j0, j0 + MM_NC) ∩ [j0, b1) of rows [r, r + count): their values
   at out[(j - j0) ldo + row]. On an unreadable block the reference runs
   column j0 from row r on and reports it (the caller's first block of
   columns: see the top of this file). */
MM_AI dn_status mm_block(const dn_act *x, const mm_ctx *m, dn_type t, const uint8_t *const rp[4],
                         size_t r, size_t count, size_t j0, size_t b1, size_t r1, float *out,
                         size_t ldo, size_t *bad)
{
    const size_t nc = b1 - j0 < MM_NC ? b1 - j0 : MM_NC;
    mm_col col[MM_NC] = {{NULL, NULL}}; /* each set below (mm_covers checked the views) */
    for (size_t j = 0; j < MM_NC; j++)  /* a short block repeats its first column */
        (void)dn_act_view(x, j0 + (j < nc ? j : 0), t, &col[j].act, &col[j].a);
    float v[MM_NC][4];
    int tiny[MM_NC];
    if (mm_batch(m, t, rp, col, v, tiny) < 0)
        return dn_ref_rows_pieces(t, m->w, m->rows, m->n, col[0].act, DN_ACT_SUB32, r, r1, out,
                                  bad);
    for (size_t j = 0; j < nc; j++) {
        float *o = out + j * ldo;
        for (size_t k = 0; k < count; k++) {
            if (tiny[j] >> k & 1) { /* the chain must flush: the reference redoes the row */
                dn_status st = dn_ref_rows_pieces(t, m->w, m->rows, m->n, col[j].act, DN_ACT_SUB32,
                                                  r + k, r + k + 1, o, bad);
                if (st != DN_OK) return st;
            } else {
                o[r + k] = dn_chain_result(v[j][k]);
            }
        }
    }
    return DN_OK;
}

/* Blocks of columns of about DN_DOT_MM_COLS activation bytes (kept in L2
   while every row runs over them); within a block, batches of four rows,
   each against every MM_NC columns of the block in turn (the batch's
   blocks stay in L1 from the first to the last). */
MM_AI dn_status mm_run(const dn_act *x, size_t c0, size_t c1, dn_type t, const uint8_t *w,
                       size_t rows, size_t r0, size_t r1, float *out, size_t ldo, size_t *bad)
{
    const mm_ctx m = {t, w, rows, x->n, dn_bb(t), x->row_bytes[t]};
    size_t cb = DN_DOT_MM_COLS / (x->n + x->n / 2) / MM_NC * MM_NC;
    if (cb < MM_NC) cb = MM_NC;
    for (size_t b0 = c0; b0 < c1; b0 += cb) {
        const size_t b1 = c1 - b0 > cb ? b0 + cb : c1;
        for (size_t r = r0; r < r1; r += 4) {
            const size_t count = r1 - r < 4 ? r1 - r : 4;
            const uint8_t *rp[4];
            for (size_t k = 0; k < 4; k++) rp[k] = w + (r + (k < count ? k : 0)) * m.row_bytes;
            for (size_t j0 = b0; j0 < b1; j0 += MM_NC) {
                dn_status st =
                    mm_block(x, &m, t, rp, r, count, j0, b1, r1, out + (j0 - c0) * ldo, ldo, bad);
                if (st != DN_OK) return st;
            }
        }
    }
    return DN_OK;
}

/* One function per format, the format a constant (as dot_avx2.c). */

static MM_NOINLINE dn_status mm_q4_k(const dn_act *x, size_t c0, size_t c1, const uint8_t *w,
                                     size_t rows, size_t r0, size_t r1, float *out, size_t ldo,
                                     size_t *bad)
{
    return mm_run(x, c0, c1, DN_TYPE_Q4_K, w, rows, r0, r1, out, ldo, bad);
}
static MM_NOINLINE dn_status mm_q5_k(const dn_act *x, size_t c0, size_t c1, const uint8_t *w,
                                     size_t rows, size_t r0, size_t r1, float *out, size_t ldo,
                                     size_t *bad)
{
    return mm_run(x, c0, c1, DN_TYPE_Q5_K, w, rows, r0, r1, out, ldo, bad);
}
static MM_NOINLINE dn_status mm_q6_k(const dn_act *x, size_t c0, size_t c1, const uint8_t *w,
                                     size_t rows, size_t r0, size_t r1, float *out, size_t ldo,
                                     size_t *bad)
{
    return mm_run(x, c0, c1, DN_TYPE_Q6_K, w, rows, r0, r1, out, ldo, bad);
}
static MM_NOINLINE dn_status mm_q8_0(const dn_act *x, size_t c0, size_t c1, const uint8_t *w,
                                     size_t rows, size_t r0, size_t r1, float *out, size_t ldo,
                                     size_t *bad)
{
    return mm_run(x, c0, c1, DN_TYPE_Q8_0, w, rows, r0, r1, out, ldo, bad);
}

/* 1 when the blocked kernels cover the product: a covered format, Sub32,
   two columns or more, every column's side narrow and usable. */
static int mm_covers(const dn_act *x, size_t c0, size_t c1, dn_type type)
{
    if (c1 - c0 < 2) return 0;
    if (type != DN_TYPE_Q4_K && type != DN_TYPE_Q5_K && type != DN_TYPE_Q6_K &&
        type != DN_TYPE_Q8_0)
        return 0;
    return dn_mm_columns_narrow(x, c0, c1, type);
}

MM_ENTRY_ATTR dn_status MM_ENTRY(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                                 dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                                 float *out, size_t ldo, size_t *bad)
{
    if (!mm_covers(x, c0, c1, type))
        return dn_dot_mm_tiled(f, x, c0, c1, type, w, rows, r0, r1, out, ldo, bad);
    switch (type) {
    case DN_TYPE_Q4_K: return mm_q4_k(x, c0, c1, w, rows, r0, r1, out, ldo, bad);
    case DN_TYPE_Q5_K: return mm_q5_k(x, c0, c1, w, rows, r0, r1, out, ldo, bad);
    case DN_TYPE_Q6_K: return mm_q6_k(x, c0, c1, w, rows, r0, r1, out, ldo, bad);
    default: return mm_q8_0(x, c0, c1, w, rows, r0, r1, out, ldo, bad);
    }
}

#endif
