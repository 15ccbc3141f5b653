// SPDX-License-Identifier: MIT
// Narrow phase for capsules: segment geometry, capsule-capsule, capsule-plane
// and box-capsule.
#include "collide_internal.h"

/// Q32.32 num / den as Q16.16 clamped to [-lim, lim]; den > 0. The integer
/// part is taken first so no intermediate can overflow.
static ls_fx div_q32_clamped(int64_t num, int64_t den, ls_fx lim)
{
    int64_t q, s;
    if (num > -((int64_t)1 << 46) && num < ((int64_t)1 << 46)) {
        // One division: with num = q den + r (r of num's sign), num 2^16 /
        // den = q 2^16 + r 2^16 / den, whose two terms share a sign, so its
        // truncation is q 2^16 + trunc(r 2^16 / den), the sum below; and
        // q = trunc(s / 2^16).
        s = (num * 65536) / den;
        q = s / 65536;
    } else {
        q = num / den;
        s = 0;
    }
    if (q > 32767 || q < -32767) {
        return q > 0 ? lim : ls_fx_neg(lim);
    }
    if (num <= -((int64_t)1 << 46) || num >= ((int64_t)1 << 46)) {
        s = q * 65536 + ((num - q * den) * 65536) / den;
    }
    return ls_fx_clamp(ls_fx_sat64(s, &(bool){false}), ls_fx_neg(lim), lim);
}

bool ls_segment_overlap_(const ls_segment *a, const ls_segment *b, ls_fx *lo, ls_fx *hi)
{
    // b's centre projects onto a's line at u_a . (c_b - c_a).
    ls_fx p = ls_vec3_dot(a->u, ls_vec3_sub(b->c, a->c));
    *lo = ls_fx_max(ls_fx_neg(a->h), ls_fx_sub(p, b->h));
    *hi = ls_fx_min(a->h, ls_fx_add(p, b->h));
    return *lo <= *hi;
}

/// Parameter on a for nearly parallel segments: middle of the overlap, or
/// the end of a nearer to b when they do not overlap.
static ls_fx parallel_param(const ls_segment *a, const ls_segment *b)
{
    ls_fx lo, hi;
    if (ls_segment_overlap_(a, b, &lo, &hi)) {
        return (ls_fx)(((int64_t)lo + hi) >> 1);
    }
    // Disjoint: lo exceeds a's end only when b lies beyond it.
    return lo > a->h ? a->h : ls_fx_neg(a->h);
}

bool ls_segment_closest_(const ls_segment *a, const ls_segment *b, ls_fx *s, ls_fx *t)
{
    // Minimise |r + s u_a - t u_b|^2 with r = c_a - c_b (Ericson, unit axes):
    // s = (bb e - d) / (1 - bb^2), then clamp, t from s, s again from t.
    ls_vec3 r = ls_vec3_sub(a->c, b->c);
    ls_fx bb = ls_vec3_dot(a->u, b->u);
    ls_fx d = ls_vec3_dot(a->u, r);
    ls_fx e = ls_vec3_dot(b->u, r);
    int64_t denom = ((int64_t)1 << 32) - (int64_t)bb * bb; // sin^2, Q32.32
    bool parallel = denom < LS_COLLIDE_PARALLEL_Q32;
    ls_fx sv;
    if (parallel) {
        sv = parallel_param(a, b);
    } else {
        int64_t num = (int64_t)bb * e - (int64_t)d * 65536;
        sv = div_q32_clamped(num, denom, a->h);
    }
    ls_fx tv = ls_fx_clamp(ls_fx_add(e, ls_fx_mul(sv, bb)), ls_fx_neg(b->h), b->h);
    *s = ls_fx_clamp(ls_fx_sub(ls_fx_mul(tv, bb), d), ls_fx_neg(a->h), a->h);
    *t = tv;
    return parallel;
}

/// Normal for intersecting core segments (no closest-point direction):
/// perpendicular to both axes, oriented from a to b; fixed choices when the
/// axes are parallel too.
static ls_vec3 crossing_normal(const ls_segment *a, const ls_segment *b)
{
    ls_vec3 n = ls_vec3_cross(a->u, b->u);
    if (ls_vec3_len_sq_q32(n) < (uint64_t)LS_COLLIDE_PARALLEL_Q32) {
        n = ls_vec3_cross(a->u, ls_vec3_make(LS_FX_ONE, 0, 0));
        if (ls_vec3_len_sq_q32(n) < ((uint64_t)1 << 30)) { // |n| < 1/4: u_a is near X
            n = ls_vec3_cross(a->u, ls_vec3_make(0, 0, LS_FX_ONE));
        }
    }
    n = ls_vec3_normalize(n, ls_vec3_make(0, LS_FX_ONE, 0));
    return ls_vec3_dot_q32(n, ls_vec3_sub(b->c, a->c)) < 0 ? ls_vec3_neg(n) : n;
}

