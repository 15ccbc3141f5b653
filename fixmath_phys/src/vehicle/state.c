// SPDX-License-Identifier: MIT
// The state walk of the vehicles and game words (world/state.h; SPEC.md
// §26.7): the snapshot's vehicle section (section word bit 1), the
// checksum's (the same words, user_data left out), and the checks of a
// restored section.
#include "../world/state.h"
#include "vehicle_internal.h"

#include <string.h>

// True when the world has vehicle or game-word state to save and hash
// (SPEC.md §26.7): otherwise it saves and hashes exactly as before vehicles.
bool ls_vehicles_state_present_(const ls_world *w)
{
    return w->vehicle_high > 0 || w->game_words_used;
}

static void io_wheel_def(ls_cursor *c, ls_wheel_def *d)
{
    ls_io_vec3_(c, &d->mount);
    ls_io_vec3_(c, &d->axis);
    ls_io_vec3_(c, &d->forward);
    ls_fx *fx[] = {&d->radius,
                   &d->rest_length,
                   &d->max_travel,
                   &d->stiffness,
                   &d->damping,
                   &d->inertia,
                   &d->drive_share,
                   &d->brake_share,
                   &d->steer_share,
                   &d->static_friction,
                   &d->dynamic_friction,
                   &d->rolling_resistance,
                   &d->anti_roll_stiffness,
                   &d->peak_slip,
                   &d->slide_slip};
    for (size_t k = 0; k < sizeof fx / sizeof fx[0]; k++) {
        ls_io32_(c, fx[k]);
    }
    ls_io_bool_(c, &d->handbrake);
    ls_io32_(c, &d->anti_roll_pair);
}

static void io_wheel_state(ls_cursor *c, ls_wheel_state *st)
{
    ls_io_bool_(c, &st->in_contact);
    ls_io_vec3_(c, &st->contact_point);
    ls_io_vec3_(c, &st->contact_normal);
    ls_io32_(c, &st->ground.index1);
    ls_io32_(c, &st->ground.generation);
    ls_io32_(c, &st->compression);
    ls_io32_(c, &st->suspension_speed);
    ls_io32_(c, &st->suspension_force);
    ls_io32_(c, &st->steer_angle);
    ls_io32_(c, &st->spin_speed);
    ls_io32_(c, &st->spin_angle);
    ls_io_bool_(c, &st->sliding);
    ls_io_vec3_(c, &st->center);
}

// One vehicle slot: generation, alive, definition (user_data last), controls,
// then all LS_VEHICLE_MAX_WHEELS wheel definitions and states (unused ones zero).
static void io_vehicle(ls_cursor *c, ls_vehicle *v, bool with_user_data)
{
    ls_io32_(c, &v->generation);
    ls_io_bool_(c, &v->alive);
    ls_vehicle_def *d = &v->def;
    ls_io32_(c, &d->chassis.index1);
    ls_io32_(c, &d->chassis.generation);
    ls_io32_(c, &d->wheel_count);
    uint32_t probe = (uint32_t)d->probe;
    ls_io32_(c, &probe);
    d->probe = (ls_wheel_probe)(probe & 1u);
    if (!c->save && probe > 1) {
        ls_cursor_fail_(c, NULL, LS_ERR_CORRUPT);
    }
    ls_io32_(c, &d->engine_force);
    ls_io32_(c, &d->brake_force);
    ls_io32_(c, &d->max_steer);
    ls_io32_(c, &d->steer_rate);
    ls_io32_(c, &d->boost_force);
    ls_io32_(c, &d->filter.category);
    ls_io32_(c, &d->filter.mask);
    ls_io32_(c, &d->filter.ignore.index1);
    ls_io32_(c, &d->filter.ignore.generation);
    if (with_user_data) {
        ls_io_u64w_(c, &d->user_data);
    }
    ls_io32_(c, &v->controls.throttle);
    ls_io32_(c, &v->controls.brake);
    ls_io32_(c, &v->controls.steer);
    ls_io_bool_(c, &v->controls.handbrake);
    ls_io_bool_(c, &v->controls.boost);
    ls_io32_(c, &v->steer);
    for (uint32_t k = 0; k < LS_VEHICLE_MAX_WHEELS && c->ok; k++) {
        io_wheel_def(c, &d->wheels[k]);
        io_wheel_state(c, &v->wheels[k]);
    }
}

