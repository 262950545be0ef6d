/* SPDX-License-Identifier: MIT */
/*
 * The cross-host digest: every public function family run on inputs from a
 * fixed integer generator, its outputs hashed by value, and each family's
 * hash compared with a committed constant. The library promises one result
 * per input on every CPU, ISA and thread count, so the constants are the
 * same on x86-64 (scalar and AVX2), AArch64 (scalar and NEON), ppc64el,
 * s390x (big-endian), armhf, armel and i386, and on pools of 1 to 3 threads
 * (docs/numerics.md, "Every architecture").
 *
 * Hashed by value: each output is turned into an integer (a float's bits, a
 * status, a code) and fed to FNV-1a least significant byte first, so the
 * host's byte order never enters. The only bytes the inputs hold in memory
 * are the ggml blocks and F16 rows the readers take, which are little-endian
 * by definition and built here byte by byte.
 *
 * One constant per family: a family added later gets its own row and never
 * changes another's constant, and a failure names the family. A changed
 * constant is a change of the library's bits: it goes into CHANGELOG.md and
 * the version (docs/numerics.md). `test_digest --print` prints the rows.
 *
 * Plain C without cmocka, so that every cross target builds and runs it
 * (tools/build.sh cross <arch>).
 */
#include "decodenum.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"

/* ---- the families ------------------------------------------------------------ */

typedef struct family {
    const char *name;
    void (*run)(dg_hash *h, dn_pool *pool);
    int takes_pool; /* run again on pools of 1, 2 and 3 threads */
    uint64_t want;
} family;

/* The committed constants. A family added later (a new module's
   products) is one more row here and one more dg_<name> function
   in digest_*.c; rows are never reordered or merged. */
static const family families[] = {
    {"fp32", dg_fp32, 0, UINT64_C(0x655def59416a1e7b)},
    {"math", dg_math, 0, UINT64_C(0x3c78abeab338f72d)},
    {"norms", dg_norms, 0, UINT64_C(0x212fc3b07bcefb4e)},
    {"f16", dg_f16, 1, UINT64_C(0xa7e00fd0057277c2)},
    {"blocks", dg_blocks, 0, UINT64_C(0x1a6791eef243558a)},
    {"quant", dg_quant, 0, UINT64_C(0x78c511ea46d56261)},
    {"dot", dg_dot, 1, UINT64_C(0xfcf565c4a80d7a66)},
    {"lane", dg_lane, 0, UINT64_C(0x7e4f12ca4dea0663)},
    {"attention", dg_attention, 1, UINT64_C(0x4fafd321bb7f3975)},
    {"gdn", dg_gdn, 1, UINT64_C(0x42a463bd2c24665d)},
    {"bf16", dg_bf16, 1, UINT64_C(0xdc94b10fea3cbfdc)},
    {"fp8", dg_fp8, 1, UINT64_C(0xe146dda07c7721e4)},
    {"lane_units", dg_lane_units, 0, UINT64_C(0x551455c1d79318b9)},
    {"vec", dg_vec, 1, UINT64_C(0xd5739fd6da16015c)},
    {"activations", dg_activations, 0, UINT64_C(0x9cce1139c1eda655)},
    {"trig", dg_trig, 0, UINT64_C(0xa80c95c3d0cca9d6)},
    {"act", dg_act, 1, UINT64_C(0xcd524ead93896d24)},
    {"mat_mul_path", dg_mat_mul_path, 1, UINT64_C(0x55e14293ca09fc89)},
    /* new families here */
};
#define NFAMILIES (sizeof families / sizeof families[0])

static dg_hash run_family(const family *f, dn_pool *pool)
{
    dg_hash h;
    dg_init(&h);
    f->run(&h, pool);
    return h;
}

int main(int argc, char **argv)
{
    int print = argc > 1 && strcmp(argv[1], "--print") == 0;
    dn_pool *pools[3] = {dn_pool_create(1), dn_pool_create(2), dn_pool_create(3)};
    int failed = 0;
    for (int i = 0; i < 3; i++)
        if (!pools[i]) {
            fprintf(stderr, "digest: dn_pool_create(%d) failed\n", i + 1);
            return 1;
        }
    printf("digest: isa %s\n", dn_isa_name(dn_isa_active()));
    for (size_t i = 0; i < NFAMILIES; i++) {
        const family *f = &families[i];
        dg_hash first = run_family(f, NULL);
        uint64_t got = first.h;
        if (print) {
            printf("    {\"%s\", dg_%s, %d, UINT64_C(0x%016" PRIx64 ")},\n", f->name, f->name,
                   f->takes_pool, got);
            continue;
        }
        int ok = got == f->want;
        printf("%-11s 0x%016" PRIx64 " %s (%" PRIu64 " values, %u statuses of which %u errors)",
               f->name, got, ok ? "ok" : "DIFFERS", first.values, (unsigned)first.calls,
               (unsigned)first.refused);
        if (!ok) printf(" (committed 0x%016" PRIx64 ")", f->want);
        for (int p = 0; f->takes_pool && p < 3; p++) {
            uint64_t g = run_family(f, pools[p]).h;
            printf("; %d threads %s", p + 1, g == got ? "same" : "DIFFERS");
            ok = ok && g == got;
        }
        printf("\n");
        failed += !ok;
    }
    for (int i = 0; i < 3; i++) dn_pool_destroy(pools[i]);
    if (!print) printf(failed ? "digest: %d families differ\n" : "digest: all same\n", failed);
    return failed != 0;
}
