/* SPDX-License-Identifier: MIT */
/*
 * math_act_avx2.h: the AVX2 kernels of tanh, gelu_tanh and gelu, bit for
 * bit dn_ref_tanh_v / dn_ref_gelu_tanh_v / dn_ref_gelu_v (src/math.c), and
 * the fast paths of recip_v, rsqrt_v, sigmoid_v, silu_v, softplus_v and ln1p_v (their whole
 * sequences, for the rare vectors, are math_avx2.c's v_sigmoid etc.).
 * Included once, by math_avx2.c, after its exp, recip and sigmoid helpers
 * and before its table: the activations are their own file only to keep
 * each file readable.
 */
#ifndef DN_MATH_ACT_AVX2_H
#define DN_MATH_ACT_AVX2_H

#include "math_act_ranges.h"
#include "math_groups_avx2.h"

/* ---- tanh, gelu_tanh, gelu (math.c's, lane by lane) ------------------------- */

/* The three array forms take, per vector, a fast path when one compare finds
   every lane in the range where the reference's special cases change
   nothing (no clamp bites, no zero, denormal or NaN input, every result and
   every power-of-two step normal), and the whole sequence (v_tanh,
   v_gelu_tanh, v_gelu below) otherwise. The fast paths run the same
   operations on the same values; what they leave out or do another way:
   - scale(y, k) whose steps are all normal is exact, so it is an integer
     add to the exponent field; scale(v, k) of a small error term, whose
     result may be tiny, is one multiply by 2^k (the same rounding: the
     reference's first multiply is exact unless v 2^floor(k/2) is below
     2^-126, and then both results read as zero in the next operation,
     which is where these go);
   - the recip seed is a division (recip_seed_div);
   - a Dekker product whose value is at least 2^-78 is one vfmsub
     (mul2_fused: the reference's error is then exact, as the fused one
     is); the GELUs' fast paths start at |x| >= 2^-30 so that all of theirs
     are;
   - the exp table is formed from two eight-entry factors by register
     permutes (exp_table in math_avx2.c), not gathered;
   - the flushes, clamps and NaN selects of the inputs and results.
   Measured on the AMD EPYC host of docs/math.md (thread CPU time, the
   builds alternated in one process): see docs/log/math.md, "The
   activations' fast paths". */

#define A dn_act_c

typedef struct {
    V hi, lo;
} vtwo;

/* dn_recip_seed[j] is 2/(a + b) for [a, b) = [1 + j/128, 1 + (j+1)/128)
   rounded to binary32, which is 1/c for c = 1 + (2j + 1)/256: m with the
   fraction bits below its top seven replaced by 1000...0, exactly. So the
   seed is one correctly rounded division (MXCSR: nearest), the table's
   word for every j (the selftest checks all 128 on the CPU it runs on:
   check_math.c, check_recip_seed). On the AMD host a
   vdivps costs less than the eight-lane gather it replaces. c is one
   vpblendw of m's high half-words with 0x8000: against vpand and vpor it
   took tanh_v 0.92-0.94x, sigmoid_v and silu_v 0.98x the time, gelu_tanh_v
   the same (docs/log/math.md). */
static inline V recip_seed_div(V m)
{
    return _mm256_div_ps(F(1.0f), AS_F(_mm256_blend_epi16(AS_I(m), I(0x8000u), 0x55)));
}

/* The recip residual 1 - (m_hi + m_lo)(y_hi + y_lo) of math.c's
   recip_split (one_minus_split's four steps), for m in [1, 2) and its y1,
   in two fused steps. 1 - m_hi y_hi is exact (the product is exact and
   within a factor 2 of 1: Sterbenz), so the first two steps round once,
   at 1 - m_hi y1, which one vfnmadd gives; the last two steps, which can
   each round, give what one more vfnmadd of m_lo y1 gives for every m in
   [1, 2) (tests/test_math.c tries all 2^23; it is not a theorem, so the
   test is what allows it). Eight operations become four: sigmoid_v
   0.90-0.93x and tanh_v 0.87-0.92x the time (docs/log/math.md). */
static inline V recip_residual(V m, V y1)
{
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    return _mm256_fnmadd_ps(m_lo, y1, _mm256_fnmadd_ps(m_hi, y1, F(1.0f)));
}

/* recip_split() with the seed divided, err given, the residual fused
   (recip_residual: the same value). */
static inline vrecip_parts recip_split_div(V m, V err)
{
    V y0 = recip_seed_div(m);
    V y1 = MUL(y0, SUB(F(2.0f), MUL(m, y0)));
    V r = SUB(recip_residual(m, y1), MUL(err, y1));
    vrecip_parts p = {y1, r};
    return p;
}

