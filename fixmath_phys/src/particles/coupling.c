// SPDX-License-Identifier: MIT
// Two-way coupling of particles with dynamic rigid bodies (SPEC.md §25.6),
// once per tick after every system.
//
// During the relaxation a dynamic body is as immovable as a static one: its
// pose is this tick's final one and particles are pushed fully out of it (a
// point of effective inverse mass W, along n, by the contact's sum of pushes
// P; a particle has W = w, a particle body's point the W of its weighted
// contact, collide_shapes.c).
// The push gave the particles a velocity change P/dt along n; the impulse of
// a perfectly inelastic collision between the point and the body (effective
// inverse mass W_b = 1/m + (r x n) . I^-1 (r x n) at the point) changes the
// point's velocity by only a share of that:
//   k = W_b / (W + W_b),  kept = P - round(P k),
//   the body gets  J = -n kept / (W dt)  at the point (linear and angular),
//   the point's x* moves by n (P - kept)  (velocity change kept/dt, not P/dt).
// So the particles' momentum changes by exactly the opposite of the body's
// (up to the rounding of the velocity update), light particles barely move a
// heavy body (k ~ 0: full push, J ~ m P/dt) and a heavy point hitting a light
// body keeps moving with it instead of stopping dead (k ~ 1). At rest on a
// body supported from below, the steady state gives J = m g dt per tick: the
// body's support carries the particles' weight. Why a split after the loop
// and not a moving body inside it: the body's pose stays what the rigid
// solver left (every contact plane stays valid), and the rigid solver sees the
// impulse as a velocity next tick, as it sees the forces of every other body.
// Friction corrections (friction.c) are split the same way. A particle that
// immovable geometry also pushed (squeezed under the body) passes on only
// the tick's approach, not the iterations' fight (couple_contact).
//
// Order: impulses are summed per body in exact 64-bit sums, systems in slot
// order, contacts in order, then friction by particle index; each touched
// body gets its sum once (ascending body slot) and is woken.
#include "../collision/collide.h"
#include "../collision/shape_kind.h"
#include "../world/query_tree.h"
#include "pcollide.h"

#include <string.h>

ls_vec3 ls_pcollide_body_motion_(const ls_world *w, uint32_t body, ls_vec3 p)
{
    if (body == UINT32_MAX) {
        return ls_vec3_zero();
    }
    const ls_body *b = &w->bodies[body];
    if (!b->alive || b->type == LS_BODY_STATIC || b->asleep) {
        return ls_vec3_zero();
    }
    ls_vec3 v =
        ls_vec3_add(b->linear_velocity, ls_vec3_cross(b->angular_velocity, ls_vec3_sub(p, b->p)));
    return ls_vec3_scale(v, w->dt);
}

ls_fx ls_pcollide_body_inv_mass_(const ls_world *w, uint32_t body, ls_vec3 p, ls_vec3 n)
{
    if (body == UINT32_MAX) {
        return 0;
    }
    const ls_body *b = &w->bodies[body];
    if (!b->alive || b->type != LS_BODY_DYNAMIC) {
        return 0;
    }
    ls_vec3 rn = ls_vec3_cross(ls_vec3_sub(p, b->p), n);
    return ls_fx_add(b->inv_mass, ls_vec3_dot(rn, ls_mat3_mul_vec(b->inv_inertia_world, rn)));
}

// Add impulse j at world point p to body's sums.
static void add_impulse(struct ls_particle_collide *pc, const ls_world *w, uint32_t body, ls_vec3 j,
                        ls_vec3 p)
{
    ls_pimpulse *acc = &pc->impulse[body];
    if (!pc->touched[body]) {
        pc->touched[body] = 1;
        memset(acc, 0, sizeof *acc);
        pc->body_list[pc->body_count++] = body;
    }
    ls_vec3 l = ls_vec3_cross(ls_vec3_sub(p, w->bodies[body].p), j);
    acc->lin[0] += j.x;
    acc->lin[1] += j.y;
    acc->lin[2] += j.z;
    acc->ang[0] += l.x;
    acc->ang[1] += l.y;
    acc->ang[2] += l.z;
}

/// k = wb / (wp + wb) in Q16.16 (0 when the body does not move).
static ls_fx share(ls_fx wp, ls_fx wb)
{
    if (wb <= 0) {
        return 0;
    }
    int64_t den = (int64_t)wp + wb;
    return (ls_fx)((((int64_t)wb << 16) + den / 2) / den);
}

