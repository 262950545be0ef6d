/* SPDX-License-Identifier: MIT */
/* A program that uses the installed library as any consumer would. */
#include <decodenum.h>
#include <stdio.h>

int main(void)
{
    float a[40], b[40];
    for (int i = 0; i < 40; i++) {
        a[i] = (float)i;
        b[i] = 0.5f;
    }
    float dot = dn_fdot(a, b, 40); /* 0.5 * (0 + ... + 39) = 390, exact */
    uint16_t h = dn_f32_to_f16(dot);
    printf("libdecodenum %s, isa %s: fdot = %g, as binary16 0x%04x\n", dn_version_string(),
           dn_isa_name(dn_isa_active()), dot, h);
    if (dn_version() / 10000 != DN_VERSION_MAJOR) return 1;
#if !defined(DN_HAVE_FP32) || !defined(DN_HAVE_SELFTEST)
    return 1; /* the module macros of decodenum/common.h */
#endif
    return dot == 390.0f && h == 0x5E18 ? 0 : 1;
}
