// SPDX-License-Identifier: MIT
// build/bench_snapshot: ls_world_snapshot_save / _restore of a settled scene
// (the 1000-box pile after its ticks) against a plain memcpy of the same
// number of bytes, in one run. Also checks that restore brings back the state
// (same canonical checksum), so the timed code is the real thing.
// Then the rollback frame of a lockstep game: the settled pile is disturbed
// (every tenth box thrown up and sideways, one tick stepped), saved, and each
// frame restores that snapshot and re-simulates ROLLBACK_TICKS ticks, with 1
// worker and with each `--threads N`; the frames must all end on the same
// checksum whatever the worker count.
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 9
/// Ticks a rollback frame re-simulates, and frames timed per worker count.
#define ROLLBACK_TICKS  8
#define ROLLBACK_FRAMES 15
/// The rollback goal: a frame within 16 ms (60 Hz) with 2 workers.
#define ROLLBACK_GOAL_MS 16.0
/// Solver v3's goal (issue 26) for the disturbed pile_1000: a frame within 4 ms
/// with 2 workers.
#define ROLLBACK_PILE_GOAL_MS 4.0
#define MAX_WORKER_RUNS       8

typedef struct ctx {
    ls_world *w;
    uint8_t *buf, *copy;
    size_t size;
} ctx;

typedef void (*op_fn)(ctx *c);

static void op_save(ctx *c)
{
    if (ls_world_snapshot_save(c->w, c->buf, c->size) != c->size) {
        abort();
    }
}

static void op_restore(ctx *c)
{
    if (ls_world_snapshot_restore(c->w, c->buf, c->size, NULL) != LS_OK) {
        abort();
    }
}

static void op_memcpy(ctx *c)
{
    memcpy(c->copy, c->buf, c->size);
    // Keep the copy observable so the compiler cannot drop it.
    __asm__ volatile("" : : "r"(c->copy) : "memory");
}

// Median ns per call over BATCHES batches of `reps` calls.
static double time_op(op_fn f, ctx *c, int reps)
{
    double ns[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        double t0 = bench_now_ns();
        for (int r = 0; r < reps; r++) {
            f(c);
        }
        ns[b] = (bench_now_ns() - t0) / reps;
    }
    return bench_median(ns, BATCHES);
}

// The profile clock of BENCH_PROFILE (ls_world_def.profile_clock).
static uint64_t profile_clock(void *context)
{
    (void)context;
    return (uint64_t)bench_now_ns();
}

/// Stages of ls_profile that BENCH_PROFILE prints, in its order.
#define STAGES 14

static void profile_add(uint64_t *sum, const ls_profile *p)
{
    const uint64_t v[STAGES] = {
        p->step,    p->proxies,  p->vehicles,    p->pairs,  p->narrow,     p->contacts,  p->wake,
        p->prepare, p->substeps, p->restitution, p->finish, p->continuous, p->particles, p->sleep};
    for (int k = 0; k < STAGES; k++) {
        sum[k] += v[k];
    }
}

// A world of the scene with `workers` workers.

static ls_world *make_world(ls_scene *sc, uint32_t workers, ls_error *err)
{
    sc->world.worker_count = workers; // results are the same bits for any count
    sc->world.profile_clock = getenv("BENCH_PROFILE") ? profile_clock : NULL;
    return ls_scene_instantiate(sc, err);
}

static int settle(const char *path, ls_scene *sc, ctx *c, uint32_t *ticks)
{
    ls_error err;
    if (ls_scene_load(path, sc, &err) != LS_OK) {
        fprintf(stderr, "%s:%u:%u: %s\n", path, err.line, err.column, err.message);
        return 1;
    }
    c->w = make_world(sc, 1, &err);
    *ticks = sc->ticks;
    if (!c->w) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    for (uint32_t t = 0; t < *ticks; t++) {
        ls_world_step(c->w);
    }
    return 0;
}

// Save, step on, restore: the checksum must be the saved one.
static int check_round_trip(ctx *c)
{
    uint64_t before = ls_world_checksum(c->w);
    op_save(c);
    for (int t = 0; t < 10; t++) {
        ls_world_step(c->w);
    }
    op_restore(c);
    if (ls_world_checksum(c->w) != before) {
        fprintf(stderr, "bench_snapshot: restore did not reproduce the saved state\n");
        return 1;
    }
    return 0;
}

// Throws every tenth dynamic body up and sideways (waking it and its island)
// and steps one tick: the state a rollback restores.
static void disturb(ls_world *w)
{
    uint32_t n = ls_world_body_count(w);
    for (uint32_t i = 0; i < n; i += 10) {
        ls_body_id id = ls_world_body_at(w, i);
        if (ls_body_type_of(w, id) == LS_BODY_DYNAMIC) {
            ls_fx s = (ls_fx)((i / 10) % 2 ? 65536 : -65536);
            ls_body_set_velocity(w, id, ls_vec3_make(s, 4 * 65536, 0), ls_vec3_make(0, 0, 2 * s));
        }
    }
    ls_world_step(w);
}

