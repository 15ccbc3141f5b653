// SPDX-License-Identifier: MIT
// Particle systems (SPEC.md §25): the world's particle store, system slots
// (ids with generations and a LIFO free list, like bodies), particles and
// their accessors, derived data (effective inverse masses, constraint
// weights) and the overflow record.
//
// Pools: a system reserves a contiguous range of each pool at creation
// (def.max_particles, def.max_constraints). Destroying one moves the ranges
// after it down (memmove, outside any step), so the pools never fragment and
// creation never searches. Constraints name particles by their index in the
// system, so moving a range changes nothing they hold.
#include "stick.h"

#include "../../../core/src/error_field.h"
#include "../world/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- Errors ----

ls_result ls_particles_fail_(ls_error *err, ls_result code, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_error_set_fieldv_(err, code, field, fmt, ap);
    va_end(ap);
    return code;
}

// ---- Store lifetime ----

static bool has_store(const ls_world_def *def)
{
    return def->max_particles > 0 && def->max_particle_systems > 0;
}

static size_t at_least_one(uint32_t n)
{
    return n ? n : 1;
}

size_t ls_particles_memory_size_(const ls_world_def *def)
{
    if (!has_store(def)) {
        return 0;
    }
    const ls_particle_store *ps = NULL; // sizeof only
    size_t ns = def->max_particle_systems, np = def->max_particles;
    size_t nc = at_least_one(def->max_particle_constraints);
    return sizeof *ps + ns * (sizeof *ps->systems + sizeof *ps->next_free) +
           np * (sizeof *ps->x + sizeof *ps->x_old + sizeof *ps->p + sizeof *ps->contact) +
           nc * sizeof *ps->con + LS_PARTICLE_EVENTS_MAX * sizeof *ps->events +
           ls_particles_collide_memory_size_(def);
}

void ls_particles_destroy_(ls_particle_store *ps)
{
    if (!ps) {
        return;
    }
    ls_particles_collide_free_(ps);
    free(ps->systems);
    free(ps->next_free);
    free(ps->x);
    free(ps->x_old);
    free(ps->p);
    free(ps->contact);
    free(ps->con);
    free(ps->events);
    free(ps);
}

ls_particle_store *ls_particles_create_(const ls_world_def *def, bool *ok)
{
    *ok = true;
    if (!has_store(def)) {
        return NULL;
    }
    ls_particle_store *ps = calloc(1, sizeof *ps);
    if (!ps) {
        *ok = false;
        return NULL;
    }
    ps->max_systems = def->max_particle_systems;
    ps->max_particles = def->max_particles;
    ps->max_constraints = def->max_particle_constraints;
    ps->free_head = UINT32_MAX;
    bool avx2 = def->simd != LS_SIMD_SCALAR && ls_stick_avx2_supported_();
    ps->stick_kernel = avx2 ? ls_stick_project_avx2_ : ls_stick_project_scalar_;
    ps->systems = calloc(ps->max_systems, sizeof *ps->systems);
    ps->next_free = calloc(ps->max_systems, sizeof *ps->next_free);
    ps->x = calloc(ps->max_particles, sizeof *ps->x);
    ps->x_old = calloc(ps->max_particles, sizeof *ps->x_old);
    ps->p = calloc(ps->max_particles, sizeof *ps->p);
    ps->contact = calloc(ps->max_particles, sizeof *ps->contact);
    ps->con = calloc(at_least_one(ps->max_constraints), sizeof *ps->con);
    ps->events = calloc(LS_PARTICLE_EVENTS_MAX, sizeof *ps->events);
    if (!ps->systems || !ps->next_free || !ps->x || !ps->x_old || !ps->p || !ps->contact ||
        !ps->con || !ps->events || !ls_particles_collide_init_(ps, def)) {
        ls_particles_destroy_(ps);
        *ok = false;
        return NULL;
    }
    return ps;
}

void ls_particles_clear_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    if (!ps) {
        return;
    }
    ps->system_high = ps->system_count = 0;
    ps->free_head = UINT32_MAX;
    ps->particles_used = ps->constraints_used = 0;
    ps->event_count = 0;
    ps->overflow_system = ps->overflow_generation = ps->overflow_particle = 0;
}

// ---- Ids ----

