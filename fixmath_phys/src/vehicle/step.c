// SPDX-License-Identifier: MIT
// One tick of every vehicle (SPEC.md §26.3-26.6): wheel probes, suspension
// springs with a hard stop, anti-roll bars, tyre friction and wheel spin.
// Runs inside ls_world_step after the broad phase and before the contact
// update, serially in vehicle slot order, wheel index order: the forces it
// adds to chassis and ground bodies are then integrated by the solver
// together with gravity and the contacts.
#include "vehicle_internal.h"

/// Largest wheel spin speed, rad/s (airborne spin-up is clamped here).
#define SPIN_MAX LS_FX_INT(500)
/// Baumgarte factor of the hard stop's position correction (0.2).
#define STOP_BETA 13107

// Spring k s + damper c s', s clamped to [0, max_travel] (SPEC.md §26.4).
static void spring_force(const ls_wheel_def *wd, ls_wheel_probe_hit *pr, bool *ovf)
{
    if (!pr->hit) {
        return;
    }
    ls_fx s = (ls_fx)(pr->raw < 0 ? 0 : pr->raw > wd->max_travel ? wd->max_travel : pr->raw);
    pr->force =
        (int64_t)ls_fx_mul_chk(wd->stiffness, s, ovf) + ls_fx_mul_chk(wd->damping, pr->speed, ovf);
}

static ls_fx wrap_angle(ls_fx a)
{
    while (a >= LS_FX_PI) {
        a -= LS_FX_TWO_PI;
    }
    while (a < -LS_FX_PI) {
        a += LS_FX_TWO_PI;
    }
    return a;
}

// The steering angle moves toward steer x max_steer by at most
// max(mul(steer_rate, dt), 1) per tick; steer_rate 0 jumps (SPEC.md §26.1).
// Why a rate: a real steering rack turns the road wheels at a finite speed
// (a quick driver about 1-2 rad/s); a keyboard's steer jumping 0 -> 1 in one
// tick swung the wheels through 0.5 rad at once, a lateral jerk no car can
// make. The angle is state (snapshot, checksum) because it now depends on
// the history of the controls, not on the controls in force.
static void steer_toward(const ls_world *w, ls_vehicle *v, bool *ovf)
{
    ls_fx target = ls_fx_mul_chk(v->controls.steer, v->def.max_steer, ovf);
    if (v->def.steer_rate == 0) {
        v->steer = target;
        return;
    }
    int64_t room = ls_fx_mul(v->def.steer_rate, w->dt);
    room = room < 1 ? 1 : room;
    int64_t d = (int64_t)target - v->steer;
    // Between the old angle and the target: no overflow.
    v->steer = d > room ? (ls_fx)(v->steer + room) : d < -room ? (ls_fx)(v->steer - room) : target;
}

