// SPDX-License-Identifier: MIT
// Sequential-impulse contact solver (SPEC.md §11): Coulomb friction on two
// tangents, restitution above a threshold, speculative contacts for points
// within the margin, and split-impulse position correction (pseudo velocities
// that move bodies but are discarded, so correction adds no energy).
// Contacts are visited in (a, b) order and points in manifold order.
#include "world_internal.h"

#define MAX_CORRECTION 13107 // 0.2 m per tick of split-impulse correction

static bool contact_active(const ls_world *w, const ls_contact *c)
{
    const ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    bool a_moves = a->type == LS_BODY_DYNAMIC && !a->asleep;
    bool b_moves = b->type == LS_BODY_DYNAMIC && !b->asleep;
    return a_moves || b_moves;
}

// Inverse mass of a body as seen by the solver (0 unless awake and dynamic).
static ls_fx solver_inv_mass(const ls_body *b)
{
    return b->type == LS_BODY_DYNAMIC && !b->asleep ? b->inv_mass : 0;
}

// 1 / (mA^-1 + mB^-1 + (ra x d).IA(ra x d) + (rb x d).IB(rb x d)), 0 if infinite mass.
static ls_fx effective_mass(const ls_body *a, const ls_body *b, ls_vec3 ra, ls_vec3 rb, ls_vec3 d)
{
    ls_vec3 rna = ls_vec3_cross(ra, d), rnb = ls_vec3_cross(rb, d);
    ls_fx k = solver_inv_mass(a) + solver_inv_mass(b);
    if (solver_inv_mass(a)) {
        k = ls_fx_add(k, ls_vec3_dot(rna, ls_mat3_mul_vec(a->inv_inertia_world, rna)));
    }
    if (solver_inv_mass(b)) {
        k = ls_fx_add(k, ls_vec3_dot(rnb, ls_mat3_mul_vec(b->inv_inertia_world, rnb)));
    }
    return k > 0 ? ls_fx_div(LS_FX_ONE, k) : 0;
}

// Apply impulse p at ra/rb to a pair of (linear, angular) velocity sets: the
// real velocities or the split-impulse pseudo velocities.
static void apply_to(ls_body *a, ls_body *b, ls_vec3 *va, ls_vec3 *wa, ls_vec3 *vb, ls_vec3 *wb,
                     ls_vec3 ra, ls_vec3 rb, ls_vec3 p)
{
    if (solver_inv_mass(a)) {
        *va = ls_vec3_sub(*va, ls_vec3_scale(p, a->inv_mass));
        *wa = ls_vec3_sub(*wa, ls_mat3_mul_vec(a->inv_inertia_world, ls_vec3_cross(ra, p)));
    }
    if (solver_inv_mass(b)) {
        *vb = ls_vec3_add(*vb, ls_vec3_scale(p, b->inv_mass));
        *wb = ls_vec3_add(*wb, ls_mat3_mul_vec(b->inv_inertia_world, ls_vec3_cross(rb, p)));
    }
}

static void apply_impulse(ls_body *a, ls_body *b, ls_vec3 ra, ls_vec3 rb, ls_vec3 p)
{
    apply_to(a, b, &a->v, &a->w, &b->v, &b->w, ra, rb, p);
}

static void apply_pseudo_impulse(ls_body *a, ls_body *b, ls_vec3 ra, ls_vec3 rb, ls_vec3 p)
{
    apply_to(a, b, &a->vb, &a->wb, &b->vb, &b->wb, ra, rb, p);
}

// Velocity of b's point rb relative to a's point ra.
static ls_vec3 relative_velocity(const ls_body *a, const ls_body *b, ls_vec3 ra, ls_vec3 rb)
{
    ls_vec3 va = ls_vec3_add(a->v, ls_vec3_cross(a->w, ra));
    ls_vec3 vb = ls_vec3_add(b->v, ls_vec3_cross(b->w, rb));
    return ls_vec3_sub(vb, va);
}

