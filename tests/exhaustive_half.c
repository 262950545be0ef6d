/* SPDX-License-Identifier: MIT */
/*
 * exhaustive_half: the AVX-512 kernels' conversions of a result to the
 * two-byte stores (src/x86/avx512_half.h: bfloat16 by AVX512_BF16's
 * vcvtne2ps2bf16, binary16 by vcvtps2ph, each followed by the NaN rule)
 * against dn_f32_to_bf16 and dn_f32_to_f16 on every one of the 2^32
 * binary32 inputs, under the kernels' MXCSR (DAZ, round to nearest) and
 * under the default one. Exits 77 (skipped) on a CPU without AVX-512; the
 * bfloat16 half is skipped, and said so, on one without AVX512_BF16.
 * About a minute on one core.
 */
#include "isa.h"
#include "x86/avx2_common.h"
#include "x86/avx512_half.h"

#include "decodenum/fp32.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* 32 consecutive inputs from u0 (their bits), converted by the kernels'
   steps, compared with the references; returns the mismatches. */
DN_BF16_TARGET static uint64_t bf16_block(uint32_t u0)
{
    uint32_t in[32];
    uint16_t got[32];
    for (int i = 0; i < 32; i++) in[i] = u0 + (uint32_t)i;
    __m512i order = _mm512_setr_epi64(0x0003000200010000, 0x0007000600050004, 0x000B000A00090008,
                                      0x000F000E000D000C, 0x0013001200110010, 0x0017001600150014,
                                      0x001B001A00190018, 0x001F001E001D001C);
    __m512i h = dn_avx512_bf16_round32(_mm512_loadu_ps(in), _mm512_loadu_ps(in + 16), order);
    _mm512_storeu_si512(got, h);
    uint64_t bad = 0;
    for (int i = 0; i < 32; i++) {
        float x;
        memcpy(&x, &in[i], 4);
        uint16_t want = dn_f32_to_bf16(x);
        if (got[i] != want) {
            if (bad == 0)
                printf("  bf16: input 0x%08" PRIx32 " gives 0x%04x, the reference 0x%04x\n", in[i],
                       got[i], want);
            bad++;
        }
    }
    return bad;
}

static uint64_t f16_block(uint32_t u0)
{
    uint32_t in[16];
    uint16_t got[16];
    for (int i = 0; i < 16; i++) in[i] = u0 + (uint32_t)i;
    _mm256_storeu_si256((__m256i *)got, dn_avx512_f16_round16(_mm512_loadu_ps(in)));
    uint64_t bad = 0;
    for (int i = 0; i < 16; i++) {
        float x;
        memcpy(&x, &in[i], 4);
        uint16_t want = dn_f32_to_f16(x);
        if (got[i] != want) {
            if (bad == 0)
                printf("  f16: input 0x%08" PRIx32 " gives 0x%04x, the reference 0x%04x\n", in[i],
                       got[i], want);
            bad++;
        }
    }
    return bad;
}

/* Every input through one conversion, under the kernels' MXCSR or not. */
static uint64_t sweep(int bf16, int daz)
{
    uint64_t bad = 0;
    unsigned csr = daz ? dn_avx2_enter() : 0;
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += bf16 ? 32 : 16)
        bad += bf16 ? bf16_block((uint32_t)u) : f16_block((uint32_t)u);
    if (daz) dn_avx2_leave(csr, 0.0f);
    printf("%s, MXCSR %s: 2^32 inputs, %" PRIu64 " differ from the reference\n",
           bf16 ? "bfloat16 (vcvtne2ps2bf16)" : "binary16 (vcvtps2ph)",
           daz ? "DAZ (the kernels')" : "default", bad);
    return bad;
}

int main(void)
{
    if (!dn_isa_available(DN_ISA_AVX512)) {
        printf("skipped: no AVX-512 here\n");
        return 77;
    }
    uint64_t bad = sweep(0, 1) + sweep(0, 0);
    if (dn_cpu()->avx512bf16)
        bad += sweep(1, 1) + sweep(1, 0);
    else
        printf("bfloat16 skipped: the CPU lacks AVX512_BF16\n");
    return bad ? 1 : 0;
}
