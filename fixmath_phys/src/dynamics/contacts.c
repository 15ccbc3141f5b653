// SPDX-License-Identifier: MIT
// Persistent contacts. Contacts and determinism: the broad phase yields shape
// pairs sorted by (a, b); a pair makes one contact, or for a mesh one contact
// per touching triangle in triangle order, so contacts are created sorted by
// (shape a, shape b, child) and the solver (which is order-dependent) visits
// them in an order that depends only on ids. Last step's contacts are matched
// by a merge walk over the two sorted lists, and points by feature id, to carry
// impulses (warm start).
//
// Recycling (SPEC.md §11, stage 3): a contact keeps where its points sit on
// each body (anchors) and where the bodies were when its manifold was
// computed. While the bodies have moved relative to each other, and turned,
// by less than half the recycling distance since then, the pair keeps its
// manifold -- same
// normal, same points on the bodies, depths updated by the bodies' motion --
// instead of running the collide routine. Why: in a resting pile nothing
// moves more than a fraction of a millimetre a tick, and the collide routines
// (a box pair: 15 separating axes and a clipped face) are the larger part of
// the narrow phase; Box3D recycles the same way. Everything it reads is
// state (the anchors and poses are saved in snapshots), so it is as
// deterministic as the routines.
//
// Threads (SPEC.md §11 "Threads"): the manifold of a pair is a pure function
// of the two shapes' geometry and transforms, so the manifolds of all
// non-mesh pairs with a moving body are computed first, in parallel, each into
// its own slot of w->pair_manifolds; the merge walk then runs serially in pair
// order exactly as before, taking those results instead of calling the
// routine (mesh pairs, and a pair whose body was woken by an ended contact
// earlier in the same walk, are still computed in the walk). The contacts,
// events and their order are the same bits for any number of workers.
#include "../collision/collide_internal.h"
#include "../collision/shape_kind.h"
#include "../math/place.h"
#include "../math/round_div.h"
#include "../world/world_internal.h"
#include "joint.h"
#include "workers.h"

#include <stdlib.h>
#include <string.h>

static bool pair_less(uint32_t a0, uint32_t b0, uint32_t a1, uint32_t b1)
{
    return a0 < a1 || (a0 == a1 && b0 < b1);
}

static bool same_pair(const ls_contact *c, ls_pair pr)
{
    return c->shape_a == pr.a && c->shape_b == pr.b;
}

static bool body_active(const ls_body *b)
{
    return b->type == LS_BODY_KINEMATIC || (b->type == LS_BODY_DYNAMIC && !b->asleep);
}

static void push_event(ls_world *w, bool begin, const ls_contact *c)
{
    ls_contact_event e = {ls_world_id_of_(w, c->a), ls_world_id_of_(w, c->b),
                          ls_world_shape_id_of_(w, c->shape_a),
                          ls_world_shape_id_of_(w, c->shape_b)};
    if (begin) {
        w->begin_events[w->begin_count++] = e;
    } else {
        w->end_events[w->end_count++] = e;
    }
}

// A contact that existed last step is gone: report it and wake sleepers it held.
static void contact_ended(ls_world *w, const ls_contact *old)
{
    push_event(w, false, old);
    ls_body *a = &w->bodies[old->a], *b = &w->bodies[old->b];
    if (a->asleep) {
        ls_body_wake_(a);
    }
    if (b->asleep) {
        ls_body_wake_(b);
    }
}

// The old point to warm-start point i from: the one with the same feature id,
// else the nearest old point within 2 cm (feature ids of clipped vertices can
// flip when faces are exactly aligned, as in stacks). Ties go to the lower index.
static int matching_point(const ls_contact *c, int i, const ls_contact *old)
{
    for (int j = 0; j < old->m.count; j++) {
        if (old->m.points[j].feature == c->m.points[i].feature) {
            return j;
        }
    }
    const uint64_t reach = (uint64_t)1311 * 1311; // (0.02 m)^2 in Q32.32
    uint64_t best = reach + 1;
    int found = -1;
    for (int j = 0; j < old->m.count; j++) {
        uint64_t d = ls_vec3_len_sq_q32(ls_vec3_sub(old->m.points[j].point, c->m.points[i].point));
        if (d < best) {
            best = d;
            found = j;
        }
    }
    return found;
}

// Copy cached impulses from the old manifold (warm starting): the normal
// impulses point by point, the friction, twist and rolling impulses of the
// manifold's centre as they were (they live in the world frame).
static void warm_start_from(ls_contact *c, const ls_contact *old)
{
    for (int i = 0; i < c->m.count; i++) {
        int j = old ? matching_point(c, i, old) : -1;
        c->normal_impulse[i] = j >= 0 ? old->normal_impulse[j] : 0;
    }
    if (old) {
        c->friction_impulse = old->friction_impulse;
        c->twist_impulse = old->twist_impulse;
        c->rolling_impulse = old->rolling_impulse;
    }
}

// Room for one more contact; sets capacity_exceeded when there is none.
static ls_contact *next_slot(ls_world *w)
{
    if (w->contact_count == w->def.max_contacts) {
        w->info.capacity_exceeded = true;
        return NULL;
    }
    w->contact_from[w->contact_count] = UINT32_MAX; // written here, unless deferred
    return &w->contacts[w->contact_count];
}

// Keep the contact of `child` (the manifold in *c, or none) against the old
// contacts of the pair from *j on (sorted by child): old ones with a smaller
// child have ended. `warm`: the contact to warm-start from the match, or
// NULL when the parallel narrow phase already took the impulses from the same
// old contact (narrow_block).
static void merge_child(ls_world *w, const ls_contact *c, bool touching, const ls_contact *old,
                        uint32_t old_count, uint32_t *j, ls_pair pr, ls_contact *warm)
{
    while (*j < old_count && same_pair(&old[*j], pr) && old[*j].child < c->child) {
        contact_ended(w, &old[(*j)++]);
    }
    const ls_contact *match = NULL;
    if (*j < old_count && same_pair(&old[*j], pr) && old[*j].child == c->child) {
        match = &old[(*j)++];
    }
    if (!touching) {
        if (match) {
            contact_ended(w, match);
        }
        return;
    }
    if (warm) {
        warm_start_from(warm, match);
    }
    if (!match) {
        push_event(w, true, c);
    }
    w->contact_count++;
}

