// SPDX-License-Identifier: MIT
// `lockstep render SCENE|REPLAY [--tick N | --frames A:B:STEP] [--size WxH]
// [--camera ...] [--ids] [--contacts] --out FILE.png`: pictures of a scene or
// a replay at given ticks, drawn by the software rasteriser of tools/render/.
#include "cli.h"
#include "render/render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RENDER_USAGE                                                                               \
    "SCENE|REPLAY [--tick N | --frames A:B:STEP] [--size WxH] [--camera VIEW]\n"                   \
    "                       [--ids] [--contacts] [--ss N] --out FILE.png"

const cli_command cmd_render_def = {
    "render",
    "draw a scene or replay at a tick into a PNG (software rasteriser)",
    RENDER_USAGE
    "\n\n"
    "  SCENE|REPLAY      a .scene file or a .lsr replay (re-simulated from its inputs;\n"
    "                    keyframes are used to seek)\n"
    "  --tick N          the state after N ticks (default 0, the initial state)\n"
    "  --frames A:B:STEP ticks A, A+STEP, ... up to B, one file each: FILE-TTTTT.png\n"
    "  --size WxH        image size in pixels, 16..4096 each (default 640x400)\n"
    "  --camera VIEW     auto (default, three-quarter view framing every body), front,\n"
    "                    side, top, or EX,EY,EZ,TX,TY,TZ[,FOV] (eye, target, vertical\n"
    "                    field of view in degrees, default 40)\n"
    "  --ids             label every body (not planes or meshes) with its 1-based id\n"
    "  --contacts        mark contact points (estimated from the drawn shapes)\n"
    "  --ss N            supersampling factor 1..4 (default 2)\n"
    "  --out FILE.png    output file (required); FILE.ppm writes an uncompressed binary\n"
    "                    PPM (P6) instead, for scripts and tests that read pixels\n\n"
    "The picture is deterministic: the same input gives the same pixels; each\n"
    "written file is printed with a 64-bit FNV-1a hash of its pixels.\n"
    "Sleeping bodies are tinted blue-grey; players have their own colours.\n"
    "Exit status: 0 ok, 1 unreadable input or write error, 2 usage error.\n",
    cmd_render,
    NULL,
};

static bool parse_u32(const char *s, uint32_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') {
        return false;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > 100000000ul) {
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static bool parse_floats(const char *s, float *out, int max, int *count)
{
    *count = 0;
    while (*s && *count < max) {
        char *end;
        errno = 0;
        float v = strtof(s, &end);
        if (end == s || errno || !isfinite(v)) {
            return false;
        }
        out[(*count)++] = v;
        s = end;
        if (*s == ',') {
            s++;
        } else if (*s) {
            return false;
        }
    }
    return *s == '\0';
}

static float fxf(ls_fx v)
{
    return (float)v / 65536.0f;
}

typedef struct view_box {
    rn_vec center;
    float radius;
    rn_vec lo, hi;
} view_box;

static rn_vec vmin(rn_vec a, rn_vec b)
{
    return (rn_vec){fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z)};
}

static rn_vec vmax(rn_vec a, rn_vec b)
{
    return (rn_vec){fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z)};
}

// a * b (x, y, z, w).
static void quat_mul(const float *a, const float *b, float *out)
{
    out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

// q normalised (all zero = identity, as ls_shape_def's local_orientation).
static void quat_of(ls_quat in, float *q)
{
    q[0] = fxf(in.x), q[1] = fxf(in.y), q[2] = fxf(in.z), q[3] = fxf(in.w);
    float ql = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) {
        q[k] = ql > 0.0f ? q[k] / ql : (k == 3 ? 1.0f : 0.0f);
    }
}

