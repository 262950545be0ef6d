/* SPDX-License-Identifier: MIT */
/*
 * model.c: binding a GGUF file's metadata and tensors to a dd_model. Every
 * tensor is checked for its shape and type here, once, so the decode loop
 * runs on trusted sizes.
 */
#define _DEFAULT_SOURCE /* madvise */
#include "model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct binder {
    const gf_file *f;
    dd_model *m;
    char *err;
    size_t err_bytes;
    const char *arch;
} binder;

static int fail(binder *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err, b->err_bytes, fmt, ap);
    va_end(ap);
    return -1;
}

static int hparam(binder *b, const char *suffix, uint64_t *out, int required)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", b->arch, suffix);
    if (gf_get_uint(b->f, key, out) == 0) return 0;
    if (gf_find(b->f, key)) return fail(b, "metadata %s is not a non-negative integer", key);
    return required ? fail(b, "metadata %s is missing", key) : 1;
}

static int hparam_f(binder *b, const char *suffix, float *out, float dflt)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", b->arch, suffix);
    *out = dflt;
    if (!gf_find(b->f, key)) return 0;
    if (gf_get_float(b->f, key, out) != 0) return fail(b, "metadata %s is not a float", key);
    return 0;
}

static const gf_tensor *tensor(binder *b, int layer, const char *name)
{
    char full[96];
    if (layer < 0)
        snprintf(full, sizeof full, "%s", name);
    else
        snprintf(full, sizeof full, "blk.%d.%s", layer, name);
    return gf_tensor_find(b->f, full);
}

static int shape_is(const gf_tensor *t, uint64_t ne0, uint64_t ne1)
{
    return t->ne[0] == ne0 && t->ne[1] == ne1 && t->ne[2] == 1 && t->ne[3] == 1;
}

