/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-gdn: one decode token through a Gated-DeltaNet layer of 32
 * heads of S = 128 (16 key heads), the eager layer on 1 and 2 threads for
 * each store, the lazily flushed heads amortised over their flush period
 * (logs of 8, 16 and 64 tokens; flushes included), and the convolution of
 * 8192 channels x 4 taps; the bytes of state each reads and writes per token
 * against the read bandwidth over a buffer of the state's size.
 *
 * A layer's state (2 MiB in f32) stays in the L2/L3 when one layer is run
 * again and again; a model's do not (36 such layers: 72 MiB in f32), so the
 * eager layer is also timed through a stack of DEPTH layers' states, one
 * token through each in turn (the time quoted per layer): there the state
 * comes from memory, and a 16-bit store halves what a token moves. One
 * stack per store (the 1- and 2-thread cases share it: 72 + 36 + 36 MiB).
 *
 *   ./bench/decodenum-bench-gdn [--quick]
 */
#include "common.h"

#include "decodenum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HEADS = 32, KEY_HEADS = 16, S = 128, CH = 8192, TAPS = 4, DEPTH = 36 };

/* One layer's buffers and the heads' inputs. */
typedef struct layer {
    dn_gdn_shape shape;
    void *state;
    float q[KEY_HEADS * S], k[KEY_HEADS * S], v[HEADS * S], g[HEADS], beta[HEADS], out[HEADS * S];
    dn_pool *pool;
    dn_gdn_lazy *lazy[HEADS];
} layer;

static void fill(float *x, size_t n, float lo, float hi, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005u + 1442695040888963407u;
        x[i] = lo + (hi - lo) * (float)(*s >> 40) * 0x1p-24f;
    }
}

/* The one 2-thread pool of every 2-thread case, as an engine has one: a
   pool per case left the last case's worker watching for work (200 us)
   while the next case's ran. */
static dn_pool *pool2;

static layer *layer_new(dn_gdn_store store, unsigned threads, size_t log)
{
    layer *L = calloc(1, sizeof *L);
    uint64_t s = 42;
    L->shape = (dn_gdn_shape){HEADS, KEY_HEADS, S, S, (uint32_t)store};
    size_t elems = (size_t)HEADS * S * S, bytes = elems * dn_gdn_store_bytes(store);
    L->state = malloc(bytes);
    float *tmp = malloc(elems * sizeof *tmp);
    fill(tmp, elems, -0.05f, 0.05f, &s);
    for (size_t i = 0; i < elems; i++) {
        if (store == DN_GDN_STORE_F32)
            ((float *)L->state)[i] = tmp[i];
        else
            ((uint16_t *)L->state)[i] =
                store == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(tmp[i]) : dn_f32_to_f16(tmp[i]);
    }
    free(tmp);
    fill(L->q, sizeof L->q / 4, -1, 1, &s), fill(L->k, sizeof L->k / 4, -1, 1, &s);
    for (int h = 0; h < KEY_HEADS; h++) {
        dn_l2norm(L->q + h * S, 1e-6f, L->q + h * S, S);
        dn_l2norm(L->k + h * S, 1e-6f, L->k + h * S, S);
    }
    fill(L->v, sizeof L->v / 4, -1, 1, &s);
    fill(L->g, HEADS, -0.1f, -0.01f, &s), fill(L->beta, HEADS, 0.1f, 0.9f, &s);
    L->pool = threads > 1 ? pool2 : NULL;
    for (int h = 0; log && h < HEADS; h++)
        dn_gdn_lazy_create((char *)L->state + (size_t)h * S * S * dn_gdn_store_bytes(store), store,
                           S, S, log, &L->lazy[h]);
    return L;
}

static void layer_free(layer *L)
{
    for (int h = 0; h < HEADS; h++) dn_gdn_lazy_destroy(L->lazy[h]);
    free(L->state);
    free(L);
}

