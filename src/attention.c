/* SPDX-License-Identifier: MIT */
/*
 * The attention module's references (the definitions) and its scalar kernel
 * table. docs/numerics.md ("Attention") states each as its sequence of
 * operations; the functions below are those sequences, in the order the
 * kernels run them: a group's K rows are read once, position by position,
 * each scored against every query head of the group; the weighted sums then
 * take the value rows position by position (the vector path's lane of a
 * position is its index mod 32) or block by block of DN_VALUE_BLOCK
 * positions (the int8 path).
 */
#include "attention_kernels.h"
#include "bits.h"
#include "fp32_kernels.h"
#include "decodenum/fp32.h"
#include "decodenum/math.h"

#include <math.h>
#include <string.h>

/* ---- cached elements -------------------------------------------------------------- */

float dn_attn_elem(uint32_t type, const void *row, size_t i)
{
    switch (type) {
    case DN_KV_F16: return dn_f16_to_f32(((const uint16_t *)row)[i]);
    case DN_KV_BF16: return dn_bf16_to_f32(((const uint16_t *)row)[i]);
    default: return dn_flush(((const float *)row)[i]);
    }
}

static size_t elem_size(uint32_t type)
{
    return type == DN_KV_F32 ? 4 : type == DN_KV_INT8 ? 1 : 2;
}

static const void *row_at(uint32_t type, const void *base, size_t j, size_t stride)
{
    return (const char *)base + j * stride * elem_size(type);
}

/* ---- the vector path ------------------------------------------------------------------ */

/* fdot(q, row) with row's elements widened: element i in lane i mod 32. */
static float dot_row(uint32_t type, const float *q, const void *row, size_t d)
{
    float lanes[DN_LANES] = {0};
    for (size_t i = 0; i < d; i++)
        lanes[i % DN_LANES] =
            dn_fadd(lanes[i % DN_LANES], dn_fmul(q[i], dn_attn_elem(type, row, i)));
    return dn_tree(lanes, DN_LANES);
}

void dn_ref_attn_scores(uint32_t type, const float *q, size_t heads, size_t d, const void *k,
                        size_t stride, size_t n, float scale, float *s)
{
    for (size_t j = 0; j < n; j++) {
        const void *row = row_at(type, k, j, stride);
        for (size_t g = 0; g < heads; g++)
            s[g * n + j] = dn_fmul(dot_row(type, q + g * d, row, d), scale);
    }
}

/* Elements per pass of the weighted sum: 32 lanes of each are kept. */
#define WEIGHTED_TILE 16

void dn_ref_attn_weighted(uint32_t type, const float *p, size_t heads, size_t n, const void *v,
                          size_t stride, size_t d, float *out)
{
    float lanes[DN_LANES][WEIGHTED_TILE];
    for (size_t g = 0; g < heads; g++) {
        const float *pg = p + g * n;
        for (size_t i0 = 0; i0 < d; i0 += WEIGHTED_TILE) {
            size_t w = d - i0 < WEIGHTED_TILE ? d - i0 : WEIGHTED_TILE;
            for (size_t l = 0; l < DN_LANES; l++)
                for (size_t i = 0; i < w; i++) lanes[l][i] = 0.0f;
            for (size_t j = 0; j < n; j++) {
                const void *row = row_at(type, v, j, stride);
                float *lane = lanes[j % DN_LANES];
                for (size_t i = 0; i < w; i++)
                    lane[i] = dn_fadd(lane[i], dn_fmul(pg[j], dn_attn_elem(type, row, i0 + i)));
            }
            for (size_t i = 0; i < w; i++) {
                float col[DN_LANES];
                for (size_t l = 0; l < DN_LANES; l++) col[l] = lanes[l][i];
                out[g * d + i0 + i] = dn_tree(col, DN_LANES);
            }
        }
    }
}

/* ---- the int8 path: scores ------------------------------------------------------------ */

