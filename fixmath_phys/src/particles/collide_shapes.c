// SPDX-License-Identifier: MIT
// Contacts between particles and rigid shapes, made once per tick (SPEC.md
// §25.6; the plane scheme and why x* is explained in collide.c).
//
// Candidates. For each system, one walk of the world's query tree (and its
// list of unbounded shapes, the planes) with the box of all its particles'
// swept spheres gives the shapes near it, filtered by category and mask and
// sorted by slot; each particle then keeps the shapes whose box meets its own
// swept box (typically 0-2). The query tree is a cache of the shapes' poses:
// the answer does not depend on its shape, so neither does anything here.
//
// Narrow phase. Every kind goes through the shape registry: a particle is a
// sphere (radius r + e around x*), collided with ls_collide_; a kind made of
// children (a mesh) lists its triangles near the sphere and collides each
// with collide_child (one plane per touching triangle, the internal-edge rule
// included). Round kinds (the registry's `round` flag with a proxy of one or
// two core points and a radius: sphere, capsule) take a shortcut to the same
// plane with one integer square root (a draped cloth makes a thousand of
// them a tick; a moving round core that passed x* within the tick takes the
// side it came from, as a cloth triangle does: round_plane). No kind is named
// here. Candidates out of reach become pending
// contacts (collide.c). A particle body collides its embedded shape the same
// way, and each manifold point becomes a weighted contact on the point
// sum c_k x_k (seed §2.5, §5.9), moved by the rigid response of the particles
// or, failing that, by the seed's lambda = 1 / sum c_k^2 (no lengths, so no
// division by a tiny penetration).
#include "../collision/collide.h"
#include "../collision/mesh.h"
#include "../collision/shape_kind.h"
#include "../world/query_tree.h"
#include "pcollide.h"

#include <string.h>

static ls_aabb box_empty(void)
{
    ls_aabb b = {ls_vec3_make(LS_FX_MAX, LS_FX_MAX, LS_FX_MAX),
                 ls_vec3_make(LS_FX_MIN, LS_FX_MIN, LS_FX_MIN)};
    return b;
}

static bool box_is_empty(const ls_aabb *b)
{
    return b->min.x > b->max.x;
}

/// |v|_1, saturating: never below the Euclidean length.
static inline ls_fx norm1(ls_vec3 v)
{
    int64_t s = (int64_t)ls_fx_abs(v.x) + ls_fx_abs(v.y) + ls_fx_abs(v.z);
    return s > LS_FX_MAX ? LS_FX_MAX : (ls_fx)s;
}

/// The box of a particle's swept sphere this tick: x* and x grown by the reach.
static ls_aabb swept_box(ls_vec3 xs, ls_vec3 x, ls_fx reach)
{
    ls_vec3 e = ls_vec3_make(reach, reach, reach);
    ls_aabb b = {ls_vec3_sub(ls_vec3_min(xs, x), e), ls_vec3_add(ls_vec3_max(xs, x), e)};
    return b;
}

static bool accepts(const ls_particle_system *s, const ls_shape *sh)
{
    return (sh->category & s->mask) != 0 && (s->category & sh->mask) != 0;
}

// The query tree's candidates a system keeps: those its filter accepts.
typedef struct system_filter {
    const ls_world *w;
    const ls_particle_system *s;
} system_filter;

static bool keeps(void *ctx, uint32_t k)
{
    const system_filter *sf = ctx;
    return accepts(sf->s, &sf->w->shapes[k]);
}

void ls_pcollide_gather_shapes_(ls_world *w, const ls_particle_system *s, ls_aabb box)
{
    struct ls_particle_collide *pc = w->particles->collide;
    system_filter sf = {w, s};
    uint32_t n = ls_query_tree_collect_(ls_query_tree_sync_(w), &box, keeps, &sf, pc->slots);
    ls_query_sort_u32_(pc->slots, n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = pc->slots[i];
        const ls_shape *sh = &w->shapes[k];
        const ls_shape_kind *kind = ls_shape_kind_of(sh->geom.kind);
        ls_pshape *ps = &pc->shapes[i];
        memset(ps, 0, sizeof *ps);
        ps->slot = k;
        ls_aabb tight;
        if (!ls_query_shape_boxes_(&sh->geom, &sh->xf, &tight, &ps->box)) {
            ps->box = ls_geom_aabb_(&sh->geom, &sh->xf, 0); // unbounded (a plane): huge
            ps->unbounded = true;
        }
        if (kind->round && kind->proxy) {
            ls_vec3 storage[8];
            ls_proxy px = kind->proxy(&sh->geom, storage);
            if (px.count >= 1 && px.count <= 2 && px.radius > 0) {
                ps->round = true;
                ps->radius = px.radius;
                ps->a = ls_vec3_add(sh->xf.p, ls_mat3_mul_vec(sh->xf.r, px.points[0]));
                ps->b = px.count == 2
                            ? ls_vec3_add(sh->xf.p, ls_mat3_mul_vec(sh->xf.r, px.points[1]))
                            : ps->a;
                ps->m = ls_pcollide_body_motion_(w, sh->body, sh->xf.p);
            }
        }
    }
    pc->shape_count = n;
}

