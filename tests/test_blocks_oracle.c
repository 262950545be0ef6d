/* SPDX-License-Identifier: MIT */
/*
 * The block formats (decodenum/blocks.h) in exact integer arithmetic: every
 * row of ../shared/oracle's ggml-blocks.bin (written and dequantized by the
 * real ggml) read and checked value by value, and the coefficient bound over
 * every code and sub-block scale each format can store, through an encoder
 * written here from the formats' definitions. The other block tests are in
 * test_blocks.c.
 */
#include "blocks_fmt.h"
#include "oracle.h"

/* ---- (b) the bound, over every code and sub-block scale ----------------------- */

/* An encoder written from each format's definition (docs/blocks.md), the
   inverse of the reader: it stores a raw code at element e and a raw scale
   (and min) for sub-block j. Raw values are what the block stores:
   Q3_K's code is its 2 low bits | its high bit << 2, Q6_K's scale an int8,
   IQ4_* codes are level indices. */
typedef struct synth {
    dn_type type;
    int sub; /* elements per sub-block scale (the block when none) */
    int sc_lo, sc_hi, m_lo, m_hi, q_lo, q_hi;
    void (*put_q)(uint8_t *blk, int e, int q);
    void (*put_s)(uint8_t *blk, int j, int sc, int m);
    int (*coef)(int sc, int q);
    int (*offs)(int m);
} synth;

static const int levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                               1,    13,   25,  38,  53,  69,  89,  113};

static void set_bits(uint8_t *p, int bit, int width, int v)
{
    int mask = (1 << width) - 1;
    p[bit / 8] = (uint8_t)((p[bit / 8] & ~(mask << bit % 8)) | (v & mask) << bit % 8);
}
/* 32 codes as nibbles: element e < 16 the low nibble of byte e, else the high nibble of byte e - 16. */
static void nib32(uint8_t *qs, int e, int q) { set_bits(qs + e % 16, e < 16 ? 0 : 4, 4, q); }

static void q40_q(uint8_t *b, int e, int q) { nib32(b + 2, e, q); }
static void q41_q(uint8_t *b, int e, int q) { nib32(b + 4, e, q); }
static void q50_q(uint8_t *b, int e, int q)
{
    nib32(b + 6, e, q & 15);
    set_bits(b + 2, e, 1, q >> 4);
}
static void q51_q(uint8_t *b, int e, int q)
{
    nib32(b + 8, e, q & 15);
    set_bits(b + 4, e, 1, q >> 4);
}
static void q80_q(uint8_t *b, int e, int q) { b[2 + e] = (uint8_t)q; }
static void q2k_q(uint8_t *b, int e, int q)
{
    set_bits(b + 16 + 32 * (e / 128) + e % 32, 2 * ((e % 128) / 32), 2, q);
}
static void q3k_q(uint8_t *b, int e, int q)
{
    set_bits(b + 32 + 32 * (e / 128) + e % 32, 2 * ((e % 128) / 32), 2, q & 3);
    set_bits(b + e % 32, e / 32, 1, q >> 2);
}
static void q4k_nib(uint8_t *qs, int e, int q)
{
    set_bits(qs + 32 * (e / 64) + e % 32, e % 64 < 32 ? 0 : 4, 4, q);
}
static void q4k_q(uint8_t *b, int e, int q) { q4k_nib(b + 16, e, q); }
static void q5k_q(uint8_t *b, int e, int q)
{
    q4k_nib(b + 48, e, q & 15);
    set_bits(b + 16 + e % 32, e / 32, 1, q >> 4);
}
static void q6k_q(uint8_t *b, int e, int q)
{
    int h = e / 128, k = (e % 128) / 32, l = e % 32;
    set_bits(b + 64 * h + 32 * (k & 1) + l, 4 * (k >> 1), 4, q & 15);
    set_bits(b + 128 + 32 * h + l, 2 * k, 2, q >> 4);
}
static void xs_q(uint8_t *b, int e, int q)
{
    set_bits(b + 8 + 16 * (e / 32) + e % 16, e % 32 < 16 ? 0 : 4, 4, q);
}

