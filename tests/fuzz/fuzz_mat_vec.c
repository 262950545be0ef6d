/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the quantized matrix-vector product: arbitrary bytes
 * read as a matrix of any format, an activation row, a scaling and a row
 * range, fed to dn_mat_vec_rows and dn_mat_vec (no pool), and, on the way,
 * floats fed to dn_quantize / dn_quantize_blocks. With bit 7 of byte 1 set,
 * the bytes are instead a hand-built coded row and activation for dn_dot
 * (fuzz_dot below).
 *
 * Input layout (missing bytes read as zero):
 *
 *   byte 0   the format: one of the twelve read formats, or (1 in 13) a type
 *            the array does not read (F32, F16, BF16, unknown ids)
 *   byte 1   bit 0 the scaling (Sub32 / per block), bit 1 the words (one /
 *            two), bits 2-3 the activation's source (0: raw f32 bit patterns,
 *            inf, NaN and denormals included; 1: int8 values times 2^k,
 *            k from byte 4; 2-3: a hand-built dn_act_row), bits 4-6 a
 *            perturbation (6: the activation blocked for the other scaling
 *            or an arbitrary block size; 7: a scaling value outside the enum),
 *            bit 7 the dn_dot mode
 *   byte 2   rows 1..4 (bits 0-1); blocks per row (the rest, mod 17, or mod
 *            4 for the 256-element formats; 0 is allowed)
 *   byte 3   the row range [row_begin, row_end), possibly empty
 *   byte 4   k of source 1; the block size of perturbation 6; the common
 *            height of the hand-built exponents of selector 0
 *   then     the weight rows (rows * row bytes, copied to a buffer of exactly
 *            that size), then the activation: 4 bytes per float, or per block
 *            4 bytes of scale (m, an exponent selector, e) and 1 or 2 bytes
 *            per code.
 *
 * What it aborts on (besides what ASan and UBSan catch):
 *
 *  - quantization: a status other than DN_OK, DN_ERR_NON_FINITE (with *bad
 *    the first infinite or NaN input) or DN_ERR_INVALID_ARGUMENT (n not a
 *    whole number of blocks); a scale that is not the least m * 2^e on its
 *    grid covering the block's largest magnitude, a code that is not the
 *    nearest integer (ties to even) of x / scale (both checked here with
 *    exact integer arithmetic), an all-zero block without the canonical
 *    scale; any code, scale or status of an ISA's kernel differing from the
 *    reference's (dn_ref_quantize).
 *  - mat_vec: a status other than the one the contract gives, computed here
 *    independently of src/: DN_ERR_UNSUPPORTED_TYPE for a type the array
 *    does not read; for a non-empty range, row by row, DN_ERR_UNREADABLE_BLOCK
 *    with *bad = r * blocks + k where block k of row r is the first with an
 *    infinite or NaN binary16 scale (checked on the bytes), else
 *    DN_ERR_INVALID_ARGUMENT when the activation does not fit (dn_dot's
 *    alignment and scale ranges), else DN_OK. *bad untouched otherwise.
 *    Outputs outside the range untouched; within it, on DN_OK, no denormal
 *    and no NaN but DN_NAN_BITS.
 *  - bit equality with the scalar reference: dn_ref_mat_vec_rows is the
 *    reference; the public dn_mat_vec_rows (the active ISA's kernels),
 *    every other ISA's kernel table this CPU can run (called directly where
 *    its preconditions hold, dot_kernels.h) and dn_mat_vec over all rows
 *    with no pool must give its status, its *bad and, on DN_OK (and on
 *    DN_ERR_UNREADABLE_BLOCK for the rows before the bad one), its bits.
 *  - dn_dot: DN_ERR_INVALID_ARGUMENT for a row decodenum/dot.h says does
 *    not align (checked here), else DN_OK with the bits of the definition
 *    recomputed here with 128-bit integer sums and dn_exact_sum.
 *
 * The harness links the library's sources compiled with the fuzz flags
 * (tests/fuzz/CMakeLists.txt) and reaches the kernel tables through the
 * internal header dot_kernels.h, so one process compares every ISA with the
 * reference whatever DECODENUM_ISA says. Build and run: tests/fuzz/README.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum/blocks.h"
