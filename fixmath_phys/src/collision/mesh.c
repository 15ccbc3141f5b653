// SPDX-License-Identifier: MIT
// Static triangle meshes: validation, exact face normals, edge adjacency and
// active edges, a median-split BVH, box queries, ray casts, and the
// triangle-versus-convex narrow phase (sphere, box, capsule, hull) with the
// internal-edge rule. Every rule is in SPEC.md §21; all arithmetic is
// integer, every loop runs in index order and every tie goes to the lower index.
#include "mesh.h"

#include "clip.h"
#include "collide_internal.h"
#include "hull.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------ small helpers

/// a + b + c for wide values, saturating (never reached for in-range input).
static int64_t add3_sat(int64_t a, int64_t b, int64_t c)
{
    return ls_i64_add_sat(ls_i64_add_sat(a, b), c);
}

/// |v| as unsigned.
static uint64_t uabs64(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/// Number of significant bits of v (0 for 0).
static int bit_length(uint64_t v)
{
    return v ? 64 - __builtin_clzll(v) : 0;
}

/// The direction of the exact wide vector (x, y, z) as a unit vector with
/// `bits` fractional bits (16: Q16.16, 30: Q2.30): the vector is scaled by a
/// power of two so its largest component lies in [2^29, 2^30) (right shifts
/// round to nearest, ties away), then each component is c * 2^bits / |c|
/// rounded to nearest (ties away). False when the vector is zero.
static bool norm_wide(int64_t x, int64_t y, int64_t z, int bits, int32_t out[3])
{
    uint64_t m = uabs64(x);
    m = uabs64(y) > m ? uabs64(y) : m;
    m = uabs64(z) > m ? uabs64(z) : m;
    if (m == 0) {
        return false;
    }
    int sh = 29 - (bit_length(m) - 1);
    int64_t c[3] = {ls_shift_round_(x, sh), ls_shift_round_(y, sh), ls_shift_round_(z, sh)};
    uint64_t len =
        ls_isqrt64((uint64_t)(c[0] * c[0]) + (uint64_t)(c[1] * c[1]) + (uint64_t)(c[2] * c[2]));
    int64_t l = (int64_t)len, h = l / 2;
    for (int k = 0; k < 3; k++) {
        int64_t n = c[k] * ((int64_t)1 << bits);
        out[k] = (int32_t)((n >= 0 ? n + h : n - h) / l);
    }
    return true;
}

/// dot(p, n) for a Q2.30 unit normal: exact, in units of 2^-46 m.
static int64_t dot30_raw(ls_vec3 p, const int32_t n[3])
{
    return add3_sat((int64_t)p.x * n[0], (int64_t)p.y * n[1], (int64_t)p.z * n[2]);
}

/// A value in units of 2^-46 rounded to Q16.16 (half up), saturating.
static ls_fx q46_to_fx(int64_t v)
{
    int64_t r = (v >> 30) + ((v >> 29) & 1);
    return r > LS_FX_MAX ? LS_FX_MAX : r < LS_FX_MIN ? LS_FX_MIN : (ls_fx)r;
}

/// Exact cross product of a Q2.30 vector and a Q16.16 vector, in units of 2^-46.
static void cross30(const int32_t a[3], ls_vec3 b, int64_t out[3])
{
    out[0] = (int64_t)a[1] * b.z - (int64_t)a[2] * b.y;
    out[1] = (int64_t)a[2] * b.x - (int64_t)a[0] * b.z;
    out[2] = (int64_t)a[0] * b.y - (int64_t)a[1] * b.x;
}

/// Component k of a Q16.16 vector as int64.
static int64_t comp64(ls_vec3 v, int k)
{
    return ls_vec3_comp(v, k);
}

// ------------------------------------------------------------ sorting

/// Sort n 64-bit keys ascending (bottom-up merge sort; tmp holds n keys).
/// Keys are unique wherever it is used, so the order is total.
static void sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
    uint64_t *src = a, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                dst[k++] = src[i] <= src[j] ? src[i++] : src[j++];
            }
            while (i < mid) {
                dst[k++] = src[i++];
            }
            while (j < hi) {
                dst[k++] = src[j++];
            }
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) {
        memcpy(a, src, n * sizeof *a);
    }
}

// ------------------------------------------------------------ creation

static void edges_of(const ls_mesh *m, uint32_t t, ls_mesh_edges *e);

/// Nodes of the BVH over n triangles (the build below makes exactly these).
static uint32_t count_nodes(uint32_t n)
{
    if (n <= LS_MESH_LEAF_MAX) {
        return 1;
    }
    return 1 + count_nodes(n / 2) + count_nodes(n - n / 2);
}

/// Round up to a multiple of 8.
static size_t align8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

/// Point the header's array pointers into its own allocation.
static void mesh_fix_pointers(ls_mesh *m)
{
    unsigned char *base = (unsigned char *)m;
    size_t off = align8(sizeof *m);
    m->vertices = (ls_vec3 *)(void *)(base + off);
    off = align8(off + (size_t)m->vertex_count * sizeof(ls_vec3));
    m->tris = (ls_mesh_tri *)(void *)(base + off);
    off = align8(off + (size_t)m->triangle_count * sizeof(ls_mesh_tri));
    m->nodes = (ls_mesh_node *)(void *)(base + off);
    off = align8(off + (size_t)m->node_count * sizeof(ls_mesh_node));
    m->order = (uint32_t *)(void *)(base + off);
    off = align8(off + (size_t)m->triangle_count * sizeof(uint32_t));
    m->edges = (ls_mesh_edges *)(void *)(base + off);
}

/// Bytes of a mesh with these counts.
static size_t mesh_size(uint32_t v, uint32_t t, uint32_t nodes)
{
    size_t off = align8(sizeof(ls_mesh));
    off = align8(off + (size_t)v * sizeof(ls_vec3));
    off = align8(off + (size_t)t * sizeof(ls_mesh_tri));
    off = align8(off + (size_t)nodes * sizeof(ls_mesh_node));
    off = align8(off + (size_t)t * sizeof(uint32_t));
    return off + (size_t)t * sizeof(ls_mesh_edges);
}

/// Text of a Q16.16 value for messages (6 decimals, integer arithmetic).
static void fx_text(ls_fx v, char *buf, size_t size)
{
    uint64_t a = uabs64(v);
    uint64_t ip = a >> 16, fp = ((a & 0xFFFF) * 1000000 + 32768) >> 16;
    if (fp >= 1000000) {
        ip++;
        fp -= 1000000;
    }
    snprintf(buf, size, "%s%llu.%06llu", v < 0 ? "-" : "", (unsigned long long)ip,
             (unsigned long long)fp);
}

/// Set the error's field (when err is not NULL).
static void set_field(ls_error *err, const char *fmt, uint32_t index, const char *suffix)
{
    if (err) {
        snprintf(err->field, sizeof err->field, fmt, index, suffix);
    }
}

/// Validate one vertex; false (err filled) when a coordinate is out of range.
static bool check_vertex(const ls_vec3 *p, uint32_t i, ls_error *err)
{
    static const char axis[3] = {'x', 'y', 'z'};
    for (int k = 0; k < 3; k++) {
        ls_fx c = ls_vec3_comp(*p, k);
        if (c > LS_MESH_COORD_MAX_RAW || c < -LS_MESH_COORD_MAX_RAW) {
            char t[32];
            fx_text(c, t, sizeof t);
            ls_error_set(err, LS_ERR_OUT_OF_RANGE,
                         "vertex %u: %c = %s is outside the mesh range of +-2048 m", i, axis[k], t);
            char suffix[3] = {'.', axis[k], 0};
            set_field(err, "vertices[%u]%s", i, suffix);
            return false;
        }
    }
    return true;
}

