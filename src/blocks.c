/* SPDX-License-Identifier: MIT */
/*
 * blocks.c: ggml's block formats read as coded rows. THIS CODE IS THE
 * SPECIFICATION of what a stored block means to the engine.
 *
 * Every weight of a block is a * coef + b * offs exactly: a and b are the
 * block's binary16 scales as integers times powers of two (dn_scale), coef
 * and offs are integers. Nothing is rounded, nothing is computed in floating
 * point. Each format has one reader below; its comment gives the block's
 * byte layout (offsets in bytes, multi-byte fields little-endian, as ggml
 * writes them on every host) and the formula of element e (0 <= e < block
 * elements). The formulas say what ggml's dequantize_row_<type> means
 * mathematically; ggml evaluates them in f32 and may round (docs/blocks.md
 * says where), the coded row never does.
 *
 * A block whose binary16 scale (d, and m or dmin where the format has it)
 * is infinite or NaN is unreadable: the reader reports it and writes nothing
 * derived from it.
 */
#include "block_format.h"
#include "decodenum/blocks.h"

/* A reader fills one block's segment scales and its elements' coef and offs;
   0 when the block is unreadable. */
typedef int (*block_reader)(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs);

/* ---- 32-element blocks ---------------------------------------------------- */

/* Q4_0, 18 bytes: d f16 @0, qs[16] @2.
   q(e) = e < 16 ? qs[e] & 15 : qs[e - 16] >> 4            (0..15)
   w(e) = d * (q - 8):  a = d, coef = q - 8 (-8..7), no b. */
static int read_q4_0(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q4_0, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *qs = blk + 2;
    for (int e = 0; e < 32; e++) {
        int q = e < 16 ? qs[e] & 15 : qs[e - 16] >> 4;
        coef[e] = (int16_t)(q - 8);
        offs[e] = 0;
    }
    return 1;
}

/* Q4_1, 20 bytes: d f16 @0, m f16 @2, qs[16] @4.
   q(e) as Q4_0                                              (0..15)
   w(e) = d * q + m:  a = d, coef = q; b = m, offs = 1. */
static int read_q4_1(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q4_1, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *qs = blk + 4;
    for (int e = 0; e < 32; e++) {
        coef[e] = (int16_t)(e < 16 ? qs[e] & 15 : qs[e - 16] >> 4);
        offs[e] = 1;
    }
    return 1;
}

/* Q5_0, 22 bytes: d f16 @0, qh u32 @2, qs[16] @6.
   q(e) = (e < 16 ? qs[e] & 15 : qs[e - 16] >> 4) | ((qh >> e) & 1) << 4   (0..31)
   w(e) = d * (q - 16):  a = d, coef = q - 16 (-16..15), no b. */
static int read_q5_0(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q5_0, blk, &seg->a, &seg->b)) return 0;
    uint32_t qh = dn_load_u32(blk + 2);
    const uint8_t *qs = blk + 6;
    for (int e = 0; e < 32; e++) {
        int q = (e < 16 ? qs[e] & 15 : qs[e - 16] >> 4) | (int)((qh >> e) & 1) << 4;
        coef[e] = (int16_t)(q - 16);
        offs[e] = 0;
    }
    return 1;
}

/* Q5_1, 24 bytes: d f16 @0, m f16 @2, qh u32 @4, qs[16] @8.
   q(e) as Q5_0                                              (0..31)
   w(e) = d * q + m:  a = d, coef = q; b = m, offs = 1. */
static int read_q5_1(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q5_1, blk, &seg->a, &seg->b)) return 0;
    uint32_t qh = dn_load_u32(blk + 4);
    const uint8_t *qs = blk + 8;
    for (int e = 0; e < 32; e++) {
        coef[e] = (int16_t)((e < 16 ? qs[e] & 15 : qs[e - 16] >> 4) | (int)((qh >> e) & 1) << 4);
        offs[e] = 1;
    }
    return 1;
}

/* Q8_0, 34 bytes: d f16 @0, qs int8[32] @2.
   w(e) = d * qs[e]:  a = d, coef = qs[e] (-128..127), no b. */
static int read_q8_0(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q8_0, blk, &seg->a, &seg->b)) return 0;
    for (int e = 0; e < 32; e++) {
        int q = blk[2 + e];
        coef[e] = (int16_t)(q >= 128 ? q - 256 : q);
        offs[e] = 0;
    }
    return 1;
}

/* IQ4_NL, 18 bytes: d f16 @0, qs[16] @2.
   q(e) as Q4_0 (an index 0..15 into the levels L = {-127, -104, -83, -65,
   -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113})
   w(e) = d * L[q]:  a = d, coef = L[q], no b. */
static int read_iq4_nl(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_IQ4_NL, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *qs = blk + 2;
    for (int e = 0; e < 32; e++) {
        coef[e] = dn_iq4_levels[e < 16 ? qs[e] & 15 : qs[e - 16] >> 4];
        offs[e] = 0;
    }
    return 1;
}