#include "decodenum/dot.h"
#include "decodenum/fp32.h"
#include "decodenum/quant.h"
#include "bits.h"
#include "dispatch.h"
#include "fuzz_input.h"

#include "../block_scales.h"
static const dn_type unread[] = {DN_TYPE_F32, DN_TYPE_F16, DN_TYPE_BF16, (dn_type)4, (dn_type)99};

#define SENTINEL_OUT 0x7FBADBADu /* a signalling NaN no call may write */
#define SENTINEL_BAD ((size_t)0x5EB5EB5Eu)

/* Every kernel table other than the reference's that this CPU can run. */
static const dn_dot_kernels *kernels[3];
static const dn_quant_kernels *qkernels[3];
static size_t nkernels;

static void find_kernels(void)
{
    static int done;
    if (done) return;
    done = 1;
    const dn_isa isas[] = {DN_ISA_AVX2, DN_ISA_NEON};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        const dn_kernels *ks = dn_kernels_for(isas[i]);
        if (ks && ks->dot->mat_vec_rows != dn_ref_mat_vec_rows) {
            qkernels[nkernels] = ks->quant;
            kernels[nkernels++] = ks->dot;
        }
    }
}

/* ---- quantization: the contract, exactly ------------------------------------ */

/* x = sign * M * 2^E (M < 2^24) read through FTZ; 0 for a zero or denormal. */
static int split(float x, int64_t *M, int32_t *E)
{
    uint32_t u = dn_bits(x), ex = (u >> 23) & 0xFF;
    if (ex == 0) return 0;
    *M = (int64_t)((u & 0x7FFFFF) | 0x800000) * ((u >> 31) ? -1 : 1);
    *E = (int32_t)ex - 150;
    return 1;
}

/* sign(a * 2^ea - b * 2^eb) for |a|, |b| < 2^40. */
static int cmp_scaled(int64_t a, int32_t ea, int64_t b, int32_t eb)
{
    if (a == 0 || b == 0 || ea - eb > 60 || eb - ea > 60) {
        /* a zero, or exponents so far apart that the larger one decides
           (|a| 2^ea >= 2^ea > 2^(40 + eb) > |b| 2^eb when ea - eb > 60) */
        int sa = (a > 0) - (a < 0), sb = (b > 0) - (b < 0);
        if (a == 0 || b == 0) return sa - sb > 0 ? 1 : sa - sb < 0 ? -1 : 0;
        return ea > eb ? sa : -sb;
    }
    int32_t t = ea < eb ? ea : eb;
    __int128 A = (__int128)a * ((__int128)1 << (ea - t)),
             B = (__int128)b * ((__int128)1 << (eb - t));
    return (A > B) - (A < B);
}

/* The block x[0..len) quantized to codes c with scale s, on the grid with
   significands [lo, 2 lo), bound 127 or 32767: the least scale covering the
   largest magnitude, each code the nearest integer of x / s, ties to even. */
static void check_quantized_block(const float *x, size_t len, int32_t lo, int32_t bound,
                                  const int16_t *c, dn_act_scale s)
{
    int64_t amaxM = 0;
    int32_t amaxE = 0;
    for (size_t i = 0; i < len; i++) {
        int64_t M;
        int32_t E;
        if (!split(x[i], &M, &E)) continue;
        if (M < 0) M = -M;
        if (!amaxM || cmp_scaled(M, E, amaxM, amaxE) > 0) amaxM = M, amaxE = E;
    }
    if (!amaxM) { /* all zero after FTZ: the canonical scale */
        CHECK(s.m == lo && s.e == 0);
        for (size_t i = 0; i < len; i++) CHECK(c[i] == 0);
        return;
    }
    CHECK(s.m >= lo && s.m < 2 * lo);
    CHECK(s.e - amaxE <= 60 && amaxE - s.e <= 60);
    /* bound * s >= amax, and the grid value just below s falls short */
    CHECK(cmp_scaled((int64_t)bound * s.m, s.e, amaxM, amaxE) >= 0);
    int64_t pm = s.m > lo ? s.m - 1 : 2 * lo - 1;
    int32_t pe = s.m > lo ? s.e : s.e - 1;
    CHECK(cmp_scaled((int64_t)bound * pm, pe, amaxM, amaxE) < 0);
    for (size_t i = 0; i < len; i++) {
        int64_t M, q = c[i];
        int32_t E;
        CHECK(q >= -bound && q <= bound);
        if (!split(x[i], &M, &E)) {
            CHECK(q == 0);
            continue;
        }
        if (s.e - E > 60) { /* |x| < 2^(E + 24) <= 2^(s.e - 36): far below half a unit */
            CHECK(q == 0);
            continue;
        }
        /* D = 2x - 2 q s against s, at the scale 2^t */
        int32_t t = E < s.e ? E : s.e;
        __int128 X = (__int128)M * ((__int128)1 << (E - t));
        __int128 S = (__int128)s.m * ((__int128)1 << (s.e - t));
        __int128 D = 2 * X - 2 * (__int128)q * S, aD = D < 0 ? -D : D;
        CHECK(aD <= S);
        if (aD == S) CHECK(q % 2 == 0);
    }
}

