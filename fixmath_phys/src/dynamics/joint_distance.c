// SPDX-License-Identifier: MIT
// Distance joint (SPEC.md §23.6): one row along the line between the anchors,
// n = d / |d|. A rigid rod (min = max, no spring) holds |d| = length; a rope
// or spring (min < max) keeps |d| in [min, max] with one-sided rows, and an
// enabled spring pulls toward the rest length in between (min = max with a
// spring: a soft rod). Impulse of the rod row in linear_impulse.x.
#include "joint.h"

#define MIN_DIRECTION 66 // 0.001 m: below this the direction is undefined; the row rests

typedef struct line {
    ls_vec3 ra, rb, n;
    ls_fx len;
} line;

static line line_of(const ls_world *w, const ls_joint *j)
{
    line l;
    const ls_body *a = &w->bodies[j->a], *b = &w->bodies[j->b];
    l.ra = ls_joint_arm_a_(w, j);
    l.rb = ls_joint_arm_b_(w, j);
    ls_vec3 d = ls_vec3_sub(ls_vec3_add(b->p, l.rb), ls_vec3_add(a->p, l.ra));
    l.len = ls_vec3_len(d);
    l.n = l.len >= MIN_DIRECTION ? ls_vec3_normalize(d, ls_vec3_zero()) : ls_vec3_zero();
    return l;
}

static bool rod(const ls_joint *j)
{
    return j->lower == j->upper && !(j->flags & LS_JOINT_F_SPRING);
}

static void prepare(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    (void)w;
    (void)ctx;
    if (!(j->flags & LS_JOINT_F_SPRING)) {
        j->spring_impulse = 0;
    }
    if (!rod(j)) {
        j->linear_impulse.x = 0;
    }
    if (j->lower == j->upper) {
        j->lower_impulse = j->upper_impulse = 0;
    }
}

static ls_fx total(const ls_joint *j)
{
    ls_fx s = ls_fx_add(j->linear_impulse.x, j->spring_impulse);
    return ls_fx_add(s, ls_fx_sub(j->lower_impulse, j->upper_impulse));
}

static void warm_start(ls_world *w, ls_joint *j)
{
    line l = line_of(w, j);
    ls_joint_apply_(w, j, l.ra, l.rb, ls_vec3_scale(l.n, total(j)), ls_vec3_zero());
}

static void apply(ls_world *w, const ls_joint *j, const line *l, ls_fx impulse)
{
    ls_joint_apply_(w, j, l->ra, l->rb, ls_vec3_scale(l->n, impulse), ls_vec3_zero());
}

static void solve(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    line l = line_of(w, j);
    if (l.n.x == 0 && l.n.y == 0 && l.n.z == 0) {
        return;
    }
    ls_fx mass = ls_joint_inverse1_(ls_joint_linear_k_(j, l.ra, l.rb, l.n));
    if (rod(j)) {
        ls_softness s = ls_joint_rigid_(ctx, use_bias);
        ls_fx cdot = ls_joint_linear_speed_(w, j, l.ra, l.rb, l.n);
        ls_fx rhs = ls_fx_add(cdot, ls_joint_bias_(ls_fx_sub(l.len, j->length), s.bias_rate));
        ls_fx imp = ls_fx_neg(ls_fx_add(ls_fx_mul(ls_fx_mul(mass, s.mass_scale), rhs),
                                        ls_fx_mul(s.impulse_scale, j->linear_impulse.x)));
        j->linear_impulse.x = ls_fx_add(j->linear_impulse.x, imp);
        apply(w, j, &l, imp);
        return;
    }
    if ((j->flags & LS_JOINT_F_SPRING) && j->spring_hertz > 0) {
        ls_fx cdot = ls_joint_linear_speed_(w, j, l.ra, l.rb, l.n);
        ls_fx imp = ls_joint_spring_row_(j, ls_fx_sub(l.len, j->length), cdot, mass,
                                         &j->spring_impulse, use_bias);
        apply(w, j, &l, imp);
    }
    if (j->lower < j->upper) {
        ls_fx cdot = ls_joint_linear_speed_(w, j, l.ra, l.rb, l.n);
        ls_fx imp = ls_joint_limit_row_(ls_fx_sub(l.len, j->lower), cdot, mass, &j->lower_impulse,
                                        ctx, use_bias);
        apply(w, j, &l, imp);
        cdot = ls_fx_neg(ls_joint_linear_speed_(w, j, l.ra, l.rb, l.n));
        imp = ls_joint_limit_row_(ls_fx_sub(j->upper, l.len), cdot, mass, &j->upper_impulse, ctx,
                                  use_bias);
        apply(w, j, &l, ls_fx_neg(imp));
    }
}

static void reaction(const ls_world *w, const ls_joint *j, ls_vec3 *linear, ls_vec3 *angular)
{
    line l = line_of(w, j);
    // Plus an explicit spring's stiffness impulse (not warm-started).
    *linear = ls_vec3_scale(l.n, ls_fx_add(total(j), j->spring_push));
    *angular = ls_vec3_zero();
}

// A rod's error is |len - length|; a rope or spring is only stretched outside
// [min, max] (between them, and for a soft rod, a spring is where its load
// puts it).
static ls_fx stretch(const ls_world *w, const ls_joint *j)
{
    ls_fx len = line_of(w, j).len;
    if (rod(j)) {
        return ls_fx_abs(ls_fx_sub(len, j->length));
    }
    if (j->lower == j->upper) {
        return 0;
    }
    ls_fx below = ls_fx_sub(j->lower, len), above = ls_fx_sub(len, j->upper);
    ls_fx e = below > above ? below : above;
    return e > 0 ? e : 0;
}

const ls_joint_kind ls_joint_distance_kind_ = {
    .name = "distance",
    .has_spring = true,
    .prepare = prepare,
    .warm_start = warm_start,
    .solve = solve,
    .reaction = reaction,
    .stretch = stretch,
};
