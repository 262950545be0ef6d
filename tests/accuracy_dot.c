/* SPDX-License-Identifier: MIT */
/*
 * accuracy_dot: how far the engine's quantized dot product lies from the
 * exact dot of the stored weights with the f32 activations, under each
 * activation scaling and word count, beside ggml's own activation schemes
 * on the same data.
 *
 * For each of the twelve formats the array reads, rows of Gaussian weights
 * (sigma 0.02) are quantized into ggml's byte layout by the simple quantizers
 * of accuracy_quantizers.c and read back with dn_read_row: the exact weights are the coded
 * rows' a*coef + b*offs. Activations x (f32, length 4096) are Gaussian N(0,1)
 * or outlier-heavy (Gaussian; 1% of the elements times 50..100; four fixed
 * channels times 1000). Per (weight row, activation) pair:
 *
 *  - exact: sum w_i x_i in exact integer arithmetic (every product is an
 *    integer times a power of two; products are added in 128-bit buckets
 *    per power of two, the buckets combined in GMP), rounded once to double
 *    with MPFR.
 *  - the library: dn_quantize (Sub32) or dn_quantize_blocks (per block, the
 *    format's block), one or two words, then dn_mat_vec.
 *  - ggml Q8_K (quantize_row_q8_K_ref): per 256, max = the element of
 *    largest magnitude (the first of equals), iscale = -127/max in f32,
 *    code = nearest (ties to even) of iscale*x in f32, at most 127, d = 1/iscale
 *    in f32; value code*d.
 *  - ggml Q8_0 (quantize_row_q8_0_ref): per 32, d = amax/127 in f32,
 *    id = 1/d in f32 (from the f32 d), code = roundf(x*id) (halves away from
 *    zero), the stored scale d rounded to binary16; value code*f16(d).
 *    The two ggml dots are computed exactly from the quantized values
 *    against the exact weights, so they carry only the activation scheme's
 *    error (ggml's own f32 accumulation would add to it).
 *
 * Errors: |result - exact| / |exact| and / sum |w_i x_i| (the latter stays
 * meaningful when the dot cancels). The test asserts what holds by
 * construction (see check_row for the bound's derivation), prints the table
 * of medians and maxima over the rows, and fails on any violation.
 *
 * Extent: 8 activations x 16 rows = 128 rows per format and distribution by
 * default (about a second); `accuracy_dot --full` (or
 * DECODENUM_ACCURACY_FULL=1) 16 x 64 = 1024. DECODENUM_TEST_SEED=<n>
 * changes the seed.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mpfr.h>

#include "accuracy_quantizers.h"
#include "decodenum.h"
#include "testutil.h"

#if LONG_MAX < INT64_MAX
#error "accuracy_dot needs a 64-bit long (LP64)"
#endif

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

#define N 4096 /* row length */
#define WEIGHT_SIGMA 0.02
#define N_OUTLIER_CHANNELS 4

static size_t g_samples = 8; /* activation vectors per format and distribution */
static size_t g_rows = 16;   /* weight rows per activation vector */
static uint64_t g_seed = 0x5EEDACC0DEULL;
static size_t g_outlier_channel[N_OUTLIER_CHANNELS];

/* ---- random numbers --------------------------------------------------------- */

/* uniform in (0, 1) */
static double uniform(uint64_t *s) { return ((double)(splitmix(s) >> 11) + 0.5) * 0x1p-53; }

static double gaussian(uint64_t *s)
{
    const double two_pi = 6.283185307179586476925286766559;
    return sqrt(-2.0 * log(uniform(s))) * cos(two_pi * uniform(s));
}

/* ---- weights: Gaussian values quantized into ggml's byte layouts (the
   quantizers are in accuracy_quantizers.c) ----------------------------------- */

typedef enum { ACT_Q8_0, ACT_Q8_K } ggml_act;

typedef struct format {
    dn_type type;
    const char *name;
    void (*put)(const float *v, uint8_t *b);
    ggml_act ggml;  /* the activation type ggml's CPU dot pairs with it */
    double max_rms; /* the quantizer's relative RMS error must stay below it */
} format;

