/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals and the vector operations built on them: the scalar
 * references, which are the definitions (docs/numerics.md section 8), and
 * the scalar kernel table. The public entry points are in src/math_api.c.
 *
 * Every value below is computed by the engine's add, subtract and multiply
 * (add, sub, mul: binary32, nearest even, FTZ on operands and results, the
 * one NaN) and by exact integer and bit operations on binary32 words, over
 * the tables of src/math_tables.c. Nothing else: no FMA, no division, no
 * libm. Each comment says why a step is exact where that matters.
 */
#include "math_kernels.h"
#include "math_tables.h"
#include "fp32_kernels.h"
#include "bits.h"
#include "math_scalar.h"

#include <math.h>

/* ---- the engine's operations, inline (dn_fadd, dn_fsub, dn_fmul) ------- */

/* Arithmetic shift right (GCC, Clang and MSVC sign-extend signed >>). */
static inline int32_t asr(int32_t v, int s) { return v >> s; }

/* 2^k as a binary32, -126 <= k <= 127. */
static inline float pow2i(int32_t k) { return dn_from_bits((uint32_t)(k + 127) << 23); }

/* y * 2^k for |k| <= 252, as two engine multiplies by 2^floor(k/2) and
   2^(k - floor(k/2)): the first is exact for the y in [1/2, 4) this is used
   on, the second rounds once, overflows to infinity, flushes below 2^-126. */
static inline float scale(float y, int32_t k)
{
    int32_t k1 = asr(k, 1);
    return mul(mul(y, pow2i(k1)), pow2i(k - k1));
}

/* 1 - (a_hi + a_lo)(b_hi + b_lo) from the four products of 12-bit halves,
   each exact, subtracted in this order (recip's and rsqrt's residual). */
static inline float one_minus_split(float a_hi, float a_lo, float b_hi, float b_lo)
{
    float r = sub(1.0f, mul(a_hi, b_hi));
    r = sub(r, mul(a_hi, b_lo));
    r = sub(r, mul(a_lo, b_hi));
    return sub(r, mul(a_lo, b_lo));
}

#define C dn_math_c

/* ---- exp ------------------------------------------------------------------ */

/* e^x = (hi + lo) * 2^k for |x| <= 95: hi = T*e^r rounded (in [0.99, 2),
   what dn_exp scales by 2^k), lo the error of that rounding, exactly. */
typedef struct exp_parts {
    float hi, lo;
    int32_t k;
} exp_parts;

static exp_parts exp_split(float x)
{
    const float shifter = 0x1.8p23f;
    /* n = the nearest integer to x*64/ln2: adding 1.5*2^23 rounds z to an
       integer (|z| < 2^22), held in the low bits of t. */
    float z = mul(x, C.exp_inv_ln2_64);
    float t = add(z, shifter);
    int32_t n = (int32_t)(dn_bits(t) - dn_bits(shifter));
    float nf = sub(t, shifter); /* n, exactly */
    /* r = x - n*ln2/64: n*C1 is exact (14 + 10 bits) and so is x - n*C1
       (Sterbenz); n*C2 and the last subtraction round, below 2^-31. */
    float r = sub(sub(x, mul(nf, C.exp_ln2_64_hi)), mul(nf, C.exp_ln2_64_lo));
    /* e^r - 1 by the cubic: r + r^2 (c2 + c3 r) */
    float q = add(r, mul(mul(r, r), add(C.exp_c2, mul(C.exp_c3, r))));
    /* 2^((n mod 64)/64) = T_hi + T_lo from the packed table */
    uint32_t w = dn_exp_table[n & 63];
    float t_hi = dn_from_bits(0x3F800000u | (w & 0x7FFFFFu));
    float t_lo = mul((float)asr((int32_t)w, 23), 0x1p-32f);
    /* T * e^r = T_hi + (T_lo + T_hi*q), rounded once; and the error of
       that rounding (Fast2Sum: T_hi >= 1 > |T_lo + T_hi*q|) */
    float lo = add(t_lo, mul(t_hi, q));
    float y = add(t_hi, lo);
    exp_parts p = {y, add(sub(t_hi, y), lo), asr(n, 6)};
    return p;
}

