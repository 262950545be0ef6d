/* SPDX-License-Identifier: MIT */
/*
 * The sine and cosine sweep: the active ISA's sin_v, cos_v and sincos_v
 * (AVX2, AVX-512 or NEON where the CPU has it; DECODENUM_ISA or --isa picks
 * another) against the scalar references, every bit, and the references'
 * largest error in ULPs against the correctly rounded result, over every
 * binary32 input (or, with --sample K, 2^K inputs spread over the whole
 * range; with --below E only inputs |x| < 2^E). Two threads.
 *
 *   sweep_trig [--sample K] [--below E] [--isa NAME] [--bits-only] [sin|cos]...
 *
 * --isa NAME as sweep_math's (exit 77 where the kernels cannot run);
 * --bits-only compares kernels and reference alone, without the error
 * against the exact value (the reference's, the same on every ISA). The
 * function sin sweeps sin_v and sincos_v's sines, cos cos_v and its
 * cosines; the two kernels' differences are counted apart.
 *
 * The exact value: glibc's double sin/cos (their error is below 1 ulp of
 * double, 2^-29 of a binary32 ulp, at every argument: glibc reduces large
 * arguments with enough bits of pi); each function's worst case is
 * recomputed with MPFR at 256 bits (when built with MPFR). ULP error =
 * |ours - exact| / ulp, ulp = 2^(max(e, -126) - 23) for |exact| in
 * [2^e, 2^(e+1)). Exit status 1 on any kernel/reference difference or an
 * error over 1 ULP.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "dispatch.h"
#include "sweep_isa.h"
#include "testutil.h"

#if defined(DN_SWEEP_MPFR)
#include <mpfr.h>
#endif

enum { SIN, COS, COUNT };
static const char *const names[COUNT] = {"sin", "cos"};

static double ulp_err(float ours, double exact)
{
    if (isnan(exact)) return isnan(ours) ? 0 : INFINITY;
    if (isinf(ours) || isnan(ours)) return INFINITY;
    int e;
    frexp(fabs(exact), &e);
    e -= 1;
    if (e < -126) e = -126;
    return fabs((double)ours - exact) / ldexp(1.0, e - 23);
}

typedef struct job {
    int f, bits_only;
    uint32_t below; /* inputs with |x| bits below this only */
    uint64_t start, count, stride;
    const dn_math_kernels *k;
    uint64_t compared, mismatched, mismatched_sc; /* the function's kernel, sincos_v's */
    uint32_t first_bad;
    double worst;
    uint32_t worst_at;
} job;

static void *work(void *arg)
{
    job *j = arg;
    enum { B = 65536 };
    float *x = malloc(B * 4), *yr = malloc(B * 4), *yk = malloc(B * 4), *ys = malloc(B * 4),
          *yc = malloc(B * 4);
    dn_unary_kernel ref = j->f == SIN ? dn_math_scalar.sin_v : dn_math_scalar.cos_v;
    dn_unary_kernel ker = j->k ? (j->f == SIN ? j->k->sin_v : j->k->cos_v) : NULL;
    uint64_t seed = 0x9E3779B97F4A7C15u * (uint64_t)(j->f + 1) + j->start;
    for (uint64_t done = 0; done < j->count; done += B) {
        size_t n = j->count - done < B ? (size_t)(j->count - done) : B;
        for (size_t i = 0; i < n; i++) {
            uint64_t idx = j->start + (done + i) * j->stride;
            if (j->stride > 1) idx += (lcg64(&seed) >> 33) % j->stride;
            uint32_t u = (uint32_t)idx;
            if ((u & 0x7FFFFFFFu) >= j->below)
                u = (u & 0x80000000u) | ((u & 0x7FFFFFFFu) % j->below);
            x[i] = tf(u);
        }
        ref(x, yr, n);
        if (ker) {
            ker(x, yk, n);
            j->k->sincos_v(x, ys, yc, n);
            const float *other = j->f == SIN ? ys : yc;
            for (size_t i = 0; i < n; i++) {
                int d = tbits(yr[i]) != tbits(yk[i]), dsc = tbits(yr[i]) != tbits(other[i]);
                if ((d || dsc) && j->mismatched + j->mismatched_sc == 0) j->first_bad = tbits(x[i]);
                j->mismatched += (uint64_t)d;
                j->mismatched_sc += (uint64_t)dsc;
            }
            j->compared += n;
        }
        for (size_t i = 0; i < n && !j->bits_only; i++) {
            uint32_t u = tbits(x[i]);
            double d = (u & 0x7F800000u) == 0 ? (u >> 31 ? -0.0 : 0.0) : (double)x[i];
            double ex = j->f == SIN ? sin(d) : cos(d);
            double err = ulp_err(yr[i], ex);
            if (err > j->worst || (isnan(err) && !isnan(j->worst))) {
                j->worst = err;
                j->worst_at = u;
            }
        }
    }
    free(x);
    free(yr);
    free(yk);
    free(ys);
    free(yc);
    return NULL;
}