ls_particle_system_id ls_particle_system_id_of_(const ls_world *w, uint32_t i)
{
    ls_particle_system_id id = {i + 1, w->particles->systems[i].generation};
    return id;
}

ls_particle_system *ls_particle_system_(const ls_world *w, ls_particle_system_id id)
{
    const ls_particle_store *ps = w ? w->particles : NULL;
    if (!ps || id.index1 == 0 || id.index1 > ps->system_high) {
        return NULL;
    }
    ls_particle_system *s = &ps->systems[id.index1 - 1];
    return s->alive && s->generation == id.generation ? s : NULL;
}

// The live system of an id, asserting (the single-field getters, SPEC.md §19.2).
static const ls_particle_system *live_system(const ls_world *w, ls_particle_system_id id)
{
    const ls_particle_system *s = ls_particle_system_(w, id);
    LS_ASSERT(s != NULL && "stale or destroyed particle system id");
    return s;
}

bool ls_particle_system_is_valid(const ls_world *w, ls_particle_system_id id)
{
    return ls_particle_system_(w, id) != NULL;
}

uint32_t ls_world_particle_system_count(const ls_world *w)
{
    return w->particles ? w->particles->system_count : 0;
}

ls_particle_system_id ls_world_particle_system_at(const ls_world *w, uint32_t index)
{
    ls_particle_system_id none = {0, 0};
    const ls_particle_store *ps = w->particles;
    if (!ps || index >= ps->system_high || !ps->systems[index].alive) {
        return none;
    }
    return ls_particle_system_id_of_(w, index);
}

ls_particle_system_kind ls_particle_system_kind_of(const ls_world *w, ls_particle_system_id id)
{
    const ls_particle_system *s = live_system(w, id);
    return s ? (ls_particle_system_kind)s->kind : LS_PARTICLES_GENERIC;
}

uint64_t ls_particle_system_user_data(const ls_world *w, ls_particle_system_id id)
{
    const ls_particle_system *s = live_system(w, id);
    return s ? s->user_data : 0;
}

// ---- Definitions ----

ls_particle_system_def ls_default_particle_system_def(void)
{
    ls_particle_system_def d;
    memset(&d, 0, sizeof d);
    d.max_particles = 16;
    d.max_constraints = 64;
    d.iterations = 4;
    d.stick_mode = LS_STICK_APPROX;
    d.damping = 0;
    d.gravity_scale = LS_FX_ONE;
    d.friction = LS_FX_HALF;
    d.category = 1;
    d.mask = UINT32_MAX;
    d.collide_particles = true;
    d.cookie = LS_DEF_COOKIE;
    return d;
}

ls_particle_def ls_default_particle_def(void)
{
    ls_particle_def d;
    memset(&d, 0, sizeof d);
    d.mass = LS_FX_ONE;
    d.radius = 1311; // 0.02 m
    d.cookie = LS_DEF_COOKIE;
    return d;
}

static bool in_range(ls_fx v, ls_fx lo, ls_fx hi)
{
    return v >= lo && v <= hi;
}

static bool vec_in(ls_vec3 v, ls_fx lim)
{
    return in_range(v.x, -lim, lim) && in_range(v.y, -lim, lim) && in_range(v.z, -lim, lim);
}

// Field name with the builder's prefix ("system." inside a builder's def).
static const char *field(char *buf, size_t size, const char *prefix, const char *name)
{
    snprintf(buf, size, "%s%s", prefix, name);
    return buf;
}

