/*
 * The quantized dot / matrix-vector product on AVX2 (+FMA, F16C): bit for
 * bit the reference of src/dot.c (dot_kernels.h says how; docs/dot.md "Design notes" says why).
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
 */
#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "../bits.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

#ifndef DN_DOT_PREFETCH
#define DN_DOT_PREFETCH 512 /* bytes ahead in each row's stream */
#endif

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
    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x),
                                    _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                       0x0303030303030303));
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
    case DN_TYPE_Q4_1:
        return nib32(blk + 4);
    case DN_TYPE_Q5_0:
    case DN_TYPE_Q5_1: {
        uint32_t qh;
        memcpy(&qh, blk + (t == DN_TYPE_Q5_0 ? 2 : 4), 4);
        __m256i q = nib32(blk + (t == DN_TYPE_Q5_0 ? 6 : 8));
        return _mm256_or_si256(q, _mm256_and_si256(bits32(qh), _mm256_set1_epi8(16)));
    }
    case DN_TYPE_Q8_0:
        return load32(blk + 2);
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
        __m256i q = (c & 1) ? _mm256_and_si256(_mm256_srli_epi16(x, 4), m4) : _mm256_and_si256(x, m4);
        if (t == DN_TYPE_Q4_K) return q;
        __m256i h = _mm256_and_si256(_mm256_srli_epi16(load32(blk + 16), c), one);
        return _mm256_or_si256(q, _mm256_slli_epi16(h, 4));
    }
    case DN_TYPE_Q6_K: {
        int h = c / 4, k = c % 4;
        __m256i ql = load32(blk + 64 * h + 32 * (k & 1));
        __m256i lo = (k >> 1) ? _mm256_and_si256(_mm256_srli_epi16(ql, 4), m4) : _mm256_and_si256(ql, m4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(load32(blk + 128 + 32 * h), 2 * k), m3);
        return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
    }
    case DN_TYPE_IQ4_XS:
        return iq4_levels(nib32(blk + 8 + 16 * c));
    default:
        return _mm256_setzero_si256();
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
    if (dn_signed_digits(t)) return _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(c, q));
    return _mm256_maddubs_epi16(q, c);
}

/* The int16 multiplier of chunk c's pairs for 16-element sub-block formats:
   sc[2c] on the low 128-bit half (elements 0-15), sc[2c+1] on the high. */
AI __m256i sub16_scale(__m256i sc16x2, int c)
{
    /* sc16x2: the eight int16 scales of chunks 0-3 (or 4-7) in both halves */
    int w = 2 * (c % 4); /* int16 index of the low half's scale */
    __m256i ctl = _mm256_setr_epi8(2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w,
                                   2 * w + 1, 2 * w, 2 * w + 1, 2 * w, 2 * w + 1, 2 * w, 2 * w + 1,
                                   2 * w, 2 * w + 1, 2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3,
                                   2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3,
                                   2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3, 2 * w + 2, 2 * w + 3);
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
    __m128i A = _mm_shuffle_epi8(s12, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    __m128i B = _mm_shuffle_epi8(s12, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    __m128i A4 = _mm_and_si128(_mm_srli_epi16(A, 4), _mm_set1_epi8(15));
    A = _mm_blendv_epi8(A, A4, _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1));
    return _mm_or_si128(_mm_and_si128(A, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15)),
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
AI void big_narrow(dn_type t, int nq, const uint8_t *const blk[], const int8_t *c8, const int16_t *bs16n,
                   const int32_t *bs32, int lo, __m256i C[], __m256i O[])
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
                __m256i mul = sub16 ? sub16_scale(half[q][(c + i) / 4], c + i) : _mm256_set1_epi16(1);
                v[i] = _mm256_madd_epi16(pairs8(t, digits(t, blk[q], c + i), c8 + 32 * (c + i), lo), mul);
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
                __m128i m8 = _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)blk[q]), 4),
                                           _mm_set1_epi8(15));
                O[q] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_madd_epi16(_mm256_cvtepi8_epi16(m8), bs));
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
            for (int j = 0; j < 8; j++) ls[j] = (int32_t)(((l >> 4 * j) & 15) | ((h >> 2 * j) & 3) << 4) - 32;
            C[q] = _mm256_mullo_epi32(raw, _mm256_loadu_si256((const __m256i *)ls));
            continue;
        }
        __m128i sm = k_scales_mins(blk[q]);
        C[q] = _mm256_mullo_epi32(raw, _mm256_cvtepu8_epi32(sm));
        __m256i m = _mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8));
        /* bs32 NULL: the mins themselves (the caller has sum_k m_k bs32_k S_k) */
        O[q] = bs32 ? _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_mullo_epi32(m, load32(bs32))) : m;
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
            C[r] = _mm256_add_epi32(C[r], _mm256_madd_epi16(pairs8(t, digits(t, blk[r], c), c8 + 32 * c, 0), Mc));
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
        v[c] = c < G ? _mm256_madd_epi16(pairs8(t, digits(t, blk + c * bb, 0), c8 + 32 * c, lo), ones)
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
    __m256i v1 = _mm256_madd_epi16(pairs8(t, digits(t, blk + (c + 1) * bb, 0), c8 + 32 * c + 32, 0), ones);
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
        if (z) C[q] = _mm256_sub_epi32(C[q], _mm256_mullo_epi32(load32(bs32), _mm256_set1_epi32(z)));
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
AI void raw16_wide(dn_type t, const uint8_t *blk, size_t bb, int G, const int16_t *c16, int32_t raw[16])
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
    _mm256_storeu_si256((__m256i *)(raw + 8), reduce8(v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]));
}

