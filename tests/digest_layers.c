/* SPDX-License-Identifier: MIT */
/* The digest's layer families: attention and Gated-DeltaNet. */
#include <stdlib.h>

#include "digest.h"

enum { D = 72, KVH = 2, QH = 4, CAP = 45 };

/* The int8 pieces: codes, cached rows, a quantized head, its scores and the
   weighted sum of cached values. */
static void attention_int8(dg_hash *h, dg_rng *r)
{
    float x[3 * D], p[CAP];
    int8_t codes[CAP * D];
    uint16_t scales[CAP];
    int16_t qc[96];
    dn_act_scale qs[3];
    dg_fill_small(r, x, 3 * D);
    dg_st(h, dn_int8_codes(x, D, 3.0f, codes));
    dg_i8s(h, codes, D);
    dg_st(h, dn_cache_row(x, D, scales, codes));
    dg_u16s(h, scales, 1), dg_i8s(h, codes, D);
    for (size_t j = 0; j < CAP; j += 3) {
        dg_fill_small(r, x, 3 * D);
        dg_st(h, dn_cache_rows(x, 3, D, scales + j, 1, codes + j * D, D));
    }
    dg_u16s(h, scales, CAP), dg_i8s(h, codes, CAP * D);
    for (int sc = 0; sc < 2; sc++)
        for (int words = 1; words <= 2; words++) {
            dn_act_row q = {qc, qs, 0, 0, (dn_words)words};
            size_t bad = 0;
            dg_st(h, dn_quantize_head(x, D, (dn_act_scaling)sc, (dn_words)words, &q, &bad));
            dg_i16s(h, qc, 96), dg_u64(h, bad);
            for (size_t j = 0; j < CAP; j += 4) {
                float o = 0.0f;
                dg_st(h, dn_int8_score(&q, scales[j], codes + j * D, D, &o));
                dg_f32(h, o);
            }
        }
    for (size_t j = 0; j < CAP; j++) p[j] = dn_ldexp((float)dg_between(r, 0, 1000), -10);
    float out[D];
    dg_st(h, dn_weighted_int8(p, CAP, scales, 1, codes, D, D, out));
    dg_f32s(h, out, D);
    for (int words = 1; words <= 2; words++) {
        dg_st(h, dn_attend_int8(x, D, DN_ACT_SUB32, (dn_words)words, codes, scales, codes + D,
                                scales + 1, CAP - 1, D, 1, 0.125f, out));
        dg_f32s(h, out, D);
    }
}

/* One head over float, F16 and BF16 rows. */
static void attention_vector(dg_hash *h, dg_rng *r)
{
    float *k = malloc(CAP * D * sizeof(float)), *v = malloc(CAP * D * sizeof(float));
    uint16_t *k16 = malloc(CAP * D * 2), *v16 = malloc(CAP * D * 2);
    float q[D], out[D];
    dg_fill_small(r, k, CAP * D), dg_fill_small(r, v, CAP * D), dg_fill_small(r, q, D);
    dg_st(h, dn_attend_vector(q, D, DN_KV_F32, k, v, CAP, D, 0.125f, out));
    dg_f32s(h, out, D);
    for (int t = DN_KV_F16; t <= DN_KV_BF16; t++) {
        for (size_t i = 0; i < CAP * D; i++) {
            k16[i] = t == DN_KV_F16 ? dn_f32_to_f16(k[i]) : dn_f32_to_bf16(k[i]);
            v16[i] = t == DN_KV_F16 ? dn_f32_to_f16(v[i]) : dn_f32_to_bf16(v[i]);
        }
        dg_st(h, dn_attend_vector(q, D, (dn_kv_type)t, k16, v16, CAP - 2, D, 0.125f, out));
        dg_f32s(h, out, D);
    }
    free(k), free(v), free(k16), free(v16);
}

/* The layer over a [position][kv head][d] cache of each type, filled
   through dn_cache_append, on `pool` and by head ranges. */
static void attention_layer(dg_hash *h, dg_rng *r, dn_pool *pool)
{
    float *kr = malloc(KVH * D * sizeof(float)), *vr = malloc(KVH * D * sizeof(float));
    float *q = malloc(QH * D * sizeof(float)), *out = malloc(QH * D * sizeof(float));
    for (int t = DN_KV_F32; t <= DN_KV_INT8; t++) {
        size_t es = t == DN_KV_F32 ? 4 : t == DN_KV_INT8 ? 1 : 2;
        dn_kv_cache c = {malloc(CAP * KVH * D * es),
                         malloc(CAP * KVH * D * es),
                         malloc(CAP * KVH * 2),
                         malloc(CAP * KVH * 2),
                         D,
                         KVH,
                         KVH * D,
                         D,
                         KVH,
                         1,
                         (uint32_t)t,
                         0};
        for (size_t pos = 0; pos < CAP; pos++) {
            dg_fill_small(r, kr, KVH * D), dg_fill_small(r, vr, KVH * D);
            dg_st(h, dn_cache_append(&c, pos, kr, vr));
        }
        dg_fill_small(r, q, QH * D);
        for (int sc = 0; sc < 2; sc++) {
            dn_attn_params prm = {QH, 3, CAP, 0.125f, (uint32_t)sc, (uint32_t)(1 + sc)};
            dg_st(h, dn_attend(&c, &prm, q, out, NULL, 0, pool));
            dg_f32s(h, out, QH * D);
            dg_st(h, dn_attend_heads(&c, &prm, q, 1, 3, out, NULL, 0));
            dg_f32s(h, out + D, 2 * D);
        }
        free(c.k), free(c.v), free(c.k_scale), free(c.v_scale);
    }
    free(kr), free(vr), free(q), free(out);
}

