/* SPDX-License-Identifier: MIT */
/*
 * Pieces next to an f32 tie: groups whose exact piece lies a hair above or
 * below a point halfway between two floats, by a term far below the
 * larger one's last double place, so that any sum or product rounded to
 * double first would land on the tie and round it to even. The kernels
 * must give the exact piece rounded once (the reference's exact sum), on
 * the active ISA (the suite runs under each DECODENUM_ISA), through whole
 * row tiles of the prefill kernels, the matrix-vector kernels and the
 * repacked ones. Each case is built so its exact value follows from the
 * construction; each asserts that a double rounding would miss it.
 */
#include <math.h>
#include <stdlib.h>

#include "decodenum.h"
#include "testutil.h"

/* The columns x (cols of n) prepared under Sub32, one word, and the
   product of the rows x n matrix w of type t with them into out (cols x
   rows), in one range of rows (dn_act_mat_mul would split a few rows
   below a whole tile); the prepared columns for the caller to destroy. */
static dn_act *tie_product(dn_type t, const float *x, size_t n, size_t cols, const uint8_t *w,
                           size_t rows, float *out)
{
    dn_act *act = NULL;
    assert_int_equal(dn_act_create(x, n, cols, DN_ACT_SUB32, DN_WORDS_ONE, &act, NULL), DN_OK);
    memset(out, 0xFF, cols * rows * sizeof *out);
    assert_int_equal(dn_act_mat_mul_rows(act, 0, cols, t, w, rows, 0, rows, out, NULL), DN_OK);
    return act;
}

/* Q8_0 under Sub32 through whole row tiles (20 rows, three columns): a
   group whose exact piece is an f32 tie plus a term far below the tie's
   last double place. Column c: block 0 holds 1016, 1016, 8 (scale 8, codes
   127, 127, 1), block 1 holds sigma_c 2^-17 (sigma_c = -1 for column 1),
   the rest 0. Row r: block 0 d = 1346 / 1024 and digits 127, 69, 37 times
   s0, block 1 d = 2^-24 and digit s1, the others d = 1 and digits 0. Block
   0's term is s0 (1346 / 1024) 24929 * 8 = s0 (2^18 + 2^-6), halfway
   between two floats; block 1's is s1 sigma_c 2^-24 * code * scale, near
   2^-41, which no double sum beside 2^18 keeps (the exponents span 27: the
   exact sum is the reference's). The piece rounds away from the tie when
   the two terms agree in sign (s0 (2^18 + 2^-5)), else toward it (s0 2^18);
   the row's value is its one piece. */
static void q8_0_tie_in_tiles(void **state)
{
    (void)state;
    enum { n = 256, rows = 20, cols = 3, bb = 34 };
    float x[cols * n] = {0}, out[cols * rows];
    uint8_t w[rows * (n / 32) * bb] = {0};
    for (size_t c = 0; c < cols; c++) {
        x[c * n] = x[c * n + 1] = 1016.0f;
        x[c * n + 2] = 8.0f;
        x[c * n + 32] = c == 1 ? -0x1p-17f : 0x1p-17f;
    }
    for (size_t r = 0; r < rows; r++) {
        uint8_t *row = w + r * (n / 32) * bb;
        const int s0 = r & 2 ? -1 : 1, s1 = r & 1 ? -1 : 1;
        for (size_t k = 2; k < n / 32; k++) row[k * bb + 1] = 0x3C; /* d = 1 */
        row[0] = 0x42, row[1] = 0x3D;                               /* 0x3D42: 1346 / 1024 */
        row[2] = (uint8_t)(int8_t)(127 * s0), row[3] = (uint8_t)(int8_t)(69 * s0);
        row[4] = (uint8_t)(int8_t)(37 * s0);
        row[bb] = 0x01; /* 0x0001: 2^-24 */
        row[bb + 2] = (uint8_t)(int8_t)s1;
    }
    dn_act *act = tie_product(DN_TYPE_Q8_0, x, n, cols, w, rows, out);
    for (size_t c = 0; c < cols; c++)
        for (size_t r = 0; r < rows; r++) {
            const int s0 = r & 2 ? -1 : 1, s1 = (r & 1 ? -1 : 1) * (c == 1 ? -1 : 1);
            const float want = (float)s0 * (s1 == s0 ? 0x1p18f + 0x1p-5f : 0x1p18f);
            assert_true(out[c * rows + r] == want);
        }
    dn_act_destroy(act);
}

/* Q6_K digit q (0..63) of element e into its block (blocks.c's read_q6_k). */
static void put_q6_digit(uint8_t *blk, int e, int q)
{
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    uint8_t *lo = blk + 64 * h + 32 * (k & 1) + l, *hi = blk + 128 + 32 * h + l;
    *lo = (uint8_t)((*lo & ~(15 << 4 * (k >> 1))) | (q & 15) << 4 * (k >> 1));
    *hi = (uint8_t)((*hi & ~(3 << 2 * k)) | (q >> 4) << 2 * k);
}

