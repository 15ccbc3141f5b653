// SPDX-License-Identifier: MIT
// Joints, private layout (SPEC.md §23). A joint is one slot of the world's
// joint array (index + generation, free list like bodies) and one entry of the
// kind table (joint.c): each kind lives in its own file (joint_ball.c, ...)
// and implements the solver hooks of solver.h through the helpers below.
//
// Frames: a joint keeps its anchor in each body's frame (from the centre of
// mass) and a joint frame (a rotation whose x axis is the joint axis) in each
// body's frame, both taken from the world anchor and axis at creation, so the
// creation pose is the rest pose (hinge angle 0, translation 0).
//
// Impulses: the accumulated impulses are those of one sub-step (Box2D v3): a
// sub-step's solve starts from the last sub-step's values (warm start), and
// the reaction of a step is the last sub-step's impulse divided by h.
//
// Point blocks: a ball, hinge, fixed or cone joint holds its two anchors
// together with a 3-row point block solved in the wide path (joint_lanes.h,
// K^-1 once per sub-step for eight joints at a time); the kind's hooks below
// handle its other rows, and the sweep runs them just before the point
// (solver.c). Prismatic and distance joints are solved wholly here.
//
// Effective masses of the other rows are built from the current directions
// in each solve (as Box2D v3 does). A K from the start of the tick does not
// match a Jacobian whose direction has turned (a chain's whipping end turns
// ~1 rad a tick) and the iteration overshoots and diverges. The world
// inverse inertia stays the one of the tick's start, as in the velocity
// updates, so K and the response it predicts agree.
//
// Geometry once per sub-step: hinge and cone joints (rain's ragdolls)
// evaluate their row directions, angles, inverse-inertia products (dir_ia,
// dir_ib) and row masses at each sub-step's warm start and both passes of
// the sub-step use them; the relax pass, after the positions moved,
// recomputes only the angles (SPEC.md §23.4 "Hinge and cone rows"). Rows
// about one direction share its speed, updated by K times each impulse, and
// apply their sum once.
#ifndef LS_DYNAMICS_JOINT_H
#define LS_DYNAMICS_JOINT_H

#include "ls/joint.h"
#include "solver.h"

// ---- Ranges (SPEC.md §23) ----

#define LS_JOINT_ANCHOR_RANGE  LS_FX_INT(2048) // world anchors, each component
#define LS_JOINT_ARM_RANGE     LS_FX_INT(128) // anchor from a body's centre of mass, each component
#define LS_JOINT_MAX_LENGTH    LS_FX_INT(4096) // distance lengths
#define LS_JOINT_MIN_ROD       655             // 0.01 m: shortest rigid distance rod
#define LS_JOINT_ANGULAR_SPEED LS_FX_INT(128)  // hinge motor speed, rad/s
#define LS_JOINT_LINEAR_SPEED  LS_FX_INT(512)  // prismatic motor speed, m/s
#define LS_JOINT_MAX_HERTZ     LS_FX_INT(1000) // spring frequency
#define LS_JOINT_MAX_ZETA      LS_FX_INT(100)  // spring damping ratio
#define LS_JOINT_SLIDER_RANGE  LS_FX_INT(2048) // prismatic limits, m

/// Flag bits of ls_joint.flags (state).
enum {
    LS_JOINT_F_LIMIT = 1u,   ///< enable_limit
    LS_JOINT_F_MOTOR = 2u,   ///< enable_motor
    LS_JOINT_F_SPRING = 4u,  ///< enable_spring
    LS_JOINT_F_COLLIDE = 8u, ///< collide_connected
    LS_JOINT_F_ALL = 15u,    ///< every defined bit
};

/// One joint slot. The first five fields are read by the island and graph code
/// (keep them first and in this order). Fields marked (state) are saved in
/// snapshots and (except user_data) hashed by the checksum; (derived) are
/// rebuilt from state; (scratch) live within one step.
typedef struct ls_joint {
    uint32_t generation; ///< (state) id generation of this slot
    bool alive;          ///< (state)
    uint8_t type;        ///< (state) ls_joint_type
    uint32_t a, b;       ///< (state) body slots
    uint32_t flags;      ///< (state) LS_JOINT_F_* bits
    /// (derived) next joint in the list of body a (UINT32_MAX: end); b's
    /// next. Beside a, b and flags: a walk of a body's joints (the pair
    /// filter, ls_joint_filters_pair_, for every broad-phase pair) reads
    /// one cache line per joint.
    uint32_t next_a;
    uint32_t next_b;    ///< (derived)
    ls_vec3 local_a;    ///< (state) anchor in a's frame, from a's centre of mass
    ls_vec3 local_b;    ///< (state) anchor in b's frame, from b's centre of mass
    ls_quat frame_a;    ///< (state) joint frame in a's frame (x = axis)
    ls_quat frame_b;    ///< (state) joint frame in b's frame
    ls_fx lower;        ///< (state) hinge rad, prismatic m, distance min length m, cone twist rad
    ls_fx upper;        ///< (state) as lower (distance: max length)
    ls_fx motor_speed;  ///< (state) rad/s or m/s
    ls_fx max_motor;    ///< (state) N m or N
    ls_fx spring_hertz; ///< (state)
    ls_fx spring_zeta;  ///< (state)
    ls_fx length;       ///< (state) distance: rest length, m
    ls_fx cone;         ///< (state) cone: swing limit, rad
    ls_fx break_force;  ///< (state) N, 0 = unbreakable
    ls_fx break_torque; ///< (state) N m, 0 = unbreakable
    uint64_t user_data; ///< (state) not in the checksum
    ls_vec3 linear_impulse;   ///< (state) point rows; prismatic: perpendicular rows in x, y
    ls_vec3 angular_impulse;  ///< (state) fixed, prismatic: 3 rows; hinge: 2 rows in x, y;
                              ///< cone: swing in x
    ls_fx spring_impulse;     ///< (state)
    ls_fx motor_impulse;      ///< (state)
    ls_fx lower_impulse;      ///< (state) >= 0
    ls_fx upper_impulse;      ///< (state) >= 0
    ls_vec3 force;            ///< (state) reaction force on b of the last step, N
    ls_vec3 torque;           ///< (state) reaction torque on b of the last step, N m
    bool moves_a, moves_b;    ///< (scratch) the body's velocity is solved this tick
    uint32_t state_a;         ///< (scratch) solver state of a this tick (0: the identity)
    uint32_t state_b;         ///< (scratch)
    ls_fx inv_mass_a;         ///< (scratch) 0 when a does not move
    ls_fx inv_mass_b;         ///< (scratch)
    ls_mat3 inv_i_a;          ///< (scratch) world inverse inertia, 0 when a does not move
    ls_mat3 inv_i_b;          ///< (scratch)
    ls_mat3 angular_mass;     ///< (scratch) (Ia + Ib)^-1 of the 3 angular rows (fixed, prismatic)
    ls_softness spring;       ///< (scratch) spring coefficients for this sub-step length
                              ///< (explicit springs: omega^2 h / 2, damping mass/impulse scales)
    bool spring_explicit;     ///< (scratch) stiffness applied explicitly (SPEC.md §23.1)
    ls_fx spring_push;        ///< (scratch) the stiffness impulse of this sub-step
    ls_vec3 dir[3];           ///< (scratch) the kind's row directions at the warm start
    ls_fx err[3];             ///< (scratch) the kind's angles and errors at the warm start
    ls_fx row_mass[2];        ///< (scratch) the kind's row masses at the warm start (hinge:
                              ///< axial; cone: swing, twist); hinge: alignment K^-1 in
                              ///< angular_mass
    ls_fx row_k[2];           ///< (scratch) K = 1 / row_mass[k] (the relative turn per
                              ///< unit impulse), where row_mass[k] is not 0
    ls_vec3 dir_ia[3];        ///< (scratch) inv_i_a dir[k]: the turn of a per unit impulse
    ls_vec3 dir_ib[3];        ///< (scratch) inv_i_b dir[k]
    ls_fx far[5];             ///< (scratch) cone: the tests of angles far from their limits
                              ///< (joint_cone.c): cos(cone - m); cos and sin of
                              ///< (lower + m)/2 and of (upper - m)/2
    bool far_twist;           ///< (scratch) cone: the twist range is wider than 2 m
    ls_vec3 friction_impulse; ///< (scratch) cone: the friction block's impulse in this
                              ///< sub-step (joint_cone.c; not warm started)
} ls_joint;

