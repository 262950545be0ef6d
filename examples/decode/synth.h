/* SPDX-License-Identifier: MIT */
/*
 * synth.h: a small Llama-family model made from a seed, as a GGUF image in
 * memory (so the decode loop reads it exactly as it reads a file, and
 * --write-gguf hands the same bytes to other engines).
 */
#ifndef DECODE_SYNTH_H
#define DECODE_SYNTH_H

#include <stddef.h>
#include <stdint.h>

/* Weight mixes: every matrix in one type, or Q4_K_M-like (Q4_K; Q6_K for
   attn_v, ffn_down and the output; Q5_K for attn_output). BF16 last, so
   the earlier types keep their numbers. */
typedef enum dd_wtype {
    DD_W_F16,
    DD_W_Q8_0,
    DD_W_Q4_K,
    DD_W_Q5_K,
    DD_W_Q6_K,
    DD_W_Q4_K_M,
    DD_W_BF16,
    DD_W_COUNT
} dd_wtype;

typedef struct dd_synth {
    const char *arch; /* llama, mistral, qwen2 (biases), qwen3 (q/k norms) */
    dd_wtype wtype;
    uint64_t seed;
    size_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab;
    int tied; /* no output.weight: the embedding is the output matrix */
} dd_synth;

/* "f16", "q8_0", ...; -1 for a name not in the list. */
int dd_wtype_parse(const char *name);
const char *dd_wtype_name(dd_wtype t);

/* The GGUF image of the model (malloc'd, *size bytes). 0, or -1 with a
   message in err (sizes that do not fit the chosen blocks, memory). */
int dd_synth_gguf(const dd_synth *sp, uint8_t **image, size_t *size, char *err, size_t err_bytes);

#endif /* DECODE_SYNTH_H */
