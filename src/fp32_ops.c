/*
 * The scalar operations of the fp32 core: the engine's add, subtract and
 * multiply (IEEE binary32, round to nearest even, FTZ on operands and results,
 * one NaN), the TF32 multiplier, exact scaling by powers of two.
 *
 * The C operators compute the IEEE result in the default environment
 * (FLT_EVAL_METHOD 0, no contraction: the build passes -ffp-contract=off);
 * FTZ and the NaN rule are applied explicitly around them, so these
 * functions mean the same thing on every CPU.
 */
#include "decodenum/fp32.h"
#include "bits.h"
#include "wide.h"

float dn_nan(void) { return dn_from_bits(DN_NAN_BITS); }

float dn_ftz(float x) { return dn_flush(x); }

float dn_fadd(float a, float b) { return dn_result(dn_flush(a) + dn_flush(b)); }

float dn_fsub(float a, float b) { return dn_result(dn_flush(a) - dn_flush(b)); }

float dn_fmul(float a, float b) { return dn_result(dn_flush(a) * dn_flush(b)); }

/* Round to 10 fraction bits: add just under half of the dropped place, plus
   one when the kept part is odd, and drop 13 bits. A carry out of the
   fraction raises the exponent, which is the correct rounding, up to +inf. */
float dn_tf32(float x)
{
    uint32_t u = dn_bits(dn_flush(x));
    if (dn_is_nan_bits(u)) return dn_nan();
    u += 0x0FFFu + ((u >> 13) & 1u);
    return dn_from_bits(u & ~0x1FFFu);
}

float dn_fmul_tf32(float a, float b) { return dn_fmul(dn_tf32(a), dn_tf32(b)); }

float dn_ldexp(float x, int32_t n)
{
    uint32_t u = dn_bits(dn_flush(x));
    uint32_t biased = (u >> 23) & 0xFFu;
    if (dn_is_nan_bits(u)) return dn_nan();
    if (biased == 0 || biased == 0xFF) return dn_from_bits(u); /* ±0, ±inf */
    int64_t e = (int64_t)biased + n;
    if (e >= 0xFF) return dn_from_bits((u & DN_SIGN_BIT) | DN_EXP_BITS);
    if (e <= 0) return dn_from_bits(u & DN_SIGN_BIT);
    return dn_from_bits((u & ~DN_EXP_BITS) | ((uint32_t)e << 23));
}

float dn_scaled_to_f32(int64_t v, int32_t e)
{
    dn_wide w;
    dn_wide_set_i64(&w, v);
    return dn_wide_to_f32(&w, e);
}
