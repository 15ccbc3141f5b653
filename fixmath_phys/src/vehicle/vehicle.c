// SPDX-License-Identifier: MIT
// Vehicle lifetime, definitions, validation and getters (SPEC.md §26.1-26.2).
#include "vehicle_internal.h"

#include "../../../core/src/error_field.h"

#include <stdio.h>
#include <string.h>

ls_wheel_def ls_default_wheel_def(void)
{
    ls_wheel_def d;
    memset(&d, 0, sizeof d);
    d.axis = ls_vec3_make(0, -LS_FX_ONE, 0);
    d.forward = ls_vec3_make(0, 0, LS_FX_ONE);
    d.radius = 22938;      // 0.35 m
    d.rest_length = 19661; // 0.3 m
    d.max_travel = 13107;  // 0.2 m
    d.stiffness = LS_FX_INT(20000);
    d.damping = LS_FX_INT(2000);
    d.inertia = LS_FX_ONE;
    d.brake_share = LS_FX_ONE / 4;
    d.static_friction = LS_FX_ONE;
    d.dynamic_friction = 52429; // 0.8
    d.rolling_resistance = 655; // 0.01
    d.peak_slip = 9175;         // 0.14 rad (8.0 degrees)
    d.slide_slip = 22938;       // 0.35 rad (20.1 degrees)
    return d;
}

ls_vehicle_def ls_default_vehicle_def(void)
{
    ls_vehicle_def d;
    memset(&d, 0, sizeof d);
    for (uint32_t i = 0; i < LS_VEHICLE_MAX_WHEELS; i++) {
        d.wheels[i] = ls_default_wheel_def();
    }
    d.probe = LS_WHEEL_RAY;
    d.engine_force = LS_FX_INT(4000);
    d.brake_force = LS_FX_INT(6000);
    d.max_steer = LS_FX_HALF;
    d.steer_rate = LS_FX_INT(2);
    d.filter = ls_default_query_filter();
    d.cookie = LS_DEF_COOKIE;
    return d;
}

ls_vehicle_def ls_default_car_def(ls_body_id chassis, ls_vec3 half)
{
    ls_vehicle_def d = ls_default_vehicle_def();
    d.chassis = chassis;
    d.wheel_count = 4;
    // Wheels 0, 1 front (left +x, right -x), 2, 3 rear; axles at 80 % of the
    // half length so the wheels stay under the body.
    ls_fx z = ls_fx_mul(half.z, 52429);
    for (uint32_t i = 0; i < 4; i++) {
        ls_wheel_def *wd = &d.wheels[i];
        wd->mount = ls_vec3_make((i & 1) ? -half.x : half.x, -half.y, i < 2 ? z : -z);
        wd->drive_share = LS_FX_ONE / 4;
        wd->steer_share = i < 2 ? LS_FX_ONE : 0;
        wd->handbrake = i >= 2;
    }
    return d;
}

// Fills err with the field concerned (printf-style name); returns false.
static bool refuse(ls_error *err, ls_result code, const char *field, const char *text)
{
    ls_error_set_field_(err, code, field, "%s", text);
    return false;
}

static bool in(ls_fx v, ls_fx lo, ls_fx hi)
{
    return v >= lo && v <= hi;
}

// |v| within 1 +- 1/64 (a unit direction given in Q16.16).
static bool unit(ls_vec3 v)
{
    int64_t l = (int64_t)ls_vec3_len_sq_q32(v);
    int64_t one = (int64_t)1 << 32;
    return l > one - (one >> 5) && l < one + (one >> 5);
}

static bool in_world(ls_vec3 v)
{
    return in(v.x, -LS_FX_INT(64), LS_FX_INT(64)) && in(v.y, -LS_FX_INT(64), LS_FX_INT(64)) &&
           in(v.z, -LS_FX_INT(64), LS_FX_INT(64));
}

