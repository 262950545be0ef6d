/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals on AArch64 NEON: each kernel is its reference in
 * src/math.c, four lanes at a time, operation for operation, laid out as
 * src/x86/math_avx2.c lays out the AVX2 kernels (same names, same order).
 * No FMA: every product is a vmulq_f32 rounded on its own, and the flush
 * after it stands between it and any add, so nothing can be contracted
 * (the build passes -ffp-contract=off as well).
 *
 * Floating-point environment: none is touched. The kernels run in the
 * caller's default FPCR (round to nearest, no flush: FPCR.FZ would judge
 * tininess before rounding, see neon_common.h) and apply the engine's rule
 * explicitly, where the reference's add, sub and mul apply it:
 *
 * - every result of ADD, SUB, MUL is flushed (the IEEE result, rounded on
 *   the denormal grid, then a denormal becomes a zero of its sign: what
 *   dn_result does);
 * - every value read from the caller (x, w, cos, sin) is flushed before its
 *   first use, arithmetic or bit access (the operand rule, and what the
 *   reference's dn_flush(x) at the top of each function does);
 * - every other operand is such a result, a table entry or constant
 *   (normal), or built from bits with a non-zero exponent field (the
 *   significands m, M, X, T_hi, hi12() of a normal value, 2^k from pow2i:
 *   fraction 0, so never denormal), so flushing operands again would change
 *   nothing and is left out;
 * - a stored value is made DN_NAN_BITS where it is a NaN. NaN payloads in
 *   between may differ from the reference's (which canonicalises after each
 *   operation), but whether a value is a NaN never depends on them, and a
 *   NaN lane's bits only ever feed lanes that are replaced at the end.
 *
 * FMAX/FMIN (vmaxq_f32, vminq_f32) return a NaN when either operand is one,
 * so the clamps keep a NaN a NaN as the AVX2 ones do (its lanes are replaced
 * at the end anyway); on numbers they are the reference's ?: clamps (the
 * operands here are never two zeros of different signs).
 *
 * Tables: the 64-entry exp table is read with TBL/TBX (its 256 bytes as four
 * 64-byte TBL tables, byte indices 4j..4j+3 of each lane); the 128-entry
 * tables (ln, recip and rsqrt seeds) with one lane load per lane.
 */
#include "../math_kernels.h"
#include "../math_tables.h"
#include "../fp32_kernels.h"
#include "../bits.h"
#include "neon_common.h"

#include <math.h>
#include <string.h>

typedef float32x4_t V;
typedef int32x4_t VI;
typedef uint32x4_t VM; /* lane masks: all ones or all zeros */

/* The engine's add, sub, mul on four lanes: IEEE result, then FTZ. */
static inline V add_(V a, V b) { return dn_neon_flush(vaddq_f32(a, b)); }
static inline V sub_(V a, V b) { return dn_neon_flush(vsubq_f32(a, b)); }
static inline V mul_(V a, V b) { return dn_neon_flush(vmulq_f32(a, b)); }

#define ADD add_
#define SUB sub_
#define MUL mul_
#define F(c) vdupq_n_f32(c)
#define I(c) vdupq_n_s32((int32_t)(c))
#define U(c) vdupq_n_u32((uint32_t)(c))
#define AS_I vreinterpretq_s32_f32
#define AS_F vreinterpretq_f32_s32
#define AS_U vreinterpretq_u32_f32
#define U_F vreinterpretq_f32_u32
#define C dn_math_c

static inline V sel(VM mask, V a, V b) { return vbslq_f32(mask, a, b); } /* mask ? a : b */
static inline VM lt(V a, V b) { return vcltq_f32(a, b); }
static inline VM gt(V a, V b) { return vcgtq_f32(a, b); }
static inline VM ge(V a, V b) { return vcgeq_f32(a, b); }
static inline VM eq(V a, V b) { return vceqq_f32(a, b); }
static inline VM nge(V a, V b) { return vmvnq_u32(vcgeq_f32(a, b)); } /* !(a >= b): also NaN */
static inline VM isnan_(V a) { return vmvnq_u32(vceqq_f32(a, a)); }
static inline V neg(V a) { return vnegq_f32(a); }
static inline V nan_(void) { return U_F(U(DN_NAN_BITS)); }
static inline V sign_of(V a) { return U_F(vandq_u32(AS_U(a), U(DN_SIGN_BIT))); }
static inline V or_(V a, V b) { return U_F(vorrq_u32(AS_U(a), AS_U(b))); }
static inline VI neg_i(VI k) { return vnegq_s32(k); }
static inline int all(VM m) { return vminvq_u32(m) == UINT32_MAX; }

