/* SPDX-License-Identifier: MIT */
/*
 * decodenum/gdn.h: Gated-DeltaNet memory, the eager row and the lazily
 * flushed head, with the engine's bits on every ISA.
 *
 * A head's memory is dv state rows of dk elements (row j at element j*dk),
 * kept as f32, bfloat16 or binary16 (dn_gdn_store). One token (its query q
 * and key k of dk elements, its dv values v, the log of its decay g and its
 * update gate beta) moves every row j through the rank-one update
 *
 *     decay = dn_exp(g)
 *     coef  = beta * (v[j] - decay * (row . k))
 *     row   = decay * row + coef * k            (each element, then `store`)
 *     out[j] = (decay * (row_old . q) + coef * (k . q)) * scale
 *
 * every operation the engine's (dn_fmul, dn_fadd, dn_fsub; every dot
 * dn_fdot's 32 lanes and tree); docs/numerics.md section 14 gives each
 * definition as its sequence of operations, docs/gdn.md the design.
 *
 * The store's rounding point: every stored element is rounded through the
 * store once per token (dn_f32_to_bf16 / dn_f32_to_f16, nearest even), and a
 * row is read back widened exactly (dn_bf16_to_f32 / dn_f16_to_f32). A lazy
 * flush replays each token's update over a row with the same rounding after
 * every token, so a flushed state is the eager state bit for bit, but it
 * writes memory once.
 *
 * Inputs: q, k, v, g, beta and scale must be finite, else DN_ERR_NON_FINITE
 * and nothing is written (state, ring, outputs, log: all as they were). dk or dv
 * of 0 is DN_ERR_INVALID_ARGUMENT. NULL with a count of 0 is valid where a
 * count can be 0; a NULL pointer otherwise, an unknown store, and sizes whose
 * products overflow size_t are DN_ERR_INVALID_ARGUMENT (checked before the
 * inputs' finiteness). Only dn_gdn_lazy_create allocates. No function prints,
 * aborts or leaves the floating-point environment changed. Outputs must not
 * overlap inputs.
 */
#ifndef DECODENUM_GDN_H
#define DECODENUM_GDN_H

#include "decodenum/common.h"
#include "decodenum/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a state row's elements are kept. */
typedef enum dn_gdn_store {
    DN_GDN_STORE_F32 = 0,  /* binary32 as computed (4 bytes an element) */
    DN_GDN_STORE_BF16 = 1, /* dn_f32_to_bf16 of it (2 bytes) */
    DN_GDN_STORE_F16 = 2   /* dn_f32_to_f16 of it (2 bytes) */
} dn_gdn_store;

/* Bytes of one state element under `store`; 0 for an unknown store. */
DN_API size_t dn_gdn_store_bytes(dn_gdn_store store);

/* ---- the causal convolution -------------------------------------------- */

/*
 * One token through a block's causal convolution and SiLU, channel by
 * channel: y[c] = dn_silu(sum), the sum from +0 in tap order (dn_fmul,
 * dn_fadd) of the ring's taps-1 rows, oldest first, against the channel's
 * first taps-1 weights, then x[c] against its last weight.
 *   ring:   taps-1 rows of `channels` floats (slot s at ring + s*channels);
 *           *head is the slot of the oldest row (< taps-1; 0 when taps = 1).
 *   kernel: channels*taps weights, channel c's taps together at c*taps.
 * dn_gdn_conv leaves the ring as it is; dn_gdn_conv_append then writes x
 * over the oldest row and advances *head (no shifting copies).
 * taps of 0 or *head out of range: DN_ERR_INVALID_ARGUMENT; a non-finite
 * x: DN_ERR_NON_FINITE (ring, head and y untouched). Weights are read as
 * given (a non-finite weight gives what the definition gives).
 * Cost: channels*taps multiply-adds and channels silu; no allocation.
 */
DN_API dn_status dn_gdn_conv(const float *ring, const uint32_t *head, size_t channels, size_t taps,
                             const float *kernel, const float *x, float *y);
DN_API dn_status dn_gdn_conv_append(float *ring, uint32_t *head, size_t channels, size_t taps,
                                    const float *kernel, const float *x, float *y);

/* ---- one row ------------------------------------------------------------ */

/* gdn_update: one state row (dk elements kept as `store`) through one
   token's rank-one update with the decay itself (not its log):
   *coef = beta * (v - decay * (row . k)); each element becomes
   decay * m + coef * k[i], rounded through the store. The row is left as it
   was when any input is non-finite (DN_ERR_NON_FINITE). Cost: 2 dk. */
DN_API dn_status dn_gdn_update(void *row, dn_gdn_store store, const float *k, size_t dk, float v,
                               float decay, float beta, float *coef);

/* gdn_row: dn_gdn_update and the read-out of the row as it was, in one pass:
   *out = (decay * (row . q) + coef * kq) * scale, kq being the head's k . q
   (dn_fdot(k, q, dk)). Cost: 3 dk. */
DN_API dn_status dn_gdn_row(void *row, dn_gdn_store store, const float *k, const float *q,
                            size_t dk, float v, float decay, float beta, float kq, float scale,
                            float *out);

/* ---- a head, a layer, several tokens ------------------------------------ */

/* One head through one token: decay = dn_exp(g), kq = dn_fdot(k, q, dk),
   then dn_gdn_row over each of the dv rows with value v[j], out[j] its
   read-out. state: dv*dk elements kept as `store`. Cost: 3 dv dk. */
DN_API dn_status dn_gdn_head(void *state, dn_gdn_store store, size_t dk, size_t dv, const float *q,
                             const float *k, const float *v, float g, float beta, float scale,
                             float *out);

