/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-f16 --shapes (f16_shapes.h): each SIMD table's F16
 * mat_vec_rows from memory on the decode shapes of a TinyLlama-sized model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "f16_shapes.h"

#define SH_BUF ((size_t)512 << 20) /* bytes the shape cases rotate through */
/* Elements each matrix starts past a cache line: 32 bytes, where a mapped
   GGUF file puts half of its tensors (the format aligns them to 32). */
#define SH_PAST 16
#define W_DIM ((size_t)8192) /* the weights given: W_DIM x W_DIM */
#define SHAPES 5
#define MAX_TABLES 4

/* One table's mat_vec_rows over a shape, each call on the next matrix of a
   512 MiB buffer, so every call reads its weights from memory. */
typedef struct shape_ctx {
    const dn_w16_kernels *kern;
    size_t rows, k;
    const float *act;      /* rounded */
    const uint16_t *act16; /* its patterns */
    float *out;
    const uint16_t *base;
    size_t at; /* elements */
} shape_ctx;

static void call_shape(bench_case *c)
{
    shape_ctx *s = c->ctx;
    size_t m = s->rows * s->k;
    if (s->at + SH_PAST + m > SH_BUF / 2) s->at = 0;
    s->kern->mat_vec_rows(s->base + s->at + SH_PAST, s->k, s->act, s->act16, 0, s->rows, s->out);
    s->at += m;
}

static void print_shapes(const bench_case *g, const shape_ctx *sc, int rd0, int best, int per,
                         int want)
{
    printf("\nmat_vec from memory, 1 thread, kernel tables called directly, each call on the"
           " next\nmatrix of a %zu MiB buffer, %d bytes past a line as in a mapped GGUF file;"
           " %d samples of 1\ncall; read: %s over the buffer, %.2f GB/s median, %.2f best\n",
           SH_BUF >> 20, SH_PAST * 2, want, g[best].impl, bench_gbps(&g[best], g[best].med),
           bench_gbps(&g[best], g[best].best));
    printf("  %-12s %-7s %8s %8s %8s   %s\n", "rows x k", "isa", "ms/call", "GB/s", "GB/s-max",
           "/ read (medians; best/best)");
    for (int i = 0; i < rd0; i++) {
        const bench_case *c = &g[i];
        char dim[32];
        snprintf(dim, sizeof dim, "%zux%zu", sc[i].rows, sc[i].k);
        printf("  %-12s %-7s %8.3f %8.2f %8.2f   %.3f; %.3f", dim, c->impl, c->med * 1e3,
               bench_gbps(c, c->med), bench_gbps(c, c->best),
               g[best].med * c->bytes / g[best].bytes / c->med,
               g[best].best * c->bytes / g[best].bytes / c->best);
        if (per == 2 && i % 2 == 1) {
            double rm, rp;
            bench_ratio(c, c - 1, &rm, &rp);
            printf("   %s/%s %.3f paired", c->impl, c[-1].impl, rp);
        }
        printf("\n");
    }
}

int bench_f16_shapes(const dn_w16_kernels *const *tables, const char *const *names, int count,
                     const uint16_t *w, const float *act, float *out, int quick)
{
    static const size_t shp[SHAPES][2] = {
        {8192, 8192}, {2048, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048}};
    if (count < 1) return 0;
    count = count < MAX_TABLES ? count : MAX_TABLES;
    uint16_t *buf = bench_alloc(SH_BUF);
    float *x = bench_alloc(W_DIM * sizeof(float));
    uint16_t *xh = bench_alloc(W_DIM * sizeof(uint16_t));
    if (!buf || !x || !xh) {
        free(buf), free(x), free(xh);
        return -1;
    }
    for (size_t o = 0; o < SH_BUF / 2; o += W_DIM * W_DIM) memcpy(buf + o, w, W_DIM * W_DIM * 2);
    tables[0]->from_f32(act, xh, W_DIM);
    tables[0]->widen(xh, x, W_DIM);
    static shape_ctx sc[SHAPES * MAX_TABLES];
    static bench_case g[SHAPES * MAX_TABLES + 16];
    int n = 0, want = quick ? 15 : 41;
    for (int s = 0; s < SHAPES; s++)
        for (int i = 0; i < count; i++) {
            /* each case starts 48 MiB past the last one's start: what another
               case read just before is never in the last-level cache */
            size_t start = ((size_t)n * (48 << 20) / 2) % (SH_BUF / 2);
            sc[n] = (shape_ctx){tables[i], shp[s][0], shp[s][1], x, xh, out, buf, start};
            g[n] = (bench_case){.op = "mat_vec",
                                .impl = names[i],
                                .call = call_shape,
                                .ctx = &sc[n],
                                .n = shp[s][0] * shp[s][1],
                                .bytes = 2.0 * (double)shp[s][0] * (double)shp[s][1],
                                .reps = 1,
                                .want = want};
            n++;
        }
    int rd0 = n;
    n = bench_add_read_cases(g, n, NULL, buf, SH_BUF, want);
    for (int i = 0; i < n; i++) g[i].call ? g[i].call(&g[i]) : (void)0;
    bench_run_group_shuffled(g, n);
    print_shapes(g, sc, rd0, bench_best_case(g, rd0, n), count, want);
    free(buf);
    free(x);
    free(xh);
    return 0;
}
