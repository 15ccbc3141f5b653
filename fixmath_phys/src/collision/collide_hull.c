// SPDX-License-Identifier: MIT
// Narrow phase for convex hulls: hull-hull and box-hull (GJK when separated
// within the margin, EPA when the hulls overlap, then reference/incident face
// clipping, or one point for edge contacts), sphere-hull, capsule-hull and
// hull-plane. Same contract as ls_collide_; conventions mirror collide_box.c.
#include "../math/place.h"
#include "clip.h"
#include "collide_internal.h"
#include "gjk.h"
#include "hull.h"

/// Most candidate points: a clipped polygon has at most the incident face's
/// vertices plus one per reference side plane.
#define CAND_MAX (2 * LS_HULL_MAX_VERTICES + 8)

/// Absolute tolerance (0.5 mm) by which a face of B must beat a face of A
/// to become the reference face (as box-box).
#define FACE_TOL_ABS ((ls_fx)33)
/// Absolute tolerance (1 mm) by which the true separation (GJK/EPA) must
/// beat the best face axis before the contact counts as an edge contact.
#define EDGE_TOL_ABS ((ls_fx)66)

/// Feature id of a face-clipping point: (ref_is_b, ref face, incident face,
/// labels of the two polygon edges meeting at the point). Labels 0..63 are
/// incident-face edges, 64..127 reference side planes.
#define FEATURE_FACE(ref_is_b, rf, inc, in, out)                                                   \
    ((uint32_t)(ref_is_b) << 28 | (uint32_t)(rf) << 21 | (uint32_t)(inc) << 14 |                   \
     (uint32_t)(in) << 7 | (uint32_t)(out))
/// Feature id of a single GJK/EPA point: bit 30, then the smallest and
/// largest point index of A and of B among the final simplex or face.
#define FEATURE_POINT (1u << 30)

typedef ls_contact_cand cand;

/// Keep at most 4 candidates (ls_manifold_reduce_, as the box routines do);
/// a repeated feature id keeps its first point only.
static void reduce_to_manifold(cand *c, int n, ls_manifold *m)
{
    int w = 0;
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < w; j++) {
            dup = dup || c[j].feature == c[i].feature;
        }
        if (!dup) {
            c[w++] = c[i];
        }
    }
    ls_manifold_reduce_(c, w, m);
}

/// Hysteresis as box-box: challenger must beat sep by abs + |sep| * 2^-shift.
static bool clearly_better(ls_fx challenger, ls_fx sep, ls_fx abs_tol, int shift)
{
    ls_fx tol = ls_fx_add(abs_tol, ls_fx_abs(sep) >> shift);
    return challenger > ls_fx_add(sep, tol);
}

/// Index of the face whose normal has the largest dot with dir (ties: lowest).
static uint32_t best_face(const ls_hull *h, ls_vec3 dir)
{
    uint32_t best = 0;
    int64_t best_d = ls_vec3_dot_q32(h->faces[0].normal, dir);
    for (uint32_t f = 1; f < h->face_count; f++) {
        int64_t d = ls_vec3_dot_q32(h->faces[f].normal, dir);
        if (d > best_d) {
            best = f;
            best_d = d;
        }
    }
    return best;
}

/// The face of h around its support vertex along dir that is most aligned
/// with dir (ties: lowest index). Unlike the globally most aligned face, it
/// always holds the deepest point.
static uint32_t incident_face(const ls_hull *h, ls_vec3 dir)
{
    uint32_t v = 0;
    int64_t best_v = ls_vec3_dot_q32(dir, h->vertices[0]);
    for (uint32_t i = 1; i < h->vertex_count; i++) {
        int64_t d = ls_vec3_dot_q32(dir, h->vertices[i]);
        if (d > best_v) {
            best_v = d;
            v = i;
        }
    }
    uint32_t best = UINT32_MAX;
    int64_t best_d = 0;
    for (uint32_t f = 0; f < h->face_count; f++) {
        const ls_hull_face *fc = &h->faces[f];
        bool has = false;
        for (uint32_t i = 0; i < fc->count; i++) {
            has = has || h->face_vertices[fc->first + i] == v;
        }
        int64_t d = ls_vec3_dot_q32(fc->normal, dir);
        if (has && (best == UINT32_MAX || d > best_d)) {
            best = f;
            best_d = d;
        }
    }
    return best == UINT32_MAX ? best_face(h, dir) : best;
}

