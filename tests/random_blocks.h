/* SPDX-License-Identifier: MIT */
/*
 * random_blocks.h: random quantized rows with finite scales, for the
 * cmocka suites of the products (block_scales.h says where the scales sit).
 */
#ifndef DN_TEST_RANDOM_BLOCKS_H
#define DN_TEST_RANDOM_BLOCKS_H

#include "block_scales.h"
#include "testutil.h"

/* The offsets of type t's scales (*dm = -1: one scale). */
static inline void block_scale_offsets(dn_type t, int *d, int *dm)
{
    *d = 0;
    *dm = -1;
    for (size_t i = 0; i < NBLOCK_SCALES; i++)
        if (block_scales[i].type == t) *d = block_scales[i].d_at, *dm = block_scales[i].b_at;
}

/* `blocks` random blocks of type t whose scales are finite binary16 values
   of either sign, exponents 2^-10..2^5; every other byte random. */
static inline void random_blocks(uint64_t *s, dn_type t, uint8_t *w, size_t blocks)
{
    size_t bb = dn_type_block_bytes(t);
    int d, dm;
    block_scale_offsets(t, &d, &dm);
    for (size_t i = 0; i < blocks * bb; i++) w[i] = (uint8_t)splitmix(s);
    for (size_t b = 0; b < blocks; b++) {
        put16(w + b * bb + d,
              (uint16_t)((splitmix(s) & 0x83FF) | (uint16_t)between(s, 5, 20) << 10));
        if (dm >= 0)
            put16(w + b * bb + dm,
                  (uint16_t)((splitmix(s) & 0x83FF) | (uint16_t)between(s, 5, 20) << 10));
    }
}

#endif
