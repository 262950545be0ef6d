/* SPDX-License-Identifier: MIT */
/*
 * dot_kernels.h: the quantized dot module's kernel table, and what its
 * kernels share.
 *
 * dn_dot_scalar holds the reference: src/dot.c's row-by-row read + dot (the
 * definition). dn_dot_avx2, dn_dot_avx512 and dn_dot_neon reproduce it bit
 * for bit. The
 * public functions (src/dot_api.c) validate their arguments, then call the
 * table of dn_isa_active(); a kernel may assume arguments the public
 * function accepted (see each entry). The activation quantizer's table is
 * src/quant_kernels.h.
 *
 * How a kernel keeps the reference's bits (docs/dot.md, "Design notes"):
 * the integer sums are exact whatever instructions compute them; a piece
 * (a Sub32 group or a per-block block) is rounded to f32 from doubles only
 * when the double arithmetic is provably exact and the reference's exact sum
 * keeps every term (the activation side's exponent spread, checked once per
 * call in dn_dot_act); anything else is computed by the reference's own
 * piece function (dn_dot_piece_of_bytes). The row's pieces are added in the
 * reference's order.
 */
#ifndef DN_DOT_KERNELS_H
#define DN_DOT_KERNELS_H

#include "block_format.h"
#include "decodenum/dot.h"

typedef struct dn_dot_act dn_dot_act; /* below */

/* dn_mat_vec_rows with the activation side already prepared (a). */
typedef dn_status (*dn_dot_rows_act_fn)(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                        const dn_act_row *act, dn_act_scaling scaling,
                                        const dn_dot_act *a, size_t row_begin, size_t row_end,
                                        float *out, size_t *bad);

/* The product of a `type` matrix's rows [r0, r1) with the prepared
   activation's columns [c0, c1): column c's values at out[(c - c0) * ldo +
   r], each the bits of the matrix-vector product of that column. */
typedef dn_status (*dn_dot_mm_fn)(const dn_act *x, size_t c0, size_t c1, dn_type type,
                                  const uint8_t *w, size_t rows, size_t r0, size_t r1, float *out,
                                  size_t ldo, size_t *bad);

typedef struct dn_dot_kernels {
    /* dn_mat_vec_rows with arguments dn_mat_vec_rows accepted: dn_reads(type),
       act->n == n, n % block elements == 0, row_begin < row_end <= rows,
       w and out present, and act fits the type and scaling
       (dn_dot_act_fits). */
    dn_status (*mat_vec_rows)(dn_type type, const uint8_t *w, size_t rows, size_t n,
                              const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                              size_t row_end, float *out, size_t *bad);
    /* The same with the activation side prepared by the caller
       (dn_dot_act_init(a, act, type, scaling)), so the tasks of one product
       share it; NULL where the kernels need none (the scalar table). */
    dn_dot_rows_act_fn mat_vec_rows_act;
    /* The product over prepared columns (dn_dot_mm_fn) with arguments the
       dn_act_* functions accepted: x serves type (dn_act_view), r0 < r1 <=
       rows, c0 < c1 <= x->cols, the sizes fit. Allocates nothing. */
    dn_dot_mm_fn mat_mul_rows;
    /* mat_vec_rows_act on a repacked matrix (decodenum/repack.h): w is the
       repacked layout, rows the matrix's (unpadded) rows; the bits, status
       and *bad of mat_vec_rows_act on the plain matrix. Any row range. */
    dn_dot_rows_act_fn packed_rows_act;
} dn_dot_kernels;

/* The reference (src/dot.c). */
dn_status dn_ref_mat_vec_rows(dn_type type, const uint8_t *w, size_t rows, size_t n,
                              const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                              size_t row_end, float *out, size_t *bad);

/* The reference's rows without allocating (src/dot.c): the same bits,
   status and *bad as dn_ref_mat_vec_rows for arguments the kernels may
   assume; what the kernels fall back to. */
dn_status dn_ref_rows_pieces(dn_type type, const uint8_t *w, size_t rows, size_t n,
                             const dn_act_row *act, dn_act_scaling scaling, size_t row_begin,
                             size_t row_end, float *out, size_t *bad);

/* The reference's product over prepared columns: one matrix-vector product
   (dn_ref_rows_pieces) per column. */
