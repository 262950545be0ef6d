/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals on AVX2: each kernel is its reference in src/math.c,
 * eight lanes at a time, operation for operation (the build passes
 * -ffp-contract=off, so nothing is fused behind the code's back; a fused
 * intrinsic stands for a reference's multiply-then-add only where the
 * product is exact, so it rounds once where the reference rounds once, to
 * the same value; exp_table's, which rebuild constants, are checked for
 * every input they can take). Tables are read with
 * gathers, except where register permutes measured faster: exp's table,
 * rebuilt from two eight-entry factors (exp_table), and the sin/cos
 * tables and windows (math_trig_avx2.h); the activations' recip seed is a
 * division (math_act_avx2.h).
 *
 * Floating-point environment: the kernels run with MXCSR = DAZ only (see
 * avx2_common.h). A product or sum may come out denormal, exactly as IEEE
 * rounding gives it; every later arithmetic operation or comparison reads it
 * as the zero of its sign that the engine would have stored. What DAZ does
 * not cover is done explicitly: an input whose bits are read (exponent,
 * fraction, table index) is flushed first, and every stored result is
 * flushed and its NaN made DN_NAN_BITS. max_ps/min_ps return their second
 * operand when either is a NaN, so clamps are written max(bound, x) to keep
 * a NaN a NaN (its lanes are replaced at the end anyway).
 */
#include "../math_kernels.h"
#include "../math_tables.h"
#include "../fp32_kernels.h"
#include "../bits.h"
#include "avx2_common.h"

#include <math.h>
#include <string.h>

typedef __m256 V;
typedef __m256i VI;

#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps
#define MUL _mm256_mul_ps
#define F(c) _mm256_set1_ps(c)
#define I(c) _mm256_set1_epi32((int)(c))
#define AS_I _mm256_castps_si256
#define AS_F _mm256_castsi256_ps
#define C dn_math_c

static inline unsigned enter(void) { return dn_avx2_enter(); }
static inline void leave(unsigned old) { __asm__ volatile("vldmxcsr %0" : : "m"(old) : "memory"); }

static inline V sel(V mask, V a, V b) { return _mm256_blendv_ps(b, a, mask); } /* mask ? a : b */
static inline V lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline V gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline V ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline V eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline V isnan_(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline V neg(V a) { return _mm256_xor_ps(a, F(-0.0f)); }

/* 2^k, -126 <= k <= 127 */
static inline V pow2i(VI k) { return AS_F(_mm256_slli_epi32(_mm256_add_epi32(k, I(127)), 23)); }

/* scale(): y * 2^floor(k/2) * 2^(k - floor(k/2)) */
static inline V scale(V y, VI k)
{
    VI k1 = _mm256_srai_epi32(k, 1);
    return MUL(MUL(y, pow2i(k1)), pow2i(_mm256_sub_epi32(k, k1)));
}

static inline V hi12(V v) { return _mm256_and_ps(v, AS_F(I(0xFFFFF000u))); }

/* math.c's one_minus_split, lane by lane. */
static inline V one_minus_split(V a_hi, V a_lo, V b_hi, V b_lo)
{
    V r = SUB(F(1.0f), MUL(a_hi, b_hi));
    r = SUB(r, MUL(a_hi, b_lo));
    r = SUB(r, MUL(a_lo, b_hi));
    return SUB(r, MUL(a_lo, b_lo));
}

/* A stored result: denormal flushed, NaN canonical. */
static inline V result(V v)
{
    v = dn_avx2_flush(v);
    return sel(isnan_(v), AS_F(I(DN_NAN_BITS)), v);
}

/* The significand 1.f of a normal v (sign dropped) and its unbiased exponent. */
static inline V mant(V v)
{
    return AS_F(_mm256_or_si256(_mm256_and_si256(AS_I(v), I(DN_FRAC_BITS)), I(0x3F800000u)));
}
static inline VI expo(V v)
{
    return _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(AS_I(v), 23), I(0xFF)), I(127));
}

/* m <= 8 elements of an array as a vector, the lanes past m zero, and a
   vector's first m lanes back to an array: the tails of the array loops,
   whose padding's results are dropped. */
static inline V tail_load(const float *x, size_t m)
{
    float buf[8] = {0};
    memcpy(buf, x, m * sizeof(float));
    return _mm256_loadu_ps(buf);
}
/* tail_load with the lanes past m holding x[0] in place of zeros: a range
   test then sees only the array's own lanes (math_groups_avx2.h) */
static inline V tail_load_rep(const float *x, size_t m)
{
    float buf[8];
    for (int k = 0; k < 8; k++) buf[k] = x[0];
    memcpy(buf, x, m * sizeof(float));
    return _mm256_loadu_ps(buf);
}
static inline void tail_store(float *y, V r, size_t m)
{
    float buf[8];
    _mm256_storeu_ps(buf, r);
    memcpy(y, buf, m * sizeof(float));
}

