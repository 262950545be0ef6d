/* SPDX-License-Identifier: MIT */
/*
 * math_act_avx512.h: the AVX-512 kernels of tanh, gelu_tanh and gelu, bit
 * for bit dn_ref_tanh_v / dn_ref_gelu_tanh_v / dn_ref_gelu_v (src/math.c),
 * and the fast paths of sigmoid_v, silu_v, softplus_v and ln1p_v,
 * under the rules of math_avx512.c (scale is one vscalefps, tables read by
 * permutes). Included once, by math_avx512.c, after its sigmoid helpers
 * and before its table: the activations are their own file only to keep
 * each file readable.
 *
 * One sequence serves every lane: the clamps and the result flush are a
 * few operations in sixteen lanes, and vscalefps is exact where the
 * reference's two multiplies are. The input flush and the zero and NaN
 * fixes run only in vectors with a zero, denormal or NaN input (one
 * compare per vector: tiny_or_nan). The recip seed is a division
 * (recip_split_s). The array loops take four or eight vectors an
 * iteration (unary_groups), each through a body without branches when
 * none has an odd lane, with GCC's first scheduling pass and register-pressure
 * scheduling on (DN_INTERLEAVED): 0.74-0.91x the time (docs/math.md,
 * "Branch-free bodies"). The whole masked sequence two vectors at a time,
 * its branches included, had gained nothing (1.00-1.05x).
 */
#ifndef DN_MATH_ACT_AVX512_H
#define DN_MATH_ACT_AVX512_H

#include "math_act_ranges.h"

#define A dn_act_c

typedef struct {
    V hi, lo;
} vtwo;

/* Lanes whose input is zero, denormal or NaN. */
INLINE M tiny_or_nan(V x)
{
    return _mm512_cmp_ps_mask(_mm512_abs_ps(x), F(0x1p-126f), _CMP_NGE_UQ);
}

/* The reference's x == 0 and NaN cases, in the lanes of such inputs. */
INLINE V zero_nan_fix(V r, V xf)
{
    r = put(r, eq(xf, _mm512_setzero_ps()), xf);
    return nan_where(isnan_(xf), r);
}

/* ---- the sigmoid at the result's scale (tanh, gelu_tanh, sigmoid, silu) -- */

INLINE V seed_div(V m)
{
    return _mm512_div_ps(F(1.0f), AS_F(and_or(AS_I(m), 0xFFFF0000u, 0x8000u)));
}

/* one_minus_split's recip residual in two fused steps: math_act_avx2.h's
   recip_residual. */
INLINE V recip_residual(V m, V y1)
{
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    return _mm512_fnmadd_ps(m_lo, y1, _mm512_fnmadd_ps(m_hi, y1, F(1.0f)));
}

/* sig_of_exp() of e^-x's parts with the reciprocal taken at dh's own
   scale and ys = 2^-e y1: math_act_avx2.h's sig_scaled and its ranges
   (sigmoid_core(x) for |x| <= 64, tanh's k in [0, 29], gelu_tanh's in
   [-116, 96]). 2^-k is (127 << 23) minus k << 23, which is t's bits << 17
   with the low 23 cleared. */
typedef struct {
    V ys, r; /* 2^-e y1, r */
} vsig_scaled;

INLINE vsig_scaled sig_scaled(vexp_parts e)
{
    VI k23 = _mm512_and_si512(_mm512_slli_epi32(e.tb, 17), I(0xFF800000u));
    V t = AS_F(_mm512_sub_epi32(I(0x3F800000u), k23));
    V big = _mm512_max_ps(e.hi, t), small = _mm512_min_ps(e.hi, t);
    V dh = ADD(t, e.hi);
    V de = ADD(ADD(SUB(big, dh), small), e.lo);
    V y0 = seed_div(dh);
    V y1 = MUL(y0, SUB(F(2.0f), MUL(dh, y0)));
    vsig_scaled s;
    s.r = SUB(recip_residual(dh, y1), MUL(de, y1));
    s.ys = MUL(y1, t);
    return s;
}

INLINE V tanh_small(V x)
{
    V x2 = MUL(x, x);
    V p = ADD(F(A.tanh_p[3]), MUL(x2, F(A.tanh_p[4])));
    p = ADD(F(A.tanh_p[2]), MUL(x2, p));
    p = ADD(F(A.tanh_p[1]), MUL(x2, p));
    p = ADD(F(A.tanh_p[0]), MUL(x2, p));
    return ADD(x, MUL(MUL(x, x2), p));
}

