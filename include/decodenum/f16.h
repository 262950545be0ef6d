/* SPDX-License-Identifier: MIT */
/*
 * decodenum/f16.h: F16 weight products with ggml's bits.
 *
 * This module does not follow the engine's own rules (docs/numerics.md); it
 * reproduces, on every ISA, the bits that ggml's CPU library computes in its
 * x86 build for AVX2 + FMA + F16C (the shipped libggml-cpu-haswell.so
 * variant). docs/f16.md describes the two paths and their exact orders;
 * ../shared/oracle vectors computed by the real ggml hold the module to them.
 *
 * ggml multiplies an F16 weight matrix by activations in one of two ways,
 * and the two give different bits for the same row and column:
 *
 *  - DN_F16_PATH_VEC_DOT (ggml_vec_dot_f16): 32 lanes as four 8-lane fused
 *    multiply-add accumulators over 32-element steps, folded
 *    ((a0 + a2) + (a1 + a3)), then low half + high half, then two horizontal
 *    adds; the last k % 32 products are added one by one in double, and the
 *    double is rounded to f32.
 *  - DN_F16_PATH_SGEMM (llamafile's tinyBLAS): one 8-lane fused multiply-add
 *    chain over the row, folded ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
 *
 * A product takes SGEMM exactly when dn_f16_takes_sgemm(rows, k, n) (n >= 2
 * columns, rows % 4 == 0, k % 8 == 0), as ggml chooses. Activations are
 * first rounded to binary16 (dn_f16_from_f32), as ggml does.
 *
 * Weights and f16 activations are binary16 bit patterns in host order
 * (uint16_t); dn_f16_dequantize_row reads little-endian bytes.
 *
 * NaN: results that are NaN have the bits 0xFFC00000 (x86's default NaN,
 * which is what ggml produces for inf * 0 and inf - inf); f16 results of
 * dn_f16_mad / dn_f16_scale that are NaN are 0xFE00. Conversions keep NaN
 * payloads as F16C does. Every finite and infinite result is ggml's bit for bit.
 *
 * All functions assume the C default floating-point environment. Pointers:
 * NULL with a length of 0 is valid; NULL with a non-zero length, a size
 * product that overflows size_t, or a bad range is DN_ERR_INVALID_ARGUMENT.
 */
#ifndef DECODENUM_F16_H
#define DECODENUM_F16_H

#include "decodenum/common.h"
#include "decodenum/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one F16 weight. */
#define DN_F16_BYTES 2
/* The bits of a NaN result of a product (f32) and of dn_f16_mad/scale (f16). */
#define DN_F16_NAN_RESULT_BITS 0xFFC00000u
#define DN_F16_NAN_F16_BITS 0xFE00u

/* Which of ggml's two reductions computes an element. */
typedef enum dn_f16_path {
    DN_F16_PATH_VEC_DOT = 0, /* ggml_vec_dot_f16 */
    DN_F16_PATH_SGEMM = 1    /* llamafile_sgemm / tinyBLAS */
} dn_f16_path;

/* 1 when ggml computes a rows x k weight times n columns with tinyBLAS
   (n >= 2, rows % 4 == 0, k % 8 == 0), else 0. */
DN_API int dn_f16_takes_sgemm(size_t rows, size_t k, size_t n);

/* ---- conversions (dispatched; O(n)) ------------------------------------- */

/* h[i] = x[i] rounded to binary16 as ggml_cpu_fp32_to_fp16 (F16C, imm 0):
   nearest even, subnormals kept, +-inf from 65520 up; a NaN keeps its sign
   and the top 9 bits of its payload and is made quiet (0x7E00 set).
   x and h must not overlap: their elements differ in size, so there is no
   in-place form. */
DN_API dn_status dn_f16_from_f32(const float *x, uint16_t *h, size_t n);

/* x[i] = the value of h[i], exactly; a NaN keeps sign and payload and is
   made quiet (as F16C's vcvtph2ps). h and x must not overlap: x[i] is wider
   than h[i], so an in-place widening would overwrite halves not yet read. */
DN_API dn_status dn_f16_widen(const uint16_t *h, float *x, size_t n);

/* out[i] = the value of the i-th little-endian binary16 of `row` (2n bytes),
   as dn_f16_widen: ggml's get_rows / to_float for F16 on any host. */
DN_API dn_status dn_f16_dequantize_row(const uint8_t *row, float *out, size_t n);

/* ---- single dot products (dispatched; O(k)) ----------------------------- */

/* *out = weight row w (k binary16) . activation x (k binary16) as `path`
   computes it. DN_F16_PATH_SGEMM needs k % 8 == 0, and a path other than
   the two is DN_ERR_INVALID_ARGUMENT, as is a NULL out. Working memory: k
   floats (on the stack up to 4096, else allocated: DN_ERR_OUT_OF_MEMORY
   possible). Also serves a K-cache row
   against a query (ggml's vec_dot with both operands f16). */
DN_API dn_status dn_f16_dot(dn_f16_path path, const uint16_t *w, const uint16_t *x, size_t k,
                            float *out);

/* ---- f16 accumulators (flash attention's V side; dispatched; O(n)) ------ */

