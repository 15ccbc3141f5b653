// SPDX-License-Identifier: MIT
// The shape registry. A shape kind is one entry: its scene keyword, range
// check, mass properties, bounding box, ray cast and its row of the collide
// table; a kind made of children (a mesh's triangles) also lists and collides
// its children. The narrow phase, queries, bodies, snapshots and scenes go
// through this table only, so adding a kind is one file and one table line in
// shape_kind.c, never an edit of counts elsewhere.
#ifndef LS_COLLISION_SHAPE_KIND_H
#define LS_COLLISION_SHAPE_KIND_H

#include "geom.h"
#include "gjk.h"

/// Manifold routine: shape a (kind of the row) against shape b (kind of the column).
typedef ls_manifold_fn *ls_collide_fn;

/// Mass properties of one shape of uniform density, held in int64 so the
/// range check sees values past Q16.16: mass (kg, wide Q16.16, rounded once
/// from its exact value), centre of mass in the shape's frame, inertia about
/// the centre of mass in the shape's frame (xx, yy, zz, xy, xz, yz; kg m^2,
/// Q32.32: a 1/1024 kg m^2 moment keeps 22 bits, SPEC.md §5.1).
typedef struct ls_shape_mass {
    int64_t mass;
    ls_vec3 center;
    int64_t inertia[6]; ///< Q32.32
} ls_shape_mass;

/// One shape kind.
typedef struct ls_shape_kind {
    const char *name; ///< scene keyword
    bool static_only; ///< only static bodies may carry it (plane, mesh)
    bool needs_data;  ///< uses the world's geometry table (hull, mesh)
    /// Round surface (sphere, capsule): a core (a point, a segment) swept by
    /// `radius`; a contact point slides over the surface as the body turns.
    bool round;
    /// Creation and snapshot ranges; fills err (may be NULL) naming the field.
    bool (*check)(const ls_geom *g, ls_error *err);
    /// Mass properties at this density; false when out of range (NULL: massless
    /// kind): out->mass is then 0 for a bad volume, else the shape's mass
    /// above LS_SHAPE_MASS_MAX_RAW.
    bool (*mass)(const ls_geom *g, ls_fx density, ls_shape_mass *out);
    /// Half the thinnest width of a dynamic shape (continuous collision
    /// treats a body as fast when it moves farther than this in a step).
    ls_fx (*thickness)(const ls_geom *g);
    /// The convex proxy (points in the shape's frame + radius) GJK, EPA and
    /// shape casts work on (gjk.h); NULL for kinds that are not convex.
    ls_proxy (*proxy)(const ls_geom *g, ls_vec3 storage[8]);
    /// Round kinds: the point of the core closest to world point p (the shape
    /// on xf). Contacts and the solver move a round shape's contact point with
    /// this core point, which turns with the body, while the radius part
    /// along the normal does not (SPEC.md §11 stage 3).
    ls_vec3 (*core)(const ls_geom *g, const ls_xform *xf, ls_vec3 p);
    /// World AABB on transform xf grown by margin.
    ls_aabb (*aabb)(const ls_geom *g, const ls_xform *xf, ls_fx margin);
    /// Segment from -> to against the shape on xf: fraction and outward normal.
    bool (*ray_cast)(const ls_geom *g, const ls_xform *xf, ls_vec3 from, ls_vec3 to,
                     ls_fx *fraction, ls_vec3 *normal);
    /// This kind (as a) against each kind (as b); NULL where the pair is
    /// handled by the other kind's row (swapped) or never collides.
    ls_collide_fn collide[LS_SHAPE_KIND_COUNT];
    /// Kinds made of children: children whose boxes overlap a box in the
    /// shape's local frame, ascending; returns the total (writes <= max).
    uint32_t (*children)(const ls_geom *g, ls_aabb local_box, uint32_t *out, uint32_t max);
    /// Kinds made of children: child `child` (as a) against convex shape b.
    int (*collide_child)(const ls_geom *g, uint32_t child, const ls_xform *xg, const ls_geom *b,
                         const ls_xform *xb, ls_fx margin, ls_manifold *m);
} ls_shape_kind;

/// The kinds, indexed by ls_shape_type (shape_kind.c: the one place that lists them).
extern const ls_shape_kind *const ls_shape_kinds_[LS_SHAPE_KIND_COUNT];

/// The entry of a kind, or NULL for a code that names none. Inline: the
/// narrow phase and the contact prepare ask it for every pair every tick.
static inline const ls_shape_kind *ls_shape_kind_of(ls_shape_type t)
{
    return (unsigned)t < LS_SHAPE_KIND_COUNT ? ls_shape_kinds_[t] : NULL;
}
/// The kind whose scene keyword is `name`, or LS_SHAPE_KIND_COUNT.
ls_shape_type ls_shape_kind_named_(const char *name);

/// Registry entries (one file each).
extern const ls_shape_kind ls_sphere_kind_;
extern const ls_shape_kind ls_box_kind_;
extern const ls_shape_kind ls_capsule_kind_;
extern const ls_shape_kind ls_plane_kind_;
extern const ls_shape_kind ls_hull_kind_;
extern const ls_shape_kind ls_mesh_kind_;

/// For check routines: fill err naming `field`, with the value when one is
/// given (has_value), and return false.
bool ls_shape_refuse_(ls_error *err, const char *field, const char *what, bool has_value,
                      ls_fx value);

/// Sizes of spheres, boxes and capsules: 0.05..64 m.
#define LS_SHAPE_SIZE_MIN_RAW 3277
#define LS_SHAPE_SIZE_MAX_RAW (64 * 65536)
/// A body's mass limit, 1000 kg (SPEC.md §5), so no one shape may exceed it
/// either: the kinds refuse a heavier shape before forming its inertia, which
/// keeps unit inertia (<= 2^30 raw at 64 m) times mass (<= 2^26) below 2^62.
#define LS_SHAPE_MASS_MAX_RAW INT64_C(65536000)

#endif
