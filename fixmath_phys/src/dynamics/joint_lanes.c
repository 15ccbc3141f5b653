// SPDX-License-Identifier: MIT
// Ball joints in the wide path (joint_lanes.h): prepare, store and the
// scalar reference of the sweeps. These formulas, in this order and with this
// rounding, are the definition (SPEC.md §23.10); the vector paths compute the
// same integers (lane_math.h states the arithmetic).
//
// The block: C = (c_b + r_b) - (c_a + r_a), dC/dt = v_b + w_b x r_b - v_a -
// w_a x r_a, K = (m_a + m_b) E + [r_a]^T I_a [r_a] + [r_b]^T I_b [r_b]. Each
// sub-step's warm start turns the tick-start arms by the bodies' rotation
// since then (dq), builds K and inverts it once; solve and relax use it.
#include "joint_lanes.h"

#include "joint.h"

#include <string.h>

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

// The cone's rows of joint j into lane `lane`.
static void cone_fill(const ls_joint *j, ls_ball_lanes *g, uint32_t lane)
{
    ls_joint_cone_rows r;
    ls_joint_cone_rows_of_(j, 0, &r);
    const ls_vec3 v[6] = {r.n, r.t, r.n_ia, r.n_ib, r.t_ia, r.t_ib};
    ls_lanes *dst[6] = {g->cn_n, g->cn_t, g->cn_na, g->cn_nb, g->cn_ta, g->cn_tb};
    for (int k = 0; k < 6; k++) {
        dst[k][0][lane] = v[k].x;
        dst[k][1][lane] = v[k].y;
        dst[k][2][lane] = v[k].z;
    }
    g->cn_swing[lane] = r.swing;
    g->cn_twist[lane] = r.twist;
    g->cn_cone[lane] = r.cone;
    g->cn_lower[lane] = r.lower;
    g->cn_upper[lane] = r.upper;
    g->cn_m[0][lane] = r.m_swing;
    g->cn_m[1][lane] = r.m_twist;
    g->cn_k[lane] = r.k_twist;
    for (int k = 0; k < 3; k++) {
        g->cn_acc[k][lane] = r.acc[k];
    }
    g->cn_tl[lane] = r.twist_limited;
    if (ls_joint_cone_friction_(j)) {
        // The friction block's matrices for the tick (the joint's prepare
        // made M); the sub-step's bound and a zero impulse come with each
        // warm start (ls_ball_align_fill_).
        g->fr_on[lane] = 1;
        const ls_mat3 *m[3] = {&j->angular_mass, &j->inv_i_a, &j->inv_i_b};
        ls_lanes *to[3] = {g->fr_m, g->al_ma, g->al_mb};
        for (int k = 0; k < 3; k++) {
            for (int row = 0; row < 3; row++) {
                to[k][3 * row][lane] = m[k]->row[row].x;
                to[k][3 * row + 1][lane] = m[k]->row[row].y;
                to[k][3 * row + 2][lane] = m[k]->row[row].z;
            }
        }
    }
}

// The lane's friction block (the reverse of the fill above).
static void friction_of_lane(const ls_ball_lanes *g, uint32_t l, ls_joint_friction_rows *r)
{
    ls_mat3 *m[3] = {&r->mass, &r->ia, &r->ib};
    const ls_lanes *src[3] = {g->fr_m, g->al_ma, g->al_mb};
    for (int k = 0; k < 3; k++) {
        for (int row = 0; row < 3; row++) {
            m[k]->row[row] =
                ls_vec3_make(src[k][3 * row][l], src[k][3 * row + 1][l], src[k][3 * row + 2][l]);
        }
    }
    r->top = g->fr_top[l];
    r->acc = ls_vec3_make(g->fr_acc[0][l], g->fr_acc[1][l], g->fr_acc[2][l]);
}

// A hinge's axial rows into lane `lane` for the tick, when it has any:
// flags, limits, coefficients, impulses.
static void axial_prepare(const ls_joint *j, ls_ball_lanes *g, uint32_t lane)
{
    ls_joint_axial_rows r;
    ls_joint_axial_rows_of_(j, 0, 0, &r);
    if (!(r.spring_on || r.motor_on || r.limit_on)) {
        return;
    }
    g->ax_on[lane] = 1;
    g->ax_flags[lane] = (r.spring_on ? LS_AXIAL_SPRING : 0) | (r.motor_on ? LS_AXIAL_MOTOR : 0) |
                        (r.limit_on ? LS_AXIAL_LIMIT : 0) |
                        (r.spring_on && r.spring_explicit ? LS_AXIAL_EXPLICIT : 0);
    g->ax_push[lane] = r.push;
    g->ax_lower[lane] = r.lower;
    g->ax_upper[lane] = r.upper;
    g->ax_rate[lane] = r.spring.bias_rate;
    g->ax_ms[lane] = r.spring.mass_scale;
    g->ax_is[lane] = r.spring.impulse_scale;
    g->ax_speed[lane] = r.motor_speed;
    for (int k = 0; k < 4; k++) {
        g->ax_acc[k][lane] = r.acc[k];
    }
}

