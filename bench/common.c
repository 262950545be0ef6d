/* SPDX-License-Identifier: MIT */
/*
 * bench/common.c: timing, round-robin sampling, read-bandwidth kernels
 * (single thread and on a team of threads) and the run header, shared by the
 * decodenum benchmark programs. See common.h.
 */
#define _GNU_SOURCE /* madvise, pthread barriers, sched_getcpu */

#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "decodenum/common.h"

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
#define BENCH_X86 1
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#define BENCH_ARM64 1
#include <arm_neon.h>
#endif

static volatile uint64_t g_sink_u;

/* ---- timing ------------------------------------------------------------- */

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- read-bandwidth kernels --------------------------------------------- */

/* Portable: eight independent 64-bit accumulators (compilers vectorize it). */
static uint64_t read_c_u64(const void *p, size_t bytes)
{
    const uint64_t *q = p;
    size_t n = bytes / 8;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        s0 += q[i];
        s1 += q[i + 1];
        s2 += q[i + 2];
        s3 += q[i + 3];
        s4 += q[i + 4];
        s5 += q[i + 5];
        s6 += q[i + 6];
        s7 += q[i + 7];
    }
    return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
}

#if defined(BENCH_X86)
#define AVX2_FN __attribute__((target("avx2"), noinline))
#define AVX512_FN __attribute__((target("avx512f"), noinline))
/* The helpers are inlined: GCC leaves out the vzeroupper of a 256-bit
   helper reached by a tail call, and the SSE code of the caller then runs
   with dirty upper halves (measured: an L1-resident read 50% slower). */
#define AVX2_HELPER static inline __attribute__((target("avx2"), always_inline))

AVX2_HELPER uint64_t hsum256(__m256i v)
{
    uint64_t l[4];
    _mm256_storeu_si256((__m256i *)l, v);
    return l[0] + l[1] + l[2] + l[3];
}

/* ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) in 32-bit lanes, summed. */
AVX2_HELPER uint64_t fold8(__m256i a0, __m256i a1, __m256i a2, __m256i a3, __m256i a4, __m256i a5,
                           __m256i a6, __m256i a7)
{
    a0 = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)),
                          _mm256_add_epi32(_mm256_add_epi32(a4, a5), _mm256_add_epi32(a6, a7)));
    return hsum256(a0);
}

/* vpaddd over eight independent accumulators, 256 B per iteration. */
static AVX2_FN uint64_t read_avx2_int(const void *p, size_t bytes)
{
    const __m256i *q = p;
    size_t n = bytes / 32;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        a0 = _mm256_add_epi32(a0, _mm256_load_si256(q + i));
        a1 = _mm256_add_epi32(a1, _mm256_load_si256(q + i + 1));
        a2 = _mm256_add_epi32(a2, _mm256_load_si256(q + i + 2));
        a3 = _mm256_add_epi32(a3, _mm256_load_si256(q + i + 3));
        a4 = _mm256_add_epi32(a4, _mm256_load_si256(q + i + 4));
        a5 = _mm256_add_epi32(a5, _mm256_load_si256(q + i + 5));
        a6 = _mm256_add_epi32(a6, _mm256_load_si256(q + i + 6));
        a7 = _mm256_add_epi32(a7, _mm256_load_si256(q + i + 7));
    }
    return fold8(a0, a1, a2, a3, a4, a5, a6, a7);
}

/* vaddps over eight independent accumulators. */
static AVX2_FN uint64_t read_avx2_float(const void *p, size_t bytes)
{
    const float *q = p;
    size_t n = bytes / 4;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t i = 0; i + 64 <= n; i += 64) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(q + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(q + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(q + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(q + i + 24));
        a4 = _mm256_add_ps(a4, _mm256_load_ps(q + i + 32));
        a5 = _mm256_add_ps(a5, _mm256_load_ps(q + i + 40));
        a6 = _mm256_add_ps(a6, _mm256_load_ps(q + i + 48));
        a7 = _mm256_add_ps(a7, _mm256_load_ps(q + i + 56));
    }
    a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                       _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    return hsum256(_mm256_castps_si256(a0));
}

