/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the test suites. */
#ifndef DN_TESTUTIL_H
#define DN_TESTUTIL_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The float bit casts of the tests (their own: the oracle suites take
   nothing from src/). */
static inline uint32_t tbits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static inline float tf(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* Bit-for-bit equality of two floats, shown in hex on failure. */
#define assert_bits(got, want_bits) assert_int_equal(tbits(got), (uint32_t)(want_bits))
#define assert_same_float(got, want) assert_int_equal(tbits(got), tbits(want))

/* DECODENUM_TEST_SEED, when set to a number strtoull reads (any base), in
   place of a suite's default seed. */
static inline void test_seed_from_env(uint64_t *seed)
{
    const char *s = getenv("DECODENUM_TEST_SEED");
    if (!s || !*s) return;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno == 0 && end != s) *seed = (uint64_t)v;
}

/* The suites' seeded generators. Each suite's inputs, and so the extent of
   its documented sweeps, are these exact sequences: keep both algorithms. */

/* splitmix64: the next value of the sequence that *s seeds. */
static inline uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* xorshift64* (test_blocks.c's inputs): *s must not be 0. */
static inline uint64_t xorshift64s(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* Knuth's MMIX LCG (test_quant.c's and sweep_math.c's inputs): the next
   state; take the high bits. */
static inline uint64_t lcg64(uint64_t *s)
{
    *s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return *s;
}

/* Uniform in [lo, hi] from splitmix (the modulo's bias is irrelevant here). */
static inline int64_t between(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(splitmix(s) % (uint64_t)(hi - lo + 1));
}

/* A little-endian 16-bit store, as the block formats hold their halves. */
static inline void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

#endif