/* x read through ftz and clamped to [-95, 95], where exp_split holds; past
   the clamp the results are +0 and +inf either way. */
static inline float exp_arg(float x)
{
    x = dn_flush(x);
    return x > 95.0f ? 95.0f : x < -95.0f ? -95.0f : x;
}

float dn_exp(float x)
{
    if (x != x) return canon_nan();
    exp_parts p = exp_split(exp_arg(x));
    return scale(p.hi, p.k);
}

/* ---- ln ------------------------------------------------------------------- */

/* ln x + c + c2 for a positive normal finite x and small c, c2: the
   corrections ln1p adds (0 and 0 for ln), summed in before the last
   rounding, c exactly (Fast2Sum), c2 into the low part. */
static float ln_core(float x, float c, float c2)
{
    /* x = m * 2^E with m in [3/4, 3/2): subtract the bits of 3/4 so the
       exponent field counts from there. */
    uint32_t u = dn_bits(x);
    int32_t E = asr((int32_t)(u - 0x3F400000u), 23);
    float m = dn_from_bits(u - ((uint32_t)E << 23));
    /* j = the top 7 fraction bits of m: 0-63 for m in [1, 3/2), 64-127 for
       m in [3/4, 1); c_j = 1/invc_j with invc_j = K_j/128 (8 bits). */
    uint32_t j = (dn_bits(m) >> 16) & 127u;
    float invc = dn_ln_invc[j];
    /* s = m*invc - 1 = m/c_j - 1, exactly: m_hi (16 bits) * invc and
       m_lo (8 bits) * invc are exact, m_hi*invc - 1 is exact (Sterbenz),
       and the sum is representable (|s| < 2^-7, a multiple of 2^-31 below 1,
       |s| < 2^-6, a multiple of 2^-30 above), so the add does not round. */
    float m_hi = dn_from_bits(dn_bits(m) & 0xFFFFFF00u);
    float m_lo = sub(m, m_hi);
    float s = add(sub(mul(m_hi, invc), 1.0f), mul(m_lo, invc));
    /* E*ln2 + ln(c_j) = hi + lo: E*ln2_hi and hi are exact (multiples of
       2^-16 below 2^7). */
    float ef = (float)E;
    float hi = add(mul(ef, C.ln2_hi), dn_ln_lhi[j]);
    float lo = add(mul(ef, C.ln2_lo), dn_ln_llo[j]);
    /* ln(1 + s) - s by the quartic's tail: s^2 (a2 + s (a3 + s a4)) */
    float tail = mul(mul(s, s), add(C.ln_a2, mul(s, add(C.ln_a3, mul(s, C.ln_a4)))));
    /* hi + s = S + e exactly (Fast2Sum: |hi| >= |s| whenever hi != 0), and
       S + c = S2 + e2 exactly (|c| <= ulp(x)/x <= |S| unless S = 0) */
    float S = add(hi, s);
    float e = add(sub(hi, S), s);
    float S2 = add(S, c);
    float e2 = add(sub(S, S2), c);
    return add(S2, add(add(e, e2), add(add(lo, c2), tail)));
}

