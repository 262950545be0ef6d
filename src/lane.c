/* SPDX-License-Identifier: MIT */
/*
 * lane.c: the block-scale lane, the reference model of the hardware array's
 * lane. Read it top to bottom:
 *
 *   1. the weight image: each format's block as unsigned codes q with a zero
 *      point z, a coefficient c and an offset multiplier n per unit of 16,
 *      so that c * (q - z) and n are the coded row's coef and offs;
 *   2. the words: how an activation code crosses the array in bytes;
 *   3. one unit: P' = sum q * a', S' = sum a', and the identities that give
 *      the sums against the signed codes back from P', Q, S' and z;
 *   4. delivering a block (or a 32-element sub-block) to a lane;
 *   5. the lane's arithmetic: the block's two sums, its scaled terms, one
 *      exact sum, one rounding, one add - exactly as dn_dot does.
 *
 * Only integer arithmetic happens until dn_exact_sum rounds, and dn_fadd
 * adds; nothing here depends on the host's byte order or floating-point
 * environment.
 */
#include "block_format.h"
#include "sizes.h"
#include "decodenum/lane.h"
#include "decodenum/dot.h"
#include "decodenum/fp32.h"

/* ==== 1. The weight image ================================================= */

/* Element e's code (0..15) in a 32-element nibble block's qs[16]: the first
   16 elements in the low nibbles, the next 16 in the high ones. */
static int nibble32(const uint8_t *qs, int e) { return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4; }

/* Element e's code goes to its unit. */
static void put_q(dn_lane_image *w, int e, int q) { w->units[e / 16].q[e % 16] = (uint8_t)q; }

/* Unit u's zero point, coefficient and offset multiplier. */
static void put_unit(dn_lane_image *w, int u, int z, int c, int n)
{
    w->units[u].z = (uint8_t)z;
    w->units[u].c = (int16_t)c;
    w->units[u].n = (int16_t)n;
}

/* An image reader fills the block's scales, every element's q and every
   unit's z, c, n; 0 when the block is unreadable. Each one's comment gives
   the decomposition; the byte layouts are those of src/blocks.c. */
typedef int (*image_reader)(const uint8_t *blk, dn_lane_image *w);

/* Q4_0: q = the nibble (0..15), z = 8, c = 1, n = 0.   coef = q - 8. */
static int image_q4_0(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q4_0, blk, &w->a, &w->b)) return 0;
    for (int e = 0; e < 32; e++) put_q(w, e, nibble32(blk + 2, e));
    for (int u = 0; u < 2; u++) put_unit(w, u, 8, 1, 0);
    return 1;
}

/* Q4_1: q = the nibble (0..15), z = 0, c = 1, n = 1.   coef = q, offs = 1. */
static int image_q4_1(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q4_1, blk, &w->a, &w->b)) return 0;
    for (int e = 0; e < 32; e++) put_q(w, e, nibble32(blk + 4, e));
    for (int u = 0; u < 2; u++) put_unit(w, u, 0, 1, 1);
    return 1;
}

/* Q5_0: q = nibble | fifth bit << 4 (0..31, two digits), z = 16, c = 1, n = 0. */
static int image_q5_0(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q5_0, blk, &w->a, &w->b)) return 0;
    uint32_t qh = dn_load_u32(blk + 2);
    for (int e = 0; e < 32; e++) put_q(w, e, nibble32(blk + 6, e) | (int)((qh >> e) & 1) << 4);
    for (int u = 0; u < 2; u++) put_unit(w, u, 16, 1, 0);
    return 1;
}

/* Q5_1: q as Q5_0 (0..31), z = 0, c = 1, n = 1. */
static int image_q5_1(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q5_1, blk, &w->a, &w->b)) return 0;
    uint32_t qh = dn_load_u32(blk + 4);
    for (int e = 0; e < 32; e++) put_q(w, e, nibble32(blk + 8, e) | (int)((qh >> e) & 1) << 4);
    for (int u = 0; u < 2; u++) put_unit(w, u, 0, 1, 1);
    return 1;
}

/* Q8_0: the signed byte s as two digits q = s + 128 (0..255), z = 128,
   c = 1, n = 0. The stored byte's bits are s's two's complement, so
   q = byte XOR 0x80. */
