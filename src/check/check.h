/* SPDX-License-Identifier: MIT */
/*
 * check.h: holding every ISA's kernels to the scalar references.
 *
 * One harness, two drivers: `decodenum selftest` runs it with a short plan
 * on every ISA the CPU can run; the test suites run it with the full plan
 * (every length 0..300, random lengths up to 10^6). A kernel "agrees" when
 * every output has the reference's bits.
 */
#ifndef DN_CHECK_H
#define DN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "bits.h" /* dn_bits, dn_from_bits: the float bit casts */
#include "decodenum/common.h"
#include "decodenum/dot.h" /* the repacked checks' arguments */

typedef struct dn_rng {
    uint64_t state;
} dn_rng;

uint64_t dn_rng_next(dn_rng *r);
/* Uniform in [0, bound), bound >= 1. */
uint64_t dn_rng_below(dn_rng *r, uint64_t bound);

/* Input regimes: each draws f32 values to stress a different rule. */
typedef enum dn_regime {
    DN_REGIME_NORMAL,  /* random signs, exponents within 2^±12 */
    DN_REGIME_BITS,    /* uniformly random bit patterns: NaN, inf, denormals */
    DN_REGIME_SPECIAL, /* ±0, denormals, ±FLT_MIN, ±FLT_MAX, ±inf, NaNs, ties */
    DN_REGIME_CANCEL,  /* values with their negatives, and huge values: sums
                           that cancel to zero, overflow, inf - inf */
    DN_REGIME_TINY,    /* around 2^-63: products land near FLT_MIN */
    DN_REGIME_PAIRED,  /* b[i] within ulps of FLT_MIN / a[i]: products at the
                           edge where IEEE rounding and flush modes disagree */
    DN_REGIME_ZEROS,   /* mostly -0, with +0, +-FLT_MIN and denormals: lanes
                           that stay -0, and sums an unflushed denormal moves */
    DN_REGIME_COUNT
} dn_regime;

void dn_fill_f32(dn_rng *r, dn_regime regime, float *x, size_t n);
/* Fills a and b for a binary kernel: a in regime ra and b in rb, except that
   DN_REGIME_PAIRED fills both, so each product a[i]*b[i] lies within a few
   ulps of FLT_MIN. */
void dn_fill_pair(dn_rng *r, dn_regime ra, dn_regime rb, float *a, float *b, size_t n);
void dn_fill_u16(dn_rng *r, uint16_t *x, size_t n);

/* What the harness checks. */
typedef struct dn_check_plan {
    size_t every_length_to;   /* every length 0..every_length_to */
    size_t random_lengths;    /* how many random lengths besides */
    size_t random_length_max; /* up to this */
    uint64_t seed;
} dn_check_plan;

/* One kernel's verdict on one ISA. */
typedef struct dn_check_result {
    const char *module;
    const char *kernel;
    dn_isa isa;
    uint64_t compared;   /* outputs compared */
    uint64_t mismatched; /* outputs whose bits differ */
    char first[200];     /* the first mismatch, described */
} dn_check_result;

typedef void (*dn_check_sink)(const dn_check_result *result, void *ctx);

/* Checks every kernel of every module on `isa` (which must be available);
   returns the number of kernels with any mismatch. */
int dn_check_all(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);

/* The fp32 core's kernels. */
int dn_check_fp32(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);

/* The F16 module's kernels (dot lengths 0..1600, 1-13 rows, 1-6 columns). */
int dn_check_f16(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);

/* The transcendentals module's kernels: the unary array forms on every
   regime plus a spread of the whole binary32 range, softmax, rmsnorm,
   l2norm, rope and hadamard at every plan length. */
int dn_check_math(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);

/* The quantization and quantized dot module's kernels: the exact scale,
   quantize, and mat_vec_rows of every block format under both scalings and
   both word counts (src/check/check_dot.c). */
int dn_check_dot(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);
/* check_dot.c's block formats (the quantized ones, Q4_0 .. IQ4_XS), their
   check names ("mat_vec Q4_0", ...) and random block bytes of a format
   with scales of the mode's kind (integers: pieces on f32 ties; rarely,
   when allow_bad, an infinite or NaN scale; *prev the last scale drawn). */
#define DN_CHECK_DOT_TYPES 12
extern const dn_type dn_check_dot_types[DN_CHECK_DOT_TYPES];
extern const char *const dn_check_dot_names[DN_CHECK_DOT_TYPES];
void dn_check_fill_block(dn_rng *r, dn_type type, uint8_t *blk, size_t bb, int integers,
                         int allow_bad, uint16_t *prev);
struct dn_dot_kernels;
/* check_dot_mm.c: kern's mat_mul_rows (and the repacked products) against
   the reference's on `cases` random matrices and column sets of seed. */
void dn_check_dot_mat_mul(const struct dn_dot_kernels *kern, size_t cases, uint64_t seed,
                          dn_check_result *res);
/* check_repack.c: the repacked products of kern (decodenum/repack.h) on one
   of check_dot.c's cases, against the plain reference's values o_ref,
   status and *bad (mismatches into res). */
struct dn_dot_kernels;
void dn_check_repacked_rows(const struct dn_dot_kernels *kern, dn_type type, const uint8_t *w,
                            size_t rows, size_t n, const struct dn_act_row *act,
                            dn_act_scaling scaling, size_t r0, size_t r1, const float *o_ref,
                            dn_status st_ref, size_t bad_ref, dn_check_result *res);
void dn_check_repacked_mm(const struct dn_dot_kernels *kern, const struct dn_act *x, size_t c0,
                          size_t c1, dn_type type, const uint8_t *w, size_t rows, size_t r0,
                          size_t r1, const float *o_ref, dn_status st_ref, size_t bad_ref,
                          dn_check_result *res);

/* The attention module's kernels: scores and weighted sums over f32, binary16
   and bfloat16 rows, int8 scores and weighted sums (src/check/check_attention.c). */
int dn_check_attention(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);
/* The Gated-DeltaNet module's kernels: rows, flush, fold (trailing
   included), read over S = 16..256 and odd sizes, every store; the
   convolution for 1-8 taps and odd channel counts (src/check/check_gdn.c). */
int dn_check_gdn(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);

/* The element-wise module's kernels: add, sub, mul, scale, axpy, the
   gates, the residual add with RMSNorm, at every plan length and regime,
   even and odd float offsets, in place (src/check/check_vec.c). */
int dn_check_vec(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);
/* The FP8 E4M3 module's kernels: the decoder at the plan's lengths, the
   products at every k 0..700 and random ones, 1-11 rows, 1-6 columns,
   NaN codes, partial blocks, every activation regime (src/check/check_fp8.c). */
int dn_check_fp8(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx);

/* Lengths of a plan, in order: 0..every_length_to, then the random ones. */
size_t dn_plan_lengths(const dn_check_plan *plan, size_t **lengths);

/* Records a mismatch into result (counting it; describing the first). */
void dn_check_mismatch(dn_check_result *result, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
