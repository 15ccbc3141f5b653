// SPDX-License-Identifier: MIT
// GJK distance, EPA penetration depth and conservative-advancement shape
// casts on convex proxies. Every decision (Voronoi region, origin inside,
// face visibility, degeneracy) is an exact integer predicate on raw Q16.16
// coordinates, in 64 or 128 bits; only reported values (closest points,
// distances, normals) are rounded. Algorithms, tolerances and caps:
// SPEC.md §20.
#include "gjk.h"
#include "../math/place.h"
#include "shape_kind.h"

#include "collide_internal.h"
#include "hull.h"

#include <string.h>

// ------------------------------------------------------------ wide helpers

int ls_orient3d_(ls_vec3 a, ls_vec3 b, ls_vec3 c, ls_vec3 p)
{
    ls_i3 ia = ls_i3_of(a);
    ls_i3 n = ls_i3_cross(ls_i3_sub(ls_i3_of(b), ia), ls_i3_sub(ls_i3_of(c), ia));
    return ls_i128_sign(ls_i3_dot_wide(n, ls_i3_sub(ls_i3_of(p), ia)));
}

/// |v| as an unsigned 64-bit magnitude.
static uint64_t mag64(int64_t v)
{
    return v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
}

ls_i3 ls_i3_fit_(ls_i3 v, int bits)
{
    uint64_t m = mag64(v.x) | mag64(v.y) | mag64(v.z);
    if (m == 0) {
        return v;
    }
    int top = 63 - __builtin_clzll(m); // highest set bit of the largest magnitude
    int sh = top - (bits - 1);
    if (sh > 0) {
        v.x >>= sh;
        v.y >>= sh;
        v.z >>= sh;
    } else if (sh < 0) {
        int64_t f = (int64_t)1 << -sh;
        v.x *= f;
        v.y *= f;
        v.z *= f;
    }
    return v;
}

/// A 128-bit vector scaled by a power of two into int64 components below
/// 2^bits (the largest in [2^(bits-1), 2^bits)); zero stays zero.
static ls_i3 fit_wide(ls_i128 x, ls_i128 y, ls_i128 z, int bits)
{
    int top = ls_i128_bits(x);
    top = ls_i128_bits(y) > top ? ls_i128_bits(y) : top;
    top = ls_i128_bits(z) > top ? ls_i128_bits(z) : top;
    int sh = top - bits;
    ls_i3 r;
    if (sh > 0) {
        x = ls_i128_shr(x, sh);
        y = ls_i128_shr(y, sh);
        z = ls_i128_shr(z, sh);
    }
    r.x = ls_i128_lo64(x);
    r.y = ls_i128_lo64(y);
    r.z = ls_i128_lo64(z);
    return sh < 0 ? ls_i3_fit_(r, bits) : r;
}

ls_i3 ls_i3_unit_(ls_i3 v, int bits, ls_i3 fallback)
{
    if (ls_i3_is_zero(v)) {
        return fallback;
    }
    v = ls_i3_fit_(v, 30);
    uint64_t len = ls_isqrt64((uint64_t)(v.x * v.x + v.y * v.y + v.z * v.z)); // < 2^31
    int64_t l = (int64_t)len, h = l / 2;
    int64_t one = (int64_t)1 << bits;
    ls_i3 r;
    r.x = (v.x >= 0 ? v.x * one + h : v.x * one - h) / l;
    r.y = (v.y >= 0 ? v.y * one + h : v.y * one - h) / l;
    r.z = (v.z >= 0 ? v.z * one + h : v.z * one - h) / l;
    return r;
}

ls_vec3 ls_i3_unit_fx_(ls_i3 v, ls_vec3 fallback)
{
    if (ls_i3_is_zero(v)) {
        return fallback;
    }
    ls_i3 u = ls_i3_unit_(v, 16, ls_i3_of(fallback));
    return ls_vec3_make((ls_fx)u.x, (ls_fx)u.y, (ls_fx)u.z);
}

// ------------------------------------------------------------------ proxies

ls_proxy ls_proxy_of_geom_(const ls_geom *g, ls_vec3 storage[8])
{
    // Each kind gives its own proxy (shape_kind.h); others have none.
    const ls_shape_kind *kind = ls_shape_kind_of(g->kind);
    if (kind && kind->proxy) {
        return kind->proxy(g, storage);
    }
    ls_proxy p = {storage, 0, 0};
    return p;
}

// ------------------------------------------------------------ the work frame

/// Both proxies in a frame centred on A's body position (world = origin +
/// work), so coordinates stay object-sized near contact: A's points within
/// +-2^24 raw (±111 m * sqrt 3), B's within +-2^28.2 for world positions in
/// range, and differences of Minkowski points within +-2^25.
typedef struct ctx {
    ls_vec3 origin;
    uint32_t na, nb;
    ls_vec3 pa[LS_HULL_MAX_VERTICES];
    ls_vec3 pb[LS_HULL_MAX_VERTICES];
} ctx;

static uint32_t clamp_count(uint32_t n)
{
    return n > LS_HULL_MAX_VERTICES ? LS_HULL_MAX_VERTICES : n;
}