static int image_q8_0(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q8_0, blk, &w->a, &w->b)) return 0;
    for (int e = 0; e < 32; e++) put_q(w, e, blk[2 + e] ^ 0x80);
    for (int u = 0; u < 2; u++) put_unit(w, u, 128, 1, 0);
    return 1;
}

/* IQ4_NL: the level L[index] as two digits q = L + 128 (1..241), z = 128,
   c = 1, n = 0. */
static int image_iq4_nl(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_IQ4_NL, blk, &w->a, &w->b)) return 0;
    for (int e = 0; e < 32; e++) put_q(w, e, dn_iq4_levels[nibble32(blk + 2, e)] + 128);
    for (int u = 0; u < 2; u++) put_unit(w, u, 128, 1, 0);
    return 1;
}

/* Element e's 2-bit plane code in Q2_K's and Q3_K's qs[64]. */
static int plane2(const uint8_t *qs, int e)
{
    return (qs[32 * (e / 128) + e % 32] >> 2 * ((e % 128) / 32)) & 3;
}

/* Q2_K: unit u = sub-block u. q = the 2-bit code (0..3), z = 0,
   c = sc = scales[u] & 15, n = -m = -(scales[u] >> 4). */
static int image_q2_k(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q2_K, blk, &w->a, &w->b)) return 0;
    for (int e = 0; e < 256; e++) put_q(w, e, plane2(blk + 16, e));
    for (int u = 0; u < 16; u++) put_unit(w, u, 0, blk[u] & 15, -(blk[u] >> 4));
    return 1;
}

/* Q3_K: unit u = sub-block u. The 3-bit code with hmask's bit as its top
   bit, q = low | hbit << 2 (0..7), is ggml's signed code (low - 4 when the
   bit is clear) plus 4: z = 4, c = sc - 32 (the 6-bit scale, -32..31), n = 0. */
static int image_q3_k(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q3_K, blk, &w->a, &w->b)) return 0;
    const uint8_t *hmask = blk, *s = blk + 96;
    for (int e = 0; e < 256; e++)
        put_q(w, e, plane2(blk + 32, e) | ((hmask[e % 32] >> (e / 32)) & 1) << 2);
    for (int u = 0; u < 16; u++) put_unit(w, u, 4, dn_q3_k_scale(s, u), 0);
    return 1;
}

/* Element e's nibble in Q4_K's and Q5_K's qs[128]: 64 elements per 32 bytes,
   the first 32 in the low nibbles, the next 32 in the high ones. */
static int nibble256(const uint8_t *qs, int e)
{
    int byte = qs[32 * (e / 64) + e % 32];
    return e % 64 < 32 ? byte & 15 : byte >> 4;
}

/* Q4_K: units 2j, 2j + 1 = sub-block j of 32. q = the nibble (0..15), z = 0,
   c = sc_j (0..63), n = -m_j (-63..0). */
static int image_q4_k(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q4_K, blk, &w->a, &w->b)) return 0;
    for (int e = 0; e < 256; e++) put_q(w, e, nibble256(blk + 16, e));
    for (int u = 0; u < 16; u++) {
        int sc, m;
        dn_k_scale_min(blk + 4, u / 2, &sc, &m);
        put_unit(w, u, 0, sc, -m);
    }
    return 1;
}

/* Q5_K: as Q4_K with the fifth bit qh[e % 32] bit e / 32: q 0..31. */
static int image_q5_k(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q5_K, blk, &w->a, &w->b)) return 0;
    const uint8_t *qh = blk + 16;
    for (int e = 0; e < 256; e++)
        put_q(w, e, nibble256(blk + 48, e) | ((qh[e % 32] >> (e / 32)) & 1) << 4);
    for (int u = 0; u < 16; u++) {
        int sc, m;
        dn_k_scale_min(blk + 4, u / 2, &sc, &m);
        put_unit(w, u, 0, sc, -m);
    }
    return 1;
}

/* Q6_K: unit u = sub-block u. q = low | high << 4 (0..63), z = 32,
   c = scales[u] as a signed byte (-128..127), n = 0. */
static int image_q6_k(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_Q6_K, blk, &w->a, &w->b)) return 0;
    const uint8_t *ql = blk, *qh = blk + 128, *scales = blk + 192;
    for (int e = 0; e < 256; e++) {
        int h = e / 128, k = (e % 128) / 32, l = e % 32;
        int low = (ql[64 * h + 32 * (k & 1) + l] >> 4 * (k >> 1)) & 15;
        int high = (qh[32 * h + l] >> 2 * k) & 3;
        put_q(w, e, low | high << 4);
    }
    for (int u = 0; u < 16; u++)
        put_unit(w, u, 32, scales[u] >= 128 ? scales[u] - 256 : scales[u], 0);
    return 1;
}