static void none_s(uint8_t *b, int j, int sc, int m) { (void)b, (void)j, (void)sc, (void)m; }
static void q2k_s(uint8_t *b, int j, int sc, int m) { b[j] = (uint8_t)(sc | m << 4); }
static void q3k_s(uint8_t *b, int j, int sc, int m)
{
    (void)m;
    uint8_t *s = b + 96;
    set_bits(j < 8 ? s + j : s + j - 8, j < 8 ? 0 : 4, 4, sc & 15);
    set_bits(s + 8 + j % 4, 2 * (j / 4), 2, sc >> 4);
}
static void k_s(uint8_t *s, int j, int sc, int m)
{
    if (j < 4) {
        set_bits(s + j, 0, 6, sc);
        set_bits(s + j + 4, 0, 6, m);
    } else {
        s[j + 4] = (uint8_t)((sc & 15) | (m & 15) << 4);
        set_bits(s + j - 4, 6, 2, sc >> 4);
        set_bits(s + j, 6, 2, m >> 4);
    }
}
static void q4k_s(uint8_t *b, int j, int sc, int m) { k_s(b + 4, j, sc, m); }
static void q6k_s(uint8_t *b, int j, int sc, int m)
{
    (void)m;
    b[192 + j] = (uint8_t)sc;
}
static void xs_s(uint8_t *b, int j, int sc, int m)
{
    (void)m;
    set_bits(b + 4 + j / 2, 4 * (j % 2), 4, sc & 15);
    set_bits(b + 2 + j / 4, 2 * (j % 4), 2, sc >> 4);
}

static int c_minus8(int sc, int q)
{
    (void)sc;
    return q - 8;
}
static int c_plain(int sc, int q)
{
    (void)sc;
    return q;
}
static int c_minus16(int sc, int q)
{
    (void)sc;
    return q - 16;
}
static int c_level(int sc, int q)
{
    (void)sc;
    return levels[q];
}
static int c_times(int sc, int q) { return sc * q; }
static int c_q3k(int sc, int q) { return (sc - 32) * ((q & 3) - (q >> 2 ? 0 : 4)); }
static int c_q6k(int sc, int q) { return sc * (q - 32); }
static int c_xs(int sc, int q) { return (sc - 32) * levels[q]; }
static int o_zero(int m)
{
    (void)m;
    return 0;
}
static int o_one(int m)
{
    (void)m;
    return 1;
}
static int o_neg(int m) { return -m; }

static const synth synths[] = {
    {DN_TYPE_Q4_0, 32, 0, 0, 0, 0, 0, 15, q40_q, none_s, c_minus8, o_zero},
    {DN_TYPE_Q4_1, 32, 0, 0, 0, 0, 0, 15, q41_q, none_s, c_plain, o_one},
    {DN_TYPE_Q5_0, 32, 0, 0, 0, 0, 0, 31, q50_q, none_s, c_minus16, o_zero},
    {DN_TYPE_Q5_1, 32, 0, 0, 0, 0, 0, 31, q51_q, none_s, c_plain, o_one},
    {DN_TYPE_Q8_0, 32, 0, 0, 0, 0, -128, 127, q80_q, none_s, c_plain, o_zero},
    {DN_TYPE_Q2_K, 16, 0, 15, 0, 15, 0, 3, q2k_q, q2k_s, c_times, o_neg},
    {DN_TYPE_Q3_K, 16, 0, 63, 0, 0, 0, 7, q3k_q, q3k_s, c_q3k, o_zero},
    {DN_TYPE_Q4_K, 32, 0, 63, 0, 63, 0, 15, q4k_q, q4k_s, c_times, o_neg},
    {DN_TYPE_Q5_K, 32, 0, 63, 0, 63, 0, 31, q5k_q, q4k_s, c_times, o_neg},
    {DN_TYPE_Q6_K, 16, -128, 127, 0, 0, 0, 63, q6k_q, q6k_s, c_q6k, o_zero},
    {DN_TYPE_IQ4_NL, 32, 0, 0, 0, 0, 0, 15, q40_q, none_s, c_level, o_zero},
    {DN_TYPE_IQ4_XS, 32, 0, 63, 0, 0, 0, 15, xs_q, xs_s, c_xs, o_zero},
};