/// Validate triangle t and compute its normals; false (err filled) when it is refused.
static bool check_triangle(const ls_vec3 *vs, uint32_t vertex_count, const uint32_t *idx,
                           uint32_t t, ls_mesh_tri *out, ls_error *err)
{
    for (int k = 0; k < 3; k++) {
        if (idx[k] >= vertex_count) {
            ls_error_set(err, LS_ERR_OUT_OF_RANGE,
                         "triangle %u: vertex index %u is out of range (the mesh has %u vertices)",
                         t, idx[k], vertex_count);
            set_field(err, "triangles[%u]%s", t, "");
            return false;
        }
    }
    for (int k = 0; k < 3; k++) {
        if (idx[k] == idx[(k + 1) % 3]) {
            ls_error_set(err, LS_ERR_INVALID_ARGUMENT,
                         "triangle %u is degenerate: it uses vertex %u twice", t, idx[k]);
            set_field(err, "triangles[%u]%s", t, "");
            return false;
        }
    }
    ls_vec3 p[3] = {vs[idx[0]], vs[idx[1]], vs[idx[2]]};
    for (int k = 0; k < 3; k++) {
        ls_vec3 e = ls_vec3_sub(p[(k + 1) % 3], p[k]); // exact: coordinates within +-2048
        uint64_t lim = (uint64_t)LS_MESH_EDGE_MAX_RAW;
        if (ls_vec3_len_sq_q32(e) > lim * lim) {
            char tl[32];
            fx_text(ls_vec3_len(e), tl, sizeof tl);
            ls_error_set(err, LS_ERR_OUT_OF_RANGE,
                         "triangle %u: edge from vertex %u to vertex %u is %s m long (at most 128 "
                         "m)",
                         t, idx[k], idx[(k + 1) % 3], tl);
            set_field(err, "triangles[%u]%s", t, "");
            return false;
        }
    }
    ls_vec3 e1 = ls_vec3_sub(p[1], p[0]), e2 = ls_vec3_sub(p[2], p[0]);
    // Exact cross product in Q32.32 (components below 2^47 with 128 m edges).
    int64_t c[3] = {(int64_t)e1.y * e2.z - (int64_t)e1.z * e2.y,
                    (int64_t)e1.z * e2.x - (int64_t)e1.x * e2.z,
                    (int64_t)e1.x * e2.y - (int64_t)e1.y * e2.x};
    // |c| >= 2^22 (twice the area >= 2^-10 m^2), decided exactly: a component
    // that large settles it; otherwise all squares are below 2^44.
    bool big = false;
    for (int k = 0; k < 3; k++) {
        big = big || uabs64(c[k]) >= (uint64_t)LS_MESH_AREA2_MIN_Q32;
    }
    uint64_t sq = 0;
    if (!big) {
        for (int k = 0; k < 3; k++) {
            sq += (uint64_t)(c[k] * c[k]);
        }
    }
    if (!big && sq < (uint64_t)LS_MESH_AREA2_MIN_Q32 * (uint64_t)LS_MESH_AREA2_MIN_Q32) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT,
                     "triangle %u (vertices %u %u %u) is degenerate: its area is below "
                     "2^-11 m^2",
                     t, idx[0], idx[1], idx[2]);
        set_field(err, "triangles[%u]%s", t, "");
        return false;
    }
    memset(out, 0, sizeof *out);
    for (int k = 0; k < 3; k++) {
        out->v[k] = idx[k];
        out->adj[k] = LS_MESH_NONE;
    }
    norm_wide(c[0], c[1], c[2], 30, out->n30);
    int32_t n16[3];
    norm_wide(c[0], c[1], c[2], 16, n16);
    out->normal = ls_vec3_make(n16[0], n16[1], n16[2]);
    return true;
}

/// Whether the edge between triangle a (its edge ea) and its neighbour b
/// (edge eb) is active: the neighbour bends away (convex) by more than 5
/// degrees, or the two faces are back to back.
static bool edge_is_active(const ls_mesh *m, uint32_t a, uint32_t b, int eb)
{
    const ls_mesh_tri *ta = &m->tris[a], *tb = &m->tris[b];
    int64_t cos60 = 0; // Q4.60
    for (int k = 0; k < 3; k++) {
        cos60 += (int64_t)ta->n30[k] * tb->n30[k];
    }
    if (cos60 < LS_MESH_BACK_COS_Q30 * ((int64_t)1 << 30)) {
        return true;
    }
    ls_vec3 w = m->vertices[tb->v[(eb + 2) % 3]]; // the neighbour's far vertex
    int64_t h = dot30_raw(ls_vec3_sub(w, m->vertices[ta->v[0]]), ta->n30);
    if (h > 0) {
        return false; // concave: the neighbour rises above this face's plane
    }
    return cos60 < LS_MESH_ACTIVE_COS_Q30 * ((int64_t)1 << 30);
}

/// Edge adjacency and active flags. Returns false when out of memory.
static bool build_adjacency(ls_mesh *m)
{
    size_t n = (size_t)m->triangle_count * 3;
    uint64_t *keys = malloc(2 * n * sizeof *keys);
    if (!keys) {
        return false;
    }
    // key: lower vertex (20 bits) | higher vertex (20 bits) | half-edge 3t+e (22 bits).
    for (uint32_t t = 0; t < m->triangle_count; t++) {
        for (uint32_t e = 0; e < 3; e++) {
            uint32_t a = m->tris[t].v[e], b = m->tris[t].v[(e + 1) % 3];
            uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
            keys[3 * t + e] = lo << 42 | hi << 22 | (uint64_t)(3 * t + e);
        }
    }
    sort_u64(keys, keys + n, n);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && keys[j] >> 22 == keys[i] >> 22) {
            j++;
        }
        if (j - i == 2) {
            uint32_t h0 = (uint32_t)(keys[i] & 0x3FFFFF), h1 = (uint32_t)(keys[i + 1] & 0x3FFFFF);
            uint32_t t0 = h0 / 3, t1 = h1 / 3;
            int e0 = (int)(h0 % 3), e1 = (int)(h1 % 3);
            // Neighbours only when they run the edge in opposite directions
            // (consistent winding); otherwise both stay boundary edges.
            if (m->tris[t0].v[e0] == m->tris[t1].v[(e1 + 1) % 3]) {
                m->tris[t0].adj[e0] = t1;
                m->tris[t1].adj[e1] = t0;
            }
        }
        i = j;
    }
    free(keys);
    for (uint32_t t = 0; t < m->triangle_count; t++) {
        ls_mesh_tri *tr = &m->tris[t];
        uint8_t act = 0;
        for (int e = 0; e < 3; e++) {
            uint32_t nb = tr->adj[e];
            bool active = true;
            if (nb != LS_MESH_NONE) {
                int eb = 0;
                while (m->tris[nb].adj[eb] != t || m->tris[nb].v[eb] != tr->v[(e + 1) % 3]) {
                    eb++;
                }
                active = edge_is_active(m, t, nb, eb);
            }
            act = (uint8_t)(act | (active ? 1u << e : 0u));
        }
        for (int k = 0; k < 3; k++) {
            bool va = (act >> k & 1) || (act >> ((k + 2) % 3) & 1);
            act = (uint8_t)(act | (va ? 1u << (3 + k) : 0u));
        }
        tr->active = act;
    }
    return true;
}

/// Local AABB of triangle t.
static ls_aabb tri_box(const ls_mesh *m, uint32_t t)
{
    const ls_mesh_tri *tr = &m->tris[t];
    ls_vec3 a = m->vertices[tr->v[0]], b = m->vertices[tr->v[1]], c = m->vertices[tr->v[2]];
    ls_aabb box = {ls_vec3_min(a, ls_vec3_min(b, c)), ls_vec3_max(a, ls_vec3_max(b, c))};
    return box;
}

/// Union of two boxes.
static ls_aabb box_union(ls_aabb a, ls_aabb b)
{
    ls_aabb r = {ls_vec3_min(a.min, b.min), ls_vec3_max(a.max, b.max)};
    return r;
}

/// BVH build state: the triangle set of a node sits in list[k][lo..hi) for
/// each axis k, sorted by (3 * centroid_k, triangle index).
typedef struct bvh_build {
    ls_mesh *m;
    uint32_t *list[3];
    uint32_t *tmp;
    uint8_t *left; ///< per triangle: 1 when in the left half of the current split
    int64_t *cent; ///< [3 * t + k]: sum of the three vertices' coordinate k
    uint32_t next; ///< next free node
} bvh_build;

/// Build node `node` over positions [lo, hi) of the lists.
static void bvh_node(bvh_build *b, uint32_t node, uint32_t lo, uint32_t hi)
{
    ls_mesh *m = b->m;
    ls_mesh_node *nd = &m->nodes[node];
    nd->box = tri_box(m, b->list[0][lo]);
    for (uint32_t i = lo + 1; i < hi; i++) {
        nd->box = box_union(nd->box, tri_box(m, b->list[0][i]));
    }
    if (hi - lo <= LS_MESH_LEAF_MAX) {
        nd->first = lo;
        nd->count = hi - lo;
        for (uint32_t i = lo; i < hi; i++) {
            m->order[i] = b->list[0][i];
        }
        return;
    }
    // Split on the longest axis of the centroid bounds (ties: lowest axis).
    int axis = 0;
    int64_t best = -1;
    for (int k = 0; k < 3; k++) {
        int64_t ext = b->cent[3 * (size_t)b->list[k][hi - 1] + (size_t)k] -
                      b->cent[3 * (size_t)b->list[k][lo] + (size_t)k];
        if (ext > best) {
            best = ext;
            axis = k;
        }
    }
    uint32_t mid = lo + (hi - lo) / 2;
    for (uint32_t i = lo; i < hi; i++) {
        b->left[b->list[axis][i]] = (uint8_t)(i < mid);
    }
    // Stable partition of the other two lists keeps them sorted.
    for (int k = 0; k < 3; k++) {
        if (k == axis) {
            continue;
        }
        uint32_t *l = b->list[k];
        uint32_t nl = lo, nr = 0;
        for (uint32_t i = lo; i < hi; i++) {
            if (b->left[l[i]]) {
                l[nl++] = l[i];
            } else {
                b->tmp[nr++] = l[i];
            }
        }
        memcpy(l + nl, b->tmp, nr * sizeof *l);
    }
    uint32_t child = b->next;
    b->next += 2;
    nd->first = child;
    nd->count = 0;
    bvh_node(b, child, lo, mid);
    bvh_node(b, child + 1, mid, hi);
}

