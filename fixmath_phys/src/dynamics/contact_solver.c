// SPDX-License-Identifier: MIT
// Contact constraints (contact_solver.h): prepare, store, and the scalar
// reference of the sweeps. The formulas below, in this order and with this
// rounding, are the definition (SPEC.md §11.2, §11.4); the vector paths
// compute the same integers.
//
// Rows of a manifold (Box3D's formulation). Normals: one soft row per point,
// Gauss-Seidel in a rotating order (solve_normals), with the current
// separation of the point computed from the bodies' motion since the tick
// began. Friction: one 2D
// row at the manifold's centre (the mean of its points), its impulse held
// inside the circle mu * (sum of the points' normal impulses). Twist: one
// row about the normal at the centre, held within sum(mu * lever_i *
// lambda_i) (lever_i: the point's distance from the centre). Rolling (one
// or two points, when the world's rolling_resistance > 0): a 3-row angular
// block held inside rolling_resistance * sum(lambda_i). Friction, twist and
// rolling are solved in the relax pass only (without position bias), after
// the normals, as Box3D does: the solve pass pushes bodies apart, the relax
// pass settles what they do along the surface.
//
// Separation arms. A point's current separation follows, on each body, the
// point's core point: the point itself, or for a round shape (sphere,
// capsule) the closest point of its core (centre, segment), which turns with
// the body while the radius along the normal does not. Why: carrying the
// whole point lifts a rolling ball's touching point off the ground within a
// tick; carrying none of the turn (the rule before) let a capsule seesawing
// on the ground sink and raise its ends unseen within a tick, and the soft
// push-out fed the rocking, so it never slept. The Jacobians keep the lever
// arms to the touching point itself (ra, rb).
#include "contact_solver.h"

#include "../collision/shape_kind.h"
#include "../math/round_div.h"

#include <stddef.h>
#include <string.h>

// ---- Prepare (once per tick, per lane) ------------------------------------

// m * v for a symmetric Q12.20 matrix (xx, xy, xz, yy, yz, zz) and a Q16.16
// vector: Q12.20, each component one exact sum rounded once.
LS_LANE_INLINE void sym_mul_q20(const int32_t *m, const int32_t *v, int32_t *out, uint32_t *ovf)
{
    out[0] = ls_nar(ls_rnd(ls_dot3(m[0], m[1], m[2], v[0], v[1], v[2]), 16), ovf);
    out[1] = ls_nar(ls_rnd(ls_dot3(m[1], m[3], m[4], v[0], v[1], v[2]), 16), ovf);
    out[2] = ls_nar(ls_rnd(ls_dot3(m[2], m[4], m[5], v[0], v[1], v[2]), 16), ovf);
}

// a x b of Q16.16 vectors, each component exact and rounded once.
LS_LANE_INLINE void cross16(const int32_t *a, const int32_t *b, int32_t *out, uint32_t *ovf)
{
    out[0] = ls_nar(ls_rnd(ls_mul(a[1], b[2]) - ls_mul(a[2], b[1]), 16), ovf);
    out[1] = ls_nar(ls_rnd(ls_mul(a[2], b[0]) - ls_mul(a[0], b[2]), 16), ovf);
    out[2] = ls_nar(ls_rnd(ls_mul(a[0], b[1]) - ls_mul(a[1], b[0]), 16), ovf);
}

// 1 / k for k in Q28.36: Q16.16, rounded to nearest; 0 when k <= 0.
LS_LANE_INLINE int32_t inverse_q36(int64_t k)
{
    if (k <= 0) {
        return 0;
    }
    int64_t m = (((int64_t)1 << 52) + k / 2) / k;
    return m >= LS_LANE_LIMIT ? (int32_t)(LS_LANE_LIMIT - 1) : (int32_t)m;
}

// Inverse of a symmetric positive-definite 3x3 (or 2x2 when n = 2) K given in
// Q28.36 as xx, xy, xz, yy, yz, zz: Q16.16 in the same order. K is scaled by
// a power of two 2^e to a Q16.16 matrix near 1, inverted by
// ls_mat3_inverse_spd (SPEC.md §4), and the inverse multiplied by 2^e.
// Returns false (out zero) when K is not positive definite.
static bool inverse_sym_q36(const int64_t *k, int n, int32_t *out)
{
    memset(out, 0, 6 * sizeof *out);
    int64_t big = 0;
    for (int i = 0; i < 6; i++) {
        int64_t a = k[i] < 0 ? -k[i] : k[i];
        big = a > big ? a : big;
    }
    if (big == 0) {
        return false;
    }
    // raw = k / 2^sh has its largest entry in [2^15, 2^16): K * 2^e as Q16.16
    // near 1, e = 20 - sh, so its inverse is near 1 too and keeps 16 bits.
    int sh = (64 - __builtin_clzll((uint64_t)big)) - 16;
    int64_t raw[6];
    for (int i = 0; i < 6; i++) {
        raw[i] = sh > 0 ? ls_rnd(k[i], sh) : k[i] * ((int64_t)1 << -sh);
    }
    if (n == 2) {
        raw[2] = raw[4] = 0;
        raw[5] = (int64_t)1 << 15; // a decoupled third row
    }
    ls_mat3 m = {{ls_vec3_make((ls_fx)raw[0], (ls_fx)raw[1], (ls_fx)raw[2]),
                  ls_vec3_make((ls_fx)raw[1], (ls_fx)raw[3], (ls_fx)raw[4]),
                  ls_vec3_make((ls_fx)raw[2], (ls_fx)raw[4], (ls_fx)raw[5])}};
    ls_mat3 inv;
    if (!ls_mat3_inverse_spd(m, &inv)) {
        return false;
    }
    int e = 20 - sh;
    const ls_fx v[6] = {inv.row[0].x, inv.row[0].y, inv.row[0].z,
                        inv.row[1].y, inv.row[1].z, inv.row[2].z};
    for (int i = 0; i < 6; i++) {
        int64_t x = e >= 0 ? (int64_t)v[i] * ((int64_t)1 << (e < 32 ? e : 32))
                           : ls_rnd(v[i], -e < 62 ? -e : 62);
        x = x >= LS_LANE_LIMIT ? LS_LANE_LIMIT - 1 : x < -LS_LANE_LIMIT ? -LS_LANE_LIMIT : x;
        out[i] = (int32_t)x;
    }
    return true;
}

// a . (m b) of Q16.16 vectors through a symmetric Q12.20 matrix: Q28.36 exact
// (products of a Q16.16 and the Q12.20 m b).
LS_LANE_INLINE int64_t quad_q36(const int32_t *a, const int32_t *mb)
{
    return ls_dot3(a[0], a[1], a[2], mb[0], mb[1], mb[2]);
}

