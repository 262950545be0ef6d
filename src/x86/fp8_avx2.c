/* SPDX-License-Identifier: MIT */
/*
 * The FP8 E4M3 module on AVX2 + FMA: src/fp8.c's order in 8-lane vectors.
 * A block's 16 lanes are two registers (lanes 0-7, 8-15); mat_vec runs four
 * rows at once (eight independent FMA chains, the activation loaded once),
 * and their folds are done together, in the reference's order.
 *
 * The decode is bit arithmetic, not a table: each code becomes a binary16
 * (two integer operations for sixteen codes) that F16C's vcvtph2ps widens,
 * exactly, to the code's value times 2^-8. The activation is scaled by 2^8
 * once per call (exact while |x| < 2^120), so the fused multiply-add sees
 * the exact product w * x; when some |x| is larger, the decoded weight is
 * multiplied by 2^8 instead (exact: a normal f32 times a power of two). No
 * operand is ever denormal: placing the code's bits into an f32 and
 * multiplying by 2^120 is two operations shorter but feeds denormals
 * (exponent field 0) to the multiplier, which this class of CPU serves
 * through a slow path (measured: half the speed with 1/16 of the codes
 * subnormal). A NaN code widens to +-480 here; mat_vec finds NaN codes
 * with a byte maximum per row group and makes those rows NaN, the decoder
 * blends them in.
 */
#include "../fp8_kernels.h"
#include "../bits.h"
#include "decodenum/fp32.h"
#include "../sizes.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes ahead in each weight row's stream of mat_vec (one byte a weight);
   past its row's end a stream runs on into the same row of the next block
   of four (block4's `left` and `jump`; fp8_avx512.c says why). This kernel
   is bound by its decode, so it gained less: 0.98-1.11x over three
   alternated pairs (2026-12-07). No effect on bits. */
#define DN_FP8_PREFETCH 1024
/* Activations up to this many are scaled on the stack, longer ones in an
   allocation. */
#define DN_FP8_STACK_FLOATS 8192

#define DN_INLINE static inline __attribute__((always_inline))

/* Sixteen codes as binary16: sign-extended to 16 bits and shifted left by
   7, a code s.eeee.mmm is s s eeee mmm 0000000; clearing bit 14 leaves
   the binary16 s 0eeee mmm0000000, whose value is the code's times 2^-8
   (e = 0 is a binary16 subnormal). vcvtph2ps widens them exactly to
   normal f32 values (or zeros). */
DN_INLINE void dec16(const uint8_t *p, __m256 *lo, __m256 *hi)
{
    __m256i h = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p));
    h = _mm256_and_si256(_mm256_slli_epi16(h, 7), _mm256_set1_epi16((short)0xBFFF));
    *lo = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
    *hi = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
}

/* ---- decode ----------------------------------------------------------------- */

/* The values times 2^8 (exact: normal times a power of two); |480| only
   for a NaN code, which is made 0x7FC00000. */
static int decode_avx2(const uint8_t *codes, float *out, size_t n)
{
    const __m256 two8 = _mm256_set1_ps(256.0f),
                 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m256 nan_value = _mm256_set1_ps(480.0f);
    const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32((int)DN_NAN_BITS));
    __m256 seen = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v[2];
        dec16(codes + i, &v[0], &v[1]);
        for (int h = 0; h < 2; h++) {
            __m256 w = _mm256_mul_ps(v[h], two8);
            __m256 is_nan = _mm256_cmp_ps(_mm256_and_ps(w, abs), nan_value, _CMP_EQ_OQ);
            _mm256_storeu_ps(out + i + 8 * (size_t)h, _mm256_blendv_ps(w, qnan, is_nan));
            seen = _mm256_or_ps(seen, is_nan);
        }
    }
    int nan = !_mm256_testz_ps(seen, seen);
    return dn_ref_fp8_decode(codes + i, out + i, n - i) | nan;
}

/* ---- the fold of four rows' (or columns') lanes -------------------------------- */

/* a[i]: lanes 0-7 of sum i, b[i]: lanes 8-15. Lane j += lane j+8, j+4,
   j+2, j+1 in turn, four sums side by side: [S0 S1 S2 S3]. */
