// SPDX-License-Identifier: MIT
// The cloth row of `make bench` (issue 14): the cloth of a scene file read
// through our parser and converted to doubles (grid, pins, sticks, masses,
// the static sphere it falls on), and the driver every cloth engine binary
// shares, so each engine is timed and judged by exactly the same code.
#define _POSIX_C_SOURCE 200809L
#include "cloth.h"

#include "ls/particles.h"
#include "ls/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double d(ls_fx v)
{
    return (double)v / 65536.0;
}

static void add_stick(bench_cloth *c, uint32_t a, uint32_t b, int kind)
{
    uint32_t k = c->stick_count++;
    c->sticks[2 * k] = a, c->sticks[2 * k + 1] = b;
    c->stick_kind[k] = kind;
    const double *p = c->x0 + 3 * (size_t)a, *q = c->x0 + 3 * (size_t)b;
    double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
    c->rest[k] = sqrt(dx * dx + dy * dy + dz * dz);
}

// The grid's sticks in our builder's order (fixmath_phys/src/particles/cloth.c,
// SPEC.md §25.7): 14 batches of sticks that share no particle, each in (j, i)
// order: structural along u (i even, then odd), along v (j even, then odd),
// shear (i, j)-(i+1, j+1) (i even, odd) and (i+1, j)-(i, j+1) (i even, odd),
// bend along u ((i/2) even, odd) and along v ((j/2) even, odd).
static int build_sticks(bench_cloth *c, int shear, int bend)
{
    uint32_t nu = c->nx, nv = c->ny, max = 6 * c->count;
    c->sticks = calloc(2 * (size_t)max, sizeof *c->sticks);
    c->rest = calloc(max, sizeof *c->rest);
    c->stick_kind = calloc(max, sizeof *c->stick_kind);
    if (!c->sticks || !c->rest || !c->stick_kind) {
        return 1;
    }
    for (uint32_t k = 0; k < 2; k++) {
        for (uint32_t j = 0; j < nv; j++) {
            for (uint32_t i = k; i + 1 < nu; i += 2) {
                add_stick(c, j * nu + i, j * nu + i + 1, BENCH_STICK_STRUCTURAL);
            }
        }
    }
    for (uint32_t k = 0; k < 2; k++) {
        for (uint32_t j = k; j + 1 < nv; j += 2) {
            for (uint32_t i = 0; i < nu; i++) {
                add_stick(c, j * nu + i, (j + 1) * nu + i, BENCH_STICK_STRUCTURAL);
            }
        }
    }
    for (uint32_t k = 0; k < 4 && shear; k++) {
        for (uint32_t j = 0; j + 1 < nv; j++) {
            for (uint32_t i = k & 1; i + 1 < nu; i += 2) {
                uint32_t p = j * nu + i;
                if (k < 2) {
                    add_stick(c, p, p + nu + 1, BENCH_STICK_SHEAR);
                } else {
                    add_stick(c, p + 1, p + nu, BENCH_STICK_SHEAR);
                }
            }
        }
    }
    for (uint32_t k = 0; k < 2 && bend; k++) {
        for (uint32_t j = 0; j < nv; j++) {
            for (uint32_t i = 0; i + 2 < nu; i++) {
                if ((i / 2) % 2 == k) {
                    add_stick(c, j * nu + i, j * nu + i + 2, BENCH_STICK_BEND);
                }
            }
        }
    }
    for (uint32_t k = 0; k < 2 && bend; k++) {
        for (uint32_t j = 0; j + 2 < nv; j++) {
            for (uint32_t i = 0; i < nu && (j / 2) % 2 == k; i++) {
                add_stick(c, j * nu + i, (j + 2) * nu + i, BENCH_STICK_BEND);
            }
        }
    }
    return 0;
}

