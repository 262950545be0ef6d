/* SPDX-License-Identifier: MIT */
/*
 * Attention: each sentence of the definitions (docs/numerics.md,
 * "Attention") with expectations derived by hand, the one-head and layer
 * forms against each other (GQA groups, strided caches, head ranges, pools
 * of 0-3 threads: the same bits), and the statuses of bad input. Runs under
 * whichever ISA DECODENUM_ISA selects.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"
#include "dispatch.h"
#include "testutil.h"

#define F16_ONE 0x3C00

/* ---- int8_codes and cache_row -------------------------------------------------------- */

/* Nearest integer of x * inv, ties to even, within +-127; a NaN product 0. */
static void int8_codes_round_and_clamp(void **state)
{
    (void)state;
    const float x[9] = {1.0f, -2.5f, 0.5f, 1.5f, 300.0f, -300.0f, NAN, INFINITY, 1e-40f};
    int8_t c[9];
    assert_int_equal(dn_int8_codes(x, 9, 1.0f, c), DN_OK);
    const int8_t want[9] = {1, -2, 0, 2, 127, -127, 0, 127, 0};
    assert_memory_equal(c, want, 9);
    /* products: 2 * 0.25 = 0.5 -> 0; 2 * 0.75 = 1.5 -> 2 */
    const float y[2] = {0.25f, 0.75f};
    assert_int_equal(dn_int8_codes(y, 2, 2.0f, c), DN_OK);
    assert_int_equal(c[0], 0);
    assert_int_equal(c[1], 2);
    /* inv infinite: every code 0, whatever x (even infinite) */
    assert_int_equal(dn_int8_codes(x, 9, INFINITY, c), DN_OK);
    for (int i = 0; i < 9; i++) assert_int_equal(c[i], 0);
    /* an infinite x times inv 0 is a NaN product: 0 */
    assert_int_equal(dn_int8_codes(x + 7, 1, 0.0f, c), DN_OK);
    assert_int_equal(c[0], 0);
    assert_int_equal(dn_int8_codes(NULL, 0, 1.0f, NULL), DN_OK);
    assert_int_equal(dn_int8_codes(NULL, 1, 1.0f, c), DN_ERR_INVALID_ARGUMENT);
}

/* 127 * INV_127 = 1 exactly in binary32, so the scale is binary16 1.0 and the
   codes are the nearest integers of x itself: -63.5 ties to -64. */
static void cache_row_scale_and_codes(void **state)
{
    (void)state;
    const float x[4] = {127.0f, -63.5f, 0.0f, 1.0f};
    uint16_t s;
    int8_t c[4];
    assert_int_equal(dn_cache_row(x, 4, &s, c), DN_OK);
    assert_int_equal(s, F16_ONE);
    const int8_t want[4] = {127, -64, 0, 1};
    assert_memory_equal(c, want, 4);
    /* 1e-6 * INV_127 < 2^-25 rounds to a binary16 zero: all codes 0 */
    const float tiny[2] = {1e-6f, -1e-6f};
    int8_t c2[2] = {5, 5};
    assert_int_equal(dn_cache_row(tiny, 2, &s, c2), DN_OK);
    assert_int_equal(s, 0);
    assert_int_equal(c2[0], 0);
    assert_int_equal(c2[1], 0);
    /* an infinity: infinite scale, codes 0, reported */
    const float inf[2] = {INFINITY, 1.0f};
    assert_int_equal(dn_cache_row(inf, 2, &s, c2), DN_ERR_NON_FINITE);
    assert_int_equal(s, 0x7C00);
    assert_int_equal(c2[0], 0);
    assert_int_equal(c2[1], 0);
    /* a NaN is passed over by absmax and coded 0; 127 stays 127 */
    const float nan[2] = {NAN, 127.0f};
    assert_int_equal(dn_cache_row(nan, 2, &s, c2), DN_ERR_NON_FINITE);
    assert_int_equal(s, F16_ONE);
    assert_int_equal(c2[0], 0);
    assert_int_equal(c2[1], 127);
    /* an empty row: scale 0 */
    assert_int_equal(dn_cache_row(NULL, 0, &s, NULL), DN_OK);
    assert_int_equal(s, 0);
    assert_int_equal(dn_cache_row(x, 4, NULL, c), DN_ERR_INVALID_ARGUMENT);
}

/* The row form: one call per token's K of every KV head. */
static void cache_rows_is_cache_row(void **state)
{
    (void)state;
    float x[3 * 5];
    for (int i = 0; i < 15; i++) x[i] = (float)(i * 7 % 11) - 5.0f;
    uint16_t s[6];
    int8_t c[3 * 8];
    assert_int_equal(dn_cache_rows(x, 3, 5, s, 2, c, 8), DN_OK);
    for (int r = 0; r < 3; r++) {
        uint16_t s1;
        int8_t c1[5];
        dn_cache_row(x + r * 5, 5, &s1, c1);
        assert_int_equal(s[2 * r], s1);
        assert_memory_equal(c + 8 * r, c1, 5);
    }
}

/* ---- quantize_head --------------------------------------------------------------------- */

