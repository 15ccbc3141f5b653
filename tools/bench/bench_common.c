// SPDX-License-Identifier: MIT
// Scene conversion (our parser, Q16.16 -> double), timing helpers and the
// driver every physics engine binary shares, so each engine is timed and
// judged by exactly the same code.
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "ls/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double d(ls_fx v)
{
    return (double)v / 65536.0;
}

static void d3(ls_vec3 v, double *out)
{
    out[0] = d(v.x), out[1] = d(v.y), out[2] = d(v.z);
}

static void base_name(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    size_t n = strcspn(b, ".");
    if (n >= size) {
        n = size - 1;
    }
    memcpy(out, b, n);
    out[n] = '\0';
}

static void convert_body(const ls_body_def *bd, ls_fx mass, bench_body *o)
{
    memset(o, 0, sizeof *o);
    o->type = (int)bd->type;
    o->shape = (int)bd->shape.type;
    o->radius = d(bd->shape.radius);
    o->half_height = d(bd->shape.half_height);
    d3(bd->shape.half_extents, o->half);
    d3(bd->shape.normal, o->normal);
    double nl = sqrt(o->normal[0] * o->normal[0] + o->normal[1] * o->normal[1] +
                     o->normal[2] * o->normal[2]);
    if (nl > 0) {
        o->normal[0] /= nl, o->normal[1] /= nl, o->normal[2] /= nl;
    }
    o->plane_d = d(bd->shape.plane_d);
    d3(bd->position, o->pos);
    ls_quat q = bd->orientation;
    double ql = sqrt(d(q.x) * d(q.x) + d(q.y) * d(q.y) + d(q.z) * d(q.z) + d(q.w) * d(q.w));
    o->quat[0] = d(q.x) / ql, o->quat[1] = d(q.y) / ql, o->quat[2] = d(q.z) / ql,
    o->quat[3] = d(q.w) / ql;
    d3(bd->linear_velocity, o->vel);
    d3(bd->angular_velocity, o->angvel);
    o->mass = d(mass);
    o->friction = d(bd->shape.friction);
    o->restitution = d(bd->shape.restitution);
    o->lin_damp = d(bd->linear_damping);
    o->ang_damp = d(bd->angular_damping);
    o->allow_sleep = bd->allow_sleep;
}

int bench_scene_load(const char *path, bench_scene *out)
{
    memset(out, 0, sizeof *out);
    ls_scene *sc = calloc(1, sizeof *sc);
    ls_error err;
    if (!sc || ls_scene_load(path, sc, &err) != LS_OK) {
        fprintf(stderr, "%s:%u:%u: %s\n", path, err.line, err.column, err.message);
        free(sc);
        return 1;
    }
    // Instantiate once so the peers get exactly the masses our engine computed.
    ls_world *w = ls_scene_instantiate(sc, &err);
    if (!w) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        ls_scene_free(sc);
        free(sc);
        return 1;
    }
    const ls_world_def *wd = &sc->world;
    base_name(path, out->name, sizeof out->name);
    out->path = path;
    d3(wd->gravity, out->gravity);
    out->dt = d(ls_tick_dt(wd->tick_rate));
    out->velocity_iterations = (int)wd->velocity_iterations;
    out->position_iterations = (int)wd->position_iterations;
    out->sleep_linear = d(wd->sleep_linear);
    out->sleep_angular = d(wd->sleep_angular);
    out->sleep_time = d(wd->sleep_time);
    out->contact_margin = d(wd->contact_margin);
    out->linear_slop = d(wd->linear_slop);
    out->baumgarte = d(wd->baumgarte);
    out->restitution_thresh = d(wd->restitution_threshold);
    out->ticks = sc->ticks;
    out->max_bodies = wd->max_bodies;
    out->max_contacts = wd->max_contacts;
    out->count = sc->body_count;
    out->bodies = calloc(sc->body_count ? sc->body_count : 1, sizeof *out->bodies);
    for (uint32_t i = 0; i < sc->body_count; i++) {
        ls_body_id id = ls_world_body_at(w, i);
        convert_body(&sc->bodies[i], ls_body_mass(w, id), &out->bodies[i]);
        out->dynamic_count += sc->bodies[i].type == LS_BODY_DYNAMIC;
        if (sc->bodies[i].type == LS_BODY_KINEMATIC) {
            fprintf(stderr, "%s: body %u: kinematic bodies are not supported by the bench\n", path,
                    i + 1);
            ls_world_destroy(w);
            bench_scene_free(out);
            ls_scene_free(sc);
            free(sc);
            return 1;
        }
    }
    ls_world_destroy(w);
    out->ls = sc;
    return 0;
}

void bench_scene_free(bench_scene *s)
{
    if (s->ls) {
        ls_scene_free(s->ls);
        free(s->ls);
    }
    free(s->bodies);
    memset(s, 0, sizeof *s);
}

double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct run_result {
    double ms_tick[16]; // per repeat: total step time / ticks
    bench_stats stats;  // of the last repeat
    uint32_t moved;     // dynamic bodies that moved > 1 cm over the last 100 ticks
    uint32_t lost;      // dynamic bodies below y = -1 m or not finite at the end
    double wall_s;      // whole section, including scene building
} run_result;

