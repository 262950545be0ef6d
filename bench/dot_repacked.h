/* SPDX-License-Identifier: MIT */
/*
 * bench/dot_repacked.h: decodenum-bench-dot's comparison of the repacked
 * layout (decodenum/repack.h) with the plain one and with ggml's repacked
 * weights (bench_dot.c runs it last, or alone with --repacked).
 */
#ifndef DN_BENCH_DOT_REPACKED_H
#define DN_BENCH_DOT_REPACKED_H

#include <stddef.h>
#include <stdint.h>

#include "decodenum/dot.h"
#include "decodenum/pool.h"

/* The matrices compared: count formats, each rows x cols in place. */
typedef struct dot_repacked_set {
    int count;
    const dn_type *types;
    const char *const *names;
    const uint8_t *const *w;
    size_t rows, cols;
    const float *x; /* the activation, cols floats */
    dn_pool *pool2; /* two threads */
    int quick;      /* fewer rounds */
} dot_repacked_set;

/* Per format and thread count (1, then 2 on pool2): dn_act_prepare +
   dn_act_mat_vec on the plain matrix, dn_act_prepare + dn_repacked_mat_vec,
   the repacked product alone on an activation prepared once, and with a
   ggml peer ggml_mul_mat on its repacked weights, alternated round by
   round; in cache (48 rows less 16) and from memory (all rows). Prints
   microseconds a call, minimum CPU time then wall time, and the ratios;
   exits the program with a message if a product fails. */
void bench_dot_repacked(const dot_repacked_set *set);

#endif
