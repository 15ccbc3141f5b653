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
#include "joint.h"

#define MIN_SINE 66 // |a x b| below 0.001: no swing direction

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

// The directions at the bodies' current poses and, with `angles`, the swing
// (only with a swing direction: it is read only then) and the twist (only
// when limited); else those are 0 (the reaction needs no angle).
static cone cone_of(const ls_world *w, const ls_joint *j, bool angles)
{
    cone c;
    ls_quat fa = ls_joint_frame_a_(w, j), fb = ls_joint_frame_b_(w, j);
    ls_vec3 a = ls_joint_quat_axis_(fa, 0), b = ls_joint_quat_axis_(fb, 0);
    ls_fx sine = sine_and_normal(cross_of(a, b), &c.n);
    bool swing = c.n.x != 0 || c.n.y != 0 || c.n.z != 0;
    c.swing = angles && swing ? ls_fx_atan2(sine, dot_of(a, b)) : 0;
    c.t = ls_vec3_normalize(ls_vec3_add(a, b), a);
    c.twist = angles && twist_limited(j) ? ls_joint_twist_angle_(fa, fb) : 0;
    return c;
}

// The swing and twist angles at the bodies' current poses (the swing only
// when the warm start found a swing direction, the twist only when limited).
static void angles_of(const ls_world *w, const ls_joint *j, cone *c)
{
    bool swing = c->n.x != 0 || c->n.y != 0 || c->n.z != 0;
    if (!swing && !twist_limited(j)) {
        return;
    }
    ls_quat fa = ls_joint_frame_a_(w, j), fb = ls_joint_frame_b_(w, j);
    if (swing) {
        ls_vec3 a = ls_joint_quat_axis_(fa, 0), b = ls_joint_quat_axis_(fb, 0);
        c->swing = ls_fx_atan2(ls_vec3_len(cross_of(a, b)), dot_of(a, b));
    }
    if (twist_limited(j)) {
        c->twist = ls_joint_twist_angle_(fa, fb);
    }
}

// Swing pushes b's axis back toward a's: an angular impulse -n on b.
static ls_vec3 angular_total(const ls_joint *j, const cone *c)
{
    ls_vec3 l = ls_vec3_scale(c->n, ls_fx_neg(j->angular_impulse.x));
    return ls_vec3_add(l, ls_vec3_scale(c->t, ls_fx_sub(j->lower_impulse, j->upper_impulse)));
}

static bool has_swing(const cone *c)
{
    return c->n.x != 0 || c->n.y != 0 || c->n.z != 0;
}

// The warm start's pose, directions and masses, kept for this sub-step's
// solves (joint.h): dir = (n, t), err = (swing, twist), row masses 0 for a
// row that is not solved.
static void warm_start(ls_world *w, ls_joint *j)
{
    cone c = cone_of(w, j, true);
    j->dir[0] = c.n;
    j->dir[1] = c.t;
    j->err[0] = c.swing;
    j->err[1] = c.twist;
    ls_joint_cache_dirs_(j, 2);
    j->row_mass[0] = has_swing(&c) ? ls_joint_inverse1_(ls_joint_cached_k_(j, c.n, 0)) : 0;
    j->row_k[1] = twist_limited(j) ? ls_joint_cached_k_(j, c.t, 1) : 0;
    j->row_mass[1] = ls_joint_inverse1_(j->row_k[1]);
    const ls_fx imp[2] = {ls_fx_neg(j->angular_impulse.x),
                          ls_fx_sub(j->lower_impulse, j->upper_impulse)};
    ls_joint_apply_dirs_(w, j, 0, imp, 2);
}

// The relax pass's angles from the bodies' current poses, into err (the
// rows' directions and masses stay the warm start's). In the ball lanes
// this is all the joint solves itself (joint_lanes.h).
static void solve_angles(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    (void)ctx;
    if (use_bias) {
        return;
    }
    cone c;
    c.n = j->dir[0];
    c.swing = j->err[0];
    c.twist = j->err[1];
    angles_of(w, j, &c);
    j->err[0] = c.swing;
    j->err[1] = c.twist;
}

static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    solve_angles(w, j, ctx, use_bias);
    ls_joint_cone_rows r;
    ls_joint_cone_rows_of_(j, &r);
    ls_vec3 wa = ls_joint_state_a_(w, j)->w, wb = ls_joint_state_b_(w, j)->w;
    ls_joint_cone_rows_solve_(&r, &wa, &wb, ctx->inv_h, ctx->joint, use_bias);
    j->angular_impulse.x = r.acc[0];
    j->lower_impulse = r.acc[1];
    j->upper_impulse = r.acc[2];
    ls_joint_set_spins_(w, j, wa, wb);
}

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    cone c = cone_of(w, j, false);
    *linear = j->linear_impulse;
    *angular = angular_total(j, &c);
}

const ls_joint_kind ls_joint_cone_kind = {
    .name = "cone",
    .needs_axis = true,
    .point_in_lanes = true,
    .warm_start = warm_start,
    .solve = solve,
    .solve_rows = solve_angles,
    .lane_rows = LS_LANE_ROWS_CONE,
    .reaction = reaction,
};
