/* SPDX-License-Identifier: MIT */
/*
 * state.c: the working memory of a decode run: activations, the KV cache,
 * the rotary frequencies, attention's working memory and the pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

/* A cache on a line boundary: the attention kernels read a row 64 bytes a
   load, and from a malloc block (16 bytes past a line) every load would
   straddle two lines. */
static void *line_alloc(size_t bytes)
{
    return aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
}

static int alloc_cache(dd_state *s)
{
    const dd_model *m = s->m;
    size_t L = m->n_layer, rows = s->ctx * m->n_head_kv, elems = rows * m->head_dim;
    s->kc = calloc(L, sizeof *s->kc);
    s->vc = calloc(L, sizeof *s->vc);
    s->ks = calloc(L, sizeof *s->ks);
    s->vs = calloc(L, sizeof *s->vs);
    if (!s->kc || !s->vc || !s->ks || !s->vs) return -1;
    size_t eb = s->kv_int8 ? 1 : 2;
    for (size_t l = 0; l < L; l++) {
        if (m->layers[l].gdn) continue; /* a Gated-DeltaNet layer keeps no cache */
        s->kc[l] = line_alloc(elems * eb);
        s->vc[l] = line_alloc(elems * eb);
        if (!s->kc[l] || !s->vc[l]) return -1;
        /* touched once here, so the steps' appends do not take its pages' first faults */
        memset(s->kc[l], 0, elems * eb);
        memset(s->vc[l], 0, elems * eb);
        if (!s->kv_int8) continue;
        s->ks[l] = malloc(rows * sizeof(uint16_t));
        s->vs[l] = malloc(rows * sizeof(uint16_t));
        if (!s->ks[l] || !s->vs[l]) return -1;
    }
    return 0;
}

static int attn_work(dd_state *s)
{
    const dd_model *m = s->m;
    int8_t dummy = 0;
    uint16_t sc = 0;
    dn_kv_cache c = {&dummy,
                     &dummy,
                     &sc,
                     &sc,
                     m->head_dim,
                     m->n_head_kv,
                     m->n_head_kv * m->head_dim,
                     m->head_dim,
                     m->n_head_kv,
                     1,
                     s->kv_int8 ? DN_KV_INT8 : DN_KV_F16,
                     0};
    dn_attn_params p = {m->n_head, 0, s->ctx, 1.0f, DN_ACT_SUB32, DN_WORDS_ONE};
    dn_status st = dn_attend_work_size(&c, &p, &s->attn_work_bytes, NULL);
    if (st != DN_OK) return dd_fail(s, "attention work size", st);
    s->attn_work = malloc(s->attn_work_bytes ? s->attn_work_bytes : 1);
    return s->attn_work ? 0 : -1;
}

int dd_state_init(dd_state *s, const dd_model *m, size_t ctx, size_t batch, unsigned threads,
                  int kv_int8)
{
    char *err = s->err;
    size_t err_bytes = s->err_bytes;
    memset(s, 0, sizeof *s);
    *s = (dd_state){
        .m = m, .ctx = ctx, .batch = batch, .kv_int8 = kv_int8, .err = err, .err_bytes = err_bytes};
    size_t nq = m->n_head * m->head_dim, nkv = m->n_head_kv * m->head_dim;
    size_t half = m->n_rot / 2 ? m->n_rot / 2 : 1, B = batch;
    float **vec[] = {&s->x, &s->h, &s->o,      &s->q,    &s->att, &s->k,  &s->v,
                     &s->g, &s->u, &s->logits, &s->freq, &s->cos, &s->sin};
    size_t len[] = {B * m->n_embd, B * m->n_embd, B * m->n_embd, B * nq, B * nq,   B * nkv, B * nkv,
                    B * m->n_ff,   B * m->n_ff,   m->n_vocab,    half,   B * half, B * half};
    int bad = 0;
    for (size_t i = 0; i < sizeof len / sizeof len[0]; i++)
        bad |= (*vec[i] = malloc(len[i] * sizeof(float))) == NULL;
    if (bad || alloc_cache(s) || dd_hybrid_state_init(s)) {
        dd_state_free(s);
        snprintf(err, err_bytes, "out of memory (context %zu)", ctx);
        return -1;
    }
    if (attn_work(s)) {
        if (!s->attn_work) snprintf(err, err_bytes, "out of memory (attention work)");
        dd_state_free(s);
        return -1;
    }
    /* theta^(-2i/n_rot) for each pair; the model checked theta and n_rot */
    dn_status st = s->m->n_rot ? dn_rope_freqs(s->m->theta, s->m->n_rot, 1.0f, s->freq) : DN_OK;
    if (st != DN_OK) {
        snprintf(err, err_bytes, "rotary frequencies: %s", dn_status_str(st));
        dd_state_free(s);
        return -1;
    }
    s->pool = dn_pool_create(threads);
    if (!s->pool) {
        dd_state_free(s);
        snprintf(err, err_bytes, "cannot create a pool of %u threads", threads);
        return -1;
    }
    return 0;
}

void dd_state_free(dd_state *s)
{
    float *vec[] = {s->x, s->h, s->o,      s->q,    s->att, s->k,  s->v,
                    s->g, s->u, s->logits, s->freq, s->cos, s->sin};
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) free(vec[i]);
    for (size_t l = 0; s->kc && l < s->m->n_layer; l++) {
        free(s->kc[l]);
        free(s->vc ? s->vc[l] : NULL);
        free(s->ks ? s->ks[l] : NULL);
        free(s->vs ? s->vs[l] : NULL);
    }
    free(s->kc);
    free(s->vc);
    free(s->ks);
    free(s->vs);
    free(s->attn_work);
    free(s->pact_mem);
    if (s->m) dd_hybrid_state_free(s);
    dn_pool_destroy(s->pool);
    char *err = s->err;
    size_t err_bytes = s->err_bytes;
    memset(s, 0, sizeof *s);
    s->err = err;
    s->err_bytes = err_bytes;
}