// How far a body's farthest point can move in one tick (Q16.16 m, 64-bit):
// (|v| + |w| extent) dt; 0 for a body that does not move.
static int64_t tick_reach(const ls_world *w, const ls_body *b)
{
    if (b->type == LS_BODY_STATIC || b->asleep) {
        return 0;
    }
    int64_t speed = (int64_t)ls_vec3_len(b->linear_velocity) +
                    (((int64_t)ls_vec3_len(b->angular_velocity) * b->extent) >> 16);
    return (speed * w->dt) >> 16;
}

// The speculative margin of a pair (SPEC.md §11.2): the world's contact
// margin, grown by how far the two bodies' farthest points can move toward
// each other this tick, at most LS_SPECULATIVE_MARGINS margins. Why: a
// contact point is only created within the margin, so a body turning fast
// about one end (a toppling domino's far end falls 8 cm a tick) went through
// the ground within one tick with no point there, and was buried; with the
// grown margin its far end's points exist as speculative ones (separation
// > 0: the solver lets them close exactly that gap). Slow pairs (resting
// piles) keep the plain margin, so their manifolds are unchanged.
static ls_fx margin_of(const ls_world *w, int64_t reach_a, int64_t reach_b)
{
    int64_t m = (int64_t)w->def.contact_margin + reach_a + reach_b;
    int64_t cap = (int64_t)w->def.contact_margin * LS_SPECULATIVE_MARGINS;
    return (ls_fx)(m < cap ? m : cap);
}

static ls_fx pair_margin(const ls_world *w, ls_pair pr)
{
    const ls_body *a = &w->bodies[w->shapes[pr.a].body], *b = &w->bodies[w->shapes[pr.b].body];
    return margin_of(w, tick_reach(w, a), tick_reach(w, b));
}

// Every body slot's tick_reach into body_reach, before the parallel narrow
// phase. Why: a pair's margin takes both bodies' reaches (two square roots
// each), and a body is in many pairs; nothing tick_reach reads changes
// during the parallel phase, so the kept value is the one it would compute
// again (the serial walk, which can wake bodies, computes afresh).
static void reach_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    ls_world *w = ctx;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        w->body_reach[i] = tick_reach(w, &w->bodies[i]);
    }
}

/// Body slots per block of the reach pass.
#define REACH_MIN_BLOCK 256

// The manifold of a non-mesh pair into *m (zeroed first, as the contact it
// becomes) with the pair's margin; returns whether the shapes touch.
static bool collide_pair(const ls_world *w, ls_pair pr, ls_fx margin, ls_manifold *m)
{
    const ls_shape *sa = &w->shapes[pr.a], *sb = &w->shapes[pr.b];
    memset(m, 0, sizeof *m);
    return ls_collide_(&sa->geom, &sa->xf, &sb->geom, &sb->xf, margin, m) > 0;
}

// A deterministic orthonormal tangent basis for unit normal n (SPEC.md §11.2).
static void tangent_basis(ls_vec3 n, ls_vec3 *t1, ls_vec3 *t2)
{
    ls_vec3 t = ls_fx_abs(n.x) >= 37837 /* 0.57735 */ ? ls_vec3_make(n.y, ls_fx_neg(n.x), 0)
                                                      : ls_vec3_make(0, n.z, ls_fx_neg(n.y));
    *t1 = ls_vec3_normalize(t, ls_vec3_make(LS_FX_ONE, 0, 0));
    *t2 = ls_vec3_cross(n, *t1);
}

// Where each point of a freshly computed manifold sits on each body, and the
// bodies' poses (the recycling data); the tangents, the points' distances
// from their mean and the mixed materials. Unused points are zero.
static void set_anchors(const ls_world *w, ls_contact *c)
{
    const ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    ls_vec3 n = c->m.normal;
    // Only the used points: the core routines are pure, so an unused point's
    // core was computed only to be dropped (the contact arrives zeroed, and
    // its unused anchors and depths stay zero).
    for (int i = 0; i < c->m.count; i++) {
        ls_vec3 p = c->m.points[i].point;
        // The anchors are the points' core points in the body frames: a round
        // shape's touching point does not turn with it, its core point does.
        ls_vec3 ca = ls_contact_core_(w, c->shape_a, p), cb = ls_contact_core_(w, c->shape_b, p);
        c->anchor_a[i] = ls_mat3_mul_tvec(a->xf.r, ls_vec3_sub(ca, a->p));
        c->anchor_b[i] = ls_mat3_mul_tvec(b->xf.r, ls_vec3_sub(cb, b->p));
        c->base_depth[i] = ls_fx_add(c->m.points[i].depth, ls_vec3_dot(n, ls_vec3_sub(cb, ca)));
    }
    for (int i = c->m.count; i < LS_MANIFOLD_MAX; i++) {
        c->anchor_a[i] = c->anchor_b[i] = ls_vec3_zero();
        c->base_depth[i] = 0;
    }
    c->pose_p[0] = a->p;
    c->pose_q[0] = a->q;
    c->pose_p[1] = b->p;
    c->pose_q[1] = b->q;
    tangent_basis(c->m.normal, &c->tangent[0], &c->tangent[1]);
    // The friction centre: the mean of the points, rounded half away from zero.
    int64_t sum[3] = {0, 0, 0};
    int count = c->m.count;
    for (int i = 0; i < count; i++) {
        sum[0] += c->m.points[i].point.x;
        sum[1] += c->m.points[i].point.y;
        sum[2] += c->m.points[i].point.z;
    }
    ls_fx mean[3] = {0, 0, 0};
    for (int k = 0; k < 3 && count > 0; k++) {
        mean[k] = (ls_fx)ls_round_div_small(sum[k], count);
    }
    for (int i = 0; i < LS_MANIFOLD_MAX; i++) {
        ls_vec3 p = c->m.points[i].point;
        c->lever[i] =
            i < count ? ls_vec3_len(ls_vec3_sub(p, ls_vec3_make(mean[0], mean[1], mean[2]))) : 0;
    }
    const ls_shape *sa = &w->shapes[c->shape_a], *sb = &w->shapes[c->shape_b];
    c->friction = ls_fx_sqrt(ls_fx_mul(sa->friction, sb->friction));
    c->restitution = ls_fx_max(sa->restitution, sb->restitution);
}

