// SPDX-License-Identifier: MIT
// The soft step (SPEC.md §11): one pipeline for contacts and joints, in the
// stages of Box2D v3. Once per tick the moving bodies get solver states
// (solver_body.h), the active constraints are collected, coloured (graph.c),
// packed into groups of LS_LANES contacts per colour (contact_solver.h) and
// prepared; then each of `substeps` sub-steps integrates velocities (gravity,
// forces, damping), warm starts, solves with position bias, integrates
// positions (with the gyroscopic term), and relaxes without bias;
// restitution runs once at the end, and the impulses are stored back.
//
// Why soft constraints and sub-steps: position error is corrected by a spring
// of fixed frequency and damping instead of Baumgarte's fraction of the error
// per tick, so the push-out is bounded (max_push_velocity) and the relax pass
// removes the velocity it added: correction adds no energy. Small sub-steps
// make heavy-on-light stacks and long chains converge where more iterations
// of one big step do not.
//
// Determinism: the constraint order (joints in slot order, then contacts in
// (shape a, shape b, child) order), the colouring and the packing depend only
// on ids; the constraints of one colour share no moving body, so the colours
// may run on any number of threads, and their groups on any vector path,
// with the same bits (solver.h states the contract).
#include "solver.h"

#include "../math/isqrt_near.h"
#include "../math/place.h"
#include "contact_solver.h"
#include "joint.h"
#include "joint_lanes.h"
#include "rotate.h"
#include "workers.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define TWO_PI 411775 // 2 pi in Q16.16

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

// ---- bodies --------------------------------------------------------------

// Clamp |v| to `limit` (m/s or rad/s); speeds are bounded by SPEC.md §5.
// `fast`: components below 2^fast raw give |v|^2 < 3 * 2^(2 fast) <= limit^2
// (checked without the squares; the caller's pairs are 512 m/s with 2^24
// and 128 rad/s with 2^22).
static inline ls_vec3 clamp_speed(ls_vec3 v, ls_fx limit, int fast)
{
    if (ls_vec3_magnitude_bits(v) < (1u << fast)) {
        return v;
    }
    uint64_t lim = (uint64_t)limit * (uint64_t)limit;
    if (ls_vec3_len_sq_q32(v) <= lim) {
        return v;
    }
    return ls_vec3_scale(ls_vec3_normalize(v, ls_vec3_zero()), limit);
}

// Gravity, forces and damping of a dynamic body for one sub-step of h seconds.
// (acc: the body's gravity + force / m, the same in every sub-step: prepare_mass.)
static void integrate_velocity(const ls_step_ctx *ctx, const ls_body *b, ls_vec3 acc,
                               ls_solver_body *s)
{
    const ls_fx h = ctx->h;
    ls_vec3 v = ls_vec3_mad(s->v, acc, h), av = s->w;
    if (b->torque.x || b->torque.y || b->torque.z) {
        av = ls_vec3_add(av, ls_vec3_scale(ls_mat3_mul_vec(b->inv_inertia_world, b->torque), h));
    }
    if (b->lin_damp) {
        v = ls_vec3_scale(v, LS_FX_ONE - ls_fx_mul(b->lin_damp, h));
    }
    if (b->ang_damp) {
        av = ls_vec3_scale(av, LS_FX_ONE - ls_fx_mul(b->ang_damp, h));
    }
    _Static_assert(3 * ((uint64_t)1 << 48) <= (uint64_t)LS_FX_INT(512) * LS_FX_INT(512), "fast");
    _Static_assert(3 * ((uint64_t)1 << 44) <= (uint64_t)LS_FX_INT(128) * LS_FX_INT(128), "fast");
    s->v = clamp_speed(v, LS_FX_INT(512), 24);
    s->w = clamp_speed(av, LS_FX_INT(128), 22);
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
    int64_t len = (int64_t)ls_isqrt64_near56_(sum);
    if (len == 0) {
        return ls_quat_identity();
    }
    // |c| <= len (sum >= c^2); the reciprocal of a length near 2^28 without
    // the division (isqrt_near.h).
    ls_unit_div_ u = {(uint64_t)len, ls_recip60_near28_((uint64_t)len)};
    return ls_quat_make(ls_unit_div_q16_(&u, c[0]), ls_unit_div_q16_(&u, c[1]),
                        ls_unit_div_q16_(&u, c[2]), ls_unit_div_q16_(&u, c[3]));
}

// m v and m^T v exactly as ls_mat3_mul_vec and ls_mat3_mul_tvec give them.
// Why the short path: with every component of v within +-2^30, a product of
// an entry (32 bits) and a component is below 2^61 and a sum of three below
// 2^62.6, so no exact sum can saturate and only the rounding's clamp can act
// (ls_fx_from_q32 is ls_fx_round_q32 clamped there): the gyroscopic step
// makes ten such products per body and sub-step.
static inline ls_fx row_dot(ls_vec3 a, ls_vec3 v)
{
    int64_t s = (int64_t)a.x * v.x + (int64_t)a.y * v.y + (int64_t)a.z * v.z;
    return ls_fx_clamp64_(ls_fx_round_q32(s));
}

// (a . v, b . v, c . v) by the short path (v within +-2^30).
static inline ls_vec3 row_dots(ls_vec3 a, ls_vec3 b, ls_vec3 c, ls_vec3 v)
{
    return ls_vec3_make(row_dot(a, v), row_dot(b, v), row_dot(c, v));
}

static inline ls_vec3 mat_vec(const ls_mat3 *m, ls_vec3 v)
{
    return ls_vec3_magnitude_bits(v) >= (1u << 30) ? ls_mat3_mul_vec(*m, v)
                                                   : row_dots(m->row[0], m->row[1], m->row[2], v);
}

static inline ls_vec3 mat_tvec(const ls_mat3 *m, ls_vec3 v)
{
    return ls_vec3_magnitude_bits(v) >= (1u << 30)
               ? ls_mat3_mul_tvec(*m, v)
               : row_dots(ls_mat3_col(*m, 0), ls_mat3_col(*m, 1), ls_mat3_col(*m, 2), v);
}