/// Build the BVH. Returns false when out of memory.
static bool build_bvh(ls_mesh *m)
{
    uint32_t n = m->triangle_count;
    bvh_build b = {m, {NULL, NULL, NULL}, NULL, NULL, NULL, 1};
    uint64_t *keys = malloc(2 * (size_t)n * sizeof *keys);
    uint32_t *lists = malloc(4 * (size_t)n * sizeof *lists);
    b.left = malloc(n);
    b.cent = malloc(3 * (size_t)n * sizeof *b.cent);
    bool ok = keys && lists && b.left && b.cent;
    if (ok) {
        for (uint32_t t = 0; t < n; t++) {
            const ls_mesh_tri *tr = &m->tris[t];
            for (int k = 0; k < 3; k++) {
                b.cent[3 * (size_t)t + (size_t)k] = comp64(m->vertices[tr->v[0]], k) +
                                                    comp64(m->vertices[tr->v[1]], k) +
                                                    comp64(m->vertices[tr->v[2]], k);
            }
        }
        for (int k = 0; k < 3; k++) {
            b.list[k] = lists + (size_t)k * n;
            // Centroid sums lie within +-3 * 2^27: biased by 2^29 they fit 30 bits.
            for (uint32_t t = 0; t < n; t++) {
                uint64_t c = (uint64_t)(b.cent[3 * (size_t)t + (size_t)k] + ((int64_t)1 << 29));
                keys[t] = c << 21 | t;
            }
            sort_u64(keys, keys + n, n);
            for (uint32_t i = 0; i < n; i++) {
                b.list[k][i] = (uint32_t)(keys[i] & 0x1FFFFF);
            }
        }
        b.tmp = lists + 3 * (size_t)n;
        bvh_node(&b, 0, 0, n);
        LS_ASSERT(b.next == m->node_count);
        m->bounds = m->nodes[0].box;
    }
    free(keys);
    free(lists);
    free(b.left);
    free(b.cent);
    return ok;
}

ls_mesh *ls_mesh_create_ex_(const ls_vec3 *vertices, uint32_t vertex_count, const uint32_t *indices,
                            uint32_t triangle_count, uint32_t *bad_tri, uint32_t *bad_vertex,
                            ls_error *err)
{
    ls_error_clear(err);
    *bad_tri = UINT32_MAX;
    *bad_vertex = UINT32_MAX;
    if ((!vertices && vertex_count) || (!indices && triangle_count)) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no vertex or index array");
        return NULL;
    }
    if (vertex_count > LS_MESH_MAX_VERTICES) {
        ls_error_set(err, LS_ERR_CAPACITY, "too many vertices: %u (at most %u)", vertex_count,
                     LS_MESH_MAX_VERTICES);
        if (err) {
            snprintf(err->field, sizeof err->field, "vertex_count");
        }
        return NULL;
    }
    if (triangle_count > LS_MESH_MAX_TRIANGLES) {
        ls_error_set(err, LS_ERR_CAPACITY, "too many triangles: %u (at most %u)", triangle_count,
                     LS_MESH_MAX_TRIANGLES);
        if (err) {
            snprintf(err->field, sizeof err->field, "triangle_count");
        }
        return NULL;
    }
    if (triangle_count == 0) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "a mesh needs at least one triangle");
        if (err) {
            snprintf(err->field, sizeof err->field, "triangle_count");
        }
        return NULL;
    }
    for (uint32_t i = 0; i < vertex_count; i++) {
        if (!check_vertex(&vertices[i], i, err)) {
            *bad_vertex = i;
            return NULL;
        }
    }
    uint32_t nodes = count_nodes(triangle_count);
    size_t size = mesh_size(vertex_count, triangle_count, nodes);
    ls_mesh *m = calloc(1, size);
    if (!m) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "cannot allocate %zu bytes for the mesh", size);
        return NULL;
    }
    m->size = size;
    m->vertex_count = vertex_count;
    m->triangle_count = triangle_count;
    m->node_count = nodes;
    mesh_fix_pointers(m);
    if (vertex_count) {
        memcpy(m->vertices, vertices, (size_t)vertex_count * sizeof *vertices);
    }
    for (uint32_t t = 0; t < triangle_count; t++) {
        if (!check_triangle(m->vertices, vertex_count, indices + 3 * (size_t)t, t, &m->tris[t],
                            err)) {
            *bad_tri = t;
            free(m);
            return NULL;
        }
    }
    for (uint32_t t = 0; t < triangle_count; t++) {
        edges_of(m, t, &m->edges[t]);
    }
    if (!build_adjacency(m) || !build_bvh(m)) {
        free(m);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory while building the mesh");
        return NULL;
    }
    return m;
}

ls_mesh *ls_mesh_create(const ls_vec3 *vertices, uint32_t vertex_count, const uint32_t *indices,
                        uint32_t triangle_count, ls_error *err)
{
    uint32_t bt, bv;
    return ls_mesh_create_ex_(vertices, vertex_count, indices, triangle_count, &bt, &bv, err);
}

void ls_mesh_destroy(ls_mesh *mesh)
{
    free(mesh);
}

uint32_t ls_mesh_vertex_count(const ls_mesh *mesh)
{
    return mesh->vertex_count;
}

ls_vec3 ls_mesh_vertex(const ls_mesh *mesh, uint32_t i)
{
    LS_ASSERT(i < mesh->vertex_count);
    return mesh->vertices[i];
}

uint32_t ls_mesh_triangle_count(const ls_mesh *mesh)
{
    return mesh->triangle_count;
}

void ls_mesh_triangle(const ls_mesh *mesh, uint32_t t, uint32_t out[3])
{
    LS_ASSERT(t < mesh->triangle_count);
    for (int k = 0; k < 3; k++) {
        out[k] = mesh->tris[t].v[k];
    }
}

ls_mesh *ls_mesh_clone_(const ls_mesh *m)
{
    ls_mesh *c = malloc(m->size);
    if (c) {
        memcpy(c, m, m->size);
        mesh_fix_pointers(c);
    }
    return c;
}

size_t ls_mesh_memory_size_(const ls_mesh *m)
{
    return m->size;
}

ls_aabb ls_mesh_bounds_(const ls_mesh *m)
{
    return m->bounds;
}

ls_aabb ls_mesh_local_aabb_(const ls_xform *xm, ls_aabb world)
{
    ls_vec3 c = ls_vec3_mid(world.min, world.max);
    ls_vec3 h = ls_vec3_sub(world.max, c);
    ls_vec3 lc = ls_mat3_mul_tvec(xm->r, ls_vec3_sub(c, xm->p));
    ls_fx e[3];
    for (int k = 0; k < 3; k++) {
        // Column k of r is row k of r^T: sum_j |r_jk| h_j, exact, rounded, +1 ulp.
        ls_vec3 col = ls_mat3_col(xm->r, k);
        int64_t s = (int64_t)ls_fx_abs(col.x) * h.x + (int64_t)ls_fx_abs(col.y) * h.y +
                    (int64_t)ls_fx_abs(col.z) * h.z;
        e[k] = ls_fx_add(ls_fx_from_q32(s), 1);
    }
    ls_vec3 ev = ls_vec3_make(ls_fx_add(e[0], 1), ls_fx_add(e[1], 1), ls_fx_add(e[2], 1));
    ls_aabb r = {ls_vec3_sub(lc, ev), ls_vec3_add(lc, ev)};
    return r;
}

// ------------------------------------------------------------ queries

/// Restore the max-heap property below position i of h[0..n).
static void heap_down(uint32_t *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, big = i;
        if (l < n && h[l] > h[big]) {
            big = l;
        }
        if (r < n && h[r] > h[big]) {
            big = r;
        }
        if (big == i) {
            return;
        }
        uint32_t t = h[i];
        h[i] = h[big];
        h[big] = t;
        i = big;
    }
}

/// A walk of the triangles whose own box overlaps `box` (ls_mesh_walk_).
typedef struct tri_walk {
    const ls_mesh *m;
    ls_aabb box;
    ls_bvh_visit visit;
    void *ctx;
} tri_walk;

static bool visit_overlapping(void *ctx, uint32_t t)
{
    const tri_walk *tw = ctx;
    ls_aabb tb = tri_box(tw->m, t);
    return ls_aabb_overlap(&tb, &tw->box) && tw->visit(tw->ctx, t);
}

bool ls_mesh_walk_(const ls_mesh *m, ls_aabb local_box, ls_bvh_visit visit, void *ctx)
{
    tri_walk tw = {m, local_box, visit, ctx};
    return ls_bvh_query_(m->nodes, m->node_count, m->order, &local_box, visit_overlapping, &tw);
}

/// The `max` smallest triangle indices seen, in a max-heap, and how many were seen.
typedef struct smallest {
    uint32_t *out;
    uint32_t max, kept, total;
} smallest;

