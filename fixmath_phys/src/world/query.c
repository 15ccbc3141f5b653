// SPDX-License-Identifier: MIT
// World queries (ls/query.h, and ls_world_ray_cast / ls_world_query_aabb of
// ls/world.h). Rules in SPEC.md §22. In short: a shape answers a query
// only if its leaf box (tight AABB + LS_QUERY_MARGIN) meets the query's
// segment or box, a sweep's fraction is never smaller than the fraction at
// which that box is entered, and the winner is the smallest (fraction, shape
// slot). Those rules are properties of each shape alone, so walking the tree
// (pruning boxes entered after the best fraction so far) gives exactly what
// testing every shape in slot order gives (`brute`, for the tests).
#include "../collision/collide.h"
#include "../collision/gjk.h"
#include "../collision/mesh.h"
#include "../collision/shape_kind.h"
#include "query_tree.h"
#include "world_internal.h"

#include <string.h>

/// Shape casts aim at this separation (raw, 1/4096 m) and stop within
/// CAST_TOL beyond it; a start closer than CAST_TOUCH is a hit at fraction 0.
#define CAST_TARGET 16
#define CAST_TOL    16
#define CAST_TOUCH  (CAST_TARGET + CAST_TOL)

ls_query_filter ls_default_query_filter(void)
{
    ls_query_filter f;
    memset(&f, 0, sizeof f);
    f.category = UINT32_MAX;
    f.mask = UINT32_MAX;
    return f;
}

// ---------------------------------------------------------------- filters

typedef struct qfilter {
    bool all; ///< no filter (ls_world_ray_cast)
    uint32_t category, mask;
    uint32_t ignore; ///< body slot to skip, UINT32_MAX for none
} qfilter;

