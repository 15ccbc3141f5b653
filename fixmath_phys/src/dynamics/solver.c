// SPDX-License-Identifier: MIT
// The soft step (SPEC.md §11): one pipeline for contacts and joints, in the
// stages of Box2D v3. Once per tick the active constraints are collected,
// coloured (graph.c) and prepared; then each of `substeps` sub-steps
// integrates velocities (gravity, forces, damping), warm starts, solves with
// position bias, integrates positions (with the gyroscopic term), and relaxes
// without bias; restitution runs once at the end.
//
// Why soft constraints and sub-steps: position error is corrected by a spring
// of fixed frequency and damping instead of Baumgarte's fraction of the error
// per tick, so the push-out is bounded (max_push_velocity) and the relax pass
// removes the velocity it added: correction adds no energy. Small sub-steps
// make heavy-on-light stacks and long chains converge where more iterations
// of one big step do not.
//
// Determinism: the constraint order (joints in slot order, then contacts in
// (shape a, shape b, child) order) and the colouring depend only on ids; the
// constraints of one colour share no moving body, so the colours may run on
// any number of threads with the same bits (solver.h states the contract).
#include "solver.h"

#include "../collision/shape_kind.h"

#include "joint.h"
#include "workers.h"

enum { ROW_NORMAL = 0, ROW_T1 = 1, ROW_T2 = 2 };

#define TWO_PI 411775 // 2 pi in Q16.16

// The row primitives run ~10^6 times a tick in a pile: force them inline
// (GCC and Clang; the results are the same bits either way).
#if defined(__GNUC__)
#define LS_HOT inline __attribute__((always_inline))
#else
#define LS_HOT inline
#endif

ls_softness ls_softness_make_(ls_fx hertz, ls_fx zeta, ls_fx h)
{
    if (hertz <= 0) {
        return (ls_softness){0, LS_FX_ONE, 0};
    }
    ls_fx omega = ls_fx_mul(TWO_PI, hertz);
    ls_fx ho = ls_fx_mul(h, omega);
    ls_fx a1 = ls_fx_add(ls_fx_mul(LS_FX_INT(2), zeta), ho);
    ls_fx a2 = ls_fx_mul(ho, a1);
    ls_fx a3 = ls_fx_div(LS_FX_ONE, ls_fx_add(LS_FX_ONE, a2));
    return (ls_softness){ls_fx_div(omega, a1), ls_fx_mul(a2, a3), a3};
}

static bool moves(const ls_body *b)
{
    return ls_body_moves_(b);
}

static bool contact_active(const ls_world *w, const ls_contact *c)
{
    return c->m.count > 0 && (moves(&w->bodies[c->a]) || moves(&w->bodies[c->b]));
}

// d . (vb + wb x rb - va - wa x ra), summed in Q32.32 and rounded once.
static LS_HOT ls_fx row_velocity(const ls_body *a, const ls_body *b, const ls_solver_row *r,
                                 ls_vec3 d)
{
    int64_t s = ls_vec3_dot_q32(ls_vec3_sub(b->linear_velocity, a->linear_velocity), d);
    s = ls_i64_add_sat(s, ls_vec3_dot_q32(b->angular_velocity, r->ang_b));
    s = ls_i64_add_sat(s, -ls_vec3_dot_q32(a->angular_velocity, r->ang_a));
    return ls_fx_from_q32(s);
}

// The angular half of an impulse: a loses lambda * I_a^-1 (ra x d), b gains.
static LS_HOT void row_apply_angular(const ls_contact_scratch *c, ls_body *a, ls_body *b,
                                     const ls_solver_row *r, ls_fx lambda)
{
    if (c->inv_mass_a) {
        a->angular_velocity = ls_vec3_sub(a->angular_velocity, ls_vec3_scale(r->iang_a, lambda));
    }
    if (c->inv_mass_b) {
        b->angular_velocity = ls_vec3_add(b->angular_velocity, ls_vec3_scale(r->iang_b, lambda));
    }
}

// Apply impulse lambda along d: a loses, b gains.
static LS_HOT void row_apply(const ls_contact_scratch *c, ls_body *a, ls_body *b,
                             const ls_solver_row *r, ls_vec3 d, ls_fx lambda)
{
    if (lambda == 0) {
        return;
    }
    if (c->inv_mass_a) {
        a->linear_velocity =
            ls_vec3_sub(a->linear_velocity, ls_vec3_scale(d, ls_fx_mul(lambda, c->inv_mass_a)));
    }
    if (c->inv_mass_b) {
        b->linear_velocity =
            ls_vec3_add(b->linear_velocity, ls_vec3_scale(d, ls_fx_mul(lambda, c->inv_mass_b)));
    }
    row_apply_angular(c, a, b, r, lambda);
}

