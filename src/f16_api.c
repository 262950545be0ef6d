/* SPDX-License-Identifier: MIT */
/*
 * The F16 and BF16 modules' public entry points: argument checks (sizes
 * through sizes.h, before any allocation), working memory for the rounded
 * activations, and the split of a product into row tasks on a dn_pool.
 * Every output element is computed by one kernel call in the reference's
 * order, so neither the pool nor the split changes a bit. Both element
 * types run the same code here; `kern` (a dn_w16_kernels: the active
 * table's fp16 or bf16 half) is all that differs.
 */
#include "dispatch.h"
#include "pool.h"
#include "sizes.h"

#include <stdlib.h>
#include <string.h>

/* Stack room for one rounded activation column in dn_f16_dot. */
#define DN_F16_STACK_FLOATS 4096

int dn_f16_takes_sgemm(size_t rows, size_t k, size_t n)
{
    return n >= 2 && rows % 4 == 0 && k % 8 == 0;
}

static const dn_w16_kernels *f16_kern(void) { return &dn_kernels_active()->f16->fp16; }
static const dn_w16_kernels *bf16_kern(void) { return &dn_kernels_active()->f16->bf16; }

static dn_status from_f32(const dn_w16_kernels *kern, const float *x, uint16_t *h, size_t n)
{
    if (n && (!x || !h)) return DN_ERR_INVALID_ARGUMENT;
    kern->from_f32(x, h, n);
    return DN_OK;
}

static dn_status widen(const dn_w16_kernels *kern, const uint16_t *h, float *x, size_t n)
{
    if (n && (!x || !h)) return DN_ERR_INVALID_ARGUMENT;
    kern->widen(h, x, n);
    return DN_OK;
}

dn_status dn_f16_from_f32(const float *x, uint16_t *h, size_t n)
{
    return from_f32(f16_kern(), x, h, n);
}

dn_status dn_f16_widen(const uint16_t *h, float *x, size_t n) { return widen(f16_kern(), h, x, n); }

dn_status dn_bf16_from_f32(const float *x, uint16_t *h, size_t n)
{
    return from_f32(bf16_kern(), x, h, n);
}

dn_status dn_bf16_widen(const uint16_t *h, float *x, size_t n)
{
    return widen(bf16_kern(), h, x, n);
}

dn_status dn_f16_dequantize_row(const uint8_t *row, float *out, size_t n)
{
    if (n && (!row || !out)) return DN_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; i++)
        out[i] = dn_f16_widen1((uint16_t)(row[2 * i] | (row[2 * i + 1] << 8)));
    return DN_OK;
}

/* A path the caller names: a known one, SGEMM only for k % 8 == 0. */
static int path_checked(dn_f16_path path, size_t k)
{
    return path == DN_F16_PATH_VEC_DOT || (path == DN_F16_PATH_SGEMM && k % 8 == 0);
}

static dn_status dot(const dn_w16_kernels *kern, dn_f16_path path, const uint16_t *w,
                     const uint16_t *x, size_t k, float *out)
{
    if (!out || (k && (!w || !x))) return DN_ERR_INVALID_ARGUMENT;
    if (!path_checked(path, k)) return DN_ERR_INVALID_ARGUMENT;
    size_t bytes;
    if (!dn_size_mul(k, sizeof(float), &bytes)) return DN_ERR_INVALID_ARGUMENT;
    float stack[DN_F16_STACK_FLOATS];
    float *xf = k <= DN_F16_STACK_FLOATS ? stack : malloc(bytes);
    if (!xf) return DN_ERR_OUT_OF_MEMORY;
    kern->widen(x, xf, k);
    *out = path == DN_F16_PATH_SGEMM ? kern->sgemm_dot(w, xf, k) : kern->vec_dot(w, xf, k);
    if (xf != stack) free(xf);
    return DN_OK;
}

dn_status dn_f16_dot(dn_f16_path path, const uint16_t *w, const uint16_t *x, size_t k, float *out)
{
    return dot(f16_kern(), path, w, x, k, out);
}

dn_status dn_bf16_dot(dn_f16_path path, const uint16_t *w, const uint16_t *x, size_t k, float *out)
{
    return dot(bf16_kern(), path, w, x, k, out);
}

dn_status dn_f16_mad(uint16_t *acc, const uint16_t *v, float s, size_t n)
{
    if (n && (!acc || !v)) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->f16->mad(acc, v, s, n);
    return DN_OK;
}

