/* Small helpers shared by the test suites. */
#ifndef DN_TESTUTIL_H
#define DN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static inline uint32_t tbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float tf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

/* Bit-for-bit equality of two floats, shown in hex on failure. */
#define assert_bits(got, want_bits) assert_int_equal(tbits(got), (uint32_t)(want_bits))
#define assert_same_float(got, want) assert_int_equal(tbits(got), tbits(want))

#endif
