// SPDX-License-Identifier: MIT
// Dynamic bodies against the triangles of a cloth (SPEC.md §25.6 "Cloth
// triangles"; issue 29).
//
// Why. Particles collide as spheres: a ball heavier than the cloth by 880:1
// stretches it until its particles spread wider than the ball and it slips
// between them, and a ball faster than its radius per tick passes a row of
// particles between two ticks. So a cloth's surface is also solid: each grid
// quad is two triangles, and a dynamic body's shape gets one weighted contact
// (the machinery of particle bodies, ls_pcollide_weighted_) per triangle it
// is near or sweeps through this tick.
//
// The contact. From the start of the tick (the triangle at x*, the shape
// moved back by its motion over the tick, (v + w x r) dt at its origin), the
// closest points of the two cores (GJK) give the side n (out of the shape,
// towards the triangle) and the triangle's point q with barycentric weights
// c. The constraint is on the point sum c_k x_k: it must lie beyond the
// shape's final supporting plane along n plus both radii. The start decides
// the side, as x* does for a particle (collide.c): a ball that got through
// the cloth within one tick still pushes it ahead of itself. Which
// triangles: those whose cores come within R + r + e + skin of the shape's
// core at the start, or of its swept core (the convex hull of its start and
// final core points: a translation sweep), e the triangle's largest particle
// displacement |x - x*|_1. Skipped: cores that overlap at the start (no
// side), and for a core with edges (box, capsule, hull) a closest point on
// the triangle's boundary (a weight below 1/256): two parallel edges have no
// unique closest point, and the weights jumping between ticks kept a cloth
// draped over a box's edge shaking; the particles' own contacts hold there.
// A weighted point at a pinned corner (movable weight below 1/4) is left to
// the pinned contacts (coupling.c).
//
// Order: after the system's particle contacts; shapes in slot order, quads
// in (j, i) order, triangle (p00, p10, p11) then (p00, p11, p01).
#include "../collision/bvh.h"
#include "../collision/collide.h"
#include "../collision/gjk.h"
#include "../collision/shape_kind.h"
#include "pcollide.h"

#include <string.h>

/// Most core points of a shape's proxy the sweep doubles (more: start only).
#define SWEEP_POINTS 32
/// Largest coordinate difference (raw) inside a triangle that is tested
/// (2^28 raw, 4096 m: keeps the barycentric products exact).
#define TRI_SPAN ((int64_t)1 << 28)
/// Smallest barycentric weight of a closest point inside the face (1/256).
#define FACE_MIN 256

/// The grid of a cloth: nu from its first stick along v ((0, nu), after the
/// (nu - 1) nv sticks (p, p + 1) along u, ls_cloth_create); false when the
/// system is not a cloth grid.
static bool cloth_grid(const ls_particle_store *ps, const ls_particle_system *s, uint32_t *nu,
                       uint32_t *nv)
{
    const ls_pcon *c = ps->con + s->con_first;
    for (uint32_t k = 0; k < s->con_count; k++) {
        if (c[k].type != LS_PARTICLE_STICK) {
            return false;
        }
        if (c[k].b != c[k].a + 1) {
            uint32_t u = c[k].b - c[k].a;
            if (c[k].a != 0 || u < 2 || s->count % u != 0 || s->count / u < 2) {
                return false;
            }
            *nu = u;
            *nv = s->count / u;
            return true;
        }
    }
    return false;
}