static qfilter resolve_filter(const ls_world *w, const ls_query_filter *f, bool null_is_all)
{
    qfilter q = {true, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    if (!f) {
        q.all = null_is_all;
        return q;
    }
    q.all = false;
    q.category = f->category;
    q.mask = f->mask;
    if (ls_world_body_(w, f->ignore)) {
        q.ignore = f->ignore.index1 - 1;
    }
    return q;
}

static bool accepts(const ls_world *w, const qfilter *f, uint32_t k)
{
    const ls_shape *s = &w->shapes[k];
    return f->all ||
           ((s->category & f->mask) != 0 && (f->category & s->mask) != 0 && s->body != f->ignore);
}

// ------------------------------------------------------------- the caster

// The swept or tested shape, placed in the world. Not copied (the proxy
// points into `storage`).
typedef struct caster {
    ls_geom g;
    ls_xform xf;
    ls_vec3 storage[8];
    ls_proxy proxy;
    ls_aabb box; ///< tight world AABB at the start
} caster;

static bool in_world(int64_t x, int64_t y, int64_t z)
{
    const int64_t lim = LS_FX_INT(2048);
    return x >= -lim && x <= lim && y >= -lim && y <= lim && z >= -lim && z <= lim;
}

static bool make_caster(const ls_shape_def *def, ls_vec3 position, ls_quat orientation, caster *c)
{
    if (!def || def->type == LS_SHAPE_PLANE || def->type == LS_SHAPE_MESH) {
        return false;
    }
    const ls_shape_kind *kind = ls_shape_kind_of(def->type);
    if (!kind) {
        return false;
    }
    memset(c, 0, sizeof *c);
    c->g.kind = def->type;
    c->g.radius = def->radius;
    c->g.half_height = def->half_height;
    c->g.half_extents = def->half_extents;
    c->g.hull = def->type == LS_SHAPE_HULL ? (const struct ls_hull *)def->hull : NULL;
    if (!kind->check(&c->g, NULL)) {
        return false;
    }
    // As on a body at position/orientation: local pose applied (all zero =
    // identity), no extra rounding when it is the identity.
    ls_quat q = ls_quat_normalize(orientation), ql = ls_quat_normalize(def->local_orientation);
    ls_vec3 p = position;
    if (!ls_vec3_equal(def->local_position, ls_vec3_zero())) {
        p = ls_vec3_add(p, ls_quat_rotate(q, def->local_position));
    }
    if (!ls_quat_equal(ql, ls_quat_identity())) {
        q = ls_quat_normalize(ls_quat_mul(q, ql));
    }
    if (!in_world(p.x, p.y, p.z)) {
        return false;
    }
    c->xf = ls_xform_make_(p, q);
    c->proxy = ls_proxy_of_geom_(&c->g, c->storage);
    if (c->proxy.count == 0) {
        return false;
    }
    c->box = ls_geom_aabb_(&c->g, &c->xf, 0);
    return true;
}

// World corner j of a mesh triangle and a proxy of it around its centroid
// (points within 86 m of it: edges are at most 128 m), identity rotation.
static void triangle_proxy(const ls_mesh *m, uint32_t tri, const ls_xform *xm, ls_vec3 pts[3],
                           ls_xform *xt)
{
    ls_vec3 wv[3];
    int64_t sum[3] = {0, 0, 0};
    for (int j = 0; j < 3; j++) {
        wv[j] = ls_vec3_add(xm->p, ls_mat3_mul_vec(xm->r, m->vertices[m->tris[tri].v[j]]));
        sum[0] += wv[j].x;
        sum[1] += wv[j].y;
        sum[2] += wv[j].z;
    }
    // floor(sum / 3), exact for negative sums too.
    int64_t o[3];
    for (int a = 0; a < 3; a++) {
        o[a] = sum[a] >= 0 ? sum[a] / 3 : -((-sum[a] + 2) / 3);
    }
    ls_vec3 origin = ls_vec3_make((ls_fx)o[0], (ls_fx)o[1], (ls_fx)o[2]);
    for (int j = 0; j < 3; j++) {
        pts[j] = ls_vec3_sub(wv[j], origin);
    }
    *xt = ls_xform_make_(origin, ls_quat_identity());
}

// --------------------------------------------------------------- sweeps

// A ray cast or a shape cast: the segment, the best hit so far and what is
// needed to test one shape.
typedef struct sweep {
    const ls_world *w;
    qfilter filter;
    ls_query_seg seg;
    const caster *c; ///< shape cast: the swept shape; NULL for a ray
    ls_vec3 from, to, move;
    bool found;
    int32_t best_t;
    uint32_t best_k;
    ls_vec3 best_n, best_p;
} sweep;

static void consider(sweep *q, int32_t t, uint32_t k, ls_vec3 n, ls_vec3 p)
{
    if (!q->found || t < q->best_t || (t == q->best_t && k < q->best_k)) {
        q->found = true;
        q->best_t = t;
        q->best_k = k;
        q->best_n = n;
        q->best_p = p;
    }
}

// Linear cast of proxy b (on xb, moving by move) against fixed proxy a, by
// conservative advancement along the GJK normal (the distance between convex
// shapes is convex in the fraction, so a step of gap / closing speed never
// passes the first contact). Unlike ls_shape_cast_, each step is rounded down
// and aims CAST_TARGET short of contact, so that no step lands on touching
// cores (which GJK reports as overlap) when the geometry is exact; a step
// that still lands on overlapping cores reports the step before it. A start
// within CAST_TOUCH (or overlapping) is a hit at fraction 0 with the normal of
// the shortest way out (EPA). Fraction (Q16.16, 0..1), point on a's surface
// and a's normal towards b.
static bool cast_convex(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b,
                        const ls_xform *xb, ls_vec3 move, int32_t *t_out, ls_vec3 *n, ls_vec3 *p)
{
    int64_t radii = (int64_t)a->radius + b->radius;
    int64_t t = 0;
    ls_xform xt = *xb;
    ls_gjk_result g;
    for (int it = 0; it < LS_CAST_MAX_ITERS; it++) {
        xt.p = ls_vec3_mad(xb->p, move, (ls_fx)t);
        if (!ls_gjk_distance_(a, xa, b, &xt, &g)) {
            if (it == 0) {
                ls_epa_result e;
                ls_epa_penetration_(a, xa, b, &xt, &g, &e);
                *t_out = 0;
                *n = e.normal;
                *p = ls_vec3_mad(e.point_a, e.normal, a->radius);
                return true;
            }
            return true; // rounding stepped onto the cores: the previous step stands
        }
        *t_out = (int32_t)t;
        *n = g.normal;
        *p = ls_vec3_mad(g.point_a, g.normal, a->radius);
        int64_t gap = (int64_t)g.distance - radii;
        if (gap <= CAST_TOUCH) {
            return true; // close enough (at the start: touching, fraction 0)
        }
        int64_t closing = -ls_vec3_dot_q32(move, g.normal); // Q32.32, exact
        if (closing <= 0) {
            return false;
        }
        // dt = (gap - target) / closing in Q16.16, rounded down, at least
        // 1 ulp: gap < 2^31 keeps the numerator below 2^63.
        int64_t dt = (gap - CAST_TARGET) * (INT64_C(1) << 32) / closing;
        t += dt > 0 ? dt : 1;
        if (t > LS_FX_ONE) {
            return false;
        }
    }
    return true; // cap reached: the last fraction is still short of contact
}

// The swept shape against a plane: exact along the normal, fraction rounded down.
static bool cast_plane(const sweep *q, const ls_geom *g, int32_t *t, ls_vec3 *n, ls_vec3 *p)
{
    const caster *c = q->c;
    ls_fx best = LS_FX_MAX;
    ls_vec3 deepest = c->xf.p;
    for (uint32_t i = 0; i < c->proxy.count; i++) {
        ls_vec3 v = ls_vec3_add(c->xf.p, ls_mat3_mul_vec(c->xf.r, c->proxy.points[i]));
        ls_fx d = ls_vec3_dot(g->normal, v);
        if (d < best) {
            best = d;
            deepest = v;
        }
    }
    ls_fx above = ls_fx_sub(best, g->plane_d); // deepest core point above the plane
    int64_t gap = (int64_t)above - c->proxy.radius;
    *n = g->normal;
    if (gap <= CAST_TOUCH) {
        *t = 0;
        *p = ls_vec3_mad(deepest, g->normal, ls_fx_neg(above)); // its foot on the plane
        return true;
    }
    int64_t dn = ls_vec3_dot(g->normal, q->move);
    if (dn >= 0 || gap + dn > 0) {
        return false; // moving away, or not reaching it
    }
    *t = (int32_t)(gap * 65536 / -dn);
    ls_vec3 at = ls_vec3_mad(deepest, q->move, *t);
    *p = ls_vec3_mad(at, g->normal, ls_fx_neg(c->proxy.radius));
    return true;
}

typedef struct mesh_cast {
    const sweep *q;
    const ls_shape *s;
    bool found;
    int32_t t;
    uint32_t tri;
    ls_vec3 n, p;
} mesh_cast;

// One triangle against the swept shape: front side only, unless touching at the start.
static bool cast_triangle(void *ctx, uint32_t tri)
{
    mesh_cast *mc = ctx;
    const ls_mesh *m = mc->s->geom.mesh;
    ls_vec3 pts[3];
    ls_xform xt;
    triangle_proxy(m, tri, &mc->s->xf, pts, &xt);
    ls_proxy a = {pts, 3, 0};
    int32_t t;
    ls_vec3 n, p;
    if (!cast_convex(&a, &xt, &mc->q->c->proxy, &mc->q->c->xf, mc->q->move, &t, &n, &p)) {
        return false;
    }
    if (t > 0) {
        ls_vec3 fn = ls_mat3_mul_vec(mc->s->xf.r, m->tris[tri].normal);
        if (ls_vec3_dot_q32(fn, mc->q->move) >= 0) {
            return false; // reached from behind or along the face
        }
    }
    if (!mc->found || t < mc->t || (t == mc->t && tri < mc->tri)) {
        mc->found = true;
        mc->t = t;
        mc->tri = tri;
        mc->n = n;
        mc->p = p;
    }
    return false;
}

static bool cast_mesh(const sweep *q, const ls_shape *s, int32_t *t, ls_vec3 *n, ls_vec3 *p)
{
    ls_aabb b0 = q->c->box;
    ls_aabb b1 = {ls_vec3_add(b0.min, q->move), ls_vec3_add(b0.max, q->move)};
    ls_aabb swept = {ls_vec3_min(b0.min, b1.min), ls_vec3_max(b0.max, b1.max)};
    mesh_cast mc;
    memset(&mc, 0, sizeof mc);
    mc.q = q;
    mc.s = s;
    ls_mesh_walk_(s->geom.mesh, ls_mesh_local_aabb_(&s->xf, swept), cast_triangle, &mc);
    *t = mc.t;
    *n = mc.n;
    *p = mc.p;
    return mc.found;
}

// Shape k against the query; `enter` is the fraction at which its leaf box
// is entered (a lower bound on its fraction) when `bounded`.
static void test_shape(sweep *q, uint32_t k, int32_t enter, bool bounded)
{
    if (!accepts(q->w, &q->filter, k)) {
        return;
    }
    const ls_shape *s = &q->w->shapes[k];
    int32_t t;
    ls_vec3 n, p = ls_vec3_zero();
    bool hit;
    if (!q->c) {
        ls_fx tf;
        hit = ls_shape_kind_of(s->geom.kind)->ray_cast(&s->geom, &s->xf, q->from, q->to, &tf, &n);
        t = tf;
    } else if (s->geom.kind == LS_SHAPE_PLANE) {
        hit = cast_plane(q, &s->geom, &t, &n, &p);
    } else if (s->geom.kind == LS_SHAPE_MESH) {
        hit = cast_mesh(q, s, &t, &n, &p);
    } else {
        ls_vec3 storage[8];
        ls_proxy a = ls_proxy_of_geom_(&s->geom, storage);
        hit = a.count > 0 && cast_convex(&a, &s->xf, &q->c->proxy, &q->c->xf, q->move, &t, &n, &p);
    }
    if (!hit) {
        return;
    }
    if (bounded && t < enter) {
        t = enter; // never before the box is reached (SPEC.md §22)
    }
    consider(q, t, k, n, p);
}

static void sweep_brute(sweep *q)
{
    const ls_world *w = q->w;
    for (uint32_t k = 0; k < w->shape_high; k++) {
        const ls_shape *s = &w->shapes[k];
        if (!s->alive) {
            continue;
        }
        ls_aabb tight, leaf;
        int32_t enter = 0;
        if (!ls_query_shape_boxes_(&s->geom, &s->xf, &tight, &leaf)) {
            test_shape(q, k, 0, false);
        } else if (ls_query_seg_box_(&q->seg, &leaf, &enter)) {
            test_shape(q, k, enter, true);
        }
    }
}

// Nodes whose box is entered after the best fraction so far cannot hold a
// better hit (every shape's fraction is at least its box's entry, which is at
// least the node's); nearer children are visited first.
static void sweep_tree(sweep *q)
{
    const ls_query_tree *t = ls_query_tree_sync_(q->w);
    for (uint32_t i = 0; i < t->plane_count; i++) {
        test_shape(q, t->planes[i], 0, false);
    }
    uint32_t stack[LS_BVH_STACK];
    int32_t stack_t[LS_BVH_STACK];
    uint32_t sp = 0;
    int32_t e;
    if (t->node_count == 0 || !ls_query_seg_box_(&q->seg, &t->nodes[0].box, &e)) {
        return;
    }
    stack[sp] = 0;
    stack_t[sp++] = e;
    while (sp > 0) {
        sp--;
        if (q->found && stack_t[sp] > q->best_t) {
            continue;
        }
        const ls_query_node *nd = &t->nodes[stack[sp]];
        if (nd->count > 0) {
            for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
                uint32_t k = t->order[i];
                if (ls_query_seg_box_(&q->seg, &t->box[k], &e) && !(q->found && e > q->best_t)) {
                    test_shape(q, k, e, true);
                }
            }
            continue;
        }
        int32_t e0, e1;
        bool h0 = ls_query_seg_box_(&q->seg, &t->nodes[nd->first].box, &e0);
        bool h1 = ls_query_seg_box_(&q->seg, &t->nodes[nd->first + 1].box, &e1);
        LS_ASSERT(sp + 2 <= LS_BVH_STACK);
        // Push the farther first; on a tie the first child is visited first.
        if (h0 && h1 && e1 < e0) {
            stack[sp] = nd->first;
            stack_t[sp++] = e0;
            h0 = false;
        }
        if (h1) {
            stack[sp] = nd->first + 1;
            stack_t[sp++] = e1;
        }
        if (h0) {
            stack[sp] = nd->first;
            stack_t[sp++] = e0;
        }
    }
}

