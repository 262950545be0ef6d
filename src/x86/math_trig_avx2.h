/* SPDX-License-Identifier: MIT */
/*
 * math_trig_avx2.h: the AVX2 kernels of sin, cos, sincos and the RoPE table,
 * bit for bit dn_ref_sin_v / dn_ref_cos_v / dn_ref_sincos_v /
 * dn_ref_rope_table (src/math_trig.c). Included
 * once, by math_avx2.c, after its vector helpers and before its table:
 * the trigonometry is its own file only to keep each file readable. The
 * array loops take four vectors an iteration in two stages (the
 * reductions, then the evaluations) through branch-free code when every
 * lane lies in [2^-5, 2^24) (trig_off; docs/math.md, "Two chains").
 */
#ifndef DN_MATH_TRIG_AVX2_H
#define DN_MATH_TRIG_AVX2_H

/* ---- sin, cos ------------------------------------------------------------- */

#define T dn_trig_c

typedef struct {
    V hi, lo;
    VI j;
} vtrig_arg;

/* math.c's F = (M*w0 << 32) + M*w1 + (M*w2 >> 32) mod 2^64 of one lane of
   each 64-bit element (mul_epu32 reads the low 32 bits of each): p0 is
   (M*w0 mod 2^32) << 32, from one vpmulld for all eight lanes. */
static inline VI trig_window_product(VI p0, VI M, VI w1, VI w2)
{
    VI p2 = _mm256_srli_epi64(_mm256_mul_epu32(M, w2), 32);
    return _mm256_add_epi64(_mm256_add_epi64(p0, _mm256_mul_epu32(M, w1)), p2);
}

/* The window of 1/pi for each lane's exponent, dn_trig_invpi[b - 64]
   (b the biased exponent of a = |x|), as three 32-bit words.

   Below 2^24 (b <= 150) it is computed, not read: the table's entry is
   V_b = floor(2^(b-55)/pi) mod 2^96, and for b <= 150 the value
   2^(b-55)/pi < 2^94 needs no reduction mod 2^96, so V_b =
   floor(2^95/pi / 2^s) = floor(V_150 / 2^s) = V_150 >> s with s = 150 - b
   (floor(floor(y)/2^s) = floor(y/2^s) for y >= 0 and an integer s >= 0).
   For 0 <= s <= 31 that is three word shifts of V_150 with the bits crossing
   the word boundaries or-ed in (vpsllvd of 32 gives 0, so s = 0 needs no
   case); |x| >= 2^-5 has b >= 122, s <= 28, and the lanes below 2^-5 (any
   s, the shifts then give 0 or junk) are replaced by trig_small's value in
   trig_reduce. The same integers as the table's, so the same F, j and r
   to the bit; tests/test_trig.c checks the identity against the table for
   every b from 119 to 150. A vector with a lane at 2^24 or above (or inf,
   NaN) reads the table with gathers: on the AMD host of docs/math.md the
   three gathers were most of the reduction's time. */
static inline void trig_windows_shift(VI ua, VI *w0, VI *w1, VI *w2)
{
    const uint32_t *k = dn_trig_invpi[150 - 64];
    VI s = _mm256_sub_epi32(I(150), _mm256_srli_epi32(ua, 23));
    VI t = _mm256_sub_epi32(I(32), s);
    *w0 = _mm256_srlv_epi32(I(k[0]), s);
    *w1 = _mm256_or_si256(_mm256_srlv_epi32(I(k[1]), s), _mm256_sllv_epi32(I(k[0]), t));
    *w2 = _mm256_or_si256(_mm256_srlv_epi32(I(k[2]), s), _mm256_sllv_epi32(I(k[1]), t));
}

static inline void trig_windows(VI ua, VI *w0, VI *w1, VI *w2)
{
    VI big = _mm256_cmpgt_epi32(ua, I(0x4B7FFFFF)); /* |x| >= 2^24 or inf/NaN */
    if (_mm256_movemask_ps(AS_F(big))) {
        VI idx = _mm256_sub_epi32(_mm256_srli_epi32(ua, 23), I(64));
        idx = _mm256_min_epi32(_mm256_max_epi32(idx, I(0)), I(190));
        VI i3 = _mm256_add_epi32(idx, _mm256_add_epi32(idx, idx));
        const int *tab = (const int *)&dn_trig_invpi[0][0];
        *w0 = _mm256_i32gather_epi32(tab, i3, 4);
        *w1 = _mm256_i32gather_epi32(tab + 1, i3, 4);
        *w2 = _mm256_i32gather_epi32(tab + 2, i3, 4);
        return;
    }
    trig_windows_shift(ua, w0, w1, w2);
}

