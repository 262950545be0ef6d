/*
 * The attention module on NEON. No kernel yet: every entry is NULL, so the
 * dispatcher runs the references (src/attention.c), which are the
 * definitions, and the bits are the same.
 */
#include "../attention_kernels.h"

const dn_attention_kernels dn_attention_neon = {
    .scores = NULL,
};
