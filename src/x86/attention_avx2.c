/*
 * The attention module on AVX2 (+F16C): each kernel reproduces its reference
 * in src/attention.c bit for bit. Entries left NULL run the reference.
 */
#include "../attention_kernels.h"

const dn_attention_kernels dn_attention_avx2 = {
    .scores = NULL,
};