static const format formats[] = {
    {DN_TYPE_Q4_0, "Q4_0", put_q4_0, ACT_Q8_0, 0.15},
    {DN_TYPE_Q4_1, "Q4_1", put_q4_1, ACT_Q8_0, 0.15}, /* Q8_1: Q8_0's codes and d */
    {DN_TYPE_Q5_0, "Q5_0", put_q5_0, ACT_Q8_0, 0.08},
    {DN_TYPE_Q5_1, "Q5_1", put_q5_1, ACT_Q8_0, 0.08}, /* Q8_1 */
    {DN_TYPE_Q8_0, "Q8_0", put_q8_0, ACT_Q8_0, 0.01},
    {DN_TYPE_Q2_K, "Q2_K", put_q2_k, ACT_Q8_K, 0.50},
    {DN_TYPE_Q3_K, "Q3_K", put_q3_k, ACT_Q8_K, 0.30},
    {DN_TYPE_Q4_K, "Q4_K", put_q4_k, ACT_Q8_K, 0.15},
    {DN_TYPE_Q5_K, "Q5_K", put_q5_k, ACT_Q8_K, 0.08},
    {DN_TYPE_Q6_K, "Q6_K", put_q6_k, ACT_Q8_K, 0.05},
    {DN_TYPE_IQ4_NL, "IQ4_NL", put_iq4_nl, ACT_Q8_0, 0.15},
    {DN_TYPE_IQ4_XS, "IQ4_XS", put_iq4_xs, ACT_Q8_K, 0.15},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

/* rows x N weights of format f, Gaussian(0, WEIGHT_SIGMA), into bytes (zeroed
   here); the original values into orig when it is not NULL */
static void make_weights(const format *f, size_t rows, uint64_t *s, uint8_t *bytes, float *orig)
{
    size_t be = dn_type_block_elements(f->type), bb = dn_type_block_bytes(f->type);
    float v[256];
    memset(bytes, 0, rows * (N / be) * bb);
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < N / be; k++) {
            for (size_t e = 0; e < be; e++) v[e] = (float)(WEIGHT_SIGMA * gaussian(s));
            if (orig) memcpy(orig + r * N + k * be, v, be * sizeof(float));
            f->put(v, bytes + (r * (N / be) + k) * bb);
        }
}

/* The exact weights of a stored row as integers W_i, w_i = W_i * 2^-24:
   a*coef + b*offs with binary16 scales sig * 2^exp, exp in -24..5, so
   W_i = sig_a*coef*2^(exp_a+24) + sig_b*offs*2^(exp_b+24), |W_i| < 2^53. */
static void exact_weights(dn_type type, const uint8_t *bytes, int64_t *W)
{
    static int16_t coef[N], offs[N];
    static dn_segment seg[N / 32];
    dn_coded_row row = {coef, offs, seg, N, 0};
    assert_int_equal(dn_read_row(type, bytes, N, &row, NULL), DN_OK);
    for (size_t k = 0; k < row.nsegments; k++) {
        const dn_segment *g = &seg[k];
        if (g->a.sig) assert_true(g->a.exp >= -24 && g->a.exp <= 5);
        if (g->b.sig) assert_true(g->b.exp >= -24 && g->b.exp <= 5);
        int64_t A = g->a.sig ? (int64_t)g->a.sig * ((int64_t)1 << (g->a.exp + 24)) : 0;
        int64_t B = g->b.sig ? (int64_t)g->b.sig * ((int64_t)1 << (g->b.exp + 24)) : 0;
        for (size_t i = g->first; i < g->first + g->count; i++) W[i] = A * coef[i] + B * offs[i];
    }
}

/* ---- exact sums ------------------------------------------------------------------
   A sum of terms v * 2^e (v a 128-bit integer, |v| < 2^100, e >= ACC_BASE)
   kept in one 128-bit bucket per e: a row adds at most 4096 terms to a
   bucket, so a bucket stays below 2^112. acc_mpz combines the buckets
   exactly (the value is the mpz times 2^ACC_BASE). */

#define ACC_BASE (-448)
#define ACC_TOP 320
typedef struct acc {
    i128 b[ACC_TOP - ACC_BASE];
    int lo, hi; /* buckets in use: [lo, hi] */
} acc;

static void acc_clear(acc *a)
{
    if (a->hi >= a->lo) memset(&a->b[a->lo], 0, (size_t)(a->hi - a->lo + 1) * sizeof(i128));
    a->lo = INT_MAX;
    a->hi = INT_MIN;
}

static void acc_add(acc *a, i128 v, int e)
{
    if (v == 0) return;
    u128 mag = v < 0 ? (u128)0 - (u128)v : (u128)v;
    if (mag >> 100 || e < ACC_BASE || e >= ACC_TOP)
        fail_msg("acc_add: term out of range (e %d)", e);
    int k = e - ACC_BASE;
    a->b[k] += v;
    if (k < a->lo) a->lo = k;
    if (k > a->hi) a->hi = k;
}

