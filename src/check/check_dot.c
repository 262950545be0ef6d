/* SPDX-License-Identifier: MIT */
/*
 * The quantization and quantized dot / matrix-vector kernels held to their
 * references, every output's bits (and every status and reported index).
 *
 *  - scale: the kernels' exact activation scale (dn_quant_fast_scale) against
 *    dn_block_scale / dn_wide_scale, on amax drawn over every binade with
 *    significands that stress the rounding (multiples of the bound, grid
 *    values, all-ones, random), both grids, both word counts;
 *  - quantize: rows of 0..16 blocks (and a few long ones) in every input
 *    regime (denormals, infinities, NaNs report the first index), plus blocks
 *    built of exact ties x = (j + 1/2) m 2^e and their neighbours;
 *  - mat_vec <format>: for every format, both scalings and both word counts,
 *    matrices of 1..17 rows of 1..16 blocks built byte by byte: random digits
 *    and sub-block scales, blocks of extreme digits, binary16 scales of
 *    every kind (typical, every exponent, subnormal, zero, negative, repeated,
 *    rarely infinite or NaN: an unreadable block), against activation rows
 *    quantized from floats of every kind (outliers, zero blocks, tiny and
 *    huge values) or built code by code (full-range codes, -128 and -32768,
 *    exponents spread past the kernels' fast path and past the usable range,
 *    pieces tiny enough to flush), and an "integers" mode whose pieces land
 *    on f32 rounding ties. A random row range of each matrix is compared;
 *  - mat_mul (the prefill product over prepared columns): check_dot_mm.c.
 */
#include "check.h"
#include "decodenum/fp32.h"
#include "bits.h"
#include "dispatch.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const dn_type dn_check_dot_types[DN_CHECK_DOT_TYPES] = {
    DN_TYPE_Q4_0, DN_TYPE_Q4_1, DN_TYPE_Q5_0, DN_TYPE_Q5_1, DN_TYPE_Q8_0,   DN_TYPE_Q2_K,
    DN_TYPE_Q3_K, DN_TYPE_Q4_K, DN_TYPE_Q5_K, DN_TYPE_Q6_K, DN_TYPE_IQ4_NL, DN_TYPE_IQ4_XS};
const char *const dn_check_dot_names[DN_CHECK_DOT_TYPES] = {
    "mat_vec Q4_0", "mat_vec Q4_1", "mat_vec Q5_0",   "mat_vec Q5_1",
    "mat_vec Q8_0", "mat_vec Q2_K", "mat_vec Q3_K",   "mat_vec Q4_K",
    "mat_vec Q5_K", "mat_vec Q6_K", "mat_vec IQ4_NL", "mat_vec IQ4_XS"};

/* ---- scale --------------------------------------------------------------------- */

static void check_scale(const dn_check_plan *plan, dn_check_result *res)
{
    dn_rng r = {plan->seed ^ UINT64_C(0x5CA1E)};
    size_t cases = plan->every_length_to >= 300 ? 400000 : 40000;
    for (size_t i = 0; i < cases; i++) {
        uint64_t z = dn_rng_next(&r);
        uint32_t E = 1 + (uint32_t)(z % 254); /* every binade of normal floats */
        uint32_t M;                           /* 24-bit significand */
        switch ((z >> 8) % 6) {
        case 0: { /* bound * grid value: the exact ceiling is reached */
            uint32_t bound = (z >> 11) & 1 ? 127 : 32767, m = 8 + (uint32_t)((z >> 12) % 248);
            uint64_t v = (uint64_t)bound * m;
            while (v < 0x800000) v <<= 1;
            while (v >= 0x1000000) v >>= 1; /* may drop bits: close to a grid value */
            M = (uint32_t)v;
            break;
        }
        case 1: M = 0xFFFFFF - (uint32_t)((z >> 12) % 4); break;
        case 2: M = 0x800000 + (uint32_t)((z >> 12) % 4); break;
        default: M = 0x800000 | (uint32_t)((z >> 12) & 0x7FFFFF); break;
        }
        float amax = dn_from_bits(E << 23 | (M & 0x7FFFFF));
        dn_words words = (z >> 40) & 1 ? DN_WORDS_TWO : DN_WORDS_ONE;
        int32_t lo = (z >> 41) & 1 ? 128 : 8;
        dn_act_scale want, got;
        (lo == 8 ? dn_block_scale : dn_wide_scale)(amax, words, &want);
        dn_quant_fast_scale(amax, lo, words, &got);
        if (want.m != got.m || want.e != got.e)
            dn_check_mismatch(
                res, "scale amax=0x%08" PRIx32 " lo=%d words=%d: reference %d*2^%d, kernel %d*2^%d",
                dn_bits(amax), (int)lo, (int)words, (int)want.m, (int)want.e, (int)got.m,
                (int)got.e);
        res->compared++;
    }
}

/* ---- sum_odd ------------------------------------------------------------------ */

/* dn_dot_sum_odd rounded to f32 against dn_exact_sum of the same two terms:
   exact doubles a = ma 2^ea and b = mb 2^eb with up to 55 places between
   their exponents (inside the exact sum's window, so it is exact too), a
   often an f32 tie (25 significant bits, the last set). */
