/* SPDX-License-Identifier: MIT */
/*
 * dot_avx2_decode.h: the AVX2 dot kernels' integer half, included by
 * src/x86/dot_avx2.c alone: each format's weight digits decoded to int8 in
 * registers (digits), their exact products with the activation codes per
 * 32-element chunk (narrow codes: maddubs; wide codes: int16 madd), and the
 * chunk sums of a 256-element block or a group of 32-element blocks. All
 * always-inline with the format a parameter: each row loop instantiates
 * them with the format a constant.
 */
#ifndef DN_DOT_AVX2_DECODE_H
#define DN_DOT_AVX2_DECODE_H

#include "../dot_shared.h"

#include <immintrin.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

/* ---- small helpers ------------------------------------------------------------ */

/* [sum v0, ..., sum v7]: the eight lanes of each vector added, in order. */
AI __m256i reduce8(__m256i v0, __m256i v1, __m256i v2, __m256i v3, __m256i v4, __m256i v5,
                   __m256i v6, __m256i v7)
{
    __m256i a = _mm256_hadd_epi32(v0, v1), b = _mm256_hadd_epi32(v2, v3);
    __m256i c = _mm256_hadd_epi32(v4, v5), d = _mm256_hadd_epi32(v6, v7);
    __m256i ab = _mm256_hadd_epi32(a, b), cd = _mm256_hadd_epi32(c, d);
    return _mm256_add_epi32(_mm256_permute2x128_si256(ab, cd, 0x20),
                            _mm256_permute2x128_si256(ab, cd, 0x31));
}

AI double hsum_pd(__m256d x)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

AI double hmin_pd(__m256d x)
{
    __m128d s = _mm_min_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return _mm_cvtsd_f64(_mm_min_sd(s, _mm_unpackhi_pd(s, s)));
}

AI __m256d abs_pd(__m256d x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }

/* |x|, or +inf where x is zero (so a minimum passes it over). */
AI __m256d nz_abs_pd(__m256d x)
{
    __m256d a = abs_pd(x);
    return _mm256_or_pd(a, _mm256_and_pd(_mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_EQ_OQ),
                                         _mm256_set1_pd(INFINITY)));
}

AI __m256i load32(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

/* 32 nibbles of 16 bytes, Q4_0's order: [low nibbles | high nibbles]. */
AI __m256i nib32(const uint8_t *p)
{
    __m128i x = _mm_loadu_si128((const __m128i *)p);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(x, 4), x), _mm256_set1_epi8(15));
}

/* 32 bytes, 0xFF where bit e of x is set. */
AI __m256i bits32(uint32_t x)
{
    __m256i v = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int)x),
        _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

AI __m256i iq4_levels(__m256i idx)
{
    const __m256i t = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)dn_iq4_levels));
    return _mm256_shuffle_epi8(t, idx);
}

/* ---- the weight digits of a 32-element chunk ------------------------------------ */

/* Chunk c of the block at blk: for 32-element formats the block itself
   (c ignored), for 256-element formats elements [32c, 32c + 32). */
