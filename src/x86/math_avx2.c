/* placeholder: replaced below */
#include "../math_kernels.h"
const dn_math_kernels dn_math_avx2 = {
    .exp_v = dn_ref_exp_v, .ln_v = dn_ref_ln_v, .ln1p_v = dn_ref_ln1p_v, .recip_v = dn_ref_recip_v,
    .rsqrt_v = dn_ref_rsqrt_v, .sigmoid_v = dn_ref_sigmoid_v, .silu_v = dn_ref_silu_v,
    .softplus_v = dn_ref_softplus_v, .softmax = dn_ref_softmax, .rmsnorm = dn_ref_rmsnorm,
    .l2norm = dn_ref_l2norm, .rope = dn_ref_rope, .hadamard = dn_ref_hadamard,
};
