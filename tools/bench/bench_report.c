// SPDX-License-Identifier: MIT
// build/bench_report: turns the rows the `make bench` sections wrote
// (`section,case,engine,metric,value,unit`) into
//   physics FILE                 the side-by-side physics table with ratios;
//   cloth FILE                   the cloth table (ours / Bullet btSoftBody);
//   merge CSV FILE...            tools/bench/results/latest.csv (machine rows,
//                                physics aggregated, other sections verbatim);
//   charts CSV DIR               from latest.csv alone, the SVG ratio charts
//                                DIR/physics_ratios.svg (ours / Bullet, ours / ODE)
//                                and DIR/box3d_ratios.svg (ours / Box3D), 1 and 2
//                                workers.
#define _POSIX_C_SOURCE 200809L
#include "bench_clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCENES  32
#define MAX_ENGINES 8
#define MAX_RUNS    16
#define FIELD       160

typedef struct cell {
    int present;
    double ms[MAX_RUNS];
    int runs;
    double bodies, ticks, pen, moved, asleep, contacts, lost;
    double joints, threads, joint_err, broken;
} cell;

typedef struct physics {
    char scene[MAX_SCENES][FIELD];
    char engine[MAX_ENGINES][FIELD];
    int nscenes, nengines;
    cell c[MAX_SCENES][MAX_ENGINES];
} physics;

typedef struct row {
    char f[6][FIELD];
} row;

// Splits one line into 6 comma-separated fields; 0 if it is not a row.
static int parse_row(const char *line, row *r)
{
    memset(r, 0, sizeof *r);
    int k = 0;
    size_t n = 0;
    for (const char *p = line; *p && *p != '\n' && *p != '\r'; p++) {
        if (*p == ',' && k < 5) {
            k++, n = 0;
        } else if (n + 1 < FIELD) {
            r->f[k][n++] = *p;
        }
    }
    return k == 5;
}

