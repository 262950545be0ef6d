/* SPDX-License-Identifier: MIT */
/*
 * math_trig_avx512.h: the AVX-512 kernels of sin, cos and sincos, bit for
 * bit dn_ref_sin_v / dn_ref_cos_v / dn_ref_sincos_v (src/math_trig.c): the
 * steps of the AVX2 kernels (math_trig_avx2.h) in sixteen lanes, under the
 * rules of math_avx512.c (MXCSR = DAZ, nothing fused, every stored result
 * flushed and its NaN canonical). Included once, by math_avx512.c, after
 * its helpers and before its table.
 *
 * What is not a copy of the AVX2 kernels, and why:
 * - The window of 1/pi of a lane at 2^24 or above is computed too, not
 *   gathered: the table's entry for exponent b is floor(P / 2^(254 - b))
 *   mod 2^96 with P = floor(2^199/pi), eight words in one register (taken
 *   from the table's own entries), so each window word is two vpermd
 *   reads of P and a funnel shift (trig_windows_any). No lane of any
 *   input reads memory beyond the registers.
 * - The sin(j*pi/32) tables are one vpermt2ps each (32 entries) and a
 *   masked sign flip for j >= 32 (the AVX2 kernels' four vpermps and
 *   three blends).
 * - The 2^57 the reference adds to F is added to the top word's 32-bit
 *   product before it is shifted into place (one add for sixteen lanes,
 *   not two 64-bit adds), and the high and low words of the even and odd
 *   64-bit sums are put back in their lanes by masked vpshufd.
 * - sin's sign is one vpternlogd; the special lanes are mask moves.
 */
#ifndef DN_MATH_TRIG_AVX512_H
#define DN_MATH_TRIG_AVX512_H

#define T dn_trig_c

typedef struct {
    V hi, lo;
    VI j;
} vtrig_arg;

/* The window for biased exponents b <= 150, as math_trig_avx2.h's
   trig_windows: dn_trig_invpi[b - 64] is V_150 >> (150 - b) (the proof is
   there; tests/test_trig.c checks it for b = 119..150). Lanes below 2^-5
   get junk that trig_reduce replaces. */
INLINE void trig_windows_small(VI ua, VI *w0, VI *w1, VI *w2)
{
    const uint32_t *k = dn_trig_invpi[150 - 64];
    VI s = _mm512_sub_epi32(I(150), _mm512_srli_epi32(ua, 23));
    VI t = _mm512_sub_epi32(I(32), s);
    *w0 = _mm512_srlv_epi32(I(k[0]), s);
    *w1 = _mm512_or_si512(_mm512_srlv_epi32(I(k[1]), s), _mm512_sllv_epi32(I(k[0]), t));
    *w2 = _mm512_or_si512(_mm512_srlv_epi32(I(k[2]), s), _mm512_sllv_epi32(I(k[1]), t));
}

/* P = floor(2^199/pi) (< 2^198) as words 0..7, low first. The table's entry
   for b is floor(2^(b-55)/pi) mod 2^96 = floor(P / 2^(254 - b)) mod 2^96
   (floor(floor(y)/2^s) = floor(y/2^s)), so the entries for b = 254, 222,
   190, 158, 126 and 94 have P's words 0, 1, 2, 3, 4 and 5, 6, 7 as their
   low (and, for b = 94, middle and top) words. tests/test_trig.c checks
   every entry from b = 64 to 254 against P. */
INLINE VI trig_invpi_words(void)
{
    const uint32_t(*v)[3] = dn_trig_invpi;
    return _mm512_setr_epi32((int)v[190][2], (int)v[158][2], (int)v[126][2], (int)v[94][2],
                             (int)v[62][2], (int)v[30][2], (int)v[30][1], (int)v[30][0], 0, 0, 0, 0,
                             0, 0, 0, 0);
}

/* The window for any b from 122 (2^-5) to 254: bits s .. s + 95 of P,
   s = 254 - b in 0..132, word q = s / 32 and the next three (q + 3 <= 7)
   read by vpermd, shifted by s mod 32 (vpsllvd by 32 gives 0). Other
   lanes (below 2^-5, inf, NaN) get junk that is replaced later. */
INLINE void trig_windows_any(VI ua, VI P, VI *w0, VI *w1, VI *w2)
{
    VI s = _mm512_sub_epi32(I(254), _mm512_srli_epi32(ua, 23));
    VI q = _mm512_srli_epi32(s, 5);
    VI r = _mm512_and_si512(s, I(31)), t = _mm512_sub_epi32(I(32), r);
    VI p0 = _mm512_permutexvar_epi32(q, P);
    VI p1 = _mm512_permutexvar_epi32(_mm512_add_epi32(q, I(1)), P);
    VI p2 = _mm512_permutexvar_epi32(_mm512_add_epi32(q, I(2)), P);
    VI p3 = _mm512_permutexvar_epi32(_mm512_add_epi32(q, I(3)), P);
    *w2 = _mm512_or_si512(_mm512_srlv_epi32(p0, r), _mm512_sllv_epi32(p1, t));
    *w1 = _mm512_or_si512(_mm512_srlv_epi32(p1, r), _mm512_sllv_epi32(p2, t));
    *w0 = _mm512_or_si512(_mm512_srlv_epi32(p2, r), _mm512_sllv_epi32(p3, t));
}