// World bounds of one shape of a scene body at its initial pose (the body
// origin at its position, the shape at its local pose from there).
static void shape_bounds(const ls_body_def *d, const ls_shape_def *sd, rn_vec *lo, rn_vec *hi)
{
    rn_shape body = {0}, s = {0};
    quat_of(d->orientation, body.q);
    float ql[4];
    quat_of(sd->local_orientation, ql);
    quat_mul(body.q, ql, s.q);
    s.def = *sd;
    rn_vec o = rn_shape_point(&body, (rn_vec){fxf(sd->local_position.x), fxf(sd->local_position.y),
                                              fxf(sd->local_position.z)});
    rn_vec p = {fxf(d->position.x) + o.x, fxf(d->position.y) + o.y, fxf(d->position.z) + o.z};
    if (sd->type == LS_SHAPE_HULL || sd->type == LS_SHAPE_MESH) {
        // Every vertex at its world position.
        s.pos = p;
        uint32_t n = sd->type == LS_SHAPE_HULL ? (sd->hull ? ls_hull_vertex_count(sd->hull) : 0)
                                               : (sd->mesh ? ls_mesh_vertex_count(sd->mesh) : 0);
        for (uint32_t i = 0; i < n; i++) {
            ls_vec3 v = sd->type == LS_SHAPE_HULL ? ls_hull_vertex(sd->hull, i)
                                                  : ls_mesh_vertex(sd->mesh, i);
            rn_vec w = rn_shape_point(&s, (rn_vec){fxf(v.x), fxf(v.y), fxf(v.z)});
            *lo = vmin(*lo, w);
            *hi = vmax(*hi, w);
        }
        return;
    }
    // World AABB of the rotated shape: |R| times the local half extents.
    rn_vec he = {fxf(sd->radius), fxf(sd->radius), fxf(sd->radius)};
    if (sd->type == LS_SHAPE_BOX) {
        he = (rn_vec){fxf(sd->half_extents.x), fxf(sd->half_extents.y), fxf(sd->half_extents.z)};
    } else if (sd->type == LS_SHAPE_CAPSULE) {
        he.y += fxf(sd->half_height);
    }
    rn_vec ex = rn_shape_point(&s, (rn_vec){he.x, 0.0f, 0.0f});
    rn_vec ey = rn_shape_point(&s, (rn_vec){0.0f, he.y, 0.0f});
    rn_vec ez = rn_shape_point(&s, (rn_vec){0.0f, 0.0f, he.z});
    rn_vec h = {fabsf(ex.x) + fabsf(ey.x) + fabsf(ez.x), fabsf(ex.y) + fabsf(ey.y) + fabsf(ez.y),
                fabsf(ex.z) + fabsf(ey.z) + fabsf(ez.z)};
    *lo = vmin(*lo, (rn_vec){p.x - h.x, p.y - h.y, p.z - h.z});
    *hi = vmax(*hi, (rn_vec){p.x + h.x, p.y + h.y, p.z + h.z});
}

// Bounds of every shape but planes in the initial scene.
static view_box scene_bounds(const ls_scene *sc)
{
    rn_vec lo = {1e30f, 1e30f, 1e30f}, hi = {-1e30f, -1e30f, -1e30f};
    bool any = false;
    for (uint32_t i = 0; i < sc->body_count; i++) {
        const ls_body_def *d = &sc->bodies[i];
        uint32_t n = d->shape_count ? d->shape_count : 1;
        for (uint32_t k = 0; k < n; k++) {
            const ls_shape_def *sd = d->shape_count ? &d->shapes[k] : &d->shape;
            if (sd->type != LS_SHAPE_PLANE) {
                shape_bounds(d, sd, &lo, &hi);
                any = true;
            }
        }
    }
    if (!any) {
        return (view_box){{0.0f, 0.0f, 0.0f}, 5.0f, {-5.0f, -5.0f, -5.0f}, {5.0f, 5.0f, 5.0f}};
    }
    rn_vec c = {(lo.x + hi.x) * 0.5f, (lo.y + hi.y) * 0.5f, (lo.z + hi.z) * 0.5f};
    rn_vec h = {(hi.x - lo.x) * 0.5f, (hi.y - lo.y) * 0.5f, (hi.z - lo.z) * 0.5f};
    return (view_box){c, fmaxf(1.0f, sqrtf(h.x * h.x + h.y * h.y + h.z * h.z)), lo, hi};
}