/* ---- four rows at once: rows in the lanes of a double vector ------------------ */

/* Columns of four rows' chunk vectors: x[r] = [x_r0 .. x_r7] (int32) gives
   c[k] = [x_0k, x_1k, x_2k, x_3k] as doubles (exact). */
AI void columns_i(const __m256i x[4], __m256d c[8])
{
    __m256i t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpackhi_epi32(x[0], x[1]);
    __m256i t2 = _mm256_unpacklo_epi32(x[2], x[3]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2); /* k 0|4, 1|5 */
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3); /* k 2|6, 3|7 */
    c[0] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u0));
    c[1] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u1));
    c[2] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u2));
    c[3] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(u3));
    c[4] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u0, 1));
    c[5] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u1, 1));
    c[6] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u2, 1));
    c[7] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(u3, 1));
}

/* The same for four rows' float vectors (the blocks' scales). */
AI void columns_f(const __m256 x[4], __m256d c[8])
{
    __m256 t0 = _mm256_unpacklo_ps(x[0], x[1]), t1 = _mm256_unpackhi_ps(x[0], x[1]);
    __m256 t2 = _mm256_unpacklo_ps(x[2], x[3]), t3 = _mm256_unpackhi_ps(x[2], x[3]);
    __m256 u0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    __m256 u1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    __m256 u2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    __m256 u3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    c[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(u0));
    c[1] = _mm256_cvtps_pd(_mm256_castps256_ps128(u1));
    c[2] = _mm256_cvtps_pd(_mm256_castps256_ps128(u2));
    c[3] = _mm256_cvtps_pd(_mm256_castps256_ps128(u3));
    c[4] = _mm256_cvtps_pd(_mm256_extractf128_ps(u0, 1));
    c[5] = _mm256_cvtps_pd(_mm256_extractf128_ps(u1, 1));
    c[6] = _mm256_cvtps_pd(_mm256_extractf128_ps(u2, 1));
    c[7] = _mm256_cvtps_pd(_mm256_extractf128_ps(u3, 1));
}

/* [sum of x[0]'s lanes, ..., sum of x[3]'s] as doubles (|sums| < 2^31). */
AI __m256d row_sums(const __m256i x[4])
{
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(x[0], x[1]), _mm256_hadd_epi32(x[2], x[3]));
    return _mm256_cvtepi32_pd(_mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
}

/* [sum of x[0]'s lanes, ..., sum of x[3]'s] as doubles, for lanes whose
   total may pass 2^31 (each lane is an int32; the totals are exact). */
AI __m256d rows_total_pd(const __m256i x[4])
{
    __m256d v[4];
    for (int r = 0; r < 4; r++)
        v[r] = _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x[r])),
                             _mm256_cvtepi32_pd(_mm256_extracti128_si256(x[r], 1)));
    __m256d h01 = _mm256_hadd_pd(v[0], v[1]), h23 = _mm256_hadd_pd(v[2], v[3]);
    return _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20), _mm256_permute2f128_pd(h01, h23, 0x31));
}