// The velocity of body b's material point at p (zero for a body at rest).
static ls_vec3 point_velocity(const ls_body *b, ls_vec3 p)
{
    if (b->type == LS_BODY_STATIC || b->asleep) {
        return ls_vec3_zero();
    }
    return ls_vec3_add(b->linear_velocity,
                       ls_vec3_cross(b->angular_velocity, ls_vec3_sub(p, b->p)));
}

// Drop the points of a new pair's fresh manifold that cannot close this
// tick (SPEC.md §11 stage 3, "Reachable points"): a point further apart than
// the world's contact margin is kept only when its gap is at most the margin
// plus twice how far the two bodies' material points there approach along
// the normal in one tick (their relative normal speed times dt) plus how far
// gravity can add to that (|g|_1 dt^2). Why: the pair's margin grows with
// the bodies' whole reach in any direction (margin_of), so that a fast
// body's far end has points; but most points of fast pairs then lie ahead of
// bodies moving sideways, together or apart (the rain scene's falling
// ragdolls: 77 % of its contacts had only such points), and each costs a
// prepare and every sweep of the tick. Twice: the approach can grow within
// the tick (a limb yanked by its joint, a body stopped under one still
// falling); with once, rain's deepest point went from 1.5 to 4.7 cm. Only a
// pair without a contact last tick (new_pair): a contact that exists keeps
// its points while they lie within the margin, as before; filtered every
// tick, a contact of two nearly resting bodies came and went with the sign
// of their jitter, and each end woke the sleeping body of the pair (the
// settled pile_1000 kept 190 bodies awake after 1,200 ticks instead of 0).
// The points kept keep their order.
static void drop_unreachable(const ls_world *w, ls_contact *c)
{
    const ls_body *a = &w->bodies[c->a], *b = &w->bodies[c->b];
    ls_fx margin = w->def.contact_margin;
    ls_vec3 g = w->def.gravity;
    int64_t g1 = (int64_t)ls_fx_abs(g.x) + ls_fx_abs(g.y) + ls_fx_abs(g.z); // Q16.16 m/s^2
    int64_t fall = (((g1 * w->dt) >> 16) * w->dt) >> 16;                    // Q16.16 m
    int kept = 0;
    for (int i = 0; i < c->m.count; i++) {
        ls_contact_point pt = c->m.points[i];
        int64_t gap = -(int64_t)pt.depth - margin;
        bool keep = gap <= 0;
        if (!keep) {
            ls_vec3 dv = ls_vec3_sub(point_velocity(b, pt.point), point_velocity(a, pt.point));
            int64_t approach = -(int64_t)ls_vec3_dot(dv, c->m.normal); // > 0: closing
            int64_t closing = (approach > 0 ? (2 * approach * w->dt) >> 16 : 0) + fall;
            keep = gap <= closing;
        }
        if (keep) {
            c->m.points[kept++] = pt;
        }
    }
    for (int i = kept; i < c->m.count; i++) {
        memset(&c->m.points[i], 0, sizeof c->m.points[i]);
    }
    c->m.count = kept;
}

// A new contact of pair pr in *c, computed by the collide routine (with its
// recycling data when the shapes touch); returns whether they touch.
static bool fresh_contact(const ls_world *w, ls_pair pr, ls_fx margin, bool new_pair, ls_contact *c)
{
    memset(c, 0, sizeof *c);
    c->shape_a = pr.a;
    c->shape_b = pr.b;
    c->a = w->shapes[pr.a].body;
    c->b = w->shapes[pr.b].body;
    bool touching = collide_pair(w, pr, margin, &c->m);
    if (touching && new_pair) {
        drop_unreachable(w, c);
        touching = c->m.count > 0;
    }
    if (touching) {
        set_anchors(w, c);
    }
    return touching;
}

// No impulses yet: the warm start (warm_start_from) sets those it finds.
static void clear_impulses(ls_contact *c)
{
    for (int k = 0; k < LS_MANIFOLD_MAX; k++) {
        c->normal_impulse[k] = 0;
    }
    c->friction_impulse = c->rolling_impulse = ls_vec3_zero();
    c->twist_impulse = 0;
}

ls_vec3 ls_contact_core_(const ls_world *w, uint32_t shape, ls_vec3 point)
{
    // A round shape's touching point does not turn with it (a rolling ball
    // touches with its bottom, not the material point that touched first),
    // but its core point does (a seesawing capsule's end cap rises and sinks
    // with the end of its segment).
    const ls_shape *s = &w->shapes[shape];
    const ls_shape_kind *k = ls_shape_kind_of(s->geom.kind);
    return k->round ? k->core(&s->geom, &s->xf, point) : point;
}

