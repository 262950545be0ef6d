/* SPDX-License-Identifier: MIT */
/*
 * The FP8 E4M3 module on AVX2 + FMA: src/fp8.c's order in 8-lane vectors.
 * A block's 16 lanes are two registers (lanes 0-7, 8-15); mat_vec runs four
 * rows at once (eight independent FMA chains, the activation loaded once),
 * and their folds are done together, in the reference's order.
 *
 * The decode is bit arithmetic, not a table: a code's byte is put at bits
 * 24..31 of a 32-bit lane (one vpshufb for eight codes) and shifted right
 * arithmetically by 4, so the sign lands at bit 31 (copies at 30..27), the
 * exponent field e at 26..23 and the fraction at 22..20; clearing the
 * copies leaves the f32 whose value is the code's times 2^-120 (a denormal
 * for e = 0: m * 2^-129), and one multiply by 2^120 gives it exactly. That
 * needs MXCSR without DAZ, the C default environment the library assumes.
 * A NaN code decodes to +-480 here; mat_vec finds NaN codes with a byte
 * maximum per row group and recomputes such rows as NaN, the decoder
 * blends them in.
 */
#include "../fp8_kernels.h"
#include "../bits.h"

#include <immintrin.h>
#include <string.h>

/* Bytes ahead in each weight row's stream of mat_vec (one byte a weight). */
#define DN_FP8_PREFETCH 1024

#define DN_INLINE static inline __attribute__((always_inline))

/* vpshufb controls: byte i of the 16 to bits 24..31 of a lane; codes 0-7
   (lanes 0-3 in the low half, 4-7 in the high half of the broadcast) and
   codes 8-15. */
#define Z (-128)
static const int8_t ctl_lo[32] = {Z, Z, Z, 0, Z, Z, Z, 1, Z, Z, Z, 2, Z, Z, Z, 3,
                                  Z, Z, Z, 4, Z, Z, Z, 5, Z, Z, Z, 6, Z, Z, Z, 7};
static const int8_t ctl_hi[32] = {Z, Z, Z, 8,  Z, Z, Z, 9,  Z, Z, Z, 10, Z, Z, Z, 11,
                                  Z, Z, Z, 12, Z, Z, Z, 13, Z, Z, Z, 14, Z, Z, Z, 15};
#undef Z

typedef struct consts {
    __m256i lo, hi, keep;
    __m256 scale;
} consts;

DN_INLINE consts get_consts(void)
{
    consts c;
    c.lo = _mm256_loadu_si256((const __m256i *)ctl_lo);
    c.hi = _mm256_loadu_si256((const __m256i *)ctl_hi);
    c.keep = _mm256_set1_epi32((int)0x87FFFFFFu);
    c.scale = _mm256_set1_ps(0x1p120f);
    return c;
}

/* The bits of eight codes times 2^-120, before the multiply. */
DN_INLINE __m256i placed(__m256i b16, __m256i ctl, __m256i keep)
{
    return _mm256_and_si256(_mm256_srai_epi32(_mm256_shuffle_epi8(b16, ctl), 4), keep);
}

DN_INLINE __m256 dec8(__m256i b16, __m256i ctl, const consts *c)
{
    return _mm256_mul_ps(_mm256_castsi256_ps(placed(b16, ctl, c->keep)), c->scale);
}

DN_INLINE __m256i bcast16(const uint8_t *p)
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
}

/* ---- decode ----------------------------------------------------------------- */

static int decode_avx2(const uint8_t *codes, float *out, size_t n)
{
    const consts c = get_consts();
    const __m256i nan_placed = _mm256_set1_epi32(0x07F00000); /* |S.1111.111| placed */
    const __m256i abs = _mm256_set1_epi32(0x7FFFFFFF);
    const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000));
    __m256i seen = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i b = bcast16(codes + i);
        for (int h = 0; h < 2; h++) {
            __m256i t = placed(b, h ? c.hi : c.lo, c.keep);
            __m256i is_nan = _mm256_cmpeq_epi32(_mm256_and_si256(t, abs), nan_placed);
            __m256 v = _mm256_mul_ps(_mm256_castsi256_ps(t), c.scale);
            _mm256_storeu_ps(out + i + 8 * h,
                             _mm256_blendv_ps(v, qnan, _mm256_castsi256_ps(is_nan)));
            seen = _mm256_or_si256(seen, is_nan);
        }
    }
    int nan = !_mm256_testz_si256(seen, seen);
    return dn_ref_fp8_decode(codes + i, out + i, n - i) | nan;
}

/* ---- the fold of four rows' (or columns') lanes -------------------------------- */

/* a[i]: lanes 0-7 of sum i, b[i]: lanes 8-15. Lane j += lane j+8, j+4,
   j+2, j+1 in turn, four sums side by side: [S0 S1 S2 S3]. */
