/* SPDX-License-Identifier: MIT */
/*
 * The transcendentals' sweep: for each unary function, the active ISA's
 * kernel (AVX2 or NEON where the CPU has it; DECODENUM_ISA picks another)
 * against the scalar reference, every bit, and the largest error in ULPs
 * against the correctly rounded result, over every binary32 input (or, with
 * --sample K, 2^K inputs spread over the whole range). Two threads.
 *
 *   sweep_math [--sample K] [--isa NAME] [--bits-only] [function...]
 *
 * --isa NAME sweeps that ISA's kernels (scalar, avx2, avx512, neon) whatever
 * is active; where the CPU or the build cannot run it the sweep says so and
 * exits with 77 (ctest's SKIP_RETURN_CODE). --bits-only compares kernel and
 * reference alone, without the error against the exact value (which does
 * not depend on the ISA: the reference's error, measured by the default run).
 *
 * The exact value: glibc's double exp/log/log1p/sqrt (errors below 1 ulp
 * of double, 2^-29 of a binary32 ulp); the reported worst case of each
 * function is recomputed with MPFR at 256 bits (when built with MPFR).
 * ULP error = |ours - exact| / ulp, ulp = 2^(max(e, -126) - 23) for
 * |exact| in [2^e, 2^(e+1)); a result whose correctly rounded value is
 * denormal counts as exact when ours is a zero of its sign; a correctly
 * rounded infinity must be that infinity, a NaN a NaN.
 * Exit status 1 on any kernel/reference difference or an error over the
 * function's limit (1 ULP; tanh, gelu_tanh and gelu 2).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "dispatch.h"
#include "isa.h"
#include "sweep_isa.h"
#include "testutil.h"

#if defined(DN_SWEEP_MPFR)
#include <mpfr.h>
#endif

enum { EXP, LN, LN1P, RECIP, RSQRT, SIGMOID, SILU, SOFTPLUS, TANH, GELU_TANH, GELU, COUNT };
static const char *const names[COUNT] = {"exp",   "ln",        "ln1p", "recip",
                                         "rsqrt", "sigmoid",   "silu", "softplus",
                                         "tanh",  "gelu_tanh", "gelu"};
/* The largest error each function is held to (ULP): the activations' bounds
   are the ones docs/numerics.md 20 states (measured, rounded up). */
static const double limit[COUNT] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2};

/* gelu_tanh's z = 2 sqrt(2/pi) (x + 0.044715 x^3), in double */
static double gelu_tanh_z(double x)
{
    return 1.5957691216057307117597842397375 * (x + 0.044715 * x * x * x);
}

static double exact_of(int f, double x)
{
    switch (f) {
    case EXP: return exp(x);
    case LN: return x < 0 ? NAN : log(x);
    case LN1P: return x < -1 ? NAN : log1p(x);
    case RECIP: return 1.0 / x;
    case RSQRT: return x < 0 ? NAN : x == 0 ? 1.0 / x : 1.0 / sqrt(x);
    case SIGMOID: return 1.0 / (1.0 + exp(-x));
    case SILU: return isinf(x) ? (x > 0 ? x : -0.0) : x / (1.0 + exp(-x));
    case SOFTPLUS: return x > 30 ? x + log1p(exp(-x)) : log1p(exp(x));
    case TANH: return tanh(x);
    case GELU_TANH: return isinf(x) ? (x > 0 ? x : -0.0) : x / (1.0 + exp(-gelu_tanh_z(x)));
    default: return isinf(x) ? (x > 0 ? x : -0.0) : 0.5 * x * erfc(-x * 0.70710678118654752440);
    }
}

static double ulp_err(float ours, double exact)
{
    if (isnan(exact)) return isnan(ours) ? 0 : INFINITY;
    float r = (float)exact;
    if (isinf(r)) return ours == r ? 0 : INFINITY;
    if (fabsf(r) < 0x1p-126f && ours == 0.0f && !signbit(ours) == !signbit(exact)) return 0;
    if (fabsf(r) < 0x1p-126f && ours == 0.0f && exact == 0) return 0;
    if (isinf(ours) || isnan(ours)) return INFINITY;
    int e;
    frexp(fabs(exact), &e);
    e -= 1;
    if (e < -126) e = -126;
    return fabs((double)ours - exact) / ldexp(1.0, e - 23);
}

typedef struct job {
    int f, bits_only;
    uint64_t start, count, stride; /* inputs start + i*stride (+ jitter) */
    const dn_math_kernels *k;
    uint64_t compared, mismatched;
    uint32_t first_bad;
    double worst;
    uint32_t worst_at;
} job;

