/* SPDX-License-Identifier: MIT */
/*
 * math_kernels.h: the transcendentals module's kernel table.
 *
 * One table per ISA, registered in src/dispatch.c. dn_math_scalar holds the
 * references (src/math.c, the definitions); dn_math_avx2
 * (src/x86/math_avx2.c), dn_math_avx512 (src/x86/math_avx512.c) and
 * dn_math_neon (src/neon/math_neon.c) hold kernels that reproduce them bit
 * for bit. An entry an ISA leaves NULL runs the ISA
 * below it. n = 0 is valid for every entry; arguments are already validated
 * by the public functions (src/math_api.c).
 */
#ifndef DN_MATH_KERNELS_H
#define DN_MATH_KERNELS_H

#include "decodenum/math.h"

typedef void (*dn_unary_kernel)(const float *x, float *y, size_t n);

typedef struct dn_math_kernels {
    dn_unary_kernel exp_v, ln_v, ln1p_v, recip_v, rsqrt_v, sigmoid_v, silu_v, softplus_v;
    /* y = softmax(x) (y may be x); returns the sum s the reciprocal was taken of */
    float (*softmax)(const float *x, float *y, size_t n);
    void (*rmsnorm)(const float *x, const float *w, float eps, float *y, size_t n);
    void (*l2norm)(const float *x, float eps, float *y, size_t n);
    /* neox: 0 interleaved, 1 NEOX; 2*npairs <= n */
    void (*rope)(const float *x, size_t n, const float *cos, const float *sin, size_t npairs,
                 int neox, float *y);
    /* n a power of two (or 0); inverse: then times 2^-log2(n) */
    void (*hadamard)(float *x, size_t n, int inverse);
    /* tanh, gelu_tanh, gelu; rms0 (weights 1 + w); rms_gated (silu: 0 sigmoid, 1 silu;
       y may be x or gate) */
    dn_unary_kernel tanh_v, gelu_tanh_v, gelu_v;
    void (*rms0)(const float *x, const float *w, float eps, float *y, size_t n);
    void (*rms_gated)(const float *x, const float *gate, const float *w, float eps, int silu,
                      float *y, size_t n);
    /* sin, cos; sincos_v writes s[i] = sin(x[i]), c[i] = cos(x[i]) (s, c may
       not overlap each other; either may be x) */
    dn_unary_kernel sin_v, cos_v;
    void (*sincos_v)(const float *x, float *s, float *c, size_t n);
    /* dn_rope_table's arguments, validated: cos[k npairs + i], sin[...] of
       pos[k] * w[i] (cos and sin overlap neither each other nor the inputs) */
    void (*rope_table)(const int32_t *pos, size_t npos, const float *w, size_t npairs, float *cos,
                       float *sin);
} dn_math_kernels;

/* The references. */
void dn_ref_exp_v(const float *x, float *y, size_t n);
void dn_ref_ln_v(const float *x, float *y, size_t n);
void dn_ref_ln1p_v(const float *x, float *y, size_t n);
void dn_ref_recip_v(const float *x, float *y, size_t n);
void dn_ref_rsqrt_v(const float *x, float *y, size_t n);
void dn_ref_sigmoid_v(const float *x, float *y, size_t n);
void dn_ref_silu_v(const float *x, float *y, size_t n);
void dn_ref_softplus_v(const float *x, float *y, size_t n);
float dn_ref_softmax(const float *x, float *y, size_t n);
void dn_ref_rmsnorm(const float *x, const float *w, float eps, float *y, size_t n);
void dn_ref_l2norm(const float *x, float eps, float *y, size_t n);
void dn_ref_rope(const float *x, size_t n, const float *cos, const float *sin, size_t npairs,
                 int neox, float *y);
void dn_ref_hadamard(float *x, size_t n, int inverse);
void dn_ref_tanh_v(const float *x, float *y, size_t n);
void dn_ref_gelu_tanh_v(const float *x, float *y, size_t n);
void dn_ref_gelu_v(const float *x, float *y, size_t n);
void dn_ref_rms0(const float *x, const float *w, float eps, float *y, size_t n);
void dn_ref_rms_gated(const float *x, const float *gate, const float *w, float eps, int silu,
                      float *y, size_t n);
void dn_ref_sin_v(const float *x, float *y, size_t n);
void dn_ref_cos_v(const float *x, float *y, size_t n);
void dn_ref_sincos_v(const float *x, float *s, float *c, size_t n);
/* RoPE: one inverse frequency (one code path on every ISA); the pieces of
   the cos/sin table's reduction the reference and the kernels share; the
   table's reference (the rope_table slot) */
float dn_math_rope_freq(float ln_theta, size_t i, size_t d, float freq_scale);
/* K = M V mod 2^96 for |w| = M 2^(b - 150) (aw = |w|, normal, b >= 64) and V
   = dn_trig_invpi[b - 64]: |w| 32/pi mod 64 in 96-bit fixed point, k[0] the
   low word. The RoPE table's reduction of pos w is pos K mod 2^96. */
void dn_math_rope_window(float aw, uint32_t k[3]);
/* The pairs' side of the RoPE table's reduction as a kernel of `lanes`
   lanes loads it (NEON's; the AVX2 and AVX-512 kernels form K in the
   vector), for the m <= lanes frequencies w[0..m): lane i holds w[i]
   flushed as its magnitude aw[i] and sign bit sign[i], and K's words in
   k[i], k[lanes + i], k[2 lanes + i] (dn_math_rope_window, low word first;
   0 where |w| < 2^-63: every product with such a w is below 2^-5); lanes
   from m on hold +0 and K = 0. */
void dn_math_rope_pairs(const float *w, size_t m, size_t lanes, float *aw, float *sign,
                        uint32_t *k);
void dn_ref_rope_table(const int32_t *pos, size_t npos, const float *w, size_t npairs, float *cos,
                       float *sin);

/* The scalar steps the norms' kernels share with the references:
   rsqrt(ss * recip(n) + eps) and rsqrt(ss + eps). */
float dn_math_rms_scale(float ss, size_t n, float eps);
float dn_math_l2_scale(float ss, float eps);

extern const dn_math_kernels dn_math_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_math_kernels dn_math_avx2;
#endif
#if defined(DN_HAVE_AVX512)
extern const dn_math_kernels dn_math_avx512;
#endif
#if defined(DN_HAVE_NEON)
extern const dn_math_kernels dn_math_neon;
#endif

#endif
