/* SPDX-License-Identifier: MIT */
/*
 * decodenum/repack.h: quantized weight matrices laid out for the products,
 * made once when an engine loads a model.
 *
 * A repacked matrix holds the same bytes as the plain one (rows of blocks,
 * as ggml stores them), reordered so that DN_REPACK_ROWS consecutive rows'
 * blocks of each group of DN_GROUP (256) elements lie side by side:
 *
 *   row group q (rows 4q .. 4q + 3), chunk j (elements [256 j, 256 j + 256)):
 *     row 4q's bytes of chunk j, row 4q + 1's, row 4q + 2's, row 4q + 3's
 *
 * with the row groups one after another and, inside a group, its chunks in
 * order (a row's last chunk may be short: n a multiple of 32, not 256, for
 * the 32-element formats). The kernels read one stream of weights and feed
 * each activation load to four rows' integer dots. The row count is padded
 * to a whole number of row groups with zero bytes (a zero block is readable
 * and its rows are never written).
 *
 * Memory: dn_repack_size's bytes, ceil(rows / 4) * 4 * the row's bytes: at
 * most three rows more than the plain matrix. The plain matrix may be freed
 * (or unmapped) once repacked; dn_repack_unpack gives it back byte for byte.
 *
 * The products have the bits, statuses and *bad of the dn_act products of
 * decodenum/dot.h on the plain matrix, for every row, ISA, scaling and word
 * count: they compute the same pieces from the same bytes.
 */
#ifndef DECODENUM_REPACK_H
#define DECODENUM_REPACK_H

#include "decodenum/dot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rows a repacked group interleaves. Part of the layout. */
#define DN_REPACK_ROWS 8

/* *bytes = the size of a repacked `type` matrix of rows x n: ceil(rows / 4)
   * 4 * (n / block elements) * block bytes. type: a quantized format the
   dn_act products serve (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K .. Q6_K,
   IQ4_NL, IQ4_XS); n a positive multiple of its block elements, at most
   UINT32_MAX; rows >= 1. DN_ERR_UNSUPPORTED_TYPE for another type;
   DN_ERR_INVALID_ARGUMENT for bad sizes, a NULL bytes, or a size that does
   not fit size_t. O(1). */
DN_API dn_status dn_repack_size(dn_type type, size_t rows, size_t n, size_t *bytes);

/* Repacks the plain matrix w (rows x n of `type`, rows one after another)
   into dst (`bytes` >= dn_repack_size's; any alignment; w and dst must not
   overlap). Copies bytes only: no block is decoded, so every block,
   readable or not, is carried over (a product reports an unreadable one as
   on the plain matrix). Statuses as dn_repack_size, and
   DN_ERR_INVALID_ARGUMENT for NULLs or too few bytes. Allocates nothing.
   O(rows n). */
DN_API dn_status dn_repack(dn_type type, const uint8_t *w, size_t rows, size_t n, void *dst,
                           size_t bytes);

/* The inverse: the plain matrix back from a repacked one into w (rows x n
   of `type`, `bytes` >= rows times the row's bytes; no overlap). Statuses as
   dn_repack. Allocates nothing. O(rows n). */
DN_API dn_status dn_repack_unpack(dn_type type, const void *packed, size_t rows, size_t n,
                                  uint8_t *w, size_t bytes);

/* out[r] = row r of the repacked `type` matrix (rows x act's n) . column col
   of act, for r in [row_begin, row_end), on the calling thread: the bits,
   status and *bad of dn_act_mat_vec_rows on the plain matrix (*bad counts
   blocks as in the plain row: r * (n / block) + the block's index in its
   row). Statuses as the dn_act products (decodenum/dot.h). Any row range
   (a range that starts or ends inside a row group computes the group's
   four rows and writes its own). No alignment needed. No allocation on
   x86 (AVX2, AVX-512 and the scalar reference have repacked row loops); on
   an ISA without them (NEON for now) the rows are unpacked a tile at a
   time and run by its in-place kernels: one malloc of about 64 KiB (or
   four rows) per call, DN_ERR_OUT_OF_MEMORY when it fails.
   O((row_end - row_begin) n). Any number of threads may call it at once
   with the same act and matrix (each its own rows). */
DN_API dn_status dn_repacked_mat_vec_rows(const dn_act *act, size_t col, dn_type type,
                                          const void *packed, size_t rows, size_t row_begin,
                                          size_t row_end, float *out, size_t *bad);

/* dn_repacked_mat_vec_rows over all rows, split over the pool (NULL: the
   calling thread) in whole row groups. The bits never depend on the pool.
   Bookkeeping on the stack. */
DN_API dn_status dn_repacked_mat_vec(const dn_act *act, size_t col, dn_type type,
                                     const void *packed, size_t rows, float *out, dn_pool *pool,
                                     size_t *bad);

/* The quantized matrix product on a repacked matrix (prefill): out[c * rows
   + r] = row r . column c of act, for r in [row_begin, row_end) and c in
   [col_begin, col_end): the bits of dn_act_mat_mul_rows on the plain
   matrix. With more than one column, each tile of about 64 KiB of rows is
   unpacked into working memory and run by the in-place product's blocked
   kernels, every column over it: one malloc of at most the tile's bytes
   per call, DN_ERR_OUT_OF_MEMORY when it fails. out holds act's cols x rows
   floats. */
DN_API dn_status dn_repacked_mat_mul_rows(const dn_act *act, size_t col_begin, size_t col_end,
                                          dn_type type, const void *packed, size_t rows,
                                          size_t row_begin, size_t row_end, float *out,
                                          size_t *bad);

/* dn_repacked_mat_mul_rows over every row and column, split over the pool
   by whole row groups (NULL: the calling thread). The bits never depend on
   the pool. One working tile per task. */
DN_API dn_status dn_repacked_mat_mul(const dn_act *act, dn_type type, const void *packed,
                                     size_t rows, float *out, dn_pool *pool, size_t *bad);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_REPACK_H */
