/* SPDX-License-Identifier: MIT */
/*
 * Every kernel of every ISA this CPU can run, held to its scalar reference
 * bit for bit: every length 0..300 in every input regime, and random lengths
 * up to 10^6. Under DECODENUM_ISA=<isa> (as tests/CMakeLists.txt runs it) it
 * checks that ISA's kernels and that the public, dispatched entry points use
 * it; without the variable it checks every ISA the CPU can run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "check/check.h"
#include "testutil.h"

static void print_result(const dn_check_result *r, void *ctx)
{
    (void)ctx;
    printf("  %-6s %-6s %-16s %10llu outputs compared, %llu differ%s%s\n", dn_isa_name(r->isa),
           r->module, r->kernel, (unsigned long long)r->compared, (unsigned long long)r->mismatched,
           r->mismatched ? "; first: " : "", r->first);
}

static void check_isa(dn_isa isa)
{
    /* Under DECODENUM_ISA, the named ISA only; without it, every ISA. */
    const char *want = getenv("DECODENUM_ISA");
    if (want && strcmp(want, dn_isa_name(isa)) != 0) skip();
    if (!dn_isa_available(isa)) {
        printf("  %s: not available here (%s)\n", dn_isa_name(isa), dn_isa_note());
        skip();
    }
    dn_check_plan plan = {300, 40, 1000000, UINT64_C(0xD1CE)};
    /* DN_CHECK_PLAN="every,random,max" shortens the plan where the kernels run
       emulated (tests/CMakeLists.txt sets it for qemu): every module's harness
       still meets every regime, special value and tail. */
    const char *short_plan = getenv("DN_CHECK_PLAN");
    if (short_plan)
        sscanf(short_plan, "%zu,%zu,%zu", &plan.every_length_to, &plan.random_lengths,
               &plan.random_length_max);
    assert_int_equal(dn_check_all(isa, &plan, print_result, NULL), 0);
}

static void scalar_kernels(void **state)
{
    (void)state;
    check_isa(DN_ISA_SCALAR);
}
static void avx2_kernels(void **state)
{
    (void)state;
    check_isa(DN_ISA_AVX2);
}
static void avx512_kernels(void **state)
{
    (void)state;
    check_isa(DN_ISA_AVX512);
}
static void neon_kernels(void **state)
{
    (void)state;
    check_isa(DN_ISA_NEON);
}

/* DECODENUM_ISA picks the kernels the public functions run. */
static void requested_isa_is_active(void **state)
{
    (void)state;
    const char *want = getenv("DECODENUM_ISA");
    if (!want) skip();
    dn_isa isa = strcmp(want, "avx512") == 0 ? DN_ISA_AVX512
                 : strcmp(want, "avx2") == 0 ? DN_ISA_AVX2
                 : strcmp(want, "neon") == 0 ? DN_ISA_NEON
                                             : DN_ISA_SCALAR;
    if (!dn_isa_available(isa)) skip();
    assert_int_equal(dn_isa_active(), isa);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requested_isa_is_active),
        cmocka_unit_test(scalar_kernels),
        cmocka_unit_test(avx2_kernels),
        cmocka_unit_test(avx512_kernels),
        cmocka_unit_test(neon_kernels),
    };
    return cmocka_run_group_tests_name("kernels", tests, NULL, NULL);
}
