/* SPDX-License-Identifier: MIT */
/*
 * dot_avx512_decode.h: the AVX-512 (+VNNI) dot kernels' integer half,
 * included by src/x86/dot_avx512.c and dot_mm_avx512.c: the exact chunk
 * sums of four rows' Q8_0 groups, Q4_K / Q5_K groups (factored) and Q6_K
 * blocks with 64 elements per instruction, and Q8_0's Sub32 pieces of four
 * rows (small_sub32_z). Every sum is the integer the AVX2 kernels
 * compute (dot_avx2_decode.h), the bound at each use; only the instructions
 * differ: vpdpbusd (u8 x s8, four products into an int32 lane) and
 * vpdpwssd (s16 x s16, two products into an int32 lane) in place of
 * maddubs + madd + add, and a 512-bit reduction tree in place of the hadds.
 *
 * Every function carries VNNI (target avx512vnni): the file is compiled
 * with the AVX-512 F/BW/VL/DQ flags of DN_AVX512_FLAGS, and the dispatcher
 * registers this table only on a CPU that also has AVX512-VNNI
 * (src/dispatch.c).
 */
#ifndef DN_DOT_AVX512_DECODE_H
#define DN_DOT_AVX512_DECODE_H

#include "dot_avx2_decode.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define VNNI __attribute__((target("avx512vnni")))
#define AIV static inline __attribute__((always_inline, target("avx512vnni")))

/* acc + vpdpbusd(q, the four signed bytes at p in every dword): the
   broadcast folded into the instruction as its {1to16} memory operand.
   GCC 12 does not fold _mm512_set1_epi32 of a load into vpdpbusd (Clang
   does) and issues a vpbroadcastd before each one, which on this Zen 5
   class core competes with vpdpbusd for the vector pipes: eight chains of
   vpdpbusd fed that way ran 3.4-3.8 a nanosecond, with the broadcast
   folded 5.6-6.1 (a development microbenchmark, one thread). The same
   instruction either way, so the same integers. */
AIV __m512i dpbusd_bcst(__m512i acc, __m512i q, const int8_t *p)
{
#if defined(__GNUC__) && !defined(__clang__)
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(q), "m"(*(const int8_t(*)[4])p));
    return acc;
#else
    int32_t four;
    memcpy(&four, p, 4);
    return _mm512_dpbusd_epi32(acc, q, _mm512_set1_epi32(four));
#endif
}

/* Two 32-byte pieces as one vector: a in the low half, b in the high. */
AIV __m512i load2x32(const void *a, const void *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(load32(a)), load32(b), 1);
}

/* [C_0..C_7] from four vectors of int32 partial sums, V[j] holding chunk
   lo(j) in its low 256 bits and chunk hi(j) in its high: (lo, hi) = (j, j +
   4) when `split`, else (2j, 2j + 1). Exact: every lane sum is below the
   caller's bound. Per 128-bit lane L, the unpack steps leave [V0_L, V1_L,
   V2_L, V3_L] (each the sum of that lane's four int32), then the two lanes
   of each chunk are added. */
AIV __m256i reduce4x16(const __m512i V[4], int split)
{
    __m512i e01 =
        _mm512_add_epi32(_mm512_unpacklo_epi32(V[0], V[1]), _mm512_unpackhi_epi32(V[0], V[1]));
    __m512i e23 =
        _mm512_add_epi32(_mm512_unpacklo_epi32(V[2], V[3]), _mm512_unpackhi_epi32(V[2], V[3]));
    __m512i f = _mm512_add_epi32(_mm512_unpacklo_epi64(e01, e23), _mm512_unpackhi_epi64(e01, e23));
    f = _mm512_shuffle_i64x2(f, f, _MM_SHUFFLE(3, 1, 2, 0)); /* L0 L2 L1 L3 */
    __m256i s = _mm256_add_epi32(_mm512_castsi512_si256(f), _mm512_extracti64x4_epi64(f, 1));
    if (split) return s; /* [c0 c1 c2 c3 | c4 c5 c6 c7] */
    /* [c0 c2 c4 c6 | c1 c3 c5 c7] */
    return _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Q8_0, four rows' groups of eight blocks, narrow codes: C[r] =
   [C_0..C_7]. Signed digits q against signed codes c through vpdpbusd's
   unsigned operand: q + 128 (q ^ 0x80, 0..255) times c gives
   sum q c + 128 sum c, and sum c over a block is bs32. Each int32 lane
   takes four products, |.| <= 4 * 255 * 127; a chunk's raw sum is below
   32 * 255 * 127 < 2^20, and C_k = raw - 128 bs32_k (|C_k| <= 32 * 128 *
   127). Chunk pairs (k, k + 4): each pair's codes loaded once for the four
   rows. */
AIV void q8_0_chunks4(const uint8_t *const blk[4], size_t bb, const int8_t *c8, const int32_t *bs32,
                      __m256i C[4])
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512i V[4][4];
    for (int k = 0; k < 4; k++) {
        const __m512i c = load2x32(c8 + 32 * k, c8 + 32 * (k + 4));
        for (int r = 0; r < 4; r++) {
            __m512i q = load2x32(blk[r] + k * bb + 2, blk[r] + (k + 4) * bb + 2);
            V[r][k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(q, flip), c);
        }
    }
    const __m256i z = _mm256_slli_epi32(load32(bs32), 7);
    for (int r = 0; r < 4; r++) C[r] = _mm256_sub_epi32(reduce4x16(V[r], 1), z);
}

