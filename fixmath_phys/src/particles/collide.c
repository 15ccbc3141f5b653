// SPDX-License-Identifier: MIT
// Particle collisions by projection (SPEC.md §25.6; Jakobsen §3, seed §2.2):
// the hooks step.c calls, the scratch they share (pcollide.h) and the
// projection done in every relaxation iteration.
//
// Why contacts are made once per tick and projected as planes. A narrow-phase
// call (sphere against any shape kind, through the shape registry) costs a few
// hundred nanoseconds; a 64 x 64 cloth relaxed 8 times would pay it 32 768
// times a tick. So prepare runs it once per particle and candidate shape and
// keeps the answer as a half-space dot(n, x) >= c through the touched surface
// point (a supporting plane of a convex shape or triangle: pushing out of it
// never pushes into the shape); every iteration then costs one 64-bit dot
// product per contact. Within one tick a particle moves little, so the plane
// stays within s^2 / 2R of a curved surface after a slide s (0.05 mm for
// 1 cm on a 1 m sphere). This is the usual position-based-dynamics scheme.
//
// Why the plane is taken from x* (the start of the tick) and not from the
// predicted x. x* was projected out of everything at the end of the last tick,
// so its closest surface point is on the side the particle comes from: a
// particle that crosses a thin wall or a one-sided mesh triangle within one
// tick is still pushed back to the front (seed §4 item 26, the swept test),
// and a particle of radius 0 resting on a mesh keeps its triangle although
// gravity moves it behind the face. The test sphere is centred at x* with the
// radius r + e, e = |x - x*|_1 >= the distance travelled, so it covers the
// whole swept path: constraint dot(n, x) >= dot(n, x*) + depth - e.
//
// Candidates out of reach at prepare stay pending: the constraints of the
// iterations can pull a particle into a shape (a stretched trampoline
// snapping back around the ball), so each iteration checks them (one
// comparison until the particle has moved as far as the shape was).
//
// Order, after the constraint pass of each iteration (as Jakobsen's loop):
// pending checks, then contacts with dynamic bodies (particle index, shape
// slot, triangle; weighted contacts of particle bodies after their system's
// particles), then the pairs with other systems, then contacts with static
// and kinematic shapes, which so have the last word.
#include "pcollide.h"

#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------- capacities

static uint32_t contact_cap(const ls_world_def *def)
{
    return 3 * def->max_particles + 256; // particles' contacts, a cloth's triangles'
}

static uint32_t weight_cap(const ls_world_def *def)
{
    return 128 * def->max_particle_systems + 3 * def->max_particles; // bodies; triangles
}

static uint32_t shape_cap(const ls_world_def *def)
{
    uint32_t n = def->max_shapes ? def->max_shapes : def->max_bodies;
    return n ? n : 1;
}

static uint32_t body_cap(const ls_world_def *def)
{
    return def->max_bodies ? def->max_bodies : 1;
}

// Buckets of the pair grid: a power of two >= 2 max_particles; none when a
// world cannot hold two systems.
static uint32_t bucket_count(const ls_world_def *def)
{
    if (def->max_particle_systems < 2) {
        return 0;
    }
    uint32_t b = 16;
    while (b < 2 * def->max_particles) {
        b *= 2;
    }
    return b;
}

static uint32_t pair_cap(const ls_world_def *def)
{
    return bucket_count(def) ? 2 * def->max_particles : 0;
}

size_t ls_particles_collide_memory_size_(const ls_world_def *def)
{
    const struct ls_particle_collide *pc = NULL; // sizeof only
    size_t np = def->max_particles, ns = def->max_particle_systems, nb = body_cap(def);
    size_t grid = bucket_count(def) ? np : 0;
    return sizeof *pc +
           contact_cap(def) * (sizeof *pc->contacts + sizeof *pc->active + sizeof *pc->pend) +
           ns * (sizeof *pc->sys_first + sizeof *pc->sys_count + sizeof *pc->sys_box +
                 sizeof *pc->act_count + sizeof *pc->pend_count) +
           weight_cap(def) * (sizeof *pc->wt_index + sizeof *pc->wt_c + sizeof *pc->wt_d) +
           shape_cap(def) * (sizeof *pc->shapes + sizeof *pc->slots) +
           np * (sizeof *pc->fric + sizeof *pc->best + sizeof *pc->fixed_hit +
                 sizeof *pc->quad_off + sizeof *pc->pins) +
           grid * (sizeof *pc->grid + sizeof *pc->sorted) +
           (bucket_count(def) ? bucket_count(def) + 1 : 0) * sizeof *pc->bucket +
           pair_cap(def) * sizeof *pc->pairs +
           nb * (sizeof *pc->impulse + sizeof *pc->touched + sizeof *pc->body_list);
}

