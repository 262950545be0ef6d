/* SPDX-License-Identifier: MIT */
/*
 * The matrix product of prefill on AVX-512 with VNNI, Q4_K with the rows in
 * the lanes: a tile of 16 rows x one group of 256 is transposed once into
 * L1 (ln_tile: each 64-byte vector four digits of each of the 16 rows, the
 * rows' sub-block scales and mins in the lanes of their own vectors), then
 * every column of a block of columns runs over it: one broadcast of four
 * codes feeds a vpdpbusd whose 16 int32 lanes are the 16 rows, so each
 * row's chunk sum lands in its own lane with no horizontal reduction, and
 * the exact arithmetic of the pieces (the weighting, the conversion to
 * double, the products with the scales, the rounding) runs once per 16
 * rows in a vector. The integers and the double operations are the
 * factored Q4_K path's (dot_avx512.c's q4k8_factored and batch8_q4k, which
 * do the same for the repacked layout): every value is the bit of
 * dn_mat_vec of its column.
 *
 * Q8_0 takes the same loops with its own tile and pieces
 * (dot_mm_lanes_q8.h): 16 rows' C_k in the lanes of one vpdpbusd chain,
 * their terms added in double for 16 rows at once. So does Q6_K
 * (dot_mm_lanes_q6.h): 16 rows' C_k from two vpdpbusd chains per chunk
 * and the rows' sub-block scales, A = sum_k C_k S_k in double, the
 * repacked kernel's pieces.
 *
 * Covered: Q4_K, Q6_K and Q8_0 under Sub32 with narrow, usable columns,
 * LN_MIN_COLS (Q6_K: L6_MIN_COLS) columns or more, whole tiles of 16
 * readable rows; a Q4_K group whose activation side does not factor (fok)
 * gets each row's piece from the reference's piece function (Q6_K's and
 * Q8_0's fallbacks: their headers); a
 * row that meets a tiny piece is redone by the reference; rows past the
 * last whole tile, a tile holding an unreadable block (and every row after
 * it), and everything else run dn_dot_mm_blocked_avx512, which reports the
 * first unreadable block.
 */
#include "../dot_kernels.h"
#include "../dot_mm.h"
#include "../dot_shared.h"
#include "decodenum/fp32.h"
#include "dot_avx512_decode.h"

#include <immintrin.h>
#include <string.h>

#define LN_ROWS 16                /* rows of a tile: the int32 lanes of a vector */
#define LN_COLS 64                /* most columns of a block (their add chains: 4 KiB) */
#define LN_MIN_COLS 2             /* two columns: 1.6x the blocked kernel in cache */
#define LN_ACT_BYTES (512 * 1024) /* a column block's activations (in L2) */
#define LN_QBYTES 144             /* bytes of a Q4_K block */
#define LN_BOUND 35227            /* floor(2^31 / (32 * 15 * 127)): see ln_quad */

/* One tile: 16 rows' group of 256 in the lanes. */
typedef struct ln_tile {
    __m512i q[8][8]; /* chunk k, elements 4u..4u+3: lane r holds row r's four digits */
    __m512i sc[8];   /* chunk k: lane r = row r's sub-block scale in word k & 1, 0 in the other */
    __m512i mp[4];   /* chunks 2i, 2i + 1: lane r = row r's mins (m_2i, m_2i+1) as words */
    __m512d d[2];    /* rows 0-7, 8-15: d as doubles */
    __m512d ndm[2];  /* -dm */
    int scmax;       /* the largest sub-block scale of the tile */
} ln_tile;

/* One round of a transpose of 16 x 8 dwords (see ln_digits): the vectors
   v, w whose index differs in bit b swap that bit with bit b of the
   position (v takes the positions with bit b clear from both, w the
   others); bit 1 is a 64-bit unpack. */
static const int32_t ln_swap_idx[2][2][16] = {
    {{0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30},
     {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}},
    {{0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27},
     {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31}}};

AIV void ln_swap(__m512i *v, __m512i *w, int b)
{
    __m512i a;
    if (b == 1) {
        a = _mm512_unpacklo_epi64(*v, *w);
        *w = _mm512_unpackhi_epi64(*v, *w);
    } else {
        const int s = b / 2;
        a = _mm512_permutex2var_epi32(*v, _mm512_loadu_si512(ln_swap_idx[s][0]), *w);
        *w = _mm512_permutex2var_epi32(*v, _mm512_loadu_si512(ln_swap_idx[s][1]), *w);
    }
    *v = a;
}