/// Separation along face f of hull h of the points p[0..n) (h's frame):
/// min over p of (n_f . p) - d_f.
static ls_fx face_separation(const ls_hull *h, uint32_t f, const ls_vec3 *p, uint32_t n)
{
    const ls_hull_face *fc = &h->faces[f];
    int64_t lo = INT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        int64_t d = ls_vec3_dot_q32(fc->normal, p[i]);
        lo = d < lo ? d : lo;
    }
    return ls_fx_from_q32(ls_i64_add_sat(lo, -((int64_t)fc->d * 65536)));
}

/// The face of h facing dir (normal . dir > 0, or the most aligned one if
/// none) with the largest SAT separation of the points p (ties: lowest).
///
/// Why the early exit is exact: a face's separation is g(min over p of
/// n . p) with g(x) = from_q32(add_sat(x, -d)) non-decreasing, and the
/// running minimum only falls, so once g(running minimum) < *sep the face
/// cannot win (it needs s > *sep, or s == *sep with a lower index). A face
/// whose plane cuts the other hull loses after its first few points instead
/// of all of them: the same faces win, the same separations are returned.
static uint32_t sat_faces(const ls_hull *h, ls_vec3 dir, const ls_vec3 *p, uint32_t n, ls_fx *sep)
{
    uint32_t best = best_face(h, dir);
    *sep = face_separation(h, best, p, n);
    uint32_t first = 0;
    for (uint32_t f = 0; f < h->face_count; f++) {
        const ls_hull_face *fc = &h->faces[f];
        if (f == best || ls_vec3_dot_q32(fc->normal, dir) <= 0) {
            continue;
        }
        int64_t d = -((int64_t)fc->d * 65536), lo = INT64_MAX;
        ls_fx s = LS_FX_MAX;
        bool lost = false;
        // Start at the point that beat the last face: neighbouring faces
        // share their deepest points, so it usually beats this one at once.
        uint32_t i = first;
        for (uint32_t k = 0; k < n && !lost; k++) {
            int64_t v = ls_vec3_dot_q32(fc->normal, p[i]);
            if (v < lo) {
                lo = v;
                s = ls_fx_from_q32(ls_i64_add_sat(lo, d));
                lost = s < *sep;
                first = i;
            }
            i = i + 1 == n ? 0 : i + 1;
        }
        if (!lost && (s > *sep || (s == *sep && f < best))) {
            *sep = s;
            best = f;
        }
    }
    return best;
}

/// Point p (world) in the frame of xf.
static ls_vec3 to_local(const ls_xform *xf, ls_vec3 p)
{
    return ls_mat3_mul_tvec(xf->r, ls_vec3_sub(p, xf->p));
}

static ls_vec3 to_world(const ls_xform *xf, ls_vec3 p)
{
    return ls_vec3_add(xf->p, ls_mat3_mul_vec(xf->r, p));
}

/// Feature id of a single point from the indices of the final GJK simplex or
/// EPA face: smallest and largest index on each side.
static uint32_t point_feature(const uint8_t *ia, const uint8_t *ib, int n)
{
    uint32_t a0 = 63, a1 = 0, b0 = 63, b1 = 0;
    for (int i = 0; i < n; i++) {
        a0 = ia[i] < a0 ? ia[i] : a0;
        a1 = ia[i] > a1 ? ia[i] : a1;
        b0 = ib[i] < b0 ? ib[i] : b0;
        b1 = ib[i] > b1 ? ib[i] : b1;
    }
    return FEATURE_POINT | (a0 & 63) << 18 | (a1 & 63) << 12 | (b0 & 63) << 6 | (b1 & 63);
}

/// Closest features of two cores: GJK when separated, EPA when not.
typedef struct core_contact {
    ls_vec3 n;        ///< Unit normal from A to B.
    ls_fx sep;        ///< Core separation along n (negative = overlap).
    ls_vec3 pa, pb;   ///< Witness points on the cores (world).
    uint32_t feature; ///< Single-point feature id.
} core_contact;

