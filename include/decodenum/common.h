/* SPDX-License-Identifier: MIT */
/*
 * decodenum/common.h: status codes, version, and the instruction set in use.
 *
 * Every other module header includes this one. Nothing here computes a
 * number; it says whether a call worked, which library answered, and which
 * kernels (scalar, AVX2, AVX-512, NEON) produce the bits. The bits never
 * depend on the kernels: every kernel reproduces its scalar reference
 * exactly.
 */
#ifndef DECODENUM_COMMON_H
#define DECODENUM_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(DECODENUM_SHARED)
#if defined(DECODENUM_BUILDING)
#define DN_API __declspec(dllexport)
#else
#define DN_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define DN_API __attribute__((visibility("default")))
#else
#define DN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ---------------------------------------------------------- */

#define DN_VERSION_MAJOR 0
#define DN_VERSION_MINOR 2
#define DN_VERSION_PATCH 0
/* MAJOR*10000 + MINOR*100 + PATCH: comparable with < and >. */
#define DN_VERSION_NUMBER (DN_VERSION_MAJOR * 10000 + DN_VERSION_MINOR * 100 + DN_VERSION_PATCH)
#define DN_VERSION_STRING "0.2.0"

/* The modules this header set has, for #if tests (each defined to the
   DN_VERSION_NUMBER of the release that first shipped it); a program that
   may run on an older library compares dn_version() with the same number
   before calling into the module. */
#define DN_HAVE_FP32 100      /* decodenum/fp32.h */
#define DN_HAVE_POOL 200      /* decodenum/pool.h */
#define DN_HAVE_F16 200       /* decodenum/f16.h */
#define DN_HAVE_BLOCKS 200    /* decodenum/blocks.h */
#define DN_HAVE_QUANT 200     /* decodenum/quant.h */
#define DN_HAVE_DOT 200       /* decodenum/dot.h */
#define DN_HAVE_REPACK 300    /* decodenum/repack.h */
#define DN_HAVE_LANE 200      /* decodenum/lane.h */
#define DN_HAVE_MATH 200      /* decodenum/math.h */
#define DN_HAVE_SELFTEST 200  /* decodenum/selftest.h */
#define DN_HAVE_ATTENTION 200 /* decodenum/attention.h */
#define DN_HAVE_GDN 200       /* decodenum/gdn.h */
#define DN_HAVE_VEC 300       /* decodenum/vec.h */
#define DN_HAVE_FP8 300       /* decodenum/fp8.h */
#define DN_HAVE_BF16 300      /* decodenum/bf16.h */

/* The DN_VERSION_NUMBER of the library actually linked (which may be newer
   than the header a program was compiled with). Cost: O(1). */
DN_API unsigned dn_version(void);

/* The version of the linked library as "MAJOR.MINOR.PATCH"; a static string. */
DN_API const char *dn_version_string(void);

/* ---- status ------------------------------------------------------------ */

/* What a call that can fail returns. The numeric values are part of the ABI
   and are never reused or renumbered; new codes are only ever appended. */
typedef enum dn_status {
    DN_OK = 0,                   /* the call did what it says */
    DN_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer with a non-zero length, an
                                      unknown enumerator, inconsistent sizes */
    DN_ERR_UNREADABLE_BLOCK = 2, /* a stored block has an infinite or NaN scale */
    DN_ERR_UNSUPPORTED_TYPE = 3, /* a block format the library does not read */
    DN_ERR_NON_FINITE = 4,       /* an input is infinite or NaN where the
                                      operation defines no result for it */
    DN_ERR_OUT_OF_MEMORY = 5,    /* an allocation failed */
    DN_ERR_OUT_OF_RANGE = 6      /* the exact result does not fit the output type */
} dn_status;

/* A short English name of a status ("ok", "invalid argument", ...); a static
   string, never NULL ("unknown status" for a value not listed above). */
DN_API const char *dn_status_str(dn_status status);

/* ---- memory ------------------------------------------------------------------
 * Alignment: an array of bytes (stored blocks, a row of a model file) may
 * start at any address; a typed array (float, uint16_t, int16_t, a struct)
 * needs only its type's natural alignment, as C requires of every pointer
 * to that type. No entry point needs more: the kernels use unaligned vector
 * loads. Speed is another matter: a large array the kernels stream (a KV
 * cache, a weight matrix) reads fastest from a 64-byte boundary (a load
 * that straddles two cache lines costs two), which malloc does not give a
 * large block (glibc: 16 bytes past a line); aligned_alloc(64, ...) does.
 * Aliasing: an input and an output may be the same array only where
 * a function says so (e.g. dn_softmax's y may be x); otherwise they must not
 * overlap. A binary16 view into a file at an odd offset goes through
 * dn_f16_dequantize_row, which reads bytes.
 */

/* ---- instruction set ------------------------------------------------------ */

/* The kernels that compute. Chosen once per process, on first use, from the
   CPU (CPUID + XGETBV on x86-64; NEON is always present on AArch64) unless
   the environment variable DECODENUM_ISA names one: "scalar", "avx2",
   "avx512", "neon" or "auto". "auto" (and no variable) takes the widest the
   CPU has: avx512, then avx2, then neon. A request the CPU or the build cannot honour (or a value
   not in that list) falls back to DN_ISA_SCALAR, dn_isa_note() says why, and
   the same sentence is written once to stderr ("decodenum: ..."): the only
   output the library ever produces, since the scalar kernels are up to ~95x
   slower. The choice changes speed only: every ISA produces the same bits. */
typedef enum dn_isa {
    DN_ISA_SCALAR = 0, /* the scalar reference itself */
    DN_ISA_AVX2 = 1,   /* x86-64 with AVX2, FMA and F16C, OS-enabled YMM state */
    DN_ISA_NEON = 2,   /* AArch64 Advanced SIMD */
    DN_ISA_AVX512 = 3  /* DN_ISA_AVX2's CPU with AVX-512 F, BW, VL and DQ and the OS
                          saving the ZMM and opmask state; a kernel AVX-512 lacks runs
                          the AVX2 one (since 0.3.0) */
} dn_isa;

/* The ISA whose kernels this process uses. Thread-safe; O(1) after the first
   call, which runs CPUID and reads DECODENUM_ISA. */
DN_API dn_isa dn_isa_active(void);

/* "scalar", "avx2", "neon", "avx512"; "unknown" for any other value. */
DN_API const char *dn_isa_name(dn_isa isa);

/* Whether this build and this CPU can run the kernels of `isa`. */
DN_API int dn_isa_available(dn_isa isa);

/* Why dn_isa_active() is what it is, in one English sentence (for example
   "DECODENUM_ISA=avx2 requested, but the CPU lacks F16C; using scalar").
   A static string, valid for the life of the process. */
DN_API const char *dn_isa_note(void);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_COMMON_H */
