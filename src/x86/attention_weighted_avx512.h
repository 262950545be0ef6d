/* SPDX-License-Identifier: MIT */
/*
 * attention_weighted_avx512.h: the vector path's weighted sum on AVX-512
 * (the table's `weighted`); included by src/x86/attention_avx512.c alone,
 * after the helpers it uses (INLINE, GROUP, load16, result16).
 *
 * 32 lane accumulators per output element (position j in lane j % 32, the
 * reference's fdot), a tile of 64 elements, four heads sharing each value
 * row's load; a block of 128 positions is taken lane by lane, so a lane's
 * accumulators stay in registers over its four rows (weigh_lane). Tiles one
 * after the other over all rows where the rows are in the cache; for heads
 * of 128 over rows from memory, each block's rows through both tiles before
 * the next block (weighted_both).
 */
#ifndef DN_X86_ATTENTION_WEIGHTED_AVX512_H
#define DN_X86_ATTENTION_WEIGHTED_AVX512_H

#include "../sizes.h"
#include "avx2_common.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TILE 64     /* elements per pass: the lanes of 4 heads x 64 elements, 32 KiB */
#define LANE_ROWS 4 /* positions per lane per block: a block of 128 positions */
#define BLOCK_ROWS (DN_LANES * LANE_ROWS)

/* Lane l of hn heads over `count` rows of that lane (rows j, j + 32, ...;
   the lane's positions in order, so the sums of the reference), w = 32 or
   64 elements from `row` (the row's first at the tile's element i0: with
   i0 + 16 c offsets GCC kept the four in stack slots and reloaded and
   added them for every row, and a row of 4 heads of 128 in L2 took 9.5 ns
   where it takes 8.5 now): the lane's accumulators stay in registers across
   the rows and are loaded and stored once. Stored lanes cost one zmm store
   per 16 elements, head and row when every row loaded and stored them (the
   store port, one zmm a cycle, bound the loop: 1.23 ms for a group over
   32768 rows; 0.45 ms with 8 rows a lane, same host and hour; 4 rows a
   lane since, as 8 at the cache's 2 KiB stride fall into too few L1 sets:
   docs/log/attention.md). fresh: the lane's first rows, started from zero
   (the block loop calls it with a constant: no test in the other blocks'
   code), so no call clears 32 KiB of lanes first (0.89x the time of a
   group's call at 512 positions, 0.78x at 31). */
INLINE void weigh_lane(uint32_t type, const float *p, size_t hn, size_t n, const char *row,
                       size_t rstep, size_t j, size_t count, size_t w,
                       float acc[GROUP][DN_LANES][TILE], size_t l, int fresh)
{
    __m512 a[GROUP][TILE / 16];
    for (size_t h = 0; h < GROUP; h++)
        for (size_t c = 0; c < TILE / 16; c++)
            a[h][c] = h < hn && 16 * c < w && !fresh ? _mm512_load_ps(acc[h][l] + 16 * c)
                                                     : _mm512_setzero_ps();
    for (size_t r = 0; r < count; r++, row += DN_LANES * rstep, j += DN_LANES) {
        __m512 x[TILE / 16];
        for (size_t c = 0; c < TILE / 16; c++)
            x[c] = 16 * c < w ? load16(type, row, 16 * c) : _mm512_setzero_ps();
        for (size_t h = 0; h < GROUP; h++) {
            if (h >= hn) break;
            __m512 pw = _mm512_set1_ps(p[h * n + j]);
            for (size_t c = 0; c < TILE / 16; c++)
                if (16 * c < w) a[h][c] = _mm512_add_ps(a[h][c], _mm512_mul_ps(pw, x[c]));
        }
    }
    for (size_t h = 0; h < GROUP; h++)
        for (size_t c = 0; c < TILE / 16; c++)
            if (h < hn && 16 * c < w) _mm512_store_ps(acc[h][l] + 16 * c, a[h][c]);
}

static void zero_lane(float acc[GROUP][DN_LANES][TILE], size_t l)
{
    for (size_t h = 0; h < GROUP; h++) memset(acc[h][l], 0, sizeof acc[h][l]);
}