/// False when the cores are farther apart than `limit`.
static bool core_query(const ls_proxy *pa, const ls_xform *xa, const ls_proxy *pb,
                       const ls_xform *xb, ls_fx limit, core_contact *cc)
{
    ls_gjk_result g;
    if (ls_gjk_distance_(pa, xa, pb, xb, &g)) {
        if (g.distance >= limit) {
            return false;
        }
        cc->n = g.normal;
        cc->sep = g.distance;
        cc->pa = g.point_a;
        cc->pb = g.point_b;
        cc->feature = point_feature(g.simplex_a, g.simplex_b, g.simplex_count);
        return true;
    }
    ls_epa_result e;
    ls_epa_penetration_(pa, xa, pb, xb, &g, &e);
    cc->n = e.normal;
    cc->sep = ls_fx_neg(e.depth);
    cc->pa = e.point_a;
    cc->pb = e.point_b;
    cc->feature = point_feature(e.face_a, e.face_b, 3);
    return true;
}

// ------------------------------------------------------ polygon clipping

// The polygons are in the reference hull's frame (clip.h).

/// A side plane s . (x - o) <= 0 of the reference face; s is not unit, and
/// distances are exact in Q32.32.
typedef struct hull_side {
    ls_vec3 s;
    int64_t c; ///< s . o
} hull_side;

static int64_t side_distance(const void *plane, ls_vec3 p)
{
    const hull_side *h = plane;
    return ls_vec3_dot_q32(h->s, p) - h->c;
}

/// a + (b - a) * t where t = da / (da - db) (da, db of opposite signs),
/// t taken to 2^-30.
static ls_vec3 side_crossing(const void *plane, ls_vec3 a, ls_vec3 b, int64_t da, int64_t db)
{
    (void)plane;
    uint64_t num = da < 0 ? 0u - (uint64_t)da : (uint64_t)da;
    uint64_t den = num + (db < 0 ? 0u - (uint64_t)db : (uint64_t)db);
    while (den >= ((uint64_t)1 << 32)) {
        num >>= 1;
        den >>= 1;
    }
    int64_t t = den ? (int64_t)((num << 30) / den) : 0;
    const int64_t h = (int64_t)1 << 29;
    return ls_vec3_make((ls_fx)(a.x + ((((int64_t)b.x - a.x) * t + h) >> 30)),
                        (ls_fx)(a.y + ((((int64_t)b.y - a.y) * t + h) >> 30)),
                        (ls_fx)(a.z + ((((int64_t)b.z - a.z) * t + h) >> 30)));
}

static const ls_clip_rule hull_sides = {side_distance, side_crossing};

