/*
 * test_exact_oracle.c: dn_exact_sum, dn_scaled_to_f32, dn_rne_div and dn_rne
 * held bit for bit to an independent exact computation in GMP and MPFR.
 *
 * Nothing here reuses src/: the expected results are derived from the
 * contract in include/decodenum/fp32.h alone.
 *
 *  - dn_exact_sum: L = e of the largest-magnitude term (MPFR compares the
 *    exact values; of equal magnitudes the largest e), W = L - DN_SUM_WINDOW,
 *    each term floored to a multiple of 2^W (mpz_fdiv_q_2exp), summed in an
 *    mpz, and that exact sum * 2^W rounded once by MPFR to binary32: 24-bit
 *    precision, exponent range of binary32, mpfr_subnormalize for the
 *    denormal grid, then a denormal result becomes a zero of its sign.
 *  - dn_scaled_to_f32(v, e): v * 2^e rounded the same way.
 *  - dn_rne_div(x, m, e): x decoded exactly by MPFR, the quotient
 *    x / (m * 2^e) rounded to the nearest integer (ties to even) by an mpz
 *    floor division and a comparison of twice the remainder with the divisor.
 *  - dn_rne(x): dn_rne_div's oracle with m = 1, e = 0.
 *
 * The rounding oracle is itself checked first (oracle_self_check) against
 * binary32 values and the midpoints between neighbours, which are known
 * without any arithmetic beyond the bit layout of IEEE binary32.
 *
 * Cases come from a splitmix64 generator with a fixed seed (override with
 * DECODENUM_TEST_SEED=<number>), so every failure reproduces; a mismatch
 * prints the case in full. DECODENUM_TEST_SCALE=<factor> scales the case
 * counts (default 1: 10^6 cases for each of the four functions).
 */
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

static int g_oracle_tie;     /* the last oracle_rne_div quotient was exactly k + 1/2 */


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
    while (m) { b++; m >>= 1; }
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
    mpfr_set_flt(O.x24, x, MPFR_RNDN); /* exact */
    mpfr_exp_t E = mpfr_get_z_2exp(O.num, O.x24); /* x = num * 2^E */
    int64_t d = (int64_t)E - e;                  /* x / (m 2^e) = num 2^d / m */
    /* |num| < 2^64 and m < 2^32: far outside these bounds the answer is
       certain without computing (|quotient| > 2^100, or < 2^-100). */
    if (d > 200) return DN_ERR_OUT_OF_RANGE;
    if (d < -200) { *q = 0; return DN_OK; }
    mpz_set_ui(O.den, m);
    if (d >= 0) mpz_mul_2exp(O.num, O.num, (mp_bitcnt_t)d);
    else mpz_mul_2exp(O.den, O.den, (mp_bitcnt_t)(-d));
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
    fprintf(stderr, "[ oracle   ] seed 0x%016" PRIx64 ", scale %g; GMP %s, MPFR %s\n",
            g_seed, g_scale, gmp_version, mpfr_get_version());
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
    uint64_t below = (UINT64_C(1) << p) - 1;     /* bits under the kept place */
    uint64_t half = UINT64_C(1) << (p - 1);
    switch (rbelow(r, 9)) {
    case 0: return (m & ~below) | half;                      /* exact tie */
    case 1: return (m & ~below) | half | 1;                  /* tie + sticky */
    case 2: return (m & ~below) | (half - 1);                /* just below the tie */
    case 3: return (m & ~below) | half | (rnext(r) & (half - 1)); /* above the tie, random */
    case 4: return top | (top - 1);                          /* all ones: carries */
    case 5: return top | ((top - 1) & ~below) | half;        /* ones then tie: carry on even */
    case 6: return top;                                      /* power of two */
    case 7: return top | (UINT64_C(1) << rbelow(r, (uint64_t)b)); /* sparse */
    default: return m;                                       /* random */
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
    case 0: case 1: return rrange(r, 124, 129);    /* FLT_MAX, overflow */
    case 2: case 3: return rrange(r, -129, -124);  /* FLT_MIN */
    case 4: return rrange(r, -152, -147);          /* least denormal and below */
    case 5: case 6: case 7: return rrange(r, -152, 129); /* the whole binary32 range */
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
    if (e < INT32_MIN) { e = INT32_MIN; t = e + b - 1; }
    if (e > INT32_MAX) { e = INT32_MAX; t = e + b - 1; }
    int64_t lsb = t - 23 < -149 ? -149 : t - 23; /* binary32's kept place */
    int64_t p = lsb - e;                          /* as a bit of v */
    uint64_t mag;
    int neg = rbool(r);
    if (b == 64) { mag = UINT64_C(1) << 63; neg = 1; }
    else mag = gen_pattern(r, b, (p >= 1 && p <= b - 1) ? (int)p : 0);
    *vout = with_sign(mag, neg);
    *eout = (int32_t)e;
}

/* ---- exact_sum case generators ---------------------------------------------- */

typedef struct sum_case {
    dn_term t[MAX_TERMS];
    size_t n;
    int kind;
} sum_case;

static const char *const kind_name[] = {"random-cluster", "split-target", "equal-magnitude",
                                        "cancel", "big-accumulate", "tiny-negatives"};

static int push(sum_case *c, int64_t v, int64_t e, rng *r)
{
    if (c->n >= MAX_TERMS || e < INT32_MIN || e > INT32_MAX) return 0;
    dn_term *t = &c->t[c->n++];
    t->v = v;
    t->e = (int32_t)e;
    /* `reserved` is ignored: fill it with garbage now and then. */
    t->reserved = rbelow(r, 4) == 0 ? rand_i32(r) : 0;
    return 1;
}

static size_t gen_count(rng *r)
{
    switch (rbelow(r, 8)) {
    case 0: return 1;
    case 1: return (size_t)rrange(r, 2, 3);
    case 2: case 3: return (size_t)rrange(r, 2, 8);
    case 4: case 5: return (size_t)rrange(r, 2, 20);
    case 6: return (size_t)rrange(r, 20, 60);
    default: return (size_t)rrange(r, 1, MAX_TERMS);
    }
}