static mpz_t g_t;

static void mpz_set_i128(mpz_t z, i128 v)
{
    u128 mag = v < 0 ? (u128)0 - (u128)v : (u128)v;
    mpz_set_ui(z, (unsigned long)(uint64_t)(mag >> 64));
    mpz_mul_2exp(z, z, 64);
    mpz_add_ui(z, z, (unsigned long)(uint64_t)mag);
    if (v < 0) mpz_neg(z, z);
}

static void acc_mpz(const acc *a, mpz_t z)
{
    mpz_set_ui(z, 0);
    for (int k = a->lo; k <= a->hi; k++) {
        if (a->b[k] == 0) continue;
        mpz_set_i128(g_t, a->b[k]);
        mpz_mul_2exp(g_t, g_t, (mp_bitcnt_t)k);
        mpz_add(z, z, g_t);
    }
}

/* a binary32 as M * 2^E, M a signed integer (|M| < 2^24); 0 for zeros */
static int32_t f32_parts(float x, int *E)
{
    uint32_t u = tbits(x);
    int32_t ef = (int32_t)((u >> 23) & 255), M = (int32_t)(u & 0x7FFFFF);
    if (ef == 255) fail_msg("f32_parts: non-finite value");
    if (ef != 0) M |= 0x800000;
    *E = (ef != 0 ? ef : 1) - 150;
    return (u >> 31) ? -M : M;
}

static void mpz_set_f32(mpz_t z, float x)
{
    int E;
    int32_t M = f32_parts(x, &E);
    mpz_set_si(z, M);
    if (M != 0) mpz_mul_2exp(z, z, (mp_bitcnt_t)(E - ACC_BASE));
}

static mpfr_t g_f;

/* z * 2^ACC_BASE rounded once to double (nearest, ties to even) */
static double mpz_double(const mpz_t z)
{
    mpfr_set_z_2exp(g_f, z, ACC_BASE, MPFR_RNDN);
    return mpfr_get_d(g_f, MPFR_RNDN);
}

/* ---- ggml's activation schemes (references of quantize_row_q8_K_ref and
   quantize_row_q8_0_ref in ggml/src/ggml-quants.c) ----------------------------------- */

/* Q8_K, per 256: codes and the f32 d of each block */
static void ggml_q8_k(const float *x, int8_t *codes, float *d)
{
    for (size_t k = 0; k < N / 256; k++) {
        const float *xb = x + 256 * k;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 256; j++)
            if (fabsf(xb[j]) > amax) {
                amax = fabsf(xb[j]);
                max = xb[j];
            }
        if (amax == 0.0f) {
            d[k] = 0.0f;
            memset(codes + 256 * k, 0, 256);
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < 256; j++) {
            float p = iscale * xb[j]; /* f32 product */
            long v = lrintf(p);       /* nearest, ties to even (ggml's nearest_int) */
            codes[256 * k + j] = (int8_t)(v > 127 ? 127 : v);
        }
        d[k] = 1.0f / iscale;
    }
}

/* Q8_0, per 32: codes from the f32 d, the binary16 d stored */
static void ggml_q8_0(const float *x, int8_t *codes, uint16_t *dh)
{
    for (size_t k = 0; k < N / 32; k++) {
        const float *xb = x + 32 * k;
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) amax = amax > fabsf(xb[j]) ? amax : fabsf(xb[j]);
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dh[k] = dn_f32_to_f16(d);
        for (int j = 0; j < 32; j++) codes[32 * k + j] = (int8_t)roundf(xb[j] * id);
    }
}

/* ---- the sweep -------------------------------------------------------------------- */

enum { DIST_GAUSS, DIST_OUTLIER, N_DISTS };
static const char *dist_name[N_DISTS] = {"Gaussian", "outliers"};

/* schemes: the library's four, then ggml's two */
enum { S_SUB32_1, S_SUB32_2, S_BLOCK_1, S_BLOCK_2, S_Q8_K, S_Q8_0, N_SCHEMES };
static const char *scheme_name[N_SCHEMES] = {"Sub32 1w",     "Sub32 2w",  "per-block 1w",
                                             "per-block 2w", "ggml Q8_K", "ggml Q8_0"};

static void make_activation(int dist, uint64_t *s, float *x)
{
    for (size_t i = 0; i < N; i++) {
        double g = gaussian(s);
        if (dist == DIST_OUTLIER && uniform(s) < 0.01) g *= 50 + 50 * uniform(s);
        x[i] = (float)g;
    }
    if (dist == DIST_OUTLIER)
        for (int c = 0; c < N_OUTLIER_CHANNELS; c++) x[g_outlier_channel[c]] *= 1000.0f;
}

