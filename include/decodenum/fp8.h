/* SPDX-License-Identifier: MIT */
/*
 * decodenum/fp8.h: FP8 E4M3 weights with block and tensor scales.
 *
 * A weight is an OCP E4M3 byte: sign, 4 exponent bits (bias 7), 3 fraction
 * bits; no infinities; S.1111.111 (0x7F, 0xFF) is NaN; the largest finite
 * value is 448. Every finite value is a small integer times a power of two
 * (m * 2^-9 for exponent field 0, (8 + m) * 2^(e - 10) otherwise), so the
 * decoder is exact and a weight is never rounded.
 *
 * A weight matrix is rows x k codes, row-major (row r at w + r*k), with
 *  - block scales (optional): the f32 scales of DeepSeek-V3-style
 *    checkpoints (their weight_scale_inv), one per 128 x 128 block, in a
 *    ceil(rows/128) x ceil(k/128) row-major array: element (r, j) is
 *    scaled by scales[(r/128) * ceil(k/128) + j/128]. When rows or k is not
 *    a multiple of 128 the last blocks are partial: they hold the rows and
 *    columns that exist, under their one scale. NULL means every block
 *    scale is 1.
 *  - a tensor scale (1.0f for none): multiplies every output.
 *
 * The products follow docs/numerics.md (section "FP8 E4M3 products"), the
 * same bits on every ISA, pool and row split: per 128-column block, 16
 * lanes (element i of the block in lane i mod 16) each take their products
 * with one fused multiply-add (the product exact, one rounding), the lanes
 * fold j + j+8, j + j+4, j + j+2, 0 + 1; the block sums enter the row's sum
 * in order as fma(block sum, block scale, sum); the row's sum times the
 * tensor scale is the output, a denormal flushed to a zero of its sign and
 * a NaN made 0x7FC00000. Inside a product the arithmetic is IEEE binary32
 * with gradual underflow (inputs are read as given, denormals included).
 *
 * Errors. NULL with a non-zero length, a size product past size_t, a bad
 * row range: DN_ERR_INVALID_ARGUMENT. A block scale or tensor scale that is
 * infinite or NaN: DN_ERR_UNREADABLE_BLOCK, before anything is written. A
 * NaN weight code: the product is computed in full, every output row that
 * met a NaN code is NaN (0x7FC00000, as the arithmetic gives), and the call
 * returns DN_ERR_NON_FINITE. Infinite or NaN activations are numbers to the
 * arithmetic (an infinite product, inf - inf, 0 * inf give inf or NaN).
 *
 * All functions assume the C default floating-point environment. Weights
 * may start at any address (bytes); scales and activations need float
 * alignment.
 */
#ifndef DECODENUM_FP8_H
#define DECODENUM_FP8_H

#include "decodenum/common.h"
#include "decodenum/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows and columns of one block scale. */
#define DN_FP8_BLOCK 128
/* Lanes of a block sum (element i of a block in lane i mod DN_FP8_LANES). */
#define DN_FP8_LANES 16
/* The largest finite E4M3 value, and the two NaN codes. */
#define DN_FP8_E4M3_MAX 448.0f
#define DN_FP8_NAN_CODE 0x7Fu
#define DN_FP8_NAN_CODE_NEG 0xFFu

/* The exact value of one E4M3 code; the NaN codes give 0x7FC00000. O(1). */
DN_API float dn_fp8_e4m3_to_f32(uint8_t code);

/* out[i] = dn_fp8_e4m3_to_f32(codes[i]) for i < n (dispatched; O(n)).
   Every output is written; DN_ERR_NON_FINITE when some code was a NaN code
   (its output is 0x7FC00000), DN_ERR_INVALID_ARGUMENT for NULL with n > 0. */
DN_API dn_status dn_fp8_decode(const uint8_t *codes, float *out, size_t n);

/* The number of block scales of a rows x k matrix: ceil(rows/128) *
   ceil(k/128) into *count. DN_ERR_INVALID_ARGUMENT when count is NULL or
   the number does not fit size_t. O(1). */
DN_API dn_status dn_fp8_scale_count(size_t rows, size_t k, size_t *count);

/* ---- products --------------------------------------------------------------
 * w: rows x k E4M3 codes; scales: NULL or dn_fp8_scale_count(rows, k)
 * floats; tensor_scale: finite. Activations: columns of k floats (column c
 * at act + c*k). Outputs: out[c*rows + r] = row r . column c. pool: NULL
 * computes on the calling thread; the bits never depend on the pool or
 * the split. Working memory: mat_vec's AVX2 and AVX-512 kernels keep the
 * activation times 2^8 on the stack (32 KiB) up to k = 8192 and allocate it
 * beyond (without it, they run a slower exact loop: never
 * DN_ERR_OUT_OF_MEMORY); mat_mul decodes one 128-column block of a row at
 * a time on the stack. Cost: rows*k*n fused
 * multiply-adds plus the decode of rows*k codes; the decode bounds a
 * single column, not the weights' rows*k bytes: about 13 G weights/s a
 * thread with AVX2 (docs/fp8.md). */

/* One column: out[r] = row r . x, r < rows. */
DN_API dn_status dn_fp8_mat_vec(const uint8_t *w, size_t rows, size_t k, const float *scales,
                                float tensor_scale, const float *x, float *out, dn_pool *pool);

/* n columns: out[c*rows + r]; each column's outputs have the bits of
   dn_fp8_mat_vec of that column. */
DN_API dn_status dn_fp8_mat_mul(const uint8_t *w, size_t rows, size_t k, const float *scales,
                                float tensor_scale, const float *act, size_t n, float *out,
                                dn_pool *pool);

/* Row-range forms, for engines with their own threads: the outputs of rows
   [row_begin, row_end) only, on the calling thread; `rows` is the whole
   matrix's (it places the scales); out has the full product's layout (only
   the range's elements are written). The NaN-code status is about the
   range's rows. */
DN_API dn_status dn_fp8_mat_vec_rows(const uint8_t *w, size_t rows, size_t k, const float *scales,
                                     float tensor_scale, const float *x, size_t row_begin,
                                     size_t row_end, float *out);
DN_API dn_status dn_fp8_mat_mul_rows(const uint8_t *w, size_t rows, size_t k, const float *scales,
                                     float tensor_scale, const float *act, size_t n,
                                     size_t row_begin, size_t row_end, float *out);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_FP8_H */