/// One joint kind: scene keyword, what it uses, and its solver routines.
/// The rows of a kind that the ball lanes solve besides the point block.
typedef enum ls_lane_rows {
    LS_LANE_ROWS_NONE,
    LS_LANE_ROWS_ALIGN2, ///< ls_joint_align2 (hinge)
    LS_LANE_ROWS_CONE,   ///< ls_joint_cone_rows (cone)
} ls_lane_rows;

typedef struct ls_joint_kind {
    const char *name; ///< scene keyword
    bool needs_axis;  ///< uses def.axis
    bool has_limit;   ///< uses enable_limit/lower/upper
    bool has_motor;   ///< uses enable_motor/motor_speed/max_motor_torque
    bool has_spring;  ///< uses enable_spring/spring_hertz/spring_damping_ratio
    /// Per-tick data (after ls_joint_prepare_bodies_); may be NULL.
    void (*prepare)(ls_world *w, ls_joint *j, const ls_step_ctx *ctx);
    /// The anchors coincide: the point block (linear_impulse) is solved in
    /// the ball lanes (joint_lanes.h), and warm_start and solve below handle
    /// the kind's other rows, run just before it in the same sweep.
    bool point_in_lanes;
    /// Apply the accumulated impulses (of the rows other than a point block
    /// in the lanes); NULL when there are none.
    void (*warm_start)(ls_world *w, ls_joint *j);
    /// One iteration; use_bias false is the relax pass. NULL as warm_start.
    void (*solve)(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias);
    /// Which block of the kind's rows the ball lanes solve (outside the
    /// serial colour; joint_lanes.h): none, a hinge's alignment block (and
    /// its rows about the axis) or a cone's swing and twist rows; the joint
    /// then solves none of its rows itself (solver.c).
    ls_lane_rows lane_rows;
    /// With LS_LANE_ROWS_ALIGN2: true when joint j has no rows besides the
    /// point and alignment blocks, so that its whole warm start may be the lanes' too
    /// (joint_lanes.h). NULL: never.
    bool (*align_only)(const ls_joint *j);
    /// The impulse and angular impulse on b of the last sub-step, world frame.
    void (*reaction)(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular);
    /// How far, in metres, the anchors are from where the joint holds them at
    /// the bodies' current poses (the sleep test, SPEC.md §11 step 7). NULL:
    /// the two anchors coincide (ls_joint_point_stretch_).
    ls_fx (*stretch)(const ls_world *w, const ls_joint *j);
} ls_joint_kind;

/// The joint's positional error in metres (>= 0) at the bodies' current
/// poses: its kind's stretch, or the anchors' distance.
ls_fx ls_joint_stretch_(const ls_world *w, const ls_joint *j);
/// The distance between the two anchors, m.
ls_fx ls_joint_point_stretch_(const ls_world *w, const ls_joint *j);
/// The entry of a kind, or NULL for a code that names none.
const ls_joint_kind *ls_joint_kind_of_(uint32_t type);
/// The kind whose scene keyword is `name`, or LS_JOINT_KIND_COUNT.
ls_joint_type ls_joint_kind_named_(const char *name);

/// Registry entries (one file each).
extern const ls_joint_kind ls_joint_ball_kind_;
extern const ls_joint_kind ls_joint_hinge_kind_;
extern const ls_joint_kind ls_joint_fixed_kind_;
extern const ls_joint_kind ls_joint_prismatic_kind_;
extern const ls_joint_kind ls_joint_distance_kind_;
extern const ls_joint_kind ls_joint_cone_kind_;

// ---- World side (joint.c) ----

/// Destroy every joint of body slot i, in joint slot order (body.c calls it
/// before freeing the body).
void ls_joint_destroy_of_body_(ls_world *w, uint32_t body);
/// True when the contacts between body slots a and b are dropped: a joint
/// joins them without collide_connected.
bool ls_joint_filters_pair_(const ls_world *w, uint32_t a, uint32_t b);

/// Degrees (scene text) to radians: round(deg_raw * 74961321 / 2^32), ties away
/// from zero (74961321 = round(2^32 pi / 180)); exact and integer-only.
ls_fx ls_joint_degrees_to_radians_(ls_fx deg);
/// A number of degrees that ls_joint_degrees_to_radians_ maps to exactly `rad`
/// (the one nearest rad * 180 / pi), for writing scenes that read back the same.
ls_fx ls_joint_radians_to_degrees_(ls_fx rad);

// ---- Helpers shared by the kinds (joint.c) ----

