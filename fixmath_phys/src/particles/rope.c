// SPDX-License-Identifier: MIT
// Rope builder (SPEC.md §25.7): segments + 1 particles evenly from start to
// end (particle k at start + (end - start) * k / segments, each component
// rounded half away from zero), constraint k joins particles k and k + 1: a
// stick, or with slack a range 0..length (a rope can fold but not stretch).
// Then, if asked, pins of the first and last particles to body points (one
// way: the body drives the particle), constraints segments and segments + 1.
// pin_start / pin_end make those particles immovable; end_mass replaces the
// last particle's share (a weight on the rope's end).
#include "particles_internal.h"

#include <string.h>

ls_rope_def ls_default_rope_def(void)
{
    ls_rope_def d;
    memset(&d, 0, sizeof d);
    d.system = ls_default_particle_system_def();
    // 24 iterations: a rope's sticks are cheap (one per segment), and a heavy
    // end swung from horizontal whips the sticks between the long-range
    // attachments; measured peak stretch of a 20-segment rope with a 100:1
    // (1000:1) end: 7.6 (7.7) % at 4 iterations, 3.3 (3.4) % at 16, 2.5
    // (2.6) % at 24, 2.1 (2.2) % at 32 (tests/test_particles.c).
    d.system.iterations = 24;
    d.start = ls_vec3_make(0, LS_FX_INT(2), 0);
    d.end = ls_vec3_make(LS_FX_INT(2), LS_FX_INT(2), 0);
    d.segments = 16;
    d.mass = LS_FX_ONE;
    d.radius = 1311; // 0.02 m
    d.pin_start = true;
    d.long_range = true;
    d.cookie = LS_DEF_COOKIE;
    return d;
}

static ls_fx lerp_component(ls_fx a, ls_fx b, uint32_t k, uint32_t n)
{
    int64_t num = ((int64_t)b - a) * k;
    int64_t q = (num >= 0 ? num + n / 2 : num - (int64_t)(n / 2)) / (int64_t)n;
    return (ls_fx)(a + q);
}

static ls_vec3 rope_point(const ls_rope_def *d, uint32_t k)
{
    return ls_vec3_make(lerp_component(d->start.x, d->end.x, k, d->segments),
                        lerp_component(d->start.y, d->end.y, k, d->segments),
                        lerp_component(d->start.z, d->end.z, k, d->segments));
}

static bool in_world(ls_vec3 p)
{
    return ls_fx_abs(p.x) <= LS_PARTICLE_POS_MAX && ls_fx_abs(p.y) <= LS_PARTICLE_POS_MAX &&
           ls_fx_abs(p.z) <= LS_PARTICLE_POS_MAX;
}

static ls_result check(const ls_world *w, const ls_rope_def *d, ls_error *err)
{
    if (d->segments < 1 || d->segments > 4096) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "segments",
                                  "a rope has 1..4096 segments (got %u)", d->segments);
    }
    if (!in_world(d->start) || !in_world(d->end)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, in_world(d->start) ? "end" : "start",
                                  "rope ends must be within +-2048 m");
    }
    uint32_t n = d->segments + 1;
    int64_t each = ((int64_t)d->mass + n / 2) / n;
    if (each < 66 || each > LS_FX_INT(1000)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "mass",
                                  "rope mass / %u particles must be 0.001..1000 kg", n);
    }
    if (d->end_mass != 0 && (d->end_mass < 66 || d->end_mass > LS_FX_INT(1000))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "end_mass",
                                  "end_mass must be 0 (like the others) or 0.001..1000 kg");
    }
    if (d->radius < 0 || d->radius > LS_FX_INT(64)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "radius", "radius must be 0..64 m");
    }
    if (d->tear_ratio != 0 && (d->tear_ratio < LS_FX_ONE || d->tear_ratio > LS_FX_INT(64))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "tear_ratio",
                                  "tear_ratio must be 0 (never) or 1..64");
    }
    if (d->attach_start.index1 != 0 && !ls_world_body_(w, d->attach_start)) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ID, "attach_start",
                                  "attach_start is a stale or destroyed body");
    }
    if (d->attach_end.index1 != 0 && !ls_world_body_(w, d->attach_end)) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ID, "attach_end",
                                  "attach_end is a stale or destroyed body");
    }
    return LS_OK;
}

// Pin particle k to body id where it is now (the point in the body's frame).
static bool attach(ls_world *w, ls_particle_system *s, uint32_t k, ls_body_id id, ls_error *err)
{
    const ls_body *b = ls_world_body_(w, id);
    ls_particle_constraint_def c = ls_default_particle_constraint_def();
    c.type = LS_PARTICLE_PIN;
    c.a = k;
    c.body = id;
    c.target = ls_mat3_mul_tvec(b->xf.r, ls_vec3_sub(w->particles->x[s->first + k], b->p));
    return ls_particles_push_constraint_(w, s, &c, err) != UINT32_MAX;
}