/* A place for a cluster of terms: where binary32's edges are, or anywhere. */
static int64_t gen_center(rng *r)
{
    switch (rbelow(r, 16)) {
    case 0: case 1: case 2: return rrange(r, 127 - 64 - 4, 127 - 62 + 4);   /* sums near FLT_MAX */
    case 3: case 4: case 5: return rrange(r, -126 - 64 - 4, -126 - 62 + 4); /* sums near FLT_MIN */
    case 6: case 7: return rrange(r, -149 - 70, -149 - 40);                 /* the denormal grid */
    case 8: case 9: return rrange(r, -200, 200);
    case 10: return rrange(r, INT32_MIN, (int64_t)INT32_MIN + 300);
    case 11: return rrange(r, (int64_t)INT32_MAX - 300, INT32_MAX);
    case 12: return rand_i32(r);
    default: return rrange(r, -100, 40);
    }
}

static int64_t gen_spread(rng *r)
{
    static const int64_t spreads[] = {0, 1, 4, 16, 63, 64, 65, 130, 200, 1000, 5000};
    return spreads[rbelow(r, sizeof spreads / sizeof spreads[0])];
}

/* Terms of any value with leading places spread around a centre (or,
   now and then, their e spread around a centre). */
static void gen_random_cluster(rng *r, sum_case *c)
{
    size_t n = gen_count(r);
    int by_top = rbelow(r, 4) != 0;
    int64_t center = by_top ? gen_top(r) : gen_center(r), spread = gen_spread(r);
    while (c->n < n) {
        int64_t v = gen_v(r);
        int64_t e = center + rrange(r, -spread, spread);
        if (by_top) e -= bitlen64(mag64(v)) - 1;
        push(c, v, clamp_e(e), r);
    }
}

/* The negation of v * 2^e as a term (2^63 becomes 2^62 * 2^(e+1)). */
static int push_neg(sum_case *c, int64_t v, int64_t e, rng *r)
{
    if (v == INT64_MIN) return push(c, INT64_C(1) << 62, e + 1, r);
    return push(c, -v, e, r);
}

/* floor(v / 2^s) and v - that * 2^s, 1 <= s <= 62, without shifting a
   negative number. */
static void split_at(int64_t v, int s, int64_t *hi, int64_t *lo)
{
    int64_t p = INT64_C(1) << s;
    int64_t h = v / p, l = v % p; /* truncating */
    if (l < 0) { h -= 1; l += p; }
    *hi = h;
    *lo = l;
}

/* One value with its rounding edge placed on purpose, then rewritten as
   several terms with the same exact sum (while they stay in the window),
   plus cancelling pairs and far-away terms. */
static void gen_split_target(rng *r, sum_case *c)
{
    int64_t v0;
    int32_t e0;
    gen_scaled(r, &v0, &e0);
    push(c, v0, e0, r);
    size_t ops = (size_t)rbelow(r, 4) == 0 ? (size_t)rrange(r, 0, 60) : (size_t)rrange(r, 0, 8);
    for (size_t k = 0; k < ops && c->n < MAX_TERMS - 2; k++) {
        size_t i = (size_t)rbelow(r, c->n);
        int64_t v = c->t[i].v, e = c->t[i].e;
        switch (rbelow(r, 6)) {
        case 0: { /* v = a + (v - a), a of v's sign and no larger */
            uint64_t m = mag64(v);
            uint64_t am = m == UINT64_MAX ? rnext(r) : rbelow(r, m + 1);
            int64_t a = with_sign(am, v < 0);
            c->t[i].v = v - a;
            push(c, a, e, r);
            break;
        }
        case 1: { /* v 2^e = floor(v / 2^s) 2^(e+s) + rest 2^e */
            int s = (int)rrange(r, 1, 62);
            int64_t hi, lo;
            split_at(v, s, &hi, &lo);
            if (e + s > INT32_MAX) break;
            c->t[i].v = lo;
            push(c, hi, e + s, r);
            break;
        }
        case 2: { /* the same value in another form */
            int s = (int)rrange(r, 1, 62);
            if (v != 0 && mag64(v) < (UINT64_C(1) << (63 - s)) && e - s >= INT32_MIN) {
                c->t[i].v = v * (INT64_C(1) << s);
                c->t[i].e = (int32_t)(e - s);
            } else if (v != 0 && (mag64(v) & ((UINT64_C(1) << s) - 1)) == 0 && e + s <= INT32_MAX) {
                int64_t hi, lo;
                split_at(v, s, &hi, &lo);
                c->t[i].v = hi;
                c->t[i].e = (int32_t)(e + s);
            }
            break;
        }
        case 3: { /* a cancelling pair, in possibly different forms */
            int64_t w = gen_v(r);
            int64_t f = e + rrange(r, -90, rbelow(r, 4) == 0 ? 70 : 0);
            if (f < INT32_MIN || f > INT32_MAX - 1) break;
            push(c, w, f, r);
            int s = (int)rrange(r, 0, 8);
            if (s && w != 0 && w != INT64_MIN && mag64(w) < (UINT64_C(1) << (63 - s)) &&
                f - s >= INT32_MIN)
                push(c, -w * (INT64_C(1) << s), f - s, r);
            else
                push_neg(c, w, f, r);
            break;
        }
        case 4: { /* a term far below any window */
            int64_t w = gen_v(r);
            push(c, w, clamp_e(e - 64 - rrange(r, 1, rbelow(r, 2) ? 200 : 100000)), r);
            break;
        }
        default: { /* a term partly inside the window */
            int64_t w = gen_v(r);
            push(c, w, clamp_e(e - rrange(r, 0, 130)), r);
            break;
        }
        }
    }
}

/* Several terms of exactly the same magnitude u * 2^f written with
   different e (so "the largest e" decides W), of random signs, with small
   terms placed between the windows the different e would give. */
