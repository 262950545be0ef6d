/* SPDX-License-Identifier: MIT */
/*
 * The quantized dot / matrix-vector product on AVX2 (+FMA, F16C): bit for
 * bit the reference of src/dot.c (dot_kernels.h says how; docs/dot.md
 * "Design notes" says why).
 *
 * The matrix-vector kernel reads each row's blocks once, fused: the block's
 * digits are decoded to int8 in registers and multiplied with the int8
 * activation codes by _mm256_maddubs_epi16 / _mm256_madd_epi16 (every sum
 * exact: the bounds are at each use), per 32-element chunk; a group's eight
 * chunk sums are gathered into one vector by a tree of hadds; the chunk sums
 * times the scales are summed in double where that is exact (checked per
 * group and row) and rounded once to f32; the row's pieces are added in
 * order. Codes beyond +-127 (two words) take a 16-bit path: digits widened to
 * int16 and _mm256_madd_epi16 per 16 elements, the rest in scalar integers.
 * Anything the fast path cannot prove goes to the reference's own piece
 * function; an unreadable block sends the remaining rows to the reference,
 * which reports it.
 *
 * This file holds the row loops and the table; the digits and the integer
 * chunk sums are in dot_avx2_decode.h, the pieces from them in
 * dot_avx2_pieces.h (always-inline helpers included here alone, so every
 * format is instantiated with its type a constant).
 */
#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "dot_avx2_decode.h"
#include "dot_avx2_pieces.h"
#include "dot_avx2_q6k8.h"
#include "dot_avx2_q808.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef DN_DOT_PREFETCH
#endif

/* ---- the row loops ---------------------------------------------------------------- */

/* Q4_K, Q5_K under Sub32 with the group's factors small integers (fok):
   the four rows' pieces from big_k_factored. */
AI __m128 big_group_factored(const dn_dot_act *a, dn_type t, const uint8_t *const blk[4], size_t g,
                             __m256d d, __m256d dm, int *need)
{
    const size_t gi = g / DN_GROUP;
    __m256i C[4], O[4];
    big_k_factored(t, blk, a->c8 + g, a->f16 + g / 32, a->fbs + g / 32, C, O);
    const __m256d s = _mm256_set1_pd(a->g2e[gi]);
    __m256d A = _mm256_mul_pd(rows_total_pd(C), s);
    __m256d B = _mm256_mul_pd(row_sums(O), _mm256_sub_pd(_mm256_setzero_pd(), s));
    return big_sub32_AB(A, B, dn_has_offs(t), a->glim[gi], d, dm, need);
}

/* The four rows' pieces of a 256-element group, narrow codes. */
AI __m128 big_group_narrow(const dn_dot_act *a, dn_type t, int sub32, const uint8_t *const blk[4],
                           size_t g, const double *S, int mins, __m256d d, __m256d dm, int *need)
{
    const size_t gi = g / DN_GROUP;
    const int has_o = dn_has_offs(t);
    __m256i C[4], O[4];
    for (int r = 0; r < 4; r++) O[r] = _mm256_setzero_si256();
    for (int r = 0; r < 4; r += narrow_rows(t))
        big_narrow(t, narrow_rows(t), blk + r, a->c8 + g, a->bs16n + g / 16,
                   mins ? NULL : a->bs32 + g / 32, 0, C + r, O + r);
    if (mins) {
        __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
        __m256d P0 = _mm256_loadu_pd(a->P + g / 32), P1 = _mm256_loadu_pd(a->P + g / 32 + 4);
        __m256d B = _mm256_sub_pd(_mm256_setzero_pd(), rows_dot_S(O, P0, P1));
        return big_sub32_AB(rows_dot_S(C, S0, S1), B, has_o, a->glim[gi], d, dm, need);
    }
    return sub32 ? big_sub32_4(C, O, has_o, S, a->glim[gi], d, dm, need)
                 : big_block_4(C, O, has_o, S[0], d, dm);
}

/* The same for wide codes (digits unsigned): two byte planes. */
AI __m128 big_group_planes(const dn_dot_act *a, dn_type t, int sub32, const uint8_t *const blk[4],
                           size_t g, const double *S, int mins, __m256d d, __m256d dm, int *need)
{
    const size_t gi = g / DN_GROUP;
    const int has_o = dn_has_offs(t);
    __m256i C[4], O[4], Cl[4], Ol[4];
    for (int r = 0; r < 4; r++) O[r] = Ol[r] = _mm256_setzero_si256();
    for (int r = 0; r < 4; r += narrow_rows(t)) {
        big_narrow(t, narrow_rows(t), blk + r, a->hi8 + g, a->bs16hi + g / 16,
                   mins ? NULL : a->bs32hi + g / 32, 0, C + r, O + r);
        big_narrow(t, narrow_rows(t), blk + r, (const int8_t *)a->lo8 + g, a->bs16lo + g / 16,
                   mins ? NULL : a->bs32lo + g / 32, 1, Cl + r, Ol + r);
    }
    if (mins) {
        __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
        __m256d P0 = _mm256_loadu_pd(a->P + g / 32), P1 = _mm256_loadu_pd(a->P + g / 32 + 4);
        __m256d A =
            _mm256_fmadd_pd(rows_dot_S(C, S0, S1), _mm256_set1_pd(256.0), rows_dot_S(Cl, S0, S1));
        __m256d B = _mm256_sub_pd(_mm256_setzero_pd(), rows_dot_S(O, P0, P1));
        return big_sub32_AB(A, B, has_o, a->glim[gi], d, dm, need);
    }
    return sub32 ? big_sub32_planes(C, O, Cl, Ol, has_o, S, a->glim[gi], d, dm, need)
                 : big_block_planes(C, O, Cl, Ol, has_o, S[0], d, dm, need);
}

