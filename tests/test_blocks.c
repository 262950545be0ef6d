/* SPDX-License-Identifier: MIT */
/*
 * The block formats (decodenum/blocks.h): the type tables and argument
 * checks, every binary16 scale, hand-built blocks, unreadable blocks and
 * random bytes. The ggml oracle (every row of ../shared/oracle's
 * ggml-blocks.bin) and the coefficient bound are in test_blocks_oracle.c;
 * the formats as both know them in blocks_fmt.h.
 */
#include "blocks_fmt.h"

/* ---- (f) tables and arguments ---------------------------------------------- */

static void tables(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFMTS; i++) {
        assert_true(dn_reads(fmts[i].type));
        assert_int_equal(dn_type_block_elements(fmts[i].type), fmts[i].elements);
        assert_int_equal(dn_type_block_bytes(fmts[i].type), fmts[i].bytes);
    }
    /* Known to the library, stored element by element, not read by the array. */
    assert_false(dn_reads(DN_TYPE_F32));
    assert_false(dn_reads(DN_TYPE_F16));
    assert_false(dn_reads(DN_TYPE_BF16));
    assert_int_equal(dn_type_block_elements(DN_TYPE_F32), 1);
    assert_int_equal(dn_type_block_bytes(DN_TYPE_F32), 4);
    assert_int_equal(dn_type_block_elements(DN_TYPE_F16), 1);
    assert_int_equal(dn_type_block_bytes(DN_TYPE_F16), 2);
    assert_int_equal(dn_type_block_elements(DN_TYPE_BF16), 1);
    assert_int_equal(dn_type_block_bytes(DN_TYPE_BF16), 2);
    /* ggml ids this library does not know (Q4_2/Q4_3 gaps, Q8_1, Q8_K, the
       other IQ formats, TQ, MXFP4 ...) and ids past the enum. */
    const int unknown[] = {4,  5,  9,  15, 16, 17, 18, 19, 21, 22, 24,  25,
                           26, 27, 28, 29, 31, 34, 35, 39, 40, -1, 1000};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        dn_type t = (dn_type)unknown[i];
        assert_false(dn_reads(t));
        assert_int_equal(dn_type_block_elements(t), 0);
        assert_int_equal(dn_type_block_bytes(t), 0);
    }
}