// True when body b turned little since orientation q0: its farthest point
// moved at most `half` (Q16.16 metres) by the turn (2 |vec(q conj(q0))|
// extent, compared squared). A static body must not have moved at all.
static bool turned_little(const ls_body *b, ls_vec3 p0, ls_quat q0, ls_fx half)
{
    if (b->type == LS_BODY_STATIC) {
        // Static bodies move only when teleported: any change recomputes.
        return ls_vec3_equal(b->p, p0) && ls_quat_equal(b->q, q0);
    }
    uint64_t lim = (uint64_t)half * (uint64_t)half; // Q32
    ls_vec3 dv;
    ls_quat q = b->q;
    if (ls_vec3_magnitude_bits(ls_vec3_make(q.x, q.y, q.z)) < (1u << 17) &&
        ls_vec3_magnitude_bits(ls_vec3_make(q0.x, q0.y, q0.z)) < (1u << 17) &&
        ls_vec3_magnitude_bits(ls_vec3_make(q.w, q0.w, 0)) < (1u << 17)) {
        // The vector part of q conj(q0) as ls_quat_mul computes it: with
        // components below 2^17 (unit quaternions), four products below 2^34
        // cannot saturate their sum, and its rounded value is far in range.
        int64_t x =
            -(int64_t)q.w * q0.x + (int64_t)q.x * q0.w - (int64_t)q.y * q0.z + (int64_t)q.z * q0.y;
        int64_t y =
            -(int64_t)q.w * q0.y + (int64_t)q.y * q0.w - (int64_t)q.z * q0.x + (int64_t)q.x * q0.z;
        int64_t z =
            -(int64_t)q.w * q0.z + (int64_t)q.z * q0.w - (int64_t)q.x * q0.y + (int64_t)q.y * q0.x;
        dv = ls_vec3_make((ls_fx)ls_fx_round_q32(x), (ls_fx)ls_fx_round_q32(y),
                          (ls_fx)ls_fx_round_q32(z));
    } else {
        ls_quat dq = ls_quat_mul(q, ls_quat_conj(q0));
        dv = ls_vec3_make(dq.x, dq.y, dq.z);
    }
    uint64_t s2 = ls_vec3_len_sq_q32(dv) >> 16;                      // sin^2, Q16
    uint64_t e2 = ((uint64_t)b->extent * (uint64_t)b->extent) >> 16; // Q16
    return 4 * s2 * e2 <= lim;
}

// n . d as ls_vec3_dot computes it, for |n| < 2^17 (any d): the exact dot is
// below 3 * 2^48, so only the final clamp can act.
static inline ls_fx dot_small(ls_vec3 n, ls_vec3 d)
{
    int64_t s = (int64_t)n.x * d.x + (int64_t)n.y * d.y + (int64_t)n.z * d.z;
    return ls_fx_clamp64_(ls_fx_round_q32(s));
}

// One corner of the recycled points of recycle_near: p + r x, exact (no
// clamp can act there).
static inline int64_t place_row(ls_fx p, ls_vec3 row, ls_vec3 x)
{
    return (int64_t)p +
           ls_fx_round_q32((int64_t)row.x * x.x + (int64_t)row.y * x.y + (int64_t)row.z * x.z);
}

// recycle's loop for two shapes that are not round, both bodies within 2^28
// raw (4096 m) of the origin, anchors within 2^24 (256 m) and the other
// conditions of its `small`: the same bits with the clamps that cannot act
// left out. Each product of a rotation entry (< 2^17) and an anchor
// component (< 2^24) is below 2^41, so a placed coordinate is below 2^28 +
// 3 * 2^25 + 1 and needs no clamp, nor does the difference of two (below
// 2^30, where ls_vec3_sub would saturate at 2^31); the dot product can.
static bool recycle_near(const ls_body *a, const ls_body *b, const ls_contact *c, ls_fx margin,
                         ls_pair_manifold *r)
{
    const ls_mat3 *ra = &a->xf.r, *rb = &b->xf.r;
    ls_vec3 n = c->m.normal;
    for (int i = 0; i < c->m.count; i++) {
        ls_vec3 xa = c->anchor_a[i], xb = c->anchor_b[i];
        int64_t ax = place_row(a->p.x, ra->row[0], xa), ay = place_row(a->p.y, ra->row[1], xa),
                az = place_row(a->p.z, ra->row[2], xa);
        int64_t bx = place_row(b->p.x, rb->row[0], xb), by = place_row(b->p.y, rb->row[1], xb),
                bz = place_row(b->p.z, rb->row[2], xb);
        int64_t dx = bx - ax, dy = by - ay, dz = bz - az;
        ls_fx dot = ls_fx_clamp64_(ls_fx_round_q32(n.x * dx + n.y * dy + n.z * dz));
        ls_fx depth = ls_fx_sub(c->base_depth[i], dot);
        if (depth <= ls_fx_neg(margin)) {
            return false;
        }
        r->point[i] =
            ls_vec3_make((ls_fx)((ax + bx) >> 1), (ls_fx)((ay + by) >> 1), (ls_fx)((az + bz) >> 1));
        r->depth[i] = depth;
    }
    return true;
}

