/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the int8 cache and the int8 attention: arbitrary
 * bytes read as f32 rows for dn_cache_row, and as an int8 cache (codes and
 * binary16 scales as they come: infinite, NaN and subnormal scales, -128
 * codes) with a query for dn_attend_int8 and dn_attend (GQA, strides).
 *
 * Input layout (missing bytes read as zero):
 *
 *   byte 0   head size 1..64 (bits 0-5, plus one), bit 6 the scaling, bit 7
 *            the words
 *   byte 1   positions 0..63 (bits 0-5), bits 6-7 the stride's extra 0..3
 *   byte 2   GQA group 1..4 (bits 0-1, plus one), KV heads 1..2 (bit 2)
 *   then     d floats of a row for dn_cache_row, the query (heads * d
 *            floats), the cache's codes and scales (K then V)
 *
 * It aborts on: a status of dn_cache_row other than DN_OK or (for a row with
 * an infinity or a NaN) DN_ERR_NON_FINITE; a stored scale other than
 * f16(absmax * INV_127); a code outside -127..127; a status of the attention
 * other than DN_OK, DN_ERR_NON_FINITE (a non-finite query, or a non-finite
 * output) or DN_ERR_INVALID_ARGUMENT (never, for these shapes); any output
 * bit of the active ISA differing from the references composed here; an
 * output past its buffer (ASan).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention_kernels.h"
#include "bits.h"
#include "decodenum.h"
#include "math_kernels.h"

static size_t take(const uint8_t **p, size_t *left, void *dst, size_t bytes)
{
    memset(dst, 0, bytes);
    size_t k = *left < bytes ? *left : bytes;
    memcpy(dst, *p, k);
    *p += k;
    *left -= k;
    return k;
}

static void check_cache_row(const float *x, size_t d)
{
    uint16_t s;
    int8_t *c = malloc(d);
    dn_status st = dn_cache_row(x, d, &s, c);
    int bad = 0;
    for (size_t i = 0; i < d; i++) bad |= !isfinite(x[i]);
    if (st != (bad ? DN_ERR_NON_FINITE : DN_OK)) abort();
    if (s != dn_f32_to_f16(dn_fmul(dn_absmax(x, d), dn_from_bits(DN_INV_127_BITS)))) abort();
    for (size_t i = 0; i < d; i++)
        if (c[i] < -127) abort();
    free(c);
}

/* One head by the references: quantize, score, softmax, weighted sum. */
static int reference_head(const float *q, size_t d, int scaling, int words, const int8_t *k,
                          const uint16_t *ks, const int8_t *v, const uint16_t *vs, size_t n,
                          size_t stride, size_t sstride, float *out)
{
    int16_t codes[64];
    dn_act_scale sc[2];
    dn_act_row row = {codes, sc, 0, 0, (dn_words)words};
    if (dn_quantize_head(q, d, (dn_act_scaling)scaling, (dn_words)words, &row, NULL) != DN_OK)
        return -1;
    float *s = malloc((n ? n : 1) * sizeof(float));
    for (size_t j = 0; j < n; j++)
        s[j] = dn_fmul(dn_attn_int8_score1(&row, d, ks[j * sstride], k + j * stride), 0.125f);
    float sum = n ? dn_ref_softmax(s, s, n) : 0.0f;
    int bad = dn_ref_attn_weighted_int8(s, 1, n, v, stride, vs, sstride, d, out) | (sum != sum);
    for (size_t i = 0; i < d; i++) bad |= !isfinite(out[i]);
    free(s);
    return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data;
    size_t left = size;
    uint8_t h[3];
    take(&p, &left, h, 3);
    size_t d = 1 + (h[0] & 63), n = h[1] & 63, stride = d + (h[1] >> 6);
    int scaling = (h[0] >> 6) & 1, words = 1 + (h[0] >> 7);
    size_t g = 1 + (h[2] & 3), kvh = 1 + ((h[2] >> 2) & 1), qh = g * kvh;

    float *x = malloc(d * sizeof(float));
    take(&p, &left, x, d * sizeof(float));
    check_cache_row(x, d);
    free(x);

    float *q = malloc(qh * d * sizeof(float)), *out = malloc(qh * d * sizeof(float));
    float *want = malloc(d * sizeof(float));
    size_t rows = n * kvh ? n * kvh : 1;
    int8_t *k = malloc(rows * stride), *v = malloc(rows * stride);
    uint16_t *ks = malloc(rows * 2), *vs = malloc(rows * 2);
    take(&p, &left, q, qh * d * sizeof(float));
    take(&p, &left, k, rows * stride);
    take(&p, &left, ks, rows * 2);
    take(&p, &left, v, rows * stride);
    take(&p, &left, vs, rows * 2);

    /* [position][kv_head] rows: position stride kvh * stride codes */
    dn_kv_cache c = {k, v, ks, vs, d, kvh, kvh * stride, stride, kvh, 1, DN_KV_INT8, 0};
    dn_attn_params prm = {qh, 0, n, 0.125f, (uint32_t)scaling, (uint32_t)words};
    dn_status st = dn_attend(&c, &prm, q, out, NULL, 0, NULL);
    int qbad = 0;
    for (size_t i = 0; i < qh * d; i++) qbad |= !isfinite(q[i]);
    if (qbad) {
        if (st != DN_ERR_NON_FINITE) abort();
    } else {
        int any = 0;
        for (size_t hq = 0; hq < qh; hq++) {
            size_t kv = hq / g;
            int r = reference_head(q + hq * d, d, scaling, words, k + kv * stride, ks + kv,
                                   v + kv * stride, vs + kv, n, kvh * stride, kvh, want);
            if (r < 0) abort();
            any |= r;
            if (memcmp(want, out + hq * d, d * sizeof(float)) != 0) abort();
        }
        if (st != (any ? DN_ERR_NON_FINITE : DN_OK)) abort();
    }
    free(q), free(out), free(want), free(k), free(v), free(ks), free(vs);
    return 0;
}
