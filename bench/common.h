/* SPDX-License-Identifier: MIT */
/*
 * bench/common.h: the machinery the decodenum benchmark programs share.
 *
 *  - timing: now_s (CLOCK_MONOTONIC seconds), median;
 *  - cases: a bench_case is one measured call (a callback and its inputs);
 *    bench_calibrate warms a case up and picks its calls per sample,
 *    bench_run_group samples several cases round-robin (so load from other
 *    processes falls on all of them alike), bench_ratio compares two cases
 *    of one group sample by sample;
 *  - read bandwidth: streaming-read kernels (portable C, AVX2, AVX-512, NEON,
 *    as the CPU allows), single thread or on a bench_team of N threads each
 *    reading its own slice; bench_add_read_cases adds one case per kernel to
 *    a group and bench_best_case picks the best, bench_read_best measures
 *    and picks in one call;
 *  - the run's header: the command line, the CPU, its clock, the compiler,
 *    buffers (2 MiB aligned, MADV_HUGEPAGE), deterministic fill.
 *
 * Not installed, not part of the library; the programs link it as a static
 * library (bench/CMakeLists.txt).
 */
#ifndef DN_BENCH_COMMON_H
#define DN_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* ---- timing ----------------------------------------------------------------- */

double now_s(void);
/* Sorts v[0..n) in place; the median (the mean of the middle two for even n). */
double median(double *v, int n);

/* ---- cases ------------------------------------------------------------------ */

#define BENCH_MAX_SAMPLES 128

typedef struct bench_case bench_case;
/* One call of the measured thing (it stores what it computes in c->result
   or in its own buffers). */
typedef void (*bench_call_fn)(bench_case *c);
/* Reads `bytes` bytes from p; returns something computed from them. */
typedef uint64_t (*read_fn)(const void *p, size_t bytes);

struct bench_case {
    const char *op; /* labels for the tables */
    const char *impl;
    bench_call_fn call;
    void *ctx;  /* what the call needs beyond a, b, n */
    read_fn rd; /* read cases: the kernel */
    const float *a, *b;
    size_t n;     /* elements (the caller's unit) */
    double bytes; /* bytes per call, for GB/s */
    size_t reps;  /* calls per sample */
    int want;     /* samples wanted */
    int have;
    double t[BENCH_MAX_SAMPLES]; /* seconds per call */
    double med, best;            /* seconds per call */
    float result;                /* of the last call */
};

/* Seconds per call over c->reps calls. */
double bench_sample(bench_case *c);
/* Warms up for about `warm` seconds (at least one call), then picks reps so
   a sample lasts about `target` seconds (at least one call). */
void bench_calibrate(bench_case *c, double warm, double target);
/* Samples cs[0..count) round-robin (count <= BENCH_MAX_GROUP) until each
   has c->want samples, then sets med and best. */
#define BENCH_MAX_GROUP 256
void bench_run_group(bench_case *cs, int count);
/* The same, in a new order every round (a fixed pseudo-random permutation):
   no case always follows the same one, so what a case leaves behind (a
   second core waking or going idle, a lowered clock) does not always fall
   on the same next case. */
void bench_run_group_shuffled(bench_case *cs, int count);
double bench_gbps(const bench_case *c, double secs);
/* Throughput of x over throughput of y: of their medians, and the median of
   the per-round ratios (bench_run_group samples x and y in the same rounds). */
void bench_ratio(const bench_case *x, const bench_case *y, double *of_medians, double *paired);

/* ---- read bandwidth ------------------------------------------------------------ */

/* N threads (the caller's included) that read one buffer together, each its
   own contiguous slice, started and finished on barriers. Workers sleep
   between reads. */
typedef struct bench_team bench_team;
/* NULL when threads is 0 or threads cannot be had. */
bench_team *bench_team_create(unsigned threads);
void bench_team_destroy(bench_team *t);
unsigned bench_team_threads(const bench_team *t);
/* Every thread reads its slice of p[0..bytes) with rd (slices are multiples
   of 4 KiB; a remainder under 4 KiB per thread is not read). */
uint64_t bench_team_read(bench_team *t, read_fn rd, const void *p, size_t bytes);

/* The read kernels this build and CPU run, in a fixed order (c-u64x8,
   avx2-int, avx2-flt, avx2-2str, avx2-2s-pf, avx2-4str, avx512, neon-int):
   their count, or the i-th one's name and function. p must be 64-byte
   aligned; bytes a multiple of 4 KiB. */
