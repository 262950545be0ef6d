/* SPDX-License-Identifier: MIT */
/*
 * The products on repacked matrices (decodenum/repack.h): the dn_act
 * products' checks, the pool split in whole row groups, then the active
 * ISA's kernel (dn_dot_kernels.packed_rows_act) for one column, or the
 * in-place product's kernels over unpacked tiles of rows for several.
 */
#include "decodenum/repack.h"
#include "dispatch.h"
#include "pool.h"
#include "sizes.h"

#include <stdlib.h>
#include <string.h>

/* The checks of every product: DN_OK with *empty when there is nothing to
   compute, else the status (decodenum/dot.h's list). */
static dn_status packed_args(const dn_act *x, size_t c0, size_t c1, dn_type type, const void *w,
                             size_t rows, size_t r0, size_t r1, const float *out, size_t out_cols,
                             int *empty)
{
    *empty = 0;
    if (!x || x->magic != DN_ACT_MAGIC) return DN_ERR_INVALID_ARGUMENT;
    if ((unsigned)type >= DN_TYPE_LIMIT || x->slot[type] < 0) return DN_ERR_UNSUPPORTED_TYPE;
    /* row_bytes 0: no quantization for the format's block, or x prepared
       for other formats (dn_act_prepare_for): nothing is written */
    if (!x->row_bytes[type] || c0 > c1 || c1 > x->cols || r0 > r1 || r1 > rows)
        return DN_ERR_INVALID_ARGUMENT;
    *empty = r0 == r1 || c0 == c1;
    if (*empty) return DN_OK;
    size_t matrix_bytes, out_elems, out_bytes;
    if (!w || !out || dn_repack_size(type, rows, x->n, &matrix_bytes) != DN_OK ||
        !dn_size_mul(out_cols, rows, &out_elems) ||
        !dn_size_mul(out_elems, sizeof *out, &out_bytes))
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

/* Columns [c0, c1) over rows [r0, r1) with the packed kernel, column by
   column (out: column c at out + (c - c0) * ldo). */
static dn_status by_columns(const dn_dot_kernels *k, const dn_act *x, size_t c0, size_t c1,
                            dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                            float *out, size_t ldo, size_t *bad)
{
    const dn_dot_rows_act_fn f = k->packed_rows_act ? k->packed_rows_act : dn_ref_rows_packed;
    for (size_t c = c0; c < c1; c++) {
        const dn_act_row *row = NULL;
        const dn_dot_act *a = NULL;
        if (!dn_act_view(x, c, type, &row, &a)) return DN_ERR_INVALID_ARGUMENT;
        dn_status st =
            f(type, w, rows, x->n, row, x->scaling, a, r0, r1, out + (c - c0) * ldo, bad);
        if (st != DN_OK) return st;
    }
    return DN_OK;
}

/* Several columns: each tile of about DN_DOT_MM_TILE bytes of rows (whole
   row groups) unpacked into one buffer and run by the active mat_mul_rows
   (the in-place product's kernels, the same bits), tiles in row order, so
   the first failing row reports. */
static dn_status by_tiles(const dn_dot_kernels *k, const dn_act *x, size_t c0, size_t c1,
                          dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                          float *out, size_t ldo, size_t *bad)
{
    (void)rows;
    const size_t rb = x->row_bytes[type], blocks = x->n / dn_block_formats[type].elements;
    /* whole tiles of the lanes kernels' rows: a tile of 24 rows left 8 to
       the register-blocked kernel at a third of their speed (a 2048-wide
       Q8_0 matrix: 30 rows in 64 KiB), one of 8 rows (5632 wide) all */
    size_t tile = DN_DOT_MM_TILE / rb & ~(size_t)(DN_MM_LANE_ROWS - 1);
    if (tile < DN_MM_LANE_ROWS) tile = DN_MM_LANE_ROWS;
    if (tile > r1 - r0 + 2 * DN_REPACK_ROWS) tile = r1 - r0 + 2 * DN_REPACK_ROWS;
    uint8_t *buf = malloc(tile * rb); /* at most (r1 - r0 + 16) rb: rows * rb fit */
    if (!buf) return DN_ERR_OUT_OF_MEMORY;
    const dn_dot_mm_fn mm = k->mat_mul_rows;
    const size_t chunks = dn_size_div_up(x->n, DN_GROUP);
    dn_status st = DN_OK;
    for (size_t t0 = r0; t0 < r1 && st == DN_OK;) {
        const size_t g0 = t0 / DN_REPACK_ROWS * DN_REPACK_ROWS;
        const size_t t1 = r1 - g0 > tile ? g0 + tile : r1, count = t1 - t0;
        for (size_t r = t0; r < t1; r++) /* row r to buf's row r - t0 */
            for (size_t j = 0; j < chunks; j++) {
                const size_t left = x->n - j * DN_GROUP;
                const size_t here = (left < DN_GROUP ? left : DN_GROUP) /
                                    dn_block_formats[type].elements * dn_block_formats[type].bytes;
                uint8_t *to =
                    buf + (r - t0) * rb +
                    j * (DN_GROUP / dn_block_formats[type].elements) * dn_block_formats[type].bytes;
                if (dn_packed8(type))
                    dn_packed8_get(type, dn_packed8_chunk(w, type, rb, r, j),
                                   (int)(here / dn_block_formats[type].bytes),
                                   (int)(r % DN_Q4K8_ROWS), to);
                else
                    memcpy(to, dn_packed_chunk(w, type, x->n, rb, r, j), here);
            }
        size_t at = 0;
        st = mm(x, c0, c1, type, buf, count, 0, count, out + t0, ldo, &at);
        if (st == DN_ERR_UNREADABLE_BLOCK && bad) *bad = at + t0 * blocks;
        t0 = t1;
    }
    free(buf);
    return st;
}

dn_status dn_repacked_mm_with(const dn_dot_kernels *k, const dn_act *x, size_t c0, size_t c1,
                              dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                              float *out, size_t ldo, size_t *bad)
{
    /* a SIMD table without repacked row loops (NEON): its own kernels over
       unpacked tiles beat the layout's reference by far */
    const int own = k->packed_rows_act && (k->packed_rows_act != dn_ref_rows_packed ||
                                           k->mat_mul_rows == dn_ref_mat_mul_rows);
    return c1 - c0 == 1 && own ? by_columns(k, x, c0, c1, type, w, rows, r0, r1, out, ldo, bad)
                               : by_tiles(k, x, c0, c1, type, w, rows, r0, r1, out, ldo, bad);
}

static dn_status run_rows(const dn_act *x, size_t c0, size_t c1, dn_type type, const uint8_t *w,
                          size_t rows, size_t r0, size_t r1, float *out, size_t ldo, size_t *bad)
{
    return dn_repacked_mm_with(dn_kernels_active()->dot, x, c0, c1, type, w, rows, r0, r1, out, ldo,
                               bad);
}

dn_status dn_repacked_mat_vec_rows(const dn_act *act, size_t col, dn_type type, const void *packed,
                                   size_t rows, size_t row_begin, size_t row_end, float *out,
                                   size_t *bad)
{
    int empty;
    const size_t c1 = act && col < SIZE_MAX ? col + 1 : col;
    dn_status st =
        packed_args(act, col, c1, type, packed, rows, row_begin, row_end, out, 1, &empty);
    if (st != DN_OK || empty) return st;
    return run_rows(act, col, c1, type, packed, rows, row_begin, row_end, out, 0, bad);
}

dn_status dn_repacked_mat_mul_rows(const dn_act *act, size_t col_begin, size_t col_end,
                                   dn_type type, const void *packed, size_t rows, size_t row_begin,
                                   size_t row_end, float *out, size_t *bad)
{
    int empty;
    dn_status st = packed_args(act, col_begin, col_end, type, packed, rows, row_begin, row_end, out,
                               act ? act->cols : 0, &empty);
    if (st != DN_OK || empty) return st;
    return run_rows(act, col_begin, col_end, type, packed, rows, row_begin, row_end,
                    out + col_begin * rows, rows, bad);
}

/* A pooled product: task t takes rows [t chunk, (t + 1) chunk), chunk a
   whole number of row groups. */
typedef struct pack_job {
    const dn_act *x;
    size_t c0, c1, chunk, rows;
    dn_type type;
    const uint8_t *w;
    float *out;
    dn_status status[DN_POOL_STACK_TASKS];
    size_t bad[DN_POOL_STACK_TASKS];
} pack_job;

static void pack_task(size_t t, void *ctx)
{
    pack_job *j = ctx;
    const size_t r0 = t * j->chunk, r1 = j->rows - r0 > j->chunk ? r0 + j->chunk : j->rows;
    j->status[t] =
        run_rows(j->x, j->c0, j->c1, j->type, j->w, j->rows, r0, r1, j->out, j->rows, &j->bad[t]);
}

static dn_status pack_run(pack_job *j, dn_pool *pool, size_t *bad)
{
    const size_t threads = dn_pool_threads(pool);
    const size_t parts = threads >= DN_POOL_STACK_TASKS / 4 ? DN_POOL_STACK_TASKS : threads * 4;
    j->chunk = dn_size_div_up(j->rows, parts);
    if (j->chunk % DN_REPACK_ROWS) j->chunk += DN_REPACK_ROWS - j->chunk % DN_REPACK_ROWS;
    const size_t tasks = dn_size_div_up(j->rows, j->chunk);
    dn_pool_run(pool, tasks, pack_task, j);
    for (size_t t = 0; t < tasks; t++) /* the first failing task in row order */
        if (j->status[t] != DN_OK) {
            if (j->status[t] == DN_ERR_UNREADABLE_BLOCK && bad) *bad = j->bad[t];
            return j->status[t];
        }
    return DN_OK;
}

dn_status dn_repacked_mat_vec(const dn_act *act, size_t col, dn_type type, const void *packed,
                              size_t rows, float *out, dn_pool *pool, size_t *bad)
{
    int empty;
    const size_t c1 = act && col < SIZE_MAX ? col + 1 : col;
    dn_status st = packed_args(act, col, c1, type, packed, rows, 0, rows, out, 1, &empty);
    if (st != DN_OK || empty) return st;
    pack_job j = {
        .x = act, .c0 = col, .c1 = c1, .rows = rows, .type = type, .w = packed, .out = out};
    return pack_run(&j, pool, bad);
}

dn_status dn_repacked_mat_mul(const dn_act *act, dn_type type, const void *packed, size_t rows,
                              float *out, dn_pool *pool, size_t *bad)
{
    int empty;
    const size_t cols = act ? act->cols : 0;
    dn_status st = packed_args(act, 0, cols, type, packed, rows, 0, rows, out, cols, &empty);
    if (st != DN_OK || empty) return st;
    pack_job j = {
        .x = act, .c0 = 0, .c1 = cols, .rows = rows, .type = type, .w = packed, .out = out};
    return pack_run(&j, pool, bad);
}
