/* SPDX-License-Identifier: MIT */
/*
 * The element-wise module's public entry points: argument checks (NULLs,
 * sizes, overlaps), the split over a dn_pool, then the active ISA's kernel,
 * which reproduces the reference (src/vec.c) bit for bit. Each element is
 * computed alone, so neither the pool nor the split changes a bit.
 */
#include "dispatch.h"
#include "pool.h"
#include "sizes.h"

#include <stdint.h>

/* ---- arguments --------------------------------------------------------------- */

/* The bytes [lo, hi) of n floats at p. */
typedef struct span {
    uintptr_t lo, hi;
} span;

/* 0 when n floats at p cannot exist: n * 4 past size_t, or past the top of
   the address space. */
static int span_of(const void *p, size_t n, span *s)
{
    size_t bytes;
    if (!p || !dn_size_mul(n, sizeof(float), &bytes)) return 0;
    uintptr_t lo = (uintptr_t)p;
    if (bytes > UINTPTR_MAX - lo) return 0;
    s->lo = lo;
    s->hi = lo + bytes;
    return 1;
}

/* Whether output `out` may not sit where it does against input `in`: any
   shared byte, unless same_ok and it is the same array (same start; the
   lengths are the same n). */
static int clash(span out, span in, int same_ok)
{
    int overlap = out.lo < in.hi && in.lo < out.hi;
    return overlap && !(same_ok && out.lo == in.lo);
}