static bool wheel_valid(const ls_world *w, const ls_vehicle_def *d, uint32_t i, ls_fx m_share,
                        ls_error *err)
{
    const ls_wheel_def *wd = &d->wheels[i];
    char f[LS_ERROR_FIELD_MAX];
#define CHECK(cond, name, text)                                                                    \
    if (!(cond)) {                                                                                 \
        snprintf(f, sizeof f, "wheels[%u]." name, i);                                              \
        return refuse(err, LS_ERR_OUT_OF_RANGE, f, text);                                          \
    }
    CHECK(in_world(wd->mount), "mount", "wheel mount must be within +-64 m of the centre of mass");
    CHECK(unit(wd->axis), "axis", "wheel axis must be a unit vector");
    CHECK(unit(wd->forward), "forward", "wheel forward must be a unit vector");
    CHECK(ls_fx_abs(ls_vec3_dot(wd->axis, wd->forward)) <= 1024, "forward",
          "wheel forward must be perpendicular to the axis");
    CHECK(in(wd->radius, 3277, LS_FX_INT(4)), "radius", "wheel radius must be 0.05..4 m");
    CHECK(in(wd->rest_length, 655, LS_FX_INT(4)), "rest_length", "rest_length must be 0.01..4 m");
    CHECK(in(wd->max_travel, 0, wd->rest_length), "max_travel",
          "max_travel must be 0..rest_length");
    CHECK(in(wd->stiffness, LS_FX_ONE, LS_FX_MAX), "stiffness",
          "stiffness must be 1..32767 N/m (Q16.16 range)");
    CHECK(in(wd->damping, 0, LS_FX_INT(20000)), "damping", "damping must be 0..20000 N s/m");
    CHECK(in(wd->inertia, 655, LS_FX_INT(100)), "inertia", "inertia must be 0.01..100 kg m^2");
    CHECK(in(wd->drive_share, 0, LS_FX_ONE), "drive_share", "drive_share must be 0..1");
    CHECK(in(wd->brake_share, 0, LS_FX_ONE), "brake_share", "brake_share must be 0..1");
    CHECK(in(wd->steer_share, -LS_FX_ONE, LS_FX_ONE), "steer_share", "steer_share must be -1..1");
    CHECK(in(wd->static_friction, 0, LS_FX_INT(4)), "static_friction",
          "static_friction must be 0..4");
    CHECK(in(wd->dynamic_friction, 0, wd->static_friction), "dynamic_friction",
          "dynamic_friction must be 0..static_friction");
    CHECK(in(wd->rolling_resistance, 0, LS_FX_ONE), "rolling_resistance",
          "rolling_resistance must be 0..1");
    CHECK(wd->anti_roll_pair <= d->wheel_count && wd->anti_roll_pair != i + 1, "anti_roll_pair",
          "anti_roll_pair must be 0 or another wheel's index + 1");
    CHECK(in(wd->anti_roll_stiffness, 0, LS_FX_MAX), "anti_roll_stiffness",
          "anti_roll_stiffness must be 0..32767 N/m (Q16.16 range)");
    CHECK(in(wd->peak_slip, 0, LS_SLIP_MAX), "peak_slip", "peak_slip must be 0..1.5 rad");
    CHECK(in(wd->slide_slip, wd->peak_slip, LS_SLIP_MAX), "slide_slip",
          "slide_slip must be peak_slip..1.5 rad");
    // Explicit spring on the chassis share m: omega dt = sqrt(k/m) dt < 1.5,
    // i.e. k dt^2 < 2.25 m (the anti-roll bar adds to k), and c dt < m.
    int64_t k = (int64_t)wd->stiffness + wd->anti_roll_stiffness;
    int64_t dt = w->dt;
    int64_t kdt2 = ((k * dt) >> 16) * dt >> 16;
    int64_t bound = (int64_t)m_share * 9 / 4;
    CHECK(kdt2 < bound, "stiffness",
          "stiffness too high for the chassis mass at this tick rate (sqrt(k/m) dt must be < 1.5)");
    CHECK((((int64_t)wd->damping * dt) >> 16) < m_share, "damping",
          "damping too high for the chassis mass at this tick rate (c dt / m must be < 1)");
#undef CHECK
    return true;
}

