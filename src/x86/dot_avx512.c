/* SPDX-License-Identifier: MIT */
/*
 * The quantized matrix-vector product on AVX-512 with VNNI: bit for bit the
 * reference of src/dot.c, as the AVX2 kernels (dot_avx2.c says how,
 * docs/dot.md "Design notes" says why).
 *
 * What is new here is mostly the integer half (dot_avx512_decode.h): a
 * group's exact chunk sums with 64 elements per instruction, vpdpbusd /
 * vpackssdw / vpdpwssd in place of maddubs + madd + add. The floating-point
 * half (the chunk sums times the scales, rounded where that is provably the
 * reference's rounding, four rows in the lanes of a double vector) is the
 * AVX2 kernels' own (dot_avx2_pieces.h), so the pieces are the same
 * functions of the same integers; for Q4_K/Q5_K's factored groups it drops
 * the limit tests the lane bounds make redundant and runs one group late
 * (pending4, batch4).
 *
 * Covered: Q8_0, Q4_K, Q5_K and Q6_K under Sub32 scaling with narrow codes
 * (every code within +-127: one word), what a Q8_0 or Q4_K_M model's
 * decode runs. Every other case (other formats, per-block scaling, two
 * words, an activation side that is not usable) runs the AVX2 table, so the
 * table has every entry.
 */
#include "../dot_kernels.h"
#include "../dot_shared.h"
#include "dot_avx2_decode.h"
#include "dot_avx2_pieces.h"
#include "dot_avx512_decode.h"
#include "dot_avx512_q6k8.h"
#include "dot_avx512_q808.h"

#include <immintrin.h>
#include <string.h>

/* Q4_K, Q5_K: four rows' chunk sums and mins where the group's scales do
   not factor. Out of line: inlined, its constants held in registers across
   the row loop slowed the factored path by about 5 % in L2. */
static __attribute__((noinline, target("avx512vnni"))) void
k_chunks4(dn_type t, const uint8_t *const blk[4], const int8_t *c8, __m256i C[4], __m256i O[4])
{
    for (int r = 0; r < 4; r++) C[r] = k_chunks(t, blk[r], c8, &O[r]);
}

/* A factored Q4_K/Q5_K group whose floating-point half is deferred: the
   integer totals and the scales it needs. */
typedef struct {
    __m256i C[4];
    __m512i mb;
    __m256d ds, dms; /* d 2^emin, dm 2^emin */
    int on;
} pending4;

/* The four pieces of a pending group. d (A/2^emin) 2^emin as (A/2^emin)
   (d 2^emin): the same exact product (a power of two scales exactly, far
   from the double's range ends), one multiply less on the chain.
   big_sub32_AB's limits hold without a test: A = Aint 2^emin with |Aint| <
   8 2^31 (eight int32 lanes) and B = Bint 2^emin with |Bint| < 2^31, both
   below glim = 2^(emin + 42) (dot_act.c: g2e and glim of one emin), so d A
   and dm B are exact and no lane needs the reference. */
AIV __m128 pending_pieces(const pending4 *q)
{
    const __m256d dA = _mm256_mul_pd(rows_total4_pd(q->C), q->ds);
    const __m256d dmB =
        _mm256_mul_pd(lane_sums_pd(q->mb), _mm256_sub_pd(_mm256_setzero_pd(), q->dms));
    return round_sum(dA, dmB);
}

/* Q4_K, Q5_K, Q6_K: the four rows' pieces of a Sub32 group into *p (lanes
   in *need for the reference), or for a factored group its integer half
   into *q (q->on set), whose pieces pending_pieces gives; -1 when a block
   is unreadable, else 0. dot_avx2.c's big_group and big_group_narrow with
   the chunk sums from k_factored4 / q6_k_chunks. */
