/* SPDX-License-Identifier: MIT */
/*
 * accuracy_gdn: the Gated-DeltaNet head's outputs and state, eager and lazy,
 * for each store, against the recurrence computed in f64 on the same inputs:
 * one head of S = 128, realistic inputs (l2-normalised q and k, decay and
 * beta in (0, 1), values in [-1, 1)), over 1,000 and 10,000 tokens. Prints
 * the table of docs/gdn.md ("Accuracy").
 *
 *   ./tests/accuracy_gdn [tokens...]      (default: 1000 10000)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"

enum { S = 128, LOG = 16 };

static uint64_t rng = 0x9E3779B97F4A7C15u;
static float uni(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (float)(rng >> 40) * 0x1p-23f - 1.0f;
}

/* One token: the f64 recurrence over the f64 state, out in f64. */
static void exact_token(double *st, const float *q, const float *k, const float *v, float g,
                        float beta, double scale, double *out)
{
    double decay = exp((double)g);
    for (int j = 0; j < S; j++) {
        double *row = st + j * S, rk = 0, rq = 0;
        for (int i = 0; i < S; i++) rk += row[i] * k[i];
        double coef = beta * (v[j] - decay * rk);
        for (int i = 0; i < S; i++) {
            row[i] = decay * row[i] + coef * k[i];
            rq += row[i] * q[i];
        }
        out[j] = rq * scale;
    }
}

static float elem(const void *st, dn_gdn_store store, size_t i)
{
    if (store == DN_GDN_STORE_F32) return ((const float *)st)[i];
    uint16_t h = ((const uint16_t *)st)[i];
    return store == DN_GDN_STORE_BF16 ? dn_bf16_to_f32(h) : dn_f16_to_f32(h);
}

typedef struct err {
    double out_rel, state_rel; /* largest |error| over the largest |exact| */
} err;

/* tokens through an eager head and a lazy head (log of LOG, flushed when
   full) of `store`, against f64. */
static void run(dn_gdn_store store, int tokens, err *eager, err *lazy)
{
    size_t b = dn_gdn_store_bytes(store);
    void *es = calloc(S * S, b), *ls = calloc(S * S, b);
    double *xs = calloc(S * S, sizeof *xs), xo[S];
    dn_gdn_lazy *h;
    dn_gdn_lazy_create(ls, store, S, S, LOG, &h);
    float q[S], k[S], v[S], eo[S], lo[S];
    double oe = 0, ol = 0, omax = 0;
    for (int t = 0; t < tokens; t++) {
        for (int i = 0; i < S; i++) q[i] = uni(), k[i] = uni(), v[i] = uni();
        dn_l2norm(q, 1e-6f, q, S);
        dn_l2norm(k, 1e-6f, k, S);
        float g = logf(0.8f + 0.19f * (uni() + 1) / 2), beta = 0.05f + 0.9f * (uni() + 1) / 2;
        dn_gdn_head(es, store, S, S, q, k, v, g, beta, 0.0883883f, eo);
        dn_gdn_lazy_step(h, q, k, v, g, beta, 0.0883883f, lo);
        exact_token(xs, q, k, v, g, beta, 0.0883883, xo);
        for (int j = 0; j < S; j++) {
            oe = fmax(oe, fabs(eo[j] - xo[j]));
            ol = fmax(ol, fabs(lo[j] - xo[j]));
            omax = fmax(omax, fabs(xo[j]));
        }
    }
    dn_gdn_lazy_flush(h);
    double se = 0, sl = 0, smax = 0;
    for (size_t i = 0; i < S * S; i++) {
        se = fmax(se, fabs(elem(es, store, i) - xs[i]));
        sl = fmax(sl, fabs(elem(ls, store, i) - xs[i]));
        smax = fmax(smax, fabs(xs[i]));
    }
    *eager = (err){oe / omax, se / smax};
    *lazy = (err){ol / omax, sl / smax};
    dn_gdn_lazy_destroy(h);
    free(es), free(ls), free(xs);
}

int main(int argc, char **argv)
{
    int counts[8] = {1000, 10000}, n = 2;
    if (argc > 1) {
        n = 0;
        for (int i = 1; i < argc && n < 8; i++) counts[n++] = atoi(argv[i]);
    }
    static const char *names[3] = {"f32", "bf16", "f16"};
    printf("S = %d, one head, lazy log %d; largest |error| / largest |exact| (f64 recurrence)\n", S,
           LOG);
    printf("%7s %5s %12s %12s %12s %12s\n", "tokens", "store", "eager out", "lazy out",
           "eager state", "lazy state");
    for (int c = 0; c < n; c++)
        for (int st = 0; st < 3; st++) {
            err e, l;
            rng = 0x9E3779B97F4A7C15u + (uint64_t)counts[c];
            run((dn_gdn_store)st, counts[c], &e, &l);
            printf("%7d %5s %12.3e %12.3e %12.3e %12.3e\n", counts[c], names[st], e.out_rel,
                   l.out_rel, e.state_rel, l.state_rel);
        }
    return 0;
}