/// kept / (W dt): the impulse (N s, Q16.16) that changes the velocity of a
/// point of inverse mass W by kept (m) per tick.
static ls_fx impulse_of(ls_fx kept, ls_fx wp, ls_fx dt)
{
    int64_t den = (int64_t)wp * dt; // Q32.32
    if (den <= 0) {
        return 0;
    }
    int64_t num = (int64_t)kept * 65536 * 65536; // |kept| < 2^31: fits
    int64_t q = (num >= 0 ? num + den / 2 : num - den / 2) / den;
    return q > LS_FX_MAX ? LS_FX_MAX : q < LS_FX_MIN ? LS_FX_MIN : (ls_fx)q;
}

static bool dynamic(const ls_world *w, uint32_t body)
{
    return body != UINT32_MAX && w->bodies[body].alive && w->bodies[body].type == LS_BODY_DYNAMIC;
}

// The pushes of one contact.
static void couple_contact(ls_world *w, struct ls_particle_collide *pc, const ls_pcontact *c)
{
    ls_particle_store *ps = w->particles;
    if (c->push == 0 || c->inv_mass <= 0 || !dynamic(w, c->body)) {
        return;
    }
    ls_vec3 point = c->count == 1 ? ps->x[c->first] : c->point;
    ls_fx wb = ls_pcollide_body_inv_mass_(w, c->body, point, c->n);
    ls_fx k = share(c->inv_mass, wb);
    // A particle that static geometry also pushed is squeezed between it and
    // the body: the pushes of the iterations fought each other, and only what
    // the two approached this tick (pen0) is the body's to stop; an overlap
    // that persists pushes nothing (a body resting on squeezed cloth can sleep).
    ls_fx push = c->push;
    if (c->count == 1 && pc->fixed_hit[c->first]) {
        push = ls_fx_min(push, c->pen0);
    }
    for (uint32_t q = 0; c->triangle && q < c->count; q++) {
        if (pc->fixed_hit[pc->wt_index[c->first + q]]) { // a cloth triangle, squeezed too
            push = ls_fx_min(push, c->pen0);
            break;
        }
    }
    ls_fx back = ls_fx_mul(push, k);
    ls_fx kept = ls_fx_sub(push, back);
    if (c->count == 1) {
        // The body gets what the particle keeps, component by component, as
        // the particle's x* really moved (n push - the rounded n back): no
        // rounding of a vector product is lost between the two (SPEC §25.6).
        ls_vec3 pushed = ls_vec3_scale(c->n, push);
        ls_vec3 moved = ls_vec3_scale(c->n, back);
        ps->x_old[c->first] = ls_vec3_add(ps->x_old[c->first], moved);
        ls_vec3 kv = ls_vec3_sub(pushed, moved);
        ls_vec3 j =
            ls_vec3_make(impulse_of(kv.x, c->inv_mass, w->dt), impulse_of(kv.y, c->inv_mass, w->dt),
                         impulse_of(kv.z, c->inv_mass, w->dt));
        if (!ls_vec3_equal(j, ls_vec3_zero())) {
            add_impulse(pc, w, c->body, ls_vec3_neg(j), point);
        }
        return;
    }
    for (uint32_t q = 0; q < c->count; q++) {
        uint32_t i = pc->wt_index[c->first + q];
        ps->x_old[i] = ls_vec3_add(ps->x_old[i], ls_vec3_scale(pc->wt_d[c->first + q], back));
    }
    ls_fx j = impulse_of(kept, c->inv_mass, w->dt);
    if (j != 0) {
        add_impulse(pc, w, c->body, ls_vec3_scale(c->n, ls_fx_neg(j)), point);
    }
}

// The friction correction of particle i (store index): it moved by -fric.
static void couple_friction(ls_world *w, struct ls_particle_collide *pc, uint32_t i)
{
    ls_particle_store *ps = w->particles;
    const ls_particle_contact *pcs = &ps->contact[i];
    ls_vec3 moved = ls_vec3_neg(pc->fric[i]);
    ls_fx wp = ps->p[i].w;
    if (wp <= 0 || !dynamic(w, pcs->body)) {
        return;
    }
    ls_fx wb = ls_pcollide_body_inv_mass_(w, pcs->body, ps->x[i], pcs->normal);
    ls_fx k = share(wp, wb);
    ls_vec3 back = ls_vec3_scale(moved, k);
    ls_vec3 kept = ls_vec3_sub(moved, back);
    ps->x_old[i] = ls_vec3_add(ps->x_old[i], back);
    ls_vec3 j = ls_vec3_make(impulse_of(kept.x, wp, w->dt), impulse_of(kept.y, wp, w->dt),
                             impulse_of(kept.z, wp, w->dt));
    if (!ls_vec3_equal(j, ls_vec3_zero())) {
        add_impulse(pc, w, pcs->body, ls_vec3_neg(j), ps->x[i]);
    }
}

static ls_fx wide_to_fx(int64_t v)
{
    return v > LS_FX_MAX ? LS_FX_MAX : v < LS_FX_MIN ? LS_FX_MIN : (ls_fx)v;
}

