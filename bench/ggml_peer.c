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
#define _POSIX_C_SOURCE 200809L /* setenv, execv */
#include "ggml_peer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
    void *scratch;                  /* an intermediate tensor's data, if any */
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

/* A peer with a context for `tensors` tensor headers (no data: the tensors
   point at the caller's buffers). */
static ggml_peer *peer_new(void)
{
    ggml_cpu_init();
    ggml_peer *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    struct ggml_init_params ip = {
        .mem_size = (size_t)1 << 20, .mem_buffer = NULL, .no_alloc = true};
    p->ctx = ggml_init(ip);
    if (!p->ctx) {
        free(p);
        return NULL;
    }
    return p;
}

/* The graph computing `result` into out, its plan for `threads` workers on a
   threadpool of its own, and the plan's work buffer; p is destroyed and NULL
   returned where any of them fails. */
static ggml_peer *peer_finish(ggml_peer *p, struct ggml_tensor *result, void *out, int threads)
{
    result->data = out;
    p->graph = ggml_new_graph(p->ctx);
    ggml_build_forward_expand(p->graph, result);
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

/* A tensor of `type` over caller memory at data. */
static struct ggml_tensor *over(ggml_peer *p, int type, int64_t n0, int64_t n1, int64_t n2,
                                const void *data)
{
    struct ggml_tensor *t = ggml_new_tensor_3d(p->ctx, (enum ggml_type)type, n0, n1, n2);
    t->data = (void *)(uintptr_t)data;
    return t;
}

ggml_peer *ggml_peer_create(int type, const void *w, size_t rows, size_t k, const float *x,
                            size_t n, float *out, int threads, int repacked)
{
    ggml_peer *p = peer_new();
    if (!p) return NULL;
    if (k % (size_t)ggml_blck_size((enum ggml_type)type) != 0) {
        ggml_peer_destroy(p);
        return NULL;
    }
    struct ggml_tensor *tw =
        ggml_new_tensor_2d(p->ctx, (enum ggml_type)type, (int64_t)k, (int64_t)rows);
    struct ggml_tensor *tx = over(p, GGML_TYPE_F32, (int64_t)k, (int64_t)n, 1, x);
    struct ggml_tensor *ty = ggml_mul_mat(p->ctx, tw, tx);
    if (!repacked || !repack(p, tw, w)) tw->data = (void *)(uintptr_t)w;
    return peer_finish(p, ty, out, threads);
}

/* The cache's rows of one side as ggml's [d, position, kv_head] tensor: a
   view with the layout's strides over a flat tensor at data. */
static struct ggml_tensor *cache_side(ggml_peer *p, int type, const void *data, size_t positions,
                                      size_t head_dim, size_t kv_heads)
{
    size_t row = ggml_row_size((enum ggml_type)type, (int64_t)head_dim);
    struct ggml_tensor *flat =
        over(p, type, (int64_t)(head_dim * kv_heads * positions), 1, 1, data);
    return ggml_view_3d(p->ctx, flat, (int64_t)head_dim, (int64_t)positions, (int64_t)kv_heads,
                        row * kv_heads, row, 0);
}

ggml_peer *ggml_peer_attention_create(int kv_type, const void *k, const void *v, size_t positions,
                                      size_t head_dim, size_t q_heads, size_t kv_heads,
                                      const float *q, float scale, float *out, int threads)
{
    ggml_peer *p = peer_new();
    if (!p) return NULL;
    struct ggml_tensor *tq = over(p, GGML_TYPE_F32, (int64_t)head_dim, 1, (int64_t)q_heads, q);
    struct ggml_tensor *tk = cache_side(p, kv_type, k, positions, head_dim, kv_heads);
    struct ggml_tensor *tv = cache_side(p, kv_type, v, positions, head_dim, kv_heads);
    struct ggml_tensor *r = ggml_flash_attn_ext(p->ctx, tq, tk, tv, NULL, scale, 0.0f, 0.0f);
    return peer_finish(p, r, out, threads);
}

size_t ggml_peer_quantize_q8_0(const float *x, void *dst, size_t rows, size_t n)
{
    return ggml_quantize_chunk(GGML_TYPE_Q8_0, x, dst, 0, (int64_t)rows, (int64_t)n, NULL);
}

ggml_peer *ggml_peer_gdn_create(size_t heads, size_t key_heads, size_t s, size_t tokens,
                                const float *q, const float *k, const float *v, const float *g,
                                const float *beta, const float *state, float *out, int threads)
{
    ggml_peer *p = peer_new();
    if (!p) return NULL;
    int64_t S = (int64_t)s, H = (int64_t)heads, HK = (int64_t)key_heads, T = (int64_t)tokens;
    struct ggml_tensor *tq = over(p, GGML_TYPE_F32, S, HK, T, q);
    struct ggml_tensor *tk = over(p, GGML_TYPE_F32, S, HK, T, k);
    struct ggml_tensor *tv = over(p, GGML_TYPE_F32, S, H, T, v);
    struct ggml_tensor *tg = over(p, GGML_TYPE_F32, 1, H, T, g);
    struct ggml_tensor *tb = over(p, GGML_TYPE_F32, 1, H, T, beta);
    struct ggml_tensor *ts = over(p, GGML_TYPE_F32, S, S, H, state);
    struct ggml_tensor *r = ggml_gated_delta_net(p->ctx, tq, tk, tv, tg, tb, ts, 1);
    return peer_finish(p, r, out, threads);
}

ggml_peer *ggml_peer_ssm_conv_create(const float *window, const float *kernel, size_t channels,
                                     size_t taps, float *out, int threads)
{
    ggml_peer *p = peer_new();
    if (!p) return NULL;
    /* sx: [taps - 1 + tokens, channels, seqs], one token; c: [taps, channels] */
    struct ggml_tensor *sx = over(p, GGML_TYPE_F32, (int64_t)taps, (int64_t)channels, 1, window);
    struct ggml_tensor *c =
        ggml_new_tensor_2d(p->ctx, GGML_TYPE_F32, (int64_t)taps, (int64_t)channels);
    c->data = (void *)(uintptr_t)kernel;
    struct ggml_tensor *r = ggml_ssm_conv(p->ctx, sx, c);
    p->scratch = malloc(ggml_nbytes(r));
    if (!p->scratch) {
        ggml_peer_destroy(p);
        return NULL;
    }
    r->data = p->scratch;
    return peer_finish(p, ggml_silu(p->ctx, r), out, threads);
}

void ggml_peer_destroy(ggml_peer *p)
{
    if (!p) return;
    if (p->pool) ggml_threadpool_free(p->pool);
    if (p->ctx) ggml_free(p->ctx);
    if (p->repacked) ggml_backend_buffer_free(p->repacked);
    free(p->work);
    free(p->scratch);
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
    /* A ggml built without OpenMP: its workers poll for new work after a
       compute (the default poll level, 50, is 6.5 million pause loops),
       on the cores the next case runs on; paused, they sleep until the
       next compute wakes them. (With OpenMP this does nothing: see
       ggml_peer_quiet_openmp.) */
    ggml_threadpool_pause(p->pool);
}

int ggml_peer_f16_bits_are_ours(void)
{
    return ggml_cpu_has_avx2() && ggml_cpu_has_fma() && ggml_cpu_has_f16c() &&
           !ggml_cpu_has_avx512();
}

void ggml_peer_quiet_openmp(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") ||
        setenv("GOMP_SPINCOUNT", "10000", 1) != 0)
        return;
    fflush(stdout);
    execv("/proc/self/exe", argv); /* returns only on failure: run on as we are */
}

const char *ggml_peer_build(void)
{
    static char s[240];
    const char *policy = getenv("OMP_WAIT_POLICY"), *spins = getenv("GOMP_SPINCOUNT");
    snprintf(
        s, sizeof s,
        "ggml (cpu built for:%s%s%s%s%s%s%s; tinyBLAS %s; OMP_WAIT_POLICY %s, GOMP_SPINCOUNT %s)",
        ggml_cpu_has_avx2() ? " AVX2" : "", ggml_cpu_has_fma() ? " FMA" : "",
        ggml_cpu_has_f16c() ? " F16C" : "", ggml_cpu_has_avx512() ? " AVX512F" : "",
        ggml_cpu_has_avx512_vnni() ? " AVX512-VNNI" : "",
        ggml_cpu_has_avx512_bf16() ? " AVX512-BF16" : "", ggml_cpu_has_neon() ? " NEON" : "",
        ggml_cpu_has_llamafile() ? "on" : "off", policy ? policy : "unset",
        spins ? spins : "unset");
    return s;
}