/* y * 2^k where y, y 2^k and every step between are normal: the exponent
   field plus k (y's sign kept). */
static inline V scale_normal(V y, VI k)
{
    return AS_F(_mm256_add_epi32(AS_I(y), _mm256_slli_epi32(k, 23)));
}

/* exp_split()'s hi and lo, and 2^-k in place of k, of x or (negate) of -x
   (exp_sum_s), for x in [-95, 95]: k << 23 is t's bits << 17 with the low
   23 cleared (exp_fast), so 2^-k is (127 << 23) minus that, one operation
   fewer than from k. */
typedef struct {
    V hi, lo, tk; /* tk = 2^-k */
} vexp_tk;

static inline vexp_tk exp_split_tk(V x, int negate)
{
    vexp_sum s = exp_sum_s(x, negate);
    vexp_tk p;
    p.hi = ADD(s.t_hi, s.lo);
    p.lo = ADD(SUB(s.t_hi, p.hi), s.lo);
    VI k23 = _mm256_and_si256(_mm256_slli_epi32(AS_I(s.t), 17), I(0xFF800000u));
    p.tk = AS_F(_mm256_sub_epi32(I(0x3F800000u), k23));
    return p;
}

/* sig_of_exp() of exp_split_tk's parts (sigmoid_core(x) for |x| <= 64,
   where no clamp bites; tanh's k in [1, 28]; gelu_tanh's in [-116, 96]),
   with the reciprocal of dh + de taken at dh's own scale 2^D instead of at
   M = dh 2^-D: the seed of dh (its significand's bits are M's) is
   2^-D y0, the Newton step's values and y1 are 2^-D times the
   reference's, the residual's products are the reference's own
   (dh_hi y1' = m_hi y1), and de y1' is err y1; all exact because
   D <= 116 keeps 2^-D y1 normal (where D > 93, dh is 2^-k and de, e^-x's
   part, near 1). A denormal de y1' reads as zero in the
   next subtraction (DAZ), as the same product err y1 did. Then
   ys = y1' 2^-k is 2^-e y1, the result's own scale (e = D + k), so the
   last steps (sigmoid's y1 + y1 r, times_sigmoid's in silu and gelu_tanh)
   run where their results lie and no exponent step follows: the same
   roundings wherever their values are normal, and where ys r (or p r and
   the Dekker error of p = x ys) can be smaller, for x near -64 in silu,
   too small to move one; an argument, which the sweeps over all 2^32
   inputs (math_sweep_sigmoid_avx2, and gelu_tanh's) make a proof for
   these ranges: from x = -70.2 on silu's last bits differ. In place of
   ys = y1' max(2^-k, 1), the clamp min(x, 80) and the exponent step
   -max(k, 0) after: three operations fewer (sigmoid_v and silu_v times
   below). tanh takes the same parts (2^(1-e) y1 = ys + ys, exact: every
   value is normal there) in place of M, err, 2^-D and exponent steps:
   tanh_v 0.90-0.94x the time, gelu_tanh_v (x ys in place of X y1 and the
   exponent steps) 0.92-0.93x (docs/log/math.md). */
typedef struct {
    V ys, r; /* 2^-e y1, r */
} vsig_scaled;

static inline vsig_scaled sig_scaled(vexp_tk e)
{
    V t = e.tk;
    V big = _mm256_max_ps(e.hi, t), small = _mm256_min_ps(e.hi, t);
    V dh = ADD(t, e.hi);
    V de = ADD(ADD(SUB(big, dh), small), e.lo);
    V y0 = recip_seed_div(dh);
    V y1 = MUL(y0, SUB(F(2.0f), MUL(dh, y0)));
    vsig_scaled s;
    s.r = SUB(recip_residual(dh, y1), MUL(de, y1));
    s.ys = MUL(y1, t);
    return s;
}

/* Lanes outside [lo, inf] by |x| (NaN included) or below x_min: the vectors
   the fast paths leave to the whole sequence. */
static inline int not_fast(V x, V a, float lo, float x_min)
{
    V bad =
        _mm256_or_ps(_mm256_cmp_ps(a, F(lo), _CMP_NGE_UQ), _mm256_cmp_ps(x, F(x_min), _CMP_LT_OQ));
    return _mm256_movemask_ps(bad);
}

