/* SPDX-License-Identifier: MIT */
/*
 * math_groups_avx2.h: the array loops of the AVX2 activations' fast paths
 * (math_act_avx2.h, math_trig_avx2.h): several vectors an iteration under
 * one range test, through a body in one piece (unary_groups) or in two
 * stages (staged_groups), the rare vectors through the whole sequence.
 * Included once, by math_act_avx2.h, after math_avx2.c's vector helpers
 * (tail_load and tail_store among them).
 */
#ifndef DN_MATH_GROUPS_AVX2_H
#define DN_MATH_GROUPS_AVX2_H

/* What the first stage of staged_groups hands the second, a vector's
   three values (an integer one as its bits) */
typedef struct {
    V a, b, c;
} vstage;

/* The array loop of the fast paths whose chains are long: `group` vectors
   (2, 4 or 8) an iteration, through body when none has a lane outside its
   range (off), else each through the whole sequence (slow). gelu's body is
   one chain of ~175 cycles of latency in 245 instructions and ran at ~125
   cycles a vector: the scheduler holds little more than one vector's
   waiting operations, so two chains side by side (DN_INTERLEAVED) fill it.
   Shorter chains gain from more: softplus four (0.87-0.90 of two), tanh
   and gelu_tanh four (0.91-0.94 of two); ln1p loses (1.05) and keeps two
   (docs/log/math.md, "More vectors an iteration"); sigmoid and silu
   (eight), gelu, sin and cos (four) run in two stages (staged_groups
   below). tab is a table the body reads (ln1p's and softplus's paired ln
   tables), NULL for the others. The range
   test is off(v) per vector, or, where the range is one interval that an
   unsigned key of each lane's bits maps to [0, in.key_max] (in.key set),
   the group's largest key compared once (recip, rsqrt, sigmoid, silu). */
typedef struct {
    int (*off)(V); /* lanes outside the range, per vector, or */
    VI (*key)(V);  /* the key; the lanes outside have keys above */
    uint32_t key_max;
} range_test;

static inline int keys_above(VI m, uint32_t key_max)
{
    VI lim = _mm256_set1_epi32((int)key_max);
    return _mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_max_epu32(m, lim), lim)) != -1;
}

static inline __attribute__((always_inline)) int group_off(const V *v, int group, range_test in)
{
    int bad = 0;
    VI m = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < group; k++) {
        if (in.key)
            m = _mm256_max_epu32(m, in.key(v[k]));
        else
            bad |= in.off(v[k]);
    }
    return in.key ? keys_above(m, in.key_max) : bad;
}

/* The last m elements of an array, 8 < m < 8 group, as a whole group in
   pad (64 floats): the lanes past m hold x[0], so the range test sees only
   the array's own lanes, and the group's vectors run side by side where a
   vector at a time each waited on its own chain (silu_v of 63 elements took
   5.6x the time of 64, sin_v 2.0x; now 1.4x and 1.1x: docs/math.md, "Short
   arrays"). The loops below take up to eight last elements as one vector,
   padded the same way (tail_load_rep). */
static inline float *group_pad(float *pad, const float *x, size_t m, size_t step)
{
    for (size_t k = m; k < step; k++) pad[k] = x[0];
    memcpy(pad, x, m * sizeof(float));
    return pad;
}

/* One group of unary_groups: src[0 .. 8 group) to dst */
static inline __attribute__((always_inline)) void
unary_group(const float *src, float *dst, int group, const float *tab, range_test in,
            V (*body)(V, const float *), V (*slow)(V))
{
    V v[8], r[8];
#pragma GCC unroll 8
    for (int k = 0; k < group; k++) v[k] = _mm256_loadu_ps(src + 8 * k);
    if (group_off(v, group, in)) {
#pragma GCC unroll 8
        for (int k = 0; k < group; k++) r[k] = slow(v[k]);
    } else {
#pragma GCC unroll 8
        for (int k = 0; k < group; k++) r[k] = body(v[k], tab);
    }
#pragma GCC unroll 8
    for (int k = 0; k < group; k++) _mm256_storeu_ps(dst + 8 * k, r[k]);
}

