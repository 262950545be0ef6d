/* SPDX-License-Identifier: MIT */
/*
 * exact_cases.h: what the exact-oracle suites share (test_exact_oracle.c,
 * test_exact_rne.c): the seeded case generator and its environment
 * (DECODENUM_TEST_SEED, DECODENUM_TEST_SCALE), small integer helpers, the
 * oracle of dn_rne_div, the group setup, and the value generators. Each
 * suite is its own program, so the oracle state of exact_model.h is each
 * program's own.
 */
#ifndef DN_TEST_EXACT_CASES_H
#define DN_TEST_EXACT_CASES_H

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gmp.h>
#include <mpfr.h>

#include "decodenum/fp32.h"
#include "exact_model.h"
#include "testutil.h"

static int g_oracle_tie; /* the last oracle_rne_div quotient was exactly k + 1/2 */

#define BASE_CASES 1000000u
#define MAX_TERMS 100
#define MAX_REPORTS 12

/* ---- deterministic PRNG (splitmix64) ------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r) { return splitmix(&r->s); }

/* Uniform in [0, n) (n >= 1; the bias of the modulo is irrelevant here). */
static uint64_t rbelow(rng *r, uint64_t n) { return rnext(r) % n; }
/* Uniform in [lo, hi]. */
static int64_t rrange(rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)rbelow(r, (uint64_t)(hi - lo) + 1);
}
static int rbool(rng *r) { return (int)(rnext(r) >> 63); }
/* Uniform over int32_t (no implementation-defined conversion). */
static int32_t rand_i32(rng *r) { return (int32_t)((int64_t)(rnext(r) >> 32) + INT32_MIN); }

static uint64_t g_seed = UINT64_C(0x0DEC0DE5EEDF00D5);
static double g_scale = 1.0;

/* The generator of case i of a suite: independent of every other case, so a
   failing case can be regenerated from (suite, i) alone. */
static rng case_rng(uint64_t suite, uint64_t i)
{
    rng r = {g_seed ^ (suite * UINT64_C(0xA24BAED4963EE407))};
    r.s += i * UINT64_C(0x9FB21C651E98DF25);
    (void)rnext(&r);
    return r;
}

static size_t scaled_count(size_t base)
{
    double n = (double)base * g_scale;
    if (n < 1000.0) n = 1000.0;
    if (n > 1e10) n = 1e10;
    return (size_t)n;
}

static void read_env(void)
{
    const char *s = getenv("DECODENUM_TEST_SCALE");
    if (s && *s) {
        char *end = NULL;
        errno = 0;
        double f = strtod(s, &end);
        if (errno == 0 && end != s && f > 0.0 && f < 1e6) g_scale = f;
    }
    test_seed_from_env(&g_seed);
}

/* ---- small helpers --------------------------------------------------------- */

static int32_t clamp_e(int64_t e)
{
    if (e < INT32_MIN) return INT32_MIN;
    if (e > INT32_MAX) return INT32_MAX;
    return (int32_t)e;
}

