/* SPDX-License-Identifier: MIT */
/*
 * avx512_half.h: binary32 results to the two-byte stores in one conversion
 * instruction each, with the bits of dn_f32_to_bf16 and dn_f32_to_f16:
 * bfloat16 by AVX512_BF16's vcvtne2ps2bf16 (a function using it carries
 * DN_BF16_TARGET and runs only where the CPU reports AVX512_BF16: src/isa.c,
 * src/dispatch.c), binary16 by F16C's vcvtps2ph. Both are held to the
 * references over every binary32 input, under the kernels' MXCSR (DAZ) and
 * the default one, by tests/exhaustive_half.c (ctest label exhaustive).
 */
#ifndef DN_AVX512_HALF_H
#define DN_AVX512_HALF_H

#include "decodenum/fp32.h"

#include <immintrin.h>

#define DN_BF16_TARGET __attribute__((target("avx512bf16")))

/* dn_f32_to_bf16 of 32 results, in element order: vcvtne2ps2bf16 rounds to
   nearest even and reads a denormal as the zero of its sign, as the
   reference's flush does (so an operation's result need not be flushed
   first); a NaN keeps its sign and payload there, so every NaN word is then made
   DN_BF16_NAN_BITS. lo holds elements 0-15, hi 16-31; `order` the word
   permutation that puts them where they belong (identity for rows in
   element order, the interleave for even/odd rows). Held to dn_f32_to_bf16
   over every binary32 input by tests/exhaustive_half.c. */
DN_BF16_TARGET static inline __attribute__((always_inline)) __m512i
dn_avx512_bf16_round32(__m512 lo, __m512 hi, __m512i order)
{
    __m512i h = _mm512_permutexvar_epi16(order, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    __mmask32 nan = _mm512_cmpgt_epu16_mask(_mm512_and_si512(h, _mm512_set1_epi16(0x7FFF)),
                                            _mm512_set1_epi16(0x7F80));
    return _mm512_mask_mov_epi16(h, nan, _mm512_set1_epi16((short)DN_BF16_NAN_BITS));
}

/* dn_f32_to_f16 of 16 results: vcvtps2ph rounds to nearest even; a
   denormal binary32 is below half the least binary16 subnormal, so it
   becomes the zero of its sign whether or not it is read as one (the
   reference flushes it first); a NaN keeps its sign and the top of its
   payload there, so every NaN word is then made DN_F16_NAN_BITS. */
static inline __attribute__((always_inline)) __m256i dn_avx512_f16_round16(__m512 x)
{
    __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
    __mmask16 nan = _mm256_cmpgt_epu16_mask(_mm256_and_si256(h, _mm256_set1_epi16(0x7FFF)),
                                            _mm256_set1_epi16(0x7C00));
    return _mm256_mask_mov_epi16(h, nan, _mm256_set1_epi16((short)DN_F16_NAN_BITS));
}

#endif
