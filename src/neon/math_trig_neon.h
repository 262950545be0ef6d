/* SPDX-License-Identifier: MIT */
/*
 * math_trig_neon.h: the NEON kernels of sin, cos and sincos and the RoPE
 * table, bit for bit dn_ref_sin_v / dn_ref_cos_v / dn_ref_sincos_v and
 * dn_ref_rope_table (src/math_trig.c). Included
 * once, by math_neon.c, after its vector helpers and before its table:
 * the trigonometry is its own file only to keep each file readable.
 */
#ifndef DN_MATH_TRIG_NEON_H
#define DN_MATH_TRIG_NEON_H

/* ---- sin, cos ------------------------------------------------------------- */

#define T dn_trig_c

typedef struct {
    V hi, lo;
    VM j;
} vtrig_arg;

/* w[i][k] for the four lanes of i (one lane load each) */
static inline VM trig_window_word(VM i, int k)
{
    const uint32_t *t = &dn_trig_invpi[0][k];
    VM v = vld1q_dup_u32(t + 3 * vgetq_lane_u32(i, 0));
    v = vld1q_lane_u32(t + 3 * vgetq_lane_u32(i, 1), v, 1);
    v = vld1q_lane_u32(t + 3 * vgetq_lane_u32(i, 2), v, 2);
    return vld1q_lane_u32(t + 3 * vgetq_lane_u32(i, 3), v, 3);
}

/* math.c's F + 2^57 = ((M*w0) << 32) + M*w1 + ((M*w2) >> 32) + 2^57, two
   lanes (the products are vmull's 32 x 32 -> 64 bits) */
static inline uint64x2_t trig_g(uint64x2_t p0, uint64x2_t p1, uint64x2_t p2)
{
    uint64x2_t F = vaddq_u64(vaddq_u64(vshlq_n_u64(p0, 32), p1), vshrq_n_u64(p2, 32));
    return vaddq_u64(F, vdupq_n_u64(UINT64_C(1) << 57));
}

/* The low words of (g_lo >> s, g_hi >> s) as four lanes */
#define TRIG_NARROW(lo, hi, s) \
    vcombine_u32(vmovn_u64(vshrq_n_u64(lo, s)), vmovn_u64(vshrq_n_u64(hi, s)))

/* math_trig.c's trig_from_F() of F = ((M w0) << 32) + M w1 + ((M w2) >> 32)
   mod 2^64, lane by lane: the reduction's product for the 32-bit M and
   window words w0 (high) .. w2 (low) */
static inline vtrig_arg trig_from_product(VM M, VM w0, VM w1, VM w2)
{
    uint32x2_t Ml = vget_low_u32(M);
    uint64x2_t glo = trig_g(vmull_u32(Ml, vget_low_u32(w0)), vmull_u32(Ml, vget_low_u32(w1)),
                            vmull_u32(Ml, vget_low_u32(w2)));
    uint64x2_t ghi = trig_g(vmull_high_u32(M, w0), vmull_high_u32(M, w1), vmull_high_u32(M, w2));
    VM j = TRIG_NARROW(glo, ghi, 58);
    VM A = vandq_u32(TRIG_NARROW(glo, ghi, 34), U(0xFFFFFF));
    VM B = vandq_u32(TRIG_NARROW(glo, ghi, 10), U(0xFFFFFF));
    VM Cc = vandq_u32(vcombine_u32(vmovn_u64(glo), vmovn_u64(ghi)), U(1023));
    V fa = MUL(vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(A), I(1 << 23))), F(0x1p-24f));
    V fb = MUL(vcvtq_f32_u32(B), F(0x1p-48f));
    V fc = MUL(vcvtq_f32_u32(Cc), F(0x1p-58f));
    V s = ADD(fa, fb);
    V bb = SUB(s, fa);
    V ee = ADD(SUB(fa, SUB(s, bb)), SUB(fb, bb));
    V s_hi = hi12(s);
    V t_lo = ADD(SUB(s, s_hi), ADD(ee, fc));
    V m = MUL(s_hi, F(T.pi32_hi));
    V h = hi12(m);
    V lo = ADD(SUB(m, h), ADD(MUL(s_hi, F(T.pi32_lo)), MUL(t_lo, F(T.pi32))));
    vtrig_arg r = {h, lo, j};
    return r;
}

/* math_trig.c's trig_reduce() of a = |x| (finite lanes; other lanes are replaced) */
static inline vtrig_arg trig_reduce(V a)
{
    VM ua = AS_U(a);
    VI e = vsubq_s32(vreinterpretq_s32_u32(vshrq_n_u32(ua, 23)), I(64));
    VM idx = vreinterpretq_u32_s32(vminq_s32(vmaxq_s32(e, I(0)), I(190)));
    VM M = vorrq_u32(vandq_u32(ua, U(DN_FRAC_BITS)), U(0x800000));
    vtrig_arg g = trig_from_product(M, trig_window_word(idx, 0), trig_window_word(idx, 1),
                                    trig_window_word(idx, 2));
    /* |x| < 2^-5: j = 0, r = a */
    VM small = vcltq_u32(ua, U(0x3D000000u));
    V ah = hi12(a);
    vtrig_arg r;
    r.hi = sel(small, ah, g.hi);
    r.lo = sel(small, SUB(a, ah), g.lo);
    r.j = vbicq_u32(g.j, small);
    return r;
}