/* A scrambled start per element, so that elements 16, 32, 64 or 128 apart
   (where a misread layout would look) hold different codes. */
static int scramble(int e) { return (int)(((uint32_t)e * 2654435761u) >> 11 & 0xFFFF); }

/* For each format: blocks t = 0, 1, ... give sub-block j the raw scale
   sc_lo + (t + 5j) % #scales and min m_lo + (t + 3j) % #mins, and for each
   shift u over every code, element e the code q_lo + (scramble(e) + u) %
   #codes. So every element position meets every code, every sub-block every
   scale and min (each sub-block of a block a different one), and every
   sub-block every (scale, code) pair. Each element read
   must be the definition's coef and offs, within DN_COEF_BOUND; the
   extremes met must be the format's range, and the largest magnitude over
   all formats must be DN_COEF_BOUND itself (the bound is tight). */
static void coefficient_bound(void **state)
{
    (void)state;
    int overall = 0;
    for (size_t i = 0; i < sizeof synths / sizeof synths[0]; i++) {
        const synth *sy = &synths[i];
        const fmt *f = fmt_of(sy->type);
        int nsc = sy->sc_hi - sy->sc_lo + 1, nm = sy->m_hi - sy->m_lo + 1,
            nq = sy->q_hi - sy->q_lo + 1;
        int nt = nsc > nm ? nsc : nm;
        uint8_t blk[256];
        dn_coded_row r;
        row_alloc(&r, f->elements, f->elements);
        int cmin = 1 << 20, cmax = -(1 << 20), omin = 1 << 20, omax = -(1 << 20);
        size_t checked = 0;
        for (int t = 0; t < nt; t++) {
            for (int u = 0; u < nq; u++) {
                memset(blk, 0, sizeof blk);
                put16(blk + f->d_at, 0x3C00);
                if (f->b_at >= 0) put16(blk + f->b_at, 0x3C00);
                for (int j = 0; j < (int)f->elements / sy->sub; j++)
                    sy->put_s(blk, j, sy->sc_lo + (t + 5 * j) % nsc, sy->m_lo + (t + 3 * j) % nm);
                for (int e = 0; e < (int)f->elements; e++)
                    sy->put_q(blk, e, sy->q_lo + (scramble(e) + u) % nq);
                read_one(sy->type, blk, &r);
                for (int e = 0; e < (int)f->elements; e++) {
                    int j = e / sy->sub;
                    int sc = sy->sc_lo + (t + 5 * j) % nsc, m = sy->m_lo + (t + 3 * j) % nm;
                    int q = sy->q_lo + (scramble(e) + u) % nq;
                    if (r.coef[e] != sy->coef(sc, q) || r.offs[e] != sy->offs(m)) {
                        printf("  %s element %d (scale %d, min %d, code %d): coef %d offs %d, want "
                               "%d %d\n",
                               f->name, e, sc, m, q, r.coef[e], r.offs[e], sy->coef(sc, q),
                               sy->offs(m));
                        fail();
                    }
                    assert_true(abs(r.coef[e]) <= DN_COEF_BOUND && abs(r.offs[e]) <= DN_COEF_BOUND);
                    cmin = r.coef[e] < cmin ? r.coef[e] : cmin;
                    cmax = r.coef[e] > cmax ? r.coef[e] : cmax;
                    omin = r.offs[e] < omin ? r.offs[e] : omin;
                    omax = r.offs[e] > omax ? r.offs[e] : omax;
                    checked++;
                }
            }
        }
        printf("  %-6s %7zu elements: coef %5d..%4d, offs %3d..%d\n", f->name, checked, cmin, cmax,
               omin, omax);
        assert_int_equal(cmin, f->coef_min);
        assert_int_equal(cmax, f->coef_max);
        assert_int_equal(omin, f->offs_min);
        assert_int_equal(omax, f->offs_max);
        int big = abs(cmin) > cmax ? abs(cmin) : cmax;
        overall = big > overall ? big : overall;
        overall = abs(omin) > overall ? abs(omin) : overall;
        row_free(&r);
    }
    assert_int_equal(overall, DN_COEF_BOUND);
}

