// SPDX-License-Identifier: MIT
// Sphere shape kind: a radius about the shape origin.
#include "collide_internal.h"
#include "hull.h"
#include "mass_math.h"
#include "shape_kind.h"

static bool sphere_check(const ls_geom *g, ls_error *err)
{
    if (g->radius < LS_SHAPE_SIZE_MIN_RAW || g->radius > LS_SHAPE_SIZE_MAX_RAW) {
        return ls_shape_refuse_(err, "shape.radius", "shape.radius outside 0.05..64 m", true,
                                g->radius);
    }
    return true;
}

static bool sphere_mass(const ls_geom *g, ls_fx density, ls_shape_mass *out)
{
    uint64_t r = (uint64_t)g->radius, r2 = r * r;                         // Q32.32, exact
    uint64_t r3 = (uint64_t)ls_mass_mul_shr(r2, r, 16);                   // Q32.32, <= 2^50
    int64_t volume = ls_mass_mul_shr(r3, LS_MASS_FOUR_THIRDS_PI_Q60, 60); // <= 2^53
    uint64_t m48;
    if (!ls_mass_of_volume(volume, density, &m48, &out->mass)) {
        return false;
    }
    out->mass = ls_mass_q16(m48);
    out->center = ls_vec3_zero();
    int64_t unit = (int64_t)((2 * r2 + 2) / 5); // 2/5 r^2
    out->inertia[0] = out->inertia[1] = out->inertia[2] = ls_mass_inertia(unit, m48);
    out->inertia[3] = out->inertia[4] = out->inertia[5] = 0;
    return true;
}

static ls_aabb sphere_aabb(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    ls_vec3 c = ls_geom_center(g, xf);
    ls_fx e = ls_fx_add(g->radius, margin);
    ls_aabb box = {ls_vec3_sub(c, ls_vec3_make(e, e, e)), ls_vec3_add(c, ls_vec3_make(e, e, e))};
    return box;
}

bool ls_ray_sphere_(ls_vec3 o, ls_vec3 d, ls_fx r, ls_fx *t_hit)
{
    // |o + t d|^2 = r^2, in Q32.32 to keep squares of metres in range.
    int64_t a = (int64_t)ls_vec3_len_sq_q32(d);
    int64_t b = ls_vec3_dot_q32(o, d);
    int64_t c = (int64_t)ls_vec3_len_sq_q32(o) - (int64_t)r * r;
    if (a == 0 || c <= 0) {
        return false; // degenerate ray, or it starts inside
    }
    // Scale to Q16 before the discriminant so the products stay in 64 bits.
    ls_fx a16 = ls_fx_from_q32(a), b16 = ls_fx_from_q32(b), c16 = ls_fx_from_q32(c);
    int64_t disc = (int64_t)b16 * b16 - (int64_t)a16 * c16;
    if (b16 >= 0 || disc < 0 || a16 == 0) {
        return false;
    }
    ls_fx root = ls_fx_from_q32((int64_t)ls_isqrt64((uint64_t)disc) << 16);
    ls_fx t = ls_fx_div(ls_fx_sub(ls_fx_neg(b16), root), a16);
    if (t < 0 || t > LS_FX_ONE) {
        return false;
    }
    *t_hit = t;
    return true;
}

static bool sphere_ray(const ls_geom *g, const ls_xform *xf, ls_vec3 from, ls_vec3 to, ls_fx *t,
                       ls_vec3 *n)
{
    ls_vec3 d = ls_vec3_sub(to, from);
    ls_vec3 o = ls_vec3_sub(from, ls_geom_center(g, xf));
    if (!ls_ray_sphere_(o, d, g->radius, t)) {
        return false;
    }
    *n = ls_vec3_normalize(ls_vec3_mad(o, d, *t), ls_vec3_make(0, LS_FX_ONE, 0));
    return true;
}

static ls_fx sphere_thickness(const ls_geom *g)
{
    return g->radius;
}

static ls_proxy sphere_proxy(const ls_geom *g, ls_vec3 storage[8])
{
    storage[0] = g->offset;
    ls_proxy p = {storage, 1, g->radius};
    return p;
}

static ls_vec3 sphere_core(const ls_geom *g, const ls_xform *xf, ls_vec3 p)
{
    (void)p;
    return ls_geom_center(g, xf);
}

const ls_shape_kind ls_sphere_kind_ = {
    .name = "sphere",
    .round = true,
    .check = sphere_check,
    .mass = sphere_mass,
    .thickness = sphere_thickness,
    .proxy = sphere_proxy,
    .core = sphere_core,
    .aabb = sphere_aabb,
    .ray_cast = sphere_ray,
    .collide =
        {
            [LS_SHAPE_SPHERE] = ls_collide_sphere_sphere_,
            [LS_SHAPE_BOX] = ls_collide_sphere_box_,
            [LS_SHAPE_CAPSULE] = ls_collide_sphere_capsule_,
            [LS_SHAPE_PLANE] = ls_collide_sphere_plane_,
            [LS_SHAPE_HULL] = ls_collide_sphere_hull_,
        },
};
