/* SPDX-License-Identifier: MIT */
/*
 * f16_avx512_cols.h: several columns on ggml_vec_dot's path (the table's
 * vec_dot_cols) with AVX-512; included by src/x86/f16_avx512.c alone, after
 * the helpers it uses (DN_INLINE, load_w, vd_step, fold2, double_tail).
 */
#ifndef DN_F16_AVX512_COLS_H
#define DN_F16_AVX512_COLS_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* ---- several columns on vec_dot's path ---------------------------------------- */

/* Elements of k a group of columns runs through a block of rows before the
   next elements (its activations, 6 x 2 KiB, stay in L1), and the rows of a
   block (32 rows of k = 2048: 128 KiB of weights in L2). */
#define VD_KC 512
#define VD_RB 32

/* v in a register: GCC otherwise folds each use of a loaded column into
   its FMA as a memory operand, one load per FMA where one per VD_R FMAs
   serves. */
DN_INLINE __m512 keep(__m512 v)
{
    __asm__("" : "+v"(v));
    return v;
}

/* The tile: VD_R rows x VD_C columns. */
#define VD_R 2
#define VD_C 6

/* The chains of a tile (two registers per output) between passes. */
typedef struct vd_chains {
    __m512 lo[VD_R][VD_C], hi[VD_R][VD_C];
} vd_chains;

/* Elements [b0, b1) (whole steps of 32) of R rows x C columns of vec_dot
   outputs (R <= VD_R, C <= VD_C), the chains taken from *st (zero when
   first) and put back: each output's four chains in two registers as
   vec_dot_r keeps them, 2RC registers (24 at most); sixteen weights widened
   once for the C columns, sixteen activations loaded once for the R rows.
   Each chain takes its elements in k order, so each output is vec_dot's. */
DN_INLINE void vd_pass(const uint16_t *w, size_t k, const float *act, size_t b0, size_t b1, int R,
                       int C, vd_chains *st, int first, int bf)
{
    __m512 lo[VD_R][VD_C], hi[VD_R][VD_C];
    for (int i = 0; i < R; i++)
        for (int c = 0; c < C; c++) {
            lo[i][c] = first ? _mm512_setzero_ps() : st->lo[i][c];
            hi[i][c] = first ? _mm512_setzero_ps() : st->hi[i][c];
        }
    for (size_t b = b0; b < b1; b += 32) {
        __m512 x[VD_C];
        for (int c = 0; c < C; c++) x[c] = keep(_mm512_loadu_ps(act + (size_t)c * k + b));
        for (int i = 0; i < R; i++) {
            __m512 wl = load_w(w + (size_t)i * k + b, bf);
            for (int c = 0; c < C; c++) lo[i][c] = vd_step(wl, x[c], lo[i][c], bf);
        }
        for (int c = 0; c < C; c++) x[c] = keep(_mm512_loadu_ps(act + (size_t)c * k + b + 16));
        for (int i = 0; i < R; i++) {
            __m512 wh = load_w(w + (size_t)i * k + b + 16, bf);
            for (int c = 0; c < C; c++) hi[i][c] = vd_step(wh, x[c], hi[i][c], bf);
        }
    }
    for (int i = 0; i < R; i++)
        for (int c = 0; c < C; c++) {
            st->lo[i][c] = lo[i][c];
            st->hi[i][c] = hi[i][c];
        }
}

