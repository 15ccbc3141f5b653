// SPDX-License-Identifier: MIT
// Convex hulls: construction from a point cloud (incremental hull with exact
// orientation tests, coplanar triangles merged into polygon faces) or from
// given faces (validated), one canonical layout for both, mass properties
// in exact wide integers, AABBs and ray casts. Canonical order and ranges:
// SPEC.md §20.
#include "hull.h"

#include "../../../core/src/error_field.h"
#include "gjk.h"
#include "ls/fx_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Most input points of ls_hull_create.
#define MAX_INPUT 256
/// Largest coordinate magnitude, raw: 64 m.
#define COORD_MAX ((int64_t)64 * 65536)
/// Tolerance (raw, 1/4096 m) of ls_hull_create_from_faces: face planarity,
/// and how far a vertex may lie above another face's plane.
#define FACE_TOL 16
/// Incremental-hull triangle store: live triangles <= 2n - 4 = 508, plus
/// the triangles of one insertion.
#define MAX_TRIS 1024

// ------------------------------------------------------- 256-bit division

/// Unsigned 256-bit integer, eight 32-bit limbs, least significant first.
typedef struct u256 {
    uint32_t w[8];
} u256;

static u256 u256_from(ls_i128 v) // v >= 0
{
    u256 r;
    memset(&r, 0, sizeof r);
    r.w[0] = (uint32_t)v.lo;
    r.w[1] = (uint32_t)(v.lo >> 32);
    r.w[2] = (uint32_t)v.hi;
    r.w[3] = (uint32_t)(v.hi >> 32);
    return r;
}

