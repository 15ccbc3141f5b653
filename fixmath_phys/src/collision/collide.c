// SPDX-License-Identifier: MIT
// Narrow-phase entry points: transforms, AABBs and the pair dispatch.
#include "collide.h"
#include "collide_internal.h"
#include <string.h>

ls_xform ls_xform_make(ls_vec3 p, ls_quat q)
{
    ls_xform xf = {p, q, ls_mat3_from_quat(q)};
    return xf;
}

/// Half extent along world axis i of a box rotated by r: sum_j |r_ij| h_j,
/// accumulated exactly and rounded once.
static ls_fx box_world_extent(ls_vec3 row, ls_vec3 h)
{
    int64_t s = (int64_t)ls_fx_abs(row.x) * h.x + (int64_t)ls_fx_abs(row.y) * h.y +
                (int64_t)ls_fx_abs(row.z) * h.z;
    return ls_fx_from_q32(s);
}

/// Half extents of a shape's world AABB before the margin.
static ls_vec3 geom_half_extents(const ls_geom *g, const ls_xform *xf)
{
    if (g->kind == LS_SHAPE_BOX) {
        return ls_vec3_make(box_world_extent(xf->r.row[0], g->half_extents),
                            box_world_extent(xf->r.row[1], g->half_extents),
                            box_world_extent(xf->r.row[2], g->half_extents));
    }
    ls_fx r = g->radius;
    if (g->kind == LS_SHAPE_CAPSULE) {
        // The core segment reaches |axis_i| * h along world axis i.
        ls_vec3 ax = ls_vec3_abs(ls_mat3_col(xf->r, 1));
        ls_vec3 e = ls_vec3_scale(ax, g->half_height);
        return ls_vec3_make(ls_fx_add(e.x, r), ls_fx_add(e.y, r), ls_fx_add(e.z, r));
    }
    return ls_vec3_make(r, r, r);
}

ls_aabb ls_geom_aabb(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    ls_aabb box;
    if (g->kind == LS_SHAPE_PLANE) {
        ls_fx big = LS_FX_MAX / 2;
        box.min = ls_vec3_make(-big, -big, -big);
        box.max = ls_vec3_make(big, big, big);
        return box;
    }
    ls_vec3 c = ls_geom_center(g, xf);
    ls_vec3 e = geom_half_extents(g, xf);
    e = ls_vec3_add(e, ls_vec3_make(margin, margin, margin));
    box.min = ls_vec3_sub(c, e);
    box.max = ls_vec3_add(c, e);
    return box;
}

/// Call the routine for a pair already ordered so that a->kind <= b->kind.
static int collide_ordered(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                           const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    switch (a->kind * 4 + b->kind) {
    case LS_SHAPE_SPHERE * 4 + LS_SHAPE_SPHERE:
        return ls_collide_sphere_sphere(a, xa, b, xb, margin, m);
    case LS_SHAPE_SPHERE * 4 + LS_SHAPE_BOX:
        return ls_collide_sphere_box(a, xa, b, xb, margin, m);
    case LS_SHAPE_SPHERE * 4 + LS_SHAPE_CAPSULE:
        return ls_collide_sphere_capsule(a, xa, b, xb, margin, m);
    case LS_SHAPE_SPHERE * 4 + LS_SHAPE_PLANE:
        return ls_collide_sphere_plane(a, xa, b, xb, margin, m);
    case LS_SHAPE_BOX * 4 + LS_SHAPE_BOX:
        return ls_collide_box_box(a, xa, b, xb, margin, m);
    case LS_SHAPE_BOX * 4 + LS_SHAPE_CAPSULE:
        return ls_collide_box_capsule(a, xa, b, xb, margin, m);
    case LS_SHAPE_BOX * 4 + LS_SHAPE_PLANE:
        return ls_collide_box_plane(a, xa, b, xb, margin, m);
    case LS_SHAPE_CAPSULE * 4 + LS_SHAPE_CAPSULE:
        return ls_collide_capsule_capsule(a, xa, b, xb, margin, m);
    case LS_SHAPE_CAPSULE * 4 + LS_SHAPE_PLANE:
        return ls_collide_capsule_plane(a, xa, b, xb, margin, m);
    default:
        return 0; // plane-plane (static half-spaces never collide) or unknown kinds
    }
}

int ls_collide(const ls_geom *a, const ls_xform *xa, const ls_geom *b, const ls_xform *xb,
               ls_fx margin, ls_manifold *m)
{
    memset(m, 0, sizeof *m);
    // Each routine handles kind(a) <= kind(b); the swapped pair has the same
    // midpoints, depths and features, only the normal's direction changes.
    bool swap = a->kind > b->kind;
    if (swap) {
        collide_ordered(b, xb, a, xa, margin, m);
        m->normal = ls_vec3_neg(m->normal);
    } else {
        collide_ordered(a, xa, b, xb, margin, m);
    }
    if (m->count == 0) {
        memset(m, 0, sizeof *m); // a routine may have set the normal before rejecting
    }
    return m->count;
}
