/* SPDX-License-Identifier: MIT */
/*
 * decodenum/attention.h: one decode token's attention over a KV cache.
 *
 * A query head attends to the cached key and value rows of positions
 * [begin, end): each position's score, the softmax of the scores, and the
 * probabilities' weighted sum of the value rows. Two paths, both defined
 * bit for bit in docs/numerics.md ("Attention"):
 *
 *  - the vector path (dn_attend_vector; a cache of f32, binary16 or
 *    bfloat16 rows): score_j = fmul(fdot(q, k_j), scale), p = softmax(s),
 *    out_i = fdot(p, v_.i) over the positions (position j - begin in lane
 *    (j - begin) mod 32);
 *  - the int8 path (dn_attend_int8; a cache of int8 rows, each under one
 *    binary16 scale, written by dn_cache_row): the query quantized
 *    (dn_quantize_head), score_j = fmul(dn_int8_score(...), scale),
 *    p = softmax(s), out = dn_weighted_int8(p, values).
 *
 * The engine-facing forms (dn_attend, dn_attend_heads) take a whole layer:
 * q_heads query heads over kv_heads KV heads (grouped-query attention:
 * query head h reads KV head h / (q_heads / kv_heads), and the group's K
 * and V rows are read once for all its heads), rows at any stride. The bits
 * of every output never depend on the ISA, the pool, the head range or the
 * grouping: each query head's numbers are the single-head definition's.
 *
 * Memory: q and out hold q_heads * head_dim floats, head h at h * head_dim.
 * No function keeps a pointer after it returns. Working memory is the
 * caller's (dn_attend_work_size) or, given NULL, allocated and freed by the
 * call. Alignment: natural alignment of each typed array; nothing more.
 * Stack: the weighted sums keep their lane accumulators on the calling
 * thread's stack, about 68 KiB (AVX-512, head size 128 over value rows 32
 * MiB or more apart; 35 KiB otherwise, 18 KiB with AVX2).
 */
#ifndef DECODENUM_ATTENTION_H
#define DECODENUM_ATTENTION_H

#include "decodenum/common.h"
#include "decodenum/pool.h"
#include "decodenum/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DN_VALUE_BLOCK 32           /* positions per block of dn_weighted_int8 */
#define DN_INV_127_BITS 0x3C010204u /* DN_INV_127: the binary32 nearest 1/127 */
#define DN_ATTN_MAX_HEAD_DIM 8192   /* the largest head size */

/* The element type of a KV cache's rows. */
typedef enum dn_kv_type {
    DN_KV_F32 = 0,  /* float rows, read through FTZ */
    DN_KV_F16 = 1,  /* binary16 rows (uint16_t), widened exactly */
    DN_KV_BF16 = 2, /* bfloat16 rows (uint16_t), widened as dn_bf16_to_f32 */
    DN_KV_INT8 = 3  /* int8_t codes, each row under one binary16 scale (dn_cache_row) */
} dn_kv_type;

/* Where a layer's cached rows are. Element i of the key row of position p and
   KV head h is k[p * pos_stride + h * head_stride + i], in elements of the
   type (float, uint16_t or int8_t); the same for v. For DN_KV_INT8, that
   row's binary16 scale is k_scale[p * scale_pos_stride + h * scale_head_stride]
   (v_scale likewise). llama.cpp's [position][kv_head][d] layout is
   pos_stride = kv_heads * head_dim, head_stride = head_dim; a per-head
   contiguous cache is pos_stride = head_dim, head_stride = capacity * head_dim.
   The attention functions only read through k, v, k_scale and v_scale;
   dn_cache_append writes through them. */
