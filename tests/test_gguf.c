/* SPDX-License-Identifier: MIT */
/*
 * The decode engine's GGUF reader (examples/decode/gguf.c) and model binder
 * on bad files: every truncation of a valid file, each malformed field of
 * the format refused with its message, missing metadata and tensors, and a
 * fuzz-style sweep of mutated files that must end in a clean refusal or a
 * clean run (ASan and UBSan watch it in the sanitize build).
 */
#include <stdio.h>

#include "decodenum.h"
#include "model.h"
#include "synth.h"
#include "testutil.h"

/* ---- a small valid model ---------------------------------------------------- */

static uint8_t *tiny(size_t *size, dd_wtype w)
{
    dd_synth sp = {"llama", w, 3, 256, 1, 4, 2, 256, 16, 0};
    uint8_t *img = NULL;
    char err[256];
    assert_int_equal(dd_synth_gguf(&sp, &img, size, err, sizeof err), 0);
    return img;
}

/* A synthetic model made, parsed and bound: the image (the caller frees
   it after gf_close), the file and the model. */
static uint8_t *load_synth(const dd_synth *sp, gf_file *f, dd_model *m)
{
    uint8_t *img = NULL;
    size_t size;
    char err[256];
    assert_int_equal(dd_synth_gguf(sp, &img, &size, err, sizeof err), 0);
    assert_int_equal(gf_parse(img, size, f), 0);
    assert_int_equal(dd_model_load(f, m, err, sizeof err), 0);
    return img;
}

static size_t find(const uint8_t *img, size_t size, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(img + i, s, n) == 0) return i;
    fail_msg("'%s' not in the image", s);
    return 0;
}

static void valid_file_reads_and_runs(void **state)
{
    (void)state;
    size_t size;
    uint8_t *img = tiny(&size, DD_W_Q8_0);
    gf_file f;
    assert_int_equal(gf_parse(img, size, &f), 0);
    assert_int_equal(f.version, 3);
    assert_int_equal(f.alignment, 32);
    assert_int_equal(f.n_tensors, 3 + 9); /* embedding, output norm, output; 9 a layer */
    assert_int_equal(f.data_offset % 32, 0);
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        assert_true(f.tensors[i].data >= img + f.data_offset);
        assert_true(f.tensors[i].data + f.tensors[i].bytes <= img + size);
        assert_int_equal((f.tensors[i].data - img) % 32, 0);
    }
    const gf_tensor *q = gf_tensor_find(&f, "blk.0.attn_q.weight");
    assert_non_null(q);
    assert_int_equal(q->type, DN_TYPE_Q8_0);
    assert_int_equal(q->bytes, 256 / 32 * 34 * 256);
    dd_model m;
    char err[256];
    assert_int_equal(dd_model_load(&f, &m, err, sizeof err), 0);
    assert_int_equal(m.n_vocab, 16);
    assert_non_null(m.vocab);
    assert_true(gf_str_eq(m.vocab[1], "<s>"));
    uint32_t prompt[2] = {1, 5};
    dd_run run = {prompt, 2, 3, 2, 0, NULL, 0};
    dd_result r;
    assert_int_equal(dd_generate(&m, &run, &r, err, sizeof err), 0);
    assert_int_equal(r.n_tokens, 3);
    for (size_t i = 0; i < 3; i++) assert_true(r.tokens[i] < 16);
    free(r.tokens);
    prompt[1] = 16; /* past the vocabulary */
    assert_int_equal(dd_generate(&m, &run, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "past the vocabulary"));
    dd_model_free(&m);
    gf_close(&f);
    free(img);
}

