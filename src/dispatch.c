/* SPDX-License-Identifier: MIT */
/*
 * The one place kernels are registered: a registration per ISA naming each
 * module's table, resolved over the ISA below it so that a missing module or
 * entry runs the next kernel down, ending at the reference.
 *
 * Adding an ISA: its tables in src/<arch>/<m>_<isa>.c (entries it lacks left
 * NULL), one registration below, its `below` link, its detection in isa.c.
 * Adding a kernel to an ISA: fill the entry in that ISA's table; nothing here.
 */
#include "dispatch.h"
#include "isa.h"

#include <pthread.h>

/* What each ISA registers. An ISA this build lacks registers nothing. */
static const dn_kernels registered[DN_ISA_COUNT] = {
    [DN_ISA_SCALAR] = {&dn_fp32_scalar, &dn_math_scalar, &dn_f16_scalar, &dn_quant_scalar,
                       &dn_dot_scalar, &dn_attention_scalar, &dn_gdn_scalar, &dn_vec_scalar,
                       &dn_fp8_scalar},
#if defined(DN_HAVE_AVX2)
    [DN_ISA_AVX2] = {&dn_fp32_avx2, &dn_math_avx2, &dn_f16_avx2, &dn_quant_avx2, &dn_dot_avx2,
                     &dn_attention_avx2, &dn_gdn_avx2, &dn_vec_avx2, &dn_fp8_avx2},
#endif
#if defined(DN_HAVE_AVX512)
    [DN_ISA_AVX512] = {.fp32 = &dn_fp32_avx512,
                       .math = &dn_math_avx512,
                       .f16 = &dn_f16_avx512,
                       .quant = &dn_quant_avx512,
                       .dot = &dn_dot_avx512,
                       .attention = &dn_attention_avx512,
                       .gdn = &dn_gdn_avx512,
                       .vec = &dn_vec_avx512,
                       .fp8 = &dn_fp8_avx512},
#endif
#if defined(DN_HAVE_NEON)
    [DN_ISA_NEON] = {&dn_fp32_neon, &dn_math_neon, &dn_f16_neon, &dn_quant_neon, &dn_dot_neon,
                     &dn_attention_neon, &dn_gdn_neon, &dn_vec_neon, &dn_fp8_neon},
#endif
};

/* The ISA whose kernels fill what each ISA leaves out. */
static const dn_isa below[DN_ISA_COUNT] = {
    [DN_ISA_AVX2] = DN_ISA_SCALAR,
    [DN_ISA_NEON] = DN_ISA_SCALAR,
    [DN_ISA_AVX512] = DN_ISA_AVX2,
};

static void resolve_fp32(dn_fp32_kernels *k, const dn_fp32_kernels *b)
{
    if (!k->ftz_v) k->ftz_v = b->ftz_v;
    if (!k->f32_to_f16_v) k->f32_to_f16_v = b->f32_to_f16_v;
    if (!k->f16_to_f32_v) k->f16_to_f32_v = b->f16_to_f32_v;
    if (!k->f32_to_bf16_v) k->f32_to_bf16_v = b->f32_to_bf16_v;
    if (!k->bf16_to_f32_v) k->bf16_to_f32_v = b->bf16_to_f32_v;
    if (!k->fsum) k->fsum = b->fsum;
    if (!k->fdot) k->fdot = b->fdot;
    if (!k->fdot_tf32) k->fdot_tf32 = b->fdot_tf32;
    if (!k->fmax) k->fmax = b->fmax;
    if (!k->absmax) k->absmax = b->absmax;
    if (!k->argmax) k->argmax = b->argmax;
}

static void resolve_math(dn_math_kernels *k, const dn_math_kernels *b)
{
    if (!k->exp_v) k->exp_v = b->exp_v;
    if (!k->ln_v) k->ln_v = b->ln_v;
    if (!k->ln1p_v) k->ln1p_v = b->ln1p_v;
    if (!k->recip_v) k->recip_v = b->recip_v;
    if (!k->rsqrt_v) k->rsqrt_v = b->rsqrt_v;
    if (!k->sigmoid_v) k->sigmoid_v = b->sigmoid_v;
    if (!k->silu_v) k->silu_v = b->silu_v;
    if (!k->softplus_v) k->softplus_v = b->softplus_v;
    if (!k->softmax) k->softmax = b->softmax;
    if (!k->rmsnorm) k->rmsnorm = b->rmsnorm;
    if (!k->l2norm) k->l2norm = b->l2norm;
    if (!k->rope) k->rope = b->rope;
    if (!k->hadamard) k->hadamard = b->hadamard;
    if (!k->tanh_v) k->tanh_v = b->tanh_v;
    if (!k->gelu_tanh_v) k->gelu_tanh_v = b->gelu_tanh_v;
    if (!k->gelu_v) k->gelu_v = b->gelu_v;
    if (!k->rms0) k->rms0 = b->rms0;
    if (!k->rms_gated) k->rms_gated = b->rms_gated;
    if (!k->sin_v) k->sin_v = b->sin_v;
    if (!k->cos_v) k->cos_v = b->cos_v;
    if (!k->sincos_v) k->sincos_v = b->sincos_v;
    if (!k->rope_table) k->rope_table = b->rope_table;
}

