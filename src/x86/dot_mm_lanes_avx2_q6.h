/* SPDX-License-Identifier: MIT */
/*
 * dot_mm_lanes_avx2_q6.h: Q6_K with the rows in the lanes, for the AVX2
 * prefill product (src/x86/dot_mm_lanes_avx2.c alone includes it, after
 * LA_ROWS, la_transpose, la_add_piece and la_ref_pieces): the AVX-512 kernel's
 * (dot_mm_lanes_q6.h) with eight rows in the int32 lanes of a ymm and AVX2
 * instructions only. A tile of 8 rows x one group of 256 is transposed once
 * (la6_tile: each 32-byte vector four 6-bit digits of each of the 8 rows,
 * the rows' 16 sub-block scales as words in the lanes of their own
 * vectors, d as doubles), then every column of a block of columns runs over
 * it: one broadcast of four codes feeds a vpmaddubsw against the digits
 * (0..63), whose eight dwords are the 8 rows.
 *
 * The pieces are the AVX-512 kernel's, so the repacked eight-row product's
 * (q6k8_sub32): the integers C_k = sum over chunk k's two sub-blocks s of
 * sc_s (raw_s - 32 bs16_s), A = sum_k C_k S_k (exact in any order under
 * gok), the limit test |A| < glim and one rounding of d A. A group that is
 * not gok, and a row whose A fails the test, gets the reference's piece.
 */
#ifndef DN_DOT_MM_LANES_AVX2_Q6_H
#define DN_DOT_MM_LANES_AVX2_Q6_H

#define LA6_BYTES 210 /* bytes of a Q6_K block: ql[128], qh[64], scales[16], d */
/* The fewest columns (as the AVX-512 kernel's L6_MIN_COLS; docs/dot.md, "Design notes"). */
#define LA6_MIN_COLS 2

/* One tile: 8 rows' group of 256 in the lanes. */
typedef struct la6_tile {
    __m256i q[8][8]; /* chunk k, dword u: lane r = row r's digits 4u..4u+3 (0..63) */
    __m256i scw[16]; /* sub-block s: lane r = row r's scale in both words */
    __m256i sc2[8];  /* chunk k: lane r = row r's scales (sc_2k, sc_2k+1) as words */
    __m256d d[2];    /* rows 0-3, 4-7: d as doubles */
} la6_tile;

/* The digits of chunks 4h .. 4h + 3 of the 8 blocks blk[r] into T->q: the
   strips ql[64h ..] (chunks 4h low nibbles, 4h + 2 high), ql[64h + 32 ..]
   (4h + 1, 4h + 3) and qh[32h ..] (chunk 4h + j in bits 2j, 2j + 1)
   transposed alike (la_transpose), the digits put together byte by byte
   (blocks.c's read_q6_k: low | high << 4; the 16-bit shifts move bits
   within a byte only where the mask 0x30 keeps them). */
AI void la6_digits(la6_tile *T, const uint8_t *const blk[LA_ROWS], int h)
{
    __m256i R[8], X0[8], X1[8], Y[8];
    for (int r = 0; r < 8; r++) R[r] = load32(blk[r] + 64 * h);
    la_transpose(R, X0);
    for (int r = 0; r < 8; r++) R[r] = load32(blk[r] + 64 * h + 32);
    la_transpose(R, X1);
    for (int r = 0; r < 8; r++) R[r] = load32(blk[r] + 128 + 32 * h);
    la_transpose(R, Y);
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    for (int u = 0; u < 8; u++) {
        const __m256i x0 = X0[u], x1 = X1[u], y = Y[u];
        T->q[4 * h][u] = _mm256_or_si256(_mm256_and_si256(x0, m4),
                                         _mm256_and_si256(_mm256_slli_epi16(y, 4), m30));
        T->q[4 * h + 1][u] = _mm256_or_si256(_mm256_and_si256(x1, m4),
                                             _mm256_and_si256(_mm256_slli_epi16(y, 2), m30));
        T->q[4 * h + 2][u] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x0, 4), m4),
                                             _mm256_and_si256(y, m30));
        T->q[4 * h + 3][u] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x1, 4), m4),
                                             _mm256_and_si256(_mm256_srli_epi16(y, 2), m30));
    }
}

/* The tile of the 8 rows' group (blk[r]: row r's block); 1 when one of the
   blocks is unreadable (d an infinity or a NaN: T is then not to be used).
   The scales (bytes 192-207) are copied to hdr, dword w of
   row r gathered into lane r and each byte sign-extended in place; d
   (bytes 208-209) to doubles. */
AI int la6_load(la6_tile *T, const uint8_t *const blk[LA_ROWS])
{
    uint8_t hdr[LA_ROWS][16];
    uint16_t dh[LA_ROWS];
    for (int r = 0; r < LA_ROWS; r++) {
        memcpy(hdr[r], blk[r] + 192, 16);
        dh[r] = dn_load_u16(blk[r] + 208);
    }
    const __m256i rows16 = _mm256_setr_epi32(0, 16, 32, 48, 64, 80, 96, 112);
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    __m256i sc[16];
    for (int w = 0; w < 4; w++) {
        const __m256i V = _mm256_i32gather_epi32(
            (const int *)hdr, _mm256_add_epi32(rows16, _mm256_set1_epi32(4 * w)), 1);
        sc[4 * w] = _mm256_srai_epi32(_mm256_slli_epi32(V, 24), 24);
        sc[4 * w + 1] = _mm256_srai_epi32(_mm256_slli_epi32(V, 16), 24);
        sc[4 * w + 2] = _mm256_srai_epi32(_mm256_slli_epi32(V, 8), 24);
        sc[4 * w + 3] = _mm256_srai_epi32(V, 24);
    }
    for (int s = 0; s < 16; s++)
        T->scw[s] = _mm256_or_si256(_mm256_and_si256(sc[s], low), _mm256_slli_epi32(sc[s], 16));
    for (int k = 0; k < 8; k++)
        T->sc2[k] =
            _mm256_or_si256(_mm256_and_si256(sc[2 * k], low), _mm256_slli_epi32(sc[2 * k + 1], 16));
    const __m128i dv = _mm_loadu_si128((const __m128i *)dh);
    if (la_bad_f16(dv)) return 1;
    const __m256 d = _mm256_cvtph_ps(dv);
    T->d[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(d));
    T->d[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1));
    for (int h = 0; h < 2; h++) la6_digits(T, blk, h);
    return 0;
}