AI __m256i digits(dn_type t, const uint8_t *blk, int c)
{
    const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
    switch (t) {
    case DN_TYPE_Q4_0:
    case DN_TYPE_IQ4_NL: {
        __m256i q = nib32(blk + 2);
        return t == DN_TYPE_IQ4_NL ? iq4_levels(q) : q;
    }
    case DN_TYPE_Q4_1: return nib32(blk + 4);
    case DN_TYPE_Q5_0:
    case DN_TYPE_Q5_1: {
        uint32_t qh;
        memcpy(&qh, blk + (t == DN_TYPE_Q5_0 ? 2 : 4), 4);
        __m256i q = nib32(blk + (t == DN_TYPE_Q5_0 ? 6 : 8));
        return _mm256_or_si256(q, _mm256_and_si256(bits32(qh), _mm256_set1_epi8(16)));
    }
    case DN_TYPE_Q8_0: return load32(blk + 2);
    case DN_TYPE_Q2_K:
    case DN_TYPE_Q3_K: {
        const uint8_t *qs = blk + (t == DN_TYPE_Q2_K ? 16 : 32) + 32 * (c / 4);
        __m256i q = _mm256_and_si256(_mm256_srli_epi16(load32(qs), 2 * (c % 4)), m3);
        if (t == DN_TYPE_Q2_K) return q;
        __m256i h = _mm256_and_si256(_mm256_srli_epi16(load32(blk), c), one);
        return _mm256_or_si256(q, _mm256_slli_epi16(h, 2));
    }
    case DN_TYPE_Q4_K:
    case DN_TYPE_Q5_K: {
        __m256i x = load32(blk + (t == DN_TYPE_Q4_K ? 16 : 48) + 32 * (c / 2));
        __m256i q =
            (c & 1) ? _mm256_and_si256(_mm256_srli_epi16(x, 4), m4) : _mm256_and_si256(x, m4);
        if (t == DN_TYPE_Q4_K) return q;
        __m256i h = _mm256_and_si256(_mm256_srli_epi16(load32(blk + 16), c), one);
        return _mm256_or_si256(q, _mm256_slli_epi16(h, 4));
    }
    case DN_TYPE_Q6_K: {
        int h = c / 4, k = c % 4;
        __m256i ql = load32(blk + 64 * h + 32 * (k & 1));
        __m256i lo =
            (k >> 1) ? _mm256_and_si256(_mm256_srli_epi16(ql, 4), m4) : _mm256_and_si256(ql, m4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(load32(blk + 128 + 32 * h), 2 * k), m3);
        return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
    }
    case DN_TYPE_IQ4_XS: return iq4_levels(nib32(blk + 8 + 16 * c));
    default: return _mm256_setzero_si256();
    }
}

/* ---- one-word (narrow) chunk products ------------------------------------------- */

/* 16 int16 pair sums of digits * codes: unsigned digits <= 63 with codes
   within +-128 give |pair| <= 2 * 63 * 128; signed digits go through the
   sign trick, |level| <= 128, codes within +-127, so |pair| <= 2 * 128 * 127
   < 2^15. `lo`: the codes are a low byte plane (unsigned 0..255, with
   unsigned digits only): |pair| <= 2 * 255 * 63 < 2^15. */
AI __m256i pairs8(dn_type t, __m256i q, const int8_t *c8, int lo)
{
    __m256i c = load32(c8);
    if (lo) return _mm256_maddubs_epi16(c, q); /* unsigned codes 0..255, digits <= 63: <= 32130 */
    if (dn_signed_digits(t))
        return _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(c, q));
    return _mm256_maddubs_epi16(q, c);
}

/* The int16 multiplier of chunk c's pairs for 16-element sub-block formats:
   sc[2c] on the low 128-bit half (elements 0-15), sc[2c+1] on the high. */
AI __m256i sub16_scale(__m256i sc16x2, int c)
{
    /* sc16x2: the eight int16 scales of chunks 0-3 (or 4-7) in both halves */
    int w = 2 * (c % 4); /* int16 index of the low half's scale */
    __m256i ctl = _mm256_setr_epi8(
        2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w, 2 * w + 1,
        2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w + 2, 2 * w + 3, 2 * w + 2,
        2 * w + 3, 2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3, 2 * w + 2,
        2 * w + 3, 2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3);
    return _mm256_shuffle_epi8(sc16x2, ctl);
}

/* Q4_K, Q5_K: [sc_0..sc_7 | m_0..m_7] (bytes) of the eight chunks from the
   12 bytes s[] at 4 (blocks.c's k_scale_min) in one vector: with A =
   s[0..3, 8..11, 4..7, 8..11] and B = (0, s[0..3], 0, s[4..7]),
     sc_j = A & 63 (j < 4), (A & 15) | (B >> 6) << 4 (j >= 4);
     m_j  = A & 63 (j < 4), (A >> 4) | (B >> 6) << 4 (j >= 4). */