// Pinned particles (SPEC.md §25.6): an immovable particle cannot be pushed out
// of a body, so the relaxation makes no contact for it and a body fell through
// a cloth's pinned edge. Here the body is stopped instead. Found per system
// (pinned_contacts): against each dynamic, awake shape whose sphere test with
// the particle (radius r at x, ls_collide_ with margin m = min(|v_body| dt +
// skin, 1 m): speculative, so a fast body is stopped before it gets in) finds
// depth d along n (out of the shape, towards the particle), a contact at p =
// x - n r with bias = min(max(d - slop, 0) / (4 dt), max_push) for d >= 0 (a
// gentle push out) or d / dt for a gap (it may close, no more), appended to
// the tick's contact list with count 0. Solved after every system's coupling
// (solve_pinned): 8 Gauss-Seidel passes in list order over the body's velocity
// with this tick's coupling impulses so far, each contact's accumulated
// impulse kept >= 0: lambda += (v_p . n + bias) / W_b (W_b the body's inverse
// mass at p along n), the change applied as -n at p. Why passes and
// accumulation: a body touching a row of pinned particles at once would be
// spun by a single pass (the first corner stopped alone). The body's pose is
// not touched (the rigid solver moves it next tick). Systems without collision
// (mask 0) and kinds made of children (meshes, static in practice) are skipped.
#define PINNED_PASSES 8

static void pinned_contacts(ls_world *w, struct ls_particle_collide *pc,
                            const ls_particle_system *s)
{
    const ls_particle_store *ps = w->particles;
    if (s->mask == 0) {
        return;
    }
    ls_aabb box = {ls_vec3_make(LS_FX_MAX, LS_FX_MAX, LS_FX_MAX),
                   ls_vec3_make(LS_FX_MIN, LS_FX_MIN, LS_FX_MIN)};
    bool any = false;
    for (uint32_t i = 0; i < s->count; i++) {
        const ls_particle *p = &ps->p[s->first + i];
        if (p->w == 0) {
            ls_fx grow = ls_fx_add(p->radius, LS_FX_ONE); // the most a margin adds
            ls_vec3 r = ls_vec3_make(grow, grow, grow);
            box.min = ls_vec3_min(box.min, ls_vec3_sub(ps->x[s->first + i], r));
            box.max = ls_vec3_max(box.max, ls_vec3_add(ps->x[s->first + i], r));
            any = true;
        }
    }
    if (!any) {
        return;
    }
    ls_pcollide_gather_shapes_(w, s, box);
    const ls_fx slop = w->def.linear_slop, top = w->def.max_push_velocity;
    const ls_fx quarter_rate = ls_fx_div(LS_FX_ONE, ls_fx_mul(LS_FX_INT(4), w->dt));
    for (uint32_t i = 0; i < s->count; i++) {
        const ls_particle *p = &ps->p[s->first + i];
        if (p->w != 0) {
            continue;
        }
        const ls_vec3 x = ps->x[s->first + i];
        ls_geom g;
        memset(&g, 0, sizeof g);
        g.kind = LS_SHAPE_SPHERE;
        g.radius = p->radius;
        ls_xform xf = {x, ls_quat_identity(), ls_mat3_identity()};
        for (uint32_t k = 0; k < pc->shape_count; k++) {
            const ls_shape *sh = &w->shapes[pc->shapes[k].slot];
            uint32_t body = sh->body;
            const ls_body *b = &w->bodies[body];
            if (!dynamic(w, body) || b->asleep || ls_shape_kind_of(sh->geom.kind)->children) {
                continue;
            }
            ls_fx margin = ls_fx_min(
                ls_fx_add(ls_fx_mul(ls_vec3_len(b->linear_velocity), w->dt), LS_PCOLLIDE_SKIN),
                LS_FX_ONE);
            ls_fx reach = ls_fx_add(p->radius, margin);
            ls_aabb pb = {ls_vec3_sub(x, ls_vec3_make(reach, reach, reach)),
                          ls_vec3_add(x, ls_vec3_make(reach, reach, reach))};
            ls_manifold m;
            if (!ls_aabb_overlap(&pc->shapes[k].box, &pb) ||
                ls_collide_(&g, &xf, &sh->geom, &sh->xf, margin, &m) <= 0) {
                continue;
            }
            ls_fx depth = m.points[0].depth;
            for (int q = 1; q < m.count; q++) {
                depth = ls_fx_max(depth, m.points[q].depth);
            }
            ls_vec3 n = ls_vec3_neg(m.normal);
            ls_vec3 at = ls_vec3_sub(x, ls_vec3_scale(n, p->radius));
            ls_fx wb = ls_pcollide_body_inv_mass_(w, body, at, n);
            if (wb <= 0) {
                continue;
            }
            ls_pcontact *c = ls_pcollide_push_(w, pc);
            if (!c) {
                return; // capacity_exceeded is set
            }
            c->n = n;
            c->point = at;
            c->body = body;
            c->shape = pc->shapes[k].slot;
            c->first = s->first + i;
            c->count = 0; // pinned
            c->inv_mass = wb;
            c->push =
                depth >= 0
                    ? ls_fx_min(ls_fx_mul(ls_fx_max(ls_fx_sub(depth, slop), 0), quarter_rate), top)
                    : ls_fx_div(depth, w->dt);
            c->pen0 = 0; // the accumulated impulse
        }
    }
}