static bool make_camera(const char *spec, const view_box *vb, float aspect, rn_camera *cam)
{
    float fov = 40.0f;
    rn_vec dir;
    if (strcmp(spec, "auto") == 0) {
        dir = (rn_vec){0.62f, 0.45f, 1.0f};
    } else if (strcmp(spec, "front") == 0) {
        dir = (rn_vec){0.0f, 0.18f, 1.0f};
    } else if (strcmp(spec, "side") == 0) {
        dir = (rn_vec){1.0f, 0.18f, 0.0f};
    } else if (strcmp(spec, "top") == 0) {
        dir = (rn_vec){0.0f, 1.0f, 0.02f};
    } else {
        float v[7];
        int n;
        if (!parse_floats(spec, v, 7, &n) || (n != 6 && n != 7)) {
            return false;
        }
        cam->eye = (rn_vec){v[0], v[1], v[2]};
        cam->target = (rn_vec){v[3], v[4], v[5]};
        cam->fov_deg = n == 7 ? v[6] : fov;
        float dx = v[0] - v[3], dy = v[1] - v[4], dz = v[2] - v[5];
        return cam->fov_deg > 1.0f && cam->fov_deg < 170.0f && dx * dx + dy * dy + dz * dz > 0.0f;
    }
    float l = sqrtf(dir.x * dir.x + dir.y * dir.y + dir.z * dir.z);
    rn_vec back = {dir.x / l, dir.y / l, dir.z / l};
    // The distance at which every corner of the bounds is inside the view.
    rn_vec right = {back.z, 0.0f, -back.x};
    float rl = sqrtf(right.x * right.x + right.z * right.z);
    right = rl > 1e-6f ? (rn_vec){right.x / rl, 0.0f, right.z / rl} : (rn_vec){1.0f, 0.0f, 0.0f};
    rn_vec up = {back.y * right.z - back.z * right.y, back.z * right.x - back.x * right.z,
                 back.x * right.y - back.y * right.x};
    float tan_v = tanf(fov * 0.5f * 3.14159265f / 180.0f), tan_h = tan_v * aspect;
    float dist = 1.0f;
    for (int k = 0; k < 8; k++) {
        rn_vec p = {(k & 1) ? vb->hi.x : vb->lo.x, (k & 2) ? vb->hi.y : vb->lo.y,
                    (k & 4) ? vb->hi.z : vb->lo.z};
        rn_vec d = {p.x - vb->center.x, p.y - vb->center.y, p.z - vb->center.z};
        float x = d.x * right.x + d.y * right.y + d.z * right.z;
        float y = d.x * up.x + d.y * up.y + d.z * up.z;
        float z = d.x * back.x + d.y * back.y + d.z * back.z; // towards the camera
        dist = fmaxf(dist, fmaxf(fabsf(x) / tan_h, fabsf(y) / tan_v) + z);
    }
    dist *= 1.15f;
    cam->target = vb->center;
    cam->eye = (rn_vec){vb->center.x + dir.x / l * dist, vb->center.y + dir.y / l * dist,
                        vb->center.z + dir.z / l * dist};
    cam->fov_deg = fov;
    return true;
}

// The colour of body i's shapes of kind `kind`: planes and meshes are ground,
// everything else has the body's colour.
static rn_material body_material(const rn_source *src, uint32_t i, const rn_body *b,
                                 ls_shape_type kind)
{
    static const float palette[6][3] = {{0.86f, 0.52f, 0.30f}, {0.90f, 0.74f, 0.34f},
                                        {0.56f, 0.74f, 0.42f}, {0.80f, 0.44f, 0.50f},
                                        {0.52f, 0.64f, 0.84f}, {0.70f, 0.56f, 0.82f}};
    static const float players[4][3] = {
        {0.90f, 0.22f, 0.20f}, {0.20f, 0.45f, 0.92f}, {0.22f, 0.75f, 0.30f}, {0.95f, 0.80f, 0.15f}};
    rn_material m = {0};
    const ls_body_def *d = b->def;
    if (kind == LS_SHAPE_PLANE) {
        m.r = 0.84f, m.g = 0.83f, m.b = 0.78f;
        return m;
    }
    if (kind == LS_SHAPE_MESH) { // terrain: a darker, greener ground
        m.r = 0.66f, m.g = 0.70f, m.b = 0.56f;
        return m;
    }
    if (d->type == LS_BODY_STATIC) {
        m.r = 0.60f, m.g = 0.61f, m.b = 0.64f;
    } else if (d->type == LS_BODY_KINEMATIC) {
        m.r = 0.95f, m.g = 0.55f, m.b = 0.10f;
    } else {
        const float *p = palette[i % 6];
        m.r = p[0], m.g = p[1], m.b = p[2];
    }
    for (uint32_t k = 0; k < src->scene.player_count; k++) {
        if (src->scene.player_body[k] == i) {
            const float *p = players[k % 4];
            m.r = p[0], m.g = p[1], m.b = p[2];
        }
    }
    if (b->asleep) { // tinted towards slate blue
        m.r = m.r * 0.45f + 0.30f * 0.55f;
        m.g = m.g * 0.45f + 0.38f * 0.55f;
        m.b = m.b * 0.45f + 0.62f * 0.55f;
    }
    return m;
}

