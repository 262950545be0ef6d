/* SPDX-License-Identifier: MIT */
/*
 * The quantized matrix product of prefill on AArch64 NEON, register
 * blocked as the x86 one (src/x86/dot_mm_avx2.c): a batch of four rows
 * against a block of MM_NC prepared columns, each row's block of a group
 * decoded to bytes once (dot_neon_decode.h's digits16) and multiplied with
 * every column's codes, so a weight is decoded once per MM_NC columns
 * instead of once per column. Bit for bit the matrix-vector product of
 * each column (dot_neon.c), hence the reference (src/dot.c):
 *
 * - the per-16 sums of a (row, column) are the integers dot_neon.c's raw16
 *   computes (exact: see dot16 below); only the loops are reordered, the
 *   columns innermost;
 * - each (row, column)'s pieces are dot_shared.h's from those sums
 *   (dn_big_group_piece, dn_small_group_add: the matrix-vector kernel's own
 *   code, its exactness checks, the reference's piece where they fail),
 *   added in order from +0 in f32;
 * - a (row, column) meeting a tiny piece is redone by the reference, and a
 *   batch meeting an unreadable block hands the rest of the range to the
 *   reference, which reports it (the first column block runs every row in
 *   order, and readability does not depend on the column, so the first
 *   unreadable block of the range is the one reported).
 *
 * Where the build targets the dot product extension (ARMv8.2-A+dotprod,
 * __ARM_FEATURE_DOTPROD: e.g. -march=armv8.2-a+dotprod), 16 digit x code
 * products are summed by one SDOT; otherwise (ARMv8.0, the default build,
 * as dot_neon.c) by VMULL.S8 pairs and VPADAL. There is no run-time switch:
 * the dispatcher registers the NEON table on every AArch64 CPU, so SDOT is
 * used only where the compiler may assume it.
 *
 * Covered as on x86 (src/dot_mm_run.h, the loops above the batch, shared
 * with the x86 kernels): Q4_K, Q5_K, Q6_K and Q8_0 under Sub32 scaling with
 * narrow codes (one word), two columns or more and every column's side
 * usable; the rest runs dn_dot_mm_tiled over the table's matrix-vector
 * kernel.
 */
#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "../dot_mm.h"
#include "dot_neon_decode.h"

#include <arm_neon.h>

/* The per-lane sums of 16 products digit x code: four int32 lanes whose
   total is the 16 elements' sum. Exact: |digit| <= 128 (Q8_0's -128;
   the other formats' digits are 0..63) and |code| <= 127, so a pair of
   products is below 2^15 (VPADAL's int16 operand) and a lane below 2^17. */
AI int32x4_t dot16(int8x16_t q, int8x16_t c)
{
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(vdupq_n_s32(0), q, c);
#else
    const int32x4_t acc = vpaddlq_s16(vmull_s8(vget_low_s8(q), vget_low_s8(c)));
    return vpadalq_s16(acc, vmull_high_s8(q, c));
#endif
}

/* One row's raw per-16 sums of the group at g (its first block blk, G
   blocks of 32 for the 32-element formats) against each column: raw[j][u]
   the sum over elements [g + 16u, g + 16u + 16) (0 past the G blocks),
   dot_neon.c's raw16 for column j. Four units at a time, their four sums
   gathered by two rows of pairwise adds. */
AI void raw_cols(dn_type t, const uint8_t *blk, size_t bb, int G, const dn_dot_act *const a[MM_NC],
                 size_t g, int32_t raw[MM_NC][16])
{
    const int big = dn_big(t);
    for (int u0 = 0; u0 < 16; u0 += 4) {
        int8x16_t q[4];
        int live[4];
        for (int i = 0; i < 4; i++) {
            const int u = u0 + i;
            live[i] = big || u / 2 < G;
            q[i] = !live[i] ? vdupq_n_s8(0)
                   : big    ? digits16(t, blk, u)
                            : digits16(t, blk + (size_t)(u / 2) * bb, u % 2);
        }
        for (int j = 0; j < MM_NC; j++) {
            const int8_t *c8 = a[j]->c8 + g + 16 * (size_t)u0;
            int32x4_t s[4];
            for (int i = 0; i < 4; i++)
                s[i] = live[i] ? dot16(q[i], vld1q_s8(c8 + 16 * i)) : vdupq_n_s32(0);
            vst1q_s32(raw[j] + u0, vpaddq_s32(vpaddq_s32(s[0], s[1]), vpaddq_s32(s[2], s[3])));
        }
    }
}