static void quantize_head_blocks(void **state)
{
    (void)state;
    float q[40] = {0};
    q[0] = 127.0f; /* block 0: dn_block_scale(127) = 8 * 2^-3 = 1 */
    q[5] = -3.0f;
    q[33] = 1.0f; /* block 1 (elements 32..39 + padding): 9 * 2^-10 */
    int16_t codes[64];
    dn_act_scale sc[2];
    dn_act_row row = {codes, sc, 0, 0, DN_WORDS_ONE};
    assert_int_equal(dn_quantize_head(q, 40, DN_ACT_SUB32, DN_WORDS_ONE, &row, NULL), DN_OK);
    assert_int_equal(row.n, 64);
    assert_int_equal(row.block, 32);
    assert_int_equal(sc[0].m, 8);
    assert_int_equal(sc[0].e, -3);
    assert_int_equal(codes[0], 127);
    assert_int_equal(codes[5], -3);
    assert_int_equal(sc[1].m, 9);
    assert_int_equal(sc[1].e, -10);
    assert_int_equal(codes[33], 114); /* 1024 / 9 = 113.8 */
    for (int i = 40; i < 64; i++) assert_int_equal(codes[i], 0);
    /* per block: the whole head one block, dn_wide_scale(127) = 254 * 2^-8 */
    assert_int_equal(dn_quantize_head(q, 40, DN_ACT_PER_BLOCK, DN_WORDS_ONE, &row, NULL), DN_OK);
    assert_int_equal(row.block, 64);
    dn_act_scale w;
    dn_wide_scale(127.0f, DN_WORDS_ONE, &w);
    assert_int_equal(sc[0].m, w.m);
    assert_int_equal(sc[0].e, w.e);
    /* an all-zero head: the canonical scale, codes 0 */
    float z[3] = {0};
    assert_int_equal(dn_quantize_head(z, 3, DN_ACT_SUB32, DN_WORDS_TWO, &row, NULL), DN_OK);
    assert_int_equal(sc[0].m, 8);
    assert_int_equal(sc[0].e, 0);
    assert_int_equal(row.words, DN_WORDS_TWO);
    size_t bad = 0;
    q[7] = NAN;
    assert_int_equal(dn_quantize_head(q, 40, DN_ACT_SUB32, DN_WORDS_ONE, &row, &bad),
                     DN_ERR_NON_FINITE);
    assert_int_equal(bad, 7);
    assert_int_equal(dn_quantize_head(q, 0, DN_ACT_SUB32, DN_WORDS_ONE, &row, &bad),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_quantize_head(q, 4, 7, DN_WORDS_ONE, &row, &bad), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_quantize_head(q, 4, DN_ACT_SUB32, 3, &row, &bad), DN_ERR_INVALID_ARGUMENT);
}

/* dn_quantize_head against its definition written here from the public
   pieces (each block's largest magnitude, dn_block_scale or dn_wide_scale,
   dn_rne_div of each element, the padding zero) on random heads of every
   size to 300: elements of any binade from the subnormals to 2^100, blocks
   of zeros, of subnormals only, both scalings and word counts. A kernel
   that rounded a code or a scale differently, or left padding unset,
   fails here. */
static void quantize_head_definition(void **state)
{
    (void)state;
    static float q[320];
    static int16_t codes[320];
    static dn_act_scale sc[10];
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (int trial = 0; trial < 3000; trial++) {
        size_t d = (size_t)between(&seed, 1, 300), dp = (d + 31) / 32 * 32;
        int scaling = trial & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
        dn_words words = trial & 2 ? DN_WORDS_TWO : DN_WORDS_ONE;
        int mode = (int)between(&seed, 0, 3), e0 = (int)between(&seed, -149, 100);
        for (size_t i = 0; i < d; i++) {
            int e = mode == 0 ? e0 + (int)between(&seed, -3, 3) : (int)between(&seed, -149, 100);
            float v = ldexpf((float)between(&seed, -(1 << 24), 1 << 24), e - 24);
            q[i] = mode == 2 && (i / 32) % 3 == 1 ? 0.0f : mode == 3 ? ldexpf(v, -140) : v;
        }
        for (size_t i = 0; i < 320; i++) codes[i] = 77;
        dn_act_row row = {codes, sc, 0, 0, words};
        assert_int_equal(dn_quantize_head(q, d, scaling, words, &row, NULL), DN_OK);
        size_t block = scaling == DN_ACT_SUB32 ? 32 : dp;
        assert_int_equal(row.n, dp);
        assert_int_equal(row.block, block);
        for (size_t b = 0; b < dp / block; b++) {
            size_t lo = b * block, hi = lo + block < d ? lo + block : d;
            float amax = 0.0f;
            for (size_t i = lo; i < hi; i++)
                if (fabsf(q[i]) >= 0x1p-126f && fabsf(q[i]) > amax) amax = fabsf(q[i]);
            dn_act_scale want = {scaling == DN_ACT_SUB32 ? 8 : 128, 0};
            if (amax > 0.0f) {
                if (scaling == DN_ACT_SUB32)
                    assert_int_equal(dn_block_scale(amax, words, &want), DN_OK);
                else
                    assert_int_equal(dn_wide_scale(amax, words, &want), DN_OK);
            }
            assert_int_equal(sc[b].m, want.m);
            assert_int_equal(sc[b].e, want.e);
            for (size_t i = lo; i < lo + block; i++) {
                int64_t c = 0;
                if (i < d && amax > 0.0f)
                    assert_int_equal(dn_rne_div(q[i], (uint32_t)want.m, want.e, &c), DN_OK);
                assert_int_equal(codes[i], c);
            }
        }
    }
}

/* ---- int8_score -------------------------------------------------------------------------- */