/* The four rows' pieces of a 256-element group into *p (lanes in *need to
   be computed by the reference); -1 when a block is unreadable, else 0. */
AI int big_group(const dn_dot_act *a, dn_type t, int sub32, const uint8_t *const blk[4], size_t g,
                 const double *S, int planes, __m128 *p, int *need)
{
    const size_t gi = g / DN_GROUP;
    int bad = 0;
    __m256d d, dm = _mm256_setzero_pd();
    if (dn_m_at(t) == dn_d_at(t) + 2)
        scales4x2(blk, dn_d_at(t), &d, &dm, &bad);
    else
        d = scales4(blk, dn_d_at(t), &bad);
    if (bad) return -1;
    if (sub32 && !a->gok[gi]) {
        *p = _mm_setzero_ps();
        *need = 15;
        return 0;
    }
    /* Q4_K, Q5_K under Sub32: B = -sum_k m_k (bs32_k S_k), from the mins and
       the activation's products P (the same exact terms) */
    const int mins = sub32 && (t == DN_TYPE_Q4_K || t == DN_TYPE_Q5_K);
    if (!planes && mins && a->fok[gi])
        *p = big_group_factored(a, t, blk, g, d, dm, need);
    else if (!planes)
        *p = big_group_narrow(a, t, sub32, blk, g, S, mins, d, dm, need);
    else
        *p = big_group_planes(a, t, sub32, blk, g, S, mins, d, dm, need);
    return 0;
}

/* The four rows' chunk sums C of G 32-element blocks: planes 0 narrow
   codes, 1 two byte planes, 2 int16 products (wide codes). */
AI void small_group_chunks(const dn_dot_act *a, const int16_t *codes, dn_type t, size_t bb,
                           const uint8_t *const blk[4], size_t g, int G, int planes, __m256i C[4])
{
    if (!planes && G == 8) {
        small_narrow_2rows(t, blk, bb, a->c8 + g, a->bs32 + g / 32, C);
        small_narrow_2rows(t, blk + 2, bb, a->c8 + g, a->bs32 + g / 32, C + 2);
    }
    for (int r = 0; r < 4; r++) {
        if (!planes) {
            if (G < 8) C[r] = small_narrow(t, blk[r], bb, G, a->c8 + g, a->bs32 + g / 32, 0);
        } else if (planes == 2) { /* wide codes: int16 products */
            C[r] = small_wide16(t, blk[r], bb, G, codes + g, a->bs32 + g / 32);
        } else { /* 256 C_hi + C_lo: |C| <= 32 * 31 * 2^15 < 2^31 */
            __m256i h = small_narrow(t, blk[r], bb, G, a->hi8 + g, a->bs32hi + g / 32, 0);
            __m256i l =
                small_narrow(t, blk[r], bb, G, (const int8_t *)a->lo8 + g, a->bs32lo + g / 32, 1);
            C[r] = _mm256_add_epi32(_mm256_slli_epi32(h, 8), l);
        }
    }
}

/* Per-block scaling: each row's G pieces of the group added to its lane of
   acc in block order (rows to columns), the rows meeting a tiny piece
   marked in *tiny. */