/* ---- 256-element super-blocks ------------------------------------------- */

/* Q2_K, 84 bytes: scales[16] @0, qs[64] @16, d f16 @80, dmin f16 @82.
   Sub-block j = e / 16 (16 of 16 elements): sc = scales[j] & 15, m = scales[j] >> 4.
   q(e) = (qs[32 * (e / 128) + e % 32] >> 2 * ((e % 128) / 32)) & 3      (0..3)
   w(e) = d * sc * q - dmin * m:  a = d, coef = sc * q (0..45);
                                  b = dmin, offs = -m (-15..0). */
static int read_q2_k(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q2_K, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *scales = blk, *qs = blk + 16;
    for (int e = 0; e < 256; e++) {
        int sc = scales[e / 16] & 15, m = scales[e / 16] >> 4;
        int q = (qs[32 * (e / 128) + e % 32] >> 2 * ((e % 128) / 32)) & 3;
        coef[e] = (int16_t)(sc * q);
        offs[e] = (int16_t)-m;
    }
    return 1;
}

/* Q3_K, 110 bytes: hmask[32] @0, qs[64] @32, scales[12] @96, d f16 @108.
   Sub-block j = e / 16 (16 of 16 elements), its 6-bit scale s[] = scales:
     sc = ((j < 8 ? s[j] & 15 : s[j - 8] >> 4) | ((s[8 + j % 4] >> 2 * (j / 4)) & 3) << 4) - 32
                                                                   (-32..31)
   low(e) = (qs[32 * (e / 128) + e % 32] >> 2 * ((e % 128) / 32)) & 3
   q(e)   = low - (hmask[e % 32] bit (e / 32) set ? 0 : 4)         (-4..3)
   w(e) = d * sc * q:  a = d, coef = sc * q (-124..128), no b. */
static int read_q3_k(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q3_K, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *hmask = blk, *qs = blk + 32, *s = blk + 96;
    for (int e = 0; e < 256; e++) {
        int sc = dn_q3_k_scale(s, e / 16);
        int low = (qs[32 * (e / 128) + e % 32] >> 2 * ((e % 128) / 32)) & 3;
        int q = low - ((hmask[e % 32] >> (e / 32)) & 1 ? 0 : 4);
        coef[e] = (int16_t)(sc * q);
        offs[e] = 0;
    }
    return 1;
}

/* Q4_K, 144 bytes: d f16 @0, dmin f16 @2, scales[12] @4, qs[128] @16.
   Sub-block j = e / 32 (8 of 32 elements), sc and m by dn_k_scale_min (0..63).
   q(e) = e % 64 < 32 ? qs[32 * (e / 64) + e % 32] & 15 : qs[32 * (e / 64) + e % 32] >> 4   (0..15)
   w(e) = d * sc * q - dmin * m:  a = d, coef = sc * q (0..945);
                                  b = dmin, offs = -m (-63..0). */
static int read_q4_k(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q4_K, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *qs = blk + 16;
    for (int e = 0; e < 256; e++) {
        int sc, m;
        dn_k_scale_min(blk + 4, e / 32, &sc, &m);
        int byte = qs[32 * (e / 64) + e % 32];
        int q = e % 64 < 32 ? byte & 15 : byte >> 4;
        coef[e] = (int16_t)(sc * q);
        offs[e] = (int16_t)-m;
    }
    return 1;
}

/* Q5_K, 176 bytes: d f16 @0, dmin f16 @2, scales[12] @4, qh[32] @16, qs[128] @48.
   Sub-block j = e / 32, sc and m by dn_k_scale_min (0..63).
   q(e) = (Q4_K's q from qs) | ((qh[e % 32] >> (e / 32)) & 1) << 4       (0..31)
   w(e) = d * sc * q - dmin * m:  a = d, coef = sc * q (0..1953);
                                  b = dmin, offs = -m (-63..0). */
static int read_q5_k(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q5_K, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *qh = blk + 16, *qs = blk + 48;
    for (int e = 0; e < 256; e++) {
        int sc, m;
        dn_k_scale_min(blk + 4, e / 32, &sc, &m);
        int byte = qs[32 * (e / 64) + e % 32];
        int q = (e % 64 < 32 ? byte & 15 : byte >> 4) | ((qh[e % 32] >> (e / 32)) & 1) << 4;
        coef[e] = (int16_t)(sc * q);
        offs[e] = (int16_t)-m;
    }
    return 1;
}

/* Q6_K, 210 bytes: ql[128] @0, qh[64] @128, scales int8[16] @192, d f16 @208.
   Sub-block j = e / 16 (16 of 16 elements): sc = scales[j] (-128..127).
   With h = e / 128, k = (e % 128) / 32, l = e % 32:
     low(e)  = (ql[64 * h + 32 * (k & 1) + l] >> 4 * (k >> 1)) & 15
     high(e) = (qh[32 * h + l] >> 2 * k) & 3
     q(e)    = low | high << 4                                   (0..63)
   w(e) = d * sc * (q - 32):  a = d, coef = sc * (q - 32) (-4064..4096), no b. */
