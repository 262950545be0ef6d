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

#include <math.h>

/* ---- the engine's operations, inline (dn_fadd, dn_fsub, dn_fmul) ------- */

static inline float add(float a, float b) { return dn_result(dn_flush(a) + dn_flush(b)); }
static inline float sub(float a, float b) { return dn_result(dn_flush(a) - dn_flush(b)); }
static inline float mul(float a, float b) { return dn_result(dn_flush(a) * dn_flush(b)); }

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

/* v with its 12 low fraction bits cleared: 12 significant bits, so the
   product of two such values, or of one and a 12-bit remainder, is exact. */
static inline float hi12(float v) { return dn_from_bits(dn_bits(v) & 0xFFFFF000u); }

/* 1 - (a_hi + a_lo)(b_hi + b_lo) from the four products of 12-bit halves,
   each exact, subtracted in this order (recip's and rsqrt's residual). */
static inline float one_minus_split(float a_hi, float a_lo, float b_hi, float b_lo)
{
    float r = sub(1.0f, mul(a_hi, b_hi));
    r = sub(r, mul(a_hi, b_lo));
    r = sub(r, mul(a_lo, b_hi));
    return sub(r, mul(a_lo, b_lo));
}

static inline float canon_nan(void) { return dn_from_bits(DN_NAN_BITS); }

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

/* The error of p = mul(a, b), from 12-bit halves (Dekker's product; exact
   while no partial product flushes). */
static float mul_err(float a, float b, float p)
{
    float a_hi = hi12(a), a_lo = sub(a, a_hi);
    float b_hi = hi12(b), b_lo = sub(b, b_hi);
    return add(add(add(sub(mul(a_hi, b_hi), p), mul(a_hi, b_lo)), mul(a_lo, b_hi)),
               mul(a_lo, b_lo));
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

static sig_parts sigmoid_core(float x)
{
    exp_parts p = exp_split(-x);
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

float dn_sigmoid(float x)
{
    x = dn_flush(x);
    if (x != x) return canon_nan();
    x = x > 80.0f ? 80.0f : x < -95.0f ? -95.0f : x;
    sig_parts s = sigmoid_core(x);
    return scale(add(s.y.y1, mul(s.y.y1, s.y.r)), -s.e);
}

float dn_silu(float x)
{
    x = dn_flush(x);
    if (x != x) return canon_nan();
    if (x == 0.0f) return x;
    float xm = x < -95.0f ? -95.0f : x; /* below, x*sigmoid(x) flushes either way */
    sig_parts s = sigmoid_core(xm > 80.0f ? 80.0f : xm);
    /* xm = X * 2^Ex with X in [1, 2) signed; X*y1*(1 + r) rounded once:
       p + (p's error + p*r), then times 2^Ex (exact: |X*y| < 2) and 2^-e. */
    uint32_t u = dn_bits(xm);
    int32_t Ex = (int32_t)((u >> 23) & 0xFFu) - 127;
    float X = dn_from_bits((u & (DN_SIGN_BIT | DN_FRAC_BITS)) | 0x3F800000u);
    float p = mul(X, s.y.y1);
    float v = add(p, add(mul_err(X, s.y.y1, p), mul(p, s.y.r)));
    return scale(scale(v, Ex), -s.e);
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

void dn_ref_sin_v(const float *x, float *y, size_t n) { map(dn_sin, x, y, n); }
void dn_ref_cos_v(const float *x, float *y, size_t n) { map(dn_cos, x, y, n); }
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
    uint32_t uw = dn_bits(aw);
    uint64_t M = (uw & DN_FRAC_BITS) | 0x800000u, m32 = 0xFFFFFFFFu;
    const uint32_t *v = dn_trig_invpi[(uw >> 23) - 64u];
    uint64_t p0 = M * v[0], p1 = M * v[1], p2 = M * v[2];
    uint64_t c = (p2 >> 32) + (p1 & m32);
    uint64_t k0 = p2 & m32, k1 = c & m32, k2 = ((c >> 32) + (p1 >> 32) + p0) & m32;
    c = ((P * k0) >> 32) + P * k1;
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
    .sin_v = dn_ref_sin_v,
    .cos_v = dn_ref_cos_v,
    .sincos_v = dn_ref_sincos_v,
};