/* Quantizes x (n) per `block` (lo 8: dn_quantize, 128: dn_quantize_blocks)
   into act and checks it, and every kernel table's quantize, against the
   contract and the reference. */
static dn_status quantize(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                          dn_act_row *act)
{
    size_t nblk = n / block;
    size_t bad = SENTINEL_BAD, bad_ref = SENTINEL_BAD;
    dn_status st = lo == 8 ? dn_quantize(x, n, words, act, &bad)
                           : dn_quantize_blocks(x, n, block, words, act, &bad);
    /* the expected status */
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < n && first == SIZE_MAX; i++)
        if ((dn_bits(x[i]) & 0x7F800000u) == 0x7F800000u) first = i;
    if (n % block != 0) {
        CHECK(st == DN_ERR_INVALID_ARGUMENT && bad == SENTINEL_BAD);
        return st;
    }
    if (first != SIZE_MAX) {
        CHECK(st == DN_ERR_NON_FINITE && bad == first);
    } else {
        CHECK(st == DN_OK && bad == SENTINEL_BAD);
        CHECK(act->block == block && act->words == words);
        for (size_t b = 0; b < nblk; b++)
            check_quantized_block(x + b * block, block, lo, words == DN_WORDS_ONE ? 127 : 32767,
                                  act->codes + b * block, act->scales[b]);
    }
    /* the reference and every kernel table: the same status, index, codes, scales */
    int16_t *codes = malloc(n * sizeof *codes + 1);
    dn_act_scale *scales = malloc(nblk * sizeof *scales + 1);
    CHECK(codes && scales);
    for (size_t k = 0; k <= nkernels; k++) {
        const dn_quant_kernels *kern = k < nkernels ? qkernels[k] : &dn_quant_scalar;
        dn_act_row other = {codes, scales, n, 0, DN_WORDS_ONE};
        bad_ref = SENTINEL_BAD;
        dn_status st_k = kern->quantize(x, n, block, lo, words, &other, &bad_ref);
        CHECK(st_k == st && bad_ref == bad);
        if (st != DN_OK) continue;
        CHECK(other.block == act->block && other.words == act->words);
        CHECK(memcmp(codes, act->codes, n * sizeof *codes) == 0);
        for (size_t b = 0; b < nblk; b++)
            CHECK(scales[b].m == act->scales[b].m && scales[b].e == act->scales[b].e);
    }
    free(codes);
    free(scales);
    return st;
}

/* ---- hand-built rows ------------------------------------------------------------ */

/* An exponent from a selector's top bits and two bytes: `base` plus -8..7
   (the kernels' fast path, at a height common to the row), int8, int16
   (past the usable +-600) or about +-2^21 (past the accepted +-2^20). */
static int32_t exponent(uint8_t sel, uint8_t e0, uint8_t e1, int32_t base)
{
    switch (sel >> 6) {
    case 0: return base + (e0 & 15) - 8;
    case 1: return (int8_t)e0;
    case 2: return (int16_t)(e0 | e1 << 8);
    default:
        return (int32_t)((uint32_t)(sel & 63) << 26 | (uint32_t)e1 << 18 | (uint32_t)e0 << 10) >>
               10;
    }
}