static int index_of(char names[][FIELD], int *count, int max, const char *name)
{
    for (int i = 0; i < *count; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    if (*count == max) {
        return -1;
    }
    snprintf(names[*count], FIELD, "%s", name);
    return (*count)++;
}

static void add_physics_row(physics *ph, const row *r)
{
    int s = index_of(ph->scene, &ph->nscenes, MAX_SCENES, r->f[1]);
    int e = index_of(ph->engine, &ph->nengines, MAX_ENGINES, r->f[2]);
    if (s < 0 || e < 0) {
        return;
    }
    cell *c = &ph->c[s][e];
    const char *m = r->f[3];
    double v = atof(r->f[4]);
    c->present = 1;
    if (strcmp(m, "ms_per_tick") == 0) {
        if (c->runs < MAX_RUNS) {
            c->ms[c->runs++] = v;
        }
    } else if (strcmp(m, "bodies") == 0) {
        c->bodies = v;
    } else if (strcmp(m, "ticks") == 0) {
        c->ticks = v;
    } else if (strcmp(m, "max_penetration") == 0) {
        c->pen = v;
    } else if (strcmp(m, "moved_gt_1cm_last_100_ticks") == 0) {
        c->moved = v;
    } else if (strcmp(m, "asleep") == 0) {
        c->asleep = v;
    } else if (strcmp(m, "contacts") == 0) {
        c->contacts = v;
    } else if (strcmp(m, "lost") == 0) {
        c->lost = v;
    } else if (strcmp(m, "joints") == 0) {
        c->joints = v;
    } else if (strcmp(m, "threads") == 0) {
        c->threads = v;
    } else if (strcmp(m, "joint_error_last_100_ticks") == 0) {
        c->joint_err = v;
    } else if (strcmp(m, "joints_broken") == 0) {
        c->broken = v;
    }
}

static int load_physics(const char *path, physics *ph)
{
    memset(ph, 0, sizeof *ph);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    char line[1024];
    row r;
    while (fgets(line, sizeof line, f)) {
        if (parse_row(line, &r) && strcmp(r.f[0], "physics") == 0) {
            add_physics_row(ph, &r);
        }
    }
    fclose(f);
    return 0;
}

static double median_ms(const cell *c, double *lo, double *hi)
{
    double v[MAX_RUNS];
    memcpy(v, c->ms, sizeof v);
    double m = bench_median(v, (size_t)c->runs);
    *lo = c->runs ? v[0] : 0;
    *hi = c->runs ? v[c->runs - 1] : 0;
    return m;
}

static double ms_of(const physics *ph, int s, int e)
{
    double lo, hi;
    const cell *c = &ph->c[s][e];
    return c->present && c->runs ? median_ms(c, &lo, &hi) : 0;
}

// Our engine's rows are named "ours" (1 worker) and "ours_Nw" (N workers); every
// other engine is a peer.
static int is_ours(const physics *ph, int e)
{
    return strncmp(ph->engine[e], "ours", 4) == 0;
}

// Index of the engine named `name`, or -1.
static int engine_index(const physics *ph, const char *name)
{
    for (int e = 0; e < ph->nengines; e++) {
        if (strcmp(ph->engine[e], name) == 0) {
            return e;
        }
    }
    return -1;
}

// Our 1-worker engine (the "ours" rows), or the first ours_* if absent.
static int ours_base(const physics *ph)
{
    int e = engine_index(ph, "ours");
    for (int k = 0; e < 0 && k < ph->nengines; k++) {
        e = is_ours(ph, k) ? k : -1;
    }
    return e;
}

static void print_ratio(double ours, double peer)
{
    if (ours > 0 && peer > 0) {
        printf(" %13.2fx", ours / peer);
    } else {
        printf(" %14s", "-");
    }
}

static void print_physics(const physics *ph)
{
    int o = ours_base(ph);
    printf("  ms/tick = median over runs of (total ls_world_step / peer step time) / ticks;"
           " ratio = ours / peer (< 1.00: ours faster);\n  ours = 1 worker, ours_Nw = N"
           " workers (same bits); '-' = the engine could not run the scene\n");
    printf("  %-15s %6s %6s %6s", "scene", "bodies", "joints", "ticks");
    for (int e = 0; e < ph->nengines; e++) {
        printf(" %9.9s ms", ph->engine[e]);
    }
    for (int a = 0; a < ph->nengines; a++) {
        for (int e = 0; is_ours(ph, a) && e < ph->nengines; e++) {
            if (!is_ours(ph, e)) {
                char h[2 * FIELD + 2];
                snprintf(h, sizeof h, "%s/%s", ph->engine[a], ph->engine[e]);
                printf(" %14.14s", h);
            }
        }
    }
    printf("\n");
    int met = 0, total = 0;
    for (int s = 0; s < ph->nscenes; s++) {
        const cell *c0 = NULL;
        for (int e = 0; e < ph->nengines && !c0; e++) {
            c0 = ph->c[s][e].present ? &ph->c[s][e] : NULL;
        }
        printf("  %-15s %6.0f %6.0f %6.0f", ph->scene[s], c0 ? c0->bodies : 0, c0 ? c0->joints : 0,
               c0 ? c0->ticks : 0);
        for (int e = 0; e < ph->nengines; e++) {
            double ms = ms_of(ph, s, e);
            if (ms > 0) {
                printf(" %12.4f", ms);
            } else {
                printf(" %12s", "-");
            }
        }
        for (int a = 0; a < ph->nengines; a++) {
            for (int e = 0; is_ours(ph, a) && e < ph->nengines; e++) {
                if (!is_ours(ph, e)) {
                    print_ratio(ms_of(ph, s, a), ms_of(ph, s, e));
                }
            }
        }
        printf("\n");
        for (int e = 0; o >= 0 && e < ph->nengines; e++) {
            if (!is_ours(ph, e)) {
                double ours = ms_of(ph, s, o), peer = ms_of(ph, s, e);
                total++;
                met += ours > 0 && peer > 0 && ours <= peer;
            }
        }
    }
    printf("  speed goal (ours, 1 worker, <= every peer on every scene): %d of %d scene/peer pairs"
           " met\n",
           met, total);
    for (int e = 0; e < ph->nengines; e++) { // worker speed-up, one line per ours_Nw
        if (!is_ours(ph, e) || e == o || o < 0) {
            continue;
        }
        printf("  %s speed-up over 1 worker:", ph->engine[e]);
        for (int s = 0; s < ph->nscenes; s++) {
            double one = ms_of(ph, s, o), many = ms_of(ph, s, e);
            if (one > 0 && many > 0) {
                printf(" %s %.2fx", ph->scene[s], one / many);
            }
        }
        printf("\n");
    }
    // Shapes v2 goal for the first hull version: ours within 1.5x of Bullet on the hull pile.
    for (int s = 0; s < ph->nscenes; s++) {
        int b = engine_index(ph, "bullet");
        if (strcmp(ph->scene[s], "hull_pile") == 0 && b >= 0 && o >= 0) {
            double ours = ms_of(ph, s, o), peer = ms_of(ph, s, b);
            double ratio = peer > 0 ? ours / peer : 0;
            printf("  hull goal (ours/bullet <= 1.50x on hull_pile): %s (%.2fx)\n",
                   peer > 0 && ours > 0 && ratio <= 1.5 ? "met" : "NOT met", ratio);
        }
    }
    int qmet = 0;
    for (int s = 0; s < ph->nscenes && o >= 0; s++) {
        const cell *c = &ph->c[s][o];
        for (int e = 0; e < ph->nengines; e++) {
            const cell *p = &ph->c[s][e];
            qmet += !is_ours(ph, e) && p->present && c->present && c->runs && c->pen <= p->pen &&
                    c->moved <= p->moved && c->lost <= p->lost && c->joint_err <= p->joint_err;
        }
    }
    printf(
        "  resting-quality goal (ours max_pen, moved, lost and joint_err <= the peer's): %d of %d"
        " pairs met\n",
        qmet, total);
    printf("  fairness at the end of the last run: deepest contact (m), bodies that moved > 1 cm"
           " over the last 100 ticks,\n  bodies asleep, bodies lost (below y = -1 m or not"
           " finite), touching pairs, and for joint scenes the\n  largest joint position error"
           " over the last 100 ticks (m: anchors apart, or length outside its range)\n");
    printf("  %-15s %-8s %9s %7s %10s %5s %8s %9s\n", "scene", "engine", "max_pen", "moved",
           "asleep", "lost", "contacts", "joint_err");
    for (int s = 0; s < ph->nscenes; s++) {
        int first = 1;
        for (int e = 0; e < ph->nengines; e++) {
            const cell *c = &ph->c[s][e];
            if (!c->present) {
                continue;
            }
            printf("  %-15s %-8s %9.4f %7.0f %5.0f/%-4.0f %5.0f %8.0f", first ? ph->scene[s] : "",
                   ph->engine[e], c->pen, c->moved, c->asleep, c->bodies, c->lost, c->contacts);
            if (c->joints > 0) {
                printf(" %9.4f", c->joint_err);
                if (c->broken > 0) {
                    printf(" (%.0f broken)", c->broken);
                }
            }
            printf("\n");
            first = 0;
        }
    }
}

static void write_physics_rows(FILE *out, const physics *ph)
{
    for (int s = 0; s < ph->nscenes; s++) {
        for (int e = 0; e < ph->nengines; e++) {
            const cell *c = &ph->c[s][e];
            if (!c->present) {
                continue;
            }
            double lo, hi, m = median_ms(c, &lo, &hi);
            const char *sc = ph->scene[s], *en = ph->engine[e];
            fprintf(out, "physics,%s,%s,ms_per_tick,%.6f,ms\n", sc, en, m);
            fprintf(out, "physics,%s,%s,ms_per_tick_min,%.6f,ms\n", sc, en, lo);
            fprintf(out, "physics,%s,%s,ms_per_tick_max,%.6f,ms\n", sc, en, hi);
            fprintf(out, "physics,%s,%s,runs,%d,count\n", sc, en, c->runs);
            fprintf(out, "physics,%s,%s,bodies,%.0f,count\n", sc, en, c->bodies);
            fprintf(out, "physics,%s,%s,ticks,%.0f,count\n", sc, en, c->ticks);
            fprintf(out, "physics,%s,%s,max_penetration,%.5f,m\n", sc, en, c->pen);
            fprintf(out, "physics,%s,%s,moved_gt_1cm_last_100_ticks,%.0f,bodies\n", sc, en,
                    c->moved);
            fprintf(out, "physics,%s,%s,asleep,%.0f,bodies\n", sc, en, c->asleep);
            fprintf(out, "physics,%s,%s,lost,%.0f,bodies\n", sc, en, c->lost);
            fprintf(out, "physics,%s,%s,contacts,%.0f,pairs\n", sc, en, c->contacts);
            fprintf(out, "physics,%s,%s,joints,%.0f,count\n", sc, en, c->joints);
            fprintf(out, "physics,%s,%s,threads,%.0f,count\n", sc, en, c->threads);
            if (c->joints > 0) {
                fprintf(out, "physics,%s,%s,joint_error_last_100_ticks,%.5f,m\n", sc, en,
                        c->joint_err);
                fprintf(out, "physics,%s,%s,joints_broken,%.0f,joints\n", sc, en, c->broken);
            }
            // Ratios on the peer's rows: ratio_ours_over_peer (1 worker), ratio_ours_Nw_over_peer.
            for (int a = 0; !is_ours(ph, e) && m > 0 && a < ph->nengines; a++) {
                double ours = ms_of(ph, s, a);
                if (is_ours(ph, a) && ours > 0) {
                    fprintf(out, "physics,%s,%s,ratio_%s_over_peer,%.3f,x\n", sc, en, ph->engine[a],
                            ours / m);
                }
            }
        }
    }
}

// ---- charts (`bench_report charts LATEST.csv DIR`) --------------------------
// Grouped bar charts drawn from latest.csv alone (never by re-running the
// bench): one group per scene, one bar per ratio (ours / peer ms per tick or
// step) on a log2 axis, so 2x slower and 2x faster are equally long bars up or
// down from the parity line at 1.0. Hand-written SVG; the same CSV gives the
// same bytes.

#define MAX_SERIES 6

typedef struct chart {
    const char *title;                     // top line
    char subtitle[512];                    // machine, date
    int nscenes, nseries;                  // groups, bars per group
    const char *scene[MAX_SCENES];         // group names
    char label[MAX_SERIES][2 * FIELD + 8]; // legend: "ours / bullet (1 worker)"
    const char *color[MAX_SERIES];         // one per series, fixed by its meaning
    double ratio[MAX_SCENES][MAX_SERIES];  // 0: absent (the engine could not run it)
} chart;

// Rows `section,...,metric,...` of a CSV into ph (every value is one run).
static int load_metric(const char *path, const char *section, const char *metric, physics *ph)
{
    memset(ph, 0, sizeof *ph);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    char line[1024];
    row r;
    while (fgets(line, sizeof line, f)) {
        if (!parse_row(line, &r) || strcmp(r.f[0], section) != 0 || strcmp(r.f[3], metric) != 0) {
            continue;
        }
        int sc = index_of(ph->scene, &ph->nscenes, MAX_SCENES, r.f[1]);
        int e = index_of(ph->engine, &ph->nengines, MAX_ENGINES, r.f[2]);
        if (sc >= 0 && e >= 0 && ph->c[sc][e].runs < MAX_RUNS) {
            ph->c[sc][e].present = 1;
            ph->c[sc][e].ms[ph->c[sc][e].runs++] = atof(r.f[4]);
        }
    }
    fclose(f);
    return 0;
}

// Add the series ours_name / peer_name if both engines have a time somewhere.
static void add_series(chart *c, const physics *ph, const char *ours_name, const char *peer_name,
                       const char *label, const char *color)
{
    int o = engine_index(ph, ours_name), p = engine_index(ph, peer_name);
    if (o < 0 || p < 0 || c->nseries == MAX_SERIES) {
        return;
    }
    int k = c->nseries, any = 0;
    snprintf(c->label[k], sizeof c->label[k], "%s", label);
    c->color[k] = color;
    for (int sc = 0; sc < ph->nscenes; sc++) {
        double mo = ms_of(ph, sc, o), mp = ms_of(ph, sc, p);
        c->ratio[sc][k] = mo > 0 && mp > 0 ? mo / mp : 0;
        any |= c->ratio[sc][k] > 0;
    }
    c->nseries += any;
}

static void write_chart(const char *path, const chart *c)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    const int W = 820, H = 470, left = 60, right = 20, top = 60, bottom = 110;
    int k = 1; // axis spans 2^-k .. 2^k
    for (int s = 0; s < c->nscenes; s++) {
        for (int i = 0; i < c->nseries; i++) {
            while (c->ratio[s][i] > 0 && fabs(log2(c->ratio[s][i])) > k && k < 10) {
                k++;
            }
        }
    }
    double plot_h = H - top - bottom, plot_w = W - left - right;
    double mid = top + plot_h / 2, unit = plot_h / 2 / k; // pixels per factor 2
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n"
            "<text x=\"%d\" y=\"40\" fill=\"#555\">%s</text>\n",
            W, H, left, c->title, left, c->subtitle);
    for (int i = -k; i <= k; i++) {
        double y = mid - i * unit;
        fprintf(f,
                "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                left, W - right, y, y, left - 6, y + 4, pow(2, i));
    }
    double group = c->nscenes ? plot_w / c->nscenes : plot_w;
    double bar = c->nseries > 0 ? group * 0.8 / c->nseries : 0;
    for (int s = 0; s < c->nscenes; s++) {
        double gx = left + s * group + group * 0.1;
        for (int i = 0; i < c->nseries; i++) {
            double r = c->ratio[s][i], x = gx + i * bar;
            if (r <= 0) {
                fprintf(f,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#999\">-"
                        "</text>\n",
                        x + (bar - 2) / 2, mid - 4);
                continue;
            }
            double h = log2(r) * unit;
            double y = h >= 0 ? mid - h : mid, ty = h >= 0 ? mid - h - 4 : mid - h + 12;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                    "<title>%s %s: %.2f</title></rect>\n"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"%d\">%.2f"
                    "</text>\n",
                    x, y, bar - 2, fabs(h) < 0.5 ? 0.5 : fabs(h), c->color[i], c->scene[s],
                    c->label[i], r, x + (bar - 2) / 2, ty, bar < 22 ? 8 : 10, r);
        }
        // More than 5 groups: every other name one line lower, so long names never touch.
        double ly = top + plot_h + 18 + (c->nscenes > 5 && s % 2 ? 15 : 0);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                left + s * group + group / 2, ly, c->scene[s]);
    }
    fprintf(f,
            "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
            "stroke-dasharray=\"6 4\"/><text x=\"%d\" y=\"%.1f\" fill=\"#c00\" "
            "text-anchor=\"end\">parity</text>\n",
            left, W - right, mid, mid, W - right, mid - 4);
    for (int i = 0; i < c->nseries; i++) {
        double x = left + (i % 3) * 250;
        int y = H - 48 + (i / 3) * 18;
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%d\">%s</text>\n",
                x, y, c->color[i], x + 18, y + 10, c->label[i]);
    }
    fprintf(f, "</svg>\n");
    fclose(f);
}

