/* SPDX-License-Identifier: MIT */
/*
 * logits_digest.h: the digest `decodenum decode` prints, FNV-1a 64 over
 * every step's logits, each logit's bits as four bytes, low byte first.
 * bench/llama_logits.c includes it too, so the two engines' digests are one
 * function's and equal digests mean bit-identical logits.
 */
#ifndef DECODE_LOGITS_DIGEST_H
#define DECODE_LOGITS_DIGEST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DD_DIGEST_START 0xCBF29CE484222325ull /* FNV-1a 64's offset basis */

/* d continued over the n logits x. */
static inline uint64_t dd_digest_logits(uint64_t d, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        for (int b = 0; b < 4; b++) {
            d ^= (u >> (8 * b)) & 0xFFu;
            d *= 0x100000001B3ull; /* FNV-1a 64's prime */
        }
    }
    return d;
}

#endif
