/* SPDX-License-Identifier: MIT */
/*
 * Exact integer results from f32 inputs: dn_rne, dn_rne_div, dn_exact_sum.
 *
 * A finite non-zero f32 (after FTZ) is s * M * 2^E with M a 24-bit integer
 * (2^23 <= M < 2^24). Everything below is integer arithmetic on M and E, so
 * it is exact by construction; the only rounding is the one each function
 * names (to the nearest integer, or dn_exact_sum's single rounding to f32).
 */
#include "decodenum/fp32.h"
#include "bits.h"
#include "wide.h"
#include "wide128.h"

/* Splits a normal f32 into sign, 24-bit significand and exponent. */
static void split_normal(uint32_t u, int *neg, uint32_t *m, int32_t *e)
{
    *neg = (u >> 31) != 0;
    *m = (u & DN_FRAC_BITS) | 0x00800000u;
    *e = (int32_t)((u >> 23) & 0xFFu) - 150;
}

/* The signed result of a magnitude q with sign neg, if it fits int64_t. */
static dn_status signed_result(int neg, dn_u128 q, int64_t *out)
{
    uint64_t lo = dn_u128_lo(q);
    if (dn_u128_hi(q) != 0 || lo > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return DN_ERR_OUT_OF_RANGE;
    *out = neg ? (int64_t)(0 - lo) : (int64_t)lo;
    return DN_OK;
}

/* The nearest integer to num / den, ties to even (den >= 1). */
static dn_u128 rne_quotient(dn_u128 num, dn_u128 den)
{
    dn_u128 r, q = dn_u128_divrem(num, den, &r);
    dn_u128 rest = dn_u128_sub(den, r); /* r > den - r: above the half */
    if (dn_u128_lt(rest, r) || (!dn_u128_lt(r, rest) && (dn_u128_lo(q) & 1)))
        q = dn_u128_add(q, dn_u128_of(1));
    return q;
}

dn_status dn_rne(float x, int64_t *q)
{
    if (!q) return DN_ERR_INVALID_ARGUMENT;
    return dn_rne_div(x, 1, 0, q);
}

dn_status dn_rne_div(float x, uint32_t m, int32_t e, int64_t *q)
{
    if (!q || m == 0) return DN_ERR_INVALID_ARGUMENT;
    uint32_t u = dn_bits(dn_flush(x));
    if ((u & DN_EXP_BITS) == DN_EXP_BITS) return DN_ERR_NON_FINITE;
    if ((u & 0x7FFFFFFFu) == 0) {
        *q = 0;
        return DN_OK;
    }

    int neg;
    uint32_t sig;
    int32_t ex;
    split_normal(u, &neg, &sig, &ex);
    /* |x| / (m 2^e) = sig * 2^d / m with d = ex - e. */
    int64_t d = (int64_t)ex - e;
    if (d >= 0) {
        /* sig >= 2^23 and m < 2^32, so the quotient is >= 2^(d-9): past 2^63
           for any d >= 72, and sig << d fits 128 bits below that. */
        if (d >= 72) return DN_ERR_OUT_OF_RANGE;
        return signed_result(
            neg, rne_quotient(dn_u128_shl(dn_u128_of(sig), (unsigned)d), dn_u128_of(m)), q);
    }
    /* sig < 2^24 <= den / 4 once -d >= 26: the quotient is below 1/2. */
    if (-d >= 26) {
        *q = 0;
        return DN_OK;
    }
    return signed_result(
        neg, rne_quotient(dn_u128_of(sig), dn_u128_shl(dn_u128_of(m), (unsigned)-d)), q);
}

/* The exponent of a term's leading one plus one: |v| * 2^e < 2^top_place. */
static int64_t top_place(const dn_term *t)
{
    uint64_t mag = t->v < 0 ? 0 - (uint64_t)t->v : (uint64_t)t->v;
    return (int64_t)(64 - __builtin_clzll(mag)) + t->e;
}

/* Whether term a is larger than b in magnitude, or as large with a larger e. */
static int larger_term(const dn_term *a, const dn_term *b)
{
    int64_t pa = top_place(a), pb = top_place(b);
    if (pa != pb) return pa > pb;
    /* Same leading place: compare the significands left-aligned. */
    uint64_t ma = a->v < 0 ? 0 - (uint64_t)a->v : (uint64_t)a->v;
    uint64_t mb = b->v < 0 ? 0 - (uint64_t)b->v : (uint64_t)b->v;
    ma <<= __builtin_clzll(ma);
    mb <<= __builtin_clzll(mb);
    if (ma != mb) return ma > mb;
    return a->e > b->e;
}

/* floor(v / 2^k) for k >= 1. */
static int64_t floor_shift(int64_t v, int64_t k)
{
    if (v >= 0) return k >= 64 ? 0 : (int64_t)((uint64_t)v >> k);
    /* floor(v / 2^k) = -1 - floor((-v - 1) / 2^k) */
    uint64_t w = (uint64_t)(-(v + 1));
    return -1 - (k >= 64 ? 0 : (int64_t)(w >> k));
}

dn_status dn_exact_sum(const dn_term *terms, size_t n, float *out)
{
    if (!out || (!terms && n)) return DN_ERR_INVALID_ARGUMENT;

    const dn_term *largest = NULL;
    for (size_t i = 0; i < n; i++)
        if (terms[i].v != 0 && (!largest || larger_term(&terms[i], largest))) largest = &terms[i];
    if (!largest) {
        *out = 0.0f;
        return DN_OK;
    }

    /* Every kept place is a multiple of 2^W. A term no larger than the
       largest has e <= L + 63, so its shift is at most 127 and its shifted
       magnitude below 2^127 (docs/numerics.md: the sum fits 256 bits). */
    int64_t W = (int64_t)largest->e - DN_SUM_WINDOW;
    dn_wide acc;
    dn_wide_set_i64(&acc, 0);
    for (size_t i = 0; i < n; i++) {
        if (terms[i].v == 0) continue;
        int64_t shift = (int64_t)terms[i].e - W;
        if (shift >= 0)
            dn_wide_add_shifted(&acc, terms[i].v, (unsigned)shift);
        else
            dn_wide_add_shifted(&acc, floor_shift(terms[i].v, -shift), 0);
    }
    *out = dn_wide_to_f32(&acc, W);
    return DN_OK;
}
