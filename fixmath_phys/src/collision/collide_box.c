// SPDX-License-Identifier: MIT
// Narrow phase for boxes: box-plane, and box-box by the separating axis test
// (15 axes) followed by reference/incident face clipping or an edge-edge
// point. Both reduce their candidate points to at most 4 the same way.
#include "clip.h"
#include "collide_internal.h"

/// Most candidate points: 8 box vertices, or a quad clipped by 4 planes.
#define CAND_MAX 8

/// Absolute tolerance (0.5 mm) by which a face of B must beat a face of A.
#define FACE_TOL_ABS ((ls_fx)33)
/// Absolute tolerance (1 mm) by which an edge axis must beat the best face.
#define EDGE_TOL_ABS ((ls_fx)66)

typedef ls_contact_cand cand;

/// A box in world space.
typedef struct box_w {
    ls_vec3 c;    ///< Centre.
    ls_mat3 r;    ///< Rotation (local -> world).
    ls_vec3 u[3]; ///< Local axes in world space (columns of r).
    ls_fx h[3];   ///< Half extents.
} box_w;

/// World description of box geometry g on transform xf.
static box_w box_make(const ls_geom *g, const ls_xform *xf)
{
    box_w b;
    b.c = ls_geom_center(g, xf);
    b.r = xf->r;
    for (int k = 0; k < 3; k++) {
        b.u[k] = ls_mat3_col(xf->r, k);
        b.h[k] = ls_vec3_comp(g->half_extents, k);
    }
    return b;
}

/// Projected half width of box b on unit axis l: sum h_k |l . u_k|, rounded once.
static ls_fx box_radius(const box_w *b, ls_vec3 l)
{
    int64_t s = 0;
    for (int k = 0; k < 3; k++) {
        s += (int64_t)b->h[k] * ls_fx_abs(ls_vec3_dot(l, b->u[k]));
    }
    return ls_fx_from_q32(s);
}

/// World position of box vertex at local offset (sx*hx, sy*hy, sz*hz), s = +-1.
static ls_vec3 box_point(const box_w *b, const int s[3])
{
    ls_vec3 local = ls_vec3_make(s[0] > 0 ? b->h[0] : ls_fx_neg(b->h[0]),
                                 s[1] > 0 ? b->h[1] : ls_fx_neg(b->h[1]),
                                 s[2] > 0 ? b->h[2] : ls_fx_neg(b->h[2]));
    return ls_vec3_add(b->c, ls_mat3_mul_vec(b->r, local));
}

int ls_collide_box_plane_(const ls_geom *a, const ls_xform *xa, const ls_geom *b,
                          const ls_xform *xb, ls_fx margin, ls_manifold *m)
{
    (void)xb; // planes are static and given in world coordinates
    ls_vec3 n = b->normal;
    m->normal = ls_vec3_neg(n);
    // A cheaper reject first, before the box's axes: box_radius(n) = sum h_k
    // |n . u_k| is at most (1 + 1/64) (hx + hy + hz) + 2 raw (the axes u_k
    // are columns of a matrix of a quaternion with |q|^2 within 1 +- 1/256,
    // of norm below 1 + 2^-7 + 2^-15, and n is unit), and ls_fx_sub is
    // non-increasing in what it subtracts: a box this bound rejects is
    // rejected by the test below too, with the same result (no contact).
    ls_fx centre = ls_fx_sub(ls_vec3_dot(n, ls_geom_center(a, xa)), b->plane_d);
    {
        const ls_vec3 h = a->half_extents;
        int64_t sum = (int64_t)ls_fx_abs(h.x) + ls_fx_abs(h.y) + ls_fx_abs(h.z);
        int64_t bound = sum + (sum >> 6) + 2;
        ls_fx reach = bound > LS_FX_MAX ? LS_FX_MAX : (ls_fx)bound;
        if ((int64_t)ls_fx_sub(centre, reach) - 256 > (int64_t)margin) {
            return 0;
        }
    }
    box_w box = box_make(a, xa);
    // Why a quick reject first: a plane's bounds are infinite, so every box of
    // the world is a broad-phase pair with the ground each tick, and nearly all
    // are far above it. The box's lowest point is its centre's height less its
    // projected half width; when that is above the margin by more than the
    // rounding of the eight vertices below (a few units each: the slack is
    // 256), no vertex can be within the margin and the result is the same.
    ls_fx lowest = ls_fx_sub(centre, box_radius(&box, n));
    if ((int64_t)lowest - 256 > (int64_t)margin) {
        return 0;
    }
    cand c[CAND_MAX];
    int count = 0;
    // Vertex v has +h on axis k when bit k of v is set; its id is v.
    for (int v = 0; v < 8; v++) {
        int s[3] = {(v & 1) ? 1 : -1, (v & 2) ? 1 : -1, (v & 4) ? 1 : -1};
        ls_vec3 p = box_point(&box, s);
        ls_fx height = ls_fx_sub(ls_vec3_dot(n, p), b->plane_d);
        if (ls_fx_neg(height) > ls_fx_neg(margin)) {
            // Midway between the vertex and its projection onto the plane.
            c[count].p = ls_vec3_mad(p, n, ls_fx_neg(height >> 1));
            c[count].depth = ls_fx_neg(height);
            c[count].feature = (uint32_t)v;
            count++;
        }
    }
    ls_manifold_reduce_(c, count, m);
    return m->count;
}

