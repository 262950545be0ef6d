/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the F16 and BF16 kernels: arbitrary bytes read as a
 * weight matrix (any binary16 or bfloat16 bits: infinities, NaNs with any
 * payload, denormals), activation columns (any f32 bits), a shape and a row
 * range, through every entry of every ISA's F16 table this CPU runs
 * (src/f16_kernels.h: conversions, both reductions' dots, mat_vec_rows,
 * vec_dot_cols, sgemm_rows with and without the table's packed columns,
 * mad and scale) against the scalar table, which holds the references.
 *
 * Input layout (missing bytes read as zero):
 *
 *   byte 0   bit 0 the type (binary16 / bfloat16); bit 1 the activation's
 *            source (raw f32 bits, or each a 16-bit pattern of the type
 *            widened: values the rounding keeps); bit 2 the weights made
 *            finite (an all-ones exponent loses its top bit); bits 3 and 4
 *            both set: long rows (k 4088..8695: the one-row stream past
 *            4096 elements and the blocks of rows past 8192; at most 3
 *            columns; a quarter of the inputs, each costing about 10 others)
 *   byte 1   rows 1..14
 *   byte 2-3 k 1..520 (little-endian, mod 520, plus 1; long: mod 4608,
 *            plus 4088); bit 7 of byte 3 rounds k up to a multiple of 8
 *            (the tinyBLAS path)
 *   byte 4   columns 1..10 (long rows: 1..3)
 *   byte 5   r0 (0..rows - 1); byte 6: r1 (r0 + 1..rows)
 *   byte 7-10 the scale s of mad and scale (f32 bits)
 *   then     the weights (rows x k, two bytes each), then the columns (n x
 *            k, four or two bytes each), read from byte 11 on again each
 *            time the input ends (a short input fills long rows).
 *
 * What it aborts on (besides what ASan and UBSan catch): any output of any
 * table differing by a bit from the scalar table's on the same input (NaNs
 * included: the contract fixes their bits too), or a row-range entry writing
 * outside its rows. Each table is called with its own preconditions
 * (activations as the type rounds them, k % 8 == 0 for the tinyBLAS
 * entries). Build and run: tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "dispatch.h"
#include "fuzz_input.h"

#define SENTINEL_OUT 0x7FBADBADu /* a signalling NaN no call may write */

typedef struct f16_case {
    int bf, widened, finite, long_rows;
    size_t rows, k, n, r0, r1;
    float s;
} f16_case;

static f16_case parse_case(input *in)
{
    uint8_t b0 = byte(in), b1 = byte(in);
    uint16_t kk = half(in);
    uint8_t b4 = byte(in), b5 = byte(in), b6 = byte(in);
    f16_case c;
    c.bf = b0 & 1, c.widened = (b0 >> 1) & 1, c.finite = (b0 >> 2) & 1;
    c.long_rows = (b0 & 0x18) == 0x18;
    c.rows = 1 + (size_t)b1 % 14;
    c.k = c.long_rows ? 4088 + (size_t)(kk & 0x7FFF) % 4608 : 1 + (size_t)(kk & 0x7FFF) % 520;
    if (kk & 0x8000) c.k = (c.k + 7) / 8 * 8;
    c.n = 1 + (size_t)b4 % (c.long_rows ? 3 : 10);
    c.r0 = (size_t)b5 % c.rows;
    c.r1 = c.r0 + 1 + (size_t)b6 % (c.rows - c.r0);
    c.s = dn_from_bits(word32(in));
    return c;
}

static void same_bits(const float *a, const float *b, size_t count)
{
    for (size_t i = 0; i < count; i++) CHECK(dn_bits(a[i]) == dn_bits(b[i]));
}

static void reset(float *out, size_t count)
{
    for (size_t i = 0; i < count; i++) out[i] = dn_from_bits(SENTINEL_OUT);
}

/* Outputs of a row-range entry (n columns of rows, column c at c * rows):
   the reference's bits inside [r0, r1), the sentinel elsewhere. */
static void same_range(const f16_case *c, const float *got, const float *want, size_t n)
{
    for (size_t j = 0; j < n; j++)
        for (size_t r = 0; r < c->rows; r++) {
            uint32_t u = dn_bits(got[j * c->rows + r]);
            CHECK(r >= c->r0 && r < c->r1 ? u == dn_bits(want[j * c->rows + r])
                                          : u == SENTINEL_OUT);
        }
}

/* The buffers of one case: the input's weights and columns, the columns as
   the type rounds them (xr) and as its patterns (xh), outputs. */
typedef struct buffers {
    uint16_t *w, *xh, *h, *acc;
    float *x, *xr, *want, *got;
} buffers;

/* The conversions and the single dots of table t against the reference s. */
static void conversions_and_dots(const f16_case *c, const dn_w16_kernels *t,
                                 const dn_w16_kernels *s, buffers *b)
{
    const size_t nk = c->n * c->k, wk = c->rows * c->k;
    t->from_f32(b->x, b->h, nk);
    CHECK(memcmp(b->h, b->xh, nk * sizeof *b->h) == 0);
    t->widen(b->w, b->got, wk);
    s->widen(b->w, b->want, wk);
    same_bits(b->got, b->want, wk);
    t->round_f32(b->x, b->got, nk);
    same_bits(b->got, b->xr, nk);
    for (size_t r = c->r0; r < c->r1; r++) {
        const uint16_t *row = b->w + r * c->k;
        const float *col = b->xr + (r % c->n) * c->k;
        CHECK(dn_bits(t->vec_dot(row, col, c->k)) == dn_bits(s->vec_dot(row, col, c->k)));
        if (c->k % 8 == 0)
            CHECK(dn_bits(t->sgemm_dot(row, col, c->k)) == dn_bits(s->sgemm_dot(row, col, c->k)));
    }
}