/* 16 rows' eight dwords into the lanes: X[i] holds dwords u = 0..7 of
   rows i (positions u) and i + 8 (8 + u); three rounds of ln_swap exchange
   the vector index (r mod 8) with the position's low bits (u), leaving
   dword u of row r in lane r of X[u]. */
AIV void ln_transpose(__m512i X[8])
{
    for (int i = 0; i < 8; i += 2) ln_swap(&X[i], &X[i + 1], 0);
    for (int i = 0; i < 8; i += 4) ln_swap(&X[i], &X[i + 2], 1), ln_swap(&X[i + 1], &X[i + 3], 1);
    for (int i = 0; i < 4; i++) ln_swap(&X[i], &X[i + 4], 2);
}

/* The digits of chunks 2p and 2p + 1 of the 16 blocks blk[r] into T->q
   (ln_transpose): the low nibbles are chunk 2p's digits, the high ones
   chunk 2p + 1's. */
AIV void ln_digits(ln_tile *T, const uint8_t *const blk[LN_ROWS], int p)
{
    const size_t at = 16 + 32 * (size_t)p;
    __m512i X[8];
    for (int i = 0; i < 8; i++) X[i] = load2x32(blk[i] + at, blk[i + 8] + at);
    ln_transpose(X);
    const __m512i m4 = _mm512_set1_epi8(15);
    for (int u = 0; u < 8; u++) {
        T->q[2 * p][u] = _mm512_and_si512(X[u], m4);
        T->q[2 * p + 1][u] = _mm512_and_si512(_mm512_srli_epi16(X[u], 4), m4);
    }
}

/* In each dword, the bytes sel picks (byte i of the dword's own row), 0x80
   for a zero byte: vpshufb indexes within 128-bit lanes, so dword l of a
   lane adds 4 l. */
AIV __m512i ln_pick(__m512i v, uint32_t sel)
{
    const __m512i base =
        _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0x04040404, 0x08080808, 0x0C0C0C0C));
    return _mm512_shuffle_epi8(v, _mm512_add_epi8(_mm512_set1_epi32((int)sel), base));
}

/* The 16 rows' scales of group gi into T (the blocks readable: checked by
   the caller). The first 16 bytes of each block (d, dm, the 12 scale
   bytes) are copied to hdr, dword w of row r gathered into lane r of V[w];
   the 6-bit scales and mins decoded in the lanes (Q4_K's packing: for
   j < 4 sc = s[j] & 63, m = s[j + 4] & 63; for j >= 4 sc = (s[j + 4] & 15)
   | (s[j - 4] >> 6) << 4, m = (s[j + 4] >> 4) | (s[j] >> 6) << 4). */
