/* SPDX-License-Identifier: MIT */
/* The digest's weight-format families: BF16 products, FP8 E4M3 products, the lane's units. */
#include <stdlib.h>

#include "digest.h"

/* A bfloat16 of modest magnitude (|x| < 4), any sign. */
static uint16_t modest_bf16(dg_rng *r) { return dg_f16_in(r, 0, 0x407F); }

/* BF16 conversions, both dot paths, and the matrix products (on `pool`
   where they take one), as dg_f16 runs the F16 ones. */
void dg_bf16(dg_hash *h, dn_pool *pool)
{
    enum { R = 37, K = 96, N = 5 };
    dg_rng r = {10};
    uint16_t *w = malloc(R * K * 2), *x16 = malloc(N * K * 2);
    float *x = malloc(N * K * sizeof(float)), *out = malloc(N * K * sizeof(float));
    float *o2 = malloc(R * sizeof(float));
    for (size_t i = 0; i < R * K; i++) w[i] = modest_bf16(&r);
    for (size_t i = 0; i < N * K; i++) dg_any(&r, &x[i]);
    dg_st(h, dn_bf16_from_f32(x, x16, N * K)); /* every kind of binary32 */
    dg_u16s(h, x16, N * K);
    dg_st(h, dn_bf16_widen(x16, out, N * K));
    dg_f32s(h, out, N * K);
    for (size_t i = 0; i < N * K; i++) x[i] = dg_small(&r);
    dg_st(h, dn_bf16_from_f32(x, x16, N * K));
    static const size_t ks[12] = {0, 1, 7, 8, 15, 16, 31, 32, 33, 64, 95, 96};
    for (int i = 0; i < 12; i++)
        for (int path = 0; path < (ks[i] % 8 ? 1 : 2); path++) {
            size_t k = ks[i];
            float o = 0.0f;
            dg_st(h, dn_bf16_dot((dn_f16_path)path, w, x16, k, &o));
            dg_f32(h, o);
        }
    dg_st(h, dn_bf16_mat_vec(w, R, K, x, out, pool));
    dg_f32s(h, out, R);
    dn_bf16_matrix mats[2] = {{w, out, R}, {w + K, o2, R - 1}};
    dg_st(h, dn_bf16_mat_vec_multi(mats, 2, K, x, pool));
    dg_f32s(h, out, R), dg_f32s(h, o2, R - 1);
    for (size_t n = 1; n <= N; n += 2) {
        dg_st(h, dn_bf16_mat_mul(w, R, K, x, n, out, pool));
        dg_f32s(h, out, R * n);
        dg_st(h, dn_bf16_mat_mul_rows(w, R, K, x16, n, 3, R - 2, out));
        for (size_t c = 0; c < n; c++) dg_f32s(h, out + c * R + 3, R - 5); /* rows [3, R - 2) */
    }
    dg_st(h, dn_bf16_mat_vec_rows(w, R, K, x16, 1, R, out));
    dg_f32s(h, out + 1, R - 1);
    free(w), free(x16), free(x), free(out), free(o2);
}

/* Every E4M3 code, the array decode, and the products with and without
   block scales, at widths below, at and past one 128-column block. */
