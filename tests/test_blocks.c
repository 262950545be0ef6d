/*
 * The block formats (decodenum/blocks.h): every row of ../shared/oracle's
 * ggml-blocks.bin (written and dequantized by the real ggml) read and
 * checked value by value in exact integer arithmetic; the coefficient bound
 * over every code and sub-block scale each format can store, through an
 * encoder written here from the formats' definitions; unreadable blocks;
 * hand-built blocks; random bytes; the type tables and argument checks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"
#include "oracle.h"
#include "testutil.h"

/* ---- the formats as this test knows them ------------------------------------ */

/* How ggml's dequantize_row_<type> evaluates a weight in f32, in terms of
   the coded row (a, coef, b, offs):
   G_CODE_D   code * d, one exact product                    (Q4_0 Q5_0 Q8_0 IQ4_NL)
   G_SUBSCALE (d * sc) * q with a signed sub-block scale; both products are
              exact (|sig d| <= 2047 has 11 bits, |sc| 6 or 8, |q| 3 or 7:
              at most 24 bits), so it is d * coef     (Q3_K Q6_K IQ4_XS)
   G_ADD_MIN  code * d + m: the product exact (11 + 5 bits), the add rounds once  (Q4_1 Q5_1)
   G_SUB_MIN  (d * sc) * q - dmin * m: all three products exact (at most
              11 + 6 + 5 bits), the subtraction rounds once          (Q2_K Q4_K Q5_K) */
enum ggml_eval { G_CODE_D, G_SUBSCALE, G_ADD_MIN, G_SUB_MIN };

typedef struct fmt {
    dn_type type;
    const char *name; /* ggml's */
    size_t elements, bytes;
    int d_at, b_at;   /* byte offsets of the binary16 scales d and m/dmin (-1: none) */
    enum ggml_eval eval;
    int coef_min, coef_max, offs_min, offs_max; /* over every storable block */
} fmt;

/* The ranges are derived by hand from each format's definition (see
   docs/blocks.md): e.g. Q6_K sc in -128..127 times q - 32 in -32..31 spans
   -128*31 = -3968, 127*-32 = -4064 .. -128*-32 = 4096. */
static const fmt fmts[] = {
    {DN_TYPE_Q4_0, "q4_0", 32, 18, 0, -1, G_CODE_D, -8, 7, 0, 0},
    {DN_TYPE_Q4_1, "q4_1", 32, 20, 0, 2, G_ADD_MIN, 0, 15, 1, 1},
    {DN_TYPE_Q5_0, "q5_0", 32, 22, 0, -1, G_CODE_D, -16, 15, 0, 0},
    {DN_TYPE_Q5_1, "q5_1", 32, 24, 0, 2, G_ADD_MIN, 0, 31, 1, 1},
    {DN_TYPE_Q8_0, "q8_0", 32, 34, 0, -1, G_CODE_D, -128, 127, 0, 0},
    {DN_TYPE_Q2_K, "q2_K", 256, 84, 80, 82, G_SUB_MIN, 0, 45, -15, 0},
    {DN_TYPE_Q3_K, "q3_K", 256, 110, 108, -1, G_SUBSCALE, -124, 128, 0, 0},
    {DN_TYPE_Q4_K, "q4_K", 256, 144, 0, 2, G_SUB_MIN, 0, 945, -63, 0},
    {DN_TYPE_Q5_K, "q5_K", 256, 176, 0, 2, G_SUB_MIN, 0, 1953, -63, 0},
    {DN_TYPE_Q6_K, "q6_K", 256, 210, 208, -1, G_SUBSCALE, -4064, 4096, 0, 0},
    {DN_TYPE_IQ4_NL, "iq4_nl", 32, 18, 0, -1, G_CODE_D, -127, 113, 0, 0},
    {DN_TYPE_IQ4_XS, "iq4_xs", 256, 136, 0, -1, G_SUBSCALE, -3937, 4064, 0, 0},
};
#define NFMTS (sizeof fmts / sizeof fmts[0])

static const fmt *fmt_of(dn_type type)
{
    for (size_t i = 0; i < NFMTS; i++)
        if (fmts[i].type == type) return &fmts[i];
    return NULL;
}

static int f16_finite(uint16_t h) { return (h & 0x7C00u) != 0x7C00u; }

static uint64_t rng_state;
static uint64_t rng(void) { return xorshift64s(&rng_state); } /* deterministic */

static void row_alloc(dn_coded_row *r, size_t n, size_t elements)
{
    r->n = n;
    r->nsegments = 0;
    r->coef = malloc((n ? n : 1) * sizeof *r->coef);
    r->offs = malloc((n ? n : 1) * sizeof *r->offs);
    r->segments = malloc((n / elements + 1) * sizeof *r->segments);
    assert_non_null(r->coef);
    assert_non_null(r->offs);
    assert_non_null(r->segments);
}

static void row_free(dn_coded_row *r)
{
    free(r->coef);
    free(r->offs);
    free(r->segments);
}

static float scale_value(dn_scale s) { return ldexpf((float)s.sig, s.exp); }