/* An activation scale: m any byte (0 is refused), the exponent as above. */
static dn_act_scale act_scale(input *in, uint8_t b4)
{
    uint8_t m = byte(in), sel = byte(in), e0 = byte(in), e1 = byte(in);
    return (dn_act_scale){m, exponent(sel, e0, e1, 2 * (int8_t)b4)};
}

/* ---- dn_dot of a hand-built coded row --------------------------------------------- */

/* The definition of decodenum/dot.h computed here with 128-bit integers and
   dn_exact_sum (held to GMP by tests/test_exact_oracle.c): for DN_ACT_SUB32,
   per group of 256 the two terms of every sub-block of 32; for per-block,
   the two terms of every segment; the pieces added with dn_fadd from +0.
   0 when a term's integer does not fit int64_t (no definition to compare:
   dn_dot must have refused the row). */
static int add_terms(dn_term *t, const dn_segment *s, dn_act_scale as, __int128 c, __int128 o)
{
    __int128 va = (__int128)s->a.sig * as.m * c, vb = (__int128)s->b.sig * as.m * o;
    if (va > INT64_MAX || va < INT64_MIN || vb > INT64_MAX || vb < INT64_MIN) return 0;
    t[0] = (dn_term){(int64_t)va, s->a.exp + as.e, 0};
    t[1] = (dn_term){(int64_t)vb, s->b.exp + as.e, 0};
    return 1;
}

static int model_dot(const dn_coded_row *row, const dn_act_row *act, int scaling, float *out)
{
    float acc = 0.0f, piece;
    dn_term t[2 * (DN_GROUP / DN_ACT_BLOCK)];
    if (scaling == DN_ACT_PER_BLOCK) {
        for (size_t k = 0; k < row->nsegments; k++) {
            const dn_segment *s = &row->segments[k];
            __int128 c = 0, o = 0;
            for (size_t i = s->first; i < s->first + s->count; i++) {
                c += (int64_t)row->coef[i] * act->codes[i];
                o += (int64_t)row->offs[i] * act->codes[i];
            }
            if (!add_terms(t, s, act->scales[s->first / act->block], c, o)) return 0;
            CHECK(dn_exact_sum(t, 2, &piece) == DN_OK);
            acc = dn_fadd(acc, piece);
        }
    } else {
        size_t seg = 0;
        for (size_t g = 0; g < row->n; g += DN_GROUP) {
            size_t nt = 0, end = g + DN_GROUP < row->n ? g + DN_GROUP : row->n;
            for (size_t b = g; b < end; b += DN_ACT_BLOCK) {
                while (row->segments[seg].first + row->segments[seg].count <= b) seg++;
                __int128 c = 0, o = 0;
                for (size_t i = b; i < b + DN_ACT_BLOCK; i++) {
                    c += (int64_t)row->coef[i] * act->codes[i];
                    o += (int64_t)row->offs[i] * act->codes[i];
                }
                if (!add_terms(t + nt, &row->segments[seg], act->scales[b / DN_ACT_BLOCK], c, o))
                    return 0;
                nt += 2;
            }
            CHECK(dn_exact_sum(t, nt, &piece) == DN_OK);
            acc = dn_fadd(acc, piece);
        }
    }
    *out = acc;
    return 1;
}

/* Whether dn_dot accepts the row (decodenum/dot.h): segments tiling [0, n)
   in order, none empty, scales within the accepted ranges (|sig| <= 2^15,
   |exp| <= 2^20), every segment a whole number of sub-blocks (Sub32) or one
   activation block of at most DN_GROUP elements (per block), and the
   activation's own blocks and scales as act_ok checks them. */
static int act_ok(const dn_act_row *act, int scaling);
static int row_fits(const dn_coded_row *row, const dn_act_row *act, int scaling)
{
    if (row->n != act->n || !act_ok(act, scaling)) return 0;
    size_t next = 0;
    for (size_t k = 0; k < row->nsegments; k++) {
        const dn_segment *s = &row->segments[k];
        const dn_scale sc[2] = {s->a, s->b};
        if (s->first != next || s->count == 0) return 0;
        for (int j = 0; j < 2; j++)
            if (sc[j].sig < -32768 || sc[j].sig > 32768 || sc[j].exp < -(1 << 20) ||
                sc[j].exp > (1 << 20))
                return 0;
        if (scaling == DN_ACT_SUB32 ? s->count % DN_ACT_BLOCK != 0
                                    : s->count != act->block || s->count > DN_GROUP)
            return 0;
        next += s->count;
    }
    return next == row->n;
}

