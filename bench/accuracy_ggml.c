/* SPDX-License-Identifier: MIT */
/*
 * decodenum-accuracy-ggml: the library's attention and Gated-DeltaNet beside
 * ggml's on the same inputs, both against binary64 (built only with a ggml
 * peer, bench/ggml_peer.h).
 *
 * Attention: one KV head of head size 128 under 8 query heads, contexts 512
 * and 8192, q/K/V Gaussian or outlier-heavy (as tests/accuracy_attention.c
 * makes them). Per path, the largest over the heads of
 * ||out - ref||_2 / ||ref||_2, ref being attention in binary64 on the f32
 * rows before caching ("source"; each path's cache rounding included) and,
 * for the f16 caches, on the binary16 values both read ("cached"); and
 * whether 1, 2 and 3 threads give the same bits.
 *
 * Gated-DeltaNet: one head of S = 128 over 1,000 and 10,000 tokens
 * (l2-normalised q and k, decay in (0.8, 0.99), beta in (0.05, 0.95), v in
 * [-1, 1)): the largest |error| of the outputs and of the final state over
 * the largest |exact| value, the recurrence computed in binary64.
 *
 *   ./bench/decodenum-accuracy-ggml
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "ggml_peer.h"

enum { D = 128, QH = 8, S = 128, GGML_F16 = 1, GGML_Q8_0 = 8 };

static uint64_t g_state;

static double uniform(void)
{
    g_state = g_state * 6364136223846793005u + 1442695040888963407u;
    return ((double)(g_state >> 11) + 0.5) * 0x1p-53;
}

static float gauss(void)
{
    return (float)(sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform()));
}

static void fill(float *x, size_t n, int outliers, int channels)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = gauss();
        if (outliers && uniform() < 0.01) x[i] *= 20.0f;
        if (outliers && channels && (i % D == 5 || i % D == 77)) x[i] *= 10.0f;
    }
}

/* ---- attention --------------------------------------------------------------- */

/* The largest over the heads of the relative L2 error of out against
   attention in binary64 over rows k, v (n rows of D). */
static double attention_error(const float *q, const double *k, const double *v, size_t n,
                              const float *out)
{
    double *s = malloc(n * sizeof *s), worst = 0.0;
    for (size_t h = 0; h < QH; h++) {
        double m = -INFINITY, sum = 0.0, ref[D] = {0}, e = 0.0, r = 0.0;
        for (size_t j = 0; j < n; j++) {
            double t = 0.0;
            for (size_t i = 0; i < D; i++) t += (double)q[h * D + i] * k[j * D + i];
            s[j] = t / sqrt((double)D);
            m = fmax(m, s[j]);
        }
        for (size_t j = 0; j < n; j++) sum += s[j] = exp(s[j] - m);
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < D; i++) ref[i] += s[j] / sum * v[j * D + i];
        for (size_t i = 0; i < D; i++) {
            double d = (double)out[h * D + i] - ref[i];
            e += d * d, r += ref[i] * ref[i];
        }
        worst = fmax(worst, sqrt(e / r));
    }
    free(s);
    return worst;
}

typedef struct attn_data {
    size_t n;
    float q[QH * D], *k, *v; /* the source rows */
    double *k64, *v64;       /* the same, exactly */
    double *kc64, *vc64;     /* the binary16 cache's values, exactly */
    uint16_t *kh, *vh;       /* the binary16 cache */
    void *k8, *v8;           /* the rows as ggml's Q8_0 */
} attn_data;

static int attn_data_make(attn_data *a, size_t n, int outliers)
{
    size_t e = n * D;
    a->n = n, g_state = 0x5EED + n + (uint64_t)outliers;
    a->k = malloc(e * 4), a->v = malloc(e * 4), a->kh = malloc(e * 2), a->vh = malloc(e * 2);
    a->k64 = malloc(e * 8), a->v64 = malloc(e * 8), a->kc64 = malloc(e * 8),
    a->vc64 = malloc(e * 8);
    a->k8 = malloc(e / 32 * 34), a->v8 = malloc(e / 32 * 34);
    if (!a->k || !a->v || !a->kh || !a->vh || !a->k64 || !a->v64 || !a->kc64 || !a->vc64 ||
        !a->k8 || !a->v8)
        return 0;
    fill(a->k, e, outliers, 1), fill(a->v, e, outliers, 0), fill(a->q, QH * D, outliers, 1);
    dn_f32_to_f16_v(a->k, a->kh, e), dn_f32_to_f16_v(a->v, a->vh, e);
    for (size_t i = 0; i < e; i++) {
        a->k64[i] = a->k[i], a->v64[i] = a->v[i];
        a->kc64[i] = dn_f16_to_f32(a->kh[i]), a->vc64[i] = dn_f16_to_f32(a->vh[i]);
    }
    ggml_peer_quantize_q8_0(a->k, a->k8, n, D), ggml_peer_quantize_q8_0(a->v, a->v8, n, D);
    return 1;
}