DN_INLINE __m128 fold4(__m256 a0, __m256 b0, __m256 a1, __m256 b1, __m256 a2, __m256 b2, __m256 a3,
                       __m256 b3)
{
    __m256 v0 = _mm256_add_ps(a0, b0), v1 = _mm256_add_ps(a1, b1);
    __m256 v2 = _mm256_add_ps(a2, b2), v3 = _mm256_add_ps(a3, b3);
    /* j + j+4: [v0 | v1] and [v2 | v3] halves */
    __m256 t01 =
        _mm256_add_ps(_mm256_permute2f128_ps(v0, v1, 0x20), _mm256_permute2f128_ps(v0, v1, 0x31));
    __m256 t23 =
        _mm256_add_ps(_mm256_permute2f128_ps(v2, v3, 0x20), _mm256_permute2f128_ps(v2, v3, 0x31));
    /* j + j+2: [s0 s0 s2 s2 | s1 s1 s3 s3] */
    __m256 s = _mm256_add_ps(_mm256_shuffle_ps(t01, t23, _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(t01, t23, _MM_SHUFFLE(3, 2, 3, 2)));
    /* 0 + 1: [S0 S2 S0 S2 | S1 S3 S1 S3] */
    __m256 f = _mm256_add_ps(_mm256_shuffle_ps(s, s, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm256_shuffle_ps(s, s, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm_unpacklo_ps(_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1));
}

/* ---- mat_vec: four rows, one 128-column block at a time ------------------------- */

/* Sixteen codes of one row against x[0..16): lanes 0-7 and 8-15. With
   `scaled`, x is the activation times 2^8; else the weights are made
   whole here. */
DN_INLINE void step(const uint8_t *w, __m256 x0, __m256 x1, __m256 *a, __m256 *b, int scaled)
{
    __m256 lo, hi;
    dec16(w, &lo, &hi);
    if (!scaled) {
        lo = _mm256_mul_ps(lo, _mm256_set1_ps(256.0f));
        hi = _mm256_mul_ps(hi, _mm256_set1_ps(256.0f));
    }
    *a = _mm256_fmadd_ps(lo, x0, *a);
    *b = _mm256_fmadd_ps(hi, x1, *b);
}

/* The block sums of four rows over 128 columns; *top collects each code's
   byte doubled (its 7 value bits; 0xFE only for a NaN code) by maximum,
   two vector operations for 32 codes. (The same test on the integer
   units, ((8 bytes & 0x7F..) + 0x01..) & 0x80.., measured slower: 11.3
   against 13.5 G weights/s on 64 x 8192 in L2.) Prefetches as block8's
   (fp8_avx512.c): `left` bytes to the row's end, then `jump` further. */
DN_INLINE __m128 block4(const uint8_t *const w[4], const float *x, __m256i *top, int scaled,
                        size_t left, size_t jump)
{
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
    __m256i mx = *top;
    for (size_t i = 0; i < DN_FP8_BLOCK; i += 32) {
        size_t ahead = i + DN_FP8_PREFETCH;
        if (ahead >= left) ahead += jump;
        for (int r = 0; r < 4; r++) {
            if (i % 64 == 0) _mm_prefetch((const char *)w[r] + ahead, _MM_HINT_T0);
            __m256i raw = _mm256_loadu_si256((const __m256i *)(w[r] + i));
            mx = _mm256_max_epu8(mx, _mm256_add_epi8(raw, raw));
        }
        for (size_t s = i; s < i + 32; s += 16) {
            __m256 x0 = _mm256_loadu_ps(x + s), x1 = _mm256_loadu_ps(x + s + 8);
            step(w[0] + s, x0, x1, &a0, &b0, scaled);
            step(w[1] + s, x0, x1, &a1, &b1, scaled);
            step(w[2] + s, x0, x1, &a2, &b2, scaled);
            step(w[3] + s, x0, x1, &a3, &b3, scaled);
        }
    }
    *top = mx;
    return fold4(a0, b0, a1, b1, a2, b2, a3, b3);
}

/* A partial last block: its codes and activations copied, zeros after
   them. The padding adds fma(+0, +0, lane) = lane: a lane is never -0 (it
   starts at +0, and a rounded sum is -0 only when both addends are). */
static __m128 partial4(const uint8_t *const w[4], const float *x, size_t len, __m256i *top,
                       int scaled)
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
    return scaled ? block4(p, xp, top, 1, SIZE_MAX, 0) : block4(p, xp, top, 0, SIZE_MAX, 0);
}

/* Rows r[0..4) (repeats allowed) against x (times 2^8 when `scaled`):
   their sums before the tensor scale into sum[4]; 1 when one of them may
   hold a NaN code. One function for the whole row, so the loop keeps its
   constants and accumulators in registers. */
DN_INLINE int rows4(const dn_fp8_mat *m, const float *x, int scaled, const size_t r[4],
                    float sum[4])
{
    const size_t k = m->k, kb = dn_size_div_up(k, DN_FP8_BLOCK);
    const uint8_t *w[4];
    const float *srow[4];
    for (int i = 0; i < 4; i++) {
        w[i] = m->w + r[i] * k;
        srow[i] = m->scales ? m->scales + (r[i] / DN_FP8_BLOCK) * kb : NULL;
    }
    __m128 acc = _mm_setzero_ps();
    __m256i top = _mm256_setzero_si256();
    for (size_t j = 0, col = 0; col < k; col += DN_FP8_BLOCK, j++) {
        const uint8_t *wb[4] = {w[0] + col, w[1] + col, w[2] + col, w[3] + col};
        __m128 s = col + DN_FP8_BLOCK > k ? partial4(wb, x + col, k - col, &top, scaled)
                                          : block4(wb, x + col, &top, scaled, k - col, 3 * k);
        __m128 sc = !srow[0] ? _mm_set1_ps(1.0f)
                    : srow[0] == srow[3]
                        ? _mm_broadcast_ss(srow[0] + j) /* one row group */
                        : _mm_setr_ps(srow[0][j], srow[1][j], srow[2][j], srow[3][j]);
        acc = _mm_fmadd_ps(s, sc, acc);
    }
    _mm_storeu_ps(sum, acc);
    __m256i nan = _mm256_cmpeq_epi8(top, _mm256_set1_epi8((char)0xFE));
    return !_mm256_testz_si256(nan, nan);
}

static int rows4_scaled(const dn_fp8_mat *m, const float *x, const size_t r[4], float sum[4])
{
    return rows4(m, x, 1, r, sum);
}

static int rows4_plain(const dn_fp8_mat *m, const float *x, const size_t r[4], float sum[4])
{
    return rows4(m, x, 0, r, sum);
}

/* xs[i] = x[i] * 2^8, exact, unless some |x[i]| >= 2^120 (then 0). */
static int scale_activation(const float *x, size_t k, float *xs)
{
    const __m256 two8 = _mm256_set1_ps(256.0f), big = _mm256_set1_ps(0x1p120f);
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 over = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= k; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 a = _mm256_and_ps(v, abs);
        over = _mm256_or_ps(over,
                            _mm256_and_ps(_mm256_cmp_ps(a, big, _CMP_GE_OQ),
                                          _mm256_cmp_ps(a, _mm256_set1_ps(INFINITY), _CMP_LT_OQ)));
        _mm256_storeu_ps(xs + i, _mm256_mul_ps(v, two8));
    }
    for (; i < k; i++) {
        float a = x[i] < 0 ? -x[i] : x[i];
        if (a >= 0x1p120f && a < INFINITY) return 0;
        xs[i] = x[i] * 256.0f;
    }
    return _mm256_testz_ps(over, over);
}

static int mat_vec_rows_avx2(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1, float *out)
{
    float stack[DN_FP8_STACK_FLOATS];
    float *xs = m->k <= DN_FP8_STACK_FLOATS ? stack : malloc(m->k * sizeof *xs);
    int scaled = xs && scale_activation(x, m->k, xs);
    int nan = 0;
    for (size_t r = r0; r < r1; r += 4) {
        size_t rr[4];
        float sum[4];
        for (int i = 0; i < 4; i++) rr[i] = r + (size_t)i < r1 ? r + (size_t)i : r1 - 1;
        int maybe = scaled ? rows4_scaled(m, xs, rr, sum) : rows4_plain(m, x, rr, sum);
        for (int i = 0; i < 4 && r + (size_t)i < r1; i++) {
            out[r + (size_t)i] = dn_fp8_finish(sum[i], m->tensor_scale);
            if (maybe && dn_fp8_has_nan(m->w + rr[i] * m->k, m->k)) {
                out[r + (size_t)i] = dn_from_bits(DN_NAN_BITS);
                nan = 1;
            }
        }
    }
    if (xs != stack) free(xs);
    return nan;
}

/* ---- mat_mul: a row's block decoded once, four columns at a time ---------------- */

/* The block sums of decoded weights wf[0..128) against four columns. */
static __m128 cols4(const float *wf, const float *const x[4])
{
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
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

static int mat_mul_rows_avx2(const dn_fp8_mat *m, const float *act, size_t n, size_t r0, size_t r1,
                             float *out)
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
