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