/* ---- (a) the ggml oracle ------------------------------------------------------ */

/* ggml's f32 for one weight, evaluated as dequantize_row_<type> does, from
   the coded row (see enum ggml_eval; binary32 operations, no contraction). */
static float ggml_value(enum ggml_eval ev, const dn_segment *s, int coef, int offs)
{
    float a = scale_value(s->a), b = scale_value(s->b);
    switch (ev) {
    case G_CODE_D: return (float)coef * a;
    case G_SUBSCALE: return a * (float)coef;
    case G_ADD_MIN: return (float)coef * a + b * (float)offs;
    case G_SUB_MIN: return a * (float)coef - b * (float)-offs;
    }
    return 0;
}

/* The exact value of a*coef + b*offs in units of 2^-24: every binary16 scale
   is sig * 2^exp with exp >= -24 and |sig| <= 2047, exp <= 5, and
   |coef|, |offs| <= 4096 < 2^13, so each term is an integer below
   2^(11 + 29 + 13) = 2^53 in magnitude and so is the sum: int64 is exact. */
static int64_t exact_units(const dn_segment *s, int coef, int offs)
{
    assert_true(s->a.exp + 24 >= 0 && s->a.exp + 24 <= 29);
    assert_true(s->b.exp + 24 >= 0 && s->b.exp + 24 <= 29);
    return (int64_t)s->a.sig * coef * ((int64_t)1 << (s->a.exp + 24)) +
           (int64_t)s->b.sig * offs * ((int64_t)1 << (s->b.exp + 24));
}

typedef struct tally {
    size_t values, exact, rounded, bit_equal, signed_zeros;
    double worst_ulps; /* largest |exact - ggml| in ulps of ggml's value */
} tally;

/* One oracle row of a type the array reads: read it, and hold every value
   to ggml's. Returns 0 on a mismatch (after printing it). */
