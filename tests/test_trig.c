/* SPDX-License-Identifier: MIT */
/*
 * Sine, cosine and the RoPE tables against expectations derived from first
 * principles: the special values, oddness and evenness, sincos = (sin, cos)
 * bit for bit, agreement with the exact value (glibc's double sin/cos of the
 * exactly represented argument: below 2^-29 of a binary32 ulp from it) on
 * small and large arguments, the inverse frequencies against the double
 * power, the table's row for position 1 being dn_cos/dn_sin of w, its rows
 * against the double cosine of the exact double product pos * w, its rows
 * fed to dn_rope in both pairings with a partial rotary dimension, and the
 * statuses of bad input. Runs under every DECODENUM_ISA.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "math_tables.h"
#include "testutil.h"

#define NAN_BITS 0x7FC00000u

/* |ours - exact| in units of the last place of exact's binade (binary32) */
static double ulps(float ours, double exact)
{
    int e;
    frexp(fabs(exact), &e);
    if (e - 1 < -126) e = -125;
    return fabs((double)ours - exact) / ldexp(1.0, e - 1 - 23);
}

static void trig_specials(void **state)
{
    (void)state;
    assert_bits(dn_sin(0.0f), 0x00000000);
    assert_bits(dn_sin(-0.0f), 0x80000000);
    assert_bits(dn_cos(0.0f), 0x3F800000);
    assert_bits(dn_cos(-0.0f), 0x3F800000);
    assert_bits(dn_sin(tf(0x80400000)), 0x80000000); /* a denormal reads as -0 */
    assert_bits(dn_cos(tf(0x00400000)), 0x3F800000);
    assert_bits(dn_sin(INFINITY), NAN_BITS);
    assert_bits(dn_cos(-INFINITY), NAN_BITS);
    assert_bits(dn_sin(tf(0xFFC00001)), NAN_BITS);
    assert_bits(dn_cos(tf(0x7F800001)), NAN_BITS);
    /* below 2^-12, sin x = x (x^3/6 is under a third of an ulp) */
    assert_same_float(dn_sin(0x1p-20f), 0x1p-20f);
    assert_same_float(dn_sin(-0x1.fffffep-13f), -0x1.fffffep-13f);
    /* cos of a small x is 1 - x^2/2 rounded: 1 below 2^-12.5 */
    assert_bits(dn_cos(0x1p-13f), 0x3F800000);
    float s, c;
    dn_sincos(INFINITY, &s, &c);
    assert_bits(s, NAN_BITS);
    assert_bits(c, NAN_BITS);
}

/* sin(-x) = -sin(x), cos(-x) = cos(x), sincos = (sin, cos), and each within
   0.51 ULP of the exact value, on arguments from 2^-30 to 2^127. */
static void trig_against_exact(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    double worst = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t z = lcg64(&seed);
        uint32_t u = (uint32_t)(z >> 20) & 0x7FFFFF;
        u |= (uint32_t)(127 - 30 + (int)((z >> 44) % 157)) << 23;
        float x = tf(u);
        float sp = dn_sin(x), cp = dn_cos(x), sn = dn_sin(-x), cn = dn_cos(-x), s, c;
        assert_int_equal(tbits(sn), tbits(sp) ^ 0x80000000u);
        assert_int_equal(tbits(cn), tbits(cp));
        dn_sincos(-x, &s, &c);
        assert_int_equal(tbits(s), tbits(sn));
        assert_int_equal(tbits(c), tbits(cn));
        double es = ulps(sp, sin((double)x)), ec = ulps(cp, cos((double)x));
        worst = es > worst ? es : worst;
        worst = ec > worst ? ec : worst;
    }
    assert_true(worst <= 0.51);
    /* the RoPE range: 2^20 radians and just below */
    assert_true(ulps(dn_sin(0x1p20f), sin(0x1p20)) <= 0.51);
    assert_true(ulps(dn_cos(0x1.fffffep19f), cos(0x1.fffffep19)) <= 0.51);
}

