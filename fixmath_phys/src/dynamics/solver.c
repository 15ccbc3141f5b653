// SPDX-License-Identifier: MIT
// Sequential-impulse contact solver (SPEC.md §11): Coulomb friction on two
// tangents, restitution above a threshold, speculative contacts for points
// within the margin, and split-impulse position correction (pseudo velocities
// that move bodies but are discarded, so correction adds no energy).
// Contacts are visited in (a, b) order and points in manifold order.
#include "../world/world_internal.h"

#define MAX_CORRECTION 13107 // 0.2 m per tick of split-impulse correction

enum { ROW_NORMAL = 0, ROW_T1 = 1, ROW_T2 = 2 };

static bool moves(const ls_body *b)
{
    return b->type == LS_BODY_DYNAMIC && !b->asleep;
}

static bool contact_active(const ls_world *w, const ls_contact *c)
{
    return moves(&w->bodies[c->a]) || moves(&w->bodies[c->b]);
}

// The velocity pair a row acts on: real velocities or split-impulse pseudo velocities.
typedef struct velocities {
    ls_vec3 *va, *wa, *vb, *wb;
} velocities;

static velocities real_velocities(ls_body *a, ls_body *b)
{
    return (velocities){&a->v, &a->w, &b->v, &b->w};
}

static velocities pseudo_velocities(ls_body *a, ls_body *b)
{
    return (velocities){&a->vb, &a->wb, &b->vb, &b->wb};
}

// d . (vb + wb x rb - va - wa x ra), summed in Q32.32 and rounded once.
static ls_fx row_velocity(velocities v, const ls_solver_row *r, ls_vec3 d)
{
    int64_t s = ls_vec3_dot_q32(ls_vec3_sub(*v.vb, *v.va), d);
    s = ls_i64_add_sat(s, ls_vec3_dot_q32(*v.wb, r->ang_b));
    s = ls_i64_add_sat(s, -ls_vec3_dot_q32(*v.wa, r->ang_a));
    return ls_fx_from_q32(s);
}

// The angular half of an impulse: a loses lambda * I_a^-1 (ra x d), b gains.
static void row_apply_angular(const ls_contact_scratch *c, velocities v, const ls_solver_row *r,
                              ls_fx lambda)
{
    if (c->inv_mass_a) {
        *v.wa = ls_vec3_sub(*v.wa, ls_vec3_scale(r->iang_a, lambda));
    }
    if (c->inv_mass_b) {
        *v.wb = ls_vec3_add(*v.wb, ls_vec3_scale(r->iang_b, lambda));
    }
}

// Apply impulse lambda along d: a loses, b gains.
static void row_apply(const ls_contact_scratch *c, velocities v, const ls_solver_row *r, ls_vec3 d,
                      ls_fx lambda)
{
    if (lambda == 0) {
        return;
    }
    if (c->inv_mass_a) {
        *v.va = ls_vec3_sub(*v.va, ls_vec3_scale(d, ls_fx_mul(lambda, c->inv_mass_a)));
    }
    if (c->inv_mass_b) {
        *v.vb = ls_vec3_add(*v.vb, ls_vec3_scale(d, ls_fx_mul(lambda, c->inv_mass_b)));
    }
    row_apply_angular(c, v, r, lambda);
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

static void prepare_contact(ls_world *w, ls_contact_scratch *x)
{
    const ls_contact *c = x->c;
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    const ls_shape *sa = &w->shapes[c->shape_a], *sb = &w->shapes[c->shape_b];
    x->friction = ls_fx_sqrt(ls_fx_mul(sa->friction, sb->friction));
    x->restitution = ls_fx_max(sa->restitution, sb->restitution);
    x->inv_mass_a = moves(a) ? a->inv_mass : 0;
    x->inv_mass_b = moves(b) ? b->inv_mass : 0;
    tangent_basis(c->m.normal, &x->t1, &x->t2);
    const ls_vec3 dirs[3] = {c->m.normal, x->t1, x->t2};
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &x->s[i];
        ls_vec3 p = c->m.points[i].point;
        ls_vec3 ra = ls_vec3_sub(p, a->p), rb = ls_vec3_sub(p, b->p);
        for (int k = 0; k < 3; k++) {
            row_prepare(x, a, b, ra, rb, dirs[k], &s->row[k]);
        }
        s->vn0 = row_velocity(real_velocities(a, b), &s->row[ROW_NORMAL], c->m.normal);
        s->separation = ls_fx_neg(c->m.points[i].depth);
        s->max_impulse = 0;
        s->pseudo_impulse = 0;
    }
    if (c->m.count <= 2) {
        for (int k = 0; k < 3; k++) {
            roll_prepare(x, a, b, dirs[k], &x->roll[k]);
            x->roll_impulse[k] = 0;
        }
    }
}

