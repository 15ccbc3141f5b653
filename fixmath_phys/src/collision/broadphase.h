// SPDX-License-Identifier: MIT
// Broad phase: the set of proxy pairs whose AABBs overlap, in canonical order.
//
// Incremental sweep-and-prune on one axis, over fat boxes (broadphase.c). The
// result of ls_broadphase_pairs_ is a pure function of the current proxies
// (AABB, filter, static flag per id): it is exactly the brute-force pair set,
// sorted by (a, b). The endpoint order, fat boxes and fat pairs kept between
// calls only make the next call faster; they never change a result, so
// snapshots need not store them (restore = create + set every proxy).
//
// All memory is allocated by ls_broadphase_create_; no other call allocates.
#ifndef LS_BROADPHASE_H
#define LS_BROADPHASE_H

#include "geom.h"

/// A candidate pair of proxies, a < b.
typedef struct ls_pair {
    uint32_t a;
    uint32_t b;
} ls_pair;

/// Broad-phase object; created with a fixed capacity, never allocates afterwards.
typedef struct ls_broadphase ls_broadphase;

/// Largest max_proxies accepted by ls_broadphase_create_ (ids must fit in 31 bits).
#define LS_BROADPHASE_MAX_PROXIES 0x80000000u
/// Largest max_pairs accepted by ls_broadphase_create_.
#define LS_BROADPHASE_MAX_PAIRS 0x7FFFFFFFu

/// Most sweep segments (ls_broadphase_create_segmented_).
#define LS_BROADPHASE_MAX_SEGMENTS 4

/// New broad phase for ids in [0, max_proxies), keeping up to max_pairs pairs; NULL on bad size or
/// OOM.
ls_broadphase *ls_broadphase_create_(uint32_t max_proxies, uint32_t max_pairs);
/// The same with working lists for `segments` (1..LS_BROADPHASE_MAX_SEGMENTS)
/// pieces of a sweep that ls_broadphase_pairs_run_ may run at once.
ls_broadphase *ls_broadphase_create_segmented_(uint32_t max_proxies, uint32_t max_pairs,
                                               uint32_t segments);
/// Bytes ls_broadphase_create_ allocates for these capacities.
size_t ls_broadphase_memory_size_(uint32_t max_proxies, uint32_t max_pairs);
/// Bytes ls_broadphase_create_segmented_ allocates.
size_t ls_broadphase_memory_size_segmented_(uint32_t max_proxies, uint32_t max_pairs,
                                            uint32_t segments);
/// Free a broad phase; NULL is a no-op.
void ls_broadphase_destroy_(ls_broadphase *bp);
/// The max_proxies given at creation.
uint32_t ls_broadphase_capacity_(const ls_broadphase *bp);
/// Insert or update proxy `id` (< capacity); box.min <= box.max on every axis.
/// Proxies of the same group (the shapes of one body) never pair.
void ls_broadphase_set_(ls_broadphase *bp, uint32_t id, ls_aabb box, uint32_t category,
                        uint32_t mask, bool is_static, uint32_t group);
/// ls_broadphase_set_ in two parts, for callers that set many proxies on
/// several threads: set_proxy writes only proxy `id` (calls for distinct ids
/// may run at the same time) and returns true when the sweep's input changed;
/// then, on one thread, ls_broadphase_mark_(bp, high) with high above every
/// such id (ls_broadphase_set_ = set_proxy, then mark(id + 1) if it changed).
bool ls_broadphase_set_proxy_(ls_broadphase *bp, uint32_t id, ls_aabb box, uint32_t category,
                              uint32_t mask, bool is_static, uint32_t group);
/// See ls_broadphase_set_proxy_: proxies below `high` (<= capacity) changed.
void ls_broadphase_mark_(ls_broadphase *bp, uint32_t high);
/// Remove proxy `id`; a no-op if it is not present.
void ls_broadphase_remove_(ls_broadphase *bp, uint32_t id);
/// Remove every proxy.
void ls_broadphase_clear_(ls_broadphase *bp);
/// Whether proxy `id` is present.
bool ls_broadphase_contains_(const ls_broadphase *bp, uint32_t id);
/// Write the first min(total, max, max_pairs) pairs in (a, b) order to out; *overflowed (if
/// non-NULL) tells whether any pair was left out. Pairs: closed AABB overlap on all axes,
/// (cat_a & mask_b) && (cat_b & mask_a), not both static, not the same group. Returns the number
/// written.
uint32_t ls_broadphase_pairs_(ls_broadphase *bp, ls_pair *out, uint32_t max, bool *overflowed);

/// Runs task(arg, i) once for each i in [0, count), in any order and on any
/// threads, and returns when all have returned (the caller's workers).
typedef void ls_broadphase_task_fn(void *arg, uint32_t index);
typedef struct ls_broadphase_runner {
    void (*run)(void *ctx, uint32_t count, ls_broadphase_task_fn *task, void *arg);
    void *ctx;
} ls_broadphase_runner;

/// ls_broadphase_pairs_ with the sweep cut into the broad phase's segments,
/// run by `runner` (NULL: one after the other on this thread): the same
/// result (broadphase.c, "Segments").
uint32_t ls_broadphase_pairs_run_(ls_broadphase *bp, ls_pair *out, uint32_t max, bool *overflowed,
                                  const ls_broadphase_runner *runner);

#endif
