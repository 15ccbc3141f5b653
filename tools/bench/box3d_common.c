// SPDX-License-Identifier: MIT
// Section 9 (box3d_bench.h): the scene descriptions both engines build, the
// rain spawn schedule, the driver that times a scene Box3D's way, the rollback
// capacity search and the section's table (`--report FILE`). No engine here:
// box3d_ours.c and box3d_peer.c link this file.
#define _POSIX_C_SOURCE 200809L
#include "box3d_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ALL_BITS 0xFFFFFFFFu

// ---- scene descriptions ----------------------------------------------------

static b3b_body *add_body(b3b_scene *s, uint32_t *cap)
{
    if (s->body_count == *cap) {
        uint32_t n = *cap ? 2 * *cap : 256;
        b3b_body *b = realloc(s->bodies, n * sizeof *b);
        if (!b) {
            return NULL;
        }
        s->bodies = b, *cap = n;
    }
    b3b_body *b = &s->bodies[s->body_count++];
    memset(b, 0, sizeof *b);
    b->category = 1, b->mask = ALL_BITS, b->density = 1000; // Box3D's default shape
    return b;
}

static b3b_body *add_box(b3b_scene *s, uint32_t *cap, double x, double y, double z, double h,
                         double density)
{
    b3b_body *b = add_body(s, cap);
    if (b) {
        b->dynamic = 1, b->shape = B3B_BOX;
        b->pos[0] = x, b->pos[1] = y, b->pos[2] = z;
        b->half[0] = b->half[1] = b->half[2] = h;
        b->density = density;
    }
    return b;
}

static void set_ground(b3b_scene *s, double hx, double hz)
{
    s->ground = 1;
    s->ground_half[0] = hx, s->ground_half[1] = 1, s->ground_half[2] = hz;
}

// Box3D's CreateLargePyramid with any base: boxes of 0.5 m half extents and
// density 100 in one plane (z = 0), world sleep off, ground box 400 x 1 x 400.
static int pyramid(b3b_scene *s, int base, uint32_t steps)
{
    uint32_t cap = 0;
    set_ground(s, 400, 400);
    s->steps = steps, s->sleep = 0, s->sleep_extent = 0.5;
    float h = 0.5f, shift = 1.0f * h; // Box3D computes in float; every value here is exact
    for (int i = 0; i < base; i++) {
        float y = (2.0f * (float)i + 1.0f) * shift;
        for (int j = i; j < base; j++) {
            float x = ((float)i + 1.0f) * shift + 2.0f * (float)(j - i) * shift - h * (float)base;
            b3b_body *b = add_box(s, &cap, x, y, 0, h, 100);
            if (!b) {
                return -1;
            }
            b->top = i == base - 1;
        }
    }
    return 0;
}

// Box3D's CreateManyPyramids: 14 x 14 pyramids of base 10 (bodies never sleep).
static int many_pyramids(b3b_scene *s)
{
    uint32_t cap = 0;
    const int base = 10, rows = 14, columns = 14;
    const float extent = 0.5f;
    float ground = extent * (float)columns * ((float)base + 1.0f);
    set_ground(s, ground, ground);
    s->steps = 100, s->sleep = 0, s->sleep_extent = 0.5;
    float width = 2.0f * extent * (float)base;
    float base_z = -ground + 2.0f * extent;
    float delta_z = 2.0f * (ground - 2.0f * extent) / ((float)rows - 1.0f);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < columns; c++) {
            float centre_x = -ground + (float)c * (width + 2.0f * extent) + 2.0f * extent;
            for (int i = 0; i < base; i++) {
                float y = (2.0f * (float)i + 1.0f) * extent;
                for (int j = i; j < base; j++) {
                    float x = ((float)i + 1.0f) * extent + 2.0f * (float)(j - i) * extent +
                              centre_x - 0.5f;
                    b3b_body *b = add_box(s, &cap, x, y, base_z, extent, 100);
                    if (!b) {
                        return -1;
                    }
                    b->top = i == base - 1;
                }
            }
        }
        base_z += delta_z;
    }
    return 0;
}