dn_status dn_ref_mat_mul_rows(const dn_act *x, size_t c0, size_t c1, dn_type type, const uint8_t *w,
                              size_t rows, size_t r0, size_t r1, float *out, size_t ldo,
                              size_t *bad);

/* The reference on a repacked matrix: dn_ref_rows_pieces reading each
   piece's bytes where the layout keeps them (src/dot.c); a is unused. */
dn_status dn_ref_rows_packed(dn_type type, const uint8_t *w, size_t rows, size_t n,
                             const dn_act_row *act, dn_act_scaling scaling, const dn_dot_act *a,
                             size_t row_begin, size_t row_end, float *out, size_t *bad);

/* The repacked product of kernels k over prepared columns (src/repack_api.c):
   one column by k->packed_rows_act, several by k->mat_mul_rows over
   unpacked tiles of rows (DN_ERR_OUT_OF_MEMORY when the tile's malloc
   fails). Arguments the public functions accepted. */
dn_status dn_repacked_mm_with(const dn_dot_kernels *k, const dn_act *x, size_t c0, size_t c1,
                              dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                              float *out, size_t ldo, size_t *bad);

/* The repacked layout (decodenum/repack.h): row r's bytes of chunk j (its
   elements [256 j, min(256 j + 256, n))) in a repacked matrix w of rows of
   row_bytes, for the formats whose chunks hold whole blocks (every format
   but Q4_K, Q6_K and Q8_0: four rows side by side). */
static inline const uint8_t *dn_packed_chunk(const uint8_t *w, dn_type type, size_t n,
                                             size_t row_bytes, size_t r, size_t j)
{
    const size_t be = dn_block_formats[type].elements, bb = dn_block_formats[type].bytes;
    const size_t cb = DN_GROUP / be * bb, left = n - j * DN_GROUP;
    const size_t here = left < DN_GROUP ? left / be * bb : cb;
    return w + (r / 4) * 4 * row_bytes + j * 4 * cb + (r % 4) * here;
}

/* The repacked layouts with eight rows interleaved, the rows in the lanes
   (decodenum/repack.h): Q4_K, Q6_K and Q8_0. */
#define DN_Q4K8_ROWS 8
#define DN_Q4K8_BYTES (8 * 144)      /* a Q4_K row group's chunk: one block of each row */
#define DN_Q6K8_BYTES (8 * 210)      /* a Q6_K row group's chunk */
#define DN_PACK8_CHUNK_MAX (8 * 272) /* a row group's chunk of any of them */

/* 1 when type's repacked chunks interleave eight rows (not whole blocks). */
static inline int dn_packed8(dn_type type)
{
    return type == DN_TYPE_Q4_K || type == DN_TYPE_Q6_K || type == DN_TYPE_Q8_0;
}

/* The start of row r's group's chunk j in a repacked matrix of an
   interleaved format (the chunks before j are whole: eight rows' 256
   elements each). */
static inline const uint8_t *dn_packed8_chunk(const uint8_t *w, dn_type type, size_t row_bytes,
                                              size_t r, size_t j)
{
    const size_t cb = DN_GROUP / dn_block_formats[type].elements * dn_block_formats[type].bytes;
    return w + (r / DN_Q4K8_ROWS) * DN_Q4K8_ROWS * row_bytes + j * DN_Q4K8_ROWS * cb;
}

/* Row k's (0..7) plain Q4_K block of an interleaved chunk grp into blk[144]
   (src/repack.c), and the inverse: blk written as row k of grp (the bytes
   grp shares with the other rows keep theirs). */
void dn_q4k8_get(const uint8_t *grp, int k, uint8_t *blk);
void dn_q4k8_put(const uint8_t *blk, uint8_t *grp, int k);

/* The same for Q8_0's chunks of G (1..8) blocks per row: row k's G plain
   blocks (34 G bytes) from grp, and back. */
void dn_q808_get(const uint8_t *grp, int G, int k, uint8_t *blk);
void dn_q808_put(const uint8_t *blk, uint8_t *grp, int G, int k);

/* The same for Q6_K's chunks (one block per row, blk[210]). */
void dn_q6k8_get(const uint8_t *grp, int k, uint8_t *blk);
void dn_q6k8_put(const uint8_t *blk, uint8_t *grp, int k);

