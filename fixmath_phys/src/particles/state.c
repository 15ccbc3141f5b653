// SPDX-License-Identifier: MIT
// The state walk of the particle systems (world/state.h; SPEC.md §12, §13,
// §25.8): the snapshot's particle section, the checksum's, and the
// validation of a restored section. A snapshot is input (a keyframe from a
// stranger's replay): before a step may use it, every system slot, particle
// and constraint must hold something a world could have written, so no
// assert, out-of-bounds index or undefined behaviour is reachable. Derived
// data is then rebuilt.
#include "../world/state.h"
#include "../collision/shape_kind.h"
#include "../math/quat_check.h"
#include "particles_internal.h"

// ---- Snapshot section (section word bit 0) ----

// One particle system slot: 40 words (the next-free link follows).
static void io_particle_system(ls_cursor *c, ls_particle_system *s)
{
    ls_io32_(c, &s->generation);
    uint32_t f = (uint32_t)s->alive | (uint32_t)s->kind << 8 | (uint32_t)s->stick_mode << 16 |
                 s->flags << 24;
    ls_io32_(c, &f);
    if (!c->save && ((f & 0xFEu) != 0 || ((f >> 8) & 0xFFu) >= LS_PARTICLES_KIND_COUNT ||
                     ((f >> 16) & 0xFFu) > LS_STICK_EXACT || (f >> 24) > LS_PSYS_F_ALL)) {
        ls_cursor_fail_(c, NULL, LS_ERR_CORRUPT);
    }
    s->alive = f & 1u;
    s->kind = (uint8_t)(f >> 8);
    s->stick_mode = (uint8_t)(f >> 16);
    s->flags = f >> 24;
    ls_io32_(c, &s->iterations);
    ls_io32_(c, &s->damping);
    ls_io32_(c, &s->gravity_scale);
    ls_io32_(c, &s->friction);
    ls_io_vec3_(c, &s->acceleration);
    ls_io32_(c, &s->turbulence);
    ls_io_u64w_(c, &s->rng.state);
    ls_io_u64w_(c, &s->rng.inc);
    ls_io32_(c, &s->category);
    ls_io32_(c, &s->mask);
    ls_io_u64w_(c, &s->user_data);
    ls_io32_(c, &s->count);
    ls_io32_(c, &s->cap);
    ls_io32_(c, &s->con_count);
    ls_io32_(c, &s->con_cap);
    ls_particle_embed *e = &s->embed;
    uint32_t arrangement = e->arrangement, kind = (uint32_t)e->geom.kind;
    ls_io32_(c, &arrangement);
    ls_io_vec3_(c, &e->extent);
    ls_io32_(c, &kind);
    if (!c->save && (arrangement > LS_PARTICLE_BODY_BOX || kind >= LS_SHAPE_KIND_COUNT)) {
        ls_cursor_fail_(c, NULL, LS_ERR_CORRUPT);
    }
    e->arrangement = (uint8_t)arrangement;
    e->geom.kind = (ls_shape_type)(kind & 0xFFu);
    ls_io32_(c, &e->geometry);
    ls_io32_(c, &e->geom.radius);
    ls_io32_(c, &e->geom.half_height);
    ls_io_vec3_(c, &e->geom.half_extents);
    ls_io_vec3_(c, &e->local_p);
    ls_io_quat_(c, &e->local_q);
}

// One particle: 11 words.
static void io_particle(ls_cursor *c, ls_particle_store *ps, uint32_t i)
{
    ls_io_vec3_(c, &ps->x[i]);
    ls_io_vec3_(c, &ps->x_old[i]);
    ls_io32_(c, &ps->p[i].inv_mass);
    ls_io32_(c, &ps->p[i].radius);
    ls_io_vec3_(c, &ps->p[i].force);
}

// One constraint: 13 words.
static void io_pcon(ls_cursor *c, ls_pcon *k)
{
    uint32_t f = (uint32_t)k->type | (uint32_t)k->flags << 8;
    ls_io32_(c, &f);
    if (!c->save &&
        ((f & 0xFFu) >= LS_PARTICLE_CONSTRAINT_KIND_COUNT || (f >> 8) > LS_PCON_F_ALL)) {
        ls_cursor_fail_(c, NULL, LS_ERR_CORRUPT);
    }
    k->type = (uint8_t)f;
    k->flags = (uint8_t)(f >> 8);
    ls_io32_(c, &k->a);
    ls_io32_(c, &k->b);
    ls_io32_(c, &k->c);
    ls_io32_(c, &k->rest);
    ls_io32_(c, &k->rest_max);
    ls_io32_(c, &k->stiffness);
    ls_io32_(c, &k->tear);
    ls_io_vec3_(c, &k->target);
    ls_io32_(c, &k->body);
    ls_io32_(c, &k->body_generation);
}

