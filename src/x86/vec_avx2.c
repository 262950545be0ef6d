/* SPDX-License-Identifier: MIT */
/*
 * The element-wise operations on AVX2: each kernel is its reference in
 * src/vec.c, eight elements at a time, operation for operation (no FMA: the
 * build passes -ffp-contract=off and no fused intrinsic is used).
 *
 * Floating-point environment: the kernels run with MXCSR = DAZ only (see
 * avx2_common.h): a denormal operand reads as the zero of its sign, as the
 * engine reads it; a product or sum that comes out denormal is either
 * stored through result() (flushed, its NaN made DN_NAN_BITS) or only used
 * as the operand of the next operation, where DAZ reads it as the zero the
 * engine would have stored (axpy's product, the squares and lane sums of
 * add_sumsq, the RMSNorm's x*a). The caller's MXCSR is restored on return.
 * Tails: masked loads and stores, so no byte past an array is touched.
 */
#include "../vec_kernels.h"
#include "../math_kernels.h"
#include "../fp32_kernels.h"
#include "../bits.h"
#include "avx2_common.h"

typedef __m256 V;
typedef __m256i VI;

static inline void leave(unsigned old) { __asm__ volatile("vldmxcsr %0" : : "m"(old) : "memory"); }

/* A stored result: denormal flushed, NaN canonical. */
static inline V result(V v)
{
    v = dn_avx2_flush(v);
    V nan = _mm256_castsi256_ps(_mm256_set1_epi32((int)DN_NAN_BITS));
    return _mm256_blendv_ps(v, nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

enum op { ADD, SUB, MUL, SCALE, AXPY };

/* Element-wise y = a op b (SCALE: b is the factor in every lane; AXPY:
   y + s*a with y read first). Inlined into each entry with `op` a constant. */
static inline V apply(enum op op, V a, V b, V s, V y)
{
    switch (op) {
    case ADD: return _mm256_add_ps(a, b);
    case SUB: return _mm256_sub_ps(a, b);
    case MUL: return _mm256_mul_ps(a, b);
    case SCALE: return _mm256_mul_ps(a, s);
    case AXPY: return _mm256_add_ps(y, _mm256_mul_ps(s, a));
    }
    return a;
}

/* Two vectors a step (16 elements), then one, then the masked tail. The
   inputs of a vector are loaded before its output is stored, so y may be
   a or b. b is read only by the binary ops, y only by AXPY. */
static inline __attribute__((always_inline)) void
elementwise(enum op op, const float *a, const float *b, float s, float *y, size_t n)
{
    if (n == 0) return;
    unsigned csr = dn_avx2_enter();
    const int uses_b = op == ADD || op == SUB || op == MUL, uses_y = op == AXPY;
    V vs = _mm256_set1_ps(s), z = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        V a0 = _mm256_loadu_ps(a + i), a1 = _mm256_loadu_ps(a + i + 8);
        V b0 = uses_b ? _mm256_loadu_ps(b + i) : z, b1 = uses_b ? _mm256_loadu_ps(b + i + 8) : z;
        V y0 = uses_y ? _mm256_loadu_ps(y + i) : z, y1 = uses_y ? _mm256_loadu_ps(y + i + 8) : z;
        _mm256_storeu_ps(y + i, result(apply(op, a0, b0, vs, y0)));
        _mm256_storeu_ps(y + i + 8, result(apply(op, a1, b1, vs, y1)));
    }
    for (; i < n; i += 8) {
        VI m = dn_avx2_tail_mask(n - i > 8 ? 8 : n - i);
        V a0 = _mm256_maskload_ps(a + i, m);
        V b0 = uses_b ? _mm256_maskload_ps(b + i, m) : z;
        V y0 = uses_y ? _mm256_maskload_ps(y + i, m) : z;
        _mm256_maskstore_ps(y + i, m, result(apply(op, a0, b0, vs, y0)));
    }
    leave(csr);
}

static void add_avx2(const float *a, const float *b, float *y, size_t n)
{
    elementwise(ADD, a, b, 0.0f, y, n);
}
static void sub_avx2(const float *a, const float *b, float *y, size_t n)
{
    elementwise(SUB, a, b, 0.0f, y, n);
}
static void mul_avx2(const float *a, const float *b, float *y, size_t n)
{
    elementwise(MUL, a, b, 0.0f, y, n);
}
static void scale_avx2(const float *x, float a, float *y, size_t n)
{
    elementwise(SCALE, x, NULL, a, y, n);
}
static void axpy_avx2(float a, const float *x, float *y, size_t n)
{
    elementwise(AXPY, x, NULL, a, y, n);
}

/* ---- the gates -------------------------------------------------------------- */

/* y = f(g) * u a piece at a time: f(g) by a math module's kernel (AVX2's
   here, AVX-512's for that table: src/x86/vec_avx512.c) into a stack buffer (stored results: flushed, canonical), then the
   multiply with u read through FTZ (dn_avx2_flush: no MXCSR change needed
   for one product of a stored result and a flushed operand). The piece of
   g is read before the piece of y is written, so y may be g or u. */
void dn_vec_gate_mul_avx2(dn_unary_kernel f, const float *g, const float *u, float *y, size_t n)
{
    float t[DN_VEC_GATE_PIECE];
    for (size_t p = 0; p < n; p += DN_VEC_GATE_PIECE) {
        size_t m = n - p < DN_VEC_GATE_PIECE ? n - p : DN_VEC_GATE_PIECE, i = 0;
        f(g + p, t, m);
        for (; i + 8 <= m; i += 8) {
            V v = _mm256_mul_ps(_mm256_loadu_ps(t + i), dn_avx2_flush(_mm256_loadu_ps(u + p + i)));
            _mm256_storeu_ps(y + p + i, result(v));
        }
        if (i < m) {
            VI k = dn_avx2_tail_mask(m - i);
            V uu = dn_avx2_flush(_mm256_maskload_ps(u + p + i, k));
            V v = _mm256_mul_ps(_mm256_maskload_ps(t + i, k), uu);
            _mm256_maskstore_ps(y + p + i, k, result(v));
        }
    }
}

static void silu_mul_avx2(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx2.silu_v, g, u, y, n);
}
static void sigmoid_mul_avx2(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx2.sigmoid_v, g, u, y, n);
}
static void gelu_tanh_mul_avx2(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx2.gelu_tanh_v, g, u, y, n);
}
static void gelu_mul_avx2(const float *g, const float *u, float *y, size_t n)
{
    dn_vec_gate_mul_avx2(dn_math_avx2.gelu_v, g, u, y, n);
}

