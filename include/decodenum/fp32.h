/* SPDX-License-Identifier: MIT */
/*
 * decodenum/fp32.h: the fp32 core, the engine's own binary32 arithmetic.
 *
 * Every number the engine produces is built from the operations below, so
 * they are defined exactly (docs/numerics.md is the contract):
 *
 *  - binary32, round to nearest with ties to even;
 *  - FTZ: a denormal operand reads as a zero of its sign, and a result that is
 *    denormal after IEEE rounding becomes a zero of its sign;
 *  - one NaN: every NaN the engine produces is DN_NAN_BITS (0x7FC00000);
 *  - multiply and add round separately (never a fused multiply-add);
 *  - sums and dot products over a vector run in DN_LANES lanes (element i in
 *    lane i mod DN_LANES, each lane from +0 in index order), folded by a
 *    balanced pairwise tree (dn_tree).
 *
 * Each array function has a scalar reference and AVX2 / AVX-512 / NEON
 * kernels that produce exactly the reference's bits (see dn_isa_active()).
 * Results assume the caller's floating-point environment is the C default
 * (round to nearest, no flush modes); kernels that change the environment
 * restore it.
 *
 * Pointers: NULL with a length of 0 is valid everywhere. Array functions
 * that return dn_status report NULL with a non-zero length as
 * DN_ERR_INVALID_ARGUMENT; the reductions that return a value return
 * dn_nan() (dn_argmax: 0) for it. An output may be the same array as an
 * input of the same element size (in place); other overlaps are not allowed.
 * Nothing in this header allocates memory.
 */
#ifndef DECODENUM_FP32_H
#define DECODENUM_FP32_H

#include "decodenum/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lanes of every dn_fdot / dn_fsum before the tree. */
#define DN_LANES 32
/* Binary places dn_exact_sum keeps below its largest term's least place. */
#define DN_SUM_WINDOW 64
/* The bits of the one NaN the engine produces: quiet, no payload, no sign. */
#define DN_NAN_BITS 0x7FC00000u
/* The binary16 NaN the conversions produce, and the bfloat16 one. */
#define DN_F16_NAN_BITS 0x7E00u
#define DN_BF16_NAN_BITS 0x7FC0u

/* The multiplier an f32 product is computed by. The add is dn_fadd either way. */
typedef enum dn_fpu {
    DN_FPU_VECTOR = 0, /* dn_fmul */
    DN_FPU_TF32 = 1    /* both operands rounded by dn_tf32, their exact product
                          rounded once to binary32 with FTZ (dn_fmul_tf32) */
} dn_fpu;

/* One term v * 2^e of an exact sum. `reserved` is ignored (set it to 0). */
typedef struct dn_term {
    int64_t v;
    int32_t e;
    int32_t reserved;
} dn_term;

/* ---- scalar operations (reference only; O(1); never fail) --------------- */

/* The canonical NaN, bits DN_NAN_BITS. */
DN_API float dn_nan(void);

/* x with a denormal replaced by a zero of its sign; everything else as is
   (a NaN keeps its bits: dn_ftz reads, it does not compute). */
DN_API float dn_ftz(float x);

/* a + b, a - b, a * b: operands read through dn_ftz, the IEEE result rounded
   to nearest even, a denormal result flushed to a zero of its sign, any NaN
   result DN_NAN_BITS. */
DN_API float dn_fadd(float a, float b);
DN_API float dn_fsub(float a, float b);
DN_API float dn_fmul(float a, float b);

/* x read through dn_ftz and rounded to 10 fraction bits (TF32 precision),
   to nearest with ties to even, keeping binary32's exponent range: a value
   that rounds past the largest TF32 value becomes an infinity of its sign.
   ±0, ±inf unchanged; a NaN becomes DN_NAN_BITS. */
DN_API float dn_tf32(float x);

/* The DN_FPU_TF32 product: dn_fmul(dn_tf32(a), dn_tf32(b)). The product of
   two 11-bit significands is exact, so only overflow and underflow round. */
DN_API float dn_fmul_tf32(float a, float b);

/* x * 2^n, exact while the result is a normal f32; ±inf past the top, a zero
   of x's sign when |x * 2^n| < FLT_MIN (no rounding happens in between).
   x is read through dn_ftz; ±0 and ±inf unchanged; NaN gives DN_NAN_BITS. */
DN_API float dn_ldexp(float x, int32_t n);

/* v * 2^e rounded once to f32 (nearest, ties to even), a denormal result
   flushed to a zero of its sign, past the top an infinity of its sign;
   v = 0 gives +0. Exact for every input pair (no intermediate rounding). */
DN_API float dn_scaled_to_f32(int64_t v, int32_t e);

/* ---- binary16 and bfloat16 (scalar) ----------------------------------- */

/* x rounded to binary16: nearest with ties to even, binary16 subnormals kept,
   past the top ±inf (from 65520 up, the first value that rounds past 65504).
   x is read through dn_ftz. A NaN becomes DN_F16_NAN_BITS. */
DN_API uint16_t dn_f32_to_f16(float x);

/* The binary16 value h, exactly (binary16 subnormals become normal f32).
   A NaN becomes DN_NAN_BITS. */
DN_API float dn_f16_to_f32(uint16_t h);