// Angular velocity of a body turned to rotation rn that kept its angular
// momentum lw (world; lb and wb in the old body frame): rn (wb + I^-1 (rnT lw - lb)),
// given rtl = rnT lw (the energy guard reads it too).
static ls_vec3 gyro_omega(const ls_body *b, const ls_mat3 *rn, ls_vec3 wb, ls_vec3 lb, ls_vec3 rtl)
{
    ls_vec3 dl = ls_vec3_sub(rtl, lb);
    return mat_vec(rn, ls_vec3_add(wb, mat_vec(&b->gyro_m, dl)));
}

// Rotate by w over h, keeping the angular momentum (gyro.c explains). Why a
// predictor-corrector: turning by the old w and then updating w (explicit)
// gains ~1 % kinetic energy per second on a tumbling box; turning by the
// mean of the old and the predicted w is second order and keeps it.
//
// Why the rotation matrix of a body without gyroscopic motion is not always
// renewed here: within the sub-steps the contacts and the ball lanes read the
// rotation since the tick began (dq), and the matrix is made from q again for
// every moving body when the solve ends (ls_body_update_pose_), so only the
// bodies of joints solved outside the lanes, which read it (LS_STATE_POSE),
// need it every sub-step.
void ls_rotate_gyro_(ls_body *b, ls_solver_body *s, ls_fx h)
{
    ls_mat3 r = b->xf.r;
    ls_vec3 wb = mat_tvec(&r, s->w);      // body frame
    ls_vec3 lb = mat_vec(&b->gyro_i, wb); // scaled angular momentum
    ls_vec3 lw = mat_vec(&r, lb);         // world
    ls_quat q1 = integrate_q(b->q, s->w, h);
    ls_mat3 r1 = ls_mat3_from_quat(q1);
    ls_vec3 w1 = gyro_omega(b, &r1, wb, lb, mat_tvec(&r1, lw));
    ls_vec3 wm = ls_vec3_make(ls_fx_add(s->w.x, w1.x) / 2, ls_fx_add(s->w.y, w1.y) / 2,
                              ls_fx_add(s->w.z, w1.z) / 2);
    b->q = integrate_q(b->q, wm, h);
    b->xf.r = ls_mat3_from_quat(b->q);
    ls_vec3 rtl = mat_tvec(&b->xf.r, lw);
    ls_vec3 w2 = gyro_omega(b, &b->xf.r, wb, lb, rtl);
    // Energy guard: 2E = w.L (scaled units). The scheme's own error is far
    // below 1/1024 per sub-step; a larger rise (extreme spin, rounding of a
    // badly conditioned inertia) is cut back so energy can never run away.
    int64_t e0 = ls_vec3_dot_q32(wb, lb);
    ls_vec3 wb2 = mat_tvec(&b->xf.r, w2);
    int64_t e1 = ls_vec3_dot_q32(wb2, rtl);
    if (e0 > 0 && e1 - e0 > (e0 >> 10)) {
        while (e1 >= ((int64_t)1 << 46)) {
            e0 >>= 1;
            e1 >>= 1;
        }
        ls_fx ratio = e1 > 0 ? (ls_fx)((e0 << 16) / e1) : LS_FX_ONE;
        w2 = ls_vec3_scale(w2, ratio);
    }
    s->w = w2;
    s->dq = ls_joint_quat_mul_(b->q, ls_quat_conj(b->q0)); // unit: the short path
}

static void integrate_rotation(ls_body *b, ls_solver_body *s, ls_fx h)
{
    if (!b->gyro) {
        b->q = integrate_q(b->q, s->w, h);
        if (s->flags & LS_STATE_POSE) {
            b->xf.r = ls_mat3_from_quat(b->q);
        }
        s->dq = ls_joint_quat_mul_(b->q, ls_quat_conj(b->q0)); // unit: the short path
        return;
    }
    ls_rotate_gyro_(b, s, h);
}

// Positions of a moving or kinematic body for one sub-step, and its motion
// since the tick began (dp, dq) for the constraints.
// Why the exact sum: with sub-steps each v h is a few hundred raw units, so
// rounding it every sub-step erred by up to 0.5 ulp in a few hundred, the
// same way each time for a steady velocity: a body in free flight drifted off
// its straight line (0.1 % of its speed at 8 sub-steps) and a pair of them
// gained or lost angular momentum about a fixed point. The motion since the
// tick began is kept exact in Q32.32 and the position rounded from it.
static void integrate_position(const ls_step_ctx *ctx, ls_body *b, ls_solver_body *s,
                               ls_solver_mass *m)
{
    const int32_t v[3] = {s->v.x, s->v.y, s->v.z};
    int32_t d[3];
    for (int k = 0; k < 3; k++) {
        m->moved[k] += (int64_t)v[k] * ctx->h;
        d[k] = (int32_t)ls_rnd(m->moved[k], 16);
    }
    s->dp = ls_vec3_make(d[0], d[1], d[2]);
    b->p = ls_vec3_add(b->p0, s->dp);
}

// World inverse inertia R I^-1 R^T of a dynamic body in Q12.20: exact sums
// (R I^-1 in Q32, then the product with R^T in Q48), rounded once.
static void inverse_inertia_q20(const ls_body *b, int32_t *out)
{
    const ls_mat3 *r = &b->xf.r, *m = &b->inv_inertia;
    int64_t t[3][3];
    for (int i = 0; i < 3; i++) {
        ls_vec3 ri = r->row[i];
        for (int j = 0; j < 3; j++) {
            ls_vec3 mj = ls_mat3_col(*m, j);
            t[i][j] = (int64_t)ri.x * mj.x + (int64_t)ri.y * mj.y + (int64_t)ri.z * mj.z;
        }
    }
    const int idx[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int k = 0; k < 6; k++) {
        int i = idx[k][0], j = idx[k][1];
        ls_vec3 rj = r->row[j];
        int64_t x = ls_rnd(t[i][0] * rj.x + t[i][1] * rj.y + t[i][2] * rj.z, 28);
        x = x >= LS_LANE_LIMIT ? LS_LANE_LIMIT - 1 : x < -LS_LANE_LIMIT ? -LS_LANE_LIMIT : x;
        out[k] = (int32_t)x;
    }
}

