/*
 * The engine's dot product of a coded weight row with a quantized
 * activation row: integer dots per activation block, exact sums of the scaled
 * integers, one rounding per group (Sub32) or per weight block (per-block
 * scaling), the rounded pieces added in order.
 */
#include "decodenum/dot.h"
#include "decodenum/fp32.h"
#include "pool.h"

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
   |sum| <= 256 * 32767 * 32767 < 2^38, times |sig| <= 2^15 and m <= 255. */
static int scale_ok(dn_scale s) { return s.sig >= -32768 && s.sig <= 32768 && s.exp >= -(1 << 20) && s.exp <= (1 << 20); }

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
        if (scaling == DN_ACT_SUB32 ? s->count % DN_ACT_BLOCK != 0 : s->count != act->block) return 0;
    }
    return next == row->n && act->block != 0 && act->n % act->block == 0 &&
           (scaling == DN_ACT_PER_BLOCK || act->block == DN_ACT_BLOCK);
}

dn_status dn_dot(const dn_coded_row *row, const dn_act_row *act, dn_act_scaling scaling, float *out)
{
    if (!row || !act || !out || row->n != act->n) return DN_ERR_INVALID_ARGUMENT;
    if (scaling != DN_ACT_SUB32 && scaling != DN_ACT_PER_BLOCK) return DN_ERR_INVALID_ARGUMENT;
    if (row->n && (!row->coef || !row->offs || !row->segments || !act->codes || !act->scales))
        return DN_ERR_INVALID_ARGUMENT;
    if (!aligned(row, act, scaling)) return DN_ERR_INVALID_ARGUMENT;

    float acc = 0.0f, piece;
    if (scaling == DN_ACT_PER_BLOCK) {
        for (size_t k = 0; k < row->nsegments; k++) {
            const dn_segment *s = &row->segments[k];
            int64_t c, o;
            dn_term t[2];
            integer_dots(row, act, s->first, s->count, &c, &o);
            block_terms(s, act->scales[s->first / act->block], c, o, t);
            dn_exact_sum(t, 2, &piece);
            acc = dn_fadd(acc, piece);
        }
        *out = acc;
        return DN_OK;
    }
    /* Sub32: 8 sub-blocks of 32 per group, two terms each. */
    size_t seg = 0;
    for (size_t g = 0; g < row->n; g += DN_GROUP) {
        size_t end = g + DN_GROUP < row->n ? g + DN_GROUP : row->n;
        dn_term t[2 * (DN_GROUP / DN_ACT_BLOCK)];
        size_t nt = 0;
        for (size_t b = g; b < end; b += DN_ACT_BLOCK) {
            while (row->segments[seg].first + row->segments[seg].count <= b) seg++;
            int64_t c, o;
            integer_dots(row, act, b, DN_ACT_BLOCK, &c, &o);
            block_terms(&row->segments[seg], act->scales[b / DN_ACT_BLOCK], c, o, t + nt);
            nt += 2;
        }
        dn_exact_sum(t, nt, &piece);
        acc = dn_fadd(acc, piece);
    }
    *out = acc;
    return DN_OK;
}

/* ---- matrix-vector products ---------------------------------------------- */

dn_status dn_mat_vec_rows(dn_type type, const uint8_t *w, size_t rows, size_t n,
                          const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                          size_t row_end, float *out, size_t *bad)
{
    if (!dn_reads(type)) return DN_ERR_UNSUPPORTED_TYPE;
    size_t be = dn_type_block_elements(type), bb = dn_type_block_bytes(type);
    if (!act || act->n != n || n % be != 0 || row_begin > row_end || row_end > rows)
        return DN_ERR_INVALID_ARGUMENT;
    if (row_begin == row_end) return DN_OK;
    if (!w || !out) return DN_ERR_INVALID_ARGUMENT;
    size_t blocks = n / be, row_bytes = blocks * bb;
    if (rows > SIZE_MAX / (row_bytes ? row_bytes : 1)) return DN_ERR_INVALID_ARGUMENT;

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

typedef struct mv_job {
    dn_type type;
    const uint8_t *w;
    size_t rows, n, chunk;
    const dn_act_row *act;
    dn_act_scaling scaling;
    float *out;
    dn_status *status; /* one per task */
    size_t *bad;       /* one per task */
} mv_job;

static void mv_task(size_t t, void *ctx)
{
    const mv_job *j = ctx;
    size_t r0 = t * j->chunk, r1 = r0 + j->chunk < j->rows ? r0 + j->chunk : j->rows;
    j->status[t] = dn_mat_vec_rows(j->type, j->w, j->rows, j->n, j->act, j->scaling, r0, r1,
                                   j->out, &j->bad[t]);
}

dn_status dn_mat_vec(dn_type type, const uint8_t *w, size_t rows, size_t n, const dn_act_row *act,
                     dn_act_scaling scaling, float *out, dn_pool *pool, size_t *bad)
{
    size_t threads = dn_pool_threads(pool);
    size_t chunk = (rows + threads * 4 - 1) / (threads * 4);
    if (chunk == 0) chunk = 1;
    size_t tasks = rows ? (rows + chunk - 1) / chunk : 0;
    if (tasks <= 1) return dn_mat_vec_rows(type, w, rows, n, act, scaling, 0, rows, out, bad);
    dn_status *status = malloc(tasks * sizeof *status);
    size_t *where = malloc(tasks * sizeof *where);
    if (!status || !where) {
        free(status);
        free(where);
        return DN_ERR_OUT_OF_MEMORY;
    }
    mv_job j = {type, w, rows, n, chunk, act, scaling, out, status, where};
    dn_pool_run(pool, tasks, mv_task, &j);
    /* The first failing task in row order reports, as one thread would. */
    dn_status st = DN_OK;
    for (size_t t = 0; t < tasks && st == DN_OK; t++) {
        st = status[t];
        if (st == DN_ERR_UNREADABLE_BLOCK && bad) *bad = where[t];
    }
    free(status);
    free(where);
    return st;
}