static void ctx_init(ctx *c, const ls_proxy *a, const ls_xform *xa, const ls_proxy *b,
                     const ls_xform *xb)
{
    c->origin = xa->p;
    c->na = clamp_count(a->count);
    c->nb = clamp_count(b->count);
    ls_vec3 t = ls_vec3_sub(xb->p, xa->p);
    if (ls_mat3_is_small(&xa->r) && ls_mat3_is_small(&xb->r) && // same bits, fewer checks
        (ls_points_magnitude_bits(a->points, c->na) | ls_points_magnitude_bits(b->points, c->nb)) <
            (1u << 27)) {
        ls_vec3 zero = {0, 0, 0};
        for (uint32_t i = 0; i < c->na; i++) {
            c->pa[i] = ls_place_small(zero, &xa->r, a->points[i]);
        }
        for (uint32_t i = 0; i < c->nb; i++) {
            c->pb[i] = ls_place_small(t, &xb->r, b->points[i]);
        }
        return;
    }
    for (uint32_t i = 0; i < c->na; i++) {
        c->pa[i] = ls_mat3_mul_vec(xa->r, a->points[i]);
    }
    for (uint32_t i = 0; i < c->nb; i++) {
        c->pb[i] = ls_vec3_add(t, ls_mat3_mul_vec(xb->r, b->points[i]));
    }
}

/// Index of the point farthest along d (exact int64 dots; ties: lowest index).
static uint32_t argmax_dot(const ls_vec3 *p, uint32_t n, ls_i3 d)
{
    uint32_t best = 0;
    int64_t best_v = ls_i3_dot(d, ls_i3_of(p[0]));
    for (uint32_t i = 1; i < n; i++) {
        int64_t v = ls_i3_dot(d, ls_i3_of(p[i]));
        if (v > best_v) {
            best = i;
            best_v = v;
        }
    }
    return best;
}

/// A Minkowski-difference point w = a - b with the indices that made it.
typedef struct vert {
    ls_vec3 w, a, b;
    uint8_t ia, ib;
} vert;

static vert make_vert(const ctx *c, uint32_t ia, uint32_t ib)
{
    vert v;
    v.a = c->pa[ia];
    v.b = c->pb[ib];
    v.w = ls_vec3_sub(v.a, v.b);
    v.ia = (uint8_t)ia;
    v.ib = (uint8_t)ib;
    return v;
}

/// Support point of A - B along d (|components| < 2^31).
static vert support(const ctx *c, ls_i3 d)
{
    ls_i3 nd = {-d.x, -d.y, -d.z};
    return make_vert(c, argmax_dot(c->pa, c->na, d), argmax_dot(c->pb, c->nb, nd));
}

// ------------------------------------------------------------- the simplex

/// Closest feature of a simplex to the origin.
typedef struct solution {
    int n;          ///< Vertices kept (1..4).
    int idx[4];     ///< Their indices in the simplex, increasing.
    int32_t lam[4]; ///< Barycentric weights, Q30, summing to 2^30 (unused if contains).
    ls_vec3 v;      ///< Closest point (work frame), rounded.
    ls_i3 vh;       ///< Closest point before rounding: sum lam_i w_i (raw * 2^30).
    ls_i128 vvh;    ///< |vh|^2 exactly: compares features 2^30 times finer than |v|^2.
    ls_i3 dir;      ///< Exact direction from the feature towards the origin (< 2^31).
    bool contains;  ///< The origin lies on the feature (or inside the tetrahedron).
} solution;

#define Q30 ((int64_t)1 << 30)

/// Q30 weights proportional to the non-negative numerators num[0..n).
static void weights(const ls_i128 *num, int n, int32_t *lam)
{
    ls_i128 den = num[0];
    for (int i = 1; i < n; i++) {
        den = ls_i128_add(den, num[i]);
    }
    int s = ls_i128_bits(den) - 32;
    s = s > 0 ? s : 0;
    uint64_t d = (uint64_t)ls_i128_lo64(ls_i128_shr(den, s));
    int64_t rest = Q30;
    for (int i = 1; i < n; i++) {
        uint64_t q = (uint64_t)ls_i128_lo64(ls_i128_shr(num[i], s));
        lam[i] = d ? (int32_t)((q << 30) / d) : 0;
        rest -= lam[i];
    }
    lam[0] = (int32_t)rest;
}

/// sum lam[i] * p[i] / 2^30, rounded (half up).
static ls_vec3 combine(const ls_vec3 *p, const int32_t *lam, int n)
{
    int64_t x = 0, y = 0, z = 0;
    for (int i = 0; i < n; i++) {
        x += (int64_t)lam[i] * p[i].x;
        y += (int64_t)lam[i] * p[i].y;
        z += (int64_t)lam[i] * p[i].z;
    }
    const int64_t h = Q30 / 2;
    return ls_vec3_make((ls_fx)((x + h) >> 30), (ls_fx)((y + h) >> 30), (ls_fx)((z + h) >> 30));
}

