/* SPDX-License-Identifier: MIT */
/* bits.h: binary32 bit access and the FTZ/NaN rules every reference uses. */
#ifndef DN_BITS_H
#define DN_BITS_H

#include <float.h>
#include <stdint.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "libdecodenum needs binary32 expressions evaluated in binary32 (FLT_EVAL_METHOD 0)"
#endif

#define DN_SIGN_BIT 0x80000000u
#define DN_EXP_BITS 0x7F800000u
#define DN_FRAC_BITS 0x007FFFFFu

static inline uint32_t dn_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static inline float dn_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* 2^e as a double for e in [-1022, 1023], from its bits: ldexp's general
   handling was a tenth of an activation's preparation (perf of
   decodenum-bench-act-prepare). */
static inline double dn_pow2d(int32_t e)
{
    const uint64_t u = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static inline int dn_is_nan_bits(uint32_t u) { return (u & 0x7FFFFFFFu) > DN_EXP_BITS; }

/* A denormal (exponent field 0, fraction non-zero) becomes a zero of its sign. */
static inline float dn_flush(float x)
{
    uint32_t u = dn_bits(x);
    return (u & DN_EXP_BITS) == 0 ? dn_from_bits(u & DN_SIGN_BIT) : x;
}

/* The engine's result rule: flush a denormal, replace any NaN by DN_NAN_BITS. */
static inline float dn_result(float x)
{
    uint32_t u = dn_bits(x);
    if (dn_is_nan_bits(u)) return dn_from_bits(0x7FC00000u);
    return (u & DN_EXP_BITS) == 0 ? dn_from_bits(u & DN_SIGN_BIT) : x;
}

/* m / 2^k rounded to nearest, ties to even, for any k >= 0. */
static inline uint64_t dn_rne_shift(uint64_t m, unsigned k)
{
    if (k == 0) return m;
    if (k > 64) return 0;
    uint64_t q = k == 64 ? 0 : m >> k;
    uint64_t rest = k == 64 ? m : m & ((UINT64_C(1) << k) - 1);
    uint64_t half = UINT64_C(1) << (k - 1);
    if (rest > half || (rest == half && (q & 1))) q++;
    return q;
}

#endif
