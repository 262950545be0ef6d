/* SPDX-License-Identifier: MIT */
/*
 * SLEEF's AVX-512 u10 exp, log, tanh, sin, cos and sincos over an array, and the GELUs by
 * their usual formulas around Sleef_tanhf16_u10 and Sleef_erff16_u10
 * (separate multiplies and adds, as the AVX2 peers in bench_math.c), the
 * peers of the AVX-512 kernels in decodenum-bench-math. This file alone is built with -mavx512f:
 * sleef.h declares the __m512 functions only then. Sleef_expf16_u10 and
 * Sleef_logf16_u10 are SLEEF's dispatchers (on an AVX-512 CPU they run the
 * avx512f forms); the bench calls these only where the CPU has AVX-512.
 */
#include <immintrin.h>
#include <sleef.h>
#include <stddef.h>

void dn_bench_sleef_expf16(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, Sleef_expf16_u10(_mm512_loadu_ps(x + i)));
}

void dn_bench_sleef_logf16(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, Sleef_logf16_u10(_mm512_loadu_ps(x + i)));
}

void dn_bench_sleef_tanhf16(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, Sleef_tanhf16_u10(_mm512_loadu_ps(x + i)));
}

void dn_bench_sleef_gelu_tanh16(const float *x, float *y, size_t n)
{
    const __m512 k = _mm512_set1_ps(0.7978845608f), a = _mm512_set1_ps(0.044715f);
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    for (size_t i = 0; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        __m512 u = _mm512_mul_ps(_mm512_mul_ps(k, v),
                                 _mm512_add_ps(one, _mm512_mul_ps(a, _mm512_mul_ps(v, v))));
        __m512 t = Sleef_tanhf16_u10(u);
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, t)));
    }
}

void dn_bench_sleef_gelu16(const float *x, float *y, size_t n)
{
    const __m512 r2 = _mm512_set1_ps(0.7071067812f);
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    for (size_t i = 0; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        __m512 e = Sleef_erff16_u10(_mm512_mul_ps(v, r2));
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, e)));
    }
}

void dn_bench_sleef_sinf16(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, Sleef_sinf16_u10(_mm512_loadu_ps(x + i)));
}

void dn_bench_sleef_cosf16(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, Sleef_cosf16_u10(_mm512_loadu_ps(x + i)));
}

void dn_bench_sleef_sincosf16(const float *x, float *s, float *c, size_t n)
{
    for (size_t i = 0; i + 16 <= n; i += 16) {
        Sleef___m512_2 r = Sleef_sincosf16_u10(_mm512_loadu_ps(x + i));
        _mm512_storeu_ps(s + i, r.x);
        _mm512_storeu_ps(c + i, r.y);
    }
}
