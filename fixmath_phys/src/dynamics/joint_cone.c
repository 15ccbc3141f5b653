// SPDX-License-Identifier: MIT
// Cone-twist joint (SPEC.md §23.7), for ragdoll shoulders and hips: the point
// block plus two one-sided angular limits.
//
// Swing: the angle between the two bodies' twist axes a and b, theta =
// atan2(|a x b|, a . b), kept <= cone; its row turns about n = (a x b)/|a x b|
// (d theta/dt = (wb - wa) . n), and rests when the axes are (anti)parallel,
// where n is undefined. Twist: the angle of the twist part of the relative
// rotation conj(fa) fb about the axis (swing-twist decomposition), kept in
// [lower, upper]; its row turns about the mean axis t = (a + b)/|a + b|.
// Accumulated: swing in angular_impulse.x, twist in lower/upper_impulse.
// The point block is solved in the ball lanes (joint_lanes.h) right after
// these rows, and outside the serial colour the rows too
// (ls_joint_cone_rows_solve_, joint.h).
//
// Friction (the motor flag, max_motor the torque; SPEC.md §23.7 "Joint
// friction"): a 3-row angular block against the relative spin, K = Ia + Ib
// as the fixed joint's, its impulse's length at most max_motor h, solved
// before the limits (Box3D's order: motor, then limits, then the point).
// Why not warm started: the block's impulse would be new state (snapshot,
// checksum, format); friction only resists, and one block solve per pass
// already stops a spin its bound can stop.
#include "joint.h"

#define MIN_SINE   66              // |a x b| below 0.001: no swing direction
#define FAR_MARGIN (LS_FX_ONE / 4) // m, rad: angles this far inside a limit are not computed

typedef struct cone {
    ls_vec3 n;   // swing direction (zero when undefined)
    ls_vec3 t;   // twist direction
    ls_fx swing; // theta
    ls_fx twist; // twist angle (0 when the twist range is open)
} cone;

static bool twist_limited(const ls_joint *j)
{
    return ls_joint_cone_twist_limited_(j);
}

// |x| (ls_vec3_len) and, when it is at least MIN_SINE, x / |x|
// (ls_vec3_normalize; else zero), with one square root: where the
// normalisation's power-of-two scaling is exact (every component below 2^30,
// as for the cross product of two unit vectors) its root is that of |x|^2
// scaled by 4^sh, and floor(sqrt(s)) = floor(sqrt(s 4^sh)) >> sh, so both
// give the same bits as the two functions.
static ls_fx sine_and_normal(ls_vec3 x, ls_vec3 *n)
{
    *n = ls_vec3_zero();
    uint32_t m = (uint32_t)ls_fx_max(ls_fx_abs(x.x), ls_fx_max(ls_fx_abs(x.y), ls_fx_abs(x.z)));
    if (m == 0) {
        return 0;
    }
    int sh = ls_norm_shift_(m);
    if (sh < 0) {
        ls_fx sine = ls_vec3_len(x);
        *n = sine >= MIN_SINE ? ls_vec3_normalize(x, ls_vec3_zero()) : ls_vec3_zero();
        return sine;
    }
    int64_t xs = (int64_t)x.x * ((int64_t)1 << sh), ys = (int64_t)x.y * ((int64_t)1 << sh),
            zs = (int64_t)x.z * ((int64_t)1 << sh);
    uint64_t len = ls_isqrt64((uint64_t)(xs * xs + ys * ys + zs * zs)); // < 2^31
    uint64_t s = ls_vec3_len_sq_q32(x);
    uint64_t r = len >> sh;
    r += (s - r * r) > r; // round to nearest
    ls_fx sine = r > (uint64_t)LS_FX_MAX ? LS_FX_MAX : (ls_fx)r;
    if (sine >= MIN_SINE) {
        ls_unit_div_ u = ls_unit_div_make_(len); // len >= sine > 0, |xs| <= len
        *n = ls_vec3_make(ls_unit_div_q16_(&u, xs), ls_unit_div_q16_(&u, ys),
                          ls_unit_div_q16_(&u, zs));
    }
    return sine;
}

