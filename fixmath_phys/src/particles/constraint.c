// SPDX-License-Identifier: MIT
// Particle constraints (SPEC.md §25.4): the one kind table (stick.c,
// range.c, pin.c, angle.c implement the kinds), creation with per-kind
// validation, accessors, enabling, pin targets and tear events.
//
// Order: a system's constraints are relaxed in creation order (their index),
// which is part of the simulation input, like the order bodies are created
// in: Gauss-Seidel results depend on it (seed §4 item 27), and any fixed
// order is bit-reproducible everywhere.
#include "particles_internal.h"

#include <string.h>

static const ls_pcon_kind *const kinds[LS_PARTICLE_CONSTRAINT_KIND_COUNT] = {
    &ls_pcon_stick_kind_,
    &ls_pcon_range_kind_,
    &ls_pcon_pin_kind_,
    &ls_pcon_angle_kind_,
};

const ls_pcon_kind *ls_pcon_kind_of_(uint32_t type)
{
    return type < LS_PARTICLE_CONSTRAINT_KIND_COUNT ? kinds[type] : NULL;
}

ls_particle_constraint_def ls_default_particle_constraint_def(void)
{
    ls_particle_constraint_def d;
    memset(&d, 0, sizeof d);
    d.type = LS_PARTICLE_STICK;
    d.a = 0;
    d.b = 1;
    d.c = 2;
    d.max_angle = LS_FX_PI;
    d.stiffness = LS_FX_ONE;
    d.cookie = LS_DEF_COOKIE;
    return d;
}

ls_result ls_pcon_check_index_(const ls_particle_system *s, uint32_t i, const char *name,
                               ls_error *err)
{
    if (i >= s->count) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, name,
                                  "particle %u does not exist (the system has %u)", i, s->count);
    }
    return LS_OK;
}

ls_result ls_pcon_check_common_(const ls_particle_constraint_def *d, bool tear, ls_error *err)
{
    if (d->stiffness <= 0 || d->stiffness > LS_FX_ONE) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "stiffness",
                                  "stiffness must be in (0, 1]");
    }
    if (d->tear_ratio != 0 &&
        (!tear || d->tear_ratio < LS_FX_ONE || d->tear_ratio > LS_FX_INT(64))) {
        return ls_particles_fail_(
            err, tear ? LS_ERR_OUT_OF_RANGE : LS_ERR_INVALID_ARGUMENT, "tear_ratio",
            tear ? "tear_ratio must be 0 (never) or 1..64" : "only sticks and ranges tear");
    }
    return LS_OK;
}

uint32_t ls_particles_push_constraint_(ls_world *w, ls_particle_system *s,
                                       const ls_particle_constraint_def *d, ls_error *err)
{
    const ls_pcon_kind *kind = ls_pcon_kind_of_((uint32_t)d->type);
    if (!kind) {
        ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "type", "unknown constraint type %d",
                           (int)d->type);
        return UINT32_MAX;
    }
    if (s->con_count >= s->con_cap) {
        ls_particles_fail_(err, LS_ERR_CAPACITY, "max_constraints",
                           "the system is full: it reserved %u constraints", s->con_cap);
        return UINT32_MAX;
    }
    ls_pcon c;
    memset(&c, 0, sizeof c);
    c.type = (uint8_t)d->type;
    c.flags = LS_PCON_F_ENABLED;
    c.stiffness = d->type == LS_PARTICLE_PIN ? LS_FX_ONE : d->stiffness;
    c.tear = d->tear_ratio;
    c.body = UINT32_MAX;
    if (kind->init(w, s, d, &c, err) != LS_OK) {
        return UINT32_MAX;
    }
    uint32_t k = s->con_count++;
    s->batches_dirty = true;
    w->particles->con[s->con_first + k] = c;
    if (c.type == LS_PARTICLE_PIN) {
        ls_particles_update_weights_(w, s); // the particle's effective mass becomes 0
    } else {
        kind->weights(w->particles, s, &w->particles->con[s->con_first + k]);
    }
    ls_error_clear(err);
    return k;
}

