/* SPDX-License-Identifier: MIT */
/*
 * The repacked weight layout (decodenum/repack.h): its size and the copies
 * between it and the plain layout. The reference product on it is the plain
 * reference's loop reading every piece's bytes where the layout keeps them
 * (dn_ref_rows_packed, src/dot.c: in place, or an interleaved format's
 * blocks put back together by dn_packed8_get), so its bits are the plain product's by
 * construction.
 */
#include "decodenum/repack.h"
#include "decodenum/fp32.h"
#include "block_format.h"
#include "dot_kernels.h"
#include "sizes.h"

#include <string.h>

/* A type the dn_act products serve: the quantized formats the readers read. */
static int packable(dn_type type)
{
    switch (type) {
    case DN_TYPE_Q4_0:
    case DN_TYPE_Q4_1:
    case DN_TYPE_Q5_0:
    case DN_TYPE_Q5_1:
    case DN_TYPE_Q8_0:
    case DN_TYPE_Q2_K:
    case DN_TYPE_Q3_K:
    case DN_TYPE_Q4_K:
    case DN_TYPE_Q5_K:
    case DN_TYPE_Q6_K:
    case DN_TYPE_IQ4_NL:
    case DN_TYPE_IQ4_XS: return dn_reads(type);
    default: return 0;
    }
}

/* The checks of dn_repack_size; *row_bytes a row's bytes. */
static dn_status layout_args(dn_type type, size_t rows, size_t n, size_t *row_bytes, size_t *bytes)
{
    if ((unsigned)type >= DN_TYPE_LIMIT || !packable(type)) return DN_ERR_UNSUPPORTED_TYPE;
    const size_t be = dn_block_formats[type].elements, bb = dn_block_formats[type].bytes;
    size_t groups = rows / DN_REPACK_ROWS + (rows % DN_REPACK_ROWS != 0), padded;
    if (!bytes || rows == 0 || n == 0 || n % be != 0 || n > UINT32_MAX ||
        !dn_size_mul(n / be, bb, row_bytes) || !dn_size_mul(groups, DN_REPACK_ROWS, &padded) ||
        !dn_size_mul(padded, *row_bytes, bytes))
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

dn_status dn_repack_size(dn_type type, size_t rows, size_t n, size_t *bytes)
{
    size_t row_bytes;
    return layout_args(type, rows, n, &row_bytes, bytes);
}

/* ---- Q4_K: eight rows interleaved (decodenum/repack.h gives the layout) ---- */

/* Byte offsets in an interleaved chunk. */
enum { Q8_D = 0, Q8_DM = 16, Q8_LO = 32, Q8_HI = 96, Q8_QS = 128 };

/* Sets scale (mins = 0) or min (mins = 1) number v of grp to the 6-bit x:
   scales v = 8 sub-block + row, mins v = 8 row + sub-block; the low four
   bits in the low or high nibble of LO[v], the high two in bits
   4 mins + 2 (v / 32) of HI[v % 32]. */
static void q4k8_set(uint8_t *grp, int mins, int v, int x)
{
    const int sh = 4 * mins + 2 * (v / 32);
    grp[Q8_LO + v] = (uint8_t)((grp[Q8_LO + v] & ~(15 << 4 * mins)) | (x & 15) << 4 * mins);
    grp[Q8_HI + v % 32] = (uint8_t)((grp[Q8_HI + v % 32] & ~(3 << sh)) | (x >> 4) << sh);
}

/* Eight bytes as a little-endian word (byte i in bits 8i .. 8i + 7), and
   four stored from one, on any host. */
static uint64_t load_u64(const uint8_t *p)
{
    return dn_load_u32(p) | (uint64_t)dn_load_u32(p + 4) << 32;
}

static void store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}

/* Row k's block: its scales and mins as eight 6-bit values a word (byte j
   sub-block j: q4k8_set's fields, eight at once), packed into the 12
   bytes of dn_k_scale_min four bytes at a time. Value by value it was a
   third of the time of a repacked Q4_K matrix product (64 columns, unpacked
   tiles, perf record -e cpu-clock). */