/* math.c's trig_reduce() of a = |x| (finite lanes; other lanes give values
   that are replaced later) from its significand M and window w0:w1:w2 (the
   RoPE table's reduction takes the same steps: rope_reduce_v), and from F
   itself rather than g = F + 2^57: j =
   (F + 2^57) >> 58 is (H + 2^25) >> 26 of F's high word H, and A - 2^23 (A
   = g's bits 34..57) is F's bits 34..57 read as a signed 24-bit integer
   (adding 2^57 flips bit 57 alone: A = A' xor 2^23, and (A' xor 2^23) -
   2^23 is A' in two's complement), one shift left and one arithmetic
   shift right; B and Cc lie below bit 57, the same in F and g. j and A -
   2^23 take four operations a vector where forming g and reading them
   from it took six. */
static inline vtrig_arg trig_from_product(VI M, VI w0, VI w1, VI w2)
{
    VI P0 = _mm256_mullo_epi32(M, w0);
    VI fe = trig_window_product(_mm256_slli_epi64(P0, 32), M, w1, w2);
    VI fo = trig_window_product(
        _mm256_and_si256(P0, _mm256_set1_epi64x((long long)0xFFFFFFFF00000000ull)),
        _mm256_srli_epi64(M, 32), _mm256_srli_epi64(w1, 32), _mm256_srli_epi64(w2, 32));
    /* F's high and low words, lane by lane: H = j':6 A':24 B_hi:2, L = B_lo:22 Cc:10 */
    VI H = _mm256_blend_epi32(_mm256_srli_epi64(fe, 32), fo, 0xAA);
    VI L = _mm256_blend_epi32(fe, _mm256_slli_epi64(fo, 32), 0xAA);
    VI j = _mm256_srli_epi32(_mm256_add_epi32(H, I(1 << 25)), 26);
    VI A = _mm256_srai_epi32(_mm256_slli_epi32(H, 6), 8); /* A - 2^23 */
    VI B = _mm256_and_si256(_mm256_or_si256(_mm256_slli_epi32(H, 22), _mm256_srli_epi32(L, 10)),
                            I(0xFFFFFF));
    VI Cc = _mm256_and_si256(L, I(1023));
    V fa = MUL(_mm256_cvtepi32_ps(A), F(0x1p-24f));
    V fb = MUL(_mm256_cvtepi32_ps(B), F(0x1p-48f));
    V fc = MUL(_mm256_cvtepi32_ps(Cc), F(0x1p-58f));
    V s = ADD(fa, fb);
    V bb = SUB(s, fa);
    V e = ADD(SUB(fa, SUB(s, bb)), SUB(fb, bb));
    V s_hi = hi12(s);
    V t_lo = ADD(SUB(s, s_hi), ADD(e, fc));
    V m = MUL(s_hi, F(T.pi32_hi));
    V h = hi12(m);
    V lo = ADD(SUB(m, h), ADD(MUL(s_hi, F(T.pi32_lo)), MUL(t_lo, F(T.pi32))));
    vtrig_arg r = {h, lo, j};
    return r;
}

/* trig_from_product of a's significand and its window */
static inline vtrig_arg trig_reduce_w(V a, VI w0, VI w1, VI w2)
{
    VI M = _mm256_or_si256(_mm256_and_si256(AS_I(a), I(DN_FRAC_BITS)), I(0x800000));
    return trig_from_product(M, w0, w1, w2);
}

static inline vtrig_arg trig_reduce(V a)
{
    VI ua = AS_I(a);
    VI w0, w1, w2;
    trig_windows(ua, &w0, &w1, &w2);
    vtrig_arg g = trig_reduce_w(a, w0, w1, w2);
    /* |x| < 2^-5: j = 0, r = a */
    V small = AS_F(_mm256_cmpgt_epi32(I(0x3D000000), ua));
    V ah = hi12(a);
    vtrig_arg r;
    r.hi = sel(small, ah, g.hi);
    r.lo = sel(small, SUB(a, ah), g.lo);
    r.j = _mm256_andnot_si256(AS_I(small), g.j);
    return r;
}