/* ---- exp ------------------------------------------------------------------ */

typedef struct {
    V hi, lo;
    VI k;
} vexp_parts;

/* T_hi and T_lo of 2^(j/64), j = bits 0-5 of t (the shifter's sum, whose
   low bits are n's), without reading dn_exp_table: 2^(j/64) = 2^(j1/8)
   2^(j0/64) (j = 8 j1 + j0), each factor hi + lo from dn_exp_factors by
   one vpermps on the index's low three bits. The cross terms c = Ah*Bl +
   Al*Bh (Al*Bl, below 2^-48, left out) complete the product: T_hi =
   Ah*Bh + c rounded once (vfmadd), its rest Ah*Bh - T_hi exact (vfmsub:
   its 24 significant bits lie between 2^-23 and 2^-46), and T_lo = that
   rest plus c rounded to a multiple of 2^-32 (the shifter 1.5 * 2^-9).
   2^(j/64) is nowhere within 0.002 of T_hi's ulp of a rounding boundary,
   nor 2^(j/64) - T_hi within 0.011 of 2^-32 of one, against the sum's
   error near 2^-48 (docs/log/math.md). These operations are not
   the reference's: they only rebuild its constants, and for every j they
   give exactly dn_exp_table's T_hi and T_lo (the generator replays them in
   exact arithmetic before it writes the factors; tests/test_math.c checks
   the compiled tables), so where they round, fused or not, changes no
   result. Twelve operations in place of a gather and five or of the
   64-word permute's 22 (8 vpermd, 7 blends); a form that rounded Ah*Bh
   first (P, its error by vfmsub, T_lo from P - T_hi) took fifteen with a
   shorter chain: docs/log/math.md, "The exp table as a product" and "The
   exp table in twelve operations". */
static inline void exp_table(V t, V *t_hi, V *t_lo)
{
    VI i0 = AS_I(t), i1 = _mm256_srli_epi32(AS_I(t), 3);
    V ah = _mm256_permutevar8x32_ps(_mm256_loadu_ps(dn_exp_factors[0]), i1);
    V al = _mm256_permutevar8x32_ps(_mm256_loadu_ps(dn_exp_factors[1]), i1);
    V bh = _mm256_permutevar8x32_ps(_mm256_loadu_ps(dn_exp_factors[2]), i0);
    V bl = _mm256_permutevar8x32_ps(_mm256_loadu_ps(dn_exp_factors[3]), i0);
    V c = _mm256_fmadd_ps(ah, bl, MUL(al, bh));
    V hi = _mm256_fmadd_ps(ah, bh, c);
    V rest = _mm256_fmsub_ps(ah, bh, hi);
    *t_hi = hi;
    *t_lo = SUB(ADD(ADD(rest, c), F(0x1.8p-9f)), F(0x1.8p-9f));
}

/* exp_split()'s sum before its last rounding, T e^r = t_hi + lo, for x in
   [-95, 95], and t, the shifter's sum (n in its low bits). Fused where
   exact: n*C1 is exact for |n| < 2^14 (math_tables.c), so x - n*C1 is one
   vfnmadd. n = t - shifter is x*(64/ln2) rounded to the nearest integer,
   ties to even (the shifter is even; |n| < 2^13 here), which vroundps
   gives beside t rather than after it: one addition less on the chain to
   q (exp_v 0.96x its time, "The exp table in twelve operations"). */
typedef struct {
    V t, t_hi, lo;
} vexp_sum;

/* exp_sum(x), or with negate exp_sum(-x) without forming -x: each step
   is the same operation on negated operands, which rounds to the negated
   value (nearest rounding is symmetric), so xs, nf and x - nf C1 come out
   negated and their next steps absorb the sign: t = shifter - (-xs),
   r = (-nf) C1_hi - (-x) (vfmsub) + (-nf) C1_lo. One operation fewer
   where the argument is -x (sigmoid, silu, gelu_tanh); with 2^-k from t's
   bits (exp_split_tk), sigmoid_v 0.97x the time. */
