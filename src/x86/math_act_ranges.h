/* SPDX-License-Identifier: MIT */
/*
 * math_act_ranges.h: the input ranges of the sigmoid, silu, recip and rsqrt
 * fast paths, shared by math_act_avx2.h and math_act_avx512.h, as binary32 bit
 * patterns of |x| (one unsigned compare of the bits tests a range; NaNs
 * and infinities have larger bits than any bound).
 *
 * Both kernels take the sigmoid at the result's own scale (sig_scaled),
 * which the sweep of every binary32 input shows to give the reference's
 * bits for |x| <= 64; with the bound at 80, 348,904 silu inputs differ in
 * the last bit from x = -70.2 on (docs/log/math.md, "The sigmoid family
 * at the result's scale"). Below 2^-60 the reference's silu is flush(x/2),
 * which the kernels write in place of the fast path's value.
 */
#ifndef DN_MATH_ACT_RANGES_H
#define DN_MATH_ACT_RANGES_H

#define DN_SIG_MAX_BITS 0x42800000u   /* bits(64): sigmoid's and silu's fast paths */
#define DN_SILU_TINY_BITS 0x21800000u /* bits(2^-60): silu's fast path starts here */
#define DN_SILU_KEY_MAX (DN_SIG_MAX_BITS - DN_SILU_TINY_BITS) /* |x| bits less 2^-60's */

/* recip_v's fast path, |x| in [2^-64, 2^64], and ln1p's, t below 2^64:
   the reciprocal taken at the argument's own scale (recip_pos_scaled),
   whose y1 r is normal there (r is 0 or at least 2^-47). */
#define DN_RECIP_LOW_BITS 0x1F800000u  /* bits(2^-64) */
#define DN_RECIP_HIGH_BITS 0x5F800000u /* bits(2^64) */

/* rsqrt_v's fast path (AVX2): every positive normal x, as x's bits less
   2^-126's (zeros, denormals and negative x wrap above the maximum,
   infinities and NaNs exceed it). */
#define DN_POS_NORMAL_LOW_BITS 0x00800000u                           /* bits(2^-126) */
#define DN_POS_NORMAL_KEY_MAX (0x7F7FFFFFu - DN_POS_NORMAL_LOW_BITS) /* bits(FLT_MAX) less */

#endif /* DN_MATH_ACT_RANGES_H */