/* Q8_0: the binary16 scales of two rows' groups of eight blocks (at 34 k
   from a and from b), as [a's eight | b's eight] floats; 1 in *bad when one
   is an infinity or a NaN. Each group's first 256 bytes (of its 272) in
   four vectors, the scales picked out by word permutes: a gather of the
   eight 34-byte-strided words cost about 5 ns of an 11 ns row-group
   (Q8_0, 32 rows of 16384 in cache, this host). */
AIV __m512 q8_0_scales2(const uint8_t *a, const uint8_t *b, int *bad)
{
    /* words 0, 17, 34, 51 of the first 128 bytes, 4, 21, 38, 55 of the next */
    const int w0 = 0 | 17 << 16, w1 = 34 | 51 << 16, w2 = 4 | 21 << 16, w3 = 38 | 55 << 16;
    const __m512i lo = _mm512_setr_epi32(w0, w1, 0, 0, w0, w1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i hi = _mm512_setr_epi32(0, 0, w2, w3, 0, 0, w2, w3, 0, 0, 0, 0, 0, 0, 0, 0);
    const uint8_t *p[2] = {a, b};
    __m512i w = _mm512_setzero_si512();
    for (int r = 0; r < 2; r++) {
        const __m512i x0 = _mm512_loadu_si512(p[r]), x1 = _mm512_loadu_si512(p[r] + 64);
        const __m512i x2 = _mm512_loadu_si512(p[r] + 128), x3 = _mm512_loadu_si512(p[r] + 192);
        const __mmask32 at = r ? 0xF00 : 0xF;
        w = _mm512_mask_mov_epi16(w, at, _mm512_permutex2var_epi16(x0, lo, x1));
        w = _mm512_mask_mov_epi16(w, at << 4, _mm512_permutex2var_epi16(x2, hi, x3));
    }
    const __m256i h = _mm512_castsi512_si256(w), e = _mm256_set1_epi16(0x7C00);
    *bad |= _mm256_cmpeq_epi16_mask(_mm256_and_si256(h, e), e) != 0;
    return _mm512_cvtph_ps(h);
}

/* Q4_K, Q5_K: the digits of chunks 2j (low half) and 2j + 1 (high half) of
   the block at blk: nibbles of the same 32 bytes, and for Q5_K bit 2j or
   2j + 1 of the 32 high-bit bytes at 16 as 16. */
AIV __m512i k_digits_pair(dn_type t, const uint8_t *blk, int j)
{
    const __m512i x = _mm512_broadcast_i64x4(load32(blk + (t == DN_TYPE_Q4_K ? 16 : 48) + 32 * j));
    const __m512i sh = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
    __m512i q = _mm512_and_si512(_mm512_srlv_epi16(x, sh), _mm512_set1_epi8(15));
    if (t == DN_TYPE_Q4_K) return q;
    const __m512i h = _mm512_broadcast_i64x4(load32(blk + 16));
    const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << 2 * j)),
                                           _mm256_set1_epi8((char)(1 << (2 * j + 1))), 1);
    /* q's bit 4 is clear: + 16 sets it */
    return _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(h, bit), q, _mm512_set1_epi8(16));
}

/* k_scales_mins (dot_avx2_decode.h) of four rows' blocks at once, row r in
   128-bit lane r: [sc_0..sc_7 | m_0..m_7] (bytes). */
