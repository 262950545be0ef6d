/* SPDX-License-Identifier: MIT */
/*
 * math_trig_avx512.h: the AVX-512 kernels of sin, cos, sincos and the RoPE
 * table, bit for bit dn_ref_sin_v / dn_ref_cos_v / dn_ref_sincos_v /
 * dn_ref_rope_table (src/math_trig.c): the
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
 *   reads of P and a funnel shift (trig_windows_any). Against three
 *   16-lane gathers of the table, sin_v of arguments spread over
 *   [2^24, 2^128) took 0.64x the time (1.08 against 1.70 ns an element,
 *   thread CPU time, builds alternated twice; |x| <= 10 is 0.77 ns).
 * - One evaluation serves j and j + 32 (trig_eval): each sin(j*pi/32)
 *   table is one vpermt2ps (32 entries) on j mod 32 and the result's sign
 *   takes bit 5 of j (the AVX2 kernels: two vpermps, two blends and a
 *   sign flip per table).
 * - Vectors with every lane in [2^-5, 2^24) skip the small-argument, flush
 *   and NaN fixes (trig_in); the array loops run two such vectors an
 *   iteration through branch-free bodies (trig_off), as the AVX2 ones do.
 * - The 2^57 the reference adds to F is added to the top word's 32-bit
 *   product before it is shifted into place (one add for sixteen lanes,
 *   not two 64-bit adds), and the high and low words of the even and odd
 *   64-bit sums are put back in their lanes by masked vpshufd.
 * - The signs (bit 5 of j, and for sin x's) are one vpternlogd; the fixes
 *   are mask moves.
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

/* g = F + 2^57 mod 2^64 lane by lane (m the significand M), as its high
   word H (j:6 A:24 B_hi:2) and low word L (B_lo:22 Cc:10). The 2^57 is
   2^25 in the top word. */
INLINE void trig_g(VI m, VI w0, VI w1, VI w2, VI *H, VI *L)
{
    VI P0 = _mm512_add_epi32(_mm512_mullo_epi32(m, w0), I(1u << 25));
    VI ge = trig_window_product(_mm512_slli_epi64(P0, 32), m, w1, w2);
    VI go = trig_window_product(_mm512_maskz_mov_epi32(0xAAAA, P0), _mm512_srli_epi64(m, 32),
                                _mm512_srli_epi64(w1, 32), _mm512_srli_epi64(w2, 32));
    *H = _mm512_mask_shuffle_epi32(go, 0x5555, ge, _MM_PERM_DDBB);
    *L = _mm512_mask_shuffle_epi32(ge, 0xAAAA, go, _MM_PERM_CCAA);
}

/* math_trig.c's trig_reduce() from F = M w (sig the significand M, w0:w1:w2
   the window; the RoPE table passes |pos| and its K reversed), for 2^-5
   <= |x| < 2^24 and the lanes of other finite values at or above 2^-5
   (the lanes below are trig_small's, inf and NaN are replaced later). */
INLINE vtrig_arg trig_from_product(VI sig, VI w0, VI w1, VI w2)
{
    VI H, L;
    trig_g(sig, w0, w1, w2, &H, &L);
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
    vtrig_arg r;
    r.hi = h;
    r.lo = ADD(SUB(m, h), ADD(MUL(s_hi, F(T.pi32_lo)), MUL(t_lo, F(T.pi32))));
    r.j = _mm512_srli_epi32(H, 26);
    return r;
}

/* trig_from_product of a's significand M and its window */
INLINE vtrig_arg trig_reduce(V a, VI w0, VI w1, VI w2)
{
    return trig_from_product(and_or(AS_I(a), DN_FRAC_BITS, 0x800000u), w0, w1, w2);
}

/* trig_small() in the lanes below 2^-5: j = 0, r = a. */
INLINE vtrig_arg trig_small(vtrig_arg r, V a)
{
    M small = _mm512_cmplt_epu32_mask(AS_I(a), I(0x3D000000));
    V ah = hi12(a);
    r.hi = put(r.hi, small, ah);
    r.lo = put(r.lo, small, SUB(a, ah));
    r.j = _mm512_mask_mov_epi32(r.j, small, _mm512_setzero_si512());
    return r;
}