/* acc[i] = f16(acc[i] + v[i] * s) with one fused multiply-add in f32, then
   rounded to binary16 to nearest even (ggml_vec_mad_f16). */
DN_API dn_status dn_f16_mad(uint16_t *acc, const uint16_t *v, float s, size_t n);

/* acc[i] = f16(acc[i] * s): an f32 product, then rounded to binary16 to
   nearest even (ggml_vec_scale_f16). */
DN_API dn_status dn_f16_scale(uint16_t *acc, float s, size_t n);

/* ---- products --------------------------------------------------------------
 * Weights: rows x k binary16, row-major (row r at w + r*k). Activations:
 * columns of k floats (column c at act + c*k), rounded to binary16 first.
 * Outputs: out[c*rows + r] = row r . column c. pool: NULL computes on the
 * calling thread; the bits never depend on the pool or the split.
 * Working memory: the rounded and widened activations, 6 bytes per
 * activation element for one column on the vec_dot path (4, the floats
 * alone, otherwise), and the matrix list of dn_f16_mat_vec_multi (DN_ERR_OUT_OF_MEMORY possible); a
 * tinyBLAS product
 * may also pack the columns for its kernel (on AVX-512, 4 bytes per
 * element of n rounded up to 8 columns, when that is at most 8 MiB),
 * allocated and freed within the call, and runs without it (same bits)
 * when that allocation fails. With the AVX2 kernels each tinyBLAS task
 * (a few per thread) also takes a buffer of 16 KiB plus the larger of
 * 256 KiB and 384 bytes per column, freed before the task ends; without
 * it the task runs the scalar reference (same bits, slower).
 * Cost: rows*k*n fused multiply-adds; a single column is bound by reading
 * the weights (2*rows*k bytes). */

/* One column: out[r] = row r . x, DN_F16_PATH_VEC_DOT for every row
   (ggml never takes tinyBLAS for one column). */
DN_API dn_status dn_f16_mat_vec(const uint16_t *w, size_t rows, size_t k, const float *x,
                                float *out, dn_pool *pool);

/* One matrix of dn_f16_mat_vec_multi: its weights, its rows, its output. */
typedef struct dn_f16_matrix {
    const uint16_t *w;
    float *out;
    uint64_t rows;
} dn_f16_matrix;

/* Several matrices with the same k times one column x, in one pass of the
   pool (Q, K and V; gate and up): each mats[i].out[r] as dn_f16_mat_vec. */
DN_API dn_status dn_f16_mat_vec_multi(const dn_f16_matrix *mats, size_t count, size_t k,
                                      const float *x, dn_pool *pool);

/* n columns: out[c*rows + r]; the path is dn_f16_takes_sgemm(rows, k, n)'s. */
DN_API dn_status dn_f16_mat_mul(const uint16_t *w, size_t rows, size_t k, const float *act,
                                size_t n, float *out, dn_pool *pool);

/* n columns on the path the caller names, whatever the shape: out[c*rows + r]
   is dn_f16_dot(path, row r, column c)'s value, so a column's outputs do
   not depend on n or on the columns beside it. With DN_F16_PATH_VEC_DOT a
   prompt's positions taken in batches of any size give the bits one
   dn_f16_mat_vec per position gives (what dn_f16_mat_mul cannot promise:
   from n = 2 ggml's rule may take tinyBLAS); the weights are read once per
   few columns, so a batch costs about rows*k*n fused multiply-adds, not n
   reads of the weights. DN_F16_PATH_SGEMM gives tinyBLAS's bits, also for
   n = 1. DN_ERR_INVALID_ARGUMENT also for another path, or SGEMM with
   k % 8 != 0. Working memory as dn_f16_mat_mul's. Since 0.3.0. */
DN_API dn_status dn_f16_mat_mul_path(dn_f16_path path, const uint16_t *w, size_t rows, size_t k,
                                     const float *act, size_t n, float *out, dn_pool *pool);

/* Row-range forms, for engines with their own threads: the outputs of rows
   [row_begin, row_end) only, from activations already rounded to binary16
   (dn_f16_from_f32), on the calling thread. `rows` is the whole matrix's
   row count (it decides the path); out has the full product's layout.
   DN_ERR_INVALID_ARGUMENT also for row_begin > row_end or row_end > rows.
   Working memory: the activations widened, as the products above take it
   (DN_ERR_OUT_OF_MEMORY possible), once per call: an engine calling these
   for many small ranges pays it each time. */
DN_API dn_status dn_f16_mat_vec_rows(const uint16_t *w, size_t rows, size_t k, const uint16_t *x16,
                                     size_t row_begin, size_t row_end, float *out);
DN_API dn_status dn_f16_mat_mul_rows(const uint16_t *w, size_t rows, size_t k,
                                     const uint16_t *act16, size_t n, size_t row_begin,
                                     size_t row_end, float *out);
/* dn_f16_mat_mul_path's row ranges: the named path whatever the shape (the
   statuses of both). Since 0.3.0. */
DN_API dn_status dn_f16_mat_mul_path_rows(dn_f16_path path, const uint16_t *w, size_t rows,
                                          size_t k, const uint16_t *act16, size_t n,
                                          size_t row_begin, size_t row_end, float *out);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_F16_H */
