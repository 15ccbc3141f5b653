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
    "  --ids             label every body (not planes) with its 1-based id\n"
    "  --contacts        mark contact points (estimated from the drawn shapes)\n"
    "  --ss N            supersampling factor 1..4 (default 2)\n"
    "  --out FILE.png    output file (required)\n\n"
    "The picture is deterministic: the same input gives the same pixels; each\n"
    "written file is printed with a 64-bit FNV-1a hash of its pixels.\n"
    "Sleeping bodies are tinted blue-grey; players have their own colours.\n"
    "Exit status: 0 ok, 1 unreadable input or write error, 2 usage error.\n",
    cmd_render,
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

// Bounds of every non-plane body in the initial scene.
static view_box scene_bounds(const ls_scene *sc)
{
    rn_vec lo = {1e30f, 1e30f, 1e30f}, hi = {-1e30f, -1e30f, -1e30f};
    bool any = false;
    for (uint32_t i = 0; i < sc->body_count; i++) {
        const ls_body_def *d = &sc->bodies[i];
        if (d->shape.type == LS_SHAPE_PLANE) {
            continue;
        }
        // World AABB of the rotated shape: |R| times the local half extents.
        rn_body b = {0};
        b.def = d;
        b.q[0] = fxf(d->orientation.x), b.q[1] = fxf(d->orientation.y);
        b.q[2] = fxf(d->orientation.z), b.q[3] = fxf(d->orientation.w);
        float ql = sqrtf(b.q[0] * b.q[0] + b.q[1] * b.q[1] + b.q[2] * b.q[2] + b.q[3] * b.q[3]);
        for (int k = 0; k < 4; k++) {
            b.q[k] = ql > 0.0f ? b.q[k] / ql : (k == 3 ? 1.0f : 0.0f);
        }
        rn_vec he = {fxf(d->shape.radius), fxf(d->shape.radius), fxf(d->shape.radius)};
        if (d->shape.type == LS_SHAPE_BOX) {
            he = (rn_vec){fxf(d->shape.half_extents.x), fxf(d->shape.half_extents.y),
                          fxf(d->shape.half_extents.z)};
        } else if (d->shape.type == LS_SHAPE_CAPSULE) {
            he.y += fxf(d->shape.half_height);
        }
        rn_vec ex = rn_body_point(&b, (rn_vec){he.x, 0.0f, 0.0f});
        rn_vec ey = rn_body_point(&b, (rn_vec){0.0f, he.y, 0.0f});
        rn_vec ez = rn_body_point(&b, (rn_vec){0.0f, 0.0f, he.z});
        rn_vec h = {fabsf(ex.x) + fabsf(ey.x) + fabsf(ez.x),
                    fabsf(ex.y) + fabsf(ey.y) + fabsf(ez.y),
                    fabsf(ex.z) + fabsf(ey.z) + fabsf(ez.z)};
        rn_vec p = {fxf(d->position.x), fxf(d->position.y), fxf(d->position.z)};
        lo = (rn_vec){fminf(lo.x, p.x - h.x), fminf(lo.y, p.y - h.y), fminf(lo.z, p.z - h.z)};
        hi = (rn_vec){fmaxf(hi.x, p.x + h.x), fmaxf(hi.y, p.y + h.y), fmaxf(hi.z, p.z + h.z)};
        any = true;
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

static rn_material body_material(const rn_source *src, uint32_t i, const rn_body *b)
{
    static const float palette[6][3] = {{0.86f, 0.52f, 0.30f}, {0.90f, 0.74f, 0.34f},
                                        {0.56f, 0.74f, 0.42f}, {0.80f, 0.44f, 0.50f},
                                        {0.52f, 0.64f, 0.84f}, {0.70f, 0.56f, 0.82f}};
    static const float players[4][3] = {
        {0.90f, 0.22f, 0.20f}, {0.20f, 0.45f, 0.92f}, {0.22f, 0.75f, 0.30f}, {0.95f, 0.80f, 0.15f}};
    rn_material m = {0};
    const ls_body_def *d = b->def;
    if (d->shape.type == LS_SHAPE_PLANE) {
        m.r = 0.84f, m.g = 0.83f, m.b = 0.78f;
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

static rn_body get_body(const rn_source *src, uint32_t i)
{
    rn_body b = {0};
    ls_body_id id = rn_source_body(src, i);
    ls_vec3 p = ls_body_position(src->world, id);
    ls_quat q = ls_body_orientation(src->world, id);
    b.def = &src->scene.bodies[i];
    b.pos = (rn_vec){fxf(p.x), fxf(p.y), fxf(p.z)};
    b.q[0] = fxf(q.x), b.q[1] = fxf(q.y), b.q[2] = fxf(q.z), b.q[3] = fxf(q.w);
    b.asleep = ls_body_is_asleep(src->world, id);
    b.id = i + 1;
    return b;
}

// --contacts: points where two drawn shapes touch (within 2 cm), estimated
// from the shapes themselves (the public API reports contact pairs only).
typedef struct probe {
    rn_vec p[9];
    int n;
    float r; // radius around the probe points (0 for box corners)
} probe;

static rn_vec inv_rotate(const rn_body *b, rn_vec w)
{
    rn_body t = *b;
    t.q[0] = -b->q[0], t.q[1] = -b->q[1], t.q[2] = -b->q[2];
    t.pos = (rn_vec){0.0f, 0.0f, 0.0f};
    return rn_body_point(&t, (rn_vec){w.x - b->pos.x, w.y - b->pos.y, w.z - b->pos.z});
}

// Signed distance from world point w to the body's surface (negative inside).
static float body_distance(const rn_body *b, rn_vec w)
{
    const ls_shape_def *s = &b->def->shape;
    rn_vec l = inv_rotate(b, w);
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
    }
    return 1e30f;
}

static probe body_probe(const rn_body *b)
{
    probe pr = {0};
    const ls_shape_def *s = &b->def->shape;
    if (s->type == LS_SHAPE_BOX) {
        for (int i = 0; i < 8; i++) {
            rn_vec l = {(i & 1) ? fxf(s->half_extents.x) : -fxf(s->half_extents.x),
                        (i & 2) ? fxf(s->half_extents.y) : -fxf(s->half_extents.y),
                        (i & 4) ? fxf(s->half_extents.z) : -fxf(s->half_extents.z)};
            pr.p[pr.n++] = rn_body_point(b, l);
        }
    } else if (s->type == LS_SHAPE_SPHERE || s->type == LS_SHAPE_CAPSULE) {
        float hh = s->type == LS_SHAPE_CAPSULE ? fxf(s->half_height) : 0.0f;
        pr.p[pr.n++] = rn_body_point(b, (rn_vec){0.0f, hh, 0.0f});
        if (hh > 0.0f) {
            pr.p[pr.n++] = rn_body_point(b, (rn_vec){0.0f, -hh, 0.0f});
        }
        pr.r = fxf(s->radius);
    }
    return pr;
}

static void draw_contacts(rn_canvas *c, const rn_body *bodies, uint32_t n)
{
    const float tol = 0.02f;
    for (uint32_t i = 0; i < n; i++) {
        probe pr = body_probe(&bodies[i]);
        for (uint32_t j = 0; j < n && pr.n; j++) {
            if (j == i || (bodies[i].def->type != LS_BODY_DYNAMIC &&
                           bodies[j].def->type != LS_BODY_DYNAMIC)) {
                continue;
            }
            for (int k = 0; k < pr.n; k++) {
                float d = body_distance(&bodies[j], pr.p[k]);
                if (d - pr.r > tol || d < -pr.r - 0.2f) {
                    continue;
                }
                rn_vec p = pr.p[k];
                if (pr.r > 0.0f) { // move from the centre to the surface towards body j
                    const float e = 0.001f;
                    rn_vec g = {body_distance(&bodies[j], (rn_vec){p.x + e, p.y, p.z}) - d,
                                body_distance(&bodies[j], (rn_vec){p.x, p.y + e, p.z}) - d,
                                body_distance(&bodies[j], (rn_vec){p.x, p.y, p.z + e}) - d};
                    float gl = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z);
                    if (gl <= 0.0f) {
                        continue;
                    }
                    p = (rn_vec){p.x - g.x / gl * pr.r, p.y - g.y / gl * pr.r,
                                 p.z - g.z / gl * pr.r};
                }
                float x, y;
                if (rn_project(c, p, &x, &y)) {
                    rn_marker(c, x, y, 2.5f, 235, 30, 30);
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

static bool render_one(rn_source *src, rn_canvas *c, const rn_camera *cam, float extent,
                       const render_opts *o, const char *out, char *msg, size_t msg_size)
{
    uint32_t n = src->scene.body_count;
    rn_body *bodies = calloc(n ? n : 1, sizeof *bodies);
    if (!bodies) {
        snprintf(msg, msg_size, "out of memory");
        return false;
    }
    rn_canvas_begin(c, cam, extent);
    for (uint32_t i = 0; i < n; i++) {
        bodies[i] = get_body(src, i);
        rn_draw_fn draw = rn_shape_drawer(bodies[i].def->shape.type);
        if (draw) {
            rn_material m = body_material(src, i, &bodies[i]);
            draw(c, &bodies[i], &m);
        }
    }
    rn_canvas_resolve(c);
    if (o->contacts) {
        draw_contacts(c, bodies, n);
    }
    if (o->ids) {
        for (uint32_t i = 0; i < n; i++) {
            float x, y;
            if (bodies[i].def->shape.type != LS_SHAPE_PLANE &&
                rn_project(c, bodies[i].pos, &x, &y)) {
                rn_label(c, x, y, bodies[i].id);
            }
        }
    }
    free(bodies);
    if (!rn_write_png(c, out, msg, msg_size)) {
        return false;
    }
    printf("wrote %s (%dx%d, tick %u, %u bodies, hash %016llx)\n", out, c->width, c->height,
           src->tick, n, (unsigned long long)rn_canvas_hash(c));
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
    if (olen < 5 || strcmp(out + olen - 4, ".png") != 0) {
        return cli_usage_error(&cmd_render_def, "--out wants a file name ending in .png (got '%s')",
                               out);
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
            snprintf(path, sizeof path, "%.*s-%05u.png", (int)(olen - 4), out, t);
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
