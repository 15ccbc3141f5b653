// SPDX-License-Identifier: MIT
// Crosscheck golden runner: plays one scene and prints its per-tick checksum
// stream, checks that a snapshot restored into a fresh world replays the same
// stream, and optionally steps until every body sleeps or runs SyncTest
// (--synctest: every tick rolled back k = 1..K ticks and re-simulated). It is compiled
// together with the physics sources for every target (x86-64, i386, aarch64,
// s390x, wasm32; gcc and clang; -O0..-O3) and its output is compared against
// the committed goldens (SPEC.md §18).
#include "ls/game.h"
#include "ls/net_synctest.h"
#include "ls/replay.h"
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: xc_runner SCENE [--max-ticks N] [--budget B] [--input-seed S] [--until-sleep MAX]\n"
    "                       [--snap-at K] [--synctest K]\n"
    "       xc_runner --replay FILE.lsr   re-simulate a recorded match (reference game), print\n"
    "                                     the computed stream, stop at the first tick that "
    "differs\n"
    "                                     from the recording (`replay desync TICK`, exit 1);\n"
    "                                     another engine's recording is refused by name (exit 2)\n"
    "  --max-ticks N      run min(N, scene ticks) ticks (default: the scene's ticks)\n"
    "  --budget B         slow targets: run at most max(120, B / bodies) ticks\n"
    "  --input-seed S     drive the scene's players with ls_input_script (seed S)\n"
    "  --until-sleep MAX  step until no dynamic body is awake (at most MAX ticks)\n"
    "  --snap-at K        snapshot after tick K (default: half of the run), restore into\n"
    "                     a fresh world after the run and replay the rest; 0 disables\n"
    "  --synctest K       SyncTest instead of the snapshot check: after each tick roll\n"
    "                     back k = 1..K ticks (cycling) and re-simulate; checksums and\n"
    "                     saved states must equal the first simulation's\n"
    "Output: `c TICK CHECKSUM` per tick, then `sleep TICK CHECKSUM` (with --until-sleep),\n"
    "`snap K ok` or `snap K diverge TICK`, `synctest K ok TICKS resimulated R` or\n"
    "`synctest K fail TICK k D: WHY`, and `end TICKS overflows N`.\n";

typedef struct xc_options {
    const char *path;
    long max_ticks;   // -1: the scene's ticks
    long until_sleep; // 0: fixed tick count
    long snap_at;     // -1: half of the run
    long budget;      // 0: none; else body-ticks (see usage)
    long synctest;    // 0: off; else the largest rollback distance
    bool scripted;
    uint64_t input_seed;
} xc_options;

// One simulation: a world, its scene and (when scripted) the input stream.
typedef struct xc_sim {
    const ls_scene *scene;
    ls_world *world;
    bool scripted;
    ls_input_script script;
} xc_sim;

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        return false;
    }
    *out = v;
    return true;
}

static int parse_args(int argc, char **argv, xc_options *o)
{
    *o = (xc_options){NULL, -1, 0, -1, 0, 0, false, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        long v = 0;
        if (strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 1;
        } else if (strcmp(a, "--max-ticks") == 0 && has && parse_long(argv[++i], 0, 10000000, &v)) {
            o->max_ticks = v;
        } else if (strcmp(a, "--until-sleep") == 0 && has &&
                   parse_long(argv[++i], 1, 10000000, &v)) {
            o->until_sleep = v;
        } else if (strcmp(a, "--budget") == 0 && has && parse_long(argv[++i], 1, 2000000000, &v)) {
            o->budget = v;
        } else if (strcmp(a, "--snap-at") == 0 && has && parse_long(argv[++i], 0, 10000000, &v)) {
            o->snap_at = v;
        } else if (strcmp(a, "--synctest") == 0 && has &&
                   parse_long(argv[++i], 1, LS_SYNCTEST_MAX_DISTANCE, &v)) {
            o->synctest = v;
        } else if (strcmp(a, "--input-seed") == 0 && has &&
                   parse_long(argv[++i], 0, 2147483647, &v)) {
            o->scripted = true;
            o->input_seed = (uint64_t)v;
        } else if (a[0] != '-' && !o->path) {
            o->path = a;
        } else {
            fprintf(stderr, "xc_runner: bad or incomplete argument '%s'\n%s", a, usage);
            return 2;
        }
    }
    if (!o->path) {
        fputs(usage, stderr);
        return 2;
    }
    return 0;
}