/* One column's sums A[h] = sum_k C_k S_k of the tile's group g (rows 0-3
   in A[0], 4-7 in A[1]). Per chunk k, eight vpmaddubsw of the digits with
   broadcast codes (words <= 2 * 63 * 127 = 16002), two of them added in
   int16 (<= 32004), times the sub-block's scale by vpmaddwd: sc_s raw_s in
   int32; the offsets' part -32 (sc_2k bs16_2k + sc_2k+1 bs16_2k+1) by one
   vpmaddwd of the scale pair with the negated sums (|bs16| <= 16 * 128)
   shifted by 5; so C_k (|C_k| < 2^24) as the reference's integers. A's
   terms and partial sums are multiples of 2^emin below 2^(emin + 52) where
   the group is gok (dot_act.c), so the fma adds them exactly, in any
   order; elsewhere the caller discards them. */
AI void la6_col(const la6_tile *T, const dn_dot_act *a, size_t g, __m256d A[2])
{
    A[0] = A[1] = _mm256_setzero_pd();
#pragma GCC unroll 1
    for (int k = 0; k < 8; k++) {
        const int8_t *c = a->c8 + g + 32 * (size_t)k;
        const int32_t *bs = a->bs16 + g / 16 + 2 * (size_t)k;
        __m256i m[8];
        for (int u = 0; u < 8; u++) {
            int32_t four;
            memcpy(&four, c + 4 * u, 4);
            m[u] = _mm256_maddubs_epi16(T->q[k][u], _mm256_set1_epi32(four));
        }
        const __m256i s0 = T->scw[2 * k], s1 = T->scw[2 * k + 1];
        const __m256i r0 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_add_epi16(m[0], m[1]), s0),
                                            _mm256_madd_epi16(_mm256_add_epi16(m[2], m[3]), s0));
        const __m256i r1 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_add_epi16(m[4], m[5]), s1),
                                            _mm256_madd_epi16(_mm256_add_epi16(m[6], m[7]), s1));
        const uint32_t nbs = (uint16_t)(int16_t)-bs[0] | (uint32_t)(uint16_t)(int16_t)-bs[1] << 16;
        const __m256i off =
            _mm256_slli_epi32(_mm256_madd_epi16(T->sc2[k], _mm256_set1_epi32((int32_t)nbs)), 5);
        const __m256i C = _mm256_add_epi32(_mm256_add_epi32(r0, r1), off);
        const __m256d S = _mm256_broadcast_sd(a->S + g / 32 + (size_t)k);
        A[0] = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(C)), S, A[0]);
        A[1] = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(C, 1)), S, A[1]);
    }
}

/* The 8 pieces of column (act, a)'s group g from its sums A (la6_col):
   where the group is gok and |A| < glim, d A rounded once (exact product:
   d has 11 bits, A is a multiple of 2^emin below 2^(emin + 42)); the other
   rows, or all where the group is not gok, the reference's piece. */
AI __m256 la6_piece(const la6_tile *T, const uint8_t *const blk[LA_ROWS], const dn_act_row *act,
                    const dn_dot_act *a, size_t g, const __m256d A[2])
{
    const size_t gi = g / DN_GROUP;
    int need = 0xFF;
    __m256 p = _mm256_setzero_ps();
    if (a->gok[gi]) {
        const __m256d lim = _mm256_set1_pd(a->glim[gi]);
        __m128 f[2];
        need = 0;
        for (int h = 0; h < 2; h++) {
            const __m256d ok = _mm256_cmp_pd(abs_pd(A[h]), lim, _CMP_LT_OQ);
            need |= (~_mm256_movemask_pd(ok) & 15) << 4 * h;
            /* + 0: an exact 0 is +0, as the reference's exact sum gives */
            f[h] =
                _mm256_cvtpd_ps(_mm256_add_pd(_mm256_mul_pd(T->d[h], A[h]), _mm256_setzero_pd()));
        }
        p = _mm256_set_m128(f[1], f[0]);
    }
    return need ? la_ref_pieces(p, (uint32_t)need, DN_TYPE_Q6_K, blk, act, g, g + DN_GROUP) : p;
}

/* One column block (nc columns, col) of the tile's group g: each column's
   pieces added to its chains acc[j] (in order), the lanes that met a tiny
   piece into tiny[j] (la_add_piece). */
AI void la6_group(const la6_tile *T, const uint8_t *const blk[LA_ROWS], const mm_col *col, int nc,
                  size_t g, float (*acc)[LA_ROWS], uint32_t *tiny)
{
    for (int j = 0; j < nc; j++) {
        __m256d A[2];
        la6_col(T, col[j].a, g, A);
        la_add_piece(la6_piece(T, blk, col[j].act, col[j].a, g, A), acc[j], &tiny[j]);
    }
}

#endif
