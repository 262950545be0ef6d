/* SPDX-License-Identifier: MIT */
/*
 * decodenum/lane.h: the block-scale lane, the reference model of the
 * hardware array's lane.
 *
 * The array never sees a signed code. A weight code q is the block decoder's
 * unsigned code (one or two 4-bit digits, 0..255) with a zero point z, and
 * each unit of DN_LANE_UNIT (16) elements has a coefficient c (the sub-block
 * scale) and an offset multiplier n, so that the coded row of
 * decodenum/blocks.h is, element by element,
 *
 *     coef = c * (q - z),     offs = n.
 *
 * An activation code crosses in words of 8 bits (decodenum/quant.h):
 *   one word:   a crosses as a' = a + 128 (excess form);
 *   two words:  a = 256 * hi + lo, hi signed and crossing as hi + 128,
 *               lo unsigned (0..255) and crossing as itself.
 *
 * Per unit and word the array delivers P' = sum q * a', the weight image
 * carries Q = sum q, the activation side carries S' = sum a'. The unit's sums
 * against the signed codes follow exactly (docs/numerics.md section 9):
 *
 *   excess word:  sum (q - z) * a = P' - 128 * Q - z * S' + 128 * 16 * z,
 *                 sum a          = S' - 128 * 16;
 *   low byte:     sum (q - z) * a = P' - z * S',   sum a = S';
 *   two words:    the high word's sums weighted by 256, plus the low word's.
 *
 * The block's coefficient sum is sum_u c_u * sum (q - z) * a, its offset sum
 * sum_u n_u * sum a; these are exactly sum coef * code and sum offs * code.
 * The lane multiplies them by the block's scales times the activation scale,
 * sums the two terms exactly (dn_exact_sum), rounds once and adds into the
 * row (dn_fadd): bit for bit what dn_dot computes.
 *
 * Accumulator widths (proved in docs/numerics.md section 9): P' < 2^20,
 * Q < 2^12, S' < 2^12, all unsigned.
 *
 * Everything here is a scalar reference: plain integer arithmetic, no
 * allocation, no global state, reentrant.
 */
#ifndef DECODENUM_LANE_H
#define DECODENUM_LANE_H

#include "decodenum/blocks.h"
#include "decodenum/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DN_LANE_UNIT 16      /* elements of a unit: one c, one n, one P' per word */
#define DN_LANE_SUB_BLOCK 32 /* elements a per-32 (Sub32) activation scale covers */
#define DN_LANE_MAX_UNITS 16 /* units of the largest weight block (256 elements) */
#define DN_LANE_EXCESS 128   /* the excess of an excess-form word: a' = a + 128 */

/* The accumulator widths the array needs, and the largest values they hold:
   P' <= 16 * 255 * 255 = 1040400 < 2^20; Q, S' <= 16 * 255 = 4080 < 2^12. */
#define DN_LANE_P_BITS 20
#define DN_LANE_QS_BITS 12
#define DN_LANE_P_MAX 1040400u
#define DN_LANE_QS_MAX 4080u

/* The largest |sum coef * code| or |sum offs * code| of a block:
   256 elements * DN_COEF_BOUND (4096) * 32768 (a two-word code) = 2^35. */
#define DN_LANE_SUM_BOUND (INT64_C(1) << 35)

/* One unit of a weight block as the weight image holds it: the element at
   position i of the unit has coef = c * (q[i] - z) and offs = n. */
typedef struct dn_lane_unit {
    uint8_t q[DN_LANE_UNIT]; /* the decoder's unsigned codes */
    uint16_t sum_q;          /* Q = q[0] + ... + q[15] (<= 4080) */
    uint8_t z;               /* zero point (0, 4, 8, 16, 32 or 128 in ggml's formats) */
    uint8_t reserved;        /* 0 */
    int16_t c;               /* coefficient: the sub-block scale (1 where the format has none) */
    int16_t n;               /* offset multiplier (0 where the format has no offset) */
} dn_lane_unit;

/* One weight block as the weight image holds it: its units and its scales
   a, b (the coded row's segment scales, decodenum/blocks.h). */
typedef struct dn_lane_image {
    dn_lane_unit units[DN_LANE_MAX_UNITS];
    uint32_t nunits;   /* 2 (32-element formats) or 16 (256-element formats) */
    uint32_t reserved; /* 0 */
    dn_scale a;        /* the scale of the coefficient sum */
    dn_scale b;        /* the scale of the offset sum ({0, 0} where none) */
} dn_lane_image;

