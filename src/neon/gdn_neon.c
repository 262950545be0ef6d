/* SPDX-License-Identifier: MIT */
/*
 * The Gated-DeltaNet module's NEON kernels, bit for bit the references of
 * src/gdn.c: the same steps as src/x86/gdn_avx2.c in 4-lane vectors.
 *
 * How they keep the bits (neon_common.h): no flush mode exists that matches
 * the engine, so the kernels run in the caller's default environment and
 * apply the engine's rule explicitly where the references apply it: every
 * operand flushed, every product and sum flushed (IEEE rounding, then the
 * flush, is dn_result). A row's dots keep DN_LANES lanes as eight 4-lane
 * accumulators folded by dn_neon_tree32; a tail updates only the lanes it
 * has elements for. Every element written has its NaN made the engine's one
 * NaN before the store rounds it: bfloat16 by the integer nearest-even
 * rounding (ADDHN), binary16 by FCVTN (nearest even, subnormals kept, the one
 * NaN mapping to 0x7E00).
 */
#include "../gdn_kernels.h"
#include "../math_kernels.h"
#include "neon_common.h"

#include "decodenum/fp32.h"

#include <string.h>

#define INLINE static inline __attribute__((always_inline))
#define FLUSH_MAX_DK 4096

static inline float32x4_t fl(float32x4_t x) { return dn_neon_flush(x); }

/* The one NaN in place of any NaN. */
INLINE float32x4_t canon(float32x4_t x)
{
    return vbslq_f32(dn_neon_is_num(x), x, vreinterpretq_f32_u32(vdupq_n_u32(0x7FC00000u)));
}

/* ---- elements through the store ------------------------------------------------ */

/* Four stored elements read back (not yet flushed). */
INLINE float32x4_t widen4(const void *row, dn_gdn_store store, size_t i)
{
    if (store == DN_GDN_STORE_F32) return vld1q_f32((const float *)row + i);
    uint16x4_t h = vld1_u16((const uint16_t *)row + i);
    if (store == DN_GDN_STORE_F16) return vcvt_f32_f16(vreinterpret_f16_u16(h));
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

/* dn_f32_to_bf16 of a result x (flushed, its NaN the one NaN). */
INLINE uint16x4_t bf16_of(float32x4_t x)
{
    uint32x4_t u = vreinterpretq_u32_f32(x);
    uint32x4_t odd = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    return vaddhn_u32(u, vaddq_u32(vdupq_n_u32(0x7FFF), odd));
}

/* A result x as the store keeps it, read back. */
INLINE float32x4_t round4(float32x4_t x, dn_gdn_store store)
{
    if (store == DN_GDN_STORE_F32) return x;
    if (store == DN_GDN_STORE_F16) return vcvt_f32_f16(vcvt_f16_f32(x));
    return vreinterpretq_f32_u32(vshll_n_u16(bf16_of(x), 16));
}

/* Writes a result x through the store. */
INLINE void store4(void *row, dn_gdn_store store, size_t i, float32x4_t x)
{
    if (store == DN_GDN_STORE_F32)
        vst1q_f32((float *)row + i, x);
    else if (store == DN_GDN_STORE_F16)
        vst1_u16((uint16_t *)row + i, vreinterpret_u16_f16(vcvt_f16_f32(x)));
    else
        vst1_u16((uint16_t *)row + i, bf16_of(x));
}

static void put1(void *row, dn_gdn_store store, size_t i, float x)
{
    if (store == DN_GDN_STORE_F32) {
        memcpy((float *)row + i, &x, 4);
        return;
    }
    uint16_t h = store == DN_GDN_STORE_BF16 ? dn_f32_to_bf16(x) : dn_f32_to_f16(x);
    memcpy((uint16_t *)row + i, &h, 2);
}

/* ---- a stored row's dots -------------------------------------------------------- */

/* acc + fmul(m, a) as dn_fadd forms it, on the lanes below `count`. */
INLINE float32x4_t madd(float32x4_t acc, float32x4_t m, float32x4_t a, size_t count)
{
    float32x4_t s = fl(vaddq_f32(acc, fl(vmulq_f32(m, fl(a)))));
    return count >= 4 ? s : vbslq_f32(dn_neon_tail_mask(count), s, acc);
}

static inline size_t clamp4(size_t left, size_t at)
{
    return left <= at ? 0 : left - at > 4 ? 4 : left - at;
}

/* dn_fdot(row, a) and, when b is not NULL, dn_fdot(row, b), in one pass. */
INLINE void dots(const void *row, dn_gdn_store store, const float *a, const float *b, size_t n,
                 float *da, float *db)
{
    float32x4_t A[8], B[8];
    for (int l = 0; l < 8; l++) A[l] = B[l] = vdupq_n_f32(0.0f);
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++) {
            float32x4_t m = fl(widen4(row, store, i + 4 * l));
            A[l] = madd(A[l], m, vld1q_f32(a + i + 4 * l), 4);
            if (b) B[l] = madd(B[l], m, vld1q_f32(b + i + 4 * l), 4);
        }
    if (i < n) {
        size_t left = n - i;
        float m[32] = {0}, ta[32] = {0}, tb[32] = {0};
        for (size_t e = 0; e < left; e++) {
            m[e] = dn_gdn_load(row, store, i + e);
            ta[e] = a[i + e];
            tb[e] = b ? b[i + e] : 0.0f;
        }
        for (int l = 0; l < 8; l++) {
            float32x4_t mv = fl(vld1q_f32(m + 4 * l)); /* an f32 row's element as stored */
            A[l] = madd(A[l], mv, vld1q_f32(ta + 4 * l), clamp4(left, 4 * (size_t)l));
            B[l] = madd(B[l], mv, vld1q_f32(tb + 4 * l), clamp4(left, 4 * (size_t)l));
        }
    }
    *da = dn_result(dn_neon_tree32(A));
    if (b) *db = dn_result(dn_neon_tree32(B));
}