typedef struct rollback_run {
    uint32_t workers;
    double ms_frame; // median over frames of (restore + ROLLBACK_TICKS steps)
    double ms_restore;
    uint64_t checksum; // after the frame's last tick
    int same;          // every frame ended on that checksum
} rollback_run;

// Restores `snap` into a world of `workers` workers and re-simulates
// ROLLBACK_TICKS ticks, ROLLBACK_FRAMES times.
static int rollback(ls_scene *sc, const uint8_t *snap, size_t size, rollback_run *r)
{
    ls_error err;
    ls_world *w = make_world(sc, r->workers, &err);
    if (!w) {
        fprintf(stderr, "rollback: %s\n", err.message);
        return 1;
    }
    double frame[ROLLBACK_FRAMES], rest[ROLLBACK_FRAMES];
    uint64_t stage[STAGES] = {0};
    r->same = 1;
    for (int f = 0; f < ROLLBACK_FRAMES; f++) {
        double t0 = bench_now_ns();
        if (ls_world_snapshot_restore(w, snap, size, &err) != LS_OK) {
            fprintf(stderr, "rollback: restore failed: %s\n", err.message);
            ls_world_destroy(w);
            return 1;
        }
        double t1 = bench_now_ns();
        for (int t = 0; t < ROLLBACK_TICKS; t++) {
            ls_world_step(w);
            ls_profile p = ls_world_profile(w);
            profile_add(stage, &p);
        }
        double t2 = bench_now_ns();
        frame[f] = (t2 - t0) / 1e6, rest[f] = (t1 - t0) / 1e6;
        uint64_t sum = ls_world_checksum(w);
        if (f == 0) {
            r->checksum = sum;
        }
        r->same = r->same && sum == r->checksum;
    }
    if (sc->world.profile_clock) {
        // BENCH_PROFILE: the mean stage times of the re-simulated ticks (ls_profile's order).
        static const char *const names[STAGES] = {
            "step",    "proxies",  "vehicles",    "pairs",  "narrow",     "contacts",  "wake",
            "prepare", "substeps", "restitution", "finish", "continuous", "particles", "sleep"};
        printf("  stages, %u workers, ms/tick:", r->workers);
        for (int k = 0; k < STAGES; k++) {
            printf(" %s %.3f", names[k],
                   (double)stage[k] / 1e6 / (ROLLBACK_FRAMES * ROLLBACK_TICKS));
        }
        printf("\n");
    }
    r->ms_frame = bench_median(frame, ROLLBACK_FRAMES);
    r->ms_restore = bench_median(rest, ROLLBACK_FRAMES);
    ls_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    const char *csv = NULL;
    rollback_run runs[MAX_WORKER_RUNS] = {{1, 0, 0, 0, 0}};
    int nruns = 1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && nruns < MAX_WORKER_RUNS) {
            long n = strtol(argv[++i], NULL, 10);
            if (n < 1 || n > 64) {
                argc = 0; // usage
                break;
            }
            runs[nruns++].workers = (uint32_t)n;
        } else {
            argc = 0;
            break;
        }
    }
    if (argc < 2) {
        fprintf(stderr, "usage: bench_snapshot SCENE [--threads N]... [--csv FILE]\n");
        return 2;
    }
    ctx c = {0};
    ls_scene sc;
    uint32_t ticks = 0;
    if (settle(argv[1], &sc, &c, &ticks) != 0) {
        return 1;
    }
    c.size = ls_world_snapshot_size(c.w);
    c.buf = malloc(c.size);
    c.copy = malloc(c.size);
    if (!c.buf || !c.copy || check_round_trip(&c) != 0) {
        return 1;
    }
    // About 2 MB per batch of memcpy keeps each batch well above timer resolution.
    int reps = (int)(4000000 / (c.size + 1)) + 20;
    double t_save = time_op(op_save, &c, reps);
    double t_restore = time_op(op_restore, &c, reps);
    double t_copy = time_op(op_memcpy, &c, reps);
    ls_step_info info = ls_world_info(c.w);
    printf("  scene %s after %u ticks: %u bodies (%u asleep), %u contacts, snapshot %zu bytes\n",
           argv[1], ticks, ls_world_body_count(c.w), info.asleep_bodies, info.contacts, c.size);
    printf("  %-22s %12s %12s %10s\n", "operation", "ns/call", "GB/s", "vs memcpy");
    printf("  %-22s %12.0f %12.2f %9.2fx\n", "snapshot save", t_save, (double)c.size / t_save,
           t_save / t_copy);
    printf("  %-22s %12.0f %12.2f %9.2fx\n", "snapshot restore", t_restore,
           (double)c.size / t_restore, t_restore / t_copy);
    printf("  %-22s %12.0f %12.2f %9.2fx\n", "memcpy (same bytes)", t_copy, (double)c.size / t_copy,
           1.0);
    printf("  restore verified: checksum after restore equals the saved state's\n");

    // Rollback frames from the disturbed pile.
    disturb(c.w);
    size_t rsize = ls_world_snapshot_size(c.w);
    uint8_t *rsnap = malloc(rsize);
    if (!rsnap || ls_world_snapshot_save(c.w, rsnap, rsize) != rsize) {
        fprintf(stderr, "bench_snapshot: cannot save the disturbed pile\n");
        return 1;
    }
    ls_step_info dinfo = ls_world_info(c.w);
    printf(
        "  rollback frame: restore the disturbed scene (%u bodies awake) and re-simulate %d ticks;"
        "\n  median of %d frames (goal: <= %.0f ms with 2 workers)\n",
        dinfo.awake_bodies, ROLLBACK_TICKS, ROLLBACK_FRAMES, ROLLBACK_GOAL_MS);
    printf("  %-10s %12s %12s %12s  %s\n", "workers", "ms/frame", "restore ms", "ms/tick",
           "checksum after the frame");
    int bad = 0;
    for (int k = 0; k < nruns; k++) {
        rollback_run *r = &runs[k];
        if (rollback(&sc, rsnap, rsize, r) != 0) {
            return 1;
        }
        printf("  %-10u %12.3f %12.3f %12.3f  %016llx%s%s\n", r->workers, r->ms_frame,
               r->ms_restore, (r->ms_frame - r->ms_restore) / ROLLBACK_TICKS,
               (unsigned long long)r->checksum, r->same ? "" : " (frames DIFFER)",
               r->checksum == runs[0].checksum ? "" : " (DIFFERS from 1 worker)");
        bad |= !r->same || r->checksum != runs[0].checksum;
        if (r->workers == 2) {
            printf("  rollback goal (<= %.0f ms per frame with 2 workers): %s (%.2f ms)\n",
                   ROLLBACK_GOAL_MS, r->ms_frame <= ROLLBACK_GOAL_MS ? "met" : "NOT met",
                   r->ms_frame);
            if (strstr(argv[1], "pile_1000") != NULL) {
                printf("  Solver v3 goal for this pile (<= %.0f ms per frame with 2 workers): "
                       "%s (%.2f ms)\n",
                       ROLLBACK_PILE_GOAL_MS,
                       r->ms_frame <= ROLLBACK_PILE_GOAL_MS ? "met" : "NOT met", r->ms_frame);
            }
        }
    }
    if (bad) {
        fprintf(stderr, "bench_snapshot: rollback frames are not deterministic\n");
        return 1;
    }
    free(rsnap);
    ls_scene_free(&sc);
    if (csv) {
        FILE *f = fopen(csv, "a");
        if (!f) {
            perror(csv);
            return 1;
        }
        // Rows are named by the scene's file stem (pile_1000, arena, soccer).
        char stem[64];
        const char *base = strrchr(argv[1], '/');
        base = base ? base + 1 : argv[1];
        size_t len = strcspn(base, ".");
        snprintf(stem, sizeof stem, "%.*s", (int)(len < 63 ? len : 63), base);
        fprintf(f, "snapshot,%s,ours,bytes,%zu,bytes\n", stem, c.size);
        fprintf(f, "snapshot,%s,ours,save_ns,%.0f,ns\n", stem, t_save);
        fprintf(f, "snapshot,%s,ours,restore_ns,%.0f,ns\n", stem, t_restore);
        fprintf(f, "snapshot,%s,memcpy,copy_ns,%.0f,ns\n", stem, t_copy);
        fprintf(f, "snapshot,%s,ours,save_over_memcpy,%.2f,x\n", stem, t_save / t_copy);
        fprintf(f, "snapshot,%s,ours,restore_over_memcpy,%.2f,x\n", stem, t_restore / t_copy);
        for (int k = 0; k < nruns; k++) {
            char eng[32];
            if (runs[k].workers > 1) {
                snprintf(eng, sizeof eng, "ours_%uw", runs[k].workers);
            } else {
                snprintf(eng, sizeof eng, "ours");
            }
            fprintf(f, "snapshot,rollback_%s,%s,ms_per_frame,%.3f,ms\n", stem, eng,
                    runs[k].ms_frame);
            fprintf(f, "snapshot,rollback_%s,%s,restore_ms,%.3f,ms\n", stem, eng,
                    runs[k].ms_restore);
            fprintf(f, "snapshot,rollback_%s,%s,ticks_per_frame,%d,count\n", stem, eng,
                    ROLLBACK_TICKS);
        }
        fclose(f);
    }
    ls_world_destroy(c.w);
    free(c.buf);
    free(c.copy);
    return 0;
}
