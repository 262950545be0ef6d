/* SPDX-License-Identifier: MIT */
/*
 * The attention module's public entry points: argument checks (sizes through
 * sizes.h, before any allocation), the working memory, and the split of a
 * layer into one task per KV head (its group of query heads) on a dn_pool.
 * Every output element is computed by one kernel call in the reference's
 * order, so neither the pool, the head range nor the grouping changes a bit.
 */
#include "attention_kernels.h"
#include "bits.h"
#include "dispatch.h"
#include "fp32_kernels.h"
#include "pool.h"
#include "sizes.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64

static int finite_bits(float x) { return (dn_bits(x) & DN_EXP_BITS) != DN_EXP_BITS; }

static size_t elem_bytes(uint32_t type)
{
    return type == DN_KV_F32 ? 4 : type == DN_KV_INT8 ? 1 : 2;
}

/* (last row index) * stride + extra must fit size_t, and in bytes of `size`. */
static int extent_fits(size_t pos_last, size_t pos_stride, size_t head_last, size_t head_stride,
                       size_t extra, size_t size)
{
    size_t a, b, t;
    return dn_size_mul(pos_last, pos_stride, &a) && dn_size_mul(head_last, head_stride, &b) &&
           dn_size_add(a, b, &t) && dn_size_add(t, extra, &t) && dn_size_mul(t, size, &t);
}

/* The cache description; rows up to position end - 1 are read (or written)
   when `used`. */
