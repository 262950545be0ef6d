/* SPDX-License-Identifier: MIT */
/*
 * The RoPE tables' error against MPFR (docs/math.md, "RoPE tables"): for
 * theta = 10^4 and 10^6, 128 rotary dimensions (64 pairs), positions up to
 * 2^20 (every power of two, its neighbours, and 4096 random positions), the
 * largest error of dn_rope_table's cos and sin
 *   (A) against the exact cos/sin of the exact product pos * w[i] (the
 *       table's own rounding, in ULPs of the result), and
 *   (B) against the exact cos/sin of pos * theta^(-2i/128) (w's error
 *       included; absolute),
 * and, for comparison, (B) for the two ways engines build the table today:
 *   libm:     w = powf(theta, -2i/d), angle = (float)pos * w rounded,
 *             cosf/sinf of it (glibc);
 *   llama.cpp: ggml_rope_cache_init's theta = pos; theta *= powf(base, -2/d)
 *             per pair, cosf/sinf.
 * MPFR at 160 bits. Exit status 1 if (A) exceeds 0.55 ULP.
 *
 *   accuracy_rope
 */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>

#include "decodenum.h"

enum { D = 128, NP = D / 2, NB = 6 };
static const int bucket_log[NB] = {4, 8, 12, 16, 18, 20}; /* positions <= 2^k */

static int bucket_of(int32_t p)
{
    for (int b = 0; b < NB; b++)
        if (p <= (1 << bucket_log[b])) return b;
    return NB - 1;
}

/* |v - exact| in ULPs of exact's binade, and absolute */
static double ulp_of(double exact)
{
    int e;
    frexp(fabs(exact), &e);
    if (e - 1 < -126) e = -125;
    return ldexp(1.0, e - 1 - 23);
}

int main(void)
{
    mpfr_t a, t, c, s, th;
    mpfr_inits2(160, a, t, c, s, th, (mpfr_ptr)0);
    int32_t pos[5000];
    int npos = 0;
    for (int k = 0; k <= 20; k++) {
        int32_t p = 1 << k;
        pos[npos++] = p;
        if (p > 1) pos[npos++] = p - 1;
        if (k < 20) pos[npos++] = p + 1;
    }
    uint64_t z = 0x2545F4914F6CDD1Du;
    while (npos < 4096 + 60) {
        z = z * 6364136223846793005u + 1442695040888963407u;
        pos[npos++] = 1 + (int32_t)((z >> 33) % (1u << 20));
    }
    static float w[NP], tc[5000 * NP], ts[5000 * NP];
    int bad = 0;
    printf("accuracy_rope: d = %d, %d positions up to 2^20; max error per position range\n", D,
           npos);
    const float thetas[2] = {1e4f, 1e6f};
    for (int ti = 0; ti < 2; ti++) {
        float theta = thetas[ti];
        if (dn_rope_freqs(theta, D, 1.0f, w) != DN_OK) return 1;
        if (dn_rope_table(pos, (size_t)npos, w, NP, tc, ts) != DN_OK) return 1;
        double errA[NB] = {0}, errB[NB] = {0}, errL[NB] = {0}, errG[NB] = {0}, werr = 0;
        float theta_scale = powf(theta, -2.0f / D);
        for (int k = 0; k < npos; k++) {
            float ggml_theta = (float)pos[k];
            for (int i = 0; i < NP; i++) {
                int b = bucket_of(pos[k]);
                /* (A): exact cos/sin of pos * w[i] */
                mpfr_set_flt(a, w[i], MPFR_RNDN);
                mpfr_mul_si(a, a, pos[k], MPFR_RNDN);
                mpfr_sin_cos(s, c, a, MPFR_RNDN);
                double ec = mpfr_get_d(c, MPFR_RNDN), es = mpfr_get_d(s, MPFR_RNDN);
                double eA = fabs(tc[k * NP + i] - ec) / ulp_of(ec);
                double eA2 = fabs(ts[k * NP + i] - es) / ulp_of(es);
                eA = eA2 > eA ? eA2 : eA;
                errA[b] = eA > errA[b] ? eA : errA[b];
                /* exact angle pos * theta^(-2i/d) */
                mpfr_set_flt(th, theta, MPFR_RNDN);
                mpfr_set_si(t, -2 * i, MPFR_RNDN);
                mpfr_div_si(t, t, D, MPFR_RNDN);
                mpfr_pow(t, th, t, MPFR_RNDN);
                if (k == 0) {
                    double wx = mpfr_get_d(t, MPFR_RNDN), e = fabs(w[i] - wx) / ulp_of(wx);
                    werr = e > werr ? e : werr;
                }
                mpfr_mul_si(a, t, pos[k], MPFR_RNDN);
                mpfr_sin_cos(s, c, a, MPFR_RNDN);
                ec = mpfr_get_d(c, MPFR_RNDN);
                es = mpfr_get_d(s, MPFR_RNDN);
                double eB = fmax(fabs(tc[k * NP + i] - ec), fabs(ts[k * NP + i] - es));
                errB[b] = eB > errB[b] ? eB : errB[b];
                /* libm: float angle */
                float wl = powf(theta, -2.0f * (float)i / (float)D);
                float al = (float)pos[k] * wl;
                double eL = fmax(fabs(cosf(al) - ec), fabs(sinf(al) - es));
                errL[b] = eL > errL[b] ? eL : errL[b];
                /* llama.cpp: repeated products */
                double eG = fmax(fabs(cosf(ggml_theta) - ec), fabs(sinf(ggml_theta) - es));
                errG[b] = eG > errG[b] ? eG : errG[b];
                ggml_theta *= theta_scale;
            }
        }
        printf("theta = %.0f: w[i] within %.2f ULP of theta^(-2i/%d)\n", (double)theta, werr, D);
        printf("  positions  | (A) ULP vs exact pos*w | (B) abs vs exact | libm (B) | llama.cpp "
               "(B)\n");
        for (int b = 0; b < NB; b++) {
            printf("  <= 2^%-5d | %22.4f | %16.3g | %8.3g | %8.3g\n", bucket_log[b], errA[b],
                   errB[b], errL[b], errG[b]);
            if (errA[b] > 0.55) bad = 1;
        }
    }
    mpfr_clears(a, t, c, s, th, (mpfr_ptr)0);
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
