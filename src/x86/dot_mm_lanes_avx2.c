/* SPDX-License-Identifier: MIT */
/*
 * The matrix product of prefill on AVX2 (+FMA, F16C), Q4_K with the rows in
 * the lanes: the AVX-512 kernel's form (dot_mm_lanes_avx512.c) with eight
 * rows in the eight int32 lanes of a ymm. A tile of 8 rows x one group of
 * 256 is transposed once into L1 (la_tile: each 32-byte vector four digits
 * of each of the 8 rows, the rows' sub-block scales and mins in the lanes
 * of their own vectors), then every column of a block of columns runs over
 * it: a broadcast of four codes feeds a vpmaddubsw whose eight dwords are
 * the eight rows, so each row's chunk sum lands in its own lane with no
 * horizontal reduction, and the exact arithmetic of the pieces (the
 * weighting, the conversion to double, the products with the scales, the
 * rounding) runs once per 8 rows in a vector. The integers and the double
 * operations are the factored Q4_K path's (dot_avx2.c's q4k8_factored2 and
 * batch8_q4k2, which do the same for the repacked layout): every value is
 * the bit of dn_mat_vec of its column.
 *
 * Q8_0 and Q6_K take the same loops with their own tiles and pieces
 * (dot_mm_lanes_avx2_q8.h, dot_mm_lanes_avx2_q6.h).
 *
 * Covered: Q4_K under Sub32 with narrow, usable columns, LA_MIN_COLS
 * columns or more, whole tiles of 8 readable rows; a group whose
 * activation side does not factor (fok) gets each row's piece from the
 * reference's piece function; a row that meets a tiny piece is redone by
 * the reference; rows past the last whole tile, a tile holding an
 * unreadable block (and every row after it), and everything else run
 * dn_dot_mm_blocked_avx2, which reports the first unreadable block.
 */
#include "../dot_kernels.h"
#include "../dot_mm.h"
#include "../dot_shared.h"
#include "decodenum/fp32.h"
#include "dot_avx2_decode.h"
#include "dot_avx2_pieces.h"

#include <immintrin.h>
#include <string.h>

#define LA_ROWS 8     /* rows of a tile: the int32 lanes of a ymm */
#define LA_COLS 64    /* most columns of a block */
#define LA_MIN_COLS 2 /* two columns: 1.7x the blocked kernel (4096^2) */
#define LA_QBYTES 144 /* bytes of a Q4_K block */
/* Columns per pass over a chunk's digits: one column 1.03-1.14x two and
   1.28-1.43x four (which spill: AVX2 has 16 vector registers), Q4_K 4096 x
   4096, n = 8 and 64, one thread (docs/log/dot.md, "The AVX2 lanes prefill"). */
#define LA_NQ 1
#define LA_BOUND 35227 /* floor(2^31 / (32 * 15 * 127)): see la_cols */

/* One tile: 8 rows' group of 256 in the lanes. */
typedef struct la_tile {
    __m256i q[8][8]; /* chunk k, elements 4u..4u+3: lane r holds row r's four digits */
    __m256i sc[8];   /* chunk k: lane r = row r's sub-block scale in both words */
    __m256i mp[4];   /* chunks 2i, 2i + 1: lane r = row r's mins (m_2i, m_2i+1) as words */
    __m256d d[2];    /* rows 0-3, 4-7: d as doubles */
    __m256d ndm[2];  /* -dm */
    int scmax;       /* the largest sub-block scale of the tile */
} la_tile;

/* 8 rows' eight dwords into the lanes: R[r] holds row r's dwords u = 0..7,
   X[u] gets dword u of rows 0..7 (an 8 x 8 transpose of dwords). */
