// SPDX-License-Identifier: MIT
// Forces and impulses on a chassis or ground body at a world point, and the
// effective mass there (SPEC.md §26.4-26.5).
#include "vehicle_internal.h"

// Velocity of body b at world point p.
ls_vec3 ls_vehicle_point_velocity_(const ls_body *b, ls_vec3 p)
{
    return ls_vec3_add(b->linear_velocity,
                       ls_vec3_cross(b->angular_velocity, ls_vec3_sub(p, b->p)));
}

// Impulse j at world point p: dv = j / m (divided, not multiplied by the
// rounded inverse mass, for precision at car masses), dw = I^-1 (r x j).
void ls_vehicle_apply_impulse_(ls_body *b, ls_vec3 j, ls_vec3 p)
{
    if (b->type != LS_BODY_DYNAMIC || b->mass <= 0) {
        return;
    }
    ls_vec3 dv =
        ls_vec3_make(ls_fx_div(j.x, b->mass), ls_fx_div(j.y, b->mass), ls_fx_div(j.z, b->mass));
    b->linear_velocity = ls_vec3_add(b->linear_velocity, dv);
    ls_vec3 r = ls_vec3_sub(p, b->p);
    b->angular_velocity = ls_vec3_add(b->angular_velocity,
                                      ls_mat3_mul_vec(b->inv_inertia_world, ls_vec3_cross(r, j)));
}

// Force f at world point p, added to the accumulators the solver integrates
// in every sub-step together with gravity (an impulse before the sub-steps
// would bias the damper by g dt / 2: SPEC.md §26.4).
void ls_vehicle_apply_force_(ls_body *b, ls_vec3 f, ls_vec3 p)
{
    if (b->type != LS_BODY_DYNAMIC) {
        return;
    }
    b->force = ls_vec3_add(b->force, f);
    b->torque = ls_vec3_add(b->torque, ls_vec3_cross(ls_vec3_sub(p, b->p), f));
}

// Effective mass of body b at point p along unit d: 1 / (1/m + (r x d).I^-1 (r x d)),
// computed as m / (1 + m (r x d).I^-1 (r x d)).
ls_fx ls_vehicle_effective_mass_(const ls_body *b, ls_vec3 p, ls_vec3 d)
{
    ls_vec3 rd = ls_vec3_cross(ls_vec3_sub(p, b->p), d);
    ls_fx ang = ls_vec3_dot(rd, ls_mat3_mul_vec(b->inv_inertia_world, rd));
    int64_t den = (int64_t)LS_FX_ONE + (((int64_t)b->mass * ang) >> 16);
    return (ls_fx)(((int64_t)b->mass << 16) / (den > 0 ? den : 1));
}

// Velocity of body b at world point p at the end of this tick if nothing else
// acted on it: gravity, the accumulated force and torque over dt (as the
// sub-steps integrate them, damping aside). Static and kinematic bodies keep
// their velocity.
ls_vec3 ls_vehicle_point_velocity_next_(const ls_world *w, const ls_body *b, ls_vec3 p)
{
    if (b->type != LS_BODY_DYNAMIC) {
        return ls_vehicle_point_velocity_(b, p);
    }
    ls_vec3 acc = ls_vec3_mad(w->def.gravity, b->force, b->inv_mass);
    ls_vec3 v = ls_vec3_mad(b->linear_velocity, acc, w->dt);
    ls_vec3 av =
        ls_vec3_add(b->angular_velocity,
                    ls_vec3_scale(ls_mat3_mul_vec(b->inv_inertia_world, b->torque), w->dt));
    return ls_vec3_add(v, ls_vec3_cross(av, ls_vec3_sub(p, b->p)));
}

// Effective mass of the pair (chassis b, ground g or NULL) at point p along
// unit d: 1 / (k_b + k_g) with k = 1/m + (r x d).I^-1 (r x d), computed as
// m_b / (1 + m_b k_b' + m_b k_g) so a car's mass keeps its precision; a
// static or kinematic ground adds nothing (it does not give way).
ls_fx ls_vehicle_pair_effective_mass_(const ls_body *b, const ls_body *g, ls_vec3 p, ls_vec3 d)
{
    ls_vec3 rd = ls_vec3_cross(ls_vec3_sub(p, b->p), d);
    ls_fx ang = ls_vec3_dot(rd, ls_mat3_mul_vec(b->inv_inertia_world, rd));
    int64_t den = (int64_t)LS_FX_ONE + (((int64_t)b->mass * ang) >> 16);
    if (g && g->type == LS_BODY_DYNAMIC && g->mass > 0) {
        ls_vec3 rg = ls_vec3_cross(ls_vec3_sub(p, g->p), d);
        ls_fx ang_g = ls_vec3_dot(rg, ls_mat3_mul_vec(g->inv_inertia_world, rg));
        den += (((int64_t)b->mass << 16) / g->mass) + (((int64_t)b->mass * ang_g) >> 16);
    }
    return (ls_fx)(((int64_t)b->mass << 16) / (den > 0 ? den : 1));
}