AIV int big_group4(const dn_dot_act *a, dn_type t, const uint8_t *const blk[4], size_t g, __m128 *p,
                   int *need, pending4 *q)
{
    const size_t gi = g / DN_GROUP;
    const double *S = a->S + g / 32;
    int bad = 0;
    __m256d d, dm = _mm256_setzero_pd();
    if (t == DN_TYPE_Q6_K)
        d = scales4(blk, dn_d_at(t), &bad);
    else
        scales4x2(blk, dn_d_at(t), &d, &dm, &bad);
    if (bad) return -1;
    if (!a->gok[gi]) {
        *p = _mm_setzero_ps();
        *need = 15;
        return 0;
    }
    __m256i C[4], O[4];
    if (t == DN_TYPE_Q6_K) {
        for (int r = 0; r < 4; r++) {
            C[r] = q6_k_chunks(blk[r], a->c8 + g, a->bs16n + g / 16);
            O[r] = _mm256_setzero_si256();
        }
        *p = big_sub32_4(C, O, 0, S, a->glim[gi], d, dm, need);
        return 0;
    }
    if (a->fok[gi]) { /* big_group_factored: the floating-point half deferred */
        k_factored4(t, blk, a->c8 + g, a->f16 + g / 32, a->bs32 + g / 32, q->C, &q->mb);
        const __m256d s = _mm256_set1_pd(a->g2e[gi]);
        q->ds = _mm256_mul_pd(d, s);
        q->dms = _mm256_mul_pd(dm, s);
        q->on = 1;
        return 0;
    }
    /* scales too far apart to factor: chunk sums, the mins alone in O (the
       products P hold bs32 S) */
    k_chunks4(t, blk, a->c8 + g, C, O);
    __m256d S0 = _mm256_loadu_pd(S), S1 = _mm256_loadu_pd(S + 4);
    __m256d P0 = _mm256_loadu_pd(a->P + g / 32), P1 = _mm256_loadu_pd(a->P + g / 32 + 4);
    __m256d B = _mm256_sub_pd(_mm256_setzero_pd(), rows_dot_S(O, P0, P1));
    *p = big_sub32_AB(rows_dot_S(C, S0, S1), B, 1, a->glim[gi], d, dm, need);
    return 0;
}

/* Q8_0: the four rows' pieces of a Sub32 group of G blocks (dot_avx2.c's
   small_group); -1 when a block is unreadable, else 0. */
AIV int q8_0_group4(const dn_dot_act *a, size_t bb, const uint8_t *const blk[4], size_t g, int G,
                    __m128 *p, int *need)
{
    const dn_type t = DN_TYPE_Q8_0;
    const size_t gi = g / DN_GROUP;
    __m256 d[4], m[4];
    __m256i C[4];
    int bad = 0;
    if (G == 8) {
        for (int r = 0; r < 4; r += 2) {
            const __m512 s = q8_0_scales2(blk[r], blk[r + 1], &bad);
            d[r] = _mm512_castps512_ps256(s);
            d[r + 1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1));
        }
    } else {
        for (int r = 0; r < 4; r++) bad |= small_scales(t, blk[r], bb, G, &d[r], &m[r]);
    }
    if (bad) return -1;
    if (!a->gok[gi]) {
        *p = _mm_setzero_ps();
        *need = 15;
        return 0;
    }
    if (G == 8)
        q8_0_chunks4(blk, bb, a->c8 + g, a->bs32 + g / 32, C);
    else /* the row's last, partial group */
        for (int r = 0; r < 4; r++) C[r] = small_narrow(t, blk[r], bb, G, a->c8 + g, NULL, 0);
    __m512d dz[4], az[4];
    small_scales_z(d, dz, az);
    *p = small_sub32_z(C, dz, az, a->S + g / 32, a->Sinf + g / 32, a->gfac[gi], need);
    return 0;
}