// Clear lane `lane` of the points from `from` on (and of the rolling block):
// the prepare writes every other field of a live lane.
static void clear_points(ls_contact_lanes *g, ls_rolling_lanes *roll, uint32_t lane, int from)
{
    // Every field is an array of LS_LANES 32-bit words, so lane k of a run of
    // fields is every LS_LANES-th word from word k.
    _Static_assert(sizeof(ls_contact_point_lanes) % (LS_LANES * sizeof(int32_t)) == 0, "lanes");
    for (int i = from; i < LS_MANIFOLD_MAX; i++) {
        int32_t *base = (int32_t *)&g->p[i];
        for (size_t k = lane; k < sizeof(ls_contact_point_lanes) / sizeof(int32_t); k += LS_LANES) {
            base[k] = 0;
        }
    }
    if (roll) {
        int32_t *r = (int32_t *)roll;
        _Static_assert(sizeof(ls_rolling_lanes) % (LS_LANES * sizeof(int32_t)) == 0, "lanes");
        for (size_t i = lane; i < sizeof(ls_rolling_lanes) / sizeof(int32_t); i += LS_LANES) {
            r[i] = 0;
        }
    }
}

// Clear lane `lane`: every field zero, the bodies the identity state, and
// the lane of the rolling block unless the caller cleared that (roll_cleared).
static void clear_lane(ls_contact_lanes *g, ls_rolling_lanes *roll, bool roll_cleared,
                       uint32_t lane)
{
    int32_t *base = (int32_t *)g;
    const size_t first = offsetof(ls_contact_lanes, a) / sizeof(int32_t);
    _Static_assert(offsetof(ls_contact_lanes, a) % (LS_LANES * sizeof(int32_t)) == 0, "lanes");
    _Static_assert(sizeof(ls_contact_lanes) % (LS_LANES * sizeof(int32_t)) == 0, "lanes");
    for (size_t i = first + lane; i < sizeof(ls_contact_lanes) / sizeof(int32_t); i += LS_LANES) {
        base[i] = 0;
    }
    if (!roll_cleared) {
        clear_points(g, roll, lane, LS_MANIFOLD_MAX); // the rolling block's lane
    }
}

#define GET3(arr, l)                                                                               \
    {                                                                                              \
        (arr)[0][l], (arr)[1][l], (arr)[2][l]                                                      \
    }
#define SET3(arr, l, v)                                                                            \
    do {                                                                                           \
        (arr)[0][l] = (v)[0];                                                                      \
        (arr)[1][l] = (v)[1];                                                                      \
        (arr)[2][l] = (v)[2];                                                                      \
    } while (0)

// The prepare of a group runs in three stages per lane (SPEC.md §11.4):
// `begin` reads the contact and its bodies and copies what the sweeps keep
// as it is; `math` computes the Jacobians, inverse-inertia products, the
// normal speeds and the 64-bit K entries (the part a vector path does eight
// lanes at a time, contact_avx2.c); `end` takes the decisions and the
// divisions (impact, masses, limits, the rolling block).

void ls_contact_prep_begin_(const ls_world *w, const ls_step_ctx *ctx, ls_contact_lanes *g,
                            ls_rolling_lanes *roll, ls_contact_prep *t, uint32_t lane, uint32_t ci)
{
    int count = ci == UINT32_MAX ? 0 : w->contacts[ci].m.count;
    if (!t->cleared) {
        t->ovf[lane] = 0;
        t->mass_scale[lane] = 0;
        t->kmass[lane] = 0;
        for (int k = 0; k < 3; k++) {
            t->dv[k][lane] = t->wa[k][lane] = t->wb[k][lane] = 0;
            t->ca[k][lane] = t->cb[k][lane] = 0;
        }
        for (int k = 0; k < 6; k++) {
            t->ia[k][lane] = t->ib[k][lane] = 0;
        }
        for (int i = count; i < LS_MANIFOLD_MAX; i++) {
            t->depth[i][lane] = 0;
            for (int k = 0; k < 3; k++) {
                t->ra[i][k][lane] = t->rb[i][k][lane] = 0;
            }
        }
        if (ci == UINT32_MAX) {
            clear_lane(g, roll, t->points_cleared != 0, lane);
            return;
        }
        if (!t->points_cleared) {
            clear_points(g, roll, lane, count);
        }
    } else if (ci == UINT32_MAX) {
        return;
    }
    const ls_solver_scratch *sv = &w->solver;
    const ls_contact *c = &w->contacts[ci];
    uint32_t ia = sv->body_state[c->a], ib = sv->body_state[c->b];
    // Only a dynamic state carries masses (kinematic ones read as immovable).
    bool moves_a = ia != 0 && (sv->states[ia].flags & LS_STATE_WRITABLE);
    bool moves_b = ib != 0 && (sv->states[ib].flags & LS_STATE_WRITABLE);
    const ls_solver_mass *ma = &sv->masses[ia], *mb = &sv->masses[ib];
    const ls_solver_mass *ia_m = &sv->masses[moves_a ? ia : 0];
    const ls_solver_mass *ib_m = &sv->masses[moves_b ? ib : 0];
    const ls_solver_body *xa = &sv->states[ia], *xb = &sv->states[ib];
    // A body without a state (static) has arms from the origin: they cancel in
    // every row (its velocity is zero and its rotation the identity), so any
    // origin gives the same separations.
    const ls_vec3 pa = ma->p, pb = mb->p;
    g->a[lane] = ia;
    g->b[lane] = ib;
    g->count[lane] = (uint32_t)count;
    g->contact[lane] = ci;
    ls_vec3 t1 = c->tangent[0], t2 = c->tangent[1];
    ls_vec3 nv = c->m.normal;
    const int32_t n[3] = {nv.x, nv.y, nv.z};
    const int32_t tt1[3] = {t1.x, t1.y, t1.z}, tt2[3] = {t2.x, t2.y, t2.z};
    SET3(g->n, lane, n);
    SET3(g->t1, lane, tt1);
    SET3(g->t2, lane, tt2);
    g->inv_mass_a[lane] = ia_m->inv_mass;
    g->inv_mass_b[lane] = ib_m->inv_mass;
    for (int k = 0; k < 6; k++) {
        t->ia[k][lane] = ia_m->inv_inertia[k];
        t->ib[k][lane] = ib_m->inv_inertia[k];
    }
    g->friction[lane] = c->friction;
    g->restitution[lane] = c->restitution;
    bool both = moves_a && moves_b;
    const ls_softness *soft = both ? &ctx->contact : &ctx->contact_static;
    g->bias_rate[lane] = soft->bias_rate;
    g->impulse_scale[lane] = soft->impulse_scale;
    t->mass_scale[lane] = soft->mass_scale;
    // m^-1 a + m^-1 b in Q28.36 (the masses are Q10.22).
    t->kmass[lane] =
        ((int64_t)ia_m->inv_mass + ib_m->inv_mass) * ((int64_t)1 << (36 - LS_INV_MASS_BITS));
    // Points, and the friction centre (their mean).
    int64_t centre[3] = {0, 0, 0};
    bool round_a = ls_shape_kind_of(w->shapes[c->shape_a].geom.kind)->round;
    bool round_b = ls_shape_kind_of(w->shapes[c->shape_b].geom.kind)->round;
    for (int i = 0; i < count; i++) {
        ls_contact_point_lanes *p = &g->p[i];
        ls_vec3 pt = c->m.points[i].point;
        ls_vec3 rav = ls_vec3_sub(pt, pa), rbv = ls_vec3_sub(pt, pb);
        const int32_t ra[3] = {rav.x, rav.y, rav.z}, rb[3] = {rbv.x, rbv.y, rbv.z};
        SET3(t->ra[i], lane, ra);
        SET3(t->rb[i], lane, rb);
        // Separation arms: from each centre of mass to the point's core point
        // (the point itself unless the shape is round), which turns with the
        // body; the rest of a round shape's arm, its radius along the normal,
        // does not (a rolling ball keeps touching with its bottom).
        ls_vec3 sav = round_a ? ls_vec3_sub(ls_contact_core_(w, c->shape_a, pt), pa) : rav;
        ls_vec3 sbv = round_b ? ls_vec3_sub(ls_contact_core_(w, c->shape_b, pt), pb) : rbv;
        const int32_t sa[3] = {sav.x, sav.y, sav.z}, sb[3] = {sbv.x, sbv.y, sbv.z};
        SET3(p->sa, lane, sa);
        SET3(p->sb, lane, sb);
        t->depth[i][lane] = c->m.points[i].depth;
        centre[0] += pt.x;
        centre[1] += pt.y;
        centre[2] += pt.z;
        p->impulse[lane] = c->normal_impulse[i];
        p->max_impulse[lane] = 0;
        p->twist_lever[lane] = ls_nar(ls_rnd(ls_mul(c->lever[i], c->friction), 16), &t->ovf[lane]);
    }
    const int32_t dv[3] = {xb->v.x - xa->v.x, xb->v.y - xa->v.y, xb->v.z - xa->v.z};
    const int32_t wa[3] = {xa->w.x, xa->w.y, xa->w.z}, wb[3] = {xb->w.x, xb->w.y, xb->w.z};
    SET3(t->dv, lane, dv);
    SET3(t->wa, lane, wa);
    SET3(t->wb, lane, wb);
    // Friction centre: the mean of the points, rounded half away from zero.
    int32_t cw[3];
    for (int k = 0; k < 3; k++) {
        int64_t sum = centre[k];
        cw[k] = (int32_t)ls_round_div_small(sum, count);
    }
    const int32_t ca[3] = {cw[0] - pa.x, cw[1] - pa.y, cw[2] - pa.z};
    const int32_t cb[3] = {cw[0] - pb.x, cw[1] - pb.y, cw[2] - pb.z};
    SET3(t->ca, lane, ca);
    SET3(t->cb, lane, cb);
    ls_vec3 fw = c->friction_impulse;
    g->f1[lane] = ls_vec3_dot(fw, t1);
    g->f2[lane] = ls_vec3_dot(fw, t2);
    g->twist[lane] = c->twist_impulse;
}

