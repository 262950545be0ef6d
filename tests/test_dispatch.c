/* SPDX-License-Identifier: MIT */
/*
 * The one registration of kernels (src/dispatch.c): every ISA's resolved
 * table has every slot filled, and a module or an entry an ISA does not
 * register falls back to the ISA below it, so the function still returns the
 * reference's bits. The fall-back is exercised on a registration with slots
 * removed, resolved by the dispatcher's own step.
 */
#include <stdio.h>

#include "decodenum.h"
#include "check/check.h"
#include "dispatch.h"
#include "isa.h"
#include "testutil.h"

static const dn_isa all_isas[] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_NEON, DN_ISA_AVX512};

/* The SIMD ISA this CPU runs, or the scalar one where there is none. */
static dn_isa simd_isa(void)
{
    for (size_t i = 1; i < sizeof all_isas / sizeof *all_isas; i++)
        if (dn_isa_available(all_isas[i])) return all_isas[i];
    return DN_ISA_SCALAR;
}

static void every_slot_filled(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof all_isas / sizeof *all_isas; i++) {
        const dn_kernels *k = dn_kernels_for(all_isas[i]);
        if (!dn_isa_available(all_isas[i])) {
            assert_null(k);
            continue;
        }
        assert_non_null(k);
        const dn_fp32_kernels *f = k->fp32;
        assert_true(f->ftz_v && f->f32_to_f16_v && f->f16_to_f32_v && f->f32_to_bf16_v &&
                    f->bf16_to_f32_v && f->fsum && f->fdot && f->fdot_tf32 && f->fmax &&
                    f->absmax && f->argmax);
        const dn_math_kernels *m = k->math;
        assert_true(m->exp_v && m->ln_v && m->ln1p_v && m->recip_v && m->rsqrt_v && m->sigmoid_v &&
                    m->silu_v && m->softplus_v && m->softmax && m->rmsnorm && m->l2norm &&
                    m->rope && m->hadamard);
        assert_true(m->tanh_v && m->gelu_tanh_v && m->gelu_v && m->rms0 && m->rms_gated);
        assert_true(m->sin_v && m->cos_v && m->sincos_v);
        const dn_f16_kernels *h = k->f16;
        const dn_w16_kernels *types[2] = {&h->fp16, &h->bf16};
        for (int t = 0; t < 2; t++)
            assert_true(types[t]->from_f32 && types[t]->widen && types[t]->round_f32 &&
                        types[t]->vec_dot && types[t]->sgemm_dot && types[t]->mat_vec_rows &&
                        types[t]->sgemm_rows);
        assert_true(h->mad && h->scale);
        assert_true(k->quant->quantize && k->quant->code_sums && k->dot->mat_vec_rows &&
                    k->dot->mat_mul_rows && k->dot->packed_rows_act);
        const dn_attention_kernels *a = k->attention;
        assert_true(a->scores && a->weighted && a->scores_int8 && a->weighted_int8 && a->cache_row);
        const dn_gdn_kernels *g = k->gdn;
        assert_true(g->conv && g->rows && g->flush_rows && g->fold && g->read_rows);
        const dn_vec_kernels *v = k->vec;
        assert_true(v->add && v->sub && v->mul && v->scale && v->axpy && v->silu_mul &&
                    v->sigmoid_mul && v->gelu_tanh_mul && v->gelu_mul && v->add_sumsq &&
                    v->scale_mul);
        const dn_fp8_kernels *e = k->fp8;
        assert_true(e->decode && e->mat_vec_rows && e->mat_mul_rows);
    }
    assert_ptr_equal(dn_kernels_active(), dn_kernels_for(dn_isa_active()));
}

/* A registration with one fp32 entry removed and no math module: the removed
   entry is the reference's, the module the scalar one, the rest untouched. */
static void missing_entry_runs_the_reference(void **state)
{
    (void)state;
    const dn_kernels *simd = dn_kernels_for(simd_isa());
    const dn_kernels *scalar = dn_kernels_for(DN_ISA_SCALAR);
    dn_fp32_kernels fp32 = *simd->fp32;
    fp32.fdot = NULL;
    dn_vec_kernels vec = *simd->vec;
    vec.add_sumsq = NULL;
    vec.gelu_mul = NULL;
    const dn_kernels partial = {.fp32 = &fp32,
                                .f16 = simd->f16,
                                .quant = simd->quant,
                                .dot = simd->dot,
                                .attention = simd->attention,
                                .gdn = simd->gdn,
                                .vec = &vec,
                                .fp8 = NULL};
    dn_kernel_slots out;
    dn_kernels_resolve(&partial, scalar, &out);
    assert_ptr_equal(out.kernels.vec->add_sumsq, dn_ref_vec_add_sumsq);
    assert_ptr_equal(out.kernels.vec->add, simd->vec->add);
    assert_ptr_equal(out.kernels.vec->gelu_mul, dn_ref_vec_gelu_mul);
    assert_ptr_equal(out.kernels.vec->gelu_tanh_mul, simd->vec->gelu_tanh_mul);
    /* no fp8 module registered: the scalar one */
    assert_ptr_equal(out.kernels.fp8->mat_vec_rows, dn_ref_fp8_mat_vec_rows);

    assert_ptr_equal(out.kernels.fp32->fdot, dn_ref_fdot);
    assert_ptr_equal(out.kernels.fp32->fsum, simd->fp32->fsum);
    assert_ptr_equal(out.kernels.math->exp_v, dn_ref_exp_v);
    assert_ptr_equal(out.kernels.f16->fp16.vec_dot, simd->f16->fp16.vec_dot);

    /* The bits: the resolved entry against the reference and the public
       function, on inputs whose lanes, tails and flushes all matter. */
    enum { N = 1027 };
    static float a[N], b[N];
    dn_rng rng = {UINT64_C(0xD15BA7C4)};
    for (int regime = 0; regime < DN_REGIME_COUNT; regime++) {
        dn_fill_f32(&rng, (dn_regime)regime, a, N);
        dn_fill_f32(&rng, (dn_regime)regime, b, N);
        for (size_t n = 0; n <= N; n += n < 70 ? 1 : 97) {
            float want = dn_ref_fdot(a, b, n);
            assert_same_float(out.kernels.fp32->fdot(a, b, n), want);
            assert_same_float(dn_fdot(a, b, n), want);
        }
    }
}

