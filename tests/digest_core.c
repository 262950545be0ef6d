/* SPDX-License-Identifier: MIT */
/* The digest's element-wise families: fp32 core, transcendentals, norms, quant. */
#include <math.h>
#include <stdlib.h>

#include "digest.h"

enum { LENS = 12 };
static const size_t lens[LENS] = {0, 1, 2, 3, 7, 31, 32, 33, 64, 100, 257, 1000};

/* Scalars on 4096 pairs of any binary32, every binary16 and bfloat16 pattern. */
static void fp32_scalars(dg_hash *h, dg_rng *r)
{
    for (int i = 0; i < 4096; i++) {
        float a, b;
        dg_any(r, &a);
        dg_any(r, &b);
        int64_t v = dg_int64(r);
        int32_t ve = (int32_t)dg_between(r, -220, 120), n = (int32_t)dg_between(r, -300, 300);
        uint32_t m = (uint32_t)dg_next(r) | 1u;
        int32_t me = (int32_t)dg_between(r, -100, 100);
        /* a float return value passes through the x87 on i386, which quiets
           a signalling NaN (docs/numerics.md §19): dn_ftz keeps a NaN's
           bits, so a signalling one is hashed through dn_ftz_v only */
        if (!dg_is_snan(a)) dg_f32(h, dn_ftz(a));
        dg_f32(h, dn_fadd(a, b));
        dg_f32(h, dn_fsub(a, b));
        dg_f32(h, dn_fmul(a, b));
        dg_f32(h, dn_tf32(a));
        dg_f32(h, dn_fmul_tf32(a, b));
        dg_f32(h, dn_ldexp(a, n));
        dg_f32(h, dn_scaled_to_f32(v, ve));
        dg_u64(h, dn_f32_to_f16(a));
        dg_u64(h, dn_f32_to_bf16(a));
        int64_t q = 0;
        dg_st(h, dn_rne(a, &q));
        dg_u64(h, (uint64_t)q);
        dg_st(h, dn_rne_div(a, m, me, &q));
        dg_u64(h, (uint64_t)q);
    }
    for (uint32_t u = 0; u < 65536; u++) {
        dg_f32(h, dn_f16_to_f32((uint16_t)u));
        dg_f32(h, dn_bf16_to_f32((uint16_t)u));
    }
    dg_f32(h, dn_nan());
}

/* Exact sums of up to 40 terms over the whole int64 x exponent range. */
static void fp32_exact_sums(dg_hash *h, dg_rng *r)
{
    dn_term t[40];
    for (int i = 0; i < 500; i++) {
        size_t n = (size_t)dg_between(r, 0, 40);
        int wide = i % 3 == 0;
        for (size_t j = 0; j < n; j++) {
            int64_t v = dg_int64(r);
            int32_t e = (int32_t)(wide ? dg_between(r, -400, 300) : dg_between(r, -40, 10));
            t[j] = (dn_term){v, e, 0};
        }
        float out = 0.0f;
        dg_st(h, dn_exact_sum(t, n, &out));
        dg_f32(h, out);
    }
}

/* The vector forms and the reductions, at lengths that meet every tail. */
static void fp32_vectors(dg_hash *h, dg_rng *r)
{
    float *a = malloc(1000 * sizeof(float)), *b = malloc(1000 * sizeof(float));
    float *y = malloc(1000 * sizeof(float));
    uint16_t *s = malloc(1000 * sizeof(uint16_t));
    for (int pass = 0; pass < 2; pass++)
        for (int l = 0; l < LENS; l++) {
            size_t n = lens[l];
            for (size_t i = 0; i < n; i++) {
                if (pass)
                    dg_any(r, &a[i]), dg_any(r, &b[i]);
                else
                    a[i] = dg_small(r), b[i] = dg_small(r);
            }
            dg_st(h, dn_ftz_v(a, y, n));
            dg_f32s(h, y, n);
            dg_st(h, dn_f32_to_f16_v(a, s, n));
            dg_u16s(h, s, n);
            dg_st(h, dn_f16_to_f32_v(s, y, n));
            dg_f32s(h, y, n);
            dg_st(h, dn_f32_to_bf16_v(a, s, n));
            dg_u16s(h, s, n);
            dg_st(h, dn_bf16_to_f32_v(s, y, n));
            dg_f32s(h, y, n);
            dg_f32(h, dn_tree(a, n));
            dg_f32(h, dn_fsum(a, n));
            dg_f32(h, dn_fdot(a, b, n));
            dg_f32(h, dn_fdot_tf32(a, b, n));
            float o = 0.0f;
            dg_st(h, dn_fdot_unit(DN_FPU_VECTOR, a, b, n, &o));
            dg_f32(h, o);
            dg_st(h, dn_fdot_unit(DN_FPU_TF32, a, b, n, &o));
            dg_f32(h, o);
            dg_f32(h, dn_fmax(a, n));
            dg_f32(h, dn_absmax(a, n));
            dg_u64(h, dn_argmax(a, n));
        }
    free(a), free(b), free(y), free(s);
}

void dg_fp32(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    dg_rng r = {1};
    fp32_scalars(h, &r);
    fp32_exact_sums(h, &r);
    fp32_vectors(h, &r);
}