/* Lanes where a + b is not a double (TwoSum's error is not zero). */
AI int inexact_lanes(__m256d a, __m256d b, __m256d s)
{
    __m256d bb = _mm256_sub_pd(s, a);
    __m256d err = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
    return _mm256_movemask_pd(_mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_NEQ_UQ));
}

/* a + b rounded once to f32 in each lane (pieces of two exact products). */
AI __m128 round_sum(__m256d a, __m256d b)
{
    __m256d s = _mm256_add_pd(a, b);
    if (inexact_lanes(a, b, s)) { /* rare: an offset term far below the coef term's last place */
        double a4[4], b4[4];
        _mm256_storeu_pd(a4, a);
        _mm256_storeu_pd(b4, b);
        for (int k = 0; k < 4; k++) a4[k] = dn_dot_sum_odd(a4[k], b4[k]);
        s = _mm256_loadu_pd(a4);
    }
    return _mm256_cvtpd_ps(_mm256_add_pd(s, _mm256_setzero_pd())); /* + 0: an exact 0 is +0 */
}

/* 4 binary16 values (one per row) at the rows' blocks + at, as doubles; the
   mask of unreadable ones in *bad. */
AI __m256d scales4(const uint8_t *const blk[4], int at, int *bad)
{
    __m128i h = _mm_setr_epi16((short)dn_load_u16(blk[0] + at), (short)dn_load_u16(blk[1] + at),
                               (short)dn_load_u16(blk[2] + at), (short)dn_load_u16(blk[3] + at), 0, 0, 0, 0);
    const __m128i e = _mm_set1_epi16(0x7C00);
    *bad |= _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, e), e)) & 0xFF;
    return _mm256_cvtps_pd(_mm_cvtph_ps(h));
}

/* [sum_k x[r]_k S_k for r = 0..3]: each row's eight int32 chunk values
   times the group's eight activation scales, summed (exact where gok says
   so: any order). */
AI __m256d rows_dot_S(const __m256i x[4], __m256d S0, __m256d S1)
{
    __m256d v[4];
    for (int r = 0; r < 4; r++)
        v[r] = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(x[r], 1)), S1,
                               _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x[r])), S0));
    __m256d h01 = _mm256_hadd_pd(v[0], v[1]), h23 = _mm256_hadd_pd(v[2], v[3]);
    return _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20), _mm256_permute2f128_pd(h01, h23, 0x31));
}

/* The same for two adjacent binary16 values per row (d at `at`, dm after
   it): one 32-bit load per row. */
AI void scales4x2(const uint8_t *const blk[4], int at, __m256d *d, __m256d *dm, int *bad)
{
    uint32_t u[4];
    for (int r = 0; r < 4; r++) memcpy(&u[r], blk[r] + at, 4);
    __m128i h = _mm_setr_epi32((int)u[0], (int)u[1], (int)u[2], (int)u[3]);
    const __m128i e = _mm_set1_epi16(0x7C00);
    *bad |= _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, e), e));
    __m256 f = _mm256_cvtph_ps(h); /* d0 dm0 d1 dm1 ... */
    __m256 g = _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    *d = _mm256_cvtps_pd(_mm256_castps256_ps128(g));
    *dm = _mm256_cvtps_pd(_mm256_extractf128_ps(g, 1));
}

/* The four pieces of a Sub32 group of a 256-element format from A = sum_k
   C_k S_k and B = sum_k O_k S_k per row (exact: dn_dot_act_init's gok):
   d A + dm B rounded once where |A|, |B| < glim; *need gets the lanes that
   must go to the reference. */
AI __m128 big_sub32_AB(__m256d A, __m256d B, int has_o, double glim, __m256d d, __m256d dm, int *need)
{
    const __m256d lim = _mm256_set1_pd(glim);
    __m256d ok = _mm256_cmp_pd(abs_pd(A), lim, _CMP_LT_OQ);
    __m256d pa = _mm256_mul_pd(d, A);
    if (!has_o) {
        *need = ~_mm256_movemask_pd(ok) & 15;
        return _mm256_cvtpd_ps(_mm256_add_pd(pa, _mm256_setzero_pd()));
    }
    ok = _mm256_and_pd(ok, _mm256_cmp_pd(abs_pd(B), lim, _CMP_LT_OQ));
    *need = ~_mm256_movemask_pd(ok) & 15;
    return round_sum(pa, _mm256_mul_pd(dm, B));
}

