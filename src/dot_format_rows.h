/* SPDX-License-Identifier: MIT */
/*
 * dot_format_rows.h: an ISA's mat_vec_rows_act entry from its row loop.
 * Included by src/x86/dot_avx2.c and src/neon/dot_neon.c after their
 * mv_rows(c, type, r0, r1, out, bad), the loop over rows [r0, r1) of one
 * format with the format a constant.
 */
#ifndef DN_DOT_FORMAT_ROWS_H
#define DN_DOT_FORMAT_ROWS_H

#include "dot_kernels.h"

/* The row loop instantiated once per format. Each is its own function:
   merged into the switch below as one function, GCC allocated the loops'
   registers together and Q8_0's product took 2 % more instructions
   (callgrind, 1024 x 4096, Sub32, one word). */
static __attribute__((noinline)) dn_status mv_q4_0(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q4_0, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q4_1(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q4_1, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q5_0(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q5_0, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q5_1(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q5_1, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q8_0(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q8_0, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q2_k(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q2_K, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q3_k(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q3_K, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q4_k(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q4_K, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q5_k(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q5_K, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_q6_k(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                   float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_Q6_K, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_iq4_nl(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                     float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_IQ4_NL, r0, r1, out, bad);
}
static __attribute__((noinline)) dn_status mv_iq4_xs(const dn_mv_ctx *c, size_t r0, size_t r1,
                                                     float *out, size_t *bad)
{
    return mv_rows(c, DN_TYPE_IQ4_XS, r0, r1, out, bad);
}

/* The table's entry: the format's row loop, the reference where the
   activation side is not usable; mat_vec_rows prepares that side for its
   call alone. */
static dn_status mat_vec_rows_act(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                  const dn_act_row *act, dn_act_scaling scaling,
                                  const dn_dot_act *a, size_t r0, size_t r1, float *out,
                                  size_t *bad)
{
    if (!a->usable) return dn_ref_rows_pieces(type, w, rows, n, act, scaling, r0, r1, out, bad);
    const dn_mv_ctx c = dn_mv_ctx_of(type, w, rows, n, act, scaling, a);
    switch (type) {
    case DN_TYPE_Q4_0: return mv_q4_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q4_1: return mv_q4_1(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_0: return mv_q5_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_1: return mv_q5_1(&c, r0, r1, out, bad);
    case DN_TYPE_Q8_0: return mv_q8_0(&c, r0, r1, out, bad);
    case DN_TYPE_Q2_K: return mv_q2_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q3_K: return mv_q3_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q4_K: return mv_q4_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q5_K: return mv_q5_k(&c, r0, r1, out, bad);
    case DN_TYPE_Q6_K: return mv_q6_k(&c, r0, r1, out, bad);
    case DN_TYPE_IQ4_NL: return mv_iq4_nl(&c, r0, r1, out, bad);
    case DN_TYPE_IQ4_XS: return mv_iq4_xs(&c, r0, r1, out, bad);
    default: return dn_ref_rows_pieces(type, w, rows, n, act, scaling, r0, r1, out, bad);
    }
}

#endif
