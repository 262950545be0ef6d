/* SPDX-License-Identifier: MIT */
/*
 * The activation quantization's public entry points: the arguments checked,
 * then the active ISA's kernel (src/quant_kernels.h).
 */
#include "decodenum/quant.h"
#include "dispatch.h"

/* The arguments dn_ref_quantize accepts, checked before any kernel runs. */
static int quantize_args_ok(const float *x, size_t n, size_t block, dn_words words,
                            const dn_act_row *row)
{
    if (!row || (n && !x) || row->n != n || block == 0 || n % block != 0) return 0;
    if (words != DN_WORDS_ONE && words != DN_WORDS_TWO) return 0;
    return !n || (row->codes && row->scales);
}

static dn_status quantize_per(const float *x, size_t n, size_t block, int32_t lo, dn_words words,
                              dn_act_row *row, size_t *bad)
{
    if (!quantize_args_ok(x, n, block, words, row)) return DN_ERR_INVALID_ARGUMENT;
    return dn_kernels_active()->quant->quantize(x, n, block, lo, words, row, bad);
}

dn_status dn_quantize(const float *x, size_t n, dn_words words, dn_act_row *row, size_t *bad)
{
    return quantize_per(x, n, DN_ACT_BLOCK, 8, words, row, bad);
}

dn_status dn_quantize_blocks(const float *x, size_t n, size_t block, dn_words words,
                             dn_act_row *row, size_t *bad)
{
    if (block != 32 && block != 256) return DN_ERR_INVALID_ARGUMENT;
    return quantize_per(x, n, block, 128, words, row, bad);
}
