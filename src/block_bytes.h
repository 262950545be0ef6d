/*
 * block_bytes.h: reading ggml's block bytes, shared by the block readers
 * (src/blocks.c) and the lane's weight image (src/lane.c): little-endian
 * loads on any host, binary16 scales as exact integers, IQ4's levels.
 */
#ifndef DN_BLOCK_BYTES_H
#define DN_BLOCK_BYTES_H

#include <stdint.h>

#include "decodenum/blocks.h"

static inline uint16_t load_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static inline uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The binary16 with bits h as sig * 2^exp, exactly; 0 when it is infinite or
   NaN. A normal value (exponent field E in 1..30, fraction f) is
   (1024 + f) * 2^(E - 25); a subnormal one f * 2^-24; a zero of either sign
   is the canonical zero sig 0, exp 0. The sign goes to sig. */
static inline int scale_f16(uint16_t h, dn_scale *s)
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

static const dn_scale no_scale = {0, 0};

/* IQ4_NL's and IQ4_XS's 16 non-linear levels (ggml's kvalues_iq4nl). */
static const int8_t iq4_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                      1,    13,   25,  38,  53,  69,  89,  113};

#endif
