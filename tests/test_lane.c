/* SPDX-License-Identifier: MIT */
/*
 * The block-scale lane (decodenum/lane.h).
 *
 *  - By hand: the excess-form identities on units built by hand (one word,
 *    two words), every (q, z, a') pattern of a unit against the direct sum,
 *    the accumulator widths at their extremes, a LaneBlock built by hand.
 *  - The weight image of every format: c * (q - z) and n equal the coded row
 *    dn_read_row reads, element by element, and the (q, z, c, n) ranges met
 *    are the decomposition table's (docs/lane.md).
 *  - Random rows, for every format the array reads x both scalings x both
 *    word counts, 1..16 blocks, with outliers, all-zero blocks, negative,
 *    extreme, subnormal and zero scales: every block's (per block) or
 *    group's (Sub32) value and every row's total bit-equal to dn_dot's, and
 *    block_sums equal to sum coef * code and sum offs * code computed
 *    directly from the coded row.
 *  - The largest block sum (2^35), unreadable blocks, and arguments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"
#include "testutil.h"

/* ---- the formats, and their decomposition derived by hand ---------------- */

typedef struct fmt {
    dn_type type;
    const char *name;
    size_t elements, bytes;
    int d_at, b_at;   /* byte offsets of the binary16 scales (-1: none) */
    int q_min, q_max; /* the unsigned codes the image holds */
    int z;            /* the zero point of every unit */
    int c_min, c_max; /* the units' coefficients */
    int n_min, n_max; /* the units' offset multipliers */
} fmt;

static const fmt fmts[] = {
    /*                                        q        z     c          n     */
    {DN_TYPE_Q4_0, "q4_0", 32, 18, 0, -1, 0, 15, 8, 1, 1, 0, 0},
    {DN_TYPE_Q4_1, "q4_1", 32, 20, 0, 2, 0, 15, 0, 1, 1, 1, 1},
    {DN_TYPE_Q5_0, "q5_0", 32, 22, 0, -1, 0, 31, 16, 1, 1, 0, 0},
    {DN_TYPE_Q5_1, "q5_1", 32, 24, 0, 2, 0, 31, 0, 1, 1, 1, 1},
    {DN_TYPE_Q8_0, "q8_0", 32, 34, 0, -1, 0, 255, 128, 1, 1, 0, 0},
    {DN_TYPE_Q2_K, "q2_K", 256, 84, 80, 82, 0, 3, 0, 0, 15, -15, 0},
    {DN_TYPE_Q3_K, "q3_K", 256, 110, 108, -1, 0, 7, 4, -32, 31, 0, 0},
    {DN_TYPE_Q4_K, "q4_K", 256, 144, 0, 2, 0, 15, 0, 0, 63, -63, 0},
    {DN_TYPE_Q5_K, "q5_K", 256, 176, 0, 2, 0, 31, 0, 0, 63, -63, 0},
    {DN_TYPE_Q6_K, "q6_K", 256, 210, 208, -1, 0, 63, 32, -128, 127, 0, 0},
    {DN_TYPE_IQ4_NL, "iq4_nl", 32, 18, 0, -1, 1, 241, 128, 1, 1, 0, 0},
    {DN_TYPE_IQ4_XS, "iq4_xs", 256, 136, 0, -1, 1, 241, 128, -32, 31, 0, 0},
};
#define NFMTS (sizeof fmts / sizeof fmts[0])

static uint64_t rng_state = 0x1A4E;
static uint64_t rng(void) { return splitmix(&rng_state); } /* deterministic */
static int64_t rng_between(int64_t lo, int64_t hi) { return between(&rng_state, lo, hi); }

/* ---- 1. the identities by hand --------------------------------------------- */

/* One word. q[i] = i (Q = 120), z = 8, codes a[i] = i - 8 crossing as
   a'[i] = i + 120:
     P' = sum i (i + 120) = 1240 + 120 * 120 = 15640,  S' = 120 + 16 * 120 = 2040;
     P' - 128 Q - z S' + 2048 z = 15640 - 15360 - 16320 + 16384 = 344
       = sum (i - 8)^2 = 2 * (1 + 4 + ... + 49) + 64 = 344;
     S' - 2048 = -8 = sum (i - 8). */
