/* SPDX-License-Identifier: MIT */
/*
 * block_format.h: the facts of ggml's block formats, once: one constant
 * table indexed by dn_type (ggml's type_traits idea), the little-endian
 * loads, the binary16 scales as exact integers or doubles, the sub-block
 * scale decoders and IQ4's levels. Read by the block readers
 * (src/blocks.c, the specification), the lane's weight image (src/lane.c),
 * the dot module and its kernels.
 *
 * The table is a static const array: where the type is a constant (the
 * kernels' per-format row loops), GCC folds every field to its value, so a
 * kernel's per-format code is what a switch on the literal type gave
 * (checked with callgrind: the matrix-vector products' instruction counts
 * are unchanged).
 */
#ifndef DN_BLOCK_FORMAT_H
#define DN_BLOCK_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "decodenum/blocks.h"

typedef struct dn_block_format {
    uint16_t elements;     /* per block; 0: a type id this library does not know */
    uint16_t bytes;        /* per block */
    int16_t d_at;          /* byte offset of d, the binary16 scale of coef (-1: none) */
    int16_t m_at;          /* byte offset of the binary16 scale of offs (-1: no offset term) */
    uint8_t zero_point;    /* z of the weight digit q: coef = sc * (q - z) */
    uint8_t sub_elements;  /* elements under one sub-block scale (the block's for 32) */
    uint8_t signed_digits; /* the digits are int8 levels (Q8_0, IQ4), else 0..63 */
    int16_t coef_max;      /* the largest |coef| of its coded rows */
    int16_t offs_max;      /* the largest |offs| */
} dn_block_format;

#define DN_TYPE_LIMIT 31 /* every dn_type is below it */

/* The layouts are src/blocks.c's (each reader's comment); the bounds are
   its readers' ranges of coef and offs. */
static const dn_block_format dn_block_formats[DN_TYPE_LIMIT] = {
    [DN_TYPE_F32] = {1, 4, -1, -1, 0, 0, 0, 0, 0},
    [DN_TYPE_F16] = {1, 2, -1, -1, 0, 0, 0, 0, 0},
    [DN_TYPE_BF16] = {1, 2, -1, -1, 0, 0, 0, 0, 0},
    [DN_TYPE_Q4_0] = {32, 18, 0, -1, 8, 32, 0, 8, 0},
    [DN_TYPE_Q4_1] = {32, 20, 0, 2, 0, 32, 0, 15, 1},
    [DN_TYPE_Q5_0] = {32, 22, 0, -1, 16, 32, 0, 16, 0},
    [DN_TYPE_Q5_1] = {32, 24, 0, 2, 0, 32, 0, 31, 1},
    [DN_TYPE_Q8_0] = {32, 34, 0, -1, 0, 32, 1, 128, 0},
    [DN_TYPE_IQ4_NL] = {32, 18, 0, -1, 0, 32, 1, 127, 0},
    [DN_TYPE_Q2_K] = {256, 84, 80, 82, 0, 16, 0, 45, 15},
    [DN_TYPE_Q3_K] = {256, 110, 108, -1, 4, 16, 0, 128, 0},
    [DN_TYPE_Q4_K] = {256, 144, 0, 2, 0, 32, 0, 945, 63},
    [DN_TYPE_Q5_K] = {256, 176, 0, 2, 0, 32, 0, 1953, 63},
    [DN_TYPE_Q6_K] = {256, 210, 208, -1, 32, 16, 0, 4096, 0},
    [DN_TYPE_IQ4_XS] = {256, 136, 0, -1, 0, 32, 1, 4064, 0},
};

/* The format of `type`, or NULL for a type id this library does not know. */
static inline const dn_block_format *dn_block_format_of(dn_type type)
{
    if ((unsigned)type >= DN_TYPE_LIMIT || dn_block_formats[type].elements == 0) return NULL;
    return &dn_block_formats[type];
}