// Recycle last tick's contact `old` of the same pair into *c when neither
// body moved more than the recycling distance allows; false to recompute.
static bool recycle(const ls_world *w, const ls_contact *old, ls_pair_manifold *r)
{
    if (old->m.count == 0) {
        return false;
    }
    const ls_body *a = &w->bodies[old->a], *b = &w->bodies[old->b];
    ls_fx half = ls_fx_mul(w->def.linear_slop, LS_FX_INT(LS_RECYCLE_SLOPS)) / 2;
    // The two bodies' displacements since then may differ by at most half
    // (a sinking stack moves together and keeps its manifolds), and neither
    // may have turned its farthest point by more than half.
    ls_vec3 rel = ls_vec3_sub(ls_vec3_sub(b->p, old->pose_p[1]), ls_vec3_sub(a->p, old->pose_p[0]));
    if (ls_vec3_len_sq_q32(rel) > (uint64_t)half * (uint64_t)half ||
        !turned_little(a, old->pose_p[0], old->pose_q[0], half) ||
        !turned_little(b, old->pose_p[1], old->pose_q[1], half)) {
        return false;
    }
    const ls_contact *c = old;
    // The plain margin, not the pair's speculative one: a manifold with a
    // speculative point beyond it is recomputed (a recycled far point of a
    // rolling capsule kept it rocking on the ground, never asleep).
    ls_fx margin = w->def.contact_margin;
    ls_vec3 n = c->m.normal;
    const ls_shape *sa = &w->shapes[c->shape_a], *sb = &w->shapes[c->shape_b];
    bool round_a = ls_shape_kind_of(sa->geom.kind)->round;
    bool round_b = ls_shape_kind_of(sb->geom.kind)->round;
    // The exact shortcuts' conditions (ls_place_small, dot_small): rotations
    // and the normal hold entries of about 1 (2^16), anchors lie within the
    // bodies.
    uint32_t arm = 0;
    for (int i = 0; i < c->m.count; i++) {
        arm |= ls_vec3_magnitude_bits(c->anchor_a[i]) | ls_vec3_magnitude_bits(c->anchor_b[i]);
    }
    bool small = ls_mat3_is_small(&a->xf.r) && ls_mat3_is_small(&b->xf.r) &&
                 ls_vec3_magnitude_bits(n) < (1u << 17) && arm < (1u << 27);
    if (small && !round_a && !round_b && arm < (1u << 24) &&
        (ls_vec3_magnitude_bits(a->p) | ls_vec3_magnitude_bits(b->p)) < (1u << 28)) {
        return recycle_near(a, b, c, margin, r);
    }
    for (int i = 0; i < c->m.count; i++) {
        ls_vec3 ca, cb;
        ls_fx depth;
        if (small) {
            ca = ls_place_small(a->p, &a->xf.r, c->anchor_a[i]);
            cb = ls_place_small(b->p, &b->xf.r, c->anchor_b[i]);
            depth = ls_fx_sub(c->base_depth[i], dot_small(n, ls_vec3_sub(cb, ca)));
        } else {
            ca = ls_vec3_add(a->p, ls_mat3_mul_vec(a->xf.r, c->anchor_a[i]));
            cb = ls_vec3_add(b->p, ls_mat3_mul_vec(b->xf.r, c->anchor_b[i]));
            depth = ls_fx_sub(c->base_depth[i], ls_vec3_dot(n, ls_vec3_sub(cb, ca)));
        }
        if (depth <= ls_fx_neg(margin)) {
            return false; // a point left the margin: the routine decides again
        }
        // A round shape's touching point: its core point moved out along the
        // normal by the radius less half the depth (midway between the two
        // surfaces, where the collide routines put it).
        ls_fx hd = (ls_fx)(depth >> 1);
        ls_vec3 pa = round_a ? ls_vec3_mad(ca, n, ls_fx_sub(sa->geom.radius, hd)) : ca;
        ls_vec3 pb = round_b ? ls_vec3_mad(cb, n, ls_fx_sub(hd, sb->geom.radius)) : cb;
        r->point[i] = ls_vec3_mid(pa, pb);
        r->depth[i] = depth;
    }
    return true;
}

// A recycled contact in its slot: last tick's with the points recycle()
// moved, its impulses warm-started from last tick's as a new contact's are.
//
// The warm start (clear_impulses, then warm_start_from) without its search:
// the points keep their feature ids, so point i matches the first old point
// with its id -- itself, unless an earlier point has the same id -- and the
// manifold's friction, twist and rolling impulses are the old ones.
static void place_recycled(ls_contact *c, const ls_contact *old, const ls_pair_manifold *r)
{
    *c = *old;
    int count = c->m.count;
    for (int i = 0; i < count; i++) {
        c->m.points[i].point = r->point[i];
        c->m.points[i].depth = r->depth[i];
        for (int j = 0; j < i; j++) {
            if (old->m.points[j].feature == old->m.points[i].feature) {
                c->normal_impulse[i] = old->normal_impulse[j];
                break;
            }
        }
    }
    for (int i = count; i < LS_MANIFOLD_MAX; i++) {
        c->normal_impulse[i] = 0;
    }
}

// ---- Mesh pairs ---------------------------------------------------------------

// The children of mesh pair pr (one shape made of children, the other
// convex) whose boxes overlap the convex shape's box grown by the margin, in
// the parent's frame (a box around the rotated box): at most
// LS_MESH_PAIR_MAX into out, in child order; *over when there were more.
static uint32_t mesh_children(const ls_world *w, ls_pair pr, ls_fx margin, uint32_t *out,
                              bool *over)
{
    const ls_shape *sa = &w->shapes[pr.a], *sb = &w->shapes[pr.b];
    bool parent_a = ls_shape_kind_of(sa->geom.kind)->children != NULL;
    const ls_shape *parent = parent_a ? sa : sb, *other = parent_a ? sb : sa;
    ls_aabb wb = ls_geom_aabb_(&other->geom, &other->xf, margin);
    ls_vec3 c0 = ls_vec3_mid(wb.min, wb.max), h = ls_vec3_sub(wb.max, c0);
    ls_vec3 lc = ls_mat3_mul_tvec(parent->xf.r, ls_vec3_sub(c0, parent->xf.p));
    ls_vec3 e;
    ls_fx *ev[3] = {&e.x, &e.y, &e.z};
    for (int k = 0; k < 3; k++) {
        ls_vec3 col = ls_mat3_col(parent->xf.r, k);
        int64_t s = (int64_t)ls_fx_abs(col.x) * h.x + (int64_t)ls_fx_abs(col.y) * h.y +
                    (int64_t)ls_fx_abs(col.z) * h.z;
        *ev[k] = ls_fx_from_q32(s);
    }
    ls_aabb local = {ls_vec3_sub(lc, e), ls_vec3_add(lc, e)};
    uint32_t n =
        ls_shape_kind_of(parent->geom.kind)->children(&parent->geom, local, out, LS_MESH_PAIR_MAX);
    *over = n > LS_MESH_PAIR_MAX;
    return *over ? LS_MESH_PAIR_MAX : n;
}

// The contact of child `child` of mesh pair pr into *c (zeroed first, its
// normal from a to b, with its recycling data when it touches); returns
// whether it touches.
static bool mesh_child_contact(const ls_world *w, ls_pair pr, uint32_t child, ls_fx margin,
                               bool new_pair, ls_contact *c)
{
    const ls_shape *sa = &w->shapes[pr.a], *sb = &w->shapes[pr.b];
    bool parent_a = ls_shape_kind_of(sa->geom.kind)->children != NULL;
    const ls_shape *parent = parent_a ? sa : sb, *other = parent_a ? sb : sa;
    memset(c, 0, sizeof *c);
    c->shape_a = pr.a;
    c->shape_b = pr.b;
    c->child = child;
    c->a = sa->body;
    c->b = sb->body;
    bool touching = ls_shape_kind_of(parent->geom.kind)
                        ->collide_child(&parent->geom, child, &parent->xf, &other->geom, &other->xf,
                                        margin, &c->m) > 0;
    if (touching && !parent_a) {
        c->m.normal = ls_vec3_neg(c->m.normal); // the routine's normal is child -> other
    }
    if (touching && new_pair) {
        drop_unreachable(w, c);
        touching = c->m.count > 0;
    }
    if (touching) {
        set_anchors(w, c);
    }
    return touching;
}

