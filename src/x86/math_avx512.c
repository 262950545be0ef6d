/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals on AVX-512 (F, BW, VL, DQ): each kernel is its
 * reference in src/math.c, sixteen lanes at a time, in the reference's order,
 * under the rules of the AVX2 kernels (src/x86/math_avx2.c): nothing fused
 * but products that are exact (-ffp-contract=off; math_act_avx512.h), MXCSR =
 * DAZ only (avx2_common.h), so a denormal operand of an arithmetic
 * operation or a compare reads as the zero the engine would have stored;
 * an input whose bits are kept (the signed zero ln1p and silu return for
 * a denormal) is flushed first, a lane whose bits are read for an index
 * or an exponent (ln, recip, rsqrt) is one the special cases overwrite, and
 * every stored result is flushed and its NaN made DN_NAN_BITS.
 *
 * What is not a copy of the AVX2 kernels, and why:
 * - Tables are read from registers, not gathered: vpermt2ps picks from 32
 *   entries, so the 64-entry exp table is two permutes and a mask select on
 *   bit 5 of the index, a 128-entry table four permutes and two levels of
 *   mask selects. With 16-lane gathers instead (same bits, one process,
 *   the AMD EPYC host of docs/math.md) exp_v took 2.7x, ln_v 3.0x,
 *   recip_v 2.4x and sigmoid_v 1.8x the time.
 * - scale(y, k) is one vscalefps: y * 2^k rounded once. That is the
 *   reference's two multiplies' value: the first is exact wherever the
 *   result is normal (docs/numerics.md 8, notation), and where it is not,
 *   both are below 2^-126 and read as zero by the next operation (DAZ) or
 *   flushed at the store; an overflow is infinity in both.
 * - The exponent field is added to as an integer where every lane's result
 *   is known to be normal (exp's and recip's fast paths, rsqrt always):
 *   the power-of-two multiplies are exact there.
 * - Special inputs are fixed with mask moves; ln and rsqrt test the vector
 *   once and skip the fixes where no lane needs one.
 * - exp_v, softmax and ln_v read their small tables as 16-bit words
 *   (vpermi2w reaches 64 words in two registers) and do the reference's
 *   exact steps in one instruction each (exp_fast, ln_core_w).
 */
#include "../math_kernels.h"
#include "../math_tables.h"
#include "../fp32_kernels.h"
#include "../bits.h"
#include "avx2_common.h"

#include <math.h>

typedef __m512 V;
typedef __m512i VI;
typedef __mmask16 M;

#define INLINE static inline __attribute__((always_inline))
#define ADD _mm512_add_ps
#define SUB _mm512_sub_ps
#define MUL _mm512_mul_ps
#define F(c) _mm512_set1_ps(c)
#define I(c) _mm512_set1_epi32((int)(c))
#define AS_I _mm512_castps_si512
#define AS_F _mm512_castsi512_ps
#define C dn_math_c

static inline void leave(unsigned old) { __asm__ volatile("vldmxcsr %0" : : "m"(old) : "memory"); }