/* F + top of one lane of each 64-bit element: math_trig.c's
   (M*w0 << 32) + M*w1 + (M*w2 >> 32) mod 2^64, top = the first term's
   word (vpmuludq reads the low 32 bits of each element). */
INLINE VI trig_window_product(VI top, VI m, VI w1, VI w2)
{
    VI p2 = _mm512_srli_epi64(_mm512_mul_epu32(m, w2), 32);
    return _mm512_add_epi64(_mm512_add_epi64(top, _mm512_mul_epu32(m, w1)), p2);
}

/* g = F + 2^57 mod 2^64 lane by lane, as its high word H (j:6 A:24 B_hi:2)
   and low word L (B_lo:22 Cc:10). The 2^57 is 2^25 in the top word. */
INLINE void trig_g(VI ua, VI w0, VI w1, VI w2, VI *H, VI *L)
{
    VI m = and_or(ua, DN_FRAC_BITS, 0x800000u); /* M, the significand */
    VI P0 = _mm512_add_epi32(_mm512_mullo_epi32(m, w0), I(1u << 25));
    VI ge = trig_window_product(_mm512_slli_epi64(P0, 32), m, w1, w2);
    VI go = trig_window_product(_mm512_maskz_mov_epi32(0xAAAA, P0), _mm512_srli_epi64(m, 32),
                                _mm512_srli_epi64(w1, 32), _mm512_srli_epi64(w2, 32));
    *H = _mm512_mask_shuffle_epi32(go, 0x5555, ge, _MM_PERM_DDBB);
    *L = _mm512_mask_shuffle_epi32(ge, 0xAAAA, go, _MM_PERM_CCAA);
}

/* math_trig.c's trig_reduce() of a = |x| from its window (finite lanes;
   the others give values that are replaced later). */
INLINE vtrig_arg trig_reduce(V a, VI w0, VI w1, VI w2)
{
    VI ua = AS_I(a), H, L;
    trig_g(ua, w0, w1, w2, &H, &L);
    VI j = _mm512_srli_epi32(H, 26);
    VI A = _mm512_and_si512(_mm512_srli_epi32(H, 2), I(0xFFFFFF));
    VI B = _mm512_ternarylogic_epi32(_mm512_slli_epi32(H, 22), _mm512_srli_epi32(L, 10),
                                     I(0xFFFFFF), 0xA8); /* (a | b) & c */
    VI Cc = _mm512_and_si512(L, I(1023));
    V fa = MUL(_mm512_cvtepi32_ps(_mm512_sub_epi32(A, I(1 << 23))), F(0x1p-24f));
    V fb = MUL(_mm512_cvtepi32_ps(B), F(0x1p-48f));
    V fc = MUL(_mm512_cvtepi32_ps(Cc), F(0x1p-58f));
    V s = ADD(fa, fb);
    V bb = SUB(s, fa);
    V e = ADD(SUB(fa, SUB(s, bb)), SUB(fb, bb));
    V s_hi = hi12(s);
    V t_lo = ADD(SUB(s, s_hi), ADD(e, fc));
    V m = MUL(s_hi, F(T.pi32_hi));
    V h = hi12(m);
    V lo = ADD(SUB(m, h), ADD(MUL(s_hi, F(T.pi32_lo)), MUL(t_lo, F(T.pi32))));
    /* |x| < 2^-5: j = 0, r = a */
    M small = _mm512_cmplt_epu32_mask(ua, I(0x3D000000));
    V ah = hi12(a);
    vtrig_arg r;
    r.hi = put(h, small, ah);
    r.lo = put(lo, small, SUB(a, ah));
    r.j = _mm512_mask_mov_epi32(j, small, _mm512_setzero_si512());
    return r;
}

/* Entry j (0..63) of a sin(j*pi/32) table: entry j mod 32 (one vpermt2ps
   reads bits 0..4) negated where j >= 32 and that entry is not zero (the
   tables' symmetry, checked by tests/test_trig.c: zero at k = 0, and at
   k = 16 in the _lo tables). flip: j in 33..63; flip16: also j != 48. */
INLINE V trig_lookup(const float *tab, VI j, M flip)
{
    V v = _mm512_permutex2var_ps(_mm512_loadu_ps(tab), j, _mm512_loadu_ps(tab + 16));
    return _mm512_mask_xor_ps(v, flip, v, F(-0.0f));
}

