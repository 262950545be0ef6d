/* SPDX-License-Identifier: MIT */
/*
 * bench/peak.c: what one core's vector units do at most, measured
 * (common.h, "measured peaks"). A kernel's rate over the peak of the
 * instruction it is built on says how near it runs to the core's limit, and
 * a memory-bound product's rate over its own rate in L2 how much of its time
 * the memory takes: the benches print both beside the read bandwidth.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_THREAD_CPUTIME_ID */
#include <time.h>

#include "common.h"

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#if defined(__x86_64__)
/* Twelve independent accumulators, one instruction each per step (more than
   latency x throughput on current cores, so the ports are the limit), in
   assembly: written in C with an empty asm per accumulator, GCC kept the
   array in memory and the loop ran at half the instruction's throughput.
   The registers start at zero: left-over bits can be denormal operands, and
   a floating-point loop over them ran 3.6 times slower on the Zen 5 guest
   (microcode assists). */
#define PEAK_R(op, r, k) op " %%" r "13, %%" r "12, %%" r #k "\n\t"
#define PEAK_4(op, r, a, b, c, d) \
    PEAK_R(op, r, a) PEAK_R(op, r, b) PEAK_R(op, r, c) PEAK_R(op, r, d)
#define PEAK_12(op, r) \
    PEAK_4(op, r, 0, 1, 2, 3) PEAK_4(op, r, 4, 5, 6, 7) PEAK_4(op, r, 8, 9, 10, 11)
/* Six multiplies and six adds a step, alternated, each independent of the
   others (register k = 12 op 13): the rate of a kernel that must round each
   product before adding it, so cannot use an FMA. */
#define MIX_4(m, a, r, w, x, y, z) PEAK_R(m, r, w) PEAK_R(a, r, x) PEAK_R(m, r, y) PEAK_R(a, r, z)
#define MIX_12(m, a, r) \
    MIX_4(m, a, r, 0, 1, 2, 3) MIX_4(m, a, r, 4, 5, 6, 7) MIX_4(m, a, r, 8, 9, 10, 11)
#define ZERO_4(r, a, b, c, d)                      \
    "vpxor %%" r #a ", %%" r #a ", %%" r #a "\n\t" \
    "vpxor %%" r #b ", %%" r #b ", %%" r #b "\n\t" \
    "vpxor %%" r #c ", %%" r #c ", %%" r #c "\n\t" \
    "vpxor %%" r #d ", %%" r #d ", %%" r #d "\n\t"
#define ZERO_14(r) \
    ZERO_4(r, 0, 1, 2, 3) ZERO_4(r, 4, 5, 6, 7) ZERO_4(r, 8, 9, 10, 11) ZERO_4(r, 12, 13, 12, 13)
#define PEAK_CLOBBERS                                                                        \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
        "xmm11", "xmm12", "xmm13", "cc"
/* ymm registers zeroed by a VEX vpxor clear the whole zmm register */
#define PEAK_LOOP(name, target_, op, r)                                            \
    __attribute__((target(target_))) static void name(size_t steps)                \
    {                                                                              \
        __asm__ volatile(ZERO_14("xmm") "1:\n\t" PEAK_12(op, r) "dec %0\n\tjnz 1b" \
                         : "+r"(steps)                                             \
                         :                                                         \
                         : PEAK_CLOBBERS);                                         \
    }

#define MIX_LOOP(name, target_, m, a, r)                                            \
    __attribute__((target(target_))) static void name(size_t steps)                 \
    {                                                                               \
        __asm__ volatile(ZERO_14("xmm") "1:\n\t" MIX_12(m, a, r) "dec %0\n\tjnz 1b" \
                         : "+r"(steps)                                              \
                         :                                                          \
                         : PEAK_CLOBBERS);                                          \
    }

PEAK_LOOP(fma_ymm_loop, "avx2,fma", "vfmadd231ps", "ymm")
PEAK_LOOP(fma_zmm_loop, "avx512f", "vfmadd231ps", "zmm")
PEAK_LOOP(bf16_zmm_loop, "avx512f,avx512bf16", "vdpbf16ps", "zmm")
PEAK_LOOP(maddubs_ymm_loop, "avx2", "vpmaddubsw", "ymm")
PEAK_LOOP(dpbusd_zmm_loop, "avx512f,avx512vnni", "vpdpbusd", "zmm")
MIX_LOOP(muladd_ymm_loop, "avx2", "vmulps", "vaddps", "ymm")
MIX_LOOP(muladd_zmm_loop, "avx512f", "vmulps", "vaddps", "zmm")
PEAK_LOOP(dpwssd_zmm_loop, "avx512f,avx512vnni", "vpdpwssd", "zmm")

typedef struct peak_loop {
    const char *name;
    void (*loop)(size_t steps);
    double ops; /* counted operations per instruction */
} peak_loop;

static const peak_loop loops[BENCH_PEAK_KINDS] = {
    {"vfmadd231ps ymm", fma_ymm_loop, 16},      /* 8 lanes, a multiply and an add */
    {"vfmadd231ps zmm", fma_zmm_loop, 32},      /* 16 lanes */
    {"vdpbf16ps zmm", bf16_zmm_loop, 64},       /* 16 lanes, two products and two adds */
    {"vpmaddubsw ymm", maddubs_ymm_loop, 32},   /* 32 u8 x s8 products */
    {"vpdpbusd zmm", dpbusd_zmm_loop, 64},      /* 64 u8 x s8 products */
    {"vmulps+vaddps ymm", muladd_ymm_loop, 8},  /* 8 lanes, one operation */
    {"vmulps+vaddps zmm", muladd_zmm_loop, 16}, /* 16 lanes */
    {"vpdpwssd zmm", dpwssd_zmm_loop, 32},      /* 32 s16 x s16 products */
};

static int have(bench_peak_kind kind)
{
    __builtin_cpu_init();
    switch (kind) {
    case BENCH_PEAK_FMA_YMM: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case BENCH_PEAK_FMA_ZMM: return __builtin_cpu_supports("avx512f");
    case BENCH_PEAK_BF16_ZMM:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
    case BENCH_PEAK_INT8_YMM: return __builtin_cpu_supports("avx2");
    case BENCH_PEAK_INT8_ZMM:
    case BENCH_PEAK_INT16_ZMM:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
    case BENCH_PEAK_MULADD_YMM: return __builtin_cpu_supports("avx2");
    case BENCH_PEAK_MULADD_ZMM: return __builtin_cpu_supports("avx512f");
    default: return 0;
    }
}

/* Operations per CPU second of loop l, the best of five runs of 4 million
   steps (48 million instructions: ~10 ms at 2 a cycle). */
static double measure(const peak_loop *l)
{
    const size_t steps = 4000000;
    double best = 0;
    for (int k = 0; k < 5; k++) {
        double t = thread_cpu_s();
        l->loop(steps);
        t = thread_cpu_s() - t;
        double r = (double)steps * 12 * l->ops / t;
        best = r > best ? r : best;
    }
    return best;
}
#endif

double bench_peak(bench_peak_kind kind)
{
    if ((unsigned)kind >= BENCH_PEAK_KINDS) return 0;
#if defined(__x86_64__)
    static double cached[BENCH_PEAK_KINDS];
    if (cached[kind] == 0 && have(kind)) cached[kind] = measure(&loops[kind]);
    return cached[kind];
#else
    return 0;
#endif
}

const char *bench_peak_name(bench_peak_kind kind)
{
#if defined(__x86_64__)
    if ((unsigned)kind < BENCH_PEAK_KINDS) return loops[kind].name;
#else
    (void)kind;
#endif
    return "-";
}
