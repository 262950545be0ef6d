/* SPDX-License-Identifier: MIT */
/*
 * SLEEF's AVX-512 u10 exp and log over an array, the peers of the AVX-512
 * kernels in decodenum-bench-math. This file alone is built with -mavx512f:
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