// Counts and the overflow record, every system slot with its free-list link,
// then each live system's particles and constraints (slot order). Restore
// checks the reserved capacities against the world's pools before reading
// any particle, then packs the systems' ranges in slot order.
bool ls_particles_state_io_(ls_cursor *c, ls_world *w)
{
    ls_particle_store *ps = w->particles;
    if (!ps) {
        return false; // a world without particle capacity cannot hold the section
    }
    ls_io32_(c, &ps->system_high);
    ls_io32_(c, &ps->system_count);
    ls_io32_(c, &ps->free_head);
    ls_io32_(c, &ps->overflow_system);
    ls_io32_(c, &ps->overflow_generation);
    ls_io32_(c, &ps->overflow_particle);
    if (!c->ok || ps->system_high == 0 || ps->system_high > ps->max_systems ||
        ps->system_count > ps->system_high) {
        return false;
    }
    for (uint32_t i = 0; i < ps->system_high && c->ok; i++) {
        io_particle_system(c, &ps->systems[i]);
        ls_io32_(c, &ps->next_free[i]);
    }
    if (!c->ok) {
        return false;
    }
    if (!c->save) {
        uint64_t np = 0, nc = 0;
        for (uint32_t i = 0; i < ps->system_high; i++) {
            const ls_particle_system *s = &ps->systems[i];
            if (s->alive) {
                if (s->count > s->cap || s->con_count > s->con_cap) {
                    return false;
                }
                np += s->cap;
                nc += s->con_cap;
            }
        }
        if (np > ps->max_particles || nc > ps->max_constraints) {
            return false;
        }
        ls_particles_rebuild_(w);
    }
    for (uint32_t i = 0; i < ps->system_high && c->ok; i++) {
        const ls_particle_system *s = &ps->systems[i];
        if (!s->alive) {
            continue;
        }
        for (uint32_t k = 0; k < s->count && c->ok; k++) {
            io_particle(c, ps, s->first + k);
        }
        for (uint32_t k = 0; k < s->con_count && c->ok; k++) {
            io_pcon(c, &ps->con[s->con_first + k]);
        }
    }
    return c->ok;
}

// ---- Checksum ----

// One particle system (SPEC.md §12): every (state) field but user_data.
static void hash_particle_system(ls_hasher *h, const ls_particle_store *ps, uint32_t i)
{
    const ls_particle_system *s = &ps->systems[i];
    ls_hasher_put_u32(h, i);
    ls_hasher_put_u32(h, s->generation);
    ls_hasher_put_u32(h, (uint32_t)s->kind | (uint32_t)s->stick_mode << 8 | s->flags << 16);
    ls_hasher_put_u32(h, s->iterations);
    ls_hasher_put_fx(h, s->damping);
    ls_hasher_put_fx(h, s->gravity_scale);
    ls_hasher_put_fx(h, s->friction);
    ls_hasher_put_vec3(h, s->acceleration);
    ls_hasher_put_fx(h, s->turbulence);
    ls_hasher_put_u64(h, s->rng.state);
    ls_hasher_put_u64(h, s->rng.inc);
    ls_hasher_put_u32(h, s->category);
    ls_hasher_put_u32(h, s->mask);
    ls_hasher_put_u32(h, s->count);
    ls_hasher_put_u32(h, s->cap);
    ls_hasher_put_u32(h, s->con_count);
    ls_hasher_put_u32(h, s->con_cap);
    const ls_particle_embed *e = &s->embed;
    ls_hasher_put_u32(h, e->arrangement);
    ls_hasher_put_vec3(h, e->extent);
    ls_hasher_put_u32(h, (uint32_t)e->geom.kind);
    ls_hasher_put_u32(h, e->geometry);
    ls_hasher_put_fx(h, e->geom.radius);
    ls_hasher_put_fx(h, e->geom.half_height);
    ls_hasher_put_vec3(h, e->geom.half_extents);
    ls_hasher_put_vec3(h, e->local_p);
    ls_hasher_put_quat(h, e->local_q);
    for (uint32_t k = 0; k < s->count; k++) {
        const ls_particle *p = &ps->p[s->first + k];
        ls_hasher_put_vec3(h, ps->x[s->first + k]);
        ls_hasher_put_vec3(h, ps->x_old[s->first + k]);
        ls_hasher_put_fx(h, p->inv_mass);
        ls_hasher_put_fx(h, p->radius);
        ls_hasher_put_vec3(h, p->force);
    }
    for (uint32_t k = 0; k < s->con_count; k++) {
        const ls_pcon *c = &ps->con[s->con_first + k];
        ls_hasher_put_u32(h, (uint32_t)c->type | (uint32_t)c->flags << 8);
        ls_hasher_put_u32(h, c->a);
        ls_hasher_put_u32(h, c->b);
        ls_hasher_put_u32(h, c->c);
        ls_hasher_put_fx(h, c->rest);
        ls_hasher_put_fx(h, c->rest_max);
        ls_hasher_put_fx(h, c->stiffness);
        ls_hasher_put_fx(h, c->tear);
        ls_hasher_put_vec3(h, c->target);
        ls_hasher_put_u32(h, c->body);
        ls_hasher_put_u32(h, c->body_generation);
    }
}

// Particle systems in slot order (SPEC.md §12, §24). A world that never had a
// particle system hashes nothing here, so its checksum is the one it had
// before particles existed.
void ls_particles_state_hash_(ls_hasher *h, const ls_world *w)
{
    const ls_particle_store *ps = w->particles;
    ls_hasher_put_u32(h, ps->system_count);
    for (uint32_t i = 0; i < ps->system_high; i++) {
        if (ps->systems[i].alive) {
            hash_particle_system(h, ps, i);
        }
    }
}

// True when the world has particle state to save and hash.
bool ls_particles_state_present_(const ls_world *w)
{
    return w->particles && w->particles->system_high > 0;
}

// ---- Restore checks ----

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
