/* SPDX-License-Identifier: MIT */
/*
 * decodenum/bf16.h: BF16 weight products with ggml's bits.
 *
 * The BF16 twin of decodenum/f16.h, run by the same product framework: like
 * it, this module reproduces on every ISA the bits of ggml's CPU library in
 * its x86 build for AVX2 + FMA + F16C (libggml-cpu-haswell.so), not the
 * engine's own rules. docs/f16.md ("BF16") gives the orders; the
 * ../shared/oracle vectors computed by the real ggml hold the module to them.
 *
 * ggml rounds each activation to bfloat16 first (dn_bf16_from_f32), then
 * takes one of two reductions, chosen by the same rule as for F16
 * (dn_f16_takes_sgemm: n >= 2 columns, rows % 4 == 0, k % 8 == 0):
 *
 *  - DN_F16_PATH_VEC_DOT (ggml_vec_dot_bf16): four 8-lane accumulators over
 *    32-element steps, each step a separate multiply, rounded to f32, then
 *    an add (no fused multiply-add); folded (c1 + c3) + (c2 + c4), then
 *    high half + low half, then (t0 + t2) + (t1 + t3) (not F16's pairing);
 *    the last k % 32 products (each rounded to f32) added in double.
 *  - DN_F16_PATH_SGEMM (tinyBLAS): one 8-lane fused multiply-add chain over
 *    the row, folded ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
 *
 * A product of two bfloat16 values is exact in f32 unless it leaves f32's
 * normal range; there the separate multiply rounds and the fused one does
 * not, which is the one place the two steps give different bits.
 *
 * Weights and bf16 activations are bfloat16 bit patterns in host order
 * (uint16_t). Results that are NaN have the bits DN_F16_NAN_RESULT_BITS.
 * These conversions are ggml's, not the engine's dn_f32_to_bf16 /
 * dn_bf16_to_f32 (decodenum/fp32.h), which flush denormals and make every
 * NaN the engine's one: here an f32 denormal rounds to a bfloat16
 * subnormal, a bfloat16 subnormal widens to its f32 value, and a NaN keeps
 * its sign and high payload bits.
 *
 * All functions assume the C default floating-point environment. Pointers:
 * NULL with a length of 0 is valid; NULL with a non-zero length, a size
 * product that overflows size_t, or a bad range is DN_ERR_INVALID_ARGUMENT.
 */
#ifndef DECODENUM_BF16_H
#define DECODENUM_BF16_H

#include "decodenum/common.h"
#include "decodenum/f16.h"
#include "decodenum/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one BF16 weight. */
#define DN_BF16_BYTES 2

/* One matrix of dn_bf16_mat_vec_multi (bfloat16 weights). */
typedef dn_f16_matrix dn_bf16_matrix;

/* ---- conversions (dispatched; O(n)) ------------------------------------- */

/* h[i] = x[i] rounded to bfloat16 as ggml_cpu_fp32_to_bf16: nearest even on
   the bit pattern (f32 denormals round to bfloat16 subnormals or zero,
   values past the top to +-inf); a NaN keeps its sign and top 7 payload bits
   and is made quiet (0x0040 set). x and h must not overlap. */
DN_API dn_status dn_bf16_from_f32(const float *x, uint16_t *h, size_t n);

/* x[i] = h[i] << 16 as an f32: the value exactly, subnormals kept; a NaN
   keeps every bit (as ggml's widening does). x and h must not overlap. */
DN_API dn_status dn_bf16_widen(const uint16_t *h, float *x, size_t n);

/* ---- a single dot product (dispatched; O(k)) ---------------------------- */

/* *out = weight row w (k bfloat16) . activation x (k bfloat16) as `path`
   computes it. DN_F16_PATH_SGEMM needs k % 8 == 0, and a path other than
   the two is DN_ERR_INVALID_ARGUMENT, as is a NULL out. Working memory: k
   floats (on the stack up to 4096, else allocated: DN_ERR_OUT_OF_MEMORY
   possible). */
DN_API dn_status dn_bf16_dot(dn_f16_path path, const uint16_t *w, const uint16_t *x, size_t k,
                             float *out);

