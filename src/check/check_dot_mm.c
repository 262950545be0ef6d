/* SPDX-License-Identifier: MIT */
/*
 * The quantized matrix product over prepared columns (mat_mul_rows, the
 * prefill kernels: register-blocked, rows in the lanes) held to its
 * reference, every output's bits, status and reported index; part of
 * dn_check_dot (src/check/check_dot.c), whose random blocks it uses.
 */
#include "check.h"
#include "bits.h"
#include "dispatch.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The product over prepared columns (mat_mul_rows): the kernel's table
   against the reference's on random matrices (now and then an unreadable
   block), each column of its own regime (spread exponents, zeros,
   outliers: columns of one block of the register-blocked kernels take
   different paths), 1 to 11 columns (whole blocks of four and the rest),
   up to 40 rows (several row tiles, batches of four and the rest), a random
   row and column range; now and then n = 16384 (groups of 256 whose
   columns come in blocks of eight: a block edge inside the range): the
   same status, *bad and bits. */
/* Indices in dn_check_dot_types[] of Q8_0, Q4_K, Q5_K, Q6_K. */
static const size_t blocked_types[4] = {4, 7, 8, 9};

typedef struct mm_bufs {
    uint8_t *w;
    float *x, *o_ref, *o_k;
    void *mem;
    size_t bytes;
} mm_bufs;

#define MM_MAXN ((size_t)64 * 256)
#define MM_MAXROWS ((size_t)40)
#define MM_MAXCOLS ((size_t)11)

/* The rows, columns and ranges of one case. A tile case takes 16 rows or
   more through whole columns, two or more of them: the row tiles of the
   AVX-512 Q4_K, Q6_K and Q8_0 kernels (16 rows in the lanes), which a
   random range rarely reaches. */
typedef struct mm_shape {
    size_t n, rows, cols, r0, r1, c0, c1;
} mm_shape;

static mm_shape mm_pick(dn_rng *r, size_t be, int tile)
{
    mm_shape sh;
    const int long_row = dn_rng_below(r, 16) == 0; /* n = 16384, few rows */
    sh.n = (long_row ? MM_MAXN / be : 1 + (size_t)dn_rng_below(r, 1024 / be)) * be;
    if (tile) {
        sh.rows = 16 + (size_t)dn_rng_below(r, MM_MAXROWS - 15);
        sh.cols = 2 + (size_t)dn_rng_below(r, MM_MAXCOLS - 1);
        sh.r0 = (size_t)dn_rng_below(r, sh.rows - 15), sh.r1 = sh.rows;
        sh.c0 = 0, sh.c1 = sh.cols;
        return sh;
    }
    sh.rows = 1 + (size_t)dn_rng_below(r, long_row ? 6 : MM_MAXROWS);
    sh.cols = long_row ? 9 + (size_t)dn_rng_below(r, 3) : 1 + (size_t)dn_rng_below(r, MM_MAXCOLS);
    sh.r0 = (size_t)dn_rng_below(r, sh.rows);
    sh.r1 = sh.r0 + 1 + (size_t)dn_rng_below(r, sh.rows - sh.r0);
    sh.c0 = (size_t)dn_rng_below(r, sh.cols);
    sh.c1 = sh.c0 + 1 + (size_t)dn_rng_below(r, sh.cols - sh.c0);
    return sh;
}

/* One case: the kernel's mat_mul_rows (and the repacked product) against
   the reference's: the same status, *bad and bits. */
