// SPDX-License-Identifier: MIT
// The solver's view of a moving body (SPEC.md §11.4): a compact 64-byte
// record per awake dynamic or kinematic body, apart from the body record.
//
// Why a separate record: the constraint sweeps run ~10^6 times a tick in a
// pile and touch only velocities and the motion since the tick began. The
// body record (ls_body) is ~500 bytes of shapes, mass data, transforms and
// sleep state; reading it in every sweep costs cache lines that carry nothing
// the sweep needs. Box2D v3 and Box3D split their bodies the same way
// (b2BodyState vs b2BodySim).
//
// Layout: the first 32 bytes hold what every sweep reads and writes (v, w),
// the last 32 what the position-aware sweeps read (dp, dq), so a vector path
// gathers and scatters whole 32-byte halves. State 0 is the identity: zero
// velocities, no motion, never written; bodies that do not move (static,
// sleeping) read it.
#ifndef LS_DYNAMICS_SOLVER_BODY_H
#define LS_DYNAMICS_SOLVER_BODY_H

#include "ls/quat.h"

#include <stdalign.h>

/// Flag bits of ls_solver_body.flags.
enum {
    LS_STATE_WRITABLE = 1u, ///< dynamic: constraints change its velocities
    LS_STATE_POSE = 2u,     ///< a joint outside the lanes reads its rotation matrix each sub-step
};

/// One moving body during a tick's solve. Every component stays within the
/// solver range [-2^30, 2^30) raw (SPEC.md §11.4); scratch, never saved.
typedef struct ls_solver_body {
    alignas(64) ls_vec3 v; ///< linear velocity, m/s (Q16.16)
    ls_vec3 w;             ///< angular velocity, rad/s, world frame (Q16.16)
    uint32_t flags;        ///< LS_STATE_* bits
    uint32_t body;         ///< body slot (identity state: UINT32_MAX)
    ls_vec3 dp;            ///< centre of mass now minus at the start of the tick, m
    ls_quat dq;            ///< rotation since the start of the tick: q * conj(q0)
    int32_t pad;
} ls_solver_body;

_Static_assert(sizeof(ls_solver_body) == 64, "a body state is one cache line");

#endif