static void arguments(void **state)
{
    (void)state;
    uint8_t bytes[2 * 144] = {0};
    dn_coded_row r;
    row_alloc(&r, 512, 32);
    size_t bad = 77;

    /* Types the array does not read. */
    const dn_type unsupported[] = {DN_TYPE_F32, DN_TYPE_F16, DN_TYPE_BF16, (dn_type)9,
                                   (dn_type)1000};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        r.n = 32;
        assert_int_equal(dn_read_row(unsupported[i], bytes, 32, &r, &bad), DN_ERR_UNSUPPORTED_TYPE);
    }
    /* n not a whole number of blocks. */
    const size_t badn[] = {1, 16, 31, 33};
    for (size_t i = 0; i < 4; i++) {
        r.n = badn[i];
        assert_int_equal(dn_read_row(DN_TYPE_Q4_0, bytes, badn[i], &r, &bad),
                         DN_ERR_INVALID_ARGUMENT);
    }
    r.n = 32;
    assert_int_equal(dn_read_row(DN_TYPE_Q4_K, bytes, 32, &r, &bad), DN_ERR_INVALID_ARGUMENT);
    r.n = 255;
    assert_int_equal(dn_read_row(DN_TYPE_IQ4_XS, bytes, 255, &r, &bad), DN_ERR_INVALID_ARGUMENT);
    /* row->n must be n. */
    r.n = 256;
    assert_int_equal(dn_read_row(DN_TYPE_Q4_0, bytes, 32, &r, &bad), DN_ERR_INVALID_ARGUMENT);
    /* NULL pointers with a length. */
    r.n = 32;
    assert_int_equal(dn_read_row(DN_TYPE_Q4_0, bytes, 32, NULL, &bad), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_read_row(DN_TYPE_Q4_0, NULL, 32, &r, &bad), DN_ERR_INVALID_ARGUMENT);
    int16_t *keep = r.coef;
    r.coef = NULL;
    assert_int_equal(dn_read_row(DN_TYPE_Q4_0, bytes, 32, &r, &bad), DN_ERR_INVALID_ARGUMENT);
    r.coef = keep;
    keep = r.offs;
    r.offs = NULL;
    assert_int_equal(dn_read_row(DN_TYPE_Q4_0, bytes, 32, &r, &bad), DN_ERR_INVALID_ARGUMENT);
    r.offs = keep;
    dn_segment *segs = r.segments;
    r.segments = NULL;
    assert_int_equal(dn_read_row(DN_TYPE_Q4_0, bytes, 32, &r, &bad), DN_ERR_INVALID_ARGUMENT);
    r.segments = segs;
    /* An empty row is valid with NULL everything but the row. */
    dn_coded_row empty = {NULL, NULL, NULL, 0, 99};
    for (size_t i = 0; i < NFMTS; i++) {
        empty.nsegments = 99;
        assert_int_equal(dn_read_row(fmts[i].type, NULL, 0, &empty, NULL), DN_OK);
        assert_int_equal(empty.nsegments, 0);
    }
    /* An all-zero row reads (zero scales are canonical), bad_block untouched. */
    r.n = 512;
    assert_int_equal(dn_read_row(DN_TYPE_Q4_K, bytes, 512, &r, &bad), DN_OK);
    assert_int_equal(bad, 77);
    assert_int_equal(r.nsegments, 2);
    assert_int_equal(r.segments[1].first, 256);
    assert_int_equal(r.segments[1].count, 256);
    assert_int_equal(r.segments[0].a.sig, 0);
    assert_int_equal(r.segments[0].a.exp, 0);
    assert_int_equal(r.segments[0].b.sig, 0);
    assert_int_equal(r.segments[0].b.exp, 0);
    row_free(&r);
}

/* Every binary16 pattern as a Q8_0 block's d: finite ones are sig * 2^exp
   exactly, in the canonical form; infinities and NaNs are unreadable. */
static void every_binary16_scale(void **state)
{
    (void)state;
    uint8_t blk[34] = {0};
    blk[2] = 1;
    dn_coded_row r;
    row_alloc(&r, 32, 32);
    for (uint32_t h = 0; h < 0x10000u; h++) {
        put16(blk, (uint16_t)h);
        size_t bad = 99;
        dn_status st = dn_read_row(DN_TYPE_Q8_0, blk, 32, &r, &bad);
        if (!f16_finite((uint16_t)h)) {
            assert_int_equal(st, DN_ERR_UNREADABLE_BLOCK);
            assert_int_equal(bad, 0);
            continue;
        }
        assert_int_equal(st, DN_OK);
        dn_scale a = r.segments[0].a;
        uint32_t e = (h >> 10) & 31, frac = h & 1023;
        int32_t mag = e ? (int32_t)(1024 + frac) : (int32_t)frac;
        int32_t want_exp = e ? (int32_t)e - 25 : (frac ? -24 : 0);
        assert_int_equal(a.sig, (h & 0x8000u) ? -mag : mag);
        assert_int_equal(a.exp, want_exp);
        /* The same number as binary16 widening computes. */
        float v = scale_value(a);
        assert_true(v == dn_f16_to_f32((uint16_t)h));
        assert_int_equal(r.coef[0], 1);
    }
    row_free(&r);
}

/* ---- (d) hand-built blocks -------------------------------------------------- */

#define EXPECT_SCALE(s, want_sig, want_exp)    \
    do {                                       \
        assert_int_equal((s).sig, (want_sig)); \
        assert_int_equal((s).exp, (want_exp)); \
    } while (0)
#define EXPECT_EL(r, e, want_coef, want_offs)       \
    do {                                            \
        assert_int_equal((r).coef[e], (want_coef)); \
        assert_int_equal((r).offs[e], (want_offs)); \
    } while (0)