/* One library configuration's activation, checked element by element:
   s = m * 2^e is the least grid value (m in lo..2lo-1) with bound * s >= amax
   (the grid value below it falls short), |code| <= bound, and
   |x - code * s| <= s / 2, all compared exactly in double (every quantity
   has at most 24 significant bits within 2^60 of each other). */
typedef struct lib_act {
    dn_act_row row;
    int16_t codes[N];
    dn_act_scale scales[N / 32];
    double smax[N / 32]; /* (1 + 1/lo) * amax / bound: the largest scale the rule allows */
} lib_act;

static void quantize_checked(const float *x, int scheme, size_t wblock, lib_act *a)
{
    int two = scheme == S_SUB32_2 || scheme == S_BLOCK_2;
    int per_block = scheme == S_BLOCK_1 || scheme == S_BLOCK_2;
    dn_words words = two ? DN_WORDS_TWO : DN_WORDS_ONE;
    size_t block = per_block ? wblock : 32;
    double bound = two ? 32767 : 127, lo = per_block ? 128 : 8;
    a->row = (dn_act_row){a->codes, a->scales, N, 0, words};
    size_t bad = 0;
    dn_status st = per_block ? dn_quantize_blocks(x, N, block, words, &a->row, &bad)
                             : dn_quantize(x, N, words, &a->row, &bad);
    assert_int_equal(st, DN_OK);
    assert_int_equal(a->row.block, block);
    for (size_t k = 0; k < N / block; k++) {
        double amax = absmax(x + block * k, (int)block);
        dn_act_scale sc = a->scales[k];
        double s = ldexp(sc.m, sc.e);
        a->smax[k] = (1 + 1 / lo) * amax / bound;
        if (amax == 0) continue;
        assert_true(sc.m >= lo && sc.m < 2 * lo);
        double below = sc.m == lo ? ldexp(2 * lo - 1, sc.e - 1) : ldexp(sc.m - 1, sc.e);
        assert_true(bound * s >= amax);
        assert_true(bound * below < amax);
        for (size_t i = block * k; i < block * (k + 1); i++) {
            assert_true(abs(a->codes[i]) <= bound);
            assert_true(fabs((double)x[i] - a->codes[i] * s) <= s / 2);
        }
    }
}

typedef struct stats {
    double *rel, *rel_sum; /* per row */
    size_t n;
} stats;

static stats g_stats[N_FORMATS][N_DISTS][N_SCHEMES];
static double g_worst_bound_ratio = 0; /* the largest |lib - exact| / bound met */

static void record(stats *st, double err, double exact, double sum_abs)
{
    st->rel[st->n] = err / fabs(exact);
    st->rel_sum[st->n] = err / sum_abs;
    st->n++;
}

/* Per (row, activation): the exact dot, each scheme's error, and the bounds.

   The library's error, by construction. Let s_i be the scale of x_i's
   activation block and x^_i = code_i * s_i. Rounding to nearest gives
   |x_i - x^_i| <= s_i / 2, and the least scale on the grid m*2^e with m in
   lo..2lo-1 (lo = 8 Sub32, 128 per block) covering amax / bound satisfies
   s_i <= (1 + 1/lo) * amax_i / bound (amax_i: the largest |x| of the
   block; the grid's step is at most 1/lo of its value). So the quantized
   dot Q = sum w_i x^_i is within

       E_q = sum |w_i| * s_i / 2 <= sum |w_i| * (1 + 1/lo) * amax_i / (2 * bound)

   of the exact one. The library then rounds: each of the row's k pieces
   (Sub32 groups of 256, or weight blocks) is its terms' exact sum (up to
   2^-64 relative per term past dn_exact_sum's window) rounded once to f32
   (relative error u = 2^-24), and the k pieces are added in order with
   f32 adds; by the standard bound of recursive summation the result is
   within gamma_(k+1) * sum |w_i x^_i| of Q (gamma_j = j*u / (1 - j*u)), and
   sum |w_i x^_i| <= sum |w_i| (|x_i| + s_i / 2). A flushed denormal piece
   or input adds less than 2^-100 here. Hence

       |lib - exact| <= sum |w_i| smax_i / 2
                        + gamma_(k+1) * sum |w_i| (|x_i| + smax_i / 2) + 2^-100,

   asserted for every row (the double sums above are within 2^-40
   relative; the bound carries a factor 1 + 2^-30). Separately, with the
   library's own scales: |Q - exact| <= sum |w_i| s_i / 2 and
   |lib - Q| <= gamma_(k+1) * sum |w_i x^_i| + 2^-100. */