static bool keep_smallest(void *ctx, uint32_t t)
{
    smallest *k = ctx;
    uint32_t *out = k->out;
    k->total++;
    if (k->kept < k->max) {
        uint32_t j = k->kept++;
        out[j] = t;
        while (j > 0 && out[(j - 1) / 2] < out[j]) {
            uint32_t p = (j - 1) / 2, s = out[p];
            out[p] = out[j];
            out[j] = s;
            j = p;
        }
    } else if (k->max > 0 && t < out[0]) {
        out[0] = t;
        heap_down(out, k->kept, 0);
    }
    return false;
}

uint32_t ls_mesh_query_(const ls_mesh *m, ls_aabb local_box, uint32_t *out, uint32_t max)
{
    smallest k = {out, max, 0, 0};
    ls_mesh_walk_(m, local_box, keep_smallest, &k);
    // Heap sort: ascending order.
    for (uint32_t end = k.kept; end > 1; end--) {
        uint32_t s = out[0];
        out[0] = out[end - 1];
        out[end - 1] = s;
        heap_down(out, end - 1, 0);
    }
    return k.total;
}

/// Slack of the ray tests, in Q16.16 ulps: a hit may lie this far outside a
/// triangle's edges (so a ray through a shared edge hits one of the two).
#define RAY_EDGE_TOL 4

/// Q0.32 fraction num / den for 0 <= num <= den, den > 0 (truncated after
/// reducing both to 30 bits).
static int64_t frac32(int64_t num, int64_t den)
{
    int sh = bit_length((uint64_t)den) - 30;
    if (sh > 0) {
        num >>= sh;
        den >>= sh;
        if (den == 0) {
            return 0;
        }
    }
    return (num * ((int64_t)1 << 32)) / den;
}

/// Inward unit normals (Q2.30) of a triangle's edges: normalize(n x e_i).
static void edge_normals30(const int32_t n30[3], const ls_vec3 p[3], int32_t m30[3][3])
{
    for (int i = 0; i < 3; i++) {
        int64_t c[3];
        cross30(n30, ls_vec3_sub(p[(i + 1) % 3], p[i]), c);
        if (!norm_wide(c[0], c[1], c[2], 30, m30[i])) {
            m30[i][0] = m30[i][1] = m30[i][2] = 0;
        }
    }
}

/// Segment (local o + d * t, t in [0, best]) against triangle t: the hit
/// fraction in Q0.32, or -1.
static int64_t ray_triangle(const ls_mesh *m, uint32_t t, ls_vec3 o, ls_vec3 d)
{
    const ls_mesh_tri *tr = &m->tris[t];
    ls_vec3 p[3] = {m->vertices[tr->v[0]], m->vertices[tr->v[1]], m->vertices[tr->v[2]]};
    int64_t h0 = dot30_raw(ls_vec3_sub(o, p[0]), tr->n30);
    int64_t dn = dot30_raw(d, tr->n30);
    if (dn >= 0 || h0 < 0 || h0 > -dn) {
        return -1; // parallel or leaving the front, starts behind, or ends above
    }
    int64_t t32 = frac32(h0, -dn);
    // |d| < 2^31 and t32 <= 2^32: the products fit 64 bits.
    ls_vec3 hit = ls_vec3_make(ls_fx_clamp64_(o.x + (((int64_t)d.x * t32) >> 32)),
                               ls_fx_clamp64_(o.y + (((int64_t)d.y * t32) >> 32)),
                               ls_fx_clamp64_(o.z + (((int64_t)d.z * t32) >> 32)));
    int32_t m30[3][3];
    edge_normals30(tr->n30, p, m30);
    for (int i = 0; i < 3; i++) {
        if (dot30_raw(ls_vec3_sub(hit, p[i]), m30[i]) < -((int64_t)RAY_EDGE_TOL << 30)) {
            return -1;
        }
    }
    return t32;
}

/// Whether the segment o + d * t, t in [0, tmax] (Q0.32), may touch box b
/// (grown by the ray tolerance). The slabs are cut in Q0.24 (so any Q16.16
/// input fits 64 bits), widened by one unit each way: conservative.
static bool ray_box(const ls_aabb *b, ls_vec3 o, ls_vec3 d, int64_t tmax)
{
    int64_t t0 = 0, t1 = (tmax + 255) >> 8;
    for (int k = 0; k < 3; k++) {
        int64_t lo = comp64(b->min, k) - RAY_EDGE_TOL - 1,
                hi = comp64(b->max, k) + RAY_EDGE_TOL + 1;
        int64_t ok = comp64(o, k), dk = comp64(d, k);
        if (dk == 0) {
            if (ok < lo || ok > hi) {
                return false;
            }
            continue;
        }
        int64_t ta = ((lo - ok) * ((int64_t)1 << 24)) / dk;
        int64_t tb = ((hi - ok) * ((int64_t)1 << 24)) / dk;
        int64_t en = (ta < tb ? ta : tb) - 1, ex = (ta < tb ? tb : ta) + 1;
        t0 = en > t0 ? en : t0;
        t1 = ex < t1 ? ex : t1;
        if (t0 > t1) {
            return false;
        }
    }
    return true;
}

/// A segment o + d * t (mesh frame) and its closest hit so far (Q0.32).
typedef struct ray_walk {
    const ls_mesh *m;
    ls_vec3 o, d;
    int64_t best;
    uint32_t best_tri;
} ray_walk;

// Nodes the segment cannot reach before the best hit so far are skipped.
static bool ray_enters(const void *ctx, const ls_aabb *box)
{
    const ray_walk *r = ctx;
    return ray_box(box, r->o, r->d, r->best);
}

static bool ray_visit(void *ctx, uint32_t t)
{
    ray_walk *r = ctx;
    int64_t h = ray_triangle(r->m, t, r->o, r->d);
    if (h >= 0 && (h < r->best || (h == r->best && t < r->best_tri))) {
        r->best = h;
        r->best_tri = t;
    }
    return false;
}

bool ls_mesh_ray_cast_(const ls_mesh *m, const ls_xform *xm, ls_vec3 from, ls_vec3 to,
                       ls_fx *fraction, ls_vec3 *normal, uint32_t *tri)
{
    ls_vec3 o = ls_mat3_mul_tvec(xm->r, ls_vec3_sub(from, xm->p));
    ls_vec3 e = ls_mat3_mul_tvec(xm->r, ls_vec3_sub(to, xm->p));
    ray_walk r = {m, o, ls_vec3_sub(e, o), (int64_t)1 << 32, LS_MESH_NONE};
    ls_bvh_walk_(m->nodes, m->node_count, m->order, ray_enters, ray_visit, &r);
    int64_t best = r.best;
    uint32_t best_tri = r.best_tri;
    if (best_tri == LS_MESH_NONE) {
        return false;
    }
    *fraction = (ls_fx)((best + 0x8000) >> 16);
    ls_vec3 n = m->tris[best_tri].normal;
    *normal = ls_vec3_normalize(ls_mat3_mul_vec(xm->r, n), n);
    *tri = best_tri;
    return true;
}

// ------------------------------------------------------------ narrow phase

/// Feature of a triangle touched by a contact: edge 0..2, vertex 3 + k, face.
#define FEAT_FACE 6

/// A triangle in the mesh's local frame, relative to its vertex 0.
typedef struct tri_frame {
    ls_vec3 a;           ///< vertex 0, mesh-local
    ls_vec3 t[3];        ///< vertices relative to a (t[0] = 0)
    ls_vec3 u[3];        ///< unit direction of edge i (t[i] -> t[i+1]), Q16.16
    ls_fx len[3];        ///< edge lengths
    int32_t n30[3];      ///< unit face normal, Q2.30
    ls_vec3 n;           ///< unit face normal, Q16.16
    int32_t out30[3][3]; ///< outward unit normal of edge i's side plane, Q2.30
    ls_vec3 m[3];        ///< the same, Q16.16
    uint8_t active;      ///< ls_mesh_tri.active
} tri_frame;

// Triangle t's ls_mesh_edges, from its vertices relative to vertex 0 as the
// narrow phase's frame holds them: u = normalize(e) (e itself when zero),
// len = |e|, out30 = -normalize(n x e) in Q2.30 (0 when that is zero).
static void edges_of(const ls_mesh *m, uint32_t t, ls_mesh_edges *ed)
{
    const ls_mesh_tri *tr = &m->tris[t];
    ls_vec3 a = m->vertices[tr->v[0]], p[3];
    for (int k = 0; k < 3; k++) {
        p[k] = ls_vec3_sub(m->vertices[tr->v[k]], a);
    }
    for (int i = 0; i < 3; i++) {
        ls_vec3 e = ls_vec3_sub(p[(i + 1) % 3], p[i]);
        ed->u[i] = ls_vec3_normalize(e, e);
        ed->len[i] = ls_vec3_len(e);
    }
    int32_t in30[3][3];
    edge_normals30(tr->n30, p, in30);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            ed->out30[i][k] = -in30[i][k];
        }
    }
}