static inline V tanh_small(V x)
{
    V x2 = MUL(x, x);
    V p = ADD(F(A.tanh_p[3]), MUL(x2, F(A.tanh_p[4])));
    p = ADD(F(A.tanh_p[2]), MUL(x2, p));
    p = ADD(F(A.tanh_p[1]), MUL(x2, p));
    p = ADD(F(A.tanh_p[0]), MUL(x2, p));
    return ADD(x, MUL(MUL(x, x2), p));
}

static inline V v_tanh(V x)
{
    V xf = dn_avx2_flush(x);
    V a = _mm256_andnot_ps(F(-0.0f), xf);
    V r = tanh_small(xf);
    V small = lt(a, F(0x1.2p-1f));
    if (_mm256_movemask_ps(small) != 0xFF) {
        /* tanh_big(min(a, 10)) with x's sign: sigmoid_core(-2a) is sig_of_exp(exp_split(2a)) */
        vsig_parts sg = sig_of_exp(exp_split(MUL(F(2.0f), _mm256_min_ps(a, F(10.0f))), 1));
        V s = scale(sg.y.y1, _mm256_sub_epi32(I(1), sg.e));
        V h = SUB(F(1.0f), s);
        V err = SUB(SUB(F(1.0f), h), s);
        V big = ADD(h, SUB(err, MUL(s, sg.y.r)));
        r = sel(small, r, _mm256_or_ps(big, _mm256_and_ps(xf, F(-0.0f))));
    }
    r = sel(eq(xf, _mm256_setzero_ps()), xf, r);
    return sel(isnan_(xf), AS_F(I(DN_NAN_BITS)), dn_avx2_flush(r));
}

static inline vtwo mul2(V a, V b)
{
    V p = MUL(a, b);
    vtwo r = {p, mul_err(a, b, p)};
    return r;
}

/* mul2(a, b) where |a b| >= 2^-78: then every partial product and partial
   sum of mul_err is zero or a normal multiple of 2^-125 (each factor's
   last bit is at least 2^-23 of it), so the reference's Dekker error is
   the exact a b - p, which one vfmsub gives, rounding nothing. */
static inline vtwo mul2_fused(V a, V b)
{
    V p = MUL(a, b);
    vtwo r = {p, _mm256_fmsub_ps(a, b, p)};
    return r;
}

/* mul2, or mul2_fused where the caller has the bound (fused). */
static inline __attribute__((always_inline)) vtwo mul2_t(V a, V b, int fused)
{
    return fused ? mul2_fused(a, b) : mul2(a, b);
}

/* gelu_tanh_arg(); fused: its Dekker products by mul2_fused, for |x| >=
   2^-30 (x^2 >= 2^-60, a_hi x^2 >= 2^-65, the others larger). */
static inline __attribute__((always_inline)) vtwo gelu_tanh_arg_t(V x, int fused)
{
    vtwo s = mul2_t(x, x, fused);
    vtwo q = mul2_t(F(A.gelu_a_hi), s.hi, fused);
    q.lo = ADD(q.lo, ADD(MUL(F(A.gelu_a_hi), s.lo), MUL(F(A.gelu_a_lo), s.hi)));
    V w = ADD(F(1.0f), q.hi);
    V we = ADD(ADD(SUB(_mm256_max_ps(q.hi, F(1.0f)), w), _mm256_min_ps(q.hi, F(1.0f))), q.lo);
    vtwo p = mul2_t(x, w, fused);
    p.lo = ADD(p.lo, MUL(x, we));
    vtwo z = mul2_t(F(A.gelu_k_hi), p.hi, fused);
    z.lo = ADD(z.lo, ADD(MUL(F(A.gelu_k_hi), p.lo), MUL(F(A.gelu_k_lo), p.hi)));
    return z;
}

static inline V v_gelu_tanh(V x)
{
    V xf = dn_avx2_flush(x);
    V xm = _mm256_max_ps(F(-12.0f), _mm256_min_ps(xf, F(10.0f)));
    vtwo z = gelu_tanh_arg_t(xm, 0);
    V zc = _mm256_min_ps(F(80.0f), _mm256_max_ps(F(-95.0f), z.hi));
    /* sigmoid2_core(zc, zc == z.hi ? z.lo : 0) */
    vexp_parts e = exp_split(neg(zc), 1);
    e.lo = SUB(e.lo, MUL(e.hi, _mm256_and_ps(eq(zc, z.hi), z.lo)));
    V r = times_sigmoid(xm, sig_of_exp(e));
    r = sel(gt(xf, F(10.0f)), xf, r);
    r = sel(eq(xf, _mm256_setzero_ps()), xf, r);
    return sel(isnan_(xf), AS_F(I(DN_NAN_BITS)), dn_avx2_flush(r));
}

/* gelu_poly(); fused: its Dekker product by mul2_fused (gelu_q's fast
   path) */