ls_result ls_particles_check_system_def_(const ls_world *w, const ls_particle_system_def *d,
                                         const char *prefix, bool check_capacity, ls_error *err)
{
    char f[LS_ERROR_FIELD_MAX];
    if (d->iterations < 1 || d->iterations > 64) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  field(f, sizeof f, prefix, "iterations"),
                                  "iterations %u outside 1..64", d->iterations);
    }
    if ((uint32_t)d->stick_mode > (uint32_t)LS_STICK_EXACT) {
        return ls_particles_fail_(
            err, LS_ERR_INVALID_ARGUMENT, field(f, sizeof f, prefix, "stick_mode"),
            "stick_mode %d is neither approx (0) nor exact (1)", (int)d->stick_mode);
    }
    if (!in_range(d->damping, 0, LS_FX_ONE)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, field(f, sizeof f, prefix, "damping"),
                                  "damping must be 0..1");
    }
    if (!in_range(d->gravity_scale, -LS_FX_INT(16), LS_FX_INT(16))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  field(f, sizeof f, prefix, "gravity_scale"),
                                  "gravity_scale must be -16..16");
    }
    if (!in_range(d->friction, 0, LS_FX_INT(4))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, field(f, sizeof f, prefix, "friction"),
                                  "friction must be 0..4");
    }
    if (!vec_in(d->acceleration, LS_FX_INT(1000))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  field(f, sizeof f, prefix, "acceleration"),
                                  "acceleration components must be within +-1000 m/s^2");
    }
    if (!in_range(d->turbulence, 0, LS_FX_INT(1000))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  field(f, sizeof f, prefix, "turbulence"),
                                  "turbulence must be 0..1000 m/s^2");
    }
    if (!check_capacity) {
        return LS_OK;
    }
    const ls_particle_store *ps = w->particles;
    if (d->max_particles < 1) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  field(f, sizeof f, prefix, "max_particles"),
                                  "a system reserves at least one particle");
    }
    if (!ps || ps->system_count >= ps->max_systems) {
        return ls_particles_fail_(err, LS_ERR_CAPACITY, "max_particle_systems",
                                  "the world is full: max_particle_systems is %u",
                                  ps ? ps->max_systems : 0);
    }
    if (d->max_particles > ps->max_particles - ps->particles_used) {
        return ls_particles_fail_(err, LS_ERR_CAPACITY, field(f, sizeof f, prefix, "max_particles"),
                                  "%u particles do not fit: %u of the world's max_particles %u "
                                  "are free",
                                  d->max_particles, ps->max_particles - ps->particles_used,
                                  ps->max_particles);
    }
    if (d->max_constraints > ps->max_constraints - ps->constraints_used) {
        return ls_particles_fail_(
            err, LS_ERR_CAPACITY, field(f, sizeof f, prefix, "max_constraints"),
            "%u constraints do not fit: %u of the world's "
            "max_particle_constraints %u are free",
            d->max_constraints, ps->max_constraints - ps->constraints_used, ps->max_constraints);
    }
    return LS_OK;
}

// ---- Systems ----

static uint32_t take_slot(ls_particle_store *ps)
{
    if (ps->free_head != UINT32_MAX) {
        uint32_t i = ps->free_head;
        ps->free_head = ps->next_free[i];
        return i;
    }
    return ps->system_high < ps->max_systems ? ps->system_high++ : UINT32_MAX;
}

ls_particle_system *ls_particles_new_system_(ls_world *w, const ls_particle_system_def *def,
                                             uint8_t kind, uint32_t *slot)
{
    ls_particle_store *ps = w->particles;
    uint32_t i = take_slot(ps);
    LS_ASSERT(i != UINT32_MAX); // checked by ls_particles_check_system_def_
    ls_particle_system *s = &ps->systems[i];
    uint32_t gen = s->generation + 1;
    memset(s, 0, sizeof *s);
    s->generation = gen;
    s->alive = true;
    s->kind = kind;
    s->stick_mode = (uint8_t)def->stick_mode;
    s->flags = def->collide_particles ? LS_PSYS_F_COLLIDE_PARTICLES : 0u;
    s->iterations = def->iterations;
    s->damping = def->damping;
    s->gravity_scale = def->gravity_scale;
    s->friction = def->friction;
    s->acceleration = def->acceleration;
    s->turbulence = def->turbulence;
    s->rng = ls_rng_make(def->seed, LS_PARTICLE_RNG_STREAM);
    s->category = def->category;
    s->mask = def->mask;
    s->user_data = def->user_data;
    s->cap = def->max_particles;
    s->con_cap = def->max_constraints;
    s->embed.geometry = UINT32_MAX;
    s->first = ps->particles_used;
    s->con_first = ps->constraints_used;
    ps->particles_used += s->cap;
    ps->constraints_used += s->con_cap;
    ps->system_count++;
    *slot = i;
    return s;
}