/* The lanes of p in `need`: the reference's own pieces of [g, to). */
AIV __m128 reference_pieces4(const dn_mv_ctx *c, dn_type t, const uint8_t *const blk[4], size_t g,
                             size_t to, __m128 p, int need)
{
    float f[4];
    _mm_storeu_ps(f, p);
    for (int r = 0; r < 4; r++)
        if (need >> r & 1) f[r] = dn_dot_piece_of_bytes(t, blk[r], c->act, c->scaling, g, to);
    return _mm_loadu_ps(f);
}

/* Four rows (pointers may repeat for a short batch): the row values into
   v[4]. Returns -1 when a block is unreadable, else the mask of rows that
   met a tiny piece (their chain must be redone). packed: row[0] is a
   repacked row group (decodenum/repack.h). */
AIV int batch4(const dn_mv_ctx *c, dn_type t, const uint8_t *const row[4], float v[4], int packed)
{
    const dn_dot_act *a = c->a;
    const int big = dn_big(t);
    const size_t n = c->n, bb = c->bb;
    __m128 acc = _mm_setzero_ps();
    __m128i tiny = _mm_setzero_si128(); /* lanes that met a tiny piece */
    /* A factored group's floating-point half runs after the next group's
       integer half: its inputs are then ready when it issues, and it does
       not hold the scheduler while the integer work waits behind it. */
    pending4 q[2];
    int cur = 0;
    q[0].on = q[1].on = 0;
    for (size_t g = 0; g < n; g += DN_GROUP) {
        const size_t gi = g / DN_GROUP;
        const int G = (int)((n - g < DN_GROUP ? n - g : DN_GROUP) / 32); /* chunks */
        const uint8_t *blk[4];
        const size_t here = big ? bb : (size_t)G * bb; /* a row's bytes of the group */
        for (int r = 0; r < 4; r++)
            blk[r] = packed ? row[0] + gi * 4 * (big ? bb : 8 * bb) + (size_t)r * here
                            : row[r] + (big ? gi * bb : (g / 32) * bb);
        dn_prefetch_group(c, t, blk, packed);
        __m128 p = _mm_setzero_ps(); /* set unless the group is pending */
        int need = 0;
        if ((big ? big_group4(a, t, blk, g, &p, &need, &q[cur])
                 : q8_0_group4(a, bb, blk, g, G, &p, &need)) < 0)
            return -1;
        if (q[cur ^ 1].on) { /* the group before, in order */
            const __m128 pp = pending_pieces(&q[cur ^ 1]);
            tiny = _mm_or_si128(tiny, _mm256_castsi256_si128(tiny8(_mm256_castps128_ps256(pp))));
            acc = _mm_add_ps(acc, pp);
            q[cur ^ 1].on = 0;
        }
        if (q[cur].on) {
            cur ^= 1;
            continue;
        }
        if (need) p = reference_pieces4(c, t, blk, g, big ? g + 256 : g + 32 * (size_t)G, p, need);
        tiny = _mm_or_si128(tiny, _mm256_castsi256_si128(tiny8(_mm256_castps128_ps256(p))));
        acc = _mm_add_ps(acc, p);
    }
    if (q[cur ^ 1].on) {
        const __m128 pp = pending_pieces(&q[cur ^ 1]);
        tiny = _mm_or_si128(tiny, _mm256_castsi256_si128(tiny8(_mm256_castps128_ps256(pp))));
        acc = _mm_add_ps(acc, pp);
    }
    _mm_storeu_ps(v, acc);
    return _mm_movemask_ps(_mm_castsi128_ps(tiny));
}

/* dot_avx2.c's mv_rows for the narrow Sub32 case. */
AIV dn_status mv_rows4(const dn_mv_ctx *c, dn_type t, size_t r0, size_t r1, float *out, size_t *bad)
{
    for (size_t r = r0; r < r1;) {
        float v[4];
        const uint8_t *rp[4];
        const size_t count = r1 - r < 4 ? r1 - r : 4;
        for (size_t k = 0; k < 4; k++) rp[k] = c->w + (r + (k < count ? k : 0)) * c->row_bytes;
        const int tiny = batch4(c, t, rp, v, 0);
        if (tiny < 0) /* an unreadable block: the reference finds and reports it */
            return dn_mv_ref(c, 0, r, r1, out, bad);
        dn_status st = dn_mv_finish(c, 0, r, 0, count, tiny, v, out, bad);
        if (st != DN_OK) return st;
        r += count;
    }
    return DN_OK;
}