AI void la_transpose(const __m256i R[8], __m256i X[8])
{
    __m256i t[8], s[8];
    for (int r = 0; r < 8; r += 2) { /* rows r, r + 1: dwords (0 1 4 5), (2 3 6 7) */
        t[r] = _mm256_unpacklo_epi32(R[r], R[r + 1]);
        t[r + 1] = _mm256_unpackhi_epi32(R[r], R[r + 1]);
    }
    for (int r = 0; r < 8; r += 4) { /* rows r .. r + 3 of dwords (0 4), (1 5), (2 6), (3 7) */
        s[r] = _mm256_unpacklo_epi64(t[r], t[r + 2]);
        s[r + 1] = _mm256_unpackhi_epi64(t[r], t[r + 2]);
        s[r + 2] = _mm256_unpacklo_epi64(t[r + 1], t[r + 3]);
        s[r + 3] = _mm256_unpackhi_epi64(t[r + 1], t[r + 3]);
    }
    for (int u = 0; u < 4; u++) {
        X[u] = _mm256_permute2x128_si256(s[u], s[u + 4], 0x20);
        X[u + 4] = _mm256_permute2x128_si256(s[u], s[u + 4], 0x31);
    }
}

/* The digits of chunks 2p and 2p + 1 of the 8 blocks blk[r] into T->q
   (la_transpose); the low nibbles are chunk 2p's digits, the high ones
   chunk 2p + 1's. */
AI void la_digits(la_tile *T, const uint8_t *const blk[LA_ROWS], int p)
{
    const size_t at = 16 + 32 * (size_t)p;
    __m256i R[8], X[8];
    for (int r = 0; r < 8; r++) R[r] = load32(blk[r] + at);
    la_transpose(R, X);
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int u = 0; u < 8; u++) {
        T->q[2 * p][u] = _mm256_and_si256(X[u], m4);
        T->q[2 * p + 1][u] = _mm256_and_si256(_mm256_srli_epi16(X[u], 4), m4);
    }
}

/* In each dword, the bytes sel picks (byte i of the dword's own row), 0x80
   for a zero byte: vpshufb indexes within 128-bit lanes, so dword l of a
   lane adds 4 l. */
AI __m256i la_pick(__m256i v, uint32_t sel)
{
    const __m256i base = _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0C0C0C0C, 0, 0x04040404,
                                           0x08080808, 0x0C0C0C0C);
    return _mm256_shuffle_epi8(v, _mm256_add_epi8(_mm256_set1_epi32((int)sel), base));
}

/* 1 when one of the eight binary16 words of h (scales d or dm) is an
   infinity or a NaN: its block is unreadable. */
AI int la_bad_f16(__m128i h)
{
    const __m128i e = _mm_set1_epi16(0x7C00);
    return _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, e), e)) != 0;
}

/* The 8 rows' scales of the group into T; 1 when a block is unreadable (d
   or dm an infinity or a NaN: T is then not to be used). Dword w of the first 16 bytes (d, dm, the 12 scale bytes) of
   row r to lane r of V[w] (rows r, r + 4 in the two halves, a 4 x 4
   transpose in each), then the 6-bit scales and mins decoded in the lanes
   as the AVX-512 kernel's ln_scales (Q4_K's packing). */
