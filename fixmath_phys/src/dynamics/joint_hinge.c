// SPDX-License-Identifier: MIT
// Hinge (revolute) joint (SPEC.md §23.3): the point block, two angular rows
// keeping the axes aligned, and scalar rows about the axis for the spring,
// motor and limits, solved in Box2D v3's order (spring, motor, limits,
// alignment, point); the point block is solved in the ball lanes
// (joint_lanes.h) right after these rows.
//
// Alignment rows: a = body a's axis, u and v body b's two frame directions
// perpendicular to its axis. C = (a . u, a . v) vanishes when the axes agree;
// dC/dt = (wb - wa) . (u x a) (and v), so the rows are angular rows along
// u x a and v x a, a 2x2 block (K in the upper-left of a 3x3, built from the
// current directions in each solve).
#include "joint.h"

#include "../math/mat3_spd2.h"

// The current axis and alignment directions.
typedef struct frames {
    ls_vec3 axis;   // a's axis
    ls_vec3 j0, j1; // u x a, v x a
    ls_fx c0, c1;   // a . u, a . v
    ls_fx angle;    // hinge angle (0 without limit and spring)
} frames;

// The directions and alignment errors at the bodies' current poses and, with
// `angled`, the hinge angle when limited or sprung (else 0; the reaction
// needs no angle).
static frames frames_of(const ls_world *w, const ls_joint *j, bool angled)
{
    frames f;
    ls_quat fa = ls_joint_frame_a_(w, j), fb = ls_joint_frame_b_(w, j);
    f.axis = ls_joint_quat_axis_(fa, 0);
    ls_vec3 u = ls_joint_quat_axis_(fb, 1), v = ls_joint_quat_axis_(fb, 2);
    if (ls_joint_small_dir_(f.axis) && ls_joint_small_dir_(u) && ls_joint_small_dir_(v)) {
        // Axes of unit frames: the same bits without the saturation checks.
        f.j0 = ls_joint_cross_dir_(u, f.axis);
        f.j1 = ls_joint_cross_dir_(v, f.axis);
        f.c0 = ls_joint_dot_dir_(u, f.axis);
        f.c1 = ls_joint_dot_dir_(v, f.axis);
    } else {
        f.j0 = ls_vec3_cross(u, f.axis);
        f.j1 = ls_vec3_cross(v, f.axis);
        f.c0 = ls_vec3_dot(f.axis, u);
        f.c1 = ls_vec3_dot(f.axis, v);
    }
    angled = angled && (j->flags & (LS_JOINT_F_LIMIT | LS_JOINT_F_SPRING));
    f.angle = angled ? ls_joint_twist_angle_(fa, fb) : 0;
    return f;
}

ls_fx ls_joint_hinge_angle_(const ls_world *w, const ls_joint *j)
{
    bool angled = j->flags & (LS_JOINT_F_LIMIT | LS_JOINT_F_SPRING);
    return angled ? ls_joint_twist_angle_(ls_joint_frame_a_(w, j), ls_joint_frame_b_(w, j)) : 0;
}