/* One row's group at g against the MM_NC columns c: each column's pieces
   added to acc[j], tiny[j] set when one is tiny; -1 when a block is
   unreadable, else 0. dot_neon.c's row_value for one group, the digits
   decoded once for the columns. */
AI int row_group(const dn_mv_ctx *c, dn_type t, const uint8_t *row, size_t g, float acc[MM_NC],
                 int tiny[MM_NC])
{
    const size_t n = c[0].n, bb = c[0].bb;
    const int G = (int)((n - g < DN_GROUP ? n - g : DN_GROUP) / 32);
    const dn_dot_act *a[MM_NC];
    for (int j = 0; j < MM_NC; j++) a[j] = c[j].a;
    int32_t raw[MM_NC][16];
    if (dn_big(t)) {
        const uint8_t *blk = row + g / DN_GROUP * bb;
        uint16_t dh, mh;
        if (!dn_big_scales16(t, blk, &dh, &mh)) return -1;
        raw_cols(t, blk, bb, 8, a, g, raw);
        for (int j = 0; j < MM_NC; j++) {
            const float p = dn_big_group_piece(&c[j], t, blk, g,
                                               dn_group_fast(&c[j], g) ? raw[j] : NULL, dh, mh);
            tiny[j] |= dn_piece_tiny(p);
            acc[j] += p;
        }
        return 0;
    }
    const uint8_t *blk = row + (g / 32) * bb;
    const int has_o = dn_has_offs(t), z = dn_zero_point(t);
    double d[8] = {0}, m[8] = {0};
    for (int k = 0; k < G; k++) {
        uint16_t dh = dn_load_u16(blk + k * bb), mh = has_o ? dn_load_u16(blk + k * bb + 2) : 0;
        if (dn_f16_bad(dh) || dn_f16_bad(mh)) return -1;
        d[k] = dn_f16_double(dh);
        m[k] = dn_f16_double(mh);
    }
    raw_cols(t, blk, bb, G, a, g, raw);
    for (int j = 0; j < MM_NC; j++) {
        int64_t C[8];
        for (int k = 0; k < 8; k++)
            C[k] = k < G ? (int64_t)raw[j][2 * k] + raw[j][2 * k + 1] -
                               (int64_t)z * a[j]->bs32[g / 32 + k]
                         : 0;
        tiny[j] |= dn_small_group_add(&c[j], t, blk, g, G, C, d, m, &acc[j]);
    }
    return 0;
}

/* dot_mm_run.h's mm_batch: four rows (pointers may repeat) against MM_NC
   columns (entries may repeat), each row's groups in order, the four rows'
   blocks of a group in L1 while the columns run over them. */
AI int mm_batch(const mm_ctx *m, dn_type t, const uint8_t *const row[4], const mm_col *col,
                float v[MM_NC][4], int tiny[MM_NC])
{
    dn_mv_ctx c[MM_NC];
    for (int j = 0; j < MM_NC; j++)
        c[j] = dn_mv_ctx_of(t, m->w, m->rows, m->n, col[j].act, DN_ACT_SUB32, col[j].a);
    float acc[4][MM_NC] = {{0}};
    int tn[4][MM_NC] = {{0}};
    for (size_t g = 0; g < m->n; g += DN_GROUP)
        for (int r = 0; r < 4; r++)
            if (row_group(c, t, row[r], g, acc[r], tn[r]) < 0) return -1;
    for (int j = 0; j < MM_NC; j++) {
        tiny[j] = 0;
        for (int r = 0; r < 4; r++) {
            v[j][r] = acc[r][j];
            tiny[j] |= tn[r][j] << r;
        }
    }
    return 0;
}

#define MM_AI AI
#define MM_NOINLINE __attribute__((noinline))
#define MM_ENTRY_ATTR
#define MM_ENTRY dn_dot_mm_blocked_neon
#include "../dot_mm_run.h"
