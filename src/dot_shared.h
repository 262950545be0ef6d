/* SPDX-License-Identifier: MIT */
/*
 * dot_shared.h: the scalar parts of the dot kernels, shared by the AVX2 and
 * NEON files (static inline; no ISA-specific code).
 *
 * A kernel computes, per 16 elements u of a group, the raw integer sum
 * raw[u] = sum q * code, where q is the small integer its block decoder
 * yields (the "weight digit": Q4_K's nibble, Q6_K's 6-bit value, Q3_K's
 * low + 4 * high, IQ4's level, Q8_0's byte). Each format's coded row is
 * then, per 16 elements, coef = sc[u] * (q - z) and offs = off[u]
 * (src/blocks.c), so the chunk sums of the reference are exact integers:
 *
 *     C_k = sum over u in chunk k of sc[u] * (raw[u] - z * bs16[u])
 *     O_k = sum over u in chunk k of off[u] * bs16[u]
 *
 * (bs16: the activation codes' sum per 16 elements). The pieces below turn
 * them into the reference's rounded piece when the double arithmetic is
 * exact (each function says why), else return 0 and the kernel calls
 * dn_dot_piece_of_bytes.
 */
#ifndef DN_DOT_SHARED_H
#define DN_DOT_SHARED_H

#include <math.h>
#include <string.h>

#include "block_format.h"
#include "dot_kernels.h"

/* sc[u] and off[u] per 16 elements of a 256-element block. */
static inline void dn_big_meta(dn_type t, const uint8_t *blk, int32_t sc[16], int32_t off[16])
{
    for (int u = 0; u < 16; u++) {
        int j = u / 2, s = 0, m = 0;
        switch (t) {
        case DN_TYPE_Q2_K:
            s = blk[u] & 15;
            m = blk[u] >> 4;
            break;
        case DN_TYPE_Q3_K: s = dn_q3_k_scale(blk + 96, u); break;
        case DN_TYPE_Q4_K:
        case DN_TYPE_Q5_K: dn_k_scale_min(blk + 4, j, &s, &m); break;
        case DN_TYPE_Q6_K: s = (int8_t)blk[192 + u]; break;
        case DN_TYPE_IQ4_XS: s = dn_iq4_xs_scale(blk, j); break;
        default: break;
        }
        sc[u] = s;
        off[u] = -m;
    }
}

/* C_k, O_k of a 256-element block from its raw per-16 sums. */
static inline void dn_big_chunks(dn_type t, const uint8_t *blk, const int32_t raw[16],
                                 const int32_t *bs16, int64_t C[8], int64_t O[8])
{
    int32_t sc[16], off[16];
    dn_big_meta(t, blk, sc, off);
    const int64_t z = dn_zero_point(t);
    for (int k = 0; k < 8; k++) {
        int64_t c = 0, o = 0;
        for (int u = 2 * k; u < 2 * k + 2; u++) {
            c += (int64_t)sc[u] * (raw[u] - z * bs16[u]);
            o += (int64_t)off[u] * bs16[u];
        }
        C[k] = c;
        O[k] = o;
    }
}

/* ---- pieces from exact integers -------------------------------------------- */

/* Sub32 group of a 256-element format: d * A + dm * B with A = sum C_k S_k,
   B = sum O_k S_k. A and B are exact (dn_dot_act_init checked the group:
   gok); |A|, |B| < glim = 2^(emin + 42) makes d * A and dm * B exact (an
   11-bit significand times a multiple of 2^emin below 2^(emin + 42));
   dn_dot_sum_odd adds them with one rounding to f32. */
static inline int dn_piece_big_sub32(const int64_t C[8], const int64_t O[8], int has_o,
                                     const double *S, double glim, double d, double dm,
                                     float *piece)
{
    double A = 0.0, B = 0.0;
    for (int k = 0; k < 8; k++) A += (double)C[k] * S[k];
    if (!(fabs(A) < glim)) return 0;
    double s = d * A;
    if (has_o) {
        for (int k = 0; k < 8; k++) B += (double)O[k] * S[k];
        if (!(fabs(B) < glim)) return 0;
        s = dn_dot_sum_odd(s, dm * B);
    }
    *piece = (float)(s + 0.0); /* + 0.0: an exact zero is +0, as dn_exact_sum gives */
    return 1;
}

