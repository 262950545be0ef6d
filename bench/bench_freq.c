/* SPDX-License-Identifier: MIT */
/*
 * decodenum-bench-freq: does 512-bit code lower this CPU's clock?
 *
 * Some x86 cores (Intel's Skylake-SP to Ice Lake) drop to a lower frequency
 * licence while they run heavy 512-bit instructions, and stay there for a
 * while after: scalar work beside or after an AVX-512 kernel then runs
 * slower, and a kernel can lose more than its width gains. Others (AMD Zen 4,
 * Intel Sapphire Rapids) keep their clock. This program measures it on the
 * host, with the clock read as the rate of dependent integer adds (one per
 * cycle) over the thread's own CPU time, so a thread that the scheduler
 * parks is not counted as slow; each figure is the best of its samples.
 *
 *  - scalar alone: the adds on one thread, the other thread idle;
 *  - beside: the adds while a second thread runs 256-bit (AVX2) or 512-bit
 *    (AVX-512F) FMA chains without a pause (the "product on the other core");
 *  - after, same thread: the adds in the first ~20 us after 2 ms of 256-bit
 *    or 512-bit FMA chains on the same thread (the licence's hysteresis);
 *    the 256-bit case is the control (the short sample reads low by the
 *    timer's own cost), so the figure to read is 512 over 256;
 *  - the FMA chains' own rate, as flops of the 512-bit form over the 256-bit
 *    one: 2 where the core has full-width 512-bit units and keeps its clock,
 *    1 where it runs a 512-bit operation as two 256-bit halves.
 *
 *   ./bench/decodenum-bench-freq [--quick]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "common.h"

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
#define FREQ_X86 1
#include <immintrin.h>

static volatile uint32_t g_sink_u; /* keeps the chains' results alive */

static double thread_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Dependent adds: one a cycle. GHz over `iters` x 8 adds. */
static double adds_ghz(uint64_t iters)
{
    uint64_t x = 0, y = (uint64_t)iters | 1;
    double t0 = thread_s();
    for (uint64_t i = 0; i < iters; i++)
        __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(x)
                         : "r"(y));
    double t = thread_s() - t0;
    return t > 0 ? 8.0 * (double)iters / t * 1e-9 : 0.0;
}

/* Eight independent FMA chains for `secs` of thread time; FMAs per ns. */
__attribute__((target("avx2,fma"), noinline)) static double fma256(double secs)
{
    __m256 a[8], m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (int k = 0; k < 8; k++) a[k] = _mm256_set1_ps((float)k);
    uint64_t n = 0;
    double t0 = thread_s(), t;
    do {
        for (int i = 0; i < 16384; i++)
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++) a[k] = _mm256_fmadd_ps(a[k], m, c);
        n += 16384 * 8;
    } while ((t = thread_s() - t0) < secs);
    for (int k = 1; k < 8; k++) a[0] = _mm256_add_ps(a[0], a[k]);
    g_sink_u ^= (uint32_t)_mm256_cvtss_f32(a[0]);
    return (double)n / t * 1e-9;
}

__attribute__((target("avx512f"), noinline)) static double fma512(double secs)
{
    __m512 a[8], m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (int k = 0; k < 8; k++) a[k] = _mm512_set1_ps((float)k);
    uint64_t n = 0;
    double t0 = thread_s(), t;
    do {
        for (int i = 0; i < 16384; i++)
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++) a[k] = _mm512_fmadd_ps(a[k], m, c);
        n += 16384 * 8;
    } while ((t = thread_s() - t0) < secs);
    for (int k = 1; k < 8; k++) a[0] = _mm512_add_ps(a[0], a[k]);
    g_sink_u ^= (uint32_t)_mm512_reduce_add_ps(a[0]);
    return (double)n / t * 1e-9;
}

static double best_adds(int samples)
{
    double best = 0;
    for (int s = 0; s < samples; s++) {
        double g = adds_ghz(1u << 18);
        if (g > best) best = g;
    }
    return best;
}