AIV void ln_scales(ln_tile *T, const uint8_t *const blk[LN_ROWS])
{
    uint8_t hdr[LN_ROWS][16];
    for (int r = 0; r < LN_ROWS; r++) memcpy(hdr[r], blk[r], 16);
    const __m512i rows16 =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(16));
    __m512i V[4];
    for (int w = 0; w < 4; w++)
        V[w] = _mm512_i32gather_epi32(_mm512_add_epi32(rows16, _mm512_set1_epi32(4 * w)), hdr, 1);
    const __m512i c3f = _mm512_set1_epi8(63), c0f = _mm512_set1_epi8(15),
                  c30 = _mm512_set1_epi8(0x30);
    const __m512i sc03 = _mm512_and_si512(V[1], c3f), m03 = _mm512_and_si512(V[2], c3f);
    const __m512i sc47 = _mm512_or_si512(_mm512_and_si512(V[3], c0f),
                                         _mm512_and_si512(_mm512_srli_epi32(V[1], 2), c30));
    const __m512i m47 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(V[3], 4), c0f),
                                        _mm512_and_si512(_mm512_srli_epi32(V[2], 2), c30));
    for (int k = 0; k < 8; k++) {
        const uint32_t b = (uint32_t)(k & 3);
        T->sc[k] = ln_pick(k < 4 ? sc03 : sc47,
                           k & 1 ? 0x8080u | (b << 16) | 0x80000000u : b | 0x80808000u);
    }
    for (int i = 0; i < 4; i++) {
        const uint32_t b = (uint32_t)(2 * (i & 1));
        T->mp[i] = ln_pick(i < 2 ? m03 : m47, b | 0x8000u | (b + 1) << 16 | 0x80000000u);
    }
    __m512i mx = _mm512_max_epu8(sc03, sc47);
    mx = _mm512_max_epu8(mx, _mm512_srli_epi32(mx, 16));
    mx = _mm512_max_epu8(mx, _mm512_srli_epi32(mx, 8));
    T->scmax = _mm512_reduce_max_epi32(_mm512_and_si512(mx, _mm512_set1_epi32(255)));
    const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(V[0]));
    const __m512 dm = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(V[0], 16)));
    const __m512d z = _mm512_setzero_pd();
    T->d[0] = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
    T->d[1] = _mm512_cvtps_pd(_mm512_extractf32x8_ps(d, 1));
    T->ndm[0] = _mm512_sub_pd(z, _mm512_cvtps_pd(_mm512_castps512_ps256(dm)));
    T->ndm[1] = _mm512_sub_pd(z, _mm512_cvtps_pd(_mm512_extractf32x8_ps(dm, 1)));
}

/* Four columns' pieces of the tile's group g, column j in p[j] (lane r row
   r), for columns whose group factors (fok; the others' lanes are
   meaningless). Per chunk k and column, eight vpdpbusd of the tile's digits
   with broadcast codes give raw_k per row, |raw_k| <= 32 * 15 * 127 =
   60960; times M_k = sc_k f_k (<= 63 * 480 = 30240, vpmaddwd of the scale
   word with (f_2i, f_2i+1)) it is below 2^31 in int32. A = sum_k raw_k M_k
   is then added in int32 when every partial sum is provably below 2^31:
   60960 * scmax * sum_k f_k < 2^31, i.e. scmax * sum f <= LN_BOUND (wide
   = 0), else each chunk's product is widened to double and added there
   (below 2^34: exact). -B / 2^emin = sum_k (m_k f_k) bs32_k by vpdpwssd of
   the words (m_2i f_2i, m_2i+1 f_2i+1) <= 30240 with (bs32_2i, bs32_2i+1),
   |bs32| <= 4064, eight terms below 2^31. The pieces are
   RN32(A d 2^emin - Bn dm 2^emin): the products exact (A < 2^34, d 11
   bits), the sum rounded once (batch8_q4k's, with no limit test: |A| <
   2^(emin + 34) and |B| < 2^(emin + 31) lie below glim). */
AIV void ln_quad(const ln_tile *T, const dn_dot_act *const a[4], size_t g, int wide, __m512 p[4])
{
    const size_t k0 = g / 32;
    const __m512i z = _mm512_setzero_si512();
    __m512i F4[4], A[4], Bn[4];
    __m512d Ad[4][2];
    for (int j = 0; j < 4; j++) {
        const __m128i bs = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)(a[j]->bs32 + k0)),
                                           _mm_loadu_si128((const __m128i *)(a[j]->bs32 + k0 + 4)));
        const __m512i BS4 = _mm512_broadcast_i32x4(bs);
        F4[j] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(a[j]->f16 + k0)));
        Bn[j] = z;
        for (int i = 0; i < 4; i++) {
            const __m512i mf =
                _mm512_mullo_epi16(T->mp[i], _mm512_permutexvar_epi32(_mm512_set1_epi32(i), F4[j]));
            Bn[j] =
                _mm512_dpwssd_epi32(Bn[j], mf, _mm512_permutexvar_epi32(_mm512_set1_epi32(i), BS4));
        }
        A[j] = z;
        Ad[j][0] = Ad[j][1] = _mm512_setzero_pd();
    }