/// A sphere geometry of radius r at p (identity rotation).
static void sphere_at(ls_vec3 p, ls_fx r, ls_geom *g, ls_xform *xf)
{
    memset(g, 0, sizeof *g);
    g->kind = LS_SHAPE_SPHERE;
    g->radius = r;
    xf->p = p;
    xf->q = ls_quat_identity();
    xf->r = ls_mat3_identity();
}

/// The triangles (children) of shape sh near a world box, ascending; capped at
/// LS_PCOLLIDE_TRIS (capacity_exceeded beyond).
static uint32_t children_near(ls_world *w, const ls_shape_kind *kind, const ls_shape *sh,
                              ls_aabb world_box)
{
    struct ls_particle_collide *pc = w->particles->collide;
    ls_aabb local = ls_mesh_local_aabb_(&sh->xf, world_box);
    uint32_t n = kind->children(&sh->geom, local, pc->tris, LS_PCOLLIDE_TRIS);
    if (n > LS_PCOLLIDE_TRIS) {
        w->info.capacity_exceeded = true;
        n = LS_PCOLLIDE_TRIS;
    }
    return n;
}

/// A contact plane: dot(n, x) >= c (c in Q32.32).
typedef struct plane {
    ls_vec3 n;
    int64_t c;
} plane;

/// How far particle i and the body approached each other along n this tick
/// (the body's motion at x minus the particle's, x - x*), within [0, how
/// far x violates the plane]: what the coupling passes on for a particle
/// squeezed between the body and immovable geometry (coupling.c).
static ls_fx approach(const ls_world *w, uint32_t i, uint32_t body, ls_vec3 n, int64_t c)
{
    const ls_particle_store *ps = w->particles;
    ls_vec3 x = ps->x[i];
    ls_fx v = ls_pcollide_violation_(c, x, n);
    if (v == 0) {
        return 0;
    }
    ls_vec3 rel = ls_vec3_sub(ls_pcollide_body_motion_(w, body, x), ls_vec3_sub(x, ps->x_old[i]));
    return ls_fx_clamp(ls_vec3_dot(n, rel), 0, v);
}

/// Add the constraint dot(n, x) >= c for particle i against shape k: merged
/// with an earlier one of the same shape and normal (coplanar triangles) by
/// keeping the larger bound.
static void add_particle_contact(ls_world *w, uint32_t first, uint32_t i, uint32_t k, plane pl)
{
    struct ls_particle_collide *pc = w->particles->collide;
    for (uint32_t j = first; j < pc->contact_count; j++) {
        ls_pcontact *o = &pc->contacts[j];
        if (!o->pending && o->shape == k && ls_vec3_equal(o->n, pl.n)) {
            o->c = pl.c > o->c ? pl.c : o->c;
            o->pen0 = approach(w, i, o->body, o->n, o->c);
            return;
        }
    }
    if (pc->contact_count - first >= LS_PCOLLIDE_PER_PARTICLE) {
        w->info.capacity_exceeded = true;
        return;
    }
    ls_pcontact *ct = ls_pcollide_push_(w, pc);
    if (!ct) {
        return;
    }
    ct->n = pl.n;
    ct->c = pl.c;
    ct->pen0 = approach(w, i, w->shapes[k].body, pl.n, pl.c);
    ct->shape = k;
    ct->body = w->shapes[k].body;
    ct->fixed = w->bodies[ct->body].type != LS_BODY_DYNAMIC;
    ct->first = i;
    ct->count = 1;
    ct->inv_mass = w->particles->p[i].w;
}