// Body i of the current state; its shapes are written to `shapes` (room for
// ls_body_shape_count of them).
static rn_body get_body(const rn_source *src, uint32_t i, rn_shape *shapes)
{
    rn_body b = {0};
    ls_body_id id = rn_source_body(src, i);
    ls_vec3 p = ls_body_position(src->world, id);
    b.def = &src->scene.bodies[i];
    b.pos = (rn_vec){fxf(p.x), fxf(p.y), fxf(p.z)};
    b.asleep = ls_body_is_asleep(src->world, id);
    b.id = i + 1;
    b.shape_count = ls_body_shape_count(src->world, id);
    for (uint32_t k = 0; k < b.shape_count; k++) {
        shapes[k] = rn_shape_of(src->world, id, k);
    }
    b.shapes = shapes;
    return b;
}

// A body whose shapes are all ground (planes, meshes) gets no label.
static bool is_ground(const rn_body *b)
{
    for (uint32_t k = 0; k < b->shape_count; k++) {
        ls_shape_type t = b->shapes[k].def.type;
        if (t != LS_SHAPE_PLANE && t != LS_SHAPE_MESH) {
            return false;
        }
    }
    return true;
}

// --contacts: points where two drawn shapes touch (within 2 cm), estimated
// from the shapes themselves (the public API reports contact pairs only, not
// points): the probe points of each shape of one body (box corners, sphere and
// capsule centres with their radius, hull vertices) are tested against the
// signed distance to every shape of the other body. Hulls are measured by
// their face planes (exact near a face, an underestimate near edges and
// corners), meshes by their nearest triangle; meshes have no probe points of
// their own (they are static: the bodies on them probe them).

static rn_vec inv_rotate(const rn_shape *b, rn_vec w)
{
    rn_shape t = *b;
    t.q[0] = -b->q[0], t.q[1] = -b->q[1], t.q[2] = -b->q[2];
    t.pos = (rn_vec){0.0f, 0.0f, 0.0f};
    return rn_shape_point(&t, (rn_vec){w.x - b->pos.x, w.y - b->pos.y, w.z - b->pos.z});
}

static rn_vec vsub(rn_vec a, rn_vec b)
{
    return (rn_vec){a.x - b.x, a.y - b.y, a.z - b.z};
}