// The solver masses of state s (a dynamic body): 1/m in Q10.22 from the
// body's mass, rounded to nearest, and its world inverse inertia.
static void prepare_mass(const ls_world *w, const ls_body *b, ls_solver_mass *m)
{
    memset(m, 0, sizeof *m);
    m->p = b->p;
    if (b->type == LS_BODY_DYNAMIC) {
        m->acc = ls_vec3_mad(w->def.gravity, b->force, b->inv_mass);
    }
    if (b->type != LS_BODY_DYNAMIC || b->mass <= 0) {
        return;
    }
    int64_t mass = b->mass;
    m->inv_mass = (int32_t)((((int64_t)1 << (16 + LS_INV_MASS_BITS)) + mass / 2) / mass);
    inverse_inertia_q20(b, m->inv_inertia);
}

// ---- scratch -------------------------------------------------------------

// Contact groups a world may need in one tick: every contact in its own
// lane, plus a partly filled group per colour and for the overflow.
static size_t max_groups(const ls_world_def *def)
{
    // Per colour one partly filled group per point count (pack), one in the
    // overflow range.
    return (size_t)def->max_contacts / LS_LANES + (LS_GRAPH_MAX_COLOURS + 1) * LS_MANIFOLD_MAX + 2;
}

static size_t max_joint_slots(const ls_world_def *def)
{
    return def->max_joints ? def->max_joints : 1;
}

// Ball joint groups a world may need in one tick (like max_groups).
static size_t max_ball_groups(const ls_world_def *def)
{
    return max_joint_slots(def) / LS_LANES + LS_GRAPH_MAX_COLOURS + 2;
}

// The arrays of the scratch, in allocation order, each aligned to 64 bytes.
typedef struct layout {
    size_t states, impact, masses, body_state, groups, rolling, ovf, balls, ball_ovf, ball_rows,
        joints, contacts, total;
} layout;

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static layout layout_of(const ls_world_def *def)
{
    layout l;
    size_t nb = (size_t)def->max_bodies + 1, ng = max_groups(def);
    l.states = 0;
    l.impact = l.states + align64(nb * sizeof(ls_solver_body));
    l.masses = l.impact + align64(nb * sizeof(ls_solver_body));
    l.body_state = l.masses + align64(nb * sizeof(ls_solver_mass));
    l.groups = l.body_state + align64(nb * sizeof(uint32_t));
    l.rolling = l.groups + align64(ng * sizeof(ls_contact_lanes));
    l.ovf = l.rolling + align64(ng * sizeof(ls_rolling_lanes));
    l.balls = l.ovf + align64(ng * sizeof(uint32_t));
    l.ball_ovf = l.balls + align64(max_ball_groups(def) * sizeof(ls_ball_lanes));
    l.ball_rows = l.ball_ovf + align64(max_ball_groups(def) * sizeof(uint32_t));
    l.joints = l.ball_rows + align64(max_ball_groups(def) * sizeof(uint32_t));
    l.contacts = l.joints + align64(max_joint_slots(def) * sizeof(uint32_t));
    l.total = l.contacts + align64(((size_t)def->max_contacts + 1) * sizeof(uint32_t));
    return l;
}

size_t ls_solver_scratch_size_(const ls_world_def *def)
{
    return layout_of(def).total + 64;
}

bool ls_solver_scratch_init_(ls_solver_scratch *sv, const ls_world_def *def)
{
    memset(sv, 0, sizeof *sv);
    layout l = layout_of(def);
    sv->memory = calloc(1, l.total + 64);
    if (!sv->memory) {
        return false;
    }
    uint8_t *base = (uint8_t *)(((uintptr_t)sv->memory + 63) & ~(uintptr_t)63);
    sv->states = (ls_solver_body *)(void *)(base + l.states);
    sv->impact = (ls_solver_body *)(void *)(base + l.impact);
    sv->masses = (ls_solver_mass *)(void *)(base + l.masses);
    sv->body_state = (uint32_t *)(void *)(base + l.body_state);
    sv->groups = (ls_contact_lanes *)(void *)(base + l.groups);
    sv->rolling = (ls_rolling_lanes *)(void *)(base + l.rolling);
    sv->group_ovf = (uint32_t *)(void *)(base + l.ovf);
    sv->balls = (ls_ball_lanes *)(void *)(base + l.balls);
    sv->ball_ovf = (uint32_t *)(void *)(base + l.ball_ovf);
    sv->ball_rows = (uint32_t *)(void *)(base + l.ball_rows);
    sv->max_balls = (uint32_t)max_ball_groups(def);
    sv->joint_order = (uint32_t *)(void *)(base + l.joints);
    sv->contact_list = (uint32_t *)(void *)(base + l.contacts);
    sv->max_groups = (uint32_t)max_groups(def);
    bool avx2 = def->simd != LS_SIMD_SCALAR && ls_contact_avx2_supported_();
    bool avx512 = (def->simd == LS_SIMD_AUTO || def->simd == LS_SIMD_AVX512) &&
                  ls_contact_avx512_supported_();
    sv->kernels = avx512 ? &ls_contact_kernels_avx512_
                  : avx2 ? &ls_contact_kernels_avx2_
                         : &ls_contact_kernels_scalar_;
    sv->ball_kernels = avx512 ? &ls_ball_kernels_avx512_
                       : avx2 ? &ls_ball_kernels_avx2_
                              : &ls_ball_kernels_scalar_;
    sv->rotate_lanes = avx512 ? 8 : avx2 ? 4 : 0;
    return true;
}

bool ls_simd_available(ls_simd simd)
{
    switch (simd) {
    case LS_SIMD_AUTO:
    case LS_SIMD_SCALAR:
        return true;
    case LS_SIMD_AVX2:
        return ls_contact_avx2_supported_();
    case LS_SIMD_AVX512:
        return ls_contact_avx512_supported_() && ls_contact_avx2_supported_();
    }
    return false;
}

const char *ls_world_simd_name(const ls_world *w)
{
    return w->solver.kernels->name;
}

void ls_solver_scratch_free_(ls_solver_scratch *sv)
{
    free(sv->memory);
    memset(sv, 0, sizeof *sv);
}