/// Fill v, vh and vvh from the kept vertices and their weights.
static void finish_solution(const vert *s, solution *r)
{
    ls_vec3 w[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int i = 0; i < r->n; i++) {
        w[i] = s[r->idx[i]].w;
    }
    int64_t x = 0, y = 0, z = 0;
    for (int i = 0; i < r->n; i++) {
        x += (int64_t)r->lam[i] * w[i].x;
        y += (int64_t)r->lam[i] * w[i].y;
        z += (int64_t)r->lam[i] * w[i].z;
    }
    r->vh.x = x;
    r->vh.y = y;
    r->vh.z = z;
    r->v = combine(w, r->lam, r->n);
    r->vvh = ls_i3_dot_wide(r->vh, r->vh);
}

static solution solve_vertex(const vert *s, int i)
{
    solution r;
    memset(&r, 0, sizeof r);
    r.n = 1;
    r.idx[0] = i;
    r.lam[0] = (int32_t)Q30;
    r.v = s[i].w;
    r.vh.x = (int64_t)s[i].w.x * Q30;
    r.vh.y = (int64_t)s[i].w.y * Q30;
    r.vh.z = (int64_t)s[i].w.z * Q30;
    r.vvh = ls_i3_dot_wide(r.vh, r.vh);
    r.dir = ls_i3_of(ls_vec3_neg(s[i].w));
    r.contains = ls_i3_is_zero(r.dir);
    return r;
}

/// Closest point of segment s[i]-s[j] (i < j).
static solution solve_segment(const vert *s, int i, int j)
{
    ls_i3 a = ls_i3_of(s[i].w);
    ls_i3 ab = ls_i3_sub(ls_i3_of(s[j].w), a);
    int64_t t = -ls_i3_dot(a, ab); // |a| < 2^28.2, |ab| < 2^25.2
    if (t <= 0) {
        return solve_vertex(s, i);
    }
    int64_t den = ls_i3_dot(ab, ab);
    if (t >= den) {
        return solve_vertex(s, j);
    }
    solution r;
    memset(&r, 0, sizeof r);
    r.n = 2;
    r.idx[0] = i;
    r.idx[1] = j;
    ls_i128 num[2] = {ls_i128_from_i64(den - t), ls_i128_from_i64(t)};
    weights(num, 2, r.lam);
    finish_solution(s, &r);
    // Direction (a x ab) x ab: the part of -a perpendicular to ab, times |ab|^2.
    ls_i3 c = ls_i3_cross(a, ab);
    if (ls_i3_is_zero(c)) {
        r.contains = true; // the origin lies on the open segment
        return r;
    }
    r.dir = fit_wide(ls_i128_sub(ls_i128_mul(c.y, ab.z), ls_i128_mul(c.z, ab.y)),
                     ls_i128_sub(ls_i128_mul(c.z, ab.x), ls_i128_mul(c.x, ab.z)),
                     ls_i128_sub(ls_i128_mul(c.x, ab.y), ls_i128_mul(c.y, ab.x)), 30);
    return r;
}

/// The better of two solutions: smaller |v|^2, ties keep the first.
static solution closer(solution a, solution b)
{
    if (b.contains && !a.contains) {
        return b;
    }
    if (a.contains) {
        return a;
    }
    return ls_i128_cmp(b.vvh, a.vvh) < 0 ? b : a;
}

/// Closest point of triangle s[i], s[j], s[k] (i < j < k): Ericson's region
/// tests (Real-Time Collision Detection 5.1.5) with exact products.
static solution solve_triangle(const vert *s, int i, int j, int k)
{
    ls_i3 a = ls_i3_of(s[i].w), b = ls_i3_of(s[j].w), c = ls_i3_of(s[k].w);
    ls_i3 ab = ls_i3_sub(b, a), ac = ls_i3_sub(c, a);
    ls_i3 n = ls_i3_cross(ab, ac);
    if (ls_i3_is_zero(n)) {
        // Collinear: the closest point lies on one of the edges.
        solution r = solve_segment(s, i, j);
        r = closer(r, solve_segment(s, i, k));
        return closer(r, solve_segment(s, j, k));
    }
    int64_t d1 = -ls_i3_dot(ab, a), d2 = -ls_i3_dot(ac, a);
    if (d1 <= 0 && d2 <= 0) {
        return solve_vertex(s, i);
    }
    int64_t d3 = -ls_i3_dot(ab, b), d4 = -ls_i3_dot(ac, b);
    if (d3 >= 0 && d4 <= d3) {
        return solve_vertex(s, j);
    }
    ls_i128 vc = ls_i128_sub(ls_i128_mul(d1, d4), ls_i128_mul(d3, d2));
    if (ls_i128_sign(vc) <= 0 && d1 >= 0 && d3 <= 0) {
        return solve_segment(s, i, j);
    }
    int64_t d5 = -ls_i3_dot(ab, c), d6 = -ls_i3_dot(ac, c);
    if (d6 >= 0 && d5 <= d6) {
        return solve_vertex(s, k);
    }
    ls_i128 vb = ls_i128_sub(ls_i128_mul(d5, d2), ls_i128_mul(d1, d6));
    if (ls_i128_sign(vb) <= 0 && d2 >= 0 && d6 <= 0) {
        return solve_segment(s, i, k);
    }
    ls_i128 va = ls_i128_sub(ls_i128_mul(d3, d6), ls_i128_mul(d5, d4));
    if (ls_i128_sign(va) <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        return solve_segment(s, j, k);
    }
    if (ls_i128_sign(va) < 0 || ls_i128_sign(vb) < 0 || ls_i128_sign(vc) < 0) {
        // Cannot happen for a proper triangle; stay safe on the edges.
        solution r = solve_segment(s, i, j);
        r = closer(r, solve_segment(s, i, k));
        return closer(r, solve_segment(s, j, k));
    }
    solution r;
    memset(&r, 0, sizeof r);
    r.n = 3;
    r.idx[0] = i;
    r.idx[1] = j;
    r.idx[2] = k;
    ls_i128 num[3] = {va, vb, vc};
    weights(num, 3, r.lam);
    finish_solution(s, &r);
    int side = ls_i128_sign(ls_i3_dot_wide(n, a)); // > 0: the origin is below the plane
    if (side == 0) {
        r.contains = true;
        return r;
    }
    ls_i3 d = ls_i3_fit_(n, 30);
    if (side > 0) {
        d.x = -d.x;
        d.y = -d.y;
        d.z = -d.z;
    }
    r.dir = d;
    return r;
}

