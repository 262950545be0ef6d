/* SPDX-License-Identifier: MIT */
/*
 * model.h: a Llama-family model bound to a GGUF file, and the decode loop.
 *
 * The engine links only libdecodenum's public API (decodenum.h). Weight
 * matrices stay in the file's mapping; only the small f32 vectors (norm
 * weights, biases) are copied, so that they are aligned floats whatever the
 * file's layout.
 */
#ifndef DECODE_MODEL_H
#define DECODE_MODEL_H

#include <decodenum.h>
#include <stddef.h>
#include <stdint.h>

#include "gguf.h"

/* hybrid: a Qwen3-Next-like stack (this engine's own metadata and tensor
   names): Gated-DeltaNet layers, every `attn_interval`-th layer attention. */
typedef enum dd_arch { DD_LLAMA = 0, DD_MISTRAL, DD_QWEN2, DD_QWEN3, DD_HYBRID } dd_arch;

/* A matrix of `rows` rows of `cols` elements, ggml's layout (ne[0] = cols). */
typedef struct dd_matrix {
    dn_type type;
    const uint8_t *data;
    size_t rows, cols;
    const uint8_t *packed; /* the rows repacked at load (decodenum/repack.h), or NULL */
} dd_matrix;

typedef struct dd_layer {
    const float *attn_norm, *ffn_norm;
    const float *q_norm, *k_norm; /* qwen3: per-head RMSNorm weights, else NULL */
    const float *bq, *bk, *bv;    /* qwen2: biases, else NULL */
    dd_matrix wq, wk, wv, wo, gate, up, down;
    /* a Gated-DeltaNet layer (gdn = 1) instead of wq..wo: q, k (key heads),
       v, z (value heads), beta and alpha (one row a value head), out */
    int gdn;
    dd_matrix sq, sk, sv, sz, sb, sa, sout;
    const float *conv;     /* channels x taps, channel c's taps at c * taps */
    const float *a_log;    /* value heads: the decay's log scale */
    const float *dt_bias;  /* value heads */
    const float *ssm_norm; /* dv: the gated RMSNorm's weight */
} dd_layer;

typedef struct dd_model {
    dd_arch arch;
    size_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_rot;
    float eps, theta;
    dn_rope_mode rope;
    /* hybrid: key heads, value heads, head size (dk = dv), conv taps,
       every attn_interval-th layer (1-based) attention */
    size_t gdn_kh, gdn_vh, gdn_d, gdn_taps, attn_interval;
    dd_matrix tok_embd, output; /* output = tok_embd when tied */
    const float *output_norm;
    dd_layer *layers;
    gf_str *vocab; /* n_vocab strings, or NULL */
    void *
        *owned; /* copied vectors (and, on big-endian hosts, F16 matrices), freed with the model */
    size_t n_owned;
} dd_model;

/* Binds a parsed file: the architecture (general.architecture: llama,
   mistral, qwen2, qwen3), its hyperparameters and every tensor, each
   checked for presence, shape and a type the engine multiplies (F16, and
   whatever dn_mat_vec reads). 0, or -1 with a message in err. */
int dd_model_load(const gf_file *f, dd_model *m, char *err, size_t err_bytes);
void dd_model_free(dd_model *m);
/* Repacks every matrix the products read (not the embedding, read by rows)
   whose format has repacked kernels (Q4_K, Q5_K, Q6_K, Q8_0, IQ4_XS) into
   memory the model owns: dn_repack_size's bytes each, about the weights'
   size again (the file's pages of those matrices are then no longer read).
   The products' bits do not change. 0, or -1 with a message in err. */
int dd_model_repack(dd_model *m, char *err, size_t err_bytes);
/* Copies every such matrix not repacked into memory the model owns, 2 MiB
   aligned and advised to huge pages (the file's mapping is in 4 KiB pages,
   and a product streaming 4 KiB pages read its weights at 0.8x the speed of
   2 MiB ones: docs/f16.md): the weights' size again. The products' bits do
   not change. 0, or -1 with a message in err. */
int dd_model_copy(dd_model *m, char *err, size_t err_bytes);

/* The per-module time buckets of the breakdown. */
enum {
    DD_T_EMBED,
    DD_T_NORM,
    DD_T_QUANT,
    DD_T_QKV,
    DD_T_ROPE,
    DD_T_KV,
    DD_T_ATTN,
    DD_T_GDN,
    DD_T_WO,
    DD_T_FFN_IN,
    DD_T_SWIGLU,
    DD_T_FFN_DOWN,
    DD_T_RESID,
    DD_T_HEAD,
    DD_T_ARGMAX,
    DD_T_COUNT
};
extern const char *const dd_bucket_names[DD_T_COUNT];

typedef struct dd_run {
    const uint32_t *prompt; /* token ids; n_prompt >= 1 */
    size_t n_prompt;
    size_t n_predict; /* tokens generated greedily after the prompt */
    unsigned threads; /* on one dn_pool; 0 = one per CPU */
    int kv_int8;      /* 1: an int8 KV cache, else binary16 */
    float *logits;    /* NULL, or n_predict * n_vocab floats: each step's logits */
    size_t batch;     /* prompt positions per pass (0: DD_BATCH_DEFAULT; at most
                         DD_BATCH_MAX); the same logits for every value */
} dd_run;

/* The prompt runs through the layers DD_BATCH_DEFAULT positions at a time
   (each product reads a weight once for all of them); a model with
   Gated-DeltaNet layers runs it one position at a time. */
#define DD_BATCH_DEFAULT 64
#define DD_BATCH_MAX 512

typedef struct dd_result {
    uint32_t *tokens; /* the n_predict generated ids (malloc'd) */
    size_t n_tokens;
    uint64_t digest;       /* FNV-1a 64 of every computed logit's bits, step by step */
    double seconds;        /* the whole loop */
    double prompt_seconds; /* the prompt's passes, its last position's logits included */
    double gen_seconds;    /* the steps after the prompt's last */
    size_t batch;          /* the prompt's positions per pass */
    double bucket[DD_T_COUNT];
} dd_result;

/* Runs the prompt through the model one token at a time, then greedy
   decoding (argmax of the logits). 0, or -1 with a message in err. */
int dd_generate(const dd_model *m, const dd_run *run, dd_result *res, char *err, size_t err_bytes);

#endif /* DECODE_MODEL_H */