// Box3D's CreateJointGrid: 100 x 100 spheres of radius 0.4 in the plane z = 0,
// the top row static, each sphere joined to the one above and the one to its
// left by spherical joints; the spheres never collide with each other
// (category 2, mask ~2); no ground, no sleep.
static int joint_grid(b3b_scene *s)
{
    const int n = 100;
    uint32_t cap = 0;
    s->steps = 100, s->sleep = 0, s->sleep_extent = 0.4;
    s->joints = calloc((size_t)2 * (size_t)n * (size_t)n, sizeof *s->joints);
    if (!s->joints) {
        return -1;
    }
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < n; i++) {
            uint32_t index = s->body_count;
            b3b_body *b = add_body(s, &cap);
            if (!b) {
                return -1;
            }
            b->dynamic = i != 0, b->shape = B3B_SPHERE, b->radius = 0.4;
            b->pos[0] = k, b->pos[1] = -i, b->pos[2] = 0;
            b->category = 2, b->mask = ~2u;
            if (i > 0) { // to the sphere above: anchor 0.5 m below it
                b3b_joint *j = &s->joints[s->joint_count++];
                j->a = index - 1, j->b = index;
                j->anchor[0] = k, j->anchor[1] = -i + 0.5, j->anchor[2] = 0;
            }
            if (k > 0) { // to the sphere on the left: anchor 0.5 m right of it
                b3b_joint *j = &s->joints[s->joint_count++];
                j->a = index - (uint32_t)n, j->b = index;
                j->anchor[0] = k - 0.5, j->anchor[1] = -i, j->anchor[2] = 0;
            }
        }
    }
    return 0;
}

// The convex pile's hull: 32 points on a sphere of radius 2 from the same
// linear congruential generator, seed and rejection sampling as Box3D's
// CreateConvexPile (PEEL's BasicRandom), in float as Box3D computes them.
static uint32_t pile_rng(uint32_t *state)
{
    *state = *state * 2147001325u + 715136305u;
    return *state;
}

static float pile_float(uint32_t *state)
{
    return (float)(pile_rng(state) & 0xffff) / 65535.0f - 0.5f;
}

static int convex_pile(b3b_scene *s)
{
    const int count_x = 8, count_z = 8, layers = 80, points = 32;
    const float amplitude = 2.0f, scatter = 2.0f * amplitude;
    uint32_t cap = 0, state = 42;
    set_ground(s, 250, 250);
    s->steps = 500, s->sleep = 1, s->sleep_extent = amplitude;
    for (int i = 0; i < points; i++) {
        float p[3], len2;
        do {
            p[0] = pile_float(&state), p[1] = pile_float(&state), p[2] = pile_float(&state);
            len2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
        } while (len2 > 0.25f);
        float inv = 1.0f / sqrtf(len2);
        for (int c = 0; c < 3; c++) {
            s->hull[i][c] = amplitude * (inv * p[c]);
        }
    }
    s->hull_count = (uint32_t)points;
    // Box3D's density 1000 makes each hull ~24 t; ours takes at most 1000 kg
    // per body. Every body of the pile has the same mass and the ground is
    // static, so the motion does not depend on the mass scale: 1000/32.
    s->ours_density = 1000.0 / 32.0;
    for (int layer = 0; layer < layers; layer++) {
        for (int z = 0; z < count_z; z++) {
            for (int x = 0; x < count_x; x++) {
                b3b_body *b = add_body(s, &cap);
                if (!b) {
                    return -1;
                }
                b->dynamic = 1, b->shape = B3B_HULL;
                b->pos[0] = ((float)x - 0.5f * (float)count_x) * scatter;
                b->pos[1] = amplitude + 2.0f * amplitude * (float)layer;
                b->pos[2] = ((float)z - 0.5f * (float)count_z) * scatter;
            }
        }
    }
    return 0;
}

int b3b_pile_build(uint32_t n, b3b_scene *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "pile_%u", n);
    uint32_t cap = 0, k = 1;
    while (4 * k * k < n) { // columns of about 4 boxes
        k++;
    }
    const double spacing = 1.25, offset = 0.3;
    s->steps = 0, s->sleep = 0, s->sleep_extent = 0.5;
    s->bin_half = (double)(k - 1) * spacing / 2 + offset + 1.0;
    set_ground(s, s->bin_half + 2, s->bin_half + 2);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t layer = i / (k * k), r = i % (k * k);
        double shift = (layer & 1) ? offset : 0; // odd layers land across the gaps: a pile
        double x = ((double)(r % k) - (double)(k - 1) / 2) * spacing + shift;
        double z = ((double)(r / k) - (double)(k - 1) / 2) * spacing + shift;
        b3b_body *b = add_box(s, &cap, x, 0.55 + spacing * layer, z, 0.5, 100);
        if (!b) {
            return -1;
        }
        b->yaw = ((double)((i * 7) % 11) - 5) * 0.03;
    }
    return 0;
}