bool ls_particles_collide_init_(ls_particle_store *ps, const ls_world_def *def)
{
    struct ls_particle_collide *pc = calloc(1, sizeof *pc);
    ps->collide = pc;
    if (!pc) {
        return false;
    }
    size_t np = def->max_particles ? def->max_particles : 1;
    size_t ns = def->max_particle_systems ? def->max_particle_systems : 1;
    pc->max_particles = def->max_particles;
    pc->max_systems = def->max_particle_systems;
    pc->max_shapes = shape_cap(def);
    pc->max_bodies = body_cap(def);
    pc->contact_cap = contact_cap(def);
    pc->wt_cap = weight_cap(def) ? weight_cap(def) : 1;
    pc->bucket_count = bucket_count(def);
    pc->pair_cap = pair_cap(def);
    pc->contacts = calloc(pc->contact_cap, sizeof *pc->contacts);
    pc->active = calloc(pc->contact_cap, sizeof *pc->active);
    pc->pend = calloc(pc->contact_cap, sizeof *pc->pend);
    pc->act_count = calloc(ns, sizeof *pc->act_count);
    pc->pend_count = calloc(ns, sizeof *pc->pend_count);
    pc->sys_first = calloc(ns, sizeof *pc->sys_first);
    pc->sys_count = calloc(ns, sizeof *pc->sys_count);
    pc->sys_box = calloc(ns, sizeof *pc->sys_box);
    pc->wt_index = calloc(pc->wt_cap, sizeof *pc->wt_index);
    pc->wt_c = calloc(pc->wt_cap, sizeof *pc->wt_c);
    pc->wt_d = calloc(pc->wt_cap, sizeof *pc->wt_d);
    pc->shapes = calloc(pc->max_shapes, sizeof *pc->shapes);
    pc->slots = calloc(pc->max_shapes, sizeof *pc->slots);
    pc->fric = calloc(np, sizeof *pc->fric);
    pc->best = calloc(np, sizeof *pc->best);
    pc->fixed_hit = calloc(np, sizeof *pc->fixed_hit);
    pc->quad_off = calloc(np, sizeof *pc->quad_off);
    pc->pins = calloc(np, sizeof *pc->pins);
    pc->impulse = calloc(pc->max_bodies, sizeof *pc->impulse);
    pc->touched = calloc(pc->max_bodies, sizeof *pc->touched);
    pc->body_list = calloc(pc->max_bodies, sizeof *pc->body_list);
    bool ok = pc->contacts && pc->active && pc->pend && pc->act_count && pc->pend_count &&
              pc->sys_first && pc->sys_count && pc->sys_box && pc->wt_index && pc->wt_c &&
              pc->wt_d && pc->shapes && pc->slots && pc->fric && pc->best && pc->fixed_hit &&
              pc->quad_off && pc->pins && pc->impulse && pc->touched && pc->body_list;
    if (ok && pc->bucket_count) {
        pc->grid = calloc(np, sizeof *pc->grid);
        pc->sorted = calloc(np, sizeof *pc->sorted);
        pc->bucket = calloc((size_t)pc->bucket_count + 1, sizeof *pc->bucket);
        pc->pairs = calloc(pc->pair_cap ? pc->pair_cap : 1, sizeof *pc->pairs);
        ok = pc->grid && pc->sorted && pc->bucket && pc->pairs;
    }
    return ok; // on failure the world frees what was allocated (ls_particles_collide_free_)
}

void ls_particles_collide_free_(ls_particle_store *ps)
{
    struct ls_particle_collide *pc = ps->collide;
    if (!pc) {
        return;
    }
    free(pc->contacts);
    free(pc->active);
    free(pc->pend);
    free(pc->act_count);
    free(pc->pend_count);
    free(pc->sys_first);
    free(pc->sys_count);
    free(pc->sys_box);
    free(pc->wt_index);
    free(pc->wt_c);
    free(pc->wt_d);
    free(pc->shapes);
    free(pc->slots);
    free(pc->fric);
    free(pc->best);
    free(pc->fixed_hit);
    free(pc->quad_off);
    free(pc->pins);
    free(pc->impulse);
    free(pc->touched);
    free(pc->body_list);
    free(pc->grid);
    free(pc->sorted);
    free(pc->bucket);
    free(pc->pairs);
    free(pc);
    ps->collide = NULL;
}

