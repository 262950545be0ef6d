/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the block readers: arbitrary bytes read as a row of
 * every format dn_read_row knows. The first input byte picks the format, the
 * rest are its blocks (whole blocks only, copied to a buffer of exactly that
 * size so AddressSanitizer sees any read past the row).
 *
 * It aborts when a reader does anything the contract forbids: a status other
 * than DN_OK or DN_ERR_UNREADABLE_BLOCK, an unreadable verdict that does not
 * name the first block with an infinite or NaN scale (or a readable one for
 * a row that has such a block), a coefficient or offset past DN_COEF_BOUND,
 * a scale not in canonical form, segments that do not tile the row.
 *
 * Build and run: see tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum/blocks.h"

#include "../block_scales.h"
#include "fuzz_input.h"

static int finite_at(const uint8_t *p) { return (p[1] & 0x7C) != 0x7C; }

static void check_scale(dn_scale s)
{
    CHECK(s.sig >= -2047 && s.sig <= 2047);
    if (s.sig == 0) {
        CHECK(s.exp == 0);
    } else {
        CHECK(s.exp >= -24 && s.exp <= 5);
        CHECK(s.sig <= -1024 || s.sig >= 1024 || s.exp == -24);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    dn_type type = block_scales[data[0] % NBLOCK_SCALES].type;
    int d_at = block_scales[data[0] % NBLOCK_SCALES].d_at,
        b_at = block_scales[data[0] % NBLOCK_SCALES].b_at;
    CHECK(dn_reads(type));
    size_t be = dn_type_block_elements(type), bb = dn_type_block_bytes(type);
    size_t blocks = (size - 1) / bb, n = blocks * be;

    uint8_t *bytes = malloc(blocks * bb + 1);
    int16_t *coef = malloc(n * sizeof *coef + 1), *offs = malloc(n * sizeof *offs + 1);
    dn_segment *segs = malloc(blocks * sizeof *segs + 1);
    CHECK(bytes && coef && offs && segs);
    memcpy(bytes, data + 1, blocks * bb);
    dn_coded_row row = {coef, offs, segs, n, 0};

    size_t first_bad = SIZE_MAX;
    for (size_t i = 0; i < blocks && first_bad == SIZE_MAX; i++) {
        const uint8_t *blk = bytes + i * bb;
        if (!finite_at(blk + d_at) || (b_at >= 0 && !finite_at(blk + b_at))) first_bad = i;
    }

    size_t bad = SIZE_MAX;
    dn_status st = dn_read_row(type, blocks ? bytes : NULL, n, &row, &bad);
    if (first_bad != SIZE_MAX) {
        CHECK(st == DN_ERR_UNREADABLE_BLOCK && bad == first_bad);
    } else {
        CHECK(st == DN_OK && bad == SIZE_MAX && row.nsegments == blocks);
        for (size_t i = 0; i < blocks; i++) {
            CHECK(segs[i].first == i * be && segs[i].count == be);
            check_scale(segs[i].a);
            check_scale(segs[i].b);
            if (b_at < 0) CHECK(segs[i].b.sig == 0);
        }
        for (size_t e = 0; e < n; e++) {
            CHECK(coef[e] >= -DN_COEF_BOUND && coef[e] <= DN_COEF_BOUND);
            CHECK(offs[e] >= -DN_COEF_BOUND && offs[e] <= DN_COEF_BOUND);
        }
    }
    free(bytes);
    free(coef);
    free(offs);
    free(segs);
    return 0;
}