/* IQ4_XS: units 2j, 2j + 1 = sub-block j of 32. q = L[index] + 128 (1..241),
   z = 128, c = ls_j - 32 (-32..31), n = 0. */
static int image_iq4_xs(const uint8_t *blk, dn_lane_image *w)
{
    if (!dn_block_scales(DN_TYPE_IQ4_XS, blk, &w->a, &w->b)) return 0;
    const uint8_t *qs = blk + 8;
    for (int e = 0; e < 256; e++) {
        int j = e / 32, byte = qs[16 * j + e % 16];
        put_q(w, e, dn_iq4_levels[e % 32 < 16 ? byte & 15 : byte >> 4] + 128);
    }
    for (int u = 0; u < 16; u++) put_unit(w, u, 128, dn_iq4_xs_scale(blk, u / 2), 0);
    return 1;
}

static image_reader image_reader_of(dn_type type)
{
    switch (type) {
    case DN_TYPE_Q4_0: return image_q4_0;
    case DN_TYPE_Q4_1: return image_q4_1;
    case DN_TYPE_Q5_0: return image_q5_0;
    case DN_TYPE_Q5_1: return image_q5_1;
    case DN_TYPE_Q8_0: return image_q8_0;
    case DN_TYPE_Q2_K: return image_q2_k;
    case DN_TYPE_Q3_K: return image_q3_k;
    case DN_TYPE_Q4_K: return image_q4_k;
    case DN_TYPE_Q5_K: return image_q5_k;
    case DN_TYPE_Q6_K: return image_q6_k;
    case DN_TYPE_IQ4_NL: return image_iq4_nl;
    case DN_TYPE_IQ4_XS: return image_iq4_xs;
    default: return NULL;
    }
}

dn_status dn_lane_image_read(dn_type type, const uint8_t *block, dn_lane_image *image)
{
    image_reader read = image_reader_of(type);
    if (read == NULL) return DN_ERR_UNSUPPORTED_TYPE;
    if (block == NULL || image == NULL) return DN_ERR_INVALID_ARGUMENT;
    *image = (dn_lane_image){0};
    image->nunits = (uint32_t)(dn_type_block_elements(type) / DN_LANE_UNIT);
    if (!read(block, image)) return DN_ERR_UNREADABLE_BLOCK;
    /* The image carries Q = sum q of every unit. */
    for (uint32_t u = 0; u < image->nunits; u++) {
        unsigned sum = 0;
        for (int i = 0; i < DN_LANE_UNIT; i++) sum += image->units[u].q[i];
        image->units[u].sum_q = (uint16_t)sum;
    }
    return DN_OK;
}

/* ==== 2. The words ========================================================== */

/* The bytes code crosses in. One word: a' = code + 128 (code in -128..127).
   Two words: code = 256 * hi + lo with lo = code mod 256 (0..255) and
   hi = (code - lo) / 256 (-128..127); hi crosses as hi + 128 (word 0), lo as
   itself (word 1). 0 when one word cannot carry the code. */
static int cross(int32_t code, int nwords, uint8_t word[2])
{
    if (nwords == 1) {
        if (code < -128 || code > 127) return 0;
        word[0] = (uint8_t)(code + DN_LANE_EXCESS);
        return 1;
    }
    int32_t lo = ((code % 256) + 256) % 256, hi = (code - lo) / 256;
    word[0] = (uint8_t)(hi + DN_LANE_EXCESS);
    word[1] = (uint8_t)lo;
    return 1;
}

/* ==== 3. One unit ============================================================ */

dn_status dn_lane_unit_sums_of(const dn_lane_unit *unit, const uint8_t word[DN_LANE_UNIT],
                               dn_lane_unit_sums *sums)
{
    if (unit == NULL || word == NULL || sums == NULL) return DN_ERR_INVALID_ARGUMENT;
    uint32_t p = 0, s = 0;
    for (int i = 0; i < DN_LANE_UNIT; i++) {
        p += (uint32_t)unit->q[i] * word[i]; /* the array's multiply-accumulate */
        s += word[i];                        /* the activation side's sum */
    }
    *sums = (dn_lane_unit_sums){p, (uint16_t)s, 0};
    return DN_OK;
}

