/* SPDX-License-Identifier: MIT */
/*
 * ops.h: the engine's operations, each one small function over the public
 * API, so that each can move to a newer library call without touching the
 * forward pass (where: see each function in ops.c).
 */
#ifndef DECODE_OPS_H
#define DECODE_OPS_H

#include "model.h"

/* The working state of one decode run. */
typedef struct dd_state {
    const dd_model *m;
    dn_pool *pool;
    size_t ctx;   /* positions the cache holds */
    size_t batch; /* columns (positions) the vectors below hold */
    int kv_int8;  /* 1: int8 KV rows, else binary16 */
    /* batch columns each, column t of x at x + t * n_embd (and so on): the
       layout of the products' outputs (dn_act_mat_mul); logits one column */
    float *x, *h, *q, *k, *v, *att, *o, *g, *u, *logits;
    float *freq, *cos, *sin; /* rotary frequencies; batch positions' tables */
    /* the prepared activation of the latest group of products */
    dn_act *pact;
    void *pact_mem; /* pact's memory, pact_bytes */
    size_t pact_bytes;
    /* the KV cache: per layer K and V, int8 codes or binary16 */
    void **kc, **vc;
    uint16_t **ks, **vs;
    /* the hybrid's Gated-DeltaNet layers: conv rings and their heads,
       recurrent states (NULL for attention layers), the layer's vectors */
    float **ring, **ssm;
    uint32_t *ring_head;
    float *conv_in, *conv_out, *z, *gdn_out, *gates;
    void *attn_work;
    size_t attn_work_bytes;
    double bucket[DD_T_COUNT];
    char *err;
    size_t err_bytes;
} dd_state;

int dd_state_init(dd_state *s, const dd_model *m, size_t ctx, size_t batch, unsigned threads,
                  int kv_int8);
void dd_state_free(dd_state *s);
int dd_hybrid_state_init(dd_state *s);
void dd_hybrid_state_free(dd_state *s);

double dd_now(void);
int dd_fail(dd_state *s, const char *what, dn_status st);

int op_embed(dd_state *s, uint32_t token, float *x);
int op_rmsnorm(dd_state *s, const float *x, const float *w, float *y, size_t n);
/* The most matrices op_mat_muls (and op_mat_vecs, its one-column form) takes at once. */
#define DD_GROUP_MAX 6
int op_mat_muls(dd_state *s, const dd_matrix *const *w, const float *x, size_t cols,
                float *const *y, size_t count, int bucket);
int op_mat_vecs(dd_state *s, const dd_matrix *const *w, const float *x, float *const *y,
                size_t count, int bucket);
int op_mat_vec(dd_state *s, const dd_matrix *w, const float *x, float *y, int bucket);
void op_add(dd_state *s, float *x, const float *y, size_t n);
int op_swiglu(dd_state *s, float *g, const float *u, size_t n);
int op_rope_table(dd_state *s, size_t pos, size_t count);
int op_rope(dd_state *s, float *x, size_t heads, size_t t);
int op_head_norm(dd_state *s, float *x, size_t heads, const float *w);
int op_attend(dd_state *s, size_t layer, size_t pos, const float *q, const float *k, const float *v,
              float *att);
int op_gdn(dd_state *s, size_t layer);

#endif /* DECODE_OPS_H */