/* mv_rows4 on a repacked matrix, one row group at a time (dot_avx2.c's
   mv_rows_packed). */
AIV dn_status mv_packed4(const dn_mv_ctx *c, dn_type t, size_t r0, size_t r1, float *out,
                         size_t *bad)
{
    for (size_t r = r0; r < r1;) {
        const size_t q = r / 4 * 4, k1 = r1 - q < 4 ? r1 - q : 4;
        const uint8_t *rp[4] = {c->w + q * c->row_bytes, NULL, NULL, NULL};
        float v[4];
        const int tiny = batch4(c, t, rp, v, 1);
        if (tiny < 0) /* an unreadable block: the reference finds and reports it */
            return dn_mv_ref(c, 1, r, r1, out, bad);
        dn_status st = dn_mv_finish(c, 1, q, r - q, k1, tiny, v, out, bad);
        if (st != DN_OK) return st;
        r = q + k1;
    }
    return DN_OK;
}

/* ---- Q4_K repacked: eight rows interleaved, the rows in the lanes ---------------- */

/* The eight rows' 6-bit sub-block scales (mins 0: byte 8 sub-block + row)
   or mins (mins 1: byte 8 row + sub-block) of an interleaved chunk
   (decodenum/repack.h) as bytes:
   the low four bits from the 64 bytes at 32 (low or high nibble), the high
   two from the 32 bytes at 96 (bits 0-1 for the first 32 scales, 2-3 for
   the next; 4-5 and 6-7 for the mins), each moved to bits 4-5 by a 16-bit
   shift below 8 (so from the same byte) and masked. */
AIV __m512i q4k8_scales(const uint8_t *grp, int mins)
{
    const __m512i L = _mm512_loadu_si512(grp + 32);
    const __m512i H = _mm512_broadcast_i64x4(load32(grp + 96));
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    if (!mins) {
        const __m512i sh = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
        return _mm512_ternarylogic_epi32(_mm512_and_si512(L, m4), _mm512_sllv_epi16(H, sh), m30,
                                         0xF8); /* a | (b & c) */
    }
    const __m512i sh = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    return _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(L, 4), m4),
                                     _mm512_srlv_epi16(H, sh), m30, 0xF8);
}

/* The raw chunk sums of eight interleaved rows: a 64-byte load holds eight
   bytes of each row (row r in qword r): its low nibbles are eight elements
   of chunk 2p, its high nibbles the same elements of chunk 2p + 1, so one
   broadcast of eight codes feeds eight rows, and vpdpbusd leaves each
   row's sums in its own two int32 lanes of D[k]: after four loads 16
   products per lane, |.| <= 16 * 15 * 127 = 30480 < 2^15. */
AIV void q4k8_raw(const uint8_t *grp, const int8_t *c8, __m512i D[8])
{
    const __m512i m4 = _mm512_set1_epi8(15);
    for (int k = 0; k < 8; k++) D[k] = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) { /* chunk pair p = i / 4, eight elements u = i % 4 */
        const int p = i / 4, u = i % 4;
        const __m512i x = _mm512_loadu_si512(grp + 128 + 64 * i);
        int64_t lo, hi;
        memcpy(&lo, c8 + 64 * p + 8 * u, 8);
        memcpy(&hi, c8 + 64 * p + 32 + 8 * u, 8);
        D[2 * p] = _mm512_dpbusd_epi32(D[2 * p], _mm512_and_si512(x, m4), _mm512_set1_epi64(lo));
        D[2 * p + 1] = _mm512_dpbusd_epi32(
            D[2 * p + 1], _mm512_and_si512(_mm512_srli_epi16(x, 4), m4), _mm512_set1_epi64(hi));
    }
}

