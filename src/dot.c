/* SPDX-License-Identifier: MIT */
/*
 * The engine's dot product of a coded weight row with a quantized
 * activation row: integer dots per activation block, exact sums of the scaled
 * integers, one rounding per group (Sub32) or per weight block (per-block
 * scaling), the rounded pieces added in order.
 */
#include "decodenum/dot.h"
#include "decodenum/fp32.h"
#include "dot_kernels.h"
#include "sizes.h"

#include <stdlib.h>

/* sum(coef[i] * code[i]) and sum(offs[i] * code[i]) over [from, from + len). */
static void integer_dots(const dn_coded_row *row, const dn_act_row *act, size_t from, size_t len,
                         int64_t *c, int64_t *o)
{
    int64_t sc = 0, so = 0;
    for (size_t i = from; i < from + len; i++) {
        sc += (int64_t)row->coef[i] * act->codes[i];
        so += (int64_t)row->offs[i] * act->codes[i];
    }
    *c = sc;
    *o = so;
}

/* The two terms of elements [from, from + len) of segment s under activation
   scale as. */
static void block_terms(const dn_segment *s, dn_act_scale as, int64_t c, int64_t o, dn_term *t)
{
    t[0] = (dn_term){(int64_t)s->a.sig * as.m * c, s->a.exp + as.e, 0};
    t[1] = (dn_term){(int64_t)s->b.sig * as.m * o, s->b.exp + as.e, 0};
}

/* Scales within these bounds keep every term's integer inside int64_t:
   |sum| <= 256 * 32768 * 32768 = 2^38 (a piece's integer sums run over at
   most DN_GROUP elements: aligned() refuses longer per-block segments),
   times |sig| <= 2^15 and m <= 255: below 2^61. */
static int scale_ok(dn_scale s)
{
    return s.sig >= -32768 && s.sig <= 32768 && s.exp >= -(1 << 20) && s.exp <= (1 << 20);
}

static int aligned(const dn_coded_row *row, const dn_act_row *act, dn_act_scaling scaling)
{
    size_t next = 0;
    for (size_t b = 0; act->block && b < act->n / act->block; b++)
        if (act->scales[b].m < 1 || act->scales[b].m > 255 || act->scales[b].e < -(1 << 20) ||
            act->scales[b].e > (1 << 20))
            return 0;
    for (size_t k = 0; k < row->nsegments; k++) {
        const dn_segment *s = &row->segments[k];
        if (s->first != next || s->count == 0 || !scale_ok(s->a) || !scale_ok(s->b)) return 0;
        next += s->count;
        if (scaling == DN_ACT_SUB32 ? s->count % DN_ACT_BLOCK != 0
                                    : s->count != act->block || s->count > DN_GROUP)
            return 0;
    }
    return next == row->n && act->block != 0 && act->n % act->block == 0 &&
           (scaling == DN_ACT_PER_BLOCK || act->block == DN_ACT_BLOCK);
}