static void tri_frame_make(const ls_mesh *m, uint32_t t, tri_frame *f)
{
    const ls_mesh_tri *tr = &m->tris[t];
    f->a = m->vertices[tr->v[0]];
    for (int k = 0; k < 3; k++) {
        f->t[k] = ls_vec3_sub(m->vertices[tr->v[k]], f->a);
        f->n30[k] = tr->n30[k];
    }
    const ls_mesh_edges *ed = &m->edges[t];
    for (int i = 0; i < 3; i++) {
        f->u[i] = ed->u[i];
        f->len[i] = ed->len[i];
    }
    f->n = tr->normal;
    f->active = tr->active;
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            f->out30[i][k] = ed->out30[i][k];
        }
        f->m[i] = ls_vec3_make((ls_fx)(((int64_t)f->out30[i][0] + 0x2000) >> 14),
                               (ls_fx)(((int64_t)f->out30[i][1] + 0x2000) >> 14),
                               (ls_fx)(((int64_t)f->out30[i][2] + 0x2000) >> 14));
    }
}

/// Height of p (relative to the triangle's vertex 0) above the triangle's plane.
static ls_fx tri_height(const tri_frame *f, ls_vec3 p)
{
    return q46_to_fx(dot30_raw(p, f->n30));
}

/// Whether a triangle feature (edge 0..2, vertex 3 + k, FEAT_FACE) is active.
static bool feature_active(const tri_frame *f, int feat)
{
    return feat == FEAT_FACE || (f->active >> feat & 1);
}

/// A candidate contact in the triangle frame (relative to its vertex 0).
typedef struct cand {
    ls_vec3 p;        ///< contact point, midway between the surfaces
    ls_fx depth;      ///< penetration along the normal
    uint32_t feature; ///< feature id
    uint8_t tri_feat; ///< triangle feature touched (FEAT_FACE when unknown or the face)
} cand;

/// Most vertices of a clipped polygon: a hull face (64) plus 3 triangle
/// planes, or the triangle (3) clipped by a hull face's up to 64 side planes.
#define POLY_MAX 72

/// A clipping plane through o with outward unit normal n (Q2.30); distances
/// in units of 2^-46 (clip.h).
typedef struct plane30 {
    ls_vec3 o;
    int32_t n[3];
} plane30;

static int64_t plane30_distance(const void *plane, ls_vec3 p)
{
    const plane30 *pl = plane;
    return dot30_raw(ls_vec3_sub(p, pl->o), pl->n);
}

/// Where edge a->b crosses a plane, from the signed distances da, db (units
/// of 2^-46, opposite signs): both are first reduced to 30 bits together, so
/// (b - a) * da fits 64 bits for any Q16.16 points.
static ls_vec3 crossing30(const void *plane, ls_vec3 a, ls_vec3 b, int64_t da, int64_t db)
{
    (void)plane;
    int sh = bit_length(uabs64(da - db)) - 30;
    if (sh > 0) {
        da >>= sh;
        db >>= sh;
    }
    int64_t den = da - db; // non-zero: the shifts keep the signs apart
    return ls_vec3_make((ls_fx)(a.x + (((int64_t)b.x - a.x) * da) / den),
                        (ls_fx)(a.y + (((int64_t)b.y - a.y) * da) / den),
                        (ls_fx)(a.z + (((int64_t)b.z - a.z) * da) / den));
}

static const ls_clip_rule planes30 = {plane30_distance, crossing30};

// ---- contact reduction (the rule of collide_box.c) ----

static int64_t tri_area(ls_vec3 a, ls_vec3 b, ls_vec3 p, ls_vec3 n)
{
    return ls_vec3_dot_q32(ls_vec3_cross(ls_vec3_sub(b, a), ls_vec3_sub(p, a)), n);
}

/// Keep at most 4 candidates: the deepest, the farthest from it, then the
/// two that maximise the area (ties: lowest index); kept points stay in
/// candidate order.
static void reduce_to_manifold(const cand *c, int n, ls_vec3 normal, ls_manifold *m)
{
    bool keep[POLY_MAX] = {false};
    if (n <= LS_MANIFOLD_MAX) {
        for (int i = 0; i < n; i++) {
            keep[i] = true;
        }
    } else {
        int i0 = 0;
        for (int i = 1; i < n; i++) {
            if (c[i].depth > c[i0].depth) {
                i0 = i;
            }
        }
        int i1 = -1;
        uint64_t best_d = 0;
        for (int i = 0; i < n; i++) {
            uint64_t d = ls_vec3_len_sq_q32(ls_vec3_sub(c[i].p, c[i0].p));
            if (i != i0 && (i1 < 0 || d > best_d)) {
                i1 = i;
                best_d = d;
            }
        }
        int i2 = -1, orient = 1;
        int64_t best_a = -1;
        for (int i = 0; i < n; i++) {
            int64_t a = tri_area(c[i0].p, c[i1].p, c[i].p, normal);
            int64_t mag = a < 0 ? -a : a;
            if (i != i0 && i != i1 && mag > best_a) {
                i2 = i;
                best_a = mag;
                orient = a < 0 ? -1 : 1;
            }
        }
        int tri[3] = {i0, i1, i2};
        int i3 = -1;
        int64_t best_gain = 0;
        for (int i = 0; i < n; i++) {
            if (i == i0 || i == i1 || i == i2) {
                continue;
            }
            for (int e = 0; e < 3; e++) {
                int64_t a = tri_area(c[tri[e]].p, c[tri[(e + 1) % 3]].p, c[i].p, normal);
                int64_t gain = orient > 0 ? -a : a;
                if (gain > best_gain) {
                    i3 = i;
                    best_gain = gain;
                }
            }
        }
        keep[i0] = keep[i1] = keep[i2] = true;
        if (i3 >= 0) {
            keep[i3] = true;
        }
    }
    for (int i = 0; i < n; i++) {
        if (keep[i]) {
            ls_manifold_push(m, c[i].p, c[i].depth, c[i].feature);
        }
    }
}

// ---- sphere ----

/// Closest point of the triangle boundary to p: the point, its feature
/// (edge i or vertex 3 + k) and the squared distance (ties: lowest edge).
static ls_vec3 boundary_closest(const tri_frame *f, ls_vec3 p, int *feat)
{
    ls_vec3 best_q = f->t[0];
    uint64_t best_d = 0;
    for (int i = 0; i < 3; i++) {
        ls_fx s = ls_fx_clamp(ls_vec3_dot(ls_vec3_sub(p, f->t[i]), f->u[i]), 0, f->len[i]);
        ls_vec3 q = ls_vec3_mad(f->t[i], f->u[i], s);
        int ft = s == 0 ? 3 + i : s == f->len[i] ? 3 + (i + 1) % 3 : i;
        if (s == f->len[i]) {
            q = f->t[(i + 1) % 3]; // the vertex itself, not a rounded approach to it
        }
        uint64_t d = ls_vec3_len_sq_q32(ls_vec3_sub(p, q));
        if (i == 0 || d < best_d) {
            best_q = q;
            best_d = d;
            *feat = ft;
        }
    }
    return best_q;
}

/// Whether p lies inside the triangle's prism (on the edge planes counts).
static bool in_prism(const tri_frame *f, ls_vec3 p)
{
    for (int i = 0; i < 3; i++) {
        if (dot30_raw(ls_vec3_sub(p, f->t[i]), f->out30[i]) > 0) {
            return false;
        }
    }
    return true;
}

static int sphere_tri(const tri_frame *f, ls_vec3 c, ls_fx r, ls_fx margin, cand *out,
                      ls_vec3 *nout)
{
    ls_fx h = tri_height(f, c);
    if (h < ls_fx_neg(r)) {
        return 0; // entirely behind the plane
    }
    if (in_prism(f, c)) {
        ls_fx depth = ls_fx_sub(r, h);
        if (depth <= ls_fx_neg(margin)) {
            return 0;
        }
        *nout = f->n;
        ls_fx half = (ls_fx)(((int64_t)r + h) >> 1);
        cand k = {ls_vec3_mad(c, f->n, ls_fx_neg(half)), depth, 4u << 28 | FEAT_FACE, FEAT_FACE};
        out[0] = k;
        return 1;
    }
    int feat = 0;
    ls_vec3 q = boundary_closest(f, c, &feat);
    ls_vec3 d = ls_vec3_sub(c, q);
    if (!ls_vec3_shorter_than(d, ls_fx_add(r, margin))) {
        return 0;
    }
    if (!feature_active(f, feat)) {
        // A flat or concave neighbour (internal edge): the contact is the
        // face's, straight under the centre with the plane depth -- as the
        // neighbour's own face contact is. Why not the edge point: a rolling
        // sphere's surface at a point ahead of its centre moves into the face,
        // and the solver lifted it at every shared edge (a 10 m/s ball hopped
        // 0.33 m/s up).
        ls_fx depth = ls_fx_sub(r, h);
        if (depth <= ls_fx_neg(margin)) {
            return 0;
        }
        *nout = f->n;
        ls_fx half = (ls_fx)(((int64_t)r + h) >> 1);
        cand k = {ls_vec3_mad(c, f->n, ls_fx_neg(half)), depth, 4u << 28 | (uint32_t)feat,
                  (uint8_t)feat};
        out[0] = k;
        return 1;
    }
    ls_vec3 nrm = ls_vec3_normalize(d, f->n);
    if (ls_vec3_dot_q32(nrm, f->n) < 0) {
        return 0; // one-sided: never push towards the back
    }
    *nout = nrm;
    ls_vec3 ps = ls_vec3_mad(c, nrm, ls_fx_neg(r));
    cand k = {ls_vec3_mid(q, ps), ls_fx_sub(r, ls_vec3_len(d)), 4u << 28 | (uint32_t)feat,
              (uint8_t)feat};
    out[0] = k;
    return 1;
}

