/* SPDX-License-Identifier: MIT */
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
 * dn_rne_div and dn_rne are in test_exact_rne.c; what both programs share
 * is in exact_cases.h.
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
#include "exact_cases.h"

/* ---- exact_sum case generators ---------------------------------------------- */

typedef struct sum_case {
    dn_term t[MAX_TERMS];
    size_t n;
    int kind;
} sum_case;

static const char *const kind_name[] = {"random-cluster", "split-target",   "equal-magnitude",
                                        "cancel",         "big-accumulate", "tiny-negatives"};

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
    case 2:
    case 3: return (size_t)rrange(r, 2, 8);
    case 4:
    case 5: return (size_t)rrange(r, 2, 20);
    case 6: return (size_t)rrange(r, 20, 60);
    default: return (size_t)rrange(r, 1, MAX_TERMS);
    }
}

/* A place for a cluster of terms: where binary32's edges are, or anywhere. */
static int64_t gen_center(rng *r)
{
    switch (rbelow(r, 16)) {
    case 0:
    case 1:
    case 2: return rrange(r, 127 - 64 - 4, 127 - 62 + 4); /* sums near FLT_MAX */
    case 3:
    case 4:
    case 5: return rrange(r, -126 - 64 - 4, -126 - 62 + 4); /* sums near FLT_MIN */
    case 6:
    case 7: return rrange(r, -149 - 70, -149 - 40); /* the denormal grid */
    case 8:
    case 9: return rrange(r, -200, 200);
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
    if (l < 0) {
        h -= 1;
        l += p;
    }
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
        if (mag64(v) == 1)
            e = L + 63; /* as large as 2^63 * 2^L */
        else if (rbelow(r, 4) == 0)
            e = L - rrange(r, 0, 130);
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
    if (be == 0) {
        *mag = fr;
        *ex = -149;
    } else {
        *mag = (uint64_t)fr | 0x800000u;
        *ex = (int64_t)be - 150;
    }
}

static uint32_t ftz_bits(uint32_t u) { return (u & 0x7F800000u) == 0 ? u & 0x80000000u : u; }

/* Case i of the self check: a binary32 value, the midpoint above it, and a
   hair either side of that midpoint. */
static void self_check_value(size_t i, size_t *nfails)
{
    size_t fails = *nfails;
    rng r = case_rng(99, i);
    uint32_t u;
    switch (rbelow(&r, 6)) {
    case 0: u = (uint32_t)rbelow(&r, 0x1000000u); break;                   /* denormals and up */
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
        fprintf(stderr,
                "  self: midpoint above 0x%08" PRIx32 ": got 0x%08" PRIx32 " want 0x%08" PRIx32
                "\n",
                sign | lo, got, want);
    /* A hair above and below the midpoint (the hair as far down as 2^-3000). */
    int far = (int)rrange(&r, 1, rbool(&r) ? 60 : 3000);
    for (int dir = -1; dir <= 1; dir += 2) {
        z_set_u64(O.s, 2 * mlo + 1);
        mpz_mul_2exp(O.s, O.s, (mp_bitcnt_t)far);
        if (dir > 0)
            mpz_add_ui(O.s, O.s, 1);
        else
            mpz_sub_ui(O.s, O.s, 1);
        if (sign) mpz_neg(O.s, O.s);
        got = oracle_round(O.s, elo - 1 - far);
        want = ftz_bits(sign | (dir > 0 ? hi : lo));
        if (lo == 0 && dir < 0) want = sign; /* rounds to a signed zero */
        if (got != want && fails++ < MAX_REPORTS)
            fprintf(stderr,
                    "  self: midpoint%+d above 0x%08" PRIx32 ": got 0x%08" PRIx32
                    " want 0x%08" PRIx32 "\n",
                    dir, sign | lo, got, want);
    }
    *nfails = fails;
}

/* A few values written out by hand. */
static void self_check_known(size_t *nfails)
{
    size_t fails = *nfails;
    static const struct {
        int64_t v;
        int64_t e;
        uint32_t bits;
    } known[] = {
        {1, 0, 0x3F800000u},
        {-3, -1, 0xBFC00000u},                             /* -1.5 */
        {0x1FFFFFF, 103, 0x7F800000u},                     /* FLT_MAX + ulp/2: ties to inf */
        {0x1FFFFFD, 103, 0x7F7FFFFEu},                     /* tie between ...FE and ...FF: even */
        {(INT64_C(0x1FFFFFF) << 33) - 1, 70, 0x7F7FFFFFu}, /* just under the tie */
        {0xFFFFFF, -150, 0x00800000u},                     /* FLT_MIN - 2^-150: tie -> FLT_MIN */
        {INT64_C(0x1FFFFFD), -151, 0x00000000u},           /* just under: denormal -> 0 */
        {-1, -150, 0x80000000u},                           /* -2^-150 -> -0 */
        {1, -126, 0x00800000u},                            /* FLT_MIN */
        {1, 127, 0x7F000000u},
        {1, 128, 0x7F800000u},
        {INT64_MIN, 64, 0xFF000000u}, /* -2^127 */
        {INT64_MIN, 65, 0xFF800000u}, /* -2^128 -> -inf */
        {INT64_MAX, 0, 0x5F000000u},  /* 2^63 - 1 -> 2^63 */
        {0x1000001, 0, 0x4B800000u},  /* 2^24 + 1 -> 2^24 (even) */
        {0x1000003, 0, 0x4B800002u},  /* 2^24 + 3 -> 2^24 + 4 */
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        z_set_i64(O.s, known[i].v);
        uint32_t got = oracle_round(O.s, known[i].e);
        if (got != known[i].bits && fails++ < MAX_REPORTS)
            fprintf(stderr, "  self: known %zu: got 0x%08" PRIx32 " want 0x%08" PRIx32 "\n", i, got,
                    known[i].bits);
    }
    *nfails = fails;
}

/* Every binary32 value rounds to itself; the midpoint of two neighbours to
   the one with the even significand (FLT_MAX's neighbour above is inf); a
   hair off the midpoint to the nearer; then FTZ. The bits of binary32 alone
   decide all of these, so this checks oracle_round without arithmetic. */
static void oracle_self_check(void **state)
{
    (void)state;
    size_t fails = 0;
    size_t n = scaled_count(200000);
    for (size_t i = 0; i < n; i++) self_check_value(i, &fails);
    self_check_known(&fails);
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
            idx, kind_name[c->kind], g_seed, want, (double)tf(want), tbits(got), (int)st,
            tbits(got2), (int)st2, tbits(got3), (int)st3);
    print_terms(c->t, c->n);
}

static void test_exact_sum_random(void **state)
{
    (void)state;
    size_t n = scaled_count(BASE_CASES), fails = 0;
    size_t kinds[6] = {0}, finite[6] = {0}, floored = 0, zeros = 0, infs = 0, flushed = 0,
           nearmax = 0, ftz = 0;
    sum_case c;
    for (size_t i = 0; i < n; i++) {
        rng r = case_rng(1, i);
        gen_sum_case(&r, &c);
        kinds[c.kind]++;
        uint32_t w = oracle_exact_sum(c.t, c.n);
        if ((w & 0x7FFFFFFFu) == 0) zeros++;
        if ((w & 0x7FFFFFFFu) == 0x7F800000u) infs++;
        if ((w & 0x7F800000u) == 0x00800000u) flushed++;        /* smallest binade: FTZ edge */
        if ((w & 0x7F800000u) == 0x7F000000u) nearmax++;        /* top binade */
        if ((w & 0x7FFFFFFFu) == 0 && mpz_sgn(O.s) != 0) ftz++; /* a non-zero sum made zero */
        if ((w & 0x7F800000u) != 0 && (w & 0x7F800000u) != 0x7F800000u) finite[c.kind]++;
        floored += (size_t)g_oracle_floored;
        check_sum_case(&c, i, &fails);
    }
    fprintf(stderr,
            "[ oracle   ] dn_exact_sum: %zu cases (cluster %zu, split %zu, equal-magnitude %zu, "
            "cancel %zu,"
            " big %zu, tiny %zu); results: %zu zero (%zu of a non-zero sum), %zu inf, %zu in "
            "[FLT_MIN, 2 FLT_MIN),"
            " %zu in [2^127, FLT_MAX]; non-zero finite by kind: %zu %zu %zu %zu %zu %zu;"
            " %zu with a negative term floored below the window\n",
            n, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], zeros, ftz, infs,
            flushed, nearmax, finite[0], finite[1], finite[2], finite[3], finite[4], finite[5],
            floored);
    if (fails)
        fail_msg("dn_exact_sum differs from the GMP/MPFR oracle in %zu of %zu cases", fails, n);
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
            fprintf(stderr,
                    "  edge %zu: literal 0x%08" PRIx32 ", oracle 0x%08" PRIx32 ", got 0x%08" PRIx32
                    " status %d\n",
                    i, cases[i].bits, want, tbits(got), (int)st);
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
    static const int32_t places[] = {INT32_MIN, -300, -150,     -126 - 63,      0,
                                     64,        65,   127 - 63, INT32_MAX - 63, INT32_MAX};
    size_t fails = 0;
    dn_term t[MAX_TERMS];
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++) {
        for (int kind = 0; kind < 4; kind++) {
            for (size_t n = 1; n <= MAX_TERMS; n++) {
                for (size_t i = 0; i < n; i++) {
                    int64_t v = kind == 0 ? INT64_MIN : kind == 1 ? INT64_MAX : kind == 2 ? 1 : -1;
                    int32_t e = places[p];
                    /* kind 2, 3: 2^63 * 2^e written as 1 * 2^(e+63), mixed with INT64_MIN */
                    if (kind >= 2 && (i & 1) && e <= INT32_MAX - 63)
                        e += 63;
                    else if (kind >= 2)
                        v = kind == 2 ? INT64_MAX : INT64_MIN;
                    t[i] = (dn_term){v, e, 0};
                }
                float got = -1.0f;
                dn_status st = dn_exact_sum(t, n, &got);
                uint32_t want = oracle_exact_sum(t, n);
                if ((st != DN_OK || tbits(got) != want) && fails++ < MAX_REPORTS) {
                    fprintf(stderr,
                            "  full accumulator: expected 0x%08" PRIx32 ", got 0x%08" PRIx32 "\n",
                            want, tbits(got));
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
            fprintf(stderr,
                    "  dn_scaled_to_f32(%" PRId64 ", %" PRId32 ") case %zu: expected 0x%08" PRIx32
                    " (%a), got 0x%08" PRIx32 " (%a)\n",
                    v, e, i, want, (double)tf(want), got, (double)tf(got));
    }
    /* Every exponent from far below the denormals to past the top, for the
       extreme significands. */
    static const int64_t vs[] = {0,
                                 1,
                                 -1,
                                 3,
                                 INT64_MIN,
                                 INT64_MAX,
                                 INT64_MIN + 1,
                                 0xFFFFFF,
                                 0x1FFFFFF,
                                 0x1000001,
                                 0x1000003,
                                 -0x2FFFFFF,
                                 INT64_C(0x7FFFFF8000000000),
                                 INT64_C(0x7FFFFFC000000000),
                                 INT64_C(0x7FFFFF7FFFFFFFFF)};
    for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++) {
        for (int64_t e = -280; e <= 140; e++) {
            uint32_t want = oracle_scaled(vs[k], (int32_t)e);
            uint32_t got = tbits(dn_scaled_to_f32(vs[k], (int32_t)e));
            if (got != want && fails++ < MAX_REPORTS)
                fprintf(stderr,
                        "  dn_scaled_to_f32(%" PRId64 ", %" PRId64 "): expected 0x%08" PRIx32
                        ", got 0x%08" PRIx32 "\n",
                        vs[k], e, want, got);
        }
        for (int32_t d = 0; d < 70; d++) {
            int32_t es[2] = {INT32_MIN + d, INT32_MAX - d};
            for (int j = 0; j < 2; j++) {
                uint32_t want = oracle_scaled(vs[k], es[j]);
                uint32_t got = tbits(dn_scaled_to_f32(vs[k], es[j]));
                if (got != want && fails++ < MAX_REPORTS)
                    fprintf(stderr,
                            "  dn_scaled_to_f32(%" PRId64 ", %" PRId32 "): expected 0x%08" PRIx32
                            ", got 0x%08" PRIx32 "\n",
                            vs[k], es[j], want, got);
            }
        }
    }
    assert_true(tbits(dn_scaled_to_f32(0, INT32_MIN)) == 0u);
    assert_true(tbits(dn_scaled_to_f32(0, INT32_MAX)) == 0u);
    if (fails) fail_msg("dn_scaled_to_f32 differs from the oracle in %zu cases", fails);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oracle_self_check),
        cmocka_unit_test(test_exact_sum_edges),
        cmocka_unit_test(test_exact_sum_full_accumulator),
        cmocka_unit_test(test_exact_sum_random),
        cmocka_unit_test(test_scaled_to_f32_random),
    };
    return cmocka_run_group_tests_name("exact_oracle", tests, group_setup, group_teardown);
}
