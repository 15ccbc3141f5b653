// SPDX-License-Identifier: MIT
// Prismatic (slider) joint (SPEC.md §23.5): body b slides along body a's
// axis without rotating. Rows, in Box2D v3's order: spring, motor and limits
// along the axis, then the 3 angular rows of the fixed joint, then 2 linear
// rows perpendicular to the axis (a 2x2 block).
//
// A linear row along a direction n fixed in body a acts at b's anchor; its
// arm on body a is ra + d (d = separation of the anchors), because n turns
// with a: C = n . d, dC/dt = n . (vb + wb x rb - va - wa x (ra + d)).
#include "joint.h"

typedef struct geometry {
    ls_vec3 ra, rb, ra_d; // arms; ra_d = ra + d
    ls_vec3 n, p1, p2;    // axis and the two perpendiculars (body a's frame)
    ls_vec3 d;            // separation (pb + rb) - (pa + ra)
} geometry;

static geometry geometry_of(const ls_world *w, const ls_joint *j)
{
    geometry g;
    const ls_body *a = &w->bodies[j->a], *b = &w->bodies[j->b];
    g.ra = ls_joint_arm_a_(w, j);
    g.rb = ls_joint_arm_b_(w, j);
    g.d = ls_vec3_sub(ls_vec3_add(b->p, g.rb), ls_vec3_add(a->p, g.ra));
    g.ra_d = ls_vec3_add(g.ra, g.d);
    ls_quat fa = ls_joint_frame_a_(w, j);
    g.n = ls_joint_quat_axis_(fa, 0);
    g.p1 = ls_joint_quat_axis_(fa, 1);
    g.p2 = ls_joint_quat_axis_(fa, 2);
    return g;
}

// Inverse of the perpendicular rows' 2x2 K (upper-left of a 3x3).
static ls_mat3 perpendicular_mass(const ls_joint *j, const geometry *g0)
{
    const geometry g = *g0;
    ls_fx k00 = ls_joint_linear_k_(j, g.ra_d, g.rb, g.p1);
    ls_fx k11 = ls_joint_linear_k_(j, g.ra_d, g.rb, g.p2);
    // Off-diagonal: the directions are perpendicular, so only the angular terms.
    ls_vec3 a1 = ls_vec3_cross(g.ra_d, g.p1), a2 = ls_vec3_cross(g.ra_d, g.p2);
    ls_vec3 b1 = ls_vec3_cross(g.rb, g.p1), b2 = ls_vec3_cross(g.rb, g.p2);
    int64_t s = ls_vec3_dot_q32(a1, ls_mat3_mul_vec(j->inv_i_a, a2));
    s = ls_i64_add_sat(s, ls_vec3_dot_q32(b1, ls_mat3_mul_vec(j->inv_i_b, b2)));
    ls_fx k01 = ls_fx_from_q32(s);
    ls_mat3 k = {
        {ls_vec3_make(k00, k01, 0), ls_vec3_make(k01, k11, 0), ls_vec3_make(0, 0, LS_FX_ONE)}};
    return ls_joint_inverse_(k);
}

static void prepare(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    (void)w;
    (void)ctx;
    j->angular_mass = ls_joint_angular_block_mass_(j);
    if (!(j->flags & LS_JOINT_F_LIMIT)) {
        j->lower_impulse = j->upper_impulse = 0;
    }
    if (!(j->flags & LS_JOINT_F_MOTOR)) {
        j->motor_impulse = 0;
    }
    if (!(j->flags & LS_JOINT_F_SPRING)) {
        j->spring_impulse = 0;
    }
}

static ls_vec3 linear_total(const ls_joint *j, const geometry *g)
{
    ls_fx axial = ls_fx_add(ls_fx_add(j->spring_impulse, j->motor_impulse),
                            ls_fx_sub(j->lower_impulse, j->upper_impulse));
    ls_vec3 p = ls_vec3_add(ls_vec3_scale(g->p1, j->linear_impulse.x),
                            ls_vec3_scale(g->p2, j->linear_impulse.y));
    return ls_vec3_add(p, ls_vec3_scale(g->n, axial));
}

static void warm_start(ls_world *w, ls_joint *j)
{
    geometry g = geometry_of(w, j);
    ls_joint_apply_(w, j, g.ra_d, g.rb, linear_total(j, &g), j->angular_impulse);
}

static void apply_linear(ls_world *w, const ls_joint *j, const geometry *g, ls_vec3 dir,
                         ls_fx impulse)
{
    ls_joint_apply_(w, j, g->ra_d, g->rb, ls_vec3_scale(dir, impulse), ls_vec3_zero());
}

