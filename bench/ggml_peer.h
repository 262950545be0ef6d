/* SPDX-License-Identifier: MIT */
/*
 * bench/ggml_peer.h: ggml's own matrix product as a peer measured in the same
 * run as ours. ggml_mul_mat through ggml's C API on its CPU backend, over
 * the bench's own buffers (the same weight bytes, the same activation), so
 * one call is what an engine built on ggml pays: converting or quantizing
 * the activation to ggml's vec_dot_type, then the product.
 *
 * Built only when CMake is given a ggml install (DECODENUM_BENCH_GGML, see
 * bench/CMakeLists.txt); the programs then define DN_BENCH_GGML. The build's
 * instruction set is ggml's, fixed when ggml was compiled: ggml_peer_build
 * names it, and the tables print it beside every ggml figure.
 */
#ifndef DN_BENCH_GGML_PEER_H
#define DN_BENCH_GGML_PEER_H

#include <stddef.h>

#include "common.h"

typedef struct ggml_peer ggml_peer;

/* A product out[n][rows] = W x over ggml tensors that alias the caller's
   buffers: W is rows x k of ggml type `type` (the enum ggml_type value;
   dn_type values are the same numbers) at w, x holds n columns of k floats,
   out n columns of rows floats. `threads` workers run each call. With
   `repacked`, the weights are copied into ggml's repacking buffer type as
   llama.cpp loads them (ggml_peer.c), where ggml has a layout for the
   format; otherwise ggml reads w in place. NULL when ggml refuses the shape
   or memory runs out. */
ggml_peer *ggml_peer_create(int type, const void *w, size_t rows, size_t k, const float *x,
                            size_t n, float *out, int threads, int repacked);
void ggml_peer_destroy(ggml_peer *p);
/* Whether ggml holds p's weights repacked. */
int ggml_peer_repacked(const ggml_peer *p);

/* A bench_call_fn: one product; c->ctx is the ggml_peer. */
void ggml_peer_call(bench_case *c);

/* Whether the linked ggml is an x86 AVX2/FMA/F16C build without AVX-512:
   the build whose F16 products the library reproduces bit for bit. */
int ggml_peer_f16_bits_are_ours(void);

/* "ggml (cpu built for: AVX2 FMA F16C; tinyBLAS on)" and the like: the
   instruction sets the linked ggml was compiled for, and whether its
   tinyBLAS (llamafile) path is in. */
const char *ggml_peer_build(void);

#endif