/// The point of the core segment a..b closest to p.
static ls_vec3 core_closest(ls_vec3 a, ls_vec3 b, ls_vec3 p)
{
    if (ls_vec3_equal(a, b)) {
        return a;
    }
    // The clamped parameter f = (p - a).(b - a) / |b - a|^2 in Q16.16.
    ls_vec3 ab = ls_vec3_sub(b, a);
    int64_t len2 = (int64_t)(ls_vec3_len_sq_q32(ab) >> 16);
    int64_t t = ls_vec3_dot_q32(ls_vec3_sub(p, a), ab);
    if (t <= 0 || len2 <= 0) {
        return a;
    }
    int64_t f = t / len2;
    return ls_vec3_mad(a, ab, f >= LS_FX_ONE ? LS_FX_ONE : (ls_fx)f);
}

/// How far (|x - x*|_1) particle i must move from x* before it can come
/// within reach (r + skin) of the shape: a lower bound, so that most pending
/// contacts cost one comparison per iteration. Round: dist(x*, core) - reach
/// bounded below without a root, (d^2 - R^2) / (|d|_1 + R) with R = radius +
/// r + skin (the distance to a convex set changes no faster than x moves).
/// Else: the separation of x*'s box from the shape's box on the widest axis.
static ls_fx pending_gap(const ls_pshape *ps, ls_vec3 xs, ls_fx r)
{
    ls_fx reach = ls_fx_add(r, LS_PCOLLIDE_SKIN);
    if (ps->round) {
        ls_vec3 d = ls_vec3_sub(xs, core_closest(ps->a, ps->b, xs));
        int64_t big = (int64_t)ps->radius + reach;
        int64_t d2 = (int64_t)(ls_vec3_len_sq_q32(d) >> 16) - ((big * big) >> 16);
        int64_t den = (int64_t)norm1(d) + big;
        if (d2 <= 0 || den <= 0) {
            return 0;
        }
        int64_t g = d2 * 65536 / den;
        return g > LS_FX_MAX ? LS_FX_MAX : (ls_fx)g;
    }
    int64_t gap = 0;
    const ls_fx lo[3] = {ps->box.min.x, ps->box.min.y, ps->box.min.z};
    const ls_fx hi[3] = {ps->box.max.x, ps->box.max.y, ps->box.max.z};
    const ls_fx p[3] = {xs.x, xs.y, xs.z};
    for (int k = 0; k < 3; k++) {
        int64_t g = (int64_t)lo[k] - p[k] - reach;
        int64_t h = (int64_t)p[k] - hi[k] - reach;
        g = g > h ? g : h;
        gap = g > gap ? g : gap;
    }
    return gap > LS_FX_MAX ? LS_FX_MAX : (ls_fx)gap;
}

/// A candidate without a plane yet (ls_pcollide_activate_ makes it later).
static void add_pending(ls_world *w, uint32_t first, uint32_t i, const ls_pshape *ps)
{
    struct ls_particle_collide *pc = w->particles->collide;
    if (pc->contact_count - first >= LS_PCOLLIDE_PER_PARTICLE) {
        w->info.capacity_exceeded = true;
        return;
    }
    ls_pcontact *ct = ls_pcollide_push_(w, pc);
    if (!ct) {
        return;
    }
    ct->shape = ps->slot;
    ct->body = w->shapes[ps->slot].body;
    ct->fixed = w->bodies[ct->body].type != LS_BODY_DYNAMIC;
    ct->first = i;
    ct->count = 1;
    ct->inv_mass = w->particles->p[i].w;
    ct->pending = true;
    ct->round = ps->round;
    ct->point = ps->a;
    ct->core_b = ps->b;
    ct->radius = ps->radius;
    ct->motion = ps->m;
    ct->box = ps->box;
    ct->gap = pending_gap(ps, w->particles->x_old[i], w->particles->p[i].radius);
}

/// Bound of the true sphere (radius r at x) from a contact of the sphere of
/// radius r + e at x*: dot(n, x) >= dot(n, x*) + depth - e.
static int64_t plane_bound(ls_vec3 n, ls_vec3 xs, ls_fx depth, ls_fx e)
{
    return ls_vec3_dot_q32(n, xs) + ((int64_t)depth - e) * 65536;
}

