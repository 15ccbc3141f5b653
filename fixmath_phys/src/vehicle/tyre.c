// SPDX-License-Identifier: MIT
// Tyre friction (SPEC.md §26.5): drive, brake, rolling resistance and
// lateral grip inside a static/dynamic friction circle.
#include "vehicle_internal.h"

// Rotate unit u about unit axis a (u perpendicular to a) by angle t.
ls_vec3 ls_vehicle_rotate_about_(ls_vec3 u, ls_vec3 a, ls_fx t)
{
    ls_fx s, c;
    ls_fx_sincos(t, &s, &c);
    return ls_vec3_add(ls_vec3_scale(u, c), ls_vec3_scale(ls_vec3_cross(a, u), s));
}

// Tyre impulse in the plane perpendicular to the spring axis (SPEC.md §26.5):
// returns the longitudinal contact speed for the wheel spin.
ls_fx ls_vehicle_tyre_(ls_world *w, const ls_vehicle *v, uint32_t i, ls_body *b,
                       const ls_wheel_probe_hit *pr, ls_fx n_force, ls_vec3 fwd, ls_wheel_state *st,
                       bool *ovf)
{
    const ls_wheel_def *wd = &v->def.wheels[i];
    const ls_vehicle_controls *c = &v->controls;
    ls_fx dt = w->dt;
    ls_vec3 n = pr->normal;
    ls_vec3 f =
        ls_vec3_normalize(ls_vec3_sub(fwd, ls_vec3_scale(n, ls_vec3_dot(fwd, n))), ls_vec3_zero());
    if (ls_vec3_equal(f, ls_vec3_zero())) {
        return 0;
    }
    ls_vec3 lat = ls_vec3_cross(n, f);
    ls_body *g = pr->ground != UINT32_MAX ? &w->bodies[pr->ground] : NULL;
    ls_vec3 rel = ls_vehicle_point_velocity_(b, pr->point);
    if (g) {
        rel = ls_vec3_sub(rel, ls_vehicle_point_velocity_(g, pr->point));
    }
    ls_fx vl = ls_vec3_dot(rel, f), vt = ls_vec3_dot(rel, lat);
    ls_fx j_lat = -ls_fx_mul_chk(vt, ls_vehicle_effective_mass_(b, pr->point, lat), ovf);
    ls_fx j_stop = -ls_fx_mul_chk(vl, ls_vehicle_effective_mass_(b, pr->point, f), ovf);
    ls_fx drive = ls_fx_mul_chk(
        ls_fx_mul_chk(ls_fx_mul_chk(c->throttle, v->def.engine_force, ovf), wd->drive_share, ovf),
        dt, ovf);
    ls_fx brake = ls_fx_mul_chk(
        ls_fx_mul_chk(ls_fx_mul_chk(c->brake, v->def.brake_force, ovf), wd->brake_share, ovf), dt,
        ovf);
    brake += ls_fx_mul_chk(ls_fx_mul_chk(wd->rolling_resistance, n_force, ovf), dt, ovf);
    bool locked = c->handbrake && wd->handbrake;
    // The brake opposes the contact's motion and never reverses it: at most
    // the impulse that stops the contact; a locked wheel asks for all of it.
    ls_fx jb = locked ? j_stop : ls_fx_clamp(j_stop, -brake, brake);
    ls_fx j_long = ls_fx_add_chk(drive, jb, ovf);
    // Friction circle: grip up to mu_s N dt, else slide at mu_d N dt.
    ls_fx n_dt = ls_fx_mul_chk(n_force, dt, ovf);
    ls_fx lim_s = ls_fx_mul_chk(wd->static_friction, n_dt, ovf);
    ls_fx mag = ls_vec3_len(ls_vec3_make(j_long, j_lat, 0));
    st->sliding = false;
    if (mag > lim_s) {
        ls_fx lim_d = ls_fx_mul_chk(wd->dynamic_friction, n_dt, ovf);
        j_long = (ls_fx)(((int64_t)j_long * lim_d) / mag);
        j_lat = (ls_fx)(((int64_t)j_lat * lim_d) / mag);
        st->sliding = true;
    }
    ls_vec3 j = ls_vec3_add(ls_vec3_scale(f, j_long), ls_vec3_scale(lat, j_lat));
    // Only the part perpendicular to the spring reaches the chassis directly;
    // the parallel part is the spring's (seed 004 §2.6).
    j = ls_vec3_sub(j, ls_vec3_scale(pr->axis, ls_vec3_dot(j, pr->axis)));
    ls_vehicle_apply_impulse_(b, j, pr->point);
    if (g) {
        ls_vehicle_apply_impulse_(g, ls_vec3_neg(j), pr->point);
    }
    return locked ? 0 : vl;
}