/// Mass data of the two bodies for this tick (moves, inverse masses, inertias).
void ls_joint_prepare_bodies_(ls_world *w, ls_joint *j);
/// Most speed (m/s, rad/s) a joint row's position correction may ask for:
/// bounds what a violated joint (a body teleported away, a restored state)
/// adds, far above the steady-state bias of a loaded joint (< 1 m/s).
#define LS_JOINT_MAX_BIAS LS_FX_INT(10)
/// c * bias_rate clamped to +-LS_JOINT_MAX_BIAS.
ls_fx ls_joint_bias_(ls_fx c, ls_fx bias_rate);
/// c * bias_rate (componentwise) shortened to length LS_JOINT_MAX_BIAS if longer.
ls_vec3 ls_joint_bias3_(ls_vec3 c, ls_fx bias_rate);
/// The rows' softness: the world's joint softness with bias, rigid without (relax).
ls_softness ls_joint_rigid_(const ls_step_ctx *ctx, bool use_bias);
/// Current lever arm of body a's anchor (world frame, from the centre of mass).
ls_vec3 ls_joint_arm_a_(const ls_world *w, const ls_joint *j);
/// Current lever arm of body b's anchor.
ls_vec3 ls_joint_arm_b_(const ls_world *w, const ls_joint *j);
/// Apply impulse p at the anchors (a loses, b gains) and the pure angular
/// impulse l (a loses, b gains), to the bodies that move.
void ls_joint_apply_(ls_world *w, const ls_joint *j, ls_vec3 ra, ls_vec3 rb, ls_vec3 p, ls_vec3 l);
/// ls_joint_apply_ with no linear impulse (ra, rb, p zero), the same bits
/// without the zero products: the angular rows' impulse l (a loses, b gains).
void ls_joint_apply_angular_(ls_world *w, const ls_joint *j, ls_vec3 l);
/// vb + wb x rb - va - wa x ra: relative velocity of the anchors.
ls_vec3 ls_joint_anchor_velocity_(const ls_world *w, const ls_joint *j, ls_vec3 ra, ls_vec3 rb);
/// d . (vb - va) + (rb x d) . wb - (ra_d x d) . wa: speed along d of a linear
/// row whose arm on body a is ra_d (ra, or ra + separation for a slider).
ls_fx ls_joint_linear_speed_(const ls_world *w, const ls_joint *j, ls_vec3 ra_d, ls_vec3 rb,
                             ls_vec3 d);
/// Inverse of a symmetric positive-definite K (3x3, or 2x2 in the upper-left
/// with k[2][2] set to 1); a K that is singular or whose inverse does not fit
/// gets the inverse of its diagonal instead (each 1/k_ii, 0 where k_ii <= 0).
ls_mat3 ls_joint_inverse_(ls_mat3 k);
/// 1 / k for a scalar row's K (0 when k <= 0; saturates).
ls_fx ls_joint_inverse1_(ls_fx k);
/// d . (Ia + Ib) e, exactly summed.
ls_fx ls_joint_angular_k_(const ls_joint *j, ls_vec3 d, ls_vec3 e);
/// K of a linear row along d with arms ra_d, rb: ma + mb + angular terms.
ls_fx ls_joint_linear_k_(const ls_joint *j, ls_vec3 ra_d, ls_vec3 rb, ls_vec3 d);
/// Inverse of the angular block's K = Ia + Ib.
ls_mat3 ls_joint_angular_block_mass_(const ls_joint *j);
/// The 3 angular rows keeping the two joint frames aligned (fixed, prismatic),
/// solved with angular_mass; accumulates into angular_impulse.
void ls_joint_angular_block_solve_(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias);
/// The relative rotation error of the two joint frames as a small-angle vector
/// (world frame): 2 vec(qB conj(qA)) with the real part made >= 0.
ls_vec3 ls_joint_rotation_error_(ls_quat fa, ls_quat fb);
/// Spring row toward c = 0 (SPEC.md §23.1): returns the impulse to apply.
/// Damping (or, for a spring too stiff for the sub-step, the whole soft
/// row) accumulates in *acc; an explicit spring's stiffness impulse (half in
/// each pass) is summed in j->spring_push.
ls_fx ls_joint_spring_row_(ls_joint *j, ls_fx c, ls_fx cdot, ls_fx mass, ls_fx *acc, bool use_bias);
/// A hinge's angle at the bodies' current poses (0 without limit and spring;
/// joint_hinge.c).
ls_fx ls_joint_hinge_angle_(const ls_world *w, const ls_joint *j);
/// Motor row: returns the impulse to add to *acc (clamped to +-max_motor * h).
ls_fx ls_joint_motor_row_(const ls_joint *j, ls_fx cdot, ls_fx mass, ls_fx *acc,
                          const ls_step_ctx *ctx);

// ---- Hot helpers of the hinge and cone rows, inline (joint.h) ----
//
// Why inline: each runs several times per joint and sub-step, and with the
// row index or count a constant at the call the compiler drops the products
// by zero and the loop (the same integer operations on the values that
// remain, so the same bits).

#define LS_JOINT_INLINE static inline __attribute__((always_inline))

/// True when every component of d lies in [-2^17, 2^17]: a row direction (a
/// unit vector, a cross product of two) always does.
LS_JOINT_INLINE bool ls_joint_small_dir_(ls_vec3 d)
{
    return ((uint32_t)(d.x ^ (d.x >> 31)) | (uint32_t)(d.y ^ (d.y >> 31)) |
            (uint32_t)(d.z ^ (d.z >> 31))) < (1u << 17);
}

/// ls_vec3_dot(a, d) for ls_joint_small_dir_(d) and any a: each product is
/// at most 2^31 * 2^17, so their exact sum (below 2^50) saturates nothing
/// before the final rounding and clamp.
LS_JOINT_INLINE ls_fx ls_joint_dot_dir_(ls_vec3 a, ls_vec3 d)
{
    return ls_fx_clamp64_(
        ls_fx_round_q32((int64_t)a.x * d.x + (int64_t)a.y * d.y + (int64_t)a.z * d.z));
}

/// ls_vec3_cross(a, b) for two ls_joint_small_dir_ vectors: each difference
/// of two products is below 2^35, so only the rounding acts (the clamp of
/// ls_fx_from_q32 cannot).
LS_JOINT_INLINE ls_vec3 ls_joint_cross_dir_(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make((ls_fx)ls_fx_round_q32((int64_t)a.y * b.z - (int64_t)a.z * b.y),
                        (ls_fx)ls_fx_round_q32((int64_t)a.z * b.x - (int64_t)a.x * b.z),
                        (ls_fx)ls_fx_round_q32((int64_t)a.x * b.y - (int64_t)a.y * b.x));
}

/// True when every component of q lies in [-2^17, 2^17) (a unit
/// quaternion's, and a product of two, lie within about +-2^16). The frame
/// arithmetic below then takes a short path: its products are below 2^35 and
/// its sums below 2^37, far from every saturation bound (of ls_i64_add_sat,
/// ls_fx_from_q32's +-2^62, ls_fx_add, ls_fx_mul; and ls_fx_neg never meets
/// INT32_MIN), so plain integer sums rounded by ls_fx_round_q32 are the bits
/// of the saturating operations.
LS_JOINT_INLINE bool ls_joint_small_q_(ls_quat q)
{
    uint32_t g = ((uint32_t)q.x + 0x20000u) | ((uint32_t)q.y + 0x20000u) |
                 ((uint32_t)q.z + 0x20000u) | ((uint32_t)q.w + 0x20000u);
    return g < 0x40000u;
}

/// Sum of four Q32.32 products rounded to Q16.16, for factors within +-2^17
/// (ls_fx_dot4_ without its saturation, which cannot act there).
LS_JOINT_INLINE ls_fx ls_joint_dot4_small_(ls_fx a0, ls_fx b0, ls_fx a1, ls_fx b1, ls_fx a2,
                                           ls_fx b2, ls_fx a3, ls_fx b3)
{
    return (ls_fx)ls_fx_round_q32((int64_t)a0 * b0 + (int64_t)a1 * b1 + (int64_t)a2 * b2 +
                                  (int64_t)a3 * b3);
}