int bench_read_kernel_count(void);
const char *bench_read_kernel_name(int i);
read_fn bench_read_kernel(int i);

/* Appends to cs[at..] one "read" case per read kernel over p[0..bytes):
   on the caller's thread when team is NULL, else on the team. Returns the
   new count. */
int bench_add_read_cases(bench_case *cs, int at, bench_team *team, const void *p, size_t bytes,
                         int want);
/* Of the sampled cases cs[first..end), the index of the one with the lowest
   median time per byte. */
int bench_best_case(const bench_case *cs, int first, int end);

/* Prints the table of one read kernel per line, 1 thread cases
   cs[first1..first2) beside their 2-thread twins from cs[first2..]: the
   header line, then "name med / max med / max" (GB/s). */
void bench_print_read_pairs(const bench_case *cs, int first1, int first2);

/* Best-of read bandwidth over p[0..bytes) with `threads` threads: every
   kernel sampled round-robin `samples` times after one warm-up read, the
   kernel with the best median wins. */
typedef struct bench_bw {
    const char *kernel;
    double med_gbps, max_gbps;
} bench_bw;
bench_bw bench_read_best(const void *p, size_t bytes, unsigned threads, int samples);

/* ---- measured peaks (peak.c) ------------------------------------------------------ */

/* The most one core does of one instruction: twelve independent chains of
   it on one thread, CPU time, the best of five loops. A compute-bound
   kernel's rate over the peak of the instruction it is built on is how near
   it runs to the core's limit. */
typedef enum bench_peak_kind {
    BENCH_PEAK_FMA_YMM,    /* vfmadd231ps ymm: flops, two a lane */
    BENCH_PEAK_FMA_ZMM,    /* vfmadd231ps zmm */
    BENCH_PEAK_BF16_ZMM,   /* vdpbf16ps zmm: flops, four a lane (two products, two adds) */
    BENCH_PEAK_INT8_YMM,   /* vpmaddubsw ymm: multiply-adds, 32 an instruction */
    BENCH_PEAK_INT8_ZMM,   /* vpdpbusd zmm (AVX512_VNNI): multiply-adds, 64 */
    BENCH_PEAK_MULADD_YMM, /* vmulps and vaddps ymm alternated: flops, one a lane */
    BENCH_PEAK_MULADD_ZMM, /* vmulps and vaddps zmm alternated */
    BENCH_PEAK_INT16_ZMM,  /* vpdpwssd zmm (AVX512_VNNI): multiply-adds, 32 */
    BENCH_PEAK_KINDS
} bench_peak_kind;
/* Operations per second of one thread (~50 ms the first time, then
   remembered); 0 where the CPU or the build lacks the instruction. */
double bench_peak(bench_peak_kind kind);
/* "vfmadd231ps ymm", ...; "-" for an unknown kind. */
const char *bench_peak_name(bench_peak_kind kind);

/* ---- the machine, buffers, data --------------------------------------------------- */

/* The core clock from a dependent chain of integer adds, best over about
   `secs` seconds; 0 where not measured. */
double bench_clock_ghz(double secs);
/* Prints "<title> (libdecodenum x.y.z)" and "command: [ENV=v ...] argv...". */
void bench_print_command(const char *title, int argc, char **argv, const char *const *envs,
                         size_t nenvs);
/* Prints the cpu (with the clock when ghz > 0), compiler, active isa and
   buffers lines. */
void bench_print_machine(double ghz);
/* Prints the load average (other processes share the machine), if known. */
void bench_print_load(void);
/* Parses [--quick] [--help]: 1 into *quick on --quick. Returns -1 to go on,
   else the exit code (usage printed). */
int bench_parse_args(int argc, char **argv, int *quick, void (*usage)(const char *argv0));
const char *bench_env_or(const char *name, const char *dflt);

/* `bytes` rounded up to 2 MiB, 2 MiB aligned (MADV_HUGEPAGE on Linux);
   free() it. NULL when out of memory. */
void *bench_alloc(size_t bytes);
/* The benches' generator: the LCG of Numerical Recipes (1664525, 1013904223);
   the next state, which is also the value. */
static inline uint32_t bench_lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s;
}
/* Values in [-1, 1), never denormal, from bench_lcg. */
void bench_fill(float *x, size_t n, uint32_t seed);
uint32_t bench_bits_of(float f);

#endif