ls_pcontact *ls_pcollide_push_(ls_world *w, struct ls_particle_collide *pc)
{
    if (pc->contact_count >= pc->contact_cap) {
        w->info.capacity_exceeded = true;
        return NULL;
    }
    ls_pcontact *c = &pc->contacts[pc->contact_count++];
    memset(c, 0, sizeof *c);
    return c;
}

// ---------------------------------------------------------------- prepare

// Scratch of the particles of s back to "no contact".
static void reset_scratch(ls_particle_store *ps, const ls_particle_system *s)
{
    ls_particle_contact *pcs = ps->contact + s->first;
    struct ls_particle_collide *pc = ps->collide;
    for (uint32_t i = 0; i < s->count; i++) {
        memset(&pcs[i], 0, sizeof pcs[i]);
        pcs[i].shape = UINT32_MAX;
        pcs[i].body = UINT32_MAX;
        pc->fric[s->first + i] = ls_vec3_zero();
        pc->best[s->first + i] = 0;
        pc->fixed_hit[s->first + i] = 0;
    }
}

void ls_particles_collide_prepare_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps ? ps->collide : NULL;
    if (!pc) {
        return;
    }
    pc->contact_count = 0;
    pc->wt_count = 0;
    pc->pair_count = 0;
    for (uint32_t si = 0; si < ps->system_high; si++) {
        ls_particle_system *s = &ps->systems[si];
        uint32_t first = pc->contact_count;
        pc->sys_first[si] = first;
        pc->sys_count[si] = pc->act_count[si] = pc->pend_count[si] = 0;
        if (!s->alive) {
            continue;
        }
        reset_scratch(ps, s);
        if (s->kind == LS_PARTICLES_BODY) {
            ls_pcollide_body_contacts_(w, si);
        } else {
            ls_pcollide_particle_contacts_(w, si);
            ls_pcollide_cloth_contacts_(w, si);
        }
        pc->sys_count[si] = pc->contact_count - first;
        for (uint32_t k = first; k < pc->contact_count; k++) {
            const ls_pcontact *c = &pc->contacts[k];
            if (c->pending) {
                ls_ppend *pp = &pc->pend[first + pc->pend_count[si]++];
                pp->particle = c->first;
                pp->gap = c->gap;
                pp->contact = k;
            } else {
                pc->active[first + pc->act_count[si]++] = k;
            }
        }
    }
    ls_pcollide_find_pairs_(w);
}

// ------------------------------------------------------------- iteration

/// Record a push of d along n on particle i (friction and coupling read it).
/// Record a push of d by contact c on particle i: friction reads the depth
/// sum and the normal, shape and body of the contact that pushed most (ties:
/// the later); the coupling reads whether immovable geometry pushed.
static void note_push(struct ls_particle_collide *pc, ls_particle_contact *pcs, uint32_t i, ls_fx d,
                      const ls_pcontact *c)
{
    pcs->depth_sum = ls_fx_add(pcs->depth_sum, d);
    pc->fixed_hit[i] |= (uint8_t)c->fixed;
    if (c->push >= pc->best[i]) {
        pc->best[i] = c->push;
        pcs->normal = c->n;
        pcs->shape = c->shape;
        pcs->body = c->body;
    }
}

ls_fx ls_pcollide_violation_(int64_t c, ls_vec3 p, ls_vec3 n)
{
    int64_t v = c - ((int64_t)n.x * p.x + (int64_t)n.y * p.y + (int64_t)n.z * p.z);
    if (v <= 0) {
        return 0;
    }
    v = (v + 0xFFFF) >> 16;
    return v > LS_FX_MAX ? LS_FX_MAX : (ls_fx)v;
}

// The violation of dot(n, p) >= c in raw units, rounded up (0 when satisfied).
static ls_fx violation(int64_t c, int64_t dot_q32)
{
    int64_t v = c - dot_q32;
    if (v <= 0) {
        return 0;
    }
    v = (v + 0xFFFF) >> 16;
    return v > LS_FX_MAX ? LS_FX_MAX : (ls_fx)v;
}