static void identity_one_word_by_hand(void **state)
{
    (void)state;
    dn_lane_unit u = {{0}, 0, 8, 0, 1, 0};
    uint8_t word[16];
    for (int i = 0; i < 16; i++) {
        u.q[i] = (uint8_t)i;
        word[i] = (uint8_t)(i - 8 + 128);
    }
    u.sum_q = 120;
    dn_lane_unit_sums s;
    assert_int_equal(dn_lane_unit_sums_of(&u, word, &s), DN_OK);
    assert_int_equal(s.p, 15640);
    assert_int_equal(s.s, 2040);
    int32_t qa, a;
    assert_int_equal(dn_lane_unit_dot(&u, &s, 1, &qa, &a), DN_OK);
    assert_int_equal(qa, 344);
    assert_int_equal(a, -8);
    /* the same bytes read as a low byte (a = a'): P' - z S' = 15640 - 16320 */
    assert_int_equal(dn_lane_unit_dot(&u, &s, 0, &qa, &a), DN_OK);
    assert_int_equal(qa, -680); /* sum (i - 8)(i + 120) = 344 + 128 * -8 */
    assert_int_equal(a, 2040);
}

/* Two words, Q8_0-like (z = 128): q[0] = 255 (code 127), q[1] = 0 (code
   -128), the other 14 q = 128 (code 0). Activation codes a[0] = -300 =
   256 * -2 + 212, a[1] = 32767 = 256 * 127 + 255, the rest 0.
   High word (excess): a' = 126, 255, 128 x 14; Q = 255 + 14 * 128 = 2047.
     P' = 255 * 126 + 0 + 14 * 128 * 128 = 261506,  S' = 126 + 255 + 1792 = 2173;
     P' - 128 Q - 128 S' + 2048 * 128 = 261506 - 262016 - 278144 + 262144 = -16510
       = 127 * -2 + -128 * 127;   S' - 2048 = 125 = -2 + 127.
   Low word: a' = 212, 255, 0 x 14.
     P' = 255 * 212 = 54060, S' = 467;  P' - 128 S' = -5716 = 127 * 212 - 128 * 255.
   Together: 256 * -16510 - 5716 = -4232276 = 127 * -300 + -128 * 32767;
             256 * 125 + 467 = 32467 = -300 + 32767. */
static void identity_two_words_by_hand(void **state)
{
    (void)state;
    dn_lane_unit u = {{0}, 2047, 128, 0, 1, 0};
    uint8_t hi[16], lo[16];
    for (int i = 0; i < 16; i++) {
        u.q[i] = 128;
        hi[i] = 128;
        lo[i] = 0;
    }
    u.q[0] = 255, hi[0] = 126, lo[0] = 212;
    u.q[1] = 0, hi[1] = 255, lo[1] = 255;
    dn_lane_unit_sums sh, sl;
    dn_lane_unit_sums_of(&u, hi, &sh);
    dn_lane_unit_sums_of(&u, lo, &sl);
    assert_int_equal(sh.p, 261506);
    assert_int_equal(sh.s, 2173);
    assert_int_equal(sl.p, 54060);
    assert_int_equal(sl.s, 467);
    int32_t qa_h, a_h, qa_l, a_l;
    dn_lane_unit_dot(&u, &sh, 1, &qa_h, &a_h);
    dn_lane_unit_dot(&u, &sl, 0, &qa_l, &a_l);
    assert_int_equal(qa_h, -16510);
    assert_int_equal(a_h, 125);
    assert_int_equal(qa_l, -5716);
    assert_int_equal(a_l, 467);
    assert_int_equal(256 * qa_h + qa_l, -4232276);
    assert_int_equal(256 * a_h + a_l, 32467);

    /* The same unit in a LaneBlock with c = -3, n = 5 (units 1 of 2 covered):
       coef sum = -3 * -4232276 = 12696828, offs sum = 5 * 32467 = 162335. */
    dn_lane_block blk;
    memset(&blk, 0, sizeof blk);
    blk.w.nunits = 2;
    blk.w.units[1] = u;
    blk.w.units[1].c = -3;
    blk.w.units[1].n = 5;
    blk.first = 1;
    blk.count = 1;
    blk.nwords = 2;
    blk.words[0].excess = 1;
    blk.words[0].weight = 256;
    blk.words[0].units[1] = sh;
    blk.words[1].weight = 1;
    blk.words[1].units[1] = sl;
    int64_t c, o;
    assert_int_equal(dn_lane_block_sums(&blk, &c, &o), DN_OK);
    assert_int_equal(c, 12696828);
    assert_int_equal(o, 162335);
    /* a = 1 * 2^-2, b = -1 * 2^0, act = 128 * 2^-7 = 1:
       12696828 / 4 - 162335 = 3174207 - 162335 = 3011872, exact in f32 */
    blk.w.a = (dn_scale){1, -2};
    blk.w.b = (dn_scale){-1, 0};
    blk.act = (dn_act_scale){128, -7};
    float acc = 0.5f;
    assert_int_equal(dn_lane(&acc, &blk), DN_OK);
    assert_same_float(acc, 3011872.5f);
}