// The lane's axial rows (the reverse of axial_prepare and the fill) in a
// sweep of sub-step h.
static void axial_of_lane(const ls_ball_lanes *g, uint32_t l, ls_fx h, ls_joint_axial_rows *r)
{
    r->h = h;
    r->d = ls_vec3_make(g->ax_d[0][l], g->ax_d[1][l], g->ax_d[2][l]);
    r->d_ia = ls_vec3_make(g->ax_ia[0][l], g->ax_ia[1][l], g->ax_ia[2][l]);
    r->d_ib = ls_vec3_make(g->ax_ib[0][l], g->ax_ib[1][l], g->ax_ib[2][l]);
    r->k = g->ax_k[l];
    r->mass = g->ax_m[l];
    r->angle = g->ax_angle[l];
    r->lower = g->ax_lower[l];
    r->upper = g->ax_upper[l];
    r->spring = (ls_softness){g->ax_rate[l], g->ax_ms[l], g->ax_is[l]};
    r->push = g->ax_push[l];
    r->motor_speed = g->ax_speed[l];
    r->top = g->ax_top[l];
    for (int k = 0; k < 4; k++) {
        r->acc[k] = g->ax_acc[k][l];
    }
    r->spring_on = (g->ax_flags[l] & LS_AXIAL_SPRING) != 0;
    r->spring_explicit = (g->ax_flags[l] & LS_AXIAL_EXPLICIT) != 0;
    r->motor_on = (g->ax_flags[l] & LS_AXIAL_MOTOR) != 0;
    r->limit_on = (g->ax_flags[l] & LS_AXIAL_LIMIT) != 0;
}

uint32_t ls_ball_prepare_lane_(const ls_world *w, ls_ball_lanes *g, uint32_t lane, uint32_t jk,
                               bool align)
{
    g->joint[lane] = jk; // the lane is zero (balls_prepare clears the group)
    if (jk == UINT32_MAX) {
        return 0;
    }
    const ls_solver_scratch *sv = &w->solver;
    const ls_joint *j = &w->joints[jk];
    const ls_body *a = &w->bodies[j->a], *b = &w->bodies[j->b];
    uint32_t sa = sv->body_state[j->a], sb = sv->body_state[j->b];
    bool moves_a = sa != 0 && (sv->states[sa].flags & LS_STATE_WRITABLE);
    bool moves_b = sb != 0 && (sv->states[sb].flags & LS_STATE_WRITABLE);
    const ls_solver_mass *ma = &sv->masses[moves_a ? sa : 0];
    const ls_solver_mass *mb = &sv->masses[moves_b ? sb : 0];
    uint32_t ovf = 0;
    g->a[lane] = sa;
    g->b[lane] = sb;
    g->ima[lane] = ma->inv_mass;
    g->imb[lane] = mb->inv_mass;
    for (int k = 0; k < 6; k++) {
        g->ia[k][lane] = ma->inv_inertia[k];
        g->ib[k][lane] = mb->inv_inertia[k];
    }
    ls_vec3 ra = ls_mat3_mul_vec(a->xf.r, j->local_a), rb = ls_mat3_mul_vec(b->xf.r, j->local_b);
    const int32_t ra0[3] = {ra.x, ra.y, ra.z}, rb0[3] = {rb.x, rb.y, rb.z};
    SET3(g->ra0, lane, ra0);
    SET3(g->rb0, lane, rb0);
    const int32_t c0[3] = {ls_nar((int64_t)b->p.x - a->p.x, &ovf),
                           ls_nar((int64_t)b->p.y - a->p.y, &ovf),
                           ls_nar((int64_t)b->p.z - a->p.z, &ovf)};
    SET3(g->c0, lane, c0);
    const int32_t imp[3] = {j->linear_impulse.x, j->linear_impulse.y, j->linear_impulse.z};
    SET3(g->impulse, lane, imp);
    const ls_joint_kind *kind = ls_joint_kind_of_(j->type);
    if (align && kind->lane_rows == LS_LANE_ROWS_ALIGN2) {
        g->al_on[lane] = 1;
        g->al_imp[0][lane] = j->angular_impulse.x;
        g->al_imp[1][lane] = j->angular_impulse.y;
    }
    if (align && kind->lane_rows == LS_LANE_ROWS_CONE) {
        // The tick's rows (the joint's prepare ran first); each sub-step's
        // warm start changes only the angles (ls_ball_align_fill_).
        g->cn_on[lane] = 1;
        cone_fill(j, g, lane);
    }
    if (align && kind->lane_rows == LS_LANE_ROWS_ALIGN2 && j->type == LS_JOINT_HINGE) {
        axial_prepare(j, g, lane);
    }
    if (align && kind->lane_rows == LS_LANE_ROWS_ALIGN2 && kind->align_only &&
        kind->align_only(j)) {
        // What the joint's prepare (ls_joint_prepare_bodies_) takes for it.
        g->al_body_a[lane] = j->a;
        g->al_body_b[lane] = j->b;
        const ls_quat fa = j->frame_a, fb = j->frame_b;
        const int32_t qa[4] = {fa.x, fa.y, fa.z, fa.w}, qb[4] = {fb.x, fb.y, fb.z, fb.w};
        for (int k = 0; k < 4; k++) {
            g->al_fa[k][lane] = qa[k];
            g->al_fb[k][lane] = qb[k];
        }
        const ls_mat3 *ma_w = &a->inv_inertia_world, *mb_w = &b->inv_inertia_world;
        for (int r = 0; r < 3; r++) {
            const int32_t ra_w[3] = {ma_w->row[r].x, ma_w->row[r].y, ma_w->row[r].z};
            const int32_t rb_w[3] = {mb_w->row[r].x, mb_w->row[r].y, mb_w->row[r].z};
            for (int c = 0; c < 3; c++) {
                g->al_ma[3 * r + c][lane] = ls_body_moves_(a) ? ra_w[c] : 0;
                g->al_mb[3 * r + c][lane] = ls_body_moves_(b) ? rb_w[c] : 0;
            }
        }
    }
    return ovf;
}