/* 2^k, -126 <= k <= 127 */
static inline V pow2i(VI k) { return AS_F(vshlq_n_s32(vaddq_s32(k, I(127)), 23)); }

/* scale(): y * 2^floor(k/2) * 2^(k - floor(k/2)) */
static inline V scale(V y, VI k)
{
    VI k1 = vshrq_n_s32(k, 1);
    return MUL(MUL(y, pow2i(k1)), pow2i(vsubq_s32(k, k1)));
}

static inline V hi12(V v) { return U_F(vandq_u32(AS_U(v), U(0xFFFFF000u))); }

/* math.c's one_minus_split, lane by lane. */
static inline V one_minus_split(V a_hi, V a_lo, V b_hi, V b_lo)
{
    V r = SUB(F(1.0f), MUL(a_hi, b_hi));
    r = SUB(r, MUL(a_hi, b_lo));
    r = SUB(r, MUL(a_lo, b_hi));
    return SUB(r, MUL(a_lo, b_lo));
}

/* one_minus_split(m_hi, m_lo, y_hi, y_lo) for m in [1, 2) and its Newton
   value y1, in two fused steps (vfmsq: one rounding each) in place of
   eight operations: the same value for every m (src/x86/math_act_avx2.h,
   recip_residual; tests/test_math.c tries all 2^23). */
static inline V recip_residual(V m, V y1)
{
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    V r = dn_neon_flush(vfmsq_f32(F(1.0f), m_hi, y1));
    return dn_neon_flush(vfmsq_f32(r, m_lo, y1));
}

/* A stored result: denormal flushed, NaN canonical. */
static inline V result(V v)
{
    v = dn_neon_flush(v);
    return sel(isnan_(v), nan_(), v);
}

/* The significand 1.f of a normal v (sign dropped) and its unbiased exponent. */
static inline V mant(V v)
{
    return U_F(vorrq_u32(vandq_u32(AS_U(v), U(DN_FRAC_BITS)), U(0x3F800000u)));
}
static inline VI expo(V v)
{
    return vsubq_s32(vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(AS_U(v), 23), U(0xFF))), I(127));
}

/* t[j] for the four lanes of j (every j < the table's length): one lane
   load each (the 128-entry tables). */
static inline V lookup(const float *t, VM j)
{
    V v = vld1q_dup_f32(t + vgetq_lane_u32(j, 0));
    v = vld1q_lane_f32(t + vgetq_lane_u32(j, 1), v, 1);
    v = vld1q_lane_f32(t + vgetq_lane_u32(j, 2), v, 2);
    return vld1q_lane_f32(t + vgetq_lane_u32(j, 3), v, 3);
}

/* dn_exp_table[j] for j in 0..63: the table's 256 bytes as four 64-byte
   TBL tables; lane bytes 4j, 4j+1, 4j+2, 4j+3 (little-endian). An index
   past a TBL table's 64 bytes gives 0 (TBL) or leaves the byte (TBX), and
   idx - 64k wraps above 63 for every byte not in table k. */
static inline VI exp_lookup(VI j)
{
    const uint8_t *t = (const uint8_t *)dn_exp_table;
    uint8x16_t idx = vreinterpretq_u8_u32(
        vaddq_u32(vmulq_u32(vreinterpretq_u32_s32(j), U(0x04040404u)), U(0x03020100u)));
    uint8x16_t w = vqtbl4q_u8(vld1q_u8_x4(t), idx);
    w = vqtbx4q_u8(w, vld1q_u8_x4(t + 64), vsubq_u8(idx, vdupq_n_u8(64)));
    w = vqtbx4q_u8(w, vld1q_u8_x4(t + 128), vsubq_u8(idx, vdupq_n_u8(128)));
    w = vqtbx4q_u8(w, vld1q_u8_x4(t + 192), vsubq_u8(idx, vdupq_n_u8(192)));
    return vreinterpretq_s32_u8(w);
}

/* ---- exp ------------------------------------------------------------------ */

typedef struct {
    V hi, lo;
    VI k;
} vexp_parts;

/* exp_split() of x in [-95, 95] (flushed); lo only when want_lo. */
static inline vexp_parts exp_split(V x, int want_lo)
{
    const V shifter = F(0x1.8p23f);
    V z = MUL(x, F(C.exp_inv_ln2_64));
    V t = ADD(z, shifter);
    VI n = vsubq_s32(AS_I(t), AS_I(shifter));
    V nf = SUB(t, shifter);
    V r = SUB(SUB(x, MUL(nf, F(C.exp_ln2_64_hi))), MUL(nf, F(C.exp_ln2_64_lo)));
    V q = ADD(r, MUL(MUL(r, r), ADD(F(C.exp_c2), MUL(F(C.exp_c3), r))));
    VI w = exp_lookup(vandq_s32(n, I(63)));
    V t_hi = AS_F(vorrq_s32(vandq_s32(w, I(0x7FFFFF)), I(0x3F800000u)));
    V t_lo = MUL(vcvtq_f32_s32(vshrq_n_s32(w, 23)), F(0x1p-32f));
    V lo = ADD(t_lo, MUL(t_hi, q));
    vexp_parts p;
    p.hi = ADD(t_hi, lo);
    p.lo = want_lo ? ADD(SUB(t_hi, p.hi), lo) : p.hi;
    p.k = vshrq_n_s32(n, 6);
    return p;
}