/// A round shape (radius R about the core a..b, from the registry's proxy):
/// the plane the sphere routine gives, with one square root. The closest core
/// point q to x*: n = (x* - q) / |x* - q| (coincident: +y, as the sphere
/// routine does) and dot(n, x) >= dot(n, q) + R + r. When the core moved by m
/// this tick (an awake dynamic or kinematic body) and x* - q points against
/// x* - q_s, q_s the closest point of the start core (a - m .. b - m), the
/// core passed the particle within the tick: n = (x* - q_s) / |x* - q_s|
/// instead. Returns 1 with the plane when x* is within R + r + e + skin, else
/// 0 when it is within R + near (a pending contact), else -1.
static int round_plane(ls_vec3 a, ls_vec3 b, ls_fx radius, ls_vec3 m, ls_vec3 xs, ls_fx r, ls_fx e,
                       ls_fx near, plane *out)
{
    ls_vec3 q = core_closest(a, b, xs);
    ls_vec3 d = ls_vec3_sub(xs, q);
    uint64_t reach = (uint64_t)ls_fx_add(ls_fx_add(ls_fx_add(radius, r), e), LS_PCOLLIDE_SKIN);
    uint64_t d2 = ls_vec3_len_sq_q32(d);
    if (d2 >= reach * reach) {
        uint64_t lim = (uint64_t)ls_fx_add(radius, near);
        return d2 < lim * lim ? 0 : -1;
    }
    if (!ls_vec3_equal(m, ls_vec3_zero())) {
        // A core that passed x* within the tick (x* on opposite sides of its
        // start and final cores) pushes the particle ahead of itself: the
        // side is the start's, as for a cloth triangle (collide_cloth.c).
        ls_vec3 ds = ls_vec3_sub(xs, core_closest(ls_vec3_sub(a, m), ls_vec3_sub(b, m), xs));
        if (ls_vec3_dot_q32(ds, d) < 0) {
            d = ds;
            d2 = ls_vec3_len_sq_q32(d);
        }
    }
    uint64_t root = ls_isqrt64(d2);
    root += (d2 - root * root) > root; // to nearest (as ls_vec3_len)
    ls_vec3 n = ls_vec3_make(0, LS_FX_ONE, 0);
    if (root != 0) {
        // d / |d| through one reciprocal 2^46 / |d| (|d| < 2^32): component
        // d_k inv / 2^30, rounded; |d_k| <= |d| keeps the product below 2^46.
        int64_t inv = (int64_t)(((uint64_t)1 << 46) / root);
        int64_t c[3] = {d.x, d.y, d.z};
        ls_fx u[3];
        for (int k = 0; k < 3; k++) {
            int64_t p = c[k] * inv;
            int64_t mag = p >= 0 ? p : -p;
            int64_t v = (mag + ((int64_t)1 << 29)) >> 30;
            u[k] = (ls_fx)(p >= 0 ? v : -v);
        }
        n = ls_vec3_make(u[0], u[1], u[2]);
    }
    out->n = n;
    out->c = ls_vec3_dot_q32(n, q) + ((int64_t)radius + r) * 65536;
    return 1;
}

/// Planes of a shape that is not round against the sphere (x*, r + e), at
/// most max, through the registry: ls_collide_, or per child (triangle) of a
/// kind made of children near `box`. A half-space has no reach limit.
static uint32_t shape_planes(ls_world *w, const ls_shape *sh, bool unbounded, ls_aabb box,
                             ls_vec3 xs, ls_fx r, ls_fx e, plane *out, uint32_t max)
{
    struct ls_particle_collide *pc = w->particles->collide;
    const ls_shape_kind *kind = ls_shape_kind_of(sh->geom.kind);
    ls_geom g;
    ls_xform xf;
    sphere_at(xs, ls_fx_add(r, e), &g, &xf);
    ls_fx margin = unbounded ? LS_FX_MAX / 4 : LS_PCOLLIDE_SKIN;
    ls_manifold m;
    uint32_t n = 0;
    if (kind->children) {
        uint32_t nt = children_near(w, kind, sh, box);
        for (uint32_t t = 0; t < nt && n < max; t++) {
            // The child routine's normal points from the triangle to the sphere.
            if (kind->collide_child(&sh->geom, pc->tris[t], &sh->xf, &g, &xf, margin, &m) > 0) {
                out[n].n = m.normal;
                out[n].c = plane_bound(m.normal, xs, m.points[0].depth, e);
                n++;
            }
        }
        return n;
    }
    if (ls_collide_(&g, &xf, &sh->geom, &sh->xf, margin, &m) > 0) {
        ls_fx depth = m.points[0].depth;
        for (int p = 1; p < m.count; p++) {
            depth = ls_fx_max(depth, m.points[p].depth);
        }
        out[0].n = ls_vec3_neg(m.normal); // the manifold's normal points at the shape
        out[0].c = plane_bound(out[0].n, xs, depth, e);
        n = 1;
    }
    return n;
}