typedef struct row_ctx {
    const int64_t *W;
    const float *x;
    lib_act *lib[4];
    const int8_t *q8k;
    const float *q8k_d;
    const int8_t *q80;
    const uint16_t *q80_dh;
    size_t wblock;
} row_ctx;

static acc g_acc;
static mpz_t g_exact, g_z, g_diff;

static double diff_double(const mpz_t a, const mpz_t b)
{
    mpz_sub(g_diff, a, b);
    mpz_abs(g_diff, g_diff);
    return mpz_double(g_diff);
}

static double gamma_k(double k) { return k * 0x1p-24 / (1 - k * 0x1p-24); }

static void check_row(const row_ctx *c, const float lib_out[4], size_t fi, int dist)
{
    const int64_t *W = c->W;
    const float *x = c->x;
    /* exact: sum W_i * M_i * 2^(E_i - 24) */
    acc_clear(&g_acc);
    double sum_abs = 0;
    for (size_t i = 0; i < N; i++) {
        int E;
        int32_t M = f32_parts(x[i], &E);
        acc_add(&g_acc, (i128)W[i] * M, E - 24);
        sum_abs += fabs((double)W[i] * 0x1p-24 * x[i]);
    }
    acc_mpz(&g_acc, g_exact);
    double exact = mpz_double(g_exact);

    for (int sch = S_SUB32_1; sch <= S_BLOCK_2; sch++) {
        const lib_act *a = c->lib[sch];
        size_t blk = a->row.block;
        size_t pieces = sch <= S_SUB32_2 ? N / DN_GROUP : N / c->wblock;
        double g = gamma_k((double)pieces + 1);
        double eq_own = 0, eq_max = 0, abs_q = 0, abs_qmax = 0;
        acc_clear(&g_acc);
        for (size_t k = 0; k < N / blk; k++) {
            i128 sum = 0;
            dn_act_scale sc = a->scales[k];
            double s = ldexp(sc.m, sc.e), smax = a->smax[k];
            for (size_t i = blk * k; i < blk * (k + 1); i++) {
                double wa = fabs((double)W[i]) * 0x1p-24;
                sum += (i128)W[i] * a->codes[i];
                eq_own += wa * s / 2;
                eq_max += wa * smax / 2;
                abs_q += wa * fabs(a->codes[i] * s);
                abs_qmax += wa * (fabs((double)x[i]) + smax / 2);
            }
            acc_add(&g_acc, sum * sc.m, sc.e - 24);
        }
        acc_mpz(&g_acc, g_z); /* Q */
        const double slack = 1 + 0x1p-30, tiny = 0x1p-100;
        double q_err = diff_double(g_z, g_exact);
        mpz_set_f32(g_diff, lib_out[sch]);
        mpz_sub(g_diff, g_diff, g_z);
        mpz_abs(g_diff, g_diff);
        double round_err = mpz_double(g_diff);
        mpz_set_f32(g_z, lib_out[sch]);
        double err = diff_double(g_z, g_exact);
        double bound = (eq_max + g * abs_qmax + tiny) * slack;
        if (!(q_err <= eq_own * slack) || !(round_err <= (g * abs_q + tiny) * slack) ||
            !(err <= bound))
            fail_msg("%s %s %s: |lib - exact| %.6g (bound %.6g), |Q - exact| %.6g (bound %.6g), "
                     "|lib - Q| %.6g (bound %.6g)",
                     formats[fi].name, dist_name[dist], scheme_name[sch], err, bound, q_err, eq_own,
                     round_err, g * abs_q + tiny);
        if (err / bound > g_worst_bound_ratio) g_worst_bound_ratio = err / bound;
        record(&g_stats[fi][dist][sch], err, exact, sum_abs);
    }

    /* ggml Q8_K: sum_k d_k * sum W_i code_i, d_k = Md * 2^Ed */
    acc_clear(&g_acc);
    for (size_t k = 0; k < N / 256; k++) {
        i128 sum = 0;
        for (size_t i = 256 * k; i < 256 * (k + 1); i++) sum += (i128)W[i] * c->q8k[i];
        int E;
        int32_t M = f32_parts(c->q8k_d[k], &E);
        acc_add(&g_acc, sum * M, E - 24);
    }
    acc_mpz(&g_acc, g_z);
    record(&g_stats[fi][dist][S_Q8_K], diff_double(g_z, g_exact), exact, sum_abs);

    /* ggml Q8_0: sum_k f16(d_k) * sum W_i code_i */
    acc_clear(&g_acc);
    for (size_t k = 0; k < N / 32; k++) {
        i128 sum = 0;
        for (size_t i = 32 * k; i < 32 * (k + 1); i++) sum += (i128)W[i] * c->q80[i];
        int E;
        int32_t M = f32_parts(dn_f16_to_f32(c->q80_dh[k]), &E);
        acc_add(&g_acc, sum * M, E - 24);
    }
    acc_mpz(&g_acc, g_z);
    record(&g_stats[fi][dist][S_Q8_0], diff_double(g_z, g_exact), exact, sum_abs);
}

