/* SPDX-License-Identifier: MIT */
/*
 * bench/llama_logits.c: the logits digest of `decodenum decode`, computed by
 * llama.cpp on the same GGUF file, so the two engines (and llama.cpp at
 * different thread counts) can be compared bit for bit.
 *
 * It loads the file through llama.cpp's public API (llama.h, CPU only),
 * evaluates a prompt of token ids, greedy-decodes N tokens (argmax, the
 * first of equals), and prints the ids and the digest of the bits of every
 * logit of every step: decodenum decode's own function
 * (examples/decode/logits_digest.h, FNV-1a 64) over all vocabulary
 * entries; the steps hashed are the prompt's last token and each generated
 * token but the last. Equal digests mean bit-identical logits.
 *
 * Built by `tools/build.sh bench-llama` against a llama.cpp build (not by
 * CMake: the library does not depend on llama.cpp):
 *   cc -O2 -I$LLAMA_SRC/include -I$LLAMA_SRC/ggml/include -Iexamples/decode llama_logits.c \
 *      -L$BUILD/bin -lllama -lggml -lggml-base -Wl,-rpath,$BUILD/bin
 * usage: llama-logits MODEL.gguf [-t threads] [-p ids] [-n N] [--fa on|off|auto]
 *   --fa   llama.cpp's flash attention (auto, its default, turns it on for the CPU)
 * The prompt goes in as one batch, as llama.cpp's tools give it; the
 * context is prompt + N rounded up to 256 cells.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "llama.h"
#include "logits_digest.h"

#define MAX_PROMPT 8192

typedef struct options {
    const char *path, *prompt, *fa;
    int threads, n_predict;
} options;

static int first_argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static void quiet_log(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){NULL, "1", "auto", 1, 16};
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "-t") && more)
            o->threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && more)
            o->prompt = argv[++i];
        else if (!strcmp(argv[i], "-n") && more)
            o->n_predict = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fa") && more)
            o->fa = argv[++i];
        else if (!o->path && argv[i][0] != '-')
            o->path = argv[i];
        else
            return 0;
    }
    return o->path && o->threads >= 1 && o->n_predict >= 1;
}

static int parse_ids(const char *s, llama_token *ids)
{
    int n = 0;
    while (*s && n < MAX_PROMPT) {
        char *end;
        ids[n++] = (llama_token)strtol(s, &end, 10);
        if (end == s) return 0;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static struct llama_context *make_context(struct llama_model *m, const options *o, int n_prompt)
{
    struct llama_context_params cp = llama_context_default_params();
    uint32_t n_ctx = (uint32_t)((n_prompt + o->n_predict + 255) / 256 * 256);
    cp.n_ctx = cp.n_batch = cp.n_ubatch = n_ctx;
    cp.n_threads = cp.n_threads_batch = o->threads;
    cp.no_perf = 1;
    cp.flash_attn_type = !strcmp(o->fa, "on")    ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                         : !strcmp(o->fa, "off") ? LLAMA_FLASH_ATTN_TYPE_DISABLED
                                                 : LLAMA_FLASH_ATTN_TYPE_AUTO;
    return llama_init_from_model(m, cp);
}

/* Greedy decoding from the prompt's logits; the digest of every step's. */
static int run(struct llama_context *ctx, int n_vocab, llama_token *ids, int n_prompt, int n,
               llama_token *out, uint64_t *digest)
{
    if (llama_decode(ctx, llama_batch_get_one(ids, n_prompt))) return 0;
    uint64_t d = DD_DIGEST_START;
    for (int k = 0; k < n; k++) {
        const float *logits = llama_get_logits_ith(ctx, -1);
        if (!logits) return 0;
        d = dd_digest_logits(d, logits, (size_t)n_vocab);
        out[k] = first_argmax(logits, n_vocab);
        if (k + 1 < n && llama_decode(ctx, llama_batch_get_one(&out[k], 1))) return 0;
    }
    *digest = d;
    return 1;
}

int main(int argc, char **argv)
{
    static llama_token ids[MAX_PROMPT];
    options o;
    int n_prompt;
    if (!parse(argc, argv, &o) || (n_prompt = parse_ids(o.prompt, ids)) == 0) {
        fprintf(stderr, "usage: %s MODEL.gguf [-t threads] [-p ids] [-n N] [--fa on|off|auto]\n",
                argv[0]);
        return 2;
    }
    llama_log_set(quiet_log, NULL);
    ggml_backend_load_all();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(o.path, mp);
    struct llama_context *ctx = model ? make_context(model, &o, n_prompt) : NULL;
    llama_token *out = malloc(sizeof(llama_token) * (size_t)o.n_predict);
    uint64_t digest = 0;
    int n_vocab = model ? llama_vocab_n_tokens(llama_model_get_vocab(model)) : 0;
    int ok = ctx && out && run(ctx, n_vocab, ids, n_prompt, o.n_predict, out, &digest);
    if (ok) {
        printf("llama.cpp %s: %d threads, prompt %d ids, flash attention %s\ntokens:", o.path,
               o.threads, n_prompt, o.fa);
        for (int k = 0; k < o.n_predict; k++) printf(" %d", out[k]);
        printf("\ndigest %016llx\n", (unsigned long long)digest);
    } else {
        fprintf(stderr, "llama-logits: %s: %s failed\n", o.path,
                !model ? "loading"
                : !ctx ? "making a context"
                       : "decoding");
    }
    free(out);
    if (ctx) llama_free(ctx);
    if (model) llama_model_free(model);
    return ok ? 0 : 1;
}