static void mm_case(const dn_dot_kernels *kern, dn_rng *r, size_t ti, dn_act_scaling scaling,
                    dn_words words, int tile, int bad_one_in, mm_bufs *b, dn_check_result *res)
{
    const dn_type type = dn_check_dot_types[ti];
    const size_t be = dn_type_block_elements(type), bb = dn_type_block_bytes(type);
    const mm_shape sh = mm_pick(r, be, tile);
    const size_t n = sh.n, blocks = n / be;
    uint16_t prev = 0x3C00;
    const int allow_bad = dn_rng_below(r, (uint64_t)bad_one_in) == 0;
    for (size_t k = 0; k < sh.rows * blocks; k++)
        dn_check_fill_block(r, type, b->w + k * bb, bb, 0, allow_bad, &prev);
    for (size_t c = 0; c < sh.cols; c++)
        dn_fill_f32(r, (dn_regime)dn_rng_below(r, DN_REGIME_COUNT), b->x + c * n, n);
    for (size_t k = 0; k < sh.cols * n; k++)
        if (!isfinite(b->x[k])) b->x[k] = 0.0f;
    dn_act *act = NULL;
    if (dn_act_prepare(b->x, n, sh.cols, scaling, words, b->mem, b->bytes, &act, NULL) != DN_OK) {
        dn_check_mismatch(res, "dn_act_prepare refused n=%zu cols=%zu", n, sh.cols);
        return;
    }
    const size_t rows = sh.rows, r0 = sh.r0, r1 = sh.r1, c0 = sh.c0, c1 = sh.c1;
    for (size_t k = 0; k < rows * sh.cols; k++) b->o_ref[k] = b->o_k[k] = dn_from_bits(0x7F812345u);
    size_t bad_ref = (size_t)-1, bad_k = (size_t)-1;
    dn_status st_ref =
        dn_dot_scalar.mat_mul_rows(act, c0, c1, type, b->w, rows, r0, r1, b->o_ref, rows, &bad_ref);
    dn_status st_k =
        kern->mat_mul_rows(act, c0, c1, type, b->w, rows, r0, r1, b->o_k, rows, &bad_k);
    dn_check_repacked_mm(kern, act, c0, c1, type, b->w, rows, r0, r1, b->o_ref, st_ref, bad_ref,
                         res);
    res->compared++;
    if (st_ref != st_k || bad_ref != bad_k) {
        dn_check_mismatch(res, "mat_mul %s n=%zu rows %zu..%zu cols %zu..%zu: status %d/%d",
                          dn_check_dot_names[ti], n, r0, r1, c0, c1, (int)st_ref, (int)st_k);
        return;
    }
    for (size_t k = 0; st_ref == DN_OK && k < rows * (c1 - c0); k++) {
        res->compared++;
        if (dn_bits(b->o_ref[k]) != dn_bits(b->o_k[k]))
            dn_check_mismatch(res,
                              "mat_mul %s n=%zu scaling=%d words=%d col %zu row %zu: "
                              "reference 0x%08" PRIx32 ", kernel 0x%08" PRIx32,
                              dn_check_dot_names[ti], n, (int)scaling, (int)words, c0 + k / rows,
                              k % rows, dn_bits(b->o_ref[k]), dn_bits(b->o_k[k]));
    }
}

/* The tie cases' product: b->x's cols columns of n prepared under Sub32,
   one word, against rows rows of type at b->w, all of them, the kernel's
   against the reference's. */
static void mm_tie_run(const dn_dot_kernels *kern, dn_type type, size_t n, size_t rows, size_t cols,
                       mm_bufs *b, dn_check_result *res)
{
    dn_act *act = NULL;
    if (dn_act_prepare(b->x, n, cols, DN_ACT_SUB32, DN_WORDS_ONE, b->mem, b->bytes, &act, NULL) !=
        DN_OK) {
        dn_check_mismatch(res, "dn_act_prepare refused a tie case n=%zu cols=%zu", n, cols);
        return;
    }
    size_t bad_ref = (size_t)-1, bad_k = (size_t)-1;
    dn_status st_ref = dn_dot_scalar.mat_mul_rows(act, 0, cols, type, b->w, rows, 0, rows, b->o_ref,
                                                  rows, &bad_ref);
    dn_status st_k =
        kern->mat_mul_rows(act, 0, cols, type, b->w, rows, 0, rows, b->o_k, rows, &bad_k);
    res->compared++;
    if (st_ref != DN_OK || st_k != DN_OK) {
        dn_check_mismatch(res, "mat_mul tie case type %d: status %d/%d", (int)type, (int)st_ref,
                          (int)st_k);
        return;
    }
    for (size_t k = 0; k < rows * cols; k++) {
        res->compared++;
        if (dn_bits(b->o_ref[k]) != dn_bits(b->o_k[k]))
            dn_check_mismatch(
                res,
                "mat_mul tie case type %d n=%zu col %zu row %zu: reference 0x%08" PRIx32
                ", kernel 0x%08" PRIx32,
                (int)type, n, k / rows, k % rows, dn_bits(b->o_ref[k]), dn_bits(b->o_k[k]));
    }
}

/* Q8_0 row tiles whose exact group sum is an f32 tie plus a term far below
   the tie's last double place, so a kernel that sums a row's terms in
   double without proving the sum exact (the lanes kernels' tile-wide and
   per-row tests) rounds to the tie's even neighbour where the reference
   does not. Each column: a random block t holds 127 s, 127 s, s (Sub32
   scale s, codes 127, 127, 1; s a random power of two), block u != t one
   element e 2^-17 s (e = +-1); every row: block t d = 1346 / 1024 with
   digits 127, 69, 37 times a sign (its term (2^15 + 2^-9) s, halfway
   between two floats), block u d = 2^-24 with digits +-1, the other blocks
   zero; 16-40 rows (row tiles of 8 and 16), 5-11 columns (more than one
   pass of the AVX2 Q8_0 tile's four). With `factored` the far term comes
   from the weights alone, so the group's activation scales are all s (they
   factor: dn_dot_act.fok): block t's d is 1346 * 2^5 (the tie (2^30 + 2^6)
   s), block u holds 127 s where its digit is 0 and e s where its digit is
   1 (the term e 2^-24 s), so only the rows' spread of d keeps a kernel
   from summing in double. */