typedef struct dn_kv_cache {
    void *k;
    void *v;
    uint16_t *k_scale;        /* DN_KV_INT8 only (else ignored) */
    uint16_t *v_scale;        /* DN_KV_INT8 only (else ignored) */
    size_t head_dim;          /* d: 1..DN_ATTN_MAX_HEAD_DIM */
    size_t kv_heads;          /* >= 1 */
    size_t pos_stride;        /* >= head_dim */
    size_t head_stride;       /* >= head_dim when kv_heads > 1 */
    size_t scale_pos_stride;  /* >= 1 (DN_KV_INT8) */
    size_t scale_head_stride; /* >= 1 when kv_heads > 1 (DN_KV_INT8) */
    uint32_t type;            /* dn_kv_type */
    uint32_t reserved;        /* set to 0 */
} dn_kv_cache;

/* One token's attention over a layer's cache. */
typedef struct dn_attn_params {
    size_t q_heads; /* a multiple of the cache's kv_heads */
    size_t begin;   /* positions [begin, end) are attended to; begin <= end */
    size_t end;
    float scale;      /* the scores' factor (typically 1/sqrt(head_dim)); finite */
    uint32_t scaling; /* DN_KV_INT8: the query's dn_act_scaling */
    uint32_t words;   /* DN_KV_INT8: the query's dn_words */
} dn_attn_params;

/* ---- the int8 cache ---------------------------------------------------------- */

/* codes[i] = the nearest integer to fmul(x[i], inv), ties to even, clamped to
   -127..127; 0 where that product is NaN; every code 0 when inv is
   infinite (the reciprocal of a scale that rounded to zero). A denormal x[i]
   or inv reads as zero. n = 0 with NULLs is valid. DN_ERR_INVALID_ARGUMENT
   for a NULL array with n > 0. O(n). */
DN_API dn_status dn_int8_codes(const float *x, size_t n, float inv, int8_t *codes);

/* One cache row: amax = dn_absmax(x) (NaNs passed over), *scale =
   dn_f32_to_f16(fmul(amax, DN_INV_127)), and codes = dn_int8_codes(x, n,
   dn_recip(the scale widened)): all zero when the scale rounds to zero.
   The row is always written as defined; the status is DN_ERR_NON_FINITE when
   an element of x is infinite or NaN (a NaN's code is 0; an infinity makes the
   scale infinite, and every score against the row NaN), else DN_OK.
   DN_ERR_INVALID_ARGUMENT for NULLs with n > 0 or a NULL scale (nothing
   written). O(n). */
DN_API dn_status dn_cache_row(const float *x, size_t n, uint16_t *scale, int8_t *codes);

/* dn_cache_row of `rows` rows of x (row r at x + r * n) into scales[r *
   scale_stride] and codes + r * code_stride: one token's K (or V) rows of
   every KV head in one call. Statuses as dn_cache_row (DN_ERR_NON_FINITE if
   any row has a non-finite element; every row is written). O(rows * n). */
DN_API dn_status dn_cache_rows(const float *x, size_t rows, size_t n, uint16_t *scales,
                               size_t scale_stride, int8_t *codes, size_t code_stride);

/* Writes one token's K and V rows of every KV head into position `pos` of
   the cache: k and v hold kv_heads * head_dim floats (head h at h * head_dim),
   stored as the cache's type: f32 bits as they are, binary16 by
   dn_f32_to_f16, bfloat16 by dn_f32_to_bf16, int8 by dn_cache_row (K and V
   each). DN_ERR_NON_FINITE when an element is infinite or NaN (everything is
   still written as defined); DN_ERR_INVALID_ARGUMENT for a bad cache
   description (as dn_attend) or NULLs (nothing written). O(kv_heads * d). */
DN_API dn_status dn_cache_append(const dn_kv_cache *cache, size_t pos, const float *k,
                                 const float *v);

/* ---- the int8 path's pieces ------------------------------------------------- */

