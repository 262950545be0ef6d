/* SPDX-License-Identifier: MIT */
/*
 * The Gated-DeltaNet module's references (the definitions) and its scalar
 * kernel table, in the order the kernels run: the convolution, the stored
 * row, the eager row (gdn_update, gdn_row), then the lazy head's fold, read
 * and flush. Every operation is the engine's (dn_fmul, dn_fadd, dn_fsub,
 * dn_fdot's lanes and tree, dn_silu); docs/numerics.md section 14 states each
 * as its sequence of operations.
 */
#include "gdn_kernels.h"
#include "bits.h"
#include "fp32_kernels.h"

#include "decodenum/fp32.h"
#include "decodenum/math.h"

#include <string.h>

/* ---- conv ------------------------------------------------------------------ */

/* The convolution's sums (before the SiLU) of channels c0..channels: the
   ring's rows oldest first against the channel's first taps, then the
   token's row against its last, in tap order from +0. */
void dn_ref_gdn_conv_sums(const float *ring, uint32_t head, size_t channels, size_t taps,
                          const float *kernel, const float *x, size_t c0, float *y)
{
    size_t slots = taps - 1;
    for (size_t c = c0; c < channels; c++) {
        const float *w = kernel + c * taps;
        float s = 0.0f;
        for (size_t j = 0; j < slots; j++) {
            size_t slot = (head + j) % slots;
            s = dn_fadd(s, dn_fmul(ring[slot * channels + c], w[j]));
        }
        y[c] = dn_fadd(s, dn_fmul(x[c], w[slots]));
    }
}

void dn_ref_gdn_conv(const float *ring, uint32_t head, size_t channels, size_t taps,
                     const float *kernel, const float *x, float *y)
{
    dn_ref_gdn_conv_sums(ring, head, channels, taps, kernel, x, 0, y);
    for (size_t c = 0; c < channels; c++) y[c] = dn_silu(y[c]);
}

/* ---- the store ------------------------------------------------------------- */

float dn_gdn_round(float x, dn_gdn_store store)
{
    if (store == DN_GDN_STORE_BF16) return dn_bf16_to_f32(dn_f32_to_bf16(x));
    if (store == DN_GDN_STORE_F16) return dn_f16_to_f32(dn_f32_to_f16(x));
    return x;
}

float dn_gdn_load(const void *row, dn_gdn_store store, size_t i)
{
    if (store == DN_GDN_STORE_F32) {
        float x;
        memcpy(&x, (const char *)row + 4 * i, 4);
        return x;
    }
    uint16_t h;
    memcpy(&h, (const char *)row + 2 * i, 2);
    return store == DN_GDN_STORE_BF16 ? dn_bf16_to_f32(h) : dn_f16_to_f32(h);
}

/* Writes x (an engine result) through the store. */
static void put(void *row, dn_gdn_store store, size_t i, float x)
{
    if (store == DN_GDN_STORE_F32) {
        memcpy((char *)row + 4 * i, &x, 4);
        return;
    }
    uint16_t h = store == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(x) : dn_f32_to_f16(x);
    memcpy((char *)row + 2 * i, &h, 2);
}

/* dn_fdot(row, a) and dn_fdot(row, b) of a stored row, in one pass (b may be
   NULL: then *db is untouched). */
static void row_dots(const void *row, dn_gdn_store store, size_t dk, const float *a, const float *b,
                     float *da, float *db)
{
    float la[DN_LANES] = {0}, lb[DN_LANES] = {0};
    for (size_t i = 0; i < dk; i++) {
        float m = dn_gdn_load(row, store, i);
        la[i % DN_LANES] = dn_fadd(la[i % DN_LANES], dn_fmul(m, a[i]));
        if (b) lb[i % DN_LANES] = dn_fadd(lb[i % DN_LANES], dn_fmul(m, b[i]));
    }
    *da = dn_tree(la, DN_LANES);
    if (b) *db = dn_tree(lb, DN_LANES);
}

/* Each element m becomes decay * m + coef * k[i], through the store. */
static void row_update(void *row, dn_gdn_store store, const float *k, size_t dk, float decay,
                       float coef)
{
    for (size_t i = 0; i < dk; i++) {
        float m = dn_gdn_load(row, store, i);
        put(row, store, i, dn_fadd(dn_fmul(decay, m), dn_fmul(coef, k[i])));
    }
}

/* ---- the eager row ------------------------------------------------------- */