/* The identities (docs/numerics.md section 9). With a' = a + 128:
     sum (q - z) a = sum (q - z)(a' - 128)
                   = sum q a' - 128 sum q - z sum a' + 128 * 16 * z
                   = P' - 128 Q - z S' + 2048 z,
     sum a = S' - 2048.
   With a' = a (a low byte) the 128 terms vanish. */
static void unit_dot(uint32_t p, uint32_t q_sum, uint32_t s, uint32_t z, int excess, int32_t *qa,
                     int32_t *a)
{
    const int32_t x = excess ? DN_LANE_EXCESS : 0, units = DN_LANE_UNIT;
    *qa = (int32_t)p - x * (int32_t)q_sum - (int32_t)z * (int32_t)s + x * units * (int32_t)z;
    *a = (int32_t)s - x * units;
}

static int sums_fit(const dn_lane_unit *unit, const dn_lane_unit_sums *sums)
{
    return sums->p <= DN_LANE_P_MAX && sums->s <= DN_LANE_QS_MAX && unit->sum_q <= DN_LANE_QS_MAX;
}

dn_status dn_lane_unit_dot(const dn_lane_unit *unit, const dn_lane_unit_sums *sums, int excess,
                           int32_t *qa, int32_t *a)
{
    if (unit == NULL || sums == NULL || qa == NULL || a == NULL || !sums_fit(unit, sums))
        return DN_ERR_INVALID_ARGUMENT;
    unit_dot(sums->p, unit->sum_q, sums->s, unit->z, excess != 0, qa, a);
    return DN_OK;
}

/* ==== 4. Delivering a block ================================================== */

/* Fills out for units [first, first + count) of block b, whose activations
   are act->codes[b * block + 16 * u + i] under act->scales[scale_index]. */
static dn_status deliver_units(dn_type type, const uint8_t *row, const dn_act_row *act, size_t b,
                               uint32_t first, uint32_t count, size_t scale_index,
                               dn_lane_block *out)
{
    size_t block = dn_type_block_elements(type);
    dn_status st = dn_lane_image_read(type, row + b * dn_type_block_bytes(type), &out->w);
    if (st != DN_OK) return st;
    out->act = act->scales[scale_index];
    out->first = first;
    out->count = count;
    out->nwords = act->words == DN_WORDS_ONE ? 1 : 2;
    out->reserved = 0;
    out->words[0] = (dn_lane_word_sums){1, 0, out->nwords == 1 ? 1 : 256, {{0, 0, 0}}};
    out->words[1] = (dn_lane_word_sums){0, 0, 1, {{0, 0, 0}}};
    for (uint32_t u = first; u < first + count; u++) {
        uint8_t word[2][DN_LANE_UNIT];
        for (int i = 0; i < DN_LANE_UNIT; i++) {
            uint8_t bytes[2] = {0, 0};
            if (!cross(act->codes[b * block + DN_LANE_UNIT * u + i], (int)out->nwords, bytes))
                return DN_ERR_INVALID_ARGUMENT;
            word[0][i] = bytes[0];
            word[1][i] = bytes[1];
        }
        for (uint32_t k = 0; k < out->nwords; k++)
            dn_lane_unit_sums_of(&out->w.units[u], word[k], &out->words[k].units[u]);
    }
    return DN_OK;
}