int b3b_scene_build(const char *name, b3b_scene *s, char *err, size_t err_size)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    int rc = -1, base = 0;
    char tail = 0;
    if (strcmp(name, "large_pyramid") == 0) {
        rc = pyramid(s, 100, 200);
    } else if (strcmp(name, "many_pyramids") == 0) {
        rc = many_pyramids(s);
    } else if (strcmp(name, "joint_grid") == 0) {
        rc = joint_grid(s);
    } else if (strcmp(name, "convex_pile") == 0) {
        rc = convex_pile(s);
    } else if (strcmp(name, "rain") == 0) {
        s->rain = 1, s->steps = 400, s->sleep = 1, s->sleep_extent = 0.25, s->rolling = 0.2;
        rc = 0;
    } else if (sscanf(name, "pyramid_%d%c", &base, &tail) == 1 && base >= 1 && base <= 200) {
        rc = pyramid(s, base, 200); // large_pyramid with another base, 200 steps, no sleep
    } else if (sscanf(name, "pile_%d%c", &base, &tail) == 1 && base >= 1 && base <= 65536) {
        rc = b3b_pile_build((uint32_t)base, s); // the rollback search's pile, 300 steps
        s->steps = 300;
    } else {
        snprintf(err, err_size,
                 "unknown scene '%s' (large_pyramid, many_pyramids, joint_grid, convex_pile, "
                 "rain, pyramid_N, pile_N)",
                 name);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, err_size, "out of memory building %s", name);
        b3b_scene_free(s);
        return -1;
    }
    for (uint32_t i = 0; i < s->body_count; i++) {
        s->tops += (uint32_t)s->bodies[i].top;
    }
    return 0;
}

void b3b_scene_free(b3b_scene *s)
{
    free(s->bodies);
    free(s->joints);
    s->bodies = NULL, s->joints = NULL;
    s->body_count = s->joint_count = 0;
}

int b3b_rain_tick(b3b_rain_state *r, uint32_t step, int *replace)
{
    if ((step & 0x2F) != 0) { // Box3D's release delay mask: steps 0, 16, 64, 80, 128, ...
        return -1;
    }
    if (r->column_count < B3B_RAIN_GRID) {
        *replace = 0;
        return r->column_count++;
    }
    int c = r->column_index;
    r->column_index = (r->column_index + 1) % B3B_RAIN_GRID;
    *replace = 1;
    return c;
}

void b3b_rain_origin(int row, int column, double out[3])
{
    float span = (float)(B3B_RAIN_GRID * B3B_RAIN_CELL), d = span / (float)B3B_RAIN_GRID;
    out[0] = -0.5f * span + d * ((float)column + 0.5f);
    out[1] = 20.0;
    out[2] = -0.5f * span + d * ((float)row + 0.5f);
}

// ---- the driver --------------------------------------------------------------

static void usage(const char *name)
{
    printf("usage: bench_box3d_%s --scene NAME [--threads N] [--substeps N|default] [--steps N]\n"
           "                       [--csv FILE] [--quiet]\n"
           "       bench_box3d_%s --rollback [--threads N] [--substeps N|default] [--csv FILE] "
           "[--quiet]\n"
           "       bench_box3d_%s --report FILE\n"
           "  scenes (Box3D's benchmark/main.c): large_pyramid (200 steps), many_pyramids (100),\n"
           "  joint_grid (100), convex_pile (500), rain (400); pyramid_N: large_pyramid with base\n"
           "  N; pile_N: the rollback search's N-box pile (300 steps, 240 of them settling).\n"
           "  60 Hz, gravity -10, 4 sub-steps unless --substeps; ms/step = wall time of steps\n"
           "  1..N-1 / (N-1) (step 0 is the untimed warm-up, as Box3D's driver does).\n"
           "  --rollback: the largest N whose awake, settled N-box pile steps 9 times in\n"
           "  <= 16.7 ms. --csv appends rows `box3d,SCENE,ENGINE,metric,value,unit`.\n"
           "  --report FILE prints the section's tables from such rows.\n",
           name, name, name);
}

static void label(const b3b_engine *e, const b3b_opts *o, char *out, size_t n)
{
    char ss[32] = "", w[32] = "";
    if (o->substeps == 0) {
        snprintf(ss, sizeof ss, "_default");
    } else if (o->substeps != 4) {
        snprintf(ss, sizeof ss, "_%dss", o->substeps);
    }
    if (o->threads > 1) {
        snprintf(w, sizeof w, "_%uw", o->threads);
    }
    snprintf(out, n, "%s%s%s", e->name, ss, w);
}

static int cmp_state(const void *a, const void *b)
{
    uint64_t x = ((const b3b_state *)a)->key, y = ((const b3b_state *)b)->key;
    return (x > y) - (x < y);
}

static b3b_state *snapshot(const b3b_engine *e, void *h, uint32_t *count)
{
    uint32_t n = e->bodies(h, NULL, 0);
    b3b_state *s = calloc(n ? n : 1, sizeof *s);
    if (!s) {
        *count = 0;
        return NULL;
    }
    *count = e->bodies(h, s, n);
    qsort(s, *count, sizeof *s, cmp_state);
    return s;
}

