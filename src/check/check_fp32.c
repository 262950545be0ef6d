/* SPDX-License-Identifier: MIT */
/* The fp32 core's kernels held to their references, every output's bits. */
#include "check.h"
#include "dispatch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct fp32_case {
    const dn_fp32_kernels *ref, *k;
    float *a, *b, *y_ref, *y_k;
    uint16_t *h, *h_ref, *h_k;
} fp32_case;

enum {
    UNARY_FTZ,
    TO_F16,
    FROM_F16,
    TO_BF16,
    FROM_BF16,
    FSUM,
    FDOT,
    FDOT_TF32,
    FMAX,
    ABSMAX,
    ARGMAX,
    KERNEL_COUNT
};

static const char *const kernel_names[KERNEL_COUNT] = {
    "ftz_v", "f32_to_f16_v", "f16_to_f32_v", "f32_to_bf16_v", "bf16_to_f32_v", "fsum",
    "fdot",  "fdot_tf32",    "fmax",         "absmax",        "argmax",
};

static void compare_f32(dn_check_result *res, const float *want, const float *got, size_t n,
                        const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (dn_bits(want[i]) != dn_bits(got[i]))
            dn_check_mismatch(res, "%s n=%zu i=%zu: reference 0x%08" PRIx32 ", kernel 0x%08" PRIx32,
                              what, n, i, dn_bits(want[i]), dn_bits(got[i]));
    res->compared += n;
}

static void compare_u16(dn_check_result *res, const uint16_t *want, const uint16_t *got, size_t n,
                        const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (want[i] != got[i])
            dn_check_mismatch(res, "%s n=%zu i=%zu: reference 0x%04x, kernel 0x%04x", what, n, i,
                              want[i], got[i]);
    res->compared += n;
}

/* Runs kernel `which` once on the first n elements of the case's inputs. */
static void run_one(fp32_case *c, int which, size_t n, dn_check_result *res)
{
    const dn_fp32_kernels *r = c->ref, *k = c->k;
    const char *name = kernel_names[which];
    float want = 0, got = 0;
    switch (which) {
    case UNARY_FTZ:
        r->ftz_v(c->a, c->y_ref, n);
        k->ftz_v(c->a, c->y_k, n);
        compare_f32(res, c->y_ref, c->y_k, n, name);
        return;
    case TO_F16:
        r->f32_to_f16_v(c->a, c->h_ref, n);
        k->f32_to_f16_v(c->a, c->h_k, n);
        compare_u16(res, c->h_ref, c->h_k, n, name);
        return;
    case FROM_F16:
        r->f16_to_f32_v(c->h, c->y_ref, n);
        k->f16_to_f32_v(c->h, c->y_k, n);
        compare_f32(res, c->y_ref, c->y_k, n, name);
        return;
    case TO_BF16:
        r->f32_to_bf16_v(c->a, c->h_ref, n);
        k->f32_to_bf16_v(c->a, c->h_k, n);
        compare_u16(res, c->h_ref, c->h_k, n, name);
        return;
    case FROM_BF16:
        r->bf16_to_f32_v(c->h, c->y_ref, n);
        k->bf16_to_f32_v(c->h, c->y_k, n);
        compare_f32(res, c->y_ref, c->y_k, n, name);
        return;
    case FSUM:
        want = r->fsum(c->a, n);
        got = k->fsum(c->a, n);
        break;
    case FDOT:
        want = r->fdot(c->a, c->b, n);
        got = k->fdot(c->a, c->b, n);
        break;
    case FDOT_TF32:
        want = r->fdot_tf32(c->a, c->b, n);
        got = k->fdot_tf32(c->a, c->b, n);
        break;
    case FMAX:
        want = r->fmax(c->a, n);
        got = k->fmax(c->a, n);
        break;
    case ABSMAX:
        want = r->absmax(c->a, n);
        got = k->absmax(c->a, n);
        break;
    case ARGMAX: {
        size_t iw = r->argmax(c->a, n), ig = k->argmax(c->a, n);
        if (iw != ig) dn_check_mismatch(res, "argmax n=%zu: reference %zu, kernel %zu", n, iw, ig);
        res->compared++;
        return;
    }
    }
    if (dn_bits(want) != dn_bits(got))
        dn_check_mismatch(res, "%s of length %zu: reference 0x%08" PRIx32 ", kernel 0x%08" PRIx32,
                          name, n, dn_bits(want), dn_bits(got));
    res->compared++;
}

int dn_check_fp32(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    const dn_fp32_kernels *k = ks->fp32;
    size_t *lengths;
    size_t count = dn_plan_lengths(plan, &lengths);
    size_t max = 0;
    for (size_t i = 0; i < count; i++) max = lengths[i] > max ? lengths[i] : max;
    if (max < 65536) max = 65536; /* room for the exhaustive binary16 pass */

    /* One spare element so inputs can start off a 32-byte boundary too. */
    fp32_case c = {&dn_fp32_scalar, k, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    float *a = malloc((max + 1) * sizeof *a), *b = malloc((max + 1) * sizeof *b);
    uint16_t *h = malloc((max + 1) * sizeof *h);
    c.y_ref = malloc(max * sizeof(float));
    c.y_k = malloc(max * sizeof(float));
    c.h_ref = malloc(max * sizeof(uint16_t));
    c.h_k = malloc(max * sizeof(uint16_t));
    int failed = 0;
    if (!lengths || !a || !b || !h || !c.y_ref || !c.y_k || !c.h_ref || !c.h_k) {
        failed = 1;
        goto out;
    }

    for (int which = 0; which < KERNEL_COUNT; which++) {
        dn_check_result res = {"fp32", kernel_names[which], isa, 0, 0, ""};
        dn_rng rng = {plan->seed + (uint64_t)which};
        for (size_t li = 0; li < count; li++) {
            size_t n = lengths[li];
            /* Short lengths meet every regime; long ones one regime each. */
            int regimes = n <= plan->every_length_to ? DN_REGIME_COUNT : 1;
            for (int g = 0; g < regimes; g++) {
                dn_regime ra = (dn_regime)(regimes == 1 ? li % DN_REGIME_COUNT : (size_t)g);
                dn_regime rb = (dn_regime)((ra + li) % DN_REGIME_COUNT);
                size_t off = (li + (size_t)g) & 1;
                c.a = a + off;
                c.b = b + off;
                c.h = h + off;
                dn_fill_pair(&rng, ra, rb == DN_REGIME_BITS ? ra : rb, c.a, c.b, n);
                dn_fill_u16(&rng, c.h, n);
                run_one(&c, which, n, &res);
            }
        }
        if (which == FROM_F16 || which == FROM_BF16) {
            /* Every binary16 and bfloat16 value. */
            c.h = h;
            for (uint32_t v = 0; v < 65536; v++) h[v] = (uint16_t)v;
            run_one(&c, which, 65536, &res);
        }
        if (res.mismatched) failed++;
        if (sink) sink(&res, ctx);
    }
out:
    free(lengths);
    free(a);
    free(b);
    free(h);
    free(c.y_ref);
    free(c.y_k);
    free(c.h_ref);
    free(c.h_k);
    return failed;
}