// Inputs of the coming tick (scripted scenes only), then one step.
static void sim_step(xc_sim *s)
{
    uint8_t in[LS_SCENE_MAX_PLAYERS];
    if (s->scripted) {
        ls_input_script_next(&s->script, in, 1);
    }
    ls_game_tick(s->world, s->scene, s->scripted ? in : NULL, s->script.players, 1);
}

static bool all_asleep(const ls_world *w)
{
    ls_step_info info = ls_world_info(w);
    return info.awake_bodies == 0;
}

// Restore `snap` (taken after tick k, with the input script as it was then)
// into a fresh world and replay to tick `end`; returns the first tick whose
// checksum differs from `sums` (sums[t-1] is tick t), or 0 when all agree. In
// sleep mode the replay must also fall asleep exactly at `end`.
static uint32_t replay_from_snapshot(const xc_sim *orig, const uint8_t *snap, size_t snap_len,
                                     const ls_input_script *script_at_k, uint32_t k, uint32_t end,
                                     const uint64_t *sums, bool sleep_mode)
{
    xc_sim s = *orig;
    s.world = ls_scene_instantiate(orig->scene, NULL);
    s.script = *script_at_k;
    if (!s.world || ls_world_snapshot_restore(s.world, snap, snap_len, NULL) != LS_OK ||
        ls_world_tick(s.world) != k || ls_world_checksum(s.world) != sums[k - 1]) {
        ls_world_destroy(s.world);
        return k;
    }
    uint32_t bad = 0;
    for (uint32_t t = k + 1; t <= end && !bad; t++) {
        sim_step(&s);
        if (ls_world_checksum(s.world) != sums[t - 1] ||
            (sleep_mode && all_asleep(s.world) != (t == end))) {
            bad = t;
        }
    }
    ls_world_destroy(s.world);
    return bad;
}

// Ticks to run: the scene's (or --until-sleep's limit), --max-ticks, and for
// slow (emulated, -O0) targets a prefix, as the work is about bodies x ticks.
static long run_length(const xc_options *o, const ls_scene *scene, const ls_world *w)
{
    long n = o->until_sleep ? o->until_sleep : (long)scene->ticks;
    if (!o->until_sleep && o->max_ticks >= 0 && o->max_ticks < n) {
        n = o->max_ticks;
    }
    long bodies = (long)ls_world_body_count(w);
    if (!o->until_sleep && o->budget > 0 && bodies > 0) {
        long cap = o->budget / bodies < 120 ? 120 : o->budget / bodies;
        n = cap < n ? cap : n;
    }
    return n;
}

