/* SPDX-License-Identifier: MIT */
/*
 * decode.c: `decodenum decode`: options, the model (a GGUF file or the
 * synthetic one), the run, and its report.
 */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "synth.h"

typedef struct opts {
    const char *file, *write, *prompt;
    dd_synth sp;
    dd_run run;
    int quiet, repack, copy;
    size_t repacked; /* matrices repacked at load */
} opts;

static const char usage[] =
    "usage: decodenum decode [MODEL.gguf | --synthetic] [options]\n"
    "  -n N             tokens to generate (16)\n"
    "  -p IDS           prompt token ids, comma-separated (1)\n"
    "  -t N             threads on one pool (1; 0 = one per CPU)\n"
    "  -b N             prompt positions per pass through the layers (64, at most 512;\n"
    "                   1 with Gated-DeltaNet layers); the same digest for every N\n"
    "  --kv f16|int8    the KV cache's rows (f16)\n"
    "  --quiet          print only the digest line\n"
    "  --in-place       read every matrix in place through mmap (default on x86: Q4_K,\n"
    "                   Q5_K, Q6_K, Q8_0, IQ4_XS matrices repacked at load; the same digest)\n"
    "  --copy           copy the other matrices into huge pages at load (the same digest)\n"
    "synthetic model (the default without a file):\n"
    "  --arch A         llama | mistral | qwen2 | qwen3 | hybrid (hybrid; llama with\n"
    "                   --write-gguf): hybrid is Gated-DeltaNet layers, every 4th attention\n"
    "  --type T         f16 | bf16 | q8_0 | q4_k | q5_k | q6_k | q4_k_m (q8_0)\n"
    "  --seed S --layers N (4) --embd N (256) --heads N (8) --kv-heads N (2) --ffn N (512)\n"
    "  --vocab N (512) --tied\n"
    "  --write-gguf OUT write the synthetic model as GGUF and exit\n";

static int number(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || v > (1ull << 40)) return -1;
    *out = (size_t)v;
    return 0;
}

static int sized_option(opts *o, const char *name, const char *val)
{
    static const char *const names[] = {"-n",      "-t",         "--seed", "--layers", "--embd",
                                        "--heads", "--kv-heads", "--ffn",  "--vocab",  "-b"};
    size_t *dst[] = {&o->run.n_predict, NULL,          NULL,
                     &o->sp.n_layer,    &o->sp.n_embd, &o->sp.n_head,
                     &o->sp.n_head_kv,  &o->sp.n_ff,   &o->sp.n_vocab,
                     &o->run.batch};
    for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++) {
        if (strcmp(name, names[i]) != 0) continue;
        size_t v;
        if (number(val, &v) != 0) return -1;
        if (i == 1)
            o->run.threads = v > 1024 ? 1025 : (unsigned)v;
        else if (i == 2)
            o->sp.seed = v;
        else
            *dst[i] = v;
        return 0;
    }
    return 1;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){NULL,
                NULL,
                "1",
                {NULL, DD_W_Q8_0, 1, 256, 4, 8, 2, 512, 512, 0},
                {NULL, 0, 16, 1, 0, NULL, DD_BATCH_DEFAULT},
                0,
                1,
                0,
                0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--synthetic") == 0)
            o->file = NULL;
        else if (strcmp(a, "--repack") == 0 || strcmp(a, "--in-place") == 0)
            o->repack = strcmp(a, "--repack") == 0;
        else if (strcmp(a, "--copy") == 0)
            o->copy = 1;
        else if (strcmp(a, "--quiet") == 0)
            o->quiet = 1;
        else if (strcmp(a, "--tied") == 0)
            o->sp.tied = 1;
        else if (a[0] != '-')
            o->file = a;
        else if (!v)
            return -1;
        else if (strcmp(a, "-p") == 0)
            o->prompt = v, i++;
        else if (strcmp(a, "--write-gguf") == 0)
            o->write = v, i++;
        else if (strcmp(a, "--arch") == 0)
            o->sp.arch = v, i++;
        else if (strcmp(a, "--kv") == 0) {
            if (strcmp(v, "int8") && strcmp(v, "f16")) return -1;
            o->run.kv_int8 = strcmp(v, "int8") == 0, i++;
        } else if (strcmp(a, "--type") == 0) {
            if (dd_wtype_parse(v) < 0) return -1;
            o->sp.wtype = (dd_wtype)dd_wtype_parse(v), i++;
        } else if (sized_option(o, a, v) == 0)
            i++;
        else
            return -1;
    }
    /* the synthetic default is the hybrid; a file for other engines is Llama */
    if (!o->sp.arch) o->sp.arch = o->write ? "llama" : "hybrid";
    return 0;
}

static uint32_t *prompt_ids(const char *s, size_t *n)
{
    size_t cap = strlen(s) / 2 + 1, k = 0;
    uint32_t *ids = malloc(cap * sizeof *ids);
    const char *p = s;
    while (ids && *p) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v > UINT32_MAX || k == cap || (*end && *end != ',')) {
            free(ids);
            return NULL;
        }
        ids[k++] = (uint32_t)v;
        p = *end ? end + 1 : end;
    }
    *n = k;
    if (ids && k == 0) free(ids), ids = NULL;
    return ids;
}

static void print_tokens(const dd_model *m, const dd_result *r)
{
    printf("tokens:");
    for (size_t i = 0; i < r->n_tokens; i++) printf(" %u", r->tokens[i]);
    printf("\n");
    if (!m->vocab) return;
    printf("text:   ");
    for (size_t i = 0; i < r->n_tokens; i++) {
        gf_str s = m->vocab[r->tokens[i]];
        for (uint64_t j = 0; j < s.n; j++) {
            unsigned char c = (unsigned char)s.p[j];
            if (c >= 0x20 && c != 0x7F)
                putchar(c);
            else
                printf("\\x%02x", c);
        }
        putchar('|');
    }
    printf("\n");
}