// Arena contacts per worker: max_contacts / (2 workers), at least one pair's
// worth (LS_MESH_PAIR_MAX) and at most 8,192 (3 MB). Why bounded: a pair
// that does not fit is merely computed in the serial walk instead.
static uint32_t arena_contact_cap(const ls_world_def *def, uint32_t workers)
{
    uint32_t n = def->max_contacts / (2 * workers);
    return n < LS_MESH_PAIR_MAX ? LS_MESH_PAIR_MAX : n > 8192 ? 8192 : n;
}

size_t ls_mesh_arenas_memory_size_(const ls_world_def *def)
{
    uint32_t workers = def->worker_count;
    if (workers <= 1) {
        return 0;
    }
    size_t nc = arena_contact_cap(def, workers);
    return workers * (sizeof(ls_mesh_arena) + nc * sizeof(ls_contact) +
                      4 * nc * sizeof(ls_mesh_child) + LS_MESH_PAIR_MAX * sizeof(uint32_t));
}

bool ls_mesh_arenas_init_(ls_world *w, uint32_t workers)
{
    w->mesh_arenas = NULL;
    w->mesh_arena_count = 0;
    if (workers <= 1) {
        return true;
    }
    w->mesh_arenas = calloc(workers, sizeof *w->mesh_arenas);
    if (!w->mesh_arenas) {
        return false;
    }
    w->mesh_arena_count = workers;
    uint32_t nc = arena_contact_cap(&w->def, workers);
    for (uint32_t k = 0; k < workers; k++) {
        ls_mesh_arena *ar = &w->mesh_arenas[k];
        ar->contacts = malloc(nc * sizeof *ar->contacts);
        ar->recs = malloc(4 * (size_t)nc * sizeof *ar->recs);
        ar->children = malloc(LS_MESH_PAIR_MAX * sizeof *ar->children);
        if (!ar->contacts || !ar->recs || !ar->children) {
            return false;
        }
        ar->contact_cap = nc;
        ar->rec_cap = 4 * nc;
    }
    return true;
}

void ls_mesh_arenas_free_(ls_world *w)
{
    for (uint32_t k = 0; k < w->mesh_arena_count; k++) {
        free(w->mesh_arenas[k].contacts);
        free(w->mesh_arenas[k].recs);
        free(w->mesh_arenas[k].children);
    }
    free(w->mesh_arenas);
    w->mesh_arenas = NULL;
    w->mesh_arena_count = 0;
}

// A mesh pair in the parallel narrow phase: its children and the contacts of
// those that touch into the worker's arena, exactly as the serial walk
// would compute them (the same functions, the same margin: the mesh is
// static and the other body moves, so nothing the walk changes is read).
// False, with the arena as it was, when they do not fit: the walk computes
// the pair then.
static bool narrow_mesh(const ls_world *w, ls_pair pr, ls_fx margin, bool new_pair,
                        ls_mesh_arena *ar, uint32_t arena, ls_pair_manifold *r)
{
    bool over;
    uint32_t n = mesh_children(w, pr, margin, ar->children, &over);
    if (n > ar->rec_cap - ar->rec_count) {
        return false;
    }
    uint32_t first = ar->rec_count, first_contact = ar->contact_count;
    for (uint32_t k = 0; k < n; k++) {
        if (ar->contact_count == ar->contact_cap) {
            ar->rec_count = first;
            ar->contact_count = first_contact;
            return false;
        }
        uint32_t child = ar->children[k];
        bool touching =
            mesh_child_contact(w, pr, child, margin, new_pair, &ar->contacts[ar->contact_count]);
        ar->recs[ar->rec_count++] =
            (ls_mesh_child){child, touching ? ar->contact_count++ : UINT32_MAX};
    }
    r->mesh_over = over;
    r->mesh.arena = arena;
    r->mesh.first = first;
    r->mesh.count = n;
    return true;
}

/// Pairs per block of the parallel narrow phase (a manifold costs ~1 us).
#define NARROW_MIN_BLOCK 32

// Parallel part of the narrow phase: pairs [begin, end). Reads shapes,
// bodies and last tick's contacts, writes only pair_manifolds[begin, end).
static void narrow_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    ls_world *w = ctx;
    const int64_t *reach = w->body_reach;
    for (uint32_t i = begin; i < end; i++) {
        ls_pair pr = w->pairs[i];
        ls_pair_manifold *r = &w->pair_manifolds[i];
        const ls_shape *sa = &w->shapes[pr.a], *sb = &w->shapes[pr.b];
        bool mesh_a = ls_shape_kind_of(sa->geom.kind)->children != NULL;
        bool mesh_b = ls_shape_kind_of(sb->geom.kind)->children != NULL;
        r->computed = (body_active(&w->bodies[sa->body]) || body_active(&w->bodies[sb->body])) &&
                      !(mesh_a && mesh_b) && !ls_joint_filters_pair_(w, sa->body, sb->body);
        r->recycled = false;
        if (r->computed && (mesh_a || mesh_b)) {
            r->computed = worker < w->mesh_arena_count &&
                          narrow_mesh(w, pr, margin_of(w, reach[sa->body], reach[sb->body]),
                                      r->old == UINT32_MAX, &w->mesh_arenas[worker], worker, r);
            continue;
        }
        if (!r->computed) {
            continue;
        }
        ls_contact *c = &r->c;
        const ls_contact *old = r->old != UINT32_MAX ? &w->contacts_old[r->old] : NULL;
        // A recycled contact is not copied here: copy_deferred places it
        // (place_recycled) straight from last tick's.
        r->recycled = old && recycle(w, old, r);
        r->touching =
            r->recycled || fresh_contact(w, pr, margin_of(w, reach[sa->body], reach[sb->body]),
                                         r->old == UINT32_MAX, c);
        if (r->touching && !r->recycled) {
            // The warm start, here rather than in the serial walk: a pair
            // without children has at most one old contact, the one
            // find_old found, which is the walk's match (merge_child).
            clear_impulses(c);
            warm_start_from(c, old);
        }
    }
}

