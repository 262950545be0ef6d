/* SPDX-License-Identifier: MIT */
/* The digest's row families: F16 products, block readers, quantized products, the lane. */
#include <stdlib.h>

#include "digest.h"

/* A binary16 of modest magnitude (|x| < 4), any sign. */
static uint16_t modest_f16(dg_rng *r) { return dg_f16_in(r, 0, 0x43FF); }

/* F16 conversions, the byte reader, both dot paths, mad and scale, and the
   matrix products (on `pool` where they take one). */
void dg_f16(dg_hash *h, dn_pool *pool)
{
    enum { R = 37, K = 96, N = 5 };
    dg_rng r = {5};
    uint16_t *w = malloc(R * K * 2), *x16 = malloc(N * K * 2), *acc = malloc(K * 2);
    float *x = malloc(N * K * sizeof(float)), *out = malloc(R * N * sizeof(float));
    uint8_t *bytes = malloc(2 * K);
    for (size_t i = 0; i < R * K; i++) w[i] = modest_f16(&r);
    for (size_t i = 0; i < N * K; i++) x[i] = dg_small(&r);
    /* the ggml bytes of an F16 row: little-endian by definition */
    for (size_t i = 0; i < K; i++) {
        uint16_t v = modest_f16(&r);
        bytes[2 * i] = (uint8_t)v, bytes[2 * i + 1] = (uint8_t)(v >> 8);
    }
    dg_st(h, dn_f16_dequantize_row(bytes, out, K));
    dg_f32s(h, out, K);
    dg_st(h, dn_f16_from_f32(x, x16, N * K));
    dg_u16s(h, x16, N * K);
    dg_st(h, dn_f16_widen(x16, out, N * K < R * N ? N * K : R * N));
    dg_f32s(h, out, N * K < R * N ? N * K : R * N);
    static const size_t ks[12] = {0, 1, 7, 8, 15, 16, 31, 32, 33, 64, 95, 96};
    for (int i = 0; i < 12; i++)
        for (int path = 0; path < (ks[i] % 8 ? 1 : 2); path++) { /* the sgemm path: k % 8 == 0 */
            size_t k = ks[i];
            float o = 0.0f;
            dg_st(h, dn_f16_dot((dn_f16_path)path, w, x16, k, &o));
            dg_f32(h, o);
        }
    for (size_t i = 0; i < K; i++) acc[i] = modest_f16(&r);
    dg_st(h, dn_f16_mad(acc, w, 0.375f, K));
    dg_u16s(h, acc, K);
    dg_st(h, dn_f16_scale(acc, -1.5f, K));
    dg_u16s(h, acc, K);
    dg_st(h, dn_f16_mat_vec(w, R, K, x, out, pool));
    dg_f32s(h, out, R);
    float *o2 = malloc(R * sizeof(float));
    dn_f16_matrix mats[2] = {{w, out, R}, {w + K, o2, R - 1}};
    dg_st(h, dn_f16_mat_vec_multi(mats, 2, K, x, pool));
    dg_f32s(h, out, R), dg_f32s(h, o2, R - 1);
    for (size_t n = 1; n <= N; n += 2) {
        dg_u64(h, (uint64_t)dn_f16_takes_sgemm(R, K, n));
        dg_st(h, dn_f16_mat_mul(w, R, K, x, n, out, pool));
        dg_f32s(h, out, R * n);
        dg_st(h, dn_f16_mat_mul_rows(w, R, K, x16, n, 3, R - 2, out));
        for (size_t c = 0; c < n; c++) dg_f32s(h, out + c * R + 3, R - 5); /* rows [3, R - 2) */
    }
    dg_st(h, dn_f16_mat_vec_rows(w, R, K, x16, 1, R, out));
    dg_f32s(h, out + 1, R - 1);
    free(w), free(x16), free(acc), free(x), free(out), free(bytes), free(o2);
}

/* dn_f16_mat_mul_path and dn_bf16_mat_mul_path, and their row-range forms
   on rows [2, 10): both paths, 1-7 columns (the kernels' column groups and
   their remainders), k with and without a tail of 32, 13 rows (blocks of
   rows and a remainder). */
