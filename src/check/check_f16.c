/* SPDX-License-Identifier: MIT */
/* The F16 and BF16 products' kernels held to their references, every
   output's bits: each type's eight kernels, then mad and scale. */
#include "check.h"
#include "dispatch.h"
#include "isa.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Binary16 weights or activations: mostly Gaussian-like values of every
   magnitude, with zeros, subnormals and values near +-65504 sprinkled in. */
static void fill_f16(dn_rng *r, uint16_t *h, size_t n, int specials)
{
    static const uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x7BFF, 0xFBFF,
                                       0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE55};
    const size_t nspecial = specials == 2 ? 14 : 9; /* 2: infinities and NaNs too */
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        if (specials && (z & 15) == 0) {
            h[i] = special[(z >> 4) % nspecial];
            continue;
        }
        unsigned e = 9 + (unsigned)((z >> 8) % 13); /* 2^-6 .. 2^6 */
        h[i] = (uint16_t)(((z >> 63) << 15) | (e << 10) | ((z >> 20) & 0x3FF));
    }
}

/* Bfloat16 values of exponents 2^-27 .. 2^27, and with specials zeros,
   subnormals, the largest finite values and values whose products fall
   below 2^-126 (where a rounded product and a fused one differ); specials 2
   adds every exponent, infinities and NaNs; specials 3 is normal values of
   exponents 2^-72 .. 2^-57 alone, whose products and sums straddle 2^-126
   (vdpbf16ps flushes them, so its kernel must fall back to FMA there). */
static void fill_bf16(dn_rng *r, uint16_t *h, size_t n, int specials)
{
    static const uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x7F7F, 0xFF7F,
                                       0x1A00, 0x9A40, 0x1A80, 0x3F80, 0x7F80, 0xFF80, 0x7FC1};
    const size_t nspecial = specials == 2 ? 14 : 11;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        if ((specials == 1 || specials == 2) && (z & 15) == 0) {
            h[i] = special[(z >> 4) % nspecial];
            continue;
        }
        unsigned e = specials == 2   ? 1 + (unsigned)((z >> 8) % 254)
                     : specials == 3 ? 55 + (unsigned)((z >> 8) % 16)
                                     : 100 + (unsigned)((z >> 8) % 55);
        h[i] = (uint16_t)(((z >> 63) << 15) | (e << 7) | ((z >> 20) & 0x7F));
    }
}

static void fill_w(dn_rng *r, uint16_t *h, size_t n, int specials, int bf)
{
    if (bf)
        fill_bf16(r, h, n, specials);
    else
        fill_f16(r, h, n, specials);
}

enum {
    FROM_F32,
    WIDEN,
    ROUND_F32,
    VEC_DOT,
    SGEMM_DOT,
    MAT_VEC_ROWS,
    SGEMM_ROWS,
    VEC_DOT_COLS,
    TYPED, /* the entries above exist per type */
    MAD = TYPED,
    SCALE,
    COUNT
};
static const char *const names[2][COUNT] = {
    {"from_f32", "widen", "round_f32", "vec_dot", "sgemm_dot", "mat_vec_rows", "sgemm_rows",
     "vec_dot_cols", "mad", "scale"},
    {"bf16_from_f32", "bf16_widen", "bf16_round_f32", "bf16_vec_dot", "bf16_sgemm_dot",
     "bf16_mat_vec_rows", "bf16_sgemm_rows", "bf16_vec_dot_cols"}};

/* kern's tinyBLAS rows as a product calls them: the columns packed first
   where the table has a packed form, a group of eight columns at a time,
   the last group first (as the pool's tasks may; without memory for it,
   unpacked: the same bits by the table's contract), then the rows. */
static void sgemm_rows_packed(const dn_w16_kernels *kern, const uint16_t *w, size_t rows, size_t k,
                              const float *act, size_t n, size_t r0, size_t r1, float *out)
{
    size_t bytes = kern->pack_bytes(k, n);
    void *packed = bytes ? malloc(bytes) : NULL;
    for (size_t g = (n + 7) / 8; packed && g-- > 0;)
        kern->pack(act, k, n, 8 * g, 8 * g + 8 < n ? 8 * g + 8 : n, packed);
    kern->sgemm_rows(w, rows, k, act, packed, n, r0, r1, out);
    free(packed);
}