/* math_trig.c's trig_eval() */
INLINE V trig_eval(vtrig_arg a, VI j)
{
    VI jc = _mm512_and_si512(_mm512_add_epi32(j, I(16)), I(63));
    M fs = _mm512_cmpgt_epu32_mask(j, I(32)), fc = _mm512_cmpgt_epu32_mask(jc, I(32));
    V S = trig_lookup(dn_trig_s24, j, fs);
    V S_lo = trig_lookup(dn_trig_s24_lo, j, _mm512_mask_cmpneq_epu32_mask(fs, j, I(48)));
    V Ch = trig_lookup(dn_trig_s12, jc, fc);
    V Cl = trig_lookup(dn_trig_s12_lo, jc, _mm512_mask_cmpneq_epu32_mask(fc, jc, I(48)));
    V rr = ADD(a.hi, a.lo);
    V z = MUL(rr, rr);
    V cr1 = MUL(z, ADD(F(T.cos_c2), MUL(F(T.cos_c4), z)));
    V sr3 = MUL(MUL(rr, z), ADD(F(T.sin_s3), MUL(F(T.sin_s5), z)));
    V P = MUL(Ch, a.hi);
    V s1 = ADD(S, P);
    V e1 = ADD(SUB(S, s1), P);
    V low = ADD(ADD(S_lo, e1), MUL(S, cr1));
    low = ADD(low, ADD(ADD(MUL(Ch, a.lo), MUL(Cl, ADD(rr, sr3))), MUL(Ch, sr3)));
    return ADD(s1, low);
}

/* x flushed; NaN/inf lanes; |x| < 2^-12 lanes; the reduced |x| */
typedef struct {
    V x;
    M special, tiny;
    vtrig_arg a;
} vtrig_in;

INLINE vtrig_in trig_in(V x)
{
    vtrig_in t;
    t.x = flush(x);
    V a = _mm512_abs_ps(t.x);
    VI ua = AS_I(a), w0, w1, w2;
    t.special = _mm512_cmpge_epu32_mask(ua, I(DN_EXP_BITS));
    t.tiny = _mm512_cmplt_epu32_mask(ua, I(0x39800000));
    if (__builtin_expect(_mm512_cmpgt_epu32_mask(ua, I(0x4B7FFFFF)) != 0, 0))
        trig_windows_any(ua, trig_invpi_words(), &w0, &w1, &w2);
    else
        trig_windows_small(ua, &w0, &w1, &w2);
    t.a = trig_reduce(a, w0, w1, w2);
    return t;
}

/* a stored result: flushed, NaN where the input was inf or NaN */
INLINE V trig_out(V v, M special) { return nan_where(special, flush(v)); }

/* sin: the value with x's sign (one vpternlogd: v ^ (x & sign bit)), x
   itself where |x| < 2^-12 */
INLINE V trig_sin_of(const vtrig_in *t)
{
    VI v = _mm512_ternarylogic_epi32(AS_I(trig_eval(t->a, t->a.j)), AS_I(t->x), I(DN_SIGN_BIT),
                                     0x78); /* a ^ (b & c) */
    return trig_out(put(AS_F(v), t->tiny, t->x), t->special);
}

INLINE V trig_cos_of(const vtrig_in *t)
{
    VI jc = _mm512_and_si512(_mm512_add_epi32(t->a.j, I(16)), I(63));
    return trig_out(trig_eval(t->a, jc), t->special);
}

INLINE V v_sin(V x)
{
    vtrig_in t = trig_in(x);
    return trig_sin_of(&t);
}

INLINE V v_cos(V x)
{
    vtrig_in t = trig_in(x);
    return trig_cos_of(&t);
}

static void sin_v_avx512(const float *x, float *y, size_t n) { unary_avx512(x, y, n, v_sin); }
static void cos_v_avx512(const float *x, float *y, size_t n) { unary_avx512(x, y, n, v_cos); }

/* One reduction for both; the last n mod 16 under a mask (the masked-off
   lanes reduce zeros and are not stored). Both results are computed before
   either store, so s or c may be x. */
INLINE void sincos16(const float *x, float *s, float *c, M m)
{
    vtrig_in t = trig_in(_mm512_maskz_loadu_ps(m, x));
    V vs = trig_sin_of(&t), vc = trig_cos_of(&t);
    _mm512_mask_storeu_ps(s, m, vs);
    _mm512_mask_storeu_ps(c, m, vc);
}

static void sincos_v_avx512(const float *x, float *s, float *c, size_t n)
{
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) sincos16(x + i, s + i, c + i, (M)0xFFFF);
    if (i < n) sincos16(x + i, s + i, c + i, (M)((1u << (n - i)) - 1u));
    leave(csr);
}

#undef T

#endif
