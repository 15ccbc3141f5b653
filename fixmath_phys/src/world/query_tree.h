// SPDX-License-Identifier: MIT
// The world's query tree: a bounding-volume hierarchy over the live shapes'
// AABBs that accelerates ray casts, shape casts, overlap and AABB queries
// (query.c). Rules: SPEC.md §22.
//
// It is a cache, never state: not saved in snapshots, not in the checksum,
// and no query result depends on its shape. Queries bring it up to date
// lazily (ls_query_tree_sync_): the first query after anything moved rebuilds
// it with a deterministic median split. Its memory is allocated with the
// world (ls_query_tree_create_); building and querying never allocate.
#ifndef LS_WORLD_QUERY_TREE_H
#define LS_WORLD_QUERY_TREE_H

#include "../collision/bvh.h"
#include "../collision/geom.h"
#include "ls/query.h"

/// Leaf boxes are the shapes' tight AABBs grown by this much (raw Q16.16:
/// 1/256 m), so that rounding in the per-kind tests never reaches outside a
/// shape's box (SPEC.md §22, "box rule").
#define LS_QUERY_MARGIN 256
/// Most shapes in one leaf of the tree.
#define LS_QUERY_LEAF_MAX 4
/// A shape whose AABB reaches beyond +-this (raw) on any axis is unbounded
/// (a plane): it is kept in a list tested by every query, not in the tree.
#define LS_QUERY_UNBOUNDED (LS_FX_MAX / 4)

/// One node (bvh.h): a leaf holds shapes order[first .. first + count); its
/// box is the union of the leaf boxes below.
typedef ls_bvh_node ls_query_node;

/// Debug check: when 1, every query also compares each body slot
/// (generation, alive, position, orientation) with what the tree saw and
/// rebuilds on a difference. Off: body.c invalidates the tree wherever a
/// pose or a shape changes (ls_body_update_derived_, free_shape_slot), the
/// step and restore invalidate it too, and tests/test_query.c moves, creates
/// and destroys bodies between queries to prove it.
#ifndef LS_QUERY_STAMPS
#define LS_QUERY_STAMPS 0
#endif

/// What the tree saw of one body slot when it was built (a change means rebuild).
typedef struct ls_query_stamp {
    uint32_t generation;
    uint32_t alive;
    ls_vec3 p;
    ls_quat q;
} ls_query_stamp;

/// The tree and the scratch of the queries (all sized at creation).
typedef struct ls_query_tree {
    uint32_t max_shapes, max_bodies;
    bool dirty;             ///< rebuild at the next query (set by the world)
    uint32_t body_high;     ///< w->body_high when built
    ls_query_stamp *stamps; ///< [max_bodies] body slots when built
    ls_aabb *tight;         ///< [max_shapes] tight AABB per shape slot (margin 0)
    ls_aabb *box;           ///< [max_shapes] leaf box: tight grown by LS_QUERY_MARGIN
    uint32_t *order;        ///< [max_shapes] bounded shapes, in leaf order
    uint32_t item_count;    ///< bounded shapes in the tree
    uint32_t *planes;       ///< [max_shapes] unbounded shapes, ascending slot
    uint32_t plane_count;
    ls_query_node *nodes; ///< [2 max_shapes], root first
    uint32_t node_count;
    uint32_t *scratch; ///< [max_shapes] results of one query
    uint32_t *mark;    ///< [max_bodies] body seen by the current AABB query (== epoch)
    uint32_t epoch;
} ls_query_tree;

/// A tree for these capacities, or NULL when out of memory.
ls_query_tree *ls_query_tree_create_(uint32_t max_shapes, uint32_t max_bodies);
/// Bytes ls_query_tree_create_ allocates.
size_t ls_query_tree_memory_size_(uint32_t max_shapes, uint32_t max_bodies);
/// Free a tree (NULL is a no-op).
void ls_query_tree_destroy_(ls_query_tree *t);
/// Make the next query rebuild the tree (the world calls it after a step or restore).
void ls_query_tree_invalidate_(ls_query_tree *t);
/// The world's tree, rebuilt first if the world changed since it was built:
/// the dirty flag is set, or a body slot was created, destroyed or moved
/// (compared with the stamps, which catches changes made between steps).
/// Mutates the tree behind a const world: one query at a time per world.
ls_query_tree *ls_query_tree_sync_(const ls_world *w);

/// Whether a box query keeps shape slot k (ctx: the query's own state).
typedef bool (*ls_query_keep)(void *ctx, uint32_t k);

/// The shapes a box query keeps, into out (room for every shape): first the
/// unbounded ones (ascending slot), then the tree's shapes whose leaf box
/// overlaps box, in the order of ls_bvh_walk_; each only when keep(ctx, k)
/// says so. Returns how many. Called on a synced tree (ls_query_tree_sync_).
uint32_t ls_query_tree_collect_(const ls_query_tree *t, const ls_aabb *box, ls_query_keep keep,
                                void *ctx, uint32_t *out);

/// A segment o + s d, s in [0, 1], carrying a box of extents lo (below o)
/// and hi (above o) along it: a shape's box is met when the carried box
/// overlaps it. Raw Q16.16 in 64 bits (exact; no saturation).
typedef struct ls_query_seg {
    int64_t o[3];
    int64_t d[3];
    int64_t lo[3]; ///< carried box below o (may be negative; lo + hi >= 0)
    int64_t hi[3]; ///< carried box above o
} ls_query_seg;

/// Does the carried box meet b for some s in [0, 1] (closed intervals)? On
/// true, *enter is the first such s in Q16.16, rounded down. Exact for
/// segments shorter than 2^31 raw per axis; longer ones pass a little more
/// (fractions rounded outwards). Monotone: a box that contains b passes
/// whenever b does, with *enter no larger.
bool ls_query_seg_box_(const ls_query_seg *s, const ls_aabb *b, int32_t *enter);

/// Tight AABB (margin 0) of a live shape and its leaf box (grown by
/// LS_QUERY_MARGIN); false when the shape is unbounded (a plane).
bool ls_query_shape_boxes_(const ls_geom *g, const ls_xform *xf, ls_aabb *tight, ls_aabb *leaf);

/// Sort n shape or body indices ascending (heap sort, in place).
void ls_query_sort_u32_(uint32_t *v, uint32_t n);

// Testing aids: the same queries with `brute` true skip the tree and test
// every shape in slot order with the same per-shape rules. Results must be
// identical (tests/test_query.c proves it on random worlds).

/// ls_world_ray_cast_filtered; filter NULL = no filter at all (ls_world_ray_cast).
bool ls_world_ray_cast_ex_(const ls_world *w, ls_vec3 from, ls_vec3 to,
                           const ls_query_filter *filter, ls_ray_hit *hit, bool brute);
/// ls_world_shape_cast.
bool ls_world_shape_cast_ex_(const ls_world *w, const ls_shape_def *shape, ls_vec3 position,
                             ls_quat orientation, ls_vec3 translation,
                             const ls_query_filter *filter, ls_ray_hit *hit, bool brute);
/// ls_world_overlap_shape.
uint32_t ls_world_overlap_shape_ex_(const ls_world *w, const ls_shape_def *shape, ls_vec3 position,
                                    ls_quat orientation, const ls_query_filter *filter,
                                    ls_shape_id *out, uint32_t max_out, bool brute);
/// ls_world_query_aabb.
uint32_t ls_world_query_aabb_ex_(const ls_world *w, ls_vec3 min, ls_vec3 max, ls_body_id *out,
                                 uint32_t max_out, bool brute);

#endif