INLINE M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
INLINE M gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
INLINE M ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
INLINE M eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
INLINE M isnan_(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
INLINE V neg(V a) { return _mm512_xor_ps(a, F(-0.0f)); }
INLINE V sign_of(V a) { return _mm512_and_ps(a, F(-0.0f)); }
INLINE V put(V v, M m, V a) { return _mm512_mask_mov_ps(v, m, a); } /* m ? a : v */
INLINE V nan_where(M m, V v) { return put(v, m, AS_F(I(DN_NAN_BITS))); }

/* A denormal becomes a zero of its sign. */
INLINE V flush(V x)
{
    VI u = AS_I(x);
    M tiny = _mm512_testn_epi32_mask(u, I(DN_EXP_BITS));
    return AS_F(_mm512_mask_and_epi32(u, tiny, u, I(DN_SIGN_BIT)));
}

/* scale(y, k) for k an integer-valued float (see the top of the file). */
INLINE V scale(V y, V k) { return _mm512_scalef_ps(y, k); }

INLINE V hi12(V v) { return _mm512_and_ps(v, AS_F(I(0xFFFFF000u))); }

/* (a & b) | c, one vpternlogd */
INLINE VI and_or(VI a, uint32_t b, uint32_t c)
{
    return _mm512_ternarylogic_epi32(a, I(b), I(c), 0xEA);
}

/* The significand 1.f of a normal v, sign dropped (X: kept), and its exponent as a float. */
INLINE V mant(V v) { return AS_F(and_or(AS_I(v), DN_FRAC_BITS, 0x3F800000u)); }
INLINE V smant(V v) { return AS_F(and_or(AS_I(v), DN_SIGN_BIT | DN_FRAC_BITS, 0x3F800000u)); }
INLINE V expo(V v) { return _mm512_getexp_ps(v); }

/* math.c's one_minus_split, lane by lane. */
INLINE V one_minus_split(V a_hi, V a_lo, V b_hi, V b_lo)
{
    V r = SUB(F(1.0f), MUL(a_hi, b_hi));
    r = SUB(r, MUL(a_hi, b_lo));
    r = SUB(r, MUL(a_lo, b_hi));
    return SUB(r, MUL(a_lo, b_lo));
}

/* ---- tables in registers ---------------------------------------------------- */

/* t[j & 63] of a 64-word table: the permutes read bits 0-4 of j. */
INLINE VI lut64(const uint32_t *t, VI j)
{
    VI lo = _mm512_permutex2var_epi32(_mm512_loadu_si512(t), j, _mm512_loadu_si512(t + 16));
    VI hi = _mm512_permutex2var_epi32(_mm512_loadu_si512(t + 32), j, _mm512_loadu_si512(t + 48));
    return _mm512_mask_blend_epi32(_mm512_test_epi32_mask(j, I(32)), lo, hi);
}

/* t[j & 127] of a 128-entry table, upper = the lanes whose bit 6 is set
   (given, so rsqrt can put its parity there). */
INLINE V lut128(const float *t, VI j, M upper)
{
    M b5 = _mm512_test_epi32_mask(j, I(32));
    V a = _mm512_permutex2var_ps(_mm512_loadu_ps(t), j, _mm512_loadu_ps(t + 16));
    V b = _mm512_permutex2var_ps(_mm512_loadu_ps(t + 32), j, _mm512_loadu_ps(t + 48));
    V c = _mm512_permutex2var_ps(_mm512_loadu_ps(t + 64), j, _mm512_loadu_ps(t + 80));
    V d = _mm512_permutex2var_ps(_mm512_loadu_ps(t + 96), j, _mm512_loadu_ps(t + 112));
    return _mm512_mask_blend_ps(upper, _mm512_mask_blend_ps(b5, a, b),
                                _mm512_mask_blend_ps(b5, c, d));
}

INLINE M bit6(VI j) { return _mm512_test_epi32_mask(j, I(64)); }

/* lut128 without the bit-5 blends: the first masked vpermi2ps writes the
   lanes of one 32-entry quarter and leaves the others holding their index,
   which the second reads (nb5, b5: the lanes with bit 5 clear and set,
   shared by the tables of one index). */
INLINE V lut128c(const float *t, VI j, M nb5, M b5, M upper)
{
    V lo = _mm512_mask2_permutex2var_ps(_mm512_loadu_ps(t), j, nb5, _mm512_loadu_ps(t + 16));
    lo = _mm512_mask2_permutex2var_ps(_mm512_loadu_ps(t + 32), AS_I(lo), b5,
                                      _mm512_loadu_ps(t + 48));
    V hi = _mm512_mask2_permutex2var_ps(_mm512_loadu_ps(t + 64), j, nb5, _mm512_loadu_ps(t + 80));
    hi = _mm512_mask2_permutex2var_ps(_mm512_loadu_ps(t + 96), AS_I(hi), b5,
                                      _mm512_loadu_ps(t + 112));
    return _mm512_mask_blend_ps(upper, lo, hi);
}

/* ---- exp ------------------------------------------------------------------ */

typedef struct {
    V hi, lo;
    VI k, tb; /* tb: the shifter's sum's bits (exp_split_s) */
} vexp_parts;

/* exp_split() of x in [-95, 95], or with negate of -x without forming it
   (math_avx2.c's exp_sum_s: z and t - shifter come out negated, and
   r = (-nf) C1_hi - (-x) + (-nf) C1_lo rounds as the reference's r);
   lo only when want_lo; fused where exact, as exp_fast below. tb is t's
   bits: n in its low bits, so the table's index. */
INLINE vexp_parts exp_split_s(V x, int want_lo, int negate)
{
    const V shifter = F(0x1.8p23f);
    V z = MUL(x, F(C.exp_inv_ln2_64));
    V t = negate ? SUB(shifter, z) : ADD(z, shifter);
    VI n = _mm512_sub_epi32(AS_I(t), AS_I(shifter));
    V nf = negate ? SUB(shifter, t) : SUB(t, shifter);
    V r = negate ? ADD(_mm512_fmsub_ps(nf, F(C.exp_ln2_64_hi), x), MUL(nf, F(C.exp_ln2_64_lo)))
                 : SUB(_mm512_fnmadd_ps(nf, F(C.exp_ln2_64_hi), x), MUL(nf, F(C.exp_ln2_64_lo)));
    V q = ADD(r, MUL(MUL(r, r), ADD(F(C.exp_c2), MUL(F(C.exp_c3), r))));
    VI w = lut64(dn_exp_table, AS_I(t));
    V t_hi = AS_F(and_or(w, 0x7FFFFFu, 0x3F800000u));
    V t_lo32 = _mm512_cvtepi32_ps(_mm512_srai_epi32(w, 23));
    V lo = _mm512_fmadd_ps(t_lo32, F(0x1p-32f), MUL(t_hi, q));
    vexp_parts p;
    p.hi = ADD(t_hi, lo);
    p.lo = want_lo ? ADD(SUB(t_hi, p.hi), lo) : p.hi;
    p.k = _mm512_srai_epi32(n, 6);
    p.tb = AS_I(t);
    return p;
}

INLINE vexp_parts exp_split(V x, int want_lo) { return exp_split_s(x, want_lo, 0); }

INLINE V kf(vexp_parts p) { return _mm512_cvtepi32_ps(p.k); }

/* max(-95, min(95, x)) with a NaN kept (max/min return their second operand
   when either is a NaN) */
INLINE V clamp95(V x) { return _mm512_min_ps(F(95.0f), _mm512_max_ps(F(-95.0f), x)); }

INLINE V v_exp(V x)
{
    vexp_parts p = exp_split(clamp95(x), 0);
    return nan_where(isnan_(x), flush(scale(p.hi, kf(p))));
}

/* The fast loop (exp_v, softmax). Where every lane has |x| <= 86 (k within
   [-125, 124]) the clamp, the NaN rule and the flush change nothing and the
   power of two is exact: one integer add to the exponent field. The
   reference's operations are kept, fused only where they are exact:
   x - n*C1 (the product and the difference are exact, math.c) is one
   vfnmadd, and T_lo + T_hi*q is one vfmadd of T_lo's integer times 2^-32
   (exact) with the rounded product. The table is read as words (below),
   n and k come from t's bits (t = 1.5*2^23 + n), and one range test
   covers two vectors. Time against the previous loop in one process (AMD
   EPYC host of docs/math.md), step by step: the fusions 0.92x, with the
   word table 0.83x, with the paired test 0.79x. Tried and not kept, each
   against the fusions alone: vscalefps for the power of two 1.04x, T_hi and
   T_lo as two float tables (four vpermt2ps) 1.05x, the range test on t's
   bits 1.01x. */

/* dn_exp_table as words, 64 in each pair of registers, so that one
   vpermi2w reads a whole table: th_hi and th_lo the high and low halves of
   T_hi's bits (0x3F800000 | the 23 fraction bits), tl the 9-bit integer
   T_lo * 2^32 as a bfloat16 (every entry has at most 8 significant bits,
   so the float's low half is zero; the selftest's bit checks cover every
   entry). Built once per call from the packed table. */
typedef struct {
    VI th_hi[2], th_lo[2], tl[2];
} exp_words;

INLINE VI join16(__m256i a, __m256i b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}

INLINE exp_words exp_words_load(void)
{
    __m256i h[4], l[4], s[4];
    for (int i = 0; i < 4; i++) {
        VI w = _mm512_loadu_si512(dn_exp_table + 16 * i);
        VI th = and_or(w, 0x7FFFFFu, 0x3F800000u);
        VI tl = AS_I(_mm512_cvtepi32_ps(_mm512_srai_epi32(w, 23)));
        h[i] = _mm512_cvtepi32_epi16(_mm512_srli_epi32(th, 16));
        l[i] = _mm512_cvtepi32_epi16(th);
        s[i] = _mm512_cvtepi32_epi16(_mm512_srli_epi32(tl, 16));
    }
    exp_words e = {{join16(h[0], h[1]), join16(h[2], h[3])},
                   {join16(l[0], l[1]), join16(l[2], l[3])},
                   {join16(s[0], s[1]), join16(s[2], s[3])}};
    return e;
}

/* exp_split(x) scaled, for lanes with |x| <= 86 (k within [-125, 124]) */
INLINE V exp_fast(V x, const exp_words *tw)
{
    const V shifter = F(0x1.8p23f);
    V z = MUL(x, F(C.exp_inv_ln2_64));
    V t = ADD(z, shifter);
    V nf = SUB(t, shifter);
    V r = SUB(_mm512_fnmadd_ps(nf, F(C.exp_ln2_64_hi), x), MUL(nf, F(C.exp_ln2_64_lo)));
    V q = ADD(r, MUL(MUL(r, r), ADD(F(C.exp_c2), MUL(F(C.exp_c3), r))));
    /* j = n mod 64 is the low 6 bits of t's bits, copied into both words:
       the high word of T_hi, then the low (the high word already holds its
       value, the low still its index), and T_lo into the high word */
    VI jj = _mm512_shuffle_epi8(AS_I(t),
                                _mm512_set4_epi32(0x0D0C0D0C, 0x09080908, 0x05040504, 0x01000100));
    VI th = _mm512_mask2_permutex2var_epi16(tw->th_hi[0], jj, 0xAAAAAAAAu, tw->th_hi[1]);
    th = _mm512_mask2_permutex2var_epi16(tw->th_lo[0], th, 0x55555555u, tw->th_lo[1]);
    V t_hi = AS_F(th);
    V t_lo32 = AS_F(_mm512_maskz_permutex2var_epi16(0xAAAAAAAAu, tw->tl[0], jj, tw->tl[1]));
    V hi = ADD(t_hi, _mm512_fmadd_ps(t_lo32, F(0x1p-32f), MUL(t_hi, q)));
    /* k << 23 = bits 6-14 of n at bits 23-31: t's bits << 17 (the
       shifter's bits shift out) with the low six cleared */
    VI e = _mm512_and_si512(_mm512_slli_epi32(AS_I(t), 17), I(0xFF800000u));
    return AS_F(_mm512_add_epi32(AS_I(hi), e));
}

/* Whether a or b has a lane outside the fast range: |a| or |b| > 86, or a
   NaN. vrangeps takes the larger magnitude of the two (it returns the
   other operand for a quiet NaN, hence the unordered compare). */
INLINE int exp_slow2(V a, V b)
{
    M big = _mm512_cmp_ps_mask(_mm512_range_ps(a, b, 0x0B), F(86.0f), _CMP_NLE_UQ);
    return !_kortestz_mask16_u8(big, _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q));
}