static void hand_32_element_blocks(void **state)
{
    (void)state;
    dn_coded_row r;
    row_alloc(&r, 256, 32);

    /* Q4_0: d = 1.0 (0x3C00: E 15 -> 1024 * 2^-10). qs[0] = 0x9F: element 0
       is 15 - 8 = 7, element 16 is 9 - 8 = 1; qs[15] = 0x08: element 15 is
       0, element 31 is -8; every other code 0 -> -8. */
    uint8_t q40[18] = {0x00, 0x3C, 0x9F};
    q40[2 + 15] = 0x08;
    read_one(DN_TYPE_Q4_0, q40, &r);
    EXPECT_SCALE(r.segments[0].a, 1024, -10);
    EXPECT_SCALE(r.segments[0].b, 0, 0);
    EXPECT_EL(r, 0, 7, 0);
    EXPECT_EL(r, 16, 1, 0);
    EXPECT_EL(r, 15, 0, 0);
    EXPECT_EL(r, 31, -8, 0);
    EXPECT_EL(r, 1, -8, 0);

    /* Q4_1: d = 2.0 (0x4000: 1024 * 2^-9), m = -1.0 (0xBC00). qs[3] = 0x5A:
       element 3 is 10, element 19 is 5; offs 1 everywhere. */
    uint8_t q41[20] = {0x00, 0x40, 0x00, 0xBC};
    q41[4 + 3] = 0x5A;
    read_one(DN_TYPE_Q4_1, q41, &r);
    EXPECT_SCALE(r.segments[0].a, 1024, -9);
    EXPECT_SCALE(r.segments[0].b, -1024, -10);
    EXPECT_EL(r, 3, 10, 1);
    EXPECT_EL(r, 19, 5, 1);
    EXPECT_EL(r, 0, 0, 1);

    /* Q5_0: d = 0x0001, the least subnormal: 1 * 2^-24. qh = 0x80010001
       (bits 0, 16, 31). qs[0] = 0x21: element 0 is 1 | 16 = 17 -> 1,
       element 16 is 2 | 16 = 18 -> 2; element 31 is 0 | 16 -> 0; element 1
       is 0 -> -16. */
    uint8_t q50[22] = {0x01, 0x00, 0x01, 0x00, 0x01, 0x80, 0x21};
    read_one(DN_TYPE_Q5_0, q50, &r);
    EXPECT_SCALE(r.segments[0].a, 1, -24);
    EXPECT_EL(r, 0, 1, 0);
    EXPECT_EL(r, 16, 2, 0);
    EXPECT_EL(r, 31, 0, 0);
    EXPECT_EL(r, 1, -16, 0);

    /* Q5_1: d = 0x3555 (E 13, f 341: 1365 * 2^-12), m = -0 (canonical 0).
       qh all ones, qs all 0xFF: 31 everywhere but qs[5] = 0x10: element 5
       is 0 | 16 = 16, element 21 is 1 | 16 = 17. */
    uint8_t q51[24] = {0x55, 0x35, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0xFF};
    memset(q51 + 8, 0xFF, 16);
    q51[8 + 5] = 0x10;
    read_one(DN_TYPE_Q5_1, q51, &r);
    EXPECT_SCALE(r.segments[0].a, 1365, -12);
    EXPECT_SCALE(r.segments[0].b, 0, 0);
    EXPECT_EL(r, 5, 16, 1);
    EXPECT_EL(r, 21, 17, 1);
    EXPECT_EL(r, 0, 31, 1);
    EXPECT_EL(r, 31, 31, 1);

    /* Q8_0: d = 65504 (0x7BFF: 2047 * 2^5). Codes are two's complement. */
    uint8_t q80[34] = {0xFF, 0x7B, 0x80, 0x7F, 0xFF, 0x01};
    read_one(DN_TYPE_Q8_0, q80, &r);
    EXPECT_SCALE(r.segments[0].a, 2047, 5);
    EXPECT_EL(r, 0, -128, 0);
    EXPECT_EL(r, 1, 127, 0);
    EXPECT_EL(r, 2, -1, 0);
    EXPECT_EL(r, 3, 1, 0);
    EXPECT_EL(r, 4, 0, 0);

    /* IQ4_NL: d = -1.5 (0xBE00: -(1024 + 512) * 2^-10). qs[0] = 0xF0:
       element 0 is level 0 = -127, element 16 level 15 = 113; qs[1] = 0x78:
       element 1 is level 8 = 1, element 17 level 7 = -10; other codes 0. */
    uint8_t nl[18] = {0x00, 0xBE, 0xF0, 0x78};
    read_one(DN_TYPE_IQ4_NL, nl, &r);
    EXPECT_SCALE(r.segments[0].a, -1536, -10);
    EXPECT_EL(r, 0, -127, 0);
    EXPECT_EL(r, 16, 113, 0);
    EXPECT_EL(r, 1, 1, 0);
    EXPECT_EL(r, 17, -10, 0);
    EXPECT_EL(r, 2, -127, 0);
    row_free(&r);
}