static float vdot(rn_vec a, rn_vec b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static rn_vec vcross(rn_vec a, rn_vec b)
{
    return (rn_vec){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

static rn_vec vec_fx(ls_vec3 v)
{
    return (rn_vec){fxf(v.x), fxf(v.y), fxf(v.z)};
}

// Distance from l to the box [lo, hi] (0 inside): a lower bound of the
// distance to anything inside it.
static float box_gap(rn_vec l, rn_vec lo, rn_vec hi)
{
    float dx = fmaxf(0.0f, fmaxf(lo.x - l.x, l.x - hi.x));
    float dy = fmaxf(0.0f, fmaxf(lo.y - l.y, l.y - hi.y));
    float dz = fmaxf(0.0f, fmaxf(lo.z - l.z, l.z - hi.z));
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

// Hull: the largest signed distance to its face planes (negative inside).
static float hull_distance(const ls_hull *h, rn_vec l)
{
    float best = -1e30f;
    uint32_t nf = ls_hull_face_count(h);
    for (uint32_t f = 0; f < nf; f++) {
        uint32_t idx[LS_HULL_MAX_VERTICES];
        uint32_t n = ls_hull_face_vertices(h, f, idx, LS_HULL_MAX_VERTICES);
        if (n < 3) {
            continue;
        }
        // Newell's normal of the polygon (counter-clockwise from outside).
        rn_vec nn = {0.0f, 0.0f, 0.0f};
        n = n < LS_HULL_MAX_VERTICES ? n : LS_HULL_MAX_VERTICES;
        rn_vec first = vec_fx(ls_hull_vertex(h, idx[0])), prev = first;
        for (uint32_t k = 1; k <= n; k++) {
            rn_vec cur = k < n ? vec_fx(ls_hull_vertex(h, idx[k])) : first;
            nn.x += (prev.y - cur.y) * (prev.z + cur.z);
            nn.y += (prev.z - cur.z) * (prev.x + cur.x);
            nn.z += (prev.x - cur.x) * (prev.y + cur.y);
            prev = cur;
        }
        float len = sqrtf(vdot(nn, nn));
        if (len > 0.0f) {
            best = fmaxf(best, vdot(nn, vsub(l, first)) / len);
        }
    }
    return best;
}

// Closest point to p on triangle abc (Ericson, Real-Time Collision Detection 5.1.5).
static rn_vec closest_on_triangle(rn_vec p, rn_vec a, rn_vec b, rn_vec c)
{
    rn_vec ab = vsub(b, a), ac = vsub(c, a), ap = vsub(p, a);
    float d1 = vdot(ab, ap), d2 = vdot(ac, ap);
    if (d1 <= 0.0f && d2 <= 0.0f) {
        return a;
    }
    rn_vec bp = vsub(p, b);
    float d3 = vdot(ab, bp), d4 = vdot(ac, bp);
    if (d3 >= 0.0f && d4 <= d3) {
        return b;
    }
    float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
        float t = d1 / (d1 - d3);
        return (rn_vec){a.x + ab.x * t, a.y + ab.y * t, a.z + ab.z * t};
    }
    rn_vec cp = vsub(p, c);
    float d5 = vdot(ab, cp), d6 = vdot(ac, cp);
    if (d6 >= 0.0f && d5 <= d6) {
        return c;
    }
    float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
        float t = d2 / (d2 - d6);
        return (rn_vec){a.x + ac.x * t, a.y + ac.y * t, a.z + ac.z * t};
    }
    float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && d4 - d3 >= 0.0f && d5 - d6 >= 0.0f) {
        float t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (rn_vec){b.x + (c.x - b.x) * t, b.y + (c.y - b.y) * t, b.z + (c.z - b.z) * t};
    }
    float den = 1.0f / (va + vb + vc), v = vb * den, w = vc * den;
    return (rn_vec){a.x + ab.x * v + ac.x * w, a.y + ab.y * v + ac.y * w,
                    a.z + ab.z * v + ac.z * w};
}

// Mesh: distance to the nearest triangle, negative behind it (below terrain).
static float mesh_distance(const ls_mesh *m, rn_vec l, float reach)
{
    float best = 1e30f, sign = 1.0f;
    uint32_t nt = ls_mesh_triangle_count(m), nv = ls_mesh_vertex_count(m);
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t idx[3];
        ls_mesh_triangle(m, t, idx);
        if (idx[0] >= nv || idx[1] >= nv || idx[2] >= nv) {
            continue;
        }
        rn_vec a = vec_fx(ls_mesh_vertex(m, idx[0])), b = vec_fx(ls_mesh_vertex(m, idx[1]));
        rn_vec c = vec_fx(ls_mesh_vertex(m, idx[2]));
        rn_vec lo = vmin(a, vmin(b, c)), hi = vmax(a, vmax(b, c));
        if (box_gap(l, lo, hi) > fminf(best, reach)) {
            continue;
        }
        rn_vec q = closest_on_triangle(l, a, b, c), d = vsub(l, q);
        float dist = sqrtf(vdot(d, d));
        if (dist < best) {
            best = dist;
            sign = vdot(d, vcross(vsub(b, a), vsub(c, a))) < 0.0f ? -1.0f : 1.0f;
        }
    }
    return best * sign;
}

// Signed distance from world point w to the shape's surface (negative
// inside). Hulls and meshes farther than `reach` may return any value above it.
static float shape_distance(const rn_shape *sh, rn_vec w, float reach)
{
    const ls_shape_def *s = &sh->def;
    rn_vec l = inv_rotate(sh, w);
    switch (s->type) {
    case LS_SHAPE_SPHERE:
        return sqrtf(l.x * l.x + l.y * l.y + l.z * l.z) - fxf(s->radius);
    case LS_SHAPE_CAPSULE: {
        float hh = fxf(s->half_height), y = fmaxf(-hh, fminf(hh, l.y));
        return sqrtf(l.x * l.x + (l.y - y) * (l.y - y) + l.z * l.z) - fxf(s->radius);
    }
    case LS_SHAPE_BOX: {
        float dx = fabsf(l.x) - fxf(s->half_extents.x), dy = fabsf(l.y) - fxf(s->half_extents.y);
        float dz = fabsf(l.z) - fxf(s->half_extents.z);
        float ox = fmaxf(dx, 0.0f), oy = fmaxf(dy, 0.0f), oz = fmaxf(dz, 0.0f);
        return sqrtf(ox * ox + oy * oy + oz * oz) + fminf(0.0f, fmaxf(dx, fmaxf(dy, dz)));
    }
    case LS_SHAPE_PLANE: {
        rn_vec n = {fxf(s->normal.x), fxf(s->normal.y), fxf(s->normal.z)};
        float len = sqrtf(n.x * n.x + n.y * n.y + n.z * n.z);
        return (w.x * n.x + w.y * n.y + w.z * n.z) / len - fxf(s->plane_d);
    }
    case LS_SHAPE_HULL:
    case LS_SHAPE_MESH: {
        float gap = box_gap(l, sh->lo, sh->hi);
        if (gap > reach) {
            return gap;
        }
        if (s->type == LS_SHAPE_HULL) {
            return s->hull ? hull_distance(s->hull, l) : 1e30f;
        }
        return s->mesh ? mesh_distance(s->mesh, l, reach) : 1e30f;
    }
    default:
        break;
    }
    return 1e30f;
}

