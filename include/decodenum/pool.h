/* SPDX-License-Identifier: MIT */
/*
 * decodenum/pool.h: a thread pool the heavy products can share.
 *
 * A pool owns `threads - 1` worker threads; the thread that calls a product
 * works too. Between calls a worker watches for the next one for up to
 * 200 us (a wake-up through the OS costs each side about 10 us, which calls
 * of tens of microseconds cannot afford), then sleeps on a condition
 * variable, so an idle pool costs nothing. Results never depend on the pool:
 * every element of every product is computed by one thread in one fixed
 * order, so NULL (the calling thread alone), 1, 2 or 64 threads give the
 * same bits. Engines with their own threads can skip the pool and call the
 * row-range forms of the products instead.
 *
 * A pool runs one product at a time: calls that share a pool from several
 * threads at once are serialised (each waits for the one before).
 */
#ifndef DECODENUM_POOL_H
#define DECODENUM_POOL_H

#include "decodenum/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dn_pool dn_pool;

/* A pool of `threads` threads in all (the caller's included); 0 means one
   per online CPU. At most 1024. NULL when threads > 1024 or when memory or
   threads cannot be had. Cost: creates threads - 1 threads. */
DN_API dn_pool *dn_pool_create(unsigned threads);

/* Stops and joins the workers and frees the pool. NULL is a no-op. The pool
   must not be in use by another thread. */
DN_API void dn_pool_destroy(dn_pool *pool);

/* The pool's thread count (the caller's included); 1 for NULL. */
DN_API unsigned dn_pool_threads(const dn_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* DECODENUM_POOL_H */
