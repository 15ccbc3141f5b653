// SPDX-License-Identifier: MIT
// The vehicle row of `make bench` (issue 15): the shared scene (a terrain
// heightfield with two ramps, four identical cars), the scripted controls,
// the driver every vehicle engine binary runs (timing and the untimed
// sanity measures) and the table (`--report FILE`).
#define _POSIX_C_SOURCE 200809L
#include "vehicle_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// Terrain: a 128 x 128 m heightfield of 4 m cells (33 x 33 vertices, 2048
// triangles) at y = 0 with two ramps 0.75 m high and 8 m long (up 4 m, down
// 4 m): ramp A across the start lane (|x| <= 16, z from -32 to -24; every
// car crosses it once), ramp B across the return lane of cars 2 and 3
// (x from 24 to 48, z from -40 to -32). Every coordinate is a multiple of
// 1/4 m: exact in Q16.16 and in float.
#define GRID_N    32
#define GRID_CELL 4.0
#define GRID_MIN  (-64.0)

static double tent(double u, double lo, double hi)
{
    double mid = (lo + hi) / 2, half = (hi - lo) / 2;
    double t = 1 - fabs(u - mid) / half;
    return t > 0 ? 0.75 * t : 0;
}

static double height(double x, double z)
{
    double a = fabs(x) <= 16 ? tent(z, -32, -24) : 0;
    double b = fabs(x - 36) <= 12 ? tent(z, -40, -32) : 0;
    return a > b ? a : b;
}

int bench_vehicle_scene_init(bench_vehicle_scene *s)
{
    memset(s, 0, sizeof *s);
    s->dt = 1092.0 / 65536.0; // our 60 Hz tick, exactly
    s->gravity = 9.81;
    s->ticks = 1200; // 20 s
    uint32_t nv = GRID_N + 1;
    s->vertex_count = nv * nv;
    s->triangle_count = 2 * GRID_N * GRID_N;
    s->vertices = calloc(3 * (size_t)s->vertex_count, sizeof *s->vertices);
    s->triangles = calloc(3 * (size_t)s->triangle_count, sizeof *s->triangles);
    if (!s->vertices || !s->triangles) {
        bench_vehicle_scene_free(s);
        return 1;
    }
    for (uint32_t j = 0; j < nv; j++) {
        for (uint32_t i = 0; i < nv; i++) {
            double *v = s->vertices + 3 * (size_t)(j * nv + i);
            v[0] = GRID_MIN + GRID_CELL * i;
            v[2] = GRID_MIN + GRID_CELL * j;
            v[1] = height(v[0], v[2]);
        }
    }
    uint32_t *t = s->triangles;
    for (uint32_t j = 0; j < GRID_N; j++) {
        for (uint32_t i = 0; i < GRID_N; i++) {
            uint32_t a = j * nv + i, b = a + 1, c = a + nv, d = c + 1;
            // (a, c, b) and (b, c, d): counter-clockwise seen from +y.
            *t++ = a, *t++ = c, *t++ = b;
            *t++ = b, *t++ = c, *t++ = d;
        }
    }
    s->ground_friction = 1;
    // Chassis: a 2 x 1 x 4 m box of density 100 (800 kg), four wheels mounted
    // 0.25 m below its centre at the corners of a 1.75 x 3 m rectangle. At
    // rest each spring carries 1962 N: 9.8 cm compression, the centre 0.84 m
    // up, the box's bottom 0.34 m above the ground.
    s->half[0] = 1, s->half[1] = 0.5, s->half[2] = 2;
    s->mass = 800;
    const double xs[BENCH_VEHICLE_CARS] = {-9, -3, 3, 9};
    for (int k = 0; k < BENCH_VEHICLE_CARS; k++) {
        s->start[k][0] = xs[k];
        s->start[k][1] = 1; // springs at rest length and 5 cm to spare: a short drop
        s->start[k][2] = -44;
    }
    const double mx[BENCH_VEHICLE_WHEELS] = {0.875, -0.875, 0.875, -0.875};
    const double mz[BENCH_VEHICLE_WHEELS] = {1.5, 1.5, -1.5, -1.5};
    for (int w = 0; w < BENCH_VEHICLE_WHEELS; w++) {
        s->wheels[w].mount[0] = mx[w];
        s->wheels[w].mount[1] = -0.25;
        s->wheels[w].mount[2] = mz[w];
        s->wheels[w].front = w < 2;
    }
    s->radius = 0.375;
    s->rest_length = 0.3125;
    s->max_travel = 0.1875;
    s->stiffness = 20000;
    s->damping = 2000;
    s->friction = 1;
    s->engine_force = 1600;
    s->max_steer = 0.5;
    s->solver_passes = 8 * (1 + 1); // our default world: 8 sub-steps x (solve + relax)
    return 0;
}