static uint64_t mag64(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

static int bitlen64(uint64_t m)
{
    int b = 0;
    while (m) {
        b++;
        m >>= 1;
    }
    return b;
}

/* A signed value from a magnitude (<= 2^63; 2^63 only when neg). */
static int64_t with_sign(uint64_t mag, int neg)
{
    if (mag > (uint64_t)INT64_MAX) return INT64_MIN;
    return neg ? -(int64_t)mag : (int64_t)mag;
}

static void z_set_u64(mpz_t z, uint64_t m) { mpz_import(z, 1, -1, sizeof m, 0, 0, &m); }

/* The contract of dn_rne_div, from the exact value of x. */
static dn_status oracle_rne_div(float x, uint32_t m, int32_t e, int64_t *q)
{
    if (m == 0) return DN_ERR_INVALID_ARGUMENT;
    switch (fpclassify(x)) {
    case FP_NAN:
    case FP_INFINITE: return DN_ERR_NON_FINITE;
    case FP_ZERO:
    case FP_SUBNORMAL: *q = 0; return DN_OK; /* read through FTZ */
    default: break;
    }
    mpfr_set_flt(O.x24, x, MPFR_RNDN);            /* exact */
    mpfr_exp_t E = mpfr_get_z_2exp(O.num, O.x24); /* x = num * 2^E */
    int64_t d = (int64_t)E - e;                   /* x / (m 2^e) = num 2^d / m */
    /* |num| < 2^64 and m < 2^32: far outside these bounds the answer is
       certain without computing (|quotient| > 2^100, or < 2^-100). */
    if (d > 200) return DN_ERR_OUT_OF_RANGE;
    if (d < -200) {
        *q = 0;
        return DN_OK;
    }
    mpz_set_ui(O.den, m);
    if (d >= 0)
        mpz_mul_2exp(O.num, O.num, (mp_bitcnt_t)d);
    else
        mpz_mul_2exp(O.den, O.den, (mp_bitcnt_t)(-d));
    mpz_fdiv_qr(O.q, O.r, O.num, O.den); /* num = q den + r, 0 <= r < den */
    mpz_mul_2exp(O.r, O.r, 1);
    int c = mpz_cmp(O.r, O.den);
    g_oracle_tie = c == 0;
    if (c > 0 || (c == 0 && mpz_odd_p(O.q))) mpz_add_ui(O.q, O.q, 1);
    if (mpz_cmp(O.q, O.i64min) < 0 || mpz_cmp(O.q, O.i64max) > 0) return DN_ERR_OUT_OF_RANGE;
    *q = (int64_t)mpz_get_si(O.q);
    return DN_OK;
}

/* ---- setup ------------------------------------------------------------------ */

static int group_setup(void **state)
{
    (void)state;
    read_env();
    oracle_init();
    fprintf(stderr, "[ oracle   ] seed 0x%016" PRIx64 ", scale %g; GMP %s, MPFR %s\n", g_seed,
            g_scale, gmp_version, mpfr_get_version());
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    oracle_clear();
    return 0;
}

/* ---- value generators --------------------------------------------------------- */

/* Every draw from the generator is its own statement or the only draw in its
   expression: C leaves the order of function arguments and of operands
   unspecified, and the cases must be the same on every compiler and CPU. */

/* A magnitude of bit length b (1..63) whose bits below position p (the kept
   least place of some rounding) make a tie, or just miss one, or a run of
   ones, or are random. */
static uint64_t gen_pattern(rng *r, int b, int p)
{
    uint64_t top = UINT64_C(1) << (b - 1);
    uint64_t m = top | (rnext(r) & (top - 1));
    if (p < 1 || p > b - 1) p = (int)rrange(r, 1, b > 1 ? b - 1 : 1);
    if (b == 1) return m;
    uint64_t below = (UINT64_C(1) << p) - 1; /* bits under the kept place */
    uint64_t half = UINT64_C(1) << (p - 1);
    switch (rbelow(r, 9)) {
    case 0: return (m & ~below) | half;                           /* exact tie */
    case 1: return (m & ~below) | half | 1;                       /* tie + sticky */
    case 2: return (m & ~below) | (half - 1);                     /* just below the tie */
    case 3: return (m & ~below) | half | (rnext(r) & (half - 1)); /* above the tie, random */
    case 4: return top | (top - 1);                               /* all ones: carries */
    case 5: return top | ((top - 1) & ~below) | half;             /* ones then tie: carry on even */
    case 6: return top;                                           /* power of two */
    case 7: return top | (UINT64_C(1) << rbelow(r, (uint64_t)b)); /* sparse */
    default: return m;                                            /* random */
    }
}

/* Any int64: the extremes, small values, and patterns of every length. */
static int64_t gen_v(rng *r)
{
    switch (rbelow(r, 24)) {
    case 0: return INT64_MIN;
    case 1: return INT64_MAX;
    case 2: return INT64_MIN + 1;
    case 3: return rbool(r) ? 1 : -1;
    case 4: return 0;
    case 5: { /* all 64 bits random (int64_t is two's complement) */
        uint64_t u = rnext(r);
        int64_t v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    case 6: return rbool(r) ? -(int64_t)rbelow(r, 1000) : (int64_t)rbelow(r, 1000);
    default: {
        int b = (int)rrange(r, 1, 63);
        uint64_t mag = gen_pattern(r, b, 0);
        return with_sign(mag, rbool(r));
    }
    }
}

/* An exponent of a "top place" t for a value of bit length b (e = t - b + 1)
   drawn from the places where binary32 rounding has edges. */
static int64_t gen_top(rng *r)
{
    switch (rbelow(r, 16)) {
    case 0:
    case 1: return rrange(r, 124, 129); /* FLT_MAX, overflow */
    case 2:
    case 3: return rrange(r, -129, -124); /* FLT_MIN */
    case 4: return rrange(r, -152, -147); /* least denormal and below */
    case 5:
    case 6:
    case 7: return rrange(r, -152, 129); /* the whole binary32 range */
    case 8: return rrange(r, -40, 40);
    case 9: return rrange(r, -400, 400);
    case 10: return rrange(r, (int64_t)INT32_MIN - 70, (int64_t)INT32_MIN + 200);
    case 11: return rrange(r, (int64_t)INT32_MAX - 200, (int64_t)INT32_MAX + 70);
    case 12: return rand_i32(r);
    default: return rrange(r, -160, 140);
    }
}

/* v * 2^e with its rounding edge placed on purpose: bit length b, top place
   t, and the tie pattern at the kept least place of binary32 (24 bits, or
   the denormal grid's 2^-149). */
static void gen_scaled(rng *r, int64_t *vout, int32_t *eout)
{
    if (rbelow(r, 8) == 0) { /* anything at all */
        *vout = gen_v(r);
        if (rbelow(r, 4) == 0) {
            *eout = rand_i32(r);
        } else {
            int64_t t = gen_top(r);
            *eout = clamp_e(t - 63 + rrange(r, 0, 62));
        }
        return;
    }
    int b = (int)rrange(r, 1, 64);
    int64_t t = gen_top(r);
    int64_t e = t - (b - 1);
    if (e < INT32_MIN) {
        e = INT32_MIN;
        t = e + b - 1;
    }
    if (e > INT32_MAX) {
        e = INT32_MAX;
        t = e + b - 1;
    }
    int64_t lsb = t - 23 < -149 ? -149 : t - 23; /* binary32's kept place */
    int64_t p = lsb - e;                         /* as a bit of v */
    uint64_t mag;
    int neg = rbool(r);
    if (b == 64) {
        mag = UINT64_C(1) << 63;
        neg = 1;
    } else
        mag = gen_pattern(r, b, (p >= 1 && p <= b - 1) ? (int)p : 0);
    *vout = with_sign(mag, neg);
    *eout = (int32_t)e;
}

#endif
