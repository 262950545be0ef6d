/* SPDX-License-Identifier: MIT */
/*
 * The products on repacked matrices (decodenum/repack.h) held to the plain
 * reference, on the matrices and activations of check_dot.c's generator
 * (every format, both scalings and word counts, random and extreme blocks,
 * unreadable blocks, ties, huge and tiny scales, 1..17 rows, so row counts
 * and ranges not a multiple of the interleave): for each case the matrix is
 * repacked, unpacked back (compared byte for byte), and the layout's
 * reference and the ISA's repacked kernel must give the plain reference's
 * status, *bad and every value's bits.
 */
#include "check.h"
#include "decodenum/fp32.h"
#include "decodenum/repack.h"
#include "bits.h"
#include "dispatch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Repacks w (rows x n of type) into a new allocation; NULL on failure
   (reported). Checks the round trip. */
static uint8_t *repacked(dn_type type, const uint8_t *w, size_t rows, size_t n,
                         dn_check_result *res)
{
    size_t bytes = 0, row_bytes = n / dn_type_block_elements(type) * dn_type_block_bytes(type);
    if (dn_repack_size(type, rows, n, &bytes) != DN_OK) {
        dn_check_mismatch(res, "repack: size refused type %d rows %zu n %zu", (int)type, rows, n);
        return NULL;
    }
    uint8_t *p = malloc(bytes), *back = malloc(rows * row_bytes);
    if (!p || !back || dn_repack(type, w, rows, n, p, bytes) != DN_OK ||
        dn_repack_unpack(type, p, rows, n, back, rows * row_bytes) != DN_OK) {
        dn_check_mismatch(res, "repack: refused (or out of memory) type %d", (int)type);
        free(p);
        free(back);
        return NULL;
    }
    res->compared++;
    if (memcmp(back, w, rows * row_bytes) != 0)
        dn_check_mismatch(res, "repack: unpack(repack(w)) != w, type %d rows %zu n %zu", (int)type,
                          rows, n);
    free(back);
    return p;
}

/* The values [r0, r1) of count columns (column c at o + c * ldo) against the
   reference's, with the statuses; on an error the rows before the failing
   one. */
static void compare(const char *what, dn_type type, size_t n, size_t blocks, size_t r0, size_t r1,
                    size_t cols, size_t ldo, const float *o_ref, dn_status st_ref, size_t bad_ref,
                    const float *o, dn_status st, size_t bad, dn_check_result *res)
{
    res->compared++;
    if (st != st_ref || bad != bad_ref) {
        dn_check_mismatch(res, "%s type %d n=%zu rows %zu..%zu: status %d/%d, bad %zu/%zu", what,
                          (int)type, n, r0, r1, (int)st_ref, (int)st, bad_ref, bad);
        return;
    }
    const size_t upto = st_ref == DN_OK ? r1 : (bad_ref / blocks > r0 ? bad_ref / blocks : r0);
    for (size_t c = 0; c < cols && (st_ref == DN_OK || cols == 1); c++)
        for (size_t k = r0; k < upto; k++) {
            res->compared++;
            if (dn_bits(o_ref[c * ldo + k]) != dn_bits(o[c * ldo + k]))
                dn_check_mismatch(res,
                                  "%s type %d n=%zu col %zu row %zu: reference 0x%08" PRIx32
                                  ", repacked 0x%08" PRIx32,
                                  what, (int)type, n, c, k, dn_bits(o_ref[c * ldo + k]),
                                  dn_bits(o[c * ldo + k]));
        }
}

void dn_check_repacked_rows(const dn_dot_kernels *kern, dn_type type, const uint8_t *w, size_t rows,
                            size_t n, const dn_act_row *act, dn_act_scaling scaling, size_t r0,
                            size_t r1, const float *o_ref, dn_status st_ref, size_t bad_ref,
                            dn_check_result *res)
{
    uint8_t *p = repacked(type, w, rows, n, res);
    float *o = malloc(rows * sizeof *o);
    if (!p || !o) {
        if (!o) dn_check_mismatch(res, "repack: out of memory");
        free(p);
        free(o);
        return;
    }
    const size_t blocks = n / dn_type_block_elements(type);
    const dn_dot_rows_act_fn fs[2] = {dn_dot_scalar.packed_rows_act, kern->packed_rows_act};
    const char *const names[2] = {"repacked reference", "repacked kernel"};
    for (int i = 0; i < 2; i++) {
        for (size_t k = 0; k < rows; k++) o[k] = dn_from_bits(0x7F812345u);
        size_t bad = (size_t)-1;
        dn_status st = dn_dot_rows_own_act(fs[i], type, p, rows, n, act, scaling, r0, r1, o, &bad);
        compare(names[i], type, n, blocks, r0, r1, 1, rows, o_ref, st_ref, bad_ref, o, st, bad,
                res);
    }
    free(p);
    free(o);
}

void dn_check_repacked_mm(const dn_dot_kernels *kern, const dn_act *x, size_t c0, size_t c1,
                          dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                          const float *o_ref, dn_status st_ref, size_t bad_ref,
                          dn_check_result *res)
{
    const size_t n = x->n, blocks = n / dn_type_block_elements(type);
    uint8_t *p = repacked(type, w, rows, n, res);
    float *o = malloc(rows * (c1 - c0) * sizeof *o);
    if (!p || !o) {
        if (!o) dn_check_mismatch(res, "repack: out of memory");
        free(p);
        free(o);
        return;
    }
    for (size_t k = 0; k < rows * (c1 - c0); k++) o[k] = dn_from_bits(0x7F812345u);
    size_t bad = (size_t)-1;
    dn_status st = dn_repacked_mm_with(kern, x, c0, c1, type, p, rows, r0, r1, o, rows, &bad);
    compare("repacked mat_mul", type, n, blocks, r0, r1, c1 - c0, rows, o_ref, st_ref, bad_ref, o,
            st, bad, res);
    free(p);
    free(o);
}