static u256 u256_mul_u64(u256 a, uint64_t b)
{
    u256 r;
    memset(&r, 0, sizeof r);
    uint32_t bl[2] = {(uint32_t)b, (uint32_t)(b >> 32)};
    for (int j = 0; j < 2; j++) {
        uint64_t carry = 0;
        for (int i = 0; i + j < 8; i++) {
            uint64_t t = (uint64_t)a.w[i] * bl[j] + r.w[i + j] + carry;
            r.w[i + j] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    return r;
}

static u256 u256_shl(u256 a, int s)
{
    u256 r;
    memset(&r, 0, sizeof r);
    int limbs = s / 32, bits = s % 32;
    for (int i = 7; i >= limbs; i--) {
        uint64_t v = (uint64_t)a.w[i - limbs] << bits;
        if (bits && i - limbs - 1 >= 0) {
            v |= a.w[i - limbs - 1] >> (32 - bits);
        }
        r.w[i] = (uint32_t)v;
    }
    return r;
}

static int u256_cmp(const u256 *a, const u256 *b)
{
    for (int i = 7; i >= 0; i--) {
        if (a->w[i] != b->w[i]) {
            return a->w[i] < b->w[i] ? -1 : 1;
        }
    }
    return 0;
}

static void u256_sub_in(u256 *a, const u256 *b)
{
    uint64_t borrow = 0;
    for (int i = 0; i < 8; i++) {
        uint64_t t = (uint64_t)a->w[i] - b->w[i] - borrow;
        a->w[i] = (uint32_t)t;
        borrow = (t >> 63) & 1;
    }
}

/// round(|num| * mult / den) with the sign of num, saturated at +-2^62;
/// den > 0. Rounds half away from zero.
static int64_t muldiv(ls_i128 num, uint64_t mult, ls_i128 den)
{
    bool neg = ls_i128_sign(num) < 0;
    u256 n = u256_mul_u64(u256_from(neg ? ls_i128_neg(num) : num), mult);
    u256 d = u256_from(den);
    u256 top = u256_shl(d, 62);
    uint64_t q;
    if (u256_cmp(&n, &top) >= 0) {
        q = (uint64_t)1 << 62;
    } else {
        q = 0;
        for (int k = 61; k >= 0; k--) {
            u256 dk = u256_shl(d, k);
            if (u256_cmp(&dk, &n) <= 0) {
                u256_sub_in(&n, &dk);
                q |= (uint64_t)1 << k;
            }
        }
        u256 twice = u256_shl(n, 1);
        q += u256_cmp(&twice, &d) >= 0;
    }
    return neg ? -(int64_t)q : (int64_t)q;
}

/// The exact product a * b of a 128-bit and a 64-bit integer (the caller
/// keeps it below 2^127).
static ls_i128 mul_wide(ls_i128 a, int64_t b)
{
    bool neg = (ls_i128_sign(a) < 0) != (b < 0);
    ls_i128 m = ls_i128_sign(a) < 0 ? ls_i128_neg(a) : a;
    uint64_t ub = b < 0 ? 0u - (uint64_t)b : (uint64_t)b;
    ls_i128 lo = ls_u128_mul_u64(m.lo, ub);
    lo.hi += m.hi * ub;
    return neg ? ls_i128_neg(lo) : lo;
}

// ------------------------------------------------------- canonical layout

/// Lexicographic order of raw coordinates: x, then y, then z.
static int vec_cmp(ls_vec3 a, ls_vec3 b)
{
    if (a.x != b.x) {
        return a.x < b.x ? -1 : 1;
    }
    if (a.y != b.y) {
        return a.y < b.y ? -1 : 1;
    }
    return a.z < b.z ? -1 : a.z > b.z;
}

/// Exact area vector (twice the area times the unit normal) of the loop
/// v[idx[0..n)): sum of the fan's cross products, < 2^53 per component.
static ls_i3 loop_normal(const ls_vec3 *v, const uint8_t *idx, uint32_t n)
{
    ls_i3 s = {0, 0, 0};
    ls_i3 o = ls_i3_of(v[idx[0]]);
    for (uint32_t i = 1; i + 1 < n; i++) {
        ls_i3 c =
            ls_i3_cross(ls_i3_sub(ls_i3_of(v[idx[i]]), o), ls_i3_sub(ls_i3_of(v[idx[i + 1]]), o));
        s.x += c.x;
        s.y += c.y;
        s.z += c.z;
    }
    return s;
}

/// Sum of the signed volumes (times 6) of the fan tetrahedra from ref, and
/// the first moments; or with second != NULL, the second moments
/// sum det * (a_j a_k + b_j b_k + c_j c_k + s_j s_k) (xx, yy, zz, xy, xz, yz).
static ls_i128 fan_sums(const ls_hull *h, ls_vec3 ref, ls_i128 first[3], ls_i128 second[6])
{
    ls_i128 vol = ls_i128_from_i64(0);
    ls_i128 zero = vol;
    for (int k = 0; k < 3; k++) {
        first[k] = zero;
    }
    for (int k = 0; second && k < 6; k++) {
        second[k] = zero;
    }
    ls_i3 r = ls_i3_of(ref);
    for (uint32_t f = 0; f < h->face_count; f++) {
        const ls_hull_face *fc = &h->faces[f];
        const uint8_t *idx = &h->face_vertices[fc->first];
        ls_i3 a = ls_i3_sub(ls_i3_of(h->vertices[idx[0]]), r);
        for (uint32_t i = 1; i + 1 < fc->count; i++) {
            ls_i3 b = ls_i3_sub(ls_i3_of(h->vertices[idx[i]]), r);
            ls_i3 c = ls_i3_sub(ls_i3_of(h->vertices[idx[i + 1]]), r);
            ls_i128 det = ls_i3_dot_wide(a, ls_i3_cross(b, c)); // |.| < 2^72
            vol = ls_i128_add(vol, det);
            int64_t s[3] = {a.x + b.x + c.x, a.y + b.y + c.y, a.z + b.z + c.z};
            for (int k = 0; k < 3; k++) {
                first[k] = ls_i128_add(first[k], mul_wide(det, s[k]));
            }
            if (second) {
                int64_t pa[3] = {a.x, a.y, a.z}, pb[3] = {b.x, b.y, b.z}, pc[3] = {c.x, c.y, c.z};
                static const int jj[6] = {0, 1, 2, 0, 0, 1}, kk[6] = {0, 1, 2, 1, 2, 2};
                for (int m = 0; m < 6; m++) {
                    int j = jj[m], k = kk[m];
                    int64_t q = pa[j] * pa[k] + pb[j] * pb[k] + pc[j] * pc[k] + s[j] * s[k];
                    second[m] = ls_i128_add(second[m], mul_wide(det, q)); // sum < 2^122
                }
            }
        }
    }
    return vol;
}

/// Volume centroid, each coordinate rounded to nearest.
static ls_vec3 hull_centroid(const ls_hull *h)
{
    int64_t m[3] = {0, 0, 0};
    for (uint32_t i = 0; i < h->vertex_count; i++) {
        m[0] += h->vertices[i].x;
        m[1] += h->vertices[i].y;
        m[2] += h->vertices[i].z;
    }
    int64_t n = h->vertex_count ? (int64_t)h->vertex_count : 1;
    // Floored mean: inside the hull, so every fan tetrahedron is positive.
    ls_vec3 ref = ls_vec3_make((ls_fx)(m[0] >= 0 ? m[0] / n : -((-m[0] + n - 1) / n)),
                               (ls_fx)(m[1] >= 0 ? m[1] / n : -((-m[1] + n - 1) / n)),
                               (ls_fx)(m[2] >= 0 ? m[2] / n : -((-m[2] + n - 1) / n)));
    ls_i128 first[3];
    ls_i128 vol = fan_sums(h, ref, first, NULL);
    if (ls_i128_sign(vol) <= 0) {
        return ref;
    }
    ls_i128 den = ls_i128_add(ls_i128_add(vol, vol), ls_i128_add(vol, vol)); // 4 * vol6
    return ls_vec3_make((ls_fx)(ref.x + muldiv(first[0], 1, den)),
                        (ls_fx)(ref.y + muldiv(first[1], 1, den)),
                        (ls_fx)(ref.z + muldiv(first[2], 1, den)));
}

/// Edges from the face loops: one per vertex pair (v[0] < v[1]), sorted by
/// (v[0], v[1]); f[0] is the face whose loop runs v[0] -> v[1].
static void build_edges(ls_hull *h)
{
    h->edge_count = 0;
    for (uint32_t f = 0; f < h->face_count; f++) {
        const ls_hull_face *fc = &h->faces[f];
        for (uint32_t i = 0; i < fc->count; i++) {
            uint8_t a = h->face_vertices[fc->first + i];
            uint8_t b = h->face_vertices[fc->first + (i + 1) % fc->count];
            if (a < b && h->edge_count < LS_HULL_MAX_EDGES) {
                // Insertion in sorted position.
                uint32_t j = h->edge_count++;
                while (j > 0 && (h->edges[j - 1].v[0] > a ||
                                 (h->edges[j - 1].v[0] == a && h->edges[j - 1].v[1] > b))) {
                    h->edges[j] = h->edges[j - 1];
                    j--;
                }
                ls_hull_edge e = {{a, b}, {(uint8_t)f, (uint8_t)f}};
                h->edges[j] = e;
            }
        }
    }
    for (uint32_t f = 0; f < h->face_count; f++) {
        const ls_hull_face *fc = &h->faces[f];
        for (uint32_t i = 0; i < fc->count; i++) {
            uint8_t a = h->face_vertices[fc->first + i];
            uint8_t b = h->face_vertices[fc->first + (i + 1) % fc->count];
            for (uint32_t j = 0; a > b && j < h->edge_count; j++) {
                if (h->edges[j].v[0] == b && h->edges[j].v[1] == a) {
                    h->edges[j].f[1] = (uint8_t)f;
                }
            }
        }
    }
}

/// Faces of a hull before canonical ordering: loops of vertex indices.
/// Sized for the point-cloud builder before the vertex limit is checked (a
/// triangulated hull of 256 points: 508 faces, 1524 loop entries).
#define LOOPS_MAX_FACES (2 * MAX_INPUT)
#define LOOPS_MAX_IDX   (6 * MAX_INPUT)
typedef struct loops {
    uint32_t face_count;
    uint32_t size[LOOPS_MAX_FACES];
    uint32_t first[LOOPS_MAX_FACES];
    uint8_t idx[LOOPS_MAX_IDX];
} loops;

/// Write the canonical hull of vertices v[0..nv) and faces L into *h:
/// vertices sorted lexicographically by raw (x, y, z); each face loop
/// rotated to start at its smallest vertex index; faces sorted by (first,
/// second) vertex index; edges by (v0, v1). The caller guarantees a closed
/// convex polytope within the limits.
static void finish(ls_hull *h, const ls_vec3 *v, uint32_t nv, const loops *L)
{
    memset(h, 0, sizeof *h);
    uint8_t order[LS_HULL_MAX_VERTICES], rank[LS_HULL_MAX_VERTICES];
    for (uint32_t i = 0; i < nv; i++) {
        uint32_t j = i;
        while (j > 0 && vec_cmp(v[order[j - 1]], v[i]) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint8_t)i;
    }
    for (uint32_t i = 0; i < nv; i++) {
        rank[order[i]] = (uint8_t)i;
        h->vertices[i] = v[order[i]];
    }
    h->vertex_count = nv;
    // Remapped, rotated loops; then faces sorted by their first two indices.
    uint8_t tmp[2 * LS_HULL_MAX_EDGES];
    uint32_t fo[LS_HULL_MAX_FACES];
    for (uint32_t f = 0; f < L->face_count; f++) {
        uint32_t n = L->size[f], start = 0;
        for (uint32_t i = 1; i < n; i++) {
            if (rank[L->idx[L->first[f] + i]] < rank[L->idx[L->first[f] + start]]) {
                start = i;
            }
        }
        for (uint32_t i = 0; i < n; i++) {
            tmp[L->first[f] + i] = rank[L->idx[L->first[f] + (start + i) % n]];
        }
        uint32_t j = f;
        while (j > 0) {
            const uint8_t *p = &tmp[L->first[fo[j - 1]]], *q = &tmp[L->first[f]];
            if (p[0] < q[0] || (p[0] == q[0] && p[1] < q[1])) {
                break;
            }
            fo[j] = fo[j - 1];
            j--;
        }
        fo[j] = f;
    }
    uint32_t at = 0;
    for (uint32_t f = 0; f < L->face_count; f++) {
        uint32_t src = fo[f], n = L->size[src];
        memcpy(&h->face_vertices[at], &tmp[L->first[src]], n);
        h->faces[f].first = (uint16_t)at;
        h->faces[f].count = (uint16_t)n;
        at += n;
    }
    h->face_count = L->face_count;
    for (uint32_t f = 0; f < h->face_count; f++) {
        ls_hull_face *fc = &h->faces[f];
        ls_i3 n = loop_normal(h->vertices, &h->face_vertices[fc->first], fc->count);
        fc->normal = ls_i3_unit_fx_(n, ls_vec3_make(0, LS_FX_ONE, 0));
        // Plane offset: the hull's support along the rounded normal, so no
        // vertex lies above any face plane.
        int64_t best = ls_vec3_dot_q32(fc->normal, h->vertices[0]);
        for (uint32_t i = 1; i < nv; i++) {
            int64_t d = ls_vec3_dot_q32(fc->normal, h->vertices[i]);
            best = d > best ? d : best;
        }
        fc->d = ls_fx_from_q32(best);
    }
    build_edges(h);
    h->centroid = hull_centroid(h);
    uint64_t r2 = 0;
    for (uint32_t i = 0; i < nv; i++) {
        uint64_t s = ls_vec3_len_sq_q32(h->vertices[i]);
        r2 = s > r2 ? s : r2;
    }
    uint64_t r = ls_isqrt64(r2);
    r += r * r < r2; // round up: a bound
    h->radius = (ls_fx)r;
}

// ----------------------------------------------------------------- errors

static ls_hull *fail(ls_error *err, ls_result code, const char *field, const char *fmt, ...)
    LS_PRINTF(4, 5);

static ls_hull *fail(ls_error *err, ls_result code, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_error_set_fieldv_(err, code, field, fmt, ap);
    va_end(ap);
    return NULL;
}

/// Name of a coordinate (0 = x) for messages.
static char axis_name(int k)
{
    return (char)('x' + k);
}

/// Check one point against +-64 m; writes the error naming `what` i.
static bool coords_ok(ls_vec3 p, const char *what, uint32_t i, ls_error *err)
{
    ls_fx c[3] = {p.x, p.y, p.z};
    for (int k = 0; k < 3; k++) {
        if (c[k] > COORD_MAX || c[k] < -COORD_MAX) {
            char text[LS_FX_TEXT_MAX], field[LS_ERROR_FIELD_MAX];
            ls_fx_format(c[k], text);
            snprintf(field, sizeof field, "%s[%u].%c", what, (unsigned)i, axis_name(k));
            fail(err, LS_ERR_OUT_OF_RANGE, field,
                 "%s %u: %c = %s is outside the hull coordinate range +-64 m", what, (unsigned)i,
                 axis_name(k), text);
            return false;
        }
    }
    return true;
}

// --------------------------------------------------- hull of a point cloud

typedef struct tri {
    uint16_t v[3];
} tri;

typedef struct builder {
    ls_vec3 p[MAX_INPUT];
    uint32_t n;
    tri t[MAX_TRIS];
    uint32_t nt;
    bool vis[MAX_TRIS];
    int group[MAX_TRIS];
} builder;

static int tri_orient(const builder *b, const tri *t, ls_vec3 p)
{
    return ls_orient3d_(b->p[t->v[0]], b->p[t->v[1]], b->p[t->v[2]], p);
}

/// Does a visible triangle other than `self` hold the directed edge a -> b?
static bool visible_has_edge(const builder *b, uint32_t self, uint16_t a, uint16_t c)
{
    for (uint32_t u = 0; u < b->nt; u++) {
        if (u == self || !b->vis[u]) {
            continue;
        }
        for (int k = 0; k < 3; k++) {
            if (b->t[u].v[k] == a && b->t[u].v[(k + 1) % 3] == c) {
                return true;
            }
        }
    }
    return false;
}

/// Insert point i: replace the triangles that see it strictly by a cone from
/// their horizon. Points on or inside the hull change nothing.
static void insert_point(builder *b, uint16_t i)
{
    bool any = false;
    for (uint32_t t = 0; t < b->nt; t++) {
        b->vis[t] = tri_orient(b, &b->t[t], b->p[i]) > 0;
        any = any || b->vis[t];
    }
    if (!any) {
        return;
    }
    tri add[MAX_TRIS / 2];
    uint32_t na = 0;
    for (uint32_t t = 0; t < b->nt; t++) {
        for (int k = 0; b->vis[t] && k < 3; k++) {
            uint16_t a = b->t[t].v[k], c = b->t[t].v[(k + 1) % 3];
            if (!visible_has_edge(b, t, c, a) && na < MAX_TRIS / 2) {
                tri nt = {{a, c, i}};
                add[na++] = nt;
            }
        }
    }
    uint32_t w = 0;
    for (uint32_t t = 0; t < b->nt; t++) {
        if (!b->vis[t]) {
            b->t[w++] = b->t[t];
        }
    }
    for (uint32_t k = 0; k < na && w < MAX_TRIS; k++) {
        b->t[w++] = add[k];
    }
    b->nt = w;
}

/// Index (in t) of the triangle holding directed edge a -> c, or -1.
static int tri_with_edge(const builder *b, uint16_t a, uint16_t c, int *edge)
{
    for (uint32_t u = 0; u < b->nt; u++) {
        for (int k = 0; k < 3; k++) {
            if (b->t[u].v[k] == a && b->t[u].v[(k + 1) % 3] == c) {
                *edge = k;
                return (int)u;
            }
        }
    }
    return -1;
}

/// Merge coplanar neighbouring triangles into polygon faces, drop boundary
/// vertices that lie on a straight run (they are no corners), and collect
/// the faces in L with vertex indices into b->p (< 256). Returns false on
/// overflow of the face limits.
static bool merge_faces(builder *b, loops *L)
{
    int ngroups = 0;
    for (uint32_t t = 0; t < b->nt; t++) {
        b->group[t] = -1;
    }
    int stack[MAX_TRIS];
    for (uint32_t t = 0; t < b->nt; t++) {
        if (b->group[t] >= 0) {
            continue;
        }
        int g = ngroups++;
        int sp = 0;
        stack[sp++] = (int)t;
        b->group[t] = g;
        while (sp > 0) {
            int u = stack[--sp];
            const tri *tu = &b->t[u];
            for (int k = 0; k < 3; k++) {
                int e;
                int nb = tri_with_edge(b, tu->v[(k + 1) % 3], tu->v[k], &e);
                if (nb < 0 || b->group[nb] >= 0) {
                    continue;
                }
                uint16_t opp = b->t[nb].v[(e + 2) % 3];
                if (tri_orient(b, tu, b->p[opp]) == 0) {
                    b->group[nb] = g;
                    stack[sp++] = nb;
                }
            }
        }
    }
    if (ngroups > LOOPS_MAX_FACES) {
        return false;
    }
    L->face_count = 0;
    uint32_t at = 0;
    for (int g = 0; g < ngroups; g++) {
        // Boundary edges of the group: next[a] = c for each a -> c whose
        // twin lies in another group.
        int next[MAX_INPUT];
        for (uint32_t i = 0; i < b->n; i++) {
            next[i] = -1;
        }
        int start = -1, nedges = 0;
        for (uint32_t t = 0; t < b->nt; t++) {
            for (int k = 0; b->group[t] == g && k < 3; k++) {
                uint16_t a = b->t[t].v[k], c = b->t[t].v[(k + 1) % 3];
                int e;
                int nb = tri_with_edge(b, c, a, &e);
                if (nb >= 0 && b->group[nb] != g) {
                    next[a] = c;
                    nedges++;
                    start = start < 0 || a < start ? a : start;
                }
            }
        }
        int loop[MAX_INPUT];
        int n = 0;
        for (int v = start; v >= 0 && n < nedges; v = next[v]) {
            loop[n++] = v;
            if (next[v] == start) {
                break;
            }
        }
        if (n != nedges || n < 3) {
            return false;
        }
        L->first[L->face_count] = at;
        for (int i = 0; i < n; i++) {
            ls_i3 p = ls_i3_of(b->p[loop[(i + n - 1) % n]]), q = ls_i3_of(b->p[loop[i]]),
                  r = ls_i3_of(b->p[loop[(i + 1) % n]]);
            if (ls_i3_is_zero(ls_i3_cross(ls_i3_sub(q, p), ls_i3_sub(r, q)))) {
                continue; // on a straight run of the boundary: not a corner
            }
            if (at >= LOOPS_MAX_IDX) {
                return false;
            }
            L->idx[at++] = (uint8_t)loop[i];
        }
        L->size[L->face_count] = at - L->first[L->face_count];
        L->face_count++;
    }
    return true;
}

/// Sort points lexicographically and drop exact duplicates.
static uint32_t sort_unique(ls_vec3 *p, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        ls_vec3 x = p[i];
        uint32_t j = i;
        while (j > 0 && vec_cmp(p[j - 1], x) > 0) {
            p[j] = p[j - 1];
            j--;
        }
        p[j] = x;
    }
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (w == 0 || vec_cmp(p[w - 1], p[i]) != 0) {
            p[w++] = p[i];
        }
    }
    return w;
}

