/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-dot's comparison of the repacked layout (dot_repacked.h):
 * the plain and the repacked matrix-vector products and ggml's on its
 * repacked weights, alternated round by round, in cache and from memory.
 */
#define _GNU_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "decodenum/repack.h"
#include "dot_repacked.h"
#ifdef DN_BENCH_GGML
#include "ggml_peer.h"
#endif

static void fail(const char *what, dn_status st)
{
    fprintf(stderr, "decodenum-bench-dot: %s: %s\n", what, dn_status_str(st));
    exit(1);
}

/* One product of the repacked comparison: the activation prepared
   (dn_act_prepare into memory allocated once) and the product on the plain
   or the repacked matrix; prep 0: the activation prepared beforehand, the
   product alone. */
typedef struct rp_ctx {
    dn_type type;
    const uint8_t *w;
    size_t rows, cols;
    const float *x;
    void *amem;
    size_t abytes;
    dn_act *act;
    float *out;
    dn_pool *pool;
    int packed, prep;
} rp_ctx;

static void rp_call(void *ctx)
{
    rp_ctx *p = ctx;
    dn_status st = DN_OK;
    if (p->prep)
        st = dn_act_prepare(p->x, p->cols, 1, DN_ACT_SUB32, DN_WORDS_ONE, p->amem, p->abytes,
                            &p->act, NULL);
    if (st != DN_OK) fail("dn_act_prepare", st);
    st = p->packed ? dn_repacked_mat_vec(p->act, 0, p->type, p->w, p->rows, p->out, p->pool, NULL)
                   : dn_act_mat_vec(p->act, 0, p->type, p->w, p->rows, p->out, p->pool, NULL);
    if (st != DN_OK) fail(p->packed ? "dn_repacked_mat_vec" : "dn_act_mat_vec", st);
}

#ifdef DN_BENCH_GGML
static void rp_ggml(void *ctx)
{
    bench_case c = {.ctx = ctx};
    ggml_peer_call(&c);
}
#endif

typedef struct rp_case {
    const char *name;
    void (*fn)(void *);
    void *ctx;
    int reps;
    double cpu, wall; /* the minima over the rounds, seconds per call */
} rp_case;

static double clock_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The cases alternated round by round (each round starting one case on),
   each sample `reps` calls: the minimum CPU time (clock `id`) and wall
   time per call. */
static void rp_run(rp_case *c, int nc, int rounds, clockid_t id)
{
    for (int i = 0; i < nc; i++) {
        c[i].fn(c[i].ctx); /* warm */
        double t0 = now_s();
        c[i].fn(c[i].ctx);
        double one = now_s() - t0;
        c[i].reps = one > 2e-3 ? 1 : (int)(2e-3 / (one + 1e-9)) + 1;
        c[i].cpu = c[i].wall = INFINITY;
    }
    for (int k = 0; k < rounds; k++)
        for (int j = 0; j < nc; j++) {
            rp_case *q = &c[(j + k) % nc];
            double w0 = now_s(), c0 = clock_of(id);
            for (int r = 0; r < q->reps; r++) q->fn(q->ctx);
            double cpu = (clock_of(id) - c0) / q->reps, wall = (now_s() - w0) / q->reps;
            q->cpu = cpu < q->cpu ? cpu : q->cpu;
            q->wall = wall < q->wall ? wall : q->wall;
        }
}

/* One format, `rows` rows of its matrix, t threads: ours plain, ours
   repacked (activation prepared in the call, and the product alone) and
   ggml on its repacked weights, alternated; their minima into res (cpu,
   wall; ggml's NAN without a peer; *ggml_inplace 1 where ggml has no
   repacked form and ran on its weights in place). 0 when the bits differ. */
static int rp_compare(const dot_repacked_set *r, int f, size_t rows, int t, int rounds,
                      double res[4][2], int *ggml_inplace)
{
    *ggml_inplace = 0;
    const dn_type type = r->types[f];
    size_t pbytes = 0, abytes = 0;
    if (dn_repack_size(type, rows, r->cols, &pbytes) != DN_OK ||
        dn_act_size(r->cols, 1, DN_ACT_SUB32, DN_WORDS_ONE, &abytes) != DN_OK)
        fail("repack sizes", DN_ERR_INVALID_ARGUMENT);
    uint8_t *packed = bench_alloc(pbytes);
    void *am[3] = {bench_alloc(abytes), bench_alloc(abytes), bench_alloc(abytes)};
    float *out = bench_alloc(4 * rows * sizeof *out);
    if (!packed || !am[0] || !am[1] || !am[2] || !out) fail("bench", DN_ERR_OUT_OF_MEMORY);
    if (dn_repack(type, r->w[f], rows, r->cols, packed, pbytes) != DN_OK)
        fail("dn_repack", DN_ERR_INVALID_ARGUMENT);
    dn_pool *pool = t == 2 ? r->pool2 : NULL;
    rp_ctx ctx[3] = {
        {type, r->w[f], rows, r->cols, r->x, am[0], abytes, NULL, out, pool, 0, 1},
        {type, packed, rows, r->cols, r->x, am[1], abytes, NULL, out + rows, pool, 1, 1},
        {type, packed, rows, r->cols, r->x, am[2], abytes, NULL, out + 2 * rows, pool, 1, 1},
    };
    rp_call(&ctx[2]); /* prepares ctx[2]'s activation once */
    ctx[2].prep = 0;
    rp_case c[4] = {{"ours plain", rp_call, &ctx[0], 0, 0, 0},
                    {"ours repacked", rp_call, &ctx[1], 0, 0, 0},
                    {"ours repacked, product alone", rp_call, &ctx[2], 0, 0, 0}};
    int nc = 3;
#ifdef DN_BENCH_GGML
    ggml_peer *gp =
        ggml_peer_create((int)type, r->w[f], rows, r->cols, r->x, 1, out + 3 * rows, t, 1);
    /* where ggml keeps no repacked form for the format on this CPU (Q8_0,
       Q6_K on x86), its product on the weights in place */
    if (gp)
        c[nc++] = (rp_case){
            ggml_peer_repacked(gp) ? "ggml repacked" : "ggml in place", rp_ggml, gp, 0, 0, 0};
    *ggml_inplace = gp && !ggml_peer_repacked(gp);
#endif
    rp_run(c, nc, rounds, t == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID);
    const int same = memcmp(out, out + rows, rows * sizeof *out) == 0 &&
                     memcmp(out, out + 2 * rows, rows * sizeof *out) == 0;
    for (int i = 0; i < 4; i++) {
        res[i][0] = i < nc ? c[i].cpu : NAN;
        res[i][1] = i < nc ? c[i].wall : NAN;
    }
#ifdef DN_BENCH_GGML
    ggml_peer_destroy(gp);
#endif
    free(packed);
    for (int i = 0; i < 3; i++) free(am[i]);
    free(out);
    return same;
}

