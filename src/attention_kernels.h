/* SPDX-License-Identifier: MIT */
/*
 * attention_kernels.h: the attention module's kernel table.
 *
 * One table per ISA, registered in src/dispatch.c. dn_attention_scalar holds
 * the references (src/attention.c); the AVX2 and NEON tables reproduce them
 * bit for bit; an entry an ISA leaves NULL runs the ISA below it. Each entry
 * works on one group: `heads` query heads sharing one KV head, positions
 * 0..n-1 of rows at `stride` elements (the caller has moved the row
 * pointers to the first position). Scores and probabilities are laid out
 * head by head: s[g * n + j].
 */
#ifndef DN_ATTENTION_KERNELS_H
#define DN_ATTENTION_KERNELS_H

#include "decodenum/attention.h"
#include "decodenum/fp32.h"
#include "decodenum/math.h"
#include "bits.h"

typedef struct dn_attention_kernels {
    /* s[g*n + j] = fmul(fdot(q + g*d, key row j widened), scale) */
    void (*scores)(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                   size_t stride, size_t n, float scale, float *s);
    /* out[g*d + i] = fdot over j of p[g*n + j] and element i of value row j
       (position j in lane j mod 32) */
    void (*weighted)(uint32_t type, const float *p, size_t heads, size_t n, const void *v,
                     size_t stride, size_t d, float *out);
    /* s[g*n + j] = fmul(int8_score(q[g], key row j), scale); q[g] are
       quantized heads (dn_quantize_head) of the same scaling */
    void (*scores_int8)(const dn_act_row *q, size_t heads, size_t d, const int8_t *k, size_t stride,
                        const uint16_t *ks, size_t scale_stride, size_t n, float scale, float *s);
    /* out[g*d + i] = weighted_int8(p + g*n, value rows); returns non-zero
       when a block held a non-finite weight */
    int (*weighted_int8)(const float *p, size_t heads, size_t n, const int8_t *v, size_t stride,
                         const uint16_t *vs, size_t scale_stride, size_t d, float *out);
    /* dn_ref_cache_row: one int8 cache row (n >= 0, x, scale and codes
       present); returns 1 when x holds an infinity or a NaN. */
    int (*cache_row)(const float *x, size_t n, uint16_t *scale, int8_t *codes);
} dn_attention_kernels;

/* The references. */
void dn_ref_attn_scores(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                        size_t stride, size_t n, float scale, float *s);
void dn_ref_attn_weighted(uint32_t type, const float *p, size_t heads, size_t n, const void *v,
                          size_t stride, size_t d, float *out);
void dn_ref_attn_scores_int8(const dn_act_row *q, size_t heads, size_t d, const int8_t *k,
                             size_t stride, const uint16_t *ks, size_t scale_stride, size_t n,
                             float scale, float *s);
int dn_ref_attn_weighted_int8(const float *p, size_t heads, size_t n, const int8_t *v,
                              size_t stride, const uint16_t *vs, size_t scale_stride, size_t d,
                              float *out);

/* dn_int8_codes, and dn_cache_row (which returns 1 when x holds an infinity
   or a NaN): a row per token and head. */
void dn_ref_int8_codes(const float *x, size_t n, float inv, int8_t *codes);
int dn_ref_cache_row(const float *x, size_t n, uint16_t *scale, int8_t *codes);

/* A cache row's scale from its largest magnitude, as dn_cache_row takes it:
   the binary16 of fmul(amax, DN_INV_127) into *scale; returns the
   reciprocal its codes are made under (dn_recip of the scale widened). */
static inline float dn_cache_row_scale(float amax, uint16_t *scale)
{
    const uint16_t h = dn_f32_to_f16(dn_fmul(amax, dn_from_bits(DN_INV_127_BITS)));
    *scale = h;
    return dn_recip(dn_f16_to_f32(h));
}

/* ---- what the kernels share ---------------------------------------------------- */

/* Element i of a cached row of `type` (f32, f16, bf16) as the engine reads it:
   f32 through FTZ, binary16 widened exactly, bfloat16 by dn_bf16_to_f32. */
float dn_attn_elem(uint32_t type, const void *row, size_t i);

/* dn_int8_score of one quantized head against one key row (d codes). */
float dn_attn_int8_score1(const dn_act_row *q, size_t d, uint16_t key_scale, const int8_t *key);

/* A query head's fast score plan: where every score is the one rounding of
   an exact double. f[c] (per chunk of 32 elements) = m_b * 2^(e_b - emin)
   for chunk c in block b (0 for a block of zero codes); valid when
   2047 * sum_c f[c] * 128 * sum |codes of c| < 2^53, so every sum the
   kernels form is exact. chunks = padded length / 32. */
typedef struct dn_attn_plan {
    int fast; /* the bound holds: the kernels may use f and emin */
    int32_t emin;
    size_t chunks;
    double f[DN_ATTN_MAX_HEAD_DIM / 32];
} dn_attn_plan;
void dn_attn_plan_of(const dn_act_row *q, size_t d, dn_attn_plan *plan);

/* The score from an exact sum: RN32((t * sig(key_scale)) * 2^(emin + exp)),
   +0 for an exact zero, NaN for a non-finite key scale; t is an integer
   with |t * sig| < 2^53. */
float dn_attn_round_score(double t, int32_t emin, uint16_t key_scale);

/* One value block of weighted_int8: the weights w_j = fmul(p_j, scale_j)
   of its m <= 32 positions, their power-of-two exponent *e and codes c.
   Returns 0, or 1 when a weight is not finite (then c and *e are 0). */
int dn_attn_value_block(const float *p, const uint16_t *vs, size_t scale_stride, size_t m,
                        int16_t c[DN_VALUE_BLOCK], int32_t *e);

/* S * 2^e rounded once to f32, FTZ (|S| < 2^31). */
float dn_attn_piece(int32_t s, int32_t e);

extern const dn_attention_kernels dn_attention_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_attention_kernels dn_attention_avx2;
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_attention_kernels dn_attention_avx512;
extern const dn_attention_kernels dn_attention_avx512vnni; /* with AVX512_VNNI */
#endif
#if defined(DN_HAVE_NEON)
extern const dn_attention_kernels dn_attention_neon;
#endif

#endif