static void hybrid_file_reads_and_runs(void **state)
{
    (void)state;
    dd_synth sp = {"hybrid", DD_W_Q4_K_M, 9, 256, 4, 8, 2, 256, 16, 1};
    uint8_t *img = NULL;
    size_t size;
    char err[256];
    assert_int_equal(dd_synth_gguf(&sp, &img, &size, err, sizeof err), 0);
    gf_file f;
    dd_model m;
    assert_int_equal(gf_parse(img, size, &f), 0);
    assert_int_equal(dd_model_load(&f, &m, err, sizeof err), 0);
    assert_int_equal(m.arch, DD_HYBRID);
    for (size_t l = 0; l < 4; l++)
        assert_int_equal(m.layers[l].gdn, l != 3); /* every 4th attention */
    assert_int_equal(m.gdn_kh, 2);
    assert_int_equal(m.gdn_vh, 8);
    assert_int_equal(m.gdn_d, 32);
    uint32_t prompt[1] = {1};
    dd_run run = {prompt, 1, 4, 1, 0, NULL, 0};
    dd_result r;
    assert_int_equal(dd_generate(&m, &run, &r, err, sizeof err), 0);
    assert_int_equal(r.n_tokens, 4);
    free(r.tokens);
    dd_model_free(&m);
    gf_close(&f);
    /* a Gated-DeltaNet tensor missing */
    memcpy(img + find(img, size, "blk.1.ssm_conv1d"), "blk.1.ssm_conv1X", 16);
    assert_int_equal(gf_parse(img, size, &f), 0);
    assert_int_equal(dd_model_load(&f, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "ssm_conv1d.weight (layer 1) is missing"));
    gf_close(&f);
    free(img);
}

/* Feeding a generated token back as part of the prompt gives the same
   logits bit for bit: a step never depends on whether the step before it
   computed logits (each vector's quantized form is made from that vector). */
static void continuing_equals_prompting(void **state)
{
    (void)state;
    const char *arch[] = {"llama", "hybrid"};
    for (int a = 0; a < 2; a++) {
        dd_synth sp = {arch[a], DD_W_Q8_0, 11, 256, 4, 8, 2, 256, 64, 0};
        gf_file f;
        dd_model m;
        uint8_t *img = load_synth(&sp, &f, &m);
        char err[256];
        float *la = malloc(4 * 64 * sizeof *la), *lb = malloc(3 * 64 * sizeof *lb);
        uint32_t pa[2] = {1, 9}, pb[3] = {1, 9, 0};
        dd_run ra = {pa, 2, 4, 1, 0, la, 0}, rb = {pb, 3, 3, 2, 0, lb, 0};
        dd_result a4, b3;
        assert_int_equal(dd_generate(&m, &ra, &a4, err, sizeof err), 0);
        pb[2] = a4.tokens[0];
        assert_int_equal(dd_generate(&m, &rb, &b3, err, sizeof err), 0);
        for (size_t i = 0; i < 3 * 64; i++) assert_int_equal(tbits(la[64 + i]), tbits(lb[i]));
        for (size_t i = 0; i < 3; i++) assert_int_equal(a4.tokens[i + 1], b3.tokens[i]);
        free(a4.tokens), free(b3.tokens), free(la), free(lb);
        dd_model_free(&m);
        gf_close(&f);
        free(img);
    }
}

/* One synthetic model's logits over a 13-token prompt and 3 generated
   tokens, the prompt taken `batch` positions a pass. */
static void logits_of(const dd_model *m, size_t batch, unsigned threads, float *logits,
                      uint32_t tokens[3])
{
    uint32_t prompt[13];
    for (size_t i = 0; i < 13; i++) prompt[i] = (uint32_t)(7 * i + 3) % 64;
    dd_run run = {prompt, 13, 3, threads, 0, logits, batch};
    dd_result r;
    char err[256];
    assert_int_equal(dd_generate(m, &run, &r, err, sizeof err), 0);
    assert_int_equal(r.batch, batch ? batch : 13);
    memcpy(tokens, r.tokens, 3 * sizeof *tokens);
    free(r.tokens);
}

/* The prompt's batches (dd_run.batch) change no bit of any logit: every
   weight type, biases (qwen2), per-head norms (qwen3), the matrices in
   place and repacked, one and two threads; a batch past DD_BATCH_MAX is
   refused. */