static void resolve_w16(dn_w16_kernels *k, const dn_w16_kernels *b)
{
    if (!k->from_f32) k->from_f32 = b->from_f32;
    if (!k->widen) k->widen = b->widen;
    if (!k->round_f32) k->round_f32 = b->round_f32;
    if (!k->vec_dot) k->vec_dot = b->vec_dot;
    if (!k->sgemm_dot) k->sgemm_dot = b->sgemm_dot;
    if (!k->mat_vec_rows) k->mat_vec_rows = b->mat_vec_rows;
    if (!k->vec_dot_cols) k->vec_dot_cols = b->vec_dot_cols;
    /* a packed form belongs to the sgemm_rows that reads it */
    if (!k->sgemm_rows) {
        k->sgemm_rows = b->sgemm_rows;
        k->pack_bytes = b->pack_bytes;
        k->pack = b->pack;
    }
    if (!k->pack_bytes || !k->pack) {
        k->pack_bytes = dn_ref_w16_pack_bytes;
        k->pack = dn_ref_w16_pack;
    }
}

static void resolve_f16(dn_f16_kernels *k, const dn_f16_kernels *b)
{
    resolve_w16(&k->fp16, &b->fp16);
    resolve_w16(&k->bf16, &b->bf16);
    if (!k->mad) k->mad = b->mad;
    if (!k->scale) k->scale = b->scale;
}

/* mat_vec_rows_act goes with mat_vec_rows: a table that brings its own
   mat_vec_rows without the prepared form runs the plain one (the entry
   points take mat_vec_rows_act only where it is set). */
static void resolve_quant(dn_quant_kernels *k, const dn_quant_kernels *b)
{
    if (!k->quantize) k->quantize = b->quantize;
    if (!k->code_sums) k->code_sums = b->code_sums;
}

static void resolve_dot(dn_dot_kernels *k, const dn_dot_kernels *b)
{
    if (!k->mat_vec_rows) {
        k->mat_vec_rows = b->mat_vec_rows;
        if (!k->mat_vec_rows_act) k->mat_vec_rows_act = b->mat_vec_rows_act;
    }
    if (!k->mat_mul_rows) k->mat_mul_rows = b->mat_mul_rows;
    if (!k->packed_rows_act) k->packed_rows_act = b->packed_rows_act;
}

static void resolve_attention(dn_attention_kernels *k, const dn_attention_kernels *b)
{
    if (!k->scores) k->scores = b->scores;
    if (!k->weighted) k->weighted = b->weighted;
    if (!k->scores_int8) k->scores_int8 = b->scores_int8;
    if (!k->weighted_int8) k->weighted_int8 = b->weighted_int8;
    if (!k->cache_row) k->cache_row = b->cache_row;
}

static void resolve_gdn(dn_gdn_kernels *k, const dn_gdn_kernels *b)
{
    if (!k->conv) k->conv = b->conv;
    if (!k->rows) k->rows = b->rows;
    if (!k->flush_rows) k->flush_rows = b->flush_rows;
    if (!k->fold) k->fold = b->fold;
    if (!k->read_rows) k->read_rows = b->read_rows;
}

static void resolve_vec(dn_vec_kernels *k, const dn_vec_kernels *b)
{
    if (!k->add) k->add = b->add;
    if (!k->sub) k->sub = b->sub;
    if (!k->mul) k->mul = b->mul;
    if (!k->scale) k->scale = b->scale;
    if (!k->axpy) k->axpy = b->axpy;
    if (!k->silu_mul) k->silu_mul = b->silu_mul;
    if (!k->sigmoid_mul) k->sigmoid_mul = b->sigmoid_mul;
    if (!k->gelu_tanh_mul) k->gelu_tanh_mul = b->gelu_tanh_mul;
    if (!k->gelu_mul) k->gelu_mul = b->gelu_mul;
    if (!k->add_sumsq) k->add_sumsq = b->add_sumsq;
    if (!k->scale_mul) k->scale_mul = b->scale_mul;
}