/* The adds right after `width`-bit FMA chains on the same thread. */
static double adds_after(int width, int samples)
{
    double best = 0;
    for (int s = 0; s < samples; s++) {
        if (width == 512)
            fma512(2e-3);
        else
            fma256(2e-3);
        double g = adds_ghz(1u << 13); /* 65536 adds, ~20 us */
        if (g > best) best = g;
    }
    return best;
}

typedef struct busy {
    atomic_int stop;
    int width;
} busy;

static void *busy_main(void *arg)
{
    busy *b = arg;
    while (!atomic_load(&b->stop)) b->width == 512 ? fma512(1e-3) : fma256(1e-3);
    return NULL;
}

/* The adds while another thread runs `width`-bit FMA chains (0: idle). */
static double adds_beside(int width, int samples)
{
    busy b = {0, width};
    pthread_t th;
    if (width && pthread_create(&th, NULL, busy_main, &b) != 0) return 0.0;
    double g = best_adds(samples);
    if (width) {
        atomic_store(&b.stop, 1);
        pthread_join(th, NULL);
    }
    return g;
}
#endif

static void usage(const char *argv0)
{
    printf("usage: %s [--quick]\n"
           "  whether 512-bit FMA code lowers the clock: scalar integer adds alone, beside\n"
           "  another thread's 256-bit or 512-bit FMA chains, and right after them on the same\n"
           "  thread; the FMA chains' own rates.\n",
           argv0);
}

int main(int argc, char **argv)
{
    int quick = 0;
    int rc = bench_parse_args(argc, argv, &quick, usage);
    if (rc >= 0) return rc;
    bench_print_command("decodenum-bench-freq", argc, argv, NULL, 0);
    bench_print_machine(bench_clock_ghz(0.05));
    bench_print_load();
#if defined(FREQ_X86)
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx2")) {
        printf("this CPU has no AVX-512F: nothing to measure\n");
        return 0;
    }
    int n = quick ? 40 : 200;
    double alone = 0, b256 = 0, b512 = 0, a256 = 0, a512 = 0, f256 = 0, f512 = 0;
    for (int round = 0; round < 3; round++) { /* interleaved, so drift hits every case */
        alone = fmax(alone, adds_beside(0, n));
        b256 = fmax(b256, adds_beside(256, n));
        b512 = fmax(b512, adds_beside(512, n));
        a256 = fmax(a256, adds_after(256, n));
        a512 = fmax(a512, adds_after(512, n));
        f256 = fmax(f256, fma256(quick ? 0.02 : 0.1));
        f512 = fmax(f512, fma512(quick ? 0.02 : 0.1));
    }
    printf("\nclock read as dependent integer adds per ns of thread time (best of %d x 3):\n", n);
    printf("  scalar alone                          %6.3f GHz\n", alone);
    printf("  beside 256-bit FMA chains (thread 2)  %6.3f GHz  %.3f of alone\n", b256,
           b256 / alone);
    printf("  beside 512-bit FMA chains (thread 2)  %6.3f GHz  %.3f of alone\n", b512,
           b512 / alone);
    printf("  after 2 ms of 256-bit FMA, same thread %5.3f GHz  %.3f of alone\n", a256,
           a256 / alone);
    printf("  after 2 ms of 512-bit FMA, same thread %5.3f GHz  %.3f of alone, %.3f of after "
           "256-bit\n",
           a512, a512 / alone, a512 / a256);
    printf("FMA chains: 256-bit %.3f, 512-bit %.3f instructions per ns; flops 512 over 256: %.3f\n"
           "  (2 with full-width 512-bit FMA units at one clock; 1 where a 512-bit operation\n"
           "  runs as two 256-bit halves)\n",
           f256, f512, 2.0 * f512 / f256);
#else
    printf("not an x86-64 build: nothing to measure\n");
#endif
    return 0;
}
