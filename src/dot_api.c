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