/* math_trig.c's trig_eval(a, i) for i in 0..79, as its sign and the value
   of trig_eval(a, i mod 32) with the cosines read at entry (i mod 32) + 16,
   not wrapped to 0..63: for i >= 32 each of the four table values the
   reference reads is the one read here negated (sin((k + 32) pi/32) =
   -sin(k pi/32), entry 32 + m of each table is entry m negated, tests/
   test_trig.c; its zeros are +0 in both halves). Negating every operand of
   binary32 adds, subtracts and multiplies negates every value they round
   to (round to nearest is symmetric; so are DAZ and the flush); only the
   sign of a zero can differ (an exact cancellation is +0 either way), and
   a zero's sign changes no later nonzero sum or product. The result is
   never zero (its error is below 1 ULP of sin or cos of a binary32
   argument, none of which is zero; the exhaustive sweep compares every
   input), so its negation is the reference's value to the bit. Each table
   is then one vpermt2ps on the same index (the permutes read bits 0-4),
   the sign one vpternlogd (sgn: the sign bit to xor in, i's bit 5 there,
   and for sin x's sign too): against a permute and a masked sign flip per
   table (a compare per index, two masks for the zero entries), sin_v took
   0.94x the time (decodenum-bench-math --cpu, builds alternated, twice). */
INLINE V trig_eval(vtrig_arg a, VI i, VI sgn)
{
    V S =
        _mm512_permutex2var_ps(_mm512_loadu_ps(dn_trig_s24), i, _mm512_loadu_ps(dn_trig_s24 + 16));
    V S_lo = _mm512_permutex2var_ps(_mm512_loadu_ps(dn_trig_s24_lo), i,
                                    _mm512_loadu_ps(dn_trig_s24_lo + 16));
    V Ch = _mm512_permutex2var_ps(_mm512_loadu_ps(dn_trig_s12 + 16), i,
                                  _mm512_loadu_ps(dn_trig_s12 + 32));
    V Cl = _mm512_permutex2var_ps(_mm512_loadu_ps(dn_trig_s12_lo + 16), i,
                                  _mm512_loadu_ps(dn_trig_s12_lo + 32));
    V rr = ADD(a.hi, a.lo);
    V z = MUL(rr, rr);
    V cr1 = MUL(z, ADD(F(T.cos_c2), MUL(F(T.cos_c4), z)));
    V sr3 = MUL(MUL(rr, z), ADD(F(T.sin_s3), MUL(F(T.sin_s5), z)));
    V P = MUL(Ch, a.hi);
    V s1 = ADD(S, P);
    V e1 = ADD(SUB(S, s1), P);
    V low = ADD(ADD(S_lo, e1), MUL(S, cr1));
    low = ADD(low, ADD(ADD(MUL(Ch, a.lo), MUL(Cl, ADD(rr, sr3))), MUL(Ch, sr3)));
    return AS_F(_mm512_ternarylogic_epi32(AS_I(ADD(s1, low)), sgn, I(DN_SIGN_BIT), 0x78));
}

/* the reduced |x| of each lane, and whether any lane is outside
   [2^-5, 2^24) (below, at or above, inf or NaN): then (rare) the window is
   trig_windows_any's, the lanes below 2^-5 trig_small's, and the results
   take the fixes of trig_fix. */
typedef struct {
    vtrig_arg a;
    M rare;
} vtrig_in;

/* The lanes of a vector inside [2^-5, 2^24) have a normal |x| and results
   that are normal (none is below 2^-31: sin and cos of binary32 arguments),
   so x needs no flush there, nor the results: those fixes and the window
   reads for large arguments run only in vectors that need them: sin_v took
   0.83x the time of the same kernel with the fixes on every vector, and
   sincos_v 0.88x (|x| <= 10 and <= 2^20 alike; builds alternated). A denormal x is a rare lane:
   it reads as zero wherever it is used as a number (DAZ), and sin's result
   x is flushed by trig_fix. */