static void sweep_run(sweep *q, bool brute)
{
    if (brute) {
        sweep_brute(q);
    } else {
        sweep_tree(q);
    }
}

static void fill_hit(const sweep *q, ls_ray_hit *hit)
{
    const ls_shape *s = &q->w->shapes[q->best_k];
    hit->body = ls_world_id_of_(q->w, s->body);
    hit->shape = ls_world_shape_id_of_(q->w, q->best_k);
    hit->fraction = q->best_t;
    hit->normal = q->best_n;
    hit->point = q->best_p;
}

bool ls_world_ray_cast_ex_(const ls_world *w, ls_vec3 from, ls_vec3 to,
                           const ls_query_filter *filter, ls_ray_hit *hit, bool brute)
{
    sweep q;
    memset(&q, 0, sizeof q);
    q.w = w;
    q.filter = resolve_filter(w, filter, true);
    q.from = from;
    q.to = to;
    q.seg.o[0] = from.x;
    q.seg.o[1] = from.y;
    q.seg.o[2] = from.z;
    q.seg.d[0] = (int64_t)to.x - from.x;
    q.seg.d[1] = (int64_t)to.y - from.y;
    q.seg.d[2] = (int64_t)to.z - from.z;
    sweep_run(&q, brute);
    if (!q.found) {
        return false;
    }
    q.best_p = ls_vec3_mad(from, ls_vec3_sub(to, from), q.best_t);
    fill_hit(&q, hit);
    return true;
}

