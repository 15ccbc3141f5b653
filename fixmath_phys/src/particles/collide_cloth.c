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
    ls_proxy px = ls_proxy_of_geom_(&sh->geom, storage);
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
    if (!ls_gjk_distance_(&bp->fin, &bp->xf_start, &tri, &txf, &g)) {
        return; // the cores overlap at the start: the particles' own contacts act
    }
    if (g.distance >= reach) {
        ls_gjk_result gs;
        if (bp->sweep.count == bp->fin.count ||
            (ls_gjk_distance_(&bp->sweep, &bp->xf_fin, &tri, &txf, &gs) && gs.distance >= reach)) {
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

// Taut cloth (SPEC.md §25.6 "Taut cloth"; issue 29). The triangle contacts
// above hold a body on the cloth's surface, but during the relaxation the
// body is immovable and the coupling passes on only what the iterations
// pushed the light particles: a 1 kg ball weighs 882 particles of a 0.5 kg
// cloth, the eight stick projections of a tick carry only a few particles'
// worth of momentum from the pins to the ball, and a ball at 20 m/s or a
// 10 kg ball at 10 m/s stretched the sticks 30-fold before the corners could
// act. A real cloth is nearly inextensible: once it is taut between the ball
// and its pins, the pins hold the ball as they would hold it on a rope.
//
// So after the relaxation each triangle contact with a dynamic, awake body
// checks its particles' tethers: a movable grid particle k may be at most
// L = 5/4 of its rest distance to a pinned grid particle (in the flat grid)
// from that particle's current position (a long-range attachment, Kim,
// Chentanez and Mueller 2012, here only measured, never projected). When the
// body has pushed the triangle beyond its tethers, the body meets the pins
// through a taut cloth: a contact exactly like a pinned particle's
// (coupling.c, count 0, solved in the same 8 velocity passes: the body's
// approach speed along n is removed and the excess pushed out at a quarter
// per tick, at most max_push_velocity), with the excess E = sum over the
// triangle's particles of c_k times its largest tether excess (only pins that
// the push along n draws the particle away from: (x_k - pin) . n > 0).
//
// Why velocity level and not a tether projection in the relaxation: a
// projected tether fights the body's contact every iteration, and passing
// that fight on added energy (a ball at 10 m/s left at 27 m/s); a
// velocity-level contact with lambda >= 0 only removes approach speed, and
// the body's mass meets the pins' (infinite) one directly, with no chain of
// light particles in between. Why 5/4: with 9/8 the trampolines of the
// tests stopped bouncing (a trampoline works by stretching; the tether is
// inelastic), with 5/4 they bounce as before. Why the rest distance in the
// flat grid: a cloth is built flat, so the straight line is its geodesic;
// with shear sticks the grid angle comes from a diagonal's rest length,
// without them (the cloth may shear) from the longest path, |di| ru + |dj|
// rv. A cloth with a stick that tears (tear ratio != 0) or a quad without
// triangles has no tethers: it may give way (cloth_tear's box still tears
// through).

/// Tethers allow 1 + TETHER_SLACK / 65536 of the rest distance (5/4).
#define TETHER_SLACK (LS_FX_ONE / 4)

/// The flat grid's rest geometry: ru, rv (raw) and X = ru rv cos(angle)
/// (Q32), or shear = false (X unknown: the longest path).
typedef struct cloth_rest {
    int64_t ru, rv, x;
    bool shear;
} cloth_rest;

static bool tether_geometry(const ls_particle_store *ps, const ls_particle_system *s, uint32_t nu,
                            cloth_rest *g)
{
    const ls_pcon *c = ps->con + s->con_first;
    g->ru = c[0].rest;
    g->rv = 0;
    g->shear = false;
    for (uint32_t k = 0; k < s->con_count; k++) {
        if (c[k].type == LS_PARTICLE_STICK && c[k].tear != 0) {
            return false; // a tearing cloth may give way
        }
        if (c[k].type != LS_PARTICLE_STICK) {
            continue;
        }
        if (g->rv == 0 && c[k].b == c[k].a + nu) {
            g->rv = c[k].rest;
        }
        if (!g->shear && c[k].b == c[k].a + nu + 1 && c[k].a % nu + 1 < nu) {
            int64_t rd = c[k].rest;
            g->x = (rd * rd - g->ru * g->ru - (g->rv ? g->rv * g->rv : g->ru * g->ru)) / 2;
            g->shear = g->rv != 0;
        }
    }
    return g->rv != 0;
}

/// The tether length (raw) of grid offsets (di, dj): the rest distance times
/// 1 + slack, rounded to nearest.
static int64_t tether_length(const cloth_rest *g, int64_t di, int64_t dj)
{
    int64_t d;
    if (g->shear) {
        int64_t q = di * di * g->ru * g->ru + dj * dj * g->rv * g->rv + 2 * di * dj * g->x;
        d = (int64_t)ls_isqrt64((uint64_t)(q > 0 ? q : 0));
    } else {
        d = (di < 0 ? -di : di) * g->ru + (dj < 0 ? -dj : dj) * g->rv;
    }
    return d + ((d * TETHER_SLACK + 32768) >> 16);
}

void ls_pcollide_cloth_tethers_(ls_world *w, uint32_t si, ls_fx quarter_rate)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    const ls_particle_system *s = &ps->systems[si];
    uint32_t nu, nv;
    cloth_rest g = {0, 0, 0, false};
    if (s->kind != LS_PARTICLES_CLOTH || s->mask == 0 || pc->sys_count[si] == 0 ||
        !cloth_grid(ps, s, &nu, &nv) || !tether_geometry(ps, s, nu, &g)) {
        return;
    }
    broken_quads(ps, s, nu, nv, pc->quad_off);
    for (uint32_t k = 0; k + 1 < s->count; k++) {
        if (pc->quad_off[k]) {
            return;
        }
    }
    uint32_t npins = 0; // the immovable particles, in index order
    for (uint32_t k = 0; k < s->count; k++) {
        if (ps->p[s->first + k].w == 0) {
            pc->pins[npins++] = k;
        }
    }
    if (npins == 0) {
        return; // nothing to be taut against
    }
    const ls_fx slop = w->def.linear_slop, top = w->def.max_push_velocity;
    const uint32_t first = pc->sys_first[si], count = pc->sys_count[si];
    for (uint32_t ci = first; ci < first + count; ci++) {
        const ls_pcontact c = pc->contacts[ci]; // a copy: the list grows below
        if (!c.triangle || !dynamic(w, c.body) || w->bodies[c.body].asleep) {
            continue;
        }
        int64_t excess = 0; // Q32: sum of c_k times particle k's largest excess (raw)
        for (uint32_t q = 0; q < c.count; q++) {
            uint32_t i = pc->wt_index[c.first + q];
            uint32_t m = i - s->first;
            if (ps->p[i].w == 0 || pc->wt_c[c.first + q] == 0) {
                continue;
            }
            int64_t worst = 0;
            for (uint32_t pk = 0; pk < npins; pk++) {
                uint32_t pin = pc->pins[pk];
                ls_vec3 a = ps->x[i], pb = ps->x[s->first + pin];
                int64_t d[3] = {(int64_t)a.x - pb.x, (int64_t)a.y - pb.y, (int64_t)a.z - pb.z};
                if (d[0] * c.n.x + d[1] * c.n.y + d[2] * c.n.z <= 0) {
                    continue; // the push along n does not draw k away from this pin
                }
                int64_t len =
                    tether_length(&g, (int64_t)(m % nu) - pin % nu, (int64_t)(m / nu) - pin / nu);
                int64_t near = len + worst; // beyond this distance the excess is larger
                uint64_t d2 = (uint64_t)(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]); // < 2^58
                if (d2 <= (uint64_t)(near * near)) {
                    continue;
                }
                int64_t e = (int64_t)ls_isqrt64(d2) - len;
                worst = e > worst ? e : worst;
            }
            excess += worst * pc->wt_c[c.first + q];
        }
        ls_fx e = ls_fx_from_q32(excess);
        if (e <= 0) {
            continue;
        }
        ls_fx wb = ls_pcollide_body_inv_mass_(w, c.body, c.point, c.n);
        if (wb <= 0) {
            continue;
        }
        ls_pcontact *t = ls_pcollide_push_(w, pc);
        if (!t) {
            return; // capacity_exceeded is set
        }
        memset(t, 0, sizeof *t);
        t->n = c.n;
        t->point = c.point;
        t->body = c.body;
        t->shape = c.shape;
        t->first = pc->wt_index[c.first];
        t->count = 0; // solved as a pinned contact
        t->inv_mass = wb;
        t->push = ls_fx_min(ls_fx_mul(ls_fx_max(ls_fx_sub(e, slop), 0), quarter_rate), top);
        t->pen0 = 0;
    }
}