// ---------------------------------------------------------------- box-box SAT

/// Which family an axis belongs to.
typedef enum axis_kind { AXIS_FACE_A, AXIS_FACE_B, AXIS_EDGE } axis_kind;

/// The best axis found so far.
typedef struct sat_axis {
    ls_fx sep;      ///< Separation along the axis (negative = overlap).
    axis_kind kind; ///< Face of A, face of B or edge pair.
    int i;          ///< Axis of A (face A, edge) or of B (face B).
    int j;          ///< Axis of B (edge).
    int sign;       ///< +1 when the unit axis already points from A to B.
    ls_vec3 n;      ///< Unit axis oriented from A to B.
} sat_axis;

/// Evaluate unit axis l; keeps it in *best when strictly better. Returns
/// false when l separates the boxes by more than the margin.
static bool test_axis(const box_w *A, const box_w *B, ls_vec3 t, ls_vec3 l, sat_axis cand_axis,
                      ls_fx margin, sat_axis *best)
{
    ls_fx dist = ls_vec3_dot(t, l);
    ls_fx sep = ls_fx_sub(ls_fx_sub(ls_fx_abs(dist), box_radius(A, l)), box_radius(B, l));
    if (sep > margin) {
        return false;
    }
    if (sep > best->sep) {
        cand_axis.sep = sep;
        cand_axis.sign = dist >= 0 ? 1 : -1;
        cand_axis.n = dist >= 0 ? l : ls_vec3_neg(l);
        *best = cand_axis;
    }
    return true;
}

/// Best face axis of box X (A or B). False when one separates.
static bool sat_faces(const box_w *A, const box_w *B, ls_vec3 t, axis_kind kind, ls_fx margin,
                      sat_axis *best)
{
    const box_w *x = kind == AXIS_FACE_A ? A : B;
    for (int i = 0; i < 3; i++) {
        sat_axis c = {0, kind, i, 0, 1, {0, 0, 0}};
        if (!test_axis(A, B, t, x->u[i], c, margin, best)) {
            return false;
        }
    }
    return true;
}

/// Best edge-pair axis u_A[i] x u_B[j]; near-parallel pairs are skipped
/// because their short cross products cannot be normalised accurately.
static bool sat_edges(const box_w *A, const box_w *B, ls_vec3 t, ls_fx margin, sat_axis *best)
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            ls_vec3 l = ls_vec3_cross(A->u[i], B->u[j]);
            if (ls_vec3_len_sq_q32(l) < (uint64_t)LS_COLLIDE_PARALLEL_Q32) {
                continue;
            }
            sat_axis c = {0, AXIS_EDGE, i, j, 1, {0, 0, 0}};
            if (!test_axis(A, B, t, ls_vec3_normalize(l, l), c, margin, best)) {
                return false;
            }
        }
    }
    return true;
}

/// Hysteresis: a challenger must beat sep by abs + |sep| * 2^-shift, so
/// resting stacks keep the same axis from tick to tick.
static bool clearly_better(ls_fx challenger, ls_fx sep, ls_fx abs_tol, int shift)
{
    ls_fx tol = ls_fx_add(abs_tol, ls_fx_abs(sep) >> shift);
    return challenger > ls_fx_add(sep, tol);
}