// The nearest of the body's shapes.
static float body_distance(const rn_body *b, rn_vec w, float reach)
{
    float d = 1e30f;
    for (uint32_t k = 0; k < b->shape_count; k++) {
        d = fminf(d, shape_distance(&b->shapes[k], w, reach));
    }
    return d;
}

// Probe points of one shape (at most LS_HULL_MAX_VERTICES) and their radius
// (0 for corners and vertices); returns their number.
static int shape_probe(const rn_shape *sh, rn_vec *p, float *r)
{
    int n = 0;
    const ls_shape_def *s = &sh->def;
    *r = 0.0f;
    if (s->type == LS_SHAPE_BOX) {
        for (int i = 0; i < 8; i++) {
            rn_vec l = {(i & 1) ? fxf(s->half_extents.x) : -fxf(s->half_extents.x),
                        (i & 2) ? fxf(s->half_extents.y) : -fxf(s->half_extents.y),
                        (i & 4) ? fxf(s->half_extents.z) : -fxf(s->half_extents.z)};
            p[n++] = rn_shape_point(sh, l);
        }
    } else if (s->type == LS_SHAPE_SPHERE || s->type == LS_SHAPE_CAPSULE) {
        float hh = s->type == LS_SHAPE_CAPSULE ? fxf(s->half_height) : 0.0f;
        p[n++] = rn_shape_point(sh, (rn_vec){0.0f, hh, 0.0f});
        if (hh > 0.0f) {
            p[n++] = rn_shape_point(sh, (rn_vec){0.0f, -hh, 0.0f});
        }
        *r = fxf(s->radius);
    } else if (s->type == LS_SHAPE_HULL && s->hull) {
        uint32_t nv = ls_hull_vertex_count(s->hull);
        for (uint32_t i = 0; i < nv && i < LS_HULL_MAX_VERTICES; i++) {
            p[n++] = rn_shape_point(sh, vec_fx(ls_hull_vertex(s->hull, i)));
        }
    }
    return n;
}

static void draw_contacts(rn_canvas *c, const rn_body *bodies, uint32_t n)
{
    const float tol = 0.02f;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t si = 0; si < bodies[i].shape_count; si++) {
            rn_vec pts[LS_HULL_MAX_VERTICES];
            float r;
            int np = shape_probe(&bodies[i].shapes[si], pts, &r);
            for (uint32_t j = 0; j < n && np; j++) {
                if (j == i || (bodies[i].def->type != LS_BODY_DYNAMIC &&
                               bodies[j].def->type != LS_BODY_DYNAMIC)) {
                    continue;
                }
                for (int k = 0; k < np; k++) {
                    float reach = r + tol;
                    float d = body_distance(&bodies[j], pts[k], reach);
                    if (d - r > tol || d < -r - 0.2f) {
                        continue;
                    }
                    rn_vec p = pts[k];
                    if (r > 0.0f) { // move from the centre to the surface towards body j
                        const float e = 0.001f;
                        rn_vec g = {
                            body_distance(&bodies[j], (rn_vec){p.x + e, p.y, p.z}, reach) - d,
                            body_distance(&bodies[j], (rn_vec){p.x, p.y + e, p.z}, reach) - d,
                            body_distance(&bodies[j], (rn_vec){p.x, p.y, p.z + e}, reach) - d};
                        float gl = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z);
                        if (gl <= 0.0f) {
                            continue;
                        }
                        p = (rn_vec){p.x - g.x / gl * r, p.y - g.y / gl * r, p.z - g.z / gl * r};
                    }
                    float x, y;
                    if (rn_project(c, p, &x, &y)) {
                        rn_marker(c, x, y, 2.5f, 235, 30, 30);
                    }
                }
            }
        }
    }
}

typedef struct render_opts {
    int width, height, ss;
    const char *camera;
    bool ids, contacts;
} render_opts;