dn_status dn_f16_scale(uint16_t *acc, float s, size_t n)
{
    if (n && !acc) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->f16->scale(acc, s, n);
    return DN_OK;
}

/* ---- products on a pool ---------------------------------------------------- */

/* One matrix of a product, split into row chunks. */
typedef struct part {
    const uint16_t *w;
    float *out;
    size_t rows, first_task, chunk;
} part;

typedef struct product {
    const dn_w16_kernels *kern;
    const part *parts;
    size_t nparts;
    size_t k, n;
    const float *act;      /* n rounded, widened columns of k */
    const uint16_t *act16; /* the same as the type's patterns (mat_vec), or NULL */
    const void *packed;    /* the table's packed form of act (sgemm), or NULL */
    int sgemm;
} product;

/* Rows [r0, r1) of n columns on vec_dot's path: one column by the one-row
   streams (which also read its patterns, bits), several by vec_dot_cols. */
static void vec_dot_rows(const dn_w16_kernels *kern, const uint16_t *w, size_t rows, size_t k,
                         const float *f32, const uint16_t *bits, size_t n, size_t r0, size_t r1,
                         float *out)
{
    if (n == 1)
        kern->mat_vec_rows(w, k, f32, bits, r0, r1, out);
    else
        kern->vec_dot_cols(w, rows, k, f32, n, r0, r1, out);
}

static void run_task(size_t t, void *ctx)
{
    const product *p = ctx;
    size_t i = 0;
    while (i + 1 < p->nparts && p->parts[i + 1].first_task <= t) i++;
    const part *m = &p->parts[i];
    size_t r0 = (t - m->first_task) * m->chunk;
    size_t r1 = r0 + m->chunk < m->rows ? r0 + m->chunk : m->rows;
    if (p->sgemm) {
        p->kern->sgemm_rows(m->w, m->rows, p->k, p->act, p->packed, p->n, r0, r1, m->out);
        return;
    }
    vec_dot_rows(p->kern, m->w, m->rows, p->k, p->act, p->act16, p->n, r0, r1, m->out);
}

/* Rows per task: eight tasks per thread so a slow thread does not hold up
   the rest (8192^2 mat_vec on two threads, nine runs each: 0.88-0.96 of the
   read bandwidth, median 0.92, against 0.79-0.96, median 0.90, with four),
   a multiple of 4 so tinyBLAS tiles stay whole. tinyBLAS takes multiples
   of 48, the rows of the AVX-512 tiles' superblock at k <= 4096, so a
   task's rows are whole superblocks rather than ending in a smaller one
   that reads every column again for a few rows: on one thread (4096^2,
   n = 64, alternated four times) 1.04-1.06x the speed with tasks of 512
   rows; on more, where each thread has sixteen superblocks or more,
   sixteen tasks a thread rounded down to whole superblocks (the last task
   takes what is left), which two threads at n = 64 ran 1.01-1.02x (4096^2,
   5632 x 4096, k = 4096) and 1.00-1.01x (2048 rows) the speed of eight
   tasks a thread in rows of four (two alternated runs of 40 rounds each).
   Fewer rows a thread keep rows of four: with four to eight tasks of 48
   a thread, one thread's last task is an eighth to a quarter of its work
   done alone (1024 and 768 rows on two threads: 0.99x). */
static size_t chunk_rows(size_t rows, dn_pool *pool, int sgemm)
{
    const size_t threads = dn_pool_threads(pool), super = 48;
    if (sgemm && threads > 1 && rows / threads >= 16 * super)
        return rows / (threads * 16) / super * super; /* at least super */
    size_t grain = sgemm ? super : 4;
    size_t chunk = dn_size_div_up(dn_size_div_up(rows, threads * 8), grain) * grain;
    return chunk ? chunk : grain;
}

/* The activation as the kernels take it. */
typedef struct columns {
    void *block;    /* the allocation */
    float *f32;     /* rounded to the type and widened */
    uint16_t *bits; /* the same as the type's patterns (mat_vec), or NULL */
    void *packed;   /* the table's packed form of f32 (sgemm), or NULL */
} columns;

/* The columns from floats, eight a task: rounded to the type, then the
   table's packed form of the same eight. On two threads, 1024 x 4096,
   n = 64, the calling thread alone took ~0.13 ms of the product's ~1.6 ms
   while the other waited. */
