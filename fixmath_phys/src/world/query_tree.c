// SPDX-License-Identifier: MIT
// The world's query tree (query_tree.h): built from the live shapes' boxes
// with a deterministic median split, kept up to date lazily, and the exact
// segment-box test every query uses (SPEC.md §22).
#include "query_tree.h"

#include "../collision/collide.h"
#include "world_internal.h"

#include <stdlib.h>
#include <string.h>

// Node slots: a tree over n >= 1 items has at most 2n - 1 nodes.
static size_t node_capacity(uint32_t max_shapes)
{
    return 2 * (size_t)(max_shapes ? max_shapes : 1);
}

size_t ls_query_tree_memory_size_(uint32_t max_shapes, uint32_t max_bodies)
{
    const ls_query_tree *t = NULL; // sizeof only
    size_t ns = max_shapes, nb = max_bodies;
    return sizeof *t + nb * (sizeof *t->stamps + sizeof *t->mark) +
           ns * (sizeof *t->tight + sizeof *t->box + sizeof *t->order + sizeof *t->planes +
                 sizeof *t->scratch) +
           node_capacity(max_shapes) * sizeof *t->nodes;
}

ls_query_tree *ls_query_tree_create_(uint32_t max_shapes, uint32_t max_bodies)
{
    ls_query_tree *t = calloc(1, sizeof *t);
    if (!t) {
        return NULL;
    }
    // calloc(0, ..) may return NULL: allocate at least one element of each.
    size_t ns = max_shapes ? max_shapes : 1, nb = max_bodies ? max_bodies : 1;
    t->max_shapes = max_shapes;
    t->max_bodies = max_bodies;
    t->dirty = true;
    t->stamps = calloc(nb, sizeof *t->stamps);
    t->mark = calloc(nb, sizeof *t->mark);
    t->tight = calloc(ns, sizeof *t->tight);
    t->box = calloc(ns, sizeof *t->box);
    t->order = calloc(ns, sizeof *t->order);
    t->planes = calloc(ns, sizeof *t->planes);
    t->scratch = calloc(ns, sizeof *t->scratch);
    t->nodes = calloc(node_capacity(max_shapes), sizeof *t->nodes);
    if (!t->stamps || !t->mark || !t->tight || !t->box || !t->order || !t->planes || !t->scratch ||
        !t->nodes) {
        ls_query_tree_destroy_(t);
        return NULL;
    }
    return t;
}

void ls_query_tree_destroy_(ls_query_tree *t)
{
    if (!t) {
        return;
    }
    free(t->stamps);
    free(t->mark);
    free(t->tight);
    free(t->box);
    free(t->order);
    free(t->planes);
    free(t->scratch);
    free(t->nodes);
    free(t);
}

void ls_query_tree_invalidate_(ls_query_tree *t)
{
    t->dirty = true;
}

// ------------------------------------------------------------------ build

static ls_fx comp(ls_vec3 v, int axis)
{
    return axis == 0 ? v.x : axis == 1 ? v.y : v.z;
}

// Twice the centre of a box along an axis (exact).
static int64_t centre2(const ls_aabb *b, int axis)
{
    return (int64_t)comp(b->min, axis) + comp(b->max, axis);
}

// The total order of the split: centre along the axis, then slot index.
static bool item_less(const ls_query_tree *t, uint32_t a, uint32_t b, int axis)
{
    int64_t ka = centre2(&t->box[a], axis), kb = centre2(&t->box[b], axis);
    return ka < kb || (ka == kb && a < b);
}

static void swap_u32(uint32_t *v, uint32_t i, uint32_t j)
{
    uint32_t s = v[i];
    v[i] = v[j];
    v[j] = s;
}

// Rearrange v[0..n) so that v[k] is the item of rank k in the total order,
// with smaller items before it and larger after (quickselect, median-of-3
// pivot). The keys are distinct, so the halves are a function of the items.
static void select_nth(const ls_query_tree *t, uint32_t *v, uint32_t n, uint32_t k, int axis)
{
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (item_less(t, v[m], v[lo], axis)) {
            swap_u32(v, m, lo);
        }
        if (item_less(t, v[hi], v[lo], axis)) {
            swap_u32(v, hi, lo);
        }
        if (item_less(t, v[hi], v[m], axis)) {
            swap_u32(v, hi, m);
        }
        swap_u32(v, m, hi); // pivot (the median of three) to the end
        uint32_t pivot = v[hi], s = lo;
        for (uint32_t i = lo; i < hi; i++) {
            if (item_less(t, v[i], pivot, axis)) {
                swap_u32(v, i, s++);
            }
        }
        swap_u32(v, s, hi);
        if (k == s) {
            return;
        }
        if (k < s) {
            hi = s - 1;
        } else {
            lo = s + 1;
        }
    }
}