/* (m * sig * dot) * 2^(e + exp): query 127 under 8 * 2^-3, key code 1 under
   1.0 = 1024 * 2^-10: 8 * 1024 * 127 * 2^-13 = 127. */
static void int8_score_by_hand(void **state)
{
    (void)state;
    float q[2] = {127.0f, 0.0f};
    int16_t codes[32];
    dn_act_scale sc[1];
    dn_act_row row = {codes, sc, 0, 0, DN_WORDS_ONE};
    dn_quantize_head(q, 2, DN_ACT_SUB32, DN_WORDS_ONE, &row, NULL);
    const int8_t key[2] = {1, 5};
    float s;
    assert_int_equal(dn_int8_score(&row, F16_ONE, key, 2, &s), DN_OK);
    assert_same_float(s, 127.0f);
    /* key scale -0.5 (0xB800): -63.5 */
    assert_int_equal(dn_int8_score(&row, 0xB800, key, 2, &s), DN_OK);
    assert_same_float(s, -63.5f);
    /* a zero key scale: +0; an infinite or NaN one: NaN */
    assert_int_equal(dn_int8_score(&row, 0x8000, key, 2, &s), DN_OK);
    assert_bits(s, 0);
    assert_int_equal(dn_int8_score(&row, 0x7C00, key, 2, &s), DN_OK);
    assert_bits(s, 0x7FC00000);
    assert_int_equal(dn_int8_score(&row, 0x7E01, key, 2, &s), DN_OK);
    assert_bits(s, 0x7FC00000);
    /* -128 is read as it is: 127 * -128 */
    const int8_t low[2] = {-128, 0};
    assert_int_equal(dn_int8_score(&row, F16_ONE, low, 2, &s), DN_OK);
    assert_same_float(s, -16256.0f);
    assert_int_equal(dn_int8_score(&row, F16_ONE, key, 33, &s), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_int8_score(NULL, F16_ONE, key, 2, &s), DN_ERR_INVALID_ARGUMENT);
}

/* Blocks of different scales are one exact sum, rounded once: 2^24 + 1 + 1
   would round twice to 2^24 added block by block; summed exactly it is
   2^24 + 2. Built by hand: three blocks, codes 1, key codes 1, scales
   m * 2^e chosen so the terms are 2^24, 1 and 1 (key scale 1.0). */
static void int8_score_rounds_once(void **state)
{
    (void)state;
    int16_t codes[96] = {0};
    dn_act_scale sc[3] = {{8, 21}, {8, -3}, {8, -3}};
    codes[0] = codes[32] = codes[64] = 1;
    dn_act_row row = {codes, sc, 96, 32, DN_WORDS_ONE};
    int8_t key[96] = {0};
    key[0] = key[32] = key[64] = 1;
    float s;
    assert_int_equal(dn_int8_score(&row, F16_ONE, key, 96, &s), DN_OK);
    assert_same_float(s, 0x1p24f + 2.0f);
}

/* The int8 score kernel's last step is fmul(score, scale), a result like
   any other: a product below 2^-126 is the zero of its sign, and inf * 0
   is the one NaN 0x7FC00000 (x86's own default NaN is 0xFFC00000). The
   public forms hide both (softmax reads a denormal score as zero, and
   every output of a NaN score is NaN), so the active kernel is held to
   dn_ref_attn_scores_int8 on such rows directly: five key rows (the
   kernels' four-row steps and a row after them), a query of one block
   (int32 chunk factors) or of two blocks 2^20 apart (factors past int32,
   the kernels' other finish). */
typedef struct score_rule_case {
    float q0, q32, scale;
    int8_t key;
    uint16_t key_scale;
    uint32_t want;
} score_rule_case;

static void int8_score_kernel_result_rule(void **state)
{
    (void)state;
    enum { D = 64, N = 5 };
    static const score_rule_case cases[] = {
        /* about 100 * 2^-100 times 2^-40: 2^-133.4, denormal */
        {0x1p-100f, 0.0f, 0x1p-40f, 100, F16_ONE, 0x00000000u},
        {0x1p-100f, 0x1p-120f, 0x1p-40f, 100, F16_ONE, 0x00000000u},
        /* about 0.5 times FLT_MIN: 2^-127, denormal */
        {0.5f, 0.0f, 0x1p-126f, 1, F16_ONE, 0x00000000u},
        {0.5f, 0x1p-21f, 0x1p-126f, 1, F16_ONE, 0x00000000u},
        /* about 2^120 * 127 * 65504 = 2^143: inf, times 0 */
        {0x1p120f, 0.0f, 0.0f, 127, 0x7BFF, 0x7FC00000u},
        {0x1p120f, 0x1p100f, 0.0f, 127, 0x7BFF, 0x7FC00000u},
    };
    const dn_attention_kernels *kern = dn_kernels_active()->attention;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const score_rule_case *rc = &cases[c];
        float q[D] = {rc->q0};
        q[32] = rc->q32;
        int16_t codes[D];
        dn_act_scale sc[2];
        dn_act_row row = {codes, sc, 0, 0, DN_WORDS_ONE};
        assert_int_equal(dn_quantize_head(q, D, DN_ACT_SUB32, DN_WORDS_ONE, &row, NULL), DN_OK);
        int8_t k[N * D] = {0};
        uint16_t ks[N];
        for (int j = 0; j < N; j++) k[j * D] = rc->key, ks[j] = rc->key_scale;
        float got[N], ref[N];
        kern->scores_int8(&row, 1, D, k, D, ks, 1, N, rc->scale, got);
        dn_ref_attn_scores_int8(&row, 1, D, k, D, ks, 1, N, rc->scale, ref);
        for (int j = 0; j < N; j++) {
            assert_bits(ref[j], rc->want);
            assert_bits(got[j], rc->want);
        }
    }
}