static inline vexp_sum exp_sum_s(V x, int negate)
{
    vexp_sum s;
    V xs = MUL(x, F(C.exp_inv_ln2_64));
    s.t = negate ? SUB(F(0x1.8p23f), xs) : ADD(xs, F(0x1.8p23f));
    V nf = _mm256_round_ps(xs, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = negate ? ADD(_mm256_fmsub_ps(nf, F(C.exp_ln2_64_hi), x), MUL(nf, F(C.exp_ln2_64_lo)))
                 : SUB(_mm256_fnmadd_ps(nf, F(C.exp_ln2_64_hi), x), MUL(nf, F(C.exp_ln2_64_lo)));
    V q = ADD(r, MUL(MUL(r, r), ADD(F(C.exp_c2), MUL(F(C.exp_c3), r))));
    V t_lo;
    exp_table(s.t, &s.t_hi, &t_lo);
    s.lo = ADD(t_lo, MUL(s.t_hi, q));
    return s;
}

static inline vexp_sum exp_sum(V x) { return exp_sum_s(x, 0); }

/* exp_split() of x in [-95, 95]; lo only when want_lo. */
static inline vexp_parts exp_split(V x, int want_lo)
{
    vexp_sum s = exp_sum(x);
    vexp_parts p;
    p.hi = ADD(s.t_hi, s.lo);
    p.lo = want_lo ? ADD(SUB(s.t_hi, p.hi), s.lo) : p.hi;
    p.k = _mm256_srai_epi32(_mm256_sub_epi32(AS_I(s.t), AS_I(F(0x1.8p23f))), 6);
    return p;
}

/* max(-95, min(95, x)) with a NaN kept */
static inline V clamp95(V x) { return _mm256_min_ps(F(95.0f), _mm256_max_ps(F(-95.0f), x)); }

static inline V v_exp(V x)
{
    vexp_parts p = exp_split(clamp95(x), 0);
    return sel(isnan_(x), AS_F(I(DN_NAN_BITS)), dn_avx2_flush(scale(p.hi, p.k)));
}

/* ---- ln ------------------------------------------------------------------- */

/* ln_core(x, c, c2) for positive normal finite lanes of x */
static inline V ln_core(V x, V c, V c2)
{
    VI u = AS_I(x);
    VI E = _mm256_srai_epi32(_mm256_sub_epi32(u, I(0x3F400000u)), 23);
    VI mb = _mm256_sub_epi32(u, _mm256_slli_epi32(E, 23));
    V m = AS_F(mb);
    VI j = _mm256_and_si256(_mm256_srli_epi32(mb, 16), I(127));
    V invc = _mm256_i32gather_ps(dn_ln_invc, j, 4);
    V m_hi = _mm256_and_ps(m, AS_F(I(0xFFFFFF00u)));
    V m_lo = SUB(m, m_hi);
    V s = ADD(SUB(MUL(m_hi, invc), F(1.0f)), MUL(m_lo, invc));
    V ef = _mm256_cvtepi32_ps(E);
    V hi = ADD(MUL(ef, F(C.ln2_hi)), _mm256_i32gather_ps(dn_ln_lhi, j, 4));
    V lo = ADD(MUL(ef, F(C.ln2_lo)), _mm256_i32gather_ps(dn_ln_llo, j, 4));
    V tail = MUL(MUL(s, s), ADD(F(C.ln_a2), MUL(s, ADD(F(C.ln_a3), MUL(s, F(C.ln_a4))))));
    V S = ADD(hi, s);
    V e = ADD(SUB(hi, S), s);
    V S2 = ADD(S, c);
    V e2 = ADD(SUB(S, S2), c);
    return ADD(S2, ADD(ADD(e, e2), ADD(ADD(lo, c2), tail)));
}

/* ln_core(x, c, c2) for positive normal finite lanes of x, the exact steps
   fused and L_hi, L_lo read in pairs (ln_pairs). s = m*invc - 1 is one
   vfmsub: the reference's four operations (m split at bit 8, two products,
   a difference and a sum) are exact and their sum representable (math.c),
   so the fused form rounds nothing; E*ln2_hi + L_hi one vfmadd (both
   exact). Without c and c2 (ln's +0, +0: has_c 0) the four adds that take
   them are left out: they change no value but the sign of a zero, and the
   only zero they could reach is ln 1's = +0 + (+0 + (+0 + -0)) either way.
   ln_v, ln1p_v and softplus_v run it; the other users keep ln_core. */
static inline __attribute__((always_inline)) V ln_core_paired(V x, V c, V c2, int has_c,
                                                              const float *pairs)
{
    VI u = AS_I(x);
    VI E = _mm256_srai_epi32(_mm256_sub_epi32(u, I(0x3F400000u)), 23);
    VI mb = _mm256_sub_epi32(u, _mm256_slli_epi32(E, 23));
    VI j = _mm256_and_si256(_mm256_srli_epi32(mb, 16), I(127));
    V invc = _mm256_i32gather_ps(dn_ln_invc, j, 4);
    V s = _mm256_fmsub_ps(AS_F(mb), invc, F(1.0f));
    V ef = _mm256_cvtepi32_ps(E);
    /* L_hi and L_lo side by side: two four-lane 64-bit gathers, the lanes
       ordered 0, 1, 4, 5 and 2, 3, 6, 7 so that two in-lane shuffles put
       each table's words back in order */
    VI jp = _mm256_permutevar8x32_epi32(j, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
    V g0 = AS_F(_mm256_i32gather_epi64((const long long *)pairs, _mm256_castsi256_si128(jp), 8));
    V g1 =
        AS_F(_mm256_i32gather_epi64((const long long *)pairs, _mm256_extracti128_si256(jp, 1), 8));
    V lhi = _mm256_shuffle_ps(g0, g1, _MM_SHUFFLE(2, 0, 2, 0));
    V llo = _mm256_shuffle_ps(g0, g1, _MM_SHUFFLE(3, 1, 3, 1));
    V hi = _mm256_fmadd_ps(ef, F(C.ln2_hi), lhi);
    V lo = ADD(MUL(ef, F(C.ln2_lo)), llo);
    V tail = MUL(MUL(s, s), ADD(F(C.ln_a2), MUL(s, ADD(F(C.ln_a3), MUL(s, F(C.ln_a4))))));
    V S = ADD(hi, s);
    V e = ADD(SUB(hi, S), s);
    if (!has_c) return ADD(S, ADD(e, ADD(lo, tail)));
    V S2 = ADD(S, c);
    V e2 = ADD(SUB(S, S2), c);
    return ADD(S2, ADD(ADD(e, e2), ADD(ADD(lo, c2), tail)));
}

/* dn_ln_lhi and dn_ln_llo interleaved (L_hi at the even words), made per
   call of an array form (1 KiB). */
static void ln_pairs(float pairs[256])
{
    for (size_t i = 0; i < 128; i += 8) {
        V a = _mm256_loadu_ps(dn_ln_lhi + i), b = _mm256_loadu_ps(dn_ln_llo + i);
        V lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
        _mm256_store_ps(pairs + 2 * i, _mm256_permute2f128_ps(lo, hi, 0x20));
        _mm256_store_ps(pairs + 2 * i + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    }
}

/* The array form of a vector function of the paired ln tables: whole
   vectors, then the tail through a zero-padded buffer (the padding's
   results are dropped). Inlined with `f` a constant, so it is its own loop. */
static inline __attribute__((always_inline)) void unary_paired(const float *x, float *y, size_t n,
                                                               V (*f)(V, const float *))
{
    float pairs[256] __attribute__((aligned(32)));
    ln_pairs(pairs);
    unsigned csr = enter();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i), pairs));
    if (i < n) tail_store(y + i, f(tail_load(x + i, n - i), pairs), n - i);
    leave(csr);
}

