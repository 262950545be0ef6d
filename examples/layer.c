/* SPDX-License-Identifier: MIT */
/*
 * examples/layer.c: one transformer layer's decode step on the public API,
 * written twice, and the proof that both give the same bits.
 *
 * The layer: hidden 2048, 16 query heads over 4 KV heads of 128, SwiGLU FFN
 * of 5632, Q4_K weights, a binary16 KV cache holding 512 earlier positions.
 *
 *  - "per call": what an engine wrote before prepared activations and the
 *    element-wise operations: each product quantizes its activation
 *    (dn_quantize) and dn_mat_vec prepares it again, Q, K and V are three
 *    products, the residual adds and the SwiGLU gate are loops of dn_fadd,
 *    dn_fmul and dn_silu;
 *  - "prepared": one dn_act per activation (prepared in memory the engine
 *    owns, sized once by dn_act_size), Q/K/V and gate/up as grouped products
 *    (dn_act_mat_vec_multi), dn_vec_add_rmsnorm, dn_vec_silu_mul, dn_vec_add.
 *
 * Both run the same tokens over their own caches; the program prints each
 * operation's time (median over the tokens) and fails unless every output
 * bit agrees.
 *
 *   ./decodenum_layer [tokens] [threads]      (default: 8 tokens, 1 thread)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <decodenum.h>

enum { HIDDEN = 2048, HEADS = 16, KV_HEADS = 4, HEAD_DIM = 128, FFN = 5632, PAST = 512 };
enum { QROWS = HEADS * HEAD_DIM, KVROWS = KV_HEADS * HEAD_DIM, MAX_TOKENS = 64 };
#define EPS 1e-6f
#define Q4K_BYTES 144 /* bytes of a Q4_K block of 256 weights */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 0x1A7E2;
static uint32_t next(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng >> 33);
}
static float uniform(void) { return (float)next() * 0x1p-30f - 1.0f; } /* [-1, 1) */

/* A rows x n Q4_K matrix of random codes under small finite scales. */
static uint8_t *q4k_matrix(size_t rows, size_t n)
{
    size_t blocks = rows * n / 256;
    uint8_t *w = malloc(blocks * Q4K_BYTES);
    if (!w) return NULL;
    for (size_t b = 0; b < blocks; b++) {
        uint8_t *blk = w + b * Q4K_BYTES;
        for (size_t i = 4; i < Q4K_BYTES; i++) blk[i] = (uint8_t)next();
        uint16_t d = dn_f32_to_f16(0.002f + 0.001f * uniform());
        uint16_t dmin = dn_f32_to_f16(0.001f + 0.0005f * uniform());
        memcpy(blk, &d, 2), memcpy(blk + 2, &dmin, 2);
    }
    return w;
}

typedef struct layer {
    uint8_t *wq, *wk, *wv, *wo, *wg, *wu, *wd;
    float attn_norm[HIDDEN], ffn_norm[HIDDEN];
    float cos[MAX_TOKENS][HEAD_DIM / 2], sin[MAX_TOKENS][HEAD_DIM / 2];
} layer;

/* One path's state: its residual stream, its cache, its scratch. */
typedef struct path {
    float resid[HIDDEN], h[HIDDEN], q[QROWS], k[KVROWS], v[KVROWS], att[QROWS], o[HIDDEN];
    float g[FFN], u[FFN], d[HIDDEN];
    dn_kv_cache cache;
    void *work;
    size_t work_bytes;
    double t[8][MAX_TOKENS]; /* seconds per operation and token */
} path;

enum { OP_NORM, OP_QKV, OP_ATTEND, OP_OUT, OP_ADD_NORM, OP_GATE_UP, OP_SWIGLU, OP_DOWN };
static const char *op_names[8] = {"rmsnorm",     "q, k, v",  "rope + attend", "o proj",
                                  "add+rmsnorm", "gate, up", "swiglu",        "down + add"};