/// ls_quat_mul(a, b), inline (the compiler keeps ls_quat_mul a call), with
/// the short path of ls_joint_small_q_.
LS_JOINT_INLINE ls_quat ls_joint_quat_mul_(ls_quat a, ls_quat b)
{
    if (ls_joint_small_q_(a) && ls_joint_small_q_(b)) {
        return ls_quat_make(ls_joint_dot4_small_(a.w, b.x, a.x, b.w, a.y, b.z, a.z, -b.y),
                            ls_joint_dot4_small_(a.w, b.y, a.y, b.w, a.z, b.x, a.x, -b.z),
                            ls_joint_dot4_small_(a.w, b.z, a.z, b.w, a.x, b.y, a.y, -b.x),
                            ls_joint_dot4_small_(a.w, b.w, a.x, -b.x, a.y, -b.y, a.z, -b.z));
    }
    return ls_quat_mul(a, b);
}

/// Current joint frame of body a in the world (x = axis).
LS_JOINT_INLINE ls_quat ls_joint_frame_a_(const ls_world *w, const ls_joint *j)
{
    return ls_joint_quat_mul_(w->bodies[j->a].q, j->frame_a);
}

/// Current joint frame of body b in the world.
LS_JOINT_INLINE ls_quat ls_joint_frame_b_(const ls_world *w, const ls_joint *j)
{
    return ls_joint_quat_mul_(w->bodies[j->b].q, j->frame_b);
}

/// x as ls_fx_from_q32 returns x * 2^16: itself, but for the one value that
/// never occurs in a unit quaternion (-2^31 saturates to LS_FX_MIN).
LS_JOINT_INLINE ls_fx ls_joint_unit_term_(ls_fx x)
{
    return x == INT32_MIN ? LS_FX_MIN : x;
}

/// Column k (0 = x, the axis) of a rotation: q applied to the unit vector
/// e_k, ls_quat_rotate(q, e_k) with its first cross product u x e_k written
/// out: each component is one product by 1 (exact: +-u_i) or none (0), so the
/// same bits without six multiplications and roundings.
LS_JOINT_INLINE ls_vec3 ls_joint_quat_axis_(ls_quat q, int k)
{
    if (ls_joint_small_q_(q)) {
        // The short path (ls_joint_small_q_): t = 2 (u x e_k) below 2^18,
        // e_k + round(t w) + round(u x t) with no sum near a bound.
        int64_t tx = k == 0 ? 0 : k == 1 ? -2 * (int64_t)q.z : 2 * (int64_t)q.y;
        int64_t ty = k == 0 ? 2 * (int64_t)q.z : k == 1 ? 0 : -2 * (int64_t)q.x;
        int64_t tz = k == 0 ? -2 * (int64_t)q.y : k == 1 ? 2 * (int64_t)q.x : 0;
        int64_t x = (k == 0 ? LS_FX_ONE : 0) + ls_fx_round_q32(tx * q.w) +
                    ls_fx_round_q32(q.y * tz - q.z * ty);
        int64_t y = (k == 1 ? LS_FX_ONE : 0) + ls_fx_round_q32(ty * q.w) +
                    ls_fx_round_q32(q.z * tx - q.x * tz);
        int64_t z = (k == 2 ? LS_FX_ONE : 0) + ls_fx_round_q32(tz * q.w) +
                    ls_fx_round_q32(q.x * ty - q.y * tx);
        return ls_vec3_make((ls_fx)x, (ls_fx)y, (ls_fx)z);
    }
    ls_vec3 u = ls_vec3_make(q.x, q.y, q.z), e, t;
    if (k == 0) {
        e = ls_vec3_make(LS_FX_ONE, 0, 0);
        t = ls_vec3_make(0, ls_joint_unit_term_(q.z), ls_fx_neg(q.y));
    } else if (k == 1) {
        e = ls_vec3_make(0, LS_FX_ONE, 0);
        t = ls_vec3_make(ls_fx_neg(q.z), 0, ls_joint_unit_term_(q.x));
    } else {
        e = ls_vec3_make(0, 0, LS_FX_ONE);
        t = ls_vec3_make(ls_joint_unit_term_(q.y), ls_fx_neg(q.x), 0);
    }
    t = ls_vec3_add(t, t);
    return ls_vec3_add(ls_vec3_add(e, ls_vec3_scale(t, q.w)), ls_vec3_cross(u, t));
}

/// The solver state of a joint's body a (the identity state for a static body).
LS_JOINT_INLINE ls_solver_body *ls_joint_state_a_(const ls_world *w, const ls_joint *j)
{
    return &w->solver.states[j->state_a];
}

/// The spins the sub-step's position update turned a joint's bodies with
/// (w_step; the relax pass's stepped angles).
LS_JOINT_INLINE void ls_joint_step_spins_(const ls_world *w, const ls_joint *j, ls_vec3 *a,
                                          ls_vec3 *b)
{
    *a = w->solver.masses[j->state_a].w_step;
    *b = w->solver.masses[j->state_b].w_step;
}

/// The solver state of a joint's body b.
LS_JOINT_INLINE ls_solver_body *ls_joint_state_b_(const ls_world *w, const ls_joint *j)
{
    return &w->solver.states[j->state_b];
}

/// Cache dir_ia[k] and dir_ib[k] for the warm start's row directions dir[k],
/// first <= k < n (the world inverse inertias of the tick times them).
LS_JOINT_INLINE void ls_joint_cache_dirs_from_(ls_joint *j, int first, int n)
{
    for (int k = first; k < n; k++) {
        ls_vec3 d = j->dir[k];
        if (d.x == 0 && d.y == 0 && d.z == 0) {
            j->dir_ia[k] = j->dir_ib[k] = ls_vec3_zero(); // the products, without them
            continue;
        }
        if (ls_joint_small_dir_(d)) {
            const ls_mat3 *ia = &j->inv_i_a, *ib = &j->inv_i_b;
            j->dir_ia[k] =
                ls_vec3_make(ls_joint_dot_dir_(ia->row[0], d), ls_joint_dot_dir_(ia->row[1], d),
                             ls_joint_dot_dir_(ia->row[2], d));
            j->dir_ib[k] =
                ls_vec3_make(ls_joint_dot_dir_(ib->row[0], d), ls_joint_dot_dir_(ib->row[1], d),
                             ls_joint_dot_dir_(ib->row[2], d));
            continue;
        }
        j->dir_ia[k] = ls_mat3_mul_vec(j->inv_i_a, d);
        j->dir_ib[k] = ls_mat3_mul_vec(j->inv_i_b, d);
    }
}

/// ls_joint_cache_dirs_from_(j, 0, n).
LS_JOINT_INLINE void ls_joint_cache_dirs_(ls_joint *j, int n)
{
    ls_joint_cache_dirs_from_(j, 0, n);
}