/// Mark the quads (min corner j nu + i) that a torn or disabled structural or
/// shear stick borders: they have no triangles.
static void broken_quads(const ls_particle_store *ps, const ls_particle_system *s, uint32_t nu,
                         uint32_t nv, uint8_t *off)
{
    memset(off, 0, s->count);
    const ls_pcon *c = ps->con + s->con_first;
    for (uint32_t k = 0; k < s->con_count; k++) {
        if (c[k].type != LS_PARTICLE_STICK || ls_pcon_active_(&c[k])) {
            continue;
        }
        int64_t ia = c[k].a % nu, ja = c[k].a / nu, ib = c[k].b % nu, jb = c[k].b / nu;
        int64_t di = ib - ia, dj = jb - ja;
        int64_t q[2][2];
        int nq = 0;
        if (di == 1 && dj == 0) { // along u: the quads above and below
            q[nq][0] = ia, q[nq++][1] = ja - 1;
            q[nq][0] = ia, q[nq++][1] = ja;
        } else if (di == 0 && dj == 1) { // along v: the quads left and right
            q[nq][0] = ia - 1, q[nq++][1] = ja;
            q[nq][0] = ia, q[nq++][1] = ja;
        } else if (di == 1 && dj == 1) { // diagonal of quad (ia, ja)
            q[nq][0] = ia, q[nq++][1] = ja;
        } else if (di == -1 && dj == 1) { // anti-diagonal of quad (ib, ja)
            q[nq][0] = ib, q[nq++][1] = ja;
        }
        for (int t = 0; t < nq; t++) {
            if (q[t][0] >= 0 && q[t][0] + 1 < nu && q[t][1] >= 0 && q[t][1] + 1 < nv) {
                off[q[t][1] * nu + q[t][0]] = 1;
            }
        }
    }
}

static inline ls_fx norm1(ls_vec3 v)
{
    int64_t s = (int64_t)ls_fx_abs(v.x) + ls_fx_abs(v.y) + ls_fx_abs(v.z);
    return s > LS_FX_MAX ? LS_FX_MAX : (ls_fx)s;
}

static int bitlen64(uint64_t v)
{
    return v ? 64 - __builtin_clzll(v) : 0;
}

/// Barycentric weights (Q16.16, c0 + c1 + c2 = 1 exactly, each in [0, 1]) of
/// point q in triangle a, b, c: the exact Q32 dot products d_uv of v0 = b - a,
/// v1 = c - a, v2 = q - a, shifted right by the same s (so the largest is
/// below 2^22), then c1 = round((d11 d20 - d01 d21) 2^16 / D), c2 = round((d00
/// d21 - d01 d20) 2^16 / D), D = d00 d11 - d01^2 (to nearest, half away from
/// zero), each clamped to [0, 1], c2 to at most 1 - c1, c0 = 1 - c1 - c2.
/// False for a triangle too wide or flat (D <= 0).
static bool barycentric(ls_vec3 a, ls_vec3 b, ls_vec3 c, ls_vec3 q, ls_fx w[3])
{
    int64_t v[3][3] = {{(int64_t)b.x - a.x, (int64_t)b.y - a.y, (int64_t)b.z - a.z},
                       {(int64_t)c.x - a.x, (int64_t)c.y - a.y, (int64_t)c.z - a.z},
                       {(int64_t)q.x - a.x, (int64_t)q.y - a.y, (int64_t)q.z - a.z}};
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            if (v[i][k] >= TRI_SPAN || v[i][k] <= -TRI_SPAN) {
                return false;
            }
        }
    }
#define DOT(i, j) (v[i][0] * v[j][0] + v[i][1] * v[j][1] + v[i][2] * v[j][2])
    int64_t d[5] = {DOT(0, 0), DOT(1, 1), DOT(0, 1), DOT(2, 0), DOT(2, 1)};
#undef DOT
    uint64_t big = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t m = d[i] < 0 ? 0u - (uint64_t)d[i] : (uint64_t)d[i];
        big = m > big ? m : big;
    }
    int s = bitlen64(big) - 22;
    if (s > 0) {
        for (int i = 0; i < 5; i++) {
            d[i] >>= s; // arithmetic shift (floor), well defined in C23, GCC/Clang everywhere
        }
    }
    int64_t den = d[0] * d[1] - d[2] * d[2];
    if (den <= 0) {
        return false;
    }
    int64_t num[2] = {d[1] * d[3] - d[2] * d[4], d[0] * d[4] - d[2] * d[3]};
    ls_fx r[2];
    for (int i = 0; i < 2; i++) {
        int64_t n = num[i] * 65536; // |num| < 2^45
        int64_t x = (n >= 0 ? n + den / 2 : n - den / 2) / den;
        r[i] = x < 0 ? 0 : x > LS_FX_ONE ? LS_FX_ONE : (ls_fx)x;
    }
    if (r[1] > LS_FX_ONE - r[0]) {
        r[1] = LS_FX_ONE - r[0];
    }
    w[0] = LS_FX_ONE - r[0] - r[1];
    w[1] = r[0];
    w[2] = r[1];
    return true;
}