/// Closest point of the tetrahedron s[0..3]: the best triangle among those
/// whose plane separates the origin from the fourth vertex; none means the
/// origin is inside (or on the boundary). A flat tetrahedron tries all four.
static solution solve_tetra(const vert *s)
{
    static const int face[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};
    int vol = ls_orient3d_(s[0].w, s[1].w, s[2].w, s[3].w);
    bool any = false;
    solution best;
    memset(&best, 0, sizeof best);
    for (int f = 0; f < 4; f++) {
        const int *t = face[f];
        if (vol != 0) {
            int side = ls_orient3d_(s[t[0]].w, s[t[1]].w, s[t[2]].w, ls_vec3_zero());
            int opp = ls_orient3d_(s[t[0]].w, s[t[1]].w, s[t[2]].w, s[t[3]].w);
            if (side * opp >= 0) {
                continue; // the origin is on the tetrahedron's side of this face
            }
        }
        solution r = solve_triangle(s, t[0], t[1], t[2]);
        best = any ? closer(best, r) : r;
        any = true;
    }
    if (!any) {
        memset(&best, 0, sizeof best);
        best.n = 4;
        for (int i = 0; i < 4; i++) {
            best.idx[i] = i;
        }
        best.contains = true;
    }
    return best;
}

static solution solve(const vert *s, int n)
{
    switch (n) {
    case 1:
        return solve_vertex(s, 0);
    case 2:
        return solve_segment(s, 0, 1);
    case 3:
        return solve_triangle(s, 0, 1, 2);
    default:
        return solve_tetra(s);
    }
}

/// Keep only the vertices the solution uses, renumbering its indices.
static int reduce(vert *s, solution *r)
{
    vert t[4];
    for (int i = 0; i < r->n; i++) {
        t[i] = s[r->idx[i]];
    }
    for (int i = 0; i < r->n; i++) {
        s[i] = t[i];
        r->idx[i] = i;
    }
    return r->n;
}

/// Mean of n points (floored), the fallback normal's ends.
static ls_vec3 mean(const ls_vec3 *p, uint32_t n)
{
    int64_t x = 0, y = 0, z = 0;
    for (uint32_t i = 0; i < n; i++) {
        x += p[i].x;
        y += p[i].y;
        z += p[i].z;
    }
    int64_t d = n ? (int64_t)n : 1;
    return ls_vec3_make((ls_fx)(x / d), (ls_fx)(y / d), (ls_fx)(z / d));
}

/// Direction from A's point mean to B's, or +Y when they coincide.
static ls_vec3 fallback_normal(const ctx *c)
{
    ls_vec3 d = ls_vec3_sub(mean(c->pb, c->nb), mean(c->pa, c->na));
    return ls_vec3_normalize(d, ls_vec3_make(0, LS_FX_ONE, 0));
}