/* Whether a lane is not a positive normal finite number (exponent field 0
   or 255, or the sign set): u - 2^23 at or above 0x7F000000, unsigned. */
static inline int any_not_pos_normal(V x)
{
    VI e1 = _mm256_sub_epi32(AS_I(x), I(0x00800000u));
    VI big = _mm256_cmpeq_epi32(_mm256_max_epu32(e1, I(0x7F000000u)), e1);
    return !_mm256_testz_si256(big, big);
}

/* ln_v's kernel: ln_core_paired without c, and the special lanes as the
   reference makes them (zero and denormal -inf, +inf +inf, NaN and x < 0
   NaN; their lanes of ln_core_paired are replaced, whatever their bits
   gave). */
static inline V v_ln_fast(V x, const float *pairs)
{
    V r = ln_core_paired(x, _mm256_setzero_ps(), _mm256_setzero_ps(), 0, pairs);
    if (any_not_pos_normal(x)) {
        V xf = dn_avx2_flush(x), zero = _mm256_setzero_ps();
        r = sel(eq(xf, F(INFINITY)), F(INFINITY), r);
        r = sel(eq(xf, zero), F(-INFINITY), r);
        r = sel(_mm256_cmp_ps(xf, zero, _CMP_NGE_UQ), AS_F(I(DN_NAN_BITS)), r);
    }
    return r;
}

/* ---- recip ---------------------------------------------------------------- */

typedef struct {
    V y1, r;
} vrecip_parts;

static inline vrecip_parts recip_split(V m, V err)
{
    VI j = _mm256_and_si256(_mm256_srli_epi32(AS_I(m), 16), I(127));
    V y0 = _mm256_i32gather_ps(dn_recip_seed, j, 4);
    V y1 = MUL(y0, SUB(F(2.0f), MUL(m, y0)));
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    V y_hi = hi12(y1), y_lo = SUB(y1, y_hi);
    V r = SUB(one_minus_split(m_hi, m_lo, y_hi, y_lo), MUL(err, y1));
    vrecip_parts p = {y1, r};
    return p;
}

/* recip_core() for normal finite lanes (unflushed result) */
static inline V recip_core(V x)
{
    vrecip_parts p = recip_split(mant(x), _mm256_setzero_ps());
    V y = ADD(p.y1, MUL(p.y1, p.r));
    y = _mm256_or_ps(y, _mm256_and_ps(x, F(-0.0f)));
    return scale(y, _mm256_sub_epi32(_mm256_setzero_si256(), expo(x)));
}