/* max(-95, min(95, x)), a NaN kept */
static inline V clamp95(V x) { return vminq_f32(F(95.0f), vmaxq_f32(F(-95.0f), x)); }

static inline V v_exp(V x)
{
    V xf = dn_neon_flush(x);
    vexp_parts p = exp_split(clamp95(xf), 0);
    return sel(isnan_(xf), nan_(), scale(p.hi, p.k));
}

/* ---- ln ------------------------------------------------------------------- */

/* ln_core(x, c, c2) for positive normal finite lanes of x */
static inline V ln_core(V x, V c, V c2)
{
    VI u = AS_I(x);
    VI E = vshrq_n_s32(vsubq_s32(u, I(0x3F400000u)), 23);
    VI mb = vsubq_s32(u, vshlq_n_s32(E, 23));
    V m = AS_F(mb);
    VM j = vandq_u32(vshrq_n_u32(vreinterpretq_u32_s32(mb), 16), U(127));
    V invc = lookup(dn_ln_invc, j);
    V m_hi = U_F(vandq_u32(AS_U(m), U(0xFFFFFF00u)));
    V m_lo = SUB(m, m_hi);
    V s = ADD(SUB(MUL(m_hi, invc), F(1.0f)), MUL(m_lo, invc));
    V ef = vcvtq_f32_s32(E);
    V hi = ADD(MUL(ef, F(C.ln2_hi)), lookup(dn_ln_lhi, j));
    V lo = ADD(MUL(ef, F(C.ln2_lo)), lookup(dn_ln_llo, j));
    V tail = MUL(MUL(s, s), ADD(F(C.ln_a2), MUL(s, ADD(F(C.ln_a3), MUL(s, F(C.ln_a4))))));
    V S = ADD(hi, s);
    V e = ADD(SUB(hi, S), s);
    V S2 = ADD(S, c);
    V e2 = ADD(SUB(S, S2), c);
    return ADD(S2, ADD(ADD(e, e2), ADD(ADD(lo, c2), tail)));
}

static inline V v_ln(V x)
{
    V xf = dn_neon_flush(x);
    V zero = F(0.0f);
    V r = ln_core(xf, zero, zero);
    r = sel(eq(xf, F(INFINITY)), F(INFINITY), r);
    r = sel(eq(xf, zero), F(-INFINITY), r);
    /* NaN, and x < 0 (-0 is not) */
    r = sel(nge(xf, zero), nan_(), r);
    return r;
}

/* ---- recip ---------------------------------------------------------------- */

typedef struct {
    V y1, r;
} vrecip_parts;

static inline vrecip_parts recip_split(V m, V err)
{
    VM j = vandq_u32(vshrq_n_u32(AS_U(m), 16), U(127));
    V y0 = lookup(dn_recip_seed, j);
    V y1 = MUL(y0, SUB(F(2.0f), MUL(m, y0)));
    V r = SUB(recip_residual(m, y1), MUL(err, y1));
    vrecip_parts p = {y1, r};
    return p;
}

/* recip_core() for normal finite lanes */
static inline V recip_core(V x)
{
    vrecip_parts p = recip_split(mant(x), F(0.0f));
    V y = ADD(p.y1, MUL(p.y1, p.r));
    y = or_(y, sign_of(x));
    return scale(y, neg_i(expo(x)));
}

static inline V v_recip(V x)
{
    V xf = dn_neon_flush(x);
    V sign = sign_of(xf);
    V ax = vabsq_f32(xf);
    V r = recip_core(xf);
    r = sel(eq(ax, F(INFINITY)), sign, r);
    r = sel(eq(ax, F(0.0f)), or_(sign, F(INFINITY)), r);
    return sel(isnan_(xf), nan_(), r);
}

/* ---- rsqrt ---------------------------------------------------------------- */