#if defined(DN_SWEEP_MPFR)
/* The worst case again, exactly: MPFR at 256 bits. */
static double mpfr_err(int f, uint32_t u, float ours)
{
    mpfr_t x, y, t;
    mpfr_inits2(256, x, y, t, (mpfr_ptr)0);
    float xf = tf(u);
    if ((u & 0x7F800000u) == 0) xf = u >> 31 ? -0.0f : 0.0f;
    mpfr_set_flt(x, xf, MPFR_RNDN);
    if (f == SIN)
        mpfr_sin(y, x, MPFR_RNDN);
    else
        mpfr_cos(y, x, MPFR_RNDN);
    double ex = mpfr_get_d(y, MPFR_RNDN), r;
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

/* One function over the inputs, on two threads; prints its line and
   returns 1 on a difference or an error over 1 ULP. */
static int sweep_one(int f, const dn_math_kernels *k, uint32_t below, uint64_t total, int bits_only)
{
    job jobs[2];
    pthread_t th[2];
    uint64_t stride = (UINT64_C(1) << 32) / total;
    for (int t = 0; t < 2; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].f = f;
        jobs[t].bits_only = bits_only;
        jobs[t].k = k;
        jobs[t].below = below;
        jobs[t].count = total / 2;
        jobs[t].stride = stride;
        jobs[t].start = (uint64_t)t * (total / 2) * stride;
        pthread_create(&th[t], NULL, work, &jobs[t]);
    }
    uint64_t compared = 0, mismatched = 0, mismatched_sc = 0;
    double worst = 0;
    uint32_t at = 0, first_bad = 0;
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
        compared += jobs[t].compared;
        if (jobs[t].mismatched + jobs[t].mismatched_sc && !(mismatched + mismatched_sc))
            first_bad = jobs[t].first_bad;
        mismatched += jobs[t].mismatched;
        mismatched_sc += jobs[t].mismatched_sc;
        if (jobs[t].worst > worst) {
            worst = jobs[t].worst;
            at = jobs[t].worst_at;
        }
    }
    float xw = tf(at), yw = f == SIN ? dn_sin(xw) : dn_cos(xw);
    printf("  %-4s %llu inputs, %llu compared: %s_v %llu differ, sincos_v %llu differ", names[f],
           (unsigned long long)total, (unsigned long long)compared, names[f],
           (unsigned long long)mismatched, (unsigned long long)mismatched_sc);
    if (mismatched + mismatched_sc) printf(" (first at input 0x%08X)", first_bad);
    int bad = mismatched + mismatched_sc != 0;
    if (bits_only) { /* nothing compared is a failure here */
        printf("; error not measured (--bits-only)\n");
        return bad || !k;
    }
    printf("; max error %.4f ULP at x = %a (0x%08X) -> %a", worst, xw, at, yw);
#if defined(DN_SWEEP_MPFR)
    printf(" [MPFR: %.4f]", mpfr_err(f, at, yw));
#endif
    printf("\n");
    return bad || !(worst <= 1.0);
}

int main(int argc, char **argv)
{
    int sample_bits = 32, want[COUNT] = {0}, any = 0, below_e = 128, bits_only = 0;
    const char *isa_arg = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sample") == 0 && i + 1 < argc)
            sample_bits = atoi(argv[++i]);
        else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc)
            isa_arg = argv[++i];
        else if (strcmp(argv[i], "--bits-only") == 0)
            bits_only = 1;
        else if (strcmp(argv[i], "--below") == 0 && i + 1 < argc)
            below_e = atoi(argv[++i]);
        else {
            int f = sweep_function(
                "sweep_trig", "[--sample K] [--below E] [--isa NAME] [--bits-only] [sin|cos]...",
                argv[i], names, COUNT);
            if (f < 0) return 2;
            want[f] = any = 1;
        }
    }
    if (sample_bits < 8 || sample_bits > 32) sample_bits = 32;
    if (below_e < -126 || below_e > 128) below_e = 128;
    uint32_t below = (uint32_t)(below_e + 127) << 23; /* 2^below_e; 128: +inf, NaNs excluded */
    if (below_e == 128) below = 0x80000000u;
    const dn_math_kernels *k = NULL;
    dn_isa isa;
    int status = sweep_choose_isa("sweep_trig", isa_arg, &isa);
    if (status) return status;
    if (isa != DN_ISA_SCALAR) k = dn_kernels_for(isa)->math;
    uint64_t total = UINT64_C(1) << sample_bits;
    printf("sweep_trig: %s inputs (%llu)%s, %s kernels vs the scalar reference%s\n",
           sample_bits == 32 ? "every binary32" : "sampled", (unsigned long long)total,
           below_e < 128 ? " folded below 2^E" : "", k ? dn_isa_name(isa) : "no SIMD",
           bits_only ? " (bits only)" : "; ULPs vs the correctly rounded value");
    if (below_e < 128) printf("  (|x| < 2^%d)\n", below_e);
    int bad = 0;
    for (int f = 0; f < COUNT; f++)
        if (!any || want[f]) bad |= sweep_one(f, k, below, total, bits_only);
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