AI __m128 small_group_blocks(const dn_dot_act *a, dn_type t, const __m256i C[4], const __m256 d[4],
                             const __m256 m[4], size_t g, int G, __m128 acc, __m256i *tiny)
{
    const double *S = a->S + g / 32;
    __m256 q[4];
    for (int r = 0; r < 4; r++) {
        q[r] = small_block_8(C[r], d[r], m[r], a->bs32 + g / 32, dn_has_offs(t), S);
        *tiny = _mm256_or_si256(*tiny, _mm256_and_si256(tiny8(q[r]), _mm256_set1_epi32(1 << r)));
    }
    __m256 t0 = _mm256_unpacklo_ps(q[0], q[1]), t1 = _mm256_unpackhi_ps(q[0], q[1]);
    __m256 t2 = _mm256_unpacklo_ps(q[2], q[3]), t3 = _mm256_unpackhi_ps(q[2], q[3]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m128 col[8] = {_mm256_castps256_ps128(u0),   _mm256_castps256_ps128(u1),
                     _mm256_castps256_ps128(u2),   _mm256_castps256_ps128(u3),
                     _mm256_extractf128_ps(u0, 1), _mm256_extractf128_ps(u1, 1),
                     _mm256_extractf128_ps(u2, 1), _mm256_extractf128_ps(u3, 1)};
    for (int k = 0; k < G; k++) acc = _mm_add_ps(acc, col[k]);
    return acc;
}

/* The four rows' pieces of a group of G 32-element blocks: under Sub32 into
   *p (lanes in *need for the reference), returning 0; per block added to
   *acc directly, returning 1; -1 when a block is unreadable. */
AI int small_group(const dn_dot_act *a, const int16_t *codes, dn_type t, int sub32, size_t bb,
                   const uint8_t *const blk[4], size_t g, int G, int planes, __m128 *acc,
                   __m256i *tiny, __m128 *p, int *need)
{
    const size_t gi = g / DN_GROUP;
    __m256 d[4], m[4];
    __m256i C[4];
    int bad = 0;
    for (int r = 0; r < 4; r++) bad |= small_scales(t, blk[r], bb, G, &d[r], &m[r]);
    small_group_chunks(a, codes, t, bb, blk, g, G, planes, C);
    if (bad) return -1;
    if (!sub32) {
        *acc = small_group_blocks(a, t, C, d, m, g, G, *acc, tiny);
        return 1;
    }
    if (!a->gok[gi]) {
        *p = _mm_setzero_ps();
        *need = 15;
    } else {
        *p = small_sub32_4(C, d, m, a->bs32 + g / 32, dn_has_offs(t), a->S + g / 32,
                           a->Sinf + g / 32, a->gfac[gi], need);
    }
    return 0;
}

/* The lanes of p in `need`: the reference's own pieces of [g, to). */
AI __m128 reference_pieces(const dn_mv_ctx *c, dn_type t, const uint8_t *const blk[4], size_t g,
                           size_t to, __m128 p, int need)
{
    float f[4];
    _mm_storeu_ps(f, p);
    for (int r = 0; r < 4; r++)
        if (need >> r & 1) f[r] = dn_dot_piece_of_bytes(t, blk[r], c->act, c->scaling, g, to);
    return _mm_loadu_ps(f);
}

/* Four rows (row pointers may repeat for a short batch), narrow codes: the
   row values into v[4]. Returns -1 when a block is unreadable, else the
   mask of rows that met a tiny piece (their chain must be redone). packed:
   row[0] is a repacked row group (decodenum/repack.h), the four rows'
   bytes of a group side by side (1), or eight interleaved rows (Q4_K,
   Q8_0), of which rows 4 (packed - 2) .. + 3 (packed 2, 3). */
AI int batch_narrow(const dn_mv_ctx *c, dn_type t, const uint8_t *const row[4], float v[4],
                    int planes, int packed)
{
    const dn_dot_act *a = c->a;
    const int16_t *codes = c->act->codes;
    const int big = dn_big(t), sub32 = c->scaling == DN_ACT_SUB32;
    const size_t n = c->n, bb = c->bb;
    __m128 acc = _mm_setzero_ps();
    __m256i tiny = _mm256_setzero_si256();
    for (size_t g = 0; g < n; g += DN_GROUP) {
        const size_t gi = g / DN_GROUP;
        const int G = (int)((n - g < DN_GROUP ? n - g : DN_GROUP) / 32); /* chunks */
        const uint8_t *blk[4];
        uint8_t tmp[4][DN_PACK8_CHUNK_MAX / DN_Q4K8_ROWS];
        const size_t here = big ? bb : (size_t)G * bb; /* a row's bytes of the group */
        if (packed >= 2) { /* interleaved: rows 4 (packed - 2) .. + 3 put back together */
            const uint8_t *grp = dn_packed8_chunk(row[0], t, c->row_bytes, 0, gi);
            for (size_t o = 0; o < 8 * here; o += 64)
                _mm_prefetch((const char *)grp + 16 * here + o, _MM_HINT_T0);
            for (int r = 0; r < 4; r++) {
                dn_packed8_get(t, grp, G, 4 * (packed - 2) + r, tmp[r]);
                blk[r] = tmp[r];
            }
        } else {
            for (int r = 0; r < 4; r++)
                blk[r] = packed ? row[0] + gi * 4 * (big ? bb : 8 * bb) + (size_t)r * here
                                : row[r] + (big ? gi * bb : (g / 32) * bb);
            dn_prefetch_group(c, t, blk, packed);
        }
        __m128 p;
        int need = 0;
        if (big) {
            if (big_group(a, t, sub32, blk, g, a->S + (sub32 ? g / 32 : gi), planes, &p, &need) < 0)
                return -1;
        } else {
            int done =
                small_group(a, codes, t, sub32, bb, blk, g, G, planes, &acc, &tiny, &p, &need);
            if (done < 0) return -1;
            if (done) continue;
        }
        if (need) p = reference_pieces(c, t, blk, g, big ? g + 256 : g + 32 * (size_t)G, p, need);
        tiny = _mm256_or_si256(tiny, _mm256_and_si256(tiny8(_mm256_castps128_ps256(p)),
                                                      _mm256_setr_epi32(1, 2, 4, 8, 0, 0, 0, 0)));
        acc = _mm_add_ps(acc, p);
    }
    _mm_storeu_ps(v, acc);
    /* the rows whose lanes met a tiny piece */
    __m128i tm = _mm_or_si128(_mm256_castsi256_si128(tiny), _mm256_extracti128_si256(tiny, 1));
    tm = _mm_or_si128(tm, _mm_shuffle_epi32(tm, 0x4E));
    tm = _mm_or_si128(tm, _mm_shuffle_epi32(tm, 0xB1));
    return _mm_cvtsi128_si32(tm) & 15;
}

/* One row, wide codes (beyond +-127): integer sums per 16 by madd_epi16,
   the rest in scalar integers and doubles (dot_shared.h). Returns the row's
   value in *v, -1 when a block is unreadable, else 1 when it met a tiny
   piece. */
AI int row_wide(const dn_mv_ctx *c, dn_type t, const uint8_t *row, float *v)
{
    const dn_dot_act *a = c->a;
    const int big = dn_big(t);
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
            if (fast) raw16_wide(t, blk, bb, 8, c->act->codes + g, raw);
            float p = dn_big_group_piece(c, t, blk, g, fast ? raw : NULL, dh, mh);
            tiny |= dn_piece_tiny(p);
            acc += p;
            continue;
        }
        __m256 dv, mv;
        if (small_scales(t, blk, bb, G, &dv, &mv)) return -1;
        float df[8], mf[8];
        double d[8], m[8];
        int64_t C[8];
        _mm256_storeu_ps(df, dv);
        _mm256_storeu_ps(mf, mv);
        raw16_wide(t, blk, bb, G, c->act->codes + g, raw);
        const int z = dn_zero_point(t);
        for (int k = 0; k < 8; k++) {
            d[k] = df[k];
            m[k] = mf[k];
            C[k] = (int64_t)raw[2 * k] + raw[2 * k + 1] - (int64_t)z * a->bs32[g / 32 + k];
        }
        tiny |= dn_small_group_add(c, t, blk, g, G, C, d, m, &acc);
    }
    *v = acc;
    return tiny;
}