// ---- stages --------------------------------------------------------------

typedef struct stage {
    ls_world *w;
    const ls_step_ctx *ctx;
    ls_contact_sweep sweep;
    ls_ball_sweep ball;
    uint32_t colour;              ///< the colour being swept
    uint8_t flag[LS_WORKERS_MAX]; ///< per worker: a lane may bounce, fired, or is a chain
} stage;

// Whether a worker raised its flag (then clear them all).
static bool any_flag(stage *st)
{
    bool any = false;
    for (uint32_t k = 0; k < LS_WORKERS_MAX; k++) {
        any = any || st->flag[k] != 0;
        st->flag[k] = 0;
    }
    return any;
}

static void states_masses(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        uint32_t s = i + 1;
        prepare_mass(st->w, &st->w->bodies[sv->states[s].body], &sv->masses[s]);
    }
}

static void states_velocities(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        ls_solver_body *s = &sv->states[i + 1];
        if (s->flags & LS_STATE_WRITABLE) {
            integrate_velocity(st->ctx, &st->w->bodies[s->body], sv->masses[i + 1].acc, s);
        }
    }
}

static void states_positions(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    (void)worker;
    ls_fx h = st->ctx->h;
    uint32_t lanes = sv->rotate_lanes;
    ls_body *wb[8];
    ls_solver_body *ws[8];
    uint32_t n = 0;
    for (uint32_t i = begin; i < end; i++) {
        ls_solver_body *s = &sv->states[i + 1];
        ls_body *b = &st->w->bodies[s->body];
        integrate_position(st->ctx, b, s, &sv->masses[i + 1]);
        sv->masses[i + 1].w_step = s->w;
        if (!(s->w.x || s->w.y || s->w.z)) {
            continue;
        }
        if (lanes == 0 || !b->gyro) {
            integrate_rotation(b, s, h);
            continue;
        }
        // Gyroscopic bodies four or eight at a time (rotate.h); each body's
        // rotation reads and writes only its own records, so the order is free.
        wb[n] = b;
        ws[n] = s;
        if (++n == lanes) {
            uint32_t done =
                lanes == 8 ? ls_rotate_gyro8_avx512_(wb, ws, h) : ls_rotate_gyro4_avx2_(wb, ws, h);
            for (uint32_t l = 0; l < lanes; l++) {
                if (!(done >> l & 1u)) {
                    ls_rotate_gyro_(wb[l], ws[l], h);
                }
            }
            n = 0;
        }
    }
    for (uint32_t l = 0; l < n; l++) {
        ls_rotate_gyro_(wb[l], ws[l], h);
    }
}

// The impact states: no velocity change yet, untagged (contact_solver.c).
static void states_impact(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        ls_solver_body *s = &sv->impact[i];
        memset(s, 0, sizeof *s);
        s->flags = sv->states[i].flags;
        s->pad = -1;
    }
}

static void states_finish(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        const ls_solver_body *s = &sv->states[i + 1];
        ls_body *b = &st->w->bodies[s->body];
        b->linear_velocity = s->v;
        b->angular_velocity = s->w;
    }
}

// Groups with this many contacts or fewer take the scalar reference on every
// path. Why: a vector sweep costs the same for one contact as for eight, and
// the reference skips empty lanes, so a sparse group (a small scene's colours
// and point counts spread its few contacts over many groups) is cheaper lane
// by lane; the reference and the vector paths give the same bits, so which
// path takes a group changes nothing else.
#define SCALAR_MAX_LIVE 2

static const ls_contact_kernels *kernels_of(const ls_solver_scratch *sv, const ls_contact_lanes *g,
                                            bool overflow)
{
    return overflow || g->live <= SCALAR_MAX_LIVE ? &ls_contact_kernels_scalar_ : sv->kernels;
}

static void groups_prepare(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    bool bounce = false;
    for (uint32_t gi = begin; gi < end; gi++) {
        ls_contact_lanes *g = &sv->groups[gi];
        ls_rolling_lanes *roll = g->rolling >= 0 ? &sv->rolling[g->rolling] : NULL;
        ls_contact_prep t;
        uint32_t live = 0;
        for (uint32_t l = 0; l < LS_LANES; l++) {
            live += g->contact[l] != UINT32_MAX;
        }
        g->live = live;
        // A group with empty lanes: zero every lane field at once (the
        // prepare's per-lane clearing writes one word in LS_LANES).
        t.cleared = live + 2 <= LS_LANES;
        t.points_cleared = t.cleared;
        if (t.cleared) {
            memset(&t, 0, offsetof(ls_contact_prep, cleared));
            memset(&g->a, 0, offsetof(ls_contact_lanes, contact) - offsetof(ls_contact_lanes, a));
            if (roll) {
                memset(roll, 0, sizeof *roll);
            }
        } else {
            // A full group: the point slots some lane leaves empty (from the
            // fewest points of a lane on) and the rolling block zeroed for
            // every lane at once; lane by lane they cost one store per field
            // and lane (a capsule's manifold has 1 or 2 points of 4).
            uint32_t fewest = LS_MANIFOLD_MAX;
            for (uint32_t l = 0; l < LS_LANES; l++) {
                uint32_t ci = g->contact[l];
                uint32_t n = ci == UINT32_MAX ? 0 : (uint32_t)st->w->contacts[ci].m.count;
                fewest = n < fewest ? n : fewest;
            }
            memset(&g->p[fewest], 0, (LS_MANIFOLD_MAX - fewest) * sizeof g->p[0]);
            if (roll) {
                memset(roll, 0, sizeof *roll);
            }
            t.points_cleared = 1;
        }
        uint32_t mask = kernels_of(sv, g, false)->prepare(st->w, st->ctx, g, roll, &t);
        uint32_t points = 0;
        for (uint32_t l = 0; l < LS_LANES; l++) {
            points = g->count[l] > points ? g->count[l] : points;
        }
        g->points = (int32_t)points;
        // The lanes with restitution; the tick may bounce if a point of one
        // approaches faster than the threshold (the impact pass).
        uint32_t may = 0;
        for (uint32_t l = 0; l < LS_LANES; l++) {
            if (g->count[l] == 0 || g->restitution[l] == 0) {
                continue;
            }
            may |= 1u << l;
            for (uint32_t i = 0; i < g->count[l]; i++) {
                bounce = bounce || g->p[i].vn0[l] < st->sweep.threshold;
            }
        }
        g->impact = may << LS_IMPACT_MAY;
        sv->group_ovf[gi] = mask;
    }
    if (bounce) {
        st->flag[worker] = 1; // written only when set: the flags share a cache line
    }
}

