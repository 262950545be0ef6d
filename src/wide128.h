/* SPDX-License-Identifier: MIT */
/*
 * wide128.h: the unsigned 128-bit integer of the exact quotients (dn_rne_div,
 * the activation scales, the sub32 groups' exactness bound), in two forms
 * with the same values:
 *
 *  - unsigned __int128 where the compiler has it (GCC and Clang on every
 *    64-bit target: x86-64, AArch64, ppc64el, s390x);
 *  - two uint64_t limbs elsewhere (32-bit targets: i386, armhf, armel), or
 *    everywhere when DN_PORTABLE_WIDE is defined (CMake option
 *    DECODENUM_PORTABLE_WIDE; the test suite also builds this form on hosts
 *    that have __int128 and runs the exact-integer suites and the digest
 *    through it, tests/CMakeLists.txt).
 *
 * Each operation is the exact operation on integers modulo 2^128 (division
 * exact, den != 0), so a caller's bits cannot depend on the form.
 */
#ifndef DN_WIDE128_H
#define DN_WIDE128_H

#include <stdint.h>

#if defined(__SIZEOF_INT128__) && !defined(DN_PORTABLE_WIDE)

#define DN_WIDE128_NATIVE 1
__extension__ typedef unsigned __int128 dn_u128;

static inline dn_u128 dn_u128_of(uint64_t v) { return v; }
static inline uint64_t dn_u128_lo(dn_u128 a) { return (uint64_t)a; }
static inline uint64_t dn_u128_hi(dn_u128 a) { return (uint64_t)(a >> 64); }
static inline dn_u128 dn_u128_add(dn_u128 a, dn_u128 b) { return a + b; }
static inline dn_u128 dn_u128_sub(dn_u128 a, dn_u128 b) { return a - b; }
/* a * 2^k, 0 <= k < 128 */
static inline dn_u128 dn_u128_shl(dn_u128 a, unsigned k) { return a << k; }
static inline dn_u128 dn_u128_mul(dn_u128 a, dn_u128 b) { return a * b; }
static inline int dn_u128_lt(dn_u128 a, dn_u128 b) { return a < b; }
/* num / den with *rem = num % den; den != 0 */
static inline dn_u128 dn_u128_divrem(dn_u128 num, dn_u128 den, dn_u128 *rem)
{
    *rem = num % den;
    return num / den;
}

#else

#define DN_WIDE128_NATIVE 0
typedef struct dn_u128 {
    uint64_t lo, hi;
} dn_u128;

static inline dn_u128 dn_u128_of(uint64_t v) { return (dn_u128){v, 0}; }
static inline uint64_t dn_u128_lo(dn_u128 a) { return a.lo; }
static inline uint64_t dn_u128_hi(dn_u128 a) { return a.hi; }

static inline dn_u128 dn_u128_add(dn_u128 a, dn_u128 b)
{
    uint64_t lo = a.lo + b.lo;
    return (dn_u128){lo, a.hi + b.hi + (lo < a.lo)};
}

static inline dn_u128 dn_u128_sub(dn_u128 a, dn_u128 b)
{
    return (dn_u128){a.lo - b.lo, a.hi - b.hi - (a.lo < b.lo)};
}

static inline dn_u128 dn_u128_shl(dn_u128 a, unsigned k)
{
    if (k == 0) return a;
    if (k >= 64) return (dn_u128){0, a.lo << (k - 64)};
    return (dn_u128){a.lo << k, a.hi << k | a.lo >> (64 - k)};
}

static inline dn_u128 dn_u128_shr(dn_u128 a, unsigned k)
{
    if (k == 0) return a;
    if (k >= 64) return (dn_u128){a.hi >> (k - 64), 0};
    return (dn_u128){a.lo >> k | a.hi << (64 - k), a.hi >> k};
}

/* The full product of two 64-bit integers, from four 32 x 32 -> 64 ones. */
static inline dn_u128 dn_u128_mul64(uint64_t a, uint64_t b)
{
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    return (dn_u128){(mid << 32) | (p00 & 0xFFFFFFFFu),
                     p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)};
}

/* a * b modulo 2^128 */
static inline dn_u128 dn_u128_mul(dn_u128 a, dn_u128 b)
{
    dn_u128 p = dn_u128_mul64(a.lo, b.lo);
    p.hi += a.lo * b.hi + a.hi * b.lo;
    return p;
}

static inline int dn_u128_lt(dn_u128 a, dn_u128 b)
{
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}

static inline int dn_u128_clz(dn_u128 a)
{
    if (a.hi) return __builtin_clzll(a.hi);
    return a.lo ? 64 + __builtin_clzll(a.lo) : 128;
}

/* num / den with *rem = num % den; den != 0. Both in 64 bits: the machine's
   division; a divisor below 2^32: schoolbook on 32-bit digits (each step's
   dividend below 2^64); else shift and subtract, one quotient bit per step
   (at most 96 steps: the divisor is 2^32 or more). */
static inline dn_u128 dn_u128_divrem(dn_u128 num, dn_u128 den, dn_u128 *rem)
{
    if (num.hi == 0 && den.hi == 0) {
        *rem = dn_u128_of(num.lo % den.lo);
        return dn_u128_of(num.lo / den.lo);
    }
    if (den.hi == 0 && den.lo <= 0xFFFFFFFFu) {
        uint32_t digit[4] = {(uint32_t)(num.hi >> 32), (uint32_t)num.hi, (uint32_t)(num.lo >> 32),
                             (uint32_t)num.lo};
        uint64_t r = 0, q[4];
        for (int i = 0; i < 4; i++) {
            uint64_t cur = r << 32 | digit[i];
            q[i] = cur / den.lo;
            r = cur % den.lo;
        }
        *rem = dn_u128_of(r);
        return (dn_u128){q[2] << 32 | q[3], q[0] << 32 | q[1]};
    }
    dn_u128 q = dn_u128_of(0), r = num;
    if (!dn_u128_lt(num, den)) {
        int shift = dn_u128_clz(den) - dn_u128_clz(num);
        dn_u128 d = dn_u128_shl(den, (unsigned)shift);
        for (int i = shift; i >= 0; i--) {
            q = dn_u128_shl(q, 1);
            if (!dn_u128_lt(r, d)) {
                r = dn_u128_sub(r, d);
                q.lo |= 1;
            }
            d = dn_u128_shr(d, 1);
        }
    }
    *rem = r;
    return q;
}

#endif

#endif
