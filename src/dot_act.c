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
#include "bits.h"
#include "dispatch.h"
#include "pool.h"
#include "sizes.h"

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

/* a's arrays carved from mem (z->total zeroed bytes, any alignment); the
   per-16 magnitudes (the last part) in *amax16. */
static void carve(dn_dot_act *a, const act_sizes *z, uint8_t *mem, int32_t **amax16)
{
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
}

/* One pass over the codes (the active ISA's code_sums): int8 copies, sums
   and magnitudes per 16, the sums per 32; a->narrow. */
static void code_sums(dn_dot_act *a, const dn_act_row *act, int32_t *amax16)
{
    const dn_quant_kernels *k = dn_kernels_active()->quant;
    a->narrow = k->code_sums(act->codes, a->n, a->c8, a->bs16, a->bs32, amax16);
    for (size_t u = 0; u < a->n / 16; u++)
        a->bs16n[u] = (int16_t)a->bs16[u]; /* |sum| <= 16 * 127 when narrow */
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
                a->S[k] = (double)sc.m * dn_pow2d(sc.e); /* exact: |e| <= 600, m < 2^8 */
        }
        a->Sinf[k] = a->S[k] != 0.0 ? a->S[k] : INFINITY;
        a->P[k] = a->block == 32 && k < a->nblk ? (double)a->bs32[k] * a->S[k] : 0.0;
    }
}

/* 2. for the group's blocks [k0, k1) of a 256-element format, whose
   exponents start at emin and span at most 30: A and B are exact in double.
   U = sum_k amax_k m_k 2^(e_k - emin) fits 64 bits: each term is below
   2^15 2^8 2^30 = 2^53 (|code| <= 2^15, m <= 255), the 8 below 2^56; and
   c U < 2^52 exactly when U <= (2^52 - 1) / c for a positive integer c. */