void ls_ball_align_load_(ls_world *w, const ls_ball_lanes *g, uint32_t lane)
{
    ls_joint *j = &w->joints[g->joint[lane]];
    if (g->cn_on[lane]) {
        j->angular_impulse.x = g->cn_acc[0][lane];
        j->lower_impulse = g->cn_acc[1][lane];
        j->upper_impulse = g->cn_acc[2][lane];
        if (g->fr_on[lane]) {
            j->friction_impulse =
                ls_vec3_make(g->fr_acc[0][lane], g->fr_acc[1][lane], g->fr_acc[2][lane]);
        }
        return;
    }
    j->angular_impulse.x = g->al_imp[0][lane];
    j->angular_impulse.y = g->al_imp[1][lane];
    if (g->ax_on[lane]) {
        j->spring_impulse = g->ax_acc[0][lane];
        j->motor_impulse = g->ax_acc[1][lane];
        j->lower_impulse = g->ax_acc[2][lane];
        j->upper_impulse = g->ax_acc[3][lane];
        j->spring_push = g->ax_push[lane];
    }
}

// The lane's cone rows (the reverse of cone_fill) in a sweep of sub-step h.
static void cone_of_lane(const ls_ball_lanes *g, uint32_t l, ls_fx h, ls_joint_cone_rows *r)
{
    r->h = h;
    ls_vec3 *v[6] = {&r->n, &r->t, &r->n_ia, &r->n_ib, &r->t_ia, &r->t_ib};
    const ls_lanes *src[6] = {g->cn_n, g->cn_t, g->cn_na, g->cn_nb, g->cn_ta, g->cn_tb};
    for (int k = 0; k < 6; k++) {
        *v[k] = ls_vec3_make(src[k][0][l], src[k][1][l], src[k][2][l]);
    }
    r->swing = g->cn_swing[l];
    r->twist = g->cn_twist[l];
    r->cone = g->cn_cone[l];
    r->lower = g->cn_lower[l];
    r->upper = g->cn_upper[l];
    r->m_swing = g->cn_m[0][l];
    r->m_twist = g->cn_m[1][l];
    r->k_twist = g->cn_k[l];
    for (int k = 0; k < 3; k++) {
        r->acc[k] = g->cn_acc[k][l];
    }
    r->twist_limited = g->cn_tl[l] != 0;
}