static void check_sum_odd(const dn_check_plan *plan, dn_check_result *res)
{
    dn_rng r = {plan->seed ^ UINT64_C(0x0DD)};
    size_t cases = plan->every_length_to >= 300 ? 400000 : 40000;
    for (size_t i = 0; i < cases; i++) {
        int64_t ma = (int64_t)(dn_rng_next(&r) >> 11) | 1;
        int64_t mb = (int64_t)(dn_rng_next(&r) >> (11 + dn_rng_below(&r, 40)));
        if (dn_rng_next(&r) & 1) ma = -ma;
        if (dn_rng_next(&r) & 1) mb = -mb;
        if (dn_rng_next(&r) & 1) { /* a on an f32 tie */
            uint64_t m = (uint64_t)(ma < 0 ? -ma : ma);
            int drop = 63 - __builtin_clzll(m) - 24;
            m = ((m >> drop) << drop) | (UINT64_C(1) << drop);
            ma = ma < 0 ? -(int64_t)m : (int64_t)m;
        }
        int ea = -140 + (int)dn_rng_below(&r, 270), eb = ea - 5 - (int)dn_rng_below(&r, 50);
        if (dn_rng_next(&r) & 1) {
            int t = ea;
            ea = eb;
            eb = t;
            int64_t u = ma;
            ma = mb;
            mb = u;
        }
        dn_term t[2] = {{ma, ea, 0}, {mb, eb, 0}};
        float want,
            got = (float)(dn_dot_sum_odd(ldexp((double)ma, ea), ldexp((double)mb, eb)) + 0.0);
        dn_exact_sum(t, 2, &want);
        /* the engine flushes a denormal result (got is IEEE's) */
        if ((dn_bits(got) & 0x7F800000u) == 0) got = dn_from_bits(dn_bits(got) & 0x80000000u);
        res->compared++;
        if (dn_bits(want) != dn_bits(got))
            dn_check_mismatch(
                res, "sum_odd %lld*2^%d + %lld*2^%d: exact 0x%08" PRIx32 ", kernel 0x%08" PRIx32,
                (long long)ma, ea, (long long)mb, eb, dn_bits(want), dn_bits(got));
    }
}

/* ---- quantize -------------------------------------------------------------------- */

/* A block of exact ties and near-ties: x[0] = bound * m 2^e (so the scale is
   m 2^e), the rest (j + 1/2) m 2^e, some nudged by an ulp. */
static void fill_ties(dn_rng *r, float *x, size_t len, int32_t lo, dn_words words)
{
    int32_t bound = words == DN_WORDS_ONE ? 127 : 32767;
    int32_t m = lo + (int32_t)dn_rng_below(r, (uint64_t)lo);
    int e = -30 + (int)dn_rng_below(r, 40);
    x[0] = ldexpf((float)(bound * m), e) * ((dn_rng_next(r) & 1) ? 1.0f : -1.0f);
    for (size_t i = 1; i < len; i++) {
        int32_t j = (int32_t)dn_rng_below(r, (uint64_t)bound);
        float v = ldexpf((float)((2 * j + 1) * m), e - 1);
        uint64_t z = dn_rng_next(r);
        if ((z & 3) == 0)
            v = nextafterf(v, INFINITY);
        else if ((z & 3) == 1)
            v = nextafterf(v, 0.0f);
        x[i] = (z & 4) ? -v : v;
    }
}

