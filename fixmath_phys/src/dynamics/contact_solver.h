// SPDX-License-Identifier: MIT
// The contact solver (SPEC.md §11.2, §11.4): contact constraints of one tick
// as groups of LS_LANES manifolds stored structure-of-arrays, and the sweeps
// over them (prepare, warm start, solve, relax, restitution, store).
//
// Why this layout: a manifold is one normal row per point plus one 2D
// friction row, one twist row and (for one or two points) a rolling block at
// its centre (Box3D's formulation) -- 4 + 3 rows for a face instead of 12 + 3
// -- and each row's Jacobian, effective mass and cached products are
// computed once per tick. A sweep reads them as consecutive runs of LS_LANES
// integers, so the lanes of a group are computed side by side, by the scalar
// reference one lane after the other (contact_solver.c) or by a vector path
// all at once (contact_avx2.c). The manifolds of a group belong to one
// graph colour (no two share a moving body), so a lane's result does not
// depend on its neighbours: every path gives the same bits. The overflow
// constraints (no colour) are packed the same way and always solved by the
// scalar reference, lane after lane, which is then sequential.
#ifndef LS_DYNAMICS_CONTACT_SOLVER_H
#define LS_DYNAMICS_CONTACT_SOLVER_H

#include "lane_math.h"
#include "solver.h"
#include "solver_body.h"

/// One lane value per manifold of a group.
typedef int32_t ls_lanes[LS_LANES];

/// Point k of every manifold of a group (zero in lanes with fewer points).
/// Fields are in the order the solve sweep reads them.
typedef struct ls_contact_point_lanes {
    ls_lanes base;         ///< separation minus n . (sb - sa), m; after the sub-steps, in
                           ///< a chain lane (ls_contact_lanes.impact): the restitution target, m/s
    ls_lanes sa[3], sb[3]; ///< separation arms: the point's core point (the point unless
                           ///< the shape is round) from each centre of mass at the tick start, m
    ls_lanes ang_a[3];     ///< ra x n
    ls_lanes ang_b[3];     ///< rb x n
    ls_lanes mass;         ///< 1 / K_ii of the row (Gauss-Seidel) or the Jacobi mass, kg
    ls_lanes soft_mass;    ///< mass * the spring's mass scale, kg
    ls_lanes impulse;      ///< accumulated normal impulse, N s
    ls_lanes max_impulse;  ///< largest accumulated impulse this tick (restitution)
    ls_lanes iang_a[3];    ///< Ia^-1 (ra x n), Q12.20 (zero if a does not move)
    ls_lanes iang_b[3];    ///< Ib^-1 (rb x n), Q12.20
    ls_lanes twist_lever;  ///< mu * distance from the friction centre, m (twist limit)
    ls_lanes vn0;          ///< normal velocity at prepare (restitution), m/s
} ls_contact_point_lanes;

/// Shifts of the bytes of ls_contact_lanes.impact.
enum { LS_IMPACT_MAY = 0, LS_IMPACT_FIRED = 8, LS_IMPACT_EVER = 16, LS_IMPACT_CHAIN = 24 };

/// A group of up to LS_LANES manifolds of one colour. The fields are in the
/// order the sweeps read them (the group is streamed from memory every sweep).
typedef struct ls_contact_lanes {
    // Per group (not per lane): set by the packing and the prepare.
    int32_t points;  ///< most points of any lane
    int32_t rolling; ///< index of the group's rolling data, -1: none
    /// Restitution (solver.c, the impact pass), a byte of lanes each: bits
    /// 0-7 the lanes that may bounce this tick (restitution and a point
    /// approaching faster than the threshold at prepare), 8-15 those that
    /// bounced in the current impact sweep, 16-23 in any sweep, 24-31 the
    /// lanes whose restitution targets come from the impact pass (IMPACT_*).
    uint32_t impact;
    uint32_t live; ///< lanes holding a contact (set by the prepare; solver.c, sparse groups)
#if LS_LANES > 4
    int32_t pad[LS_LANES - 4];
#endif
    // Per lane.
    uint32_t a[LS_LANES], b[LS_LANES]; ///< body states (0: the identity)
    uint32_t count[LS_LANES];          ///< points (0: empty lane)
    uint32_t jacobi[LS_LANES];         ///< ~0: an impact, normals Jacobi-style; 0: Gauss-Seidel
    ls_lanes n[3];                     ///< normal, from a to b, unit
    ls_lanes bias_rate;                ///< contact spring, 1/s
    ls_lanes impulse_scale;            ///< contact spring
    ls_lanes nm_a[3], nm_b[3];         ///< n * inv_mass, Q10.22
    ls_contact_point_lanes p[LS_MANIFOLD_MAX];
    ls_lanes twist_mass;             ///< 1 / (n . (Ia^-1 + Ib^-1) n)
    ls_lanes twist;                  ///< accumulated twist impulse, N m s
    ls_lanes in_a[3], in_b[3];       ///< Ia^-1 n, Ib^-1 n, Q12.20
    ls_lanes t1[3], t2[3];           ///< tangents, unit
    ls_lanes ct1_a[3], ct1_b[3];     ///< ca x t1, cb x t1 (c: friction centre from a, b)
    ls_lanes ct2_a[3], ct2_b[3];     ///< ca x t2, cb x t2
    ls_lanes tmass[3];               ///< friction: 1 / K along t1, (0), along t2
    ls_lanes f1, f2;                 ///< accumulated friction impulse along t1, t2, N s
    ls_lanes inv_mass_a, inv_mass_b; ///< Q10.22 (zero for a body that does not move)
    ls_lanes ict1_a[3], ict2_a[3];   ///< Ia^-1 (ca x t1), Ia^-1 (ca x t2), Q12.20
    ls_lanes ict1_b[3], ict2_b[3];   ///< Ib^-1 (cb x t1), Ib^-1 (cb x t2), Q12.20
    ls_lanes friction;               ///< mu
    ls_lanes restitution;            ///< e
    uint32_t contact[LS_LANES];      ///< index of the contact in w->contacts
} ls_contact_lanes;