/* Per-block piece of a 256-element format: C (d S) + O (dm S). d S has at
   most 19 significant bits, so the product is exact while |C| < 2^34;
   |O| < 256 * 63 * 2^15 < 2^29. */
static inline int dn_piece_big_block(int64_t C, int64_t O, int has_o, double S, double d, double dm,
                                     float *piece)
{
    if (C >= (INT64_C(1) << 34) || C <= -(INT64_C(1) << 34)) return 0;
    double s = (double)C * (d * S);
    if (has_o) s = dn_dot_sum_odd(s, (double)O * (dm * S));
    *piece = (float)(s + 0.0);
    return 1;
}

/* Per-block piece of a 32-element format: C (d S) + O (m S); |C| < 2^27 and
   |O| <= 2^20, d S and m S below 2^19 significant: always exact. */
static inline float dn_piece_small_block(int64_t C, int64_t O, int has_o, double S, double d,
                                         double m)
{
    double s = (double)C * (d * S);
    if (has_o) s = dn_dot_sum_odd(s, (double)O * (m * S));
    return (float)(s + 0.0);
}

/* Sub32 group of G 32-element blocks: sum_k C_k d_k S_k + O_k m_k S_k. Every
   term X * Y has Y = n 2^q with |n| < 2^B (B = 11 + bits of m, gfac =
   2^(52 - B)), so it is a multiple of 2^q >= ymin 2^-B (ymin the least
   non-zero |Y|); when sum |terms| < ymin * gfac < 2^(Q + 52), every partial
   sum is a multiple of 2^Q below 2^(Q + 53): exact in double. */
static inline int dn_piece_small_sub32(int G, const int64_t C[8], const int32_t *bs32, int has_o,
                                       const double *S, const double d[8], const double m[8],
                                       double gfac, float *piece)
{
    double s = 0.0, ab = 0.0, ymin = INFINITY;
    for (int k = 0; k < G; k++) {
        double D = d[k] * S[k], t = (double)C[k] * D;
        s += t;
        ab += fabs(t);
        if (D != 0.0 && fabs(D) < ymin) ymin = fabs(D);
        if (has_o) {
            double E = m[k] * S[k], u = (double)bs32[k] * E;
            s += u;
            ab += fabs(u);
            if (E != 0.0 && fabs(E) < ymin) ymin = fabs(E);
        }
    }
    if (!(ab < ymin * gfac)) return 0;
    *piece = (float)(s + 0.0);
    return 1;
}

/* A piece's part in the row's add chain: acc + p unflushed equals the
   engine's flushed add whenever every piece is 0 or at least 2^-100 in
   magnitude (every partial sum is then a multiple of 2^-123, never denormal);
   a tiny piece makes the kernel redo the chain with dn_dot_chain. */
static inline int dn_piece_tiny(float p)
{
    uint32_t u;
    memcpy(&u, &p, 4);
    u &= 0x7FFFFFFFu;
    return u != 0 && u < 0x0D800000u;
}

/* The final add chain value with the engine's one NaN. */
static inline float dn_chain_result(float acc)
{
    uint32_t u;
    memcpy(&u, &acc, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) u = 0x7FC00000u;
    memcpy(&acc, &u, 4);
    return acc;
}

/* The reference of a row loop's layout over rows [r0, r1): the plain
   matrix's (dn_ref_rows_pieces) or the repacked one's (dn_ref_rows_packed).
   What a kernel calls where its fast path does not apply. */
static inline dn_status dn_mv_ref(const dn_mv_ctx *c, int packed, size_t r0, size_t r1, float *out,
                                  size_t *bad)
{
    return packed ? dn_ref_rows_packed(c->type, c->w, c->rows, c->n, c->act, c->scaling, c->a, r0,
                                       r1, out, bad)
                  : dn_ref_rows_pieces(c->type, c->w, c->rows, c->n, c->act, c->scaling, r0, r1,
                                       out, bad);
}

/* A batch's rows base + k, k in [k0, k1): out = chain k's value v[k], or
   the reference's row where bit k of tiny says the chain met a piece that
   must flush. The first failing row's status. */