/* A new ISA that registers one kernel: everything else is the ISA below. */
static void new_isa_with_one_kernel(void **state)
{
    (void)state;
    const dn_kernels *below = dn_kernels_for(simd_isa());
    const dn_f16_kernels one = {.fp16.vec_dot = dn_ref_f16_vec_dot};
    const dn_kernels start = {.f16 = &one};
    dn_kernel_slots out;
    dn_kernels_resolve(&start, below, &out);
    assert_ptr_equal(out.kernels.f16->fp16.vec_dot, dn_ref_f16_vec_dot);
    assert_ptr_equal(out.kernels.f16->fp16.sgemm_rows, below->f16->fp16.sgemm_rows);
    assert_ptr_equal(out.kernels.f16->fp16.widen, below->f16->fp16.widen);
    assert_ptr_equal(out.kernels.f16->bf16.vec_dot, below->f16->bf16.vec_dot);
    assert_ptr_equal(out.kernels.fp32->fdot, below->fp32->fdot);
    assert_ptr_equal(out.kernels.math->softmax, below->math->softmax);
    assert_ptr_equal(out.kernels.attention->scores, below->attention->scores);
    assert_ptr_equal(out.kernels.attention->cache_row, below->attention->cache_row);
    assert_ptr_equal(out.kernels.gdn->rows, below->gdn->rows);
    assert_ptr_equal(out.kernels.vec->silu_mul, below->vec->silu_mul);
    assert_ptr_equal(out.kernels.vec->gelu_tanh_mul, below->vec->gelu_tanh_mul);
    assert_ptr_equal(out.kernels.vec->gelu_mul, below->vec->gelu_mul);
    assert_ptr_equal(out.kernels.fp8->decode, below->fp8->decode);
    assert_ptr_equal(out.kernels.quant->quantize, below->quant->quantize);
    assert_ptr_equal(out.kernels.quant->code_sums, below->quant->code_sums);
    assert_ptr_equal(out.kernels.dot->mat_vec_rows, below->dot->mat_vec_rows);
    assert_ptr_equal(out.kernels.dot->mat_vec_rows_act, below->dot->mat_vec_rows_act);
    assert_ptr_equal(out.kernels.dot->packed_rows_act, below->dot->packed_rows_act);
    assert_ptr_equal(out.kernels.dot->mat_mul_rows, below->dot->mat_mul_rows);
}

/* The AVX-512 dot kernels use VNNI, a feature of its own: the AVX-512
   table holds them only on a CPU with it, else the AVX2 ones. */
static void avx512_dot_needs_vnni(void **state)
{
    (void)state;
    const dn_kernels *k5 = dn_kernels_for(DN_ISA_AVX512), *k2 = dn_kernels_for(DN_ISA_AVX2);
    if (!k5 || !k2) {
        print_message("no AVX-512 on this CPU or build\n");
        skip();
    }
    if (dn_cpu()->avx512vnni) {
        assert_ptr_not_equal(k5->dot->mat_vec_rows, k2->dot->mat_vec_rows);
        assert_ptr_not_equal(k5->dot->mat_vec_rows_act, k2->dot->mat_vec_rows_act);
    } else {
        assert_ptr_equal(k5->dot->mat_vec_rows, k2->dot->mat_vec_rows);
        assert_ptr_equal(k5->dot->mat_vec_rows_act, k2->dot->mat_vec_rows_act);
    }
}

/* The AVX-512 FP8 mat_vec tests its codes by a VBMI byte permute and
   decodes by GFNI where the CPU has AVX512_VBMI and GFNI; the AVX-512 slot
   holds that table then, the plain AVX-512 one otherwise (never AVX2's:
   the decode is AVX-512F/BW). */
static void avx512_fp8_by_vbmi(void **state)
{
    (void)state;
    const dn_kernels *k5 = dn_kernels_for(DN_ISA_AVX512), *k2 = dn_kernels_for(DN_ISA_AVX2);
    if (!k5 || !k2) {
        print_message("no AVX-512 on this CPU or build\n");
        skip();
    }
    assert_ptr_not_equal(k5->fp8->mat_vec_rows, k2->fp8->mat_vec_rows);
#if defined(DN_HAVE_AVX512)
    if (dn_cpu()->avx512vbmi && dn_cpu()->gfni)
        assert_ptr_equal(k5->fp8->mat_vec_rows, dn_fp8_avx512vbmi.mat_vec_rows);
    else
        assert_ptr_equal(k5->fp8->mat_vec_rows, dn_fp8_avx512.mat_vec_rows);
    assert_ptr_equal(k5->fp8->mat_mul_rows, dn_fp8_avx512.mat_mul_rows);
    assert_ptr_not_equal(dn_fp8_avx512vbmi.mat_vec_rows, dn_fp8_avx512.mat_vec_rows);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_slot_filled),
        cmocka_unit_test(missing_entry_runs_the_reference),
        cmocka_unit_test(new_isa_with_one_kernel),
        cmocka_unit_test(avx512_dot_needs_vnni),
        cmocka_unit_test(avx512_fp8_by_vbmi),
    };
    return cmocka_run_group_tests_name("dispatch", tests, NULL, NULL);
}