/* A binary16 scale as sig * 2^exp exactly; 0 when it is infinite or NaN. */
static int f16_scale(uint16_t h, int64_t *sig, int32_t *ex)
{
    uint32_t e = (h >> 10) & 31u, f = h & 1023u;
    if (e == 31) return 0;
    int64_t s = e ? (int64_t)(1024 + f) : (int64_t)f;
    *sig = (h & 0x8000u) ? -s : s;
    *ex = e ? (int32_t)e - 25 : -24;
    if (s == 0) *ex = 0;
    return 1;
}

float dn_attn_int8_score1(const dn_act_row *q, size_t d, uint16_t key_scale, const int8_t *key)
{
    int64_t sig;
    int32_t kexp;
    if (!f16_scale(key_scale, &sig, &kexp)) return dn_nan();
    dn_term terms[DN_ATTN_MAX_HEAD_DIM / 32];
    size_t nb = q->n / q->block;
    for (size_t b = 0; b < nb; b++) {
        int64_t dot = 0;
        size_t end = (b + 1) * q->block < d ? (b + 1) * q->block : d;
        for (size_t i = b * q->block; i < end; i++) dot += (int64_t)q->codes[i] * key[i];
        terms[b].v = (int64_t)q->scales[b].m * sig * dot;
        terms[b].e = q->scales[b].e + kexp;
        terms[b].reserved = 0;
    }
    float r;
    dn_exact_sum(terms, nb, &r);
    return r;
}

void dn_ref_attn_scores_int8(const dn_act_row *q, size_t heads, size_t d, const int8_t *k,
                             size_t stride, const uint16_t *ks, size_t scale_stride, size_t n,
                             float scale, float *s)
{
    for (size_t j = 0; j < n; j++)
        for (size_t g = 0; g < heads; g++)
            s[g * n + j] =
                dn_fmul(dn_attn_int8_score1(&q[g], d, ks[j * scale_stride], k + j * stride), scale);
}

/* ---- the int8 path: the weighted sum ------------------------------------------------- */

int dn_attn_value_block(const float *p, const uint16_t *vs, size_t scale_stride, size_t m,
                        int16_t c[DN_VALUE_BLOCK], int32_t *e)
{
    float w[DN_VALUE_BLOCK];
    uint32_t amax = 0;
    for (size_t j = 0; j < m; j++) {
        w[j] = dn_fmul(p[j], dn_f16_to_f32(vs[j * scale_stride]));
        uint32_t u = dn_bits(w[j]) & 0x7FFFFFFFu;
        if (u >= DN_EXP_BITS) {
            for (size_t t = 0; t < DN_VALUE_BLOCK; t++) c[t] = 0;
            *e = 0;
            return 1;
        }
        if (u > amax) amax = u;
    }
    /* amax = M * 2^E (w is never denormal after fmul): the least power of two
       with 127 * 2^e >= amax is 2^(E + 17) when M <= 127 * 2^17, else 2^(E + 18). */
    *e = 0;
    if (amax) {
        uint32_t M = (amax & DN_FRAC_BITS) | 0x00800000u;
        *e = (int32_t)(amax >> 23) - 150 + (M <= 127u << 17 ? 17 : 18);
    }
    for (size_t j = 0; j < DN_VALUE_BLOCK; j++) {
        int64_t code = 0;
        if (j < m) dn_rne_div(w[j], 1, *e, &code);
        c[j] = (int16_t)code;
    }
    return 0;
}

float dn_attn_piece(int32_t s, int32_t e) { return dn_scaled_to_f32(s, e); }

int dn_ref_attn_weighted_int8(const float *p, size_t heads, size_t n, const int8_t *v,
                              size_t stride, const uint16_t *vs, size_t scale_stride, size_t d,
                              float *out)
{
    int bad = 0;
    for (size_t g = 0; g < heads; g++) {
        float *o = out + g * d;
        for (size_t i = 0; i < d; i++) o[i] = 0.0f;
        for (size_t j0 = 0; j0 < n; j0 += DN_VALUE_BLOCK) {
            size_t m = n - j0 < DN_VALUE_BLOCK ? n - j0 : DN_VALUE_BLOCK;
            int16_t c[DN_VALUE_BLOCK];
            int32_t e;
            if (dn_attn_value_block(p + g * n + j0, vs + j0 * scale_stride, scale_stride, m, c,
                                    &e)) {
                bad = 1;
                for (size_t i = 0; i < d; i++) o[i] = dn_fadd(o[i], dn_nan());
                continue;
            }
            for (size_t i = 0; i < d; i++) {
                int32_t sum = 0;
                for (size_t j = 0; j < m; j++) sum += c[j] * v[(j0 + j) * stride + i];
                o[i] = dn_fadd(o[i], dn_attn_piece(sum, e));
            }
        }
    }
    return bad;
}