int bench_cloth_load(const char *path, bench_cloth *out)
{
    memset(out, 0, sizeof *out);
    if (bench_scene_load(path, &out->rigid) != 0) {
        return 1;
    }
    const ls_scene *sc = out->rigid.ls;
    if (sc->particle_count != 1 || sc->particles[0].kind != LS_SCENE_CLOTH) {
        fprintf(stderr,
                "%s: the cloth bench needs exactly one `cloth` statement (found %u particle "
                "statements)\n",
                path, sc->particle_count);
        bench_cloth_free(out);
        return 1;
    }
    // Instantiate once: the particles' start positions and masses as our builder made them.
    ls_error err;
    ls_world *w = ls_scene_instantiate(sc, &err);
    if (!w) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        bench_cloth_free(out);
        return 1;
    }
    const ls_scene_particles *sp = &sc->particles[0];
    const ls_cloth_def *cd = &sp->cloth;
    ls_particle_system_id sys = ls_world_particle_system_at(w, 0);
    out->nx = cd->nu;
    out->ny = cd->nv;
    out->count = out->nx * out->ny;
    out->x0 = calloc(3 * (size_t)out->count, sizeof *out->x0);
    out->inv_mass = calloc(out->count, sizeof *out->inv_mass);
    int bad = !out->x0 || !out->inv_mass || ls_particle_count(w, sys) != out->count;
    for (uint32_t k = 0; !bad && k < out->count; k++) {
        ls_vec3 p = ls_particle_position(w, sys, k);
        out->x0[3 * k] = d(p.x), out->x0[3 * k + 1] = d(p.y), out->x0[3 * k + 2] = d(p.z);
        ls_particle_state st;
        bad = ls_particle_get_state(w, sys, k, &st, NULL) != LS_OK;
        out->inv_mass[k] = st.inv_mass > 0 ? d(st.inv_mass) : 0;
        if (st.inv_mass > 0) {
            out->particle_mass = d(cd->mass) / out->count; // the builder's equal split
        }
    }
    ls_world_destroy(w);
    if (bad || build_sticks(out, cd->shear, cd->bend) != 0) {
        fprintf(stderr, "%s: cannot read the cloth's particles\n", path);
        bench_cloth_free(out);
        return 1;
    }
    out->radius = d(cd->radius);
    out->bend_stiffness = d(cd->bend_stiffness);
    out->iterations = (int)cd->system.iterations;
    out->approx = cd->system.stick_mode == LS_STICK_APPROX;
    out->damping = d(cd->system.damping);
    out->friction = d(cd->system.friction);
    out->tear = cd->tear_ratio != 0;
    for (uint32_t i = 0; i < out->rigid.count; i++) {
        const bench_body *b = &out->rigid.bodies[i];
        if (b->type == BENCH_STATIC && b->shapes[0].kind == BENCH_SPHERE && !out->has_sphere) {
            out->has_sphere = 1;
            bench_shape_world_pose(b, &b->shapes[0], out->sphere, (double[4]){0, 0, 0, 1});
            out->sphere_radius = b->shapes[0].radius;
        }
    }
    return 0;
}

void bench_cloth_free(bench_cloth *c)
{
    bench_scene_free(&c->rigid);
    free(c->x0);
    free(c->inv_mass);
    free(c->sticks);
    free(c->rest);
    free(c->stick_kind);
    memset(c, 0, sizeof *c);
}

// ---- measures (the same for every engine) --------------------------------

typedef struct cloth_result {
    double ms_tick[16]; // per repeat: total step time / ticks
    bench_cloth_counts built;
    double max_strain;  // largest |L - r| / r over the structural sticks at the end
    double mean_strain; // their mean
    double sphere_pen;  // deepest particle inside sphere radius + particle radius, m
    double on_sphere;   // particles within 1 cm of that surface
    double pin_drift;   // largest distance of a pinned particle from its start, m
    double lowest_y;    // lowest particle, m
    double centroid_y;  // mean height, m
    double max_speed;   // fastest particle over the last tick, m/s
    uint32_t lost;      // particles not finite or below y = -1 m
    double wall_s;      // the whole run, scene building included
} cloth_result;