/* `bytes` of memory the model owns (freed with it); NULL after fail(). */
static void *own(binder *b, size_t bytes)
{
    void *v = malloc(bytes ? bytes : 1);
    void **grown = realloc(b->m->owned, (b->m->n_owned + 1) * sizeof *grown);
    if (grown) b->m->owned = grown;
    if (!v || !grown) {
        free(v);
        fail(b, "out of memory");
        return NULL;
    }
    b->m->owned[b->m->n_owned++] = v;
    return v;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* The file's little-endian 16-bit values (binary16, bfloat16) as host
   uint16_t: the data in place on a little-endian host, a converted copy on
   a big-endian one. */
static const uint8_t *host_16(binder *b, const gf_tensor *t, size_t n)
{
    if (host_is_little_endian()) return t->data;
    uint16_t *h = own(b, n * sizeof *h);
    if (!h) return NULL;
    for (size_t i = 0; i < n; i++) h[i] = (uint16_t)gf_load_le(t->data + 2 * i, 2);
    return (const uint8_t *)h;
}

/* A matrix of rows x cols in a type the products take: F16 or BF16 (2-byte
   aligned, as dn_f16_mat_vec's and dn_bf16_mat_vec's uint16_t weights must
   be; in host byte order) or a block format dn_mat_vec reads with whole 32-element
   activation blocks (little-endian on every host). */
static int matrix(binder *b, int layer, const char *name, size_t rows, size_t cols, dd_matrix *out)
{
    const gf_tensor *t = tensor(b, layer, name);
    if (!t) return fail(b, "tensor %s (layer %d) is missing", name, layer);
    if (!shape_is(t, cols, rows))
        return fail(b, "tensor %.*s is %llux%llu, expected %zux%zu", (int)t->name.n, t->name.p,
                    (unsigned long long)t->ne[0], (unsigned long long)t->ne[1], cols, rows);
    dn_type type = (dn_type)t->type;
    const int half = type == DN_TYPE_F16 || type == DN_TYPE_BF16;
    if (half) {
        if ((uintptr_t)t->data % 2 != 0)
            return fail(b, "tensor %.*s: 16-bit data at an odd address", (int)t->name.n, t->name.p);
    } else if (!dn_reads(type) || cols % DN_ACT_BLOCK != 0) {
        return fail(b, "tensor %.*s: type %u is not one the engine multiplies", (int)t->name.n,
                    t->name.p, (unsigned)type);
    }
    const uint8_t *data = half ? host_16(b, t, rows * cols) : t->data;
    if (!data) return -1;
    *out = (dd_matrix){type, data, rows, cols, NULL};
    return 0;
}

/* An f32 (or f16) array of rows x n elements (a vector: rows = 1),
   copied to aligned floats. NULL with no error when absent and optional. */
static int array(binder *b, int layer, const char *name, size_t n, size_t rows, int required,
                 const float **out)
{
    const gf_tensor *t = tensor(b, layer, name);
    *out = NULL;
    if (!t) return required ? fail(b, "tensor %s (layer %d) is missing", name, layer) : 0;
    if (t->ne[0] != n || t->ne[1] != rows || t->ne[2] != 1 || t->ne[3] != 1)
        return fail(b, "tensor %.*s has %llu elements, expected %zu", (int)t->name.n, t->name.p,
                    (unsigned long long)t->ne[0], n);
    if (t->type != DN_TYPE_F32 && t->type != DN_TYPE_F16)
        return fail(b, "tensor %.*s: vectors must be F32 or F16", (int)t->name.n, t->name.p);
    n *= rows;
    float *v = own(b, n * sizeof *v);
    if (!v) return -1;
    if (t->type == DN_TYPE_F32)
        for (size_t i = 0; i < n; i++) { /* little-endian on every host */
            uint32_t u = (uint32_t)gf_load_le(t->data + 4 * i, 4);
            memcpy(&v[i], &u, 4);
        }
    else if (dn_f16_dequantize_row(t->data, v, n) != DN_OK)
        return fail(b, "tensor %.*s unreadable", (int)t->name.n, t->name.p);
    *out = v;
    return 0;
}

static int vector(binder *b, int layer, const char *name, size_t n, int required, const float **out)
{
    return array(b, layer, name, n, 1, required, out);
}

/* A Gated-DeltaNet layer's own tensors (the hybrid architecture). */
static int gdn_layer(binder *b, int i)
{
    dd_model *m = b->m;
    dd_layer *L = &m->layers[i];
    size_t E = m->n_embd, qk = m->gdn_kh * m->gdn_d, v = m->gdn_vh * m->gdn_d, H = m->gdn_vh;
    L->gdn = 1;
    int bad =
        array(b, i, "ssm_conv1d.weight", m->gdn_taps, 2 * qk + v, 1, &L->conv) ||
        vector(b, i, "ssm_a", H, 1, &L->a_log) || vector(b, i, "ssm_dt.bias", H, 1, &L->dt_bias) ||
        vector(b, i, "ssm_norm.weight", m->gdn_d, 1, &L->ssm_norm) ||
        matrix(b, i, "ssm_q.weight", qk, E, &L->sq) ||
        matrix(b, i, "ssm_k.weight", qk, E, &L->sk) || matrix(b, i, "ssm_v.weight", v, E, &L->sv) ||
        matrix(b, i, "ssm_z.weight", v, E, &L->sz) ||
        matrix(b, i, "ssm_beta.weight", H, E, &L->sb) ||
        matrix(b, i, "ssm_alpha.weight", H, E, &L->sa) ||
        matrix(b, i, "ssm_out.weight", E, v, &L->sout);
    return bad ? -1 : 0;
}

static int layer(binder *b, int i)
{
    dd_model *m = b->m;
    dd_layer *L = &m->layers[i];
    size_t q = m->n_head * m->head_dim, kv = m->n_head_kv * m->head_dim;
    int opt = m->arch == DD_QWEN2 ? 1 : 0, qk = m->arch == DD_QWEN3 ? 1 : 0;
    if (vector(b, i, "attn_norm.weight", m->n_embd, 1, &L->attn_norm) ||
        vector(b, i, "ffn_norm.weight", m->n_embd, 1, &L->ffn_norm) ||
        matrix(b, i, "ffn_gate.weight", m->n_ff, m->n_embd, &L->gate) ||
        matrix(b, i, "ffn_up.weight", m->n_ff, m->n_embd, &L->up) ||
        matrix(b, i, "ffn_down.weight", m->n_embd, m->n_ff, &L->down))
        return -1;
    if (m->arch == DD_HYBRID && (size_t)(i + 1) % m->attn_interval != 0) return gdn_layer(b, i);
    if (vector(b, i, "attn_q_norm.weight", m->head_dim, qk, &L->q_norm) ||
        vector(b, i, "attn_k_norm.weight", m->head_dim, qk, &L->k_norm) ||
        vector(b, i, "attn_q.bias", q, opt, &L->bq) ||
        vector(b, i, "attn_k.bias", kv, opt, &L->bk) ||
        vector(b, i, "attn_v.bias", kv, opt, &L->bv))
        return -1;
    if (matrix(b, i, "attn_q.weight", q, m->n_embd, &L->wq) ||
        matrix(b, i, "attn_k.weight", kv, m->n_embd, &L->wk) ||
        matrix(b, i, "attn_v.weight", kv, m->n_embd, &L->wv) ||
        matrix(b, i, "attn_output.weight", m->n_embd, q, &L->wo))
        return -1;
    return 0;
}

static int architecture(binder *b)
{
    static const char *const names[] = {"llama", "mistral", "qwen2", "qwen3", "hybrid"};
    gf_str s;
    if (gf_get_str(b->f, "general.architecture", &s) != 0)
        return fail(b, "metadata general.architecture is missing");
    for (int i = 0; i < 5; i++)
        if (gf_str_eq(s, names[i])) {
            b->m->arch = (dd_arch)i;
            b->arch = names[i];
            /* llama.cpp pairs (2i, 2i+1) for llama and mistral (its converter
               permutes Q and K to match), (i, i + d/2) for qwen2, qwen3 and
               (as Qwen3-Next) the hybrid */
            b->m->rope = i >= DD_QWEN2 ? DN_ROPE_NEOX : DN_ROPE_INTERLEAVED;
            return 0;
        }
    return fail(
        b, "architecture '%.*s' is not one this engine runs (llama, mistral, qwen2, qwen3, hybrid)",
        (int)(s.n > 64 ? 64 : s.n), s.p);
}

/* The hybrid's Gated-DeltaNet shape (hybrid.ssm.*). */
static int gdn_hparams(binder *b)
{
    dd_model *m = b->m;
    uint64_t kh, vh, d, taps, every;
    if (hparam(b, "ssm.key_heads", &kh, 1) || hparam(b, "ssm.value_heads", &vh, 1) ||
        hparam(b, "ssm.head_dim", &d, 1) || hparam(b, "ssm.conv_kernel", &taps, 1) ||
        hparam(b, "full_attention_interval", &every, 1))
        return -1;
    /* a layer's state (vh * d * d floats) within 1 GiB: Qwen3-Next's is 2 MiB */
    if (!kh || !vh || vh % kh || !d || d > 4096 || vh > 4096 || vh * d * d > (1u << 28) || !taps ||
        taps > 64 || !every)
        return fail(b, "implausible Gated-DeltaNet shape (%llu/%llu heads of %llu, %llu taps)",
                    (unsigned long long)kh, (unsigned long long)vh, (unsigned long long)d,
                    (unsigned long long)taps);
    m->gdn_kh = kh, m->gdn_vh = vh, m->gdn_d = d, m->gdn_taps = taps, m->attn_interval = every;
    return 0;
}

static int hparams(binder *b)
{
    dd_model *m = b->m;
    uint64_t embd, nl, nff, nh, nkv = 0, hd = 0, rot = 0;
    if (architecture(b) || hparam(b, "embedding_length", &embd, 1) ||
        hparam(b, "block_count", &nl, 1) || hparam(b, "feed_forward_length", &nff, 1) ||
        hparam(b, "attention.head_count", &nh, 1) ||
        hparam(b, "attention.head_count_kv", &nkv, 0) < 0 ||
        hparam(b, "attention.key_length", &hd, 0) < 0 ||
        hparam(b, "rope.dimension_count", &rot, 0) < 0 ||
        hparam_f(b, "attention.layer_norm_rms_epsilon", &m->eps, 1e-5f) ||
        hparam_f(b, "rope.freq_base", &m->theta, 10000.0f))
        return -1;
    if (nkv == 0) nkv = nh;
    if (embd == 0 || nh == 0 || nl == 0 || nff == 0 || embd > 1u << 20 || nff > 1u << 20 ||
        nl > 4096 || nh > 4096 || nkv > nh || nh % nkv != 0)
        return fail(
            b,
            "implausible hyperparameters (embedding %llu, layers %llu, ffn %llu, heads %llu/%llu)",
            (unsigned long long)embd, (unsigned long long)nl, (unsigned long long)nff,
            (unsigned long long)nh, (unsigned long long)nkv);
    if (hd == 0) hd = embd / nh;
    if (rot == 0) rot = hd;
    if (hd == 0 || hd > DN_ATTN_MAX_HEAD_DIM || rot > hd || rot % 2 != 0)
        return fail(b, "head size %llu (rotary %llu) is not usable", (unsigned long long)hd,
                    (unsigned long long)rot);
    if (!(m->theta > 0.0f && m->theta <= 3.4e38f) || !(m->eps >= 0.0f && m->eps <= 3.4e38f))
        return fail(b, "rope.freq_base %g or layer_norm_rms_epsilon %g is not a usable value",
                    (double)m->theta, (double)m->eps);
    m->n_embd = embd, m->n_layer = nl, m->n_head = nh, m->n_head_kv = nkv, m->head_dim = hd;
    m->n_ff = nff, m->n_rot = rot;
    return m->arch == DD_HYBRID ? gdn_hparams(b) : 0;
}

static int vocabulary(binder *b)
{
    dd_model *m = b->m;
    const gf_kv *kv = gf_find(b->f, "tokenizer.ggml.tokens");
    if (!kv || kv->type != GF_ARRAY || kv->elem_type != GF_STRING || kv->count != m->n_vocab)
        return 0;
    m->vocab = malloc(m->n_vocab * sizeof *m->vocab);
    if (!m->vocab) return fail(b, "out of memory");
    if (gf_array_strings(b->f, kv, m->vocab) != 0)
        return fail(b, "tokenizer.ggml.tokens unreadable");
    return 0;
}

int dd_model_load(const gf_file *f, dd_model *m, char *err, size_t err_bytes)
{
    memset(m, 0, sizeof *m);
    binder b = {f, m, err, err_bytes, NULL};
    if (hparams(&b) != 0) return -1;
    const gf_tensor *te = tensor(&b, -1, "token_embd.weight");
    if (!te || te->n_dims != 2 || te->ne[1] == 0 || te->ne[1] > UINT32_MAX)
        return fail(&b, "tensor token_embd.weight is missing or not a matrix");
    m->n_vocab = (size_t)te->ne[1];
    int r = matrix(&b, -1, "token_embd.weight", m->n_vocab, m->n_embd, &m->tok_embd);
    if (r == 0 && tensor(&b, -1, "output.weight"))
        r = matrix(&b, -1, "output.weight", m->n_vocab, m->n_embd, &m->output);
    else if (r == 0)
        m->output = m->tok_embd; /* tied */
    if (r == 0) r = vector(&b, -1, "output_norm.weight", m->n_embd, 1, &m->output_norm);
    if (r == 0) {
        m->layers = calloc(m->n_layer, sizeof *m->layers);
        if (!m->layers) r = fail(&b, "out of memory");
    }
    for (size_t i = 0; r == 0 && i < m->n_layer; i++) r = layer(&b, (int)i);
    if (r == 0) r = vocabulary(&b);
    if (r != 0) dd_model_free(m);
    return r;
}

/* Memory for a repacked copy, freed with free(): 2 MiB aligned and, where
   the system gives transparent huge pages on request (Linux's
   MADV_HUGEPAGE; Debian's default is `madvise`), backed by huge pages, so
   the products' streams over a copy do not walk a 4 KiB page table (the
   file's own pages, read in place, are the page cache's). NULL when out of
   memory. */
static void *weights_alloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, (size_t)1 << 21, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: without it, 4 KiB pages */
#endif
    return p;
}