/* Two streams (first and second half, as fdot reads a and b), vpaddd;
   with `prefetch`, software prefetch 512 B ahead in each. Inlined into the
   two kernels below with a constant flag, so neither tests it at run time. */
static inline __attribute__((target("avx2"), always_inline)) uint64_t
two_streams(const void *p, size_t bytes, int prefetch)
{
    const __m256i *q = p, *r = (const __m256i *)((const char *)p + bytes / 2);
    size_t n = bytes / 64;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        if (prefetch) {
            _mm_prefetch((const char *)(q + i) + 512, _MM_HINT_T0);
            _mm_prefetch((const char *)(q + i) + 576, _MM_HINT_T0);
            _mm_prefetch((const char *)(r + i) + 512, _MM_HINT_T0);
            _mm_prefetch((const char *)(r + i) + 576, _MM_HINT_T0);
        }
        a0 = _mm256_add_epi32(a0, _mm256_load_si256(q + i));
        a1 = _mm256_add_epi32(a1, _mm256_load_si256(r + i));
        a2 = _mm256_add_epi32(a2, _mm256_load_si256(q + i + 1));
        a3 = _mm256_add_epi32(a3, _mm256_load_si256(r + i + 1));
        a4 = _mm256_add_epi32(a4, _mm256_load_si256(q + i + 2));
        a5 = _mm256_add_epi32(a5, _mm256_load_si256(r + i + 2));
        a6 = _mm256_add_epi32(a6, _mm256_load_si256(q + i + 3));
        a7 = _mm256_add_epi32(a7, _mm256_load_si256(r + i + 3));
    }
    return fold8(a0, a1, a2, a3, a4, a5, a6, a7);
}

static AVX2_FN uint64_t read_avx2_2stream(const void *p, size_t bytes)
{
    return two_streams(p, bytes, 0);
}
static AVX2_FN uint64_t read_avx2_2stream_pf(const void *p, size_t bytes)
{
    return two_streams(p, bytes, 1);
}

/* Four streams (the four quarters), vpaddd, two accumulators per stream. */
static AVX2_FN uint64_t read_avx2_4stream(const void *p, size_t bytes)
{
    const __m256i *q0 = p, *q1 = q0 + bytes / 128, *q2 = q1 + bytes / 128, *q3 = q2 + bytes / 128;
    size_t n = bytes / 128;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0;
    for (size_t i = 0; i + 2 <= n; i += 2) {
        a0 = _mm256_add_epi32(a0, _mm256_load_si256(q0 + i));
        a1 = _mm256_add_epi32(a1, _mm256_load_si256(q1 + i));
        a2 = _mm256_add_epi32(a2, _mm256_load_si256(q2 + i));
        a3 = _mm256_add_epi32(a3, _mm256_load_si256(q3 + i));
        a4 = _mm256_add_epi32(a4, _mm256_load_si256(q0 + i + 1));
        a5 = _mm256_add_epi32(a5, _mm256_load_si256(q1 + i + 1));
        a6 = _mm256_add_epi32(a6, _mm256_load_si256(q2 + i + 1));
        a7 = _mm256_add_epi32(a7, _mm256_load_si256(q3 + i + 1));
    }
    return fold8(a0, a1, a2, a3, a4, a5, a6, a7);
}

/* vpaddd on 512-bit loads, eight accumulators, 512 B per iteration. */
static AVX512_FN uint64_t read_avx512_int(const void *p, size_t bytes)
{
    const __m512i *q = p;
    size_t n = bytes / 64;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        a0 = _mm512_add_epi32(a0, _mm512_load_si512(q + i));
        a1 = _mm512_add_epi32(a1, _mm512_load_si512(q + i + 1));
        a2 = _mm512_add_epi32(a2, _mm512_load_si512(q + i + 2));
        a3 = _mm512_add_epi32(a3, _mm512_load_si512(q + i + 3));
        a4 = _mm512_add_epi32(a4, _mm512_load_si512(q + i + 4));
        a5 = _mm512_add_epi32(a5, _mm512_load_si512(q + i + 5));
        a6 = _mm512_add_epi32(a6, _mm512_load_si512(q + i + 6));
        a7 = _mm512_add_epi32(a7, _mm512_load_si512(q + i + 7));
    }
    a0 = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                          _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
    uint32_t l[16]; /* not _mm512_reduce_add_epi32: GCC's adds signed ints, which may overflow */
    _mm512_storeu_si512(l, a0);
    uint64_t s = 0;
    for (int i = 0; i < 16; i++) s += l[i];
    return s;
}
#endif /* BENCH_X86 */