// The machine rows' cpu, cores and date as the charts' subtitle.
static void machine_subtitle(const char *path, char *out, size_t size)
{
    char cpu[FIELD] = "?", date[FIELD] = "?", cores[FIELD] = "?", line[1024];
    row r;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (parse_row(line, &r) && strcmp(r.f[0], "machine") == 0) {
            char *dst = strcmp(r.f[3], "cpu") == 0        ? cpu
                        : strcmp(r.f[3], "date_utc") == 0 ? date
                        : strcmp(r.f[3], "cores") == 0    ? cores
                                                          : NULL;
            if (dst) {
                snprintf(dst, FIELD, "%s", r.f[4]);
            }
        }
    }
    if (f) {
        fclose(f);
    }
    snprintf(out, size, "%s, %s cores, %s; tools/bench/results/latest.csv", cpu, cores, date);
}

// physics_ratios.svg (section 1: ours / Bullet and ours / ODE, 1 and 2 workers)
// and box3d_ratios.svg (section 9: ours / Box3D, 1 and 2 workers each) in dir,
// each only when latest.csv has its section.
static int charts(const char *csv, const char *dir)
{
    physics *ph = calloc(1, sizeof *ph);
    chart *c = calloc(1, sizeof *c);
    int written = 0;
    char path[4096];
    if (!ph || !c) {
        return 1;
    }
    if (load_metric(csv, "physics", "ms_per_tick", ph) == 0 && ph->nscenes) {
        c->title = "Physics ms/tick, ours / peer (log scale; below 1 = ours faster)";
        machine_subtitle(csv, c->subtitle, sizeof c->subtitle);
        add_series(c, ph, "ours", "bullet", "ours / Bullet (1 worker)", "#4e79a7");
        add_series(c, ph, "ours_2w", "bullet", "ours 2 workers / Bullet", "#a0cbe8");
        add_series(c, ph, "ours", "ode", "ours / ODE (1 worker)", "#f28e2b");
        add_series(c, ph, "ours_2w", "ode", "ours 2 workers / ODE", "#ffbe7d");
        c->nscenes = ph->nscenes;
        for (int s = 0; s < ph->nscenes; s++) {
            c->scene[s] = ph->scene[s];
        }
        snprintf(path, sizeof path, "%s/physics_ratios.svg", dir);
        write_chart(path, c);
        printf("  wrote %s\n", path);
        written++;
    }
    memset(c, 0, sizeof *c);
    if (load_metric(csv, "box3d", "ms_per_step", ph) == 0 && ph->nscenes) {
        c->title = "Box3D's scenes, ms/step, ours / Box3D (log scale; below 1 = ours faster)";
        machine_subtitle(csv, c->subtitle, sizeof c->subtitle);
        add_series(c, ph, "ours", "box3d", "ours / Box3D (1 worker each)", "#59a14f");
        add_series(c, ph, "ours_2w", "box3d_2w", "ours / Box3D (2 workers each)", "#8cd17d");
        add_series(c, ph, "ours_default", "box3d", "ours, 8 sub-steps / Box3D (1 worker)",
                   "#b07aa1");
        // Scenes with a time of both: the quality-only rows have one engine pair.
        for (int s = 0; s < ph->nscenes; s++) {
            int any = 0;
            for (int i = 0; i < c->nseries; i++) {
                any |= c->ratio[s][i] > 0;
            }
            if (any) {
                for (int i = 0; i < c->nseries; i++) {
                    c->ratio[c->nscenes][i] = c->ratio[s][i];
                }
                c->scene[c->nscenes++] = ph->scene[s];
            }
        }
        snprintf(path, sizeof path, "%s/box3d_ratios.svg", dir);
        write_chart(path, c);
        printf("  wrote %s\n", path);
        written++;
    }
    free(ph);
    free(c);
    return written ? 0 : 1;
}