static dn_status check_cache(const dn_kv_cache *c, size_t end, int used)
{
    if (!c || c->type > DN_KV_INT8) return DN_ERR_INVALID_ARGUMENT;
    size_t d = c->head_dim;
    if (d == 0 || d > DN_ATTN_MAX_HEAD_DIM || c->kv_heads == 0) return DN_ERR_INVALID_ARGUMENT;
    if (c->pos_stride < d || (c->kv_heads > 1 && c->head_stride < d))
        return DN_ERR_INVALID_ARGUMENT;
    int int8 = c->type == DN_KV_INT8;
    if (int8 && (c->scale_pos_stride == 0 || (c->kv_heads > 1 && c->scale_head_stride == 0)))
        return DN_ERR_INVALID_ARGUMENT;
    if (!used || end == 0) return DN_OK;
    if (!c->k || !c->v || (int8 && (!c->k_scale || !c->v_scale))) return DN_ERR_INVALID_ARGUMENT;
    if (!extent_fits(end - 1, c->pos_stride, c->kv_heads - 1, c->head_stride, d,
                     elem_bytes(c->type)))
        return DN_ERR_INVALID_ARGUMENT;
    if (int8 && !extent_fits(end - 1, c->scale_pos_stride, c->kv_heads - 1, c->scale_head_stride, 1,
                             sizeof(uint16_t)))
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

static dn_status check_params(const dn_kv_cache *c, const dn_attn_params *p)
{
    if (!p) return DN_ERR_INVALID_ARGUMENT;
    dn_status st = check_cache(c, p->end, p->end > p->begin);
    if (st != DN_OK) return st;
    if (p->q_heads % c->kv_heads || p->begin > p->end || !finite_bits(p->scale))
        return DN_ERR_INVALID_ARGUMENT;
    if (c->type == DN_KV_INT8 && ((p->scaling != DN_ACT_SUB32 && p->scaling != DN_ACT_PER_BLOCK) ||
                                  (p->words != DN_WORDS_ONE && p->words != DN_WORDS_TWO)))
        return DN_ERR_INVALID_ARGUMENT;
    size_t elems;
    if (!dn_size_mul(p->q_heads, c->head_dim, &elems) || !dn_size_mul(elems, 4, &elems))
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

/* ---- working memory ------------------------------------------------------------------ */

static int add_aligned(size_t *total, size_t count, size_t size)
{
    size_t b;
    if (!dn_size_mul(count, size, &b) || !dn_size_add(b, ALIGN - 1, &b)) return 0;
    return dn_size_add(*total, b & ~(size_t)(ALIGN - 1), total);
}

static size_t padded(size_t d) { return dn_size_div_up(d, 32) * 32; }

/* One group's scratch: scores, and for int8 the quantized heads. */
static int group_bytes(const dn_kv_cache *c, const dn_attn_params *p, size_t *bytes)
{
    size_t g = p->q_heads / c->kv_heads, n = p->end - p->begin, gn, total = 0;
    if (!dn_size_mul(g, n, &gn) || !add_aligned(&total, gn, sizeof(float))) return 0;
    if (c->type == DN_KV_INT8) {
        size_t dp = padded(c->head_dim), gd;
        if (!dn_size_mul(g, dp, &gd) || !add_aligned(&total, gd, sizeof(int16_t)) ||
            !add_aligned(&total, gd / 32 + g, sizeof(dn_act_scale)) ||
            !add_aligned(&total, g, sizeof(dn_act_row)))
            return 0;
    }
    *bytes = total;
    return 1;
}

dn_status dn_attend_work_size(const dn_kv_cache *cache, const dn_attn_params *params,
                              size_t *layer_bytes, size_t *heads_bytes)
{
    dn_status st = check_params(cache, params);
    if (st != DN_OK) return st;
    size_t group, layer, heads;
    if (!group_bytes(cache, params, &group) || !dn_size_mul(group, cache->kv_heads, &layer) ||
        !dn_size_add(layer, ALIGN, &layer) || !dn_size_add(group, ALIGN, &heads))
        return DN_ERR_INVALID_ARGUMENT;
    if (layer_bytes) *layer_bytes = layer;
    if (heads_bytes) *heads_bytes = heads;
    return DN_OK;
}

static unsigned char *carve(unsigned char **at, size_t count, size_t size)
{
    unsigned char *p = *at;
    *at += (count * size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    return p;
}

static unsigned char *aligned(void *work)
{
    uintptr_t u = (uintptr_t)work;
    return (unsigned char *)work + ((ALIGN - u % ALIGN) % ALIGN);
}

/* ---- quantizing a query head ------------------------------------------------------- */

/* The definition, element by element: each block's scale from its largest
   magnitude (dn_block_scale under Sub32, dn_wide_scale for the whole head),
   each code dn_rne_div of the element by it, the padding's codes zero. */
static void quantize_head_ref(const float *q, size_t d, dn_act_scaling scaling, dn_words words,
                              dn_act_row *out)
{
    size_t dp = padded(d), block = scaling == DN_ACT_SUB32 ? 32 : dp;
    for (size_t b = 0; b < dp / block; b++) {
        size_t lo = b * block, hi = lo + block < d ? lo + block : d;
        float amax = dn_ref_absmax(q + lo, hi - lo);
        dn_act_scale s = {scaling == DN_ACT_SUB32 ? 8 : 128, 0};
        if (amax > 0.0f) {
            if (scaling == DN_ACT_SUB32)
                dn_block_scale(amax, words, &s);
            else
                dn_wide_scale(amax, words, &s);
        }
        out->scales[b] = s;
        for (size_t i = lo; i < lo + block; i++) {
            int64_t c = 0;
            if (i < d) dn_rne_div(q[i], (uint32_t)s.m, s.e, &c);
            out->codes[i] = (int16_t)c;
        }
    }
}

/* The query is finite; out has room for padded(d) codes. The whole blocks
   by the activation quantization's kernel (dn_quantize's: the same scales
   and dn_rne_div's codes, without its 128-bit division per element, which
   took a fifth of an int8 attention call over 512 positions), a partial
   Sub32 block from a zero-padded copy (zeros change neither the block's
   largest magnitude nor its codes); a whole head of a size not a multiple
   of 32 under per-block scaling by the definition itself. */
static void quantize_head(const float *q, size_t d, dn_act_scaling scaling, dn_words words,
                          dn_act_row *out)
{
    const dn_quant_kernels *qk = dn_kernels_active()->quant;
    size_t dp = padded(d);
    out->n = dp;
    out->block = (uint32_t)(scaling == DN_ACT_SUB32 ? 32 : dp);
    out->words = words;
    if (scaling == DN_ACT_PER_BLOCK && d != dp) {
        quantize_head_ref(q, d, scaling, words, out);
        return;
    }
    size_t block = out->block, whole = d / block * block;
    int32_t lo = scaling == DN_ACT_SUB32 ? 8 : 128;
    dn_act_row part = {out->codes, out->scales, whole, 0, words};
    if (whole) (void)qk->quantize(q, whole, block, lo, words, &part, NULL); /* finite: DN_OK */
    if (whole == dp) return;
    float tail[32] = {0};
    memcpy(tail, q + whole, (d - whole) * sizeof *tail);
    part = (dn_act_row){out->codes + whole, out->scales + whole / 32, 32, 0, words};
    (void)qk->quantize(tail, 32, 32, lo, words, &part, NULL);
}

static size_t first_non_finite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!finite_bits(x[i])) return i;
    return n;
}

dn_status dn_quantize_head(const float *q, size_t d, dn_act_scaling scaling, dn_words words,
                           dn_act_row *out, size_t *bad)
{
    if (!q || !out || !out->codes || !out->scales || d == 0 || d > DN_ATTN_MAX_HEAD_DIM)
        return DN_ERR_INVALID_ARGUMENT;
    if ((scaling != DN_ACT_SUB32 && scaling != DN_ACT_PER_BLOCK) ||
        (words != DN_WORDS_ONE && words != DN_WORDS_TWO))
        return DN_ERR_INVALID_ARGUMENT;
    size_t i = first_non_finite(q, d);
    if (i < d) {
        if (bad) *bad = i;
        return DN_ERR_NON_FINITE;
    }
    quantize_head(q, d, scaling, words, out);
    return DN_OK;
}

/* ---- the int8 pieces --------------------------------------------------------------------- */

dn_status dn_int8_codes(const float *x, size_t n, float inv, int8_t *codes)
{
    if (n && (!x || !codes)) return DN_ERR_INVALID_ARGUMENT;
    dn_ref_int8_codes(x, n, inv, codes);
    return DN_OK;
}

dn_status dn_cache_row(const float *x, size_t n, uint16_t *scale, int8_t *codes)
{
    if (!scale || (n && (!x || !codes))) return DN_ERR_INVALID_ARGUMENT;
    return dn_kernels_active()->attention->cache_row(x, n, scale, codes) ? DN_ERR_NON_FINITE
                                                                         : DN_OK;
}

dn_status dn_cache_rows(const float *x, size_t rows, size_t n, uint16_t *scales,
                        size_t scale_stride, int8_t *codes, size_t code_stride)
{
    if (rows == 0) return DN_OK;
    if (!scales || (n && (!x || !codes))) return DN_ERR_INVALID_ARGUMENT;
    size_t t;
    if (!dn_size_mul(rows, n, &t) || !extent_fits(rows - 1, code_stride, 0, 0, n, 1) ||
        !extent_fits(rows - 1, scale_stride, 0, 0, 1, sizeof(uint16_t)))
        return DN_ERR_INVALID_ARGUMENT;
    const dn_attention_kernels *k = dn_kernels_active()->attention;
    int bad = 0;
    for (size_t r = 0; r < rows; r++)
        bad |= k->cache_row(x + r * n, n, scales + r * scale_stride, codes + r * code_stride);
    return bad ? DN_ERR_NON_FINITE : DN_OK;
}

dn_status dn_int8_score(const dn_act_row *query, uint16_t key_scale, const int8_t *key, size_t d,
                        float *out)
{
    if (!query || !key || !out || !query->codes || !query->scales || d == 0)
        return DN_ERR_INVALID_ARGUMENT;
    size_t n = query->n, b = query->block;
    if (d > n || n > DN_ATTN_MAX_HEAD_DIM || b == 0 || n % b || n / b > DN_ATTN_MAX_HEAD_DIM / 32)
        return DN_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n / b; i++) {
        const dn_act_scale *s = &query->scales[i];
        if (s->m < 1 || s->m > 255 || s->e > (1 << 20) || s->e < -(1 << 20))
            return DN_ERR_INVALID_ARGUMENT;
    }
    *out = dn_attn_int8_score1(query, d, key_scale, key);
    return DN_OK;
}