/* Input after the 5 header bytes: the activation's scales (4 bytes each),
   the segments (8 bytes each: a's and b's significands and exponents, the
   length) until they cover the row, then the elements' coef, offs and code
   (2 bytes each), read cyclically from what is left, so long rows need few
   bytes. b2 picks the activation block (32, 256, or anything up to 4096,
   0 and odd sizes included), b3 the number of blocks. */
static void fuzz_dot(input *in, uint8_t b1, uint8_t b2, uint8_t b3, uint8_t b4)
{
    static const uint32_t sizes[16] = {32,  32,   32,   256,  256, 32, 64, 128,
                                       512, 1024, 2048, 4096, 0,   16, 48, 96};
    int scaling = (b1 & 1) ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
    uint32_t block = sizes[b2 & 15];
    size_t n = (block ? block : 32) * (size_t)(1 + (b3 & 7));
    if (n > 8192) n = 8192 / block * block;
    if (b2 & 16) n += 32; /* not a whole number of blocks (or one more of 32) */
    size_t nblk = block ? n / block : 0;

    dn_act_scale *scales = malloc(nblk * sizeof *scales + 1);
    int16_t *coef = malloc(n * sizeof *coef + 1), *offs = malloc(n * sizeof *offs + 1),
            *codes = malloc(n * sizeof *codes + 1);
    dn_segment *segs = malloc((n / 16 + 1) * sizeof *segs);
    CHECK(scales && coef && offs && codes && segs);
    for (size_t b = 0; b < nblk; b++) scales[b] = act_scale(in, b4);
    size_t nseg = 0, at = 0;
    while (at < n && nseg < n / 16 + 1) {
        dn_scale sc[2];
        for (int j = 0; j < 2; j++) {
            uint8_t lo = byte(in), hi = byte(in), sel = byte(in);
            int32_t sig = (int16_t)(lo | hi << 8);
            if (sel & 32) sig = sig < 0 ? -32768 : 32768; /* the extremes accepted */
            if ((sel & 48) == 16) sig *= 2;               /* past them */
            sc[j] = (dn_scale){sig, exponent(sel, byte(in), 0, -10)};
        }
        uint8_t c = byte(in);
        size_t count = c < 200 ? (scaling == DN_ACT_PER_BLOCK ? block : 32 * (size_t)(1 + c % 8))
                               : (size_t)(c - 200);
        segs[nseg++] = (dn_segment){sc[0], sc[1], (uint32_t)at, (uint32_t)count};
        at += count ? count : 1;
    }
    size_t left = in->left;
    for (size_t i = 0; i < n; i++) {
        int16_t v[3];
        for (int j = 0; j < 3; j++) {
            size_t k = left ? (6 * i + 2 * (size_t)j) % left : 0;
            v[j] = left ? (int16_t)(uint16_t)(in->p[k] | in->p[(k + 1) % left] << 8) : 0;
        }
        coef[i] = v[0];
        offs[i] = v[1];
        codes[i] = v[2];
    }

    dn_coded_row row = {coef, offs, segs, n, nseg};
    dn_act_row act = {codes, scales, n, block, (b1 & 2) ? DN_WORDS_TWO : DN_WORDS_ONE};
    float out = dn_from_bits(SENTINEL_OUT), want;
    dn_status st = dn_dot(&row, &act, (dn_act_scaling)scaling, &out);
    if (!row_fits(&row, &act, scaling)) {
        CHECK(st == DN_ERR_INVALID_ARGUMENT && dn_bits(out) == SENTINEL_OUT);
    } else {
        /* an accepted row's every term fits int64_t (src/dot.c's bounds) */
        CHECK(model_dot(&row, &act, scaling, &want));
        CHECK(st == DN_OK && dn_bits(out) == dn_bits(want));
        uint32_t u = dn_bits(out);
        CHECK((u & 0x7F800000u) != 0 || (u & 0x7FFFFFu) == 0); /* no denormal */
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) CHECK(u == DN_NAN_BITS);
    }
    free(scales);
    free(coef);
    free(offs);
    free(codes);
    free(segs);
}