ls_hull *ls_hull_create(const ls_vec3 *points, uint32_t count, ls_error *err)
{
    ls_error_clear(err);
    if (!points && count > 0) {
        return fail(err, LS_ERR_INVALID_ARGUMENT, "points", "no points given");
    }
    if (count < 4) {
        return fail(err, LS_ERR_INVALID_ARGUMENT, "points",
                    "a hull needs at least 4 points, got %u", (unsigned)count);
    }
    if (count > MAX_INPUT) {
        return fail(err, LS_ERR_CAPACITY, "points", "%u points: a hull is built from at most %d",
                    (unsigned)count, MAX_INPUT);
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!coords_ok(points[i], "point", i, err)) {
            return NULL;
        }
    }
    builder *b = malloc(sizeof *b);
    loops *L = malloc(sizeof *L);
    ls_hull *h = malloc(sizeof *h);
    if (!b || !L || !h) {
        free(b);
        free(L);
        free(h);
        return fail(err, LS_ERR_NO_MEMORY, NULL, "out of memory building a hull");
    }
    memcpy(b->p, points, count * sizeof *points);
    b->n = sort_unique(b->p, count);
    // The first tetrahedron: p0, then the first point off p0, off the line,
    // off the plane (sorted order, so it does not depend on the input order).
    uint32_t i2 = 0, i3 = 0;
    const char *why = NULL;
    if (b->n < 2) {
        why = "all %u points coincide: a hull needs volume";
    } else {
        ls_i3 p0 = ls_i3_of(b->p[0]), d1 = ls_i3_sub(ls_i3_of(b->p[1]), p0);
        for (i2 = 2; i2 < b->n; i2++) {
            if (!ls_i3_is_zero(ls_i3_cross(d1, ls_i3_sub(ls_i3_of(b->p[i2]), p0)))) {
                break;
            }
        }
        if (i2 >= b->n) {
            why = "all %u points are collinear: a hull needs volume";
        } else {
            for (i3 = i2 + 1; i3 < b->n; i3++) {
                if (ls_orient3d_(b->p[0], b->p[1], b->p[i2], b->p[i3]) != 0) {
                    break;
                }
            }
            if (i3 >= b->n) {
                why = "all %u points are coplanar: a hull needs volume";
            }
        }
    }
    if (why) {
        free(b);
        free(L);
        free(h);
        return fail(err, LS_ERR_INVALID_ARGUMENT, "points", why, (unsigned)count);
    }
    uint16_t v0 = 0, v1 = 1, v2 = (uint16_t)i2, v3 = (uint16_t)i3;
    if (ls_orient3d_(b->p[v0], b->p[v1], b->p[v2], b->p[v3]) < 0) {
        uint16_t t = v1;
        v1 = v2;
        v2 = t;
    }
    // With orient(v0, v1, v2, v3) > 0 these face outwards.
    tri init[4] = {{{v0, v2, v1}}, {{v0, v1, v3}}, {{v0, v3, v2}}, {{v1, v2, v3}}};
    memcpy(b->t, init, sizeof init);
    b->nt = 4;
    for (uint32_t i = 1; i < b->n; i++) {
        if (i != 1 && i != i2 && i != i3) {
            insert_point(b, (uint16_t)i);
        }
    }
    if (!merge_faces(b, L)) {
        free(b);
        free(L);
        free(h);
        return fail(err, LS_ERR_CAPACITY, "points", "the hull of these points is too large");
    }
    // Keep the corners, renumbered in sorted order.
    int map[MAX_INPUT];
    for (uint32_t i = 0; i < b->n; i++) {
        map[i] = -1;
    }
    uint32_t nidx = 0;
    for (uint32_t f = 0; f < L->face_count; f++) {
        nidx += L->size[f];
    }
    for (uint32_t k = 0; k < nidx; k++) {
        map[L->idx[k]] = 0;
    }
    uint32_t nv = 0;
    ls_vec3 v[LS_HULL_MAX_VERTICES];
    for (uint32_t i = 0; i < b->n; i++) {
        if (map[i] >= 0) {
            if (nv < LS_HULL_MAX_VERTICES) {
                v[nv] = b->p[i];
            }
            map[i] = (int)nv++;
        }
    }
    if (nv > LS_HULL_MAX_VERTICES) {
        free(b);
        free(L);
        free(h);
        return fail(err, LS_ERR_CAPACITY, "points",
                    "the hull of these points has %u vertices: at most %d", (unsigned)nv,
                    LS_HULL_MAX_VERTICES);
    }
    for (uint32_t k = 0; k < nidx; k++) {
        L->idx[k] = (uint8_t)map[L->idx[k]];
    }
    finish(h, v, nv, L);
    free(b);
    free(L);
    return h;
}

