/* SPDX-License-Identifier: MIT */
/*
 * The repacked weight layout (decodenum/repack.h): its size and the copies
 * between it and the plain layout. The reference product on it is the plain
 * reference's loop reading every piece's bytes where the layout keeps them
 * (dn_ref_rows_packed, src/dot.c), so its bits are the plain product's by
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
            uint8_t *p = (uint8_t *)dn_packed_chunk(packed, type, n, row_bytes, r, j);
            if (r >= rows) {
                if (to_packed) memset(p, 0, here);
            } else if (to_packed) {
                memcpy(p, plain + r * row_bytes + j * DN_GROUP / be * bb, here);
            } else {
                memcpy(plain + r * row_bytes + j * DN_GROUP / be * bb, p, here);
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