// ---- capsule ----

/// Segment parameters in Q8.24 (as collide_capsule.c).
#define SEG_ONE ((int64_t)1 << 24)

static ls_vec3 lerp24(ls_vec3 p0, ls_vec3 p1, int64_t t)
{
    return ls_vec3_make((ls_fx)(p0.x + ((((int64_t)p1.x - p0.x) * t) >> 24)),
                        (ls_fx)(p0.y + ((((int64_t)p1.y - p0.y) * t) >> 24)),
                        (ls_fx)(p0.z + ((((int64_t)p1.z - p0.z) * t) >> 24)));
}

/// num / den in Q8.24 for 0 <= num <= den, den > 0 (both reduced to 30 bits first).
static int64_t frac24(int64_t num, int64_t den)
{
    int sh = bit_length((uint64_t)den) - 30;
    if (sh > 0) {
        num >>= sh;
        den >>= sh;
    }
    return den > 0 ? (num * SEG_ONE) / den : 0;
}

static int capsule_tri(const tri_frame *f, const ls_segment *seg, ls_fx r, ls_fx margin, cand *out,
                       ls_vec3 *nout)
{
    ls_vec3 p0 = ls_segment_at(seg, ls_fx_neg(seg->h)), p1 = ls_segment_at(seg, seg->h);
    ls_fx h0 = tri_height(f, p0), h1 = tri_height(f, p1);
    if (ls_fx_max(h0, h1) < ls_fx_neg(r)) {
        return 0; // entirely behind the plane
    }
    // The part of the core segment above the triangle (inside its prism).
    int64_t lo = 0, hi = SEG_ONE;
    bool face = true;
    for (int i = 0; i < 3 && face; i++) {
        int64_t s0 = -dot30_raw(ls_vec3_sub(p0, f->t[i]), f->out30[i]); // >= 0 inside
        int64_t s1 = -dot30_raw(ls_vec3_sub(p1, f->t[i]), f->out30[i]);
        if (s0 < 0 && s1 < 0) {
            face = false;
        } else if (s0 < 0) {
            int64_t t = frac24(-s0, s1 - s0);
            lo = t > lo ? t : lo;
        } else if (s1 < 0) {
            int64_t t = frac24(s0, s0 - s1);
            hi = t < hi ? t : hi;
        }
    }
    face = face && lo <= hi;
    ls_fx face_h = LS_FX_MAX;
    if (face) {
        face_h = ls_fx_min(tri_height(f, lerp24(p0, p1, lo)), tri_height(f, lerp24(p0, p1, hi)));
    }
    // Closest points to each edge (ties: lowest edge).
    int best = -1;
    uint64_t best_d = 0;
    ls_vec3 bq = f->t[0], bp = p0;
    int bfeat = 0;
    for (int i = 0; i < 3; i++) {
        ls_fx half = f->len[i] >> 1;
        ls_segment te = {ls_vec3_mad(f->t[i], f->u[i], half), f->u[i], half};
        ls_fx s, t;
        ls_segment_closest_(&te, seg, &s, &t);
        ls_vec3 q = ls_segment_at(&te, s), p = ls_segment_at(seg, t);
        uint64_t d = ls_vec3_len_sq_q32(ls_vec3_sub(p, q));
        if (best < 0 || d < best_d) {
            best = i;
            best_d = d;
            bq = q;
            bp = p;
            bfeat = s <= ls_fx_neg(half) ? 3 + i : s >= half ? 3 + (i + 1) % 3 : i;
        }
    }
    if (face && (face_h <= 0 || (uint64_t)face_h * (uint64_t)face_h <= best_d)) {
        *nout = f->n;
        int count = 0;
        for (int k = 0; k < 2 && (k == 0 || hi > lo); k++) {
            ls_vec3 p = lerp24(p0, p1, k == 0 ? lo : hi);
            ls_fx h = tri_height(f, p);
            ls_fx depth = ls_fx_sub(r, h);
            if (depth > ls_fx_neg(margin)) {
                ls_fx half = (ls_fx)(((int64_t)r + h) >> 1);
                cand c = {ls_vec3_mad(p, f->n, ls_fx_neg(half)), depth, 5u << 28 | (uint32_t)k,
                          FEAT_FACE};
                out[count++] = c;
            }
        }
        return count;
    }
    ls_vec3 d = ls_vec3_sub(bp, bq);
    if (!ls_vec3_shorter_than(d, ls_fx_add(r, margin))) {
        return 0;
    }
    if (!feature_active(f, bfeat)) {
        // Internal edge: the face contact under the closest core point (see sphere_tri).
        ls_fx h = tri_height(f, bp);
        ls_fx depth = ls_fx_sub(r, h);
        if (depth <= ls_fx_neg(margin)) {
            return 0;
        }
        *nout = f->n;
        ls_fx half = (ls_fx)(((int64_t)r + h) >> 1);
        cand c = {ls_vec3_mad(bp, f->n, ls_fx_neg(half)), depth,
                  5u << 28 | 2u | (uint32_t)bfeat << 4, (uint8_t)bfeat};
        out[0] = c;
        return 1;
    }
    ls_vec3 nrm = ls_vec3_normalize(d, f->n);
    if (ls_vec3_dot_q32(nrm, f->n) < 0) {
        return 0;
    }
    *nout = nrm;
    cand c = {ls_vec3_mid(bq, ls_vec3_mad(bp, nrm, ls_fx_neg(r))), ls_fx_sub(r, ls_vec3_len(d)),
              5u << 28 | 2u | (uint32_t)bfeat << 4, (uint8_t)bfeat};
    out[0] = c;
    return 1;
}

// ---- boxes and hulls: a convex polytope against the triangle (SAT) ----

#define PT_MAX_V LS_HULL_MAX_VERTICES
#define PT_MAX_F LS_HULL_MAX_FACES
#define PT_MAX_E LS_HULL_MAX_EDGES

/// A convex polytope in the triangle frame.
typedef struct polytope {
    int nv, nf, ne;
    ls_vec3 v[PT_MAX_V];       ///< vertices
    ls_vec3 fn[PT_MAX_F];      ///< outward unit face normals
    uint16_t ffirst[PT_MAX_F]; ///< face f: loop[ffirst .. ffirst + fcount)
    uint16_t fcount[PT_MAX_F];
    uint8_t loop[2 * PT_MAX_E]; ///< face vertex loops, counter-clockwise from outside
    uint8_t ev[PT_MAX_E][2];    ///< edge end vertices
    uint8_t ef[PT_MAX_E][2];    ///< the two faces that meet at each edge
    ls_vec3 edir[PT_MAX_E];     ///< unit direction of each edge
} polytope;

/// A box (centre c, rotation r into the triangle frame, half extents h).
/// Vertex id: bit k set = +h_k; face 2k (+u_k) and 2k + 1 (-u_k).
static void polytope_box(polytope *s, ls_vec3 c, const ls_mat3 *r, ls_vec3 h)
{
    s->nv = 8;
    s->nf = 6;
    s->ne = 12;
    for (int id = 0; id < 8; id++) {
        ls_vec3 l = ls_vec3_make((id & 1) ? h.x : ls_fx_neg(h.x), (id & 2) ? h.y : ls_fx_neg(h.y),
                                 (id & 4) ? h.z : ls_fx_neg(h.z));
        s->v[id] = ls_vec3_add(c, ls_mat3_mul_vec(*r, l));
    }
    ls_vec3 axis[3];
    for (int k = 0; k < 3; k++) {
        axis[k] = ls_mat3_col(*r, k);
        s->fn[2 * k] = axis[k];
        s->fn[2 * k + 1] = ls_vec3_neg(axis[k]);
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        // (k1, k2) corners (+,+) (-,+) (-,-) (+,-) turn counter-clockwise about +u_k.
        static const int cs[4][2] = {{1, 1}, {0, 1}, {0, 0}, {1, 0}};
        for (int side = 0; side < 2; side++) {
            int f = 2 * k + side;
            s->ffirst[f] = (uint16_t)(4 * f);
            s->fcount[f] = 4;
            for (int j = 0; j < 4; j++) {
                int cj = side == 0 ? j : 3 - j; // the -u_k face runs the other way
                int id = (side == 0 ? 1 << k : 0) | cs[cj][0] << k1 | cs[cj][1] << k2;
                s->loop[4 * f + j] = (uint8_t)id;
            }
        }
    }
    int e = 0;
    for (int k = 0; k < 3; k++) {
        for (int id = 0; id < 8; id++) {
            if (!(id & (1 << k))) {
                int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
                s->ev[e][0] = (uint8_t)id;
                s->ev[e][1] = (uint8_t)(id | 1 << k);
                s->ef[e][0] = (uint8_t)(2 * k1 + !(id >> k1 & 1));
                s->ef[e][1] = (uint8_t)(2 * k2 + !(id >> k2 & 1));
                s->edir[e] = axis[k];
                e++;
            }
        }
    }
}