// ------------------------------------------------------- hull from faces

/// Signed distance (Q32.32) of p above the plane through o with unit normal n.
static int64_t height_q32(ls_vec3 n, ls_vec3 o, ls_vec3 p)
{
    return ls_vec3_dot_q32(n, ls_vec3_sub(p, o));
}

static ls_hull *fail_dist(ls_error *err, const char *field, const char *fmt, uint32_t a, uint32_t b,
                          int64_t q32) LS_PRINTF(3, 0);

/// Error whose message names two indices and a distance (Q32.32) in metres.
static ls_hull *fail_dist(ls_error *err, const char *field, const char *fmt, uint32_t a, uint32_t b,
                          int64_t q32)
{
    char text[LS_FX_TEXT_MAX];
    ls_fx_format(ls_fx_from_q32(q32), text);
    char msg[LS_ERROR_MESSAGE_MAX];
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
    snprintf(msg, sizeof msg, fmt, (unsigned)a, (unsigned)b, text);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    return fail(err, LS_ERR_INVALID_ARGUMENT, field, "%s", msg);
}

ls_hull *ls_hull_create_from_faces(const ls_vec3 *vertices, uint32_t vertex_count,
                                   const uint32_t *face_sizes, uint32_t face_count,
                                   const uint32_t *indices, ls_error *err)
{
    ls_error_clear(err);
    if (!vertices || !face_sizes || !indices) {
        return fail(err, LS_ERR_INVALID_ARGUMENT, NULL, "no vertices, face sizes or indices given");
    }
    if (vertex_count < 4) {
        return fail(err, LS_ERR_INVALID_ARGUMENT, "vertices",
                    "a hull needs at least 4 vertices, got %u", (unsigned)vertex_count);
    }
    if (vertex_count > LS_HULL_MAX_VERTICES) {
        return fail(err, LS_ERR_CAPACITY, "vertices", "%u vertices: a hull has at most %d",
                    (unsigned)vertex_count, LS_HULL_MAX_VERTICES);
    }
    if (face_count < 4) {
        return fail(err, LS_ERR_INVALID_ARGUMENT, "faces", "a hull needs at least 4 faces, got %u",
                    (unsigned)face_count);
    }
    if (face_count > LS_HULL_MAX_FACES) {
        return fail(err, LS_ERR_CAPACITY, "faces", "%u faces: a hull has at most %d",
                    (unsigned)face_count, LS_HULL_MAX_FACES);
    }
    for (uint32_t i = 0; i < vertex_count; i++) {
        if (!coords_ok(vertices[i], "vertex", i, err)) {
            return NULL;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (ls_vec3_equal(vertices[i], vertices[j])) {
                return fail(err, LS_ERR_INVALID_ARGUMENT, "vertices", "vertices %u and %u coincide",
                            (unsigned)j, (unsigned)i);
            }
        }
    }
    loops *L = malloc(sizeof *L);
    if (!L) {
        return fail(err, LS_ERR_NO_MEMORY, NULL, "out of memory building a hull");
    }
    ls_hull *res = NULL;
    uint32_t total = 0;
    bool used[LS_HULL_MAX_VERTICES] = {false};
    L->face_count = face_count;
    for (uint32_t f = 0; f < face_count; f++) {
        uint32_t n = face_sizes[f];
        if (n < 3) {
            res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces", "face %u has %u vertices: at least 3",
                       (unsigned)f, (unsigned)n);
            goto out;
        }
        if (n > LS_HULL_MAX_VERTICES || total + n > 2 * LS_HULL_MAX_EDGES) {
            res = fail(err, LS_ERR_CAPACITY, "faces",
                       "face %u: the faces list more than %d vertex indices in all", (unsigned)f,
                       2 * LS_HULL_MAX_EDGES);
            goto out;
        }
        L->first[f] = total;
        L->size[f] = n;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t v = indices[total + i];
            if (v >= vertex_count) {
                res = fail(err, LS_ERR_INVALID_ARGUMENT, "indices",
                           "face %u: vertex index %u is out of range (%u vertices)", (unsigned)f,
                           (unsigned)v, (unsigned)vertex_count);
                goto out;
            }
            for (uint32_t j = 0; j < i; j++) {
                if (indices[total + j] == v) {
                    res = fail(err, LS_ERR_INVALID_ARGUMENT, "indices",
                               "face %u uses vertex %u twice", (unsigned)f, (unsigned)v);
                    goto out;
                }
            }
            L->idx[total + i] = (uint8_t)v;
            used[v] = true;
        }
        total += n;
    }
    for (uint32_t v = 0; v < vertex_count; v++) {
        if (!used[v]) {
            res = fail(err, LS_ERR_INVALID_ARGUMENT, "indices", "vertex %u is not used by any face",
                       (unsigned)v);
            goto out;
        }
    }
    // Closed and manifold: each directed edge once, and its reverse once.
    for (uint32_t f = 0; f < face_count; f++) {
        for (uint32_t i = 0; i < L->size[f]; i++) {
            uint8_t a = L->idx[L->first[f] + i], c = L->idx[L->first[f] + (i + 1) % L->size[f]];
            int twin = -1, same = -1;
            for (uint32_t g = 0; g < face_count; g++) {
                for (uint32_t j = 0; j < L->size[g]; j++) {
                    uint8_t x = L->idx[L->first[g] + j],
                            y = L->idx[L->first[g] + (j + 1) % L->size[g]];
                    if (x == c && y == a) {
                        twin = (int)g;
                    }
                    if (x == a && y == c && (g != f || j != i)) {
                        same = (int)g;
                    }
                }
            }
            if (same >= 0) {
                res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces",
                           "edge %u->%u is used by faces %u and %u in the same direction (faces "
                           "must be counter-clockwise seen from outside, the surface manifold)",
                           (unsigned)a, (unsigned)c, (unsigned)f, (unsigned)same);
                goto out;
            }
            if (twin < 0) {
                res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces",
                           "the hull is open: edge %u->%u of face %u has no neighbouring face",
                           (unsigned)a, (unsigned)c, (unsigned)f);
                goto out;
            }
        }
    }
    int euler = (int)vertex_count - (int)(total / 2) + (int)face_count;
    if (euler != 2) {
        res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces",
                   "the faces do not form one closed surface of a convex solid (V - E + F = %d, "
                   "want 2)",
                   euler);
        goto out;
    }
    for (uint32_t f = 0; f < face_count; f++) {
        const uint8_t *idx = &L->idx[L->first[f]];
        uint32_t n = L->size[f];
        ls_i3 nrm = loop_normal(vertices, idx, n);
        if (ls_i3_is_zero(nrm)) {
            res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces", "face %u is degenerate (zero area)",
                       (unsigned)f);
            goto out;
        }
        // Convex polygon: every vertex strictly left of every other edge.
        for (uint32_t i = 0; i < n; i++) {
            ls_i3 p = ls_i3_of(vertices[idx[i]]);
            ls_i3 e = ls_i3_sub(ls_i3_of(vertices[idx[(i + 1) % n]]), p);
            for (uint32_t j = 0; j < n; j++) {
                if (j == i || j == (i + 1) % n) {
                    continue;
                }
                ls_i3 c = ls_i3_cross(e, ls_i3_sub(ls_i3_of(vertices[idx[j]]), p));
                int s = ls_i128_sign(ls_i3_dot_wide(c, nrm));
                if (s == 0) {
                    res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces",
                               "face %u: vertex %u lies on the line of its edge %u->%u "
                               "(collinear vertices are not allowed)",
                               (unsigned)f, (unsigned)idx[j], (unsigned)idx[i],
                               (unsigned)idx[(i + 1) % n]);
                    goto out;
                }
                if (s < 0) {
                    res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces",
                               "face %u is not a convex polygon: vertex %u lies outside its edge "
                               "%u->%u",
                               (unsigned)f, (unsigned)idx[j], (unsigned)idx[i],
                               (unsigned)idx[(i + 1) % n]);
                    goto out;
                }
            }
        }
        ls_vec3 un = ls_i3_unit_fx_(nrm, ls_vec3_make(0, LS_FX_ONE, 0));
        ls_vec3 o = vertices[idx[0]];
        for (uint32_t i = 1; i < n; i++) {
            int64_t hq = height_q32(un, o, vertices[idx[i]]);
            if (hq > (int64_t)FACE_TOL << 16 || hq < -((int64_t)FACE_TOL << 16)) {
                res = fail_dist(err, "faces",
                                "face %u is not planar: vertex %u is %s m off its plane", f, idx[i],
                                hq);
                goto out;
            }
        }
        // Convex solid, faces outward: every other vertex below this plane.
        uint32_t above = 0, others = 0;
        int64_t worst = INT64_MIN;
        uint32_t worst_v = 0;
        for (uint32_t v = 0; v < vertex_count; v++) {
            bool on = false;
            for (uint32_t i = 0; i < n; i++) {
                on = on || idx[i] == v;
            }
            if (on) {
                continue;
            }
            others++;
            int64_t hq = height_q32(un, o, vertices[v]);
            above += hq > 0;
            if (hq > worst) {
                worst = hq;
                worst_v = v;
            }
        }
        if (others > 0 && above == others) {
            res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces",
                       "face %u is clockwise seen from outside (faces must be counter-clockwise)",
                       (unsigned)f);
            goto out;
        }
        if (worst > (int64_t)FACE_TOL << 16) {
            res = fail_dist(err, "faces", "the hull is not convex: vertex %u is %s m above face %u",
                            worst_v, f, worst);
            goto out;
        }
        if (worst >= -((int64_t)FACE_TOL << 16)) {
            res = fail(err, LS_ERR_INVALID_ARGUMENT, "faces",
                       "vertex %u lies in the plane of face %u without being one of its vertices "
                       "(merge coplanar faces into one)",
                       (unsigned)worst_v, (unsigned)f);
            goto out;
        }
    }
    res = malloc(sizeof *res);
    if (!res) {
        res = fail(err, LS_ERR_NO_MEMORY, NULL, "out of memory building a hull");
        goto out;
    }
    finish(res, vertices, vertex_count, L);
