/* SPDX-License-Identifier: MIT */
/* The digest's engine families: element-wise ops, activations, sine and cosine
   with the RoPE tables, prepared activations and their products. */
#include <stdlib.h>

#include "digest.h"

enum { LENS = 12, SPREAD = 65536 };
static const size_t lens[LENS] = {0, 1, 2, 3, 7, 31, 32, 33, 64, 100, 257, 1000};

/* 2^16 inputs spread over all 2^32 patterns, one in each run of 2^16 (as dg_math) */
static float *spread(dg_rng *r)
{
    float *x = malloc(SPREAD * sizeof(float));
    for (uint32_t i = 0; i < SPREAD; i++) dg_put(&x[i], i << 16 | (uint32_t)(dg_next(r) & 0xFFFFu));
    return x;
}

/* Every dn_vec_* at lengths that meet every tail, on modest values and on
   any binary32, on `pool`. */
void dg_vec(dg_hash *h, dn_pool *pool)
{
    dg_rng r = {13};
    float *a = malloc(1000 * sizeof(float)), *b = malloc(1000 * sizeof(float));
    float *y = malloc(1000 * sizeof(float)), *w = malloc(1000 * sizeof(float));
    for (int pass = 0; pass < 2; pass++)
        for (int l = 0; l < LENS; l++) {
            size_t n = lens[l];
            for (size_t i = 0; i < n; i++) {
                if (pass)
                    dg_any(&r, &a[i]), dg_any(&r, &b[i]);
                else
                    a[i] = dg_small(&r), b[i] = dg_small(&r);
                w[i] = dg_small(&r);
            }
            dg_st(h, dn_vec_add(a, b, y, n, pool)), dg_f32s(h, y, n);
            dg_st(h, dn_vec_sub(a, b, y, n, pool)), dg_f32s(h, y, n);
            dg_st(h, dn_vec_mul(a, b, y, n, pool)), dg_f32s(h, y, n);
            dg_st(h, dn_vec_scale(a, -0.8125f, y, n, pool)), dg_f32s(h, y, n);
            dg_st(h, dn_vec_axpy(1.3f, a, y, n, pool)), dg_f32s(h, y, n);
            dg_st(h, dn_vec_silu_mul(a, b, y, n, pool)), dg_f32s(h, y, n);
            dg_st(h, dn_vec_sigmoid_mul(a, b, y, n, pool)), dg_f32s(h, y, n);
            dg_st(h, dn_vec_add_rmsnorm(a, b, w, 1e-6f, y, n));
            dg_f32s(h, a, n), dg_f32s(h, y, n);
        }
    free(a), free(b), free(y), free(w);
}

/* tanh, both GELUs (scalar and array forms) on the spread of all patterns;
   the zero-centred and gated RMSNorms on every tail. */
void dg_activations(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    typedef float (*unary)(float);
    typedef dn_status (*vector)(const float *, float *, size_t);
    static const unary f[3] = {dn_tanh, dn_gelu_tanh, dn_gelu};
    static const vector v[3] = {dn_tanh_v, dn_gelu_tanh_v, dn_gelu_v};
    dg_rng r = {14};
    float *x = spread(&r), *y = malloc(SPREAD * sizeof(float));
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < SPREAD; i++) dg_f32(h, f[k](x[i]));
        dg_st(h, v[k](x, y, SPREAD));
        dg_f32s(h, y, SPREAD);
    }
    float *g = x + 2000, *w = x + 4000; /* reused as modest inputs below */
    for (int l = 0; l < LENS; l++) {
        size_t n = lens[l];
        dg_fill_small(&r, x, n), dg_fill_small(&r, g, n), dg_fill_small(&r, w, n);
        dg_st(h, dn_rms0(x, w, 1e-6f, y, n)), dg_f32s(h, y, n);
        for (int kind = DN_GATE_SIGMOID; kind <= DN_GATE_SILU; kind++) {
            dg_st(h, dn_rms_gated(x, g, w, 1e-5f, (dn_gate)kind, y, n));
            dg_f32s(h, y, n);
        }
    }
    free(x), free(y);
}

/* sin, cos and sincos on the spread of all patterns and on angles below
   2^20; RoPE frequencies and tables for common bases and positions up to
   2^24 either side. */