/* tanh where no lane is zero, denormal or NaN: v_tanh's sequence, a vector
   whose lanes are all below 9/16 leaving after the polynomial
   (all_small_exits), and the array loop's fast path, which runs both parts
   for every vector so that two vectors' chains interleave. */
INLINE V tanh_seq(V x, int all_small_exits)
{
    V a = _mm512_abs_ps(x);
    V r = tanh_small(x);
    M small = lt(a, F(0x1.2p-1f));
    if (all_small_exits && small == 0xFFFF) return r;
    /* tanh_big(min(a, 10)) with x's sign: sigmoid_core(-2a) is sig_of_exp(exp_split(2a)) */
    vsig_scaled sg = sig_scaled(exp_split(MUL(F(2.0f), _mm512_min_ps(a, F(10.0f))), 1));
    V s = ADD(sg.ys, sg.ys); /* 2^(1-e) y1 */
    V h = SUB(F(1.0f), s);
    V err = SUB(SUB(F(1.0f), h), s);
    V big = ADD(h, SUB(err, MUL(s, sg.r)));
    /* results of normal inputs are normal: |tanh x| >= |x| (1 - x^2/3) */
    return _mm512_mask_blend_ps(small, _mm512_or_ps(big, sign_of(x)), r);
}

/* The vectors that leave the array loop's fast path: a lane zero, denormal
   or NaN, or every lane below 9/16 (the polynomial alone, tanh_rare). */
INLINE int tanh_all_small(V x) { return lt(_mm512_abs_ps(x), F(0x1.2p-1f)) == 0xFFFF; }

INLINE int tanh_off(V x) { return tiny_or_nan(x) != 0 || tanh_all_small(x); }

INLINE V tanh_body(V x) { return tanh_seq(x, 0); }

INLINE V v_tanh(V x)
{
    M odd = tiny_or_nan(x);
    V xf = odd ? flush(x) : x;
    V r = tanh_seq(xf, 1);
    return odd ? zero_nan_fix(r, xf) : r;
}

INLINE vtwo mul2(V a, V b)
{
    V p = MUL(a, b);
    vtwo r = {p, mul_err(a, b, p)};
    return r;
}

/* mul2(a, b) where |a b| >= 2^-78: math_act_avx2.h's mul2_fused (the
   Dekker error is exact there, and one vfmsub gives it). */
INLINE vtwo mul2_fused(V a, V b)
{
    V p = MUL(a, b);
    vtwo r = {p, _mm512_fmsub_ps(a, b, p)};
    return r;
}

/* mul2, or mul2_fused where the caller has the bound (fused). */
INLINE vtwo mul2_t(V a, V b, int fused) { return fused ? mul2_fused(a, b) : mul2(a, b); }

/* gelu_tanh_arg(); fused: its Dekker products by mul2_fused, for |x| >=
   2^-30 in every lane (x^2 >= 2^-60, a_hi x^2 >= 2^-65, the others
   larger). */
INLINE vtwo gelu_tanh_arg_t(V x, int fused)
{
    vtwo s = mul2_t(x, x, fused);
    vtwo q = mul2_t(F(A.gelu_a_hi), s.hi, fused);
    q.lo = ADD(q.lo, ADD(MUL(F(A.gelu_a_hi), s.lo), MUL(F(A.gelu_a_lo), s.hi)));
    V w = ADD(F(1.0f), q.hi);
    V we = ADD(ADD(SUB(_mm512_max_ps(q.hi, F(1.0f)), w), _mm512_min_ps(q.hi, F(1.0f))), q.lo);
    vtwo p = mul2_t(x, w, fused);
    p.lo = ADD(p.lo, MUL(x, we));
    vtwo z = mul2_t(F(A.gelu_k_hi), p.hi, fused);
    z.lo = ADD(z.lo, ADD(MUL(F(A.gelu_k_hi), p.lo), MUL(F(A.gelu_k_lo), p.hi)));
    return z;
}

/* gelu_tanh where no lane is zero, denormal or NaN; fused where every
   lane has |x| >= 2^-30 (gelu_tanh_arg_t). */
