/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness of the decode engine's GGUF reader and model binder
 * (examples/decode): any bytes are a file. The reader must refuse with a
 * message or index it within its bytes; a file that binds to a model must
 * run one decode step or refuse with a message. ASan and UBSan watch every
 * read of the mapping.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly `size` bytes, so a read past them is caught */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    gf_file f;
    if (gf_parse(copy, size, &f) != 0) {
        if (!f.err[0]) abort();
        free(copy);
        return 0;
    }
    dd_model m;
    char err[256] = "";
    if (dd_model_load(&f, &m, err, sizeof err) == 0) {
        uint32_t prompt = 1;
        dd_run run = {&prompt, 1, 1, 1, 0, NULL, 0}; /* batch 0: the default */
        dd_result r;
        /* small models only: the harness looks for bad reads, not speed */
        if (m.n_embd * m.n_ff * m.n_layer <= (1u << 22) && m.n_vocab <= 4096) {
            if (dd_generate(&m, &run, &r, err, sizeof err) != 0 && !err[0]) abort();
            free(r.tokens);
        }
        dd_model_free(&m);
    } else if (!err[0]) {
        abort();
    }
    gf_close(&f);
    free(copy);
    return 0;
}
