/* SPDX-License-Identifier: MIT */
/*
 * exact_model.h: an exact model of the engine's one rounding, in GMP and
 * MPFR, shared by the suites that hold exact sums to it (test_exact_oracle,
 * test_dot). Nothing here reuses src/: it follows the contract of
 * dn_exact_sum and dn_scaled_to_f32 in include/decodenum/fp32.h.
 */
#ifndef DN_TEST_EXACT_MODEL_H
#define DN_TEST_EXACT_MODEL_H

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mpfr.h>

#include "decodenum/fp32.h"
#include "testutil.h" /* tbits */

/* int64_t values and exponents pass through GMP's long and MPFR's mpfr_exp_t. */
#if LONG_MAX < INT64_MAX
#error "the exact model needs a 64-bit long (LP64)"
#endif

static void z_set_i64(mpz_t z, int64_t v) { mpz_set_si(z, (long)v); }

/* ---- the oracle ------------------------------------------------------------- */

typedef struct oracle {
    mpz_t s, t, num, den, q, r, i64min, i64max;
    mpfr_t a, b; /* 64-bit: any int64 * 2^e exactly (wide exponent range) */
    mpfr_t f32;  /* 24-bit: the binary32 rounding */
    mpfr_t x24;  /* 24-bit: a decoded binary32 */
} oracle;

static oracle O;
static int g_oracle_floored; /* the last oracle_exact_sum floored a negative term inexactly */
static mpfr_exp_t g_emin_wide, g_emax_wide;

static void oracle_init(void)
{
    mpz_inits(O.s, O.t, O.num, O.den, O.q, O.r, O.i64min, O.i64max, (mpz_ptr)0);
    z_set_i64(O.i64min, INT64_MIN);
    z_set_i64(O.i64max, INT64_MAX);
    mpfr_init2(O.a, 64);
    mpfr_init2(O.b, 64);
    mpfr_init2(O.f32, 24);
    mpfr_init2(O.x24, 24);
    /* int32 exponents plus 64 bits of significand exceed MPFR's default
       range (about +-2^30); widen it to the maximum. */
    g_emin_wide = mpfr_get_emin_min();
    g_emax_wide = mpfr_get_emax_max();
    mpfr_set_emin(g_emin_wide);
    mpfr_set_emax(g_emax_wide);
}

static void oracle_clear(void)
{
    mpz_clears(O.s, O.t, O.num, O.den, O.q, O.r, O.i64min, O.i64max, (mpz_ptr)0);
    mpfr_clears(O.a, O.b, O.f32, O.x24, (mpfr_ptr)0);
    mpfr_free_cache();
}

/* The bits of s * 2^w rounded once to binary32 (nearest, ties to even, IEEE
   denormal grid, overflow to an infinity), then FTZ; zero gives +0. */
static uint32_t oracle_round(const mpz_t s, int64_t w)
{
    if (mpz_sgn(s) == 0) return 0;
    /* binary32 in MPFR's convention (significand in [1/2, 1)): the largest
       finite value is (1 - 2^-24) * 2^128, the least denormal 2^-149 =
       (1/2) * 2^-148. */
    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    int inex = mpfr_set_z_2exp(O.f32, s, (mpfr_exp_t)w, MPFR_RNDN);
    inex = mpfr_subnormalize(O.f32, inex, MPFR_RNDN);
    (void)inex;
    float f = mpfr_get_flt(O.f32, MPFR_RNDN); /* exact: it is a binary32 value */
    mpfr_set_emin(g_emin_wide);
    mpfr_set_emax(g_emax_wide);
    uint32_t u = tbits(f);
    if ((u & 0x7F800000u) == 0) u &= 0x80000000u; /* FTZ: denormal -> signed 0 */
    return u;
}

static uint32_t oracle_scaled(int64_t v, int32_t e)
{
    z_set_i64(O.s, v);
    return oracle_round(O.s, e);
}

static uint32_t oracle_exact_sum(const dn_term *t, size_t n)
{
    /* L: the e of the largest |v| * 2^e; of equal magnitudes the largest e. */
    long best = -1;
    for (size_t i = 0; i < n; i++) {
        if (t[i].v == 0) continue;
        z_set_i64(O.t, t[i].v);
        mpfr_set_z_2exp(O.a, O.t, t[i].e, MPFR_RNDN); /* exact: 64 bits */
        int c = best < 0 ? 1 : mpfr_cmpabs(O.a, O.b);
        if (c > 0 || (c == 0 && t[i].e > t[best].e)) {
            best = (long)i;
            mpfr_swap(O.a, O.b);
        }
    }
    if (best < 0) return 0; /* no terms, or only zeros: +0 */
    int64_t W = (int64_t)t[best].e - DN_SUM_WINDOW;
    mpz_set_ui(O.s, 0);
    g_oracle_floored = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].v == 0) continue;
        z_set_i64(O.t, t[i].v);
        int64_t d = (int64_t)t[i].e - W;
        if (d >= 0) {
            /* No term exceeds the largest, so d <= 127 here. */
            if (d > 200) {
                fprintf(stderr, "oracle: impossible shift %" PRId64 "\n", d);
                abort();
            }
            mpz_mul_2exp(O.t, O.t, (mp_bitcnt_t)d);
        } else {
            if (t[i].v < 0 && !mpz_divisible_2exp_p(O.t, (mp_bitcnt_t)(-d))) g_oracle_floored = 1;
            mpz_fdiv_q_2exp(O.t, O.t, (mp_bitcnt_t)(-d)); /* floor, toward -inf */
        }
        mpz_add(O.s, O.s, O.t);
    }
    return oracle_round(O.s, W);
}

#endif
