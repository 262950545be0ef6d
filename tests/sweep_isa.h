/* SPDX-License-Identifier: MIT */
/* sweep_isa.h: what the sweeps share (sweep_math.c, sweep_trig.c): --isa
   NAME and the functions named. */
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

/* The index of the function arg names among names[0 .. count), or -1 after
   the usage on stderr (prog, its synopsis and the names): an argument that
   is neither an option nor a function's name, --help among them, runs no
   sweep. */
static inline int sweep_function(const char *prog, const char *synopsis, const char *arg,
                                 const char *const *names, int count)
{
    for (int f = 0; f < count; f++)
        if (strcmp(arg, names[f]) == 0) return f;
    fprintf(stderr, "%s: unknown argument '%s'\nusage: %s %s\nfunctions:", prog, arg, prog,
            synopsis);
    for (int f = 0; f < count; f++) fprintf(stderr, " %s", names[f]);
    fprintf(stderr, "\n");
    return -1;
}

#endif