static int group_sums_exact(const dn_dot_act *a, const dn_act_row *act, dn_type type,
                            const int32_t *amax16, size_t k0, size_t k1, int32_t emin)
{
    const uint64_t cm = 32 * (uint64_t)dn_block_formats[type].coef_max;
    const uint64_t om = 32 * (uint64_t)dn_block_formats[type].offs_max;
    uint64_t U = 0;
    for (size_t k = k0; k < k1; k++) {
        if (a->S[k] == 0.0) continue;
        int32_t amax = amax16[2 * k] > amax16[2 * k + 1] ? amax16[2 * k] : amax16[2 * k + 1];
        if (!a->narrow && amax < 256) amax = 256; /* a byte plane's codes reach 255 */
        U += ((uint64_t)amax * (uint64_t)act->scales[k].m) << (act->scales[k].e - emin);
    }
    const uint64_t lim = (UINT64_C(1) << 52) - 1;
    return (cm == 0 || U <= lim / cm) && (om == 0 || U <= lim / om);
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
    a->g2e[g] = fok ? dn_pow2d(emin) : 0.0;
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
    a->glim[g] = ok ? dn_pow2d(emin + 42) : 0.0;
    group_factors(a, act, type, g, k0, k1, emin, ok);
    int mbits = 0;
    while ((1 << mbits) <= mmax) mbits++;
    a->gfac[g] = dn_pow2d(52 - 11 - mbits);
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
    uint8_t *mem = calloc(1, z.total);
    if (!mem) return DN_ERR_OUT_OF_MEMORY;
    a->mem = mem;
    carve(a, &z, mem, &amax16);
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

/* ---- the prepared activation (decodenum/dot.h's dn_act) ------------------------- */

/* The quantized formats, in the order of their slots' search. */
static const dn_type act_types[] = {DN_TYPE_Q4_0, DN_TYPE_Q4_1, DN_TYPE_Q5_0,   DN_TYPE_Q5_1,
                                    DN_TYPE_Q8_0, DN_TYPE_Q2_K, DN_TYPE_Q3_K,   DN_TYPE_Q4_K,
                                    DN_TYPE_Q5_K, DN_TYPE_Q6_K, DN_TYPE_IQ4_NL, DN_TYPE_IQ4_XS};
#define ACT_NTYPES (sizeof act_types / sizeof act_types[0])

/* What a Sub32 group's facts (group_facts) read of a format: its block size,
   its coefficient bounds (256-element formats) and its factor bound. Formats
   with the same key share one slot of facts. */
static int same_facts(dn_type a, dn_type b)
{
    const dn_block_format *fa = &dn_block_formats[a], *fb = &dn_block_formats[b];
    if (fa->elements != fb->elements || dn_dot_factor_max(a) != dn_dot_factor_max(b)) return 0;
    return fa->elements != 256 || (fa->coef_max == fb->coef_max && fa->offs_max == fb->offs_max);
}

/* Every type's slot of facts in tab (-1: not a quantized format); returns
   the number of slots. */
static int slot_table(int8_t tab[DN_TYPE_LIMIT])
{
    int n = 0;
    memset(tab, -1, DN_TYPE_LIMIT);
    for (size_t i = 0; i < ACT_NTYPES; i++) {
        int s = -1;
        for (size_t j = 0; j < i && s < 0; j++)
            if (same_facts(act_types[i], act_types[j])) s = tab[act_types[j]];
        tab[act_types[i]] = (int8_t)(s < 0 ? n++ : s);
    }
    return n;
}

static size_t up64(size_t b) { return (b + 63) & ~(size_t)63; }

/* One column's parts, in bytes (each a multiple of 64): the quantizations
   (codes, scales, their prepared side) and the slots' group facts. */
typedef struct col_parts {
    int quants; /* 1, or 2 (per block with whole 256-element blocks) */
    size_t codes, scales[2], side[2], slot, total;
} col_parts;

static col_parts parts_of(size_t n, dn_act_scaling scaling, int slots)
{
    col_parts p;
    const size_t ngroups = (n + DN_GROUP - 1) / DN_GROUP;
    p.quants = scaling == DN_ACT_PER_BLOCK && n % 256 == 0 ? 2 : 1;
    p.codes = up64(2 * n);
    p.scales[0] = up64(n / 32 * sizeof(dn_act_scale));
    p.scales[1] = up64(n / 256 * sizeof(dn_act_scale));
    /* the prepared sides without group facts (those are the slots') */
    p.side[0] = up64(sizes_of(n, n / 32, ngroups, DN_ACT_PER_BLOCK).total);
    p.side[1] = up64(sizes_of(n, n / 256, ngroups, DN_ACT_PER_BLOCK).total);
    p.slot = scaling == DN_ACT_SUB32
                 ? 3 * up64(8 * ngroups) + 2 * up64(ngroups) + up64(n / 32 * 2) + up64(n / 32 * 4)
                 : 0;
    p.total = p.codes + p.scales[0] + p.side[0] + (size_t)slots * p.slot;
    if (p.quants == 2) p.total += p.codes + p.scales[1] + p.side[1];
    return p;
}

/* The header and the column records, before the columns' parts. */
static int head_bytes(size_t cols, size_t *out)
{
    size_t recs;
    if (!dn_size_mul(cols, sizeof(dn_act_col), &recs)) return 0;
    return dn_size_add(up64(sizeof(dn_act)) + 64, up64(recs), out); /* + 64: alignment */
}

dn_status dn_act_size(size_t n, size_t cols, dn_act_scaling scaling, dn_words words, size_t *bytes)
{
    if (!bytes || n == 0 || n % DN_ACT_BLOCK != 0 || n > UINT32_MAX || n > SIZE_MAX / 64 ||
        cols == 0 || (scaling != DN_ACT_SUB32 && scaling != DN_ACT_PER_BLOCK) ||
        (words != DN_WORDS_ONE && words != DN_WORDS_TWO))
        return DN_ERR_INVALID_ARGUMENT;
    size_t head, all;
    int8_t tab[DN_TYPE_LIMIT];
    const int slots = slot_table(tab);
    if (!head_bytes(cols, &head) || !dn_size_mul(cols, parts_of(n, scaling, slots).total, &all) ||
        !dn_size_add(head, all, bytes))
        return DN_ERR_INVALID_ARGUMENT;
    return DN_OK;
}

/* A slot's group facts carved from p (parts_of's p.slot bytes). */
static void carve_groups(dn_dot_act *g, uint8_t *p, size_t n)
{
    const size_t ngroups = (n + DN_GROUP - 1) / DN_GROUP;
    g->glim = (double *)p;
    p += up64(8 * ngroups);
    g->gfac = (double *)p;
    p += up64(8 * ngroups);
    g->g2e = (double *)p;
    p += up64(8 * ngroups);
    g->gok = p;
    p += up64(ngroups);
    g->fok = p;
    p += up64(ngroups);
    g->f16 = (int16_t *)p;
    p += up64(n / 32 * 2);
    g->fbs = (int32_t *)p;
}

/* One quantization of column x (block 32 or 256) and its prepared side. */
static dn_status prepare_quant(const float *x, size_t n, size_t block, dn_act_scaling scaling,
                               dn_words words, dn_act_row *row, dn_dot_act *side, uint8_t **p,
                               const col_parts *z, int32_t **amax16, size_t *bad)
{
    row->codes = (int16_t *)*p;
    *p += z->codes;
    row->scales = (dn_act_scale *)*p;
    *p += z->scales[block == 256];
    row->n = n;
    dn_status st = scaling == DN_ACT_SUB32 ? dn_quantize(x, n, words, row, bad)
                                           : dn_quantize_blocks(x, n, block, words, row, bad);
    if (st != DN_OK) return st;
    memset(side, 0, sizeof *side);
    side->n = n;
    side->block = (uint32_t)block;
    side->nblk = n / block;
    const act_sizes s = sizes_of(n, n / block, (n + DN_GROUP - 1) / DN_GROUP, DN_ACT_PER_BLOCK);
    carve(side, &s, *p, amax16);
    *p += z->side[block == 256];
    code_sums(side, row, *amax16);
    if (!side->narrow) byte_planes(side, row);
    block_scales(side, row, *amax16, s.S / 8);
    return DN_OK;
}

/* Column c of x: its quantizations, sides and (Sub32) the slots' facts,
   each only where a served format (want) reads it; a skipped part keeps its
   place (and its zero bytes). */
static dn_status prepare_col(dn_act *x, size_t c, const float *xc, uint8_t *p, const col_parts *zp,
                             const uint8_t want[DN_TYPE_LIMIT], size_t *bad)
{
    const col_parts z = *zp;
    dn_act_col *col = &x->col[c];
    int32_t *amax16 = NULL;
    for (int q = 0; q < z.quants; q++) {
        int used = x->quants == 1; /* Sub32, or one block size: every format reads it */
        for (int t = 0; t < DN_TYPE_LIMIT && !used; t++)
            used = want[t] && x->slot[t] >= 0 && (dn_block_formats[t].elements == 256) == q;
        if (!used) { /* per block: no served format of this block size */
            p += z.codes + z.scales[q] + z.side[q];
            continue;
        }
        size_t at = 0;
        dn_status st = prepare_quant(xc, x->n, q ? 256 : 32, x->scaling, x->words, &col->row[q],
                                     &col->side[q], &p, &z, &amax16, &at);
        if (st != DN_OK) {
            if (bad) *bad = c * x->n + at;
            return st;
        }
    }
    if (x->scaling != DN_ACT_SUB32) return DN_OK;
    const size_t ngroups = (x->n + DN_GROUP - 1) / DN_GROUP;
    for (size_t i = 0; i < ACT_NTYPES; i++) {
        const int s = x->slot[act_types[i]];
        dn_dot_act *g = &col->slot[s];
        if (!want[act_types[i]] || g->gok)
            continue; /* not served, or filled by an earlier format */
        *g = col->side[0];
        carve_groups(g, p + (size_t)s * z.slot, x->n);
        for (size_t gi = 0; gi < ngroups; gi++)
            group_facts(g, &col->row[0], act_types[i], amax16, gi);
    }
    return DN_OK;
}

/* A pooled preparation: task t prepares columns [cols t / tasks,
   cols (t + 1) / tasks) in order and stops at its first failure. */
typedef struct prep_job {
    dn_act *h;
    const float *x;
    uint8_t *part;
    const col_parts *z;
    const uint8_t *want;
    size_t cols, tasks;
    dn_status st[DN_POOL_STACK_TASKS];
    size_t bad[DN_POOL_STACK_TASKS];
} prep_job;

static void prep_task(size_t t, void *ctx)
{
    prep_job *j = (prep_job *)ctx;
    const size_t n = j->h->n, c1 = j->cols * (t + 1) / j->tasks;
    j->st[t] = DN_OK;
    for (size_t c = j->cols * t / j->tasks; c < c1 && j->st[t] == DN_OK; c++)
        j->st[t] = prepare_col(j->h, c, j->x + c * n, j->part + c * j->z->total, j->z, j->want,
                               &j->bad[t]);
}

/* The columns of h on pool (NULL: the calling thread, column by column).
   The columns are independent, so the bits do not depend on the pool; the
   failure reported is the first column's, as without one: the tasks hold
   ordered ranges, and the first task that failed stopped at its first
   failing column. */
static dn_status prepare_cols(dn_act *h, const float *x, uint8_t *part, const col_parts *z,
                              const uint8_t want[DN_TYPE_LIMIT], dn_pool *pool, size_t *bad)
{
    const size_t per_pool = (size_t)4 * dn_pool_threads(pool); /* 4 for NULL: one thread */
    prep_job j = {h, x, part, z, want, h->cols, 1, {DN_OK}, {0}};
    if (per_pool > 4) j.tasks = h->cols < per_pool ? h->cols : per_pool;
    if (j.tasks > DN_POOL_STACK_TASKS) j.tasks = DN_POOL_STACK_TASKS;
    dn_pool_run(pool, j.tasks, prep_task, &j);
    for (size_t t = 0; t < j.tasks; t++)
        if (j.st[t] != DN_OK) {
            if (bad) *bad = j.bad[t];
            return j.st[t];
        }
    return DN_OK;
}

/* dn_act_prepare for the formats want names (each a quantized format x can
   serve: the callers checked), its columns on pool; the others' row_bytes
   stay 0, so a product refuses them. */
static dn_status prepare_some(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                              dn_words words, const uint8_t want[DN_TYPE_LIMIT], void *mem,
                              size_t bytes, dn_pool *pool, dn_act **act, size_t *bad)
{
    size_t need = 0;
    dn_status st = dn_act_size(n, cols, scaling, words, &need);
    if (st != DN_OK) return st;
    if (!x || !mem || bytes < need) return DN_ERR_INVALID_ARGUMENT;
    memset(mem, 0, need);
    uint8_t *p = dn_line_up(mem);
    dn_act *h = (dn_act *)p;
    h->magic = DN_ACT_MAGIC;
    h->n = n, h->cols = cols, h->scaling = scaling, h->words = words;
    const col_parts z = parts_of(n, scaling, slot_table(h->slot));
    h->quants = z.quants;
    for (int t = 0; t < DN_TYPE_LIMIT; t++) {
        const size_t be = dn_block_formats[t].elements;
        const int q = scaling == DN_ACT_PER_BLOCK && be == 256;
        if (!want[t] || h->slot[t] < 0 || q >= h->quants || n % be != 0) continue;
        h->row_bytes[t] = n / be * dn_block_formats[t].bytes; /* < 2^32 / 32 * 210 */
    }
    h->col = (dn_act_col *)(p + up64(sizeof(dn_act)));
    uint8_t *part = (uint8_t *)h->col + up64(cols * sizeof(dn_act_col));
    st = prepare_cols(h, x, part, &z, want, pool, bad);
    if (st != DN_OK) {
        h->magic = 0; /* not a prepared activation */
        return st;
    }
    *act = h;
    return DN_OK;
}

/* want[t] = 1 for each of types[0 .. count), after the checks of
   dn_act_prepare_for (the formats x of n elements can serve). */
static dn_status wanted(const dn_type *types, size_t count, size_t n, uint8_t want[DN_TYPE_LIMIT])
{
    int8_t tab[DN_TYPE_LIMIT];
    slot_table(tab);
    memset(want, 0, DN_TYPE_LIMIT);
    if (!types || count == 0) return DN_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < count; i++)
        if ((unsigned)types[i] >= DN_TYPE_LIMIT || tab[types[i]] < 0)
            return DN_ERR_UNSUPPORTED_TYPE;
    for (size_t i = 0; i < count; i++) {
        const size_t be = dn_block_formats[types[i]].elements;
        /* no whole blocks in n (per block: exactly when there is no 256
           quantization) */
        if (n % be != 0) return DN_ERR_INVALID_ARGUMENT;
        want[types[i]] = 1;
    }
    return DN_OK;
}