dn_status dn_weighted_int8(const float *p, size_t n, const uint16_t *scales, size_t scale_stride,
                           const int8_t *codes, size_t code_stride, size_t d, float *out)
{
    if (d && !out) return DN_ERR_INVALID_ARGUMENT;
    if (n && d && (!p || !scales || !codes)) return DN_ERR_INVALID_ARGUMENT;
    if (n > 1 && (code_stride < d || scale_stride == 0)) return DN_ERR_INVALID_ARGUMENT;
    if (n && (!extent_fits(n - 1, code_stride, 0, 0, d, 1) ||
              !extent_fits(n - 1, scale_stride, 0, 0, 1, sizeof(uint16_t))))
        return DN_ERR_INVALID_ARGUMENT;
    if (d == 0) return DN_OK;
    const dn_attention_kernels *k = dn_kernels_active()->attention;
    int bad = k->weighted_int8(p, 1, n, codes, code_stride, scales, scale_stride, d, out);
    return bad || first_non_finite(out, d) < d ? DN_ERR_NON_FINITE : DN_OK;
}

/* ---- appending a token ------------------------------------------------------------------- */

/* One row into the cache; the 16-bit rows by the fp32 module's conversion
   kernels (dn_f32_to_f16_v's bits): 0.23 us an append of 4 KV heads of 64
   in f16 against 1.5 us with a call of dn_f32_to_f16 per element (AVX-512
   host, thread CPU time, best of 7 x 4096 appends). */