// a x b and a . b of the frames' axes: ls_vec3_cross and ls_vec3_dot, with
// the short path of unit vectors (joint.h, ls_joint_small_dir_).
static ls_vec3 cross_of(ls_vec3 a, ls_vec3 b)
{
    return ls_joint_small_dir_(a) && ls_joint_small_dir_(b) ? ls_joint_cross_dir_(a, b)
                                                            : ls_vec3_cross(a, b);
}

static ls_fx dot_of(ls_vec3 a, ls_vec3 b)
{
    return ls_joint_small_dir_(b) ? ls_joint_dot_dir_(a, b) : ls_vec3_dot(a, b);
}

// The directions at the bodies' current poses: n (zero when undefined) and t.
static cone dirs_of(const ls_world *w, const ls_joint *j)
{
    cone c;
    ls_quat fa = ls_joint_frame_a_(w, j), fb = ls_joint_frame_b_(w, j);
    ls_vec3 a = ls_joint_quat_axis_(fa, 0), b = ls_joint_quat_axis_(fb, 0);
    (void)sine_and_normal(cross_of(a, b), &c.n);
    c.t = ls_vec3_normalize(ls_vec3_add(a, b), a);
    c.swing = 0;
    c.twist = 0;
    return c;
}

static bool has_swing(const cone *c)
{
    return c->n.x != 0 || c->n.y != 0 || c->n.z != 0;
}

// x cos(alpha) - w sin(alpha) >= 0, exactly: the half twist atan2(x, w)
// (w >= 0, not both 0) is at least alpha, for alpha in [-pi/2, pi/2].
static bool half_twist_at_least(ls_fx x, ls_fx w, ls_fx cos_alpha, ls_fx sin_alpha)
{
    return (int64_t)x * cos_alpha - (int64_t)w * sin_alpha >= 0;
}

// The swing and twist angles at the bodies' current poses (the swing only
// with a swing direction, the twist only when limited), each taken as the
// middle of its range when it is at least FAR_MARGIN inside it (SPEC.md
// §23.7 "Angles far from the limits"): swing 0 when a.b >= cos(cone - m),
// twist (lower + upper)/2 when its half is within [(lower + m)/2,
// (upper - m)/2]. Why: a limit row that far away only acts on a joint
// turning faster than m per sub-step, and the two tests replace a square
// root and an arc tangent (swing) or an arc tangent (twist) by a few
// products.
static void angles_of(const ls_world *w, const ls_joint *j, cone *c)
{
    bool swing = has_swing(c), twist = twist_limited(j);
    if (!swing && !twist) {
        return;
    }
    ls_quat fa = ls_joint_frame_a_(w, j), fb = ls_joint_frame_b_(w, j);
    if (swing) {
        ls_vec3 a = ls_joint_quat_axis_(fa, 0), b = ls_joint_quat_axis_(fb, 0);
        ls_fx d = dot_of(a, b);
        c->swing = d >= j->far[0] ? 0 : ls_fx_atan2(ls_vec3_len(cross_of(a, b)), d);
    }
    if (twist) {
        ls_fx x, qw;
        ls_joint_twist_xw_(fa, fb, &x, &qw);
        if (j->far_twist && (x != 0 || qw != 0) &&
            half_twist_at_least(x, qw, j->far[1], j->far[2]) &&
            !half_twist_at_least(x, qw, j->far[3], j->far[4])) {
            c->twist = (ls_fx)(((int64_t)j->lower + j->upper) / 2);
        } else {
            ls_fx half = ls_fx_atan2(x, qw); // in [-pi/2, pi/2]
            c->twist = ls_fx_add(half, half);
        }
    }
}

// Swing pushes b's axis back toward a's: an angular impulse -n on b.
static ls_vec3 angular_total(const ls_joint *j, const cone *c)
{
    ls_vec3 l = ls_vec3_scale(c->n, ls_fx_neg(j->angular_impulse.x));
    return ls_vec3_add(l, ls_vec3_scale(c->t, ls_fx_sub(j->lower_impulse, j->upper_impulse)));
}

