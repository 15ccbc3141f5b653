// SPDX-License-Identifier: MIT
// A small worker pool for the step's parallel loops (workers.c). A loop over
// [0, n) is cut into blocks that depend only on n, min_block and the worker
// count; the simulation only parallelises loops whose items write disjoint
// data, so the results are the same bits for any number of workers.
//
// Which worker runs which block is NOT deterministic (blocks are claimed by
// whoever is free): use `worker` only to pick per-worker scratch, never to
// decide a result; a reduction must be kept per item or per block (the block
// of item i is i / ls_workers_block_size_).
#ifndef LS_WORKERS_H
#define LS_WORKERS_H

#include "ls/world.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ls_workers ls_workers;

/// Most workers of one pool (ls_world_def.worker_count is 1..this).
#define LS_WORKERS_MAX 64
/// Blocks per worker a large loop is cut into (for balance).
#define LS_WORKERS_BLOCKS_PER_WORKER 4

/// One block of a parallel loop: items [begin, end) on worker `worker`.
typedef void ls_workers_fn(void *ctx, uint32_t begin, uint32_t end, uint32_t worker);

/// A pool of `count` workers (1 = everything on the calling thread; the
/// calling thread is always worker 0). When threads cannot be started (or the
/// build has none: wasm32-wasi, LS_NO_THREADS) the pool runs serially and
/// reports 1 worker. NULL only when out of memory.
ls_workers *ls_workers_create_(uint32_t count);
/// A pool whose loops run on a game's task system (enqueue and finish both
/// set) as `count` workers; no thread of its own. NULL when out of memory.
ls_workers *ls_workers_create_tasks_(uint32_t count, ls_enqueue_task_fn *enqueue,
                                     ls_finish_task_fn *finish, void *context);
/// Bytes a pool of `count` workers allocates (threads or a game's `tasks`);
/// 0 for 1 worker (the world then has no pool).
size_t ls_workers_memory_size_(uint32_t count, bool tasks);
/// Stop the threads and free the pool (NULL is fine).
void ls_workers_destroy_(ls_workers *p);
/// Between hot = true and hot = false (a step), idle workers wait by
/// yielding rather than sleeping, and turning hot wakes the sleeping ones
/// (workers.c, "Hot"). No-op for NULL, one worker or a game's tasks.
void ls_workers_hot_(ls_workers *p, bool hot);
/// Workers in the pool (1 for NULL).
uint32_t ls_workers_count_(const ls_workers *p);
/// Items per block of a loop of n items with this min_block on this pool:
/// max(min_block, ceil(n / (count * LS_WORKERS_BLOCKS_PER_WORKER))); n (one
/// block) for one worker or NULL.
uint32_t ls_workers_block_size_(const ls_workers *p, uint32_t n, uint32_t min_block);
/// Run fn over [0, n) and return when every block is done. Blocks hold at
/// least min_block items, so small loops stay on the calling thread (one call
/// fn(ctx, 0, n, 0)). Not reentrant: fn must not call it on the same pool.
void ls_workers_for_(ls_workers *p, uint32_t n, uint32_t min_block, ls_workers_fn *fn, void *ctx);

#endif