INLINE vtrig_in trig_in(V x)
{
    vtrig_in t;
    V a = _mm512_abs_ps(x);
    VI ua = AS_I(a), w0, w1, w2;
    t.rare = _mm512_cmpge_epu32_mask(_mm512_sub_epi32(ua, I(0x3D000000)), I(0x0E800000));
    if (__builtin_expect(t.rare != 0, 0)) {
        trig_windows_any(ua, trig_invpi_words(), &w0, &w1, &w2);
        t.a = trig_small(trig_reduce(a, w0, w1, w2), a);
    } else {
        trig_windows_small(ua, &w0, &w1, &w2);
        t.a = trig_reduce(a, w0, w1, w2);
    }
    return t;
}

/* The rare vectors' results: x itself where |x| < 2^-12 (sin), flushed,
   NaN where x is inf or NaN. */
INLINE V trig_fix(V v, V x, int is_sin)
{
    VI ua = AS_I(_mm512_abs_ps(x));
    if (is_sin) v = put(v, _mm512_cmplt_epu32_mask(ua, I(0x39800000)), x);
    return nan_where(_mm512_cmpge_epu32_mask(ua, I(DN_EXP_BITS)), flush(v));
}

/* sin of the reduced argument with x's sign too (the sign bits xor-ed
   before the one vpternlogd of trig_eval); cos at index j + 16 */
INLINE V trig_sin_val(vtrig_arg a, V x)
{
    return trig_eval(a, a.j, _mm512_xor_si512(_mm512_slli_epi32(a.j, 26), AS_I(x)));
}

INLINE V trig_cos_val(vtrig_arg a)
{
    VI i = _mm512_add_epi32(a.j, I(16));
    return trig_eval(a, i, _mm512_slli_epi32(i, 26));
}

INLINE V trig_sin_of(const vtrig_in *t, V x)
{
    V v = trig_sin_val(t->a, x);
    return __builtin_expect(t->rare != 0, 0) ? trig_fix(v, x, 1) : v;
}

INLINE V trig_cos_of(const vtrig_in *t, V x)
{
    V v = trig_cos_val(t->a);
    return __builtin_expect(t->rare != 0, 0) ? trig_fix(v, x, 0) : v;
}

INLINE V v_sin(V x)
{
    vtrig_in t = trig_in(x);
    return trig_sin_of(&t, x);
}

INLINE V v_cos(V x)
{
    vtrig_in t = trig_in(x);
    return trig_cos_of(&t, x);
}

/* The array loops four vectors an iteration (unary_groups, interleaved):
   through the bodies below when no vector has a rare lane, else each
   through the whole sequence, out of line. */
INLINE int trig_off(V x)
{
    VI ua = AS_I(_mm512_abs_ps(x));
    return _mm512_cmpge_epu32_mask(_mm512_sub_epi32(ua, I(0x3D000000)), I(0x0E800000)) != 0;
}

INLINE vtrig_arg trig_reduce_fast(V x)
{
    V a = _mm512_abs_ps(x);
    VI w0, w1, w2;
    trig_windows_small(AS_I(a), &w0, &w1, &w2);
    return trig_reduce(a, w0, w1, w2);
}

INLINE V sin_body(V x) { return trig_sin_val(trig_reduce_fast(x), x); }

INLINE V cos_body(V x) { return trig_cos_val(trig_reduce_fast(x)); }

static __attribute__((noinline)) V v_sin_slow(V x) { return v_sin(x); }
static __attribute__((noinline)) V v_cos_slow(V x) { return v_cos(x); }

DN_INTERLEAVED static void sin_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, trig_off, sin_body, v_sin_slow);
}
DN_INTERLEAVED static void cos_v_avx512(const float *x, float *y, size_t n)
{
    unary_groups(x, y, n, 4, trig_off, cos_body, v_cos_slow);
}

/* One reduction for both; the last n mod 16 under a mask (the masked-off
   lanes reduce zeros and are not stored). Both results are computed before
   either store, so s or c may be x. */
INLINE void sincos16(const float *x, float *s, float *c, M m)
{
    V vx = _mm512_maskz_loadu_ps(m, x);
    vtrig_in t = trig_in(vx);
    V vs = trig_sin_of(&t, vx), vc = trig_cos_of(&t, vx);
    _mm512_mask_storeu_ps(s, m, vs);
    _mm512_mask_storeu_ps(c, m, vc);
}

