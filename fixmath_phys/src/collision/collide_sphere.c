// SPDX-License-Identifier: MIT
// Narrow phase for pairs whose first shape is a sphere.
#include "collide_internal.h"

/// Deterministic normal for coincident centres, which have no direction.
static ls_vec3 up(void)
{
    return ls_vec3_make(0, LS_FX_ONE, 0);
}

/// Two spheres (centre, radius): one point at most. Shared with sphere-capsule.
static int sphere_pair(ls_vec3 ca, ls_fx ra, ls_vec3 cb, ls_fx rb, ls_fx margin, ls_manifold *m)
{
    ls_vec3 d = ls_vec3_sub(cb, ca);
    ls_fx rsum = ls_fx_add(ra, rb);
    // depth > -margin  <=>  |d| < ra + rb + margin, decided exactly in 64 bits.
    if (!ls_vec3_shorter_than(d, ls_fx_add(rsum, margin))) {
        return 0;
    }
    m->normal = ls_vec3_normalize(d, up());
    ls_vec3 pa = ls_vec3_mad(ca, m->normal, ra);
    ls_vec3 pb = ls_vec3_mad(cb, m->normal, ls_fx_neg(rb));
    ls_manifold_push(m, ls_vec3_mid(pa, pb), ls_fx_sub(rsum, ls_vec3_len(d)), 0);
    return m->count;
}

int ls_collide_sphere_sphere_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                              const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    return sphere_pair(ls_geom_center(a, xa), a->radius, ls_geom_center(b, xb), b->radius, margin,
                       m);
}

int ls_collide_sphere_capsule_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                               const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    ls_vec3 c = ls_geom_center(a, xa);
    ls_segment seg = ls_capsule_segment(b, xb);
    ls_vec3 p = ls_segment_at(&seg, ls_segment_project(&seg, c));
    return sphere_pair(c, a->radius, p, b->radius, margin, m);
}

int ls_collide_sphere_plane_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                             const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    (void)xb; // planes are static and given in world coordinates
    ls_vec3 c = ls_geom_center(a, xa);
    ls_vec3 n = b->normal;
    ls_fx s = ls_fx_sub(ls_vec3_dot(n, c), b->plane_d); // centre height above the surface
    ls_fx depth = ls_fx_sub(a->radius, s);
    if (depth <= ls_fx_neg(margin)) {
        return 0;
    }
    // The solid lies below the surface, so B is reached by going along -n.
    m->normal = ls_vec3_neg(n);
    // Surface points c - n*r and c - n*s; their midpoint is c - n*(r+s)/2.
    ls_fx half = (ls_fx)(((int64_t)a->radius + s) >> 1);
    ls_manifold_push(m, ls_vec3_mad(c, n, ls_fx_neg(half)), depth, 0);
    return m->count;
}

/// Index of the box face axis with the least penetration for an interior
/// point p (ties go to the lowest axis).
static int shallowest_axis(ls_vec3 p, ls_vec3 h)
{
    int best = 0;
    ls_fx best_pen = LS_FX_MAX;
    for (int k = 0; k < 3; k++) {
        ls_fx pen = ls_fx_sub(ls_vec3_comp(h, k), ls_fx_abs(ls_vec3_comp(p, k)));
        if (pen < best_pen) {
            best_pen = pen;
            best = k;
        }
    }
    return best;
}

int ls_collide_sphere_box_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                           const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    ls_vec3 c = ls_geom_center(a, xa);
    ls_vec3 cb = ls_geom_center(b, xb);
    ls_vec3 h = b->half_extents;
    ls_fx r = a->radius;
    // In the box frame the box is an AABB centred at the origin.
    ls_vec3 local = ls_mat3_mul_tvec(xb->r, ls_vec3_sub(c, cb));
    ls_vec3 q = ls_vec3_min(ls_vec3_max(local, ls_vec3_neg(h)), h);
    ls_vec3 nl;
    ls_fx depth;
    if (!ls_vec3_equal(q, local)) {
        ls_vec3 d = ls_vec3_sub(q, local); // sphere centre -> closest box point: A to B
        if (!ls_vec3_shorter_than(d, ls_fx_add(r, margin))) {
            return 0;
        }
        nl = ls_vec3_normalize(d, up());
        depth = ls_fx_sub(r, ls_vec3_len(d));
    } else {
        // Centre inside: leave through the nearest face; the box then lies on
        // the opposite side, so the normal is minus that face's outward normal.
        int k = shallowest_axis(local, h);
        ls_fx hk = ls_vec3_comp(h, k);
        ls_fx ck = ls_vec3_comp(local, k);
        ls_fx face = ck >= 0 ? hk : ls_fx_neg(hk);
        nl = ls_vec3_with(ls_vec3_zero(), k, ck >= 0 ? -LS_FX_ONE : LS_FX_ONE);
        depth = ls_fx_add(r, ls_fx_sub(hk, ls_fx_abs(ck)));
        q = ls_vec3_with(local, k, face);
    }
    m->normal = ls_vec3_normalize(ls_mat3_mul_vec(xb->r, nl), up());
    ls_vec3 pb = ls_vec3_add(cb, ls_mat3_mul_vec(xb->r, q));
    ls_vec3 pa = ls_vec3_mad(c, m->normal, r);
    ls_manifold_push(m, ls_vec3_mid(pa, pb), depth, 0);
    return m->count;
}