static void row_prepare(const ls_contact_scratch *c, const ls_body *a, const ls_body *b, ls_vec3 ra,
                        ls_vec3 rb, ls_vec3 d, ls_solver_row *r)
{
    r->ang_a = ls_vec3_cross(ra, d);
    r->ang_b = ls_vec3_cross(rb, d);
    r->iang_a = c->inv_mass_a ? ls_mat3_mul_vec(a->inv_inertia_world, r->ang_a) : ls_vec3_zero();
    r->iang_b = c->inv_mass_b ? ls_mat3_mul_vec(b->inv_inertia_world, r->ang_b) : ls_vec3_zero();
    // 1 / (mA^-1 + mB^-1 + (ra x d).IA^-1(ra x d) + (rb x d).IB^-1(rb x d))
    ls_fx k = ls_fx_add(c->inv_mass_a, c->inv_mass_b);
    k = ls_fx_add(k, ls_vec3_dot(r->ang_a, r->iang_a));
    k = ls_fx_add(k, ls_vec3_dot(r->ang_b, r->iang_b));
    r->mass = k > 0 ? ls_fx_div(LS_FX_ONE, k) : 0;
}

// Angular-only row about axis d (rolling resistance): ang = d on both bodies.
static void roll_prepare(const ls_contact_scratch *c, const ls_body *a, const ls_body *b, ls_vec3 d,
                         ls_solver_row *r)
{
    r->ang_a = d;
    r->ang_b = d;
    r->iang_a = c->inv_mass_a ? ls_mat3_mul_vec(a->inv_inertia_world, d) : ls_vec3_zero();
    r->iang_b = c->inv_mass_b ? ls_mat3_mul_vec(b->inv_inertia_world, d) : ls_vec3_zero();
    ls_fx k = ls_fx_add(ls_vec3_dot(d, r->iang_a), ls_vec3_dot(d, r->iang_b));
    r->mass = k > 0 ? ls_fx_div(LS_FX_ONE, k) : 0;
}

// A deterministic orthonormal tangent basis for unit normal n.
static void tangent_basis(ls_vec3 n, ls_vec3 *t1, ls_vec3 *t2)
{
    ls_vec3 t = ls_fx_abs(n.x) >= 37837 /* 0.57735 */ ? ls_vec3_make(n.y, ls_fx_neg(n.x), 0)
                                                      : ls_vec3_make(0, n.z, ls_fx_neg(n.y));
    *t1 = ls_vec3_normalize(t, ls_vec3_make(LS_FX_ONE, 0, 0));
    *t2 = ls_vec3_cross(n, *t1);
}

// Static-friction anchoring. Why: point friction only stops relative
// velocity, so the small slips of each tick (a manifold point that moves as
// the contact rotates, solver error, a yawed box whose points change) add up
// and an imperfect tower creeps. A point that sticks remembers where it
// touched in each body; while it keeps sticking, friction also pulls the two
// places back together (a bias on the tangent rows, like the contact spring
// on the normal). A point re-anchors where it is when its friction saturates
// (it slides), when it separates, or when the places drift 2 cm apart. Round
// shapes are not anchored: their touching point moves over them as they roll.
#define ANCHOR_RESET     1311 // 2 cm
#define ANCHOR_MAX_SPEED 3277 // 0.05 m/s: most speed the anchor pull may add

static void anchor_prepare(ls_contact_scratch *x, const ls_body *a, const ls_body *b, int i)
{
    ls_contact *c = x->c;
    ls_contact_solve *s = &x->s[i];
    s->drift[0] = s->drift[1] = 0;
    if (!x->anchor) {
        c->anchored &= ~(1u << i);
        return;
    }
    if (!(c->anchored >> i & 1u)) {
        ls_vec3 p = c->m.points[i].point;
        c->anchor_a[i] = ls_mat3_mul_tvec(a->xf.r, s->ra);
        c->anchor_b[i] = ls_mat3_mul_tvec(b->xf.r, s->rb);
        (void)p;
        c->anchored |= 1u << i;
    }
    ls_vec3 pa = ls_vec3_add(a->p, ls_mat3_mul_vec(a->xf.r, c->anchor_a[i]));
    ls_vec3 pb = ls_vec3_add(b->p, ls_mat3_mul_vec(b->xf.r, c->anchor_b[i]));
    ls_vec3 slip = ls_vec3_sub(pb, pa);
    ls_vec3 rel = ls_vec3_sub(s->rb, s->ra);
    s->drift[0] = ls_fx_sub(ls_vec3_dot(slip, x->t1), ls_vec3_dot(rel, x->t1));
    s->drift[1] = ls_fx_sub(ls_vec3_dot(slip, x->t2), ls_vec3_dot(rel, x->t2));
}