#pragma GCC unroll 1
    for (int k = 0; k < 8; k++) {
        __m512i dg[8];
        for (int u = 0; u < 8; u++) dg[u] = T->q[k][u];
        for (int j = 0; j < 4; j++) {
            const int8_t *c = a[j]->c8 + g + 32 * (size_t)k;
            __m512i r2[2] = {z, z}; /* two chains: 1.45x over one, four no better */
            for (int u = 0; u < 8; u++) r2[u & 1] = dpbusd_bcst(r2[u & 1], dg[u], c + 4 * u);
            const __m512i raw = _mm512_add_epi32(r2[0], r2[1]);
            const __m512i M = _mm512_madd_epi16(
                T->sc[k], _mm512_permutexvar_epi32(_mm512_set1_epi32(k / 2), F4[j]));
            const __m512i t = _mm512_mullo_epi32(raw, M);
            if (!wide) {
                A[j] = _mm512_add_epi32(A[j], t);
            } else {
                Ad[j][0] = _mm512_add_pd(Ad[j][0], _mm512_cvtepi32_pd(_mm512_castsi512_si256(t)));
                Ad[j][1] =
                    _mm512_add_pd(Ad[j][1], _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(t, 1)));
            }
        }
    }
    for (int j = 0; j < 4; j++) {
        const __m512d s = _mm512_set1_pd(a[j]->g2e[g / DN_GROUP]);
        __m256 f[2];
        for (int h = 0; h < 2; h++) {
            const __m256i Ah =
                h ? _mm512_extracti64x4_epi64(A[j], 1) : _mm512_castsi512_si256(A[j]);
            const __m256i Bh =
                h ? _mm512_extracti64x4_epi64(Bn[j], 1) : _mm512_castsi512_si256(Bn[j]);
            const __m512d Av = wide ? Ad[j][h] : _mm512_cvtepi32_pd(Ah);
            f[h] = round_madd8(Av, _mm512_mul_pd(T->d[h], s),
                               _mm512_mul_pd(_mm512_cvtepi32_pd(Bh), _mm512_mul_pd(T->ndm[h], s)));
        }
        p[j] = _mm512_insertf32x8(_mm512_castps256_ps512(f[0]), f[1], 1);
    }
}

/* sum_k f_k of column a's group gi (each f_k <= 480 where fok). */
AIV int ln_fsum(const dn_dot_act *a, size_t k0)
{
    __m128i t = _mm_madd_epi16(_mm_loadu_si128((const __m128i *)(a->f16 + k0)), _mm_set1_epi16(1));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
    return _mm_cvtsi128_si32(t);
}

/* A column's 16 pieces p added to its chains acc (in order), the lanes
   holding a tiny piece (non-zero, below 2^-100: dn_piece_tiny) into *tiny. */
AIV void ln_add_piece(__m512 p, float acc[LN_ROWS], uint32_t *tiny)
{
    const __m512i u = _mm512_and_si512(_mm512_castps_si512(p), _mm512_set1_epi32(0x7FFFFFFF));
    *tiny |=
        _mm512_test_epi32_mask(u, u) & _mm512_cmplt_epi32_mask(u, _mm512_set1_epi32(0x0D800000));
    _mm512_storeu_ps(acc, _mm512_add_ps(_mm512_loadu_ps(acc), p));
}

/* p with the lanes of need (row r in bit r) replaced by the reference's
   piece of that row's blocks blk[r] over elements [g, to) of act (Sub32):
   every format's fallback for the rows its tile cannot prove. */
AIV __m512 ln_ref_pieces(__m512 p, uint32_t need, dn_type type, const uint8_t *const blk[LN_ROWS],
                         const dn_act_row *act, size_t g, size_t to)
{
    float v[LN_ROWS];
    _mm512_storeu_ps(v, p);
    for (int r = 0; r < LN_ROWS; r++)
        if (need >> r & 1) v[r] = dn_dot_piece_of_bytes(type, blk[r], act, DN_ACT_SUB32, g, to);
    return _mm512_loadu_ps(v);
}

/* One column block (nc columns, col) of the tile's group g: each column's
   pieces added to its chains (ln_add_piece). */
