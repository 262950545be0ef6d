/* SPDX-License-Identifier: MIT */
/*
 * The Gated-DeltaNet module: hand-derived expectations for each definition
 * (conv, gdn_update, gdn_row, the stores' rounding, the head, the fold and
 * the read), the layer's forms against the head, pools, bad input, and the
 * lazily flushed head against the eager one.
 */
#include <math.h>
#include <stdio.h>

#include "decodenum.h"
#include "dispatch.h"
#include "testutil.h"

/* ---- conv ---------------------------------------------------------------- */

/* Two channels, three taps: the ring's oldest row is slot 1 (*head). */
static void conv_by_hand(void **state)
{
    (void)state;
    float ring[4] = {1, 2, 3, 4}; /* slot 0 = {1, 2}, slot 1 = {3, 4} */
    const float kernel[6] = {0.5f, 0.25f, 2, 1, -1, 0.5f};
    const float x[2] = {1, -2};
    float y[2];
    uint32_t head = 1;
    /* channel 0: 3*0.5 + 1*0.25 + 1*2 = 3.75; channel 1: 4*1 + 2*-1 + -2*0.5 = 1 */
    assert_int_equal(dn_gdn_conv(ring, &head, 2, 3, kernel, x, y), DN_OK);
    assert_same_float(y[0], dn_silu(3.75f));
    assert_same_float(y[1], dn_silu(1.0f));
    assert_int_equal(head, 1);
    /* the append form writes x over the oldest row and moves the head */
    assert_int_equal(dn_gdn_conv_append(ring, &head, 2, 3, kernel, x, y), DN_OK);
    assert_int_equal(head, 0);
    assert_same_float(ring[2], 1.0f);
    assert_same_float(ring[3], -2.0f);
    /* now slot 0 = {1, 2} is oldest, then slot 1 = {1, -2}, then x2 */
    const float x2[2] = {2, 2};
    assert_int_equal(dn_gdn_conv(ring, &head, 2, 3, kernel, x2, y), DN_OK);
    assert_same_float(y[0], dn_silu(1 * 0.5f + 1 * 0.25f + 2 * 2));     /* 4.75 */
    assert_same_float(y[1], dn_silu(2 * 1.0f + -2 * -1.0f + 2 * 0.5f)); /* 5 */
}

/* The sum runs in tap order from +0: 2^24 + 1 rounds back to 2^24 (a tie to
   even) before -2^24 cancels it, so the sum is 0, where the other order
   would keep the 1. One tap: no ring at all. */
static void conv_order_and_one_tap(void **state)
{
    (void)state;
    float ring[2] = {1, 1};
    const float kernel[3] = {0x1p24f, 1, -0x1p24f};
    const float x[1] = {1};
    float y[1];
    uint32_t head = 0;
    assert_int_equal(dn_gdn_conv(ring, &head, 1, 3, kernel, x, y), DN_OK);
    assert_bits(y[0], 0x00000000u);
    const float w1[2] = {3, -1};
    const float x1[2] = {0.5f, 2};
    float y1[2];
    assert_int_equal(dn_gdn_conv_append(NULL, &head, 2, 1, w1, x1, y1), DN_OK);
    assert_same_float(y1[0], dn_silu(1.5f));
    assert_same_float(y1[1], dn_silu(-2.0f));
    assert_int_equal(head, 0);
}

static void conv_bad_input(void **state)
{
    (void)state;
    float ring[4] = {1, 2, 3, 4}, y[2] = {7, 7};
    const float kernel[6] = {1, 1, 1, 1, 1, 1}, x[2] = {1, NAN};
    uint32_t head = 0, bad = 2;
    assert_int_equal(dn_gdn_conv(ring, &head, 2, 0, kernel, x, y), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_conv(ring, &bad, 2, 3, kernel, x, y), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_conv(ring, NULL, 2, 3, kernel, x, y), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_conv(NULL, &head, 2, 3, kernel, x, y), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_conv(ring, &head, SIZE_MAX / 2, 3, kernel, x, y),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_conv_append(ring, &head, 2, 3, kernel, x, y), DN_ERR_NON_FINITE);
    assert_int_equal(head, 0);
    assert_same_float(ring[0], 1.0f);
    assert_same_float(y[0], 7.0f);
    assert_int_equal(dn_gdn_conv(NULL, &head, 0, 3, NULL, NULL, NULL), DN_OK);
}

/* ---- the row and the stores ------------------------------------------------ */

