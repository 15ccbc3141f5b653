// SPDX-License-Identifier: MIT
// Capsule shape kind: a segment of half length half_height along local +Y,
// swept by a radius.
#include "collide_internal.h"
#include "hull.h"
#include "mass_math.h"
#include "shape_kind.h"

static bool capsule_check(const ls_geom *g, ls_error *err)
{
    if (g->radius < LS_SHAPE_SIZE_MIN_RAW || g->radius > LS_SHAPE_SIZE_MAX_RAW) {
        return ls_shape_refuse_(err, "shape.radius", "shape.radius outside 0.05..64 m", true,
                                g->radius);
    }
    if (g->half_height < 0 || g->half_height > LS_SHAPE_SIZE_MAX_RAW) {
        return ls_shape_refuse_(err, "shape.half_height", "shape.half_height outside 0..64 m", true,
                                g->half_height);
    }
    return true;
}

// A cylinder of half height h plus one sphere (two hemispherical caps), each
// with its exact mass (Q16.48) and its unit inertia about the capsule centre
// (Q32.32): the cylinder r^2/2 about y, r^2/4 + h^2/3 about x and z; the caps
// 2r^2/5 about y, 2r^2/5 + h^2 + 3hr/4 about x and z.
static bool capsule_mass(const ls_geom *g, ls_fx density, ls_shape_mass *out)
{
    uint64_t r = (uint64_t)g->radius, h = (uint64_t)g->half_height; // >= 0, <= 2^22
    uint64_t r2 = r * r, h2 = h * h, hr = h * r;                    // Q32.32, exact
    uint64_t r2h = (uint64_t)ls_mass_mul_shr(r2, 2 * h, 16);        // Q32.32, <= 2^51
    uint64_t r3 = (uint64_t)ls_mass_mul_shr(r2, r, 16);
    int64_t vc = ls_mass_mul_shr(r2h, LS_MASS_PI_Q61, 61);
    int64_t vs = ls_mass_mul_shr(r3, LS_MASS_FOUR_THIRDS_PI_Q60, 60);
    uint64_t m48;
    if (!ls_mass_of_volume(vc + vs, density, &m48, &out->mass)) {
        return false;
    }
    uint64_t mc48 = (uint64_t)vc * (uint64_t)density, ms48 = m48 - mc48;
    int64_t cyl_y = (int64_t)((r2 + 1) / 2), sph_y = (int64_t)((2 * r2 + 2) / 5);
    int64_t cyl_x = (int64_t)((r2 + 2) / 4 + (h2 + 1) / 3);
    int64_t sph_x = (int64_t)((2 * r2 + 2) / 5 + h2 + (3 * hr + 2) / 4);
    out->mass = ls_mass_q16(m48);
    out->center = ls_vec3_zero();
    out->inertia[0] = out->inertia[2] = ls_mass_inertia(cyl_x, mc48) + ls_mass_inertia(sph_x, ms48);
    out->inertia[1] = ls_mass_inertia(cyl_y, mc48) + ls_mass_inertia(sph_y, ms48);
    out->inertia[3] = out->inertia[4] = out->inertia[5] = 0;
    return true;
}

static ls_aabb capsule_aabb(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    // The core segment reaches |axis_i| * h along world axis i.
    ls_vec3 ax = ls_vec3_abs(ls_mat3_col(xf->r, 1));
    ls_vec3 e = ls_vec3_scale(ax, g->half_height);
    ls_fx r = ls_fx_add(g->radius, margin);
    e = ls_vec3_make(ls_fx_add(e.x, r), ls_fx_add(e.y, r), ls_fx_add(e.z, r));
    ls_vec3 c = ls_geom_center(g, xf);
    ls_aabb box = {ls_vec3_sub(c, e), ls_vec3_add(c, e)};
    return box;
}

// The cylinder wall (a circle in the xz projection, hit only within
// |y| <= half_height) and both end spheres; the nearest hit wins.
static bool capsule_ray(const ls_geom *g, const ls_xform *xf, ls_vec3 from, ls_vec3 to, ls_fx *t,
                        ls_vec3 *n)
{
    ls_vec3 o = ls_mat3_mul_tvec(xf->r, ls_vec3_sub(from, ls_geom_center(g, xf)));
    ls_vec3 d = ls_mat3_mul_tvec(xf->r, ls_vec3_sub(to, from));
    ls_fx best = LS_FX_MAX, tt;
    ls_vec3 nl = ls_vec3_zero();
    ls_vec3 o_xz = ls_vec3_make(o.x, 0, o.z), d_xz = ls_vec3_make(d.x, 0, d.z);
    if (ls_ray_sphere_(o_xz, d_xz, g->radius, &tt) &&
        ls_fx_abs(ls_fx_add(o.y, ls_fx_mul(d.y, tt))) <= g->half_height) {
        best = tt;
        nl = ls_vec3_normalize(ls_vec3_mad(o_xz, d_xz, tt), ls_vec3_make(LS_FX_ONE, 0, 0));
    }
    for (int s = -1; s <= 1; s += 2) {
        ls_vec3 oc = ls_vec3_sub(o, ls_vec3_make(0, s > 0 ? g->half_height : -g->half_height, 0));
        if (ls_ray_sphere_(oc, d, g->radius, &tt) && tt < best) {
            best = tt;
            nl = ls_vec3_normalize(ls_vec3_mad(oc, d, tt),
                                   ls_vec3_make(0, s > 0 ? LS_FX_ONE : -LS_FX_ONE, 0));
        }
    }
    if (best == LS_FX_MAX) {
        return false;
    }
    *t = best;
    *n = ls_mat3_mul_vec(xf->r, nl);
    return true;
}

static ls_fx capsule_thickness(const ls_geom *g)
{
    return g->radius;
}

// The core segment's two ends (one point when it has no length).
static ls_proxy capsule_proxy(const ls_geom *g, ls_vec3 storage[8])
{
    ls_vec3 h = ls_vec3_make(0, g->half_height, 0);
    storage[0] = ls_vec3_sub(g->offset, h);
    storage[1] = ls_vec3_add(g->offset, h);
    ls_proxy p = {storage, g->half_height > 0 ? 2u : 1u, g->radius};
    return p;
}

static ls_vec3 capsule_core(const ls_geom *g, const ls_xform *xf, ls_vec3 p)
{
    ls_segment seg = ls_capsule_segment(g, xf);
    return ls_segment_at(&seg, ls_segment_project(&seg, p));
}

const ls_shape_kind ls_capsule_kind_ = {
    .name = "capsule",
    .round = true,
    .check = capsule_check,
    .mass = capsule_mass,
    .thickness = capsule_thickness,
    .proxy = capsule_proxy,
    .core = capsule_core,
    .aabb = capsule_aabb,
    .ray_cast = capsule_ray,
    .collide =
        {
            [LS_SHAPE_CAPSULE] = ls_collide_capsule_capsule_,
            [LS_SHAPE_PLANE] = ls_collide_capsule_plane_,
            [LS_SHAPE_HULL] = ls_collide_capsule_hull_,
        },
};