/* ---- weighted_int8 ------------------------------------------------------------------------ */

static void weighted_int8_by_hand(void **state)
{
    (void)state;
    const uint16_t sc[2] = {F16_ONE, F16_ONE};
    float out[2];
    /* w = 0.5, 0.5: 2^e = 2^-7 (127 * 2^-8 < 0.5), codes 64: exact */
    const float half[2] = {0.5f, 0.5f};
    const int8_t v[4] = {2, -4, 6, 8};
    assert_int_equal(dn_weighted_int8(half, 2, sc, 1, v, 2, 2, out), DN_OK);
    assert_same_float(out[0], 4.0f);
    assert_same_float(out[1], 2.0f);
    /* w = 0.7, 0.3: codes rne(89.6) = 90 and rne(38.4) = 38 at 2^-7 */
    const float p[2] = {0.7f, 0.3f};
    const int8_t v2[2] = {10, 0};
    assert_int_equal(dn_weighted_int8(p, 2, sc, 1, v2, 1, 1, out), DN_OK);
    assert_same_float(out[0], 900.0f / 128.0f);
    /* 33 positions: block 0 of 0.01 (0x3C23D70A: M = 10737418 <= 127 * 2^17,
       e = -30 + 17 = -13, code rne(81.92) = 82, S = 32 * 82 = 2624), block 1
       of 0.5 (code 64 at 2^-7): 2624 * 2^-13 + 0.5 = 0.8203125 */
    float p33[33];
    uint16_t s33[33];
    int8_t v33[33];
    for (int j = 0; j < 33; j++) p33[j] = j < 32 ? 0.01f : 0.5f, s33[j] = F16_ONE, v33[j] = 1;
    assert_int_equal(dn_weighted_int8(p33, 33, s33, 1, v33, 1, 1, out), DN_OK);
    assert_same_float(out[0], 0.8203125f);
    /* a NaN value scale: NaN for every element, reported */
    const uint16_t nan_sc[2] = {F16_ONE, 0x7E00};
    assert_int_equal(dn_weighted_int8(half, 2, nan_sc, 1, v, 2, 2, out), DN_ERR_NON_FINITE);
    assert_bits(out[0], 0x7FC00000);
    assert_bits(out[1], 0x7FC00000);
    /* no positions: +0 */
    out[0] = out[1] = 1.0f;
    assert_int_equal(dn_weighted_int8(NULL, 0, NULL, 1, NULL, 2, 2, out), DN_OK);
    assert_bits(out[0], 0);
    assert_bits(out[1], 0);
    assert_int_equal(dn_weighted_int8(half, 2, sc, 1, v, 1, 2, out), DN_ERR_INVALID_ARGUMENT);
}

/* Block sums at their bound, through the active kernel: 32 positions of
   weight 127 * 2^-12 under scale 1 (codes 127 at 2^-12) against value codes
   127, -127 and -128 in every row: S = 32 * 127 * v = 516129, -516129,
   -520192 (past 2^18), out = S * 2^-12 exactly. */
static void weighted_int8_saturated(void **state)
{
    (void)state;
    enum { N = 32, D = 256 };
    static const size_t sizes[] = {32, 128, 256};
    float p[N], out[D];
    uint16_t sc[N];
    static int8_t v[N * D];
    for (int j = 0; j < N; j++) p[j] = 127.0f * 0x1p-12f, sc[j] = F16_ONE;
    for (size_t k = 0; k < 3; k++) {
        size_t d = sizes[k];
        for (size_t j = 0; j < N; j++)
            for (size_t i = 0; i < d; i++)
                v[j * d + i] = (int8_t)(i % 3 == 0 ? 127 : i % 3 == 1 ? -127 : -128);
        assert_int_equal(dn_weighted_int8(p, N, sc, 1, v, d, d, out), DN_OK);
        for (size_t i = 0; i < d; i++)
            assert_same_float(out[i], (float)(32 * 127 * v[i]) * 0x1p-12f);
    }
}

/* Saturated int8 blocks through dn_attend_int8 (the active kernels) against
   the composition of the public pieces (dn_int8_score is the reference):
   query elements +-127 * 255 * 2^-15 (codes 127 under one word, near
   32767 under two; per block, under the scale 255 * 2^-15, so the AVX-512
   kernel's prescaled chunk sums reach 255 * 127 * 127 * 32, past 2^26),
   key rows the query's signs times +-1 per row and near its magnitudes
   (codes 120..127: block sums near +-127 * 127 * 32 and +-32767 * 127 *
   32), value rows near +-1 (codes 120..127); head sizes 32, 128 and 256,
   both scalings and word counts. */