static int merge(const char *out_csv, int nfiles, char **files)
{
    FILE *out = fopen(out_csv, "w");
    if (!out) {
        perror(out_csv);
        return 1;
    }
    fprintf(out, "section,case,engine,metric,value,unit\n");
    int rows = 0;
    physics *ph = calloc(1, sizeof *ph);
    for (int i = 0; i < nfiles; i++) {
        const char *base = strrchr(files[i], '/');
        base = base ? base + 1 : files[i];
        if (strcmp(base, "bench-physics.csv") == 0) {
            if (load_physics(files[i], ph) == 0) {
                write_physics_rows(out, ph);
                rows++;
            }
            continue;
        }
        FILE *f = fopen(files[i], "r");
        if (!f) {
            perror(files[i]);
            continue;
        }
        char line[1024];
        row r;
        while (fgets(line, sizeof line, f)) {
            if (!parse_row(line, &r)) {
                continue;
            }
            fprintf(out, "%s,%s,%s,%s,%s,%s\n", r.f[0], r.f[1], r.f[2], r.f[3], r.f[4], r.f[5]);
            rows++;
        }
        fclose(f);
    }
    fclose(out);
    printf("  wrote %s (%d sections' rows + machine description)\n", out_csv, nfiles - 1);
    free(ph);
    return rows ? 0 : 1;
}