void dg_fp8(dg_hash *h, dn_pool *pool)
{
    enum { R = 19, KMAX = 300, N = 3 };
    dg_rng r = {11};
    uint8_t *w = malloc(R * KMAX), all[256];
    float *x = malloc(N * KMAX * sizeof(float)), *out = malloc(R * N * sizeof(float));
    float *scales = malloc(R * 3 * sizeof(float)), dec[256];
    for (int c = 0; c < 256; c++) {
        all[c] = (uint8_t)c;
        dg_f32(h, dn_fp8_e4m3_to_f32((uint8_t)c));
    }
    dg_st(h, dn_fp8_decode(all, dec, 256)); /* with the NaN codes */
    dg_f32s(h, dec, 256);
    static const size_t ks[4] = {1, 33, 128, KMAX};
    for (int i = 0; i < 4; i++) {
        size_t k = ks[i], count = 0;
        dg_st(h, dn_fp8_scale_count(R, k, &count));
        dg_u64(h, count);
        for (size_t j = 0; j < R * k; j++) { /* any code but the NaNs (0x7F, 0xFF) */
            w[j] = (uint8_t)dg_next(&r);
            if ((w[j] & 0x7F) == 0x7F) w[j] ^= 1;
        }
        for (size_t j = 0; j < count; j++) scales[j] = dn_ldexp(dg_small(&r), 8);
        for (size_t j = 0; j < N * k; j++) x[j] = dg_small(&r);
        for (int sc = 0; sc < 2; sc++) {
            const float *s = sc ? scales : NULL;
            dg_st(h, dn_fp8_mat_vec(w, R, k, s, 0.75f, x, out, pool));
            dg_f32s(h, out, R);
            dg_st(h, dn_fp8_mat_vec_rows(w, R, k, s, 0.75f, x, 2, R - 1, out));
            dg_f32s(h, out + 2, R - 3);
            dg_st(h, dn_fp8_mat_mul(w, R, k, s, 1.0f, x, N, out, pool));
            dg_f32s(h, out, R * N);
            dg_st(h, dn_fp8_mat_mul_rows(w, R, k, s, 1.0f, x, N, 1, R, out));
            for (size_t c = 0; c < N; c++) dg_f32s(h, out + c * R + 1, R - 1);
        }
    }
    free(w), free(x), free(out), free(scales);
}

/* The lane's pieces one unit at a time: each format's weight image of random
   blocks, every unit's sums against random words and the dot from them. */
void dg_lane_units(dg_hash *h, dn_pool *pool)
{
    (void)pool;
    dg_rng r = {12};
    uint8_t block[256];
    dn_lane_image im;
    for (int t = 0; t < 32; t++) {
        size_t bb = dn_type_block_bytes((dn_type)t);
        if (!dn_reads((dn_type)t) || bb < 4) continue;
        for (int pass = 0; pass < 8; pass++) {
            for (size_t i = 0; i < bb; i++) block[i] = (uint8_t)dg_next(&r);
            /* the binary16 scales finite (at bytes 0 and 2, or at the block's
               end in Q2_K, Q3_K and Q6_K): their high bytes below 0x40 */
            block[1] &= 0x3F, block[3] &= 0x3F, block[bb - 3] &= 0x3F, block[bb - 1] &= 0x3F;
            dn_status st = dn_lane_image_read((dn_type)t, block, &im);
            dg_st(h, st);
            if (st != DN_OK) continue;
            dg_u64(h, im.nunits), dg_u64(h, (uint64_t)(int64_t)im.a.sig);
            dg_u64(h, (uint64_t)(int64_t)im.a.exp), dg_u64(h, (uint64_t)(int64_t)im.b.sig);
            dg_u64(h, (uint64_t)(int64_t)im.b.exp);
            for (uint32_t u = 0; u < im.nunits; u++) {
                const dn_lane_unit *un = &im.units[u];
                uint8_t word[DN_LANE_UNIT];
                for (int i = 0; i < DN_LANE_UNIT; i++) word[i] = (uint8_t)dg_next(&r);
                dg_u64(h, un->sum_q), dg_u64(h, un->z);
                dg_u64(h, (uint64_t)(int64_t)un->c), dg_u64(h, (uint64_t)(int64_t)un->n);
                dn_lane_unit_sums s;
                dg_st(h, dn_lane_unit_sums_of(un, word, &s));
                dg_u64(h, s.p), dg_u64(h, s.s);
                for (int excess = 0; excess < 2; excess++) {
                    int32_t qa = 0, a = 0;
                    dg_st(h, dn_lane_unit_dot(un, &s, excess, &qa, &a));
                    dg_u64(h, (uint64_t)(int64_t)qa), dg_u64(h, (uint64_t)(int64_t)a);
                }
            }
        }
    }
}