void ls_contact_prep_math_(ls_contact_lanes *g, ls_contact_prep *t, uint32_t lane)
{
    uint32_t *ovf = &t->ovf[lane];
    const int32_t n[3] = GET3(g->n, lane);
    const int32_t ia[6] = {t->ia[0][lane], t->ia[1][lane], t->ia[2][lane],
                           t->ia[3][lane], t->ia[4][lane], t->ia[5][lane]};
    const int32_t ib[6] = {t->ib[0][lane], t->ib[1][lane], t->ib[2][lane],
                           t->ib[3][lane], t->ib[4][lane], t->ib[5][lane]};
    for (int k = 0; k < 3; k++) {
        g->nm_a[k][lane] = ls_nar(ls_rnd(ls_mul(n[k], g->inv_mass_a[lane]), 16), ovf);
        g->nm_b[k][lane] = ls_nar(ls_rnd(ls_mul(n[k], g->inv_mass_b[lane]), 16), ovf);
    }
    const int32_t dv[3] = GET3(t->dv, lane), wa[3] = GET3(t->wa, lane), wb[3] = GET3(t->wb, lane);
    int count = (int)g->count[lane];
    for (int i = 0; i < count; i++) {
        ls_contact_point_lanes *p = &g->p[i];
        const int32_t sa[3] = GET3(p->sa, lane), sb[3] = GET3(p->sb, lane);
        const int32_t ra[3] = GET3(t->ra[i], lane), rb[3] = GET3(t->rb[i], lane);
        int64_t rel = ls_dot3(sb[0] - sa[0], sb[1] - sa[1], sb[2] - sa[2], n[0], n[1], n[2]);
        p->base[lane] = ls_nar(-(int64_t)t->depth[i][lane] - ls_rnd(rel, 16), ovf);
        int32_t anga[3], angb[3], ianga[3], iangb[3];
        cross16(ra, n, anga, ovf);
        cross16(rb, n, angb, ovf);
        sym_mul_q20(ia, anga, ianga, ovf);
        sym_mul_q20(ib, angb, iangb, ovf);
        SET3(p->ang_a, lane, anga);
        SET3(p->ang_b, lane, angb);
        SET3(p->iang_a, lane, ianga);
        SET3(p->iang_b, lane, iangb);
        int64_t vn = ls_dot3(n[0], n[1], n[2], dv[0], dv[1], dv[2]) +
                     ls_dot3(wb[0], wb[1], wb[2], angb[0], angb[1], angb[2]) -
                     ls_dot3(wa[0], wa[1], wa[2], anga[0], anga[1], anga[2]);
        p->vn0[lane] = ls_nar(ls_rnd(vn, 16), ovf);
        t->kii[i][lane] = t->kmass[lane] + quad_q36(anga, ianga) + quad_q36(angb, iangb);
    }
    const int32_t ca[3] = GET3(t->ca, lane), cb[3] = GET3(t->cb, lane);
    const int32_t tt1[3] = GET3(g->t1, lane), tt2[3] = GET3(g->t2, lane);
    int32_t c1a[3], c2a[3], c1b[3], c2b[3], i1a[3], i2a[3], i1b[3], i2b[3];
    cross16(ca, tt1, c1a, ovf);
    cross16(ca, tt2, c2a, ovf);
    cross16(cb, tt1, c1b, ovf);
    cross16(cb, tt2, c2b, ovf);
    sym_mul_q20(ia, c1a, i1a, ovf);
    sym_mul_q20(ia, c2a, i2a, ovf);
    sym_mul_q20(ib, c1b, i1b, ovf);
    sym_mul_q20(ib, c2b, i2b, ovf);
    SET3(g->ct1_a, lane, c1a);
    SET3(g->ct2_a, lane, c2a);
    SET3(g->ct1_b, lane, c1b);
    SET3(g->ct2_b, lane, c2b);
    SET3(g->ict1_a, lane, i1a);
    SET3(g->ict2_a, lane, i2a);
    SET3(g->ict1_b, lane, i1b);
    SET3(g->ict2_b, lane, i2b);
    t->kt[0][lane] = t->kmass[lane] + quad_q36(c1a, i1a) + quad_q36(c1b, i1b);
    t->kt[1][lane] = t->kmass[lane] + quad_q36(c2a, i2a) + quad_q36(c2b, i2b);
    int32_t ina[3], inb[3];
    sym_mul_q20(ia, n, ina, ovf);
    sym_mul_q20(ib, n, inb, ovf);
    SET3(g->in_a, lane, ina);
    SET3(g->in_b, lane, inb);
    t->ktw[lane] = quad_q36(n, ina) + quad_q36(n, inb);
}

