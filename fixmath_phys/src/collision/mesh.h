// SPDX-License-Identifier: MIT
// Private layout of a static triangle mesh and the mesh routines of the
// narrow phase, queries and ray casts (rules: SPEC.md §21).
//
// A mesh is one allocation: the header below followed by its arrays, which
// the header's pointers address. It is immutable after creation; a world
// keeps its own copy (ls_mesh_clone_).
#ifndef LS_COLLISION_MESH_H
#define LS_COLLISION_MESH_H

#include "bvh.h"
#include "geom.h"
#include "ls/mesh.h"

/// Coordinates of mesh vertices (local frame), like body positions: +-2048 m.
#define LS_MESH_COORD_MAX_RAW (2048 * 65536)
/// Longest triangle edge: 128 m (the cross product of two edges fits Q16.16).
#define LS_MESH_EDGE_MAX_RAW (128 * 65536)
/// Smallest twice-area |e1 x e2| of a triangle: 2^-10 m^2 (Q32.32 raw 2^22).
#define LS_MESH_AREA2_MIN_Q32 ((int64_t)1 << 22)
/// Most triangles per BVH leaf.
#define LS_MESH_LEAF_MAX 4
/// "No neighbour" in ls_mesh_tri.adj.
#define LS_MESH_NONE UINT32_MAX
/// cos(5 degrees) in Q2.30: a convex edge whose faces bend less is inactive.
#define LS_MESH_ACTIVE_COS_Q30 INT64_C(1069655912)
/// -cos(1 degree) in Q2.30: faces this close to back to back keep the edge active.
#define LS_MESH_BACK_COS_Q30 INT64_C(-1073578288)

/// One triangle. Edge e runs from v[e] to v[(e + 1) % 3]; vertex k lies
/// between edges (k + 2) % 3 and k.
typedef struct ls_mesh_tri {
    uint32_t v[3];   ///< vertex indices (counter-clockwise seen from the front)
    uint32_t adj[3]; ///< triangle across edge e, or LS_MESH_NONE
    int32_t n30[3];  ///< unit face normal, Q2.30
    ls_vec3 normal;  ///< unit face normal, Q16.16
    uint8_t active;  ///< bit e: edge e active; bit 3 + k: vertex k active
    uint8_t pad_[3];
} ls_mesh_tri;

/// A triangle's edges as the narrow phase reads them, derived once at
/// creation (mesh.c edges_of): why stored, a capsule or box resting on a
/// mesh tests the same few triangles every sub-step, and these are three
/// square roots and divisions per edge (a tenth of Box3D's rain).
typedef struct ls_mesh_edges {
    ls_vec3 u[3];        ///< unit direction of edge e
    ls_fx len[3];        ///< length of edge e
    int32_t out30[3][3]; ///< outward unit normal of edge e's side plane, Q2.30 (0: none)
} ls_mesh_edges;

/// One BVH node (bvh.h): a leaf holds triangles order[first .. first +
/// count); its box is the exact bounds of the node's triangles (local frame).
typedef ls_bvh_node ls_mesh_node;

struct ls_mesh {
    size_t size; ///< bytes of this allocation, header included
    uint32_t vertex_count;
    uint32_t triangle_count;
    uint32_t node_count;
    uint32_t pad_;
    ls_aabb bounds;       ///< local bounds of all vertices used by triangles
    ls_vec3 *vertices;    ///< [vertex_count]
    ls_mesh_tri *tris;    ///< [triangle_count]
    ls_mesh_node *nodes;  ///< [node_count], root first
    uint32_t *order;      ///< [triangle_count], triangle indices in leaf order
    ls_mesh_edges *edges; ///< [triangle_count], derived from vertices and tris
};

/// A copy in one allocation (NULL when out of memory). Free with ls_mesh_destroy.
ls_mesh *ls_mesh_clone_(const ls_mesh *m);
/// Bytes the mesh occupies (one allocation).
size_t ls_mesh_memory_size_(const ls_mesh *m);
/// Bounds of the vertices used by triangles, in the mesh's local frame.
ls_aabb ls_mesh_bounds_(const ls_mesh *m);
/// Mesh-local box enclosing the world box `world` for a mesh on transform xm
/// (conservative by 1 ulp per side).
ls_aabb ls_mesh_local_aabb_(const ls_xform *xm, ls_aabb world);
/// visit(ctx, tri) for each triangle whose local AABB overlaps local_box
/// (closed intervals), in the order of ls_bvh_walk_; stops when visit returns
/// true, and returns true then. Allocates nothing.
bool ls_mesh_walk_(const ls_mesh *m, ls_aabb local_box, ls_bvh_visit visit, void *ctx);
/// Triangles whose local AABB overlaps local_box (closed intervals), in
/// ascending triangle index. Writes at most max indices (the smallest ones)
/// and returns the total count. Allocates nothing.
uint32_t ls_mesh_query_(const ls_mesh *m, ls_aabb local_box, uint32_t *out, uint32_t max);
/// Contact manifold between triangle tri of mesh (on xm) and convex shape g
/// (on xg): sphere, box, capsule or hull. Same contract as ls_collide_ with the
/// triangle as shape a: normal from the triangle to g, points midway, depth
/// > -margin, feature ids unique within the manifold and stable while the
/// same features touch. One-sided, with the internal-edge rule of SPEC.md §21.
/// Returns m->count (m is cleared first).
int ls_collide_mesh_triangle_(const ls_mesh *mesh, uint32_t tri, const ls_xform *xm,
                              const ls_geom *g, const ls_xform *xg, ls_fx margin, ls_manifold *m);
/// Closest front-face hit of the world segment from -> to against the mesh on
/// xm: fraction in [0, 1], world unit face normal and triangle index; ties go
/// to the lower triangle index. False when nothing is hit.
bool ls_mesh_ray_cast_(const ls_mesh *m, const ls_xform *xm, ls_vec3 from, ls_vec3 to,
                       ls_fx *fraction, ls_vec3 *normal, uint32_t *tri);

/// ls_mesh_create with the index of the offending triangle (or vertex) on
/// failure: *bad_tri / *bad_vertex get it (UINT32_MAX when not concerned).
/// Used by the OBJ reader to name the line of a bad face.
ls_mesh *ls_mesh_create_ex_(const ls_vec3 *vertices, uint32_t vertex_count, const uint32_t *indices,
                            uint32_t triangle_count, uint32_t *bad_tri, uint32_t *bad_vertex,
                            ls_error *err);

#endif
