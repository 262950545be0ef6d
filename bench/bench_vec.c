/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-vec: the element-wise operations (decodenum/vec.h) at the
 * lengths a decode engine meets (a hidden vector of 2048, an FFN vector of
 * 14336) and past the caches (2^18, 2^20, 2^23 elements), on 1 and 2
 * threads, against memcpy of the same length in the same run (the read and
 * write bandwidth an element-wise pass can hope for) and against the loop
 * of scalar calls an engine writes without the module (dn_fadd,
 * dn_silu + dn_fmul, dn_fadd + dn_rmsnorm).
 *
 * GB/s counts the bytes a call must move: memcpy reads n and writes n
 * floats; add, silu_mul and gelu_tanh_mul read 2n and write n; axpy reads
 * 2n, writes n; add_rmsnorm reads r, x, then r, w, and writes r and y (6n).
 * "2t" splits the array in two halves on a dn_pool of 2 threads (forced,
 * at every length, to find where it pays); "add pool2" is the public call
 * with that pool (it splits from 2^20 elements on; silu_mul pool2 from
 * 2^16); "pool round trip" two empty tasks on the pool: what waking it
 * costs. The gate inputs are uniform in [-1, 1).
 *
 *   ./bench/decodenum-bench-vec [--quick]
 */
#include "common.h"

#include "decodenum.h"
#include "dispatch.h"
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buffers {
    float *a, *b, *w, *y, *r;
    size_t n;
    dn_pool *pool;
} buffers;

enum kind {
    EMPTY,
    MEMCPY,
    ADD,
    SILU_MUL,
    GELU_TANH_MUL,
    AXPY,
    ADD_RMSNORM,
    ADD_LOOP,
    SILU_LOOP,
    RMS_LOOP
};

typedef struct vcase {
    buffers *B;
    enum kind kind;
    int split; /* 0 calling thread, 1 halves on the pool, 2 the public call with the pool */
} vcase;

/* Elements [i, i + m) of one kind, on the calling thread. */
static void run_range(const buffers *B, enum kind kind, size_t i, size_t m)
{
    const dn_vec_kernels *k = dn_kernels_active()->vec;
    switch (kind) {
    case MEMCPY: memcpy(B->y + i, B->a + i, m * sizeof(float)); break;
    case ADD: k->add(B->a + i, B->b + i, B->y + i, m); break;
    case SILU_MUL: k->silu_mul(B->a + i, B->b + i, B->y + i, m); break;
    case GELU_TANH_MUL: k->gelu_tanh_mul(B->a + i, B->b + i, B->y + i, m); break;
    case AXPY: k->axpy(0.5f, B->a + i, B->y + i, m); break;
    default: break;
    }
}

static void half_task(size_t t, void *ctx)
{
    const vcase *v = ctx;
    size_t h = v->B->n / 2, i = t ? h : 0;
    run_range(v->B, v->kind, i, t ? v->B->n - h : h);
}

static void loops(const buffers *B, enum kind kind)
{
    size_t n = B->n;
    if (kind == ADD_LOOP)
        for (size_t i = 0; i < n; i++) B->y[i] = dn_fadd(B->a[i], B->b[i]);
    else if (kind == SILU_LOOP)
        for (size_t i = 0; i < n; i++) B->y[i] = dn_fmul(dn_silu(B->a[i]), B->b[i]);
    else {
        for (size_t i = 0; i < n; i++) B->r[i] = dn_fadd(B->r[i], B->a[i]);
        dn_rmsnorm(B->r, B->w, 1e-6f, B->y, n);
    }
}

static void call(bench_case *c)
{
    const vcase *v = c->ctx;
    const buffers *B = v->B;
    if (v->kind >= ADD_LOOP)
        loops(B, v->kind);
    else if (v->kind == ADD_RMSNORM)
        dn_vec_add_rmsnorm(B->r, B->a, B->w, 1e-6f, B->y, B->n);
    else if (v->split == 1)
        dn_pool_run(B->pool, 2, half_task, (void *)v);
    else if (v->split == 2 && v->kind == ADD)
        dn_vec_add(B->a, B->b, B->y, B->n, B->pool);
    else if (v->split == 2)
        dn_vec_silu_mul(B->a, B->b, B->y, B->n, B->pool);
    else
        run_range(B, v->kind, 0, B->n);
    c->result = B->y[B->n - 1];
}