uint32_t ls_contact_prep_end_(const ls_world *w, ls_contact_lanes *g, ls_rolling_lanes *roll,
                              ls_contact_prep *t, uint32_t lane)
{
    uint32_t *ovf = &t->ovf[lane];
    int count = (int)g->count[lane];
    if (count == 0) {
        return 0;
    }
    // An impact: a point approaches faster than the restitution threshold.
    // Its normals are solved Jacobi-style (every point from the same
    // velocities, then all applied): Gauss-Seidel would give the first point
    // solved most of the stop and spin a box landing flat (measured: a box
    // hitting the ground at 500 m/s flat left at 14 m/s sideways, turning).
    // Resting and sliding contacts stay Gauss-Seidel (slot_at: Jacobi's
    // over-relaxed rotation modes keep columns of boxes creeping).
    bool impact = false;
    for (int i = 0; i < count; i++) {
        impact = impact || g->p[i].vn0[lane] < -w->def.restitution_threshold;
    }
    g->jacobi[lane] = impact ? UINT32_MAX : 0;
    // Normal masses. Gauss-Seidel: 1 / K_ii. Jacobi: a push of all points at
    // once moves point i by its row sum S_i = sum_j K_ij. Where the points
    // barely couple through rotation (a tall thin box on its end) S_i is up
    // to n K_ii and 1/K_ii overshoots n times; 1/S_i makes the uniform push
    // exact but under-relaxes the other modes (a tilted box corrects its
    // penetration slowly). The mean, 1/((K_ii + max(K_ii, S_i)) / 2),
    // overshoots the uniform push at most (n + 1) / 2 times.
    for (int i = 0; i < count; i++) {
        int64_t kii = t->kii[i][lane];
        int64_t sum = 0;
        const int32_t anga[3] = GET3(g->p[i].ang_a, lane), angb[3] = GET3(g->p[i].ang_b, lane);
        for (int jj = 0; jj < count && impact; jj++) {
            const int32_t ija[3] = GET3(g->p[jj].iang_a, lane);
            const int32_t ijb[3] = GET3(g->p[jj].iang_b, lane);
            sum += t->kmass[lane] + quad_q36(anga, ija) + quad_q36(angb, ijb);
        }
        int32_t mass = inverse_q36(impact ? (kii + (sum > kii ? sum : kii)) / 2 : kii);
        ls_contact_point_lanes *p = &g->p[i];
        p->mass[lane] = mass;
        p->soft_mass[lane] = ls_nar(ls_rnd(ls_mul(mass, t->mass_scale[lane]), 16), ovf);
    }
    g->tmass[0][lane] = inverse_q36(t->kt[0][lane]);
    g->tmass[1][lane] = 0;
    g->tmass[2][lane] = inverse_q36(t->kt[1][lane]);
    g->twist_mass[lane] = inverse_q36(t->ktw[lane]);
    if (roll && count <= 2 && w->def.rolling_resistance > 0) {
        const ls_contact *c = &w->contacts[g->contact[lane]];
        roll->limit[lane] = w->def.rolling_resistance;
        int64_t ks[6];
        for (int i = 0; i < 6; i++) {
            ks[i] = ((int64_t)t->ia[i][lane] + t->ib[i][lane]) * ((int64_t)1 << 16);
            roll->ia[i][lane] = t->ia[i][lane];
            roll->ib[i][lane] = t->ib[i][lane];
        }
        int32_t rm[6];
        inverse_sym_q36(ks, 3, rm);
        for (int i = 0; i < 6; i++) {
            roll->mass[i][lane] = rm[i];
        }
        roll->r[0][lane] = c->rolling_impulse.x;
        roll->r[1][lane] = c->rolling_impulse.y;
        roll->r[2][lane] = c->rolling_impulse.z;
    }
    return *ovf;
}

uint32_t ls_contact_prep_math_scalar_(ls_contact_lanes *g, ls_contact_prep *t)
{
    uint32_t mask = 0;
    for (uint32_t l = 0; l < LS_LANES; l++) {
        ls_contact_prep_math_(g, t, l);
        mask |= (uint32_t)(t->ovf[l] != 0) << l;
    }
    return mask;
}

uint32_t ls_contact_prepare_scalar_(const ls_world *w, const ls_step_ctx *ctx, ls_contact_lanes *g,
                                    ls_rolling_lanes *roll, ls_contact_prep *t)
{
    uint32_t mask = 0;
    for (uint32_t l = 0; l < LS_LANES; l++) {
        ls_contact_prep_begin_(w, ctx, g, roll, t, l, g->contact[l]);
        ls_contact_prep_math_(g, t, l);
        mask |= (uint32_t)(ls_contact_prep_end_(w, g, roll, t, l) != 0) << l;
    }
    return mask;
}

void ls_contact_store_(ls_world *w, const ls_contact_lanes *g, const ls_rolling_lanes *roll)
{
    for (uint32_t l = 0; l < LS_LANES; l++) {
        if (g->count[l] == 0) {
            continue;
        }
        ls_contact *c = &w->contacts[g->contact[l]];
        for (uint32_t i = 0; i < g->count[l]; i++) {
            c->normal_impulse[i] = g->p[i].impulse[l];
        }
        int64_t f[3];
        for (int k = 0; k < 3; k++) {
            f[k] = ls_mul(g->f1[l], g->t1[k][l]) + ls_mul(g->f2[l], g->t2[k][l]);
        }
        c->friction_impulse =
            ls_vec3_make(ls_fx_from_q32(f[0]), ls_fx_from_q32(f[1]), ls_fx_from_q32(f[2]));
        c->twist_impulse = g->twist[l];
        c->rolling_impulse =
            roll ? ls_vec3_make(roll->r[0][l], roll->r[1][l], roll->r[2][l]) : ls_vec3_zero();
    }
}

// ---- Scalar sweeps ----------------------------------------------------------