// End of the tick: points that slid, separated or drifted far re-anchor.
static void anchor_store(const ls_world *w, ls_contact_scratch *x)
{
    ls_contact *c = x->c;
    if (!x->anchor || !c->anchored) {
        return;
    }
    const ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    for (int i = 0; i < c->m.count; i++) {
        ls_fx limit = ls_fx_mul(x->friction, c->normal_impulse[i]);
        bool slid = c->normal_impulse[i] == 0 || ls_fx_abs(c->tangent_impulse[i][0]) >= limit ||
                    ls_fx_abs(c->tangent_impulse[i][1]) >= limit;
        if (!slid) {
            ls_vec3 pa = ls_vec3_add(a->p, ls_mat3_mul_vec(a->xf.r, c->anchor_a[i]));
            ls_vec3 pb = ls_vec3_add(b->p, ls_mat3_mul_vec(b->xf.r, c->anchor_b[i]));
            ls_vec3 d = ls_vec3_sub(pb, pa);
            d = ls_vec3_sub(d, ls_vec3_scale(c->m.normal, ls_vec3_dot(d, c->m.normal)));
            slid = ls_vec3_len_sq_q32(d) > (uint64_t)ANCHOR_RESET * ANCHOR_RESET;
        }
        if (slid) {
            c->anchored &= ~(1u << i);
        }
    }
}

static void prepare_contact(ls_world *w, ls_contact_scratch *x)
{
    const ls_contact *c = x->c;
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    const ls_shape *sa = &w->shapes[c->shape_a], *sb = &w->shapes[c->shape_b];
    x->friction = ls_fx_sqrt(ls_fx_mul(sa->friction, sb->friction));
    x->restitution = ls_fx_max(sa->restitution, sb->restitution);
    x->inv_mass_a = moves(a) ? a->inv_mass : 0;
    x->inv_mass_b = moves(b) ? b->inv_mass : 0;
    x->turn_a = !ls_shape_kind_of(sa->geom.kind)->round;
    x->turn_b = !ls_shape_kind_of(sb->geom.kind)->round;
    x->anchor = x->turn_a && x->turn_b;
    tangent_basis(c->m.normal, &x->t1, &x->t2);
    const ls_vec3 dirs[3] = {c->m.normal, x->t1, x->t2};
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &x->s[i];
        ls_vec3 p = c->m.points[i].point;
        s->ra = ls_vec3_sub(p, a->p);
        s->rb = ls_vec3_sub(p, b->p);
        for (int k = 0; k < 3; k++) {
            row_prepare(x, a, b, s->ra, s->rb, dirs[k], &s->row[k]);
        }
        s->vn0 = row_velocity(a, b, &s->row[ROW_NORMAL], c->m.normal);
        // separation = -depth; at the start of the tick dp = 0, dr = 1.
        s->adjusted = ls_fx_sub(ls_fx_neg(c->m.points[i].depth),
                                ls_vec3_dot(ls_vec3_sub(s->rb, s->ra), c->m.normal));
        s->max_impulse = 0;
        anchor_prepare(x, a, b, i);
    }
    if (c->m.count <= 2) {
        for (int k = 0; k < 3; k++) {
            roll_prepare(x, a, b, dirs[k], &x->roll[k]);
            x->roll_impulse[k] = 0;
        }
    }
}

static void warm_start_contact(ls_world *w, const ls_contact_scratch *x)
{
    const ls_contact *c = x->c;
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    for (int i = 0; i < c->m.count; i++) {
        const ls_solver_row *r = x->s[i].row;
        row_apply(x, a, b, &r[ROW_NORMAL], c->m.normal, c->normal_impulse[i]);
        row_apply(x, a, b, &r[ROW_T1], x->t1, c->tangent_impulse[i][0]);
        row_apply(x, a, b, &r[ROW_T2], x->t2, c->tangent_impulse[i][1]);
    }
    for (int k = 0; k < 3 && c->m.count <= 2; k++) {
        row_apply_angular(x, a, b, &x->roll[k], x->roll_impulse[k]);
    }
}

// Where a contact point of a moving body is now, relative to where the tick
// began: dp + dr r, or dp + r on a round shape, whose touching point does not
// turn with the body (a rolling ball touches with its bottom, not with the
// material point that touched first); just r for a body that does not move.
static LS_HOT ls_vec3 moved_arm(const ls_body *b, ls_vec3 r, bool turn)
{
    if (!moves(b)) {
        return r;
    }
    return ls_vec3_add(b->dp, turn ? ls_mat3_mul_vec(b->dr, r) : r);
}

// Friction point by point, each tangent clamped to the friction cone of the
// point's current normal impulse.
static void solve_friction(const ls_step_ctx *ctx, ls_contact_scratch *x, ls_body *a, ls_body *b,
                           const ls_vec3 *arm, bool use_bias)
{
    ls_contact *c = x->c;
    const ls_vec3 t[2] = {x->t1, x->t2};
    for (int i = 0; i < c->m.count; i++) {
        ls_fx limit = ls_fx_mul(x->friction, c->normal_impulse[i]);
        if (limit == 0 && c->tangent_impulse[i][0] == 0 && c->tangent_impulse[i][1] == 0) {
            continue; // a point without load: both rows would clamp to 0
        }
        bool pull = use_bias && (c->anchored >> i & 1u);
        for (int k = 0; k < 2; k++) {
            const ls_solver_row *r = &x->s[i].row[ROW_T1 + k];
            ls_fx vt = row_velocity(a, b, r, t[k]);
            if (pull) {
                ls_fx slip = ls_fx_add(ls_vec3_dot(arm[i], t[k]), x->s[i].drift[k]);
                vt = ls_fx_add(vt, ls_fx_clamp(ls_fx_mul(ctx->contact.bias_rate, slip),
                                               -ANCHOR_MAX_SPEED, ANCHOR_MAX_SPEED));
            }
            ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, vt));
            ls_fx old = c->tangent_impulse[i][k];
            ls_fx now = ls_fx_clamp(ls_fx_add(old, lambda), ls_fx_neg(limit), limit);
            c->tangent_impulse[i][k] = now;
            row_apply(x, a, b, r, t[k], now - old);
        }
    }
}