/// Push the contact between the point at s on a and its closest point on b,
/// measured along the manifold normal (used for the two parallel points).
static void push_segment_point(ls_manifold *m, const ls_segment *a, const ls_segment *b, ls_fx s,
                               ls_fx ra, ls_fx rb, ls_fx margin, uint32_t feature)
{
    ls_vec3 p = ls_segment_at(a, s);
    ls_vec3 q = ls_segment_at(b, ls_segment_project(b, p));
    ls_fx depth = ls_fx_sub(ls_fx_add(ra, rb), ls_vec3_dot(ls_vec3_sub(q, p), m->normal));
    if (depth > ls_fx_neg(margin)) {
        ls_vec3 pa = ls_vec3_mad(p, m->normal, ra);
        ls_vec3 pb = ls_vec3_mad(q, m->normal, ls_fx_neg(rb));
        ls_manifold_push(m, ls_vec3_mid(pa, pb), depth, feature);
    }
}

int ls_collide_capsule_capsule_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                                const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    ls_segment sa = ls_capsule_segment(a, xa);
    ls_segment sb = ls_capsule_segment(b, xb);
    ls_fx s, t;
    bool parallel = ls_segment_closest_(&sa, &sb, &s, &t);
    ls_vec3 p = ls_segment_at(&sa, s);
    ls_vec3 q = ls_segment_at(&sb, t);
    ls_vec3 d = ls_vec3_sub(q, p);
    ls_fx rsum = ls_fx_add(a->radius, b->radius);
    if (!ls_vec3_shorter_than(d, ls_fx_add(rsum, margin))) {
        return 0;
    }
    // The crossing normal only when d is zero, the one case where
    // ls_vec3_normalize returns its fallback (same bits, no second root).
    m->normal = d.x != 0 || d.y != 0 || d.z != 0 ? ls_vec3_normalize(d, ls_vec3_zero())
                                                 : crossing_normal(&sa, &sb);
    ls_fx lo, hi;
    // Parallel capsules lying side by side touch along a line: report both
    // ends of the overlap so the pair cannot rock about a single point.
    if (parallel && ls_segment_overlap_(&sa, &sb, &lo, &hi) && hi - lo > (LS_FX_ONE >> 8)) {
        push_segment_point(m, &sa, &sb, lo, a->radius, b->radius, margin, 0);
        push_segment_point(m, &sa, &sb, hi, a->radius, b->radius, margin, 1);
        return m->count;
    }
    ls_vec3 pa = ls_vec3_mad(p, m->normal, a->radius);
    ls_vec3 pb = ls_vec3_mad(q, m->normal, ls_fx_neg(b->radius));
    ls_manifold_push(m, ls_vec3_mid(pa, pb), ls_fx_sub(rsum, ls_vec3_len(d)), 0);
    return m->count;
}

int ls_collide_capsule_plane_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                              const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    (void)xb; // planes are static and given in world coordinates
    ls_segment seg = ls_capsule_segment(a, xa);
    ls_vec3 n = b->normal;
    m->normal = ls_vec3_neg(n);
    // Each end cap is a sphere against the plane; feature = end index.
    for (int i = 0; i < 2; i++) {
        ls_vec3 e = ls_segment_at(&seg, i == 0 ? ls_fx_neg(seg.h) : seg.h);
        ls_fx s = ls_fx_sub(ls_vec3_dot(n, e), b->plane_d);
        ls_fx depth = ls_fx_sub(a->radius, s);
        if (depth > ls_fx_neg(margin)) {
            ls_fx half = (ls_fx)(((int64_t)a->radius + s) >> 1);
            ls_manifold_push(m, ls_vec3_mad(e, n, ls_fx_neg(half)), depth, (uint32_t)i);
        }
    }
    return m->count;
}

// ---- box-capsule, in the box frame (the box is an AABB centred at 0) ----

/// Segment parameters are Q8.24 in [0, 1]: finer than Q16.16 so long
/// capsules still resolve sub-millimetre positions.
#define SEG_ONE ((int64_t)1 << 24)