/// d . (I_a + I_b) dir[k] with the cached products: the same bits as
/// ls_joint_angular_k_(j, d, dir[k]).
LS_JOINT_INLINE ls_fx ls_joint_cached_k_(const ls_joint *j, ls_vec3 d, int k)
{
    int64_t s = ls_vec3_dot_q32(d, j->dir_ia[k]);
    return ls_fx_from_q32(ls_i64_add_sat(s, ls_vec3_dot_q32(d, j->dir_ib[k])));
}

/// sum_k dir[k] imp[k], each component rounded once from the exact sum
/// (one row: one product per component, the sum's bits without the
/// saturating additions).
LS_JOINT_INLINE ls_vec3 ls_joint_dirs_times_(const ls_vec3 *dir, const ls_fx *imp, int n)
{
    int64_t x = (int64_t)dir[0].x * imp[0], y = (int64_t)dir[0].y * imp[0],
            z = (int64_t)dir[0].z * imp[0];
    for (int k = 1; k < n; k++) {
        x = ls_i64_add_sat(x, (int64_t)dir[k].x * imp[k]);
        y = ls_i64_add_sat(y, (int64_t)dir[k].y * imp[k]);
        z = ls_i64_add_sat(z, (int64_t)dir[k].z * imp[k]);
    }
    return ls_vec3_make(ls_fx_from_q32(x), ls_fx_from_q32(y), ls_fx_from_q32(z));
}

/// Apply the angular impulses imp[i] about the cached directions dir[first +
/// i], i < n (a loses, b gains): w_a -= sum dir_ia[k] imp[i], w_b += sum
/// dir_ib[k] imp[i], each component rounded once from the exact sum.
LS_JOINT_INLINE void ls_joint_apply_dirs_(ls_world *w, const ls_joint *j, int first,
                                          const ls_fx *imp, int n)
{
    if (j->moves_a) {
        ls_solver_body *a = ls_joint_state_a_(w, j);
        a->w = ls_vec3_sub(a->w, ls_joint_dirs_times_(j->dir_ia + first, imp, n));
    }
    if (j->moves_b) {
        ls_solver_body *b = ls_joint_state_b_(w, j);
        b->w = ls_vec3_add(b->w, ls_joint_dirs_times_(j->dir_ib + first, imp, n));
    }
}

/// Write the angular velocities wa, wb back to the joint's bodies that move
/// (a body that does not is left alone: it may be the shared identity state).
LS_JOINT_INLINE void ls_joint_set_spins_(ls_world *w, const ls_joint *j, ls_vec3 wa, ls_vec3 wb)
{
    if (j->moves_a) {
        ls_joint_state_a_(w, j)->w = wa;
    }
    if (j->moves_b) {
        ls_joint_state_b_(w, j)->w = wb;
    }
}

/// (wb - wa) . d for the angular velocities wa, wb.
LS_JOINT_INLINE ls_fx ls_joint_relative_speed_(ls_vec3 wa, ls_vec3 wb, ls_vec3 d)
{
    if (ls_joint_small_dir_(d)) {
        // Each product below 2^48, their exact sum below 2^51: nothing
        // saturates before the rounding (ls_joint_dot_dir_).
        return ls_fx_clamp64_(ls_fx_round_q32(((int64_t)wb.x - wa.x) * d.x +
                                              ((int64_t)wb.y - wa.y) * d.y +
                                              ((int64_t)wb.z - wa.z) * d.z));
    }
    int64_t s = ls_vec3_dot_q32(wb, d);
    return ls_fx_from_q32(ls_i64_add_sat(s, -ls_vec3_dot_q32(wa, d)));
}

/// (wb - wa) . d: relative angular speed about d.
LS_JOINT_INLINE ls_fx ls_joint_angular_speed_(const ls_world *w, const ls_joint *j, ls_vec3 d)
{
    return ls_joint_relative_speed_(ls_joint_state_a_(w, j)->w, ls_joint_state_b_(w, j)->w, d);
}

/// A block of two angular rows (a hinge's alignment, SPEC.md §23.3), as the
/// warm start left it: the directions, their inverse-inertia products, the
/// errors, K^-1 (the upper-left 2x2 of a 3x3) and the accumulated impulses.
/// The joint's solve and the ball lanes' scalar reference (joint_lanes.c)
/// both solve it with ls_joint_align2_solve_, so both give the same bits.
typedef struct ls_joint_align2 {
    ls_vec3 dir[2], dir_ia[2], dir_ib[2];
    ls_fx c[2];      ///< the errors (a . u, a . v)
    ls_fx inv[2][2]; ///< K^-1
    ls_fx imp[2];    ///< accumulated impulses (angular_impulse.x, .y)
} ls_joint_align2;

/// The block of joint j's alignment rows: dir[1], dir[2] (their products
/// dir_ia, dir_ib), err[0], err[1], angular_mass's upper-left 2x2 and
/// angular_impulse.x, .y (joint_hinge.c's warm start).
LS_JOINT_INLINE void ls_joint_align2_of_(const ls_joint *j, ls_joint_align2 *r)
{
    for (int k = 0; k < 2; k++) {
        r->dir[k] = j->dir[1 + k];
        r->dir_ia[k] = j->dir_ia[1 + k];
        r->dir_ib[k] = j->dir_ib[1 + k];
        r->c[k] = j->err[k];
    }
    r->inv[0][0] = j->angular_mass.row[0].x;
    r->inv[0][1] = j->angular_mass.row[0].y;
    r->inv[1][0] = j->angular_mass.row[1].x;
    r->inv[1][1] = j->angular_mass.row[1].y;
    r->imp[0] = j->angular_impulse.x;
    r->imp[1] = j->angular_impulse.y;
}

/// K^-1 of the block from K's entries k00, k01, k11 (the hinge's warm
/// start): ls_mat3_inverse_spd2_'s upper-left 2x2, or where K is not
/// positive definite the inverses of its diagonal.
void ls_joint_align2_inverse_(ls_fx k00, ls_fx k01, ls_fx k11, ls_fx inv[2][2]);

/// One iteration of the block on the angular velocities *wa, *wb with the
/// softness s (use_bias false: the relax pass, rigid); a body whose dir_ia
/// (dir_ib) is zero does not move and keeps its velocity.
LS_JOINT_INLINE void ls_joint_align2_solve_(ls_joint_align2 *r, ls_vec3 *wa, ls_vec3 *wb,
                                            ls_softness s, bool use_bias)
{
    ls_vec3 rhs = ls_vec3_make(ls_joint_relative_speed_(*wa, *wb, r->dir[0]),
                               ls_joint_relative_speed_(*wa, *wb, r->dir[1]), 0);
    if (use_bias) {
        ls_vec3 bias = ls_joint_bias3_(ls_vec3_make(r->c[0], r->c[1], 0), s.bias_rate);
        rhs.x = ls_fx_add(rhs.x, bias.x);
        rhs.y = ls_fx_add(rhs.y, bias.y);
    }
    // K^-1 rhs with rhs.z = 0: the rows' two components only, each the exact
    // sum of its two nonzero products, as ls_mat3_mul_vec gives them.
    ls_fx x[2];
    for (int k = 0; k < 2; k++) {
        x[k] = ls_fx_from_q32(
            ls_i64_add_sat((int64_t)r->inv[k][0] * rhs.x, (int64_t)r->inv[k][1] * rhs.y));
    }
    ls_fx imp[2];
    for (int k = 0; k < 2; k++) {
        // The relax pass is rigid: mass scale 1, impulse scale 0 (exact).
        imp[k] = use_bias ? ls_fx_neg(ls_fx_add(ls_fx_mul(x[k], s.mass_scale),
                                                ls_fx_mul(r->imp[k], s.impulse_scale)))
                          : ls_fx_neg(x[k]);
        r->imp[k] = ls_fx_add(r->imp[k], imp[k]);
    }
    *wa = ls_vec3_sub(*wa, ls_joint_dirs_times_(r->dir_ia, imp, 2));
    *wb = ls_vec3_add(*wb, ls_joint_dirs_times_(r->dir_ib, imp, 2));
}