/* Elements i0..i0+w of the value rows of blocks [jb, je) (jb a multiple of
   BLOCK_ROWS, je a block's end or n) into the lanes of hn heads (position j
   in lane j % 32), a block of BLOCK_ROWS positions at a time: lane by lane
   (weigh_lane), `ahead` bytes from element i0 of each of the next block's
   rows prefetched meanwhile (a lane's share, 4 rows, per lane step: the
   block's 128 rows are in the cache when they are read); none when `ahead`
   is 0 (rows_ahead). */
INLINE void weigh_tile(uint32_t type, const float *p, size_t hn, size_t n, const void *v,
                       size_t stride, size_t i0, size_t w, float acc[GROUP][DN_LANES][TILE],
                       size_t jb, size_t je, size_t ahead)
{
    size_t es = type == DN_KV_F32 ? 4 : 2, rstep = stride * es;
    const char *base = (const char *)v;
    for (size_t j0 = jb; j0 < je; j0 += BLOCK_ROWS) {
        for (size_t l = 0; l < DN_LANES; l++) {
            size_t f = j0 + BLOCK_ROWS + LANE_ROWS * l;
            for (size_t k = f; ahead && k < f + LANE_ROWS && k < n; k++)
                dn_prefetch_span(base + k * rstep + i0 * es, ahead);
            if (j0 + l >= n) { /* lanes without a row: zeros for the fold (n < 32) */
                if (j0 == 0) zero_lane(acc, l);
                continue;
            }
            size_t count = (n - j0 - l + DN_LANES - 1) / DN_LANES;
            if (count > LANE_ROWS) count = LANE_ROWS;
            const char *row = base + (j0 + l) * rstep + i0 * es;
            if (hn == GROUP && w == TILE && j0 == 0) /* the common cases, compiled constant */
                weigh_lane(type, p, GROUP, n, row, rstep, l, count, TILE, acc, l, 1);
            else if (hn == GROUP && w == TILE)
                weigh_lane(type, p, GROUP, n, row, rstep, j0 + l, count, TILE, acc, l, 0);
            else
                weigh_lane(type, p, hn, n, row, rstep, j0 + l, count, w, acc, l, j0 == 0);
        }
    }
}

/* The tree over the 32 lanes of 16 elements at once (vertical adds in the
   tree's order) into out. */
static void fold16(float lanes[DN_LANES][TILE], size_t c, float *out)
{
    __m512 l[DN_LANES];
    for (size_t i = 0; i < DN_LANES; i++) l[i] = _mm512_load_ps(lanes[i] + 16 * c);
    for (size_t width = DN_LANES; width > 1; width /= 2)
        for (size_t i = 0; i < width / 2; i++) l[i] = _mm512_add_ps(l[2 * i], l[2 * i + 1]);
    _mm512_storeu_ps(out, result16(l[0]));
}

/* The first rows' prefetches: the first block's (weigh_tile fetches each
   next one). */
static void prefetch_first(uint32_t type, const void *v, size_t stride, size_t n, size_t i0,
                           size_t w)
{
    size_t es = type == DN_KV_F32 ? 4 : 2;
    for (size_t k = 0; k < n && k < BLOCK_ROWS; k++)
        dn_prefetch_span((const char *)v + k * stride * es + i0 * es, w * es);
}

/* The bytes of each of the next block's rows a tile prefetches: its w
   elements, or none where the rows lie together (stride d: a cache that
   keeps each KV head's rows together), whose stream the hardware
   prefetcher follows. Without the software prefetch there one group over
   2048 rows in L2 takes 0.92-0.94x the cycles a row
   (decodenum-bench-attention-kernels' `together` rows, builds alternated on
   one vCPU, three pairs; 0.78-0.88x on the slower vCPU of the moment, in a
   scratch harness); the layer over such a cache is level (32768
   positions with the L3 flushed before each call, 0.99-1.01x; 4096 in L3
   0.97-0.99x; 2026-12-08). Rows apart (llama.cpp's layout) need it: the
   weighted sum without it took 1.28x the time there. */