static void mm_tie_case(const dn_dot_kernels *kern, dn_rng *r, mm_bufs *b, int factored,
                        dn_check_result *res)
{
    enum { BB = 34 };
    const size_t groups = 1 + (size_t)dn_rng_below(r, 2), n = 256 * groups, blocks = n / 32;
    const size_t rows = 16 + (size_t)dn_rng_below(r, MM_MAXROWS - 15);
    const size_t cols = 5 + (size_t)dn_rng_below(r, MM_MAXCOLS - 4);
    const size_t t = (size_t)dn_rng_below(r, blocks), u = (t + 1 + dn_rng_below(r, 7)) % blocks;
    const size_t p1 = (size_t)dn_rng_below(r, 32), p2 = (p1 + 1 + dn_rng_below(r, 31)) % 32;
    const float s = ldexpf(1.0f, (int)dn_rng_below(r, 9) - 4);
    memset(b->x, 0, cols * n * sizeof *b->x);
    for (size_t c = 0; c < cols; c++) {
        float *x = b->x + c * n;
        const float e = dn_rng_below(r, 2) ? -1.0f : 1.0f;
        x[32 * t] = x[32 * t + 1] = 127.0f * s, x[32 * t + 2] = s;
        if (factored)
            x[32 * u + p1] = 127.0f * s, x[32 * u + p2] = e * s;
        else
            x[32 * u + (size_t)dn_rng_below(r, 32)] = e * 0x1p-17f * s;
    }
    memset(b->w, 0, rows * blocks * BB);
    for (size_t row = 0; row < rows; row++) {
        uint8_t *w = b->w + row * blocks * BB;
        const int s0 = dn_rng_below(r, 2) ? -1 : 1;
        w[t * BB] = 0x42, w[t * BB + 1] = factored ? 0x79 : 0x3D; /* 1346 * 2^5, 1346 / 1024 */
        w[t * BB + 2] = (uint8_t)(int8_t)(127 * s0), w[t * BB + 3] = (uint8_t)(int8_t)(69 * s0);
        w[t * BB + 4] = (uint8_t)(int8_t)(37 * s0);
        w[u * BB] = 0x01; /* 0x0001: 2^-24 */
        for (size_t k = 0; k < 32; k++)
            w[u * BB + 2 + k] = factored ? (uint8_t)(k == p2) : dn_rng_below(r, 2) ? 0xFF : 0x01;
    }
    mm_tie_run(kern, DN_TYPE_Q8_0, n, rows, cols, b, res);
}

/* Q6_K digit q (0..63) of element e into its block (blocks.c's read_q6_k). */
static void q6_put_digit(uint8_t *blk, int e, int q)
{
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    uint8_t *lo = blk + 64 * h + 32 * (k & 1) + l, *hi = blk + 128 + 32 * h + l;
    *lo = (uint8_t)((*lo & ~(15 << 4 * (k >> 1))) | (q & 15) << 4 * (k >> 1));
    *hi = (uint8_t)((*hi & ~(3 << 2 * k)) | (q >> 4) << 2 * k);
}

/* Q6_K row tiles whose piece d A, rounded to double, lands on an f32 tie
   the exact product lies just above (test_dot_act's q6_k_glim_in_tiles,
   which derives it, with random placements and signs): so a kernel that
   rounds d A without the limit test |A| < glim differs from the
   reference. Column c: three random chunks t0, t1, t2 hold 32 times
   sigma_c 1016 2^(e_j + f) (e = -10, 2, 14; f a random shift of -3..3,
   sigma_c = +-1), the rest 0; every row: d = 1025 / 1024, digit 32 but in
   those chunks, whose sub-block sums W = (7, 6), (-6, 22), (133, 46) of
   q - 32 are weighted by scales s_r 127 and s_r 1 (s_r = +-1). 16-40 rows,
   2-11 columns. */