bool rn_camera_for(const char *spec, const ls_scene *sc, float aspect, rn_camera *cam,
                   float *extent)
{
    view_box vb = scene_bounds(sc);
    *extent = vb.radius;
    return make_camera(spec, &vb, aspect, cam);
}

bool rn_draw_source(rn_source *src, rn_canvas *c, const rn_camera *cam, float extent,
                    const rn_draw_opts *o, char *msg, size_t msg_size)
{
    uint32_t n = src->scene.body_count, total = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += ls_body_shape_count(src->world, rn_source_body(src, i));
    }
    rn_body *bodies = calloc(n ? n : 1, sizeof *bodies);
    rn_shape *shapes = calloc(total ? total : 1, sizeof *shapes);
    if (!bodies || !shapes) {
        free(bodies);
        free(shapes);
        snprintf(msg, msg_size, "out of memory");
        return false;
    }
    rn_canvas_begin(c, cam, extent);
    for (uint32_t i = 0, used = 0; i < n; i++) {
        bodies[i] = get_body(src, i, &shapes[used]);
        used += bodies[i].shape_count;
        for (uint32_t k = 0; k < bodies[i].shape_count; k++) {
            const rn_shape *s = &bodies[i].shapes[k];
            rn_draw_fn draw = rn_shape_drawer(s->def.type);
            if (!draw) {
                continue;
            }
            rn_material m = body_material(src, i, &bodies[i], s->def.type);
            if (o->highlight && o->highlight[i] && !is_ground(&bodies[i])) {
                m.r = 1.0f, m.g = 0.10f, m.b = 0.78f; // magenta: no body has it otherwise
            } else if (o->highlight && s->def.type != LS_SHAPE_PLANE &&
                       s->def.type != LS_SHAPE_MESH) { // the others faded towards grey
                m.r = m.r * 0.35f + 0.62f * 0.65f;
                m.g = m.g * 0.35f + 0.62f * 0.65f;
                m.b = m.b * 0.35f + 0.62f * 0.65f;
            }
            draw(c, s, &m);
        }
    }
    rn_canvas_resolve(c);
    if (o->contacts) {
        draw_contacts(c, bodies, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        float x, y;
        bool lit = o->highlight && o->highlight[i];
        if ((o->ids || lit) && !is_ground(&bodies[i]) && rn_project(c, bodies[i].pos, &x, &y)) {
            // A highlighted body's label goes above it, so that the body shows.
            rn_label(c, x, lit ? y - 16.0f : y, bodies[i].id);
        }
    }
    free(bodies);
    free(shapes);
    return true;
}

static bool render_one(rn_source *src, rn_canvas *c, const rn_camera *cam, float extent,
                       const render_opts *o, const char *out, char *msg, size_t msg_size)
{
    rn_draw_opts d = {o->ids, o->contacts, NULL};
    if (!rn_draw_source(src, c, cam, extent, &d, msg, msg_size) ||
        !rn_write_image(c, out, msg, msg_size)) {
        return false;
    }
    printf("wrote %s (%dx%d, tick %u, %u bodies, hash %016llx)\n", out, c->width, c->height,
           src->tick, src->scene.body_count, (unsigned long long)rn_canvas_hash(c));
    return true;
}