INLINE V gelu_tanh_core(V xf, int fused)
{
    V xm = _mm512_max_ps(F(-12.0f), _mm512_min_ps(xf, F(10.0f)));
    vtwo z = gelu_tanh_arg_t(xm, fused);
    V zc = _mm512_min_ps(F(80.0f), _mm512_max_ps(F(-95.0f), z.hi));
    /* sigmoid2_core(zc, zc == z.hi ? z.lo : 0) */
    vexp_parts e = exp_split(neg(zc), 1);
    e.lo = SUB(e.lo, MUL(e.hi, _mm512_maskz_mov_ps(eq(zc, z.hi), z.lo)));
    return put(flush(times_sigmoid(xm, sig_of_exp_s(e, 1))), gt(xf, F(10.0f)), xf);
}

/* |x| < 2^-30, NaN included: the lanes that leave gelu's array fast path
   (gelu_body), and where v_gelu_tanh and v_gelu take every Dekker product
   unfused. */
INLINE int gelu_off(V x)
{
    return _mm512_cmp_ps_mask(_mm512_abs_ps(x), F(0x1p-30f), _CMP_NGE_UQ) != 0;
}

/* gelu_tanh for x in [-9, 10] with |x| >= 2^-30 (x above 10 is its own
   result): math_act_avx2.h's gelu_off and gelu_tanh_body, times_sigmoid at
   the result's scale. */
INLINE int gelu_tanh_off(V x)
{
    M bad = _mm512_cmp_ps_mask(_mm512_abs_ps(x), F(0x1p-30f), _CMP_NGE_UQ);
    return (bad | lt(x, F(-9.0f))) != 0;
}

INLINE V gelu_tanh_body(V x)
{
    V xm = _mm512_min_ps(x, F(10.0f));
    vtwo z = gelu_tanh_arg_t(xm, 1);
    V zc = _mm512_min_ps(F(80.0f), z.hi);
    vexp_parts e = exp_split_s(zc, 1, 1);
    e.lo = SUB(e.lo, MUL(e.hi, _mm512_maskz_mov_ps(eq(zc, z.hi), z.lo)));
    vsig_scaled s = sig_scaled(e);
    V p = MUL(xm, s.ys);
    V r = ADD(p, ADD(_mm512_fmsub_ps(xm, s.ys, p), MUL(p, s.r))); /* mul_err, scaled */
    return put(r, gt(x, F(10.0f)), x);
}

INLINE V v_gelu_tanh(V x)
{
    M odd = tiny_or_nan(x);
    V xf = odd ? flush(x) : x;
    V r = gelu_off(xf) ? gelu_tanh_core(xf, 0) : gelu_tanh_core(xf, 1);
    return odd ? zero_nan_fix(r, xf) : r;
}

/* gelu_poly(); fused: its Dekker product by mul2_fused */
INLINE vtwo gelu_poly(V uh, V ul, int fused)
{
    V vh = SUB(uh, F(0.4375f));
    V vl = ADD(SUB(uh, ADD(vh, F(0.4375f))), ul);
    V p = F(A.gelu_p[11]);
    for (int i = 10; i >= 1; i--) p = ADD(F(A.gelu_p[i]), MUL(vh, p));
    vtwo t = mul2_t(vh, p, fused);
    V h = ADD(F(A.gelu_p[0]), t.hi);
    vtwo r = {h, ADD(ADD(ADD(SUB(F(A.gelu_p[0]), h), t.hi), t.lo), MUL(p, vl))};
    return r;
}

INLINE vtwo mul22(vtwo a, vtwo b, int fused)
{
    vtwo p = mul2_t(a.hi, b.hi, fused);
    p.lo = ADD(p.lo, ADD(MUL(a.hi, b.lo), MUL(a.lo, b.hi)));
    return p;
}

/* gelu_q(); fused: every Dekker product by mul2_fused, for 2^-30 <= a <=
   13.5 in every lane (math_act_avx2.h's gelu_q: each product is then at
   least 2^-78; R E is taken on E's unscaled part) */
