/* SPDX-License-Identifier: MIT */
/*
 * avx512_bf16.h: binary32 to bfloat16 by AVX512_BF16's vcvtne2ps2bf16, with
 * dn_f32_to_bf16's bits. A function using it carries DN_BF16_TARGET and runs
 * only where the CPU reports AVX512_BF16 (src/isa.c; src/dispatch.c
 * registers such kernels only there).
 */
#ifndef DN_AVX512_BF16_H
#define DN_AVX512_BF16_H

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
   over every binary32 input by tests/exhaustive_store.c. */
DN_BF16_TARGET static inline __attribute__((always_inline)) __m512i dn_avx512_bf16_round32(__m512 lo, __m512 hi, __m512i order)
{
    __m512i h = _mm512_permutexvar_epi16(order, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    __mmask32 nan = _mm512_cmpgt_epu16_mask(_mm512_and_si512(h, _mm512_set1_epi16(0x7FFF)),
                                            _mm512_set1_epi16(0x7F80));
    return _mm512_mask_mov_epi16(h, nan, _mm512_set1_epi16((short)DN_BF16_NAN_BITS));
}

#endif