static inline __attribute__((always_inline)) vtwo gelu_poly(V uh, V ul, int fused)
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

static inline __attribute__((always_inline)) vtwo mul22(vtwo a, vtwo b, int fused)
{
    vtwo p = mul2_t(a.hi, b.hi, fused);
    p.lo = ADD(p.lo, ADD(MUL(a.hi, b.lo), MUL(a.lo, b.hi)));
    return p;
}

/* gelu_q(); fast: 2^-30 <= a <= 9 (the fast path's: D = expo(d) in {0, 1,
   2}, so each scale by 2^-D is one multiply, the seed divided, exp's table
   permuted, and every Dekker product at least 2^-78, so mul2_fused: a^2 >=
   2^-60, (a/2) tau >= 2^-34, vh p >= 2^-32 or 0 (vh a multiple of 2^-25),
   tau P and R E >= 2^-62) */
static inline __attribute__((always_inline)) vexp_parts gelu_q(V a, int fast)
{
    V ha = MUL(a, F(0.5f));
    V d = ADD(F(1.0f), ha);
    V de = ADD(SUB(_mm256_max_ps(ha, F(1.0f)), d), _mm256_min_ps(ha, F(1.0f)));
    VI mD = _mm256_sub_epi32(_mm256_setzero_si256(), expo(d));
    /* fast: 2^-D is (254 << 23) minus d's exponent field, mant(d) = d 2^-D */
    V p2 = fast ? AS_F(_mm256_sub_epi32(I(0x7F000000u), _mm256_and_si256(AS_I(d), I(DN_EXP_BITS))))
                : pow2i(mD);
    vrecip_parts rp =
        fast ? recip_split_div(MUL(d, p2), MUL(de, p2)) : recip_split(mant(d), scale(de, mD));
    V yr = MUL(rp.y1, rp.r), th = ADD(rp.y1, yr);
    V tl = ADD(SUB(rp.y1, th), yr);
    vtwo tau = {fast ? MUL(th, p2) : scale(th, mD), fast ? MUL(tl, p2) : scale(tl, mD)};
    vtwo u = mul2_t(ha, tau.hi, fast);
    vtwo R = mul22(tau, gelu_poly(u.hi, ADD(u.lo, MUL(ha, tau.lo)), fast), fast);
    vtwo s = mul2_t(a, a, fast);
    vexp_parts e = exp_split(MUL(s.hi, F(-0.5f)), 1);
    vtwo E = {e.hi, SUB(e.lo, MUL(MUL(e.hi, s.lo), F(0.5f)))};
    vtwo q = mul22(R, E, fast);
    vexp_parts r = {q.hi, q.lo, e.k};
    return r;
}

static inline V v_gelu(V x)
{
    V xf = dn_avx2_flush(x);
    V xm = _mm256_max_ps(F(-13.5f), _mm256_min_ps(xf, F(6.0f)));
    VI Ex = expo(xm);
    V X = smant(xm);
    vexp_parts q = gelu_q(_mm256_andnot_ps(F(-0.0f), xm), 0);
    /* gelu_core(): x < 0 */
    vtwo p = mul2(X, q.hi);
    V rn = scale(scale(ADD(p.hi, ADD(p.lo, MUL(X, q.lo))), Ex), q.k);
    /* x > 0 */
    V qh = scale(q.hi, q.k), ql = scale(q.lo, q.k);
    V h = SUB(F(1.0f), qh);
    V err = SUB(SUB(SUB(F(1.0f), h), qh), ql);
    p = mul2(X, h);
    V rp = scale(ADD(p.hi, ADD(p.lo, MUL(X, err))), Ex);
    V r = sel(lt(xm, _mm256_setzero_ps()), rn, rp);
    r = sel(gt(xf, F(6.0f)), xf, r);
    r = sel(eq(xf, _mm256_setzero_ps()), xf, r);
    return sel(isnan_(xf), AS_F(I(DN_NAN_BITS)), dn_avx2_flush(r));
}

/* The whole sequences out of line: the rare vectors they serve would
   otherwise share the loop's registers with the fast path (its constants
   spilled and reloaded every vector). */
static __attribute__((noinline)) V v_tanh_slow(V x) { return v_tanh(x); }
static __attribute__((noinline)) V v_gelu_tanh_slow(V x) { return v_gelu_tanh(x); }
static __attribute__((noinline)) V v_gelu_slow(V x) { return v_gelu(x); }