static void gen_equal_magnitude(rng *r, sum_case *c)
{
    int bu = (int)rrange(r, 1, 40);
    uint64_t u = (UINT64_C(1) << (bu - 1)) | (rnext(r) & ((UINT64_C(1) << (bu - 1)) - 1));
    u |= 1; /* odd: its forms are u << s, s >= 0 */
    int64_t f = rbelow(r, 4) ? gen_top(r) - (bu - 1) : gen_center(r);
    int maxs = 63 - bu;
    size_t copies = (size_t)rrange(r, 2, 6);
    for (size_t k = 0; k < copies; k++) {
        int s = (int)rrange(r, 0, maxs);
        int neg = rbool(r);
        push(c, with_sign(u << s, neg), f - s, r);
    }
    if (u == 1 && rbool(r)) push(c, INT64_MIN, f - 63, r); /* 2^63: the widest form */
    size_t small = (size_t)rrange(r, 0, 12);
    for (size_t k = 0; k < small; k++) {
        int64_t e = f - DN_SUM_WINDOW - rrange(r, -4, maxs + 66);
        int64_t v = rbelow(r, 4) ? -(int64_t)rrange(r, 1, 1 << 20) : gen_v(r);
        push(c, v, clamp_e(e), r);
    }
    if (rbool(r)) { /* and something smaller of any kind */
        int64_t w = gen_v(r);
        push(c, w, clamp_e(f - bu - rrange(r, 1, 70)), r);
    }
}

/* Terms and their negations (exact zero while all lie in the window),
   sometimes with one residue left over. */
static void gen_cancel(rng *r, sum_case *c)
{
    size_t pairs = (size_t)rrange(r, 1, rbelow(r, 4) ? 8 : 45);
    int64_t center = gen_center(r);
    int64_t spread = rbelow(r, 3) ? rrange(r, 0, 50) : gen_spread(r);
    for (size_t k = 0; k < pairs; k++) {
        int64_t v = gen_v(r), e = clamp_e(center + rrange(r, 0, spread));
        if (!push(c, v, e, r)) break;
        if (!push_neg(c, v, e, r)) c->n--;
    }
    if (rbool(r)) { /* the residue */
        int64_t v;
        int32_t e;
        gen_scaled(r, &v, &e);
        if (rbool(r)) e = clamp_e(center + rrange(r, -70, 10));
        push(c, v, e, r);
    }
}

/* Many large terms: sums past FLT_MAX, and the accumulator's high limbs. */
static void gen_big(rng *r, sum_case *c)
{
    size_t n = (size_t)rrange(r, 1, MAX_TERMS);
    int64_t L = rbelow(r, 2) ? rrange(r, 127 - 70, 127 - 55) : gen_center(r);
    int same_sign = rbelow(r, 3) != 0;
    int neg = rbool(r);
    for (size_t k = 0; k < n; k++) {
        int64_t v;
        switch (rbelow(r, 4)) {
        case 0: v = neg ? INT64_MIN : INT64_MAX; break;
        case 1: v = with_sign((UINT64_C(1) << 62) | (rnext(r) >> 2), neg); break;
        case 2: v = with_sign(1, neg); break;
        default: v = with_sign(rnext(r) >> 1, neg); break;
        }
        int64_t e = L;
        if (mag64(v) == 1) e = L + 63;          /* as large as 2^63 * 2^L */
        else if (rbelow(r, 4) == 0) e = L - rrange(r, 0, 130);
        if (!same_sign && rbool(r)) v = v == INT64_MIN ? INT64_MAX : -v;
        push(c, v, clamp_e(e), r);
    }
}

/* One term at a rounding edge and many tiny terms far below the window: a
   tiny negative term counts as -2^W, a tiny positive one as 0. */
static void gen_tiny(rng *r, sum_case *c)
{
    int64_t v0;
    int32_t e0;
    gen_scaled(r, &v0, &e0);
    if (v0 == 0) v0 = INT64_MIN;
    push(c, v0, e0, r);
    size_t n = (size_t)rrange(r, 1, rbelow(r, 4) ? 5 : MAX_TERMS - 1);
    for (size_t k = 0; k < n; k++) {
        int64_t v = rbelow(r, 3) ? -(int64_t)rrange(r, 1, 3) : gen_v(r);
        int64_t e = (int64_t)e0 - 64 - rrange(r, 1, rbelow(r, 2) ? 64 : 10000);
        if (rbelow(r, 8) == 0) e = INT32_MIN;
        push(c, v, clamp_e(e), r);
    }
}

static void gen_sum_case(rng *r, sum_case *c)
{
    c->n = 0;
    c->kind = (int)rbelow(r, 6);
    switch (c->kind) {
    case 0: gen_random_cluster(r, c); break;
    case 1: gen_split_target(r, c); break;
    case 2: gen_equal_magnitude(r, c); break;
    case 3: gen_cancel(r, c); break;
    case 4: gen_big(r, c); break;
    default: gen_tiny(r, c); break;
    }
    /* Fisher-Yates: the generators append in a structured order. */
    for (size_t i = c->n; i > 1; i--) {
        size_t j = (size_t)rbelow(r, i);
        dn_term tmp = c->t[i - 1];
        c->t[i - 1] = c->t[j];
        c->t[j] = tmp;
    }
}

/* ---- reporting -------------------------------------------------------------- */

static void print_terms(const dn_term *t, size_t n)
{
    fprintf(stderr, "    dn_term terms[%zu] = {\n", n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "        {%" PRId64 ", %" PRId32 ", %" PRId32 "},\n", t[i].v, t[i].e,
                t[i].reserved);
    fprintf(stderr, "    };\n");
}

/* ---- oracle self check -------------------------------------------------------- */

/* The exact value of a finite binary32 (bits u, FTZ not applied) as mag * 2^exp. */
static void f32_exact(uint32_t u, uint64_t *mag, int64_t *ex)
{
    uint32_t be = (u >> 23) & 0xFFu, fr = u & 0x7FFFFFu;
    if (be == 0) { *mag = fr; *ex = -149; }
    else { *mag = (uint64_t)fr | 0x800000u; *ex = (int64_t)be - 150; }
}

static uint32_t ftz_bits(uint32_t u) { return (u & 0x7F800000u) == 0 ? u & 0x80000000u : u; }