INLINE V v_exp_fast(V x, const exp_words *tw)
{
    if (_mm512_cmp_ps_mask(_mm512_abs_ps(x), F(86.0f), _CMP_NLE_UQ)) return v_exp(x);
    return exp_fast(x, tw);
}

/* ---- ln ------------------------------------------------------------------- */

/* dn_ln_invc as words: each entry K/128 has eight significant bits, so its
   low sixteen bits are zero and the high sixteen are the whole value. w[0]
   holds entries 0-31, w[1] 32-63, w[2] 64-95, w[3] 96-127. */
INLINE void invc_words_load(VI w[4])
{
    for (int i = 0; i < 4; i++) {
        __m256i a =
            _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_loadu_si512(dn_ln_invc + 32 * i), 16));
        __m256i b = _mm512_cvtepi32_epi16(
            _mm512_srli_epi32(_mm512_loadu_si512(dn_ln_invc + 32 * i + 16), 16));
        w[i] = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
    }
}

/* invc[j] for j = bits 16-22 of mb: the word permutes read bits 16-21 (the
   high word's index) and write the high word, the low one zeroed: two
   permutes and a blend instead of four and three. */
INLINE V invc_words(const VI *w, VI mb, M up)
{
    const __mmask32 hi_words = 0xAAAAAAAAu;
    VI a = _mm512_maskz_permutex2var_epi16(hi_words, w[0], mb, w[1]);
    VI b = _mm512_maskz_permutex2var_epi16(hi_words, w[2], mb, w[3]);
    return AS_F(_mm512_mask_blend_epi32(up, a, b));
}