/* Q2_K: d = 1.0 @80, dmin = 0.5 (0x3800: 1024 * 2^-11) @82.
   scales[j] = sc | m << 4 for sub-block j = e / 16:
     j 0: 0x21 (sc 1, m 2); j 2: 0x05; j 4: 0x47 (sc 7, m 4); j 6: 0x0F; j 9: 0xF3.
   qs[0] = 0xE4 (binary 11 10 01 00) holds, by shift 2 * ((e % 128) / 32),
   element 0 (q 0), 32 (q 1), 64 (q 2), 96 (q 3). qs[48] = 0x03 holds
   element 128 + 16 = 144 (q 3, sub-block 9); element 176 takes its bits
   2..3 (q 0, sub-block 11: scale byte 0). */
static void hand_q2_k(dn_coded_row *r)
{
    uint8_t q2[84] = {0};
    q2[0] = 0x21, q2[2] = 0x05, q2[4] = 0x47, q2[6] = 0x0F, q2[9] = 0xF3;
    q2[16 + 0] = 0xE4;
    q2[16 + 48] = 0x03;
    put16(q2 + 80, 0x3C00);
    put16(q2 + 82, 0x3800);
    read_one(DN_TYPE_Q2_K, q2, r);
    EXPECT_SCALE(r->segments[0].a, 1024, -10);
    EXPECT_SCALE(r->segments[0].b, 1024, -11);
    EXPECT_EL(*r, 0, 0, -2);
    EXPECT_EL(*r, 32, 5 * 1, 0);
    EXPECT_EL(*r, 64, 7 * 2, -4);
    EXPECT_EL(*r, 96, 15 * 3, 0);
    EXPECT_EL(*r, 144, 3 * 3, -15);
    EXPECT_EL(*r, 176, 0, 0);
}

/* Q3_K: d = 1.0 @108. Scales s[] @96, 6-bit raw values, sc = raw - 32:
     sub-block 4: low s[4] & 15 = 1, high (s[8] >> 2) & 3 = 2 -> 33 -> 1
     sub-block 13: low s[5] >> 4 = 15, high (s[9] >> 6) & 3 = 3 -> 63 -> 31
     every other sub-block raw 0 -> -32.
   hmask[0] = 0x05 sets the high bit of elements 0 (bit 0) and 64 (bit 2);
   qs[0] = 0x30 gives element 64 (shift 4) low bits 3; qs[48] = 0x10
   gives element 208 (128 + 80: qs[32 + 16], shift 4) low bits 1.
     e 0:   low 0, high set   -> q 0  -> 0
     e 64:  low 3, high set   -> q 3  -> 1 * 3 = 3
     e 208: low 1, high clear -> q -3 -> 31 * -3 = -93
     e 32:  low 0, high clear -> q -4 -> -32 * -4 = 128 */