float dn_ln(float x)
{
    x = dn_flush(x);
    uint32_t u = dn_bits(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return -INFINITY;
    if (u >> 31) return canon_nan();
    if (u == DN_EXP_BITS) return INFINITY;
    return ln_core(x, 0.0f, 0.0f);
}

/* ---- recip ---------------------------------------------------------------- */

/* 1/(m + err) for m in [1, 2) and |err| < 2^-20: the seed y0 from the top
   7 fraction bits, y1 = y0*(2 - m*y0), then y1*(2 - m*y1) regrouped as
   y1 + y1*r with the residual r = 1 - (m + err)*y1 formed from 12-bit
   halves (each product exact, each difference off by less than 2^-33). */
typedef struct recip_parts {
    float y1, r; /* 1/(m + err) = y1 * (1 + r) to 2^-30; y1 + y1*r is the last step */
} recip_parts;

static recip_parts recip_split(float m, float err)
{
    float y0 = dn_recip_seed[(dn_bits(m) >> 16) & 127u];
    float y1 = mul(y0, sub(2.0f, mul(m, y0)));
    float m_hi = hi12(m), m_lo = sub(m, m_hi);
    float y_hi = hi12(y1), y_lo = sub(y1, y_hi);
    float r = sub(one_minus_split(m_hi, m_lo, y_hi, y_lo), mul(err, y1));
    recip_parts p = {y1, r};
    return p;
}

static float recip_mant(float m, float err)
{
    recip_parts p = recip_split(m, err);
    return add(p.y1, mul(p.y1, p.r));
}

/* 1/x for a finite normal x: the significand's reciprocal, its sign, 2^-E. */
static float recip_core(float x)
{
    uint32_t u = dn_bits(x);
    float m = dn_from_bits((u & DN_FRAC_BITS) | 0x3F800000u);
    int32_t E = (int32_t)((u >> 23) & 0xFFu) - 127;
    float y = recip_mant(m, 0.0f);
    return scale(dn_from_bits(dn_bits(y) | (u & DN_SIGN_BIT)), -E);
}

float dn_recip(float x)
{
    x = dn_flush(x);
    uint32_t u = dn_bits(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return dn_from_bits((u & DN_SIGN_BIT) | DN_EXP_BITS);        /* ±inf */
    if ((u & 0x7FFFFFFFu) == DN_EXP_BITS) return dn_from_bits(u & DN_SIGN_BIT); /* ±0 */
    return recip_core(x);
}

/* ---- rsqrt ---------------------------------------------------------------- */

float dn_rsqrt(float x)
{
    x = dn_flush(x);
    uint32_t u = dn_bits(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return dn_from_bits((u & DN_SIGN_BIT) | DN_EXP_BITS); /* ±inf */
    if (u >> 31) return canon_nan();
    if (u == DN_EXP_BITS) return 0.0f;
    /* x = m * 4^k with m in [1, 4): p the exponent's parity. */
    int32_t E = (int32_t)(u >> 23) - 127;
    int32_t p = E & 1;
    int32_t k = asr(E - p, 1);
    float m = dn_from_bits((u & DN_FRAC_BITS) | ((uint32_t)(127 + p) << 23));
    float y0 = dn_rsqrt_seed[(uint32_t)p << 6 | ((u >> 17) & 63u)];
    /* Newton: y*(1.5 - 0.5*((m*y)*y)); m*y is near sqrt(m), (m*y)*y near 1 */
    float y1 = mul(y0, sub(1.5f, mul(0.5f, mul(mul(m, y0), y0))));
    /* The second step y1*(1.5 - 0.5*m*y1^2) = y1 + y1*(0.5*r), with
       r = 1 - m*y1^2 formed from 12-bit halves: y1^2 = g_hi + g_lo (g_hi =
       y_hi^2 exact), m*g_hi from four exact products. */
    float y_hi = hi12(y1), y_lo = sub(y1, y_hi);
    float g_hi = mul(y_hi, y_hi);
    float g_lo = add(mul(add(y_hi, y_hi), y_lo), mul(y_lo, y_lo));
    float gh_hi = hi12(g_hi), gh_lo = sub(g_hi, gh_hi);
    float m_hi = hi12(m), m_lo = sub(m, m_hi);
    float r = sub(one_minus_split(m_hi, m_lo, gh_hi, gh_lo), mul(m, g_lo));
    float y2 = add(y1, mul(y1, mul(0.5f, r)));
    return scale(y2, -k); /* |k| <= 63: always normal */
}

/* ---- ln1p ----------------------------------------------------------------- */

/* ln(1 + t_hi + t_lo) for t_hi > -1 finite, |t_lo| <= ulp(t_hi)/2:
   u = 1 + t_hi rounded and its error err, exactly (Fast2Sum, the larger of
   1 and t_hi first: t_hi - (u - 1) for t_hi <= 1), then
   ln(1 + t) = ln u + ln(1 + c/u) with c = err + t_lo, to second order
   c/u - (c/u)^2/2, y = recip(u), q = err*y. For u < 2, c/u is taken as
   err + (t_lo - err*d)*y with d = u - 1 (exact), and err goes into ln u's
   sum exactly; for u >= 2 (where c/u is far below ln u's last place) as
   q + t_lo*y. The small rest goes into ln u's low part. */
static float ln1p_core(float t_hi, float t_lo)
{
    float u = add(1.0f, t_hi);
    float d = sub(u, 1.0f);
    float big = t_hi > 1.0f ? t_hi : 1.0f, small = t_hi > 1.0f ? 1.0f : t_hi;
    float err = sub(small, sub(u, big));
    float y = recip_core(u);
    float q = mul(err, y);
    int near = u < 2.0f;
    float rest = sub(mul(sub(t_lo, near ? mul(err, d) : 0.0f), y), mul(mul(q, q), 0.5f));
    return ln_core(u, near ? err : q, rest);
}

float dn_ln1p(float t)
{
    t = dn_flush(t);
    if (t != t || t < -1.0f) return canon_nan();
    if (t == 0.0f) return t;
    if (t == -1.0f) return -INFINITY;
    if (t == INFINITY) return INFINITY;
    return ln1p_core(t, 0.0f);
}

/* ---- sigmoid, silu -------------------------------------------------------- */

/* The sigmoid of x in [-95, 80] as y * 2^-e: y in (1/2, 1] the last Newton
   value, e >= 0. 1 + e^-x = 2^k (2^-k + hi + lo) with e^-x = (hi + lo) 2^k;
   d = 2^-k + hi is summed exactly into dh + de (Fast2Sum, the larger
   first), dh = M 2^D, and y = 1/(M + de 2^-D) by the recip sequence. */
typedef struct sig_parts {
    recip_parts y; /* y = y1 + y1*r */
    int32_t e;
} sig_parts;

static sig_parts sig_of_exp(exp_parts p)
{
    float t = scale(1.0f, -p.k); /* 2^-k, +0 below 2^-126 */
    float big = p.hi >= t ? p.hi : t, small = p.hi >= t ? t : p.hi;
    float dh = add(t, p.hi);
    float de = add(add(sub(big, dh), small), p.lo);
    uint32_t u = dn_bits(dh);
    int32_t D = (int32_t)(u >> 23) - 127;
    float M = dn_from_bits((u & DN_FRAC_BITS) | 0x3F800000u);
    sig_parts s = {recip_split(M, scale(de, -D)), D + p.k};
    return s;
}

static sig_parts sigmoid_core(float x) { return sig_of_exp(exp_split(-x)); }

float dn_sigmoid(float x)
{
    x = dn_flush(x);
    if (x != x) return canon_nan();
    x = x > 80.0f ? 80.0f : x < -95.0f ? -95.0f : x;
    sig_parts s = sigmoid_core(x);
    return scale(add(s.y.y1, mul(s.y.y1, s.y.r)), -s.e);
}

/* xm * sigmoid for a normal xm and the sigmoid as sig_parts s: xm = X * 2^Ex
   with X in [1, 2) signed; X*y1*(1 + r) rounded once: p + (p's error + p*r),
   then times 2^Ex (exact: |X*y| < 2) and 2^-e. */
static float times_sigmoid(float xm, sig_parts s)
{
    uint32_t u = dn_bits(xm);
    int32_t Ex = (int32_t)((u >> 23) & 0xFFu) - 127;
    float X = dn_from_bits((u & (DN_SIGN_BIT | DN_FRAC_BITS)) | 0x3F800000u);
    float p = mul(X, s.y.y1);
    float v = add(p, add(mul_err(X, s.y.y1, p), mul(p, s.y.r)));
    return scale(scale(v, Ex), -s.e);
}

float dn_silu(float x)
{
    x = dn_flush(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return x;
    float xm = x < -95.0f ? -95.0f : x; /* below, x*sigmoid(x) flushes either way */
    return times_sigmoid(xm, sigmoid_core(xm > 80.0f ? 80.0f : xm));
}

/* ---- softplus ------------------------------------------------------------- */

float dn_softplus(float u)
{
    u = dn_flush(u);
    if (u != u) return canon_nan();
    if (u > 16.0f) return add(u, dn_exp(-u));
    /* ln(1 + e^u) with e^u = (hi + lo) 2^k kept unrounded */
    exp_parts p = exp_split(u < -95.0f ? -95.0f : u);
    return ln1p_core(scale(p.hi, p.k), scale(p.lo, p.k));
}

/* ---- array forms (references) --------------------------------------------- */

/* y[i] = f(x[i]): each array form is its scalar function element by element. */
static void map(float (*f)(float), const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = f(x[i]);
}

void dn_ref_exp_v(const float *x, float *y, size_t n) { map(dn_exp, x, y, n); }
void dn_ref_ln_v(const float *x, float *y, size_t n) { map(dn_ln, x, y, n); }
void dn_ref_ln1p_v(const float *x, float *y, size_t n) { map(dn_ln1p, x, y, n); }
void dn_ref_recip_v(const float *x, float *y, size_t n) { map(dn_recip, x, y, n); }
void dn_ref_rsqrt_v(const float *x, float *y, size_t n) { map(dn_rsqrt, x, y, n); }
void dn_ref_sigmoid_v(const float *x, float *y, size_t n) { map(dn_sigmoid, x, y, n); }
void dn_ref_silu_v(const float *x, float *y, size_t n) { map(dn_silu, x, y, n); }
void dn_ref_softplus_v(const float *x, float *y, size_t n) { map(dn_softplus, x, y, n); }

/* ---- vector operations (references) --------------------------------------- */

float dn_ref_softmax(const float *x, float *y, size_t n)
{
    if (n == 0) return 0.0f;
    float m = dn_ref_fmax(x, n);
    for (size_t i = 0; i < n; i++) y[i] = dn_exp(sub(x[i], m));
    float s = dn_ref_fsum(y, n);
    float r = dn_recip(s);
    for (size_t i = 0; i < n; i++) y[i] = mul(y[i], r);
    return s;
}

float dn_math_rms_scale(float ss, size_t n, float eps)
{
    return dn_rsqrt(add(mul(ss, dn_recip((float)n)), eps));
}

float dn_math_l2_scale(float ss, float eps) { return dn_rsqrt(add(ss, eps)); }

void dn_ref_rmsnorm(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_ref_fdot(x, x, n), n, eps);
    for (size_t i = 0; i < n; i++) y[i] = mul(mul(x[i], r), w[i]);
}

void dn_ref_l2norm(const float *x, float eps, float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_l2_scale(dn_ref_fdot(x, x, n), eps);
    for (size_t i = 0; i < n; i++) y[i] = mul(x[i], r);
}

void dn_ref_rope(const float *x, size_t n, const float *cos, const float *sin, size_t npairs,
                 int neox, float *y)
{
    for (size_t i = 0; i < npairs; i++) {
        size_t a = neox ? i : 2 * i, b = neox ? i + npairs : 2 * i + 1;
        float x0 = x[a], x1 = x[b], c = cos[i], s = sin[i];
        y[a] = sub(mul(x0, c), mul(x1, s));
        y[b] = add(mul(x0, s), mul(x1, c));
    }
    if (y != x)
        for (size_t i = 2 * npairs; i < n; i++) y[i] = x[i];
}

void dn_ref_hadamard(float *x, size_t n, int inverse)
{
    for (size_t h = 1; h < n; h *= 2)
        for (size_t i = 0; i < n; i += 2 * h)
            for (size_t j = i; j < i + h; j++) {
                float a = x[j], b = x[j + h];
                x[j] = add(a, b);
                x[j + h] = sub(a, b);
            }
    if (inverse && n > 1) {
        int32_t lg = 0;
        while (((size_t)1 << lg) < n) lg++;
        float s = pow2i(-lg);
        for (size_t i = 0; i < n; i++) x[i] = mul(x[i], s);
    }
}

/* ---- tanh, gelu_tanh, gelu (docs/numerics.md 20) -------------------------- */

#define A dn_act_c

/* a two-part value hi + lo, |lo| far below ulp(hi) */
typedef struct two {
    float hi, lo;
} two;

/* tanh x for |x| < 9/16: x + x^3 P(x^2), the odd quintic's tail by Horner. */
static float tanh_small(float x)
{
    float x2 = mul(x, x);
    float p = add(A.tanh_p[3], mul(x2, A.tanh_p[4]));
    p = add(A.tanh_p[2], mul(x2, p));
    p = add(A.tanh_p[1], mul(x2, p));
    p = add(A.tanh_p[0], mul(x2, p));
    return add(x, mul(mul(x, x2), p));
}

/* tanh a for a in [9/16, 10]: 1 - 2 sigmoid(-2a), with sigmoid(-2a) =
   y1 (1 + r) 2^-e from the sigmoid sequence (-2a exact). s = y1 2^(1-e) is
   exact (normal: s > 2^-29), h = 1 - s and its error are exact (Fast2Sum,
   1 > s), so 1 - s (1 + r) = h + (err - s r) rounds once. */
static float tanh_big(float a)
{
    sig_parts p = sigmoid_core(mul(-2.0f, a));
    float s = scale(p.y.y1, 1 - p.e);
    float h = sub(1.0f, s);
    float err = sub(sub(1.0f, h), s);
    return add(h, sub(err, mul(s, p.y.r)));
}

float dn_tanh(float x)
{
    x = dn_flush(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return x; /* x + x^3 P would give +0 for -0 */
    uint32_t u = dn_bits(x);
    float a = dn_from_bits(u & ~DN_SIGN_BIT);
    if (a < 0x1.2p-1f) return tanh_small(x);
    float t = tanh_big(a > 10.0f ? 10.0f : a);
    return dn_from_bits(dn_bits(t) | (u & DN_SIGN_BIT));
}

/* hi + lo = a*b exactly for a*b normal: Dekker's product. */
static two mul2(float a, float b)
{
    float p = mul(a, b);
    two r = {p, mul_err(a, b, p)};
    return r;
}

/* z = 2 sqrt(2/pi) x (1 + 0.044715 x^2) as hi + lo, for x in [-12, 10]:
   x^2, 0.044715 x^2, 1 + that, x times it and K times that, each a
   Dekker product or Fast2Sum whose error is carried (the constants as
   hi + lo), so z is good to ~2^-40 relative where it matters (z < -9,
   where sigmoid(z)'s relative error is about |z| times z's). */
static two gelu_tanh_arg(float x)
{
    two s = mul2(x, x);
    two q = mul2(A.gelu_a_hi, s.hi);
    q.lo = add(q.lo, add(mul(A.gelu_a_hi, s.lo), mul(A.gelu_a_lo, s.hi)));
    float big = q.hi > 1.0f ? q.hi : 1.0f, small = q.hi > 1.0f ? 1.0f : q.hi;
    float w = add(1.0f, q.hi);
    float we = add(add(sub(big, w), small), q.lo);
    two p = mul2(x, w);
    p.lo = add(p.lo, mul(x, we));
    two z = mul2(A.gelu_k_hi, p.hi);
    z.lo = add(z.lo, add(mul(A.gelu_k_hi, p.lo), mul(A.gelu_k_lo, p.hi)));
    return z;
}

/* The sigmoid of hi + lo (hi in [-95, 80]): e^-(hi + lo) = e^-hi (1 - lo)
   to 2^-40, the -e^-hi lo going into exp's error part. */
static sig_parts sigmoid2_core(float hi, float lo)
{
    exp_parts p = exp_split(-hi);
    p.lo = sub(p.lo, mul(p.hi, lo));
    return sig_of_exp(p);
}

float dn_gelu_tanh(float x)
{
    x = dn_flush(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return x;
    if (x > 10.0f) return x;            /* sigmoid(z) rounds to 1: z > 87 */
    float xm = x < -12.0f ? -12.0f : x; /* x sigmoid(z) flushes below: z < -142 */
    two z = gelu_tanh_arg(xm);
    float zc = z.hi > 80.0f ? 80.0f : z.hi < -95.0f ? -95.0f : z.hi;
    return times_sigmoid(xm, sigmoid2_core(zc, zc == z.hi ? z.lo : 0.0f));
}

/* P(v) as hi + lo for u = uh + ul, v = u - 7/16: vh = uh - 7/16 and its
   error (exact: Fast2Sum, or Sterbenz for uh >= 7/32); Horner down to the
   linear term P1, whose product with vh and sum with c0 are exact
   (Dekker, Fast2Sum: |c0| > 0.35 > |vh P1|); the low part of v enters
   through P1 (P' = P1 + v P1', the rest is below 2^-28 of P). */
static two gelu_poly(float uh, float ul)
{
    float vh = sub(uh, 0.4375f);
    float vl = add(sub(uh, add(vh, 0.4375f)), ul);
    float p = A.gelu_p[11];
    for (int i = 10; i >= 1; i--) p = add(A.gelu_p[i], mul(vh, p));
    two t = mul2(vh, p);
    float h = add(A.gelu_p[0], t.hi);
    two r = {h, add(add(add(sub(A.gelu_p[0], h), t.hi), t.lo), mul(p, vl))};
    return r;
}

/* (a.hi + a.lo)(b.hi + b.lo) as hi + lo (to ~2^-44): one Dekker product
   and the cross terms. */
static two mul22(two a, two b)
{
    two p = mul2(a.hi, b.hi);
    p.lo = add(p.lo, add(mul(a.hi, b.lo), mul(a.lo, b.hi)));
    return p;
}

/* Q = Phi(-a) = erfc(a/sqrt2)/2 for a = |x| in [0, 13.5] as (hi + lo) 2^k:
   tau = 1/(1 + a/2) as hi + lo (d = 1 + a/2 and its error exact, the recip
   sequence's y1 + y1 r rounded and its error by Fast2Sum), u = (a/2) tau as hi + lo, R = tau P(u); e^(-a^2/2)
   = (e.hi + e.lo) 2^k from a^2 = s + se (Dekker) by exp_split(-s/2) with
   -(e.hi se)/2 added into e.lo; Q = R e. */
static exp_parts gelu_q(float a)
{
    float ha = mul(a, 0.5f);
    float d = add(1.0f, ha);
    float big = ha > 1.0f ? ha : 1.0f, small = ha > 1.0f ? 1.0f : ha;
    float de = add(sub(big, d), small);
    uint32_t db = dn_bits(d);
    int32_t D = (int32_t)(db >> 23) - 127;
    recip_parts rp = recip_split(dn_from_bits((db & DN_FRAC_BITS) | 0x3F800000u), scale(de, -D));
    float yr = mul(rp.y1, rp.r), th = add(rp.y1, yr);
    two tau = {scale(th, -D), scale(add(sub(rp.y1, th), yr), -D)};
    two u = mul2(ha, tau.hi);
    two R = mul22(tau, gelu_poly(u.hi, add(u.lo, mul(ha, tau.lo))));
    two s = mul2(a, a);
    exp_parts e = exp_split(mul(s.hi, -0.5f));
    two E = {e.hi, sub(e.lo, mul(mul(e.hi, s.lo), 0.5f))};
    two q = mul22(R, E);
    exp_parts r = {q.hi, q.lo, e.k};
    return r;
}

/* x Phi(x) for x in [-13.5, 6], x != 0, with x = X 2^Ex (X in [1, 2)
   signed, so no partial product below flushes): x < 0 gives
   scale(scale(X (hi + lo) rounded once, Ex), k) = x Q; x > 0 gives
   x (1 - Q), 1 - Q as a Fast2Sum (1 > Q) and X times it rounded once. */
static float gelu_core(float x)
{
    uint32_t u = dn_bits(x);
    int32_t Ex = (int32_t)((u >> 23) & 0xFFu) - 127;
    float X = dn_from_bits((u & (DN_SIGN_BIT | DN_FRAC_BITS)) | 0x3F800000u);
    exp_parts q = gelu_q(dn_from_bits(u & ~DN_SIGN_BIT));
    if (x < 0.0f) {
        two p = mul2(X, q.hi);
        return scale(scale(add(p.hi, add(p.lo, mul(X, q.lo))), Ex), q.k);
    }
    float qh = scale(q.hi, q.k), ql = scale(q.lo, q.k);
    float h = sub(1.0f, qh);
    float err = sub(sub(sub(1.0f, h), qh), ql);
    two p = mul2(X, h);
    return scale(add(p.hi, add(p.lo, mul(X, err))), Ex);
}

float dn_gelu(float x)
{
    x = dn_flush(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return x;
    if (x > 6.0f) return x;                    /* 1 - Q rounds to 1 there */
    return gelu_core(x < -13.5f ? -13.5f : x); /* below -13.5, x Q flushes */
}

void dn_ref_tanh_v(const float *x, float *y, size_t n) { map(dn_tanh, x, y, n); }
void dn_ref_gelu_tanh_v(const float *x, float *y, size_t n) { map(dn_gelu_tanh, x, y, n); }
void dn_ref_gelu_v(const float *x, float *y, size_t n) { map(dn_gelu, x, y, n); }

/* ---- zero-centred and gated RMSNorm -------------------------------------- */

void dn_ref_rms0(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_ref_fdot(x, x, n), n, eps);
    for (size_t i = 0; i < n; i++) y[i] = mul(mul(x[i], r), add(1.0f, w[i]));
}

void dn_ref_rms_gated(const float *x, const float *gate, const float *w, float eps, int silu,
                      float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_ref_fdot(x, x, n), n, eps);
    for (size_t i = 0; i < n; i++) {
        float g = silu ? dn_silu(gate[i]) : dn_sigmoid(gate[i]);
        y[i] = mul(mul(mul(x[i], r), w[i]), g);
    }
}

#undef A
/* ---- the scalar table: the references ------------------------------------- */

const dn_math_kernels dn_math_scalar = {
    .exp_v = dn_ref_exp_v,
    .ln_v = dn_ref_ln_v,
    .ln1p_v = dn_ref_ln1p_v,
    .recip_v = dn_ref_recip_v,
    .rsqrt_v = dn_ref_rsqrt_v,
    .sigmoid_v = dn_ref_sigmoid_v,
    .silu_v = dn_ref_silu_v,
    .softplus_v = dn_ref_softplus_v,
    .softmax = dn_ref_softmax,
    .rmsnorm = dn_ref_rmsnorm,
    .l2norm = dn_ref_l2norm,
    .rope = dn_ref_rope,
    .hadamard = dn_ref_hadamard,
    .tanh_v = dn_ref_tanh_v,
    .gelu_tanh_v = dn_ref_gelu_tanh_v,
    .gelu_v = dn_ref_gelu_v,
    .rms0 = dn_ref_rms0,
    .rms_gated = dn_ref_rms_gated,
    .sin_v = dn_ref_sin_v,
    .cos_v = dn_ref_cos_v,
    .sincos_v = dn_ref_sincos_v,
    .rope_table = dn_ref_rope_table,
};