/* The three public preparations in one: the formats types names (every
   format when none_is_all and none are named), the columns on pool. The
   checks in order: act, the sizes, the formats. */
static dn_status prepare_named(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                               dn_words words, const dn_type *types, size_t type_count,
                               int none_is_all, void *mem, size_t bytes, dn_pool *pool,
                               dn_act **act, size_t *bad)
{
    if (!act) return DN_ERR_INVALID_ARGUMENT;
    *act = NULL;
    size_t need = 0;
    dn_status st = dn_act_size(n, cols, scaling, words, &need);
    if (st != DN_OK) return st;
    uint8_t want[DN_TYPE_LIMIT];
    memset(want, 1, sizeof want);
    if (types || type_count || !none_is_all) st = wanted(types, type_count, n, want);
    if (st != DN_OK) return st;
    return prepare_some(x, n, cols, scaling, words, want, mem, bytes, pool, act, bad);
}

dn_status dn_act_prepare(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                         dn_words words, void *mem, size_t bytes, dn_act **act, size_t *bad)
{
    return prepare_named(x, n, cols, scaling, words, NULL, 0, 1, mem, bytes, NULL, act, bad);
}

dn_status dn_act_prepare_for(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                             dn_words words, const dn_type *types, size_t type_count, void *mem,
                             size_t bytes, dn_act **act, size_t *bad)
{
    return prepare_named(x, n, cols, scaling, words, types, type_count, 0, mem, bytes, NULL, act,
                         bad);
}

