// SPDX-License-Identifier: MIT
// Box shape kind: half extents along the shape's local axes.
#include "collide_internal.h"
#include "hull.h"
#include "mass_math.h"
#include "shape_kind.h"

static bool box_check(const ls_geom *g, ls_error *err)
{
    const ls_fx c[3] = {g->half_extents.x, g->half_extents.y, g->half_extents.z};
    static const char *const fields[3] = {"shape.half_extents.x", "shape.half_extents.y",
                                          "shape.half_extents.z"};
    static const char *const what[3] = {"shape.half_extents.x outside 0.05..64 m",
                                        "shape.half_extents.y outside 0.05..64 m",
                                        "shape.half_extents.z outside 0.05..64 m"};
    for (int k = 0; k < 3; k++) {
        if (c[k] < LS_SHAPE_SIZE_MIN_RAW || c[k] > LS_SHAPE_SIZE_MAX_RAW) {
            return ls_shape_refuse_(err, fields[k], what[k], true, c[k]);
        }
    }
    return true;
}

static bool box_mass(const ls_geom *g, ls_fx density, ls_shape_mass *out)
{
    // Half extents are positive (<= 2^22 raw): squares and x*y exact in Q32.32.
    uint64_t x = (uint64_t)g->half_extents.x, y = (uint64_t)g->half_extents.y,
             z = (uint64_t)g->half_extents.z;
    int64_t volume = 8 * ls_mass_mul_shr(x * y, z, 16); // Q32.32, <= 2^53
    uint64_t m48;
    if (!ls_mass_of_volume(volume, density, &m48, &out->mass)) {
        return false;
    }
    out->mass = ls_mass_q16(m48);
    out->center = ls_vec3_zero();
    int64_t x2 = (int64_t)(x * x), y2 = (int64_t)(y * y), z2 = (int64_t)(z * z);
    out->inertia[0] = ls_mass_inertia((y2 + z2 + 1) / 3, m48);
    out->inertia[1] = ls_mass_inertia((x2 + z2 + 1) / 3, m48);
    out->inertia[2] = ls_mass_inertia((x2 + y2 + 1) / 3, m48);
    out->inertia[3] = out->inertia[4] = out->inertia[5] = 0;
    return true;
}

/// Half extent along world axis i of a box rotated by r: sum_j |r_ij| h_j,
/// accumulated exactly and rounded once.
static ls_fx box_world_extent(ls_vec3 row, ls_vec3 h)
{
    int64_t s = (int64_t)ls_fx_abs(row.x) * h.x + (int64_t)ls_fx_abs(row.y) * h.y +
                (int64_t)ls_fx_abs(row.z) * h.z;
    return ls_fx_from_q32(s);
}

static ls_aabb box_aabb(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    ls_vec3 e = ls_vec3_make(box_world_extent(xf->r.row[0], g->half_extents),
                             box_world_extent(xf->r.row[1], g->half_extents),
                             box_world_extent(xf->r.row[2], g->half_extents));
    e = ls_vec3_add(e, ls_vec3_make(margin, margin, margin));
    ls_vec3 c = ls_geom_center(g, xf);
    ls_aabb box = {ls_vec3_sub(c, e), ls_vec3_add(c, e)};
    return box;
}

// Slab test of the local ray o + t d (t in [0, 1]) against a box of half
// extents h; returns the entry fraction and the entry face normal.
static bool ray_box(ls_vec3 o, ls_vec3 d, ls_vec3 h, ls_fx *t_hit, ls_vec3 *n_local)
{
    ls_fx o3[3] = {o.x, o.y, o.z}, d3[3] = {d.x, d.y, d.z}, h3[3] = {h.x, h.y, h.z};
    ls_fx tmin = 0, tmax = LS_FX_ONE;
    int axis = -1;
    ls_fx sign = 0;
    for (int k = 0; k < 3; k++) {
        if (d3[k] == 0) {
            if (ls_fx_abs(o3[k]) > h3[k]) {
                return false;
            }
            continue;
        }
        ls_fx t1 = ls_fx_div(ls_fx_sub(ls_fx_neg(h3[k]), o3[k]), d3[k]);
        ls_fx t2 = ls_fx_div(ls_fx_sub(h3[k], o3[k]), d3[k]);
        ls_fx s = -LS_FX_ONE;
        if (t1 > t2) {
            ls_fx t = t1;
            t1 = t2;
            t2 = t;
            s = LS_FX_ONE;
        }
        if (t1 > tmin) {
            tmin = t1;
            axis = k;
            sign = s;
        }
        tmax = ls_fx_min(tmax, t2);
        if (tmin > tmax) {
            return false;
        }
    }
    if (axis < 0) {
        return false; // starts inside
    }
    *t_hit = tmin;
    *n_local = ls_vec3_make(axis == 0 ? sign : 0, axis == 1 ? sign : 0, axis == 2 ? sign : 0);
    return true;
}

static bool box_ray(const ls_geom *g, const ls_xform *xf, ls_vec3 from, ls_vec3 to, ls_fx *t,
                    ls_vec3 *n)
{
    ls_vec3 o = ls_vec3_sub(from, ls_geom_center(g, xf));
    ls_vec3 d = ls_vec3_sub(to, from);
    ls_vec3 nl;
    if (!ray_box(ls_mat3_mul_tvec(xf->r, o), ls_mat3_mul_tvec(xf->r, d), g->half_extents, t, &nl)) {
        return false;
    }
    *n = ls_mat3_mul_vec(xf->r, nl);
    return true;
}

static ls_fx box_thickness(const ls_geom *g)
{
    return ls_fx_min(g->half_extents.x, ls_fx_min(g->half_extents.y, g->half_extents.z));
}

// Vertex i = 4 [x+] + 2 [y+] + [z+]: the order of ls_hull_make_box_.
static ls_proxy box_proxy(const ls_geom *g, ls_vec3 storage[8])
{
    ls_vec3 h = g->half_extents;
    for (int i = 0; i < 8; i++) {
        ls_vec3 c = ls_vec3_make((i & 4) ? h.x : ls_fx_neg(h.x), (i & 2) ? h.y : ls_fx_neg(h.y),
                                 (i & 1) ? h.z : ls_fx_neg(h.z));
        storage[i] = ls_vec3_add(g->offset, c);
    }
    ls_proxy p = {storage, 8, 0};
    return p;
}

const ls_shape_kind ls_box_kind_ = {
    .name = "box",
    .check = box_check,
    .mass = box_mass,
    .thickness = box_thickness,
    .proxy = box_proxy,
    .aabb = box_aabb,
    .ray_cast = box_ray,
    .collide =
        {
            [LS_SHAPE_BOX] = ls_collide_box_box_,
            [LS_SHAPE_CAPSULE] = ls_collide_box_capsule_,
            [LS_SHAPE_PLANE] = ls_collide_box_plane_,
            [LS_SHAPE_HULL] = ls_collide_box_hull_,
        },
};