static dn_unary_kernel pick(const dn_math_kernels *k, int f)
{
    const dn_unary_kernel all[COUNT] = {k->exp_v,   k->ln_v,        k->ln1p_v, k->recip_v,
                                        k->rsqrt_v, k->sigmoid_v,   k->silu_v, k->softplus_v,
                                        k->tanh_v,  k->gelu_tanh_v, k->gelu_v};
    return all[f];
}

static void *work(void *arg)
{
    job *j = arg;
    enum { B = 65536 };
    float *x = malloc(B * 4), *yr = malloc(B * 4), *yk = malloc(B * 4);
    dn_unary_kernel ref = pick(&dn_math_scalar, j->f), ker = j->k ? pick(j->k, j->f) : NULL;
    uint64_t seed = 0x9E3779B97F4A7C15u * (uint64_t)(j->f + 1);
    for (uint64_t done = 0; done < j->count; done += B) {
        size_t n = j->count - done < B ? (size_t)(j->count - done) : B;
        for (size_t i = 0; i < n; i++) {
            uint64_t idx = j->start + (done + i) * j->stride;
            if (j->stride > 1) { /* jitter inside the stride */
                idx += (lcg64(&seed) >> 33) % j->stride;
            }
            x[i] = tf((uint32_t)idx);
        }
        ref(x, yr, n);
        if (ker) {
            ker(x, yk, n);
            for (size_t i = 0; i < n; i++)
                if (tbits(yr[i]) != tbits(yk[i]) && j->mismatched++ == 0)
                    j->first_bad = tbits(x[i]);
            j->compared += n;
        }
        for (size_t i = 0; i < n && !j->bits_only; i++) {
            uint32_t u = tbits(x[i]);
            double d = (u & 0x7F800000u) == 0 ? (u >> 31 ? -0.0 : 0.0) : (double)x[i];
            double err = ulp_err(yr[i], exact_of(j->f, d));
            if (err > j->worst || (isnan(err) && !isnan(j->worst))) {
                j->worst = err;
                j->worst_at = u;
            }
        }
    }
    free(x);
    free(yr);
    free(yk);
    return NULL;
}

#if defined(DN_SWEEP_MPFR)
/* tanh, gelu_tanh (x sigmoid(z), the identity 0.5 (1 + tanh(z/2)) = sigmoid(z))
   and gelu (x erfc(-x/sqrt2)/2) of x into y, at 256 bits (t scratch). */