/* tanh where every |x| >= 2^-126 (none zero, denormal or NaN). For
   |x| >= 9/16, 2|x| >= 1.125 gives k in [1, 28]: 2^-k <= 1/2 and the
   result's steps are normal. The body runs both parts for every vector, so
   that two vectors' chains interleave; the vectors whose lanes are all
   below 9/16 leave it (tanh_off) for the polynomial alone (tanh_rare). */
static inline int tanh_tiny(V a)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(a, F(0x1p-126f), _CMP_NGE_UQ));
}
static inline int tanh_all_small(V a) { return _mm256_movemask_ps(lt(a, F(0x1.2p-1f))) == 0xFF; }

static inline int tanh_off(V x)
{
    V a = _mm256_andnot_ps(F(-0.0f), x);
    return tanh_tiny(a) | tanh_all_small(a);
}

/* The vectors tanh_off sends out of the fast path: those whose lanes are
   all below 9/16, none zero, denormal or NaN, by the polynomial in line
   (decodenum-bench-math's tanh_v |x|<1/2: 0.19 ns an element; through
   v_tanh_slow, in a build tried, 0.47-0.60, and through the body 1.4);
   the others by the whole sequence out of line. */
static inline V tanh_rare(V x)
{
    V a = _mm256_andnot_ps(F(-0.0f), x);
    if (!tanh_tiny(a) && tanh_all_small(a)) return tanh_small(x);
    return v_tanh_slow(x);
}

static inline V tanh_body(V x, const float *unused)
{
    (void)unused;
    V a = _mm256_andnot_ps(F(-0.0f), x);
    V r = tanh_small(x);
    V small = lt(a, F(0x1.2p-1f));
    vsig_scaled sg = sig_scaled(exp_split_tk(MUL(F(2.0f), _mm256_min_ps(a, F(10.0f))), 0));
    V s = ADD(sg.ys, sg.ys); /* 2^(1-e) y1 */
    V h = SUB(F(1.0f), s);
    V err = SUB(SUB(F(1.0f), h), s);
    V big = ADD(h, SUB(err, MUL(s, sg.r)));
    return sel(small, r, _mm256_or_ps(big, _mm256_and_ps(x, F(-0.0f))));
}

/* gelu_tanh for x in [-9, inf] with |x| >= 2^-30: z >= -66.4, so no lower
   clamp, k in [-116, 96] and x sigmoid(z) >= 2^-63; times_sigmoid's steps
   run on x and sig_scaled's ys as silu's do (silu_finish), every Dekker
   product one vfmsub (mul2_fused; p = x ys >= 2^-63, so its error lies on
   a grid of 2^-108 or coarser): the fused products took 0.86x the time of
   the unfused path with the bound at 2^-60 (docs/math.md). */
static inline int gelu_off(V x)
{
    return not_fast(x, _mm256_andnot_ps(F(-0.0f), x), 0x1p-30f, -9.0f);
}

static inline V gelu_tanh_body(V x, const float *unused)
{
    (void)unused;
    V xm = _mm256_min_ps(x, F(10.0f));
    vtwo z = gelu_tanh_arg_t(xm, 1);
    V zc = _mm256_min_ps(F(80.0f), z.hi);
    vexp_tk e = exp_split_tk(zc, 1);
    e.lo = SUB(e.lo, MUL(e.hi, _mm256_and_ps(eq(zc, z.hi), z.lo)));
    vsig_scaled s = sig_scaled(e);
    V p = MUL(xm, s.ys);
    V r = ADD(p, ADD(_mm256_fmsub_ps(xm, s.ys, p), MUL(p, s.r)));
    return sel(gt(x, F(10.0f)), x, r);
}

/* gelu for x in [-9, inf] with |x| >= 2^-30: a <= 9, so k in [-59, 0],
   Q >= 2^-63 and x Q, x (1 - Q) and their steps are normal; the Dekker
   products are fused (gelu_q's fast form; X Q >= 2^-63, and X h with h
   >= 1/2 where its lane is taken). */
static inline vstage gelu_first(V x)
{
    vexp_parts q = gelu_q(_mm256_andnot_ps(F(-0.0f), _mm256_min_ps(x, F(6.0f))), 1);
    return (vstage){q.hi, q.lo, AS_F(q.k)};
}