/* The row-range products of table t against the reference s. */
static void products(const f16_case *c, const dn_w16_kernels *t, const dn_w16_kernels *s,
                     buffers *b)
{
    const size_t all = c->n * c->rows;
    reset(b->want, all);
    reset(b->got, all);
    s->mat_vec_rows(b->w, c->k, b->xr, b->xh, c->r0, c->r1, b->want);
    t->mat_vec_rows(b->w, c->k, b->xr, b->xh, c->r0, c->r1, b->got);
    same_range(c, b->got, b->want, 1);

    reset(b->want, all);
    reset(b->got, all);
    s->vec_dot_cols(b->w, c->rows, c->k, b->xr, c->n, c->r0, c->r1, b->want);
    t->vec_dot_cols(b->w, c->rows, c->k, b->xr, c->n, c->r0, c->r1, b->got);
    same_range(c, b->got, b->want, c->n);

    if (c->k % 8) return;
    reset(b->want, all);
    s->sgemm_rows(b->w, c->rows, c->k, b->xr, NULL, c->n, c->r0, c->r1, b->want);
    size_t bytes = t->pack_bytes(c->k, c->n);
    void *packed = bytes ? malloc(bytes) : NULL;
    CHECK(!bytes || packed);
    if (packed) t->pack(b->xr, c->k, c->n, 0, c->n, packed);
    for (int with = 0; with < (packed ? 2 : 1); with++) {
        reset(b->got, all);
        t->sgemm_rows(b->w, c->rows, c->k, b->xr, with ? packed : NULL, c->n, c->r0, c->r1, b->got);
        same_range(c, b->got, b->want, c->n);
    }
    free(packed);
}

/* mad and scale on a binary16 accumulator (the weights' first k patterns
   as binary16 whatever the type; the columns' patterns as v). */
static void accumulators(const f16_case *c, const dn_f16_kernels *t, const dn_f16_kernels *s,
                         buffers *b)
{
    uint16_t *want = b->acc, *got = b->acc + c->k;
    memcpy(want, b->w, c->k * sizeof *want);
    memcpy(got, b->w, c->k * sizeof *got);
    s->mad(want, b->xh, c->s, c->k);
    t->mad(got, b->xh, c->s, c->k);
    CHECK(memcmp(got, want, c->k * sizeof *got) == 0);
    s->scale(want, c->s, c->k);
    t->scale(got, c->s, c->k);
    CHECK(memcmp(got, want, c->k * sizeof *got) == 0);
}

/* The input again from `from` (len bytes) once it has ended. */
static void again(input *in, const uint8_t *from, size_t len)
{
    if (!in->left) in->p = from, in->left = len;
}

static void read_data(input *in, const f16_case *c, const dn_w16_kernels *ref, buffers *b)
{
    const uint8_t *from = in->p;
    const size_t len = in->left;
    for (size_t i = 0; i < c->rows * c->k; i++) {
        again(in, from, len);
        uint16_t h = half(in);
        const uint16_t field = c->bf ? 0x7F80 : 0x7C00; /* the exponent; its top bit is 0x4000 */
        if (c->finite && (h & field) == field) h &= 0xBFFF;
        b->w[i] = h;
    }
    for (size_t i = 0; i < c->n * c->k; i++) {
        again(in, from, len);
        if (c->widened) {
            uint16_t h = half(in);
            ref->widen(&h, &b->x[i], 1);
        } else {
            b->x[i] = dn_from_bits(word32(in));
        }
    }
    ref->from_f32(b->x, b->xh, c->n * c->k);
    ref->round_f32(b->x, b->xr, c->n * c->k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    f16_case c = parse_case(&in);
    const dn_kernels *scalar = dn_kernels_for(DN_ISA_SCALAR);
    CHECK(scalar);
    const dn_w16_kernels *ref = c.bf ? &scalar->f16->bf16 : &scalar->f16->fp16;
    const size_t nk = c.n * c.k, wk = c.rows * c.k, big = (nk > wk ? nk : wk) + c.n * c.rows;
    buffers b;
    b.w = malloc(wk * sizeof *b.w), b.xh = malloc(nk * sizeof *b.xh);
    b.h = malloc(nk * sizeof *b.h), b.acc = malloc(2 * c.k * sizeof *b.acc);
    b.x = malloc(nk * sizeof *b.x), b.xr = malloc(nk * sizeof *b.xr);
    b.want = malloc(big * sizeof *b.want), b.got = malloc(big * sizeof *b.got);
    CHECK(b.w && b.xh && b.h && b.acc && b.x && b.xr && b.want && b.got);
    read_data(&in, &c, ref, &b);
    const dn_isa isas[] = {DN_ISA_AVX2, DN_ISA_AVX512, DN_ISA_NEON};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        const dn_kernels *k = dn_kernels_for(isas[i]);
        if (!k) continue;
        const dn_w16_kernels *t = c.bf ? &k->f16->bf16 : &k->f16->fp16;
        conversions_and_dots(&c, t, ref, &b);
        products(&c, t, ref, &b);
        accumulators(&c, k->f16, scalar->f16, &b);
    }
    free(b.w), free(b.xh), free(b.h), free(b.acc);
    free(b.x), free(b.xr), free(b.want), free(b.got);
    return 0;
}