/* Entry j (0..63) of a 64-entry sin(j*pi/32) table from registers, not
   gathers: entries 32..63 are entries 0..31 negated except where those are
   zero (+0 in both halves), and entry 32 - k is entry k (sin's symmetry
   about pi/2, bit for bit in every table), so entry j is entry
   m = min(k, 32 - k) of 0..16, k = j mod 32 (two vpermps on bits 0..2, a
   blend on bit 3, one for m = 16), with bit 5 of j in its sign bit.
   Entry k is zero at k = 0 in s24 and s12 and at k = 0, 16 in s24_lo and
   s12_lo (tests/test_trig.c checks the three properties on the tables), so
   the _lo tables need no blend for m = 16 (it reads entry 0, zero too), and
   a zero entry may come out as -0 where math.c reads +0: a zero's sign
   changes no later nonzero value of trig_sum's adds and multiplies (x + 0
   and x - 0 are x for x != 0, a product with a zero is a zero), and a
   zero result is +0 in both, since trig_sum's low part is never -0 (e1 =
   (S - s1) + P is +0 or nonzero, S - s1 being +0 when zero, and so is
   each later sum into it) and s1 + (+0) is +0 for either zero s1. So the
   result is math.c's to the bit for every argument (the exhaustive sweep
   compares every binary32 input; the RoPE table's exact products rest on
   the argument alone). With trig_reduce_w's cut, sin_v took 0.95x the
   time, cos_v 0.98x, sincos_v 0.96x (docs/log/math.md, "The table's
   zeros"). */
typedef struct {
    VI m;
    V b3, at16; /* bit 3 of m in the sign bit (blendv's mask); m == 16 */
    V flip;     /* bit 5 of j in the sign bit */
} vtrig_idx;

static inline vtrig_idx trig_idx(VI j)
{
    vtrig_idx t;
    VI k = _mm256_and_si256(j, I(31));
    t.m = _mm256_min_epu32(k, _mm256_sub_epi32(I(32), k));
    t.b3 = AS_F(_mm256_slli_epi32(t.m, 28));
    t.at16 = AS_F(_mm256_cmpeq_epi32(k, I(16)));
    t.flip = AS_F(_mm256_and_si256(_mm256_slli_epi32(j, 26), I(DN_SIGN_BIT)));
    return t;
}

static inline V trig_lookup(const float *tab, const vtrig_idx *t, V flip)
{
    V q0 = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab), t->m);
    V q1 = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8), t->m);
    V v = sel(t->at16, _mm256_broadcast_ss(tab + 16), sel(t->b3, q1, q0));
    return _mm256_xor_ps(v, flip);
}

/* trig_lookup of an _lo table, whose entries 0 and 16 are both zero */
static inline V trig_lookup_lo(const float *tab, const vtrig_idx *t, V flip)
{
    V q0 = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab), t->m);
    V q1 = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8), t->m);
    return _mm256_xor_ps(sel(t->b3, q1, q0), flip);
}

/* math.c's trig_eval() from its four table entries: S, S_lo at j, Ch, Cl
   at j + 16 */