typedef struct bufs {
    uint16_t *w, *h_ref, *h_k;
    float *x, *act, *y_ref, *y_k;
} bufs;

static void cmp_f32(dn_check_result *res, const float *a, const float *b, size_t n, size_t k)
{
    for (size_t i = 0; i < n; i++)
        if (dn_bits(a[i]) != dn_bits(b[i]))
            dn_check_mismatch(res, "%s k=%zu i=%zu: reference 0x%08" PRIx32 ", kernel 0x%08" PRIx32,
                              res->kernel, k, i, dn_bits(a[i]), dn_bits(b[i]));
    res->compared += n;
}

static void cmp_u16(dn_check_result *res, const uint16_t *a, const uint16_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            dn_check_mismatch(res, "%s n=%zu i=%zu: reference 0x%04x, kernel 0x%04x", res->kernel,
                              n, i, a[i], b[i]);
    res->compared += n;
}

/* mad or scale at length k. */
static void run_acc(const dn_f16_kernels *ref, const dn_f16_kernels *kern, int which, bufs *b,
                    size_t k, dn_rng *r, dn_check_result *res)
{
    (void)dn_rng_below(r, 13); /* the draws of run_one: the same cases as before */
    (void)dn_rng_below(r, 6);
    int specials = (int)dn_rng_below(r, 3);
    float s = 0;
    dn_fill_f32(r, DN_REGIME_NORMAL, &s, 1);
    fill_f16(r, b->h_ref, k, specials);
    fill_f16(r, b->w, k, specials);
    memcpy(b->h_k, b->h_ref, k * sizeof *b->h_k);
    if (which == MAD) {
        ref->mad(b->h_ref, b->w, s, k);
        kern->mad(b->h_k, b->w, s, k);
    } else {
        ref->scale(b->h_ref, s, k);
        kern->scale(b->h_k, s, k);
    }
    cmp_u16(res, b->h_ref, b->h_k, k);
}

/* One case of type bf's kernel `which` at length k (rows and columns where
   it has them). */
static void run_one(const dn_w16_kernels *ref, const dn_w16_kernels *kern, int bf, int which,
                    bufs *b, size_t k, dn_rng *r, dn_check_result *res)
{
    size_t rows = 1 + (size_t)dn_rng_below(r, 13), n = 1 + (size_t)dn_rng_below(r, 6);
    int specials = (int)dn_rng_below(r, 3);
    switch (which) {
    case FROM_F32:
    case ROUND_F32:
        dn_fill_f32(r, (dn_regime)dn_rng_below(r, DN_REGIME_COUNT), b->x, k);
        if (which == FROM_F32) {
            ref->from_f32(b->x, b->h_ref, k);
            kern->from_f32(b->x, b->h_k, k);
            cmp_u16(res, b->h_ref, b->h_k, k);
        } else {
            ref->round_f32(b->x, b->y_ref, k);
            kern->round_f32(b->x, b->y_k, k);
            cmp_f32(res, b->y_ref, b->y_k, k, k);
        }
        return;
    case WIDEN:
        dn_fill_u16(r, b->w, k);
        ref->widen(b->w, b->y_ref, k);
        kern->widen(b->w, b->y_k, k);
        cmp_f32(res, b->y_ref, b->y_k, k, k);
        return;
    default: break;
    }
    /* the dots: weights rows x k, activation columns n x k (widened f16) */
    if (which == SGEMM_DOT || which == SGEMM_ROWS) k &= ~(size_t)7;
    fill_w(r, b->w, rows * k, specials, bf);
    fill_w(r, b->h_ref, n * k, specials, bf);
    ref->widen(b->h_ref, b->act, n * k);
    float want, got;
    switch (which) {
    case VEC_DOT:
        want = ref->vec_dot(b->w, b->act, k);
        got = kern->vec_dot(b->w, b->act, k);
        cmp_f32(res, &want, &got, 1, k);
        return;
    case SGEMM_DOT:
        want = ref->sgemm_dot(b->w, b->act, k);
        got = kern->sgemm_dot(b->w, b->act, k);
        cmp_f32(res, &want, &got, 1, k);
        return;
    case MAT_VEC_ROWS: {
        size_t r0 = (size_t)dn_rng_below(r, rows);
        ref->mat_vec_rows(b->w, k, b->act, b->h_ref, r0, rows, b->y_ref);
        kern->mat_vec_rows(b->w, k, b->act, b->h_ref, r0, rows, b->y_k);
        cmp_f32(res, b->y_ref + r0, b->y_k + r0, rows - r0, k);
        return;
    }
    case VEC_DOT_COLS: {
        size_t r0 = (size_t)dn_rng_below(r, rows);
        for (size_t i = 0; i < n * rows; i++) b->y_ref[i] = b->y_k[i] = 0.0f;
        ref->vec_dot_cols(b->w, rows, k, b->act, n, r0, rows, b->y_ref);
        kern->vec_dot_cols(b->w, rows, k, b->act, n, r0, rows, b->y_k);
        cmp_f32(res, b->y_ref, b->y_k, n * rows, k);
        return;
    }
    case SGEMM_ROWS: {
        size_t r0 = (size_t)dn_rng_below(r, rows);
        for (size_t i = 0; i < n * rows; i++) b->y_ref[i] = b->y_k[i] = 0.0f;
        ref->sgemm_rows(b->w, rows, k, b->act, NULL, n, r0, rows, b->y_ref);
        sgemm_rows_packed(kern, b->w, rows, k, b->act, n, r0, rows, b->y_k);
        cmp_f32(res, b->y_ref, b->y_k, n * rows, k);
        return;
    }
    }
}