AI dn_status mv_rows(const dn_mv_ctx *c, dn_type t, size_t r0, size_t r1, float *out, size_t *bad)
{
    for (size_t r = r0; r < r1;) {
        float v[4];
        size_t count;
        int tiny;
        if (c->a->narrow || t != DN_TYPE_IQ4_XS) {
            const uint8_t *rp[4];
            count = r1 - r < 4 ? r1 - r : 4;
            for (size_t k = 0; k < 4; k++) rp[k] = c->w + (r + (k < count ? k : 0)) * c->row_bytes;
            /* wide codes: 256-element formats in two byte planes, 32-element
               ones with int16 products */
            tiny = c->a->narrow ? batch_narrow(c, t, rp, v, 0, 0)
                   : dn_big(t)  ? batch_narrow(c, t, rp, v, 1, 0)
                                : batch_narrow(c, t, rp, v, 2, 0);
        } else {
            count = 1;
            tiny = row_wide(c, t, c->w + r * c->row_bytes, v);
        }
        if (tiny < 0) /* an unreadable block: the reference finds and reports it */
            return dn_mv_ref(c, 0, r, r1, out, bad);
        dn_status st = dn_mv_finish(c, 0, r, 0, count, tiny, v, out, bad);
        if (st != DN_OK) return st;
        r += count;
    }
    return DN_OK;
}

/* mv_rows on a repacked matrix: one row group at a time (its four rows
   computed, the ones in [r0, r1) written); the reference of the layout
   where mv_rows takes the plain one's. IQ4_XS with wide codes (row_wide's
   case) goes to that reference. */
AI dn_status mv_rows_packed(const dn_mv_ctx *c, dn_type t, size_t r0, size_t r1, float *out,
                            size_t *bad)
{
    if (!c->a->narrow && t == DN_TYPE_IQ4_XS) return dn_mv_ref(c, 1, r0, r1, out, bad);
    for (size_t r = r0; r < r1;) {
        const size_t q = r / 4 * 4, k1 = r1 - q < 4 ? r1 - q : 4;
        /* Q4_K, Q8_0: the eight-row group and which half (the blocks put
           back together a group at a time, then the plain four-row code) */
        const int pk = dn_packed8(t) ? 2 + (int)(q / 4 % 2) : 1;
        const uint8_t *rp[4] = {c->w + (pk > 1 ? q / 8 * 8 : q) * c->row_bytes, NULL, NULL, NULL};
        float v[4];
        const int tiny = c->a->narrow ? batch_narrow(c, t, rp, v, 0, pk)
                         : dn_big(t)  ? batch_narrow(c, t, rp, v, 1, pk)
                                      : batch_narrow(c, t, rp, v, 2, pk);
        if (tiny < 0) /* an unreadable block: the reference finds and reports it */
            return dn_mv_ref(c, 1, r, r1, out, bad);
        dn_status st = dn_mv_finish(c, 1, q, r - q, k1, tiny, v, out, bad);
        if (st != DN_OK) return st;
        r = q + k1;
    }
    return DN_OK;
}