void ls_ball_align_fill_(const ls_world *w, ls_ball_lanes *g, uint32_t lane, ls_fx h)
{
    if (g->cn_on[lane]) {
        // The angles; the rest is the tick's (prepare).
        const ls_joint *j = &w->joints[g->joint[lane]];
        g->cn_swing[lane] = j->err[0];
        g->cn_twist[lane] = j->err[1];
        if (g->fr_on[lane]) {
            g->fr_top[lane] = ls_fx_mul(j->max_motor, h);
            for (int k = 0; k < 3; k++) {
                g->fr_acc[k][lane] = 0; // not warm started (joint_cone.c)
            }
        }
        return;
    }
    ls_joint_align2 r;
    ls_joint_align2_of_(&w->joints[g->joint[lane]], &r);
    for (int k = 0; k < 2; k++) {
        const int32_t d[3] = {r.dir[k].x, r.dir[k].y, r.dir[k].z};
        const int32_t ia[3] = {r.dir_ia[k].x, r.dir_ia[k].y, r.dir_ia[k].z};
        const int32_t ib[3] = {r.dir_ib[k].x, r.dir_ib[k].y, r.dir_ib[k].z};
        SET3(g->al_dir[k], lane, d);
        SET3(g->al_ia[k], lane, ia);
        SET3(g->al_ib[k], lane, ib);
        g->al_c[k][lane] = r.c[k];
        g->al_inv[k][0][lane] = r.inv[k][0];
        g->al_inv[k][1][lane] = r.inv[k][1];
        g->al_imp[k][lane] = r.imp[k];
    }
    if (g->ax_on[lane]) {
        const ls_joint *j = &w->joints[g->joint[lane]];
        ls_joint_axial_rows x;
        ls_joint_axial_rows_of_(j, j->err[2], h, &x);
        const int32_t d[3] = {x.d.x, x.d.y, x.d.z};
        const int32_t ia[3] = {x.d_ia.x, x.d_ia.y, x.d_ia.z};
        const int32_t ib[3] = {x.d_ib.x, x.d_ib.y, x.d_ib.z};
        SET3(g->ax_d, lane, d);
        SET3(g->ax_ia, lane, ia);
        SET3(g->ax_ib, lane, ib);
        g->ax_k[lane] = x.k;
        g->ax_m[lane] = x.mass;
        g->ax_angle[lane] = x.angle;
        g->ax_top[lane] = x.top;
    }
}

void ls_ball_relax_angles_(const ls_world *w, ls_ball_lanes *g, uint32_t lane)
{
    if (g->ax_on[lane] && (g->ax_flags[lane] & LS_AXIAL_EXPLICIT)) {
        g->ax_angle[lane] = ls_joint_hinge_angle_(w, &w->joints[g->joint[lane]]);
    }
}

void ls_ball_store_(ls_world *w, const ls_ball_lanes *g)
{
    for (uint32_t l = 0; l < LS_LANES; l++) {
        if (g->joint[l] != UINT32_MAX) {
            w->joints[g->joint[l]].linear_impulse =
                ls_vec3_make(g->impulse[0][l], g->impulse[1][l], g->impulse[2][l]);
            if (g->al_on[l] || g->cn_on[l]) {
                ls_ball_align_load_(w, g, l);
            }
        }
    }
}

// ---- Scalar sweeps ----------------------------------------------------------

typedef struct lane_body {
    int32_t v[3], w[3], dp[3], dq[4];
} lane_body;

static void load_body(const ls_solver_body *s, lane_body *b)
{
    const int32_t v[3] = {s->v.x, s->v.y, s->v.z}, w[3] = {s->w.x, s->w.y, s->w.z};
    const int32_t dp[3] = {s->dp.x, s->dp.y, s->dp.z};
    memcpy(b->v, v, sizeof v);
    memcpy(b->w, w, sizeof w);
    memcpy(b->dp, dp, sizeof dp);
    b->dq[0] = s->dq.x;
    b->dq[1] = s->dq.y;
    b->dq[2] = s->dq.z;
    b->dq[3] = s->dq.w;
}

static void save_body(ls_solver_body *s, const lane_body *b)
{
    if (s->flags & LS_STATE_WRITABLE) {
        s->v = ls_vec3_make(b->v[0], b->v[1], b->v[2]);
        s->w = ls_vec3_make(b->w[0], b->w[1], b->w[2]);
    }
}

// v turned by unit quaternion dq: v + s t + u x t, u = vec(dq), s = dq.w,
// t = 2 (u x v); each product exact, every component rounded once.
static void rotate(const int32_t *dq, const int32_t *v, int32_t *out, uint32_t *ovf)
{
    int32_t t[3];
    t[0] = ls_nar(ls_rnd(ls_mul(dq[1], v[2]) - ls_mul(dq[2], v[1]), 16), ovf);
    t[1] = ls_nar(ls_rnd(ls_mul(dq[2], v[0]) - ls_mul(dq[0], v[2]), 16), ovf);
    t[2] = ls_nar(ls_rnd(ls_mul(dq[0], v[1]) - ls_mul(dq[1], v[0]), 16), ovf);
    for (int k = 0; k < 3; k++) {
        t[k] = ls_nar((int64_t)t[k] * 2, ovf);
    }
    int64_t c[3] = {ls_mul(dq[1], t[2]) - ls_mul(dq[2], t[1]),
                    ls_mul(dq[2], t[0]) - ls_mul(dq[0], t[2]),
                    ls_mul(dq[0], t[1]) - ls_mul(dq[1], t[0])};
    for (int k = 0; k < 3; k++) {
        out[k] = ls_nar((int64_t)v[k] + ls_rnd(ls_mul(dq[3], t[k]) + c[k], 16), ovf);
    }
}