static inline V gelu_finish(V x, vstage s, const float *tab)
{
    (void)tab;
    vexp_parts q = {s.a, s.b, AS_I(s.c)};
    V xm = _mm256_min_ps(x, F(6.0f));
    VI Ex = expo(xm);
    V X = smant(xm);
    vtwo p = mul2_fused(X, q.hi);
    V rn = scale_normal(ADD(p.hi, ADD(p.lo, MUL(X, q.lo))), _mm256_add_epi32(Ex, q.k));
    V qh = scale_normal(q.hi, q.k), ql = MUL(q.lo, pow2i(q.k));
    V h = SUB(F(1.0f), qh);
    V err = SUB(SUB(SUB(F(1.0f), h), qh), ql);
    p = mul2_fused(X, h);
    V rp = scale_normal(ADD(p.hi, ADD(p.lo, MUL(X, err))), Ex);
    V r = sel(lt(xm, _mm256_setzero_ps()), rn, rp);
    return sel(gt(x, F(6.0f)), x, r);
}

DN_INTERLEAVED static void tanh_v_avx2(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, NULL, (range_test){.off = tanh_off}, tanh_body, tanh_rare);
}
DN_INTERLEAVED static void gelu_tanh_v_avx2(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, NULL, (range_test){.off = gelu_off}, gelu_tanh_body, v_gelu_tanh_slow);
}
DN_INTERLEAVED static void gelu_v_avx2(const float *x, float *y, size_t n)
{
    staged_groups(x, y, n, 4, NULL, (range_test){.off = gelu_off}, gelu_first, gelu_finish,
                  v_gelu_slow);
}

/* ---- sigmoid, silu, softplus, ln1p: fast paths --------------------------- */

/* Like the three above: a range test (per vector, or one per group of a
   key: sigmoid, silu) for the range where the reference's special cases
   change nothing, the whole sequence out of line otherwise (v_sigmoid,
   v_silu, v_softplus, v_ln1p of math_avx2.c), the seed divided, the exp
   table permuted, and every power-of-two step whose values are all
   normal an integer add to the exponent field or a multiply at the
   result's own scale (sig_scaled). */
static __attribute__((noinline)) V v_sigmoid_slow(V x) { return v_sigmoid(x); }
static __attribute__((noinline)) V v_silu_slow(V x) { return v_silu(x); }
static __attribute__((noinline)) V v_softplus_slow(V x) { return v_softplus(x); }
static __attribute__((noinline)) V v_ln1p_slow(V x) { return v_ln1p(x); }
static __attribute__((noinline)) V v_recip_slow(V x) { return v_recip(x); }
static __attribute__((noinline)) V v_rsqrt_slow(V x) { return v_rsqrt(x); }

/* sigmoid for |x| <= 64 (sig_scaled): the key is |x|'s bits, and NaNs,
   infinities and every |x| above 64 have larger ones; a denormal x reads
   as the zero it flushes to in the first multiply and subtract (DAZ).
   One operation a vector and one compare a group of eight, against a
   compare and a movemask a vector for x >= -86; with sig_scaled's whole
   scale and the seed's blend, and eight vectors an iteration (four took
   1.01-1.07x the time), sigmoid_v 0.88-0.91x the time
   (docs/log/math.md, "The sigmoid family at the result's scale"). */
static inline VI abs_key(V x) { return _mm256_and_si256(AS_I(x), I(0x7FFFFFFFu)); }

/* |x|'s bits less those of a lower bound: the lanes below it wrap above
   every key a range [low, high] admits (silu, recip). */
static inline VI abs_key_from(V x, uint32_t low_bits)
{
    return _mm256_sub_epi32(abs_key(x), I(low_bits));
}

/* e^-x's parts (exp_split_tk(x, 1)): the first stage of sigmoid and silu */
static inline vstage sig_first(V x)
{
    vexp_tk e = exp_split_tk(x, 1);
    return (vstage){e.hi, e.lo, e.tk};
}

/* sigmoid from sig_first's parts */
static inline V sigmoid_finish(V x, vstage t, const float *tab)
{
    (void)x, (void)tab;
    vsig_scaled s = sig_scaled((vexp_tk){t.a, t.b, t.c});
    return ADD(s.ys, MUL(s.ys, s.r));
}

/* silu for |x| in [2^-60, 64]. The key is |x|'s bits less those of
   2^-60 (wrapping below it; NaNs and infinities land above): three
   operations a vector and one compare a group of eight, against two
   compares and a movemask a vector for [-86, 2^64] (x = +inf, whose X is
   finite in the reference, must stay out: x ys would be infinite and its
   error a NaN). times_sigmoid's steps run on x itself and ys = 2^-e y1
   (sig_scaled) in place of X = x 2^-Ex and y1: p = x ys, its Dekker
   error (one vfmsub) and p r are the reference's X y1, X y1 - p and p r
   times 2^(Ex - e), and so is their sum, the result, wherever they are
   normal; at x = -64 the result is near 2^-86, p r near 2^-106 or below
   and the Dekker error on a grid of 2^-132, which the sweep shows to
   move no rounding. With the range test and sig_scaled's whole scale,
   silu_v takes 0.94-0.96x the time (docs/log/math.md). */

