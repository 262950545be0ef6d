/* SPDX-License-Identifier: MIT */
/* pool.h: running a product's tasks on a dn_pool. */
#ifndef DN_POOL_INTERNAL_H
#define DN_POOL_INTERNAL_H

#include <stddef.h>

#include "decodenum/pool.h"

/* Calls task(t, ctx) once for every t in [0, count), spread over the pool's
   threads and the caller's; returns when all have returned. pool NULL (or
   of one thread) runs them in order on the caller's thread. */
typedef void (*dn_task_fn)(size_t t, void *ctx);
void dn_pool_run(dn_pool *pool, size_t count, dn_task_fn task, void *ctx);

/* The most tasks an entry point splits one call into when it keeps each
   task's result (a status, a failing index) on its own stack, so that the
   pool needs no allocation: 64 keep four tasks a thread up to 16 threads. */
#define DN_POOL_STACK_TASKS 64

#endif
