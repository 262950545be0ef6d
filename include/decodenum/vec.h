/* SPDX-License-Identifier: MIT */
/*
 * decodenum/vec.h: the element-wise operations between the products of a
 * layer, in the engine's arithmetic: residual adds, the SwiGLU, GeGLU and
 * sigmoid gates, scaling, a scaled add, and the residual add fused with the
 * RMSNorm that follows it.
 *
 * Every output element is the engine's scalar operations on that element
 * alone (dn_fadd, dn_fsub, dn_fmul: binary32, round to nearest even, FTZ on
 * operands and results, every NaN DN_NAN_BITS; dn_silu, dn_sigmoid,
 * dn_gelu_tanh, dn_gelu of decodenum/math.h), in the order each function
 * gives, with no fused multiply-add. So dn_vec_add(a, b, y, n, pool) gives
 * y[i] = dn_fadd(a[i], b[i]) bit for bit, on every ISA, for every n, every
 * alignment and every pool; dn_vec_add_rmsnorm's output is dn_rmsnorm's of the sum, bit for bit.
 * NaN and infinite inputs are not errors: they give the element what the
 * scalar operation gives (docs/numerics.md, section 15).
 *
 * Arguments, for every function:
 *  - n = 0 is valid (nothing is read or written), with any pointers.
 *  - DN_ERR_INVALID_ARGUMENT, with nothing written, for a NULL pointer with
 *    n > 0; for n > SIZE_MAX / sizeof(float) (no such array exists), or an
 *    array whose last byte would lie past the top of the address space; and
 *    for an output that overlaps an input other than as the function
 *    allows. Overlap is checked on the addresses, so every overlap the rules
 *    below forbid is found.
 *  - Aliasing: an output may be *the same array* as the inputs each
 *    function names (the same first element, the same n), never a shifted
 *    or partial view of one. Inputs that are only read may overlap each
 *    other in any way.
 *  - Alignment: a float's natural 4 bytes (any float offset works; the
 *    kernels use unaligned loads).
 *  - pool: NULL computes on the calling thread. With a pool of 2 or more
 *    threads, a long array (from 2^20 elements for add, sub, mul, scale
 *    and axpy, which are bound by memory bandwidth; from 2^16 for the
 *    gates, bound by the dn_silu / dn_sigmoid / dn_gelu_tanh / dn_gelu
 *    sequence) is cut into pieces
 *    run on the pool's threads; shorter arrays do not wake it. The bits
 *    never depend on the pool (each element is computed alone). On a
 *    loaded machine a second thread may not pay at all: docs/vec.md has
 *    the measurement; pass NULL there.
 *  - Memory and threads: nothing is allocated; the caller owns every array
 *    and the library keeps no pointer past the call. Every function is
 *    reentrant: concurrent calls on different output arrays are safe (two
 *    calls writing one array at once are the caller's race); calls sharing
 *    one pool are serialised by it.
 *  - Cost: O(n), bandwidth bound for arrays past the caches.
 */
#ifndef DECODENUM_VEC_H
#define DECODENUM_VEC_H

#include "decodenum/common.h"
#include "decodenum/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y[i] = dn_fadd(a[i], b[i]), dn_fsub(a[i], b[i]), dn_fmul(a[i], b[i]).
   y may be a, or b, or both (a == b == y). Errors as above. */
DN_API dn_status dn_vec_add(const float *a, const float *b, float *y, size_t n, dn_pool *pool);
DN_API dn_status dn_vec_sub(const float *a, const float *b, float *y, size_t n, dn_pool *pool);
DN_API dn_status dn_vec_mul(const float *a, const float *b, float *y, size_t n, dn_pool *pool);

/* y[i] = dn_fmul(x[i], a): a scalar factor (an embedding scale, a logit
   scale, an expert's weight). y may be x. Errors as above. */
DN_API dn_status dn_vec_scale(const float *x, float a, float *y, size_t n, dn_pool *pool);