// A weighted point: p = sum c_k x_k; a push d moves particle k by d D_k.
static void project_weighted(ls_particle_store *ps, struct ls_particle_collide *pc, ls_pcontact *c)
{
    int64_t p[3] = {0, 0, 0};
    for (uint32_t k = 0; k < c->count; k++) {
        ls_vec3 x = ps->x[pc->wt_index[c->first + k]];
        ls_fx ck = pc->wt_c[c->first + k];
        p[0] += (int64_t)ck * x.x;
        p[1] += (int64_t)ck * x.y;
        p[2] += (int64_t)ck * x.z;
    }
    // dot(n, p) with p in Q32.32: |p| < 2^44, n < 2^17, so the sum is < 2^63.
    int64_t dot = (int64_t)c->n.x * ((p[0] + 0x8000) >> 16) +
                  (int64_t)c->n.y * ((p[1] + 0x8000) >> 16) +
                  (int64_t)c->n.z * ((p[2] + 0x8000) >> 16);
    ls_fx d = violation(c->c, dot);
    if (d == 0) {
        return;
    }
    c->push = ls_fx_add(c->push, d);
    for (uint32_t k = 0; k < c->count; k++) {
        uint32_t i = pc->wt_index[c->first + k];
        ls_vec3 dk = ls_vec3_scale(pc->wt_d[c->first + k], d);
        if (ls_vec3_equal(dk, ls_vec3_zero())) {
            continue;
        }
        ps->x[i] = ls_vec3_add(ps->x[i], dk);
        note_push(pc, &ps->contact[i], i, ls_fx_abs(ls_vec3_dot(dk, c->n)), c);
    }
}

// Project the active contacts of system si whose `fixed` flag is `fixed`, in order.
static void project_active(ls_particle_store *ps, struct ls_particle_collide *pc, uint32_t si,
                           bool fixed)
{
    const uint32_t *act = pc->active + pc->sys_first[si];
    for (uint32_t k = 0, n = pc->act_count[si]; k < n; k++) {
        ls_pcontact *c = &pc->contacts[act[k]];
        if (c->fixed != fixed) {
            continue;
        }
        if (c->count != 1) {
            project_weighted(ps, pc, c);
            continue;
        }
        ls_vec3 *x = &ps->x[c->first];
        // Plain 64-bit products: |n| <= 1 and |x| < 2^31 raw keep the sum below 2^50.
        int64_t dot = (int64_t)c->n.x * x->x + (int64_t)c->n.y * x->y + (int64_t)c->n.z * x->z;
        ls_fx d = violation(c->c, dot);
        if (d != 0) {
            *x = ls_vec3_mad(*x, c->n, d);
            c->push = ls_fx_add(c->push, d);
            note_push(pc, &ps->contact[c->first], c->first, d, c);
        }
    }
}

void ls_particles_collide_iteration_(ls_world *w, ls_particle_system *s, uint32_t it)
{
    (void)it;
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    if (!pc) {
        return;
    }
    uint32_t si = (uint32_t)(s - ps->systems);
    uint32_t first = pc->sys_first[si];
    // Pending contacts first: those the constraints brought near get their
    // plane and join the active list (in pending order; the rest stay, in order).
    ls_ppend *pend = pc->pend + first;
    uint32_t still = 0;
    for (uint32_t k = 0, n = pc->pend_count[si]; k < n; k++) {
        ls_vec3 x = ps->x[pend[k].particle], xo = ps->x_old[pend[k].particle];
        int64_t moved =
            (int64_t)ls_fx_abs(x.x - xo.x) + ls_fx_abs(x.y - xo.y) + ls_fx_abs(x.z - xo.z);
        if (moved >= pend[k].gap && ls_pcollide_activate_(w, &pc->contacts[pend[k].contact])) {
            pc->active[first + pc->act_count[si]++] = pend[k].contact;
        } else {
            pend[still++] = pend[k];
        }
    }
    pc->pend_count[si] = still;
    // Shapes that move in the coupling, then particles of other systems, then
    // static and kinematic shapes: immovable geometry has the last word, so a
    // particle squeezed between a dynamic body and the floor ends on the floor
    // (the body is pushed by the coupling), never under it.
    project_active(ps, pc, si, false);
    if (pc->pair_count) {
        ls_pcollide_project_pairs_(w, si);
    }
    project_active(ps, pc, si, true);
}
