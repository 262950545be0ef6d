/* SPDX-License-Identifier: MIT */
/*
 * dot_act.c: what the dot kernels of every ISA share: the activation side of
 * a matrix-vector product, computed once per call (O(n)).
 *
 * The fast path of a piece (docs/dot.md, "Design notes") needs two facts the
 * activation alone decides, per Sub32 group:
 *
 *  1. The reference's exact sum keeps every term. Its window reaches
 *     DN_SUM_WINDOW = 64 places below the largest term's exponent; a term's
 *     exponent is a weight scale's (a binary16: -24..5) plus its activation
 *     block's e. If the e of the group's blocks that have a non-zero code
 *     span at most 30, every non-zero term lies within 29 + 30 = 59 < 64
 *     places of every other, so the reference's sum is the exact sum and the
 *     piece is RN32(exact value). (Blocks whose codes are all zero give zero
 *     terms, which the exact sum ignores.) A per-block piece has one
 *     activation block: spread 0.
 *
 *  2. For the 256-element formats (one weight scale pair per group), the
 *     sums A = sum_k C_k S_k and B = sum_k O_k S_k (S_k = m_k 2^e_k) are exact
 *     in double: every term is a multiple of 2^emin, and
 *     sum |C_k| S_k <= 32 * coefmax * sum_k amax_k m_k 2^e_k < 2^(emin + 52)
 *     is checked here with integers (amax_k the block's largest |code|, at
 *     least 256 when the codes are wide: the AVX2 kernels then sum each of
 *     two byte planes, code = 256 hi + lo, whose codes stay below 256).
 *
 *  3. When the group's scales are close (every f_k = m_k 2^(e_k - emin) at
 *     most dn_dot_factor_max(type)) and the codes narrow, S_k = f_k 2^emin with
 *     small integers f_k: a kernel may weight each chunk's integer sum by
 *     sc_k f_k in int16 and sum the group in integers (fok, f16, fbs, g2e).
 *
 * The rest (the weight side) is checked per row by the kernels.
 */
#include "block_format.h"
#include "dot_kernels.h"
#include "bits.h"
#include "wide128.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rounded-up sizes of a's parts: one allocation, 32-byte aligned parts,
   zero past the row. */
typedef struct act_sizes {
    size_t c8, bs16n, bs16, bs32, S, g, gok, amax, f16, fbs, total;
} act_sizes;

static act_sizes sizes_of(size_t n, size_t nblk, size_t ngroups, dn_act_scaling scaling)
{
    const int sub32 = scaling == DN_ACT_SUB32;
    act_sizes z;
    z.c8 = (n + 31) & ~(size_t)31;
    z.bs16n = ((n / 16) * 2 + 31) & ~(size_t)31;
    z.bs16 = ((n / 16) * 4 + 31) & ~(size_t)31;
    z.bs32 = ((n / 32) * 4 + 31) & ~(size_t)31;
    z.S = (nblk * 8 + 63) & ~(size_t)63; /* whole groups of 8 */
    z.g = sub32 ? (ngroups * 8 + 31) & ~(size_t)31 : 0;
    z.gok = sub32 ? (ngroups + 31) & ~(size_t)31 : 0;
    z.amax = ((n / 16) * 4 + 31) & ~(size_t)31;
    z.f16 = sub32 ? (ngroups * 16 + 31) & ~(size_t)31 : 0;
    z.fbs = 2 * z.f16;
    z.total = 3 * z.c8 + 3 * z.bs16n + z.bs16 + 3 * z.bs32 + 3 * z.S + 3 * z.g + 2 * z.gok +
              z.amax + z.f16 + z.fbs + 64;
    return z;
}

/* a's arrays carved from one zeroed allocation; the per-16 magnitudes (the
   last part) in *amax16. */