static void attn_data_free(attn_data *a)
{
    free(a->k), free(a->v), free(a->kh), free(a->vh), free(a->k64), free(a->v64);
    free(a->kc64), free(a->vc64), free(a->k8), free(a->v8);
}

/* ggml's flash attention on 1, 2 and 3 threads into out[0..2]; 0 if it fails. */
static int ggml_attend(const attn_data *a, int type, float out[3][QH * D])
{
    const void *k = type == GGML_F16 ? (const void *)a->kh : a->k8;
    const void *v = type == GGML_F16 ? (const void *)a->vh : a->v8;
    for (int t = 0; t < 3; t++) {
        ggml_peer *p = ggml_peer_attention_create(type, k, v, a->n, D, QH, 1, a->q,
                                                  1.0f / sqrtf((float)D), out[t], t + 1);
        if (!p) return 0;
        ggml_peer_call(&(bench_case){.ctx = p});
        ggml_peer_destroy(p);
    }
    return 1;
}

static const char *same3(float out[3][QH * D])
{
    size_t b = sizeof out[0];
    return memcmp(out[0], out[1], b) == 0 && memcmp(out[0], out[2], b) == 0 ? "yes" : "NO";
}

/* Ours on a cache of `type` (threads 0, 1 and 2 of a pool) into out[0..2]. */
static void ours_attend(const attn_data *a, uint32_t type, uint32_t scaling, uint32_t words,
                        float out[3][QH * D])
{
    size_t e = a->n * D, es = type == DN_KV_F16 ? 2 : 1;
    dn_kv_cache c = {malloc(e * es),
                     malloc(e * es),
                     malloc(a->n * 2),
                     malloc(a->n * 2),
                     D,
                     1,
                     D,
                     D,
                     1,
                     1,
                     type,
                     0};
    for (size_t p = 0; p < a->n; p++) dn_cache_append(&c, p, a->k + p * D, a->v + p * D);
    dn_attn_params prm = {QH, 0, a->n, 1.0f / sqrtf((float)D), scaling, words};
    for (int t = 0; t < 3; t++) {
        dn_pool *pool = t ? dn_pool_create((unsigned)t + 1) : NULL;
        dn_attend(&c, &prm, a->q, out[t], NULL, 0, pool);
        dn_pool_destroy(pool);
    }
    free(c.k), free(c.v), free(c.k_scale), free(c.v_scale);
}

static void attention_row(const attn_data *a, const char *path, int outliers, int cached,
                          float out[3][QH * D])
{
    char c[16] = "-";
    if (cached)
        snprintf(c, sizeof c, "%.2e", attention_error(a->q, a->kc64, a->vc64, a->n, out[0]));
    printf("| %-26s | %-8s | %5zu | %9s | %.2e | %-3s |\n", path,
           outliers ? "outliers" : "Gaussian", a->n, c,
           attention_error(a->q, a->k64, a->v64, a->n, out[0]), same3(out));
}

static void attention_table(void)
{
    printf("Attention: 8 query heads over one KV head, head size 128; largest relative L2 error\n");
    printf("| path | q, K, V | context | cached | source | same bits on 1, 2, 3 threads |\n");
    printf("|---|---|---|---|---|---|\n");
    static float out[3][QH * D];
    const size_t ctxs[2] = {512, 8192};
    for (int o = 0; o < 2; o++)
        for (int ci = 0; ci < 2; ci++) {
            attn_data a = {0};
            if (!attn_data_make(&a, ctxs[ci], o)) {
                printf("out of memory\n");
                exit(1);
            }
            ours_attend(&a, DN_KV_F16, DN_ACT_SUB32, DN_WORDS_ONE, out);
            attention_row(&a, "ours: vector, f16", o, 1, out);
            if (ggml_attend(&a, GGML_F16, out)) attention_row(&a, "ggml: flash, f16", o, 1, out);
            ours_attend(&a, DN_KV_INT8, DN_ACT_SUB32, DN_WORDS_ONE, out);
            attention_row(&a, "ours: int8, Sub32, 1 word", o, 0, out);
            ours_attend(&a, DN_KV_INT8, DN_ACT_SUB32, DN_WORDS_TWO, out);
            attention_row(&a, "ours: int8, Sub32, 2 words", o, 0, out);
            if (ggml_attend(&a, GGML_Q8_0, out)) attention_row(&a, "ggml: flash, q8_0", o, 0, out);
            attn_data_free(&a);
        }
}

/* ---- Gated-DeltaNet ---------------------------------------------------------- */

typedef struct gdn_inputs {
    int tokens;
    float *q, *k, *v, *g, *beta; /* [tokens][S] (g, beta: [tokens]) */
} gdn_inputs;

