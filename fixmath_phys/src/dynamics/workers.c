// SPDX-License-Identifier: MIT
// Worker pool (workers.h): the calling thread is worker 0, count - 1 pthreads
// are the others. A loop is published as one 32-bit word, `claim` = epoch
// (12 bits) | next block (10) | block count (10); a worker takes block k by a
// compare-and-swap of next from k to k + 1, so each block runs exactly once,
// and reads the loop's description only after a successful swap (the caller
// wrote it before publishing the word, and rewrites it only once every block
// of the loop has been counted done). The caller takes blocks too, then waits
// for `done` to reach the block count.
//
// Waiting, so that ~200 small loops a tick are cheap and 8 workers on 2 cores
// still progress: spin a little (pause), then sched_yield, then sleep on a
// condition variable; whoever publishes work or finishes the last block
// wakes a sleeper only when one says it sleeps (checked Dekker-style with
// sequentially consistent atomics, then under the mutex).
//
// Hot: between ls_workers_hot_(p, true) and (p, false) -- the world's step --
// an idle worker keeps yielding (up to LS_WORKERS_HOT_YIELDS rounds) instead
// of sleeping after LS_WORKERS_YIELDS, and turning hot wakes the sleepers
// into that state. Why: a step's serial stretches (the broad phase, the
// contact walk, the islands: 0.1-0.5 ms) outlasted the short wait, so the
// workers slept and each stretch's next loop paid a wake-up (about 1,500
// context switches in 400 steps of Box3D's rain with 2 workers, 88 hot: rain
// 4.7 -> 4.55 ms/step). A yield gives the core away to any runnable thread,
// so a hot wait costs nothing when the cores are oversubscribed; between
// steps the workers sleep as before.
//
// Determinism does not come from here: blocks are cut by n, min_block and
// the worker count alone, and the step only runs loops whose items write
// disjoint data, so any assignment of blocks to threads gives the same bits.
#define _POSIX_C_SOURCE 200809L // pthreads, sched_yield
#include "workers.h"

#include <stdlib.h>
#include <string.h>

#if !defined(__wasi__) && !defined(LS_NO_THREADS) && !defined(__STDC_NO_ATOMICS__) &&              \
    !defined(_WIN32)
#define LS_WORKERS_THREADS 1
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#else
#define LS_WORKERS_THREADS 0
#endif

_Static_assert(LS_WORKERS_MAX *LS_WORKERS_BLOCKS_PER_WORKER < 1024, "blocks fit in 10 bits");

/// Busy-wait rounds (each one pause instruction) before yielding.
#define LS_WORKERS_SPINS 512
/// sched_yield rounds before sleeping.
#define LS_WORKERS_YIELDS 64
/// sched_yield rounds before sleeping while hot (tens of milliseconds).
#define LS_WORKERS_HOT_YIELDS 65536u

// One loop: what a worker runs after claiming a block.
typedef struct ls_job {
    ls_workers_fn *fn;
    void *ctx;
    uint32_t n, size;
} ls_job;

#if LS_WORKERS_THREADS
// One started thread.
typedef struct ls_worker_thread {
    struct ls_workers *pool;
    uint32_t index; // 1..count-1
    pthread_t id;
} ls_worker_thread;
#endif

struct ls_workers {
    uint32_t count; ///< workers, the caller included (1 = serial)
    ls_enqueue_task_fn *enqueue;
    ls_finish_task_fn *finish;
    void *task_context;
    ls_job job; ///< the current loop (written by the caller only between loops)
#if LS_WORKERS_THREADS
    uint32_t started;       ///< threads running (count - 1)
    uint32_t epoch;         ///< the caller's count of loops published
    char pad0[64];          // keep the hot words on their own cache lines
    _Atomic uint32_t claim; ///< epoch << 20 | next block << 10 | block count
    char pad1[64];
    _Atomic uint32_t done; ///< blocks finished in the current loop
    char pad2[64];
    _Atomic uint32_t sleepers; ///< workers asleep (or about to be) on `wake`
    _Atomic bool hot;          ///< ls_workers_hot_: idle workers keep yielding
    _Atomic uint32_t heat;     ///< times turned hot: a sleeper wakes when it changes
    _Atomic uint32_t waiting;  ///< the caller is asleep (or about to be) on `finished`
    _Atomic bool stop;
    pthread_mutex_t mu;
    pthread_cond_t wake;     ///< new loop or stop
    pthread_cond_t finished; ///< last block done
    ls_worker_thread *threads;
#endif
};

#define CLAIM_EPOCH(c)  ((c) >> 20)
#define CLAIM_NEXT(c)   (((c) >> 10) & 1023u)
#define CLAIM_BLOCKS(c) ((c)&1023u)