static void check_quantize(const dn_quant_kernels *kern, const dn_check_plan *plan, size_t cases,
                           dn_check_result *res)
{
    const size_t maxn = 64 * 256;
    float *x = malloc(maxn * sizeof *x);
    int16_t *c_ref = malloc(maxn * sizeof *c_ref), *c_k = malloc(maxn * sizeof *c_k);
    dn_act_scale *s_ref = malloc(maxn / 32 * sizeof *s_ref + 8),
                 *s_k = malloc(maxn / 32 * sizeof *s_k + 8);
    if (!x || !c_ref || !c_k || !s_ref || !s_k) {
        dn_check_mismatch(res, "out of memory");
        goto out;
    }
    dn_rng r = {plan->seed ^ UINT64_C(0x0A7)};
    for (size_t i = 0; i < cases; i++) {
        int per_block = (int)dn_rng_below(&r, 2);
        size_t block = per_block && dn_rng_below(&r, 2) ? 256 : 32;
        int32_t lo = per_block ? 128 : 8;
        dn_words words = dn_rng_below(&r, 2) ? DN_WORDS_TWO : DN_WORDS_ONE;
        size_t blocks = i % 50 == 49 ? (size_t)dn_rng_below(&r, maxn / block + 1)
                                     : (size_t)dn_rng_below(&r, 17);
        size_t n = blocks * block;
        int mode = (int)dn_rng_below(&r, DN_REGIME_COUNT + 2);
        if (mode < DN_REGIME_COUNT) {
            dn_fill_f32(&r, (dn_regime)mode, x, n);
            /* specials and bits draw non-finite values; keep them rare elsewhere */
        } else if (mode == DN_REGIME_COUNT) {
            for (size_t b = 0; b < blocks; b++) fill_ties(&r, x + b * block, block, lo, words);
        } else {
            dn_fill_f32(&r, DN_REGIME_NORMAL, x, n);
            for (size_t b = 0; b < blocks; b++) { /* zero blocks and outliers */
                uint64_t z = dn_rng_next(&r);
                if ((z & 3) == 0)
                    memset(x + b * block, 0, block * sizeof *x);
                else if ((z & 3) == 1)
                    x[b * block + (z >> 8) % block] = ldexpf(1.0f, 20 + (int)((z >> 20) % 90));
            }
        }
        for (size_t k = 0; k < n; k++) c_ref[k] = c_k[k] = (int16_t)0x5555;
        dn_act_row a_ref = {c_ref, s_ref, n, 0, DN_WORDS_ONE}, a_k = {c_k, s_k, n, 0, DN_WORDS_ONE};
        size_t bad_ref = (size_t)-1, bad_k = (size_t)-1;
        dn_status st_ref = dn_ref_quantize(x, n, block, lo, words, &a_ref, &bad_ref);
        dn_status st_k = kern->quantize(x, n, block, lo, words, &a_k, &bad_k);
        res->compared++;
        if (st_ref != st_k || bad_ref != bad_k) {
            dn_check_mismatch(res, "quantize n=%zu block=%zu lo=%d: status %d/%d, bad %zu/%zu", n,
                              block, (int)lo, (int)st_ref, (int)st_k, bad_ref, bad_k);
            continue;
        }
        if (st_ref != DN_OK) continue;
        if (a_ref.block != a_k.block || a_ref.words != a_k.words)
            dn_check_mismatch(res, "quantize n=%zu: block/words differ", n);
        for (size_t b = 0; b < blocks; b++) {
            res->compared++;
            if (s_ref[b].m != s_k[b].m || s_ref[b].e != s_k[b].e)
                dn_check_mismatch(res,
                                  "quantize n=%zu block=%zu lo=%d words=%d: scale %zu reference "
                                  "%d*2^%d, kernel %d*2^%d",
                                  n, block, (int)lo, (int)words, b, (int)s_ref[b].m,
                                  (int)s_ref[b].e, (int)s_k[b].m, (int)s_k[b].e);
        }
        for (size_t k = 0; k < n; k++) {
            res->compared++;
            if (c_ref[k] != c_k[k])
                dn_check_mismatch(
                    res,
                    "quantize n=%zu block=%zu lo=%d words=%d: code %zu of x=0x%08" PRIx32
                    " reference %d, kernel %d",
                    n, block, (int)lo, (int)words, k, dn_bits(x[k]), c_ref[k], c_k[k]);
        }
    }
out:
    free(x);
    free(c_ref);
    free(c_k);
    free(s_ref);
    free(s_k);
}

/* Codes for code_sums: narrow (within +-127), wide, the edges (0, +-127,
   +-128, 32767, -32768), or narrow with one wide code. */
static void fill_codes(dn_rng *r, int16_t *c, size_t n, int mode)
{
    static const int16_t edges[] = {0, 127, -127, 128, -128, 255, -256, 32767, -32768, 1, -1};
    for (size_t i = 0; i < n; i++) {
        const uint64_t z = dn_rng_next(r);
        if (mode == 0 || mode == 3)
            c[i] = (int16_t)((int)(z % 255) - 127);
        else if (mode == 1)
            c[i] = (int16_t)(uint16_t)z;
        else
            c[i] = edges[z % (sizeof edges / sizeof edges[0])];
    }
    if (mode == 3 && n) c[dn_rng_below(r, n)] = (int16_t)(dn_rng_below(r, 2) ? 128 : -32768);
}

static void check_code_sums(const dn_quant_kernels *kern, const dn_check_plan *plan, size_t cases,
                            dn_check_result *res)
{
    enum { MAXN = 64 * 256, P = MAXN / 16 }; /* each side: sum16, sum32, amax16 at 0, P, 2 P */
    int16_t *c = malloc(MAXN * sizeof *c);
    int8_t *l_ref = malloc(2 * MAXN), *l_k = l_ref + MAXN;
    int32_t *i_ref = malloc(6 * P * sizeof *i_ref), *i_k = i_ref + 3 * P;
    if (!c || !l_ref || !i_ref) dn_check_mismatch(res, "out of memory");
    dn_rng r = {plan->seed ^ UINT64_C(0xC0DE5)};
    for (size_t t = 0; c && l_ref && i_ref && t < cases; t++) {
        const size_t n =
            32 * (t % 40 == 39 ? dn_rng_below(&r, MAXN / 32 + 1) : dn_rng_below(&r, 17));
        fill_codes(&r, c, n, (int)(t % 4));
        memset(l_ref, 0x5A, 2 * MAXN);
        for (size_t i = 0; i < 6 * P; i++) i_ref[i] = 0x5A5A5A5A;
        const int nr = dn_ref_code_sums(c, n, l_ref, i_ref, i_ref + P, i_ref + 2 * P);
        const int nk = kern->code_sums(c, n, l_k, i_k, i_k + P, i_k + 2 * P);
        res->compared++;
        if (nr != nk) dn_check_mismatch(res, "code_sums n=%zu: narrow %d/%d", n, nr, nk);
        for (size_t i = 0; i < MAXN; i++) {
            res->compared++;
            if (l_ref[i] != l_k[i])
                dn_check_mismatch(res, "code_sums n=%zu: low byte %zu of %d: %d/%d", n, i,
                                  i < n ? c[i] : 0, l_ref[i], l_k[i]);
        }
        for (size_t i = 0; i < 3 * P; i++) {
            res->compared++;
            if (i_ref[i] != i_k[i])
                dn_check_mismatch(res, "code_sums n=%zu: %s %zu: %d/%d", n,
                                  i < P       ? "sum16"
                                  : i < 2 * P ? "sum32"
                                              : "amax16",
                                  i % P, (int)i_ref[i], (int)i_k[i]);
        }
    }
    free(c);
    free(l_ref);
    free(i_ref);
}