static bool dynamic(const ls_world *w, uint32_t body)
{
    return body != UINT32_MAX && w->bodies[body].alive && w->bodies[body].type == LS_BODY_DYNAMIC;
}

/// One shape's proxies this tick: core offsets from the final origin (world
/// axes), the start (offsets - m) and the sweep (both).
typedef struct body_proxy {
    ls_vec3 origin;                     ///< final shape origin (world)
    ls_vec3 motion;                     ///< its motion over the tick
    ls_vec3 pts[2 * SWEEP_POINTS];      ///< final offsets, then start offsets
    ls_proxy fin, sweep;                ///< final core; swept core (start and final)
    ls_xform xf_fin, xf_start;          ///< identity rotations
    ls_fx radius;                       ///< the proxy's radius
    ls_vec3 hull[LS_HULL_MAX_VERTICES]; ///< a large hull's offsets (no sweep)
} body_proxy;

static void xform_at(ls_vec3 p, ls_xform *xf)
{
    xf->p = p;
    xf->q = ls_quat_identity();
    xf->r = ls_mat3_identity();
}

static bool make_proxy(const ls_world *w, const ls_shape *sh, body_proxy *bp)
{
    ls_vec3 storage[8];
    ls_proxy px = ls_proxy_of_geom(&sh->geom, storage);
    if (px.count == 0 || px.count > LS_HULL_MAX_VERTICES) {
        return false;
    }
    bp->origin = sh->xf.p;
    bp->motion = ls_pcollide_body_motion_(w, sh->body, sh->xf.p);
    bp->radius = px.radius;
    xform_at(bp->origin, &bp->xf_fin);
    xform_at(ls_vec3_sub(bp->origin, bp->motion), &bp->xf_start);
    ls_vec3 *out = px.count <= SWEEP_POINTS ? bp->pts : bp->hull;
    for (uint32_t k = 0; k < px.count; k++) {
        out[k] = ls_mat3_mul_vec(sh->xf.r, px.points[k]);
    }
    bp->fin.points = out;
    bp->fin.count = px.count;
    bp->fin.radius = 0;
    bp->sweep = bp->fin;
    if (px.count <= SWEEP_POINTS && !ls_vec3_equal(bp->motion, ls_vec3_zero())) {
        for (uint32_t k = 0; k < px.count; k++) {
            bp->pts[px.count + k] = ls_vec3_sub(bp->pts[k], bp->motion);
        }
        bp->sweep.count = 2 * px.count;
    }
    return true;
}

/// The box of the shape's swept core grown by g.
static ls_aabb sweep_box(const body_proxy *bp, ls_fx g)
{
    ls_vec3 lo = bp->fin.points[0], hi = lo;
    for (uint32_t k = 1; k < bp->fin.count; k++) {
        lo = ls_vec3_min(lo, bp->fin.points[k]);
        hi = ls_vec3_max(hi, bp->fin.points[k]);
    }
    lo = ls_vec3_min(lo, ls_vec3_sub(lo, bp->motion));
    hi = ls_vec3_max(hi, ls_vec3_sub(hi, bp->motion));
    ls_vec3 e = ls_vec3_make(g, g, g);
    ls_aabb b = {ls_vec3_sub(ls_vec3_add(bp->origin, lo), e),
                 ls_vec3_add(ls_vec3_add(bp->origin, hi), e)};
    return b;
}