// A body as a lane sees it.
typedef struct lane_body {
    int32_t v[3], w[3], dp[3], dq[4];
} lane_body;

static void load_body(const ls_solver_body *s, lane_body *b)
{
    b->v[0] = s->v.x;
    b->v[1] = s->v.y;
    b->v[2] = s->v.z;
    b->w[0] = s->w.x;
    b->w[1] = s->w.y;
    b->w[2] = s->w.z;
    b->dp[0] = s->dp.x;
    b->dp[1] = s->dp.y;
    b->dp[2] = s->dp.z;
    b->dq[0] = s->dq.x;
    b->dq[1] = s->dq.y;
    b->dq[2] = s->dq.z;
    b->dq[3] = s->dq.w;
}

static void save_body(ls_solver_body *s, const lane_body *b)
{
    if (!(s->flags & LS_STATE_WRITABLE)) {
        return;
    }
    s->v = ls_vec3_make(b->v[0], b->v[1], b->v[2]);
    s->w = ls_vec3_make(b->w[0], b->w[1], b->w[2]);
}

// v -= rnd(d * m[k], s) per component (sign -1) or += (sign +1), narrowed.
static void apply3(int32_t *v, ls_lanes *m, uint32_t l, int32_t d, int s, int sign, uint32_t *ovf)
{
    for (int k = 0; k < 3; k++) {
        int64_t x = ls_rnd(ls_mul(d, m[k][l]), s);
        v[k] = ls_nar(sign > 0 ? (int64_t)v[k] + x : (int64_t)v[k] - x, ovf);
    }
}

// v +- rnd(d1 * m1[k] + d2 * m2[k], s): a two-impulse update, one rounding.
static void apply3x2(int32_t *v, ls_lanes *m1, ls_lanes *m2, uint32_t l, int32_t d1, int32_t d2,
                     int s, int sign, uint32_t *ovf)
{
    for (int k = 0; k < 3; k++) {
        int64_t x = ls_rnd(ls_mul(d1, m1[k][l]) + ls_mul(d2, m2[k][l]), s);
        v[k] = ls_nar(sign > 0 ? (int64_t)v[k] + x : (int64_t)v[k] - x, ovf);
    }
}

// v - conj(dq) rotation of n: the normal in the frame that turned with the
// body, n' = conj(dq) n dq, so n . (dR r) = n' . r. Written as v' = v + s t +
// u x t with u = -vec(dq), s = dq.w, t = 2 (u x v), each product exact and
// every component rounded once.
static void rotate_conj(const int32_t *dq, const int32_t *v, int32_t *out, uint32_t *ovf)
{
    const int32_t u[3] = {-dq[0], -dq[1], -dq[2]};
    int32_t t[3];
    cross16(u, v, t, ovf);
    for (int k = 0; k < 3; k++) {
        t[k] = ls_nar((int64_t)t[k] * 2, ovf);
    }
    int64_t c[3] = {ls_mul(u[1], t[2]) - ls_mul(u[2], t[1]),
                    ls_mul(u[2], t[0]) - ls_mul(u[0], t[2]),
                    ls_mul(u[0], t[1]) - ls_mul(u[1], t[0])};
    for (int k = 0; k < 3; k++) {
        out[k] = ls_nar((int64_t)v[k] + ls_rnd(ls_mul(dq[3], t[k]) + c[k], 16), ovf);
    }
}

// Normal velocity of point p: n . (vb - va) + wb . ang_b - wa . ang_a.
static int32_t normal_speed(const ls_contact_lanes *g, const ls_contact_point_lanes *p, uint32_t l,
                            const lane_body *a, const lane_body *b, uint32_t *ovf)
{
    int64_t s = ls_dot3(g->n[0][l], g->n[1][l], g->n[2][l], b->v[0] - a->v[0], b->v[1] - a->v[1],
                        b->v[2] - a->v[2]) +
                ls_dot3(b->w[0], b->w[1], b->w[2], p->ang_b[0][l], p->ang_b[1][l], p->ang_b[2][l]) -
                ls_dot3(a->w[0], a->w[1], a->w[2], p->ang_a[0][l], p->ang_a[1][l], p->ang_a[2][l]);
    return ls_nar(ls_rnd(s, 16), ovf);
}

// Apply normal impulse increment d of point p to both bodies.
static void apply_normal(ls_contact_lanes *g, ls_contact_point_lanes *p, uint32_t l, lane_body *a,
                         lane_body *b, int32_t d, uint32_t *ovf)
{
    apply3(a->v, g->nm_a, l, d, LS_INV_MASS_BITS, -1, ovf);
    apply3(a->w, p->iang_a, l, d, 20, -1, ovf);
    apply3(b->v, g->nm_b, l, d, LS_INV_MASS_BITS, +1, ovf);
    apply3(b->w, p->iang_b, l, d, 20, +1, ovf);
}

// Apply friction increments (d1, d2) at the centre.
static void apply_friction(ls_contact_lanes *g, uint32_t l, lane_body *a, lane_body *b, int32_t d1,
                           int32_t d2, uint32_t *ovf)
{
    int32_t p[3];
    for (int k = 0; k < 3; k++) {
        p[k] = ls_nar(ls_rnd(ls_mul(d1, g->t1[k][l]) + ls_mul(d2, g->t2[k][l]), 16), ovf);
    }
    for (int k = 0; k < 3; k++) {
        a->v[k] = ls_nar(
            (int64_t)a->v[k] - ls_rnd(ls_mul(p[k], g->inv_mass_a[l]), LS_INV_MASS_BITS), ovf);
        b->v[k] = ls_nar(
            (int64_t)b->v[k] + ls_rnd(ls_mul(p[k], g->inv_mass_b[l]), LS_INV_MASS_BITS), ovf);
    }
    apply3x2(a->w, g->ict1_a, g->ict2_a, l, d1, d2, 20, -1, ovf);
    apply3x2(b->w, g->ict1_b, g->ict2_b, l, d1, d2, 20, +1, ovf);
}

// Apply a rolling impulse increment r to both bodies: wa -= Ia^-1 r, wb += Ib^-1 r.
static void apply_rolling(const ls_rolling_lanes *ro, uint32_t l, lane_body *a, lane_body *b,
                          const int32_t *r, uint32_t *ovf)
{
    const int32_t ia[6] = {ro->ia[0][l], ro->ia[1][l], ro->ia[2][l],
                           ro->ia[3][l], ro->ia[4][l], ro->ia[5][l]};
    const int32_t ib[6] = {ro->ib[0][l], ro->ib[1][l], ro->ib[2][l],
                           ro->ib[3][l], ro->ib[4][l], ro->ib[5][l]};
    const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
    for (int k = 0; k < 3; k++) {
        int64_t xa = ls_dot3(ia[idx[k][0]], ia[idx[k][1]], ia[idx[k][2]], r[0], r[1], r[2]);
        int64_t xb = ls_dot3(ib[idx[k][0]], ib[idx[k][1]], ib[idx[k][2]], r[0], r[1], r[2]);
        a->w[k] = ls_nar((int64_t)a->w[k] - ls_rnd(xa, 20), ovf);
        b->w[k] = ls_nar((int64_t)b->w[k] + ls_rnd(xb, 20), ovf);
    }
}