AI __m128 big_sub32_4(const __m256i C[4], const __m256i O[4], int has_o, const double *S,
                      double glim, __m256d d, __m256d dm, int *need)
{
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    __m256d A = rows_dot_S(C, S0, S1), B = has_o ? rows_dot_S(O, S0, S1) : _mm256_setzero_pd();
    return big_sub32_AB(A, B, has_o, glim, d, dm, need);
}

/* The same with the chunk sums in two byte planes: C = 256 C_hi + C_lo.
   256 A_hi + A_lo = A is exact: each part is a sum of exact terms within
   dn_dot_act_init's bound (a plane's codes are below 256 in magnitude), and
   so is their sum. */
AI __m128 big_sub32_planes(const __m256i Ch[4], const __m256i Oh[4], const __m256i Cl[4],
                           const __m256i Ol[4], int has_o, const double *S, double glim, __m256d d,
                           __m256d dm, int *need)
{
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    const __m256d k256 = _mm256_set1_pd(256.0);
    __m256d A = _mm256_fmadd_pd(rows_dot_S(Ch, S0, S1), k256, rows_dot_S(Cl, S0, S1));
    __m256d B = has_o ? _mm256_fmadd_pd(rows_dot_S(Oh, S0, S1), k256, rows_dot_S(Ol, S0, S1))
                      : _mm256_setzero_pd();
    return big_sub32_AB(A, B, has_o, glim, d, dm, need);
}

/* The four per-block pieces of a 256-element block: C (d S) + O (dm S) with
   C, O the rows' whole-block sums (|C| < 2^27: exact products). */
AI __m128 big_block_4(const __m256i C[4], const __m256i O[4], int has_o, double S, __m256d d,
                      __m256d dm)
{
    const __m256d s = _mm256_set1_pd(S);
    __m256d pa = _mm256_mul_pd(row_sums(C), _mm256_mul_pd(d, s));
    if (!has_o) return _mm256_cvtpd_ps(_mm256_add_pd(pa, _mm256_setzero_pd()));
    return round_sum(pa, _mm256_mul_pd(row_sums(O), _mm256_mul_pd(dm, s)));
}

/* Per-block pieces with the sums in two byte planes: C = 256 C_hi + C_lo
   (exact in double, |C| < 2^39); the product with d S is exact while
   |C| < 2^34, lanes beyond go to the reference (*need). */
AI __m128 big_block_planes(const __m256i Ch[4], const __m256i Oh[4], const __m256i Cl[4],
                           const __m256i Ol[4], int has_o, double S, __m256d d, __m256d dm, int *need)
{
    const __m256d s = _mm256_set1_pd(S), k256 = _mm256_set1_pd(256.0);
    __m256d C = _mm256_fmadd_pd(row_sums(Ch), k256, row_sums(Cl));
    *need = _mm256_movemask_pd(_mm256_cmp_pd(abs_pd(C), _mm256_set1_pd(0x1p34), _CMP_GE_OQ));
    __m256d pa = _mm256_mul_pd(C, _mm256_mul_pd(d, s));
    if (!has_o) return _mm256_cvtpd_ps(_mm256_add_pd(pa, _mm256_setzero_pd()));
    __m256d O = _mm256_fmadd_pd(row_sums(Oh), k256, row_sums(Ol));
    return round_sum(pa, _mm256_mul_pd(O, _mm256_mul_pd(dm, s)));
}

/* The four pieces of a Sub32 group of G 32-element blocks: sum_k C_k d_k S_k
   (+ O_k m_k S_k) per row, exact where sum |terms| < ymin gfac
   (dn_piece_small_sub32's argument; ymin here is the least |d_k| S_k over
   non-zero ones, +inf-scaled past the row and for zero activation blocks). */