/* Row k's plain bytes of a chunk of G blocks (an interleaved format). */
static inline void dn_packed8_get(dn_type type, const uint8_t *grp, int G, int k, uint8_t *blk)
{
    if (type == DN_TYPE_Q8_0)
        dn_q808_get(grp, G, k, blk);
    else if (type == DN_TYPE_Q6_K)
        dn_q6k8_get(grp, k, blk);
    else
        dn_q4k8_get(grp, k, blk);
}

/* Row r's plain bytes of chunk j of a repacked matrix: in place, or (an
   interleaved format) copied into tmp (DN_GROUP / elements * bytes of the
   format's chunk: at most DN_PACK8_CHUNK_MAX / 8). */
static inline const uint8_t *dn_packed_read(const uint8_t *w, dn_type type, size_t n,
                                            size_t row_bytes, size_t r, size_t j, uint8_t *tmp)
{
    if (!dn_packed8(type)) return dn_packed_chunk(w, type, n, row_bytes, r, j);
    const size_t left = n - j * DN_GROUP, be = dn_block_formats[type].elements;
    const int G = (int)((left < DN_GROUP ? left : DN_GROUP) / be);
    dn_packed8_get(type, dn_packed8_chunk(w, type, row_bytes, r, j), G, (int)(r % DN_Q4K8_ROWS),
                   tmp);
    return tmp;
}

extern const dn_dot_kernels dn_dot_scalar;
#if defined(DN_HAVE_AVX2)
extern const dn_dot_kernels dn_dot_avx2;
#endif
#if defined(DN_HAVE_AVX512)
/* AVX-512 F/BW/VL/DQ and VNNI: the dispatcher registers it only where the
   CPU has VNNI too. */
extern const dn_dot_kernels dn_dot_avx512;
#endif
#if defined(DN_HAVE_NEON)
extern const dn_dot_kernels dn_dot_neon;
#endif

/* ---- what the reference exposes to the kernels ------------------------------ */

/* The checks both row-range forms make (the reference and dn_mat_vec_rows):
   DN_OK with *empty set when there is nothing to compute, else a status;
   *row_bytes is a row's size in bytes. */
dn_status dn_dot_rows_args(dn_type type, const uint8_t *w, size_t rows, size_t n,
                           const dn_act_row *act, size_t row_begin, size_t row_end,
                           const float *out, size_t *row_bytes, int *empty);

/* 1 when an activation row fits a matrix of blocks of `block_elements` under
   `scaling` as dn_dot requires (block sizes, scale ranges), else 0. */
int dn_dot_act_fits(const dn_act_row *act, size_t block_elements, dn_act_scaling scaling);

/* The reference's rounded piece of row . act over elements [from, to): a
   Sub32 group (from a multiple of DN_GROUP, to = from + DN_GROUP or the row's
   end) or a per-block block (one segment). The row and act fit (dn_dot
   checked them). */
float dn_dot_piece(const dn_coded_row *row, const dn_act_row *act, dn_act_scaling scaling,
                   size_t from, size_t to);

/* The same piece read from stored blocks: bytes point at the row's block
   holding element `from`, [from, to) covers whole blocks, and every block in
   it is readable. What a kernel calls where its fast path does not apply. */
float dn_dot_piece_of_bytes(dn_type type, const uint8_t *bytes, const dn_act_row *act,
                            dn_act_scaling scaling, size_t from, size_t to);

/* The engine's add of the rounded pieces, p[0..count) in order from +0
   (dn_fadd), for a kernel whose unflushed fast chain met a tiny piece. */
float dn_dot_chain(const float *p, size_t count);

/* ---- what the kernels share ------------------------------------------------- */

/* The activation side of a matrix-vector product, computed once per call
   (O(n)) and shared by every row. */