static bool lane_live(const ls_contact_lanes *g, uint32_t l)
{
    return g->count[l] != 0;
}

uint32_t ls_contact_warm_start_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g)
{
    uint32_t mask = 0;
    const ls_rolling_lanes *ro = g->rolling >= 0 ? &sw->rolling[g->rolling] : NULL;
    for (uint32_t l = 0; l < LS_LANES; l++) {
        if (!lane_live(g, l)) {
            continue;
        }
        uint32_t ovf = 0;
        ls_solver_body *sa = &sw->states[g->a[l]], *sb = &sw->states[g->b[l]];
        lane_body a, b;
        load_body(sa, &a);
        load_body(sb, &b);
        for (uint32_t i = 0; i < g->count[l]; i++) {
            apply_normal(g, &g->p[i], l, &a, &b, g->p[i].impulse[l], &ovf);
        }
        apply_friction(g, l, &a, &b, g->f1[l], g->f2[l], &ovf);
        apply3(a.w, g->in_a, l, g->twist[l], 20, -1, &ovf);
        apply3(b.w, g->in_b, l, g->twist[l], 20, +1, &ovf);
        if (ro && ro->limit[l] != 0) {
            const int32_t r[3] = {ro->r[0][l], ro->r[1][l], ro->r[2][l]};
            apply_rolling(ro, l, &a, &b, r, &ovf);
        }
        save_body(sa, &a);
        save_body(sb, &b);
        mask |= ovf << l;
    }
    return mask;
}

// Clamp an accumulated vector impulse (2 or 3 exact components) into the
// ball of radius lim (0 <= lim < 2^30): components of 2^31 or more are first
// halved together (arithmetic shifts) until they fit 32 bits -- such a vector
// is far outside the ball, and only its direction matters -- then, outside
// the ball, each becomes c * lim / |c| (|c| = isqrt of the exact sum of
// squares, the division truncating toward zero). The result always lies in
// the solver range.
void ls_contact_clamp_ball_(int64_t *c, int n, int32_t lim)
{
    int64_t big = 0;
    for (int k = 0; k < n; k++) {
        int64_t a = c[k] < 0 ? -c[k] : c[k];
        big = a > big ? a : big;
    }
    while (big >= ((int64_t)1 << 31)) {
        for (int k = 0; k < n; k++) {
            c[k] >>= 1;
        }
        big >>= 1;
    }
    uint64_t len2 = 0;
    for (int k = 0; k < n; k++) {
        len2 += (uint64_t)(c[k] * c[k]);
    }
    if (len2 <= (uint64_t)((int64_t)lim * lim)) {
        return;
    }
    if (lim == 0) { // no load: 0, as c 0 / len, without the root
        for (int k = 0; k < n; k++) {
            c[k] = 0;
        }
        return;
    }
    int64_t len = (int64_t)ls_isqrt64(len2);
    for (int k = 0; k < n; k++) {
        c[k] = (c[k] * lim) / len; // len > lim >= 0: never zero
    }
}

// Friction, twist and rolling of one lane (relax pass): rolling first, then
// twist, then the 2D friction, as Box3D.
static void solve_surface(const ls_contact_sweep *sw, ls_contact_lanes *g, uint32_t l, lane_body *a,
                          lane_body *b, int64_t total, int64_t twist_arm, uint32_t *ovf)
{
    const ls_rolling_lanes *ro = g->rolling >= 0 ? &sw->rolling[g->rolling] : NULL;
    if (ro && ro->limit[l] != 0) {
        ls_rolling_lanes *rw = &sw->rolling[g->rolling];
        const int32_t dw[3] = {a->w[0] - b->w[0], a->w[1] - b->w[1], a->w[2] - b->w[2]};
        const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
        int32_t old[3], d[3];
        int64_t now[3];
        int32_t lim = ls_cap(ls_rnd(ro->limit[l] * total, 16));
        for (int k = 0; k < 3; k++) {
            old[k] = ro->r[k][l];
            int64_t x = ls_dot3(ro->mass[idx[k][0]][l], ro->mass[idx[k][1]][l],
                                ro->mass[idx[k][2]][l], dw[0], dw[1], dw[2]);
            now[k] = (int64_t)old[k] + ls_rnd(x, 16);
        }
        ls_contact_clamp_ball_(now, 3, lim);
        for (int k = 0; k < 3; k++) {
            d[k] = (int32_t)now[k] - old[k];
            rw->r[k][l] = (int32_t)now[k];
        }
        apply_rolling(ro, l, a, b, d, ovf);
    }
    int32_t mu = g->friction[l];
    {
        int64_t s = ls_dot3(g->n[0][l], g->n[1][l], g->n[2][l], b->w[0] - a->w[0],
                            b->w[1] - a->w[1], b->w[2] - a->w[2]);
        int32_t speed = ls_nar(ls_rnd(s, 16), ovf);
        int32_t lim = ls_cap(ls_rnd(twist_arm, 16));
        int32_t old = g->twist[l];
        int64_t x = (int64_t)old - ls_rnd(ls_mul(g->twist_mass[l], speed), 16);
        x = x > lim ? lim : x < -(int64_t)lim ? -(int64_t)lim : x;
        int32_t now = (int32_t)x;
        g->twist[l] = now;
        int32_t d = now - old;
        apply3(a->w, g->in_a, l, d, 20, -1, ovf);
        apply3(b->w, g->in_b, l, d, 20, +1, ovf);
    }
    {
        const int32_t dv[3] = {b->v[0] - a->v[0], b->v[1] - a->v[1], b->v[2] - a->v[2]};
        int64_t s1 =
            ls_dot3(g->t1[0][l], g->t1[1][l], g->t1[2][l], dv[0], dv[1], dv[2]) +
            ls_dot3(b->w[0], b->w[1], b->w[2], g->ct1_b[0][l], g->ct1_b[1][l], g->ct1_b[2][l]) -
            ls_dot3(a->w[0], a->w[1], a->w[2], g->ct1_a[0][l], g->ct1_a[1][l], g->ct1_a[2][l]);
        int64_t s2 =
            ls_dot3(g->t2[0][l], g->t2[1][l], g->t2[2][l], dv[0], dv[1], dv[2]) +
            ls_dot3(b->w[0], b->w[1], b->w[2], g->ct2_b[0][l], g->ct2_b[1][l], g->ct2_b[2][l]) -
            ls_dot3(a->w[0], a->w[1], a->w[2], g->ct2_a[0][l], g->ct2_a[1][l], g->ct2_a[2][l]);
        int32_t vt1 = ls_nar(ls_rnd(s1, 16), ovf), vt2 = ls_nar(ls_rnd(s2, 16), ovf);
        int64_t d1 = ls_rnd(ls_mul(g->tmass[0][l], vt1), 16);
        int64_t d2 = ls_rnd(ls_mul(g->tmass[2][l], vt2), 16);
        int32_t o1 = g->f1[l], o2 = g->f2[l];
        int64_t f[2] = {(int64_t)o1 - d1, (int64_t)o2 - d2};
        int32_t lim = ls_cap(ls_rnd(mu * total, 16));
        ls_contact_clamp_ball_(f, 2, lim);
        g->f1[l] = (int32_t)f[0];
        g->f2[l] = (int32_t)f[1];
        apply_friction(g, l, a, b, (int32_t)f[0] - o1, (int32_t)f[1] - o2, ovf);
    }
}

