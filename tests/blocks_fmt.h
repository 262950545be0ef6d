/* SPDX-License-Identifier: MIT */
/*
 * blocks_fmt.h: the block formats as test_blocks.c and test_blocks_oracle.c
 * know them (their sizes, scale offsets, how ggml evaluates a weight, the
 * coefficient ranges), the suites' generator and the coded-row helpers.
 */
#ifndef DN_TEST_BLOCKS_FMT_H
#define DN_TEST_BLOCKS_FMT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"
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
    int d_at, b_at; /* byte offsets of the binary16 scales d and m/dmin (-1: none) */
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

/* One block read as a row of its type: DN_OK, no bad block, the row's shape. */
static void read_one(dn_type type, const uint8_t *blk, dn_coded_row *r)
{
    const fmt *f = fmt_of(type);
    r->n = f->elements;
    size_t bad = 12345;
    assert_int_equal(dn_read_row(type, blk, f->elements, r, &bad), DN_OK);
    assert_int_equal(bad, 12345);
    check_row_shape(f, r, 1);
}

#endif