static void attend_int8_saturated(void **state)
{
    (void)state;
    enum { DM = 256, N = 66 };
    static const size_t sizes[] = {32, 128, 256};
    static float q[DM], kf[N * DM], vf[N * DM];
    static int8_t k[N * DM], v[N * DM];
    float out[DM], want[DM], s[N];
    uint16_t ks[N], vs[N];
    uint64_t seed = 7;
    const float a = 127.0f * 255.0f * 0x1p-15f; /* 127 * the largest per-block scale */
    for (size_t z = 0; z < 3; z++) {
        size_t d = sizes[z];
        for (size_t i = 0; i < d; i++) q[i] = ((i * 7 + i / 32) % 5) < 2 ? -a : a;
        for (size_t j = 0; j < N; j++) {
            float t = j % 5 == 3 ? -1.0f : 1.0f;
            for (size_t i = 0; i < d; i++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                float small = (float)(seed >> 61) / 128.0f; /* 0 .. 7/128 */
                kf[j * d + i] = q[i] * t * (1.0f - small);
                vf[j * d + i] = (i % 2 ? -1.0f : 1.0f) * (1.0f - small);
            }
        }
        assert_int_equal(dn_cache_rows(kf, N, d, ks, 1, k, d), DN_OK);
        assert_int_equal(dn_cache_rows(vf, N, d, vs, 1, v, d), DN_OK);
        float scale = 1.0f / (float)d;
        for (int scaling = 0; scaling < 2; scaling++)
            for (int words = 1; words <= 2; words++) {
                int16_t codes[DM];
                dn_act_scale sc[DM / 32];
                dn_act_row row = {codes, sc, 0, 0, (dn_words)words};
                assert_int_equal(dn_quantize_head(q, d, scaling, words, &row, NULL), DN_OK);
                for (size_t j = 0; j < N; j++) {
                    assert_int_equal(dn_int8_score(&row, ks[j], k + j * d, d, &s[j]), DN_OK);
                    s[j] = dn_fmul(s[j], scale);
                }
                assert_int_equal(dn_softmax(s, s, N), DN_OK);
                assert_int_equal(dn_weighted_int8(s, N, vs, 1, v, d, d, want), DN_OK);
                assert_int_equal(
                    dn_attend_int8(q, d, scaling, words, k, ks, v, vs, N, d, 1, scale, out), DN_OK);
                assert_memory_equal(out, want, d * sizeof(float));
            }
    }
}

/* ---- attend_vector ---------------------------------------------------------------------- */

/* Equal scores: p = 1/2 each (exp 0 = 1, sum 2, recip 1/2). */
static void attend_vector_equal_scores(void **state)
{
    (void)state;
    const float q[2] = {1.0f, 0.0f};
    const float k[4] = {1.0f, 5.0f, 1.0f, -3.0f};
    const float v[4] = {2.0f, 4.0f, 6.0f, -8.0f};
    float out[2];
    assert_int_equal(dn_attend_vector(q, 2, DN_KV_F32, k, v, 2, 2, 0.5f, out), DN_OK);
    assert_same_float(out[0], 4.0f);
    assert_same_float(out[1], -2.0f);
    /* the same rows as binary16 (exact) and bfloat16 (exact) */
    const uint16_t kh[4] = {0x3C00, 0x4500, 0x3C00, 0xC200},
                   vh[4] = {0x4000, 0x4400, 0x4600, 0xC800};
    assert_int_equal(dn_attend_vector(q, 2, DN_KV_F16, kh, vh, 2, 2, 0.5f, out), DN_OK);
    assert_same_float(out[0], 4.0f);
    assert_same_float(out[1], -2.0f);
    const uint16_t kb[4] = {0x3F80, 0x40A0, 0x3F80, 0xC040},
                   vb[4] = {0x4000, 0x4080, 0x40C0, 0xC100};
    assert_int_equal(dn_attend_vector(q, 2, DN_KV_BF16, kb, vb, 2, 2, 0.5f, out), DN_OK);
    assert_same_float(out[0], 4.0f);
    assert_same_float(out[1], -2.0f);
}

/* Scores far past exp's range: the maximum is subtracted first, so 1000 and
   -1000 give p = 1 and 0; 1e30 twice gives 1/2 each. */
static void attend_vector_overflowing_scores(void **state)
{
    (void)state;
    const float q[1] = {1000.0f}, k[2] = {1.0f, -1.0f}, v[2] = {3.0f, 5.0f};
    float out[1];
    assert_int_equal(dn_attend_vector(q, 1, DN_KV_F32, k, v, 2, 1, 1.0f, out), DN_OK);
    assert_same_float(out[0], 3.0f);
    const float big[1] = {1e30f}, k2[2] = {1.0f, 1.0f};
    assert_int_equal(dn_attend_vector(big, 1, DN_KV_F32, k2, v, 2, 1, 1.0f, out), DN_OK);
    assert_same_float(out[0], 4.0f);
    /* a score of +inf has no softmax: NaN, reported */
    const float huge[1] = {3e38f}, k3[2] = {10.0f, 1.0f};
    assert_int_equal(dn_attend_vector(huge, 1, DN_KV_F32, k3, v, 2, 1, 1.0f, out),
                     DN_ERR_NON_FINITE);
    assert_bits(out[0], 0x7FC00000);
}