static void mm_q6_tie_case(const dn_dot_kernels *kern, dn_rng *r, mm_bufs *b, dn_check_result *res)
{
    enum { N = 256, BB = 210 };
    static const int W[3][2] = {{7, 6}, {-6, 22}, {133, 46}}, e[3] = {-10, 2, 14};
    const size_t rows = 16 + (size_t)dn_rng_below(r, MM_MAXROWS - 15);
    const size_t cols = 2 + (size_t)dn_rng_below(r, MM_MAXCOLS - 1);
    const int f = (int)dn_rng_below(r, 7) - 3;
    int t[3];
    t[0] = (int)dn_rng_below(r, 8);
    do t[1] = (int)dn_rng_below(r, 8);
    while (t[1] == t[0]);
    do t[2] = (int)dn_rng_below(r, 8);
    while (t[2] == t[0] || t[2] == t[1]);
    memset(b->x, 0, cols * N * sizeof *b->x);
    for (size_t c = 0; c < cols; c++) {
        const float sigma = dn_rng_below(r, 2) ? -1.0f : 1.0f;
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 32; i++)
                b->x[c * N + 32 * (size_t)t[j] + (size_t)i] = sigma * ldexpf(1016.0f, e[j] + f);
    }
    for (size_t row = 0; row < rows; row++) {
        uint8_t *blk = b->w + row * BB;
        const int sr = dn_rng_below(r, 2) ? -1 : 1;
        memset(blk, 0, BB);
        for (int i = 0; i < N; i++) q6_put_digit(blk, i, 32);
        for (int j = 0; j < 3; j++)
            for (int s = 0; s < 2; s++) {
                const int sb = 2 * t[j] + s, v = W[j][s];
                const int q0 = v >= 0 ? v / 16 : -((15 - v) / 16), rem = v - 16 * q0;
                blk[192 + sb] = (uint8_t)(int8_t)(sr * (s ? 1 : 127));
                for (int i = 0; i < 16; i++) q6_put_digit(blk, 16 * sb + i, 32 + q0 + (i < rem));
            }
        blk[208] = 0x01, blk[209] = 0x3C; /* 0x3C01: 1025 / 1024 */
    }
    mm_tie_run(kern, DN_TYPE_Q6_K, N, rows, cols, b, res);
}

void dn_check_dot_mat_mul(const dn_dot_kernels *kern, size_t cases, uint64_t seed,
                          dn_check_result *res)
{
    dn_rng r = {seed * 131 + 7};
    mm_bufs b;
    b.w = malloc(MM_MAXROWS * MM_MAXN / 256 * 210 + MM_MAXROWS * MM_MAXN / 32 * 34);
    b.x = malloc(MM_MAXCOLS * MM_MAXN * sizeof *b.x);
    b.o_ref = malloc(MM_MAXROWS * MM_MAXCOLS * sizeof *b.o_ref);
    b.o_k = malloc(MM_MAXROWS * MM_MAXCOLS * sizeof *b.o_k);
    size_t sub32 = 0;
    b.bytes = 0;
    (void)dn_act_size(MM_MAXN, MM_MAXCOLS, DN_ACT_PER_BLOCK, DN_WORDS_TWO, &b.bytes);
    (void)dn_act_size(MM_MAXN, MM_MAXCOLS, DN_ACT_SUB32, DN_WORDS_TWO, &sub32);
    b.bytes = sub32 > b.bytes ? sub32 : b.bytes;
    b.mem = malloc(b.bytes);
    if (!b.w || !b.x || !b.o_ref || !b.o_k || !b.mem) dn_check_mismatch(res, "out of memory");
    for (size_t i = 0; b.w && b.x && b.o_ref && b.o_k && b.mem && i < cases; i++) {
        /* every other case what the register-blocked kernels cover (Sub32,
           one word, Q4_K, Q5_K, Q6_K, Q8_0; unreadable blocks in one case in
           three, so each kernel's scale test bites on the plan's seeds),
           the others every format, both scalings and word counts in turn
           (one case in eight with an unreadable block) */
        const size_t ti = i % 2 ? (i / 2) % DN_CHECK_DOT_TYPES : blocked_types[(i / 2) % 4];
        const size_t v = i % 2 ? (i / 2) / DN_CHECK_DOT_TYPES : 0;
        mm_case(kern, &r, ti, v & 1 ? DN_ACT_PER_BLOCK : DN_ACT_SUB32,
                v & 2 ? DN_WORDS_TWO : DN_WORDS_ONE, 0, i % 2 ? 8 : 3, &b, res);
        /* and a row tile of the blocked formats through whole columns */
        if (i % 2 == 0)
            mm_case(kern, &r, blocked_types[(i / 2) % 4], DN_ACT_SUB32, DN_WORDS_ONE, 1, 4, &b,
                    res);
        /* and one in eight a Q8_0 tile whose exact sums are ties (one in
           eight again with the group's activation scales factored), one
           in eight a Q6_K tile whose double product rounds onto a tie */
        if (i % 8 == 0) mm_tie_case(kern, &r, &b, 0, res);
        if (i % 8 == 2) mm_tie_case(kern, &r, &b, 1, res);
        if (i % 8 == 4) mm_q6_tie_case(kern, &r, &b, res);
    }
    free(b.w);
    free(b.x);
    free(b.o_ref);
    free(b.o_k);
    free(b.mem);
}