// Entry (i, j) of a symmetric matrix stored as xx, xy, xz, yy, yz, zz.
static int sym(int i, int j)
{
    static const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
    return idx[i][j];
}

// Add [r]^T I [r] (Q28.36) to k: T = I [r] rounded to Q12.20 (checked),
// then [r]^T T exactly.
static void add_arm_term(int64_t *k, const int32_t *im, const int32_t *r, uint32_t *ovf)
{
    // [r] = {{0, -rz, ry}, {rz, 0, -rx}, {-ry, rx, 0}}
    const int32_t s[3][3] = {{0, -r[2], r[1]}, {r[2], 0, -r[0]}, {-r[1], r[0], 0}};
    int32_t t[3][3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            int64_t x = ls_mul(im[sym(i, 0)], s[0][j]) + ls_mul(im[sym(i, 1)], s[1][j]) +
                        ls_mul(im[sym(i, 2)], s[2][j]);
            t[i][j] = ls_nar(ls_rnd(x, 16), ovf);
        }
    }
    for (int i = 0; i < 3; i++) {
        for (int j = i; j < 3; j++) {
            k[sym(i, j)] +=
                ls_mul(s[0][i], t[0][j]) + ls_mul(s[1][i], t[1][j]) + ls_mul(s[2][i], t[2][j]);
        }
    }
}

// K^-1 of a symmetric positive-definite K (Q28.36) in Q16.16 with one
// division: K is scaled by 2^-sh so its largest entry has 15 bits, the
// cofactors of the scaled matrix are exact in 32 bits and its determinant in
// 64; recip = floor(2^62 / det) and K^-1 = rnd(cof * recip, 10 + sh). A
// determinant below 2^31 (a K too far from isotropic for 15 bits) takes the
// inverse of the diagonal instead; a non-positive one gives zero.
void ls_ball_inverse_k_(const int64_t *k, int32_t *out, uint32_t *ovf)
{
    // Written out (no loops over the six entries, the branches on the shifts
    // taken once, the overflow flag in a local): the warm start inverts a K
    // per joint and sub-step; the integers are those of the rule above.
    // The largest |k_i| has the bit length of the OR of them all.
    const int64_t k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5];
    uint64_t bits = (uint64_t)(k0 < 0 ? -k0 : k0) | (uint64_t)(k1 < 0 ? -k1 : k1) |
                    (uint64_t)(k2 < 0 ? -k2 : k2) | (uint64_t)(k3 < 0 ? -k3 : k3) |
                    (uint64_t)(k4 < 0 ? -k4 : k4) | (uint64_t)(k5 < 0 ? -k5 : k5);
    for (int i = 0; i < 6; i++) {
        out[i] = 0;
    }
    if (bits == 0) {
        return;
    }
    int sh = (64 - __builtin_clzll(bits)) - 15;
    int64_t r0, r1, r2, r3, r4, r5;
    if (sh > 0) {
        r0 = ls_rnd(k0, sh), r1 = ls_rnd(k1, sh), r2 = ls_rnd(k2, sh);
        r3 = ls_rnd(k3, sh), r4 = ls_rnd(k4, sh), r5 = ls_rnd(k5, sh);
    } else {
        const int64_t m = (int64_t)1 << -sh;
        r0 = k0 * m, r1 = k1 * m, r2 = k2 * m, r3 = k3 * m, r4 = k4 * m, r5 = k5 * m;
    }
    int64_t c[6];
    c[0] = r3 * r5 - r4 * r4;
    c[1] = r2 * r4 - r1 * r5;
    c[2] = r1 * r4 - r2 * r3;
    c[3] = r0 * r5 - r2 * r2;
    c[4] = r1 * r2 - r0 * r4;
    c[5] = r0 * r3 - r1 * r1;
    int64_t det = r0 * c[0] + r1 * c[1] + r2 * c[2];
    uint32_t o = 0;
    if (det < ((int64_t)1 << 31)) {
        // Diagonal fallback: 1 / k_ii (Q28.36 to Q16.16: 2^52 / k).
        for (int i = 0; i < 3; i++) {
            int64_t kk = k[sym(i, i)];
            out[sym(i, i)] = kk > 0 ? ls_nar((((int64_t)1 << 52) + kk / 2) / kk, &o) : 0;
        }
    } else {
        int64_t recip = ((int64_t)1 << 62) / det; // < 2^31
        int s = 10 + sh;
        if (s > 0) { // |c| < 2^31: each product < 2^62
            out[0] = ls_nar(ls_rnd(c[0] * recip, s), &o);
            out[1] = ls_nar(ls_rnd(c[1] * recip, s), &o);
            out[2] = ls_nar(ls_rnd(c[2] * recip, s), &o);
            out[3] = ls_nar(ls_rnd(c[3] * recip, s), &o);
            out[4] = ls_nar(ls_rnd(c[4] * recip, s), &o);
            out[5] = ls_nar(ls_rnd(c[5] * recip, s), &o);
        } else {
            const int64_t m = (int64_t)1 << (-s < 32 ? -s : 32);
            for (int i = 0; i < 6; i++) {
                out[i] = ls_nar(c[i] * recip * m, &o);
            }
        }
    }
    if (o) {
        *ovf = 1;
    }
}