void bench_vehicle_scene_free(bench_vehicle_scene *s)
{
    free(s->vertices);
    free(s->triangles);
    s->vertices = NULL;
    s->triangles = NULL;
}

// Piecewise constant, no trigonometry: settle 1 s, accelerate straight over
// ramp A (2 m/s^2 to 10 m/s), coast through a half turn (radius ~16 m),
// coast straight (cars 2 and 3 over ramp B), a second half turn the same way
// (the cars end up heading +z again behind ramp A), then reverse throttle as
// a brake. Cars 2 and 3 steer the other way (mirrored), so no car crosses
// another's path.
bench_vehicle_controls bench_vehicle_script(uint32_t car, uint32_t tick, double dt)
{
    static const struct {
        double until_s, throttle, steer;
    } phases[] = {
        {1, 0, 0}, {6, 1, 0}, {11, 0, 0.375}, {13, 0, 0}, {18, 0, 0.375}, {1e9, -1, 0},
    };
    double s = tick * dt;
    size_t k = 0;
    while (s >= phases[k].until_s) {
        k++;
    }
    bench_vehicle_controls c = {phases[k].throttle, phases[k].steer};
    if (car >= BENCH_VEHICLE_CARS / 2) {
        c.steer = -c.steer;
    }
    return c;
}

// ---- driver ------------------------------------------------------------

typedef struct vehicle_result {
    double ms_tick[16];              // per repeat: total (controls + step) time / ticks
    double path[BENCH_VEHICLE_CARS]; // distance travelled by each car's centre, m (last run)
    bench_car_state end[BENCH_VEHICLE_CARS]; // state after the last tick (last run)
    double max_speed0;                       // car 0's top speed, m/s
    double min_up;        // lowest up_y of any car over the run (1 = level, < 0 = upside down)
    double max_y;         // highest chassis centre, m
    double contact_share; // wheels in contact / (wheels x ticks), all cars
    uint32_t lost;        // cars below y = -1 or not finite at the end
    double wall_s;        // wall time of all repeats
} vehicle_result;

static double len3(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static int run(const bench_vehicle_engine *e, const bench_vehicle_scene *s, uint32_t ticks,
               int repeats, vehicle_result *r)
{
    double t_start = bench_now_ns();
    for (int rep = 0; rep < repeats; rep++) {
        char err[256] = "";
        void *w = e->create(s, err, sizeof err);
        if (!w) {
            fprintf(stderr, "bench_vehicle %s: %s\n", e->name, err);
            return 1;
        }
        int last = rep == repeats - 1;
        bench_car_state prev[BENCH_VEHICLE_CARS];
        if (last) {
            memset(r->path, 0, sizeof r->path);
            r->max_speed0 = 0, r->min_up = 1, r->max_y = -INFINITY, r->contact_share = 0;
            for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) {
                e->car(w, k, &prev[k]);
            }
        }
        double total = 0, contacts = 0;
        for (uint32_t t = 0; t < ticks; t++) {
            bench_vehicle_controls c[BENCH_VEHICLE_CARS];
            for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) {
                c[k] = bench_vehicle_script(k, t, s->dt);
            }
            double t0 = bench_now_ns();
            for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) {
                e->controls(w, k, &c[k]);
            }
            e->step(w);
            total += bench_now_ns() - t0;
            if (!last) {
                continue;
            }
            for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) { // untimed: the sanity measures
                bench_car_state now;
                e->car(w, k, &now);
                double d[3] = {now.pos[0] - prev[k].pos[0], now.pos[1] - prev[k].pos[1],
                               now.pos[2] - prev[k].pos[2]};
                r->path[k] += len3(d);
                r->min_up = now.up_y < r->min_up ? now.up_y : r->min_up;
                r->max_y = now.pos[1] > r->max_y ? now.pos[1] : r->max_y;
                contacts += now.in_contact;
                if (k == 0 && len3(now.vel) > r->max_speed0) {
                    r->max_speed0 = len3(now.vel);
                }
                prev[k] = now;
            }
        }
        r->ms_tick[rep] = total / 1e6 / (double)(ticks ? ticks : 1);
        if (last) {
            r->lost = 0;
            for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) {
                e->car(w, k, &r->end[k]);
                const double *p = r->end[k].pos;
                r->lost += !(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])) || p[1] < -1;
            }
            r->contact_share = ticks ? contacts / (ticks * 4.0 * BENCH_VEHICLE_CARS) : 0;
            if (getenv("BENCH_DUMP_VEHICLES")) { // debugging aid: every car's end state
                for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) {
                    const bench_car_state *q = &r->end[k];
                    printf("  car %s %u: pos %.3f %.3f %.3f vel %.3f %.3f %.3f fwd %.3f %.3f "
                           "%.3f up_y %.3f wheels %u path %.2f\n",
                           e->name, k, q->pos[0], q->pos[1], q->pos[2], q->vel[0], q->vel[1],
                           q->vel[2], q->forward[0], q->forward[1], q->forward[2], q->up_y,
                           q->in_contact, r->path[k]);
                }
            }
        }
        e->destroy(w);
    }
    r->wall_s = (bench_now_ns() - t_start) / 1e9;
    return 0;
}