#if defined(BENCH_ARM64)
/* 128-bit loads into eight independent integer accumulators. */
static uint64_t read_neon_int(const void *p, size_t bytes)
{
    const uint32_t *q = p;
    size_t n = bytes / 4;
    uint32x4_t a0 = vdupq_n_u32(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t i = 0; i + 32 <= n; i += 32) {
        a0 = vaddq_u32(a0, vld1q_u32(q + i));
        a1 = vaddq_u32(a1, vld1q_u32(q + i + 4));
        a2 = vaddq_u32(a2, vld1q_u32(q + i + 8));
        a3 = vaddq_u32(a3, vld1q_u32(q + i + 12));
        a4 = vaddq_u32(a4, vld1q_u32(q + i + 16));
        a5 = vaddq_u32(a5, vld1q_u32(q + i + 20));
        a6 = vaddq_u32(a6, vld1q_u32(q + i + 24));
        a7 = vaddq_u32(a7, vld1q_u32(q + i + 28));
    }
    a0 = vaddq_u32(vaddq_u32(vaddq_u32(a0, a1), vaddq_u32(a2, a3)),
                   vaddq_u32(vaddq_u32(a4, a5), vaddq_u32(a6, a7)));
    return vaddvq_u32(a0);
}
#endif

/* ---- the read kernels this CPU runs ----------------------------------------- */

typedef struct read_kernel {
    const char *name;
    read_fn fn;
} read_kernel;

static read_kernel g_kernels[8];
static int g_nkernels = -1;

static void init_kernels(void)
{
    if (g_nkernels >= 0) return;
    int n = 0;
    g_kernels[n++] = (read_kernel){"c-u64x8", read_c_u64};
#if defined(BENCH_X86)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        g_kernels[n++] = (read_kernel){"avx2-int", read_avx2_int};
        g_kernels[n++] = (read_kernel){"avx2-flt", read_avx2_float};
        g_kernels[n++] = (read_kernel){"avx2-2str", read_avx2_2stream};
        g_kernels[n++] = (read_kernel){"avx2-2s-pf", read_avx2_2stream_pf};
        g_kernels[n++] = (read_kernel){"avx2-4str", read_avx2_4stream};
    }
    if (__builtin_cpu_supports("avx512f"))
        g_kernels[n++] = (read_kernel){"avx512", read_avx512_int};
#endif
#if defined(BENCH_ARM64)
    g_kernels[n++] = (read_kernel){"neon-int", read_neon_int};
#endif
    g_nkernels = n;
}

int bench_read_kernel_count(void)
{
    init_kernels();
    return g_nkernels;
}

const char *bench_read_kernel_name(int i)
{
    init_kernels();
    return i >= 0 && i < g_nkernels ? g_kernels[i].name : NULL;
}

read_fn bench_read_kernel(int i)
{
    init_kernels();
    return i >= 0 && i < g_nkernels ? g_kernels[i].fn : NULL;
}

/* ---- cases -------------------------------------------------------------- */

double bench_sample(bench_case *c)
{
    double t0 = now_s();
    for (size_t r = 0; r < c->reps; r++) c->call(c);
    return (now_s() - t0) / (double)c->reps;
}

void bench_calibrate(bench_case *c, double warm, double target)
{
    size_t calls = 0;
    double t0 = now_s(), t;
    do {
        c->call(c);
        calls++;
        t = now_s() - t0;
    } while (t < warm);
    double per = t / (double)calls;
    double reps = target / per;
    c->reps = reps < 1.0 ? 1 : (size_t)reps;
}

