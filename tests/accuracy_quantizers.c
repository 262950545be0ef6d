/* SPDX-License-Identifier: MIT */
/*
 * The simple quantizers of accuracy_dot (not ggml's): Gaussian weights
 * quantized into ggml's byte layouts, each block's scales from its extremes,
 * codes to nearest under the binary16-rounded scales.
 */
#include <math.h>
#include <string.h>

#include "accuracy_quantizers.h"
#include "decodenum.h"
#include "testutil.h"

/* ---- weights: Gaussian values quantized into ggml's byte layouts --------------
   Simple quantizers (not ggml's): each block's scales from its extremes,
   codes to nearest under the binary16-rounded scales. Layouts as
   src/blocks.c reads them. The bytes start zeroed. */

static uint16_t to_f16(double x) { return dn_f32_to_f16((float)x); }
static double from_f16(uint16_t h) { return (double)dn_f16_to_f32(h); }
static void store32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}

/* nearest integer of v / d within [lo, hi]; lo..hi's middle-ish 0 when d = 0 */
static int quant(double v, double d, int lo, int hi)
{
    double t = d != 0.0 ? v / d : 0.0;
    if (!(t > lo)) return lo;
    if (t >= hi) return hi;
    int q = (int)floor(t + 0.5);
    return q < lo ? lo : q > hi ? hi : q;
}

double absmax(const float *v, int n)
{
    double a = 0;
    for (int i = 0; i < n; i++) a = fmax(a, fabs((double)v[i]));
    return a;
}

/* the element of largest magnitude, with its sign */
static double extreme(const float *v, int n)
{
    double e = 0;
    for (int i = 0; i < n; i++)
        if (fabs((double)v[i]) > fabs(e)) e = v[i];
    return e;
}

static double minv(const float *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = fmin(m, (double)v[i]);
    return m;
}

static double maxv(const float *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = fmax(m, (double)v[i]);
    return m;
}

static const int8_t iq4_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                      1,    13,   25,  38,  53,  69,  89,  113};

static int nearest_level(double t)
{
    int best = 0;
    for (int k = 1; k < 16; k++)
        if (fabs(iq4_levels[k] - t) < fabs(iq4_levels[best] - t)) best = k;
    return best;
}

/* element e (0..31) of a 32-element block's nibbles: low nibbles 0..15, high 16..31 */
static void nibble32(uint8_t *qs, int e, int q)
{
    if (e < 16)
        qs[e] |= (uint8_t)q;
    else
        qs[e - 16] |= (uint8_t)(q << 4);
}

void put_q4_0(const float *v, uint8_t *b)
{
    uint16_t dh = to_f16(absmax(v, 32) / 7);
    put16(b, dh);
    for (int e = 0; e < 32; e++) nibble32(b + 2, e, quant(v[e], from_f16(dh), -8, 7) + 8);
}

void put_q4_1(const float *v, uint8_t *b)
{
    uint16_t dh = to_f16((maxv(v, 32) - minv(v, 32)) / 15), mh = to_f16(minv(v, 32));
    put16(b, dh);
    put16(b + 2, mh);
    for (int e = 0; e < 32; e++)
        nibble32(b + 4, e, quant(v[e] - from_f16(mh), from_f16(dh), 0, 15));
}

void put_q5_0(const float *v, uint8_t *b)
{
    uint16_t dh = to_f16(absmax(v, 32) / 15);
    uint32_t qh = 0;
    put16(b, dh);
    for (int e = 0; e < 32; e++) {
        int q = quant(v[e], from_f16(dh), -16, 15) + 16;
        nibble32(b + 6, e, q & 15);
        qh |= (uint32_t)(q >> 4) << e;
    }
    store32(b + 2, qh);
}

void put_q5_1(const float *v, uint8_t *b)
{
    uint16_t dh = to_f16((maxv(v, 32) - minv(v, 32)) / 31), mh = to_f16(minv(v, 32));
    uint32_t qh = 0;
    put16(b, dh);
    put16(b + 2, mh);
    for (int e = 0; e < 32; e++) {
        int q = quant(v[e] - from_f16(mh), from_f16(dh), 0, 31);
        nibble32(b + 8, e, q & 15);
        qh |= (uint32_t)(q >> 4) << e;
    }
    store32(b + 4, qh);
}