static inline V v_rsqrt(V x)
{
    V xf = dn_neon_flush(x);
    VM u = AS_U(xf);
    VI E = vsubq_s32(vreinterpretq_s32_u32(vshrq_n_u32(u, 23)), I(127));
    VI p = vandq_s32(E, I(1));
    VI k = vshrq_n_s32(vsubq_s32(E, p), 1);
    V m = U_F(vorrq_u32(vandq_u32(u, U(DN_FRAC_BITS)),
                        vreinterpretq_u32_s32(vshlq_n_s32(vaddq_s32(p, I(127)), 23))));
    VM j =
        vorrq_u32(vshlq_n_u32(vreinterpretq_u32_s32(p), 6), vandq_u32(vshrq_n_u32(u, 17), U(63)));
    V y0 = lookup(dn_rsqrt_seed, j);
    V y1 = MUL(y0, SUB(F(1.5f), MUL(F(0.5f), MUL(MUL(m, y0), y0))));
    V y_hi = hi12(y1), y_lo = SUB(y1, y_hi);
    V g_hi = MUL(y_hi, y_hi);
    V g_lo = ADD(MUL(ADD(y_hi, y_hi), y_lo), MUL(y_lo, y_lo));
    V gh_hi = hi12(g_hi), gh_lo = SUB(g_hi, gh_hi);
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    V r = SUB(one_minus_split(m_hi, m_lo, gh_hi, gh_lo), MUL(m, g_lo));
    V y2 = ADD(y1, MUL(y1, MUL(F(0.5f), r)));
    V res = scale(y2, neg_i(k));
    V zero = F(0.0f);
    res = sel(eq(xf, F(INFINITY)), zero, res);
    res = sel(nge(xf, zero), nan_(), res);
    res = sel(eq(xf, zero), or_(sign_of(xf), F(INFINITY)), res);
    return res;
}

/* ---- ln1p ----------------------------------------------------------------- */

static inline V ln1p_core(V t_hi, V t_lo)
{
    V one = F(1.0f);
    V u = ADD(one, t_hi);
    V d = SUB(u, one);
    V err = SUB(vminq_f32(t_hi, one), SUB(u, vmaxq_f32(t_hi, one)));
    V y = recip_core(u);
    V q = MUL(err, y);
    VM near = lt(u, F(2.0f));
    V ed = U_F(vandq_u32(near, AS_U(MUL(err, d)))); /* near ? err*d : +0 */
    V rest = SUB(MUL(SUB(t_lo, ed), y), MUL(MUL(q, q), F(0.5f)));
    return ln_core(u, sel(near, err, q), rest);
}

static inline V v_ln1p(V t)
{
    V tf = dn_neon_flush(t);
    V r = ln1p_core(tf, F(0.0f));
    r = sel(eq(tf, F(INFINITY)), F(INFINITY), r);
    r = sel(eq(tf, F(-1.0f)), F(-INFINITY), r);
    r = sel(eq(tf, F(0.0f)), tf, r);
    return sel(nge(tf, F(-1.0f)), nan_(), r);
}

/* ---- sigmoid, silu -------------------------------------------------------- */

typedef struct {
    vrecip_parts y;
    VI e;
} vsig_parts;

/* sig_of_exp(): the sigmoid from e^-x's parts */
static inline vsig_parts sig_of_exp(vexp_parts p)
{
    V t = scale(F(1.0f), neg_i(p.k));
    VM hi_big = ge(p.hi, t);
    V big = sel(hi_big, p.hi, t), small = sel(hi_big, t, p.hi);
    V dh = ADD(t, p.hi);
    V de = ADD(ADD(SUB(big, dh), small), p.lo);
    VI D = expo(dh);
    vsig_parts s;
    s.y = recip_split(mant(dh), scale(de, neg_i(D)));
    s.e = vaddq_s32(D, p.k);
    return s;
}

/* sigmoid_core() of x in [-95, 80] */
static inline vsig_parts sigmoid_core(V x) { return sig_of_exp(exp_split(neg(x), 1)); }

static inline V v_sigmoid(V x)
{
    V xf = dn_neon_flush(x);
    V xc = vminq_f32(F(80.0f), vmaxq_f32(F(-95.0f), xf));
    vsig_parts s = sigmoid_core(xc);
    V y = ADD(s.y.y1, MUL(s.y.y1, s.y.r));
    V r = scale(y, neg_i(s.e));
    return sel(isnan_(xf), nan_(), r);
}

/* mul_err(a, b, p) */
static inline V mul_err(V a, V b, V p)
{
    V a_hi = hi12(a), a_lo = SUB(a, a_hi);
    V b_hi = hi12(b), b_lo = SUB(b, b_hi);
    return ADD(ADD(ADD(SUB(MUL(a_hi, b_hi), p), MUL(a_hi, b_lo)), MUL(a_lo, b_hi)),
               MUL(a_lo, b_lo));
}