// Rolling and twisting resistance for contacts of one or two points (spheres,
// capsules, edges), which point friction cannot stop from spinning or rolling
// forever: a torque about n, t1, t2 of at most rolling_resistance times the
// normal force. Faces (3-4 points) resist both through their spread points.
static void solve_rolling(const ls_world *w, ls_contact_scratch *x, ls_body *a, ls_body *b)
{
    const ls_contact *c = x->c;
    ls_fx normal = 0;
    for (int i = 0; i < c->m.count; i++) {
        normal = ls_fx_add(normal, c->normal_impulse[i]);
    }
    ls_fx limit = ls_fx_mul(w->def.rolling_resistance, normal);
    if (limit == 0 && x->roll_impulse[0] == 0 && x->roll_impulse[1] == 0 &&
        x->roll_impulse[2] == 0) {
        return; // no load: every row would clamp to 0
    }
    for (int k = 0; k < 3; k++) {
        const ls_solver_row *r = &x->roll[k];
        // A purely angular row: with no linear direction, row_velocity is (wb - wa) . d.
        ls_fx rel = row_velocity(a, b, r, ls_vec3_zero());
        ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, rel));
        ls_fx old = x->roll_impulse[k];
        ls_fx now = ls_fx_clamp(ls_fx_add(old, lambda), ls_fx_neg(limit), limit);
        x->roll_impulse[k] = now;
        row_apply_angular(x, a, b, r, now - old);
    }
}

// Step length of a Jacobi sweep: alpha in [0, 1] minimising the squared
// residual sum_i (r_i + alpha * dv_i)^2, where r_i is each point's residual
// before the sweep and dv_i the change the full sweep made. Exact 64-bit sums;
// both sums are shifted down together (the ratio is kept) so the quotient
// fits. 1 when the full step is best or nothing changed.
static ls_fx jacobi_step(const ls_fx *r, const ls_fx *dv, int n)
{
    int64_t num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        // |r|, |dv| <= 2^31: each product <= 2^62; a quarter of it keeps the
        // sum of n <= 4 terms within int64 whatever the velocities (they can
        // saturate within a sub-step), and the ratio is unchanged.
        num -= ((int64_t)r[i] * dv[i]) / 4;
        den += ((int64_t)dv[i] * dv[i]) / 4;
    }
    if (den <= 0 || num >= den) {
        return LS_FX_ONE;
    }
    if (num <= 0) {
        return 0;
    }
    while (den >= ((int64_t)1 << 46)) {
        num >>= 1;
        den >>= 1;
    }
    return (ls_fx)((num << 16) / den);
}