/// Face contact: clip the incident face of `inc` (the face most opposed to
/// the reference normal) against the side planes of face rf of `ref`; keep
/// points below the reference plane (within the margin).
static int face_contact(const ls_hull *ref, const ls_xform *xr, uint32_t rf, const ls_hull *inc,
                        const ls_xform *xi, const ls_vec3 *inc_in_ref, bool ref_is_b,
                        const core_contact *cc, ls_fx margin, ls_manifold *m)
{
    const ls_hull_face *rfc = &ref->faces[rf];
    ls_vec3 nr = rfc->normal;
    // Incident face: among the faces around inc's deepest vertex along -nr
    // (ties: lowest index), the one most anti-parallel to nr (ties: lowest).
    ls_vec3 nr_inc = ls_mat3_mul_tvec(xi->r, ls_mat3_mul_vec(xr->r, nr));
    uint32_t ifc = incident_face(inc, ls_vec3_neg(nr_inc));
    const ls_hull_face *ic = &inc->faces[ifc];
    ls_clip_poly a, scratch;
    ls_clip_start(&a, CAND_MAX);
    for (uint32_t i = 0; i < ic->count; i++) {
        ls_clip_push(&a, inc_in_ref[inc->face_vertices[ic->first + i]], (uint8_t)i);
    }
    for (uint32_t j = 0; j < rfc->count && a.n > 0; j++) {
        ls_vec3 v0 = ref->vertices[ref->face_vertices[rfc->first + j]];
        ls_vec3 v1 = ref->vertices[ref->face_vertices[rfc->first + (j + 1) % rfc->count]];
        ls_vec3 s = ls_vec3_cross(ls_vec3_sub(v1, v0), nr); // outward side normal
        hull_side side = {s, ls_vec3_dot_q32(s, v0)};
        ls_clip(&a, &scratch, &hull_sides, &side, (uint8_t)(64 + j));
    }
    cand c[CAND_MAX + 1]; // + the GJK/EPA point
    int count = 0;
    for (int i = 0; i < a.n; i++) {
        int64_t dq = ((int64_t)rfc->d * 65536) - ls_vec3_dot_q32(nr, a.p[i]);
        ls_fx depth = ls_fx_from_q32(dq);
        if (depth > ls_fx_neg(margin)) {
            // Midway between the incident point and its projection on the face.
            ls_vec3 local = ls_vec3_mad(a.p[i], nr, depth >> 1);
            c[count].p = to_world(xr, local);
            c[count].depth = depth;
            c[count].feature = FEATURE_FACE(ref_is_b, rf, ifc, ls_clip_label_in(&a, i), a.lab[i]);
            count++;
        }
    }
    if (count == 0) {
        return 0;
    }
    // The deepest penetration may lie outside the reference face's side
    // planes (small faces, deep overlap): then keep the GJK/EPA point too.
    ls_fx deepest = c[0].depth;
    for (int i = 1; i < count; i++) {
        deepest = ls_fx_max(deepest, c[i].depth);
    }
    if (clearly_better(ls_fx_neg(cc->sep), deepest, EDGE_TOL_ABS, 6)) {
        c[count].p = ls_vec3_mid(cc->pa, cc->pb);
        c[count].depth = ls_fx_neg(cc->sep);
        c[count].feature = cc->feature;
        count++;
    }
    ls_vec3 nw = ls_vec3_normalize(ls_mat3_mul_vec(xr->r, nr), ls_vec3_make(0, LS_FX_ONE, 0));
    m->normal = ref_is_b ? ls_vec3_neg(nw) : nw;
    reduce_to_manifold(c, count, m);
    return m->count;
}

/// Quick reject: true when the hulls' bounding spheres (radius about each
/// frame's origin, rounded up) are farther apart than the margin with room
/// to spare, so core_query would find them separated beyond the margin too.
/// Why it gives the same result: GJK sees each vertex as r * v rounded, with
/// r made from a quaternion q with |q|^2 within 1 +- 1/256 (normalized on
/// entry and every sub-step; a snapshot is refused beyond that). Such a
/// matrix is |q|^2 * rotation + (1 - |q|^2) * I, entries rounded to 2^-17,
/// so |r * v| <= (1 + 2^-7 + 2^-15) |v| < |v| + |v| / 64; the points' own
/// rounding and GJK's rounded distance stay far below 256 raw (4 mm). So
/// GJK's distance is above the margin whenever the centres are farther
/// apart than reach = ra + rb + (ra + rb) / 64 + margin + 256. Half the
/// separated hull pairs of a settling pile are rejected here instead of
/// running GJK. Hulls of 256 m or more (2^24 raw) always run GJK.
static bool far_apart(const ls_hull *ha, const ls_xform *xa, const ls_hull *hb, const ls_xform *xb,
                      ls_fx margin)
{
    const uint32_t big = 1u << 24;
    if ((uint32_t)ha->radius >= big || (uint32_t)hb->radius >= big || (uint32_t)margin >= big) {
        return false;
    }
    int64_t r = (int64_t)ha->radius + hb->radius;
    int64_t reach = r + (r >> 6) + margin + 256; // below 2^26
    int64_t d[3] = {(int64_t)xb->p.x - xa->p.x, (int64_t)xb->p.y - xa->p.y,
                    (int64_t)xb->p.z - xa->p.z};
    uint64_t d2 = 0;
    for (int k = 0; k < 3; k++) {
        if (d[k] > reach || d[k] < -reach) {
            return true;
        }
        d2 += (uint64_t)(d[k] * d[k]);
    }
    return d2 > (uint64_t)(reach * reach);
}

