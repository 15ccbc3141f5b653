// SPDX-License-Identifier: MIT
// Fixed (weld) joint (SPEC.md §23.4): no relative motion. An angular 3-row
// block, C = 2 vec(qb conj(qa)) of the two joint frames with K = Ia + Ib,
// solved first (Box2D's weld order), then the point block (in the ball
// lanes, joint_lanes.h).
#include "joint.h"

static void prepare(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    (void)ctx;
    (void)w;
    j->angular_mass = ls_joint_angular_block_mass_(j);
}

static void warm_start(ls_world *w, ls_joint *j)
{
    ls_joint_apply_angular_(w, j, j->angular_impulse);
}

static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    ls_joint_angular_block_solve_(w, j, ctx, use_bias);
}

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    (void)w;
    *linear = j->linear_impulse;
    *angular = j->angular_impulse;
}

const ls_joint_kind ls_joint_fixed_kind_ = {
    .name = "fixed",
    .point_in_lanes = true,
    .prepare = prepare,
    .warm_start = warm_start,
    .solve = solve,
    .reaction = reaction,
};
