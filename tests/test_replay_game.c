// SPDX-License-Identifier: MIT
// Replays of the reference push game (arena, 4 players): recorded with the
// tick convention of SPEC.md (inputs, step, checksum after the step; keyframes
// are snapshots), re-simulated from the scene and from every keyframe, and an
// altered input byte found at exactly its tick.
#define _POSIX_C_SOURCE 200809L
#include "ls/game.h"
#include "ls/replay.h"
#include "ls/world.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TICKS           360
#define KEYFRAMES_EVERY 120

typedef struct game {
    ls_scene scene;
    uint32_t players;
} game;

static size_t game_save(void *user, const void *state, uint8_t *buf, size_t size)
{
    (void)user;
    size_t need = ls_world_snapshot_size(state);
    return buf && size >= need ? ls_world_snapshot_save(state, buf, size) : need;
}

static void *game_load(void *user, const uint8_t *scene, size_t scene_size, const uint8_t *kf,
                       size_t kf_size, ls_error *err)
{
    (void)scene, (void)scene_size;
    game *g = user;
    ls_world *w = ls_scene_instantiate(&g->scene, err);
    if (w && kf && ls_world_snapshot_restore(w, kf, kf_size, err) != LS_OK) {
        ls_world_destroy(w);
        w = NULL;
    }
    return w;
}

static uint64_t game_advance(void *user, void *state, uint32_t tick, const uint8_t *inputs)
{
    (void)tick;
    game *g = user;
    ls_game_apply_inputs(state, &g->scene, inputs, g->players, 1);
    ls_world_step(state);
    return ls_world_checksum(state);
}

static uint64_t game_checksum(void *user, const void *state)
{
    (void)user;
    return ls_world_checksum(state);
}

static void game_destroy(void *user, void *state)
{
    (void)user;
    ls_world_destroy(state);
}

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc(*size + 1);
    cr_assert_eq(fread(d, 1, *size, f), *size);
    fclose(f);
    return d;
}

static void add_snapshot(ls_replay_recorder *rec, const ls_world *w)
{
    size_t n = ls_world_snapshot_size(w);
    uint8_t *s = malloc(n);
    cr_assert_eq(ls_world_snapshot_save(w, s, n), n);
    cr_assert_eq(ls_replay_recorder_add_keyframe(rec, s, n), LS_OK);
    free(s);
}