AIV __m512i k_scales_mins4(const uint8_t *const blk[4])
{
    __m512i s12 = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(blk[0] + 4)));
    s12 = _mm512_inserti32x4(s12, _mm_loadu_si128((const __m128i *)(blk[1] + 4)), 1);
    s12 = _mm512_inserti32x4(s12, _mm_loadu_si128((const __m128i *)(blk[2] + 4)), 2);
    s12 = _mm512_inserti32x4(s12, _mm_loadu_si128((const __m128i *)(blk[3] + 4)), 3);
    __m512i A = _mm512_shuffle_epi8(s12, _mm512_broadcast_i32x4(_mm_setr_epi8(
                                             0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11)));
    __m512i B =
        _mm512_shuffle_epi8(s12, _mm512_broadcast_i32x4(_mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3,
                                                                      -1, -1, -1, -1, 4, 5, 6, 7)));
    __m512i A4 = _mm512_and_si512(_mm512_srli_epi16(A, 4), _mm512_set1_epi8(15));
    A = _mm512_mask_blend_epi8((__mmask64)0xF000F000F000F000ull, A, A4);
    const __m512i keep = _mm512_broadcast_i32x4(
        _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15));
    return _mm512_or_si512(_mm512_and_si512(A, keep),
                           _mm512_and_si512(_mm512_srli_epi16(B, 2), _mm512_set1_epi8(0x30)));
}

/* big_k_factored (dot_avx2_decode.h) 64 elements at a time, four rows'
   scales decoded together. For each j, vpdpbusd gives the digits of chunks
   2j (low half) and 2j + 1 (high half) times the codes, four products per
   int32 lane: |.| <= 4 * 31 * 127 < 2^15 (Q5_K's digits reach 31, Q4_K's
   15), so vpackssdw narrows two j's lanes to int16 exactly (no saturation),
   and vpdpwssd weights them by M_k = sc_k f_k < 2^15 (two words of one
   chunk per int32 lane). Per 128-bit lane L of pack(D_0, D_1): words 0-3
   from D_0 and 4-7 from D_1, i.e. chunks (0, 2) in lanes 0-1 and (1, 3) in
   lanes 2-3; likewise chunks (4, 6) and (5, 7) for pack(D_2, D_3): the
   weights W01, W23 are M in that order, picked by one word permute each.
   An int32 lane of acc takes two such pairs: |.| <= 2 * 2 * (4 * 31 * 127)
   * 15120 < 2^30 (Q5_K: M <= 63 * 240) and <= 4 * (4 * 15 * 127) * 30240 <
   2^30 (Q4_K: M <= 63 * 480); the two 256-bit halves added stay below 2^31.
   C[r]'s lanes add up to A / 2^emin, big_k_factored's terms. *mb: in
   128-bit lane r four int32 adding up to -B / 2^emin = sum_k (m_k f_k)
   bs32_k (vpdpwssd: m_k f_k <= 63 * 480 < 2^15, |bs32_k| <= 32 * 127 <
   2^15, eight terms below 8 * 63 * 2^21 < 2^31): big_k_factored's terms. */
AIV void k_factored4(dn_type t, const uint8_t *const blk[4], const int8_t *c8, const int16_t *f16,
                     const int32_t *bs32, __m256i C[4], __m512i *mb)
{
    const __m512i sm = k_scales_mins4(blk), z = _mm512_setzero_si512();
    const __m512i f = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)f16));
    const __m512i M = _mm512_mullo_epi16(_mm512_unpacklo_epi8(sm, z), f);
    const __m512i bs = _mm512_broadcast_i32x4(
        _mm_packs_epi32(_mm_loadu_si128((const __m128i *)bs32),
                        _mm_loadu_si128((const __m128i *)(bs32 + 4)))); /* exact: < 2^15 */
    *mb = _mm512_dpwssd_epi32(z, _mm512_mullo_epi16(_mm512_unpackhi_epi8(sm, z), f), bs);
    /* word 8r + k of M is row r's M_k */
    const __m512i i01 = _mm512_set_epi16(3, 3, 3, 3, 1, 1, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, /* */
                                         2, 2, 2, 2, 0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0);
    const __m512i i23 = _mm512_add_epi16(i01, _mm512_set1_epi16(4));
    const __m512i c[4] = {_mm512_loadu_si512(c8), _mm512_loadu_si512(c8 + 64),
                          _mm512_loadu_si512(c8 + 128), _mm512_loadu_si512(c8 + 192)};
    for (int r = 0; r < 4; r++) {
        const __m512i o = _mm512_set1_epi16((short)(8 * r));
        const __m512i W01 = _mm512_permutexvar_epi16(_mm512_add_epi16(i01, o), M);
        const __m512i W23 = _mm512_permutexvar_epi16(_mm512_add_epi16(i23, o), M);
        __m512i D[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)
            D[j] = _mm512_dpbusd_epi32(z, k_digits_pair(t, blk[r], j), c[j]);
        __m512i acc = _mm512_dpwssd_epi32(z, _mm512_packs_epi32(D[0], D[1]), W01);
        acc = _mm512_dpwssd_epi32(acc, _mm512_packs_epi32(D[2], D[3]), W23);
        C[r] = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
    }
}