static bool gjk_run(const ctx *c, ls_gjk_result *out)
{
    vert s[4];
    int n = 1;
    s[0] = make_vert(c, 0, 0);
    vert saved[4];
    int saved_n = 0;
    solution best;
    memset(&best, 0, sizeof best);
    bool have_best = false;
    memset(out, 0, sizeof *out);
    for (;;) {
        solution r = solve(s, n);
        if (r.contains) {
            n = reduce(s, &r);
            out->overlap = true;
            out->converged = true;
            best = r;
            break;
        }
        if (have_best && ls_i128_cmp(r.vvh, best.vvh) >= 0) {
            // No progress (rounding): keep the previous, closer simplex.
            memcpy(s, saved, sizeof s);
            n = saved_n;
            out->converged = true;
            break;
        }
        n = reduce(s, &r);
        best = r;
        have_best = true;
        memcpy(saved, s, sizeof s);
        saved_n = n;
        if (out->iterations >= LS_GJK_MAX_ITERS) {
            break;
        }
        vert w = support(c, r.dir);
        bool dup = false;
        for (int i = 0; i < n; i++) {
            dup = dup || (s[i].ia == w.ia && s[i].ib == w.ib);
        }
        // Progress along dir that w would bring (raw * 2^30 * |dir|, exact),
        // against the tolerance LS_GJK_TOL * 2^-16 raw.
        ls_i3 wh = {(int64_t)w.w.x * Q30, (int64_t)w.w.y * Q30, (int64_t)w.w.z * Q30};
        ls_i128 gain = ls_i3_dot_wide(r.dir, ls_i3_sub(wh, r.vh));
        uint64_t dl = ls_isqrt64((uint64_t)ls_i3_dot(r.dir, r.dir));
        ls_i128 tol = ls_i128_mul((int64_t)dl, (int64_t)LS_GJK_TOL << 14);
        if (dup || ls_i128_cmp(gain, tol) <= 0) {
            out->converged = true;
            break;
        }
        s[n++] = w;
        out->iterations++;
    }
    out->simplex_count = n;
    for (int i = 0; i < n; i++) {
        out->simplex_a[i] = s[i].ia;
        out->simplex_b[i] = s[i].ib;
    }
    if (out->overlap) {
        /* Zeroed because gcc -O3 cannot see that n >= 1 here and warns
         * (-Wmaybe-uninitialized) in the crosscheck's WERROR build. */
        ls_vec3 pa[4] = {{0, 0, 0}}, pb[4] = {{0, 0, 0}};
        for (int i = 0; i < n; i++) {
            pa[i] = s[i].a;
            pb[i] = s[i].b;
        }
        ls_vec3 ma = mean(pa, (uint32_t)n);
        ls_vec3 mb = best.n < 4 ? combine(pb, best.lam, n) : mean(pb, (uint32_t)n);
        if (best.n < 4) {
            ma = combine(pa, best.lam, n);
        }
        out->point_a = ls_vec3_add(c->origin, ma);
        out->point_b = ls_vec3_add(c->origin, mb);
        out->normal = fallback_normal(c);
        out->distance = 0;
        return false;
    }
    ls_vec3 pa[4], pb[4];
    for (int i = 0; i < n; i++) {
        pa[i] = s[i].a;
        pb[i] = s[i].b;
    }
    out->point_a = ls_vec3_add(c->origin, combine(pa, best.lam, n));
    out->point_b = ls_vec3_add(c->origin, combine(pb, best.lam, n));
    out->distance = ls_vec3_len(best.v);
    out->normal = ls_i3_unit_fx_(best.dir, fallback_normal(c));
    return true;
}

bool ls_gjk_distance_(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b, const ls_xform *xb,
                      ls_gjk_result *out)
{
    if (a->count == 0 || b->count == 0) {
        memset(out, 0, sizeof *out);
        out->normal = ls_vec3_make(0, LS_FX_ONE, 0);
        return false;
    }
    ctx c;
    ctx_init(&c, a, xa, b, xb);
    return gjk_run(&c, out);
}

// ---------------------------------------------------------------------- EPA

/// A triangle of the expanding polytope, counter-clockwise seen from
/// outside; adj[k] is the face across edge k (v[k] -> v[k+1]) and
/// adj_edge[k] that edge's index in the neighbour.
typedef struct epa_face {
    int v[3];
    int adj[3];
    int adj_edge[3];
    ls_i3 n;      ///< Exact outward normal (v1 - v0) x (v2 - v0), < 2^53.
    ls_i3 nn;     ///< Unit normal, Q30.
    int64_t dist; ///< nn . v0: distance of the plane from the origin, raw * 2^30.
    bool dead;
} epa_face;

typedef struct epa {
    const ctx *c;
    int nv, nf;
    int free_head; ///< Dead face slots reused LIFO (-1: none).
    vert v[LS_EPA_MAX_VERTS];
    epa_face f[LS_EPA_MAX_FACES];
    int next_free[LS_EPA_MAX_FACES];
} epa;

/// Horizon edge: edge `edge` of live face `face`, seen from the dead side.
typedef struct horizon {
    int n;
    bool overflow;
    int face[LS_EPA_MAX_FACES];
    int edge[LS_EPA_MAX_FACES];
    int killed_n;
    int killed[LS_EPA_MAX_FACES];
} horizon;

static void face_geometry(epa *e, epa_face *f)
{
    ls_i3 a = ls_i3_of(e->v[f->v[0]].w);
    f->n = ls_i3_cross(ls_i3_sub(ls_i3_of(e->v[f->v[1]].w), a),
                       ls_i3_sub(ls_i3_of(e->v[f->v[2]].w), a));
    ls_i3 zero = {0, 0, 0};
    f->nn = ls_i3_unit_(f->n, 30, zero);
    f->dist = ls_i3_dot(f->nn, a);
}

/// Exact: is w strictly above face f's plane?
static bool visible(const epa *e, const epa_face *f, ls_vec3 w)
{
    ls_i3 d = ls_i3_sub(ls_i3_of(w), ls_i3_of(e->v[f->v[0]].w));
    return ls_i128_sign(ls_i3_dot_wide(f->n, d)) > 0;
}

static int face_alloc(epa *e)
{
    if (e->free_head >= 0) {
        int i = e->free_head;
        e->free_head = e->next_free[i];
        return i;
    }
    return e->nf < LS_EPA_MAX_FACES ? e->nf++ : -1;
}