/// Does the box meet [lo - grow, hi + grow] (exact, 64 bits)?
static inline bool box_near(const ls_aabb *b, const int64_t lo[3], const int64_t hi[3],
                            int64_t grow)
{
    return b->min.x <= hi[0] + grow && lo[0] - grow <= b->max.x && b->min.y <= hi[1] + grow &&
           lo[1] - grow <= b->max.y && b->min.z <= hi[2] + grow && lo[2] - grow <= b->max.z;
}

// Contacts of particle i (store index) against the shapes gathered for its
// system: planes for those within reach, pending contacts for the others
// that are near.
static void particle_contacts(ls_world *w, uint32_t i, ls_vec3 xs, ls_vec3 x, ls_fx r, ls_fx e)
{
    struct ls_particle_collide *pc = w->particles->collide;
    uint32_t first = pc->contact_count;
    ls_fx reach = ls_fx_add(ls_fx_add(r, e), LS_PCOLLIDE_SKIN);
    ls_fx near = ls_fx_add(reach, LS_PCOLLIDE_NEAR);
    const int64_t lo[3] = {ls_fx_min(xs.x, x.x), ls_fx_min(xs.y, x.y), ls_fx_min(xs.z, x.z)};
    const int64_t hi[3] = {ls_fx_max(xs.x, x.x), ls_fx_max(xs.y, x.y), ls_fx_max(xs.z, x.z)};
    plane pl[LS_PCOLLIDE_PER_PARTICLE];
    for (uint32_t j = 0; j < pc->shape_count; j++) {
        const ls_pshape *ps = &pc->shapes[j];
        if (!box_near(&ps->box, lo, hi, near)) {
            continue;
        }
        if (ps->round) {
            int got = round_plane(ps->a, ps->b, ps->radius, ps->m, xs, r, e, near, &pl[0]);
            if (got > 0) {
                add_particle_contact(w, first, i, ps->slot, pl[0]);
            } else if (got == 0) {
                add_pending(w, first, i, ps);
            }
            continue;
        }
        uint32_t n = 0;
        if (box_near(&ps->box, lo, hi, reach)) {
            n = shape_planes(w, &w->shapes[ps->slot], ps->unbounded, swept_box(xs, x, reach), xs, r,
                             e, pl, LS_PCOLLIDE_PER_PARTICLE);
        }
        for (uint32_t k = 0; k < n; k++) {
            add_particle_contact(w, first, i, ps->slot, pl[k]);
        }
        if (n == 0) {
            add_pending(w, first, i, ps);
        }
    }
    ls_particle_contact *pcs = &w->particles->contact[i];
    pcs->cand_first = first;
    pcs->cand_count = pc->contact_count - first;
}

bool ls_pcollide_activate_(ls_world *w, ls_pcontact *c)
{
    const ls_particle_store *ps = w->particles;
    ls_vec3 x = ps->x[c->first], xs = ps->x_old[c->first];
    ls_fx e = norm1(ls_vec3_sub(x, xs));
    ls_fx r = ps->p[c->first].radius;
    ls_fx reach = ls_fx_add(r, LS_PCOLLIDE_SKIN);
    plane pl[LS_PCOLLIDE_PER_PARTICLE];
    uint32_t n = 0;
    if (c->round) {
        ls_vec3 q = core_closest(c->point, c->core_b, x);
        uint64_t lim = (uint64_t)ls_fx_add(c->radius, reach);
        if (ls_vec3_len_sq_q32(ls_vec3_sub(x, q)) >= lim * lim) {
            return false;
        }
        n = round_plane(c->point, c->core_b, c->radius, c->motion, xs, r, e, 0, &pl[0]) > 0 ? 1 : 0;
    } else {
        ls_aabb pbox = swept_box(x, x, reach);
        if (!ls_aabb_overlap(&c->box, &pbox)) {
            return false;
        }
        n = shape_planes(w, &w->shapes[c->shape], false, swept_box(xs, x, ls_fx_add(reach, e)), xs,
                         r, e, pl, LS_PCOLLIDE_PER_PARTICLE);
    }
    if (n == 0) {
        return false;
    }
    // The plane this position violates most (first on ties).
    uint32_t best = 0;
    int64_t worst = INT64_MIN;
    for (uint32_t k = 0; k < n; k++) {
        int64_t v = pl[k].c - ls_vec3_dot_q32(pl[k].n, x);
        if (v > worst) {
            worst = v;
            best = k;
        }
    }
    c->n = pl[best].n;
    c->c = pl[best].c;
    c->pen0 = approach(w, c->first, c->body, c->n, c->c);
    c->pending = false;
    return true;
}