/* The transcendentals on 2^16 inputs spread over all 2^32 patterns (one in
   each run of 2^16 consecutive patterns, at a random place), scalar and
   vector forms. */
void dg_math(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    enum { N = 65536 };
    typedef float (*unary)(float);
    typedef dn_status (*vector)(const float *, float *, size_t);
    static const unary f[8] = {dn_exp,   dn_ln,      dn_ln1p, dn_recip,
                               dn_rsqrt, dn_sigmoid, dn_silu, dn_softplus};
    static const vector v[8] = {dn_exp_v,   dn_ln_v,      dn_ln1p_v, dn_recip_v,
                                dn_rsqrt_v, dn_sigmoid_v, dn_silu_v, dn_softplus_v};
    dg_rng r = {2};
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
    for (uint32_t i = 0; i < N; i++) dg_put(&x[i], i << 16 | (uint32_t)(dg_next(&r) & 0xFFFFu));
    for (int k = 0; k < 8; k++) {
        for (size_t i = 0; i < N; i++) dg_f32(h, f[k](x[i]));
        dg_st(h, v[k](x, y, N));
        dg_f32s(h, y, N);
    }
    free(x), free(y);
}

/* softmax, rmsnorm, l2norm, rope (both modes), the Hadamard pair. */
void dg_norms(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    dg_rng r = {3};
    float *x = malloc(1024 * sizeof(float)), *w = malloc(1024 * sizeof(float));
    float *y = malloc(1024 * sizeof(float)), *c = malloc(512 * sizeof(float));
    float *s = malloc(512 * sizeof(float));
    for (int l = 0; l < LENS; l++) {
        size_t n = lens[l];
        dg_fill_small(&r, x, n);
        dg_fill_small(&r, w, n);
        dg_st(h, dn_softmax(x, y, n));
        dg_f32s(h, y, n);
        dg_st(h, dn_rmsnorm(x, w, 1e-6f, y, n));
        dg_f32s(h, y, n);
        dg_st(h, dn_l2norm(x, 1e-12f, y, n));
        dg_f32s(h, y, n);
        for (size_t i = 0; i < n / 2; i++) {
            c[i] = dn_f16_to_f32((uint16_t)dg_between(&r, 0x3000, 0x3C00));
            s[i] = dn_f16_to_f32(dg_f16_in(&r, 0x3000, 0x3C00));
        }
        for (int mode = 0; mode < 2; mode++) {
            dg_st(h, dn_rope(x, n, c, s, mode ? n / 4 : n / 2, (dn_rope_mode)mode, y));
            dg_f32s(h, y, n);
        }
    }
    for (size_t n = 1; n <= 1024; n *= 2) {
        dg_fill_small(&r, x, n);
        dg_st(h, dn_hadamard(x, n));
        dg_f32s(h, x, n);
        dg_st(h, dn_hadamard_inverse(x, n));
        dg_f32s(h, x, n);
    }
    free(x), free(w), free(y), free(c), free(s);
}

/* Scales over every exponent, rows quantized per 32 and per block. */
void dg_quant(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    dg_rng r = {4};
    for (uint32_t e = 1; e < 255; e++)
        for (int k = 0; k < 4; k++) {
            float amax;
            dg_put(&amax, e << 23 | (uint32_t)(dg_next(&r) & 0x7FFFFFu));
            for (int words = 1; words <= 2; words++) {
                dn_act_scale s = {0, 0};
                dg_st(h, dn_block_scale(amax, (dn_words)words, &s));
                dg_u64(h, (uint64_t)(int64_t)s.m), dg_u64(h, (uint64_t)(int64_t)s.e);
                dg_st(h, dn_wide_scale(amax, (dn_words)words, &s));
                dg_u64(h, (uint64_t)(int64_t)s.m), dg_u64(h, (uint64_t)(int64_t)s.e);
            }
        }
    enum { N = 1024 };
    float *x = malloc(N * sizeof(float));
    int16_t *codes = malloc(N * sizeof(int16_t));
    dn_act_scale *scales = malloc(N / 32 * sizeof(dn_act_scale));
    for (int pass = 0; pass < 8; pass++) {
        for (size_t i = 0; i < N; i++) {
            float v = dg_small(&r);
            int32_t e = (int32_t)dg_between(&r, -20, 20) * pass;
            x[i] = pass == 7 && i == 77 ? (float)INFINITY : dn_ldexp(v, e);
        }
        for (int words = 1; words <= 2; words++) {
            dn_act_row row = {codes, scales, N, 0, (dn_words)words};
            size_t bad = 0;
            dg_st(h, dn_quantize(x, N, (dn_words)words, &row, &bad));
            dg_u64(h, bad);
            dg_i16s(h, codes, N);
            for (size_t b = 0; b < N / 32; b++)
                dg_u64(h, (uint64_t)scales[b].m << 32 ^ (uint32_t)scales[b].e);
            size_t block = pass % 2 ? 256 : 32;
            dg_st(h, dn_quantize_blocks(x, N, block, (dn_words)words, &row, &bad));
            dg_u64(h, bad);
            dg_i16s(h, codes, N);
            for (size_t b = 0; b < N / block; b++)
                dg_u64(h, (uint64_t)scales[b].m << 32 ^ (uint32_t)scales[b].e);
        }
    }
    free(x), free(codes), free(scales);
}