/* [C_0..C_7] from A0 and A2 (int32), where 128-bit lane L of A0 holds parts
   of chunk L/2 in int32 lanes 0-1 and of chunk 2 + L/2 in lanes 2-3, and A2
   the same of chunks 4 + L/2 and 6 + L/2 (vpdpwssd over pack(D_0, D_1) and
   pack(D_2, D_3), D_j holding chunk 2j in its low half and 2j + 1 in its
   high half). Exact: every sum is below the caller's bound. */
AIV __m256i chunks_of_packed(__m512i A0, __m512i A2)
{
    /* per 128-bit lane L: [chunk L/2, L/2 + 2, L/2 + 4, L/2 + 6] (a part of each) */
    const __m512 f0 = _mm512_castsi512_ps(A0), f2 = _mm512_castsi512_ps(A2);
    const __m512i T =
        _mm512_add_epi32(_mm512_castps_si512(_mm512_shuffle_ps(f0, f2, _MM_SHUFFLE(2, 0, 2, 0))),
                         _mm512_castps_si512(_mm512_shuffle_ps(f0, f2, _MM_SHUFFLE(3, 1, 3, 1))));
    const __m512i y = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 0, 0, 0, 0, 0, 0, 0, 0), T);
    const __m512i w = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(4, 12, 5, 13, 6, 14, 7, 15, 0, 0, 0, 0, 0, 0, 0, 0), T);
    return _mm256_add_epi32(_mm512_castsi512_si256(y), _mm512_castsi512_si256(w));
}

/* Q4_K, Q5_K, one row's block where the group's scales do not factor:
   C = [C_0..C_7] with C_k = sc_k raw_k and *mins = [m_0..m_7] (big_narrow
   with bs32 NULL). As k_factored4: vpdpbusd four products per int32 lane
   (|.| <= 4 * 31 * 127 < 2^15), two j's narrowed to int16 exactly, weighted
   by sc_k <= 63 with vpdpwssd: |C_k| <= 32 * 31 * 127 * 63 < 2^23. */
AIV __m256i k_chunks(dn_type t, const uint8_t *blk, const int8_t *c8, __m256i *mins)
{
    const __m128i sm = k_scales_mins(blk);
    *mins = _mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8));
    const __m512i sc = _mm512_castsi128_si512(_mm_cvtepu8_epi16(sm)), z = _mm512_setzero_si512();
    /* per 128-bit lane: sc_0, sc_2 (lanes 0-1) or sc_1, sc_3 (lanes 2-3), four words each */
    const __m512i i01 = _mm512_set_epi16(3, 3, 3, 3, 1, 1, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, /* */
                                         2, 2, 2, 2, 0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0);
    __m512i D[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        D[j] = _mm512_dpbusd_epi32(z, k_digits_pair(t, blk, j), _mm512_loadu_si512(c8 + 64 * j));
    const __m512i A0 =
        _mm512_dpwssd_epi32(z, _mm512_packs_epi32(D[0], D[1]), _mm512_permutexvar_epi16(i01, sc));
    const __m512i A2 = _mm512_dpwssd_epi32(
        z, _mm512_packs_epi32(D[2], D[3]),
        _mm512_permutexvar_epi16(_mm512_add_epi16(i01, _mm512_set1_epi16(4)), sc));
    return chunks_of_packed(A0, A2);
}

/* [sum of x[r]'s eight int32 lanes, r = 0..3] as doubles: rows_total_pd
   (dot_avx2_pieces.h) with 512-bit steps. Each lane is widened before any
   addition, and every partial sum (at most eight int32) is exact. */