/* row = {1, 2}, k = {0.5, 0.25}, v = 3, decay = beta = 0.5: row . k = 1,
   coef = 0.5 * (3 - 0.5) = 1.25, row = {0.5 + 0.625, 1 + 0.3125}. */
static void update_by_hand(void **state)
{
    (void)state;
    float row[2] = {1, 2}, coef = 0;
    const float k[2] = {0.5f, 0.25f};
    assert_int_equal(dn_gdn_update(row, DN_GDN_STORE_F32, k, 2, 3, 0.5f, 0.5f, &coef), DN_OK);
    assert_same_float(coef, 1.25f);
    assert_same_float(row[0], 1.125f);
    assert_same_float(row[1], 1.3125f);
}

/* The read-out is of the row as it was: q = {1, 1}, kq = 0.75, row . q = 3:
   (0.5 * 3 + 1.25 * 0.75) * 2 = 4.875 (the new row would give 4.875 only
   by accident: its q-dot is 2.4375). */
static void row_by_hand(void **state)
{
    (void)state;
    float row[2] = {1, 2}, out = 0;
    const float k[2] = {0.5f, 0.25f}, q[2] = {1, 1};
    assert_int_equal(dn_gdn_row(row, DN_GDN_STORE_F32, k, q, 2, 3, 0.5f, 0.5f, 0.75f, 2, &out),
                     DN_OK);
    assert_same_float(out, 4.875f);
    assert_same_float(row[0], 1.125f);
    assert_same_float(row[1], 1.3125f);
}

/* A stored element is the engine's result rounded once through the store,
   nearest even: 2 + 2^-7 + 2^-9 is 2 + 2^-6 in bfloat16 (7 fraction bits)
   and exact in binary16; 2 + 2^-10 is a binary16 tie and goes to 2. */
static void stores_round_once(void **state)
{
    (void)state;
    const float k[2] = {1, 0};
    const float vs[2] = {2 + 0x1p-7f + 0x1p-9f, 2 + 0x1p-10f};
    const uint16_t bf16_want[2] = {0x4001, 0x4000}, f16_want[2] = {0x4005, 0x4000};
    for (int c = 0; c < 2; c++) {
        uint16_t b[2] = {0x3F80, 0x4000}, h[2] = {0x3C00, 0x4000}; /* {1, 2} */
        float f[2] = {1, 2}, coef;
        /* decay = beta = 1: coef = v - 1, row[0] = 1 + coef = v exactly */
        assert_int_equal(dn_gdn_update(b, DN_GDN_STORE_BF16, k, 2, vs[c], 1, 1, &coef), DN_OK);
        assert_int_equal(dn_gdn_update(h, DN_GDN_STORE_F16, k, 2, vs[c], 1, 1, &coef), DN_OK);
        assert_int_equal(dn_gdn_update(f, DN_GDN_STORE_F32, k, 2, vs[c], 1, 1, &coef), DN_OK);
        assert_int_equal(b[0], bf16_want[c]);
        assert_int_equal(h[0], f16_want[c]);
        assert_same_float(f[0], vs[c]);
        assert_int_equal(b[1], 0x4000);
        assert_int_equal(h[1], 0x4000);
    }
    assert_int_equal(dn_gdn_store_bytes(DN_GDN_STORE_F32), 4);
    assert_int_equal(dn_gdn_store_bytes(DN_GDN_STORE_BF16), 2);
    assert_int_equal(dn_gdn_store_bytes((dn_gdn_store)7), 0);
}

/* A row whose update flushes: decay * m = 2^-100 * 2^-30 is denormal and
   reads as 0, so the element is coef * k alone; a denormal result is +-0. */
static void update_flushes(void **state)
{
    (void)state;
    float row[1] = {0x1p-100f}, coef;
    const float k[1] = {0};
    assert_int_equal(dn_gdn_update(row, DN_GDN_STORE_F32, k, 1, 0, 0x1p-30f, 1, &coef), DN_OK);
    assert_bits(row[0], 0x00000000u);
    assert_bits(coef, 0x00000000u); /* 1 * (0 - 2^-30 * (row . k = 0)) */
}

/* ---- the head ------------------------------------------------------------- */

/* rows {1, 2}, {3, 4}; q = {1, 1}, k = {0.5, 0.25}, v = {3, 1}, g = 0
   (decay = exp(0) = 1), beta = 0.5, scale 1, kq = 0.75:
   row 0: coef = 0.5 * (3 - 1) = 1, out = 3 + 0.75, row {1.5, 2.25};
   row 1: coef = 0.5 * (1 - 2.5) = -0.75, out = 7 - 0.5625, row {2.625, 3.8125}. */