// The prepare of active joints begin..end-1 (a ball joint has none: its
// lane does it all). Each touches only its own joint.
static void joints_prepare(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_world *w = st->w;
    (void)worker;
    for (uint32_t k = begin; k < end; k++) {
        ls_joint *j = &w->joints[w->active_joints[k]];
        if (j->type != LS_JOINT_BALL) {
            ls_joint_prepare_(w, j, st->ctx);
        }
    }
}

// The accumulated impulses of ball groups begin..end-1 back to their joints
// (a joint is in one lane of one group).
static void balls_store(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    (void)worker;
    for (uint32_t bi = begin; bi < end; bi++) {
        ls_ball_store_(st->w, &st->w->solver.balls[bi]);
    }
}

// The reaction of active joints begin..end-1 (each writes its own joint).
static void joints_reaction(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    (void)worker;
    for (uint32_t k = begin; k < end; k++) {
        ls_joint_reaction_(st->w, &st->w->joints[st->w->active_joints[k]], st->ctx);
    }
}

static void balls_prepare(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    (void)worker;
    for (uint32_t gi = begin; gi < end; gi++) {
        ls_ball_lanes *g = &sv->balls[gi];
        bool wide = gi < sv->colour_ball[sv->colour_count]; // not the serial colour
        // Every field of every lane is refilled: one memset of the group
        // instead of a strided clear per lane (a word in LS_LANES each).
        uint32_t joints[LS_LANES];
        memcpy(joints, g->joint, sizeof joints);
        memset(g, 0, sizeof *g);
        uint32_t mask = 0;
        for (uint32_t l = 0; l < LS_LANES; l++) {
            mask |= ls_ball_prepare_lane_(st->w, g, l, joints[l], wide) << l;
        }
        // The whole warm start in the lanes when every joint with rows is a
        // hinge with only its alignment rows (joint_lanes.h, al_warm).
        uint32_t rows = sv->ball_rows[gi];
        bool pure = wide && rows != 0;
        for (uint32_t r = rows; r != 0 && pure; r &= r - 1) {
            const ls_joint *j = &st->w->joints[g->joint[__builtin_ctz(r)]];
            const ls_joint_kind *kind = ls_joint_kind_of_(j->type);
            pure = kind->align_only && kind->align_only(j);
        }
        for (uint32_t r = pure ? rows : 0; r != 0; r &= r - 1) {
            g->al_warm[__builtin_ctz(r)] = 1;
        }
        sv->ball_ovf[gi] = mask;
    }
}

static void groups_store(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    const stage *st = p;
    ls_solver_scratch *sv = &st->w->solver;
    (void)worker;
    for (uint32_t gi = begin; gi < end; gi++) {
        const ls_contact_lanes *g = &sv->groups[gi];
        ls_contact_store_(st->w, g, g->rolling >= 0 ? &sv->rolling[g->rolling] : NULL);
    }
}

typedef enum sweep_kind {
    SWEEP_WARM,
    SWEEP_SOLVE,
    SWEEP_RESTITUTION,
    SWEEP_IMPACT,
    SWEEP_IMPACT_END
} sweep_kind;

// One item of a colour: joint k (< the colour's joint count), else a group.
static void sweep_item(stage *st, sweep_kind kind, uint32_t item, bool overflow, uint32_t worker)
{
    ls_world *w = st->w;
    ls_solver_scratch *sv = &w->solver;
    uint32_t c = st->colour;
    uint32_t nj = sv->colour_joint[c + 1] - sv->colour_joint[c];
    uint32_t nb = sv->colour_ball[c + 1] - sv->colour_ball[c];
    if (item < nj) {
        ls_joint *j = &w->joints[w->active_joints[sv->joint_order[sv->colour_joint[c] + item]]];
        if (kind == SWEEP_WARM) {
            ls_joint_warm_start_(w, j);
        } else if (kind == SWEEP_SOLVE) {
            ls_joint_solve_(w, j, st->ctx, st->sweep.use_bias);
        }
        return;
    }
    if (item < nj + nb) {
        uint32_t bi = sv->colour_ball[c] + item - nj;
        const ls_ball_kernels *bk = overflow ? &ls_ball_kernels_scalar_ : sv->ball_kernels;
        // The joints' other rows first (a fixed joint's angular block;
        // joint.h), on this thread: they touch the same bodies. A hinge's
        // rows and a cone's are the lanes' (joint_lanes.h): their impulses go
        // back to the joint for its warm start, which leaves the rows for
        // the lanes to copy, and the joint solves none of them itself.
        if (kind == SWEEP_WARM || kind == SWEEP_SOLVE) {
            ls_ball_lanes *g = &sv->balls[bi];
            for (uint32_t rows = sv->ball_rows[bi]; rows != 0; rows &= rows - 1) {
                uint32_t l = (uint32_t)__builtin_ctz(rows);
                ls_joint *j = &w->joints[g->joint[l]];
                if (kind == SWEEP_WARM && g->al_warm[l]) {
                    continue; // the kernel's (joint_lanes.h)
                }
                bool in_lanes = g->al_on[l] || g->cn_on[l];
                if (kind == SWEEP_WARM) {
                    if (in_lanes) {
                        ls_ball_align_load_(w, g, l);
                    }
                    ls_joint_warm_start_(w, j);
                    if (in_lanes) {
                        ls_ball_align_fill_(w, g, l, st->ctx->h);
                    }
                } else if (in_lanes) {
                    // Rows the lanes solve: in the relax pass, the angles
                    // the lanes do not step, measured at the moved pose.
                    if (!st->sweep.use_bias) {
                        ls_ball_relax_angles_(w, g, l);
                    }
                } else {
                    ls_joint_solve_(w, j, st->ctx, st->sweep.use_bias);
                }
            }
        }
        if (kind == SWEEP_WARM) {
            sv->ball_ovf[bi] |= bk->warm_start(&st->ball, &sv->balls[bi]);
        } else if (kind == SWEEP_SOLVE) {
            sv->ball_ovf[bi] |= bk->solve(&st->ball, &sv->balls[bi]);
        }
        return;
    }
    uint32_t gi = sv->colour_group[c] + item - nj - nb;
    ls_contact_lanes *g = &sv->groups[gi];
    // No software prefetch: a colour's groups are contiguous and swept in
    // order, which the hardware prefetcher follows; prefetching each 5 KB
    // group explicitly (83 lines) cost 13 % of large_pyramid's time in stalls.
    const ls_contact_kernels *k = kernels_of(sv, g, overflow);
    uint32_t mask;
    if (kind == SWEEP_WARM) {
        mask = k->warm_start(&st->sweep, g);
    } else if (kind == SWEEP_SOLVE) {
        mask = k->solve(&st->sweep, g);
    } else if (kind == SWEEP_RESTITUTION) {
        mask = k->restitution(&st->sweep, g);
        if ((g->impact >> LS_IMPACT_FIRED & 0xffu) != 0) {
            st->flag[worker] = 1; // a chain lane still moves
        }
    } else if (kind == SWEEP_IMPACT) {
        // The impact pass is scalar on every path (as the restitution).
        mask = ls_contact_impact_scalar_(&st->sweep, g);
        if ((g->impact >> LS_IMPACT_FIRED & 0xffu) != 0) {
            st->flag[worker] = 1;
        }
    } else {
        mask = ls_contact_impact_end_scalar_(&st->sweep, g);
        if ((g->impact >> LS_IMPACT_CHAIN & 0xffu) != 0) {
            st->flag[worker] = 1;
        }
    }
    sv->group_ovf[gi] |= mask;
}