bool ls_world_ray_cast(const ls_world *w, ls_vec3 from, ls_vec3 to, ls_ray_hit *hit)
{
    return ls_world_ray_cast_ex_(w, from, to, NULL, hit, false);
}

bool ls_world_ray_cast_filtered(const ls_world *w, ls_vec3 from, ls_vec3 to,
                                const ls_query_filter *filter, ls_ray_hit *hit)
{
    ls_query_filter def = ls_default_query_filter();
    return ls_world_ray_cast_ex_(w, from, to, filter ? filter : &def, hit, false);
}

bool ls_world_shape_cast_ex_(const ls_world *w, const ls_shape_def *shape, ls_vec3 position,
                             ls_quat orientation, ls_vec3 translation,
                             const ls_query_filter *filter, ls_ray_hit *hit, bool brute)
{
    caster c;
    if (!make_caster(shape, position, orientation, &c) ||
        !in_world((int64_t)c.xf.p.x + translation.x, (int64_t)c.xf.p.y + translation.y,
                  (int64_t)c.xf.p.z + translation.z)) {
        return false;
    }
    ls_query_filter def = ls_default_query_filter();
    sweep q;
    memset(&q, 0, sizeof q);
    q.w = w;
    q.filter = resolve_filter(w, filter ? filter : &def, false);
    q.c = &c;
    q.move = translation;
    ls_fx o[3] = {c.xf.p.x, c.xf.p.y, c.xf.p.z},
          d[3] = {translation.x, translation.y, translation.z};
    ls_fx lo[3] = {c.box.min.x, c.box.min.y, c.box.min.z},
          hi[3] = {c.box.max.x, c.box.max.y, c.box.max.z};
    for (int a = 0; a < 3; a++) {
        q.seg.o[a] = o[a];
        q.seg.d[a] = d[a];
        q.seg.lo[a] = (int64_t)o[a] - lo[a];
        q.seg.hi[a] = (int64_t)hi[a] - o[a];
    }
    sweep_run(&q, brute);
    if (!q.found) {
        return false;
    }
    fill_hit(&q, hit);
    return true;
}

