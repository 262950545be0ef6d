/* SPDX-License-Identifier: MIT */
/*
 * bench/ggml_peer.h: ggml's own operations as peers measured in the same run
 * as ours: its matrix product, flash attention, gated delta net and
 * convolution. ggml_mul_mat through ggml's C API on its CPU backend, over
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

/* One decode token's ggml_flash_attn_ext: q_heads query heads of head_dim
   floats at q (head h at h * head_dim) over `positions` cached K and V rows
   of kv_type (GGML_TYPE_F16 or a block type such as Q8_0) in the
   [position][kv_head][d] layout, no mask; out receives q_heads * head_dim
   floats. ggml converts q to the K type's dot type, and from 512 positions
   splits the positions over its threads (then merges the partial softmaxes),
   so its bits depend on the thread count. */
ggml_peer *ggml_peer_attention_create(int kv_type, const void *k, const void *v, size_t positions,
                                      size_t head_dim, size_t q_heads, size_t kv_heads,
                                      const float *q, float scale, float *out, int threads);
/* rows x n floats to Q8_0 blocks as ggml quantizes them; returns the bytes. */
size_t ggml_peer_quantize_q8_0(const float *x, void *dst, size_t rows, size_t n);

/* ggml_gated_delta_net over `tokens` tokens: q, k [tokens][key_heads][s],
   v [tokens][heads][s], g (the log of the decay) and beta [tokens][heads],
   state [heads][s][s] (row j of a head is the column j of its S, as ours);
   out receives the read-outs [tokens][heads][s] then the final state. ggml
   copies the state into out and makes four passes over it a token (decay,
   k dot, update, q dot); its read-out scale is 1/sqrt(s). */
ggml_peer *ggml_peer_gdn_create(size_t heads, size_t key_heads, size_t s, size_t tokens,
                                const float *q, const float *k, const float *v, const float *g,
                                const float *beta, const float *state, float *out, int threads);
/* One token of ggml_ssm_conv then ggml_silu, as llama.cpp's Qwen3-Next graph
   runs its convolution: window [channels][taps] (the taps - 1 previous rows
   then the token's, per channel), kernel [channels][taps]; out, channels. */
ggml_peer *ggml_peer_ssm_conv_create(const float *window, const float *kernel, size_t channels,
                                     size_t taps, float *out, int threads);

void ggml_peer_destroy(ggml_peer *p);
/* Whether ggml holds p's weights repacked. */
int ggml_peer_repacked(const ggml_peer *p);

/* A bench_call_fn: one product; c->ctx is the ggml_peer. */
void ggml_peer_call(bench_case *c);

/* Whether the linked ggml is an x86 AVX2/FMA/F16C build without AVX-512:
   the build whose F16 products the library reproduces bit for bit. */
int ggml_peer_f16_bits_are_ours(void);

/* Runs the program again (execv of /proc/self/exe with argv) with
   GOMP_SPINCOUNT=10000, unless the environment sets it or
   OMP_WAIT_POLICY; call it first in main. ggml's default build multiplies
   on OpenMP threads, which by libgomp's default spin for milliseconds after
   each product, on the cores the next case (ours, in the round-robin)
   runs on; libgomp reads the setting when it loads, so it cannot be set
   later. Measured with decodenum-bench-prefill, 4096^2 Q4_K n = 64 on two
   threads: ours 8.1-8.6 ms beside the spinning threads, 5.0-5.2 ms with
   them asleep (OMP_WAIT_POLICY=passive), ggml 13.5 ms either way; but
   passive made ggml wake its threads for every call (bench-f16 --bf16, two
   threads: 5-14% slower), while 10000 spins keep them awake between one
   sample's calls (ggml's two-thread times equal or below the default's)
   and asleep well before the next case. */
void ggml_peer_quiet_openmp(char **argv);

/* "ggml (cpu built for: AVX2 FMA F16C; tinyBLAS on; OMP_WAIT_POLICY unset,
   GOMP_SPINCOUNT 10000)" and the like: the instruction sets the linked
   ggml was compiled for, whether its tinyBLAS (llamafile) path is in, and
   the OpenMP waiting of the run. */
const char *ggml_peer_build(void);

#endif