/* ---- mat_vec ---------------------------------------------------------------------- */

/* A binary16 scale of the given kind. In the integers mode the scale of
   coef (field 0) is +-2^k (k in -3..15) or a few-bit integer, and the scale
   of offs (field 1) is often a tiny subnormal: a large exact piece plus a
   term far below its last place, where only an exact (or round-to-odd)
   addition rounds right. */
static uint16_t f16_scale(dn_rng *r, int integers, int field, uint16_t prev)
{
    uint64_t z = dn_rng_next(r);
    uint16_t sign = (uint16_t)((z >> 63) << 15);
    if (integers) {
        if (field == 1 && (z & 2)) return (uint16_t)(sign | (uint16_t)(1 + (z >> 2) % 7));
        /* +-2^k (k in -3..15) times 1 + a fraction of 0..10 bits */
        uint16_t frac = (z & 4) ? 0 : (uint16_t)((z >> 8) & 1023 & ~((1u << (z >> 20) % 11) - 1));
        return (uint16_t)(sign | (uint16_t)((12 + (z >> 1) % 19) << 10) | frac);
    }
    uint32_t kind = (uint32_t)((z >> 8) % 100);
    uint16_t frac = (uint16_t)((z >> 20) & 1023);
    if (kind < 50) return (uint16_t)(sign | (uint16_t)((6 + (z >> 32) % 10) << 10) | frac);
    if (kind < 65) return (uint16_t)(sign | (uint16_t)((1 + (z >> 32) % 30) << 10) | frac);
    if (kind < 75) return (uint16_t)(sign | (frac ? frac : 1)); /* subnormal */
    if (kind < 80) return sign;                                 /* +-0 */
    if (kind < 95) return prev;                                 /* repeated */
    return (uint16_t)(sign | (uint16_t)(30 << 10) | frac);      /* the largest binade */
}

/* Random block bytes of `type` with scales of the mode's kind; rarely (when
   allow_bad) an infinite or NaN scale. */
void dn_check_fill_block(dn_rng *r, dn_type type, uint8_t *blk, size_t bb, int integers,
                         int allow_bad, uint16_t *prev)
{
    uint64_t z = dn_rng_next(r);
    int pattern = (int)(z % 10);
    if (integers && pattern > 4) pattern = 3; /* mostly the largest digits: long exact sums */
    for (size_t i = 0; i < bb; i++) {
        if (i % 8 == 0) z = dn_rng_next(r);
        uint8_t y = (uint8_t)(z >> (8 * (i % 8)));
        blk[i] = pattern == 0   ? 0xFF
                 : pattern == 1 ? 0x00
                 : pattern == 2 ? 0x88
                 : pattern == 3 ? (uint8_t)(0xFF ^ (y & (y >> 3) & 0x11))
                                : y;
    }
    /* the binary16 fields */
    int at[2] = {-1, -1};
    switch (type) {
    case DN_TYPE_Q4_1:
    case DN_TYPE_Q5_1:
    case DN_TYPE_Q4_K:
    case DN_TYPE_Q5_K:
        at[0] = 0;
        at[1] = 2;
        break;
    case DN_TYPE_Q2_K:
        at[0] = 80;
        at[1] = 82;
        break;
    case DN_TYPE_Q3_K: at[0] = 108; break;
    case DN_TYPE_Q6_K: at[0] = 208; break;
    default: at[0] = 0; break;
    }
    for (int k = 0; k < 2; k++) {
        if (at[k] < 0) continue;
        uint16_t h = f16_scale(r, integers, k, *prev);
        if (allow_bad && dn_rng_below(r, 400) == 0)
            h = (uint16_t)(0x7C00 | (dn_rng_next(r) & 0x83FF));
        *prev = h;
        blk[at[k]] = (uint8_t)h;
        blk[at[k] + 1] = (uint8_t)(h >> 8);
    }
}