/* ---- mat_vec: the expected status ------------------------------------------- */

static int finite_at(const uint8_t *p) { return (p[1] & 0x7C) != 0x7C; }

/* Whether act fits a matrix of blocks of be elements under `scaling` as
   dn_dot requires (decodenum/dot.h): the scaling is one of the two, Sub32
   needs act->block 32 (the formats' blocks are whole multiples of 32), per
   block needs act->block equal to every segment's length (be; any block
   when the row has no segments, n = 0); a whole number of blocks; every
   scale's m in 1..255 and e within +-2^20 (the accepted ranges, src/dot.c). */
static int act_ok(const dn_act_row *act, int scaling)
{
    if (scaling != DN_ACT_SUB32 && scaling != DN_ACT_PER_BLOCK) return 0;
    if (act->block == 0 || act->n % act->block != 0) return 0;
    if (scaling == DN_ACT_SUB32 && act->block != DN_ACT_BLOCK) return 0;
    for (size_t b = 0; b < act->n / act->block; b++) {
        dn_act_scale s = act->scales[b];
        if (s.m < 1 || s.m > 255 || s.e < -(1 << 20) || s.e > (1 << 20)) return 0;
    }
    return 1;
}

static int act_fits(const dn_act_row *act, size_t be, int scaling)
{
    return act_ok(act, scaling) && (scaling == DN_ACT_SUB32 || !act->n || act->block == be);
}

static dn_status expected(size_t fi, const uint8_t *w, size_t rows, size_t blocks,
                          const dn_act_row *act, int scaling, size_t r0, size_t r1, size_t *bad)
{
    if (fi >= NBLOCK_SCALES) return DN_ERR_UNSUPPORTED_TYPE;
    (void)rows;
    if (r0 == r1) return DN_OK;
    size_t be = dn_type_block_elements(block_scales[fi].type),
           bb = dn_type_block_bytes(block_scales[fi].type);
    int fits = act_fits(act, be, scaling);
    for (size_t r = r0; r < r1; r++) {
        for (size_t k = 0; k < blocks; k++) {
            const uint8_t *blk = w + (r * blocks + k) * bb;
            if (!finite_at(blk + block_scales[fi].d_at) ||
                (block_scales[fi].b_at >= 0 && !finite_at(blk + block_scales[fi].b_at))) {
                *bad = r * blocks + k;
                return DN_ERR_UNREADABLE_BLOCK;
            }
        }
        if (!fits) return DN_ERR_INVALID_ARGUMENT;
    }
    return DN_OK;
}

/* One call's outcome against the reference's: status, *bad, the bits of the
   rows the reference defined, nothing written outside [r0, r1). */
static void same_as_reference(dn_status st, size_t bad, const float *out, dn_status st_ref,
                              size_t bad_ref, const float *ref, size_t rows, size_t blocks,
                              size_t r0, size_t r1)
{
    CHECK(st == st_ref && bad == bad_ref);
    size_t upto = st == DN_OK ? r1 : st == DN_ERR_UNREADABLE_BLOCK && blocks ? bad / blocks : r0;
    if (upto < r0) upto = r0;
    for (size_t r = 0; r < rows; r++) {
        if (r < r0 || r >= r1)
            CHECK(dn_bits(out[r]) == SENTINEL_OUT);
        else if (r < upto)
            CHECK(dn_bits(out[r]) == dn_bits(ref[r]));
    }
}

/* One matrix-vector case as the header bytes b0..b4 choose it. */
typedef struct mv_case {
    size_t fi; /* block_scales[fi], or NBLOCK_SCALES: a type no reader takes */
    dn_type type;
    size_t be, bb; /* block elements and bytes (an unread type: Q4_0's) */
    int scaling, source;
    dn_words words;
    size_t rows, blocks, n, r0, r1;
    size_t block; /* the activation's block */
    int32_t lo;   /* its code floor: 8 for Sub32, 128 per block */
    uint8_t b4;
} mv_case;