/* y[i] = dn_fadd(y[i], dn_fmul(a, x[i])): the product rounded (and flushed)
   first, then the add: two roundings, never a fused multiply-add (a mixture
   of experts' weighted sum). y is read and written; x may be y (then
   y[i] = y[i] + a*y[i]). Errors as above. */
DN_API dn_status dn_vec_axpy(float a, const float *x, float *y, size_t n, dn_pool *pool);

/* The SwiGLU gate: y[i] = dn_fmul(dn_silu(g[i]), u[i]), g the gate
   projection and u the up projection. y may be g or u. Errors as above.
   Cost: one dn_silu per element (a few nanoseconds scalar; docs/vec.md). */
DN_API dn_status dn_vec_silu_mul(const float *g, const float *u, float *y, size_t n, dn_pool *pool);

/* The sigmoid gate (gated attention output, Qwen3-Next's and Gated-DeltaNet
   layers' output gate): y[i] = dn_fmul(dn_sigmoid(g[i]), u[i]). y may be g
   or u. Errors as above. */
DN_API dn_status dn_vec_sigmoid_mul(const float *g, const float *u, float *y, size_t n,
                                    dn_pool *pool);

/* The GeGLU gate with the tanh approximation (Gemma's FFN, ggml's geglu):
   y[i] = dn_fmul(dn_gelu_tanh(g[i]), u[i]), g the gate projection and u
   the up projection. dn_gelu_tanh (decodenum/math.h) is
   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) within 2 ULP: exactly x
   past 10, -0 below -12, and for negative x between -0.17005 (its least
   value, at x = -0.7524) and -0; then one rounded, flushed product. Any
   binary32 values: the product is dn_fmul's (a zero gate times an
   infinite u[i], an infinite gate times a zero, and every NaN give
   DN_NAN_BITS). y may be g or u. Errors as above. Cost: one dn_gelu_tanh
   per element, about 1.3x dn_silu's time (docs/math.md, docs/vec.md). */
DN_API dn_status dn_vec_gelu_tanh_mul(const float *g, const float *u, float *y, size_t n,
                                      dn_pool *pool);

/* The GeGLU gate with the erf form of GELU (PyTorch's gelu(approximate=
   "none"), ggml's geglu_erf): y[i] = dn_fmul(dn_gelu(g[i]), u[i]). dn_gelu
   (decodenum/math.h) is x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) within
   2 ULP: exactly x past 6, -0 below -13.5, and for negative x between
   -0.16998 (its least value, at x = -0.7517) and -0; then one rounded,
   flushed product. Special values, aliasing (y may be g or u), errors,
   memory and the pool split as dn_vec_gelu_tanh_mul. Cost: one dn_gelu
   per element, about 2.5x dn_silu's time (docs/math.md). */
DN_API dn_status dn_vec_gelu_mul(const float *g, const float *u, float *y, size_t n, dn_pool *pool);

/* The residual add and the RMSNorm after it, in one pass over the sum:
     r[i] = dn_fadd(r[i], x[i])             (the sum written back to r)
     y    = dn_rmsnorm(r, w, eps) of the new r, bit for bit:
     s    = dn_fdot(r, r, n) (the lane sum of squares, formed as each sum
            is stored), rs = dn_rsqrt(dn_fadd(dn_fmul(s, dn_recip(N)), eps))
            with N = n rounded to binary32, y[i] = dn_fmul(dn_fmul(r[i], rs), w[i]).
   r is the residual stream (read and written), x the layer's output, w
   the norm's weights. y may be x (x is consumed before y is written); r
   must not overlap x, w or y; y must not overlap w. Non-finite values give
   what dn_rmsnorm gives. Errors as above. Cost: reads r, x once and r, w
   once more; writes r and y; runs on the calling thread (the sum of squares
   is one lane order, and one token's vector is small). */
DN_API dn_status dn_vec_add_rmsnorm(float *r, const float *x, const float *w, float eps, float *y,
                                    size_t n);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_VEC_H */