static inline __attribute__((always_inline)) void
unary_groups(const float *x, float *y, size_t n, int group, const float *tab, range_test in,
             V (*body)(V, const float *), V (*slow)(V))
{
    unsigned csr = enter();
    const size_t step = 8 * (size_t)group;
    size_t i = 0;
    for (; i + step <= n; i += step) unary_group(x + i, y + i, group, tab, in, body, slow);
    if (n - i > 8) {
        float pad[64] __attribute__((aligned(32)));
        unary_group(group_pad(pad, x + i, n - i, step), pad, group, tab, in, body, slow);
        memcpy(y + i, pad, (n - i) * sizeof(float));
    } else if (i < n) {
        V a = tail_load_rep(x + i, n - i);
        tail_store(y + i, group_off(&a, 1, in) ? slow(a) : body(a, tab), n - i);
    }
    leave(csr);
}

/* Vector k's three values in a stage buffer of eight vectors, and back */
static inline void stage_put(float st[3][64], int k, vstage t)
{
    _mm256_store_ps(st[0] + 8 * k, t.a);
    _mm256_store_ps(st[1] + 8 * k, t.b);
    _mm256_store_ps(st[2] + 8 * k, t.c);
}
static inline vstage stage_get(const float st[3][64], int k)
{
    return (vstage){_mm256_load_ps(st[0] + 8 * k), _mm256_load_ps(st[1] + 8 * k),
                    _mm256_load_ps(st[2] + 8 * k)};
}

/* The array loop of the fast paths whose one body held too much at once:
   `group` vectors an iteration under one range test (as unary_groups),
   in two stages, the first part of every vector (first) with its three
   values stored to a buffer, then the rest of each (finish) from them and
   x loaded again; the rare groups a vector at a time (rare), and what
   is left after the last whole group as one more group (group_pad) or,
   eight elements or fewer, one vector in one stage. GCC's scheduler, where the caller
   asks for it (DN_INTERLEAVED), interleaves within a stage only, so the
   group's chains fill the core without the registers of all of them
   being live at once. One interleaved body held too much: silu's eight
   vectors spilled (about 23 stack moves a vector beside 56 operations),
   and gelu's chain of ~175 cycles let no more than two vectors overlap.
   In two stages silu_v took 0.93-0.94x its time (eight vectors, no
   scheduling pass), gelu_v 0.72x (four, interleaved) and sin_v 0.88x
   (four, interleaved; against two vectors in one piece);
   docs/log/math.md, "The sigmoid family in two stages", "gelu in two
   stages" and "Trigonometry in two stages". tab is passed to finish
   (sin's and cos's tables read backwards), NULL for the others. */
static inline __attribute__((always_inline)) void
staged_group(const float *src, float *dst, int group, const float *tab, range_test in,
             vstage (*first)(V), V (*finish)(V, vstage, const float *), V (*rare)(V),
             float st[3][64])
{
    V v[8];
#pragma GCC unroll 8
    for (int k = 0; k < group; k++) v[k] = _mm256_loadu_ps(src + 8 * k);
    if (group_off(v, group, in)) {
#pragma GCC unroll 8
        for (int k = 0; k < group; k++) _mm256_storeu_ps(dst + 8 * k, rare(v[k]));
        return;
    }
#pragma GCC unroll 8
    for (int k = 0; k < group; k++) stage_put(st, k, first(v[k]));
    /* the stage boundary: the stores above happen, the loads below
       follow them, and no operation crosses */
    __asm__ volatile("" : : : "memory");
#pragma GCC unroll 8
    for (int k = 0; k < group; k++)
        _mm256_storeu_ps(dst + 8 * k, finish(_mm256_loadu_ps(src + 8 * k), stage_get(st, k), tab));
}

static inline __attribute__((always_inline)) void
staged_groups(const float *x, float *y, size_t n, int group, const float *tab, range_test in,
              vstage (*first)(V), V (*finish)(V, vstage, const float *), V (*rare)(V))
{
    unsigned csr = enter();
    const size_t step = 8 * (size_t)group;
    float st[3][64] __attribute__((aligned(32)));
    size_t i = 0;
    for (; i + step <= n; i += step)
        staged_group(x + i, y + i, group, tab, in, first, finish, rare, st);
    if (n - i > 8) {
        float pad[64] __attribute__((aligned(32)));
        staged_group(group_pad(pad, x + i, n - i, step), pad, group, tab, in, first, finish, rare,
                     st);
        memcpy(y + i, pad, (n - i) * sizeof(float));
    } else if (i < n) {
        V a = tail_load_rep(x + i, n - i);
        tail_store(y + i, group_off(&a, 1, in) ? rare(a) : finish(a, first(a), tab), n - i);
    }
    leave(csr);
}

#endif /* DN_MATH_GROUPS_AVX2_H */