static void prompt_batches_give_the_same_logits(void **state)
{
    (void)state;
    const char *arch[] = {"llama", "qwen2", "qwen3", "mistral"};
    const dd_wtype type[] = {DD_W_F16, DD_W_BF16, DD_W_Q8_0, DD_W_Q4_K_M, DD_W_Q5_K, DD_W_Q6_K};
    for (size_t c = 0; c < 2 * sizeof type / sizeof type[0]; c++) {
        dd_synth sp = {arch[c % 4], type[c % 6], 20 + c, 256, 2, 8, 2, 256, 64, c % 3 == 0};
        gf_file f;
        dd_model m;
        uint8_t *img = load_synth(&sp, &f, &m);
        char err[256];
        if (c >= 6) assert_int_equal(dd_model_repack(&m, err, sizeof err), 0);
        float ref[3 * 64], got[3 * 64];
        uint32_t tref[3], tgot[3];
        logits_of(&m, 1, 1, ref, tref);
        const size_t batches[] = {2, 4, 13, 0};
        for (size_t b = 0; b < 4; b++) {
            logits_of(&m, batches[b], 1 + (unsigned)(b % 2), got, tgot);
            for (size_t i = 0; i < 3 * 64; i++) assert_int_equal(tbits(got[i]), tbits(ref[i]));
            for (size_t i = 0; i < 3; i++) assert_int_equal(tgot[i], tref[i]);
        }
        uint32_t p = 1;
        dd_run run = {&p, 1, 2, 1, 0, NULL, DD_BATCH_MAX + 1};
        dd_result r;
        assert_int_equal(dd_generate(&m, &run, &r, err, sizeof err), -1);
        assert_non_null(strstr(err, "batch"));
        dd_model_free(&m);
        gf_close(&f);
        free(img);
    }
}

static void every_truncation_is_refused(void **state)
{
    (void)state;
    size_t size;
    uint8_t *img = tiny(&size, DD_W_F16);
    gf_file whole;
    assert_int_equal(gf_parse(img, size, &whole), 0);
    size_t head = (size_t)whole.data_offset;
    gf_close(&whole);
    /* every length through the metadata and tensor infos, then through the
       data every 251st and the last 300 (each tensor ends a run) */
    for (size_t n = 0; n < size; n = n < head + 64 || n + 300 >= size ? n + 1 : n + 251) {
        gf_file f;
        uint8_t *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees a read past them */
        memcpy(copy, img, n);
        assert_int_equal(gf_parse(copy, n, &f), -1);
        assert_true(f.err[0] != 0);
        free(copy);
    }
    free(img);
}

/* ---- hand-made files, one field wrong at a time ----------------------------- */

typedef struct buf {
    uint8_t b[4096];
    size_t n;
} buf;

static void le(buf *o, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) o->b[o->n++] = (uint8_t)(v >> (8 * i));
}

static void str(buf *o, const char *s)
{
    le(o, strlen(s), 8);
    memcpy(o->b + o->n, s, strlen(s));
    o->n += strlen(s);
}

/* A header, one u32 metadata entry `key` (type `kt`), and one tensor of
   n_dims extents ne of type `type` at `offset`, with `data` bytes of data. */
typedef struct shape {
    const char *key;
    uint32_t kt;
    uint64_t kv_value;
    uint32_t n_dims, type;
    uint64_t ne[5], offset;
    size_t data;
} shape;

static shape ok_shape(void)
{
    return (shape){"general.alignment", 4, 32, 1, 0, {8, 1, 1, 1, 1}, 0, 32};
}

static void build(buf *o, const shape *s)
{
    o->n = 0;
    le(o, 0x46554747u, 4);
    le(o, 3, 4);
    le(o, 1, 8);
    le(o, 1, 8);
    str(o, s->key);
    le(o, s->kt, 4);
    le(o, s->kv_value, s->kt == 4 ? 4 : 8);
    str(o, "t");
    le(o, s->n_dims, 4);
    for (uint32_t d = 0; d < s->n_dims && d < 5; d++) le(o, s->ne[d], 8);
    le(o, s->type, 4);
    le(o, s->offset, 8);
    while (o->n % 32) le(o, 0, 1);
    for (size_t i = 0; i < s->data; i++) le(o, 0, 1);
}

static void refused(const shape *s, const char *why)
{
    buf o;
    gf_file f;
    build(&o, s);
    int r = gf_parse(o.b, o.n, &f);
    if (r != -1 || !strstr(f.err, why))
        fail_msg("expected a refusal naming '%s', got %d '%s'", why, r, f.err);
}

