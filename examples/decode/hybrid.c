/* SPDX-License-Identifier: MIT */
/*
 * hybrid.c: the Gated-DeltaNet layer of the hybrid architecture (a
 * Qwen3-Next-like stack) and its recurrent state. One token:
 *
 *   q, k (key heads), v, z (value heads), b, a (one a value head) = W h
 *   q, k, v = silu(causal conv (q, k, v))           dn_gdn_conv_append
 *   q, k l2-normalised per key head                  dn_l2norm
 *   beta = sigmoid(b);  g = -exp(a_log) * softplus(a + dt_bias)
 *   out = the gated delta rule over the heads       dn_gdn_layer (pool)
 *   out = rmsnorm(out per head) * silu(z);  o = Wout out
 */
#include <stdlib.h>
#include <string.h>

#include "ops.h"

int dd_hybrid_state_init(dd_state *s)
{
    const dd_model *m = s->m;
    if (m->arch != DD_HYBRID) return 0;
    size_t L = m->n_layer, qk = m->gdn_kh * m->gdn_d, v = m->gdn_vh * m->gdn_d;
    size_t ch = 2 * qk + v, H = m->gdn_vh;
    s->ring = calloc(L, sizeof *s->ring);
    s->ssm = calloc(L, sizeof *s->ssm);
    s->ring_head = calloc(L, sizeof *s->ring_head);
    s->conv_in = malloc(ch * sizeof(float));
    s->conv_out = malloc(ch * sizeof(float));
    s->z = malloc(v * sizeof(float));
    s->gdn_out = malloc(v * sizeof(float));
    s->gates = malloc(4 * H * sizeof(float));
    if (!s->ring || !s->ssm || !s->ring_head || !s->conv_in || !s->conv_out || !s->z ||
        !s->gdn_out || !s->gates)
        return -1;
    for (size_t l = 0; l < L; l++) {
        if (!m->layers[l].gdn) continue;
        /* taps - 1 rows of history, zero before the first token */
        s->ring[l] = calloc((m->gdn_taps - 1) * ch + 1, sizeof(float));
        s->ssm[l] = calloc(H * m->gdn_d * m->gdn_d, sizeof(float));
        if (!s->ring[l] || !s->ssm[l]) return -1;
    }
    return 0;
}

void dd_hybrid_state_free(dd_state *s)
{
    for (size_t l = 0; s->ring && l < s->m->n_layer; l++) {
        free(s->ring[l]);
        free(s->ssm ? s->ssm[l] : NULL);
    }
    free(s->ring);
    free(s->ssm);
    free(s->ring_head);
    free(s->conv_in);
    free(s->conv_out);
    free(s->z);
    free(s->gdn_out);
    free(s->gates);
}

/* beta = dn_sigmoid(b), g = -(dn_exp(a_log)) * dn_softplus(a + dt_bias),
   each operation the library's. */
static void gates(dd_state *s, const dd_layer *L, float *beta, float *g)
{
    const float *b = s->gates, *a = s->gates + s->m->gdn_vh;
    for (size_t h = 0; h < s->m->gdn_vh; h++) {
        beta[h] = dn_sigmoid(b[h]);
        float decay_rate = dn_fsub(0.0f, dn_exp(L->a_log[h]));
        g[h] = dn_fmul(decay_rate, dn_softplus(dn_fadd(a[h], L->dt_bias[h])));
    }
}

static int mix(dd_state *s, const dd_layer *L, size_t l)
{
    const dd_model *m = s->m;
    size_t d = m->gdn_d, qk = m->gdn_kh * d, v = m->gdn_vh * d, H = m->gdn_vh;
    float *beta = s->gates + 2 * H, *g = s->gates + 3 * H;
    float *q = s->conv_out, *k = s->conv_out + qk, *vv = s->conv_out + 2 * qk;
    dn_status st = dn_gdn_conv_append(s->ring[l], &s->ring_head[l], 2 * qk + v, m->gdn_taps,
                                      L->conv, s->conv_in, s->conv_out);
    for (size_t h = 0; st == DN_OK && h < m->gdn_kh; h++) {
        st = dn_l2norm(q + h * d, m->eps, q + h * d, d);
        if (st == DN_OK) st = dn_l2norm(k + h * d, m->eps, k + h * d, d);
    }
    if (st != DN_OK) return dd_fail(s, "gated deltanet conv / l2norm", st);
    gates(s, L, beta, g);
    dn_gdn_shape shape = {(uint32_t)H, (uint32_t)m->gdn_kh, (uint32_t)d, (uint32_t)d,
                          DN_GDN_STORE_F32};
    st = dn_gdn_layer(s->ssm[l], &shape, 1, q, k, vv, g, beta, dn_rsqrt((float)d), s->gdn_out,
                      s->pool);
    if (st != DN_OK) return dd_fail(s, "gated deltanet", st);
    /* the gated RMSNorm: each value head normalised, times silu(z) */
    for (size_t h = 0; st == DN_OK && h < H; h++)
        st = dn_rmsnorm(s->gdn_out + h * d, L->ssm_norm, m->eps, s->gdn_out + h * d, d);
    if (st == DN_OK) st = dn_silu_v(s->z, s->z, v);
    for (size_t i = 0; i < v; i++) s->gdn_out[i] = dn_fmul(s->gdn_out[i], s->z[i]);
    return st == DN_OK ? 0 : dd_fail(s, "gated rmsnorm", st);
}

/* The layer's mixer on s->h (the normalised input): its output in s->o. */
int op_gdn(dd_state *s, size_t l)
{
    const dd_model *m = s->m;
    const dd_layer *L = &m->layers[l];
    size_t qk = m->gdn_kh * m->gdn_d, H = m->gdn_vh;
    const dd_matrix *w[] = {&L->sq, &L->sk, &L->sv, &L->sz, &L->sb, &L->sa};
    float *const y[] = {s->conv_in, s->conv_in + qk, s->conv_in + 2 * qk,
                        s->z,       s->gates,        s->gates + H};
    if (op_mat_vecs(s, w, s->h, y, 6, DD_T_QKV)) return -1;
    double t0 = dd_now();
    int r = mix(s, L, l);
    s->bucket[DD_T_GDN] += dd_now() - t0;
    return r ? r : op_mat_vec(s, &L->sout, s->gdn_out, s->o, DD_T_WO);
}