/// Hull a (frame xa: world = xa.p + xa.r * local) against hull b.
static int hull_hull(const ls_hull *ha, const ls_xform *xa, const ls_hull *hb, const ls_xform *xb,
                     ls_fx margin, ls_manifold *m)
{
    m->count = 0;
    ls_proxy pa = {ha->vertices, ha->vertex_count, 0};
    ls_proxy pb = {hb->vertices, hb->vertex_count, 0};
    core_contact cc;
    if (far_apart(ha, xa, hb, xb, margin) || !core_query(&pa, xa, &pb, xb, margin, &cc)) {
        return 0;
    }
    ls_vec3 b_in_a[LS_HULL_MAX_VERTICES], a_in_b[LS_HULL_MAX_VERTICES];
    if (ls_mat3_is_small(&xa->r) && ls_mat3_is_small(&xb->r) && // same bits, fewer checks
        (ls_points_magnitude_bits(ha->vertices, ha->vertex_count) |
         ls_points_magnitude_bits(hb->vertices, hb->vertex_count)) < (1u << 27)) {
        for (uint32_t i = 0; i < hb->vertex_count; i++) {
            b_in_a[i] =
                ls_unplace_small(&xa->r, xa->p, ls_place_small(xb->p, &xb->r, hb->vertices[i]));
        }
        for (uint32_t i = 0; i < ha->vertex_count; i++) {
            a_in_b[i] =
                ls_unplace_small(&xb->r, xb->p, ls_place_small(xa->p, &xa->r, ha->vertices[i]));
        }
    } else {
        for (uint32_t i = 0; i < hb->vertex_count; i++) {
            b_in_a[i] = to_local(xa, to_world(xb, hb->vertices[i]));
        }
        for (uint32_t i = 0; i < ha->vertex_count; i++) {
            a_in_b[i] = to_local(xb, to_world(xa, ha->vertices[i]));
        }
    }
    ls_fx sep_a, sep_b;
    uint32_t fa = sat_faces(ha, ls_mat3_mul_tvec(xa->r, cc.n), b_in_a, hb->vertex_count, &sep_a);
    uint32_t fb =
        sat_faces(hb, ls_mat3_mul_tvec(xb->r, ls_vec3_neg(cc.n)), a_in_b, ha->vertex_count, &sep_b);
    bool ref_b = clearly_better(sep_b, sep_a, FACE_TOL_ABS, 7);
    ls_fx face_sep = ref_b ? sep_b : sep_a;
    if (!clearly_better(cc.sep, face_sep, EDGE_TOL_ABS, 6)) {
        int n = ref_b ? face_contact(hb, xb, fb, ha, xa, a_in_b, true, &cc, margin, m)
                      : face_contact(ha, xa, fa, hb, xb, b_in_a, false, &cc, margin, m);
        if (n > 0) {
            return n;
        }
    }
    // Edge contact (or nothing survived the clip): one point between the cores.
    m->normal = cc.n;
    ls_manifold_push(m, ls_vec3_mid(cc.pa, cc.pb), ls_fx_neg(cc.sep), cc.feature);
    return m->count;
}

/// The frame of a shape's local centre: the body transform moved to offset.
static ls_xform shape_frame(const ls_geom *g, const ls_xform *xf)
{
    ls_xform x = *xf;
    x.p = ls_geom_center(g, xf);
    return x;
}

int ls_collide_hull_hull_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                          const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    ls_xform fa = shape_frame(a, xa), fb = shape_frame(b, xb);
    return hull_hull(a->hull, &fa, b->hull, &fb, margin, m);
}

int ls_collide_box_hull_(const ls_geom *a, const ls_xform *xa, const ls_geom *b, const ls_xform *xb,
                         ls_fx margin, ls_manifold *m)
{
    ls_hull box;
    ls_hull_make_box_(a->half_extents, &box);
    ls_xform fa = shape_frame(a, xa), fb = shape_frame(b, xb);
    return hull_hull(&box, &fa, b->hull, &fb, margin, m);
}