// Apply impulse p (a loses, b gains) at the current arms.
static void apply(const ls_ball_lanes *g, uint32_t l, lane_body *a, lane_body *b, const int32_t *p,
                  uint32_t *ovf)
{
    const int32_t ra[3] = GET3(g->ra, l), rb[3] = GET3(g->rb, l);
    int32_t la[3], lb[3];
    la[0] = ls_nar(ls_rnd(ls_mul(ra[1], p[2]) - ls_mul(ra[2], p[1]), 16), ovf);
    la[1] = ls_nar(ls_rnd(ls_mul(ra[2], p[0]) - ls_mul(ra[0], p[2]), 16), ovf);
    la[2] = ls_nar(ls_rnd(ls_mul(ra[0], p[1]) - ls_mul(ra[1], p[0]), 16), ovf);
    lb[0] = ls_nar(ls_rnd(ls_mul(rb[1], p[2]) - ls_mul(rb[2], p[1]), 16), ovf);
    lb[1] = ls_nar(ls_rnd(ls_mul(rb[2], p[0]) - ls_mul(rb[0], p[2]), 16), ovf);
    lb[2] = ls_nar(ls_rnd(ls_mul(rb[0], p[1]) - ls_mul(rb[1], p[0]), 16), ovf);
    for (int k = 0; k < 3; k++) {
        a->v[k] = ls_nar((int64_t)a->v[k] - ls_rnd(ls_mul(p[k], g->ima[l]), LS_INV_MASS_BITS), ovf);
        b->v[k] = ls_nar((int64_t)b->v[k] + ls_rnd(ls_mul(p[k], g->imb[l]), LS_INV_MASS_BITS), ovf);
        int64_t xa = ls_mul(g->ia[sym(k, 0)][l], la[0]) + ls_mul(g->ia[sym(k, 1)][l], la[1]) +
                     ls_mul(g->ia[sym(k, 2)][l], la[2]);
        int64_t xb = ls_mul(g->ib[sym(k, 0)][l], lb[0]) + ls_mul(g->ib[sym(k, 1)][l], lb[1]) +
                     ls_mul(g->ib[sym(k, 2)][l], lb[2]);
        a->w[k] = ls_nar((int64_t)a->w[k] - ls_rnd(xa, 20), ovf);
        b->w[k] = ls_nar((int64_t)b->w[k] + ls_rnd(xb, 20), ovf);
    }
}