// Normals Jacobi-style: every point's impulse from the same velocities, then
// all applied, so a symmetric manifold gets symmetric impulses (SPEC.md §11).
// Each point is a soft constraint on its current separation s (from the
// bodies' motion since the tick began): a separated point (s > 0) only stops
// the approach that would close the gap this sub-step (speculative); a
// penetrating one is pushed out by the contact spring when use_bias, capped at
// max_push; the relax pass (no bias) is rigid and removes the push velocity.
// Why the step length: the points' impulses are computed as if each were
// alone; for a face whose points barely couple through rotation (a tall thin
// box standing on its end) their sum overshoots up to 4x, the next sweep
// clamps them all to zero, and the body falls through the ground. Scaling the
// sweep by the residual-minimising step keeps the symmetry and removes the
// overshoot; for a cube face the full step is already exact (alpha = 1).
static void solve_normals(const ls_step_ctx *ctx, ls_contact_scratch *x, ls_body *a, ls_body *b,
                          const ls_vec3 *arm, bool use_bias)
{
    ls_contact *c = x->c;
    ls_fx delta[LS_MANIFOLD_MAX], res[LS_MANIFOLD_MAX], dv[LS_MANIFOLD_MAX];
    ls_fx old[LS_MANIFOLD_MAX];
    bool any = false;
    const ls_softness *soft = x->inv_mass_a && x->inv_mass_b ? &ctx->contact : &ctx->contact_static;
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &x->s[i];
        const ls_solver_row *r = &s->row[ROW_NORMAL];
        ls_fx sep = ls_fx_add(ls_vec3_dot(arm[i], c->m.normal), s->adjusted);
        ls_fx bias = 0, mass_scale = LS_FX_ONE, impulse_scale = 0;
        if (sep > 0) {
            bias = ls_fx_mul(sep, ctx->inv_h);
        } else if (use_bias) {
            bias = ls_fx_max(ls_fx_mul(soft->bias_rate, sep), ls_fx_neg(ctx->max_push));
            mass_scale = soft->mass_scale;
            impulse_scale = soft->impulse_scale;
        }
        ls_fx vn = row_velocity(a, b, r, c->m.normal);
        res[i] = ls_fx_add(vn, bias);
        old[i] = c->normal_impulse[i];
        ls_fx lambda = ls_fx_sub(ls_fx_neg(ls_fx_mul(ls_fx_mul(r->mass, mass_scale), res[i])),
                                 ls_fx_mul(impulse_scale, old[i]));
        delta[i] = ls_fx_max(ls_fx_add(old[i], lambda), 0) - old[i];
        dv[i] = vn;
        any |= delta[i] != 0;
    }
    if (!any) {
        return;
    }
    for (int i = 0; i < c->m.count; i++) {
        row_apply(x, a, b, &x->s[i].row[ROW_NORMAL], c->m.normal, delta[i]);
    }
    ls_fx alpha = LS_FX_ONE;
    if (c->m.count > 1) {
        // Only points the sweep pushed count: a clamped separating point's
        // residual is not one the impulses could reduce.
        ls_fx rr[LS_MANIFOLD_MAX], dd[LS_MANIFOLD_MAX];
        int n = 0;
        for (int i = 0; i < c->m.count; i++) {
            if (delta[i] != 0) {
                ls_fx vn = row_velocity(a, b, &x->s[i].row[ROW_NORMAL], c->m.normal);
                rr[n] = res[i];
                dd[n++] = ls_fx_sub(vn, dv[i]);
            }
        }
        // Only a clear overshoot (the best step under 1/2) is scaled back,
        // and never below 1/n (n fully coupled points overshoot at most n
        // times): smaller corrections would slow the coupled convergence of
        // piles, where a full Jacobi step helps the neighbouring contacts.
        alpha = n > 1 ? jacobi_step(rr, dd, n) : LS_FX_ONE;
        alpha = alpha >= LS_FX_ONE / 2 ? LS_FX_ONE : ls_fx_max(alpha, LS_FX_ONE / n);
    }
    for (int i = 0; i < c->m.count; i++) {
        ls_fx step = alpha == LS_FX_ONE ? delta[i] : ls_fx_mul(delta[i], alpha);
        if (step != delta[i]) {
            row_apply(x, a, b, &x->s[i].row[ROW_NORMAL], c->m.normal, step - delta[i]);
        }
        ls_fx now = ls_fx_add(old[i], step);
        c->normal_impulse[i] = now;
        x->s[i].max_impulse = ls_fx_max(x->s[i].max_impulse, now);
    }
}

static void solve_contact(ls_world *w, const ls_step_ctx *ctx, ls_contact_scratch *x, bool use_bias)
{
    ls_body *a = &w->bodies[x->c->a], *b = &w->bodies[x->c->b];
    // Each point's separation vector now (both bodies' motion since the tick
    // began), shared by the normal and the anchored friction rows.
    ls_vec3 arm[LS_MANIFOLD_MAX];
    for (int i = 0; i < x->c->m.count; i++) {
        arm[i] =
            ls_vec3_sub(moved_arm(b, x->s[i].rb, x->turn_b), moved_arm(a, x->s[i].ra, x->turn_a));
    }
    solve_normals(ctx, x, a, b, arm, use_bias);
    solve_friction(ctx, x, a, b, arm, use_bias);
    if (x->c->m.count <= 2 && w->def.rolling_resistance > 0) {
        solve_rolling(w, x, a, b);
    }
}

// After the sub-steps: points that were approaching fast and did receive an
// impulse leave with -e times their approach speed.
static void solve_restitution(const ls_world *w, ls_contact_scratch *x)
{
    ls_contact *c = x->c;
    if (x->restitution == 0) {
        return;
    }
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &x->s[i];
        if (s->vn0 > ls_fx_neg(w->def.restitution_threshold) || s->max_impulse == 0) {
            continue;
        }
        const ls_solver_row *r = &s->row[ROW_NORMAL];
        ls_fx vn = row_velocity(a, b, r, c->m.normal);
        ls_fx target = ls_fx_neg(ls_fx_mul(x->restitution, s->vn0));
        ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, ls_fx_sub(vn, target)));
        ls_fx old = c->normal_impulse[i];
        ls_fx now = ls_fx_max(ls_fx_add(old, lambda), 0);
        c->normal_impulse[i] = now;
        row_apply(x, a, b, r, c->m.normal, now - old);
    }
}

// ---- bodies --------------------------------------------------------------

// Clamp |v| to `limit` (m/s or rad/s); speeds are bounded by SPEC.md §5.
static ls_vec3 clamp_speed(ls_vec3 v, ls_fx limit)
{
    uint64_t lim = (uint64_t)limit * (uint64_t)limit;
    if (ls_vec3_len_sq_q32(v) <= lim) {
        return v;
    }
    return ls_vec3_scale(ls_vec3_normalize(v, ls_vec3_zero()), limit);
}

