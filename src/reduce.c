/*
 * Reductions of the fp32 core: the pairwise tree, lane sums and dot
 * products, the largest value, the largest magnitude, the index of the
 * largest. The references define the bits; the public entry points dispatch
 * to the active ISA's kernels, which reproduce them.
 */
#include "fp32_kernels.h"
#include "bits.h"

#include <math.h>
#include <stdint.h>

float dn_tree(const float *x, size_t n)
{
    if (n == 0 || !x) return 0.0f;
    if (n == 1) return dn_result(dn_flush(x[0]));
    /* Level by level, adjacent pairs with an odd last element carried up, is
       the same fold as splitting at the largest power of two below n. */
    size_t half = 1;
    while (half * 2 < n) half *= 2;
    return dn_fadd(dn_tree(x, half), dn_tree(x + half, n - half));
}

float dn_ref_fsum(const float *x, size_t n)
{
    float lane[DN_LANES] = {0};
    for (size_t i = 0; i < n; i++) lane[i % DN_LANES] = dn_fadd(lane[i % DN_LANES], x[i]);
    return dn_tree(lane, DN_LANES);
}

float dn_ref_fdot(const float *a, const float *b, size_t n)
{
    float lane[DN_LANES] = {0};
    for (size_t i = 0; i < n; i++)
        lane[i % DN_LANES] = dn_fadd(lane[i % DN_LANES], dn_fmul(a[i], b[i]));
    return dn_tree(lane, DN_LANES);
}

float dn_ref_fdot_tf32(const float *a, const float *b, size_t n)
{
    float lane[DN_LANES] = {0};
    for (size_t i = 0; i < n; i++)
        lane[i % DN_LANES] = dn_fadd(lane[i % DN_LANES], dn_fmul_tf32(a[i], b[i]));
    return dn_tree(lane, DN_LANES);
}

float dn_ref_fmax(const float *x, size_t n)
{
    float best = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = dn_flush(x[i]);
        if (v > best) best = v; /* false for a NaN */
    }
    return best == 0.0f ? 0.0f : best;
}

float dn_ref_absmax(const float *x, size_t n)
{
    float best = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = dn_from_bits(dn_bits(dn_flush(x[i])) & 0x7FFFFFFFu);
        if (v > best) best = v;
    }
    return best;
}

size_t dn_ref_argmax(const float *x, size_t n)
{
    size_t at = 0;
    int found = 0;
    float best = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v = dn_flush(x[i]);
        if (v != v) continue;
        if (!found || v > best) { best = v; at = i; found = 1; }
    }
    return at;
}

size_t dn_argmax_by_chunks(const float *x, size_t n, dn_argmax_chunk_fn chunk)
{
    const size_t span = (size_t)1 << 30;
    size_t where = SIZE_MAX;
    float top = -INFINITY;
    for (size_t s = 0; s < n; s += span) {
        float v;
        size_t at = chunk(x + s, n - s < span ? n - s : span, &v);
        if (at != SIZE_MAX && (where == SIZE_MAX || v > top)) {
            top = v;
            where = s + at;
        }
    }
    return where == SIZE_MAX ? dn_ref_argmax(x, n) : where;
}

float dn_fsum(const float *x, size_t n)
{
    if (!x && n) return dn_nan();
    return dn_fp32_active()->fsum(x, n);
}

float dn_fdot(const float *a, const float *b, size_t n)
{
    if ((!a || !b) && n) return dn_nan();
    return dn_fp32_active()->fdot(a, b, n);
}

float dn_fdot_tf32(const float *a, const float *b, size_t n)
{
    if ((!a || !b) && n) return dn_nan();
    return dn_fp32_active()->fdot_tf32(a, b, n);
}

dn_status dn_fdot_unit(dn_fpu unit, const float *a, const float *b, size_t n, float *out)
{
    if (!out || ((!a || !b) && n)) return DN_ERR_INVALID_ARGUMENT;
    switch (unit) {
    case DN_FPU_VECTOR: *out = dn_fp32_active()->fdot(a, b, n); return DN_OK;
    case DN_FPU_TF32: *out = dn_fp32_active()->fdot_tf32(a, b, n); return DN_OK;
    }
    return DN_ERR_INVALID_ARGUMENT;
}

float dn_fmax(const float *x, size_t n)
{
    if (!x && n) return dn_nan();
    return dn_fp32_active()->fmax(x, n);
}

float dn_absmax(const float *x, size_t n)
{
    if (!x && n) return dn_nan();
    return dn_fp32_active()->absmax(x, n);
}

size_t dn_argmax(const float *x, size_t n)
{
    if (!x) return 0;
    return dn_fp32_active()->argmax(x, n);
}