void dg_mat_mul_path(dg_hash *h, dn_pool *pool)
{
    enum { R = 13, K = 200, N = 7 };
    dg_rng r = {18};
    uint16_t *w = malloc(R * K * 2), *x16 = malloc(N * K * 2);
    float *x = malloc(N * K * sizeof(float)), *out = malloc(R * N * sizeof(float));
    static const size_t ks[3] = {64, 131, 200};
    for (int bf = 0; bf < 2; bf++) {
        for (size_t i = 0; i < R * K; i++)
            w[i] = bf ? dg_f16_in(&r, 0, 0x407F) : modest_f16(&r); /* |w| < 4 either way */
        for (size_t i = 0; i < N * K; i++) x[i] = dg_small(&r);
        for (int ki = 0; ki < 3; ki++)
            for (int path = 0; path < (ks[ki] % 8 ? 1 : 2); path++)
                for (size_t n = 1; n <= N; n += 2) {
                    size_t k = ks[ki];
                    dn_status st =
                        bf ? dn_bf16_mat_mul_path((dn_f16_path)path, w, R, k, x, n, out, pool)
                           : dn_f16_mat_mul_path((dn_f16_path)path, w, R, k, x, n, out, pool);
                    dg_st(h, st);
                    dg_f32s(h, out, R * n);
                    st = bf ? dn_bf16_from_f32(x, x16, n * k) : dn_f16_from_f32(x, x16, n * k);
                    dg_st(h, st);
                    st = bf ? dn_bf16_mat_mul_path_rows((dn_f16_path)path, w, R, k, x16, n, 2,
                                                        R - 3, out)
                            : dn_f16_mat_mul_path_rows((dn_f16_path)path, w, R, k, x16, n, 2, R - 3,
                                                       out);
                    dg_st(h, st);
                    for (size_t c = 0; c < n; c++) dg_f32s(h, out + c * R + 2, R - 5);
                }
    }
    free(w), free(x16), free(x), free(out);
}

/* ---- ggml blocks ------------------------------------------------------------ */

const dg_format dg_formats[12] = {
    {DN_TYPE_Q4_0, 0, -1},  {DN_TYPE_Q4_1, 0, 2},    {DN_TYPE_Q5_0, 0, -1},
    {DN_TYPE_Q5_1, 0, 2},   {DN_TYPE_Q8_0, 0, -1},   {DN_TYPE_IQ4_NL, 0, -1},
    {DN_TYPE_Q2_K, 80, 82}, {DN_TYPE_Q3_K, 108, -1}, {DN_TYPE_Q4_K, 0, 2},
    {DN_TYPE_Q5_K, 0, 2},   {DN_TYPE_Q6_K, 208, -1}, {DN_TYPE_IQ4_XS, 0, -1},
};

/* The binary16 v at p, little-endian (ggml's byte order). */
static void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* `blocks` random blocks of f: random bytes under finite scales of modest
   size; with `bad`, one block's d is an infinity. */
size_t dg_random_row(dg_rng *r, const dg_format *f, uint8_t *bytes, size_t blocks, int bad)
{
    size_t bb = dn_type_block_bytes(f->type);
    for (size_t i = 0; i < blocks * bb; i++) bytes[i] = (uint8_t)dg_next(r);
    for (size_t b = 0; b < blocks; b++) {
        put_le16(bytes + b * bb + f->d_at, dg_f16_in(r, 0x1000, 0x2C00));
        if (f->m_at >= 0)
            put_le16(bytes + b * bb + f->m_at, (uint16_t)dg_between(r, 0x1000, 0x2C00));
    }
    if (bad) put_le16(bytes + (blocks / 2) * bb + f->d_at, 0x7C00);
    return blocks * dn_type_block_elements(f->type);
}

void dg_blocks(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    dg_rng r = {6};
    uint8_t *bytes = malloc(MAXB * 210);
    int16_t *coef = malloc(MAXN * 2), *offs = malloc(MAXN * 2);
    dn_segment *seg = malloc(MAXN / 16 * sizeof(dn_segment));
    for (int t = 0; t < 32; t++) {
        dg_u64(h, (uint64_t)dn_reads((dn_type)t));
        dg_u64(h, dn_type_block_elements((dn_type)t)), dg_u64(h, dn_type_block_bytes((dn_type)t));
    }
    for (int i = 0; i < 12; i++)
        for (int pass = 0; pass < 6; pass++) {
            size_t n = dg_random_row(&r, &dg_formats[i], bytes, MAXB, pass == 5), bad = 0;
            dn_coded_row row = {coef, offs, seg, n, 0};
            dg_st(h, dn_read_row(dg_formats[i].type, bytes, n, &row, &bad));
            dg_u64(h, bad), dg_u64(h, row.nsegments);
            if (pass == 5) continue;
            dg_i16s(h, coef, n), dg_i16s(h, offs, n);
            for (size_t s = 0; s < row.nsegments; s++) {
                dg_u64(h, (uint64_t)(int64_t)seg[s].a.sig),
                    dg_u64(h, (uint64_t)(int64_t)seg[s].a.exp);
                dg_u64(h, (uint64_t)(int64_t)seg[s].b.sig),
                    dg_u64(h, (uint64_t)(int64_t)seg[s].b.exp);
                dg_u64(h, seg[s].first), dg_u64(h, seg[s].count);
            }
        }
    free(bytes), free(coef), free(offs), free(seg);
}

/* ---- products over blocks ----------------------------------------------------- */

typedef struct dg_case {
    uint8_t *w;        /* ROWS rows of MAXB blocks */
    float *x;          /* MAXN activations */
    int16_t *codes;    /* MAXN */
    dn_act_scale *scl; /* MAXN / 32 */
} dg_case;

enum { ROWS = 5 };

