/* SPDX-License-Identifier: MIT */
/*
 * The Gated-DeltaNet module's public entry points: argument checks (sizes
 * through sizes.h, before any allocation; every input finite before anything
 * is written), the split of a layer's heads over a dn_pool, and the calls of
 * the active ISA's kernels. Each row is computed by one kernel call in the
 * reference's order, so neither the pool nor the split changes a bit. Then
 * the lazily flushed head: its log, its fold, its flushes.
 */
#include "dispatch.h"
#include "pool.h"
#include "sizes.h"

#include "decodenum/math.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

size_t dn_gdn_store_bytes(dn_gdn_store store)
{
    switch (store) {
    case DN_GDN_STORE_F32: return 4;
    case DN_GDN_STORE_BF16:
    case DN_GDN_STORE_F16: return 2;
    }
    return 0;
}

/* No early exit, so the compiler vectorizes it: an 8192-channel check took
   8.7% of a conv call with isfinite per element. */
static int all_finite(const float *x, size_t n)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        bad |= (u & 0x7F800000u) == 0x7F800000u;
    }
    return !bad;
}

/* ---- conv ------------------------------------------------------------------ */

static dn_status check_conv(const float *ring, const uint32_t *head, size_t channels, size_t taps,
                            const float *kernel, const float *x, const float *y)
{
    size_t ring_elems, kernel_elems;
    if (taps == 0 || !head) return DN_ERR_INVALID_ARGUMENT;
    if (!dn_size_mul(channels, taps - 1, &ring_elems) ||
        !dn_size_mul(channels, taps, &kernel_elems) || kernel_elems > SIZE_MAX / sizeof(float))
        return DN_ERR_INVALID_ARGUMENT;
    if ((ring_elems && !ring) || (channels && (!kernel || !x || !y)))
        return DN_ERR_INVALID_ARGUMENT;
    if (taps > 1 ? *head >= taps - 1 : *head != 0) return DN_ERR_INVALID_ARGUMENT;
    if (!all_finite(x, channels)) return DN_ERR_NON_FINITE;
    return DN_OK;
}

dn_status dn_gdn_conv(const float *ring, const uint32_t *head, size_t channels, size_t taps,
                      const float *kernel, const float *x, float *y)
{
    dn_status st = check_conv(ring, head, channels, taps, kernel, x, y);
    if (st != DN_OK) return st;
    dn_kernels_active()->gdn->conv(ring, *head, channels, taps, kernel, x, y);
    return DN_OK;
}

dn_status dn_gdn_conv_append(float *ring, uint32_t *head, size_t channels, size_t taps,
                             const float *kernel, const float *x, float *y)
{
    dn_status st = dn_gdn_conv(ring, head, channels, taps, kernel, x, y);
    if (st != DN_OK || taps == 1) return st;
    for (size_t c = 0; c < channels; c++) ring[*head * channels + c] = x[c];
    *head = (uint32_t)((*head + 1) % (taps - 1));
    return DN_OK;
}

/* ---- one row --------------------------------------------------------------- */