/* Every unit of 16 equal elements (q, a') for every q, a' in 0..255 and every
   zero point the formats use: the identities against the direct sums. */
static void identity_every_pattern(void **state)
{
    (void)state;
    static const int zs[] = {0, 4, 8, 16, 32, 128, 255};
    size_t checked = 0;
    for (size_t k = 0; k < sizeof zs / sizeof zs[0]; k++)
        for (int q = 0; q < 256; q++)
            for (int x = 0; x < 256; x++) {
                dn_lane_unit u;
                memset(&u, 0, sizeof u);
                memset(u.q, q, 16);
                u.sum_q = (uint16_t)(16 * q);
                u.z = (uint8_t)zs[k];
                uint8_t word[16];
                memset(word, x, 16);
                dn_lane_unit_sums s;
                dn_lane_unit_sums_of(&u, word, &s);
                int32_t qa, a;
                dn_lane_unit_dot(&u, &s, 1, &qa, &a);
                assert_int_equal(qa, 16 * (q - zs[k]) * (x - 128));
                assert_int_equal(a, 16 * (x - 128));
                dn_lane_unit_dot(&u, &s, 0, &qa, &a);
                assert_int_equal(qa, 16 * (q - zs[k]) * x);
                assert_int_equal(a, 16 * x);
                checked++;
            }
    printf("  %zu (z, q, a') unit patterns: both identities hold\n", checked);
}

/* The widths: the largest unit (q = a' = 255 everywhere) gives exactly
   P' = 16 * 255^2 = 1040400 < 2^20 and S' = Q = 4080 < 2^12; one more is
   refused as no delivery makes it. */
static void accumulator_widths(void **state)
{
    (void)state;
    assert_true(DN_LANE_P_MAX < (1u << DN_LANE_P_BITS));
    assert_true(DN_LANE_QS_MAX < (1u << DN_LANE_QS_BITS));
    assert_int_equal(DN_LANE_P_MAX, 16u * 255 * 255);
    assert_int_equal(DN_LANE_QS_MAX, 16u * 255);
    dn_lane_unit u;
    memset(&u, 0, sizeof u);
    memset(u.q, 255, 16);
    u.sum_q = 4080;
    uint8_t word[16];
    memset(word, 255, 16);
    dn_lane_unit_sums s;
    dn_lane_unit_sums_of(&u, word, &s);
    assert_int_equal(s.p, DN_LANE_P_MAX);
    assert_int_equal(s.s, DN_LANE_QS_MAX);
    int32_t qa, a;
    assert_int_equal(dn_lane_unit_dot(&u, &s, 1, &qa, &a), DN_OK);
    assert_int_equal(qa, 16 * 255 * 127);
    s.p++;
    assert_int_equal(dn_lane_unit_dot(&u, &s, 1, &qa, &a), DN_ERR_INVALID_ARGUMENT);
    s.p--, s.s++;
    assert_int_equal(dn_lane_unit_dot(&u, &s, 1, &qa, &a), DN_ERR_INVALID_ARGUMENT);
    s.s--, u.sum_q++;
    assert_int_equal(dn_lane_unit_dot(&u, &s, 1, &qa, &a), DN_ERR_INVALID_ARGUMENT);
}

/* ---- random rows ------------------------------------------------------------ */

/* A binary16 scale of one of the kinds the tests want. */
static uint16_t random_f16_scale(void)
{
    uint16_t sign = (uint16_t)(rng() & 1 ? 0x8000u : 0);
    switch (rng() % 8) {
    case 0: return (uint16_t)(sign | 30 << 10 | (rng() & 1023)); /* the largest exponent */
    case 1: return (uint16_t)(sign | 1 << 10 | (rng() & 1023));  /* the smallest normal */
    case 2: return (uint16_t)(sign | rng_between(1, 1023));      /* subnormal */
    case 3: return sign;                                         /* +-0 */
    case 4: return (uint16_t)(sign | 0x7BFF);                    /* +-65504 */
    default: return (uint16_t)(sign | rng_between(1, 30) << 10 | (rng() & 1023));
    }
}

