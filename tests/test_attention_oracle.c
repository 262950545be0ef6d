/* SPDX-License-Identifier: MIT */
/*
 * test_attention_oracle.c: dn_int8_score and dn_weighted_int8 held bit for
 * bit to an independent exact model (GMP and MPFR, tests/exact_model.h),
 * 10^5 random cases each (DECODENUM_TEST_SCALE scales the counts,
 * DECODENUM_TEST_SEED changes the seed). Nothing here reuses src/'s
 * arithmetic: the model follows docs/numerics.md 13.4 and 13.5.
 *
 *  - int8_score: the key's binary16 scale decoded from its bits, per query
 *    block the integer m * sig * sum(code * key) at 2^(e + exp), the terms
 *    summed by the exact model of dn_exact_sum (window, flooring, one
 *    rounding). Queries come from dn_quantize_head of floats whose blocks
 *    lie up to 2^+-60 apart (so the window floors terms), or are built with
 *    any scales m * 2^e; keys are any int8 codes under any finite scale.
 *    Both the public function (the reference) and the active ISA's kernel
 *    (scores_int8) are compared.
 *  - weighted_int8: w_j = p_j * scale_j rounded by MPFR (FTZ), the least
 *    2^e with 127 * 2^e >= max |w_j| found by comparison, the codes
 *    rint(w_j / 2^e), the integer sums, each block's piece rounded by MPFR
 *    and added to the output by an MPFR add rounded to binary32 (FTZ).
 *    The public function (the active kernel) and the reference.
 */
#include <math.h>

#include "decodenum.h"
#include "exact_model.h"
#include "testutil.h"

#include "../src/attention_kernels.h"
#include "../src/dispatch.h"

#define BASE_CASES 100000u

typedef uint64_t rng;

static uint64_t next(rng *r) { return splitmix(r); }

static uint64_t below(rng *r, uint64_t n) { return splitmix(r) % n; }