/* ln_core(x, c, c2) for positive normal finite lanes of x. Without c and
   c2 (ln's +0, +0: has_c 0) their four adds are left out: they change no
   value but the sign of a zero, and the only zero they could reach is
   ln 1's = +0 + (+0 + (+0 + -0)) either way. With w (ln_v) invc is read
   from words. Exact steps done in one instruction: m is vgetmantps's
   [3/4, 3/2) significand (the same word as u - (E << 23)); s = m*invc - 1
   is one vfmsub (the reference's four operations are exact and their sum
   representable, math.c, so the fused form rounds nothing); E*ln2_hi + L_hi
   one vfmadd (both exact). Time against the previous ln_v in one process,
   step by step: the fusions 0.90x, with invc as words 0.82x, with the
   masked permutes for L_hi and L_lo 0.76x, with vgetmantps 0.67x. All
   four quarters by masked permutes (no blends, four masks) was slower
   than the blends (0.96x against the fusions' 0.90x). */
INLINE V ln_core_w(V x, V c, V c2, int has_c, const VI *w)
{
    VI u = AS_I(x);
    VI E = _mm512_srai_epi32(_mm512_sub_epi32(u, I(0x3F400000u)), 23);
    V m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_src);
    VI mb = AS_I(m);
    VI j = _mm512_srli_epi32(mb, 16);
    M up = bit6(j);
    V invc = w ? invc_words(w, mb, up) : lut128(dn_ln_invc, j, up);
    V s = _mm512_fmsub_ps(m, invc, F(1.0f));
    V ef = _mm512_cvtepi32_ps(E);
    M b5 = _mm512_test_epi32_mask(j, I(32)), nb5 = _mm512_testn_epi32_mask(j, I(32));
    V hi = _mm512_fmadd_ps(ef, F(C.ln2_hi), lut128c(dn_ln_lhi, j, nb5, b5, up));
    V lo = ADD(MUL(ef, F(C.ln2_lo)), lut128c(dn_ln_llo, j, nb5, b5, up));
    V tail = MUL(MUL(s, s), ADD(F(C.ln_a2), MUL(s, ADD(F(C.ln_a3), MUL(s, F(C.ln_a4))))));
    V S = ADD(hi, s);
    V e = ADD(SUB(hi, S), s);
    if (!has_c) return ADD(S, ADD(e, ADD(lo, tail)));
    V S2 = ADD(S, c);
    V e2 = ADD(SUB(S, S2), c);
    return ADD(S2, ADD(ADD(e, e2), ADD(ADD(lo, c2), tail)));
}