/* The row loop instantiated once per format with the format a constant.
   Each is its own function: merged into the switch below as one function,
   GCC allocated the loops' registers together and Q8_0's product took 2 %
   more instructions (callgrind, 1024 x 4096, Sub32, one word). */
/* ---- Q4_K repacked: eight rows interleaved, the rows in the lanes ---------------- */

/* The low (hi 0) or high 128 bits of x. */
AI __m128i half128(__m256i x, int hi)
{
    return hi ? _mm256_extracti128_si256(x, 1) : _mm256_castsi256_si128(x);
}
AI __m128 half128ps(__m256 x, int hi)
{
    return hi ? _mm256_extractf128_ps(x, 1) : _mm256_castps256_ps128(x);
}

/* The 6-bit scales (sm[0..1]: byte 8 k + r, sub-blocks 0-3 then 4-7) and
   mins (sm[2..3]: byte 8 r + k, rows 0-3 then 4-7) of an interleaved Q4_K
   chunk (decodenum/repack.h). */
AI void q4k8_sm(const uint8_t *grp, __m256i sm[4])
{
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    const __m256i L0 = load32(grp + 32), L1 = load32(grp + 64), H = load32(grp + 96);
    sm[0] =
        _mm256_or_si256(_mm256_and_si256(L0, m4), _mm256_and_si256(_mm256_slli_epi16(H, 4), m30));
    sm[1] =
        _mm256_or_si256(_mm256_and_si256(L1, m4), _mm256_and_si256(_mm256_slli_epi16(H, 2), m30));
    sm[2] =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(L0, 4), m4), _mm256_and_si256(H, m30));
    sm[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(L1, 4), m4),
                            _mm256_and_si256(_mm256_srli_epi16(H, 2), m30));
}

/* Rows 4h .. 4h + 3 of sub-blocks 2p (D[h][0]) and 2p + 1 (D[h][1])
   against the codes, both h at once: the first 32 bytes of each 64-byte
   load are rows 0-3 (eight bytes each), the next rows 4-7, low nibbles
   eight elements of sub-block 2p, high nibbles the same of 2p + 1, so one
   broadcast of eight codes feeds all eight rows. Both halves take it as
   soon as it is made: held for a second pass over h, the broadcasts had
   gone to the stack (0.92-0.96x the time since, 32 rows of 16384 in L2).
   Word w belongs to row 4h + w / 4; maddubs pairs (<= 2 * 15 * 127) added
   over the four loads stay below 8 * 15 * 127 = 15240 in int16. */
AI void q4k8_sums(const uint8_t *grp, const int8_t *c8, int p, __m256i D[2][2])
{
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int h = 0; h < 2; h++) D[h][0] = D[h][1] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int u = 0; u < 4; u++) {
        int64_t lo, hi;
        memcpy(&lo, c8 + 64 * p + 8 * u, 8);
        memcpy(&hi, c8 + 64 * p + 32 + 8 * u, 8);
        const __m256i blo = _mm256_set1_epi64x(lo), bhi = _mm256_set1_epi64x(hi);
        for (int h = 0; h < 2; h++) {
            const __m256i x = load32(grp + 128 + 256 * p + 64 * u + 32 * h);
            D[h][0] = _mm256_add_epi16(D[h][0], _mm256_maddubs_epi16(_mm256_and_si256(x, m4), blo));
            D[h][1] = _mm256_add_epi16(
                D[h][1], _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(x, 4), m4), bhi));
        }
    }
}

/* The int32 weighted sums of q4k8_sums' D: M holds a word per row of
   sub-block 2p (low lane, rows 0-7) and 2p + 1 (high lane); word w of D[j]
   is weighted by row 4h + w / 4's word of lane j. */
AI __m256i q4k8_weigh(__m256i M, int h, const __m256i D[2])
{
    const __m256i i0 = _mm256_setr_epi8(
        8 * h, 8 * h + 1, 8 * h, 8 * h + 1, 8 * h, 8 * h + 1, 8 * h, 8 * h + 1, 8 * h + 2,
        8 * h + 3, 8 * h + 2, 8 * h + 3, 8 * h + 2, 8 * h + 3, 8 * h + 2, 8 * h + 3, 8 * h + 4,
        8 * h + 5, 8 * h + 4, 8 * h + 5, 8 * h + 4, 8 * h + 5, 8 * h + 4, 8 * h + 5, 8 * h + 6,
        8 * h + 7, 8 * h + 6, 8 * h + 7, 8 * h + 6, 8 * h + 7, 8 * h + 6, 8 * h + 7);
    const __m256i W0 = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(M, 0x44), i0);
    const __m256i W1 = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(M, 0xEE), i0);
    return _mm256_add_epi32(_mm256_madd_epi16(D[0], W0), _mm256_madd_epi16(D[1], W1));
}