static inline V v_recip(V x)
{
    V xf = dn_avx2_flush(x);
    V sign = _mm256_and_ps(xf, F(-0.0f));
    V ax = _mm256_andnot_ps(F(-0.0f), xf);
    V r = dn_avx2_flush(recip_core(xf));
    r = sel(eq(ax, F(INFINITY)), sign, r);
    r = sel(eq(ax, _mm256_setzero_ps()), _mm256_or_ps(sign, F(INFINITY)), r);
    return sel(isnan_(xf), AS_F(I(DN_NAN_BITS)), r);
}

/* ---- rsqrt ---------------------------------------------------------------- */

/* dn_rsqrt's sequence for a positive normal x: y2 with the result y2 2^-k. */
typedef struct {
    V y2;
    VI k;
} vrsqrt_parts;

static inline vrsqrt_parts rsqrt_parts(V xf)
{
    VI u = AS_I(xf);
    VI E = _mm256_sub_epi32(_mm256_srli_epi32(u, 23), I(127));
    VI p = _mm256_and_si256(E, I(1));
    VI k = _mm256_srai_epi32(_mm256_sub_epi32(E, p), 1);
    V m = AS_F(_mm256_or_si256(_mm256_and_si256(u, I(DN_FRAC_BITS)),
                               _mm256_slli_epi32(_mm256_add_epi32(p, I(127)), 23)));
    VI j =
        _mm256_or_si256(_mm256_slli_epi32(p, 6), _mm256_and_si256(_mm256_srli_epi32(u, 17), I(63)));
    V y0 = _mm256_i32gather_ps(dn_rsqrt_seed, j, 4);
    V y1 = MUL(y0, SUB(F(1.5f), MUL(F(0.5f), MUL(MUL(m, y0), y0))));
    V y_hi = hi12(y1), y_lo = SUB(y1, y_hi);
    V g_hi = MUL(y_hi, y_hi);
    V g_lo = ADD(MUL(ADD(y_hi, y_hi), y_lo), MUL(y_lo, y_lo));
    V gh_hi = hi12(g_hi), gh_lo = SUB(g_hi, gh_hi);
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    V r = SUB(one_minus_split(m_hi, m_lo, gh_hi, gh_lo), MUL(m, g_lo));
    vrsqrt_parts q = {ADD(y1, MUL(y1, MUL(F(0.5f), r))), k};
    return q;
}

static inline V v_rsqrt(V x)
{
    V xf = dn_avx2_flush(x);
    vrsqrt_parts q = rsqrt_parts(xf);
    V res = scale(q.y2, _mm256_sub_epi32(_mm256_setzero_si256(), q.k));
    V zero = _mm256_setzero_ps();
    res = sel(eq(xf, F(INFINITY)), zero, res);
    res = sel(_mm256_cmp_ps(xf, zero, _CMP_NGE_UQ), AS_F(I(DN_NAN_BITS)), res);
    res = sel(eq(xf, zero), _mm256_or_ps(_mm256_and_ps(xf, F(-0.0f)), F(INFINITY)), res);
    return res;
}

/* ---- ln1p ----------------------------------------------------------------- */

static inline V ln1p_core(V t_hi, V t_lo)
{
    V one = F(1.0f);
    V u = ADD(one, t_hi);
    V d = SUB(u, one);
    V err = SUB(_mm256_min_ps(t_hi, one), SUB(u, _mm256_max_ps(t_hi, one)));
    V y = recip_core(u);
    V q = MUL(err, y);
    V near = lt(u, F(2.0f));
    V ed = _mm256_and_ps(near, MUL(err, d)); /* near ? err*d : +0 */
    V rest = SUB(MUL(SUB(t_lo, ed), y), MUL(MUL(q, q), F(0.5f)));
    return ln_core(u, sel(near, err, q), rest);
}

static inline V v_ln1p(V t)
{
    V tf = dn_avx2_flush(t);
    V r = ln1p_core(tf, _mm256_setzero_ps());
    r = sel(eq(tf, F(INFINITY)), F(INFINITY), r);
    r = sel(eq(tf, F(-1.0f)), F(-INFINITY), r);
    r = sel(eq(tf, _mm256_setzero_ps()), tf, r);
    return sel(_mm256_cmp_ps(tf, F(-1.0f), _CMP_NGE_UQ), AS_F(I(DN_NAN_BITS)), r);
}

/* ---- sigmoid, silu -------------------------------------------------------- */

typedef struct {
    vrecip_parts y;
    VI e;
} vsig_parts;

/* sig_of_exp(): the sigmoid from e^-x's parts */
static inline vsig_parts sig_of_exp(vexp_parts p)
{
    V t = scale(F(1.0f), _mm256_sub_epi32(_mm256_setzero_si256(), p.k));
    V hi_big = ge(p.hi, t);
    V big = sel(hi_big, p.hi, t), small = sel(hi_big, t, p.hi);
    V dh = ADD(t, p.hi);
    V de = ADD(ADD(SUB(big, dh), small), p.lo);
    VI D = expo(dh);
    vsig_parts s;
    s.y = recip_split(mant(dh), scale(de, _mm256_sub_epi32(_mm256_setzero_si256(), D)));
    s.e = _mm256_add_epi32(D, p.k);
    return s;
}