// Bodies alive in both snapshots whose centre of mass moved more than 1 cm.
static uint32_t moved(const b3b_state *a, uint32_t na, const b3b_state *b, uint32_t nb)
{
    uint32_t i = 0, j = 0, m = 0;
    while (i < na && j < nb) {
        if (a[i].key < b[j].key) {
            i++;
        } else if (a[i].key > b[j].key) {
            j++;
        } else {
            double dx = a[i].p[0] - b[j].p[0], dy = a[i].p[1] - b[j].p[1],
                   dz = a[i].p[2] - b[j].p[2];
            m += dx * dx + dy * dy + dz * dz > 1e-4;
            i++, j++;
        }
    }
    return m;
}

static void row(FILE *f, const char *scene, const char *engine, const char *metric, double v,
                const char *unit)
{
    if (f) {
        fprintf(f, "box3d,%s,%s,%s,%.9g,%s\n", scene, engine, metric, v, unit);
    }
}

static FILE *open_csv(const b3b_opts *o)
{
    if (!o->csv) {
        return NULL;
    }
    FILE *f = fopen(o->csv, "a");
    if (!f) {
        perror(o->csv);
    }
    return f;
}

static int run_scene(const b3b_engine *e, const b3b_opts *o)
{
    b3b_scene s;
    char err[256] = "", name[64];
    label(e, o, name, sizeof name);
    if (b3b_scene_build(o->scene, &s, err, sizeof err) != 0) {
        fprintf(stderr, "bench_box3d_%s: %s\n", e->name, err);
        return 1;
    }
    if (o->steps) {
        s.steps = o->steps < 2 ? 2 : o->steps;
    }
    void *h = e->create(&s, o, err, sizeof err);
    if (!h) {
        fprintf(stderr, "bench_box3d_%s: %s: %s\n", e->name, s.name, err);
        b3b_scene_free(&s);
        return 1;
    }
    uint32_t window = s.steps > 100 ? 50 : s.steps / 2, na = 0, nb = 0;
    b3b_state *a = NULL;
    e->step(h, 0); // warm-up, untimed (Box3D's driver)
    double total = 0, t = bench_now_ns();
    for (uint32_t i = 1; i < s.steps; i++) {
        if (i == s.steps - window) { // untimed: positions before the last `window` steps
            total += bench_now_ns() - t;
            a = snapshot(e, h, &na);
            t = bench_now_ns();
        }
        e->step(h, i);
    }
    total += bench_now_ns() - t;
    double ms = total / 1e6 / (double)(s.steps - 1);
    b3b_state *b = snapshot(e, h, &nb);
    uint32_t mv = moved(a, na, b, nb);
    double drop = 0, dx = 0, dz = 0;
    if (s.tops) {
        double *p = calloc((size_t)s.tops * 3, sizeof *p);
        if (p) {
            e->tops(h, p);
            for (uint32_t i = 0, k = 0; i < s.body_count; i++) {
                const b3b_body *bd = &s.bodies[i];
                if (!bd->top) {
                    continue;
                }
                const double *q = p + 3 * k++;
                drop = fmax(drop, bd->pos[1] - q[1]);
                dx = fmax(dx, fabs(q[0] - bd->pos[0]));
                dz = fmax(dz, fabs(q[2] - bd->pos[2]));
            }
            free(p);
        }
    }
    double pen = e->max_penetration(h);
    uint32_t bodies = e->body_count(h), joints = e->joint_count(h);
    const char *warn = e->warning(h);
    if (!o->quiet) {
        printf("  %-14s %-16s %6u bodies %6u joints %4u steps %10.3f ms/step  top drop %.4f "
               "|dx| %.4f |dz| %.4f  max_pen %s%.4f  moved %u\n",
               s.name, name, bodies, joints, s.steps, ms, drop, dx, dz, pen < 0 ? "n/a " : "",
               pen < 0 ? 0.0 : pen, mv);
    }
    if (warn) {
        printf("  %s %s: warning: %s\n", s.name, name, warn);
    }
    FILE *f = open_csv(o);
    row(f, s.name, name, "ms_per_step", ms, "ms");
    row(f, s.name, name, "steps", s.steps, "steps");
    row(f, s.name, name, "bodies", bodies, "bodies");
    row(f, s.name, name, "dynamic", nb, "bodies");
    row(f, s.name, name, "joints", joints, "joints");
    if (s.tops) {
        row(f, s.name, name, "top_drop", drop, "m");
        row(f, s.name, name, "drift_x", dx, "m");
        row(f, s.name, name, "drift_z", dz, "m");
    }
    if (pen >= 0) {
        row(f, s.name, name, "max_pen", pen, "m");
    }
    row(f, s.name, name, "moved", mv, "bodies");
    if (warn) {
        row(f, s.name, name, "warnings", 1, "count");
    }
    if (f) {
        fclose(f);
    }
    free(a), free(b);
    e->destroy(h);
    b3b_scene_free(&s);
    return 0;
}

// ---- rollback capacity ---------------------------------------------------------

#define PILE_SETTLE_STEPS 240 // 4 s at 60 Hz: the dropped boxes have come to rest
#define PILE_SAMPLES      9   // windows of 9 steps; the median counts
#define FRAME_MS          (1000.0 / 60.0)