/// Rolling resistance of the groups that have it (contacts of one or two
/// points): a 3-row angular block per lane.
typedef struct ls_rolling_lanes {
    ls_lanes limit;   ///< rolling_resistance (0 in lanes without it), m
    ls_lanes mass[6]; ///< (Ia^-1 + Ib^-1)^-1: xx, xy, xz, yy, yz, zz
    ls_lanes ia[6];   ///< Ia^-1 (same order), Q12.20
    ls_lanes ib[6];   ///< Ib^-1, Q12.20
    ls_lanes r[3];    ///< accumulated rolling impulse, N m s
} ls_rolling_lanes;

/// What the sweeps need besides the groups.
typedef struct ls_contact_sweep {
    ls_solver_body *states;
    ls_rolling_lanes *rolling;
    int32_t inv_h;     ///< 1/h of the mean sub-step, Q16.16
    int32_t max_push;  ///< -max_push_velocity, Q16.16 (negative)
    int32_t threshold; ///< -restitution_threshold, Q16.16 (negative)
    uint32_t first;    ///< the point slot solved first in every manifold (SPEC.md §11.2)
    bool reverse;      ///< slots in descending order (from `first`, wrapping)
    bool use_bias;     ///< solve (true) or relax (false)
    bool surface;      ///< also friction, twist and rolling (the relax pass; the
                       ///< solve pass when position_iterations is 0)
    bool chain_only;   ///< restitution: only the chain lanes (ls_contact_lanes.impact)
} ls_contact_sweep;

/// The prepare's scratch for one group (contact_solver.c): each lane's inputs
/// of the arithmetic stage and its 64-bit K entries, structure of arrays.
typedef struct ls_contact_prep {
    ls_lanes ra[LS_MANIFOLD_MAX][3]; ///< arms from a's centre of mass to the points, m
    ls_lanes rb[LS_MANIFOLD_MAX][3]; ///< arms from b's
    ls_lanes depth[LS_MANIFOLD_MAX]; ///< the points' depths, m
    ls_lanes ia[6], ib[6];           ///< inverse inertias (0 if the body does not move), Q12.20
    ls_lanes dv[3];                  ///< v_b - v_a at the tick start, m/s
    ls_lanes wa[3], wb[3];           ///< angular velocities, rad/s
    ls_lanes ca[3], cb[3];           ///< the friction centre from each centre of mass, m
    ls_lanes mass_scale;             ///< the contact spring's mass scale
    uint32_t ovf[LS_LANES];          ///< a value left the solver range
    int64_t kmass[LS_LANES];         ///< m_a^-1 + m_b^-1, Q28.36
    int64_t kii[LS_MANIFOLD_MAX][LS_LANES]; ///< K_ii of each normal row, Q28.36
    int64_t kt[2][LS_LANES];                ///< K of the friction rows along t1, t2
    int64_t ktw[LS_LANES];                  ///< K of the twist row
    /// Non-zero when the caller zeroed this scratch and every lane field of
    /// the group and its rolling block (solver.c, groups_prepare): `begin`
    /// then skips its own per-lane clearing (the same zeros).
    uint32_t cleared;
    /// Non-zero when the caller zeroed the group's point slots that some lane
    /// leaves empty, and its rolling block, for every lane at once (solver.c,
    /// groups_prepare): `begin` then skips clearing them lane by lane.
    uint32_t points_cleared;
} ls_contact_prep;