bool ls_world_shape_cast(const ls_world *w, const ls_shape_def *shape, ls_vec3 position,
                         ls_quat orientation, ls_vec3 translation, const ls_query_filter *filter,
                         ls_ray_hit *hit)
{
    return ls_world_shape_cast_ex_(w, shape, position, orientation, translation, filter, hit,
                                   false);
}

// --------------------------------------------------------------- overlap

typedef struct mesh_overlap {
    const caster *c;
    const ls_shape *s;
} mesh_overlap;

static bool cores_touch(const ls_proxy *a, const ls_xform *xa, const caster *c)
{
    ls_gjk_result g;
    return !ls_gjk_distance_(a, xa, &c->proxy, &c->xf, &g) ||
           (int64_t)g.distance <= (int64_t)a->radius + c->proxy.radius;
}

static bool overlap_triangle(void *ctx, uint32_t tri)
{
    const mesh_overlap *mo = ctx;
    ls_vec3 pts[3];
    ls_xform xt;
    triangle_proxy(mo->s->geom.mesh, tri, &mo->s->xf, pts, &xt);
    ls_proxy a = {pts, 3, 0};
    return cores_touch(&a, &xt, mo->c);
}

static bool overlaps(const ls_world *w, const caster *c, uint32_t k)
{
    const ls_shape *s = &w->shapes[k];
    switch (s->geom.kind) {
    case LS_SHAPE_PLANE: {
        ls_fx best = LS_FX_MAX;
        for (uint32_t i = 0; i < c->proxy.count; i++) {
            ls_vec3 v = ls_vec3_add(c->xf.p, ls_mat3_mul_vec(c->xf.r, c->proxy.points[i]));
            best = ls_fx_min(best, ls_vec3_dot(s->geom.normal, v));
        }
        return (int64_t)best - s->geom.plane_d <= c->proxy.radius;
    }
    case LS_SHAPE_MESH: {
        mesh_overlap mo = {c, s};
        return ls_mesh_walk_(s->geom.mesh, ls_mesh_local_aabb_(&s->xf, c->box), overlap_triangle,
                             &mo);
    }
    default: {
        ls_vec3 storage[8];
        ls_proxy a = ls_proxy_of_geom_(&s->geom, storage);
        return a.count > 0 && cores_touch(&a, &s->xf, c);
    }
    }
}