out:
    free(L);
    return res;
}

// ---------------------------------------------------------------- accessors

void ls_hull_destroy(ls_hull *hull)
{
    free(hull);
}

uint32_t ls_hull_vertex_count(const ls_hull *hull)
{
    return hull ? hull->vertex_count : 0;
}

ls_vec3 ls_hull_vertex(const ls_hull *hull, uint32_t i)
{
    return hull && i < hull->vertex_count ? hull->vertices[i] : ls_vec3_zero();
}

uint32_t ls_hull_face_count(const ls_hull *hull)
{
    return hull ? hull->face_count : 0;
}

uint32_t ls_hull_face_vertices(const ls_hull *hull, uint32_t f, uint32_t *indices, uint32_t max)
{
    if (!hull || f >= hull->face_count) {
        return 0;
    }
    const ls_hull_face *fc = &hull->faces[f];
    for (uint32_t i = 0; indices && i < fc->count && i < max; i++) {
        indices[i] = hull->face_vertices[fc->first + i];
    }
    return fc->count;
}

// ------------------------------------------------------------ mass, box, AABB

bool ls_hull_mass_props_(const ls_hull *h, ls_fx density, ls_hull_mass *out)
{
    memset(out, 0, sizeof *out);
    out->center = h->centroid;
    if (density <= 0) {
        return false;
    }
    ls_i128 first[3], second[6];
    ls_i128 vol6 = fan_sums(h, h->centroid, first, second);
    if (ls_i128_sign(vol6) <= 0) {
        return false;
    }
    // mass = rho * vol6 / 6 (raw: rho_raw * vol6 / (6 * 2^48)).
    int64_t mass = muldiv(vol6, (uint64_t)density, ls_i128_from_i64((int64_t)6 << 48));
    // Inertia = rho * C / 120 with C in raw^5 (2^-80 m^5), in Q32.32:
    // rho_raw * C / (120 * 2^64).
    ls_i128 den = {120, 0};
    ls_i128 jxx = ls_i128_add(second[1], second[2]);
    ls_i128 jyy = ls_i128_add(second[0], second[2]);
    ls_i128 jzz = ls_i128_add(second[0], second[1]);
    int64_t in[6] = {
        muldiv(jxx, (uint64_t)density, den),        muldiv(jyy, (uint64_t)density, den),
        muldiv(jzz, (uint64_t)density, den),        -muldiv(second[3], (uint64_t)density, den),
        -muldiv(second[4], (uint64_t)density, den), -muldiv(second[5], (uint64_t)density, den)};
    bool ok = mass > 0 && mass <= LS_FX_MAX;
    bool o = false;
    out->mass = ls_fx_sat64(mass, &o);
    int64_t *dst[6] = {&out->ixx, &out->iyy, &out->izz, &out->ixy, &out->ixz, &out->iyz};
    for (int k = 0; k < 6; k++) {
        // muldiv caps its quotient at 2^62: such an entry is out of range.
        o = o || in[k] >= (INT64_C(1) << 62) || in[k] <= -(INT64_C(1) << 62);
        *dst[k] = in[k];
    }
    return ok && !o;
}