/* An activation row for n elements under scaling/words, of the given mode. */
static void fill_act(dn_rng *r, dn_act_row *a, size_t n, size_t block, int32_t lo, dn_words words,
                     int mode, float *x)
{
    a->n = n;
    a->block = (uint32_t)block;
    a->words = words;
    size_t nb = block ? n / block : 0;
    int32_t bound = words == DN_WORDS_ONE ? 127 : 32767;
    if (mode <= 2) { /* from floats, by the reference quantizer */
        dn_fill_f32(r, mode == 2 ? DN_REGIME_TINY : DN_REGIME_NORMAL, x, n);
        for (size_t i = 0; i < n; i++)
            if (!isfinite(x[i])) x[i] = 1.0f;
        for (size_t b = 0; b < nb; b++) {
            uint64_t z = dn_rng_next(r);
            if (mode == 1 && (z & 3) == 0) memset(x + b * block, 0, block * sizeof *x);
            if (mode == 1 && (z & 3) == 1) x[b * block + (z >> 8) % block] *= 0x1p12f;
            if (mode == 1 && (z & 3) == 2)
                for (size_t i = b * block; i < (b + 1) * block; i++)
                    x[i] *= ldexpf(1.0f, (int)((z >> 16) % 80) - 40);
        }
        dn_ref_quantize(x, n, block, lo, words, a, NULL);
        return;
    }
    /* code by code */
    int spread = mode == 3 ? 0 : mode == 4 ? 3 : mode == 5 ? 45 : 0;
    int e0 = -20 + (int)dn_rng_below(r, 30);
    if (mode == 6) e0 = -175 + (int)dn_rng_below(r, 20); /* tiny pieces */
    if (mode == 7)
        e0 = dn_rng_below(r, 2) ? 590 + (int)dn_rng_below(r, 20) : -610 + (int)dn_rng_below(r, 20);
    for (size_t b = 0; b < nb; b++) {
        uint64_t z = dn_rng_next(r);
        dn_act_scale *s = &a->scales[b];
        if (mode == 8) { /* integers: the scale is 1 */
            s->m = lo;
            s->e = lo == 8 ? -3 : -7;
        } else {
            s->m = (z & 7) == 0 ? 1 + (int32_t)((z >> 3) % 255)
                                : lo + (int32_t)((z >> 3) % (uint64_t)lo);
            s->e = e0 + (spread ? (int)((z >> 16) % (uint64_t)(2 * spread + 1)) - spread : 0);
        }
        int kind = (int)((z >> 32) % 8);
        if (mode == 8 && kind > 1) kind = (z >> 40) % 3 ? 1 : kind; /* mostly extreme codes */
        for (size_t i = b * block; i < (b + 1) * block; i++) {
            uint64_t y = dn_rng_next(r);
            int32_t c;
            if (kind == 0)
                c = 0;            /* a zero block */
            else if (kind == 1) { /* extremes, mostly of the block's sign */
                int pos = (y & 7) == 0 ? (int)(y >> 3 & 1) : (int)(z >> 50 & 1);
                c = pos ? bound - (int32_t)((y >> 8) % 3) : -bound + (int32_t)((y >> 8) % 3);
            } else if (kind == 2 && (y & 15) == 0)
                c = words == DN_WORDS_ONE ? -128 : -32768;
            else
                c = (int32_t)(y % (uint64_t)(2 * bound + 1)) - bound;
            a->codes[i] = (int16_t)c;
        }
    }
}

/* Sets weight digit e of a block of a format with an offset term to its
   largest value (big) or 0, following src/blocks.c's layouts. */
static void set_digit(dn_type t, uint8_t *blk, size_t e, int big)
{
    size_t i;
    unsigned sh;
    switch (t) {
    case DN_TYPE_Q4_1:
    case DN_TYPE_Q5_1: {
        uint8_t *qs = blk + (t == DN_TYPE_Q4_1 ? 4 : 8);
        i = e % 16, sh = e < 16 ? 0 : 4;
        qs[i] = (uint8_t)((qs[i] & ~(15u << sh)) | (big ? 15u << sh : 0));
        if (t == DN_TYPE_Q5_1)
            blk[4 + e / 8] = (uint8_t)((blk[4 + e / 8] & ~(1u << e % 8)) | (big ? 1u << e % 8 : 0));
        return;
    }
    case DN_TYPE_Q2_K:
        i = 16 + 32 * (e / 128) + e % 32, sh = 2 * (unsigned)((e % 128) / 32);
        blk[i] = (uint8_t)((blk[i] & ~(3u << sh)) | (big ? 3u << sh : 0));
        return;
    case DN_TYPE_Q4_K:
    case DN_TYPE_Q5_K:
        i = (t == DN_TYPE_Q4_K ? 16 : 48) + 32 * (e / 64) + e % 32, sh = e % 64 < 32 ? 0 : 4;
        blk[i] = (uint8_t)((blk[i] & ~(15u << sh)) | (big ? 15u << sh : 0));
        if (t == DN_TYPE_Q5_K)
            blk[16 + e % 32] =
                (uint8_t)((blk[16 + e % 32] & ~(1u << e / 32)) | (big ? 1u << e / 32 : 0));
        return;
    default: return;
    }
}