/* The tinyBLAS rows (which == SGEMM_ROWS) or vec_dot's columns
   (VEC_DOT_COLS) on blocks larger than run_one's: 8-72 rows (kernels that
   take rows in blocks of four, six, eight or 48), 1-13 columns (several
   column groups), k up to 2000 (a multiple of 8 for tinyBLAS; for the
   columns every k, a quarter of the cases up to 8600, where a pass holds
   fewer columns than 13), ranges [r0, r1) that start and end inside the
   matrix, tinyBLAS with and without the table's packed columns; the
   outputs outside the range must stay as they were. Its own buffers and
   random stream: run_one's cases do not move. */
static void run_blocks(const dn_w16_kernels *ref, const dn_w16_kernels *kern, int bf, int which,
                       uint64_t seed, dn_check_result *res)
{
    enum { MAXR = 72, MAXN = 13, MAXK = 8600, CASES = 48 };
    dn_rng r = {seed};
    uint16_t *w = malloc(MAXR * MAXK * sizeof *w), *h = malloc(MAXN * MAXK * sizeof *h);
    float *act = malloc(MAXN * MAXK * sizeof *act);
    float *y_ref = malloc(MAXR * MAXN * sizeof *y_ref), *y_k = malloc(MAXR * MAXN * sizeof *y_k);
    if (!w || !h || !act || !y_ref || !y_k) {
        dn_check_mismatch(res, "%s: out of memory", res->kernel);
        goto out;
    }
    /* CASES cases, then for BF16 half as many whose products straddle 2^-126 */
    for (int i = 0; i < CASES + (bf ? CASES / 2 : 0); i++) {
        int small = i >= CASES;
        size_t rows = 8 + (size_t)dn_rng_below(&r, MAXR - 7),
               n = 1 + (size_t)dn_rng_below(&r, MAXN);
        size_t k = 8 * (1 + (size_t)dn_rng_below(&r, 2000 / 8));
        if (which == VEC_DOT_COLS) k = 1 + (size_t)dn_rng_below(&r, i % 4 == 3 ? MAXK : 2000);
        size_t r0 = small ? 0 : (size_t)dn_rng_below(&r, rows / 2),
               r1 = small ? rows : rows - (size_t)dn_rng_below(&r, 5);
        fill_w(&r, w, rows * k, small ? 3 : (int)dn_rng_below(&r, 3), bf);
        fill_w(&r, h, n * k, small ? 3 * (int)dn_rng_below(&r, 2) : (int)dn_rng_below(&r, 3), bf);
        ref->widen(h, act, n * k);
        for (size_t j = 0; j < n * rows; j++) y_ref[j] = y_k[j] = (float)j;
        if (which == VEC_DOT_COLS) {
            ref->vec_dot_cols(w, rows, k, act, n, r0, r1, y_ref);
            kern->vec_dot_cols(w, rows, k, act, n, r0, r1, y_k);
            cmp_f32(res, y_ref, y_k, n * rows, k);
            continue;
        }
        ref->sgemm_rows(w, rows, k, act, NULL, n, r0, r1, y_ref);
        sgemm_rows_packed(kern, w, rows, k, act, n, r0, r1, y_k);
        cmp_f32(res, y_ref, y_k, n * rows, k);
        /* and as a product runs them without memory for the packed form */
        for (size_t j = 0; j < n * rows; j++) y_k[j] = (float)j;
        kern->sgemm_rows(w, rows, k, act, NULL, n, r0, r1, y_k);
        cmp_f32(res, y_ref, y_k, n * rows, k);
    }
out:
    free(w);
    free(h);
    free(act);
    free(y_ref);
    free(y_k);
}

