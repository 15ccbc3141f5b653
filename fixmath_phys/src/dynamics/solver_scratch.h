// SPDX-License-Identifier: MIT
// The solver's per-tick scratch, owned by the world (allocated at creation,
// never in a step). Nothing here is state: every array is rebuilt each tick
// from bodies, contacts and joints (SPEC.md §11.4).
#ifndef LS_DYNAMICS_SOLVER_SCRATCH_H
#define LS_DYNAMICS_SOLVER_SCRATCH_H

#include "graph.h"
#include "ls/world.h"
#include "solver_body.h"

#include <stddef.h>

struct ls_contact_lanes;
struct ls_rolling_lanes;
struct ls_contact_kernels;
struct ls_ball_lanes;
struct ls_ball_kernels;

/// Mass data of a body state, in the solver's precision (state 0: zeros).
typedef struct ls_solver_mass {
    int32_t inv_mass;       ///< Q10.22, 0 for a body that is not dynamic
    int32_t inv_inertia[6]; ///< world frame at the tick start, Q12.20: xx, xy, xz, yy, yz, zz
    ls_vec3 p;              ///< centre of mass at the tick start (state 0: the origin)
    int32_t pad;
    int64_t moved[3]; ///< sum of v h over this tick's sub-steps, exact (Q32.32)
    ls_vec3 acc;      ///< gravity + force / m of a dynamic body, constant over the tick's sub-steps
    /// The spin the sub-step's position update turned the body with (its
    /// angular velocity then): the relax pass steps joint angles by it
    /// (joint.h, ls_joint_relax_angle_). State 0: zero.
    ls_vec3 w_step;
} ls_solver_mass;

typedef struct ls_solver_scratch {
    ls_solver_body *states;           ///< [0] the identity, then the moving bodies in slot order
    ls_solver_body *impact;           ///< per state: the impact pass's velocity changes
    ls_solver_mass *masses;           ///< per state
    uint32_t *body_state;             ///< per body slot: its state this tick (0: the identity)
    uint32_t state_count;             ///< states in use, the identity included
    struct ls_contact_lanes *groups;  ///< contact groups, colour by colour, then the overflow
    struct ls_rolling_lanes *rolling; ///< rolling data of the groups that have some
    uint32_t *group_ovf;              ///< per group: lanes that left the solver range this tick
    uint32_t max_groups;              ///< capacity of groups, rolling and group_ovf
    uint32_t group_count;             ///< groups in use
    uint32_t rolling_count;           ///< rolling blocks in use
    /// Groups of colour c are [colour_group[c], colour_group[c + 1]); the last
    /// range (c = colour_count) is the overflow, solved lane after lane.
    uint32_t colour_group[LS_GRAPH_MAX_COLOURS + 2];
    /// Joints of colour c are joint_order[colour_joint[c] .. colour_joint[c + 1]).
    uint32_t colour_joint[LS_GRAPH_MAX_COLOURS + 2];
    /// Ball joint groups of colour c are [colour_ball[c], colour_ball[c + 1]).
    uint32_t colour_ball[LS_GRAPH_MAX_COLOURS + 2];
    struct ls_ball_lanes *balls; ///< ball joint groups, colour by colour, then the overflow
    uint32_t *ball_ovf;          ///< per ball group: lanes that left the solver range
    /// Per ball group: lanes whose joint has rows besides its point block
    /// (hinge, cone, fixed), solved just before the group's point blocks.
    uint32_t *ball_rows;
    uint32_t max_balls;                         ///< capacity of balls, ball_ovf and ball_rows
    uint32_t ball_count;                        ///< ball groups in use
    const struct ls_ball_kernels *ball_kernels; ///< the vector path (or the scalar reference)
    uint32_t colour_count;                      ///< colours (the overflow range follows them)
    uint32_t *joint_order;                      ///< active joint slots grouped by colour
    uint32_t *contact_list; ///< active contacts (index into w->contacts), constraint order
    const struct ls_contact_kernels *kernels; ///< the vector path (or the scalar reference)
    uint32_t rotate_lanes; ///< gyroscopic rotations this many at a time (rotate.h): 4 with
                           ///< AVX2, 8 with AVX-512, 0 on the scalar path
    void *memory;          ///< the one allocation behind the arrays above
} ls_solver_scratch;

/// Bytes ls_solver_scratch_init_ allocates for a world of this definition.
size_t ls_solver_scratch_size_(const ls_world_def *def);
/// Allocate the scratch of a world of this definition (false: out of memory).
bool ls_solver_scratch_init_(ls_solver_scratch *sv, const ls_world_def *def);
/// Free what ls_solver_scratch_init_ allocated (twice is fine).
void ls_solver_scratch_free_(ls_solver_scratch *sv);

#endif