int ls_collide_sphere_hull_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                            const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    m->count = 0;
    ls_vec3 c = ls_geom_center(a, xa);
    ls_xform fb = shape_frame(b, xb);
    const ls_hull *h = b->hull;
    ls_fx r = a->radius;
    ls_vec3 zero = ls_vec3_zero();
    ls_proxy pa = {&zero, 1, 0};
    ls_proxy pb = {h->vertices, h->vertex_count, 0};
    ls_xform xc = *xa;
    xc.p = c;
    ls_gjk_result g;
    if (ls_gjk_distance_(&pa, &xc, &pb, &fb, &g)) {
        if (g.distance >= ls_fx_add(r, margin)) {
            return 0;
        }
        m->normal = g.normal;
        ls_vec3 on_a = ls_vec3_mad(c, g.normal, r);
        ls_manifold_push(m, ls_vec3_mid(on_a, g.point_b), ls_fx_sub(r, g.distance), 0);
        return m->count;
    }
    // Centre inside (or on) the hull: leave through the face of least
    // penetration; the hull then lies along minus its normal.
    ls_vec3 cl = to_local(&fb, c);
    uint32_t best = 0;
    int64_t best_s = INT64_MIN;
    for (uint32_t f = 0; f < h->face_count; f++) {
        int64_t s = ls_vec3_dot_q32(h->faces[f].normal, cl) - ((int64_t)h->faces[f].d * 65536);
        if (s > best_s) {
            best_s = s;
            best = f;
        }
    }
    ls_fx s = ls_fx_from_q32(best_s); // <= 0: height above the face plane
    ls_vec3 nf = ls_vec3_normalize(ls_mat3_mul_vec(fb.r, h->faces[best].normal),
                                   ls_vec3_make(0, LS_FX_ONE, 0));
    m->normal = ls_vec3_neg(nf);
    ls_vec3 on_b = ls_vec3_mad(c, nf, ls_fx_neg(s));
    ls_vec3 on_a = ls_vec3_mad(c, nf, ls_fx_neg(r));
    ls_manifold_push(m, ls_vec3_mid(on_a, on_b), ls_fx_sub(r, s), 0);
    return m->count;
}

/// Clip the parameter range [lo, hi] (Q30 of p0 -> p1) of a segment to the
/// half-space s . (x - o) <= 0. False when nothing is left.
static bool clip_segment(ls_vec3 p0, ls_vec3 p1, ls_vec3 s, ls_vec3 o, int64_t *lo, int64_t *hi)
{
    int64_t c = ls_vec3_dot_q32(s, o);
    int64_t d0 = ls_vec3_dot_q32(s, p0) - c, d1 = ls_vec3_dot_q32(s, p1) - c;
    if (d0 > 0 && d1 > 0) {
        return false;
    }
    if (d0 <= 0 && d1 <= 0) {
        return *lo <= *hi;
    }
    // Crossing at t = d0 / (d0 - d1), to 2^-30.
    uint64_t num = d0 < 0 ? 0u - (uint64_t)d0 : (uint64_t)d0;
    uint64_t den = num + (d1 < 0 ? 0u - (uint64_t)d1 : (uint64_t)d1);
    while (den >= ((uint64_t)1 << 32)) {
        num >>= 1;
        den >>= 1;
    }
    int64_t t = (int64_t)((num << 30) / den);
    if (d0 > 0) {
        *lo = t > *lo ? t : *lo;
    } else {
        *hi = t < *hi ? t : *hi;
    }
    return *lo <= *hi;
}

/// p0 + (p1 - p0) * t, t in Q30.
static ls_vec3 seg_at(ls_vec3 p0, ls_vec3 p1, int64_t t)
{
    const int64_t h = (int64_t)1 << 29;
    return ls_vec3_make((ls_fx)(p0.x + ((((int64_t)p1.x - p0.x) * t + h) >> 30)),
                        (ls_fx)(p0.y + ((((int64_t)p1.y - p0.y) * t + h) >> 30)),
                        (ls_fx)(p0.z + ((((int64_t)p1.z - p0.z) * t + h) >> 30)));
}