static int store_row(uint32_t type, const float *x, size_t d, void *row, uint16_t *scale)
{
    const dn_fp32_kernels *f = dn_kernels_active()->fp32;
    switch (type) {
    case DN_KV_INT8: return dn_kernels_active()->attention->cache_row(x, d, scale, row);
    case DN_KV_F16: f->f32_to_f16_v(x, row, d); break;
    case DN_KV_BF16: f->f32_to_bf16_v(x, row, d); break;
    default: memcpy(row, x, d * sizeof(float));
    }
    return first_non_finite(x, d) < d;
}

dn_status dn_cache_append(const dn_kv_cache *cache, size_t pos, const float *k, const float *v)
{
    if (pos == SIZE_MAX || !k || !v) return DN_ERR_INVALID_ARGUMENT;
    dn_status st = check_cache(cache, pos + 1, 1);
    if (st != DN_OK) return st;
    const dn_kv_cache *c = cache;
    size_t d = c->head_dim, es = elem_bytes(c->type);
    int bad = 0;
    for (size_t h = 0; h < c->kv_heads; h++) {
        size_t at = pos * c->pos_stride + h * c->head_stride;
        size_t sat = pos * c->scale_pos_stride + h * c->scale_head_stride;
        int i8 = c->type == DN_KV_INT8;
        bad |=
            store_row(c->type, k + h * d, d, (char *)c->k + at * es, i8 ? c->k_scale + sat : NULL);
        bad |=
            store_row(c->type, v + h * d, d, (char *)c->v + at * es, i8 ? c->v_scale + sat : NULL);
    }
    return bad ? DN_ERR_NON_FINITE : DN_OK;
}

/* ---- a group of query heads on one KV head ------------------------------------------------ */

typedef struct layer {
    const dn_attention_kernels *kern;
    const dn_math_kernels *math;
    const dn_kv_cache *c;
    const dn_attn_params *p;
    const float *q;
    float *out;
    unsigned char *work;
    size_t group_bytes;
    atomic_int non_finite;
} layer;