AI __m128 small_sub32_4(const __m256i C[4], const __m256 d[4], const __m256 m[4], const int32_t *bs32,
                        int has_o, const double *S, const double *Sinf, double gfac, int *need)
{
    __m256d c[8], dc[8];
    columns_i(C, c);
    columns_f(d, dc);
    const __m256d sign = _mm256_set1_pd(-0.0);
    __m256d s = _mm256_setzero_pd(), ab = _mm256_setzero_pd(), ym = _mm256_set1_pd(INFINITY);
    for (int k = 0; k < 8; k++) {
        __m256d D = _mm256_mul_pd(dc[k], _mm256_broadcast_sd(S + k));
        __m256d t = _mm256_mul_pd(c[k], D);
        s = _mm256_add_pd(s, t);
        ab = _mm256_add_pd(ab, _mm256_andnot_pd(sign, t));
        /* |d| * Sinf: +inf or NaN (d = 0) where S is 0, and min passes NaN over */
        ym = _mm256_min_pd(_mm256_mul_pd(_mm256_andnot_pd(sign, dc[k]), _mm256_broadcast_sd(Sinf + k)), ym);
    }
    if (has_o) {
        columns_f(m, dc);
        for (int k = 0; k < 8; k++) {
            __m256d E = _mm256_mul_pd(dc[k], _mm256_broadcast_sd(S + k));
            __m256d u = _mm256_mul_pd(_mm256_set1_pd((double)bs32[k]), E);
            s = _mm256_add_pd(s, u);
            ab = _mm256_add_pd(ab, _mm256_andnot_pd(sign, u));
            ym = _mm256_min_pd(_mm256_mul_pd(_mm256_andnot_pd(sign, dc[k]), _mm256_broadcast_sd(Sinf + k)), ym);
        }
    }
    __m256d ok = _mm256_cmp_pd(ab, _mm256_mul_pd(ym, _mm256_set1_pd(gfac)), _CMP_LT_OQ);
    *need = ~_mm256_movemask_pd(ok) & 15;
    return _mm256_cvtpd_ps(_mm256_add_pd(s, _mm256_setzero_pd()));
}

/* One row's eight per-block pieces of G 32-element blocks (lanes past G are
   0): C_k d_k S_k + O_k m_k S_k, each rounded once. */
AI __m256 small_block_8(__m256i C, __m256 d, __m256 m, const int32_t *bs32, int has_o, const double *S)
{
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    __m256d pa0 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(C)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(d)), S0));
    __m256d pa1 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(C, 1)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(d, 1)), S1));
    if (!has_o)
        return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_add_pd(pa1, _mm256_setzero_pd())),
                               _mm256_cvtpd_ps(_mm256_add_pd(pa0, _mm256_setzero_pd())));
    __m256i Oi = load32(bs32);
    __m256d pb0 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(Oi)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(m)), S0));
    __m256d pb1 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(Oi, 1)),
                                _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(m, 1)), S1));
    return _mm256_set_m128(round_sum(pa1, pb1), round_sum(pa0, pb0));
}

/* Lanes (as an int mask per 32-bit lane) holding a tiny piece: non-zero and
   below 2^-100 in magnitude (dn_piece_tiny). */
AI __m256i tiny8(__m256 p)
{
    __m256i u = _mm256_and_si256(_mm256_castps_si256(p), _mm256_set1_epi32(0x7FFFFFFF));
    return _mm256_andnot_si256(_mm256_cmpeq_epi32(u, _mm256_setzero_si256()),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32(0x0D800000), u));
}

/* ---- the matrix-vector product --------------------------------------------------- */

/* The scales of the G blocks from blk as floats (lanes past G zero); 1 when
   one of them is unreadable. */
AI int small_scales(dn_type t, const uint8_t *blk, size_t bb, int G, __m256 *d, __m256 *m)
{
    __m256i x;
    if (G == 8) {
        __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)bb));
        x = _mm256_i32gather_epi32((const int *)blk, idx, 1);
    } else {
        uint32_t s[8] = {0};
        for (int k = 0; k < G; k++) memcpy(&s[k], blk + k * bb, 4);
        x = _mm256_loadu_si256((const __m256i *)s);
    }
    if (dn_m_at(t) < 0) x = _mm256_and_si256(x, _mm256_set1_epi32(0xFFFF));
    const __m256i e = _mm256_set1_epi32(0x7C00), e2 = _mm256_set1_epi32(0x7C000000);
    __m256i badlo = _mm256_cmpeq_epi32(_mm256_and_si256(x, e), e);
    __m256i badhi = _mm256_cmpeq_epi32(_mm256_and_si256(x, e2), e2);
    int bad = !_mm256_testz_si256(badlo, badlo) || (dn_m_at(t) >= 0 && !_mm256_testz_si256(badhi, badhi));
    /* pack: [d0..3 m0..3 | d4..7 m4..7] -> [d0..7 | m0..7] */
    __m256i dm = _mm256_packus_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0xFFFF)), _mm256_srli_epi32(x, 16));
    dm = _mm256_permute4x64_epi64(dm, 0xD8);
    *d = _mm256_cvtph_ps(_mm256_castsi256_si128(dm));
    *m = _mm256_cvtph_ps(_mm256_extracti128_si256(dm, 1));
    return bad;
}