static inline VI silu_key(V x) { return abs_key_from(x, DN_SILU_TINY_BITS); }

static inline V silu_finish(V x, vstage t, const float *tab)
{
    (void)tab;
    vsig_scaled s = sig_scaled((vexp_tk){t.a, t.b, t.c});
    V p = MUL(x, s.ys);
    /* mul_err(X, y1, p) is X y1 - p exactly (Dekker), which one vfmsub
       gives, scaled, rounding nothing where it is normal. */
    return ADD(p, ADD(_mm256_fmsub_ps(x, s.ys, p), MUL(p, s.r)));
}

/* A group that failed silu's range test, a vector at a time: where every
   lane has |x| <= 64 the fast path, with the lanes below 2^-60 (zeros
   and denormals among them, common in padded activations) patched: the
   reference's silu is flush(x/2) there (every such input tried,
   docs/log/math.md); else the whole sequence. A group with one zero took
   the whole sequence for all eight vectors (an array with a zero every
   17 elements: 5.0 ns an element, 1.7 with this, 1.2 without zeros). */
static inline V silu_rare(V x)
{
    VI a = abs_key(x);
    if (!_mm256_testz_si256(_mm256_cmpgt_epi32(a, I(DN_SIG_MAX_BITS)), I(-1)))
        return v_silu_slow(x);
    V tiny = AS_F(_mm256_cmpgt_epi32(I(DN_SILU_TINY_BITS), a));
    return sel(tiny, dn_avx2_flush(MUL(x, F(0.5f))), silu_finish(x, sig_first(x), NULL));
}

/* recip_core() of u in [2^-64, 2^64] (positive), at u's own scale: the
   reference takes m = u 2^-E, y1 + y1 r and then 2^-E; here the seed of u
   is 2^-E times m's (vdivps of the same significand), and y1, the
   residual's products (u_hi y1 = m_hi y1 2^-E 2^E) and y1 r follow
   scaled by 2^-E, exactly: y1 >= 2^-65 and r, 1 - m y1 on a grid of
   2^-47, is 0 or at least 2^-47, so y1 r is normal. Four integer
   operations and a multiply fewer than forming m and stepping the
   exponent after. */
static inline V recip_pos_scaled(V u)
{
    V y0 = recip_seed_div(u);
    V y1 = MUL(y0, SUB(F(2.0f), MUL(u, y0)));
    return ADD(y1, MUL(y1, recip_residual(u, y1)));
}

/* recip for |x| in [2^-64, 2^64] (no zero, denormal, infinity or NaN,
   and a normal result): recip_pos_scaled run on x itself. The reference
   takes |x|'s significand and puts x's sign on the result; every step
   here is the same operation on values of that sign (the seed's vpblendw
   keeps it), and nearest rounding is symmetric, so the result is the
   same. The key is |x|'s bits less 2^-64's (wrapping below it; NaNs and
   infinities land above). */
static inline VI recip_key(V x) { return abs_key_from(x, DN_RECIP_LOW_BITS); }

static inline V recip_body(V x, const float *unused)
{
    (void)unused;
    return recip_pos_scaled(x);
}

/* rsqrt for a positive normal x (the key: x's bits less 2^-126's, which
   negative x, zeros and denormals wrap above and infinities and NaNs
   exceed): v_rsqrt's sequence without the flush and the zero, infinity
   and NaN selects, its scale an integer add to the exponent field (y2 in
   [1/2, 1] times 2^-k with |k| <= 63 is normal). */
static inline VI rsqrt_key(V x) { return _mm256_sub_epi32(AS_I(x), I(DN_POS_NORMAL_LOW_BITS)); }

static inline V rsqrt_body(V x, const float *unused)
{
    (void)unused;
    vrsqrt_parts q = rsqrt_parts(x);
    return AS_F(_mm256_sub_epi32(AS_I(q.y2), _mm256_slli_epi32(q.k, 23)));
}

/* ln1p_core() for t_hi in (-1, 2^64) normal (u = 1 + t_hi in
   [2^-24, 2^64]: recip_pos_scaled's range). */