static void scores_of(const layer *L, size_t kvh, size_t h0, size_t g, float *s, unsigned char *at)
{
    const dn_kv_cache *c = L->c;
    const dn_attn_params *p = L->p;
    size_t d = c->head_dim, n = p->end - p->begin;
    size_t row0 = p->begin * c->pos_stride + kvh * c->head_stride;
    if (c->type != DN_KV_INT8) {
        const void *k = (const char *)c->k + row0 * elem_bytes(c->type);
        L->kern->scores(c->type, L->q + h0 * d, g, d, k, c->pos_stride, n, p->scale, s);
        return;
    }
    size_t dp = padded(d), nb = p->scaling == DN_ACT_SUB32 ? dp / 32 : 1;
    int16_t *codes = (int16_t *)carve(&at, g * dp, sizeof(int16_t));
    dn_act_scale *scales = (dn_act_scale *)carve(&at, g * dp / 32 + g, sizeof(dn_act_scale));
    dn_act_row *rows = (dn_act_row *)carve(&at, g, sizeof(dn_act_row));
    for (size_t i = 0; i < g; i++) {
        rows[i] = (dn_act_row){codes + i * dp, scales + i * nb, dp, 0, (dn_words)p->words};
        quantize_head(L->q + (h0 + i) * d, d, (dn_act_scaling)p->scaling, (dn_words)p->words,
                      &rows[i]);
    }
    const uint16_t *ks = c->k_scale + p->begin * c->scale_pos_stride + kvh * c->scale_head_stride;
    L->kern->scores_int8(rows, g, d, (const int8_t *)c->k + row0, c->pos_stride, ks,
                         c->scale_pos_stride, n, p->scale, s);
}

/* Query heads [h0, h0 + g) of KV head kvh; returns 1 when an output is not finite. */
static int run_group(const layer *L, size_t kvh, size_t h0, size_t g, unsigned char *scratch)
{
    const dn_kv_cache *c = L->c;
    const dn_attn_params *p = L->p;
    size_t d = c->head_dim, n = p->end - p->begin;
    float *out = L->out + h0 * d;
    if (n == 0) {
        memset(out, 0, g * d * sizeof(float));
        return 0;
    }
    unsigned char *at = scratch;
    float *s = (float *)carve(&at, g * n, sizeof(float));
    scores_of(L, kvh, h0, g, s, at);
    int bad = 0;
    for (size_t i = 0; i < g; i++) {
        float sum = L->math->softmax(s + i * n, s + i * n, n);
        bad |= sum != sum;
    }
    size_t row0 = p->begin * c->pos_stride + kvh * c->head_stride;
    if (c->type == DN_KV_INT8) {
        const uint16_t *vs =
            c->v_scale + p->begin * c->scale_pos_stride + kvh * c->scale_head_stride;
        bad |= L->kern->weighted_int8(s, g, n, (const int8_t *)c->v + row0, c->pos_stride, vs,
                                      c->scale_pos_stride, d, out);
    } else {
        const void *v = (const char *)c->v + row0 * elem_bytes(c->type);
        L->kern->weighted(c->type, s, g, n, v, c->pos_stride, d, out);
    }
    return bad || first_non_finite(out, g * d) < g * d;
}

static void group_task(size_t t, void *ctx)
{
    layer *L = ctx;
    size_t g = L->p->q_heads / L->c->kv_heads;
    if (run_group(L, t, t * g, g, L->work + t * L->group_bytes))
        atomic_store_explicit(&L->non_finite, 1, memory_order_relaxed);
}

