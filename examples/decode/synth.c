/* SPDX-License-Identifier: MIT */
/*
 * synth.c: the synthetic model's GGUF image. Weights are drawn from a
 * splitmix64 stream: F16 values uniform in +-sqrt(3/cols) (unit-variance
 * products), block formats as random codes under fixed binary16 scales of
 * the same magnitude; norm weights 1 +- 0.1. The layout is the one gguf.h
 * describes: header, metadata, tensor infos, data at 32-byte offsets.
 */
#include "synth.h"

#include <decodenum.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 32
#define HYBRID_EVERY 4 /* every 4th layer attention, as Qwen3-Next */
#define HYBRID_TAPS 4

typedef struct out {
    uint8_t *p;
    size_t n, cap;
    int oom;
    uint64_t kvs; /* metadata entries written */
} out;

static void put(out *o, const void *b, size_t n)
{
    if (o->oom) return;
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->n + n) cap *= 2;
        uint8_t *p = realloc(o->p, cap);
        if (!p) {
            o->oom = 1;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    if (n) memcpy(o->p + o->n, b, n);
    o->n += n;
}

static void put_le(out *o, uint64_t v, unsigned bytes)
{
    uint8_t b[8];
    for (unsigned i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(o, b, bytes);
}

static void put_str(out *o, const char *s)
{
    put_le(o, strlen(s), 8);
    put(o, s, strlen(s));
}

static void put_f32(out *o, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_le(o, u, 4);
}

static void kv_u32(out *o, const char *arch, const char *key, uint32_t v)
{
    o->kvs++;
    char k[128];
    snprintf(k, sizeof k, "%s%s%s", arch ? arch : "", arch ? "." : "", key);
    put_str(o, k);
    put_le(o, 4, 4);
    put_le(o, v, 4);
}

static void kv_f32(out *o, const char *arch, const char *key, float v)
{
    o->kvs++;
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    put_str(o, k);
    put_le(o, 6, 4);
    put_f32(o, v);
}

static void kv_str(out *o, const char *key, const char *v)
{
    o->kvs++;
    put_str(o, key);
    put_le(o, 8, 4);
    put_str(o, v);
}

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [-a, a), the same bits everywhere (exact scaling, one rounding) */
static float uniform(uint64_t *s, double a)
{
    return (float)(((double)(next(s) >> 11) * 0x1p-52 - 1.0) * a);
}

/* ---- the tensors -------------------------------------------------------- */

typedef struct tdesc {
    char name[64];
    uint64_t ne0, ne1;
    dn_type type;
    uint64_t bytes, offset;
    int kind; /* 0 matrix, 1 vector around 1, 2 vector around 0, 3 conv taps */
} tdesc;

static const dn_type wtypes[DD_W_COUNT] = {DN_TYPE_F16,  DN_TYPE_Q8_0, DN_TYPE_Q4_K, DN_TYPE_Q5_K,
                                           DN_TYPE_Q6_K, DN_TYPE_Q4_K, DN_TYPE_BF16};
static const char *const wnames[DD_W_COUNT] = {"f16",  "q8_0",   "q4_k", "q5_k",
                                               "q6_k", "q4_k_m", "bf16"};

int dd_wtype_parse(const char *name)
{
    for (int i = 0; i < DD_W_COUNT; i++)
        if (strcmp(name, wnames[i]) == 0) return i;
    return -1;
}

const char *dd_wtype_name(dd_wtype t) { return (unsigned)t < DD_W_COUNT ? wnames[t] : "?"; }

static dn_type matrix_type(const dd_synth *sp, const char *name)
{
    if (sp->wtype != DD_W_Q4_K_M) return wtypes[sp->wtype];
    if (strstr(name, "attn_v.") || strstr(name, "ffn_down.") || strcmp(name, "output.weight") == 0)
        return DN_TYPE_Q6_K;
    if (strstr(name, "attn_output.")) return DN_TYPE_Q5_K;
    return DN_TYPE_Q4_K;
}

static void add(tdesc *t, size_t *n, const dd_synth *sp, const char *name, int layer, uint64_t ne0,
                uint64_t ne1, int kind)
{
    tdesc *d = &t[(*n)++];
    memset(d, 0, sizeof *d);
    if (layer < 0)
        snprintf(d->name, sizeof d->name, "%s", name);
    else
        snprintf(d->name, sizeof d->name, "blk.%d.%s", layer, name);
    d->ne0 = ne0;
    d->ne1 = ne1;
    d->kind = kind;
    d->type = kind ? DN_TYPE_F32 : matrix_type(sp, d->name);
    d->bytes = ne0 / dn_type_block_elements(d->type) * dn_type_block_bytes(d->type) * ne1;
}

static void ffn_tensors(tdesc *t, size_t *n, const dd_synth *sp, int l)
{
    add(t, n, sp, "ffn_norm.weight", l, sp->n_embd, 1, 1);
    add(t, n, sp, "ffn_gate.weight", l, sp->n_embd, sp->n_ff, 0);
    add(t, n, sp, "ffn_up.weight", l, sp->n_embd, sp->n_ff, 0);
    add(t, n, sp, "ffn_down.weight", l, sp->n_ff, sp->n_embd, 0);
}

/* A Gated-DeltaNet layer: key heads = the KV heads, value heads = the
   query heads, each of the attention's head size; 4 conv taps. */
static void gdn_tensors(tdesc *t, size_t *n, const dd_synth *sp, int l)
{
    size_t E = sp->n_embd, d = E / sp->n_head, qk = sp->n_head_kv * d, v = sp->n_head * d;
    add(t, n, sp, "ssm_q.weight", l, E, qk, 0);
    add(t, n, sp, "ssm_k.weight", l, E, qk, 0);
    add(t, n, sp, "ssm_v.weight", l, E, v, 0);
    add(t, n, sp, "ssm_z.weight", l, E, v, 0);
    add(t, n, sp, "ssm_beta.weight", l, E, sp->n_head, 0);
    add(t, n, sp, "ssm_alpha.weight", l, E, sp->n_head, 0);
    add(t, n, sp, "ssm_conv1d.weight", l, HYBRID_TAPS, 2 * qk + v, 3);
    add(t, n, sp, "ssm_a", l, sp->n_head, 1, 2);
    add(t, n, sp, "ssm_dt.bias", l, sp->n_head, 1, 2);
    add(t, n, sp, "ssm_norm.weight", l, d, 1, 1);
    add(t, n, sp, "ssm_out.weight", l, v, E, 0);
}

static size_t tensor_list(const dd_synth *sp, tdesc *t)
{
    size_t n = 0, E = sp->n_embd, hd = E / sp->n_head, kv = sp->n_head_kv * hd;
    int qwen2 = strcmp(sp->arch, "qwen2") == 0, qwen3 = strcmp(sp->arch, "qwen3") == 0;
    int hybrid = strcmp(sp->arch, "hybrid") == 0;
    add(t, &n, sp, "token_embd.weight", -1, E, sp->n_vocab, 0);
    add(t, &n, sp, "output_norm.weight", -1, E, 1, 1);
    if (!sp->tied) add(t, &n, sp, "output.weight", -1, E, sp->n_vocab, 0);
    for (int l = 0; l < (int)sp->n_layer; l++) {
        add(t, &n, sp, "attn_norm.weight", l, E, 1, 1);
        if (hybrid && (l + 1) % HYBRID_EVERY != 0) {
            gdn_tensors(t, &n, sp, l);
            ffn_tensors(t, &n, sp, l);
            continue;
        }
        add(t, &n, sp, "attn_q.weight", l, E, E, 0);
        add(t, &n, sp, "attn_k.weight", l, E, kv, 0);
        add(t, &n, sp, "attn_v.weight", l, E, kv, 0);
        if (qwen2) {
            add(t, &n, sp, "attn_q.bias", l, E, 1, 2);
            add(t, &n, sp, "attn_k.bias", l, kv, 1, 2);
            add(t, &n, sp, "attn_v.bias", l, kv, 1, 2);
        }
        if (qwen3) {
            add(t, &n, sp, "attn_q_norm.weight", l, hd, 1, 1);
            add(t, &n, sp, "attn_k_norm.weight", l, hd, 1, 1);
        }
        add(t, &n, sp, "attn_output.weight", l, E, E, 0);
        ffn_tensors(t, &n, sp, l);
    }
    return n;
}

/* ---- the data ----------------------------------------------------------- */

static void put_f16(out *o, float v) { put_le(o, dn_f32_to_f16(v), 2); }
static void put_bf16(out *o, float v) { put_le(o, dn_f32_to_bf16(v), 2); }

static void put_random(out *o, uint64_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) put_le(o, next(s) & 0xFF, 1);
}

