/* SPDX-License-Identifier: MIT */
/*
 * neon_common.h: what every NEON kernel shares: the FTZ rule on vectors, the
 * tail masks, and the DN_LANES tree over eight 4-lane accumulators.
 *
 * Why no FPCR flush mode: AArch64's FPCR.FZ flushes operands (as the engine
 * reads them) but also flushes results with tininess detected *before*
 * rounding, so a product whose exact value lies in
 * [2^-126 - 2^-150, 2^-126 - 2^-151) would become 0 where the engine rounds
 * it up to 2^-126 (e.g. (1 - 2^-24) * 2^-126). And unlike x86 there is no
 * "operands only" mode (DAZ) to lean on. So the kernels run in the caller's
 * default environment (round to nearest, no flush) and apply the engine's
 * rule explicitly, exactly where the references apply it: on every operand
 * and on every product and sum. IEEE rounding of a denormal result followed
 * by an explicit flush is what dn_result does, so the bits agree. NaN
 * payloads in between do not matter: any NaN stays a NaN through adds,
 * flushes and the tree, and the final value is canonicalized.
 */
#ifndef DN_NEON_COMMON_H
#define DN_NEON_COMMON_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

/* All ones in lanes whose exponent field is not zero (normals, inf, NaN):
   the lanes FTZ leaves alone. An integer test (CMTST): no FP exception for a
   signalling NaN, no dependence on FPCR. */
static inline uint32x4_t dn_neon_not_tiny(float32x4_t x)
{
    return vtstq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x7F800000u));
}

/* A denormal becomes a zero of its sign; zeros, normals, inf, NaN unchanged:
   x & (not_tiny | sign), three instructions (CMTST, ORR immediate, AND).
   (vcaltq_f32 against FLT_MIN would do too, but GCC expands it to FABS +
   FCMGT, one more.) */
static inline float32x4_t dn_neon_flush(float32x4_t x)
{
    uint32x4_t keep = vorrq_u32(dn_neon_not_tiny(x), vdupq_n_u32(0x80000000u));
    return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(x), keep));
}

/* All ones in lanes that are not a NaN (x == x); a select on it keeps the
   numbers and replaces the NaNs. */
static inline uint32x4_t dn_neon_is_num(float32x4_t x) { return vceqq_f32(x, x); }

/* Lanes with index < count set, for a tail of 0..4 elements. */
static inline uint32x4_t dn_neon_tail_mask(size_t count)
{
    const uint32_t idx[4] = {0, 1, 2, 3};
    return vcgtq_u32(vdupq_n_u32((uint32_t)count), vld1q_u32(idx));
}

/* dn_tree over 32 lanes held as lanes 0-3, 4-7, ..., 28-31 of l[0..7], up to
   its last add (the caller applies dn_result to the value returned).
   vpaddq(a, b) = (a0+a1, a2+a3, b0+b1, b2+b3) keeps the lanes in order, so
   each level of the tree is one row of pairwise adds; every sum is flushed
   as dn_fadd flushes it. */
static inline float dn_neon_tree32(const float32x4_t l[8])
{
    float32x4_t pairs0 = dn_neon_flush(vpaddq_f32(l[0], l[1])); /* (0+1),(2+3),(4+5),(6+7) */
    float32x4_t pairs1 = dn_neon_flush(vpaddq_f32(l[2], l[3]));
    float32x4_t pairs2 = dn_neon_flush(vpaddq_f32(l[4], l[5]));
    float32x4_t pairs3 = dn_neon_flush(vpaddq_f32(l[6], l[7]));
    float32x4_t quads0 =
        dn_neon_flush(vpaddq_f32(pairs0, pairs1)); /* lanes 0-3, 4-7, 8-11, 12-15 */
    float32x4_t quads1 = dn_neon_flush(vpaddq_f32(pairs2, pairs3));   /* lanes 16-19, ..., 28-31 */
    float32x4_t eights = dn_neon_flush(vpaddq_f32(quads0, quads1));   /* 0-7, 8-15, 16-23, 24-31 */
    float32x4_t sixteens = dn_neon_flush(vpaddq_f32(eights, eights)); /* 0-15, 16-31, 0-15, 16-31 */
    return vgetq_lane_f32(sixteens, 0) + vgetq_lane_f32(sixteens, 1);
}

#endif
