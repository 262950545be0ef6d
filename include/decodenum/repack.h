/* SPDX-License-Identifier: MIT */
/*
 * decodenum/repack.h: quantized weight matrices laid out for the products,
 * made once when an engine loads a model.
 *
 * A repacked matrix holds the plain one's information (rows of blocks, as
 * ggml stores them) in another order. Rows are taken DN_REPACK_ROWS (8) at a
 * time (a row group), the row count padded to a whole number of row groups
 * with zero blocks (readable; their rows are never written); the row groups
 * follow one another. A chunk is DN_GROUP (256) elements.
 *
 * Q4_K (eight rows in the lanes): a row group is its chunks in order, chunk
 * j (rows 8q .. 8q + 7 of row group q, one block each) 1152 bytes:
 *
 *   bytes    0 ..   15  d of rows 0..7 (binary16, as in the block)
 *   bytes   16 ..   31  dmin of rows 0..7
 *   bytes   32 ..   95  byte i: low 4 bits of scale number i (nibble 0) and
 *                       of min number i (nibble 1)
 *   bytes   96 ..  127  byte i: the high 2 bits of scales i and i + 32 (bits
 *                       0-1, 2-3) and of mins i and i + 32 (bits 4-5, 6-7)
 *   bytes  128 .. 1151  byte 128 + 256 p + 64 u + 8 r + b = row r's qs byte
 *                       32 p + 8 u + b (p, u 0..3, b 0..7)
 *
 * where scale number 8 s + r is row r's 6-bit scale of sub-block s and min
 * number 8 r + s its 6-bit min (the values dn_k_scale_min reads from the
 * block's 12 bytes: a bijection). So a 64-byte load holds eight bytes of
 * each row (eight elements of sub-blocks 2p and 2p + 1), one broadcast of
 * eight activation codes feeds eight rows' integer dots with each row's
 * sums in its own lanes, and a sub-block's eight scales are one vector.
 *
 * Q8_0 (eight rows in the lanes): a row group is its chunks in order, chunk
 * j holding G blocks of each of rows 8q .. 8q + 7 (G = 8, or fewer in a
 * row's last chunk when n is not a multiple of 256), 272 G bytes:
 *
 *   bytes  16 k + 2 r, + 1              d of row r's block k (binary16, as in
 *                                       the block; k 0..G-1, r 0..7)
 *   byte   16 G + 256 k + 64 u + 8 r + b   row r's qs byte 8 u + b of
 *                                       block k (u 0..3, b 0..7)
 *
 * So the eight rows' d of a block are one 16-byte load, a 64-byte load
 * holds eight bytes of each row (two 4-byte groups: one vpdpbusd lane pair
 * per row; 32 bytes: four rows for a maddubs), one broadcast of eight
 * activation codes feeds eight rows' integer dots with each row's sums in
 * its own lanes, and every chunk but a row's last starts 64-byte aligned
 * when the matrix does (2176 bytes a chunk).
 *
 * Q6_K (eight rows in the lanes): a row group is its chunks in order, chunk
 * j (one block of each of rows 8q .. 8q + 7) 1680 bytes:
 *
 *   bytes    0 ..   15  d of rows 0..7 (binary16, as in the block)
 *   bytes   16 ..  143  byte 16 + 8 s + r = row r's int8 scale of 16-element
 *                       sub-block s (s 0..15)
 *   bytes  144 .. 1679  eight steps of 192 bytes, step i = 4 h + u (h 0..1,
 *                       u 0..3) at 144 + 192 i: byte 64 v + 8 r + b of the
 *                       step = row r's ql byte 64 h + 32 v + 8 u + b (v 0,
 *                       1) and byte 128 + 8 r + b = its qh byte 32 h + 8 u
 *                       + b (b 0..7)
 *
 * So a step holds elements 8 u .. 8 u + 7 of chunks (32 elements) 4 h ..
 * 4 h + 3 of every row: each 64-byte load eight bytes of each row (the low
 * and high nibbles of the ql bytes two chunks' low bits, the qh bytes the
 * four chunks' high bits), one broadcast of eight activation codes feeds
 * eight rows' integer dots with each row's sums in its own lanes, and a
 * sub-block's eight scales are eight adjacent bytes.
 *
 * Every other format: each half of a row group (rows 4h .. 4h + 3, the
 * halves one after another) holds, chunk after chunk, row 4h's bytes of
 * chunk j, then row 4h + 1's, row 4h + 2's and row 4h + 3's (whole blocks;
 * a row's last chunk may be short: n a multiple of 32, not 256, for the
 * 32-element formats); the kernels feed each activation load to four rows'
 * integer dots.
 *
 * Memory: dn_repack_size's bytes, ceil(rows / 8) * 8 * the row's bytes: at
 * most seven rows more than the plain matrix. The plain matrix may be freed
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

/* *bytes = the size of a repacked `type` matrix of rows x n: ceil(rows / 8)
   * 8 * (n / block elements) * block bytes. type: a quantized format the
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
   on the plain matrix; Q4_K's and Q6_K's scales are moved, not
   interpreted). Statuses as dn_repack_size, and DN_ERR_INVALID_ARGUMENT
   for NULLs or too few bytes. Allocates nothing. O(rows n). */
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
   rows and writes its own). No alignment needed. No allocation on
   x86 (AVX2, AVX-512 and the scalar reference have repacked row loops); on
   an ISA without them (NEON for now) the rows are unpacked a tile at a
   time and run by its in-place kernels: one malloc of about 64 KiB (at
   least 16 rows; at most the range's rows and 16 more) per call,
   DN_ERR_OUT_OF_MEMORY when it fails.
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
   matrix. With more than one column, each tile of about 64 KiB of rows
   (whole multiples of 16 rows, at least 16) is unpacked into working
   memory and run by the in-place product's blocked kernels, every column
   over it: one malloc of at most the tile's bytes per call,
   DN_ERR_OUT_OF_MEMORY when it fails. out holds act's cols x rows
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
