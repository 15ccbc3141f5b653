// SPDX-License-Identifier: MIT
// Software rasteriser: pinhole camera, near-plane clipping, z-buffer with
// perspective-correct interpolation, flat Lambert shading, a fading 1 m grid on
// planes, supersampling, labels, and PNG output through libpng. Every pixel
// comes from the same float operations in the same order, so the output is
// the same on every run.
#include "render.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR_Z 0.05f

static rn_vec v_sub(rn_vec a, rn_vec b)
{
    return (rn_vec){a.x - b.x, a.y - b.y, a.z - b.z};
}

static rn_vec v_add(rn_vec a, rn_vec b)
{
    return (rn_vec){a.x + b.x, a.y + b.y, a.z + b.z};
}

static rn_vec v_scale(rn_vec a, float s)
{
    return (rn_vec){a.x * s, a.y * s, a.z * s};
}

static float v_dot(rn_vec a, rn_vec b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static rn_vec v_cross(rn_vec a, rn_vec b)
{
    return (rn_vec){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

static rn_vec v_norm(rn_vec a)
{
    float l = sqrtf(v_dot(a, a));
    return l > 0.0f ? v_scale(a, 1.0f / l) : a;
}

bool rn_canvas_init(rn_canvas *c, int width, int height, int ss)
{
    memset(c, 0, sizeof *c);
    c->width = width;
    c->height = height;
    c->ss = ss;
    c->sw = width * ss;
    c->sh = height * ss;
    size_t n = (size_t)c->sw * (size_t)c->sh;
    c->color = malloc(n * 3 * sizeof *c->color);
    c->depth = malloc(n * sizeof *c->depth);
    c->rgb = malloc((size_t)width * (size_t)height * 3);
    if (!c->color || !c->depth || !c->rgb) {
        rn_canvas_free(c);
        return false;
    }
    return true;
}

void rn_canvas_free(rn_canvas *c)
{
    free(c->color);
    free(c->depth);
    free(c->rgb);
    memset(c, 0, sizeof *c);
}

void rn_canvas_begin(rn_canvas *c, const rn_camera *cam, float extent)
{
    c->cam = *cam;
    c->extent = extent;
    c->fwd = v_norm(v_sub(cam->target, cam->eye));
    rn_vec world_up = {0.0f, 1.0f, 0.0f};
    if (fabsf(v_dot(c->fwd, world_up)) > 0.999f) {
        world_up = (rn_vec){0.0f, 0.0f, -1.0f};
    }
    c->right = v_norm(v_cross(c->fwd, world_up));
    c->up = v_cross(c->right, c->fwd);
    c->focal = (float)c->sh * 0.5f / tanf(cam->fov_deg * 0.5f * 3.14159265f / 180.0f);
    c->light = v_norm((rn_vec){0.35f, 1.0f, 0.55f});
    // Sky: a vertical gradient.
    for (int y = 0; y < c->sh; y++) {
        float t = (float)y / (float)(c->sh - 1);
        float r = 0.62f + 0.25f * t, g = 0.74f + 0.18f * t, b = 0.90f + 0.08f * t;
        for (int x = 0; x < c->sw; x++) {
            size_t i = (size_t)y * (size_t)c->sw + (size_t)x;
            c->color[i * 3] = r;
            c->color[i * 3 + 1] = g;
            c->color[i * 3 + 2] = b;
            c->depth[i] = 0.0f;
        }
    }
}

static rn_vec to_view(const rn_canvas *c, rn_vec p)
{
    rn_vec d = v_sub(p, c->cam.eye);
    return (rn_vec){v_dot(d, c->right), v_dot(d, c->up), v_dot(d, c->fwd)};
}

bool rn_project(const rn_canvas *c, rn_vec p, float *x, float *y)
{
    rn_vec v = to_view(c, p);
    if (v.z < NEAR_Z) {
        return false;
    }
    float s = c->focal / v.z / (float)c->ss;
    *x = (float)c->width * 0.5f + v.x * s;
    *y = (float)c->height * 0.5f - v.y * s;
    return true;
}

typedef struct clip_vert {
    rn_vec view;  // camera space
    rn_vec world; // for the grid
} clip_vert;

static clip_vert lerp_vert(clip_vert a, clip_vert b, float t)
{
    clip_vert r;
    r.view = v_add(a.view, v_scale(v_sub(b.view, a.view), t));
    r.world = v_add(a.world, v_scale(v_sub(b.world, a.world), t));
    return r;
}

static float frac_dist(float x)
{
    float f = x - floorf(x);
    return f < 0.5f ? f : 1.0f - f;
}

// Shade one pixel of a surface with normal n (facing the camera).
static void shade(const rn_canvas *c, const rn_material *m, float lambert, rn_vec world,
                  float view_z, float *out)
{
    float r = m->r, g = m->g, b = m->b;
    if (m->grid) {
        rn_vec d = v_sub(world, m->origin);
        float gu = frac_dist(v_dot(d, m->u)), gv = frac_dist(v_dot(d, m->v));
        float w = 0.012f + view_z * 0.0012f;
        float major_u = frac_dist(v_dot(d, m->u) * 0.2f) * 5.0f;
        float major_v = frac_dist(v_dot(d, m->v) * 0.2f) * 5.0f;
        float fade = 1.0f - fminf(1.0f, view_z / (c->extent * 3.0f + 10.0f));
        if (major_u < w * 1.6f || major_v < w * 1.6f) {
            float k = 1.0f - 0.35f * fade;
            r *= k, g *= k, b *= k;
        } else if (gu < w || gv < w) {
            float k = 1.0f - 0.18f * fade;
            r *= k, g *= k, b *= k;
        }
    }
    float l = 0.38f + 0.62f * lambert;
    // Distance haze towards the horizon colour.
    float haze = fminf(0.7f, view_z / (c->extent * 10.0f + 60.0f));
    out[0] = (r * l) * (1.0f - haze) + 0.80f * haze;
    out[1] = (g * l) * (1.0f - haze) + 0.86f * haze;
    out[2] = (b * l) * (1.0f - haze) + 0.95f * haze;
}

static void raster_tri(rn_canvas *c, const clip_vert *v0, const clip_vert *v1, const clip_vert *v2,
                       const rn_material *m, float lambert)
{
    const clip_vert *vs[3] = {v0, v1, v2};
    float sx[3], sy[3], iz[3];
    for (int i = 0; i < 3; i++) {
        iz[i] = 1.0f / vs[i]->view.z;
        sx[i] = (float)c->sw * 0.5f + vs[i]->view.x * c->focal * iz[i];
        sy[i] = (float)c->sh * 0.5f - vs[i]->view.y * c->focal * iz[i];
    }
    float area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
    if (fabsf(area) < 1e-9f) {
        return;
    }
    float minx = fminf(sx[0], fminf(sx[1], sx[2])), maxx = fmaxf(sx[0], fmaxf(sx[1], sx[2]));
    float miny = fminf(sy[0], fminf(sy[1], sy[2])), maxy = fmaxf(sy[0], fmaxf(sy[1], sy[2]));
    int x0 = (int)fmaxf(0.0f, floorf(minx)), x1 = (int)fminf((float)c->sw - 1, ceilf(maxx));
    int y0 = (int)fmaxf(0.0f, floorf(miny)), y1 = (int)fminf((float)c->sh - 1, ceilf(maxy));
    float inv_area = 1.0f / area;
    for (int y = y0; y <= y1; y++) {
        float py = (float)y + 0.5f;
        for (int x = x0; x <= x1; x++) {
            float px = (float)x + 0.5f;
            float w0 = ((sx[2] - sx[1]) * (py - sy[1]) - (sy[2] - sy[1]) * (px - sx[1])) * inv_area;
            float w1 = ((sx[0] - sx[2]) * (py - sy[2]) - (sy[0] - sy[2]) * (px - sx[2])) * inv_area;
            float w2 = 1.0f - w0 - w1;
            // A little overlap across shared edges: no cracks from rounding.
            if (w0 < -1e-4f || w1 < -1e-4f || w2 < -1e-4f) {
                continue;
            }
            float z = w0 * iz[0] + w1 * iz[1] + w2 * iz[2];
            size_t i = (size_t)y * (size_t)c->sw + (size_t)x;
            if (z <= c->depth[i]) {
                continue;
            }
            c->depth[i] = z;
            float view_z = 1.0f / z;
            rn_vec world = {0.0f, 0.0f, 0.0f};
            if (m->grid) {
                world = v_scale(
                    v_add(v_add(v_scale(v0->world, w0 * iz[0]), v_scale(v1->world, w1 * iz[1])),
                          v_scale(v2->world, w2 * iz[2])),
                    view_z);
            }
            shade(c, m, lambert, world, view_z, &c->color[i * 3]);
        }
    }
}

void rn_triangle(rn_canvas *c, rn_vec a, rn_vec b, rn_vec d, const rn_material *m)
{
    rn_vec n = v_norm(v_cross(v_sub(b, a), v_sub(d, a)));
    if (v_dot(n, v_sub(c->cam.eye, a)) < 0.0f) {
        n = v_scale(n, -1.0f); // two-sided: light the face the camera sees
    }
    float lambert = fmaxf(0.0f, v_dot(n, c->light));
    clip_vert in[3] = {{to_view(c, a), a}, {to_view(c, b), b}, {to_view(c, d), d}};
    // Clip against the near plane (Sutherland-Hodgman): at most 4 vertices.
    clip_vert out[4];
    int n_out = 0;
    for (int i = 0; i < 3; i++) {
        const clip_vert *p = &in[i], *q = &in[(i + 1) % 3];
        bool pin = p->view.z >= NEAR_Z, qin = q->view.z >= NEAR_Z;
        if (pin) {
            out[n_out++] = *p;
        }
        if (pin != qin) {
            float t = (NEAR_Z - p->view.z) / (q->view.z - p->view.z);
            out[n_out++] = lerp_vert(*p, *q, t);
        }
    }
    for (int i = 1; i + 1 < n_out; i++) {
        raster_tri(c, &out[0], &out[i], &out[i + 1], m, lambert);
    }
}

static uint8_t to_byte(float v)
{
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    return (uint8_t)(v * 255.0f + 0.5f);
}

void rn_canvas_resolve(rn_canvas *c)
{
    float inv = 1.0f / (float)(c->ss * c->ss);
    for (int y = 0; y < c->height; y++) {
        for (int x = 0; x < c->width; x++) {
            float acc[3] = {0.0f, 0.0f, 0.0f};
            for (int sy = 0; sy < c->ss; sy++) {
                for (int sx = 0; sx < c->ss; sx++) {
                    size_t i = (size_t)(y * c->ss + sy) * (size_t)c->sw + (size_t)(x * c->ss + sx);
                    for (int k = 0; k < 3; k++) {
                        acc[k] += c->color[i * 3 + (size_t)k]; // linear light
                    }
                }
            }
            uint8_t *o = &c->rgb[((size_t)y * (size_t)c->width + (size_t)x) * 3];
            for (int k = 0; k < 3; k++) {
                o[k] = to_byte(acc[k] * inv);
            }
        }
    }
}

static void put(rn_canvas *c, int x, int y, uint8_t r, uint8_t g, uint8_t b)
{
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) {
        return;
    }
    uint8_t *o = &c->rgb[((size_t)y * (size_t)c->width + (size_t)x) * 3];
    o[0] = r;
    o[1] = g;
    o[2] = b;
}

void rn_marker(rn_canvas *c, float x, float y, float radius, uint8_t r, uint8_t g, uint8_t b)
{
    int x0 = (int)floorf(x - radius - 1), x1 = (int)ceilf(x + radius + 1);
    int y0 = (int)floorf(y - radius - 1), y1 = (int)ceilf(y + radius + 1);
    for (int py = y0; py <= y1; py++) {
        for (int px = x0; px <= x1; px++) {
            float dx = (float)px + 0.5f - x, dy = (float)py + 0.5f - y;
            float d = sqrtf(dx * dx + dy * dy);
            if (d <= radius) {
                put(c, px, py, r, g, b);
            } else if (d <= radius + 1.0f) {
                put(c, px, py, 20, 20, 20);
            }
        }
    }
}

// 3x5 digits, one row per 3 bits (MSB left).
static const uint8_t digits[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
};

void rn_label(rn_canvas *c, float x, float y, unsigned value)
{
    char text[16];
    int n = snprintf(text, sizeof text, "%u", value);
    const int scale = 2, adv = 4 * scale;
    int left = (int)floorf(x) - (n * adv - scale) / 2, top = (int)floorf(y) - 5 * scale / 2;
    // Dark box behind, then white digits.
    for (int py = top - 2; py < top + 5 * scale + 2; py++) {
        for (int px = left - 2; px < left + n * adv - scale + 2; px++) {
            put(c, px, py, 25, 25, 35);
        }
    }
    for (int k = 0; k < n; k++) {
        const uint8_t *g = digits[text[k] - '0'];
        for (int row = 0; row < 5; row++) {
            for (int col = 0; col < 3; col++) {
                if (g[row] & (4 >> col)) {
                    for (int s = 0; s < scale * scale; s++) {
                        put(c, left + k * adv + col * scale + s % scale,
                            top + row * scale + s / scale, 255, 255, 255);
                    }
                }
            }
        }
    }
}

uint64_t rn_canvas_hash(const rn_canvas *c)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n = (size_t)c->width * (size_t)c->height * 3;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ c->rgb[i]) * 0x100000001b3ull;
    }
    return h;
}