/* Every binary32 value rounds to itself; the midpoint of two neighbours to
   the one with the even significand (FLT_MAX's neighbour above is inf); a
   hair off the midpoint to the nearer; then FTZ. The bits of binary32 alone
   decide all of these, so this checks oracle_round without arithmetic. */
static void oracle_self_check(void **state)
{
    (void)state;
    size_t fails = 0;
    size_t n = scaled_count(200000);
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(99, i);
        uint32_t u;
        switch (rbelow(&r, 6)) {
        case 0: u = (uint32_t)rbelow(&r, 0x1000000u); break;           /* denormals and up */
        case 1: u = 0x7F800000u - 1 - (uint32_t)rbelow(&r, 0x1000000u); break; /* to FLT_MAX */
        case 2: u = 0x00800000u + (uint32_t)rrange(&r, -300, 300); break;      /* FLT_MIN */
        default: u = (uint32_t)rbelow(&r, 0x7F800000u); break;
        }
        uint32_t sign = rbool(&r) ? 0x80000000u : 0;
        uint32_t lo = u, hi = u + 1; /* neighbours in magnitude (hi may be inf) */
        uint64_t mlo;
        int64_t elo;
        f32_exact(lo, &mlo, &elo);
        /* The value itself (written with 40 extra zero bits). */
        z_set_u64(O.s, mlo);
        if (sign) mpz_neg(O.s, O.s);
        mpz_mul_2exp(O.s, O.s, 40);
        uint32_t got = oracle_round(O.s, elo - 40);
        uint32_t want = lo == 0 ? 0 : ftz_bits(sign | lo);
        if (got != want && fails++ < MAX_REPORTS)
            fprintf(stderr, "  self: value 0x%08" PRIx32 ": got 0x%08" PRIx32 "\n", sign | lo, got);
        /* The midpoint lo + ulp/2, as (2 mlo + 1) * 2^(elo - 1) (the ulp of lo
           is 2^elo for every finite lo, the gap to inf included). */
        uint32_t even = (lo & 1) ? hi : lo;
        int shift = (int)rrange(&r, 0, 80); /* the same value, written wider */
        z_set_u64(O.s, 2 * mlo + 1);
        mpz_mul_2exp(O.s, O.s, (mp_bitcnt_t)shift);
        if (sign) mpz_neg(O.s, O.s);
        got = oracle_round(O.s, elo - 1 - shift);
        want = ftz_bits(sign | even);
        if (got != want && fails++ < MAX_REPORTS)
            fprintf(stderr, "  self: midpoint above 0x%08" PRIx32 ": got 0x%08" PRIx32 " want 0x%08" PRIx32 "\n",
                    sign | lo, got, want);
        /* A hair above and below the midpoint (the hair as far down as 2^-3000). */
        int far = (int)rrange(&r, 1, rbool(&r) ? 60 : 3000);
        for (int dir = -1; dir <= 1; dir += 2) {
            z_set_u64(O.s, 2 * mlo + 1);
            mpz_mul_2exp(O.s, O.s, (mp_bitcnt_t)far);
            if (dir > 0) mpz_add_ui(O.s, O.s, 1);
            else mpz_sub_ui(O.s, O.s, 1);
            if (sign) mpz_neg(O.s, O.s);
            got = oracle_round(O.s, elo - 1 - far);
            want = ftz_bits(sign | (dir > 0 ? hi : lo));
            if (lo == 0 && dir < 0) want = sign; /* rounds to a signed zero */
            if (got != want && fails++ < MAX_REPORTS)
                fprintf(stderr, "  self: midpoint%+d above 0x%08" PRIx32 ": got 0x%08" PRIx32 " want 0x%08" PRIx32 "\n",
                        dir, sign | lo, got, want);
        }
    }
    /* A few values written out by hand. */
    static const struct { int64_t v; int64_t e; uint32_t bits; } known[] = {
        {1, 0, 0x3F800000u},
        {-3, -1, 0xBFC00000u},                       /* -1.5 */
        {0x1FFFFFF, 103, 0x7F800000u},               /* FLT_MAX + ulp/2: ties to inf */
        {0x1FFFFFD, 103, 0x7F7FFFFEu},               /* tie between ...FE and ...FF: even */
        {(INT64_C(0x1FFFFFF) << 33) - 1, 70, 0x7F7FFFFFu}, /* just under the tie */
        {0xFFFFFF, -150, 0x00800000u},               /* FLT_MIN - 2^-150: tie -> FLT_MIN */
        {INT64_C(0x1FFFFFD), -151, 0x00000000u},     /* just under: denormal -> 0 */
        {-1, -150, 0x80000000u},                     /* -2^-150 -> -0 */
        {1, -126, 0x00800000u},                      /* FLT_MIN */
        {1, 127, 0x7F000000u},
        {1, 128, 0x7F800000u},
        {INT64_MIN, 64, 0xFF000000u},                /* -2^127 */
        {INT64_MIN, 65, 0xFF800000u},                /* -2^128 -> -inf */
        {INT64_MAX, 0, 0x5F000000u},                 /* 2^63 - 1 -> 2^63 */
        {0x1000001, 0, 0x4B800000u},                 /* 2^24 + 1 -> 2^24 (even) */
        {0x1000003, 0, 0x4B800002u},                 /* 2^24 + 3 -> 2^24 + 4 */
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        z_set_i64(O.s, known[i].v);
        uint32_t got = oracle_round(O.s, known[i].e);
        if (got != known[i].bits && fails++ < MAX_REPORTS)
            fprintf(stderr, "  self: known %zu: got 0x%08" PRIx32 " want 0x%08" PRIx32 "\n", i, got,
                    known[i].bits);
    }
    if (fails) fail_msg("the rounding oracle disagrees with binary32 itself in %zu checks", fails);
}

/* ---- dn_exact_sum -------------------------------------------------------------- */