/* X, the significand of a normal v with v's sign (v = X * 2^expo(v)) */
static inline V smant(V v)
{
    return U_F(vorrq_u32(vandq_u32(AS_U(v), U(DN_SIGN_BIT | DN_FRAC_BITS)), U(0x3F800000u)));
}

/* times_sigmoid(): xm * sigmoid */
static inline V times_sigmoid(V xm, vsig_parts s)
{
    V X = smant(xm);
    V p = MUL(X, s.y.y1);
    V v = ADD(p, ADD(mul_err(X, s.y.y1, p), MUL(p, s.y.r)));
    return scale(scale(v, expo(xm)), neg_i(s.e));
}

static inline V v_silu(V x)
{
    V xf = dn_neon_flush(x);
    V xm = vmaxq_f32(xf, F(-95.0f));
    V r = times_sigmoid(xm, sigmoid_core(vminq_f32(xm, F(80.0f))));
    r = sel(eq(xf, F(0.0f)), xf, r);
    return sel(isnan_(xf), nan_(), r);
}

/* ---- softplus ------------------------------------------------------------- */

static inline V v_softplus(V u)
{
    V uf = dn_neon_flush(u);
    VM big = gt(uf, F(16.0f));
    /* u > 16: u + exp(-u) (exp's clamp); else exp_split(max(u, -95)) */
    V arg = sel(big, vmaxq_f32(F(-95.0f), neg(uf)), vmaxq_f32(F(-95.0f), uf));
    vexp_parts p = exp_split(arg, 1);
    V eh = scale(p.hi, p.k);
    V r;
    if (all(big)) {
        r = ADD(uf, eh);
    } else {
        r = ln1p_core(eh, scale(p.lo, p.k));
        r = sel(big, ADD(uf, eh), r);
    }
    return sel(isnan_(uf), nan_(), r);
}

/* ---- array forms ------------------------------------------------------------ */

/* Four at a time; the last n % 4 through a zero-padded buffer. */
/* exp_v's loop: where every lane has |x| <= 86 (so k = n div 64 is within
   [-125, 124]), the reference's clamp and NaN rule change nothing and its
   two multiplies by powers of two are exact (hi in [0.99, 2): the product
   stays normal), so they are one integer add to the exponent field; other
   vectors take v_exp whole. */
static inline V v_exp_fast(V x)
{
    V xf = dn_neon_flush(x);
    if (!all(vcaleq_f32(xf, F(86.0f)))) return v_exp(x); /* |x| > 86 or NaN */
    vexp_parts p = exp_split(xf, 0);
    return AS_F(vaddq_s32(AS_I(p.hi), vshlq_n_s32(p.k, 23)));
}

/* The array form of a vector function: whole vectors, then the tail through
   a zero-padded buffer (the padding's results are dropped). Inlined into
   each entry below with `f` a constant, so each is its own loop. */
static inline __attribute__((always_inline)) void unary_neon(const float *x, float *y, size_t n,
                                                             V (*f)(V))
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, f(vld1q_f32(x + i)));
    if (i < n) {
        float buf[4] = {0};
        memcpy(buf, x + i, (n - i) * sizeof(float));
        vst1q_f32(buf, f(vld1q_f32(buf)));
        memcpy(y + i, buf, (n - i) * sizeof(float));
    }
}

static void exp_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_exp_fast); }
static void ln_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_ln); }
static void ln1p_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_ln1p); }
static void recip_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_recip); }
static void rsqrt_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_rsqrt); }
static void sigmoid_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_sigmoid); }
static void silu_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_silu); }
static void softplus_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_softplus); }

/* ---- vector operations ------------------------------------------------------ */

/* y[i] = result(x[i] * a) or result((x[i] * a) * w[i]); a is an engine
   result (normal, zero, inf or DN_NAN_BITS), x and w are read through FTZ. */
static void scale_rows(const float *x, float a, const float *w, float *y, size_t n)
{
    V va = F(a);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        V v = MUL(dn_neon_flush(vld1q_f32(x + i)), va);
        if (w) v = MUL(v, dn_neon_flush(vld1q_f32(w + i)));
        vst1q_f32(y + i, result(v));
    }
    for (; i < n; i++) y[i] = w ? dn_fmul(dn_fmul(x[i], a), w[i]) : dn_fmul(x[i], a);
}

static float softmax_neon(const float *x, float *y, size_t n)
{
    if (n == 0) return 0.0f;
    float mx = dn_fp32_neon.fmax(x, n);
    V vm = F(mx);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(y + i, v_exp_fast(SUB(dn_neon_flush(vld1q_f32(x + i)), vm)));
    for (; i < n; i++) y[i] = dn_exp(dn_fsub(x[i], mx));
    float s = dn_fp32_neon.fsum(y, n);
    scale_rows(y, dn_recip(s), NULL, y, n);
    return s;
}