/* Rounds over cs[0..count): in the given order, or (shuffle) in a new
   order every round, a Fisher-Yates permutation from bench_lcg. */
static void run_rounds(bench_case *cs, int count, int shuffle)
{
    int order[BENCH_MAX_GROUP];
    uint32_t s = 12345u;
    for (int i = 0; i < count; i++) order[i] = i;
    for (int more = 1; more;) {
        more = 0;
        for (int i = count - 1; shuffle && i > 0; i--) {
            int j = (int)((uint64_t)(bench_lcg(&s) >> 8) * (uint64_t)(i + 1) >> 24);
            int tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        for (int i = 0; i < count; i++) {
            bench_case *c = &cs[order[i]];
            if (c->have < c->want) {
                c->t[c->have++] = bench_sample(c);
                more |= c->have < c->want;
            }
        }
    }
}

static void summarize(bench_case *cs, int count)
{
    for (int i = 0; i < count; i++) {
        bench_case *c = &cs[i];
        double tmp[BENCH_MAX_SAMPLES];
        memcpy(tmp, c->t, sizeof(double) * (size_t)c->have);
        c->med = median(tmp, c->have);
        c->best = tmp[0];
    }
}

void bench_run_group(bench_case *cs, int count)
{
    run_rounds(cs, count, 0);
    summarize(cs, count);
}

void bench_run_group_shuffled(bench_case *cs, int count)
{
    run_rounds(cs, count, 1);
    summarize(cs, count);
}

double bench_gbps(const bench_case *c, double secs) { return c->bytes / secs * 1e-9; }

void bench_ratio(const bench_case *x, const bench_case *y, double *of_medians, double *paired)
{
    double r[BENCH_MAX_SAMPLES];
    int n = x->have < y->have ? x->have : y->have;
    for (int s = 0; s < n; s++) r[s] = (x->bytes / x->t[s]) / (y->bytes / y->t[s]);
    *paired = median(r, n);
    *of_medians = (x->bytes / x->med) / (y->bytes / y->med);
}

/* ---- a team of reading threads ------------------------------------------------ */

typedef struct team_slot {
    bench_team *team;
    unsigned index;
    uint64_t sum;
    char pad[64];
} team_slot;

struct bench_team {
    unsigned threads;
    pthread_t *workers; /* threads - 1 */
    team_slot *slots;   /* one per thread; slot 0 is the caller's */
    pthread_barrier_t start, done;
    read_fn rd;
    const char *p;
    size_t slice;
    int stop;
};

static void *team_worker(void *arg)
{
    team_slot *s = arg;
    bench_team *t = s->team;
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->stop) return NULL;
        s->sum = t->rd(t->p + s->index * t->slice, t->slice);
        pthread_barrier_wait(&t->done);
    }
}

bench_team *bench_team_create(unsigned threads)
{
    if (threads == 0) return NULL;
    bench_team *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->threads = threads;
    t->slots = calloc(threads, sizeof *t->slots);
    t->workers = calloc(threads, sizeof *t->workers);
    if (!t->slots || !t->workers) goto fail;
    for (unsigned i = 0; i < threads; i++) t->slots[i] = (team_slot){t, i, 0, {0}};
    if (threads == 1) return t;
    if (pthread_barrier_init(&t->start, NULL, threads)) goto fail;
    if (pthread_barrier_init(&t->done, NULL, threads)) {
        pthread_barrier_destroy(&t->start);
        goto fail;
    }
    for (unsigned i = 1; i < threads; i++) {
        /* On failure the workers already started wait on a barrier that can
           no longer fill; they and the team are left asleep (a benchmark
           program reports the failure and goes on or exits). */
        if (pthread_create(&t->workers[i - 1], NULL, team_worker, &t->slots[i])) return NULL;
    }
    return t;
fail:
    free(t->slots);
    free(t->workers);
    free(t);
    return NULL;
}

