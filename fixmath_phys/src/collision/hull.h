// SPDX-License-Identifier: MIT
// Private layout of a convex hull and the hull routines of the narrow phase.
// A hull is plain data (no pointers): copying it with memcpy is a valid copy,
// which is how a world takes its own copy.
#ifndef LS_COLLISION_HULL_H
#define LS_COLLISION_HULL_H

#include "geom.h"
#include "ls/hull.h"

/// One face: outward unit normal, plane offset (dot(normal, x) = d on the
/// face) and its vertex loop face_vertices[first .. first + count),
/// counter-clockwise seen from outside.
typedef struct ls_hull_face {
    ls_vec3 normal;
    ls_fx d;
    uint16_t first;
    uint16_t count;
} ls_hull_face;

/// An edge between vertices v[0] < v[1], shared by faces f[0] and f[1].
typedef struct ls_hull_edge {
    uint8_t v[2];
    uint8_t f[2];
} ls_hull_edge;

struct ls_hull {
    uint32_t vertex_count;
    uint32_t face_count;
    uint32_t edge_count;
    ls_vec3 vertices[LS_HULL_MAX_VERTICES]; ///< local frame, each coordinate within +-64 m
    ls_hull_face faces[LS_HULL_MAX_FACES];  ///< canonical order (SPEC.md §20)
    uint8_t face_vertices[2 * LS_HULL_MAX_EDGES];
    ls_hull_edge edges[LS_HULL_MAX_EDGES]; ///< canonical order: by (v[0], v[1])
    ls_vec3 centroid;                      ///< volume centroid, local frame
    ls_fx radius;                          ///< max distance of a vertex from the local origin
};

/// Mass properties of a hull of uniform density about the shape's local
/// origin: mass (kg), centre of mass, and the inertia tensor about the centre
/// of mass (symmetric: xx, yy, zz, xy, xz, yz, kg m^2), from exact 64-bit
/// sums over the faces' triangle fans, each rounded once: the mass in
/// Q16.16, the tensor in Q32.32. Returns false if the mass is out of the
/// Q16.16 range or a tensor entry beyond 2^62 (the caller reports it).
typedef struct ls_hull_mass {
    ls_fx mass;
    ls_vec3 center;
    int64_t ixx, iyy, izz, ixy, ixz, iyz; ///< Q32.32
} ls_hull_mass;
bool ls_hull_mass_props_(const ls_hull *h, ls_fx density, ls_hull_mass *out);

/// The 8-vertex, 6-face hull of a box of half extents `half` (used by the
/// hull-box routines).
void ls_hull_make_box_(ls_vec3 half, ls_hull *out);

/// World AABB of a hull under transform xf, grown by margin (min floored, max rounded up).
ls_aabb ls_hull_aabb_(const ls_hull *h, const ls_xform *xf, ls_fx margin);

/// Ray cast against a hull in world space: the segment from -> to. On a hit
/// writes the fraction (0..1) and the outward unit normal and returns true.
/// A start inside the hull is a hit at fraction 0 with normal -direction.
bool ls_hull_ray_cast_(const ls_hull *h, const ls_xform *xf, ls_vec3 from, ls_vec3 to,
                       ls_fx *fraction, ls_vec3 *normal);

/// Hull a against hull b; normal from a to b; same contract as ls_collide_.
ls_manifold_fn ls_collide_hull_hull_;
/// Sphere a against hull b.
ls_manifold_fn ls_collide_sphere_hull_;
/// Box a against hull b.
ls_manifold_fn ls_collide_box_hull_;
/// Capsule a against hull b.
ls_manifold_fn ls_collide_capsule_hull_;
/// Hull a against plane b.
ls_manifold_fn ls_collide_hull_plane_;

#endif