static void run_block(const ls_job *j, uint32_t k, uint32_t worker)
{
    uint32_t begin = k * j->size;
    uint32_t end = j->n - begin > j->size ? begin + j->size : j->n;
    j->fn(j->ctx, begin, end, worker);
}

static uint32_t block_size(uint32_t count, uint32_t n, uint32_t min_block)
{
    if (count <= 1) {
        return n;
    }
    uint32_t target = count * LS_WORKERS_BLOCKS_PER_WORKER;
    uint32_t size = n / target + (n % target != 0);
    if (min_block < 1) {
        min_block = 1;
    }
    return size < min_block ? min_block : size;
}

#if LS_WORKERS_THREADS

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// Claim and run blocks of the published loop until none is left.
static void run_claimed(struct ls_workers *p, uint32_t worker)
{
    uint32_t c = atomic_load(&p->claim);
    for (;;) {
        if (CLAIM_NEXT(c) >= CLAIM_BLOCKS(c)) {
            return;
        }
        if (!atomic_compare_exchange_weak(&p->claim, &c, c + (1u << 10))) {
            continue; // c now holds the current word
        }
        run_block(&p->job, CLAIM_NEXT(c), worker);
        if (atomic_fetch_add(&p->done, 1) + 1 == CLAIM_BLOCKS(c) && atomic_load(&p->waiting)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->finished);
            pthread_mutex_unlock(&p->mu);
        }
        c = atomic_load(&p->claim);
    }
}

// Wait until a loop newer than `seen` is published (or stop); returns its epoch.
static uint32_t wait_for_loop(struct ls_workers *p, uint32_t seen)
{
    uint32_t heat = atomic_load(&p->heat);
    for (uint32_t i = 0;; i++) {
        uint32_t c = atomic_load(&p->claim);
        if (CLAIM_EPOCH(c) != seen || atomic_load(&p->stop)) {
            return CLAIM_EPOCH(c);
        }
        if (i < LS_WORKERS_SPINS) {
            cpu_relax();
        } else if (i < LS_WORKERS_SPINS + LS_WORKERS_YIELDS ||
                   (atomic_load(&p->hot) && i < LS_WORKERS_SPINS + LS_WORKERS_HOT_YIELDS)) {
            sched_yield();
        } else {
            break;
        }
    }
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    while (CLAIM_EPOCH(atomic_load(&p->claim)) == seen && !atomic_load(&p->stop) &&
           atomic_load(&p->heat) == heat) {
        pthread_cond_wait(&p->wake, &p->mu);
    }
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
    return CLAIM_EPOCH(atomic_load(&p->claim));
}

static void *worker_main(void *arg)
{
    ls_worker_thread *t = arg;
    struct ls_workers *p = t->pool;
    uint32_t seen = 0;
    for (;;) {
        seen = wait_for_loop(p, seen);
        if (atomic_load(&p->stop)) {
            return NULL;
        }
        run_claimed(p, t->index);
    }
}

// Stop and join the started threads.
static void stop_threads(struct ls_workers *p)
{
    if (p->started == 0) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, true);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t i = 0; i < p->started; i++) {
        pthread_join(p->threads[i].id, NULL);
    }
    p->started = 0;
}

