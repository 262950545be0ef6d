/* SPDX-License-Identifier: MIT */
/*
 * dn_pool: workers that sleep between jobs. A job is `count` tasks handed
 * out through an atomic counter; every worker joins every job (woken by a
 * new generation), takes tasks until none are left, and checks out; the
 * caller takes tasks too, then waits until every worker has checked out.
 * So no worker can still be inside one job when the next one is set up.
 * Which thread runs a task never changes a bit: each task writes its own
 * outputs in a fixed order.
 *
 * Between jobs close together (a decode step's layers) a worker watches the
 * generation for up to SPIN_NS before it sleeps: a condition variable's
 * wake-up costs about 8-10 us on a virtual machine, and the worker started
 * that late on every job. The caller only glances at the check-outs (64
 * spins) before it sleeps: a caller spinning while its worker is queued on
 * the same CPU (a loaded host) holds the worker off. Measured on a gdn layer
 * (32 heads of S = 128) on the 2-core AMD EPYC VM, load average 6-7, best
 * wall time of 600 calls per case against one thread: sleeping workers
 * 0.87-1.89x, the worker spinning 200 us 1.78-1.85x in two runs each,
 * the caller spinning too (50 or 200 us) 0.27-0.66x for most stores. After
 * SPIN_NS without a job the workers sleep: an idle pool costs nothing.
 */
/* clock_gettime and CLOCK_MONOTONIC under -std=c11 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 199309L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif

#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define relax() _mm_pause()
#elif defined(__aarch64__)
#define relax() __asm__ volatile("yield")
#else
#define relax() ((void)0)
#endif

/* How long a worker watches for the next job before sleeping, and the
   caller for the check-outs (0: 64 spins, then the clock says stop). */
#define SPIN_NS 200000
#define CALLER_SPIN_NS 0

typedef struct job {
    dn_task_fn task;
    void *ctx;
    size_t count;
} job;

struct dn_pool {
    unsigned threads;
    pthread_t *workers;
    pthread_mutex_t serial; /* one job at a time */
    pthread_mutex_t lock;   /* guards everything below but `next` */
    pthread_cond_t wake;    /* workers wait here for a new generation */
    pthread_cond_t done;    /* the caller waits here for the check-outs */
    /* written under `lock`; read without it while spinning */
    atomic_ulong generation;
    atomic_uint pending; /* workers not yet checked out of this job */
    atomic_int stop;
    job current;
    atomic_size_t next; /* the next task of the current job */
};

static void take_tasks(dn_pool *p, const job *j)
{
    size_t t;
    while ((t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < j->count)
        j->task(t, j->ctx);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spins until done(p, arg) or `ns` have passed; returns done's last word. */
static int spin_until(dn_pool *p, int (*done)(dn_pool *, unsigned long), unsigned long arg,
                      uint64_t ns)
{
    uint64_t start = now_ns();
    for (unsigned i = 1;; i++) {
        if (done(p, arg)) return 1;
        if (i % 64 == 0 && now_ns() - start > ns) return done(p, arg);
        relax();
    }
}

static int job_posted(dn_pool *p, unsigned long seen)
{
    return atomic_load_explicit(&p->stop, memory_order_acquire) ||
           atomic_load_explicit(&p->generation, memory_order_acquire) != seen;
}

static int all_out(dn_pool *p, unsigned long unused)
{
    (void)unused;
    return atomic_load_explicit(&p->pending, memory_order_acquire) == 0;
}

static void *worker(void *arg)
{
    dn_pool *p = arg;
    unsigned long seen = 0;
    for (;;) {
        spin_until(p, job_posted, seen, SPIN_NS);
        pthread_mutex_lock(&p->lock);
        while (!p->stop && p->generation == seen) pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        seen = p->generation;
        job j = p->current;
        pthread_mutex_unlock(&p->lock);

        take_tasks(p, &j);

        /* the caller may be asleep only once the count it waits on is 0 */
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

dn_pool *dn_pool_create(unsigned threads)
{
    if (threads == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        threads = online < 1 ? 1 : online > 1024 ? 1024 : (unsigned)online;
    }
    if (threads > 1024) return NULL;
    dn_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->workers = calloc(threads, sizeof *p->workers);
    if (!p->workers) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->serial, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    atomic_init(&p->generation, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->stop, 0);
    p->threads = 1;
    for (unsigned i = 1; i < threads; i++) {
        if (pthread_create(&p->workers[i], NULL, worker, p) != 0) {
            dn_pool_destroy(p); /* joins the ones that started */
            return NULL;
        }
        p->threads = i + 1;
    }
    return p;
}

void dn_pool_destroy(dn_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 1; i < p->threads; i++) pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->serial);
    free(p->workers);
    free(p);
}

unsigned dn_pool_threads(const dn_pool *p) { return p ? p->threads : 1; }

void dn_pool_run(dn_pool *p, size_t count, dn_task_fn task, void *ctx)
{
    if (count == 0) return;
    if (!p || p->threads == 1 || count == 1) {
        for (size_t t = 0; t < count; t++) task(t, ctx);
        return;
    }
    job j = {task, ctx, count};
    pthread_mutex_lock(&p->serial);
    pthread_mutex_lock(&p->lock);
    p->current = j;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->pending = p->threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);

    take_tasks(p, &j);

    if (!spin_until(p, all_out, 0, CALLER_SPIN_NS)) {
        pthread_mutex_lock(&p->lock);
        while (p->pending > 0) pthread_cond_wait(&p->done, &p->lock);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_unlock(&p->serial);
}
