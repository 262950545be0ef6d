/* SPDX-License-Identifier: MIT */
/*
 * gdn_kernels.h: the Gated-DeltaNet module's kernel table.
 *
 * One table per ISA, registered in src/dispatch.c. dn_gdn_scalar holds the
 * references (src/gdn.c, the definitions); dn_gdn_avx2 reproduces them bit
 * for bit. An entry an ISA leaves NULL runs the ISA below it. Arguments are
 * validated by the public functions (src/gdn_api.c): dk >= 1, inputs finite.
 */
#ifndef DN_GDN_KERNELS_H
#define DN_GDN_KERNELS_H

#include "bits.h"
#include "decodenum/gdn.h"

/* One token as a head's rows read it (decay = dn_exp(g), kq = k . q). */
typedef struct dn_gdn_token {
    const float *q, *k, *v; /* dk, dk, dv */
    float decay, beta, kq, scale;
} dn_gdn_token;

/* One logged token as a lazily flushed head reads it: its key group's key,
   the head's values, the exponent of its decay (and the decay made of it by
   dn_exp), its update gate. */
typedef struct dn_gdn_logged {
    const float *k; /* dk */
    const float *v; /* dv */
    float g, decay, beta;
} dn_gdn_logged;

typedef struct dn_gdn_kernels {
    /* y = conv of x over the ring (oldest row at slot `head`) */
    void (*conv)(const float *ring, uint32_t head, size_t channels, size_t taps,
                 const float *kernel, const float *x, float *y);
    /* gdn_row over rows [r0, r1) of a head: row j with value v[j], out[j] */
    void (*rows)(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                 const dn_gdn_token *t, float *out);
    /* gdn_flush over rows [r0, r1): row j replays log[0..count) with v[j] */
    void (*flush_rows)(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                       const dn_gdn_logged *log, size_t count);
    /* gdn_fold_trailing (older = 0: y_new, c_new are gdn_fold's, y_all = y_new) */
    void (*fold)(const dn_gdn_logged *log, size_t count, size_t older, const float *q, size_t dk,
                 size_t dv, float *y_new, float *c_new, float *y_all, float *c_all);
    /* out[j] = gdn_read of row j with carried[j], j in [r0, r1) */
    void (*read_rows)(const void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                      const float *y, const float *carried, float scale, float *out);
} dn_gdn_kernels;

/* The definitions (docs/numerics.md section 14). */
void dn_ref_gdn_conv(const float *ring, uint32_t head, size_t channels, size_t taps,
                     const float *kernel, const float *x, float *y);
/* conv's sums before the SiLU, channels c0..channels (the kernels' tails) */
void dn_ref_gdn_conv_sums(const float *ring, uint32_t head, size_t channels, size_t taps,
                          const float *kernel, const float *x, size_t c0, float *y);
float dn_ref_gdn_update(void *row, dn_gdn_store store, const float *k, size_t dk, float v,
                        float decay, float beta);
float dn_ref_gdn_row(void *row, dn_gdn_store store, const float *k, const float *q, size_t dk,
                     float v, float decay, float beta, float kq, float scale);
void dn_ref_gdn_rows(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                     const dn_gdn_token *t, float *out);
void dn_ref_gdn_fold(const dn_gdn_logged *log, size_t count, const float *q, size_t dk, size_t dv,
                     float *y, float *carried);
void dn_ref_gdn_fold_trailing(const dn_gdn_logged *log, size_t count, size_t older, const float *q,
                              size_t dk, size_t dv, float *y_new, float *c_new, float *y_all,
                              float *c_all);
float dn_ref_gdn_read(const void *row, dn_gdn_store store, size_t dk, const float *y, float carried,
                      float scale);
void dn_ref_gdn_read_rows(const void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                          const float *y, const float *carried, float scale, float *out);
void dn_ref_gdn_flush(void *row, dn_gdn_store store, size_t dk, const dn_gdn_logged *log,
                      size_t count, size_t j);
void dn_ref_gdn_flush_rows(void *state, dn_gdn_store store, size_t dk, size_t r0, size_t r1,
                           const dn_gdn_logged *log, size_t count);

/* The engine's scalar operations, inlined for the kernels' per-row steps
   (dn_fmul, dn_fadd, dn_fsub exactly: FTZ on operands and result, one NaN). */
static inline float dn_gdn_fmul(float a, float b) { return dn_result(dn_flush(a) * dn_flush(b)); }
static inline float dn_gdn_fadd(float a, float b) { return dn_result(dn_flush(a) + dn_flush(b)); }
static inline float dn_gdn_fsub(float a, float b) { return dn_result(dn_flush(a) - dn_flush(b)); }

/* What the kernels share: an element as the store keeps it (x already an
   engine result), and element i of a stored row read back. */
float dn_gdn_round(float x, dn_gdn_store store);
float dn_gdn_load(const void *row, dn_gdn_store store, size_t i);
/* Row j of a head's state. */
static inline void *dn_gdn_row_at(void *state, dn_gdn_store store, size_t dk, size_t j)
{
    return (char *)state + j * dk * (store == DN_GDN_STORE_F32 ? 4 : 2);
}

extern const dn_gdn_kernels dn_gdn_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_gdn_kernels dn_gdn_avx2;
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_gdn_kernels dn_gdn_avx512;
/* dn_gdn_avx512 with a bfloat16 state rounded by AVX512_BF16's conversion:
   src/dispatch.c registers it in place of dn_gdn_avx512 where the CPU has it */
extern const dn_gdn_kernels dn_gdn_avx512bf16;
#endif
#if defined(DN_HAVE_NEON)
extern const dn_gdn_kernels dn_gdn_neon;
#endif

#endif