AI __m128i k_scales_mins(const uint8_t *blk)
{
    __m128i s12 = _mm_loadu_si128((const __m128i *)(blk + 4));
    __m128i A =
        _mm_shuffle_epi8(s12, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    __m128i B = _mm_shuffle_epi8(
        s12, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    __m128i A4 = _mm_and_si128(_mm_srli_epi16(A, 4), _mm_set1_epi8(15));
    A = _mm_blendv_epi8(A, A4, _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1));
    return _mm_or_si128(_mm_and_si128(A, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63,
                                                       63, 15, 15, 15, 15)),
                        _mm_and_si128(_mm_srli_epi16(B, 2), _mm_set1_epi8(0x30)));
}

/* Rows per call of big_narrow: as many as the format's decode leaves
   registers for. Measured (ns per row-group, Sub32, one word, 256 rows of
   16384 in cache, best of many calls): two rows took Q3_K from 20.9 to
   18.4; Q6_K, IQ4_XS and Q5_K ran 2-3 % slower with two, Q2_K within
   noise. (big_k_factored takes four rows: Q4_K 11.3 -> 10.4, Q5_K 14.0 ->
   13.5 with its chunk loop unrolled.) */
AI int narrow_rows(dn_type t) { return t == DN_TYPE_Q3_K ? 2 : 1; }

/* nq (narrow_rows) rows' 256-element blocks, narrow codes (or one byte
   plane of wide codes, lo for the low plane): C[q] = [C_0..C_7], O[q] =
   [O_0..O_7] (int32: |C_k| <= 32 * 4096 * 128 = 2^24 narrow or high plane;
   32 * 63 * 255 * 128 < 2^27 for a low plane of Q6_K, the largest). Chunk
   pairs outer, the rows inside: each pair's codes are loaded once and
   reduce8's hadd tree is built as the pairs come. */
AI void big_narrow(dn_type t, int nq, const uint8_t *const blk[], const int8_t *c8,
                   const int16_t *bs16n, const int32_t *bs32, int lo, __m256i C[], __m256i O[])
{
    const int sub16 = t == DN_TYPE_Q2_K || t == DN_TYPE_Q3_K || t == DN_TYPE_Q6_K;
    __m256i sc16[2], half[2][2]; /* per-16 scales; [sc0..7 | sc0..7], [sc8..15 | sc8..15] */
    if (sub16)
        for (int q = 0; q < nq; q++) {
            __m128i s8;
            if (t == DN_TYPE_Q2_K) {
                s8 = _mm_and_si128(_mm_loadu_si128((const __m128i *)blk[q]), _mm_set1_epi8(15));
            } else if (t == DN_TYPE_Q6_K) {
                s8 = _mm_loadu_si128((const __m128i *)(blk[q] + 192));
            } else {
                uint32_t aux[4];
                memcpy(aux, blk[q] + 96, 12);
                uint32_t tmp = aux[2];
                const uint32_t k1 = 0x03030303u, k2 = 0x0f0f0f0fu;
                aux[2] = ((aux[0] >> 4) & k2) | (((tmp >> 4) & k1) << 4);
                aux[3] = ((aux[1] >> 4) & k2) | (((tmp >> 6) & k1) << 4);
                aux[0] = (aux[0] & k2) | (((tmp >> 0) & k1) << 4);
                aux[1] = (aux[1] & k2) | (((tmp >> 2) & k1) << 4);
                s8 = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)aux), _mm_set1_epi8(32));
            }
            sc16[q] = _mm256_cvtepi8_epi16(s8); /* [sc0..7 | sc8..15] */
            half[q][0] = _mm256_permute2x128_si256(sc16[q], sc16[q], 0x00);
            half[q][1] = _mm256_permute2x128_si256(sc16[q], sc16[q], 0x11);
        }
    /* per-16 scales inside the madd: |pair * sc| <= 2 * 16002 * 128 */
    __m256i ab[2], cd[2];