/* One block of `type` with random codes, its scales set so that the
   weights are of magnitude about a. */
static void put_block(out *o, uint64_t *s, dn_type type, double a)
{
    switch (type) {
    case DN_TYPE_Q8_0:
        put_f16(o, (float)(a / 127.0));
        for (int i = 0; i < 32; i++) put_le(o, (uint8_t)(int8_t)((int)(next(s) % 255) - 127), 1);
        break;
    case DN_TYPE_Q4_K: /* d * sc * q - dmin * m, q in 0..15, sc and m in 0..63 */
        put_f16(o, (float)(a / 500.0));
        put_f16(o, (float)(a * 7.5 / 500.0));
        put_random(o, s, 12 + 128);
        break;
    case DN_TYPE_Q5_K: /* q in 0..31 */
        put_f16(o, (float)(a / 1000.0));
        put_f16(o, (float)(a * 15.5 / 1000.0));
        put_random(o, s, 12 + 32 + 128);
        break;
    default: /* Q6_K: d * sc * (q - 32), sc in -128..127 */
        put_random(o, s, 128 + 64 + 16);
        put_f16(o, (float)(a / 2000.0));
        break;
    }
}

static void put_tensor(out *o, uint64_t *s, const tdesc *t)
{
    size_t n = (size_t)(t->ne0 * t->ne1);
    double a = sqrt(3.0 / (double)t->ne0);
    if (t->kind) {
        for (size_t i = 0; i < n; i++)
            put_f32(o, (t->kind == 1 ? 1.0f : 0.0f) + uniform(s, t->kind == 3 ? 0.5 : 0.1));
    } else if (t->type == DN_TYPE_F16) {
        for (size_t i = 0; i < n; i++) put_f16(o, uniform(s, a));
    } else if (t->type == DN_TYPE_BF16) {
        for (size_t i = 0; i < n; i++) put_bf16(o, uniform(s, a));
    } else {
        size_t blocks = n / dn_type_block_elements(t->type);
        for (size_t i = 0; i < blocks; i++) put_block(o, s, t->type, a);
    }
}

