/* SPDX-License-Identifier: MIT */
/*
 * The quantized matrix-vector product's public entry points: the
 * reference's argument checks, the pool split, then the active ISA's kernel
 * (src/dot_kernels.h). Arguments the kernels may not assume (an activation
 * row that does not fit, which the reference reports per row after reading
 * it) go to the reference, so every status and *bad is the reference's.
 */
#include "decodenum/dot.h"
#include "dispatch.h"
#include "pool.h"
#include "sizes.h"

#include <stdlib.h>

/* Arguments rows_args accepted that the kernels may also assume (an
   activation row that does not fit, which the reference reports per row
   after reading it, goes to the reference). */
static int kernels_take(dn_type type, size_t n, const dn_act_row *act, dn_act_scaling scaling)
{
    return (scaling == DN_ACT_SUB32 || scaling == DN_ACT_PER_BLOCK) && n <= UINT32_MAX &&
           (!n || (act->codes && act->scales)) &&
           dn_dot_act_fits(act, dn_type_block_elements(type), scaling);
}

dn_status dn_mat_vec_rows(dn_type type, const uint8_t *w, size_t rows, size_t n,
                          const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                          size_t row_end, float *out, size_t *bad)
{
    size_t row_bytes = 0;
    int empty;
    dn_status st0 =
        dn_dot_rows_args(type, w, rows, n, act, row_begin, row_end, out, &row_bytes, &empty);
    if (st0 != DN_OK || empty) return st0;
    if (!kernels_take(type, n, act, scaling))
        return dn_ref_mat_vec_rows(type, w, rows, n, act, scaling, row_begin, row_end, out, bad);
    return dn_kernels_active()->dot->mat_vec_rows(type, w, rows, n, act, scaling, row_begin,
                                                  row_end, out, bad);
}

typedef struct mv_job {
    dn_type type;
    const uint8_t *w;
    size_t rows, n, chunk;
    const dn_act_row *act;
    dn_act_scaling scaling;
    float *out;
    dn_status *status;          /* one per task */
    size_t *bad;                /* one per task */
    const dn_dot_kernels *kern; /* with a: the kernels every task runs */
    const dn_dot_act *a;        /* the activation side, prepared once; or NULL */
} mv_job;

static void mv_task(size_t t, void *ctx)
{
    const mv_job *j = ctx;
    size_t r0 = t * j->chunk, r1 = j->rows - r0 > j->chunk ? r0 + j->chunk : j->rows;
    j->status[t] = j->a ? j->kern->mat_vec_rows_act(j->type, j->w, j->rows, j->n, j->act,
                                                    j->scaling, j->a, r0, r1, j->out, &j->bad[t])
                        : dn_mat_vec_rows(j->type, j->w, j->rows, j->n, j->act, j->scaling, r0, r1,
                                          j->out, &j->bad[t]);
}