static void rmsnorm_neon(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return;
    scale_rows(x, dn_math_rms_scale(dn_fp32_neon.fdot(x, x, n), n, eps), w, y, n);
}

static void l2norm_neon(const float *x, float eps, float *y, size_t n)
{
    if (n == 0) return;
    scale_rows(x, dn_math_l2_scale(dn_fp32_neon.fdot(x, x, n), eps), NULL, y, n);
}

static void rope_neon(const float *x, size_t n, const float *cos, const float *sin, size_t npairs,
                      int neox, float *y)
{
    size_t i = 0;
    if (neox) {
        for (; i + 4 <= npairs; i += 4) {
            V x0 = dn_neon_flush(vld1q_f32(x + i)), x1 = dn_neon_flush(vld1q_f32(x + npairs + i));
            V c = dn_neon_flush(vld1q_f32(cos + i)), s = dn_neon_flush(vld1q_f32(sin + i));
            V a = SUB(MUL(x0, c), MUL(x1, s));
            V b = ADD(MUL(x0, s), MUL(x1, c));
            vst1q_f32(y + i, result(a));
            vst1q_f32(y + npairs + i, result(b));
        }
    } else {
        /* four pairs a step: LD2 splits them into the x0s and the x1s, ST2
           interleaves the turned pairs back */
        for (; i + 4 <= npairs; i += 4) {
            float32x4x2_t X = vld2q_f32(x + 2 * i);
            V x0 = dn_neon_flush(X.val[0]), x1 = dn_neon_flush(X.val[1]);
            V c = dn_neon_flush(vld1q_f32(cos + i)), s = dn_neon_flush(vld1q_f32(sin + i));
            float32x4x2_t Y;
            Y.val[0] = result(SUB(MUL(x0, c), MUL(x1, s)));
            Y.val[1] = result(ADD(MUL(x0, s), MUL(x1, c)));
            vst2q_f32(y + 2 * i, Y);
        }
    }
    /* the last pairs as the reference turns them */
    for (; i < npairs; i++) {
        size_t a = neox ? i : 2 * i, b = neox ? i + npairs : 2 * i + 1;
        float x0 = x[a], x1 = x[b];
        y[a] = dn_fsub(dn_fmul(x0, cos[i]), dn_fmul(x1, sin[i]));
        y[b] = dn_fadd(dn_fmul(x0, sin[i]), dn_fmul(x1, cos[i]));
    }
    if (y != x) memcpy(y + 2 * npairs, x + 2 * npairs, (n - 2 * npairs) * sizeof(float));
}

/* Strides 1 and 2 inside each four (the reference's first two passes touch
   no element outside its four), then each stride h >= 4 as whole vectors,
   then one pass: NaN, and the inverse's 2^-log2(n). The elements are
   flushed when first read; every sum after that is flushed as made. */
static void hadamard_neon(float *x, size_t n, int inverse)
{
    if (n < 4) {
        dn_ref_hadamard(x, n, inverse);
        return;
    }
    static const uint32_t odd_lanes[4] = {0, UINT32_MAX, 0, UINT32_MAX};
    static const uint32_t high_lanes[4] = {0, 0, UINT32_MAX, UINT32_MAX};
    const VM odd = vld1q_u32(odd_lanes), high = vld1q_u32(high_lanes);
    for (size_t i = 0; i < n; i += 4) {
        V v = dn_neon_flush(vld1q_f32(x + i));
        V b = vrev64q_f32(v); /* (x1, x0, x3, x2): x_j + x_j+1 even, x_j - x_j+1 odd */
        v = sel(odd, SUB(b, v), ADD(v, b));
        b = vextq_f32(v, v, 2); /* (x2, x3, x0, x1): x_j + x_j+2 low, x_j - x_j+2 high */
        v = sel(high, SUB(b, v), ADD(v, b));
        vst1q_f32(x + i, v);
    }
    for (size_t h = 4; h < n; h *= 2)
        for (size_t i = 0; i < n; i += 2 * h)
            for (size_t j = i; j < i + h; j += 4) {
                V a = vld1q_f32(x + j), b = vld1q_f32(x + j + h);
                vst1q_f32(x + j, ADD(a, b));
                vst1q_f32(x + j + h, SUB(a, b));
            }
    int lg = 0;
    while (((size_t)1 << lg) < n) lg++;
    V s = F(dn_ldexp(1.0f, -lg));
    for (size_t i = 0; i < n; i += 4) {
        V v = vld1q_f32(x + i);
        if (inverse) v = MUL(v, s);
        vst1q_f32(x + i, result(v));
    }
}

