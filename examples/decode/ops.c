/* SPDX-License-Identifier: MIT */
/*
 * ops.c: the engine's operations over libdecodenum's public API. Every
 * number comes from a library call or from exact binary64 arithmetic whose
 * order is written out here, so the bits are the same on every CPU and at
 * every thread count.
 */
#include "ops.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double dd_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int dd_fail(dd_state *s, const char *what, dn_status st)
{
    snprintf(s->err, s->err_bytes, "%s: %s", what, dn_status_str(st));
    return -1;
}

/* A row of the embedding as floats. F16 and BF16 rows widen exactly; a block
   format's weights a * coef + b * offs are each rounded once from their
   exact value (dn_row_to_f32), which is what ggml's get_rows gives whenever
   that value is an f32. */
int op_embed(dd_state *s, uint32_t token, float *x)
{
    const dd_matrix *e = &s->m->tok_embd;
    size_t n = e->cols;
    size_t row_bytes = n / dn_type_block_elements(e->type) * dn_type_block_bytes(e->type);
    const uint8_t *row = e->data + (size_t)token * row_bytes;
    double t0 = dd_now();
    dn_status st;
    if (e->type == DN_TYPE_F16) { /* host order (model.c), as the products take it */
        st = dn_f16_widen((const uint16_t *)(const void *)row, x, n);
    } else if (e->type == DN_TYPE_BF16) {
        st = dn_bf16_widen((const uint16_t *)(const void *)row, x, n);
    } else {
        st = dn_row_to_f32(e->type, row, n, x, NULL);
    }
    s->bucket[DD_T_EMBED] += dd_now() - t0;
    return st == DN_OK ? 0 : dd_fail(s, "embedding row", st);
}

int op_rmsnorm(dd_state *s, const float *x, const float *w, float *y, size_t n)
{
    double t0 = dd_now();
    dn_status st = dn_rmsnorm(x, w, s->m->eps, y, n);
    s->bucket[DD_T_NORM] += dd_now() - t0;
    return st == DN_OK ? 0 : dd_fail(s, "rmsnorm", st);
}

/* x (cols columns of n floats) prepared as a dn_act (Sub32 scales, one
   word) for the `count` formats of types only, in s->pact_mem, grown as
   needed, by dn_act_prepare_pool: several columns on the pool, one on the
   calling thread (dn_act_prepare_for's dn_act either way). The products with it have the bits of dn_quantize then
   dn_mat_vec of each column (decodenum/dot.h). */
static int prepare_act(dd_state *s, const float *x, size_t n, size_t cols, const dn_type *types,
                       size_t count)
{
    double t0 = dd_now();
    size_t bytes = 0;
    dn_status st = dn_act_size(n, cols, DN_ACT_SUB32, DN_WORDS_ONE, &bytes);
    if (st == DN_OK && bytes > s->pact_bytes) {
        free(s->pact_mem);
        s->pact_bytes = 0;
        if (!(s->pact_mem = malloc(bytes)))
            return dd_fail(s, "activation memory", DN_ERR_OUT_OF_MEMORY);
        s->pact_bytes = bytes;
    }
    if (st == DN_OK) /* one column (a decode step): on the calling thread */
        st = dn_act_prepare_pool(x, n, cols, DN_ACT_SUB32, DN_WORDS_ONE, types, count, s->pact_mem,
                                 s->pact_bytes, cols > 1 ? s->pool : NULL, &s->pact, NULL);
    s->bucket[DD_T_QUANT] += dd_now() - t0;
    return st == DN_OK ? 0 : dd_fail(s, "activation preparation", st);
}

/* y = W x for the cols columns of x (n floats each) by an F16 or BF16
   matrix on ggml's vec_dot path for every column (dn_f16_mat_mul_path): the
   bits of one column at a time, the weights read once for several columns.
   (dn_f16_mat_mul would take ggml's rule, tinyBLAS from two columns on:
   other bits than a decode step's.) */