static int path_init(path *p, size_t capacity)
{
    memset(p, 0, sizeof *p);
    size_t row = KV_HEADS * HEAD_DIM;
    p->cache = (dn_kv_cache){malloc(capacity * row * 2),
                             malloc(capacity * row * 2),
                             NULL,
                             NULL,
                             HEAD_DIM,
                             KV_HEADS,
                             row,
                             HEAD_DIM,
                             1,
                             1,
                             DN_KV_F16,
                             0};
    dn_attn_params prm = {HEADS, 0, capacity, 1.0f / sqrtf(HEAD_DIM), 0, 0};
    dn_attend_work_size(&p->cache, &prm, &p->work_bytes, NULL);
    p->work = malloc(p->work_bytes);
    return p->cache.k && p->cache.v && p->work;
}

/* The earlier positions both paths' caches hold, and the first residual. */
static void fill_past(path *a, path *b)
{
    float k[KVROWS], v[KVROWS];
    for (size_t pos = 0; pos < PAST; pos++) {
        for (size_t i = 0; i < KVROWS; i++) k[i] = uniform(), v[i] = uniform();
        dn_cache_append(&a->cache, pos, k, v);
        dn_cache_append(&b->cache, pos, k, v);
    }
    for (size_t i = 0; i < HIDDEN; i++) a->resid[i] = b->resid[i] = uniform();
}

/* RoPE on every head of q and k (NeoX pairing), the token into the cache,
   attention over every position so far. */
static int rope_attend(const layer *L, path *p, size_t token, dn_pool *pool)
{
    const float *c = L->cos[token], *s = L->sin[token];
    for (size_t h = 0; h < HEADS; h++)
        dn_rope(p->q + h * HEAD_DIM, HEAD_DIM, c, s, HEAD_DIM / 2, DN_ROPE_NEOX,
                p->q + h * HEAD_DIM);
    for (size_t h = 0; h < KV_HEADS; h++)
        dn_rope(p->k + h * HEAD_DIM, HEAD_DIM, c, s, HEAD_DIM / 2, DN_ROPE_NEOX,
                p->k + h * HEAD_DIM);
    size_t pos = PAST + token;
    if (dn_cache_append(&p->cache, pos, p->k, p->v) != DN_OK) return 0;
    dn_attn_params prm = {HEADS, 0, pos + 1, 1.0f / sqrtf(HEAD_DIM), 0, 0};
    return dn_attend(&p->cache, &prm, p->q, p->att, p->work, p->work_bytes, pool) == DN_OK;
}

/* ---- the layer on per-call products and scalar loops ------------------------- */

/* out = W x as an engine called it per product: x quantized (Sub32, one
   word), then dn_mat_vec (which prepares it again). */
static int per_call_mat_vec(const uint8_t *w, size_t rows, const float *x, size_t n, float *out,
                            dn_pool *pool)
{
    int16_t *codes = malloc(n * sizeof *codes);
    dn_act_scale *scales = malloc(n / 32 * sizeof *scales);
    dn_act_row row = {codes, scales, n, 0, DN_WORDS_ONE};
    int ok = codes && scales && dn_quantize(x, n, DN_WORDS_ONE, &row, NULL) == DN_OK &&
             dn_mat_vec(DN_TYPE_Q4_K, w, rows, n, &row, DN_ACT_SUB32, out, pool, NULL) == DN_OK;
    free(codes), free(scales);
    return ok;
}

