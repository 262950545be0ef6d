/* SPDX-License-Identifier: MIT */
/*
 * dot_neon_decode.h: the NEON dot kernels' weight digits, 16 elements a
 * register, shared by the matrix-vector kernel (src/neon/dot_neon.c) and
 * the register-blocked matrix product (src/neon/dot_mm_neon.c).
 */
#ifndef DN_DOT_NEON_DECODE_H
#define DN_DOT_NEON_DECODE_H

#include "../dot_kernels.h"
#include "../dot_shared.h"

#include <arm_neon.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

/* ---- the weight digits of 16 elements ------------------------------------------- */

/* 16 bytes, 0xFF where bit i of the 16-bit x is set. */
AI uint8x16_t bits16(uint32_t x)
{
    static const uint8_t bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t v = vcombine_u8(vdup_n_u8((uint8_t)x), vdup_n_u8((uint8_t)(x >> 8)));
    return vtstq_u8(v, vld1q_u8(bit));
}

AI int8x16_t iq4_levels(uint8x16_t idx) { return vqtbl1q_s8(vld1q_s8(dn_iq4_levels), idx); }

/* Digits of elements [16u, 16u + 16) of the block at blk (u < 2 for
   32-element blocks, u < 16 for 256-element ones), as bytes (unsigned values
   0..63, or int8 levels for the signed formats). */
AI int8x16_t digits16(dn_type t, const uint8_t *blk, int u)
{
    const uint8x16_t m4 = vdupq_n_u8(15), m3 = vdupq_n_u8(3), one = vdupq_n_u8(1);
    uint8x16_t q;
    switch (t) {
    case DN_TYPE_Q4_0:
    case DN_TYPE_Q4_1:
    case DN_TYPE_IQ4_NL: {
        uint8x16_t x = vld1q_u8(blk + (t == DN_TYPE_Q4_1 ? 4 : 2));
        q = u ? vshrq_n_u8(x, 4) : vandq_u8(x, m4);
        if (t == DN_TYPE_IQ4_NL) return iq4_levels(q);
        break;
    }
    case DN_TYPE_Q5_0:
    case DN_TYPE_Q5_1: {
        uint32_t qh;
        memcpy(&qh, blk + (t == DN_TYPE_Q5_0 ? 2 : 4), 4);
        uint8x16_t x = vld1q_u8(blk + (t == DN_TYPE_Q5_0 ? 6 : 8));
        q = u ? vshrq_n_u8(x, 4) : vandq_u8(x, m4);
        q = vorrq_u8(q, vandq_u8(bits16(qh >> (16 * u)), vdupq_n_u8(16)));
        break;
    }
    case DN_TYPE_Q8_0: return vld1q_s8((const int8_t *)blk + 2 + 16 * u);
    case DN_TYPE_Q2_K:
    case DN_TYPE_Q3_K: {
        const uint8_t *qs = blk + (t == DN_TYPE_Q2_K ? 16 : 32) + 32 * (u / 8) + 16 * (u % 2);
        q = vandq_u8(vshlq_u8(vld1q_u8(qs), vdupq_n_s8((int8_t)(-2 * ((u % 8) / 2)))), m3);
        if (t == DN_TYPE_Q3_K) {
            uint8x16_t h = vandq_u8(
                vshlq_u8(vld1q_u8(blk + 16 * (u % 2)), vdupq_n_s8((int8_t) - (u / 2))), one);
            q = vorrq_u8(q, vshlq_n_u8(h, 2));
        }
        break;
    }
    case DN_TYPE_Q4_K:
    case DN_TYPE_Q5_K: {
        uint8x16_t x = vld1q_u8(blk + (t == DN_TYPE_Q4_K ? 16 : 48) + 32 * (u / 4) + 16 * (u % 2));
        q = (u % 4) >= 2 ? vshrq_n_u8(x, 4) : vandq_u8(x, m4);
        if (t == DN_TYPE_Q5_K) {
            uint8x16_t h = vandq_u8(
                vshlq_u8(vld1q_u8(blk + 16 + 16 * (u % 2)), vdupq_n_s8((int8_t) - (u / 2))), one);
            q = vorrq_u8(q, vshlq_n_u8(h, 4));
        }
        break;
    }
    case DN_TYPE_Q6_K: {
        int h = u / 8, k = (u % 8) / 2, l = 16 * (u % 2);
        uint8x16_t ql = vld1q_u8(blk + 64 * h + 32 * (k & 1) + l);
        uint8x16_t lo = (k >> 1) ? vshrq_n_u8(ql, 4) : vandq_u8(ql, m4);
        uint8x16_t hi =
            vandq_u8(vshlq_u8(vld1q_u8(blk + 128 + 32 * h + l), vdupq_n_s8((int8_t)(-2 * k))), m3);
        q = vorrq_u8(lo, vshlq_n_u8(hi, 4));
        break;
    }
    case DN_TYPE_IQ4_XS: {
        uint8x16_t x = vld1q_u8(blk + 8 + 16 * (u / 2));
        return iq4_levels(u % 2 ? vshrq_n_u8(x, 4) : vandq_u8(x, m4));
    }
    default: q = vdupq_n_u8(0); break;
    }
    return vreinterpretq_s8_u8(q);
}

#endif