void bench_team_destroy(bench_team *t)
{
    if (!t) return;
    if (t->threads > 1) {
        t->stop = 1;
        pthread_barrier_wait(&t->start);
        for (unsigned i = 1; i < t->threads; i++) pthread_join(t->workers[i - 1], NULL);
        pthread_barrier_destroy(&t->start);
        pthread_barrier_destroy(&t->done);
    }
    free(t->slots);
    free(t->workers);
    free(t);
}

unsigned bench_team_threads(const bench_team *t) { return t ? t->threads : 1; }

uint64_t bench_team_read(bench_team *t, read_fn rd, const void *p, size_t bytes)
{
    if (t->threads == 1) return rd(p, bytes);
    t->rd = rd;
    t->p = p;
    t->slice = bytes / t->threads / 4096 * 4096;
    pthread_barrier_wait(&t->start);
    uint64_t sum = rd(p, t->slice);
    pthread_barrier_wait(&t->done);
    for (unsigned i = 1; i < t->threads; i++) sum += t->slots[i].sum;
    return sum;
}

/* ---- read cases and the best of them ------------------------------------------- */

static void call_read(bench_case *c)
{
    bench_team *t = c->ctx;
    g_sink_u =
        t ? bench_team_read(t, c->rd, c->a, (size_t)c->bytes) : c->rd(c->a, (size_t)c->bytes);
}

int bench_add_read_cases(bench_case *cs, int at, bench_team *team, const void *p, size_t bytes,
                         int want)
{
    for (int i = 0; i < bench_read_kernel_count(); i++)
        cs[at++] = (bench_case){.op = "read",
                                .impl = g_kernels[i].name,
                                .call = call_read,
                                .ctx = team,
                                .rd = g_kernels[i].fn,
                                .a = p,
                                .n = bytes / sizeof(float),
                                .bytes = (double)bytes,
                                .reps = 1,
                                .want = want};
    return at;
}

int bench_best_case(const bench_case *cs, int first, int end)
{
    int best = first;
    for (int i = first + 1; i < end; i++)
        if (bench_gbps(&cs[i], cs[i].med) > bench_gbps(&cs[best], cs[best].med)) best = i;
    return best;
}

bench_bw bench_read_best(const void *p, size_t bytes, unsigned threads, int samples)
{
    bench_bw bw = {"none", 0.0, 0.0};
    bench_case cs[16];
    bench_team *team = threads > 1 ? bench_team_create(threads) : NULL;
    if (threads > 1 && !team) return bw;
    if (samples > BENCH_MAX_SAMPLES) samples = BENCH_MAX_SAMPLES;
    int n = bench_add_read_cases(cs, 0, team, p, bytes, samples < 1 ? 1 : samples);
    for (int i = 0; i < n; i++) bench_calibrate(&cs[i], 0.0, 0.0);
    bench_run_group(cs, n);
    int b = bench_best_case(cs, 0, n);
    bw = (bench_bw){cs[b].impl, bench_gbps(&cs[b], cs[b].med), bench_gbps(&cs[b], cs[b].best)};
    bench_team_destroy(team);
    return bw;
}

/* ---- the machine ------------------------------------------------------------ */

/* A dependent chain of register-register integer adds retires one per cycle:
   its rate is the core clock while the bench runs (turbo included). Adds of
   an immediate are not used: recent x86 cores fold chains of those at
   rename. */
double bench_clock_ghz(double secs)
{
#if defined(BENCH_X86) || defined(BENCH_ARM64)
    uint64_t x = 0, y = (uint64_t)g_sink_u | 1; /* opaque to the compiler */
    const uint64_t iters = 1u << 20;
    double best = 0.0, t_end = now_s() + secs;
    do {
        double t0 = now_s();
        for (uint64_t i = 0; i < iters; i++) {
#if defined(BENCH_X86)
            __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                             "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                             : "+r"(x)
                             : "r"(y));
#else
            __asm__ volatile(
                "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
                "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1"
                : "+r"(x)
                : "r"(y));
#endif
        }
        double g = 8.0 * (double)iters / (now_s() - t0) * 1e-9;
        if (g > best) best = g;
    } while (now_s() < t_end);
    g_sink_u = x;
    return best;