/* sigmoid_core() of x in [-95, 80] */
static inline vsig_parts sigmoid_core(V x) { return sig_of_exp(exp_split(neg(x), 1)); }

static inline V v_sigmoid(V x)
{
    V xc = _mm256_min_ps(F(80.0f), _mm256_max_ps(F(-95.0f), x));
    vsig_parts s = sigmoid_core(xc);
    V y = ADD(s.y.y1, MUL(s.y.y1, s.y.r));
    V r = dn_avx2_flush(scale(y, _mm256_sub_epi32(_mm256_setzero_si256(), s.e)));
    return sel(isnan_(x), AS_F(I(DN_NAN_BITS)), r);
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
    return AS_F(
        _mm256_or_si256(_mm256_and_si256(AS_I(v), I(DN_SIGN_BIT | DN_FRAC_BITS)), I(0x3F800000u)));
}

/* times_sigmoid(): xm * sigmoid, unflushed */
static inline V times_sigmoid(V xm, vsig_parts s)
{
    V X = smant(xm);
    V p = MUL(X, s.y.y1);
    V v = ADD(p, ADD(mul_err(X, s.y.y1, p), MUL(p, s.y.r)));
    return scale(scale(v, expo(xm)), _mm256_sub_epi32(_mm256_setzero_si256(), s.e));
}

static inline V v_silu(V x)
{
    V xf = dn_avx2_flush(x);
    V xm = _mm256_max_ps(xf, F(-95.0f));
    V r = dn_avx2_flush(times_sigmoid(xm, sigmoid_core(_mm256_min_ps(xm, F(80.0f)))));
    r = sel(eq(xf, _mm256_setzero_ps()), xf, r);
    return sel(isnan_(xf), AS_F(I(DN_NAN_BITS)), r);
}

/* ---- softplus ------------------------------------------------------------- */

static inline V v_softplus(V u)
{
    V uf = dn_avx2_flush(u);
    V big = gt(uf, F(16.0f));
    /* u > 16: u + exp(-u) (exp's clamp); else exp_split(max(u, -95)) */
    V arg = sel(big, _mm256_max_ps(F(-95.0f), neg(uf)), _mm256_max_ps(F(-95.0f), uf));
    vexp_parts p = exp_split(arg, 1);
    V eh = scale(p.hi, p.k);
    V r;
    if (_mm256_movemask_ps(big) == 0xFF) {
        r = ADD(uf, eh);
    } else {
        r = ln1p_core(eh, scale(p.lo, p.k));
        r = sel(big, ADD(uf, eh), r);
    }
    return sel(isnan_(uf), AS_F(I(DN_NAN_BITS)), dn_avx2_flush(r));
}

/* ---- array forms ------------------------------------------------------------ */

/* exp_v's loop: where every lane has |x| <= 86 (so k = n div 64 is within
   [-125, 124]), the reference's clamp, flush and NaN rule change nothing and
   its two multiplies by powers of two are exact, so they are one integer
   add to the exponent field; other vectors take v_exp whole. Within that
   range the reference's operations are kept, fused only where they are
   exact, as the AVX-512 kernel does (math_avx512.c): x - n*C1 is one
   vfnmadd; the table's index and k << 23 come from t's bits (t =
   1.5*2^23 + n). 0.91x the time of the exp_split form on the AMD EPYC
   host of docs/math.md (builds alternated; "AVX2 exp_v" there). */
static inline V exp_fast(V x)
{
    vexp_sum s = exp_sum(x);
    V hi = ADD(s.t_hi, s.lo);
    /* k << 23 = bits 6-14 of n at bits 23-31: t's bits << 17 (the
       shifter's bits shift out) with the low six cleared */
    VI e = _mm256_and_si256(_mm256_slli_epi32(AS_I(s.t), 17), I(0xFF800000u));
    return AS_F(_mm256_add_epi32(AS_I(hi), e));
}

/* A lane's magnitude as an integer: every |x| above 86, an infinity or a
   NaN has larger bits than 86's, so the largest of several vectors' tells
   whether any lane is outside exp_fast's range (exp_slow). */
static inline VI abs_bits(V a) { return _mm256_andnot_si256(AS_I(F(-0.0f)), AS_I(a)); }
static inline int exp_slow(VI m)
{
    return !_mm256_testz_si256(_mm256_cmpgt_epi32(m, AS_I(F(86.0f))), m);
}

static inline V v_exp_fast(V x) { return exp_slow(abs_bits(x)) ? v_exp(x) : exp_fast(x); }

/* exp's argument: x - m (softmax), or x itself (exp_v). */
static inline V exp_arg(V x, V vm, int with_m) { return with_m ? SUB(x, vm) : x; }