// CPU time of the process: with one worker, the cost of the steps on one core,
// whatever else the (shared) machine runs meanwhile.
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct pile_result {
    double cpu_ms, wall_ms; // 9 steps: median of the samples
    uint32_t moved;         // bodies that moved > 1 cm over the timed steps
} pile_result;

// 9 consecutive steps of the settled n-box pile, PILE_SAMPLES times.
static int pile_ms(const b3b_engine *e, const b3b_opts *o, uint32_t n, pile_result *res)
{
    b3b_scene s;
    char err[256] = "";
    if (b3b_pile_build(n, &s) != 0) {
        fprintf(stderr, "bench_box3d_%s: out of memory (pile of %u)\n", e->name, n);
        return -1;
    }
    void *h = e->create(&s, o, err, sizeof err);
    if (!h) {
        fprintf(stderr, "bench_box3d_%s: %s: %s\n", e->name, s.name, err);
        b3b_scene_free(&s);
        return -1;
    }
    uint32_t k = 0, na = 0, nb = 0;
    for (; k < PILE_SETTLE_STEPS; k++) {
        e->step(h, k);
    }
    b3b_state *a = snapshot(e, h, &na);
    double cpu[PILE_SAMPLES], wall[PILE_SAMPLES];
    for (int r = 0; r < PILE_SAMPLES; r++) {
        double t = bench_now_ns(), c = cpu_ns();
        for (int i = 0; i < 9; i++) {
            e->step(h, k++);
        }
        cpu[r] = (cpu_ns() - c) / 1e6;
        wall[r] = (bench_now_ns() - t) / 1e6;
    }
    b3b_state *b = snapshot(e, h, &nb);
    res->moved = moved(a, na, b, nb);
    res->cpu_ms = bench_median(cpu, PILE_SAMPLES);
    res->wall_ms = bench_median(wall, PILE_SAMPLES);
    free(a), free(b);
    const char *warn = e->warning(h);
    if (warn) {
        printf("  rollback pile_%u: warning: %s\n", n, warn);
    }
    e->destroy(h);
    b3b_scene_free(&s);
    return 0;
}

static void pile_line(const char *name, uint32_t n, const pile_result *r)
{
    printf(
        "  rollback %-14s %6u boxes: 9 steps %8.3f ms cpu (%s), %8.3f ms wall, %u moved > 1 cm\n",
        name, n, r->cpu_ms, r->cpu_ms <= FRAME_MS ? "fits" : "too slow", r->wall_ms, r->moved);
}

static int rollback(const b3b_engine *e, const b3b_opts *o)
{
    char name[64];
    label(e, o, name, sizeof name);
    uint32_t lo = 0, hi = 0, n = 16;
    pile_result best = {0, 0, 0}, r;
    while (n <= (1u << 17)) { // doubling
        if (pile_ms(e, o, n, &r) != 0) {
            return 1;
        }
        if (!o->quiet) {
            pile_line(name, n, &r);
        }
        if (r.cpu_ms > FRAME_MS) {
            hi = n;
            break;
        }
        lo = n, best = r, n *= 2;
    }
    while (hi && hi - lo > (lo / 64 > 1 ? lo / 64 : 1)) { // bisection to ~1.5 %
        uint32_t mid = lo + (hi - lo) / 2;
        if (pile_ms(e, o, mid, &r) != 0) {
            return 1;
        }
        if (!o->quiet) {
            pile_line(name, mid, &r);
        }
        if (r.cpu_ms <= FRAME_MS) {
            lo = mid, best = r;
        } else {
            hi = mid;
        }
    }
    printf("  rollback %-14s %6u awake boxes in one 60 Hz frame (9 steps: %.3f ms cpu, %.3f ms "
           "wall; %u moved > 1 cm)\n",
           name, lo, best.cpu_ms, best.wall_ms, best.moved);
    FILE *f = open_csv(o);
    row(f, "rollback", name, "awake_boxes", lo, "boxes");
    row(f, "rollback", name, "ms_per_9_steps", best.cpu_ms, "ms");
    row(f, "rollback", name, "wall_ms_per_9_steps", best.wall_ms, "ms");
    row(f, "rollback", name, "moved", best.moved, "bodies");
    if (f) {
        fclose(f);
    }
    return 0;
}

// ---- the section's tables (`--report FILE`) -----------------------------------

#define R_SCENES  16
#define R_ENGINES 12
#define R_METRICS 16
#define R_VALUES  64
#define R_FIELD   64

typedef struct r_cell {
    double v[R_VALUES];
    int n;
} r_cell;

typedef struct r_table {
    char scene[R_SCENES][R_FIELD], engine[R_ENGINES][R_FIELD], metric[R_METRICS][R_FIELD];
    int ns, ne, nm;
    r_cell c[R_SCENES][R_ENGINES][R_METRICS];
} r_table;

