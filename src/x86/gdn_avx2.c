/*
 * The Gated-DeltaNet module's AVX2 kernels, bit for bit the references of
 * src/gdn.c. Entries left NULL run the references.
 */
#include "../gdn_kernels.h"

const dn_gdn_kernels dn_gdn_avx2 = {0};
