/* SPDX-License-Identifier: MIT */
/*
 * The FP8 E4M3 module on AVX-512 (F, BW, VL, DQ): src/fp8.c's order with a
 * block's 16 lanes in one 512-bit register. mat_vec runs eight rows at
 * once (eight independent FMA chains: one chain a row, since the lanes of
 * a row are one register, and the FMA's latency wants about eight in
 * flight), their folds done together; mat_mul decodes four rows' blocks
 * once and runs eight columns over them.
 *
 * The decode is fp8_avx2.c's: sixteen codes become binary16 by a sign
 * extension, a shift and a mask, and vcvtph2ps widens them exactly to the
 * code's value times 2^-8 (never a denormal operand); the activation is
 * scaled by 2^8 once per call, or, past 2^120, the weights by 2^8. Where
 * none of eight rows' 64 codes has a zero exponent field (one byte test
 * per 64 codes beside the NaN watch), the codes' bits go straight into an
 * f32 instead (dec16_normal: no conversion, the same values). Against the
 * conversion alone (old and new objects in one process, 41 alternated
 * pairs, CPU time, 64 x 8192 in L2, 2026-12-05): the bench's Gaussian
 * codes (3.7 % of the 8 x 64 runs hold a zero or subnormal code) 1.17-1.21x
 * the speed, twenty times smaller weights 1.05x, uniformly random bytes
 * (every run holds one) 0.94x; 8192^2 from memory 0.99-1.02x on one
 * thread and 1.01-1.04x on two: there the stream, not the decode, bounds
 * it. One row at a time with eight blocks' chains in flight (one stream
 * 4 KiB ahead, its pages touched) ran 0.83x in L2 and 0.88-0.99x from
 * memory; the next rows' pages touched ahead of the eight-row streams
 * 1.00-1.02x.
 *
 * The code tests cost a sixth of mat_vec's time in L2 (without them, its
 * bits then wrong, 1.23x the speed; without only their branch 1.06x): the
 * kernel is bound by its vector operations, about five per row and 16
 * codes. Where the CPU has AVX512_VBMI (dn_fp8_avx512vbmi), one two-table
 * byte permute classifies 64 codes by their 7 value bits (zero exponent
 * field, NaN, other) and one or gathers the classes, where the byte tests
 * take an add, a maximum, a test into a mask and its or: in one process
 * against the byte tests (41 alternated pairs, CPU time, 2026-12-06) 1.05x
 * the speed in L2 on the bench's codes (1.05-1.11 over nine runs), 1.01x
 * on smaller weights, 1.03x on random bytes; 8192^2 from memory on two
 * threads 1.04-1.08x. Not kept: one test per 128 codes (0.96x of one per
 * 64, more runs slow), a maximum and a minimum of the doubled bytes
 * without the mask (1.01x), the codes spread by an in-lane vpshufb from a
 * broadcast load instead of vpmovsxbd (0.85x), decoding from the raw
 * register by a byte permute (1.01x). Three
 * decodes were measured on AMD EPYC (family 26), 64 x 8192 weights in L2,
 * eight rows at a time, CPU time, best of 200 calls, load average ~17 (a
 * development microbenchmark): this one 22.6 G weights/s; the same on 32
 * codes a register 20.3; the code's bits placed in an f32 with the
 * subnormal codes corrected by a masked subtraction 22.1; two 128-entry
 * byte tables (vpermi2b) whose bytes are each value's upper 16 bits, spread
 * into f32 lanes by masked byte permutes (AVX-512 VBMI), 14.7. The AVX2
 * kernel reaches about 13.5 on the same data. The VBMI table also requires
 * GFNI, whose byte maps decode the runs of normal codes with fewer
 * shuffles (steps64_gfni, 1.07x in L2); a CPU with AVX512_VBMI but without
 * GFNI keeps the plain table.
 */
