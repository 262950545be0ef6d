/* SPDX-License-Identifier: MIT */
/*
 * decodenum/quant.h: activations quantized under scales m * 2^e.
 *
 * An activation row crosses the engine's array as whole-number codes, each
 * worth code * m * 2^e of its block, where the block's scale m * 2^e has a
 * small significand m. The codes are the exact nearest integers of
 * x / (m * 2^e), ties to even (dn_rne_div): no f32 division happens.
 *
 * Two scalings (dn_act_scaling), chosen per matrix product:
 *  - DN_ACT_SUB32: a scale per DN_ACT_BLOCK (32) elements, m in 8..15;
 *  - DN_ACT_PER_BLOCK: a scale per weight block (32 or 256 elements, the
 *    matrix format's own block), m in 128..255 (DN_WIDE_BITS significand bits).
 * Two word counts (dn_words): a code crosses in one word (|code| <= 127) or
 * two (a signed high byte and an unsigned low byte, |code| <= 32767); the
 * scale of a block is the least one whose bound (127 or 32767) times the
 * scale reaches the block's largest magnitude.
 *
 * Inputs are read through FTZ (a denormal is zero). A block whose elements are
 * all zero gets the canonical scale m = 8 (Sub32) or 128 (per block), e = 0,
 * and zero codes. An infinite or NaN element makes the row unquantizable:
 * DN_ERR_NON_FINITE, with the index of the first such element reported.
 */
#ifndef DECODENUM_QUANT_H
#define DECODENUM_QUANT_H

#include "decodenum/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DN_GROUP 256    /* elements whose products round to f32 together (Sub32) */
#define DN_ACT_BLOCK 32 /* elements under one Sub32 activation scale */
#define DN_WIDE_BITS 8  /* significand bits of a per-block activation scale */

typedef enum dn_act_scaling {
    DN_ACT_SUB32 = 0,    /* per 32 elements, m in 8..15 */
    DN_ACT_PER_BLOCK = 1 /* per weight block, m in 128..255 */
} dn_act_scaling;

typedef enum dn_words {
    DN_WORDS_ONE = 1, /* codes within +-127 */
    DN_WORDS_TWO = 2  /* codes within +-32767: high byte signed, low byte unsigned */
} dn_words;

/* An activation block's scale m * 2^e. */
typedef struct dn_act_scale {
    int32_t m;
    int32_t e;
} dn_act_scale;

/* An activation row: codes[i] is worth codes[i] * m * 2^e of scales[i / block].
   The caller provides codes (n) and scales (n / block). */
typedef struct dn_act_row {
    int16_t *codes;
    dn_act_scale *scales;
    size_t n;
    uint32_t block; /* elements per scale: 32, or the weight block */
    dn_words words;
} dn_act_row;

/* The least scale m * 2^e, m in 8..15 (dn_block_scale) or in 128..255
   (dn_wide_scale), with bound * m * 2^e >= amax, bound 127 for one word and
   32767 for two. amax must be finite and positive (after FTZ), else
   DN_ERR_INVALID_ARGUMENT, as for a NULL scale or a `words` other than
   DN_WORDS_ONE and DN_WORDS_TWO. Exact (integer arithmetic); O(1). */
DN_API dn_status dn_block_scale(float amax, dn_words words, dn_act_scale *scale);
DN_API dn_status dn_wide_scale(float amax, dn_words words, dn_act_scale *scale);

/* x (n elements, a whole number of DN_ACT_BLOCK) quantized per 32 under
   dn_block_scale of each block's largest magnitude: the Sub32 scaling.
   row->n must be n; row->block is set to 32 and row->words to `words`.
   DN_ERR_INVALID_ARGUMENT for a NULL row, row->n != n, n not a whole number
   of blocks, an unknown `words`, or NULL x, row->codes or row->scales with
   n > 0; DN_ERR_NON_FINITE with *bad (if not NULL) the first non-finite
   index. Allocates nothing; O(n). */
DN_API dn_status dn_quantize(const float *x, size_t n, dn_words words, dn_act_row *row,
                             size_t *bad);

/* x quantized per block of `block` elements (32 or 256; n a whole number of
   them) under dn_wide_scale: the per-block scaling. As dn_quantize otherwise
   (a `block` other than 32 or 256 is DN_ERR_INVALID_ARGUMENT). */
DN_API dn_status dn_quantize_blocks(const float *x, size_t n, size_t block, dn_words words,
                                    dn_act_row *row, size_t *bad);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_QUANT_H */