static void warm_start(ls_world *w, const ls_contact_scratch *x)
{
    const ls_contact *c = x->c;
    velocities v = real_velocities(&w->bodies[c->a], &w->bodies[c->b]);
    for (int i = 0; i < c->m.count; i++) {
        const ls_solver_row *r = x->s[i].row;
        row_apply(x, v, &r[ROW_NORMAL], c->m.normal, c->normal_impulse[i]);
        row_apply(x, v, &r[ROW_T1], x->t1, c->tangent_impulse[i][0]);
        row_apply(x, v, &r[ROW_T2], x->t2, c->tangent_impulse[i][1]);
    }
}

// Friction point by point, each tangent clamped to the friction cone of the
// point's current normal impulse.
static void solve_friction(ls_contact_scratch *x, velocities v)
{
    ls_contact *c = x->c;
    const ls_vec3 t[2] = {x->t1, x->t2};
    for (int i = 0; i < c->m.count; i++) {
        ls_fx limit = ls_fx_mul(x->friction, c->normal_impulse[i]);
        for (int k = 0; k < 2; k++) {
            const ls_solver_row *r = &x->s[i].row[ROW_T1 + k];
            ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, row_velocity(v, r, t[k])));
            ls_fx old = c->tangent_impulse[i][k];
            ls_fx now = ls_fx_clamp(ls_fx_add(old, lambda), ls_fx_neg(limit), limit);
            c->tangent_impulse[i][k] = now;
            row_apply(x, v, r, t[k], now - old);
        }
    }
}

// Rolling and twisting resistance for contacts of one or two points (spheres,
// capsules, edges), which point friction cannot stop from spinning or rolling
// forever: a torque about n, t1, t2 of at most rolling_resistance times the
// normal force. Faces (3-4 points) resist both through their spread points.
static void solve_rolling(const ls_world *w, ls_contact_scratch *x, velocities v)
{
    const ls_contact *c = x->c;
    ls_fx normal = 0;
    for (int i = 0; i < c->m.count; i++) {
        normal = ls_fx_add(normal, c->normal_impulse[i]);
    }
    ls_fx limit = ls_fx_mul(w->def.rolling_resistance, normal);
    for (int k = 0; k < 3; k++) {
        const ls_solver_row *r = &x->roll[k];
        // A purely angular row: with no linear direction, row_velocity is (wb - wa) . d.
        ls_fx rel = row_velocity(v, r, ls_vec3_zero());
        ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, rel));
        ls_fx old = x->roll_impulse[k];
        ls_fx now = ls_fx_clamp(ls_fx_add(old, lambda), ls_fx_neg(limit), limit);
        x->roll_impulse[k] = now;
        row_apply_angular(x, v, r, now - old);
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
        num -= (int64_t)r[i] * dv[i]; // |r|, |dv| < 2^31: each product < 2^62, n <= 4
        den += (int64_t)dv[i] * dv[i];
    }
    // Velocities are bounded (|v| <= 512 m/s, raw 2^25), so each term stays
    // below 2^52 and the sums cannot overflow.
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
// Why the step length: the points' impulses are computed as if each were
// alone; for a face whose points barely couple through rotation (a tall thin
// box standing on its end) their sum overshoots up to 4x, the next sweep
// clamps them all to zero, and the body falls through the ground. Scaling the
// sweep by the residual-minimising step keeps the symmetry and removes the
// overshoot; for a cube face the full step is already exact (alpha = 1).
static void solve_normals(const ls_world *w, ls_contact_scratch *x, velocities v)
{
    ls_contact *c = x->c;
    ls_fx delta[LS_MANIFOLD_MAX], res[LS_MANIFOLD_MAX], dv[LS_MANIFOLD_MAX];
    ls_fx old[LS_MANIFOLD_MAX];
    bool any = false;
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &x->s[i];
        const ls_solver_row *r = &s->row[ROW_NORMAL];
        ls_fx vn = row_velocity(v, r, c->m.normal);
        // Speculative: a separated point only stops the approach that would close the gap this
        // tick.
        ls_fx bias = s->separation > 0 ? ls_fx_neg(ls_fx_div(s->separation, w->dt)) : 0;
        res[i] = ls_fx_sub(vn, bias);
        ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, res[i]));
        old[i] = c->normal_impulse[i];
        delta[i] = ls_fx_max(ls_fx_add(old[i], lambda), 0) - old[i];
        dv[i] = vn;
        any |= delta[i] != 0;
    }
    if (!any) {
        return;
    }
    for (int i = 0; i < c->m.count; i++) {
        row_apply(x, v, &x->s[i].row[ROW_NORMAL], c->m.normal, delta[i]);
    }
    ls_fx alpha = LS_FX_ONE;
    if (c->m.count > 1) {
        // Only points the sweep pushed count: a clamped separating point's
        // residual is not one the impulses could reduce.
        ls_fx rr[LS_MANIFOLD_MAX], dd[LS_MANIFOLD_MAX];
        int n = 0;
        for (int i = 0; i < c->m.count; i++) {
            if (delta[i] != 0) {
                ls_fx vn = row_velocity(v, &x->s[i].row[ROW_NORMAL], c->m.normal);
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
            row_apply(x, v, &x->s[i].row[ROW_NORMAL], c->m.normal, step - delta[i]);
        }
        ls_fx now = ls_fx_add(old[i], step);
        c->normal_impulse[i] = now;
        x->s[i].max_impulse = ls_fx_max(x->s[i].max_impulse, now);
    }
}