void ls_hull_make_box_(ls_vec3 half, ls_hull *out)
{
    // Vertex i = 4 [x+] + 2 [y+] + [z+] is the lexicographic order; faces
    // are the canonical loops of ls_hull_create on the same corners.
    static const uint8_t loops6[6][4] = {{0, 1, 3, 2}, {0, 2, 6, 4}, {0, 4, 5, 1},
                                         {1, 5, 7, 3}, {2, 3, 7, 6}, {4, 6, 7, 5}};
    static const int8_t normal[6][3] = {{-1, 0, 0}, {0, 0, -1}, {0, -1, 0},
                                        {0, 0, 1},  {0, 1, 0},  {1, 0, 0}};
    memset(out, 0, sizeof *out);
    out->vertex_count = 8;
    out->face_count = 6;
    for (int i = 0; i < 8; i++) {
        out->vertices[i] =
            ls_vec3_make((i & 4) ? half.x : ls_fx_neg(half.x), (i & 2) ? half.y : ls_fx_neg(half.y),
                         (i & 1) ? half.z : ls_fx_neg(half.z));
    }
    ls_fx h3[3] = {half.x, half.y, half.z};
    for (int f = 0; f < 6; f++) {
        ls_hull_face *fc = &out->faces[f];
        fc->normal = ls_vec3_make(normal[f][0] * LS_FX_ONE, normal[f][1] * LS_FX_ONE,
                                  normal[f][2] * LS_FX_ONE);
        int k = normal[f][0] ? 0 : normal[f][1] ? 1 : 2;
        fc->d = h3[k];
        fc->first = (uint16_t)(4 * f);
        fc->count = 4;
        memcpy(&out->face_vertices[4 * f], loops6[f], 4);
    }
    build_edges(out);
    uint64_t r2 = ls_vec3_len_sq_q32(half);
    uint64_t r = ls_isqrt64(r2);
    r += r * r < r2;
    out->radius = (ls_fx)r;
}