void put_q8_0(const float *v, uint8_t *b)
{
    uint16_t dh = to_f16(absmax(v, 32) / 127);
    put16(b, dh);
    for (int e = 0; e < 32; e++) b[2 + e] = (uint8_t)(quant(v[e], from_f16(dh), -127, 127) & 0xFF);
}

void put_iq4_nl(const float *v, uint8_t *b)
{
    double x = extreme(v, 32);
    uint16_t dh = to_f16(fabs(x) / (x < 0 ? 127 : 113));
    double d = from_f16(dh);
    put16(b, dh);
    for (int e = 0; e < 32; e++) nibble32(b + 2, e, nearest_level(d != 0 ? v[e] / d : 0));
}

/* Q2_K: per 16, w = d*sc*q - dmin*m, q 0..3, sc and m 0..15 */
void put_q2_k(const float *v, uint8_t *b)
{
    double scale[16], mins[16], smax = 0, mmax = 0;
    for (int j = 0; j < 16; j++) {
        double lo = fmin(0.0, minv(v + 16 * j, 16));
        scale[j] = (maxv(v + 16 * j, 16) - lo) / 3;
        mins[j] = -lo;
        smax = fmax(smax, scale[j]);
        mmax = fmax(mmax, mins[j]);
    }
    uint16_t dh = to_f16(smax / 15), mh = to_f16(mmax / 15);
    double d = from_f16(dh), dmin = from_f16(mh);
    put16(b + 80, dh);
    put16(b + 82, mh);
    for (int j = 0; j < 16; j++) {
        int sc = quant(scale[j], d, 0, 15), m = quant(mins[j], dmin, 0, 15);
        b[j] = (uint8_t)(sc | m << 4);
        for (int e = 16 * j; e < 16 * j + 16; e++) {
            int q = quant(v[e] + dmin * m, d * sc, 0, 3);
            b[16 + 32 * (e / 128) + e % 32] |= (uint8_t)(q << 2 * ((e % 128) / 32));
        }
    }
}

/* The signed sub-block scales of Q3_K, Q6_K and IQ4_XS: scale[j] = the
   extreme of sub-block j (nsub of len values) over code_lo, the code it maps
   to; the binary16 d that puts the largest |scale| on sc_max, stored at
   dh_at. Returns d. */
static double sub_scales(const float *v, int nsub, int len, int code_lo, int sc_max, double *scale,
                         uint8_t *dh_at)
{
    double smax = 0;
    for (int j = 0; j < nsub; j++) {
        scale[j] = extreme(v + len * j, len) / code_lo;
        smax = fmax(smax, fabs(scale[j]));
    }
    uint16_t dh = to_f16(smax / sc_max);
    put16(dh_at, dh);
    return from_f16(dh);
}

/* Q3_K: per 16, w = d*sc*q, q -4..3, sc -32..31 */
void put_q3_k(const float *v, uint8_t *b)
{
    double scale[16];
    double d = sub_scales(v, 16, 16, -4, 31, scale, b + 108);
    uint8_t *hmask = b, *qs = b + 32, *s = b + 96;
    for (int j = 0; j < 16; j++) {
        int sc = quant(scale[j], d, -32, 31), s6 = sc + 32;
        if (j < 8)
            s[j] |= (uint8_t)(s6 & 15);
        else
            s[j - 8] |= (uint8_t)((s6 & 15) << 4);
        s[8 + j % 4] |= (uint8_t)((s6 >> 4) << 2 * (j / 4));
        for (int e = 16 * j; e < 16 * j + 16; e++) {
            int q = quant(v[e], d * sc, -4, 3), low = q >= 0 ? q : q + 4;
            if (q >= 0) hmask[e % 32] |= (uint8_t)(1 << (e / 32));
            qs[32 * (e / 128) + e % 32] |= (uint8_t)(low << 2 * ((e % 128) / 32));
        }
    }
}