/// A hull whose local frame maps to the triangle frame by x -> o + r x.
static void polytope_hull(polytope *s, const ls_hull *hl, ls_vec3 o, const ls_mat3 *r)
{
    s->nv = (int)(hl->vertex_count < PT_MAX_V ? hl->vertex_count : PT_MAX_V);
    s->nf = (int)(hl->face_count < PT_MAX_F ? hl->face_count : PT_MAX_F);
    s->ne = (int)(hl->edge_count < PT_MAX_E ? hl->edge_count : PT_MAX_E);
    for (int i = 0; i < s->nv; i++) {
        s->v[i] = ls_vec3_add(o, ls_mat3_mul_vec(*r, hl->vertices[i]));
    }
    memcpy(s->loop, hl->face_vertices, sizeof s->loop);
    for (int f = 0; f < s->nf; f++) {
        s->fn[f] = ls_mat3_mul_vec(*r, hl->faces[f].normal);
        s->ffirst[f] = hl->faces[f].first;
        s->fcount[f] = hl->faces[f].count;
        // Hull data is validated where it is built; still, never index past
        // the arrays: a face whose loop leaves them is treated as empty.
        bool ok = (size_t)s->ffirst[f] + s->fcount[f] <= sizeof s->loop;
        for (int j = 0; ok && j < s->fcount[f]; j++) {
            ok = s->loop[s->ffirst[f] + j] < s->nv;
        }
        if (!ok) {
            s->ffirst[f] = 0;
            s->fcount[f] = 0;
        }
    }
    for (int e = 0; e < s->ne; e++) {
        int a = hl->edges[e].v[0] < s->nv ? hl->edges[e].v[0] : 0;
        int b = hl->edges[e].v[1] < s->nv ? hl->edges[e].v[1] : 0;
        s->ev[e][0] = (uint8_t)a;
        s->ev[e][1] = (uint8_t)b;
        for (int k = 0; k < 2; k++) {
            s->ef[e][k] = (uint8_t)(hl->edges[e].f[k] < s->nf ? hl->edges[e].f[k] : 0);
        }
        ls_vec3 d = ls_vec3_sub(s->v[b], s->v[a]);
        s->edir[e] = ls_vec3_normalize(d, ls_vec3_make(LS_FX_ONE, 0, 0));
    }
}

/// Projection interval of the polytope on l.
static void pt_interval(const polytope *s, ls_vec3 l, ls_fx *lo, ls_fx *hi)
{
    *lo = *hi = ls_vec3_dot(s->v[0], l);
    for (int i = 1; i < s->nv; i++) {
        ls_fx d = ls_vec3_dot(s->v[i], l);
        *lo = ls_fx_min(*lo, d);
        *hi = ls_fx_max(*hi, d);
    }
}

/// Projection interval of the triangle on l (its vertex 0 is the origin).
static void tri_interval(const tri_frame *f, ls_vec3 l, ls_fx *lo, ls_fx *hi)
{
    ls_fx d1 = ls_vec3_dot(f->t[1], l), d2 = ls_vec3_dot(f->t[2], l);
    *lo = ls_fx_min(0, ls_fx_min(d1, d2));
    *hi = ls_fx_max(0, ls_fx_max(d1, d2));
}

/// Which family the best axis belongs to.
typedef enum axis_kind { AX_TRI, AX_FACE, AX_EDGE } axis_kind;

typedef struct sat_axis {
    ls_fx sep;      ///< separation (negative: overlap)
    axis_kind kind; ///< triangle face, polytope face or edge pair
    int i;          ///< polytope face, or triangle edge
    int j;          ///< edge of the polytope
    ls_vec3 n;      ///< unit axis from the triangle towards the polytope
} sat_axis;

/// Absolute tolerance (0.5 mm) by which a polytope face must beat the triangle face.
#define FACE_TOL_ABS ((ls_fx)33)
/// Absolute tolerance (1 mm) by which an edge axis must beat the best face.
#define EDGE_TOL_ABS ((ls_fx)66)

static bool clearly_better(ls_fx challenger, ls_fx sep, ls_fx abs_tol, int shift)
{
    return challenger > ls_fx_add(sep, ls_fx_add(abs_tol, ls_fx_abs(sep) >> shift));
}

/// The separating axis test; false when an axis separates by more than the margin.
static bool sat_polytope(const tri_frame *f, const polytope *s, ls_fx margin, sat_axis *best)
{
    // Triangle face (one-sided: only its front).
    ls_fx hmin = LS_FX_MAX, hmax = LS_FX_MIN;
    for (int i = 0; i < s->nv; i++) {
        ls_fx h = tri_height(f, s->v[i]);
        hmin = ls_fx_min(hmin, h);
        hmax = ls_fx_max(hmax, h);
    }
    if (hmax < 0 || hmin > margin) {
        return false; // entirely behind, or separated in front
    }
    sat_axis tri = {hmin, AX_TRI, 0, 0, f->n};
    // Polytope faces: the triangle beyond face fi's plane (the face's own
    // vertices are the polytope's support along its normal).
    sat_axis face = {LS_FX_MIN, AX_FACE, -1, 0, {0, 0, 0}};
    for (int fi = 0; fi < s->nf; fi++) {
        ls_fx tlo, thi;
        tri_interval(f, s->fn[fi], &tlo, &thi);
        ls_fx shi = LS_FX_MIN;
        for (int j = 0; j < s->fcount[fi]; j++) {
            shi = ls_fx_max(shi, ls_vec3_dot(s->v[s->loop[s->ffirst[fi] + j]], s->fn[fi]));
        }
        ls_fx sep = ls_fx_sub(tlo, shi);
        if (sep > margin) {
            return false;
        }
        if (sep > face.sep) {
            face.sep = sep;
            face.i = fi;
            face.n = ls_vec3_neg(s->fn[fi]);
        }
    }
    // Edge pairs that make a face of the Minkowski difference (Gauss map
    // test): the arc of polytope edge e, from -a to -b (a, b: its faces'
    // normals), must cross the half circle of triangle edge i (normals
    // perpendicular to it, on its outer side).
    sat_axis edge = {LS_FX_MIN, AX_EDGE, -1, -1, {0, 0, 0}};
    for (int i = 0; i < 3; i++) {
        for (int e = 0; e < s->ne; e++) {
            ls_vec3 a = s->fn[s->ef[e][0]], b = s->fn[s->ef[e][1]];
            ls_fx da = ls_vec3_dot(a, f->u[i]), db = ls_vec3_dot(b, f->u[i]);
            if ((da > 0 && db > 0) || (da < 0 && db < 0) || (da == 0 && db == 0)) {
                continue;
            }
            // p = |db| a + |da| b lies on the arc a..b and is perpendicular to u_i.
            ls_vec3 p =
                ls_vec3_add(ls_vec3_scale(a, ls_fx_abs(db)), ls_vec3_scale(b, ls_fx_abs(da)));
            if (ls_vec3_dot_q32(p, f->m[i]) > 0) {
                continue; // -p points into the triangle: not a face of the difference
            }
            ls_vec3 l = ls_vec3_cross(f->u[i], s->edir[e]);
            if (ls_vec3_len_sq_q32(l) < (uint64_t)LS_COLLIDE_PARALLEL_Q32) {
                continue;
            }
            l = ls_vec3_normalize(l, l);
            if (ls_vec3_dot_q32(l, p) > 0) {
                l = ls_vec3_neg(l); // along -p: from the triangle towards the polytope
            }
            ls_fx tlo, thi, slo, shi;
            tri_interval(f, l, &tlo, &thi);
            pt_interval(s, l, &slo, &shi);
            ls_fx sep = ls_fx_sub(slo, thi);
            if (sep > margin) {
                return false;
            }
            if (sep > edge.sep) {
                edge.sep = sep;
                edge.i = i;
                edge.j = e;
                edge.n = l;
            }
        }
    }
    *best = tri;
    if (face.i >= 0 && clearly_better(face.sep, tri.sep, FACE_TOL_ABS, 7)) {
        *best = face;
    }
    if (edge.i >= 0 && clearly_better(edge.sep, best->sep, EDGE_TOL_ABS, 6)) {
        *best = edge;
    }
    return true;
}

