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
    return dn_dot_mm_blocked_avx512(mat_vec_rows_act_avx512, x, c0, c1, type, w, rows, r0, r1, out,
                                    ldo, bad);
}

static NOINLINE dn_status pk_q8_0(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_packed4(c, DN_TYPE_Q8_0, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q4_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_packed4(c, DN_TYPE_Q4_K, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q5_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_packed4(c, DN_TYPE_Q5_K, r0, r1, out, bad);
}
static NOINLINE dn_status pk_q6_k(const dn_mv_ctx *c, size_t r0, size_t r1, float *out, size_t *bad)
{
    return mv_packed4(c, DN_TYPE_Q6_K, r0, r1, out, bad);
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