// ---- cloth (`bench_report cloth FILE`): one row per scene and engine -------

#define CLOTH_METRICS 10
static const char *const cloth_metric[CLOTH_METRICS] = {
    "particles", "sticks",   "iterations",          "ticks", "max_strain", "sphere_penetration",
    "pin_drift", "lowest_y", "max_speed_last_tick", "lost"};

typedef struct cloth_cell {
    char scene[FIELD], engine[FIELD];
    double ms[MAX_RUNS];
    int runs;
    double m[CLOTH_METRICS]; // of the last run
} cloth_cell;

static double cloth_ms(const cloth_cell *c, double *lo, double *hi)
{
    double v[MAX_RUNS];
    memcpy(v, c->ms, sizeof v);
    double m = bench_median(v, (size_t)c->runs);
    *lo = c->runs ? v[0] : 0, *hi = c->runs ? v[c->runs - 1] : 0;
    return m;
}

// The cloth table: ms/tick (median of the runs), ours / Bullet, and the state
// each engine ended in (SPEC: same measures for every engine, cloth_common.c).
static int print_cloth(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    static cloth_cell cells[MAX_SCENES * MAX_ENGINES];
    int n = 0;
    char line[1024];
    row r;
    while (fgets(line, sizeof line, f)) {
        if (!parse_row(line, &r) || strcmp(r.f[0], "cloth") != 0) {
            continue;
        }
        int k = 0;
        while (k < n && (strcmp(cells[k].scene, r.f[1]) || strcmp(cells[k].engine, r.f[2]))) {
            k++;
        }
        if (k == n) {
            if (n == MAX_SCENES * MAX_ENGINES) {
                continue;
            }
            memset(&cells[n], 0, sizeof cells[n]);
            snprintf(cells[n].scene, FIELD, "%s", r.f[1]);
            snprintf(cells[n].engine, FIELD, "%s", r.f[2]);
            n++;
        }
        double v = atof(r.f[4]);
        if (strcmp(r.f[3], "ms_per_tick") == 0 && cells[k].runs < MAX_RUNS) {
            cells[k].ms[cells[k].runs++] = v;
        }
        for (int m = 0; m < CLOTH_METRICS; m++) {
            if (strcmp(r.f[3], cloth_metric[m]) == 0) {
                cells[k].m[m] = v;
            }
        }
    }
    fclose(f);
    printf("  ms/tick = median over runs of (total step time) / ticks; ratio = engine / bullet"
           " (< 1.00: faster); the state at the end:\n  strain = worst |L - r| / r of the"
           " structural sticks, pen = deepest particle inside sphere + particle radius,\n  pins ="
           " worst pinned-particle drift, low = lowest particle, v = fastest particle over the"
           " last tick\n");
    printf("  %-10s %-9s %9s %6s %3s %5s %10s %18s %9s %7s %7s %9s %7s %7s %4s\n", "scene",
           "engine", "particles", "sticks", "it", "ticks", "ms/tick", "(min..max)", "/bullet",
           "strain", "pen m", "pins m", "low m", "v m/s", "lost");
    for (int k = 0; k < n; k++) {
        const cloth_cell *c = &cells[k];
        double lo, hi, ms = cloth_ms(c, &lo, &hi), peer = 0, plo, phi;
        for (int j = 0; j < n; j++) {
            if (strcmp(cells[j].scene, c->scene) == 0 && strcmp(cells[j].engine, "bullet") == 0) {
                peer = cloth_ms(&cells[j], &plo, &phi);
            }
        }
        char range[48];
        snprintf(range, sizeof range, "(%.3f..%.3f)", lo, hi);
        printf("  %-10s %-9s %9.0f %6.0f %3.0f %5.0f %10.4f %18s", c->scene, c->engine, c->m[0],
               c->m[1], c->m[2], c->m[3], ms, range);
        if (peer > 0 && strcmp(c->engine, "bullet") != 0) {
            printf(" %8.2fx", ms / peer);
        } else {
            printf(" %9s", "-");
        }
        printf(" %7.4f %7.4f %9.6f %7.3f %7.3f %4.0f\n", c->m[4], c->m[5], c->m[6], c->m[7],
               c->m[8], c->m[9]);
    }
    for (int k = 0; k < n; k++) {
        double lo, hi, ms = cloth_ms(&cells[k], &lo, &hi);
        if (strcmp(cells[k].engine, "ours") == 0) {
            printf("  goal <= 2 ms/tick on one thread (%s): %.3f ms/tick, %s\n", cells[k].scene, ms,
                   ms <= 2.0 ? "met" : "NOT met");
        }
    }
    return n ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "cloth") == 0) {
        return print_cloth(argv[2]);
    }
    if (argc == 3 && strcmp(argv[1], "physics") == 0) {
        physics *ph = calloc(1, sizeof *ph);
        if (!ph || load_physics(argv[2], ph) != 0) {
            return 1;
        }
        print_physics(ph);
        free(ph);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "merge") == 0) {
        return merge(argv[2], argc - 3, argv + 3);
    }
    if (argc == 4 && strcmp(argv[1], "charts") == 0) {
        return charts(argv[2], argv[3]);
    }
    fprintf(stderr, "usage: bench_report physics FILE.csv\n"
                    "       bench_report cloth FILE.csv\n"
                    "       bench_report merge OUT.csv FILE.csv...\n"
                    "       bench_report charts LATEST.csv DIR\n");
    return 2;
}