struct dn_dot_act {
    size_t n, nblk; /* elements; activation blocks (n / block) */
    uint32_t block; /* 32 or 256 */
    int narrow;     /* every code within +-127: c8 holds them as int8 */
    int usable;     /* every block with a non-zero code has |e| <= 600 */
    int8_t *c8;     /* n codes as int8 (narrow only) */
    int16_t *bs16n; /* per 16 elements, the sum of the codes (narrow only: fits int16) */
    /* Codes beyond +-127 as two byte planes, code = 256 hi + lo (not narrow
       only): hi signed (-128..127), lo unsigned (0..255), with their sums
       per 16 (int16) and per 32. */
    int8_t *hi8;
    uint8_t *lo8;
    int16_t *bs16hi, *bs16lo;
    int32_t *bs32hi, *bs32lo;
    int32_t *bs16; /* per 16 elements, the sum of the codes */
    int32_t *bs32; /* per 32 elements, the sum of the codes */
    double *S;     /* per activation block: m * 2^e, 0 when its codes are all zero */
    double *Sinf;  /* S, or +inf where S is 0 (and past the row): for minima */
    double *P;     /* per 32 elements (Sub32): bs32 * S (exact: 20 x 8 bits) */
    /* Per Sub32 group of 256 (Sub32 only): */
    uint8_t *gok; /* the fast path may be taken (see dot_act.c) */
    double *glim; /* 2^(emin + 42): |A| below it keeps d * A exact */
    double *gfac; /* 2^(52 - 11 - bits of the largest m): the exactness factor */
    /* The group's scales as small integers (Sub32, narrow, gok only), for
       kernels that weight chunk sums in int16: S_k = f_k 2^emin with
       f_k = m_k 2^(e_k - emin) <= dn_dot_factor_max(type) (0 for a block
       whose codes are all zero). fok: every f_k of the group fits. */
    int16_t *f16; /* per 32 elements: f_k */
    int32_t *fbs; /* per 32 elements: f_k * bs32_k (|.| <= 4064 * 480 < 2^21) */
    double *g2e;  /* per group: 2^emin */
    uint8_t *fok; /* per group */
    void *mem;
};

/* The largest activation factor f_k (dn_dot_act.f16) of a format: a
   sub-block scale (<= 63) times it fits int16, and eight chunks' weighted
   pair sums fit an int32 lane: 8 * 2 * (2 * 15 * 127) * 63 * 480 < 2^31 for
   Q4_K's digits (<= 15), 8 * 2 * (2 * 31 * 127) * 63 * 240 < 2^31 for
   Q5_K's (<= 31); 480 = 15 * 2^5 lets a group's scales spread over five
   binades. */
static inline int32_t dn_dot_factor_max(dn_type type) { return type == DN_TYPE_Q4_K ? 480 : 240; }

/* Fills `a` for act (which fits type and scaling) and a matrix of `type`.
   DN_ERR_OUT_OF_MEMORY, else DN_OK. */
dn_status dn_dot_act_init(dn_dot_act *a, const dn_act_row *act, dn_type type,
                          dn_act_scaling scaling);
void dn_dot_act_free(dn_dot_act *a);

/* ---- the prepared activation (decodenum/dot.h) ------------------------------------ */

#define DN_ACT_SLOTS 12 /* at most one slot per quantized format */
#define DN_ACT_MAGIC UINT32_C(0x64616374)

/* One column: its quantizations (block 32; per block also 256 when n is a
   whole number of them), their prepared sides (no group facts; what a
   per-block product reads), and under Sub32 one side per slot of formats
   whose group facts agree (dot_act.c): side[0] with the slot's facts. The
   products read them in place (no copy per call). */
typedef struct dn_act_col {
    dn_act_row row[2];
    dn_dot_act side[2];
    dn_dot_act slot[DN_ACT_SLOTS];
} dn_act_col;

struct dn_act {
    uint32_t magic;
    size_t n, cols;
    dn_act_scaling scaling;
    dn_words words;
    int quants;                      /* 1 or 2 (row[1]: per block, 256) */
    int8_t slot[DN_TYPE_LIMIT];      /* each type's slot, -1 for none */
    size_t row_bytes[DN_TYPE_LIMIT]; /* a row's bytes of each served type, else 0 */
    dn_act_col *col;
    void *mem; /* dn_act_create's allocation, else NULL */
};

/* Column col of x as a `type` product reads it: the quantized row and the
   prepared side with the format's group facts. 0 when x cannot serve type
   (not a quantized format, or per block without its block size). */
