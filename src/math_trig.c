/* SPDX-License-Identifier: MIT */
/*
 * The references of sin, cos and sincos and the RoPE table builder
 * (docs/numerics.md section 21; src/math.c holds the
 * other transcendentals and the scalar table that names these).
 */
#include "math_kernels.h"
#include "math_tables.h"
#include "bits.h"
#include "math_scalar.h"

#include "decodenum/math.h"

#include <stdint.h>

/* ---- sin, cos ------------------------------------------------------------- */

/* |x| = j*pi/32 + hi + lo (mod 2*pi) with j in 0..63, |hi + lo| <= pi/64 and
   hi of at most 12 significant bits (so a 12-bit table value times hi is
   exact). */
typedef struct trig_arg {
    float hi, lo;
    uint32_t j;
} trig_arg;

#define T dn_trig_c

/* The reduction (Payne-Hanek, exact integer arithmetic) of a = |x| >= 2^-5,
   from F: a = M * 2^(b - 150) with M the 24-bit significand; t = a * 32/pi
   mod 64 is M * V * 2^-90 with V the 96-bit window of 1/pi for a's exponent
   b (dn_trig_invpi), and F = bits 32..95 of M*V is t to 2^-58 (the window's
   dropped fraction and the dropped bits are below 2^-58 together). Here:
   j = t rounded to the nearest integer mod 64 (ties up), f = t - j in
   [-1/2, 1/2) as the integer u - 2^57 with u < 2^58, split exactly into
   three binary32 values (24 + 24 + 10 bits); their sum is formed as s + e
   (Two-Sum), s cut to 12 bits, and r = (s_hi + t_lo) * pi/32 with
   s_hi * pi32_hi exact. */
static trig_arg trig_from_F(uint64_t F)
{
    uint64_t g = F + (UINT64_C(1) << 57);
    uint64_t u = g & ((UINT64_C(1) << 58) - 1u);
    float fa = mul((float)((int32_t)(u >> 34) - (1 << 23)), 0x1p-24f);
    float fb = mul((float)(uint32_t)((u >> 10) & 0xFFFFFFu), 0x1p-48f);
    float fc = mul((float)(uint32_t)(u & 1023u), 0x1p-58f);
    float s = add(fa, fb); /* Two-Sum: s + e = fa + fb exactly */
    float bb = sub(s, fa);
    float e = add(sub(fa, sub(s, bb)), sub(fb, bb));
    float s_hi = hi12(s);
    float t_lo = add(sub(s, s_hi), add(e, fc));
    float m = mul(s_hi, T.pi32_hi); /* exact: 12 x 12 bits */
    float h = hi12(m);
    float lo = add(sub(m, h), add(mul(s_hi, T.pi32_lo), mul(t_lo, T.pi32)));
    trig_arg r = {h, lo, (uint32_t)(g >> 58)};
    return r;
}

/* r = a with j = 0 (|a| < 2^-5), hi cut to 12 bits (dn_sin returns x
   itself below 2^-12, where r's tail could flush) */
static trig_arg trig_small(float a)
{
    float h = hi12(a);
    trig_arg r = {h, sub(a, h), 0};
    return r;
}

static trig_arg trig_reduce(float a)
{
    uint32_t ua = dn_bits(a);
    if (ua < 0x3D000000u) return trig_small(a);
    uint64_t M = (ua & DN_FRAC_BITS) | 0x800000u;
    const uint32_t *w = dn_trig_invpi[(ua >> 23) - 64u];
    return trig_from_F(((M * w[0]) << 32) + M * w[1] + ((M * w[2]) >> 32));
}

/* sin(j*pi/32 + r) = S + S (cos r - 1) + C sin r with S = sin(j pi/32) =
   S24 + S24_lo, C = cos(j pi/32) = C12 + C12_lo (12 bits + rest), r = hi +
   lo, sin r = r + sr3: C12*hi is exact and S24 + C12*hi = s1 + e1 exactly (Fast2Sum:
   |S24| >= sin(pi/32) > pi/64 >= |C12*hi| unless S24 = 0), everything else
   is below 2^-11 of the result and goes into one low sum; one last add. */