/* Checks the invariants of a readable coded row. */
static void check_row_shape(const fmt *f, const dn_coded_row *r, size_t blocks)
{
    assert_int_equal(r->nsegments, blocks);
    for (size_t i = 0; i < blocks; i++) {
        const dn_segment *s = &r->segments[i];
        assert_int_equal(s->first, i * f->elements);
        assert_int_equal(s->count, f->elements);
        const dn_scale sc[2] = {s->a, s->b};
        for (int k = 0; k < 2; k++) {
            assert_true(sc[k].sig >= -2047 && sc[k].sig <= 2047);
            if (sc[k].sig == 0) {
                assert_int_equal(sc[k].exp, 0);
            } else {
                assert_true(sc[k].exp >= -24 && sc[k].exp <= 5);
                int32_t mag = sc[k].sig < 0 ? -sc[k].sig : sc[k].sig;
                assert_true(mag >= 1024 || sc[k].exp == -24);
            }
        }
        if (f->b_at < 0) {
            assert_int_equal(s->b.sig, 0);
        }
    }
    for (size_t e = 0; e < r->n; e++) {
        assert_true(r->coef[e] >= -DN_COEF_BOUND && r->coef[e] <= DN_COEF_BOUND);
        assert_true(r->offs[e] >= -DN_COEF_BOUND && r->offs[e] <= DN_COEF_BOUND);
        assert_true(r->coef[e] >= f->coef_min && r->coef[e] <= f->coef_max);
        assert_true(r->offs[e] >= f->offs_min && r->offs[e] <= f->offs_max);
    }
}

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
    const int unknown[] = {4, 5, 9, 15, 16, 17, 18, 19, 21, 22, 24, 25, 26, 27, 28, 29, 31, 34, 35, 39, 40, -1, 1000};
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
    const dn_type unsupported[] = {DN_TYPE_F32, DN_TYPE_F16, DN_TYPE_BF16, (dn_type)9, (dn_type)1000};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        r.n = 32;
        assert_int_equal(dn_read_row(unsupported[i], bytes, 32, &r, &bad), DN_ERR_UNSUPPORTED_TYPE);
    }
    /* n not a whole number of blocks. */
    const size_t badn[] = {1, 16, 31, 33};
    for (size_t i = 0; i < 4; i++) {
        r.n = badn[i];
        assert_int_equal(dn_read_row(DN_TYPE_Q4_0, bytes, badn[i], &r, &bad), DN_ERR_INVALID_ARGUMENT);
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

static void read_one(dn_type type, const uint8_t *blk, dn_coded_row *r)
{
    const fmt *f = fmt_of(type);
    r->n = f->elements;
    size_t bad = 12345;
    assert_int_equal(dn_read_row(type, blk, f->elements, r, &bad), DN_OK);
    assert_int_equal(bad, 12345);
    check_row_shape(f, r, 1);
}

#define EXPECT_SCALE(s, want_sig, want_exp)          \
    do {                                             \
        assert_int_equal((s).sig, (want_sig));       \
        assert_int_equal((s).exp, (want_exp));       \
    } while (0)
#define EXPECT_EL(r, e, want_coef, want_offs)        \
    do {                                             \
        assert_int_equal((r).coef[e], (want_coef));  \
        assert_int_equal((r).offs[e], (want_offs));  \
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

static void hand_super_blocks(void **state)
{
    (void)state;
    dn_coded_row r;
    row_alloc(&r, 256, 256);

    /* Q2_K: d = 1.0 @80, dmin = 0.5 (0x3800: 1024 * 2^-11) @82.
       scales[j] = sc | m << 4 for sub-block j = e / 16:
         j 0: 0x21 (sc 1, m 2); j 2: 0x05; j 4: 0x47 (sc 7, m 4); j 6: 0x0F; j 9: 0xF3.
       qs[0] = 0xE4 (binary 11 10 01 00) holds, by shift 2 * ((e % 128) / 32),
       element 0 (q 0), 32 (q 1), 64 (q 2), 96 (q 3). qs[48] = 0x03 holds
       element 128 + 16 = 144 (q 3, sub-block 9); element 176 takes its bits
       2..3 (q 0, sub-block 11: scale byte 0). */
    uint8_t q2[84] = {0};
    q2[0] = 0x21, q2[2] = 0x05, q2[4] = 0x47, q2[6] = 0x0F, q2[9] = 0xF3;
    q2[16 + 0] = 0xE4;
    q2[16 + 48] = 0x03;
    put16(q2 + 80, 0x3C00);
    put16(q2 + 82, 0x3800);
    read_one(DN_TYPE_Q2_K, q2, &r);
    EXPECT_SCALE(r.segments[0].a, 1024, -10);
    EXPECT_SCALE(r.segments[0].b, 1024, -11);
    EXPECT_EL(r, 0, 0, -2);
    EXPECT_EL(r, 32, 5 * 1, 0);
    EXPECT_EL(r, 64, 7 * 2, -4);
    EXPECT_EL(r, 96, 15 * 3, 0);
    EXPECT_EL(r, 144, 3 * 3, -15);
    EXPECT_EL(r, 176, 0, 0);

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
    uint8_t q3[110] = {0};
    q3[0] = 0x05;
    q3[32 + 0] = 0x30;
    q3[32 + 48] = 0x10;
    q3[96 + 4] = 0x01, q3[96 + 8] = 0x08;
    q3[96 + 5] = 0xF0, q3[96 + 9] = 0xC0;
    put16(q3 + 108, 0x3C00);
    read_one(DN_TYPE_Q3_K, q3, &r);
    EXPECT_SCALE(r.segments[0].a, 1024, -10);
    EXPECT_SCALE(r.segments[0].b, 0, 0);
    EXPECT_EL(r, 0, 0, 0);
    EXPECT_EL(r, 64, 3, 0);
    EXPECT_EL(r, 208, -93, 0);
    EXPECT_EL(r, 32, 128, 0);

    /* Q4_K: d = 1.0, dmin = 2^-14 (0x0400: 1024 * 2^-24, the least normal).
       Scales s[] @4: sub-block 0: sc = s[0] & 63 = 63, m = s[4] & 63 = 5;
       sub-block 4: sc = (s[8] & 15) | (s[0] >> 6) << 4 = 10,
                    m = (s[8] >> 4) | (s[4] >> 6) << 4 = 2 | 16 = 18.
       qs @16: qs[0] = 0x7F: element 0 is 15, element 32 is 7 (sub-block 1,
       sc 0, m 0); qs[64] = 0x03: element 128 is 3 (sub-block 4). */
    uint8_t q4[144] = {0};
    put16(q4, 0x3C00);
    put16(q4 + 2, 0x0400);
    q4[4 + 0] = 0x3F, q4[4 + 4] = 0x45, q4[4 + 8] = 0x2A;
    q4[16 + 0] = 0x7F;
    q4[16 + 64] = 0x03;
    read_one(DN_TYPE_Q4_K, q4, &r);
    EXPECT_SCALE(r.segments[0].a, 1024, -10);
    EXPECT_SCALE(r.segments[0].b, 1024, -24);
    EXPECT_EL(r, 0, 63 * 15, -5);
    EXPECT_EL(r, 7, 0, -5);
    EXPECT_EL(r, 32, 0, 0);
    EXPECT_EL(r, 128, 30, -18);
    EXPECT_EL(r, 160, 0, 0);

    /* Q5_K: the same scales; qh @16: qh[0] = 0x11 is the fifth bit of
       element 0 (bit 0) and element 128 (bit 4); qs @48 as Q4_K's. */
    uint8_t q5[176] = {0};
    put16(q5, 0x3C00);
    put16(q5 + 2, 0x0400);
    q5[4 + 0] = 0x3F, q5[4 + 4] = 0x45, q5[4 + 8] = 0x2A;
    q5[16 + 0] = 0x11;
    q5[48 + 0] = 0x7F;
    q5[48 + 64] = 0x03;
    read_one(DN_TYPE_Q5_K, q5, &r);
    EXPECT_EL(r, 0, 63 * 31, -5);
    EXPECT_EL(r, 32, 0, 0);
    EXPECT_EL(r, 128, 10 * 19, -18);
    EXPECT_EL(r, 1, 0, -5);

    /* Q6_K: d = 1.0 @208; scales int8 @192: j 0 = -128, j 5 = 3, j 15 = 127.
         e 0: all bits 0 -> q 0 -> -128 * -32 = 4096 (the bound)
         e 255 (h 1, k 3, l 31): low ql[64 + 32 + 31] >> 4 = 15,
               high (qh[32 + 31] >> 6) & 3 = 3 -> q 63 -> 127 * 31 = 3937
         e 80 (h 0, k 2, l 16): low ql[16] >> 4 = 5, high (qh[16] >> 4) & 3 = 2
               -> q 37 -> 3 * 5 = 15
         e 16: sub-block 1, scale 0 -> 0 */
    uint8_t q6[210] = {0};
    q6[127] = 0xF0, q6[128 + 63] = 0xC0;
    q6[16] = 0x50, q6[128 + 16] = 0x20;
    q6[192 + 0] = 0x80, q6[192 + 5] = 0x03, q6[192 + 15] = 0x7F;
    put16(q6 + 208, 0x3C00);
    read_one(DN_TYPE_Q6_K, q6, &r);
    EXPECT_EL(r, 0, 4096, 0);
    EXPECT_EL(r, 255, 3937, 0);
    EXPECT_EL(r, 80, 15, 0);
    EXPECT_EL(r, 16, 0, 0);

    /* IQ4_XS: d = 1.0; scales_h @2 = 0xC008, scales_l @4:
         sub-block 0: (scales_l[0] & 15) | (h & 3) << 4 = 0 -> -32
         sub-block 1: (scales_l[0] >> 4) | ((h >> 2) & 3) << 4 = 32 -> 0
         sub-block 7: (scales_l[3] >> 4 = 15) | ((h >> 14) & 3 = 3) << 4 = 63 -> 31
       qs @8: qs[0] = 0xF0: element 0 is level 0 (-127), element 16 level
       15 (113); qs[112] = 0x0F: element 224 is level 15; element 255 is
       qs[127] >> 4 = level 0. */
    uint8_t xs[136] = {0};
    put16(xs, 0x3C00);
    put16(xs + 2, 0xC008);
    xs[4 + 3] = 0xF0;
    xs[8 + 0] = 0xF0;
    xs[8 + 112] = 0x0F;
    read_one(DN_TYPE_IQ4_XS, xs, &r);
    EXPECT_EL(r, 0, -32 * -127, 0);
    EXPECT_EL(r, 16, -32 * 113, 0);
    EXPECT_EL(r, 32, 0, 0);
    EXPECT_EL(r, 224, 31 * 113, 0);
    EXPECT_EL(r, 255, 31 * -127, 0);
    row_free(&r);
}

/* ---- (b) the bound, over every code and sub-block scale ----------------------- */

/* An encoder written from each format's definition (docs/blocks.md), the
   inverse of the reader: it stores a raw code at element e and a raw scale
   (and min) for sub-block j. Raw values are what the block stores:
   Q3_K's code is its 2 low bits | its high bit << 2, Q6_K's scale an int8,
   IQ4_* codes are level indices. */
typedef struct synth {
    dn_type type;
    int sub;                  /* elements per sub-block scale (the block when none) */
    int sc_lo, sc_hi, m_lo, m_hi, q_lo, q_hi;
    void (*put_q)(uint8_t *blk, int e, int q);
    void (*put_s)(uint8_t *blk, int j, int sc, int m);
    int (*coef)(int sc, int q);
    int (*offs)(int m);
} synth;

static const int levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static void set_bits(uint8_t *p, int bit, int width, int v)
{
    int mask = (1 << width) - 1;
    p[bit / 8] = (uint8_t)((p[bit / 8] & ~(mask << bit % 8)) | (v & mask) << bit % 8);
}
/* 32 codes as nibbles: element e < 16 the low nibble of byte e, else the high nibble of byte e - 16. */
static void nib32(uint8_t *qs, int e, int q) { set_bits(qs + e % 16, e < 16 ? 0 : 4, 4, q); }

static void q40_q(uint8_t *b, int e, int q) { nib32(b + 2, e, q); }
static void q41_q(uint8_t *b, int e, int q) { nib32(b + 4, e, q); }
static void q50_q(uint8_t *b, int e, int q) { nib32(b + 6, e, q & 15); set_bits(b + 2, e, 1, q >> 4); }
static void q51_q(uint8_t *b, int e, int q) { nib32(b + 8, e, q & 15); set_bits(b + 4, e, 1, q >> 4); }
static void q80_q(uint8_t *b, int e, int q) { b[2 + e] = (uint8_t)q; }
static void q2k_q(uint8_t *b, int e, int q) { set_bits(b + 16 + 32 * (e / 128) + e % 32, 2 * ((e % 128) / 32), 2, q); }
static void q3k_q(uint8_t *b, int e, int q)
{
    set_bits(b + 32 + 32 * (e / 128) + e % 32, 2 * ((e % 128) / 32), 2, q & 3);
    set_bits(b + e % 32, e / 32, 1, q >> 2);
}
static void q4k_nib(uint8_t *qs, int e, int q) { set_bits(qs + 32 * (e / 64) + e % 32, e % 64 < 32 ? 0 : 4, 4, q); }
static void q4k_q(uint8_t *b, int e, int q) { q4k_nib(b + 16, e, q); }
static void q5k_q(uint8_t *b, int e, int q) { q4k_nib(b + 48, e, q & 15); set_bits(b + 16 + e % 32, e / 32, 1, q >> 4); }
static void q6k_q(uint8_t *b, int e, int q)
{
    int h = e / 128, k = (e % 128) / 32, l = e % 32;
    set_bits(b + 64 * h + 32 * (k & 1) + l, 4 * (k >> 1), 4, q & 15);
    set_bits(b + 128 + 32 * h + l, 2 * k, 2, q >> 4);
}
static void xs_q(uint8_t *b, int e, int q) { set_bits(b + 8 + 16 * (e / 32) + e % 16, e % 32 < 16 ? 0 : 4, 4, q); }

static void none_s(uint8_t *b, int j, int sc, int m) { (void)b, (void)j, (void)sc, (void)m; }
static void q2k_s(uint8_t *b, int j, int sc, int m) { b[j] = (uint8_t)(sc | m << 4); }
static void q3k_s(uint8_t *b, int j, int sc, int m)
{
    (void)m;
    uint8_t *s = b + 96;
    set_bits(j < 8 ? s + j : s + j - 8, j < 8 ? 0 : 4, 4, sc & 15);
    set_bits(s + 8 + j % 4, 2 * (j / 4), 2, sc >> 4);
}
static void k_s(uint8_t *s, int j, int sc, int m)
{
    if (j < 4) {
        set_bits(s + j, 0, 6, sc);
        set_bits(s + j + 4, 0, 6, m);
    } else {
        s[j + 4] = (uint8_t)((sc & 15) | (m & 15) << 4);
        set_bits(s + j - 4, 6, 2, sc >> 4);
        set_bits(s + j, 6, 2, m >> 4);
    }
}
static void q4k_s(uint8_t *b, int j, int sc, int m) { k_s(b + 4, j, sc, m); }
static void q6k_s(uint8_t *b, int j, int sc, int m) { (void)m; b[192 + j] = (uint8_t)sc; }
static void xs_s(uint8_t *b, int j, int sc, int m)
{
    (void)m;
    set_bits(b + 4 + j / 2, 4 * (j % 2), 4, sc & 15);
    set_bits(b + 2 + j / 4, 2 * (j % 4), 2, sc >> 4);
}

static int c_minus8(int sc, int q) { (void)sc; return q - 8; }
static int c_plain(int sc, int q) { (void)sc; return q; }
static int c_minus16(int sc, int q) { (void)sc; return q - 16; }
static int c_level(int sc, int q) { (void)sc; return levels[q]; }
static int c_times(int sc, int q) { return sc * q; }
static int c_q3k(int sc, int q) { return (sc - 32) * ((q & 3) - (q >> 2 ? 0 : 4)); }
static int c_q6k(int sc, int q) { return sc * (q - 32); }
static int c_xs(int sc, int q) { return (sc - 32) * levels[q]; }
static int o_zero(int m) { (void)m; return 0; }
static int o_one(int m) { (void)m; return 1; }
static int o_neg(int m) { return -m; }

static const synth synths[] = {
    {DN_TYPE_Q4_0, 32, 0, 0, 0, 0, 0, 15, q40_q, none_s, c_minus8, o_zero},
    {DN_TYPE_Q4_1, 32, 0, 0, 0, 0, 0, 15, q41_q, none_s, c_plain, o_one},
    {DN_TYPE_Q5_0, 32, 0, 0, 0, 0, 0, 31, q50_q, none_s, c_minus16, o_zero},
    {DN_TYPE_Q5_1, 32, 0, 0, 0, 0, 0, 31, q51_q, none_s, c_plain, o_one},
    {DN_TYPE_Q8_0, 32, 0, 0, 0, 0, -128, 127, q80_q, none_s, c_plain, o_zero},
    {DN_TYPE_Q2_K, 16, 0, 15, 0, 15, 0, 3, q2k_q, q2k_s, c_times, o_neg},
    {DN_TYPE_Q3_K, 16, 0, 63, 0, 0, 0, 7, q3k_q, q3k_s, c_q3k, o_zero},
    {DN_TYPE_Q4_K, 32, 0, 63, 0, 63, 0, 15, q4k_q, q4k_s, c_times, o_neg},
    {DN_TYPE_Q5_K, 32, 0, 63, 0, 63, 0, 31, q5k_q, q4k_s, c_times, o_neg},
    {DN_TYPE_Q6_K, 16, -128, 127, 0, 0, 0, 63, q6k_q, q6k_s, c_q6k, o_zero},
    {DN_TYPE_IQ4_NL, 32, 0, 0, 0, 0, 0, 15, q40_q, none_s, c_level, o_zero},
    {DN_TYPE_IQ4_XS, 32, 0, 63, 0, 0, 0, 15, xs_q, xs_s, c_xs, o_zero},
};

/* A scrambled start per element, so that elements 16, 32, 64 or 128 apart
   (where a misread layout would look) hold different codes. */
static int scramble(int e) { return (int)(((uint32_t)e * 2654435761u) >> 11 & 0xFFFF); }

/* For each format: blocks t = 0, 1, ... give sub-block j the raw scale
   sc_lo + (t + 5j) % #scales and min m_lo + (t + 3j) % #mins, and for each
   shift u over every code, element e the code q_lo + (scramble(e) + u) %
   #codes. So every element position meets every code, every sub-block every
   scale and min (each sub-block of a block a different one), and every
   sub-block every (scale, code) pair. Each element read
   must be the definition's coef and offs, within DN_COEF_BOUND; the
   extremes met must be the format's range, and the largest magnitude over
   all formats must be DN_COEF_BOUND itself (the bound is tight). */
static void coefficient_bound(void **state)
{
    (void)state;
    int overall = 0;
    for (size_t i = 0; i < sizeof synths / sizeof synths[0]; i++) {
        const synth *sy = &synths[i];
        const fmt *f = fmt_of(sy->type);
        int nsc = sy->sc_hi - sy->sc_lo + 1, nm = sy->m_hi - sy->m_lo + 1, nq = sy->q_hi - sy->q_lo + 1;
        int nt = nsc > nm ? nsc : nm;
        uint8_t blk[256];
        dn_coded_row r;
        row_alloc(&r, f->elements, f->elements);
        int cmin = 1 << 20, cmax = -(1 << 20), omin = 1 << 20, omax = -(1 << 20);
        size_t checked = 0;
        for (int t = 0; t < nt; t++) {
            for (int u = 0; u < nq; u++) {
                memset(blk, 0, sizeof blk);
                put16(blk + f->d_at, 0x3C00);
                if (f->b_at >= 0) put16(blk + f->b_at, 0x3C00);
                for (int j = 0; j < (int)f->elements / sy->sub; j++)
                    sy->put_s(blk, j, sy->sc_lo + (t + 5 * j) % nsc, sy->m_lo + (t + 3 * j) % nm);
                for (int e = 0; e < (int)f->elements; e++) sy->put_q(blk, e, sy->q_lo + (scramble(e) + u) % nq);
                read_one(sy->type, blk, &r);
                for (int e = 0; e < (int)f->elements; e++) {
                    int j = e / sy->sub;
                    int sc = sy->sc_lo + (t + 5 * j) % nsc, m = sy->m_lo + (t + 3 * j) % nm;
                    int q = sy->q_lo + (scramble(e) + u) % nq;
                    if (r.coef[e] != sy->coef(sc, q) || r.offs[e] != sy->offs(m)) {
                        printf("  %s element %d (scale %d, min %d, code %d): coef %d offs %d, want %d %d\n",
                               f->name, e, sc, m, q, r.coef[e], r.offs[e], sy->coef(sc, q), sy->offs(m));
                        fail();
                    }
                    assert_true(abs(r.coef[e]) <= DN_COEF_BOUND && abs(r.offs[e]) <= DN_COEF_BOUND);
                    cmin = r.coef[e] < cmin ? r.coef[e] : cmin;
                    cmax = r.coef[e] > cmax ? r.coef[e] : cmax;
                    omin = r.offs[e] < omin ? r.offs[e] : omin;
                    omax = r.offs[e] > omax ? r.offs[e] : omax;
                    checked++;
                }
            }
        }
        printf("  %-6s %7zu elements: coef %5d..%4d, offs %3d..%d\n", f->name, checked, cmin, cmax, omin, omax);
        assert_int_equal(cmin, f->coef_min);
        assert_int_equal(cmax, f->coef_max);
        assert_int_equal(omin, f->offs_min);
        assert_int_equal(omax, f->offs_max);
        int big = abs(cmin) > cmax ? abs(cmin) : cmax;
        overall = big > overall ? big : overall;
        overall = abs(omin) > overall ? abs(omin) : overall;
        row_free(&r);
    }
    assert_int_equal(overall, DN_COEF_BOUND);
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
                assert_int_equal(dn_read_row(f->type, bytes, n, &r, &where), DN_ERR_UNREADABLE_BLOCK);
                assert_int_equal(where, 2);
                /* the first one is named; NULL bad_block is allowed */
                put16(bytes + 3 * f->bytes + f->d_at, 0x7C00);
                assert_int_equal(dn_read_row(f->type, bytes, n, &r, &where), DN_ERR_UNREADABLE_BLOCK);
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
            if (f->b_at >= 0) finite = finite && f16_finite((uint16_t)(blk[f->b_at] | blk[f->b_at + 1] << 8));
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

/* ---- (a) the ggml oracle ------------------------------------------------------ */

/* ggml's f32 for one weight, evaluated as dequantize_row_<type> does, from
   the coded row (see enum ggml_eval; binary32 operations, no contraction). */
static float ggml_value(enum ggml_eval ev, const dn_segment *s, int coef, int offs)
{
    float a = scale_value(s->a), b = scale_value(s->b);
    switch (ev) {
    case G_CODE_D: return (float)coef * a;
    case G_SUBSCALE: return a * (float)coef;
    case G_ADD_MIN: return (float)coef * a + b * (float)offs;
    case G_SUB_MIN: return a * (float)coef - b * (float)-offs;
    }
    return 0;
}

/* The exact value of a*coef + b*offs in units of 2^-24: every binary16 scale
   is sig * 2^exp with exp >= -24 and |sig| <= 2047, exp <= 5, and
   |coef|, |offs| <= 4096 < 2^13, so each term is an integer below
   2^(11 + 29 + 13) = 2^53 in magnitude and so is the sum: int64 is exact. */
static int64_t exact_units(const dn_segment *s, int coef, int offs)
{
    assert_true(s->a.exp + 24 >= 0 && s->a.exp + 24 <= 29);
    assert_true(s->b.exp + 24 >= 0 && s->b.exp + 24 <= 29);
    return (int64_t)s->a.sig * coef * ((int64_t)1 << (s->a.exp + 24)) +
           (int64_t)s->b.sig * offs * ((int64_t)1 << (s->b.exp + 24));
}

typedef struct tally {
    size_t values, exact, rounded, bit_equal, signed_zeros;
    double worst_ulps; /* largest |exact - ggml| in ulps of ggml's value */
} tally;

/* One oracle row of a type the array reads: read it, and hold every value
   to ggml's. Returns 0 on a mismatch (after printing it). */
static int check_oracle_row(const fmt *f, const uint8_t *bytes, size_t n, const float *want, tally *t)
{
    dn_coded_row r;
    row_alloc(&r, n, f->elements);
    size_t bad = 0;
    dn_status st = dn_read_row(f->type, bytes, n, &r, &bad);
    if (st != DN_OK) {
        printf("  %s: dn_read_row says %s (block %zu)\n", f->name, dn_status_str(st), bad);
        row_free(&r);
        return 0;
    }
    check_row_shape(f, &r, n / f->elements);
    int good = 1;
    int rounds = f->eval == G_ADD_MIN || f->eval == G_SUB_MIN;
    for (size_t e = 0; e < n && good; e++) {
        const dn_segment *s = &r.segments[e / f->elements];
        float g = want[e];
        int64_t x = exact_units(s, r.coef[e], r.offs[e]);
        /* ggml's value in units of 2^-24: an integer below 2^53, because it
           rounds a multiple of 2^-24 to binary32 (where the ulp is below
           2^-24 the multiple is representable and kept). */
        double gu = (double)g * 0x1p24;
        assert_true(isfinite(g) && gu == nearbyint(gu) && fabs(gu) < 0x1p53);
        int64_t gi = (int64_t)gu;
        /* 1. ggml's own f32 expression, from the coded values: bit equal.
              A zero ggml computes as (d * sc) * 0 carries the sign of a
              signed sub-block scale, which coef = sc * q = 0 no longer
              holds; and a zero scale is canonical (+0). Those zeros are
              compared as numbers. */
        float mine = ggml_value(f->eval, s, r.coef[e], r.offs[e]);
        if (tbits(mine) == tbits(g)) {
            t->bit_equal++;
        } else {
            int zero_sign = mine == 0 && g == 0 &&
                            (f->eval == G_SUBSCALE || s->a.sig == 0 || s->b.sig == 0);
            if (!zero_sign) {
                printf("  %s element %zu: ggml %a (0x%08x), its expression from the coded row %a (0x%08x)\n",
                       f->name, e, (double)g, tbits(g), (double)mine, tbits(mine));
                good = 0;
            }
            t->signed_zeros++;
        }
        /* 2. The exact value: equal to ggml's f32 where ggml's arithmetic
              is exact; elsewhere ggml's value is the exact value rounded
              once to nearest even: |exact - ggml| <= ulp(ggml) / 2. */
        t->values++;
        if (x == gi) {
            t->exact++;
            continue;
        }
        int ex;
        frexpf(g, &ex);
        double ulp_units = ldexp(1.0, ex); /* ulp(g) = 2^(ex - 24), in units of 2^-24 */
        double diff = fabs((double)(x - gi));
        float nearest = (float)((double)x * 0x1p-24); /* exact double, one rounding */
        if (!rounds || tbits(nearest) != tbits(g) || 2 * diff > ulp_units) {
            printf("  %s element %zu: exact %.17g, ggml %a, nearest %a\n", f->name, e,
                   (double)x * 0x1p-24, (double)g, (double)nearest);
            good = 0;
        }
        t->rounded++;
        if (diff / ulp_units > t->worst_ulps) t->worst_ulps = diff / ulp_units;
    }
    row_free(&r);
    return good;
}

static void print_tally(const char *name, const tally *t)
{
    printf("  %-6s %zu values: exact value = ggml's f32 for %zu, ggml's f32 = the exact value rounded once "
           "(<= 1/2 ulp, largest %.3g ulp) for %zu; ggml's expression from the coded row: %zu bit equal, "
           "%zu zeros equal as numbers\n",
           name, t->values, t->exact, t->worst_ulps, t->rounded, t->bit_equal, t->signed_zeros);
}

/* The oracle's Gaussian rows never make ggml round (d and dmin, d and m
   are close, so d*sc*q and dmin*m fit 24 bits together). Here they do: a
   large d and a tiny m or dmin. The coded row keeps the exact value; the
   checker above accepts ggml's one rounding of it, ties to even included,
   and rejects a value one ulp off. */
static void exact_where_ggml_rounds(void **state)
{
    (void)state;
    /* Q4_1, codes 15, d = 65504 = 2047 * 2^5, m = 2^-24: exactly
       982560 + 2^-24; ggml's 15 * 65504 + 2^-24 rounds to 982560. */
    uint8_t q41[2 * 20] = {0};
    put16(q41, 0x7BFF);
    put16(q41 + 2, 0x0001);
    memset(q41 + 4, 0xFF, 16);
    /* block 1: codes 2, d = 2^15 (0x7800): 65536 plus m = 3 * 2^-8 (0x2200),
       1.5 ulp of 65536: a tie, to the even 65536 + 2^-6. */
    put16(q41 + 20, 0x7800);
    put16(q41 + 22, 0x2200);
    memset(q41 + 24, 0x22, 16);
    float want[256];
    for (int e = 0; e < 32; e++) want[e] = 982560.0f;
    for (int e = 32; e < 64; e++) want[e] = 65536.0f + 0x1p-6f;
    dn_coded_row r;
    row_alloc(&r, 64, 32);
    read_one(DN_TYPE_Q4_1, q41, &r);
    assert_true(exact_units(&r.segments[0], r.coef[0], r.offs[0]) == ((int64_t)982560 << 24) + 1);
    assert_int_equal(dn_read_row(DN_TYPE_Q4_1, q41, 64, &(dn_coded_row){r.coef, r.offs, r.segments, 64, 0}, NULL), DN_OK);
    assert_true(exact_units(&r.segments[1], r.coef[32], r.offs[32]) == ((int64_t)65536 << 24) + (3 << 16));
    tally t = {0};
    assert_true(check_oracle_row(fmt_of(DN_TYPE_Q4_1), q41, 64, want, &t));
    assert_int_equal(t.rounded, 64);
    assert_int_equal(t.bit_equal, 64);
    assert_true(t.worst_ulps == 0.5);
    print_tally("q4_1*", &t);
    want[40] = nextafterf(want[40], 0.0f);
    printf("  (a value one ulp off must be reported:)\n");
    assert_false(check_oracle_row(fmt_of(DN_TYPE_Q4_1), q41, 64, want, &t));
    row_free(&r);

    /* Q4_K, every scale and min 63, codes 15, d = 65504, dmin = 2^-24:
       exactly 65504 * 945 - 63 * 2^-24; ggml's d1 * q - m1 rounds to
       61901280 (ulp 4). */
    uint8_t q4k[144];
    memset(q4k, 0xFF, sizeof q4k);
    put16(q4k, 0x7BFF);
    put16(q4k + 2, 0x0001);
    for (int e = 0; e < 256; e++) want[e] = 61901280.0f;
    row_alloc(&r, 256, 256);
    read_one(DN_TYPE_Q4_K, q4k, &r);
    assert_true(exact_units(&r.segments[0], r.coef[0], r.offs[0]) == ((int64_t)61901280 << 24) - 63);
    memset(&t, 0, sizeof t);
    assert_true(check_oracle_row(fmt_of(DN_TYPE_Q4_K), q4k, 256, want, &t));
    assert_int_equal(t.rounded, 256);
    print_tally("q4_K*", &t);
    row_free(&r);

    /* Q2_K, sc 15, m 15, codes 3, d = 2^-24, dmin = 65504: exactly
       45 * 2^-24 - 982560; ggml's f32 is -982560. */
    uint8_t q2k[84];
    memset(q2k, 0xFF, sizeof q2k);
    put16(q2k + 80, 0x0001);
    put16(q2k + 82, 0x7BFF);
    for (int e = 0; e < 256; e++) want[e] = -982560.0f;
    row_alloc(&r, 256, 256);
    read_one(DN_TYPE_Q2_K, q2k, &r);
    assert_true(exact_units(&r.segments[0], r.coef[0], r.offs[0]) == 45 - ((int64_t)982560 << 24));
    memset(&t, 0, sizeof t);
    assert_true(check_oracle_row(fmt_of(DN_TYPE_Q2_K), q2k, 256, want, &t));
    assert_int_equal(t.rounded, 256);
    print_tally("q2_K*", &t);
    row_free(&r);
}

static void oracle_ggml_blocks(void **state)
{
    (void)state;
    oracle_file f;
    if (!oracle_open(&f, "ggml-blocks.bin")) {
        printf("  oracle %s/ggml-blocks.bin is absent: skipped\n", DN_ORACLE_DIR);
        skip();
    }
    assert_true(oracle_has(&f, 12) && memcmp(f.data, "DNBLKDQ1", 8) == 0);
    f.pos = 8;
    uint32_t types = oracle_u32(&f);
    int all_good = 1;
    size_t types_read = 0;
    for (uint32_t ti = 0; ti < types; ti++) {
        assert_true(oracle_has(&f, 36));
        char name[17] = {0};
        memcpy(name, f.data + f.pos, 16);
        f.pos += 16;
        dn_type id = (dn_type)oracle_u32(&f);
        size_t be = oracle_u32(&f), bb = oracle_u32(&f), rows = oracle_u32(&f), n = oracle_u32(&f);
        size_t row_bytes = n / be * bb;
        assert_true(be > 0 && n % be == 0 && oracle_has(&f, rows * row_bytes + 4 * rows * n));
        const uint8_t *blocks = f.data + f.pos;
        f.pos += rows * row_bytes;
        float *values = malloc(rows * n * sizeof *values);
        assert_non_null(values);
        for (size_t k = 0; k < rows * n; k++) values[k] = oracle_f32(&f);
        /* The tables agree with ggml's for every type the file holds. */
        assert_int_equal(dn_type_block_elements(id), be);
        assert_int_equal(dn_type_block_bytes(id), bb);

        if (dn_reads(id)) {
            const fmt *fm = fmt_of(id);
            assert_non_null(fm);
            assert_string_equal(fm->name, name);
            tally t = {0};
            for (size_t row = 0; row < rows; row++)
                all_good &= check_oracle_row(fm, blocks + row * row_bytes, n, values + row * n, &t);
            print_tally(name, &t);
            /* Where ggml's arithmetic is exact, nothing may differ. */
            if (fm->eval == G_CODE_D || fm->eval == G_SUBSCALE) assert_int_equal(t.rounded, 0);
            if (fm->eval == G_CODE_D) assert_int_equal(t.signed_zeros, 0);
            types_read++;
        } else if (id == DN_TYPE_F16 || id == DN_TYPE_BF16) {
            /* Not read by the array; their values are the stored numbers. */
            float *mine = malloc(rows * n * sizeof *mine);
            assert_non_null(mine);
            if (id == DN_TYPE_F16) {
                assert_int_equal(dn_f16_dequantize_row(blocks, mine, rows * n), DN_OK);
            } else {
                for (size_t k = 0; k < rows * n; k++)
                    mine[k] = tf((uint32_t)(blocks[2 * k] | blocks[2 * k + 1] << 8) << 16);
            }
            size_t same = 0;
            for (size_t k = 0; k < rows * n; k++) same += tbits(mine[k]) == tbits(values[k]);
            printf("  %-6s %zu values: %zu bit equal\n", name, rows * n, same);
            assert_int_equal(same, rows * n);
            free(mine);
        } else {
            printf("  %-6s (id %d) is not a type this library reads: passed over\n", name, (int)id);
        }
        free(values);
    }
    free(f.data);
    assert_true(all_good);
    assert_int_equal(types_read, NFMTS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables),
        cmocka_unit_test(arguments),
        cmocka_unit_test(every_binary16_scale),
        cmocka_unit_test(hand_32_element_blocks),
        cmocka_unit_test(hand_super_blocks),
        cmocka_unit_test(coefficient_bound),
        cmocka_unit_test(unreadable_blocks),
        cmocka_unit_test(random_bytes),
        cmocka_unit_test(exact_where_ggml_rounds),
        cmocka_unit_test(oracle_ggml_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