#include "../fp8_kernels.h"
#include "../bits.h"
#include "decodenum/fp32.h"
#include "../sizes.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes ahead in each weight row's stream of mat_vec (one byte a weight).
   Past its row's end a stream runs on into the same row of the next block
   of eight (block8's `left` and `jump`), as the F16 kernels' streams do,
   so the next block's rows start in the cache rather than each from a
   miss. Old and new objects alternated (decodenum-bench-fp8 --quick,
   8192^2 from memory, three pairs, idle, 2026-12-07): two threads 1.13-1.27x
   the speed, one 1.13-1.28x; 512 and 2048 bytes ahead with it were no
   faster than 1024. No effect on bits. */
#define DN_FP8_PREFETCH 1024
/* Activations up to this many are scaled on the stack, longer ones in an
   allocation. */
#define DN_FP8_STACK_FLOATS 8192
/* Rows of mat_vec (and columns of mat_mul) at a time. */
#define DN_FP8_WAYS 8
/* Rows of mat_mul whose decoded blocks meet each column's activations
   together: each activation load then feeds four FMAs, and a pass over the
   columns (in L2) serves four rows. Old and new objects alternated in one
   process (64 x 8192 by 8 columns, CPU time, 41 pairs, idle, 2026-12-05):
   against one row at a time, two rows 1.05x the speed, four 1.49x (1.44x
   on 4096 x 8192 from memory), eight 1.06x (chains spilled); three ran
   0.95x of two (GCC keeps fewer of its chains in registers). Decoding a
   whole block of normal, non-NaN codes by dec16_normal on top: 1.00-1.02x,
   0.95x on random bytes, not kept. */
#define DN_FP8_MM_ROWS 4

#define DN_INLINE static inline __attribute__((always_inline))

/* Sixteen codes as binary16 (see fp8_avx2.c's dec16), widened: each
   code's value times 2^-8, a normal f32 or a zero. */
DN_INLINE __m512 dec16(const uint8_t *p)
{
    __m256i h = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p));
    h = _mm256_and_si256(_mm256_slli_epi16(h, 7), _mm256_set1_epi16((short)0xBFFF));
    return _mm512_cvtph_ps(h);
}

/* Sixteen codes none of which has a zero exponent field (no zero or
   subnormal code), each value times 2^-8 without the conversion: the sign
   extension shifted left by 20 puts the sign, exponent e and mantissa in
   place, and the exponent field becomes 112 + e (a normal f32: e >= 1). */
DN_INLINE __m512 dec16_normal(const uint8_t *p)
{
    __m512i d = _mm512_slli_epi32(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)), 20);
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(/* (d & fields) | (112 << 23) */
                                                         d, _mm512_set1_epi32((int)0x87F00000),
                                                         _mm512_set1_epi32(0x38000000), 0xEA));
}

/* ---- decode ----------------------------------------------------------------- */

/* The values times 2^8 (exact); |480| only for a NaN code, made 0x7FC00000. */
static int decode_avx512(const uint8_t *codes, float *out, size_t n)
{
    const __m512 two8 = _mm512_set1_ps(256.0f), nan_value = _mm512_set1_ps(480.0f);
    const __m512 qnan = _mm512_castsi512_ps(_mm512_set1_epi32((int)DN_NAN_BITS));
    __mmask16 seen = 0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 w = _mm512_mul_ps(dec16(codes + i), two8);
        __mmask16 is_nan = _mm512_cmp_ps_mask(_mm512_abs_ps(w), nan_value, _CMP_EQ_OQ);
        _mm512_storeu_ps(out + i, _mm512_mask_blend_ps(is_nan, w, qnan));
        seen |= is_nan;
    }
    return dn_ref_fp8_decode(codes + i, out + i, n - i) | (seen != 0);
}

/* The NaN watch over 64 codes: each code's byte doubled (its 7 value bits;
   0xFE only for a NaN code) kept by maximum in top, two operations per 64
   codes; nan_seen says whether top met a NaN code. */
static inline __attribute__((always_inline)) __m512i nan_watch(__m512i top, __m512i raw)
{
    return _mm512_max_epu8(top, _mm512_add_epi8(raw, raw));
}

static inline __attribute__((always_inline)) int nan_seen(__m512i top)
{
    return _mm512_cmpeq_epi8_mask(top, _mm512_set1_epi8((char)0xFE)) != 0;
}