uint32_t ls_ball_warm_start_scalar_(const ls_ball_sweep *sw, ls_ball_lanes *g)
{
    uint32_t mask = 0;
    for (uint32_t l = 0; l < LS_LANES; l++) {
        if (g->joint[l] == UINT32_MAX) {
            continue;
        }
        if (g->al_warm[l]) {
            // The hinge's own warm start (its alignment block), then the point.
            ls_ball_align_load_(sw->world, g, l);
            ls_joint_warm_start_(sw->world, &sw->world->joints[g->joint[l]]);
            ls_ball_align_fill_(sw->world, g, l, 0); // no axial rows (align_only)
        }
        uint32_t ovf = 0;
        ls_solver_body *sa = &sw->states[g->a[l]], *sb = &sw->states[g->b[l]];
        lane_body a, b;
        load_body(sa, &a);
        load_body(sb, &b);
        const int32_t ra0[3] = GET3(g->ra0, l), rb0[3] = GET3(g->rb0, l);
        int32_t ra[3], rb[3];
        rotate(a.dq, ra0, ra, &ovf);
        rotate(b.dq, rb0, rb, &ovf);
        SET3(g->ra, l, ra);
        SET3(g->rb, l, rb);
        int64_t k[6] = {0, 0, 0, 0, 0, 0};
        int64_t m = ((int64_t)g->ima[l] + g->imb[l]) * ((int64_t)1 << (36 - LS_INV_MASS_BITS));
        k[0] = k[3] = k[5] = m;
        const int32_t ia[6] = {g->ia[0][l], g->ia[1][l], g->ia[2][l],
                               g->ia[3][l], g->ia[4][l], g->ia[5][l]};
        const int32_t ib[6] = {g->ib[0][l], g->ib[1][l], g->ib[2][l],
                               g->ib[3][l], g->ib[4][l], g->ib[5][l]};
        add_arm_term(k, ia, ra, &ovf);
        add_arm_term(k, ib, rb, &ovf);
        int32_t kinv[6];
        ls_ball_inverse_k_(k, kinv, &ovf);
        for (int i = 0; i < 6; i++) {
            g->kinv[i][l] = kinv[i];
        }
        const int32_t p[3] = GET3(g->impulse, l);
        apply(g, l, &a, &b, p, &ovf);
        save_body(sa, &a);
        save_body(sb, &b);
        mask |= ovf << l;
    }
    return mask;
}

// The lane's alignment block (the hinge's own rows, ls_joint_align2_solve_:
// A lane body's angular velocity as a vector, and back.
static ls_vec3 spin_of(const lane_body *b)
{
    return ls_vec3_make(b->w[0], b->w[1], b->w[2]);
}

static void set_spin(lane_body *b, ls_vec3 w)
{
    b->w[0] = w.x, b->w[1] = w.y, b->w[2] = w.z;
}

// the saturating arithmetic of joint.h, not the lanes' narrowing).
static void align_solve(const ls_ball_sweep *sw, ls_ball_lanes *g, uint32_t l, lane_body *a,
                        lane_body *b)
{
    ls_joint_align2 r;
    for (int k = 0; k < 2; k++) {
        r.dir[k] = ls_vec3_make(g->al_dir[k][0][l], g->al_dir[k][1][l], g->al_dir[k][2][l]);
        r.dir_ia[k] = ls_vec3_make(g->al_ia[k][0][l], g->al_ia[k][1][l], g->al_ia[k][2][l]);
        r.dir_ib[k] = ls_vec3_make(g->al_ib[k][0][l], g->al_ib[k][1][l], g->al_ib[k][2][l]);
        r.c[k] = g->al_c[k][l];
        r.inv[k][0] = g->al_inv[k][0][l];
        r.inv[k][1] = g->al_inv[k][1][l];
        r.imp[k] = g->al_imp[k][l];
    }
    ls_vec3 wa = spin_of(a), wb = spin_of(b);
    ls_softness s = {sw->bias_rate, sw->mass_scale, sw->impulse_scale};
    ls_joint_align2_solve_(&r, &wa, &wb, s, sw->use_bias != 0);
    set_spin(a, wa);
    set_spin(b, wb);
    g->al_imp[0][l] = r.imp[0];
    g->al_imp[1][l] = r.imp[1];
}

// The lane's hinge rows about its axis (the hinge's own, ls_joint_axial_rows_solve_).
static void axial_solve(const ls_ball_sweep *sw, ls_ball_lanes *g, uint32_t l, lane_body *a,
                        lane_body *b)
{
    ls_joint_axial_rows r;
    axial_of_lane(g, l, sw->h, &r);
    r.step_a = sw->masses[g->a[l]].w_step;
    r.step_b = sw->masses[g->b[l]].w_step;
    ls_vec3 wa = spin_of(a), wb = spin_of(b);
    ls_joint_axial_rows_solve_(&r, &wa, &wb, sw->inv_h, sw->joint, sw->use_bias != 0);
    set_spin(a, wa);
    set_spin(b, wb);
    for (int k = 0; k < 4; k++) {
        g->ax_acc[k][l] = r.acc[k];
    }
    g->ax_push[l] = r.push;
}

// The lane's friction block (the cone's own, ls_joint_friction_solve_).
static void friction_solve(ls_ball_lanes *g, uint32_t l, lane_body *a, lane_body *b)
{
    ls_joint_friction_rows r;
    friction_of_lane(g, l, &r);
    ls_vec3 wa = spin_of(a), wb = spin_of(b);
    ls_joint_friction_solve_(&r, &wa, &wb);
    set_spin(a, wa);
    set_spin(b, wb);
    g->fr_acc[0][l] = r.acc.x;
    g->fr_acc[1][l] = r.acc.y;
    g->fr_acc[2][l] = r.acc.z;
}