static void eager_call(bench_case *c)
{
    layer *L = c->ctx;
    dn_gdn_layer(L->state, &L->shape, 1, L->q, L->k, L->v, L->g, L->beta, 0.0883883f, L->out,
                 L->pool);
    c->result = L->out[0];
}

static void lazy_call(bench_case *c)
{
    layer *L = c->ctx;
    for (int h = 0; h < HEADS; h++) {
        const float *q = L->q + h / 2 * S, *k = L->k + h / 2 * S;
        dn_gdn_lazy_step(L->lazy[h], q, k, L->v + h * S, L->g[h], L->beta[h], 0.0883883f,
                         L->out + h * S);
    }
    c->result = L->out[0];
}

/* DEPTH layers' states of one store, sharing one layer's inputs (one stack
   per store: its 1- and 2-thread cases run through the same states). */
typedef struct stack {
    const layer *in;
    void *state[DEPTH];
} stack;

/* A stack run on one layer's pool (NULL: the calling thread). */
typedef struct stack_run {
    const stack *k;
    dn_pool *pool;
} stack_run;

static stack *stack_new(const layer *in)
{
    stack *k = calloc(1, sizeof *k);
    size_t bytes = (size_t)HEADS * S * S * dn_gdn_store_bytes((dn_gdn_store)in->shape.store);
    k->in = in;
    for (int l = 0; l < DEPTH; l++) {
        k->state[l] = bench_alloc(bytes);
        if (k->state[l]) memcpy(k->state[l], in->state, bytes);
    }
    return k;
}

static void stack_free(stack *k)
{
    for (int l = 0; k && l < DEPTH; l++) free(k->state[l]);
    free(k);
}

static void stack_call(bench_case *c)
{
    const stack_run *run = c->ctx;
    const layer *L = run->k->in;
    float out[HEADS * S];
    for (int l = 0; l < DEPTH; l++)
        dn_gdn_layer(run->k->state[l], &L->shape, 1, L->q, L->k, L->v, L->g, L->beta, 0.0883883f,
                     out, run->pool);
    c->result = out[0];
}

/* The eager case of L's store and pool through the store's stack. */
static bench_case deep_case(const layer *L, const char *impl, stack_run *run)
{
    bench_case c = {.op = "eager", .impl = impl, .call = stack_call, .ctx = run};
    run->pool = L->pool;
    c.bytes = DEPTH * 2.0 * HEADS * S * S * dn_gdn_store_bytes((dn_gdn_store)L->shape.store);
    return c;
}

/* The cases' times per token (per layer for the DEPTH-layer cases from
   first_deep on) and the 16-bit stores' speed over f32 in both regimes. */
static void print_table(const bench_case *cs, int n, int first_deep)
{
    static const char *store_name[3] = {"f32", "bf16", "f16"};
    printf("%-6s %-13s %10s %10s %12s %8s\n", "op", "variant", "us/token", "best", "state bytes",
           "GB/s");
    for (int i = 0; i < n; i++) {
        double per = i >= first_deep && i < first_deep + 6 ? DEPTH : 1;
        printf("%-6s %-13s %10.1f %10.1f %12.0f %8.1f\n", cs[i].op, cs[i].impl,
               cs[i].med * 1e6 / per, cs[i].best * 1e6 / per, cs[i].bytes / per,
               cs[i].bytes / cs[i].med * 1e-9);
    }
    printf("deep: %d layers' states (%.0f MiB in f32), times per layer\n", DEPTH,
           DEPTH * 4.0 * HEADS * S * S / (1 << 20));
    for (int i = 2; i < 6; i += 2)
        printf("speed of %s over f32, 1 thread: %.2fx (one layer), %.2fx (deep)\n",
               store_name[i / 2], cs[0].med / cs[i].med,
               cs[first_deep].med / cs[first_deep + i].med);
}

typedef struct conv_ctx {
    float *ring, *kernel, *x, *y;
    uint32_t head;
} conv_ctx;