static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    geometry g = geometry_of(w, j);
    ls_fx translation = ls_vec3_dot(g.n, g.d);
    ls_fx axial_mass = ls_joint_inverse1_(ls_joint_linear_k_(j, g.ra_d, g.rb, g.n));
    if ((j->flags & LS_JOINT_F_SPRING) && j->spring_hertz > 0) {
        ls_fx cdot = ls_joint_linear_speed_(w, j, g.ra_d, g.rb, g.n);
        ls_fx imp =
            ls_joint_spring_row_(j, translation, cdot, axial_mass, &j->spring_impulse, use_bias);
        apply_linear(w, j, &g, g.n, imp);
    }
    if (j->flags & LS_JOINT_F_MOTOR) {
        ls_fx cdot = ls_joint_linear_speed_(w, j, g.ra_d, g.rb, g.n);
        ls_fx imp = ls_joint_motor_row_(j, cdot, axial_mass, &j->motor_impulse, ctx);
        apply_linear(w, j, &g, g.n, imp);
    }
    if (j->flags & LS_JOINT_F_LIMIT) {
        ls_fx cdot = ls_joint_linear_speed_(w, j, g.ra_d, g.rb, g.n);
        ls_fx imp = ls_joint_limit_row_(ls_fx_sub(translation, j->lower), cdot, axial_mass,
                                        &j->lower_impulse, ctx, use_bias);
        apply_linear(w, j, &g, g.n, imp);
        cdot = ls_fx_neg(ls_joint_linear_speed_(w, j, g.ra_d, g.rb, g.n));
        imp = ls_joint_limit_row_(ls_fx_sub(j->upper, translation), cdot, axial_mass,
                                  &j->upper_impulse, ctx, use_bias);
        apply_linear(w, j, &g, g.n, ls_fx_neg(imp));
    }
    ls_joint_angular_block_solve_(w, j, ctx, use_bias);
    // Perpendicular rows.
    ls_softness s = ls_joint_rigid_(ctx, use_bias);
    ls_vec3 rhs = ls_vec3_make(ls_joint_linear_speed_(w, j, g.ra_d, g.rb, g.p1),
                               ls_joint_linear_speed_(w, j, g.ra_d, g.rb, g.p2), 0);
    if (use_bias) {
        ls_vec3 c = ls_vec3_make(ls_vec3_dot(g.p1, g.d), ls_vec3_dot(g.p2, g.d), 0);
        ls_vec3 bias = ls_joint_bias3_(c, s.bias_rate);
        rhs.x = ls_fx_add(rhs.x, bias.x);
        rhs.y = ls_fx_add(rhs.y, bias.y);
    }
    ls_vec3 x = ls_mat3_mul_vec(perpendicular_mass(j, &g), rhs);
    ls_vec3 imp = ls_vec3_neg(ls_vec3_add(ls_vec3_scale(x, s.mass_scale),
                                          ls_vec3_scale(j->linear_impulse, s.impulse_scale)));
    imp.z = 0;
    j->linear_impulse = ls_vec3_add(j->linear_impulse, imp);
    ls_vec3 p = ls_vec3_add(ls_vec3_scale(g.p1, imp.x), ls_vec3_scale(g.p2, imp.y));
    ls_joint_apply_(w, j, g.ra_d, g.rb, p, ls_vec3_zero());
}

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    geometry g = geometry_of(w, j);
    // Plus an explicit spring's stiffness impulse (not warm-started).
    *linear = ls_vec3_add(linear_total(j, &g), ls_vec3_scale(g.n, j->spring_push));
    *angular = j->angular_impulse;
}

// Off the axis (the perpendicular part of the separation), plus how far the
// translation lies outside an enabled limit.
static ls_fx stretch(const ls_world *w, const ls_joint *j)
{
    geometry g = geometry_of(w, j);
    ls_fx off = ls_vec3_len(ls_vec3_make(ls_vec3_dot(g.d, g.p1), ls_vec3_dot(g.d, g.p2), 0));
    if (j->flags & LS_JOINT_F_LIMIT) {
        ls_fx t = ls_vec3_dot(g.d, g.n);
        ls_fx out = ls_fx_max(ls_fx_sub(j->lower, t), ls_fx_sub(t, j->upper));
        off = ls_fx_add(off, ls_fx_max(out, 0));
    }
    return off;
}

const ls_joint_kind ls_joint_prismatic_kind_ = {
    .name = "prismatic",
    .needs_axis = true,
    .has_limit = true,
    .has_motor = true,
    .has_spring = true,
    .prepare = prepare,
    .warm_start = warm_start,
    .solve = solve,
    .reaction = reaction,
    .stretch = stretch,
};
