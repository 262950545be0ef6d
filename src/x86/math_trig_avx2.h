/* SPDX-License-Identifier: MIT */
/*
 * math_trig_avx2.h: the AVX2 kernels of sin, cos and sincos, bit for bit
 * dn_ref_sin_v / dn_ref_cos_v / dn_ref_sincos_v (src/math_trig.c). Included
 * once, by math_avx2.c, after its vector helpers and before its table:
 * the trigonometry is its own file only to keep each file readable.
 */
#ifndef DN_MATH_TRIG_AVX2_H
#define DN_MATH_TRIG_AVX2_H

/* ---- sin, cos ------------------------------------------------------------- */

#define T dn_trig_c

typedef struct {
    V hi, lo;
    VI j;
} vtrig_arg;

/* The 64-bit halves (even lanes, odd lanes) of math.c's F =
   (M*w0 << 32) + M*w1 + (M*w2 >> 32), each in the low lanes of a 64-bit
   element (mul_epu32 reads the low 32 bits of each 64-bit element). */
static inline VI trig_window_product(VI M, VI w0, VI w1, VI w2)
{
    VI p0 = _mm256_slli_epi64(_mm256_mul_epu32(M, w0), 32);
    VI p2 = _mm256_srli_epi64(_mm256_mul_epu32(M, w2), 32);
    return _mm256_add_epi64(_mm256_add_epi64(p0, _mm256_mul_epu32(M, w1)), p2);
}

/* Two vectors of 64-bit elements' low words (even lanes from e, odd from o)
   as one vector of eight 32-bit lanes. */
static inline VI trig_join(VI e, VI o)
{
    return _mm256_blend_epi32(e, _mm256_slli_epi64(o, 32), 0xAA);
}

/* math.c's trig_reduce() of a = |x| (finite lanes; other lanes give values
   that are replaced later). */
static inline vtrig_arg trig_reduce(V a)
{
    VI ua = AS_I(a);
    VI idx = _mm256_sub_epi32(_mm256_srli_epi32(ua, 23), I(64));
    idx = _mm256_min_epi32(_mm256_max_epi32(idx, I(0)), I(190));
    VI i3 = _mm256_add_epi32(idx, _mm256_add_epi32(idx, idx));
    const int *tab = (const int *)&dn_trig_invpi[0][0];
    VI w0 = _mm256_i32gather_epi32(tab, i3, 4);
    VI w1 = _mm256_i32gather_epi32(tab + 1, i3, 4);
    VI w2 = _mm256_i32gather_epi32(tab + 2, i3, 4);
    VI M = _mm256_or_si256(_mm256_and_si256(ua, I(DN_FRAC_BITS)), I(0x800000));
    VI ge = trig_window_product(M, w0, w1, w2);
    VI go = trig_window_product(_mm256_srli_epi64(M, 32), _mm256_srli_epi64(w0, 32),
                                _mm256_srli_epi64(w1, 32), _mm256_srli_epi64(w2, 32));
    const VI half = _mm256_set1_epi64x((long long)(UINT64_C(1) << 57));
    ge = _mm256_add_epi64(ge, half);
    go = _mm256_add_epi64(go, half);
    VI j = trig_join(_mm256_srli_epi64(ge, 58), _mm256_srli_epi64(go, 58));
    /* u = g mod 2^58: A = u >> 34, B = (u >> 10) mod 2^24, Cc = u mod 2^10 */
    VI A = _mm256_and_si256(trig_join(_mm256_srli_epi64(ge, 34), _mm256_srli_epi64(go, 34)),
                            I(0xFFFFFF));
    VI B = _mm256_and_si256(trig_join(_mm256_srli_epi64(ge, 10), _mm256_srli_epi64(go, 10)),
                            I(0xFFFFFF));
    VI Cc = _mm256_and_si256(trig_join(ge, go), I(1023));
    V fa = MUL(_mm256_cvtepi32_ps(_mm256_sub_epi32(A, I(1 << 23))), F(0x1p-24f));
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
    /* |x| < 2^-5: j = 0, r = a */
    V small = AS_F(_mm256_cmpgt_epi32(I(0x3D000000), ua));
    V ah = hi12(a);
    vtrig_arg r;
    r.hi = sel(small, ah, h);
    r.lo = sel(small, SUB(a, ah), lo);
    r.j = _mm256_andnot_si256(AS_I(small), j);
    return r;
}