int ls_collide_capsule_hull_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                             const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    m->count = 0;
    const ls_hull *h = b->hull;
    ls_xform fb = shape_frame(b, xb);
    ls_vec3 storage[8];
    ls_proxy pa = ls_proxy_of_geom_(a, storage);
    pa.radius = 0;
    ls_proxy pb = {h->vertices, h->vertex_count, 0};
    ls_fx r = a->radius;
    core_contact cc;
    if (!core_query(&pa, xa, &pb, &fb, ls_fx_add(r, margin), &cc)) {
        return 0;
    }
    // Segment ends in the hull frame; the face most opposed to the normal.
    ls_vec3 p0 = to_local(&fb, to_world(xa, storage[0]));
    ls_vec3 p1 = to_local(&fb, to_world(xa, storage[pa.count - 1]));
    uint32_t f = best_face(h, ls_mat3_mul_tvec(fb.r, ls_vec3_neg(cc.n)));
    const ls_hull_face *fc = &h->faces[f];
    ls_vec3 ends[2] = {p0, p1};
    ls_fx face_sep = face_separation(h, f, ends, 2);
    if (!clearly_better(cc.sep, face_sep, EDGE_TOL_ABS, 6)) {
        // Face contact: the part of the segment over the face gives up to
        // two points (features 0 and 1), as box-capsule does.
        int64_t t[2] = {0, (int64_t)1 << 30};
        bool ok = true;
        for (uint32_t j = 0; ok && j < fc->count; j++) {
            ls_vec3 v0 = h->vertices[h->face_vertices[fc->first + j]];
            ls_vec3 v1 = h->vertices[h->face_vertices[fc->first + (j + 1) % fc->count]];
            ok = clip_segment(p0, p1, ls_vec3_cross(ls_vec3_sub(v1, v0), fc->normal), v0, &t[0],
                              &t[1]);
        }
        ls_vec3 nf =
            ls_vec3_normalize(ls_mat3_mul_vec(fb.r, fc->normal), ls_vec3_make(0, LS_FX_ONE, 0));
        m->normal = ls_vec3_neg(nf);
        for (int i = 0; ok && i < 2 && (i == 0 || t[1] > t[0]); i++) {
            ls_vec3 e = seg_at(p0, p1, t[i]);
            ls_fx height =
                ls_fx_from_q32(ls_vec3_dot_q32(fc->normal, e) - ((int64_t)fc->d * 65536));
            ls_fx depth = ls_fx_sub(r, height);
            if (depth > ls_fx_neg(margin)) {
                ls_vec3 on_face = ls_vec3_mad(e, fc->normal, ls_fx_neg(height));
                ls_vec3 on_cap = ls_vec3_mad(e, fc->normal, ls_fx_neg(r));
                ls_manifold_push(m, to_world(&fb, ls_vec3_mid(on_face, on_cap)), depth,
                                 (uint32_t)i);
            }
        }
        if (m->count > 0) {
            return m->count;
        }
    }
    m->normal = cc.n;
    ls_vec3 on_a = ls_vec3_mad(cc.pa, cc.n, r);
    ls_manifold_push(m, ls_vec3_mid(on_a, cc.pb), ls_fx_sub(r, cc.sep), 2);
    return m->count;
}

int ls_collide_hull_plane_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                           const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    (void)xb; // planes are static and given in world coordinates
    m->count = 0;
    const ls_hull *h = a->hull;
    ls_xform fa = shape_frame(a, xa);
    ls_vec3 n = b->normal;
    m->normal = ls_vec3_neg(n);
    // Quick reject, as for a box (collide_box.c): every vertex is within the
    // hull's radius (rounded up) of its origin, so when the origin is higher
    // than the margin by the radius and the vertices' rounding (slack 256),
    // none can be within the margin and the result is the same.
    ls_fx origin = ls_fx_sub(ls_vec3_dot(n, fa.p), b->plane_d);
    if ((int64_t)origin - h->radius - 256 > (int64_t)margin) {
        return 0;
    }
    cand c[CAND_MAX];
    int count = 0;
    for (uint32_t v = 0; v < h->vertex_count; v++) {
        ls_vec3 p = to_world(&fa, h->vertices[v]);
        ls_fx height = ls_fx_sub(ls_vec3_dot(n, p), b->plane_d);
        if (ls_fx_neg(height) > ls_fx_neg(margin)) {
            c[count].p = ls_vec3_mad(p, n, ls_fx_neg(height >> 1));
            c[count].depth = ls_fx_neg(height);
            c[count].feature = v;
            count++;
        }
    }
    reduce_to_manifold(c, count, m);
    return m->count;
}
