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
   DN_ERR_INVALID_ARGUMENT otherwise (or for NULLs, row->n != act->n, a
   scaling other than the two). Allocates nothing; O(n). */
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
   element types' alignment. DN_ERR_OUT_OF_MEMORY when the working memory
   (the 4n bytes, and the activation side the kernels prepare per call:
   about 6n bytes) cannot be allocated. dn_act_mat_vec_rows (below) is the
   form that prepares the activation once and allocates nothing. */
DN_API dn_status dn_mat_vec_rows(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                 const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                                 size_t row_end, float *out, size_t *bad);

/* dn_mat_vec_rows over all rows, split over the pool (NULL: the calling
   thread). The bits never depend on the pool. Statuses as dn_mat_vec_rows;
   DN_ERR_OUT_OF_MEMORY also when the tasks' bookkeeping cannot be
   allocated. */
DN_API dn_status dn_mat_vec(dn_type type, const uint8_t *w, size_t rows, size_t n,
                            const dn_act_row *act, dn_act_scaling scaling, float *out,
                            dn_pool *pool, size_t *bad);

/* ---- prepared activations ------------------------------------------------------

   A dn_act holds `cols` activation columns of n elements, each quantized
   once under one scaling and word count (decodenum/quant.h) for every
   weight block size it can meet, with the activation side of the products
   prepared once: under DN_ACT_SUB32 one quantization per 32 elements serves
   every format; under DN_ACT_PER_BLOCK a column is quantized per 32 and,
   when n is a whole number of 256, per 256 as well, so one dn_act serves a
   Q8_0 and a Q4_K matrix. A product with column c has the bits of
   dn_mat_vec with that column quantized by dn_quantize (Sub32) or
   dn_quantize_blocks(x, n, the format's block) (per block), same words.

   Memory: the caller's (dn_act_size, dn_act_prepare) or the library's
   (dn_act_create, one malloc, dn_act_destroy). The products allocate
   nothing (a pooled product's bookkeeping is on the stack). A prepared dn_act is read-only: any
   number of threads may run products with it at once; it must outlive
   them. Not relocatable: its memory must stay where it was prepared. */
typedef struct dn_act dn_act;

/* *bytes = the memory dn_act_prepare needs for `cols` columns of n
   elements (n a positive multiple of 32, at most UINT32_MAX; cols >= 1)
   under scaling and words; any alignment does. About 10 n bytes a column
   under Sub32, 14 n per block (both block sizes). DN_ERR_INVALID_ARGUMENT
   for bad arguments or a size that does not fit size_t. O(1). */
DN_API dn_status dn_act_size(size_t n, size_t cols, dn_act_scaling scaling, dn_words words,
                             size_t *bytes);

/* Quantizes and prepares x (cols columns of n floats, column c at
   x + c * n) in mem (`bytes` >= dn_act_size's; any alignment; the dn_act
   lives in it, *act points into it, nothing else is kept or allocated).
   DN_ERR_INVALID_ARGUMENT as dn_act_size, or for NULLs or too few bytes;
   DN_ERR_NON_FINITE with *bad (if not NULL) = c * n + i of the first
   infinite or NaN element (column by column). *act is NULL on an error.
   O(n cols). */
DN_API dn_status dn_act_prepare(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                                dn_words words, void *mem, size_t bytes, dn_act **act, size_t *bad);

/* dn_act_prepare in one malloc of dn_act_size bytes, owned by *act until
   dn_act_destroy. DN_ERR_OUT_OF_MEMORY when the malloc fails; else as
   dn_act_prepare. */
DN_API dn_status dn_act_create(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                               dn_words words, dn_act **act, size_t *bad);

/* dn_act_prepare for the formats types[0 .. type_count) only (a Q4_K_M
   model: {DN_TYPE_Q4_K, DN_TYPE_Q6_K}): the same memory (dn_act_size),
   quantization and checks, and for each named format exactly the bits of
   dn_act_prepare's activation; only the work of the others is skipped.
   Under DN_ACT_SUB32 the skipped work is the group facts of the formats'
   slots (docs/dot.md: 7 slots; the six 32-element formats share one, each
   256-element format has its own); under DN_ACT_PER_BLOCK a block size
   (32 or 256) no named format uses is not quantized. A product with a
   format not named returns DN_ERR_INVALID_ARGUMENT and writes nothing,
   even one whose slot a named format filled (naming Q8_0 builds the slot
   Q4_0 reads, yet a Q4_0 product is refused; Q4_K and Q5_K have slots of
   their own): what is served is what the call names. Repeats are allowed.
   Memory, threads and the dn_act's life as dn_act_prepare's. Statuses, in the order checked:
   DN_ERR_INVALID_ARGUMENT for act NULL, or n, cols, scaling, words as
   dn_act_size refuses them, or types NULL or type_count 0;
   DN_ERR_UNSUPPORTED_TYPE when a named type is not a quantized format the
   block readers read (F32, F16, BF16, a value no dn_type has);
   DN_ERR_INVALID_ARGUMENT when n is not a whole number of a named format's
   block (Q4_K etc. need n a multiple of 256); then as dn_act_prepare
   (x or mem NULL, too few bytes: DN_ERR_INVALID_ARGUMENT;
   DN_ERR_NON_FINITE with *bad). *act is NULL on an error. O(n cols):
   {Q4_K, Q6_K} costs about 0.8 of dn_act_prepare under Sub32 and 0.45-0.5
   per block (n = 2048 .. 16384, docs/dot.md). */