static unsigned cases(void)
{
    const char *s = getenv("DECODENUM_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    return f > 0 ? (unsigned)(BASE_CASES * f) + 1 : BASE_CASES;
}

/* A finite binary16 scale: typical, subnormal, zero, negative, largest. */
static uint16_t some_f16(rng *r)
{
    uint64_t z = next(r);
    uint16_t h = (uint16_t)(z & 0x7BFF);
    if ((z >> 16) % 4) h = (uint16_t)((h & 0x83FF) | ((9 + (z >> 20) % 8) << 10));
    if ((z >> 24) % 16 == 0) h &= 0x83FF; /* subnormal or zero */
    return (uint16_t)(h | ((z >> 30) % 8 == 0 ? 0x8000 : 0));
}

/* The binary16 h as sig * 2^ex (finite). */
static void f16_parts(uint16_t h, int64_t *sig, int32_t *ex)
{
    int E = (h >> 10) & 31, f = h & 1023;
    *sig = E ? 1024 + f : f;
    *ex = E ? E - 25 : -24;
    if (h & 0x8000) *sig = -*sig;
}

/* ---- int8_score -------------------------------------------------------------------------- */

static uint32_t model_score(const dn_act_row *q, size_t d, uint16_t h, const int8_t *key)
{
    int64_t sig;
    int32_t ex;
    f16_parts(h, &sig, &ex);
    dn_term t[64];
    size_t nb = q->n / q->block;
    for (size_t b = 0; b < nb; b++) {
        int64_t dot = 0;
        for (size_t i = b * q->block; i < (b + 1) * q->block && i < d; i++)
            dot += (int64_t)q->codes[i] * key[i];
        t[b] = (dn_term){(int64_t)q->scales[b].m * sig * dot, q->scales[b].e + ex, 0};
    }
    return oracle_exact_sum(t, nb);
}

/* A query: quantized from floats with blocks 2^k apart, or built by hand. */
static void some_query(rng *r, size_t d, dn_act_row *row, float *x)
{
    int scaling = (int)below(r, 2), words = 1 + (int)below(r, 2);
    int spread = (int)below(r, 4);
    for (size_t i = 0; i < d; i++) {
        int k = spread == 0   ? 0
                : spread == 1 ? (int)(i / 32 % 3) * 20 - 20
                              : (int)below(r, 121) - 60;
        x[i] = ldexpf((float)((int64_t)(next(r) >> 40) - (1 << 23)) / (float)(1 << 23), k);
        if (below(r, 16) == 0) x[i] = 0.0f;
    }
    row->words = (dn_words)words;
    assert_int_equal(dn_quantize_head(x, d, (dn_act_scaling)scaling, (dn_words)words, row, NULL),
                     DN_OK);
    if (below(r, 5)) return;
    for (size_t b = 0; b < row->n / row->block; b++) {
        row->scales[b].m = 1 + (int32_t)below(r, 255);
        row->scales[b].e = (int32_t)below(r, 301) - 150;
    }
}

static void int8_score_against_the_model(void **state)
{
    (void)state;
    oracle_init();
    uint64_t seed = 0xA77E;
    test_seed_from_env(&seed);
    rng r = seed;
    const dn_attention_kernels *kern = dn_kernels_active()->attention;
    int16_t codes[1024];
    dn_act_scale sc[32];
    float x[1024];
    int8_t key[1024];
    unsigned n = cases(), bad = 0, floored = 0;
    for (unsigned c = 0; c < n; c++) {
        size_t d = below(&r, 8) ? 1 + below(&r, 256) : 1 + below(&r, 1024);
        dn_act_row row = {codes, sc, 0, 0, DN_WORDS_ONE};
        some_query(&r, d, &row, x);
        for (size_t i = 0; i < d; i++) key[i] = (int8_t)next(&r);
        uint16_t h = some_f16(&r);
        uint32_t want = model_score(&row, d, h, key);
        floored += (unsigned)g_oracle_floored;
        float got, k1;
        assert_int_equal(dn_int8_score(&row, h, key, d, &got), DN_OK);
        kern->scores_int8(&row, 1, d, key, d, &h, 1, 1, 1.0f, &k1);
        if (tbits(got) != want || tbits(k1) != want) {
            if (bad++ < 10)
                printf("  case %u d=%zu h=0x%04x: model 0x%08x, reference 0x%08x, kernel 0x%08x\n",
                       c, d, h, want, tbits(got), tbits(k1));
        }
    }
    printf("  int8_score: %u cases (%u with a negative term floored past the window), %u differ\n",
           n, floored, bad);
    oracle_clear();
    assert_int_equal(bad, 0);
}

/* ---- weighted_int8 ------------------------------------------------------------------------- */

static float ftz_of(float x)
{
    return (tbits(x) & 0x7F800000u) == 0 ? tf(tbits(x) & 0x80000000u) : x;
}

/* a * b (finite) rounded once to binary32, FTZ on operands and result. */
static float model_mul(float a, float b)
{
    a = ftz_of(a), b = ftz_of(b);
    if (a == 0.0f || b == 0.0f) return tf((tbits(a) ^ tbits(b)) & 0x80000000u);
    int ea, eb;
    double fa = frexp(a, &ea), fb = frexp(b, &eb);
    int64_t ma = (int64_t)ldexp(fa, 24), mb = (int64_t)ldexp(fb, 24);
    return tf(oracle_scaled(ma * mb, ea + eb - 48));
}

static mpfr_t g_sum;

/* a + b rounded once to binary32, FTZ on operands and result (finite). */
static float model_add(float a, float b)
{
    a = ftz_of(a), b = ftz_of(b);
    if (!isfinite(a) || !isfinite(b)) {
        float r = a + b; /* IEEE: inf + finite, inf + -inf = NaN */
        return r != r ? tf(0x7FC00000u) : r;
    }
    mpfr_set_flt(g_sum, a, MPFR_RNDN);
    mpfr_add_d(g_sum, g_sum, (double)b, MPFR_RNDN); /* 600 bits: exact */
    if (mpfr_zero_p(g_sum)) return (tbits(a) & tbits(b) & 0x80000000u) ? -0.0f : 0.0f;
    mpz_t z;
    mpz_init(z);
    mpfr_exp_t e = mpfr_get_z_2exp(z, g_sum);
    uint32_t u = oracle_round(z, e);
    mpz_clear(z);
    return tf(u);
}

static void model_weighted(const float *p, size_t n, const uint16_t *hs, const int8_t *v, size_t d,
                           float *out)
{
    for (size_t i = 0; i < d; i++) out[i] = 0.0f;
    for (size_t j0 = 0; j0 < n; j0 += 32) {
        size_t m = n - j0 < 32 ? n - j0 : 32;
        float w[32];
        double amax = 0.0;
        for (size_t j = 0; j < m; j++) {
            int64_t sig;
            int32_t ex;
            f16_parts(hs[j0 + j], &sig, &ex);
            w[j] = model_mul(p[j0 + j], (float)ldexp((double)sig, ex));
            if (fabs((double)w[j]) > amax) amax = fabs((double)w[j]);
        }
        if (!isfinite(amax) || amax != amax) {
            for (size_t i = 0; i < d; i++) out[i] = tf(0x7FC00000u);
            continue;
        }
        int e = 0;
        if (amax > 0) {
            e = -200;
            while (127.0 * ldexp(1.0, e) < amax) e++;
        }
        for (size_t i = 0; i < d; i++) {
            int64_t s = 0;
            for (size_t j = 0; j < m; j++)
                s += (int64_t)nearbyint(ldexp((double)w[j], -e)) * v[(j0 + j) * d + i];
            out[i] = model_add(out[i], tf(oracle_scaled(s, e)));
        }
    }
}

static void some_probabilities(rng *r, float *p, size_t n)
{
    int how = (int)below(r, 3);
    for (size_t j = 0; j < n; j++) {
        uint64_t z = next(r);
        if (how == 0)
            p[j] = (float)(z >> 40) * 0x1p-24f / (float)n; /* a distribution */
        else if (how == 1)
            p[j] = ldexpf((float)(z >> 40) * 0x1p-24f, -(int)(z % 140)); /* down to FTZ */
        else
            p[j] =
                tf((uint32_t)(z % 0x7F000000u) | (uint32_t)(z >> 63 << 31)); /* any finite sign */
    }
}

static void weighted_int8_against_the_model(void **state)
{
    (void)state;
    oracle_init();
    mpfr_init2(g_sum, 600);
    uint64_t seed = 0x3E16;
    test_seed_from_env(&seed);
    rng r = seed;
    float p[300], want[64], got[64], ref[64];
    uint16_t hs[300];
    int8_t v[300 * 64];
    unsigned n = cases(), bad = 0;
    for (unsigned c = 0; c < n; c++) {
        size_t np = below(&r, 8) ? 1 + below(&r, 80) : 1 + below(&r, 300);
        size_t d = below(&r, 8) ? 1 + below(&r, 24) : 1 + below(&r, 64);
        some_probabilities(&r, p, np);
        for (size_t j = 0; j < np; j++) hs[j] = some_f16(&r);
        for (size_t i = 0; i < np * d; i++) v[i] = (int8_t)next(&r);
        model_weighted(p, np, hs, v, d, want);
        dn_status st = dn_weighted_int8(p, np, hs, 1, v, d, d, got);
        dn_ref_attn_weighted_int8(p, 1, np, v, d, hs, 1, d, ref);
        int differ = memcmp(want, got, d * 4) != 0 || memcmp(want, ref, d * 4) != 0;
        int inf = 0;
        for (size_t i = 0; i < d; i++) inf |= !isfinite(want[i]);
        if (st != (inf ? DN_ERR_NON_FINITE : DN_OK)) differ = 1;
        if (differ && bad++ < 10) {
            for (size_t i = 0; i < d; i++)
                if (tbits(want[i]) != tbits(got[i]) || tbits(want[i]) != tbits(ref[i])) {
                    printf("  case %u n=%zu d=%zu i=%zu: model 0x%08x, kernel 0x%08x, reference "
                           "0x%08x\n",
                           c, np, d, i, tbits(want[i]), tbits(got[i]), tbits(ref[i]));
                    break;
                }
        }
    }
    printf("  weighted_int8: %u cases, %u differ\n", n, bad);
    mpfr_clear(g_sum);
    oracle_clear();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(int8_score_against_the_model),
        cmocka_unit_test(weighted_int8_against_the_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
