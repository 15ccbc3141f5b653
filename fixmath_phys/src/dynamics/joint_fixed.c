// SPDX-License-Identifier: MIT
// Fixed (weld) joint (SPEC.md §23.4): no relative motion. An angular 3-row
// block, C = 2 vec(qb conj(qa)) of the two joint frames with K = Ia + Ib,
// solved first (Box2D's weld order), then the point block.
#include "joint.h"

static void prepare(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    (void)ctx;
    (void)w;
    j->angular_mass = ls_joint_angular_block_mass_(j);
}

static void warm_start(ls_world *w, ls_joint *j)
{
    ls_joint_apply_(w, j, ls_joint_arm_a_(w, j), ls_joint_arm_b_(w, j), j->linear_impulse,
                    j->angular_impulse);
}

static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    ls_joint_angular_block_solve_(w, j, ctx, use_bias);
    ls_joint_point_solve_(w, j, ctx, use_bias);
}

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    (void)w;
    *linear = j->linear_impulse;
    *angular = j->angular_impulse;
}

const ls_joint_kind ls_joint_fixed_kind = {
    .name = "fixed",
    .prepare = prepare,
    .warm_start = warm_start,
    .solve = solve,
    .reaction = reaction,
};