/* Two inputs and an output that may be either input. */
static dn_status binary_args(const float *a, const float *b, const float *y, size_t n)
{
    span sa, sb, sy;
    if (!span_of(a, n, &sa) || !span_of(b, n, &sb) || !span_of(y, n, &sy))
        return DN_ERR_INVALID_ARGUMENT;
    if (clash(sy, sa, 1) || clash(sy, sb, 1)) return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

/* ---- the split over a pool ------------------------------------------------------ */

/* Where a pool split may pay (docs/vec.md, efficiency). Measured on a
   shared 2-core host, a second thread never paid (its wake-up waits for a
   core: a pool round trip cost 12-80 us); so a split starts only where the
   work of one piece is far above the best round trip measured (~12 us):
   the streaming operations (8-12 bytes an element at memory speed, ~0.15
   ns an element) from 2^20 elements in pieces of 2^16 (~10-60 us each);
   the gates (~3.6 ns an element, the dn_silu / dn_sigmoid sequence on
   AVX2; dn_gelu_tanh and dn_gelu take 1.3x and 2.5x dn_silu's time,
   docs/math.md) from 2^16 in pieces of 2^14 (~60 us each). */
enum {
    STREAM_SPLIT_MIN = 1 << 20,
    STREAM_PIECE = 1 << 16,
    GATE_SPLIT_MIN = 1 << 16,
    GATE_PIECE = 1 << 14
};

/* One call's pieces: exactly one of the kernels is set. */
typedef struct job {
    dn_vec_binary_kernel binary;
    void (*scale)(const float *x, float a, float *y, size_t n);
    void (*axpy)(float a, const float *x, float *y, size_t n);
    const float *a, *b;
    float *y;
    float s;
    size_t n, split_min, piece;
} job;

/* Elements [i, i + m) of the job. */
static void run_range(const job *j, size_t i, size_t m)
{
    if (j->binary)
        j->binary(j->a + i, j->b + i, j->y + i, m);
    else if (j->scale)
        j->scale(j->a + i, j->s, j->y + i, m);
    else
        j->axpy(j->s, j->a + i, j->y + i, m);
}

static void run_piece(size_t t, void *ctx)
{
    const job *j = ctx;
    size_t i = t * j->piece, left = j->n - i;
    run_range(j, i, left < j->piece ? left : j->piece);
}

/* On the pool when it has threads to give and the array is long enough for
   them to pay (docs/vec.md, efficiency), else on the calling thread. */
static dn_status run(job *j, dn_pool *pool)
{
    if (j->n >= j->split_min && dn_pool_threads(pool) > 1)
        dn_pool_run(pool, dn_size_div_up(j->n, j->piece), run_piece, j);
    else
        run_range(j, 0, j->n);
    return DN_OK;
}

/* gate: the split lengths of the gates, else of the streaming operations */
static dn_status binary(dn_vec_binary_kernel k, int gate, const float *a, const float *b, float *y,
                        size_t n, dn_pool *pool)
{
    if (n == 0) return DN_OK;
    dn_status st = binary_args(a, b, y, n);
    if (st != DN_OK) return st;
    job j = {k, NULL, NULL, a, b, y, 0.0f, n, STREAM_SPLIT_MIN, STREAM_PIECE};
    if (gate) j.split_min = GATE_SPLIT_MIN, j.piece = GATE_PIECE;
    return run(&j, pool);
}

/* ---- the entry points -------------------------------------------------------------- */

dn_status dn_vec_add(const float *a, const float *b, float *y, size_t n, dn_pool *pool)
{
    return binary(dn_kernels_active()->vec->add, 0, a, b, y, n, pool);
}

dn_status dn_vec_sub(const float *a, const float *b, float *y, size_t n, dn_pool *pool)
{
    return binary(dn_kernels_active()->vec->sub, 0, a, b, y, n, pool);
}

dn_status dn_vec_mul(const float *a, const float *b, float *y, size_t n, dn_pool *pool)
{
    return binary(dn_kernels_active()->vec->mul, 0, a, b, y, n, pool);
}

dn_status dn_vec_silu_mul(const float *g, const float *u, float *y, size_t n, dn_pool *pool)
{
    return binary(dn_kernels_active()->vec->silu_mul, 1, g, u, y, n, pool);
}

dn_status dn_vec_sigmoid_mul(const float *g, const float *u, float *y, size_t n, dn_pool *pool)
{
    return binary(dn_kernels_active()->vec->sigmoid_mul, 1, g, u, y, n, pool);
}

dn_status dn_vec_gelu_tanh_mul(const float *g, const float *u, float *y, size_t n, dn_pool *pool)
{
    return binary(dn_kernels_active()->vec->gelu_tanh_mul, 1, g, u, y, n, pool);
}

dn_status dn_vec_gelu_mul(const float *g, const float *u, float *y, size_t n, dn_pool *pool)
{
    return binary(dn_kernels_active()->vec->gelu_mul, 1, g, u, y, n, pool);
}

dn_status dn_vec_scale(const float *x, float a, float *y, size_t n, dn_pool *pool)
{
    if (n == 0) return DN_OK;
    dn_status st = binary_args(x, x, y, n);
    if (st != DN_OK) return st;
    job j = {NULL,        dn_kernels_active()->vec->scale, NULL, x, NULL, y, a, n, STREAM_SPLIT_MIN,
             STREAM_PIECE};
    return run(&j, pool);
}

dn_status dn_vec_axpy(float a, const float *x, float *y, size_t n, dn_pool *pool)
{
    if (n == 0) return DN_OK;
    dn_status st = binary_args(x, x, y, n);
    if (st != DN_OK) return st;
    job j = {NULL,        NULL, dn_kernels_active()->vec->axpy, x, NULL, y, a, n, STREAM_SPLIT_MIN,
             STREAM_PIECE};
    return run(&j, pool);
}

dn_status dn_vec_add_rmsnorm(float *r, const float *x, const float *w, float eps, float *y,
                             size_t n)
{
    if (n == 0) return DN_OK;
    span sr, sx, sw, sy;
    if (!span_of(r, n, &sr) || !span_of(x, n, &sx) || !span_of(w, n, &sw) || !span_of(y, n, &sy))
        return DN_ERR_INVALID_ARGUMENT;
    if (clash(sr, sx, 0) || clash(sr, sw, 0) || clash(sr, sy, 0) || clash(sy, sw, 0) ||
        clash(sy, sx, 1))
        return DN_ERR_INVALID_ARGUMENT;
    const dn_vec_kernels *k = dn_kernels_active()->vec;
    float ss = k->add_sumsq(r, x, n);
    k->scale_mul(r, dn_math_rms_scale(ss, n, eps), w, y, n);
    return DN_OK;
}