static void malformed_fields_are_refused(void **state)
{
    (void)state;
    shape s = ok_shape();
    buf o;
    gf_file f;
    build(&o, &s);
    assert_int_equal(gf_parse(o.b, o.n, &f), 0);
    assert_int_equal(f.tensors[0].bytes, 32);
    assert_ptr_equal(f.tensors[0].data, o.b + f.data_offset);
    gf_close(&f);
    s = ok_shape(), s.kt = 99, refused(&s, "unknown type");
    s = ok_shape(), s.kt = 8, s.kv_value = 1ull << 40,
    refused(&s, "past the file");                                /* a string's length */
    s = ok_shape(), s.kv_value = 3, refused(&s, "power of two"); /* alignment */
    s = ok_shape(), s.kv_value = 0, refused(&s, "power of two");
    s = ok_shape(), s.kt = 6, refused(&s, "not a u32"); /* alignment as f32 */
    s = ok_shape(), s.n_dims = 0, refused(&s, "dimensions");
    s = ok_shape(), s.n_dims = 5, refused(&s, "dimensions");
    s = ok_shape(), s.type = 99, refused(&s, "unknown type");
    s = ok_shape(), s.type = DN_TYPE_Q8_0, s.ne[0] = 33, refused(&s, "whole number");
    s = ok_shape(), s.n_dims = 3, s.ne[0] = s.ne[1] = s.ne[2] = 1ull << 30,
    refused(&s, "overflows");
    s = ok_shape(), s.ne[0] = 1ull << 63, refused(&s, "negative");
    s = ok_shape(), s.offset = 4, refused(&s, "alignment");
    s = ok_shape(), s.offset = 1ull << 40, refused(&s, "past the end");
    s = ok_shape(), s.ne[0] = 1u << 20, refused(&s, "past the end");
    s = ok_shape(), s.data = 31, refused(&s, "past the end");
}