/* Block bytes: random, or all zero, or all ones (every code at an extreme),
   with finite scales of every kind. */
static void random_block(const fmt *f, uint8_t *blk)
{
    int kind = (int)(rng() % 8);
    for (size_t i = 0; i < f->bytes; i++)
        blk[i] = kind == 0 ? 0 : kind == 1 ? 0xFF : (uint8_t)rng();
    if (kind == 0) return; /* all-zero bytes: scale +0 */
    put16(blk + f->d_at, random_f16_scale());
    if (f->b_at >= 0) put16(blk + f->b_at, random_f16_scale());
}

/* Activations: quantized from floats (dn_quantize, dn_quantize_blocks) with
   outliers, zero blocks and extreme magnitudes; or raw codes over the whole
   range each word count can carry, under random scales. */
static void random_act(size_t n, dn_act_scaling scaling, size_t block, dn_words words, float *x,
                       dn_act_row *act)
{
    act->n = n;
    if (rng() % 3 == 0) {
        size_t ab = scaling == DN_ACT_SUB32 ? 32 : block;
        act->block = (uint32_t)ab;
        act->words = words;
        int32_t lo = scaling == DN_ACT_SUB32 ? 8 : 128;
        for (size_t b = 0; b < n / ab; b++)
            act->scales[b] = (dn_act_scale){(int32_t)rng_between(lo, 2 * lo - 1),
                                            (int32_t)rng_between(-200, 100)};
        for (size_t i = 0; i < n; i++)
            act->codes[i] = words == DN_WORDS_ONE ? (int16_t)rng_between(-128, 127)
                                                  : (int16_t)rng_between(-32768, 32767);
        return;
    }
    int big = (int)rng_between(-150, 90); /* 2^-150: flushed to zero; 2^120: far up */
    for (size_t i = 0; i < n; i += 32) {
        int kind = (int)(rng() % 6);
        for (size_t j = i; j < i + 32; j++) {
            float u = (float)((double)(rng() >> 11) * 0x1p-53 * 2.0 - 1.0);
            x[j] = kind == 0 ? 0.0f : ldexpf(u, big + (kind == 1 ? (int)rng_between(-30, 30) : 0));
        }
        if (kind == 2)
            x[i + rng() % 32] = ldexpf(rng() & 1 ? 1.0f : -1.0f, big + 14); /* an outlier */
    }
    dn_status st = scaling == DN_ACT_SUB32 ? dn_quantize(x, n, words, act, NULL)
                                           : dn_quantize_blocks(x, n, block, words, act, NULL);
    assert_int_equal(st, DN_OK);
}

/* dn_dot over elements [from, from + len) of the row (from a multiple of
   both the weight block and the activation block). */
static float dot_of_part(const dn_coded_row *row, const dn_act_row *act, size_t block,
                         dn_act_scaling scaling, size_t from, size_t len)
{
    dn_segment segs[16];
    size_t ns = 0;
    for (size_t b = from / block; b < (from + len) / block; b++) {
        segs[ns] = row->segments[b];
        segs[ns++].first -= (uint32_t)from;
    }
    dn_coded_row part = {row->coef + from, row->offs + from, segs, len, ns};
    dn_act_row apart = {act->codes + from, act->scales + from / act->block, len, act->block,
                        act->words};
    float v;
    assert_int_equal(dn_dot(&part, &apart, scaling, &v), DN_OK);
    return v;
}

/* sum coef * code and sum offs * code over [from, from + len), directly. */
static void direct_sums(const dn_coded_row *row, const dn_act_row *act, size_t from, size_t len,
                        int64_t *c, int64_t *o)
{
    *c = *o = 0;
    for (size_t i = from; i < from + len; i++) {
        *c += (int64_t)row->coef[i] * act->codes[i];
        *o += (int64_t)row->offs[i] * act->codes[i];
    }
}

typedef struct counts {
    size_t rows, blocks, pieces, sums, differ;
} counts;