void ls_pcollide_particle_contacts_(ls_world *w, uint32_t si)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    const ls_particle_system *s = &ps->systems[si];
    if (s->mask == 0 || s->count == 0) {
        return;
    }
    const ls_vec3 *x = ps->x + s->first, *xo = ps->x_old + s->first;
    const ls_particle *p = ps->p + s->first;
    // The system's box: every movable particle's x* and x, grown by the
    // largest reach (a bound on each particle's own swept box) and the
    // candidate distance.
    ls_aabb box = box_empty();
    ls_fx widest = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (p[i].w != 0) {
            box.min = ls_vec3_min(box.min, ls_vec3_min(xo[i], x[i]));
            box.max = ls_vec3_max(box.max, ls_vec3_max(xo[i], x[i]));
            widest = ls_fx_max(widest, ls_fx_add(p[i].radius, norm1(ls_vec3_sub(x[i], xo[i]))));
        }
    }
    if (box_is_empty(&box)) {
        return;
    }
    widest = ls_fx_add(widest, LS_PCOLLIDE_SKIN + LS_PCOLLIDE_NEAR);
    box.min = ls_vec3_sub(box.min, ls_vec3_make(widest, widest, widest));
    box.max = ls_vec3_add(box.max, ls_vec3_make(widest, widest, widest));
    ls_pcollide_gather_shapes_(w, s, box);
    if (pc->shape_count == 0) {
        return;
    }
    for (uint32_t i = 0; i < s->count; i++) {
        if (p[i].w == 0) {
            continue; // immovable: never pushed
        }
        particle_contacts(w, s->first + i, xo[i], x[i], p[i].radius,
                          norm1(ls_vec3_sub(x[i], xo[i])));
    }
}

// ------------------------------------------------------ particle bodies

ls_pcontact *ls_pcollide_weighted_(ls_world *w, uint32_t shape, ls_vec3 n, int64_t bound,
                                   ls_vec3 point, const uint32_t *index, const ls_fx *c,
                                   uint32_t count, const ls_vec3 *moves, ls_fx inv_mass)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    if (count == 0 || count > LS_PCOLLIDE_WEIGHTS) {
        return NULL;
    }
    // W = sum w_k c_k^2 (w < 2^26, |c| < 2^20: each w c < 2^46, w c c < 2^51).
    int64_t wc[LS_PCOLLIDE_WEIGHTS];
    int64_t sum = 0;
    for (uint32_t q = 0; q < count; q++) {
        wc[q] = (int64_t)ps->p[index[q]].w * c[q]; // Q32.32
        sum += ls_fx_round_q32((wc[q] >> 16) * c[q]);
    }
    if (moves) {
        sum = inv_mass;
    }
    if (sum <= 0) {
        return NULL; // every weighted particle is immovable
    }
    if (pc->wt_count + count > pc->wt_cap) {
        w->info.capacity_exceeded = true;
        return NULL;
    }
    ls_pcontact *ct = ls_pcollide_push_(w, pc);
    if (!ct) {
        return NULL;
    }
    ct->n = n;
    ct->c = bound;
    ct->shape = shape;
    ct->body = shape == UINT32_MAX ? UINT32_MAX : w->shapes[shape].body;
    ct->fixed = ct->body == UINT32_MAX || w->bodies[ct->body].type != LS_BODY_DYNAMIC;
    ct->first = pc->wt_count;
    ct->count = count;
    ct->inv_mass = sum > LS_FX_MAX ? LS_FX_MAX : (ls_fx)sum;
    ct->point = point;
    for (uint32_t q = 0; q < count; q++) {
        pc->wt_index[pc->wt_count] = index[q];
        pc->wt_c[pc->wt_count] = c[q];
        if (moves) {
            pc->wt_d[pc->wt_count] = moves[q];
        } else {
            // k = w c / W, rounded to nearest (Q16.16), along n.
            int64_t num = wc[q];
            int64_t kq = (num >= 0 ? num + sum / 2 : num - sum / 2) / sum;
            ls_fx k = kq > LS_FX_MAX ? LS_FX_MAX : kq < LS_FX_MIN ? LS_FX_MIN : (ls_fx)kq;
            pc->wt_d[pc->wt_count] = ls_vec3_scale(n, k);
        }
        pc->wt_count++;
    }
    return ct;
}