static int run(const xc_options *o, const ls_scene *scene, ls_world *w)
{
    xc_sim sim;
    memset(&sim, 0, sizeof sim);
    sim.scene = scene, sim.world = w, sim.scripted = o->scripted;
    if (o->scripted) {
        ls_input_script_init(&sim.script, o->input_seed, scene->player_count);
    }
    long n = run_length(o, scene, w);
    long k = o->snap_at >= 0 ? o->snap_at : (o->until_sleep ? 120 : n / 2);
    uint64_t *sums = malloc((size_t)(n > 0 ? n : 1) * sizeof *sums);
    if (!sums) {
        fprintf(stderr, "xc_runner: out of memory\n");
        return 1;
    }
    uint8_t *snap = NULL; // sized at tick k: contacts make snapshots grow
    size_t snap_len = 0;
    ls_input_script script_at_k = sim.script;
    uint32_t end = 0;
    bool slept = false;
    for (long t = 1; t <= n && !slept; t++) {
        sim_step(&sim);
        end = (uint32_t)t;
        sums[t - 1] = ls_world_checksum(w);
        printf("c %u %016llx\n", end, (unsigned long long)sums[t - 1]);
        slept = o->until_sleep && all_asleep(w);
        if (t == k) {
            size_t cap = ls_world_snapshot_size(w);
            snap = malloc(cap);
            snap_len = snap ? ls_world_snapshot_save(w, snap, cap) : 0;
            script_at_k = sim.script;
        }
    }
    int status = 0;
    if (o->until_sleep) {
        if (slept) {
            printf("sleep %u %016llx\n", end, (unsigned long long)sums[end - 1]);
        } else {
            printf("sleep none %u\n", end);
            status = 1;
        }
    }
    if (k > 0 && (uint32_t)k < end) {
        uint32_t bad = snap_len ? replay_from_snapshot(&sim, snap, snap_len, &script_at_k,
                                                       (uint32_t)k, end, sums, slept)
                                : (uint32_t)k;
        if (bad) {
            printf("snap %ld diverge %u\n", k, bad);
            status = 1;
        } else {
            printf("snap %ld ok\n", k);
        }
    }
    printf("end %u overflows %u\n", end, ls_world_info(w).overflow_count);
    free(sums);
    free(snap);
    return status;
}

// SyncTest callbacks (net/src/synctest.c): the reference game with world
// snapshots as save/load, the input script as the input stream.
static void st_inputs(void *user, uint32_t tick, uint8_t *out, uint32_t slots, uint32_t isz)
{
    xc_sim *s = user;
    (void)tick, (void)slots;
    ls_input_script_next(&s->script, out, isz);
}

static size_t st_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    xc_sim *s = user;
    (void)tick;
    size_t need = ls_world_snapshot_size(s->world);
    return buf && cap >= need ? ls_world_snapshot_save(s->world, buf, cap) : need;
}

static bool st_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    xc_sim *s = user;
    (void)tick;
    return ls_world_snapshot_restore(s->world, buf, size, NULL) == LS_OK;
}

static uint64_t st_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                           uint32_t isz)
{
    xc_sim *s = user;
    (void)tick;
    return ls_game_tick(s->world, s->scene, slots ? inputs : NULL, slots, isz);
}

// SyncTest (SPEC.md "Rollback and SyncTest"): the `c` lines are the first
// simulation's checksums, so they must also equal the scene's golden stream.
static int run_synctest(const xc_options *o, const ls_scene *scene, ls_world *w)
{
    xc_sim sim;
    memset(&sim, 0, sizeof sim);
    sim.scene = scene, sim.world = w, sim.scripted = o->scripted;
    if (o->scripted) {
        ls_input_script_init(&sim.script, o->input_seed, scene->player_count);
    }
    long n = run_length(o, scene, w);
    ls_synctest_def d = ls_default_synctest_def();
    d.slots = o->scripted ? sim.script.players : 0;
    d.input_size = 1;
    d.min_distance = 1;
    d.max_distance = (uint32_t)o->synctest;
    d.cb =
        (ls_synctest_callbacks){&sim, o->scripted ? st_inputs : NULL, st_save, st_load, st_advance};
    ls_error err;
    ls_synctest *st = ls_synctest_create(&d, &err);
    if (!st) {
        fprintf(stderr, "xc_runner: synctest: %s\n", err.message);
        return 2;
    }
    int status = 0;
    long t = 1;
    for (; t <= n; t++) {
        ls_result r = ls_synctest_step(st, &err);
        ls_synctest_report rep = ls_synctest_report_get(st);
        if (rep.ticks == (uint32_t)t) {
            printf("c %ld %016llx\n", t, (unsigned long long)rep.last_checksum);
        }
        if (r != LS_OK) {
            printf("synctest %ld fail %u k %u: %s\n", o->synctest, rep.tick, rep.distance,
                   err.message);
            status = 1;
            break;
        }
    }
    if (status == 0) {
        ls_synctest_report rep = ls_synctest_report_get(st);
        printf("synctest %ld ok %u resimulated %llu\n", o->synctest, rep.ticks,
               (unsigned long long)rep.resimulated);
        t = n;
    }
    printf("end %ld overflows %u\n", t, ls_world_info(w).overflow_count);
    ls_synctest_destroy(st);
    return status;
}