void dn_q4k8_get(const uint8_t *grp, int k, uint8_t *blk)
{
    const uint64_t nibbles = 0x0F0F0F0F0F0F0F0Full, twos = 0x0303030303030303ull;
    memcpy(blk, grp + Q8_D + 2 * k, 2);
    memcpy(blk + 2, grp + Q8_DM + 2 * k, 2);
    uint64_t sc = 0; /* scale j: v = 8 j + k */
    for (int j = 0; j < 8; j++)
        sc |= (uint64_t)((grp[Q8_LO + 8 * j + k] & 15) |
                         (grp[Q8_HI + 8 * (j % 4) + k] >> 2 * (j / 4) & 3) << 4)
              << 8 * j;
    const uint64_t m = (load_u64(grp + Q8_LO + 8 * k) >> 4 & nibbles) | /* min j: v = 8 k + j */
                       (load_u64(grp + Q8_HI + 8 * (k % 4)) >> (4 + 2 * (k / 4)) & twos) << 4;
    const uint32_t sc03 = (uint32_t)sc, sc47 = (uint32_t)(sc >> 32);
    const uint32_t m03 = (uint32_t)m, m47 = (uint32_t)(m >> 32);
    store_u32(blk + 4, sc03 | (sc47 >> 4 & 0x03030303u) << 6);
    store_u32(blk + 8, m03 | (m47 >> 4 & 0x03030303u) << 6);
    store_u32(blk + 12, (sc47 & 0x0F0F0F0Fu) | (m47 & 0x0F0F0F0Fu) << 4);
    for (int p = 0; p < 4; p++)
        for (int u = 0; u < 4; u++)
            memcpy(blk + 16 + 32 * p + 8 * u, grp + Q8_QS + 256 * p + 64 * u + 8 * k, 8);
}

void dn_q4k8_put(const uint8_t *blk, uint8_t *grp, int k)
{
    memcpy(grp + Q8_D + 2 * k, blk, 2);
    memcpy(grp + Q8_DM + 2 * k, blk + 2, 2);
    for (int j = 0; j < 8; j++) {
        int sc, m;
        dn_k_scale_min(blk + 4, j, &sc, &m);
        q4k8_set(grp, 0, 8 * j + k, sc);
        q4k8_set(grp, 1, 8 * k + j, m);
    }
    for (int p = 0; p < 4; p++)
        for (int u = 0; u < 4; u++)
            memcpy(grp + Q8_QS + 256 * p + 64 * u + 8 * k, blk + 16 + 32 * p + 8 * u, 8);
}

/* ---- Q8_0: eight rows interleaved eight bytes at a time ---------------------------- */

/* A chunk of G blocks per row: the G blocks' d of rows 0..7 (16 bytes a
   block), then per block 256 bytes of qs, eight bytes of each row in turn
   (decodenum/repack.h). */
void dn_q808_get(const uint8_t *grp, int G, int k, uint8_t *blk)
{
    for (int b = 0; b < G; b++) {
        memcpy(blk + 34 * b, grp + 16 * b + 2 * k, 2);
        for (int u = 0; u < 4; u++)
            memcpy(blk + 34 * b + 2 + 8 * u, grp + 16 * G + 256 * b + 64 * u + 8 * k, 8);
    }
}

void dn_q808_put(const uint8_t *blk, uint8_t *grp, int G, int k)
{
    for (int b = 0; b < G; b++) {
        memcpy(grp + 16 * b + 2 * k, blk + 34 * b, 2);
        for (int u = 0; u < 4; u++)
            memcpy(grp + 16 * G + 256 * b + 64 * u + 8 * k, blk + 34 * b + 2 + 8 * u, 8);
    }
}

/* ---- Q6_K: eight rows interleaved eight bytes at a time ---------------------------- */

/* Byte offsets in an interleaved chunk (decodenum/repack.h): the eight d,
   the 128 scales (byte 8 s + r), then eight steps of 192 bytes, step 4 h +
   u holding eight elements (8 u ..) of chunks 4 h .. 4 h + 3 of every row:
   the two ql bytes and the qh byte of each. */
enum { Q6_D = 0, Q6_SC = 16, Q6_Q = 144 };

void dn_q6k8_get(const uint8_t *grp, int k, uint8_t *blk)
{
    memcpy(blk + 208, grp + Q6_D + 2 * k, 2);
    for (int s = 0; s < 16; s++) blk[192 + s] = grp[Q6_SC + 8 * s + k];
    for (int h = 0; h < 2; h++)
        for (int u = 0; u < 4; u++) {
            const uint8_t *st = grp + Q6_Q + 192 * (4 * h + u) + 8 * k;
            memcpy(blk + 64 * h + 8 * u, st, 8);
            memcpy(blk + 64 * h + 32 + 8 * u, st + 64, 8);
            memcpy(blk + 128 + 32 * h + 8 * u, st + 128, 8);
        }
}