static inline V trig_sum(vtrig_arg a, V S, V S_lo, V Ch, V Cl)
{
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

/* math.c's trig_eval() */
static inline V trig_eval(vtrig_arg a, VI j)
{
    vtrig_idx ts = trig_idx(j);
    vtrig_idx tc = trig_idx(_mm256_and_si256(_mm256_add_epi32(j, I(16)), I(63)));
    return trig_sum(
        a, trig_lookup(dn_trig_s24, &ts, ts.flip), trig_lookup_lo(dn_trig_s24_lo, &ts, ts.flip),
        trig_lookup(dn_trig_s12, &tc, tc.flip), trig_lookup_lo(dn_trig_s12_lo, &tc, tc.flip));
}

/* The fast paths' table reads, one index for the entries at j, j + 16 and
   j + 32. With k = j mod 32 and m = min(k, 32 - k), entry j + 32 is entry m
   with the other sign bit, and entry j + 16 is entry 16 - m (k + 16 mod 32
   is 16 + k for k <= 16, k - 16 above): entry m of the table read
   backwards (MIRROR below). So trig_idx runs once where
   the whole sequence runs it twice for sin or cos and four times for both,
   and each phase needs only its sign, bit 5 of j, j + 16 or j + 32 (the
   zero entries' signs do not matter: trig_idx). sin_v took 0.97x the time,
   cos_v 0.93x, sincos_v 0.94x (docs/log/math.md, "One table index for sin
   and cos"). */
typedef struct {
    vtrig_idx t; /* m, b3, at16; flip, the sign of phase j */
    V flip_16;   /* of phase j + 16, read backwards */
    V flip_32;   /* of phase j + 32 */
} vtrig_phases;

static inline vtrig_phases trig_phases(VI j)
{
    vtrig_phases p;
    p.t = trig_idx(j);
    p.flip_16 =
        AS_F(_mm256_and_si256(_mm256_slli_epi32(_mm256_add_epi32(j, I(16)), 26), I(DN_SIGN_BIT)));
    p.flip_32 = _mm256_xor_ps(p.t.flip, F(-0.0f));
    return p;
}

/* Entry m of a table read backwards from entry 16 (entry 16 - m) is entry
   16 + m, m = 0..16: every sin(j pi/32) table is symmetric about j = 16
   (sin((16 + m) pi/32) = sin((16 - m) pi/32), and each rounding of a
   value is that of its mirror; tests/test_trig.c, trig_kernel_tables,
   checks the bits), so the tables read from entry 16 on are the backwards
   copies. Building those copies on the stack each call took about a tenth
   of an eight-element sin_v call. */
#define MIRROR(tab) ((tab) + 16)

/* sin with x's sign (sign: x's sign bit) and cos of the reduced argument,
   from trig_phases */
static inline V trig_sin_fast(vtrig_arg a, const vtrig_phases *p, V sign)
{
    const vtrig_idx *t = &p->t;
    V s = trig_sum(a, trig_lookup(dn_trig_s24, t, t->flip),
                   trig_lookup_lo(dn_trig_s24_lo, t, t->flip),
                   trig_lookup(MIRROR(dn_trig_s12), t, p->flip_16),
                   trig_lookup_lo(MIRROR(dn_trig_s12_lo), t, p->flip_16));
    return _mm256_xor_ps(s, sign);
}

static inline V trig_cos_fast(vtrig_arg a, const vtrig_phases *p)
{
    const vtrig_idx *t = &p->t;
    return trig_sum(a, trig_lookup(MIRROR(dn_trig_s24), t, p->flip_16),
                    trig_lookup_lo(MIRROR(dn_trig_s24_lo), t, p->flip_16),
                    trig_lookup(dn_trig_s12, t, p->flip_32),
                    trig_lookup_lo(dn_trig_s12_lo, t, p->flip_32));
}

/* sin and cos of the reduced argument: sin with x's sign (sign: x's sign
   bit), cos at index j + 16 */
static inline V trig_sin_val(vtrig_arg a, V sign) { return _mm256_xor_ps(trig_eval(a, a.j), sign); }

static inline V trig_cos_val(vtrig_arg a)
{
    return trig_eval(a, _mm256_and_si256(_mm256_add_epi32(a.j, I(16)), I(63)));
}

/* x flushed; its sign; |x|; NaN/inf lanes */
typedef struct {
    V x, sign, special, tiny;
    vtrig_arg a;
} vtrig_in;

static inline vtrig_in trig_in(V x)
{
    x = dn_avx2_flush(x);
    vtrig_in t;
    t.sign = _mm256_and_ps(x, F(-0.0f));
    V a = _mm256_andnot_ps(F(-0.0f), x);
    t.x = x;
    t.special = AS_F(_mm256_cmpeq_epi32(_mm256_and_si256(AS_I(a), I(DN_EXP_BITS)), I(DN_EXP_BITS)));
    t.tiny = AS_F(_mm256_cmpgt_epi32(I(0x39800000), AS_I(a)));
    t.a = trig_reduce(a);
    return t;
}

static inline V trig_out(V v, V special)
{
    return sel(special, AS_F(I(DN_NAN_BITS)), dn_avx2_flush(v));
}

static inline V v_sin(V x)
{
    vtrig_in t = trig_in(x);
    return trig_out(sel(t.tiny, t.x, trig_sin_val(t.a, t.sign)), t.special);
}

static inline V v_cos(V x)
{
    vtrig_in t = trig_in(x);
    return trig_out(trig_cos_val(t.a), t.special);
}

/* The fast path of the array loops: a vector whose lanes all lie in
   [2^-5, 2^24) has normal inputs and results (|sin x|, |cos x| of such
   binary32 x stay far above 2^-126), no NaN or infinity and no small
   argument, so it skips the flushes, the fixes and the small-argument
   select, and takes the shifted windows without the test for gathers;
   two vectors an iteration, interleaved (unary_groups). Any other vector
   takes the whole sequence, out of line. */
static inline int trig_off(V x)
{
    VI ua = _mm256_and_si256(AS_I(x), I(0x7FFFFFFF));
    VI out = _mm256_or_si256(_mm256_cmpgt_epi32(I(0x3D000000), ua),
                             _mm256_cmpgt_epi32(ua, I(0x4B7FFFFF)));
    return _mm256_movemask_ps(AS_F(out));
}

static inline vtrig_arg trig_reduce_fast(V a)
{
    VI w0, w1, w2;
    trig_windows_shift(AS_I(a), &w0, &w1, &w2);
    return trig_reduce_w(a, w0, w1, w2);
}

/* The fast paths in two stages (staged_groups, four vectors): the
   reduction of |x| first, then the phases, the table reads and the sum.
   Against two vectors an iteration in one piece (unary_groups), sin_v
   took 0.88x the time, cos_v 0.87x, sincos_v 0.90x (eight in two stages:
   0.88x, 0.89x, 0.93x; four in one piece: sin_v and cos_v 0.90x, 0.91x;
   four in two stages without the scheduling pass: 1.10x the time of
   these; docs/log/math.md, "Trigonometry in two stages"). */
static inline vstage trig_first(V x)
{
    vtrig_arg a = trig_reduce_fast(_mm256_andnot_ps(F(-0.0f), x));
    return (vstage){a.hi, a.lo, AS_F(a.j)};
}

static inline V sin_finish(V x, vstage t, const float *unused)
{
    vtrig_arg a = {t.a, t.b, AS_I(t.c)};
    vtrig_phases p = trig_phases(a.j);
    (void)unused;
    return trig_sin_fast(a, &p, _mm256_and_ps(x, F(-0.0f)));
}

static inline V cos_finish(V x, vstage t, const float *unused)
{
    (void)x, (void)unused;
    vtrig_arg a = {t.a, t.b, AS_I(t.c)};
    vtrig_phases p = trig_phases(a.j);
    return trig_cos_fast(a, &p);
}

static __attribute__((noinline)) V v_sin_slow(V x) { return v_sin(x); }
static __attribute__((noinline)) V v_cos_slow(V x) { return v_cos(x); }

DN_INTERLEAVED static void sin_v_avx2(const float *x, float *y, size_t n)
{
    staged_groups(x, y, n, 4, NULL, (range_test){.off = trig_off}, trig_first, sin_finish,
                  v_sin_slow);
}
DN_INTERLEAVED static void cos_v_avx2(const float *x, float *y, size_t n)
{
    staged_groups(x, y, n, 4, NULL, (range_test){.off = trig_off}, trig_first, cos_finish,
                  v_cos_slow);
}

static inline void sincos8(const float *x, float *s, float *c)
{
    vtrig_in t = trig_in(_mm256_loadu_ps(x));
    V vs = trig_out(sel(t.tiny, t.x, trig_sin_val(t.a, t.sign)), t.special);
    V vc = trig_out(trig_cos_val(t.a), t.special);
    _mm256_storeu_ps(s, vs);
    _mm256_storeu_ps(c, vc);
}

static __attribute__((noinline)) void sincos8_slow(const float *x, float *s, float *c)
{
    sincos8(x, s, c);
}

/* sin_finish and cos_finish on one reduction and one table index */
static inline __attribute__((always_inline)) void sincos_finish(V x, vstage t, float *s, float *c)
{
    vtrig_arg a = {t.a, t.b, AS_I(t.c)};
    vtrig_phases p = trig_phases(a.j);
    _mm256_storeu_ps(s, trig_sin_fast(a, &p, _mm256_and_ps(x, F(-0.0f))));
    _mm256_storeu_ps(c, trig_cos_fast(a, &p));
}

/* One group of sincos_v_avx2, staged_group's with two outputs: src[0 ..
   32) to s and c (what is left after the last group, padded by group_pad) */
static inline __attribute__((always_inline)) void sincos_group(const float *src, float *s, float *c,
                                                               float st[3][64])
{
    enum { G = 4 };
    V v[G];
#pragma GCC unroll 8
    for (int k = 0; k < G; k++) v[k] = _mm256_loadu_ps(src + 8 * k);
    if (group_off(v, G, (range_test){.off = trig_off})) {
        for (int k = 0; k < G; k++) sincos8_slow(src + 8 * k, s + 8 * k, c + 8 * k);
        return;
    }
#pragma GCC unroll 8
    for (int k = 0; k < G; k++) stage_put(st, k, trig_first(v[k]));
    __asm__ volatile("" : : : "memory"); /* the stage boundary, as staged_groups' */
#pragma GCC unroll 8
    for (int k = 0; k < G; k++)
        sincos_finish(_mm256_loadu_ps(src + 8 * k), stage_get(st, k), s + 8 * k, c + 8 * k);
}

DN_INTERLEAVED static void sincos_v_avx2(const float *x, float *s, float *c, size_t n)
{
    float st[3][64] __attribute__((aligned(32)));
    unsigned csr = enter();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) sincos_group(x + i, s + i, c + i, st);
    if (i < n) {
        float bx[32], bs[32], bc[32];
        if (n - i > 8)
            sincos_group(group_pad(bx, x + i, n - i, 32), bs, bc, st);
        else
            sincos8(group_pad(bx, x + i, n - i, 8), bs, bc);
        memcpy(s + i, bs, (n - i) * sizeof(float));
        memcpy(c + i, bc, (n - i) * sizeof(float));
    }
    leave(csr);
}