static dg_case case_new(void)
{
    dg_case c = {malloc(ROWS * MAXB * 210), malloc(MAXN * sizeof(float)), malloc(MAXN * 2),
                 malloc(MAXN / 32 * sizeof(dn_act_scale))};
    return c;
}

static void case_free(dg_case *c) { free(c->w), free(c->x), free(c->codes), free(c->scl); }

/* Weights of f, activations quantized for `scaling` and `words`. */
static dn_act_row case_fill(dg_rng *r, dg_case *c, const dg_format *f, dn_act_scaling scaling,
                            dn_words words, dg_hash *h)
{
    size_t bb = dn_type_block_bytes(f->type), n = 0;
    for (int row = 0; row < ROWS; row++) n = dg_random_row(r, f, c->w + row * MAXB * bb, MAXB, 0);
    for (size_t i = 0; i < n; i++) {
        float v = dg_small(r);
        c->x[i] = dn_ldexp(v, (int32_t)dg_between(r, -3, 3));
    }
    dn_act_row act = {c->codes, c->scl, n, 0, words};
    if (scaling == DN_ACT_SUB32)
        dg_st(h, dn_quantize(c->x, n, words, &act, NULL));
    else
        dg_st(h, dn_quantize_blocks(c->x, n, dn_type_block_elements(f->type), words, &act, NULL));
    return act;
}

/* dn_dot of each row read, dn_mat_vec_rows and dn_mat_vec. */
void dg_dot(dg_hash *h, dn_pool *pool)
{
    dg_rng r = {7};
    dg_case c = case_new();
    int16_t *coef = malloc(MAXN * 2), *offs = malloc(MAXN * 2);
    dn_segment *seg = malloc(MAXN / 16 * sizeof(dn_segment));
    float out[ROWS];
    for (int i = 0; i < 12; i++)
        for (int sc = 0; sc < 2; sc++)
            for (int words = 1; words <= 2; words++) {
                const dg_format *f = &dg_formats[i];
                dn_act_row act = case_fill(&r, &c, f, (dn_act_scaling)sc, (dn_words)words, h);
                size_t n = act.n, bb = dn_type_block_bytes(f->type), bad = 0;
                for (int row = 0; row < ROWS; row++) {
                    dn_coded_row cr = {coef, offs, seg, n, 0};
                    dg_st(h, dn_read_row(f->type, c.w + row * MAXB * bb, n, &cr, NULL));
                    float o = 0.0f;
                    dg_st(h, dn_dot(&cr, &act, (dn_act_scaling)sc, &o));
                    dg_f32(h, o);
                }
                dg_st(h, dn_mat_vec_rows(f->type, c.w, ROWS, n, &act, (dn_act_scaling)sc, 1, ROWS,
                                         out, &bad));
                dg_f32s(h, out + 1, ROWS - 1), dg_u64(h, bad); /* rows [1, ROWS) */
                dg_st(h,
                      dn_mat_vec(f->type, c.w, ROWS, n, &act, (dn_act_scaling)sc, out, pool, &bad));
                dg_f32s(h, out, ROWS), dg_u64(h, bad);
            }
    case_free(&c), free(coef), free(offs), free(seg);
}

/* The lane: its row product, and block by block (per block) or group by
   group (Sub32) through the delivered blocks. */
void dg_lane(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    dg_rng r = {8};
    dg_case c = case_new();
    for (int i = 0; i < 12; i++)
        for (int sc = 0; sc < 2; sc++)
            for (int words = 1; words <= 2; words++) {
                const dg_format *f = &dg_formats[i];
                dn_act_row act = case_fill(&r, &c, f, (dn_act_scaling)sc, (dn_words)words, h);
                size_t n = act.n, be = dn_type_block_elements(f->type), bad = 0;
                float o = 0.0f, acc = 0.0f;
                dg_st(h, dn_lane_dot(f->type, c.w, n, &act, (dn_act_scaling)sc, &o, &bad));
                dg_f32(h, o), dg_u64(h, bad);
                for (size_t b = 0; b < n / be; b++) {
                    dn_lane_block lb[8];
                    int64_t cs = 0, os = 0;
                    if (sc == DN_ACT_PER_BLOCK) {
                        dg_st(h, dn_lane_deliver(f->type, c.w, n, &act, b, &lb[0]));
                        dg_st(h, dn_lane_block_sums(&lb[0], &cs, &os));
                        dg_u64(h, (uint64_t)cs), dg_u64(h, (uint64_t)os);
                        dg_st(h, dn_lane(&acc, &lb[0]));
                        continue;
                    }
                    for (size_t s = 0; s < be / 32; s += 8) {
                        size_t m = be / 32 - s < 8 ? be / 32 - s : 8;
                        for (size_t j = 0; j < m; j++)
                            dg_st(h, dn_lane_deliver32(f->type, c.w, n, &act, b, s + j, &lb[j]));
                        dg_st(h, dn_lane_group(&acc, lb, m));
                    }
                }
                dg_f32(h, acc);
            }
    case_free(&c);
}
