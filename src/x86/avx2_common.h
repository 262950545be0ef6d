/* SPDX-License-Identifier: MIT */
/*
 * avx2_common.h: what every AVX2 kernel shares: the FTZ rule on vectors, the
 * DN_LANES tree over four 8-lane accumulators, and the MXCSR section the
 * reductions run in.
 *
 * Why DAZ and not FTZ: the engine reads a denormal operand as a zero of its
 * sign (exactly what MXCSR.DAZ does), but flushes a result only when it is
 * denormal after IEEE rounding. MXCSR.FTZ decides "tiny" before the denormal
 * rounding, so a product whose exact value lies in
 * [2^-126 - 2^-150, 2^-126 - 2^-151) would become 0 where the engine gives
 * 2^-126. With DAZ alone, a product or sum may come out denormal, but it is
 * only ever used as the operand of the next add, where DAZ reads it as the
 * zero the engine would have stored; the final value is flushed explicitly.
 * Adds never round near zero (a sum that small is exact), so lanes, tree and
 * result carry the reference's bits.
 */
#ifndef DN_AVX2_COMMON_H
#define DN_AVX2_COMMON_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define DN_MXCSR_DAZ_NEAREST 0x1FC0u /* all exceptions masked, DAZ, round to nearest, no FTZ */

/* GCC's first scheduling pass (off at -O3 on x86), register-pressure
   aware, for the activations' array loops that run two vectors an
   iteration (math_act_avx2.h, math_act_avx512.h): it interleaves the two
   bodies, which GCC otherwise emits one after the other. Against one
   vector an iteration (docs/math.md, "AVX2 activations, two chains"):
   AVX2 gelu 0.83x the time, gelu_tanh 0.79x, sigmoid 0.92x, silu 0.90x,
   tanh 0.98x; AVX-512 sigmoid 0.93x, silu 0.85x. On all of math_avx2.c it
   slowed exp_v and sincos_v by 1.1x, hence a function attribute. Same
   operations, so the same bits (the FMA count of each body checked
   unchanged: -ffp-contract=off holds); Clang builds go without. */
#if defined(__GNUC__) && !defined(__clang__)
#define DN_INTERLEAVED __attribute__((optimize("schedule-insns", "sched-pressure")))
#else
#define DN_INTERLEAVED
#endif

/* Enters the reductions' MXCSR mode; returns the caller's MXCSR. The memory
   clobber keeps the loads that follow from moving above it. */
static inline unsigned dn_avx2_enter(void)
{
    unsigned old, mode = DN_MXCSR_DAZ_NEAREST;
    __asm__ volatile("vstmxcsr %0" : "=m"(old) : : "memory");
    __asm__ volatile("vldmxcsr %0" : : "m"(mode) : "memory");
    return old;
}

/* Restores the caller's MXCSR once `v` is computed (the empty asm pins the
   value before the restore). */
static inline float dn_avx2_leave(unsigned old, float v)
{
    __asm__ volatile("" : "+x"(v));
    __asm__ volatile("vldmxcsr %0" : : "m"(old) : "memory");
    return v;
}

/* A denormal becomes a zero of its sign; zeros, normals, inf, NaN unchanged. */
static inline __m256 dn_avx2_flush(__m256 x)
{
    const __m256i exp = _mm256_set1_epi32(0x7F800000);
    const __m256i mag = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i u = _mm256_castps_si256(x);
    __m256i tiny = _mm256_cmpeq_epi32(_mm256_and_si256(u, exp), _mm256_setzero_si256());
    return _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_and_si256(tiny, mag), u));
}

/* Lanes with index < count set, for a tail of 0..8 elements. */
static inline __m256i dn_avx2_tail_mask(size_t count)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)count), idx);
}

/* dn_tree over 32 lanes held as lanes 0-7, 8-15, 16-23, 24-31. hadd adds
   adjacent lanes within each 128-bit half, so two hadds leave the sums of
   lanes 0-3 and 4-7 of each accumulator in matching positions of the low and
   high halves; the rest of the tree follows. */
static inline float dn_avx2_tree32(__m256 l0, __m256 l1, __m256 l2, __m256 l3)
{
    __m256 pairs01 = _mm256_hadd_ps(l0, l1); /* (0+1),(2+3),(8+9),(10+11) | (4+5),... */
    __m256 pairs23 = _mm256_hadd_ps(l2, l3);
    __m256 quads = _mm256_hadd_ps(pairs01, pairs23); /* lanes 0-3, 8-11, 16-19, 24-27 | 4-7, ... */
    __m128 eights = _mm_add_ps(_mm256_castps256_ps128(quads), _mm256_extractf128_ps(quads, 1));
    __m128 sixteens = _mm_hadd_ps(eights, eights); /* 0-15, 16-31, 0-15, 16-31 */
    __m128 all = _mm_add_ss(sixteens, _mm_movehdup_ps(sixteens));
    return _mm_cvtss_f32(all);
}

/* Every cache line of [p, p + bytes) into L1. A cached row need not start
   on a line: 128 bytes at 16 mod 64 span three lines, and prefetching p and
   p + 64 alone left the third to a demand miss on every row (int8 scores
   over 32768 key rows 1 KiB apart, malloc'd: 2x the time of 64-byte
   aligned rows, and the AVX-512 kernel slower than the AVX2 one). */
static inline __attribute__((always_inline)) void dn_prefetch_span(const void *p, size_t bytes)
{
    const char *c = (const char *)p;
    for (size_t b = 0; b < bytes; b += 64) _mm_prefetch(c + b, _MM_HINT_T0);
    _mm_prefetch(c + bytes - 1, _MM_HINT_T0);
}

/* How far ahead of a row stream its pages are touched (dn_rows_page_ahead):
   three 4 KiB pages, a row of 2048 F16 weights three rows ahead. */
#define DN_PAGE_AHEAD 12288

/* Before row r of the rows [r, r1) of row_bytes each at w: one prefetch into
   each 4 KiB page of the row about DN_PAGE_AHEAD bytes ahead, within the
   range. A row stream's own prefetch (4 KiB ahead in the F16 one-row
   stream) and the hardware prefetchers stop at each 4 KiB page of a file's
   mapping; a prefetch there also walks the page tables, so the stream's
   prefetches then find the page's translation and start at once. The
   TinyLlama-shaped F16 and BF16 files decoding from their mapping (4 KiB
   pages, AVX-512, 2026-12-05, idle, three alternated rounds of
   `decodenum decode -n 48`): one thread F16 12.36 -> 14.35 tokens/s mean,
   BF16 13.26 -> 15.25; two threads F16 20.6 -> 23.8, BF16 22.0 -> 25.9
   (two rounds); 8 KiB and 20 KiB ahead within the noise of 12 KiB. */
static inline __attribute__((always_inline)) void
dn_rows_page_ahead(const void *w, size_t row_bytes, size_t r, size_t r1)
{
    if (row_bytes == 0) return; /* k = 0: nothing to read */
    const size_t d = row_bytes >= DN_PAGE_AHEAD ? 1 : DN_PAGE_AHEAD / row_bytes;
    if (d >= r1 - r) return;
    const char *p = (const char *)w + (r + d) * row_bytes;
    for (size_t o = 0; o < row_bytes; o += 4096) _mm_prefetch(p + o, _MM_HINT_T0);
}

#endif
