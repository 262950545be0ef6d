/* SPDX-License-Identifier: MIT */
/*
 * decodenum/dot.h: the f32 the engine produces for a matrix row times an
 * activation row, exactly summed and rounded where the scaling says.
 *
 * A coded row (decodenum/blocks.h) has weights a * coef + b * offs per
 * segment; a quantized activation row (decodenum/quant.h) has codes worth
 * code * m * 2^e per block. Their dot product is a sum of integer dots:
 *
 *   DN_ACT_SUB32: within each group of DN_GROUP (256) elements, for every
 *   sub-block of 32 elements, the terms
 *       (a.sig * m) * sum(coef * code)   at 2^(a.exp + e)
 *       (b.sig * m) * sum(offs * code)   at 2^(b.exp + e)
 *   are summed exactly (dn_exact_sum, DN_SUM_WINDOW places) and the group is
 *   rounded to f32 once; a row's last group may be short.
 *
 *   DN_ACT_PER_BLOCK: for every weight block (its activation block is the
 *   same elements), the same two terms summed exactly and rounded once.
 *
 * The rounded pieces of a row are added in order with dn_fadd, from +0.
 * Integer sums are exact in 64 bits: |sum| <= 256 * 4096 * 32767 < 2^35,
 * and the term's integer |a.sig * m * sum| < 2^11 * 2^8 * 2^35 = 2^54.
 */
#ifndef DECODENUM_DOT_H
#define DECODENUM_DOT_H

#include "decodenum/blocks.h"
#include "decodenum/pool.h"
#include "decodenum/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *out = row . act as above. The row's segments and the activation's blocks
   must align: Sub32 needs act->block == 32 and segments of whole multiples
   of 32; per block needs act->block equal to every segment's length, at
   most DN_GROUP (a weight block: 32 or 256).
   DN_ERR_INVALID_ARGUMENT otherwise (or for NULLs, row->n != act->n). O(n). */
DN_API dn_status dn_dot(const dn_coded_row *row, const dn_act_row *act, dn_act_scaling scaling,
                        float *out);

/* out[r] = row r of a `type` matrix (rows x n, rows stored one after another
   as ggml stores them) . act, for r in [row_begin, row_end), on the calling
   thread. DN_ERR_UNREADABLE_BLOCK with *bad (if not NULL) = r * (n / block)
   + the block's index in its row, for the first unreadable block met; other
   errors as dn_read_row and dn_dot (n > UINT32_MAX, or a matrix or output
   whose size in bytes does not fit size_t: DN_ERR_INVALID_ARGUMENT, before
   anything is allocated). Working memory: 4n bytes. No alignment is
   required: w may start at any byte, the other arrays need only their
   element types' alignment. */
DN_API dn_status dn_mat_vec_rows(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                 const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                                 size_t row_end, float *out, size_t *bad);

/* dn_mat_vec_rows over all rows, split over the pool (NULL: the calling
   thread). The bits never depend on the pool. */
DN_API dn_status dn_mat_vec(dn_type type, const uint8_t *w, size_t rows, size_t n,
                            const dn_act_row *act, dn_act_scaling scaling, float *out,
                            dn_pool *pool, size_t *bad);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_DOT_H */