static int r_index(char names[][R_FIELD], int *count, int max, const char *name)
{
    for (int i = 0; i < *count; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    if (*count == max) {
        return -1;
    }
    snprintf(names[*count], R_FIELD, "%s", name);
    return (*count)++;
}

static int r_find(char names[][R_FIELD], int count, const char *name)
{
    for (int i = 0; i < count; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

static const r_cell *r_get(const r_table *t, const char *scene, const char *engine,
                           const char *metric)
{
    int s = r_find((char(*)[R_FIELD])t->scene, t->ns, scene);
    int e = r_find((char(*)[R_FIELD])t->engine, t->ne, engine);
    int m = r_find((char(*)[R_FIELD])t->metric, t->nm, metric);
    return s < 0 || e < 0 || m < 0 || t->c[s][e][m].n == 0 ? NULL : &t->c[s][e][m];
}

// Median of the cell (timings), or NAN.
static double r_median(const r_table *t, const char *scene, const char *engine, const char *metric)
{
    const r_cell *c = r_get(t, scene, engine, metric);
    if (!c) {
        return NAN;
    }
    double v[R_VALUES];
    memcpy(v, c->v, (size_t)c->n * sizeof *v);
    return bench_median(v, (size_t)c->n);
}

// Last value of the cell (the state at the end of the last run), or NAN.
static double r_last(const r_table *t, const char *scene, const char *engine, const char *metric)
{
    const r_cell *c = r_get(t, scene, engine, metric);
    return c ? c->v[c->n - 1] : NAN;
}

static int r_load(const char *path, r_table *t)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char sec[R_FIELD], scene[R_FIELD], engine[R_FIELD], metric[R_FIELD], unit[R_FIELD];
        double v;
        if (sscanf(line, "%63[^,],%63[^,],%63[^,],%63[^,],%lf,%63s", sec, scene, engine, metric, &v,
                   unit) != 6 ||
            strcmp(sec, "box3d") != 0) {
            continue;
        }
        int s = r_index(t->scene, &t->ns, R_SCENES, scene);
        int e = r_index(t->engine, &t->ne, R_ENGINES, engine);
        int m = r_index(t->metric, &t->nm, R_METRICS, metric);
        if (s < 0 || e < 0 || m < 0 || t->c[s][e][m].n == R_VALUES) {
            continue;
        }
        t->c[s][e][m].v[t->c[s][e][m].n++] = v;
    }
    fclose(f);
    return 0;
}

static void fmt(char *out, size_t n, double v, const char *f)
{
    if (isnan(v)) {
        snprintf(out, n, "-");
    } else {
        snprintf(out, n, f, v);
    }
}

// Scenes of the speed table: every scene run with two workers (the quality-only
// pyramids run with one), in the order the rows came.
static int is_main(const r_table *t, int s)
{
    int e1 = r_find((char(*)[R_FIELD])t->engine, t->ne, "ours_2w");
    int e2 = r_find((char(*)[R_FIELD])t->engine, t->ne, "box3d_2w");
    int m = r_find((char(*)[R_FIELD])t->metric, t->nm, "ms_per_step");
    return strcmp(t->scene[s], "rollback") != 0 && m >= 0 &&
           ((e1 >= 0 && t->c[s][e1][m].n) || (e2 >= 0 && t->c[s][e2][m].n));
}

static void goal_line(const r_table *t, const char *ours, const char *peer, const char *what)
{
    int met = 0, known = 0;
    char text[1024] = "";
    size_t len = 0;
    for (int i = 0; i < t->ns; i++) {
        if (!is_main(t, i)) {
            continue;
        }
        double r = r_median(t, t->scene[i], ours, "ms_per_step") /
                   r_median(t, t->scene[i], peer, "ms_per_step");
        if (isnan(r)) {
            continue;
        }
        known++, met += r <= 1.5;
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s %s (%.2fx)", len ? ", " : "",
                                t->scene[i], r <= 1.5 ? "met" : "NOT met", r);
        if (len >= sizeof text) {
            break;
        }
    }
    printf("  goal ours/box3d <= 1.5x, %s: %s; met on %d of %d scenes\n", what,
           known ? text : "no data", met, known);
}

