/*
 * decodenum: what the library sees on this machine, and a self-test that
 * holds every kernel the CPU can run to the scalar references.
 *
 *   decodenum info       version, CPU features, the ISA in use and why
 *   decodenum selftest   every kernel on every available ISA vs the reference;
 *                        exit status 1 on any difference
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "check/check.h"
#include "isa.h"

static int info(void)
{
    const dn_cpu_features *f = dn_cpu();
    printf("libdecodenum %s\n", dn_version_string());
    if (f->x86_64)
        printf("cpu: x86-64, avx %s, avx2 %s, fma %s, f16c %s, os ymm state %s, avx512f %s\n",
               f->avx ? "yes" : "no", f->avx2 ? "yes" : "no", f->fma ? "yes" : "no",
               f->f16c ? "yes" : "no", f->ymm_os ? "yes" : "no", f->avx512f ? "yes" : "no");
    else if (f->aarch64)
        printf("cpu: aarch64, neon %s\n", f->neon ? "yes" : "no");
    else
        printf("cpu: no SIMD kernels for this architecture\n");
    printf("isa available:");
    for (int i = DN_ISA_SCALAR; i <= DN_ISA_NEON; i++)
        if (dn_isa_available((dn_isa)i)) printf(" %s", dn_isa_name((dn_isa)i));
    printf("\nisa in use: %s (%s)\n", dn_isa_name(dn_isa_active()), dn_isa_note());
    return 0;
}

static void report(const dn_check_result *r, void *ctx)
{
    (void)ctx;
    if (r->mismatched == 0)
        printf("%-6s %-6s %-16s %12" PRIu64 " outputs, every bit agrees\n", dn_isa_name(r->isa),
               r->module, r->kernel, r->compared);
    else
        printf("%-6s %-6s %-16s %12" PRIu64 " outputs, %" PRIu64 " DIFFER; first: %s\n",
               dn_isa_name(r->isa), r->module, r->kernel, r->compared, r->mismatched, r->first);
}

static int selftest(void)
{
    const dn_check_plan plan = {300, 24, 100000, UINT64_C(20261129)};
    int failed = 0, ran = 0;
    printf("libdecodenum %s selftest: lengths 0..%zu and %zu random up to %zu, every kernel vs its reference\n",
           dn_version_string(), plan.every_length_to, plan.random_lengths, plan.random_length_max);
    for (int i = DN_ISA_SCALAR; i <= DN_ISA_NEON; i++) {
        if (!dn_isa_available((dn_isa)i)) continue;
        failed += dn_check_all((dn_isa)i, &plan, report, NULL);
        ran++;
    }
    printf("%s: %d ISA(s) checked, %d kernel(s) differ\n", failed ? "FAIL" : "PASS", ran, failed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "info") == 0) return info();
    if (argc == 2 && strcmp(argv[1], "selftest") == 0) return selftest();
    if (argc == 2 && (strcmp(argv[1], "--version") == 0)) {
        printf("decodenum %s\n", dn_version_string());
        return 0;
    }
    fprintf(stderr, "usage: decodenum info | selftest | --version\n");
    return 2;
}
