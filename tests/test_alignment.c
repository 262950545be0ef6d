/* SPDX-License-Identifier: MIT */
/*
 * The alignment the API requires (include/decodenum/common.h): a typed array
 * only its type's natural alignment, a byte array none. Every dispatched
 * entry point on arrays that start one element past a 64-byte boundary (so
 * no vector load is aligned) gives the bits of the same call on aligned
 * copies; under the sanitize preset UBSan also checks every load and store.
 */
#include <stdio.h>

#include "decodenum.h"
#include "check/check.h"
#include "testutil.h"

enum { N = 517 };

typedef struct arrays {
    _Alignas(64) float x[N + 16];
    _Alignas(64) float y[N + 16];
    _Alignas(64) float out[N + 16];
    _Alignas(64) uint16_t h[N + 32];
    _Alignas(64) uint16_t hout[N + 32];
} arrays;

/* Aligned (shift 0) and shifted (one element past the boundary) views. */
static float *fv(float *base, int shift) { return base + shift; }
static uint16_t *hv(uint16_t *base, int shift) { return base + shift; }

static void fill(arrays *a, int shift)
{
    dn_rng rng = {UINT64_C(0xA119)};
    float tmp[N];
    dn_fill_f32(&rng, DN_REGIME_NORMAL, tmp, N);
    memcpy(fv(a->x, shift), tmp, sizeof tmp);
    dn_fill_f32(&rng, DN_REGIME_NORMAL, tmp, N);
    memcpy(fv(a->y, shift), tmp, sizeof tmp);
    dn_f32_to_f16_v(tmp, hv(a->h, shift), N);
}

static void mix(uint64_t *hash, const void *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++) *hash = (*hash ^ ((const uint8_t *)p)[i]) * 0x100000001B3u;
}

/* Every array entry point once, its outputs hashed in order. */
static uint64_t run_all(arrays *a, int shift)
{
    uint64_t hash = 0xcbf29ce484222325u;
    const float *x = fv(a->x, shift), *y = fv(a->y, shift);
    float *out = fv(a->out, shift);
    const uint16_t *h = hv(a->h, shift);
    uint16_t *hout = hv(a->hout, shift);
    float r[6] = {dn_fsum(x, N), dn_fdot(x, y, N), dn_fdot_tf32(x, y, N),
                  dn_fmax(x, N), dn_absmax(x, N),  (float)dn_argmax(x, N)};
    mix(&hash, r, sizeof r);
    dn_status (*unary[])(const float *, float *, size_t) = {dn_exp_v,   dn_ln_v,       dn_ln1p_v,
                                                            dn_recip_v, dn_rsqrt_v,    dn_sigmoid_v,
                                                            dn_silu_v,  dn_softplus_v, dn_ftz_v};
    for (size_t f = 0; f < sizeof unary / sizeof *unary; f++) {
        assert_int_equal(unary[f](x, out, N), DN_OK);
        mix(&hash, out, N * sizeof *out);
    }
    assert_int_equal(dn_rmsnorm(x, y, 1e-6f, out, N), DN_OK);
    mix(&hash, out, N * sizeof *out);
    assert_int_equal(dn_softmax(x, out, N), DN_OK);
    mix(&hash, out, N * sizeof *out);
    assert_int_equal(dn_f32_to_f16_v(x, hout, N), DN_OK);
    mix(&hash, hout, N * sizeof *hout);
    assert_int_equal(dn_f16_to_f32_v(h, out, N), DN_OK);
    mix(&hash, out, N * sizeof *out);
    assert_int_equal(dn_bf16_to_f32_v(h, out, N), DN_OK);
    mix(&hash, out, N * sizeof *out);
    assert_int_equal(dn_f16_widen(h, out, N), DN_OK);
    mix(&hash, out, N * sizeof *out);
    float d[2];
    assert_int_equal(dn_f16_dot(DN_F16_PATH_VEC_DOT, h, h + 8, 501, &d[0]), DN_OK);
    assert_int_equal(dn_f16_dot(DN_F16_PATH_SGEMM, h, h + 8, 504, &d[1]), DN_OK);
    mix(&hash, d, sizeof d);
    memcpy(hout, h, N * sizeof *h);
    assert_int_equal(dn_f16_mad(hout, h + 3, 0.75f, N - 3), DN_OK);
    mix(&hash, hout, N * sizeof *hout);
    assert_int_equal(dn_f16_mat_mul(h, 8, 64, x, 4, out, NULL), DN_OK); /* tinyBLAS path */
    mix(&hash, out, 32 * sizeof *out);
    assert_int_equal(dn_f16_mat_vec(h, 7, 72, x, out, NULL), DN_OK);
    mix(&hash, out, 7 * sizeof *out);
    return hash;
}

static void natural_alignment_suffices(void **state)
{
    (void)state;
    static arrays aligned, shifted;
    fill(&aligned, 0);
    fill(&shifted, 1);
    assert_int_equal(run_all(&aligned, 0), run_all(&shifted, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(natural_alignment_suffices),
    };
    return cmocka_run_group_tests_name("alignment", tests, NULL, NULL);
}