/* A factored Q4_K group of eight interleaved rows (decodenum/repack.h):
   A[h] = [A_r / 2^emin] and Bn[h] = [-B_r / 2^emin] for rows 4h .. 4h + 3,
   as doubles (big_k_factored's integers with the rows in the lanes).
   q4k8_weigh weights each word by M_k = sc_k f_k <= 63 * 480 and the chunk
   pair's two vectors add to at most 2 * 2 * 15240 * 30240 < 2^31 per int32
   lane, then widened to double (sums of at most eight int32: exact). -B /
   2^emin = sum_k (m_k f_k) bs32_k: madd of the rows' m_k f_k (word 8 r + k)
   with bs32 (< 2^15), eight terms per row below 2^31. */
AI void q4k8_factored2(const uint8_t *grp, const int8_t *c8, const int16_t *f16,
                       const int32_t *bs32, __m256d A[2], __m256d Bn[2])
{
    __m256i sm[4];
    q4k8_sm(grp, sm);
    const __m128i f8 = _mm_loadu_si128((const __m128i *)f16);
    const __m256i F = _mm256_broadcastsi128_si256(f8);
    __m256d acc[2][2];
    for (int h = 0; h < 2; h++) acc[h][0] = acc[h][1] = _mm256_setzero_pd();
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        /* M of chunks 2p (low lane, rows 0-7) and 2p + 1 (high lane) */
        const __m128i s16 = half128(sm[p / 2], p % 2);
        const __m256i fp = _mm256_shuffle_epi8(
            F, _mm256_setr_epi8(4 * p, 4 * p + 1, 4 * p, 4 * p + 1, 4 * p, 4 * p + 1, 4 * p,
                                4 * p + 1, 4 * p, 4 * p + 1, 4 * p, 4 * p + 1, 4 * p, 4 * p + 1,
                                4 * p, 4 * p + 1, 4 * p + 2, 4 * p + 3, 4 * p + 2, 4 * p + 3,
                                4 * p + 2, 4 * p + 3, 4 * p + 2, 4 * p + 3, 4 * p + 2, 4 * p + 3,
                                4 * p + 2, 4 * p + 3, 4 * p + 2, 4 * p + 3, 4 * p + 2, 4 * p + 3));
        const __m256i M = _mm256_mullo_epi16(_mm256_cvtepu8_epi16(s16), fp);
        __m256i D[2][2];
        q4k8_sums(grp, c8, p, D);
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) { /* rows 4h .. 4h + 3 */
            const __m256i E = q4k8_weigh(M, h, D[h]);
            acc[h][0] = _mm256_add_pd(acc[h][0], _mm256_cvtepi32_pd(_mm256_castsi256_si128(E)));
            acc[h][1] =
                _mm256_add_pd(acc[h][1], _mm256_cvtepi32_pd(_mm256_extracti128_si256(E, 1)));
        }
    }
    for (int h = 0; h < 2; h++) /* [r0 r0 r1 r1], [r2 r2 r3 r3] -> [r0 r1 r2 r3] */
        A[h] = _mm256_permute4x64_pd(_mm256_hadd_pd(acc[h][0], acc[h][1]), 0xD8);
    const __m128i bs8 = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)bs32),
                                        _mm_loadu_si128((const __m128i *)(bs32 + 4)));
    const __m256i bs = _mm256_broadcastsi128_si256(bs8); /* exact: < 2^15 */
    __m256i X[4];                                        /* rows 2i, 2i + 1: four int32 each */
    for (int i = 0; i < 4; i++) {
        const __m128i m16 = half128(sm[2 + i / 2], i % 2);
        X[i] = _mm256_madd_epi16(_mm256_mullo_epi16(_mm256_cvtepu8_epi16(m16), F), bs);
    }
    const __m256i t =
        _mm256_hadd_epi32(_mm256_hadd_epi32(X[0], X[1]), _mm256_hadd_epi32(X[2], X[3]));
    const __m256i g = _mm256_permutevar8x32_epi32(t, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    Bn[0] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(g));
    Bn[1] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(g, 1));
}

/* A Sub32 group that does not factor (gok, not fok) of eight interleaved
   rows: A[h] = [A_r] and Bn[h] = [-B_r] for rows 4h .. 4h + 3, big_group_
   narrow's exact values. Each (row, sub-block) sum weighted by sc_k (int32,
   two lanes per row: |.| <= 16 * 15 * 127 * 63 < 2^21), widened and
   multiplied by S_k: every term and partial sum is exact (dn_dot_act_init's
   gok: a multiple of 2^emin below 2^(emin + 52)), so the order does not
   matter. B_r = sum_k m_k P_k (P_k = bs32_k S_k), as big_group_narrow. */