/// Run the separating axis test. Returns false when the boxes are separated
/// by more than the margin.
static bool sat_box_box(const box_w *A, const box_w *B, ls_fx margin, sat_axis *best)
{
    ls_vec3 t = ls_vec3_sub(B->c, A->c);
    sat_axis fa = {LS_FX_MIN, AXIS_FACE_A, 0, 0, 1, {0, 0, 0}};
    sat_axis fb = {LS_FX_MIN, AXIS_FACE_B, 0, 0, 1, {0, 0, 0}};
    sat_axis ed = {LS_FX_MIN, AXIS_EDGE, -1, -1, 1, {0, 0, 0}};
    if (!sat_faces(A, B, t, AXIS_FACE_A, margin, &fa) ||
        !sat_faces(A, B, t, AXIS_FACE_B, margin, &fb) || !sat_edges(A, B, t, margin, &ed)) {
        return false;
    }
    *best = fa;
    if (clearly_better(fb.sep, fa.sep, FACE_TOL_ABS, 7)) {
        *best = fb;
    }
    if (ed.i >= 0 && clearly_better(ed.sep, best->sep, EDGE_TOL_ABS, 6)) {
        *best = ed;
    }
    return true;
}

// ------------------------------------------------------- face clipping

// The polygons are in the reference box's frame (clip.h). Labels: 0..3
// incident-face edges, 4..7 reference side planes.

/// Side plane sign * x_axis <= h of the reference box, in its frame.
typedef struct box_side {
    int axis;
    int sign;
    ls_fx h;
} box_side;

static int64_t side_distance(const void *plane, ls_vec3 p)
{
    const box_side *s = plane;
    ls_fx c = ls_vec3_comp(p, s->axis);
    return ls_fx_sub(s->sign > 0 ? c : ls_fx_neg(c), s->h);
}

/// a + (b - a) * da / den for one component, exact product in 64 bits.
static ls_fx lerp_comp(ls_fx a, ls_fx b, int64_t da, int64_t den)
{
    return (ls_fx)(a + (((int64_t)b - a) * da) / den);
}

/// Where edge a->b crosses the side plane (da, db on opposite sides).
static ls_vec3 side_crossing(const void *plane, ls_vec3 a, ls_vec3 b, int64_t da, int64_t db)
{
    const box_side *s = plane;
    int64_t den = da - db;
    ls_vec3 x = ls_vec3_make(lerp_comp(a.x, b.x, da, den), lerp_comp(a.y, b.y, da, den),
                             lerp_comp(a.z, b.z, da, den));
    // Exactly on the plane, never 1 ulp outside.
    return ls_vec3_with(x, s->axis, s->sign > 0 ? s->h : ls_fx_neg(s->h));
}

static const ls_clip_rule box_sides = {side_distance, side_crossing};

/// Index of the incident face of box inc against outward reference normal nr:
/// the face most anti-parallel to it, as 2*axis + (negative side).
static int incident_face(const box_w *inc, ls_vec3 nr)
{
    int best = 0;
    ls_fx best_abs = -1;
    ls_fx best_dot = 0;
    for (int j = 0; j < 3; j++) {
        ls_fx d = ls_vec3_dot(inc->u[j], nr);
        if (ls_fx_abs(d) > best_abs) {
            best = j;
            best_abs = ls_fx_abs(d);
            best_dot = d;
        }
    }
    return 2 * best + (best_dot > 0); // outward normal must oppose nr
}