ls_particle_system_id ls_particle_system_create(ls_world *w, const ls_particle_system_def *def,
                                                ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_particle_system_id){0, 0};
    }
    ls_particle_system_id none = {0, 0};
    if (!w || !def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world or no particle system definition");
        return none;
    }
    if (ls_def_missing_(def->cookie, "particle_system_def", err)) {
        return none;
    }
    if (ls_particles_check_system_def_(w, def, "", true, err) != LS_OK) {
        return none;
    }
    uint32_t slot;
    ls_particles_new_system_(w, def, LS_PARTICLES_GENERIC, &slot);
    ls_error_clear(err);
    return ls_particle_system_id_of_(w, slot);
}

// Move pool entries [from, used) down to `to`.
static void compact(ls_particle_store *ps, uint32_t to, uint32_t from, uint32_t used,
                    bool particles)
{
    if (from >= used) {
        return;
    }
    size_t n = used - from;
    if (particles) {
        memmove(ps->x + to, ps->x + from, n * sizeof *ps->x);
        memmove(ps->x_old + to, ps->x_old + from, n * sizeof *ps->x_old);
        memmove(ps->p + to, ps->p + from, n * sizeof *ps->p);
        memmove(ps->contact + to, ps->contact + from, n * sizeof *ps->contact);
    } else {
        memmove(ps->con + to, ps->con + from, n * sizeof *ps->con);
    }
}

ls_result ls_particle_system_destroy(ls_world *w, ls_particle_system_id id)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s = ls_particle_system_(w, id);
    if (!s) {
        return LS_ERR_INVALID_ID;
    }
    ls_particle_store *ps = w->particles;
    compact(ps, s->first, s->first + s->cap, ps->particles_used, true);
    compact(ps, s->con_first, s->con_first + s->con_cap, ps->constraints_used, false);
    for (uint32_t i = 0; i < ps->system_high; i++) {
        ls_particle_system *o = &ps->systems[i];
        if (o->alive && o != s) {
            o->first -= o->first > s->first ? s->cap : 0;
            o->con_first -= o->con_first > s->con_first ? s->con_cap : 0;
        }
    }
    ps->particles_used -= s->cap;
    ps->constraints_used -= s->con_cap;
    uint32_t slot = id.index1 - 1;
    s->alive = false;
    ps->next_free[slot] = ps->free_head;
    ps->free_head = slot;
    ps->system_count--;
    return LS_OK;
}

ls_result ls_particle_system_set_wind(ls_world *w, ls_particle_system_id id, ls_vec3 acceleration,
                                      ls_fx turbulence)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s = ls_particle_system_(w, id);
    if (!s) {
        return LS_ERR_INVALID_ID;
    }
    if (!vec_in(acceleration, LS_FX_INT(1000)) || !in_range(turbulence, 0, LS_FX_INT(1000))) {
        return LS_ERR_OUT_OF_RANGE;
    }
    s->acceleration = acceleration;
    s->turbulence = turbulence;
    return LS_OK;
}

ls_result ls_particle_system_set_iterations(ls_world *w, ls_particle_system_id id,
                                            uint32_t iterations)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s = ls_particle_system_(w, id);
    if (!s) {
        return LS_ERR_INVALID_ID;
    }
    if (iterations < 1 || iterations > 64) {
        return LS_ERR_OUT_OF_RANGE;
    }
    s->iterations = iterations;
    return LS_OK;
}

// ---- Particles ----

// Inverse mass of a definition's mass (0 = immovable).
static ls_fx inverse_mass(ls_fx mass)
{
    return mass == 0 ? 0 : ls_fx_div(LS_FX_ONE, mass);
}

static bool mass_ok(ls_fx mass)
{
    return mass == 0 || in_range(mass, 66, LS_FX_INT(1000)); // 0.001..1000 kg
}

ls_result ls_particles_check_particle_def_(const ls_particle_def *d, const char *prefix,
                                           ls_error *err)
{
    char f[LS_ERROR_FIELD_MAX];
    if (!vec_in(d->position, LS_PARTICLE_POS_MAX)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, field(f, sizeof f, prefix, "position"),
                                  "particle position components must be within +-2048 m");
    }
    if (!vec_in(d->velocity, LS_FX_INT(512))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, field(f, sizeof f, prefix, "velocity"),
                                  "particle velocity components must be within +-512 m/s");
    }
    if (!mass_ok(d->mass)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, field(f, sizeof f, prefix, "mass"),
                                  "particle mass must be 0 (immovable) or 0.001..1000 kg");
    }
    if (!in_range(d->radius, 0, LS_FX_INT(64))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, field(f, sizeof f, prefix, "radius"),
                                  "particle radius must be 0..64 m");
    }
    return LS_OK;
}