/// Depth-first walk over the faces visible from w, collecting the horizon
/// in order (each edge starts where the previous one ended).
static void silhouette(epa *e, int fi, int edge, ls_vec3 w, horizon *h)
{
    epa_face *f = &e->f[fi];
    if (f->dead) {
        return;
    }
    if (!visible(e, f, w)) {
        if (h->n < LS_EPA_MAX_FACES) {
            h->face[h->n] = fi;
            h->edge[h->n] = edge;
            h->n++;
        } else {
            h->overflow = true;
        }
        return;
    }
    f->dead = true;
    h->killed[h->killed_n++] = fi;
    silhouette(e, f->adj[(edge + 1) % 3], f->adj_edge[(edge + 1) % 3], w, h);
    silhouette(e, f->adj[(edge + 2) % 3], f->adj_edge[(edge + 2) % 3], w, h);
}

/// Add vertex vi (outside face best). False (polytope unchanged) when the
/// horizon is not a proper loop or the face store is full.
static bool expand(epa *e, int best, int vi)
{
    horizon hl;
    hl.n = 0;
    hl.overflow = false;
    hl.killed_n = 0;
    ls_vec3 w = e->v[vi].w;
    epa_face *bf = &e->f[best];
    bf->dead = true;
    hl.killed[hl.killed_n++] = best;
    for (int k = 0; k < 3; k++) {
        silhouette(e, bf->adj[k], bf->adj_edge[k], w, &hl);
    }
    bool ok = !hl.overflow && hl.n >= 3;
    for (int i = 0; ok && i < hl.n; i++) {
        // Horizon edge i runs (from the dead side) v[edge+1] -> v[edge] of its face.
        const epa_face *g = &e->f[hl.face[i]];
        const epa_face *g2 = &e->f[hl.face[(i + 1) % hl.n]];
        ok = g->v[hl.edge[i]] == g2->v[(hl.edge[(i + 1) % hl.n] + 1) % 3];
    }
    int free_slots = LS_EPA_MAX_FACES - e->nf + hl.killed_n;
    if (!ok || hl.n > free_slots) {
        for (int i = 0; i < hl.killed_n; i++) {
            e->f[hl.killed[i]].dead = false;
        }
        return false;
    }
    for (int i = 0; i < hl.killed_n; i++) {
        int k = hl.killed[i];
        e->next_free[k] = e->free_head;
        e->free_head = k;
    }
    int first = -1, prev = -1;
    for (int i = 0; i < hl.n; i++) {
        int gi = hl.face[i], ge = hl.edge[i];
        int ni = face_alloc(e);
        epa_face *nf = &e->f[ni];
        epa_face *g = &e->f[gi];
        nf->v[0] = g->v[(ge + 1) % 3];
        nf->v[1] = g->v[ge];
        nf->v[2] = vi;
        nf->adj[0] = gi;
        nf->adj_edge[0] = ge;
        g->adj[ge] = ni;
        g->adj_edge[ge] = 0;
        nf->dead = false;
        face_geometry(e, nf);
        if (prev >= 0) {
            e->f[prev].adj[1] = ni;
            e->f[prev].adj_edge[1] = 2;
            nf->adj[2] = prev;
            nf->adj_edge[2] = 1;
        } else {
            first = ni;
        }
        prev = ni;
    }
    e->f[prev].adj[1] = first;
    e->f[prev].adj_edge[1] = 2;
    e->f[first].adj[2] = prev;
    e->f[first].adj_edge[2] = 1;
    return true;
}

static bool has_vert(const epa *e, vert w)
{
    for (int i = 0; i < e->nv; i++) {
        if (e->v[i].ia == w.ia && e->v[i].ib == w.ib) {
            return true;
        }
    }
    return false;
}

/// Negated copy of d.
static ls_i3 i3_neg(ls_i3 d)
{
    ls_i3 r = {-d.x, -d.y, -d.z};
    return r;
}

