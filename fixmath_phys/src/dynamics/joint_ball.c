// SPDX-License-Identifier: MIT
// Ball (spherical) joint (SPEC.md §23.2): the two anchors coincide, rotation
// is free. One 3-row block, C = (pb + rb) - (pa + ra), solved with the
// inverse of its 3x3 effective mass at the current arms (joint.c).
#include "joint.h"

static void warm_start(ls_world *w, ls_joint *j)
{
    ls_joint_apply_(w, j, ls_joint_arm_a_(w, j), ls_joint_arm_b_(w, j), j->linear_impulse,
                    ls_vec3_zero());
}

static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    ls_joint_point_solve_(w, j, ctx, use_bias);
}

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    (void)w;
    *linear = j->linear_impulse;
    *angular = ls_vec3_zero();
}

const ls_joint_kind ls_joint_ball_kind = {
    .name = "ball",
    .warm_start = warm_start,
    .solve = solve,
    .reaction = reaction,
};