AIV void ln_group(const ln_tile *T, const uint8_t *const blk[LN_ROWS], const mm_col *col, int nc,
                  size_t g, float (*acc)[LN_ROWS], uint32_t *tiny)
{
    const size_t gi = g / DN_GROUP;
    for (int j0 = 0; j0 < nc; j0 += 4) {
        const dn_dot_act *a[4];
        int wide = 0, slow = 0;
        for (int j = 0; j < 4; j++) {
            const int c = j0 + j < nc ? j0 + j : j0;
            a[j] = col[c].a;
            if (!a[j]->fok[gi]) /* fok implies gok */
                slow |= 1 << j;
            else if ((long)T->scmax * ln_fsum(a[j], g / 32) > LN_BOUND)
                wide = 1;
        }
        __m512 p[4];
        ln_quad(T, a, g, wide, p);
        for (int j = 0; j < 4 && j0 + j < nc; j++) {
            if (slow >> j & 1)
                p[j] = ln_ref_pieces(p[j], 0xFFFF, DN_TYPE_Q4_K, blk, col[j0 + j].act, g,
                                     g + DN_GROUP);
            ln_add_piece(p[j], acc[j0 + j], &tiny[j0 + j]);
        }
    }
}

#include "dot_mm_lanes_q6.h"
#include "dot_mm_lanes_q8.h"

/* 1 when one of the 16 rows (at rp, `blocks` blocks of bb bytes each) has
   an unreadable block: a binary16 scale d (every format) or dm (Q4_K) that
   is an infinity or a NaN. */
AIV int ln_unreadable(dn_type type, const uint8_t *const rp[LN_ROWS], size_t blocks, size_t bb)
{
    const uint16_t e = 0x7C00;
    const size_t d_at = (size_t)dn_d_at(type);
    for (int r = 0; r < LN_ROWS; r++)
        for (size_t b = 0; b < blocks; b++) {
            const uint8_t *p = rp[r] + b * bb;
            if ((dn_load_u16(p + d_at) & e) == e) return 1;
            if (type == DN_TYPE_Q4_K && (dn_load_u16(p + 2) & e) == e) return 1;
        }
    return 0;
}

/* The tile of the 16 rows' group g (blk) for the columns col, by format. */
AIV void ln_run_group(dn_type type, const uint8_t *const blk[LN_ROWS], const mm_col *col, int nc,
                      size_t g, size_t n, float (*acc)[LN_ROWS], uint32_t *tiny)
{
    if (type == DN_TYPE_Q8_0) {
        l8_tile T;
        const size_t G = (n - g < DN_GROUP ? n - g : DN_GROUP) / 32;
        l8_load(&T, blk, (int)G);
        l8_group(&T, blk, col, nc, g, acc, tiny);
    } else if (type == DN_TYPE_Q6_K) {
        l6_tile T;
        l6_load(&T, blk);
        l6_group(&T, blk, col, nc, g, acc, tiny);
    } else {
        ln_tile T;
        ln_scales(&T, blk);
        for (int p = 0; p < 4; p++) ln_digits(&T, blk, p);
        ln_group(&T, blk, col, nc, g, acc, tiny);
    }
}

/* The bytes of a group of 256 elements. */
static size_t ln_group_bytes(dn_type type)
{
    return type == DN_TYPE_Q8_0 ? 8 * L8_BYTES : type == DN_TYPE_Q6_K ? L6_BYTES : LN_QBYTES;
}

/* dn_mm_lanes_store of one column's tile: where no row met a tiny piece,
   the chains' result rule (dn_chain_result: a NaN made DN_NAN_BITS) in the
   lanes and one store (row by row it was 3.8 % of the n = 512 profile). */
AIV dn_status ln_store(dn_type type, const uint8_t *w, size_t rows, size_t n, const dn_act_row *act,
                       const float acc[LN_ROWS], uint32_t tiny, size_t r, float *o, size_t *bad)
{
    if (tiny) return dn_mm_lanes_store(type, w, rows, n, act, acc, tiny, LN_ROWS, r, o, bad);
    const __m512 v = _mm512_loadu_ps(acc);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    _mm512_storeu_ps(o + r, _mm512_mask_mov_ps(
                                v, nan, _mm512_castsi512_ps(_mm512_set1_epi32((int)DN_NAN_BITS))));
    return DN_OK;
}

