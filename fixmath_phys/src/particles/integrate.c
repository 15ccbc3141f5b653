// SPDX-License-Identifier: MIT
// Verlet integration (SPEC.md §25.3; Jakobsen §2, seed §5.2-§5.3):
//   v  = x - x*                  (the implicit velocity, exact)
//   v' = v - round(v * damping)  (per component, rounded half away from zero)
//   x* = x;  x = x + v' + round(a * dt_raw^2 / 2^32)
// with a = gravity * gravity_scale + acceleration + turbulence * u + F * w
// (m/s^2). The per-tick displacement is computed from the exact integer
// dt_raw^2 with one rounding: never dt*dt rounded first (seed §5.2: that is
// 1.1 % off at 60 Hz), and without turbulence or force every particle of a
// system gets the same displacement G, so a free fall from rest drops exactly
// G n (n + 1) / 2 raw in n ticks. Accelerations below half an LSB per tick
// (0.0275 m/s^2 at 60 Hz) vanish, as the seed warns; damping has a dead zone
// (|v| * damping < 1/2 LSB is not damped) but no bias (symmetric rounding).
//
// Immovable particles (effective inverse mass 0: mass 0, or held by a pin)
// get x* = x; pins then set x = target, so their velocity is the target's.
// Turbulence: when the system's amplitude is not 0, three draws per particle
// (x, y, z) in index order from the system's PRNG, u = (int32)draw >> 15
// (uniform in [-1, 1) as Q16.16), whether or not the particle moves.
#include "particles_internal.h"

ls_vec3 ls_particles_accel_step_(ls_vec3 a, ls_fx dt)
{
    int64_t dt2 = (int64_t)dt * dt; // Q32.32, < 2^23
    int64_t c[3] = {(int64_t)a.x * dt2, (int64_t)a.y * dt2, (int64_t)a.z * dt2};
    ls_fx r[3];
    for (int i = 0; i < 3; i++) {
        int64_t m = c[i] < 0 ? -c[i] : c[i];
        int64_t q = (m + ((int64_t)1 << 31)) >> 32;
        r[i] = (ls_fx)(c[i] < 0 ? -q : q);
    }
    return ls_vec3_make(r[0], r[1], r[2]);
}

static ls_fx turbulence_draw(ls_rng *rng, ls_fx amplitude)
{
    int32_t u = (int32_t)ls_rng_next_u32(rng) >> 15; // [-65536, 65535]
    return ls_fx_mul(amplitude, u);
}

static inline ls_fx verlet1(ls_fx x, ls_fx xo, ls_fx damping, ls_fx disp)
{
    int64_t v = (int64_t)x - xo;
    if (damping != 0) {
        v -= ls_fx_round_q32(v * damping);
    }
    return ls_fx_clamp64_((int64_t)x + v + disp);
}

void ls_particles_integrate_(ls_world *w, ls_particle_system *s)
{
    ls_particle_store *ps = w->particles;
    ls_vec3 *x = ps->x + s->first, *xo = ps->x_old + s->first;
    ls_particle *p = ps->p + s->first;
    ls_vec3 base = ls_vec3_add(ls_vec3_scale(w->def.gravity, s->gravity_scale), s->acceleration);
    ls_vec3 g = ls_particles_accel_step_(base, w->dt);
    bool turb = s->turbulence != 0;
    for (uint32_t i = 0; i < s->count; i++) {
        ls_vec3 disp = g;
        if (turb || p[i].force.x != 0 || p[i].force.y != 0 || p[i].force.z != 0) {
            ls_vec3 a = base;
            if (turb) {
                a.x = ls_fx_add(a.x, turbulence_draw(&s->rng, s->turbulence));
                a.y = ls_fx_add(a.y, turbulence_draw(&s->rng, s->turbulence));
                a.z = ls_fx_add(a.z, turbulence_draw(&s->rng, s->turbulence));
            }
            a = ls_vec3_add(a, ls_vec3_scale(p[i].force, p[i].w));
            disp = ls_particles_accel_step_(a, w->dt);
            p[i].force = ls_vec3_zero();
        }
        ls_vec3 cur = x[i];
        if (p[i].w == 0) {
            xo[i] = cur;
            continue;
        }
        x[i].x = verlet1(cur.x, xo[i].x, s->damping, disp.x);
        x[i].y = verlet1(cur.y, xo[i].y, s->damping, disp.y);
        x[i].z = verlet1(cur.z, xo[i].z, s->damping, disp.z);
        xo[i] = cur;
    }
    // Pins: x* = x was set above (effective inverse mass 0); now x = target.
    ls_pcon *c = ps->con + s->con_first;
    for (uint32_t k = 0; k < s->con_count; k++) {
        if (c[k].type == LS_PARTICLE_PIN && ls_pcon_active_(&c[k])) {
            bool held;
            ls_vec3 t = ls_pcon_pin_target_(w, &c[k], &held);
            if (held) {
                x[c[k].a] = t;
            }
        }
    }
}