static int check_oracle_row(const fmt *f, const uint8_t *bytes, size_t n, const float *want,
                            tally *t)
{
    dn_coded_row r;
    row_alloc(&r, n, f->elements);
    size_t bad = 0;
    dn_status st = dn_read_row(f->type, bytes, n, &r, &bad);
    if (st != DN_OK) {
        printf("  %s: dn_read_row says %s (block %zu)\n", f->name, dn_status_str(st), bad);
        row_free(&r);
        return 0;
    }
    check_row_shape(f, &r, n / f->elements);
    /* dn_row_to_f32 is the exact value rounded once: ggml's f32 wherever
       ggml's own expression gives its sign to zero as the coded row does. */
    float *mine = malloc(n * sizeof *mine);
    assert_non_null(mine);
    assert_int_equal(dn_row_to_f32(f->type, bytes, n, mine, NULL), DN_OK);
    int good = 1;
    int rounds = f->eval == G_ADD_MIN || f->eval == G_SUB_MIN;
    for (size_t e = 0; e < n && good; e++) {
        const dn_segment *s = &r.segments[e / f->elements];
        float g = want[e];
        int64_t x = exact_units(s, r.coef[e], r.offs[e]);
        /* ggml's value in units of 2^-24: an integer below 2^53, because it
           rounds a multiple of 2^-24 to binary32 (where the ulp is below
           2^-24 the multiple is representable and kept). */
        double gu = (double)g * 0x1p24;
        assert_true(isfinite(g) && gu == nearbyint(gu) && fabs(gu) < 0x1p53);
        int64_t gi = (int64_t)gu;
        /* 1. ggml's own f32 expression, from the coded values: bit equal.
              A zero ggml computes as (d * sc) * 0 carries the sign of a
              signed sub-block scale, which coef = sc * q = 0 no longer
              holds; and a zero scale is canonical (+0). Those zeros are
              compared as numbers. */
        if (tbits(mine[e]) != tbits(g) && !(mine[e] == 0 && g == 0)) {
            printf("  %s element %zu: ggml %a, dn_row_to_f32 %a\n", f->name, e, (double)g,
                   (double)mine[e]);
            good = 0;
        }
        float expr = ggml_value(f->eval, s, r.coef[e], r.offs[e]);
        if (tbits(expr) == tbits(g)) {
            t->bit_equal++;
        } else {
            int zero_sign =
                expr == 0 && g == 0 && (f->eval == G_SUBSCALE || s->a.sig == 0 || s->b.sig == 0);
            if (!zero_sign) {
                printf("  %s element %zu: ggml %a (0x%08x), its expression from the coded row %a "
                       "(0x%08x)\n",
                       f->name, e, (double)g, tbits(g), (double)expr, tbits(expr));
                good = 0;
            }
            t->signed_zeros++;
        }
        /* 2. The exact value: equal to ggml's f32 where ggml's arithmetic
              is exact; elsewhere ggml's value is the exact value rounded
              once to nearest even: |exact - ggml| <= ulp(ggml) / 2. */
        t->values++;
        if (x == gi) {
            t->exact++;
            continue;
        }
        int ex;
        frexpf(g, &ex);
        double ulp_units = ldexp(1.0, ex); /* ulp(g) = 2^(ex - 24), in units of 2^-24 */
        double diff = fabs((double)(x - gi));
        float nearest = (float)((double)x * 0x1p-24); /* exact double, one rounding */
        if (!rounds || tbits(nearest) != tbits(g) || 2 * diff > ulp_units) {
            printf("  %s element %zu: exact %.17g, ggml %a, nearest %a\n", f->name, e,
                   (double)x * 0x1p-24, (double)g, (double)nearest);
            good = 0;
        }
        t->rounded++;
        if (diff / ulp_units > t->worst_ulps) t->worst_ulps = diff / ulp_units;
    }
    row_free(&r);
    free(mine);
    return good;
}

static void print_tally(const char *name, const tally *t)
{
    printf("  %-6s %zu values: exact value = ggml's f32 for %zu, ggml's f32 = the exact value "
           "rounded once "
           "(<= 1/2 ulp, largest %.3g ulp) for %zu; ggml's expression from the coded row: %zu bit "
           "equal, "
           "%zu zeros equal as numbers\n",
           name, t->values, t->exact, t->worst_ulps, t->rounded, t->bit_equal, t->signed_zeros);
}

/* The oracle's Gaussian rows never make ggml round (d and dmin, d and m
   are close, so d*sc*q and dmin*m fit 24 bits together). Here they do: a
   large d and a tiny m or dmin. The coded row keeps the exact value; the
   checker above accepts ggml's one rounding of it, ties to even included,
   and rejects a value one ulp off. */