int cmd_render(int argc, char **argv)
{
    const char *input = NULL, *out = NULL, *tick_s = NULL, *frames_s = NULL;
    render_opts o = {640, 400, 2, "auto", false, false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--ids") == 0) {
            o.ids = true;
        } else if (strcmp(a, "--contacts") == 0) {
            o.contacts = true;
        } else if (strcmp(a, "--tick") == 0 || strcmp(a, "--frames") == 0 ||
                   strcmp(a, "--size") == 0 || strcmp(a, "--camera") == 0 ||
                   strcmp(a, "--out") == 0 || strcmp(a, "--ss") == 0) {
            if (!has_value) {
                return cli_usage_error(&cmd_render_def, "%s needs a value", a);
            }
            const char *v = argv[++i];
            if (strcmp(a, "--tick") == 0) {
                tick_s = v;
            } else if (strcmp(a, "--frames") == 0) {
                frames_s = v;
            } else if (strcmp(a, "--camera") == 0) {
                o.camera = v;
            } else if (strcmp(a, "--out") == 0) {
                out = v;
            } else if (strcmp(a, "--ss") == 0) {
                uint32_t ss;
                if (!parse_u32(v, &ss) || ss < 1 || ss > 4) {
                    return cli_usage_error(&cmd_render_def, "--ss wants 1..4 (got '%s')", v);
                }
                o.ss = (int)ss;
            } else {
                unsigned w, h;
                char tail;
                if (sscanf(v, "%ux%u%c", &w, &h, &tail) != 2 || w < 16 || h < 16 || w > 4096 ||
                    h > 4096) {
                    return cli_usage_error(&cmd_render_def,
                                           "--size wants WxH with 16..4096 each (got '%s')", v);
                }
                o.width = (int)w, o.height = (int)h;
            }
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(&cmd_render_def, "unknown option '%s'", a);
        } else if (!input) {
            input = a;
        } else {
            return cli_usage_error(&cmd_render_def, "unexpected argument '%s'", a);
        }
    }
    if (!input) {
        return cli_usage_error(&cmd_render_def, "%s", "missing SCENE or REPLAY");
    }
    if (!out) {
        return cli_usage_error(&cmd_render_def, "%s", "missing --out FILE.png");
    }
    size_t olen = strlen(out);
    if (olen < 5 || (strcmp(out + olen - 4, ".png") != 0 && strcmp(out + olen - 4, ".ppm") != 0)) {
        return cli_usage_error(&cmd_render_def,
                               "--out wants a file name ending in .png (or .ppm) (got '%s')", out);
    }
    if (tick_s && frames_s) {
        return cli_usage_error(&cmd_render_def, "%s", "--tick and --frames exclude each other");
    }
    uint32_t first = 0, last = 0, step = 1;
    if (tick_s && !parse_u32(tick_s, &first)) {
        return cli_usage_error(&cmd_render_def, "--tick wants a tick number (got '%s')", tick_s);
    }
    last = first;
    if (frames_s) {
        char tail;
        if (sscanf(frames_s, "%u:%u:%u%c", &first, &last, &step, &tail) != 3 || step == 0 ||
            last < first || frames_s[0] == '-') {
            return cli_usage_error(&cmd_render_def,
                                   "--frames wants A:B:STEP with A <= B and STEP >= 1 (got '%s')",
                                   frames_s);
        }
        if ((last - first) / step >= 10000) {
            return cli_usage_error(&cmd_render_def,
                                   "--frames '%s' would write more than 10000 files", frames_s);
        }
    }
    rn_camera cam_probe;
    view_box dummy = {{0.0f, 0.0f, 0.0f}, 1.0f, {-1.0f, -1.0f, -1.0f}, {1.0f, 1.0f, 1.0f}};
    if (!make_camera(o.camera, &dummy, 1.0f, &cam_probe)) {
        return cli_usage_error(&cmd_render_def,
                               "--camera wants auto, front, side, top or EX,EY,EZ,TX,TY,TZ[,FOV] "
                               "(got '%s')",
                               o.camera);
    }

    char msg[512], found[4096];
    input = cli_find_scene(input, found, sizeof found);
    rn_source src;
    if (!rn_source_open_file(&src, input, msg, sizeof msg)) {
        fprintf(stderr, "lockstep render: %s: %s\n", input, msg);
        return CLI_EXIT_ERROR;
    }
    if (src.is_replay && last > src.ticks) {
        fprintf(stderr, "lockstep render: %s: tick %u is past the recording's end (%u ticks)\n",
                input, last, src.ticks);
        rn_source_close(&src);
        return CLI_EXIT_ERROR;
    }
    view_box vb = scene_bounds(&src.scene);
    rn_camera cam;
    make_camera(o.camera, &vb, (float)o.width / (float)o.height, &cam);
    rn_canvas canvas;
    if (!rn_canvas_init(&canvas, o.width, o.height, o.ss)) {
        fprintf(stderr, "lockstep render: out of memory\n");
        rn_source_close(&src);
        return CLI_EXIT_ERROR;
    }
    int status = CLI_EXIT_OK;
    for (uint32_t t = first; t <= last; t += step) {
        char path[4096];
        if (frames_s) {
            snprintf(path, sizeof path, "%.*s-%05u%s", (int)(olen - 4), out, t, out + olen - 4);
        } else {
            snprintf(path, sizeof path, "%s", out);
        }
        if (!rn_source_seek(&src, t, msg, sizeof msg) ||
            !render_one(&src, &canvas, &cam, vb.radius, &o, path, msg, sizeof msg)) {
            fprintf(stderr, "lockstep render: %s: %s\n", input, msg);
            status = CLI_EXIT_ERROR;
            break;
        }
        if (last - t < step) {
            break;
        }
    }
    rn_canvas_free(&canvas);
    rn_source_close(&src);
    return status;
}
