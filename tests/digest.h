/* SPDX-License-Identifier: MIT */
/*
 * digest.h: the digest test's hash (FNV-1a over values), its input generator
 * (splitmix64, a fixed seed per family) and its families (test_digest.c).
 */
#ifndef DN_TEST_DIGEST_H
#define DN_TEST_DIGEST_H

#include <stdint.h>
#include <string.h>

#include "decodenum.h"

typedef struct dg_hash {
    uint64_t h;
    uint64_t values;  /* values hashed */
    uint32_t calls;   /* statuses hashed */
    uint32_t refused; /* of them, not DN_OK */
} dg_hash;

static inline void dg_init(dg_hash *d) { *d = (dg_hash){UINT64_C(0xcbf29ce484222325), 0, 0, 0}; }

/* v, least significant byte first: the same on every byte order */
static inline void dg_u64(dg_hash *d, uint64_t v)
{
    d->values++;
    for (int i = 0; i < 8; i++) {
        d->h ^= (v >> (8 * i)) & 0xFFu;
        d->h *= UINT64_C(0x100000001b3);
    }
}

static inline uint32_t dg_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

/* *x = the binary32 with bits u. Through memory, not as a return value: on
   i386 a float is returned in the x87 stack, which quiets a signalling NaN. */
static inline void dg_put(float *x, uint32_t u) { memcpy(x, &u, 4); }

static inline int dg_is_snan(float x)
{
    uint32_t u = dg_bits(x);
    return (u & 0x7FFFFFFFu) > 0x7F800000u && !(u & 0x00400000u);
}

static inline void dg_f32(dg_hash *d, float x) { dg_u64(d, dg_bits(x)); }
static inline void dg_f32s(dg_hash *d, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) dg_f32(d, x[i]);
}
static inline void dg_u16s(dg_hash *d, const uint16_t *x, size_t n)
{
    for (size_t i = 0; i < n; i++) dg_u64(d, x[i]);
}
static inline void dg_i16s(dg_hash *d, const int16_t *x, size_t n)
{
    for (size_t i = 0; i < n; i++) dg_u64(d, (uint64_t)(int64_t)x[i]);
}
static inline void dg_i8s(dg_hash *d, const int8_t *x, size_t n)
{
    for (size_t i = 0; i < n; i++) dg_u64(d, (uint64_t)(int64_t)x[i]);
}
static inline void dg_st(dg_hash *d, dn_status s)
{
    d->calls++;
    d->refused += s != DN_OK;
    dg_u64(d, (uint64_t)s + 0x5700);
}

/* ---- the generator ---------------------------------------------------------- */

typedef struct dg_rng {
    uint64_t s;
} dg_rng;

static inline uint64_t dg_next(dg_rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* an integer in [lo, hi] */
static inline int64_t dg_between(dg_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(dg_next(r) % (uint64_t)(hi - lo + 1));
}

/* An int64 of any size: a random one shifted right by 0..63 places. (Every
   draw is its own statement or declaration: the order in which a call's
   arguments or an operator's operands are evaluated is unspecified, and
   compilers for different targets do pick different orders.) */
static inline int64_t dg_int64(dg_rng *r)
{
    int64_t v = (int64_t)dg_next(r);
    int64_t s = dg_between(r, 0, 63);
    return v >> s;
}

/* a binary16 with its exponent and fraction in [lo, hi], either sign */
static inline uint16_t dg_f16_in(dg_rng *r, int64_t lo, int64_t hi)
{
    uint16_t mag = (uint16_t)dg_between(r, lo, hi);
    uint16_t sign = (uint16_t)((dg_next(r) & 1) << 15);
    return (uint16_t)(mag | sign);
}

/* k / 2^s with k in [-2^20, 2^20] and s in [0, 24]: exact, modest, signed */
static inline float dg_small(dg_rng *r)
{
    int64_t k = dg_between(r, -(1 << 20), 1 << 20);
    return (float)k / (float)(1u << dg_between(r, 16, 24));
}

/* Any binary32 (into *x): a random bit pattern, one of the special values,
   or a small one. */
static inline void dg_any(dg_rng *r, float *x)
{
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0xBF800000u,
                                       0x00000001u, 0x807FFFFFu, 0x00800000u, 0x7F7FFFFFu,
                                       0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u,
                                       0xFFC00001u, 0x477FE000u, 0x477FF000u, 0x33800000u};
    switch (dg_next(r) % 4) {
    case 0: dg_put(x, (uint32_t)dg_next(r)); break;
    case 1: dg_put(x, special[dg_next(r) % 16]); break;
    default: *x = dg_small(r);
    }
}

static inline void dg_fill_small(dg_rng *r, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = dg_small(r);
}

/* ---- ggml blocks (digest_rows.c) -------------------------------------------- */

typedef struct dg_format {
    dn_type type;
    int d_at, m_at; /* byte offsets of the binary16 scales (-1: none) */
} dg_format;

/* the twelve formats the products read */
extern const dg_format dg_formats[12];

enum { MAXB = 8, MAXN = MAXB * 256 }; /* blocks and elements of a generated row */

/* `blocks` random blocks of f into bytes: random bytes under finite scales
   of modest size; with `bad`, one block's d is an infinity. Returns the
   row's elements. */
size_t dg_random_row(dg_rng *r, const dg_format *f, uint8_t *bytes, size_t blocks, int bad);

/* ---- the families (digest_*.c) ----------- */

void dg_fp32(dg_hash *h, dn_pool *pool);
void dg_math(dg_hash *h, dn_pool *pool);
void dg_norms(dg_hash *h, dn_pool *pool);
void dg_quant(dg_hash *h, dn_pool *pool);
void dg_f16(dg_hash *h, dn_pool *pool);
void dg_blocks(dg_hash *h, dn_pool *pool);
void dg_dot(dg_hash *h, dn_pool *pool);
void dg_lane(dg_hash *h, dn_pool *pool);
void dg_attention(dg_hash *h, dn_pool *pool);
void dg_gdn(dg_hash *h, dn_pool *pool);
void dg_bf16(dg_hash *h, dn_pool *pool);
void dg_fp8(dg_hash *h, dn_pool *pool);
void dg_lane_units(dg_hash *h, dn_pool *pool);
void dg_vec(dg_hash *h, dn_pool *pool);
void dg_activations(dg_hash *h, dn_pool *pool);
void dg_trig(dg_hash *h, dn_pool *pool);
void dg_act(dg_hash *h, dn_pool *pool);
void dg_mat_mul_path(dg_hash *h, dn_pool *pool);

#endif