/* The element rule of an update: fadd(fmul(d, m), fmul(c, k)), the one NaN. */
INLINE float32x4_t upd(float32x4_t d, float32x4_t m, float32x4_t c, float32x4_t k)
{
    return canon(fl(vaddq_f32(fl(vmulq_f32(d, fl(m))), fl(vmulq_f32(c, fl(k))))));
}

/* ---- gdn_row over a head's rows ----------------------------------------------- */

INLINE void update(void *row, dn_gdn_store store, const float *k, size_t n, float decay, float coef)
{
    const float32x4_t d = vdupq_n_f32(decay), c = vdupq_n_f32(coef);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        store4(row, store, i, upd(d, widen4(row, store, i), c, vld1q_f32(k + i)));
    for (; i < n; i++)
        put1(row, store, i,
             dn_gdn_fadd(dn_gdn_fmul(decay, dn_gdn_load(row, store, i)), dn_gdn_fmul(coef, k[i])));
}

INLINE void rows_in(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                    const dn_gdn_token *t, float *out)
{
    for (size_t j = r0; j < r1; j++) {
        void *row = dn_gdn_row_at(state, store, dk, j);
        float rk = 0.0f, rq = 0.0f;
        dots(row, store, t->k, t->q, dk, &rk, &rq);
        float coef = dn_gdn_fmul(t->beta, dn_gdn_fsub(t->v[j], dn_gdn_fmul(t->decay, rk)));
        update(row, store, t->k, dk, t->decay, coef);
        out[j] =
            dn_gdn_fmul(dn_gdn_fadd(dn_gdn_fmul(t->decay, rq), dn_gdn_fmul(coef, t->kq)), t->scale);
    }
}

static void rows_neon(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                      const dn_gdn_token *t, float *out)
{
    if (store == DN_GDN_STORE_F32)
        rows_in(state, DN_GDN_STORE_F32, dk, r0, r1, t, out);
    else if (store == DN_GDN_STORE_BF16)
        rows_in(state, DN_GDN_STORE_BF16, dk, r0, r1, t, out);
    else
        rows_in(state, DN_GDN_STORE_F16, dk, r0, r1, t, out);
}

/* ---- gdn_read over a head's rows ------------------------------------------------- */

INLINE void read_in(const void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                    const float *y, const float *carried, float scale, float *out)
{
    for (size_t j = r0; j < r1; j++) {
        float ry = 0.0f;
        dots(dn_gdn_row_at((void *)state, store, dk, j), store, y, NULL, dk, &ry, NULL);
        out[j] = dn_gdn_fmul(dn_gdn_fadd(ry, carried[j]), scale);
    }
}

static void read_rows_neon(const void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                           const float *y, const float *carried, float scale, float *out)
{
    if (store == DN_GDN_STORE_F32)
        read_in(state, DN_GDN_STORE_F32, dk, r0, r1, y, carried, scale, out);
    else if (store == DN_GDN_STORE_BF16)
        read_in(state, DN_GDN_STORE_BF16, dk, r0, r1, y, carried, scale, out);
    else
        read_in(state, DN_GDN_STORE_F16, dk, r0, r1, y, carried, scale, out);
}

/* ---- gdn_flush: the row in a working buffer, stored once ------------------------- */

INLINE void flush_in(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                     const dn_gdn_logged *log, size_t count, float *w)
{
    for (size_t j = r0; j < r1; j++) {
        void *row = dn_gdn_row_at(state, store, dk, j);
        for (size_t i = 0; i < dk; i++) w[i] = dn_gdn_load(row, store, i);
        for (size_t t = 0; t < count; t++) {
            float rk = 0.0f;
            dots(w, DN_GDN_STORE_F32, log[t].k, NULL, dk, &rk, NULL);
            float decay = log[t].decay;
            float coef = dn_gdn_fmul(log[t].beta, dn_gdn_fsub(log[t].v[j], dn_gdn_fmul(decay, rk)));
            const float32x4_t d = vdupq_n_f32(decay), c = vdupq_n_f32(coef);
            const float *k = log[t].k;
            size_t i = 0;
            for (; i + 4 <= dk; i += 4)
                vst1q_f32(w + i, round4(upd(d, vld1q_f32(w + i), c, vld1q_f32(k + i)), store));
            for (; i < dk; i++)
                w[i] = dn_gdn_round(dn_gdn_fadd(dn_gdn_fmul(decay, w[i]), dn_gdn_fmul(coef, k[i])),
                                    store);
        }
        size_t i = 0;
        for (; i + 4 <= dk; i += 4) store4(row, store, i, vld1q_f32(w + i));
        for (; i < dk; i++) put1(row, store, i, w[i]);
    }
}