/* y = exp(x - m) (with_m), else exp(x): 32 at a time under one range
   test (four vectors an iteration: 0.93x the time of two once the table
   was no longer gathered; docs/log/math.md, "The exp table as a
   product"), then eight, then the tail through a zero-padded buffer. */
static inline __attribute__((always_inline)) void exp_rows(const float *x, float m, float *y,
                                                           size_t n, int with_m)
{
    V vm = F(m);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        V a = exp_arg(_mm256_loadu_ps(x + i), vm, with_m),
          b = exp_arg(_mm256_loadu_ps(x + i + 8), vm, with_m),
          c = exp_arg(_mm256_loadu_ps(x + i + 16), vm, with_m),
          d = exp_arg(_mm256_loadu_ps(x + i + 24), vm, with_m);
        int slow = exp_slow(_mm256_max_epu32(_mm256_max_epu32(abs_bits(a), abs_bits(b)),
                                             _mm256_max_epu32(abs_bits(c), abs_bits(d))));
        _mm256_storeu_ps(y + i, slow ? v_exp(a) : exp_fast(a));
        _mm256_storeu_ps(y + i + 8, slow ? v_exp(b) : exp_fast(b));
        _mm256_storeu_ps(y + i + 16, slow ? v_exp(c) : exp_fast(c));
        _mm256_storeu_ps(y + i + 24, slow ? v_exp(d) : exp_fast(d));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, v_exp_fast(exp_arg(_mm256_loadu_ps(x + i), vm, with_m)));
    if (i < n) tail_store(y + i, v_exp(exp_arg(tail_load(x + i, n - i), vm, with_m)), n - i);
}

static void exp_v_avx2(const float *x, float *y, size_t n)
{
    unsigned csr = enter();
    exp_rows(x, 0.0f, y, n, 0);
    leave(csr);
}
static void ln_v_avx2(const float *x, float *y, size_t n) { unary_paired(x, y, n, v_ln_fast); }
/* recip_v, rsqrt_v, sigmoid_v, silu_v, softplus_v and ln1p_v: math_act_avx2.h (fast
   paths). */

/* ---- vector operations ------------------------------------------------------ */

/* y[i] = result(x[i] * a) or result((x[i] * a) * w[i]) */
static void scale_rows(const float *x, float a, const float *w, float *y, size_t n)
{
    unsigned csr = enter();
    V va = F(a);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        V v = MUL(_mm256_loadu_ps(x + i), va);
        if (w) v = MUL(v, _mm256_loadu_ps(w + i));
        _mm256_storeu_ps(y + i, result(v));
    }
    if (i < n) {
        VI m = dn_avx2_tail_mask(n - i);
        V v = MUL(_mm256_maskload_ps(x + i, m), va);
        if (w) v = MUL(v, _mm256_maskload_ps(w + i, m));
        _mm256_maskstore_ps(y + i, m, result(v));
    }
    leave(csr);
}

static float softmax_avx2(const float *x, float *y, size_t n)
{
    if (n == 0) return 0.0f;
    float mx = dn_fp32_avx2.fmax(x, n);
    unsigned csr = enter();
    exp_rows(x, mx, y, n, 1);
    leave(csr);
    float s = dn_fp32_avx2.fsum(y, n);
    scale_rows(y, dn_recip(s), NULL, y, n);
    return s;
}

static void rmsnorm_avx2(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return;
    scale_rows(x, dn_math_rms_scale(dn_fp32_avx2.fdot(x, x, n), n, eps), w, y, n);
}

static void l2norm_avx2(const float *x, float eps, float *y, size_t n)
{
    if (n == 0) return;
    scale_rows(x, dn_math_l2_scale(dn_fp32_avx2.fdot(x, x, n), eps), NULL, y, n);
}

static void rope_avx2(const float *x, size_t n, const float *cos, const float *sin, size_t npairs,
                      int neox, float *y)
{
    unsigned csr = enter();
    size_t i = 0;
    if (neox) {
        for (; i + 8 <= npairs; i += 8) {
            V x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + npairs + i);
            V c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
            V a = SUB(MUL(x0, c), MUL(x1, s));
            V b = ADD(MUL(x0, s), MUL(x1, c));
            _mm256_storeu_ps(y + i, result(a));
            _mm256_storeu_ps(y + npairs + i, result(b));
        }
    } else {
        /* four pairs a vector: P = X*C, Q = swap(X)*S; addsub gives P - Q in
           the even lanes (x0*c - x1*s) and P + Q in the odd (x1*c + x0*s) */
        for (; i + 4 <= npairs; i += 4) {
            V X = _mm256_loadu_ps(x + 2 * i);
            __m128 c4 = _mm_loadu_ps(cos + i), s4 = _mm_loadu_ps(sin + i);
            V c = _mm256_set_m128(_mm_unpackhi_ps(c4, c4), _mm_unpacklo_ps(c4, c4));
            V s = _mm256_set_m128(_mm_unpackhi_ps(s4, s4), _mm_unpacklo_ps(s4, s4));
            V P = MUL(X, c), Q = MUL(_mm256_permute_ps(X, 0xB1), s);
            _mm256_storeu_ps(y + 2 * i, result(_mm256_addsub_ps(P, Q)));
        }
    }
    leave(csr);
    /* the last pairs as the reference turns them */
    for (; i < npairs; i++) {
        size_t a = neox ? i : 2 * i, b = neox ? i + npairs : 2 * i + 1;
        float x0 = x[a], x1 = x[b];
        y[a] = dn_fsub(dn_fmul(x0, cos[i]), dn_fmul(x1, sin[i]));
        y[b] = dn_fadd(dn_fmul(x0, sin[i]), dn_fmul(x1, cos[i]));
    }
    if (y != x) memcpy(y + 2 * npairs, x + 2 * npairs, (n - 2 * npairs) * sizeof(float));
}