dn_status dn_mat_vec(dn_type type, const uint8_t *w, size_t rows, size_t n, const dn_act_row *act,
                     dn_act_scaling scaling, float *out, dn_pool *pool, size_t *bad)
{
    /* The arguments first, as every task would find them: nothing is
       allocated for a request that names more memory than exists. */
    size_t row_bytes = 0;
    int empty;
    dn_status st0 = dn_dot_rows_args(type, w, rows, n, act, 0, rows, out, &row_bytes, &empty);
    if (st0 != DN_OK || empty) return st0;
    size_t threads = dn_pool_threads(pool), parts, status_bytes, where_bytes;
    if (!dn_size_mul(threads ? threads : 1, 4, &parts)) parts = SIZE_MAX;
    size_t chunk = dn_size_div_up(rows, parts);
    size_t tasks = dn_size_div_up(rows, chunk); /* at most parts */
    if (tasks <= 1) return dn_mat_vec_rows(type, w, rows, n, act, scaling, 0, rows, out, bad);
    if (!dn_size_mul(tasks, sizeof(dn_status), &status_bytes) ||
        !dn_size_mul(tasks, sizeof(size_t), &where_bytes))
        return DN_ERR_OUT_OF_MEMORY;
    dn_status *status = malloc(status_bytes);
    size_t *where = malloc(where_bytes);
    if (!status || !where) {
        free(status);
        free(where);
        return DN_ERR_OUT_OF_MEMORY;
    }
    mv_job j = {type, w, rows, n, chunk, act, scaling, out, status, where, dn_kernels_active()->dot,
                NULL};
    /* Kernels that prepare the activation side do it once for all tasks
       (O(n) each time: 2% of an 8192-row Q4_K product on two threads). */
    dn_dot_act a;
    int prepared = 0;
    if (j.kern->mat_vec_rows_act && kernels_take(type, n, act, scaling)) {
        if (dn_dot_act_init(&a, act, type, scaling) != DN_OK) {
            free(status);
            free(where);
            return DN_ERR_OUT_OF_MEMORY;
        }
        j.a = &a;
        prepared = 1;
    }
    dn_pool_run(pool, tasks, mv_task, &j);
    if (prepared) dn_dot_act_free(&a);
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

/* ---- products with a prepared activation (dn_act) --------------------------------- */

/* Tasks per thread of a matrix product (two columns or more): its tasks
   are long (a 4096 x 4096 Q4_K product with 64 columns takes ~20 ms on one
   thread), and with four a thread the thread that fell behind (another
   process on its CPU, a later wake-up) left the last task to one thread:
   one task of eight is an eighth of the work done alone (at most 1.78x
   from two threads). Sixteen a thread cut that to a 32nd; the tasks' rows
   still cover whole blocks of columns (each task runs every column over
   its rows, the weights read once per block of columns). */
#define ACT_MM_PER_THREAD 16

/* The checks every dn_act product makes: DN_OK with *empty when there is
   nothing to compute; else the status (decodenum/dot.h). out_cols: the
   columns out holds (1 for a matrix-vector product). */
static dn_status act_args(const dn_act *x, size_t c0, size_t c1, dn_type type, const uint8_t *w,
                          size_t rows, size_t r0, size_t r1, const float *out, size_t out_cols,
                          int *empty)
{
    *empty = 0;
    if (!x || x->magic != DN_ACT_MAGIC) return DN_ERR_INVALID_ARGUMENT;
    /* a slot: a quantized format the readers read (dot_act.c) */
    if ((unsigned)type >= DN_TYPE_LIMIT || x->slot[type] < 0) return DN_ERR_UNSUPPORTED_TYPE;
    /* row_bytes 0: x has no quantization for the format's block, or its n is
       not a whole number of them, or x was prepared for other formats
       (dn_act_prepare_for) */
    const size_t row_bytes = x->row_bytes[type];
    if (!row_bytes || c0 > c1 || c1 > x->cols || r0 > r1 || r1 > rows)
        return DN_ERR_INVALID_ARGUMENT;
    *empty = r0 == r1 || c0 == c1;
    if (*empty) return DN_OK;
    /* the sizes by overflow-checked multiplies, not divisions: a row-range
       call on four rows costs about 500 ns, and each 64-bit division tens of
       cycles */
    size_t matrix_bytes, out_elems, out_bytes;
    if (!w || !out || __builtin_mul_overflow(rows, row_bytes, &matrix_bytes) ||
        __builtin_mul_overflow(out_cols, rows, &out_elems) ||
        __builtin_mul_overflow(out_elems, sizeof *out, &out_bytes))
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

/* Rows [r0, r1) of columns [c0, c1) on the calling thread, the column j's
   values at out[(j - c0) ldo + row]. One column goes to the table's row
   kernel itself where it has one: its mat_mul_rows reaches that kernel for
   one column through three more calls and as many coverage tests (~20 ns),
   which an engine splitting rows pays per chunk. */
static dn_status act_rows(const dn_dot_kernels *k, const dn_act *x, size_t c0, size_t c1,
                          dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                          float *out, size_t ldo, size_t *bad)
{
    const dn_act_row *row;
    const dn_dot_act *a;
    if (c1 - c0 == 1 && k->mat_vec_rows_act && dn_act_view(x, c0, type, &row, &a))
        return k->mat_vec_rows_act(type, w, rows, x->n, row, x->scaling, a, r0, r1, out, bad);
    return k->mat_mul_rows(x, c0, c1, type, w, rows, r0, r1, out, ldo, bad);
}

dn_status dn_act_mat_vec_rows(const dn_act *act, size_t col, dn_type type, const uint8_t *w,
                              size_t rows, size_t row_begin, size_t row_end, float *out,
                              size_t *bad)
{
    int empty;
    size_t c1 = act && col < SIZE_MAX ? col + 1 : col;
    dn_status st = act_args(act, col, c1, type, w, rows, row_begin, row_end, out, 1, &empty);
    if (st != DN_OK || empty) return st;
    return act_rows(dn_kernels_active()->dot, act, col, c1, type, w, rows, row_begin, row_end, out,
                    0, bad);
}

dn_status dn_act_mat_mul_rows(const dn_act *act, size_t col_begin, size_t col_end, dn_type type,
                              const uint8_t *w, size_t rows, size_t row_begin, size_t row_end,
                              float *out, size_t *bad)
{
    int empty;
    dn_status st = act_args(act, col_begin, col_end, type, w, rows, row_begin, row_end, out,
                            act ? act->cols : 0, &empty);
    if (st != DN_OK || empty) return st;
    return act_rows(dn_kernels_active()->dot, act, col_begin, col_end, type, w, rows, row_begin,
                    row_end, out + col_begin * rows, rows, bad);
}

/* A pooled product over one or more matrices whose rows are laid end to
   end: task t takes rows [t chunk, (t + 1) chunk) of that sequence, each
   matrix's part with columns [c0, c1). */
typedef struct act_job {
    const dn_act *x;
    size_t c0, c1, chunk, total;
    const dn_act_matrix *mats;
    size_t count;
    dn_status status[DN_POOL_STACK_TASKS];
    size_t bad[DN_POOL_STACK_TASKS], which[DN_POOL_STACK_TASKS];
} act_job;

static void act_task(size_t t, void *ctx)
{
    act_job *j = ctx;
    const dn_dot_kernels *k = dn_kernels_active()->dot;
    size_t s0 = t * j->chunk, s1 = j->total - s0 > j->chunk ? s0 + j->chunk : j->total, base = 0;
    j->status[t] = DN_OK;
    for (size_t i = 0; i < j->count && base < s1; base += j->mats[i].rows, i++) {
        const dn_act_matrix *m = &j->mats[i];
        size_t r0 = s0 > base ? s0 - base : 0, r1 = s1 - base < m->rows ? s1 - base : m->rows;
        if (r0 >= r1) continue;
        j->status[t] = act_rows(k, j->x, j->c0, j->c1, m->type, m->w, m->rows, r0, r1, m->out,
                                m->rows, &j->bad[t]);
        j->which[t] = i;
        if (j->status[t] != DN_OK) return;
    }
}

/* Runs the job over the pool; the first failing task in row order reports,
   as one thread would. */
static dn_status act_run(act_job *j, dn_pool *pool, size_t *bad_matrix, size_t *bad)
{
    const size_t threads = dn_pool_threads(pool), per = j->c1 - j->c0 > 1 ? ACT_MM_PER_THREAD : 4;
    size_t parts = threads >= DN_POOL_STACK_TASKS / per ? DN_POOL_STACK_TASKS : threads * per;
    /* whole batches of four rows; several columns whole tiles of the lanes
       kernels (DN_MM_LANE_ROWS): a task ending in four rows ran them on the
       blocked kernel, 2064 x 4096 Q4_K at 64 columns 1.2x the time of 2048
       rows on two threads */
    const size_t grain = j->c1 - j->c0 > 1 ? DN_MM_LANE_ROWS : 4;
    j->chunk = dn_size_div_up(dn_size_div_up(j->total, parts), grain) * grain;
    size_t tasks = dn_size_div_up(j->total, j->chunk);
    dn_pool_run(pool, tasks, act_task, j);
    for (size_t t = 0; t < tasks; t++)
        if (j->status[t] != DN_OK) {
            if (j->status[t] == DN_ERR_UNREADABLE_BLOCK) {
                if (bad) *bad = j->bad[t];
                if (bad_matrix) *bad_matrix = j->which[t];
            }
            return j->status[t];
        }
    return DN_OK;
}

dn_status dn_act_mat_vec(const dn_act *act, size_t col, dn_type type, const uint8_t *w, size_t rows,
                         float *out, dn_pool *pool, size_t *bad)
{
    dn_act_matrix m = {type, w, rows, out};
    return dn_act_mat_vec_multi(act, col, &m, 1, pool, NULL, bad);
}

dn_status dn_act_mat_vec_multi(const dn_act *act, size_t col, const dn_act_matrix *mats,
                               size_t count, dn_pool *pool, size_t *bad_matrix, size_t *bad)
{
    if (count && !mats) return DN_ERR_INVALID_ARGUMENT;
    size_t total = 0, c1 = act && col < SIZE_MAX ? col + 1 : col;
    for (size_t i = 0; i < count; i++) {
        int empty;
        dn_status st = act_args(act, col, c1, mats[i].type, mats[i].w, mats[i].rows, 0,
                                mats[i].rows, mats[i].out, 1, &empty);
        if (st != DN_OK) return st;
        if (!dn_size_add(total, mats[i].rows, &total)) return DN_ERR_INVALID_ARGUMENT;
    }
    if (total == 0) return DN_OK;
    act_job j = {.x = act, .c0 = col, .c1 = c1, .total = total, .mats = mats, .count = count};
    return act_run(&j, pool, bad_matrix, bad);
}

dn_status dn_act_mat_mul(const dn_act *act, dn_type type, const uint8_t *w, size_t rows, float *out,
                         dn_pool *pool, size_t *bad)
{
    int empty;
    size_t cols = act ? act->cols : 0;
    dn_status st = act_args(act, 0, cols, type, w, rows, 0, rows, out, cols, &empty);
    if (st != DN_OK || empty) return st;
    dn_act_matrix m = {type, w, rows, out};
    act_job j = {.x = act, .c0 = 0, .c1 = cols, .total = rows, .mats = &m, .count = 1};
    return act_run(&j, pool, NULL, bad);
}