static void malformed_headers_are_refused(void **state)
{
    (void)state;
    shape s = ok_shape();
    buf o;
    gf_file f;
    static const struct {
        size_t at;
        unsigned bytes;
        uint64_t v;
        const char *why;
    } bad[] = {{0, 1, 'X', "bad magic"},
               {4, 4, 1, "version"},
               {4, 4, 4, "version"},
               {4, 4, 0x00030000u, "version"},
               {8, 8, 1ull << 62, "tensor count"},
               {16, 8, 1ull << 62, "metadata count"},
               {16, 8, 2, ""},
               {24, 8, 1ull << 63, "past the file"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        build(&o, &s);
        for (unsigned b = 0; b < bad[i].bytes; b++)
            o.b[bad[i].at + b] = (uint8_t)(bad[i].v >> (8 * b));
        int r = gf_parse(o.b, o.n, &f);
        if (r != -1 || !strstr(f.err, bad[i].why)) fail_msg("case %zu: got %d '%s'", i, r, f.err);
    }
    /* an array of arrays, a huge array, a duplicate key */
    o.n = 0;
    le(&o, 0x46554747u, 4), le(&o, 3, 4), le(&o, 0, 8), le(&o, 2, 8);
    str(&o, "a"), le(&o, 9, 4), le(&o, 4, 4), le(&o, 1ull << 61, 8);
    assert_int_equal(gf_parse(o.b, o.n, &f), -1);
    assert_non_null(strstr(f.err, "past the file"));
    o.n = 24;
    str(&o, "a"), le(&o, 9, 4), le(&o, 9, 4), le(&o, 1, 8), le(&o, 4, 4), le(&o, 0, 8);
    assert_int_equal(gf_parse(o.b, o.n, &f), -1);
    assert_non_null(strstr(f.err, "nested"));
    o.n = 24;
    str(&o, "a"), le(&o, 4, 4), le(&o, 1, 4), str(&o, "a"), le(&o, 4, 4), le(&o, 1, 4);
    assert_int_equal(gf_parse(o.b, o.n, &f), -1);
    assert_non_null(strstr(f.err, "duplicate"));
}

/* ---- the model's metadata and tensors ------------------------------------------ */

static void model_refused(const char *was, const char *now, const char *why)
{
    size_t size;
    uint8_t *img = tiny(&size, DD_W_Q8_0);
    memcpy(img + find(img, size, was), now, strlen(now));
    gf_file f;
    dd_model m;
    char err[256] = "";
    assert_int_equal(gf_parse(img, size, &f), 0);
    int r = dd_model_load(&f, &m, err, sizeof err);
    if (r != -1 || !strstr(err, why)) fail_msg("%s -> %s: got %d '%s'", was, now, r, err);
    gf_close(&f);
    free(img);
}

static void missing_metadata_and_tensors_are_refused(void **state)
{
    (void)state;
    size_t size;
    uint8_t *img = tiny(&size, DD_W_Q8_0);
    /* the architecture's value: after its key, the type (4 bytes) and the length (8) */
    size_t at = find(img, size, "general.architecture") + strlen("general.architecture") + 12;
    memcpy(img + at, "gpt99", 5);
    gf_file f;
    dd_model m;
    char err[256] = "";
    assert_int_equal(gf_parse(img, size, &f), 0);
    assert_int_equal(dd_model_load(&f, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "'gpt99' is not one this engine runs"));
    gf_close(&f);
    free(img);
    model_refused("llama.block_count", "llama.block_coun_", "block_count is missing");
    model_refused("llama.embedding_length", "llama.embedding_lengtX",
                  "embedding_length is missing");
    model_refused("general.architecture", "general.architecturX", "architecture is missing");
    model_refused("blk.0.ffn_up.weight", "blk.0.ffn_uX.weight",
                  "ffn_up.weight (layer 0) is missing");
    model_refused("token_embd.weight", "token_embX.weight", "token_embd.weight is missing");
    model_refused("output_norm.weight", "output_norX.weight", "output_norm.weight");
}

/* ---- mutated files ------------------------------------------------------------ */

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One mutated copy: a clean refusal (a message) or a model that loads and
   runs or refuses to run with a message. Returns 0 refused by the reader,
   1 by the binder, 2 by the run, 3 ran. */
static int one_mutant(const uint8_t *img, size_t size, size_t head, uint64_t *seed)
{
    uint8_t *m = malloc(size);
    memcpy(m, img, size);
    int k = 1 + (int)(mix(seed) % 4);
    for (int i = 0; i < k; i++) {
        uint64_t r = mix(seed);
        size_t at = (r & 3) ? (size_t)(r >> 8) % head : (size_t)(r >> 8) % size;
        static const uint8_t vals[] = {0x00, 0xFF, 0x7F, 0x80, 0x01, 0x20};
        m[at] = (r & 4) ? vals[(r >> 3) % 6] : (uint8_t)(r >> 40);
    }
    gf_file f;
    int out = 0;
    char err[256] = "";
    if (gf_parse(m, size, &f) != 0) {
        assert_true(f.err[0] != 0);
    } else {
        dd_model md;
        out = 1;
        if (dd_model_load(&f, &md, err, sizeof err) == 0) {
            uint32_t p = 1;
            dd_run run = {&p, 1, 2, 1, 0, NULL, 0};
            dd_result r;
            out = dd_generate(&md, &run, &r, err, sizeof err) == 0 ? 3 : 2;
            free(r.tokens);
            dd_model_free(&md);
        }
        if (out < 3) assert_true(err[0] != 0);
        gf_close(&f);
    }
    free(m);
    return out;
}

static void mutated_files_are_refused_or_run(void **state)
{
    (void)state;
    size_t size;
    uint8_t *img = tiny(&size, DD_W_Q4_K_M);
    gf_file f;
    assert_int_equal(gf_parse(img, size, &f), 0);
    size_t head = (size_t)f.data_offset;
    gf_close(&f);
    uint64_t seed = 18;
    test_seed_from_env(&seed);
    int count[4] = {0};
    for (int i = 0; i < 2000; i++) count[one_mutant(img, size, head, &seed)]++;
    print_message(
        "2000 mutants: %d refused by the reader, %d by the binder, %d by the run, %d ran\n",
        count[0], count[1], count[2], count[3]);
    assert_true(count[0] > 0 && count[3] > 0); /* both ends were reached */
    free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_file_reads_and_runs),
        cmocka_unit_test(hybrid_file_reads_and_runs),
        cmocka_unit_test(continuing_equals_prompting),
        cmocka_unit_test(prompt_batches_give_the_same_logits),
        cmocka_unit_test(every_truncation_is_refused),
        cmocka_unit_test(malformed_fields_are_refused),
        cmocka_unit_test(malformed_headers_are_refused),
        cmocka_unit_test(missing_metadata_and_tensors_are_refused),
        cmocka_unit_test(mutated_files_are_refused_or_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
