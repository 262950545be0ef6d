/* SPDX-License-Identifier: MIT */
/*
 * decodenum: what the library sees on this machine, and a self-test that
 * holds every kernel the CPU can run to the scalar references.
 *
 *   decodenum info       version, CPU features, the ISA in use and why
 *   decodenum selftest   every kernel on every available ISA vs the reference;
 *                        exit status 1 on any difference
 *   decodenum decode     greedy decoding of a GGUF model or a synthetic one
 *                        (examples/decode/), tokens per second, a digest of
 *                        every logit
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "decodenum.h"

/* Only the public API: the program tests the library it is linked to (the
   installed shared library, once installed). */

static int info(void)
{
    printf("libdecodenum %s\n", dn_version_string());
    printf("cpu: %s\n", dn_cpu_description());
    printf("isa available:");
    for (int i = DN_ISA_SCALAR; i <= DN_ISA_AVX512; i++)
        if (dn_isa_available((dn_isa)i)) printf(" %s", dn_isa_name((dn_isa)i));
    printf("\nisa in use: %s (%s)\n", dn_isa_name(dn_isa_active()), dn_isa_note());
    return 0;
}

static void report(const char *line, void *ctx)
{
    (void)ctx;
    printf("%s\n", line);
}

static int selftest(void)
{
    int failed = 0, ran = 0;
    printf("libdecodenum %s selftest: lengths 0..%d and %d random up to %d, every kernel vs its "
           "reference\n",
           dn_version_string(), DN_SELFTEST_EVERY_LENGTH_TO, DN_SELFTEST_RANDOM_LENGTHS,
           DN_SELFTEST_RANDOM_LENGTH_MAX);
    for (int i = DN_ISA_SCALAR; i <= DN_ISA_AVX512; i++) {
        if (!dn_isa_available((dn_isa)i)) continue;
        int differ = dn_selftest((dn_isa)i, report, NULL);
        failed += differ < 0 ? 1 : differ;
        ran++;
    }
    printf("%s: %d ISA(s) checked, %d kernel(s) differ\n", failed ? "FAIL" : "PASS", ran, failed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "decode") == 0) return dd_main(argc - 2, argv + 2);
    if (argc == 2 && strcmp(argv[1], "info") == 0) return info();
    if (argc == 2 && strcmp(argv[1], "selftest") == 0) return selftest();
    if (argc == 2 && (strcmp(argv[1], "--version") == 0)) {
        printf("decodenum %s\n", dn_version_string());
        return 0;
    }
    fprintf(stderr, "usage: decodenum info | selftest | decode [--help] | --version\n");
    return 2;
}