static void sweep_warm(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    for (uint32_t i = begin; i < end; i++) {
        sweep_item(p, SWEEP_WARM, i, false, worker);
    }
}

static void sweep_solve(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    for (uint32_t i = begin; i < end; i++) {
        sweep_item(p, SWEEP_SOLVE, i, false, worker);
    }
}

static void sweep_restitution(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    for (uint32_t i = begin; i < end; i++) {
        sweep_item(p, SWEEP_RESTITUTION, i, false, worker);
    }
}

static void sweep_impact(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    for (uint32_t i = begin; i < end; i++) {
        sweep_item(p, SWEEP_IMPACT, i, false, worker);
    }
}

static void sweep_impact_end(void *p, uint32_t begin, uint32_t end, uint32_t worker)
{
    for (uint32_t i = begin; i < end; i++) {
        sweep_item(p, SWEEP_IMPACT_END, i, false, worker);
    }
}

// Blocks of at least this many items or bodies per worker: smaller loops are
// not worth waking a thread for. Items (a joint, or a group of 8 contact or
// ball lanes): 8, so a colour goes to the workers from 16 items on. Why not
// 4: the disturbed pile_1000 of the rollback bench (190 awake bodies, a few
// groups per colour) waited for the second worker at every colour of every
// sweep, and its frame took 5.67-5.78 ms with 2 workers against 5.53-5.67
// with 8 (interleaved runs); rain, large_pyramid, convex_pile and
// joint_grid with 2 workers moved within their noise.
#define MIN_ITEM_BLOCK 8
#define MIN_BODY_BLOCK 128

// Sweep every colour in turn (each colour's items in parallel), then the
// overflow range on this thread, joints then groups lane after lane.
static void for_colours(ls_world *w, stage *st, sweep_kind kind, ls_workers_fn *fn)
{
    const ls_solver_scratch *sv = &w->solver;
    for (uint32_t c = 0; c < sv->colour_count; c++) {
        uint32_t n = sv->colour_joint[c + 1] - sv->colour_joint[c] + sv->colour_ball[c + 1] -
                     sv->colour_ball[c] + sv->colour_group[c + 1] - sv->colour_group[c];
        st->colour = c;
        ls_workers_for_(w->workers, n, MIN_ITEM_BLOCK, fn, st);
    }
    uint32_t c = sv->colour_count;
    uint32_t n = sv->colour_joint[c + 1] - sv->colour_joint[c] + sv->colour_ball[c + 1] -
                 sv->colour_ball[c] + sv->colour_group[c + 1] - sv->colour_group[c];
    st->colour = c;
    for (uint32_t i = 0; i < n; i++) {
        sweep_item(st, kind, i, true, 0);
    }
}

// Sweeps of the impact pass at most (a row of n touching bodies needs about
// n / 2 with two colours), and restitution sweeps at most while chain lanes
// still move (5 balls of Newton's cradle: 8).
#define IMPACT_SWEEPS 32
#define CHAIN_SWEEPS  32

// The impact pass (contact_solver.c) after the sub-steps: true when some
// lane is a chain (its restitution target set by the pass).
static bool impact_pass(ls_world *w, stage *st)
{
    ls_solver_scratch *sv = &w->solver;
    ls_workers_for_(w->workers, sv->state_count, MIN_BODY_BLOCK, states_impact, st);
    ls_solver_body *states = st->sweep.states;
    st->sweep.states = sv->impact;
    any_flag(st);
    for (uint32_t k = 0; k < IMPACT_SWEEPS; k++) {
        for_colours(w, st, SWEEP_IMPACT, sweep_impact);
        if (!any_flag(st)) {
            break;
        }
    }
    for_colours(w, st, SWEEP_IMPACT_END, sweep_impact_end);
    st->sweep.states = states;
    return any_flag(st);
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
    return j->alive && (ls_body_moves_(&w->bodies[j->a]) || ls_body_moves_(&w->bodies[j->b]));
}

static bool contact_active(const ls_world *w, const ls_contact *c)
{
    return c->m.count > 0 && (ls_body_moves_(&w->bodies[c->a]) || ls_body_moves_(&w->bodies[c->b]));
}

