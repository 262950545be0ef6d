/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_lanes_q6.h: Q6_K with the rows in the lanes, for the AVX-512
 * prefill product (src/x86/dot_mm_lanes_avx512.c alone includes it, after
 * defining LN_ROWS, ln_transpose, ln_add_piece and ln_ref_pieces). A tile of 16 rows x one
 * group of 256 is transposed once (l6_tile: each 64-byte vector four 6-bit
 * digits of each of the 16 rows, the rows' 16 sub-block scales in the lanes
 * of their own vectors, d as doubles), then every column of a block of
 * columns runs over it: one broadcast of four codes feeds a vpdpbusd whose
 * 16 int32 lanes are the 16 rows.
 *
 * The pieces are the repacked eight-row product's (q6k8_sub32 in
 * dot_avx512_q6k8.h, big_sub32_4's with has_o 0) for 16 rows: the same
 * integers C_k = sum over chunk k's two sub-blocks s of sc_s (raw_s - 32
 * bs16_s), the same A = sum_k C_k S_k (exact in any order under gok), the
 * same limit test |A| < glim and one rounding of d A, so the same bits. A
 * group that is not gok, and a row whose A fails the test, gets the
 * reference's piece.
 */
#ifndef DN_DOT_MM_LANES_Q6_H
#define DN_DOT_MM_LANES_Q6_H

#define L6_BYTES 210 /* bytes of a Q6_K block: ql[128], qh[64], scales[16], d */
/* Two columns: in cache 1.5x the blocked kernel's speed; 4096^2 from
   memory, two to four columns are bound by the weights' reads (the two
   kernels within the host's noise), eight 1.4x (docs/log/dot.md, "Q6_K with the rows in the
   lanes (AVX-512)"). */
#define L6_MIN_COLS 2

/* One tile: 16 rows' group of 256 in the lanes. */
typedef struct l6_tile {
    __m512i q[8][8]; /* chunk k, dword u: lane r = row r's digits 4u..4u+3 (0..63) */
    __m512i sc[16];  /* sub-block s (16 elements): lane r = row r's scale (-128..127) */
    __m512d d[2];    /* rows 0-7, 8-15: d as doubles */
} l6_tile;

/* The digits of chunks 4h .. 4h + 3 of the 16 blocks blk[r] into T->q. The
   strips ql[64h ..] (x0: chunks 4h low nibbles, 4h + 2 high), ql[64h + 32
   ..] (x1: 4h + 1, 4h + 3) and qh[32h ..] (y: chunk 4h + j in bits 2j, 2j
   + 1) are transposed alike (ln_transpose: dword u of row r in lane r of
   X[u], byte l of a strip element l of its chunks), so the digits are put
   together byte by byte (blocks.c's read_q6_k: low | high << 4). */
AIV void l6_digits(l6_tile *T, const uint8_t *const blk[LN_ROWS], int h)
{
    __m512i X0[8], X1[8], Y[8];
    for (int i = 0; i < 8; i++) {
        const uint8_t *a = blk[i], *b = blk[i + 8];
        X0[i] = load2x32(a + 64 * h, b + 64 * h);
        X1[i] = load2x32(a + 64 * h + 32, b + 64 * h + 32);
        Y[i] = load2x32(a + 128 + 32 * h, b + 128 + 32 * h);
    }
    ln_transpose(X0);
    ln_transpose(X1);
    ln_transpose(Y);
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    for (int u = 0; u < 8; u++) {
        const __m512i x0 = X0[u], x1 = X1[u], y = Y[u];
        /* 0xF8: a | (b & c); the 16-bit shifts move bits within a byte
           only where the mask keeps them */
        T->q[4 * h][u] =
            _mm512_ternarylogic_epi32(_mm512_and_si512(x0, m4), _mm512_slli_epi16(y, 4), m30, 0xF8);
        T->q[4 * h + 1][u] =
            _mm512_ternarylogic_epi32(_mm512_and_si512(x1, m4), _mm512_slli_epi16(y, 2), m30, 0xF8);
        T->q[4 * h + 2][u] =
            _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(x0, 4), m4), y, m30, 0xF8);
        T->q[4 * h + 3][u] = _mm512_ternarylogic_epi32(
            _mm512_and_si512(_mm512_srli_epi16(x1, 4), m4), _mm512_srli_epi16(y, 2), m30, 0xF8);
    }
}

/* The tile of the 16 rows' group (blk[r]: row r's block, readable: checked
   by the caller). The scales (bytes 192-207) are copied to hdr, dword w of
   row r gathered into lane r and each byte sign-extended in place; d
   (bytes 208-209) to doubles. */
AIV void l6_load(l6_tile *T, const uint8_t *const blk[LN_ROWS])
{
    uint8_t hdr[LN_ROWS][16];
    uint16_t dh[LN_ROWS];
    for (int r = 0; r < LN_ROWS; r++) {
        memcpy(hdr[r], blk[r] + 192, 16);
        dh[r] = dn_load_u16(blk[r] + 208);
    }
    const __m512i rows16 =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(16));
    for (int w = 0; w < 4; w++) {
        const __m512i V =
            _mm512_i32gather_epi32(_mm512_add_epi32(rows16, _mm512_set1_epi32(4 * w)), hdr, 1);
        T->sc[4 * w] = _mm512_srai_epi32(_mm512_slli_epi32(V, 24), 24);
        T->sc[4 * w + 1] = _mm512_srai_epi32(_mm512_slli_epi32(V, 16), 24);
        T->sc[4 * w + 2] = _mm512_srai_epi32(_mm512_slli_epi32(V, 8), 24);
        T->sc[4 * w + 3] = _mm512_srai_epi32(V, 24);
    }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dh));
    T->d[0] = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
    T->d[1] = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)));
    for (int h = 0; h < 2; h++) l6_digits(T, blk, h);
}