static int per_call_token(const layer *L, path *p, size_t token, dn_pool *pool)
{
    double t0 = now();
    int ok = dn_rmsnorm(p->resid, L->attn_norm, EPS, p->h, HIDDEN) == DN_OK;
    double t1 = now();
    ok = ok && per_call_mat_vec(L->wq, QROWS, p->h, HIDDEN, p->q, pool) &&
         per_call_mat_vec(L->wk, KVROWS, p->h, HIDDEN, p->k, pool) &&
         per_call_mat_vec(L->wv, KVROWS, p->h, HIDDEN, p->v, pool);
    double t2 = now();
    ok = ok && rope_attend(L, p, token, pool);
    double t3 = now();
    ok = ok && per_call_mat_vec(L->wo, HIDDEN, p->att, QROWS, p->o, pool);
    double t4 = now();
    for (size_t i = 0; i < HIDDEN; i++) p->resid[i] = dn_fadd(p->resid[i], p->o[i]);
    ok = ok && dn_rmsnorm(p->resid, L->ffn_norm, EPS, p->h, HIDDEN) == DN_OK;
    double t5 = now();
    ok = ok && per_call_mat_vec(L->wg, FFN, p->h, HIDDEN, p->g, pool) &&
         per_call_mat_vec(L->wu, FFN, p->h, HIDDEN, p->u, pool);
    double t6 = now();
    for (size_t i = 0; i < FFN; i++) p->g[i] = dn_fmul(dn_silu(p->g[i]), p->u[i]);
    double t7 = now();
    ok = ok && per_call_mat_vec(L->wd, HIDDEN, p->g, FFN, p->d, pool);
    for (size_t i = 0; i < HIDDEN; i++) p->resid[i] = dn_fadd(p->resid[i], p->d[i]);
    double t8 = now(), ts[9] = {t0, t1, t2, t3, t4, t5, t6, t7, t8};
    for (int op = 0; op < 8; op++) p->t[op][token] = ts[op + 1] - ts[op];
    return ok;
}

/* ---- the layer on prepared activations and element-wise operations ---------- */

typedef struct prepared {
    void *mem; /* one buffer for every dn_act of the layer, sized for the largest */
    size_t bytes;
} prepared;

static int prepared_init(prepared *a)
{
    size_t b1, b2;
    if (dn_act_size(HIDDEN, 1, DN_ACT_SUB32, DN_WORDS_ONE, &b1) != DN_OK ||
        dn_act_size(FFN, 1, DN_ACT_SUB32, DN_WORDS_ONE, &b2) != DN_OK)
        return 0;
    a->bytes = b1 > b2 ? b1 : b2;
    a->mem = malloc(a->bytes);
    return a->mem != NULL;
}

/* x prepared once in a's memory (the previous activation is no longer needed). */
static const dn_act *prepare(const prepared *a, const float *x, size_t n)
{
    dn_act *act = NULL;
    dn_act_prepare(x, n, 1, DN_ACT_SUB32, DN_WORDS_ONE, a->mem, a->bytes, &act, NULL);
    return act;
}

static int prepared_token(const layer *L, const prepared *a, path *p, size_t token, dn_pool *pool)
{
    double t0 = now();
    int ok = dn_rmsnorm(p->resid, L->attn_norm, EPS, p->h, HIDDEN) == DN_OK;
    double t1 = now();
    const dn_act *act = prepare(a, p->h, HIDDEN);
    dn_act_matrix qkv[3] = {{DN_TYPE_Q4_K, L->wq, QROWS, p->q},
                            {DN_TYPE_Q4_K, L->wk, KVROWS, p->k},
                            {DN_TYPE_Q4_K, L->wv, KVROWS, p->v}};
    ok = ok && act && dn_act_mat_vec_multi(act, 0, qkv, 3, pool, NULL, NULL) == DN_OK;
    double t2 = now();
    ok = ok && rope_attend(L, p, token, pool);
    double t3 = now();
    act = prepare(a, p->att, QROWS);
    ok =
        ok && act && dn_act_mat_vec(act, 0, DN_TYPE_Q4_K, L->wo, HIDDEN, p->o, pool, NULL) == DN_OK;
    double t4 = now();
    ok = ok && dn_vec_add_rmsnorm(p->resid, p->o, L->ffn_norm, EPS, p->h, HIDDEN) == DN_OK;
    double t5 = now();
    act = prepare(a, p->h, HIDDEN);
    dn_act_matrix gate_up[2] = {{DN_TYPE_Q4_K, L->wg, FFN, p->g}, {DN_TYPE_Q4_K, L->wu, FFN, p->u}};
    ok = ok && act && dn_act_mat_vec_multi(act, 0, gate_up, 2, pool, NULL, NULL) == DN_OK;
    double t6 = now();
    ok = ok && dn_vec_silu_mul(p->g, p->u, p->g, FFN, pool) == DN_OK;
    double t7 = now();
    act = prepare(a, p->g, FFN);
    ok =
        ok && act && dn_act_mat_vec(act, 0, DN_TYPE_Q4_K, L->wd, HIDDEN, p->d, pool, NULL) == DN_OK;
    ok = ok && dn_vec_add(p->resid, p->d, p->resid, HIDDEN, pool) == DN_OK;
    double t8 = now(), ts[9] = {t0, t1, t2, t3, t4, t5, t6, t7, t8};
    for (int op = 0; op < 8; op++) p->t[op][token] = ts[op + 1] - ts[op];
    return ok;
}