/* sum_k W_rk D_rk per row r (lane r), W_rk word 8 k + r of M0 (k 0-3) and
   M1 (k 4-7), each term times S_k where S is given. vpackssdw narrows
   D_2q, D_2q+1 exactly (q4k8_raw's bound); per 128-bit lane L its words
   are rows 2L, 2L + 1 (two halves each) of chunk 2q, then of chunk 2q + 1,
   and vpdpwssd with the matching W gives one int32 per (row, chunk). The
   four vectors are widened to double and added there. */
AIV __m512d q4k8_weighted(const __m512i D[8], __m512i M0, __m512i M1, const double *S)
{
    /* word w of 128-bit lane L: W of chunk 2q + w / 4, row 2L + (w % 4) / 2 */
    const __m512i base = _mm512_set_epi16(15, 15, 14, 14, 7, 7, 6, 6, 13, 13, 12, 12, 5, 5, 4, 4,
                                          11, 11, 10, 10, 3, 3, 2, 2, 9, 9, 8, 8, 1, 1, 0, 0);
    __m512d lo = _mm512_setzero_pd(), hi = lo;
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
        const __m512i W = _mm512_permutex2var_epi16(
            M0, _mm512_add_epi16(base, _mm512_set1_epi16((short)(16 * q))), M1);
        const __m512i R = _mm512_dpwssd_epi32(_mm512_setzero_si512(),
                                              _mm512_packs_epi32(D[2 * q], D[2 * q + 1]), W);
        const __m512d l = _mm512_cvtepi32_pd(_mm512_castsi512_si256(R));
        const __m512d h = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(R, 1));
        if (S) { /* lanes [2q 2q 2q+1 2q+1] per 256 bits */
            const __m512d s =
                _mm512_mask_blend_pd(0xCC, _mm512_set1_pd(S[2 * q]), _mm512_set1_pd(S[2 * q + 1]));
            lo = _mm512_fmadd_pd(l, s, lo);
            hi = _mm512_fmadd_pd(h, s, hi);
        } else {
            lo = _mm512_add_pd(lo, l);
            hi = _mm512_add_pd(hi, h);
        }
    }
    /* lo: rows [0 1 0 1 2 3 2 3] (chunks 2q, 2q + 1), hi the same of rows 4-7 */
    return _mm512_add_pd(
        _mm512_permutex2var_pd(lo, _mm512_setr_epi64(0, 1, 4, 5, 8, 9, 12, 13), hi),
        _mm512_permutex2var_pd(lo, _mm512_setr_epi64(2, 3, 6, 7, 10, 11, 14, 15), hi));
}

/* A factored Q4_K group of eight interleaved rows: *A = [A_r / 2^emin] and
   *Bn = [-B_r / 2^emin], r = 0..7, as doubles (big_k_factored's integers,
   the rows in the lanes): q4k8_weighted with M_k = sc_k f_k (<= 63 *
   480): |raw_k M_k| <= 32 * 15 * 127 * 30240 < 2^31 per int32 (two chunks
   would not fit, hence the doubles: sums of at most eight int32, exact).
   -B / 2^emin = sum_k (m_k f_k) bs32_k: vpdpwssd of the rows' m_k f_k
   (word 8 r + k) with bs32 (< 2^15), eight terms per row below 8 * 30240
   * 4064 < 2^31. */
