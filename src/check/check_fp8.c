/* SPDX-License-Identifier: MIT */
/* The FP8 E4M3 module's kernels held to their references, every output's bits. */
#include "check.h"
#include "dispatch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { DECODE, MAT_VEC_ROWS, MAT_MUL_ROWS, COUNT };
static const char *const names[COUNT] = {"decode", "mat_vec_rows", "mat_mul_rows"};
static const char *const names_no_vbmi[COUNT] = {"decode", "mat_vec_rows (no VBMI)",
                                                 "mat_mul_rows"};

#define MAX_ROWS 19
#define MAX_N 19

typedef struct bufs {
    uint8_t *w;
    float *scales, *act, *y_ref, *y_k;
} bufs;

/* Codes: every byte, or weights of every exponent without the NaN codes,
   or with one NaN code now and then, or (mode 3) without zero and
   subnormal codes but one in 512 (the kernels' runs of normal codes and
   the runs beside them). */
static void fill_codes(dn_rng *r, uint8_t *w, size_t n, int mode)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        uint8_t c = (uint8_t)z;
        if (mode != 0 && (c & 0x7F) == 0x7F) c ^= 1;
        if (mode == 3 && (c & 0x78) == 0 && (z >> 8) % 512 != 0) c |= 0x08;
        w[i] = c;
    }
    if (mode == 2 && n) w[dn_rng_below(r, n)] = (dn_rng_next(r) & 1) ? 0x7F : 0xFF;
}

/* Scales: normal values, with zeros, negatives and denormals among them. */
static void fill_scales(dn_rng *r, float *s, size_t n)
{
    dn_fill_f32(r, DN_REGIME_NORMAL, s, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t z = dn_rng_next(r);
        if ((z & 15) == 0) s[i] = 0.0f;
        if ((z & 15) == 1) s[i] = dn_from_bits(0x00012345u);
    }
}

static void cmp_f32(dn_check_result *res, const float *a, const float *b, size_t n, size_t k)
{
    for (size_t i = 0; i < n; i++)
        if (dn_bits(a[i]) != dn_bits(b[i]))
            dn_check_mismatch(res, "%s k=%zu i=%zu: reference 0x%08" PRIx32 ", kernel 0x%08" PRIx32,
                              res->kernel, k, i, dn_bits(a[i]), dn_bits(b[i]));
    res->compared += n;
}

static void cmp_flag(dn_check_result *res, int a, int b, size_t k)
{
    if (a != b)
        dn_check_mismatch(res, "%s k=%zu: NaN-code flag reference %d, kernel %d", res->kernel, k, a,
                          b);
}

/* One case of kernel `which` with k columns. */
static void run_one(const dn_fp8_kernels *kern, int which, bufs *b, size_t k, dn_rng *r,
                    dn_check_result *res)
{
    const dn_fp8_kernels *ref = &dn_fp8_scalar;
    int mode = (int)dn_rng_below(r, 4);
    if (which == DECODE) {
        fill_codes(r, b->w, k, mode);
        int fr = ref->decode(b->w, b->y_ref, k), fk = kern->decode(b->w, b->y_k, k);
        cmp_f32(res, b->y_ref, b->y_k, k, k);
        cmp_flag(res, fr, fk, k);
        return;
    }
    size_t rows = 1 + (size_t)dn_rng_below(r, MAX_ROWS);
    size_t n = which == MAT_VEC_ROWS ? 1 : 1 + (size_t)dn_rng_below(r, MAX_N);
    size_t kb = (k + DN_FP8_BLOCK - 1) / DN_FP8_BLOCK;
    fill_codes(r, b->w, rows * k, mode);
    fill_scales(r, b->scales, kb * ((rows + DN_FP8_BLOCK - 1) / DN_FP8_BLOCK));
    dn_regime regime = (dn_regime)dn_rng_below(r, DN_REGIME_COUNT);
    dn_fill_f32(r, regime, b->act, n * k);
    float t = 1.0f;
    if (dn_rng_next(r) & 1) dn_fill_f32(r, DN_REGIME_NORMAL, &t, 1);
    dn_fp8_mat m = {b->w, rows, k, (dn_rng_next(r) & 3) ? b->scales : NULL, t};
    size_t r0 = (size_t)dn_rng_below(r, rows);
    for (size_t i = 0; i < n * rows; i++) b->y_ref[i] = b->y_k[i] = 0.0f;
    int fr, fk;
    if (which == MAT_VEC_ROWS) {
        fr = ref->mat_vec_rows(&m, b->act, r0, rows, b->y_ref);
        fk = kern->mat_vec_rows(&m, b->act, r0, rows, b->y_k);
    } else {
        fr = ref->mat_mul_rows(&m, b->act, n, r0, rows, b->y_ref);
        fk = kern->mat_mul_rows(&m, b->act, n, r0, rows, b->y_k);
    }
    cmp_f32(res, b->y_ref, b->y_k, n * rows, k);
    cmp_flag(res, fr, fk, k);
}

int dn_check_fp8(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    /* Products: every k 0..700 (each lane tail, partial blocks, 1-5
       blocks) under the full plan, then the plan's random lengths up to
       2048 per row; the decoder takes the plan's lengths. */
    size_t *lengths;
    size_t count = dn_plan_lengths(plan, &lengths);
    size_t max = 2048;
    for (size_t i = 0; i < count; i++) max = lengths[i] > max ? lengths[i] : max;
    bufs b;
    b.w = malloc(MAX_ROWS * max + 1);
    b.scales = malloc((max / DN_FP8_BLOCK + 1) * sizeof(float));
    b.act = malloc(MAX_N * 2048 * sizeof(float) + max * sizeof(float));
    b.y_ref = malloc((MAX_ROWS * MAX_N + max) * sizeof(float));
    b.y_k = malloc((MAX_ROWS * MAX_N + max) * sizeof(float));
    int failed = 0;
    if (!lengths || !b.w || !b.scales || !b.act || !b.y_ref || !b.y_k) {
        failed = 1;
        goto out;
    }
    /* On a CPU with AVX512_VBMI the AVX-512 slot holds the VBMI table; the
       plain AVX-512 mat_vec is held to the reference too. */
    const dn_fp8_kernels *tables[2] = {ks->fp8, NULL};
#if defined(DN_HAVE_AVX512)
    if (isa == DN_ISA_AVX512 && ks->fp8 != &dn_fp8_avx512) tables[1] = &dn_fp8_avx512;
#endif
    for (int t = 0; t < 2 && tables[t]; t++)
        for (int which = t ? MAT_VEC_ROWS : 0; which < (t ? MAT_VEC_ROWS + 1 : COUNT); which++) {
            dn_check_result res = {"fp8", (t ? names_no_vbmi : names)[which], isa, 0, 0, ""};
            dn_rng r = {plan->seed * 37 + (uint64_t)which};
            if (which == DECODE) {
                for (size_t i = 0; i < count; i++)
                    run_one(tables[t], which, &b, lengths[i], &r, &res);
            } else {
                size_t top = plan->every_length_to >= 300 ? 700 : plan->every_length_to;
                for (size_t k = 0; k <= top; k++) run_one(tables[t], which, &b, k, &r, &res);
                for (size_t i = 0; i < count; i++)
                    if (lengths[i] > top)
                        run_one(tables[t], which, &b, lengths[i] % 2048, &r, &res);
            }
            if (res.mismatched) failed++;
            if (sink) sink(&res, ctx);
        }
out:
    free(lengths);
    free(b.w);
    free(b.scales);
    free(b.act);
    free(b.y_ref);
    free(b.y_k);
    return failed;
}