DN_INLINE __m128 fold4(__m256 a0, __m256 b0, __m256 a1, __m256 b1, __m256 a2, __m256 b2,
                       __m256 a3, __m256 b3)
{
    __m256 v0 = _mm256_add_ps(a0, b0), v1 = _mm256_add_ps(a1, b1);
    __m256 v2 = _mm256_add_ps(a2, b2), v3 = _mm256_add_ps(a3, b3);
    /* j + j+4: [v0 | v1] and [v2 | v3] halves */
    __m256 t01 = _mm256_add_ps(_mm256_permute2f128_ps(v0, v1, 0x20),
                               _mm256_permute2f128_ps(v0, v1, 0x31));
    __m256 t23 = _mm256_add_ps(_mm256_permute2f128_ps(v2, v3, 0x20),
                               _mm256_permute2f128_ps(v2, v3, 0x31));
    /* j + j+2: [s0 s0 s2 s2 | s1 s1 s3 s3] */
    __m256 s = _mm256_add_ps(_mm256_shuffle_ps(t01, t23, _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(t01, t23, _MM_SHUFFLE(3, 2, 3, 2)));
    /* 0 + 1: [S0 S2 S0 S2 | S1 S3 S1 S3] */
    __m256 f = _mm256_add_ps(_mm256_shuffle_ps(s, s, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm256_shuffle_ps(s, s, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm_unpacklo_ps(_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1));
}

/* ---- mat_vec: four rows, one 128-column block at a time ------------------------- */

/* Sixteen codes of one row against x[0..16): lanes 0-7 and 8-15. */
DN_INLINE void step(const uint8_t *w, __m256 x0, __m256 x1, __m256 *a, __m256 *b,
                    const consts *c)
{
    __m256i b16 = bcast16(w);
    *a = _mm256_fmadd_ps(dec8(b16, c->lo, c), x0, *a);
    *b = _mm256_fmadd_ps(dec8(b16, c->hi, c), x1, *b);
}

/* The block sums of four rows over 128 columns; *top collects each code's
   byte doubled (its 7 value bits; 0xFE only for a NaN code) by maximum. */
static __m128 block4(const uint8_t *const w[4], const float *x, __m256i *top)
{
    const consts c = get_consts();
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0,
           b3 = a0;
    __m256i mx = *top;
    for (size_t i = 0; i < DN_FP8_BLOCK; i += 32) {
        for (int r = 0; r < 4; r++) {
            _mm_prefetch((const char *)w[r] + i + DN_FP8_PREFETCH, _MM_HINT_T0);
            __m256i raw = _mm256_loadu_si256((const __m256i *)(w[r] + i));
            mx = _mm256_max_epu8(mx, _mm256_add_epi8(raw, raw));
        }
        for (size_t s = i; s < i + 32; s += 16) {
            __m256 x0 = _mm256_loadu_ps(x + s), x1 = _mm256_loadu_ps(x + s + 8);
            step(w[0] + s, x0, x1, &a0, &b0, &c);
            step(w[1] + s, x0, x1, &a1, &b1, &c);
            step(w[2] + s, x0, x1, &a2, &b2, &c);
            step(w[3] + s, x0, x1, &a3, &b3, &c);
        }
    }
    *top = mx;
    return fold4(a0, b0, a1, b1, a2, b2, a3, b3);
}

/* A partial last block: its codes and activations copied, zeros after
   them. The padding adds fma(+0, +0, lane) = lane: a lane is never -0 (it
   starts at +0, and a rounded sum is -0 only when both addends are). */
static __m128 partial4(const uint8_t *const w[4], const float *x, size_t len, __m256i *top)
{
    uint8_t wp[4][DN_FP8_BLOCK]; /* prefetches past it are harmless */
    float xp[DN_FP8_BLOCK];
    const uint8_t *p[4];
    memset(xp, 0, sizeof xp);
    memcpy(xp, x, len * sizeof *x);
    for (int r = 0; r < 4; r++) {
        memset(wp[r], 0, DN_FP8_BLOCK);
        memcpy(wp[r], w[r], len);
        p[r] = wp[r];
    }
    return block4(p, xp, top);
}

/* Rows r[0..4) (repeats allowed) against x: their sums before the tensor
   scale into sum[4]; 1 when one of them may hold a NaN code. */
static int rows4(const dn_fp8_mat *m, const float *x, const size_t r[4], float sum[4])
{
    const size_t k = m->k;
    const uint8_t *w[4];
    for (int i = 0; i < 4; i++) w[i] = m->w + r[i] * k;
    __m128 acc = _mm_setzero_ps();
    __m256i top = _mm256_setzero_si256();
    size_t j = 0, col = 0;
    for (; col + DN_FP8_BLOCK <= k; col += DN_FP8_BLOCK, j++) {
        const uint8_t *wb[4] = {w[0] + col, w[1] + col, w[2] + col, w[3] + col};
        __m128 s = block4(wb, x + col, &top);
        __m128 sc = _mm_setr_ps(dn_fp8_scale(m, r[0], j), dn_fp8_scale(m, r[1], j),
                                dn_fp8_scale(m, r[2], j), dn_fp8_scale(m, r[3], j));
        acc = _mm_fmadd_ps(s, sc, acc);
    }
    if (col < k) {
        const uint8_t *wb[4] = {w[0] + col, w[1] + col, w[2] + col, w[3] + col};
        __m128 s = partial4(wb, x + col, k - col, &top);
        __m128 sc = _mm_setr_ps(dn_fp8_scale(m, r[0], j), dn_fp8_scale(m, r[1], j),
                                dn_fp8_scale(m, r[2], j), dn_fp8_scale(m, r[3], j));
        acc = _mm_fmadd_ps(s, sc, acc);
    }
    _mm_storeu_ps(sum, acc);
    __m256i nan = _mm256_cmpeq_epi8(top, _mm256_set1_epi8((char)0xFE));
    return !_mm256_testz_si256(nan, nan);
}

static int mat_vec_rows_avx2(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1,
                             float *out)
{
    int nan = 0;
    for (size_t r = r0; r < r1; r += 4) {
        size_t rr[4];
        float sum[4];
        for (int i = 0; i < 4; i++) rr[i] = r + (size_t)i < r1 ? r + (size_t)i : r1 - 1;
        int maybe = rows4(m, x, rr, sum);
        for (int i = 0; i < 4 && r + (size_t)i < r1; i++) {
            out[r + (size_t)i] = dn_fp8_finish(sum[i], m->tensor_scale);
            if (maybe && dn_fp8_has_nan(m->w + rr[i] * m->k, m->k)) {
                out[r + (size_t)i] = dn_from_bits(0x7FC00000u);
                nan = 1;
            }
        }
    }
    return nan;
}

/* ---- mat_mul: a row's block decoded once, four columns at a time ---------------- */

/* The block sums of decoded weights wf[0..128) against four columns. */
static __m128 cols4(const float *wf, const float *const x[4])
{
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0,
           b3 = a0;
    for (size_t i = 0; i < DN_FP8_BLOCK; i += 16) {
        __m256 w0 = _mm256_loadu_ps(wf + i), w1 = _mm256_loadu_ps(wf + i + 8);
        a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[0] + i), a0);
        b0 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[0] + i + 8), b0);
        a1 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[1] + i), a1);
        b1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[1] + i + 8), b1);
        a2 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[2] + i), a2);
        b2 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[2] + i + 8), b2);
        a3 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[3] + i), a3);
        b3 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[3] + i + 8), b3);
    }
    return fold4(a0, b0, a1, b1, a2, b2, a3, b3);
}