void dn_q6k8_put(const uint8_t *blk, uint8_t *grp, int k)
{
    memcpy(grp + Q6_D + 2 * k, blk + 208, 2);
    for (int s = 0; s < 16; s++) grp[Q6_SC + 8 * s + k] = blk[192 + s];
    for (int h = 0; h < 2; h++)
        for (int u = 0; u < 4; u++) {
            uint8_t *st = grp + Q6_Q + 192 * (4 * h + u) + 8 * k;
            memcpy(st, blk + 64 * h + 8 * u, 8);
            memcpy(st + 64, blk + 64 * h + 32 + 8 * u, 8);
            memcpy(st + 128, blk + 128 + 32 * h + 8 * u, 8);
        }
}

/* Row r's chunk j (G blocks, `here` bytes) between plain bytes src and an
   interleaved repacked matrix (to_packed: into it; src NULL: a padding row,
   zero blocks, whose interleaved form is zero bytes too). */
static void copy_packed8(dn_type type, uint8_t *src, uint8_t *packed, size_t row_bytes, size_t r,
                         size_t j, int G, int to_packed)
{
    static const uint8_t zero[DN_PACK8_CHUNK_MAX / DN_Q4K8_ROWS];
    uint8_t *grp = (uint8_t *)(uintptr_t)dn_packed8_chunk(packed, type, row_bytes, r, j);
    const int k = (int)(r % DN_Q4K8_ROWS);
    if (!to_packed) {
        if (src) dn_packed8_get(type, grp, G, k, src);
        return;
    }
    const uint8_t *from = src ? src : zero;
    if (type == DN_TYPE_Q8_0) {
        dn_q808_put(from, grp, G, k);
        return;
    }
    if (type == DN_TYPE_Q6_K) { /* every byte is one row's: nothing to clear */
        dn_q6k8_put(from, grp, k);
        return;
    }
    if (k == 0) memset(grp, 0, DN_Q4K8_BYTES);
    dn_q4k8_put(from, grp, k);
}

/* Copies every row's chunks between the plain matrix and the repacked one
   (to_packed: plain -> repacked), and zeroes the padding rows of a repacked
   destination. */
static void copy_chunks(dn_type type, uint8_t *plain, uint8_t *packed, size_t rows, size_t n,
                        size_t row_bytes, int to_packed)
{
    const size_t be = dn_block_formats[type].elements, bb = dn_block_formats[type].bytes;
    const size_t chunks = n / DN_GROUP + (n % DN_GROUP != 0);
    const size_t padded = (rows + DN_REPACK_ROWS - 1) / DN_REPACK_ROWS * DN_REPACK_ROWS;
    for (size_t r = 0; r < padded; r++)
        for (size_t j = 0; j < chunks; j++) {
            const size_t left = n - j * DN_GROUP;
            const size_t here = (left < DN_GROUP ? left : DN_GROUP) / be * bb;
            uint8_t *const src = r < rows ? plain + r * row_bytes + j * DN_GROUP / be * bb : NULL;
            if (dn_packed8(type)) {
                copy_packed8(type, src, packed, row_bytes, r, j, (int)(here / bb), to_packed);
                continue;
            }
            uint8_t *p = (uint8_t *)(uintptr_t)dn_packed_chunk(packed, type, n, row_bytes, r, j);
            if (!src) {
                if (to_packed) memset(p, 0, here);
            } else if (to_packed) {
                memcpy(p, src, here);
            } else {
                memcpy(src, p, here);
            }
        }
}

dn_status dn_repack(dn_type type, const uint8_t *w, size_t rows, size_t n, void *dst, size_t bytes)
{
    size_t row_bytes, need;
    dn_status st = layout_args(type, rows, n, &row_bytes, &need);
    if (st != DN_OK) return st;
    if (!w || !dst || bytes < need) return DN_ERR_INVALID_ARGUMENT;
    copy_chunks(type, (uint8_t *)(uintptr_t)w, dst, rows, n, row_bytes, 1);
    return DN_OK;
}

dn_status dn_repack_unpack(dn_type type, const void *packed, size_t rows, size_t n, uint8_t *w,
                           size_t bytes)
{
    size_t row_bytes, need;
    dn_status st = layout_args(type, rows, n, &row_bytes, &need);
    if (st != DN_OK) return st;
    if (!packed || !w || bytes / row_bytes < rows) return DN_ERR_INVALID_ARGUMENT;
    copy_chunks(type, w, (uint8_t *)(uintptr_t)packed, rows, n, row_bytes, 0);
    return DN_OK;
}