static __attribute__((noinline)) void sincos16_slow(const float *x, float *s, float *c)
{
    sincos16(x, s, c, (M)0xFFFF);
}

/* sin_body and cos_body on one reduction */
INLINE void sincos16_fast(V x, float *s, float *c)
{
    vtrig_arg a = trig_reduce_fast(x);
    _mm512_storeu_ps(s, trig_sin_val(a, x));
    _mm512_storeu_ps(c, trig_cos_val(a));
}

/* A vector after the last pair, m lanes: the fast path unless one of
   those lanes is rare (the lanes past them hold x[0], as unary_groups'
   tails: math_act_avx512.h) */
INLINE void sincos16_tail(const float *x, float *s, float *c, M m)
{
    V a = _mm512_mask_mov_ps(_mm512_set1_ps(x[0]), m, _mm512_maskz_loadu_ps(m, x));
    if (trig_off(a)) {
        sincos16(x, s, c, m);
        return;
    }
    vtrig_arg r = trig_reduce_fast(a);
    V vs = trig_sin_val(r, a), vc = trig_cos_val(r);
    _mm512_mask_storeu_ps(s, m, vs);
    _mm512_mask_storeu_ps(c, m, vc);
}

/* As unary_groups with two vectors, with two outputs; every vector is
   loaded before its results are stored, so s or c may be x. (Four vectors
   an iteration gained nothing here: 1.05-1.09 of two's time.) */
DN_INTERLEAVED static void sincos_v_avx512(const float *x, float *s, float *c, size_t n)
{
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        V a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
        if (trig_off(a) | trig_off(b)) {
            sincos16_slow(x + i, s + i, c + i);
            sincos16_slow(x + i + 16, s + i + 16, c + i + 16);
        } else {
            sincos16_fast(a, s + i, c + i);
            sincos16_fast(b, s + i + 16, c + i + 16);
        }
    }
    for (; i < n; i += 16)
        sincos16_tail(x + i, s + i, c + i, n - i < 16 ? (M)((1u << (n - i)) - 1u) : (M)0xFFFF);
    leave(csr);
}

/* ---- the RoPE table ---------------------------------------------------------

   math_trig_avx2.h's rope_table_avx2 in sixteen lanes: the pairs' side of
   the reduction once per block (rope_pairs), then per position the
   small products' Dekker hi + lo and the others' F = |pos| K
   (trig_from_product with K's words reversed), both of the reference's
   cases in every lane and a mask move, then trig_eval at j and j + 16.
   trig_eval negates a value computed at j mod 32, which is the
   reference's wherever it is not zero; a zero result is +0 in the
   reference (math_trig_avx2.h, trig_idx: trig_sum's low part is never
   -0), so each zero is made +0 before the pair's sign goes in. Four blocks
   of pairs a position where there are 64 (their four rows independent, for
   the scheduler to interleave): one position of 64 pairs 0.82x the time of
   a block at a time, level on tables of many positions. */
typedef struct {
    V aw, sign;    /* |w| (flushed), w's sign bit */
    VI k0, k1, k2; /* K (rope_pairs) */
} vrope_pairs;

/* The high words of the sixteen 32 x 32-bit products a b */
INLINE VI mulhi_epu32(VI a, VI b)
{
    VI even = _mm512_srli_epi64(_mm512_mul_epu32(a, b), 32);
    VI odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32));
    return _mm512_mask_blend_epi32(0xAAAA, even, odd);
}

/* math_trig_avx2.h's rope_pairs in sixteen lanes: K = M V mod 2^96 as
   dn_math_rope_window forms it, V gathered (K = 0 where b < 64) */