/* Rows [r, r + 16) (readable) against columns [c0, c1). */
AIV dn_status ln_tile_rows(dn_type type, const dn_act *x, size_t c0, size_t c1,
                           const uint8_t *const rp[LN_ROWS], const uint8_t *w, size_t rows,
                           size_t r, float *out, size_t ldo, size_t *bad)
{
    const size_t n = x->n, gb = ln_group_bytes(type);
    const size_t cb = c1 - c0; /* one column block (the caller's) */
    mm_col col[LN_COLS];
    float acc[LN_COLS][LN_ROWS];
    uint32_t tiny[LN_COLS];
    for (size_t b0 = c0; b0 < c1; b0 += cb) {
        const int nc = (int)(c1 - b0 < cb ? c1 - b0 : cb);
        for (int j = 0; j < nc; j++) {
            (void)dn_act_view(x, b0 + j, type, &col[j].act, &col[j].a);
            memset(acc[j], 0, sizeof acc[j]);
            tiny[j] = 0;
        }
        for (size_t g = 0; g < n; g += DN_GROUP) {
            const uint8_t *blk[LN_ROWS];
            for (int k = 0; k < LN_ROWS; k++) {
                blk[k] = rp[k] + g / DN_GROUP * gb;
                for (size_t o = 0; o < gb; o += 64) /* the next group into L1 */
                    _mm_prefetch((const char *)blk[k] + gb + o, _MM_HINT_T0);
            }
            ln_run_group(type, blk, col, nc, g, n, acc, tiny);
        }
        for (int j = 0; j < nc; j++) {
            dn_status st = ln_store(type, w, rows, n, col[j].act, acc[j], tiny[j], r,
                                    out + (b0 + (size_t)j - c0) * ldo, bad);
            if (st != DN_OK) return st;
        }
    }
    return DN_OK;
}

/* 1 when the lanes cover the product: Q4_K, Q6_K or Q8_0, Sub32, the
   format's least column count or more (L6_MIN_COLS for Q6_K), every
   column's side narrow and usable. */
static int ln_covers(const dn_act *x, size_t c0, size_t c1, dn_type type)
{
    if (type != DN_TYPE_Q4_K && type != DN_TYPE_Q6_K && type != DN_TYPE_Q8_0) return 0;
    if (c1 - c0 < (type == DN_TYPE_Q6_K ? L6_MIN_COLS : LN_MIN_COLS)) return 0;
    return dn_mm_columns_narrow(x, c0, c1, type);
}

VNNI dn_status dn_dot_mm_lanes_avx512(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                                      dn_type type, const uint8_t *w, size_t rows, size_t r0,
                                      size_t r1, float *out, size_t ldo, size_t *bad)
{
    size_t r = r0;
    if (ln_covers(x, c0, c1, type)) {
        const size_t bb = dn_type_block_bytes(type), blocks = x->n / dn_type_block_elements(type);
        /* column blocks outside, row tiles inside: a block's activations
           (LN_ACT_BYTES) stay in L2 for every tile. The first block checks
           each tile just before it runs it (the check's reads bring the
           rows in: a separate pass first took Q4_K n = 8 1.23x the time) and
           ends at the first tile holding an unreadable block; the others
           run the tiles it ran. */
        size_t cb = LN_ACT_BYTES / (x->n + x->n / 2) / 4 * 4;
        cb = cb < 4 ? 4 : cb > LN_COLS ? LN_COLS : cb;
        for (size_t b0 = c0; b0 < c1; b0 += cb) {
            const size_t b1 = c1 - b0 < cb ? c1 : b0 + cb;
            size_t t = r0;
            for (; b0 == c0 ? r1 - t >= LN_ROWS : t < r; t += LN_ROWS) {
                const uint8_t *rp[LN_ROWS];
                for (int k = 0; k < LN_ROWS; k++) rp[k] = w + (t + (size_t)k) * blocks * bb;
                if (b0 == c0 && ln_unreadable(type, rp, blocks, bb)) break;
                dn_status st =
                    ln_tile_rows(type, x, b0, b1, rp, w, rows, t, out + (b0 - c0) * ldo, ldo, bad);
                if (st != DN_OK) return st;
            }
            if (b0 == c0) r = t;
        }
        if (r == r1) return DN_OK;
    }
    return dn_dot_mm_blocked_avx512(f, x, c0, c1, type, w, rows, r, r1, out, ldo, bad);
}