/* A query head as the array reads it. DN_ACT_SUB32: per 32 elements, the head
   padded with zeros to a whole number of 32 (padding on to a whole group of
   DN_GROUP adds only zero terms, so it changes nothing), each block under
   dn_block_scale of its largest magnitude; DN_ACT_PER_BLOCK: the whole head
   one block under dn_wide_scale. Codes are dn_rne_div's, within 127 (one
   word) or 32767 (two words); an all-zero block has the canonical scale.
   out->codes needs dn_size_div_up(d, 32) * 32 entries (the padding is 0),
   out->scales ceil(d/32) (Sub32) or 1; out->n and out->block are set (block
   32, or the padded length), out->words = words. DN_ERR_NON_FINITE (and
   *bad, if not NULL, the first such index) for an infinite or NaN element;
   DN_ERR_INVALID_ARGUMENT for NULLs, d = 0 or past DN_ATTN_MAX_HEAD_DIM, an
   unknown scaling or word count. O(d). */
DN_API dn_status dn_quantize_head(const float *q, size_t d, dn_act_scaling scaling, dn_words words,
                                  dn_act_row *out, size_t *bad);

/* The score of a quantized query head (dn_quantize_head's row) against one
   cached key row (its binary16 scale's bits, its d codes, any of -128..127):
   with the scale sig * 2^exp exactly (docs/numerics.md §10's table), for each
   block b of the query under m_b * 2^e_b the term
   (m_b * sig * sum_{i in b, i < d} code_i * key_i) * 2^(e_b + exp), all
   summed by dn_exact_sum's rule and rounded once. A key scale that is
   infinite or NaN gives NaN. DN_ERR_INVALID_ARGUMENT for NULLs, d = 0 or
   past the query's length, a query row whose scales are not a quantized
   head's (m outside 1..255, |e| > 2^20), whose block is 0 or does not
   divide its n, or whose n is past DN_ATTN_MAX_HEAD_DIM. Allocates
   nothing. O(d). */
DN_API dn_status dn_int8_score(const dn_act_row *query, uint16_t key_scale, const int8_t *key,
                               size_t d, float *out);

/* The weighted sum of n cached int8 value rows (row j's binary16 scale at
   scales[j * scale_stride], its d codes at codes + j * code_stride) under the
   probabilities p: per block of DN_VALUE_BLOCK positions, w_j =
   fmul(p_j, scale_j), the block's least power of two 2^e with
   127 * 2^e >= absmax(w) (e = 0 for an all-zero block), c_j =
   dn_rne_div(w_j, 1, e) (|c_j| <= 127); per element i the exact integer
   S_i = sum_j c_j * code_ji, rounded once as S_i * 2^e (dn_scaled_to_f32);
   out_i = fadd(out_i, that), the blocks in order from +0. A block holding a
   non-finite w_j (an infinite or NaN scale or probability) adds NaN to every
   element. The status is DN_ERR_NON_FINITE when an output is infinite or
   NaN (all are written). n = 0 gives +0s.
   DN_ERR_INVALID_ARGUMENT for NULLs (out with d > 0, the others with n, d >
   0), for n > 1 with code_stride < d or scale_stride 0, or when the last
   row's extent does not fit size_t. Allocates nothing. O(n * d). */
DN_API dn_status dn_weighted_int8(const float *p, size_t n, const uint16_t *scales,
                                  size_t scale_stride, const int8_t *codes, size_t code_stride,
                                  size_t d, float *out);

/* ---- one head ------------------------------------------------------------------ */

/* One query head q (d floats) over n cached rows of `type` (DN_KV_F32,
   DN_KV_F16, DN_KV_BF16; row j of the keys at k + j * stride elements, of
   the values at v + j * stride): score_j = fmul(fdot(q, k_j), scale),
   p = softmax(score), out_i = fdot(p, (v_0i, ..., v_(n-1)i)). n = 0 gives
   +0s. Statuses as dn_attend (DN_KV_INT8, or a type no dn_kv_type names,
   is DN_ERR_INVALID_ARGUMENT). Allocates n floats (freed). O(n * d). */