/// The weighted point sum c_k v_k (Q16.16, rounded once from the Q32 sum).
static ls_vec3 weighted(const ls_vec3 *v, const uint32_t i[3], const ls_fx c[3])
{
    int64_t s[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        s[0] += (int64_t)c[k] * v[i[k]].x;
        s[1] += (int64_t)c[k] * v[i[k]].y;
        s[2] += (int64_t)c[k] * v[i[k]].z;
    }
    return ls_vec3_make(ls_fx_from_q32(s[0]), ls_fx_from_q32(s[1]), ls_fx_from_q32(s[2]));
}

/// How far the triangle's weighted point and the shape approached along n
/// this tick (the shape's motion minus the point's, sum c (x - x*)), within
/// [0, how far the point violates the bound now]: what the coupling passes on
/// when immovable geometry also pushed one of the triangle's particles.
static ls_fx approach(const ls_particle_store *ps, const body_proxy *bp, const uint32_t i[3],
                      const ls_fx c[3], ls_vec3 n, int64_t bound)
{
    ls_vec3 p = weighted(ps->x, i, c);
    ls_fx v = ls_pcollide_violation_(bound, p, n);
    if (v == 0) {
        return 0;
    }
    ls_vec3 rel = ls_vec3_sub(bp->motion, ls_vec3_sub(p, weighted(ps->x_old, i, c)));
    return ls_fx_clamp(ls_vec3_dot(n, rel), 0, v);
}

/// One triangle (store indices i[3]) against a shape: a weighted contact when near.
static void triangle_contact(ls_world *w, uint32_t slot, const body_proxy *bp, const uint32_t i[3])
{
    const ls_particle_store *ps = w->particles;
    ls_vec3 xs[3];
    ls_fx r = LS_FX_MAX, e = 0, movable = 0;
    for (int k = 0; k < 3; k++) {
        xs[k] = ps->x_old[i[k]];
        r = ls_fx_min(r, ps->p[i[k]].radius);
        e = ls_fx_max(e, norm1(ls_vec3_sub(ps->x[i[k]], xs[k])));
    }
    ls_vec3 tp[3] = {ls_vec3_zero(), ls_vec3_sub(xs[1], xs[0]), ls_vec3_sub(xs[2], xs[0])};
    ls_proxy tri = {tp, 3, 0};
    ls_xform txf;
    xform_at(xs[0], &txf);
    int64_t reach = (int64_t)bp->radius + r + e + LS_PCOLLIDE_SKIN;
    ls_gjk_result g;
    if (!ls_gjk_distance(&bp->fin, &bp->xf_start, &tri, &txf, &g)) {
        return; // the cores overlap at the start: the particles' own contacts act
    }
    if (g.distance >= reach) {
        ls_gjk_result gs;
        if (bp->sweep.count == bp->fin.count ||
            (ls_gjk_distance(&bp->sweep, &bp->xf_fin, &tri, &txf, &gs) && gs.distance >= reach)) {
            return;
        }
    }
    ls_vec3 n = g.normal, q = g.point_b;
    ls_fx c[3];
    if (!barycentric(xs[0], xs[1], xs[2], q, c)) {
        return;
    }
    for (int k = 0; k < 3; k++) {
        if (c[k] < FACE_MIN && bp->fin.count > 1) {
            return; // an edge or a vertex against a core with edges: the particles act
        }
        movable = ps->p[i[k]].w > 0 ? ls_fx_add(movable, c[k]) : movable;
    }
    if (movable < LS_FX_ONE / 4) {
        return; // at a pinned corner: the pinned contacts stop the body (coupling.c)
    }
    // The shape's final supporting plane along n (first point on ties).
    int64_t best = INT64_MIN;
    ls_vec3 at = bp->origin;
    for (uint32_t k = 0; k < bp->fin.count; k++) {
        ls_vec3 p = ls_vec3_add(bp->origin, bp->fin.points[k]);
        int64_t h = ls_vec3_dot_q32(n, p);
        if (h > best) {
            best = h;
            at = p;
        }
    }
    int64_t bound = best + ((int64_t)bp->radius + r) * 65536;
    ls_vec3 point = ls_vec3_mad(at, n, bp->radius);
    ls_pcontact *ct = ls_pcollide_weighted_(w, slot, n, bound, point, i, c, 3, NULL, 0);
    if (ct) {
        ct->triangle = true;
        ct->pen0 = approach(ps, bp, i, c, n, bound);
    }
}

