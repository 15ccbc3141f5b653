// SPDX-License-Identifier: MIT
// Ball (spherical) joint (SPEC.md §23.2): the two anchors coincide, rotation
// is free. One 3-row block, C = (pb + rb) - (pa + ra), solved in the ball
// lanes with the inverse of its 3x3 effective mass (joint_lanes.h): the kind
// has no rows of its own.
#include "joint.h"

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    (void)w;
    *linear = j->linear_impulse;
    *angular = ls_vec3_zero();
}

const ls_joint_kind ls_joint_ball_kind_ = {
    .name = "ball",
    .point_in_lanes = true,
    .reaction = reaction,
};
