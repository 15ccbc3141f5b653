// SPDX-License-Identifier: MIT
// One draw routine per shape kind, registered in a table keyed by
// ls_shape_type: a new kind adds one function and one table row. A routine
// draws one shape at its world pose; a compound body is drawn shape by shape.
#include "render.h"

#include <math.h>
#include <string.h>

#define PI_F 3.14159265f

static float fx(ls_fx v)
{
    return (float)v / 65536.0f;
}

rn_vec rn_shape_point(const rn_shape *b, rn_vec v)
{
    // v' = v + 2w(q x v) + 2 q x (q x v)
    float qx = b->q[0], qy = b->q[1], qz = b->q[2], qw = b->q[3];
    float tx = 2.0f * (qy * v.z - qz * v.y);
    float ty = 2.0f * (qz * v.x - qx * v.z);
    float tz = 2.0f * (qx * v.y - qy * v.x);
    rn_vec r = {v.x + qw * tx + (qy * tz - qz * ty), v.y + qw * ty + (qz * tx - qx * tz),
                v.z + qw * tz + (qx * ty - qy * tx)};
    return (rn_vec){r.x + b->pos.x, r.y + b->pos.y, r.z + b->pos.z};
}

static void quad(rn_canvas *c, rn_vec a, rn_vec b, rn_vec d, rn_vec e, const rn_material *m)
{
    rn_triangle(c, a, b, d, m);
    rn_triangle(c, a, d, e, m);
}