static void report(const dd_model *m, const opts *o, const dd_result *r)
{
    static const char *const arch[] = {"llama", "mistral", "qwen2", "qwen3", "hybrid"};
    printf(
        "model: %s, %zu layers, width %zu, %zu/%zu heads of %zu, ffn %zu, vocab %zu, output %s%s\n",
        arch[m->arch], m->n_layer, m->n_embd, m->n_head, m->n_head_kv, m->head_dim, m->n_ff,
        m->n_vocab, m->output.data == m->tok_embd.data ? "tied" : "separate",
        m->rope == DN_ROPE_NEOX ? ", rope neox" : ", rope normal");
    if (m->arch == DD_HYBRID)
        printf(
            "gated deltanet: %zu of %zu layers (every %zu-th is attention), %zu/%zu heads of %zu, "
            "%zu conv taps\n",
            m->n_layer - m->n_layer / m->attn_interval, m->n_layer, m->attn_interval, m->gdn_kh,
            m->gdn_vh, m->gdn_d, m->gdn_taps);
    printf("isa %s, %u thread(s), kv cache %s, weights %s", dn_isa_name(dn_isa_active()),
           o->run.threads, o->run.kv_int8 ? "int8" : "f16",
           o->repacked ? "repacked"
           : o->copy   ? "copied into huge pages"
                       : "in place");
    if (o->repacked) printf(" (%zu matrices%s)", o->repacked, o->copy ? "; the others copied" : "");
    printf("\n");
    print_tokens(m, r);
    size_t gen = r->n_tokens > 1 ? r->n_tokens - 1 : 0;
    printf("prompt %zu token(s) + %zu generated in %.3f s; decode %.2f tokens/s (%zu steps after "
           "the prompt)\n",
           o->run.n_prompt, r->n_tokens, r->seconds,
           gen && r->gen_seconds > 0 ? (double)gen / r->gen_seconds : 0.0, gen);
    printf("prompt %.2f tokens/s (%zu position(s) in %.3f s, %zu a pass)\n",
           r->prompt_seconds > 0 ? (double)o->run.n_prompt / r->prompt_seconds : 0.0,
           o->run.n_prompt, r->prompt_seconds, r->batch);
    double total = 0;
    for (int i = 0; i < DD_T_COUNT; i++) total += r->bucket[i];
    printf("time by module (all steps):\n");
    for (int i = 0; i < DD_T_COUNT; i++)
        printf("  %-18s %9.3f ms %5.1f%%\n", dd_bucket_names[i], 1e3 * r->bucket[i],
               total > 0 ? 100.0 * r->bucket[i] / total : 0.0);
}

static int load_image(opts *o, uint8_t **image, gf_file *f, char *err, size_t err_bytes)
{
    if (o->file) {
        if (gf_open(o->file, f) == 0) return 0;
        snprintf(err, err_bytes, "%s: %s", o->file, f->err);
        return -1;
    }
    size_t size;
    if (dd_synth_gguf(&o->sp, image, &size, err, err_bytes)) return -1;
    if (o->write) {
        FILE *w = fopen(o->write, "wb");
        int ok = w && fwrite(*image, 1, size, w) == size;
        if (w && fclose(w) != 0) ok = 0;
        if (!ok) return snprintf(err, err_bytes, "cannot write %s", o->write), -1;
        printf("wrote %s (%zu bytes, %s, %s)\n", o->write, size, o->sp.arch,
               dd_wtype_name(o->sp.wtype));
    }
    if (gf_parse(*image, size, f) == 0) return 0;
    snprintf(err, err_bytes, "synthetic image: %s", f->err);
    return -1;
}

int dd_main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) != 0 || !(o.run.prompt = prompt_ids(o.prompt, &o.run.n_prompt))) {
        fputs(usage, stderr);
        return 2;
    }
    char err[512] = "";
    uint8_t *image = NULL;
    gf_file f;
    dd_model m;
    dd_result r = {0};
    int rc = load_image(&o, &image, &f, err, sizeof err) ? 1 : 0;
    if (rc == 0 && o.write) {
        gf_close(&f);
    } else if (rc == 0) {
        if (dd_model_load(&f, &m, err, sizeof err) == 0) {
            /* repacked by default where the kernels read the layout (x86), as
               llama.cpp repacks Q4_K: Q4_K_M 1.16-1.31x the tokens/s of in place
               on one thread, 1.17-1.18x on two (docs/decode.md) */
            const dn_isa isa = dn_isa_active();
            if (isa != DN_ISA_AVX2 && isa != DN_ISA_AVX512) o.repack = 0;
            const size_t owned = m.n_owned;
            rc = o.repack && dd_model_repack(&m, err, sizeof err) ? 1 : 0;
            o.repacked = m.n_owned - owned;
            if (rc == 0) rc = o.copy && dd_model_copy(&m, err, sizeof err) ? 1 : 0;
            if (rc == 0) rc = dd_generate(&m, &o.run, &r, err, sizeof err) ? 1 : 0;
            if (rc == 0 && !o.quiet) report(&m, &o, &r);
            if (rc == 0) printf("digest %016llx\n", (unsigned long long)r.digest);
            dd_model_free(&m);
        } else {
            rc = 1;
        }
        gf_close(&f);
    }
    if (rc) fprintf(stderr, "decodenum decode: %s\n", err);
    free(r.tokens);
    free(image);
    free((void *)o.run.prompt);
    return rc;
}
