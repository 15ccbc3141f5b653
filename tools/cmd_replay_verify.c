// SPDX-License-Identifier: MIT
// `lockstep replay verify FILE [--jobs N] [--strict] [--stats] [--json]`: re-simulate a
// recording (exit 0 verified, 3 desync, 4 verified up to where an incomplete file ends).
// One job re-simulates continuously from the scene; N jobs verify the segments
// between keyframes on N threads. Both check the same ticks and keyframes, and
// the first failure in tick order is reported, so the output is identical.
#define _POSIX_C_SOURCE 200809L
#include "progress.h"
#include "replay_glue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS 64

const cli_command cmd_replay_verify_def = {
    "replay verify", "re-simulate a recording and check every tick's checksum and keyframe",
    "FILE [--jobs N] [--pubkey KEY] [--max-memory MB] [--strict] [--stats] [--json]\n"
    "       [--no-progress] [--png FILE [--size WxH] [--camera VIEW]]\n\n"
    "  --jobs N        verify the segments between keyframes on N threads, 1..64 (default 1);\n"
    "                  the report is the same (every keyframe is proven equal to the\n"
    "                  re-simulated state)\n"
    "  --pubkey KEY    also require the file signed by KEY (a .pub file from `lockstep\n"
    "                  keygen`, or 64 hex digits) and unmodified; a file cut by a crash\n"
    "                  is proven up to its last signature\n"
    "  --max-memory MB refuse a recording whose world needs more than MB MiB (default 256)\n"
    "  --strict        an incomplete recording (cut short: no index and trailer) is an\n"
    "                  error, exit 1, even when every readable tick verifies\n"
    "  --stats         print ticks/s and the real-time factor\n"
    "  --json          one JSON object: {\"result\", \"tick\", \"recorded\", \"computed\",\n"
    "                  \"bodies\", ...}\n"
    "  --no-progress   no progress line (only drawn when stderr is a terminal)\n"
    "  --png FILE      at a desync whose recorded state can be reconstructed (one changed\n"
    "                  input explains the recorded checksum), draw the state after the\n"
    "                  tick: recorded (left) and re-simulated (right), the bodies that\n"
    "                  differ in magenta with their ids (as `replay diff --png`);\n"
    "                  otherwise say why there is no picture\n"
    "  --size WxH      each half, 16..2048 pixels each (default 480x360)\n"
    "  --camera VIEW   auto (default), front, side, top or EX,EY,EZ,TX,TY,TZ[,FOV]\n\n"
    "Prints `verified N ticks` (exit 0), or `DESYNC at tick T: ...` with a field-by-field\n"
    "diff of the first divergent bodies (exit 3); a file that cannot be read exits 1, and so\n"
    "does one recorded by another engine: the message names it and the release that\n"
    "verifies it (--json: {\"result\": \"incompatible\", \"recorded_by\", ...}).\n"
    "An incomplete recording (a recorder killed or a file cut short) whose readable ticks\n"
    "all verify prints `verified N ticks` and `note: incomplete recording: ...` and exits 4\n"
    "(partial; --json: \"result\": \"partial\"); with --strict it prints `ERROR: incomplete\n"
    "recording (--strict): ...` and exits 1. A desync or an error in the readable part\n"
    "wins (3, 1).\n\n"
    "A relay's recording keeps every player's claim at the ticks where their checksums\n"
    "disagreed (format 2): re-simulation names who was wrong (`tick T (disputed): player 0\n"
    "claimed X, player 1 claimed Y; the inputs give Y: player 0 was wrong`; --json:\n"
    "\"disputes\": [{\"tick\", \"disputed\", \"wrong\": [players], ...}]). A recording whose\n"
    "checksum at such a tick is a wrong claim still verifies (exit 0) when another player\n"
    "claimed the truth; the verdicts are printed.",
    cmd_replay_verify, NULL};

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
    const replay_picture_opts *pic; // --png, or NULL
    int pic_status;                 // CLI_EXIT_OK, or the picture's error
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