typedef struct prep_job {
    const dn_w16_kernels *kern;
    const float *act;
    size_t k, n;
    const columns *c;
} prep_job;

static void prep_task(size_t t, void *ctx)
{
    const prep_job *j = ctx;
    const size_t c0 = 8 * t, c1 = j->n - c0 > 8 ? c0 + 8 : j->n;
    j->kern->round_f32(j->act + c0 * j->k, j->c->f32 + c0 * j->k, (c1 - c0) * j->k);
    if (j->c->packed) j->kern->pack(j->c->f32, j->k, j->n, c0, c1, j->c->packed);
}

/* Bytes of one allocation holding elems floats, with patterns their 16-bit
   patterns, and pack bytes of a packed form, each part on a line; 0 when
   that does not fit a size_t. */
static size_t columns_bytes(size_t elems, int patterns, size_t pack)
{
    size_t bytes;
    if (!dn_size_mul(elems, sizeof(float) + (patterns ? sizeof(uint16_t) : 0), &bytes) ||
        bytes > SIZE_MAX - 2 * DN_LINE - pack)
        return 0;
    return bytes + 2 * DN_LINE + pack;
}

/* The activation (act as floats, or act16 as the type's patterns) of n
   columns of k in one allocation, each part starting on a cache line: the
   kernels read them 64 bytes a load, and a load that straddles two lines
   costs a second. The BF16 one-row stream on patterns 16 bytes past a line
   (where malloc puts a large block) made TinyLlama's BF16 decode 1.45x
   slower on one thread. The patterns are made once here, not once per
   task, and only where a kernel reads them (one column on vec_dot's path);
   tinyBLAS's packed form (sgemm), once for every task, in the same block:
   as two blocks of 1 MiB each (4096^2, n = 64) glibc returned the heap's
   top to the system after every call (its trim threshold is twice the
   largest block it has unmapped) and each call faulted 2 MiB of pages back
   in: 8549 page faults against 1344 in `decodenum-bench-f16 --quick`, and
   n = 64 at 0.65-0.75x the speed. Without memory for the packed form the
   columns alone (sgemm_rows gives the same bits without it). Several
   columns from floats are rounded (and packed) on the pool, eight columns
   a task (prep_task); one column's patterns and act16 on the calling
   thread. */
static dn_status make_columns(const dn_w16_kernels *kern, const float *act, const uint16_t *act16,
                              size_t k, size_t n, int sgemm, dn_pool *pool, columns *c)
{
    size_t elems;
    if (!dn_size_mul(n, k, &elems)) return DN_ERR_INVALID_ARGUMENT;
    const int patterns = !sgemm && n == 1;
    size_t pack = sgemm ? kern->pack_bytes(k, n) : 0;
    size_t bytes = columns_bytes(elems, patterns, pack);
    c->block = bytes ? malloc(bytes) : NULL;
    if (!c->block && pack) {
        pack = 0;
        bytes = columns_bytes(elems, patterns, 0);
        c->block = bytes ? malloc(bytes) : NULL;
    }
    if (!bytes) return DN_ERR_INVALID_ARGUMENT;
    if (!c->block) return DN_ERR_OUT_OF_MEMORY;
    c->f32 = dn_line_up(c->block);
    c->bits = patterns ? dn_line_up(c->f32 + elems) : NULL;
    c->packed = pack ? dn_line_up(c->f32 + elems) : NULL;
    if (act16) {
        if (c->bits && elems) memcpy(c->bits, act16, elems * sizeof *act16);
        kern->widen(act16, c->f32, elems);
        if (c->packed) kern->pack(c->f32, k, n, 0, n, c->packed);
    } else if (!c->bits) {
        prep_job j = {kern, act, k, n, c};
        dn_pool_run(pool, dn_size_div_up(n, 8), prep_task, &j);
    } else {
        kern->from_f32(act, c->bits, elems);
        kern->widen(c->bits, c->f32, elems);
    }
    return DN_OK;
}

static dn_status run_product(const dn_w16_kernels *kern, part *parts, size_t nparts, size_t k,
                             const float *act, size_t n, int sgemm, dn_pool *pool)
{
    columns cols;
    dn_status st = make_columns(kern, act, NULL, k, n, sgemm, pool, &cols);
    if (st != DN_OK) return st;

    size_t tasks = 0;
    for (size_t i = 0; i < nparts; i++) {
        parts[i].chunk = chunk_rows(parts[i].rows, pool, sgemm);
        parts[i].first_task = tasks;
        tasks += dn_size_div_up(parts[i].rows, parts[i].chunk);
    }
    product p = {kern, parts, nparts, k, n, cols.f32, cols.bits, cols.packed, sgemm};
    dn_pool_run(pool, tasks, run_task, &p);
    free(cols.block);
    return DN_OK;
}