static float trig_eval(trig_arg a, uint32_t j)
{
    uint32_t jc = (j + 16u) & 63u;
    float S = dn_trig_s24[j], S_lo = dn_trig_s24_lo[j];
    float Ch = dn_trig_s12[jc], Cl = dn_trig_s12_lo[jc];
    float rr = add(a.hi, a.lo);
    float z = mul(rr, rr);
    float cr1 = mul(z, add(T.cos_c2, mul(T.cos_c4, z)));
    float sr3 = mul(mul(rr, z), add(T.sin_s3, mul(T.sin_s5, z)));
    float P = mul(Ch, a.hi);
    float s1 = add(S, P);
    float e1 = add(sub(S, s1), P);
    float low = add(add(S_lo, e1), mul(S, cr1));
    low = add(low, add(add(mul(Ch, a.lo), mul(Cl, add(rr, sr3))), mul(Ch, sr3)));
    return add(s1, low);
}

/* Measured: 0.5037 ULP at most (x = -0x1.584484p+25) on 2^22 inputs spread
   over every bit pattern; cos 0.5046 ULP (x = -0x1.0b5e92p+103); below 2^20
   radians 0.5024 and 0.5037 (sweep_trig --sample 22 [--below 20], MPFR). */
float dn_sin(float x)
{
    x = dn_flush(x);
    uint32_t u = dn_bits(x);
    if ((u & DN_EXP_BITS) == DN_EXP_BITS) return canon_nan(); /* NaN, +-inf */
    if ((u & ~DN_SIGN_BIT) < 0x39800000u) return x;           /* |x| < 2^-12: x, 0.33 ULP at most */
    trig_arg a = trig_reduce(dn_from_bits(u & ~DN_SIGN_BIT));
    return dn_from_bits(dn_bits(trig_eval(a, a.j)) ^ (u & DN_SIGN_BIT));
}

float dn_cos(float x)
{
    x = dn_flush(x);
    uint32_t u = dn_bits(x);
    if ((u & DN_EXP_BITS) == DN_EXP_BITS) return canon_nan();
    trig_arg a = trig_reduce(dn_from_bits(u & ~DN_SIGN_BIT));
    return trig_eval(a, (a.j + 16u) & 63u);
}

void dn_sincos(float x, float *s, float *c)
{
    x = dn_flush(x);
    uint32_t u = dn_bits(x);
    if ((u & DN_EXP_BITS) == DN_EXP_BITS) {
        *s = *c = canon_nan();
        return;
    }
    trig_arg a = trig_reduce(dn_from_bits(u & ~DN_SIGN_BIT));
    *s = (u & ~DN_SIGN_BIT) < 0x39800000u
             ? x
             : dn_from_bits(dn_bits(trig_eval(a, a.j)) ^ (u & DN_SIGN_BIT));
    *c = trig_eval(a, (a.j + 16u) & 63u);
}

#undef T

void dn_ref_sin_v(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_sin(x[i]);
}

void dn_ref_cos_v(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = dn_cos(x[i]);
}
void dn_ref_sincos_v(const float *x, float *s, float *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float xs = x[i];
        dn_sincos(xs, &s[i], &c[i]);
    }
}

/* ---- RoPE tables ---------------------------------------------------------- */

/* The inverse frequency of pair i of d rotary dimensions:
   freq_scale * theta^(-2i/d) as dn_fmul(dn_exp(dn_fmul(ln_theta, -RN(2i/d))),
   freq_scale), ln_theta = dn_ln(theta) and RN(2i/d) the correctly rounded
   quotient (IEEE division of two integers below 2^24: exact operands, one
   rounding, the same on every ISA). */
float dn_math_rope_freq(float ln_theta, size_t i, size_t d, float freq_scale)
{
    float q = (float)(2 * i) / (float)d; /* one correctly rounded division */
    return mul(dn_exp(mul(ln_theta, -q)), freq_scale);
}