static void quality(const r_table *t)
{
    const char *eng[] = {"ours", "ours_default", "box3d"};
    printf("  resting quality at the end of the last run: top box drop and lateral drift "
           "(many_pyramids:"
           " the worst\n  of its 196 tops), deepest contact of the last step, dynamic bodies whose"
           " centre of mass moved > 1 cm\n  over the last 50 steps (m; '-' = not measured or "
           "not applicable)\n");
    printf("  %-14s %-13s %9s %9s %9s %9s %7s %8s\n", "scene", "engine", "top drop", "|dx|", "|dz|",
           "max_pen", "moved", "dynamic");
    for (int i = 0; i < t->ns; i++) {
        int first = 1;
        for (int k = 0; k < 3 && strcmp(t->scene[i], "rollback") != 0; k++) {
            const char *sc = t->scene[i];
            if (!r_get(t, sc, eng[k], "ms_per_step")) {
                continue;
            }
            char c[6][32];
            fmt(c[0], sizeof c[0], r_last(t, sc, eng[k], "top_drop"), "%.4f");
            fmt(c[1], sizeof c[1], r_last(t, sc, eng[k], "drift_x"), "%.4f");
            fmt(c[2], sizeof c[2], r_last(t, sc, eng[k], "drift_z"), "%.4f");
            fmt(c[3], sizeof c[3], r_last(t, sc, eng[k], "max_pen"), "%.4f");
            fmt(c[4], sizeof c[4], r_last(t, sc, eng[k], "moved"), "%.0f");
            fmt(c[5], sizeof c[5], r_last(t, sc, eng[k], "dynamic"), "%.0f");
            printf("  %-14s %-13s %9s %9s %9s %9s %7s %8s\n", first ? sc : "", eng[k], c[0], c[1],
                   c[2], c[3], c[4], c[5]);
            first = 0;
        }
    }
}

static void pyramids(const r_table *t)
{
    const char *eng[] = {"ours", "ours_default", "box3d"};
    const char *sc[] = {"pyramid_20", "pyramid_40", "large_pyramid"};
    const int layers[] = {20, 40, 100};
    printf("  2D pyramids (large_pyramid with base 20, 40, 100; 200 steps, no sleep): top box drop,"
           " drift in x and\n  in z (out of the pyramid's plane), m, at the end\n");
    printf("  %-6s %6s  %-26s  %-26s  %s\n", "layers", "boxes", "ours (4 sub-steps)",
           "ours (default sub-steps)", "box3d (4 sub-steps)");
    for (int i = 0; i < 3; i++) {
        char cell[3][64], boxes[32];
        fmt(boxes, sizeof boxes, r_last(t, sc[i], "ours", "dynamic"), "%.0f");
        for (int k = 0; k < 3; k++) {
            double d = r_last(t, sc[i], eng[k], "top_drop");
            if (isnan(d)) {
                snprintf(cell[k], sizeof cell[k], "-");
            } else {
                snprintf(cell[k], sizeof cell[k], "%.4f %.4f %.4f", d,
                         r_last(t, sc[i], eng[k], "drift_x"), r_last(t, sc[i], eng[k], "drift_z"));
            }
        }
        printf("  %-6d %6s  %-26s  %-26s  %s\n", layers[i], boxes, cell[0], cell[1], cell[2]);
    }
}

static void rollback_table(const r_table *t)
{
    const char *eng[] = {"ours", "ours_default", "box3d"};
    if (r_find((char(*)[R_FIELD])t->scene, t->ns, "rollback") < 0) {
        return;
    }
    printf("  rollback capacity: the largest N whose awake, settled N-box pile steps 9 times (an "
           "8-tick rollback\n  + the new tick) in <= 16.7 ms with 1 worker; pile and search: "
           "tools/bench/README.md\n");
    printf("  %-13s %8s %12s %9s\n", "engine", "boxes", "ms/9 steps", "ms/step");
    for (int k = 0; k < 3; k++) {
        double n = r_last(t, "rollback", eng[k], "awake_boxes");
        double ms = r_last(t, "rollback", eng[k], "ms_per_9_steps");
        if (isnan(n)) {
            continue;
        }
        printf("  %-13s %8.0f %12.3f %9.3f\n", eng[k], n, ms, ms / 9);
    }
    double o = r_last(t, "rollback", "ours", "awake_boxes");
    double d = r_last(t, "rollback", "ours_default", "awake_boxes");
    double b = r_last(t, "rollback", "box3d", "awake_boxes");
    if (!isnan(o) && !isnan(b) && b > 0) {
        printf(
            "  awake boxes sustained by an 8-tick rollback at 60 Hz on one core: ours %.0f, box3d "
            "%.0f: ours/box3d %.3f",
            o, b, o / b);
        if (!isnan(d)) {
            printf(" (ours at its default sub-steps: %.0f, %.3f)", d, d / b);
        }
        printf("\n");
    }
}