/* A layer's shape: `heads` value heads of dv rows, reading `key_heads` key
   heads of dk elements; value head h reads key head h / (heads / key_heads)
   (heads a multiple of key_heads; the interleaved repeat of Qwen3-Next). */
typedef struct dn_gdn_shape {
    uint32_t heads;
    uint32_t key_heads;
    uint32_t dk;
    uint32_t dv;
    uint32_t store; /* a dn_gdn_store */
} dn_gdn_shape;

/* One token through heads [head_begin, head_end) of a layer, on the calling
   thread. state: heads*dv*dk elements (head h at h*dv*dk); q, k:
   key_heads*dk; v, out: heads*dv (out of head h at h*dv); g, beta: one per
   head. Each head is dn_gdn_head. Every input of the range is checked
   before anything is written. DN_ERR_INVALID_ARGUMENT for a shape with
   heads or key_heads of 0, heads not a multiple of key_heads, dk or dv of 0
   or an unknown store, or head_begin > head_end or head_end > heads; an
   empty range returns DN_OK and touches nothing. */
DN_API dn_status dn_gdn_layer_heads(void *state, const dn_gdn_shape *shape, const float *q,
                                    const float *k, const float *v, const float *g,
                                    const float *beta, float scale, float *out, size_t head_begin,
                                    size_t head_end);

/* dn_gdn_layer_heads over `tokens` tokens in order (prefill), all heads,
   the heads split over `pool` (NULL: the calling thread; the bits never
   depend on it). Token t's inputs at q + t*key_heads*dk, k likewise,
   v + t*heads*dv, g + t*heads, beta + t*heads, its outputs at
   out + t*heads*dv. Every token is checked before any is run, so a
   non-finite input anywhere leaves the state as it was. tokens = 1 is the
   decode step. Cost: 3 tokens heads dv dk. */
DN_API dn_status dn_gdn_layer(void *state, const dn_gdn_shape *shape, size_t tokens, const float *q,
                              const float *k, const float *v, const float *g, const float *beta,
                              float scale, float *out, dn_pool *pool);

/* ---- the lazily flushed head --------------------------------------------- */

/*
 * A head that logs tokens instead of updating its state: a query is folded
 * back through the log (gdn_fold, newest token first) and read against the
 * state as last flushed (gdn_read: (row . y + carried[j]) * scale). The
 * state is brought up to date (gdn_flush: every logged update replayed
 * over each row in order, exactly as dn_gdn_head makes them) when the log is
 * full, when asked, or spread over the next tokens (a trailing flush).
 * Outputs are the eager head's within the accuracy tabled in docs/gdn.md,
 * not its bits (the fold reorders the arithmetic); a flushed state is the
 * eager state's bits.
 *
 * The head borrows the caller's state (dv*dk elements kept as `store`),
 * which must outlive it and which it writes only when it flushes. Not
 * thread-safe: one thread at a time per head.
 */
typedef struct dn_gdn_lazy dn_gdn_lazy;

/* A lazy head over `state` logging up to `capacity` tokens (>= 1). Memory:
   capacity*(dk + dv) floats for the log and 2*(dk + dv) working floats.
   *out NULL on failure: DN_ERR_INVALID_ARGUMENT (NULLs, dk, dv or capacity
   of 0, an unknown store, sizes that overflow), DN_ERR_OUT_OF_MEMORY. */
DN_API dn_status dn_gdn_lazy_create(void *state, dn_gdn_store store, size_t dk, size_t dv,
                                    size_t capacity, dn_gdn_lazy **out);

/* Frees the head (not the state). NULL is a no-op. The state is left as
   last flushed: flush first to keep the logged tokens. */
DN_API void dn_gdn_lazy_destroy(dn_gdn_lazy *head);

/* Tokens logged and not yet flushed (a trailing flush's older ones too). */
DN_API size_t dn_gdn_lazy_logged(const dn_gdn_lazy *head);

/* Logs one token (k: dk, v: dv, the log of its decay g, beta). The log
   full: DN_ERR_OUT_OF_RANGE and nothing logged (flush first). */
DN_API dn_status dn_gdn_lazy_log(dn_gdn_lazy *head, const float *k, const float *v, float g,
                                 float beta);

/* out[j] = the read-out of row j after every logged token, through the fold
   of q (dk) back through the log. Cost: logged*(2 dk + dv) + dv dk. */
DN_API dn_status dn_gdn_lazy_query(dn_gdn_lazy *head, const float *q, float scale, float *out);

/* Flushes every logged token (finishing a trailing flush first) and empties
   the log. Cost: 2 logged dv dk. */
DN_API dn_status dn_gdn_lazy_flush(dn_gdn_lazy *head);

/* Starts a trailing flush of the tokens logged now: dn_gdn_lazy_step then
   replays them over `rows_per_step` rows (>= 1) before each token, and
   drops them from the log when every row is done; queries meanwhile fold
   replayed rows through the newer tokens only (gdn_fold_trailing). A
   trailing flush already running is finished first. */
DN_API dn_status dn_gdn_lazy_flush_trailing(dn_gdn_lazy *head, size_t rows_per_step);

/* The decode step: advances a trailing flush, flushes if the log is full,
   logs the token and answers its query (out: dv). A non-finite input:
   DN_ERR_NON_FINITE before anything moves. */
DN_API dn_status dn_gdn_lazy_step(dn_gdn_lazy *head, const float *q, const float *k, const float *v,
                                  float g, float beta, float scale, float *out);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_GDN_H */