bool ls_vehicle_def_valid_(const ls_world *w, const ls_vehicle_def *d, ls_error *err)
{
    const ls_body *b = ls_world_body_(w, d->chassis);
    if (!b) {
        return refuse(err, LS_ERR_INVALID_ID, "chassis", "chassis must be a live body");
    }
    if (b->type != LS_BODY_DYNAMIC || b->mass <= 0) {
        return refuse(err, LS_ERR_INVALID_ARGUMENT, "chassis", "chassis must be a dynamic body");
    }
    if (d->wheel_count < 2 || d->wheel_count > LS_VEHICLE_MAX_WHEELS) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "wheel_count", "wheel_count must be 2..8");
    }
    if (d->probe != LS_WHEEL_RAY && d->probe != LS_WHEEL_SPHERE) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "probe", "probe must be ray or sphere");
    }
    if (!in(d->engine_force, 0, LS_FX_INT(30000))) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "engine_force", "engine_force must be 0..30000 N");
    }
    if (!in(d->brake_force, 0, LS_FX_INT(30000))) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "brake_force", "brake_force must be 0..30000 N");
    }
    if (!in(d->max_steer, 0, 78643)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_steer", "max_steer must be 0..1.2 rad");
    }
    if (!in(d->steer_rate, 0, LS_FX_INT(64))) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "steer_rate",
                      "steer_rate must be 0..64 rad/s (0: instant)");
    }
    if (!in(d->boost_force, 0, LS_FX_INT(30000))) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "boost_force", "boost_force must be 0..30000 N");
    }
    ls_fx m_share = (ls_fx)((int64_t)b->mass / d->wheel_count);
    for (uint32_t i = 0; i < d->wheel_count; i++) {
        if (!wheel_valid(w, d, i, m_share, err)) {
            return false;
        }
    }
    return true;
}

ls_vehicle *ls_vehicle_slot_(const ls_world *w, ls_vehicle_id id)
{
    if (id.index1 == 0 || id.index1 > w->vehicle_high) {
        return NULL;
    }
    ls_vehicle *v = &w->vehicles[id.index1 - 1];
    return v->alive && v->generation == id.generation ? v : NULL;
}

static ls_vehicle_id id_of(const ls_world *w, uint32_t i)
{
    ls_vehicle_id id = {i + 1, w->vehicles[i].generation};
    return id;
}

ls_vehicle_id ls_vehicle_create(ls_world *w, const ls_vehicle_def *def, ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_vehicle_id){0, 0};
    }
    ls_vehicle_id null_id = {0, 0};
    if (!def) {
        refuse(err, LS_ERR_INVALID_ARGUMENT, "def", "no vehicle definition");
        return null_id;
    }
    if (ls_def_missing_(def->cookie, "vehicle_def", err)) {
        return null_id;
    }
    if (!ls_vehicle_def_valid_(w, def, err)) {
        return null_id;
    }
    uint32_t i;
    if (w->vehicle_free_head != UINT32_MAX) {
        i = w->vehicle_free_head;
        w->vehicle_free_head = w->vehicle_next_free[i];
    } else if (w->vehicle_high < w->def.max_vehicles) {
        i = w->vehicle_high++;
    } else {
        refuse(err, LS_ERR_CAPACITY, "max_vehicles", "vehicle pool is full (max_vehicles)");
        return null_id;
    }
    ls_vehicle *v = &w->vehicles[i];
    uint32_t gen = v->generation + 1;
    memset(v, 0, sizeof *v);
    v->generation = gen;
    v->alive = true;
    v->def = *def;
    for (uint32_t k = def->wheel_count; k < LS_VEHICLE_MAX_WHEELS; k++) {
        memset(&v->def.wheels[k], 0, sizeof v->def.wheels[k]); // unused: canonical zeros
    }
    w->vehicle_count++;
    ls_error_clear(err);
    return id_of(w, i);
}

ls_result ls_vehicle_destroy(ls_world *w, ls_vehicle_id id)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_vehicle *v = ls_vehicle_slot_(w, id);
    if (!v) {
        return LS_ERR_INVALID_ID;
    }
    uint32_t i = id.index1 - 1;
    uint32_t gen = v->generation;
    memset(v, 0, sizeof *v);
    v->generation = gen;
    w->vehicle_next_free[i] = w->vehicle_free_head;
    w->vehicle_free_head = i;
    w->vehicle_count--;
    return LS_OK;
}