bool rn_write_png(const rn_canvas *c, const char *path, char *msg, size_t msg_size)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(msg, msg_size, "cannot create %s", path);
        return false;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        snprintf(msg, msg_size, "libpng failed writing %s", path);
        return false;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)c->width, (png_uint_32)c->height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 9);
    png_write_info(png, info);
    for (int y = 0; y < c->height; y++) {
        png_write_row(png, &c->rgb[(size_t)y * (size_t)c->width * 3]);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) {
        snprintf(msg, msg_size, "cannot write %s", path);
        return false;
    }
    return true;
}

bool rn_write_ppm(const rn_canvas *c, const char *path, char *msg, size_t msg_size)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(msg, msg_size, "cannot create %s", path);
        return false;
    }
    size_t n = (size_t)c->width * (size_t)c->height * 3;
    bool ok =
        fprintf(f, "P6\n%d %d\n255\n", c->width, c->height) > 0 && fwrite(c->rgb, 1, n, f) == n;
    if (fclose(f) != 0 || !ok) {
        snprintf(msg, msg_size, "cannot write %s", path);
        return false;
    }
    return true;
}

bool rn_write_image(const rn_canvas *c, const char *path, char *msg, size_t msg_size)
{
    size_t len = strlen(path);
    bool ppm = len >= 4 && strcmp(path + len - 4, ".ppm") == 0;
    return ppm ? rn_write_ppm(c, path, msg, msg_size) : rn_write_png(c, path, msg, msg_size);
}