static void hand_q3_k(dn_coded_row *r)
{
    uint8_t q3[110] = {0};
    q3[0] = 0x05;
    q3[32 + 0] = 0x30;
    q3[32 + 48] = 0x10;
    q3[96 + 4] = 0x01, q3[96 + 8] = 0x08;
    q3[96 + 5] = 0xF0, q3[96 + 9] = 0xC0;
    put16(q3 + 108, 0x3C00);
    read_one(DN_TYPE_Q3_K, q3, r);
    EXPECT_SCALE(r->segments[0].a, 1024, -10);
    EXPECT_SCALE(r->segments[0].b, 0, 0);
    EXPECT_EL(*r, 0, 0, 0);
    EXPECT_EL(*r, 64, 3, 0);
    EXPECT_EL(*r, 208, -93, 0);
    EXPECT_EL(*r, 32, 128, 0);
}

/* The d, dmin and scales of the Q4_K and Q5_K blocks below. */
static void k_header_by_hand(uint8_t *b)
{
    put16(b, 0x3C00);
    put16(b + 2, 0x0400);
    b[4 + 0] = 0x3F, b[4 + 4] = 0x45, b[4 + 8] = 0x2A;
}

/* Q4_K: d = 1.0, dmin = 2^-14 (0x0400: 1024 * 2^-24, the least normal).
   Scales s[] @4: sub-block 0: sc = s[0] & 63 = 63, m = s[4] & 63 = 5;
   sub-block 4: sc = (s[8] & 15) | (s[0] >> 6) << 4 = 10,
                m = (s[8] >> 4) | (s[4] >> 6) << 4 = 2 | 16 = 18.
   qs @16: qs[0] = 0x7F: element 0 is 15, element 32 is 7 (sub-block 1,
   sc 0, m 0); qs[64] = 0x03: element 128 is 3 (sub-block 4). */
static void hand_q4_k(dn_coded_row *r)
{
    uint8_t q4[144] = {0};
    k_header_by_hand(q4);
    q4[16 + 0] = 0x7F;
    q4[16 + 64] = 0x03;
    read_one(DN_TYPE_Q4_K, q4, r);
    EXPECT_SCALE(r->segments[0].a, 1024, -10);
    EXPECT_SCALE(r->segments[0].b, 1024, -24);
    EXPECT_EL(*r, 0, 63 * 15, -5);
    EXPECT_EL(*r, 7, 0, -5);
    EXPECT_EL(*r, 32, 0, 0);
    EXPECT_EL(*r, 128, 30, -18);
    EXPECT_EL(*r, 160, 0, 0);
}

/* Q5_K: the same scales; qh @16: qh[0] = 0x11 is the fifth bit of
   element 0 (bit 0) and element 128 (bit 4); qs @48 as Q4_K's. */
static void hand_q5_k(dn_coded_row *r)
{
    uint8_t q5[176] = {0};
    k_header_by_hand(q5);
    q5[16 + 0] = 0x11;
    q5[48 + 0] = 0x7F;
    q5[48 + 64] = 0x03;
    read_one(DN_TYPE_Q5_K, q5, r);
    EXPECT_EL(*r, 0, 63 * 31, -5);
    EXPECT_EL(*r, 32, 0, 0);
    EXPECT_EL(*r, 128, 10 * 19, -18);
    EXPECT_EL(*r, 1, 0, -5);
}

/* Q6_K: d = 1.0 @208; scales int8 @192: j 0 = -128, j 5 = 3, j 15 = 127.
     e 0: all bits 0 -> q 0 -> -128 * -32 = 4096 (the bound)
     e 255 (h 1, k 3, l 31): low ql[64 + 32 + 31] >> 4 = 15,
           high (qh[32 + 31] >> 6) & 3 = 3 -> q 63 -> 127 * 31 = 3937
     e 80 (h 0, k 2, l 16): low ql[16] >> 4 = 5, high (qh[16] >> 4) & 3 = 2
           -> q 37 -> 3 * 5 = 15
     e 16: sub-block 1, scale 0 -> 0 */
static void hand_q6_k(dn_coded_row *r)
{
    uint8_t q6[210] = {0};
    q6[127] = 0xF0, q6[128 + 63] = 0xC0;
    q6[16] = 0x50, q6[128 + 16] = 0x20;
    q6[192 + 0] = 0x80, q6[192 + 5] = 0x03, q6[192 + 15] = 0x7F;
    put16(q6 + 208, 0x3C00);
    read_one(DN_TYPE_Q6_K, q6, r);
    EXPECT_EL(*r, 0, 4096, 0);
    EXPECT_EL(*r, 255, 3937, 0);
    EXPECT_EL(*r, 80, 15, 0);
    EXPECT_EL(*r, 16, 0, 0);
}

