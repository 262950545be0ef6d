/* SPDX-License-Identifier: MIT */
/*
 * bench/f16_shapes.h: decodenum-bench-f16 --shapes (bench_f16.c), the
 * matrix-vector product from memory on a model's decode shapes.
 */
#ifndef DN_BENCH_F16_SHAPES_H
#define DN_BENCH_F16_SHAPES_H

#include "f16_kernels.h"

/* mat_vec from memory, one thread, on 8192^2 and the decode shapes of a
   TinyLlama-sized model: each of the count tables' mat_vec_rows (their
   ISA names in names) sampled round-robin with the read kernels over a
   512 MiB buffer filled with copies of w (8192^2 weights), every call on
   the next matrix of it. act: 8192 floats (rounded here as the tables
   round); out: 32000 floats of scratch. Prints the table; -1 when out of
   memory, else 0. */
int bench_f16_shapes(const dn_w16_kernels *const *tables, const char *const *names, int count,
                     const uint16_t *w, const float *act, float *out, int quick);

#endif