ls_aabb ls_hull_aabb_(const ls_hull *h, const ls_xform *xf, ls_fx margin)
{
    ls_aabb box;
    ls_fx lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        int64_t mn = INT64_MAX, mx = INT64_MIN;
        for (uint32_t i = 0; i < h->vertex_count; i++) {
            int64_t d = ls_vec3_dot_q32(xf->r.row[k], h->vertices[i]);
            mn = d < mn ? d : mn;
            mx = d > mx ? d : mx;
        }
        // Floor the minimum and ceil the maximum: never 1 ulp too small.
        lo[k] = (ls_fx)(mn >> 16);
        hi[k] = (ls_fx)(-((-mx) >> 16));
    }
    ls_vec3 m = ls_vec3_make(margin, margin, margin);
    box.min = ls_vec3_sub(ls_vec3_add(xf->p, ls_vec3_make(lo[0], lo[1], lo[2])), m);
    box.max = ls_vec3_add(ls_vec3_add(xf->p, ls_vec3_make(hi[0], hi[1], hi[2])), m);
    return box;
}

// ---------------------------------------------------------------- ray cast

/// a/b > c/d for b, d > 0, exactly.
static bool ratio_gt(int64_t a, int64_t b, int64_t c, int64_t d)
{
    return ls_i128_cmp(ls_i128_mul(a, d), ls_i128_mul(c, b)) > 0;
}

