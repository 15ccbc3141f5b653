// SPDX-License-Identifier: MIT
// Mesh shape kind: a static triangle mesh from the world's geometry table.
// Its children are triangles: the narrow phase makes one contact per touching
// triangle, keyed by the triangle index (mesh.c has the BVH and the
// triangle routines, including the internal-edge rule).
#include "collide_internal.h"
#include "mesh.h"
#include "shape_kind.h"

static bool mesh_check(const ls_geom *g, ls_error *err)
{
    if (!g->mesh) {
        return ls_shape_refuse_(err, "shape.mesh", "a mesh shape needs a mesh (ls_mesh_create)",
                                false, 0);
    }
    return true;
}

// The world box of the local bounds: centre moved, extents by |R|.
static ls_aabb mesh_aabb(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    ls_aabb b = ls_mesh_bounds_(g->mesh);
    ls_vec3 c = ls_vec3_mid(b.min, b.max);
    ls_vec3 h = ls_vec3_sub(b.max, c);
    ls_vec3 wc = ls_vec3_add(xf->p, ls_mat3_mul_vec(xf->r, c));
    ls_vec3 e;
    ls_fx *ev[3] = {&e.x, &e.y, &e.z};
    for (int i = 0; i < 3; i++) {
        ls_vec3 row = xf->r.row[i];
        int64_t s = (int64_t)ls_fx_abs(row.x) * h.x + (int64_t)ls_fx_abs(row.y) * h.y +
                    (int64_t)ls_fx_abs(row.z) * h.z;
        *ev[i] = ls_fx_add(ls_fx_from_q32(s), margin);
    }
    ls_aabb box = {ls_vec3_sub(wc, e), ls_vec3_add(wc, e)};
    return box;
}

static bool mesh_ray(const ls_geom *g, const ls_xform *xf, ls_vec3 from, ls_vec3 to, ls_fx *t,
                     ls_vec3 *n)
{
    uint32_t tri;
    return ls_mesh_ray_cast_(g->mesh, xf, from, to, t, n, &tri);
}

static uint32_t mesh_children(const ls_geom *g, ls_aabb local_box, uint32_t *out, uint32_t max)
{
    return ls_mesh_query_(g->mesh, local_box, out, max);
}

static int mesh_collide_child(const ls_geom *g, uint32_t child, const ls_xform *xg,
                              const ls_geom *b, const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    return ls_collide_mesh_triangle_(g->mesh, child, xg, b, xb, margin, m);
}

const ls_shape_kind ls_mesh_kind_ = {
    .name = "mesh",
    .static_only = true,
    .needs_data = true,
    .check = mesh_check,
    .aabb = mesh_aabb,
    .ray_cast = mesh_ray,
    .children = mesh_children,
    .collide_child = mesh_collide_child,
};