static void draw_box(rn_canvas *c, const rn_shape *b, const rn_material *m)
{
    ls_vec3 h = b->def.half_extents;
    float hx = fx(h.x), hy = fx(h.y), hz = fx(h.z);
    rn_vec p[8];
    for (int i = 0; i < 8; i++) {
        rn_vec l = {(i & 1) ? hx : -hx, (i & 2) ? hy : -hy, (i & 4) ? hz : -hz};
        p[i] = rn_shape_point(b, l);
    }
    static const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                    {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (int f = 0; f < 6; f++) {
        quad(c, p[faces[f][0]], p[faces[f][1]], p[faces[f][2]], p[faces[f][3]], m);
    }
}

// A lat-long surface of radius r whose upper half is lifted by +hh and lower
// half lowered by -hh along local Y: a sphere for hh = 0, a capsule otherwise.
// Alternate slice quarters are shaded darker so rotation is visible.
static void draw_round(rn_canvas *c, const rn_shape *b, const rn_material *m, float r, float hh)
{
    enum { STACKS = 12, SLICES = 24 };
    rn_material dark = *m;
    dark.r *= 0.78f, dark.g *= 0.78f, dark.b *= 0.78f;
    // Rings 0..STACKS, with the equator repeated (upper and lower) when hh > 0.
    rn_vec ring[2][SLICES];
    int rings = STACKS + (hh > 0.0f ? 2 : 1);
    for (int k = 0; k < rings; k++) {
        int i = k <= STACKS / 2 ? k : k - (hh > 0.0f ? 1 : 0);
        float off = k <= STACKS / 2 ? hh : -hh;
        float th = PI_F * (float)i / (float)STACKS;
        float y = r * cosf(th) + off, rr = r * sinf(th);
        rn_vec *cur = ring[k & 1];
        for (int j = 0; j < SLICES; j++) {
            float ph = 2.0f * PI_F * (float)j / (float)SLICES;
            cur[j] = rn_shape_point(b, (rn_vec){rr * cosf(ph), y, rr * sinf(ph)});
        }
        if (k == 0) {
            continue;
        }
        const rn_vec *prev = ring[(k - 1) & 1];
        for (int j = 0; j < SLICES; j++) {
            int j1 = (j + 1) % SLICES;
            const rn_material *mm = ((j * 4 / SLICES) & 1) ? &dark : m;
            quad(c, prev[j], prev[j1], cur[j1], cur[j], mm);
        }
    }
}

static void draw_sphere(rn_canvas *c, const rn_shape *b, const rn_material *m)
{
    draw_round(c, b, m, fx(b->def.radius), 0.0f);
}

static void draw_capsule(rn_canvas *c, const rn_shape *b, const rn_material *m)
{
    draw_round(c, b, m, fx(b->def.radius), fx(b->def.half_height));
}

// A square of the half-space's boundary around the point nearest the camera
// target, with the 1 m grid.
static void draw_plane(rn_canvas *c, const rn_shape *b, const rn_material *m)
{
    ls_vec3 nn = b->def.normal;
    rn_vec n = {fx(nn.x), fx(nn.y), fx(nn.z)};
    float len = sqrtf(n.x * n.x + n.y * n.y + n.z * n.z);
    if (len <= 0.0f) {
        return;
    }
    n = (rn_vec){n.x / len, n.y / len, n.z / len};
    float d = fx(b->def.plane_d);
    rn_vec t = c->cam.target;
    float s = t.x * n.x + t.y * n.y + t.z * n.z - d;
    rn_vec o = {t.x - n.x * s, t.y - n.y * s, t.z - n.z * s};
    rn_vec a = fabsf(n.y) < 0.9f ? (rn_vec){0.0f, 1.0f, 0.0f} : (rn_vec){1.0f, 0.0f, 0.0f};
    rn_vec u = {a.y * n.z - a.z * n.y, a.z * n.x - a.x * n.z, a.x * n.y - a.y * n.x};
    float ul = sqrtf(u.x * u.x + u.y * u.y + u.z * u.z);
    u = (rn_vec){u.x / ul, u.y / ul, u.z / ul};
    rn_vec v = {n.y * u.z - n.z * u.y, n.z * u.x - n.x * u.z, n.x * u.y - n.y * u.x};
    rn_material g = *m;
    g.grid = true;
    // Grid lines through the plane's own origin (the point nearest 0,0,0).
    g.origin = (rn_vec){n.x * d, n.y * d, n.z * d};
    g.u = u;
    g.v = v;
    float e = c->extent * 8.0f + 60.0f;
    // Split into 8x8 tiles: smaller triangles keep float interpolation tight.
    enum { TILES = 8 };
    for (int i = 0; i < TILES; i++) {
        for (int j = 0; j < TILES; j++) {
            float u0 = -e + 2.0f * e * (float)i / TILES,
                  u1 = -e + 2.0f * e * (float)(i + 1) / TILES;
            float v0 = -e + 2.0f * e * (float)j / TILES,
                  v1 = -e + 2.0f * e * (float)(j + 1) / TILES;
            rn_vec p00 = {o.x + u.x * u0 + v.x * v0, o.y + u.y * u0 + v.y * v0,
                          o.z + u.z * u0 + v.z * v0};
            rn_vec p10 = {o.x + u.x * u1 + v.x * v0, o.y + u.y * u1 + v.y * v0,
                          o.z + u.z * u1 + v.z * v0};
            rn_vec p11 = {o.x + u.x * u1 + v.x * v1, o.y + u.y * u1 + v.y * v1,
                          o.z + u.z * u1 + v.z * v1};
            rn_vec p01 = {o.x + u.x * u0 + v.x * v1, o.y + u.y * u0 + v.y * v1,
                          o.z + u.z * u0 + v.z * v1};
            quad(c, p00, p10, p11, p01, &g);
        }
    }
}

static rn_vec vec_of(ls_vec3 v)
{
    return (rn_vec){fx(v.x), fx(v.y), fx(v.z)};
}

// Every face of the hull as a flat polygon (a fan of triangles from its first
// vertex), lit like the faces of a box.
static void draw_hull(rn_canvas *c, const rn_shape *b, const rn_material *m)
{
    const ls_hull *h = b->def.hull;
    if (!h) {
        return;
    }
    rn_vec p[LS_HULL_MAX_VERTICES];
    uint32_t nv = ls_hull_vertex_count(h);
    nv = nv < LS_HULL_MAX_VERTICES ? nv : LS_HULL_MAX_VERTICES;
    for (uint32_t i = 0; i < nv; i++) {
        p[i] = rn_shape_point(b, vec_of(ls_hull_vertex(h, i)));
    }
    uint32_t nf = ls_hull_face_count(h);
    for (uint32_t f = 0; f < nf; f++) {
        uint32_t idx[LS_HULL_MAX_VERTICES];
        uint32_t n = ls_hull_face_vertices(h, f, idx, LS_HULL_MAX_VERTICES);
        n = n < LS_HULL_MAX_VERTICES ? n : LS_HULL_MAX_VERTICES;
        for (uint32_t k = 1; k + 1 < n; k++) {
            if (idx[0] < nv && idx[k] < nv && idx[k + 1] < nv) {
                rn_triangle(c, p[idx[0]], p[idx[k]], p[idx[k + 1]], m);
            }
        }
    }
}

// Every triangle of the mesh, flat-shaded in the ground-like colour the caller
// chose, with the 1 m grid of the ground planes (world X and Z) on triangles
// that face mostly up or down. Both sides are drawn (as rn_triangle does for
// every shape): a mesh is often an open surface such as terrain, and a camera
// below it should still see it rather than look through it.
static void draw_mesh(rn_canvas *c, const rn_shape *b, const rn_material *m)
{
    const ls_mesh *mesh = b->def.mesh;
    if (!mesh) {
        return;
    }
    rn_material g = *m;
    g.grid = true;
    g.origin = (rn_vec){0.0f, 0.0f, 0.0f};
    g.u = (rn_vec){1.0f, 0.0f, 0.0f};
    g.v = (rn_vec){0.0f, 0.0f, 1.0f};
    uint32_t nt = ls_mesh_triangle_count(mesh), nv = ls_mesh_vertex_count(mesh);
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t idx[3];
        ls_mesh_triangle(mesh, t, idx);
        if (idx[0] >= nv || idx[1] >= nv || idx[2] >= nv) {
            continue;
        }
        rn_vec a = rn_shape_point(b, vec_of(ls_mesh_vertex(mesh, idx[0])));
        rn_vec d = rn_shape_point(b, vec_of(ls_mesh_vertex(mesh, idx[1])));
        rn_vec e = rn_shape_point(b, vec_of(ls_mesh_vertex(mesh, idx[2])));
        rn_vec u = {d.x - a.x, d.y - a.y, d.z - a.z}, v = {e.x - a.x, e.y - a.y, e.z - a.z};
        rn_vec n = {u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x};
        float len = sqrtf(n.x * n.x + n.y * n.y + n.z * n.z);
        bool flat = len > 0.0f && fabsf(n.y) >= 0.5f * len;
        rn_triangle(c, a, d, e, flat ? &g : m);
    }
}

