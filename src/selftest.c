/* SPDX-License-Identifier: MIT */
/* The public self-test: the check harness (src/check/) on the short plan,
   each kernel's verdict as one line of text. */
#include "decodenum/selftest.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>

#include "check/check.h"
#include "isa.h"

typedef struct sink_ctx {
    dn_selftest_line line;
    void *ctx;
} sink_ctx;

static void to_line(const dn_check_result *r, void *p)
{
    const sink_ctx *s = p;
    char text[400];
    if (!s->line) return;
    if (r->mismatched == 0)
        snprintf(text, sizeof text, "%-6s %-6s %-16s %12" PRIu64 " outputs, every bit agrees",
                 dn_isa_name(r->isa), r->module, r->kernel, r->compared);
    else
        snprintf(text, sizeof text,
                 "%-6s %-6s %-16s %12" PRIu64 " outputs, %" PRIu64 " DIFFER; first: %s",
                 dn_isa_name(r->isa), r->module, r->kernel, r->compared, r->mismatched, r->first);
    s->line(text, s->ctx);
}

DN_API int dn_selftest(dn_isa isa, dn_selftest_line line, void *ctx)
{
    const dn_check_plan plan = {DN_SELFTEST_EVERY_LENGTH_TO, DN_SELFTEST_RANDOM_LENGTHS,
                                DN_SELFTEST_RANDOM_LENGTH_MAX, UINT64_C(20261129)};
    sink_ctx s = {line, ctx};
    if (!dn_isa_available(isa)) return -1;
    return dn_check_all(isa, &plan, to_line, &s);
}

static pthread_once_t described = PTHREAD_ONCE_INIT;
static char description[256];

static const char *yes(int b) { return b ? "yes" : "no"; }

static void describe(void)
{
    const dn_cpu_features *f = dn_cpu();
    if (f->x86_64)
        snprintf(description, sizeof description,
                 "x86-64, avx %s, avx2 %s, fma %s, f16c %s, os ymm state %s, avx512 f %s bw %s "
                 "vl %s dq %s vnni %s bf16 %s vbmi %s, gfni %s, os zmm state %s",
                 yes(f->avx), yes(f->avx2), yes(f->fma), yes(f->f16c), yes(f->ymm_os),
                 yes(f->avx512f), yes(f->avx512bw), yes(f->avx512vl), yes(f->avx512dq),
                 yes(f->avx512vnni), yes(f->avx512bf16), yes(f->avx512vbmi), yes(f->gfni),
                 yes(f->zmm_os));
    else if (f->aarch64)
        snprintf(description, sizeof description, "aarch64, neon %s", f->neon ? "yes" : "no");
    else
        snprintf(description, sizeof description, "no SIMD kernels for this architecture");
}

DN_API const char *dn_cpu_description(void)
{
    pthread_once(&described, describe);
    return description;
}
