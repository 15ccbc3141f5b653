// SPDX-License-Identifier: MIT
// Plane shape kind: the static half-space dot(normal, x) <= plane_d (world frame).
#include "collide_internal.h"
#include "hull.h"
#include "shape_kind.h"

static bool plane_check(const ls_geom *g, ls_error *err)
{
    if (ls_vec3_equal(g->normal, ls_vec3_zero()) || ls_fx_abs(g->plane_d) > LS_FX_INT(2048)) {
        return ls_shape_refuse_(err, "shape.normal", "plane normal is zero or |plane_d| > 2048",
                                true, g->plane_d);
    }
    return true;
}

static ls_aabb plane_aabb(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    (void)g;
    (void)xf;
    (void)margin;
    ls_fx big = LS_FX_MAX / 2;
    ls_aabb box = {ls_vec3_make(-big, -big, -big), ls_vec3_make(big, big, big)};
    return box;
}

static bool plane_ray(const ls_geom *g, const ls_xform *xf, ls_vec3 from, ls_vec3 to, ls_fx *t,
                      ls_vec3 *n)
{
    (void)xf;
    ls_vec3 d = ls_vec3_sub(to, from);
    ls_fx denom = ls_vec3_dot(g->normal, d);
    ls_fx dist = ls_fx_sub(ls_vec3_dot(g->normal, from), g->plane_d);
    if (denom >= 0 || dist < 0) {
        return false;
    }
    *t = ls_fx_div(dist, ls_fx_neg(denom));
    *n = g->normal;
    return *t <= LS_FX_ONE;
}

const ls_shape_kind ls_plane_kind_ = {
    .name = "plane",
    .static_only = true,
    .check = plane_check,
    .aabb = plane_aabb,
    .ray_cast = plane_ray,
    .collide = {[LS_SHAPE_HULL] = NULL},
};