INLINE vexp_parts gelu_q(V a, int fused)
{
    V ha = MUL(a, F(0.5f));
    V d = ADD(F(1.0f), ha);
    V de = ADD(SUB(_mm512_max_ps(ha, F(1.0f)), d), _mm512_min_ps(ha, F(1.0f)));
    V mD = neg(expo(d));
    vrecip_parts rp = recip_split_s(mant(d), scale(de, mD), 1, 1);
    V yr = MUL(rp.y1, rp.r), th = ADD(rp.y1, yr);
    vtwo tau = {scale(th, mD), scale(ADD(SUB(rp.y1, th), yr), mD)};
    vtwo u = mul2_t(ha, tau.hi, fused);
    vtwo R = mul22(tau, gelu_poly(u.hi, ADD(u.lo, MUL(ha, tau.lo)), fused), fused);
    vtwo s = mul2_t(a, a, fused);
    vexp_parts e = exp_split(MUL(s.hi, F(-0.5f)), 1);
    vtwo E = {e.hi, SUB(e.lo, MUL(MUL(e.hi, s.lo), F(0.5f)))};
    vtwo q = mul22(R, E, fused);
    vexp_parts r = {q.hi, q.lo, e.k, e.tb};
    return r;
}

/* gelu where no lane is zero, denormal or NaN; the Dekker products fused
   where every lane has |x| >= 2^-30 (X h: h >= 1/2 in the lanes that take
   it). */
INLINE V gelu_core(V xf, int fused)
{
    V xm = _mm512_max_ps(F(-13.5f), _mm512_min_ps(xf, F(6.0f)));
    V Ex = expo(xm);
    V X = smant(xm);
    vexp_parts q = gelu_q(_mm512_abs_ps(xm), fused);
    V k = kf(q);
    /* gelu_core(): x < 0 */
    vtwo p = mul2_t(X, q.hi, fused);
    V rn = scale(scale(ADD(p.hi, ADD(p.lo, MUL(X, q.lo))), Ex), k);
    /* x > 0 */
    V qh = scale(q.hi, k), ql = scale(q.lo, k);
    V h = SUB(F(1.0f), qh);
    V err = SUB(SUB(SUB(F(1.0f), h), qh), ql);
    p = mul2_t(X, h, fused);
    V rp = scale(ADD(p.hi, ADD(p.lo, MUL(X, err))), Ex);
    V r = flush(_mm512_mask_blend_ps(lt(xm, _mm512_setzero_ps()), rp, rn));
    return put(r, gt(xf, F(6.0f)), xf);
}

INLINE V gelu_body(V x) { return gelu_core(x, 1); }

INLINE V v_gelu(V x)
{
    M odd = tiny_or_nan(x);
    V xf = odd ? flush(x) : x;
    V r = gelu_off(xf) ? gelu_core(xf, 0) : gelu_core(xf, 1);
    return odd ? zero_nan_fix(r, xf) : r;
}

/* ---- sigmoid, silu, softplus, ln1p: fast paths --------------------------- */

/* As the AVX2 kernels' (math_act_avx2.h): one compare per vector for the
   range where the reference's special cases change nothing, the whole
   sequence out of line otherwise (v_sigmoid, v_silu, v_softplus, v_ln1p of
   math_avx512.c), the seed divided, and each power-of-two step whose values
   are all normal an integer add to the exponent field (fewer operations
   than vscalefps with its exponent as a float). */
static __attribute__((noinline)) V v_sigmoid_slow(V x) { return v_sigmoid(x); }
static __attribute__((noinline)) V v_silu_slow(V x) { return v_silu(x); }
static __attribute__((noinline)) V v_softplus_slow(V x) { return v_softplus(x); }
static __attribute__((noinline)) V v_ln1p_slow(V x) { return v_ln1p(x); }
static __attribute__((noinline)) V v_recip_slow(V x) { return v_recip(x); }

/* sigmoid for |x| <= 64 (NaN and infinities out): math_act_avx2.h's
   sigmoid_finish. */
INLINE int sigmoid_off(V x)
{
    return _mm512_cmpgt_epu32_mask(AS_I(_mm512_abs_ps(x)), I(DN_SIG_MAX_BITS)) != 0;
}

INLINE V sigmoid_body(V x)
{
    vsig_scaled s = sig_scaled(exp_split_s(x, 1, 1));
    return ADD(s.ys, MUL(s.ys, s.r));
}

/* silu for |x| in [2^-60, 64] (so never +inf, which x ys would make a
   NaN): math_act_avx2.h's silu_key and silu_finish. One unsigned test on
   |x|'s bits less 2^-60's: 0.90-0.99x silu_v's time with three compares. */