INLINE V ln_core(V x, V c, V c2, int has_c) { return ln_core_w(x, c, c2, has_c, NULL); }

/* Lanes that are not a positive normal finite number: exponent field 0 or
   255, or the sign set. */
INLINE M not_pos_normal(V x)
{
    VI e1 = _mm512_sub_epi32(AS_I(x), I(0x00800000u));
    return _mm512_cmp_epu32_mask(e1, I(0x7F000000u), _MM_CMPINT_NLT);
}

/* The compares read a denormal as a zero of its sign (DAZ), so ln's
   special cases see the reference's flushed input. */
INLINE V v_ln_w(V x, const VI *w)
{
    V zero = _mm512_setzero_ps();
    V r = ln_core_w(x, zero, zero, 0, w);
    if (not_pos_normal(x)) {
        r = put(r, eq(x, F(INFINITY)), F(INFINITY));
        r = put(r, eq(x, zero), F(-INFINITY));
        r = nan_where(_mm512_cmp_ps_mask(x, zero, _CMP_NGE_UQ), r); /* NaN, x < 0 */
    }
    return r;
}

/* ---- recip ---------------------------------------------------------------- */

typedef struct {
    V y1, r;
} vrecip_parts;

/* recip_split(m, err); without err (has_err 0) the last step is
   r - (+0 * y1) = r, left out. With div_seed the seed is a division
   instead of the table read: the same word (math_act_avx2.h,
   recip_seed_div), and on the AMD host of docs/math.md the activations
   took 0.89-0.96x their time with it (the other kernels keep the table). */
INLINE vrecip_parts recip_split_s(V m, V err, int has_err, int div_seed)
{
    VI j = _mm512_srli_epi32(AS_I(m), 16);
    V y0 = div_seed ? _mm512_div_ps(F(1.0f), AS_F(and_or(AS_I(m), 0xFFFF0000u, 0x8000u)))
                    : lut128(dn_recip_seed, j, bit6(j));
    V y1 = MUL(y0, SUB(F(2.0f), MUL(m, y0)));
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    V y_hi = hi12(y1), y_lo = SUB(y1, y_hi);
    V r = one_minus_split(m_hi, m_lo, y_hi, y_lo);
    if (has_err) r = SUB(r, MUL(err, y1));
    vrecip_parts p = {y1, r};
    return p;
}

INLINE vrecip_parts recip_split(V m, V err, int has_err)
{
    return recip_split_s(m, err, has_err, 0);
}

/* recip_mant(mant(x), 0) with x's sign */
INLINE V recip_signed(V x)
{
    vrecip_parts p = recip_split(mant(x), F(0.0f), 0);
    return _mm512_or_ps(ADD(p.y1, MUL(p.y1, p.r)), sign_of(x));
}

/* recip_core() for normal finite lanes (unflushed result) */
INLINE V recip_core(V x) { return scale(recip_signed(x), neg(expo(x))); }