AI int la_scales(la_tile *T, const uint8_t *const blk[LA_ROWS])
{
    __m256i Y[4];
    for (int r = 0; r < 4; r++)
        Y[r] = _mm256_loadu2_m128i((const __m128i *)blk[r + 4], (const __m128i *)blk[r]);
    const __m256i a0 = _mm256_unpacklo_epi32(Y[0], Y[1]), a1 = _mm256_unpackhi_epi32(Y[0], Y[1]);
    const __m256i a2 = _mm256_unpacklo_epi32(Y[2], Y[3]), a3 = _mm256_unpackhi_epi32(Y[2], Y[3]);
    const __m256i V0 = _mm256_unpacklo_epi64(a0, a2), V1 = _mm256_unpackhi_epi64(a0, a2);
    const __m256i V2 = _mm256_unpacklo_epi64(a1, a3), V3 = _mm256_unpackhi_epi64(a1, a3);
    const __m256i c3f = _mm256_set1_epi8(63), c0f = _mm256_set1_epi8(15),
                  c30 = _mm256_set1_epi8(0x30);
    const __m256i sc03 = _mm256_and_si256(V1, c3f), m03 = _mm256_and_si256(V2, c3f);
    const __m256i sc47 =
        _mm256_or_si256(_mm256_and_si256(V3, c0f), _mm256_and_si256(_mm256_srli_epi32(V1, 2), c30));
    const __m256i m47 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(V3, 4), c0f),
                                        _mm256_and_si256(_mm256_srli_epi32(V2, 2), c30));
    for (int k = 0; k < 8; k++) {
        const uint32_t b = (uint32_t)(k & 3);
        T->sc[k] = la_pick(k < 4 ? sc03 : sc47, b | 0x8000u | b << 16 | 0x80000000u);
    }
    for (int i = 0; i < 4; i++) {
        const uint32_t b = (uint32_t)(2 * (i & 1));
        T->mp[i] = la_pick(i < 2 ? m03 : m47, b | 0x8000u | (b + 1) << 16 | 0x80000000u);
    }
    __m256i mx = _mm256_max_epu8(sc03, sc47);
    mx = _mm256_max_epu8(mx, _mm256_srli_epi32(mx, 16));
    mx = _mm256_max_epu8(mx, _mm256_srli_epi32(mx, 8));
    mx = _mm256_and_si256(mx, _mm256_set1_epi32(255));
    __m128i m = _mm_max_epi32(_mm256_castsi256_si128(mx), _mm256_extracti128_si256(mx, 1));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4E));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xB1));
    T->scmax = _mm_cvtsi128_si32(m);
    /* [d0..3 dm0..3 | d4..7 dm4..7] -> [d0..7 | dm0..7] */
    const __m256i h = _mm256_permute4x64_epi64(
        _mm256_packus_epi32(_mm256_and_si256(V0, _mm256_set1_epi32(0xFFFF)),
                            _mm256_srli_epi32(V0, 16)),
        0xD8);
    const __m256 d = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
    const __m256 dm = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
    const __m256d z = _mm256_setzero_pd();
    T->d[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(d));
    T->d[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1));
    T->ndm[0] = _mm256_sub_pd(z, _mm256_cvtps_pd(_mm256_castps256_ps128(dm)));
    T->ndm[1] = _mm256_sub_pd(z, _mm256_cvtps_pd(_mm256_extractf128_ps(dm, 1)));
    return la_bad_f16(_mm256_castsi256_si128(h)) | la_bad_f16(_mm256_extracti128_si256(h, 1));
}

/* Row r's chunk sum of chunk k against the codes c in lane r as two words
   (the even and the odd elements' halves): eight maddubs of the tile's
   digits with broadcast codes, each word <= 2 * 15 * 127 = 3810, added in
   int16 to at most 8 * 3810 = 30480 (no saturation). */
AI __m256i la_chunk(const la_tile *T, int k, const int8_t *c)
{
    __m256i m[8];
    for (int u = 0; u < 8; u++) {
        int32_t four;
        memcpy(&four, c + 4 * u, 4);
        m[u] = _mm256_maddubs_epi16(T->q[k][u], _mm256_set1_epi32(four));
    }
    const __m256i a = _mm256_add_epi16(_mm256_add_epi16(m[0], m[1]), _mm256_add_epi16(m[2], m[3]));
    const __m256i b = _mm256_add_epi16(_mm256_add_epi16(m[4], m[5]), _mm256_add_epi16(m[6], m[7]));
    return _mm256_add_epi16(a, b);
}

/* LA_NQ columns' pieces of the tile's group g, column j in p[j] (lane r row
   r), for columns whose group factors (fok; the others' lanes are
   meaningless). Per chunk k and column, la_chunk's two words times M_k =
   sc_k f_k (<= 63 * 480 = 30240: a word, vpmullo_epi16 of the scale words
   with f_k) by vpmaddwd give raw_k M_k, |raw_k| <= 32 * 15 * 127 = 60960,
   below 2^31 in int32. A = sum_k raw_k M_k is added in int32 when every
   partial sum is provably below 2^31: 60960 * scmax * sum_k f_k < 2^31,
   i.e. scmax * sum f <= LA_BOUND (wide = 0), else each chunk's product is
   widened to double and added there (below 2^34: exact). -B / 2^emin =
   sum_k (m_k f_k) bs32_k by vpmaddwd of the words (m_2i f_2i, m_2i+1
   f_2i+1) <= 30240 with (bs32_2i, bs32_2i+1), |bs32| <= 4064, eight terms
   below 2^31. The pieces are RN32(A d 2^emin - Bn dm 2^emin) as
   batch8_q4k2's (round_sum, no limit test: |A| < 2^(emin + 34) and |B| <
   2^(emin + 31) lie below glim). */
