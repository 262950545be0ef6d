/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-math: ns per element of the transcendentals' array forms
 * and softmax over 4096 floats, on every ISA this CPU runs, with SLEEF's
 * Sleef_expf8_u10 / Sleef_logf8_u10 / Sleef_tanhf8_u10 (and the GELUs around
 * Sleef_tanhf8_u10 and Sleef_erff8_u10), on an AVX-512 CPU SLEEF's
 * Sleef_expf16_u10 / Sleef_logf16_u10 (bench/math_sleef512.c), and glibc
 * libmvec's AVX2 expf / logf measured in the same run, and the ratios
 * (ours / peer: below 1 is faster).
 *
 *   ./bench/decodenum-bench-math [--quick] [--cpu] [--min]
 *   ./bench/decodenum-bench-math --short      (arrays of 7 to 100 floats, and
 *                                             RoPE tables of 1, 4, 64 positions)
 *
 * Cases are sampled round-robin (one sample of every case, then the next),
 * so load from other processes falls on all of them alike; the figure is
 * the median of the samples (--min: the fastest). --cpu times this
 * thread's CPU time instead of the wall clock. Peers are optional: without libsleef-dev or
 * libmvec the bench says "not found" and skips them. Beside each time, the
 * cycles a vector of the case's lanes at the clock the run measures: what
 * to set against a kernel's instruction count per vector (docs/math.md,
 * "What bounds each kernel") and the core's issue width.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "decodenum.h"
#include "dispatch.h"
#include "isa.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(DN_BENCH_SLEEF)
#include <sleef.h>
#endif
#if defined(DN_BENCH_SLEEF512)
void dn_bench_sleef_expf16(const float *x, float *y, size_t n);
void dn_bench_sleef_logf16(const float *x, float *y, size_t n);
void dn_bench_sleef_tanhf16(const float *x, float *y, size_t n);
void dn_bench_sleef_gelu_tanh16(const float *x, float *y, size_t n);
void dn_bench_sleef_gelu16(const float *x, float *y, size_t n);
void dn_bench_sleef_sinf16(const float *x, float *y, size_t n);
void dn_bench_sleef_cosf16(const float *x, float *y, size_t n);
void dn_bench_sleef_sincosf16(const float *x, float *s, float *c, size_t n);
#endif
#if defined(DN_BENCH_MVEC)
__m256 _ZGVdN8v_expf(__m256 x);
__m256 _ZGVdN8v_logf(__m256 x);
#endif

#define N 4096

static float xin[N], xpos[N], xact[N], xsmall[N], yout[N];
static volatile float sink;

/* Wall time, or with --cpu this thread's CPU time (on a loaded machine a
   sample that was descheduled then costs nothing extra). */
static clockid_t clock_used = CLOCK_MONOTONIC;

/* --min: each case's fastest sample instead of the median (in-cache kernel
   tuning on a loaded machine: the fastest sample is the one least
   disturbed). */
static int use_min;