// Record the arena with scripted inputs; player 1's input at alter_tick is
// written changed (the checksums stay those of the real match).
static ls_replay_reader *record_arena(game *g, int64_t alter_tick, uint64_t *final_checksum)
{
    size_t text_size;
    char *text = slurp("tools/scenes/arena.scene", &text_size);
    ls_error e;
    cr_assert_eq(ls_scene_parse(text, text_size, &g->scene, &e), LS_OK);
    g->players = g->scene.player_count;
    cr_assert_eq(g->players, 4);
    char path[128];
    snprintf(path, sizeof path, "/tmp/ls_test_replay_game_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.players = g->players;
    def.keyframe_interval = KEYFRAMES_EVERY;
    def.seed = 5;
    def.fingerprint = "test-push-game";
    def.scene = (const uint8_t *)text;
    def.scene_size = text_size;
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    cr_assert_not_null(rec, "%s", err.message);
    ls_world *w = ls_scene_instantiate(&g->scene, &err);
    ls_input_script script;
    ls_input_script_init(&script, 5, g->players);
    for (uint32_t t = 0; t < TICKS; t++) {
        uint8_t in[4];
        ls_input_script_next(&script, in, 1);
        ls_game_apply_inputs(w, &g->scene, in, g->players, 1);
        ls_world_step(w);
        if ((int64_t)t == alter_tick) {
            in[1] ^= LS_INPUT_PUSH_XP;
        }
        cr_assert_eq(ls_replay_recorder_append(rec, in, ls_world_checksum(w)), LS_OK);
        if (ls_replay_recorder_keyframe_due(rec)) {
            add_snapshot(rec, w);
        }
    }
    *final_checksum = ls_world_checksum(w);
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_world_destroy(w);
    free(text);
    ls_error re;
    ls_replay_reader *r = ls_replay_reader_open(path, &re);
    cr_assert_not_null(r, "%s", re.message);
    remove(path);
    return r;
}

static ls_replay_sim sim_of(game *g)
{
    ls_replay_sim s = {g, game_load, game_advance, game_checksum, game_destroy, NULL, game_save};
    return s;
}

Test(replay_game, the_recorded_arena_match_verifies_from_the_scene_and_from_every_keyframe)
{
    game g;
    uint64_t final;
    ls_replay_reader *r = record_arena(&g, -1, &final);
    ls_replay_sim sim = sim_of(&g);
    cr_assert_eq(ls_replay_reader_checksum(r, TICKS - 1), final);
    cr_assert_eq(ls_replay_segment_count(r), 1 + TICKS / KEYFRAMES_EVERY);
    ls_replay_verify_result res;
    cr_assert_eq(ls_replay_verify_segments(r, &sim, 0, ls_replay_segment_count(r), false, &res),
                 LS_OK, "%s", res.message);
    cr_assert_eq(res.ticks_verified, TICKS);
    for (uint32_t s = 0; s < ls_replay_segment_count(r); s++) {
        // Starting from a restored snapshot reproduces the recorded future bit for bit.
        cr_assert_eq(ls_replay_verify_segments(r, &sim, s, s + 1, false, &res), LS_OK,
                     "segment %u: %s", s, res.message);
    }
    // Mostly-held keys: inputs well under a byte per player per tick.
    const ls_replay_info *in = ls_replay_reader_info(r);
    cr_assert_leq((double)in->input_bytes / (TICKS * 4.0), 1.0);
    ls_replay_reader_destroy(r);
    ls_scene_free(&g.scene);
}

Test(replay_game, an_altered_input_byte_is_a_desync_at_exactly_that_tick)
{
    const int64_t ticks[] = {37, 240};
    for (size_t i = 0; i < 2; i++) {
        game g;
        uint64_t final;
        ls_replay_reader *r = record_arena(&g, ticks[i], &final);
        ls_replay_sim sim = sim_of(&g);
        ls_replay_verify_result a, b = {0};
        ls_replay_verify_segments(r, &sim, 0, ls_replay_segment_count(r), true, &a);
        cr_assert_eq(a.failure, LS_REPLAY_FAIL_CHECKSUM, "%s", a.message);
        cr_assert_eq(a.tick, (uint32_t)ticks[i]);
        cr_assert_not_null(a.state);
        // The re-simulated world at the desync: player 1's body moved differently.
        cr_assert_eq(ls_world_tick(a.state), (uint32_t)ticks[i] + 1);
        cr_assert_neq(ls_world_checksum(a.state), a.recorded);
        ls_world_destroy(a.state);
        for (uint32_t s = 0; s < ls_replay_segment_count(r); s++) {
            ls_replay_verify_result one;
            ls_replay_verify_segments(r, &sim, s, s + 1, false, &one);
            if (one.failure != LS_REPLAY_FAIL_NONE && b.failure == LS_REPLAY_FAIL_NONE) {
                b = one;
            }
        }
        cr_assert_eq(b.failure, LS_REPLAY_FAIL_CHECKSUM);
        cr_assert_eq(b.tick, a.tick);
        cr_assert_eq(b.computed, a.computed);
        ls_replay_reader_destroy(r);
        ls_scene_free(&g.scene);
    }
}

// Copy r into a new file with one 32-bit word of keyframe `k` xor-ed with
// `mask` (the check codes are recomputed by the recorder: a tampered and
// re-sealed file).
static ls_replay_reader *reseal_with_tampered_keyframe(const ls_replay_reader *r, uint32_t k,
                                                       size_t word, uint32_t mask)
{
    const ls_replay_header *h = ls_replay_reader_header(r);
    char path[128];
    snprintf(path, sizeof path, "/tmp/ls_test_reseal_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_replay_recorder_def_like(h);
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, NULL);
    cr_assert_not_null(rec);
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    uint32_t next_kf = 0, nkf = ls_replay_reader_info(r)->keyframes;
    for (uint32_t t = 0; t < ls_replay_reader_ticks(r); t++) {
        const uint8_t *in;
        uint64_t sum;
        cr_assert_eq(ls_replay_cursor_read(c, t, &in, &sum), LS_OK);
        cr_assert_eq(ls_replay_recorder_append(rec, in, sum), LS_OK);
        if (next_kf < nkf && ls_replay_reader_keyframe_info(r, next_kf).tick == t + 1) {
            ls_replay_keyframe_info ki = ls_replay_reader_keyframe_info(r, next_kf);
            uint8_t *buf = malloc(ki.size);
            cr_assert_eq(ls_replay_reader_keyframe(r, next_kf, buf, ki.size), LS_OK);
            if (next_kf == k && word * 4 + 4 <= ki.size) {
                ls_put_u32le(buf + word * 4, ls_get_u32le(buf + word * 4) ^ mask);
            }
            cr_assert_eq(ls_replay_recorder_add_keyframe(rec, buf, ki.size), LS_OK);
            free(buf);
            next_kf++;
        }
    }
    ls_replay_cursor_destroy(c);
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_replay_reader *out = ls_replay_reader_open(path, NULL);
    cr_assert_not_null(out);
    remove(path);
    return out;
}

// The verdict of N jobs: every segment on its own, then the first failure in
// tick order, ties to the lower segment (what `replay verify --jobs N` does).
static ls_replay_verify_result verdict_by_segments(const ls_replay_reader *r,
                                                   const ls_replay_sim *sim)
{
    ls_replay_verify_result best;
    memset(&best, 0, sizeof best);
    for (uint32_t s = 0; s < ls_replay_segment_count(r); s++) {
        ls_replay_verify_result one;
        ls_replay_verify_segments(r, sim, s, s + 1, false, &one);
        if (one.failure != LS_REPLAY_FAIL_NONE &&
            (best.failure == LS_REPLAY_FAIL_NONE || one.tick < best.tick)) {
            best = one;
        }
    }
    return best;
}

// Issue 18: a keyframe that differs from the re-simulated state fails the file
// whatever the job count, with the same verdict. Every 7th word of the middle
// keyframe (header, body slots, contacts) is flipped and the file re-sealed.
Test(replay_game, a_tampered_keyframe_fails_with_the_same_verdict_for_any_job_count, .timeout = 300)
{
    game g;
    uint64_t final;
    ls_replay_reader *r = record_arena(&g, -1, &final);
    ls_replay_sim sim = sim_of(&g);
    ls_replay_keyframe_info ki = ls_replay_reader_keyframe_info(r, 1);
    uint32_t files = 0;
    for (size_t word = 0; word * 4 < ki.size; word += 7) {
        const uint32_t masks[2] = {1u, 0x80000000u};
        for (int m = 0; m < 2; m++, files++) {
            ls_replay_reader *t = reseal_with_tampered_keyframe(r, 1, word, masks[m]);
            ls_replay_verify_result one;
            ls_replay_verify_segments(t, &sim, 0, ls_replay_segment_count(t), false, &one);
            ls_replay_verify_result many = verdict_by_segments(t, &sim);
            cr_assert_eq(one.failure, LS_REPLAY_FAIL_KEYFRAME, "word %zu: %s", word, one.message);
            cr_assert_eq(one.tick, ki.tick, "word %zu: %s", word, one.message);
            cr_assert_eq(many.failure, one.failure, "word %zu: %s / %s", word, one.message,
                         many.message);
            cr_assert_eq(many.tick, one.tick, "word %zu", word);
            cr_assert_str_eq(many.message, one.message, "word %zu", word);
            ls_replay_reader_destroy(t);
        }
    }
    cr_assert_geq(files, 60u, "a corpus, not a sample of one");
    ls_replay_reader_destroy(r);
    ls_scene_free(&g.scene);
}

// A recording of the previous engine, kept as it was (tests/replays/README.md).
#define SOLVER_V2_ARENA "tests/replays/solver_v2_arena.lsr"

// The table of SPEC.md §16.8 (replay/src/engines.c) has this build's
// fingerprint under this library's MAJOR.MINOR: a new fingerprint adds a row.
Test(replay_game, this_build_fingerprint_names_this_release)
{
    ls_replay_engine e = ls_replay_fingerprint_engine(ls_game_fingerprint());
    cr_assert(e.known, "this build's fingerprint is in no row of replay/src/engines.c: '%s'",
              ls_game_fingerprint());
    char version[16];
    snprintf(version, sizeof version, "%d.%d", LS_VERSION_MAJOR, LS_VERSION_MINOR);
    cr_assert_str_eq(e.version, version, "the row names another release than ls/base.h");
    char words[160];
    ls_replay_fingerprint_describe(ls_game_fingerprint(), words, sizeof words);
    char want[160];
    snprintf(want, sizeof want, "lockstep %s (%s: snapshot %s, physics %s)", version, e.solver,
             e.snapshot, e.physics);
    cr_assert_str_eq(words, want);
}

// The fingerprint's `snapshot=LSSN-N` (SPEC.md §16.8) is the version word of
// the snapshots this build writes (SPEC.md §13, bytes 4..7) -- in keyframes,
// so a change of one without the other cannot land.
Test(replay_game, fingerprint_names_the_snapshot_version)
{
    ls_world_def def = ls_default_world_def();
    ls_world *w = ls_world_create(&def, NULL);
    cr_assert_not_null(w);
    size_t n = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(n);
    cr_assert_not_null(buf);
    cr_assert_eq(ls_world_snapshot_save(w, buf, n), n);
    uint32_t version =
        (uint32_t)buf[4] | (uint32_t)buf[5] << 8 | (uint32_t)buf[6] << 16 | (uint32_t)buf[7] << 24;
    char want[32];
    snprintf(want, sizeof want, ";snapshot=LSSN-%u;", version);
    cr_assert_not_null(strstr(ls_game_fingerprint(), want), "'%s' does not name version %u",
                       ls_game_fingerprint(), version);
    cr_assert_eq(version, 6u, "a new snapshot version: a new fingerprint row (SPEC.md §16.8)");
    free(buf);
    ls_world_destroy(w);
}

Test(replay_game, a_recording_of_the_previous_engine_is_refused_by_name)
{
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open(SOLVER_V2_ARENA, &err);
    cr_assert_not_null(r, "%s", err.message);
    cr_assert_eq(ls_replay_reader_require_fingerprint(r, ls_game_fingerprint(), &err),
                 LS_ERR_INCOMPATIBLE);
    cr_assert_eq(err.offset, 56);
    // The whole sentence fits the error record (nothing cut).
    ls_replay_engine here = ls_replay_fingerprint_engine(ls_game_fingerprint());
    char want[LS_ERROR_MESSAGE_MAX + 64];
    snprintf(want, sizeof want,
             "build fingerprint at byte 56: recorded by lockstep 0.2 (Solver v2: snapshot LSSN-3, "
             "physics solver-v2); this is lockstep %s (%s: %s, %s): its physics differ, so it "
             "cannot be verified here; verify it with lockstep 0.2",
             here.version, here.solver, here.snapshot, here.physics);
    cr_assert_lt(strlen(want), sizeof err.message);
    cr_assert_str_eq(err.message, want);
    ls_replay_reader_destroy(r);
}

// Copy r with keyframe k replaced by `bytes` (re-sealed: every check code valid).
static ls_replay_reader *reseal_with_keyframe(const ls_replay_reader *r, uint32_t k,
                                              const uint8_t *bytes, size_t size)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/ls_test_reseal_kf_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_replay_recorder_def_like(ls_replay_reader_header(r));
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, NULL);
    cr_assert_not_null(rec);
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    uint32_t next_kf = 0, nkf = ls_replay_reader_info(r)->keyframes;
    for (uint32_t t = 0; t < ls_replay_reader_ticks(r); t++) {
        const uint8_t *in;
        uint64_t sum;
        cr_assert_eq(ls_replay_cursor_read(c, t, &in, &sum), LS_OK);
        cr_assert_eq(ls_replay_recorder_append(rec, in, sum), LS_OK);
        if (next_kf < nkf && ls_replay_reader_keyframe_info(r, next_kf).tick == t + 1) {
            ls_replay_keyframe_info ki = ls_replay_reader_keyframe_info(r, next_kf);
            uint8_t *buf = malloc(ki.size);
            cr_assert_eq(ls_replay_reader_keyframe(r, next_kf, buf, ki.size), LS_OK);
            cr_assert_eq(ls_replay_recorder_add_keyframe(rec, next_kf == k ? bytes : buf,
                                                         next_kf == k ? size : ki.size),
                         LS_OK);
            free(buf);
            next_kf++;
        }
    }
    ls_replay_cursor_destroy(c);
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_replay_reader *out = ls_replay_reader_open(path, NULL);
    cr_assert_not_null(out);
    remove(path);
    return out;
}