/* Four columns' sums A[j] = sum_k C_k S_k of the tile's group g (rows 0-7
   in A[j][0], 8-15 in A[j][1]). Per chunk k and column, two chains of four
   vpdpbusd (sub-blocks 2k and 2k + 1: elements 0-15, 16-31) started at -32
   bs16_s give raw_s - 32 bs16_s = sum (q - 32) c per row, |.| <= 16 * 32 *
   127; times the rows' scales (vpmulld, |sc| <= 128) and added, C_k (|C_k|
   < 2^24) as the reference's integers. A's terms and partial sums are
   multiples of 2^emin below 2^(emin + 52) where the group is gok
   (dot_act.c), so the fma adds them exactly, in any order; elsewhere the
   caller discards them. m (1..4, a constant where inlined): the columns
   run, the last block's remainder not padded with repeats (in cache two
   columns ran 1.18x, six 1.10x the padded form's speed). */
AIV void l6_quad(const l6_tile *T, const dn_dot_act *const a[4], size_t g, int m, __m512d A[4][2])
{
    int32_t bias[4][16]; /* -32 bs16_s of each column's 16 sub-blocks (as l8_quad's) */
    for (int j = 0; j < 4; j++) {
        A[j][0] = A[j][1] = _mm512_setzero_pd();
        const __m512i b = _mm512_loadu_si512(a[j]->bs16 + g / 16);
        _mm512_storeu_si512(bias[j],
                            _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(b, 5)));
    }
#pragma GCC unroll 1
    for (int k = 0; k < 8; k++) {
        __m512i dg[8];
        for (int u = 0; u < 8; u++) dg[u] = T->q[k][u];
        const __m512i s0 = T->sc[2 * k], s1 = T->sc[2 * k + 1];
        for (int j = 0; j < m; j++) {
            const int8_t *c = a[j]->c8 + g + 32 * (size_t)k;
            __m512i lo = _mm512_set1_epi32(bias[j][2 * k]),
                    hi = _mm512_set1_epi32(bias[j][2 * k + 1]);
            for (int u = 0; u < 4; u++) {
                lo = dpbusd_bcst(lo, dg[u], c + 4 * u);
                hi = dpbusd_bcst(hi, dg[u + 4], c + 16 + 4 * u);
            }
            const __m512i C =
                _mm512_add_epi32(_mm512_mullo_epi32(lo, s0), _mm512_mullo_epi32(hi, s1));
            const __m512d S = _mm512_set1_pd(a[j]->S[g / 32 + (size_t)k]);
            A[j][0] = _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(C)), S, A[j][0]);
            A[j][1] =
                _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(C, 1)), S, A[j][1]);
        }
    }
}

/* The 16 pieces of column (act, a)'s group g from its sums A (l6_quad):
   where the group is gok and |A| < glim, d A rounded once (exact product:
   d has 11 bits, A is a multiple of 2^emin below 2^(emin + 42)); the other
   rows, or all where the group is not gok, the reference's piece. */
AIV __m512 l6_piece(const l6_tile *T, const uint8_t *const blk[LN_ROWS], const dn_act_row *act,
                    const dn_dot_act *a, size_t g, const __m512d A[2])
{
    const size_t gi = g / DN_GROUP;
    int need = 0xFFFF;
    __m512 p = _mm512_setzero_ps();
    if (a->gok[gi]) {
        const __m512d lim = _mm512_set1_pd(a->glim[gi]), sign = _mm512_set1_pd(-0.0);
        __m256 f[2];
        need = 0;
        for (int h = 0; h < 2; h++) {
            const __mmask8 ok = _mm512_cmp_pd_mask(_mm512_andnot_pd(sign, A[h]), lim, _CMP_LT_OQ);
            need |= (int)(uint8_t)~ok << 8 * h;
            /* + 0: an exact 0 is +0, as the reference's exact sum gives */
            f[h] =
                _mm512_cvtpd_ps(_mm512_add_pd(_mm512_mul_pd(T->d[h], A[h]), _mm512_setzero_pd()));
        }
        p = _mm512_insertf32x8(_mm512_castps256_ps512(f[0]), f[1], 1);
    }
    return need ? ln_ref_pieces(p, (uint32_t)need, DN_TYPE_Q6_K, blk, act, g, g + DN_GROUP) : p;
}

/* One column block (nc columns, col) of the tile's group g: each column's
   pieces added to its chains acc[j] (in order), the lanes that met a tiny
   piece into tiny[j] (ln_group's way). */
AIV void l6_group(const l6_tile *T, const uint8_t *const blk[LN_ROWS], const mm_col *col, int nc,
                  size_t g, float (*acc)[LN_ROWS], uint32_t *tiny)
{
    for (int j0 = 0; j0 < nc; j0 += 4) {
        const dn_dot_act *a[4];
        for (int j = 0; j < 4; j++) a[j] = col[j0 + j < nc ? j0 + j : j0].a;
        __m512d A[4][2];
        switch (nc - j0) { /* the column count a constant in each copy */
        case 1: l6_quad(T, a, g, 1, A); break;
        case 2: l6_quad(T, a, g, 2, A); break;
        case 3: l6_quad(T, a, g, 3, A); break;
        default: l6_quad(T, a, g, 4, A); break;
        }
        for (int j = 0; j < 4 && j0 + j < nc; j++) {
            const __m512 p = l6_piece(T, blk, col[j0 + j].act, a[j], g, A[j]);
            ln_add_piece(p, acc[j0 + j], &tiny[j0 + j]);
        }
    }
}

#endif
