/* SPDX-License-Identifier: MIT */
/*
 * dispatch.h: every module's kernels for one ISA, as the public entry points
 * call them.
 *
 * Each ISA registers its modules' tables once, in src/dispatch.c. A module an
 * ISA does not register, or a single entry it leaves NULL, falls back to the
 * ISA below it (AVX2 -> scalar, NEON -> scalar), the way BLIS fills every slot
 * of a context with the reference before an architecture overrides some. So
 * a new ISA can start with one kernel, and every slot of a resolved table is
 * callable: the scalar tables hold the references, which are the definitions.
 */
#ifndef DN_DISPATCH_H
#define DN_DISPATCH_H

#include "attention_kernels.h"
#include "dot_kernels.h"
#include "f16_kernels.h"
#include "fp8_kernels.h"
#include "gdn_kernels.h"
#include "fp32_kernels.h"
#include "math_kernels.h"
#include "quant_kernels.h"
#include "vec_kernels.h"

/* One ISA's registration, or (resolved) the kernels the entry points call. */
typedef struct dn_kernels {
    const dn_fp32_kernels *fp32;
    const dn_math_kernels *math;
    const dn_f16_kernels *f16;
    const dn_quant_kernels *quant;
    const dn_dot_kernels *dot;
    const dn_attention_kernels *attention;
    const dn_gdn_kernels *gdn;
    const dn_vec_kernels *vec;
    const dn_fp8_kernels *fp8;
} dn_kernels;

/* The resolved kernels of `isa`, every slot filled; NULL where this build or
   this CPU cannot run it. Resolved once per process, thread-safely. */
const dn_kernels *dn_kernels_for(dn_isa isa);

/* The resolved kernels of dn_isa_active(): what every public entry point calls. */
const dn_kernels *dn_kernels_active(void);

/* Storage of a resolved registration: the filled tables and the view of them. */
typedef struct dn_kernel_slots {
    dn_fp32_kernels fp32;
    dn_math_kernels math;
    dn_f16_kernels f16;
    dn_quant_kernels quant;
    dn_dot_kernels dot;
    dn_attention_kernels attention;
    dn_gdn_kernels gdn;
    dn_vec_kernels vec;
    dn_fp8_kernels fp8;
    dn_kernels kernels;
} dn_kernel_slots;

/* Resolves a registration `own` (modules may be NULL, entries may be NULL)
   over `below`, a resolved registration: out->kernels points at out's tables,
   each slot own's entry where it has one, else below's. The dispatcher's own
   step, exposed so the fall-back is tested on a registration with a slot
   removed (tests/test_dispatch.c). */
void dn_kernels_resolve(const dn_kernels *own, const dn_kernels *below, dn_kernel_slots *out);

#endif
