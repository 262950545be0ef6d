/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the prepared activations' products and the repacked
 * matrices: arbitrary bytes read as a matrix of any quantized format (its
 * scales every binary16, infinities and NaNs included), activation columns,
 * a scaling, a word count and row and column ranges, through dn_act_create,
 * dn_act_mat_vec_rows, dn_act_mat_mul_rows, dn_repack, dn_repack_unpack,
 * dn_repacked_mat_vec_rows, dn_repacked_mat_mul_rows, their whole-matrix
 * forms (no pool) and every ISA's kernel tables, against the scalar
 * reference of the plain product.
 *
 * Input layout (missing bytes read as zero):
 *
 *   byte 0   the format: one of the twelve the dn_act products serve
 *   byte 1   bit 0 the scaling (Sub32 / per block), bit 1 the words (one /
 *            two), bits 2-3 the activation's source (0: raw f32 bit
 *            patterns, inf and NaN included; 1: int8 values times 2^k, k
 *            from byte 4; 2: int8 values each times its own power of two,
 *            2^-135 .. 2^119; 3: raw bit patterns with the all-ones
 *            exponent made 0xFE: every finite value, denormals included),
 *            bit 4: every block's binary16 scales made finite (their
 *            all-ones exponents 01111), so whole ranges are compared bit
 *            for bit rather than stopped at an unreadable block; bit 5
 *            an empty row range
 *   byte 2   rows 1..24
 *   byte 3   blocks a row: 1..3 for the 256-element formats, 1..12 else
 *   byte 4   columns 1..3 (bits 0-1), k of source 1 (the rest)
 *   byte 5   r0 (0..rows - 1)
 *   byte 6   r1 (r0 + 1..rows; r0 when bit 5 of byte 1 is set: an empty
 *            range)
 *   byte 7   the column range [c0, c1) of the matrix products (never empty)
 *   then     the weight rows (rows x row bytes, in a buffer of exactly that
 *            size), then the columns: 4 bytes a float (sources 0 and 3) or
 *            1 (source 1) or 2 (source 2).
 *
 * What it aborts on (besides what ASan and UBSan catch):
 *
 *  - dn_act_create: a status other than DN_ERR_NON_FINITE with *bad the
 *    first infinite or NaN element (column by column) or DN_OK.
 *  - repacking: dn_repack_size other than the documented ceil(rows / 8) * 8
 *    rows' bytes; dn_repack or dn_repack_unpack failing; the unpacked matrix
 *    not the plain one byte for byte; a write past the packed buffer (ASan).
 *  - products: for each column, the reference is dn_ref_mat_vec_rows with
 *    the column quantized by dn_quantize (Sub32) or dn_quantize_blocks (per
 *    block, the format's block), as decodenum/dot.h defines the dn_act
 *    products. Every form must give its status and *bad; on DN_OK its bits
 *    for every row of the range; never a write outside the range's rows (or
 *    the column range's). On DN_ERR_UNREADABLE_BLOCK only the status, *bad
 *    and the untouched outputs are compared ("out is then partly written").
 *
 * The harness links the library's sources compiled with the fuzz flags
 * (tests/fuzz/CMakeLists.txt) and reaches the kernel tables through the
 * internal headers, so one process compares every ISA this CPU runs with
 * the reference whatever DECODENUM_ISA says. Build and run:
 * tests/fuzz/README.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum/dot.h"
#include "decodenum/fp32.h"
#include "decodenum/quant.h"
#include "decodenum/repack.h"
#include "bits.h"
#include "dispatch.h"
#include "fuzz_input.h"

#define SENTINEL_OUT 0x7FBADBADu /* a signalling NaN no call may write */
#define SENTINEL_BAD ((size_t)0x5EB5EB5Eu)
#define MAX_COLS 3

#include "../block_scales.h" /* the twelve formats the dn_act products serve */

/* ---- the case ---------------------------------------------------------------- */

typedef struct rp_case {
    dn_type type;
    dn_act_scaling scaling;
    dn_words words;
    int source, k, readable;
    int d_at, b_at;
    size_t be, bb, rows, n, cols, r0, r1, c0, c1;
} rp_case;

static rp_case parse_case(input *in)
{
    uint8_t b0 = byte(in), b1 = byte(in), b2 = byte(in), b3 = byte(in), b4 = byte(in),
            b5 = byte(in), b6 = byte(in), b7 = byte(in);
    rp_case c;
    c.type = block_scales[b0 % NBLOCK_SCALES].type;
    c.d_at = block_scales[b0 % NBLOCK_SCALES].d_at, c.b_at = block_scales[b0 % NBLOCK_SCALES].b_at;
    c.be = dn_type_block_elements(c.type), c.bb = dn_type_block_bytes(c.type);
    c.scaling = (b1 & 1) ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
    c.words = (b1 & 2) ? DN_WORDS_TWO : DN_WORDS_ONE;
    c.source = (b1 >> 2) & 3;
    c.readable = (b1 >> 4) & 1;
    c.rows = 1 + (size_t)b2 % 24;
    c.n = (1 + (size_t)b3 % (c.be == 256 ? 3 : 12)) * c.be;
    c.cols = 1 + (size_t)(b4 & 3) % MAX_COLS;
    c.k = (int)(b4 >> 2) - 40;
    c.r0 = (size_t)b5 % c.rows;
    c.r1 = (b1 & 32) ? c.r0 : c.r0 + 1 + (size_t)b6 % (c.rows - c.r0);
    c.c0 = (size_t)(b7 & 3) % c.cols;
    c.c1 = c.c0 + 1 + (size_t)(b7 >> 2) % (c.cols - c.c0);
    return c;
}

/* The columns (cols x n floats, column c at x + c n) from the input. */
static void read_columns(input *in, const rp_case *c, float *x)
{
    for (size_t i = 0; i < c->cols * c->n; i++) {
        if (c->source == 0) {
            x[i] = f32(in);
        } else if (c->source == 3) {
            uint32_t u = word32(in);
            if ((u & 0x7F800000u) == 0x7F800000u) u &= ~0x00800000u;
            x[i] = dn_from_bits(u);
        } else if (c->source == 1) {
            x[i] = ldexpf((float)(int8_t)byte(in), c->k);
        } else {
            int8_t v = (int8_t)byte(in);
            x[i] = ldexpf((float)v, (int)(byte(in) % 255) - 149 + 14);
        }
    }
}

/* The first infinite or NaN element, or SIZE_MAX. */
static size_t first_non_finite(const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if ((dn_bits(x[i]) & 0x7F800000u) == 0x7F800000u) return i;
    return SIZE_MAX;
}

/* ---- the reference ------------------------------------------------------------ */

/* Column col's reference over rows [r0, r1) into ref (rows floats, the
   sentinel elsewhere): the column quantized as decodenum/dot.h says the
   dn_act products take it, then dn_ref_mat_vec_rows. */
static dn_status reference(const rp_case *c, const uint8_t *w, const float *x, size_t col,
                           size_t r0, size_t r1, float *ref, size_t *bad)
{
    const size_t block = c->scaling == DN_ACT_SUB32 ? DN_ACT_BLOCK : c->be;
    int16_t *codes = malloc(c->n * sizeof *codes);
    dn_act_scale *scales = malloc(c->n / block * sizeof *scales);
    CHECK(codes && scales);
    dn_act_row row = {codes, scales, c->n, (uint32_t)block, c->words};
    size_t qbad = SENTINEL_BAD;
    dn_status st = c->scaling == DN_ACT_SUB32
                       ? dn_quantize(x + col * c->n, c->n, c->words, &row, &qbad)
                       : dn_quantize_blocks(x + col * c->n, c->n, block, c->words, &row, &qbad);
    CHECK(st == DN_OK);
    for (size_t r = 0; r < c->rows; r++) ref[r] = dn_from_bits(SENTINEL_OUT);
    *bad = SENTINEL_BAD;
    st = r0 < r1
             ? dn_ref_mat_vec_rows(c->type, w, c->rows, c->n, &row, c->scaling, r0, r1, ref, bad)
             : DN_OK;
    free(codes);
    free(scales);
    return st;
}

/* A result over rows [r0, r1) of `count` columns (column j at out + j
   ldo) against the references (column j at ref + j rows): the status and
   *bad; on DN_OK the bits of every row of the range; the sentinel outside
   the range in any case. */
static void same(dn_status st, size_t bad, const float *out, size_t ldo, dn_status st_ref,
                 size_t bad_ref, const float *ref, const rp_case *c, size_t r0, size_t r1,
                 size_t count)
{
    CHECK(st == st_ref && bad == bad_ref);
    for (size_t j = 0; j < count; j++)
        for (size_t r = 0; r < c->rows; r++) {
            uint32_t u = dn_bits(out[j * ldo + r]);
            if (r < r0 || r >= r1)
                CHECK(u == SENTINEL_OUT);
            else if (st == DN_OK)
                CHECK(u == dn_bits(ref[j * c->rows + r]));
        }
}

static void reset(float *out, size_t count)
{
    for (size_t i = 0; i < count; i++) out[i] = dn_from_bits(SENTINEL_OUT);
}

/* ---- the products ---------------------------------------------------------------- */

/* The repacked matrix of w, in a buffer of exactly its size, unpacked back
   and compared. */
static uint8_t *repacked(const rp_case *c, const uint8_t *w, size_t row_bytes)
{
    size_t bytes = 0;
    CHECK(dn_repack_size(c->type, c->rows, c->n, &bytes) == DN_OK);
    CHECK(bytes == (c->rows + DN_REPACK_ROWS - 1) / DN_REPACK_ROWS * DN_REPACK_ROWS * row_bytes);
    uint8_t *p = malloc(bytes), *back = malloc(c->rows * row_bytes);
    CHECK(p && back);
    CHECK(dn_repack(c->type, w, c->rows, c->n, p, bytes) == DN_OK);
    memset(back, 0x5A, c->rows * row_bytes);
    CHECK(dn_repack_unpack(c->type, p, c->rows, c->n, back, c->rows * row_bytes) == DN_OK);
    CHECK(memcmp(back, w, c->rows * row_bytes) == 0);
    free(back);
    return p;
}

/* Every column's references, each computed once: over the case's rows
   (range) and over all rows (all); column j at + j rows. */
typedef struct col_refs {
    float *range, *all;
    dn_status st_range[MAX_COLS], st_all[MAX_COLS];
    size_t bad_range[MAX_COLS], bad_all[MAX_COLS];
} col_refs;

static void make_refs(const rp_case *c, const uint8_t *w, const float *x, col_refs *refs)
{
    refs->range = malloc(c->cols * c->rows * sizeof *refs->range);
    refs->all = malloc(c->cols * c->rows * sizeof *refs->all);
    CHECK(refs->range && refs->all);
    for (size_t col = 0; col < c->cols; col++) {
        refs->st_range[col] = reference(c, w, x, col, c->r0, c->r1, refs->range + col * c->rows,
                                        &refs->bad_range[col]);
        refs->st_all[col] =
            reference(c, w, x, col, 0, c->rows, refs->all + col * c->rows, &refs->bad_all[col]);
    }
}

/* Each column's matrix-vector forms, plain and repacked, over the case's
   rows and over all rows (no pool). */
static void vector_forms(const rp_case *c, const dn_act *act, const uint8_t *w, const uint8_t *p,
                         const col_refs *refs, float *out)
{
    for (size_t col = 0; col < c->cols; col++) {
        const float *range = refs->range + col * c->rows, *all = refs->all + col * c->rows;
        const dn_status st_range = refs->st_range[col], st_all = refs->st_all[col];
        const size_t bad_range = refs->bad_range[col], bad_all = refs->bad_all[col];
        size_t bad = SENTINEL_BAD;
        reset(out, c->rows);
        dn_status st = dn_act_mat_vec_rows(act, col, c->type, w, c->rows, c->r0, c->r1, out, &bad);
        same(st, bad, out, c->rows, st_range, bad_range, range, c, c->r0, c->r1, 1);
        reset(out, c->rows);
        bad = SENTINEL_BAD;
        st = dn_repacked_mat_vec_rows(act, col, c->type, p, c->rows, c->r0, c->r1, out, &bad);
        same(st, bad, out, c->rows, st_range, bad_range, range, c, c->r0, c->r1, 1);

        reset(out, c->rows);
        bad = SENTINEL_BAD;
        st = dn_repacked_mat_vec(act, col, c->type, p, c->rows, out, NULL, &bad);
        same(st, bad, out, c->rows, st_all, bad_all, all, c, 0, c->rows, 1);
    }
}

/* The status and *bad of columns [c0, c1)'s references (the same for every
   column: the activation is finite, so only an unreadable block fails, the
   first row's). */
static dn_status columns_status(const rp_case *c, const dn_status *st, const size_t *bad,
                                size_t *bad_ref)
{
    for (size_t col = c->c0 + 1; col < c->c1; col++)
        CHECK(st[col] == st[c->c0] && bad[col] == bad[c->c0]);
    *bad_ref = bad[c->c0];
    return st[c->c0];
}

/* The matrix forms: the public ones (out[col * rows + r], the sentinel in
   every other column) and every ISA's kernels (out[(col - c0) * rows + r]). */
static void matrix_forms(const rp_case *c, const dn_act *act, const uint8_t *w, const uint8_t *p,
                         const col_refs *refs, float *out)
{
    const size_t ncol = c->c1 - c->c0, all = c->cols * c->rows;
    size_t bad_ref, bad = SENTINEL_BAD;
    dn_status st_ref = columns_status(c, refs->st_range, refs->bad_range, &bad_ref), st;
    const float *ref = refs->range + c->c0 * c->rows;
    float *mine = out + c->c0 * c->rows;
    for (int packed = 0; packed < 2; packed++) {
        reset(out, all);
        bad = SENTINEL_BAD;
        st = packed ? dn_repacked_mat_mul_rows(act, c->c0, c->c1, c->type, p, c->rows, c->r0, c->r1,
                                               out, &bad)
                    : dn_act_mat_mul_rows(act, c->c0, c->c1, c->type, w, c->rows, c->r0, c->r1, out,
                                          &bad);
        same(st, bad, mine, c->rows, st_ref, bad_ref, ref, c, c->r0, c->r1, ncol);
        for (size_t i = 0; i < all; i++)
            if (i < c->c0 * c->rows || i >= c->c1 * c->rows) CHECK(dn_bits(out[i]) == SENTINEL_OUT);
    }
    if (c->r0 < c->r1) {
        const dn_isa isas[] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_AVX512, DN_ISA_NEON};
        for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
            const dn_kernels *k = dn_kernels_for(isas[i]);
            if (!k) continue;
            for (int packed = 0; packed < 2; packed++)
                for (size_t e = 0; e < (ncol > 1 ? 2u : 1u); e++) { /* one column, then all */
                    const size_t c1 = e ? c->c1 : c->c0 + 1;
                    reset(out, all);
                    bad = SENTINEL_BAD;
                    st = packed ? dn_repacked_mm_with(k->dot, act, c->c0, c1, c->type, p, c->rows,
                                                      c->r0, c->r1, out, c->rows, &bad)
                                : k->dot->mat_mul_rows(act, c->c0, c1, c->type, w, c->rows, c->r0,
                                                       c->r1, out, c->rows, &bad);
                    same(st, bad, out, c->rows, st_ref, bad_ref, ref, c, c->r0, c->r1, c1 - c->c0);
                }
        }
    }
    st_ref = columns_status(c, refs->st_all, refs->bad_all, &bad_ref);
    ref = refs->all + c->c0 * c->rows;
    if (c->c0 == 0 && c->c1 == c->cols) { /* the whole product: every column */
        reset(out, all);
        bad = SENTINEL_BAD;
        st = dn_repacked_mat_mul(act, c->type, p, c->rows, out, NULL, &bad);
        same(st, bad, out, c->rows, st_ref, bad_ref, ref, c, 0, c->rows, ncol);
        reset(out, all);
        bad = SENTINEL_BAD;
        st = dn_act_mat_mul(act, c->type, w, c->rows, out, NULL, &bad);
        same(st, bad, out, c->rows, st_ref, bad_ref, ref, c, 0, c->rows, ncol);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    rp_case c = parse_case(&in);
    const size_t row_bytes = c.n / c.be * c.bb;
    uint8_t *w = malloc(c.rows * row_bytes);
    float *x = malloc(c.cols * c.n * sizeof *x);
    CHECK(w && x);
    for (size_t i = 0; i < c.rows * row_bytes; i++) w[i] = byte(&in);
    if (c.readable)
        for (size_t b = 0; b < c.rows * row_bytes / c.bb; b++) {
            uint8_t *blk = w + b * c.bb;
            if ((blk[c.d_at + 1] & 0x7C) == 0x7C) blk[c.d_at + 1] &= 0xBF;
            if (c.b_at >= 0 && (blk[c.b_at + 1] & 0x7C) == 0x7C) blk[c.b_at + 1] &= 0xBF;
        }
    read_columns(&in, &c, x);

    dn_act *act = NULL;
    size_t bad = SENTINEL_BAD, first = first_non_finite(x, c.cols * c.n);
    dn_status st = dn_act_create(x, c.n, c.cols, c.scaling, c.words, &act, &bad);
    if (first != SIZE_MAX) {
        CHECK(st == DN_ERR_NON_FINITE && bad == first && act == NULL);
    } else {
        CHECK(st == DN_OK && bad == SENTINEL_BAD && act != NULL);
        uint8_t *p = repacked(&c, w, row_bytes);
        col_refs refs;
        make_refs(&c, w, x, &refs);
        float *out = malloc(c.cols * c.rows * sizeof *out);
        CHECK(out);
        vector_forms(&c, act, w, p, &refs, out);
        matrix_forms(&c, act, w, p, &refs, out);
        free(refs.range);
        free(refs.all);
        free(out);
        free(p);
        dn_act_destroy(act);
    }
    free(w);
    free(x);
    return 0;
}
