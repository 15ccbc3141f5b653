// SPDX-License-Identifier: MIT
// Continuous collision (SPEC.md §11 stage 6b). Why: a body that moves farther
// in one step than half its thinnest width can pass through a thin wall or end
// deep inside the ground, where the narrow phase sees it too late or on the
// wrong side. After positions are integrated, each such "fast" body is swept
// along this step's translation (with its final orientation) against the
// static shapes its predictive broad-phase box reached -- and, if it is
// flagged `bullet`, against dynamic bodies too -- and moved back to the
// earliest time of impact, stopping linear_slop short of the surface. Its
// velocity is kept: the next step's contact resolves it (bounce, friction)
// like any other. Shapes that already touch at the start of the sweep are
// left to the solver. Sweeps are linear casts by conservative advancement
// (gjk.h); planes are solved exactly along their normal; a mesh sweeps each
// triangle its swept box overlaps. Everything runs in pair order and each
// body keeps the minimum fraction (ties cannot matter: a minimum is unique),
// so the result does not depend on anything but ids.
#include "../collision/collide_internal.h"
#include "../collision/gjk.h"
#include "../collision/mesh.h"
#include "../collision/shape_kind.h"
#include "../world/world_internal.h"
#include "workers.h"

#include <string.h>

// Time of impact of convex proxy b moving by `move` against plane g: the
// support point of b against the normal reaches the plane (plus target).
static bool cast_plane(const ls_geom *g, const ls_proxy *b, const ls_xform *xb0, ls_vec3 move,
                       ls_fx target, ls_fx *t)
{
    // Deepest point of b's core along -normal at the start.
    ls_fx best = LS_FX_MAX;
    for (uint32_t i = 0; i < b->count; i++) {
        ls_vec3 p = ls_vec3_add(xb0->p, ls_mat3_mul_vec(xb0->r, b->points[i]));
        best = ls_fx_min(best, ls_vec3_dot(g->normal, p));
    }
    ls_fx d0 = ls_fx_sub(ls_fx_sub(best, g->plane_d), ls_fx_add(b->radius, target));
    ls_fx dn = ls_vec3_dot(g->normal, move); // change of that distance over the step
    if (d0 <= 0 || dn >= 0 || ls_fx_add(d0, dn) > 0) {
        return false; // touching at the start, moving away, or not reaching it
    }
    *t = ls_fx_div(d0, ls_fx_neg(dn));
    return true;
}

// Time of impact of proxy b (start transform xb0, moving by `move`) against a
// static or dynamic convex proxy a. Starts that already touch are left alone.
static bool cast_convex(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b,
                        const ls_xform *xb0, ls_vec3 move, ls_fx target, ls_fx *t)
{
    ls_cast_result r;
    if (!ls_shape_cast_(a, xa, b, xb0, move, target, &r) || r.fraction <= 0) {
        return false;
    }
    *t = r.fraction;
    return true;
}

// Against every triangle of mesh shape m whose box meets the sweep of b.
static bool cast_mesh(const ls_shape *m, const ls_geom *gb, const ls_proxy *b, const ls_xform *xb0,
                      ls_vec3 move, ls_fx margin, ls_fx target, uint32_t *scratch, ls_fx *t)
{
    ls_xform end = *xb0;
    end.p = ls_vec3_add(end.p, move);
    ls_aabb b0 = ls_geom_aabb_(gb, xb0, margin), b1 = ls_geom_aabb_(gb, &end, margin);
    ls_aabb wb = {ls_vec3_min(b0.min, b1.min), ls_vec3_max(b0.max, b1.max)};
    ls_aabb local = ls_mesh_local_aabb_(&m->xf, wb);
    uint32_t n = ls_mesh_query_(m->geom.mesh, local, scratch, LS_MESH_PAIR_MAX);
    n = n > LS_MESH_PAIR_MAX ? LS_MESH_PAIR_MAX : n;
    bool hit = false;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t tri[3];
        ls_mesh_triangle(m->geom.mesh, scratch[k], tri);
        ls_vec3 pts[3];
        for (int j = 0; j < 3; j++) {
            pts[j] = ls_mesh_vertex(m->geom.mesh, tri[j]);
        }
        ls_proxy a = {pts, 3, 0};
        ls_fx tk;
        if (cast_convex(&a, &m->xf, b, xb0, move, target, &tk) && (!hit || tk < *t)) {
            *t = tk;
            hit = true;
        }
    }
    return hit;
}