/* ---- the RoPE table ---------------------------------------------------------

   math_trig.c's dn_ref_rope_table for eight pairs at a time, a row of
   positions after another: the pairs' side of the reduction once (|w|, its
   sign, its window product K), then per position the small products' exact
   hi + lo (Dekker) and the others' F = bits 32..95 of |pos| K mod 2^96, the
   product trig_from_product forms with M = |pos| and the window's words
   reversed (F = (|pos| k2 mod 2^32) 2^32 + |pos| k1 + (|pos| k0 >> 32)),
   then the fast paths' phases and table reads for both entries. Their
   zero entries' signs change no nonzero value, and a zero result is +0 in
   both (trig_sum's low part is never -0), so every entry is the
   reference's for every position and frequency. */
typedef struct {
    V aw, sign;    /* |w| (flushed), w's sign bit */
    VI k0, k1, k2; /* K (rope_pairs): 0 below 2^-63 (such |w| are always small) */
} vrope_pairs;

/* The high words of the eight 32 x 32-bit products a b */
static inline VI mulhi_epu32(VI a, VI b)
{
    VI even = _mm256_srli_epi64(_mm256_mul_epu32(a, b), 32);
    VI odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32));
    return _mm256_blend_epi32(even, odd, 0xAA);
}

/* The pairs w[0..m) (the lanes past m +0): |w| flushed, its sign bit, and
   K = M V mod 2^96 as math_trig.c's dn_math_rope_window forms it (V the
   window of |w|'s exponent b, gathered; K = 0 where b < 64): k0 = (M v2)
   mod 2^32, k1 = (M v2 >> 32) + M v1 mod 2^32, k2 = its carry + (M v1 >>
   32) + M v0 mod 2^32 (in place of math_trig.c's scalar words: four
   positions of 64 pairs 0.95x the time). */