static void write_csv(FILE *f, const char *engine, uint32_t ticks, int repeats,
                      const vehicle_result *r)
{
#define ROW(metric, fmt, value, unit)                                                              \
    fprintf(f, "vehicle,cars_4,%s,%s," fmt ",%s\n", engine, metric, value, unit)
    for (int i = 0; i < repeats; i++) {
        ROW("ms_per_tick", "%.6f", r->ms_tick[i], "ms");
    }
    double mean = 0;
    for (int k = 0; k < BENCH_VEHICLE_CARS; k++) {
        mean += r->path[k] / BENCH_VEHICLE_CARS;
    }
    const bench_car_state *c0 = &r->end[0];
    ROW("ticks", "%u", ticks, "count");
    ROW("car0_path", "%.3f", r->path[0], "m");
    ROW("car0_end_x", "%.3f", c0->pos[0], "m");
    ROW("car0_end_z", "%.3f", c0->pos[2], "m");
    ROW("car0_end_speed", "%.3f", len3(c0->vel), "m/s");
    ROW("car0_max_speed", "%.3f", r->max_speed0, "m/s");
    ROW("mean_path", "%.3f", mean, "m");
    ROW("min_up_y", "%.4f", r->min_up, "ratio");
    ROW("max_y", "%.4f", r->max_y, "m");
    ROW("wheel_contact", "%.4f", r->contact_share, "ratio");
    ROW("lost", "%u", r->lost, "cars");
#undef ROW
}

// ---- the table (`--report FILE`) ----------------------------------------

#define REPORT_ENGINES 8
#define REPORT_METRICS 15

static const char *const report_metric[REPORT_METRICS] = {
    "ms_per_tick",    "ticks",          "car0_path", "car0_end_x",  "car0_end_z",
    "car0_end_speed", "car0_max_speed", "mean_path", "min_up_y",    "max_y",
    "wheel_contact",  "lost",           "ball_path", "score_team0", "score_team1"};

typedef struct report_cell {
    char case_name[32];
    char engine[32];
    double ms[64];
    int runs;
    double v[REPORT_METRICS];
} report_cell;

static int report(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    static report_cell cells[REPORT_ENGINES];
    int n = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *field[6];
        int nf = 0;
        for (char *p = strtok(line, ",\n"); p && nf < 6; p = strtok(NULL, ",\n")) {
            field[nf++] = p;
        }
        if (nf != 6 || strcmp(field[0], "vehicle") != 0) {
            continue;
        }
        int k = 0;
        while (k < n && !(strcmp(cells[k].case_name, field[1]) == 0 &&
                          strcmp(cells[k].engine, field[2]) == 0)) {
            k++;
        }
        if (k == n) {
            if (n == REPORT_ENGINES) {
                continue;
            }
            memset(&cells[n], 0, sizeof cells[n]);
            snprintf(cells[n].case_name, sizeof cells[n].case_name, "%s", field[1]);
            snprintf(cells[n].engine, sizeof cells[n].engine, "%s", field[2]);
            n++;
        }
        double v = strtod(field[4], NULL);
        if (strcmp(field[3], "ms_per_tick") == 0) {
            if (cells[k].runs < 64) {
                cells[k].ms[cells[k].runs++] = v;
            }
            continue;
        }
        for (int m = 1; m < REPORT_METRICS; m++) {
            if (strcmp(field[3], report_metric[m]) == 0) {
                cells[k].v[m] = v;
            }
        }
    }
    fclose(f);
    double bullet = 0;
    for (int k = 0; k < n; k++) {
        if (strcmp(cells[k].case_name, "cars_4") == 0 && strcmp(cells[k].engine, "bullet") == 0) {
            bullet = bench_min(cells[k].ms, (size_t)cells[k].runs);
        }
    }
    printf("  case     engine   ticks  ms/tick(min)   median  (min..max)          /bullet  car0 m  "
           "end x    end z   v end  v max  mean m  min up  max y  wheels lost\n");
    for (int k = 0; k < n; k++) {
        const report_cell *c = &cells[k];
        if (strcmp(c->case_name, "cars_4") != 0) {
            continue;
        }
        double sorted[64];
        memcpy(sorted, c->ms, sizeof sorted);
        double lo = bench_min(c->ms, (size_t)c->runs), hi = bench_max(c->ms, (size_t)c->runs);
        double med = bench_median(sorted, (size_t)c->runs);
        char ratio[16] = "-";
        if (bullet > 0 && strcmp(c->engine, "bullet") != 0) {
            snprintf(ratio, sizeof ratio, "%.2fx", lo / bullet);
        }
        printf("  %-8s %-8s %5.0f  %10.4f  %8.4f  (%.4f..%.4f)  %7s  %6.1f %7.2f %8.2f %6.2f "
               "%6.2f %7.1f %6.3f %6.3f %6.3f %4.0f\n",
               c->case_name, c->engine, c->v[1], lo, med, lo, hi, ratio, c->v[2], c->v[3], c->v[4],
               c->v[5], c->v[6], c->v[7], c->v[8], c->v[9], c->v[10], c->v[11]);
    }
    int game = 0;
    for (int k = 0; k < n; k++) {
        const report_cell *c = &cells[k];
        if (strcmp(c->case_name, "cars_4") == 0 || c->runs == 0) {
            continue;
        }
        double sorted[64];
        memcpy(sorted, c->ms, sizeof sorted);
        double lo = bench_min(c->ms, (size_t)c->runs), hi = bench_max(c->ms, (size_t)c->runs);
        double med = bench_median(sorted, (size_t)c->runs);
        printf("  game %-12s %-8s %5.0f ticks  %8.4f ms/tick (min; median %.4f, %.4f..%.4f)  "
               "goal <= 0.5 ms/tick: %s\n",
               c->case_name, c->engine, c->v[1], lo, med, lo, hi, lo <= 0.5 ? "met" : "NOT met");
        printf("  game %-12s sanity (last run): the bots rolled the ball %.1f m, score %.0f-%.0f\n",
               c->case_name, c->v[12], c->v[13], c->v[14]);
        game = 1;
    }
    if (!game) {
        printf("  game scene row: no rows (bench_vehicle_game did not run)\n");
    }
    return 0;
}