/* math.c's trig_eval() */
static inline V trig_eval(vtrig_arg a, VM j)
{
    VM jc = vandq_u32(vaddq_u32(j, U(16)), U(63));
    V S = lookup(dn_trig_s24, j), S_lo = lookup(dn_trig_s24_lo, j);
    V Ch = lookup(dn_trig_s12, jc), Cl = lookup(dn_trig_s12_lo, jc);
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

typedef struct {
    V x, sign;
    VM special, tiny;
    vtrig_arg a;
} vtrig_in;

static inline vtrig_in trig_in(V x)
{
    vtrig_in t;
    t.x = dn_neon_flush(x);
    t.sign = sign_of(t.x);
    VM ua = vandq_u32(AS_U(t.x), U(~DN_SIGN_BIT));
    t.special = vceqq_u32(vandq_u32(ua, U(DN_EXP_BITS)), U(DN_EXP_BITS));
    t.tiny = vcltq_u32(ua, U(0x39800000u));
    t.a = trig_reduce(U_F(ua));
    return t;
}

static inline V trig_sin_of(vtrig_in t)
{
    V v = U_F(veorq_u32(AS_U(trig_eval(t.a, t.a.j)), AS_U(t.sign)));
    return sel(t.special, nan_(), sel(t.tiny, t.x, v));
}

static inline V trig_cos_of(vtrig_in t)
{
    return sel(t.special, nan_(), trig_eval(t.a, vandq_u32(vaddq_u32(t.a.j, U(16)), U(63))));
}

static inline V v_sin(V x) { return trig_sin_of(trig_in(x)); }
static inline V v_cos(V x) { return trig_cos_of(trig_in(x)); }

static void sin_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_sin); }
static void cos_v_neon(const float *x, float *y, size_t n) { unary_neon(x, y, n, v_cos); }

static void sincos_v_neon(const float *x, float *s, float *c, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vtrig_in t = trig_in(vld1q_f32(x + i));
        vst1q_f32(s + i, trig_sin_of(t));
        vst1q_f32(c + i, trig_cos_of(t));
    }
    if (i < n) {
        float bx[4] = {0}, bs[4], bc[4];
        memcpy(bx, x + i, (n - i) * sizeof(float));
        vtrig_in t = trig_in(vld1q_f32(bx));
        vst1q_f32(bs, trig_sin_of(t));
        vst1q_f32(bc, trig_cos_of(t));
        memcpy(s + i, bs, (n - i) * sizeof(float));
        memcpy(c + i, bc, (n - i) * sizeof(float));
    }
}

/* ---- the RoPE table -----------------------------------------------------------

   math_trig.c's dn_ref_rope_table for four pairs at a time: the pairs' side
   of the reduction once per block (dn_math_rope_pairs), then per position
   both of rope_reduce's cases in every lane and a select: the small
   products' Dekker hi + lo (mul_err, the reference's steps) and the others'
   F = |pos| K (trig_from_product with K's words reversed). trig_eval is the
   reference's, operation for operation, so every entry, zeros included, is
   the reference's. */
typedef struct {
    V aw, sign;    /* |w| (flushed), w's sign bit */
    VM k0, k1, k2; /* dn_math_rope_pairs' K */
} vrope_pairs;

static vrope_pairs rope_pairs(const float *w, size_t m)
{
    float aw[4], sign[4];
    uint32_t k[12];
    dn_math_rope_pairs(w, m, 4, aw, sign, k);
    vrope_pairs q = {vld1q_f32(aw), vld1q_f32(sign), vld1q_u32(k), vld1q_u32(k + 4),
                     vld1q_u32(k + 8)};
    return q;
}

/* cos and sin of position pos times the pairs q (m of them), stored */
static inline void rope_row(const vrope_pairs *q, int32_t pos, float *cos, float *sin, size_t m)
{
    uint32_t P = pos < 0 ? 0u - (uint32_t)pos : (uint32_t)pos;
    V p = F((float)P);
    V a_hi = MUL(p, q->aw);
    V a_lo = mul_err(p, q->aw, a_hi);
    V h = hi12(a_hi);
    VM ua = AS_U(a_hi);
    VM near = vcltq_u32(ua, U(0x3D000000u)); /* below 2^-5: j = 0 */
    VM exact = vandq_u32(vcltq_u32(ua, U(0x39800000u)), eq(a_lo, F(0.0f)));
    vtrig_arg g = trig_from_product(U(P), q->k2, q->k1, q->k0);
    vtrig_arg a = {sel(near, h, g.hi), sel(near, ADD(SUB(a_hi, h), a_lo), g.lo),
                   vbicq_u32(g.j, near)};
    V s = sel(exact, a_hi, trig_eval(a, a.j)); /* the sine of a small exact product */
    V sign = pos < 0 ? neg(q->sign) : q->sign;
    s = U_F(veorq_u32(AS_U(s), AS_U(sign)));
    V c = trig_eval(a, vandq_u32(vaddq_u32(a.j, U(16)), U(63)));
    if (m == 4) {
        vst1q_f32(sin, s);
        vst1q_f32(cos, c);
        return;
    }
    float bs[4], bc[4];
    vst1q_f32(bs, s);
    vst1q_f32(bc, c);
    memcpy(sin, bs, m * sizeof(float));
    memcpy(cos, bc, m * sizeof(float));
}

static void rope_table_neon(const int32_t *pos, size_t npos, const float *w, size_t npairs,
                            float *cos, float *sin)
{
    for (size_t i = 0; i < npairs; i += 4) {
        const size_t m = npairs - i < 4 ? npairs - i : 4;
        const vrope_pairs q = rope_pairs(w + i, m);
        for (size_t k = 0; k < npos; k++)
            rope_row(&q, pos[k], cos + k * npairs + i, sin + k * npairs + i, m);
    }
}

#undef TRIG_NARROW
#undef T

#endif