static void check_sum_case(const sum_case *c, uint64_t idx, size_t *fails)
{
    float got = -1.0f, got2 = -1.0f, got3 = -1.0f;
    dn_status st = dn_exact_sum(c->t, c->n, &got);
    uint32_t want = oracle_exact_sum(c->t, c->n);
    /* Order: the same terms reversed, and shuffled again. */
    dn_term alt[MAX_TERMS];
    for (size_t i = 0; i < c->n; i++) alt[i] = c->t[c->n - 1 - i];
    dn_status st2 = dn_exact_sum(alt, c->n, &got2);
    rng r = case_rng(5, idx);
    for (size_t i = c->n; i > 1; i--) {
        size_t j = (size_t)rbelow(&r, i);
        dn_term tmp = alt[i - 1];
        alt[i - 1] = alt[j];
        alt[j] = tmp;
    }
    dn_status st3 = dn_exact_sum(alt, c->n, &got3);
    if (st == DN_OK && st2 == DN_OK && st3 == DN_OK && tbits(got) == want && tbits(got2) == want &&
        tbits(got3) == want)
        return;
    if ((*fails)++ >= MAX_REPORTS) return;
    fprintf(stderr,
            "  dn_exact_sum case %" PRIu64 " (%s, seed 0x%016" PRIx64 "): expected 0x%08" PRIx32
            " (%a), got 0x%08" PRIx32 " status %d; reversed order 0x%08" PRIx32 " status %d;"
            " shuffled 0x%08" PRIx32 " status %d\n",
            idx, kind_name[c->kind], g_seed, want, (double)tf(want), tbits(got), (int)st, tbits(got2),
            (int)st2, tbits(got3), (int)st3);
    print_terms(c->t, c->n);
}

static void test_exact_sum_random(void **state)
{
    (void)state;
    size_t n = scaled_count(BASE_CASES), fails = 0;
    size_t kinds[6] = {0}, finite[6] = {0}, floored = 0, zeros = 0, infs = 0, flushed = 0, nearmax = 0, ftz = 0;
    sum_case c;
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(1, i);
        gen_sum_case(&r, &c);
        kinds[c.kind]++;
        uint32_t w = oracle_exact_sum(c.t, c.n);
        if ((w & 0x7FFFFFFFu) == 0) zeros++;
        if ((w & 0x7FFFFFFFu) == 0x7F800000u) infs++;
        if ((w & 0x7F800000u) == 0x00800000u) flushed++; /* smallest binade: FTZ edge */
        if ((w & 0x7F800000u) == 0x7F000000u) nearmax++;  /* top binade */
        if ((w & 0x7FFFFFFFu) == 0 && mpz_sgn(O.s) != 0) ftz++; /* a non-zero sum made zero */
        if ((w & 0x7F800000u) != 0 && (w & 0x7F800000u) != 0x7F800000u) finite[c.kind]++;
        floored += (size_t)g_oracle_floored;
        check_sum_case(&c, i, &fails);
    }
    fprintf(stderr,
            "[ oracle   ] dn_exact_sum: %zu cases (cluster %zu, split %zu, equal-magnitude %zu, cancel %zu,"
            " big %zu, tiny %zu); results: %zu zero (%zu of a non-zero sum), %zu inf, %zu in [FLT_MIN, 2 FLT_MIN),"
            " %zu in [2^127, FLT_MAX]; non-zero finite by kind: %zu %zu %zu %zu %zu %zu;"
            " %zu with a negative term floored below the window\n",
            n, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], zeros, ftz, infs, flushed, nearmax,
            finite[0], finite[1], finite[2], finite[3], finite[4], finite[5], floored);
    if (fails) fail_msg("dn_exact_sum differs from the GMP/MPFR oracle in %zu of %zu cases", fails, n);
}

/* Hand-made cases whose answers follow from the contract by inspection; each
   is checked against the literal bits and against the oracle. */