static ls_vec3 relative_pseudo_velocity(const ls_body *a, const ls_body *b, ls_vec3 ra, ls_vec3 rb)
{
    ls_vec3 va = ls_vec3_add(a->vb, ls_vec3_cross(a->wb, ra));
    ls_vec3 vb = ls_vec3_add(b->vb, ls_vec3_cross(b->wb, rb));
    return ls_vec3_sub(vb, va);
}

// A deterministic orthonormal tangent basis for unit normal n.
static void tangent_basis(ls_vec3 n, ls_vec3 *t1, ls_vec3 *t2)
{
    ls_vec3 t = ls_fx_abs(n.x) >= 37837 /* 0.57735 */ ? ls_vec3_make(n.y, ls_fx_neg(n.x), 0)
                                                      : ls_vec3_make(0, n.z, ls_fx_neg(n.y));
    *t1 = ls_vec3_normalize(t, ls_vec3_make(LS_FX_ONE, 0, 0));
    *t2 = ls_vec3_cross(n, *t1);
}

static void prepare_contact(ls_world *w, ls_contact *c)
{
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    c->friction = ls_fx_sqrt(ls_fx_mul(a->friction, b->friction));
    c->restitution = ls_fx_max(a->restitution, b->restitution);
    tangent_basis(c->m.normal, &c->t1, &c->t2);
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &c->s[i];
        ls_vec3 p = c->m.points[i].point;
        s->ra = ls_vec3_sub(p, a->p);
        s->rb = ls_vec3_sub(p, b->p);
        s->normal_mass = effective_mass(a, b, s->ra, s->rb, c->m.normal);
        s->tangent_mass[0] = effective_mass(a, b, s->ra, s->rb, c->t1);
        s->tangent_mass[1] = effective_mass(a, b, s->ra, s->rb, c->t2);
        s->vn0 = ls_vec3_dot(relative_velocity(a, b, s->ra, s->rb), c->m.normal);
        s->separation = ls_fx_neg(c->m.points[i].depth);
        s->max_impulse = 0;
        s->pseudo_impulse = 0;
    }
}

static void warm_start(ls_world *w, ls_contact *c)
{
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    for (int i = 0; i < c->m.count; i++) {
        ls_vec3 p = ls_vec3_scale(c->m.normal, c->normal_impulse[i]);
        p = ls_vec3_mad(p, c->t1, c->tangent_impulse[i][0]);
        p = ls_vec3_mad(p, c->t2, c->tangent_impulse[i][1]);
        apply_impulse(a, b, c->s[i].ra, c->s[i].rb, p);
    }
}

static void solve_friction(ls_body *a, ls_body *b, ls_contact *c, int i)
{
    ls_contact_solve *s = &c->s[i];
    ls_fx limit = ls_fx_mul(c->friction, c->normal_impulse[i]);
    ls_vec3 t[2] = {c->t1, c->t2};
    for (int k = 0; k < 2; k++) {
        ls_fx vt = ls_vec3_dot(relative_velocity(a, b, s->ra, s->rb), t[k]);
        ls_fx lambda = ls_fx_neg(ls_fx_mul(s->tangent_mass[k], vt));
        ls_fx old = c->tangent_impulse[i][k];
        ls_fx now = ls_fx_clamp(ls_fx_add(old, lambda), ls_fx_neg(limit), limit);
        c->tangent_impulse[i][k] = now;
        apply_impulse(a, b, s->ra, s->rb, ls_vec3_scale(t[k], now - old));
    }
}