/* SPM's byte tokens <0x00>..<0xFF> at ids 3..258 when the vocabulary has
   room: llama.cpp's tokenizer falls back to them for any text, and aborts
   on a vocabulary without them. */
static int is_byte_token(size_t i, size_t n_vocab) { return n_vocab >= 259 && i >= 3 && i < 259; }

static void put_vocab(out *o, size_t n_vocab)
{
    char tok[32];
    kv_str(o, "tokenizer.ggml.model", "llama");
    o->kvs += 3; /* the three arrays */
    put_str(o, "tokenizer.ggml.tokens");
    put_le(o, 9, 4);
    put_le(o, 8, 4);
    put_le(o, n_vocab, 8);
    for (size_t i = 0; i < n_vocab; i++) {
        if (i < 3)
            snprintf(tok, sizeof tok, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (is_byte_token(i, n_vocab))
            snprintf(tok, sizeof tok, "<0x%02zX>", i - 3);
        else
            snprintf(tok, sizeof tok, "<t%zu>", i);
        put_str(o, tok);
    }
    put_str(o, "tokenizer.ggml.scores");
    put_le(o, 9, 4);
    put_le(o, 6, 4);
    put_le(o, n_vocab, 8);
    for (size_t i = 0; i < n_vocab; i++) put_f32(o, 0.0f);
    put_str(o, "tokenizer.ggml.token_type");
    put_le(o, 9, 4);
    put_le(o, 5, 4);
    put_le(o, n_vocab, 8);
    for (size_t i = 0; i < n_vocab; i++) /* unknown 2, control 3, byte 6, normal 1 */
        put_le(o, i < 3 ? (i == 0 ? 2 : 3) : is_byte_token(i, n_vocab) ? 6 : 1, 4);
    kv_u32(o, NULL, "tokenizer.ggml.bos_token_id", 1);
    kv_u32(o, NULL, "tokenizer.ggml.eos_token_id", 2);
}

static void put_metadata(out *o, const dd_synth *sp)
{
    static const uint32_t ftype[DD_W_COUNT] = {1, 7, 14, 16, 18, 15, 32};
    /* a Mistral model is written as llama, as llama.cpp's converter writes
       Mistral 7B (the same layer; llama.cpp has no "mistral" architecture) */
    const char *A = strcmp(sp->arch, "mistral") == 0 ? "llama" : sp->arch;
    size_t hd = sp->n_embd / sp->n_head;
    kv_str(o, "general.architecture", A);
    kv_str(o, "general.name", "decodenum-synthetic");
    kv_u32(o, NULL, "general.alignment", ALIGN);
    kv_u32(o, NULL, "general.file_type", ftype[sp->wtype]);
    kv_u32(o, A, "context_length", 4096);
    kv_u32(o, A, "embedding_length", (uint32_t)sp->n_embd);
    kv_u32(o, A, "block_count", (uint32_t)sp->n_layer);
    kv_u32(o, A, "feed_forward_length", (uint32_t)sp->n_ff);
    kv_u32(o, A, "attention.head_count", (uint32_t)sp->n_head);
    kv_u32(o, A, "attention.head_count_kv", (uint32_t)sp->n_head_kv);
    kv_u32(o, A, "attention.key_length", (uint32_t)hd);
    kv_u32(o, A, "attention.value_length", (uint32_t)hd);
    kv_u32(o, A, "rope.dimension_count", (uint32_t)hd);
    kv_f32(o, A, "attention.layer_norm_rms_epsilon", 1e-6f);
    kv_f32(o, A, "rope.freq_base", 10000.0f);
    if (strcmp(A, "hybrid") == 0) {
        kv_u32(o, A, "ssm.key_heads", (uint32_t)sp->n_head_kv);
        kv_u32(o, A, "ssm.value_heads", (uint32_t)sp->n_head);
        kv_u32(o, A, "ssm.head_dim", (uint32_t)hd);
        kv_u32(o, A, "ssm.conv_kernel", HYBRID_TAPS);
        kv_u32(o, A, "full_attention_interval", HYBRID_EVERY);
    }
    put_vocab(o, sp->n_vocab);
}

static int check(const dd_synth *sp, char *err, size_t err_bytes)
{
    size_t blk = sp->wtype == DD_W_F16 || sp->wtype == DD_W_BF16 ? 1
                 : sp->wtype == DD_W_Q8_0                        ? 32
                                                                 : 256;
    const char *why = NULL;
    if (!sp->n_layer || !sp->n_head || !sp->n_head_kv || !sp->n_vocab || sp->n_vocab > 1u << 20 ||
        sp->n_layer > 256)
        why = "every size must be positive (vocabulary up to 2^20, up to 256 layers)";
    else if (sp->n_embd % sp->n_head || sp->n_head % sp->n_head_kv || (sp->n_embd / sp->n_head) % 2)
        why = "heads must divide the width (an even head size), kv heads the heads";
    else if (sp->n_embd % blk || sp->n_ff % blk || sp->n_embd % 32 || sp->n_ff % 32 ||
             sp->n_embd > 1u << 16 || sp->n_ff > 1u << 17)
        why = "width and ffn must be multiples of the weight block (256 for k-quants) and of 32";
    else if (strcmp(sp->arch, "llama") && strcmp(sp->arch, "mistral") &&
             strcmp(sp->arch, "qwen2") && strcmp(sp->arch, "qwen3") && strcmp(sp->arch, "hybrid"))
        why = "the architecture must be llama, mistral, qwen2, qwen3 or hybrid";
    if (why) snprintf(err, err_bytes, "synthetic model: %s", why);
    return why ? -1 : 0;
}

int dd_synth_gguf(const dd_synth *sp, uint8_t **image, size_t *size, char *err, size_t err_bytes)
{
    if (check(sp, err, err_bytes)) return -1;
    tdesc *t = malloc((3 + sp->n_layer * 20) * sizeof *t);
    if (!t) return snprintf(err, err_bytes, "out of memory"), -1;
    size_t nt = tensor_list(sp, t);
    uint64_t off = 0;
    for (size_t i = 0; i < nt; i++) {
        t[i].offset = off;
        off += (t[i].bytes + ALIGN - 1) / ALIGN * ALIGN;
    }
    out o = {0}, meta = {0};
    put_metadata(&meta, sp);
    put_le(&o, 0x46554747u, 4);
    put_le(&o, 3, 4);
    put_le(&o, nt, 8);
    put_le(&o, meta.kvs, 8);
    put(&o, meta.p, meta.n);
    o.oom |= meta.oom;
    free(meta.p);
    for (size_t i = 0; i < nt; i++) {
        put_str(&o, t[i].name);
        put_le(&o, t[i].ne1 > 1 ? 2 : 1, 4);
        put_le(&o, t[i].ne0, 8);
        if (t[i].ne1 > 1) put_le(&o, t[i].ne1, 8);
        put_le(&o, (uint64_t)t[i].type, 4);
        put_le(&o, t[i].offset, 8);
    }
    uint64_t seed = sp->seed, pad[ALIGN / 8] = {0};
    for (size_t i = 0; i < nt; i++) {
        put(&o, pad, (ALIGN - o.n % ALIGN) % ALIGN);
        put_tensor(&o, &seed, &t[i]);
    }
    free(t);
    if (o.oom) {
        free(o.p);
        return snprintf(err, err_bytes, "out of memory"), -1;
    }
    *image = o.p;
    *size = o.n;
    return 0;
}
