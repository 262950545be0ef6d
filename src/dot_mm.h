/* SPDX-License-Identifier: MIT */
/*
 * dot_mm.h: what the register-blocked matrix products of every ISA share
 * (src/x86/dot_mm_*.c, src/neon/dot_mm_neon.c; their loops are
 * src/dot_mm_run.h): the block of columns and the loops' context.
 */
#ifndef DN_DOT_MM_H
#define DN_DOT_MM_H

#include "dot_kernels.h"

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

#endif