static dn_status check_row(const void *row, dn_gdn_store store, const float *k, size_t dk)
{
    size_t bytes, b = dn_gdn_store_bytes(store);
    if (!b || dk == 0 || !row || !k || !dn_size_mul(dk, b, &bytes)) return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

dn_status dn_gdn_update(void *row, dn_gdn_store store, const float *k, size_t dk, float v,
                        float decay, float beta, float *coef)
{
    dn_status st = check_row(row, store, k, dk);
    if (st != DN_OK) return st;
    if (!coef) return DN_ERR_INVALID_ARGUMENT;
    if (!all_finite(k, dk) || !isfinite(v) || !isfinite(decay) || !isfinite(beta))
        return DN_ERR_NON_FINITE;
    *coef = dn_ref_gdn_update(row, store, k, dk, v, decay, beta);
    return DN_OK;
}

dn_status dn_gdn_row(void *row, dn_gdn_store store, const float *k, const float *q, size_t dk,
                     float v, float decay, float beta, float kq, float scale, float *out)
{
    dn_status st = check_row(row, store, k, dk);
    if (st != DN_OK) return st;
    if (!q || !out) return DN_ERR_INVALID_ARGUMENT;
    if (!all_finite(k, dk) || !all_finite(q, dk) || !isfinite(v) || !isfinite(decay) ||
        !isfinite(beta) || !isfinite(kq) || !isfinite(scale))
        return DN_ERR_NON_FINITE;
    dn_gdn_token t = {q, k, &v, decay, beta, kq, scale};
    dn_kernels_active()->gdn->rows(row, store, dk, 0, 1, &t, out);
    return DN_OK;
}

/* ---- heads and layers -------------------------------------------------------- */

static dn_gdn_token make_token(const float *q, const float *k, const float *v, float g, float beta,
                               float scale, size_t dk)
{
    dn_gdn_token t = {q, k, v, dn_exp(g), beta, 0.0f, scale};
    t.kq = dn_kernels_active()->fp32->fdot(k, q, dk);
    return t;
}

dn_status dn_gdn_head(void *state, dn_gdn_store store, size_t dk, size_t dv, const float *q,
                      const float *k, const float *v, float g, float beta, float scale, float *out)
{
    dn_gdn_shape one = {1, 1, (uint32_t)dk, (uint32_t)dv, (uint32_t)store};
    if (dk > UINT32_MAX || dv > UINT32_MAX) return DN_ERR_INVALID_ARGUMENT;
    return dn_gdn_layer(state, &one, 1, q, k, v, &g, &beta, scale, out, NULL);
}

/* Elements per token of each layer input, and the state's bytes. */
typedef struct layer_sizes {
    size_t qk, vo, head_state, state_bytes;
} layer_sizes;

static dn_status check_shape(const dn_gdn_shape *s, layer_sizes *z)
{
    if (!s || s->heads == 0 || s->key_heads == 0 || s->heads % s->key_heads || s->dk == 0 ||
        s->dv == 0 || !dn_gdn_store_bytes((dn_gdn_store)s->store))
        return DN_ERR_INVALID_ARGUMENT;
    size_t elems;
    if (!dn_size_mul(s->key_heads, s->dk, &z->qk) || !dn_size_mul(s->heads, s->dv, &z->vo) ||
        !dn_size_mul(s->dv, s->dk, &z->head_state) ||
        !dn_size_mul(z->head_state, s->heads, &elems) ||
        !dn_size_mul(elems, dn_gdn_store_bytes((dn_gdn_store)s->store), &z->state_bytes) ||
        z->qk > SIZE_MAX / 4 || z->vo > SIZE_MAX / 4)
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

/* Lanes a layer's heads are split into on a pool (more threads than this
   share lanes). */
#define MAX_LANES 64

/* One token of a layer, as the heads' tasks read it: heads [first, first +
   count) in `lanes` contiguous ranges, next[l] the next unclaimed head of
   range l. */
typedef struct layer_token {
    const dn_gdn_kernels *kern;
    const dn_gdn_shape *s;
    size_t head_state, first, count, lanes;
    char *state;
    const float *q, *k, *v, *g, *beta;
    float scale;
    float *out;
    atomic_size_t next[MAX_LANES];
} layer_token;

static void run_head(size_t t, void *ctx)
{
    const layer_token *L = ctx;
    size_t h = L->first + t, dk = L->s->dk, dv = L->s->dv;
    size_t kh = h / (L->s->heads / L->s->key_heads);
    const float *q = L->q + kh * dk, *k = L->k + kh * dk;
    dn_gdn_token tok = make_token(q, k, L->v + h * dv, L->g[h], L->beta[h], L->scale, dk);
    dn_gdn_store store = (dn_gdn_store)L->s->store;
    void *state = L->state + h * L->head_state * dn_gdn_store_bytes(store);
    L->kern->rows(state, store, dk, 0, dv, &tok, L->out + h * dv);
}

/* Lane l's task: its own range of heads in order, then what is left of the
   others' (a thread that starts late, or is slowed, is helped). The caller
   of dn_pool_run claims lane 0 first and the workers the next ones, so a
   head's state stays in the cache of the core that ran it the token before
   (heads claimed one by one moved between the cores every token). 32 heads
   of S = 128 on the 2-core AMD EPYC VM, best wall time of 2,000 calls
   against one thread's: f32 / bf16 / f16 1.29x / 1.71x / 1.85x claimed one
   by one, 1.76x / 1.79x / 1.86x in lanes. Which thread runs a head never
   changes a bit. */
static void run_lane(size_t l, void *ctx)
{
    layer_token *L = ctx;
    for (size_t i = 0; i < L->lanes; i++) {
        size_t lane = (l + i) % L->lanes, begin = lane * L->count / L->lanes;
        size_t size = (lane + 1) * L->count / L->lanes - begin, t;
        while ((t = atomic_fetch_add_explicit(&L->next[lane], 1, memory_order_relaxed)) < size)
            run_head(begin + t, L);
    }
}

/* Every input of heads [h0, h1) of `tokens` tokens finite. */
static int layer_finite(const dn_gdn_shape *s, const layer_sizes *z, size_t tokens, const float *q,
                        const float *k, const float *v, const float *g, const float *beta,
                        size_t h0, size_t h1)
{
    size_t ratio = s->heads / s->key_heads, kh0 = h0 / ratio, kh1 = dn_size_div_up(h1, ratio);
    for (size_t t = 0; t < tokens; t++) {
        size_t qk = t * z->qk + kh0 * s->dk, n = (kh1 - kh0) * s->dk;
        if (!all_finite(q + qk, n) || !all_finite(k + qk, n) ||
            !all_finite(v + t * z->vo + h0 * s->dv, (h1 - h0) * s->dv) ||
            !all_finite(g + t * s->heads + h0, h1 - h0) ||
            !all_finite(beta + t * s->heads + h0, h1 - h0))
            return 0;
    }
    return 1;
}

static dn_status run_layer(void *state, const dn_gdn_shape *s, size_t tokens, const float *q,
                           const float *k, const float *v, const float *g, const float *beta,
                           float scale, float *out, size_t h0, size_t h1, dn_pool *pool)
{
    layer_sizes z;
    dn_status st = check_shape(s, &z);
    if (st != DN_OK) return st;
    size_t all;
    if (h0 > h1 || h1 > s->heads || !dn_size_mul(tokens, z.qk + z.vo + 2 * (size_t)s->heads, &all))
        return DN_ERR_INVALID_ARGUMENT;
    if (tokens == 0 || h0 == h1) return DN_OK;
    if (!state || !q || !k || !v || !g || !beta || !out) return DN_ERR_INVALID_ARGUMENT;
    if (!isfinite(scale) || !layer_finite(s, &z, tokens, q, k, v, g, beta, h0, h1))
        return DN_ERR_NON_FINITE;
    layer_token L = {.kern = dn_kernels_active()->gdn,
                     .s = s,
                     .head_state = z.head_state,
                     .first = h0,
                     .count = h1 - h0,
                     .state = state,
                     .scale = scale};
    size_t threads = dn_pool_threads(pool);
    L.lanes = threads < L.count ? threads : L.count;
    if (L.lanes > MAX_LANES) L.lanes = MAX_LANES;
    for (size_t t = 0; t < tokens; t++) {
        L.q = q + t * z.qk, L.k = k + t * z.qk, L.v = v + t * z.vo;
        L.g = g + t * s->heads, L.beta = beta + t * s->heads, L.out = out + t * z.vo;
        for (size_t l = 0; l < L.lanes; l++)
            atomic_store_explicit(&L.next[l], 0, memory_order_relaxed);
        dn_pool_run(pool, L.lanes, run_lane, &L);
    }
    return DN_OK;
}

dn_status dn_gdn_layer_heads(void *state, const dn_gdn_shape *shape, const float *q, const float *k,
                             const float *v, const float *g, const float *beta, float scale,
                             float *out, size_t head_begin, size_t head_end)
{
    return run_layer(state, shape, 1, q, k, v, g, beta, scale, out, head_begin, head_end, NULL);
}

dn_status dn_gdn_layer(void *state, const dn_gdn_shape *shape, size_t tokens, const float *q,
                       const float *k, const float *v, const float *g, const float *beta,
                       float scale, float *out, dn_pool *pool)
{
    if (!shape) return DN_ERR_INVALID_ARGUMENT;
    return run_layer(state, shape, tokens, q, k, v, g, beta, scale, out, 0, shape->heads, pool);
}

/* ---- the lazily flushed head -------------------------------------------------- */

struct dn_gdn_lazy {
    void *state;
    dn_gdn_store store;
    size_t dk, dv, capacity;
    size_t count;         /* tokens logged, oldest first */
    size_t older;         /* the oldest `older` a trailing flush is replaying (0: none) */
    size_t replayed;      /* rows the trailing flush has replayed them over */
    size_t rows_per_step; /* rows it replays before each token */
    dn_gdn_logged *log;   /* log[i] reads keys + i*dk, values + i*dv */
    float *keys, *values;
    float *y_new, *c_new, *y_all, *c_all; /* the fold's results */
};

dn_status dn_gdn_lazy_create(void *state, dn_gdn_store store, size_t dk, size_t dv, size_t capacity,
                             dn_gdn_lazy **out)
{
    if (!out) return DN_ERR_INVALID_ARGUMENT;
    *out = NULL;
    size_t rows, bytes, width, log_floats, log_bytes;
    if (!state || dk == 0 || dv == 0 || capacity == 0 || !dn_gdn_store_bytes(store) ||
        !dn_size_mul(dk, dv, &rows) || !dn_size_mul(rows, dn_gdn_store_bytes(store), &bytes) ||
        !dn_size_add(dk, dv, &width) || !dn_size_mul(width, capacity, &log_floats) ||
        !dn_size_mul(log_floats, sizeof(float), &bytes) ||
        !dn_size_mul(capacity, sizeof(dn_gdn_logged), &log_bytes) || width > SIZE_MAX / 8)
        return DN_ERR_INVALID_ARGUMENT;
    dn_gdn_lazy *h = calloc(1, sizeof *h);
    if (!h) return DN_ERR_OUT_OF_MEMORY;
    *h = (dn_gdn_lazy){.state = state, .store = store, .dk = dk, .dv = dv, .capacity = capacity};
    h->log = malloc(log_bytes);
    h->keys = malloc(bytes);
    h->y_new = malloc(2 * width * sizeof(float));
    if (!h->log || !h->keys || !h->y_new) {
        dn_gdn_lazy_destroy(h);
        return DN_ERR_OUT_OF_MEMORY;
    }
    h->values = h->keys + capacity * dk;
    h->c_new = h->y_new + dk;
    h->y_all = h->c_new + dv;
    h->c_all = h->y_all + dk;
    *out = h;
    return DN_OK;
}

void dn_gdn_lazy_destroy(dn_gdn_lazy *head)
{
    if (!head) return;
    free(head->log);
    free(head->keys);
    free(head->y_new);
    free(head);
}

size_t dn_gdn_lazy_logged(const dn_gdn_lazy *head) { return head ? head->count : 0; }

/* Drops the oldest n tokens, moving the rest down. */
static void drop_oldest(dn_gdn_lazy *h, size_t n)
{
    size_t left = h->count - n;
    memmove(h->keys, h->keys + n * h->dk, left * h->dk * sizeof(float));
    memmove(h->values, h->values + n * h->dv, left * h->dv * sizeof(float));
    for (size_t i = 0; i < left; i++) {
        h->log[i] = h->log[i + n];
        h->log[i].k = h->keys + i * h->dk;
        h->log[i].v = h->values + i * h->dv;
    }
    h->count = left;
}

/* Replays the trailing flush's tokens over up to `rows` more rows; drops
   them from the log once every row has them. */
static void trail(dn_gdn_lazy *h, size_t rows)
{
    if (!h->older) return;
    size_t r1 = h->dv - h->replayed < rows ? h->dv : h->replayed + rows;
    dn_kernels_active()->gdn->flush_rows(h->state, h->store, h->dk, h->replayed, r1, h->log,
                                         h->older);
    h->replayed = r1;
    if (r1 < h->dv) return;
    drop_oldest(h, h->older);
    h->older = h->replayed = 0;
}

static void flush_all(dn_gdn_lazy *h)
{
    trail(h, h->dv);
    dn_kernels_active()->gdn->flush_rows(h->state, h->store, h->dk, 0, h->dv, h->log, h->count);
    h->count = 0;
}

dn_status dn_gdn_lazy_flush(dn_gdn_lazy *head)
{
    if (!head) return DN_ERR_INVALID_ARGUMENT;
    flush_all(head);
    return DN_OK;
}

dn_status dn_gdn_lazy_flush_trailing(dn_gdn_lazy *head, size_t rows_per_step)
{
    if (!head || rows_per_step == 0) return DN_ERR_INVALID_ARGUMENT;
    trail(head, head->dv);
    head->older = head->count;
    head->rows_per_step = rows_per_step;
    return DN_OK;
}

static void log_token(dn_gdn_lazy *h, const float *k, const float *v, float g, float beta)
{
    float *kd = h->keys + h->count * h->dk, *vd = h->values + h->count * h->dv;
    memcpy(kd, k, h->dk * sizeof(float));
    memcpy(vd, v, h->dv * sizeof(float));
    h->log[h->count++] = (dn_gdn_logged){kd, vd, g, dn_exp(g), beta};
}

static int token_finite(const dn_gdn_lazy *h, const float *k, const float *v, float g, float beta)
{
    return all_finite(k, h->dk) && all_finite(v, h->dv) && isfinite(g) && isfinite(beta);
}

dn_status dn_gdn_lazy_log(dn_gdn_lazy *head, const float *k, const float *v, float g, float beta)
{
    if (!head || !k || !v) return DN_ERR_INVALID_ARGUMENT;
    if (!token_finite(head, k, v, g, beta)) return DN_ERR_NON_FINITE;
    if (head->count == head->capacity) return DN_ERR_OUT_OF_RANGE;
    log_token(head, k, v, g, beta);
    return DN_OK;
}

/* The fold of q through the log, and each row read through its fold: rows
   a trailing flush has replayed read the newer tokens' fold. */
static void answer(dn_gdn_lazy *h, const float *q, float scale, float *out)
{
    const dn_gdn_kernels *kern = dn_kernels_active()->gdn;
    kern->fold(h->log, h->count, h->older, q, h->dk, h->dv, h->y_new, h->c_new, h->y_all, h->c_all);
    size_t split = h->older ? h->replayed : h->dv;
    kern->read_rows(h->state, h->store, h->dk, 0, split, h->y_new, h->c_new, scale, out);
    kern->read_rows(h->state, h->store, h->dk, split, h->dv, h->y_all, h->c_all, scale, out);
}

dn_status dn_gdn_lazy_query(dn_gdn_lazy *head, const float *q, float scale, float *out)
{
    if (!head || !q || !out) return DN_ERR_INVALID_ARGUMENT;
    if (!all_finite(q, head->dk) || !isfinite(scale)) return DN_ERR_NON_FINITE;
    answer(head, q, scale, out);
    return DN_OK;
}

dn_status dn_gdn_lazy_step(dn_gdn_lazy *head, const float *q, const float *k, const float *v,
                           float g, float beta, float scale, float *out)
{
    if (!head || !q || !k || !v || !out) return DN_ERR_INVALID_ARGUMENT;
    if (!token_finite(head, k, v, g, beta) || !all_finite(q, head->dk) || !isfinite(scale))
        return DN_ERR_NON_FINITE;
    trail(head, head->rows_per_step);
    if (head->count == head->capacity) flush_all(head);
    log_token(head, k, v, g, beta);
    answer(head, q, scale, out);
    return DN_OK;
}