/// The triangle as the reference face: the polytope face most anti-parallel
/// to the triangle normal, clipped by the triangle's three side planes.
static int tri_face_contact(const tri_frame *f, const polytope *s, ls_fx margin, cand *out)
{
    int inc = 0;
    ls_fx best = LS_FX_MAX;
    for (int fi = 0; fi < s->nf; fi++) {
        ls_fx d = ls_vec3_dot(s->fn[fi], f->n);
        if (d < best) {
            best = d;
            inc = fi;
        }
    }
    ls_clip_poly a, scratch;
    ls_clip_start(&a, POLY_MAX);
    for (int j = 0; j < s->fcount[inc]; j++) {
        ls_clip_push(&a, s->v[s->loop[s->ffirst[inc] + j]], (uint8_t)j);
    }
    for (int i = 0; i < 3; i++) {
        plane30 pl = {f->t[i], {f->out30[i][0], f->out30[i][1], f->out30[i][2]}};
        ls_clip(&a, &scratch, &planes30, &pl, (uint8_t)(64 + i));
    }
    int count = 0;
    for (int i = 0; i < a.n; i++) {
        ls_fx h = tri_height(f, a.p[i]);
        ls_fx depth = ls_fx_neg(h);
        if (depth > ls_fx_neg(margin)) {
            uint32_t lp = ls_clip_label_in(&a, i), li = a.lab[i];
            cand c = {ls_vec3_mad(a.p[i], f->n, ls_fx_neg(h >> 1)), depth,
                      1u << 28 | (uint32_t)inc << 16 | lp << 8 | li, FEAT_FACE};
            out[count++] = c;
        }
    }
    return count;
}

/// Triangle feature of a point of the clipped triangle from the labels of
/// its two edges (0..2: triangle edges; others: clipping planes).
static uint8_t label_feature(uint32_t lp, uint32_t li)
{
    if (lp < 3 && li < 3) {
        return (uint8_t)(3 + li); // between edges lp and li: vertex li
    }
    if (lp < 3) {
        return (uint8_t)lp;
    }
    if (li < 3) {
        return (uint8_t)li;
    }
    return FEAT_FACE;
}

/// Polytope face fi as the reference face: the triangle clipped by its side planes.
static int poly_face_contact(const tri_frame *f, const polytope *s, int fi, ls_fx margin, cand *out)
{
    ls_clip_poly a, scratch;
    ls_clip_start(&a, POLY_MAX);
    for (int k = 0; k < 3; k++) {
        ls_clip_push(&a, f->t[k], (uint8_t)k);
    }
    ls_vec3 fn = s->fn[fi];
    int cnt = s->fcount[fi];
    if (cnt == 0) {
        return 0;
    }
    for (int j = 0; j < cnt && a.n > 0; j++) {
        ls_vec3 p = s->v[s->loop[s->ffirst[fi] + j]];
        ls_vec3 q = s->v[s->loop[s->ffirst[fi] + (j + 1) % cnt]];
        ls_vec3 e = ls_vec3_sub(q, p);
        // Outward side normal e x fn, exact in Q32.32, then unit Q2.30.
        plane30 pl = {p, {0, 0, 0}};
        if (!norm_wide(ls_fx_cross_q32(e.y, fn.z, e.z, fn.y), ls_fx_cross_q32(e.z, fn.x, e.x, fn.z),
                       ls_fx_cross_q32(e.x, fn.y, e.y, fn.x), 30, pl.n)) {
            continue;
        }
        ls_clip(&a, &scratch, &planes30, &pl, (uint8_t)(8 + j));
    }
    ls_vec3 ref = s->v[s->loop[s->ffirst[fi]]];
    int count = 0;
    for (int i = 0; i < a.n; i++) {
        ls_fx depth = ls_vec3_dot(ls_vec3_sub(ref, a.p[i]), fn); // below the reference face
        if (depth > ls_fx_neg(margin)) {
            uint32_t lp = ls_clip_label_in(&a, i), li = a.lab[i];
            cand c = {ls_vec3_mad(a.p[i], fn, depth >> 1), depth,
                      2u << 28 | (uint32_t)fi << 16 | lp << 8 | li, label_feature(lp, li)};
            out[count++] = c;
        }
    }
    return count;
}

/// Edge-edge contact: triangle edge i against polytope edge j. One point.
static int edge_contact(const tri_frame *f, const polytope *s, const sat_axis *ax, ls_fx margin,
                        cand *out)
{
    int be = ax->j;
    int i = ax->i;
    ls_fx th = f->len[i] >> 1;
    ls_segment te = {ls_vec3_mad(f->t[i], f->u[i], th), f->u[i], th};
    ls_vec3 a = s->v[s->ev[be][0]], b = s->v[s->ev[be][1]];
    ls_segment se = {ls_vec3_mid(a, b), s->edir[be], ls_vec3_len(ls_vec3_sub(b, a)) >> 1};
    ls_fx ps, pt;
    ls_segment_closest_(&te, &se, &ps, &pt);
    ls_vec3 p = ls_segment_at(&te, ps), q = ls_segment_at(&se, pt);
    ls_fx depth = ls_vec3_dot(ls_vec3_sub(p, q), ax->n);
    if (depth <= ls_fx_neg(margin)) {
        return 0;
    }
    int feat = ps <= ls_fx_neg(th) ? 3 + i : ps >= th ? 3 + (i + 1) % 3 : i;
    cand c = {ls_vec3_mid(p, q), depth, 3u << 28 | (uint32_t)i << 16 | (uint32_t)be, (uint8_t)feat};
    out[0] = c;
    return 1;
}

static int polytope_tri(const tri_frame *f, const polytope *s, ls_fx margin, cand *out,
                        ls_vec3 *nout)
{
    sat_axis ax;
    if (!sat_polytope(f, s, margin, &ax)) {
        return 0;
    }
    int count;
    if (ax.kind == AX_TRI) {
        count = tri_face_contact(f, s, margin, out);
    } else {
        count = ax.kind == AX_FACE ? poly_face_contact(f, s, ax.i, margin, out)
                                   : edge_contact(f, s, &ax, margin, out);
        // Internal edges: a normal made by an inactive edge or vertex of the
        // triangle (judged at the deepest point) becomes the face normal.
        int deepest = 0;
        for (int i = 1; i < count; i++) {
            if (out[i].depth > out[deepest].depth) {
                deepest = i;
            }
        }
        if (count > 0 && !feature_active(f, out[deepest].tri_feat)) {
            ax.kind = AX_TRI;
            ax.n = f->n;
            count = tri_face_contact(f, s, margin, out);
        }
    }
    if (count == 0 || ls_vec3_dot_q32(ax.n, f->n) < 0) {
        return 0; // one-sided: never push towards the back
    }
    *nout = ax.n;
    return count;
}

// ---- entry point ----

/// A world point in the triangle frame (mesh-local, relative to vertex 0).
static ls_vec3 to_tri(const ls_xform *xm, const tri_frame *f, ls_vec3 w)
{
    return ls_vec3_sub(ls_mat3_mul_tvec(xm->r, ls_vec3_sub(w, xm->p)), f->a);
}

int ls_collide_mesh_triangle_(const ls_mesh *mesh, uint32_t tri, const ls_xform *xm,
                              const ls_geom *g, const ls_xform *xg, ls_fx margin, ls_manifold *m)
{
    memset(m, 0, sizeof *m);
    if (tri >= mesh->triangle_count) {
        return 0;
    }
    tri_frame f;
    tri_frame_make(mesh, tri, &f);
    cand c[POLY_MAX];
    ls_vec3 n = f.n;
    int count = 0;
    switch (g->kind) {
    case LS_SHAPE_SPHERE:
        count = sphere_tri(&f, to_tri(xm, &f, ls_geom_center(g, xg)), g->radius, margin, c, &n);
        break;
    case LS_SHAPE_CAPSULE: {
        ls_segment sw = ls_capsule_segment(g, xg);
        ls_segment sl = {to_tri(xm, &f, sw.c), ls_mat3_mul_tvec(xm->r, sw.u), sw.h};
        count = capsule_tri(&f, &sl, g->radius, margin, c, &n);
        break;
    }
    case LS_SHAPE_BOX:
    case LS_SHAPE_HULL: {
        polytope s;
        ls_mat3 r = ls_mat3_mul(ls_mat3_transpose(xm->r), xg->r);
        if (g->kind == LS_SHAPE_BOX) {
            polytope_box(&s, to_tri(xm, &f, ls_geom_center(g, xg)), &r, g->half_extents);
        } else if (g->hull) {
            polytope_hull(&s, g->hull, to_tri(xm, &f, xg->p), &r);
        } else {
            break;
        }
        count = polytope_tri(&f, &s, margin, c, &n);
        break;
    }
    default:
        break;
    }
    if (count == 0) {
        return 0;
    }
    reduce_to_manifold(c, count, n, m);
    ls_vec3 wn = ls_mat3_mul_vec(xm->r, n);
    m->normal = ls_vec3_normalize(wn, wn);
    for (int i = 0; i < m->count; i++) {
        ls_vec3 lp = ls_vec3_add(f.a, m->points[i].point);
        m->points[i].point = ls_vec3_add(xm->p, ls_mat3_mul_vec(xm->r, lp));
    }
    return m->count;
}