AI void la_cols(const la_tile *T, const dn_dot_act *const a[LA_NQ], size_t g, int wide,
                __m256 p[LA_NQ])
{
    const size_t k0 = g / 32;
    __m256i A[LA_NQ], Bn[LA_NQ];
    __m256d Ad[LA_NQ][2];
    for (int j = 0; j < LA_NQ; j++) {
        Bn[j] = _mm256_setzero_si256();
        for (int i = 0; i < 4; i++) {
            int32_t f2;
            memcpy(&f2, a[j]->f16 + k0 + 2 * i, 4);
            const uint32_t bs2 = (uint16_t)a[j]->bs32[k0 + 2 * i] |
                                 (uint32_t)(uint16_t)a[j]->bs32[k0 + 2 * i + 1] << 16;
            const __m256i mf = _mm256_mullo_epi16(T->mp[i], _mm256_set1_epi32(f2));
            Bn[j] = _mm256_add_epi32(Bn[j], _mm256_madd_epi16(mf, _mm256_set1_epi32((int32_t)bs2)));
        }
        A[j] = _mm256_setzero_si256();
        Ad[j][0] = Ad[j][1] = _mm256_setzero_pd();
    }
#pragma GCC unroll 1
    for (int k = 0; k < 8; k++) {
        for (int j = 0; j < LA_NQ; j++) {
            const __m256i S = la_chunk(T, k, a[j]->c8 + g + 32 * (size_t)k);
            const __m256i M = _mm256_mullo_epi16(T->sc[k], _mm256_set1_epi16(a[j]->f16[k0 + k]));
            const __m256i t = _mm256_madd_epi16(S, M);
            if (!wide) {
                A[j] = _mm256_add_epi32(A[j], t);
            } else {
                Ad[j][0] = _mm256_add_pd(Ad[j][0], _mm256_cvtepi32_pd(_mm256_castsi256_si128(t)));
                Ad[j][1] =
                    _mm256_add_pd(Ad[j][1], _mm256_cvtepi32_pd(_mm256_extracti128_si256(t, 1)));
            }
        }
    }
    for (int j = 0; j < LA_NQ; j++) {
        const __m256d s = _mm256_set1_pd(a[j]->g2e[g / DN_GROUP]);
        __m128 f[2];
        for (int h = 0; h < 2; h++) {
            const __m128i Ah = h ? _mm256_extracti128_si256(A[j], 1) : _mm256_castsi256_si128(A[j]);
            const __m128i Bh =
                h ? _mm256_extracti128_si256(Bn[j], 1) : _mm256_castsi256_si128(Bn[j]);
            const __m256d Av = wide ? Ad[j][h] : _mm256_cvtepi32_pd(Ah);
            f[h] = round_sum(_mm256_mul_pd(Av, _mm256_mul_pd(T->d[h], s)),
                             _mm256_mul_pd(_mm256_cvtepi32_pd(Bh), _mm256_mul_pd(T->ndm[h], s)));
        }
        p[j] = _mm256_set_m128(f[1], f[0]);
    }
}

/* sum_k f_k of column a's group at chunk k0 (each f_k <= 480 where fok). */
AI int la_fsum(const dn_dot_act *a, size_t k0)
{
    __m128i t = _mm_madd_epi16(_mm_loadu_si128((const __m128i *)(a->f16 + k0)), _mm_set1_epi16(1));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
    return _mm_cvtsi128_si32(t);
}

/* A column's 8 pieces p added to its chains acc (in order), the lanes
   holding a tiny piece (dn_piece_tiny) into *tiny. */
AI void la_add_piece(__m256 p, float acc[LA_ROWS], uint32_t *tiny)
{
    *tiny |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(tiny8(p)));
    _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_loadu_ps(acc), p));
}

/* p with the lanes of need (row r in bit r) replaced by the reference's
   piece of that row's blocks blk[r] over elements [g, to) of act (Sub32):
   every format's fallback for the rows its tile cannot prove. */
