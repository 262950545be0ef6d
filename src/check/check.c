/* SPDX-License-Identifier: MIT */
/* The harness's generators and plan; the modules' checks are in check_*.c. */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t dn_rng_next(dn_rng *r)
{
    /* splitmix64 */
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t dn_rng_below(dn_rng *r, uint64_t bound) { return dn_rng_next(r) % bound; }

static const uint32_t special_bits[] = {
    0x00000000, 0x80000000,                                     /* ±0 */
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,             /* denormals */
    0x00400000, 0x80400000, 0x00800000, 0x80800000,             /* ±FLT_MIN */
    0x00800001, 0x3F7FFFFF,                                     /* FLT_MIN+, 1-2^-24 */
    0x7F7FFFFF, 0xFF7FFFFF,                                     /* ±FLT_MAX */
    0x7F800000, 0xFF800000,                                     /* ±inf */
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FA00000, /* NaNs */
    0x3F800000, 0xBF800000, 0x3F000000, 0x40000000,             /* 1, -1, 1/2, 2 */
    0x477FE000, 0x477FF000, 0x477FEFFF, 0x47800000,             /* 65504, 65520, ... */
    0x33800000, 0x33000000, 0x33C00000, 0x38800000,             /* binary16 subnormal edges */
    0x387FC000, 0x387FE000, 0x3F801000, 0x3F803000,             /* ties for f16 / bf16 / tf32 */
    0x3F808000, 0x3F818000, 0x1F800000, 0x1F7FFFFF,             /* bf16 ties, 2^-64 */
};

void dn_fill_f32(dn_rng *r, dn_regime regime, float *x, size_t n)
{
    const size_t nspecial = sizeof special_bits / sizeof special_bits[0];
    /* ZEROS: one array in four drives every lane to -0: -1.5 FLT_MIN, then
       FLT_MIN (a sum of -FLT_MIN / 2, flushed to -0), then -0s, so the
       result is -0 only if no lane was ever given a +0. */
    int all_negative_zero = regime == DN_REGIME_ZEROS && (dn_rng_next(r) & 3) == 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        uint32_t sign = (uint32_t)(z >> 63) << 31;
        uint32_t frac = (uint32_t)(z >> 8) & 0x7FFFFFu;
        switch (regime) {
        case DN_REGIME_NORMAL:
            x[i] = dn_from_bits(sign | ((uint32_t)(127 - 12 + (int)((z >> 40) % 25)) << 23) | frac);
            break;
        case DN_REGIME_BITS: x[i] = dn_from_bits((uint32_t)z); break;
        case DN_REGIME_SPECIAL:
            x[i] = (z & 3) ? dn_from_bits(special_bits[(z >> 2) % nspecial])
                           : dn_from_bits(sign | ((uint32_t)((z >> 40) % 255) << 23) | frac);
            break;
        case DN_REGIME_CANCEL:
            /* Pairs (v, -v) a lane-stride or an element apart; huge values. */
            if (i >= 32 && (z & 3) == 0)
                x[i] = -x[i - 32];
            else if (i >= 1 && (z & 3) == 1)
                x[i] = -x[i - 1];
            else if ((z & 15) == 2)
                x[i] = dn_from_bits(sign | 0x7F000000u | frac);
            else
                x[i] = dn_from_bits(sign | ((uint32_t)(100 + (z >> 40) % 40) << 23) | frac);
            break;
        case DN_REGIME_TINY:
            x[i] = dn_from_bits(sign | ((uint32_t)(127 - 66 + (int)((z >> 40) % 8)) << 23) | frac);
            if ((z & 31) == 0) x[i] = dn_from_bits(special_bits[(z >> 5) % nspecial]);
            break;
        case DN_REGIME_ZEROS: {
            /* -0, +0, +-FLT_MIN, +-1.5 FLT_MIN (their differences are
               denormal before the flush), and denormals of either sign */
            static const uint32_t edge[8] = {0x80000000, 0x80000000, 0x00000000, 0x00800000,
                                             0x80800000, 0x00C00000, 0x80C00000, 0x00000001};
            if (all_negative_zero)
                x[i] = dn_from_bits(i < 32 ? 0x80C00000u : i < 64 ? 0x00800000u : 0x80000000u);
            else
                x[i] = dn_from_bits(edge[(z >> 3) & 7] ^
                                    ((z >> 7 & 1) && (z >> 3 & 7) == 7 ? 0x80000000u : 0));
            break;
        }
        case DN_REGIME_PAIRED: /* alone, a spread of moderate values */
            x[i] = dn_from_bits(sign | ((uint32_t)(127 - 20 + (int)((z >> 40) % 41)) << 23) | frac);
            break;
        default: x[i] = 0.0f;
        }
    }
}

void dn_fill_pair(dn_rng *r, dn_regime ra, dn_regime rb, float *a, float *b, size_t n)
{
    dn_fill_f32(r, ra, a, n);
    if (ra != DN_REGIME_PAIRED) {
        dn_fill_f32(r, rb, b, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        float q = (float)(0x1p-126 / (double)a[i]);
        uint32_t u;
        memcpy(&u, &q, 4);
        u += (uint32_t)(z % 5) - 2u; /* within two ulps either side */
        u ^= (uint32_t)(z >> 63) << 31;
        memcpy(&b[i], &u, 4);
    }
}

void dn_fill_u16(dn_rng *r, uint16_t *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = (uint16_t)dn_rng_next(r);
}

size_t dn_plan_lengths(const dn_check_plan *plan, size_t **lengths)
{
    size_t count = plan->every_length_to + 1 + plan->random_lengths;
    size_t *l = malloc(count * sizeof *l);
    if (!l) {
        *lengths = NULL;
        return 0;
    }
    dn_rng r = {plan->seed ^ UINT64_C(0x5EED)};
    for (size_t i = 0; i <= plan->every_length_to; i++) l[i] = i;
    for (size_t i = 0; i < plan->random_lengths; i++)
        l[plan->every_length_to + 1 + i] = 1 + (size_t)dn_rng_below(&r, plan->random_length_max);
    *lengths = l;
    return count;
}

void dn_check_mismatch(dn_check_result *result, const char *fmt, ...)
{
    if (result->mismatched++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(result->first, sizeof result->first, fmt, ap);
        va_end(ap);
    }
}

int dn_check_all(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    return dn_check_fp32(isa, plan, sink, ctx) + dn_check_f16(isa, plan, sink, ctx) +
           dn_check_math(isa, plan, sink, ctx) + dn_check_dot(isa, plan, sink, ctx) +
           dn_check_attention(isa, plan, sink, ctx) + dn_check_gdn(isa, plan, sink, ctx) +
           dn_check_vec(isa, plan, sink, ctx) + dn_check_fp8(isa, plan, sink, ctx);
}