AI void q4k8_sub32_2(const uint8_t *grp, const int8_t *c8, const double *S, const double *P,
                     __m256d A[2], __m256d Bn[2])
{
    __m256i sm[4];
    q4k8_sm(grp, sm);
    __m256d acc[2][2];
    for (int h = 0; h < 2; h++) acc[h][0] = acc[h][1] = _mm256_setzero_pd();
    for (int p = 0; p < 4; p++) {
        const __m256i M = _mm256_cvtepu8_epi16(half128(sm[p / 2], p % 2));
        const __m256i Ml = _mm256_and_si256(M, _mm256_setr_epi64x(-1, -1, 0, 0));
        const __m256i Mh = _mm256_andnot_si256(_mm256_setr_epi64x(-1, -1, 0, 0), M);
        const __m256d s0 = _mm256_set1_pd(S[2 * p]), s1 = _mm256_set1_pd(S[2 * p + 1]);
        __m256i D[2][2];
        q4k8_sums(grp, c8, p, D);
        for (int h = 0; h < 2; h++) {
            const __m256i E0 = q4k8_weigh(Ml, h, D[h]), E1 = q4k8_weigh(Mh, h, D[h]);
            for (int j = 0; j < 2; j++) {
                const __m256d e0 = _mm256_cvtepi32_pd(half128(E0, j));
                const __m256d e1 = _mm256_cvtepi32_pd(half128(E1, j));
                acc[h][j] = _mm256_fmadd_pd(e1, s1, _mm256_fmadd_pd(e0, s0, acc[h][j]));
            }
        }
    }
    uint8_t mn[64];
    _mm256_storeu_si256((__m256i *)mn, sm[2]);
    _mm256_storeu_si256((__m256i *)(mn + 32), sm[3]);
    const __m256d P0 = _mm256_loadu_pd(P), P1 = _mm256_loadu_pd(P + 4);
    for (int h = 0; h < 2; h++) {
        A[h] = _mm256_permute4x64_pd(_mm256_hadd_pd(acc[h][0], acc[h][1]), 0xD8);
        __m256i O[4];
        for (int r = 0; r < 4; r++)
            O[r] = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(mn + 32 * h + 8 * r)));
        Bn[h] = _mm256_sub_pd(_mm256_setzero_pd(), rows_dot_S(O, P0, P1));
    }
}

/* The eight pieces of a group that does not factor (gok, not fok): d A +
   dm B as big_group_narrow, and the reference's pieces (the rows' blocks
   put back together) where big_sub32_AB flags them. */
static __attribute__((noinline)) __m256 q4k8_unfactored2(const dn_mv_ctx *c, const uint8_t *grp,
                                                         size_t g)
{
    const dn_dot_act *a = c->a;
    __m256d A[2], Bn[2];
    q4k8_sub32_2(grp, a->c8 + g, a->S + g / 32, a->P + g / 32, A, Bn);
    const __m256i h = load32(grp); /* d[8], dm[8] */
    const __m256 d = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
    const __m256 dm = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
    float f[8];
    for (int k = 0; k < 2; k++) {
        int need = 0;
        __m128 p =
            big_sub32_AB(A[k], Bn[k], 1, a->glim[g / DN_GROUP], _mm256_cvtps_pd(half128ps(d, k)),
                         _mm256_cvtps_pd(half128ps(dm, k)), &need);
        if (need) {
            uint8_t tmp[4][DN_Q4K8_BYTES / DN_Q4K8_ROWS];
            for (int r = 0; r < 4; r++) dn_q4k8_get(grp, 4 * k + r, tmp[r]);
            const uint8_t *blk[4] = {tmp[0], tmp[1], tmp[2], tmp[3]};
            p = reference_pieces(c, DN_TYPE_Q4_K, blk, g, g + 256, p, need);
        }
        _mm_storeu_ps(f + 4 * k, p);
    }
    return _mm256_loadu_ps(f);
}

/* The eight rows of an interleaved Q4_K row group (grp0: its first chunk),
   narrow Sub32 codes: the row values into v[8]. Returns -1 when a block is
   unreadable, else the mask of rows that met a tiny piece. */
AI int batch8_q4k2(const dn_mv_ctx *c, const uint8_t *grp0, float v[8])
{
    const dn_dot_act *a = c->a;
    __m256 acc = _mm256_setzero_ps();
    __m256i tiny = _mm256_setzero_si256();
    for (size_t g = 0; g < c->n; g += DN_GROUP) {
        const size_t gi = g / DN_GROUP;
        const uint8_t *grp = grp0 + gi * DN_Q4K8_BYTES;
        /* the stream 4 chunks (4.5 KiB) ahead into L1, across row groups (they
           follow one another): 8192 rows of 16384 from memory 1.02-1.11x
           faster than the next row group's chunk into L2 (same host, load 17) */
        for (int o = 0; o < DN_Q4K8_BYTES; o += 64)
            _mm_prefetch((const char *)grp + 4 * DN_Q4K8_BYTES + o, _MM_HINT_T0);
        const __m256i h = load32(grp), e = _mm256_set1_epi16(0x7C00); /* d[8], dm[8] */
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_and_si256(h, e), e))) return -1;
        __m256 p;
        if (a->gok[gi] && a->fok[gi]) {
            __m256d A[2], Bn[2];
            q4k8_factored2(grp, a->c8 + g, a->f16 + g / 32, a->bs32 + g / 32, A, Bn);
            const __m256 d = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
            const __m256 dm = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
            const __m256d s = _mm256_set1_pd(a->g2e[gi]), z = _mm256_setzero_pd();
            __m128 q[2];
            for (int k = 0; k < 2; k++) { /* pending_pieces (dot_avx512.c): no limit test */
                const __m256d ds = _mm256_mul_pd(
                    _mm256_cvtps_pd(k ? _mm256_extractf128_ps(d, 1) : _mm256_castps256_ps128(d)),
                    s);
                const __m256d dms = _mm256_mul_pd(
                    _mm256_cvtps_pd(k ? _mm256_extractf128_ps(dm, 1) : _mm256_castps256_ps128(dm)),
                    s);
                q[k] =
                    round_sum(_mm256_mul_pd(A[k], ds), _mm256_mul_pd(Bn[k], _mm256_sub_pd(z, dms)));
            }
            p = _mm256_set_m128(q[1], q[0]);
        } else if (a->gok[gi]) {
            p = q4k8_unfactored2(c, grp, g);
        } else {
            p = dn_q4k8_ref_pieces(c, grp, g);
        }
        tiny = _mm256_or_si256(tiny, tiny8(p));
        acc = _mm256_add_ps(acc, p);
    }
    _mm256_storeu_ps(v, acc);
    return _mm256_movemask_ps(_mm256_castsi256_ps(tiny));
}