static void conv_call(bench_case *c)
{
    conv_ctx *k = c->ctx;
    dn_gdn_conv_append(k->ring, &k->head, CH, TAPS, k->kernel, k->x, k->y);
    c->result = k->y[0];
}

#ifdef DN_BENCH_GGML
#include "ggml_peer.h"

/* ggml's peers on an f32 layer's inputs: its gated delta net (the state
   copied from L->state into its output, then updated there) and its
   convolution then SiLU over a window of the same kernel. */
typedef struct ggml_side {
    float *gdn_out, *window, *conv_out;
    ggml_peer *gdn[2], *conv;
} ggml_side;

static int add_ggml(bench_case *cs, ggml_side *g, const layer *L, const conv_ctx *cc)
{
    static const char *impls[3] = {"ggml f32 1t", "ggml f32 2t", "ggml conv"};
    int n = 0;
    g->gdn_out = malloc(((size_t)HEADS * S + (size_t)HEADS * S * S) * sizeof(float));
    g->window = malloc((size_t)CH * TAPS * sizeof(float));
    g->conv_out = malloc(CH * sizeof(float));
    if (!g->gdn_out || !g->window || !g->conv_out) return 0;
    for (size_t c = 0; c < CH; c++)
        for (size_t t = 0; t < TAPS; t++) g->window[c * TAPS + t] = cc->x[c] * (float)(t + 1);
    for (int t = 0; t < 2; t++) {
        g->gdn[t] = ggml_peer_gdn_create(HEADS, KEY_HEADS, S, 1, L->q, L->k, L->v, L->g, L->beta,
                                         L->state, g->gdn_out, t + 1);
        if (!g->gdn[t]) continue;
        cs[n] = (bench_case){.op = "eager", .impl = impls[t], .call = ggml_peer_call};
        cs[n].ctx = g->gdn[t], cs[n++].bytes = 2.0 * HEADS * S * S * 4;
    }
    g->conv = ggml_peer_ssm_conv_create(g->window, cc->kernel, CH, TAPS, g->conv_out, 1);
    if (g->conv) {
        cs[n] = (bench_case){.op = "conv", .impl = impls[2], .call = ggml_peer_call};
        cs[n].ctx = g->conv, cs[n++].bytes = (double)CH * (2 * TAPS + 1) * 4;
    }
    return n;
}

static void ggml_side_free(ggml_side *g)
{
    ggml_peer_destroy(g->gdn[0]), ggml_peer_destroy(g->gdn[1]), ggml_peer_destroy(g->conv);
    free(g->gdn_out), free(g->window), free(g->conv_out);
}
#endif

static void usage(const char *argv0) { printf("usage: %s [--quick]\n", argv0); }

/* The read bandwidth over a buffer the size of the f32 state, the
   yardstick of the table's GB/s. */
static void print_bandwidth(int quick)
{
    size_t state_bytes = (size_t)HEADS * S * S * 4;
    void *buf = bench_alloc(state_bytes);
    if (buf) memset(buf, 1, state_bytes);
    bench_bw bw = bench_read_best(buf, state_bytes, 1, quick ? 5 : 11);
    printf("read bandwidth over %zu KiB (1 thread, %s): %.1f GB/s median\n", state_bytes / 1024,
           bw.kernel, bw.med_gbps);
    free(buf);
}

