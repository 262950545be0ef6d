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

static inline uint32_t tbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float tf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

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

#endif