dn_status dn_act_prepare_pool(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                              dn_words words, const dn_type *types, size_t type_count, void *mem,
                              size_t bytes, dn_pool *pool, dn_act **act, size_t *bad)
{
    return prepare_named(x, n, cols, scaling, words, types, type_count, 1, mem, bytes, pool, act,
                         bad);
}

/* One malloc of dn_act_size bytes, prepared by prepare_some for want. */
static dn_status create_some(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                             dn_words words, const uint8_t want[DN_TYPE_LIMIT], dn_act **act,
                             size_t *bad)
{
    size_t bytes = 0;
    if (!act) return DN_ERR_INVALID_ARGUMENT;
    *act = NULL;
    dn_status st = dn_act_size(n, cols, scaling, words, &bytes);
    if (st != DN_OK) return st;
    if (!x) return DN_ERR_INVALID_ARGUMENT;
    void *mem = malloc(bytes);
    if (!mem) return DN_ERR_OUT_OF_MEMORY;
    st = prepare_some(x, n, cols, scaling, words, want, mem, bytes, NULL, act, bad);
    if (st != DN_OK) {
        free(mem);
        return st;
    }
    (*act)->mem = mem;
    return DN_OK;
}

dn_status dn_act_create(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                        dn_words words, dn_act **act, size_t *bad)
{
    uint8_t want[DN_TYPE_LIMIT];
    memset(want, 1, sizeof want);
    return create_some(x, n, cols, scaling, words, want, act, bad);
}

dn_status dn_act_create_for(const float *x, size_t n, size_t cols, dn_act_scaling scaling,
                            dn_words words, const dn_type *types, size_t type_count, dn_act **act,
                            size_t *bad)
{
    uint8_t want[DN_TYPE_LIMIT];
    if (act) *act = NULL;
    dn_status st = wanted(types, type_count, n, want);
    return st != DN_OK ? st : create_some(x, n, cols, scaling, words, want, act, bad);
}

void dn_act_destroy(dn_act *act)
{
    if (act && act->magic == DN_ACT_MAGIC && act->mem) {
        act->magic = 0;
        free(act->mem);
    }
}