/* ---- tanh, gelu_tanh, gelu (math.c's, lane by lane) ------------------------- */

#define A dn_act_c

typedef struct {
    V hi, lo;
} vtwo;

static inline V v_tanh(V x)
{
    V xf = dn_neon_flush(x);
    V a = vabsq_f32(xf);
    /* tanh_small(x) */
    V x2 = MUL(xf, xf);
    V p = ADD(F(A.tanh_p[3]), MUL(x2, F(A.tanh_p[4])));
    p = ADD(F(A.tanh_p[2]), MUL(x2, p));
    p = ADD(F(A.tanh_p[1]), MUL(x2, p));
    p = ADD(F(A.tanh_p[0]), MUL(x2, p));
    V r = ADD(xf, MUL(MUL(xf, x2), p));
    VM small = lt(a, F(0x1.2p-1f));
    if (!all(small)) {
        /* tanh_big(min(a, 10)) with x's sign */
        vsig_parts sg = sigmoid_core(MUL(F(-2.0f), vminq_f32(a, F(10.0f))));
        V s = scale(sg.y.y1, vsubq_s32(I(1), sg.e));
        V h = SUB(F(1.0f), s);
        V err = SUB(SUB(F(1.0f), h), s);
        V big = ADD(h, SUB(err, MUL(s, sg.y.r)));
        r = sel(small, r, or_(big, sign_of(xf)));
    }
    r = sel(eq(xf, F(0.0f)), xf, r);
    return sel(isnan_(xf), nan_(), r);
}

static inline vtwo mul2(V a, V b)
{
    V p = MUL(a, b);
    vtwo r = {p, mul_err(a, b, p)};
    return r;
}

/* gelu_tanh_arg() */
static inline vtwo gelu_tanh_arg(V x)
{
    vtwo s = mul2(x, x);
    vtwo q = mul2(F(A.gelu_a_hi), s.hi);
    q.lo = ADD(q.lo, ADD(MUL(F(A.gelu_a_hi), s.lo), MUL(F(A.gelu_a_lo), s.hi)));
    V w = ADD(F(1.0f), q.hi);
    V we = ADD(ADD(SUB(vmaxq_f32(q.hi, F(1.0f)), w), vminq_f32(q.hi, F(1.0f))), q.lo);
    vtwo p = mul2(x, w);
    p.lo = ADD(p.lo, MUL(x, we));
    vtwo z = mul2(F(A.gelu_k_hi), p.hi);
    z.lo = ADD(z.lo, ADD(MUL(F(A.gelu_k_hi), p.lo), MUL(F(A.gelu_k_lo), p.hi)));
    return z;
}

static inline V v_gelu_tanh(V x)
{
    V xf = dn_neon_flush(x);
    V xm = vmaxq_f32(F(-12.0f), vminq_f32(xf, F(10.0f)));
    vtwo z = gelu_tanh_arg(xm);
    V zc = vminq_f32(F(80.0f), vmaxq_f32(F(-95.0f), z.hi));
    /* sigmoid2_core(zc, zc == z.hi ? z.lo : 0) */
    vexp_parts e = exp_split(neg(zc), 1);
    e.lo = SUB(e.lo, MUL(e.hi, U_F(vandq_u32(eq(zc, z.hi), AS_U(z.lo)))));
    V r = times_sigmoid(xm, sig_of_exp(e));
    r = sel(gt(xf, F(10.0f)), xf, r);
    r = sel(eq(xf, F(0.0f)), xf, r);
    return sel(isnan_(xf), nan_(), r);
}

/* gelu_poly() */
static inline vtwo gelu_poly(V uh, V ul)
{
    V vh = SUB(uh, F(0.4375f));
    V vl = ADD(SUB(uh, ADD(vh, F(0.4375f))), ul);
    V p = F(A.gelu_p[11]);
    for (int i = 10; i >= 1; i--) p = ADD(F(A.gelu_p[i]), MUL(vh, p));
    vtwo t = mul2(vh, p);
    V h = ADD(F(A.gelu_p[0]), t.hi);
    vtwo r = {h, ADD(ADD(ADD(SUB(F(A.gelu_p[0]), h), t.hi), t.lo), MUL(p, vl))};
    return r;
}

static inline vtwo mul22(vtwo a, vtwo b)
{
    vtwo p = mul2(a.hi, b.hi);
    p.lo = ADD(p.lo, ADD(MUL(a.hi, b.lo), MUL(a.lo, b.hi)));
    return p;
}

