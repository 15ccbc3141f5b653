// SPDX-License-Identifier: MIT
/// @file
/// World queries: filtered ray casts, shape casts (a sphere, box, capsule or
/// hull swept along a line) and shape overlap tests against every shape kind,
/// meshes included. ls_world_ray_cast and ls_world_query_aabb (ls/world.h)
/// share their machinery. All are accelerated by a bounding-volume hierarchy
/// that the first query after a change rebuilds (SPEC.md §22 has
/// the rules); results never depend on it: the same world gives the same bits
/// on every platform, and ties go to the lower shape slot index.
///
/// Threads: queries take a const world but may rebuild its query tree, so two
/// threads must not query the same world at once, nor query it while it steps.
/// Different worlds are independent. Queries never allocate.
#ifndef LS_QUERY_H
#define LS_QUERY_H

#include "ls/world.h"

LS_EXTERN_C_BEGIN

/// Which shapes a query sees: a shape is tested when (shape.category & mask)
/// and (category & shape.mask) are both non-zero and its body is not `ignore`.
typedef struct ls_query_filter {
    uint32_t category; ///< Category bits of the query, tested against each shape's mask.
    uint32_t mask;     ///< Shape categories the query accepts.
    ls_body_id ignore; ///< A body to skip (null or stale: skip nothing).
} ls_query_filter;

/// The filter that sees every shape whose category and mask are non-zero:
/// category UINT32_MAX, mask UINT32_MAX, ignore null.
LS_API ls_query_filter ls_default_query_filter(void);

/// Closest hit of the segment from `from` to `to` among the shapes the filter
/// accepts (NULL: ls_default_query_filter()), as ls_world_ray_cast: fraction
/// 0..1, hit point, outward normal of the shape; ties go to the lower shape
/// slot. False (hit untouched) when nothing is hit.
LS_API bool ls_world_ray_cast_filtered(const ls_world *w, ls_vec3 from, ls_vec3 to,
                                       const ls_query_filter *filter, ls_ray_hit *hit);

/// Sweep a sphere, box, capsule or hull (shape->type; a hull through
/// shape->hull, which stays the caller's) placed as on a body at
/// position/orientation (shape->local_position/local_orientation apply) along
/// `translation`, and report the first shape it touches: fraction of the
/// translation, point on the hit shape's surface and that surface's unit
/// normal (pointing at the swept shape), body and shape; ties go to the lower
/// shape slot. The fraction stops at most 1/2048 m short of contact, never
/// past it (planes: at contact, rounded down). A
/// shape already touching or overlapping at the start is hit at fraction 0,
/// whatever the direction, with the normal of the shortest way out of it.
/// Mesh triangles are hit from their front side only (except at fraction 0).
/// False when nothing is hit, and for a plane or mesh shape, an invalid one
/// (sizes outside SPEC.md §5, no hull) or a start or end beyond +-2048 m.
LS_API bool ls_world_shape_cast(const ls_world *w, const ls_shape_def *shape, ls_vec3 position,
                                ls_quat orientation, ls_vec3 translation,
                                const ls_query_filter *filter, ls_ray_hit *hit);

/// Shapes the filter accepts (NULL: default) that overlap or touch a sphere,
/// box, capsule or hull placed as in ls_world_shape_cast: a mesh when any
/// triangle does, from either side. Writes the first max_out ids in shape slot
/// order and returns the total count (0 for a plane, mesh or invalid shape).
LS_API uint32_t ls_world_overlap_shape(const ls_world *w, const ls_shape_def *shape,
                                       ls_vec3 position, ls_quat orientation,
                                       const ls_query_filter *filter, ls_shape_id *out,
                                       uint32_t max_out);

LS_EXTERN_C_END

#endif
