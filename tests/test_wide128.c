/* SPDX-License-Identifier: MIT */
/*
 * The limbs form of src/wide128.h against the compiler's unsigned __int128,
 * operation by operation, on 10^6 random operand pairs of every width (each
 * of 0..128 bits), so that all three division branches (64-bit, divisor
 * below 2^32, shift and subtract) are met. Plain C; built where the
 * compiler has __int128 (tests/CMakeLists.txt).
 */
#define DN_PORTABLE_WIDE 1
#include "wide128.h"

#include <stdio.h>

__extension__ typedef unsigned __int128 u128;

static uint64_t state = 20261201;
static uint64_t next(void)
{
    uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* a random value of a random width 0..128 */
static u128 any(void)
{
    unsigned bits = (unsigned)(next() % 129);
    u128 v = (u128)next() << 64 | next();
    return bits == 128 ? v : v & (((u128)1 << bits) - 1);
}

static dn_u128 limbs(u128 v) { return (dn_u128){(uint64_t)v, (uint64_t)(v >> 64)}; }
static int same(dn_u128 a, u128 b) { return a.lo == (uint64_t)b && a.hi == (uint64_t)(b >> 64); }

int main(void)
{
    long bad = 0, divs[3] = {0, 0, 0};
    for (long i = 0; i < 1000000; i++) {
        u128 a = any(), b = any();
        unsigned k = (unsigned)(next() % 128);
        dn_u128 la = limbs(a), lb = limbs(b);
        bad += !same(dn_u128_add(la, lb), a + b);
        bad += !same(dn_u128_sub(la, lb), a - b);
        bad += !same(dn_u128_shl(la, k), a << k);
        bad += !same(dn_u128_mul(la, lb), a * b);
        bad += !same(dn_u128_mul64(la.lo, lb.lo), (u128)la.lo * lb.lo);
        bad += dn_u128_lt(la, lb) != (a < b);
        if (b == 0) continue;
        dn_u128 r, q = dn_u128_divrem(la, lb, &r);
        bad += !same(q, a / b) || !same(r, a % b);
        divs[(a >> 64) == 0 && (b >> 64) == 0 ? 0 : b <= 0xFFFFFFFFu ? 1 : 2]++;
    }
    printf("wide128: %ld mismatches; divisions: %ld in 64 bits, %ld by a 32-bit divisor, %ld by "
           "shift and subtract\n",
           bad, divs[0], divs[1], divs[2]);
    return bad != 0 || divs[0] == 0 || divs[1] == 0 || divs[2] == 0;
}