/* mat_vec_rows on rows longer than run_one's (which stop at 1600): k near
   the kernels' one-row limits (4096 on AVX2, 8192 on AVX-512: both sides
   of each, every tail of 32), 1-19 rows (the blocks of eight, four, three
   and the last ones), ranges that start in its first third; outputs
   outside the range must stay as they were. Its own buffers and random
   stream. */
static void run_long_rows(const dn_w16_kernels *ref, const dn_w16_kernels *kern, int bf,
                          uint64_t seed, dn_check_result *res)
{
    enum { MAXR = 19, MAXK = 8600, CASES = 48 };
    dn_rng r = {seed};
    uint16_t *w = malloc(MAXR * MAXK * sizeof *w), *h = malloc(MAXK * sizeof *h);
    float *x = malloc(MAXK * sizeof *x);
    float *y_ref = malloc(MAXR * sizeof *y_ref), *y_k = malloc(MAXR * sizeof *y_k);
    if (!w || !h || !x || !y_ref || !y_k) {
        dn_check_mismatch(res, "%s: out of memory", res->kernel);
        goto out;
    }
    for (int i = 0; i < CASES; i++) {
        size_t rows = 1 + (size_t)dn_rng_below(&r, MAXR);
        size_t limit = i % 2 ? 8192 : 4096, k = limit - 6 + (size_t)dn_rng_below(&r, 400);
        if (i < 8) k = limit - 1 + (size_t)(i / 2); /* the limit's neighbours */
        size_t r0 = (size_t)dn_rng_below(&r, rows / 3 + 1);
        fill_w(&r, w, rows * k, (int)dn_rng_below(&r, 3), bf);
        fill_w(&r, h, k, (int)dn_rng_below(&r, 3), bf);
        ref->widen(h, x, k);
        for (size_t j = 0; j < rows; j++) y_ref[j] = y_k[j] = (float)j;
        ref->mat_vec_rows(w, k, x, h, r0, rows, y_ref);
        kern->mat_vec_rows(w, k, x, h, r0, rows, y_k);
        cmp_f32(res, y_ref, y_k, rows, k);
    }
out:
    free(w);
    free(h);
    free(x);
    free(y_ref);
    free(y_k);
}