static void step_vehicle(ls_world *w, ls_vehicle *v)
{
    ls_body *b = ls_world_body_(w, v->def.chassis);
    if (!b || b->type != LS_BODY_DYNAMIC || b->asleep) {
        return; // chassis destroyed: inert; asleep: nothing moves (SPEC.md §26.2)
    }
    uint32_t n = v->def.wheel_count, slot = v->def.chassis.index1 - 1;
    ls_fx dt = w->dt;
    bool ovf = false;
    steer_toward(w, v, &ovf);
    ls_wheel_probe_hit pr[LS_VEHICLE_MAX_WHEELS];
    for (uint32_t i = 0; i < n; i++) {
        ls_vehicle_probe_wheel_(w, v, b, i, &pr[i]);
        spring_force(&v->def.wheels[i], &pr[i], &ovf);
    }
    // Anti-roll bars: k_ar (s_i - s_j) onto i, off j, both wheels in contact.
    for (uint32_t i = 0; i < n; i++) {
        const ls_wheel_def *wd = &v->def.wheels[i];
        uint32_t j = wd->anti_roll_pair;
        if (j == 0 || !pr[i].hit || !pr[j - 1].hit) {
            continue;
        }
        ls_fx si = ls_fx_clamp((ls_fx)ls_fx_clamp64_(pr[i].raw), 0, wd->max_travel);
        const ls_wheel_def *wj = &v->def.wheels[j - 1];
        ls_fx sj = ls_fx_clamp((ls_fx)ls_fx_clamp64_(pr[j - 1].raw), 0, wj->max_travel);
        ls_fx d = ls_fx_mul_chk(wd->anti_roll_stiffness, si - sj, &ovf);
        pr[i].force += d;
        pr[j - 1].force -= d;
    }
    ls_vec3 fwd0 = ls_mat3_mul_vec(b->xf.r, v->def.wheels[0].forward);
    ls_fx forces[LS_VEHICLE_MAX_WHEELS], speed[LS_VEHICLE_MAX_WHEELS];
    ls_vec3 fwd[LS_VEHICLE_MAX_WHEELS];
    for (uint32_t i = 0; i < n; i++) {
        const ls_wheel_def *wd = &v->def.wheels[i];
        ls_wheel_state *st = &v->wheels[i];
        ls_wheel_probe_hit *p = &pr[i];
        ls_fx steer = ls_fx_mul_chk(v->steer, wd->steer_share, &ovf);
        ls_fx force = p->force < 0 ? 0 : ls_fx_sat64(p->force, &ovf); // never pulls
        fwd[i] = ls_vehicle_rotate_about_(ls_mat3_mul_vec(b->xf.r, wd->forward), p->axis, steer);
        st->in_contact = p->hit;
        st->steer_angle = steer;
        st->ground.index1 = p->ground != UINT32_MAX ? p->ground + 1 : 0;
        st->ground.generation = p->ground != UINT32_MAX ? w->bodies[p->ground].generation : 0;
        forces[i] = p->hit ? force : 0;
        if (!p->hit) {
            continue;
        }
        ls_body *g = p->ground != UINT32_MAX ? &w->bodies[p->ground] : NULL;
        // The ground pushes along its normal: a massless wheel passes the
        // whole ground force to the chassis, the spring only sets its size
        // (a spring force along a pitched axis pushed a sliding car downhill
        // by N sin(pitch): 3.5 % of its friction).
        ls_vec3 fs = ls_vec3_scale(p->normal, force);
        ls_vehicle_apply_force_(b, fs, p->point);
        if (g) {
            ls_vehicle_apply_force_(g, ls_vec3_neg(fs), p->point);
            if (g->asleep) {
                ls_body_wake_(g);
            }
        }
        // Hard stop beyond max_travel: remove the point's velocity into
        // the ground (gravity of this tick included) and push back a
        // fifth of the excess per tick.
        int64_t excess = p->raw - wd->max_travel;
        if (excess > 0) {
            ls_vec3 vp = ls_vehicle_point_velocity_(b, p->point);
            if (g) {
                vp = ls_vec3_sub(vp, ls_vehicle_point_velocity_(g, p->point));
            }
            ls_fx into = ls_vec3_dot(vp, p->axis) +
                         ls_fx_mul_chk(ls_vec3_dot(w->def.gravity, p->axis), dt, &ovf);
            int64_t push = ((excess < LS_FX_ONE ? excess : LS_FX_ONE) * STOP_BETA) >> 16;
            ls_fx target = into + ls_fx_div((ls_fx)push, dt);
            if (target > 0) {
                ls_fx js =
                    ls_fx_mul_chk(target, ls_vehicle_effective_mass_(b, p->point, p->axis), &ovf);
                ls_vehicle_apply_impulse_(b, ls_vec3_scale(p->axis, -js), p->point);
            }
        }
    }
    ls_vehicle_tyres_(w, v, b, pr, forces, fwd, v->wheels, speed, &ovf);
    for (uint32_t i = 0; i < n; i++) {
        const ls_wheel_def *wd = &v->def.wheels[i];
        ls_wheel_state *st = &v->wheels[i];
        ls_wheel_probe_hit *p = &pr[i];
        ls_fx comp = (ls_fx)(p->raw < 0 ? 0 : p->raw > wd->max_travel ? wd->max_travel : p->raw);
        if (p->hit) {
            st->contact_point = p->point;
            st->contact_normal = p->normal;
            st->spin_speed = ls_fx_clamp(ls_fx_div(speed[i], wd->radius), -SPIN_MAX, SPIN_MAX);
        } else {
            st->contact_point = ls_vec3_zero();
            st->contact_normal = ls_vec3_zero();
            st->sliding = false;
            // Airborne: drive torque / inertia spins the wheel up, a decay of
            // half the speed per second (dt/2 per tick) spins it down.
            ls_fx torque = ls_fx_mul_chk(
                ls_fx_mul_chk(ls_fx_mul_chk(v->controls.throttle, v->def.engine_force, &ovf),
                              wd->drive_share, &ovf),
                wd->radius, &ovf);
            ls_fx acc = ls_fx_div(torque, wd->inertia);
            ls_fx s = st->spin_speed + ls_fx_mul_chk(acc, dt, &ovf);
            s -= ls_fx_mul_chk(s, dt / 2, &ovf);
            st->spin_speed = ls_fx_clamp(s, -SPIN_MAX, SPIN_MAX);
            if (v->controls.handbrake && wd->handbrake) {
                st->spin_speed = 0;
            }
        }
        st->compression = p->hit ? comp : 0;
        st->suspension_speed = p->hit ? p->speed : 0;
        st->suspension_force = forces[i];
        st->spin_angle = wrap_angle(st->spin_angle + ls_fx_mul_chk(st->spin_speed, dt, &ovf));
        st->center =
            ls_vec3_add(p->mount, ls_vec3_scale(p->axis, wd->rest_length - st->compression));
    }
    if (v->controls.boost && v->def.boost_force > 0) {
        ls_vehicle_apply_impulse_(
            b, ls_vec3_scale(fwd0, ls_fx_mul_chk(v->def.boost_force, dt, &ovf)), b->p);
    }
    if (ovf) {
        ls_world_report_overflow_(w, slot);
    }
}

void ls_world_step_vehicles_(ls_world *w)
{
    for (uint32_t i = 0; i < w->vehicle_high; i++) {
        if (w->vehicles[i].alive) {
            step_vehicle(w, &w->vehicles[i]);
        }
    }
}
