/* SPDX-License-Identifier: MIT */
/*
 * The Gated-DeltaNet eager rows on AVX-512, bit for bit dn_ref_gdn_rows (and
 * so the AVX2 kernel, whose comment in src/x86/gdn_avx2.c gives the rules
 * kept here: MXCSR = DAZ only, 32 lanes folded by dn_avx2_tree32, every
 * stored element flushed, its NaN the engine's one NaN, then rounded by the
 * store).
 *
 * Why AVX-512 pays here: with dk = 128 the key and the query are 16 ZMM
 * registers held across all of a head's rows, and a row (8 ZMM in f32) is
 * loaded once for its two dots and its update, where the AVX2 kernel reloads
 * k, q and the row. Lane l of the 32 is lane l % 16 of accumulator l / 16 % 2.
 * Other head sizes run the AVX2 kernel. The convolution is the AVX2 one on
 * 16 channels, with the AVX-512 silu.
 */
#include "../gdn_kernels.h"
#include "../math_kernels.h"
#include "avx2_common.h"
#include "avx512_half.h"

#include <stdint.h>

#include <immintrin.h>

#define INLINE static inline __attribute__((always_inline))
#define DK 128
#define VECS (DK / 16)

INLINE __m512 widen16(const void *row, dn_gdn_store store, size_t i)
{
    if (store == DN_GDN_STORE_F32) return _mm512_loadu_ps((const float *)row + i);
    __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + i));
    if (store == DN_GDN_STORE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* The engine's result rule under DAZ: x * 1 reads a denormal x as the zero
   of its sign and leaves any other value as it is; a NaN becomes the one
   NaN. The empty asm keeps the compiler from folding x * 1 to x. */
INLINE __m512 result16(__m512 x)
{
    __m512 one = _mm512_set1_ps(1.0f);
    __asm__("" : "+v"(one));
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, _mm512_mul_ps(x, one),
                                _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
}

/* Writes a result x through the store: f32 flushed and its NaN made the
   one NaN (result16), binary16 by dn_avx512_f16_round16 (which needs no
   flush first), bfloat16 by dn_f32_to_bf16's integer nearest-even rounding
   of the flushed result. */
INLINE void store16(void *row, dn_gdn_store store, size_t i, __m512 x)
{
    if (store == DN_GDN_STORE_F32) {
        _mm512_storeu_ps((float *)row + i, result16(x));
        return;
    }
    __m256i h;
    if (store == DN_GDN_STORE_F16) {
        h = dn_avx512_f16_round16(x);
    } else {
        __m512i u = _mm512_castps_si512(result16(x));
        __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
        u = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), odd));
        h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(u, 16));
    }
    _mm256_storeu_si256((__m256i *)((uint16_t *)row + i), h);
}

/* The 32 lanes of two accumulators, folded as dn_ref_fdot folds them (the
   result rule left to scalars16). */
INLINE float tree(__m512 lo, __m512 hi)
{
    return dn_avx2_tree32(_mm512_castps512_ps256(lo), _mm512_extractf32x8_ps(lo, 1),
                          _mm512_castps512_ps256(hi), _mm512_extractf32x8_ps(hi, 1));
}

/* The lanes of a dot kept as even and odd elements (lane i of e is the
   reference's lane 2i, of o lane 2i + 1), folded as dn_ref_fdot folds 32
   lanes: its first level adds the adjacent lanes 2i and 2i + 1, which is
   e + o in natural order; the rest is the tree over those 16 sums (the
   result rule left to scalars16). */
INLINE float tree_eo(__m512 e, __m512 o)
{
    __m512 p = _mm512_add_ps(e, o);
    __m256 q = _mm256_hadd_ps(_mm512_castps512_ps256(p), _mm512_extractf32x8_ps(p, 1));
    /* q: (p0+p1),(p2+p3),(p8+p9),(p10+p11) | (p4+p5),(p6+p7),(p12+p13),(p14+p15) */
    __m256 r = _mm256_hadd_ps(q, q);
    __m128 halves = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
    return _mm_cvtss_f32(_mm_add_ss(halves, _mm_movehdup_ps(halves)));
}