static vrope_pairs rope_pairs(const float *w, size_t m)
{
    VI u = AS_I(dn_avx2_flush(m == 8 ? _mm256_loadu_ps(w) : tail_load(w, m)));
    VI ua = _mm256_and_si256(u, I(0x7FFFFFFF));
    VI idx = _mm256_sub_epi32(_mm256_srli_epi32(ua, 23), I(64));
    VI live = _mm256_cmpgt_epi32(idx, I(-1));
    VI i3 = _mm256_max_epi32(_mm256_add_epi32(idx, _mm256_add_epi32(idx, idx)), I(0));
    const int *tab = (const int *)&dn_trig_invpi[0][0];
    VI w0 = _mm256_i32gather_epi32(tab, i3, 4), w1 = _mm256_i32gather_epi32(tab + 1, i3, 4);
    VI w2 = _mm256_i32gather_epi32(tab + 2, i3, 4);
    VI M = _mm256_or_si256(_mm256_and_si256(ua, I(DN_FRAC_BITS)), I(0x800000));
    VI h2 = mulhi_epu32(M, w2);
    VI k1 = _mm256_add_epi32(h2, _mm256_mullo_epi32(M, w1));
    VI no_carry = _mm256_cmpeq_epi32(_mm256_max_epu32(k1, h2), k1); /* -1, or 0 for a carry */
    VI k2 = _mm256_add_epi32(_mm256_add_epi32(mulhi_epu32(M, w1), _mm256_mullo_epi32(M, w0)),
                             _mm256_add_epi32(no_carry, I(1)));
    vrope_pairs q = {AS_F(ua), AS_F(_mm256_and_si256(u, I(DN_SIGN_BIT))),
                     _mm256_and_si256(live, _mm256_mullo_epi32(M, w2)), _mm256_and_si256(live, k1),
                     _mm256_and_si256(live, k2)};
    return q;
}

