/* SPDX-License-Identifier: MIT */
/*
 * Runtime choice of kernels: CPUID and XGETBV on x86-64 (AVX2, FMA and F16C
 * with the OS saving the YMM state; AVX-512 F/BW/VL/DQ with the OS saving the
 * opmask and ZMM state too), NEON on AArch64, the DECODENUM_ISA override. The choice is made once per process under pthread_once.
 */
#include "isa.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>

static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void probe(dn_cpu_features *f)
{
    unsigned a, b, c, d;
    f->x86_64 = 1;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    f->sse2 = (d >> 26) & 1;
    f->fma = (c >> 12) & 1;
    f->osxsave = (c >> 27) & 1;
    f->avx = (c >> 28) & 1;
    f->f16c = (c >> 29) & 1;
    /* XCR0 bits 1 and 2: the OS saves SSE and AVX (YMM) state; bits 5-7 the
       opmask registers and the upper halves of ZMM0-15 and all of ZMM16-31. */
    uint64_t xcr0 = f->osxsave ? read_xcr0() : 0;
    f->ymm_os = (xcr0 & 6) == 6;
    f->zmm_os = (xcr0 & 0xE6) == 0xE6;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f->avx2 = (b >> 5) & 1;
        f->avx512f = (b >> 16) & 1;
        f->avx512dq = (b >> 17) & 1;
        f->avx512bw = (b >> 30) & 1;
        f->avx512vl = (b >> 31) & 1;
        f->avx512vbmi = (c >> 1) & 1;
        f->gfni = (c >> 8) & 1;
        f->avx512vnni = (c >> 11) & 1;
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f->avx512bf16 = (a >> 5) & 1;
}
#elif defined(__aarch64__)
static void probe(dn_cpu_features *f)
{
    f->aarch64 = 1;
    f->neon = 1; /* Advanced SIMD is mandatory in AArch64 */
}
#else
static void probe(dn_cpu_features *f) { (void)f; }
#endif

static dn_cpu_features cpu;
static dn_isa chosen = DN_ISA_SCALAR;
static char note[160];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *avx2_missing(void)
{
    if (!cpu.x86_64) return "this is not an x86-64 CPU";
    if (!cpu.avx2) return "the CPU lacks AVX2";
    if (!cpu.fma) return "the CPU lacks FMA";
    if (!cpu.f16c) return "the CPU lacks F16C";
    if (!cpu.osxsave || !cpu.ymm_os) return "the OS does not enable the YMM state";
    return NULL;
}

static const char *avx512_missing(void)
{
    const char *why = avx2_missing();
    if (why) return why;
    if (!cpu.avx512f || !cpu.avx512bw || !cpu.avx512vl || !cpu.avx512dq)
        return "the CPU lacks one of AVX-512 F, BW, VL, DQ";
    if (!cpu.zmm_os) return "the OS does not enable the ZMM state";
    return NULL;
}

/* Why `isa` cannot run here, or NULL if it can. */
static const char *unavailable(dn_isa isa)
{
    switch (isa) {
    case DN_ISA_SCALAR: return NULL;
    case DN_ISA_AVX2:
#if defined(DN_HAVE_AVX2)
        return avx2_missing();
#else
        return "this build has no AVX2 kernels";
#endif
    case DN_ISA_NEON:
#if defined(DN_HAVE_NEON)
        return cpu.neon ? NULL : "the CPU lacks NEON";
#else
        return "this build has no NEON kernels";
#endif
    case DN_ISA_AVX512:
#if defined(DN_HAVE_AVX512)
        return avx512_missing();
#else
        return "this build has no AVX-512 kernels";
#endif
    }
    return "unknown ISA";
}

static dn_isa best(void)
{
    if (!unavailable(DN_ISA_AVX512)) return DN_ISA_AVX512;
    if (!unavailable(DN_ISA_AVX2)) return DN_ISA_AVX2;
    if (!unavailable(DN_ISA_NEON)) return DN_ISA_NEON;
    return DN_ISA_SCALAR;
}

/* An override that cannot be honoured runs the scalar references: the same
   bits, but up to ~95x slower (Q4_K mat_vec). The one line the library ever
   prints, once per process, so a mistyped variable does not pass unseen. */
static void warn(void) { fprintf(stderr, "decodenum: %s\n", note); }

static void choose(void)
{
    probe(&cpu);
    const char *want = getenv("DECODENUM_ISA");
    if (!want || !*want || strcmp(want, "auto") == 0) {
        chosen = best();
        snprintf(note, sizeof note, "%s chosen from the CPU%s", dn_isa_name(chosen),
                 want && *want ? " (DECODENUM_ISA=auto)" : "");
        return;
    }
    dn_isa asked;
    if (strcmp(want, "scalar") == 0)
        asked = DN_ISA_SCALAR;
    else if (strcmp(want, "avx2") == 0)
        asked = DN_ISA_AVX2;
    else if (strcmp(want, "neon") == 0)
        asked = DN_ISA_NEON;
    else if (strcmp(want, "avx512") == 0)
        asked = DN_ISA_AVX512;
    else {
        chosen = DN_ISA_SCALAR;
        snprintf(note, sizeof note,
                 "DECODENUM_ISA=%.40s is not one of scalar, avx2, avx512, neon, auto; using scalar",
                 want);
        warn();
        return;
    }
    const char *why = unavailable(asked);
    chosen = why ? DN_ISA_SCALAR : asked;
    if (why) {
        snprintf(note, sizeof note, "DECODENUM_ISA=%s requested, but %s; using scalar", want, why);
        warn();
    } else {
        snprintf(note, sizeof note, "DECODENUM_ISA=%s requested", want);
    }
}

const dn_cpu_features *dn_cpu(void)
{
    pthread_once(&once, choose);
    return &cpu;
}

dn_isa dn_isa_active(void)
{
    pthread_once(&once, choose);
    return chosen;
}

const char *dn_isa_note(void)
{
    pthread_once(&once, choose);
    return note;
}

int dn_isa_available(dn_isa isa)
{
    pthread_once(&once, choose);
    return unavailable(isa) == NULL;
}

const char *dn_isa_name(dn_isa isa)
{
    switch (isa) {
    case DN_ISA_SCALAR: return "scalar";
    case DN_ISA_AVX2: return "avx2";
    case DN_ISA_NEON: return "neon";
    case DN_ISA_AVX512: return "avx512";
    }
    return "unknown";
}