// An overlap query: the shape, its filter and the world.
typedef struct overlap_query {
    const ls_world *w;
    const qfilter *f;
    const caster *c;
} overlap_query;

static bool overlap_keep(void *ctx, uint32_t k)
{
    const overlap_query *oq = ctx;
    return accepts(oq->w, oq->f, k) && overlaps(oq->w, oq->c, k);
}

// Shapes of the query box's candidates that pass the filter and overlap,
// into t->scratch or (brute) out directly; returns the count found.
uint32_t ls_world_overlap_shape_ex_(const ls_world *w, const ls_shape_def *shape, ls_vec3 position,
                                    ls_quat orientation, const ls_query_filter *filter,
                                    ls_shape_id *out, uint32_t max_out, bool brute)
{
    caster c;
    if (!make_caster(shape, position, orientation, &c)) {
        return 0;
    }
    ls_query_filter def = ls_default_query_filter();
    qfilter f = resolve_filter(w, filter ? filter : &def, false);
    uint32_t n = 0;
    if (brute) {
        for (uint32_t k = 0; k < w->shape_high; k++) {
            const ls_shape *s = &w->shapes[k];
            ls_aabb tight, leaf;
            if (!s->alive || !accepts(w, &f, k) ||
                (ls_query_shape_boxes_(&s->geom, &s->xf, &tight, &leaf) &&
                 !ls_aabb_overlap(&leaf, &c.box)) ||
                !overlaps(w, &c, k)) {
                continue;
            }
            if (n < max_out) {
                out[n] = ls_world_shape_id_of_(w, k);
            }
            n++;
        }
        return n;
    }
    ls_query_tree *t = ls_query_tree_sync_(w);
    overlap_query oq = {w, &f, &c};
    n = ls_query_tree_collect_(t, &c.box, overlap_keep, &oq, t->scratch);
    ls_query_sort_u32_(t->scratch, n);
    for (uint32_t i = 0; i < n && i < max_out; i++) {
        out[i] = ls_world_shape_id_of_(w, t->scratch[i]);
    }
    return n;
}