/* The checks both deliveries share: the type, the pointers, the row's shape. */
static dn_status row_ok(dn_type type, const uint8_t *row, size_t n, const dn_act_row *act, size_t b,
                        size_t act_block, const dn_lane_block *out)
{
    if (!dn_reads(type)) return DN_ERR_UNSUPPORTED_TYPE;
    size_t block = dn_type_block_elements(type);
    if (row == NULL || act == NULL || out == NULL || act->codes == NULL || act->scales == NULL)
        return DN_ERR_INVALID_ARGUMENT;
    size_t row_bytes; /* a row that would not fit in memory */
    if (n % block != 0 || b >= n / block || act->n != n || act->block != act_block ||
        !dn_size_mul(n / block, dn_type_block_bytes(type), &row_bytes))
        return DN_ERR_INVALID_ARGUMENT;
    if (act->words != DN_WORDS_ONE && act->words != DN_WORDS_TWO) return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

dn_status dn_lane_deliver(dn_type type, const uint8_t *row, size_t n, const dn_act_row *act,
                          size_t b, dn_lane_block *out)
{
    dn_status st = row_ok(type, row, n, act, b, dn_type_block_elements(type), out);
    if (st != DN_OK) return st;
    uint32_t units = (uint32_t)(dn_type_block_elements(type) / DN_LANE_UNIT);
    return deliver_units(type, row, act, b, 0, units, b, out);
}

dn_status dn_lane_deliver32(dn_type type, const uint8_t *row, size_t n, const dn_act_row *act,
                            size_t b, size_t s, dn_lane_block *out)
{
    dn_status st = row_ok(type, row, n, act, b, DN_LANE_SUB_BLOCK, out);
    if (st != DN_OK) return st;
    size_t block = dn_type_block_elements(type);
    if (s >= block / DN_LANE_SUB_BLOCK) return DN_ERR_INVALID_ARGUMENT;
    const uint32_t per_sub = DN_LANE_SUB_BLOCK / DN_LANE_UNIT; /* 2 */
    return deliver_units(type, row, act, b, (uint32_t)s * per_sub, per_sub,
                         (b * block + s * DN_LANE_SUB_BLOCK) / DN_LANE_SUB_BLOCK, out);
}

/* ==== 5. The lane's arithmetic ============================================== */

/* A block some delivery could have made (dn_lane_block's rules). */
static int block_ok(const dn_lane_block *blk)
{
    const dn_lane_image *w = &blk->w;
    if (w->nunits != 2 && w->nunits != 16) return 0;
    if (blk->count == 0 || blk->first >= w->nunits || blk->count > w->nunits - blk->first) return 0;
    if (blk->nwords == 1) {
        if (blk->words[0].excess != 1 || blk->words[0].weight != 1) return 0;
    } else if (blk->nwords == 2) {
        if (blk->words[0].excess != 1 || blk->words[0].weight != 256) return 0;
        if (blk->words[1].excess != 0 || blk->words[1].weight != 1) return 0;
    } else {
        return 0;
    }
    for (uint32_t u = blk->first; u < blk->first + blk->count; u++) {
        const dn_lane_unit *unit = &w->units[u];
        unsigned sum = 0;
        for (int i = 0; i < DN_LANE_UNIT; i++) sum += unit->q[i];
        if (sum != unit->sum_q) return 0;
        for (uint32_t k = 0; k < blk->nwords; k++)
            if (!sums_fit(unit, &blk->words[k].units[u])) return 0;
    }
    return 1;
}

dn_status dn_lane_block_sums(const dn_lane_block *blk, int64_t *coef_sum, int64_t *offs_sum)
{
    if (blk == NULL || coef_sum == NULL || offs_sum == NULL || !block_ok(blk))
        return DN_ERR_INVALID_ARGUMENT;
    int64_t coef = 0, offs = 0;
    for (uint32_t u = blk->first; u < blk->first + blk->count; u++) {
        const dn_lane_unit *unit = &blk->w.units[u];
        /* The unit's sums against the signed codes, every word weighted. */
        int64_t unit_qa = 0, unit_a = 0;
        for (uint32_t k = 0; k < blk->nwords; k++) {
            const dn_lane_word_sums *word = &blk->words[k];
            int32_t qa, a;
            unit_dot(word->units[u].p, unit->sum_q, word->units[u].s, unit->z, word->excess, &qa,
                     &a);
            unit_qa += (int64_t)word->weight * qa;
            unit_a += (int64_t)word->weight * a;
        }
        coef += unit->c * unit_qa;
        offs += unit->n * unit_a;
    }
    if (coef < -DN_LANE_SUM_BOUND || coef > DN_LANE_SUM_BOUND || offs < -DN_LANE_SUM_BOUND ||
        offs > DN_LANE_SUM_BOUND)
        return DN_ERR_INVALID_ARGUMENT;
    *coef_sum = coef;
    *offs_sum = offs;
    return DN_OK;
}

/* dn_dot's domain for a scale and an activation scale. */
static int scale_ok(dn_scale s)
{
    return s.sig >= -32768 && s.sig <= 32768 && s.exp >= -(1 << 20) && s.exp <= (1 << 20);
}

/* The covered elements' two terms, as dn_dot makes them:
   (a.sig * m) * coef_sum at 2^(a.exp + e), (b.sig * m) * offs_sum at 2^(b.exp + e).
   |term| <= 2^15 * 2^8 * 2^35 = 2^58: exact in int64_t. */
static dn_status terms_of(const dn_lane_block *blk, dn_term t[2])
{
    if (blk == NULL) return DN_ERR_INVALID_ARGUMENT;
    const dn_act_scale as = blk->act;
    if (as.m < 1 || as.m > 255 || as.e < -(1 << 20) || as.e > (1 << 20) || !scale_ok(blk->w.a) ||
        !scale_ok(blk->w.b))
        return DN_ERR_INVALID_ARGUMENT;
    int64_t coef, offs;
    dn_status st = dn_lane_block_sums(blk, &coef, &offs);
    if (st != DN_OK) return st;
    t[0] = (dn_term){(int64_t)blk->w.a.sig * as.m * coef, blk->w.a.exp + as.e, 0};
    t[1] = (dn_term){(int64_t)blk->w.b.sig * as.m * offs, blk->w.b.exp + as.e, 0};
    return DN_OK;
}

dn_status dn_lane(float *acc, const dn_lane_block *blk)
{
    if (acc == NULL) return DN_ERR_INVALID_ARGUMENT;
    dn_term t[2];
    dn_status st = terms_of(blk, t);
    if (st != DN_OK) return st;
    float value;
    dn_exact_sum(t, 2, &value);
    *acc = dn_fadd(*acc, value);
    return DN_OK;
}

dn_status dn_lane_group(float *acc, const dn_lane_block *subs, size_t nsubs)
{
    enum { MAX_SUBS = DN_GROUP / DN_LANE_SUB_BLOCK };
    if (acc == NULL || (subs == NULL && nsubs > 0) || nsubs > MAX_SUBS)
        return DN_ERR_INVALID_ARGUMENT;
    dn_term t[2 * MAX_SUBS];
    for (size_t k = 0; k < nsubs; k++) {
        dn_status st = terms_of(&subs[k], t + 2 * k);
        if (st != DN_OK) return st;
    }
    float value;
    dn_exact_sum(t, 2 * nsubs, &value);
    *acc = dn_fadd(*acc, value);
    return DN_OK;
}

/* ==== A whole row ============================================================= */

static dn_status report(dn_status st, size_t block, size_t *bad)
{
    if (st == DN_ERR_UNREADABLE_BLOCK && bad != NULL) *bad = block;
    return st;
}

dn_status dn_lane_dot(dn_type type, const uint8_t *row, size_t n, const dn_act_row *act,
                      dn_act_scaling scaling, float *out, size_t *bad)
{
    if (!dn_reads(type)) return DN_ERR_UNSUPPORTED_TYPE;
    if (out == NULL || act == NULL || act->n != n) return DN_ERR_INVALID_ARGUMENT;
    if (scaling != DN_ACT_SUB32 && scaling != DN_ACT_PER_BLOCK) return DN_ERR_INVALID_ARGUMENT;
    size_t block = dn_type_block_elements(type);
    if (n % block != 0) return DN_ERR_INVALID_ARGUMENT;
    float acc = 0.0f;
    dn_lane_block lb;

    if (scaling == DN_ACT_PER_BLOCK) {
        for (size_t b = 0; b < n / block; b++) {
            dn_status st = dn_lane_deliver(type, row, n, act, b, &lb);
            if (st == DN_OK) st = dn_lane(&acc, &lb);
            if (st != DN_OK) return report(st, b, bad);
        }
        *out = acc;
        return DN_OK;
    }

    /* Sub32: each group of DN_GROUP elements, its sub-blocks in order. */
    dn_lane_block subs[DN_GROUP / DN_LANE_SUB_BLOCK];
    for (size_t g = 0; g < n; g += DN_GROUP) {
        size_t end = g + DN_GROUP < n ? g + DN_GROUP : n, nsubs = 0;
        for (size_t i = g; i < end; i += DN_LANE_SUB_BLOCK) {
            size_t b = i / block, s = (i % block) / DN_LANE_SUB_BLOCK;
            dn_status st = dn_lane_deliver32(type, row, n, act, b, s, &subs[nsubs++]);
            if (st != DN_OK) return report(st, b, bad);
        }
        dn_status st = dn_lane_group(&acc, subs, nsubs);
        if (st != DN_OK) return st;
    }
    *out = acc;
    return DN_OK;
}
