/* SPDX-License-Identifier: MIT */
/*
 * The fp32 core's references (the definitions) and its scalar kernel table.
 *
 * The scalar operations: the engine's add, subtract and multiply (IEEE
 * binary32, round to nearest even, FTZ on operands and results, one NaN),
 * the TF32 multiplier, exact scaling by powers of two. The C operators
 * compute the IEEE result in the default environment (FLT_EVAL_METHOD 0, no
 * contraction: the build passes -ffp-contract=off); FTZ and the NaN rule are
 * applied explicitly around them, so these functions mean the same thing on
 * every CPU.
 *
 * The conversions: binary16 and bfloat16, narrowing to nearest with ties to
 * even, widening exactly; both read f32 through FTZ and produce the engine's
 * one NaN of each format.
 *
 * The reductions: the pairwise tree, lane sums and dot products, the largest
 * value, the largest magnitude, the index of the largest. The public array
 * forms (src/fp32_api.c) dispatch to kernels that reproduce these.
 */
#include "fp32_kernels.h"
#include "bits.h"
#include "wide.h"

#include <math.h>
#include <stdint.h>

/* ---- scalar operations ------------------------------------------------------ */

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

/* ---- conversions ----------------------------------------------------------- */

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

/* On the bits, not through dn_ftz: on i386 a float return value passes
   through the x87, which quiets a signalling NaN (docs/numerics.md §19). */
void dn_ref_ftz_v(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        if ((u & DN_EXP_BITS) == 0) u &= DN_SIGN_BIT;
        memcpy(&y[i], &u, 4);
    }
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

/* ---- reductions ------------------------------------------------------------ */

float dn_tree(const float *x, size_t n)
{
    if (n == 0 || !x) return 0.0f;
    if (n == 1) return dn_result(dn_flush(x[0]));
    /* Level by level, adjacent pairs with an odd last element carried up, is
       the same fold as splitting at the largest power of two below n. */
    size_t half = 1;
    while (half * 2 < n) half *= 2;
    return dn_fadd(dn_tree(x, half), dn_tree(x + half, n - half));
}

float dn_ref_fsum(const float *x, size_t n)
{
    float lane[DN_LANES] = {0};
    for (size_t i = 0; i < n; i++) lane[i % DN_LANES] = dn_fadd(lane[i % DN_LANES], x[i]);
    return dn_tree(lane, DN_LANES);
}

float dn_ref_fdot(const float *a, const float *b, size_t n)
{
    float lane[DN_LANES] = {0};
    for (size_t i = 0; i < n; i++)
        lane[i % DN_LANES] = dn_fadd(lane[i % DN_LANES], dn_fmul(a[i], b[i]));
    return dn_tree(lane, DN_LANES);
}

float dn_ref_fdot_tf32(const float *a, const float *b, size_t n)
{
    float lane[DN_LANES] = {0};
    for (size_t i = 0; i < n; i++)
        lane[i % DN_LANES] = dn_fadd(lane[i % DN_LANES], dn_fmul_tf32(a[i], b[i]));
    return dn_tree(lane, DN_LANES);
}

float dn_ref_fmax(const float *x, size_t n)
{
    float best = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = dn_flush(x[i]);
        if (v > best) best = v; /* false for a NaN */
    }
    return best == 0.0f ? 0.0f : best;
}

float dn_ref_absmax(const float *x, size_t n)
{
    float best = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = dn_from_bits(dn_bits(dn_flush(x[i])) & 0x7FFFFFFFu);
        if (v > best) best = v;
    }
    return best;
}

size_t dn_ref_argmax(const float *x, size_t n)
{
    size_t at = 0;
    int found = 0;
    float best = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = dn_flush(x[i]);
        if (v != v) continue;
        if (!found || v > best) {
            best = v;
            at = i;
            found = 1;
        }
    }
    return at;
}

size_t dn_argmax_by_chunks(const float *x, size_t n, dn_argmax_chunk_fn chunk)
{
    const size_t span = (size_t)1 << 30;
    size_t where = SIZE_MAX;
    float top = -INFINITY;
    for (size_t s = 0; s < n; s += span) {
        float v;
        size_t at = chunk(x + s, n - s < span ? n - s : span, &v);
        if (at != SIZE_MAX && (where == SIZE_MAX || v > top)) {
            top = v;
            where = s + at;
        }
    }
    return where == SIZE_MAX ? dn_ref_argmax(x, n) : where;
}

/* ---- the scalar table: the references ---------------------------------------- */

const dn_fp32_kernels dn_fp32_scalar = {
    .ftz_v = dn_ref_ftz_v,
    .f32_to_f16_v = dn_ref_f32_to_f16_v,
    .f16_to_f32_v = dn_ref_f16_to_f32_v,
    .f32_to_bf16_v = dn_ref_f32_to_bf16_v,
    .bf16_to_f32_v = dn_ref_bf16_to_f32_v,
    .fsum = dn_ref_fsum,
    .fdot = dn_ref_fdot,
    .fdot_tf32 = dn_ref_fdot_tf32,
    .fmax = dn_ref_fmax,
    .absmax = dn_ref_absmax,
    .argmax = dn_ref_argmax,
};