static void exact_where_ggml_rounds(void **state)
{
    (void)state;
    /* Q4_1, codes 15, d = 65504 = 2047 * 2^5, m = 2^-24: exactly
       982560 + 2^-24; ggml's 15 * 65504 + 2^-24 rounds to 982560. */
    uint8_t q41[2 * 20] = {0};
    put16(q41, 0x7BFF);
    put16(q41 + 2, 0x0001);
    memset(q41 + 4, 0xFF, 16);
    /* block 1: codes 2, d = 2^15 (0x7800): 65536 plus m = 3 * 2^-8 (0x2200),
       1.5 ulp of 65536: a tie, to the even 65536 + 2^-6. */
    put16(q41 + 20, 0x7800);
    put16(q41 + 22, 0x2200);
    memset(q41 + 24, 0x22, 16);
    float want[256];
    for (int e = 0; e < 32; e++) want[e] = 982560.0f;
    for (int e = 32; e < 64; e++) want[e] = 65536.0f + 0x1p-6f;
    dn_coded_row r;
    row_alloc(&r, 64, 32);
    read_one(DN_TYPE_Q4_1, q41, &r);
    assert_true(exact_units(&r.segments[0], r.coef[0], r.offs[0]) == ((int64_t)982560 << 24) + 1);
    assert_int_equal(dn_read_row(DN_TYPE_Q4_1, q41, 64,
                                 &(dn_coded_row){r.coef, r.offs, r.segments, 64, 0}, NULL),
                     DN_OK);
    assert_true(exact_units(&r.segments[1], r.coef[32], r.offs[32]) ==
                ((int64_t)65536 << 24) + (3 << 16));
    tally t = {0};
    assert_true(check_oracle_row(fmt_of(DN_TYPE_Q4_1), q41, 64, want, &t));
    assert_int_equal(t.rounded, 64);
    assert_int_equal(t.bit_equal, 64);
    assert_true(t.worst_ulps == 0.5);
    print_tally("q4_1*", &t);
    want[40] = nextafterf(want[40], 0.0f);
    printf("  (a value one ulp off must be reported:)\n");
    assert_false(check_oracle_row(fmt_of(DN_TYPE_Q4_1), q41, 64, want, &t));
    row_free(&r);

    /* Q4_K, every scale and min 63, codes 15, d = 65504, dmin = 2^-24:
       exactly 65504 * 945 - 63 * 2^-24; ggml's d1 * q - m1 rounds to
       61901280 (ulp 4). */
    uint8_t q4k[144];
    memset(q4k, 0xFF, sizeof q4k);
    put16(q4k, 0x7BFF);
    put16(q4k + 2, 0x0001);
    for (int e = 0; e < 256; e++) want[e] = 61901280.0f;
    row_alloc(&r, 256, 256);
    read_one(DN_TYPE_Q4_K, q4k, &r);
    assert_true(exact_units(&r.segments[0], r.coef[0], r.offs[0]) ==
                ((int64_t)61901280 << 24) - 63);
    memset(&t, 0, sizeof t);
    assert_true(check_oracle_row(fmt_of(DN_TYPE_Q4_K), q4k, 256, want, &t));
    assert_int_equal(t.rounded, 256);
    print_tally("q4_K*", &t);
    row_free(&r);

    /* Q2_K, sc 15, m 15, codes 3, d = 2^-24, dmin = 65504: exactly
       45 * 2^-24 - 982560; ggml's f32 is -982560. */
    uint8_t q2k[84];
    memset(q2k, 0xFF, sizeof q2k);
    put16(q2k + 80, 0x0001);
    put16(q2k + 82, 0x7BFF);
    for (int e = 0; e < 256; e++) want[e] = -982560.0f;
    row_alloc(&r, 256, 256);
    read_one(DN_TYPE_Q2_K, q2k, &r);
    assert_true(exact_units(&r.segments[0], r.coef[0], r.offs[0]) == 45 - ((int64_t)982560 << 24));
    memset(&t, 0, sizeof t);
    assert_true(check_oracle_row(fmt_of(DN_TYPE_Q2_K), q2k, 256, want, &t));
    assert_int_equal(t.rounded, 256);
    print_tally("q2_K*", &t);
    row_free(&r);
}

