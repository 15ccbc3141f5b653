// SPDX-License-Identifier: MIT
/// @file
/// Convex hulls: immutable shape data built once (from a point cloud or from
/// vertices and faces) and used by any number of shapes. A body that uses a
/// hull copies it into its world, so the caller may destroy its own at once.
/// Construction is exact integer arithmetic: the same hull on every target
/// (SPEC.md §20).
#ifndef LS_HULL_H
#define LS_HULL_H

#include "ls/vec3.h"

LS_EXTERN_C_BEGIN

/// Most vertices a hull may have.
#define LS_HULL_MAX_VERTICES 64
/// Most faces a hull may have (a closed convex polyhedron with V vertices has at most 2V - 4).
#define LS_HULL_MAX_FACES (2 * LS_HULL_MAX_VERTICES - 4)
/// Most edges a hull may have (3V - 6).
#define LS_HULL_MAX_EDGES (3 * LS_HULL_MAX_VERTICES - 6)

/// Opaque immutable convex hull.
typedef struct ls_hull ls_hull;

/// The convex hull of a point cloud (duplicates and interior, coplanar or
/// collinear points are dropped). Fails with a clear error for fewer than 4
/// non-coplanar points, a coordinate outside +-64 m, more than 256 input points,
/// or a hull of more than LS_HULL_MAX_VERTICES vertices. Free with ls_hull_destroy.
LS_API ls_hull *ls_hull_create(const ls_vec3 *points, uint32_t count, ls_error *err);
/// A hull given as vertices and faces: face f lists face_sizes[f] vertex
/// indices (counter-clockwise seen from outside) from `indices`, consecutively.
/// Validated: closed, convex, non-degenerate, every vertex used; otherwise NULL
/// and *err names the face or vertex.
LS_API ls_hull *ls_hull_create_from_faces(const ls_vec3 *vertices, uint32_t vertex_count,
                                          const uint32_t *face_sizes, uint32_t face_count,
                                          const uint32_t *indices, ls_error *err);
/// Free a hull (NULL is a no-op). Shapes already created keep their world's copy.
LS_API void ls_hull_destroy(ls_hull *hull);
/// Number of vertices.
LS_API uint32_t ls_hull_vertex_count(const ls_hull *hull);
/// Vertex i (< vertex count), in the shape's local frame.
LS_API ls_vec3 ls_hull_vertex(const ls_hull *hull, uint32_t i);
/// Number of faces.
LS_API uint32_t ls_hull_face_count(const ls_hull *hull);
/// Face f: writes up to max vertex indices (counter-clockwise from outside)
/// and returns the face's vertex count.
LS_API uint32_t ls_hull_face_vertices(const ls_hull *hull, uint32_t f, uint32_t *indices,
                                      uint32_t max);

LS_EXTERN_C_END

#endif