typedef struct shape_entry {
    const char *name;
    rn_draw_fn draw;
} shape_entry;

// The registry: one row per ls_shape_type.
static const shape_entry shape_table[] = {
    [LS_SHAPE_SPHERE] = {"sphere", draw_sphere},    [LS_SHAPE_BOX] = {"box", draw_box},
    [LS_SHAPE_CAPSULE] = {"capsule", draw_capsule}, [LS_SHAPE_PLANE] = {"plane", draw_plane},
    [LS_SHAPE_HULL] = {"hull", draw_hull},          [LS_SHAPE_MESH] = {"mesh", draw_mesh},
};

rn_draw_fn rn_shape_drawer(ls_shape_type type)
{
    size_t i = (size_t)type;
    return i < sizeof shape_table / sizeof shape_table[0] ? shape_table[i].draw : NULL;
}

const char *rn_shape_name(ls_shape_type type)
{
    size_t i = (size_t)type;
    return i < sizeof shape_table / sizeof shape_table[0] && shape_table[i].name
               ? shape_table[i].name
               : "unknown";
}

rn_shape rn_shape_of(const ls_world *w, ls_body_id id, uint32_t k)
{
    rn_shape s;
    memset(&s, 0, sizeof s);
    s.def = ls_body_shape_at(w, id, k);
    ls_vec3 p;
    ls_quat q;
    if (ls_shape_get_transform(w, ls_body_shape_id(w, id, k), &p, &q) != LS_OK) {
        p = ls_body_position(w, id);
        q = ls_body_orientation(w, id);
    }
    s.pos = vec_of(p);
    s.q[0] = fx(q.x), s.q[1] = fx(q.y), s.q[2] = fx(q.z), s.q[3] = fx(q.w);
    uint32_t n = 0;
    if (s.def.type == LS_SHAPE_HULL && s.def.hull) {
        n = ls_hull_vertex_count(s.def.hull);
    } else if (s.def.type == LS_SHAPE_MESH && s.def.mesh) {
        n = ls_mesh_vertex_count(s.def.mesh);
    }
    for (uint32_t i = 0; i < n; i++) {
        rn_vec v = vec_of(s.def.type == LS_SHAPE_HULL ? ls_hull_vertex(s.def.hull, i)
                                                      : ls_mesh_vertex(s.def.mesh, i));
        s.lo = i ? (rn_vec){fminf(s.lo.x, v.x), fminf(s.lo.y, v.y), fminf(s.lo.z, v.z)} : v;
        s.hi = i ? (rn_vec){fmaxf(s.hi.x, v.x), fmaxf(s.hi.y, v.y), fmaxf(s.hi.z, v.z)} : v;
    }
    return s;
}