/// p0 + (p1 - p0) * t for t in Q8.24, exact product then floored.
static ls_vec3 seg_lerp(ls_vec3 p0, ls_vec3 p1, int64_t t)
{
    return ls_vec3_make((ls_fx)(p0.x + ((((int64_t)p1.x - p0.x) * t) >> 24)),
                        (ls_fx)(p0.y + ((((int64_t)p1.y - p0.y) * t) >> 24)),
                        (ls_fx)(p0.z + ((((int64_t)p1.z - p0.z) * t) >> 24)));
}

/// Squared distance (Q32.32) from p to the box [-h, h].
static uint64_t box_dist_sq(ls_vec3 p, ls_vec3 h)
{
    uint64_t s = 0;
    for (int k = 0; k < 3; k++) {
        int64_t ex = (int64_t)ls_fx_abs(ls_vec3_comp(p, k)) - ls_vec3_comp(h, k);
        s += ex > 0 ? (uint64_t)(ex * ex) : 0;
    }
    return s;
}

/// Parameter of the segment point nearest the box. The squared distance is
/// convex along the segment, so a ternary search with a fixed iteration
/// pattern finds it deterministically without dividing.
static int64_t seg_box_closest(ls_vec3 p0, ls_vec3 p1, ls_vec3 h)
{
    int64_t lo = 0, hi = SEG_ONE;
    while (hi - lo > 2) {
        int64_t m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (box_dist_sq(seg_lerp(p0, p1, m1), h) <= box_dist_sq(seg_lerp(p0, p1, m2), h)) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    int64_t best = lo;
    for (int64_t t = lo + 1; t <= hi; t++) {
        if (box_dist_sq(seg_lerp(p0, p1, t), h) < box_dist_sq(seg_lerp(p0, p1, best), h)) {
            best = t;
        }
    }
    return best;
}

/// Face index 2*axis + (sign < 0) when exactly one component of d is non-zero
/// (the closest box feature is a face), else -1.
static int single_face(ls_vec3 d)
{
    int face = -1;
    for (int k = 0; k < 3; k++) {
        ls_fx v = ls_vec3_comp(d, k);
        if (v != 0) {
            if (face >= 0) {
                return -1;
            }
            face = 2 * k + (v < 0);
        }
    }
    return face;
}

/// For a core segment crossing the box: the face whose outward normal gives
/// the largest separation of the capsule (SAT over the 6 face normals).
static int deepest_face(ls_vec3 p0, ls_vec3 p1, ls_vec3 h, ls_fx r, ls_fx *sep)
{
    int best = 0;
    *sep = LS_FX_MIN;
    for (int f = 0; f < 6; f++) {
        int k = f / 2;
        ls_fx a = ls_vec3_comp(p0, k), b = ls_vec3_comp(p1, k);
        ls_fx lowest = (f & 1) ? ls_fx_neg(ls_fx_max(a, b)) : ls_fx_min(a, b);
        ls_fx s = ls_fx_sub(ls_fx_sub(lowest, ls_vec3_comp(h, k)), r);
        if (s > *sep) {
            *sep = s;
            best = f;
        }
    }
    return best;
}

/// Clip the segment parameter range [*lo, *hi] to the slab |x_k| <= h_k.
static bool clip_slab(ls_vec3 p0, ls_vec3 p1, int k, ls_fx hk, int64_t *lo, int64_t *hi)
{
    int64_t a = ls_vec3_comp(p0, k);
    int64_t dk = (int64_t)ls_vec3_comp(p1, k) - a;
    if (dk == 0) {
        return a >= -hk && a <= hk;
    }
    int64_t t0 = ((-hk - a) * SEG_ONE) / dk, t1 = ((hk - a) * SEG_ONE) / dk;
    if (t0 > t1) {
        int64_t tmp = t0;
        t0 = t1;
        t1 = tmp;
    }
    *lo = t0 > *lo ? t0 : *lo;
    *hi = t1 < *hi ? t1 : *hi;
    return *lo <= *hi;
}

/// A box and a capsule in the box frame, with the result mapped back to world.
typedef struct box_capsule {
    ls_vec3 c;    ///< Box centre (world).
    ls_mat3 r;    ///< Box rotation.
    ls_vec3 h;    ///< Box half extents.
    ls_vec3 p0;   ///< Core segment start in the box frame.
    ls_vec3 p1;   ///< Core segment end in the box frame.
    ls_fx radius; ///< Capsule radius.
} box_capsule;

/// Push a contact given box-frame surface points of the box and the capsule.
static void push_local(ls_manifold *m, const box_capsule *bc, ls_vec3 on_box, ls_vec3 on_cap,
                       ls_fx depth, uint32_t feature)
{
    ls_vec3 mid = ls_vec3_mid(on_box, on_cap);
    ls_manifold_push(m, ls_vec3_add(bc->c, ls_mat3_mul_vec(bc->r, mid)), depth, feature);
}

/// Face contact: the part of the core segment above face f (clipped to the
/// face's side slabs) gives up to two points, its ends. Returns the count.
static int face_points(ls_manifold *m, const box_capsule *bc, int f, ls_fx margin)
{
    int k = f / 2;
    ls_fx sign = (f & 1) ? -LS_FX_ONE : LS_FX_ONE;
    int64_t t[2] = {0, SEG_ONE};
    for (int j = 1; j < 3; j++) {
        int kk = (k + j) % 3;
        if (!clip_slab(bc->p0, bc->p1, kk, ls_vec3_comp(bc->h, kk), &t[0], &t[1])) {
            return 0;
        }
    }
    ls_fx hk = ls_vec3_comp(bc->h, k);
    ls_fx face = ls_fx_mul(sign, hk);
    for (int i = 0; i < 2 && (i == 0 || t[1] > t[0]); i++) {
        ls_vec3 e = seg_lerp(bc->p0, bc->p1, t[i]);
        ls_fx height = ls_fx_mul(sign, ls_vec3_comp(e, k)); // above the face plane
        ls_fx depth = ls_fx_sub(ls_fx_add(bc->radius, hk), height);
        if (depth > ls_fx_neg(margin)) {
            ls_vec3 on_cap =
                ls_vec3_with(e, k, ls_fx_sub(ls_vec3_comp(e, k), ls_fx_mul(sign, bc->radius)));
            push_local(m, bc, ls_vec3_with(e, k, face), on_cap, depth, (uint32_t)i);
        }
    }
    return m->count;
}

int ls_collide_box_capsule_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                            const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    ls_segment seg = ls_capsule_segment(b, xb);
    box_capsule bc;
    bc.c = ls_geom_center(a, xa);
    bc.r = xa->r;
    bc.h = a->half_extents;
    bc.radius = b->radius;
    ls_vec3 lc = ls_mat3_mul_tvec(xa->r, ls_vec3_sub(seg.c, bc.c));
    ls_vec3 lu = ls_vec3_scale(ls_mat3_mul_tvec(xa->r, seg.u), seg.h);
    bc.p0 = ls_vec3_sub(lc, lu);
    bc.p1 = ls_vec3_add(lc, lu);
    ls_vec3 q = seg_lerp(bc.p0, bc.p1, seg_box_closest(bc.p0, bc.p1, bc.h));
    ls_vec3 bq = ls_vec3_min(ls_vec3_max(q, ls_vec3_neg(bc.h)), bc.h);
    ls_vec3 d = ls_vec3_sub(q, bq); // box -> capsule axis: A to B
    if (!ls_vec3_shorter_than(d, ls_fx_add(bc.radius, margin))) {
        return 0;
    }
    int f;
    ls_vec3 nl;
    ls_fx depth;
    if (!ls_vec3_equal(d, ls_vec3_zero())) {
        f = single_face(d);
        nl = ls_vec3_normalize(d, ls_vec3_zero());
        depth = ls_fx_sub(bc.radius, ls_vec3_len(d));
    } else {
        // The core segment enters the box: no closest-point direction, so
        // push out along the face normal of least penetration.
        ls_fx sep;
        f = deepest_face(bc.p0, bc.p1, bc.h, bc.radius, &sep);
        nl = ls_vec3_with(ls_vec3_zero(), f / 2, (f & 1) ? -LS_FX_ONE : LS_FX_ONE);
        ls_fx hk = ls_vec3_comp(bc.h, f / 2);
        bq = ls_vec3_with(q, f / 2, (f & 1) ? ls_fx_neg(hk) : hk);
        depth = ls_fx_add(bc.radius,
                          ls_fx_abs(ls_fx_sub(ls_vec3_comp(bq, f / 2), ls_vec3_comp(q, f / 2))));
    }
    m->normal = ls_vec3_normalize(ls_mat3_mul_vec(bc.r, nl), ls_vec3_make(0, LS_FX_ONE, 0));
    if (f >= 0 && face_points(m, &bc, f, margin) > 0) {
        return m->count;
    }
    push_local(m, &bc, bq, ls_vec3_mad(q, nl, ls_fx_neg(bc.radius)), depth, 2);
    return m->count;
}
