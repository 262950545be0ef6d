/* SPDX-License-Identifier: MIT */
/*
 * fuzz_input.h: how the harnesses read their input and end a run. Bytes are
 * taken in order and a byte past the end reads as zero, so every input,
 * however short, is a whole case; multi-byte values are little-endian.
 */
#ifndef DN_FUZZ_INPUT_H
#define DN_FUZZ_INPUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A failed check ends the run; libFuzzer keeps the input that made it. */
#define CHECK(c)           \
    do {                   \
        if (!(c)) abort(); \
    } while (0)

typedef struct input {
    const uint8_t *p;
    size_t left;
} input;

static inline uint8_t byte(input *in)
{
    if (!in->left) return 0;
    in->left--;
    return *in->p++;
}

/* n bytes into to, zeros past the end. */
static inline void bytes(input *in, uint8_t *to, size_t n)
{
    size_t k = n < in->left ? n : in->left;
    memcpy(to, in->p, k);
    memset(to + k, 0, n - k);
    in->p += k;
    in->left -= k;
}

static inline uint16_t half(input *in)
{
    uint16_t u = byte(in);
    return (uint16_t)(u | byte(in) << 8);
}

static inline uint32_t word32(input *in)
{
    uint32_t u = half(in);
    return u | (uint32_t)half(in) << 16;
}

/* Four bytes as an f32's bits: infinities, NaNs and denormals included. */
static inline float f32(input *in)
{
    uint32_t u = word32(in);
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#endif
