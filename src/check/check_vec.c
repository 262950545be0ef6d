/* SPDX-License-Identifier: MIT */
/*
 * The element-wise module's kernels held to their references, every
 * output's bits: each kernel at every plan length, in every input regime
 * for the short lengths (one regime, in turn, for the long ones), with its
 * arrays at an even and an odd float offset, out of place and in each
 * in-place form the public functions allow. The gates (one dn_silu,
 * dn_sigmoid, dn_gelu_tanh or dn_gelu per element in the reference) stop
 * at 2^16 elements.
 */
#include "check.h"
#include "dispatch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The GELU gates last: the kernels before them keep their seeds. */
enum {
    ADD,
    SUB,
    MUL,
    SCALE,
    AXPY,
    SILU_MUL,
    SIGMOID_MUL,
    ADD_RMSNORM,
    GELU_TANH_MUL,
    GELU_MUL,
    KERNEL_COUNT
};
static const char *const names[KERNEL_COUNT] = {
    "add",      "sub",         "mul",         "scale",         "axpy",
    "silu_mul", "sigmoid_mul", "add_rmsnorm", "gelu_tanh_mul", "gelu_mul",
};

/* The arrays of one case; each has room for max + 1 floats. */
typedef struct vec_case {
    const dn_vec_kernels *ref, *k;
    float *a, *b, *w, *y_ref, *y_k, *r_ref, *r_k;
} vec_case;

static void compare(dn_check_result *res, const float *want, const float *got, size_t n,
                    const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (dn_bits(want[i]) != dn_bits(got[i]))
            dn_check_mismatch(res, "%s n=%zu i=%zu: reference 0x%08" PRIx32 ", kernel 0x%08" PRIx32,
                              what, n, i, dn_bits(want[i]), dn_bits(got[i]));
    res->compared += n;
}

static dn_vec_binary_kernel binary_of(const dn_vec_kernels *k, int which)
{
    switch (which) {
    case ADD: return k->add;
    case SUB: return k->sub;
    case MUL: return k->mul;
    case SILU_MUL: return k->silu_mul;
    case GELU_TANH_MUL: return k->gelu_tanh_mul;
    case GELU_MUL: return k->gelu_mul;
    default: return k->sigmoid_mul;
    }
}

/* y = a op b out of place, then in place on a and on b. */
static void binary_case(dn_check_result *res, const vec_case *c, int which, const float *a,
                        const float *b, float *y_k, size_t n)
{
    dn_vec_binary_kernel r = binary_of(c->ref, which), k = binary_of(c->k, which);
    r(a, b, c->y_ref, n);
    k(a, b, y_k, n);
    compare(res, c->y_ref, y_k, n, names[which]);
    memcpy(y_k, a, n * sizeof(float));
    k(y_k, b, y_k, n);
    compare(res, c->y_ref, y_k, n, "in place on a");
    memcpy(y_k, b, n * sizeof(float));
    k(a, y_k, y_k, n);
    compare(res, c->y_ref, y_k, n, "in place on b");
}

/* scale out of place and in place; axpy on y (from b), and with x == y. */
static void scalar_case(dn_check_result *res, const vec_case *c, int which, const float *a,
                        const float *b, float s, float *y_k, size_t n)
{
    if (which == SCALE) {
        c->ref->scale(a, s, c->y_ref, n);
        c->k->scale(a, s, y_k, n);
        compare(res, c->y_ref, y_k, n, "scale");
        memcpy(y_k, a, n * sizeof(float));
        c->k->scale(y_k, s, y_k, n);
        compare(res, c->y_ref, y_k, n, "scale in place");
        return;
    }
    memcpy(c->y_ref, b, n * sizeof(float));
    memcpy(y_k, b, n * sizeof(float));
    c->ref->axpy(s, a, c->y_ref, n);
    c->k->axpy(s, a, y_k, n);
    compare(res, c->y_ref, y_k, n, "axpy");
    memcpy(c->y_ref, a, n * sizeof(float));
    memcpy(y_k, a, n * sizeof(float));
    c->ref->axpy(s, c->y_ref, c->y_ref, n);
    c->k->axpy(s, y_k, y_k, n);
    compare(res, c->y_ref, y_k, n, "axpy x == y");
}

/* add_sumsq then scale_mul (dn_vec_add_rmsnorm's two kernels) on r = a,
   x = b: the stored sums, the sum of squares, the outputs; then y on x. */