/// The rigid response of a particle body this tick: how its particles move
/// when a point is pushed, as a rigid body of their masses would (linearised
/// rotation). Why not the seed's barycentric weights alone: an embedded shape's
/// corner usually lies outside the particles' tetrahedron, where the weights
/// extrapolate (c = (1.75, -0.25, -0.25, -0.25) for a box around it) and the
/// push twists the body (measured: a 0.5 m box resting 3 mm deep at 4
/// iterations); the rigid response moves every particle along the same rigid
/// motion, which the barycentric point follows exactly (an affine field).
typedef struct body_rigid {
    bool ok;       ///< every particle movable and the inertia invertible
    ls_vec3 com;   ///< mass-weighted centroid
    ls_fx inv_m;   ///< 1 / total mass
    ls_mat3 inv_i; ///< inverse inertia about com (world)
} body_rigid;

static body_rigid rigid_of(const ls_world *w, const ls_particle_system *s)
{
    const ls_particle_store *ps = w->particles;
    body_rigid br;
    memset(&br, 0, sizeof br);
    int64_t mass = 0, mx[3] = {0, 0, 0};
    ls_fx m[LS_PCOLLIDE_WEIGHTS];
    uint32_t n = s->count < LS_PCOLLIDE_WEIGHTS ? s->count : LS_PCOLLIDE_WEIGHTS;
    for (uint32_t i = 0; i < n; i++) {
        ls_fx wi = ps->p[s->first + i].w;
        if (wi <= 0) {
            return br;
        }
        int64_t mi = ((int64_t)1 << 32) / wi; // kg, Q16.16
        m[i] = mi > LS_FX_MAX ? LS_FX_MAX : (ls_fx)mi;
        mass += m[i];
        ls_vec3 x = ps->x[s->first + i];
        mx[0] += (int64_t)m[i] * x.x;
        mx[1] += (int64_t)m[i] * x.y;
        mx[2] += (int64_t)m[i] * x.z;
    }
    if (mass <= 0 || mass > LS_FX_MAX) {
        return br;
    }
    br.com = ls_vec3_make((ls_fx)(mx[0] / mass), (ls_fx)(mx[1] / mass), (ls_fx)(mx[2] / mass));
    br.inv_m = (ls_fx)(((int64_t)1 << 32) / mass);
    // I = sum m (|r|^2 E - r r^T), exact wide sums (Q48), rounded once.
    int64_t in[6] = {0, 0, 0, 0, 0, 0}; // xx, yy, zz, xy, xz, yz
    for (uint32_t i = 0; i < n; i++) {
        ls_vec3 r = ls_vec3_sub(ps->x[s->first + i], br.com);
        int64_t xx = (int64_t)r.x * r.x, yy = (int64_t)r.y * r.y, zz = (int64_t)r.z * r.z;
        int64_t mi = m[i];
        in[0] += mi * ((yy + zz) >> 16);
        in[1] += mi * ((xx + zz) >> 16);
        in[2] += mi * ((xx + yy) >> 16);
        in[3] -= mi * (((int64_t)r.x * r.y) >> 16);
        in[4] -= mi * (((int64_t)r.x * r.z) >> 16);
        in[5] -= mi * (((int64_t)r.y * r.z) >> 16);
    }
    ls_fx f[6];
    for (int k = 0; k < 6; k++) {
        f[k] = ls_fx_from_q32(in[k]);
    }
    ls_mat3 inertia;
    inertia.row[0] = ls_vec3_make(f[0], f[3], f[4]);
    inertia.row[1] = ls_vec3_make(f[3], f[1], f[5]);
    inertia.row[2] = ls_vec3_make(f[4], f[5], f[2]);
    br.ok = ls_mat3_inverse_spd(inertia, &br.inv_i);
    return br;
}