// Publish the loop in p->job cut into `blocks`, help, and wait for it.
static void run_threaded(struct ls_workers *p, uint32_t blocks)
{
    p->epoch = (p->epoch + 1) & 4095u;
    atomic_store(&p->done, 0);
    atomic_store(&p->claim, p->epoch << 20 | blocks);
    if (atomic_load(&p->sleepers)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    run_claimed(p, 0);
    for (uint32_t i = 0; atomic_load(&p->done) != blocks; i++) {
        if (i < LS_WORKERS_SPINS) {
            cpu_relax();
        } else if (i < LS_WORKERS_SPINS + LS_WORKERS_YIELDS) {
            sched_yield();
        } else {
            pthread_mutex_lock(&p->mu);
            atomic_store(&p->waiting, 1);
            while (atomic_load(&p->done) != blocks) {
                pthread_cond_wait(&p->finished, &p->mu);
            }
            atomic_store(&p->waiting, 0);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

#endif // LS_WORKERS_THREADS

size_t ls_workers_memory_size_(uint32_t count, bool tasks)
{
    if (count <= 1) {
        return 0;
    }
    size_t size = sizeof(struct ls_workers);
    (void)tasks;
#if LS_WORKERS_THREADS
    if (!tasks) {
        size += (size_t)(count - 1) * sizeof(ls_worker_thread);
    }
#endif
    return size;
}

static struct ls_workers *pool_alloc(uint32_t count)
{
    if (count < 1) {
        count = 1;
    }
    if (count > LS_WORKERS_MAX) {
        count = LS_WORKERS_MAX;
    }
    struct ls_workers *p = calloc(1, sizeof *p);
    if (p) {
        p->count = count;
    }
    return p;
}

ls_workers *ls_workers_create_(uint32_t count)
{
    struct ls_workers *p = pool_alloc(count);
    if (!p) {
        return NULL;
    }
#if LS_WORKERS_THREADS
    if (p->count > 1) {
        p->threads = calloc(p->count - 1, sizeof *p->threads);
        if (!p->threads) {
            free(p);
            return NULL;
        }
        atomic_init(&p->claim, 0);
        atomic_init(&p->done, 0);
        atomic_init(&p->sleepers, 0);
        atomic_init(&p->hot, false);
        atomic_init(&p->heat, 0);
        atomic_init(&p->waiting, 0);
        atomic_init(&p->stop, false);
        bool ok = pthread_mutex_init(&p->mu, NULL) == 0;
        if (ok && pthread_cond_init(&p->wake, NULL) != 0) {
            pthread_mutex_destroy(&p->mu);
            ok = false;
        }
        if (ok && pthread_cond_init(&p->finished, NULL) != 0) {
            pthread_cond_destroy(&p->wake);
            pthread_mutex_destroy(&p->mu);
            ok = false;
        }
        for (uint32_t i = 0; ok && i < p->count - 1; i++) {
            p->threads[i].pool = p;
            p->threads[i].index = i + 1;
            if (pthread_create(&p->threads[i].id, NULL, worker_main, &p->threads[i]) != 0) {
                stop_threads(p);
                pthread_cond_destroy(&p->finished);
                pthread_cond_destroy(&p->wake);
                pthread_mutex_destroy(&p->mu);
                ok = false;
                break;
            }
            p->started++;
        }
        if (!ok) {
            // No threads (a sandbox, a process limit): the same results, serially.
            free(p->threads);
            p->threads = NULL;
            p->count = 1;
        }
    }
#else
    p->count = 1;
#endif
    return p;
}

ls_workers *ls_workers_create_tasks_(uint32_t count, ls_enqueue_task_fn *enqueue,
                                     ls_finish_task_fn *finish, void *context)
{
    struct ls_workers *p = pool_alloc(count);
    if (p) {
        p->enqueue = enqueue;
        p->finish = finish;
        p->task_context = context;
    }
    return p;
}

void ls_workers_destroy_(ls_workers *p)
{
    if (!p) {
        return;
    }
#if LS_WORKERS_THREADS
    if (p->threads) {
        stop_threads(p);
        pthread_cond_destroy(&p->finished);
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
        free(p->threads);
    }
#endif
    free(p);
}

void ls_workers_hot_(ls_workers *p, bool hot)
{
#if LS_WORKERS_THREADS
    if (!p || p->started == 0) {
        return;
    }
    atomic_store(&p->hot, hot);
    if (hot) {
        atomic_fetch_add(&p->heat, 1);
        if (atomic_load(&p->sleepers)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->wake);
            pthread_mutex_unlock(&p->mu);
        }
    }
#else
    (void)p;
    (void)hot;
#endif
}

uint32_t ls_workers_count_(const ls_workers *p)
{
    return p ? p->count : 1;
}

uint32_t ls_workers_block_size_(const ls_workers *p, uint32_t n, uint32_t min_block)
{
    return block_size(ls_workers_count_(p), n, min_block);
}

// A game's task over blocks [start, end) of the loop in task_data.
static void task_blocks(uint32_t start, uint32_t end, uint32_t worker, void *task_data)
{
    const ls_job *j = task_data;
    for (uint32_t k = start; k < end; k++) {
        run_block(j, k, worker);
    }
}

void ls_workers_for_(ls_workers *p, uint32_t n, uint32_t min_block, ls_workers_fn *fn, void *ctx)
{
    if (n == 0) {
        return;
    }
    uint32_t size = ls_workers_block_size_(p, n, min_block);
    uint32_t blocks = n / size + (n % size != 0);
    if (blocks <= 1) {
        fn(ctx, 0, n, 0);
        return;
    }
    p->job = (ls_job){fn, ctx, n, size};
    if (p->enqueue) {
        void *task = p->enqueue(task_blocks, blocks, 1, &p->job, p->task_context);
        if (task) {
            p->finish(task, p->task_context);
        }
        return;
    }
#if LS_WORKERS_THREADS
    run_threaded(p, blocks);
#endif
}
