// SPDX-License-Identifier: MIT
// `lockstep replay record SCENE --ticks N --seed S`: play the scene with the
// seeded scripted input stream (ls_input_script) and record every tick.
#include "cli.h"
#include "ls/game.h"
#include "progress.h"
#include "replay_glue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const cli_command cmd_replay_record_def = {
    "replay record", "play a scene with a seeded scripted input stream and record it",
    "SCENE --ticks N --seed S [--players P] [--out FILE] [--keyframe-interval K]\n"
    "       [--chunk-ticks C] [--input-size B] [--sign-key KEY] [--fsync] [--no-progress]\n\n"
    "  SCENE                 a .scene file (searched in the installed scenes if missing)\n"
    "  --ticks N             ticks to record, 0..100000000 (required)\n"
    "  --seed S              seed of the scripted inputs (required)\n"
    "  --players P           players, 1..16 (default: the scene's player count)\n"
    "  --out FILE            output file (default replay.lsr)\n"
    "  --keyframe-interval K a keyframe every K ticks, 0 = none (default 300)\n"
    "  --chunk-ticks C       ticks per checked chunk (default 60)\n"
    "  --input-size B        bytes per player per tick (default 1)\n"
    "  --sign-key KEY        sign the recording with KEY (a .key file from `lockstep keygen`)\n"
    "  --fsync               fsync every chunk\n"
    "  --no-progress         no progress line (only drawn when stderr is a terminal)",
    cmd_replay_record, NULL};

typedef struct record_opts {
    const char *scene_path;
    const char *out;
    const char *sign_key;
    uint64_t ticks, seed, players, keyframe_interval, chunk_ticks, input_size;
    bool fsync, progress;
} record_opts;

static int parse(int argc, char **argv, record_opts *o)
{
    const cli_command *cmd = &cmd_replay_record_def;
    *o = (record_opts){NULL, "replay.lsr", NULL, 0, 0, 0, 300, 60, 1, false, true};
    bool have_ticks = false, have_seed = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        bool ok = true;
        if (cli_option(cmd, argc, argv, &i, "--ticks", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 0, 100000000, &o->ticks), have_ticks = true;
        } else if (cli_option(cmd, argc, argv, &i, "--seed", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 0, UINT64_MAX, &o->seed), have_seed = true;
        } else if (cli_option(cmd, argc, argv, &i, "--players", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 1, LS_SCENE_MAX_PLAYERS, &o->players);
        } else if (cli_option(cmd, argc, argv, &i, "--keyframe-interval", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 0, 100000000, &o->keyframe_interval);
        } else if (cli_option(cmd, argc, argv, &i, "--chunk-ticks", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 1, LS_REPLAY_MAX_CHUNK_TICKS, &o->chunk_ticks);
        } else if (cli_option(cmd, argc, argv, &i, "--input-size", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 1, LS_REPLAY_MAX_INPUT_SIZE, &o->input_size);
        } else if (cli_option(cmd, argc, argv, &i, "--out", &v) ||
                   cli_option(cmd, argc, argv, &i, "-o", &v)) {
            ok = v != NULL, o->out = v;
        } else if (cli_option(cmd, argc, argv, &i, "--sign-key", &v)) {
            ok = v != NULL, o->sign_key = v;
        } else if (strcmp(a, "--fsync") == 0) {
            o->fsync = true;
        } else if (strcmp(a, "--no-progress") == 0) {
            o->progress = false;
        } else if (a[0] != '-' && !o->scene_path) {
            o->scene_path = a;
        } else {
            return cli_unexpected(cmd, a);
        }
        if (!ok) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!o->scene_path || !have_ticks || !have_seed) {
        return cli_usage_error(cmd, "missing %s",
                               !o->scene_path ? "SCENE"
                               : !have_ticks  ? "--ticks N"
                                              : "--seed S");
    }
    return CLI_EXIT_OK;
}