static inline int dn_act_view(const dn_act *x, size_t col, dn_type type, const dn_act_row **row,
                              const dn_dot_act **a)
{
    if ((unsigned)type >= DN_TYPE_LIMIT || x->slot[type] < 0) return 0;
    const int q = x->scaling == DN_ACT_PER_BLOCK && dn_block_formats[type].elements == 256;
    const int s = x->slot[type];
    if (q >= x->quants) return 0;
    const dn_act_col *c = &x->col[col];
    *row = &c->row[q];
    *a = x->scaling == DN_ACT_SUB32 ? &c->slot[s] : &c->side[q];
    return 1;
}

/* What a SIMD kernel's row loop reads: the product's arguments, the
   format's block size and row stride, the prepared activation side. */
typedef struct dn_mv_ctx {
    dn_type type;
    const uint8_t *w;
    size_t rows, n, bb, row_bytes;
    const dn_act_row *act;
    dn_act_scaling scaling;
    const dn_dot_act *a;
} dn_mv_ctx;

/* The row loop's context for a product's arguments (a prepared for them). */
static inline dn_mv_ctx dn_mv_ctx_of(dn_type type, const uint8_t *w, size_t rows, size_t n,
                                     const dn_act_row *act, dn_act_scaling scaling,
                                     const dn_dot_act *a)
{
    /* the format table inline and the block count by a shift (32 or 256
       elements): a 4-row call from dn_act_mat_vec_rows costs ~500 ns, and
       the library calls and the division were a tenth of it */
    const size_t be = dn_block_formats[type].elements, bb = dn_block_formats[type].bytes;
    const size_t blocks = be == 256 ? n / 256 : n / 32;
    dn_mv_ctx c = {type, w, rows, n, bb, blocks * bb, act, scaling, a};
    return c;
}

/* A table's mat_vec_rows from its mat_vec_rows_act: the activation side
   prepared for this call alone. */
static inline dn_status dn_dot_rows_own_act(dn_dot_rows_act_fn f, dn_type type, const uint8_t *w,
                                            size_t rows, size_t n, const dn_act_row *act,
                                            dn_act_scaling scaling, size_t row_begin,
                                            size_t row_end, float *out, size_t *bad)
{
    dn_dot_act a;
    if (dn_dot_act_init(&a, act, type, scaling) != DN_OK) return DN_ERR_OUT_OF_MEMORY;
    dn_status st = f(type, w, rows, n, act, scaling, &a, row_begin, row_end, out, bad);
    dn_dot_act_free(&a);
    return st;
}

/* The bytes of weight rows a SIMD kernel's product over prepared columns
   keeps in cache while it runs every column of a block over them: the
   tile's rows come from memory once per block of columns, not once per
   column. 64 KiB, with the column block's activations (DN_DOT_MM_COLS),
   stays within a 1 MiB L2; other sizes were not measured. */
#ifndef DN_DOT_MM_TILE
#define DN_DOT_MM_TILE (64 * 1024)
#endif

/* The rows of the widest tile a SIMD product over prepared columns runs in
   its lanes (AVX-512: 16 rows in the int32 lanes of a zmm); the other
   kernels' row tiles (AVX2's 8, the register-blocked 4) divide it. A
   caller that hands such a product a slice of rows at a time gives it whole
   multiples, or the rows past the last whole tile take a slower kernel. */
#define DN_MM_LANE_ROWS 16

/* The activation bytes of a block of columns a SIMD kernel's product keeps
   in cache while it runs them over every row tile: each column's codes
   and sums (about 1.5 n bytes read per column). Without column blocks, 512
   columns of 4096 (3 MiB read per tile) left the L2 on every tile, and
   Q8_0 4096 x 4096 ran at 1.85 ms a column against 1.07 at n = 64. */
#ifndef DN_DOT_MM_COLS
#define DN_DOT_MM_COLS (192 * 1024)
#endif

/* A table's mat_mul_rows from its mat_vec_rows_act: blocks of columns of
   about DN_DOT_MM_COLS bytes, and within a block row tiles of about
   DN_DOT_MM_TILE bytes (whole batches of four rows), every column of the
   block over each tile. Each value is the kernel's matrix-vector value, so
   the bits are the matrix-vector product's; the first failing row of the
   range reports (every column reads the same blocks, and the first block
   of columns runs every row tile in order). */