uint32_t ls_particles_push_(ls_world *w, ls_particle_system *s, const ls_particle_def *d)
{
    ls_particle_store *ps = w->particles;
    uint32_t i = s->first + s->count;
    ps->x[i] = d->position;
    ps->x_old[i] = ls_vec3_sub(d->position, ls_vec3_scale(d->velocity, w->dt));
    memset(&ps->p[i], 0, sizeof ps->p[i]);
    ps->p[i].inv_mass = inverse_mass(d->mass);
    ps->p[i].w = ps->p[i].inv_mass;
    ps->p[i].radius = d->radius;
    memset(&ps->contact[i], 0, sizeof ps->contact[i]);
    ps->contact[i].shape = ps->contact[i].body = UINT32_MAX;
    return s->count++;
}

uint32_t ls_particle_add(ls_world *w, ls_particle_system_id id, const ls_particle_def *def,
                         ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return UINT32_MAX;
    }
    if (def && ls_def_missing_(def->cookie, "particle_def", err)) {
        return UINT32_MAX;
    }
    ls_particle_system *s = ls_particle_system_(w, id);
    if (!s || !def) {
        ls_particles_fail_(err, s ? LS_ERR_INVALID_ARGUMENT : LS_ERR_INVALID_ID, "system",
                           s ? "no particle definition" : "stale or destroyed particle system id");
        return UINT32_MAX;
    }
    if (ls_particles_check_particle_def_(def, "", err) != LS_OK) {
        return UINT32_MAX;
    }
    if (s->count >= s->cap) {
        ls_particles_fail_(err, LS_ERR_CAPACITY, "max_particles",
                           "the system is full: it reserved %u particles", s->cap);
        return UINT32_MAX;
    }
    uint32_t i = ls_particles_push_(w, s, def);
    ls_error_clear(err);
    return i;
}

uint32_t ls_particle_count(const ls_world *w, ls_particle_system_id id)
{
    const ls_particle_system *s = ls_particle_system_(w, id);
    return s ? s->count : 0;
}

const ls_vec3 *ls_particle_positions(const ls_world *w, ls_particle_system_id id, uint32_t *count)
{
    const ls_particle_system *s = ls_particle_system_(w, id);
    if (count) {
        *count = s ? s->count : 0;
    }
    return s ? w->particles->x + s->first : NULL;
}

ls_result ls_particle_get_state(const ls_world *w, ls_particle_system_id id, uint32_t index,
                                ls_particle_state *out, ls_error *err)
{
    const ls_particle_system *s = ls_particle_system_(w, id);
    if (!s) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ID, "system",
                                  "stale or destroyed particle system id");
    }
    if (index >= s->count) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "index",
                                  "particle %u of a system of %u", index, s->count);
    }
    const ls_particle_store *ps = w->particles;
    uint32_t i = s->first + index;
    out->position = ps->x[i];
    out->previous = ps->x_old[i];
    ls_vec3 d = ls_vec3_sub(ps->x[i], ps->x_old[i]);
    out->velocity =
        ls_vec3_make(ls_fx_div(d.x, w->dt), ls_fx_div(d.y, w->dt), ls_fx_div(d.z, w->dt));
    out->inv_mass = ps->p[i].w;
    out->radius = ps->p[i].radius;
    out->force = ps->p[i].force;
    ls_error_clear(err);
    return LS_OK;
}

// Pool index of a live system's particle, asserting (single-field getters).
static uint32_t live_particle(const ls_world *w, ls_particle_system_id id, uint32_t index)
{
    const ls_particle_system *s = live_system(w, id);
    LS_ASSERT(s == NULL || index < s->count);
    return s && index < s->count ? s->first + index : UINT32_MAX;
}

ls_vec3 ls_particle_position(const ls_world *w, ls_particle_system_id id, uint32_t index)
{
    uint32_t i = live_particle(w, id, index);
    return i != UINT32_MAX ? w->particles->x[i] : ls_vec3_zero();
}

