// SPDX-License-Identifier: MIT
// Point blocks in the wide path (SPEC.md §23.10): the point constraint of up
// to LS_LANES ball, hinge, fixed or cone joints of one graph colour,
// structure of arrays like the contacts (contact_solver.h), with its
// effective mass computed once per sub-step instead of in every solve.
//
// Why: a grid or chain of ball joints (Box3D's joint_grid: 19,800 of them)
// spends its time in one 3-row block per joint per pass: the arms, the 3x3
// K and its inverse. Here the arms and K^-1 are computed at the sub-step's
// warm start (the bodies have turned since the last one) and reused by its
// solve and relax, and eight joints are solved at once. The kinds' other
// rows (a fixed joint's angular block; joint_*.c) stay per joint: the sweep
// runs them for the group's lanes just before the point blocks (solver.c).
// A hinge's rows about its axis (spring, motor, limits) and two alignment
// rows, and a cone's swing and twist rows, whose directions and masses the
// joint's warm start (a cone's prepare) computes, are copied into the lanes
// (the relax pass steps their angles in the lanes, ls_joint_relax_angle_, but
// a hinge with an explicit spring measures its own per joint) and solved
// with the point block, in
// the same pass over the bodies (joint_grid: 3,120 hinges, a third of the
// scene's time in those rows when they were solved one joint at a time). A
// group whose joints with rows are all hinges without limit, motor or spring
// (their only rows those two) also computes that warm start in the lanes
// (al_warm): frames, directions, K^-1 and the warm-start impulses, the
// hinge's own warm start being the scalar reference.
#ifndef LS_DYNAMICS_JOINT_LANES_H
#define LS_DYNAMICS_JOINT_LANES_H

#include "contact_solver.h"

/// A group of up to LS_LANES point blocks (ball, hinge, fixed, cone joints) of one colour.
typedef struct ls_ball_lanes {
    uint32_t a[LS_LANES], b[LS_LANES]; ///< body states (0: the identity)
    uint32_t joint[LS_LANES];          ///< joint slot, UINT32_MAX for an empty lane
    ls_lanes ima, imb;                 ///< inverse masses, Q10.22 (0: the body does not move)
    ls_lanes ia[6], ib[6];             ///< inverse inertias, Q12.20: xx, xy, xz, yy, yz, zz
    ls_lanes ra0[3], rb0[3];           ///< arms at the tick start (world frame), m
    ls_lanes c0[3];                    ///< centre of b minus centre of a at the tick start, m
    ls_lanes ra[3], rb[3];             ///< arms this sub-step (warm start), m
    ls_lanes kinv[6];                  ///< K^-1 this sub-step, kg: xx, xy, xz, yy, yz, zz
    ls_lanes impulse[3];               ///< accumulated impulse of this sub-step, N s
    /// A hinge's two alignment rows (ls_joint_align2, joint.h), copied from
    /// the joint after its warm start; all zero in a lane without them (the
    /// block then changes nothing).
    ls_lanes al_on;                    ///< 1: the lane's joint has the block
    ls_lanes al_dir[2][3];             ///< row directions (u x a, v x a)
    ls_lanes al_ia[2][3], al_ib[2][3]; ///< their inverse-inertia products
    ls_lanes al_c[2];                  ///< errors (a . u, a . v)
    ls_lanes al_inv[2][2];             ///< K^-1 of the block
    ls_lanes al_imp[2];                ///< accumulated impulses
    /// 1: the lane's whole warm start is the group's (a hinge with no rows
    /// but the point and alignment blocks, in a group where every joint with
    /// rows is such a hinge; joint.h align_only): the kernels then compute
    /// the alignment block from the data below instead of the joint.
    ls_lanes al_warm;
    uint32_t al_body_a[LS_LANES], al_body_b[LS_LANES]; ///< the joint's bodies (not states)
    ls_lanes al_fa[4], al_fb[4]; ///< the joint frames in the bodies (frame_a, frame_b)
    ls_lanes al_ma[9], al_mb[9]; ///< world inverse inertias (rows), 0 unless the body moves
    /// A cone's swing and twist rows (ls_joint_cone_rows, joint.h): the
    /// tick's directions, products and masses (prepare), the angles copied
    /// from the joint after each warm start; all zero in a lane without them.
    ls_lanes cn_on;                       ///< 1: the lane's joint is a cone with them
    ls_lanes cn_n[3], cn_t[3];            ///< swing (zero: no swing row) and twist directions
    ls_lanes cn_na[3], cn_nb[3];          ///< I_a^-1 n, I_b^-1 n
    ls_lanes cn_ta[3], cn_tb[3];          ///< I_a^-1 t, I_b^-1 t
    ls_lanes cn_swing, cn_twist;          ///< angles at the warm start
    ls_lanes cn_cone, cn_lower, cn_upper; ///< limits
    ls_lanes cn_m[2], cn_k;               ///< row masses, K of the twist row
    ls_lanes cn_acc[3];                   ///< accumulated: swing, lower, upper
    ls_lanes cn_tl;                       ///< 1: the twist is limited
    /// A cone's friction block (ls_joint_friction_rows, joint.h), solved
    /// before its cone rows; the bodies' world inverse inertias are in al_ma
    /// and al_mb (a cone lane has no alignment block).
    ls_lanes fr_on;     ///< 1: the lane's cone has friction
    ls_lanes fr_m[9];   ///< (I_a + I_b)^-1, rows
    ls_lanes fr_top;    ///< most impulse length this sub-step
    ls_lanes fr_acc[3]; ///< accumulated this sub-step
    /// A hinge's rows about its axis (ls_joint_axial_rows, joint.h: spring,
    /// motor, limits), solved before its alignment block; the limits,
    /// coefficients and flags are the tick's (prepare), the rest is copied
    /// from the joint after each warm start; all zero in a lane without them.
    ls_lanes ax_on;                       ///< 1: the lane's hinge solves these rows here
    ls_lanes ax_flags;                    ///< LS_AXIAL_SPRING, _EXPLICIT, _MOTOR, _LIMIT
    ls_lanes ax_d[3], ax_ia[3], ax_ib[3]; ///< the axis and its inverse-inertia products
    ls_lanes ax_k, ax_m, ax_angle;        ///< K, the row mass, the hinge angle at the warm start
    ls_lanes ax_lower, ax_upper;          ///< limits
    ls_lanes ax_rate, ax_ms, ax_is;       ///< the spring's bias rate, mass and impulse scales
    ls_lanes ax_speed, ax_top;            ///< motor speed, most motor impulse this sub-step
    ls_lanes ax_acc[4];                   ///< accumulated: spring, motor, lower, upper
    ls_lanes ax_push;                     ///< an explicit spring's stiffness impulse (spring_push)
} ls_ball_lanes;