bool ls_vehicle_is_valid(const ls_world *w, ls_vehicle_id id)
{
    return ls_vehicle_slot_(w, id) != NULL;
}

uint32_t ls_world_vehicle_count(const ls_world *w)
{
    return w->vehicle_count;
}

ls_vehicle_id ls_world_vehicle_at(const ls_world *w, uint32_t index)
{
    for (uint32_t i = 0; i < w->vehicle_high; i++) {
        if (w->vehicles[i].alive && index-- == 0) {
            return id_of(w, i);
        }
    }
    ls_vehicle_id null_id = {0, 0};
    return null_id;
}

ls_body_id ls_vehicle_chassis(const ls_world *w, ls_vehicle_id id)
{
    const ls_vehicle *v = ls_vehicle_slot_(w, id);
    ls_body_id null_id = {0, 0};
    return v ? v->def.chassis : null_id;
}

uint32_t ls_vehicle_wheel_count(const ls_world *w, ls_vehicle_id id)
{
    const ls_vehicle *v = ls_vehicle_slot_(w, id);
    return v ? v->def.wheel_count : 0;
}

ls_result ls_vehicle_set_controls(ls_world *w, ls_vehicle_id id,
                                  const ls_vehicle_controls *controls)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_vehicle *v = ls_vehicle_slot_(w, id);
    if (!v || !controls) {
        return v ? LS_ERR_INVALID_ARGUMENT : LS_ERR_INVALID_ID;
    }
    ls_vehicle_controls c = *controls;
    c.throttle = ls_fx_clamp(c.throttle, -LS_FX_ONE, LS_FX_ONE);
    c.brake = ls_fx_clamp(c.brake, 0, LS_FX_ONE);
    c.steer = ls_fx_clamp(c.steer, -LS_FX_ONE, LS_FX_ONE);
    c.handbrake = c.handbrake != 0;
    c.boost = c.boost != 0;
    bool changed = c.throttle != v->controls.throttle || c.brake != v->controls.brake ||
                   c.steer != v->controls.steer || c.handbrake != v->controls.handbrake ||
                   c.boost != v->controls.boost;
    v->controls = c;
    // A driver's change wakes a resting car (a car left alone may sleep).
    ls_body *b = ls_world_body_(w, v->def.chassis);
    if (changed && b && b->asleep) {
        ls_body_wake_(b);
    }
    return LS_OK;
}

ls_vehicle_controls ls_vehicle_get_controls(const ls_world *w, ls_vehicle_id id)
{
    const ls_vehicle *v = ls_vehicle_slot_(w, id);
    ls_vehicle_controls c;
    memset(&c, 0, sizeof c);
    return v ? v->controls : c;
}

ls_fx ls_vehicle_steer_angle(const ls_world *w, ls_vehicle_id id)
{
    const ls_vehicle *v = ls_vehicle_slot_(w, id);
    return v ? v->steer : 0;
}

ls_result ls_vehicle_get_wheel(const ls_world *w, ls_vehicle_id id, uint32_t wheel,
                               ls_wheel_state *out)
{
    const ls_vehicle *v = ls_vehicle_slot_(w, id);
    if (!v) {
        return LS_ERR_INVALID_ID;
    }
    if (wheel >= v->def.wheel_count || !out) {
        return LS_ERR_OUT_OF_RANGE;
    }
    *out = v->wheels[wheel];
    return LS_OK;
}

ls_fx ls_vehicle_forward_speed(const ls_world *w, ls_vehicle_id id)
{
    const ls_vehicle *v = ls_vehicle_slot_(w, id);
    const ls_body *b = v ? ls_world_body_(w, v->def.chassis) : NULL;
    if (!b) {
        return 0;
    }
    ls_vec3 f = ls_mat3_mul_vec(b->xf.r, v->def.wheels[0].forward);
    return ls_vec3_dot(b->linear_velocity, f);
}
