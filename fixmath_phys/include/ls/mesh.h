// SPDX-License-Identifier: MIT
/// @file
/// Static triangle meshes (terrain, level geometry): immutable data with a
/// bounding-volume hierarchy built deterministically. Only static bodies may
/// carry a mesh shape. A body that uses a mesh copies it into its world, so the
/// caller may destroy its own at once (SPEC.md §21).
#ifndef LS_MESH_H
#define LS_MESH_H

#include "ls/vec3.h"
#include <stddef.h>

LS_EXTERN_C_BEGIN

/// Most triangles a mesh may have.
#define LS_MESH_MAX_TRIANGLES (1u << 20)
/// Most vertices a mesh may have.
#define LS_MESH_MAX_VERTICES (1u << 20)

/// Opaque immutable triangle mesh.
typedef struct ls_mesh ls_mesh;

/// A mesh from vertices and triangles (3 indices each, counter-clockwise seen
/// from the solid side's outside: the face normal points out of the surface).
/// Refuses, naming the triangle or vertex: an index out of range, a
/// degenerate triangle, a coordinate or edge outside the ranges of SPEC.md §21,
/// too many triangles or vertices.
LS_API ls_mesh *ls_mesh_create(const ls_vec3 *vertices, uint32_t vertex_count,
                               const uint32_t *indices, uint32_t triangle_count, ls_error *err);
/// A mesh from Wavefront OBJ text (`v` and `f` lines; polygons are fanned into
/// triangles; other statements are ignored). Errors carry line:column.
LS_API ls_mesh *ls_mesh_create_obj(const char *text, size_t length, ls_error *err);
/// Free a mesh (NULL is a no-op).
LS_API void ls_mesh_destroy(ls_mesh *mesh);
/// Number of vertices.
LS_API uint32_t ls_mesh_vertex_count(const ls_mesh *mesh);
/// Vertex i (< vertex count), in the shape's local frame.
LS_API ls_vec3 ls_mesh_vertex(const ls_mesh *mesh, uint32_t i);
/// Number of triangles.
LS_API uint32_t ls_mesh_triangle_count(const ls_mesh *mesh);
/// The three vertex indices of triangle t (< triangle count).
LS_API void ls_mesh_triangle(const ls_mesh *mesh, uint32_t t, uint32_t out[3]);

LS_EXTERN_C_END

#endif