/* Exponent fields 1..252: the result y 2^-E (y in [1/2, 1]) is normal, so
   the scale is an integer subtract of the exponent field, which with x's
   sign bit in it also sets the sign (-2^31 = +2^31 mod 2^32). Other
   vectors: zeros, infinities, NaN, results below 2^-126. */
INLINE V v_recip(V x)
{
    VI se = _mm512_and_si512(AS_I(x), I(0xFF800000u));
    VI e1 = _mm512_sub_epi32(_mm512_and_si512(se, I(DN_EXP_BITS)), I(0x00800000u));
    if (!_mm512_cmp_epu32_mask(e1, I(0x7E000000u), _MM_CMPINT_NLT)) {
        vrecip_parts p = recip_split(mant(x), F(0.0f), 0);
        VI y = AS_I(ADD(p.y1, MUL(p.y1, p.r)));
        return AS_F(_mm512_sub_epi32(_mm512_add_epi32(y, I(0x3F800000u)), se));
    }
    V ax = _mm512_abs_ps(x), sign = sign_of(x);
    V r = flush(recip_core(x));
    r = put(r, eq(ax, F(INFINITY)), sign);
    r = put(r, eq(ax, _mm512_setzero_ps()), _mm512_or_ps(sign, F(INFINITY)));
    return nan_where(isnan_(x), r);
}

/* ---- rsqrt ---------------------------------------------------------------- */

/* For a positive normal finite x the result is always normal (|k| <= 63),
   so scale(y2, -k) is an integer subtract of k from the exponent field. The
   seed's index 64p + top six fraction bits is u >> 17 with bit 6 (the
   exponent's lowest bit, the inverse of p) read the other way round. */
INLINE V v_rsqrt(V x)
{
    VI u = AS_I(x);
    VI E = _mm512_sub_epi32(_mm512_srli_epi32(u, 23), I(127));
    VI p = _mm512_and_si512(E, I(1));
    VI k = _mm512_srai_epi32(_mm512_sub_epi32(E, p), 1);
    V m = AS_F(_mm512_add_epi32(and_or(u, DN_FRAC_BITS, 0x3F800000u), _mm512_slli_epi32(p, 23)));
    VI j = _mm512_srli_epi32(u, 17);
    V y0 = lut128(dn_rsqrt_seed, j, _mm512_testn_epi32_mask(u, I(0x00800000u)));
    V y1 = MUL(y0, SUB(F(1.5f), MUL(F(0.5f), MUL(MUL(m, y0), y0))));
    V y_hi = hi12(y1), y_lo = SUB(y1, y_hi);
    V g_hi = MUL(y_hi, y_hi);
    V g_lo = ADD(MUL(ADD(y_hi, y_hi), y_lo), MUL(y_lo, y_lo));
    V gh_hi = hi12(g_hi), gh_lo = SUB(g_hi, gh_hi);
    V m_hi = hi12(m), m_lo = SUB(m, m_hi);
    V r = SUB(one_minus_split(m_hi, m_lo, gh_hi, gh_lo), MUL(m, g_lo));
    V y2 = ADD(y1, MUL(y1, MUL(F(0.5f), r)));
    V res = AS_F(_mm512_sub_epi32(AS_I(y2), _mm512_slli_epi32(k, 23)));
    if (not_pos_normal(x)) {
        V zero = _mm512_setzero_ps();
        res = put(res, eq(x, F(INFINITY)), zero);
        res = nan_where(_mm512_cmp_ps_mask(x, zero, _CMP_NGE_UQ), res);
        res = put(res, eq(x, zero), _mm512_or_ps(sign_of(x), F(INFINITY)));
    }
    return res;
}

/* ---- ln1p ----------------------------------------------------------------- */

INLINE V ln1p_core(V t_hi, V t_lo)
{
    V one = F(1.0f);
    V u = ADD(one, t_hi);
    V d = SUB(u, one);
    V err = SUB(_mm512_min_ps(t_hi, one), SUB(u, _mm512_max_ps(t_hi, one)));
    V y = recip_core(u);
    V q = MUL(err, y);
    M near = lt(u, F(2.0f));
    V ed = _mm512_maskz_mul_ps(near, err, d); /* near ? err*d : +0 */
    V rest = SUB(MUL(SUB(t_lo, ed), y), MUL(MUL(q, q), F(0.5f)));
    return ln_core(u, _mm512_mask_blend_ps(near, q, err), rest, 1);
}

