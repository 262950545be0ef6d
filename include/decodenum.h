/* SPDX-License-Identifier: MIT */
/*
 * decodenum.h: libdecodenum, the arithmetic of an LLM decode engine, bit for bit.
 *
 * Include this one header. Each module has its own header under decodenum/
 * with the functions' contracts; docs/numerics.md defines every number.
 *
 *   decodenum/common.h  status codes, version, instruction-set dispatch
 *   decodenum/fp32.h    the fp32 core: FTZ arithmetic, conversions, exact
 *                       sums, lane sums and dot products, max and argmax
 *   decodenum/pool.h    a thread pool the heavy products share
 *   decodenum/f16.h     F16 weight products with ggml's bits
 *   decodenum/bf16.h    BF16 weight products with ggml's bits
 *   decodenum/blocks.h  ggml's block formats read as exact coded rows
 *   decodenum/quant.h   activations quantized under scales m * 2^e
 *   decodenum/dot.h     a coded row times a quantized row, summed exactly;
 *                       prepared activations and the quantized products
 *   decodenum/repack.h  quantized matrices repacked for the products, made
 *                       once at load
 *   decodenum/lane.h    the block-scale lane: the array's unsigned sums to a
 *                       block's value, bit for bit as dn_dot
 *   decodenum/math.h    exp, ln, ln1p, recip, rsqrt, sigmoid, silu, softplus,
 *                       tanh, gelu, sin, cos; softmax, rmsnorm (plain,
 *                       zero-centred, gated), l2norm, rope, hadamard
 *   decodenum/attention.h  one decode token's attention over a KV cache:
 *                       f32/f16/bf16 rows, or int8 rows summed exactly
 *   decodenum/selftest.h the library holding its kernels to its references
 *   decodenum/gdn.h     Gated-DeltaNet memory: the convolution, the eager
 *                       row, head and layer, the lazily flushed head
 *   decodenum/vec.h     the element-wise operations between products: add,
 *                       sub, mul, scale, axpy, the SwiGLU and sigmoid gates,
 *                       the residual add fused with RMSNorm
 *   decodenum/fp8.h     FP8 E4M3 weight products with block and tensor scales
 */
#ifndef DECODENUM_H
#define DECODENUM_H

#include "decodenum/common.h"
#include "decodenum/fp32.h"
#include "decodenum/pool.h"
#include "decodenum/f16.h"
#include "decodenum/bf16.h"
#include "decodenum/blocks.h"
#include "decodenum/quant.h"
#include "decodenum/dot.h"
#include "decodenum/repack.h"
#include "decodenum/lane.h"
#include "decodenum/math.h"
#include "decodenum/attention.h"
#include "decodenum/selftest.h"
#include "decodenum/gdn.h"
#include "decodenum/vec.h"
#include "decodenum/fp8.h"

#endif /* DECODENUM_H */