/* The ggml references' own per-element error: Q8_K's value code * d is
   within |d| (1/2 + 2^-16) of x (the f32 product iscale * x and the f32
   d = 1/iscale each round by 2^-24 relative, at most 127 units each:
   254 * 2^-24 < 2^-16); Q8_0's within d (1/2 + 2^-16) + 127 |d - f16(d)|
   with d the f32 amax/127 (codes from d and the f32 1/d, values with the
   binary16 d). Codes within +-127. */
static void check_ggml_acts(const float *x, const int8_t *q8k, const float *q8k_d,
                            const int8_t *q80, const uint16_t *q80_dh)
{
    for (size_t i = 0; i < N; i++) {
        double d = q8k_d[i / 256];
        assert_true(q8k[i] >= -127 && q8k[i] <= 127);
        assert_true(fabs((double)x[i] - q8k[i] * d) <= fabs(d) * (0.5 + 0x1p-16));
        double d32 = (float)absmax(x + 32 * (i / 32), 32) / 127.0f; /* ggml's f32 d */
        double d16 = dn_f16_to_f32(q80_dh[i / 32]);
        assert_true(q80[i] >= -127 && q80[i] <= 127);
        assert_true(fabs((double)x[i] - q80[i] * d16) <=
                    d32 * (0.5 + 0x1p-16) + 127 * fabs(d32 - d16) * (1 + 0x1p-20));
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, size_t n)
{
    double *t = malloc(n * sizeof *t);
    assert_non_null(t);
    memcpy(t, v, n * sizeof *t);
    qsort(t, n, sizeof *t, cmp_double);
    double m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    free(t);
    return m;
}

static double maximum(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, v[i]);
    return m;
}

static double mean(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return s / (double)n;
}

static void print_table(int use_sum)
{
    printf("\n%s, median / max over %zu rows of %d (x %zu activations x %zu rows), seed 0x%llx"
           " (* ggml's own activation type for the format):\n\n",
           use_sum ? "|result - exact| / sum |w_i x_i|" : "|result - exact| / |exact|",
           g_samples * g_rows, N, g_samples, g_rows, (unsigned long long)g_seed);
    printf("| format | x |");
    for (int s = 0; s < N_SCHEMES; s++) printf(" %s |", scheme_name[s]);
    printf("\n|---|---|");
    for (int s = 0; s < N_SCHEMES; s++) printf("---|");
    printf("\n");
    for (size_t f = 0; f < N_FORMATS; f++)
        for (int d = 0; d < N_DISTS; d++) {
            printf("| %s | %s |", formats[f].name, dist_name[d]);
            for (int s = 0; s < N_SCHEMES; s++) {
                const stats *st = &g_stats[f][d][s];
                const double *v = use_sum ? st->rel_sum : st->rel;
                int own = (s == S_Q8_K && formats[f].ggml == ACT_Q8_K) ||
                          (s == S_Q8_0 && formats[f].ggml == ACT_Q8_0);
                printf(" %.1e / %.1e%s |", median(v, st->n), maximum(v, st->n), own ? " *" : "");
            }
            printf("\n");
        }
    fflush(stdout);
}