static double now(void)
{
    struct timespec t;
    clock_gettime(clock_used, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct bcase {
    char name[48];
    void (*fn)(struct bcase *c);
    dn_unary_kernel k;
    const dn_math_kernels *tab;
    const float *in;
    double t[64];
    int have;
    double med;
} bcase;

static void run_unary(bcase *c) { c->k(c->in, yout, N); }
static void run_softmax(bcase *c) { c->tab->softmax(c->in, yout, N); }
#if defined(DN_BENCH_SLEEF)
static void run_sleef_exp(bcase *c)
{
    for (size_t i = 0; i < N; i += 8)
        _mm256_storeu_ps(yout + i, Sleef_expf8_u10(_mm256_loadu_ps(c->in + i)));
}
static void run_sleef_log(bcase *c)
{
    for (size_t i = 0; i < N; i += 8)
        _mm256_storeu_ps(yout + i, Sleef_logf8_u10(_mm256_loadu_ps(c->in + i)));
}
/* The activations as SLEEF's u10 functions give them: tanh itself, and the
   GELUs by their usual formulas around Sleef_tanhf8_u10 and Sleef_erff8_u10
   (separate multiplies and adds, no FMA, as ours). */
static void run_sleef_tanh(bcase *c)
{
    for (size_t i = 0; i < N; i += 8)
        _mm256_storeu_ps(yout + i, Sleef_tanhf8_u10(_mm256_loadu_ps(c->in + i)));
}
static void run_sleef_gelu_tanh(bcase *c)
{
    const __m256 k = _mm256_set1_ps(0.7978845608f), a = _mm256_set1_ps(0.044715f);
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    for (size_t i = 0; i < N; i += 8) {
        __m256 x = _mm256_loadu_ps(c->in + i);
        __m256 u = _mm256_mul_ps(_mm256_mul_ps(k, x),
                                 _mm256_add_ps(one, _mm256_mul_ps(a, _mm256_mul_ps(x, x))));
        __m256 t = Sleef_tanhf8_u10(u);
        _mm256_storeu_ps(yout + i, _mm256_mul_ps(_mm256_mul_ps(half, x), _mm256_add_ps(one, t)));
    }
}
static void run_sleef_gelu(bcase *c)
{
    const __m256 r2 = _mm256_set1_ps(0.7071067812f);
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    for (size_t i = 0; i < N; i += 8) {
        __m256 x = _mm256_loadu_ps(c->in + i);
        __m256 e = Sleef_erff8_u10(_mm256_mul_ps(x, r2));
        _mm256_storeu_ps(yout + i, _mm256_mul_ps(_mm256_mul_ps(half, x), _mm256_add_ps(one, e)));
    }
}
#endif
#if defined(DN_BENCH_SLEEF512)
static void run_sleef512_exp(bcase *c) { dn_bench_sleef_expf16(c->in, yout, N); }
static void run_sleef512_log(bcase *c) { dn_bench_sleef_logf16(c->in, yout, N); }
static void run_sleef512_tanh(bcase *c) { dn_bench_sleef_tanhf16(c->in, yout, N); }
static void run_sleef512_gelu_tanh(bcase *c) { dn_bench_sleef_gelu_tanh16(c->in, yout, N); }
static void run_sleef512_gelu(bcase *c) { dn_bench_sleef_gelu16(c->in, yout, N); }
#endif
#if defined(DN_BENCH_MVEC)
static void run_mvec_exp(bcase *c)
{
    for (size_t i = 0; i < N; i += 8)
        _mm256_storeu_ps(yout + i, _ZGVdN8v_expf(_mm256_loadu_ps(c->in + i)));
}
static void run_mvec_log(bcase *c)
{
    for (size_t i = 0; i < N; i += 8)
        _mm256_storeu_ps(yout + i, _ZGVdN8v_logf(_mm256_loadu_ps(c->in + i)));
}
#endif

/* ---- sin, cos: ours on every ISA and SLEEF's u10, on |x| <= 10 and on
   |x| <= 2^20 (the angles of a RoPE table up to position 2^20) ---------- */

static float xtrig[N], xtrig_big[N], yout2[N];

static void run_sincos(bcase *c) { c->tab->sincos_v(c->in, yout, yout2, N); }

/* dn_rope_table's kernel: N entries, 64 positions uniform in [0, 2^20) by
   the 64 frequencies of theta 10^4 over 128 dimensions (cos and sin each) */
enum { ROPE_PAIRS = 64 };
static int32_t rope_pos[N / ROPE_PAIRS];
static float rope_w[ROPE_PAIRS];
static void run_rope_table(bcase *c)
{
    c->tab->rope_table(rope_pos, N / ROPE_PAIRS, rope_w, ROPE_PAIRS, yout, yout2);
}
#if defined(DN_BENCH_SLEEF512)
static void run_sleef512_sin(bcase *c) { dn_bench_sleef_sinf16(c->in, yout, N); }
static void run_sleef512_cos(bcase *c) { dn_bench_sleef_cosf16(c->in, yout, N); }
static void run_sleef512_sincos(bcase *c) { dn_bench_sleef_sincosf16(c->in, yout, yout2, N); }
#endif
#if defined(DN_BENCH_SLEEF)
static void run_sleef_sin(bcase *c)
{
    for (size_t i = 0; i < N; i += 8)
        _mm256_storeu_ps(yout + i, Sleef_sinf8_u10(_mm256_loadu_ps(c->in + i)));
}
static void run_sleef_cos(bcase *c)
{
    for (size_t i = 0; i < N; i += 8)
        _mm256_storeu_ps(yout + i, Sleef_cosf8_u10(_mm256_loadu_ps(c->in + i)));
}
static void run_sleef_sincos(bcase *c)
{
    for (size_t i = 0; i < N; i += 8) {
        Sleef___m256_2 r = Sleef_sincosf8_u10(_mm256_loadu_ps(c->in + i));
        _mm256_storeu_ps(yout + i, r.x);
        _mm256_storeu_ps(yout2 + i, r.y);
    }
}
#endif

static bcase *add_case(const char *name, void (*fn)(bcase *), dn_unary_kernel k,
                       const dn_math_kernels *tab, const float *in);

static void add_trig_cases(void)
{
    for (int i = 0; i < N; i++) {
        xtrig[i] = -10.0f + 20.0f * (float)rand() / (float)RAND_MAX;
        xtrig_big[i] = -0x1p20f + 0x1p21f * (float)rand() / (float)RAND_MAX;
    }
    for (int big = 0; big < 2; big++) {
        const float *in = big ? xtrig_big : xtrig;
        const char *tag = big ? " 2^20" : "";
        char name[48];
        for (int isa = DN_ISA_SCALAR; isa < DN_ISA_COUNT; isa++) {
            const dn_kernels *registered = dn_kernels_for((dn_isa)isa);
            if (!registered) continue;
            const dn_math_kernels *t = registered->math;
            snprintf(name, sizeof name, "%s sin_v%s", dn_isa_name((dn_isa)isa), tag);
            add_case(name, run_unary, t->sin_v, t, in);
            snprintf(name, sizeof name, "%s cos_v%s", dn_isa_name((dn_isa)isa), tag);
            add_case(name, run_unary, t->cos_v, t, in);
            snprintf(name, sizeof name, "%s sincos_v%s", dn_isa_name((dn_isa)isa), tag);
            add_case(name, run_sincos, NULL, t, in);
        }
#if defined(DN_BENCH_SLEEF)
        snprintf(name, sizeof name, "sleef Sleef_sinf8_u10%s", tag);
        add_case(name, run_sleef_sin, NULL, NULL, in);
        snprintf(name, sizeof name, "sleef Sleef_cosf8_u10%s", tag);
        add_case(name, run_sleef_cos, NULL, NULL, in);
        snprintf(name, sizeof name, "sleef Sleef_sincosf8_u10%s", tag);
        add_case(name, run_sleef_sincos, NULL, NULL, in);
#endif
#if defined(DN_BENCH_SLEEF512)
        if (!dn_kernels_for(DN_ISA_AVX512)) continue;
        snprintf(name, sizeof name, "sleef Sleef_sinf16_u10%s", tag);
        add_case(name, run_sleef512_sin, NULL, NULL, in);
        snprintf(name, sizeof name, "sleef Sleef_cosf16_u10%s", tag);
        add_case(name, run_sleef512_cos, NULL, NULL, in);
        snprintf(name, sizeof name, "sleef Sleef_sincosf16_u10%s", tag);
        add_case(name, run_sleef512_sincos, NULL, NULL, in);
#endif
    }
    for (int k = 0; k < N / ROPE_PAIRS; k++) rope_pos[k] = rand() % (1 << 20);
    if (dn_rope_freqs(10000.0f, 2 * ROPE_PAIRS, 1.0f, rope_w) != DN_OK) return;
    for (int isa = DN_ISA_SCALAR; isa < DN_ISA_COUNT; isa++) {
        const dn_kernels *registered = dn_kernels_for((dn_isa)isa);
        if (!registered) continue;
        char name[48];
        snprintf(name, sizeof name, "%s rope_table", dn_isa_name((dn_isa)isa));
        add_case(name, run_rope_table, NULL, registered->math, NULL);
    }
}

static void ratio(const char *ours, const char *peer);

/* The AVX-512 array forms against SLEEF's 16-lane u10 functions and
   against the AVX2 kernels of the same run. */
static void avx512_ratios(void)
{
    static const char *const fs[] = {"exp_v",   "ln_v",      "ln1p_v",      "recip_v",
                                     "rsqrt_v", "sigmoid_v", "silu_v",      "softplus_v",
                                     "softmax", "tanh_v",    "gelu_tanh_v", "gelu_v"};
    ratio("avx512 exp_v", "sleef Sleef_expf16_u10");
    ratio("avx512 tanh_v", "sleef Sleef_tanhf16_u10");
    ratio("avx512 tanh_v |x|<1/2", "sleef Sleef_tanhf16_u10 |x|<1/2");
    ratio("avx512 gelu_tanh_v", "sleef gelu_tanh (tanhf16_u10)");
    ratio("avx512 gelu_v", "sleef gelu (erff16_u10)");
    ratio("avx512 ln_v", "sleef Sleef_logf16_u10");
    ratio("avx512 sigmoid_v", "sleef Sleef_expf16_u10");
    ratio("avx512 silu_v", "sleef Sleef_expf16_u10");
    ratio("avx512 softplus_v", "sleef Sleef_expf16_u10");
    ratio("avx512 ln1p_v", "sleef Sleef_expf16_u10");
    ratio("avx512 softmax", "sleef Sleef_expf16_u10");
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        char ours[48], peer[48];
        snprintf(ours, sizeof ours, "avx512 %s", fs[i]);
        snprintf(peer, sizeof peer, "avx2 %s", fs[i]);
        ratio(ours, peer);
    }
}

static void trig_ratios(void)
{
    ratio("avx2 sin_v", "sleef Sleef_sinf8_u10");
    ratio("avx2 cos_v", "sleef Sleef_cosf8_u10");
    ratio("avx2 sincos_v", "sleef Sleef_sincosf8_u10");
    ratio("avx2 sin_v 2^20", "sleef Sleef_sinf8_u10 2^20");
    ratio("avx2 cos_v 2^20", "sleef Sleef_cosf8_u10 2^20");
    ratio("avx2 sincos_v 2^20", "sleef Sleef_sincosf8_u10 2^20");
    ratio("avx2 rope_table", "scalar rope_table");
    ratio("avx512 rope_table", "avx2 rope_table");
    static const char *const fs[] = {"sin", "cos", "sincos"};
    for (int big = 0; big < 2; big++)
        for (int f = 0; f < 3; f++) {
            const char *tag = big ? " 2^20" : "";
            char ours[48], peer[48];
            snprintf(ours, sizeof ours, "avx512 %s_v%s", fs[f], tag);
            snprintf(peer, sizeof peer, "sleef Sleef_%sf16_u10%s", fs[f], tag);
            ratio(ours, peer);
            snprintf(peer, sizeof peer, "avx2 %s_v%s", fs[f], tag);
            ratio(ours, peer);
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static bcase cases[96];
static int ncases;

static bcase *add_case(const char *name, void (*fn)(bcase *), dn_unary_kernel k,
                       const dn_math_kernels *tab, const float *in)
{
    bcase *c = &cases[ncases++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->fn = fn;
    c->k = k;
    c->tab = tab;
    c->in = in;
    return c;
}

/* The lanes of a case's vectors, from its name: our ISAs' widths, SLEEF's
   16-lane functions, else (SLEEF's 8-lane ones, libmvec's AVX2) 8. */
static int lanes_of(const char *name)
{
    static const struct {
        const char *prefix;
        int lanes;
    } isas[] = {{"scalar ", 1}, {"neon ", 4}, {"avx2 ", 8}, {"avx512 ", 16}};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
        if (strncmp(name, isas[i].prefix, strlen(isas[i].prefix)) == 0) return isas[i].lanes;
    return strstr(name, "16_u10") ? 16 : 8;
}

static double find(const char *name)
{
    for (int i = 0; i < ncases; i++)
        if (strcmp(cases[i].name, name) == 0) return cases[i].med;
    return 0;
}

static void ratio(const char *ours, const char *peer)
{
    double a = find(ours), b = find(peer);
    if (a > 0 && b > 0) printf("  %-22s / %-22s = %.2f\n", ours, peer, a / b);
}

/* Every ISA's array forms and softmax, then the peers. */
static void add_cases(void)
{
    static const char *const names[] = {"exp_v",   "ln_v",      "ln1p_v",      "recip_v",
                                        "rsqrt_v", "sigmoid_v", "silu_v",      "softplus_v",
                                        "softmax", "tanh_v",    "gelu_tanh_v", "gelu_v"};
    for (int isa = DN_ISA_SCALAR; isa < DN_ISA_COUNT; isa++) {
        const dn_kernels *registered = dn_kernels_for((dn_isa)isa);
        if (!registered) continue;
        const dn_math_kernels *t = registered->math;
        dn_unary_kernel ks[12] = {t->exp_v,   t->ln_v,      t->ln1p_v,      t->recip_v,
                                  t->rsqrt_v, t->sigmoid_v, t->silu_v,      t->softplus_v,
                                  NULL,       t->tanh_v,    t->gelu_tanh_v, t->gelu_v};
        for (int f = 0; f < 12; f++) {
            char name[48];
            snprintf(name, sizeof name, "%s %s", dn_isa_name((dn_isa)isa), names[f]);
            int positive = f == 1 || f == 2 || f == 3 || f == 4;
            if (f == 8)
                add_case(name, run_softmax, NULL, t, xin);
            else
                add_case(name, run_unary, ks[f], t, positive ? xpos : f > 8 ? xact : xin);
        }
        /* tanh as a logit soft cap reads it: every lane of most vectors below
           9/16, where the kernels stop after the polynomial */
        char name[48];
        snprintf(name, sizeof name, "%s tanh_v |x|<1/2", dn_isa_name((dn_isa)isa));
        add_case(name, run_unary, t->tanh_v, t, xsmall);
    }
#if defined(DN_BENCH_SLEEF)
    add_case("sleef Sleef_expf8_u10", run_sleef_exp, NULL, NULL, xin);
    add_case("sleef Sleef_logf8_u10", run_sleef_log, NULL, NULL, xpos);
    add_case("sleef Sleef_tanhf8_u10", run_sleef_tanh, NULL, NULL, xact);
    add_case("sleef Sleef_tanhf8_u10 |x|<1/2", run_sleef_tanh, NULL, NULL, xsmall);
    add_case("sleef gelu_tanh (tanhf8_u10)", run_sleef_gelu_tanh, NULL, NULL, xact);
    add_case("sleef gelu (erff8_u10)", run_sleef_gelu, NULL, NULL, xact);
#else
    printf("sleef: not found (install libsleef-dev)\n");
#endif
#if defined(DN_BENCH_SLEEF512)
    if (dn_kernels_for(DN_ISA_AVX512)) {
        add_case("sleef Sleef_expf16_u10", run_sleef512_exp, NULL, NULL, xin);
        add_case("sleef Sleef_logf16_u10", run_sleef512_log, NULL, NULL, xpos);
        add_case("sleef Sleef_tanhf16_u10", run_sleef512_tanh, NULL, NULL, xact);
        add_case("sleef Sleef_tanhf16_u10 |x|<1/2", run_sleef512_tanh, NULL, NULL, xsmall);
        add_case("sleef gelu_tanh (tanhf16_u10)", run_sleef512_gelu_tanh, NULL, NULL, xact);
        add_case("sleef gelu (erff16_u10)", run_sleef512_gelu, NULL, NULL, xact);
    }
#endif
#if defined(DN_BENCH_MVEC)
    add_case("libmvec expf (AVX2)", run_mvec_exp, NULL, NULL, xin);
    add_case("libmvec logf (AVX2)", run_mvec_log, NULL, NULL, xpos);
#else
    printf("libmvec: not found\n");
#endif
}

/* --short: ns a call of the loops whose fast paths take several vectors at
   once, on arrays of 7 to 100 floats (the tails after the last whole group:
   docs/math.md, "Short arrays"), every ISA, the fastest of 15 samples of
   20000 calls; sincos_v writes its cosines to a second buffer. */
static void short_arrays(void)
{
    static const char *const names[] = {"sin_v",  "cos_v",       "sincos_v", "tanh_v",
                                        "gelu_v", "gelu_tanh_v", "silu_v",   "sigmoid_v"};
    static const size_t lens[] = {7, 16, 63, 64, 100};
    static float c_out[128];
    printf("short arrays: ns a call (fastest of 15 samples of 20000 calls)\n  %-20s", "");
    for (size_t l = 0; l < 5; l++) printf(" n=%-6zu", lens[l]);
    printf("\n");
    for (int isa = DN_ISA_SCALAR + 1; isa < DN_ISA_COUNT; isa++) {
        const dn_kernels *registered = dn_kernels_for((dn_isa)isa);
        if (!registered) continue;
        const dn_math_kernels *t = registered->math;
        dn_unary_kernel ks[8] = {t->sin_v,  t->cos_v,       NULL,      t->tanh_v,
                                 t->gelu_v, t->gelu_tanh_v, t->silu_v, t->sigmoid_v};
        for (int f = 0; f < 8; f++) {
            printf("  %-7s %-12s", dn_isa_name((dn_isa)isa), names[f]);
            for (size_t l = 0; l < 5; l++) {
                double best = 1e30;
                for (int s = 0; s < 15; s++) {
                    double t0 = now();
                    for (int r = 0; r < 20000; r++) {
                        if (ks[f])
                            ks[f](xact, yout, lens[l]);
                        else
                            t->sincos_v(xact, yout, c_out, lens[l]);
                    }
                    double dt = (now() - t0) / 20000 * 1e9;
                    best = dt < best ? dt : best;
                }
                printf(" %8.1f", best);
            }
            printf("\n");
        }
    }
}

/* --short, dn_rope_table's kernels: ns a call for 1, 2, 3, 4 and 64
   positions (near 12345) of theta 10^4's 64 pairs (a decode step's row is
   one position; two or three are a few tokens decoded at once), the
   fastest of 15 samples of 2000 calls */
static void short_rope(void)
{
    static const size_t npos[] = {1, 2, 3, 4, 64};
    for (int k = 0; k < 64; k++) rope_pos[k] = 12345 + 777 * k;
    if (dn_rope_freqs(10000.0f, 2 * ROPE_PAIRS, 1.0f, rope_w) != DN_OK) return;
    printf("rope_table: ns a call, positions x 64 pairs\n  %-20s", "");
    for (size_t l = 0; l < 5; l++) printf(" %zux64    ", npos[l]);
    printf("\n");
    for (int isa = DN_ISA_SCALAR + 1; isa < DN_ISA_COUNT; isa++) {
        const dn_kernels *registered = dn_kernels_for((dn_isa)isa);
        if (!registered) continue;
        printf("  %-7s %-12s", dn_isa_name((dn_isa)isa), "rope_table");
        for (size_t l = 0; l < 5; l++) {
            double best = 1e30;
            for (int s = 0; s < 15; s++) {
                double t0 = now();
                for (int r = 0; r < 2000; r++)
                    registered->math->rope_table(rope_pos, npos[l], rope_w, ROPE_PAIRS, yout,
                                                 yout2);
                double dt = (now() - t0) / 2000 * 1e9;
                best = dt < best ? dt : best;
            }
            printf(" %8.1f", best);
        }
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    int quick = 0, short_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--short") == 0) short_only = 1;
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        if (strcmp(argv[i], "--cpu") == 0) clock_used = CLOCK_THREAD_CPUTIME_ID;
        if (strcmp(argv[i], "--min") == 0) use_min = 1;
    }
    int samples = quick ? 9 : 31;
    double target = quick ? 2e-3 : 10e-3; /* seconds per sample */
    srand(12345);
    for (int i = 0; i < N; i++) {
        xin[i] = -20.0f + 40.0f * (float)rand() / (float)RAND_MAX; /* exp, sigmoid, silu, softmax */
        xpos[i] = ldexpf(1.0f + (float)rand() / (float)RAND_MAX, rand() % 40 - 20); /* ln */
        xact[i] = -8.0f + 16.0f * (float)rand() / (float)RAND_MAX; /* tanh, the GELUs */
        xsmall[i] = xact[i] / 16.0f;
    }
    if (short_only) {
        short_arrays();
        short_rope();
        return 0;
    }
    const double ghz = bench_clock_ghz(0.05);
    printf("decodenum-bench-math: ns per element over %d floats, %s of %d samples;\n"
           "cycles a vector (1 lane scalar, 4 NEON, 8 AVX2 and SLEEF's f8, 16 AVX-512 and f16)\n"
           "at %.2f GHz (dependent integer adds)\n",
           N, use_min ? "minimum" : "median", samples, ghz);
    add_cases();
    add_trig_cases();
    /* calibrate: calls per sample */
    size_t reps[96];
    for (int i = 0; i < ncases; i++) {
        cases[i].fn(&cases[i]);
        double t0 = now();
        size_t r = 0;
        do {
            cases[i].fn(&cases[i]);
            r++;
        } while (now() - t0 < target / 4);
        reps[i] = r * 4;
    }
    for (int s = 0; s < samples; s++)
        for (int i = 0; i < ncases; i++) {
            double t0 = now();
            for (size_t r = 0; r < reps[i]; r++) cases[i].fn(&cases[i]);
            cases[i].t[cases[i].have++] = (now() - t0) / (double)reps[i] / N * 1e9;
            sink = yout[0];
        }
    for (int i = 0; i < ncases; i++) {
        qsort(cases[i].t, (size_t)cases[i].have, sizeof(double), cmp_double);
        cases[i].med = cases[i].t[use_min ? 0 : cases[i].have / 2];
        printf("  %-26s %8.3f ns/element %7.1f cycles/vector\n", cases[i].name, cases[i].med,
               cases[i].med * ghz * lanes_of(cases[i].name));
    }
    printf("ratios (ours / peer, same run; < 1 is faster):\n");
    ratio("avx2 exp_v", "sleef Sleef_expf8_u10");
    ratio("avx2 exp_v", "libmvec expf (AVX2)");
    ratio("avx2 ln_v", "sleef Sleef_logf8_u10");
    ratio("avx2 ln_v", "libmvec logf (AVX2)");
    ratio("avx2 sigmoid_v", "sleef Sleef_expf8_u10");
    ratio("avx2 silu_v", "sleef Sleef_expf8_u10");
    ratio("avx2 softplus_v", "sleef Sleef_expf8_u10");
    ratio("avx2 ln1p_v", "sleef Sleef_expf8_u10");
    ratio("avx2 softmax", "sleef Sleef_expf8_u10");
    ratio("avx2 tanh_v", "sleef Sleef_tanhf8_u10");
    ratio("avx2 tanh_v |x|<1/2", "sleef Sleef_tanhf8_u10 |x|<1/2");
    ratio("avx2 gelu_tanh_v", "sleef gelu_tanh (tanhf8_u10)");
    ratio("avx2 gelu_v", "sleef gelu (erff8_u10)");
    avx512_ratios();
    trig_ratios();
    return 0;
}