INLINE int silu_off(V x)
{
    VI d = _mm512_sub_epi32(AS_I(_mm512_abs_ps(x)), I(DN_SILU_TINY_BITS));
    return _mm512_cmpgt_epu32_mask(d, I(DN_SILU_KEY_MAX)) != 0;
}

INLINE V silu_body(V x)
{
    vsig_scaled s = sig_scaled(exp_split_s(x, 1, 1));
    V p = MUL(x, s.ys);
    return ADD(p, ADD(_mm512_fmsub_ps(x, s.ys, p), MUL(p, s.r))); /* mul_err, scaled */
}

/* math_act_avx2.h's silu_rare: lanes below 2^-60 patched to flush(x/2)
   where every lane has |x| <= 64, else the whole sequence. */
INLINE V silu_rare(V x)
{
    if (_mm512_cmp_ps_mask(_mm512_abs_ps(x), F(64.0f), _CMP_NLE_UQ)) return v_silu_slow(x);
    M tiny = _mm512_cmplt_epu32_mask(AS_I(_mm512_abs_ps(x)), I(DN_SILU_TINY_BITS));
    return _mm512_mask_blend_ps(tiny, silu_body(x), flush(MUL(x, F(0.5f))));
}

/* recip_core() of u in [2^-64, 2^64], at u's own scale:
   math_act_avx2.h's recip_pos_scaled. */
INLINE V recip_pos_scaled(V u)
{
    V y0 = seed_div(u);
    V y1 = MUL(y0, SUB(F(2.0f), MUL(u, y0)));
    return ADD(y1, MUL(y1, recip_residual(u, y1)));
}

/* recip for |x| in [2^-64, 2^64]: math_act_avx2.h's recip_key and
   recip_body (recip_pos_scaled on x itself, its sign kept). */
INLINE int recip_off(V x)
{
    VI d = _mm512_sub_epi32(AS_I(_mm512_abs_ps(x)), I(DN_RECIP_LOW_BITS));
    return _mm512_cmpgt_epu32_mask(d, I(DN_RECIP_HIGH_BITS - DN_RECIP_LOW_BITS)) != 0;
}

INLINE V recip_body(V x) { return recip_pos_scaled(x); }

/* ln1p_core() for t_hi in (-1, 2^64) normal. */
INLINE V ln1p_fast(V t_hi, V t_lo)
{
    V one = F(1.0f);
    V u = ADD(one, t_hi);
    V d = SUB(u, one);
    V err = SUB(_mm512_min_ps(t_hi, one), SUB(u, _mm512_max_ps(t_hi, one)));
    V y = recip_pos_scaled(u);
    V q = MUL(err, y);
    M near = lt(u, F(2.0f));
    V ed = _mm512_maskz_mul_ps(near, err, d);
    V rest = SUB(MUL(SUB(t_lo, ed), y), MUL(MUL(q, q), F(0.5f)));
    return ln_core(u, _mm512_mask_blend_ps(near, q, err), rest, 1);
}

/* ln1p for t in (-1, 2^64) with |t| >= 2^-126: math_act_avx2.h's. */
INLINE int ln1p_off(V t)
{
    V a = _mm512_abs_ps(t);
    M bad = _mm512_cmp_ps_mask(a, F(0x1p-126f), _CMP_NGE_UQ);
    bad |= _mm512_cmp_ps_mask(a, F(0x1p64f), _CMP_GE_OQ);
    bad |= _mm512_cmp_ps_mask(t, F(-1.0f), _CMP_LE_OQ);
    return bad != 0;
}

INLINE V ln1p_body(V t) { return ln1p_fast(t, _mm512_setzero_ps()); }

/* softplus for |u| <= 86 (no NaN): math_act_avx2.h's softplus_off,
   softplus_body and softplus_rare. */
INLINE int softplus_wide(V u)
{
    return _mm512_cmp_ps_mask(_mm512_abs_ps(u), F(86.0f), _CMP_NLE_UQ) != 0;
}
INLINE int softplus_all_big(V u) { return gt(u, F(16.0f)) == 0xFFFF; }

INLINE int softplus_off(V u) { return softplus_wide(u) || softplus_all_big(u); }