// Start of the tick: remember where each moving body began.
static void bodies_begin(ls_world *w, uint32_t i)
{
    ls_body *b = &w->bodies[i];
    if (!b->alive || b->type == LS_BODY_STATIC || b->asleep) {
        return;
    }
    b->p0 = b->p;
    b->r0 = b->xf.r;
    b->dp = ls_vec3_zero();
    b->dr = ls_mat3_identity();
}

// Gravity, forces and damping for one sub-step of h seconds.
static void integrate_velocity(const ls_world *w, const ls_step_ctx *ctx, ls_body *b)
{
    const ls_fx h = ctx->h;
    ls_vec3 acc = ls_vec3_mad(w->def.gravity, b->force, b->inv_mass);
    b->linear_velocity = ls_vec3_mad(b->linear_velocity, acc, h);
    if (b->torque.x || b->torque.y || b->torque.z) {
        b->angular_velocity =
            ls_vec3_add(b->angular_velocity,
                        ls_vec3_scale(ls_mat3_mul_vec(b->inv_inertia_world, b->torque), h));
    }
    if (b->lin_damp) {
        b->linear_velocity =
            ls_vec3_scale(b->linear_velocity, LS_FX_ONE - ls_fx_mul(b->lin_damp, h));
    }
    if (b->ang_damp) {
        b->angular_velocity =
            ls_vec3_scale(b->angular_velocity, LS_FX_ONE - ls_fx_mul(b->ang_damp, h));
    }
    b->linear_velocity = clamp_speed(b->linear_velocity, LS_FX_INT(512));
    b->angular_velocity = clamp_speed(b->angular_velocity, LS_FX_INT(128));
}

// q turned by angular velocity w (world frame) for h seconds: q + h/2 (w, 0) q,
// normalised. Why not ls_quat_integrate: with sub-steps w h is a few hundred
// raw units, so rounding it to Q16.16 before the product would err by up to
// 0.4 % in every turn; here w h stays exact (Q32.32), the sum is kept in
// Q4.28 and rounded once, at the normalisation.
static ls_quat integrate_q(ls_quat q, ls_vec3 w, ls_fx h)
{
    // Each component within +-128 rad/s (dynamic bodies are clamped to that
    // speed already; a kinematic body from a stranger's snapshot may not be):
    // then |w h| < 7.4 rad even at 30 Hz with one sub-step, so |c| < 2^30.3
    // below and the sum of squares fits 64 bits.
    w = ls_vec3_make(ls_fx_clamp(w.x, -LS_FX_INT(128), LS_FX_INT(128)),
                     ls_fx_clamp(w.y, -LS_FX_INT(128), LS_FX_INT(128)),
                     ls_fx_clamp(w.z, -LS_FX_INT(128), LS_FX_INT(128)));
    int64_t tx = (int64_t)w.x * h, ty = (int64_t)w.y * h, tz = (int64_t)w.z * h; // Q32, < 2^34
    // (t, 0) q in Q48 (each product < 2^50, sums < 2^52), halved, plus q.
    int64_t c[4];
    c[0] = (((tx * q.w + ty * q.z - tz * q.y) >> 1) + ((int64_t)q.x * ((int64_t)1 << 32))) >> 20;
    c[1] = (((ty * q.w + tz * q.x - tx * q.z) >> 1) + ((int64_t)q.y * ((int64_t)1 << 32))) >> 20;
    c[2] = (((tz * q.w + tx * q.y - ty * q.x) >> 1) + ((int64_t)q.z * ((int64_t)1 << 32))) >> 20;
    c[3] = ((-(tx * q.x + ty * q.y + tz * q.z) >> 1) + ((int64_t)q.w * ((int64_t)1 << 32))) >> 20;
    uint64_t sum = 0;
    for (int i = 0; i < 4; i++) {
        sum += (uint64_t)(c[i] * c[i]); // |c| < 2^30.3: each < 2^60.6, sum < 2^62.6
    }
    int64_t len = (int64_t)ls_isqrt64(sum);
    if (len == 0) {
        return ls_quat_identity();
    }
    ls_fx out[4];
    for (int i = 0; i < 4; i++) {
        int64_t n = c[i] * 65536;
        out[i] = (ls_fx)((n >= 0 ? n + len / 2 : n - len / 2) / len);
    }
    return ls_quat_make(out[0], out[1], out[2], out[3]);
}

// Angular velocity of a body turned to rotation rn that kept its angular
// momentum lw (world; lb and wb in the old body frame): rn (wb + I^-1 (rnT lw - lb)).
static ls_vec3 gyro_omega(const ls_body *b, ls_mat3 rn, ls_vec3 wb, ls_vec3 lb, ls_vec3 lw)
{
    ls_vec3 dl = ls_vec3_sub(ls_mat3_mul_tvec(rn, lw), lb);
    return ls_mat3_mul_vec(rn, ls_vec3_add(wb, ls_mat3_mul_vec(b->gyro_m, dl)));
}

