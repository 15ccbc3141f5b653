// SPDX-License-Identifier: MIT
// Private geometry types shared by the narrow phase, broad phase and world:
// shape geometry in body-local space, rigid transforms, AABBs and contact
// manifolds. Units: metres; all values Q16.16.
#ifndef LS_SHAPE_H
#define LS_SHAPE_H

#include "ls/mat3.h"
#include "ls/world.h"

struct ls_hull;
struct ls_mesh;

/// Shape geometry in the body's local frame. `kind` is the one shape enum,
/// ls_shape_type (public, ls/world.h). Planes are static half-spaces
/// {x : dot(n, x) <= d}.
typedef struct ls_geom {
    ls_shape_type kind;
    ls_vec3 offset;             ///< Local centre (sphere/box/capsule); plane: ignored.
    ls_fx radius;               ///< Sphere and capsule radius.
    ls_fx half_height;          ///< Capsule: half length of the core segment along local +Y.
    ls_vec3 half_extents;       ///< Box half extents along local X, Y, Z.
    ls_vec3 normal;             ///< Plane: outward unit normal (world frame; planes are static).
    ls_fx plane_d;              ///< Plane: offset, dot(normal, x) = plane_d on the surface.
    const struct ls_hull *hull; ///< Hull: immutable data, vertices in the shape's local frame.
    const struct ls_mesh *mesh; ///< Mesh: immutable data, vertices in the shape's local frame.
} ls_geom;

/// A rigid transform: world = p + r * local; r is the matrix of q.
typedef struct ls_xform {
    ls_vec3 p;
    ls_quat q;
    ls_mat3 r;
} ls_xform;

/// Axis-aligned bounding box.
typedef struct ls_aabb {
    ls_vec3 min;
    ls_vec3 max;
} ls_aabb;

#define LS_MANIFOLD_MAX 4

/// One contact point. `feature` identifies the pair of features that made it
/// (stable from tick to tick while the same features touch) for warm starting.
typedef struct ls_contact_point {
    ls_vec3 point; ///< World position, midway between the two surfaces.
    ls_fx depth;   ///< Penetration depth (> 0 overlapping; may be slightly negative
                   ///< within the speculative margin).
    uint32_t feature;
} ls_contact_point;

/// Contact manifold between shapes A and B.
typedef struct ls_manifold {
    ls_vec3 normal; ///< Unit normal pointing from A towards B.
    int count;      ///< 0..LS_MANIFOLD_MAX points.
    ls_contact_point points[LS_MANIFOLD_MAX];
} ls_manifold;

/// A manifold routine: shape a (on transform xa) against shape b (on xb),
/// points reported closer than `margin`, normal from a to b; returns m->count.
/// Every pair routine is declared with this type (`ls_manifold_fn
/// ls_collide_box_box_;`), and the shape kinds' collide table holds pointers to it.
typedef int ls_manifold_fn(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                           const ls_xform *xb, ls_fx margin, ls_manifold *m);

#endif