int dn_check_f16(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    const dn_f16_kernels *kern = ks->f16;
    /* Dot lengths go to 1600 (every tail of 32 and of 8); arrays follow the plan. */
    size_t *lengths;
    size_t count = dn_plan_lengths(plan, &lengths);
    size_t max = 1600;
    for (size_t i = 0; i < count; i++) max = lengths[i] > max ? lengths[i] : max;
    bufs b;
    b.w = malloc(13 * max * sizeof *b.w + 2);
    b.h_ref = malloc(13 * max * sizeof *b.h_ref + 2);
    b.h_k = malloc(max * sizeof *b.h_k + 2);
    b.x = malloc(max * sizeof *b.x + 4);
    b.act = malloc(6 * max * sizeof *b.act + 4);
    b.y_ref = malloc((13 * 6 + max) * sizeof *b.y_ref);
    b.y_k = malloc((13 * 6 + max) * sizeof *b.y_k);
    int failed = 0;
    if (!lengths || !b.w || !b.h_ref || !b.h_k || !b.x || !b.act || !b.y_ref || !b.y_k) {
        failed = 1;
        goto out;
    }
    size_t dot_max = plan->every_length_to >= 300 ? 1600 : plan->every_length_to;
    for (int bf = 0; bf < 2; bf++)
        for (int which = 0; which < (bf ? TYPED : COUNT); which++) {
            dn_check_result res = {"f16", names[bf][which], isa, 0, 0, ""};
            /* F16's seeds as before the BF16 entries came */
            static const int f16_seed[COUNT] = {0, 1, 2, 3, 4, 7, 8, 9, 5, 6};
            dn_rng r = {plan->seed * 31 + (uint64_t)(bf ? 100 + which : f16_seed[which])};
            const dn_w16_kernels *rt = bf ? &dn_f16_scalar.bf16 : &dn_f16_scalar.fp16;
            const dn_w16_kernels *kt = bf ? &kern->bf16 : &kern->fp16;
            if (which >= TYPED) {
                for (size_t i = 0; i < count; i++)
                    run_acc(&dn_f16_scalar, kern, which, &b, lengths[i], &r, &res);
            } else if (which >= VEC_DOT) {
                for (size_t k = 0; k <= dot_max; k++) run_one(rt, kt, bf, which, &b, k, &r, &res);
                if (which == SGEMM_ROWS || which == VEC_DOT_COLS)
                    run_blocks(rt, kt, bf, which,
                               plan->seed * 37 + (which == SGEMM_ROWS ? 200u : 220u) + bf, &res);
                if (which == MAT_VEC_ROWS)
                    run_long_rows(rt, kt, bf, plan->seed * 41 + 300u + bf, &res);
            } else {
                for (size_t i = 0; i < count; i++)
                    run_one(rt, kt, bf, which, &b, lengths[i], &r, &res);
            }
            if (res.mismatched) failed++;
            if (sink) sink(&res, ctx);
        }
#if defined(DN_HAVE_AVX512)
    /* Where the CPU has AVX512_BF16 both AVX-512 BF16 rows are held to the
       reference, whichever is registered: the FMA rows and the vdpbf16ps
       rows, whose probe failing on such a CPU is itself a failure. */
    if (isa == DN_ISA_AVX512 && dn_cpu()->avx512bf16) {
        static const char *const table_name[2] = {"bf16_sgemm_rows/fma", "bf16_sgemm_rows/dp"};
        const dn_f16_kernels *table[2] = {&dn_f16_avx512, &dn_f16_avx512bf16};
        for (int t = 0; t < 2; t++) {
            dn_check_result res = {"f16", table_name[t], isa, 0, 0, ""};
            dn_rng r = {plan->seed * 31 + 120u + (uint64_t)t};
            if (t == 1 && kern->bf16.sgemm_rows != table[1]->bf16.sgemm_rows)
                dn_check_mismatch(&res, "the vdpbf16ps probe failed on this CPU");
            for (size_t k = 0; k <= dot_max; k++)
                run_one(&dn_f16_scalar.bf16, &table[t]->bf16, 1, SGEMM_ROWS, &b, k, &r, &res);
            run_blocks(&dn_f16_scalar.bf16, &table[t]->bf16, 1, SGEMM_ROWS,
                       plan->seed * 37 + 210u + t, &res);
            if (res.mismatched) failed++;
            if (sink) sink(&res, ctx);
        }
    }
#endif
out:
    free(lengths);
    free(b.w);
    free(b.h_ref);
    free(b.h_k);
    free(b.x);
    free(b.act);
    free(b.y_ref);
    free(b.y_k);
    return failed;
}