/* Checks a rows x k matrix and its n-column output. */
static dn_status check_matrix(const uint16_t *w, size_t rows, size_t k, const void *act, size_t n,
                              const float *out)
{
    size_t welems, aelems, oelems, bytes;
    if (!dn_size_mul(rows, k, &welems) || !dn_size_mul(welems, sizeof(uint16_t), &bytes) ||
        !dn_size_mul(n, k, &aelems) || !dn_size_mul(aelems, sizeof(float), &bytes) ||
        !dn_size_mul(n, rows, &oelems) || !dn_size_mul(oelems, sizeof(float), &bytes))
        return DN_ERR_INVALID_ARGUMENT;
    if ((welems && !w) || (aelems && !act) || (oelems && !out)) return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

/* One matrix times n columns, tinyBLAS when sgemm (the shape's rule or the
   caller's path). */
static dn_status mat_mul(const dn_w16_kernels *kern, int sgemm, const uint16_t *w, size_t rows,
                         size_t k, const float *act, size_t n, float *out, dn_pool *pool)
{
    dn_status st = check_matrix(w, rows, k, act, n, out);
    if (st != DN_OK) return st;
    part one = {w, out, rows, 0, 0};
    return run_product(kern, &one, 1, k, act, n, sgemm, pool);
}

static dn_status mat_vec_multi(const dn_w16_kernels *kern, const dn_f16_matrix *mats, size_t count,
                               size_t k, const float *x, dn_pool *pool)
{
    if (count && !mats) return DN_ERR_INVALID_ARGUMENT;
    if (count > SIZE_MAX / sizeof(part)) return DN_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < count; i++) {
        if (mats[i].rows > SIZE_MAX) return DN_ERR_INVALID_ARGUMENT;
        dn_status st = check_matrix(mats[i].w, (size_t)mats[i].rows, k, x, 1, mats[i].out);
        if (st != DN_OK) return st;
    }
    if (count == 0) return DN_OK;
    part *parts = malloc(count * sizeof *parts);
    if (!parts) return DN_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < count; i++)
        parts[i] = (part){mats[i].w, mats[i].out, (size_t)mats[i].rows, 0, 0};
    dn_status st = run_product(kern, parts, count, k, x, 1, 0, pool);
    free(parts);
    return st;
}

static dn_status mat_mul_path(const dn_w16_kernels *kern, dn_f16_path path, const uint16_t *w,
                              size_t rows, size_t k, const float *act, size_t n, float *out,
                              dn_pool *pool)
{
    if (!path_checked(path, k)) return DN_ERR_INVALID_ARGUMENT;
    return mat_mul(kern, path == DN_F16_PATH_SGEMM, w, rows, k, act, n, out, pool);
}

/* ---- row ranges on the caller's thread -------------------------------------- */

/* sgemm: 1 for tinyBLAS, 0 for vec_dot (the shape's rule or the caller's
   path, checked by path_checked). */
static dn_status rows_product(const dn_w16_kernels *kern, int sgemm, const uint16_t *w, size_t rows,
                              size_t k, const uint16_t *act16, size_t n, size_t row_begin,
                              size_t row_end, float *out)
{
    dn_status st = check_matrix(w, rows, k, act16, n, out);
    if (st != DN_OK) return st;
    if (row_begin > row_end || row_end > rows) return DN_ERR_INVALID_ARGUMENT;
    columns cols;
    st = make_columns(kern, NULL, act16, k, n, sgemm, NULL, &cols);
    if (st != DN_OK) return st;
    if (sgemm) {
        kern->sgemm_rows(w, rows, k, cols.f32, cols.packed, n, row_begin, row_end, out);
    } else {
        vec_dot_rows(kern, w, rows, k, cols.f32, cols.bits, n, row_begin, row_end, out);
    }
    free(cols.block);
    return DN_OK;
}