static void trig_arrays(void **state)
{
    (void)state;
    enum { N = 1000 };
    float x[N], y[N], s[N], c[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - 500) * 0.37f + (i % 7 ? 0.0f : 1e6f);
    assert_int_equal(dn_sin_v(x, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_same_float(y[i], dn_sin(x[i]));
    assert_int_equal(dn_cos_v(x, y, N), DN_OK);
    for (int i = 0; i < N; i++) assert_same_float(y[i], dn_cos(x[i]));
    assert_int_equal(dn_sincos_v(x, s, c, N), DN_OK);
    for (int i = 0; i < N; i++) {
        assert_same_float(s[i], dn_sin(x[i]));
        assert_same_float(c[i], dn_cos(x[i]));
    }
    memcpy(y, x, sizeof x);
    assert_int_equal(dn_sincos_v(y, c, y, N), DN_OK); /* cos in place */
    for (int i = 0; i < N; i++) assert_same_float(y[i], dn_cos(x[i]));
    assert_int_equal(dn_sin_v(NULL, y, 0), DN_OK);
    assert_int_equal(dn_sin_v(NULL, y, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_cos_v(x, NULL, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_sincos_v(x, s, s, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_sincos_v(x, NULL, c, 1), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_sincos_v(NULL, NULL, NULL, 0), DN_OK);
}

/* What the AVX2 kernels assume of the tables (src/x86/math_trig_avx2.h):
   below 2^24 the window of 1/pi for biased exponent b is the window for
   b = 150 shifted right by 150 - b (computed there by word shifts, as
   here), for every b from 119 to 150; and each sin(j*pi/32) table has
   entry 32 + k = -(entry k) except where entry k is +0 (then +0), with its
   zeros only at k = 0 (s24, s12) or k = 0, 16 (s24_lo, s12_lo), and entry
   32 - k = entry k for k = 1..15, bit for bit (so entry 16 + m is entry
   16 - m, m = 0..16: the tables from entry 16 on are their backwards
   copies, MIRROR). And what
   the AVX-512 kernels assume (src/x86/math_trig_avx512.h): every window,
   b = 64..254, is bits 254 - b .. 349 - b of P = floor(2^199/pi), whose
   eight words they take from the entries for b = 254, 222, 190, 158, 126
   and 94 (trig_invpi_words). */
static void trig_kernel_tables(void **state)
{
    (void)state;
    const uint32_t *k = dn_trig_invpi[150 - 64];
    for (uint32_t b = 119; b <= 150; b++) {
        uint32_t s = 150 - b, t = 32 - s;
        uint32_t w0 = k[0] >> s;
        uint32_t w1 = (k[1] >> s) | (t < 32 ? k[0] << t : 0u);
        uint32_t w2 = (k[2] >> s) | (t < 32 ? k[1] << t : 0u);
        assert_int_equal(w0, dn_trig_invpi[b - 64][0]);
        assert_int_equal(w1, dn_trig_invpi[b - 64][1]);
        assert_int_equal(w2, dn_trig_invpi[b - 64][2]);
    }
    const uint32_t(*v)[3] = dn_trig_invpi;
    const uint32_t P[8] = {v[190][2], v[158][2], v[126][2], v[94][2],
                           v[62][2],  v[30][2],  v[30][1],  v[30][0]};
    for (uint32_t b = 64; b <= 254; b++) {
        uint32_t sh = 254 - b, q = sh / 32, r = sh % 32;
        uint32_t w[3];
        for (uint32_t i = 0; i < 3; i++) { /* w[2 - i] = bits sh + 32i .. of P */
            uint32_t lo = q + i < 8 ? P[q + i] : 0u, hi = q + i + 1 < 8 ? P[q + i + 1] : 0u;
            w[2 - i] = (lo >> r) | (r ? hi << (32 - r) : 0u);
        }
        assert_int_equal(w[0], v[b - 64][0]);
        assert_int_equal(w[1], v[b - 64][1]);
        assert_int_equal(w[2], v[b - 64][2]);
    }
    const float *tabs[4] = {dn_trig_s24, dn_trig_s24_lo, dn_trig_s12, dn_trig_s12_lo};
    for (int n = 0; n < 4; n++) {
        const float *t = tabs[n];
        for (int j = 0; j < 32; j++) {
            int zero = j == 0 || (j == 16 && (n & 1));
            if (zero) {
                assert_same_float(t[j], 0.0f);
                assert_same_float(t[j + 32], 0.0f);
            } else {
                assert_true(t[j] != 0.0f);
                assert_same_float(t[j + 32], -t[j]);
            }
            if (j >= 1 && j <= 15) assert_same_float(t[32 - j], t[j]);
        }
    }
}

/* The array forms where a vector mixes lanes below 2^24 (the kernels'
   computed windows) with lanes at or above it, infinities and NaNs (their
   table reads), at every lane position of 16, around each boundary. */
static void trig_mixed_lanes(void **state)
{
    (void)state;
    static const uint32_t edge[] = {0x4B7FFFFFu, 0x4B800000u, 0x4B800001u, 0x7F7FFFFFu,
                                    0x7F800000u, 0x7FC00000u, 0x3CFFFFFFu, 0x3D000000u,
                                    0x397FFFFFu, 0x39800000u, 0x00000001u, 0x3F800000u};
    enum { N = 16 * 12 * 16 };
    static float x[N], y[N], s[N], c[N];
    int i = 0;
    for (int e = 0; e < 12; e++)
        for (int lane = 0; lane < 16; lane++)
            for (int m = 0; m < 16; m++, i++) {
                uint32_t u = m == lane ? edge[e] : 0x40A00000u + (uint32_t)(m * 77777);
                memcpy(&x[i], &u, sizeof u);
                if ((m + e) & 1) x[i] = -x[i];
            }
    assert_int_equal(dn_sin_v(x, y, N), DN_OK);
    for (i = 0; i < N; i++) assert_same_float(y[i], dn_sin(x[i]));
    assert_int_equal(dn_cos_v(x, y, N), DN_OK);
    for (i = 0; i < N; i++) assert_same_float(y[i], dn_cos(x[i]));
    assert_int_equal(dn_sincos_v(x, s, c, N), DN_OK);
    for (i = 0; i < N; i++) {
        assert_same_float(s[i], dn_sin(x[i]));
        assert_same_float(c[i], dn_cos(x[i]));
    }
}

static void rope_freqs(void **state)
{
    (void)state;
    float w[64];
    assert_int_equal(dn_rope_freqs(10000.0f, 128, 1.0f, w), DN_OK);
    assert_bits(w[0], 0x3F800000); /* theta^0 = e^(ln theta * -0) = 1 */
    for (int i = 0; i < 64; i++) {
        double exact = pow(10000.0, -2.0 * i / 128.0);
        assert_true(fabs(w[i] - exact) <= exact * 0x1p-19); /* ln's and exp's errors */
    }
    float w2[64];
    assert_int_equal(dn_rope_freqs(10000.0f, 128, 0.25f, w2), DN_OK);
    for (int i = 0; i < 64; i++) assert_same_float(w2[i], w[i] * 0.25f); /* exact: a power of 2 */
    assert_int_equal(dn_rope_freqs(10000.0f, 0, 1.0f, w), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rope_freqs(10000.0f, 7, 1.0f, w), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rope_freqs(10000.0f, 8, 1.0f, NULL), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rope_freqs(NAN, 8, 1.0f, w), DN_ERR_NON_FINITE);
    assert_int_equal(dn_rope_freqs(INFINITY, 8, 1.0f, w), DN_ERR_NON_FINITE);
    assert_int_equal(dn_rope_freqs(-2.0f, 8, 1.0f, w), DN_ERR_NON_FINITE);
    assert_int_equal(dn_rope_freqs(10000.0f, 8, 0.0f, w), DN_ERR_NON_FINITE);
}

static void rope_table_rows(void **state)
{
    (void)state;
    enum { P = 64 };
    float w[P];
    assert_int_equal(dn_rope_freqs(1000000.0f, 2 * P, 1.0f, w), DN_OK);
    int32_t pos[8] = {0, 1, -1, 7, 4096, 65535, 1 << 20, -(1 << 20)};
    float cs[8 * P], sn[8 * P];
    assert_int_equal(dn_rope_table(pos, 8, w, P, cs, sn), DN_OK);
    double worst = 0;
    for (int i = 0; i < P; i++) {
        assert_bits(cs[i], 0x3F800000); /* position 0 */
        assert_bits(sn[i], 0x00000000);
        assert_same_float(cs[P + i], dn_cos(w[i])); /* position 1 */
        assert_same_float(sn[P + i], dn_sin(w[i]));
        assert_same_float(cs[2 * P + i], cs[P + i]); /* position -1 */
        assert_int_equal(tbits(sn[2 * P + i]), tbits(sn[P + i]) ^ 0x80000000u);
        for (int k = 3; k < 8; k++) {
            double a = (double)pos[k] * (double)w[i]; /* exact: 21 + 24 bits */
            double ec = ulps(cs[k * P + i], cos(a)), es = ulps(sn[k * P + i], sin(a));
            worst = ec > worst ? ec : worst;
            worst = es > worst ? es : worst;
        }
    }
    assert_true(worst <= 0.6);
    /* bad input: nothing written */
    float keep = cs[0];
    int32_t far[1] = {(1 << 24) + 1};
    assert_int_equal(dn_rope_table(far, 1, w, P, cs, sn), DN_ERR_INVALID_ARGUMENT);
    float wbad[2] = {1.0f, NAN};
    assert_int_equal(dn_rope_table(pos, 1, wbad, 2, cs, sn), DN_ERR_NON_FINITE);
    assert_int_equal(dn_rope_table(pos, 1, w, P, cs, cs), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rope_table(NULL, 1, w, P, cs, sn), DN_ERR_INVALID_ARGUMENT);
    assert_int_equal(dn_rope_table(pos, 0, w, P, NULL, NULL), DN_OK);
    assert_int_equal(dn_rope_table(pos, SIZE_MAX, w, 2, cs, sn), DN_ERR_INVALID_ARGUMENT);
    assert_same_float(cs[0], keep);
}

/* A row of the table turns a head through dn_rope in either pairing, with
   a partial rotary dimension (24 of 32 elements turned, 8 passed through):
   each pair (a, b) becomes (a c - b s, a s + b c) with the engine's ops. */
static void rope_table_feeds_rope(void **state)
{
    (void)state;
    enum { HEAD = 32, ROT = 24, NP = ROT / 2 };
    float w[NP], cs[NP], sn[NP], x[HEAD], y[HEAD];
    assert_int_equal(dn_rope_freqs(10000.0f, ROT, 1.0f, w), DN_OK);
    int32_t pos = 123457;
    assert_int_equal(dn_rope_table(&pos, 1, w, NP, cs, sn), DN_OK);
    for (int i = 0; i < HEAD; i++) x[i] = (float)(i * 3 - 40) * 0.125f;
    for (int mode = 0; mode < 2; mode++) {
        assert_int_equal(dn_rope(x, HEAD, cs, sn, NP, mode ? DN_ROPE_NEOX : DN_ROPE_INTERLEAVED, y),
                         DN_OK);
        for (int i = 0; i < NP; i++) {
            int a = mode ? i : 2 * i, b = mode ? i + NP : 2 * i + 1;
            assert_same_float(y[a], dn_fsub(dn_fmul(x[a], cs[i]), dn_fmul(x[b], sn[i])));
            assert_same_float(y[b], dn_fadd(dn_fmul(x[a], sn[i]), dn_fmul(x[b], cs[i])));
        }
        for (int i = ROT; i < HEAD; i++) assert_same_float(y[i], x[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trig_specials),    cmocka_unit_test(trig_against_exact),
        cmocka_unit_test(trig_arrays),      cmocka_unit_test(trig_kernel_tables),
        cmocka_unit_test(trig_mixed_lanes), cmocka_unit_test(rope_freqs),
        cmocka_unit_test(rope_table_rows),  cmocka_unit_test(rope_table_feeds_rope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