void dg_trig(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    dg_rng r = {15};
    float *x = spread(&r), *s = malloc(SPREAD * sizeof(float)), *c = malloc(SPREAD * sizeof(float));
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            for (size_t i = 0; i < SPREAD; i++) x[i] = dn_ldexp(dg_small(&r), (int32_t)(i % 24));
        for (size_t i = 0; i < SPREAD; i++) {
            float si, co;
            dn_sincos(x[i], &si, &co);
            dg_f32(h, dn_sin(x[i])), dg_f32(h, dn_cos(x[i])), dg_f32(h, si), dg_f32(h, co);
        }
        dg_st(h, dn_sin_v(x, s, SPREAD)), dg_f32s(h, s, SPREAD);
        dg_st(h, dn_cos_v(x, c, SPREAD)), dg_f32s(h, c, SPREAD);
        dg_st(h, dn_sincos_v(x, s, c, SPREAD)), dg_f32s(h, s, SPREAD), dg_f32s(h, c, SPREAD);
    }
    static const float theta[3] = {10000.0f, 500000.0f, 1000000.0f};
    static const size_t dims[3] = {64, 128, 32};
    int32_t pos[9] = {0, 1, 2, 77, 4095, 32767, -5, 1 << 20, 1 << 24};
    for (int t = 0; t < 3; t++) {
        float w[64];
        dg_st(h, dn_rope_freqs(theta[t], dims[t], t == 2 ? 0.25f : 1.0f, w));
        dg_f32s(h, w, dims[t] / 2);
        dg_st(h, dn_rope_table(pos, 9, w, dims[t] / 2, c, s));
        dg_f32s(h, c, 9 * dims[t] / 2), dg_f32s(h, s, 9 * dims[t] / 2);
    }
    free(x), free(s), free(c);
}

/* ---- prepared activations ------------------------------------------------- */

enum { ACOLS = 3, AROWS = 5 };

/* One format, scaling and word count: the column products, the grouped
   product and the matrix products of a prepared activation. */
static void act_case(dg_hash *h, dg_rng *r, const dg_format *f, int sc, int words, dn_pool *pool)
{
    size_t bb = dn_type_block_bytes(f->type), n = 0, bytes = 0, bad = 0;
    uint8_t *w = malloc(AROWS * MAXB * bb);
    float *x = malloc(ACOLS * MAXN * sizeof(float)), *out = malloc(ACOLS * AROWS * sizeof(float));
    for (int row = 0; row < AROWS; row++) n = dg_random_row(r, f, w + row * MAXB * bb, MAXB, 0);
    for (size_t i = 0; i < ACOLS * n; i++) {
        float v = dg_small(r);
        x[i] = dn_ldexp(v, (int32_t)dg_between(r, -3, 3));
    }
    /* the size itself is not hashed: it holds pointers, so it is the host's */
    dg_st(h, dn_act_size(n, ACOLS, (dn_act_scaling)sc, (dn_words)words, &bytes));
    void *mem = malloc(bytes);
    dn_act *act = NULL, *made = NULL;
    dg_st(h,
          dn_act_prepare(x, n, ACOLS, (dn_act_scaling)sc, (dn_words)words, mem, bytes, &act, &bad));
    dg_u64(h, bad);
    dg_st(h, dn_act_create(x, n, ACOLS, (dn_act_scaling)sc, (dn_words)words, &made, &bad));
    for (size_t col = 0; col < ACOLS; col++) {
        dg_st(h, dn_act_mat_vec(col % 2 ? act : made, col, f->type, w, AROWS, out, pool, &bad));
        dg_f32s(h, out, AROWS), dg_u64(h, bad);
        dg_st(h, dn_act_mat_vec_rows(act, col, f->type, w, AROWS, 1, AROWS - 1, out, &bad));
        dg_f32s(h, out + 1, AROWS - 2);
    }
    float o2[AROWS];
    dn_act_matrix mats[2] = {{f->type, w, AROWS, out}, {f->type, w + MAXB * bb, AROWS - 1, o2}};
    size_t bad_matrix = 0;
    dg_st(h, dn_act_mat_vec_multi(act, 2, mats, 2, pool, &bad_matrix, &bad));
    dg_f32s(h, out, AROWS), dg_f32s(h, o2, AROWS - 1);
    dg_st(h, dn_act_mat_mul(made, f->type, w, AROWS, out, pool, &bad));
    dg_f32s(h, out, ACOLS * AROWS);
    dg_st(h, dn_act_mat_mul_rows(act, 1, ACOLS, f->type, w, AROWS, 2, AROWS, out, &bad));
    for (size_t col = 1; col < ACOLS; col++) dg_f32s(h, out + col * AROWS + 2, AROWS - 2);
    dn_act_destroy(made);
    free(mem), free(w), free(x), free(out);
}

void dg_act(dg_hash *h, dn_pool *pool)
{
    dg_rng r = {16};
    for (int i = 0; i < 12; i++)
        for (int sc = 0; sc < 2; sc++)
            for (int words = 1; words <= 2; words++)
                act_case(h, &r, &dg_formats[i], sc, words, pool);
}