// The graph's view of a constraint: bodies it may write (moving ones only).
static ls_graph_edge edge_of(const ls_world *w, uint32_t a, uint32_t b)
{
    ls_graph_edge e = {ls_body_moves_(&w->bodies[a]) ? a : UINT32_MAX,
                       ls_body_moves_(&w->bodies[b]) ? b : UINT32_MAX};
    return e;
}

// Solver states: the identity, then every awake dynamic or kinematic body in
// slot order; other bodies read the identity.
static void build_states(ls_world *w)
{
    ls_solver_scratch *sv = &w->solver;
    ls_solver_body *id = &sv->states[0];
    memset(id, 0, sizeof *id);
    id->dq = ls_quat_identity();
    id->body = UINT32_MAX;
    memset(&sv->masses[0], 0, sizeof sv->masses[0]);
    uint32_t n = 1;
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (!b->alive || b->type == LS_BODY_STATIC || b->asleep) {
            b->state = 0;
            sv->body_state[i] = 0;
            continue;
        }
        ls_solver_body *s = &sv->states[n];
        memset(s, 0, sizeof *s);
        s->v = b->linear_velocity;
        s->w = b->angular_velocity;
        s->flags = b->type == LS_BODY_DYNAMIC ? LS_STATE_WRITABLE : 0u;
        s->body = i;
        s->dq = ls_quat_identity();
        b->p0 = b->p;
        b->q0 = b->q;
        sv->body_state[i] = n;
        b->state = n++;
    }
    sv->state_count = n;
}

// A new contact group, every lane empty.
static ls_contact_lanes *new_group(ls_solver_scratch *sv, uint32_t *groups)
{
    ls_contact_lanes *gr = &sv->groups[(*groups)++];
    for (uint32_t l = 0; l < LS_LANES; l++) {
        gr->contact[l] = UINT32_MAX;
    }
    gr->rolling = -1;
    return gr;
}

// Group the coloured constraints: per colour its joints (in order) and its
// contacts packed LS_LANES to a group, the overflow range last.
//
// Why contacts are packed by point count: a manifold solves its points in a
// rotating order that depends on its point count (contact_solver.c,
// slot_at), and a group's vector sweep runs the slots of its largest count.
// With every lane of a group holding the same count, each manifold's order is
// its own -- not its neighbours' -- so the bits do not depend on LS_LANES
// (8 for AVX2 and scalar, 4 for SSE2 or NEON). Within a colour no two
// contacts share a moving body, so the order of the groups cannot matter. The
// overflow range is solved serially in index order by the scalar kernel, which
// takes each lane's own point count: there contacts are packed in order.
static void pack(ls_world *w, uint32_t nj)
{
    ls_solver_scratch *sv = &w->solver;
    const ls_graph *g = &w->graph;
    uint32_t joints = 0, groups = 0, rolling = 0, balls = 0;
    sv->colour_count = g->colour_count;
    for (uint32_t c = 0; c <= g->colour_count; c++) {
        sv->colour_joint[c] = joints;
        sv->colour_group[c] = groups;
        sv->colour_ball[c] = balls;
        uint32_t ball_lane = LS_LANES;
        // The open group of each point count (1..LS_MANIFOLD_MAX) and its next lane.
        ls_contact_lanes *open[LS_MANIFOLD_MAX + 1] = {NULL};
        uint32_t lane[LS_MANIFOLD_MAX + 1];
        bool serial = c == g->colour_count;
        for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++) {
            uint32_t item = g->order[k];
            const ls_joint_kind *jk =
                item < nj ? ls_joint_kind_of_(w->joints[w->active_joints[item]].type) : NULL;
            if (jk && jk->point_in_lanes) {
                // Point blocks go to the wide path (joint_lanes.h), with the
                // joint's other rows run just before them.
                if (ball_lane == LS_LANES) {
                    ls_ball_lanes *bg = &sv->balls[balls];
                    sv->ball_rows[balls++] = 0;
                    for (uint32_t l = 0; l < LS_LANES; l++) {
                        bg->joint[l] = UINT32_MAX;
                    }
                    ball_lane = 0;
                }
                if (jk->solve) {
                    sv->ball_rows[balls - 1] |= 1u << ball_lane;
                }
                sv->balls[balls - 1].joint[ball_lane++] = w->active_joints[item];
                continue;
            }
            if (item < nj) {
                sv->joint_order[joints++] = item;
                continue;
            }
            uint32_t ci = sv->contact_list[item - nj];
            uint32_t n = (uint32_t)w->contacts[ci].m.count;
            n = n > LS_MANIFOLD_MAX ? LS_MANIFOLD_MAX : n;
            uint32_t key = serial ? 0 : n; // the overflow range: one group at a time, in order
            if (open[key] == NULL || lane[key] == LS_LANES) {
                open[key] = new_group(sv, &groups);
                lane[key] = 0;
            }
            ls_contact_lanes *gr = open[key];
            gr->contact[lane[key]++] = ci;
            if (gr->rolling < 0 && w->contacts[ci].m.count <= 2 && w->def.rolling_resistance > 0) {
                gr->rolling = (int32_t)rolling++;
            }
        }
    }
    sv->colour_joint[g->colour_count + 1] = joints;
    sv->colour_group[g->colour_count + 1] = groups;
    sv->colour_ball[g->colour_count + 1] = balls;
    sv->group_count = groups;
    sv->rolling_count = rolling;
    sv->ball_count = balls;
}

// Report the lane that left the solver range (SPEC.md §2): the writable body
// of the overflowing contact of smallest index, else of the ball joint of
// smallest slot (by index, not by group: the packing depends on LS_LANES).
static void report_overflows(ls_world *w)
{
    const ls_solver_scratch *sv = &w->solver;
    uint32_t best = UINT32_MAX;
    for (uint32_t gi = 0; gi < sv->group_count; gi++) {
        for (uint32_t mask = sv->group_ovf[gi]; mask != 0; mask &= mask - 1) {
            uint32_t ci = sv->groups[gi].contact[__builtin_ctz(mask)];
            best = ci < best ? ci : best;
        }
    }
    if (best != UINT32_MAX) {
        const ls_contact *c = &w->contacts[best];
        ls_world_report_overflow_(w, ls_body_moves_(&w->bodies[c->a]) ? c->a : c->b);
        return;
    }
    for (uint32_t bi = 0; bi < sv->ball_count; bi++) {
        for (uint32_t mask = sv->ball_ovf[bi]; mask != 0; mask &= mask - 1) {
            uint32_t ji = sv->balls[bi].joint[__builtin_ctz(mask)];
            best = ji < best ? ji : best;
        }
    }
    if (best != UINT32_MAX) {
        const ls_joint *j = &w->joints[best];
        ls_world_report_overflow_(w, ls_body_moves_(&w->bodies[j->a]) ? j->a : j->b);
    }
}