DN_API dn_status dn_attend_vector(const float *q, size_t d, dn_kv_type type, const void *k,
                                  const void *v, size_t n, size_t stride, float scale, float *out);

/* One query head over n cached int8 rows (codes at k/v + j * stride, scales
   at k_scale/v_scale[j * scale_stride]): the query by dn_quantize_head
   (scaling, words), score_j = fmul(dn_int8_score(query, k row j), scale),
   p = softmax(score), out = dn_weighted_int8(p, the value rows). Statuses
   as dn_attend. Allocates its working memory (freed). O(n * d). */
DN_API dn_status dn_attend_int8(const float *q, size_t d, dn_act_scaling scaling, dn_words words,
                                const int8_t *k, const uint16_t *k_scale, const int8_t *v,
                                const uint16_t *v_scale, size_t n, size_t stride,
                                size_t scale_stride, float scale, float *out);

/* ---- a layer ------------------------------------------------------------------ */

/* The working memory dn_attend (*layer_bytes) and dn_attend_heads
   (*heads_bytes) need for this cache and these parameters; either pointer
   may be NULL. About kv_heads * (q_heads/kv_heads) * (end - begin) * 4 bytes
   for the layer (every group's scores at once), one group's share for the
   head range. DN_ERR_INVALID_ARGUMENT as dn_attend, or when a size does not
   fit size_t. O(1). */
DN_API dn_status dn_attend_work_size(const dn_kv_cache *cache, const dn_attn_params *params,
                                     size_t *layer_bytes, size_t *heads_bytes);

/* Every query head of a layer: out (q_heads * head_dim floats) from q (as
   many), the cache's positions [begin, end). The int8 path for a DN_KV_INT8
   cache, the vector path otherwise. The groups (KV heads) are tasks on
   `pool` (NULL: the calling thread); the bits never depend on it.
   work: dn_attend_work_size's layer_bytes at any address, or NULL (then the
   call allocates and frees it: DN_ERR_OUT_OF_MEMORY if it cannot).
   begin == end: every output +0, DN_OK.
   DN_ERR_INVALID_ARGUMENT (nothing written): NULL cache, params, q or out;
   an unknown type, scaling or word count; head_dim 0 or past
   DN_ATTN_MAX_HEAD_DIM; kv_heads 0 or not dividing q_heads; begin > end;
   a stride shorter than a row (pos_stride < head_dim, head_stride < head_dim
   with kv_heads > 1; for int8 a scale stride of 0 where it is used); NULL
   rows (or scales) with end > begin; an index past SIZE_MAX; a non-finite
   scale; work_bytes short of the size query's. DN_ERR_NON_FINITE (nothing
   written) for an infinite or NaN query element. DN_ERR_NON_FINITE after
   writing everything, as defined, when an output is infinite or NaN: a
   head whose scores have no softmax (a NaN or +inf score, or every score
   -inf: its outputs are NaN), a non-finite value row element or int8 scale
   where it is weighted (docs/numerics.md 13.6). Cost O(q_heads * (end -
   begin) * head_dim)
   operations; every K and V row read once per group. */
DN_API dn_status dn_attend(const dn_kv_cache *cache, const dn_attn_params *params, const float *q,
                           float *out, void *work, size_t work_bytes, dn_pool *pool);

/* dn_attend for the query heads [h0, h1) only (h0 <= h1 <= q_heads), on the
   calling thread: an engine with its own threads splits a layer by heads.
   Reads q and writes out of those heads only; work is heads_bytes of
   dn_attend_work_size (or NULL). Statuses as dn_attend, and
   DN_ERR_INVALID_ARGUMENT for h0 > h1 or h1 > q_heads; h0 == h1 writes
   nothing. Same bits as dn_attend. */
DN_API dn_status dn_attend_heads(const dn_kv_cache *cache, const dn_attn_params *params,
                                 const float *q, size_t h0, size_t h1, float *out, void *work,
                                 size_t work_bytes);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_ATTENTION_H */