static void test_exact_sum_edges(void **state)
{
    (void)state;
    static const struct {
        dn_term t[6];
        size_t n;
        uint32_t bits;
    } cases[] = {
        {{{0}}, 0, 0x00000000u},
        {{{0, 5, 0}, {0, -7, 0}}, 2, 0x00000000u},
        {{{1, 0, 0}}, 1, 0x3F800000u},
        {{{5, 2, 0}, {-5, 2, 0}}, 2, 0x00000000u}, /* cancellation: +0 */
        {{{-5, 2, 0}, {10, 1, 0}}, 2, 0x00000000u},
        /* (2^24+3) * 2^38 is a tie that rounds up; a tiny positive term far
           below the window floors to 0 (still up), a tiny negative one to
           -2^W (now below the tie: down). */
        {{{INT64_C(0x1000003) << 38, 0, 0}}, 1, 0x5E800002u},
        {{{INT64_C(0x1000003) << 38, 0, 0}, {1, -1000, 0}}, 2, 0x5E800002u},
        {{{INT64_C(0x1000003) << 38, 0, 0}, {-1, -1000, 0}}, 2, 0x5E800001u},
        {{{INT64_C(0x1000003) << 38, 0, 0}, {-1, INT32_MIN, 0}}, 2, 0x5E800001u},
        {{{INT64_C(0x1000003) << 38, 0, 0}, {-1, -64, 0}, {1, -64, 0}}, 3, 0x5E800002u},
        /* Equal magnitudes 2^40: L = 40 (the largest e), W = -24. The two big
           terms cancel; -1 * 2^-30 floors to -2^-24. With L = 0 (the smaller
           e) W would be -64 and the sum -2^-30. */
        {{{1, 40, 0}, {-(INT64_C(1) << 40), 0, 0}, {-1, -30, 0}}, 3, 0xB3800000u},
        {{{-(INT64_C(1) << 40), 0, 0}, {-1, -30, 0}, {1, 40, 0}}, 3, 0xB3800000u},
        /* INT64_MIN * 2^0 and 1 * 2^63 have equal magnitude: L = 63, W = -1. */
        {{{INT64_MIN, 0, 0}, {1, 63, 0}, {-1, -5, 0}}, 3, 0xBF000000u},
        /* Reserved is ignored. */
        {{{3, -1, 12345}, {1, -1, -1}}, 2, 0x40000000u},
        /* FLT_MAX + ulp/2 ties to inf; from two halves. */
        {{{0x1FFFFFE, 103, 0}, {1, 103, 0}}, 2, 0x7F800000u},
        {{{-0x1FFFFFE, 103, 0}, {-1, 103, 0}}, 2, 0xFF800000u},
        /* FLT_MIN - 2^-150 rounds on the denormal grid to FLT_MIN (kept). */
        {{{1, -126, 0}, {-1, -150, 0}}, 2, 0x00800000u},
        /* FLT_MIN - 2^-149 is a denormal: flushed to +0; its negation to -0. */
        {{{1, -126, 0}, {-1, -149, 0}}, 2, 0x00000000u},
        {{{-1, -126, 0}, {1, -149, 0}}, 2, 0x80000000u},
        /* Extreme exponents. */
        {{{INT64_MAX, INT32_MAX, 0}, {INT64_MIN, INT32_MAX, 0}}, 2, 0xFF800000u},
        {{{INT64_MAX, INT32_MIN, 0}}, 1, 0x00000000u},
        {{{INT64_MIN, INT32_MIN, 0}, {1, INT32_MAX, 0}}, 2, 0x7F800000u},
        {{{1, INT32_MIN, 0}, {-1, INT32_MIN, 0}, {1, -150, 0}}, 3, 0x00000000u},
    };
    size_t fails = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = -1.0f;
        dn_status st = dn_exact_sum(cases[i].n ? cases[i].t : NULL, cases[i].n, &got);
        uint32_t want = oracle_exact_sum(cases[i].t, cases[i].n);
        if (st != DN_OK || tbits(got) != cases[i].bits || want != cases[i].bits) {
            fails++;
            fprintf(stderr, "  edge %zu: literal 0x%08" PRIx32 ", oracle 0x%08" PRIx32 ", got 0x%08" PRIx32
                    " status %d\n", i, cases[i].bits, want, tbits(got), (int)st);
            print_terms(cases[i].t, cases[i].n);
        }
    }
    /* Argument errors: *out untouched. */
    dn_term one = {1, 0, 0};
    float out = 7.0f;
    assert_int_equal(dn_exact_sum(NULL, 1, &out), DN_ERR_INVALID_ARGUMENT);
    assert_true(tbits(out) == tbits(7.0f));
    assert_int_equal(dn_exact_sum(&one, 1, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_exact_sum(NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_exact_sum(NULL, 0, &out), DN_OK);
    assert_true(tbits(out) == 0u);
    if (fails) fail_msg("%zu hand-made dn_exact_sum cases failed", fails);
}

/* 100 copies of the largest possible terms at one place: the accumulator's
   top, and the result for every count of them. */
static void test_exact_sum_full_accumulator(void **state)
{
    (void)state;
    static const int32_t places[] = {INT32_MIN, -300, -150, -126 - 63, 0, 64, 65, 127 - 63, INT32_MAX - 63,
                                     INT32_MAX};
    size_t fails = 0;
    dn_term t[MAX_TERMS];
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++) {
        for (int kind = 0; kind < 4; kind++) {
            for (size_t n = 1; n <= MAX_TERMS; n++) {
                for (size_t i = 0; i < n; i++) {
                    int64_t v = kind == 0 ? INT64_MIN : kind == 1 ? INT64_MAX : kind == 2 ? 1 : -1;
                    int32_t e = places[p];
                    /* kind 2, 3: 2^63 * 2^e written as 1 * 2^(e+63), mixed with INT64_MIN */
                    if (kind >= 2 && (i & 1) && e <= INT32_MAX - 63) e += 63;
                    else if (kind >= 2) v = kind == 2 ? INT64_MAX : INT64_MIN;
                    t[i] = (dn_term){v, e, 0};
                }
                float got = -1.0f;
                dn_status st = dn_exact_sum(t, n, &got);
                uint32_t want = oracle_exact_sum(t, n);
                if ((st != DN_OK || tbits(got) != want) && fails++ < MAX_REPORTS) {
                    fprintf(stderr, "  full accumulator: expected 0x%08" PRIx32 ", got 0x%08" PRIx32 "\n", want,
                            tbits(got));
                    print_terms(t, n);
                }
            }
        }
    }
    if (fails) fail_msg("%zu full-accumulator cases failed", fails);
}

/* ---- dn_scaled_to_f32 ---------------------------------------------------------- */

static void test_scaled_to_f32_random(void **state)
{
    (void)state;
    size_t n = scaled_count(BASE_CASES), fails = 0;
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(2, i);
        int64_t v;
        int32_t e;
        gen_scaled(&r, &v, &e);
        uint32_t want = oracle_scaled(v, e);
        uint32_t got = tbits(dn_scaled_to_f32(v, e));
        if (got != want && fails++ < MAX_REPORTS)
            fprintf(stderr, "  dn_scaled_to_f32(%" PRId64 ", %" PRId32 ") case %zu: expected 0x%08" PRIx32
                    " (%a), got 0x%08" PRIx32 " (%a)\n", v, e, i, want, (double)tf(want), got,
                    (double)tf(got));
    }
    /* Every exponent from far below the denormals to past the top, for the
       extreme significands. */
    static const int64_t vs[] = {0, 1, -1, 3, INT64_MIN, INT64_MAX, INT64_MIN + 1, 0xFFFFFF, 0x1FFFFFF,
                                 0x1000001, 0x1000003, -0x2FFFFFF, INT64_C(0x7FFFFF8000000000),
                                 INT64_C(0x7FFFFFC000000000), INT64_C(0x7FFFFF7FFFFFFFFF)};
    for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++) {
        for (int64_t e = -280; e <= 140; e++) {
            uint32_t want = oracle_scaled(vs[k], (int32_t)e);
            uint32_t got = tbits(dn_scaled_to_f32(vs[k], (int32_t)e));
            if (got != want && fails++ < MAX_REPORTS)
                fprintf(stderr, "  dn_scaled_to_f32(%" PRId64 ", %" PRId64 "): expected 0x%08" PRIx32
                        ", got 0x%08" PRIx32 "\n", vs[k], e, want, got);
        }
        for (int32_t d = 0; d < 70; d++) {
            int32_t es[2] = {INT32_MIN + d, INT32_MAX - d};
            for (int j = 0; j < 2; j++) {
                uint32_t want = oracle_scaled(vs[k], es[j]);
                uint32_t got = tbits(dn_scaled_to_f32(vs[k], es[j]));
                if (got != want && fails++ < MAX_REPORTS)
                    fprintf(stderr, "  dn_scaled_to_f32(%" PRId64 ", %" PRId32 "): expected 0x%08" PRIx32
                            ", got 0x%08" PRIx32 "\n", vs[k], es[j], want, got);
            }
        }
    }
    assert_true(tbits(dn_scaled_to_f32(0, INT32_MIN)) == 0u);
    assert_true(tbits(dn_scaled_to_f32(0, INT32_MAX)) == 0u);
    if (fails) fail_msg("dn_scaled_to_f32 differs from the oracle in %zu cases", fails);
}