static void resolve_fp8(dn_fp8_kernels *k, const dn_fp8_kernels *b)
{
    if (!k->decode) k->decode = b->decode;
    if (!k->mat_vec_rows) k->mat_vec_rows = b->mat_vec_rows;
    if (!k->mat_mul_rows) k->mat_mul_rows = b->mat_mul_rows;
}

void dn_kernels_resolve(const dn_kernels *own, const dn_kernels *below_k, dn_kernel_slots *out)
{
    out->fp32 = own->fp32 ? *own->fp32 : *below_k->fp32;
    out->math = own->math ? *own->math : *below_k->math;
    out->f16 = own->f16 ? *own->f16 : *below_k->f16;
    out->quant = own->quant ? *own->quant : *below_k->quant;
    out->dot = own->dot ? *own->dot : *below_k->dot;
    out->attention = own->attention ? *own->attention : *below_k->attention;
    out->gdn = own->gdn ? *own->gdn : *below_k->gdn;
    out->vec = own->vec ? *own->vec : *below_k->vec;
    out->fp8 = own->fp8 ? *own->fp8 : *below_k->fp8;
    resolve_fp32(&out->fp32, below_k->fp32);
    resolve_math(&out->math, below_k->math);
    resolve_f16(&out->f16, below_k->f16);
    resolve_quant(&out->quant, below_k->quant);
    resolve_dot(&out->dot, below_k->dot);
    resolve_attention(&out->attention, below_k->attention);
    resolve_gdn(&out->gdn, below_k->gdn);
    resolve_vec(&out->vec, below_k->vec);
    resolve_fp8(&out->fp8, below_k->fp8);
    out->kernels = (dn_kernels){&out->fp32,      &out->math, &out->f16, &out->quant, &out->dot,
                                &out->attention, &out->gdn,  &out->vec, &out->fp8};
}

static dn_kernel_slots slots[DN_ISA_COUNT];
static const dn_kernels *active;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Resolves every ISA this build registers, lowest first, so each resolves
   over a finished one. The scalar registration is complete: it resolves over
   itself. */
static void resolve_all(void)
{
    dn_kernels_resolve(&registered[DN_ISA_SCALAR], &registered[DN_ISA_SCALAR],
                       &slots[DN_ISA_SCALAR]);
    for (int isa = 1; isa < DN_ISA_COUNT; isa++) {
        dn_kernels own = registered[isa];
        const dn_kernels *r = &own;
        /* the dot kernels of AVX-512 use VNNI, a feature of its own: without
           it the dot module is the ISA below's */
        if (isa == DN_ISA_AVX512 && !dn_cpu()->avx512vnni) own.dot = NULL;
#if defined(DN_HAVE_AVX512)
        /* so does the bfloat16 conversion of the gdn rows' store */
        if (isa == DN_ISA_AVX512 && dn_cpu()->avx512bf16) own.gdn = &dn_gdn_avx512bf16;
        /* and BF16's tinyBLAS rows by vdpbf16ps, once a probe shows the
           instruction adds as the kernel assumes */
        if (isa == DN_ISA_AVX512 && dn_cpu()->avx512bf16 && dn_f16_avx512bf16_exact())
            own.f16 = &dn_f16_avx512bf16;
        /* and the int8 attention's pair sums, by vpdpwssd when it is there */
        if (isa == DN_ISA_AVX512 && dn_cpu()->avx512vnni) own.attention = &dn_attention_avx512vnni;
        /* and the FP8 mat_vec's code tests, by a VBMI byte permute, and its
           decode by GFNI byte maps */
        if (isa == DN_ISA_AVX512 && dn_cpu()->avx512vbmi && dn_cpu()->gfni)
            own.fp8 = &dn_fp8_avx512vbmi;
#endif
        if (r->fp32 || r->math || r->f16 || r->quant || r->dot || r->attention || r->gdn ||
            r->vec || r->fp8)
            dn_kernels_resolve(r, &slots[below[isa]].kernels, &slots[isa]);
    }
    dn_isa chosen = dn_isa_active();
    active = slots[chosen].kernels.fp32 ? &slots[chosen].kernels : &slots[DN_ISA_SCALAR].kernels;
}

const dn_kernels *dn_kernels_for(dn_isa isa)
{
    if ((unsigned)isa >= DN_ISA_COUNT || !dn_isa_available(isa)) return NULL;
    pthread_once(&once, resolve_all);
    return slots[isa].kernels.fp32 ? &slots[isa].kernels : NULL;
}

const dn_kernels *dn_kernels_active(void)
{
    pthread_once(&once, resolve_all);
    return active;
}
