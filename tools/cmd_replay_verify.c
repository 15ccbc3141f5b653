// SPDX-License-Identifier: MIT
// `lockstep replay verify FILE [--jobs N] [--stats]`: re-simulate a recording.
// One job re-simulates continuously from the scene; N jobs verify the segments
// between keyframes on N threads. Both check the same ticks and keyframes, and
// the first failure in tick order is reported, so the output is identical.
#define _POSIX_C_SOURCE 200809L
#include "replay_glue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS 64

typedef struct verify_run {
    const ls_replay_reader *r;
    replay_glue *glue;
    uint32_t segments;
    uint32_t jobs;
    ls_replay_verify_result *results; // one per segment (jobs > 1) or one (jobs == 1)
    atomic_uint next_segment;
    atomic_uint first_failure_tick; // segments starting after it are skipped
    atomic_uint_fast64_t ticks_done;
    atomic_uint workers_done;
} verify_run;

static void count_ticks(void *ctx, uint32_t ticks)
{
    verify_run *v = ctx;
    atomic_fetch_add_explicit(&v->ticks_done, ticks, memory_order_relaxed);
}

static void *worker(void *arg)
{
    verify_run *v = arg;
    ls_replay_sim sim = replay_glue_sim(v->glue);
    if (v->jobs == 1) {
        ls_replay_verify_segments(v->r, &sim, 0, v->segments, true, &v->results[0]);
    } else {
        for (;;) {
            uint32_t i = atomic_fetch_add(&v->next_segment, 1);
            if (i >= v->segments) {
                break;
            }
            if (ls_replay_segment_start(v->r, i) > atomic_load(&v->first_failure_tick)) {
                continue; // an earlier failure is already known
            }
            ls_replay_verify_segments(v->r, &sim, i, i + 1, true, &v->results[i]);
            uint32_t t = v->results[i].tick, cur = atomic_load(&v->first_failure_tick);
            while (v->results[i].failure != LS_REPLAY_FAIL_NONE && t < cur &&
                   !atomic_compare_exchange_weak(&v->first_failure_tick, &cur, t)) {
            }
        }
    }
    atomic_fetch_add(&v->workers_done, 1);
    return NULL;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void draw_progress(uint64_t done, uint32_t total)
{
    int width = 40, fill = total ? (int)(done * (uint64_t)width / total) : width;
    printf("\r[%.*s%*s] %3d%% %llu/%u ticks", fill, "########################################",
           width - fill, "", total ? (int)(done * 100 / total) : 100, (unsigned long long)done,
           total);
    fflush(stdout);
}

// Run the workers; the main thread only draws the progress bar.
static bool run_jobs(verify_run *v, bool progress)
{
    pthread_t threads[MAX_JOBS];
    uint32_t started = 0;
    for (; started < v->jobs; started++) {
        if (pthread_create(&threads[started], NULL, worker, v) != 0) {
            break;
        }
    }
    if (started == 0) {
        fprintf(stderr, "lockstep replay verify: cannot start a thread\n");
        return false;
    }
    atomic_fetch_add(&v->workers_done, v->jobs - started);
    uint32_t total = ls_replay_reader_ticks(v->r);
    while (progress && atomic_load(&v->workers_done) < v->jobs) {
        draw_progress(atomic_load(&v->ticks_done), total);
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    for (uint32_t i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    if (progress) {
        printf("\r%*s\r", 72, "");
    }
    return true;
}

// Re-simulate from the failing tick to the first keyframe after it, then diff
// the keyframe (what the recorder had) against the re-simulated world.
static void print_body_diff(verify_run *v, ls_world *computed, uint32_t tick)
{
    int64_t k = ls_replay_reader_keyframe_at_or_after(v->r, tick + 1);
    if (k < 0) {
        printf("no keyframe after tick %u in the file: no body diff available\n", tick);
        return;
    }
    ls_replay_keyframe_info kf = ls_replay_reader_keyframe_info(v->r, (uint32_t)k);
    ls_replay_cursor *c = ls_replay_cursor_create(v->r);
    for (uint32_t t = tick + 1; c && t < kf.tick; t++) {
        const uint8_t *in;
        ls_replay_cursor_read(c, t, &in, NULL);
        replay_glue_advance(v->glue, computed, in);
    }
    ls_replay_cursor_destroy(c);
    uint8_t *buf = malloc(kf.size);
    ls_error err;
    ls_error_set(&err, LS_ERR_NO_MEMORY, "out of memory");
    ls_world *recorded = NULL;
    if (buf && ls_replay_reader_keyframe(v->r, (uint32_t)k, buf, kf.size) == LS_OK) {
        recorded = replay_glue_load(v->glue, buf, kf.size, &err);
    }
    free(buf);
    if (!recorded) {
        printf("cannot load the keyframe at tick %u: %s\n", kf.tick, err.message);
        return;
    }
    printf("bodies at tick %u (recorded keyframe vs re-simulated):\n", kf.tick);
    static const char *const labels[2] = {"recorded", "computed"};
    if (replay_glue_diff(v->glue, recorded, computed, labels, stdout) == 0) {
        printf("no body differs at tick %u (the divergence is outside body state)\n", kf.tick);
    }
    ls_world_destroy(recorded);
}

static const ls_replay_verify_result *first_failure(const verify_run *v)
{
    uint32_t n = v->jobs == 1 ? 1 : v->segments;
    for (uint32_t i = 0; i < n; i++) {
        if (v->results[i].failure != LS_REPLAY_FAIL_NONE) {
            return &v->results[i];
        }
    }
    return NULL;
}

static int report(verify_run *v)
{
    const ls_replay_verify_result *f = first_failure(v);
    const ls_replay_info *in = ls_replay_reader_info(v->r);
    if (!f) {
        printf("verified %u ticks\n", in->ticks);
        if (!in->complete) {
            printf("note: incomplete recording: %s\n", in->end_reason);
        }
        return 0;
    }
    if (f->failure == LS_REPLAY_FAIL_CHECKSUM) {
        printf("DESYNC at tick %u: recorded %016llx computed %016llx\n", f->tick,
               (unsigned long long)f->recorded, (unsigned long long)f->computed);
        print_body_diff(v, f->state, f->tick);
    } else if (f->failure == LS_REPLAY_FAIL_KEYFRAME) {
        printf("DESYNC at tick %u: %s\n", f->tick, f->message);
    } else {
        printf("ERROR at tick %u: %s\n", f->tick, f->message);
    }
    return 1;
}

static int verify(const char *path, ls_replay_reader *r, uint32_t jobs, bool stats, bool progress)
{
    replay_glue g;
    ls_error err;
    if (!replay_glue_init(&g, ls_replay_reader_header(r), &err)) {
        fprintf(stderr, "lockstep replay verify: %s: embedded scene:%u:%u: %s\n", path, err.line,
                err.column, err.message);
        return 1;
    }
    verify_run v = {.r = r, .glue = &g, .segments = ls_replay_segment_count(r), .jobs = jobs};
    atomic_init(&v.first_failure_tick, UINT32_MAX);
    g.progress = count_ticks;
    g.progress_ctx = &v;
    v.results = calloc(jobs == 1 ? 1 : v.segments, sizeof *v.results);
    int status = 1;
    double t0 = now_seconds();
    clock_t c0 = clock();
    if (v.results && run_jobs(&v, progress)) {
        double dt = now_seconds() - t0;
        double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC; // all threads
        status = report(&v);
        if (stats) {
            uint32_t ticks = ls_replay_reader_ticks(r), hz = ls_replay_reader_header(r)->tick_rate;
            printf("stats: %u ticks in %.3f s with %u job%s: %.0f ticks/s, %.1fx real time at %u "
                   "Hz (cpu %.3f s: %.0f ticks per cpu-second)\n",
                   ticks, dt, jobs, jobs == 1 ? "" : "s", dt > 0 ? ticks / dt : 0.0,
                   dt > 0 ? ticks / dt / hz : 0.0, hz, cpu, cpu > 0 ? ticks / cpu : 0.0);
        }
    }
    for (uint32_t i = 0; v.results && i < (jobs == 1 ? 1 : v.segments); i++) {
        if (v.results[i].state) {
            ls_world_destroy(v.results[i].state);
        }
    }
    free(v.results);
    replay_glue_free(&g);
    return status;
}

int cmd_replay_verify(int argc, char **argv)
{
    const char *path = NULL;
    uint64_t jobs = 1;
    bool stats = false, progress = isatty(STDOUT_FILENO) != 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
            if (!replay_cli_number("--jobs", argv[++i], 1, MAX_JOBS, &jobs)) {
                return 2;
            }
        } else if (strcmp(argv[i], "--stats") == 0) {
            stats = true;
        } else if (strcmp(argv[i], "--no-progress") == 0) {
            progress = false;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr, "lockstep replay verify: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: lockstep replay verify FILE [--jobs N] [--stats]\n");
        return 2;
    }
    ls_replay_reader *r = replay_cli_open(path);
    int status = 1;
    if (r && replay_cli_compatible(path, r)) {
        status = verify(path, r, (uint32_t)jobs, stats, progress);
    }
    ls_replay_reader_destroy(r);
    return status;
}
