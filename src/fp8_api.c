/* SPDX-License-Identifier: MIT */
/*
 * The FP8 E4M3 module's public entry points: argument checks (sizes
 * through sizes.h, scales finite, before anything is written), the split
 * of a product into row tasks on a dn_pool, then the active ISA's kernel.
 * Every output element is computed by one kernel call in the reference's
 * order, so neither the pool nor the split changes a bit.
 */
#include "dispatch.h"
#include "pool.h"
#include "sizes.h"

#include <math.h>
#include <stdatomic.h>

float dn_fp8_e4m3_to_f32(uint8_t code) { return dn_fp8_value(code); }

dn_status dn_fp8_decode(const uint8_t *codes, float *out, size_t n)
{
    if (n && (!codes || !out)) return DN_ERR_INVALID_ARGUMENT;
    if (n == 0) return DN_OK; /* codes and out may be NULL: no pointer arithmetic on them */
    return dn_kernels_active()->fp8->decode(codes, out, n) ? DN_ERR_NON_FINITE : DN_OK;
}

dn_status dn_fp8_scale_count(size_t rows, size_t k, size_t *count)
{
    if (!count) return DN_ERR_INVALID_ARGUMENT;
    size_t c;
    if (!dn_size_mul(dn_size_div_up(rows, DN_FP8_BLOCK), dn_size_div_up(k, DN_FP8_BLOCK), &c))
        return DN_ERR_INVALID_ARGUMENT;
    *count = c;
    return DN_OK;
}

/* Checks a rows x k matrix, its scales and its n-column product. */
static dn_status check_product(const dn_fp8_mat *m, const float *act, size_t n, const float *out)
{
    size_t welems, aelems, oelems, bytes, nscales;
    if (!dn_size_mul(m->rows, m->k, &welems) || !dn_size_mul(n, m->k, &aelems) ||
        !dn_size_mul(aelems, sizeof(float), &bytes) || !dn_size_mul(n, m->rows, &oelems) ||
        !dn_size_mul(oelems, sizeof(float), &bytes) ||
        dn_fp8_scale_count(m->rows, m->k, &nscales) != DN_OK)
        return DN_ERR_INVALID_ARGUMENT;
    if ((welems && !m->w) || (aelems && !act) || (oelems && !out)) return DN_ERR_INVALID_ARGUMENT;
    if (!isfinite(m->tensor_scale)) return DN_ERR_UNREADABLE_BLOCK;
    if (m->scales)
        for (size_t i = 0; i < nscales; i++)
            if (!isfinite(m->scales[i])) return DN_ERR_UNREADABLE_BLOCK;
    return DN_OK;
}

/* With k = 0 the weights and activations may be NULL; the kernels form
   w + r*k and act + c*k, which C defines only for a real array. */
static const float *non_null(dn_fp8_mat *m, const float *act)
{
    static const uint8_t no_w[1];
    static const float no_act[1];
    if (!m->w) m->w = no_w;
    return act ? act : no_act;
}

/* ---- products on a pool ---------------------------------------------------- */

typedef struct product {
    const dn_fp8_kernels *kern;
    const dn_fp8_mat *m;
    const float *act;
    size_t n, chunk;
    float *out;
    atomic_int nan; /* some task met a NaN code */
} product;

static void run_task(size_t t, void *ctx)
{
    product *p = ctx;
    size_t r0 = t * p->chunk;
    size_t r1 = r0 + p->chunk < p->m->rows ? r0 + p->chunk : p->m->rows;
    int nan = p->n == 1 ? p->kern->mat_vec_rows(p->m, p->act, r0, r1, p->out)
                        : p->kern->mat_mul_rows(p->m, p->act, p->n, r0, r1, p->out);
    if (nan) atomic_store_explicit(&p->nan, 1, memory_order_relaxed);
}

/* Rows per task: eight tasks per thread, so a thread slowed by the load
   of other processes does not hold up the rest (as the F16 products), a
   multiple of 4, the row group of the kernels. */
static size_t chunk_rows(size_t rows, dn_pool *pool)
{
    size_t tasks = (size_t)dn_pool_threads(pool) * 8;
    size_t chunk = dn_size_div_up(rows, tasks);
    chunk = (chunk + 3) & ~(size_t)3;
    return chunk < 4 ? 4 : chunk;
}

static dn_status run_product(const dn_fp8_mat *m, const float *act, size_t n, float *out,
                             dn_pool *pool)
{
    dn_status st = check_product(m, act, n, out);
    if (st != DN_OK || m->rows == 0 || n == 0) return st;
    dn_fp8_mat full = *m;
    act = non_null(&full, act);
    product p = {dn_kernels_active()->fp8, &full, act, n, chunk_rows(m->rows, pool), out, 0};
    dn_pool_run(pool, dn_size_div_up(m->rows, p.chunk), run_task, &p);
    return atomic_load(&p.nan) ? DN_ERR_NON_FINITE : DN_OK;
}

dn_status dn_fp8_mat_vec(const uint8_t *w, size_t rows, size_t k, const float *scales,
                         float tensor_scale, const float *x, float *out, dn_pool *pool)
{
    dn_fp8_mat m = {w, rows, k, scales, tensor_scale};
    return run_product(&m, x, 1, out, pool);
}

dn_status dn_fp8_mat_mul(const uint8_t *w, size_t rows, size_t k, const float *scales,
                         float tensor_scale, const float *act, size_t n, float *out, dn_pool *pool)
{
    dn_fp8_mat m = {w, rows, k, scales, tensor_scale};
    return run_product(&m, act, n, out, pool);
}

/* ---- row ranges on the caller's thread -------------------------------------- */

static dn_status rows_product(const dn_fp8_mat *m, const float *act, size_t n, size_t row_begin,
                              size_t row_end, float *out)
{
    dn_status st = check_product(m, act, n, out);
    if (st != DN_OK) return st;
    if (row_begin > row_end || row_end > m->rows) return DN_ERR_INVALID_ARGUMENT;
    if (row_begin == row_end || n == 0) return DN_OK;
    const dn_fp8_kernels *kern = dn_kernels_active()->fp8;
    dn_fp8_mat full = *m;
    act = non_null(&full, act);
    int nan = n == 1 ? kern->mat_vec_rows(&full, act, row_begin, row_end, out)
                     : kern->mat_mul_rows(&full, act, n, row_begin, row_end, out);
    return nan ? DN_ERR_NON_FINITE : DN_OK;
}

dn_status dn_fp8_mat_vec_rows(const uint8_t *w, size_t rows, size_t k, const float *scales,
                              float tensor_scale, const float *x, size_t row_begin, size_t row_end,
                              float *out)
{
    dn_fp8_mat m = {w, rows, k, scales, tensor_scale};
    return rows_product(&m, x, 1, row_begin, row_end, out);
}

dn_status dn_fp8_mat_mul_rows(const uint8_t *w, size_t rows, size_t k, const float *scales,
                              float tensor_scale, const float *act, size_t n, size_t row_begin,
                              size_t row_end, float *out)
{
    dn_fp8_mat m = {w, rows, k, scales, tensor_scale};
    return rows_product(&m, act, n, row_begin, row_end, out);
}
