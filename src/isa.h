/* SPDX-License-Identifier: MIT */
/* isa.h: what the CPU offers, as the dispatcher and `decodenum info` see it. */
#ifndef DN_ISA_H
#define DN_ISA_H

#include "decodenum/common.h"

/* The number of dn_isa values (they run from 0). */
#define DN_ISA_COUNT 4

typedef struct dn_cpu_features {
    int x86_64, aarch64;
    int sse2, avx, avx2, fma, f16c, osxsave, ymm_os;
    int avx512f, avx512bw, avx512vl, avx512dq, zmm_os; /* what DN_ISA_AVX512 needs */
    int avx512vnni, avx512bf16, avx512vbmi, gfni;      /* reported; kernels ask for them */
    int neon;
} dn_cpu_features;

/* The features of this CPU, read once. */
const dn_cpu_features *dn_cpu(void);

#endif