// Once per tick, at the tick's poses: the rows' directions dir = (n, t),
// their products and masses (0 for a row that is not solved), and the far
// tests' constants. Why once per tick: the directions turn little within a
// tick (Box3D keeps them for its whole step), and their square roots and
// divisions were a third of the cone's work in every sub-step.
static bool has_friction(const ls_joint *j)
{
    return ls_joint_cone_friction_(j);
}

// One pass of the friction block (ls_joint_friction_solve_, joint.h).
static void friction_solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    if (!has_friction(j)) {
        return;
    }
    ls_joint_friction_rows r = {j->angular_mass, j->inv_i_a, j->inv_i_b,
                                ls_fx_mul(j->max_motor, ctx->h), j->friction_impulse};
    ls_vec3 wa = ls_joint_state_a_(w, j)->w, wb = ls_joint_state_b_(w, j)->w;
    ls_joint_friction_solve_(&r, &wa, &wb);
    j->friction_impulse = r.acc;
    ls_joint_set_spins_(w, j, wa, wb);
}

static void prepare(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    (void)ctx;
    if (has_friction(j)) {
        j->angular_mass = ls_joint_angular_block_mass_(j);
    }
    cone c = dirs_of(w, j);
    j->dir[0] = c.n;
    j->dir[1] = c.t;
    ls_joint_cache_dirs_(j, 2);
    j->row_mass[0] = has_swing(&c) ? ls_joint_inverse1_(ls_joint_cached_k_(j, c.n, 0)) : 0;
    j->row_k[1] = twist_limited(j) ? ls_joint_cached_k_(j, c.t, 1) : 0;
    j->row_mass[1] = ls_joint_inverse1_(j->row_k[1]);
    j->far[0] = j->cone > FAR_MARGIN ? ls_fx_cos(j->cone - FAR_MARGIN) : LS_FX_MAX;
    ls_fx lo = j->lower + FAR_MARGIN, hi = j->upper - FAR_MARGIN; // |limits| <= pi
    j->far_twist = lo <= hi;
    ls_fx_sincos(lo / 2, &j->far[2], &j->far[1]);
    ls_fx_sincos(hi / 2, &j->far[4], &j->far[3]);
}

// Each sub-step: the angles at the sub-step's poses into err = (swing,
// twist), which its solves use (the relax pass steps them by the rows'
// speeds, ls_joint_relax_angle_), and the accumulated impulses applied about
// the tick's directions.
static void warm_start(ls_world *w, ls_joint *j)
{
    cone c = {.n = j->dir[0]};
    angles_of(w, j, &c);
    j->err[0] = c.swing;
    j->err[1] = c.twist;
    j->friction_impulse = ls_vec3_zero();
    const ls_fx imp[2] = {ls_fx_neg(j->angular_impulse.x),
                          ls_fx_sub(j->lower_impulse, j->upper_impulse)};
    ls_joint_apply_dirs_(w, j, 0, imp, 2);
}

static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    friction_solve(w, j, ctx);
    ls_joint_cone_rows r;
    ls_joint_cone_rows_of_(j, ctx->h, &r);
    ls_joint_step_spins_(w, j, &r.step_a, &r.step_b);
    ls_vec3 wa = ls_joint_state_a_(w, j)->w, wb = ls_joint_state_b_(w, j)->w;
    ls_joint_cone_rows_solve_(&r, &wa, &wb, ctx->inv_h, ctx->joint, use_bias);
    j->angular_impulse.x = r.acc[0];
    j->lower_impulse = r.acc[1];
    j->upper_impulse = r.acc[2];
    ls_joint_set_spins_(w, j, wa, wb);
}

// The impulses of the last sub-step about the tick's directions.
static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    (void)w;
    cone c = {.n = j->dir[0], .t = j->dir[1]};
    *linear = j->linear_impulse;
    *angular = ls_vec3_add(angular_total(j, &c), j->friction_impulse);
}

const ls_joint_kind ls_joint_cone_kind_ = {
    .name = "cone",
    .needs_axis = true,
    .has_motor = true, // joint friction (motor_speed 0)
    .point_in_lanes = true,
    .prepare = prepare,
    .warm_start = warm_start,
    .solve = solve,
    .lane_rows = LS_LANE_ROWS_CONE,
    .reaction = reaction,
};