/* IQ4_XS: d = 1.0; scales_h @2 = 0xC008, scales_l @4:
     sub-block 0: (scales_l[0] & 15) | (h & 3) << 4 = 0 -> -32
     sub-block 1: (scales_l[0] >> 4) | ((h >> 2) & 3) << 4 = 32 -> 0
     sub-block 7: (scales_l[3] >> 4 = 15) | ((h >> 14) & 3 = 3) << 4 = 63 -> 31
   qs @8: qs[0] = 0xF0: element 0 is level 0 (-127), element 16 level
   15 (113); qs[112] = 0x0F: element 224 is level 15; element 255 is
   qs[127] >> 4 = level 0. */
static void hand_iq4_xs(dn_coded_row *r)
{
    uint8_t xs[136] = {0};
    put16(xs, 0x3C00);
    put16(xs + 2, 0xC008);
    xs[4 + 3] = 0xF0;
    xs[8 + 0] = 0xF0;
    xs[8 + 112] = 0x0F;
    read_one(DN_TYPE_IQ4_XS, xs, r);
    EXPECT_EL(*r, 0, -32 * -127, 0);
    EXPECT_EL(*r, 16, -32 * 113, 0);
    EXPECT_EL(*r, 32, 0, 0);
    EXPECT_EL(*r, 224, 31 * 113, 0);
    EXPECT_EL(*r, 255, 31 * -127, 0);
}

static void hand_super_blocks(void **state)
{
    (void)state;
    dn_coded_row r;
    row_alloc(&r, 256, 256);
    hand_q2_k(&r);
    hand_q3_k(&r);
    hand_q4_k(&r);
    hand_q5_k(&r);
    hand_q6_k(&r);
    hand_iq4_xs(&r);
    row_free(&r);
}

/* ---- (c) unreadable blocks -------------------------------------------------- */

static void fill_block(const fmt *f, uint8_t *blk)
{
    for (size_t k = 0; k < f->bytes; k++) blk[k] = (uint8_t)rng();
    put16(blk + f->d_at, (uint16_t)(0x3000 + rng() % 0x1000));
    if (f->b_at >= 0) put16(blk + f->b_at, (uint16_t)(0x2000 + rng() % 0x1000));
}

static void unreadable_blocks(void **state)
{
    (void)state;
    const uint16_t bad[] = {0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7FFF, 0xFFFF, 0x7D00};
    rng_state = 0x5EEDu;
    for (size_t i = 0; i < NFMTS; i++) {
        const fmt *f = &fmts[i];
        size_t n = 4 * f->elements;
        uint8_t *bytes = malloc(4 * f->bytes);
        assert_non_null(bytes);
        dn_coded_row r;
        row_alloc(&r, n, f->elements);
        for (int field = 0; field < 2; field++) {
            int at = field == 0 ? f->d_at : f->b_at;
            if (at < 0) continue;
            for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
                for (int b = 0; b < 4; b++) fill_block(f, bytes + b * f->bytes);
                size_t where = 99;
                assert_int_equal(dn_read_row(f->type, bytes, n, &r, &where), DN_OK);
                assert_int_equal(where, 99);
                put16(bytes + 2 * f->bytes + at, bad[v]);
                assert_int_equal(dn_read_row(f->type, bytes, n, &r, &where),
                                 DN_ERR_UNREADABLE_BLOCK);
                assert_int_equal(where, 2);
                /* the first one is named; NULL bad_block is allowed */
                put16(bytes + 3 * f->bytes + f->d_at, 0x7C00);
                assert_int_equal(dn_read_row(f->type, bytes, n, &r, &where),
                                 DN_ERR_UNREADABLE_BLOCK);
                assert_int_equal(where, 2);
                assert_int_equal(dn_read_row(f->type, bytes, n, &r, NULL), DN_ERR_UNREADABLE_BLOCK);
                /* the largest finite scales read */
                put16(bytes + 2 * f->bytes + at, 0xFBFF);
                put16(bytes + 3 * f->bytes + f->d_at, 0x7BFF);
                assert_int_equal(dn_read_row(f->type, bytes, n, &r, &where), DN_OK);
                assert_int_equal(where, 2);
                const dn_segment *s = &r.segments[2];
                EXPECT_SCALE(field == 0 ? s->a : s->b, -2047, 5);
                EXPECT_SCALE(r.segments[3].a, 2047, 5);
            }
        }
        row_free(&r);
        free(bytes);
    }
}