uint32_t ls_particle_constraint_add(ls_world *w, ls_particle_system_id id,
                                    const ls_particle_constraint_def *def, ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return UINT32_MAX;
    }
    if (def && ls_def_missing_(def->cookie, "particle_constraint_def", err)) {
        return UINT32_MAX;
    }
    ls_particle_system *s = ls_particle_system_(w, id);
    if (!s || !def) {
        ls_particles_fail_(err, s ? LS_ERR_INVALID_ARGUMENT : LS_ERR_INVALID_ID, "system",
                           s ? "no constraint definition"
                             : "stale or destroyed particle system id");
        return UINT32_MAX;
    }
    return ls_particles_push_constraint_(w, s, def, err);
}

uint32_t ls_particle_stick_add(ls_world *w, ls_particle_system_id id, uint32_t a, uint32_t b,
                               ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return UINT32_MAX;
    }
    ls_particle_constraint_def d = ls_default_particle_constraint_def();
    d.a = a;
    d.b = b;
    return ls_particle_constraint_add(w, id, &d, err);
}

uint32_t ls_particle_constraint_count(const ls_world *w, ls_particle_system_id id)
{
    const ls_particle_system *s = ls_particle_system_(w, id);
    return s ? s->con_count : 0;
}

// The constraint of (id, index), or NULL.
static ls_pcon *constraint_of(const ls_world *w, ls_particle_system_id id, uint32_t index,
                              ls_particle_system **sys)
{
    ls_particle_system *s = ls_particle_system_(w, id);
    if (sys) {
        *sys = s;
    }
    return s && index < s->con_count ? &w->particles->con[s->con_first + index] : NULL;
}

static const ls_pcon *live_constraint(const ls_world *w, ls_particle_system_id id, uint32_t index)
{
    const ls_pcon *c = constraint_of(w, id, index, NULL);
    LS_ASSERT(c != NULL && "stale particle system id or constraint index");
    return c;
}

ls_particle_constraint_type ls_particle_constraint_type_of(const ls_world *w,
                                                           ls_particle_system_id id, uint32_t index)
{
    const ls_pcon *c = live_constraint(w, id, index);
    return c ? (ls_particle_constraint_type)c->type : LS_PARTICLE_STICK;
}

bool ls_particle_constraint_is_active(const ls_world *w, ls_particle_system_id id, uint32_t index)
{
    const ls_pcon *c = live_constraint(w, id, index);
    return c && ls_pcon_active_(c);
}

bool ls_particle_constraint_is_torn(const ls_world *w, ls_particle_system_id id, uint32_t index)
{
    const ls_pcon *c = live_constraint(w, id, index);
    return c && (c->flags & LS_PCON_F_TORN);
}

ls_result ls_particle_constraint_set_enabled(ls_world *w, ls_particle_system_id id, uint32_t index,
                                             bool enabled)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s;
    ls_pcon *c = constraint_of(w, id, index, &s);
    if (!c) {
        return s ? LS_ERR_OUT_OF_RANGE : LS_ERR_INVALID_ID;
    }
    uint8_t flags =
        (uint8_t)(enabled ? c->flags | LS_PCON_F_ENABLED : c->flags & ~(unsigned)LS_PCON_F_ENABLED);
    if (flags != c->flags) {
        c->flags = flags;
        if (c->type == LS_PARTICLE_PIN) {
            ls_particles_update_weights_(w, s); // the particle's effective mass changes
        } else {
            ls_pcon_kind_of_(c->type)->weights(w->particles, s, c);
        }
    }
    return LS_OK;
}

ls_result ls_particle_pin_set_target(ls_world *w, ls_particle_system_id id, uint32_t index,
                                     ls_vec3 target)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s;
    ls_pcon *c = constraint_of(w, id, index, &s);
    if (!c) {
        return s ? LS_ERR_OUT_OF_RANGE : LS_ERR_INVALID_ID;
    }
    if (c->type != LS_PARTICLE_PIN) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    ls_fx lim = c->body == UINT32_MAX ? LS_PARTICLE_POS_MAX : LS_FX_INT(128);
    if (ls_fx_abs(target.x) > lim || ls_fx_abs(target.y) > lim || ls_fx_abs(target.z) > lim) {
        return LS_ERR_OUT_OF_RANGE;
    }
    c->target = target;
    return LS_OK;
}

ls_particle_events ls_world_particle_events(const ls_world *w)
{
    ls_particle_events e = {NULL, 0};
    const ls_particle_store *ps = w->particles;
    if (ps && ps->event_tick == w->tick) {
        e.torn = ps->events;
        e.torn_count = ps->event_count;
    }
    return e;
}