/* Strides 1, 2, 4 inside each eight (the reference's first three passes
   touch no element outside its eight), then each stride h >= 8 as whole
   vectors, then one pass: flush, NaN, and the inverse's 2^-log2(n). */
static void hadamard_avx2(float *x, size_t n, int inverse)
{
    if (n < 8) {
        dn_ref_hadamard(x, n, inverse);
        return;
    }
    unsigned csr = enter();
    for (size_t i = 0; i < n; i += 8) {
        V v = _mm256_loadu_ps(x + i);
        V b = _mm256_permute_ps(v, 0xB1);
        v = _mm256_blend_ps(ADD(v, b), SUB(b, v), 0xAA);
        b = _mm256_permute_ps(v, 0x4E);
        v = _mm256_blend_ps(ADD(v, b), SUB(b, v), 0xCC);
        b = _mm256_permute2f128_ps(v, v, 1);
        v = _mm256_blend_ps(ADD(v, b), SUB(b, v), 0xF0);
        _mm256_storeu_ps(x + i, v);
    }
    for (size_t h = 8; h < n; h *= 2)
        for (size_t i = 0; i < n; i += 2 * h)
            for (size_t j = i; j < i + h; j += 8) {
                V a = _mm256_loadu_ps(x + j), b = _mm256_loadu_ps(x + j + h);
                _mm256_storeu_ps(x + j, ADD(a, b));
                _mm256_storeu_ps(x + j + h, SUB(a, b));
            }
    int lg = 0;
    while (((size_t)1 << lg) < n) lg++;
    V s = F(dn_ldexp(1.0f, -lg));
    for (size_t i = 0; i < n; i += 8) {
        V v = _mm256_loadu_ps(x + i);
        if (inverse) v = MUL(v, s);
        _mm256_storeu_ps(x + i, result(v));
    }
    leave(csr);
}

#include "math_act_avx2.h"

/* ---- zero-centred and gated RMSNorm ------------------------------------------ */

/* y[i] = result((x[i] * r) * (1 + w[i])) */
static void rms0_avx2(const float *x, const float *w, float eps, float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_fp32_avx2.fdot(x, x, n), n, eps);
    unsigned csr = enter();
    V vr = F(r), one = F(1.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        V v = MUL(MUL(_mm256_loadu_ps(x + i), vr), ADD(one, _mm256_loadu_ps(w + i)));
        _mm256_storeu_ps(y + i, result(v));
    }
    if (i < n) {
        VI m = dn_avx2_tail_mask(n - i);
        V v = MUL(MUL(_mm256_maskload_ps(x + i, m), vr), ADD(one, _mm256_maskload_ps(w + i, m)));
        _mm256_maskstore_ps(y + i, m, result(v));
    }
    leave(csr);
}

#undef A

#include "math_trig_avx2.h"

const dn_math_kernels dn_math_avx2 = {
    .exp_v = exp_v_avx2,
    .ln_v = ln_v_avx2,
    .ln1p_v = ln1p_v_avx2,
    .recip_v = recip_v_avx2,
    .rsqrt_v = rsqrt_v_avx2,
    .sigmoid_v = sigmoid_v_avx2,
    .silu_v = silu_v_avx2,
    .softplus_v = softplus_v_avx2,
    .softmax = softmax_avx2,
    .rmsnorm = rmsnorm_avx2,
    .l2norm = l2norm_avx2,
    .rope = rope_avx2,
    .hadamard = hadamard_avx2,
    .tanh_v = tanh_v_avx2,
    .gelu_tanh_v = gelu_tanh_v_avx2,
    .gelu_v = gelu_v_avx2,
    .rms0 = rms0_avx2,
    .rms_gated = rms_gated_avx2,
    .sin_v = sin_v_avx2,
    .cos_v = cos_v_avx2,
    .sincos_v = sincos_v_avx2,
    .rope_table = rope_table_avx2,
};