/// The two components of the relative rotation r = conj(fa) fb that its
/// twist (the angle about the frame's x axis) depends on, as ls_quat_mul
/// computes them, with the sign that makes *w >= 0: twist = 2 atan2(*x, *w)
/// (ls_joint_twist_angle_). The other two components are not computed.
LS_JOINT_INLINE void ls_joint_twist_xw_(ls_quat fa, ls_quat fb, ls_fx *x, ls_fx *w)
{
    ls_quat a = ls_quat_conj(fa);
    ls_fx sx, sw;
    if (ls_joint_small_q_(fa) && ls_joint_small_q_(fb)) {
        sx = ls_joint_dot4_small_(a.w, fb.x, a.x, fb.w, a.y, fb.z, a.z, -fb.y);
        sw = ls_joint_dot4_small_(a.w, fb.w, a.x, -fb.x, a.y, -fb.y, a.z, -fb.z);
        *x = sw < 0 ? -sx : sx;
        *w = sw < 0 ? -sw : sw;
        return;
    }
    sx = ls_fx_dot4_(a.w, fb.x, a.x, fb.w, a.y, fb.z, a.z, ls_fx_neg(fb.y));
    sw = ls_fx_dot4_(a.w, fb.w, a.x, ls_fx_neg(fb.x), a.y, ls_fx_neg(fb.y), a.z, ls_fx_neg(fb.z));
    *x = sw < 0 ? ls_fx_neg(sx) : sx;
    *w = ls_fx_abs(sw);
}

/// Angle of the relative rotation r = conj(fa) fb about the frame's x axis
/// (its twist), rad in [-pi, pi].
LS_JOINT_INLINE ls_fx ls_joint_twist_angle_(ls_quat fa, ls_quat fb)
{
    ls_fx x, w;
    ls_joint_twist_xw_(fa, fb, &x, &w);
    ls_fx half = ls_fx_atan2(x, w); // in [-pi/2, pi/2]
    return ls_fx_add(half, half);
}

/// One-sided limit row on a scalar coordinate c (error c >= 0 allowed) with
/// speed cdot and effective mass `mass`: returns the impulse to add to the
/// accumulated `*acc` (kept >= 0). Speculative when c > 0.
LS_JOINT_INLINE ls_fx ls_joint_limit_row_at_(ls_fx c, ls_fx cdot, ls_fx mass, ls_fx *acc,
                                             ls_fx inv_h, ls_softness joint, bool use_bias)
{
    ls_fx bias = 0, mass_scale = LS_FX_ONE, impulse_scale = 0;
    if (c > 0) {
        bias = ls_fx_mul(c, inv_h); // speculative: only stop what would cross this sub-step
    } else if (use_bias) {
        bias = ls_joint_bias_(c, joint.bias_rate);
        mass_scale = joint.mass_scale;
        impulse_scale = joint.impulse_scale;
    }
    // The rigid row (mass scale 1, impulse scale 0) skips two products that
    // are exact there: mass * 1 = mass, and adding 0 * acc adds nothing.
    ls_fx m = mass_scale == LS_FX_ONE ? mass : ls_fx_mul(mass, mass_scale);
    ls_fx t = ls_fx_mul(m, ls_fx_add(cdot, bias));
    ls_fx impulse =
        ls_fx_neg(impulse_scale == 0 ? t : ls_fx_add(t, ls_fx_mul(impulse_scale, *acc)));
    ls_fx now = ls_fx_max(ls_fx_add(*acc, impulse), 0);
    impulse = ls_fx_sub(now, *acc);
    *acc = now;
    return impulse;
}

/// ls_joint_limit_row_at_ with the sub-step's 1/h and the world's joint spring.
LS_JOINT_INLINE ls_fx ls_joint_limit_row_(ls_fx c, ls_fx cdot, ls_fx mass, ls_fx *acc,
                                          const ls_step_ctx *ctx, bool use_bias)
{
    return ls_joint_limit_row_at_(c, cdot, mass, acc, ctx->inv_h, ctx->joint, use_bias);
}

/// A cone's swing and twist rows (joint_cone.c, SPEC.md §23.7) as its warm
/// start left them: the directions n (swing; zero: no swing row) and t, their
/// inverse-inertia products, the warm start's angles, the limits, the row
/// masses, K of the twist row, the accumulated impulses (angular_impulse.x,
/// lower_impulse, upper_impulse) and the sub-step length h (the relax pass's
/// angles, ls_joint_relax_angle_). The cone's solve and the ball lanes' scalar
/// reference (joint_lanes.c) both solve it with ls_joint_cone_rows_solve_.
typedef struct ls_joint_cone_rows {
    ls_vec3 n, t, n_ia, n_ib, t_ia, t_ib;
    ls_fx swing, twist;       ///< the angles at the sub-step's warm start
    ls_fx cone, lower, upper; ///< the limits
    ls_fx m_swing, m_twist;   ///< row masses
    ls_fx k_twist;            ///< K of the twist row
    ls_fx acc[3];             ///< swing, lower, upper
    ls_fx h;                  ///< the sub-step's length, s
    ls_vec3 step_a, step_b;   ///< the bodies' w_step (the relax pass's angles)
    bool twist_limited;
} ls_joint_cone_rows;

/// The relax pass's angle of a row (SPEC.md §23.4 "The relax pass's
/// angles"): the warm start's angle plus h times the row's speed at the
/// spins the position update turned the bodies with (w_step), to first order
/// the angle at the moved pose. Why: measuring it costs frames, a square
/// root and arc tangents per joint and sub-step. Why those spins and not the
/// ones the relax pass finds: other rows' relax impulses have changed those
/// already, and a ragdoll's neck resting on its cone limit, its angle stepped
/// by them, never came to rest.
LS_JOINT_INLINE ls_fx ls_joint_relax_angle_(ls_fx angle, ls_fx speed, ls_fx h)
{
    return ls_fx_add(angle, ls_fx_mul(h, speed));
}

