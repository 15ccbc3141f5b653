// SPDX-License-Identifier: MIT
// The state walk of the world's geometry table (world/state.h; SPEC.md §13):
// hulls and meshes are saved through their public accessors, and restored by
// rebuilding them with the validating constructors, unless the world already
// holds exactly the same data (the usual case: a rollback restores into the
// world that saved), which costs a comparison and no allocation. Not in the
// checksum (SPEC.md §12): a shape's kind and pose are, and its data is fixed
// by the scene.
#include "../collision/hull.h"
#include "../collision/mesh.h"
#include "state.h"

#include <stdlib.h>
#include <string.h>

// One word read (0 once the cursor has failed).
static uint32_t get32(ls_cursor *c)
{
    uint32_t v = 0;
    ls_io_u32_(c, &v, NULL);
    return v;
}

static void save_geometry(ls_cursor *c, const ls_geometry *g)
{
    uint32_t kind = (uint32_t)g->kind;
    ls_io32_(c, &kind);
    if (g->kind == LS_SHAPE_HULL) {
        // Its vertices only: ls_hull_create builds the same hull from them
        // (its result depends only on the point set, SPEC.md §20).
        uint32_t nv = ls_hull_vertex_count(g->hull);
        ls_io32_(c, &nv);
        for (uint32_t i = 0; i < nv; i++) {
            ls_vec3 v = ls_hull_vertex(g->hull, i);
            ls_io_vec3_(c, &v);
        }
        return;
    }
    uint32_t nv = ls_mesh_vertex_count(g->mesh), nt = ls_mesh_triangle_count(g->mesh);
    ls_io32_(c, &nv);
    for (uint32_t i = 0; i < nv; i++) {
        ls_vec3 v = ls_mesh_vertex(g->mesh, i);
        ls_io_vec3_(c, &v);
    }
    ls_io32_(c, &nt);
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t tri[3];
        ls_mesh_triangle(g->mesh, t, tri);
        for (int k = 0; k < 3; k++) {
            ls_io32_(c, &tri[k]);
        }
    }
}

// Reads one geometry entry and compares it with `have` (may be NULL) word by
// word, without allocating; false when it differs or the buffer is short.
static bool same_geometry(ls_cursor *c, const ls_geometry *have)
{
    if (!have) {
        return false;
    }
    uint32_t kind = get32(c);
    if (!c->ok || kind != (uint32_t)have->kind) {
        return false;
    }
    if (have->kind == LS_SHAPE_HULL) {
        uint32_t nv = get32(c);
        if (nv != ls_hull_vertex_count(have->hull)) {
            return false;
        }
        for (uint32_t i = 0; i < nv && c->ok; i++) {
            ls_vec3 v = {0, 0, 0};
            ls_io_vec3_(c, &v);
            if (!ls_vec3_equal(v, ls_hull_vertex(have->hull, i))) {
                return false;
            }
        }
        return c->ok;
    }
    uint32_t nv = get32(c);
    if (nv != ls_mesh_vertex_count(have->mesh)) {
        return false;
    }
    for (uint32_t i = 0; i < nv && c->ok; i++) {
        ls_vec3 v = {0, 0, 0};
        ls_io_vec3_(c, &v);
        if (!ls_vec3_equal(v, ls_mesh_vertex(have->mesh, i))) {
            return false;
        }
    }
    uint32_t nt = get32(c);
    if (nt != ls_mesh_triangle_count(have->mesh)) {
        return false;
    }
    for (uint32_t t = 0; t < nt && c->ok; t++) {
        uint32_t tri[3];
        ls_mesh_triangle(have->mesh, t, tri);
        for (int k = 0; k < 3; k++) {
            if (get32(c) != tri[k]) {
                return false;
            }
        }
    }
    return c->ok;
}

// Reads one geometry entry and builds it (allocating). Counts are checked
// against the bytes left before anything is allocated, so a stranger's small
// buffer cannot ask for a large allocation.
static bool build_geometry(ls_cursor *c, ls_geometry *out, ls_error *why)
{
    uint32_t kind = get32(c), nv = get32(c);
    size_t left = c->size - c->pos;
    memset(out, 0, sizeof *out);
    if (!c->ok || (kind != LS_SHAPE_HULL && kind != LS_SHAPE_MESH) || (size_t)nv * 12 > left ||
        (kind == LS_SHAPE_HULL && nv > LS_HULL_MAX_VERTICES)) {
        return false;
    }
    out->kind = (ls_shape_type)kind;
    ls_vec3 *v = malloc((nv ? nv : 1) * sizeof *v);
    bool ok = v != NULL;
    for (uint32_t i = 0; i < nv && ok; i++) {
        ls_io_vec3_(c, &v[i]);
    }
    ok = ok && c->ok;
    if (ok && kind == LS_SHAPE_HULL) {
        out->hull = ls_hull_create(v, nv, why);
        // A stranger's vertices that are not exactly some hull's own corners
        // build a different hull: refused, so restore-then-save is the identity.
        ok = out->hull && ls_hull_vertex_count(out->hull) == nv;
        for (uint32_t i = 0; ok && i < nv; i++) {
            ok = ls_vec3_equal(ls_hull_vertex(out->hull, i), v[i]);
        }
    } else if (ok) {
        uint32_t nt = get32(c), *idx = NULL;
        ok = c->ok && nt <= LS_MESH_MAX_TRIANGLES && (size_t)nt * 12 <= c->size - c->pos;
        if (ok) {
            idx = malloc((nt ? (size_t)nt * 3 : 1) * sizeof *idx);
            ok = idx != NULL;
        }
        for (size_t k = 0; ok && k < (size_t)nt * 3; k++) {
            idx[k] = get32(c);
        }
        if (ok && c->ok) {
            out->mesh = ls_mesh_create(v, nv, idx, nt, why);
            ok = out->mesh != NULL;
        }
        free(idx);
    }
    free(v);
    return ok && c->ok;
}

// Restore's geometry section: keep the world's table if the snapshot holds
// the same entries, else rebuild it.
static bool restore_geometry(ls_cursor *c, ls_world *w, uint32_t count, ls_error *why)
{
    ls_cursor saved = *c;
    bool same = count == w->geometry_count;
    for (uint32_t i = 0; i < count && same; i++) {
        same = same_geometry(c, &w->geometry[i]);
    }
    if (same && c->ok) {
        return true;
    }
    *c = saved; // read again from the table's start
    ls_world_geometry_clear_(w);
    if (count == 0) {
        return true;
    }
    if ((size_t)count * 12 > c->size - c->pos) {
        return false;
    }
    w->geometry = calloc(count, sizeof *w->geometry);
    if (!w->geometry) {
        return false;
    }
    w->geometry_cap = count;
    for (uint32_t i = 0; i < count; i++) {
        if (!build_geometry(c, &w->geometry[i], why)) {
            free(w->geometry[i].hull);
            ls_mesh_destroy(w->geometry[i].mesh);
            return false;
        }
        w->geometry_count++;
    }
    return true;
}

bool ls_geometry_state_io_(ls_cursor *c, ls_world *w, uint32_t count, ls_error *why)
{
    if (c->save) {
        for (uint32_t i = 0; i < w->geometry_count && c->ok; i++) {
            save_geometry(c, &w->geometry[i]);
        }
        return c->ok;
    }
    return restore_geometry(c, w, count, why);
}