#else
    (void)secs;
    return 0.0;
#endif
}

static void cpu_name(char *out, size_t size)
{
    snprintf(out, size, "unknown");
#if defined(__linux__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10) || !strncmp(line, "Model", 5)) {
            char *v = strchr(line, ':');
            if (!v) continue;
            v++;
            while (*v == ' ' || *v == '\t') v++;
            v[strcspn(v, "\n")] = 0;
            snprintf(out, size, "%s", v);
            break;
        }
    }
    fclose(f);
#endif
}

const char *bench_env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v ? v : dflt;
}

void bench_print_command(const char *title, int argc, char **argv, const char *const *envs,
                         size_t nenvs)
{
    printf("%s (libdecodenum %s)\ncommand:", title, dn_version_string());
    for (size_t i = 0; i < nenvs; i++)
        if (getenv(envs[i])) printf(" %s=%s", envs[i], getenv(envs[i]));
    for (int i = 0; i < argc; i++) printf(" %s", argv[i]);
    printf("\n");
}

void bench_print_machine(double ghz)
{
    char cpu[256];
    cpu_name(cpu, sizeof cpu);
    long ncpu = -1;
#if defined(__linux__)
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    printf("cpu: %s, %ld online", cpu, ncpu);
    if (ghz > 0) printf(", clock ~%.2f GHz (dependent integer adds)", ghz);
    printf("\n");
#if defined(__VERSION__)
    printf("compiler: %s\n", __VERSION__);
#endif
    printf("decodenum: active isa %s (%s)\n", dn_isa_name(dn_isa_active()), dn_isa_note());
    char thp[128] = "n/a";
#if defined(__linux__)
    FILE *tf = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (tf) {
        if (fgets(thp, sizeof thp, tf)) thp[strcspn(thp, "\n")] = 0;
        fclose(tf);
    }
#endif
    printf("buffers: 2 MiB aligned, MADV_HUGEPAGE; transparent hugepages: %s\n", thp);
#if defined(__linux__)
    /* The CPUs of a guest need not be alike: on the 2-vCPU guest of the
       module pages, one ran the attention kernels 1.35-1.6x slower than the
       other (docs/bench-notes.md, "The host"), so a one-thread comparison
       says where it ran and whether it was pinned (taskset -c). */
    cpu_set_t set;
    int allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    printf("main thread: on cpu %d, may run on %d of them%s\n", sched_getcpu(), allowed,
           allowed == 1 ? " (pinned)" : "");
#endif
}

void bench_print_load(void)
{
#if defined(__linux__)
    char buf[128];
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    if (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        printf("load: %s (/proc/loadavg: 1, 5, 15 min; running/threads; last pid)\n", buf);
    }
    fclose(f);
#endif
}

int bench_parse_args(int argc, char **argv, int *quick, void (*usage)(const char *argv0))
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            *quick = 1;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(argv[0]);
            return 0;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", argv[0], argv[i]);
            usage(argv[0]);
            return 2;
        }
    }
    return -1;
}

/* ---- buffers and data ---------------------------------------------------------- */

void *bench_alloc(size_t bytes)
{
    const size_t align = (size_t)2 << 20; /* 2 MiB: lets THP back the buffer */
    bytes = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, bytes ? bytes : align);
    if (!p) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void bench_print_read_pairs(const bench_case *cs, int first1, int first2)
{
    printf("    %-10s %15s %15s\n", "kernel", "1 thread", "2 threads");
    for (int i = 0; i < first2 - first1; i++) {
        const bench_case *a = &cs[first1 + i], *b = &cs[first2 + i];
        printf("    %-10s %7.2f / %5.2f %7.2f / %5.2f\n", a->impl, bench_gbps(a, a->med),
               bench_gbps(a, a->best), bench_gbps(b, b->med), bench_gbps(b, b->best));
    }
}

void bench_fill(float *x, size_t n, uint32_t seed)
{
    uint32_t s = seed;
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((int32_t)(bench_lcg(&s) >> 8) - (1 << 23)) * (1.0f / (float)(1 << 23));
}

uint32_t bench_bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