/// A cone has joint friction: its motor flag with a positive torque.
LS_JOINT_INLINE bool ls_joint_cone_friction_(const ls_joint *j)
{
    return (j->flags & LS_JOINT_F_MOTOR) != 0 && j->max_motor > 0;
}

/// A cone's twist rows exist when its range is not the whole turn.
LS_JOINT_INLINE bool ls_joint_cone_twist_limited_(const ls_joint *j)
{
    return j->lower > -LS_FX_PI || j->upper < LS_FX_PI;
}

/// The cone rows of joint j as its warm start left them: dir[0], dir[1],
/// their products, err[0], err[1], the limits, row_mass, row_k[1] and the
/// accumulated impulses, with the sub-step length h.
LS_JOINT_INLINE void ls_joint_cone_rows_of_(const ls_joint *j, ls_fx h, ls_joint_cone_rows *r)
{
    r->n = j->dir[0];
    r->t = j->dir[1];
    r->n_ia = j->dir_ia[0];
    r->n_ib = j->dir_ib[0];
    r->t_ia = j->dir_ia[1];
    r->t_ib = j->dir_ib[1];
    r->swing = j->err[0];
    r->twist = j->err[1];
    r->cone = j->cone;
    r->lower = j->lower;
    r->upper = j->upper;
    r->m_swing = j->row_mass[0];
    r->m_twist = j->row_mass[1];
    r->k_twist = j->row_k[1];
    r->acc[0] = j->angular_impulse.x;
    r->acc[1] = j->lower_impulse;
    r->acc[2] = j->upper_impulse;
    r->h = h;
    r->step_a = r->step_b = ls_vec3_zero(); // the caller's (w_step)
    r->twist_limited = ls_joint_cone_twist_limited_(j);
}

/// One iteration of the cone's rows on *wa, *wb (the world's joint spring
/// `joint`, sub-step rate inv_h; use_bias false: the relax pass, whose
/// angles are ls_joint_relax_angle_ by step_a, step_b).
LS_JOINT_INLINE void ls_joint_cone_rows_solve_(ls_joint_cone_rows *r, ls_vec3 *wa, ls_vec3 *wb,
                                               ls_fx inv_h, ls_softness joint, bool use_bias)
{
    bool swing_row = r->n.x != 0 || r->n.y != 0 || r->n.z != 0;
    ls_fx swing = r->swing, twist = r->twist;
    if (!use_bias) {
        // d swing/dt = (wb - wa) . n, d twist/dt = (wb - wa) . t.
        swing = swing_row ? ls_joint_relax_angle_(
                                swing, ls_joint_relative_speed_(r->step_a, r->step_b, r->n), r->h)
                          : swing;
        twist = r->twist_limited
                    ? ls_joint_relax_angle_(
                          twist, ls_joint_relative_speed_(r->step_a, r->step_b, r->t), r->h)
                    : twist;
    }
    if (swing_row) {
        // Swing pushes b's axis back toward a's: an angular impulse -n on b.
        ls_fx cdot = ls_fx_neg(ls_joint_relative_speed_(*wa, *wb, r->n));
        ls_fx imp = ls_joint_limit_row_at_(ls_fx_sub(r->cone, swing), cdot, r->m_swing, &r->acc[0],
                                           inv_h, joint, use_bias);
        ls_fx p = ls_fx_neg(imp);
        *wa = ls_vec3_sub(*wa, ls_joint_dirs_times_(&r->n_ia, &p, 1));
        *wb = ls_vec3_add(*wb, ls_joint_dirs_times_(&r->n_ib, &p, 1));
    }
    if (r->twist_limited) {
        // Both limits about t: the upper sees the speed the lower left
        // (cdot + K impulse) and their sum is applied once (as the hinge).
        ls_fx cdot = ls_joint_relative_speed_(*wa, *wb, r->t);
        ls_fx lo = ls_joint_limit_row_at_(ls_fx_sub(twist, r->lower), cdot, r->m_twist, &r->acc[1],
                                          inv_h, joint, use_bias);
        cdot = ls_fx_add(cdot, ls_fx_mul(r->k_twist, lo));
        ls_fx hi = ls_joint_limit_row_at_(ls_fx_sub(r->upper, twist), ls_fx_neg(cdot), r->m_twist,
                                          &r->acc[2], inv_h, joint, use_bias);
        ls_fx p = ls_fx_sub(lo, hi);
        *wa = ls_vec3_sub(*wa, ls_joint_dirs_times_(&r->t_ia, &p, 1));
        *wb = ls_vec3_add(*wb, ls_joint_dirs_times_(&r->t_ib, &p, 1));
    }
}

/// A cone's friction block (joint_cone.c, SPEC.md §23.4 "Cone friction"):
/// M = (I_a + I_b)^-1, the bodies' world inverse inertias (0 for one that
/// does not move), the most impulse length of the sub-step, max_motor h, and
/// the impulse accumulated in it. The cone's solve and the ball lanes' scalar
/// reference (joint_lanes.c) both solve it with ls_joint_friction_solve_.
typedef struct ls_joint_friction_rows {
    ls_mat3 mass, ia, ib;
    ls_fx top;
    ls_vec3 acc;
} ls_joint_friction_rows;

/// One pass of the friction block on *wa, *wb: the impulse that stops the
/// relative spin, its accumulated length clamped to top.
LS_JOINT_INLINE void ls_joint_friction_solve_(ls_joint_friction_rows *r, ls_vec3 *wa, ls_vec3 *wb)
{
    ls_vec3 cdot = ls_vec3_sub(*wb, *wa);
    ls_vec3 old = r->acc;
    ls_vec3 acc = ls_vec3_sub(old, ls_mat3_mul_vec(r->mass, cdot));
    if (ls_vec3_len_sq_q32(acc) > (uint64_t)r->top * (uint64_t)r->top) {
        ls_fx len = ls_vec3_len(acc); // > top >= 0
        acc = ls_vec3_scale(acc, ls_fx_div(r->top, len));
    }
    r->acc = acc;
    ls_vec3 d = ls_vec3_sub(acc, old);
    *wa = ls_vec3_sub(*wa, ls_mat3_mul_vec(r->ia, d));
    *wb = ls_vec3_add(*wb, ls_mat3_mul_vec(r->ib, d));
}

/// A hinge's rows about its axis (joint_hinge.c, SPEC.md §23.4): spring,
/// motor and limits, as its warm start left them: the axis d (dir[0]), its
/// inverse-inertia products, K = row_k[0], the row mass, the warm start's
/// angle (the relax pass's: the one measured at the moved pose, or
/// ls_joint_relax_angle_; ls_joint_axial_measured_), the limits, the spring's coefficients (and,
/// for an explicit spring, its stiffness impulse of the sub-step, push, as ls_joint_spring_row_),
/// the motor's speed and most impulse per sub-step (max_motor h), and the accumulated impulses
/// (spring, motor, lower, upper). The hinge's solve and the ball lanes' scalar reference
/// (joint_lanes.c; implicit springs only) both solve it with
/// ls_joint_axial_rows_solve_.
typedef struct ls_joint_axial_rows {
    ls_vec3 d, d_ia, d_ib;
    ls_fx k, mass, angle;
    ls_fx lower, upper;
    ls_softness spring;
    ls_fx push; ///< an explicit spring's stiffness impulse (j->spring_push)
    ls_fx motor_speed, top;
    ls_fx h;                ///< the sub-step's length, s
    ls_vec3 step_a, step_b; ///< the bodies' w_step (the relax pass's angle)
    ls_fx acc[4];           ///< spring, motor, lower, upper
    bool spring_on, spring_explicit, motor_on, limit_on;
} ls_joint_axial_rows;

