/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the FP8 E4M3 module: arbitrary bytes read as a
 * matrix's shape, codes (NaN codes included), block scales and tensor scale
 * (raw f32 bits: inf, NaN, denormals), activations (raw bits) and a row
 * range, through dn_fp8_mat_vec, dn_fp8_mat_mul, their row forms, and every
 * ISA's kernel table against the scalar reference.
 *
 * Input layout (missing bytes read as zero):
 *
 *   byte 0   rows 0..15 (bits 0-3), columns n 1..4 (bits 4-5), bit 6: no
 *            block scales, bit 7: tensor scale from the input (else 1)
 *   byte 1-2 k 0..511 (little-endian, 9 bits)
 *   byte 3-4 row range: begin, end (mod rows + 1, swapped when reversed)
 *   then     the codes (rows * k bytes, cycled from the rest of the input
 *            when it runs short), the scales, the tensor scale and n * k
 *            activations, each 4 bytes of f32 bits.
 *
 * It aborts when: a status is not the contract's (DN_ERR_UNREADABLE_BLOCK
 * exactly when a used scale is not finite, and nothing written; else
 * DN_ERR_NON_FINITE exactly when a row in range holds a NaN code; else
 * DN_OK); an output differs by a bit between the public forms, from an ISA's
 * kernel, or from the reference; a row holding a NaN code is not NaN.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum/fp8.h"
#include "bits.h"
#include "dispatch.h"
#include "fuzz_input.h"

static void same(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dn_bits(a[i]) != dn_bits(b[i])) abort();
}

static int has_nan_code(const uint8_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((w[i] & 0x7F) == 0x7F) return 1;
    return 0;
}

/* The contract's status for rows [r0, r1). */
static dn_status expected(const dn_fp8_mat *m, size_t nscales, size_t r0, size_t r1)
{
    if (!isfinite(m->tensor_scale)) return DN_ERR_UNREADABLE_BLOCK;
    for (size_t i = 0; m->scales && i < nscales; i++)
        if (!isfinite(m->scales[i])) return DN_ERR_UNREADABLE_BLOCK;
    for (size_t r = r0; r < r1; r++)
        if (has_nan_code(m->w + r * m->k, m->k)) return DN_ERR_NON_FINITE;
    return DN_OK;
}

static void check_kernels(const dn_fp8_mat *m, const float *act, size_t n, size_t r0, size_t r1,
                          const float *want)
{
    static const dn_isa isas[2] = {DN_ISA_AVX2, DN_ISA_NEON};
    float *got = calloc(n * m->rows + 1, sizeof *got);
    for (int i = 0; i < 2; i++) {
        const dn_kernels *ks = dn_kernels_for(isas[i]);
        if (!ks) continue;
        memcpy(got, want, n * m->rows * sizeof *got);
        int nan = n == 1 ? ks->fp8->mat_vec_rows(m, act, r0, r1, got)
                         : ks->fp8->mat_mul_rows(m, act, n, r0, r1, got);
        same(got, want, n * m->rows);
        if (nan != (expected(m, 0, r0, r1) == DN_ERR_NON_FINITE)) abort();
    }
    free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input r = {data, size};
    uint8_t b0 = byte(&r);
    size_t rows = b0 & 15, n = 1 + ((b0 >> 4) & 3);
    size_t k = byte(&r);
    k |= (size_t)(byte(&r) & 1) << 8;
    size_t r0 = byte(&r) % (rows + 1), r1 = byte(&r) % (rows + 1);
    if (r0 > r1) {
        size_t t = r0;
        r0 = r1, r1 = t;
    }
    size_t nscales = 0;
    if (dn_fp8_scale_count(rows, k, &nscales) != DN_OK) abort();
    uint8_t *w = malloc(rows * k + 1);
    float *scales = malloc((nscales + 1) * sizeof *scales), *act = malloc((n * k + 1) * 4);
    float *ref = calloc(n * rows + 1, 4), *out = calloc(n * rows + 1, 4),
          *cols = calloc(rows + 1, 4);
    size_t start = size - r.left; /* the codes, read again from here once the input ends */
    for (size_t i = 0; i < rows * k; i++)
        w[i] = r.left ? byte(&r) : (size > start ? data[start + i % (size - start)] : 0);
    for (size_t i = 0; i < nscales; i++) scales[i] = f32(&r);
    float t = (b0 & 0x80) ? f32(&r) : 1.0f;
    for (size_t i = 0; i < n * k; i++) act[i] = f32(&r);
    dn_fp8_mat m = {w, rows, k, (b0 & 0x40) ? NULL : scales, t};

    dn_status want = expected(&m, nscales, 0, rows);
    dn_status st = dn_fp8_mat_mul(w, rows, k, m.scales, t, act, n, out, NULL);
    if (st != want) abort();
    if (want == DN_ERR_UNREADABLE_BLOCK) {
        for (size_t i = 0; i < n * rows; i++)
            if (dn_bits(out[i]) != 0) abort(); /* nothing written */
    } else {
        dn_ref_fp8_mat_mul_rows(&m, act, n, 0, rows, ref);
        same(out, ref, n * rows);
        for (size_t c = 0; c < n; c++) {
            if (dn_fp8_mat_vec(w, rows, k, m.scales, t, act + c * k, cols, NULL) != want) abort();
            same(cols, ref + c * rows, rows);
            for (size_t row = 0; row < rows; row++)
                if (has_nan_code(w + row * k, k) && dn_bits(cols[row]) != 0x7FC00000u) abort();
        }
        dn_status want_range = expected(&m, nscales, r0, r1);
        memset(out, 0, (n * rows + 1) * 4);
        if (dn_fp8_mat_mul_rows(w, rows, k, m.scales, t, act, n, r0, r1, out) != want_range)
            abort();
        for (size_t c = 0; c < n; c++)
            for (size_t row = 0; row < rows; row++)
                if (dn_bits(out[c * rows + row]) !=
                    (row >= r0 && row < r1 ? dn_bits(ref[c * rows + row]) : 0u))
                    abort();
        check_kernels(&m, act, n, r0, r1, ref);
    }
    free(w);
    free(scales);
    free(act);
    free(ref);
    free(out);
    free(cols);
    return 0;
}
