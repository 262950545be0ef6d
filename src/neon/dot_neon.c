/* SPDX-License-Identifier: MIT */
/*
 * The quantized dot / matrix-vector product on AArch64 NEON (Advanced SIMD
 * of ARMv8.0: no SDOT): bit for bit the reference of src/dot.c
 * (dot_kernels.h, docs/dot.md).
 *
 * Per row and per 16 elements, the block's digits are decoded to bytes in a
 * register and multiplied with the activation codes exactly: one-word codes
 * (within +-127) as int8 with VMULL.S8 pairs accumulated by VPADAL into
 * int32 (|pair| <= 2 * 128 * 127 < 2^15), two-word codes as int16 with
 * VMLAL.S16 (|lane| <= 4 * 128 * 32768 = 2^24); VADDV gives the sum. The
 * scales, the chunk sums and the rounding are dot_shared.h's scalar code,
 * shared with the AVX2 kernels' two-word path: exact integers, doubles where
 * provably exact, the reference's own piece function elsewhere.
 */
#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "../bits.h"
#include "dot_neon_decode.h"

#include <arm_neon.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sum over 16 elements of digit * code. */
AI int32_t dot16_narrow(int8x16_t q, const int8_t *c8)
{
    int8x16_t c = vld1q_s8(c8);
    int32x4_t acc = vpaddlq_s16(vmull_s8(vget_low_s8(q), vget_low_s8(c)));
    acc = vpadalq_s16(acc, vmull_high_s8(q, c));
    return vaddvq_s32(acc);
}

AI int32_t dot16_wide(dn_type t, int8x16_t q, const int16_t *c16)
{
    int16x8_t q0, q1;
    if (dn_signed_digits(t)) {
        q0 = vmovl_s8(vget_low_s8(q));
        q1 = vmovl_high_s8(q);
    } else {
        q0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(vreinterpretq_u8_s8(q))));
        q1 = vreinterpretq_s16_u16(vmovl_high_u8(vreinterpretq_u8_s8(q)));
    }
    int16x8_t c0 = vld1q_s16(c16), c1 = vld1q_s16(c16 + 8);
    int32x4_t acc = vmull_s16(vget_low_s16(q0), vget_low_s16(c0));
    acc = vmlal_high_s16(acc, q0, c0);
    acc = vmlal_s16(acc, vget_low_s16(q1), vget_low_s16(c1));
    acc = vmlal_high_s16(acc, q1, c1);
    return vaddvq_s32(acc);
}

/* ---- the matrix-vector product ---------------------------------------------------- */

/* The raw sums per 16 elements of the group at g (units past the row 0). */
AI void raw16(const dn_mv_ctx *c, dn_type t, const uint8_t *blk, int G, size_t g, int32_t raw[16])
{
    const int big = dn_big(t);
    for (int u = 0; u < 16; u++) {
        if (u / 2 >= G) {
            raw[u] = 0;
            continue;
        }
        const uint8_t *b = big ? blk : blk + (size_t)(u / 2) * c->bb;
        int8x16_t q = digits16(t, b, big ? u : u % 2);
        raw[u] = c->a->narrow ? dot16_narrow(q, c->a->c8 + g + 16 * (size_t)u)
                              : dot16_wide(t, q, c->act->codes + g + 16 * (size_t)u);
    }
}

/* One row: its value in *v; -1 when a block is unreadable, else 1 when it
   met a tiny piece (the chain must be redone by the reference). */
AI int row_value(const dn_mv_ctx *c, dn_type t, const uint8_t *row, float *v)
{
    const dn_dot_act *a = c->a;
    const int big = dn_big(t), has_o = dn_has_offs(t);
    const size_t n = c->n, bb = c->bb;
    float acc = 0.0f;
    int tiny = 0;
    for (size_t g = 0; g < n; g += DN_GROUP) {
        const int G = (int)((n - g < DN_GROUP ? n - g : DN_GROUP) / 32);
        const uint8_t *blk = row + (big ? g / DN_GROUP * bb : (g / 32) * bb);
        int32_t raw[16];
        if (big) {
            uint16_t dh, mh;
            if (!dn_big_scales16(t, blk, &dh, &mh)) return -1;
            const int fast = dn_group_fast(c, g);
            if (fast) raw16(c, t, blk, 8, g, raw);
            float p = dn_big_group_piece(c, t, blk, g, fast ? raw : NULL, dh, mh);
            tiny |= dn_piece_tiny(p);
            acc += p;
            continue;
        }
        double d[8] = {0}, m[8] = {0};
        int64_t C[8];
        for (int k = 0; k < G; k++) {
            uint16_t dh = dn_load_u16(blk + k * bb), mh = has_o ? dn_load_u16(blk + k * bb + 2) : 0;
            if (dn_f16_bad(dh) || dn_f16_bad(mh)) return -1;
            d[k] = dn_f16_double(dh);
            m[k] = dn_f16_double(mh);
        }
        raw16(c, t, blk, G, g, raw);
        const int z = dn_zero_point(t);
        for (int k = 0; k < 8; k++)
            C[k] =
                k < G ? (int64_t)raw[2 * k] + raw[2 * k + 1] - (int64_t)z * a->bs32[g / 32 + k] : 0;
        tiny |= dn_small_group_add(c, t, blk, g, G, C, d, m, &acc);
    }
    *v = acc;
    return tiny;
}

AI dn_status mv_rows(const dn_mv_ctx *c, dn_type t, size_t r0, size_t r1, float *out, size_t *bad)
{
    for (size_t r = r0; r < r1; r++) {
        float v;
        int tiny = row_value(c, t, c->w + r * c->row_bytes, &v);
        if (tiny < 0) /* an unreadable block: the reference finds and reports it */
            return dn_ref_rows_pieces(t, c->w, c->rows, c->n, c->act, c->scaling, r, r1, out, bad);
        if (tiny) {
            dn_status st =
                dn_ref_rows_pieces(t, c->w, c->rows, c->n, c->act, c->scaling, r, r + 1, out, bad);
            if (st != DN_OK) return st;
        } else {
            out[r] = dn_chain_result(v);
        }
    }
    return DN_OK;
}

/* mat_vec_rows_act: mv_rows once per format, the format a constant. */
#include "../dot_format_rows.h"

static dn_status mat_vec_rows_neon(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                   const dn_act_row *act, dn_act_scaling scaling, size_t r0,
                                   size_t r1, float *out, size_t *bad)
{
    return dn_dot_rows_own_act(mat_vec_rows_act, type, w, rows, n, act, scaling, r0, r1, out, bad);
}

static dn_status mat_mul_rows_neon(const dn_act *x, size_t c0, size_t c1, dn_type type,
                                   const uint8_t *w, size_t rows, size_t r0, size_t r1, float *out,
                                   size_t ldo, size_t *bad)
{
    return dn_dot_mm_blocked_neon(mat_vec_rows_act, x, c0, c1, type, w, rows, r0, r1, out, ldo,
                                  bad);
}

const dn_dot_kernels dn_dot_neon = {
    .mat_vec_rows = mat_vec_rows_neon,
    .mat_vec_rows_act = mat_vec_rows_act,
    .mat_mul_rows = mat_mul_rows_neon,
};