static void accuracy_sweep(void **state)
{
    (void)state;
    size_t rows = g_samples * g_rows;
    uint64_t seed = g_seed;
    for (int c = 0; c < N_OUTLIER_CHANNELS; c++) g_outlier_channel[c] = splitmix(&seed) % N;

    float *x = malloc(N * sizeof *x);
    int64_t *W = malloc(rows * N * sizeof *W);
    uint8_t *bytes = malloc(rows * (N / 32) * 34);
    lib_act *lib = malloc(4 * sizeof *lib);
    int8_t *q8k = malloc(N), *q80 = malloc(N);
    float *q8k_d = malloc(N / 256 * sizeof *q8k_d);
    uint16_t *q80_dh = malloc(N / 32 * sizeof *q80_dh);
    float *out = malloc(4 * g_rows * sizeof *out);
    assert_true(x && W && bytes && lib && q8k && q80 && q8k_d && q80_dh && out);

    for (size_t f = 0; f < N_FORMATS; f++) {
        const format *fm = &formats[f];
        size_t be = dn_type_block_elements(fm->type), rb = N / be * dn_type_block_bytes(fm->type);
        uint64_t ws = g_seed ^ (UINT64_C(0x100000001B3) * (f + 1));
        make_weights(fm, rows, &ws, bytes, NULL);
        for (size_t r = 0; r < rows; r++) exact_weights(fm->type, bytes + r * rb, W + r * N);
        for (int d = 0; d < N_DISTS; d++) {
            for (int s = 0; s < N_SCHEMES; s++) {
                stats *st = &g_stats[f][d][s];
                st->rel = calloc(rows, sizeof(double));
                st->rel_sum = calloc(rows, sizeof(double));
                st->n = 0;
                assert_true(st->rel && st->rel_sum);
            }
            /* the same activations for every format */
            uint64_t xs = g_seed ^ (UINT64_C(0x9E3779B97F4A7C15) * ((size_t)d + 7));
            for (size_t smp = 0; smp < g_samples; smp++) {
                make_activation(d, &xs, x);
                for (int sch = 0; sch < 4; sch++) {
                    quantize_checked(x, sch, be, &lib[sch]);
                    dn_act_scaling scaling = sch <= S_SUB32_2 ? DN_ACT_SUB32 : DN_ACT_PER_BLOCK;
                    size_t bad = 0;
                    assert_int_equal(dn_mat_vec(fm->type, bytes + smp * g_rows * rb, g_rows, N,
                                                &lib[sch].row, scaling, out + sch * g_rows, NULL,
                                                &bad),
                                     DN_OK);
                }
                ggml_q8_k(x, q8k, q8k_d);
                ggml_q8_0(x, q80, q80_dh);
                check_ggml_acts(x, q8k, q8k_d, q80, q80_dh);
                row_ctx c = {NULL,   x, {&lib[0], &lib[1], &lib[2], &lib[3]}, q8k, q8k_d, q80,
                             q80_dh, be};
                for (size_t r = 0; r < g_rows; r++) {
                    c.W = W + (smp * g_rows + r) * N;
                    float lo[4] = {out[r], out[g_rows + r], out[2 * g_rows + r],
                                   out[3 * g_rows + r]};
                    check_row(&c, lo, f, d);
                }
            }
            /* two words at least as accurate as one, on the mean, per scaling */
            for (int sch = S_SUB32_1; sch <= S_BLOCK_1; sch += 2) {
                const stats *one = &g_stats[f][d][sch], *two = &g_stats[f][d][sch + 1];
                double m1 = mean(one->rel_sum, one->n), m2 = mean(two->rel_sum, two->n);
                if (!(m2 <= m1))
                    fail_msg("%s %s: %s mean error %.3g above %s's %.3g", fm->name, dist_name[d],
                             scheme_name[sch + 1], m2, scheme_name[sch], m1);
            }
        }
    }
    print_table(0);
    print_table(1);
    printf("\nlargest |lib - exact| / its bound over all rows: %.3g\n", g_worst_bound_ratio);
    for (size_t f = 0; f < N_FORMATS; f++)
        for (int d = 0; d < N_DISTS; d++)
            for (int s = 0; s < N_SCHEMES; s++) {
                free(g_stats[f][d][s].rel);
                free(g_stats[f][d][s].rel_sum);
            }
    free(x), free(W), free(bytes), free(lib), free(q8k), free(q80), free(q8k_d), free(q80_dh),
        free(out);
}

/* The weight generator realizes Gaussian weights in every format: read back
   through dn_read_row, the relative RMS error against the Gaussian values
   is a quantizer's (a byte put in the wrong place would make it about 1). */