/* Q6_K under Sub32 through a whole row tile (17 rows, two columns): a
   piece whose double product d·A rounds onto an f32 tie that the exact
   product lies just above, so it must come from the reference (|A| >=
   glim), not from d·A. Column c's blocks 0, 3 and 5 hold 32 times
   sigma_c 1016 2^e (codes sigma_c 127, S = 8 2^e) with e = -10, 2, 14,
   the rest 0; each row's block (d = 1025 / 1024) weights chunk k by
   sub-block sums W (sum of q - 32) with scales s_r 127 and s_r 1, so
   chunk k's C_k = 127 s_r sigma_c (127 W_2k + W_2k+1) = 127 s_r sigma_c D_k
   and d A = s_r sigma_c N 2^-17 with N = 127 1025 (D_0 + D_3 2^12 + D_5
   2^24) = (2T + 1) 2^31 + 1, T = 8612306 even: RN64 drops the 1 and the
   tie goes to even, the exact value rounds up. The group is gok (spread
   24, 32 4096 127 8 (2^24 + 2^12 + 1) < 2^52). */
static void q6_k_glim_in_tiles(void **state)
{
    (void)state;
    enum { n = 256, rows = 17, cols = 2, bb = 210 };
    static const int chunk[3] = {0, 3, 5}, e[3] = {-10, 2, 14};
    static const int W[3][2] = {{7, 6}, {-6, 22}, {133, 46}}; /* D = 895, -740, 16937 */
    float x[cols * n] = {0}, out[cols * rows];
    uint8_t w[rows * bb];
    for (size_t c = 0; c < cols; c++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 32; i++)
                x[c * n + 32 * (size_t)chunk[j] + (size_t)i] =
                    (c ? -1016.0f : 1016.0f) * ldexpf(1.0f, e[j]);
    for (size_t r = 0; r < rows; r++) {
        uint8_t *b = w + r * bb;
        memset(b, 0, bb);
        for (int i = 0; i < n; i++) put_q6_digit(b, i, 32);
        for (int j = 0; j < 3; j++)
            for (int s = 0; s < 2; s++) {
                const int sb = 2 * chunk[j] + s, v = W[j][s];
                b[192 + sb] = (uint8_t)(int8_t)((r & 1 ? -1 : 1) * (s ? 1 : 127));
                const int q0 = v >= 0 ? v / 16 : -((15 - v) / 16), rem = v - 16 * q0;
                for (int i = 0; i < 16; i++) /* v over the sub-block's 16 digits */
                    put_q6_digit(b, 16 * sb + i, 32 + q0 + (i < rem));
            }
        put16(b + 208, 0x3C01);
    }
    const int64_t N = 127 * 1025 * (int64_t)(895 - 740 * 4096 + 16937 * 16777216LL);
    assert_true(N == (2 * INT64_C(8612306) + 1) * (INT64_C(1) << 31) + 1);
    assert_true((float)N != (float)(double)N); /* the double rounding differs */
    dn_act *act = tie_product(DN_TYPE_Q6_K, x, n, cols, w, rows, out);
    for (size_t c = 0; c < cols; c++)
        for (size_t r = 0; r < rows; r++) {
            const float want = ldexpf((float)N, -17) * ((r & 1) != (c == 1) ? -1.0f : 1.0f);
            assert_true(out[c * rows + r] == want);
        }
    dn_act_destroy(act);
}

/* A Q4_K block's sub-block scales sc[8] and mins m[8] (6 bits each) into
   its 12 scale bytes (blocks.c's read_q4_k: for k < 4, sc = s[k] & 63 and
   m = s[k + 4] & 63; for k >= 4 the low four bits in s[k + 4], the high
   two in the top bits of s[k - 4] and s[k]). */
static void put_q4k_scales(uint8_t *blk, const int sc[8], const int m[8])
{
    uint8_t *s = blk + 4;
    for (int k = 0; k < 4; k++) {
        s[k] = (uint8_t)(sc[k] | (sc[k + 4] >> 4) << 6);
        s[k + 4] = (uint8_t)(m[k] | (m[k + 4] >> 4) << 6);
        s[k + 8] = (uint8_t)((sc[k + 4] & 15) | (m[k + 4] & 15) << 4);
    }
}

/* Q4_K digit q (0..15) of element e of its block: sub-blocks 2p and 2p + 1
   share 32 bytes, the low and the high nibbles. */
static void put_q4k_digit(uint8_t *blk, int e, int q)
{
    uint8_t *b = blk + 16 + 32 * (e / 64) + e % 32;
    const int sh = (e / 32) & 1 ? 4 : 0;
    *b = (uint8_t)((*b & ~(15 << sh)) | q << sh);
}

