// SPDX-License-Identifier: MIT
// build/bench_report: turns the rows the `make bench` sections wrote
// (`section,case,engine,metric,value,unit`) into
//   physics FILE                 the side-by-side physics table with ratios;
//   merge CSV SVG FILE...        tools/bench/results/latest.csv (machine rows,
//                                physics aggregated, other sections verbatim)
//                                and the SVG chart of the physics ratios.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCENES  16
#define MAX_ENGINES 8
#define MAX_RUNS    16
#define FIELD       160

typedef struct cell {
    int present;
    double ms[MAX_RUNS];
    int runs;
    double bodies, ticks, pen, moved, asleep, contacts, lost;
} cell;

typedef struct physics {
    char scene[MAX_SCENES][FIELD];
    char engine[MAX_ENGINES][FIELD];
    int nscenes, nengines;
    cell c[MAX_SCENES][MAX_ENGINES];
} physics;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Median of v[0..n) (sorts v).
static double median(double *v, int n)
{
    if (n <= 0) {
        return 0;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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
    double m = median(v, c->runs);
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

static void print_physics(const physics *ph)
{
    printf("  ms/tick = median over runs of (total ls_world_step / peer step time) / ticks;"
           " ratio = ours / peer (< 1.00: ours faster)\n");
    printf("  %-15s %6s %6s", "scene", "bodies", "ticks");
    for (int e = 0; e < ph->nengines; e++) {
        printf(" %9.9s ms", ph->engine[e]);
    }
    for (int e = 1; e < ph->nengines; e++) {
        char h[FIELD + 8];
        snprintf(h, sizeof h, "ours/%s", ph->engine[e]);
        printf(" %12.12s", h);
    }
    printf("\n");
    int met = 0, total = 0;
    for (int s = 0; s < ph->nscenes; s++) {
        const cell *c0 = &ph->c[s][0];
        printf("  %-15s %6.0f %6.0f", ph->scene[s], c0->bodies, c0->ticks);
        for (int e = 0; e < ph->nengines; e++) {
            printf(" %12.4f", ms_of(ph, s, e));
        }
        for (int e = 1; e < ph->nengines; e++) {
            double ours = ms_of(ph, s, 0), peer = ms_of(ph, s, e);
            printf(" %11.2fx", peer > 0 ? ours / peer : 0);
            total++;
            met += peer > 0 && ours <= peer;
        }
        printf("\n");
    }
    printf("  speed goal (ours <= every peer on every scene): %d of %d scene/peer pairs met\n", met,
           total);
    // Shapes v2 goal for the first hull version: ours within 1.5x of Bullet on the hull pile.
    for (int s = 0; s < ph->nscenes; s++) {
        for (int e = 1; e < ph->nengines; e++) {
            if (strcmp(ph->scene[s], "hull_pile") == 0 && strcmp(ph->engine[e], "bullet") == 0) {
                double ours = ms_of(ph, s, 0), peer = ms_of(ph, s, e);
                double ratio = peer > 0 ? ours / peer : 0;
                printf("  hull goal (ours/bullet <= 1.50x on hull_pile): %s (%.2fx)\n",
                       peer > 0 && ratio <= 1.5 ? "met" : "NOT met", ratio);
            }
        }
    }
    int qmet = 0;
    for (int s = 0; s < ph->nscenes; s++) {
        const cell *o = &ph->c[s][0];
        for (int e = 1; e < ph->nengines; e++) {
            const cell *p = &ph->c[s][e];
            qmet += p->present && o->pen <= p->pen && o->moved <= p->moved && o->lost <= p->lost;
        }
    }
    printf(
        "  resting-quality goal (ours max_pen, moved and lost <= the peer's): %d of %d pairs met\n",
        qmet, total);
    printf("  fairness at the end of the last run: deepest contact (m), bodies that moved > 1 cm"
           " over the last 100 ticks,\n  bodies asleep, bodies lost (below y = -1 m or not"
           " finite), touching pairs\n");
    printf("  %-15s %-8s %9s %7s %8s %5s %8s\n", "scene", "engine", "max_pen", "moved", "asleep",
           "lost", "contacts");
    for (int s = 0; s < ph->nscenes; s++) {
        for (int e = 0; e < ph->nengines; e++) {
            const cell *c = &ph->c[s][e];
            if (!c->present) {
                continue;
            }
            printf("  %-15s %-8s %9.4f %7.0f %4.0f/%-4.0f %4.0f %8.0f\n",
                   e == 0 ? ph->scene[s] : "", ph->engine[e], c->pen, c->moved, c->asleep,
                   c->bodies, c->lost, c->contacts);
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
            double peer = m, ours = ms_of(ph, s, 0);
            if (e > 0 && peer > 0) {
                fprintf(out, "physics,%s,%s,ratio_ours_over_peer,%.3f,x\n", sc, en, ours / peer);
            }
        }
    }
}

// Grouped bar chart, one group per scene and one bar per peer: ours / peer ms
// per tick on a log2 axis, so 2x slower and 2x faster are equally long bars
// up or down from the parity line at 1.0.
static double ratio_of(const physics *ph, int s, int e)
{
    double p = ms_of(ph, s, e), o = ms_of(ph, s, 0);
    return p > 0 && o > 0 ? o / p : 1;
}

static void write_svg(const char *path, const physics *ph, const char *subtitle)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    static const char *colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2"};
    const int W = 760, H = 460, left = 60, right = 20, top = 60, bottom = 100;
    int k = 1; // axis spans 2^-k .. 2^k
    for (int s = 0; s < ph->nscenes; s++) {
        for (int e = 1; e < ph->nengines; e++) {
            while (fabs(log2(ratio_of(ph, s, e))) > k && k < 10) {
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
            "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Physics ms/tick, ours / "
            "peer (log scale; below 1 = ours faster)</text>\n"
            "<text x=\"%d\" y=\"40\" fill=\"#555\">%s</text>\n",
            W, H, left, left, subtitle);
    for (int i = -k; i <= k; i++) {
        double y = mid - i * unit;
        fprintf(f,
                "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                left, W - right, y, y, left - 6, y + 4, pow(2, i));
    }
    int npeers = ph->nengines - 1;
    double group = ph->nscenes ? plot_w / ph->nscenes : plot_w;
    double bar = npeers > 0 ? group * 0.7 / npeers : 0;
    for (int s = 0; s < ph->nscenes; s++) {
        double gx = left + s * group + group * 0.15;
        for (int e = 1; e < ph->nengines; e++) {
            double r = ratio_of(ph, s, e), h = log2(r) * unit, x = gx + (e - 1) * bar;
            double y = h >= 0 ? mid - h : mid, ty = h >= 0 ? mid - h - 4 : mid - h + 14;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.2f</text>\n",
                    x, y, bar - 4, fabs(h), colors[(e - 1) % 5], x + (bar - 4) / 2, ty, r);
        }
        // More than 5 groups: every other name one line lower, so long names never touch.
        double ly = top + plot_h + 18 + (ph->nscenes > 5 && s % 2 ? 15 : 0);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                left + s * group + group / 2, ly, ph->scene[s]);
    }
    fprintf(f,
            "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
            "stroke-dasharray=\"6 4\"/><text x=\"%d\" y=\"%.1f\" fill=\"#c00\" "
            "text-anchor=\"end\">parity</text>\n",
            left, W - right, mid, mid, W - right, mid - 4);
    for (int e = 1; e < ph->nengines; e++) {
        double x = left + (e - 1) * 170;
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%d\">ours / %s</text>\n",
                x, H - 32, colors[(e - 1) % 5], x + 18, H - 22, ph->engine[e]);
    }
    fprintf(f, "</svg>\n");
    fclose(f);
}

static int merge(const char *out_csv, const char *out_svg, int nfiles, char **files)
{
    FILE *out = fopen(out_csv, "w");
    if (!out) {
        perror(out_csv);
        return 1;
    }
    fprintf(out, "section,case,engine,metric,value,unit\n");
    int rows = 0, have_physics = 0;
    physics *ph = calloc(1, sizeof *ph);
    char subtitle[512] = "";
    char cpu[FIELD] = "?", date[FIELD] = "?", cores[FIELD] = "?";
    for (int i = 0; i < nfiles; i++) {
        const char *base = strrchr(files[i], '/');
        base = base ? base + 1 : files[i];
        if (strcmp(base, "bench-physics.csv") == 0) {
            if (load_physics(files[i], ph) == 0) {
                write_physics_rows(out, ph);
                have_physics = 1;
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
            if (strcmp(r.f[0], "machine") == 0) {
                char *dst = strcmp(r.f[3], "cpu") == 0        ? cpu
                            : strcmp(r.f[3], "date_utc") == 0 ? date
                            : strcmp(r.f[3], "cores") == 0    ? cores
                                                              : NULL;
                if (dst) {
                    snprintf(dst, FIELD, "%s", r.f[4]);
                }
            }
        }
        fclose(f);
    }
    fclose(out);
    printf("  wrote %s (%d sections' rows + machine description)\n", out_csv, nfiles - 1);
    if (have_physics) {
        snprintf(subtitle, sizeof subtitle, "%s, %s cores, %s; median of %d runs", cpu, cores, date,
                 ph->c[0][0].runs);
        write_svg(out_svg, ph, subtitle);
        printf("  wrote %s\n", out_svg);
    }
    free(ph);
    return rows ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "physics") == 0) {
        physics *ph = calloc(1, sizeof *ph);
        if (!ph || load_physics(argv[2], ph) != 0) {
            return 1;
        }
        print_physics(ph);
        free(ph);
        return 0;
    }
    if (argc >= 5 && strcmp(argv[1], "merge") == 0) {
        return merge(argv[2], argv[3], argc - 4, argv + 4);
    }
    fprintf(stderr, "usage: bench_report physics FILE.csv\n"
                    "       bench_report merge OUT.csv OUT.svg FILE.csv...\n");
    return 2;
}