static void oracle_ggml_blocks(void **state)
{
    (void)state;
    oracle_file f;
    if (!oracle_open(&f, "ggml-blocks.bin")) {
        printf("  oracle %s/ggml-blocks.bin is absent: skipped\n", DN_ORACLE_DIR);
        skip();
    }
    assert_true(oracle_has(&f, 12) && memcmp(f.data, "DNBLKDQ1", 8) == 0);
    f.pos = 8;
    uint32_t types = oracle_u32(&f);
    int all_good = 1;
    size_t types_read = 0;
    for (uint32_t ti = 0; ti < types; ti++) {
        assert_true(oracle_has(&f, 36));
        char name[17] = {0};
        memcpy(name, f.data + f.pos, 16);
        f.pos += 16;
        dn_type id = (dn_type)oracle_u32(&f);
        size_t be = oracle_u32(&f), bb = oracle_u32(&f), rows = oracle_u32(&f), n = oracle_u32(&f);
        size_t row_bytes = n / be * bb;
        assert_true(be > 0 && n % be == 0 && oracle_has(&f, rows * row_bytes + 4 * rows * n));
        const uint8_t *blocks = f.data + f.pos;
        f.pos += rows * row_bytes;
        float *values = malloc(rows * n * sizeof *values);
        assert_non_null(values);
        for (size_t k = 0; k < rows * n; k++) values[k] = oracle_f32(&f);
        /* The tables agree with ggml's for every type the file holds. */
        assert_int_equal(dn_type_block_elements(id), be);
        assert_int_equal(dn_type_block_bytes(id), bb);

        if (dn_reads(id)) {
            const fmt *fm = fmt_of(id);
            assert_non_null(fm);
            assert_string_equal(fm->name, name);
            tally t = {0};
            for (size_t row = 0; row < rows; row++)
                all_good &= check_oracle_row(fm, blocks + row * row_bytes, n, values + row * n, &t);
            print_tally(name, &t);
            /* Where ggml's arithmetic is exact, nothing may differ. */
            if (fm->eval == G_CODE_D || fm->eval == G_SUBSCALE) assert_int_equal(t.rounded, 0);
            if (fm->eval == G_CODE_D) assert_int_equal(t.signed_zeros, 0);
            types_read++;
        } else if (id == DN_TYPE_F16 || id == DN_TYPE_BF16) {
            /* Not read by the array; their values are the stored numbers. */
            float *mine = malloc(rows * n * sizeof *mine);
            assert_non_null(mine);
            if (id == DN_TYPE_F16) {
                assert_int_equal(dn_f16_dequantize_row(blocks, mine, rows * n), DN_OK);
                float *row = malloc(n * sizeof *row);
                assert_non_null(row);
                for (size_t k = 0; k < rows; k++) {
                    assert_int_equal(dn_row_to_f32(id, blocks + 2 * n * k, n, row, NULL), DN_OK);
                    assert_memory_equal(row, mine + n * k, n * sizeof *row);
                }
                free(row);
            } else {
                for (size_t k = 0; k < rows * n; k++)
                    mine[k] = tf((uint32_t)(blocks[2 * k] | blocks[2 * k + 1] << 8) << 16);
            }
            size_t same = 0;
            for (size_t k = 0; k < rows * n; k++) same += tbits(mine[k]) == tbits(values[k]);
            printf("  %-6s %zu values: %zu bit equal\n", name, rows * n, same);
            assert_int_equal(same, rows * n);
            free(mine);
        } else {
            printf("  %-6s (id %d) is not a type this library reads: passed over\n", name, (int)id);
        }
        free(values);
    }
    free(f.data);
    assert_true(all_good);
    assert_int_equal(types_read, NFMTS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(coefficient_bound),
        cmocka_unit_test(exact_where_ggml_rounds),
        cmocka_unit_test(oracle_ggml_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