INLINE V softplus_body(V u)
{
    M big = gt(u, F(16.0f));
    vexp_parts p = exp_split(_mm512_mask_blend_ps(big, u, neg(u)), 1);
    V eh = AS_F(_mm512_add_epi32(AS_I(p.hi), _mm512_slli_epi32(p.k, 23)));
    V r = ADD(u, eh);
    V p2k = AS_F(_mm512_slli_epi32(_mm512_add_epi32(p.k, I(127)), 23));
    return _mm512_mask_blend_ps(big, ln1p_fast(eh, MUL(p.lo, p2k)), r);
}

INLINE V softplus_rare(V u)
{
    if (!softplus_wide(u) && softplus_all_big(u)) return u;
    return v_softplus_slow(u);
}

/* math_act_avx2.h's unary_groups: `group` vectors (4 or 8) an iteration,
   interleaved. With 32 registers more chains pay here than on AVX2: four
   took 0.71-0.96 of two's time in every one of these loops and sin/cos's,
   eight 0.65 (sigmoid) and 0.70 (silu) of two's, 0.89-1.1 elsewhere
   (docs/log/math.md, "More vectors an iteration"). What is left after the
   last group goes a vector at a time, the lanes past n holding x's first
   of them (not zeros), so off() sees only the array's own lanes: sin_v of
   7 elements took 1.4x the time of 16 with zeros there (bench --short).
   They are a zero-masked load and a blend: a merge-masked load in their
   place made silu_v's short calls 4-5x slower in 7 of 10 processes on the
   AMD host. */
INLINE void unary_groups(const float *x, float *y, size_t n, int group, int (*off)(V), V (*body)(V),
                         V (*slow)(V))
{
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 16 * (size_t)group <= n; i += 16 * (size_t)group) {
        V v[8], r[8];
        int bad = 0;
#pragma GCC unroll 8
        for (int k = 0; k < group; k++) {
            v[k] = _mm512_loadu_ps(x + i + 16 * k);
            bad |= off(v[k]);
        }
        if (bad) {
#pragma GCC unroll 8
            for (int k = 0; k < group; k++) r[k] = slow(v[k]);
        } else {
#pragma GCC unroll 8
            for (int k = 0; k < group; k++) r[k] = body(v[k]);
        }
#pragma GCC unroll 8
        for (int k = 0; k < group; k++) _mm512_storeu_ps(y + i + 16 * k, r[k]);
    }
    for (; i < n; i += 16) {
        M m = n - i < 16 ? (M)((1u << (n - i)) - 1u) : (M)0xFFFF;
        V a = _mm512_mask_mov_ps(_mm512_set1_ps(x[i]), m, _mm512_maskz_loadu_ps(m, x + i));
        _mm512_mask_storeu_ps(y + i, m, off(a) ? slow(a) : body(a));
    }
    leave(csr);
}

static __attribute__((noinline)) V v_tanh_slow(V x) { return v_tanh(x); }
static __attribute__((noinline)) V v_gelu_tanh_slow(V x) { return v_gelu_tanh(x); }
static __attribute__((noinline)) V v_gelu_slow(V x) { return v_gelu(x); }

/* The vectors tanh_off sends out of the fast path: those whose lanes are
   all below 9/16, none zero, denormal or NaN, by the polynomial in line;
   the others by the whole sequence out of line. */
INLINE V tanh_rare(V x)
{
    if (tiny_or_nan(x) == 0 && tanh_all_small(x)) return tanh_small(x);
    return v_tanh_slow(x);
}

DN_INTERLEAVED static void tanh_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, tanh_off, tanh_body, tanh_rare);
}
DN_INTERLEAVED static void gelu_tanh_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, gelu_tanh_off, gelu_tanh_body, v_gelu_tanh_slow);
}
DN_INTERLEAVED static void gelu_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, gelu_off, gelu_body, v_gelu_slow);
}
DN_INTERLEAVED static void sigmoid_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 8, sigmoid_off, sigmoid_body, v_sigmoid_slow);
}
DN_INTERLEAVED static void silu_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 8, silu_off, silu_body, silu_rare);
}
DN_INTERLEAVED static void softplus_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, softplus_off, softplus_body, softplus_rare);
}
DN_INTERLEAVED static void recip_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 8, recip_off, recip_body, v_recip_slow);
}
DN_INTERLEAVED static void ln1p_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, ln1p_off, ln1p_body, v_ln1p_slow);
}

#undef A

#endif /* DN_MATH_ACT_AVX512_H */
