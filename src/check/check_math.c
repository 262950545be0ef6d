/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals module's kernels held to their references, every
 * output's bits: the unary array forms in every input regime at every plan
 * length (capped at 2^16 elements: each element is computed alone) plus a
 * spread of 2^20 inputs over the whole binary32 range; softmax, rmsnorm,
 * l2norm, rope, rms0 and rms_gated at every plan length; hadamard at every power of two up to
 * the plan's largest length, forward and inverse; the RoPE table builder on
 * positions and frequencies of every kind (check_rope_table).
 */
#include "check.h"
#include "dispatch.h"
#include "math_tables.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void compare(dn_check_result *res, const float *want, const float *got, size_t n,
                    const float *in, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (dn_bits(want[i]) != dn_bits(got[i]))
            dn_check_mismatch(res,
                              "%s n=%zu i=%zu input 0x%08" PRIx32 ": reference 0x%08" PRIx32
                              ", kernel 0x%08" PRIx32,
                              what, n, i, in ? dn_bits(in[i]) : 0u, dn_bits(want[i]),
                              dn_bits(got[i]));
    res->compared += n;
}

enum { EXP, LN, LN1P, RECIP, RSQRT, SIGMOID, SILU, SOFTPLUS, TANH, GELU_TANH, GELU, UNARY_COUNT };
static const char *const unary_names[UNARY_COUNT] = {
    "exp_v",  "ln_v",       "ln1p_v", "recip_v",     "rsqrt_v", "sigmoid_v",
    "silu_v", "softplus_v", "tanh_v", "gelu_tanh_v", "gelu_v",
};

static dn_unary_kernel unary_of(const dn_math_kernels *k, int which)
{
    const dn_unary_kernel all[UNARY_COUNT] = {k->exp_v,   k->ln_v,        k->ln1p_v, k->recip_v,
                                              k->rsqrt_v, k->sigmoid_v,   k->silu_v, k->softplus_v,
                                              k->tanh_v,  k->gelu_tanh_v, k->gelu_v};
    return all[which];
}

/* Inputs where the functions change regime: thresholds, table edges. */
static const float edges[] = {
    88.72283172607422f,
    88.72283935546875f,
    -87.33654022216797f,
    -87.33655f,
    -88.0f,
    -95.0f,
    95.0f,
    80.0f,
    -91.9f,
    16.0f,
    16.000002f,
    15.999999f,
    1.0f,
    0.99999994f,
    1.0000001f,
    -1.0f,
    -0.99999994f,
    0.75f,
    1.5f,
    0x1p-24f,
    0x1p-25f,
    -0x1p-25f,
    0x1p126f,
    0x1.000002p126f,
    0x1p127f,
    2.0f,
    4.0f,
    0x1.fffffep-1f,
    0x1p-126f,
    0.5f,
    3.0f,
    0.0f,
    -0.0f,
    0.5625f, /* tanh's two forms, gelu's and gelu_tanh's clamps */
    0x1.1ffffep-1f,
    -0.5625f,
    10.0f,
    10.000001f,
    -12.0f,
    -12.000001f,
    6.0f,
    6.0000005f,
    -13.5f,
    -13.500001f,
    -10.7f,
    -13.2f,
    -9.0f, /* the GELU fast paths' bounds (both ISAs) */
    -9.000001f,
    0x1p-30f,
    0x1.fffffep-31f,
    -0x1p-30f,
    -0x1.fffffep-31f,
    0x1p-60f,
    0x1.fffffep-61f,
    -0x1p-60f,
    9.5f,
    -86.0f, /* the sigmoid family's fast paths' bounds */
    -86.00001f,
    -85.99999f,
    86.0f,
    86.00001f,
    0x1p125f,
    0x1.fffffep124f,
    0x1p64f, /* ln1p's and recip's fast paths: below 2^64, recip from 2^-64 */
    0x1.fffffep63f,
    -0x1p64f,
    -0x1.fffffep63f,
    0x1p-64f,
    0x1.fffffep-65f,
    -0x1p-64f,
    0x1.fffffep127f, /* rsqrt's fast path: every positive normal x */
    0x1.fffffep-127f,
    -0x1p-126f,
    64.0f, /* sigmoid's and silu's fast paths since |x| <= 64 */
    0x1.000002p6f,
    -64.0f,
    -0x1.000002p6f,
    -0x1.fffffep5f,
    0x1p-140f, /* denormals among in-range lanes: silu_rare's patch */
    -0x1p-149f,
    0x1p-125f,
    -0x1.fffffep-126f,
};