/* The ties mode: most codes 0; a 16-element unit holds at most two pairs
   (c, -c + delta), delta in -1..1, so the offset sums are tiny; digits are
   largest where the code is positive and 0 elsewhere, so the coef sums are
   c times a digit times a sub-block scale: about 25 significant bits with
   two words (a binary16 d of a few bits makes up the rest with one), on an
   f32 tie about half the time. With the activation scale 1 and a subnormal
   offset scale, the piece is d A + dm B with dm B far below A's last place:
   only an exact or round-to-odd addition rounds it right. */
static void fill_ties_act(dn_rng *r, dn_act_row *a, int32_t lo, dn_words words)
{
    int32_t bound = words == DN_WORDS_ONE ? 127 : 32767;
    for (size_t b = 0; b < a->n / a->block; b++) {
        a->scales[b].m = lo;
        a->scales[b].e = lo == 8 ? -3 : -7;
    }
    memset(a->codes, 0, a->n * sizeof *a->codes);
    for (size_t g = 0; g < a->n; g += 256) { /* one pair per group of 256 (or per 32) */
        size_t len = a->n - g < 256 ? a->n - g : 256;
        for (size_t at = g; at < g + len; at += dn_rng_below(r, 2) ? 256 : 32) {
            int32_t v = (bound / 2 + (int32_t)dn_rng_below(r, (uint64_t)(bound / 2))) | 1;
            size_t i = at + 2 * (size_t)dn_rng_below(r, (at + 32 <= g + len ? 32 : 16) / 2);
            a->codes[i] = (int16_t)v;
            a->codes[i + 1] = (int16_t)(-v + (int32_t)dn_rng_below(r, 3) - 1);
        }
    }
}

typedef struct mv_bufs {
    uint8_t *w;
    float *x, *o_ref, *o_k;
    int16_t *codes;
    dn_act_scale *scales;
} mv_bufs;

static void check_mat_vec_type(const dn_dot_kernels *kern, size_t ti, size_t cases, uint64_t seed,
                               mv_bufs *b, dn_check_result *res)
{
    dn_type type = dn_check_dot_types[ti];
    size_t be = dn_type_block_elements(type), bb = dn_type_block_bytes(type);
    dn_rng r = {seed * 977 + ti};
    for (size_t i = 0; i < cases; i++) {
        dn_act_scaling scaling = (i & 1) ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
        dn_words words = (i & 2) ? DN_WORDS_TWO : DN_WORDS_ONE;
        /* rows: 1..6, or in half the cases 1..17 (two row groups of the
           repacked layouts and part of a third) */
        size_t blocks = 1 + (size_t)dn_rng_below(&r, 16),
               rows = 1 + (size_t)dn_rng_below(&r, i % 8 < 4 ? 6 : 17);
        size_t n = blocks * be, row_bytes = blocks * bb;
        int act_mode = (int)dn_rng_below(&r, 9);
        int ties = dn_rng_below(&r, 4) == 0;
        int integers = ties || act_mode == 8 || dn_rng_below(&r, 8) == 0;
        int allow_bad = dn_rng_below(&r, 10) == 0;
        uint16_t prev = 0x3C00;
        for (size_t rr = 0; rr < rows; rr++)
            for (size_t k = 0; k < blocks; k++)
                dn_check_fill_block(&r, type, b->w + rr * row_bytes + k * bb, bb, integers,
                                    allow_bad, &prev);
        if (integers && act_mode != 8) act_mode = 8;
        size_t ablock = scaling == DN_ACT_SUB32 ? 32 : be;
        dn_act_row act = {b->codes, b->scales, n, 0, words};
        int32_t lo = scaling == DN_ACT_SUB32 ? 8 : 128;
        if (ties && (type == DN_TYPE_Q4_1 || type == DN_TYPE_Q5_1 || type == DN_TYPE_Q2_K ||
                     type == DN_TYPE_Q4_K || type == DN_TYPE_Q5_K)) {
            act.block = (uint32_t)ablock;
            fill_ties_act(&r, &act, lo, words);
            for (size_t rr = 0; rr < rows; rr++)
                for (size_t e = 0; e < n; e++)
                    set_digit(type, b->w + rr * row_bytes + e / be * bb, e % be, act.codes[e] > 0);
            act_mode = 9;
        } else {
            fill_act(&r, &act, n, ablock, lo, words, act_mode, b->x);
        }
        size_t r0 = (size_t)dn_rng_below(&r, rows),
               r1 = r0 + 1 + (size_t)dn_rng_below(&r, rows - r0);
        for (size_t k = 0; k < rows; k++) b->o_ref[k] = b->o_k[k] = dn_from_bits(0x7F812345u);
        size_t bad_ref = (size_t)-1, bad_k = (size_t)-1;
        dn_status st_ref = dn_dot_scalar.mat_vec_rows(type, b->w, rows, n, &act, scaling, r0, r1,
                                                      b->o_ref, &bad_ref);
        dn_status st_k =
            kern->mat_vec_rows(type, b->w, rows, n, &act, scaling, r0, r1, b->o_k, &bad_k);
        dn_check_repacked_rows(kern, type, b->w, rows, n, &act, scaling, r0, r1, b->o_ref, st_ref,
                               bad_ref, res);
        res->compared++;
        if (st_ref != st_k || bad_ref != bad_k) {
            dn_check_mismatch(
                res,
                "%s n=%zu rows=%zu..%zu scaling=%d words=%d mode=%d: status %d/%d, bad %zu/%zu",
                dn_check_dot_names[ti], n, r0, r1, (int)scaling, (int)words, act_mode, (int)st_ref,
                (int)st_k, bad_ref, bad_k);
            continue;
        }
        /* on an error, the rows before the failing one are defined */
        size_t upto = st_ref == DN_OK ? r1 : (bad_ref / blocks > r0 ? bad_ref / blocks : r0);
        for (size_t k = r0; k < upto; k++) {
            res->compared++;
            if (dn_bits(b->o_ref[k]) != dn_bits(b->o_k[k]))
                dn_check_mismatch(
                    res,
                    "%s n=%zu row %zu scaling=%d words=%d mode=%d: reference 0x%08" PRIx32
                    ", kernel 0x%08" PRIx32,
                    dn_check_dot_names[ti], n, k, (int)scaling, (int)words, act_mode,
                    dn_bits(b->o_ref[k]), dn_bits(b->o_k[k]));
        }
    }
}