AIV __m256d rows_total4_pd(const __m256i x[4])
{
    const __m512d v0 = _mm512_cvtepi32_pd(x[0]), v1 = _mm512_cvtepi32_pd(x[1]);
    const __m512d v2 = _mm512_cvtepi32_pd(x[2]), v3 = _mm512_cvtepi32_pd(x[3]);
    /* per 128-bit lane: [r0, r1] and [r2, r3] partial sums */
    const __m512d t01 = _mm512_add_pd(_mm512_unpacklo_pd(v0, v1), _mm512_unpackhi_pd(v0, v1));
    const __m512d t23 = _mm512_add_pd(_mm512_unpacklo_pd(v2, v3), _mm512_unpackhi_pd(v2, v3));
    /* 128-bit lanes [t01 x, t01 y, t23 x, t23 y], then [t01 x, t23 x, t01 y, t23 y] */
    __m512d u = _mm512_add_pd(_mm512_shuffle_f64x2(t01, t23, _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_f64x2(t01, t23, _MM_SHUFFLE(3, 1, 3, 1)));
    u = _mm512_shuffle_f64x2(u, u, _MM_SHUFFLE(3, 1, 2, 0));
    return _mm256_add_pd(_mm512_castpd512_pd256(u), _mm512_extractf64x4_pd(u, 1));
}

/* [sum of 128-bit lane r's four int32, r = 0..3] as doubles (|sums| < 2^31). */
AIV __m256d lane_sums_pd(__m512i x)
{
    x = _mm512_add_epi32(x, _mm512_shuffle_epi32(x, _MM_PERM_BADC));
    x = _mm512_add_epi32(x, _mm512_shuffle_epi32(x, _MM_PERM_CDAB));
    __m512i g = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), x);
    return _mm256_cvtepi32_pd(_mm512_castsi512_si128(g));
}

/* Q6_K: the digits (6 bits, unsigned) of chunks 4h + k, 4h + k + 1 for k =
   0 or 2 (dot_avx2_decode.h's digits: low or high nibbles of the 64 bytes
   at 64h, two bits of the 32 bytes at 128 + 32h as bits 4-5). */
AIV __m512i q6_digits_pair(const uint8_t *blk, int h, int k)
{
    const __m512i ql = _mm512_loadu_si512(blk + 64 * h);
    const __m512i qh = _mm512_broadcast_i64x4(load32(blk + 128 + 32 * h));
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    /* the high bits of chunk k at bits 4-5: qh << 4 - 2k (k < 2) or
       qh >> 2k - 4 (k >= 2) */
    if (k == 0) {
        const __m512i sh = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
        return _mm512_ternarylogic_epi32(_mm512_and_si512(ql, m4), _mm512_sllv_epi16(qh, sh), m30,
                                         0xF8); /* a | (b & c) */
    }
    const __m512i sh = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    return _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                     _mm512_srlv_epi16(qh, sh), m30, 0xF8);
}

/* Q6_K, one row's block, narrow codes: C = [C_0..C_7] with the zero point
   (32) taken off through the codes' sums per 16 (as big_narrow). For each
   pair p of chunks (2p, 2p + 1), vpdpbusd gives the digits (<= 63) times
   the codes (within +-127) four per int32 lane, |.| <= 4 * 63 * 127 = 32004
   < 2^15, so vpackssdw narrows two pairs' lanes to int16 exactly; a
   128-bit lane L of pack(D_p, D_p+1) holds sub-block 4p + L (words 0-3) and
   4p + 4 + L (words 4-7), weighted by their int8 scales with vpdpwssd
   (|.| <= 2 * 32004 * 128 per int32 lane). The even and odd lane pairs
   then add up to the sub-blocks' sums, and a chunk's two sub-blocks give
   C_k: |C_k| <= 32 * 63 * 127 * 128 < 2^28 before the zero point,
   |32 sum sc bs16| <= 32 * 128 * 32 * 127 after. */