/* What the array and the activation side hand a lane for one unit of one
   word: P' = sum q * a' and S' = sum a'. */
typedef struct dn_lane_unit_sums {
    uint32_t p;        /* P' (< 2^20) */
    uint16_t s;        /* S' (< 2^12) */
    uint16_t reserved; /* 0 */
} dn_lane_unit_sums;

/* One word's unit sums: whether the word crossed in excess form, its weight
   in the code, and the sums of the units the lane covers (indexed by the
   unit's index in the block, units [first, first + count) of dn_lane_block). */
typedef struct dn_lane_word_sums {
    uint8_t excess;   /* 1: a' = a + 128 (a one-word code, a high byte); 0: a low byte */
    uint8_t reserved; /* 0 */
    uint16_t weight;  /* 1, or 256 for a two-word code's high byte */
    dn_lane_unit_sums units[DN_LANE_MAX_UNITS];
} dn_lane_word_sums;

/* One weight block as a lane reads it (the seed's LaneBlock): the weight
   image, the activation scale of the elements it covers, and per word the
   covered units' sums. dn_lane_deliver covers the whole block;
   dn_lane_deliver32 one 32-element sub-block (two units). */
typedef struct dn_lane_block {
    dn_lane_image w;   /* the whole weight block, whatever is covered */
    dn_act_scale act;  /* m * 2^e of the covered elements */
    uint32_t first;    /* first covered unit */
    uint32_t count;    /* covered units: w.nunits (a block) or 2 (a sub-block) */
    uint32_t nwords;   /* 1 or 2 */
    uint32_t reserved; /* 0 */
    /* nwords 1: words[0] = {excess 1, weight 1}.
       nwords 2: words[0] = {excess 1, weight 256} (high byte),
                 words[1] = {excess 0, weight 1}   (low byte). */
    dn_lane_word_sums words[2];
} dn_lane_block;

/* ---- the weight image ------------------------------------------------------ */

/* The weight image of one stored block of `type` (dn_type_block_bytes(type)
   bytes at `block`, ggml's layout, read little-endian on any host): every
   unit's q, Q, z, c, n and the block's scales. For every element,
   c * (q - z) and n are exactly the coef and offs dn_read_row reads.
   DN_ERR_UNSUPPORTED_TYPE when !dn_reads(type); DN_ERR_INVALID_ARGUMENT for
   NULL pointers; DN_ERR_UNREADABLE_BLOCK when a scale is infinite or NaN
   (*image is then unspecified). O(block elements). */
DN_API dn_status dn_lane_image_read(dn_type type, const uint8_t *block, dn_lane_image *image);

/* ---- one unit ------------------------------------------------------------ */

/* What the array and the activation side compute for one unit and one
   word: sums->p = P' = sum q[i] * word[i], sums->s = S' = sum word[i], where
   word[i] is the byte that crosses for element i (a' = a + 128 in excess
   form, or the low byte). DN_ERR_INVALID_ARGUMENT for NULL pointers. O(16). */
DN_API dn_status dn_lane_unit_sums_of(const dn_lane_unit *unit, const uint8_t word[DN_LANE_UNIT],
                                      dn_lane_unit_sums *sums);

/* The unit's sums against the signed codes of one word, from P', Q, S' and
   z alone:
     excess != 0:  *qa = P' - 128 Q - z S' + 2048 z,   *a = S' - 2048;
     excess == 0:  *qa = P' - z S',                     *a = S'.
   *qa = sum (q - z) * a and *a = sum a exactly, where a is the word's signed
   value (a' - 128 or a'). DN_ERR_INVALID_ARGUMENT for NULL pointers or
   sums or Q past their widths (P' > DN_LANE_P_MAX, Q or S' > DN_LANE_QS_MAX).
   O(1). */
DN_API dn_status dn_lane_unit_dot(const dn_lane_unit *unit, const dn_lane_unit_sums *sums,
                                  int excess, int32_t *qa, int32_t *a);

/* ---- delivering a block ------------------------------------------------ */