static inline dn_status dn_mv_finish(const dn_mv_ctx *c, int packed, size_t base, size_t k0,
                                     size_t k1, int tiny, const float *v, float *out, size_t *bad)
{
    for (size_t k = k0; k < k1; k++) {
        if (tiny >> k & 1) {
            dn_status st = dn_mv_ref(c, packed, base + k, base + k + 1, out, bad);
            if (st != DN_OK) return st;
        } else {
            out[base + k] = dn_chain_result(v[k]);
        }
    }
    return DN_OK;
}

/* ---- one row's pieces from its integer sums ----------------------------------- */

/* A 256-element block's binary16 scales d and dm (0 where the format has
   none); 0 when one of them is unreadable. */
static inline int dn_big_scales16(dn_type t, const uint8_t *blk, uint16_t *dh, uint16_t *mh)
{
    *dh = dn_load_u16(blk + dn_d_at(t));
    *mh = dn_m_at(t) >= 0 ? dn_load_u16(blk + dn_m_at(t)) : 0;
    return !dn_f16_bad(*dh) && !dn_f16_bad(*mh);
}

/* 1 when the pieces of the group at g may come from its integer sums (else
   the reference's piece function computes them). */
static inline int dn_group_fast(const dn_mv_ctx *c, size_t g)
{
    return c->scaling != DN_ACT_SUB32 || c->a->gok[g / DN_GROUP];
}

/* One row's piece of the 256-element group at g (its block blk, readable
   scales dh, mh) from the block's raw per-16 sums; raw NULL (the group is
   not dn_group_fast) or a sum the double arithmetic cannot prove: the
   reference's piece. */
static inline float dn_big_group_piece(const dn_mv_ctx *c, dn_type t, const uint8_t *blk, size_t g,
                                       const int32_t *raw, uint16_t dh, uint16_t mh)
{
    const dn_dot_act *a = c->a;
    const int has_o = dn_has_offs(t);
    const size_t gi = g / DN_GROUP;
    float p = 0.0f;
    int ok = 0;
    if (raw) {
        int64_t C[8], O[8];
        dn_big_chunks(t, blk, raw, a->bs16 + g / 16, C, O);
        if (c->scaling == DN_ACT_SUB32) {
            ok = dn_piece_big_sub32(C, O, has_o, a->S + g / 32, a->glim[gi], dn_f16_double(dh),
                                    dn_f16_double(mh), &p);
        } else {
            int64_t Ct = 0, Ot = 0;
            for (int k = 0; k < 8; k++) Ct += C[k], Ot += O[k];
            ok = dn_piece_big_block(Ct, Ot, has_o, a->S[gi], dn_f16_double(dh), dn_f16_double(mh),
                                    &p);
        }
    }
    if (!ok) p = dn_dot_piece_of_bytes(t, blk, c->act, c->scaling, g, g + 256);
    return p;
}

/* One row's pieces of the group of G 32-element blocks at g (its first
   block blk) from the blocks' chunk sums C (zero point applied) and scales
   d, m: added to *acc in order (one piece under Sub32, one per block
   otherwise); 1 when one of them is tiny (dn_piece_tiny). */
static inline int dn_small_group_add(const dn_mv_ctx *c, dn_type t, const uint8_t *blk, size_t g,
                                     int G, const int64_t C[8], const double d[8],
                                     const double m[8], float *acc)
{
    const dn_dot_act *a = c->a;
    const int has_o = dn_has_offs(t);
    const size_t gi = g / DN_GROUP;
    const double *S = a->S + g / 32;
    float p;
    if (c->scaling == DN_ACT_SUB32) {
        if (!a->gok[gi] ||
            !dn_piece_small_sub32(G, C, a->bs32 + g / 32, has_o, S, d, m, a->gfac[gi], &p))
            p = dn_dot_piece_of_bytes(t, blk, c->act, c->scaling, g, g + 32 * (size_t)G);
        *acc += p;
        return dn_piece_tiny(p);
    }
    int tiny = 0;
    for (int k = 0; k < G; k++) {
        p = dn_piece_small_block(C[k], a->bs32[g / 32 + k], has_o, S[k], d[k], m[k]);
        tiny |= dn_piece_tiny(p);
        *acc += p;
    }
    return tiny;
}

#endif