/* Checks everything and provides the working memory: *mem is what to free. */
static dn_status prepare(layer *L, const dn_kv_cache *c, const dn_attn_params *p, const float *q,
                         size_t h0, size_t h1, float *out, void *work, size_t work_bytes, int whole,
                         void **mem)
{
    *mem = NULL;
    dn_status st = check_params(c, p);
    if (st != DN_OK) return st;
    if (h0 > h1 || h1 > p->q_heads) return DN_ERR_INVALID_ARGUMENT;
    if (h0 < h1 && (!q || !out)) return DN_ERR_INVALID_ARGUMENT;
    size_t d = c->head_dim, layer_b, heads_b;
    if (dn_attend_work_size(c, p, &layer_b, &heads_b) != DN_OK) return DN_ERR_INVALID_ARGUMENT;
    if (h0 < h1 && first_non_finite(q + h0 * d, (h1 - h0) * d) < (h1 - h0) * d)
        return DN_ERR_NON_FINITE;
    size_t need = whole ? layer_b : heads_b;
    if (work && work_bytes < need) return DN_ERR_INVALID_ARGUMENT;
    if (!work && h0 < h1) {
        work = *mem = malloc(need);
        if (!work) return DN_ERR_OUT_OF_MEMORY;
    }
    group_bytes(c, p, &L->group_bytes);
    L->kern = dn_kernels_active()->attention;
    L->math = dn_kernels_active()->math;
    L->c = c;
    L->p = p;
    L->q = q;
    L->out = out;
    L->work = work ? aligned(work) : NULL;
    atomic_init(&L->non_finite, 0);
    return DN_OK;
}

dn_status dn_attend(const dn_kv_cache *cache, const dn_attn_params *params, const float *q,
                    float *out, void *work, size_t work_bytes, dn_pool *pool)
{
    layer L;
    void *mem;
    size_t heads = params ? params->q_heads : 0;
    dn_status st = prepare(&L, cache, params, q, 0, heads, out, work, work_bytes, 1, &mem);
    if (st != DN_OK || heads == 0) return st;
    dn_pool_run(pool, cache->kv_heads, group_task, &L);
    free(mem);
    return atomic_load(&L.non_finite) ? DN_ERR_NON_FINITE : DN_OK;
}

dn_status dn_attend_heads(const dn_kv_cache *cache, const dn_attn_params *params, const float *q,
                          size_t h0, size_t h1, float *out, void *work, size_t work_bytes)
{
    layer L;
    void *mem;
    dn_status st = prepare(&L, cache, params, q, h0, h1, out, work, work_bytes, 0, &mem);
    if (st != DN_OK || h0 == h1) return st;
    size_t g = params->q_heads / cache->kv_heads;
    int bad = 0;
    for (size_t h = h0; h < h1;) {
        size_t kvh = h / g, end = (kvh + 1) * g < h1 ? (kvh + 1) * g : h1;
        bad |= run_group(&L, kvh, h, end - h, L.work);
        h = end;
    }
    free(mem);
    return bad ? DN_ERR_NON_FINITE : DN_OK;
}

/* ---- one head ------------------------------------------------------------------------------ */

dn_status dn_attend_vector(const float *q, size_t d, dn_kv_type type, const void *k, const void *v,
                           size_t n, size_t stride, float scale, float *out)
{
    if (type == DN_KV_INT8) return DN_ERR_INVALID_ARGUMENT;
    dn_kv_cache c = {(void *)k, (void *)v, NULL, NULL, d, 1, stride, d, 1, 1, (uint32_t)type, 0};
    dn_attn_params p = {1, 0, n, scale, 0, DN_WORDS_ONE};
    return dn_attend_heads(&c, &p, q, 0, 1, out, NULL, 0);
}

dn_status dn_attend_int8(const float *q, size_t d, dn_act_scaling scaling, dn_words words,
                         const int8_t *k, const uint16_t *k_scale, const int8_t *v,
                         const uint16_t *v_scale, size_t n, size_t stride, size_t scale_stride,
                         float scale, float *out)
{
    dn_kv_cache c = {(void *)k,
                     (void *)v,
                     (uint16_t *)k_scale,
                     (uint16_t *)v_scale,
                     d,
                     1,
                     stride,
                     d,
                     scale_stride,
                     1,
                     DN_KV_INT8,
                     0};
    dn_attn_params p = {1, 0, n, scale, (uint32_t)scaling, (uint32_t)words};
    return dn_attend_heads(&c, &p, q, 0, 1, out, NULL, 0);
}