static int usage(const bench_vehicle_engine *e)
{
    fprintf(stderr,
            "usage: bench_vehicle%s%s [--ticks N] [--repeats R] [--csv FILE] [--quiet]\n"
            "       bench_vehicle --report FILE\n"
            "  Times four ray-cast cars on a 2048-triangle terrain in %s %s: R fresh runs\n"
            "  of N ticks (default 1200 = 20 s at 60 Hz, R = 3) with scripted controls;\n"
            "  ms/tick = (controls + step time) / ticks. --csv FILE appends rows\n"
            "  `vehicle,cars_4,engine,metric,value,unit`. --report FILE prints the table\n"
            "  of the rows in FILE (minimum over runs, ratio ours / Bullet).\n",
            strcmp(e->name, "ours") ? "_" : "", strcmp(e->name, "ours") ? e->name : "", e->name,
            e->version);
    return 2;
}

int bench_vehicle_main(const bench_vehicle_engine *e, int argc, char **argv)
{
    const char *csv = NULL;
    long ticks = 0, repeats = 3;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            ticks = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc) {
            return report(argv[++i]);
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else {
            return usage(e);
        }
    }
    if (repeats < 1 || repeats > 16 || ticks < 0 || ticks > 1000000) {
        return usage(e);
    }
    bench_vehicle_scene s;
    if (bench_vehicle_scene_init(&s) != 0) {
        fprintf(stderr, "bench_vehicle: out of memory\n");
        return 1;
    }
    uint32_t n = ticks ? (uint32_t)ticks : s.ticks;
    vehicle_result r;
    memset(&r, 0, sizeof r);
    if (run(e, &s, n, (int)repeats, &r) != 0) {
        bench_vehicle_scene_free(&s);
        return 1;
    }
    double lo = bench_min(r.ms_tick, (size_t)repeats), hi = bench_max(r.ms_tick, (size_t)repeats);
    if (!quiet) {
        const bench_car_state *c0 = &r.end[0];
        printf("  %-7s cars_4  %u ticks x%ld  %8.4f ms/tick (min; max %.4f)  car 0: %.1f m, end "
               "(%.2f, %.2f) at %.2f m/s, top %.2f m/s  min up %.3f  wheels %.3f  lost %u  "
               "[%.1f s]\n",
               e->name, n, repeats, lo, hi, r.path[0], c0->pos[0], c0->pos[2], len3(c0->vel),
               r.max_speed0, r.min_up, r.contact_share, r.lost, r.wall_s);
        fflush(stdout);
    }
    if (csv) {
        FILE *f = fopen(csv, "a");
        if (!f) {
            perror(csv);
            bench_vehicle_scene_free(&s);
            return 1;
        }
        write_csv(f, e->name, n, (int)repeats, &r);
        fclose(f);
    }
    bench_vehicle_scene_free(&s);
    return 0;
}