// Rotate by w over h, keeping the angular momentum (gyro.c explains). Why a
// predictor-corrector: turning by the old w and then updating w (explicit)
// gains ~1 % kinetic energy per second on a tumbling box; turning by the
// mean of the old and the predicted w is second order and keeps it.
static void integrate_rotation(ls_body *b, ls_fx h)
{
    if (!b->gyro) {
        b->q = integrate_q(b->q, b->angular_velocity, h);
        b->xf.r = ls_mat3_from_quat(b->q);
        return;
    }
    ls_mat3 r = b->xf.r;
    ls_vec3 wb = ls_mat3_mul_tvec(r, b->angular_velocity); // body frame
    ls_vec3 lb = ls_mat3_mul_vec(b->gyro_i, wb);           // scaled angular momentum
    ls_vec3 lw = ls_mat3_mul_vec(r, lb);                   // world
    ls_quat q1 = integrate_q(b->q, b->angular_velocity, h);
    ls_vec3 w1 = gyro_omega(b, ls_mat3_from_quat(q1), wb, lb, lw);
    ls_vec3 wm = ls_vec3_make(ls_fx_add(b->angular_velocity.x, w1.x) / 2,
                              ls_fx_add(b->angular_velocity.y, w1.y) / 2,
                              ls_fx_add(b->angular_velocity.z, w1.z) / 2);
    b->q = integrate_q(b->q, wm, h);
    b->xf.r = ls_mat3_from_quat(b->q);
    ls_vec3 w2 = gyro_omega(b, b->xf.r, wb, lb, lw);
    // Energy guard: 2E = w.L (scaled units). The scheme's own error is far
    // below 1/1024 per sub-step; a larger rise (extreme spin, rounding of a
    // badly conditioned inertia) is cut back so energy can never run away.
    int64_t e0 = ls_vec3_dot_q32(wb, lb);
    ls_vec3 wb2 = ls_mat3_mul_tvec(b->xf.r, w2);
    int64_t e1 = ls_vec3_dot_q32(wb2, ls_mat3_mul_tvec(b->xf.r, lw));
    if (e0 > 0 && e1 - e0 > (e0 >> 10)) {
        while (e1 >= ((int64_t)1 << 46)) {
            e0 >>= 1;
            e1 >>= 1;
        }
        ls_fx ratio = e1 > 0 ? (ls_fx)((e0 << 16) / e1) : LS_FX_ONE;
        w2 = ls_vec3_scale(w2, ratio);
    }
    b->angular_velocity = w2;
}

static void integrate_position(const ls_step_ctx *ctx, ls_body *b)
{
    b->p = ls_vec3_mad(b->p, b->linear_velocity, ctx->h);
    if (b->angular_velocity.x || b->angular_velocity.y || b->angular_velocity.z) {
        integrate_rotation(b, ctx->h);
        b->dr = ls_mat3_mul(b->xf.r, ls_mat3_transpose(b->r0));
    }
    b->dp = ls_vec3_sub(b->p, b->p0);
}

// ---- stages --------------------------------------------------------------

typedef struct stage {
    ls_world *w;
    const ls_step_ctx *ctx;
    const uint32_t *items; ///< constraint indices of one colour (graph order)
    bool use_bias;
} stage;

static void body_velocities(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        ls_body *b = &st->w->bodies[i];
        if (b->alive && moves(b)) {
            integrate_velocity(st->w, st->ctx, b);
        }
    }
}

static void body_positions(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        ls_body *b = &st->w->bodies[i];
        if (b->alive && b->type != LS_BODY_STATIC && !b->asleep) {
            integrate_position(st->ctx, b);
        }
    }
}

static void body_begin(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        bodies_begin(st->w, i);
    }
}

static void prepare_contacts(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        prepare_contact(st->w, &st->w->scratch[i]);
    }
}

// Constraint k of the graph: joints first (active_joints order), then contacts.
static void constraints_warm(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_world *w = st->w;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        uint32_t k = st->items[i];
        if (k < w->active_joint_count) {
            ls_joint_warm_start_(w, &w->joints[w->active_joints[k]]);
        } else {
            warm_start_contact(w, &w->scratch[k - w->active_joint_count]);
        }
    }
}

static void constraints_solve(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_world *w = st->w;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        uint32_t k = st->items[i];
        if (k < w->active_joint_count) {
            ls_joint_solve_(w, &w->joints[w->active_joints[k]], st->ctx, st->use_bias);
        } else {
            solve_contact(w, st->ctx, &w->scratch[k - w->active_joint_count], st->use_bias);
        }
    }
}

static void constraints_restitution(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_world *w = st->w;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        uint32_t k = st->items[i];
        if (k >= w->active_joint_count) {
            solve_restitution(w, &w->scratch[k - w->active_joint_count]);
            anchor_store(w, &w->scratch[k - w->active_joint_count]);
        }
    }
}

// Blocks of at least this many constraints or bodies per worker: smaller
// loops are not worth waking a thread for.
#define MIN_CONSTRAINT_BLOCK 32
#define MIN_BODY_BLOCK       128