/* Q4_K under Sub32 (24 rows, three columns): every column quantizes with
   scale 2^-20 in sub-blocks 0-5 (codes 127 32 times in 0-3; 127 eleven
   times, 100, 10 in 4; 127, 2 in 5) and 2^-25 in sub-block 6 (one code
   -127 sigma_c, sigma_c = -1 for column 1), the rest 0. Every row: d =
   s_r 2^15, dm = 2^-24, scales 63 (sub-blocks 0-4) and 1 (5), min 1 (6),
   digits 15 under the 127s of 0-4 and under the 100; 1 under the 10 and
   the 2; 0 elsewhere. So d A = s_r 2^15 2^-20 (4 63 60960 + 63 22465 + 2)
   = s_r 2^-5 (2^24 + 1) = s_r (2^19 + 2^-5), halfway between two floats,
   and the min's term -dm bs S = sigma_c 127 2^-49: the exponents span 68,
   so no double keeps both. The piece rounds away from the tie when the
   two agree in sign (s_r (2^19 + 2^-4)), else toward it (s_r 2^19); the
   row's value is its one piece. The AVX-512 pieces take the sum rounded
   down and up and keep the odd one (round_madd8): this case tells them
   apart from a sum rounded to nearest. With sub-block 6's scale at 2^e6,
   e6 = -25 the group factors (scales within five binades: the prefill
   lanes and the repacked factored pieces), e6 = -27 it does not (the
   repacked unfactored pieces); the min's term is then sigma_c 127
   2^(e6 - 24). */
static void q4_k_tie(int e6)
{
    enum { n = 256, rows = 24, cols = 3, bb = 144 };
    static const int sc[8] = {63, 63, 63, 63, 63, 1, 0, 0}, m[8] = {0, 0, 0, 0, 0, 0, 1, 0};
    float x[cols * n] = {0}, out[cols * rows];
    uint8_t w[rows * bb] = {0};
    for (size_t c = 0; c < cols; c++) {
        float *xc = x + c * n;
        for (int i = 0; i < 128 + 11; i++) xc[i] = 127 * 0x1p-20f;
        xc[139] = 100 * 0x1p-20f, xc[140] = 10 * 0x1p-20f;
        xc[160] = 127 * 0x1p-20f, xc[161] = 2 * 0x1p-20f;
        xc[192] = ldexpf(c == 1 ? 127.0f : -127.0f, e6);
    }
    for (size_t r = 0; r < rows; r++) {
        uint8_t *b = w + r * bb;
        put16(b, r & 1 ? 0xF800 : 0x7800); /* d = -+2^15 */
        put16(b + 2, 0x0001);              /* dm = 2^-24 */
        put_q4k_scales(b, sc, m);
        for (int i = 0; i < 140; i++) put_q4k_digit(b, i, 15);
        put_q4k_digit(b, 140, 1);
        put_q4k_digit(b, 161, 1);
    }
    const double top = 0x1p19 + 0x1p-5, tiny = ldexp(127, e6 - 24);
    assert_true((float)(top + tiny) == 0x1p19f); /* a double sum lands on the tie */
    float want[cols * rows];
    for (size_t c = 0; c < cols; c++)
        for (size_t r = 0; r < rows; r++) {
            const float sr = r & 1 ? -1.0f : 1.0f, sigma = c == 1 ? -1.0f : 1.0f;
            want[c * rows + r] = sr * (sr == sigma ? 0x1p19f + 0x1p-4f : 0x1p19f);
        }
    dn_act *act = tie_product(DN_TYPE_Q4_K, x, n, cols, w, rows, out);
    for (size_t i = 0; i < cols * rows; i++) assert_same_float(out[i], want[i]);
    size_t bytes = 0;
    assert_int_equal(dn_repack_size(DN_TYPE_Q4_K, rows, n, &bytes), DN_OK);
    void *packed = malloc(bytes);
    assert_non_null(packed);
    assert_int_equal(dn_repack(DN_TYPE_Q4_K, w, rows, n, packed, bytes), DN_OK);
    for (size_t c = 0; c < cols; c++) {
        memset(out, 0xFF, sizeof out);
        assert_int_equal(dn_act_mat_vec(act, c, DN_TYPE_Q4_K, w, rows, out, NULL, NULL), DN_OK);
        for (size_t r = 0; r < rows; r++) assert_same_float(out[r], want[c * rows + r]);
        memset(out, 0xFF, sizeof out);
        assert_int_equal(dn_repacked_mat_vec(act, c, DN_TYPE_Q4_K, packed, rows, out, NULL, NULL),
                         DN_OK);
        for (size_t r = 0; r < rows; r++) assert_same_float(out[r], want[c * rows + r]);
    }
    free(packed);
    dn_act_destroy(act);
}

static void q4_k_tie_everywhere(void **state)
{
    (void)state;
    q4_k_tie(-25);
    q4_k_tie(-27);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(q8_0_tie_in_tiles),
        cmocka_unit_test(q6_k_glim_in_tiles),
        cmocka_unit_test(q4_k_tie_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