static vrope_pairs rope_pairs(const float *w, size_t m)
{
    const M in = (M)((1u << m) - 1u);
    VI u = AS_I(flush(_mm512_maskz_loadu_ps(in, w)));
    VI ua = _mm512_and_si512(u, I(0x7FFFFFFF));
    VI idx = _mm512_sub_epi32(_mm512_srli_epi32(ua, 23), I(64));
    M live = _mm512_cmpgt_epi32_mask(idx, I(-1));
    VI i3 = _mm512_add_epi32(idx, _mm512_add_epi32(idx, idx));
    const int *tab = (const int *)&dn_trig_invpi[0][0];
    VI z = _mm512_setzero_si512();
    VI w0 = _mm512_mask_i32gather_epi32(z, live, i3, tab, 4);
    VI w1 = _mm512_mask_i32gather_epi32(z, live, i3, tab + 1, 4);
    VI w2 = _mm512_mask_i32gather_epi32(z, live, i3, tab + 2, 4);
    VI Mv = _mm512_or_si512(_mm512_and_si512(ua, I(DN_FRAC_BITS)), I(0x800000));
    VI h2 = mulhi_epu32(Mv, w2);
    VI k1 = _mm512_add_epi32(h2, _mm512_mullo_epi32(Mv, w1));
    VI k2 = _mm512_add_epi32(mulhi_epu32(Mv, w1), _mm512_mullo_epi32(Mv, w0));
    k2 = _mm512_mask_add_epi32(k2, _mm512_cmplt_epu32_mask(k1, h2), k2, I(1)); /* the carry */
    vrope_pairs q = {AS_F(ua), AS_F(_mm512_and_si512(u, I(DN_SIGN_BIT))),
                     _mm512_mullo_epi32(Mv, w2), k1, k2};
    return q;
}

/* the reference's value of trig_eval at index i (0..79): zeros made +0 */
INLINE V rope_eval(vtrig_arg a, VI i)
{
    V v = trig_eval(a, i, _mm512_slli_epi32(i, 26));
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NEQ_UQ), v);
}

/* cos and sin of position pos times the pairs q (m of them), stored */
INLINE void rope_row(const vrope_pairs *q, int32_t pos, float *cos, float *sin, M m)
{
    uint32_t P = pos < 0 ? 0u - (uint32_t)pos : (uint32_t)pos;
    V p = F((float)P);
    V a_hi = MUL(p, q->aw);
    V a_lo = mul_err(p, q->aw, a_hi);
    V h = hi12(a_hi);
    VI ua = AS_I(a_hi);
    M near = _mm512_cmplt_epu32_mask(ua, I(0x3D000000)); /* below 2^-5: j = 0 */
    M exact = _mm512_mask_cmplt_epu32_mask(eq(a_lo, _mm512_setzero_ps()), ua, I(0x39800000));
    vtrig_arg a = trig_from_product(I(P), q->k2, q->k1, q->k0);
    a.hi = put(a.hi, near, h);
    a.lo = put(a.lo, near, ADD(SUB(a_hi, h), a_lo));
    a.j = _mm512_mask_mov_epi32(a.j, near, _mm512_setzero_si512());
    V s = put(rope_eval(a, a.j), exact, a_hi); /* the sine of a small exact product */
    V sign = pos < 0 ? neg(q->sign) : q->sign;
    _mm512_mask_storeu_ps(sin, m, _mm512_xor_ps(flush(s), sign));
    _mm512_mask_storeu_ps(cos, m, flush(rope_eval(a, _mm512_add_epi32(a.j, I(16)))));
}

DN_INTERLEAVED static void rope_table_avx512(const int32_t *pos, size_t npos, const float *w,
                                             size_t npairs, float *cos, float *sin)
{
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 64 <= npairs; i += 64) {
        vrope_pairs q[4];
        for (int g = 0; g < 4; g++) q[g] = rope_pairs(w + i + 16 * g, 16);
        for (size_t k = 0; k < npos; k++)
#pragma GCC unroll 4
            for (int g = 0; g < 4; g++)
                rope_row(&q[g], pos[k], cos + k * npairs + i + 16 * g,
                         sin + k * npairs + i + 16 * g, (M)0xFFFF);
    }
    for (; i < npairs; i += 16) {
        const size_t m = npairs - i < 16 ? npairs - i : 16;
        const vrope_pairs q = rope_pairs(w + i, m);
        const M mask = (M)((1u << m) - 1u);
        for (size_t k = 0; k < npos; k++)
            rope_row(&q, pos[k], cos + k * npairs + i, sin + k * npairs + i, mask);
    }
    leave(csr);
}

#undef T

#endif