/// The prepare of one lane in three stages (contact_solver.c): `begin` fills
/// lane `lane` of g (and of its rolling block roll, may be NULL) from contact
/// ci, or clears it for UINT32_MAX, and the lane's inputs in t; `math` the
/// arithmetic (scalar reference of the vector prepares); `end` the decisions
/// and divisions, returning non-zero when a value of the lane left the solver
/// range (a lever arm or a mass product; the caller reports it).
void ls_contact_prep_begin_(const ls_world *w, const ls_step_ctx *ctx, ls_contact_lanes *g,
                            ls_rolling_lanes *roll, ls_contact_prep *t, uint32_t lane, uint32_t ci);
void ls_contact_prep_math_(ls_contact_lanes *g, ls_contact_prep *t, uint32_t lane);
uint32_t ls_contact_prep_end_(const ls_world *w, ls_contact_lanes *g, ls_rolling_lanes *roll,
                              ls_contact_prep *t, uint32_t lane);
/// ls_contact_prep_math_ on every lane; returns the mask of lanes whose t->ovf is set.
uint32_t ls_contact_prep_math_scalar_(ls_contact_lanes *g, ls_contact_prep *t);
/// Prepare every lane of g from g->contact[] (scalar reference); returns the
/// mask of the lanes whose values left the solver range.
uint32_t ls_contact_prepare_scalar_(const ls_world *w, const ls_step_ctx *ctx, ls_contact_lanes *g,
                                    ls_rolling_lanes *roll, ls_contact_prep *t);
/// Write the accumulated impulses of every lane back to its contact.
void ls_contact_store_(ls_world *w, const ls_contact_lanes *g, const ls_rolling_lanes *roll);

/// The sweeps over one group, scalar reference: lanes one after the other,
/// each reading and writing its bodies' states (so it is also correct for
/// the overflow group, whose lanes may share bodies). Each returns non-zero
/// when a value left the solver range.
uint32_t ls_contact_warm_start_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g);
uint32_t ls_contact_solve_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g);
uint32_t ls_contact_restitution_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g);
/// The impact pass (solver.c): one sweep of sequential impacts on the
/// velocity changes in sw->states (the impact states), and its end, the
/// restitution targets of the lanes whose bodies more than one impact moved.
uint32_t ls_contact_impact_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g);
uint32_t ls_contact_impact_end_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g);
/// Clamp an accumulated vector impulse of n (2 or 3) exact components into
/// the ball of radius lim (contact_solver.c states the rule); the vector
/// paths call it for the lanes that leave the ball.
void ls_contact_clamp_ball_(int64_t *c, int n, int32_t lim);

/// A set of sweeps over groups of disjoint lanes (one colour).
typedef struct ls_contact_kernels {
    const char *name;
    uint32_t (*warm_start)(const ls_contact_sweep *sw, ls_contact_lanes *g);
    uint32_t (*solve)(const ls_contact_sweep *sw, ls_contact_lanes *g);
    uint32_t (*restitution)(const ls_contact_sweep *sw, ls_contact_lanes *g);
    /// The prepare's arithmetic stage (ls_contact_prep_math_) over every lane
    /// of g after each lane's `begin`: returns non-zero when a value left the
    /// solver range (the scalar reference saturates it and marks t->ovf; a
    /// vector path only checks, and its prepare redoes the group with the
    /// scalar reference).
    uint32_t (*prep_math)(ls_contact_lanes *g, ls_contact_prep *t);
    /// The prepare of a group (the same bits as ls_contact_prepare_scalar_).
    uint32_t (*prepare)(const ls_world *w, const ls_step_ctx *ctx, ls_contact_lanes *g,
                        ls_rolling_lanes *roll, ls_contact_prep *t);
} ls_contact_kernels;

/// The scalar reference kernels.
extern const ls_contact_kernels ls_contact_kernels_scalar_;
/// The x86 AVX2 kernels (contact_avx2.c; the scalar ones on other targets).
extern const ls_contact_kernels ls_contact_kernels_avx2_;
/// True when this build and CPU can run the AVX2 kernels.
bool ls_contact_avx2_supported_(void);
/// The x86 AVX-512 kernels (F, VL, DQ, BW; contact_avx512.c; the scalar ones
/// on other targets).
extern const ls_contact_kernels ls_contact_kernels_avx512_;
/// True when this build and CPU can run the AVX-512 kernels.
bool ls_contact_avx512_supported_(void);

#endif
