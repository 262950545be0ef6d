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
 *
 * The prompt goes through in batches of positions (dd_run.batch): each
 * product multiplies a batch's columns at once, the attention of each
 * position runs after its own K and V are appended, so every number is the
 * one of a position alone and the digest does not depend on the batch.
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

/* The attention mixer on the T columns of s->h (positions pos .. pos + T -
   1): their outputs in s->o. The products take the T columns at once; the
   rest runs column by column. */
static int attention(dd_state *s, size_t l, size_t pos, size_t T)
{
    const dd_model *m = s->m;
    const dd_layer *L = &m->layers[l];
    size_t nq = m->n_head * m->head_dim, nkv = m->n_head_kv * m->head_dim;
    const dd_matrix *w[] = {&L->wq, &L->wk, &L->wv};
    float *const y[] = {s->q, s->k, s->v};
    if (op_mat_muls(s, w, s->h, T, y, 3, DD_T_QKV)) return -1;
    for (size_t t = 0; t < T; t++) {
        float *q = s->q + t * nq, *k = s->k + t * nkv, *v = s->v + t * nkv;
        if (L->bq) op_add(s, q, L->bq, nq);
        if (L->bk) op_add(s, k, L->bk, nkv);
        if (L->bv) op_add(s, v, L->bv, nkv);
        if ((L->q_norm && op_head_norm(s, q, m->n_head, L->q_norm)) ||
            (L->k_norm && op_head_norm(s, k, m->n_head_kv, L->k_norm)) ||
            op_rope(s, q, m->n_head, t) || op_rope(s, k, m->n_head_kv, t) ||
            op_attend(s, l, pos + t, q, k, v, s->att + t * nq))
            return -1;
    }
    const dd_matrix *wo = &L->wo;
    return op_mat_muls(s, &wo, s->att, T, &s->o, 1, DD_T_WO);
}

/* y_t = rmsnorm(x_t) for the T columns of x. */
static int norms(dd_state *s, const float *x, const float *w, float *y, size_t T)
{
    size_t d = s->m->n_embd;
    for (size_t t = 0; t < T; t++)
        if (op_rmsnorm(s, x + t * d, w, y + t * d, d)) return -1;
    return 0;
}

static int layer_pass(dd_state *s, size_t l, size_t pos, size_t T)
{
    const dd_model *m = s->m;
    const dd_layer *L = &m->layers[l];
    size_t d = m->n_embd;
    if (norms(s, s->x, L->attn_norm, s->h, T) ||
        (L->gdn ? op_gdn(s, l) : attention(s, l, pos, T))) /* T == 1 with GDN layers */
        return -1;
    op_add(s, s->x, s->o, T * d);
    const dd_matrix *w[] = {&L->gate, &L->up}, *down = &L->down;
    float *const y[] = {s->g, s->u};
    if (norms(s, s->x, L->ffn_norm, s->h, T) || op_mat_muls(s, w, s->h, T, y, 2, DD_T_FFN_IN) ||
        op_swiglu(s, s->g, s->u, T * m->n_ff) ||
        op_mat_muls(s, &down, s->g, T, &s->o, 1, DD_T_FFN_DOWN))
        return -1;
    op_add(s, s->x, s->o, T * d);
    return 0;
}

/* Tokens tok[0 .. T) at positions pos .. pos + T - 1 through every layer;
   the last one's logits when `head`. Every column's numbers are the ones a
   step of that position alone gives (op_mat_muls, op_attend). */
static int pass(dd_state *s, const uint32_t *tok, size_t pos, size_t T, int head)
{
    size_t d = s->m->n_embd;
    for (size_t t = 0; t < T; t++)
        if (op_embed(s, tok[t], s->x + t * d)) return -1;
    if (op_rope_table(s, pos, T)) return -1;
    for (size_t l = 0; l < s->m->n_layer; l++)
        if (layer_pass(s, l, pos, T)) return -1;
    if (!head) return 0;
    const float *last = s->x + (T - 1) * d;
    return op_rmsnorm(s, last, s->m->output_norm, s->h, d) ||
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
    if (run->batch > DD_BATCH_MAX) {
        snprintf(err, err_bytes, "batch %zu is past %d", run->batch, DD_BATCH_MAX);
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

/* Positions the prompt's passes take: the run's batch, one at a time for
   a model with Gated-DeltaNet layers (their state moves token by token). */
static size_t batch_of(const dd_model *m, const dd_run *run)
{
    for (size_t l = 0; l < m->n_layer; l++)
        if (m->layers[l].gdn) return 1;
    size_t b = run->batch ? run->batch : DD_BATCH_DEFAULT;
    return b < run->n_prompt ? b : run->n_prompt;
}

/* The pass's logits into the digest, the run's copy and the next token. */
static void take_logits(dd_state *s, const dd_run *run, dd_result *res, uint64_t *d)
{
    size_t nv = s->m->n_vocab;
    *d = dd_digest_logits(*d, s->logits, nv);
    if (run->logits) memcpy(run->logits + res->n_tokens * nv, s->logits, nv * sizeof *s->logits);
    double ta = dd_now();
    res->tokens[res->n_tokens++] = (uint32_t)dn_argmax(s->logits, nv);
    s->bucket[DD_T_ARGMAX] += dd_now() - ta;
}

int dd_generate(const dd_model *m, const dd_run *run, dd_result *res, char *err, size_t err_bytes)
{
    memset(res, 0, sizeof *res);
    if (check_run(m, run, err, err_bytes)) return -1;
    dd_state s;
    s.err = err;
    s.err_bytes = err_bytes;
    res->tokens = malloc(run->n_predict * sizeof *res->tokens);
    if (!res->tokens || dd_state_init(&s, m, run->n_prompt + run->n_predict, batch_of(m, run),
                                      run->threads, run->kv_int8)) {
        if (!res->tokens) snprintf(err, err_bytes, "out of memory");
        free(res->tokens);
        res->tokens = NULL;
        return -1;
    }
    uint64_t d = DD_DIGEST_START;
    double t0 = dd_now(), tg = t0;
    int r = 0;
    size_t total = run->n_prompt + run->n_predict - 1;
    for (size_t pos = 0, T; r == 0 && pos < total; pos += T) {
        const uint32_t *tok =
            pos < run->n_prompt ? run->prompt + pos : res->tokens + (pos - run->n_prompt);
        T = pos < run->n_prompt ? run->n_prompt - pos : 1;
        if (T > s.batch) T = s.batch;
        if (pos == run->n_prompt) tg = dd_now();
        int head = pos + T >= run->n_prompt; /* the prompt's last position or after */
        r = pass(&s, tok, pos, T, head);
        if (r == 0 && head) take_logits(&s, run, res, &d);
    }
    double t1 = dd_now();
    res->digest = d;
    res->seconds = t1 - t0;
    res->gen_seconds = run->n_predict > 1 ? t1 - tg : 0.0;
    res->prompt_seconds = run->n_predict > 1 ? tg - t0 : t1 - t0;
    res->batch = s.batch;
    memcpy(res->bucket, s.bucket, sizeof s.bucket);
    dd_state_free(&s);
    if (r != 0) {
        free(res->tokens);
        res->tokens = NULL;
    }
    return r ? -1 : 0;
}
