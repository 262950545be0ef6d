/* SPDX-License-Identifier: MIT */
/*
 * quant_kernels.h: the activation quantization module's kernel table, and
 * what its kernels share.
 *
 * dn_quant_scalar holds the reference (src/quant.c's dn_ref_quantize, the
 * definition); dn_quant_avx2 and dn_quant_neon reproduce it bit for bit.
 * The public functions (src/quant_api.c) validate their arguments, then call
 * the table of dn_isa_active(); a kernel may assume arguments the public
 * function accepted.
 */
#ifndef DN_QUANT_KERNELS_H
#define DN_QUANT_KERNELS_H

#include "decodenum/quant.h"
#include "bits.h"

#include <math.h>
#include <string.h>

typedef struct dn_quant_kernels {
    /* x (n, a whole number of `block`s, block 32 or 256) quantized per block
       with scale significands in [lo, 2 lo) (lo 8: dn_block_scale, 128:
       dn_wide_scale): the reference is dn_ref_quantize. The arguments are
       valid (row->n == n, buffers present when n > 0). */
    dn_status (*quantize)(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                          dn_act_row *row, size_t *bad);
    /* The facts of a row's codes a product's activation side is built from
       (src/dot_act.c), for codes[0 .. n), n a multiple of 32: per 16 codes
       u, sum16[u] their sum and amax16[u] their largest magnitude (|-32768|
       is 32768); per 32 codes v, sum32[v] = sum16[2 v] + sum16[2 v + 1];
       low8[i] the low byte of codes[i] as int8 (the code itself when
       |code| <= 127). Returns 1 when every |code| <= 127, else 0. The
       reference is dn_ref_code_sums. */
    int (*code_sums)(const int16_t *codes, size_t n, int8_t *low8, int32_t *sum16, int32_t *sum32,
                     int32_t *amax16);
} dn_quant_kernels;

/* The reference (src/quant.c). */
dn_status dn_ref_quantize(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                          dn_act_row *row, size_t *bad);
int dn_ref_code_sums(const int16_t *codes, size_t n, int8_t *low8, int32_t *sum16, int32_t *sum32,
                     int32_t *amax16);

extern const dn_quant_kernels dn_quant_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_quant_kernels dn_quant_avx2;
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_quant_kernels dn_quant_avx512;
#endif
#if defined(DN_HAVE_NEON)
extern const dn_quant_kernels dn_quant_neon;
#endif

/* ---- what the kernels share ------------------------------------------------- */

/* dn_block_scale / dn_wide_scale (lo 8 / 128) for a finite, positive, normal
   amax, by one double division: amax / bound rounded up to the grid of
   log2(2 lo) significant bits. Equal to the reference's integer search
   (check_dot holds it to it): the double quotient is within 2^-53 of the
   exact one, and the exact quotient is either on the grid or at least
   2^-39 relatively away from every grid value, so rounding up the double
   gives the same grid value. */
void dn_quant_fast_scale(float amax, int32_t lo, dn_words words, dn_act_scale *s);

/* A kernel's start: nf, the first non-finite index of x (n when there is
   none), reported as the reference reports it; else the row's block and
   words set and DN_OK. */
static inline dn_status dn_quant_start(size_t nf, size_t n, size_t block, dn_words words,
                                       dn_act_row *row, size_t *bad)
{
    if (nf < n) {
        if (bad) *bad = nf;
        return DN_ERR_NON_FINITE;
    }
    row->block = (uint32_t)block;
    row->words = words;
    return DN_OK;
}

/* A block's scale from its largest magnitude: below 2^-126 every element
   reads as zero (FTZ), so the block gets the canonical scale lo * 2^0 and
   zero codes (0 returned); else dn_quant_fast_scale's, with *md = m 2^e
   (exact in double), and 1. */
static inline int dn_quant_block_scale(float amax, int32_t lo, dn_words words, size_t block,
                                       int16_t *codes, dn_act_scale *sc, double *md)
{
    if (amax < 0x1p-126f) {
        sc->m = lo;
        sc->e = 0;
        memset(codes, 0, block * sizeof *codes);
        return 0;
    }
    dn_quant_fast_scale(amax, lo, words, sc);
    *md = (double)sc->m * dn_pow2d(sc->e); /* e within -148..121 */
    return 1;
}

#endif