INLINE V v_ln1p(V t)
{
    V tf = flush(t);
    V r = ln1p_core(tf, _mm512_setzero_ps());
    r = put(r, eq(tf, F(INFINITY)), F(INFINITY));
    r = put(r, eq(tf, F(-1.0f)), F(-INFINITY));
    r = put(r, eq(tf, _mm512_setzero_ps()), tf);
    return nan_where(_mm512_cmp_ps_mask(tf, F(-1.0f), _CMP_NGE_UQ), r);
}

/* ---- sigmoid, silu -------------------------------------------------------- */

typedef struct {
    vrecip_parts y;
    V e;
} vsig_parts;

/* sig_of_exp(): the sigmoid from e^-x's parts (div_seed: recip_split_s's) */
INLINE vsig_parts sig_of_exp_s(vexp_parts p, int div_seed)
{
    V k = kf(p);
    V t = scale(F(1.0f), neg(k));
    M hi_big = ge(p.hi, t);
    V big = _mm512_mask_blend_ps(hi_big, t, p.hi), small = _mm512_mask_blend_ps(hi_big, p.hi, t);
    V dh = ADD(t, p.hi);
    V de = ADD(ADD(SUB(big, dh), small), p.lo);
    V D = expo(dh);
    vsig_parts s;
    s.y = recip_split_s(mant(dh), scale(de, neg(D)), 1, div_seed);
    s.e = ADD(D, k);
    return s;
}

INLINE vsig_parts sig_of_exp(vexp_parts p) { return sig_of_exp_s(p, 0); }

/* sigmoid_core() of x in [-95, 80] */
INLINE vsig_parts sigmoid_core(V x) { return sig_of_exp(exp_split(neg(x), 1)); }

INLINE V v_sigmoid(V x)
{
    V xc = _mm512_min_ps(F(80.0f), _mm512_max_ps(F(-95.0f), x));
    vsig_parts s = sigmoid_core(xc);
    V y = ADD(s.y.y1, MUL(s.y.y1, s.y.r));
    return nan_where(isnan_(x), flush(scale(y, neg(s.e))));
}

/* mul_err(a, b, p) */
INLINE V mul_err(V a, V b, V p)
{
    V a_hi = hi12(a), a_lo = SUB(a, a_hi);
    V b_hi = hi12(b), b_lo = SUB(b, b_hi);
    return ADD(ADD(ADD(SUB(MUL(a_hi, b_hi), p), MUL(a_hi, b_lo)), MUL(a_lo, b_hi)),
               MUL(a_lo, b_lo));
}

/* times_sigmoid(): xm * sigmoid, unflushed */
INLINE V times_sigmoid(V xm, vsig_parts s)
{
    V X = smant(xm);
    V p = MUL(X, s.y.y1);
    V v = ADD(p, ADD(mul_err(X, s.y.y1, p), MUL(p, s.y.r)));
    return scale(scale(v, expo(xm)), neg(s.e));
}

INLINE V v_silu(V x)
{
    V xf = flush(x);
    V xm = _mm512_max_ps(xf, F(-95.0f));
    V r = flush(times_sigmoid(xm, sigmoid_core(_mm512_min_ps(xm, F(80.0f)))));
    r = put(r, eq(xf, _mm512_setzero_ps()), xf);
    return nan_where(isnan_(xf), r);
}

/* ---- softplus ------------------------------------------------------------- */

INLINE V v_softplus(V u)
{
    V uf = flush(u);
    M big = gt(uf, F(16.0f));
    /* u > 16: u + exp(-u) (exp's clamp); else exp_split(max(u, -95)) */
    V arg = _mm512_max_ps(F(-95.0f), _mm512_mask_blend_ps(big, uf, neg(uf)));
    vexp_parts p = exp_split(arg, 1);
    V k = kf(p);
    V eh = scale(p.hi, k);
    V r = ADD(uf, eh);
    if (big != 0xFFFF) r = _mm512_mask_blend_ps(big, ln1p_core(eh, scale(p.lo, k)), r);
    return nan_where(isnan_(uf), flush(r));
}

/* ---- array forms ------------------------------------------------------------ */

/* Sixteen at a time; the last n % 16 under a mask (the masked-off lanes
   compute on zeros and are not stored). Inlined into each entry with `f` a
   constant, so each is its own loop. */
INLINE void unary_avx512(const float *x, float *y, size_t n, V (*f)(V))
{
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
    if (i < n) {
        M m = (M)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
    }
    leave(csr);
}

