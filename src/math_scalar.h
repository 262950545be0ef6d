/* SPDX-License-Identifier: MIT */
/*
 * math_scalar.h: the engine's scalar operations as the transcendentals'
 * references write them (src/math.c, src/math_trig.c): add, sub, mul with
 * FTZ on operands and result and the one NaN; the 12-bit head of a value;
 * the error of a product from its 12-bit halves.
 */
#ifndef DN_MATH_SCALAR_H
#define DN_MATH_SCALAR_H

#include "bits.h"
#include "decodenum/fp32.h"

static inline float add(float a, float b) { return dn_result(dn_flush(a) + dn_flush(b)); }
static inline float sub(float a, float b) { return dn_result(dn_flush(a) - dn_flush(b)); }
static inline float mul(float a, float b) { return dn_result(dn_flush(a) * dn_flush(b)); }

/* v with its significand cut to 12 bits (a product of two such is exact). */
static inline float hi12(float v) { return dn_from_bits(dn_bits(v) & 0xFFFFF000u); }

static inline float canon_nan(void) { return dn_from_bits(DN_NAN_BITS); }

/* The error of p = mul(a, b), from 12-bit halves (Dekker's product; exact
   while no partial product flushes), the four products added in this order. */
static inline float mul_err(float a, float b, float p)
{
    float a_hi = hi12(a), a_lo = sub(a, a_hi);
    float b_hi = hi12(b), b_lo = sub(b, b_hi);
    return add(add(add(sub(mul(a_hi, b_hi), p), mul(a_hi, b_lo)), mul(a_lo, b_hi)),
               mul(a_lo, b_lo));
}

#endif