// For each pair, last tick's (first) contact of the same shapes, or
// UINT32_MAX: a merge walk over the two sorted lists.
static void find_old(ls_world *w, uint32_t npairs, uint32_t old_count)
{
    const ls_contact *old = w->contacts_old;
    uint32_t j = 0;
    for (uint32_t i = 0; i < npairs; i++) {
        ls_pair pr = w->pairs[i];
        while (j < old_count && pair_less(old[j].shape_a, old[j].shape_b, pr.a, pr.b)) {
            j++;
        }
        w->pair_manifolds[i].old = j < old_count && same_pair(&old[j], pr) ? j : UINT32_MAX;
    }
}

// Narrow phase for broad-phase pair i; old contacts of the same pair start
// at old[*j]. Returns false when the buffer is full.
static bool process_pair(ls_world *w, uint32_t i, const ls_contact *old, uint32_t old_count,
                         uint32_t *j)
{
    ls_pair pr = w->pairs[i];
    const ls_shape *sa = &w->shapes[pr.a], *sb = &w->shapes[pr.b];
    const ls_body *a = &w->bodies[sa->body], *b = &w->bodies[sb->body];
    // A pair the parallel narrow phase computed is not filtered (it asked,
    // and no joint changes during the step).
    if (!w->pair_manifolds[i].computed && ls_joint_filters_pair_(w, sa->body, sb->body)) {
        // Joined by a joint without collide_connected (joint.c): no contact.
        for (; *j < old_count && same_pair(&old[*j], pr); (*j)++) {
            contact_ended(w, &old[*j]);
        }
        return true;
    }
    if (!body_active(a) && !body_active(b)) {
        // Both at rest: keep the pair's contacts exactly as they were.
        for (; *j < old_count && same_pair(&old[*j], pr); (*j)++) {
            ls_contact *c = next_slot(w);
            if (!c) {
                return false;
            }
            *c = old[*j];
            w->contact_count++;
        }
        return true;
    }
    const ls_shape_kind *ka = ls_shape_kind_of(sa->geom.kind);
    const ls_shape_kind *kb = ls_shape_kind_of(sb->geom.kind);
    if (!ka->children && !kb->children) {
        ls_contact *c = next_slot(w);
        if (!c) {
            return false;
        }
        const ls_pair_manifold *r = &w->pair_manifolds[i];
        bool touching;
        if (r->computed) {
            // The walk reads the contact where the narrow phase left it and
            // copy_deferred moves it to its slot afterwards, in parallel: the
            // copies (376 bytes each) were most of this serial walk.
            touching = r->touching;
            if (touching) {
                w->contact_from[w->contact_count] = i;
            }
            w->info.contacts_recycled += r->recycled;
            static const ls_contact none; // child 0: all merge_child reads of no contact
            const ls_contact *cur = !touching ? &none : r->recycled ? &old[r->old] : &r->c;
            merge_child(w, cur, touching, old, old_count, j, pr, NULL);
            return true;
        } else {
            // A body of the pair was woken earlier in this walk.
            touching =
                fresh_contact(w, pr, pair_margin(w, pr), w->pair_manifolds[i].old == UINT32_MAX, c);
        }
        clear_impulses(c);
        merge_child(w, c, touching, old, old_count, j, pr, c);
        return true;
    }
    // A shape made of children (a mesh) against a convex shape: one contact
    // per touching child, in child order. Two such shapes never collide.
    if (ka->children && kb->children) {
        return true;
    }
    const ls_pair_manifold *r = &w->pair_manifolds[i];
    if (r->computed) {
        // The parallel narrow phase's children (narrow_mesh), merged as the
        // walk below would compute them.
        const ls_mesh_arena *ar = &w->mesh_arenas[r->mesh.arena];
        w->info.capacity_exceeded |= r->mesh_over;
        for (uint32_t k = r->mesh.first; k < r->mesh.first + r->mesh.count; k++) {
            ls_contact *c = next_slot(w);
            if (!c) {
                return false;
            }
            ls_mesh_child rec = ar->recs[k];
            if (rec.contact == UINT32_MAX) {
                ls_contact none; // all merge_child reads of a child that does not touch
                none.child = rec.child;
                merge_child(w, &none, false, old, old_count, j, pr, NULL);
            } else {
                *c = ar->contacts[rec.contact];
                merge_child(w, c, true, old, old_count, j, pr, c);
            }
        }
    } else {
        ls_fx margin = pair_margin(w, pr); // grown like a convex pair's (SPEC.md §11, stage 3)
        bool over;
        uint32_t n = mesh_children(w, pr, margin, w->children, &over);
        w->info.capacity_exceeded |= over;
        for (uint32_t k = 0; k < n; k++) {
            ls_contact *c = next_slot(w);
            if (!c) {
                return false;
            }
            bool touching = mesh_child_contact(w, pr, w->children[k], margin,
                                               w->pair_manifolds[i].old == UINT32_MAX, c);
            merge_child(w, c, touching, old, old_count, j, pr, c);
        }
    }
    for (; *j < old_count && same_pair(&old[*j], pr); (*j)++) {
        contact_ended(w, &old[*j]);
    }
    return true;
}

/// Contacts per block of the parallel copy after the walk.
#define COPY_MIN_BLOCK 256

// Slots [begin, end) whose contact the walk left in pair_manifolds.
static void copy_deferred(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    ls_world *w = ctx;
    (void)worker;
    for (uint32_t k = begin; k < end; k++) {
        uint32_t from = w->contact_from[k];
        if (from != UINT32_MAX) {
            const ls_pair_manifold *r = &w->pair_manifolds[from];
            if (r->recycled) {
                place_recycled(&w->contacts[k], &w->contacts_old[r->old], r);
            } else {
                w->contacts[k] = r->c;
            }
        }
    }
}

