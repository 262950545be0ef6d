/* The fp32 core's kernel tables: the references, and the table per ISA. */
#include "fp32_kernels.h"
#include "isa.h"

const dn_fp32_kernels dn_fp32_scalar = {
    .ftz_v = dn_ref_ftz_v,
    .f32_to_f16_v = dn_ref_f32_to_f16_v,
    .f16_to_f32_v = dn_ref_f16_to_f32_v,
    .f32_to_bf16_v = dn_ref_f32_to_bf16_v,
    .bf16_to_f32_v = dn_ref_bf16_to_f32_v,
    .fsum = dn_ref_fsum,
    .fdot = dn_ref_fdot,
    .fdot_tf32 = dn_ref_fdot_tf32,
    .fmax = dn_ref_fmax,
    .absmax = dn_ref_absmax,
    .argmax = dn_ref_argmax,
};

const dn_fp32_kernels *dn_fp32_kernels_for(dn_isa isa)
{
    if (!dn_isa_available(isa)) return NULL;
    switch (isa) {
    case DN_ISA_SCALAR: return &dn_fp32_scalar;
#if defined(DN_HAVE_AVX2)
    case DN_ISA_AVX2: return &dn_fp32_avx2;
#endif
#if defined(DN_HAVE_NEON)
    case DN_ISA_NEON: return &dn_fp32_neon;
#endif
    default: return NULL;
    }
}

const dn_fp32_kernels *dn_fp32_active(void)
{
    const dn_fp32_kernels *k = dn_fp32_kernels_for(dn_isa_active());
    return k ? k : &dn_fp32_scalar;
}