/* What the weight image, the array and the activation side deliver a lane
   for block b of a row (the per-block scaling): `row` holds the row's n
   elements of `type` as ggml stores them, `act` the row's activations
   quantized per weight block (act->block = the format's block elements,
   dn_quantize_blocks), in act->words words. Fills *out: the block's image,
   act->scales[b], and per word every unit's P', S'.
   DN_ERR_UNSUPPORTED_TYPE when !dn_reads(type); DN_ERR_INVALID_ARGUMENT for
   NULL pointers, n not a whole number of blocks, act->n != n, act->block not
   the format's block, b out of range, act->words not 1 or 2, or a code its
   words cannot carry (one word: -128..127); DN_ERR_UNREADABLE_BLOCK when the
   block has an infinite or NaN scale (*out is unspecified after an error).
   O(block elements). */
DN_API dn_status dn_lane_deliver(dn_type type, const uint8_t *row, size_t n, const dn_act_row *act,
                                 size_t b, dn_lane_block *out);

/* As dn_lane_deliver for the per-32 (Sub32) lane: the 32-element sub-block s
   (0 <= s < block elements / 32) of weight block b, under its own activation
   scale (act->block = DN_LANE_SUB_BLOCK, dn_quantize). *out holds the whole
   block's image and the sums of units 2s and 2s + 1 (first = 2s, count = 2).
   Errors as dn_lane_deliver, and s out of range. O(block elements). */
DN_API dn_status dn_lane_deliver32(dn_type type, const uint8_t *row, size_t n,
                                   const dn_act_row *act, size_t b, size_t s, dn_lane_block *out);

/* ---- the lane's arithmetic ------------------------------------------------ */

/* The covered elements' two exact sums from the delivered unit sums:
   *coef_sum = sum_u c_u * sum (q - z) * a = sum coef * code,
   *offs_sum = sum_u n_u * sum a          = sum offs * code,
   each word's unit sums by dn_lane_unit_dot, times its weight.
   DN_ERR_INVALID_ARGUMENT for NULL pointers, or a block no delivery makes:
   nunits not 2 or 16, covered units outside [0, nunits) or none, nwords not
   1 or 2, a word's excess/weight not as dn_lane_block documents, a unit's
   sum_q not its codes' sum, a sum past its width, or a result past
   DN_LANE_SUM_BOUND. O(covered units). */
DN_API dn_status dn_lane_block_sums(const dn_lane_block *blk, int64_t *coef_sum, int64_t *offs_sum);

/* The block's value rounded once and added into *acc (the per-block
   scaling): the terms (a.sig * m) * coef_sum at 2^(a.exp + e) and
   (b.sig * m) * offs_sum at 2^(b.exp + e) summed by dn_exact_sum, then
   *acc = dn_fadd(*acc, that). Errors as dn_lane_block_sums, and
   DN_ERR_INVALID_ARGUMENT for an activation m outside 1..255, a scale sig
   outside +-32768 or an exponent outside +-2^20 (dn_dot's domain); *acc is
   untouched on error. O(covered units). */
DN_API dn_status dn_lane(float *acc, const dn_lane_block *blk);

/* A group of a row (DN_GROUP elements, its sub-blocks subs[0..nsubs), each
   delivered by dn_lane_deliver32) rounded once and added into *acc (the
   Sub32 scaling): every sub-block's two sums times its block's scales and
   its own activation scale, all 2 * nsubs terms summed by dn_exact_sum,
   *acc = dn_fadd(*acc, that). nsubs <= DN_GROUP / DN_LANE_SUB_BLOCK (8);
   nsubs = 0 adds +0. Errors as dn_lane for each sub-block, and nsubs > 8;
   *acc is untouched on error. O(covered units). */
DN_API dn_status dn_lane_group(float *acc, const dn_lane_block *subs, size_t nsubs);

/* A whole row through the lane: *out = the row . act, per block (deliver,
   then lane, block by block) or Sub32 (per group of DN_GROUP elements, its
   sub-blocks delivered by deliver32, then group), from +0 - bit for bit
   dn_dot of the row dn_read_row reads. Errors as dn_lane_deliver (with
   act->block 32 for Sub32), DN_ERR_INVALID_ARGUMENT also for a NULL out or
   a scaling other than the two; DN_ERR_UNREADABLE_BLOCK sets *bad (if not NULL)
   to the index of the first unreadable block. O(n) (Sub32 on a 256-element
   format decodes each block's image once per sub-block: 8 times); no
   allocation. */
DN_API dn_status dn_lane_dot(dn_type type, const uint8_t *row, size_t n, const dn_act_row *act,
                             dn_act_scaling scaling, float *out, size_t *bad);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_LANE_H */
