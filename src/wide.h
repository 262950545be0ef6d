/* SPDX-License-Identifier: MIT */
/* wide.h: the 256-bit two's-complement integer the exact sums accumulate in. */
#ifndef DN_WIDE_H
#define DN_WIDE_H

#include <stdint.h>

#define DN_WIDE_LIMBS 4

typedef struct dn_wide {
    uint64_t limb[DN_WIDE_LIMBS]; /* little-endian limbs, two's complement */
} dn_wide;

void dn_wide_set_i64(dn_wide *w, int64_t v);
/* w += v * 2^shift, 0 <= shift <= 128 + 63 (the product must fit 255 bits). */
void dn_wide_add_shifted(dn_wide *w, int64_t v, unsigned shift);
/* w * 2^e rounded once to f32, nearest even, a denormal result flushed to a
   zero of its sign, past the top an infinity; zero gives +0. */
float dn_wide_to_f32(const dn_wide *w, int64_t e);

#endif
