// SPDX-License-Identifier: MIT
// The constraint pipeline shared by contacts and joints (SPEC.md §11): a soft
// step with sub-steps, in stages like Box2D v3. Per tick: prepare (once), then
// for each sub-step: integrate velocities, warm start, solve (with bias),
// integrate positions, relax (without bias); then restitution and store.
//
// Contract for constraint code (contacts in contact_solver.c, joints in
// joint.c):
// - Velocities live in the solver states (solver_body.h) during the tick:
//   w->solver.states[b->state] for a body that moves or is kinematic, the
//   identity state 0 otherwise. A constraint writes only the states of its
//   two bodies, and only of a dynamic awake body (LS_STATE_WRITABLE): two
//   constraints of one graph colour never share such a body, so a colour may
//   be solved in any order, on any number of threads, with the same bits.
// - During sub-steps a body's p (centre of mass), q and xf.r (rotation
//   matrix of q) are current, and its state's dp = p - p0 and dq = q conj(q0)
//   too; xf.p and the shapes' transforms are not (they are refreshed after the
//   last sub-step). The mass data the solver uses are those of the tick start.
#ifndef LS_SOLVER_H
#define LS_SOLVER_H

#include "../world/world_internal.h"
#include "solver_body.h"

/// Soft-constraint coefficients for one sub-step (Box2D v3's b2Softness):
/// impulse = -m_eff * mass_scale * (Cdot + bias_rate * C) - impulse_scale * accumulated.
typedef struct ls_softness {
    ls_fx bias_rate;     ///< 1/s: fraction of the position error removed per second
    ls_fx mass_scale;    ///< 0..1
    ls_fx impulse_scale; ///< 0..1
} ls_softness;

/// Coefficients of a spring of frequency `hertz` and damping ratio `zeta` for
/// a sub-step of h seconds; hertz 0 gives a rigid constraint (bias 0, mass 1).
ls_softness ls_softness_make_(ls_fx hertz, ls_fx zeta, ls_fx h);

/// What every constraint needs to know about this tick.
typedef struct ls_step_ctx {
    ls_fx dt;                   ///< tick, s
    ls_fx h;                    ///< sub-step, s
    ls_fx inv_h;                ///< 1/h
    uint32_t substeps;          ///< sub-steps per tick
    ls_softness contact;        ///< contacts between two moving bodies
    ls_softness contact_static; ///< contacts against a body that does not move (stiffer)
    ls_softness joint;          ///< rigid joint rows (world joint_hertz, joint_damping_ratio)
    ls_fx max_push;             ///< most separation speed position correction may add, m/s
    ls_solver_body *states;     ///< the solver states of this tick (state 0: the identity)
} ls_step_ctx;

/// True when a body's velocity is solved this tick (dynamic and awake).
static inline bool ls_body_moves_(const ls_body *b)
{
    return b->type == LS_BODY_DYNAMIC && !b->asleep;
}

/// Velocity and position pipeline over awake bodies, contacts and joints (solver.c).
void ls_world_solve_(ls_world *w);

// Joint hooks (joint.c dispatches on the joint type). Each touches only its
// joint and the velocities of its two bodies.
struct ls_joint;
/// Once per tick, before the sub-steps: anchors, effective masses, softness.
void ls_joint_prepare_(ls_world *w, struct ls_joint *j, const ls_step_ctx *ctx);
/// Every sub-step: apply the accumulated impulses.
void ls_joint_warm_start_(ls_world *w, struct ls_joint *j);
/// Every sub-step: one iteration; use_bias false is the relax pass.
void ls_joint_solve_(ls_world *w, struct ls_joint *j, const ls_step_ctx *ctx, bool use_bias);
/// After the sub-steps: the reaction force and torque (writes only joint j).
void ls_joint_reaction_(const ls_world *w, struct ls_joint *j, const ls_step_ctx *ctx);
/// After every joint's reaction: breaking (serial, joint order).
void ls_joint_finish_(ls_world *w, struct ls_joint *j);

#endif