/* weights_alloc's bytes, owned by the model (freed with it); NULL when out
   of memory. */
static uint8_t *owned_weights(dd_model *m, size_t bytes)
{
    void **grown = realloc(m->owned, (m->n_owned + 1) * sizeof *grown);
    if (!grown) return NULL;
    m->owned = grown;
    uint8_t *p = weights_alloc(bytes);
    if (p) m->owned[m->n_owned++] = p;
    return p;
}

/* One matrix's repacked copy, owned by the model; 0, or -1 (out of memory). */
static int repack_one(dd_model *m, dd_matrix *w)
{
    switch (w->data && !w->packed ? w->type : DN_TYPE_F32) {
    case DN_TYPE_Q4_K:
    case DN_TYPE_Q5_K:
    case DN_TYPE_Q6_K:
    case DN_TYPE_Q8_0:
    case DN_TYPE_IQ4_XS: break;
    default: return 0;
    }
    size_t bytes = 0;
    if (dn_repack_size(w->type, w->rows, w->cols, &bytes) != DN_OK) return 0; /* stays in place */
    uint8_t *p = owned_weights(m, bytes);
    if (!p) return -1;
    if (dn_repack(w->type, w->data, w->rows, w->cols, p, bytes) != DN_OK) return 0;
    w->packed = p;
    return 0;
}