/// The incident face as a quad in the reference box frame, edges labelled 0..3.
static void incident_quad(const box_w *ref, const box_w *inc, int face, ls_clip_poly *q)
{
    int j = face / 2, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    static const int corner[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
    ls_clip_start(q, CAND_MAX);
    for (int v = 0; v < 4; v++) {
        int s[3];
        s[j] = (face & 1) ? -1 : 1;
        s[j1] = corner[v][0];
        s[j2] = corner[v][1];
        ls_vec3 w = box_point(inc, s);
        ls_clip_push(q, ls_mat3_mul_tvec(ref->r, ls_vec3_sub(w, ref->c)), (uint8_t)v);
    }
}

/// Face contact: clip the incident face of inc against the side planes of
/// reference face (axis k, outward sign) of ref. Ids pack the two labels of
/// each vertex, the incident face, the reference face and which box is ref.
static int face_contact(const box_w *ref, const box_w *inc, int k, int sign, bool ref_is_b,
                        ls_fx margin, ls_manifold *m)
{
    ls_vec3 nr = sign > 0 ? ref->u[k] : ls_vec3_neg(ref->u[k]);
    int ref_face = 2 * k + (sign < 0);
    int inc_face = incident_face(inc, nr);
    ls_clip_poly a, scratch;
    incident_quad(ref, inc, inc_face, &a);
    for (int side = 0; side < 4; side++) {
        int axis = (k + 1 + side / 2) % 3;
        box_side plane = {axis, (side & 1) ? -1 : 1, ref->h[axis]};
        ls_clip(&a, &scratch, &box_sides, &plane, (uint8_t)(4 + side));
    }
    ls_fx hk = ref->h[k];
    ls_fx face = sign > 0 ? hk : ls_fx_neg(hk);
    uint32_t base = (uint32_t)inc_face << 6 | (uint32_t)ref_face << 9 | (uint32_t)ref_is_b << 12;
    cand c[CAND_MAX];
    int count = 0;
    for (int i = 0; i < a.n; i++) {
        ls_fx xk = ls_vec3_comp(a.p[i], k);
        ls_fx depth = ls_fx_sub(hk, sign > 0 ? xk : ls_fx_neg(xk)); // below the ref face
        if (depth > ls_fx_neg(margin)) {
            // Midway between the incident point and its projection on the face.
            ls_fx mid = (ls_fx)(((int64_t)xk + face) >> 1);
            ls_vec3 local = ls_vec3_with(a.p[i], k, mid);
            c[count].p = ls_vec3_add(ref->c, ls_mat3_mul_vec(ref->r, local));
            c[count].depth = depth;
            c[count].feature = base | (uint32_t)ls_clip_label_in(&a, i) << 3 | a.lab[i];
            count++;
        }
    }
    m->normal = ref_is_b ? ls_vec3_neg(nr) : nr;
    ls_manifold_reduce_(c, count, m);
    return m->count;
}

/// The edge of box b parallel to axis i that lies farthest along dir: its
/// centre, direction and half length; *bits gets the chosen signs.
static ls_segment support_edge(const box_w *b, int i, ls_vec3 dir, uint32_t *bits)
{
    int s[3] = {1, 1, 1};
    *bits = 0;
    for (int k = 0; k < 3; k++) {
        if (k != i && ls_vec3_dot(dir, b->u[k]) < 0) {
            s[k] = -1;
            *bits |= 1u << k;
        }
    }
    int si[3] = {s[0], s[1], s[2]};
    si[i] = 1;
    ls_vec3 end = box_point(b, si);
    ls_segment e = {ls_vec3_mad(end, b->u[i], ls_fx_neg(b->h[i])), b->u[i], b->h[i]};
    return e;
}

/// Edge-edge contact: one point midway between the closest points of the two
/// supporting edges.
static int edge_contact(const box_w *A, const box_w *B, const sat_axis *ax, ls_fx margin,
                        ls_manifold *m)
{
    uint32_t bits_a, bits_b;
    ls_segment ea = support_edge(A, ax->i, ax->n, &bits_a);
    ls_segment eb = support_edge(B, ax->j, ls_vec3_neg(ax->n), &bits_b);
    ls_fx s, t;
    ls_segment_closest_(&ea, &eb, &s, &t);
    ls_vec3 p = ls_segment_at(&ea, s);
    ls_vec3 q = ls_segment_at(&eb, t);
    ls_fx depth = ls_vec3_dot(ls_vec3_sub(p, q), ax->n);
    if (depth <= ls_fx_neg(margin)) {
        return 0;
    }
    m->normal = ax->n;
    uint32_t id = 1u << 13 | (uint32_t)(ax->i * 3 + ax->j) | bits_a << 4 | bits_b << 7;
    ls_manifold_push(m, ls_vec3_mid(p, q), depth, id);
    return m->count;
}

int ls_collide_box_box_(const ls_geom *a, const ls_xform *xa, const ls_geom *b, const ls_xform *xb,
                        ls_fx margin, ls_manifold *m)
{
    box_w A = box_make(a, xa);
    box_w B = box_make(b, xb);
    sat_axis ax;
    if (!sat_box_box(&A, &B, margin, &ax)) {
        return 0;
    }
    switch (ax.kind) {
    case AXIS_FACE_A:
        return face_contact(&A, &B, ax.i, ax.sign, false, margin, m);
    case AXIS_FACE_B:
        // B's reference face looks back at A, against the A-to-B axis.
        return face_contact(&B, &A, ax.i, -ax.sign, true, margin, m);
    default:
        return edge_contact(&A, &B, &ax, margin, m);
    }
}