static dn_status half_columns(dd_state *s, const dd_matrix *w, const float *x, size_t cols,
                              float *y)
{
    const uint16_t *h = (const uint16_t *)(const void *)w->data;
    if (w->type == DN_TYPE_F16)
        return dn_f16_mat_mul_path(DN_F16_PATH_VEC_DOT, h, w->rows, w->cols, x, cols, y, s->pool);
    return dn_bf16_mat_mul_path(DN_F16_PATH_VEC_DOT, h, w->rows, w->cols, x, cols, y, s->pool);
}

/* y = W x for a matrix of a block format, x already prepared (s->pact). */
static dn_status block_columns(dd_state *s, const dd_matrix *w, size_t cols, float *y)
{
    if (w->packed)
        return cols == 1
                   ? dn_repacked_mat_vec(s->pact, 0, w->type, w->packed, w->rows, y, s->pool, NULL)
                   : dn_repacked_mat_mul(s->pact, w->type, w->packed, w->rows, y, s->pool, NULL);
    return dn_act_mat_mul(s->pact, w->type, w->data, w->rows, y, s->pool, NULL);
}

/* y[i] = W[i] x for `count` matrices that read the same x (Q, K and V; gate
   and up; a Gated-DeltaNet layer's six input projections), x holding cols
   columns (a batch of the prompt's positions; y[i] then cols columns of
   W[i]'s rows, column c at y[i] + c * rows). F16 and BF16 weights:
   half_columns. Block formats: x prepared once for the group's formats
   (prepare_act); repacked matrices (dd_model_repack) by
   dn_repacked_mat_vec / dn_repacked_mat_mul each; the ones in place, one
   column: together by dn_act_mat_vec_multi, one pass of the pool over all
   their rows; several: dn_act_mat_mul each, a batch of rows decoded once
   for the columns. Every product splits its rows over the pool; the bits
   are each matrix's own dn_mat_vec's of each column either way. */
int op_mat_muls(dd_state *s, const dd_matrix *const *w, const float *x, size_t cols,
                float *const *y, size_t count, int bucket)
{
    dn_act_matrix inplace[DD_GROUP_MAX];
    dn_type types[DD_GROUP_MAX];
    size_t n_inplace = 0, n_types = 0;
    if (count > DD_GROUP_MAX) return dd_fail(s, "matrix group", DN_ERR_INVALID_ARGUMENT);
    for (size_t i = 0; i < count; i++)
        if (w[i]->type != DN_TYPE_F16 && w[i]->type != DN_TYPE_BF16) types[n_types++] = w[i]->type;
    if (n_types && prepare_act(s, x, w[0]->cols, cols, types, n_types)) return -1;
    dn_status st = DN_OK;
    for (size_t i = 0; st == DN_OK && i < count; i++) {
        double t0 = dd_now();
        if (w[i]->type == DN_TYPE_F16 || w[i]->type == DN_TYPE_BF16)
            st = half_columns(s, w[i], x, cols, y[i]);
        else if (w[i]->packed || cols > 1)
            st = block_columns(s, w[i], cols, y[i]);
        else
            inplace[n_inplace++] = (dn_act_matrix){w[i]->type, w[i]->data, w[i]->rows, y[i]};
        s->bucket[bucket] += dd_now() - t0;
    }
    if (st == DN_OK && n_inplace > 0) {
        double t0 = dd_now();
        st = dn_act_mat_vec_multi(s->pact, 0, inplace, n_inplace, s->pool, NULL, NULL);
        s->bucket[bucket] += dd_now() - t0;
    }
    return st == DN_OK ? 0 : dd_fail(s, "matrix product", st);
}

int op_mat_vecs(dd_state *s, const dd_matrix *const *w, const float *x, float *const *y,
                size_t count, int bucket)
{
    return op_mat_muls(s, w, x, 1, y, count, bucket);
}

int op_mat_vec(dd_state *s, const dd_matrix *w, const float *x, float *y, int bucket)
{
    return op_mat_vecs(s, &w, x, &y, 1, bucket);
}

/* x += y element by element (dn_vec_add: dn_fadd each): the residual adds
   and biases, on the calling thread (one token's vector is small). */
void op_add(dd_state *s, float *x, const float *y, size_t n)
{
    double t0 = dd_now();
    (void)dn_vec_add(x, y, x, n, NULL); /* arguments the model checked */
    s->bucket[DD_T_RESID] += dd_now() - t0;
}