/* One matrix's bytes copied into memory the model owns (weights_alloc's),
   unless it is repacked; 0, or -1 (out of memory). */
static int copy_one(dd_model *m, dd_matrix *w)
{
    if (!w->data || w->packed || w->data == m->tok_embd.data) return 0; /* tied: read by rows */
    size_t be = dn_type_block_elements(w->type);
    if (be == 0) return 0;                                                  /* stays in place */
    size_t bytes = w->rows * (w->cols / be * dn_type_block_bytes(w->type)); /* bound at load */
    uint8_t *p = owned_weights(m, bytes);
    if (!p) return -1;
    memcpy(p, w->data, bytes);
    w->data = p;
    return 0;
}

/* each(m, w) over every matrix the products read (not the embedding, read
   by rows); 0, or the first failure's -1 with `what` in err. */
static int each_matrix(dd_model *m, int (*each)(dd_model *, dd_matrix *), const char *what,
                       char *err, size_t err_bytes)
{
    int r = each(m, &m->output);
    for (size_t i = 0; r == 0 && i < m->n_layer; i++) {
        dd_layer *l = &m->layers[i];
        dd_matrix *all[] = {&l->wq, &l->wk, &l->wv, &l->wo, &l->gate, &l->up, &l->down,
                            &l->sq, &l->sk, &l->sv, &l->sz, &l->sb,   &l->sa, &l->sout};
        for (size_t k = 0; r == 0 && k < sizeof all / sizeof all[0]; k++) r = each(m, all[k]);
    }
    if (r) snprintf(err, err_bytes, "out of memory (%s)", what);
    return r;
}

int dd_model_repack(dd_model *m, char *err, size_t err_bytes)
{
    return each_matrix(m, repack_one, "repacked weights", err, err_bytes);
}

int dd_model_copy(dd_model *m, char *err, size_t err_bytes)
{
    return each_matrix(m, copy_one, "copied weights", err, err_bytes);
}

void dd_model_free(dd_model *m)
{
    for (size_t i = 0; i < m->n_owned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->layers);
    free(m->vocab);
    memset(m, 0, sizeof *m);
}