// The scene's bytes (embedded in the replay), or NULL with one message printed.
static char *read_text(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "lockstep replay record: %s: cannot open: %s\n", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(LS_REPLAY_MAX_SCENE + 1);
    *size = buf ? fread(buf, 1, LS_REPLAY_MAX_SCENE + 1, f) : 0;
    int e = errno;
    if (!buf || ferror(f) || *size > LS_REPLAY_MAX_SCENE) {
        fprintf(stderr, "lockstep replay record: %s: %s%s\n", path,
                !buf        ? "out of memory"
                : ferror(f) ? "cannot read: "
                            : "larger than the replay format's scene limit",
                buf && ferror(f) ? strerror(e) : "");
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static ls_result add_keyframe(ls_replay_recorder *rec, const ls_world *w)
{
    size_t n = ls_world_snapshot_size(w);
    uint8_t *snap = malloc(n);
    ls_result r = LS_ERR_NO_MEMORY;
    if (snap && ls_world_snapshot_save(w, snap, n) == n) {
        r = ls_replay_recorder_add_keyframe(rec, snap, n);
    }
    free(snap);
    return r;
}

// Per tick t: inputs = script next; apply; step; checksum after the step.
static ls_result play(const record_opts *o, const ls_scene *scene, ls_world *w,
                      ls_replay_recorder *rec)
{
    cli_progress bar;
    cli_progress_init(&bar, "record", "ticks", o->ticks, o->progress);
    ls_input_script script;
    ls_input_script_init(&script, o->seed, (uint32_t)o->players);
    uint8_t inputs[LS_SCENE_MAX_PLAYERS * LS_REPLAY_MAX_INPUT_SIZE];
    ls_result r = LS_OK;
    for (uint64_t t = 0; t < o->ticks && r == LS_OK; t++) {
        ls_input_script_next(&script, inputs, (uint32_t)o->input_size);
        uint64_t sum =
            ls_game_tick(w, scene, inputs, (uint32_t)o->players, (uint32_t)o->input_size);
        r = ls_replay_recorder_append(rec, inputs, sum);
        if (r == LS_OK && ls_replay_recorder_keyframe_due(rec)) {
            r = add_keyframe(rec, w);
        }
        cli_progress_update(&bar, t + 1);
    }
    cli_progress_done(&bar);
    // A last keyframe at the end lets a desync in the final segment show its body diff.
    if (r == LS_OK && o->ticks > 0 && o->keyframe_interval > 0 &&
        o->ticks % o->keyframe_interval != 0) {
        r = add_keyframe(rec, w);
    }
    return r == LS_OK ? ls_replay_recorder_finish(rec) : r;
}

static int record(const record_opts *o, const char *text, size_t size, const ls_scene *scene)
{
    ls_error err;
    ls_world *w = ls_scene_instantiate(scene, &err);
    if (!w) {
        ls_error_set_path(&err, o->scene_path);
        cli_print_error("lockstep replay record", &err);
        return CLI_EXIT_ERROR;
    }
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.tick_rate = scene->world.tick_rate;
    def.players = (uint32_t)o->players;
    def.input_size = (uint32_t)o->input_size;
    def.keyframe_interval = (uint32_t)o->keyframe_interval;
    def.chunk_ticks = (uint32_t)o->chunk_ticks;
    def.seed = o->seed;
    def.fingerprint = ls_game_fingerprint();
    def.scene = (const uint8_t *)text;
    def.scene_size = size;
    def.fsync_chunks = o->fsync;
    ls_replay_signer *signer = NULL;
    if (o->sign_key && !(signer = replay_cli_signer(&cmd_replay_record_def, o->sign_key))) {
        ls_world_destroy(w);
        return CLI_EXIT_ERROR;
    }
    def.signer = signer;
    ls_replay_recorder *rec = ls_replay_recorder_create(o->out, &def, &err);
    int status = CLI_EXIT_ERROR;
    if (!rec) {
        cli_print_error("lockstep replay record", &err);
    } else if (play(o, scene, w, rec) != LS_OK) {
        cli_print_error_at("lockstep replay record", o->out, ls_replay_recorder_error(rec));
    } else {
        uint64_t bytes = ls_replay_recorder_bytes(rec);
        printf("recorded %s: %u ticks, %u players, %llu bytes (%.3f bytes/player/tick), final "
               "checksum %016llx\n",
               o->out, ls_replay_recorder_ticks(rec), def.players, (unsigned long long)bytes,
               o->ticks ? (double)bytes / (double)(o->ticks * o->players) : 0.0,
               (unsigned long long)ls_world_checksum(w));
        status = CLI_EXIT_OK;
    }
    ls_replay_recorder_destroy(rec);
    ls_replay_signer_destroy(signer);
    ls_world_destroy(w);
    return status;
}

int cmd_replay_record(int argc, char **argv)
{
    record_opts o;
    int bad = parse(argc, argv, &o);
    if (bad) {
        return bad;
    }
    char found[4096];
    o.scene_path = cli_find_scene(o.scene_path, found, sizeof found);
    size_t size;
    char *text = read_text(o.scene_path, &size);
    if (!text) {
        return CLI_EXIT_ERROR;
    }
    ls_scene scene;
    ls_error e;
    if (cli_scene_parse_portable(o.scene_path, &text, &size, &scene, &e) != LS_OK) {
        ls_error_set_path(&e, o.scene_path);
        cli_print_error("lockstep replay record", &e);
        free(text);
        return CLI_EXIT_ERROR;
    }
    if (o.players == 0) {
        o.players = scene.player_count ? scene.player_count : 1;
    }
    int status = record(&o, text, size, &scene);
    ls_scene_free(&scene);
    free(text);
    return status;
}