static inline V ln1p_fast(V t_hi, V t_lo, const float *pairs)
{
    V one = F(1.0f);
    V u = ADD(one, t_hi);
    V d = SUB(u, one);
    V err = SUB(_mm256_min_ps(t_hi, one), SUB(u, _mm256_max_ps(t_hi, one)));
    V y = recip_pos_scaled(u);
    V q = MUL(err, y);
    V near = lt(u, F(2.0f));
    V ed = _mm256_and_ps(near, MUL(err, d));
    V rest = SUB(MUL(SUB(t_lo, ed), y), MUL(MUL(q, q), F(0.5f)));
    return ln_core_paired(u, sel(near, err, q), rest, 1, pairs);
}

/* ln1p for t in (-1, 2^64) with |t| >= 2^-126 (no zero, denormal, NaN,
   infinity or t <= -1): ln1p_core(t, 0), whose result is normal. */
static inline int ln1p_off(V t)
{
    V a = _mm256_andnot_ps(F(-0.0f), t);
    V bad = _mm256_or_ps(_mm256_cmp_ps(a, F(0x1p-126f), _CMP_NGE_UQ),
                         _mm256_cmp_ps(a, F(0x1p64f), _CMP_GE_OQ));
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(t, F(-1.0f), _CMP_LE_OQ));
    return _mm256_movemask_ps(bad);
}

static inline V ln1p_body(V t, const float *pairs)
{
    return ln1p_fast(t, _mm256_setzero_ps(), pairs);
}

/* softplus for |u| <= 86 (no NaN): e^u or, past 16, e^-u has k in
   [-125, 124], so its scale is an integer add and the scale of its error
   one multiply; ln(1 + e^u) >= 2^-125 and u + e^-u are normal. The body
   runs ln1p for every vector, so that two vectors' chains interleave; the
   vectors whose lanes are all past 16 leave it (softplus_off) for
   softplus_rare. */
static inline int softplus_wide(V u)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(F(-0.0f), u), F(86.0f), _CMP_NLE_UQ));
}
static inline int softplus_all_big(V u) { return _mm256_movemask_ps(gt(u, F(16.0f))) == 0xFF; }

static inline int softplus_off(V u) { return softplus_wide(u) | softplus_all_big(u); }

static inline V softplus_body(V u, const float *pairs)
{
    V big = gt(u, F(16.0f));
    vexp_parts p = exp_split(sel(big, neg(u), u), 1);
    V eh = scale_normal(p.hi, p.k);
    V r = ADD(u, eh);
    return sel(big, r, ln1p_fast(eh, MUL(p.lo, pow2i(p.k)), pairs));
}

/* The vectors softplus_off sends out of the fast path: those whose lanes
   are all in (16, 86] are u itself (e^-u < 2^-23 is below half of u's
   ulp, 2^-20, so u + e^-u rounds to u), the others take the whole sequence
   out of line. */
static inline V softplus_rare(V u)
{
    if (!softplus_wide(u) && softplus_all_big(u)) return u;
    return v_softplus_slow(u);
}

/* sigmoid and silu: eight vectors in two stages (staged_groups), without
   the scheduling pass, which made them no faster here. */
static void sigmoid_v_avx2(const float *x, float *y, size_t n)
{
    staged_groups(x, y, n, 8, NULL, (range_test){.key = abs_key, .key_max = DN_SIG_MAX_BITS},
                  sig_first, sigmoid_finish, v_sigmoid_slow);
}
static void silu_v_avx2(const float *x, float *y, size_t n)
{
    staged_groups(x, y, n, 8, NULL, (range_test){.key = silu_key, .key_max = DN_SILU_KEY_MAX},
                  sig_first, silu_finish, silu_rare);
}
DN_INTERLEAVED static void softplus_v_avx2(const float *x, float *y, size_t n)
{
    float pairs[256] __attribute__((aligned(32)));
    ln_pairs(pairs);
    unary_groups(x, y, n, 4, pairs, (range_test){.off = softplus_off}, softplus_body,
                 softplus_rare);
}
DN_INTERLEAVED static void recip_v_avx2(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 8, NULL,
                 (range_test){.key = recip_key, .key_max = DN_RECIP_HIGH_BITS - DN_RECIP_LOW_BITS},
                 recip_body, v_recip_slow);
}
DN_INTERLEAVED static void rsqrt_v_avx2(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, NULL, (range_test){.key = rsqrt_key, .key_max = DN_POS_NORMAL_KEY_MAX},
                 rsqrt_body, v_rsqrt_slow);
}
DN_INTERLEAVED static void ln1p_v_avx2(const float *x, float *y, size_t n)
{
    float pairs[256] __attribute__((aligned(32)));
    ln_pairs(pairs);
    unary_groups(x, y, n, 2, pairs, (range_test){.off = ln1p_off}, ln1p_body, v_ln1p_slow);
}

#endif /* DN_MATH_ACT_AVX2_H */