bool ls_hull_ray_cast_(const ls_hull *h, const ls_xform *xf, ls_vec3 from, ls_vec3 to,
                       ls_fx *fraction, ls_vec3 *normal)
{
    ls_vec3 o = ls_mat3_mul_tvec(xf->r, ls_vec3_sub(from, xf->p));
    ls_vec3 d = ls_mat3_mul_tvec(xf->r, ls_vec3_sub(to, from));
    // Cyrus-Beck: o + t d is inside face f's half-space iff t * den <= num.
    int64_t lo_n = 0, lo_d = 1, hi_n = 1, hi_d = 1;
    int enter = -1;
    for (uint32_t f = 0; f < h->face_count; f++) {
        const ls_hull_face *fc = &h->faces[f];
        int64_t num = ((int64_t)fc->d * 65536) - ls_vec3_dot_q32(fc->normal, o);
        int64_t den = ls_vec3_dot_q32(fc->normal, d);
        if (den == 0) {
            if (num < 0) {
                return false; // parallel and outside
            }
        } else if (den < 0) {
            // Entering: t >= num / den = (-num) / (-den).
            if (ratio_gt(-num, -den, lo_n, lo_d)) {
                lo_n = -num;
                lo_d = -den;
                enter = (int)f;
            }
        } else if (ratio_gt(hi_n, hi_d, num, den)) {
            hi_n = num;
            hi_d = den;
        }
    }
    if (ratio_gt(lo_n, lo_d, hi_n, hi_d)) {
        return false;
    }
    if (enter < 0) {
        // Starts inside (or on the surface): hit at 0 against the direction.
        *fraction = 0;
        *normal = ls_vec3_normalize(ls_vec3_sub(from, to), ls_vec3_make(0, LS_FX_ONE, 0));
        return true;
    }
    // lo_n / lo_d in (0, 1]; both Q32 values below 2^47.
    int64_t t = (lo_n * 65536 + lo_d / 2) / lo_d;
    *fraction = (ls_fx)(t > LS_FX_ONE ? LS_FX_ONE : t);
    *normal = ls_vec3_normalize(ls_mat3_mul_vec(xf->r, h->faces[enter].normal),
                                ls_vec3_make(0, LS_FX_ONE, 0));
    return true;
}