/* ---- what the kernels share: the fast score plan --------------------------------------- */

void dn_attn_plan_of(const dn_act_row *q, size_t d, dn_attn_plan *plan)
{
    (void)d;
    size_t chunks = q->n / 32, per = q->block / 32;
    plan->chunks = chunks;
    plan->fast = 0;
    plan->emin = 0;
    int any = 0;
    for (size_t c = 0; c < chunks; c++) {
        int nz = 0;
        for (size_t i = 0; i < 32; i++) nz |= q->codes[c * 32 + i] != 0;
        const dn_act_scale *sc = &q->scales[c / per];
        if (nz && (!any || sc->e < plan->emin)) plan->emin = sc->e;
        any |= nz;
    }
    if (plan->emin < -400 || plan->emin > 400) return;
    double bound = 0.0;
    for (size_t c = 0; c < chunks; c++) {
        const dn_act_scale *sc = &q->scales[c / per];
        int64_t mag = 0;
        for (size_t i = 0; i < 32; i++)
            mag += q->codes[c * 32 + i] < 0 ? -q->codes[c * 32 + i] : q->codes[c * 32 + i];
        plan->f[c] = 0.0;
        if (!mag) continue;
        if (sc->e - plan->emin > 60 || sc->m < 1) return;
        plan->f[c] = ldexp((double)sc->m, sc->e - plan->emin);
        bound += plan->f[c] * 128.0 * (double)mag;
    }
    plan->fast = bound * 2048.0 <= 0x1p52;
}

float dn_attn_round_score(double t, int32_t emin, uint16_t key_scale)
{
    int64_t sig;
    int32_t kexp;
    if (!f16_scale(key_scale, &sig, &kexp)) return dn_nan();
    double v = t * (double)sig;
    if (v == 0.0) return 0.0f;
    /* v is an integer below 2^53 and emin + kexp within -200..200: exact. */
    uint64_t pow2 = (uint64_t)(1023 + emin + kexp) << 52;
    double scaled;
    memcpy(&scaled, &pow2, 8);
    return dn_result((float)(v * scaled));
}

const dn_attention_kernels dn_attention_scalar = {
    .scores = dn_ref_attn_scores,
    .weighted = dn_ref_attn_weighted,
    .scores_int8 = dn_ref_attn_scores_int8,
    .weighted_int8 = dn_ref_attn_weighted_int8,
    .cache_row = dn_ref_cache_row,
};

/* ---- the int8 cache ------------------------------------------------------------------ */

void dn_ref_int8_codes(const float *x, size_t n, float inv, int8_t *codes)
{
    int zero = (dn_bits(inv) & 0x7FFFFFFFu) == DN_EXP_BITS;
    for (size_t i = 0; i < n; i++) {
        float p = dn_fmul(x[i], inv);
        int64_t c = 0;
        if (zero || p != p)
            c = 0;
        else if (p >= 127.0f)
            c = 127;
        else if (p <= -127.0f)
            c = -127;
        else
            dn_rne(p, &c);
        codes[i] = (int8_t)c;
    }
}

int dn_ref_cache_row(const float *x, size_t n, uint16_t *scale, int8_t *codes)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad |= (dn_bits(x[i]) & DN_EXP_BITS) == DN_EXP_BITS;
    dn_ref_int8_codes(x, n, dn_cache_row_scale(dn_ref_absmax(x, n), scale), codes);
    return bad;
}