/// Grow the GJK simplex into a tetrahedron of non-zero volume (it keeps
/// containing the origin). False when A - B is flat.
static bool blow_up(epa *e)
{
    const ctx *c = e->c;
    if (e->nv == 1) {
        static const int ax[6][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                     {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};
        for (int i = 0; i < 6 && e->nv == 1; i++) {
            ls_i3 d = {ax[i][0] * Q30, ax[i][1] * Q30, ax[i][2] * Q30};
            vert w = support(c, d);
            if (!ls_vec3_equal(w.w, e->v[0].w)) {
                e->v[e->nv++] = w;
            }
        }
        if (e->nv == 1) {
            return false;
        }
    }
    if (e->nv == 2) {
        ls_i3 a = ls_i3_of(e->v[0].w);
        ls_i3 ab = ls_i3_sub(ls_i3_of(e->v[1].w), a);
        // The axis least aligned with ab (ties: lowest) gives a perpendicular.
        uint64_t m[3] = {mag64(ab.x), mag64(ab.y), mag64(ab.z)};
        int k = m[1] < m[0] ? 1 : 0;
        k = m[2] < m[k] ? 2 : k;
        ls_i3 axis = {k == 0, k == 1, k == 2};
        ls_i3 d1 = ls_i3_fit_(ls_i3_cross(ab, axis), 30);
        ls_i3 d2 = ls_i3_fit_(ls_i3_cross(ab, d1), 30);
        ls_i3 dirs[4] = {d1, i3_neg(d1), d2, i3_neg(d2)};
        for (int i = 0; i < 4 && e->nv == 2; i++) {
            vert w = support(c, dirs[i]);
            if (!ls_i3_is_zero(ls_i3_cross(ls_i3_sub(ls_i3_of(w.w), a), ab))) {
                e->v[e->nv++] = w;
            }
        }
        if (e->nv == 2) {
            return false;
        }
    }
    if (e->nv == 3) {
        ls_i3 a = ls_i3_of(e->v[0].w);
        ls_i3 n = ls_i3_cross(ls_i3_sub(ls_i3_of(e->v[1].w), a), ls_i3_sub(ls_i3_of(e->v[2].w), a));
        if (ls_i3_is_zero(n)) {
            return false;
        }
        ls_i3 d = ls_i3_fit_(n, 30);
        ls_i3 dirs[2] = {d, i3_neg(d)};
        for (int i = 0; i < 2 && e->nv == 3; i++) {
            vert w = support(c, dirs[i]);
            if (ls_orient3d_(e->v[0].w, e->v[1].w, e->v[2].w, w.w) != 0) {
                e->v[e->nv++] = w;
            }
        }
        if (e->nv == 3) {
            return false;
        }
    }
    return ls_orient3d_(e->v[0].w, e->v[1].w, e->v[2].w, e->v[3].w) != 0;
}

/// The four outward faces of the tetrahedron v[0..3] with their adjacency.
static void init_tetra(epa *e)
{
    if (ls_orient3d_(e->v[0].w, e->v[1].w, e->v[2].w, e->v[3].w) < 0) {
        vert t = e->v[1];
        e->v[1] = e->v[2];
        e->v[2] = t;
    }
    // With orient(0,1,2,3) > 0 these four triangles face outwards.
    static const int tri[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
    e->nf = 4;
    e->free_head = -1;
    for (int i = 0; i < 4; i++) {
        epa_face *f = &e->f[i];
        for (int k = 0; k < 3; k++) {
            f->v[k] = tri[i][k];
        }
        f->dead = false;
        face_geometry(e, f);
    }
    // Adjacency: the face holding the reversed edge.
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 3; k++) {
            int a = e->f[i].v[k], b = e->f[i].v[(k + 1) % 3];
            for (int j = 0; j < 4; j++) {
                for (int l = 0; l < 3; l++) {
                    if (e->f[j].v[l] == b && e->f[j].v[(l + 1) % 3] == a) {
                        e->f[i].adj[k] = j;
                        e->f[i].adj_edge[k] = l;
                    }
                }
            }
        }
    }
}

/// Witness points of the origin's projection onto face f (weights clamped
/// to the triangle).
static void face_witness(const epa *e, const epa_face *f, ls_vec3 *pa, ls_vec3 *pb)
{
    ls_i3 p[3];
    for (int k = 0; k < 3; k++) {
        p[k] = ls_i3_of(e->v[f->v[k]].w);
    }
    ls_i128 num[3];
    bool any = false;
    for (int k = 0; k < 3; k++) {
        // Area of the sub-triangle opposite vertex k, seen along n: n . (p1 x p2).
        num[k] = ls_i3_dot_wide(f->n, ls_i3_cross(p[(k + 1) % 3], p[(k + 2) % 3]));
        if (ls_i128_sign(num[k]) < 0) {
            num[k] = ls_i128_from_i64(0);
        }
        any = any || ls_i128_sign(num[k]) > 0;
    }
    if (!any) {
        num[0] = ls_i128_from_i64(1);
    }
    int32_t lam[3];
    weights(num, 3, lam);
    ls_vec3 a[3], b[3];
    for (int k = 0; k < 3; k++) {
        a[k] = e->v[f->v[k]].a;
        b[k] = e->v[f->v[k]].b;
    }
    *pa = combine(a, lam, 3);
    *pb = combine(b, lam, 3);
}