static ls_aabb box_union(ls_aabb a, ls_aabb b)
{
    ls_aabb r = {ls_vec3_min(a.min, b.min), ls_vec3_max(a.max, b.max)};
    return r;
}

// Node ni over items order[first .. first + count): a leaf of at most
// LS_QUERY_LEAF_MAX, else split at the median of the box centres along the
// axis where the centres spread most (ties: x, then y, then z).
static void build_node(ls_query_tree *t, uint32_t ni, uint32_t first, uint32_t count)
{
    ls_query_node *nd = &t->nodes[ni];
    if (count <= LS_QUERY_LEAF_MAX) {
        nd->box = t->box[t->order[first]];
        for (uint32_t i = 1; i < count; i++) {
            nd->box = box_union(nd->box, t->box[t->order[first + i]]);
        }
        nd->first = first;
        nd->count = count;
        return;
    }
    int64_t lo[3], hi[3];
    for (int a = 0; a < 3; a++) {
        lo[a] = hi[a] = centre2(&t->box[t->order[first]], a);
    }
    for (uint32_t i = 1; i < count; i++) {
        for (int a = 0; a < 3; a++) {
            int64_t c = centre2(&t->box[t->order[first + i]], a);
            lo[a] = c < lo[a] ? c : lo[a];
            hi[a] = c > hi[a] ? c : hi[a];
        }
    }
    int axis = 0;
    for (int a = 1; a < 3; a++) {
        if (hi[a] - lo[a] > hi[axis] - lo[axis]) {
            axis = a;
        }
    }
    uint32_t half = count / 2;
    select_nth(t, t->order + first, count, half, axis);
    uint32_t child = t->node_count;
    t->node_count += 2;
    nd->first = child;
    nd->count = 0;
    build_node(t, child, first, half);
    build_node(t, child + 1, first + half, count - half);
    nd->box = box_union(t->nodes[child].box, t->nodes[child + 1].box);
}

static bool unbounded(const ls_aabb *b)
{
    const ls_fx u = LS_QUERY_UNBOUNDED;
    return b->min.x < -u || b->min.y < -u || b->min.z < -u || b->max.x > u || b->max.y > u ||
           b->max.z > u;
}

// One walk of ls_query_tree_collect_.
typedef struct collect {
    const ls_query_tree *t;
    const ls_aabb *box;
    ls_query_keep keep;
    void *ctx;
    uint32_t *out;
    uint32_t n;
} collect;

static bool collect_visit(void *ctx, uint32_t k)
{
    collect *c = ctx;
    if (ls_aabb_overlap(&c->t->box[k], c->box) && c->keep(c->ctx, k)) {
        c->out[c->n++] = k;
    }
    return false;
}

uint32_t ls_query_tree_collect_(const ls_query_tree *t, const ls_aabb *box, ls_query_keep keep,
                                void *ctx, uint32_t *out)
{
    collect c = {t, box, keep, ctx, out, 0};
    for (uint32_t i = 0; i < t->plane_count; i++) {
        if (keep(ctx, t->planes[i])) {
            out[c.n++] = t->planes[i];
        }
    }
    ls_bvh_query_(t->nodes, t->node_count, t->order, box, collect_visit, &c);
    return c.n;
}

bool ls_query_shape_boxes_(const ls_geom *g, const ls_xform *xf, ls_aabb *tight, ls_aabb *leaf)
{
    *tight = ls_geom_aabb_(g, xf, 0);
    if (unbounded(tight)) {
        return false;
    }
    const ls_fx m = LS_QUERY_MARGIN;
    leaf->min = ls_vec3_sub(tight->min, ls_vec3_make(m, m, m));
    leaf->max = ls_vec3_add(tight->max, ls_vec3_make(m, m, m));
    return true;
}

static ls_query_stamp stamp_of(const ls_body *b)
{
    ls_query_stamp s;
    memset(&s, 0, sizeof s);
    s.generation = b->generation;
    s.alive = b->alive;
    if (b->alive) {
        s.p = b->p;
        s.q = b->q;
    }
    return s;
}

static void rebuild(ls_query_tree *t, const ls_world *w)
{
    t->body_high = w->body_high;
    for (uint32_t i = 0; i < w->body_high; i++) {
        t->stamps[i] = stamp_of(&w->bodies[i]);
    }
    t->item_count = t->plane_count = t->node_count = 0;
    for (uint32_t k = 0; k < w->shape_high; k++) {
        const ls_shape *s = &w->shapes[k];
        if (!s->alive) {
            continue;
        }
        if (!ls_query_shape_boxes_(&s->geom, &s->xf, &t->tight[k], &t->box[k])) {
            t->planes[t->plane_count++] = k;
            continue;
        }
        t->order[t->item_count++] = k;
    }
    if (t->item_count > 0) {
        t->node_count = 1;
        build_node(t, 0, 0, t->item_count);
    }
    t->dirty = false;
}