/* The scalar steps of 16 rows at once (lanes of `live` only): from the rows'
   dots with k and q (as the tree leaves them, before the result rule), coef
   into c and the read-out into out. Each step is the engine's operation: the
   operands read under DAZ, the result through result16, as dn_gdn_fmul and
   its kin do one at a time. */
INLINE __m512 scalars16(const float *rk_raw, const float *rq_raw, const float *v, __mmask16 live,
                        const dn_gdn_token *t, float *out)
{
    const __m512 d = _mm512_set1_ps(t->decay), beta = _mm512_set1_ps(t->beta);
    __m512 rk = result16(_mm512_loadu_ps(rk_raw)), rq = result16(_mm512_loadu_ps(rq_raw));
    __m512 dk = result16(_mm512_mul_ps(d, rk));
    __m512 c = result16(_mm512_sub_ps(_mm512_maskz_loadu_ps(live, v), dk));
    c = result16(_mm512_mul_ps(beta, c));
    __m512 a = result16(_mm512_mul_ps(d, rq));
    __m512 b = result16(_mm512_mul_ps(c, _mm512_set1_ps(t->kq)));
    __m512 o = result16(_mm512_mul_ps(result16(_mm512_add_ps(a, b)), _mm512_set1_ps(t->scale)));
    _mm512_mask_storeu_ps(out, live, o);
    return c;
}

/* 16 rows at a time, as rows128_bf16 takes them: their dots, their scalar
   steps in one vector (scalars16), their updates (the rows read again). */
INLINE void rows128(void *state, dn_gdn_store store, size_t r0, size_t r1, const dn_gdn_token *t,
                    float *out)
{
    __m512 k[VECS], q[VECS];
    for (int v = 0; v < VECS; v++) k[v] = _mm512_loadu_ps(t->k + 16 * v);
    for (int v = 0; v < VECS; v++) q[v] = _mm512_loadu_ps(t->q + 16 * v);
    const __m512 d = _mm512_set1_ps(t->decay);
    for (size_t j0 = r0; j0 < r1; j0 += 16) {
        size_t nb = r1 - j0 < 16 ? r1 - j0 : 16;
        float rk[16] = {0}, rq[16] = {0}, cs[16];
        for (size_t r = 0; r < nb; r++) {
            const void *row = dn_gdn_row_at(state, store, DK, j0 + r);
            /* lanes 0-15 take vectors 0, 2, 4, 6 in element order; 16-31 the odd ones */
            __m512 k0 = _mm512_setzero_ps(), k1 = k0, q0 = k0, q1 = k0;
            for (int v = 0; v < VECS; v += 2) {
                __m512 m0 = widen16(row, store, 16 * (size_t)v);
                __m512 m1 = widen16(row, store, 16 * (size_t)v + 16);
                k0 = _mm512_add_ps(k0, _mm512_mul_ps(m0, k[v]));
                k1 = _mm512_add_ps(k1, _mm512_mul_ps(m1, k[v + 1]));
                q0 = _mm512_add_ps(q0, _mm512_mul_ps(m0, q[v]));
                q1 = _mm512_add_ps(q1, _mm512_mul_ps(m1, q[v + 1]));
            }
            rk[r] = tree(k0, k1), rq[r] = tree(q0, q1);
        }
        __mmask16 live = (__mmask16)((1u << nb) - 1);
        _mm512_storeu_ps(cs, scalars16(rk, rq, t->v + j0, live, t, out + j0));
        for (size_t r = 0; r < nb; r++) {
            void *row = dn_gdn_row_at(state, store, DK, j0 + r);
            const __m512 c = _mm512_set1_ps(cs[r]);
            for (int v = 0; v < VECS; v++) {
                __m512 m = widen16(row, store, 16 * (size_t)v);
                __m512 x = _mm512_add_ps(_mm512_mul_ps(d, m), _mm512_mul_ps(c, k[v]));
                store16(row, store, 16 * (size_t)v, x);
            }
        }
    }
}