/* ---- dn_rne_div and dn_rne ------------------------------------------------------ */

static uint32_t gen_m(rng *r)
{
    switch (rbelow(r, 10)) {
    case 0: return 1;
    case 1: return UINT32_C(1) << rbelow(r, 32);
    case 2: return UINT32_MAX;
    case 3: return (uint32_t)rrange(r, 1, 16);
    case 4: return (uint32_t)rrange(r, 1, 1000);
    case 5: return (uint32_t)rnext(r) | 1u;
    case 6: return (uint32_t)((UINT64_C(1) << rrange(r, 1, 32)) - 1);
    default: {
        uint64_t bits = rnext(r);
        uint32_t m = (uint32_t)(bits >> (32 + rbelow(r, 32)));
        return m ? m : 1;
    }
    }
}

static float gen_normal(rng *r, int64_t bexp)
{
    uint32_t frac;
    switch (rbelow(r, 4)) {
    case 0: frac = 0; break;
    case 1: frac = 0x7FFFFFu; break;
    default: frac = (uint32_t)rnext(r) & 0x7FFFFFu; break;
    }
    return tf((rbool(r) ? 0x80000000u : 0) | ((uint32_t)bexp << 23) | frac);
}

/* A case of dn_rne_div (m == 0 possible). */
static void gen_div(rng *r, float *xo, uint32_t *mo, int32_t *eo)
{
    uint32_t m = gen_m(r);
    float x;
    int32_t e;
    switch (rbelow(r, 12)) {
    case 0: { /* anything */
        x = tf((uint32_t)rnext(r));
        e = rbool(r) ? rand_i32(r) : (int32_t)rrange(r, -200, 200);
        break;
    }
    case 1: { /* denormals, zeros, non-finite */
        uint32_t sign = rbool(r) ? 0x80000000u : 0;
        switch (rbelow(r, 4)) {
        case 0: x = tf(sign | (uint32_t)rrange(r, 1, 0x7FFFFF)); break;
        case 1: x = tf(sign); break;
        case 2: x = tf(sign | 0x7F800000u); break;
        default: x = tf(sign | 0x7F800000u | (uint32_t)rrange(r, 1, 0x7FFFFF)); break;
        }
        e = rbool(r) ? rand_i32(r) : (int32_t)rrange(r, -200, 200);
        break;
    }
    case 2: case 3: { /* exact ties: x = (2k+1) m 2^(e-1), and its neighbours */
        int mb = (int)rrange(r, 1, 23);
        m = (uint32_t)((UINT64_C(1) << (mb - 1)) | (rnext(r) & ((UINT64_C(1) << (mb - 1)) - 1)));
        int kb = (int)rrange(r, 1, 24 - mb);
        uint64_t odd = ((UINT64_C(1) << (kb - 1)) | (rnext(r) & ((UINT64_C(1) << (kb - 1)) - 1))) | 1u;
        uint64_t X = odd * m; /* < 2^24: exactly a float */
        int xb = bitlen64(X);
        /* x = X 2^(e-1) normal: -126 <= e - 1 + xb - 1 <= 127 */
        e = (int32_t)rrange(r, -126 - xb + 2, 127 - xb + 2);
        x = ldexpf((float)X, e - 1);
        if (rbool(r)) x = -x;
        if (rbelow(r, 4) == 0) x = nextafterf(x, rbool(r) ? INFINITY : -INFINITY);
        break;
    }
    case 4: { /* quotients around 2^63 (and 2^62 .. 2^64): the int64 edge */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        int64_t qe = rrange(r, 61, 64);
        int64_t ee = (bexp - 127) - (bitlen64(m) - 1) - qe + rrange(r, -1, 1);
        e = clamp_e(ee);
        break;
    }
    case 5: { /* +-2^63 exactly and its neighbours, with m a power of two */
        int j = (int)rbelow(r, 32);
        m = UINT32_C(1) << j;
        int64_t pe = rrange(r, -126, 127);
        e = (int32_t)(pe - 63 - j);
        x = ldexpf(1.0f, (int)pe);
        if (rbool(r)) x = -x;
        int t = (int)rbelow(r, 3);
        if (t == 1) x = nextafterf(x, 0.0f);
        if (t == 2) x = nextafterf(x, x > 0 ? INFINITY : -INFINITY);
        break;
    }
    case 6: { /* e at the int32 limits */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        e = rbool(r) ? (int32_t)rrange(r, INT32_MIN, (int64_t)INT32_MIN + 299)
                     : (int32_t)rrange(r, (int64_t)INT32_MAX - 299, INT32_MAX);
        break;
    }
    case 7: { /* quotients below 1: the round-to-zero / round-to-one edge */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        int64_t qe = rrange(r, -30, 1);
        e = clamp_e((bexp - 127) - (bitlen64(m) - 1) - qe + rrange(r, -1, 1));
        break;
    }
    default: { /* quotients of every size that fits */
        int64_t bexp = rrange(r, 1, 254);
        x = gen_normal(r, bexp);
        int64_t qe = rrange(r, -3, 66);
        e = clamp_e((bexp - 127) - (bitlen64(m) - 1) - qe + rrange(r, -1, 1));
        break;
    }
    }
    if (rbelow(r, 200) == 0) m = 0;
    *xo = x;
    *mo = m;
    *eo = e;
}