AIV __m256i q6_k_chunks(const uint8_t *blk, const int8_t *c8, const int16_t *bs16n)
{
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
    const __m512i scz = _mm512_castsi256_si512(sc16), z = _mm512_setzero_si512();
    /* in 128-bit lane L: scales L (x4) and 4 + L (x4) */
    const __m512i i0 = _mm512_set_epi16(7, 7, 7, 7, 3, 3, 3, 3, 6, 6, 6, 6, 2, 2, 2, 2, /* */
                                        5, 5, 5, 5, 1, 1, 1, 1, 4, 4, 4, 4, 0, 0, 0, 0);
    __m512i D[4];
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) /* chunks 2p, 2p + 1: h = p / 2, k = 2 (p % 2) */
        D[p] = _mm512_dpbusd_epi32(z, q6_digits_pair(blk, p / 2, 2 * (p % 2)),
                                   _mm512_loadu_si512(c8 + 64 * p));
    const __m512i A0 =
        _mm512_dpwssd_epi32(z, _mm512_packs_epi32(D[0], D[1]), _mm512_permutexvar_epi16(i0, scz));
    const __m512i A2 = _mm512_dpwssd_epi32(
        z, _mm512_packs_epi32(D[2], D[3]),
        _mm512_permutexvar_epi16(_mm512_add_epi16(i0, _mm512_set1_epi16(8)), scz));
    const __m256i raw = chunks_of_packed(A0, A2);
    __m256i zs = _mm256_madd_epi16(sc16, load32(bs16n));
    return _mm256_sub_epi32(raw, _mm256_slli_epi32(zs, 5));
}

/* ---- Q8_0's pieces (the floating-point half) ------------------------------------- */

/* The four rows' block scales d of a Sub32 group of Q8_0 as small_sub32_z
   pairs them, [rows 0-3 of block k | rows 0-3 of block k + 4] for k =
   0..3, as doubles (dz) and their magnitudes (az): what every column's
   pieces share (the matrix product computes them once per group). */
AIV void small_scales_z(const __m256 d[4], __m512d dz[4], __m512d az[4])
{
    __m256 f0 = _mm256_unpacklo_ps(d[0], d[1]), f1 = _mm256_unpackhi_ps(d[0], d[1]);
    __m256 f2 = _mm256_unpacklo_ps(d[2], d[3]), f3 = _mm256_unpackhi_ps(d[2], d[3]);
    const __m256d g0 = _mm256_castps_pd(f0), g1 = _mm256_castps_pd(f1);
    const __m256d g2 = _mm256_castps_pd(f2), g3 = _mm256_castps_pd(f3);
    const __m256 df[4] = {
        _mm256_castpd_ps(_mm256_unpacklo_pd(g0, g2)), _mm256_castpd_ps(_mm256_unpackhi_pd(g0, g2)),
        _mm256_castpd_ps(_mm256_unpacklo_pd(g1, g3)), _mm256_castpd_ps(_mm256_unpackhi_pd(g1, g3))};
    for (int k = 0; k < 4; k++) {
        dz[k] = _mm512_cvtps_pd(df[k]);
        az[k] = _mm512_andnot_pd(_mm512_set1_pd(-0.0), dz[k]);
    }
}

/* small_sub32_4 (dot_avx2_pieces.h) for formats without offsets, two
   chunks per instruction: lanes [rows 0-3 of chunk k | rows 0-3 of chunk k +
   4], the rows' scales from small_scales_z. The sum of a row's terms is
   exact where the check passes (any order: every partial sum is a multiple
   of the least term's unit below 2^52 of it), and the check is sound in any
   order (rounding is monotonic and the bound ymin gfac is a double), so the
   pieces are small_sub32_4's. */