static void head_by_hand(void **state)
{
    (void)state;
    float s[4] = {1, 2, 3, 4}, out[2];
    const float q[2] = {1, 1}, k[2] = {0.5f, 0.25f}, v[2] = {3, 1};
    assert_int_equal(dn_gdn_head(s, DN_GDN_STORE_F32, 2, 2, q, k, v, 0, 0.5f, 1, out), DN_OK);
    assert_same_float(out[0], 3.75f);
    assert_same_float(out[1], 6.4375f);
    const float want[4] = {1.5f, 2.25f, 2.625f, 3.8125f};
    for (int i = 0; i < 4; i++) assert_same_float(s[i], want[i]);
}

/* The decay is dn_exp of the log the model gives. */
static void head_decay_is_exp(void **state)
{
    (void)state;
    float a[3] = {0.3f, -1.7f, 2.5f}, b[3] = {0.3f, -1.7f, 2.5f}, out[1], want;
    const float q[3] = {0.2f, 0.4f, -0.1f}, k[3] = {0.6f, -0.3f, 0.7f}, v[1] = {1.25f};
    const float g = -0.6931f, kq = dn_fdot(k, q, 3);
    assert_int_equal(dn_gdn_head(a, DN_GDN_STORE_F32, 3, 1, q, k, v, g, 0.8f, 0.5f, out), DN_OK);
    assert_int_equal(
        dn_gdn_row(b, DN_GDN_STORE_F32, k, q, 3, 1.25f, dn_exp(g), 0.8f, kq, 0.5f, &want), DN_OK);
    assert_same_float(out[0], want);
    for (int i = 0; i < 3; i++) assert_same_float(a[i], b[i]);
}

/* ---- random inputs ---------------------------------------------------------- */

/* Uniform in [-1, 1). */
static float uniform(uint64_t *s) { return (float)((double)(splitmix(s) >> 11) * 0x1p-52 - 1.0); }

static void fill(uint64_t *s, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = uniform(s);
}

/* A state of n elements of `store`, values in [-1, 1) rounded to the store. */
static void *random_state(uint64_t *s, dn_gdn_store store, size_t n)
{
    void *st = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++) {
        float x = uniform(s);
        if (store == DN_GDN_STORE_F32)
            ((float *)st)[i] = x;
        else
            ((uint16_t *)st)[i] = store == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(x) : dn_f32_to_f16(x);
    }
    return st;
}

/* One token's layer inputs. */
typedef struct layer_in {
    float *q, *k, *v, *g, *beta;
} layer_in;

static layer_in random_tokens(uint64_t *s, const dn_gdn_shape *sh, size_t tokens)
{
    size_t qk = tokens * sh->key_heads * sh->dk, vo = tokens * sh->heads * sh->dv;
    layer_in in = {malloc(qk * 4), malloc(qk * 4), malloc(vo * 4), malloc(tokens * sh->heads * 4),
                   malloc(tokens * sh->heads * 4)};
    fill(s, in.q, qk);
    fill(s, in.k, qk);
    fill(s, in.v, vo);
    for (size_t i = 0; i < tokens * sh->heads; i++) {
        in.g[i] = -0.5f * (uniform(s) + 1.0f);   /* decay in (0.6, 1] */
        in.beta[i] = 0.5f * (uniform(s) + 1.0f); /* in [0, 1) */
    }
    return in;
}

static void free_tokens(layer_in *in)
{
    free(in->q), free(in->k), free(in->v), free(in->g), free(in->beta);
}

/* ---- the layer ---------------------------------------------------------------- */

/* Value head h reads key head h / (heads / key_heads); each head is dn_gdn_head. */
static void layer_is_its_heads(void **state)
{
    (void)state;
    uint64_t seed = 11;
    for (int store = 0; store < 3; store++) {
        const dn_gdn_shape sh = {4, 2, 5, 3, (uint32_t)store};
        size_t n = 4 * 3 * 5, b = dn_gdn_store_bytes((dn_gdn_store)store);
        void *a = random_state(&seed, (dn_gdn_store)store, n);
        void *c = malloc(n * b);
        memcpy(c, a, n * b);
        layer_in in = random_tokens(&seed, &sh, 1);
        float out[12], want[12];
        assert_int_equal(dn_gdn_layer(a, &sh, 1, in.q, in.k, in.v, in.g, in.beta, 0.3f, out, NULL),
                         DN_OK);
        for (size_t h = 0; h < 4; h++)
            assert_int_equal(dn_gdn_head((char *)c + h * 15 * b, (dn_gdn_store)store, 5, 3,
                                         in.q + h / 2 * 5, in.k + h / 2 * 5, in.v + h * 3, in.g[h],
                                         in.beta[h], 0.3f, want + h * 3),
                             DN_OK);
        for (int i = 0; i < 12; i++) assert_same_float(out[i], want[i]);
        assert_memory_equal(a, c, n * b);
        free_tokens(&in), free(a), free(c);
    }
}