static int read_q6_k(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_Q6_K, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *ql = blk, *qh = blk + 128, *scales = blk + 192;
    for (int e = 0; e < 256; e++) {
        int h = e / 128, k = (e % 128) / 32, l = e % 32;
        int sc = scales[e / 16] >= 128 ? scales[e / 16] - 256 : scales[e / 16];
        int low = (ql[64 * h + 32 * (k & 1) + l] >> 4 * (k >> 1)) & 15;
        int high = (qh[32 * h + l] >> 2 * k) & 3;
        coef[e] = (int16_t)(sc * ((low | high << 4) - 32));
        offs[e] = 0;
    }
    return 1;
}

/* IQ4_XS, 136 bytes: d f16 @0, scales_h u16 @2, scales_l[4] @4, qs[128] @8.
   Sub-block j = e / 32 (8 of 32 elements):
     ls = ((scales_l[j / 2] >> 4 * (j % 2)) & 15) | ((scales_h >> 2 * j) & 3) << 4   (0..63)
   q(e) = e % 32 < 16 ? qs[16 * j + e % 16] & 15 : qs[16 * j + e % 16] >> 4  (level index)
   w(e) = d * (ls - 32) * L[q]  (L: IQ4_NL's levels):
        a = d, coef = (ls - 32) * L[q] (-3937..4064), no b. */
static int read_iq4_xs(const uint8_t *blk, dn_segment *seg, int16_t *coef, int16_t *offs)
{
    if (!dn_block_scales(DN_TYPE_IQ4_XS, blk, &seg->a, &seg->b)) return 0;
    const uint8_t *qs = blk + 8;
    for (int e = 0; e < 256; e++) {
        int j = e / 32, byte = qs[16 * j + e % 16];
        coef[e] =
            (int16_t)(dn_iq4_xs_scale(blk, j) * dn_iq4_levels[e % 32 < 16 ? byte & 15 : byte >> 4]);
        offs[e] = 0;
    }
    return 1;
}

/* ---- the table and the row ------------------------------------------------ */

/* The readers by type id: NULL for a type the engine's array does not read. */
static const block_reader readers[DN_TYPE_LIMIT] = {
    [DN_TYPE_Q4_0] = read_q4_0, [DN_TYPE_Q4_1] = read_q4_1,     [DN_TYPE_Q5_0] = read_q5_0,
    [DN_TYPE_Q5_1] = read_q5_1, [DN_TYPE_Q8_0] = read_q8_0,     [DN_TYPE_Q2_K] = read_q2_k,
    [DN_TYPE_Q3_K] = read_q3_k, [DN_TYPE_Q4_K] = read_q4_k,     [DN_TYPE_Q5_K] = read_q5_k,
    [DN_TYPE_Q6_K] = read_q6_k, [DN_TYPE_IQ4_NL] = read_iq4_nl, [DN_TYPE_IQ4_XS] = read_iq4_xs,
};

static block_reader reader_of(dn_type type)
{
    return (unsigned)type < DN_TYPE_LIMIT ? readers[type] : NULL;
}

int dn_reads(dn_type type) { return reader_of(type) != NULL; }

size_t dn_type_block_elements(dn_type type)
{
    const dn_block_format *f = dn_block_format_of(type);
    return f ? f->elements : 0;
}

size_t dn_type_block_bytes(dn_type type)
{
    const dn_block_format *f = dn_block_format_of(type);
    return f ? f->bytes : 0;
}

dn_status dn_read_row(dn_type type, const uint8_t *bytes, size_t n, dn_coded_row *row,
                      size_t *bad_block)
{
    block_reader read = reader_of(type);
    if (read == NULL) return DN_ERR_UNSUPPORTED_TYPE;
    const dn_block_format *f = dn_block_format_of(type);
    if (row == NULL || row->n != n || n % f->elements != 0 || n > UINT32_MAX)
        return DN_ERR_INVALID_ARGUMENT;
    if (n != 0 &&
        (bytes == NULL || row->coef == NULL || row->offs == NULL || row->segments == NULL))
        return DN_ERR_INVALID_ARGUMENT;
    size_t blocks = n / f->elements;
    row->nsegments = 0;
    for (size_t i = 0; i < blocks; i++) {
        size_t first = i * f->elements;
        dn_segment *seg = &row->segments[i];
        if (!read(bytes + i * f->bytes, seg, row->coef + first, row->offs + first)) {
            if (bad_block) *bad_block = i;
            return DN_ERR_UNREADABLE_BLOCK;
        }
        seg->first = (uint32_t)first;
        seg->count = f->elements;
    }
    row->nsegments = blocks;
    return DN_OK;
}