static void test_rne_div_random(void **state)
{
    (void)state;
    size_t n = scaled_count(BASE_CASES), fails = 0;
    size_t ok = 0, ties = 0, oor = 0, nonfinite = 0, invalid = 0;
    const int64_t sentinel = INT64_C(0x5A5A5A5A5A5A5A5A);
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(3, i);
        float x;
        uint32_t m;
        int32_t e;
        gen_div(&r, &x, &m, &e);
        int64_t want = sentinel, got = sentinel;
        g_oracle_tie = 0;
        dn_status sw = oracle_rne_div(x, m, e, &want);
        dn_status sg = dn_rne_div(x, m, e, &got);
        if (sw == DN_OK) {
            ok++;
            ties += (size_t)g_oracle_tie;
        }
        if (sw == DN_ERR_OUT_OF_RANGE) oor++;
        if (sw == DN_ERR_NON_FINITE) nonfinite++;
        if (sw == DN_ERR_INVALID_ARGUMENT) invalid++;
        /* m == 0 with a non-finite x: the contract names both errors, either will do. */
        if (m == 0 && !isfinite(x) && (sg == DN_ERR_NON_FINITE || sg == DN_ERR_INVALID_ARGUMENT) &&
            got == sentinel)
            continue;
        if (sg == sw && got == want) continue; /* on error both stay the sentinel */
        if (fails++ < MAX_REPORTS)
            fprintf(stderr, "  dn_rne_div(%a [0x%08" PRIx32 "], %" PRIu32 ", %" PRId32 ") case %zu: expected status %d q %"
                    PRId64 ", got status %d q %" PRId64 "\n", (double)x, tbits(x), m, e, i, (int)sw, want,
                    (int)sg, got);
    }
    int64_t q = 0;
    assert_int_equal(dn_rne_div(1.0f, 1, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rne_div(1.0f, 0, 0, &q), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rne_div(-0x1p63f, 1, 0, &q), DN_OK);
    assert_true(q == INT64_MIN);
    q = 7;
    assert_int_equal(dn_rne_div(0x1p63f, 1, 0, &q), DN_ERR_OUT_OF_RANGE);
    assert_true(q == 7);
    assert_int_equal(dn_rne_div(2.5f, 1, 0, &q), DN_OK);
    assert_true(q == 2);
    assert_int_equal(dn_rne_div(-7.0f, 2, 0, &q), DN_OK); /* -3.5 -> -4 */
    assert_true(q == -4);
    assert_int_equal(dn_rne_div(5.0f, 5, 1, &q), DN_OK); /* 0.5 -> 0 */
    assert_true(q == 0);
    assert_int_equal(dn_rne_div(0x1p-149f, 1, INT32_MIN, &q), DN_OK); /* denormal reads as 0 */
    assert_true(q == 0);
    fprintf(stderr, "[ oracle   ] dn_rne_div: %zu cases: %zu ok (%zu exact ties), %zu out of range, %zu non-finite,"
            " %zu invalid\n", n, ok, ties, oor, nonfinite, invalid);
    if (fails) fail_msg("dn_rne_div differs from the oracle in %zu of %zu cases", fails, n);
}

static float gen_rne_x(rng *r)
{
    uint32_t sign = rbool(r) ? 0x80000000u : 0;
    switch (rbelow(r, 8)) {
    case 0: return tf((uint32_t)rnext(r));
    case 1: { /* k + 1/2, and neighbours */
        float x = (float)rrange(r, 0, (1 << 23) - 1) + 0.5f;
        if (rbelow(r, 3) == 0) x = nextafterf(x, rbool(r) ? INFINITY : 0.0f);
        return sign ? -x : x;
    }
    case 2: { /* around 2^63 */
        float x = 0x1p63f;
        int t = (int)rbelow(r, 4);
        if (t == 1) x = nextafterf(x, 0.0f);
        if (t == 2) x = nextafterf(x, INFINITY);
        if (t == 3) x = tf(0x5F000000u - (uint32_t)rbelow(r, 1000));
        return sign ? -x : x;
    }
    case 3: return tf(sign | (uint32_t)rbelow(r, 0x800000u)); /* denormals */
    case 4: return tf(sign | (uint32_t)rrange(r, 0x3E800000u, 0x3FC00000u)); /* 0.25 .. 1.5 */
    default: return tf(sign | (uint32_t)rrange(r, 0x3F000000u, 0x5F800000u)); /* 0.5 .. 2^64 */
    }
}

static void test_rne_random(void **state)
{
    (void)state;
    size_t n = scaled_count(BASE_CASES), fails = 0;
    const int64_t sentinel = INT64_C(0x3C3C3C3C3C3C3C3C);
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(4, i);
        float x = gen_rne_x(&r);
        int64_t want = sentinel, got = sentinel;
        dn_status sw = oracle_rne_div(x, 1, 0, &want);
        dn_status sg = dn_rne(x, &got);
        if (sg == sw && got == want) continue;
        if (fails++ < MAX_REPORTS)
            fprintf(stderr, "  dn_rne(%a [0x%08" PRIx32 "]) case %zu: expected status %d q %" PRId64
                    ", got status %d q %" PRId64 "\n", (double)x, tbits(x), i, (int)sw, want, (int)sg, got);
    }
    assert_int_equal(dn_rne(1.0f, NULL), DN_ERR_INVALID_ARGUMENT);
    if (fails) fail_msg("dn_rne differs from the oracle in %zu of %zu cases", fails, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oracle_self_check),
        cmocka_unit_test(test_exact_sum_edges),
        cmocka_unit_test(test_exact_sum_full_accumulator),
        cmocka_unit_test(test_exact_sum_random),
        cmocka_unit_test(test_scaled_to_f32_random),
        cmocka_unit_test(test_rne_div_random),
        cmocka_unit_test(test_rne_random),
    };
    return cmocka_run_group_tests_name("exact_oracle", tests, group_setup, group_teardown);
}
