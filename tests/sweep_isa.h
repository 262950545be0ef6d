/* SPDX-License-Identifier: MIT */
/* sweep_isa.h: the sweeps' --isa NAME (sweep_math.c, sweep_trig.c). */
#ifndef DN_SWEEP_ISA_H
#define DN_SWEEP_ISA_H

#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "isa.h"

/* The ISA named (the active one without a name): 0, or the exit status: 2
   for a name that is no ISA, 77 (ctest's SKIP_RETURN_CODE) where the CPU
   or the build cannot run its kernels. */
static inline int sweep_choose_isa(const char *prog, const char *name, dn_isa *isa)
{
    *isa = dn_isa_active();
    if (!name) return 0;
    int i = 0;
    while (i < DN_ISA_COUNT && strcmp(name, dn_isa_name((dn_isa)i)) != 0) i++;
    if (i == DN_ISA_COUNT) {
        fprintf(stderr, "%s: --isa %s names no ISA\n", prog, name);
        return 2;
    }
    *isa = (dn_isa)i;
    if (!dn_kernels_for(*isa)) {
        printf("%s: %s kernels not available here (%s); skipped\n", prog, name,
               dn_isa_available(*isa) ? "not built" : "this CPU or build lacks them");
        return 77;
    }
    return 0;
}

#endif
