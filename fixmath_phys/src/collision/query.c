// SPDX-License-Identifier: MIT
// World queries: AABB overlap and ray casts, in body index order (ties in
// distance go to the lower index).
#include "../world/world_internal.h"
#include "collide.h"

static bool aabb_overlap(ls_aabb a, ls_aabb b)
{
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
           a.min.z <= b.max.z && b.min.z <= a.max.z;
}

uint32_t ls_world_query_aabb(const ls_world *w, ls_vec3 min, ls_vec3 max, ls_body_id *out,
                             uint32_t max_out)
{
    ls_aabb q = {min, max};
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->body_high; i++) {
        const ls_body *b = &w->bodies[i];
        if (b->alive && aabb_overlap(q, ls_geom_aabb(&b->geom, &b->xf, 0))) {
            if (n < max_out) {
                out[n] = ls_world_id_of_(w, i);
            }
            n++;
        }
    }
    return n;
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

// Ray against a sphere of radius r at the origin (o relative to the centre).
static bool ray_sphere(ls_vec3 o, ls_vec3 d, ls_fx r, ls_fx *t_hit)
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

// Ray against a capsule along the local y axis: the cylinder wall (a circle in
// the xz projection, hit only within |y| <= half_height) and both end spheres;
// the nearest hit wins.
static bool ray_capsule(ls_vec3 o, ls_vec3 d, const ls_geom *g, ls_mat3 r, ls_fx *t, ls_vec3 *n)
{
    ls_fx best = LS_FX_MAX, tt;
    ls_vec3 nl = ls_vec3_zero();
    ls_vec3 o_xz = ls_vec3_make(o.x, 0, o.z), d_xz = ls_vec3_make(d.x, 0, d.z);
    if (ray_sphere(o_xz, d_xz, g->radius, &tt) &&
        ls_fx_abs(ls_fx_add(o.y, ls_fx_mul(d.y, tt))) <= g->half_height) {
        best = tt;
        nl = ls_vec3_normalize(ls_vec3_mad(o_xz, d_xz, tt), ls_vec3_make(LS_FX_ONE, 0, 0));
    }
    for (int s = -1; s <= 1; s += 2) {
        ls_vec3 oc = ls_vec3_sub(o, ls_vec3_make(0, s > 0 ? g->half_height : -g->half_height, 0));
        if (ray_sphere(oc, d, g->radius, &tt) && tt < best) {
            best = tt;
            nl = ls_vec3_normalize(ls_vec3_mad(oc, d, tt),
                                   ls_vec3_make(0, s > 0 ? LS_FX_ONE : -LS_FX_ONE, 0));
        }
    }
    if (best == LS_FX_MAX) {
        return false;
    }
    *t = best;
    *n = ls_mat3_mul_vec(r, nl);
    return true;
}

static bool ray_body(const ls_body *b, ls_vec3 from, ls_vec3 d, ls_fx *t, ls_vec3 *n)
{
    const ls_geom *g = &b->geom;
    if (g->kind == LS_SHAPE_PLANE) {
        ls_fx denom = ls_vec3_dot(g->normal, d);
        ls_fx dist = ls_fx_sub(ls_vec3_dot(g->normal, from), g->plane_d);
        if (denom >= 0 || dist < 0) {
            return false;
        }
        *t = ls_fx_div(dist, ls_fx_neg(denom));
        *n = g->normal;
        return *t <= LS_FX_ONE;
    }
    ls_vec3 centre = ls_vec3_add(b->xf.p, ls_mat3_mul_vec(b->xf.r, g->offset));
    ls_vec3 o = ls_vec3_sub(from, centre);
    if (g->kind == LS_SHAPE_BOX) {
        ls_vec3 nl;
        if (!ray_box(ls_mat3_mul_tvec(b->xf.r, o), ls_mat3_mul_tvec(b->xf.r, d), g->half_extents, t,
                     &nl)) {
            return false;
        }
        *n = ls_mat3_mul_vec(b->xf.r, nl);
        return true;
    }
    if (g->kind == LS_SHAPE_CAPSULE) {
        return ray_capsule(ls_mat3_mul_tvec(b->xf.r, o), ls_mat3_mul_tvec(b->xf.r, d), g, b->xf.r,
                           t, n);
    }
    if (!ray_sphere(o, d, g->radius, t)) {
        return false;
    }
    *n = ls_vec3_normalize(ls_vec3_mad(o, d, *t), ls_vec3_make(0, LS_FX_ONE, 0));
    return true;
}

bool ls_world_ray_cast(const ls_world *w, ls_vec3 from, ls_vec3 to, ls_ray_hit *hit)
{
    ls_vec3 d = ls_vec3_sub(to, from);
    bool found = false;
    for (uint32_t i = 0; i < w->body_high; i++) {
        const ls_body *b = &w->bodies[i];
        ls_fx t;
        ls_vec3 n;
        if (!b->alive || !ray_body(b, from, d, &t, &n) || (found && t >= hit->fraction)) {
            continue;
        }
        found = true;
        hit->body = ls_world_id_of_(w, i);
        hit->fraction = t;
        hit->normal = n;
        hit->point = ls_vec3_mad(from, d, t);
    }
    return found;
}