/* Several tokens in order are the single tokens one after another, head
   ranges included; pools of 1-3 threads (and none) give the same bits. */
static void layer_tokens_and_pools(void **state)
{
    (void)state;
    uint64_t seed = 12;
    const dn_gdn_shape sh = {6, 3, 33, 17, DN_GDN_STORE_BF16};
    const size_t T = 7, n = 6 * 17 * 33, vo = 6 * 17;
    void *ref = random_state(&seed, DN_GDN_STORE_BF16, n);
    void *st = malloc(n * 2);
    layer_in in = random_tokens(&seed, &sh, T);
    float *want = malloc(T * vo * 4), *out = malloc(T * vo * 4);
    memcpy(st, ref, n * 2);
    for (size_t t = 0; t < T; t++) {
        size_t qk = t * 3 * 33, v = t * vo, gb = t * 6;
        const float *q = in.q + qk, *k = in.k + qk;
        assert_int_equal(dn_gdn_layer_heads(ref, &sh, q, k, in.v + v, in.g + gb, in.beta + gb, 0.2f,
                                            want + v, 0, 2),
                         DN_OK);
        assert_int_equal(dn_gdn_layer_heads(ref, &sh, q, k, in.v + v, in.g + gb, in.beta + gb, 0.2f,
                                            want + v, 2, 6),
                         DN_OK);
    }
    for (unsigned threads = 0; threads <= 3; threads++) {
        dn_pool *pool = threads ? dn_pool_create(threads) : NULL;
        void *s2 = malloc(n * 2);
        memcpy(s2, st, n * 2);
        assert_int_equal(dn_gdn_layer(s2, &sh, T, in.q, in.k, in.v, in.g, in.beta, 0.2f, out, pool),
                         DN_OK);
        assert_memory_equal(out, want, T * vo * 4);
        assert_memory_equal(s2, ref, n * 2);
        free(s2);
        dn_pool_destroy(pool);
    }
    free_tokens(&in), free(ref), free(st), free(want), free(out);
}

/* The public layer (the active ISA's kernels, on a pool) against the scalar
   references token by token: 1-64 heads, 1-200 tokens, every store, pools of
   0-3 threads. */
static void layer_matches_references(void **state)
{
    (void)state;
    uint64_t seed = 17;
    test_seed_from_env(&seed);
    for (int rep = 0; rep < 8; rep++) {
        uint32_t kh = 1 + (uint32_t)(splitmix(&seed) % 8),
                 heads = kh * (1 + (uint32_t)(splitmix(&seed) % 8));
        if (rep == 0) kh = 1, heads = 64;
        const dn_gdn_shape sh = {heads, kh, 1 + (uint32_t)(splitmix(&seed) % 20),
                                 1 + (uint32_t)(splitmix(&seed) % 20), (uint32_t)(rep % 3)};
        size_t T = rep == 1 ? 200 : 1 + splitmix(&seed) % 40,
               b = dn_gdn_store_bytes((dn_gdn_store)sh.store);
        size_t hs = (size_t)sh.dv * sh.dk, n = heads * hs, vo = (size_t)heads * sh.dv;
        void *got = random_state(&seed, (dn_gdn_store)sh.store, n), *want = malloc(n * b);
        memcpy(want, got, n * b);
        layer_in in = random_tokens(&seed, &sh, T);
        float *out = malloc(T * vo * 4), *ref = malloc(T * vo * 4);
        unsigned threads = (unsigned)(rep % 4);
        dn_pool *pool = threads ? dn_pool_create(threads) : NULL;
        assert_int_equal(
            dn_gdn_layer(got, &sh, T, in.q, in.k, in.v, in.g, in.beta, 0.3f, out, pool), DN_OK);
        for (size_t t = 0; t < T; t++)
            for (size_t h = 0; h < heads; h++) {
                const float *q = in.q + (t * kh + h / (heads / kh)) * sh.dk;
                const float *k = in.k + (t * kh + h / (heads / kh)) * sh.dk;
                dn_gdn_token tok = {q,
                                    k,
                                    in.v + t * vo + h * sh.dv,
                                    dn_exp(in.g[t * heads + h]),
                                    in.beta[t * heads + h],
                                    dn_ref_fdot(k, q, sh.dk),
                                    0.3f};
                dn_gdn_scalar.rows((char *)want + h * hs * b, (dn_gdn_store)sh.store, sh.dk, 0,
                                   sh.dv, &tok, ref + t * vo + h * sh.dv);
            }
        assert_memory_equal(out, ref, T * vo * 4);
        assert_memory_equal(got, want, n * b);
        dn_pool_destroy(pool);
        free_tokens(&in), free(got), free(want), free(out), free(ref);
    }
}

