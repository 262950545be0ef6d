/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_types.h: what the register-blocked matrix product's group
 * functions and loops share (src/x86/dot_mm_avx2.c, dot_mm_avx512.c,
 * dot_mm_loops.h).
 */
#ifndef DN_DOT_MM_TYPES_H
#define DN_DOT_MM_TYPES_H

#include "../dot_kernels.h"

/* Columns per register block: the four columns' sums of one row (plus, for
   Q4_K, their int16 multipliers) stay in registers through a group's eight
   chunks, the row's digits decoded once for the four. */
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
