/* SPDX-License-Identifier: MIT */
/* The README's example: a dot product, a norm's sum and a greedy pick that
   give the same bits on every CPU, and the engine's exact integer helpers. */
#include <decodenum.h>
#include <stdio.h>

int main(void)
{
    float logits[6] = {0.25f, -1.5f, 3.0f, 3.0f, 0.0f, -0.0f};
    float weights[6] = {1.0f, 2.0f, 0.5f, 0.5f, 4.0f, 8.0f};

    float dot = dn_fdot(logits, weights, 6); /* 32 lanes, then the pairwise tree */
    float sum = dn_fsum(logits, 6);
    size_t best = dn_argmax(logits, 6); /* 2: the first of equals */
    uint16_t half = dn_f32_to_f16(dot); /* to nearest even, as binary16 */

    int64_t code; /* nearest integer to x / (m * 2^e) */
    dn_status st = dn_rne_div(sum, 13, -4, &code);
    if (st != DN_OK) {
        fprintf(stderr, "rne_div: %s\n", dn_status_str(st));
        return 1;
    }
    printf("dot %a  sum %a  argmax %zu  f16 0x%04x  code %lld  (isa %s)\n", dot, sum, best, half,
           (long long)code, dn_isa_name(dn_isa_active()));
    return 0;
}