// Run the workers; the main thread only draws the progress line (stderr, a terminal).
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
    cli_progress bar;
    cli_progress_init(&bar, "verify", "ticks", ls_replay_reader_ticks(v->r), progress);
    while (bar.enabled && atomic_load(&v->workers_done) < v->jobs) {
        cli_progress_update(&bar, atomic_load(&v->ticks_done));
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    for (uint32_t i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    cli_progress_done(&bar);
    return true;
}

// Re-simulate from the failing tick to the first keyframe after it, then diff
// the keyframe (what the recorder had) against the re-simulated world: text on
// stdout, or "keyframe_tick", "bodies" (and "note") members into *j.
// The state after tick - 1 (every tick before `tick` verified): from the last
// keyframe at or before `tick` (proven equal to the re-simulation), or the scene.
static ls_world *state_before(verify_run *v, uint32_t tick)
{
    int64_t k = ls_replay_reader_keyframe_at_or_before(v->r, tick);
    ls_world *w = NULL;
    uint32_t from = 0;
    if (k >= 0) {
        ls_replay_keyframe_info kf = ls_replay_reader_keyframe_info(v->r, (uint32_t)k);
        uint8_t *buf = malloc(kf.size);
        if (buf && ls_replay_reader_keyframe(v->r, (uint32_t)k, buf, kf.size) == LS_OK) {
            w = replay_glue_load(v->glue, buf, kf.size, NULL);
            from = kf.tick;
        }
        free(buf);
    } else {
        w = replay_glue_load(v->glue, NULL, 0, NULL);
    }
    ls_replay_cursor *c = w ? ls_replay_cursor_create(v->r) : NULL;
    for (uint32_t t = from; c && t < tick; t++) {
        const uint8_t *in;
        ls_replay_cursor_read(c, t, &in, NULL);
        replay_glue_advance(v->glue, w, in);
    }
    ls_replay_cursor_destroy(c);
    return w;
}

// The recorded state at the desync tick itself, when it can be found: the
// reference game reads only the low 4 bits of each player's first input byte
// (SPEC.md §15), so every single-player change of them (players x 15) is
// re-simulated from the state before the tick; one that reproduces the
// recorded checksum is the recorder's state, exactly. *player and *value say
// which input the recorder had. NULL when no single change explains it.
static ls_world *reconstruct(verify_run *v, uint32_t tick, uint64_t recorded, uint32_t *player,
                             uint8_t *value, uint8_t *file_value)
{
    ls_world *before = state_before(v, tick);
    ls_replay_cursor *c = before ? ls_replay_cursor_create(v->r) : NULL;
    const uint8_t *in;
    if (!c || ls_replay_cursor_read(c, tick, &in, NULL) != LS_OK) {
        ls_replay_cursor_destroy(c);
        ls_world_destroy(before);
        return NULL;
    }
    size_t frame = (size_t)v->glue->players * v->glue->input_size;
    size_t n = ls_world_snapshot_size(before);
    uint8_t *inputs = malloc(frame), *snap = malloc(n);
    ls_world *found = NULL;
    if (inputs && snap && ls_world_snapshot_save(before, snap, n) == n) {
        for (uint32_t p = 0; p < v->glue->players && !found; p++) {
            uint8_t *b = inputs + (size_t)p * v->glue->input_size;
            for (uint8_t x = 1; x < 16 && !found; x++) {
                memcpy(inputs, in, frame);
                *b ^= x;
                ls_world *w = replay_glue_load(v->glue, snap, n, NULL);
                if (w && replay_glue_advance(v->glue, w, inputs) == recorded) {
                    found = w, *player = p, *value = *b, *file_value = in[b - inputs];
                } else {
                    ls_world_destroy(w);
                }
            }
        }
    }
    free(inputs);
    free(snap);
    ls_replay_cursor_destroy(c);
    ls_world_destroy(before);
    return found;
}

static void print_body_diff(verify_run *v, ls_world *computed, uint32_t tick, json_out *j);

// At a checksum desync: the diff at the desync tick itself when the recorded
// state can be reconstructed there, else at the next keyframe.
static void print_desync_diff(verify_run *v, ls_world *computed, uint32_t tick, uint64_t recorded,
                              json_out *j)
{
    uint32_t player = 0;
    uint8_t value = 0, file_value = 0;
    ls_world *rec = computed ? reconstruct(v, tick, recorded, &player, &value, &file_value) : NULL;
    if (!rec) {
        print_body_diff(v, computed, tick, j);
        if (v->pic) {
            const char *why = "no picture: the recorded state at the desync tick cannot be "
                              "reconstructed (no single input change explains it)";
            if (j) {
                json_key(j, "picture"), json_null(j);
                json_key(j, "picture_note"), json_str(j, why);
            } else {
                printf("%s\n", why);
            }
        }
        return;
    }
    static const char *const labels[2] = {"recorded", "computed"};
    if (j) {
        json_key(j, "diff_tick"), json_u64(j, tick);
        json_key(j, "reconstructed"), json_object_begin(j);
        json_key(j, "player"), json_u64(j, player);
        json_key(j, "recorded_input"), json_u64(j, value);
        json_key(j, "file_input"), json_u64(j, file_value);
        json_object_end(j);
        json_key(j, "bodies");
        replay_glue_diff_json(v->glue, rec, computed, labels, j);
    } else {
        printf("the recorded checksum of tick %u is reproduced when player %u's input is 0x%02x "
               "(the file has 0x%02x): that input was changed after recording\n",
               tick, player, value, file_value);
        printf("bodies at tick %u (recorded state, reconstructed, vs re-simulated):\n", tick);
        if (replay_glue_diff(v->glue, rec, computed, labels, stdout) == 0) {
            printf("no body differs at tick %u (the divergence is outside body state)\n", tick);
        }
    }
    if (v->pic) {
        ls_world *const w[2] = {rec, computed};
        v->pic_status = replay_picture_worlds("lockstep replay verify", &v->glue->scene, w, tick,
                                              "recorded | computed", v->pic, j);
    }
    ls_world_destroy(rec);
}

static void print_body_diff(verify_run *v, ls_world *computed, uint32_t tick, json_out *j)
{
    char note[LS_ERROR_MESSAGE_MAX + 64];
    int64_t k = ls_replay_reader_keyframe_at_or_after(v->r, tick + 1);
    if (k < 0) {
        snprintf(note, sizeof note, "no keyframe after tick %u in the file: no body diff available",
                 tick);
        if (j) {
            json_key(j, "keyframe_tick"), json_null(j);
            json_key(j, "bodies"), json_null(j);
            json_key(j, "note"), json_str(j, note);
        } else {
            printf("%s\n", note);
        }
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
    static const char *const labels[2] = {"recorded", "computed"};
    if (j) {
        json_key(j, "keyframe_tick"), json_u64(j, kf.tick);
        json_key(j, "bodies");
        if (recorded) {
            replay_glue_diff_json(v->glue, recorded, computed, labels, j);
        } else {
            json_null(j);
            snprintf(note, sizeof note, "cannot load the keyframe at tick %u: %s", kf.tick,
                     err.message);
            json_key(j, "note"), json_str(j, note);
        }
    } else if (!recorded) {
        printf("cannot load the keyframe at tick %u: %s\n", kf.tick, err.message);
    } else {
        printf("bodies at tick %u (recorded keyframe vs re-simulated):\n", kf.tick);
        if (replay_glue_diff(v->glue, recorded, computed, labels, stdout) == 0) {
            printf("no body differs at tick %u (the divergence is outside body state)\n", kf.tick);
        }
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

// The verdicts of every verified tick with claims, in tick order: those of the
// one job, or of each segment in order, up to the first failure (so that any
// job count prints the same).
static ls_replay_verdict *collect_verdicts(const verify_run *v, const ls_replay_verify_result *f,
                                           uint32_t *count)
{
    uint32_t n = v->jobs == 1 ? 1 : v->segments, total = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += v->results[i].verdict_count;
    }
    ls_replay_verdict *all = malloc((total ? total : 1) * sizeof *all);
    *count = 0;
    for (uint32_t i = 0; all && i < n; i++) {
        for (uint32_t k = 0; k < v->results[i].verdict_count; k++) {
            if (!f || v->results[i].verdicts[k].tick < f->tick) {
                all[(*count)++] = v->results[i].verdicts[k];
            }
        }
    }
    return all;
}

// "player 0 was wrong", "players 1, 2 and 3 were wrong", "nobody was wrong".
static void print_wrong(uint16_t wrong)
{
    uint32_t n = 0, k = 0;
    for (uint32_t p = 0; p < 16; p++) {
        n += ((uint32_t)wrong >> p & 1u);
    }
    if (n == 0) {
        printf("nobody was wrong");
        return;
    }
    printf("player%s ", n == 1 ? "" : "s");
    for (uint32_t p = 0; p < 16; p++) {
        if ((uint32_t)wrong >> p & 1u) {
            k++;
            printf("%s%u", k == 1 ? "" : k == n ? " and " : ", ", p);
        }
    }
    printf(" %s wrong", n == 1 ? "was" : "were");
}

#define VERDICT_LINES 10

// What re-simulation says about the ticks whose claims disagreed (SPEC.md §16.9):
// a summary line "disputes: N ticks (D disputed) from tick T; wrong: player P (K
// ticks), ...", then the first VERDICT_LINES ticks one per line; with --json,
// "disputes" (every tick) and "wrong_players".
static void print_verdicts(const verify_run *v, const ls_replay_verify_result *f, json_out *j)
{
    uint32_t n;
    ls_replay_verdict *all = collect_verdicts(v, f, &n);
    uint32_t wrong_ticks[16] = {0}, first_wrong[16] = {0}, disputed = 0;
    for (uint32_t i = 0; all && i < n; i++) {
        disputed += all[i].disputed;
        for (uint32_t p = 0; p < 16; p++) {
            if (((uint32_t)all[i].wrong >> p & 1u) && wrong_ticks[p]++ == 0) {
                first_wrong[p] = all[i].tick;
            }
        }
    }
    if (j) {
        json_key(j, "disputes"), json_array_begin(j);
        for (uint32_t i = 0; all && i < n; i++) {
            const ls_replay_verdict *d = &all[i];
            ls_replay_claims c;
            ls_replay_reader_claims(v->r, d->tick, &c);
            json_object_begin(j);
            json_key(j, "tick"), json_u64(j, d->tick);
            json_key(j, "disputed"), json_bool(j, d->disputed);
            json_key(j, "wrong"), json_array_begin(j);
            for (uint32_t p = 0; p < 16; p++) {
                if (d->wrong >> p & 1u) {
                    json_u64(j, p);
                }
            }
            json_array_end(j);
            json_key(j, "computed"), json_hex64(j, d->computed);
            json_key(j, "recorded"), json_hex64(j, d->recorded);
            json_key(j, "claims"), json_array_begin(j);
            for (uint32_t p = 0; p < 16; p++) {
                if ((uint32_t)c.reported >> p & 1u) {
                    json_object_begin(j);
                    json_key(j, "player"), json_u64(j, p);
                    json_key(j, "claim"), json_hex64(j, c.claims[p]);
                    json_object_end(j);
                }
            }
            json_array_end(j);
            json_object_end(j);
        }
        json_array_end(j);
        json_key(j, "wrong_players"), json_array_begin(j);
        for (uint32_t p = 0; p < 16; p++) {
            if (wrong_ticks[p]) {
                json_object_begin(j);
                json_key(j, "player"), json_u64(j, p);
                json_key(j, "ticks"), json_u64(j, wrong_ticks[p]);
                json_key(j, "first_tick"), json_u64(j, first_wrong[p]);
                json_object_end(j);
            }
        }
        json_array_end(j);
        free(all);
        return;
    }
    if (!all || n == 0) {
        free(all);
        return;
    }
    printf("disputes: %u tick%s (%u disputed) from tick %u; wrong:", n, n == 1 ? "" : "s", disputed,
           all[0].tick);
    bool any = false;
    for (uint32_t p = 0; p < 16; p++) {
        if (wrong_ticks[p]) {
            printf("%s player %u (%u tick%s)", any ? "," : "", p, wrong_ticks[p],
                   wrong_ticks[p] == 1 ? "" : "s");
            any = true;
        }
    }
    printf("%s\n", any ? "" : " nobody");
    for (uint32_t i = 0; i < n && i < VERDICT_LINES; i++) {
        const ls_replay_verdict *d = &all[i];
        ls_replay_claims c;
        ls_replay_reader_claims(v->r, d->tick, &c);
        printf("tick %u (%s):", d->tick, d->disputed ? "disputed" : "majority");
        bool first = true;
        for (uint32_t p = 0; p < 16; p++) {
            if ((uint32_t)c.reported >> p & 1u) {
                printf("%s player %u claimed %016llx", first ? "" : ",", p,
                       (unsigned long long)c.claims[p]);
                first = false;
            }
        }
        printf("; the inputs give %016llx: ", (unsigned long long)d->computed);
        print_wrong(d->wrong);
        printf("\n");
    }
    if (n > VERDICT_LINES) {
        printf("... and %u more tick%s with claims (--json lists every one)\n", n - VERDICT_LINES,
               n - VERDICT_LINES == 1 ? "" : "s");
    }
    free(all);
}

static const char *result_name(ls_replay_failure f)
{
    return f == LS_REPLAY_FAIL_NONE       ? "verified"
           : f == LS_REPLAY_FAIL_CHECKSUM ? "desync"
           : f == LS_REPLAY_FAIL_KEYFRAME ? "keyframe_mismatch"
                                          : "error";
}

// A file with no failure in its readable ticks is fully verified (0) when it is
// complete, else partial (CLI_EXIT_PARTIAL), an error (1) with --strict.
static int report(verify_run *v, bool strict, json_out *j)
{
    const ls_replay_verify_result *f = first_failure(v);
    const ls_replay_info *in = ls_replay_reader_info(v->r);
    ls_replay_failure kind = f ? f->failure : LS_REPLAY_FAIL_NONE;
    bool partial = !f && !in->complete;
    int status = partial ? (strict ? CLI_EXIT_ERROR : CLI_EXIT_PARTIAL)
                 : !f    ? CLI_EXIT_OK
                 : kind == LS_REPLAY_FAIL_CHECKSUM || kind == LS_REPLAY_FAIL_KEYFRAME
                     ? CLI_EXIT_MISMATCH
                     : CLI_EXIT_ERROR;
    if (j) {
        json_key(j, "result"), json_str(j, partial ? "partial" : result_name(kind));
        json_key(j, "strict"), json_bool(j, strict);
        json_key(j, "tick");
        f ? json_u64(j, f->tick) : json_null(j);
        if (kind == LS_REPLAY_FAIL_CHECKSUM) {
            json_key(j, "recorded"), json_hex64(j, f->recorded);
            json_key(j, "computed"), json_hex64(j, f->computed);
        }
        if (f) {
            json_key(j, "message"), json_str(j, f->message);
        }
        if (kind == LS_REPLAY_FAIL_CHECKSUM) {
            print_desync_diff(v, f->state, f->tick, f->recorded, j);
        }
        print_verdicts(v, f, j);
        return status;
    }
    if (partial && strict) {
        printf("ERROR: incomplete recording (--strict): %s; those %u ticks verified\n",
               in->end_reason, in->ticks);
    } else if (!f) {
        printf("verified %u ticks\n", in->ticks);
        if (partial) {
            printf("note: incomplete recording: %s\n", in->end_reason);
        }
    } else if (kind == LS_REPLAY_FAIL_CHECKSUM) {
        printf("DESYNC at tick %u: recorded %016llx computed %016llx\n", f->tick,
               (unsigned long long)f->recorded, (unsigned long long)f->computed);
        print_desync_diff(v, f->state, f->tick, f->recorded, NULL);
    } else if (kind == LS_REPLAY_FAIL_KEYFRAME) {
        printf("DESYNC at tick %u: %s\n", f->tick, f->message);
    } else {
        printf("ERROR at tick %u: %s\n", f->tick, f->message);
    }
    print_verdicts(v, f, NULL);
    return status;
}

static void print_stats(const ls_replay_reader *r, uint32_t jobs, double dt, double cpu,
                        json_out *j)
{
    uint32_t ticks = ls_replay_reader_ticks(r), hz = ls_replay_reader_header(r)->tick_rate;
    double rate = dt > 0 ? ticks / dt : 0.0;
    if (j) {
        json_key(j, "stats"), json_object_begin(j);
        json_key(j, "seconds"), json_double(j, dt, 3);
        json_key(j, "jobs"), json_u64(j, jobs);
        json_key(j, "ticks_per_second"), json_double(j, rate, 0);
        json_key(j, "real_time_factor"), json_double(j, rate / hz, 1);
        json_key(j, "cpu_seconds"), json_double(j, cpu, 3);
        json_object_end(j);
        return;
    }
    printf("stats: %u ticks in %.3f s with %u job%s: %.0f ticks/s, %.1fx real time at %u "
           "Hz (cpu %.3f s: %.0f ticks per cpu-second)\n",
           ticks, dt, jobs, jobs == 1 ? "" : "s", rate, rate / hz, hz, cpu,
           cpu > 0 ? ticks / cpu : 0.0);
}

// --pubkey, before any work: in text mode the check prints its line (or the
// error); in JSON mode a failure is the whole document.
static int signature_first(const char *path, const ls_replay_reader *r, const char *pubkey,
                           bool json)
{
    const cli_command *cmd = &cmd_replay_verify_def;
    if (!json) {
        return replay_cli_check_signature(cmd, path, r, pubkey, NULL);
    }
    uint8_t pk[LS_REPLAY_PUBLIC_KEY_SIZE];
    ls_replay_signature_report rep;
    ls_error err;
    if (ls_replay_key_read(pubkey, pk, sizeof pk, &err) != LS_OK) {
        cli_print_error("lockstep replay verify", &err);
        return CLI_EXIT_ERROR;
    }
    if (ls_replay_reader_check_signatures(r, pk, &rep, NULL) == LS_OK) {
        return CLI_EXIT_OK;
    }
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "file"), json_str(&j, path);
    int status = replay_cli_check_signature(cmd, path, r, pubkey, &j);
    json_key(&j, "result"), json_str(&j, "signature_invalid");
    json_object_end(&j);
    json_finish(&j);
    return status;
}

typedef struct verify_opts {
    uint32_t jobs;
    bool stats, progress, json, strict;
    size_t max_memory;
    const char *pubkey;
    replay_picture_opts pic;
} verify_opts;

static int verify(const char *path, ls_replay_reader *r, const verify_opts *o)
{
    uint32_t jobs = o->jobs;
    bool json = o->json;
    const char *pubkey = o->pubkey;
    replay_glue g;
    ls_error err;
    // The signature first: a file that is not the signer's is not worth re-simulating.
    if (pubkey) {
        int sig = signature_first(path, r, pubkey, json);
        if (sig != CLI_EXIT_OK) {
            return sig;
        }
    }
    if (!replay_glue_init(&g, ls_replay_reader_header(r), &err)) {
        // The embedded scene is named "embedded scene": say which file holds it.
        char prefix[LS_ERROR_PATH_MAX + 32];
        snprintf(prefix, sizeof prefix, "lockstep replay verify: %s", path);
        cli_print_error(prefix, &err);
        return CLI_EXIT_ERROR;
    }
    g.max_memory = o->max_memory;
    verify_run v = {.r = r,
                    .glue = &g,
                    .segments = ls_replay_segment_count(r),
                    .jobs = jobs,
                    .pic = o->pic.png ? &o->pic : NULL};
    atomic_init(&v.first_failure_tick, UINT32_MAX);
    g.progress = count_ticks;
    g.progress_ctx = &v;
    v.results = calloc(jobs == 1 ? 1 : v.segments, sizeof *v.results);
    int status = CLI_EXIT_ERROR;
    double t0 = now_seconds();
    clock_t c0 = clock();
    if (!v.results) {
        fprintf(stderr, "lockstep replay verify: out of memory\n");
    } else if (run_jobs(&v, o->progress)) {
        double dt = now_seconds() - t0;
        double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC; // all threads
        const ls_replay_info *in = ls_replay_reader_info(r);
        json_out j, *jp = json ? &j : NULL;
        if (jp) {
            json_init(jp, stdout);
            json_object_begin(jp);
            json_key(jp, "file"), json_str(jp, path);
            json_key(jp, "ticks"), json_u64(jp, in->ticks);
            json_key(jp, "complete"), json_bool(jp, in->complete);
            json_key(jp, "incomplete_reason");
            in->complete ? json_null(jp) : json_str(jp, in->end_reason);
        }
        if (pubkey && jp) { // proven before re-simulating; here it goes into the JSON
            replay_cli_check_signature(&cmd_replay_verify_def, path, r, pubkey, jp);
        }
        status = report(&v, o->strict, jp);
        status = v.pic_status != CLI_EXIT_OK ? v.pic_status : status;
        if (o->stats) {
            print_stats(r, jobs, dt, cpu, jp);
        }
        if (jp) {
            json_object_end(jp);
            json_finish(jp);
        }
    }
    for (uint32_t i = 0; v.results && i < (jobs == 1 ? 1 : v.segments); i++) {
        if (v.results[i].state) {
            ls_world_destroy(v.results[i].state);
        }
        ls_replay_verify_result_release(&v.results[i]);
    }
    free(v.results);
    replay_glue_free(&g);
    return status;
}

int cmd_replay_verify(int argc, char **argv)
{
    const cli_command *cmd = &cmd_replay_verify_def;
    const char *path = NULL;
    uint64_t jobs = 1;
    verify_opts o = {
        .jobs = 1, .progress = true, .max_memory = (size_t)REPLAY_DEFAULT_MAX_MEMORY_MB << 20};
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (cli_option(cmd, argc, argv, &i, "--jobs", &v)) {
            if (!v || !cli_parse_u64(cmd, "--jobs", v, 1, MAX_JOBS, &jobs)) {
                return CLI_EXIT_USAGE;
            }
            o.jobs = (uint32_t)jobs;
        } else if (cli_option(cmd, argc, argv, &i, "--max-memory", &v)) {
            if (!v || !replay_cli_max_memory(cmd, v, &o.max_memory)) {
                return CLI_EXIT_USAGE;
            }
        } else if (cli_option(cmd, argc, argv, &i, "--pubkey", &v)) {
            if (!v) {
                return CLI_EXIT_USAGE;
            }
            o.pubkey = v;
        } else if (cli_option(cmd, argc, argv, &i, "--png", &v) ||
                   cli_option(cmd, argc, argv, &i, "--size", &v) ||
                   cli_option(cmd, argc, argv, &i, "--camera", &v)) {
            if (!v) {
                return CLI_EXIT_USAGE;
            }
            const char *name = argv[i - 1];
            *(strcmp(name, "--png") == 0    ? &o.pic.png
              : strcmp(name, "--size") == 0 ? &o.pic.size
                                            : &o.pic.camera) = v;
        } else if (strcmp(argv[i], "--stats") == 0) {
            o.stats = true;
        } else if (strcmp(argv[i], "--strict") == 0) {
            o.strict = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            o.json = true;
        } else if (strcmp(argv[i], "--no-progress") == 0) {
            o.progress = false;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            return cli_unexpected(cmd, argv[i]);
        }
    }
    if (!path) {
        return cli_usage_error(cmd, "missing FILE");
    }
    if (!replay_picture_parse(cmd, &o.pic)) {
        return CLI_EXIT_USAGE;
    }
    ls_replay_reader *r = replay_cli_open(cmd, path);
    int status = CLI_EXIT_ERROR;
    if (r && replay_cli_compatible(cmd, path, r, o.json)) {
        status = verify(path, r, &o);
    }
    ls_replay_reader_destroy(r);
    return status;
}