static int carve(dn_dot_act *a, const act_sizes *z, int32_t **amax16)
{
    uint8_t *mem = calloc(1, z->total);
    if (!mem) return 0;
    a->mem = mem;
    uint8_t *p = (uint8_t *)(((uintptr_t)mem + 31) & ~(uintptr_t)31);
    a->c8 = (int8_t *)p;
    p += z->c8;
    a->bs16n = (int16_t *)p;
    p += z->bs16n;
    a->bs16 = (int32_t *)p;
    p += z->bs16;
    a->bs32 = (int32_t *)p;
    p += z->bs32;
    a->S = (double *)p;
    p += z->S;
    a->Sinf = (double *)p;
    p += z->S;
    a->P = (double *)p;
    p += z->S;
    a->glim = (double *)p;
    p += z->g;
    a->gfac = (double *)p;
    p += z->g;
    a->gok = p;
    p += z->gok;
    a->g2e = (double *)p;
    p += z->g;
    a->fok = p;
    p += z->gok;
    a->f16 = (int16_t *)p;
    p += z->f16;
    a->fbs = (int32_t *)p;
    p += z->fbs;
    a->hi8 = (int8_t *)p;
    p += z->c8;
    a->lo8 = p;
    p += z->c8;
    a->bs16hi = (int16_t *)p;
    p += z->bs16n;
    a->bs16lo = (int16_t *)p;
    p += z->bs16n;
    a->bs32hi = (int32_t *)p;
    p += z->bs32;
    a->bs32lo = (int32_t *)p;
    p += z->bs32;
    *amax16 = (int32_t *)p;
    return 1;
}

/* One pass over the codes: int8 copies, sums and magnitudes per 16, the
   sums per 32; a->narrow. */
static void code_sums(dn_dot_act *a, const dn_act_row *act, int32_t *amax16)
{
    const size_t n = a->n;
    int narrow = 1;
    for (size_t u = 0; u < n / 16; u++) {
        const int16_t *c = act->codes + 16 * u;
        int32_t sum = 0, mx = 0;
        for (int i = 0; i < 16; i++) {
            int32_t v = c[i], av = v < 0 ? -v : v;
            sum += v;
            mx = av > mx ? av : mx;
            a->c8[16 * u + i] = (int8_t)v; /* meaningful when narrow */
        }
        a->bs16[u] = sum;
        a->bs16n[u] = (int16_t)sum; /* |sum| <= 16 * 127 when narrow */
        amax16[u] = mx;
        narrow &= mx <= 127;
    }
    a->narrow = narrow;
    for (size_t u = 0; u < n / 32; u++) a->bs32[u] = a->bs16[2 * u] + a->bs16[2 * u + 1];
}

/* Wide codes as two byte planes, code = 256 hi + lo, with their sums. */
static void byte_planes(dn_dot_act *a, const dn_act_row *act)
{
    const size_t n = a->n;
    for (size_t u = 0; u < n / 16; u++) {
        int32_t sh = 0, sl = 0;
        for (size_t i = 16 * u; i < 16 * u + 16; i++) {
            int32_t v = act->codes[i], lo = v & 255, hi = (v - lo) / 256; /* v = 256 hi + lo */
            a->hi8[i] = (int8_t)hi;
            a->lo8[i] = (uint8_t)lo;
            sh += hi;
            sl += lo;
        }
        a->bs16hi[u] = (int16_t)sh; /* |sh| <= 16 * 128 */
        a->bs16lo[u] = (int16_t)sl; /* sl <= 16 * 255 */
    }
    for (size_t u = 0; u < n / 32; u++) {
        a->bs32hi[u] = a->bs16hi[2 * u] + a->bs16hi[2 * u + 1];
        a->bs32lo[u] = a->bs16lo[2 * u] + a->bs16lo[2 * u + 1];
    }
}

/* S, Sinf and P over `slots` (whole groups of 8), and the usable flag. */
static void block_scales(dn_dot_act *a, const dn_act_row *act, const int32_t *amax16, size_t slots)
{
    a->usable = 1;
    const size_t per16 = a->block / 16;
    for (size_t k = 0; k < slots; k++) {
        a->S[k] = 0.0;
        if (k < a->nblk) {
            int32_t amax = 0;
            for (size_t u = k * per16; u < (k + 1) * per16; u++)
                amax = amax16[u] > amax ? amax16[u] : amax;
            dn_act_scale sc = act->scales[k];
            if (amax != 0 && (sc.e < -600 || sc.e > 600))
                a->usable = 0;
            else if (amax != 0)
                a->S[k] = ldexp((double)sc.m, sc.e);
        }
        a->Sinf[k] = a->S[k] != 0.0 ? a->S[k] : INFINITY;
        a->P[k] = a->block == 32 && k < a->nblk ? (double)a->bs32[k] * a->S[k] : 0.0;
    }
}

/* 2. for the group's blocks [k0, k1) of a 256-element format, whose
   exponents start at emin: A and B are exact in double. */