static int report(const char *path)
{
    r_table *t = calloc(1, sizeof *t);
    if (!t || r_load(path, t) != 0) {
        free(t);
        return 1;
    }
    const char *eng[] = {"ours", "ours_2w", "ours_default", "box3d", "box3d_2w"};
    printf("  ms/step = median over runs of (wall time of steps 1..N-1) / (N-1); ratio = ours / "
           "box3d (< 1: ours faster)\n");
    printf("  %-14s %6s %6s %5s %10s %10s %12s %10s %11s %11s %11s\n", "scene", "bodies", "joints",
           "steps", "ours ms", "ours_2w ms", "ours_dflt ms", "box3d ms", "box3d_2w ms",
           "ours/box3d", "2w/box3d_2w");
    double log1 = 0, log2 = 0, logd = 0;
    int n1 = 0, n2 = 0, nd = 0;
    for (int i = 0; i < t->ns; i++) {
        if (!is_main(t, i)) {
            continue;
        }
        const char *sc = t->scene[i];
        double ms[5];
        char c[5][32], r1[32], r2[32], b[32], j[32], st[32];
        for (int k = 0; k < 5; k++) {
            ms[k] = r_median(t, sc, eng[k], "ms_per_step");
            fmt(c[k], sizeof c[k], ms[k], "%.3f");
        }
        double q1 = ms[0] / ms[3], q2 = ms[1] / ms[4], qd = ms[2] / ms[3];
        fmt(r1, sizeof r1, q1, "%.2fx");
        fmt(r2, sizeof r2, q2, "%.2fx");
        double bodies = r_last(t, sc, "ours", "bodies");
        fmt(b, sizeof b, bodies, "%.0f");
        fmt(j, sizeof j, r_last(t, sc, "ours", "joints"), "%.0f");
        fmt(st, sizeof st, r_last(t, sc, "ours", "steps"), "%.0f");
        printf("  %-14s %6s %6s %5s %10s %10s %12s %10s %11s %11s %11s\n", sc, b, j, st, c[0], c[1],
               c[2], c[3], c[4], r1, r2);
        double pb = r_last(t, sc, "box3d", "bodies"), pj = r_last(t, sc, "box3d", "joints");
        if (!isnan(pb) && !isnan(bodies) &&
            (pb != bodies || pj != r_last(t, sc, "ours", "joints"))) {
            printf("  %-14s (box3d: %.0f bodies, %.0f joints)\n", "", pb, pj);
        }
        if (!isnan(q1)) {
            log1 += log(q1), n1++;
        }
        if (!isnan(q2)) {
            log2 += log(q2), n2++;
        }
        if (!isnan(qd)) {
            logd += log(qd), nd++;
        }
    }
    char g1[32] = "-", g2[32] = "-", gd[32] = "-";
    if (n1) {
        snprintf(g1, sizeof g1, "%.2fx (%d scenes)", exp(log1 / n1), n1);
    }
    if (n2) {
        snprintf(g2, sizeof g2, "%.2fx", exp(log2 / n2));
    }
    if (nd) {
        snprintf(gd, sizeof gd, "%.2fx", exp(logd / nd));
    }
    printf("  geometric mean ours/box3d: 1 worker %s, 2 workers %s; ours at its default "
           "sub-steps / box3d 1 worker: %s\n",
           g1, g2, gd);
    goal_line(t, "ours", "box3d", "1 worker");
    goal_line(t, "ours_2w", "box3d_2w", "2 workers");
    quality(t);
    pyramids(t);
    rollback_table(t);
    free(t);
    return 0;
}

// ---- main --------------------------------------------------------------------

int b3b_main(const b3b_engine *e, int argc, char **argv)
{
    b3b_opts o = {NULL, 1, 4, 0, NULL, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(e->name);
            return 0;
        } else if (strcmp(a, "--report") == 0 && v) {
            return report(v);
        } else if (strcmp(a, "--scene") == 0 && v) {
            o.scene = v, i++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            o.threads = (uint32_t)strtoul(v, NULL, 10), i++;
        } else if (strcmp(a, "--substeps") == 0 && v) {
            o.substeps = strcmp(v, "default") == 0 ? 0 : atoi(v), i++;
        } else if (strcmp(a, "--steps") == 0 && v) {
            o.steps = (uint32_t)strtoul(v, NULL, 10), i++;
        } else if (strcmp(a, "--csv") == 0 && v) {
            o.csv = v, i++;
        } else if (strcmp(a, "--quiet") == 0) {
            o.quiet = 1;
        } else if (strcmp(a, "--rollback") == 0) {
            o.rollback = 1;
        } else {
            fprintf(stderr, "bench_box3d_%s: unknown or incomplete option '%s' (--help)\n", e->name,
                    a);
            return 2;
        }
    }
    if (o.substeps == 0 && e->default_substeps > 0) { // Box3D: "default" is its benchmark's 4
        o.substeps = e->default_substeps;
    }
    if (o.threads < 1 || o.threads > 32 || o.substeps < 0 || o.substeps > 16) {
        fprintf(stderr, "bench_box3d_%s: --threads 1..32, --substeps 1..16 or default\n", e->name);
        return 2;
    }
    if (o.rollback) {
        return rollback(e, &o);
    }
    if (!o.scene) {
        usage(e->name);
        return 2;
    }
    return run_scene(e, &o);
}