/* vd_pass with compile-time sizes. */
DN_INLINE void vd_pass_n(const uint16_t *w, size_t k, const float *act, size_t b0, size_t b1,
                         size_t R, size_t C, vd_chains *st, int first, int bf)
{
    switch (R * 8 + C) {
    case 2 * 8 + 6: vd_pass(w, k, act, b0, b1, 2, 6, st, first, bf); break;
    case 2 * 8 + 5: vd_pass(w, k, act, b0, b1, 2, 5, st, first, bf); break;
    case 2 * 8 + 4: vd_pass(w, k, act, b0, b1, 2, 4, st, first, bf); break;
    case 2 * 8 + 3: vd_pass(w, k, act, b0, b1, 2, 3, st, first, bf); break;
    case 2 * 8 + 2: vd_pass(w, k, act, b0, b1, 2, 2, st, first, bf); break;
    case 2 * 8 + 1: vd_pass(w, k, act, b0, b1, 2, 1, st, first, bf); break;
    case 1 * 8 + 6: vd_pass(w, k, act, b0, b1, 1, 6, st, first, bf); break;
    case 1 * 8 + 5: vd_pass(w, k, act, b0, b1, 1, 5, st, first, bf); break;
    case 1 * 8 + 4: vd_pass(w, k, act, b0, b1, 1, 4, st, first, bf); break;
    case 1 * 8 + 3: vd_pass(w, k, act, b0, b1, 1, 3, st, first, bf); break;
    case 1 * 8 + 2: vd_pass(w, k, act, b0, b1, 1, 2, st, first, bf); break;
    default: vd_pass(w, k, act, b0, b1, 1, 1, st, first, bf); break;
    }
}

/* The first group of a block reads the block's weights from memory, a
   chunk of two rows a pass: the rows VD_AHEAD tiles later in that order
   (the next chunk's first rows once the block's rows run out) are fetched
   now. TinyLlama F16 in place, 128-token prompt, one thread, six
   alternated pairs on 2026-12-05 (a noisy host): 48.0-54.2 tokens/s
   against 41.4-49.8 without, five of six pairs ahead; copied into huge
   pages 73.9-78.8 against 68.2-69.7; two threads level; 8 tiles ahead
   50.4-51.3. No effect on bits. */
#define VD_AHEAD 4
DN_INLINE void first_group_ahead(const uint16_t *w, size_t k, size_t rb, size_t re, size_t r,
                                 size_t b0, size_t b1, size_t whole)
{
    size_t a = r + VD_AHEAD * VD_R, from = b0, to = b1;
    if (a >= re) {
        a = rb + (a - re);
        from = b1, to = whole - b1 < VD_KC ? whole : b1 + VD_KC;
    }
    for (size_t i = 0; i < VD_R && a + i < re && from < to; i++)
        for (size_t e = from; e < to; e += 32)
            _mm_prefetch((const char *)(w + (a + i) * k + e), _MM_HINT_T0);
}

/* Rows [r0, r1) x n columns: blocks of VD_RB rows (their weights stay in
   L2), each passed by groups of at most VD_C columns, as even as n allows;
   a group runs VD_KC elements of k through every tile of the block (the
   group's 12 KiB of activations stay in L1 while the weights stream past
   them), the chains kept in chains[] between; then each output is folded
   and its k % 32 products added. No effect on bits. */
DN_INLINE void vec_dot_cols_t(const uint16_t *w, size_t rows, size_t k, const float *act, size_t n,
                              size_t r0, size_t r1, float *out, int bf)
{
    vd_chains chains[VD_RB / VD_R];
    size_t whole = k & ~(size_t)31, groups = (n + VD_C - 1) / VD_C; /* even: 8 = 4 + 4 */
    for (size_t rb = r0; rb < r1; rb += VD_RB) {
        size_t re = r1 - rb < VD_RB ? r1 : rb + VD_RB;
        for (size_t g = 0; g < groups; g++) {
            size_t c = g * n / groups, C = (g + 1) * n / groups - c;
            for (size_t b0 = 0; b0 == 0 || b0 < whole; b0 += VD_KC) {
                size_t b1 = whole - b0 < VD_KC ? whole : b0 + VD_KC;
                for (size_t r = rb; r < re; r += VD_R) {
                    if (g == 0) first_group_ahead(w, k, rb, re, r, b0, b1, whole);
                    vd_pass_n(w + r * k, k, act + c * k, b0, b1, re - r < VD_R ? re - r : VD_R, C,
                              &chains[(r - rb) / VD_R], b0 == 0, bf);
                }
            }
            for (size_t r = rb; r < re; r++)
                for (size_t j = 0; j < C; j++) {
                    const vd_chains *st = &chains[(r - rb) / VD_R];
                    size_t i = (r - rb) % VD_R;
                    out[(c + j) * rows + r] =
                        double_tail(fold2(st->lo[i][j], st->hi[i][j], bf), w + r * k,
                                    act + (c + j) * k, whole, k, bf);
                }
        }
    }
}

#endif