// The k-th point slot solved in a manifold of np slots (SPEC.md §11.2).
// Why a rotating order: Gauss-Seidel gives the first point solved the larger
// share of a push, and a fixed order pushes every box of a pyramid or a pile
// the same way, tick after tick (measured: the top of a 40-layer pyramid
// walked 2 cm in 200 ticks). Starting at the sub-step's slot and reversing
// every other tick, each point of a 4-point face comes first equally often
// in both directions. Jacobi within the manifold (every point from the same
// velocities) is symmetric too, but its over-relaxed rotation modes let
// columns of boxes turn rigidly while the push-out holds their faces flat:
// a slow shear creep that kept piles awake.
static uint32_t slot_at(const ls_contact_sweep *sw, uint32_t np, uint32_t k)
{
    uint32_t first = sw->first % np;
    uint32_t j = sw->reverse ? first + np - k : first + k; // first, then on (wrapping)
    return j % np;
}

uint32_t ls_contact_solve_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g)
{
    uint32_t mask = 0;
    const bool bounce = ((g->impact >> LS_IMPACT_MAY) & 0xffu) != 0; // a lane has restitution
    for (uint32_t l = 0; l < LS_LANES; l++) {
        if (!lane_live(g, l)) {
            continue;
        }
        uint32_t ovf = 0;
        ls_solver_body *sa = &sw->states[g->a[l]], *sb = &sw->states[g->b[l]];
        lane_body a, b;
        load_body(sa, &a);
        load_body(sb, &b);
        const int32_t n[3] = GET3(g->n, l);
        int32_t na[3], nb[3];
        rotate_conj(a.dq, n, na, &ovf);
        rotate_conj(b.dq, n, nb, &ovf);
        int32_t d0 = ls_nar(ls_rnd(ls_dot3(n[0], n[1], n[2], b.dp[0] - a.dp[0], b.dp[1] - a.dp[1],
                                           b.dp[2] - a.dp[2]),
                                   16),
                            &ovf);
        int64_t total = 0, twist_arm = 0;
        uint32_t np = (uint32_t)g->count[l]; // its own count (solver.c, pack)
        bool jacobi = g->jacobi[l] != 0;
        int32_t delta[LS_MANIFOLD_MAX] = {0, 0, 0, 0};
        const lane_body a0 = a, b0 = b; // Jacobi: every point reads these
        for (uint32_t k = 0; k < np; k++) {
            uint32_t i = slot_at(sw, np, k);
            if (i >= g->count[l]) {
                continue; // the vector path solves it as an empty row
            }
            ls_contact_point_lanes *p = &g->p[i];
            int64_t sep = ls_dot3(nb[0], nb[1], nb[2], p->sb[0][l], p->sb[1][l], p->sb[2][l]) -
                          ls_dot3(na[0], na[1], na[2], p->sa[0][l], p->sa[1][l], p->sa[2][l]);
            int32_t s = ls_nar((int64_t)p->base[l] + d0 + ls_rnd(sep, 16), &ovf);
            int32_t vn = jacobi ? normal_speed(g, p, l, &a0, &b0, &ovf)
                                : normal_speed(g, p, l, &a, &b, &ovf);
            int32_t bias = 0, mass = p->mass[l], iscale = 0;
            if (s > 0) {
                bias = ls_nar(ls_rnd(ls_mul(s, sw->inv_h), 16), &ovf);
            } else if (sw->use_bias) {
                bias = ls_max32(ls_nar(ls_rnd(ls_mul(s, g->bias_rate[l]), 16), &ovf), sw->max_push);
                mass = p->soft_mass[l];
                iscale = g->impulse_scale[l];
            }
            int32_t old = p->impulse[l];
            int64_t x = ls_mul(mass, vn + bias) + ls_mul(iscale, old);
            int32_t now = ls_nar_pos((int64_t)old - ls_rnd(x, 16), &ovf);
            p->impulse[l] = now;
            if (bounce) { // read only by the restitution of a group with such lanes
                p->max_impulse[l] = ls_max32(p->max_impulse[l], now);
            }
            total += now;
            twist_arm += ls_mul(p->twist_lever[l], now);
            delta[i] = now - old;
            if (!jacobi) {
                apply_normal(g, p, l, &a, &b, delta[i], &ovf);
            }
        }
        for (uint32_t i = 0; i < g->count[l] && jacobi; i++) {
            apply_normal(g, &g->p[i], l, &a, &b, delta[i], &ovf); // Jacobi: in slot order
        }
        if (sw->surface) {
            solve_surface(sw, g, l, &a, &b, total, twist_arm, &ovf);
        }
        save_body(sa, &a);
        save_body(sb, &b);
        mask |= ovf << l;
    }
    return mask;
}

// A chain lane still moves when a point's impulse changed while its normal
// velocity missed the target by more than this (raw, 0.00024 m/s).
#define CHAIN_TOLERANCE 16