static void check_image(const fmt *f, const uint8_t *blk, const dn_coded_row *row, size_t b)
{
    dn_lane_image w;
    assert_int_equal(dn_lane_image_read(f->type, blk, &w), DN_OK);
    assert_int_equal(w.nunits, f->elements / 16);
    const dn_segment *seg = &row->segments[b];
    assert_int_equal(w.a.sig, seg->a.sig);
    assert_int_equal(w.a.exp, seg->a.exp);
    assert_int_equal(w.b.sig, seg->b.sig);
    assert_int_equal(w.b.exp, seg->b.exp);
    for (uint32_t u = 0; u < w.nunits; u++) {
        const dn_lane_unit *un = &w.units[u];
        unsigned sum = 0;
        for (int i = 0; i < 16; i++) {
            size_t e = b * f->elements + 16 * u + (size_t)i;
            assert_int_equal(un->c * (un->q[i] - un->z), row->coef[e]);
            assert_int_equal(un->n, row->offs[e]);
            sum += un->q[i];
        }
        assert_int_equal(un->sum_q, sum);
    }
}

/* One random row of f: the lane against dn_dot, block by block (per block)
   or group by group (Sub32), and the row's total. */
static void one_row(const fmt *f, dn_act_scaling scaling, dn_words words, counts *k)
{
    enum { MAXN = 16 * 256 };
    static uint8_t bytes[16 * 210];
    static int16_t coef[MAXN], offs[MAXN], codes[MAXN];
    static float x[MAXN];
    static dn_segment segs[16];
    static dn_act_scale scales[MAXN / 32];
    size_t blocks = (size_t)rng_between(1, 16), n = blocks * f->elements;
    for (size_t b = 0; b < blocks; b++) random_block(f, bytes + b * f->bytes);
    dn_coded_row row = {coef, offs, segs, n, 0};
    assert_int_equal(dn_read_row(f->type, bytes, n, &row, NULL), DN_OK);
    dn_act_row act = {codes, scales, n, 0, words};
    random_act(n, scaling, f->elements, words, x, &act);
    for (size_t b = 0; b < blocks; b++) check_image(f, bytes + b * f->bytes, &row, b);

    float acc = 0.0f;
    if (scaling == DN_ACT_PER_BLOCK) {
        for (size_t b = 0; b < blocks; b++) {
            dn_lane_block lb;
            assert_int_equal(dn_lane_deliver(f->type, bytes, n, &act, b, &lb), DN_OK);
            int64_t c, o, wc, wo;
            assert_int_equal(dn_lane_block_sums(&lb, &c, &o), DN_OK);
            direct_sums(&row, &act, b * f->elements, f->elements, &wc, &wo);
            assert_true(c == wc && o == wo);
            k->sums++;
            float v = 0.0f;
            assert_int_equal(dn_lane(&v, &lb), DN_OK);
            float want =
                dot_of_part(&row, &act, f->elements, scaling, b * f->elements, f->elements);
            if (tbits(v) != tbits(want) && k->differ++ < 5)
                printf("  %s block %zu: lane 0x%08x, dn_dot 0x%08x\n", f->name, b, tbits(v),
                       tbits(want));
            assert_int_equal(dn_lane(&acc, &lb), DN_OK);
            k->pieces++;
        }
    } else {
        for (size_t g = 0; g < n; g += DN_GROUP) {
            size_t len = n - g < DN_GROUP ? n - g : DN_GROUP, nsubs = 0;
            dn_lane_block subs[8];
            for (size_t i = g; i < g + len; i += 32) {
                size_t b = i / f->elements, s = (i % f->elements) / 32;
                assert_int_equal(dn_lane_deliver32(f->type, bytes, n, &act, b, s, &subs[nsubs]),
                                 DN_OK);
                int64_t c, o, wc, wo;
                assert_int_equal(dn_lane_block_sums(&subs[nsubs], &c, &o), DN_OK);
                direct_sums(&row, &act, i, 32, &wc, &wo);
                assert_true(c == wc && o == wo);
                k->sums++;
                nsubs++;
            }
            float v = 0.0f;
            assert_int_equal(dn_lane_group(&v, subs, nsubs), DN_OK);
            float want = dot_of_part(&row, &act, f->elements, scaling, g, len);
            if (tbits(v) != tbits(want) && k->differ++ < 5)
                printf("  %s group %zu: lane 0x%08x, dn_dot 0x%08x\n", f->name, g / DN_GROUP,
                       tbits(v), tbits(want));
            assert_int_equal(dn_lane_group(&acc, subs, nsubs), DN_OK);
            k->pieces++;
        }
    }
    /* the row's total: block by block here, dn_lane_dot, and dn_dot */
    float total, want;
    assert_int_equal(dn_lane_dot(f->type, bytes, n, &act, scaling, &total, NULL), DN_OK);
    assert_int_equal(dn_dot(&row, &act, scaling, &want), DN_OK);
    if ((tbits(total) != tbits(want) || tbits(acc) != tbits(want)) && k->differ++ < 5)
        printf("  %s row: lane 0x%08x / 0x%08x, dn_dot 0x%08x\n", f->name, tbits(acc), tbits(total),
               tbits(want));
    k->rows++;
    k->blocks += blocks;
}

