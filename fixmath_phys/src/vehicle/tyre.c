// SPDX-License-Identifier: MIT
// Tyre friction (SPEC.md §26.5): drive, brake, rolling resistance and
// lateral grip inside a static/dynamic friction circle, solved for all the
// wheels of a vehicle together.
//
// Why this shape: static friction must hold the contact at the end of the
// tick. Each request cancels the relative contact velocity the tick would
// end with from gravity and the forces accumulated so far (springs, drive,
// the other wheels' tyres), and every tyre result is a force the sub-steps
// integrate together with gravity. An impulse that cancelled only the
// velocity at the tick start let gravity add g sin(a) dt every tick (a
// braked car crept down a 15 degree slope at 5 cm/s, and a sliding one
// decelerated g dt / 2 off), and one pass over the wheels could not share a
// load no single tyre could hold (four locked wheels of mu 0.3 slid down a
// 10 degree slope). So the wheels are swept LS_TYRE_ITERATIONS times, each
// keeping its accumulated impulse inside its friction circle, like contact
// friction. The effective mass is the pair's: a moving platform gives way.
#include "vehicle_internal.h"

/// Sweeps over a vehicle's wheels per tick.
#define LS_TYRE_ITERATIONS 4

// Rotate unit u about unit axis a (u perpendicular to a) by angle t.
ls_vec3 ls_vehicle_rotate_about_(ls_vec3 u, ls_vec3 a, ls_fx t)
{
    ls_fx s, c;
    ls_fx_sincos(t, &s, &c);
    return ls_vec3_add(ls_vec3_scale(u, c), ls_vec3_scale(ls_vec3_cross(a, u), s));
}

// One wheel's tyre for this tick: its directions, limits and what it has
// applied so far.
typedef struct tyre {
    ls_vec3 f, lat;            // ground-plane forward and lateral (n x f)
    ls_body *g;                // dynamic or kinematic ground, or NULL
    ls_fx m_long, m_lat;       // pair effective masses along f and lat
    ls_fx drive, brake;        // impulses this tick
    ls_fx lim_s, lim_d;        // static and dynamic friction circles
    bool locked;               // handbrake wheel with the handbrake on
    ls_fx held, along, across; // brake part, longitudinal and lateral totals
} tyre;

// Relative contact velocity at the end of the tick (chassis minus ground).
static ls_vec3 next_velocity(const ls_world *w, const ls_body *b, const tyre *t, ls_vec3 p)
{
    ls_vec3 v = ls_vehicle_point_velocity_next_(w, b, p);
    return t->g ? ls_vec3_sub(v, ls_vehicle_point_velocity_next_(w, t->g, p)) : v;
}

// Sets up wheel i's tyre; false when the ground plane has no forward
// direction (the wheel then applies nothing).
static bool tyre_begin(ls_world *w, const ls_vehicle *v, uint32_t i, ls_body *b,
                       const ls_wheel_probe_hit *pr, ls_fx n_force, ls_vec3 fwd, tyre *t, bool *ovf)
{
    const ls_wheel_def *wd = &v->def.wheels[i];
    const ls_vehicle_controls *c = &v->controls;
    ls_fx dt = w->dt;
    ls_vec3 n = pr->normal;
    t->f =
        ls_vec3_normalize(ls_vec3_sub(fwd, ls_vec3_scale(n, ls_vec3_dot(fwd, n))), ls_vec3_zero());
    if (ls_vec3_equal(t->f, ls_vec3_zero())) {
        return false;
    }
    t->lat = ls_vec3_cross(n, t->f);
    t->g = pr->ground != UINT32_MAX ? &w->bodies[pr->ground] : NULL;
    t->m_long = ls_vehicle_pair_effective_mass_(b, t->g, pr->point, t->f);
    t->m_lat = ls_vehicle_pair_effective_mass_(b, t->g, pr->point, t->lat);
    t->drive = ls_fx_mul_chk(
        ls_fx_mul_chk(ls_fx_mul_chk(c->throttle, v->def.engine_force, ovf), wd->drive_share, ovf),
        dt, ovf);
    t->brake = ls_fx_mul_chk(
        ls_fx_mul_chk(ls_fx_mul_chk(c->brake, v->def.brake_force, ovf), wd->brake_share, ovf), dt,
        ovf);
    t->brake += ls_fx_mul_chk(ls_fx_mul_chk(wd->rolling_resistance, n_force, ovf), dt, ovf);
    t->locked = c->handbrake && wd->handbrake;
    ls_fx n_dt = ls_fx_mul_chk(n_force, dt, ovf);
    t->lim_s = ls_fx_mul_chk(wd->static_friction, n_dt, ovf);
    t->lim_d = ls_fx_mul_chk(wd->dynamic_friction, n_dt, ovf);
    t->held = t->along = t->across = 0;
    return true;
}