static mv_case parse_case(uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3, uint8_t b4)
{
    mv_case c;
    c.fi = b0 % (NBLOCK_SCALES + 1);
    c.type =
        c.fi < NBLOCK_SCALES ? block_scales[c.fi].type : unread[(b0 / (NBLOCK_SCALES + 1)) % 5];
    dn_type geom =
        c.fi < NBLOCK_SCALES ? c.type : DN_TYPE_Q4_0; /* the bytes of an unread type: Q4_0's */
    c.be = dn_type_block_elements(geom), c.bb = dn_type_block_bytes(geom);
    c.scaling = (b1 & 1) ? DN_ACT_PER_BLOCK : DN_ACT_SUB32;
    c.words = (b1 & 2) ? DN_WORDS_TWO : DN_WORDS_ONE;
    c.source = (b1 >> 2) & 3;
    int perturb = (b1 >> 4) & 7;
    c.rows = 1 + (b2 & 3), c.blocks = (size_t)(b2 >> 2) % (c.be == 256 ? 4 : 17);
    c.n = c.blocks * c.be;
    c.r0 = (size_t)(b3 & 15) % (c.rows + 1);
    c.r1 = c.r0 + (size_t)(b3 >> 4) % (c.rows + 1 - c.r0);
    c.b4 = b4;
    c.block = c.scaling == DN_ACT_PER_BLOCK ? c.be : DN_ACT_BLOCK;
    c.lo = c.scaling == DN_ACT_PER_BLOCK ? 128 : 8;
    if (perturb == 6 && c.source < 2) { /* quantized for the other scaling */
        c.lo = c.lo == 8 ? 128 : 8;
        c.block = c.lo == 8 ? DN_ACT_BLOCK : (b4 & 1) ? 256 : 32;
    } else if (perturb == 6) { /* any block size */
        static const uint32_t sizes[8] = {0, 16, 32, 64, 128, 256, 512, 48};
        c.block = sizes[b4 & 7];
    }
    if (perturb == 7) c.scaling = (b4 & 1) ? 2 : 3;
    return c;
}

/* The activation (codes and scales allocated in act): f32 values quantized
   by the library (sources 0 and 1) or codes and scales read as they come.
   0 when the values do not quantize: then the case has no product. */
static int read_act(input *in, const mv_case *c, dn_act_row *act)
{
    size_t n = c->n, nblk = c->block ? n / c->block : 0;
    int16_t *codes = malloc(n * sizeof *codes + 1);
    dn_act_scale *scales = malloc(nblk * sizeof *scales + 1);
    CHECK(codes && scales);
    *act = (dn_act_row){codes, scales, n, (uint32_t)c->block, c->words};
    if (c->source < 2) {
        float *x = malloc(n * sizeof *x + 1);
        CHECK(x);
        int k = (int)c->b4 - 140;
        for (size_t i = 0; i < n; i++) {
            if (c->source == 0) {
                uint8_t f[4];
                bytes(in, f, 4);
                x[i] = dn_from_bits((uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 |
                                    (uint32_t)f[3] << 24);
            } else {
                x[i] = ldexpf((float)(int8_t)byte(in), k); /* IEEE: denormals below 2^-126 */
            }
        }
        dn_status st = quantize(x, n, c->block, c->lo, c->words, act);
        free(x);
        return st == DN_OK;
    }
    for (size_t b = 0; b < nblk; b++) scales[b] = act_scale(in, c->b4);
    for (size_t i = 0; i < n; i++) {
        if (c->words == DN_WORDS_ONE) {
            codes[i] = (int8_t)byte(in);
        } else {
            uint8_t l = byte(in), h = byte(in);
            codes[i] = (int16_t)(uint16_t)(l | h << 8);
        }
    }
    return 1;
}

/* The reference over rows [r0, r1) into ref, against the contract; its
   status, and the bad block in *bad_ref. */
static dn_status reference_rows(const mv_case *c, const uint8_t *w, const dn_act_row *act,
                                size_t r0, size_t r1, float *ref, size_t *bad_ref)
{
    for (size_t r = 0; r < c->rows; r++) ref[r] = dn_from_bits(SENTINEL_OUT);
    size_t bad_want = SENTINEL_BAD;
    *bad_ref = SENTINEL_BAD;
    dn_status st_ref = dn_ref_mat_vec_rows(c->type, w, c->rows, c->n, act,
                                           (dn_act_scaling)c->scaling, r0, r1, ref, bad_ref);
    dn_status st_want = expected(c->fi, w, c->rows, c->blocks, act, c->scaling, r0, r1, &bad_want);
    CHECK(st_ref == st_want && *bad_ref == bad_want);
    return st_ref;
}

/* The reference's rows hold no denormal and only the one NaN. */
static void check_ref_values(const mv_case *c, const float *ref, dn_status st_ref)
{
    for (size_t r = 0; r < c->rows; r++) {
        uint32_t u = dn_bits(ref[r]);
        if (r < c->r0 || r >= c->r1 || st_ref != DN_OK) {
            if (r < c->r0 || r >= c->r1) CHECK(u == SENTINEL_OUT);
            continue;
        }
        CHECK((u & 0x7F800000u) != 0 || (u & 0x7FFFFFu) == 0); /* no denormal */
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) CHECK(u == DN_NAN_BITS);
    }
}