AIV void q4k8_factored(const uint8_t *grp, const int8_t *c8, const int16_t *f16,
                       const int32_t *bs32, __m512d *A, __m512d *Bn)
{
    const __m512i z = _mm512_setzero_si512();
    __m512i D[8];
    q4k8_raw(grp, c8, D);
    const __m512i F = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)f16));
    const __m512i sc = q4k8_scales(grp, 0), mn = q4k8_scales(grp, 1);
    /* M_k of the eight rows, word 8 k + r: sub-blocks 0-3 in M0, 4-7 in M1 */
    const __m512i fk =
        _mm512_setr_epi64(0, 0, 0x0001000100010001, 0x0001000100010001, 0x0002000200020002,
                          0x0002000200020002, 0x0003000300030003, 0x0003000300030003);
    const __m512i M0 = _mm512_mullo_epi16(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(sc)),
                                          _mm512_permutexvar_epi16(fk, F));
    const __m512i M1 =
        _mm512_mullo_epi16(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(sc, 1)),
                           _mm512_permutexvar_epi16(_mm512_add_epi16(fk, _mm512_set1_epi16(4)), F));
    *A = q4k8_weighted(D, M0, M1, NULL);
    const __m512i bs = _mm512_broadcast_i32x4(
        _mm_packs_epi32(_mm_loadu_si128((const __m128i *)bs32),
                        _mm_loadu_si128((const __m128i *)(bs32 + 4)))); /* exact: < 2^15 */
    const __m512i X0 = _mm512_dpwssd_epi32(
        z, _mm512_mullo_epi16(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(mn)), F), bs);
    const __m512i X1 = _mm512_dpwssd_epi32(
        z, _mm512_mullo_epi16(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(mn, 1)), F), bs);
    /* 128-bit lane L: row L in X0, row 4 + L in X1 (four int32 each) */
    __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi32(X0, X1), _mm512_unpackhi_epi32(X0, X1));
    t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, _MM_PERM_BADC));
    const __m512i g = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), t);
    *Bn = _mm512_cvtepi32_pd(_mm512_castsi512_si256(g));
}

/* The eight pieces of a Sub32 group that does not factor (gok, not fok),
   computed in the interleaved layout (AVX2's q4k8_unfactored2): A_r = sum_k
   sc_k raw_k S_k by q4k8_weighted with W = sc (|raw_k sc_k| <= 32 * 15 *
   127 * 63 < 2^22 per int32) and B_r = sum_k m_k P_k (P_k = bs32_k S_k, m_k
   byte k of row r's qword: a column per shift), big_group_narrow's values;
   every term and partial sum is exact (dn_dot_act_init's gok: a multiple
   of 2^emin below 2^(emin + 52)), so the order does not matter. Then d A +
   dm B as big_sub32_AB, and the reference's pieces for the rows it flags
   (their blocks put back together). */
static __attribute__((noinline, target("avx512vnni"))) __m256
q4k8_unfactored(const dn_mv_ctx *c, const uint8_t *grp, size_t g)
{
    const dn_dot_act *a = c->a;
    const double *S = a->S + g / 32, *P = a->P + g / 32;
    __m512i D[8];
    q4k8_raw(grp, a->c8 + g, D);
    const __m512i sc = q4k8_scales(grp, 0), mn = q4k8_scales(grp, 1);
    const __m512d A = q4k8_weighted(D, _mm512_cvtepu8_epi16(_mm512_castsi512_si256(sc)),
                                    _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(sc, 1)), S);
    __m512d B = _mm512_setzero_pd();
    for (int k = 0; k < 8; k++) {
        const __m512i m = _mm512_and_si512(_mm512_srli_epi64(mn, 8 * k), _mm512_set1_epi64(255));
        B = _mm512_fmadd_pd(_mm512_cvtepi64_pd(m), _mm512_set1_pd(P[k]), B);
    }
    const __m512d Bn = _mm512_sub_pd(_mm512_setzero_pd(), B);
    const __m512 f = _mm512_cvtph_ps(load32(grp)); /* d[8], dm[8] */
    const __m512d d = _mm512_cvtps_pd(_mm512_castps512_ps256(f));
    const __m512d dm =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1)));
    const __m512d lim = _mm512_set1_pd(a->glim[g / DN_GROUP]);
    const __mmask8 ok = _mm512_cmp_pd_mask(_mm512_abs_pd(A), lim, _CMP_LT_OQ) &
                        _mm512_cmp_pd_mask(_mm512_abs_pd(Bn), lim, _CMP_LT_OQ);
    const __m256 p = round_madd8(d, A, _mm512_mul_pd(dm, Bn));
    if (ok == 0xFF) return p;
    float v[8];
    _mm256_storeu_ps(v, p);
    for (int r = 0; r < 8; r++)
        if (!(ok >> r & 1)) {
            uint8_t blk[DN_Q4K8_BYTES / DN_Q4K8_ROWS];
            dn_q4k8_get(grp, r, blk);
            v[r] = dn_dot_piece_of_bytes(DN_TYPE_Q4_K, blk, c->act, c->scaling, g, g + 256);
        }
    return _mm256_loadu_ps(v);
}