/* One position: p = 1, the value row itself (a denormal read as zero). */
static void attend_vector_one_position_and_non_finite_rows(void **state)
{
    (void)state;
    const float q[3] = {1.0f, 2.0f, 3.0f}, k[3] = {0.5f, 0.5f, 0.5f};
    const float v[3] = {1.5f, -2.25f, 1e-40f};
    float out[3];
    assert_int_equal(dn_attend_vector(q, 3, DN_KV_F32, k, v, 1, 3, 0.125f, out), DN_OK);
    assert_same_float(out[0], 1.5f);
    assert_same_float(out[1], -2.25f);
    assert_bits(out[2], 0);
    /* a NaN in a key row: every output NaN */
    const float kn[3] = {0.5f, NAN, 0.5f};
    assert_int_equal(dn_attend_vector(q, 3, DN_KV_F32, kn, v, 1, 3, 0.125f, out),
                     DN_ERR_NON_FINITE);
    for (int i = 0; i < 3; i++) assert_bits(out[i], 0x7FC00000);
    /* an infinity in a value row whose probability is 0: 0 * inf is NaN */
    const float q1[1] = {100.0f}, k1[2] = {1.0f, -1.0f}, v1[2] = {1.0f, INFINITY};
    assert_int_equal(dn_attend_vector(q1, 1, DN_KV_F32, k1, v1, 2, 1, 1.0f, out),
                     DN_ERR_NON_FINITE);
    assert_bits(out[0], 0x7FC00000);
}

/* ---- attend_int8 ----------------------------------------------------------------------- */

/* The composition, through the public pieces. */
static void attend_int8_is_its_pieces(void **state)
{
    (void)state;
    enum { D = 80, N = 70 };
    float q[D], kf[N * D], vf[N * D], out[D], want[D], s[N];
    for (int i = 0; i < D; i++) q[i] = (float)((i * 37) % 23) / 7.0f - 1.5f;
    for (int i = 0; i < N * D; i++) {
        kf[i] = (float)((i * 53) % 31) / 5.0f - 3.0f;
        vf[i] = (float)((i * 29) % 17) / 3.0f - 2.5f;
    }
    int8_t k[N * D], v[N * D];
    uint16_t ks[N], vs[N];
    assert_int_equal(dn_cache_rows(kf, N, D, ks, 1, k, D), DN_OK);
    assert_int_equal(dn_cache_rows(vf, N, D, vs, 1, v, D), DN_OK);
    for (int scaling = 0; scaling < 2; scaling++)
        for (int words = 1; words <= 2; words++) {
            int16_t codes[96];
            dn_act_scale sc[3];
            dn_act_row row = {codes, sc, 0, 0, (dn_words)words};
            assert_int_equal(dn_quantize_head(q, D, scaling, words, &row, NULL), DN_OK);
            for (int j = 0; j < N; j++) {
                assert_int_equal(dn_int8_score(&row, ks[j], k + j * D, D, &s[j]), DN_OK);
                s[j] = dn_fmul(s[j], 0.125f);
            }
            assert_int_equal(dn_softmax(s, s, N), DN_OK);
            assert_int_equal(dn_weighted_int8(s, N, vs, 1, v, D, D, want), DN_OK);
            assert_int_equal(
                dn_attend_int8(q, D, scaling, words, k, ks, v, vs, N, D, 1, 0.125f, out), DN_OK);
            assert_memory_equal(out, want, sizeof out);
        }
}

/* ---- the layer: GQA, strides, head ranges, pools --------------------------------------- */

typedef struct layer_case {
    size_t d, qh, kvh, cap, begin, end;
    dn_kv_type type;
} layer_case;

/* Fills a [position][kv_head][d] cache through dn_cache_append. */
static void fill_cache(const layer_case *lc, dn_kv_cache *c, uint64_t seed)
{
    size_t es = lc->type == DN_KV_F32 ? 4 : lc->type == DN_KV_INT8 ? 1 : 2;
    size_t row = lc->kvh * lc->d;
    *c = (dn_kv_cache){malloc(lc->cap * row * es),
                       malloc(lc->cap * row * es),
                       malloc(lc->cap * lc->kvh * 2),
                       malloc(lc->cap * lc->kvh * 2),
                       lc->d,
                       lc->kvh,
                       row,
                       lc->d,
                       lc->kvh,
                       1,
                       lc->type,
                       0};
    float *k = malloc(row * sizeof(float)), *v = malloc(row * sizeof(float));
    for (size_t p = 0; p < lc->cap; p++) {
        for (size_t i = 0; i < row; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            k[i] = (float)((int)(seed >> 40) % 2000) / 500.0f;
            v[i] = (float)((int)(seed >> 20) % 2000) / 700.0f - 1.0f;
        }
        assert_int_equal(dn_cache_append(c, p, k, v), DN_OK);
    }
    free(k);
    free(v);
}

static void free_cache(dn_kv_cache *c)
{
    free(c->k);
    free(c->v);
    free(c->k_scale);
    free(c->v_scale);
}

/* Every head of the layer by the one-head form, then the layer on pools of
   0..3 threads and by head ranges: the same bits. */