/* exp of x_i (or of x_i - m, with_m: softmax) into y: four vectors under
   one range test (exp_slow2 twice), then one, then the last n mod 16 under
   a mask. One test per two vectors: exp_v took 0.96x the time of one per
   vector; four vectors an iteration with GCC's scheduling pass
   (DN_INTERLEAVED on the callers) 0.87-0.90x that of two without it,
   four without the pass 0.97-0.98x (docs/log/math.md, "More vectors an
   iteration"). */
INLINE void exp_loop(const float *x, float *y, size_t n, V vm, int with_m)
{
    exp_words tw = exp_words_load();
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        V v[4];
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            v[k] = _mm512_loadu_ps(x + i + 16 * k);
            if (with_m) v[k] = SUB(v[k], vm);
        }
        if (__builtin_expect(exp_slow2(v[0], v[1]) | exp_slow2(v[2], v[3]), 0)) {
#pragma GCC unroll 4
            for (int k = 0; k < 4; k++) v[k] = v_exp(v[k]);
        } else {
#pragma GCC unroll 4
            for (int k = 0; k < 4; k++) v[k] = exp_fast(v[k], &tw);
        }
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) _mm512_storeu_ps(y + i + 16 * k, v[k]);
    }
    for (; i + 16 <= n; i += 16) {
        V a = _mm512_loadu_ps(x + i);
        _mm512_storeu_ps(y + i, v_exp_fast(with_m ? SUB(a, vm) : a, &tw));
    }
    if (i < n) {
        M m = (M)((1u << (n - i)) - 1u);
        V a = _mm512_maskz_loadu_ps(m, x + i);
        _mm512_mask_storeu_ps(y + i, m, v_exp(with_m ? SUB(a, vm) : a));
    }
    leave(csr);
}

DN_INTERLEAVED static void exp_v_avx512(const float *x, float *y, size_t n)
{
    exp_loop(x, y, n, _mm512_setzero_ps(), 0);
}

static void ln_v_avx512(const float *x, float *y, size_t n)
{
    VI w[4];
    invc_words_load(w);
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, v_ln_w(_mm512_loadu_ps(x + i), w));
    if (i < n) {
        M m = (M)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, v_ln_w(_mm512_maskz_loadu_ps(m, x + i), w));
    }
    leave(csr);
}
static void rsqrt_v_avx512(const float *x, float *y, size_t n) { unary_avx512(x, y, n, v_rsqrt); }
/* recip_v, sigmoid_v, silu_v, softplus_v and ln1p_v: math_act_avx512.h (fast paths). */

/* ---- softmax ---------------------------------------------------------------- */

/* dn_ref_softmax: fmax and fsum are the fp32 core's AVX-512 reductions
   (the reference's lanes and tree), exp the fast loop above, the reciprocal
   the scalar one, then y_i * r with the result rule. */
DN_INTERLEAVED static float softmax_avx512(const float *x, float *y, size_t n)
{
    if (n == 0) return 0.0f;
    float mx = dn_fp32_avx512.fmax(x, n);
    exp_loop(x, y, n, F(mx), 1);
    float s = dn_fp32_avx512.fsum(y, n);
    V r = F(dn_recip(s));
    unsigned csr = dn_avx2_enter();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        V v = MUL(_mm512_loadu_ps(y + i), r);
        _mm512_storeu_ps(y + i, nan_where(isnan_(v), flush(v)));
    }
    if (i < n) {
        M m = (M)((1u << (n - i)) - 1u);
        V v = MUL(_mm512_maskz_loadu_ps(m, y + i), r);
        _mm512_mask_storeu_ps(y + i, m, nan_where(isnan_(v), flush(v)));
    }
    leave(csr);
    return s;
}

/* The other entries (the norms, rope, hadamard) are left NULL: they run
   the AVX2 kernels (src/dispatch.c). */
#include "math_act_avx512.h"
#include "math_trig_avx512.h"

const dn_math_kernels dn_math_avx512 = {
    .exp_v = exp_v_avx512,
    .ln_v = ln_v_avx512,
    .ln1p_v = ln1p_v_avx512,
    .recip_v = recip_v_avx512,
    .rsqrt_v = rsqrt_v_avx512,
    .sigmoid_v = sigmoid_v_avx512,
    .silu_v = silu_v_avx512,
    .softplus_v = softplus_v_avx512,
    .softmax = softmax_avx512,
    .tanh_v = tanh_v_avx512,
    .gelu_tanh_v = gelu_tanh_v_avx512,
    .gelu_v = gelu_v_avx512,
    .sin_v = sin_v_avx512,
    .cos_v = cos_v_avx512,
    .sincos_v = sincos_v_avx512,
    .rope_table = rope_table_avx512,
};