ls_vec3 ls_particle_previous(const ls_world *w, ls_particle_system_id id, uint32_t index)
{
    uint32_t i = live_particle(w, id, index);
    return i != UINT32_MAX ? w->particles->x_old[i] : ls_vec3_zero();
}

// The mutable particle of (id, index), or NULL with *code set.
static uint32_t mutable_particle(const ls_world *w, ls_particle_system_id id, uint32_t index,
                                 ls_particle_system **sys, ls_result *code)
{
    ls_particle_system *s = ls_particle_system_(w, id);
    *sys = s;
    if (!s) {
        *code = LS_ERR_INVALID_ID;
        return UINT32_MAX;
    }
    if (index >= s->count) {
        *code = LS_ERR_OUT_OF_RANGE;
        return UINT32_MAX;
    }
    *code = LS_OK;
    return s->first + index;
}

ls_result ls_particle_set_position(ls_world *w, ls_particle_system_id id, uint32_t index,
                                   ls_vec3 position, ls_vec3 previous)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s;
    ls_result r;
    uint32_t i = mutable_particle(w, id, index, &s, &r);
    if (r != LS_OK) {
        return r;
    }
    if (!vec_in(position, LS_PARTICLE_POS_MAX) || !vec_in(previous, LS_PARTICLE_POS_MAX)) {
        return LS_ERR_OUT_OF_RANGE;
    }
    w->particles->x[i] = position;
    w->particles->x_old[i] = previous;
    return LS_OK;
}

ls_result ls_particle_set_mass(ls_world *w, ls_particle_system_id id, uint32_t index, ls_fx mass)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s;
    ls_result r;
    uint32_t i = mutable_particle(w, id, index, &s, &r);
    if (r != LS_OK) {
        return r;
    }
    if (!mass_ok(mass)) {
        return LS_ERR_OUT_OF_RANGE;
    }
    w->particles->p[i].inv_mass = inverse_mass(mass);
    ls_particles_update_weights_(w, s);
    return LS_OK;
}

ls_result ls_particle_apply_force(ls_world *w, ls_particle_system_id id, uint32_t index,
                                  ls_vec3 force)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_particle_system *s;
    ls_result r;
    uint32_t i = mutable_particle(w, id, index, &s, &r);
    if (r != LS_OK) {
        return r;
    }
    ls_particle *p = &w->particles->p[i];
    p->force = ls_vec3_add(p->force, force);
    return LS_OK;
}

// ---- Derived data ----

void ls_particles_update_weights_(ls_world *w, ls_particle_system *s)
{
    ls_particle_store *ps = w->particles;
    ls_particle *p = ps->p + s->first;
    ls_pcon *c = ps->con + s->con_first;
    for (uint32_t i = 0; i < s->count; i++) {
        p[i].pins = 0;
    }
    for (uint32_t k = 0; k < s->con_count; k++) {
        if (c[k].type == LS_PARTICLE_PIN && (c[k].flags & LS_PCON_F_ENABLED) &&
            !(c[k].flags & LS_PCON_F_TORN)) {
            p[c[k].a].pins++;
        }
    }
    for (uint32_t i = 0; i < s->count; i++) {
        p[i].w = p[i].pins ? 0 : p[i].inv_mass;
    }
    for (uint32_t k = 0; k < s->con_count; k++) {
        ls_pcon_kind_of_(c[k].type)->weights(ps, s, &c[k]);
    }
}

void ls_particles_rebuild_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    if (!ps) {
        return;
    }
    ps->particles_used = ps->constraints_used = 0;
    for (uint32_t i = 0; i < ps->system_high; i++) {
        ls_particle_system *s = &ps->systems[i];
        if (!s->alive) {
            continue;
        }
        s->first = ps->particles_used;
        s->con_first = ps->constraints_used;
        ps->particles_used += s->cap;
        ps->constraints_used += s->con_cap;
    }
}

void ls_particles_report_overflow_(ls_world *w, uint32_t si, uint32_t i)
{
    ls_particle_store *ps = w->particles;
    if (w->info.overflow_count == 0) {
        w->info.overflow_tick = w->tick + 1;
        ps->overflow_system = si + 1;
        ps->overflow_generation = ps->systems[si].generation;
        ps->overflow_particle = i;
        w->info.overflow_system = ls_particle_system_id_of_(w, si);
        w->info.overflow_particle = i;
    }
    w->info.overflow_count++;
}