// A keyframe is a snapshot (SPEC.md §13): one the previous engine wrote, in a
// recording of this one, fails with the snapshot's own words (which engine
// wrote it), as a keyframe failure at its tick when re-simulated into and as
// LS_ERR_INCOMPATIBLE, not "corrupt", when a segment starts from it.
Test(replay_game, a_keyframe_of_the_previous_engine_says_which_engine_wrote_it, .timeout = 120)
{
    ls_error err;
    ls_replay_reader *old = ls_replay_reader_open(SOLVER_V2_ARENA, &err);
    cr_assert_not_null(old, "%s", err.message);
    ls_replay_keyframe_info oki = ls_replay_reader_keyframe_info(old, 0);
    uint8_t *old_kf = malloc(oki.size);
    cr_assert_eq(ls_replay_reader_keyframe(old, 0, old_kf, oki.size), LS_OK);
    game g;
    uint64_t final;
    ls_replay_reader *r = record_arena(&g, -1, &final);
    ls_replay_reader *t = reseal_with_keyframe(r, 1, old_kf, oki.size);
    uint32_t tick = ls_replay_reader_keyframe_info(t, 1).tick;
    ls_replay_sim sim = sim_of(&g);
    ls_replay_verify_result one;
    ls_replay_verify_segments(t, &sim, 0, ls_replay_segment_count(t), false, &one);
    cr_assert_eq(one.failure, LS_REPLAY_FAIL_KEYFRAME, "%s", one.message);
    cr_assert_eq(one.tick, tick);
    cr_assert(strstr(one.message, "is not the re-simulated state: snapshot version"), "%s",
              one.message);
    cr_assert(strstr(one.message, "Solver v2"), "%s", one.message);
    ls_replay_verify_result many = verdict_by_segments(t, &sim);
    cr_assert_str_eq(many.message, one.message);
    // Starting from it (segment 2): the loader's code and words.
    ls_replay_verify_result from;
    ls_replay_verify_segments(t, &sim, 2, 3, false, &from);
    cr_assert_eq(from.failure, LS_REPLAY_FAIL_ERROR, "%s", from.message);
    cr_assert_eq(from.code, LS_ERR_INCOMPATIBLE, "%s", from.message);
    cr_assert(strstr(from.message, "cannot load the keyframe at tick") &&
                  strstr(from.message, "Solver v2"),
              "%s", from.message);
    ls_replay_reader_destroy(t);
    ls_replay_reader_destroy(r);
    ls_replay_reader_destroy(old);
    free(old_kf);
    ls_scene_free(&g.scene);
}