void ls_pcollide_cloth_contacts_(ls_world *w, uint32_t si)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    const ls_particle_system *s = &ps->systems[si];
    uint32_t nu, nv;
    if (s->kind != LS_PARTICLES_CLOTH || s->mask == 0 || !cloth_grid(ps, s, &nu, &nv)) {
        return;
    }
    // The cloth's box (x and x* of every particle) grown by its widest reach.
    const ls_vec3 *x = ps->x + s->first, *xo = ps->x_old + s->first;
    ls_aabb box = {ls_vec3_min(x[0], xo[0]), ls_vec3_max(x[0], xo[0])};
    ls_fx widest = 0;
    for (uint32_t k = 0; k < s->count; k++) {
        box.min = ls_vec3_min(box.min, ls_vec3_min(x[k], xo[k]));
        box.max = ls_vec3_max(box.max, ls_vec3_max(x[k], xo[k]));
        widest = ls_fx_max(widest,
                           ls_fx_add(ps->p[s->first + k].radius, norm1(ls_vec3_sub(x[k], xo[k]))));
    }
    widest = ls_fx_add(widest, LS_PCOLLIDE_SKIN);
    ls_vec3 gw = ls_vec3_make(widest, widest, widest);
    box.min = ls_vec3_sub(box.min, gw);
    box.max = ls_vec3_add(box.max, gw);
    // Shapes whose swept box may meet it: bodies moving up to 2 m a tick.
    ls_vec3 far = ls_vec3_make(LS_FX_INT(2), LS_FX_INT(2), LS_FX_INT(2));
    ls_aabb gather = {ls_vec3_sub(box.min, far), ls_vec3_add(box.max, far)};
    ls_pcollide_gather_shapes_(w, s, gather);
    bool quads_known = false;
    body_proxy bp;
    for (uint32_t j = 0; j < pc->shape_count; j++) {
        uint32_t slot = pc->shapes[j].slot;
        const ls_shape *sh = &w->shapes[slot];
        if (!dynamic(w, sh->body) || ls_shape_kind_of(sh->geom.kind)->children ||
            !make_proxy(w, sh, &bp)) {
            continue;
        }
        ls_aabb sb = sweep_box(&bp, ls_fx_add(bp.radius, widest));
        if (!ls_aabb_overlap(&sb, &box)) {
            continue;
        }
        if (!quads_known) {
            broken_quads(ps, s, nu, nv, pc->quad_off);
            quads_known = true;
        }
        for (uint32_t qj = 0; qj + 1 < nv; qj++) {
            for (uint32_t qi = 0; qi + 1 < nu; qi++) {
                uint32_t p00 = qj * nu + qi;
                if (pc->quad_off[p00]) {
                    continue;
                }
                const uint32_t tris[2][3] = {{p00, p00 + 1, p00 + nu + 1},
                                             {p00, p00 + nu + 1, p00 + nu}};
                for (int t = 0; t < 2; t++) {
                    uint32_t idx[3];
                    ls_aabb tb = {ls_vec3_min(x[tris[t][0]], xo[tris[t][0]]),
                                  ls_vec3_max(x[tris[t][0]], xo[tris[t][0]])};
                    for (int k = 0; k < 3; k++) {
                        uint32_t m = tris[t][k];
                        idx[k] = s->first + m;
                        tb.min = ls_vec3_min(tb.min, ls_vec3_min(x[m], xo[m]));
                        tb.max = ls_vec3_max(tb.max, ls_vec3_max(x[m], xo[m]));
                    }
                    if (ls_aabb_overlap(&tb, &sb)) {
                        triangle_contact(w, slot, &bp, idx);
                    }
                }
            }
        }
    }
}
