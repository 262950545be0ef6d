/* SPDX-License-Identifier: MIT */
/*
 * blocks_f32.c: a stored row's weights as floats (dn_row_to_f32), what an
 * engine's embedding lookup (ggml's get_rows) reads.
 *
 * The definition is one dn_exact_sum per weight: the terms a.sig * coef at
 * 2^a.exp and b.sig * offs at 2^b.exp of the coded row, rounded once. Each
 * integer has |v| < 2^11 * 2^13 = 2^24, so when the two exponents are at most
 * 38 apart their sum aligned to the lower one fits in 62 bits and is the
 * exact value: dn_scaled_to_f32 of it is what dn_exact_sum returns (its
 * window of 64 places covers both terms, and it rounds as dn_scaled_to_f32
 * does). Farther apart, the element goes through dn_exact_sum itself. A
 * coded row is read one block at a time into stack arrays, so nothing is
 * allocated.
 */
#include "block_format.h"
#include "decodenum/blocks.h"
#include "decodenum/fp32.h"

#include <string.h>

/* Exponent gap below which two 24-bit terms sum exactly in an int64_t. */
#define ALIGNED_GAP 38

/* v * 2^e rounded to nearest even, as dn_scaled_to_f32 rounds, by integer
   steps where the result is a normal f32 (it is for every weight a binary16
   scale makes: |value| >= 2^-24, < 2^30); dn_scaled_to_f32 (a 256-bit
   accumulator, ~50x slower) elsewhere. */
static float rounded(int64_t v, int32_t e)
{
    if (v == 0) return 0.0f;
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int top = 63 - __builtin_clzll(mag); /* mag < 2^(top + 1) */
    int shift = top > 23 ? top - 23 : 0;
    int32_t scale = e + shift;
    if (scale < -100 || scale > 100) return dn_scaled_to_f32(v, e);
    if (shift > 0) {
        uint64_t rest = mag & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
        mag >>= shift;
        mag += rest > half || (rest == half && (mag & 1));
    }
    /* mag <= 2^24 converts exactly; the power of two is exact and so is the
       product (a normal f32 for |scale| <= 100, mag >= 1). */
    uint32_t p2 = (uint32_t)(127 + scale) << 23;
    float f;
    memcpy(&f, &p2, sizeof f);
    f *= (float)mag;
    return v < 0 ? -f : f;
}

static float weight_of(const dn_segment *sg, int16_t coef, int16_t offs)
{
    int64_t va = (int64_t)sg->a.sig * coef, vb = (int64_t)sg->b.sig * offs;
    if (vb == 0) return rounded(va, sg->a.exp);
    if (va == 0) return rounded(vb, sg->b.exp);
    int32_t lo = sg->a.exp < sg->b.exp ? sg->a.exp : sg->b.exp;
    int64_t da = (int64_t)sg->a.exp - lo, db = (int64_t)sg->b.exp - lo;
    if (da <= ALIGNED_GAP && db <= ALIGNED_GAP)
        return rounded(va * ((int64_t)1 << da) + vb * ((int64_t)1 << db), lo);
    dn_term t[2] = {{va, sg->a.exp, 0}, {vb, sg->b.exp, 0}};
    float out;
    (void)dn_exact_sum(t, 2, &out); /* cannot fail: t and out are present */
    return out;
}

/* The 16- and 32-bit element types, little-endian as ggml stores them. */
static dn_status widen_row(dn_type type, const uint8_t *bytes, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++) {
        if (type == DN_TYPE_F32) {
            const uint8_t *p = bytes + 4 * i;
            uint32_t u = (uint32_t)dn_load_u16(p) | (uint32_t)dn_load_u16(p + 2) << 16;
            memcpy(&out[i], &u, sizeof u);
        } else {
            uint16_t h = dn_load_u16(bytes + 2 * i);
            out[i] = type == DN_TYPE_F16 ? dn_f16_to_f32(h) : dn_bf16_to_f32(h);
        }
    }
    return DN_OK;
}

dn_status dn_row_to_f32(dn_type type, const uint8_t *bytes, size_t n, float *out, size_t *bad_block)
{
    size_t per = dn_type_block_elements(type);
    int plain = type == DN_TYPE_F32 || type == DN_TYPE_F16 || type == DN_TYPE_BF16;
    if (!plain && !dn_reads(type)) return DN_ERR_UNSUPPORTED_TYPE;
    if (n % per != 0) return DN_ERR_INVALID_ARGUMENT;
    if (n == 0) return DN_OK;
    if (bytes == NULL || out == NULL) return DN_ERR_INVALID_ARGUMENT;
    if (plain) return widen_row(type, bytes, n, out);
    size_t block_bytes = dn_type_block_bytes(type);
    int16_t coef[256], offs[256]; /* the largest block */
    dn_segment seg;
    for (size_t b = 0; b < n / per; b++) {
        dn_coded_row row = {coef, offs, &seg, per, 0};
        dn_status st = dn_read_row(type, bytes + b * block_bytes, per, &row, NULL);
        if (st != DN_OK) {
            if (bad_block) *bad_block = b;
            return st;
        }
        for (size_t i = 0; i < per; i++) out[b * per + i] = weight_of(&seg, coef[i], offs[i]);
    }
    return DN_OK;
}