#pragma GCC unroll 4
    for (int c = 0; c < 8; c += 2)
        for (int q = 0; q < nq; q++) {
            __m256i v[2];
            for (int i = 0; i < 2; i++) {
                __m256i mul =
                    sub16 ? sub16_scale(half[q][(c + i) / 4], c + i) : _mm256_set1_epi16(1);
                v[i] = _mm256_madd_epi16(pairs8(t, digits(t, blk[q], c + i), c8 + 32 * (c + i), lo),
                                         mul);
            }
            __m256i h = _mm256_hadd_epi32(v[0], v[1]);
            if (c == 0) ab[q] = h;
            if (c == 2) ab[q] = _mm256_hadd_epi32(ab[q], h);
            if (c == 4) cd[q] = h;
            if (c == 6) cd[q] = _mm256_hadd_epi32(cd[q], h);
        }
    for (int q = 0; q < nq; q++) {
        __m256i raw = _mm256_add_epi32(_mm256_permute2x128_si256(ab[q], cd[q], 0x20),
                                       _mm256_permute2x128_si256(ab[q], cd[q], 0x31));
        if (sub16) {
            __m256i bs = load32(bs16n);
            if (t == DN_TYPE_Q2_K) {
                __m128i m8 = _mm_and_si128(
                    _mm_srli_epi16(_mm_loadu_si128((const __m128i *)blk[q]), 4), _mm_set1_epi8(15));
                O[q] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                        _mm256_madd_epi16(_mm256_cvtepi8_epi16(m8), bs));
            } else {
                /* the zero point: z * sum sc * bs16 */
                __m256i zs = _mm256_madd_epi16(sc16[q], bs);
                raw = _mm256_sub_epi32(raw, _mm256_slli_epi32(zs, t == DN_TYPE_Q3_K ? 2 : 5));
            }
            C[q] = raw;
            continue;
        }
        if (t == DN_TYPE_IQ4_XS) {
            uint16_t h = dn_load_u16(blk[q] + 2);
            uint32_t l;
            memcpy(&l, blk[q] + 4, 4);
            /* ls_j = (scales_l nibble j) | (2 bits j of scales_h) << 4 */
            int32_t ls[8];
            for (int j = 0; j < 8; j++)
                ls[j] = (int32_t)(((l >> 4 * j) & 15) | ((h >> 2 * j) & 3) << 4) - 32;
            C[q] = _mm256_mullo_epi32(raw, _mm256_loadu_si256((const __m256i *)ls));
            continue;
        }
        __m128i sm = k_scales_mins(blk[q]);
        C[q] = _mm256_mullo_epi32(raw, _mm256_cvtepu8_epi32(sm));
        __m256i m = _mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8));
        /* bs32 NULL: the mins themselves (the caller has sum_k m_k bs32_k S_k) */
        O[q] = bs32 ? _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_mullo_epi32(m, load32(bs32)))
                    : m;
    }
}

/* Q4_K, Q5_K under Sub32 when the group's activation factors are small
   integers (dn_dot_act.fok: S_k = f_k 2^emin, f_k <= dn_dot_factor_max),
   four rows' blocks: every chunk's pair sums weighted in int16 by M_k =
   sc_k f_k < 2^15 and added in eight int32 lanes (a lane takes two pairs of
   each chunk; the bound is dn_dot_factor_max's), so no chunk needs its own
   sum. C[r]'s lanes add up to A / 2^emin exactly (their total may pass 2^31:
   rows_total_pd widens them first); mb[r] gets m_k f_k bs32_k, whose lanes
   add up to -B / 2^emin (|m_k f_k bs32_k| <= 63 * 2^21, eight of them
   < 2^31). Chunk by chunk with the four rows inside: each chunk's codes are
   loaded once and the live registers are the rows' sums and multipliers. */