/* One block of row r (columns col..col+len) into every column's running
   sum out[c*rows + r]. A partial block's activations are copied before
   zeros, four columns at a time. */
static void block_columns(const dn_fp8_mat *m, const float *wf, const float *act, size_t n,
                          size_t r, size_t col, size_t len, float scale, float *out)
{
    float xp[4][DN_FP8_BLOCK];
    if (len < DN_FP8_BLOCK) memset(xp, 0, sizeof xp);
    for (size_t c = 0; c < n; c += 4) {
        const float *x[4];
        for (size_t i = 0; i < 4; i++) {
            size_t cc = c + i < n ? c + i : n - 1;
            x[i] = act + cc * m->k + col;
            if (len < DN_FP8_BLOCK) x[i] = memcpy(xp[i], x[i], len * sizeof(float));
        }
        float s[4];
        _mm_storeu_ps(s, cols4(wf, x));
        for (size_t i = 0; i < 4 && c + i < n; i++) {
            float *y = &out[(c + i) * m->rows + r];
            *y = __builtin_fmaf(s[i], scale, *y);
        }
    }
}

static int mat_mul_rows_avx2(const dn_fp8_mat *m, const float *act, size_t n, size_t r0,
                             size_t r1, float *out)
{
    int nan = 0;
    float wf[DN_FP8_BLOCK];
    for (size_t r = r0; r < r1; r++) {
        const uint8_t *w = m->w + r * m->k;
        for (size_t c = 0; c < n; c++) out[c * m->rows + r] = 0.0f;
        for (size_t j = 0, col = 0; col < m->k; j++, col += DN_FP8_BLOCK) {
            size_t len = m->k - col < DN_FP8_BLOCK ? m->k - col : DN_FP8_BLOCK;
            nan |= decode_avx2(w + col, wf, len);
            if (len < DN_FP8_BLOCK) memset(wf + len, 0, (DN_FP8_BLOCK - len) * sizeof *wf);
            block_columns(m, wf, act, n, r, col, len, dn_fp8_scale(m, r, j), out);
        }
        for (size_t c = 0; c < n; c++)
            out[c * m->rows + r] = dn_fp8_finish(out[c * m->rows + r], m->tensor_scale);
    }
    return nan;
}

const dn_fp8_kernels dn_fp8_avx2 = {
    .decode = decode_avx2,
    .mat_vec_rows = mat_vec_rows_avx2,
    .mat_mul_rows = mat_mul_rows_avx2,
};
