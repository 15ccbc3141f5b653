// SPDX-License-Identifier: MIT
// Validation of a restored particle section (SPEC.md §13, §25.8). A snapshot
// is input (a keyframe from a stranger's replay): before a step may use it,
// every system slot, particle and constraint must hold something a world
// could have written, so no assert, out-of-bounds index or undefined
// behaviour is reachable. Derived data is then rebuilt.
#include "../collision/shape_kind.h"
#include "../math/quat_check.h"
#include "particles_internal.h"

static bool in(ls_fx v, ls_fx lo, ls_fx hi)
{
    return v >= lo && v <= hi;
}

static bool vec_in(ls_vec3 v, ls_fx lim)
{
    return in(v.x, -lim, lim) && in(v.y, -lim, lim) && in(v.z, -lim, lim);
}

static bool len_ok(ls_fx v)
{
    return in(v, LS_PARTICLE_LEN_MIN, LS_PARTICLE_LEN_MAX);
}

static bool quat_unit(ls_quat q)
{
    return ls_quat_is_stored_unit(q);
}

static const char *system_problem(ls_particle_system *s)
{
    if (s->iterations < 1 || s->iterations > 64 || !in(s->damping, 0, LS_FX_ONE) ||
        !in(s->gravity_scale, -LS_FX_INT(16), LS_FX_INT(16)) || !in(s->friction, 0, LS_FX_INT(4)) ||
        !vec_in(s->acceleration, LS_FX_INT(1000)) || !in(s->turbulence, 0, LS_FX_INT(1000)) ||
        (s->rng.inc & 1u) == 0) {
        return "particle system parameters";
    }
    return NULL;
}

// A particle body's embedded shape: its kind's creation ranges, its data.
static const char *embed_problem(ls_world *w, ls_particle_system *s)
{
    ls_particle_embed *e = &s->embed;
    uint32_t need = e->arrangement == LS_PARTICLE_BODY_TETRA ? 4u : 8u;
    if (s->count != need || !vec_in(e->extent, LS_FX_INT(128)) || e->extent.x <= 0 ||
        e->extent.y <= 0 || e->extent.z <= 0 || !vec_in(e->local_p, LS_FX_INT(128)) ||
        !quat_unit(e->local_q)) {
        return "particle body arrangement";
    }
    ls_shape_type k = e->geom.kind;
    if (k != LS_SHAPE_SPHERE && k != LS_SHAPE_BOX && k != LS_SHAPE_CAPSULE && k != LS_SHAPE_HULL) {
        return "particle body shape kind";
    }
    const ls_shape_kind *kind = ls_shape_kind_of(k);
    if (kind->needs_data) {
        if (e->geometry >= w->geometry_count || w->geometry[e->geometry].kind != k) {
            return "particle body shape data index";
        }
        ls_world_geometry_bind_(w, &e->geom, e->geometry);
    } else if (e->geometry != UINT32_MAX) {
        return "particle body shape data index";
    } else {
        e->geom.hull = NULL;
        e->geom.mesh = NULL;
    }
    if (!kind->check(&e->geom, NULL)) {
        return "particle body shape geometry";
    }
    return NULL;
}

static const char *particle_problem(const ls_particle_store *ps, uint32_t i)
{
    const ls_particle *p = &ps->p[i];
    if (!vec_in(ps->x[i], LS_PARTICLE_POS_MAX) || !vec_in(ps->x_old[i], LS_PARTICLE_POS_MAX)) {
        return "particle position";
    }
    if (!in(p->inv_mass, 0, LS_FX_INT(1000)) || !in(p->radius, 0, LS_FX_INT(64)) ||
        p->force.x == INT32_MIN || p->force.y == INT32_MIN || p->force.z == INT32_MIN) {
        return "particle mass, radius or force";
    }
    return NULL;
}

static const char *constraint_problem(const ls_world *w, const ls_particle_system *s,
                                      const ls_pcon *c)
{
    uint32_t n = s->count;
    bool two = c->type != LS_PARTICLE_PIN;
    if (c->a >= n || (two && (c->b >= n || c->a == c->b)) ||
        (c->type == LS_PARTICLE_ANGLE && (c->c >= n || c->c == c->a || c->c == c->b))) {
        return "constraint particles";
    }
    if (!in(c->stiffness, 1, LS_FX_ONE) ||
        (c->type == LS_PARTICLE_PIN && c->stiffness != LS_FX_ONE)) {
        return "constraint stiffness";
    }
    bool tears = c->type == LS_PARTICLE_STICK || (c->type == LS_PARTICLE_RANGE && c->rest_max);
    if (c->tear != 0 && (!tears || !in(c->tear, LS_FX_ONE, LS_FX_INT(64)))) {
        return "constraint tear ratio";
    }
    switch (c->type) {
    case LS_PARTICLE_STICK:
        return len_ok(c->rest) ? NULL : "stick length";
    case LS_PARTICLE_RANGE:
    case LS_PARTICLE_ANGLE:
        if ((c->rest != 0 && !len_ok(c->rest)) || (c->rest_max != 0 && !len_ok(c->rest_max)) ||
            (c->rest_max != 0 && c->rest > c->rest_max) ||
            (c->type == LS_PARTICLE_RANGE && c->rest == 0 && c->rest_max == 0)) {
            return "range bounds";
        }
        return NULL;
    default: // pin
        if (c->body == UINT32_MAX
                ? !vec_in(c->target, LS_PARTICLE_POS_MAX)
                : c->body >= w->def.max_bodies || !vec_in(c->target, LS_FX_INT(128))) {
            return "pin body or target";
        }
        return NULL;
    }
}

const char *ls_particles_state_problem_(ls_world *w, uint32_t *where)
{
    ls_particle_store *ps = w->particles;
    if (!ps) {
        return NULL;
    }
    uint32_t alive = 0;
    for (uint32_t i = 0; i < ps->system_high; i++) {
        ls_particle_system *s = &ps->systems[i];
        *where = i;
        if (!s->alive) {
            continue;
        }
        alive++;
        const char *why = system_problem(s);
        if (!why && s->kind == LS_PARTICLES_BODY) {
            why = embed_problem(w, s);
        }
        for (uint32_t k = 0; !why && k < s->count; k++) {
            why = particle_problem(ps, s->first + k);
        }
        for (uint32_t k = 0; !why && k < s->con_count; k++) {
            why = constraint_problem(w, s, &ps->con[s->con_first + k]);
        }
        if (why) {
            return why;
        }
    }
    if (alive != ps->system_count) {
        return "live particle system count";
    }
    uint32_t steps = 0;
    for (uint32_t i = ps->free_head; i != UINT32_MAX; i = ps->next_free[i]) {
        *where = i;
        if (i >= ps->system_high || ps->systems[i].alive || ++steps > ps->system_high) {
            return "free particle system list";
        }
    }
    if (ps->overflow_system > ps->system_high) {
        return "particle overflow record";
    }
    return NULL;
}

void ls_particles_after_restore_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    ls_particle_system_id none = {0, 0};
    w->info.overflow_system = none;
    w->info.overflow_particle = 0;
    if (!ps) {
        return;
    }
    for (uint32_t i = 0; i < ps->system_high; i++) {
        if (ps->systems[i].alive) {
            ls_particles_update_weights_(w, &ps->systems[i]);
            ps->systems[i].batches_dirty = true;
        }
    }
    ps->event_count = 0;
    ls_particle_system_id id = {ps->overflow_system, ps->overflow_generation};
    w->info.overflow_system = id;
    w->info.overflow_particle = ps->overflow_particle;
}