/* The kernel's mat_vec_rows against the reference's on rows [0, rows) of
   b->w with the Sub32 one-word activation in b->codes, b->scales (n
   elements): the same status and the bits of every row. */
static void compare_sub32_rows(const dn_dot_kernels *kern, dn_type type, mv_bufs *b, size_t rows,
                               size_t n, const char *what, dn_check_result *res)
{
    dn_act_row act = {b->codes, b->scales, n, 32, DN_WORDS_ONE};
    size_t bad_ref = 0, bad_k = 0;
    dn_status st_ref = dn_dot_scalar.mat_vec_rows(type, b->w, rows, n, &act, DN_ACT_SUB32, 0, rows,
                                                  b->o_ref, &bad_ref);
    dn_status st_k =
        kern->mat_vec_rows(type, b->w, rows, n, &act, DN_ACT_SUB32, 0, rows, b->o_k, &bad_k);
    for (size_t r = 0; r < rows; r++) {
        res->compared++;
        if (st_ref != st_k || dn_bits(b->o_ref[r]) != dn_bits(b->o_k[r]))
            dn_check_mismatch(res,
                              "%s row %zu: reference 0x%08" PRIx32 " (status %d), kernel "
                              "0x%08" PRIx32 " (status %d)",
                              what, r, dn_bits(b->o_ref[r]), (int)st_ref, dn_bits(b->o_k[r]),
                              (int)st_k);
    }
}

/* Q4_K and Q5_K at the bounds of the kernels' integer sums under Sub32:
   every digit, sub-block scale and min at its largest (all bytes 0xFF),
   every code +-127 of one sign per row, and activation scales whose factors
   f_k = m_k 2^(e_k - emin) sit at the kernels' largest (15 * 2^5 for Q4_K,
   15 * 2^4 for Q5_K; dn_dot_factor_max) or one binade past it. */
static void check_extreme_k(const dn_dot_kernels *kern, dn_type type, mv_bufs *b,
                            dn_check_result *res)
{
    const size_t n = 512, rows = 4, bb = dn_type_block_bytes(type), row_bytes = n / 256 * bb;
    memset(b->w, 0xFF, rows * row_bytes);
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < n / 256; k++) {
            uint8_t *blk = b->w + r * row_bytes + k * bb;
            uint16_t d = r & 1 ? 0xBC00 : 0x3C00, dm = r & 2 ? 0xBC00 : 0x3C00; /* +-1 */
            blk[0] = (uint8_t)d;
            blk[1] = (uint8_t)(d >> 8);
            blk[2] = (uint8_t)dm;
            blk[3] = (uint8_t)(dm >> 8);
        }
    const int32_t shift = type == DN_TYPE_Q4_K ? 5 : 4;
    for (int past = 0; past < 2; past++)
        for (int sign = -1; sign <= 1; sign += 2) {
            for (size_t i = 0; i < n; i++) b->codes[i] = (int16_t)(127 * sign);
            for (size_t k = 0; k < n / 32; k++) {
                /* the group's first block holds emin with f = 255; the rest f = 15 * 2^shift */
                b->scales[k].m = k % 8 == 0 ? 255 : 15;
                b->scales[k].e = k % 8 == 0 ? 0 : shift + past;
            }
            char what[64];
            snprintf(what, sizeof what, "%s extreme sums (past %d, sign %d)",
                     type == DN_TYPE_Q4_K ? "Q4_K" : "Q5_K", past, sign);
            compare_sub32_rows(kern, type, b, rows, n, what, res);
        }
}

/* Q8_0 under Sub32, a group whose piece is an f32 tie plus a term far
   below the tie's last double place: block 0 gives d_0 C_0 S_0 = (1346 /
   1024) * 24929 * 8 = 2^28 + 16, halfway between two floats (1346 * 24929
   = 2 (2^24 + 1)); block 1 gives +-2^-24 * 8 * 2^-20, 2^-41, which no
   double sum beside 2^28 keeps. The exact piece rounds away from the tie,
   the double sum would round to even: the kernel must send the group to
   the reference (its Sub32 exactness check). Rows: both signs of either
   term. */