static void count_motion(const bench_scene *s, const double *before, const double *after,
                         run_result *r)
{
    r->moved = r->lost = 0;
    for (uint32_t i = 0; i < s->dynamic_count; i++) {
        const double *p = before + 3 * i, *q = after + 3 * i;
        double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
        r->moved += dx * dx + dy * dy + dz * dz > 0.01 * 0.01;
        r->lost += !(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2])) || q[1] < -1.0;
    }
}

// Runs the scene `repeats` times from a fresh world, timing only the steps.
static int run_scene(const bench_engine *e, const bench_scene *s, uint32_t ticks, int repeats,
                     run_result *r)
{
    size_t n3 = 3 * (size_t)(s->dynamic_count ? s->dynamic_count : 1);
    double *before = calloc(n3, sizeof *before), *after = calloc(n3, sizeof *after);
    uint32_t mark = ticks > 100 ? ticks - 100 : 0;
    double t_start = bench_now_ns();
    for (int rep = 0; rep < repeats; rep++) {
        char err[256] = "";
        void *w = e->create(s, err, sizeof err);
        if (!w) {
            fprintf(stderr, "%s: %s: %s\n", e->name, s->path, err);
            free(before), free(after);
            return 1;
        }
        double total = 0;
        for (uint32_t t = 0; t < ticks; t++) {
            if (t == mark) {
                e->positions(w, before);
            }
            double t0 = bench_now_ns();
            e->step(w);
            total += bench_now_ns() - t0;
        }
        r->ms_tick[rep] = total / 1e6 / (double)(ticks ? ticks : 1);
        if (rep == repeats - 1) {
            e->positions(w, after);
            r->stats = e->stats(w);
            count_motion(s, before, after, r);
        }
        e->destroy(w);
    }
    r->wall_s = (bench_now_ns() - t_start) / 1e9;
    free(before), free(after);
    return 0;
}

static void write_csv(FILE *f, const bench_engine *e, const bench_scene *s, uint32_t ticks,
                      int repeats, const run_result *r)
{
#define ROW(metric, fmt, value, unit)                                                              \
    fprintf(f, "physics,%s,%s,%s," fmt ",%s\n", s->name, e->name, metric, value, unit)
    for (int i = 0; i < repeats; i++) {
        ROW("ms_per_tick", "%.6f", r->ms_tick[i], "ms");
    }
    ROW("bodies", "%u", s->dynamic_count, "count");
    ROW("ticks", "%u", ticks, "count");
    ROW("max_penetration", "%.5f", r->stats.max_penetration, "m");
    ROW("moved_gt_1cm_last_100_ticks", "%u", r->moved, "bodies");
    ROW("asleep", "%u", r->stats.asleep, "bodies");
    ROW("contacts", "%u", r->stats.contacts, "pairs");
    ROW("lost", "%u", r->lost, "bodies");
#undef ROW
}

static int usage(const bench_engine *e)
{
    fprintf(stderr,
            "usage: bench_%s SCENE... [--ticks N] [--repeats R] [--csv FILE] [--quiet]\n"
            "  Times ls-scene files in %s %s: R fresh runs of N ticks (default: the scene's\n"
            "  ticks, R = 3); ms/tick = median over runs of (step time / ticks).\n"
            "  --csv FILE appends rows `physics,scene,engine,metric,value,unit` (one\n"
            "  ms_per_tick row per run; the rest from the last run). --quiet: no table line.\n",
            e->name, e->name, e->version);
    return 2;
}

int bench_engine_main(const bench_engine *e, int argc, char **argv)
{
    const char *csv = NULL;
    long ticks = 0, repeats = 3;
    int nscenes = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            ticks = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (argv[i][0] == '-') {
            return usage(e);
        } else {
            nscenes++;
        }
    }
    if (nscenes == 0 || repeats < 1 || repeats > 16 || ticks < 0 || ticks > 1000000) {
        return usage(e);
    }
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--quiet") != 0;
            continue;
        }
        bench_scene s;
        if (bench_scene_load(argv[i], &s) != 0) {
            return 1;
        }
        uint32_t n = ticks ? (uint32_t)ticks : s.ticks;
        run_result r;
        memset(&r, 0, sizeof r);
        if (run_scene(e, &s, n, (int)repeats, &r) != 0) {
            bench_scene_free(&s);
            return 1;
        }
        double sorted[16];
        memcpy(sorted, r.ms_tick, sizeof sorted);
        double med = bench_median(sorted, (size_t)repeats);
        double lo = sorted[0], hi = sorted[repeats - 1];
        if (!quiet) {
            printf("  %-7s %-14s %5u bodies %5u ticks x%ld  %8.3f ms/tick (min %.3f max %.3f)  "
                   "pen %.4f m  moved %u  asleep %u  lost %u  [%.1f s]\n",
                   e->name, s.name, s.dynamic_count, n, repeats, med, lo, hi,
                   r.stats.max_penetration, r.moved, r.stats.asleep, r.lost, r.wall_s);
            fflush(stdout);
        }
        if (csv) {
            FILE *f = fopen(csv, "a");
            if (!f) {
                perror(csv);
                bench_scene_free(&s);
                return 1;
            }
            write_csv(f, e, &s, n, (int)repeats, &r);
            fclose(f);
        }
        bench_scene_free(&s);
    }
    return 0;
}
