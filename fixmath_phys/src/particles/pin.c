// SPDX-License-Identifier: MIT
// Pins (SPEC.md §25.4): particle a is held at a target, assigned exactly
// (Jakobsen §7: IK and dragging set the particle "inside the relaxation loop"
// and give it infinite mass). While an enabled pin holds a particle, its
// effective inverse mass is 0, so no other constraint moves it; the step sets
// x* = x and x = target after the Verlet update, so its implicit velocity is
// the target's motion and a released particle keeps it.
//
// A pin may follow a point of a rigid body (in the body's frame, from its
// centre of mass): the target is then p + R target with the body's pose after
// this tick's solve. One way: the body does not feel the particle. If the
// body is destroyed, the particle stays where it is until the pin is
// disabled.
#include "particles_internal.h"

ls_vec3 ls_pcon_pin_target_(const ls_world *w, const ls_pcon *c, bool *held)
{
    *held = true;
    if (c->body == UINT32_MAX) {
        return c->target;
    }
    if (c->body < w->body_high) {
        const ls_body *b = &w->bodies[c->body];
        if (b->alive && b->generation == c->body_generation) {
            return ls_vec3_add(b->p, ls_mat3_mul_vec(b->xf.r, c->target));
        }
    }
    *held = false;
    return ls_vec3_zero();
}

static ls_result pin_init(const ls_world *w, const ls_particle_system *s,
                          const ls_particle_constraint_def *d, ls_pcon *c, ls_error *err)
{
    if (ls_pcon_check_index_(s, d->a, "a", err) != LS_OK) {
        return err ? err->code : LS_ERR_INVALID_ARGUMENT;
    }
    c->a = d->a;
    c->body = UINT32_MAX;
    c->target = d->target;
    if (d->body.index1 != 0) {
        if (!ls_world_body_(w, d->body)) {
            return ls_particles_fail_(err, LS_ERR_INVALID_ID, "body",
                                      "the pin's body is stale or destroyed");
        }
        if (ls_fx_abs(d->target.x) > LS_FX_INT(128) || ls_fx_abs(d->target.y) > LS_FX_INT(128) ||
            ls_fx_abs(d->target.z) > LS_FX_INT(128)) {
            return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "target",
                                      "a body pin's target must be within +-128 m of the body's "
                                      "centre of mass");
        }
        c->body = d->body.index1 - 1;
        c->body_generation = d->body.generation;
    } else if (ls_fx_abs(d->target.x) > LS_PARTICLE_POS_MAX ||
               ls_fx_abs(d->target.y) > LS_PARTICLE_POS_MAX ||
               ls_fx_abs(d->target.z) > LS_PARTICLE_POS_MAX) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "target",
                                  "a pin's target components must be within +-2048 m");
    }
    return LS_OK;
}

static void pin_project(ls_world *w, ls_particle_system *s, ls_pcon *c, uint32_t n)
{
    ls_vec3 *x = w->particles->x + s->first;
    for (uint32_t k = 0; k < n; k++) {
        bool held;
        if (ls_pcon_active_(&c[k])) {
            ls_vec3 t = ls_pcon_pin_target_(w, &c[k], &held);
            if (held) {
                x[c[k].a] = t;
            }
        }
    }
}

static void pin_weights(const ls_particle_store *ps, const ls_particle_system *s, ls_pcon *c)
{
    (void)ps;
    (void)s;
    c->wa = c->wb = 0;
}

const ls_pcon_kind ls_pcon_pin_kind_ = {"pin", pin_init, pin_project, pin_weights};
