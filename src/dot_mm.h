/* SPDX-License-Identifier: MIT */
/*
 * dot_mm.h: what the register-blocked matrix products of every ISA share
 * (src/x86/dot_mm_*.c, src/neon/dot_mm_neon.c; their loops are
 * src/dot_mm_run.h): the block of columns and the loops' context.
 */
#ifndef DN_DOT_MM_H
#define DN_DOT_MM_H

#include "dot_kernels.h"
#include "dot_shared.h"

/* Columns per register block: the four columns' sums of one row (plus, for
   Q4_K on x86, their int16 multipliers) stay in registers through a
   group's chunks, the row's digits decoded once for the four. */
#define MM_NC 4

/* One column of a block: its quantized row and prepared side. */
typedef struct mm_col {
    const dn_act_row *act;
    const dn_dot_act *a;
} mm_col;

/* What the batch loop reads. */
typedef struct mm_ctx {
    dn_type type;
    const uint8_t *w;
    size_t rows, n, bb, row_bytes;
} mm_ctx;

/* 1 when every column of [c0, c1) has a usable, narrow Sub32 side for
   type: what the blocked and the rows-in-the-lanes products need beside
   their own formats and column counts. */
static inline int dn_mm_columns_narrow(const dn_act *x, size_t c0, size_t c1, dn_type type)
{
    if (x->scaling != DN_ACT_SUB32) return 0;
    for (size_t c = c0; c < c1; c++) {
        const dn_act_row *row;
        const dn_dot_act *a;
        if (!dn_act_view(x, c, type, &row, &a) || !a->usable || !a->narrow) return 0;
    }
    return 1;
}

/* A lanes kernel's outputs of rows r .. r + count - 1 for one column
   (o: its output column): each lane's chain result, or where bit k of
   tiny says row r + k's chain must flush, the reference's row. */
static inline dn_status dn_mm_lanes_store(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                          const dn_act_row *act, const float *acc, uint32_t tiny,
                                          int count, size_t r, float *o, size_t *bad)
{
    for (int k = 0; k < count; k++) {
        if (tiny >> k & 1) {
            dn_status st =
                dn_ref_rows_pieces(type, w, rows, n, act, DN_ACT_SUB32, r + k, r + k + 1, o, bad);
            if (st != DN_OK) return st;
        } else {
            o[r + k] = dn_chain_result(acc[k]);
        }
    }
    return DN_OK;
}

#endif