/* math_trig.c's rope_reduce of the pairs q at position P; *small the
   product where the sine is that product (exact and below 2^-12), else 0 */
static inline vtrig_arg rope_reduce_v(const vrope_pairs *q, uint32_t P, V *small)
{
    V p = F((float)P);
    V a_hi = MUL(p, q->aw);
    V a_lo = mul_err(p, q->aw, a_hi);
    V h = hi12(a_hi);
    VI ua = AS_I(a_hi);
    V tiny = AS_F(_mm256_cmpgt_epi32(I(0x39800000), ua));
    *small = _mm256_and_ps(a_hi, _mm256_and_ps(tiny, eq(a_lo, _mm256_setzero_ps())));
    vtrig_arg g = trig_from_product(I(P), q->k2, q->k1, q->k0);
    V near = AS_F(_mm256_cmpgt_epi32(I(0x3D000000), ua)); /* below 2^-5: j = 0 */
    vtrig_arg r = {sel(near, h, g.hi), sel(near, ADD(SUB(a_hi, h), a_lo), g.lo),
                   _mm256_andnot_si256(AS_I(near), g.j)};
    return r;
}

static inline void rope_store(float *y, V v, size_t m)
{
    if (m == 8)
        _mm256_storeu_ps(y, v);
    else
        tail_store(y, v, m);
}

/* One vector of the table: position pos times the pairs q (m of them) to
   cos[0..m) and sin[0..m) */
typedef struct {
    const vrope_pairs *q;
    int32_t pos;
    size_t m;
    float *cos, *sin;
} rope_job;

/* G jobs (4 or 1) in two stages as staged_groups': the G reductions, then
   the G evaluations (against one job at a time in one piece: 0.90x the
   time). Both values flushed as the reference's adds leave them. */
static inline __attribute__((always_inline)) void rope_jobs(const rope_job *jb, int G)
{
    float st[4][4][8] __attribute__((aligned(32)));
#pragma GCC unroll 4
    for (int g = 0; g < G; g++) {
        uint32_t P = jb[g].pos < 0 ? 0u - (uint32_t)jb[g].pos : (uint32_t)jb[g].pos;
        V small;
        vtrig_arg a = rope_reduce_v(jb[g].q, P, &small);
        _mm256_store_ps(st[g][0], a.hi);
        _mm256_store_ps(st[g][1], a.lo);
        _mm256_store_ps(st[g][2], AS_F(a.j));
        _mm256_store_ps(st[g][3], small);
    }
    __asm__ volatile("" : : : "memory"); /* the stage boundary, as staged_groups' */
#pragma GCC unroll 4
    for (int g = 0; g < G; g++) {
        vtrig_arg a = {_mm256_load_ps(st[g][0]), _mm256_load_ps(st[g][1]),
                       AS_I(_mm256_load_ps(st[g][2]))};
        V small = _mm256_load_ps(st[g][3]);
        vtrig_phases p = trig_phases(a.j);
        V v = trig_sin_fast(a, &p, _mm256_setzero_ps());
        V eval = AS_F(_mm256_cmpeq_epi32(AS_I(small), _mm256_setzero_si256()));
        v = sel(eval, dn_avx2_flush(v), small);
        V sign = jb[g].pos < 0 ? _mm256_xor_ps(jb[g].q->sign, F(-0.0f)) : jb[g].q->sign;
        rope_store(jb[g].sin, _mm256_xor_ps(v, sign), jb[g].m);
        rope_store(jb[g].cos, dn_avx2_flush(trig_cos_fast(a, &p)), jb[g].m);
    }
}