/* x rounded to bfloat16, nearest with ties to even, past the top ±inf. x is
   read through dn_ftz (so the result is never a bfloat16 denormal).
   A NaN becomes DN_BF16_NAN_BITS. */
DN_API uint16_t dn_f32_to_bf16(float x);

/* The bfloat16 value b as f32, read through dn_ftz (a bfloat16 denormal is
   an f32 denormal and reads as a zero of its sign). NaN gives DN_NAN_BITS. */
DN_API float dn_bf16_to_f32(uint16_t b);

/* ---- element-wise array forms (dispatched; O(n); memory bound) -------- */

/* y[i] = dn_ftz(x[i]). */
DN_API dn_status dn_ftz_v(const float *x, float *y, size_t n);
/* y[i] = dn_f32_to_f16(x[i]) and back, and the bfloat16 pair. */
DN_API dn_status dn_f32_to_f16_v(const float *x, uint16_t *y, size_t n);
DN_API dn_status dn_f16_to_f32_v(const uint16_t *x, float *y, size_t n);
DN_API dn_status dn_f32_to_bf16_v(const float *x, uint16_t *y, size_t n);
DN_API dn_status dn_bf16_to_f32_v(const uint16_t *x, float *y, size_t n);

/* ---- integers ------------------------------------------------------------ */

/* *q = x rounded to the nearest whole number, ties to even. x is read through
   dn_ftz. DN_ERR_INVALID_ARGUMENT for q NULL; DN_ERR_NON_FINITE for ±inf and
   NaN; DN_ERR_OUT_OF_RANGE when the result is outside int64_t (|x| >= 2^63);
   *q is untouched on error. O(1). */
DN_API dn_status dn_rne(float x, int64_t *q);

/* *q = the nearest integer to x / (m * 2^e), ties to even, computed exactly
   (no f32 division happens). x is read through dn_ftz; m >= 1.
   DN_ERR_INVALID_ARGUMENT for m = 0 or q NULL; DN_ERR_NON_FINITE for ±inf and
   NaN x; DN_ERR_OUT_OF_RANGE when the quotient's rounded value is outside
   int64_t. *q is untouched on error. O(1). */
DN_API dn_status dn_rne_div(float x, uint32_t m, int32_t e, int64_t *q);

/* *out = the sum of terms[i].v * 2^terms[i].e rounded once to f32 (as
   dn_scaled_to_f32 rounds). Let L be the e of the term of largest magnitude
   (of several equal magnitudes, the largest e) and W = L - DN_SUM_WINDOW.
   Every term is floored to a multiple of 2^W (toward -inf, however far below
   2^W it lies: a tiny negative term counts as -2^W), and the floored terms
   are added exactly. So the sum is exact whenever every term's e >= W.
   No terms, or only zero terms, give +0. The result does not depend on the
   order of the terms. Every int64_t v and int32_t e is accepted: the
   accumulator has 256 bits and docs/numerics.md proves no sum of up to
   2^64 terms can overflow it. DN_ERR_INVALID_ARGUMENT for NULL terms with
   n > 0 or NULL out. O(n). */
DN_API dn_status dn_exact_sum(const dn_term *terms, size_t n, float *out);

/* ---- reductions (dispatched; O(n)) ---------------------------------------- */

/* Folds partials by a balanced pairwise tree with dn_fadd: adjacent pairs,
   then pairs of pairs, ...; at a level with an odd count, the last element
   moves up unchanged. For DN_LANES partials: ((l0+l1)+(l2+l3))+... .
   n = 0 gives +0, n = 1 gives dn_ftz(x[0]) (or DN_NAN_BITS for a NaN).
   NULL x gives +0 whatever n (not dn_nan(), unlike the reductions below).
   Reference only (it folds at most a few dozen values). */
DN_API float dn_tree(const float *x, size_t n);

/* sum of x[i]: dn_fadd in DN_LANES lanes (lane l takes elements l, l+32, ...
   in index order, from +0), then dn_tree over the 32 lanes. Empty: +0. */
DN_API float dn_fsum(const float *x, size_t n);

/* sum of a[i]*b[i]: each product dn_fmul, added as dn_fsum adds. */
DN_API float dn_fdot(const float *a, const float *b, size_t n);

/* dn_fdot with products by dn_fmul_tf32. */
DN_API float dn_fdot_tf32(const float *a, const float *b, size_t n);

/* dn_fdot or dn_fdot_tf32 as `unit` names; DN_ERR_INVALID_ARGUMENT for an
   unknown unit, a NULL out, or a NULL array with n > 0. */
DN_API dn_status dn_fdot_unit(dn_fpu unit, const float *a, const float *b, size_t n, float *out);

/* The largest x[i], folded from -inf: a NaN is passed over, a denormal reads
   as a zero, and a largest value that is a zero is +0 whatever zeros it came
   from. Empty or all-NaN: -inf. */
DN_API float dn_fmax(const float *x, size_t n);

/* The largest |x[i]|, folded from +0: a NaN is passed over, a denormal reads
   as zero. Empty or all-NaN: +0. */
DN_API float dn_absmax(const float *x, size_t n);

/* The index of the largest x[i]: the first of equals (the two zeros are
   equal, a denormal reads as a zero), a NaN passed over; 0 when there is no
   element that is not a NaN (including n = 0). */
DN_API size_t dn_argmax(const float *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_FP32_H */
