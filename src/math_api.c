/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals' public entry points: argument checks, then the active
 * ISA's kernel, which reproduces the reference (src/math.c) bit for bit.
 */
#include "dispatch.h"
#include "math_kernels.h"
#include "sizes.h"
#include "bits.h"

/* The unary array forms share one rule: NULL is valid only with n = 0. */
static dn_status unary(dn_unary_kernel kernel, const float *x, float *y, size_t n)
{
    if (n == 0) return DN_OK;
    if (!x || !y) return DN_ERR_INVALID_ARGUMENT;
    kernel(x, y, n);
    return DN_OK;
}

/* The eight unary array forms, one-line forwards to unary(). */
#define DN_UNARY_ENTRY(name)                                        \
    dn_status dn_##name##_v(const float *x, float *y, size_t n)     \
    {                                                               \
        return unary(dn_kernels_active()->math->name##_v, x, y, n); \
    }
DN_UNARY_ENTRY(exp)
DN_UNARY_ENTRY(ln)
DN_UNARY_ENTRY(ln1p)
DN_UNARY_ENTRY(recip)
DN_UNARY_ENTRY(rsqrt)
DN_UNARY_ENTRY(sigmoid)
DN_UNARY_ENTRY(silu)
DN_UNARY_ENTRY(softplus)

dn_status dn_softmax(const float *x, float *y, size_t n)
{
    if (n == 0) return DN_OK;
    if (!x || !y) return DN_ERR_INVALID_ARGUMENT;
    float s = dn_kernels_active()->math->softmax(x, y, n);
    return s != s ? DN_ERR_NON_FINITE : DN_OK;
}

dn_status dn_rmsnorm(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return DN_OK;
    if (!x || !w || !y) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->math->rmsnorm(x, w, eps, y, n);
    return DN_OK;
}

dn_status dn_l2norm(const float *x, float eps, float *y, size_t n)
{
    if (n == 0) return DN_OK;
    if (!x || !y) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->math->l2norm(x, eps, y, n);
    return DN_OK;
}

dn_status dn_rope(const float *x, size_t n, const float *cos, const float *sin, size_t npairs,
                  dn_rope_mode mode, float *y)
{
    if (mode != DN_ROPE_INTERLEAVED && mode != DN_ROPE_NEOX) return DN_ERR_INVALID_ARGUMENT;
    if (npairs > n / 2) return DN_ERR_INVALID_ARGUMENT;
    if (n > 0 && (!x || !y)) return DN_ERR_INVALID_ARGUMENT;
    if (npairs > 0 && (!cos || !sin)) return DN_ERR_INVALID_ARGUMENT;
    if (n == 0) return DN_OK;
    dn_kernels_active()->math->rope(x, n, cos, sin, npairs, mode == DN_ROPE_NEOX, y);
    return DN_OK;
}

static dn_status hadamard_api(float *x, size_t n, int inverse)
{
    if (n == 0) return DN_OK;
    if (!x || (n & (n - 1)) != 0) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->math->hadamard(x, n, inverse);
    return DN_OK;
}

dn_status dn_hadamard(float *x, size_t n) { return hadamard_api(x, n, 0); }

dn_status dn_hadamard_inverse(float *x, size_t n) { return hadamard_api(x, n, 1); }

/* ---- activations and the zero-centred and gated norms -------------------- */

DN_UNARY_ENTRY(tanh)
DN_UNARY_ENTRY(gelu_tanh)
DN_UNARY_ENTRY(gelu)

dn_status dn_rms0(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return DN_OK;
    if (!x || !w || !y) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->math->rms0(x, w, eps, y, n);
    return DN_OK;
}

dn_status dn_rms_gated(const float *x, const float *gate, const float *w, float eps, dn_gate kind,
                       float *y, size_t n)
{
    if (kind != DN_GATE_SIGMOID && kind != DN_GATE_SILU) return DN_ERR_INVALID_ARGUMENT;
    if (n == 0) return DN_OK;
    if (!x || !gate || !w || !y) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->math->rms_gated(x, gate, w, eps, kind == DN_GATE_SILU, y, n);
    return DN_OK;
}

/* ---- sin, cos ------------------------------------------------------------- */

DN_UNARY_ENTRY(sin)
DN_UNARY_ENTRY(cos)

dn_status dn_sincos_v(const float *x, float *s, float *c, size_t n)
{
    if (n == 0) return DN_OK;
    if (!x || !s || !c || s == c) return DN_ERR_INVALID_ARGUMENT;
    dn_kernels_active()->math->sincos_v(x, s, c, n);
    return DN_OK;
}

/* ---- RoPE tables ---------------------------------------------------------- */

static int finite_positive(float v) { return v == v && v > 0.0f && v <= 0x1.fffffep127f; }

dn_status dn_rope_freqs(float theta, size_t rot_dims, float freq_scale, float *w)
{
    if (!w || rot_dims == 0 || rot_dims % 2 != 0 || rot_dims > ((size_t)1 << 24))
        return DN_ERR_INVALID_ARGUMENT;
    theta = dn_flush(theta);
    freq_scale = dn_flush(freq_scale);
    if (!finite_positive(theta) || !finite_positive(freq_scale)) return DN_ERR_NON_FINITE;
    float ln_theta = dn_ln(theta);
    for (size_t i = 0; i < rot_dims / 2; i++)
        w[i] = dn_math_rope_freq(ln_theta, i, rot_dims, freq_scale);
    return DN_OK;
}

dn_status dn_rope_table(const int32_t *pos, size_t npos, const float *w, size_t npairs, float *cos,
                        float *sin)
{
    size_t total;
    if (!dn_size_mul(npos, npairs, &total)) return DN_ERR_INVALID_ARGUMENT;
    if (total == 0) return DN_OK;
    if (!pos || !w || !cos || !sin || cos == sin) return DN_ERR_INVALID_ARGUMENT;
    for (size_t k = 0; k < npos; k++)
        if (pos[k] > (1 << 24) || pos[k] < -(1 << 24)) return DN_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < npairs; i++)
        if ((dn_bits(w[i]) & DN_EXP_BITS) == DN_EXP_BITS) return DN_ERR_NON_FINITE;
    dn_kernels_active()->math->rope_table(pos, npos, w, npairs, cos, sin);
    return DN_OK;
}