DN_API dn_status dn_act_prepare_for(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                                    dn_words words, const dn_type *types, size_t type_count,
                                    void *mem, size_t bytes, dn_act **act, size_t *bad);

/* dn_act_prepare_for in one malloc of dn_act_size bytes, owned by *act
   until dn_act_destroy. DN_ERR_OUT_OF_MEMORY when the malloc fails; else
   as dn_act_prepare_for (the types checked first). */
DN_API dn_status dn_act_create_for(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                                   dn_words words, const dn_type *types, size_t type_count,
                                   dn_act **act, size_t *bad);

/* dn_act_prepare_for with the columns prepared on pool (NULL: the calling
   thread), for prefill: the columns are quantized and prepared
   independently, at most 4 per pool thread at once (at most 64 tasks), so
   the dn_act is the one dn_act_prepare_for makes, whatever the pool; the
   error reported is the first column's, *bad as dn_act_prepare's. types
   NULL with type_count 0 serves every format (dn_act_prepare's dn_act).
   Memory as dn_act_prepare (the caller's; the tasks' bookkeeping is on
   the stack); statuses as dn_act_prepare_for. The pool runs one call at
   a time (decodenum/pool.h). O(n cols) work, about 1/threads of it on
   each thread when cols >= threads. */
DN_API dn_status dn_act_prepare_pool(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                                     dn_words words, const dn_type *types, size_t type_count,
                                     void *mem, size_t bytes, dn_pool *pool, dn_act **act,
                                     size_t *bad);

/* Frees a dn_act_create'd activation; NULL is a no-op. Not for one
   prepared in the caller's memory (free that memory instead). */
DN_API void dn_act_destroy(dn_act *act);

/* The statuses of the products below (each says which apply):
   DN_ERR_INVALID_ARGUMENT: act, w or out NULL, act not prepared, a format
     act was not prepared for (dn_act_prepare_for without it), col out of
     range, a row or column range not within the matrix, the matrix's rows
     not a whole number of blocks of act's n, a per-block act without the
     format's block size (256 needs n a multiple of 256), or a matrix or
     output whose size does not fit size_t;
   DN_ERR_UNSUPPORTED_TYPE: a type the block readers do not read, or not a
     quantized format (F32, F16, BF16);
   DN_ERR_UNREADABLE_BLOCK: a block's scale is infinite or NaN; *bad (if not
     NULL) = r * (n / block) + the block's index in row r, for the first
     such row r of the range (the smallest, whatever the pool); out is then
     partly written.
   Empty ranges return DN_OK and touch nothing. */

/* out[r] = row r of the `type` matrix w (rows x act's n, stored as ggml
   stores it) . column col of act, for r in [row_begin, row_end), on the
   calling thread. The bits of dn_mat_vec_rows with that column quantized
   for this format. No allocation; no alignment needed. O((row_end -
   row_begin) n) plus about 10 ns a call (a 5632 x 2048 Q4_K product in
   4-row chunks costs 1.03-1.06x the whole one: docs/dot.md). Any number of
   threads may call it at once with the same act (each its own rows): the
   row-range form for an engine's own threads. */
DN_API dn_status dn_act_mat_vec_rows(const dn_act *act, size_t col, dn_type type, const uint8_t *w,
                                     size_t rows, size_t row_begin, size_t row_end, float *out,
                                     size_t *bad);

/* dn_act_mat_vec_rows over all rows, split over the pool (NULL: the calling
   thread). The bits never depend on the pool. */
DN_API dn_status dn_act_mat_vec(const dn_act *act, size_t col, dn_type type, const uint8_t *w,
                                size_t rows, float *out, dn_pool *pool, size_t *bad);

/* One matrix of a grouped product: rows x act's n of `type` at w; its
   values go to out[0 .. rows). */
typedef struct dn_act_matrix {
    dn_type type;
    const uint8_t *w;
    size_t rows;
    float *out;
} dn_act_matrix;

/* dn_act_mat_vec of column col for each of mats[0 .. count) (Q, K and V;
   gate and up), their rows split over the pool in one pass. Each out has
   the bits of its own dn_act_mat_vec. Errors as above, checked for every
   matrix before any is computed; on DN_ERR_UNREADABLE_BLOCK *bad_matrix (if
   not NULL) is the first failing matrix's index and *bad its block. */
DN_API dn_status dn_act_mat_vec_multi(const dn_act *act, size_t col, const dn_act_matrix *mats,
                                      size_t count, dn_pool *pool, size_t *bad_matrix, size_t *bad);

/* The quantized matrix product (prefill): out[c * rows + r] = row r of w .
   column c of act, for r in [row_begin, row_end) and c in [col_begin,
   col_end), on the calling thread: the bits of dn_act_mat_vec_rows of each
   column. The kernels decode a batch of rows once for several columns
   (x86: Q4_K, Q5_K, Q6_K, Q8_0 under Sub32, one word) or keep a tile of
   rows in cache across the columns.
   out holds act's cols x rows floats. No allocation. */
DN_API dn_status dn_act_mat_mul_rows(const dn_act *act, size_t col_begin, size_t col_end,
                                     dn_type type, const uint8_t *w, size_t rows, size_t row_begin,
                                     size_t row_end, float *out, size_t *bad);

/* dn_act_mat_mul_rows over every row and column, split over the pool (by
   rows, then columns; NULL: the calling thread). The bits never depend on
   the pool. */
DN_API dn_status dn_act_mat_mul(const dn_act *act, dn_type type, const uint8_t *w, size_t rows,
                                float *out, dn_pool *pool, size_t *bad);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_DOT_H */