AI __m256 la_ref_pieces(__m256 p, uint32_t need, dn_type type, const uint8_t *const blk[LA_ROWS],
                        const dn_act_row *act, size_t g, size_t to)
{
    float v[LA_ROWS];
    _mm256_storeu_ps(v, p);
    for (int r = 0; r < LA_ROWS; r++)
        if (need >> r & 1) v[r] = dn_dot_piece_of_bytes(type, blk[r], act, DN_ACT_SUB32, g, to);
    return _mm256_loadu_ps(v);
}

/* One column block (nc columns, col) of the tile's group g: each column's
   pieces added to its chains acc[j] (in order), the lanes that met a tiny
   piece into tiny[j] (la_add_piece). */
AI void la_group(const la_tile *T, const uint8_t *const blk[LA_ROWS], const mm_col *col, int nc,
                 size_t g, float (*acc)[LA_ROWS], uint32_t *tiny)
{
    const size_t gi = g / DN_GROUP;
    for (int j0 = 0; j0 < nc; j0 += LA_NQ) {
        const dn_dot_act *a[LA_NQ];
        int wide = 0, slow = 0;
        for (int j = 0; j < LA_NQ; j++) {
            const int c = j0 + j < nc ? j0 + j : j0;
            a[j] = col[c].a;
            if (!a[j]->fok[gi]) /* fok implies gok */
                slow |= 1 << j;
            else if ((long)T->scmax * la_fsum(a[j], g / 32) > LA_BOUND)
                wide = 1;
        }
        __m256 p[LA_NQ];
        la_cols(T, a, g, wide, p);
        for (int j = 0; j < LA_NQ && j0 + j < nc; j++) {
            if (slow >> j & 1)
                p[j] =
                    la_ref_pieces(p[j], 0xFF, DN_TYPE_Q4_K, blk, col[j0 + j].act, g, g + DN_GROUP);
            la_add_piece(p[j], acc[j0 + j], &tiny[j0 + j]);
        }
    }
}

#include "dot_mm_lanes_avx2_q8.h"
#include "dot_mm_lanes_avx2_q6.h"

/* The tile of the 8 rows' group g (blk) for the columns col, by format; 1
   (and nothing done) when one of its blocks is unreadable: a binary16 scale
   d (Q8_0, Q4_K, Q6_K) or dm (Q4_K) that is an infinity or a NaN, found
   where the tile's loader converts them. */
AI int la_run_group(dn_type type, const uint8_t *const blk[LA_ROWS], const mm_col *col, int nc,
                    size_t g, size_t n, float (*acc)[LA_ROWS], uint32_t *tiny)
{
    if (type == DN_TYPE_Q8_0) {
        la8_tile T;
        const size_t G = (n - g < DN_GROUP ? n - g : DN_GROUP) / 32;
        if (la8_load(&T, blk, (int)G)) return 1;
        la8_group(&T, blk, col, nc, g, acc, tiny);
    } else if (type == DN_TYPE_Q6_K) {
        la6_tile T;
        if (la6_load(&T, blk)) return 1;
        la6_group(&T, blk, col, nc, g, acc, tiny);
    } else {
        la_tile T;
        if (la_scales(&T, blk)) return 1;
        for (int p = 0; p < 4; p++) la_digits(&T, blk, p);
        la_group(&T, blk, col, nc, g, acc, tiny);
    }
    return 0;
}

/* dn_mm_lanes_store of one column's tile: where no row met a tiny piece,
   the chains' result rule (dn_chain_result: a NaN made DN_NAN_BITS) in the
   lanes and one store (row by row it was 3.8 % of the n = 512 profile). */