/* math.c's trig_eval() */
static inline V trig_eval(vtrig_arg a, VI j)
{
    VI jc = _mm256_and_si256(_mm256_add_epi32(j, I(16)), I(63));
    V S = _mm256_i32gather_ps(dn_trig_s24, j, 4);
    V S_lo = _mm256_i32gather_ps(dn_trig_s24_lo, j, 4);
    V Ch = _mm256_i32gather_ps(dn_trig_s12, jc, 4);
    V Cl = _mm256_i32gather_ps(dn_trig_s12_lo, jc, 4);
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
    return trig_out(sel(t.tiny, t.x, _mm256_xor_ps(trig_eval(t.a, t.a.j), t.sign)), t.special);
}

static inline V v_cos(V x)
{
    vtrig_in t = trig_in(x);
    return trig_out(trig_eval(t.a, _mm256_and_si256(_mm256_add_epi32(t.a.j, I(16)), I(63))),
                    t.special);
}

static void sin_v_avx2(const float *x, float *y, size_t n) { unary_avx2(x, y, n, v_sin); }
static void cos_v_avx2(const float *x, float *y, size_t n) { unary_avx2(x, y, n, v_cos); }

static inline void sincos8(const float *x, float *s, float *c)
{
    vtrig_in t = trig_in(_mm256_loadu_ps(x));
    V vs = trig_out(sel(t.tiny, t.x, _mm256_xor_ps(trig_eval(t.a, t.a.j), t.sign)), t.special);
    V vc = trig_out(trig_eval(t.a, _mm256_and_si256(_mm256_add_epi32(t.a.j, I(16)), I(63))),
                    t.special);
    _mm256_storeu_ps(s, vs);
    _mm256_storeu_ps(c, vc);
}

static void sincos_v_avx2(const float *x, float *s, float *c, size_t n)
{
    unsigned csr = enter();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) sincos8(x + i, s + i, c + i);
    if (i < n) {
        float bx[8] = {0}, bs[8], bc[8];
        memcpy(bx, x + i, (n - i) * sizeof(float));
        sincos8(bx, bs, bc);
        memcpy(s + i, bs, (n - i) * sizeof(float));
        memcpy(c + i, bc, (n - i) * sizeof(float));
    }
    leave(csr);
}

/* ((x * r) * w) * g(gate), g = silu or sigmoid (their results as stored) */
static inline V gated(V x, V gate, V w, V r, int silu)
{
    return result(MUL(MUL(MUL(x, r), w), silu ? v_silu(gate) : v_sigmoid(gate)));
}

static void rms_gated_avx2(const float *x, const float *gate, const float *w, float eps, int silu,
                           float *y, size_t n)
{
    if (n == 0) return;
    float r = dn_math_rms_scale(dn_fp32_avx2.fdot(x, x, n), n, eps);
    unsigned csr = enter();
    V vr = F(r);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, gated(_mm256_loadu_ps(x + i), _mm256_loadu_ps(gate + i),
                                      _mm256_loadu_ps(w + i), vr, silu));
    if (i < n) {
        VI m = dn_avx2_tail_mask(n - i);
        _mm256_maskstore_ps(y + i, m,
                            gated(_mm256_maskload_ps(x + i, m), _mm256_maskload_ps(gate + i, m),
                                  _mm256_maskload_ps(w + i, m), vr, silu));
    }
    leave(csr);
}

#undef T

#endif