AIV __m128 small_sub32_z(const __m256i C[4], const __m512d dz[4], const __m512d az[4],
                         const double *S, const double *Sinf, double gfac, int *need)
{
    __m256i t0 = _mm256_unpacklo_epi32(C[0], C[1]), t1 = _mm256_unpackhi_epi32(C[0], C[1]);
    __m256i t2 = _mm256_unpacklo_epi32(C[2], C[3]), t3 = _mm256_unpackhi_epi32(C[2], C[3]);
    const __m256i ci[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                           _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
    const __m512d Sv = _mm512_loadu_pd(S), Iv = _mm512_loadu_pd(Sinf);
    const __m512d sign = _mm512_set1_pd(-0.0);
    __m512d s = _mm512_setzero_pd(), ab = s, ym = _mm512_set1_pd(INFINITY);
    for (int k = 0; k < 4; k++) {
        const __m512i idx = _mm512_setr_epi64(k, k, k, k, k + 4, k + 4, k + 4, k + 4);
        const __m512d t = _mm512_mul_pd(_mm512_cvtepi32_pd(ci[k]),
                                        _mm512_mul_pd(dz[k], _mm512_permutexvar_pd(idx, Sv)));
        s = _mm512_add_pd(s, t);
        ab = _mm512_add_pd(ab, _mm512_andnot_pd(sign, t));
        /* |d| * Sinf: +inf or NaN (d = 0) where S is 0, and min passes NaN over */
        ym = _mm512_min_pd(_mm512_mul_pd(az[k], _mm512_permutexvar_pd(idx, Iv)), ym);
    }
    const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
    const __m256d a4 = _mm256_add_pd(_mm512_castpd512_pd256(ab), _mm512_extractf64x4_pd(ab, 1));
    const __m256d y4 = _mm256_min_pd(_mm512_castpd512_pd256(ym), _mm512_extractf64x4_pd(ym, 1));
    __m256d ok = _mm256_cmp_pd(a4, _mm256_mul_pd(y4, _mm256_set1_pd(gfac)), _CMP_LT_OQ);
    *need = ~_mm256_movemask_pd(ok) & 15;
    return _mm256_cvtpd_ps(_mm256_add_pd(s4, _mm256_setzero_pd()));
}

/* One Q8_0 block's terms of eight rows (small_sub32_z's, eight rows where
   it has four): t = C_k (d_k S_k) added to *s, |t| to *ab, and |d_k| Sinf_k
   into the least *ym (+inf or NaN where S_k is 0 or d_k is 0: min passes
   NaN over). Every product is exact (|C_k| < 2^19, d_k 11 bits, S_k 8). */
AIV void sub32_terms8(__m512d Ck, __m512d dk, double S, double Sinf, __m512d *s, __m512d *ab,
                      __m512d *ym)
{
    const __m512d sign = _mm512_set1_pd(-0.0);
    const __m512d t = _mm512_mul_pd(Ck, _mm512_mul_pd(dk, _mm512_set1_pd(S)));
    *s = _mm512_add_pd(*s, t);
    *ab = _mm512_add_pd(*ab, _mm512_andnot_pd(sign, t));
    *ym = _mm512_min_pd(_mm512_mul_pd(_mm512_andnot_pd(sign, dk), _mm512_set1_pd(Sinf)), *ym);
}

/* small_sub32_z's test and rounding of eight rows' sums: the lanes whose
   sum the test cannot prove exact (ab >= ym gfac) in *need; each lane's
   sum rounded once, + 0 making an exact 0 +0. */
AIV __m256 sub32_finish8(__m512d s, __m512d ab, __m512d ym, double gfac, int *need)
{
    const __mmask8 ok = _mm512_cmp_pd_mask(ab, _mm512_mul_pd(ym, _mm512_set1_pd(gfac)), _CMP_LT_OQ);
    *need = (int)(uint8_t)~ok;
    return _mm512_cvtpd_ps(_mm512_add_pd(s, _mm512_setzero_pd()));
}

/* round_sum (dot_avx2_pieces.h) of eight lanes, with the first addend a
   product: x y + c rounded once to binary32 (x y and c exact doubles), + 0
   making an exact zero +0. The sum is first rounded "to odd"
   (dn_dot_sum_odd): of x y + c rounded down and rounded up (one fused
   multiply-add each, exact but for that rounding), the one whose last bit
   is odd; the two are equal when the sum is exact, and an inexact sum's
   two neighbours differ in that bit. Embedded rounding gives both without
   touching MXCSR. It replaced a 2Sum test with a scalar fix-up of the
   inexact lanes (a sum then five dependent operations, a compare and a
   branch before the conversion): Q4_K's prefill (dn_act_mat_mul_rows, 256
   rows x 64 columns of 4096 in cache, thread CPU time, best of 25, three
   alternated rounds) 0.424-0.436 -> 0.376-0.389 ms; test_dot_ties holds
   every caller to the exact piece at an f32 tie. */
AIV __m256 round_madd8(__m512d x, __m512d y, __m512d c)
{
    const __m512d dn = _mm512_fmadd_round_pd(x, y, c, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512d up = _mm512_fmadd_round_pd(x, y, c, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    const __mmask8 odd = _mm512_test_epi64_mask(_mm512_castpd_si512(dn), _mm512_set1_epi64(1));
    const __m512d s = _mm512_mask_blend_pd(odd, up, dn);
    return _mm512_cvtpd_ps(_mm512_add_pd(s, _mm512_setzero_pd()));
}

#endif