static void random_rows_against_dn_dot(void **state)
{
    (void)state;
    enum { ROWS = 250 };
    counts all = {0};
    for (size_t i = 0; i < NFMTS; i++) {
        counts k = {0};
        for (int sc = 0; sc < 2; sc++)
            for (int wd = 1; wd <= 2; wd++)
                for (int r = 0; r < ROWS; r++)
                    one_row(&fmts[i], sc ? DN_ACT_PER_BLOCK : DN_ACT_SUB32, (dn_words)wd, &k);
        printf(
            "  %-6s %5zu rows, %6zu blocks, %6zu block/group values, %6zu block_sums: %zu differ\n",
            fmts[i].name, k.rows, k.blocks, k.pieces, k.sums, k.differ);
        all.rows += k.rows, all.blocks += k.blocks, all.pieces += k.pieces, all.sums += k.sums;
        all.differ += k.differ;
    }
    printf(
        "  all    %5zu rows, %6zu blocks, %6zu block/group values, %6zu block_sums: %zu differ\n",
        all.rows, all.blocks, all.pieces, all.sums, all.differ);
    assert_int_equal(all.differ, 0);
}

/* Over many random blocks (and all-zero and all-ones ones) each format's
   image meets exactly the decomposition table's ranges. */
static void decomposition_table(void **state)
{
    (void)state;
    uint8_t blk[256];
    for (size_t i = 0; i < NFMTS; i++) {
        const fmt *f = &fmts[i];
        int qmin = 999, qmax = -999, cmin = 99999, cmax = -99999, nmin = 99999, nmax = -99999;
        for (int r = 0; r < 4000; r++) {
            random_block(f, blk);
            dn_lane_image w;
            assert_int_equal(dn_lane_image_read(f->type, blk, &w), DN_OK);
            for (uint32_t u = 0; u < w.nunits; u++) {
                const dn_lane_unit *un = &w.units[u];
                assert_int_equal(un->z, f->z);
                for (int e = 0; e < 16; e++) {
                    qmin = un->q[e] < qmin ? un->q[e] : qmin;
                    qmax = un->q[e] > qmax ? un->q[e] : qmax;
                }
                cmin = un->c < cmin ? un->c : cmin;
                cmax = un->c > cmax ? un->c : cmax;
                nmin = un->n < nmin ? un->n : nmin;
                nmax = un->n > nmax ? un->n : nmax;
            }
        }
        printf("  %-6s q %3d..%3d  z %3d  c %4d..%3d  n %3d..%d\n", f->name, qmin, qmax, f->z, cmin,
               cmax, nmin, nmax);
        assert_int_equal(qmin, f->q_min);
        assert_int_equal(qmax, f->q_max);
        assert_int_equal(cmin, f->c_min);
        assert_int_equal(cmax, f->c_max);
        assert_int_equal(nmin, f->n_min);
        assert_int_equal(nmax, f->n_max);
    }
}

/* The largest block sum: Q6_K with every sub-block scale -128 and every
   code 0 (coef = -128 * -32 = 4096) against two-word codes -32768:
   sum coef * code = 256 * 4096 * -32768 = -2^35, exactly DN_LANE_SUM_BOUND. */