int main(int argc, char **argv)
{
#ifdef DN_BENCH_GGML
    ggml_peer_quiet_openmp(argv); /* before anything is printed */
#endif
    int quick = 0, rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    bench_print_command("decodenum-bench-gdn: one token, 32 heads x S=128, conv 8192 x 4", argc,
                        argv, NULL, 0);
    bench_print_machine(bench_clock_ghz(0.05));
    bench_print_load();
    static const char *impls[17] = {
        "f32 1t",      "f32 2t",       "bf16 1t",      "bf16 2t",     "f16 1t",     "f16 2t",
        "lazy8 f32",   "lazy16 f32",   "lazy64 f32",   "lazy16 bf16", "conv",       "f32 1t deep",
        "f32 2t deep", "bf16 1t deep", "bf16 2t deep", "f16 1t deep", "f16 2t deep"};
    bench_case cs[20];
    stack *deep[3] = {0};
    stack_run runs[6];
    layer *Ls[10];
    memset(cs, 0, sizeof cs);
    pool2 = dn_pool_create(2);
    int n = 0;
    for (int st = 0; st < 3; st++)
        for (unsigned t = 1; t <= 2; t++, n++) {
            Ls[n] = layer_new((dn_gdn_store)st, t, 0);
            cs[n] = (bench_case){.op = "eager", .impl = impls[n], .call = eager_call, .ctx = Ls[n]};
            cs[n].bytes = 2.0 * HEADS * S * S * dn_gdn_store_bytes((dn_gdn_store)st);
        }
    const size_t logs[4] = {8, 16, 64, 16};
    for (int i = 0; i < 4; i++, n++) {
        dn_gdn_store st = i == 3 ? DN_GDN_STORE_BF16 : DN_GDN_STORE_F32;
        Ls[n] = layer_new(st, 1, logs[i]);
        cs[n] = (bench_case){.op = "lazy", .impl = impls[n], .call = lazy_call, .ctx = Ls[n]};
        /* read once a token, written once a period */
        cs[n].bytes = (1.0 + 1.0 / (double)logs[i]) * HEADS * S * S * dn_gdn_store_bytes(st);
    }
    conv_ctx cc = {calloc(CH * (TAPS - 1), 4), malloc(CH * TAPS * 4), malloc(CH * 4),
                   malloc(CH * 4), 0};
    uint64_t s = 7;
    fill(cc.kernel, CH * TAPS, -0.5f, 0.5f, &s), fill(cc.x, CH, -1, 1, &s);
    cs[n] = (bench_case){.op = "conv", .impl = impls[n], .call = conv_call, .ctx = &cc};
    cs[n].bytes = (double)CH * (2 * TAPS + 1) * 4;
    int conv_i = n++, first_deep = n;
    (void)conv_i; /* the ggml peer's conv is compared with it */
    for (int i = 0; i < 6; i++, n++) {
        if (i % 2 == 0) deep[i / 2] = stack_new(Ls[i]);
        runs[i].k = deep[i / 2];
        cs[n] = deep_case(Ls[i], impls[11 + i], &runs[i]);
    }
#ifdef DN_BENCH_GGML
    ggml_side gs = {0};
    int ours = n;
    printf("peer: ggml_gated_delta_net (f32 state) and ggml_ssm_conv + ggml_silu, %s\n",
           ggml_peer_build());
    n += add_ggml(cs + n, &gs, Ls[0], &cc);
#endif
    for (int i = 0; i < n; i++) {
        cs[i].want = quick ? 5 : 15;
        bench_calibrate(&cs[i], quick ? 0.02 : 0.1, quick ? 0.01 : 0.03);
    }
    bench_run_group_shuffled(cs, n);
    print_bandwidth(quick);
    print_table(cs, n, first_deep);
#ifdef DN_BENCH_GGML
    for (int i = ours; i < n; i++) {
        const bench_case *mine = &cs[strcmp(cs[i].impl, "ggml conv") == 0     ? conv_i
                                     : strcmp(cs[i].impl, "ggml f32 2t") == 0 ? 1
                                                                              : 0];
        printf("speed over %s: %s %.2fx\n", cs[i].impl, mine->impl, cs[i].med / mine->med);
    }
    ggml_side_free(&gs);
#endif
    for (int i = 0; i < 3; i++) stack_free(deep[i]);
    for (int i = 0; i < 10; i++) layer_free(Ls[i]);
    dn_pool_destroy(pool2);
    free(cc.ring), free(cc.kernel), free(cc.x), free(cc.y);
    return 0;
}