/* ---- the residual add and RMSNorm ----------------------------------------------- */

/* r = r + x on eight elements (masked by m where the tail needs it), the
   stored sum returned. */
static inline V add_store(float *r, const float *x, VI m, int full)
{
    V a = full ? _mm256_loadu_ps(r) : _mm256_maskload_ps(r, m);
    V b = full ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, m);
    V s = result(_mm256_add_ps(a, b));
    if (full)
        _mm256_storeu_ps(r, s);
    else
        _mm256_maskstore_ps(r, m, s);
    return s;
}

/* The tail's lanes: acc + s*s where m is set, acc's bits elsewhere (adding
   +0 to a lane holding -0 would change it). */
static inline V tail_acc(V acc, float *r, const float *x, size_t left)
{
    if (left == 0) return acc;
    VI m = dn_avx2_tail_mask(left > 8 ? 8 : left);
    V s = add_store(r, x, m, 0);
    return _mm256_blendv_ps(acc, _mm256_add_ps(acc, _mm256_mul_ps(s, s)), _mm256_castsi256_ps(m));
}

/* dn_ref_vec_add_sumsq in one pass: each stored sum squared into its lane
   (lane l is lane l % 8 of acc<l / 8>, as fp32_avx2.c's dn_fdot). */
static float add_sumsq_avx2(float *r, const float *x, size_t n)
{
    unsigned csr = dn_avx2_enter();
    V acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    const VI all = _mm256_set1_epi32(-1);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        V s0 = add_store(r + i, x + i, all, 1), s1 = add_store(r + i + 8, x + i + 8, all, 1);
        V s2 = add_store(r + i + 16, x + i + 16, all, 1);
        V s3 = add_store(r + i + 24, x + i + 24, all, 1);
        acc0 = _mm256_add_ps(acc0, _mm256_mul_ps(s0, s0));
        acc1 = _mm256_add_ps(acc1, _mm256_mul_ps(s1, s1));
        acc2 = _mm256_add_ps(acc2, _mm256_mul_ps(s2, s2));
        acc3 = _mm256_add_ps(acc3, _mm256_mul_ps(s3, s3));
    }
    if (i < n) {
        size_t left = n - i;
        acc0 = tail_acc(acc0, r + i, x + i, left);
        acc1 = tail_acc(acc1, r + i + 8, x + i + 8, left > 8 ? left - 8 : 0);
        acc2 = tail_acc(acc2, r + i + 16, x + i + 16, left > 16 ? left - 16 : 0);
        acc3 = tail_acc(acc3, r + i + 24, x + i + 24, left > 24 ? left - 24 : 0);
    }
    float t = dn_avx2_tree32(acc0, acc1, acc2, acc3);
    return dn_result(dn_avx2_leave(csr, t));
}

/* y = (x * a) * w; x*a is only an operand of the next product (DAZ). */
static void scale_mul_avx2(const float *x, float a, const float *w, float *y, size_t n)
{
    if (n == 0) return;
    unsigned csr = dn_avx2_enter();
    V va = _mm256_set1_ps(a);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        V v = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), va), _mm256_loadu_ps(w + i));
        _mm256_storeu_ps(y + i, result(v));
    }
    if (i < n) {
        VI m = dn_avx2_tail_mask(n - i);
        V v = _mm256_mul_ps(_mm256_mul_ps(_mm256_maskload_ps(x + i, m), va),
                            _mm256_maskload_ps(w + i, m));
        _mm256_maskstore_ps(y + i, m, result(v));
    }
    leave(csr);
}

const dn_vec_kernels dn_vec_avx2 = {
    .add = add_avx2,
    .sub = sub_avx2,
    .mul = mul_avx2,
    .scale = scale_avx2,
    .axpy = axpy_avx2,
    .silu_mul = silu_mul_avx2,
    .sigmoid_mul = sigmoid_mul_avx2,
    .gelu_tanh_mul = gelu_tanh_mul_avx2,
    .gelu_mul = gelu_mul_avx2,
    .add_sumsq = add_sumsq_avx2,
    .scale_mul = scale_mul_avx2,
};