static void largest_block_sum(void **state)
{
    (void)state;
    uint8_t blk[210] = {0};
    for (int j = 0; j < 16; j++) blk[192 + j] = 0x80; /* -128 */
    put16(blk + 208, 0x3C00);                         /* d = 1 */
    int16_t codes[256];
    dn_act_scale sc = {128, -7};
    for (int i = 0; i < 256; i++) codes[i] = -32768;
    dn_act_row act = {codes, &sc, 256, 256, DN_WORDS_TWO};
    dn_lane_block lb;
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q6_K, blk, 256, &act, 0, &lb), DN_OK);
    int64_t c, o;
    assert_int_equal(dn_lane_block_sums(&lb, &c, &o), DN_OK);
    assert_true(c == -DN_LANE_SUM_BOUND && o == 0);
    float v, want;
    assert_int_equal(dn_lane_dot(DN_TYPE_Q6_K, blk, 256, &act, DN_ACT_PER_BLOCK, &v, NULL), DN_OK);
    assert_same_float(v, -0x1p35f);
    int16_t coef[256], offs[256];
    dn_segment seg;
    dn_coded_row row = {coef, offs, &seg, 256, 0};
    assert_int_equal(dn_read_row(DN_TYPE_Q6_K, blk, 256, &row, NULL), DN_OK);
    assert_int_equal(dn_dot(&row, &act, DN_ACT_PER_BLOCK, &want), DN_OK);
    assert_same_float(v, want);
}

static void unreadable_blocks(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFMTS; i++) {
        const fmt *f = &fmts[i];
        uint8_t bytes[4 * 210] = {0};
        int16_t codes[4 * 256] = {0};
        dn_act_scale scales[32];
        for (int b = 0; b < 32; b++) scales[b] = (dn_act_scale){8, 0};
        size_t n = 4 * f->elements;
        put16(bytes + 2 * f->bytes + (f->b_at >= 0 && i % 2 ? f->b_at : f->d_at),
              0x7C00);                                 /* +inf in block 2 */
        put16(bytes + 3 * f->bytes + f->d_at, 0xFE00); /* NaN in block 3 */
        dn_act_row act = {codes, scales, n, 32, DN_WORDS_ONE};
        size_t bad = 99;
        float v = 1.0f;
        assert_int_equal(dn_lane_dot(f->type, bytes, n, &act, DN_ACT_SUB32, &v, &bad),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(bad, 2);
        assert_same_float(v, 1.0f);
        dn_lane_block lb;
        assert_int_equal(dn_lane_deliver32(f->type, bytes, n, &act, 2, 0, &lb),
                         DN_ERR_UNREADABLE_BLOCK);
        assert_int_equal(dn_lane_deliver32(f->type, bytes, n, &act, 1, 0, &lb), DN_OK);
        dn_lane_image w;
        assert_int_equal(dn_lane_image_read(f->type, bytes + 3 * f->bytes, &w),
                         DN_ERR_UNREADABLE_BLOCK);
    }
}

/* A per-block scaling needs activation blocks of the weight block. */
static void arguments_per_block(dn_lane_block *lb)
{
    uint8_t kblk[144] = {0};
    int16_t kcodes[256] = {0};
    dn_act_scale ksc[8] = {{8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}};
    dn_act_row kact = {kcodes, ksc, 256, 32, DN_WORDS_ONE};
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_K, kblk, 256, &kact, 0, lb),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_deliver32(DN_TYPE_Q4_K, kblk, 256, &kact, 0, 7, lb), DN_OK);
    assert_int_equal(dn_lane_deliver32(DN_TYPE_Q4_K, kblk, 256, &kact, 0, 8, lb),
                     DN_ERR_INVALID_ARGUMENT);
    kact.block = 256;
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_K, kblk, 256, &kact, 0, lb), DN_OK);
    assert_int_equal(dn_lane_deliver32(DN_TYPE_Q4_K, kblk, 256, &kact, 0, 0, lb),
                     DN_ERR_INVALID_ARGUMENT);
}

