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
#include "testutil.h"

static const dn_isa all_isas[] = {DN_ISA_SCALAR, DN_ISA_AVX2, DN_ISA_NEON};

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
        assert_true(m->sin_v && m->cos_v && m->sincos_v);
        const dn_f16_kernels *h = k->f16;
        assert_true(h->from_f32 && h->widen && h->round_f32 && h->vec_dot && h->sgemm_dot &&
                    h->mad && h->scale && h->mat_vec_rows && h->sgemm_rows);
        assert_true(k->quant->quantize && k->dot->mat_vec_rows);
        const dn_attention_kernels *a = k->attention;
        assert_true(a->scores && a->weighted && a->scores_int8 && a->weighted_int8);
        const dn_gdn_kernels *g = k->gdn;
        assert_true(g->conv && g->rows && g->flush_rows && g->fold && g->read_rows);
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
    const dn_kernels partial = {.fp32 = &fp32,
                                .f16 = simd->f16,
                                .quant = simd->quant,
                                .dot = simd->dot,
                                .attention = simd->attention,
                                .gdn = simd->gdn};
    dn_kernel_slots out;
    dn_kernels_resolve(&partial, scalar, &out);

    assert_ptr_equal(out.kernels.fp32->fdot, dn_ref_fdot);
    assert_ptr_equal(out.kernels.fp32->fsum, simd->fp32->fsum);
    assert_ptr_equal(out.kernels.math->exp_v, dn_ref_exp_v);
    assert_ptr_equal(out.kernels.f16->vec_dot, simd->f16->vec_dot);

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
    const dn_f16_kernels one = {.vec_dot = dn_ref_f16_vec_dot};
    const dn_kernels start = {.f16 = &one};
    dn_kernel_slots out;
    dn_kernels_resolve(&start, below, &out);
    assert_ptr_equal(out.kernels.f16->vec_dot, dn_ref_f16_vec_dot);
    assert_ptr_equal(out.kernels.f16->sgemm_rows, below->f16->sgemm_rows);
    assert_ptr_equal(out.kernels.f16->widen, below->f16->widen);
    assert_ptr_equal(out.kernels.fp32->fdot, below->fp32->fdot);
    assert_ptr_equal(out.kernels.math->softmax, below->math->softmax);
    assert_ptr_equal(out.kernels.attention->scores, below->attention->scores);
    assert_ptr_equal(out.kernels.gdn->rows, below->gdn->rows);
    assert_ptr_equal(out.kernels.quant->quantize, below->quant->quantize);
    assert_ptr_equal(out.kernels.dot->mat_vec_rows, below->dot->mat_vec_rows);
    assert_ptr_equal(out.kernels.dot->mat_vec_rows_act, below->dot->mat_vec_rows_act);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_slot_filled),
        cmocka_unit_test(missing_entry_runs_the_reference),
        cmocka_unit_test(new_isa_with_one_kernel),
    };
    return cmocka_run_group_tests_name("dispatch", tests, NULL, NULL);
}