static void weights_are_realized(void **state)
{
    (void)state;
    const size_t rows = 8;
    uint8_t *bytes = malloc(rows * (N / 32) * 34);
    float *orig = malloc(rows * N * sizeof *orig);
    int64_t *W = malloc(N * sizeof *W);
    assert_true(bytes && orig && W);
    printf("weights: relative RMS error of the test's quantizers (sigma %.2g):", WEIGHT_SIGMA);
    for (size_t f = 0; f < N_FORMATS; f++) {
        const format *fm = &formats[f];
        size_t rb = N / dn_type_block_elements(fm->type) * dn_type_block_bytes(fm->type);
        uint64_t s = g_seed + f;
        make_weights(fm, rows, &s, bytes, orig);
        double se = 0, sv = 0;
        for (size_t r = 0; r < rows; r++) {
            exact_weights(fm->type, bytes + r * rb, W);
            for (size_t i = 0; i < N; i++) {
                double w = (double)W[i] * 0x1p-24, v = orig[r * N + i];
                se += (w - v) * (w - v);
                sv += v * v;
            }
        }
        double rms = sqrt(se / sv);
        printf(" %s %.3f", fm->name, rms);
        if (!(rms < fm->max_rms))
            fail_msg("%s: relative RMS %.3f, expected below %.3f", fm->name, rms, fm->max_rms);
    }
    printf("\n");
    free(bytes), free(orig), free(W);
}

/* The ggml references by hand. Q8_K: max 127 gives iscale -1 and d -1;
   codes are -x to nearest with ties to even (2.5 -> -2). A negative
   extreme flips the sign. Q8_0: amax 127 gives d = id = 1, codes roundf(x)
   (halves away from zero: 2.5 -> 3); amax 100 gives d = 100/127 in f32,
   stored as the binary16 1613/2048, while the codes come from 1/d in f32. */
static void ggml_references_by_hand(void **state)
{
    (void)state;
    static float x[N];
    static int8_t q8k[N], q80[N];
    static float d8k[N / 256];
    static uint16_t dh[N / 32];
    memset(x, 0, sizeof x);
    x[0] = 127.0f, x[1] = 2.5f, x[2] = -2.5f, x[3] = 3.5f, x[4] = 0.3f;
    x[256] = -127.0f, x[257] = 2.5f, x[258] = 1.5f;
    x[512] = 100.0f, x[513] = -0.5f; /* Q8_0's second block: amax 100 */
    x[512 + 32] = 0.0f;
    ggml_q8_k(x, q8k, d8k);
    ggml_q8_0(x, q80, dh);
    assert_true(d8k[0] == -1.0f);
    assert_int_equal(q8k[0], -127);
    assert_int_equal(q8k[1], -2);
    assert_int_equal(q8k[2], 2);
    assert_int_equal(q8k[3], -4);
    assert_int_equal(q8k[4], 0);
    assert_true(d8k[1] == 1.0f);
    assert_int_equal(q8k[256], -127);
    assert_int_equal(q8k[257], 2);
    assert_int_equal(q8k[258], 2);
    assert_true(d8k[3] == 0.0f); /* an all-zero block */
    assert_true(dn_f16_to_f32(dh[0]) == 1.0f);
    assert_int_equal(q80[0], 127);
    assert_int_equal(q80[1], 3);
    assert_int_equal(q80[2], -3);
    assert_int_equal(q80[3], 4);
    assert_int_equal(q80[4], 0);
    float d = 100.0f / 127.0f;
    assert_true(dn_f16_to_f32(dh[512 / 32]) == 1613.0f / 2048.0f);
    assert_int_equal(q80[512], (int)roundf(100.0f * (1.0f / d)));
    assert_int_equal(q80[512], 127);
    assert_int_equal(q80[513], -1); /* -0.635 */
    assert_true(dn_f16_to_f32(dh[512 / 32 + 1]) == 0.0f);
}

static int setup(void **state)
{
    (void)state;
    mpz_inits(g_t, g_exact, g_z, g_diff, (mpz_ptr)0);
    mpfr_init2(g_f, 53);
    g_acc.lo = 0;
    g_acc.hi = ACC_TOP - ACC_BASE - 1;
    acc_clear(&g_acc);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mpz_clears(g_t, g_exact, g_z, g_diff, (mpz_ptr)0);
    mpfr_clear(g_f);
    mpfr_free_cache();
    return 0;
}

int main(int argc, char **argv)
{
    int full = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0)
            full = 1;
        else {
            fprintf(stderr, "usage: %s [--full]\n", argv[0]);
            return 2;
        }
    }
    const char *s = getenv("DECODENUM_ACCURACY_FULL");
    if (s && *s && strcmp(s, "0") != 0) full = 1;
    test_seed_from_env(&g_seed);
    if (full) {
        g_samples = 16;
        g_rows = 64;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ggml_references_by_hand),
        cmocka_unit_test(weights_are_realized),
        cmocka_unit_test(accuracy_sweep),
    };
    return cmocka_run_group_tests_name("accuracy_dot", tests, setup, teardown);
}