/* Blocks no delivery makes (lb: a delivered block). */
static void arguments_bad_blocks(const dn_lane_block *lb)
{
    int64_t c, o;
    float v;
    assert_int_equal(dn_lane_block_sums(lb, &c, &o), DN_OK);
    dn_lane_block bent = *lb;
    bent.w.units[1].sum_q++;
    assert_int_equal(dn_lane_block_sums(&bent, &c, &o), DN_ERR_INVALID_ARGUMENT);
    bent = *lb, bent.nwords = 3;
    assert_int_equal(dn_lane_block_sums(&bent, &c, &o), DN_ERR_INVALID_ARGUMENT);
    bent = *lb, bent.words[0].weight = 256;
    assert_int_equal(dn_lane_block_sums(&bent, &c, &o), DN_ERR_INVALID_ARGUMENT);
    bent = *lb, bent.first = 1;
    assert_int_equal(dn_lane_block_sums(&bent, &c, &o), DN_ERR_INVALID_ARGUMENT);
    bent = *lb, bent.words[0].units[0].p = DN_LANE_P_MAX + 1;
    assert_int_equal(dn_lane_block_sums(&bent, &c, &o), DN_ERR_INVALID_ARGUMENT);
    bent = *lb, bent.act.m = 0;
    v = 2.0f;
    assert_int_equal(dn_lane(&v, &bent), DN_ERR_INVALID_ARGUMENT);
    assert_same_float(v, 2.0f);
    assert_int_equal(dn_lane(NULL, lb), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_group(&v, lb, 9), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_group(&v, NULL, 1), DN_ERR_INVALID_ARGUMENT);
    /* an empty group adds +0 */
    v = -0.0f;
    assert_int_equal(dn_lane_group(&v, NULL, 0), DN_OK);
    assert_same_float(v, 0.0f);
}

static void arguments(void **state)
{
    (void)state;
    uint8_t blk[2 * 18] = {0};
    int16_t codes[64] = {0};
    dn_act_scale sc[2] = {{128, 0}, {128, 0}};
    dn_act_row act = {codes, sc, 64, 32, DN_WORDS_ONE};
    dn_lane_block lb;
    dn_lane_image w;
    float v = 0.0f;
    size_t bad = 7;

    assert_int_equal(dn_lane_image_read(DN_TYPE_F16, blk, &w), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_lane_image_read(DN_TYPE_Q4_0, NULL, &w), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_deliver(DN_TYPE_BF16, blk, 64, &act, 0, &lb), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 64, &act, 0, &lb), DN_OK);
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 64, &act, 2, &lb), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 48, &act, 0, &lb), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, NULL, 64, &act, 0, &lb),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 64, &act, 0, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_deliver32(DN_TYPE_Q4_0, blk, 64, &act, 0, 1, &lb),
                     DN_ERR_INVALID_ARGUMENT);
    arguments_per_block(&lb);
    /* one word cannot carry 128; two words can */
    codes[5] = 128;
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 64, &act, 0, &lb), DN_ERR_INVALID_ARGUMENT);
    act.words = DN_WORDS_TWO;
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 64, &act, 0, &lb), DN_OK);
    act.words = (dn_words)3;
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 64, &act, 0, &lb), DN_ERR_INVALID_ARGUMENT);
    act.words = DN_WORDS_ONE;
    codes[5] = -128;
    assert_int_equal(dn_lane_deliver(DN_TYPE_Q4_0, blk, 64, &act, 0, &lb), DN_OK);

    arguments_bad_blocks(&lb);

    /* whole rows */
    assert_int_equal(dn_lane_dot(DN_TYPE_Q4_0, blk, 64, &act, DN_ACT_SUB32, &v, &bad), DN_OK);
    assert_int_equal(bad, 7);
    assert_int_equal(dn_lane_dot(DN_TYPE_Q4_0, blk, 64, &act, (dn_act_scaling)2, &v, &bad),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_lane_dot(DN_TYPE_F32, blk, 64, &act, DN_ACT_SUB32, &v, &bad),
                     DN_ERR_UNSUPPORTED_TYPE);
    dn_act_row empty = {NULL, NULL, 0, 32, DN_WORDS_ONE};
    v = 5.0f;
    assert_int_equal(dn_lane_dot(DN_TYPE_Q4_0, NULL, 0, &empty, DN_ACT_SUB32, &v, NULL), DN_OK);
    assert_same_float(v, 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identity_one_word_by_hand),  cmocka_unit_test(identity_two_words_by_hand),
        cmocka_unit_test(identity_every_pattern),     cmocka_unit_test(accumulator_widths),
        cmocka_unit_test(decomposition_table),        cmocka_unit_test(largest_block_sum),
        cmocka_unit_test(unreadable_blocks),          cmocka_unit_test(arguments),
        cmocka_unit_test(random_rows_against_dn_dot),
    };
    return cmocka_run_group_tests_name("lane", tests, NULL, NULL);
}