/* The segment holding element i (segments are contiguous and in order). */
static size_t segment_of(const dn_coded_row *row, size_t i)
{
    size_t lo = 0, hi = row->nsegments;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (row->segments[mid].first <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

float dn_dot_piece(const dn_coded_row *row, const dn_act_row *act, dn_act_scaling scaling,
                   size_t from, size_t to)
{
    float piece;
    if (scaling == DN_ACT_PER_BLOCK) {
        /* one weight block under one activation block: two terms */
        const dn_segment *s = &row->segments[segment_of(row, from)];
        int64_t c, o;
        dn_term t[2];
        integer_dots(row, act, s->first, s->count, &c, &o);
        block_terms(s, act->scales[s->first / act->block], c, o, t);
        dn_exact_sum(t, 2, &piece);
        return piece;
    }
    /* Sub32: the group's sub-blocks of 32, two terms each, one rounding. */
    dn_term t[2 * (DN_GROUP / DN_ACT_BLOCK)];
    size_t nt = 0, seg = segment_of(row, from);
    for (size_t b = from; b < to; b += DN_ACT_BLOCK) {
        while (row->segments[seg].first + row->segments[seg].count <= b) seg++;
        int64_t c, o;
        integer_dots(row, act, b, DN_ACT_BLOCK, &c, &o);
        block_terms(&row->segments[seg], act->scales[b / DN_ACT_BLOCK], c, o, t + nt);
        nt += 2;
    }
    dn_exact_sum(t, nt, &piece);
    return piece;
}

dn_status dn_dot(const dn_coded_row *row, const dn_act_row *act, dn_act_scaling scaling, float *out)
{
    if (!row || !act || !out || row->n != act->n) return DN_ERR_INVALID_ARGUMENT;
    if (scaling != DN_ACT_SUB32 && scaling != DN_ACT_PER_BLOCK) return DN_ERR_INVALID_ARGUMENT;
    if (row->n && (!row->coef || !row->offs || !row->segments || !act->codes || !act->scales))
        return DN_ERR_INVALID_ARGUMENT;
    if (!aligned(row, act, scaling)) return DN_ERR_INVALID_ARGUMENT;

    /* The pieces: each weight block (per-block scaling) or each group of
       DN_GROUP elements (Sub32; a row's last group may be short), added in
       order from +0. */
    float acc = 0.0f;
    if (scaling == DN_ACT_PER_BLOCK) {
        for (size_t k = 0; k < row->nsegments; k++) {
            const dn_segment *s = &row->segments[k];
            acc = dn_fadd(acc, dn_dot_piece(row, act, scaling, s->first, s->first + s->count));
        }
    } else {
        for (size_t g = 0; g < row->n; g += DN_GROUP) {
            size_t end = g + DN_GROUP < row->n ? g + DN_GROUP : row->n;
            acc = dn_fadd(acc, dn_dot_piece(row, act, scaling, g, end));
        }
    }
    *out = acc;
    return DN_OK;
}

/* ---- what the kernels share with the reference ----------------------------- */

int dn_dot_act_fits(const dn_act_row *act, size_t block_elements, dn_act_scaling scaling)
{
    if (!act || act->block == 0 || act->n % act->block != 0) return 0;
    if (scaling == DN_ACT_SUB32 ? act->block != DN_ACT_BLOCK || block_elements % DN_ACT_BLOCK != 0
                                : act->block != block_elements)
        return 0;
    for (size_t b = 0; b < act->n / act->block; b++)
        if (act->scales[b].m < 1 || act->scales[b].m > 255 || act->scales[b].e < -(1 << 20) ||
            act->scales[b].e > (1 << 20))
            return 0;
    return 1;
}

float dn_dot_piece_of_bytes(dn_type type, const uint8_t *bytes, const dn_act_row *act,
                            dn_act_scaling scaling, size_t from, size_t to)
{
    /* at most DN_GROUP elements: eight blocks of 32 or one of 256 */
    int16_t coef[DN_GROUP], offs[DN_GROUP];
    dn_segment segs[DN_GROUP / DN_ACT_BLOCK];
    size_t len = to - from;
    dn_coded_row row = {coef, offs, segs, len, 0};
    dn_act_row sub = {act->codes + from, act->scales + from / act->block, len, act->block,
                      act->words};
    if (dn_read_row(type, bytes, len, &row, NULL) != DN_OK) return dn_nan();
    return dn_dot_piece(&row, &sub, scaling, 0, len);
}

float dn_dot_chain(const float *p, size_t count)
{
    float acc = 0.0f;
    for (size_t i = 0; i < count; i++) acc = dn_fadd(acc, p[i]);
    return acc;
}

/* ---- matrix-vector products ---------------------------------------------- */

/* The checks both row-range forms make (dot_kernels.h). */
dn_status dn_dot_rows_args(dn_type type, const uint8_t *w, size_t rows, size_t n,
                           const dn_act_row *act, size_t row_begin, size_t row_end,
                           const float *out, size_t *row_bytes, int *empty)
{
    *empty = 0;
    if (!dn_reads(type)) return DN_ERR_UNSUPPORTED_TYPE;
    size_t be = dn_type_block_elements(type), bb = dn_type_block_bytes(type);
    if (!act || act->n != n || n % be != 0 || row_begin > row_end || row_end > rows)
        return DN_ERR_INVALID_ARGUMENT;
    *empty = row_begin == row_end;
    if (*empty) return DN_OK;
    /* n past dn_read_row's limit, a matrix or an output larger than memory:
       refused before anything is allocated (the working rows are 4n bytes) */
    size_t matrix_bytes, out_bytes;
    if (!w || !out || n > UINT32_MAX || !dn_size_mul(n / be, bb, row_bytes) ||
        !dn_size_mul(rows, *row_bytes, &matrix_bytes) ||
        !dn_size_mul(row_end, sizeof *out, &out_bytes))
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

dn_status dn_ref_mat_vec_rows(dn_type type, const uint8_t *w, size_t rows, size_t n,
                              const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                              size_t row_end, float *out, size_t *bad)
{
    size_t row_bytes = 0;
    int empty;
    dn_status st0 =
        dn_dot_rows_args(type, w, rows, n, act, row_begin, row_end, out, &row_bytes, &empty);
    if (st0 != DN_OK || empty) return st0;
    size_t blocks = n / dn_type_block_elements(type);

    /* n <= UINT32_MAX (dn_dot_rows_args): the sizes below fit */
    int16_t *ints = malloc(2 * n * sizeof *ints + 1);
    dn_segment *segs = malloc(blocks * sizeof *segs + 1);
    if (!ints || !segs) {
        free(ints);
        free(segs);
        return DN_ERR_OUT_OF_MEMORY;
    }
    dn_coded_row row = {ints, ints + n, segs, n, 0};
    dn_status st = DN_OK;
    for (size_t r = row_begin; r < row_end && st == DN_OK; r++) {
        size_t at = 0;
        st = dn_read_row(type, w + r * row_bytes, n, &row, &at);
        if (st == DN_ERR_UNREADABLE_BLOCK && bad) *bad = r * blocks + at;
        if (st == DN_OK) st = dn_dot(&row, act, scaling, &out[r]);
    }
    free(ints);
    free(segs);
    return st;
}

/* The reference's rows piece by piece: each piece's blocks read into the
   stack (dn_dot_piece_of_bytes's way), so nothing is allocated. The same
   bits as dn_ref_mat_vec_rows (the pieces, their order and the add chain are
   dn_dot's) and the same status and *bad: a row's first unreadable block
   stops the product before the row's value is written. The arguments are
   ones the kernels may assume (dot_kernels.h). */
/* The loop of both: a row's pieces from the plain layout (row r's bytes
   at w + r * row_bytes) or the repacked one (dn_packed_read: in place, or
   an interleaved format's blocks put back together from the group). */
static dn_status rows_pieces(dn_type type, const uint8_t *w, int packed, size_t n,
                             const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                             size_t row_end, float *out, size_t *bad)
{
    const size_t be = dn_type_block_elements(type), bb = dn_type_block_bytes(type);
    const size_t blocks = n / be, row_bytes = blocks * bb;
    const size_t len = scaling == DN_ACT_PER_BLOCK ? be : DN_GROUP; /* a piece */
    int16_t coef[DN_GROUP], offs[DN_GROUP];
    dn_segment segs[DN_GROUP / DN_ACT_BLOCK];
    uint8_t tmp[DN_PACK8_CHUNK_MAX / DN_Q4K8_ROWS]; /* a row's chunk put back together */
    for (size_t r = row_begin; r < row_end; r++) {
        float acc = 0.0f;
        for (size_t from = 0; from < n; from += len) {
            const size_t to = n - from < len ? n : from + len, k = to - from;
            const uint8_t *p =
                packed ? dn_packed_read(w, type, n, row_bytes, r, from / DN_GROUP, tmp) +
                             from % DN_GROUP / be * bb
                       : w + r * row_bytes + from / be * bb;
            dn_coded_row row = {coef, offs, segs, k, 0};
            dn_act_row sub = {act->codes + from, act->scales + from / act->block, k, act->block,
                              act->words};
            size_t at = 0;
            dn_status st = dn_read_row(type, p, k, &row, &at);
            if (st != DN_OK) {
                if (st == DN_ERR_UNREADABLE_BLOCK && bad) *bad = r * blocks + from / be + at;
                return st;
            }
            acc = dn_fadd(acc, dn_dot_piece(&row, &sub, scaling, 0, k));
        }
        out[r] = acc;
    }
    return DN_OK;
}

dn_status dn_ref_rows_pieces(dn_type type, const uint8_t *w, size_t rows, size_t n,
                             const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                             size_t row_end, float *out, size_t *bad)
{
    (void)rows;
    return rows_pieces(type, w, 0, n, act, scaling, row_begin, row_end, out, bad);
}

/* The same on a repacked matrix: the same pieces (a Sub32 group or a
   per-block block lies within one chunk), read by the same reader,
   computed by the same piece function and added by the same chain; the
   same status and *bad (src/repack.c describes the layout). */
dn_status dn_ref_rows_packed(dn_type type, const uint8_t *w, size_t rows, size_t n,
                             const dn_act_row *act, dn_act_scaling scaling, const dn_dot_act *a,
                             size_t row_begin, size_t row_end, float *out, size_t *bad)
{
    (void)rows;
    (void)a;
    return rows_pieces(type, w, 1, n, act, scaling, row_begin, row_end, out, bad);
}

/* The reference's quantized matrix product over prepared columns: n
   matrix-vector products, one per column (the definition). */
dn_status dn_ref_mat_mul_rows(const dn_act *x, size_t c0, size_t c1, dn_type type, const uint8_t *w,
                              size_t rows, size_t r0, size_t r1, float *out, size_t ldo,
                              size_t *bad)
{
    for (size_t c = c0; c < c1; c++) {
        const dn_act_row *row;
        const dn_dot_act *a;
        if (!dn_act_view(x, c, type, &row, &a)) return DN_ERR_INVALID_ARGUMENT;
        dn_status st = dn_ref_rows_pieces(type, w, rows, x->n, row, x->scaling, r0, r1,
                                          out + (c - c0) * ldo, bad);
        if (st != DN_OK) return st;
    }
    return DN_OK;
}

/* ---- the kernel table ----------------------------------------------------- */

const dn_dot_kernels dn_dot_scalar = {
    .mat_vec_rows = dn_ref_mat_vec_rows,
    .mat_mul_rows = dn_ref_mat_mul_rows,
    .packed_rows_act = dn_ref_rows_packed,
};