/* Q4_K and Q5_K: per 32, w = d*sc*q - dmin*m, sc and m 0..63 (6-bit, packed) */
static void put_k_scales(uint8_t *s, int j, int sc, int m)
{
    if (j < 4) {
        s[j] |= (uint8_t)sc;
        s[j + 4] |= (uint8_t)m;
    } else {
        s[j + 4] |= (uint8_t)((sc & 15) | (m & 15) << 4);
        s[j - 4] |= (uint8_t)((sc >> 4) << 6);
        s[j] |= (uint8_t)((m >> 4) << 6);
    }
}

static void put_q45_k(const float *v, uint8_t *b, int qmax)
{
    double scale[8], mins[8], smax = 0, mmax = 0;
    for (int j = 0; j < 8; j++) {
        double lo = fmin(0.0, minv(v + 32 * j, 32));
        scale[j] = (maxv(v + 32 * j, 32) - lo) / qmax;
        mins[j] = -lo;
        smax = fmax(smax, scale[j]);
        mmax = fmax(mmax, mins[j]);
    }
    uint16_t dh = to_f16(smax / 63), mh = to_f16(mmax / 63);
    double d = from_f16(dh), dmin = from_f16(mh);
    put16(b, dh);
    put16(b + 2, mh);
    uint8_t *qh = b + 16, *qs = qmax == 15 ? b + 16 : b + 48;
    for (int j = 0; j < 8; j++) {
        int sc = quant(scale[j], d, 0, 63), m = quant(mins[j], dmin, 0, 63);
        put_k_scales(b + 4, j, sc, m);
        for (int e = 32 * j; e < 32 * j + 32; e++) {
            int q = quant(v[e] + dmin * m, d * sc, 0, qmax);
            qs[32 * (e / 64) + e % 32] |= (uint8_t)(e % 64 < 32 ? q & 15 : (q & 15) << 4);
            if (qmax == 31) qh[e % 32] |= (uint8_t)((q >> 4) << (e / 32));
        }
    }
}

void put_q4_k(const float *v, uint8_t *b) { put_q45_k(v, b, 15); }
void put_q5_k(const float *v, uint8_t *b) { put_q45_k(v, b, 31); }

/* Q6_K: per 16, w = d*sc*(q - 32), q 0..63, sc int8 */
void put_q6_k(const float *v, uint8_t *b)
{
    double scale[16];
    double d = sub_scales(v, 16, 16, -32, 127, scale, b + 208);
    uint8_t *ql = b, *qh = b + 128;
    for (int j = 0; j < 16; j++) {
        int sc = quant(scale[j], d, -128, 127);
        b[192 + j] = (uint8_t)(sc & 0xFF);
        for (int e = 16 * j; e < 16 * j + 16; e++) {
            int q = quant(v[e], d * sc, -32, 31) + 32;
            int h = e / 128, k = (e % 128) / 32, l = e % 32;
            ql[64 * h + 32 * (k & 1) + l] |= (uint8_t)((q & 15) << 4 * (k >> 1));
            qh[32 * h + l] |= (uint8_t)((q >> 4) << 2 * k);
        }
    }
}

/* IQ4_XS: per 32, w = d*(ls - 32)*L[idx], ls 0..63 */
void put_iq4_xs(const float *v, uint8_t *b)
{
    double scale[8];
    double d = sub_scales(v, 8, 32, -127, 31, scale, b);
    unsigned scales_h = 0;
    for (int j = 0; j < 8; j++) {
        int ls = quant(scale[j], d, -32, 31);
        double dl = d * ls;
        b[4 + j / 2] |= (uint8_t)(((ls + 32) & 15) << 4 * (j % 2));
        scales_h |= (unsigned)((ls + 32) >> 4) << 2 * j;
        for (int e = 32 * j; e < 32 * j + 32; e++) {
            int idx = nearest_level(dl != 0 ? v[e] / dl : 0);
            b[8 + 16 * j + e % 16] |= (uint8_t)(e % 32 < 16 ? idx : idx << 4);
        }
    }
    put16(b + 2, (uint16_t)scales_h);
}
