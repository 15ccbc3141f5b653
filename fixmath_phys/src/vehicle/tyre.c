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
//
// Why a slip curve, and why as a limit: a rolling tyre's lateral force grows
// with its slip angle up to a peak and falls past it (the brush model;
// Pacejka's curves), where a pure Coulomb tyre grips with any force up to
// mu_s N at zero slip and then drops to mu_d N. The curve here caps the
// lateral impulse the static solve asks for at mu(alpha) N dt, alpha the
// slip angle at the tick start: while the cap binds the tyre gives the
// curve's force; when cancelling the lateral velocity needs less, it grips
// as before (no overshoot, stable at any speed, unlike an explicit force
// C alpha, whose C / (m v) passes 2 / dt below walking pace). The slip angle
// has no meaning at rest, so the curve fades in between contact speeds of
// 0.25 and 0.5 m/s: a parked car keeps its static hold (slope tests). A
// locked wheel is not rolling: it keeps the Coulomb circle. The longitudinal
// force has no curve: wheel spin follows the contact speed (no slip ratio
// state), so drive and brake stay requests inside the friction circle.
#include "vehicle_internal.h"

/// Sweeps over a vehicle's wheels per tick.
#define LS_TYRE_ITERATIONS 4
/// Contact speed below which the slip curve is off (0.25 m/s); it is fully
/// on from twice this (the weight rises by 4 per m/s: 2^-2 m/s wide).
#define LS_SLIP_SPEED 16384

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
    bool curve;                // the slip curve caps the lateral total at lim_lat
    bool past_peak;            // the slip angle is above peak_slip
    ls_fx lim_lat;             // lateral cap from the slip curve (curve only)
    ls_fx v_long;              // longitudinal contact speed now (for the spin)
    ls_fx held, along, across; // brake part, longitudinal and lateral totals
} tyre;

// The slip curve's lateral limit at slip angle a in [0, pi/2] (SPEC.md
// §26.5): lim_s a / peak up to the peak, then down linearly to lim_d at
// slide_slip, lim_d beyond. Truncating 64-bit divisions; peak_slip > 0.
static ls_fx slip_curve(const ls_wheel_def *wd, ls_fx lim_s, ls_fx lim_d, ls_fx a)
{
    if (a <= wd->peak_slip) {
        return (ls_fx)(((int64_t)lim_s * a) / wd->peak_slip);
    }
    if (a >= wd->slide_slip) {
        return lim_d;
    }
    int64_t fall = (((int64_t)lim_s - lim_d) * ((int64_t)a - wd->peak_slip)) /
                   ((int64_t)wd->slide_slip - wd->peak_slip);
    return (ls_fx)((int64_t)lim_s - fall);
}

// The tyre's lateral cap from its contact velocity now (ground relative):
// the slip angle atan2(|v_lat|, |v_long|) on the curve, blended with the
// static limit lim_s at contact speeds below 2 LS_SLIP_SPEED.
static void slip_limit(const ls_wheel_def *wd, ls_vec3 rel, tyre *t)
{
    t->curve = false;
    t->past_peak = false;
    if (wd->peak_slip == 0 || t->locked) {
        return;
    }
    ls_fx vl = ls_vec3_dot(rel, t->f), vt = ls_vec3_dot(rel, t->lat);
    int64_t w8 = ((int64_t)ls_vec3_len(ls_vec3_make(vl, vt, 0)) - LS_SLIP_SPEED) * 4;
    if (w8 <= 0) {
        return;
    }
    ls_fx weight = (ls_fx)(w8 > LS_FX_ONE ? LS_FX_ONE : w8);
    ls_fx a = ls_fx_atan2(ls_fx_abs(vt), ls_fx_abs(vl));
    ls_fx c = slip_curve(wd, t->lim_s, t->lim_d, a);
    t->lim_lat = (ls_fx)(t->lim_s - ((((int64_t)t->lim_s - c) * weight) >> 16));
    t->curve = true;
    t->past_peak = a > wd->peak_slip;
}

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
    // The contact velocity now (chassis minus ground): the slip angle and
    // the longitudinal speed for the wheel spin.
    ls_vec3 rel = ls_vehicle_point_velocity_(b, pr->point);
    if (t->g) {
        rel = ls_vec3_sub(rel, ls_vehicle_point_velocity_(t->g, pr->point));
    }
    t->v_long = ls_vec3_dot(rel, t->f);
    slip_limit(wd, rel, t);
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
    // Slip curve: a rolling tyre's lateral total at most its curve's limit;
    // held there past the peak, the tyre slides.
    st->sliding = false;
    if (t->curve && (across > t->lim_lat || across < ls_fx_neg(t->lim_lat))) {
        across = across > 0 ? t->lim_lat : ls_fx_neg(t->lim_lat);
        st->sliding = t->past_peak;
    }
    // Friction circle: grip up to mu_s N dt, else slide at mu_d N dt.
    ls_fx mag = ls_vec3_len(ls_vec3_make(along, across, 0));
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
            speed[i] = t[i].locked ? 0 : t[i].v_long; // for the wheel spin (0 locked)
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