/* The repacked Q4_K product with narrow Sub32 codes, one interleaved row
   group at a time (its eight rows computed, the ones in [r0, r1) written). */
AI dn_status mv_packed8_q4k2(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return dn_q4k8_rows(c, r0, r1, out, bad, batch8_q4k2);
}

/* mat_vec_rows_act: mv_rows once per format, the format a constant. */
#include "../dot_format_rows.h"

#define NOINLINE __attribute__((noinline))

static dn_status mat_vec_rows_avx2(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                   const dn_act_row *act, dn_act_scaling scaling, size_t r0,
                                   size_t r1, float *out, size_t *bad)
{
    return dn_dot_rows_own_act(mat_vec_rows_act, type, w, rows, n, act, scaling, r0, r1, out, bad);
}

static dn_status mat_mul_rows_avx2(const dn_act *x, size_t c0, size_t c1, dn_type type,
                                   const uint8_t *w, size_t rows, size_t r0, size_t r1, float *out,
                                   size_t ldo, size_t *bad)
{
    return dn_dot_mm_lanes_avx2(mat_vec_rows_act, x, c0, c1, type, w, rows, r0, r1, out, ldo, bad);
}

/* The repacked row loops: the formats decode engines meet (Q4_K_M files:
   Q4_K, Q6_K, some Q5_K; Q8_0; IQ4_XS), the layout's reference for the
   others. */
static NOINLINE dn_status pk_q8_0(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    /* narrow Sub32 codes: the rows in the lanes (dot_avx2_q808.h) */
    if (c->a->narrow && c->scaling == DN_ACT_SUB32)
        return dn_q4k8_rows(c, r0, r1, out, bad, batch8_q8082);
    return mv_rows_packed(c, DN_TYPE_Q8_0, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q4_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    /* narrow Sub32 codes: the rows in the lanes; otherwise the blocks put
       back together four rows at a time and the plain row loop */
    if (c->a->narrow && c->scaling == DN_ACT_SUB32) return mv_packed8_q4k2(c, r0, r1, out, bad);
    return mv_rows_packed(c, DN_TYPE_Q4_K, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q5_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows_packed(c, DN_TYPE_Q5_K, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q6_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    if (c->a->narrow && c->scaling == DN_ACT_SUB32) /* the rows in the lanes (dot_avx2_q6k8.h) */
        return dn_q4k8_rows(c, r0, r1, out, bad, batch8_q6k2);
    return mv_rows_packed(c, DN_TYPE_Q6_K, r0, r1, out, bad);
}
static NOINLINE dn_status pk_iq4_xs(const dn_mv_ctx *c, size_t r0, size_t r1, float *out,
                                    size_t *bad)
{
    return mv_rows_packed(c, DN_TYPE_IQ4_XS, r0, r1, out, bad);
}

static dn_status packed_rows_act_avx2(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                      const dn_act_row *act, dn_act_scaling scaling,
                                      const dn_dot_act *a, size_t r0, size_t r1, float *out,
                                      size_t *bad)
{
    const dn_mv_ctx c = dn_mv_ctx_of(type, w, rows, n, act, scaling, a);
    switch (a->usable ? type : DN_TYPE_LIMIT) {
    case DN_TYPE_Q8_0: return pk_q8_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q4_K: return pk_q4_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_K: return pk_q5_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q6_K: return pk_q6_k(&c, r0, r1, out, bad);
    case DN_TYPE_IQ4_XS: return pk_iq4_xs(&c, r0, r1, out, bad);
    default: return dn_ref_rows_packed(type, w, rows, n, act, scaling, a, r0, r1, out, bad);
    }
}

const dn_dot_kernels dn_dot_avx2 = {
    .mat_vec_rows = mat_vec_rows_avx2,
    .mat_vec_rows_act = mat_vec_rows_act,
    .mat_mul_rows = mat_mul_rows_avx2,
    .packed_rows_act = packed_rows_act_avx2,
};
