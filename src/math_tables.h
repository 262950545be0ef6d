/* SPDX-License-Identifier: MIT */
/* math_tables.h: the transcendentals' tables and coefficients, generated
   into src/math_tables.c by tools/gen_math_tables.py (docs/numerics.md 8). */
#ifndef DN_MATH_TABLES_H
#define DN_MATH_TABLES_H

#include <stdint.h>

typedef struct dn_math_consts {
    float exp_inv_ln2_64;      /* 64/ln2 rounded */
    float exp_ln2_64_hi;       /* C1: ln2/64 to 10 significant bits */
    float exp_ln2_64_lo;       /* C2: ln2/64 - C1 rounded */
    float exp_c2, exp_c3;      /* e^r = 1 + r + c2 r^2 + c3 r^3 */
    float ln2_hi;              /* ln2 to 16 significant bits */
    float ln2_lo;              /* ln2 - ln2_hi rounded */
    float ln_a2, ln_a3, ln_a4; /* ln(1+s) = s + s^2 (a2 + a3 s + a4 s^2) */
} dn_math_consts;

extern const dn_math_consts dn_math_c;
/* 2^(j/64): fraction of T_hi in bits 0-22, T_lo = (signed bits 23-31) * 2^-32 */
extern const uint32_t dn_exp_table[64];
/* 2^(i/8) hi, lo and 2^(i/64) hi, lo, i = 0..7: dn_exp_table's words rebuilt
   by the AVX2 kernels (math_avx2.c, exp_table) */
extern const float dn_exp_factors[4][8];
/* ln: K_j/128, ln(c_j) = lhi + llo, j = top 7 fraction bits of m */
extern const float dn_ln_invc[128];
extern const float dn_ln_lhi[128];
extern const float dn_ln_llo[128];
/* seeds of 1/m (m in [1,2), top 7 fraction bits) and 1/sqrt(m) (m in [1,4),
   64 * parity + top 6 fraction bits) */
extern const float dn_recip_seed[128];
extern const float dn_rsqrt_seed[128];

/* tanh, gelu_tanh, gelu (docs/numerics.md 20) */
typedef struct dn_act_consts {
    float tanh_p[5];            /* tanh x = x + x^3 (p0 + p1 x^2 + ... + p4 x^8), |x| < 9/16 */
    float gelu_k_hi, gelu_k_lo; /* 2 sqrt(2/pi) = k_hi + k_lo */
    float gelu_a_hi, gelu_a_lo; /* 0.044715 = a_hi + a_lo */
    float gelu_p[12];           /* erfc(a/sqrt2)/2 = e^(-a^2/2) tau P(u - 7/16), degree 11 */
} dn_act_consts;

extern const dn_act_consts dn_act_c;
/* sin, cos: pi/32 (rounded; 12 bits + the rest) and the polynomials
   cos(r) - 1 = r^2 (c2 + c4 r^2), sin(r) - r = r^3 (s3 + s5 r^2) */
typedef struct dn_trig_consts {
    float pi32, pi32_hi, pi32_lo;
    float cos_c2, cos_c4, sin_s3, sin_s5;
} dn_trig_consts;

extern const dn_trig_consts dn_trig_c;
/* sin(j*pi/32), j = 0..63: 24 bits + rest, 12 bits + rest (cos: entry j + 16) */
extern const float dn_trig_s24[64];
extern const float dn_trig_s24_lo[64];
extern const float dn_trig_s12[64];
extern const float dn_trig_s12_lo[64];
/* floor(2^(b - 55)/pi) mod 2^96 per biased exponent b = 64..254 (entry b - 64) */
extern const uint32_t dn_trig_invpi[191][3];

#endif