void ls_world_solve_(ls_world *w)
{
    ls_solver_scratch *sv = &w->solver;
    ls_step_ctx ctx = make_ctx(w);
    ctx.states = sv->states;
    stage st;
    memset(&st, 0, sizeof st);
    st.w = w;
    st.ctx = &ctx;
    build_states(w);
    uint32_t nstates = sv->state_count - 1;
    ls_workers_for_(w->workers, nstates, MIN_BODY_BLOCK, states_masses, &st);
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
            sv->contact_list[nc] = i;
            w->edges[nj + nc] = edge_of(w, w->contacts[i].a, w->contacts[i].b);
            nc++;
        }
    }
    ls_graph_colour_(&w->graph, w->edges, nj + nc);
    pack(w, nj);

    st.sweep.states = sv->states;
    st.sweep.rolling = sv->rolling;
    st.sweep.inv_h = ctx.inv_h;
    st.sweep.max_push = ls_fx_neg(ctx.max_push);
    st.sweep.threshold = ls_fx_neg(w->def.restitution_threshold);
    st.ball.world = w;
    st.ball.inv_h = ctx.inv_h;
    st.ball.h = ctx.h;
    st.ball.masses = sv->masses;
    st.ball.joint = ctx.joint;
    st.ball.states = sv->states;
    st.ball.max_bias = LS_JOINT_MAX_BIAS;
    ls_workers_for_(w->workers, sv->group_count, MIN_ITEM_BLOCK, groups_prepare, &st);
    bool may_bounce = any_flag(&st);
    // The joints' prepare before the ball lanes': a lane copies a cone's
    // rows, which its prepare makes (joint_lanes.h).
    ls_workers_for_(w->workers, nj, MIN_ITEM_BLOCK, joints_prepare, &st);
    for (uint32_t k = 0; k < nj; k++) {
        const ls_joint *j = &w->joints[w->active_joints[k]];
        if (j->type != LS_JOINT_BALL) {
            sv->states[w->bodies[j->a].state].flags |= LS_STATE_POSE;
            sv->states[w->bodies[j->b].state].flags |= LS_STATE_POSE;
        }
    }
    ls_workers_for_(w->workers, sv->ball_count, MIN_ITEM_BLOCK, balls_prepare, &st);
    ls_world_lap_(w, &w->profile.prepare);
    for (uint32_t sub = 0; sub < ctx.substeps; sub++) {
        // Sub-steps of dt/n rounded alternately down and up so that they add
        // up to dt exactly (1092 / 8 is 136.5 raw): the world's clock never
        // runs slow. Softness uses the mean.
        ctx.h = (ls_fx)(((int64_t)w->dt * (sub + 1)) / ctx.substeps -
                        ((int64_t)w->dt * sub) / ctx.substeps);
        ls_workers_for_(w->workers, nstates, MIN_BODY_BLOCK, states_velocities, &st);
        for_colours(w, &st, SWEEP_WARM, sweep_warm);
        // The manifolds' point order (contact_solver.c, slot_at).
        st.sweep.first = sub;
        st.sweep.reverse = (w->tick & 1u) != 0;
        st.sweep.use_bias = true;
        st.sweep.surface = w->def.position_iterations == 0;
        st.ball.bias_rate = ctx.joint.bias_rate;
        st.ball.mass_scale = ctx.joint.mass_scale;
        st.ball.impulse_scale = ctx.joint.impulse_scale;
        st.ball.use_bias = 1;
        for (uint32_t it = 0; it < w->def.velocity_iterations; it++) {
            for_colours(w, &st, SWEEP_SOLVE, sweep_solve);
        }
        ls_workers_for_(w->workers, nstates, MIN_BODY_BLOCK, states_positions, &st);
        st.sweep.use_bias = false;
        st.sweep.surface = true;
        st.ball.bias_rate = 0;
        st.ball.mass_scale = LS_FX_ONE;
        st.ball.impulse_scale = 0;
        st.ball.use_bias = 0;
        for (uint32_t it = 0; it < w->def.position_iterations; it++) {
            for_colours(w, &st, SWEEP_SOLVE, sweep_solve);
        }
    }
    ls_world_lap_(w, &w->profile.substeps);
    // Without a point that may bounce (groups_prepare: a lane with
    // restitution approaching faster than the threshold) the restitution
    // sweep applies nothing, so it is skipped: one loop over the colours
    // less, each a wait for the workers.
    bool chain = may_bounce && impact_pass(w, &st);
    if (may_bounce) {
        for_colours(w, &st, SWEEP_RESTITUTION, sweep_restitution);
    }
    st.sweep.chain_only = true;
    for (uint32_t k = 1; chain && k < CHAIN_SWEEPS && any_flag(&st); k++) {
        for_colours(w, &st, SWEEP_RESTITUTION, sweep_restitution);
    }
    ls_workers_for_(w->workers, sv->group_count, MIN_ITEM_BLOCK, groups_store, &st);
    ls_workers_for_(w->workers, sv->ball_count, MIN_ITEM_BLOCK, balls_store, &st);
    ls_workers_for_(w->workers, nj, MIN_ITEM_BLOCK, joints_reaction, &st);
    for (uint32_t k = 0; k < nj; k++) {
        ls_joint_finish_(w, &w->joints[w->active_joints[k]]);
    }
    ls_workers_for_(w->workers, nstates, MIN_BODY_BLOCK, states_finish, &st);
    report_overflows(w);
    ls_world_lap_(w, &w->profile.restitution);
}