/* The eight rows of an interleaved Q4_K row group (grp0: its first chunk):
   the row values into v[8]. Returns -1 when a block is unreadable, else the
   mask of rows that met a tiny piece. */
AIV int batch8_q4k(const dn_mv_ctx *c, const uint8_t *grp0, float v[8])
{
    const dn_dot_act *a = c->a;
    __m256 acc = _mm256_setzero_ps();
    __m256i tiny = _mm256_setzero_si256();
    for (size_t g = 0; g < c->n; g += DN_GROUP) {
        const size_t gi = g / DN_GROUP;
        const uint8_t *grp = grp0 + gi * DN_Q4K8_BYTES;
        /* the own stream 4 chunks (4.5 KiB) ahead into L1, across row groups
           (they follow one another), as the AVX2 loop: 8192 rows of 16384 from
           memory 1.21-1.28x faster (1 thread, CPU time) than the next row
           group's chunk into L2, which lost even to no software prefetch
           (docs/repack.md) */
        for (int o = 0; o < DN_Q4K8_BYTES; o += 64)
            _mm_prefetch((const char *)grp + 4 * DN_Q4K8_BYTES + o, _MM_HINT_T0);
        const __m256i h = load32(grp), e = _mm256_set1_epi16(0x7C00); /* d[8], dm[8] */
        if (_mm256_cmpeq_epi16_mask(_mm256_and_si256(h, e), e)) return -1;
        __m256 p;
        if (a->gok[gi] && a->fok[gi]) {
            __m512d A, Bn;
            q4k8_factored(grp, a->c8 + g, a->f16 + g / 32, a->bs32 + g / 32, &A, &Bn);
            const __m512 f = _mm512_cvtph_ps(h);
            const __m512d s = _mm512_set1_pd(a->g2e[gi]);
            const __m512d ds = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(f)), s);
            const __m512d dms = _mm512_mul_pd(
                _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1))),
                s);
            /* big_group_factored's pieces: no limit test (pending_pieces says why) */
            p = round_madd8(A, ds, _mm512_mul_pd(Bn, _mm512_sub_pd(_mm512_setzero_pd(), dms)));
        } else if (a->gok[gi]) {
            p = q4k8_unfactored(c, grp, g);
        } else {
            p = dn_q4k8_ref_pieces(c, grp, g);
        }
        tiny = _mm256_or_si256(tiny, tiny8(p));
        acc = _mm256_add_ps(acc, p);
    }
    _mm256_storeu_ps(v, acc);
    return _mm256_movemask_ps(_mm256_castsi256_ps(tiny));
}

/* The repacked Q4_K product, one interleaved row group at a time (its eight
   rows computed, the ones in [r0, r1) written). */
AIV dn_status mv_packed8_q4k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return dn_q4k8_rows(c, r0, r1, out, bad, batch8_q4k);
}

/* One function per format, the format a constant (as dot_avx2.c). */
#define NOINLINE __attribute__((noinline, target("avx512vnni")))