// Earliest impact of the fast body's shape `mover` against shape `other`;
// scratch: LS_MESH_PAIR_MAX triangle indices.
static bool sweep_pair(const ls_world *w, const ls_shape *mover, const ls_body *mb,
                       const ls_shape *other, uint32_t *scratch, ls_fx *t)
{
    ls_vec3 move = ls_vec3_sub(mb->p, mb->p0);
    ls_xform x0 = mover->xf; // the final orientation, moved back to the start
    x0.p = ls_vec3_sub(x0.p, move);
    ls_vec3 storage[8];
    ls_proxy b = ls_proxy_of_geom_(&mover->geom, storage);
    if (b.count == 0) {
        return false;
    }
    ls_fx target = w->def.linear_slop;
    switch (other->geom.kind) {
    case LS_SHAPE_PLANE:
        return cast_plane(&other->geom, &b, &x0, move, target, t);
    case LS_SHAPE_MESH:
        return cast_mesh(other, &mover->geom, &b, &x0, move, w->def.contact_margin, target, scratch,
                         t);
    default: {
        ls_vec3 storage_a[8];
        ls_proxy a = ls_proxy_of_geom_(&other->geom, storage_a);
        return a.count > 0 && cast_convex(&a, &other->xf, &b, &x0, move, target, t);
    }
    }
}

// Whether a side of a pair is swept: a fast mover against a static shape
// always; against a dynamic or kinematic one only when the mover is a bullet
// (their own motion is not swept: they are taken where they ended).
static bool swept(const ls_body *mb, const ls_body *ob)
{
    return mb->alive && mb->fast && ob->alive && (ob->type == LS_BODY_STATIC || mb->bullet);
}

// The times of impact of swept pairs [begin, end) of ccd_pairs into ccd_toi
// (two per swept pair, one per side; LS_FX_ONE: none). Each reads only
// shapes and bodies and writes its own two entries, so they run in parallel;
// a mesh's triangle list goes to the worker's own scratch.
static void sweep_pairs(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    const ls_world *w = ctx;
    uint32_t *scratch =
        worker < w->mesh_arena_count ? w->mesh_arenas[worker].children : w->children;
    for (uint32_t k = begin; k < end; k++) {
        ls_pair pr = w->pairs[w->ccd_pairs[k]];
        const ls_shape *sa = &w->shapes[pr.a], *sb = &w->shapes[pr.b];
        for (int side = 0; side < 2; side++) {
            const ls_shape *mover = side ? sb : sa, *other = side ? sa : sb;
            const ls_body *mb = &w->bodies[mover->body], *ob = &w->bodies[other->body];
            ls_fx t = LS_FX_ONE;
            if (swept(mb, ob) && !sweep_pair(w, mover, mb, other, scratch, &t)) {
                t = LS_FX_ONE;
            }
            w->ccd_toi[2 * k + (uint32_t)side] = t;
        }
    }
}

/// Swept pairs per block of the parallel sweeps. Why this small: a sweep
/// costs a cast (a mesh's: one per triangle it reaches), and the swept pairs
/// come in runs (a static mesh's pairs follow each other): blocks of a few
/// keep both workers busy to the end.
#define CCD_MIN_BLOCK 8

void ls_world_continuous_(ls_world *w)
{
    bool any = false;
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        any |= b->alive && b->fast;
    }
    if (!any) {
        return;
    }
    // The pairs with a swept side, in pair order: their sweeps (most pairs
    // have none) then share out evenly over the workers.
    uint32_t n = 0;
    for (uint32_t k = 0; k < w->pair_count; k++) {
        ls_pair pr = w->pairs[k];
        const ls_body *ba = &w->bodies[w->shapes[pr.a].body];
        const ls_body *bb = &w->bodies[w->shapes[pr.b].body];
        if ((ba->fast || bb->fast) && (swept(ba, bb) || swept(bb, ba))) {
            w->ccd_pairs[n++] = k;
        }
    }
    ls_workers_for_(w->workers, n, CCD_MIN_BLOCK, sweep_pairs, w);
    // toi per body slot, LS_FX_ONE = no impact; kept in island_min_timer's
    // storage (scratch of the sleep stage, which runs after this one). The
    // minimum over the pairs does not depend on their order.
    ls_fx *toi = w->island_min_timer;
    for (uint32_t i = 0; i < w->body_high; i++) {
        toi[i] = LS_FX_ONE;
    }
    for (uint32_t k = 0; k < n; k++) {
        ls_pair pr = w->pairs[w->ccd_pairs[k]];
        for (int side = 0; side < 2; side++) {
            uint32_t body = w->shapes[side ? pr.b : pr.a].body;
            ls_fx t = w->ccd_toi[2 * k + (uint32_t)side];
            toi[body] = t < toi[body] ? t : toi[body];
        }
    }
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (!b->alive || !b->fast || toi[i] >= LS_FX_ONE) {
            continue;
        }
        ls_vec3 move = ls_vec3_sub(b->p, b->p0);
        b->p = ls_vec3_mad(b->p0, move, toi[i]);
        ls_body_update_derived_(w, b);
    }
}