static void check_layer(const layer_case *lc, dn_attn_params prm)
{
    dn_kv_cache c;
    fill_cache(lc, &c, lc->d * 31 + lc->qh);
    size_t d = lc->d, n = lc->end - lc->begin, g = lc->qh / lc->kvh;
    float *q = malloc(lc->qh * d * sizeof(float)), *want = malloc(lc->qh * d * sizeof(float));
    float *out = malloc(lc->qh * d * sizeof(float));
    for (size_t i = 0; i < lc->qh * d; i++) q[i] = (float)((int)(i * 7919 % 1000) - 500) / 250.0f;
    size_t es = lc->type == DN_KV_F32 ? 4 : lc->type == DN_KV_INT8 ? 1 : 2;
    for (size_t h = 0; h < lc->qh; h++) {
        size_t kvh = h / g, at = lc->begin * c.pos_stride + kvh * d;
        const char *k = (const char *)c.k + at * es, *v = (const char *)c.v + at * es;
        dn_status st;
        if (lc->type == DN_KV_INT8) {
            size_t sat = lc->begin * lc->kvh + kvh;
            st = dn_attend_int8(q + h * d, d, prm.scaling, prm.words, (const int8_t *)k,
                                c.k_scale + sat, (const int8_t *)v, c.v_scale + sat, n,
                                c.pos_stride, lc->kvh, prm.scale, want + h * d);
        } else {
            st = dn_attend_vector(q + h * d, d, lc->type, k, v, n, c.pos_stride, prm.scale,
                                  want + h * d);
        }
        assert_int_equal(st, DN_OK);
    }
    for (unsigned t = 0; t <= 3; t++) {
        dn_pool *pool = t ? dn_pool_create(t) : NULL;
        memset(out, 0xFF, lc->qh * d * sizeof(float));
        assert_int_equal(dn_attend(&c, &prm, q, out, NULL, 0, pool), DN_OK);
        assert_memory_equal(out, want, lc->qh * d * sizeof(float));
        dn_pool_destroy(pool);
    }
    size_t layer_b, heads_b;
    assert_int_equal(dn_attend_work_size(&c, &prm, &layer_b, &heads_b), DN_OK);
    unsigned char *work = malloc(layer_b + 1);
    memset(out, 0xFF, lc->qh * d * sizeof(float));
    assert_int_equal(dn_attend(&c, &prm, q, out, work + 1, layer_b, NULL), DN_OK);
    assert_memory_equal(out, want, lc->qh * d * sizeof(float));
    memset(out, 0xFF, lc->qh * d * sizeof(float));
    size_t cut = lc->qh / 3;
    assert_int_equal(dn_attend_heads(&c, &prm, q, 0, cut, out, work + 1, heads_b), DN_OK);
    assert_int_equal(dn_attend_heads(&c, &prm, q, cut, lc->qh, out, NULL, 0), DN_OK);
    assert_memory_equal(out, want, lc->qh * d * sizeof(float));
    assert_int_equal(dn_attend(&c, &prm, q, out, work, layer_b - 1, NULL), DN_ERR_INVALID_ARGUMENT);
    free(work);
    free(q);
    free(want);
    free(out);
    free_cache(&c);
}

