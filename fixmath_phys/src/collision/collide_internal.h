// SPDX-License-Identifier: MIT
// Private helpers shared by the narrow-phase files: per-pair routines (shapes
// already ordered by kind), manifold building and segment geometry.
#ifndef LS_COLLIDE_INTERNAL_H
#define LS_COLLIDE_INTERNAL_H

#include "collide.h"

/// sin^2 of the angle (Q32.32) below which two directions count as parallel:
/// 2^-10, about 1.8 degrees. Below it cross products are too short to normalise.
#define LS_COLLIDE_PARALLEL_Q32 ((int64_t)1 << 22)

/// A segment c + s*u for s in [-h, h]; u is a unit vector.
typedef struct ls_segment {
    ls_vec3 c; ///< Centre.
    ls_vec3 u; ///< Unit direction.
    ls_fx h;   ///< Half length (>= 0).
} ls_segment;

/// World position of a shape's centre: xf.p + xf.r * offset.
static inline ls_vec3 ls_geom_center(const ls_geom *g, const ls_xform *xf)
{
    // Most shapes sit at their body's origin: r * 0 is 0 and p + 0 is p.
    if ((g->offset.x | g->offset.y | g->offset.z) == 0) {
        return xf->p;
    }
    return ls_vec3_add(xf->p, ls_mat3_mul_vec(xf->r, g->offset));
}

/// World core segment of a capsule (local +Y axis through its centre).
static inline ls_segment ls_capsule_segment(const ls_geom *g, const ls_xform *xf)
{
    ls_segment s = {ls_geom_center(g, xf), ls_mat3_col(xf->r, 1), g->half_height};
    return s;
}

/// The point at parameter s of segment g.
static inline ls_vec3 ls_segment_at(const ls_segment *g, ls_fx s)
{
    return ls_vec3_add(g->c, ls_vec3_scale(g->u, s));
}

/// Parameter of the point of segment g closest to p (a clamped projection).
static inline ls_fx ls_segment_project(const ls_segment *g, ls_vec3 p)
{
    return ls_fx_clamp(ls_vec3_dot(g->u, ls_vec3_sub(p, g->c)), ls_fx_neg(g->h), g->h);
}

/// Midpoint of a and b per component, exact in 64 bits then floored.
static inline ls_vec3 ls_vec3_mid(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make((ls_fx)(((int64_t)a.x + b.x) >> 1), (ls_fx)(((int64_t)a.y + b.y) >> 1),
                        (ls_fx)(((int64_t)a.z + b.z) >> 1));
}

/// True when |v| < limit (limit >= 0), decided exactly in 64 bits.
static inline bool ls_vec3_shorter_than(ls_vec3 v, ls_fx limit)
{
    uint64_t l = (uint64_t)ls_fx_max(limit, 0);
    return ls_vec3_len_sq_q32(v) < l * l;
}

/// Component k (0 = x, 1 = y, 2 = z) of v.
static inline ls_fx ls_vec3_comp(ls_vec3 v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : v.z;
}

/// v with component k replaced by s.
static inline ls_vec3 ls_vec3_with(ls_vec3 v, int k, ls_fx s)
{
    if (k == 0) {
        v.x = s;
    } else if (k == 1) {
        v.y = s;
    } else {
        v.z = s;
    }
    return v;
}

/// Append one contact to m; ignored once the manifold is full.
static inline void ls_manifold_push(ls_manifold *m, ls_vec3 point, ls_fx depth, uint32_t feature)
{
    if (m->count < LS_MANIFOLD_MAX) {
        ls_contact_point *c = &m->points[m->count++];
        c->point = point;
        c->depth = depth;
        c->feature = feature;
    }
}

/// Product of two wide Q16.16 values held in int64 (caller keeps |a * b| < 2^62).
static inline int64_t ls_wide_mul(int64_t a, int64_t b)
{
    return ls_fx_round_q32(a * b);
}

/// Wide Q16.16 value times the rational n/d (rounded half up).
static inline int64_t ls_wide_frac(int64_t a, int64_t n, int64_t d)
{
    return (a * n + d / 2) / d;
}

/// Ray o + t d (t in [0, 1]) against a sphere of radius r at the origin; false
/// when it misses or starts inside.
bool ls_ray_sphere_(ls_vec3 o, ls_vec3 d, ls_fx r, ls_fx *t_hit);

/// A candidate contact point of a pair routine, before reduction.
typedef struct ls_contact_cand {
    ls_vec3 p;        ///< World contact point.
    ls_fx depth;      ///< Penetration depth.
    uint32_t feature; ///< Feature id.
} ls_contact_cand;

/// Append to m (whose normal is set) at most LS_MANIFOLD_MAX of the n
/// candidates: all when they fit, else the deepest, the farthest from it, the
/// widest triangle's third point and the point that grows it most, in
/// candidate order (manifold.c).
void ls_manifold_reduce_(const ls_contact_cand *c, int n, ls_manifold *m);

/// Parameters s on a and t on b of the closest points between two segments.
/// Returns true when the segments are nearly parallel; s is then the middle of
/// their overlap along a (or the nearer end of a when they do not overlap).
bool ls_segment_closest_(const ls_segment *a, const ls_segment *b, ls_fx *s, ls_fx *t);

/// Overlap [lo, hi] along a's parameter of b projected onto a's line (for
/// nearly parallel segments). Returns false when the projections are disjoint.
bool ls_segment_overlap_(const ls_segment *a, const ls_segment *b, ls_fx *lo, ls_fx *hi);

/// Sphere a against sphere b.
ls_manifold_fn ls_collide_sphere_sphere_;
/// Sphere a against box b.
ls_manifold_fn ls_collide_sphere_box_;
/// Sphere a against capsule b.
ls_manifold_fn ls_collide_sphere_capsule_;
/// Sphere a against plane b.
ls_manifold_fn ls_collide_sphere_plane_;
/// Box a against box b (SAT over 15 axes, face clipping or edge-edge).
ls_manifold_fn ls_collide_box_box_;
/// Box a against capsule b.
ls_manifold_fn ls_collide_box_capsule_;
/// Box a against plane b.
ls_manifold_fn ls_collide_box_plane_;
/// Capsule a against capsule b.
ls_manifold_fn ls_collide_capsule_capsule_;
/// Capsule a against plane b.
ls_manifold_fn ls_collide_capsule_plane_;

#endif