/* Four row streams: each a few hundred bytes ahead into L1, and the same
   place four rows on (the next batch, whose row starts no stream would
   otherwise have fetched) into L2: a constant count of lines per group, a
   prefetch never faults. */
AI void prefetch_group(const dn_mv_ctx *c, dn_type t, const uint8_t *const blk[4])
{
    for (int r = 0; r < 4; r++)
        for (size_t o = 0; o < (dn_big(t) ? dn_bb(t) : 8 * dn_bb(t)) + 63; o += 64) {
            _mm_prefetch((const char *)blk[r] + DN_DOT_PREFETCH + o, _MM_HINT_T0);
            _mm_prefetch((const char *)blk[r] + 4 * c->row_bytes + o, _MM_HINT_T1);
        }
}

/* Q4_K, Q5_K under Sub32 with the group's factors small integers (fok):
   the four rows' pieces from big_k_factored. */
AI __m128 big_group_factored(const dn_dot_act *a, dn_type t, const uint8_t *const blk[4],
                             size_t g, __m256d d, __m256d dm, int *need)
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
        big_narrow(t, narrow_rows(t), blk + r, a->c8 + g, a->bs16n + g / 16, mins ? NULL : a->bs32 + g / 32, 0,
                   C + r, O + r);
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
        big_narrow(t, narrow_rows(t), blk + r, a->hi8 + g, a->bs16hi + g / 16, mins ? NULL : a->bs32hi + g / 32, 0,
                   C + r, O + r);
        big_narrow(t, narrow_rows(t), blk + r, (const int8_t *)a->lo8 + g, a->bs16lo + g / 16,
                   mins ? NULL : a->bs32lo + g / 32, 1, Cl + r, Ol + r);
    }
    if (mins) {
        __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
        __m256d P0 = _mm256_loadu_pd(a->P + g / 32), P1 = _mm256_loadu_pd(a->P + g / 32 + 4);
        __m256d A = _mm256_fmadd_pd(rows_dot_S(C, S0, S1), _mm256_set1_pd(256.0), rows_dot_S(Cl, S0, S1));
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
    if (dn_m_at(t) == dn_d_at(t) + 2) scales4x2(blk, dn_d_at(t), &d, &dm, &bad);
    else d = scales4(blk, dn_d_at(t), &bad);
    if (bad) return -1;
    if (sub32 && !a->gok[gi]) {
        *p = _mm_setzero_ps();
        *need = 15;
        return 0;
    }
    /* Q4_K, Q5_K under Sub32: B = -sum_k m_k (bs32_k S_k), from the mins and
       the activation's products P (the same exact terms) */
    const int mins = sub32 && (t == DN_TYPE_Q4_K || t == DN_TYPE_Q5_K);
    if (!planes && mins && a->fok[gi]) *p = big_group_factored(a, t, blk, g, d, dm, need);
    else if (!planes) *p = big_group_narrow(a, t, sub32, blk, g, S, mins, d, dm, need);
    else *p = big_group_planes(a, t, sub32, blk, g, S, mins, d, dm, need);
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
            __m256i l = small_narrow(t, blk[r], bb, G, (const int8_t *)a->lo8 + g, a->bs32lo + g / 32, 1);
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
    __m128 col[8] = {_mm256_castps256_ps128(u0), _mm256_castps256_ps128(u1),
                     _mm256_castps256_ps128(u2), _mm256_castps256_ps128(u3),
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
        *p = small_sub32_4(C, d, m, a->bs32 + g / 32, dn_has_offs(t), a->S + g / 32, a->Sinf + g / 32,
                           a->gfac[gi], need);
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
   mask of rows that met a tiny piece (their chain must be redone). */
AI int batch_narrow(const dn_mv_ctx *c, dn_type t, const uint8_t *const row[4], float v[4], int planes)
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
        for (int r = 0; r < 4; r++) blk[r] = row[r] + (big ? gi * bb : (g / 32) * bb);
        prefetch_group(c, t, blk);
        __m128 p;
        int need = 0;
        if (big) {
            if (big_group(a, t, sub32, blk, g, a->S + (sub32 ? g / 32 : gi), planes, &p, &need) < 0)
                return -1;
        } else {
            int done = small_group(a, codes, t, sub32, bb, blk, g, G, planes, &acc, &tiny, &p, &need);
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
            tiny = c->a->narrow ? batch_narrow(c, t, rp, v, 0)
                   : dn_big(t)  ? batch_narrow(c, t, rp, v, 1)
                                : batch_narrow(c, t, rp, v, 2);
        } else {
            count = 1;
            tiny = row_wide(c, t, c->w + r * c->row_bytes, v);
        }
        if (tiny < 0) /* an unreadable block: the reference finds and reports it */
            return dn_ref_mat_vec_rows(t, c->w, c->rows, c->n, c->act, c->scaling, r, r1, out, bad);
        for (size_t k = 0; k < count; k++) {
            if (tiny >> k & 1) { /* the chain must flush: the reference redoes the row */
                dn_status st = dn_ref_mat_vec_rows(t, c->w, c->rows, c->n, c->act, c->scaling, r + k,
                                                   r + k + 1, out, bad);
                if (st != DN_OK) return st;
            } else {
                out[r + k] = dn_chain_result(v[k]);
            }
        }
        r += count;
    }
    return DN_OK;
}

