/* SPDX-License-Identifier: MIT */
/*
 * The fp32 core's dispatched entry points: argument checks, then the active
 * ISA's kernel, which reproduces the reference (src/fp32.c) bit for bit.
 */
#include "dispatch.h"
#include "bits.h"

/* The array conversions share one rule: NULL is valid only with n = 0. */
dn_status dn_ftz_v(const float *x, float *y, size_t n)
{
    if (n && (!x || !y)) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->fp32->ftz_v(x, y, n);
    return DN_OK;
}

dn_status dn_f32_to_f16_v(const float *x, uint16_t *y, size_t n)
{
    if (n && (!x || !y)) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->fp32->f32_to_f16_v(x, y, n);
    return DN_OK;
}

dn_status dn_f16_to_f32_v(const uint16_t *x, float *y, size_t n)
{
    if (n && (!x || !y)) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->fp32->f16_to_f32_v(x, y, n);
    return DN_OK;
}

dn_status dn_f32_to_bf16_v(const float *x, uint16_t *y, size_t n)
{
    if (n && (!x || !y)) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->fp32->f32_to_bf16_v(x, y, n);
    return DN_OK;
}

dn_status dn_bf16_to_f32_v(const uint16_t *x, float *y, size_t n)
{
    if (n && (!x || !y)) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->fp32->bf16_to_f32_v(x, y, n);
    return DN_OK;
}

float dn_fsum(const float *x, size_t n)
{
    if (!x && n) return dn_nan();
    return dn_kernels_active()->fp32->fsum(x, n);
}

float dn_fdot(const float *a, const float *b, size_t n)
{
    if ((!a || !b) && n) return dn_nan();
    return dn_kernels_active()->fp32->fdot(a, b, n);
}

float dn_fdot_tf32(const float *a, const float *b, size_t n)
{
    if ((!a || !b) && n) return dn_nan();
    return dn_kernels_active()->fp32->fdot_tf32(a, b, n);
}

dn_status dn_fdot_unit(dn_fpu unit, const float *a, const float *b, size_t n, float *out)
{
    if (!out || ((!a || !b) && n)) return DN_ERR_INVALID_ARGUMENT;
    switch (unit) {
    case DN_FPU_VECTOR: *out = dn_kernels_active()->fp32->fdot(a, b, n); return DN_OK;
    case DN_FPU_TF32: *out = dn_kernels_active()->fp32->fdot_tf32(a, b, n); return DN_OK;
    }
    return DN_ERR_INVALID_ARGUMENT;
}

float dn_fmax(const float *x, size_t n)
{
    if (!x && n) return dn_nan();
    return dn_kernels_active()->fp32->fmax(x, n);
}

float dn_absmax(const float *x, size_t n)
{
    if (!x && n) return dn_nan();
    return dn_kernels_active()->fp32->absmax(x, n);
}

size_t dn_argmax(const float *x, size_t n)
{
    if (!x) return 0;
    return dn_kernels_active()->fp32->argmax(x, n);
}