static size_t rows_ahead(uint32_t type, size_t stride, size_t d, size_t w)
{
    return stride == d ? 0 : w * (type == DN_KV_F32 ? 4 : 2);
}

/* One type's tile, a function of its own (as scores_f16). */
static __attribute__((noinline)) void weigh_f16(const float *p, size_t hn, size_t n, const void *v,
                                                size_t stride, size_t i0, size_t w,
                                                float acc[GROUP][DN_LANES][TILE], size_t ahead)
{
    weigh_tile(DN_KV_F16, p, hn, n, v, stride, i0, w, acc, 0, n, ahead);
}

static __attribute__((noinline)) void weigh_bf16(const float *p, size_t hn, size_t n, const void *v,
                                                 size_t stride, size_t i0, size_t w,
                                                 float acc[GROUP][DN_LANES][TILE], size_t ahead)
{
    weigh_tile(DN_KV_BF16, p, hn, n, v, stride, i0, w, acc, 0, n, ahead);
}

static __attribute__((noinline)) void weigh_f32(const float *p, size_t hn, size_t n, const void *v,
                                                size_t stride, size_t i0, size_t w,
                                                float acc[GROUP][DN_LANES][TILE], size_t ahead)
{
    weigh_tile(DN_KV_F32, p, hn, n, v, stride, i0, w, acc, 0, n, ahead);
}

/* Value rows spanning at least this many bytes from first to last come from
   memory, not the cache: there a group of four heads of 128 reads each
   block's rows once for both tiles (weighted_both). Nearer rows take the
   tiles one after the other over all rows, which keeps a tile's 32 KiB of
   lanes in L1: the both-tile loop on the bench's 4096 positions (rows 8 MiB
   apart, the layer in L3) took 1.08-1.15x the time in five of six
   alternated runs; on 8192 (16 MiB) it was level within the noise, on
   16384 (32 MiB) 0.87-0.91x. */
#define FAR_BYTES ((size_t)32 << 20)

/* Both tiles of four heads of 128, block by block: each block's rows
   through the first tile, which prefetches the next block's whole rows,
   then through the second, their lines in the cache by then. One tile at
   a time over all rows reads 128 of every row's 256 bytes a pass, the rows
   2 KiB apart in llama.cpp's layout of 8 KV heads of 128, and the memory
   serves that more slowly than whole rows. The layer of
   decodenum-bench-attention (f16, 32768 positions; dn_attend timed with
   the L3 flushed by a 256 MiB read before each call, medians of 8 calls,
   libraries before and after alternated, 2026-12-07): one thread
   0.80-0.95x the time (five pairs), two 0.76-0.88x (two); 16384 positions
   0.87-0.91x; a bf16 cache 0.83-0.95x and 0.85-0.91x. The memory's speed
   for strided rows varied by hours on that host: with both forms
   alternated in one process, 0.80-0.82x the time where the one-tile form
   took 11.5-11.7 ms, 0.91-0.95x where it took
   7.9-8.0 ms. */
INLINE void weigh_both(uint32_t type, const float *p, size_t n, const void *v, size_t stride,
                       float acc[2][GROUP][DN_LANES][TILE])
{
    size_t es = type == DN_KV_F32 ? 4 : 2;
    for (size_t j0 = 0; j0 < n; j0 += BLOCK_ROWS) {
        size_t je = n - j0 < BLOCK_ROWS ? n : j0 + BLOCK_ROWS;
        weigh_tile(type, p, GROUP, n, v, stride, 0, TILE, acc[0], j0, je, 2 * TILE * es);
        weigh_tile(type, p, GROUP, n, v, stride, TILE, TILE, acc[1], j0, je, TILE * es);
    }
}

static __attribute__((noinline)) void weigh_both_f16(const float *p, size_t n, const void *v,
                                                     size_t stride,
                                                     float acc[2][GROUP][DN_LANES][TILE])
{
    weigh_both(DN_KV_F16, p, n, v, stride, acc);
}