float dn_ref_gdn_update(void *row, dn_gdn_store store, const float *k, size_t dk, float v,
                        float decay, float beta)
{
    float rk;
    row_dots(row, store, dk, k, NULL, &rk, NULL);
    float coef = dn_fmul(beta, dn_fsub(v, dn_fmul(decay, rk)));
    row_update(row, store, k, dk, decay, coef);
    return coef;
}

float dn_ref_gdn_row(void *row, dn_gdn_store store, const float *k, const float *q, size_t dk,
                     float v, float decay, float beta, float kq, float scale)
{
    float rk, rq;
    row_dots(row, store, dk, k, q, &rk, &rq);
    float coef = dn_fmul(beta, dn_fsub(v, dn_fmul(decay, rk)));
    row_update(row, store, k, dk, decay, coef);
    return dn_fmul(dn_fadd(dn_fmul(decay, rq), dn_fmul(coef, kq)), scale);
}

void dn_ref_gdn_rows(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                     const dn_gdn_token *t, float *out)
{
    for (size_t j = r0; j < r1; j++)
        out[j] = dn_ref_gdn_row(dn_gdn_row_at(state, store, dk, j), store, t->k, t->q, dk, t->v[j],
                                t->decay, t->beta, t->kq, t->scale);
}

/* ---- the lazy head: fold, read, flush ---------------------------------------- */

/* One token of the fold: c = beta * (k . y); carried[j] += c * v[j];
   y <- decay * (y - c * k). */
static void fold_token(const dn_gdn_logged *t, float *y, float *carried, size_t dk, size_t dv)
{
    float c = dn_fmul(t->beta, dn_ref_fdot(t->k, y, dk));
    for (size_t j = 0; j < dv; j++) carried[j] = dn_fadd(carried[j], dn_fmul(c, t->v[j]));
    for (size_t i = 0; i < dk; i++) y[i] = dn_fmul(t->decay, dn_fsub(y[i], dn_fmul(c, t->k[i])));
}

void dn_ref_gdn_fold(const dn_gdn_logged *log, size_t count, const float *q, size_t dk, size_t dv,
                     float *y, float *carried)
{
    memcpy(y, q, dk * sizeof *y);
    for (size_t j = 0; j < dv; j++) carried[j] = 0.0f;
    for (size_t t = count; t-- > 0;) fold_token(&log[t], y, carried, dk, dv);
}

void dn_ref_gdn_fold_trailing(const dn_gdn_logged *log, size_t count, size_t older, const float *q,
                              size_t dk, size_t dv, float *y_new, float *c_new, float *y_all,
                              float *c_all)
{
    dn_ref_gdn_fold(log + older, count - older, q, dk, dv, y_new, c_new);
    memcpy(y_all, y_new, dk * sizeof *y_all);
    memcpy(c_all, c_new, dv * sizeof *c_all);
    for (size_t t = older; t-- > 0;) fold_token(&log[t], y_all, c_all, dk, dv);
}

float dn_ref_gdn_read(const void *row, dn_gdn_store store, size_t dk, const float *y, float carried,
                      float scale)
{
    float ry;
    row_dots(row, store, dk, y, NULL, &ry, NULL);
    return dn_fmul(dn_fadd(ry, carried), scale);
}

void dn_ref_gdn_read_rows(const void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                          const float *y, const float *carried, float scale, float *out)
{
    for (size_t j = r0; j < r1; j++)
        out[j] = dn_ref_gdn_read(dn_gdn_row_at((void *)state, store, dk, j), store, dk, y,
                                 carried[j], scale);
}

/* The replay writes the row through the store after every token, which is
   what a kernel keeping the row in registers and writing it once computes:
   an element rounded through the store and read back is the stored value. */
void dn_ref_gdn_flush(void *row, dn_gdn_store store, size_t dk, const dn_gdn_logged *log,
                      size_t count, size_t j)
{
    for (size_t t = 0; t < count; t++)
        dn_ref_gdn_update(row, store, log[t].k, dk, log[t].v[j], log[t].decay, log[t].beta);
}

void dn_ref_gdn_flush_rows(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                           const dn_gdn_logged *log, size_t count)
{
    for (size_t j = r0; j < r1; j++)
        dn_ref_gdn_flush(dn_gdn_row_at(state, store, dk, j), store, dk, log, count, j);
}

const dn_gdn_kernels dn_gdn_scalar = {
    .conv = dn_ref_gdn_conv,
    .rows = dn_ref_gdn_rows,
    .flush_rows = dn_ref_gdn_flush_rows,
    .fold = dn_ref_gdn_fold_trailing,
    .read_rows = dn_ref_gdn_read_rows,
};