/* log2 of the bit-pattern spread's stride: 4096 (2^20 inputs), or 65536 (2^16)
   on a short plan (random lengths below 65536: DN_CHECK_PLAN under qemu, where
   the sweeps of tests/CMakeLists.txt cover 2^24 inputs instead). */
static unsigned spread_shift(const dn_check_plan *plan)
{
    return plan->random_length_max < 65536 ? 16u : 12u;
}

/* Fills x for the unary checks: the harness's regimes, and a regime of
   moderate values around each function's interesting range. */
static void fill_unary(dn_rng *r, int regime, float *x, size_t n)
{
    if (regime < DN_REGIME_COUNT) {
        dn_fill_f32(r, (dn_regime)regime, x, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        if ((z & 7) == 0) {
            x[i] = edges[(z >> 3) % (sizeof edges / sizeof edges[0])];
            continue;
        }
        /* |x| in [2^-30, 2^8), either sign */
        uint32_t u = (uint32_t)((z >> 8) & 0x7FFFFF) | (uint32_t)(127 - 30 + (int)((z >> 40) % 38))
                                                           << 23;
        u |= (uint32_t)(z >> 63) << 31;
        memcpy(&x[i], &u, 4);
    }
}

static int check_unary(dn_isa isa, const dn_math_kernels *k, const dn_check_plan *plan,
                       const size_t *lengths, size_t count, float *x, float *y_ref, float *y_k,
                       size_t cap, dn_check_sink sink, void *ctx)
{
    int failed = 0;
    for (int which = 0; which < UNARY_COUNT; which++) {
        dn_check_result res = {"math", unary_names[which], isa, 0, 0, ""};
        dn_rng rng = {plan->seed + 101 + (uint64_t)which};
        dn_unary_kernel ref = unary_of(&dn_math_scalar, which), ker = unary_of(k, which);
        for (size_t li = 0; li < count; li++) {
            size_t n = lengths[li] < cap ? lengths[li] : cap;
            int regimes = lengths[li] <= plan->every_length_to ? DN_REGIME_COUNT + 1 : 1;
            for (int g = 0; g < regimes; g++) {
                int regime = regimes == 1 ? (int)(li % (DN_REGIME_COUNT + 1)) : g;
                float *in = x + ((li + (size_t)g) & 1);
                fill_unary(&rng, regime, in, n);
                ref(in, y_ref, n);
                ker(in, y_k, n);
                compare(&res, y_ref, y_k, n, in, unary_names[which]);
                /* in place */
                memcpy(y_k, in, n * sizeof(float));
                ker(y_k, y_k, n);
                compare(&res, y_ref, y_k, n, in, unary_names[which]);
            }
        }
        /* 2^20 inputs spread over every bit pattern, 4096 apart, plus noise
           (2^16, 65536 apart, on a short plan: spread_shift) */
        const size_t block = cap < 65536 ? cap : 65536;
        const unsigned sh = spread_shift(plan);
        for (uint64_t base = 0; ker != ref && base < (UINT64_C(1) << 32);
             base += (uint64_t)block << sh) {
            for (size_t i = 0; i < block; i++) {
                uint32_t u = (uint32_t)(base + ((uint64_t)i << sh)) +
                             (uint32_t)(dn_rng_next(&rng) & ((UINT32_C(1) << sh) - 1));
                memcpy(&x[i], &u, 4);
            }
            ref(x, y_ref, block);
            ker(x, y_k, block);
            compare(&res, y_ref, y_k, block, x, unary_names[which]);
        }
        if (res.mismatched) failed++;
        if (sink) sink(&res, ctx);
    }
    return failed;
}

/* rms0 (which 5) and rms_gated (6, sigmoid and silu gates, in place over x
   and over the gate): reference and kernel on in[0..n) with weights w. */
static void norms_case(dn_check_result *res, const dn_math_kernels *k, int which, dn_rng *rng,
                       const float *in, const float *w, float *y_ref, float *y_k, size_t n,
                       size_t variant)
{
    static const float eps_set[] = {1e-6f, 1e-5f, 0.0f, 0x1p-130f};
    const dn_math_kernels *r = &dn_math_scalar;
    float eps = eps_set[variant % 4];
    if (which == 5) {
        r->rms0(in, w, eps, y_ref, n);
        k->rms0(in, w, eps, y_k, n);
        compare(res, y_ref, y_k, n, in, "rms0");
        return;
    }
    float *gate = malloc((n + 1) * sizeof(float)), *tmp = malloc((n + 1) * sizeof(float));
    if (gate && tmp) {
        dn_fill_f32(rng, (dn_regime)(variant % DN_REGIME_COUNT), gate, n);
        for (int silu = 0; silu < 2; silu++) {
            r->rms_gated(in, gate, w, eps, silu, y_ref, n);
            k->rms_gated(in, gate, w, eps, silu, y_k, n);
            compare(res, y_ref, y_k, n, gate, silu ? "rms_gated silu" : "rms_gated sigmoid");
            memcpy(tmp, gate, n * sizeof(float)); /* y over the gate */
            k->rms_gated(in, tmp, w, eps, silu, tmp, n);
            compare(res, y_ref, tmp, n, gate, "rms_gated over the gate");
            memcpy(tmp, in, n * sizeof(float)); /* y over x */
            k->rms_gated(tmp, gate, w, eps, silu, tmp, n);
            compare(res, y_ref, tmp, n, gate, "rms_gated over x");
        }
    } else {
        dn_check_mismatch(res, "rms_gated: out of memory");
    }
    free(gate);
    free(tmp);
}

/* One case of vector kernel `which` (res->kernel) on in[0..n): the
   reference's and the kernel's outputs compared, in place too where the
   kernel allows it. li and g: the length's index and the regime's. */
static void vector_case(dn_check_result *res, const dn_math_kernels *k, int which, dn_rng *rng,
                        float *in, float *w, float *y_ref, float *y_k, size_t n, size_t li, int g)
{
    const dn_math_kernels *r = &dn_math_scalar;
    switch (which) {
    case 0: {
        float s_ref = r->softmax(in, y_ref, n);
        float s_k = k->softmax(in, y_k, n);
        compare(res, &s_ref, &s_k, 1, NULL, "softmax sum");
        compare(res, y_ref, y_k, n, in, "softmax");
        memcpy(y_k, in, n * sizeof(float));
        k->softmax(y_k, y_k, n);
        compare(res, y_ref, y_k, n, in, "softmax in place");
        break;
    }
    case 1:
    case 2: {
        static const float eps_set[] = {1e-6f, 1e-5f, 0.0f, 0x1p-130f};
        float eps = eps_set[(li + (size_t)g) % 4];
        if (which == 1) {
            r->rmsnorm(in, w, eps, y_ref, n);
            k->rmsnorm(in, w, eps, y_k, n);
        } else {
            r->l2norm(in, eps, y_ref, n);
            k->l2norm(in, eps, y_k, n);
        }
        compare(res, y_ref, y_k, n, in, res->kernel);
        break;
    }
    case 3: {
        size_t npairs = n / 2 ? (size_t)dn_rng_below(rng, n / 2 + 1) : 0;
        int neox = (int)(dn_rng_next(rng) & 1);
        float *cs = w, *sn = y_k; /* sin drawn into y_k's space, copied out */
        float *sin_tab = malloc((npairs + 1) * sizeof(float));
        if (!sin_tab) break;
        dn_fill_f32(rng, g & 1 ? DN_REGIME_BITS : DN_REGIME_NORMAL, sn, npairs);
        memcpy(sin_tab, sn, npairs * sizeof(float));
        r->rope(in, n, cs, sin_tab, npairs, neox, y_ref);
        k->rope(in, n, cs, sin_tab, npairs, neox, y_k);
        compare(res, y_ref, y_k, n, in, neox ? "rope neox" : "rope interleaved");
        memcpy(y_k, in, n * sizeof(float));
        k->rope(y_k, n, cs, sin_tab, npairs, neox, y_k);
        compare(res, y_ref, y_k, n, in, neox ? "rope neox in place" : "rope in place");
        free(sin_tab);
        break;
    }
    case 4: {
        size_t p = 1;
        while (p * 2 <= n) p *= 2;
        if (n == 0) p = 0;
        int inverse = (int)((li + (size_t)g) & 1);
        memcpy(y_ref, in, p * sizeof(float));
        memcpy(y_k, in, p * sizeof(float));
        r->hadamard(y_ref, p, inverse);
        k->hadamard(y_k, p, inverse);
        compare(res, y_ref, y_k, p, NULL, inverse ? "hadamard inverse" : "hadamard");
        break;
    }
    default: norms_case(res, k, which, rng, in, w, y_ref, y_k, n, li + (size_t)g); break;
    }
}

static int check_vector(dn_isa isa, const dn_math_kernels *k, const dn_check_plan *plan,
                        const size_t *lengths, size_t count, size_t max, float *x, float *w,
                        float *y_ref, float *y_k, dn_check_sink sink, void *ctx)
{
    static const char *const names[] = {"softmax",  "rmsnorm", "l2norm",   "rope",
                                        "hadamard", "rms0",    "rms_gated"};
    const dn_math_kernels *r = &dn_math_scalar;
    int failed = 0;
    for (int which = 0; which < 7; which++) {
        dn_check_result res = {"math", names[which], isa, 0, 0, ""};
        dn_rng rng = {plan->seed + 201 + (uint64_t)which};
        for (size_t li = 0; li < count; li++) {
            size_t n = lengths[li];
            int regimes = n <= plan->every_length_to ? DN_REGIME_COUNT : 1;
            for (int g = 0; g < regimes; g++) {
                dn_regime rg = (dn_regime)(regimes == 1 ? li % DN_REGIME_COUNT : (size_t)g);
                float *in = x + ((li + (size_t)g) & 1);
                dn_fill_f32(&rng, rg, in, n);
                dn_fill_f32(&rng, g & 1 ? DN_REGIME_SPECIAL : DN_REGIME_NORMAL, w, n);
                vector_case(&res, k, which, &rng, in, w, y_ref, y_k, n, li, g);
            }
        }
        if (which == 4) {
            /* every power of two up to the largest length */
            for (size_t p = 1; p <= max; p *= 2) {
                dn_fill_f32(&rng, DN_REGIME_NORMAL, y_ref, p);
                memcpy(y_k, y_ref, p * sizeof(float));
                memcpy(x, y_ref, p * sizeof(float));
                r->hadamard(y_ref, p, 0);
                k->hadamard(y_k, p, 0);
                compare(&res, y_ref, y_k, p, NULL, "hadamard");
            }
        }
        if (res.mismatched) failed++;
        if (sink) sink(&res, ctx);
    }
    return failed;
}

/* ---- sin, cos, sincos ------------------------------------------------------ */

/* Inputs for the trig kernels: the harness's regimes, the moderate regime,
   and arguments up to 2^40 (the integer reduction's every window). */
static void fill_trig(dn_rng *r, int regime, float *x, size_t n)
{
    if (regime <= DN_REGIME_COUNT) {
        fill_unary(r, regime, x, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        uint32_t u = (uint32_t)(z & 0x7FFFFF) | (uint32_t)(127 - 14 + (int)((z >> 32) % 54)) << 23;
        u |= (uint32_t)(z >> 63) << 31;
        memcpy(&x[i], &u, 4);
    }
}

/* sin_v, cos_v and sincos_v (both outputs, and in place on either) against
   the references at every plan length in every regime, then 2^20 inputs
   spread over every bit pattern. y_ref and y_k hold two arrays each. */
static int check_trig(dn_isa isa, const dn_math_kernels *k, const dn_check_plan *plan,
                      const size_t *lengths, size_t count, float *x, float *y_ref, float *y_k,
                      size_t cap, dn_check_sink sink, void *ctx)
{
    dn_check_result res = {"math", "sin_v/cos_v/sincos_v", isa, 0, 0, ""};
    dn_rng rng = {plan->seed + 977};
    cap /= 2;
    float *c_ref = y_ref + cap, *c_k = y_k + cap;
    for (size_t li = 0; li <= count; li++) {
        size_t n = li == count ? cap : lengths[li] < cap ? lengths[li] : cap;
        int regimes = li == count || lengths[li] <= plan->every_length_to ? DN_REGIME_COUNT + 2 : 1;
        for (int g = 0; g < regimes; g++) {
            int regime = regimes == 1 ? (int)(li % (DN_REGIME_COUNT + 2)) : g;
            if (li == count) { /* the bit-pattern spread: 2^20 inputs in blocks */
                if (g > 0 || k == &dn_math_scalar) break;
                regime = -1;
            }
            /* the spread walks all 2^32 patterns in blocks of n; a regime's
               length (0 included) is one pass */
            const unsigned sh = spread_shift(plan);
            const uint64_t span = regime < 0 ? UINT64_C(1) << 32 : 1;
            const uint64_t step = regime < 0 ? (uint64_t)n << sh : 1;
            for (uint64_t base = 0; base < span; base += step) {
                if (regime < 0)
                    for (size_t i = 0; i < n; i++) {
                        uint32_t u = (uint32_t)(base + ((uint64_t)i << sh)) +
                                     (uint32_t)(dn_rng_next(&rng) & ((UINT32_C(1) << sh) - 1));
                        memcpy(&x[i], &u, 4);
                    }
                else
                    fill_trig(&rng, regime, x, n);
                dn_math_scalar.sin_v(x, y_ref, n);
                dn_math_scalar.cos_v(x, c_ref, n);
                k->sin_v(x, y_k, n);
                compare(&res, y_ref, y_k, n, x, "sin_v");
                k->cos_v(x, y_k, n);
                compare(&res, c_ref, y_k, n, x, "cos_v");
                k->sincos_v(x, y_k, c_k, n);
                compare(&res, y_ref, y_k, n, x, "sincos_v sin");
                compare(&res, c_ref, c_k, n, x, "sincos_v cos");
                memcpy(y_k, x, n * sizeof(float));
                k->sincos_v(y_k, y_k, c_k, n); /* in place on s */
                compare(&res, y_ref, y_k, n, x, "sincos_v sin (s = x)");
                compare(&res, c_ref, c_k, n, x, "sincos_v cos (s = x)");
                memcpy(c_k, x, n * sizeof(float));
                k->sin_v(c_k, c_k, n); /* in place */
                compare(&res, y_ref, c_k, n, x, "sin_v in place");
            }
        }
    }
    if (sink) sink(&res, ctx);
    return res.mismatched != 0;
}

/* rope_table against the reference: the frequencies of theta 10^4 and 10^6
   (128 dimensions) and finite bit patterns of every exponent (zeros,
   denormals, negative values among them) at positions 0..300, their
   negations, the ends +-2^24 and random ones in between; every pair count
   from 1 to 17 (each tail of eight lanes) and 64 and 203 pairs; 125 to
   1023 positions (every remainder mod 4) and one and two; every seventh
   w one whose window product carries (rope_window_carries). */
/* Whether K = M V mod 2^96 of |w| = u's (dn_math_rope_window) carries
   into its top word: (M v2 >> 32) + (M v1 mod 2^32) >= 2^32, about one w
   in 256, which the kernels' 32-bit words must add in */
static int rope_window_carries(uint32_t u)
{
    uint32_t b = (u >> 23) & 0xFFu;
    if (b < 64 || b == 255) return 0;
    uint64_t M = (u & 0x7FFFFFu) | 0x800000u;
    const uint32_t *v = dn_trig_invpi[b - 64];
    return ((((M * v[2]) >> 32) + ((M * v[1]) & 0xFFFFFFFFu)) >> 32) != 0;
}

static void rope_inputs(dn_rng *rng, int32_t *pos, size_t npos, float *w, size_t npairs)
{
    for (size_t k = 0; k < npos; k++) {
        uint32_t z = (uint32_t)dn_rng_next(rng);
        pos[k] = k < 301      ? (int32_t)k
                 : k < 400    ? -(int32_t)(k - 300)
                 : k < 404    ? (k & 1 ? 1 : -1) * ((1 << 24) - (int32_t)(k & 2))
                 : k % 3 == 0 ? (int32_t)(z % 8193u) - 4096
                              : (int32_t)(z % ((1u << 25) + 1u)) - (1 << 24);
    }
    for (size_t i = 0; i < npairs; i++) {
        uint32_t u = (uint32_t)dn_rng_next(rng);
        if ((u & 0x7F800000u) == 0x7F800000u) u ^= 0x40000000u;                 /* finite */
        if (i % 5 == 1) u = (u & 0x807FFFFFu) | (uint32_t)(104 + i % 40) << 23; /* 2^-23 .. 2^16 */
        if (i % 13 == 2) u &= 0x807FFFFFu;            /* denormal or zero */
        while (i % 7 == 3 && !rope_window_carries(u)) /* 2^-23 .. 2^23, K's carry */
            u = ((uint32_t)dn_rng_next(rng) & 0x807FFFFFu) | (104u + (u >> 8) % 47u) << 23;
        memcpy(&w[i], &u, 4);
        if (npairs >= 64 && i < 128) /* theta 10^4, then 10^6, 64 pairs each */
            w[i] = dn_math_rope_freq(dn_ln(i < 64 ? 1e4f : 1e6f), i % 64, 128, 1.0f);
    }
}

static int check_rope_table(dn_isa isa, const dn_math_kernels *k, const dn_check_plan *plan,
                            dn_check_sink sink, void *ctx)
{
    dn_check_result res = {"math", "rope_table", isa, 0, 0, ""};
    dn_rng rng = {plan->seed + 1301};
    enum { NPOS = 1024, MAXP = 203 };
    int32_t *pos = malloc(NPOS * sizeof *pos);
    float *w = malloc(MAXP * sizeof *w), *out = malloc((size_t)4 * NPOS * MAXP * sizeof *out);
    if (!pos || !w || !out) {
        res.mismatched = 1;
        snprintf(res.first, sizeof res.first, "out of memory");
    } else {
        float *c_ref = out, *s_ref = c_ref + NPOS * MAXP, *c_k = s_ref + NPOS * MAXP,
              *s_k = c_k + NPOS * MAXP;
        /* position counts with every remainder mod 4, and one and two
           positions (a decode step's table) of random positions */
        static const size_t big[4][2] = {{64, 1023}, {MAXP, 1022}, {MAXP, 1}, {64, 2}};
        for (size_t t = 0; t < 21; t++) {
            const size_t npairs = t < 17 ? t + 1 : big[t - 17][0];
            const size_t npos = t < 17 ? 128 - t % 4 : big[t - 17][1];
            const int32_t *p = npos < 4 ? pos + 600 : pos;
            rope_inputs(&rng, pos, NPOS, w, npairs);
            dn_math_scalar.rope_table(p, npos, w, npairs, c_ref, s_ref);
            k->rope_table(p, npos, w, npairs, c_k, s_k);
            compare(&res, c_ref, c_k, npos * npairs, NULL, "rope_table cos");
            compare(&res, s_ref, s_k, npos * npairs, NULL, "rope_table sin");
        }
    }
    free(pos);
    free(w);
    free(out);
    if (sink) sink(&res, ctx);
    return res.mismatched != 0;
}

/* The AVX2 kernels divide for the recip seed (src/x86/math_avx2.c,
   recip_seed_div): table word j must be 1/(1 + (2j + 1)/256) rounded, as
   this CPU's division gives it. */
static int check_recip_seed(dn_isa isa, dn_check_sink sink, void *ctx)
{
    dn_check_result res = {"math", "recip_seed", isa, 0, 0, ""};
    for (int j = 0; j < 128; j++) {
        volatile float c = 1.0f + (float)(2 * j + 1) * 0x1p-8f; /* exact */
        float y = 1.0f / c;
        res.compared++;
        if (memcmp(&y, &dn_recip_seed[j], sizeof y) != 0 && res.mismatched++ == 0)
            snprintf(res.first, sizeof res.first, "j = %d: 1/c = %a, table %a", j, (double)y,
                     (double)dn_recip_seed[j]);
    }
    if (sink) sink(&res, ctx);
    return res.mismatched != 0;
}

int dn_check_math(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    const dn_math_kernels *k = ks->math;
    size_t *lengths;
    size_t count = dn_plan_lengths(plan, &lengths);
    size_t max = 0;
    for (size_t i = 0; i < count; i++) max = lengths[i] > max ? lengths[i] : max;
    /* A table that is the references themselves (the scalar ISA, or NEON
       until its kernels exist) agrees by construction: a lighter pass. */
    const int same = k == &dn_math_scalar;
    const size_t cap = same ? 4096 : 65536;
    size_t room = max > cap ? max : cap;
    float *x = malloc((room + 1) * sizeof(float)), *w = malloc(room * sizeof(float));
    float *y_ref = malloc(room * sizeof(float)), *y_k = malloc(room * sizeof(float));
    int failed = 0;
    if (!lengths || !x || !w || !y_ref || !y_k) {
        failed = 1;
    } else {
        failed += check_unary(isa, k, plan, lengths, count, x, y_ref, y_k, cap, sink, ctx);
        failed += check_vector(isa, k, plan, lengths, count, max, x, w, y_ref, y_k, sink, ctx);
        failed += check_trig(isa, k, plan, lengths, count, x, y_ref, y_k, cap, sink, ctx);
        failed += check_rope_table(isa, k, plan, sink, ctx);
        if (isa == DN_ISA_AVX2) failed += check_recip_seed(isa, sink, ctx);
    }
    free(lengths);
    free(x);
    free(w);
    free(y_ref);
    free(y_k);
    return failed;
}
