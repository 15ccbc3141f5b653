// SPDX-License-Identifier: MIT
// libFuzzer harness for the Wavefront OBJ mesh reader: any bytes either give
// a mesh or an error naming line, column and what. An accepted mesh answers
// queries, ray casts and triangle manifolds (sphere, box, capsule) without
// undefined behaviour, its BVH finds every triangle, and a clone is equal.
#include "../fixmath_phys/src/collision/collide_internal.h"
#include "../fixmath_phys/src/collision/mesh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/// Exercise the narrow phase against the first triangles: shapes placed at
/// each triangle's vertices and centroid, slightly above.
static void collide_some(const ls_mesh *m)
{
    ls_xform xm = ls_xform_make_(ls_vec3_make(LS_FX_INT(3), 0, LS_FX_INT(-2)),
                                 ls_quat_normalize(ls_quat_make(0, 20000, 0, 60000)));
    ls_geom shapes[3] = {
        {.kind = LS_SHAPE_SPHERE, .radius = LS_FX_HALF},
        {.kind = LS_SHAPE_BOX, .half_extents = ls_vec3_make(LS_FX_HALF, 20000, 40000)},
        {.kind = LS_SHAPE_CAPSULE, .radius = 20000, .half_height = LS_FX_ONE},
    };
    ls_quat q = ls_quat_normalize(ls_quat_make(10000, 5000, -3000, 60000));
    uint32_t n = ls_mesh_triangle_count(m);
    for (uint32_t t = 0; t < n && t < 32; t++) {
        uint32_t v[3];
        ls_mesh_triangle(m, t, v);
        for (int k = 0; k < 4; k++) {
            ls_vec3 p = k < 3 ? ls_mesh_vertex(m, v[k]) : ls_mesh_vertex(m, v[0]);
            ls_vec3 w = ls_vec3_add(xm.p, ls_mat3_mul_vec(xm.r, p));
            w.y = ls_fx_add(w.y, 20000);
            ls_xform xg = ls_xform_make_(w, q);
            for (int s = 0; s < 3; s++) {
                ls_manifold a, b;
                int na = ls_collide_mesh_triangle_(m, t, &xm, &shapes[s], &xg, 1311, &a);
                int nb = ls_collide_mesh_triangle_(m, t, &xm, &shapes[s], &xg, 1311, &b);
                if (na != nb || memcmp(&a, &b, sizeof a) != 0 || na < 0 || na > LS_MANIFOLD_MAX) {
                    abort(); // deterministic and bounded
                }
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_error err;
    ls_mesh *m = ls_mesh_create_obj((const char *)data, size, &err);
    if (!m) {
        if (err.code == LS_OK || err.line == 0 || err.column == 0 || err.message[0] == '\0') {
            fprintf(stderr, "refusal without a place or reason: %u:%u %s\n", err.line, err.column,
                    err.message);
            abort();
        }
        return 0;
    }
    // The BVH over the whole bounds finds every triangle, in order.
    uint32_t n = ls_mesh_triangle_count(m);
    uint32_t *all = malloc(sizeof *all * n);
    if (ls_mesh_query_(m, ls_mesh_bounds_(m), all, n) != n) {
        abort();
    }
    for (uint32_t i = 0; i < n; i++) {
        if (all[i] != i) {
            abort();
        }
    }
    free(all);
    ls_mesh *c = ls_mesh_clone_(m);
    if (!c || ls_mesh_memory_size_(c) != ls_mesh_memory_size_(m) ||
        memcmp(c->tris, m->tris, sizeof *m->tris * n) != 0) {
        abort();
    }
    ls_mesh_destroy(c);
    // Rays down through the bounds' corners and centre.
    ls_xform id = ls_xform_make_(ls_vec3_zero(), ls_quat_identity());
    ls_aabb b = ls_mesh_bounds_(m);
    ls_vec3 ctr = ls_vec3_mid(b.min, b.max);
    ls_vec3 from[3] = {ls_vec3_make(ctr.x, ls_fx_add(b.max.y, LS_FX_ONE), ctr.z),
                       ls_vec3_make(b.min.x, ls_fx_add(b.max.y, LS_FX_ONE), b.min.z), ctr};
    for (int k = 0; k < 3; k++) {
        ls_vec3 to = ls_vec3_make(from[k].x, ls_fx_sub(b.min.y, LS_FX_ONE), from[k].z);
        ls_fx f;
        ls_vec3 nrm;
        uint32_t t;
        if (ls_mesh_ray_cast_(m, &id, from[k], to, &f, &nrm, &t) &&
            (f < 0 || f > LS_FX_ONE || t >= n)) {
            abort();
        }
    }
    collide_some(m);
    ls_mesh_destroy(m);
    return 0;
}