static void prepare(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    (void)w;
    (void)ctx;
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

static ls_fx axial_impulse(const ls_joint *j)
{
    ls_fx s = ls_fx_add(j->spring_impulse, j->motor_impulse);
    return ls_fx_add(s, ls_fx_sub(j->lower_impulse, j->upper_impulse));
}

static ls_vec3 angular_total(const ls_joint *j, const frames *f)
{
    ls_vec3 l = ls_vec3_add(ls_vec3_scale(f->j0, j->angular_impulse.x),
                            ls_vec3_scale(f->j1, j->angular_impulse.y));
    return ls_vec3_add(l, ls_vec3_scale(f->axis, axial_impulse(j)));
}

static bool axial_rows(const ls_joint *j)
{
    return j->flags & (LS_JOINT_F_LIMIT | LS_JOINT_F_SPRING | LS_JOINT_F_MOTOR);
}

void ls_joint_align2_inverse_(ls_fx k00, ls_fx k01, ls_fx k11, ls_fx inv[2][2])
{
    ls_mat3 out;
    if (ls_mat3_inverse_spd2_(k00, k01, k11, &out)) {
        inv[0][0] = out.row[0].x, inv[0][1] = out.row[0].y;
        inv[1][0] = out.row[1].x, inv[1][1] = out.row[1].y;
        return;
    }
    inv[0][0] = ls_joint_inverse1_(k00), inv[0][1] = 0;
    inv[1][0] = 0, inv[1][1] = ls_joint_inverse1_(k11);
}

// K^-1 of the two alignment rows (in the upper-left of a 3x3; only that
// part is read), from the cached directions (dir[1] = u x a, dir[2] = v x a).
static ls_mat3 alignment_inverse(const ls_joint *j)
{
    ls_fx inv[2][2];
    ls_joint_align2_inverse_(ls_joint_cached_k_(j, j->dir[1], 1),
                             ls_joint_cached_k_(j, j->dir[1], 2),
                             ls_joint_cached_k_(j, j->dir[2], 2), inv);
    ls_mat3 out = ls_mat3_diag(ls_vec3_zero());
    out.row[0] = ls_vec3_make(inv[0][0], inv[0][1], 0);
    out.row[1] = ls_vec3_make(inv[1][0], inv[1][1], 0);
    return out;
}

static bool align_only(const ls_joint *j)
{
    return !axial_rows(j);
}

// The warm start's pose, directions and masses, kept for this sub-step's
// solves (joint.h): dir = (axis, u x a, v x a), err = (a . u, a . v, angle);
// the axial mass is 0 when the joint has no row about the axis (unused).
static void warm_start(ls_world *w, ls_joint *j)
{
    frames f = frames_of(w, j, true);
    j->dir[0] = f.axis;
    j->dir[1] = f.j0;
    j->dir[2] = f.j1;
    j->err[0] = f.c0;
    j->err[1] = f.c1;
    j->err[2] = f.angle;
    // Without rows about the axis (no limit, motor or spring) its impulse is
    // 0 (prepare), so the axis's cached products are never read and its
    // term of the warm start adds nothing (a product 0 before the exact sum).
    bool axial = axial_rows(j);
    ls_joint_cache_dirs_from_(j, axial ? 0 : 1, 3);
    j->row_k[0] = axial ? ls_joint_cached_k_(j, f.axis, 0) : 0;
    j->row_mass[0] = ls_joint_inverse1_(j->row_k[0]);
    j->angular_mass = alignment_inverse(j);
    const ls_fx imp[3] = {axial_impulse(j), j->angular_impulse.x, j->angular_impulse.y};
    ls_joint_apply_dirs_(w, j, axial ? 0 : 1, imp + (axial ? 0 : 1), axial ? 3 : 2);
}

// The rows about the axis (spring, motor, limits), with the directions,
// masses and angle of this sub-step's warm start (joint.h,
// ls_joint_axial_rows); the relax pass steps the angle by the axis's speed
// (ls_joint_relax_angle_) or, with an explicit spring, measures it again at
// the moved pose (ls_joint_axial_steps_).
static void solve_axial(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    if (!axial_rows(j)) {
        return;
    }
    ls_joint_axial_rows r;
    ls_joint_axial_rows_of_(j, j->err[2], ctx->h, &r);
    ls_joint_step_spins_(w, j, &r.step_a, &r.step_b);
    if (!use_bias && !ls_joint_axial_steps_(&r)) {
        r.angle = ls_joint_hinge_angle_(w, j);
    }
    ls_vec3 wa = ls_joint_state_a_(w, j)->w, wb = ls_joint_state_b_(w, j)->w;
    ls_joint_axial_rows_solve_(&r, &wa, &wb, ctx->inv_h, ctx->joint, use_bias);
    ls_joint_set_spins_(w, j, wa, wb);
    ls_joint_axial_rows_store_(j, &r);
}

// The alignment rows (the ball lanes solve them on their own path,
// joint_lanes.h): the warm start's block, ls_joint_align2_solve_.
static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    solve_axial(w, j, ctx, use_bias);
    ls_joint_align2 r;
    ls_joint_align2_of_(j, &r);
    ls_vec3 wa = ls_joint_state_a_(w, j)->w, wb = ls_joint_state_b_(w, j)->w;
    ls_joint_align2_solve_(&r, &wa, &wb, ls_joint_rigid_(ctx, use_bias), use_bias);
    j->angular_impulse.x = r.imp[0];
    j->angular_impulse.y = r.imp[1];
    ls_joint_set_spins_(w, j, wa, wb);
}

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    frames f = frames_of(w, j, false);
    *linear = j->linear_impulse;
    // Plus an explicit spring's stiffness impulse (not warm-started).
    *angular = ls_vec3_add(angular_total(j, &f), ls_vec3_scale(f.axis, j->spring_push));
}

const ls_joint_kind ls_joint_hinge_kind_ = {
    .name = "hinge",
    .needs_axis = true,
    .point_in_lanes = true,
    .has_limit = true,
    .has_motor = true,
    .has_spring = true,
    .prepare = prepare,
    .warm_start = warm_start,
    .solve = solve,
    .lane_rows = LS_LANE_ROWS_ALIGN2,
    .align_only = align_only,
    .reaction = reaction,
};