/// ax_flags bits: the rows a lane's hinge has (EXPLICIT: its spring is).
enum { LS_AXIAL_SPRING = 1, LS_AXIAL_MOTOR = 2, LS_AXIAL_LIMIT = 4, LS_AXIAL_EXPLICIT = 8 };

/// The joint softness of a sweep (the world's joint spring, or rigid).
typedef struct ls_ball_sweep {
    ls_world *world; ///< the bodies' poses and the joints (the align_only warm start)
    ls_solver_body *states;
    int32_t bias_rate;            ///< 1/s (0 in the relax pass)
    int32_t mass_scale;           ///< (1 in the relax pass)
    int32_t impulse_scale;        ///< (0 in the relax pass)
    int32_t max_bias;             ///< most speed the bias may ask for, m/s (LS_JOINT_MAX_BIAS)
    int32_t use_bias;             ///< 0 in the relax pass (the alignment rows are then rigid)
    int32_t inv_h;                ///< 1/h (the cone's speculative limit rows)
    int32_t h;                    ///< the sub-step's length (the relax pass's angles)
    const ls_solver_mass *masses; ///< per state: w_step (the relax pass's angles)
    ls_softness joint;            ///< the world's joint spring (the cone's limit rows)
} ls_ball_sweep;

/// Fill lane `lane` of g, whose fields are all zero, from joint slot j
/// (UINT32_MAX: leave it empty);
/// `align`: the lane takes the joint's alignment block, if its kind has one
/// (not in the serial colour, whose lanes may share bodies: there the joint
/// solves all its rows before the point blocks, as the block's order
/// requires). Returns non-zero when a value left the solver range.
uint32_t ls_ball_prepare_lane_(const ls_world *w, ls_ball_lanes *g, uint32_t lane, uint32_t j,
                               bool align);
/// Before a relax sweep of a lane whose joint's rows are the lane's: a
/// hinge's angle measured at the moved pose when the relax pass does not step
/// it (ls_joint_axial_steps_: an explicit spring), else nothing.
void ls_ball_relax_angles_(const ls_world *w, ls_ball_lanes *g, uint32_t lane);
/// Write each lane's accumulated impulse back to its joint.
void ls_ball_store_(ls_world *w, const ls_ball_lanes *g);
/// Before the warm start of lane `lane`'s joint: the impulses of its rows
/// in the lane (alignment block or cone rows) back to the joint (they were
/// accumulated in the lane).
void ls_ball_align_load_(ls_world *w, const ls_ball_lanes *g, uint32_t lane);
/// After that warm start: the joint's block into the lane (a cone's: only
/// its angles; its directions, products and masses are the tick's, filled
/// by ls_ball_prepare_lane_); h: the sub-step's length (a hinge motor's
/// most impulse).
void ls_ball_align_fill_(const ls_world *w, ls_ball_lanes *g, uint32_t lane, ls_fx h);

/// K^-1 (Q16.16, xx, xy, xz, yy, yz, zz) of a symmetric K given in Q28.36,
/// with one division (joint_lanes.c states the rule); raises *ovf when an
/// entry leaves the solver range.
void ls_ball_inverse_k_(const int64_t *k, int32_t *out, uint32_t *ovf);

/// The sweeps over one group (scalar reference; lanes one after the other,
/// so also correct for lanes that share a body). Each returns the lanes
/// whose values left the solver range. The solve runs each lane's
/// alignment block (ls_joint_align2_solve_) before its point block.
uint32_t ls_ball_warm_start_scalar_(const ls_ball_sweep *sw, ls_ball_lanes *g);
uint32_t ls_ball_solve_scalar_(const ls_ball_sweep *sw, ls_ball_lanes *g);

/// A set of ball joint sweeps over groups of disjoint lanes (one colour).
typedef struct ls_ball_kernels {
    const char *name;
    uint32_t (*warm_start)(const ls_ball_sweep *sw, ls_ball_lanes *g);
    uint32_t (*solve)(const ls_ball_sweep *sw, ls_ball_lanes *g);
} ls_ball_kernels;

/// The scalar reference.
extern const ls_ball_kernels ls_ball_kernels_scalar_;
/// The x86 AVX2 sweeps (joint_avx2.c; the scalar ones on other targets).
extern const ls_ball_kernels ls_ball_kernels_avx2_;
/// The x86 AVX-512 sweeps (joint_avx512.c; the scalar ones on other targets).
extern const ls_ball_kernels ls_ball_kernels_avx512_;

#endif