// Cross-machine replay check (SPEC.md §18): a match recorded on one target is
// re-simulated from its embedded scene and inputs, tick by tick, and every
// computed checksum must equal the recorded one.
static int replay_file(const char *path)
{
    ls_error rerr;
    ls_replay_reader *r = ls_replay_reader_open(path, &rerr);
    if (!r) {
        fprintf(stderr, "%s: %s\n", path, rerr.message);
        return 2;
    }
    // Another engine's recording cannot re-simulate here: say whose it is.
    if (ls_replay_reader_require_fingerprint(r, ls_game_fingerprint(), &rerr) != LS_OK) {
        fprintf(stderr, "%s: %s\n", path, rerr.message);
        ls_replay_reader_destroy(r);
        return 2;
    }
    const ls_replay_header *h = ls_replay_reader_header(r);
    ls_scene scene;
    ls_error err;
    ls_world *w = NULL;
    if (ls_scene_parse((const char *)h->scene, h->scene_size, &scene, &err) != LS_OK) {
        fprintf(stderr, "%s: embedded scene %u:%u: %s\n", path, err.line, err.column, err.message);
        ls_replay_reader_destroy(r);
        return 2;
    }
    w = ls_scene_instantiate(&scene, &err);
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    int status = w && c ? 0 : 2;
    uint32_t ticks = ls_replay_reader_info(r)->ticks, t = 0;
    if (status == 0) {
        printf("scene %s bodies %u players %u\n", path, ls_world_body_count(w), h->players);
    }
    for (; status == 0 && t < ticks; t++) {
        const uint8_t *inputs;
        uint64_t recorded;
        if (ls_replay_cursor_read(c, t, &inputs, &recorded) != LS_OK) {
            status = 2;
            break;
        }
        uint64_t sum = ls_game_tick(w, &scene, inputs, h->players, h->input_size);
        printf("c %u %016llx\n", t + 1, (unsigned long long)sum);
        if (sum != recorded) {
            printf("replay desync %u recorded %016llx\n", t, (unsigned long long)recorded);
            status = 1;
        }
    }
    if (status == 0) {
        printf("end %u overflows %u\n", t, ls_world_info(w).overflow_count);
    }
    ls_replay_cursor_destroy(c);
    ls_world_destroy(w);
    ls_scene_free(&scene);
    ls_replay_reader_destroy(r);
    return status;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--replay") == 0) {
        return replay_file(argv[2]);
    }
    xc_options o;
    int r = parse_args(argc, argv, &o);
    if (r) {
        return r == 1 ? 0 : r;
    }
    ls_scene scene;
    ls_error err;
    if (ls_scene_load(o.path, &scene, &err) != LS_OK) {
        fprintf(stderr, "%s:%u:%u: %s\n", o.path, err.line, err.column, err.message);
        return 2;
    }
    ls_world *w = ls_scene_instantiate(&scene, &err);
    if (!w) {
        fprintf(stderr, "%s: %s\n", o.path, err.message);
        ls_scene_free(&scene);
        return 2;
    }
    printf("scene %s bodies %u players %u\n", o.path, ls_world_body_count(w), scene.player_count);
    int status = o.synctest ? run_synctest(&o, &scene, w) : run(&o, &scene, w);
    ls_world_destroy(w);
    ls_scene_free(&scene);
    return status;
}