// After the velocity iterations: points that were approaching fast and did
// receive an impulse leave with -e times their approach speed.
static void solve_restitution(const ls_world *w, ls_contact_scratch *x, velocities v)
{
    ls_contact *c = x->c;
    if (x->restitution == 0) {
        return;
    }
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &x->s[i];
        if (s->vn0 > ls_fx_neg(w->def.restitution_threshold) || s->max_impulse == 0) {
            continue;
        }
        const ls_solver_row *r = &s->row[ROW_NORMAL];
        ls_fx vn = row_velocity(v, r, c->m.normal);
        ls_fx target = ls_fx_neg(ls_fx_mul(x->restitution, s->vn0));
        ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, ls_fx_sub(vn, target)));
        ls_fx old = c->normal_impulse[i];
        ls_fx now = ls_fx_max(ls_fx_add(old, lambda), 0);
        c->normal_impulse[i] = now;
        row_apply(x, v, r, c->m.normal, now - old);
    }
}

// Split impulse: pushes penetrating points apart through pseudo velocities.
static void solve_pseudo(const ls_world *w, ls_contact_scratch *x, velocities v)
{
    const ls_contact *c = x->c;
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &x->s[i];
        ls_fx excess = ls_fx_sub(c->m.points[i].depth, w->def.linear_slop);
        if (excess <= 0 && s->pseudo_impulse == 0) {
            continue;
        }
        ls_fx correction =
            ls_fx_min(ls_fx_mul(w->def.baumgarte, ls_fx_max(excess, 0)), MAX_CORRECTION);
        ls_fx bias = ls_fx_div(correction, w->dt);
        const ls_solver_row *r = &s->row[ROW_NORMAL];
        ls_fx vn = row_velocity(v, r, c->m.normal);
        ls_fx lambda = ls_fx_neg(ls_fx_mul(r->mass, ls_fx_sub(vn, bias)));
        ls_fx old = s->pseudo_impulse;
        ls_fx now = ls_fx_max(ls_fx_add(old, lambda), 0);
        s->pseudo_impulse = now;
        row_apply(x, v, r, c->m.normal, now - old);
    }
}

static velocities velocities_of(ls_world *w, const ls_contact_scratch *x)
{
    return real_velocities(&w->bodies[x->c->a], &w->bodies[x->c->b]);
}

void ls_world_solve_(ls_world *w)
{
    uint32_t n = 0; // active contacts, in contact order
    for (uint32_t i = 0; i < w->contact_count; i++) {
        if (contact_active(w, &w->contacts[i])) {
            ls_contact_scratch *x = &w->scratch[n++];
            x->c = &w->contacts[i];
            prepare_contact(w, x);
            warm_start(w, x);
        }
    }
    for (uint32_t it = 0; it < w->def.velocity_iterations; it++) {
        for (uint32_t i = 0; i < n; i++) {
            ls_contact_scratch *x = &w->scratch[i];
            velocities v = velocities_of(w, x);
            solve_friction(x, v);
            if (x->c->m.count <= 2 && w->def.rolling_resistance > 0) {
                solve_rolling(w, x, v);
            }
            solve_normals(w, x, v);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        solve_restitution(w, &w->scratch[i], velocities_of(w, &w->scratch[i]));
    }
    for (uint32_t it = 0; it < w->def.position_iterations; it++) {
        for (uint32_t i = 0; i < n; i++) {
            ls_contact_scratch *x = &w->scratch[i];
            solve_pseudo(w, x, pseudo_velocities(&w->bodies[x->c->a], &w->bodies[x->c->b]));
        }
    }
}
