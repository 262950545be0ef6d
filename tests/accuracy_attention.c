/* SPDX-License-Identifier: MIT */
/*
 * accuracy_attention: how far the engine's attention lies from attention
 * computed in binary64 on the same cached values.
 *
 * One KV head of head size 128, 8 query heads, contexts 512 and 8192, the
 * scores' factor 1/sqrt(128). q, K and V are Gaussian N(0,1), or
 * outlier-heavy (Gaussian; 1% of the elements times 20; two fixed channels
 * of K and q times 10). The caches are written by dn_cache_append: binary16
 * for the vector path, int8 (each row under a binary16 scale) for the int8
 * path. Per query head, the relative error ||out - ref||_2 / ||ref||_2 with
 * ref computed in binary64:
 *
 *  - "cached": ref from the values the cache holds (binary16 widened, or
 *    code * scale), so only the arithmetic's error shows;
 *  - "source": ref from the f32 rows before caching, so the cache's own
 *    rounding shows too.
 *
 * Prints the table docs/attention.md quotes (median and largest over the
 * heads) and checks bounds that hold by a margin (1e-5 for the vector path,
 * 0.5 for the int8 path, whose one-word queries lose the small elements of
 * a block holding an outlier, and whose probabilities are quantized to 8
 * bits per 32 positions: errors near 1e-2 are the definition's). ctest
 * label `accuracy`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"

#define D 128
#define QH 8

static uint64_t g_state = 0x5EED;

static double uniform(void)
{
    g_state = g_state * 6364136223846793005u + 1442695040888963407u;
    return ((double)(g_state >> 11) + 0.5) * 0x1p-53;
}

static float gauss(void)
{
    return (float)(sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform()));
}

static void fill(float *x, size_t n, int outliers, int channels)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = gauss();
        if (outliers && uniform() < 0.01) x[i] *= 20.0f;
        if (outliers && channels && (i % D == 5 || i % D == 77)) x[i] *= 10.0f;
    }
}

/* Attention in binary64 of one head over n rows (row j at k + j * D). */
static void attend64(const float *q, const double *k, const double *v, size_t n, double *out)
{
    double *s = malloc(n * sizeof(double)), m = -INFINITY, sum = 0.0;
    for (size_t j = 0; j < n; j++) {
        double t = 0.0;
        for (size_t i = 0; i < D; i++) t += (double)q[i] * k[j * D + i];
        s[j] = t / sqrt((double)D);
        if (s[j] > m) m = s[j];
    }
    for (size_t j = 0; j < n; j++) sum += s[j] = exp(s[j] - m);
    for (size_t i = 0; i < D; i++) out[i] = 0.0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < D; i++) out[i] += s[j] / sum * v[j * D + i];
    free(s);
}

static double rel_err(const float *x, const double *ref)
{
    double e = 0.0, r = 0.0;
    for (size_t i = 0; i < D; i++) {
        e += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
        r += ref[i] * ref[i];
    }
    return sqrt(e / r);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The cached values of a row as binary64. */
static void cached_row(const dn_kv_cache *c, size_t p, const void *base, const uint16_t *scales,
                       double *out)
{
    for (size_t i = 0; i < D; i++) {
        if (c->type == DN_KV_F16)
            out[i] = dn_f16_to_f32(((const uint16_t *)base)[p * D + i]);
        else
            out[i] = (double)((const int8_t *)base)[p * D + i] * dn_f16_to_f32(scales[p]);
    }
}

/* One configuration: prints a line, returns the largest error against the cached values. */
static double run(size_t n, int outliers, uint32_t type, int scaling, int words, const char *label)
{
    float *k = malloc(n * D * sizeof(float)), *v = malloc(n * D * sizeof(float)), q[QH * D],
          out[QH * D];
    double *kc = malloc(n * D * sizeof(double)), *vc = malloc(n * D * sizeof(double));
    double *ks = malloc(n * D * sizeof(double)), *vs = malloc(n * D * sizeof(double));
    g_state = 0x5EED + n + (uint64_t)outliers;
    fill(k, n * D, outliers, 1);
    fill(v, n * D, outliers, 0);
    fill(q, QH * D, outliers, 1);
    size_t es = type == DN_KV_F16 ? 2 : 1;
    dn_kv_cache c = {malloc(n * D * es),
                     malloc(n * D * es),
                     malloc(n * 2),
                     malloc(n * 2),
                     D,
                     1,
                     D,
                     D,
                     1,
                     1,
                     type,
                     0};
    for (size_t p = 0; p < n; p++) {
        dn_cache_append(&c, p, k + p * D, v + p * D);
        cached_row(&c, p, c.k, c.k_scale, kc + p * D);
        cached_row(&c, p, c.v, c.v_scale, vc + p * D);
        for (size_t i = 0; i < D; i++) ks[p * D + i] = k[p * D + i], vs[p * D + i] = v[p * D + i];
    }
    dn_attn_params prm = {QH, 0, n, 1.0f / sqrtf((float)D), (uint32_t)scaling, (uint32_t)words};
    if (dn_attend(&c, &prm, q, out, NULL, 0, NULL) != DN_OK) {
        printf("  %s: dn_attend failed\n", label);
        exit(1);
    }
    double ec[QH], esrc[QH], ref[D];
    for (size_t h = 0; h < QH; h++) {
        attend64(q + h * D, kc, vc, n, ref);
        ec[h] = rel_err(out + h * D, ref);
        attend64(q + h * D, ks, vs, n, ref);
        esrc[h] = rel_err(out + h * D, ref);
    }
    qsort(ec, QH, sizeof(double), cmp_double);
    qsort(esrc, QH, sizeof(double), cmp_double);
    printf("| %-22s | %-8s | %5zu | %.2e | %.2e | %.2e | %.2e |\n", label,
           outliers ? "outliers" : "Gaussian", n, (ec[QH / 2 - 1] + ec[QH / 2]) / 2, ec[QH - 1],
           (esrc[QH / 2 - 1] + esrc[QH / 2]) / 2, esrc[QH - 1]);
    free(k), free(v), free(kc), free(vc), free(ks), free(vs);
    free(c.k), free(c.v), free(c.k_scale), free(c.v_scale);
    return ec[QH - 1];
}

int main(void)
{
    printf("| path | q, K, V | context | cached: median | cached: largest | source: median | "
           "source: largest |\n");
    printf("|---|---|---|---|---|---|---|\n");
    const size_t ctxs[2] = {512, 8192};
    int failed = 0;
    for (int o = 0; o < 2; o++)
        for (int ci = 0; ci < 2; ci++) {
            failed |= run(ctxs[ci], o, DN_KV_F16, 0, 1, "attend_vector, f16") > 1e-5;
            failed |= run(ctxs[ci], o, DN_KV_INT8, DN_ACT_SUB32, 1, "attend_int8, Sub32, 1w") > 0.5;
            failed |= run(ctxs[ci], o, DN_KV_INT8, DN_ACT_SUB32, 2, "attend_int8, Sub32, 2w") > 0.5;
            failed |=
                run(ctxs[ci], o, DN_KV_INT8, DN_ACT_PER_BLOCK, 1, "attend_int8, block, 1w") > 0.5;
            failed |=
                run(ctxs[ci], o, DN_KV_INT8, DN_ACT_PER_BLOCK, 2, "attend_int8, block, 2w") > 0.5;
        }
    printf(failed ? "FAILED: an error past its bound\n" : "all within bounds\n");
    return failed;
}
