// SPDX-License-Identifier: MIT
// The one walk of a bounding-volume hierarchy: the world's query tree
// (query_tree.h) and every mesh's triangle tree (mesh.h) are arrays of
// ls_bvh_node, and every query over either goes through ls_bvh_walk_ or
// ls_bvh_query_ (the model is Box2D's b2DynamicTree_Query: the walk owns the
// stack, the caller owns the test and what happens at each item).
//
// Order is part of the contract. The walk is depth first from the root, the
// first child before the second, and a leaf's items in leaf order; callers
// that keep the first hits, or stop early, see the same items in the same
// order on every machine. A query that must visit nearer boxes first (the
// sweeps of query.c) keeps its own ordered walk.
#ifndef LS_COLLISION_BVH_H
#define LS_COLLISION_BVH_H

#include "geom.h"

/// Depth bound of the walk's stack: both trees split every node at the
/// median, which halves it, so the depth is at most 32 for any 32-bit item
/// count, and the stack never holds more than one node per level plus one.
#define LS_BVH_STACK 64

/// One node: a leaf when count > 0 (items order[first .. first + count)),
/// else an inner node whose children are nodes first and first + 1.
typedef struct ls_bvh_node {
    ls_aabb box; ///< bounds of everything below (what the tree's items promise)
    uint32_t first;
    uint32_t count;
} ls_bvh_node;

/// Whether the walk enters a node with this box (ctx: the caller's query).
/// It may read state that ls_bvh_visit changes (e.g. the best hit so far).
typedef bool (*ls_bvh_test)(const void *ctx, const ls_aabb *box);
/// Called for each item of every leaf the walk enters; true stops the walk.
typedef bool (*ls_bvh_visit)(void *ctx, uint32_t item);

/// Closed-interval overlap of two boxes.
static inline bool ls_aabb_overlap(const ls_aabb *a, const ls_aabb *b)
{
    return a->min.x <= b->max.x && b->min.x <= a->max.x && a->min.y <= b->max.y &&
           b->min.y <= a->max.y && a->min.z <= b->max.z && b->min.z <= a->max.z;
}

/// Walk nodes[0 .. node_count) from the root (node 0; nothing when
/// node_count is 0): visit(ctx, order[i]) for the items of each leaf whose box
/// passes test, in the order described above. Returns true when visit
/// stopped the walk. Allocates nothing.
bool ls_bvh_walk_(const ls_bvh_node *nodes, uint32_t node_count, const uint32_t *order,
                  ls_bvh_test test, ls_bvh_visit visit, void *ctx);

/// ls_bvh_walk_ with the test "the node's box overlaps box" (closed
/// intervals). Items are not tested: visit checks its own item's box.
bool ls_bvh_query_(const ls_bvh_node *nodes, uint32_t node_count, const uint32_t *order,
                   const ls_aabb *box, ls_bvh_visit visit, void *ctx);

#endif