AI void big_k_factored(dn_type t, const uint8_t *const blk[4], const int8_t *c8, const int16_t *f16,
                       const int32_t *fbs, __m256i C[4], __m256i mb[4])
{
    const __m128i f = _mm_loadu_si128((const __m128i *)f16);
    __m256i M2[4];
    for (int r = 0; r < 4; r++) {
        __m128i sm = k_scales_mins(blk[r]);
        M2[r] = _mm256_broadcastsi128_si256(_mm_mullo_epi16(_mm_cvtepu8_epi16(sm), f));
        mb[r] = _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8)), load32(fbs));
        C[r] = _mm256_setzero_si256();
    }
    /* unrolled: each chunk's digit extraction and multiplier selection are
       constants (GCC otherwise kept this loop, testing c & 1 in it) */
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++) {
        const __m256i sel = _mm256_set1_epi16((short)(2 * c | (2 * c + 1) << 8));
        for (int r = 0; r < 4; r++) {
            __m256i Mc = _mm256_shuffle_epi8(M2[r], sel);
            C[r] = _mm256_add_epi32(
                C[r], _mm256_madd_epi16(pairs8(t, digits(t, blk[r], c), c8 + 32 * c, 0), Mc));
        }
    }
}

/* G (<= 8) 32-element blocks from blk, narrow codes: C = [C_0..C_7] (lanes
   from G on zero): |C_k| <= 32 * 128 * 127 < 2^20. */
AI __m256i small_narrow(dn_type t, const uint8_t *blk, size_t bb, int G, const int8_t *c8,
                        const int32_t *bs32, int lo)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i v[8];
    for (int c = 0; c < 8; c++)
        v[c] = c < G
                   ? _mm256_madd_epi16(pairs8(t, digits(t, blk + c * bb, 0), c8 + 32 * c, lo), ones)
                   : _mm256_setzero_si256();
    __m256i raw = reduce8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    int z = dn_zero_point(t);
    if (z) raw = _mm256_sub_epi32(raw, _mm256_mullo_epi32(load32(bs32), _mm256_set1_epi32(z)));
    return raw; /* bs32 is zero past the row (dn_dot_act pads) */
}

/* small_narrow of a whole group (G = 8) for two rows, chunk pairs outer:
   each pair's codes loaded once for both rows, reduce8's hadd tree built as
   the pairs come, so a row holds at most two partial vectors. Row by row,
   the compiler kept the group's eight code vectors live across the rows and
   spilled the chunk sums: two rows at a time took Q8_0 from 15.7 to 14.5 ns
   per row-group, Q4_0 from 14.7 to 13.7, Q5_0 from 18.8 to 17.5 (measured
   as in narrow_rows). */
AI __m256i chunk_pair(dn_type t, const uint8_t *blk, size_t bb, const int8_t *c8, int c)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i v0 = _mm256_madd_epi16(pairs8(t, digits(t, blk + c * bb, 0), c8 + 32 * c, 0), ones);
    __m256i v1 =
        _mm256_madd_epi16(pairs8(t, digits(t, blk + (c + 1) * bb, 0), c8 + 32 * c + 32, 0), ones);
    return _mm256_hadd_epi32(v0, v1);
}

AI void small_narrow_2rows(dn_type t, const uint8_t *const blk[2], size_t bb, const int8_t *c8,
                           const int32_t *bs32, __m256i C[2])
{
    __m256i ab[2], cd[2];
    for (int q = 0; q < 2; q++) ab[q] = chunk_pair(t, blk[q], bb, c8, 0);
    for (int q = 0; q < 2; q++) ab[q] = _mm256_hadd_epi32(ab[q], chunk_pair(t, blk[q], bb, c8, 2));
    for (int q = 0; q < 2; q++) cd[q] = chunk_pair(t, blk[q], bb, c8, 4);
    for (int q = 0; q < 2; q++) cd[q] = _mm256_hadd_epi32(cd[q], chunk_pair(t, blk[q], bb, c8, 6));
    const int z = dn_zero_point(t);
    for (int q = 0; q < 2; q++) {
        C[q] = _mm256_add_epi32(_mm256_permute2x128_si256(ab[q], cd[q], 0x20),
                                _mm256_permute2x128_si256(ab[q], cd[q], 0x31));
        if (z)
            C[q] = _mm256_sub_epi32(C[q], _mm256_mullo_epi32(load32(bs32), _mm256_set1_epi32(z)));
    }
}