/* The cases of one length: name, kind, split, bytes moved per element. */
static const struct {
    const char *name;
    enum kind kind;
    int split;
    double bytes;
} plan[] = {
    {"memcpy 1t", MEMCPY, 0, 8},
    {"memcpy 2t", MEMCPY, 1, 8},
    {"pool round trip", EMPTY, 1, 0},
    {"add 1t", ADD, 0, 12},
    {"add 2t", ADD, 1, 12},
    {"add pool2", ADD, 2, 12},
    {"add dn_fadd loop", ADD_LOOP, 0, 12},
    {"silu_mul 1t", SILU_MUL, 0, 12},
    {"silu_mul 2t", SILU_MUL, 1, 12},
    {"silu_mul pool2", SILU_MUL, 2, 12},
    {"silu_mul scalar loop", SILU_LOOP, 0, 12},
    {"gelu_tanh_mul 1t", GELU_TANH_MUL, 0, 12},
    {"axpy 1t", AXPY, 0, 12},
    {"axpy 2t", AXPY, 1, 12},
    {"add_rmsnorm 1t", ADD_RMSNORM, 0, 24},
    {"add_rmsnorm scalar loop", RMS_LOOP, 0, 24},
};
enum { CASES = sizeof plan / sizeof plan[0] };

static float *alloc_filled(size_t n, uint32_t seed)
{
    float *x = bench_alloc(n * sizeof(float));
    if (x) bench_fill(x, n, seed);
    return x;
}

/* Measures every case of one length round-robin and prints its table. */
static int run_length(size_t n, dn_pool *pool, int quick)
{
    buffers B = {alloc_filled(n, 1),
                 alloc_filled(n, 2),
                 alloc_filled(n, 3),
                 alloc_filled(n, 4),
                 alloc_filled(n, 5),
                 n,
                 pool};
    if (!B.a || !B.b || !B.w || !B.y || !B.r) return 1;
    vcase v[CASES];
    bench_case cs[CASES];
    memset(cs, 0, sizeof cs);
    double budget = n >= ((size_t)1 << 22) ? 0.06 : 0.02;
    for (int i = 0; i < CASES; i++) {
        v[i] = (vcase){&B, plan[i].kind, plan[i].split};
        cs[i] = (bench_case){.op = "vec", .impl = plan[i].name, .call = call, .ctx = &v[i]};
        cs[i].bytes = plan[i].bytes * (double)n;
        cs[i].want = quick ? 5 : 15;
        bench_calibrate(&cs[i], quick ? 0.01 : 0.05, quick ? budget / 2 : budget);
    }
    bench_run_group_shuffled(cs, CASES);
    printf("\nn = %zu floats (%zu KiB an array)\n", n, n * 4 / 1024);
    printf("%-24s %10s %10s %8s %12s %12s\n", "case", "us/call", "best us", "GB/s", "x memcpy 1t",
           "x memcpy 2t");
    for (int i = 0; i < CASES; i++) {
        double r1, p1, r2, p2;
        bench_ratio(&cs[i], &cs[0], &r1, &p1);
        bench_ratio(&cs[i], &cs[1], &r2, &p2);
        if (plan[i].bytes == 0) /* the round trip moves nothing: its time only */
            printf("%-24s %10.2f %10.2f %8s %12s %12s\n", cs[i].impl, cs[i].med * 1e6,
                   cs[i].best * 1e6, "-", "-", "-");
        else
            printf("%-24s %10.2f %10.2f %8.1f %12.2f %12.2f\n", cs[i].impl, cs[i].med * 1e6,
                   cs[i].best * 1e6, cs[i].bytes / cs[i].med * 1e-9, p1, p2);
    }
    free(B.a), free(B.b), free(B.w), free(B.y), free(B.r);
    return 0;
}

static void usage(const char *argv0) { printf("usage: %s [--quick]\n", argv0); }

int main(int argc, char **argv)
{
    int quick = 0, rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    bench_print_command("decodenum-bench-vec: element-wise operations vs memcpy, 1 and 2 threads",
                        argc, argv, NULL, 0);
    bench_print_machine(bench_clock_ghz(0.05));
    bench_print_load();
    printf("GB/s: bytes a call must move (read + write) per second; x memcpy: that rate over "
           "memcpy's, median of per-round ratios\n");
    dn_pool *pool = dn_pool_create(2);
    if (!pool) return 1;
    static const size_t lengths[] = {
        2048, 14336, (size_t)1 << 16, (size_t)1 << 18, (size_t)1 << 20, (size_t)1 << 23};
    size_t count = sizeof lengths / sizeof *lengths - (quick ? 1 : 0);
    for (size_t i = 0; i < count; i++)
        if (run_length(lengths[i], pool, quick)) return 1;
    dn_pool_destroy(pool);
    return 0;
}