/* rows_product on the caller's path. */
static dn_status path_rows(const dn_w16_kernels *kern, dn_f16_path path, const uint16_t *w,
                           size_t rows, size_t k, const uint16_t *act16, size_t n, size_t row_begin,
                           size_t row_end, float *out)
{
    if (!path_checked(path, k)) return DN_ERR_INVALID_ARGUMENT;
    return rows_product(kern, path == DN_F16_PATH_SGEMM, w, rows, k, act16, n, row_begin, row_end,
                        out);
}

/* ---- the public products, F16 then BF16 ------------------------------------ */

dn_status dn_f16_mat_vec(const uint16_t *w, size_t rows, size_t k, const float *x, float *out,
                         dn_pool *pool)
{
    return mat_mul(f16_kern(), 0, w, rows, k, x, 1, out, pool);
}

dn_status dn_f16_mat_vec_multi(const dn_f16_matrix *mats, size_t count, size_t k, const float *x,
                               dn_pool *pool)
{
    return mat_vec_multi(f16_kern(), mats, count, k, x, pool);
}

dn_status dn_f16_mat_mul(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                         float *out, dn_pool *pool)
{
    return mat_mul(f16_kern(), dn_f16_takes_sgemm(rows, k, n), w, rows, k, act, n, out, pool);
}

dn_status dn_f16_mat_mul_path(dn_f16_path path, const uint16_t *w, size_t rows, size_t k,
                              const float *act, size_t n, float *out, dn_pool *pool)
{
    return mat_mul_path(f16_kern(), path, w, rows, k, act, n, out, pool);
}

dn_status dn_f16_mat_vec_rows(const uint16_t *w, size_t rows, size_t k, const uint16_t *x16,
                              size_t row_begin, size_t row_end, float *out)
{
    return rows_product(f16_kern(), 0, w, rows, k, x16, 1, row_begin, row_end, out);
}

dn_status dn_f16_mat_mul_rows(const uint16_t *w, size_t rows, size_t k, const uint16_t *act16,
                              size_t n, size_t row_begin, size_t row_end, float *out)
{
    return rows_product(f16_kern(), dn_f16_takes_sgemm(rows, k, n), w, rows, k, act16, n, row_begin,
                        row_end, out);
}

dn_status dn_f16_mat_mul_path_rows(dn_f16_path path, const uint16_t *w, size_t rows, size_t k,
                                   const uint16_t *act16, size_t n, size_t row_begin,
                                   size_t row_end, float *out)
{
    return path_rows(f16_kern(), path, w, rows, k, act16, n, row_begin, row_end, out);
}

dn_status dn_bf16_mat_vec(const uint16_t *w, size_t rows, size_t k, const float *x, float *out,
                          dn_pool *pool)
{
    return mat_mul(bf16_kern(), 0, w, rows, k, x, 1, out, pool);
}

dn_status dn_bf16_mat_vec_multi(const dn_bf16_matrix *mats, size_t count, size_t k, const float *x,
                                dn_pool *pool)
{
    return mat_vec_multi(bf16_kern(), mats, count, k, x, pool);
}

dn_status dn_bf16_mat_mul(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                          float *out, dn_pool *pool)
{
    return mat_mul(bf16_kern(), dn_f16_takes_sgemm(rows, k, n), w, rows, k, act, n, out, pool);
}

dn_status dn_bf16_mat_mul_path(dn_f16_path path, const uint16_t *w, size_t rows, size_t k,
                               const float *act, size_t n, float *out, dn_pool *pool)
{
    return mat_mul_path(bf16_kern(), path, w, rows, k, act, n, out, pool);
}

dn_status dn_bf16_mat_vec_rows(const uint16_t *w, size_t rows, size_t k, const uint16_t *x16,
                               size_t row_begin, size_t row_end, float *out)
{
    return rows_product(bf16_kern(), 0, w, rows, k, x16, 1, row_begin, row_end, out);
}

dn_status dn_bf16_mat_mul_rows(const uint16_t *w, size_t rows, size_t k, const uint16_t *act16,
                               size_t n, size_t row_begin, size_t row_end, float *out)
{
    return rows_product(bf16_kern(), dn_f16_takes_sgemm(rows, k, n), w, rows, k, act16, n,
                        row_begin, row_end, out);
}

dn_status dn_bf16_mat_mul_path_rows(dn_f16_path path, const uint16_t *w, size_t rows, size_t k,
                                    const uint16_t *act16, size_t n, size_t row_begin,
                                    size_t row_end, float *out)
{
    return path_rows(bf16_kern(), path, w, rows, k, act16, n, row_begin, row_end, out);
}
