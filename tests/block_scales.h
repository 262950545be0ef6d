/* SPDX-License-Identifier: MIT */
/*
 * block_scales.h: where ggml's block layouts keep their binary16 scales, for
 * tests that build blocks byte by byte (a finite scale, or an infinite one
 * to make a block unreadable). Written from ggml-common.h's block structs,
 * not from src/: the tests hold the readers to it.
 */
#ifndef DN_TEST_BLOCK_SCALES_H
#define DN_TEST_BLOCK_SCALES_H

#include "decodenum/blocks.h"

static const struct {
    dn_type type;
    int d_at, b_at; /* byte offsets of the scale d and of the second scale (-1: none) */
} block_scales[] = {
    {DN_TYPE_Q4_0, 0, -1},   {DN_TYPE_Q4_1, 0, 2},    {DN_TYPE_Q5_0, 0, -1},
    {DN_TYPE_Q5_1, 0, 2},    {DN_TYPE_Q8_0, 0, -1},   {DN_TYPE_Q2_K, 80, 82},
    {DN_TYPE_Q3_K, 108, -1}, {DN_TYPE_Q4_K, 0, 2},    {DN_TYPE_Q5_K, 0, 2},
    {DN_TYPE_Q6_K, 208, -1}, {DN_TYPE_IQ4_NL, 0, -1}, {DN_TYPE_IQ4_XS, 0, -1},
};
#define NBLOCK_SCALES (sizeof block_scales / sizeof block_scales[0])

#endif
