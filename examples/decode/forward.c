/* SPDX-License-Identifier: MIT */
/*
 * forward.c: the decode step of a Llama-family model and the greedy loop.
 *
 *   x = embedding(token)
 *   per layer:  h = rmsnorm(x);  q, k, v = Wq h, Wk h, Wv h (+ biases)
 *               (qwen3: q, k per-head rmsnorm);  q, k turned by RoPE
 *               att = attention(q; K, V cache with this position's k, v)
 *               x += Wo att;  h = rmsnorm(x)
 *               x += Wdown (silu(Wgate h) * Wup h)
 *   logits = Wout rmsnorm(x);  next = argmax(logits)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logits_digest.h"
#include "ops.h"

const char *const dd_bucket_names[DD_T_COUNT] = {
    "embedding",       "rmsnorm",      "act. quantization", "q k v products", "rope",
    "kv cache append", "attention",    "gated deltanet",    "output product", "gate+up products",
    "swiglu",          "down product", "residual adds",     "logits product", "argmax"};

/* The attention mixer on s->h: its output in s->o. */
static int attention(dd_state *s, size_t l, size_t pos)
{
    const dd_model *m = s->m;
    const dd_layer *L = &m->layers[l];
    size_t nq = m->n_head * m->head_dim, nkv = m->n_head_kv * m->head_dim;
    const dd_matrix *w[] = {&L->wq, &L->wk, &L->wv};
    float *const y[] = {s->q, s->k, s->v};
    if (op_mat_vecs(s, w, s->h, y, 3, DD_T_QKV)) return -1;
    if (L->bq) op_add(s, s->q, L->bq, nq);
    if (L->bk) op_add(s, s->k, L->bk, nkv);
    if (L->bv) op_add(s, s->v, L->bv, nkv);
    if (L->q_norm && op_head_norm(s, s->q, m->n_head, L->q_norm)) return -1;
    if (L->k_norm && op_head_norm(s, s->k, m->n_head_kv, L->k_norm)) return -1;
    return op_rope(s, s->q, m->n_head) || op_rope(s, s->k, m->n_head_kv) || op_attend(s, l, pos) ||
           op_mat_vec(s, &L->wo, s->att, s->o, DD_T_WO);
}

static int layer_step(dd_state *s, size_t l, size_t pos)
{
    const dd_model *m = s->m;
    const dd_layer *L = &m->layers[l];
    if (op_rmsnorm(s, s->x, L->attn_norm, s->h, m->n_embd) ||
        (L->gdn ? op_gdn(s, l) : attention(s, l, pos)))
        return -1;
    op_add(s, s->x, s->o, m->n_embd);
    const dd_matrix *w[] = {&L->gate, &L->up};
    float *const y[] = {s->g, s->u};
    if (op_rmsnorm(s, s->x, L->ffn_norm, s->h, m->n_embd) ||
        op_mat_vecs(s, w, s->h, y, 2, DD_T_FFN_IN) || op_swiglu(s, s->g, s->u, m->n_ff) ||
        op_mat_vec(s, &L->down, s->g, s->o, DD_T_FFN_DOWN))
        return -1;
    op_add(s, s->x, s->o, m->n_embd);
    return 0;
}

/* One token at position pos; logits when `head`. */
static int step(dd_state *s, uint32_t token, size_t pos, int head)
{
    if (op_embed(s, token) || op_rope_table(s, pos)) return -1;
    for (size_t l = 0; l < s->m->n_layer; l++)
        if (layer_step(s, l, pos)) return -1;
    if (!head) return 0;
    return op_rmsnorm(s, s->x, s->m->output_norm, s->h, s->m->n_embd) ||
           op_mat_vec(s, &s->m->output, s->h, s->logits, DD_T_HEAD);
}

static int check_run(const dd_model *m, const dd_run *run, char *err, size_t err_bytes)
{
    if (!run->prompt || run->n_prompt == 0 || run->n_predict == 0) {
        snprintf(err, err_bytes, "need at least one prompt token and one token to generate");
        return -1;
    }
    if (run->n_prompt > 1u << 20 || run->n_predict > 1u << 20) {
        snprintf(err, err_bytes, "prompt or generation too long");
        return -1;
    }
    for (size_t i = 0; i < run->n_prompt; i++)
        if (run->prompt[i] >= m->n_vocab) {
            snprintf(err, err_bytes, "prompt token %u is past the vocabulary (%zu)", run->prompt[i],
                     m->n_vocab);
            return -1;
        }
    return 0;
}

int dd_generate(const dd_model *m, const dd_run *run, dd_result *res, char *err, size_t err_bytes)
{
    memset(res, 0, sizeof *res);
    if (check_run(m, run, err, err_bytes)) return -1;
    dd_state s;
    s.err = err;
    s.err_bytes = err_bytes;
    res->tokens = malloc(run->n_predict * sizeof *res->tokens);
    if (!res->tokens ||
        dd_state_init(&s, m, run->n_prompt + run->n_predict, run->threads, run->kv_int8)) {
        if (!res->tokens) snprintf(err, err_bytes, "out of memory");
        free(res->tokens);
        res->tokens = NULL;
        return -1;
    }
    uint64_t d = DD_DIGEST_START;
    double t0 = dd_now(), tg = t0;
    int r = 0;
    size_t total = run->n_prompt + run->n_predict - 1;
    for (size_t pos = 0; r == 0 && pos < total; pos++) {
        int head = pos + 1 >= run->n_prompt;
        uint32_t tok = pos < run->n_prompt ? run->prompt[pos] : res->tokens[pos - run->n_prompt];
        if (pos == run->n_prompt) tg = dd_now();
        r = step(&s, tok, pos, head);
        if (r == 0 && head) {
            d = dd_digest_logits(d, s.logits, m->n_vocab);
            if (run->logits)
                memcpy(run->logits + res->n_tokens * m->n_vocab, s.logits,
                       m->n_vocab * sizeof *s.logits);
            double ta = dd_now();
            res->tokens[res->n_tokens++] = (uint32_t)dn_argmax(s.logits, m->n_vocab);
            s.bucket[DD_T_ARGMAX] += dd_now() - ta;
        }
    }
    double t1 = dd_now();
    res->digest = d;
    res->seconds = t1 - t0;
    res->gen_seconds = run->n_predict > 1 ? t1 - tg : 0.0;
    memcpy(res->bucket, s.bucket, sizeof s.bucket);
    dd_state_free(&s);
    if (r != 0) {
        free(res->tokens);
        res->tokens = NULL;
    }
    return r ? -1 : 0;
}