/* The row loop instantiated once per format with the format a constant.
   Each is its own function: merged into the switch below as one function,
   GCC allocated the loops' registers together and Q8_0's product took 2 %
   more instructions (callgrind, 1024 x 4096, Sub32, one word). */
#define NOINLINE __attribute__((noinline))

static NOINLINE dn_status mv_q4_0(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q4_0, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q4_1(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q4_1, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q5_0(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q5_0, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q5_1(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q5_1, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q8_0(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q8_0, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q2_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q2_K, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q3_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q3_K, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q4_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q4_K, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q5_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q5_K, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q6_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q6_K, r0, r1, out, bad);
}
static NOINLINE dn_status mv_iq4_nl(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_IQ4_NL, r0, r1, out, bad);
}
static NOINLINE dn_status mv_iq4_xs(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_IQ4_XS, r0, r1, out, bad);
}

/* The table's entries: the format's row loop, the reference where the
   activation side is not usable; mat_vec_rows prepares that side for its
   call alone. */
static dn_status mat_vec_rows_act_avx2(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                      const dn_act_row *act, dn_act_scaling scaling,
                                      const dn_dot_act *a, size_t r0, size_t r1, float *out,
                                      size_t *bad)
{
    if (!a->usable) return dn_ref_mat_vec_rows(type, w, rows, n, act, scaling, r0, r1, out, bad);
    const dn_mv_ctx c = dn_mv_ctx_of(type, w, rows, n, act, scaling, a);
    switch (type) {
    case DN_TYPE_Q4_0: return mv_q4_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q4_1: return mv_q4_1(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_0: return mv_q5_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_1: return mv_q5_1(&c, r0, r1, out, bad);
    case DN_TYPE_Q8_0: return mv_q8_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q2_K: return mv_q2_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q3_K: return mv_q3_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q4_K: return mv_q4_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_K: return mv_q5_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q6_K: return mv_q6_k(&c, r0, r1, out, bad);
    case DN_TYPE_IQ4_NL: return mv_iq4_nl(&c, r0, r1, out, bad);
    case DN_TYPE_IQ4_XS: return mv_iq4_xs(&c, r0, r1, out, bad);
    default: return dn_ref_mat_vec_rows(type, w, rows, n, act, scaling, r0, r1, out, bad);
    }
}

static dn_status mat_vec_rows_avx2(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                  const dn_act_row *act, dn_act_scaling scaling, size_t r0,
                                  size_t r1, float *out, size_t *bad)
{
    return dn_dot_rows_own_act(mat_vec_rows_act_avx2, type, w, rows, n, act, scaling, r0, r1,
                               out, bad);
}

const dn_dot_kernels dn_dot_avx2 = {
    .mat_vec_rows = mat_vec_rows_avx2,
    .mat_vec_rows_act = mat_vec_rows_act_avx2,
};
