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
        case DN_TYPE_Q3_K:
            s = dn_q3_k_scale(blk + 96, u);
            break;
        case DN_TYPE_Q4_K:
        case DN_TYPE_Q5_K:
            dn_k_scale_min(blk + 4, j, &s, &m);
            break;
        case DN_TYPE_Q6_K:
            s = (int8_t)blk[192 + u];
            break;
        case DN_TYPE_IQ4_XS:
            s = dn_iq4_xs_scale(blk, j);
            break;
        default:
            break;
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
static inline int dn_piece_big_block(int64_t C, int64_t O, int has_o, double S, double d,
                                     double dm, float *piece)
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

#endif