static void measure(const bench_cloth *c, const double *x, const double *before, cloth_result *r)
{
    double worst = 0, sum = 0;
    uint32_t n = 0;
    for (uint32_t k = 0; k < c->stick_count; k++) {
        if (c->stick_kind[k] != BENCH_STICK_STRUCTURAL) {
            continue;
        }
        const double *p = x + 3 * (size_t)c->sticks[2 * k],
                     *q = x + 3 * (size_t)c->sticks[2 * k + 1];
        double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
        double s = fabs(sqrt(dx * dx + dy * dy + dz * dz) - c->rest[k]) / c->rest[k];
        worst = s > worst || !isfinite(s) ? s : worst;
        sum += s, n++;
    }
    r->max_strain = worst;
    r->mean_strain = n ? sum / n : 0;
    r->sphere_pen = r->on_sphere = r->pin_drift = r->max_speed = r->centroid_y = 0;
    r->lowest_y = INFINITY;
    r->lost = 0;
    for (uint32_t i = 0; i < c->count; i++) {
        const double *p = x + 3 * (size_t)i, *q = before + 3 * (size_t)i,
                     *o = c->x0 + 3 * (size_t)i;
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])) || p[1] < -1) {
            r->lost++;
            continue;
        }
        r->lowest_y = p[1] < r->lowest_y ? p[1] : r->lowest_y;
        r->centroid_y += p[1] / c->count;
        double v = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                        (p[2] - q[2]) * (p[2] - q[2])) /
                   c->rigid.dt;
        r->max_speed = v > r->max_speed ? v : r->max_speed;
        if (c->inv_mass[i] == 0) {
            double dr = sqrt((p[0] - o[0]) * (p[0] - o[0]) + (p[1] - o[1]) * (p[1] - o[1]) +
                             (p[2] - o[2]) * (p[2] - o[2]));
            r->pin_drift = dr > r->pin_drift ? dr : r->pin_drift;
        }
        if (c->has_sphere) {
            double dx = p[0] - c->sphere[0], dy = p[1] - c->sphere[1], dz = p[2] - c->sphere[2];
            double gap = sqrt(dx * dx + dy * dy + dz * dz) - c->sphere_radius - c->radius;
            r->sphere_pen = -gap > r->sphere_pen ? -gap : r->sphere_pen;
            r->on_sphere += gap < 0.01;
        }
    }
}

static int run(const bench_cloth_engine *e, const bench_cloth *c, uint32_t ticks, int repeats,
               cloth_result *r)
{
    double *x = calloc(3 * (size_t)c->count, sizeof *x);
    double *before = calloc(3 * (size_t)c->count, sizeof *before);
    double t_start = bench_now_ns();
    for (int rep = 0; rep < repeats && x && before; rep++) {
        char err[256] = "";
        void *w = e->create(c, err, sizeof err);
        if (!w) {
            fprintf(stderr, "%s: %s: %s\n", e->name, c->rigid.path, err);
            free(x), free(before);
            return 1;
        }
        double total = 0;
        for (uint32_t t = 0; t < ticks; t++) {
            if (t + 1 == ticks) {
                e->positions(w, before); // untimed: the last tick's motion
            }
            double t0 = bench_now_ns();
            e->step(w);
            total += bench_now_ns() - t0;
        }
        r->ms_tick[rep] = total / 1e6 / (double)(ticks ? ticks : 1);
        if (rep == repeats - 1) {
            e->positions(w, x);
            measure(c, x, ticks ? before : x, r);
            r->built = e->counts(w);
            if (getenv("BENCH_DUMP_CLOTH")) { // debugging aid: every 8th particle of every 8th row
                for (uint32_t j = 0; j < c->ny; j += 8) {
                    for (uint32_t i = 0; i < c->nx; i += 8) {
                        const double *p = x + 3 * (size_t)(j * c->nx + i);
                        printf("  cloth %s (%u,%u): %.4f %.4f %.4f\n", e->name, i, j, p[0], p[1],
                               p[2]);
                    }
                }
            }
        }
        e->destroy(w);
    }
    r->wall_s = (bench_now_ns() - t_start) / 1e9;
    free(x), free(before);
    return 0;
}