/* gelu_q() */
static inline vexp_parts gelu_q(V a)
{
    V ha = MUL(a, F(0.5f));
    V d = ADD(F(1.0f), ha);
    V de = ADD(SUB(vmaxq_f32(ha, F(1.0f)), d), vminq_f32(ha, F(1.0f)));
    VI mD = neg_i(expo(d));
    vrecip_parts rp = recip_split(mant(d), scale(de, mD));
    V yr = MUL(rp.y1, rp.r), th = ADD(rp.y1, yr);
    vtwo tau = {scale(th, mD), scale(ADD(SUB(rp.y1, th), yr), mD)};
    vtwo u = mul2(ha, tau.hi);
    vtwo R = mul22(tau, gelu_poly(u.hi, ADD(u.lo, MUL(ha, tau.lo))));
    vtwo s = mul2(a, a);
    vexp_parts e = exp_split(MUL(s.hi, F(-0.5f)), 1);
    vtwo E = {e.hi, SUB(e.lo, MUL(MUL(e.hi, s.lo), F(0.5f)))};
    vtwo q = mul22(R, E);
    vexp_parts r = {q.hi, q.lo, e.k};
    return r;
}

static inline V v_gelu(V x)
{
    V xf = dn_neon_flush(x);
    V xm = vmaxq_f32(F(-13.5f), vminq_f32(xf, F(6.0f)));
    VI Ex = expo(xm);
    V X = smant(xm);
    vexp_parts q = gelu_q(vabsq_f32(xm));
    /* gelu_core(): x < 0 */
    vtwo p = mul2(X, q.hi);
    V rn = scale(scale(ADD(p.hi, ADD(p.lo, MUL(X, q.lo))), Ex), q.k);
    /* x > 0 */
    V qh = scale(q.hi, q.k), ql = scale(q.lo, q.k);
    V h = SUB(F(1.0f), qh);
    V err = SUB(SUB(SUB(F(1.0f), h), qh), ql);
    p = mul2(X, h);
    V rp = scale(ADD(p.hi, ADD(p.lo, MUL(X, err))), Ex);
    V r = sel(lt(xm, F(0.0f)), rn, rp);
    r = sel(gt(xf, F(6.0f)), xf, r);
    r = sel(eq(xf, F(0.0f)), xf, r);
    return sel(isnan_(xf), nan_(), r);
}

static void tanh_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_tanh); }
static void gelu_tanh_v_neon(const float *x, float *y, size_t n)
{
    unary_neon(x, y, n, v_gelu_tanh);
}
static void gelu_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_gelu); }

/* ---- zero-centred and gated RMSNorm ------------------------------------------ */

static void rms0_neon(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_fp32_neon.fdot(x, x, n), n, eps);
    V vr = F(r), one = F(1.0f);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        V v = MUL(MUL(dn_neon_flush(vld1q_f32(x + i)), vr),
                  ADD(one, dn_neon_flush(vld1q_f32(w + i))));
        vst1q_f32(y + i, result(v));
    }
    for (; i < n; i++) y[i] = dn_fmul(dn_fmul(x[i], r), dn_fadd(1.0f, w[i]));
}

static void rms_gated_neon(const float *x, const float *gate, const float *w, float eps, int silu,
                           float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_fp32_neon.fdot(x, x, n), n, eps);
    V vr = F(r);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        V g = vld1q_f32(gate + i);
        g = silu ? v_silu(g) : v_sigmoid(g);
        V v = MUL(MUL(dn_neon_flush(vld1q_f32(x + i)), vr), dn_neon_flush(vld1q_f32(w + i)));
        vst1q_f32(y + i, result(MUL(v, g)));
    }
    for (; i < n; i++) {
        float g = silu ? dn_silu(gate[i]) : dn_sigmoid(gate[i]);
        y[i] = dn_fmul(dn_fmul(dn_fmul(x[i], r), w[i]), g);
    }
}

#undef A
#include "math_trig_neon.h"

const dn_math_kernels dn_math_neon = {
    .exp_v = exp_v_neon,
    .ln_v = ln_v_neon,
    .ln1p_v = ln1p_v_neon,
    .recip_v = recip_v_neon,
    .rsqrt_v = rsqrt_v_neon,
    .sigmoid_v = sigmoid_v_neon,
    .silu_v = silu_v_neon,
    .softplus_v = softplus_v_neon,
    .softmax = softmax_neon,
    .rmsnorm = rmsnorm_neon,
    .l2norm = l2norm_neon,
    .rope = rope_neon,
    .hadamard = hadamard_neon,
    .tanh_v = tanh_v_neon,
    .gelu_tanh_v = gelu_tanh_v_neon,
    .gelu_v = gelu_v_neon,
    .rms0 = rms0_neon,
    .rms_gated = rms_gated_neon,
    .sin_v = sin_v_neon,
    .cos_v = cos_v_neon,
    .sincos_v = sincos_v_neon,
    .rope_table = rope_table_neon,
};