static inline dn_status dn_dot_mm_tiled(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                                        dn_type type, const uint8_t *w, size_t rows, size_t r0,
                                        size_t r1, float *out, size_t ldo, size_t *bad)
{
    size_t tile = r1 - r0, cb = c1 - c0;
    if (c1 - c0 > 1) {
        tile = DN_DOT_MM_TILE / x->row_bytes[type] & ~(size_t)3;
        if (tile < 4) tile = 4;
        cb = DN_DOT_MM_COLS / (x->n + x->n / 2);
        if (cb < 1) cb = 1;
    }
    for (size_t b0 = c0; b0 < c1; b0 += cb) {
        const size_t b1 = c1 - b0 > cb ? b0 + cb : c1;
        for (size_t t0 = r0; t0 < r1; t0 += tile) {
            const size_t t1 = r1 - t0 > tile ? t0 + tile : r1;
            for (size_t c = b0; c < b1; c++) {
                const dn_act_row *row = NULL;
                const dn_dot_act *a = NULL;
                if (!dn_act_view(x, c, type, &row, &a)) return DN_ERR_INVALID_ARGUMENT;
                dn_status st =
                    f(type, w, rows, x->n, row, x->scaling, a, t0, t1, out + (c - c0) * ldo, bad);
                if (st != DN_OK) return st;
            }
        }
    }
    return DN_OK;
}

/* The register-blocked product of src/x86/dot_mm_avx2.c (AVX2): four rows
   against four columns at a time, each row's blocks decoded once for the
   four, every value the matrix-vector kernel's; for Q4_K, Q5_K, Q6_K and
   Q8_0 under Sub32 with narrow, usable columns, else dn_dot_mm_tiled(f). A
   table's mat_mul_rows with f its matrix-vector kernel. */
#if defined(DN_HAVE_AVX2)
dn_status dn_dot_mm_blocked_avx2(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                                 dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                                 float *out, size_t ldo, size_t *bad);
/* The AVX2 table's mat_mul_rows: Q4_K with 8 rows in the lanes of a vector
   (src/x86/dot_mm_lanes_avx2.c), the rest dn_dot_mm_blocked_avx2. */
dn_status dn_dot_mm_lanes_avx2(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                               dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                               float *out, size_t ldo, size_t *bad);
#endif

#if defined(DN_HAVE_AVX512)
/* The same with the integer sums of the AVX-512 kernels (VNNI):
   src/x86/dot_mm_avx512.c, for the AVX-512 table alone. */
dn_status dn_dot_mm_blocked_avx512(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                                   dn_type type, const uint8_t *w, size_t rows, size_t r0,
                                   size_t r1, float *out, size_t ldo, size_t *bad);
/* The AVX-512 table's mat_mul_rows: Q4_K, Q6_K and Q8_0 with 16 rows in
   the lanes of a vector (src/x86/dot_mm_lanes_avx512.c), the rest
   dn_dot_mm_blocked_avx512. */
dn_status dn_dot_mm_lanes_avx512(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                                 dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                                 float *out, size_t ldo, size_t *bad);
#endif

#if defined(DN_HAVE_NEON)
/* The same on NEON (src/neon/dot_mm_neon.c): the digits of a row's group
   decoded once for four columns, the pieces dot_shared.h's; the NEON
   table's mat_mul_rows. */
dn_status dn_dot_mm_blocked_neon(dn_dot_rows_act_fn f, const dn_act *x, size_t c0, size_t c1,
                                 dn_type type, const uint8_t *w, size_t rows, size_t r0, size_t r1,
                                 float *out, size_t ldo, size_t *bad);
#endif

/* a + b rounded to 53 bits "to odd": the exact sum when it is a double,
   else the neighbour of RN(a + b) on the exact sum's side whose last bit is
   odd. Rounding that to f32 gives RN32(a + b) (round-to-odd with 29 spare
   bits), so two exact doubles are added with one rounding. */
static inline double dn_dot_sum_odd(double a, double b)
{
    double s = a + b;
    double bb = s - a;
    double err = (a - (s - bb)) + (b - bb);
    if (err == 0) return s;
    uint64_t u, ue;
    __builtin_memcpy(&u, &s, 8);
    __builtin_memcpy(&ue, &err, 8);
    if (!(u & 1)) u += ((u ^ ue) >> 63) ? (uint64_t)-1 : 1u;
    double odd;
    __builtin_memcpy(&odd, &u, 8);
    return odd;
}

#endif