/* G (<= 8) 32-element blocks against wide int16 codes: digits widened to
   int16, madd per 16: |C_k| <= 32 * 128 * 32768 = 2^27 (plus the zero point's
   z * bs32, |.| <= 16 * 2^20). */
AI __m256i small_wide16(dn_type t, const uint8_t *blk, size_t bb, int G, const int16_t *c16,
                        const int32_t *bs32)
{
    __m256i v[8];
    for (int c = 0; c < 8; c++) {
        if (c >= G) {
            v[c] = _mm256_setzero_si256();
            continue;
        }
        __m256i q = digits(t, blk + c * bb, 0);
        __m128i q0 = _mm256_castsi256_si128(q), q1 = _mm256_extracti128_si256(q, 1);
        __m256i w0 = dn_signed_digits(t) ? _mm256_cvtepi8_epi16(q0) : _mm256_cvtepu8_epi16(q0);
        __m256i w1 = dn_signed_digits(t) ? _mm256_cvtepi8_epi16(q1) : _mm256_cvtepu8_epi16(q1);
        v[c] = _mm256_add_epi32(_mm256_madd_epi16(w0, load32(c16 + 32 * c)),
                                _mm256_madd_epi16(w1, load32(c16 + 32 * c + 16)));
    }
    __m256i raw = reduce8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    int z = dn_zero_point(t);
    if (z) raw = _mm256_sub_epi32(raw, _mm256_mullo_epi32(load32(bs32), _mm256_set1_epi32(z)));
    return raw;
}

/* ---- two-word (wide) raw sums ----------------------------------------------------- */

/* raw16 sums of chunk q against int16 codes: [elements 0-15 | 16-31] as two
   int32x8 whose lanes add up to each: |pair| <= 2 * 128 * 32768 = 2^24. */
AI void pairs16(dn_type t, __m256i q, const int16_t *c16, __m256i *lo, __m256i *hi)
{
    __m128i q0 = _mm256_castsi256_si128(q), q1 = _mm256_extracti128_si256(q, 1);
    __m256i w0 = dn_signed_digits(t) ? _mm256_cvtepi8_epi16(q0) : _mm256_cvtepu8_epi16(q0);
    __m256i w1 = dn_signed_digits(t) ? _mm256_cvtepi8_epi16(q1) : _mm256_cvtepu8_epi16(q1);
    *lo = _mm256_madd_epi16(w0, load32(c16));
    *hi = _mm256_madd_epi16(w1, load32(c16 + 16));
}

/* raw[16]: the per-16 sums of 8 chunks (|raw| <= 16 * 128 * 32768 = 2^26). */
AI void raw16_wide(dn_type t, const uint8_t *blk, size_t bb, int G, const int16_t *c16,
                   int32_t raw[16])
{
    __m256i v[16];
    for (int c = 0; c < 8; c++) {
        if (c < G) {
            const uint8_t *b = dn_big(t) ? blk : blk + c * bb;
            pairs16(t, digits(t, b, c), c16 + 32 * c, &v[2 * c], &v[2 * c + 1]);
        } else {
            v[2 * c] = v[2 * c + 1] = _mm256_setzero_si256();
        }
    }
    _mm256_storeu_si256((__m256i *)raw, reduce8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]));
    _mm256_storeu_si256((__m256i *)(raw + 8),
                        reduce8(v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]));
}

#endif