static void layer_matches_heads(void **state)
{
    (void)state;
    const layer_case cases[] = {
        {64, 8, 2, 50, 3, 50, DN_KV_F16},   {80, 4, 4, 40, 0, 40, DN_KV_F32},
        {31, 8, 1, 70, 10, 69, DN_KV_BF16}, {128, 8, 1, 40, 0, 33, DN_KV_INT8},
        {96, 6, 3, 35, 1, 35, DN_KV_INT8},  {1, 2, 2, 5, 0, 5, DN_KV_F16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int scaling = 0; scaling < 2; scaling++)
            for (int words = 1; words <= 2; words++) {
                if (cases[i].type != DN_KV_INT8 && (scaling || words == 2)) continue;
                dn_attn_params prm = {cases[i].qh, cases[i].begin,    cases[i].end,
                                      0.125f,      (uint32_t)scaling, (uint32_t)words};
                check_layer(&cases[i], prm);
            }
}

/* ---- bad input --------------------------------------------------------------------------- */

/* NULLs, shapes, strides, parameters. */
static void bad_shapes(void **state)
{
    (void)state;
    enum { D = 4, KVH = 2, QH = 4, CAP = 3 };
    float k[CAP * KVH * D] = {0}, v[CAP * KVH * D] = {0}, q[QH * D] = {0}, out[QH * D];
    dn_kv_cache c = {k, v, NULL, NULL, D, KVH, KVH * D, D, 1, 1, DN_KV_F32, 0};
    dn_attn_params p = {QH, 0, CAP, 0.5f, 0, 1};
    assert_int_equal(dn_attend(&c, &p, q, out, NULL, 0, NULL), DN_OK);
    assert_int_equal(dn_attend(NULL, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_attend(&c, NULL, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_attend(&c, &p, NULL, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_attend(&c, &p, q, NULL, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    dn_kv_cache b = c;
    b.head_dim = 0;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.head_dim = DN_ATTN_MAX_HEAD_DIM + 1;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.pos_stride = D - 1;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.head_stride = D - 1;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.kv_heads = 3; /* does not divide 4 */
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.kv_heads = 0;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.type = 9;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.k = NULL;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.pos_stride = SIZE_MAX / 2;
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    b = c, b.type = DN_KV_INT8; /* no scales */
    assert_int_equal(dn_attend(&b, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    dn_attn_params bp = p;
    bp.begin = 2, bp.end = 1;
    assert_int_equal(dn_attend(&c, &bp, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    bp = p, bp.scale = NAN;
    assert_int_equal(dn_attend(&c, &bp, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    bp = p, bp.q_heads = 3;
    assert_int_equal(dn_attend(&c, &bp, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_attend_heads(&c, &p, q, 3, 2, out, NULL, 0), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_attend_heads(&c, &p, q, 0, QH + 1, out, NULL, 0), DN_ERR_INVALID_ARGUMENT);
}

/* Non-finite queries, zero positions, int8 parameters, the one-head forms,
   appending. */
static void bad_values(void **state)
{
    (void)state;
    enum { D = 4, KVH = 2, QH = 4, CAP = 3 };
    float k[CAP * KVH * D] = {0}, v[CAP * KVH * D] = {0}, q[QH * D] = {0}, out[QH * D];
    dn_kv_cache c = {k, v, NULL, NULL, D, KVH, KVH * D, D, 1, 1, DN_KV_F32, 0};
    dn_attn_params p = {QH, 0, CAP, 0.5f, 0, 1}, bp;
    /* a non-finite query: nothing written */
    for (int i = 0; i < QH * D; i++) out[i] = 7.0f;
    q[5] = INFINITY;
    assert_int_equal(dn_attend(&c, &p, q, out, NULL, 0, NULL), DN_ERR_NON_FINITE);
    for (int i = 0; i < QH * D; i++) assert_same_float(out[i], 7.0f);
    /* the head range reads only its heads */
    assert_int_equal(dn_attend_heads(&c, &p, q, 2, 4, out, NULL, 0), DN_OK);
    q[5] = 0.0f;
    /* zero positions: +0 everywhere, even with no rows */
    dn_kv_cache e = c;
    e.k = e.v = NULL;
    bp = p, bp.begin = bp.end = 2;
    assert_int_equal(dn_attend(&e, &bp, q, out, NULL, 0, NULL), DN_OK);
    for (int i = 0; i < QH * D; i++) assert_bits(out[i], 0);
    /* int8: an unknown scaling or word count */
    int8_t k8[CAP * KVH * D] = {0};
    uint16_t sc[CAP * KVH] = {0};
    dn_kv_cache c8 = {k8, k8, sc, sc, D, KVH, KVH * D, D, KVH, 1, DN_KV_INT8, 0};
    assert_int_equal(dn_attend(&c8, &p, q, out, NULL, 0, NULL), DN_OK);
    bp = p, bp.words = 3;
    assert_int_equal(dn_attend(&c8, &bp, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    bp = p, bp.scaling = 2;
    assert_int_equal(dn_attend(&c8, &bp, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    dn_kv_cache b8 = c8;
    b8.scale_pos_stride = 0;
    assert_int_equal(dn_attend(&b8, &p, q, out, NULL, 0, NULL), DN_ERR_INVALID_ARGUMENT);
    /* the one-head forms */
    assert_int_equal(dn_attend_vector(q, D, DN_KV_INT8, k, v, 1, D, 1.0f, out),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_attend_vector(q, D, DN_KV_F32, k, v, 2, D - 1, 1.0f, out),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_attend_vector(q, 0, DN_KV_F32, k, v, 2, D, 1.0f, out),
                     DN_ERR_INVALID_ARGUMENT);
    /* appending */
    assert_int_equal(dn_cache_append(&c, CAP - 1, q, q), DN_OK);
    assert_int_equal(dn_cache_append(&c, SIZE_MAX, q, q), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_cache_append(NULL, 0, q, q), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_cache_append(&c, 0, NULL, q), DN_ERR_INVALID_ARGUMENT);
    q[0] = NAN;
    assert_int_equal(dn_cache_append(&c, 0, q, q), DN_ERR_NON_FINITE);
}

/* dn_cache_append stores each type as its conversion says. */
static void append_converts(void **state)
{
    (void)state;
    const float x[2] = {1.0f / 3.0f, -70000.0f};
    uint16_t kh[2], vh[2];
    dn_kv_cache c = {kh, vh, NULL, NULL, 2, 1, 2, 2, 1, 1, DN_KV_F16, 0};
    assert_int_equal(dn_cache_append(&c, 0, x, x), DN_OK);
    assert_int_equal(kh[0], dn_f32_to_f16(x[0]));
    assert_int_equal(kh[1], 0xFC00);
    c.type = DN_KV_BF16;
    assert_int_equal(dn_cache_append(&c, 0, x, x), DN_OK);
    assert_int_equal(vh[0], dn_f32_to_bf16(x[0]));
    int8_t k8[2], v8[2];
    uint16_t ks, vs;
    dn_kv_cache c8 = {k8, v8, &ks, &vs, 2, 1, 2, 2, 1, 1, DN_KV_INT8, 0};
    assert_int_equal(dn_cache_append(&c8, 0, x, x), DN_OK);
    uint16_t s1;
    int8_t c1[2];
    dn_cache_row(x, 2, &s1, c1);
    assert_int_equal(ks, s1);
    assert_memory_equal(k8, c1, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(int8_codes_round_and_clamp),
        cmocka_unit_test(cache_row_scale_and_codes),
        cmocka_unit_test(cache_rows_is_cache_row),
        cmocka_unit_test(quantize_head_blocks),
        cmocka_unit_test(quantize_head_definition),
        cmocka_unit_test(int8_score_by_hand),
        cmocka_unit_test(int8_score_rounds_once),
        cmocka_unit_test(int8_score_kernel_result_rule),
        cmocka_unit_test(weighted_int8_by_hand),
        cmocka_unit_test(weighted_int8_saturated),
        cmocka_unit_test(attend_vector_equal_scores),
        cmocka_unit_test(attend_vector_overflowing_scores),
        cmocka_unit_test(attend_vector_one_position_and_non_finite_rows),
        cmocka_unit_test(attend_int8_is_its_pieces),
        cmocka_unit_test(attend_int8_saturated),
        cmocka_unit_test(layer_matches_heads),
        cmocka_unit_test(bad_shapes),
        cmocka_unit_test(bad_values),
        cmocka_unit_test(append_converts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