// The lane's cone rows (the cone's own, ls_joint_cone_rows_solve_).
static void cone_solve(const ls_ball_sweep *sw, ls_ball_lanes *g, uint32_t l, lane_body *a,
                       lane_body *b)
{
    ls_joint_cone_rows r;
    cone_of_lane(g, l, sw->h, &r);
    r.step_a = sw->masses[g->a[l]].w_step;
    r.step_b = sw->masses[g->b[l]].w_step;
    ls_vec3 wa = spin_of(a), wb = spin_of(b);
    ls_joint_cone_rows_solve_(&r, &wa, &wb, sw->inv_h, sw->joint, sw->use_bias != 0);
    set_spin(a, wa);
    set_spin(b, wb);
    for (int k = 0; k < 3; k++) {
        g->cn_acc[k][l] = r.acc[k];
    }
}

uint32_t ls_ball_solve_scalar_(const ls_ball_sweep *sw, ls_ball_lanes *g)
{
    uint32_t mask = 0;
    for (uint32_t l = 0; l < LS_LANES; l++) {
        if (g->joint[l] == UINT32_MAX) {
            continue;
        }
        uint32_t ovf = 0;
        ls_solver_body *sa = &sw->states[g->a[l]], *sb = &sw->states[g->b[l]];
        lane_body a, b;
        load_body(sa, &a);
        load_body(sb, &b);
        if (g->ax_on[l]) {
            axial_solve(sw, g, l, &a, &b);
        }
        if (g->al_on[l]) {
            align_solve(sw, g, l, &a, &b);
        }
        if (g->fr_on[l]) {
            friction_solve(g, l, &a, &b);
        }
        if (g->cn_on[l]) {
            cone_solve(sw, g, l, &a, &b);
        }
        const int32_t ra[3] = GET3(g->ra, l), rb[3] = GET3(g->rb, l);
        // dC/dt = vb - va + (wb x rb - wa x ra), the cross terms summed exactly.
        int32_t rhs[3];
        for (int k = 0; k < 3; k++) {
            int i = (k + 1) % 3, j = (k + 2) % 3;
            int64_t x = ls_mul(b.w[i], rb[j]) - ls_mul(b.w[j], rb[i]) - ls_mul(a.w[i], ra[j]) +
                        ls_mul(a.w[j], ra[i]);
            rhs[k] = ls_nar((int64_t)b.v[k] - a.v[k] + ls_rnd(x, 16), &ovf);
        }
        if (sw->bias_rate != 0) {
            // C = c0 + (dp_b - dp_a) + (rb - ra); bias = rate * C, its length
            // at most max_bias.
            int32_t bias[3];
            uint64_t len2 = 0;
            for (int k = 0; k < 3; k++) {
                int32_t c = ls_nar((int64_t)g->c0[k][l] + b.dp[k] - a.dp[k] + rb[k] - ra[k], &ovf);
                bias[k] = ls_nar(ls_rnd(ls_mul(sw->bias_rate, c), 16), &ovf);
                len2 += (uint64_t)((int64_t)bias[k] * bias[k]);
            }
            if (len2 > (uint64_t)((int64_t)sw->max_bias * sw->max_bias)) {
                int64_t len = (int64_t)ls_isqrt64(len2);
                for (int k = 0; k < 3; k++) {
                    bias[k] = (int32_t)(((int64_t)bias[k] * sw->max_bias) / len);
                }
            }
            for (int k = 0; k < 3; k++) {
                rhs[k] = ls_nar((int64_t)rhs[k] + bias[k], &ovf);
            }
        }
        int32_t inc[3];
        for (int k = 0; k < 3; k++) {
            int64_t x = ls_mul(g->kinv[sym(k, 0)][l], rhs[0]) +
                        ls_mul(g->kinv[sym(k, 1)][l], rhs[1]) +
                        ls_mul(g->kinv[sym(k, 2)][l], rhs[2]);
            int32_t xk = ls_nar(ls_rnd(x, 16), &ovf);
            int64_t y = ls_mul(sw->mass_scale, xk) + ls_mul(sw->impulse_scale, g->impulse[k][l]);
            inc[k] = ls_nar(-ls_rnd(y, 16), &ovf);
            g->impulse[k][l] = ls_nar((int64_t)g->impulse[k][l] + inc[k], &ovf);
        }
        apply(g, l, &a, &b, inc, &ovf);
        save_body(sa, &a);
        save_body(sb, &b);
        mask |= ovf << l;
    }
    return mask;
}

const ls_ball_kernels ls_ball_kernels_scalar_ = {
    .name = "scalar",
    .warm_start = ls_ball_warm_start_scalar_,
    .solve = ls_ball_solve_scalar_,
};