/// True when the relax pass steps these rows' angle (ls_joint_relax_angle_)
/// rather than measure it at the moved pose (given in `angle`): unless the
/// spring is explicit. Why not an explicit spring (SPEC.md §23.4): velocity
/// Verlet conserves energy when both halves at a pose see the same angle; a
/// stepped angle differs from the measured one by the measurement's
/// rounding, whose difference at every sub-step added 18 % to an undamped
/// 10 Hz hinge spring's energy in 10 s (measured: 0.96..1.01;
/// tests/test_joints.c).
LS_JOINT_INLINE bool ls_joint_axial_steps_(const ls_joint_axial_rows *r)
{
    return !(r->spring_on && r->spring_explicit);
}

/// One iteration of the axial rows on *wa, *wb (the world's joint spring
/// `joint` for the limits, sub-step rate inv_h; use_bias false: the relax
/// pass). The rows share one speed: each sees the speed the ones before it
/// left (cdot + K impulse), and their sum is applied once.
LS_JOINT_INLINE void ls_joint_axial_rows_solve_(ls_joint_axial_rows *r, ls_vec3 *wa, ls_vec3 *wb,
                                                ls_fx inv_h, ls_softness joint, bool use_bias)
{
    ls_fx cdot = ls_joint_relative_speed_(*wa, *wb, r->d), total = 0;
    ls_fx angle = !use_bias && ls_joint_axial_steps_(r)
                      ? ls_joint_relax_angle_(
                            r->angle, ls_joint_relative_speed_(r->step_a, r->step_b, r->d), r->h)
                      : r->angle;
    if (r->spring_on && r->spring_explicit) {
        // Half the stiffness impulse from the pose the sub-step starts with
        // (biased pass), half from the pose it ends with (relax pass).
        const ls_softness *s = &r->spring;
        ls_fx push = ls_fx_neg(ls_fx_mul(r->mass, ls_fx_mul(s->bias_rate, angle)));
        r->push = use_bias ? push : ls_fx_add(r->push, push);
        ls_fx damp = ls_fx_neg(ls_fx_add(ls_fx_mul(ls_fx_mul(r->mass, s->mass_scale), cdot),
                                         ls_fx_mul(s->impulse_scale, r->acc[0])));
        r->acc[0] = ls_fx_add(r->acc[0], damp);
        ls_fx imp = ls_fx_add(push, damp);
        total = ls_fx_add(total, imp);
        cdot = ls_fx_add(cdot, ls_fx_mul(r->k, imp));
    } else if (r->spring_on) {
        const ls_softness *s = &r->spring;
        ls_fx rhs = ls_fx_add(cdot, ls_fx_mul(s->bias_rate, angle));
        ls_fx imp = ls_fx_neg(ls_fx_add(ls_fx_mul(ls_fx_mul(r->mass, s->mass_scale), rhs),
                                        ls_fx_mul(s->impulse_scale, r->acc[0])));
        r->acc[0] = ls_fx_add(r->acc[0], imp);
        total = ls_fx_add(total, imp);
        cdot = ls_fx_add(cdot, ls_fx_mul(r->k, imp));
    }
    if (r->motor_on) {
        ls_fx imp = ls_fx_neg(ls_fx_mul(r->mass, ls_fx_sub(cdot, r->motor_speed)));
        ls_fx old = r->acc[1];
        r->acc[1] = ls_fx_clamp(ls_fx_add(old, imp), ls_fx_neg(r->top), r->top);
        imp = ls_fx_sub(r->acc[1], old);
        total = ls_fx_add(total, imp);
        cdot = ls_fx_add(cdot, ls_fx_mul(r->k, imp));
    }
    if (r->limit_on) {
        ls_fx imp = ls_joint_limit_row_at_(ls_fx_sub(angle, r->lower), cdot, r->mass, &r->acc[2],
                                           inv_h, joint, use_bias);
        total = ls_fx_add(total, imp);
        cdot = ls_fx_add(cdot, ls_fx_mul(r->k, imp));
        imp = ls_joint_limit_row_at_(ls_fx_sub(r->upper, angle), ls_fx_neg(cdot), r->mass,
                                     &r->acc[3], inv_h, joint, use_bias);
        total = ls_fx_sub(total, imp);
    }
    *wa = ls_vec3_sub(*wa, ls_joint_dirs_times_(&r->d_ia, &total, 1));
    *wb = ls_vec3_add(*wb, ls_joint_dirs_times_(&r->d_ib, &total, 1));
}

/// The axial rows of hinge j after its warm start (dir[0], dir_ia[0],
/// dir_ib[0], row_k[0], row_mass[0]) at `angle`, with the sub-step length h
/// (the motor's most impulse, max_motor h).
LS_JOINT_INLINE void ls_joint_axial_rows_of_(const ls_joint *j, ls_fx angle, ls_fx h,
                                             ls_joint_axial_rows *r)
{
    r->d = j->dir[0];
    r->d_ia = j->dir_ia[0];
    r->d_ib = j->dir_ib[0];
    r->k = j->row_k[0];
    r->mass = j->row_mass[0];
    r->angle = angle;
    r->lower = j->lower;
    r->upper = j->upper;
    r->spring = j->spring;
    r->push = j->spring_push;
    r->motor_speed = j->motor_speed;
    r->top = ls_fx_mul(j->max_motor, h);
    r->h = h;
    r->step_a = r->step_b = ls_vec3_zero(); // the caller's (w_step)
    r->acc[0] = j->spring_impulse;
    r->acc[1] = j->motor_impulse;
    r->acc[2] = j->lower_impulse;
    r->acc[3] = j->upper_impulse;
    r->spring_on = (j->flags & LS_JOINT_F_SPRING) && j->spring_hertz > 0;
    r->spring_explicit = j->spring_explicit;
    r->motor_on = (j->flags & LS_JOINT_F_MOTOR) != 0;
    r->limit_on = (j->flags & LS_JOINT_F_LIMIT) != 0;
}

/// The accumulated impulses (and an explicit spring's push) back to joint j.
LS_JOINT_INLINE void ls_joint_axial_rows_store_(ls_joint *j, const ls_joint_axial_rows *r)
{
    j->spring_impulse = r->acc[0];
    j->motor_impulse = r->acc[1];
    j->lower_impulse = r->acc[2];
    j->upper_impulse = r->acc[3];
    j->spring_push = r->push;
}

#endif