/* mat_mul's decode of a row's block: decode_avx512's values, with the NaN
   codes found on the bytes (nan_watch) instead of on every value (an absolute
   value, a compare, a blend and a mask or per 16): a NaN code decodes to a
   finite value here, and rows_columns sets its row's outputs to the NaN
   the definition gives them. */
static int decode_block(const uint8_t *codes, float *out, size_t n)
{
    const __m512 two8 = _mm512_set1_ps(256.0f);
    __m512i mx = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512i raw = _mm512_loadu_si512(codes + i);
        mx = nan_watch(mx, raw);
        for (size_t s = 0; s < 64; s += 16)
            _mm512_storeu_ps(out + i + s, _mm512_mul_ps(dec16(codes + i + s), two8));
    }
    int nan = nan_seen(mx);
    return dn_ref_fp8_decode(codes + i, out + i, n - i) | nan;
}

/* ---- the fold of eight rows' (or columns') lanes -------------------------------- */

/* Sum i's lane j += lane j+8, j+4, j+2, j+1 in turn (the reference's
   halving), eight sums at once: [S0 .. S7]. Each step adds two registers
   that hold, lane for lane, the two addends of the reference's additions:
   128-bit quarters regrouped for the first two steps, lanes within the
   quarters for the last two. */
DN_INLINE __m256 fold8(const __m512 a[DN_FP8_WAYS])
{
    __m512 s[4], t[2];
    for (int p = 0; p < 4; p++) /* lane j + lane j+8: [r lo, r lo', r' lo, r' lo'] */
        s[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0xEE));
    for (int p = 0; p < 2; p++) /* lane j + lane j+4: quarters of rows 4p .. 4p+3 */
        t[p] = _mm512_add_ps(_mm512_shuffle_f32x4(s[2 * p], s[2 * p + 1], 0x88),
                             _mm512_shuffle_f32x4(s[2 * p], s[2 * p + 1], 0xDD));
    /* lane j + lane j+2: quarter q [r_q j0, r_q j1, r_q+4 j0, r_q+4 j1] */
    __m512 u = _mm512_add_ps(_mm512_shuffle_ps(t[0], t[1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(t[0], t[1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* lane 0 + lane 1: quarter q [S_q, S_q+4, S_q, S_q+4] */
    __m512 f = _mm512_add_ps(_mm512_shuffle_ps(u, u, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_ps(u, u, _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_castps512_ps256(_mm512_permutexvar_ps(order, f));
}

/* ---- mat_vec: eight rows, one 128-column block at a time ------------------------ */

/* Columns i..i+64 of eight rows into their chains; with `normal`, none of
   the codes has a zero exponent field. */
DN_INLINE void steps64(const uint8_t *const w[DN_FP8_WAYS], const float *x, size_t i,
                       __m512 a[DN_FP8_WAYS], int scaled, int normal)
{
    for (size_t s = i; s < i + 64; s += 16) {
        __m512 xs = _mm512_loadu_ps(x + s);
        for (int r = 0; r < DN_FP8_WAYS; r++) {
            __m512 v = normal ? dec16_normal(w[r] + s) : dec16(w[r] + s);
            if (!scaled) v = _mm512_mul_ps(v, _mm512_set1_ps(256.0f));
            a[r] = _mm512_fmadd_ps(v, xs, a[r]);
        }
    }
}

/* Columns i..i+64 of eight rows, none of whose codes has a zero exponent
   field, by GFNI: dec16_normal's bits with fewer shuffles. Each code's f32
   is two bytes above two zero bytes: (sign, 0111, e3 e2 e1) and (e0, the
   mantissa, 0000), two affine byte maps of the code (vgf2p8affineqb: row
   7 - j of the matrix picks output bit j's input bits, the constant sets
   0111). Interleaved into words and then, under zero words, into dwords
   by in-lane unpacks (two and four per 64 codes), which take the codes of
   each 128-bit lane four at a time; a dword permute of the codes first (a
   4 x 4 transpose of their groups of four) makes each of the four results
   sixteen consecutive codes, a chain's next step in every lane. Per 64
   codes and row one permute, two affine maps and six unpacks, where
   dec16_normal takes four sign extensions, four shifts and four logic
   operations. Old and new objects alternated in one process (64 x 8192 in
   L2, 41 pairs, thread CPU time, idle, 2026-12-07): 1.07x the speed. The
   same maps placed by four zero-masking two-table byte permutes
   (vpermt2b) instead: 1.02-1.04x (with those permutes replaced by a logic
   operation, the bits then wrong, 1.38x); by one byte permute, two
   unpacks, two shifts and two ands: 0.98-0.995x of this form. */
typedef void (*normal_steps_fn)(const uint8_t *const w[DN_FP8_WAYS], const float *x, size_t i,
                                __m512 a[DN_FP8_WAYS], int scaled);

static inline __attribute__((always_inline, target("gfni"))) void
steps64_gfni(const uint8_t *const w[DN_FP8_WAYS], const float *x, size_t i, __m512 a[DN_FP8_WAYS],
             int scaled)
{
    const __m512i high = _mm512_set1_epi64(0x1020400000000080ll); /* s, e3 e2 e1 */
    const __m512i low = _mm512_set1_epi64(0x0000000001020408ll);  /* e0, m2 m1 m0 */
    const __m512i transpose =
        _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    const __m512i zero = _mm512_setzero_si512();
    __m512 xs[4];
    for (int v = 0; v < 4; v++) xs[v] = _mm512_loadu_ps(x + i + 16 * (size_t)v);
    for (int r = 0; r < DN_FP8_WAYS; r++) {
        const __m512i raw = _mm512_permutexvar_epi32(transpose, _mm512_loadu_si512(w[r] + i));
        const __m512i hb = _mm512_gf2p8affine_epi64_epi8(raw, high, 0x38);
        const __m512i lb = _mm512_gf2p8affine_epi64_epi8(raw, low, 0);
        const __m512i w0 = _mm512_unpacklo_epi8(lb, hb), w1 = _mm512_unpackhi_epi8(lb, hb);
        const __m512i d[4] = {_mm512_unpacklo_epi16(zero, w0), _mm512_unpackhi_epi16(zero, w0),
                              _mm512_unpacklo_epi16(zero, w1), _mm512_unpackhi_epi16(zero, w1)};
        for (int v = 0; v < 4; v++) {
            __m512 f = _mm512_castsi512_ps(d[v]);
            if (!scaled) f = _mm512_mul_ps(f, _mm512_set1_ps(256.0f));
            a[r] = _mm512_fmadd_ps(f, xs[v], a[r]);
        }
    }
}

/* The class of each of 64 codes by its 7 value bits, or'd into `classes`:
   1 for a zero exponent field (a zero or subnormal code), 2 for the NaN
   code, 0 else; one two-table byte permute (AVX512_VBMI) on the raw bytes,
   whose index bits 0-6 are the value bits whatever the sign. */
typedef __m512i (*code_classes_fn)(__m512i classes, __m512i raw);

static inline __attribute__((always_inline, target("avx512vbmi,gfni"))) __m512i
code_classes_vbmi(__m512i classes, __m512i raw)
{
    const __m512i first64 = _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, 0x0101010101010101ll);
    const __m512i last64 = _mm512_set_epi64(0x0200000000000000ll, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_or_si512(classes, _mm512_permutex2var_epi8(first64, raw, last64));
}

/* The block sums of eight rows over 128 columns; *top collects what the
   NaN test needs: without `classes`, the NaN watch (beside the
   zero-exponent test and its mask); with it, the
   codes' classes or'd together (one permute and one or, the two tests in
   one). Runs of normal codes go through `normal_steps` when given
   (steps64_gfni), else through dec16_normal. With `scaled`, x is the
   activation times 2^8; else the weights are made whole here. The streams
   are fetched DN_FP8_PREFETCH ahead; one that passes `left` (the bytes to
   its row's end) goes on `jump` further, into the same row of the next
   block. */
DN_INLINE __m256 block8(const uint8_t *const w[DN_FP8_WAYS], const float *x, __m512i *top,
                        int scaled, code_classes_fn classes, normal_steps_fn normal_steps,
                        size_t left, size_t jump)
{
    __m512 a[DN_FP8_WAYS];
    for (int r = 0; r < DN_FP8_WAYS; r++) a[r] = _mm512_setzero_ps();
    __m512i mx = *top;
    for (size_t i = 0; i < DN_FP8_BLOCK; i += 64) {
        int low;
        size_t ahead = i + DN_FP8_PREFETCH;
        if (ahead >= left) ahead += jump;
        if (classes) {
            __m512i c = _mm512_setzero_si512();
            for (int r = 0; r < DN_FP8_WAYS; r++) {
                _mm_prefetch((const char *)w[r] + ahead, _MM_HINT_T0);
                c = classes(c, _mm512_loadu_si512(w[r] + i));
            }
            mx = _mm512_or_si512(mx, c);
            low = _mm512_test_epi8_mask(c, _mm512_set1_epi8(1)) != 0;
        } else {
            __mmask64 lows = 0; /* codes with a zero exponent field */
            for (int r = 0; r < DN_FP8_WAYS; r++) {
                _mm_prefetch((const char *)w[r] + ahead, _MM_HINT_T0);
                __m512i raw = _mm512_loadu_si512(w[r] + i);
                mx = nan_watch(mx, raw);
                lows |= _mm512_testn_epi8_mask(raw, _mm512_set1_epi8(0x78));
            }
            low = lows != 0;
        }
        if (low)
            steps64(w, x, i, a, scaled, 0);
        else if (normal_steps)
            normal_steps(w, x, i, a, scaled);
        else
            steps64(w, x, i, a, scaled, 1);
    }
    *top = mx;
    return fold8(a);
}

/* A partial last block: its codes and activations copied, zeros after
   them (a pad adds fma(+0, +0, lane) = lane; see fp8_avx2.c). Out of line,
   once per code test (inlined into the row loops it cost them 4 %). */
DN_INLINE __m256 partial8(const uint8_t *const w[DN_FP8_WAYS], const float *x, size_t len,
                          __m512i *top, int scaled, code_classes_fn classes,
                          normal_steps_fn normal_steps)
{
    uint8_t wp[DN_FP8_WAYS][DN_FP8_BLOCK]; /* prefetches past it are harmless */
    float xp[DN_FP8_BLOCK];
    const uint8_t *p[DN_FP8_WAYS];
    memset(xp, 0, sizeof xp);
    memcpy(xp, x, len * sizeof *x);
    for (int r = 0; r < DN_FP8_WAYS; r++) {
        memset(wp[r], 0, DN_FP8_BLOCK);
        memcpy(wp[r], w[r], len);
        p[r] = wp[r];
    }
    return scaled ? block8(p, xp, top, 1, classes, normal_steps, SIZE_MAX, 0)
                  : block8(p, xp, top, 0, classes, normal_steps, SIZE_MAX, 0);
}

static __attribute__((noinline)) __m256 partial8_plain(const uint8_t *const w[DN_FP8_WAYS],
                                                       const float *x, size_t len, __m512i *top,
                                                       int scaled)
{
    return partial8(w, x, len, top, scaled, NULL, NULL);
}

static __attribute__((noinline, target("avx512vbmi,gfni"))) __m256
partial8_vbmi(const uint8_t *const w[DN_FP8_WAYS], const float *x, size_t len, __m512i *top,
              int scaled)
{
    return partial8(w, x, len, top, scaled, code_classes_vbmi, steps64_gfni);
}

/* Block j's scales of rows r[0..8): one broadcast when they share a row
   group (always but where the eight straddle a multiple of 128). */
static __m256 block_scales(const float *const srow[DN_FP8_WAYS], size_t j)
{
    if (!srow[0]) return _mm256_set1_ps(1.0f);
    if (srow[0] == srow[DN_FP8_WAYS - 1]) return _mm256_broadcast_ss(srow[0] + j);
    float s[DN_FP8_WAYS];
    for (int i = 0; i < DN_FP8_WAYS; i++) s[i] = srow[i][j];
    return _mm256_loadu_ps(s);
}

/* Rows r[0..8) (repeats allowed) against x (times 2^8 when `scaled`): their
   sums before the tensor scale into sum[8]; 1 when one of them may hold a
   NaN code. `classes` and `normal_steps` as block8's. */
DN_INLINE int rows8(const dn_fp8_mat *m, const float *x, int scaled, const size_t r[DN_FP8_WAYS],
                    float sum[DN_FP8_WAYS], code_classes_fn classes, normal_steps_fn normal_steps)
{
    const size_t k = m->k, kb = dn_size_div_up(k, DN_FP8_BLOCK);
    const uint8_t *w[DN_FP8_WAYS];
    const float *srow[DN_FP8_WAYS];
    for (int i = 0; i < DN_FP8_WAYS; i++) {
        w[i] = m->w + r[i] * k;
        srow[i] = m->scales ? m->scales + (r[i] / DN_FP8_BLOCK) * kb : NULL;
    }
    __m256 acc = _mm256_setzero_ps();
    __m512i top = _mm512_setzero_si512();
    for (size_t j = 0, col = 0; col < k; col += DN_FP8_BLOCK, j++) {
        const uint8_t *wb[DN_FP8_WAYS];
        for (int i = 0; i < DN_FP8_WAYS; i++) wb[i] = w[i] + col;
        __m256 s = col + DN_FP8_BLOCK <= k ? block8(wb, x + col, &top, scaled, classes,
                                                    normal_steps, k - col, (DN_FP8_WAYS - 1) * k)
                   : classes               ? partial8_vbmi(wb, x + col, k - col, &top, scaled)
                                           : partial8_plain(wb, x + col, k - col, &top, scaled);
        acc = _mm256_fmadd_ps(s, block_scales(srow, j), acc);
    }
    _mm256_storeu_ps(sum, acc);
    if (classes) return _mm512_test_epi8_mask(top, _mm512_set1_epi8(2)) != 0;
    return nan_seen(top);
}

typedef int (*rows8_fn)(const dn_fp8_mat *m, const float *x, const size_t r[DN_FP8_WAYS],
                        float sum[DN_FP8_WAYS]);

static int rows8_scaled(const dn_fp8_mat *m, const float *x, const size_t r[DN_FP8_WAYS],
                        float sum[DN_FP8_WAYS])
{
    return rows8(m, x, 1, r, sum, NULL, NULL);
}

static int rows8_plain(const dn_fp8_mat *m, const float *x, const size_t r[DN_FP8_WAYS],
                       float sum[DN_FP8_WAYS])
{
    return rows8(m, x, 0, r, sum, NULL, NULL);
}

static __attribute__((target("avx512vbmi,gfni"))) int rows8_scaled_vbmi(const dn_fp8_mat *m,
                                                                        const float *x,
                                                                        const size_t r[DN_FP8_WAYS],
                                                                        float sum[DN_FP8_WAYS])
{
    return rows8(m, x, 1, r, sum, code_classes_vbmi, steps64_gfni);
}

static __attribute__((target("avx512vbmi,gfni"))) int rows8_plain_vbmi(const dn_fp8_mat *m,
                                                                       const float *x,
                                                                       const size_t r[DN_FP8_WAYS],
                                                                       float sum[DN_FP8_WAYS])
{
    return rows8(m, x, 0, r, sum, code_classes_vbmi, steps64_gfni);
}

/* xs[i] = x[i] * 2^8, exact, unless some finite |x[i]| >= 2^120 (then 0). */
static int scale_activation(const float *x, size_t k, float *xs)
{
    const __m512 two8 = _mm512_set1_ps(256.0f), big = _mm512_set1_ps(0x1p120f);
    const __m512 inf = _mm512_set1_ps(INFINITY);
    __mmask16 over = 0;
    size_t i = 0;
    for (; i + 16 <= k; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i), a = _mm512_abs_ps(v);
        over |= _mm512_cmp_ps_mask(a, big, _CMP_GE_OQ) & _mm512_cmp_ps_mask(a, inf, _CMP_LT_OQ);
        _mm512_storeu_ps(xs + i, _mm512_mul_ps(v, two8));
    }
    for (; i < k; i++) {
        float a = x[i] < 0 ? -x[i] : x[i];
        if (a >= 0x1p120f && a < INFINITY) return 0;
        xs[i] = x[i] * 256.0f;
    }
    return over == 0;
}

/* mat_vec's rows r0..r1, eight at a time by `scaled` (on the activation
   times 2^8) or, past 2^120, `plain`; inlined into each table's entry, so
   the row functions inline into the loop (called through the pointers, the
   kernel lost 4 % in L2). */
DN_INLINE int mat_vec_rows_by(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1, float *out,
                              rows8_fn scaled_rows, rows8_fn plain_rows)
{
    float stack[DN_FP8_STACK_FLOATS];
    float *xs = m->k <= DN_FP8_STACK_FLOATS ? stack : malloc(m->k * sizeof *xs);
    int scaled = xs && scale_activation(x, m->k, xs);
    int nan = 0;
    for (size_t r = r0; r < r1; r += DN_FP8_WAYS) {
        size_t rr[DN_FP8_WAYS];
        float sum[DN_FP8_WAYS];
        for (int i = 0; i < DN_FP8_WAYS; i++) rr[i] = r + (size_t)i < r1 ? r + (size_t)i : r1 - 1;
        int maybe = scaled ? scaled_rows(m, xs, rr, sum) : plain_rows(m, x, rr, sum);
        for (int i = 0; i < DN_FP8_WAYS && r + (size_t)i < r1; i++) {
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

static int mat_vec_rows_avx512(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1,
                               float *out)
{
    return mat_vec_rows_by(m, x, r0, r1, out, rows8_scaled, rows8_plain);
}

static __attribute__((target("avx512vbmi,gfni"))) int
mat_vec_rows_vbmi(const dn_fp8_mat *m, const float *x, size_t r0, size_t r1, float *out)
{
    return mat_vec_rows_by(m, x, r0, r1, out, rows8_scaled_vbmi, rows8_plain_vbmi);
}

/* ---- mat_mul: four rows' blocks decoded once, eight columns at a time ------------ */

/* The block sums of R (1 or DN_FP8_MM_ROWS) rows' decoded weights
   wf[i][0..128) against eight columns: R x 8 chains, each column's
   activations loaded once for the R rows. */
DN_INLINE void cols8(const float *const wf[DN_FP8_MM_ROWS], int R,
                     const float *const x[DN_FP8_WAYS], __m256 s[DN_FP8_MM_ROWS])
{
    __m512 a[DN_FP8_MM_ROWS][DN_FP8_WAYS];
    for (int i = 0; i < R; i++)
        for (int c = 0; c < DN_FP8_WAYS; c++) a[i][c] = _mm512_setzero_ps();
    for (size_t e = 0; e < DN_FP8_BLOCK; e += 16) {
        __m512 w[DN_FP8_MM_ROWS];
        for (int i = 0; i < R; i++) w[i] = _mm512_loadu_ps(wf[i] + e);
        for (int c = 0; c < DN_FP8_WAYS; c++) {
            __m512 xc = _mm512_loadu_ps(x[c] + e);
            for (int i = 0; i < R; i++) a[i][c] = _mm512_fmadd_ps(w[i], xc, a[i][c]);
        }
    }
    for (int i = 0; i < R; i++) s[i] = fold8(a[i]);
}

/* One block (columns col..col+len) of rows r..r+R into every column's
   running sums out[c*rows + r + i]. A partial block's activations are
   copied before zeros, eight columns at a time. */
DN_INLINE void block_columns(const dn_fp8_mat *m, const float *const wf[DN_FP8_MM_ROWS], int R,
                             const float *act, size_t n, size_t r, size_t col, size_t len,
                             const float scale[DN_FP8_MM_ROWS], float *out)
{
    float xp[DN_FP8_WAYS][DN_FP8_BLOCK];
    if (len < DN_FP8_BLOCK) memset(xp, 0, sizeof xp);
    for (size_t c = 0; c < n; c += DN_FP8_WAYS) {
        const float *x[DN_FP8_WAYS];
        for (size_t i = 0; i < DN_FP8_WAYS; i++) {
            size_t cc = c + i < n ? c + i : n - 1;
            x[i] = act + cc * m->k + col;
            if (len < DN_FP8_BLOCK) x[i] = memcpy(xp[i], x[i], len * sizeof(float));
        }
        __m256 sv[DN_FP8_MM_ROWS];
        float s[DN_FP8_MM_ROWS][DN_FP8_WAYS];
        cols8(wf, R, x, sv);
        for (int q = 0; q < R; q++) {
            _mm256_storeu_ps(s[q], sv[q]);
            for (size_t i = 0; i < DN_FP8_WAYS && c + i < n; i++) {
                float *y = &out[(c + i) * m->rows + r + (size_t)q];
                *y = __builtin_fmaf(s[q][i], scale[q], *y);
            }
        }
    }
}

/* Rows r..r+R (R = 1 or DN_FP8_MM_ROWS): each block of each row decoded
   once, then run against every column. */
DN_INLINE int rows_columns(const dn_fp8_mat *m, const float *act, size_t n, size_t r, int R,
                           float *out)
{
    int nan = 0, nan_row[DN_FP8_MM_ROWS] = {0};
    float wf[DN_FP8_MM_ROWS][DN_FP8_BLOCK];
    const float *wp[DN_FP8_MM_ROWS];
    for (int q = 0; q < DN_FP8_MM_ROWS; q++) wp[q] = wf[q];
    for (int q = 0; q < R; q++)
        for (size_t c = 0; c < n; c++) out[c * m->rows + r + (size_t)q] = 0.0f;
    for (size_t j = 0, col = 0; col < m->k; j++, col += DN_FP8_BLOCK) {
        size_t len = m->k - col < DN_FP8_BLOCK ? m->k - col : DN_FP8_BLOCK;
        float scale[DN_FP8_MM_ROWS];
        for (int q = 0; q < R; q++) {
            nan_row[q] |= decode_block(m->w + (r + (size_t)q) * m->k + col, wf[q], len);
            if (len < DN_FP8_BLOCK) memset(wf[q] + len, 0, (DN_FP8_BLOCK - len) * sizeof(float));
            scale[q] = dn_fp8_scale(m, r + (size_t)q, j);
        }
        block_columns(m, wp, R, act, n, r, col, len, scale, out);
    }
    for (int q = 0; q < R; q++) {
        for (size_t c = 0; c < n; c++) {
            float *y = &out[c * m->rows + r + (size_t)q];
            *y = nan_row[q] ? dn_from_bits(DN_NAN_BITS) : dn_fp8_finish(*y, m->tensor_scale);
        }
        nan |= nan_row[q];
    }
    return nan;
}

static int mat_mul_rows_avx512(const dn_fp8_mat *m, const float *act, size_t n, size_t r0,
                               size_t r1, float *out)
{
    int nan = 0;
    size_t r = r0;
    for (; r + DN_FP8_MM_ROWS <= r1; r += DN_FP8_MM_ROWS)
        nan |= rows_columns(m, act, n, r, DN_FP8_MM_ROWS, out);
    for (; r < r1; r++) nan |= rows_columns(m, act, n, r, 1, out);
    return nan;
}

const dn_fp8_kernels dn_fp8_avx512 = {
    .decode = decode_avx512,
    .mat_vec_rows = mat_vec_rows_avx512,
    .mat_mul_rows = mat_mul_rows_avx512,
};

/* The same kernels with mat_vec's code tests by AVX512_VBMI's byte
   permute and its normal codes decoded by GFNI (steps64_gfni): registered
   in place of the table above when the CPU has both (src/dispatch.c). */
const dn_fp8_kernels dn_fp8_avx512vbmi = {
    .decode = decode_avx512,
    .mat_vec_rows = mat_vec_rows_vbmi,
    .mat_mul_rows = mat_mul_rows_avx512,
};