/// Add a weighted contact of particle body si: its point pa (world, at
/// prepare) must move along the unit push n until dot(n, p) >= dot(n, pa) + depth.
static void add_body_contact(ls_world *w, uint32_t si, const ls_xform *bxf, const body_rigid *br,
                             uint32_t k, ls_vec3 n, ls_vec3 pa, ls_fx depth)
{
    const ls_particle_system *s = &w->particles->systems[si];
    ls_fx cw[LS_PCOLLIDE_WEIGHTS];
    uint32_t index[LS_PCOLLIDE_WEIGHTS];
    ls_vec3 moves[LS_PCOLLIDE_WEIGHTS];
    ls_vec3 local = ls_mat3_mul_tvec(bxf->r, ls_vec3_sub(pa, bxf->p));
    uint32_t nw = ls_particle_body_weights_(s, local, cw);
    if (nw == 0 || nw > LS_PCOLLIDE_WEIGHTS || nw > s->count) {
        return;
    }
    for (uint32_t q = 0; q < nw; q++) {
        index[q] = s->first + q;
    }
    int64_t bound = ls_vec3_dot_q32(n, pa) + (int64_t)depth * 65536;
    if (!br->ok) {
        ls_pcollide_weighted_(w, k, n, bound, pa, index, cw, nw, NULL, 0);
        return;
    }
    // W = 1/M + (r x n) . I^-1 (r x n); particle q moves by (n/M + a x r_q) / W.
    ls_vec3 rn = ls_vec3_cross(ls_vec3_sub(pa, br->com), n);
    ls_vec3 a = ls_mat3_mul_vec(br->inv_i, rn);
    ls_fx inv_w = ls_fx_add(br->inv_m, ls_vec3_dot(rn, a));
    if (inv_w <= 0) {
        return;
    }
    ls_fx scale = ls_fx_div(LS_FX_ONE, inv_w);
    ls_vec3 lin = ls_vec3_scale(n, br->inv_m);
    for (uint32_t q = 0; q < nw; q++) {
        ls_vec3 r = ls_vec3_sub(w->particles->x[index[q]], br->com);
        moves[q] = ls_vec3_scale(ls_vec3_add(lin, ls_vec3_cross(a, r)), scale);
    }
    ls_pcollide_weighted_(w, k, n, bound, pa, index, cw, nw, moves, inv_w);
}

/// Each point of a manifold (normal from the embedded shape to the other)
/// as a weighted contact: the embedded shape's point is the midpoint moved
/// half the depth towards the other shape.
static void body_manifold(ls_world *w, uint32_t si, const ls_xform *bxf, const body_rigid *br,
                          uint32_t k, const ls_manifold *m, ls_vec3 push)
{
    for (int q = 0; q < m->count; q++) {
        ls_fx depth = m->points[q].depth;
        ls_vec3 pa = ls_vec3_mad(m->points[q].point, push, ls_fx_neg(depth / 2));
        add_body_contact(w, si, bxf, br, k, push, pa, depth);
    }
}

void ls_pcollide_body_contacts_(ls_world *w, uint32_t si)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    const ls_particle_system *s = &ps->systems[si];
    if (s->mask == 0 || s->count == 0) {
        return;
    }
    ls_fx e = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        e = ls_fx_max(e, norm1(ls_vec3_sub(ps->x[s->first + i], ps->x_old[s->first + i])));
    }
    ls_xform bxf;
    ls_particle_body_xform_(w, s, &bxf);
    const ls_particle_embed *em = &s->embed;
    ls_vec3 p = ls_vec3_add(bxf.p, ls_mat3_mul_vec(bxf.r, em->local_p));
    ls_xform exf = ls_xform_make_(p, ls_quat_normalize(ls_quat_mul(bxf.q, em->local_q)));
    ls_fx margin = ls_fx_add(e, LS_PCOLLIDE_SKIN);
    ls_aabb box = ls_geom_aabb_(&em->geom, &exf, margin);
    ls_pcollide_gather_shapes_(w, s, box);
    if (pc->shape_count == 0) {
        return;
    }
    body_rigid br = rigid_of(w, s);
    ls_manifold m;
    for (uint32_t j = 0; j < pc->shape_count; j++) {
        if (!ls_aabb_overlap(&pc->shapes[j].box, &box)) {
            continue;
        }
        uint32_t k = pc->shapes[j].slot;
        const ls_shape *sh = &w->shapes[k];
        const ls_shape_kind *kind = ls_shape_kind_of(sh->geom.kind);
        if (kind->children) {
            uint32_t nt = children_near(w, kind, sh, box);
            for (uint32_t t = 0; t < nt; t++) {
                if (kind->collide_child(&sh->geom, pc->tris[t], &sh->xf, &em->geom, &exf, margin,
                                        &m) > 0) {
                    body_manifold(w, si, &bxf, &br, k, &m, m.normal);
                }
            }
            continue;
        }
        if (ls_collide_(&em->geom, &exf, &sh->geom, &sh->xf, margin, &m) > 0) {
            body_manifold(w, si, &bxf, &br, k, &m, ls_vec3_neg(m.normal));
        }
    }
}