/* ---- (e) random bytes ---------------------------------------------------------- */

static void random_bytes(void **state)
{
    (void)state;
    rng_state = 0xDEC0DE5EEDull;
    size_t ok = 0, unreadable = 0;
    for (int iter = 0; iter < 24000; iter++) {
        const fmt *f = &fmts[iter % NFMTS];
        size_t blocks = 1 + rng() % 16, n = blocks * f->elements;
        /* exactly the row's bytes, so the sanitizers see any read past it */
        uint8_t *bytes = malloc(blocks * f->bytes);
        assert_non_null(bytes);
        for (size_t k = 0; k < blocks * f->bytes; k++) bytes[k] = (uint8_t)rng();
        dn_coded_row r;
        r.n = n;
        r.coef = malloc(n * sizeof *r.coef);
        r.offs = malloc(n * sizeof *r.offs);
        r.segments = malloc(blocks * sizeof *r.segments);
        size_t bad = SIZE_MAX;
        dn_status st = dn_read_row(f->type, bytes, n, &r, &bad);
        /* the first block with a non-finite scale, if any */
        size_t first_bad = SIZE_MAX;
        for (size_t b = 0; b < blocks && first_bad == SIZE_MAX; b++) {
            const uint8_t *blk = bytes + b * f->bytes;
            int finite = f16_finite((uint16_t)(blk[f->d_at] | blk[f->d_at + 1] << 8));
            if (f->b_at >= 0)
                finite = finite && f16_finite((uint16_t)(blk[f->b_at] | blk[f->b_at + 1] << 8));
            if (!finite) first_bad = b;
        }
        if (first_bad == SIZE_MAX) {
            assert_int_equal(st, DN_OK);
            assert_int_equal(bad, SIZE_MAX);
            check_row_shape(f, &r, blocks);
            ok++;
        } else {
            assert_int_equal(st, DN_ERR_UNREADABLE_BLOCK);
            assert_int_equal(bad, first_bad);
            unreadable++;
        }
        free(bytes);
        free(r.coef);
        free(r.offs);
        free(r.segments);
    }
    printf("  random rows: %zu read, %zu unreadable\n", ok, unreadable);
    assert_true(ok > 1000 && unreadable > 1000);
}

/* ---- (g) rows as floats -------------------------------------------------------- */

/* dn_row_to_f32 against its definition, one dn_exact_sum per weight, on
   random rows of every format whose scales take any finite binary16 value
   (so the two terms' exponents range as far apart as they can). */
