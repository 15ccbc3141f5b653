// SPDX-License-Identifier: MIT
// The world's table of immutable shape data (hulls, meshes). A body that uses
// a hull or mesh gets the world's own copy, so the caller's object may be
// destroyed at once and a snapshot can carry the data. Identical data is
// stored once: entries are compared by content (vertices, faces, triangles),
// never by address, so the table -- and every index into it -- is the same
// on every machine that creates the same bodies in the same order. Entries
// live until the world is destroyed or a snapshot with other data is restored.
#include "../collision/hull.h"
#include "../collision/mesh.h"
#include "world_internal.h"

#include <stdlib.h>
#include <string.h>

static bool hull_equal(const ls_hull *a, const ls_hull *b)
{
    uint32_t n = ls_hull_vertex_count(a), f = ls_hull_face_count(a);
    if (n != ls_hull_vertex_count(b) || f != ls_hull_face_count(b)) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!ls_vec3_equal(ls_hull_vertex(a, i), ls_hull_vertex(b, i))) {
            return false;
        }
    }
    uint32_t ia[LS_HULL_MAX_VERTICES], ib[LS_HULL_MAX_VERTICES];
    for (uint32_t i = 0; i < f; i++) {
        uint32_t na = ls_hull_face_vertices(a, i, ia, LS_HULL_MAX_VERTICES);
        uint32_t nb = ls_hull_face_vertices(b, i, ib, LS_HULL_MAX_VERTICES);
        if (na != nb || memcmp(ia, ib, na * sizeof ia[0]) != 0) {
            return false;
        }
    }
    return true;
}

static bool mesh_equal(const ls_mesh *a, const ls_mesh *b)
{
    uint32_t n = ls_mesh_vertex_count(a), t = ls_mesh_triangle_count(a);
    if (n != ls_mesh_vertex_count(b) || t != ls_mesh_triangle_count(b)) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!ls_vec3_equal(ls_mesh_vertex(a, i), ls_mesh_vertex(b, i))) {
            return false;
        }
    }
    for (uint32_t i = 0; i < t; i++) {
        uint32_t ta[3], tb[3];
        ls_mesh_triangle(a, i, ta);
        ls_mesh_triangle(b, i, tb);
        if (ta[0] != tb[0] || ta[1] != tb[1] || ta[2] != tb[2]) {
            return false;
        }
    }
    return true;
}

uint32_t ls_world_geometry_add_(ls_world *w, const ls_geom *g, ls_error *err)
{
    for (uint32_t i = 0; i < w->geometry_count; i++) {
        const ls_geometry *e = &w->geometry[i];
        if (e->kind == g->kind && ((g->kind == LS_SHAPE_HULL && hull_equal(e->hull, g->hull)) ||
                                   (g->kind == LS_SHAPE_MESH && mesh_equal(e->mesh, g->mesh)))) {
            return i;
        }
    }
    if (w->geometry_count == w->geometry_cap) {
        uint32_t cap = w->geometry_cap ? w->geometry_cap * 2 : 8;
        ls_geometry *ng = realloc(w->geometry, cap * sizeof *ng);
        if (!ng) {
            ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory for the world's shape data");
            return UINT32_MAX;
        }
        w->geometry = ng;
        w->geometry_cap = cap;
    }
    ls_geometry e = {g->kind, NULL, NULL};
    if (g->kind == LS_SHAPE_HULL) {
        e.hull = malloc(sizeof *e.hull);
        if (e.hull) {
            memcpy(e.hull, g->hull, sizeof *e.hull);
        }
    } else {
        e.mesh = ls_mesh_clone_(g->mesh);
    }
    if (!e.hull && !e.mesh) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory for the world's shape data");
        return UINT32_MAX;
    }
    w->geometry[w->geometry_count] = e;
    return w->geometry_count++;
}

void ls_world_geometry_bind_(const ls_world *w, ls_geom *g, uint32_t index)
{
    g->hull = w->geometry[index].hull;
    g->mesh = w->geometry[index].mesh;
}

void ls_world_geometry_clear_(ls_world *w)
{
    for (uint32_t i = 0; i < w->geometry_count; i++) {
        free(w->geometry[i].hull);
        ls_mesh_destroy(w->geometry[i].mesh);
    }
    free(w->geometry);
    w->geometry = NULL;
    w->geometry_count = w->geometry_cap = 0;
}
