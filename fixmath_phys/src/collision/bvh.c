// SPDX-License-Identifier: MIT
// The one BVH walk (bvh.h): a stack of node indices, depth first, the first
// child before the second.
#include "bvh.h"

// The walk itself, with the node test's context apart from the visitor's so
// that ls_bvh_query_ can pass its box. Both entry points inline it, each with
// a constant test, so the box test of ls_bvh_query_ costs no call.
static inline bool walk(const ls_bvh_node *nodes, uint32_t node_count, const uint32_t *order,
                        ls_bvh_test test, const void *test_ctx, ls_bvh_visit visit, void *ctx)
{
    uint32_t stack[LS_BVH_STACK];
    uint32_t sp = 0;
    if (node_count == 0) {
        return false;
    }
    stack[sp++] = 0;
    while (sp > 0) {
        const ls_bvh_node *nd = &nodes[stack[--sp]];
        if (!test(test_ctx, &nd->box)) {
            continue;
        }
        if (nd->count == 0) {
            // Pushed second, popped first: the first child is walked first.
            LS_ASSERT(sp + 2 <= LS_BVH_STACK);
            stack[sp++] = nd->first + 1;
            stack[sp++] = nd->first;
            continue;
        }
        for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
            if (visit(ctx, order[i])) {
                return true;
            }
        }
    }
    return false;
}

bool ls_bvh_walk_(const ls_bvh_node *nodes, uint32_t node_count, const uint32_t *order,
                  ls_bvh_test test, ls_bvh_visit visit, void *ctx)
{
    return walk(nodes, node_count, order, test, ctx, visit, ctx);
}

static bool overlaps_box(const void *box, const ls_aabb *node_box)
{
    return ls_aabb_overlap(node_box, box);
}

bool ls_bvh_query_(const ls_bvh_node *nodes, uint32_t node_count, const uint32_t *order,
                   const ls_aabb *box, ls_bvh_visit visit, void *ctx)
{
    return walk(nodes, node_count, order, overlaps_box, box, visit, ctx);
}