// True when every slot k of this tick's contacts comes from the narrow
// phase (none was written by the walk) and, if recycled, from last tick's
// slot k: then update_in_place gives the array copy_deferred would build.
static bool in_place(const ls_world *w)
{
    for (uint32_t k = 0; k < w->contact_count; k++) {
        uint32_t from = w->contact_from[k];
        if (from == UINT32_MAX) {
            return false;
        }
        const ls_pair_manifold *r = &w->pair_manifolds[from];
        if (r->recycled && r->old != k) {
            return false;
        }
    }
    return true;
}

// copy_deferred on last tick's array (w->contacts after the swap back): a
// recycled contact is already in its slot and takes its moved points and
// its warm start there (place_recycled's bits), a fresh one is copied in. A
// fresh contact's slot held no recycled contact, so nothing reads it here.
static void update_in_place(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    ls_world *w = ctx;
    (void)worker;
    for (uint32_t k = begin; k < end; k++) {
        const ls_pair_manifold *r = &w->pair_manifolds[w->contact_from[k]];
        ls_contact *c = &w->contacts[k];
        if (!r->recycled) {
            *c = r->c;
            continue;
        }
        int count = c->m.count;
        ls_fx was[LS_MANIFOLD_MAX];
        memcpy(was, c->normal_impulse, sizeof was);
        for (int i = 0; i < count; i++) {
            c->m.points[i].point = r->point[i];
            c->m.points[i].depth = r->depth[i];
            for (int j = 0; j < i; j++) {
                if (c->m.points[j].feature == c->m.points[i].feature) {
                    c->normal_impulse[i] = was[j];
                    break;
                }
            }
        }
        for (int i = count; i < LS_MANIFOLD_MAX; i++) {
            c->normal_impulse[i] = 0;
        }
    }
}

// The broad phase's sweep segments on the workers (ls_broadphase_runner).
typedef struct bp_tasks {
    ls_broadphase_task_fn *task;
    void *arg;
} bp_tasks;

static void bp_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    const bp_tasks *t = ctx;
    (void)worker;
    for (uint32_t k = begin; k < end; k++) {
        t->task(t->arg, k);
    }
}

static void bp_run(void *ctx, uint32_t count, ls_broadphase_task_fn *task, void *arg)
{
    bp_tasks t = {task, arg};
    ls_workers_for_(ctx, count, 1, bp_block, &t);
}

void ls_world_update_contacts_(ls_world *w)
{
    bool overflow = false;
    const ls_broadphase_runner runner = {bp_run, w->workers};
    uint32_t npairs = ls_broadphase_pairs_run_(w->bp, w->pairs, w->max_pairs, &overflow, &runner);
    w->info.capacity_exceeded |= overflow;
    w->pair_count = npairs;
    ls_world_lap_(w, &w->profile.pairs);
    ls_contact *old = w->contacts;
    uint32_t old_count = w->contact_count;
    w->contacts = w->contacts_old;
    w->contacts_old = old;
    w->contact_count = 0;
    w->begin_count = w->end_count = 0;
    find_old(w, npairs, old_count);
    w->info.contacts_recycled = 0;
    for (uint32_t k = 0; k < w->mesh_arena_count; k++) {
        w->mesh_arenas[k].contact_count = w->mesh_arenas[k].rec_count = 0;
    }
    ls_workers_for_(w->workers, w->body_high, REACH_MIN_BLOCK, reach_block, w);
    ls_workers_for_(w->workers, npairs, NARROW_MIN_BLOCK, narrow_block, w);
    ls_world_lap_(w, &w->profile.narrow);
    uint32_t j = 0;
    for (uint32_t i = 0; i < npairs; i++) {
        ls_pair pr = w->pairs[i];
        while (j < old_count && pair_less(old[j].shape_a, old[j].shape_b, pr.a, pr.b)) {
            contact_ended(w, &old[j++]); // its AABBs no longer overlap
        }
        if (!process_pair(w, i, old, old_count, &j)) {
            break;
        }
    }
    for (; j < old_count; j++) {
        contact_ended(w, &old[j]);
    }
    if (in_place(w)) {
        // Every slot holds its pair's contact from the same slot last tick (or
        // a fresh one): update last tick's array where it lies instead of
        // copying it (376 bytes a contact), and keep it as this tick's.
        w->contacts_old = w->contacts;
        w->contacts = old;
        ls_workers_for_(w->workers, w->contact_count, COPY_MIN_BLOCK, update_in_place, w);
    } else {
        ls_workers_for_(w->workers, w->contact_count, COPY_MIN_BLOCK, copy_deferred, w);
    }
    ls_fx deepest = 0, buried = 0;
    uint32_t buried_body = UINT32_MAX;
    for (uint32_t c = 0; c < w->contact_count; c++) {
        const ls_contact *ct = &w->contacts[c];
        const ls_body *a = &w->bodies[ct->a], *b = &w->bodies[ct->b];
        // Against static geometry, deeper than LS_PENETRATION_REPORT and than
        // half the body's thinnest width: it may come out on the wrong side.
        const ls_body *d = a->type == LS_BODY_STATIC ? b : b->type == LS_BODY_STATIC ? a : NULL;
        ls_fx bound = d ? ls_fx_max(LS_PENETRATION_REPORT, d->thickness) : LS_FX_MAX;
        for (int k = 0; k < ct->m.count; k++) {
            ls_fx depth = ct->m.points[k].depth;
            deepest = ls_fx_max(deepest, depth);
            if (depth > bound && ls_fx_sub(depth, bound) > buried) {
                buried = ls_fx_sub(depth, bound);
                buried_body = d == a ? ct->a : ct->b;
            }
        }
    }
    w->info.contacts = w->contact_count;
    w->info.max_penetration = deepest;
    ls_world_lap_(w, &w->profile.contacts);
    // Buried in static geometry deeper than the documented bound: reported
    // like an overflow, so a run that tunnels into the ground does not end
    // "healthy" (bodies pressed into each other in a falling pile are not).
    if (buried_body != UINT32_MAX) {
        ls_world_report_overflow_(w, buried_body);
    }
}
