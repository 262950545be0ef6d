/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the Gated-DeltaNet module: arbitrary bytes read as a
 * head's shape, its state and a few tokens (raw f32 bit patterns: inf, NaN
 * and denormals included), fed to the eager head (dn_gdn_head) and to a lazy
 * head of the same state (dn_gdn_lazy_step, flushes whole and trailing).
 *
 * Input layout (missing bytes read as zero):
 *
 *   byte 0   the store (mod 4: 3 is not a store), bit 7 a trailing flush
 *   byte 1   dk 0..31 (bits 0-4); byte 2: dv 0..31; byte 3: tokens 0..7,
 *            the log's capacity 1..8 (bits 4-6)
 *   then     the state (dk*dv elements of the store), then per token q, k
 *            (dk floats), v (dv floats), g, beta.
 *
 * It aborts when: a status is not the contract's (DN_ERR_INVALID_ARGUMENT
 * for dk or dv of 0 or an unknown store, DN_ERR_NON_FINITE exactly when an
 * input is not finite, else DN_OK); a refused token changed the state; the
 * lazy head's flushed state differs from the eager state by a single bit.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decodenum.h"
#include "fuzz_input.h"

static int finite_all(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input r = {data, size};
    uint8_t b0 = byte(&r), b3;
    dn_gdn_store store = (dn_gdn_store)(b0 & 3);
    size_t dk = byte(&r) & 31, dv = byte(&r) & 31;
    b3 = byte(&r);
    size_t tokens = b3 & 7, cap = 1 + ((b3 >> 4) & 7);
    size_t eb = dn_gdn_store_bytes(store), bytes = dk * dv * (eb ? eb : 4);
    uint8_t *eager = calloc(1, bytes + 1), *lazy = calloc(1, bytes + 1),
            *keep = calloc(1, bytes + 1);
    for (size_t i = 0; i < bytes; i++) eager[i] = byte(&r);
    memcpy(lazy, eager, bytes);
    dn_gdn_lazy *h = NULL;
    dn_status cs = dn_gdn_lazy_create(lazy, store, dk, dv, cap, &h);
    int bad_shape = !eb || dk == 0 || dv == 0;
    if (cs != (bad_shape ? DN_ERR_INVALID_ARGUMENT : DN_OK)) abort();
    float q[32], k[32], v[32], out[32], lout[32];
    for (size_t t = 0; t < tokens; t++) {
        for (size_t i = 0; i < dk; i++) q[i] = f32(&r), k[i] = f32(&r);
        for (size_t j = 0; j < dv; j++) v[j] = f32(&r);
        float g = f32(&r), beta = f32(&r);
        int ok = finite_all(q, dk) && finite_all(k, dk) && finite_all(v, dv) && isfinite(g) &&
                 isfinite(beta);
        memcpy(keep, eager, bytes);
        dn_status st = dn_gdn_head(eager, store, dk, dv, q, k, v, g, beta, 0.5f, out);
        dn_status want = bad_shape ? DN_ERR_INVALID_ARGUMENT : ok ? DN_OK : DN_ERR_NON_FINITE;
        if (st != want || (st != DN_OK && memcmp(keep, eager, bytes) != 0)) abort();
        if (!h) continue;
        if ((b0 & 0x80) && t == 1 && dn_gdn_lazy_flush_trailing(h, 1 + dv / 3) != DN_OK) abort();
        if (dn_gdn_lazy_step(h, q, k, v, g, beta, 0.5f, lout) != want) abort();
    }
    if (h) {
        if (dn_gdn_lazy_flush(h) != DN_OK) abort();
        if (memcmp(lazy, eager, bytes) != 0) abort();
        dn_gdn_lazy_destroy(h);
    }
    free(eager), free(lazy), free(keep);
    return 0;
}