// Did any body slot change since the build? Creation, destruction and
// teleports between steps do not reach the dirty flag (they live in body.c),
// so every query compares the stamps: branch-free, one cache line per body.
static bool stamps_changed(const ls_query_tree *t, const ls_world *w)
{
    if (w->body_high != t->body_high) {
        return true;
    }
    uint32_t diff = 0;
    for (uint32_t i = 0; i < w->body_high; i++) {
        const ls_body *b = &w->bodies[i];
        const ls_query_stamp *s = &t->stamps[i];
        uint32_t live = (uint32_t)b->alive;
        uint32_t moved =
            ((uint32_t)b->p.x ^ (uint32_t)s->p.x) | ((uint32_t)b->p.y ^ (uint32_t)s->p.y) |
            ((uint32_t)b->p.z ^ (uint32_t)s->p.z) | ((uint32_t)b->q.x ^ (uint32_t)s->q.x) |
            ((uint32_t)b->q.y ^ (uint32_t)s->q.y) | ((uint32_t)b->q.z ^ (uint32_t)s->q.z) |
            ((uint32_t)b->q.w ^ (uint32_t)s->q.w);
        diff |= (b->generation ^ s->generation) | (live ^ s->alive) | (moved & (0u - live));
    }
    return diff != 0;
}

ls_query_tree *ls_query_tree_sync_(const ls_world *w)
{
    ls_query_tree *t = w->qt;
    if (t->dirty || (LS_QUERY_STAMPS && stamps_changed(t, w))) {
        rebuild(t, w);
    }
    return t;
}

// ------------------------------------------------------- segment and box

bool ls_query_seg_box_(const ls_query_seg *s, const ls_aabb *b, int32_t *enter)
{
    const int64_t one = 65536, narrow = INT64_C(1) << 31;
    // Every segment shorter than 2^31 raw (32768 m) per axis is decided
    // exactly by cross-multiplication (numerators below 2^31 once clamped);
    // longer ones by fractions rounded outwards. The choice depends on the
    // segment alone, so each query uses one rule for every box.
    bool exact = s->d[0] < narrow && s->d[0] > -narrow && s->d[1] < narrow && s->d[1] > -narrow &&
                 s->d[2] < narrow && s->d[2] > -narrow;
    int64_t ein = 0, eden = 1, xn = 1, xden = 1; // entry ein/eden, exit xn/xden
    int64_t tin = 0, tout = one;                 // rounded (Q16) entry and exit
    ls_fx bmin[3] = {b->min.x, b->min.y, b->min.z}, bmax[3] = {b->max.x, b->max.y, b->max.z};
    for (int a = 0; a < 3; a++) {
        // The box minus the carried box, relative to the origin: the
        // segment's point must lie in [lo, hi].
        int64_t lo = (int64_t)bmin[a] - s->hi[a] - s->o[a];
        int64_t hi = (int64_t)bmax[a] + s->lo[a] - s->o[a];
        int64_t d = s->d[a];
        if (d == 0) {
            if (lo > 0 || hi < 0) {
                return false;
            }
            continue;
        }
        // Entry and exit fractions n_in / den <= n_out / den.
        int64_t n_in = d > 0 ? lo : -hi, n_out = d > 0 ? hi : -lo, den = d > 0 ? d : -d;
        if (n_out < 0 || n_in > den) {
            return false; // left before the start or reached after the end
        }
        if (exact) {
            // 0 < n_in <= den < 2^31 and 0 <= n_out < den: products below 2^62.
            if (n_in > 0 && n_in * eden > ein * den) {
                ein = n_in;
                eden = den;
            }
            if (n_out < den && n_out * xden < xn * den) {
                xn = n_out;
                xden = den;
            }
            if (ein * xden > xn * eden) {
                return false;
            }
            continue;
        }
        // 0 < n_in <= den and 0 <= n_out < den keep the products below 2^49.
        int64_t e = n_in <= 0 ? 0 : n_in * one / den;                   // floor
        int64_t x = n_out >= den ? one : (n_out * one + den - 1) / den; // ceiling
        tin = e > tin ? e : tin;
        tout = x < tout ? x : tout;
        if (tin > tout) {
            return false;
        }
    }
    *enter = (int32_t)(exact ? ein * one / eden : tin);
    return true;
}

// ------------------------------------------------------------------ sort

static void sift_down(uint32_t *v, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && v[l] > v[m]) {
            m = l;
        }
        if (r < n && v[r] > v[m]) {
            m = r;
        }
        if (m == i) {
            return;
        }
        swap_u32(v, i, m);
        i = m;
    }
}

void ls_query_sort_u32_(uint32_t *v, uint32_t n)
{
    for (uint32_t i = n / 2; i > 0; i--) {
        sift_down(v, n, i - 1);
    }
    for (uint32_t end = n; end > 1; end--) {
        swap_u32(v, 0, end - 1);
        sift_down(v, end - 1, 0);
    }
}
