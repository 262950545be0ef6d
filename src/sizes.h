/* SPDX-License-Identifier: MIT */
/*
 * sizes.h: the size arithmetic every public entry point checks before it
 * allocates or indexes. A product of caller-supplied counts that does not
 * fit size_t is an invalid argument (the caller's request names more memory
 * than exists), never a wrapped allocation or an out-of-memory status.
 */
#ifndef DN_SIZES_H
#define DN_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* *out = a * b; 0 when the product does not fit size_t (*out untouched). */
static inline int dn_size_mul(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* *out = a + b; 0 when the sum does not fit size_t (*out untouched). */
static inline int dn_size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}

/* A cache line: where working memory a kernel reads 64 bytes a load
   should start (a load that straddles two lines costs a second one). */
#define DN_LINE 64

/* The first address at or after p that starts a line (the block holding p
   must have DN_LINE - 1 bytes to spare). */
static inline void *dn_line_up(void *p)
{
    return (void *)(((uintptr_t)p + DN_LINE - 1) & ~(uintptr_t)(DN_LINE - 1));
}

/* ceil(a / b) for b > 0, without forming a + b - 1. */
static inline size_t dn_size_div_up(size_t a, size_t b) { return a / b + (a % b != 0); }

#endif
