/* SPDX-License-Identifier: MIT */
/*
 * bench/ggml_peer.c: ggml_mul_mat over the bench's buffers (see ggml_peer.h).
 *
 * The tensors are made in a no_alloc context and pointed at the caller's
 * memory, so ggml reads the very bytes our products read; the graph, its
 * plan, its work buffer (where ggml puts the converted activation) and a
 * threadpool are made once, and a call is one ggml_graph_compute.
 *
 * Repacked weights: llama.cpp loads CPU weights into the CPU backend's
 * first "extra" buffer type (CPU_REPACK), which reorders the blocks of
 * some formats (Q4_0, Q4_K, Q8_0, IQ4_NL, ... as its build allows) into
 * interleaved rows for its GEMV kernels. Asked to, the peer does the same:
 * the weight tensor is allocated in that buffer type and set from the
 * caller's bytes (ggml repacks them then); ggml_peer_repacked tells whether
 * ggml took the format.
 */
#include "ggml_peer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

struct ggml_peer {
    struct ggml_context *ctx;
    struct ggml_cgraph *graph;
    struct ggml_threadpool *pool;
    struct ggml_cplan plan;
    void *work;
    ggml_backend_buffer_t repacked; /* the weights' buffer when repacked */
};

/* The CPU backend's repacking buffer type, or NULL. */
static ggml_backend_buffer_type_t repack_type(void)
{
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!dev) return NULL;
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    ggml_backend_dev_get_extra_bufts_t get =
        (ggml_backend_dev_get_extra_bufts_t)ggml_backend_reg_get_proc_address(
            reg, "ggml_backend_dev_get_extra_bufts");
    ggml_backend_buffer_type_t *types = get ? get(dev) : NULL;
    return types ? types[0] : NULL;
}

/* Puts tw in a repacking buffer, set from w; 0 (tw untouched) where ggml
   does not repack this tensor. */
static int repack(ggml_peer *p, struct ggml_tensor *tw, const void *w)
{
    ggml_backend_buffer_type_t bt = repack_type();
    if (!bt) return 0;
    p->repacked = ggml_backend_buft_alloc_buffer(bt, ggml_backend_buft_get_alloc_size(bt, tw));
    if (!p->repacked) return 0;
    if (ggml_backend_tensor_alloc(p->repacked, tw, ggml_backend_buffer_get_base(p->repacked)) !=
            GGML_STATUS_SUCCESS ||
        !tw->extra) { /* no repacked layout for this type or shape */
        ggml_backend_buffer_free(p->repacked);
        p->repacked = NULL;
        tw->buffer = NULL;
        tw->data = NULL;
        return 0;
    }
    ggml_backend_tensor_set(tw, w, 0, ggml_nbytes(tw));
    return 1;
}

ggml_peer *ggml_peer_create(int type, const void *w, size_t rows, size_t k, const float *x,
                            size_t n, float *out, int threads, int repacked)
{
    ggml_cpu_init();
    ggml_peer *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    struct ggml_init_params ip = {
        .mem_size = (size_t)1 << 20, .mem_buffer = NULL, .no_alloc = true};
    p->ctx = ggml_init(ip);
    if (!p->ctx || k % (size_t)ggml_blck_size((enum ggml_type)type) != 0) goto fail;
    struct ggml_tensor *tw =
        ggml_new_tensor_2d(p->ctx, (enum ggml_type)type, (int64_t)k, (int64_t)rows);
    struct ggml_tensor *tx = ggml_new_tensor_2d(p->ctx, GGML_TYPE_F32, (int64_t)k, (int64_t)n);
    struct ggml_tensor *ty = ggml_mul_mat(p->ctx, tw, tx);
    if (!repacked || !repack(p, tw, w)) tw->data = (void *)(uintptr_t)w;
    tx->data = (void *)(uintptr_t)x;
    ty->data = out;
    p->graph = ggml_new_graph(p->ctx);
    ggml_build_forward_expand(p->graph, ty);
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(threads);
    p->pool = ggml_threadpool_new(&tpp);
    if (!p->pool) goto fail;
    p->plan = ggml_graph_plan(p->graph, threads, p->pool);
    p->work = malloc(p->plan.work_size + 64);
    if (!p->work) goto fail;
    p->plan.work_data = p->work;
    return p;
fail:
    ggml_peer_destroy(p);
    return NULL;
}

void ggml_peer_destroy(ggml_peer *p)
{
    if (!p) return;
    if (p->pool) ggml_threadpool_free(p->pool);
    if (p->ctx) ggml_free(p->ctx);
    if (p->repacked) ggml_backend_buffer_free(p->repacked);
    free(p->work);
    free(p);
}

int ggml_peer_repacked(const ggml_peer *p) { return p->repacked != NULL; }

void ggml_peer_call(bench_case *c)
{
    ggml_peer *p = c->ctx;
    if (ggml_graph_compute(p->graph, &p->plan) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "ggml_graph_compute failed\n");
        exit(1);
    }
}

int ggml_peer_f16_bits_are_ours(void)
{
    return ggml_cpu_has_avx2() && ggml_cpu_has_fma() && ggml_cpu_has_f16c() &&
           !ggml_cpu_has_avx512();
}

const char *ggml_peer_build(void)
{
    static char s[160];
    snprintf(s, sizeof s, "ggml (cpu built for:%s%s%s%s%s%s; tinyBLAS %s)",
             ggml_cpu_has_avx2() ? " AVX2" : "", ggml_cpu_has_fma() ? " FMA" : "",
             ggml_cpu_has_f16c() ? " F16C" : "", ggml_cpu_has_avx512() ? " AVX512F" : "",
             ggml_cpu_has_avx512_vnni() ? " AVX512-VNNI" : "", ggml_cpu_has_neon() ? " NEON" : "",
             ggml_cpu_has_llamafile() ? "on" : "off");
    return s;
}