// Long-range attachments (Kim, Chentanez and Mueller 2012; SPEC.md §25.7):
// from the held end `from` (0 or n - 1), a range 0..L_k to every other
// particle k, L_k the rest length of the rope between them (the sum of its
// segments' lengths). Why: a chain of sticks relaxed a few times a tick
// carries a heavy end only by stretching (a 100:1 end stretched a rope by
// 131 %); a range straight to the anchor holds each particle within its rope
// length of it in one projection, whatever the chain does between. Only a
// pull beyond L_k acts, so the rope still folds, swings and goes slack. A
// particle farther than 128 m of rope from the end gets none (the range's
// limit); the other end is skipped when it is held too (both immovable).
static bool long_range(ls_world *w, ls_particle_system *s, uint32_t from, uint32_t n,
                       bool other_held, ls_error *err)
{
    int64_t path = 0;
    for (uint32_t step = 1; step < n; step++) {
        uint32_t k = from == 0 ? step : n - 1 - step;
        uint32_t prev = from == 0 ? k - 1 : k + 1;
        path += ls_pcon_distance_(w, s, prev, k);
        if (path > LS_PARTICLE_LEN_MAX) {
            break;
        }
        if (step == n - 1 && other_held) {
            break;
        }
        ls_particle_constraint_def c = ls_default_particle_constraint_def();
        c.type = LS_PARTICLE_RANGE;
        c.a = from;
        c.b = k;
        c.max_length = (ls_fx)(path > LS_PARTICLE_LEN_MIN ? path : LS_PARTICLE_LEN_MIN);
        if (ls_particles_push_constraint_(w, s, &c, err) == UINT32_MAX) {
            return false;
        }
    }
    return true;
}

ls_particle_system_id ls_rope_create(ls_world *w, const ls_rope_def *def, ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_particle_system_id){0, 0};
    }
    ls_particle_system_id none = {0, 0};
    if (!w || !def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world or no rope definition");
        return none;
    }
    if (ls_def_missing_(def->cookie, "rope_def", err)) {
        return none;
    }
    if (check(w, def, err) != LS_OK) {
        return none;
    }
    uint32_t n = def->segments + 1;
    ls_particle_system_def sd = def->system;
    sd.max_particles = n;
    bool held_start = def->pin_start || def->attach_start.index1 != 0;
    bool held_end = def->pin_end || def->attach_end.index1 != 0;
    bool lra = def->long_range && def->tear_ratio == 0;
    sd.max_constraints =
        def->segments + (def->attach_start.index1 != 0) + (def->attach_end.index1 != 0) +
        (lra ? def->segments * ((held_start ? 1u : 0u) + (held_end ? 1u : 0u)) : 0);
    if (ls_particles_check_system_def_(w, &sd, "system.", true, err) != LS_OK) {
        return none;
    }
    uint32_t slot;
    ls_particle_system *s = ls_particles_new_system_(w, &sd, LS_PARTICLES_ROPE, &slot);
    ls_particle_system_id id = ls_particle_system_id_of_(w, slot);
    ls_particle_def pd = ls_default_particle_def();
    pd.radius = def->radius;
    ls_fx each = (ls_fx)(((int64_t)def->mass + n / 2) / n);
    for (uint32_t k = 0; k < n; k++) {
        pd.position = rope_point(def, k);
        pd.mass = k == n - 1 && def->end_mass ? def->end_mass : each;
        if ((k == 0 && def->pin_start) || (k == n - 1 && def->pin_end)) {
            pd.mass = 0;
        }
        ls_particles_push_(w, s, &pd);
    }
    bool ok = true;
    for (uint32_t k = 0; k < def->segments && ok; k++) {
        ls_particle_constraint_def c = ls_default_particle_constraint_def();
        c.a = k;
        c.b = k + 1;
        c.tear_ratio = def->tear_ratio;
        if (def->slack) {
            c.type = LS_PARTICLE_RANGE;
            c.max_length = ls_pcon_distance_(w, s, k, k + 1);
        }
        ok = ls_particles_push_constraint_(w, s, &c, err) != UINT32_MAX;
    }
    if (ok && def->attach_start.index1 != 0) {
        ok = attach(w, s, 0, def->attach_start, err);
    }
    if (ok && def->attach_end.index1 != 0) {
        ok = attach(w, s, n - 1, def->attach_end, err);
    }
    if (ok && lra && held_start) {
        ok = long_range(w, s, 0, n, def->pin_end || def->attach_end.index1 != 0, err);
    }
    if (ok && lra && held_end) {
        ok = long_range(w, s, n - 1, n, held_start, err);
    }
    if (!ok) { // e.g. segments shorter than 0.001 m (field "length" / "max_length")
        ls_particle_system_destroy(w, id);
        return none;
    }
    ls_error_clear(err);
    return id;
}