AI dn_status la_store(dn_type type, const uint8_t *w, size_t rows, size_t n, const dn_act_row *act,
                      const float acc[LA_ROWS], uint32_t tiny, size_t r, float *o, size_t *bad)
{
    if (tiny) return dn_mm_lanes_store(type, w, rows, n, act, acc, tiny, LA_ROWS, r, o, bad);
    const __m256 v = _mm256_loadu_ps(acc);
    const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32((int)DN_NAN_BITS));
    _mm256_storeu_ps(o + r, _mm256_blendv_ps(v, qnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    return DN_OK;
}

/* Rows [r, r + 8) against columns [c0, c1); *unread = 1 (and nothing
   stored) when one of the rows' blocks is unreadable: the first block of
   columns passes over every group before it stores. */
static dn_status la_tile_rows(dn_type type, const dn_act *x, size_t c0, size_t c1,
                              const uint8_t *const rp[LA_ROWS], const uint8_t *w, size_t rows,
                              size_t r, float *out, size_t ldo, size_t *bad, int *unread)
{
    const size_t n = x->n, gb = type == DN_TYPE_Q8_0   ? 8 * LA8_BYTES
                                : type == DN_TYPE_Q6_K ? LA6_BYTES
                                                       : LA_QBYTES;
    size_t cb = DN_DOT_MM_COLS / (n + n / 2) / 4 * 4;
    cb = cb < 4 ? 4 : cb > LA_COLS ? LA_COLS : cb;
    mm_col col[LA_COLS];
    float acc[LA_COLS][LA_ROWS];
    uint32_t tiny[LA_COLS];
    for (size_t b0 = c0; b0 < c1; b0 += cb) {
        const int nc = (int)(c1 - b0 < cb ? c1 - b0 : cb);
        for (int j = 0; j < nc; j++) {
            (void)dn_act_view(x, b0 + j, type, &col[j].act, &col[j].a);
            memset(acc[j], 0, sizeof acc[j]);
            tiny[j] = 0;
        }
        for (size_t g = 0; g < n; g += DN_GROUP) {
            const uint8_t *blk[LA_ROWS];
            for (int k = 0; k < LA_ROWS; k++) {
                blk[k] = rp[k] + g / DN_GROUP * gb;
                for (size_t o = 0; o < gb; o += 64) /* the next group into L1 */
                    _mm_prefetch((const char *)blk[k] + gb + o, _MM_HINT_T0);
            }
            if (la_run_group(type, blk, col, nc, g, n, acc, tiny)) {
                *unread = 1;
                return DN_OK;
            }
        }
        for (int j = 0; j < nc; j++) {
            dn_status st = la_store(type, w, rows, n, col[j].act, acc[j], tiny[j], r,
                                    out + (b0 + (size_t)j - c0) * ldo, bad);
            if (st != DN_OK) return st;
        }
    }
    return DN_OK;
}

/* 1 when the lanes cover the product: Q4_K, Q6_K or Q8_0, Sub32,
   LA_MIN_COLS (Q8_0: LA8_MIN_COLS, Q6_K: LA6_MIN_COLS) columns or more,
   every column's side narrow and usable. */
static int la_covers(const dn_act *x, size_t c0, size_t c1, dn_type type)
{
    const size_t least = type == DN_TYPE_Q8_0   ? LA8_MIN_COLS
                         : type == DN_TYPE_Q6_K ? LA6_MIN_COLS
                                                : LA_MIN_COLS;
    if ((type != DN_TYPE_Q4_K && type != DN_TYPE_Q8_0 && type != DN_TYPE_Q6_K) || c1 - c0 < least)
        return 0;
    return dn_mm_columns_narrow(x, c0, c1, type);
}

dn_status dn_dot_mm_lanes_avx2(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                               dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                               float *out, size_t ldo, size_t *bad)
{
    size_t r = r0;
    if (la_covers(x, c0, c1, type)) {
        const size_t bb = dn_type_block_bytes(type), blocks = x->n / dn_type_block_elements(type);
        for (; r1 - r >= LA_ROWS; r += LA_ROWS) {
            const uint8_t *rp[LA_ROWS];
            for (int k = 0; k < LA_ROWS; k++) rp[k] = w + (r + (size_t)k) * blocks * bb;
            int unread = 0;
            dn_status st = la_tile_rows(type, x, c0, c1, rp, w, rows, r, out, ldo, bad, &unread);
            if (st != DN_OK) return st;
            if (unread) break;
        }
        if (r == r1) return DN_OK;
    }
    return dn_dot_mm_blocked_avx2(f, x, c0, c1, type, w, rows, r, r1, out, ldo, bad);
}
