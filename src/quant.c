/* SPDX-License-Identifier: MIT */
/*
 * Activation quantization: scales m * 2^e with small significands, codes the
 * exact nearest integers of x / scale. All of it is integer arithmetic on the
 * f32 inputs' significands and exponents, so nothing here rounds but the
 * codes' own rounding to the nearest integer.
 */
#include "decodenum/quant.h"
#include "decodenum/fp32.h"
#include "bits.h"
#include "quant_kernels.h"
#include "wide128.h"

#include <math.h>
#include <string.h>

/* ceil(M * 2^(E - e) / bound), exactly; saturated past 2^64. */
static uint64_t ceil_quotient(uint64_t M, int32_t E, int32_t e, uint64_t bound)
{
    int64_t d = (int64_t)E - e;
    if (d >= 40) return UINT64_MAX; /* M >= 2^23: far past any 2 lo */
    if (d <= -100) return 1;        /* a positive value far below one unit */
    dn_u128 num = d >= 0 ? dn_u128_shl(dn_u128_of(M), (unsigned)d) : dn_u128_of(M);
    dn_u128 den = d >= 0 ? dn_u128_of(bound) : dn_u128_shl(dn_u128_of(bound), (unsigned)-d);
    dn_u128 r, q = dn_u128_divrem(dn_u128_sub(dn_u128_add(num, den), dn_u128_of(1)), den, &r);
    return dn_u128_lo(q);
}

/* The least m * 2^e with m in [lo, 2 lo) and bound * m * 2^e >= amax, for a
   finite positive amax = M * 2^E. At a fixed e the least m is
   ceil(amax / bound / 2^e); a finer grid (smaller e) never gives a larger
   value, so the answer is the smallest e whose m is below 2 lo (its m is then
   at least lo, since at e - 1 it would reach 2 lo). */
static dn_status least_scale(float amax, int32_t lo, dn_words words, dn_act_scale *s)
{
    if (!s || (words != DN_WORDS_ONE && words != DN_WORDS_TWO)) return DN_ERR_INVALID_ARGUMENT;
    uint32_t u = dn_bits(dn_flush(amax));
    if ((u >> 31) || (u & DN_EXP_BITS) == 0 || (u & DN_EXP_BITS) == DN_EXP_BITS)
        return DN_ERR_INVALID_ARGUMENT;
    const uint64_t bound = words == DN_WORDS_ONE ? 127 : 32767;
    uint64_t M = (u & DN_FRAC_BITS) | 0x00800000u;
    int32_t E = (int32_t)((u >> 23) & 0xFF) - 150;
    /* amax / bound is about 2^(23 + E - log2 bound); m about 2^log2 lo */
    int32_t e = 23 + E - (words == DN_WORDS_ONE ? 7 : 15) - (lo == 8 ? 3 : 7);
    while (ceil_quotient(M, E, e, bound) >= (uint64_t)(2 * lo)) e++;
    while (ceil_quotient(M, E, e - 1, bound) < (uint64_t)(2 * lo)) e--;
    s->m = (int32_t)ceil_quotient(M, E, e, bound);
    s->e = e;
    return DN_OK;
}

dn_status dn_block_scale(float amax, dn_words words, dn_act_scale *scale)
{
    return least_scale(amax, 8, words, scale);
}

dn_status dn_wide_scale(float amax, dn_words words, dn_act_scale *scale)
{
    return least_scale(amax, 128, words, scale);
}

/* One block: its scale from its largest magnitude, then each code. */
static dn_status quantize_block(const float *x, size_t len, int32_t lo, dn_words words,
                                int16_t *codes, dn_act_scale *scale)
{
    float amax = dn_absmax(x, len);
    if (amax == 0.0f) {
        scale->m = lo;
        scale->e = 0;
        for (size_t i = 0; i < len; i++) codes[i] = 0;
        return DN_OK;
    }
    dn_status st = least_scale(amax, lo, words, scale);
    for (size_t i = 0; st == DN_OK && i < len; i++) {
        int64_t q;
        st = dn_rne_div(x[i], (uint32_t)scale->m, scale->e, &q);
        codes[i] = (int16_t)q; /* |q| <= bound: |x| <= amax <= bound * scale */
    }
    return st;
}

/* The reference of the kernel table's quantize (quant_kernels.h). */
dn_status dn_ref_quantize(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                          dn_act_row *row, size_t *bad)
{
    if (!row || (n && !x) || row->n != n || block == 0 || n % block != 0)
        return DN_ERR_INVALID_ARGUMENT;
    if (words != DN_WORDS_ONE && words != DN_WORDS_TWO) return DN_ERR_INVALID_ARGUMENT;
    if (n && (!row->codes || !row->scales)) return DN_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = dn_bits(x[i]);
        if ((u & DN_EXP_BITS) == DN_EXP_BITS) {
            if (bad) *bad = i;
            return DN_ERR_NON_FINITE;
        }
    }
    row->block = (uint32_t)block;
    row->words = words;
    for (size_t b = 0; b < n / block; b++) {
        dn_status st = quantize_block(x + b * block, block, lo, words, row->codes + b * block,
                                      &row->scales[b]);
        if (st != DN_OK) return st;
    }
    return DN_OK;
}

/* The codes' facts for a product's activation side, 16 codes at a time as
   the kernels take them (quant_kernels.h). */
int dn_ref_code_sums(const int16_t *codes, size_t n, int8_t *low8, int32_t *sum16, int32_t *sum32,
                     int32_t *amax16)
{
    int32_t all = 0; /* the magnitudes' bits, or-ed: narrow when none is above 127 */
    for (size_t u = 0; u < n / 16; u++) {
        int32_t sum = 0, mx = 0;
        for (size_t i = 16 * u; i < 16 * u + 16; i++) {
            const int32_t v = codes[i], av = v < 0 ? -v : v;
            sum += v;
            mx = av > mx ? av : mx;
            low8[i] = (int8_t)(uint8_t)(v & 0xFF); /* two's complement: the low byte */
        }
        sum16[u] = sum;
        amax16[u] = mx;
        all |= mx;
    }
    for (size_t v = 0; v < n / 32; v++) sum32[v] = sum16[2 * v] + sum16[2 * v + 1];
    return (all & ~127) == 0;
}

/* ---- what the kernels share ------------------------------------------------ */

void dn_quant_fast_scale(float amax, int32_t lo, dn_words words, dn_act_scale *s)
{
    const double bound = words == DN_WORDS_ONE ? 127.0 : 32767.0;
    const int p = lo == 8 ? 4 : 8; /* significant bits of m */
    const unsigned drop = 52 - (unsigned)(p - 1);
    const uint64_t mask = (UINT64_C(1) << drop) - 1;
    double q = (double)amax / bound; /* normal, positive */
    uint64_t u;
    memcpy(&u, &q, 8);
    if (u & mask) u = (u | mask) + 1; /* up to the grid; a carry moves to the next binade */
    int32_t E = (int32_t)(u >> 52) - 1023;
    s->m = (int32_t)((UINT64_C(1) << (p - 1)) | ((u >> drop) & ((UINT64_C(1) << (p - 1)) - 1)));
    s->e = E - (p - 1);
}

/* ---- the kernel table ----------------------------------------------------- */

const dn_quant_kernels dn_quant_scalar = {
    .quantize = dn_ref_quantize,
    .code_sums = dn_ref_code_sums,
};