void dg_attention(dg_hash *h, dn_pool *pool)
{
    dg_rng r = {9};
    attention_int8(h, &r);
    attention_vector(h, &r);
    attention_layer(h, &r, pool);
}

/* ---- Gated-DeltaNet ------------------------------------------------------------ */

enum { DK = 24, DV = 10, HEADS = 4, KH = 2, TOK = 3 };

static void *new_state(dg_rng *r, dn_gdn_store store, size_t n)
{
    void *st = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        float x = dg_small(r);
        if (store == DN_GDN_STORE_F32)
            ((float *)st)[i] = x;
        else
            ((uint16_t *)st)[i] = store == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(x) : dn_f32_to_f16(x);
    }
    return st;
}

static void hash_state(dg_hash *h, dn_gdn_store store, const void *st, size_t n)
{
    if (store == DN_GDN_STORE_F32)
        dg_f32s(h, st, n);
    else
        dg_u16s(h, st, n);
}

/* The short convolution, a row, a head, the lazy head. */
static void gdn_pieces(dg_hash *h, dg_rng *r, dn_gdn_store store)
{
    float ring[6 * 4], kernel[6 * 4], x[6], y[6], k[DK], q[DK], v[DV], out[DV];
    uint32_t head = 0;
    dg_fill_small(r, ring, 24), dg_fill_small(r, kernel, 24);
    for (int t = 0; t < 5; t++) {
        dg_fill_small(r, x, 6);
        dg_st(h, dn_gdn_conv(ring, &head, 6, 4, kernel, x, y));
        dg_f32s(h, y, 6);
        dg_st(h, dn_gdn_conv_append(ring, &head, 6, 4, kernel, x, y));
        dg_f32s(h, y, 6), dg_u64(h, head);
    }
    void *st = new_state(r, store, DV * DK);
    dg_fill_small(r, k, DK), dg_fill_small(r, q, DK), dg_fill_small(r, v, DV);
    float coef = 0.0f, o = 0.0f;
    dg_st(h, dn_gdn_update(st, store, k, DK, v[0], 0.875f, 0.5f, &coef));
    dg_f32(h, coef);
    dg_st(h, dn_gdn_row(st, store, k, q, DK, v[1], 0.75f, 0.25f, dn_fdot(k, q, DK), 0.5f, &o));
    dg_f32(h, o);
    dg_st(h, dn_gdn_head(st, store, DK, DV, q, k, v, -0.125f, 0.625f, 0.2f, out));
    dg_f32s(h, out, DV), hash_state(h, store, st, DV * DK);
    dn_gdn_lazy *lz = NULL;
    dg_st(h, dn_gdn_lazy_create(st, store, DK, DV, 4, &lz));
    for (int t = 0; lz && t < 6; t++) {
        dg_fill_small(r, k, DK), dg_fill_small(r, q, DK), dg_fill_small(r, v, DV);
        /* room for this turn's two tokens: the trailing rows, then all */
        if (dn_gdn_lazy_logged(lz) > 2 && t % 2) dg_st(h, dn_gdn_lazy_flush_trailing(lz, 3));
        if (dn_gdn_lazy_logged(lz) > 2) dg_st(h, dn_gdn_lazy_flush(lz));
        dg_st(h, dn_gdn_lazy_log(lz, k, v, -0.0625f * (float)t, 0.5f));
        dg_u64(h, dn_gdn_lazy_logged(lz));
        dg_st(h, dn_gdn_lazy_query(lz, q, 0.3f, out));
        dg_f32s(h, out, DV);
        dg_st(h, dn_gdn_lazy_step(lz, q, k, v, -0.25f, 0.75f, 0.3f, out));
        dg_f32s(h, out, DV);
    }
    if (lz) dg_st(h, dn_gdn_lazy_flush(lz));
    dn_gdn_lazy_destroy(lz);
    hash_state(h, store, st, DV * DK);
    free(st);
}

/* The layer over TOK tokens on `pool`, then one token by head ranges. */
static void gdn_layer(dg_hash *h, dg_rng *r, dn_gdn_store store, dn_pool *pool)
{
    const dn_gdn_shape sh = {HEADS, KH, DK, DV, (uint32_t)store};
    size_t n = HEADS * DV * DK, qk = TOK * KH * DK, vo = TOK * HEADS * DV;
    void *st = new_state(r, store, n);
    float *q = malloc(qk * 4), *k = malloc(qk * 4), *v = malloc(vo * 4), *out = malloc(vo * 4);
    float g[TOK * HEADS], beta[TOK * HEADS];
    dg_fill_small(r, q, qk), dg_fill_small(r, k, qk), dg_fill_small(r, v, vo);
    for (size_t i = 0; i < TOK * HEADS; i++) {
        g[i] = -dn_ldexp((float)dg_between(r, 0, 256), -9);
        beta[i] = dn_ldexp((float)dg_between(r, 0, 256), -8);
    }
    dg_st(h, dn_gdn_layer(st, &sh, TOK, q, k, v, g, beta, 0.3f, out, pool));
    dg_f32s(h, out, vo), hash_state(h, store, st, n);
    dg_st(h, dn_gdn_layer_heads(st, &sh, q, k, v, g, beta, 0.3f, out, 1, HEADS));
    dg_f32s(h, out + DV, (HEADS - 1) * DV), hash_state(h, store, st, n);
    free(st), free(q), free(k), free(v), free(out);
}

void dg_gdn(dg_hash *h, dn_pool *pool)
{
    dg_rng r = {10};
    for (int store = 0; store < 3; store++) {
        dg_u64(h, dn_gdn_store_bytes((dn_gdn_store)store));
        gdn_pieces(h, &r, (dn_gdn_store)store);
        gdn_layer(h, &r, (dn_gdn_store)store, pool);
    }
}