/* The public form (the active ISA), then every ISA's kernels where their
   preconditions hold (dot_kernels.h), over rows [r0, r1). */
static void check_rows(const mv_case *c, const uint8_t *w, const dn_act_row *act, const float *ref,
                       dn_status st_ref, size_t bad_ref, float *out)
{
    size_t rows = c->rows, r0 = c->r0, r1 = c->r1, n = c->n;
    dn_act_scaling scaling = (dn_act_scaling)c->scaling;
    for (size_t r = 0; r < rows; r++) out[r] = dn_from_bits(SENTINEL_OUT);
    size_t bad = SENTINEL_BAD;
    dn_status st = dn_mat_vec_rows(c->type, w, rows, n, act, scaling, r0, r1, out, &bad);
    same_as_reference(st, bad, out, st_ref, bad_ref, ref, rows, c->blocks, r0, r1);
    if (c->fi < NBLOCK_SCALES && r0 < r1 && act_fits(act, c->be, c->scaling)) {
        for (size_t k = 0; k < nkernels; k++) {
            for (size_t r = 0; r < rows; r++) out[r] = dn_from_bits(SENTINEL_OUT);
            bad = SENTINEL_BAD;
            st = kernels[k]->mat_vec_rows(c->type, w, rows, n, act, scaling, r0, r1, out, &bad);
            same_as_reference(st, bad, out, st_ref, bad_ref, ref, rows, c->blocks, r0, r1);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    find_kernels();
    input in = {data, size};
    uint8_t b0 = byte(&in), b1 = byte(&in), b2 = byte(&in), b3 = byte(&in), b4 = byte(&in);
    if (b1 & 128) {
        fuzz_dot(&in, b1, b2, b3, b4);
        return 0;
    }
    mv_case c = parse_case(b0, b1, b2, b3, b4);
    size_t row_bytes = c.blocks * c.bb;
    uint8_t *w = malloc(c.rows * row_bytes + 1);
    CHECK(w);
    bytes(&in, w, c.rows * row_bytes);
    dn_act_row act;
    float *ref = NULL, *out = NULL;
    if (read_act(&in, &c, &act)) {
        ref = malloc(c.rows * sizeof *ref), out = malloc(c.rows * sizeof *out);
        CHECK(ref && out);
        /* rows [r0, r1): the reference against the contract, the public
           form and the kernels against the reference */
        size_t bad_ref;
        dn_status st_ref = reference_rows(&c, w, &act, c.r0, c.r1, ref, &bad_ref);
        check_ref_values(&c, ref, st_ref);
        check_rows(&c, w, &act, ref, st_ref, bad_ref, out);
        /* dn_mat_vec over all rows, no pool, against the reference over all rows */
        st_ref = reference_rows(&c, w, &act, 0, c.rows, ref, &bad_ref);
        for (size_t r = 0; r < c.rows; r++) out[r] = dn_from_bits(SENTINEL_OUT);
        size_t bad = SENTINEL_BAD;
        dn_status st =
            dn_mat_vec(c.type, w, c.rows, c.n, &act, (dn_act_scaling)c.scaling, out, NULL, &bad);
        same_as_reference(st, bad, out, st_ref, bad_ref, ref, c.rows, c.blocks, 0, c.rows);
    }
    free(w);
    free(act.codes);
    free(act.scales);
    free(ref);
    free(out);
    return 0;
}