uint32_t ls_world_overlap_shape(const ls_world *w, const ls_shape_def *shape, ls_vec3 position,
                                ls_quat orientation, const ls_query_filter *filter,
                                ls_shape_id *out, uint32_t max_out)
{
    return ls_world_overlap_shape_ex_(w, shape, position, orientation, filter, out, max_out, false);
}

// ------------------------------------------------------------ AABB query

// An AABB query keeps a shape whose tight box overlaps q and whose body it
// has not kept yet (marked with the query's epoch).
typedef struct aabb_query {
    const ls_world *w;
    const ls_aabb *q;
    ls_query_tree *t;
} aabb_query;

static bool aabb_keep(void *ctx, uint32_t k)
{
    const aabb_query *aq = ctx;
    ls_query_tree *t = aq->t;
    uint32_t b = aq->w->shapes[k].body;
    if (t->mark[b] != t->epoch && ls_aabb_overlap(aq->q, &t->tight[k])) {
        t->mark[b] = t->epoch;
        return true;
    }
    return false;
}

uint32_t ls_world_query_aabb_ex_(const ls_world *w, ls_vec3 min, ls_vec3 max, ls_body_id *out,
                                 uint32_t max_out, bool brute)
{
    ls_aabb q = {min, max};
    uint32_t n = 0;
    if (brute) {
        for (uint32_t i = 0; i < w->body_high; i++) {
            const ls_body *b = &w->bodies[i];
            if (!b->alive) {
                continue;
            }
            for (uint32_t k = b->shape_head; k != UINT32_MAX; k = w->shapes[k].next) {
                const ls_shape *s = &w->shapes[k];
                ls_aabb box = ls_geom_aabb_(&s->geom, &s->xf, 0);
                if (ls_aabb_overlap(&q, &box)) {
                    if (n < max_out) {
                        out[n] = ls_world_id_of_(w, i);
                    }
                    n++;
                    break;
                }
            }
        }
        return n;
    }
    // Bodies with a shape whose tight box overlaps, each once (marked with
    // this query's epoch), then sorted by slot.
    ls_query_tree *t = ls_query_tree_sync_(w);
    if (++t->epoch == 0) {
        memset(t->mark, 0, (size_t)t->max_bodies * sizeof *t->mark);
        t->epoch = 1;
    }
    // The tree's items are walked by their leaf boxes, which contain the
    // tight ones: the same shapes pass, in the same order.
    aabb_query aq = {w, &q, t};
    n = ls_query_tree_collect_(t, &q, aabb_keep, &aq, t->scratch);
    for (uint32_t i = 0; i < n; i++) {
        t->scratch[i] = w->shapes[t->scratch[i]].body;
    }
    ls_query_sort_u32_(t->scratch, n);
    for (uint32_t i = 0; i < n && i < max_out; i++) {
        out[i] = ls_world_id_of_(w, t->scratch[i]);
    }
    return n;
}

uint32_t ls_world_query_aabb(const ls_world *w, ls_vec3 min, ls_vec3 max, ls_body_id *out,
                             uint32_t max_out)
{
    return ls_world_query_aabb_ex_(w, min, max, out, max_out, false);
}