// What the step relies on in a restored live vehicle: counts, indices and the
// divisors (radius, inertia) in range; anything else is just numbers.
static bool vehicle_ok(const ls_vehicle *v)
{
    const ls_vehicle_def *d = &v->def;
    if (d->wheel_count < 2 || d->wheel_count > LS_VEHICLE_MAX_WHEELS) {
        return false;
    }
    for (uint32_t k = 0; k < d->wheel_count; k++) {
        const ls_wheel_def *wd = &d->wheels[k];
        if (wd->radius < 3277 || wd->radius > LS_FX_INT(4) || wd->inertia < 655 ||
            wd->inertia > LS_FX_INT(100) || wd->rest_length < 655 ||
            wd->rest_length > LS_FX_INT(4) || wd->max_travel < 0 ||
            wd->max_travel > wd->rest_length || wd->anti_roll_pair > d->wheel_count) {
            return false;
        }
    }
    return true;
}

// Game words (used flag + LS_WORLD_GAME_WORDS), vehicle counts, then every
// slot ever used with its free-list link. Restore checks the free list.
bool ls_vehicles_state_io_(ls_cursor *c, ls_world *w)
{
    ls_io_bool_(c, &w->game_words_used);
    for (uint32_t k = 0; k < LS_WORLD_GAME_WORDS; k++) {
        ls_io32_(c, &w->game_words[k]);
    }
    ls_io32_(c, &w->vehicle_high);
    ls_io32_(c, &w->vehicle_count);
    ls_io32_(c, &w->vehicle_free_head);
    if (!c->ok || w->vehicle_high > w->def.max_vehicles || w->vehicle_count > w->vehicle_high) {
        return false;
    }
    for (uint32_t i = 0; i < w->vehicle_high && c->ok; i++) {
        io_vehicle(c, &w->vehicles[i], true);
        ls_io32_(c, &w->vehicle_next_free[i]);
    }
    if (c->save || !c->ok) {
        return c->ok;
    }
    uint32_t cap = w->def.max_vehicles ? w->def.max_vehicles : 1, alive = 0;
    for (uint32_t i = w->vehicle_high; i < cap; i++) {
        memset(&w->vehicles[i], 0, sizeof w->vehicles[i]); // as in a fresh world
        w->vehicle_next_free[i] = 0;
    }
    for (uint32_t i = 0; i < w->vehicle_high; i++) {
        if (w->vehicles[i].alive) {
            alive++;
            if (!vehicle_ok(&w->vehicles[i])) {
                return false;
            }
        }
    }
    // The free list visits each dead slot once and nothing else.
    uint32_t n = 0;
    for (uint32_t i = w->vehicle_free_head; i != UINT32_MAX; i = w->vehicle_next_free[i]) {
        if (i >= w->vehicle_high || w->vehicles[i].alive || ++n > w->vehicle_high) {
            return false;
        }
    }
    return alive == w->vehicle_count && n == w->vehicle_high - alive;
}

// Clear vehicles and game words (a snapshot without them, or a refused one).
void ls_vehicles_state_clear_(ls_world *w)
{
    uint32_t cap = w->def.max_vehicles ? w->def.max_vehicles : 1;
    memset(w->vehicles, 0, cap * sizeof *w->vehicles);
    memset(w->vehicle_next_free, 0, cap * sizeof *w->vehicle_next_free);
    w->vehicle_high = w->vehicle_count = 0;
    w->vehicle_free_head = UINT32_MAX;
    memset(w->game_words, 0, sizeof w->game_words);
    w->game_words_used = false;
}

// The vehicle section's words in snapshot order (user_data left out), one
// vehicle at a time: the checksum and the snapshot cannot drift apart.
void ls_vehicles_state_hash_(ls_hasher *h, const ls_world *w)
{
    uint8_t buf[4096];
    ls_hasher_put_u32(h, w->game_words_used);
    for (uint32_t k = 0; k < LS_WORLD_GAME_WORDS; k++) {
        ls_hasher_put_u32(h, (uint32_t)w->game_words[k]);
    }
    ls_hasher_put_u32(h, w->vehicle_count);
    for (uint32_t i = 0; i < w->vehicle_high; i++) {
        if (!w->vehicles[i].alive) {
            continue;
        }
        ls_vehicle copy = w->vehicles[i];
        ls_cursor c = ls_cursor_saver_(buf, sizeof buf);
        io_vehicle(&c, &copy, false);
        ls_hasher_put_u32(h, i);
        ls_hasher_put_bytes(h, buf, c.pos);
    }
}