static void mpfr_act(int f, mpfr_t x, mpfr_t y, mpfr_t t)
{
    mpfr_t c;
    mpfr_init2(c, 256);
    if (f == TANH) {
        mpfr_tanh(y, x, MPFR_RNDN);
    } else if (f == GELU_TANH) { /* z = 2 sqrt(2/pi) x (1 + 0.044715 x^2) */
        mpfr_sqr(t, x, MPFR_RNDN);
        mpfr_set_str(c, "0.044715", 10, MPFR_RNDN);
        mpfr_mul(t, t, c, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_mul(t, t, x, MPFR_RNDN);
        mpfr_const_pi(c, MPFR_RNDN);
        mpfr_ui_div(c, 8, c, MPFR_RNDN);
        mpfr_sqrt(c, c, MPFR_RNDN);
        mpfr_mul(t, t, c, MPFR_RNDN);
        mpfr_neg(t, t, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_div(y, x, t, MPFR_RNDN);
    } else {
        mpfr_sqrt_ui(c, 2, MPFR_RNDN);
        mpfr_div(t, x, c, MPFR_RNDN);
        mpfr_neg(t, t, MPFR_RNDN);
        mpfr_erfc(t, t, MPFR_RNDN);
        mpfr_mul(y, x, t, MPFR_RNDN);
        mpfr_div_2ui(y, y, 1, MPFR_RNDN);
    }
    mpfr_clear(c);
}

/* The worst case again, exactly: MPFR at 256 bits, rounded to double for the ratio
   (double keeps 2^-29 of an ulp). */
static double mpfr_err(int f, uint32_t u, float ours)
{
    mpfr_t x, y, t;
    mpfr_inits2(256, x, y, t, (mpfr_ptr)0);
    float xf = tf(u);
    if ((u & 0x7F800000u) == 0) xf = u >> 31 ? -0.0f : 0.0f;
    mpfr_set_flt(x, xf, MPFR_RNDN);
    switch (f) {
    case EXP: mpfr_exp(y, x, MPFR_RNDN); break;
    case LN: mpfr_log(y, x, MPFR_RNDN); break;
    case LN1P: mpfr_log1p(y, x, MPFR_RNDN); break;
    case RECIP: mpfr_ui_div(y, 1, x, MPFR_RNDN); break;
    case RSQRT: mpfr_rec_sqrt(y, x, MPFR_RNDN); break;
    case SIGMOID:
    case SILU:
        mpfr_neg(t, x, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        if (f == SIGMOID)
            mpfr_ui_div(y, 1, t, MPFR_RNDN);
        else
            mpfr_div(y, x, t, MPFR_RNDN);
        break;
    case SOFTPLUS:
        mpfr_exp(t, x, MPFR_RNDN);
        mpfr_log1p(y, t, MPFR_RNDN);
        break;
    default: mpfr_act(f, x, y, t); break;
    }
    /* |ours - y| / ulp in MPFR, then to double */
    double ex = mpfr_get_d(y, MPFR_RNDN);
    double r;
    if (!isfinite(ex) || !isfinite(ours) || mpfr_zero_p(y)) {
        r = ulp_err(ours, ex);
    } else {
        int e;
        frexp(fabs(ex), &e);
        e -= 1;
        if (e < -126) e = -126;
        mpfr_set_flt(t, ours, MPFR_RNDN);
        mpfr_sub(t, t, y, MPFR_RNDN);
        mpfr_abs(t, t, MPFR_RNDN);
        mpfr_mul_2si(t, t, -(e - 23), MPFR_RNDN);
        r = mpfr_get_d(t, MPFR_RNDN);
    }
    mpfr_clears(x, y, t, (mpfr_ptr)0);
    return r;
}
#endif

int main(int argc, char **argv)
{
    int sample_bits = 32, want[COUNT] = {0}, any = 0, bits_only = 0;
    const char *isa_arg = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sample") == 0 && i + 1 < argc)
            sample_bits = atoi(argv[++i]);
        else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc)
            isa_arg = argv[++i];
        else if (strcmp(argv[i], "--bits-only") == 0)
            bits_only = 1;
        else {
            int f = sweep_function("sweep_math",
                                   "[--sample K] [--isa NAME] [--bits-only] [function...]", argv[i],
                                   names, COUNT);
            if (f < 0) return 2;
            want[f] = any = 1;
        }
    }
    if (sample_bits < 8 || sample_bits > 32) sample_bits = 32;
    const dn_math_kernels *k = NULL;
    dn_isa isa;
    int status = sweep_choose_isa("sweep_math", isa_arg, &isa);
    if (status) return status;
    if (isa != DN_ISA_SCALAR) k = dn_kernels_for(isa)->math;
    uint64_t total = UINT64_C(1) << sample_bits, stride = (UINT64_C(1) << 32) / total;
    printf("sweep_math: %s inputs (%llu), %s kernels vs the scalar reference%s\n",
           sample_bits == 32 ? "every binary32" : "sampled", (unsigned long long)total,
           k ? dn_isa_name(isa) : "no SIMD",
           bits_only ? " (bits only)" : "; ULPs vs the correctly rounded value");
    int bad = 0;
    for (int f = 0; f < COUNT; f++) {
        if (any && !want[f]) continue;
        job jobs[2];
        pthread_t th[2];
        for (int t = 0; t < 2; t++) {
            memset(&jobs[t], 0, sizeof jobs[t]);
            jobs[t].f = f;
            jobs[t].bits_only = bits_only;
            jobs[t].k = k;
            jobs[t].count = total / 2;
            jobs[t].stride = stride;
            jobs[t].start = (uint64_t)t * (total / 2) * stride;
            pthread_create(&th[t], NULL, work, &jobs[t]);
        }
        uint64_t compared = 0, mismatched = 0;
        double worst = 0;
        uint32_t at = 0, first_bad = 0;
        for (int t = 0; t < 2; t++) {
            pthread_join(th[t], NULL);
            compared += jobs[t].compared;
            if (jobs[t].mismatched && !mismatched) first_bad = jobs[t].first_bad;
            mismatched += jobs[t].mismatched;
            if (jobs[t].worst > worst) {
                worst = jobs[t].worst;
                at = jobs[t].worst_at;
            }
        }
        float xw = tf(at), yw = pick(&dn_math_scalar, f) == NULL ? 0 : 0;
        pick(&dn_math_scalar, f)(&xw, &yw, 1);
        printf("  %-9s %llu inputs, %llu kernel outputs compared, %llu differ", names[f],
               (unsigned long long)total, (unsigned long long)compared,
               (unsigned long long)mismatched);
        if (mismatched) printf(" (first at input 0x%08X)", first_bad);
        if (bits_only) {
            printf("; error not measured (--bits-only)\n");
            if (mismatched || !k) bad = 1;
            continue;
        }
        printf("; max error %.4f ULP at x = %a (0x%08X) -> %a", worst, xw, at, yw);
#if defined(DN_SWEEP_MPFR)
        printf(" [MPFR: %.4f]", mpfr_err(f, at, yw));
#endif
        printf("\n");
        if (mismatched || !(worst <= limit[f])) bad = 1;
    }
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