static void flush_rows_neon(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                            const dn_gdn_logged *log, size_t count)
{
    if (count == 0) return;
    if (dk > FLUSH_MAX_DK) {
        dn_ref_gdn_flush_rows(state, store, dk, r0, r1, log, count);
        return;
    }
    float w[FLUSH_MAX_DK];
    if (store == DN_GDN_STORE_F32)
        flush_in(state, DN_GDN_STORE_F32, dk, r0, r1, log, count, w);
    else if (store == DN_GDN_STORE_BF16)
        flush_in(state, DN_GDN_STORE_BF16, dk, r0, r1, log, count, w);
    else
        flush_in(state, DN_GDN_STORE_F16, dk, r0, r1, log, count, w);
}

/* ---- gdn_fold, gdn_fold_trailing -------------------------------------------------- */

static void fold_token(const dn_gdn_logged *t, float *y, float *carried, size_t dk, size_t dv)
{
    float ky = 0.0f;
    dots(t->k, DN_GDN_STORE_F32, y, NULL, dk, &ky, NULL);
    float c = dn_gdn_fmul(t->beta, ky);
    const float32x4_t cv = vdupq_n_f32(c), d = vdupq_n_f32(t->decay);
    size_t j = 0;
    for (; j + 4 <= dv; j += 4) {
        float32x4_t p = fl(vmulq_f32(cv, fl(vld1q_f32(t->v + j))));
        vst1q_f32(carried + j, canon(fl(vaddq_f32(fl(vld1q_f32(carried + j)), p))));
    }
    for (; j < dv; j++) carried[j] = dn_gdn_fadd(carried[j], dn_gdn_fmul(c, t->v[j]));
    size_t i = 0;
    for (; i + 4 <= dk; i += 4) {
        float32x4_t p = fl(vmulq_f32(cv, fl(vld1q_f32(t->k + i))));
        float32x4_t s = fl(vsubq_f32(fl(vld1q_f32(y + i)), p));
        vst1q_f32(y + i, canon(fl(vmulq_f32(d, s))));
    }
    for (; i < dk; i++) y[i] = dn_gdn_fmul(t->decay, dn_gdn_fsub(y[i], dn_gdn_fmul(c, t->k[i])));
}

static void fold_neon(const dn_gdn_logged *log, size_t count, size_t older, const float *q,
                      size_t dk, size_t dv, float *y_new, float *c_new, float *y_all, float *c_all)
{
    memcpy(y_new, q, dk * sizeof *y_new);
    memset(c_new, 0, dv * sizeof *c_new);
    for (size_t t = count; t-- > older;) fold_token(&log[t], y_new, c_new, dk, dv);
    memcpy(y_all, y_new, dk * sizeof *y_all);
    memcpy(c_all, c_new, dv * sizeof *c_all);
    for (size_t t = older; t-- > 0;) fold_token(&log[t], y_all, c_all, dk, dv);
}

/* ---- conv ------------------------------------------------------------------------ */

/* Four channels' sums in tap order, then silu by the math module's NEON
   kernel (it flushes its input as dn_silu does). */
static void conv_neon(const float *ring, uint32_t head, size_t channels, size_t taps,
                      const float *kernel, const float *x, float *y)
{
    size_t slots = taps - 1, c = 0;
    for (; c + 4 <= channels; c += 4) {
        const float *w = kernel + c * taps;
        float32x4_t s = vdupq_n_f32(0.0f);
        for (size_t j = 0; j <= slots; j++) {
            const float wj[4] = {w[j], w[taps + j], w[2 * taps + j], w[3 * taps + j]};
            const float *src = j < slots ? ring + ((head + j) % slots) * channels + c : x + c;
            s = fl(vaddq_f32(s, fl(vmulq_f32(fl(vld1q_f32(src)), fl(vld1q_f32(wj))))));
        }
        vst1q_f32(y + c, s);
    }
    dn_ref_gdn_conv_sums(ring, head, channels, taps, kernel, x, c, y);
    dn_math_neon.silu_v(y, y, channels);
}

const dn_gdn_kernels dn_gdn_neon = {
    .conv = conv_neon,
    .rows = rows_neon,
    .flush_rows = flush_rows_neon,
    .fold = fold_neon,
    .read_rows = read_rows_neon,
};