/* One position's row, four blocks of eight pairs at a time in two stages:
   the positions after the last four (a decode step's one position of 64
   pairs, with the vector K above: 0.51x the time of a block at a time
   with scalar K, decodenum-bench-math --short) */
static inline __attribute__((always_inline)) void
rope_row_avx2(int32_t pos, const float *w, size_t npairs, float *cos, float *sin)
{
    size_t i = 0;
    for (; i + 32 <= npairs; i += 32) {
        vrope_pairs q[4];
        rope_job jb[4];
        for (int g = 0; g < 4; g++) {
            q[g] = rope_pairs(w + i + 8 * g, 8);
            jb[g] = (rope_job){&q[g], pos, 8, cos + i + 8 * g, sin + i + 8 * g};
        }
        rope_jobs(jb, 4);
    }
    for (; i < npairs; i += 8) {
        const size_t m = npairs - i < 8 ? npairs - i : 8;
        const vrope_pairs q = rope_pairs(w + i, m);
        const rope_job jb = {&q, pos, m, cos + i, sin + i};
        rope_jobs(&jb, 1);
    }
}

DN_INTERLEAVED static void rope_table_avx2(const int32_t *pos, size_t npos, const float *w,
                                           size_t npairs, float *cos, float *sin)
{
    unsigned csr = enter();
    const size_t npos4 = npos - npos % 4;
    for (size_t i = 0; npos4 > 0 && i < npairs; i += 8) {
        const size_t m = npairs - i < 8 ? npairs - i : 8;
        const vrope_pairs q = rope_pairs(w + i, m);
        for (size_t k = 0; k < npos4; k += 4) {
            rope_job jb[4];
            for (int g = 0; g < 4; g++)
                jb[g] = (rope_job){&q, pos[k + g], m, cos + (k + g) * npairs + i,
                                   sin + (k + g) * npairs + i};
            rope_jobs(jb, 4);
        }
    }
    for (size_t k = npos4; k < npos; k++)
        rope_row_avx2(pos[k], w, npairs, cos + k * npairs, sin + k * npairs);
    leave(csr);
}

/* ((x * r) * w) * g for g = silu or sigmoid of the gate as the array forms
   store it: the gates of 64 elements at a time by those forms (eight
   vectors an iteration, math_act_avx2.h), then the products. The gates go
   to a buffer of their own, so y may be x or gate. */
static void rms_gated_avx2(const float *x, const float *gate, const float *w, float eps, int silu,
                           float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_fp32_avx2.fdot(x, x, n), n, eps);
    float g[64] __attribute__((aligned(32))) = {0};
    unsigned csr = enter();
    V vr = F(r);
    for (size_t i0 = 0; i0 < n; i0 += 64) {
        size_t m = n - i0 < 64 ? n - i0 : 64, i = 0;
        if (silu)
            silu_v_avx2(gate + i0, g, m);
        else
            sigmoid_v_avx2(gate + i0, g, m);
        const float *xs = x + i0, *ws = w + i0;
        float *ys = y + i0;
        for (; i + 8 <= m; i += 8) {
            V v = MUL(MUL(_mm256_loadu_ps(xs + i), vr), _mm256_loadu_ps(ws + i));
            _mm256_storeu_ps(ys + i, result(MUL(v, _mm256_load_ps(g + i))));
        }
        if (i < m) {
            VI lanes = dn_avx2_tail_mask(m - i);
            V v =
                MUL(MUL(_mm256_maskload_ps(xs + i, lanes), vr), _mm256_maskload_ps(ws + i, lanes));
            _mm256_maskstore_ps(ys + i, lanes, result(MUL(v, _mm256_load_ps(g + i))));
        }
    }
    leave(csr);
}

#undef T

#endif
