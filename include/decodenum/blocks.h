/* SPDX-License-Identifier: MIT */
/*
 * decodenum/blocks.h: ggml's block formats as the engine reads them.
 *
 * THE ENGINE NEVER ROUNDS A WEIGHT. A block format stores integer codes and
 * a few scales; every weight is a scale times an integer. A row read by
 * dn_read_row becomes a coded row: runs of elements (segments) under one pair
 * of scales (a, b), each element a pair of integers (coef, offs), and the
 * weight's value is exactly
 *
 *     a * coef + b * offs,     a = a.sig * 2^a.exp,  b = b.sig * 2^b.exp.
 *
 * The scales are the binary16 scales the block stores, as exact integers
 * times powers of two; coef folds a code with its sub-block's scale (Q4_K's
 * sc * q, Q6_K's sc * (q - 32)), offs is the offset term (Q4_K's -m, Q4_1's
 * 1). Nothing is rounded, and |coef|, |offs| <= DN_COEF_BOUND for every code
 * every format can store (Q6_K's -128 * -32 is the largest).
 *
 * Type ids are ggml's `enum ggml_type` values; byte layouts are ggml's.
 * Readers use explicit little-endian loads, so they work on any host. A
 * block whose scale is infinite or NaN is unreadable: dn_read_row reports
 * the block's index and computes nothing from it.
 */
#ifndef DECODENUM_BLOCKS_H
#define DECODENUM_BLOCKS_H

#include "decodenum/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest |coef| or |offs| of a coded row in any format the array reads. */
#define DN_COEF_BOUND 4096

/* ggml's type ids (enum ggml_type). */
typedef enum dn_type {
    DN_TYPE_F32 = 0,
    DN_TYPE_F16 = 1,
    DN_TYPE_Q4_0 = 2,
    DN_TYPE_Q4_1 = 3,
    DN_TYPE_Q5_0 = 6,
    DN_TYPE_Q5_1 = 7,
    DN_TYPE_Q8_0 = 8,
    DN_TYPE_Q2_K = 10,
    DN_TYPE_Q3_K = 11,
    DN_TYPE_Q4_K = 12,
    DN_TYPE_Q5_K = 13,
    DN_TYPE_Q6_K = 14,
    DN_TYPE_IQ4_NL = 20,
    DN_TYPE_IQ4_XS = 23,
    DN_TYPE_BF16 = 30
} dn_type;

/* A scale stored in a block: sig * 2^exp, exactly (a binary16 scale has
   |sig| < 2^11). sig = 0 is a zero scale. */
typedef struct dn_scale {
    int32_t sig;
    int32_t exp;
} dn_scale;

/* A run of a row's elements under one pair of scales: elements
   [first, first + count) of the row. */
typedef struct dn_segment {
    dn_scale a; /* the scale of coef */
    dn_scale b; /* the scale of offs (sig 0 where the format has none) */
    uint32_t first;
    uint32_t count;
} dn_segment;

/* A row as the engine reads it. The caller provides the arrays: coef and offs
   of n elements each, segments of dn_type_block_elements(type) granularity
   (n / block elements of them). dn_read_row fills them and sets nsegments. */
typedef struct dn_coded_row {
    int16_t *coef;
    int16_t *offs;
    dn_segment *segments;
    size_t n;
    size_t nsegments;
} dn_coded_row;

/* 1 when the engine's array reads matrices of `type` (the integer block
   formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K, IQ4_NL, IQ4_XS), else 0. */
DN_API int dn_reads(dn_type type);

/* Elements per block and bytes per block of `type` as ggml stores it (F16 and
   BF16: 1 and 2; F32: 1 and 4); 0 for a type id this library does not know. */
DN_API size_t dn_type_block_elements(dn_type type);
DN_API size_t dn_type_block_bytes(dn_type type);

/* Reads one row of n elements (a whole number of blocks; bytes =
   n / block_elements * block_bytes) into `row`. DN_ERR_UNSUPPORTED_TYPE
   when !dn_reads(type); DN_ERR_INVALID_ARGUMENT for NULL pointers, n not a
   whole number of blocks, row->n != n, or n > UINT32_MAX (segments index
   elements in 32 bits); DN_ERR_UNREADABLE_BLOCK when a block's scale is
   infinite or NaN, with *bad_block (if not NULL) set to the index of the
   first such block in the row (row contents are then unspecified).
   *bad_block is left untouched by every other outcome. NULL bytes and arrays
   are valid when n = 0. O(n); reentrant. docs/blocks.md gives each format's
   layout and coding; src/blocks.c is its specification. */
DN_API dn_status dn_read_row(dn_type type, const uint8_t *bytes, size_t n, dn_coded_row *row,
                             size_t *bad_block);

/* A stored row's weights as floats: out[i] = a * coef + b * offs of element
   i rounded once to f32, exactly as dn_exact_sum rounds the two terms
   (nearest, ties to even), for every type dn_reads accepts; F16 and BF16
   elements widen by dn_f16_to_f32 / dn_bf16_to_f32, F32 bits are copied.
   Multi-byte fields are little-endian, as ggml stores them. This is an
   engine's embedding lookup (ggml's get_rows): where ggml's dequantizer's
   f32 arithmetic is exact, the two agree bit for bit.
   DN_ERR_UNSUPPORTED_TYPE for a type neither read nor widened;
   DN_ERR_INVALID_ARGUMENT for n not a whole number of blocks or NULL
   pointers with n > 0; DN_ERR_UNREADABLE_BLOCK for a block whose scale is
   infinite or NaN, with *bad_block (if not NULL) its index, out's earlier
   blocks written and the rest untouched. Allocates nothing; O(n), a few ns
   an element; reentrant. */
DN_API dn_status dn_row_to_f32(dn_type type, const uint8_t *bytes, size_t n, float *out,
                               size_t *bad_block);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_BLOCKS_H */