// One sweep step of one tyre: the new totals inside the friction circle, the
// change applied as a force at the contact point.
static void tyre_solve(ls_world *w, ls_body *b, const ls_wheel_probe_hit *pr, tyre *t,
                       ls_wheel_state *st, bool *ovf)
{
    ls_vec3 next = next_velocity(w, b, t, pr->point);
    ls_fx d_long = -ls_fx_mul_chk(ls_vec3_dot(next, t->f), t->m_long, ovf);
    ls_fx d_lat = -ls_fx_mul_chk(ls_vec3_dot(next, t->lat), t->m_lat, ovf);
    // The brake opposes the contact's motion and never reverses it: at most
    // the impulse that stops the contact; a locked wheel asks for all of it.
    ls_fx want = ls_fx_add_chk(t->held, d_long, ovf);
    ls_fx held = t->locked ? want : ls_fx_clamp(want, -t->brake, t->brake);
    ls_fx along = ls_fx_add_chk(t->drive, held, ovf);
    ls_fx across = ls_fx_add_chk(t->across, d_lat, ovf);
    // Friction circle: grip up to mu_s N dt, else slide at mu_d N dt.
    ls_fx mag = ls_vec3_len(ls_vec3_make(along, across, 0));
    st->sliding = false;
    if (mag > t->lim_s) {
        along = (ls_fx)(((int64_t)along * t->lim_d) / mag);
        across = (ls_fx)(((int64_t)across * t->lim_d) / mag);
        held = ls_fx_sub(along, t->drive);
        st->sliding = true;
    }
    ls_vec3 j = ls_vec3_add(ls_vec3_scale(t->f, ls_fx_sub(along, t->along)),
                            ls_vec3_scale(t->lat, ls_fx_sub(across, t->across)));
    t->held = held;
    t->along = along;
    t->across = across;
    ls_fx dt = w->dt;
    ls_vec3 force = ls_vec3_make(ls_fx_div(j.x, dt), ls_fx_div(j.y, dt), ls_fx_div(j.z, dt));
    ls_vehicle_apply_force_(b, force, pr->point);
    if (t->g) {
        ls_vehicle_apply_force_(t->g, ls_vec3_neg(force), pr->point);
    }
}

void ls_vehicle_tyres_(ls_world *w, const ls_vehicle *v, ls_body *b, const ls_wheel_probe_hit *pr,
                       const ls_fx *n_force, const ls_vec3 *fwd, ls_wheel_state *st, ls_fx *speed,
                       bool *ovf)
{
    tyre t[LS_VEHICLE_MAX_WHEELS];
    bool on[LS_VEHICLE_MAX_WHEELS];
    uint32_t n = v->def.wheel_count;
    for (uint32_t i = 0; i < n; i++) {
        speed[i] = 0;
        st[i].sliding = false;
        on[i] = pr[i].hit && tyre_begin(w, v, i, b, &pr[i], n_force[i], fwd[i], &t[i], ovf);
        if (on[i]) {
            // The longitudinal contact speed now, for the wheel spin (0 locked).
            ls_vec3 rel = ls_vehicle_point_velocity_(b, pr[i].point);
            if (t[i].g) {
                rel = ls_vec3_sub(rel, ls_vehicle_point_velocity_(t[i].g, pr[i].point));
            }
            speed[i] = t[i].locked ? 0 : ls_vec3_dot(rel, t[i].f);
        }
    }
    for (int k = 0; k < LS_TYRE_ITERATIONS; k++) {
        for (uint32_t i = 0; i < n; i++) {
            if (on[i]) {
                tyre_solve(w, b, &pr[i], &t[i], &st[i], ovf);
            }
        }
    }
}
