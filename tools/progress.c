// SPDX-License-Identifier: MIT
// The progress line (see progress.h).
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_DELAY_S  0.5
#define PROGRESS_PERIOD_S 0.1
#define PROGRESS_WIDTH    30

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool cli_progress_available(void)
{
    return isatty(STDERR_FILENO) != 0;
}

void cli_progress_init(cli_progress *p, const char *label, const char *unit, uint64_t total,
                       bool allowed)
{
    p->enabled = allowed && cli_progress_available();
    p->drawn = false;
    p->label = label;
    p->unit = unit;
    p->total = total;
    p->start = p->enabled ? now_seconds() : 0.0;
    p->last = p->start;
}

void cli_progress_update(cli_progress *p, uint64_t done)
{
    if (!p->enabled) {
        return;
    }
    double t = now_seconds();
    if (t - p->start < PROGRESS_DELAY_S || (p->drawn && t - p->last < PROGRESS_PERIOD_S)) {
        return;
    }
    p->last = t;
    p->drawn = true;
    if (p->total) {
        uint64_t d = done < p->total ? done : p->total;
        int fill = (int)(d * PROGRESS_WIDTH / p->total);
        fprintf(stderr, "\r%s [%.*s%*s] %3d%% %llu/%llu %s  %.1f s\033[K", p->label, fill,
                "##############################", PROGRESS_WIDTH - fill, "",
                (int)(d * 100 / p->total), (unsigned long long)done, (unsigned long long)p->total,
                p->unit, t - p->start);
    } else {
        fprintf(stderr, "\r%s %llu %s  %.1f s\033[K", p->label, (unsigned long long)done, p->unit,
                t - p->start);
    }
    fflush(stderr);
}

void cli_progress_done(cli_progress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = false;
    }
}