/* For a type the array reads (the kernels, with the type a constant). */
static inline int dn_big(dn_type t) { return dn_block_formats[t].elements == 256; }
static inline size_t dn_bb(dn_type t) { return dn_block_formats[t].bytes; }
static inline int dn_has_offs(dn_type t) { return dn_block_formats[t].m_at >= 0; }
static inline int dn_zero_point(dn_type t) { return dn_block_formats[t].zero_point; }
static inline int dn_d_at(dn_type t) { return dn_block_formats[t].d_at; }
static inline int dn_m_at(dn_type t) { return dn_block_formats[t].m_at; }
static inline int dn_signed_digits(dn_type t) { return dn_block_formats[t].signed_digits; }

/* ---- bytes -------------------------------------------------------------------- */

/* Little-endian loads on any host and at any address (GCC makes each one
   load where the host is little-endian). */
static inline uint16_t dn_load_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static inline uint32_t dn_load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- binary16 scales ------------------------------------------------------------ */

/* 1 when the binary16 bits are infinite or NaN: an unreadable block. */
static inline int dn_f16_bad(uint16_t h) { return (h & 0x7C00u) == 0x7C00u; }

/* The binary16 with bits h as sig * 2^exp, exactly; 0 when it is infinite or
   NaN. A normal value (exponent field E in 1..30, fraction f) is
   (1024 + f) * 2^(E - 25); a subnormal one f * 2^-24; a zero of either sign
   is the canonical zero sig 0, exp 0. The sign goes to sig. */
static inline int dn_scale_f16(uint16_t h, dn_scale *s)
{
    int32_t e = (h >> 10) & 31, f = h & 1023;
    if (e == 31) return 0;
    if (e != 0) {
        s->sig = 1024 + f;
        s->exp = e - 25;
    } else {
        s->sig = f;
        s->exp = f != 0 ? -24 : 0;
    }
    if (h & 0x8000u) s->sig = -s->sig;
    return 1;
}

/* The f16 value of a stored scale as a double (exact). */
static inline double dn_f16_double(uint16_t h)
{
    int32_t e = (h >> 10) & 31, f = h & 1023;
    double v = e ? (double)(1024 + f) * (double)(1 << e) * 0x1p-25 : (double)f * 0x1p-24;
    return (h & 0x8000u) ? -v : v;
}

/* A block's two scales (a: d; b: the offset term's, zero where the format
   has none) at the table's offsets; 0 when one is infinite or NaN. */
static inline int dn_block_scales(dn_type t, const uint8_t *blk, dn_scale *a, dn_scale *b)
{
    const dn_block_format *f = &dn_block_formats[t];
    if (!dn_scale_f16(dn_load_u16(blk + f->d_at), a)) return 0;
    if (f->m_at < 0) {
        *b = (dn_scale){0, 0};
        return 1;
    }
    return dn_scale_f16(dn_load_u16(blk + f->m_at), b);
}

/* ---- sub-block scales ------------------------------------------------------------ */

/* The 6-bit scale and min of sub-block j (0..7) of Q4_K and Q5_K, packed in
   12 bytes s[] (the block's bytes 4..15):
     j < 4:  sc = s[j] & 63,                          m = s[j + 4] & 63;
     j >= 4: sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4, m = (s[j + 4] >> 4) | (s[j] >> 6) << 4. */
static inline void dn_k_scale_min(const uint8_t *s, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
        *m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
}

/* Q3_K's 6-bit scale of sub-block j (0..15) from scales[12] (the block's
   bytes 96..107), unbiased: -32..31. */
static inline int dn_q3_k_scale(const uint8_t *s, int j)
{
    return ((j < 8 ? s[j] & 15 : s[j - 8] >> 4) | ((s[8 + j % 4] >> 2 * (j / 4)) & 3) << 4) - 32;
}

/* IQ4_XS's 6-bit scale of sub-block j (0..7): (scales_l nibble j) | (2 bits j
   of scales_h) << 4 (scales_h u16 at 2, scales_l[4] at 4), unbiased: -32..31. */
static inline int dn_iq4_xs_scale(const uint8_t *blk, int j)
{
    unsigned scales_h = dn_load_u16(blk + 2);
    return (((blk[4 + j / 2] >> 4 * (j % 2)) & 15) | (int)((scales_h >> 2 * j) & 3) << 4) - 32;
}

/* IQ4_NL's and IQ4_XS's 16 non-linear levels (ggml's kvalues_iq4nl). */
static const int8_t dn_iq4_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                         1,    13,   25,  38,  53,  69,  89,  113};

#endif
