// SPDX-License-Identifier: MIT
// Hull shape kind: a convex hull from the world's geometry table (hull.c
// builds it; collide_hull.c collides it).
#include "collide_internal.h"
#include "hull.h"
#include "shape_kind.h"

static bool hull_check(const ls_geom *g, ls_error *err)
{
    if (!g->hull) {
        return ls_shape_refuse_(err, "shape.hull", "a hull shape needs a hull (ls_hull_create)",
                                false, 0);
    }
    return true;
}

static bool hull_mass(const ls_geom *g, ls_fx density, ls_shape_mass *out)
{
    ls_hull_mass hm;
    out->mass = 0;
    if (!ls_hull_mass_props_(g->hull, density, &hm)) {
        return false; // volume or mass beyond Q16.16 (mass.c refuses the body)
    }
    out->mass = hm.mass;
    out->center = hm.center;
    out->inertia[0] = hm.ixx;
    out->inertia[1] = hm.iyy;
    out->inertia[2] = hm.izz;
    out->inertia[3] = hm.ixy;
    out->inertia[4] = hm.ixz;
    out->inertia[5] = hm.iyz;
    return true;
}

static ls_aabb hull_aabb(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    return ls_hull_aabb_(g->hull, xf, margin);
}

static bool hull_ray(const ls_geom *g, const ls_xform *xf, ls_vec3 from, ls_vec3 to, ls_fx *t,
                     ls_vec3 *n)
{
    return ls_hull_ray_cast_(g->hull, xf, from, to, t, n);
}

// The smallest distance from the centroid to a face plane.
static ls_fx hull_thickness(const ls_geom *g)
{
    const ls_hull *h = g->hull;
    ls_fx t = LS_FX_MAX;
    for (uint32_t f = 0; f < h->face_count; f++) {
        t = ls_fx_min(t, ls_fx_sub(h->faces[f].d, ls_vec3_dot(h->faces[f].normal, h->centroid)));
    }
    return ls_fx_max(t, 0);
}

// The hull's own vertices (no copy).
static ls_proxy hull_proxy(const ls_geom *g, ls_vec3 storage[8])
{
    ls_proxy p = {storage, 0, 0};
    if (g->hull) {
        p.points = g->hull->vertices;
        p.count = g->hull->vertex_count;
    }
    return p;
}

const ls_shape_kind ls_hull_kind_ = {
    .name = "hull",
    .needs_data = true,
    .check = hull_check,
    .mass = hull_mass,
    .thickness = hull_thickness,
    .proxy = hull_proxy,
    .aabb = hull_aabb,
    .ray_cast = hull_ray,
    .collide =
        {
            [LS_SHAPE_HULL] = ls_collide_hull_hull_,
            [LS_SHAPE_PLANE] = ls_collide_hull_plane_,
        },
};