static void rows_avx512(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                        const dn_gdn_token *t, float *out)
{
    if (dk != DK) {
        dn_gdn_avx2.rows(state, store, dk, r0, r1, t, out);
        return;
    }
    unsigned csr = dn_avx2_enter();
    if (store == DN_GDN_STORE_F32)
        rows128(state, DN_GDN_STORE_F32, r0, r1, t, out);
    else if (store == DN_GDN_STORE_BF16)
        rows128(state, DN_GDN_STORE_BF16, r0, r1, t, out);
    else
        rows128(state, DN_GDN_STORE_F16, r0, r1, t, out);
    dn_avx2_leave(csr, 0.0f);
}

/* ---- a bfloat16 state on CPUs with AVX512_BF16 ------------------------------- */

/* rows128 for a bfloat16 state: 32 elements (64 bytes) widened by a shift
   (even elements) and a mask (odd ones), so the key and the query are held
   split the same way; a row's bytes are half the f32 row's and its
   conversions one instruction per 32 elements each way. */
DN_BF16_TARGET static void rows128_bf16(uint16_t *state, size_t r0, size_t r1,
                                        const dn_gdn_token *t, float *out)
{
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    __m512i order;
    {
        uint16_t at[32];
        for (int i = 0; i < 16; i++) at[2 * i] = (uint16_t)i, at[2 * i + 1] = (uint16_t)(16 + i);
        order = _mm512_loadu_si512(at);
    }
    __m512 ke[4], ko[4], qe[4], qo[4];
    for (int c = 0; c < 4; c++) {
        __m512 a = _mm512_loadu_ps(t->k + 32 * c), b = _mm512_loadu_ps(t->k + 32 * c + 16);
        ke[c] = _mm512_permutex2var_ps(a, even, b), ko[c] = _mm512_permutex2var_ps(a, odd, b);
        a = _mm512_loadu_ps(t->q + 32 * c), b = _mm512_loadu_ps(t->q + 32 * c + 16);
        qe[c] = _mm512_permutex2var_ps(a, even, b), qo[c] = _mm512_permutex2var_ps(a, odd, b);
    }
    const __m512 d = _mm512_set1_ps(t->decay);
    const __m512i high = _mm512_set1_epi32((int)0xFFFF0000u);
    /* 16 rows at a time: their dots, then their scalar steps in one vector
       (they took as many instructions as the row's vector work, one row at
       a time), then their updates (the rows read again, from L1) */
    for (size_t j0 = r0; j0 < r1; j0 += 16) {
        size_t nb = r1 - j0 < 16 ? r1 - j0 : 16;
        float rk[16] = {0}, rq[16] = {0}, cs[16];
        for (size_t r = 0; r < nb; r++) {
            const uint16_t *row = state + (j0 + r) * DK;
            __m512 ae = _mm512_setzero_ps(), ao = ae, be = ae, bo = ae;
            for (int c = 0; c < 4; c++) {
                __m512i x = _mm512_loadu_si512(row + 32 * c);
                __m512 me = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
                __m512 mo = _mm512_castsi512_ps(_mm512_and_si512(x, high));
                ae = _mm512_add_ps(ae, _mm512_mul_ps(me, ke[c]));
                ao = _mm512_add_ps(ao, _mm512_mul_ps(mo, ko[c]));
                be = _mm512_add_ps(be, _mm512_mul_ps(me, qe[c]));
                bo = _mm512_add_ps(bo, _mm512_mul_ps(mo, qo[c]));
            }
            rk[r] = tree_eo(ae, ao), rq[r] = tree_eo(be, bo);
        }
        __mmask16 live = (__mmask16)((1u << nb) - 1);
        _mm512_storeu_ps(cs, scalars16(rk, rq, t->v + j0, live, t, out + j0));
        for (size_t r = 0; r < nb; r++) {
            uint16_t *row = state + (j0 + r) * DK;
            const __m512 cf = _mm512_set1_ps(cs[r]);
            for (int c = 0; c < 4; c++) {
                __m512i x = _mm512_loadu_si512(row + 32 * c);
                __m512 me = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
                __m512 mo = _mm512_castsi512_ps(_mm512_and_si512(x, high));
                __m512 re = _mm512_add_ps(_mm512_mul_ps(d, me), _mm512_mul_ps(cf, ke[c]));
                __m512 ro = _mm512_add_ps(_mm512_mul_ps(d, mo), _mm512_mul_ps(cf, ko[c]));
                _mm512_storeu_si512(row + 32 * c, dn_avx512_bf16_round32(re, ro, order));
            }
        }
    }
}