// The velocity of body's point p with this tick's coupling impulses so far.
static ls_vec3 point_velocity(const ls_world *w, const struct ls_particle_collide *pc,
                              uint32_t body, ls_vec3 p)
{
    const ls_body *b = &w->bodies[body];
    ls_vec3 v = b->linear_velocity, om = b->angular_velocity;
    if (pc->touched[body]) {
        const ls_pimpulse *acc = &pc->impulse[body];
        ls_vec3 lin =
            ls_vec3_make(wide_to_fx(acc->lin[0]), wide_to_fx(acc->lin[1]), wide_to_fx(acc->lin[2]));
        ls_vec3 ang =
            ls_vec3_make(wide_to_fx(acc->ang[0]), wide_to_fx(acc->ang[1]), wide_to_fx(acc->ang[2]));
        v = ls_vec3_mad(v, lin, b->inv_mass);
        om = ls_vec3_add(om, ls_mat3_mul_vec(b->inv_inertia_world, ang));
    }
    return ls_vec3_add(v, ls_vec3_cross(om, ls_vec3_sub(p, b->p)));
}

static void solve_pinned(ls_world *w, struct ls_particle_collide *pc, uint32_t first)
{
    for (int pass = 0; pass < PINNED_PASSES; pass++) {
        for (uint32_t k = first; k < pc->contact_count; k++) {
            ls_pcontact *c = &pc->contacts[k];
            ls_fx speed =
                ls_fx_add(ls_vec3_dot(point_velocity(w, pc, c->body, c->point), c->n), c->push);
            ls_fx old = c->pen0;
            ls_fx now = ls_fx_max(ls_fx_add(old, ls_fx_div(speed, c->inv_mass)), 0);
            if (now != old) {
                c->pen0 = now;
                add_impulse(pc, w, c->body, ls_vec3_scale(c->n, ls_fx_sub(old, now)), c->point);
            }
        }
    }
}

void ls_particles_couple_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps ? ps->collide : NULL;
    if (!pc) {
        return;
    }
    pc->body_count = 0;
    for (uint32_t si = 0; si < ps->system_high; si++) {
        const ls_particle_system *s = &ps->systems[si];
        if (!s->alive) {
            continue;
        }
        const ls_pcontact *c = pc->contacts + pc->sys_first[si];
        for (uint32_t k = 0; k < pc->sys_count[si]; k++) {
            couple_contact(w, pc, &c[k]);
        }
        for (uint32_t i = 0; i < s->count; i++) {
            if (!ls_vec3_equal(pc->fric[s->first + i], ls_vec3_zero())) {
                couple_friction(w, pc, s->first + i);
            }
        }
    }
    uint32_t pinned = pc->contact_count;
    for (uint32_t si = 0; si < ps->system_high; si++) {
        if (ps->systems[si].alive) {
            pinned_contacts(w, pc, &ps->systems[si]);
            ls_pcollide_cloth_tethers_(w, si, ls_fx_div(LS_FX_ONE, ls_fx_mul(LS_FX_INT(4), w->dt)));
        }
    }
    solve_pinned(w, pc, pinned);
    ls_query_sort_u32_(pc->body_list, pc->body_count);
    for (uint32_t n = 0; n < pc->body_count; n++) {
        uint32_t bi = pc->body_list[n];
        ls_body *b = &w->bodies[bi];
        const ls_pimpulse *acc = &pc->impulse[bi];
        pc->touched[bi] = 0;
        ls_vec3 lin =
            ls_vec3_make(wide_to_fx(acc->lin[0]), wide_to_fx(acc->lin[1]), wide_to_fx(acc->lin[2]));
        ls_vec3 ang =
            ls_vec3_make(wide_to_fx(acc->ang[0]), wide_to_fx(acc->ang[1]), wide_to_fx(acc->ang[2]));
        b->linear_velocity = ls_vec3_mad(b->linear_velocity, lin, b->inv_mass);
        b->angular_velocity =
            ls_vec3_add(b->angular_velocity, ls_mat3_mul_vec(b->inv_inertia_world, ang));
        ls_body_wake_(b);
    }
}