static void rmsnorm_case(dn_check_result *res, const vec_case *c, const float *a, float *b,
                         float eps, float *r_k, size_t n)
{
    memcpy(c->r_ref, a, n * sizeof(float));
    memcpy(r_k, a, n * sizeof(float));
    float s_ref = c->ref->add_sumsq(c->r_ref, b, n), s_k = c->k->add_sumsq(r_k, b, n);
    compare(res, c->r_ref, r_k, n, "add_rmsnorm sum");
    compare(res, &s_ref, &s_k, 1, "add_rmsnorm sum of squares");
    float rs = n ? dn_math_rms_scale(s_ref, n, eps) : 0.0f;
    c->ref->scale_mul(c->r_ref, rs, c->w, c->y_ref, n);
    c->k->scale_mul(r_k, rs, c->w, c->y_k, n);
    compare(res, c->y_ref, c->y_k, n, "add_rmsnorm output");
    c->k->scale_mul(r_k, rs, c->w, b, n); /* y on x */
    compare(res, c->y_ref, b, n, "add_rmsnorm output on x");
}

/* One kernel on one length in one regime, its arrays at float offset `off`. */
static void run_case(dn_check_result *res, const vec_case *c, int which, dn_rng *rng, size_t n,
                     dn_regime rg, size_t off)
{
    static const float eps_set[] = {1e-6f, 1e-5f, 0.0f, 0x1p-130f};
    float *a = c->a + off, *b = c->b + (off ^ 1), *y_k = c->y_k + off;
    dn_fill_pair(rng, rg, rg == DN_REGIME_PAIRED ? rg : (dn_regime)((rg + 1) % DN_REGIME_COUNT), a,
                 b, n);
    float s;
    dn_fill_f32(rng, (dn_rng_next(rng) & 1) ? DN_REGIME_SPECIAL : rg, &s, 1);
    switch (which) {
    case SCALE:
    case AXPY: scalar_case(res, c, which, a, b, s, y_k, n); return;
    case ADD_RMSNORM:
        dn_fill_f32(rng, (dn_rng_next(rng) & 1) ? DN_REGIME_SPECIAL : DN_REGIME_NORMAL, c->w, n);
        rmsnorm_case(res, c, a, b, eps_set[dn_rng_next(rng) & 3], c->r_k + off, n);
        return;
    default: binary_case(res, c, which, a, b, y_k, n);
    }
}

static int check_kernels(dn_isa isa, vec_case *c, const dn_check_plan *plan, const size_t *lengths,
                         size_t count, dn_check_sink sink, void *ctx)
{
    int failed = 0;
    for (int which = 0; which < KERNEL_COUNT; which++) {
        dn_check_result res = {"vec", names[which], isa, 0, 0, ""};
        dn_rng rng = {plan->seed + 301 + (uint64_t)which};
        const int gate = which == SILU_MUL || which == SIGMOID_MUL || which == GELU_TANH_MUL ||
                         which == GELU_MUL;
        const size_t cap = gate ? 65536 : SIZE_MAX;
        for (size_t li = 0; li < count; li++) {
            size_t n = lengths[li] < cap ? lengths[li] : cap;
            int regimes = lengths[li] <= plan->every_length_to ? DN_REGIME_COUNT : 1;
            for (int g = 0; g < regimes; g++) {
                dn_regime rg = (dn_regime)(regimes == 1 ? li % DN_REGIME_COUNT : (size_t)g);
                run_case(&res, c, which, &rng, n, rg, (li + (size_t)g) & 1);
            }
        }
        if (res.mismatched) failed++;
        if (sink) sink(&res, ctx);
    }
    return failed;
}

int dn_check_vec(dn_isa isa, const dn_check_plan *plan, dn_check_sink sink, void *ctx)
{
    const dn_kernels *ks = dn_kernels_for(isa);
    if (!ks) return 0;
    size_t *lengths;
    size_t count = dn_plan_lengths(plan, &lengths);
    size_t max = 0;
    for (size_t i = 0; i < count; i++) max = lengths[i] > max ? lengths[i] : max;
    vec_case c = {&dn_vec_scalar, ks->vec, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    float **bufs[] = {&c.a, &c.b, &c.w, &c.y_ref, &c.y_k, &c.r_ref, &c.r_k};
    int ok = lengths != NULL;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        *bufs[i] = malloc((max + 2) * sizeof(float));
        ok = ok && *bufs[i];
    }
    int failed = ok ? check_kernels(isa, &c, plan, lengths, count, sink, ctx) : 1;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(*bufs[i]);
    free(lengths);
    return failed;
}