static void check_tie_q8_0(const dn_dot_kernels *kern, mv_bufs *b, dn_check_result *res)
{
    const size_t n = 256, rows = 4, bb = 34, row_bytes = n / 32 * bb;
    memset(b->w, 0, rows * row_bytes);
    for (size_t i = 0; i < n; i++) b->codes[i] = 0;
    b->codes[0] = b->codes[1] = 127;
    b->codes[2] = b->codes[32] = 1;
    for (size_t k = 0; k < n / 32; k++) b->scales[k] = (dn_act_scale){8, k == 1 ? -20 : 0};
    for (size_t r = 0; r < rows; r++) {
        uint8_t *row = b->w + r * row_bytes;
        const int s0 = r & 2 ? -1 : 1, s1 = r & 1 ? -1 : 1;
        for (size_t k = 0; k < n / 32; k++) { /* d = 1 */
            row[k * bb] = 0x00;
            row[k * bb + 1] = 0x3C;
        }
        row[0] = 0x42; /* 0x3D42: 1346 / 1024 */
        row[1] = 0x3D;
        row[2] = (uint8_t)(int8_t)(127 * s0); /* 127 * 127 + 69 * 127 + 37 * 1 = 24929 */
        row[3] = (uint8_t)(int8_t)(69 * s0);
        row[4] = (uint8_t)(int8_t)(37 * s0);
        row[bb] = 0x01; /* 0x0001: 2^-24 */
        row[bb + 1] = 0x00;
        row[bb + 2] = (uint8_t)(int8_t)s1;
    }
    compare_sub32_rows(kern, DN_TYPE_Q8_0, b, rows, n, "Q8_0 tie", res);
}

int dn_check_dot(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    const dn_dot_kernels *kern = ks->dot;
    int failed = 0;
    /* A table of references held to itself proves nothing: a token run. */
    const int same = kern->mat_vec_rows == dn_ref_mat_vec_rows;
    size_t cases = plan->every_length_to >= 300 ? 1200 : 240;
    if (same) cases = 4;

    dn_check_result res = {"dot", "scale", isa, 0, 0, ""};
    if (!same) check_scale(plan, &res);
    if (res.mismatched) failed++;
    if (sink) sink(&res, ctx);

    dn_check_result so = {"dot", "sum_odd", isa, 0, 0, ""};
    if (!same) check_sum_odd(plan, &so);
    if (so.mismatched) failed++;
    if (sink) sink(&so, ctx);

    dn_check_result q = {"dot", "quantize", isa, 0, 0, ""};
    check_quantize(ks->quant, plan, same ? 20 : plan->every_length_to >= 300 ? 3000 : 600, &q);
    if (q.mismatched) failed++;
    if (sink) sink(&q, ctx);

    dn_check_result cs = {"dot", "code_sums", isa, 0, 0, ""};
    check_code_sums(ks->quant, plan, ks->quant->code_sums == dn_ref_code_sums ? 4 : 400, &cs);
    if (cs.mismatched) failed++;
    if (sink) sink(&cs, ctx);

    mv_bufs b;
    const size_t maxn = 16 * 256, maxrows = 17;
    b.w = malloc(maxrows * 16 * 210);
    b.x = malloc(maxn * sizeof *b.x);
    b.o_ref = malloc(maxrows * sizeof *b.o_ref);
    b.o_k = malloc(maxrows * sizeof *b.o_k);
    b.codes = malloc(maxn * sizeof *b.codes);
    b.scales = malloc(maxn / 32 * sizeof *b.scales + 8);
    for (size_t ti = 0; ti < DN_CHECK_DOT_TYPES; ti++) {
        dn_check_result m = {"dot", dn_check_dot_names[ti], isa, 0, 0, ""};
        if (!b.w || !b.x || !b.o_ref || !b.o_k || !b.codes || !b.scales)
            dn_check_mismatch(&m, "out of memory");
        else {
            check_mat_vec_type(kern, ti, cases, plan->seed, &b, &m);
            if (dn_check_dot_types[ti] == DN_TYPE_Q4_K || dn_check_dot_types[ti] == DN_TYPE_Q5_K)
                check_extreme_k(kern, dn_check_dot_types[ti], &b, &m);
            if (dn_check_dot_types[ti] == DN_TYPE_Q8_0) check_tie_q8_0(kern, &b, &m);
        }
        if (m.mismatched) failed++;
        if (sink) sink(&m, ctx);
    }
    dn_check_result mm = {"dot", "mat_mul", isa, 0, 0, ""};
    dn_check_dot_mat_mul(kern, same ? 8 : cases / 2, plan->seed, &mm);
    if (mm.mismatched) failed++;
    if (sink) sink(&mm, ctx);
    free(b.w);
    free(b.x);
    free(b.o_ref);
    free(b.o_k);
    free(b.codes);
    free(b.scales);
    return failed;
}