static void layer_bad_input(void **state)
{
    (void)state;
    uint64_t seed = 13;
    const dn_gdn_shape sh = {2, 1, 4, 3, DN_GDN_STORE_F32};
    float st[24], keep[24], out[12], out_keep[12];
    fill(&seed, st, 24);
    memcpy(keep, st, sizeof st);
    fill(&seed, out, 12);
    memcpy(out_keep, out, sizeof out);
    layer_in in = random_tokens(&seed, &sh, 2);
    float *inputs[5] = {in.q + 5, in.k + 4, in.v + 7, in.g + 3, in.beta + 2};
    for (int which = 0; which < 5; which++) {
        float was = *inputs[which];
        for (int kind = 0; kind < 3; kind++) {
            *inputs[which] = kind == 0 ? NAN : kind == 1 ? INFINITY : -INFINITY;
            assert_int_equal(
                dn_gdn_layer(st, &sh, 2, in.q, in.k, in.v, in.g, in.beta, 1, out, NULL),
                DN_ERR_NON_FINITE);
            assert_memory_equal(st, keep, sizeof st);
            assert_memory_equal(out, out_keep, sizeof out);
        }
        *inputs[which] = was;
    }
    assert_int_equal(dn_gdn_layer(st, &sh, 2, in.q, in.k, in.v, in.g, in.beta, NAN, out, NULL),
                     DN_ERR_NON_FINITE);
    dn_gdn_shape bad[5] = {sh, sh, sh, sh, sh};
    bad[0].dk = 0, bad[1].dv = 0, bad[2].key_heads = 3, bad[3].store = 9, bad[4].heads = 0;
    for (int i = 0; i < 5; i++)
        assert_int_equal(
            dn_gdn_layer(st, &bad[i], 1, in.q, in.k, in.v, in.g, in.beta, 1, out, NULL),
            DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_layer(st, NULL, 1, in.q, in.k, in.v, in.g, in.beta, 1, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_layer(NULL, &sh, 1, in.q, in.k, in.v, in.g, in.beta, 1, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_layer(st, &sh, 1, in.q, NULL, in.v, in.g, in.beta, 1, out, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_layer(NULL, &sh, 0, NULL, NULL, NULL, NULL, NULL, 1, NULL, NULL),
                     DN_OK);
    assert_int_equal(
        dn_gdn_layer(st, &sh, SIZE_MAX / 4, in.q, in.k, in.v, in.g, in.beta, 1, out, NULL),
        DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_layer_heads(st, &sh, in.q, in.k, in.v, in.g, in.beta, 1, out, 1, 3),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_layer_heads(st, &sh, in.q, in.k, in.v, in.g, in.beta, 1, out, 2, 1),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_head(st, DN_GDN_STORE_F32, 0, 3, in.q, in.k, in.v, 0, 1, 1, out),
                     DN_ERR_INVALID_ARGUMENT);
    float coef;
    assert_int_equal(dn_gdn_update(st, DN_GDN_STORE_F32, in.k, 0, 1, 1, 1, &coef),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_update(st, (dn_gdn_store)3, in.k, 4, 1, 1, 1, &coef),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_update(st, DN_GDN_STORE_F32, in.k, 4, INFINITY, 1, 1, &coef),
                     DN_ERR_NON_FINITE);
    assert_memory_equal(st, keep, sizeof st);
    free_tokens(&in);
}

/* ---- the fold and the lazy head ------------------------------------------------- */

/* One token, k = {1, 0}, v = {2, 4}, decay = beta = 0.5, q = {1, 1}:
   c = 0.5 * 1, carried = {1, 2}, y = 0.5 * ({1, 1} - {0.5, 0}) = {0.25, 0.5}.
   A second, older token {k = {0, 1}, v = {1, 1}, decay 1, beta 1} is folded
   after it (newest first): c = 1 * 0.5, carried += 0.5, y = {0.25, 0}. */
static void fold_by_hand(void **state)
{
    (void)state;
    const float k0[2] = {0, 1}, v0[2] = {1, 1}, k1[2] = {1, 0}, v1[2] = {2, 4}, q[2] = {1, 1};
    const dn_gdn_logged log[2] = {{k0, v0, 0, 1, 1}, {k1, v1, -0.6931472f, 0.5f, 0.5f}};
    float y[2], c[2];
    dn_ref_gdn_fold(log + 1, 1, q, 2, 2, y, c);
    assert_same_float(c[0], 1.0f);
    assert_same_float(c[1], 2.0f);
    assert_same_float(y[0], 0.25f);
    assert_same_float(y[1], 0.5f);
    dn_ref_gdn_fold(log, 2, q, 2, 2, y, c);
    assert_same_float(c[0], 1.5f);
    assert_same_float(c[1], 2.5f);
    assert_same_float(y[0], 0.25f);
    assert_same_float(y[1], 0.0f);
    /* gdn_read: (row . y + carried) * scale */
    const float row[2] = {4, 8};
    assert_same_float(dn_ref_gdn_read(row, DN_GDN_STORE_F32, 2, y, c[1], 2), 7.0f);
}

/* Each ISA's fold over a log whose oldest `older` tokens a trailing flush
   replays is the fold over the newer tokens and the fold over all of them. */
static void fold_trailing_is_two_folds(void **state)
{
    (void)state;
    uint64_t seed = 14;
    enum { DK = 37, DV = 21, N = 12 };
    static float keys[N][DK], values[N][DV], q[DK];
    dn_gdn_logged log[N];
    for (int t = 0; t < N; t++) {
        fill(&seed, keys[t], DK), fill(&seed, values[t], DV);
        float g = -0.3f * (uniform(&seed) + 1);
        log[t] = (dn_gdn_logged){keys[t], values[t], g, dn_exp(g), 0.5f * (uniform(&seed) + 1)};
    }
    fill(&seed, q, DK);
    const dn_isa isas[3] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_NEON};
    for (int i = 0; i < 3; i++) {
        if (!dn_isa_available(isas[i])) continue;
        const dn_gdn_kernels *kern = dn_kernels_for(isas[i])->gdn;
        for (size_t older = 0; older <= N; older++) {
            float yn[DK], cn[DV], ya[DK], ca[DV], y1[DK], c1[DV], y2[DK], c2[DV];
            kern->fold(log, N, older, q, DK, DV, yn, cn, ya, ca);
            dn_ref_gdn_fold(log + older, N - older, q, DK, DV, y1, c1);
            dn_ref_gdn_fold(log, N, q, DK, DV, y2, c2);
            assert_memory_equal(yn, y1, sizeof yn);
            assert_memory_equal(cn, c1, sizeof cn);
            assert_memory_equal(ya, y2, sizeof ya);
            assert_memory_equal(ca, c2, sizeof ca);
        }
    }
}

/* rows {1, 2}, {3, 4}; one logged token k = {1, 0}, v = {2, 4}, g = 0
   (decay 1), beta 0.5; q = {1, 1}: c = 0.5, carried = {1, 2},
   y = {0.5, 1}; out = {1*0.5 + 2 + 1, 3*0.5 + 4 + 2} = {3.5, 7.5}, the eager
   head's {1*3 + 0.5*1, 1*7 + 0.5*1} by other operations (here all exact). */
static void lazy_query_by_hand(void **state)
{
    (void)state;
    float s[4] = {1, 2, 3, 4}, e[4] = {1, 2, 3, 4}, out[2], want[2];
    const float k[2] = {1, 0}, v[2] = {2, 4}, q[2] = {1, 1};
    dn_gdn_lazy *h;
    assert_int_equal(dn_gdn_lazy_create(s, DN_GDN_STORE_F32, 2, 2, 4, &h), DN_OK);
    assert_int_equal(dn_gdn_lazy_step(h, q, k, v, 0, 0.5f, 1, out), DN_OK);
    assert_same_float(out[0], 3.5f);
    assert_same_float(out[1], 7.5f);
    assert_int_equal(dn_gdn_head(e, DN_GDN_STORE_F32, 2, 2, q, k, v, 0, 0.5f, 1, want), DN_OK);
    assert_same_float(want[0], 3.5f);
    assert_same_float(want[1], 7.5f);
    assert_int_equal(dn_gdn_lazy_logged(h), 1);
    assert_same_float(s[0], 1.0f); /* nothing written before a flush */
    assert_int_equal(dn_gdn_lazy_flush(h), DN_OK);
    assert_memory_equal(s, e, sizeof s);
    assert_int_equal(dn_gdn_lazy_logged(h), 0);
    dn_gdn_lazy_destroy(h);
}

/* One random schedule: a lazy head and the eager head take the same tokens;
   flushes (whole or trailing, at random points and rates) and full logs
   happen as they come. Every explicit flush and the end leave the lazy
   state equal to the eager state, bit for bit. */
static void one_schedule(uint64_t *seed, dn_gdn_store store)
{
    size_t dk = 1 + splitmix(seed) % 40, dv = 1 + splitmix(seed) % 40;
    size_t cap = 1 + splitmix(seed) % 9, tokens = 1 + splitmix(seed) % 60;
    size_t n = dk * dv, b = dn_gdn_store_bytes(store);
    void *lazy_state = random_state(seed, store, n), *eager = malloc(n * b);
    memcpy(eager, lazy_state, n * b);
    dn_gdn_lazy *h;
    assert_int_equal(dn_gdn_lazy_create(lazy_state, store, dk, dv, cap, &h), DN_OK);
    float *q = malloc(dk * 4), *k = malloc(dk * 4), *v = malloc(dv * 4), *out = malloc(dv * 4);
    float *want = malloc(dv * 4);
    for (size_t t = 0; t < tokens; t++) {
        fill(seed, q, dk), fill(seed, k, dk), fill(seed, v, dv);
        float g = -0.4f * (uniform(seed) + 1), beta = 0.5f * (uniform(seed) + 1);
        uint64_t act = splitmix(seed) % 10;
        if (act == 0) {
            assert_int_equal(dn_gdn_lazy_flush(h), DN_OK);
            assert_memory_equal(lazy_state, eager, n * b);
        } else if (act == 1) {
            assert_int_equal(dn_gdn_lazy_flush_trailing(h, 1 + splitmix(seed) % dv), DN_OK);
        }
        assert_int_equal(dn_gdn_lazy_step(h, q, k, v, g, beta, 0.25f, out), DN_OK);
        assert_int_equal(dn_gdn_head(eager, store, dk, dv, q, k, v, g, beta, 0.25f, want), DN_OK);
        assert_true(dn_gdn_lazy_logged(h) <= cap);
    }
    assert_int_equal(dn_gdn_lazy_flush(h), DN_OK);
    assert_memory_equal(lazy_state, eager, n * b);
    dn_gdn_lazy_destroy(h);
    free(lazy_state), free(eager), free(q), free(k), free(v), free(out), free(want);
}

static void lazy_flush_is_eager(void **state)
{
    (void)state;
    uint64_t seed = 15;
    test_seed_from_env(&seed);
    for (int i = 0; i < 300; i++) one_schedule(&seed, (dn_gdn_store)(i % 3));
}

/* Realistic inputs (l2-normalised q and k, decay and beta in (0, 1)): the
   lazy head's outputs are the eager head's within a few f32 roundings. */
static void lazy_outputs_near_eager(void **state)
{
    (void)state;
    enum { DK = 64, DV = 48, T = 200 };
    uint64_t seed = 16;
    static float ls[DK * DV], es[DK * DV];
    float q[DK], k[DK], v[DV], out[DV], want[DV];
    fill(&seed, ls, DK * DV);
    for (int i = 0; i < DK * DV; i++) ls[i] *= 0.1f;
    memcpy(es, ls, sizeof ls);
    dn_gdn_lazy *h;
    assert_int_equal(dn_gdn_lazy_create(ls, DN_GDN_STORE_F32, DK, DV, 16, &h), DN_OK);
    double worst = 0;
    for (int t = 0; t < T; t++) {
        fill(&seed, q, DK), fill(&seed, k, DK), fill(&seed, v, DV);
        dn_l2norm(q, 1e-6f, q, DK);
        dn_l2norm(k, 1e-6f, k, DK);
        float g = dn_ln(0.05f + 0.9f * 0.5f * (uniform(&seed) + 1)),
              beta = 0.5f * (uniform(&seed) + 1);
        assert_int_equal(dn_gdn_lazy_step(h, q, k, v, g, beta, 0.125f, out), DN_OK);
        assert_int_equal(dn_gdn_head(es, DN_GDN_STORE_F32, DK, DV, q, k, v, g, beta, 0.125f, want),
                         DN_OK);
        for (int j = 0; j < DV; j++) worst = fmax(worst, fabs((double)out[j] - want[j]));
    }
    assert_true(worst < 1e-5);
    dn_gdn_lazy_destroy(h);
}

static void lazy_bad_input(void **state)
{
    (void)state;
    float s[6] = {1, 2, 3, 4, 5, 6}, keep[6], out[3] = {9, 9, 9};
    memcpy(keep, s, sizeof s);
    const float q[2] = {1, 0}, k[2] = {0, 1}, v[3] = {1, 2, 3}, bad[3] = {1, NAN, 3};
    dn_gdn_lazy *h = (dn_gdn_lazy *)&h;
    assert_int_equal(dn_gdn_lazy_create(NULL, DN_GDN_STORE_F32, 2, 3, 2, &h),
                     DN_ERR_INVALID_ARGUMENT);
    assert_null(h);
    assert_int_equal(dn_gdn_lazy_create(s, DN_GDN_STORE_F32, 0, 3, 2, &h), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_create(s, DN_GDN_STORE_F32, 2, 3, 0, &h), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_create(s, (dn_gdn_store)5, 2, 3, 2, &h), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_create(s, DN_GDN_STORE_F32, SIZE_MAX / 2, 3, 2, &h),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_create(s, DN_GDN_STORE_F32, 2, 3, 2, NULL),
                     DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_create(s, DN_GDN_STORE_F32, 2, 3, 2, &h), DN_OK);
    assert_int_equal(dn_gdn_lazy_log(h, k, v, 0, 0.5f), DN_OK);
    assert_int_equal(dn_gdn_lazy_log(h, k, v, 0, 0.5f), DN_OK);
    assert_int_equal(dn_gdn_lazy_log(h, k, v, 0, 0.5f), DN_ERR_OUT_OF_RANGE); /* full */
    assert_int_equal(dn_gdn_lazy_logged(h), 2);
    assert_int_equal(dn_gdn_lazy_step(h, q, k, bad, 0, 0.5f, 1, out), DN_ERR_NON_FINITE);
    assert_int_equal(dn_gdn_lazy_step(h, q, k, v, NAN, 0.5f, 1, out), DN_ERR_NON_FINITE);
    assert_int_equal(dn_gdn_lazy_step(h, q, k, v, 0, INFINITY, 1, out), DN_ERR_NON_FINITE);
    assert_int_equal(dn_gdn_lazy_log(h, k, bad, 0, 0.5f), DN_ERR_NON_FINITE);
    assert_int_equal(dn_gdn_lazy_query(h, bad, 1, out), DN_ERR_NON_FINITE);
    assert_int_equal(dn_gdn_lazy_logged(h), 2);
    assert_memory_equal(s, keep, sizeof s);
    assert_same_float(out[0], 9.0f);
    assert_int_equal(dn_gdn_lazy_step(NULL, q, k, v, 0, 0.5f, 1, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_query(h, NULL, 1, out), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_flush_trailing(h, 0), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_gdn_lazy_flush(NULL), DN_ERR_INVALID_ARGUMENT);
    dn_gdn_lazy_destroy(h);
    dn_gdn_lazy_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conv_by_hand),
        cmocka_unit_test(conv_order_and_one_tap),
        cmocka_unit_test(conv_bad_input),
        cmocka_unit_test(update_by_hand),
        cmocka_unit_test(row_by_hand),
        cmocka_unit_test(stores_round_once),
        cmocka_unit_test(update_flushes),
        cmocka_unit_test(head_by_hand),
        cmocka_unit_test(head_decay_is_exp),
        cmocka_unit_test(layer_is_its_heads),
        cmocka_unit_test(layer_tokens_and_pools),
        cmocka_unit_test(layer_matches_references),
        cmocka_unit_test(layer_bad_input),
        cmocka_unit_test(fold_by_hand),
        cmocka_unit_test(fold_trailing_is_two_folds),
        cmocka_unit_test(lazy_query_by_hand),
        cmocka_unit_test(lazy_flush_is_eager),
        cmocka_unit_test(lazy_outputs_near_eager),
        cmocka_unit_test(lazy_bad_input),
    };
    return cmocka_run_group_tests_name("gdn", tests, NULL, NULL);
}