static void row_to_f32_definition(void **state)
{
    (void)state;
    rng_state = 0xF10A75EEDull;
    size_t values = 0;
    for (int iter = 0; iter < 3000; iter++) {
        const fmt *f = &fmts[iter % NFMTS];
        size_t blocks = 1 + rng() % 4, n = blocks * f->elements;
        uint8_t *bytes = malloc(blocks * f->bytes);
        float *got = malloc(n * sizeof *got);
        assert_true(bytes && got);
        for (size_t k = 0; k < blocks * f->bytes; k++) bytes[k] = (uint8_t)rng();
        for (size_t b = 0; b < blocks; b++) {
            uint8_t *blk = bytes + b * f->bytes;
            put16(blk + f->d_at, (uint16_t)(rng() % 0x7C00 | (rng() & 0x8000)));
            if (f->b_at >= 0) put16(blk + f->b_at, (uint16_t)(rng() % 0x7C00 | (rng() & 0x8000)));
        }
        dn_coded_row r;
        row_alloc(&r, n, f->elements);
        assert_int_equal(dn_read_row(f->type, bytes, n, &r, NULL), DN_OK);
        assert_int_equal(dn_row_to_f32(f->type, bytes, n, got, NULL), DN_OK);
        for (size_t e = 0; e < n; e++) {
            const dn_segment *sg = &r.segments[e / f->elements];
            dn_term t[2] = {{(int64_t)sg->a.sig * r.coef[e], sg->a.exp, 0},
                            {(int64_t)sg->b.sig * r.offs[e], sg->b.exp, 0}};
            float want;
            assert_int_equal(dn_exact_sum(t, 2, &want), DN_OK);
            if (tbits(got[e]) != tbits(want))
                fail_msg("%s element %zu: %a, its exact sum %a", f->name, e, (double)got[e],
                         (double)want);
        }
        values += n;
        row_free(&r);
        free(bytes);
        free(got);
    }
    printf("  %zu weights equal to their exact sums\n", values);
}

/* The widened types, the statuses, and a row stopped at an unreadable block. */
static void row_to_f32_arguments(void **state)
{
    (void)state;
    const uint8_t h[8] = {0x00, 0x3C, 0x01, 0x80,
                          0x00, 0x7E, 0xFF, 0x7B}; /* 1, -2^-24, NaN, 65504 */
    float out[4];
    assert_int_equal(dn_row_to_f32(DN_TYPE_F16, h, 4, out, NULL), DN_OK);
    assert_true(out[0] == 1.0f && out[1] == -0x1p-24f && tbits(out[2]) == 0x7FC00000u &&
                out[3] == 65504.0f);
    const uint8_t bf[4] = {0x80, 0x3F, 0x49, 0xC0}; /* 1, -3.140625 */
    assert_int_equal(dn_row_to_f32(DN_TYPE_BF16, bf, 2, out, NULL), DN_OK);
    assert_true(out[0] == 1.0f && out[1] == -3.140625f);
    const uint8_t f32[4] = {0x01, 0x00, 0x80, 0x7F}; /* a signalling NaN's bits, copied */
    assert_int_equal(dn_row_to_f32(DN_TYPE_F32, f32, 1, out, NULL), DN_OK);
    assert_int_equal(tbits(out[0]), 0x7F800001u);

    uint8_t q[4 * 34] = {0};
    for (int b = 0; b < 4; b++) {
        put16(q + 34 * b, 0x3C00);
        memset(q + 34 * b + 2, 3, 32);
    }
    float row[128];
    assert_int_equal(dn_row_to_f32((dn_type)4, q, 32, row, NULL), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_row_to_f32((dn_type)200, q, 32, row, NULL), DN_ERR_UNSUPPORTED_TYPE);
    assert_int_equal(dn_row_to_f32(DN_TYPE_Q8_0, q, 33, row, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_row_to_f32(DN_TYPE_Q8_0, NULL, 32, row, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_row_to_f32(DN_TYPE_Q8_0, q, 32, NULL, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_row_to_f32(DN_TYPE_Q8_0, NULL, 0, NULL, NULL), DN_OK);
    put16(q + 34 * 2, 0x7C00);
    for (int i = 0; i < 128; i++) row[i] = -1.0f;
    size_t bad = 99;
    assert_int_equal(dn_row_to_f32(DN_TYPE_Q8_0, q, 128, row, &bad), DN_ERR_UNREADABLE_BLOCK);
    assert_int_equal(bad, 2);
    for (int i = 0; i < 64; i++) assert_true(row[i] == 3.0f);
    for (int i = 64; i < 128; i++) assert_true(row[i] == -1.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables),
        cmocka_unit_test(arguments),
        cmocka_unit_test(every_binary16_scale),
        cmocka_unit_test(hand_32_element_blocks),
        cmocka_unit_test(hand_super_blocks),
        cmocka_unit_test(unreadable_blocks),
        cmocka_unit_test(random_bytes),
        cmocka_unit_test(row_to_f32_definition),
        cmocka_unit_test(row_to_f32_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