static __attribute__((noinline)) void weigh_both_bf16(const float *p, size_t n, const void *v,
                                                      size_t stride,
                                                      float acc[2][GROUP][DN_LANES][TILE])
{
    weigh_both(DN_KV_BF16, p, n, v, stride, acc);
}

static __attribute__((noinline)) void weigh_both_f32(const float *p, size_t n, const void *v,
                                                     size_t stride,
                                                     float acc[2][GROUP][DN_LANES][TILE])
{
    weigh_both(DN_KV_F32, p, n, v, stride, acc);
}

/* The first `whole` heads (a multiple of GROUP) of head size 128 over
   n > 0 rows, both tiles a block at a time (64 KiB of lanes). */
static __attribute__((noinline)) void weighted_both(uint32_t type, const float *p, size_t whole,
                                                    size_t n, const void *v, size_t stride,
                                                    float *out)
{
    float acc[2][GROUP][DN_LANES][TILE] __attribute__((aligned(64)));
    for (size_t g0 = 0; g0 < whole; g0 += GROUP) {
        prefetch_first(type, v, stride, n, 0, 2 * TILE);
        if (type == DN_KV_F16)
            weigh_both_f16(p + g0 * n, n, v, stride, acc);
        else if (type == DN_KV_BF16)
            weigh_both_bf16(p + g0 * n, n, v, stride, acc);
        else
            weigh_both_f32(p + g0 * n, n, v, stride, acc);
        for (size_t t = 0; t < 2; t++)
            for (size_t g = 0; g < GROUP; g++)
                for (size_t c = 0; c < TILE / 16; c++)
                    fold16(acc[t][g], c, out + (g0 + g) * 2 * TILE + t * TILE + 16 * c);
    }
}

/* Heads [h0, heads), a tile at a time over all rows (32 KiB of lanes). */
static __attribute__((noinline)) void weighted_tiles(uint32_t type, const float *p, size_t h0,
                                                     size_t heads, size_t n, const void *v,
                                                     size_t stride, size_t d, float *out)
{
    float acc[GROUP][DN_LANES][TILE] __attribute__((aligned(64)));
    for (size_t g0 = h0; g0 < heads; g0 += GROUP) {
        size_t hn = heads - g0 < GROUP ? heads - g0 : GROUP;
        for (size_t i0 = 0; i0 < d; i0 += TILE) {
            size_t w = d - i0 < TILE ? d - i0 : TILE;
            size_t ahead = rows_ahead(type, stride, d, w);
            if (n == 0) memset(acc, 0, sizeof acc); /* else each lane's first rows start it */
            if (ahead) prefetch_first(type, v, stride, n, i0, w);
            if (type == DN_KV_F16)
                weigh_f16(p + g0 * n, hn, n, v, stride, i0, w, acc, ahead);
            else if (type == DN_KV_BF16)
                weigh_bf16(p + g0 * n, hn, n, v, stride, i0, w, acc, ahead);
            else
                weigh_f32(p + g0 * n, hn, n, v, stride, i0, w, acc, ahead);
            for (size_t g = 0; g < hn; g++)
                for (size_t c = 0; 16 * c < w; c++)
                    fold16(acc[g], c, out + (g0 + g) * d + i0 + 16 * c);
        }
    }
}

static void weighted_avx512(uint32_t type, const float *p, size_t heads, size_t n, const void *v,
                            size_t stride, size_t d, float *out)
{
    if (d % 32 != 0) {
        dn_attention_avx2.weighted(type, p, heads, n, v, stride, d, out);
        return;
    }
    size_t es = type == DN_KV_F32 ? 4 : 2, span, whole = 0;
    if (d == 2 * TILE && n > 0 && dn_size_mul(n, stride * es, &span) && span >= FAR_BYTES)
        whole = heads / GROUP * GROUP;
    unsigned csr = dn_avx2_enter();
    if (whole) weighted_both(type, p, whole, n, v, stride, out);
    if (whole < heads) weighted_tiles(type, p, whole, heads, n, v, stride, d, out);
    dn_avx2_leave(csr, 0.0f);
}

#endif