/* ---- the run ------------------------------------------------------------------ */

static int layer_init(layer *L, size_t tokens)
{
    L->wq = q4k_matrix(QROWS, HIDDEN), L->wk = q4k_matrix(KVROWS, HIDDEN);
    L->wv = q4k_matrix(KVROWS, HIDDEN), L->wo = q4k_matrix(HIDDEN, QROWS);
    L->wg = q4k_matrix(FFN, HIDDEN), L->wu = q4k_matrix(FFN, HIDDEN);
    L->wd = q4k_matrix(HIDDEN, FFN);
    for (size_t i = 0; i < HIDDEN; i++)
        L->attn_norm[i] = 1.0f + 0.1f * uniform(), L->ffn_norm[i] = 1.0f + 0.1f * uniform();
    float w[HEAD_DIM / 2];
    int32_t pos[MAX_TOKENS];
    for (size_t t = 0; t < tokens; t++) pos[t] = (int32_t)(PAST + t);
    return L->wq && L->wk && L->wv && L->wo && L->wg && L->wu && L->wd &&
           dn_rope_freqs(10000.0f, HEAD_DIM, 1.0f, w) == DN_OK &&
           dn_rope_table(pos, tokens, w, HEAD_DIM / 2, &L->cos[0][0], &L->sin[0][0]) == DN_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_ms(double *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_double);
    return 1e3 * (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2);
}

static void report(path *a, path *b, size_t tokens)
{
    double ta = 0, tb = 0;
    printf("%-14s %12s %12s\n", "operation", "per call ms", "prepared ms");
    for (int op = 0; op < 8; op++) {
        double ma = median_ms(a->t[op], tokens), mb = median_ms(b->t[op], tokens);
        ta += ma, tb += mb;
        printf("%-14s %12.3f %12.3f\n", op_names[op], ma, mb);
    }
    printf("%-14s %12.3f %12.3f\n", "layer", ta, tb);
}

int main(int argc, char **argv)
{
    size_t tokens = argc > 1 ? (size_t)atoi(argv[1]) : 8;
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    if (tokens < 1 || tokens > MAX_TOKENS || threads < 1 || threads > 64) {
        fprintf(stderr, "usage: %s [tokens 1..%d] [threads 1..64]\n", argv[0], MAX_TOKENS);
        return 2;
    }
    static layer L;
    static path a, b;
    prepared act;
    dn_pool *pool = threads > 1 ? dn_pool_create(threads) : NULL;
    if (!layer_init(&L, tokens) || !path_init(&a, PAST + tokens) || !path_init(&b, PAST + tokens) ||
        !prepared_init(&act)) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_past(&a, &b);
    printf("one layer (hidden %d, %d x %d heads over %d KV heads, FFN %d, Q4_K, %d cached "
           "positions), %zu tokens, %u thread(s), isa %s\n",
           HIDDEN, HEADS, HEAD_DIM, KV_HEADS, FFN, PAST, tokens, threads,
           dn_isa_name(dn_isa_active()));
    int same = 1;
    for (size_t t = 0; t < tokens; t++) {
        if (!per_call_token(&L, &a, t, pool) || !prepared_token(&L, &act, &b, t, pool)) {
            fprintf(stderr, "a call failed at token %zu\n", t);
            return 1;
        }
        same &= memcmp(a.resid, b.resid, sizeof a.resid) == 0;
    }
    report(&a, &b, tokens);
    uint32_t first;
    memcpy(&first, &b.resid[0], 4);
    printf("output bits: %s (residual[0] = 0x%08x after %zu tokens)\n",
           same ? "the same on both paths" : "DIFFER", first, tokens);
    dn_pool_destroy(pool);
    free(act.mem);
    return same ? 0 : 1;
}