// Run fn over every colour in turn (each colour's constraints in parallel),
// then over the overflow group on this thread.
static void for_colours(ls_world *w, stage *st, ls_workers_fn *fn)
{
    const ls_graph *g = &w->graph;
    for (uint32_t c = 0; c < g->colour_count; c++) {
        st->items = g->order + g->start[c];
        ls_workers_for_(w->workers, g->start[c + 1] - g->start[c], MIN_CONSTRAINT_BLOCK, fn, st);
    }
    uint32_t n = g->start[g->colour_count + 1] - g->start[g->colour_count];
    if (n > 0) {
        st->items = g->order + g->start[g->colour_count];
        fn(st, 0, n, 0);
    }
}

static ls_step_ctx make_ctx(const ls_world *w)
{
    ls_step_ctx ctx;
    ctx.dt = w->dt;
    ctx.substeps = w->def.substeps;
    ctx.h = w->dt / (ls_fx)w->def.substeps;
    ctx.inv_h = ls_fx_div(LS_FX_ONE, ctx.h);
    // The contact spring must stay well below the sub-step rate (Box2D: a
    // quarter of it) or it would be stiffer than the integrator can follow.
    ls_fx hertz = ls_fx_min(w->def.contact_hertz, ctx.inv_h / 4);
    ctx.contact = ls_softness_make_(hertz, w->def.contact_damping_ratio, ctx.h);
    ctx.contact_static = ls_softness_make_(hertz * 2, w->def.contact_damping_ratio, ctx.h);
    ctx.joint = ls_softness_make_(ls_fx_min(w->def.joint_hertz, ctx.inv_h / 2),
                                  w->def.joint_damping_ratio, ctx.h);
    ctx.max_push = w->def.max_push_velocity;
    return ctx;
}

static bool joint_active(const ls_world *w, const ls_joint *j)
{
    return j->alive && (moves(&w->bodies[j->a]) || moves(&w->bodies[j->b]));
}

// The graph's view of a constraint: bodies it may write (moving ones only).
static ls_graph_edge edge_of(const ls_world *w, uint32_t a, uint32_t b)
{
    ls_graph_edge e = {moves(&w->bodies[a]) ? a : UINT32_MAX,
                       moves(&w->bodies[b]) ? b : UINT32_MAX};
    return e;
}

void ls_world_solve_(ls_world *w)
{
    ls_step_ctx ctx = make_ctx(w);
    stage st = {w, &ctx, NULL, true};
    // Collect: joints in slot order, then contacts in contact order.
    uint32_t nj = 0, nc = 0;
    for (uint32_t i = 0; i < w->joint_high; i++) {
        if (joint_active(w, &w->joints[i])) {
            w->active_joints[nj] = i;
            w->edges[nj] = edge_of(w, w->joints[i].a, w->joints[i].b);
            nj++;
        }
    }
    w->active_joint_count = nj;
    for (uint32_t i = 0; i < w->contact_count; i++) {
        if (contact_active(w, &w->contacts[i])) {
            w->scratch[nc].c = &w->contacts[i];
            w->edges[nj + nc] = edge_of(w, w->contacts[i].a, w->contacts[i].b);
            nc++;
        }
    }
    w->active_contacts = nc;
    ls_graph_colour_(&w->graph, w->edges, nj + nc);

    ls_workers_for_(w->workers, w->body_high, MIN_BODY_BLOCK, body_begin, &st);
    ls_workers_for_(w->workers, nc, MIN_CONSTRAINT_BLOCK, prepare_contacts, &st);
    for (uint32_t k = 0; k < nj; k++) {
        ls_joint_prepare_(w, &w->joints[w->active_joints[k]], &ctx);
    }
    for (uint32_t sub = 0; sub < ctx.substeps; sub++) {
        // Sub-steps of dt/n rounded alternately down and up so that they add
        // up to dt exactly (1092 / 8 is 136.5 raw): the world's clock never
        // runs slow. Softness uses the mean.
        ctx.h = (ls_fx)(((int64_t)w->dt * (sub + 1)) / ctx.substeps -
                        ((int64_t)w->dt * sub) / ctx.substeps);
        ls_workers_for_(w->workers, w->body_high, MIN_BODY_BLOCK, body_velocities, &st);
        for_colours(w, &st, constraints_warm);
        st.use_bias = true;
        for (uint32_t it = 0; it < w->def.velocity_iterations; it++) {
            for_colours(w, &st, constraints_solve);
        }
        ls_workers_for_(w->workers, w->body_high, MIN_BODY_BLOCK, body_positions, &st);
        st.use_bias = false;
        for (uint32_t it = 0; it < w->def.position_iterations; it++) {
            for_colours(w, &st, constraints_solve);
        }
    }
    for_colours(w, &st, constraints_restitution);
    for (uint32_t k = 0; k < nj; k++) {
        ls_joint_finish_(w, &w->joints[w->active_joints[k]], &ctx);
    }
}