/* ---- products --------------------------------------------------------------
 * As decodenum/f16.h's, with bfloat16 weights: rows x k, row-major (row r
 * at w + r*k). Activations: columns of k floats (column c at act + c*k),
 * rounded to bfloat16 first. Outputs: out[c*rows + r] = row r . column c.
 * pool: NULL computes on the calling thread; the bits never depend on the
 * pool or the split. Working memory: the rounded activations, 6 bytes per
 * activation element for one column on the vec_dot path (as floats and as
 * bfloat16 patterns; 4, the floats alone, otherwise), and the matrix list of
 * dn_bf16_mat_vec_multi (DN_ERR_OUT_OF_MEMORY possible); on a CPU with
 * AVX-512, a tinyBLAS mat_mul also packs its columns once per call (2
 * bytes per element with AVX512_BF16, 4 without and up to 8 MiB, for
 * every thread to read;
 * without that memory it computes the same bits without packing); with
 * the AVX2 kernels each tinyBLAS task (a few per thread) takes a buffer
 * of 16 KiB plus the larger of 256 KiB and 384 bytes per column, freed
 * before the task ends (without it: the scalar reference, same bits,
 * slower). Cost:
 * rows*k*n multiply-adds; a single column is bound by reading the weights
 * (2*rows*k bytes). */

/* One column: out[r] = row r . x, DN_F16_PATH_VEC_DOT for every row. */
DN_API dn_status dn_bf16_mat_vec(const uint16_t *w, size_t rows, size_t k, const float *x,
                                 float *out, dn_pool *pool);

/* Several matrices with the same k times one column x, in one pass of the
   pool: each mats[i].out[r] as dn_bf16_mat_vec. */
DN_API dn_status dn_bf16_mat_vec_multi(const dn_bf16_matrix *mats, size_t count, size_t k,
                                       const float *x, dn_pool *pool);

/* n columns: out[c*rows + r]; the path is dn_f16_takes_sgemm(rows, k, n)'s. */
DN_API dn_status dn_bf16_mat_mul(const uint16_t *w, size_t rows, size_t k, const float *act,
                                 size_t n, float *out, dn_pool *pool);

/* n columns on the path the caller names, as dn_f16_mat_mul_path: each
   output dn_bf16_dot(path, row r, column c)'s value whatever n, so with
   DN_F16_PATH_VEC_DOT a batch of columns gives the bits of one
   dn_bf16_mat_vec per column, the weights read once per few columns.
   DN_ERR_INVALID_ARGUMENT also for another path, or SGEMM with
   k % 8 != 0. Since 0.3.0. */
DN_API dn_status dn_bf16_mat_mul_path(dn_f16_path path, const uint16_t *w, size_t rows, size_t k,
                                      const float *act, size_t n, float *out, dn_pool *pool);

/* Row-range forms, for engines with their own threads: the outputs of rows
   [row_begin, row_end) only, from activations already rounded to bfloat16
   (dn_bf16_from_f32), on the calling thread. `rows` is the whole matrix's
   row count (it decides the path); out has the full product's layout.
   DN_ERR_INVALID_ARGUMENT also for row_begin > row_end or row_end > rows.
   Working memory: the activations widened, as the products above take it
   (DN_ERR_OUT_OF_MEMORY possible), once per call. */
DN_API dn_status dn_bf16_mat_vec_rows(const uint16_t *w, size_t rows, size_t k, const uint16_t *x16,
                                      size_t row_begin, size_t row_end, float *out);
DN_API dn_status dn_bf16_mat_mul_rows(const uint16_t *w, size_t rows, size_t k,
                                      const uint16_t *act16, size_t n, size_t row_begin,
                                      size_t row_end, float *out);
/* dn_bf16_mat_mul_path's row ranges: the named path whatever the shape (the
   statuses of both). Since 0.3.0. */
DN_API dn_status dn_bf16_mat_mul_path_rows(dn_f16_path path, const uint16_t *w, size_t rows,
                                           size_t k, const uint16_t *act16, size_t n,
                                           size_t row_begin, size_t row_end, float *out);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_BF16_H */