static NOINLINE dn_status mv_q8_0(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows4(c, DN_TYPE_Q8_0, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q4_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows4(c, DN_TYPE_Q4_K, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q5_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows4(c, DN_TYPE_Q5_K, r0, r1, out, bad);
}
static NOINLINE dn_status mv_q6_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_rows4(c, DN_TYPE_Q6_K, r0, r1, out, bad);
}

/* The table's entries: the four formats' row loops where the activation
   side is usable, Sub32 and narrow; the AVX2 table (complete) otherwise. */
static VNNI dn_status mat_vec_rows_act_avx512(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                              const dn_act_row *act, dn_act_scaling scaling,
                                              const dn_dot_act *a, size_t r0, size_t r1, float *out,
                                              size_t *bad)
{
    const int ours = a->usable && a->narrow && scaling == DN_ACT_SUB32;
    const dn_mv_ctx c = dn_mv_ctx_of(type, w, rows, n, act, scaling, a);
    switch (ours ? type : DN_TYPE_LIMIT) {
    case DN_TYPE_Q8_0: return mv_q8_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q4_K: return mv_q4_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_K: return mv_q5_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q6_K: return mv_q6_k(&c, r0, r1, out, bad);
    default:
        return dn_dot_avx2.mat_vec_rows_act(type, w, rows, n, act, scaling, a, r0, r1, out, bad);
    }
}

static dn_status mat_vec_rows_avx512(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                     const dn_act_row *act, dn_act_scaling scaling, size_t r0,
                                     size_t r1, float *out, size_t *bad)
{
    return dn_dot_rows_own_act(mat_vec_rows_act_avx512, type, w, rows, n, act, scaling, r0, r1, out,
                               bad);
}

static dn_status mat_mul_rows_avx512(const dn_act *x, size_t c0, size_t c1, dn_type type,
                                     const uint8_t *w, size_t rows, size_t r0, size_t r1,
                                     float *out, size_t ldo, size_t *bad)
{
    return dn_dot_mm_lanes_avx512(mat_vec_rows_act_avx512, x, c0, c1, type, w, rows, r0, r1, out,
                                  ldo, bad);
}

static NOINLINE dn_status pk_q8_0(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return dn_q4k8_rows(c, r0, r1, out, bad, batch8_q808); /* eight rows interleaved */
}
static NOINLINE dn_status pk_q4_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_packed8_q4k(c, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q5_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_packed4(c, DN_TYPE_Q5_K, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q6_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return dn_q4k8_rows(c, r0, r1, out, bad, batch8_q6k); /* eight rows interleaved */
}

/* The repacked product: the four formats' row loops where the activation
   side is usable, Sub32 and narrow; the AVX2 table's otherwise. */
static VNNI dn_status packed_rows_act_avx512(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                             const dn_act_row *act, dn_act_scaling scaling,
                                             const dn_dot_act *a, size_t r0, size_t r1, float *out,
                                             size_t *bad)
{
    const int ours = a->usable && a->narrow && scaling == DN_ACT_SUB32;
    const dn_mv_ctx c = dn_mv_ctx_of(type, w, rows, n, act, scaling, a);
    switch (ours ? type : DN_TYPE_LIMIT) {
    case DN_TYPE_Q8_0: return pk_q8_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q4_K: return pk_q4_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_K: return pk_q5_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q6_K: return pk_q6_k(&c, r0, r1, out, bad);
    default:
        return dn_dot_avx2.packed_rows_act(type, w, rows, n, act, scaling, a, r0, r1, out, bad);
    }
}

/* Registered for DN_ISA_AVX512 only on a CPU with AVX512-VNNI (dispatch.c). */
const dn_dot_kernels dn_dot_avx512 = {
    .mat_vec_rows = mat_vec_rows_avx512,
    .mat_vec_rows_act = mat_vec_rows_act_avx512,
    .mat_mul_rows = mat_mul_rows_avx512,
    .packed_rows_act = packed_rows_act_avx512,
};