bool ls_epa_penetration_(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b,
                         const ls_xform *xb, const ls_gjk_result *gjk, ls_epa_result *out)
{
    memset(out, 0, sizeof *out);
    out->normal = ls_vec3_make(0, LS_FX_ONE, 0);
    if (a->count == 0 || b->count == 0) {
        return false;
    }
    ctx c;
    ctx_init(&c, a, xa, b, xb);
    epa e;
    e.c = &c;
    e.nv = 0;
    int sc = gjk->simplex_count < 1 ? 1 : gjk->simplex_count > 4 ? 4 : gjk->simplex_count;
    for (int i = 0; i < sc; i++) {
        uint32_t ia = gjk->simplex_a[i] < c.na ? gjk->simplex_a[i] : 0;
        uint32_t ib = gjk->simplex_b[i] < c.nb ? gjk->simplex_b[i] : 0;
        vert w = make_vert(&c, ia, ib);
        bool dup = false;
        for (int j = 0; j < e.nv; j++) {
            dup = dup || ls_vec3_equal(e.v[j].w, w.w);
        }
        if (!dup) {
            e.v[e.nv++] = w;
        }
    }
    if (!blow_up(&e)) {
        // A - B has no volume: the cores only touch. Depth 0.
        // Zeroed for gcc -O3 -march=x86-64-v4's -Wmaybe-uninitialized.
        ls_vec3 pa[4] = {{0, 0, 0}}, pb[4] = {{0, 0, 0}};
        for (int i = 0; i < e.nv; i++) {
            pa[i] = e.v[i].a;
            pb[i] = e.v[i].b;
        }
        out->normal = fallback_normal(&c);
        out->point_a = ls_vec3_add(c.origin, mean(pa, (uint32_t)e.nv));
        out->point_b = ls_vec3_add(c.origin, mean(pb, (uint32_t)e.nv));
        return false;
    }
    init_tetra(&e);
    bool converged = false;
    int best = 0;
    for (;;) {
        best = -1;
        for (int i = 0; i < e.nf; i++) {
            if (!e.f[i].dead && (best < 0 || e.f[i].dist < e.f[best].dist)) {
                best = i;
            }
        }
        const epa_face *bf = &e.f[best];
        vert w = support(&c, bf->nn);
        int64_t gap = ls_i3_dot(bf->nn, ls_i3_of(w.w)) - bf->dist;
        if (has_vert(&e, w) || gap <= (int64_t)LS_EPA_TOL * Q30 || !visible(&e, bf, w.w)) {
            converged = true;
            break;
        }
        if (out->iterations >= LS_EPA_MAX_ITERS || e.nv >= LS_EPA_MAX_VERTS) {
            break;
        }
        e.v[e.nv] = w;
        if (!expand(&e, best, e.nv)) {
            break;
        }
        e.nv++;
        out->iterations++;
    }
    const epa_face *bf = &e.f[best];
    out->faces = e.nf;
    out->normal = ls_i3_unit_fx_(bf->n, fallback_normal(&c));
    int64_t depth = (bf->dist + Q30 / 2) >> 30;
    out->depth = depth < 0 ? 0 : depth > LS_FX_MAX ? LS_FX_MAX : (ls_fx)depth;
    ls_vec3 pa, pb;
    face_witness(&e, bf, &pa, &pb);
    out->point_a = ls_vec3_add(c.origin, pa);
    out->point_b = ls_vec3_add(c.origin, pb);
    for (int k = 0; k < 3; k++) {
        out->face_a[k] = e.v[bf->v[k]].ia;
        out->face_b[k] = e.v[bf->v[k]].ib;
    }
    return converged;
}

// --------------------------------------------------------------- shape cast

/// Hit tolerance of the cast: 1/4096 m.
#define CAST_TOL 16
/// Each advancement step aims this many raw units (1/4096 m) short of the target.
#define CAST_AIM 16

bool ls_shape_cast_(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b, const ls_xform *xb,
                    ls_vec3 translation_b, ls_fx target_separation, ls_cast_result *out)
{
    memset(out, 0, sizeof *out);
    out->normal = ls_vec3_make(0, LS_FX_ONE, 0);
    if (a->count == 0 || b->count == 0) {
        return false;
    }
    // Conservative advancement: the core distance d(t) is convex in t, so
    // stepping by (d - target) / closing speed never passes the first root.
    // Each step is rounded down (exact Q32.32 closing speed) and aims
    // CAST_AIM short of the target, so no step lands exactly on touching
    // cores (which GJK reports as overlap, and which would leave only the
    // previous fraction -- 0 after the first step -- to report).
    int64_t target = (int64_t)target_separation + a->radius + b->radius;
    int64_t t = 0;
    ls_xform xt = *xb;
    ls_gjk_result g;
    for (int it = 0; it < LS_CAST_MAX_ITERS; it++) {
        xt.p = ls_vec3_mad(xb->p, translation_b, (ls_fx)t);
        out->iterations = it + 1;
        if (!ls_gjk_distance_(a, xa, b, &xt, &g)) {
            if (it == 0) {
                ls_epa_result e;
                ls_epa_penetration_(a, xa, b, &xt, &g, &e);
                out->fraction = 0;
                out->normal = e.normal;
                out->point = ls_vec3_mad(e.point_a, e.normal, a->radius);
                return true;
            }
            return true; // rounding stepped onto the cores: report the previous step
        }
        out->normal = g.normal;
        out->point = ls_vec3_mad(g.point_a, g.normal, a->radius);
        out->fraction = (ls_fx)t;
        int64_t gap = (int64_t)g.distance - target;
        if (gap <= CAST_TOL + CAST_AIM) {
            return true;
        }
        int64_t closing = -ls_vec3_dot_q32(translation_b, g.normal); // Q32.32, exact
        if (closing <= 0) {
            return false;
        }
        // (gap - aim) / closing in Q16.16, rounded down, at least 1 ulp; gap
        // below 2^32 keeps the numerator below 2^64 / 2.
        int64_t dt = (gap - CAST_AIM) * (INT64_C(1) << 32) / closing;
        t += dt > 0 ? dt : 1;
        if (t > LS_FX_ONE) {
            return false;
        }
    }
    return true; // cap reached: the last fraction never passes the first contact
}