uint32_t ls_contact_restitution_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g)
{
    uint32_t mask = 0;
    if (g->impact >> LS_IMPACT_CHAIN != 0) {
        g->impact &= ~(0xffu << LS_IMPACT_FIRED); // FIRED: the chain lanes that still move
    }
    for (uint32_t l = 0; l < LS_LANES; l++) {
        bool chain = (g->impact >> (LS_IMPACT_CHAIN + l)) & 1u;
        if (!lane_live(g, l) || g->restitution[l] == 0 || (sw->chain_only && !chain)) {
            continue;
        }
        uint32_t ovf = 0;
        ls_solver_body *sa = &sw->states[g->a[l]], *sb = &sw->states[g->b[l]];
        lane_body a, b;
        load_body(sa, &a);
        load_body(sb, &b);
        bool jacobi = g->jacobi[l] != 0;
        int32_t delta[LS_MANIFOLD_MAX] = {0, 0, 0, 0};
        const lane_body a0 = a, b0 = b;
        for (uint32_t i = 0; i < g->count[l]; i++) {
            ls_contact_point_lanes *p = &g->p[i];
            if (p->max_impulse[l] == 0 || (!chain && p->vn0[l] >= sw->threshold)) {
                continue;
            }
            int32_t vn = jacobi ? normal_speed(g, p, l, &a0, &b0, &ovf)
                                : normal_speed(g, p, l, &a, &b, &ovf);
            // A chain lane's target is the impact pass's (in base), the
            // others' -e vn0 (Box2D v3's restitution).
            int32_t target = chain
                                 ? p->base[l]
                                 : ls_nar(-ls_rnd(ls_mul(g->restitution[l], p->vn0[l]), 16), &ovf);
            int32_t old = p->impulse[l];
            int64_t x = ls_mul(p->mass[l], vn - target);
            int32_t now = ls_nar_pos((int64_t)old - ls_rnd(x, 16), &ovf);
            p->impulse[l] = now;
            delta[i] = now - old;
            if (chain && now != old &&
                ((int64_t)vn - target > CHAIN_TOLERANCE ||
                 (int64_t)target - vn > CHAIN_TOLERANCE)) {
                g->impact |= 1u << (LS_IMPACT_FIRED + l);
            }
            if (!jacobi) {
                apply_normal(g, p, l, &a, &b, delta[i], &ovf);
            }
        }
        for (uint32_t i = 0; i < g->count[l] && jacobi; i++) {
            apply_normal(g, &g->p[i], l, &a, &b, delta[i], &ovf);
        }
        save_body(sa, &a);
        save_body(sb, &b);
        mask |= ovf << l;
    }
    return mask;
}

// ---- The impact pass ---------------------------------------------------------
//
// Why: the sub-steps solve a touching row (Newton's cradle) as one block, so
// the striker's momentum is shared and Box2D's restitution, -e vn0 per
// contact, can only bounce the first pair: the cradle kept 84 % of the energy
// (3 balls) and 52 % (5 balls). The impact pass replays the tick's impacts
// the sequential way (Guendelman et al. 2003): on velocity changes alone (the
// impact states, zero at the start), each touched point of a lane with
// restitution that approaches faster than the threshold, its approach being
// vn0 plus the change the impacts so far made, gets the impulse that turns
// it into -e times that approach; the colours are swept until no point
// fires. A lane whose bodies only its own impacts moved keeps Box2D's target
// (the same bits as without the pass); a lane whose body another impact also
// moved (a chain) gets as target its normal velocity after the replay, vn0
// plus the change, at least 0, and the restitution sweeps repeat over the
// chain lanes to meet those targets together (until no chain lane moves).
//
// Tag of a body in the impact states (ls_solver_body.pad): no impact yet, the
// contact of its impacts so far, or several contacts.
#define TAG_NONE   (-1)
#define TAG_SHARED (-2)

static void tag_body(ls_solver_body *s, int32_t me)
{
    if (s->flags & LS_STATE_WRITABLE) {
        s->pad = s->pad == TAG_NONE || s->pad == me ? me : TAG_SHARED;
    }
}

uint32_t ls_contact_impact_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g)
{
    uint32_t mask = 0;
    g->impact &= ~(0xffu << LS_IMPACT_FIRED);
    for (uint32_t l = 0; l < LS_LANES; l++) {
        if (!((g->impact >> (LS_IMPACT_MAY + l)) & 1u)) {
            continue;
        }
        uint32_t ovf = 0;
        ls_solver_body *sa = &sw->states[g->a[l]], *sb = &sw->states[g->b[l]];
        lane_body a, b;
        load_body(sa, &a);
        load_body(sb, &b);
        bool jacobi = g->jacobi[l] != 0, fired = false;
        int32_t delta[LS_MANIFOLD_MAX] = {0, 0, 0, 0};
        const lane_body a0 = a, b0 = b;
        for (uint32_t i = 0; i < g->count[l]; i++) {
            ls_contact_point_lanes *p = &g->p[i];
            if (p->max_impulse[l] == 0) {
                continue;
            }
            int32_t dv = jacobi ? normal_speed(g, p, l, &a0, &b0, &ovf)
                                : normal_speed(g, p, l, &a, &b, &ovf);
            int32_t vn = ls_nar((int64_t)p->vn0[l] + dv, &ovf);
            if (vn >= sw->threshold) {
                continue;
            }
            int32_t target = ls_nar(-ls_rnd(ls_mul(g->restitution[l], vn), 16), &ovf);
            delta[i] = ls_nar(-ls_rnd(ls_mul(p->mass[l], vn - target), 16), &ovf);
            fired = true;
            if (!jacobi) {
                apply_normal(g, p, l, &a, &b, delta[i], &ovf);
            }
        }
        for (uint32_t i = 0; i < g->count[l] && jacobi; i++) {
            apply_normal(g, &g->p[i], l, &a, &b, delta[i], &ovf);
        }
        if (fired) {
            save_body(sa, &a);
            save_body(sb, &b);
            tag_body(sa, (int32_t)g->contact[l]);
            tag_body(sb, (int32_t)g->contact[l]);
            g->impact |= (1u << (LS_IMPACT_FIRED + l)) | (1u << (LS_IMPACT_EVER + l));
        }
        mask |= ovf << l;
    }
    return mask;
}

uint32_t ls_contact_impact_end_scalar_(const ls_contact_sweep *sw, ls_contact_lanes *g)
{
    uint32_t mask = 0;
    g->impact &= ~(0xffu << LS_IMPACT_FIRED);
    for (uint32_t l = 0; l < LS_LANES; l++) {
        const ls_solver_body *sa = &sw->states[g->a[l]], *sb = &sw->states[g->b[l]];
        if (!((g->impact >> (LS_IMPACT_EVER + l)) & 1u) ||
            (sa->pad != TAG_SHARED && sb->pad != TAG_SHARED)) {
            continue;
        }
        uint32_t ovf = 0;
        lane_body a, b;
        load_body(sa, &a);
        load_body(sb, &b);
        for (uint32_t i = 0; i < g->count[l]; i++) {
            ls_contact_point_lanes *p = &g->p[i];
            int32_t vn = ls_nar((int64_t)p->vn0[l] + normal_speed(g, p, l, &a, &b, &ovf), &ovf);
            p->base[l] = vn > 0 ? vn : 0;
        }
        g->impact |= 1u << (LS_IMPACT_CHAIN + l);
        mask |= ovf << l;
    }
    return mask;
}

const ls_contact_kernels ls_contact_kernels_scalar_ = {
    .name = "scalar",
    .warm_start = ls_contact_warm_start_scalar_,
    .solve = ls_contact_solve_scalar_,
    .restitution = ls_contact_restitution_scalar_,
    .prep_math = ls_contact_prep_math_scalar_,
    .prepare = ls_contact_prepare_scalar_,
};
