/*
 * binary16 and bfloat16 conversions: the references and the dispatched array
 * forms. Narrowing rounds to nearest with ties to even; widening is exact.
 * Both read f32 through FTZ and produce the engine's one NaN of each format.
 */
#include "fp32_kernels.h"
#include "bits.h"

uint16_t dn_f32_to_f16(float x)
{
    uint32_t u = dn_bits(dn_flush(x));
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > DN_EXP_BITS) return DN_F16_NAN_BITS;
    if (a >= 0x477FF000u) return sign | 0x7C00u; /* >= 65520 rounds past 65504 */
    if (a >= 0x38800000u) {
        /* Normal binary16 (>= 2^-14): rebias the exponent by 127 - 15 and
           round the 23-bit fraction to 10 bits; a carry raises the exponent. */
        return sign | (uint16_t)dn_rne_shift(a - (112u << 23), 13);
    }
    if (a < 0x00800000u) return sign; /* zero (denormals were flushed) */
    /* Subnormal binary16: |x| = M * 2^(E-150) in units of 2^-24 is
       M * 2^(E-126), so the code is M shifted right by 126 - E, rounded. */
    uint32_t m = (a & DN_FRAC_BITS) | 0x00800000u;
    unsigned shift = 126u - (a >> 23);
    return sign | (uint16_t)dn_rne_shift(m, shift);
}

float dn_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, f = h & 0x3FFu;
    if (e == 0x1F) return f ? dn_nan() : dn_from_bits(sign | DN_EXP_BITS);
    if (e != 0) return dn_from_bits(sign | ((e + 112u) << 23) | (f << 13));
    if (f == 0) return dn_from_bits(sign);
    /* Subnormal: f * 2^-24, normal in binary32; the product is exact. */
    float mag = (float)f * 0x1p-24f;
    return dn_from_bits(sign | dn_bits(mag));
}

uint16_t dn_f32_to_bf16(float x)
{
    uint32_t u = dn_bits(dn_flush(x));
    if (dn_is_nan_bits(u)) return DN_BF16_NAN_BITS;
    uint32_t sign = u & DN_SIGN_BIT;
    /* Rounding the magnitude carries into the exponent, up to infinity. */
    return (uint16_t)((sign | (uint32_t)dn_rne_shift(u & 0x7FFFFFFFu, 16) << 16) >> 16);
}

float dn_bf16_to_f32(uint16_t b) { return dn_result(dn_from_bits((uint32_t)b << 16)); }

void dn_ref_ftz_v(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_ftz(x[i]);
}

void dn_ref_f32_to_f16_v(const float *x, uint16_t *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_f32_to_f16(x[i]);
}

void dn_ref_f16_to_f32_v(const uint16_t *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_f16_to_f32(x[i]);
}

void dn_ref_f32_to_bf16_v(const float *x, uint16_t *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_f32_to_bf16(x[i]);
}

void dn_ref_bf16_to_f32_v(const uint16_t *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_bf16_to_f32(x[i]);
}

#define DN_ARRAY_ENTRY(name, tin, tout)                                   \
    dn_status dn_##name(const tin *x, tout *y, size_t n)                  \
    {                                                                     \
        if (n && (!x || !y)) return DN_ERR_INVALID_ARGUMENT;              \
        dn_fp32_active()->name(x, y, n);                                  \
        return DN_OK;                                                     \
    }

DN_ARRAY_ENTRY(ftz_v, float, float)
DN_ARRAY_ENTRY(f32_to_f16_v, float, uint16_t)
DN_ARRAY_ENTRY(f16_to_f32_v, uint16_t, float)
DN_ARRAY_ENTRY(f32_to_bf16_v, float, uint16_t)
DN_ARRAY_ENTRY(bf16_to_f32_v, uint16_t, float)