static void solve_normal_jacobi(ls_world *w, ls_body *a, ls_body *b, ls_contact *c)
{
    ls_fx delta[LS_MANIFOLD_MAX];
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &c->s[i];
        ls_fx vn = ls_vec3_dot(relative_velocity(a, b, s->ra, s->rb), c->m.normal);
        ls_fx bias = s->separation > 0 ? ls_fx_neg(ls_fx_div(s->separation, w->dt)) : 0;
        ls_fx lambda = ls_fx_neg(ls_fx_mul(s->normal_mass, ls_fx_sub(vn, bias)));
        ls_fx old = c->normal_impulse[i];
        ls_fx now = ls_fx_max(ls_fx_add(old, lambda), 0);
        c->normal_impulse[i] = now;
        s->max_impulse = ls_fx_max(s->max_impulse, now);
        delta[i] = now - old;
    }
    for (int i = 0; i < c->m.count; i++) {
        apply_impulse(a, b, c->s[i].ra, c->s[i].rb, ls_vec3_scale(c->m.normal, delta[i]));
    }
}

// After the velocity iterations: points that were approaching fast and did
// receive an impulse leave with -e times their approach speed.
static void solve_restitution(ls_world *w, ls_contact *c)
{
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    if (c->restitution == 0) {
        return;
    }
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &c->s[i];
        if (s->vn0 > ls_fx_neg(w->def.restitution_threshold) || s->max_impulse == 0) {
            continue;
        }
        ls_fx vn = ls_vec3_dot(relative_velocity(a, b, s->ra, s->rb), c->m.normal);
        ls_fx target = ls_fx_neg(ls_fx_mul(c->restitution, s->vn0));
        ls_fx lambda = ls_fx_neg(ls_fx_mul(s->normal_mass, ls_fx_sub(vn, target)));
        ls_fx old = c->normal_impulse[i];
        ls_fx now = ls_fx_max(ls_fx_add(old, lambda), 0);
        c->normal_impulse[i] = now;
        apply_impulse(a, b, s->ra, s->rb, ls_vec3_scale(c->m.normal, now - old));
    }
}

static void solve_pseudo(ls_world *w, ls_contact *c)
{
    ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_solve *s = &c->s[i];
        ls_fx excess = ls_fx_sub(c->m.points[i].depth, w->def.linear_slop);
        if (excess <= 0 && s->pseudo_impulse == 0) {
            continue;
        }
        ls_fx correction =
            ls_fx_min(ls_fx_mul(w->def.baumgarte, ls_fx_max(excess, 0)), MAX_CORRECTION);
        ls_fx bias = ls_fx_div(correction, w->dt);
        ls_fx vn = ls_vec3_dot(relative_pseudo_velocity(a, b, s->ra, s->rb), c->m.normal);
        ls_fx lambda = ls_fx_neg(ls_fx_mul(s->normal_mass, ls_fx_sub(vn, bias)));
        ls_fx old = s->pseudo_impulse;
        ls_fx now = ls_fx_max(ls_fx_add(old, lambda), 0);
        s->pseudo_impulse = now;
        apply_pseudo_impulse(a, b, s->ra, s->rb, ls_vec3_scale(c->m.normal, now - old));
    }
}

void ls_world_solve_(ls_world *w)
{
    for (uint32_t c = 0; c < w->contact_count; c++) {
        if (contact_active(w, &w->contacts[c])) {
            prepare_contact(w, &w->contacts[c]);
            warm_start(w, &w->contacts[c]);
        }
    }
    for (uint32_t it = 0; it < w->def.velocity_iterations; it++) {
        for (uint32_t ci = 0; ci < w->contact_count; ci++) {
            ls_contact *c = &w->contacts[ci];
            if (!contact_active(w, c)) {
                continue;
            }
            ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
            for (int i = 0; i < c->m.count; i++) {
                solve_friction(a, b, c, i);
            }
            solve_normal_jacobi(w, a, b, c);
        }
    }
    for (uint32_t c = 0; c < w->contact_count; c++) {
        if (contact_active(w, &w->contacts[c])) {
            solve_restitution(w, &w->contacts[c]);
        }
    }
    for (uint32_t it = 0; it < w->def.position_iterations; it++) {
        for (uint32_t c = 0; c < w->contact_count; c++) {
            if (contact_active(w, &w->contacts[c])) {
                solve_pseudo(w, &w->contacts[c]);
            }
        }
    }
}