static int group_sums_exact(const dn_dot_act *a, const dn_act_row *act, dn_type type,
                            const int32_t *amax16, size_t k0, size_t k1, int32_t emin)
{
    const dn_u128 cm = dn_u128_of(32 * (uint64_t)dn_block_formats[type].coef_max);
    const dn_u128 om = dn_u128_of(32 * (uint64_t)dn_block_formats[type].offs_max);
    dn_u128 U = dn_u128_of(0); /* sum amax_k m_k 2^(e_k - emin) < 8 * 2^53 */
    for (size_t k = k0; k < k1; k++) {
        if (a->S[k] == 0.0) continue;
        int32_t amax = amax16[2 * k] > amax16[2 * k + 1] ? amax16[2 * k] : amax16[2 * k + 1];
        if (!a->narrow && amax < 256) amax = 256; /* a byte plane's codes reach 255 */
        dn_u128 t = dn_u128_mul(dn_u128_of((uint64_t)amax), dn_u128_of((unsigned)act->scales[k].m));
        U = dn_u128_add(U, dn_u128_shl(t, (unsigned)(act->scales[k].e - emin)));
    }
    const dn_u128 lim = dn_u128_of(UINT64_C(1) << 52);
    return dn_u128_lt(dn_u128_mul(cm, U), lim) && dn_u128_lt(dn_u128_mul(om, U), lim);
}

/* 3. the group's integer factors f_k (S_k = f_k 2^emin exactly), fok and g2e. */
static void group_factors(dn_dot_act *a, const dn_act_row *act, dn_type type, size_t g, size_t k0,
                          size_t k1, int32_t emin, int ok)
{
    int fok = ok && a->narrow;
    for (size_t k = k0; fok && k < k1; k++) {
        int32_t sh = act->scales[k].e - emin;
        if (a->S[k] == 0.0)
            a->f16[k] = 0;
        else if (sh > 8 || ((int64_t)act->scales[k].m << sh) > dn_dot_factor_max(type))
            fok = 0;
        else
            a->f16[k] = (int16_t)(act->scales[k].m << sh);
        a->fbs[k] = a->f16[k] * a->bs32[k];
    }
    a->fok[g] = (uint8_t)fok;
    a->g2e[g] = fok ? ldexp(1.0, emin) : 0.0;
}

/* Sub32 group g: the spread (1.), the static exactness of A and B for the
   256-element formats (2.), glim, the factors (3.) and gfac. */
static void group_facts(dn_dot_act *a, const dn_act_row *act, dn_type type, const int32_t *amax16,
                        size_t g)
{
    size_t k0 = g * 8, k1 = k0 + 8 < a->nblk ? k0 + 8 : a->nblk;
    int32_t emin = 0, emax = 0, mmax = 1;
    int any = 0;
    for (size_t k = k0; k < k1; k++) {
        if (a->S[k] == 0.0) continue;
        int32_t e = act->scales[k].e;
        if (!any || e < emin) emin = e;
        if (!any || e > emax) emax = e;
        if (act->scales[k].m > mmax) mmax = act->scales[k].m;
        any = 1;
    }
    int ok = a->usable && (int64_t)emax - emin <= 30;
    if (ok && dn_type_block_elements(type) == 256)
        ok = group_sums_exact(a, act, type, amax16, k0, k1, emin);
    a->gok[g] = (uint8_t)ok;
    a->glim[g] = ok ? ldexp(1.0, emin + 42) : 0.0;
    group_factors(a, act, type, g, k0, k1, emin, ok);
    int mbits = 0;
    while ((1 << mbits) <= mmax) mbits++;
    a->gfac[g] = ldexp(1.0, 52 - 11 - mbits);
}

dn_status dn_dot_act_init(dn_dot_act *a, const dn_act_row *act, dn_type type,
                          dn_act_scaling scaling)
{
    memset(a, 0, sizeof *a);
    a->n = act->n;
    a->block = act->block;
    a->nblk = act->n / act->block;
    const size_t ngroups = (act->n + DN_GROUP - 1) / DN_GROUP;
    const act_sizes z = sizes_of(act->n, a->nblk, ngroups, scaling);
    int32_t *amax16; /* per 16 codes, the largest magnitude */
    if (!carve(a, &z, &amax16)) return DN_ERR_OUT_OF_MEMORY;
    code_sums(a, act, amax16);
    if (!a->narrow) byte_planes(a, act);
    block_scales(a, act, amax16, z.S / 8);
    if (scaling != DN_ACT_SUB32) return DN_OK;
    for (size_t g = 0; g < ngroups; g++) group_facts(a, act, type, amax16, g);
    return DN_OK;
}

void dn_dot_act_free(dn_dot_act *a)
{
    free(a->mem);
    a->mem = NULL;
}