static void write_csv(FILE *f, const char *engine, const bench_cloth *c, uint32_t ticks,
                      uint32_t threads, int repeats, const cloth_result *r)
{
#define ROW(metric, fmt, value, unit)                                                              \
    fprintf(f, "cloth,%s,%s,%s," fmt ",%s\n", c->rigid.name, engine, metric, value, unit)
    for (int i = 0; i < repeats; i++) {
        ROW("ms_per_tick", "%.6f", r->ms_tick[i], "ms");
    }
    ROW("particles", "%u", r->built.particles, "count");
    ROW("sticks", "%u", r->built.sticks, "count");
    ROW("iterations", "%d", c->iterations, "count");
    ROW("ticks", "%u", ticks, "count");
    ROW("threads", "%u", threads, "count");
    ROW("max_strain", "%.5f", r->max_strain, "ratio");
    ROW("mean_strain", "%.5f", r->mean_strain, "ratio");
    ROW("sphere_penetration", "%.5f", r->sphere_pen, "m");
    ROW("on_sphere", "%.0f", r->on_sphere, "particles");
    ROW("pin_drift", "%.6f", r->pin_drift, "m");
    ROW("lowest_y", "%.4f", r->lowest_y, "m");
    ROW("centroid_y", "%.4f", r->centroid_y, "m");
    ROW("max_speed_last_tick", "%.4f", r->max_speed, "m/s");
    ROW("lost", "%u", r->lost, "particles");
#undef ROW
}

static int usage(const bench_cloth_engine *e)
{
    fprintf(stderr,
            "usage: bench_cloth_%s SCENE [--ticks N] [--repeats R] [--threads N] [--csv FILE] "
            "[--quiet]\n"
            "  Times the scene's `cloth` in %s %s: R fresh runs of N ticks (default: the\n"
            "  scene's ticks, R = 3); ms/tick = median over runs of (step time / ticks).\n"
            "  --threads N: worker threads (our engine only). --csv FILE appends rows\n"
            "  `cloth,scene,engine,metric,value,unit`. --quiet: no table line.\n",
            e->name, e->name, e->version);
    return 2;
}

int bench_cloth_main(const bench_cloth_engine *e, int argc, char **argv)
{
    const char *csv = NULL, *path = NULL;
    long ticks = 0, repeats = 3, threads = 1;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            ticks = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (argv[i][0] == '-' || path) {
            return usage(e);
        } else {
            path = argv[i];
        }
    }
    if (!path || repeats < 1 || repeats > 16 || ticks < 0 || ticks > 1000000 || threads < 1 ||
        threads > (long)e->max_threads) {
        return usage(e);
    }
    char engine[64];
    snprintf(engine, sizeof engine, threads > 1 ? "%s_%ldw" : "%s", e->name, threads);
    bench_cloth c;
    if (bench_cloth_load(path, &c) != 0) {
        return 1;
    }
    c.rigid.threads = (uint32_t)threads;
    uint32_t n = ticks ? (uint32_t)ticks : c.rigid.ticks;
    cloth_result r;
    memset(&r, 0, sizeof r);
    if (run(e, &c, n, (int)repeats, &r) != 0) {
        bench_cloth_free(&c);
        return 1;
    }
    double sorted[16];
    memcpy(sorted, r.ms_tick, sizeof sorted);
    double med = bench_median(sorted, (size_t)repeats);
    if (!quiet) {
        printf("  %-9s %-10s %5u particles %6u sticks %2d it %4u ticks x%ld  %8.3f ms/tick (min "
               "%.3f max %.3f)  strain %.4f  pen %.4f m  pins %.6f m  low %.3f m  v %.3f m/s  "
               "lost %u  [%.1f s]\n",
               engine, c.rigid.name, r.built.particles, r.built.sticks, c.iterations, n, repeats,
               med, sorted[0], sorted[repeats - 1], r.max_strain, r.sphere_pen, r.pin_drift,
               r.lowest_y, r.max_speed, r.lost, r.wall_s);
        fflush(stdout);
    }
    if (csv) {
        FILE *f = fopen(csv, "a");
        if (!f) {
            perror(csv);
            bench_cloth_free(&c);
            return 1;
        }
        write_csv(f, engine, &c, n, (uint32_t)threads, (int)repeats, &r);
        fclose(f);
    }
    bench_cloth_free(&c);
    return 0;
}