void dn_math_rope_window(float aw, uint32_t k[3])
{
    uint32_t uw = dn_bits(aw);
    uint64_t M = (uw & DN_FRAC_BITS) | 0x800000u, m32 = 0xFFFFFFFFu;
    const uint32_t *v = dn_trig_invpi[(uw >> 23) - 64u];
    uint64_t p0 = M * v[0], p1 = M * v[1], p2 = M * v[2];
    uint64_t c = (p2 >> 32) + (p1 & m32);
    k[0] = (uint32_t)(p2 & m32);
    k[1] = (uint32_t)(c & m32);
    k[2] = (uint32_t)(((c >> 32) + (p1 >> 32) + p0) & m32);
}

void dn_math_rope_pairs(const float *w, size_t m, size_t lanes, float *aw, float *sign, uint32_t *k)
{
    for (size_t i = 0; i < lanes; i++) {
        uint32_t u = i < m ? dn_bits(dn_flush(w[i])) : 0u, K[3] = {0, 0, 0};
        sign[i] = dn_from_bits(u & DN_SIGN_BIT);
        aw[i] = dn_from_bits(u & ~DN_SIGN_BIT);
        if ((u & ~DN_SIGN_BIT) >= 64u << 23) dn_math_rope_window(aw[i], K);
        for (size_t t = 0; t < 3; t++) k[t * lanes + i] = K[t];
    }
}

/* |pos * w| for |pos| <= 2^24 and finite w, reduced: for a product below
   2^-5 the exact product as hi + lo (Dekker, mul_err) with j = 0; otherwise
   t = |pos| * |w| * 32/pi mod 64 in 96-bit fixed point, exactly: K = M * V
   mod 2^96 (w's significand times its exponent's window of 1/pi, as in
   trig_reduce), T = |pos| * K mod 2^96, and F = bits 32..95 of T, the word
   trig_reduce forms for pos = 1. *small gets the product when it is exact
   and below 2^-12 (sin is then that product, as dn_sin(x) is x), else 0. */
static trig_arg rope_reduce(uint32_t P, float w, float *small)
{
    float p = (float)P, aw = dn_from_bits(dn_bits(w) & ~DN_SIGN_BIT);
    float a_hi = mul(p, aw);
    *small = 0.0f;
    if (dn_bits(a_hi) < 0x3D000000u) {
        float a_lo = mul_err(p, aw, a_hi);
        float h = hi12(a_hi);
        trig_arg r = {h, add(sub(a_hi, h), a_lo), 0};
        if (dn_bits(a_hi) < 0x39800000u && a_lo == 0.0f) *small = a_hi;
        return r;
    }
    uint32_t K[3];
    dn_math_rope_window(aw, K);
    uint64_t k0 = K[0], k1 = K[1], k2 = K[2], m32 = 0xFFFFFFFFu;
    uint64_t c = ((P * k0) >> 32) + P * k1;
    uint64_t t1 = c & m32, t2 = ((c >> 32) + P * k2) & m32;
    return trig_from_F((t2 << 32) | t1);
}

void dn_ref_rope_table(const int32_t *pos, size_t npos, const float *w, size_t npairs, float *cos,
                       float *sin)
{
    for (size_t k = 0; k < npos; k++) {
        int32_t pk = pos[k];
        uint32_t P = pk < 0 ? 0u - (uint32_t)pk : (uint32_t)pk;
        for (size_t i = 0; i < npairs; i++) {
            float wi = dn_flush(w[i]), small;
            uint32_t sign = (dn_bits(wi) ^ (pk < 0 ? DN_SIGN_BIT : 0u)) & DN_SIGN_BIT;
            trig_arg a = rope_reduce(P, wi, &small);
            float s = small != 0.0f ? small : trig_eval(a, a.j);
            cos[k * npairs + i] = trig_eval(a, (a.j + 16u) & 63u);
            sin[k * npairs + i] = dn_from_bits(dn_bits(s) ^ sign);
        }
    }
}