static int gdn_inputs_make(gdn_inputs *in, int tokens)
{
    size_t e = (size_t)tokens * S;
    in->tokens = tokens, g_state = 0x9E3779B97F4A7C15u + (uint64_t)tokens;
    in->q = malloc(e * 4), in->k = malloc(e * 4), in->v = malloc(e * 4);
    in->g = malloc((size_t)tokens * 4), in->beta = malloc((size_t)tokens * 4);
    if (!in->q || !in->k || !in->v || !in->g || !in->beta) return 0;
    for (size_t i = 0; i < e; i++)
        in->q[i] = (float)(2 * uniform() - 1), in->k[i] = (float)(2 * uniform() - 1),
        in->v[i] = (float)(2 * uniform() - 1);
    for (int t = 0; t < tokens; t++) {
        dn_l2norm(in->q + (size_t)t * S, 1e-6f, in->q + (size_t)t * S, S);
        dn_l2norm(in->k + (size_t)t * S, 1e-6f, in->k + (size_t)t * S, S);
        in->g[t] = logf((float)(0.8 + 0.19 * uniform()));
        in->beta[t] = (float)(0.05 + 0.9 * uniform());
    }
    return 1;
}

/* The recurrence in binary64: out [tokens][S], state [S][S] (row j: value j). */
static void gdn_exact(const gdn_inputs *in, double scale, double *out, double *st)
{
    memset(st, 0, (size_t)S * S * sizeof *st);
    for (int t = 0; t < in->tokens; t++) {
        const float *q = in->q + (size_t)t * S, *k = in->k + (size_t)t * S;
        double decay = exp((double)in->g[t]);
        for (int j = 0; j < S; j++) {
            double *row = st + j * S, rk = 0, rq = 0;
            for (int i = 0; i < S; i++) rk += row[i] * k[i];
            double coef = in->beta[t] * (in->v[(size_t)t * S + j] - decay * rk);
            for (int i = 0; i < S; i++) row[i] = decay * row[i] + coef * k[i], rq += row[i] * q[i];
            out[(size_t)t * S + j] = rq * scale;
        }
    }
}

/* The largest |x - ref| over the largest |ref|. */
static double rel_max(const float *x, const double *ref, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) e = fmax(e, fabs(x[i] - ref[i])), m = fmax(m, fabs(ref[i]));
    return e / m;
}

static void gdn_row(const char *who, int tokens, const float *out, const float *st,
                    const double *xo, const double *xs)
{
    printf("| %-22s | %6d | %.2e | %.2e |\n", who, tokens, rel_max(out, xo, (size_t)tokens * S),
           rel_max(st, xs, (size_t)S * S));
}

static void gdn_case(int tokens)
{
    gdn_inputs in;
    size_t e = (size_t)tokens * S, ss = (size_t)S * S;
    double *xo = malloc(e * 8), *xs = malloc(ss * 8);
    float *out = malloc((e + ss) * 4), *st = calloc(ss, 4), *st32 = malloc(ss * 4);
    uint16_t *bf = calloc(ss, 2);
    if (!gdn_inputs_make(&in, tokens) || !xo || !xs || !out || !st || !st32 || !bf) exit(1);
    float scale = 1.0f / sqrtf((float)S);
    gdn_exact(&in, scale, xo, xs);
    for (int t = 0; t < tokens; t++)
        dn_gdn_head(st, DN_GDN_STORE_F32, S, S, in.q + (size_t)t * S, in.k + (size_t)t * S,
                    in.v + (size_t)t * S, in.g[t], in.beta[t], scale, out + (size_t)t * S);
    gdn_row("ours: eager, f32 state", tokens, out, st, xo, xs);
    for (int t = 0; t < tokens; t++)
        dn_gdn_head(bf, DN_GDN_STORE_BF16, S, S, in.q + (size_t)t * S, in.k + (size_t)t * S,
                    in.v + (size_t)t * S, in.g[t], in.beta[t], scale, out + (size_t)t * S);
    dn_bf16_to_f32_v(bf, st32, ss);
    gdn_row("ours: eager, bf16 state", tokens, out, st32, xo, xs);
    memset(st, 0, ss * 4);
    ggml_peer *p =
        ggml_peer_gdn_create(1, 1, S, (size_t)tokens, in.q, in.k, in.v, in.g, in.beta, st, out, 1);
    if (p) {
        ggml_peer_call(&(bench_case){.ctx = p});
        gdn_row("ggml: gated_delta_net", tokens, out, out + e, xo, xs);
        ggml_peer_destroy(p);
    }
    free(in.q), free(in.k), free(in.v), free(in.g), free(in.beta);
    free(xo), free(xs), free(out), free(st), free(st32), free(bf);
}

int main(void)
{
    printf("decodenum-accuracy-ggml; peer %s\n\n", ggml_peer_build());
    attention_table();
    printf("\nGated-DeltaNet: one head, S = 128; largest |error| / largest |exact| (binary64)\n");
    printf("| path | tokens | outputs | final state |\n|---|---|---|---|\n");
    gdn_case(1000);
    gdn_case(10000);
    return 0;
}
