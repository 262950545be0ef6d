/* SPDX-License-Identifier: MIT */
/*
 * decodenum/selftest.h: the library holding its own kernels to its scalar
 * references, on the machine it runs on.
 *
 * `decodenum selftest` is these functions: an installed program testing the
 * installed library. Nothing here computes a number an engine uses.
 */
#ifndef DECODENUM_SELFTEST_H
#define DECODENUM_SELFTEST_H

#include "decodenum/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plan dn_selftest runs: every length 0..DN_SELFTEST_EVERY_LENGTH_TO,
   then DN_SELFTEST_RANDOM_LENGTHS random lengths up to
   DN_SELFTEST_RANDOM_LENGTH_MAX, from a fixed seed (the same inputs on
   every run). */
#define DN_SELFTEST_EVERY_LENGTH_TO 300
#define DN_SELFTEST_RANDOM_LENGTHS 24
#define DN_SELFTEST_RANDOM_LENGTH_MAX 100000

/* Receives one line of a report (no newline; valid during the call only). */
typedef void (*dn_selftest_line)(const char *line, void *ctx);

/* Runs every kernel of `isa` on the plan above and compares every output's
   bits with the scalar reference's. Calls `line` (unless NULL) once per
   kernel, with ctx, in a fixed order, for example
     "avx2   fp32   fsum               1234 outputs, every bit agrees"
   or, for a kernel that differs, the count and the first difference.
   Returns the number of kernels whose bits differ (0: all agree), or -1
   without calling `line` when dn_isa_available(isa) is 0. Takes about a
   second per ISA; allocates its buffers; thread-safe. Does not change which ISA dn_isa_active() reports. */
DN_API int dn_selftest(dn_isa isa, dn_selftest_line line, void *ctx);

/* The CPU as the dispatcher sees it, in one line: "x86-64, avx yes, avx2
   yes, fma yes, f16c yes, os ymm state yes, avx512 f yes bw yes vl yes dq
   yes vnni yes bf16 yes vbmi yes, os zmm state yes", "aarch64, neon yes",
   or "no SIMD kernels for this architecture". A static string. */
DN_API const char *dn_cpu_description(void);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_SELFTEST_H */