/* " %.3f" of a / b, or " -" where either is not a time (NAN). */
static void rp_ratio(double a, double b)
{
    if (isnan(a) || isnan(b))
        printf(" -");
    else
        printf(" %.3f", a / b);
}

static void rp_print(const char *name, const char *regime, int t, int same, int inplace,
                     double v[4][2])
{
    printf("  %-5s %-14s %dT %-11s", name, regime, t, same ? "bits =" : "BITS DIFFER");
    if (inplace) printf("(ggml in place) ");
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++)
            if (isnan(v[i][k])) /* no ggml peer, or a difference below the noise */
                printf(" %8s", "-");
            else
                printf(" %8.1f", v[i][k] * 1e6);
    printf("  |");
    if (!isnan(v[3][0]) || !isnan(v[3][1])) {
        printf(" ggml/repacked");
        rp_ratio(v[3][0], v[1][0]), rp_ratio(v[3][1], v[1][1]);
        printf(", ggml/alone");
        rp_ratio(v[3][0], v[2][0]), rp_ratio(v[3][1], v[2][1]);
        printf(",");
    }
    printf(" plain/repacked");
    rp_ratio(v[0][0], v[1][0]), rp_ratio(v[0][1], v[1][1]);
    printf("\n");
    fflush(stdout);
}

/* The time of the 32 rows between 48 and 16: a - b, or NAN where it is
   under a tenth of a. Each call's fixed work (the activation's preparation,
   on one thread 25-35 us of a 34-41 us call) cancels in the difference; the
   two-thread calls' variation does not (the pool's and OpenMP's wake-ups),
   and there differences came out negative or a few hundredths of a
   microsecond, and their ratios meaningless. */
static double rp_difference(double a, double b) { return a - b >= 0.1 * a ? a - b : NAN; }

/* The repacked layout against the plain one and against ggml's repacked
   weights, 1 and 2 threads: in cache, as the difference of 48 rows and 16
   rows (0.4-0.8 MiB: 32 rows' product, each side's activation
   quantization and call overhead cancelled), and from memory (all 8192
   rows). */
void bench_dot_repacked(const dot_repacked_set *r)
{
    printf(
        "\nrepacked weights, us per call (minimum over the rounds; cpu = the calling thread's\n"
        "CPU time with 1 thread, the process's with 2; then wall): plain = dn_act_prepare +\n"
        "dn_act_mat_vec, repacked = dn_act_prepare + dn_repacked_mat_vec, alone = the repacked\n"
        "product on an activation prepared once, ggml = ggml_mul_mat on its repacked weights\n"
        "(its quantization in every call; \"ggml in place\": ggml keeps no repacked form of the\n"
        "format on this CPU, its weights in place); ratios > 1: ours faster; \"-\" in cache:\n"
        "the 32 rows' time under a tenth of the 48 rows' (below the noise):\n");
    printf("  %-5s %-14s %2s %-11s %17s %17s %17s %17s\n", "type", "regime", "", "", "plain",
           "repacked", "alone", "ggml");
    for (int f = 0; f < r->count; f++)
        for (int t = 1; t <= 2; t++) {
            double a[4][2], b[4][2], d[4][2];
            int ip = 0;
            int same = rp_compare(r, f, 48, t, r->quick ? 300 : 1500, a, &ip);
            same &= rp_compare(r, f, 16, t, r->quick ? 300 : 1500, b, &ip);
            for (int i = 0; i < 4; i++)
                for (int k = 0; k < 2; k++) d[i][k] = rp_difference(a[i][k], b[i][k]);
            rp_print(r->names[f], "cache 48-16", t, same, ip, d);
            same = rp_compare(r, f, r->rows, t, r->quick ? 5 : 15, a, &ip);
            rp_print(r->names[f], "memory 8192", t, same, ip, a);
        }
}