DN_BF16_TARGET static void rows_avx512bf16(void *state, dn_gdn_store store, size_t dk, size_t r0,
                                           size_t r1, const dn_gdn_token *t, float *out)
{
    if (dk != DK || store != DN_GDN_STORE_BF16) {
        rows_avx512(state, store, dk, r0, r1, t, out);
        return;
    }
    unsigned csr = dn_avx2_enter();
    rows128_bf16(state, r0, r1, t, out);
    dn_avx2_leave(csr, 0.0f);
}

/* Four taps of 16 channels (64 floats, channel by channel) as one vector
   per tap: two permutes per eight channels and a lane shuffle in place of a
   16-element gather per tap. */
INLINE void taps4(const float *k, __m512 w[4])
{
    __m512 a = _mm512_loadu_ps(k), b = _mm512_loadu_ps(k + 16);
    __m512 c = _mm512_loadu_ps(k + 32), d = _mm512_loadu_ps(k + 48);
    for (int j = 0; j < 4; j++) {
        __m512i at = _mm512_add_epi32(
            _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28),
            _mm512_set1_epi32(j));
        __m512 lo = _mm512_permutex2var_ps(a, at, b), hi = _mm512_permutex2var_ps(c, at, d);
        w[j] = _mm512_shuffle_f32x4(lo, hi, _MM_SHUFFLE(1, 0, 1, 0));
    }
}

/* conv_avx2 (src/x86/gdn_avx2.c) sixteen channels at a time: each
   channel's taps in tap order, multiply then add under DAZ, the weights
   gathered from the channel's taps (four taps: transposed by taps4); then the math module's AVX-512 silu
   (the reference's bits on every binary32 input), which took half of the
   AVX2 conv's time with the AVX2 silu. */
static void conv_avx512(const float *ring, uint32_t head, size_t channels, size_t taps,
                        const float *kernel, const float *x, float *y)
{
    if (channels * taps > INT32_MAX - 16 * taps) {
        dn_ref_gdn_conv(ring, head, channels, taps, kernel, x, y);
        return;
    }
    unsigned csr = dn_avx2_enter();
    size_t slots = taps - 1, c = 0;
    const __m512i step =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32((int)taps));
    for (; taps == 4 && c + 16 <= channels; c += 16) {
        __m512 w[4];
        taps4(kernel + c * 4, w);
        __m512 s = _mm512_setzero_ps();
        for (size_t j = 0; j < 3; j++)
            s = _mm512_add_ps(
                s, _mm512_mul_ps(_mm512_loadu_ps(ring + ((head + j) % 3) * channels + c), w[j]));
        _mm512_storeu_ps(y + c, _mm512_add_ps(s, _mm512_mul_ps(_mm512_loadu_ps(x + c), w[3])));
    }
    for (; c + 16 <= channels; c += 16) {
        __m512i at = _mm512_add_epi32(step, _mm512_set1_epi32((int)(c * taps)));
        __m512 s = _mm512_setzero_ps();
        for (size_t j = 0; j < slots; j++) {
            __m512 w = _mm512_i32gather_ps(at, kernel + j, 4);
            s = _mm512_add_ps(
                s, _mm512_mul_ps(_mm512_loadu_ps(ring + ((head + j) % slots) * channels + c), w));
        }
        __m512 w = _mm512_i32gather_ps(at, kernel + slots, 4);
        _mm512_storeu_ps(y + c, _mm512_add_ps(s, _mm512_mul_ps(_mm512_loadu_ps(x + c), w)));
    }
    dn_ref_gdn_conv_sums(ring, head, channels, taps, kernel, x, c, y);
    dn_avx2_leave(csr, 0.0f);
    dn_math_avx512.silu_v(y, y, channels);
}

const dn_gdn_kernels dn_gdn_avx512 = {
    .conv = conv_avx512,
    .rows = rows_avx512,
};

/* What src/dispatch.c registers in its place where the CPU has AVX512_BF16. */
const dn_gdn_kernels dn_gdn_avx512bf16 = {
    .conv = conv_avx512,
    .rows = rows_avx512bf16,
};