/* g = silu(g) * u (dn_vec_silu_mul: dn_silu, then dn_fmul). */
int op_swiglu(dd_state *s, float *g, const float *u, size_t n)
{
    double t0 = dd_now();
    dn_status st = dn_vec_silu_mul(g, u, g, n, NULL);
    s->bucket[DD_T_SWIGLU] += dd_now() - t0;
    return st == DN_OK ? 0 : dd_fail(s, "silu", st);
}

/* The rotary tables of positions pos .. pos + count - 1: cos and sin of
   p * freq_i (freq from dn_rope_freqs once at init), by dn_rope_table: the
   exact product p * freq_i reduced exactly, the same bits on every ISA.
   Position pos + t's table at s->cos + t * n_rot / 2 (and s->sin). */
int op_rope_table(dd_state *s, size_t pos, size_t count)
{
    double t0 = dd_now();
    int32_t p[DD_BATCH_MAX];
    for (size_t t = 0; t < count; t++) /* past 2^24: refused */
        p[t] = pos + t > INT32_MAX ? INT32_MAX : (int32_t)(pos + t);
    dn_status st = dn_rope_table(p, count, s->freq, s->m->n_rot / 2, s->cos, s->sin);
    s->bucket[DD_T_ROPE] += dd_now() - t0;
    return st == DN_OK ? 0 : dd_fail(s, "rope table", st);
}

/* x's heads turned by the table of the batch's position t. */
int op_rope(dd_state *s, float *x, size_t heads, size_t t)
{
    double t0 = dd_now();
    size_t hd = s->m->head_dim, half = s->m->n_rot / 2;
    const float *c = s->cos + t * half, *sn = s->sin + t * half;
    dn_status st = DN_OK;
    for (size_t h = 0; h < heads && st == DN_OK; h++)
        st = dn_rope(x + h * hd, hd, c, sn, half, s->m->rope, x + h * hd);
    s->bucket[DD_T_ROPE] += dd_now() - t0;
    return st == DN_OK ? 0 : dd_fail(s, "rope", st);
}

/* Qwen3's per-head RMSNorm of q and k (one weight vector for all heads). */
int op_head_norm(dd_state *s, float *x, size_t heads, const float *w)
{
    size_t hd = s->m->head_dim;
    for (size_t h = 0; h < heads; h++)
        if (op_rmsnorm(s, x + h * hd, w, x + h * hd, hd) != 0) return -1;
    return 0;
}

/* K and V of position pos (k, v) into the layer's cache (dn_cache_append),
   then every head of its query q over positions [0, pos] into att
   (dn_attend; GQA; the KV groups on the pool). A batch's positions run one
   after another, each appended before it attends, so each sees the cache a
   single step would. */
int op_attend(dd_state *s, size_t layer, size_t pos, const float *q, const float *k, const float *v,
              float *att)
{
    const dd_model *m = s->m;
    dn_kv_cache c = {s->kc[layer],
                     s->vc[layer],
                     NULL,
                     NULL,
                     m->head_dim,
                     m->n_head_kv,
                     m->n_head_kv * m->head_dim,
                     m->head_dim,
                     m->n_head_kv,
                     1,
                     DN_KV_F16,
                     0};
    if (s->kv_int8) {
        c.type = DN_KV_INT8;
        c.k_scale = s->ks[layer];
        c.v_scale = s->vs[layer];
    }
    double t0 = dd_now();
    dn_status st = dn_cache_append(&c, pos, k, v);
    s->bucket[DD_T_KV] += dd_now() - t0;
    if (st != DN_OK) return dd_fail(s, "kv cache append", st);
    dn_attn_params p = {m->n_head,    0,           pos + 1, dn_rsqrt((float)m->head_dim),
                        DN_ACT_SUB32, DN_WORDS_ONE};
    t0 = dd_now();
    st = dn_attend(&c, &p, q, att, s->attn_work, s->attn_work_bytes, s->pool);
    s->bucket[DD_T_ATTN] += dd_now() - t0;
    return st == DN_OK ? 0 : dd_fail(s, "attention", st);
}
