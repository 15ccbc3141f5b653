// SPDX-License-Identifier: MIT
// `lockstep replay record SCENE --ticks N --seed S`: play the scene with the
// seeded scripted input stream (ls_input_script) and record every tick.
#include "cli.h"
#include "ls/game.h"
#include "replay_glue.h"

#include <stdlib.h>
#include <string.h>

typedef struct record_opts {
    const char *scene_path;
    const char *out;
    uint64_t ticks, seed, players, keyframe_interval, chunk_ticks, input_size;
    bool fsync;
} record_opts;

static int parse(int argc, char **argv, record_opts *o)
{
    *o = (record_opts){NULL, "replay.lsr", 0, 0, 0, 300, 60, 1, false};
    bool have_ticks = false, have_seed = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (strcmp(a, "--ticks") == 0 && v) {
            ok = replay_cli_number(a, v, 0, 100000000, &o->ticks), have_ticks = true, i++;
        } else if (strcmp(a, "--seed") == 0 && v) {
            ok = replay_cli_number(a, v, 0, UINT64_MAX, &o->seed), have_seed = true, i++;
        } else if (strcmp(a, "--players") == 0 && v) {
            ok = replay_cli_number(a, v, 1, LS_SCENE_MAX_PLAYERS, &o->players), i++;
        } else if (strcmp(a, "--keyframe-interval") == 0 && v) {
            ok = replay_cli_number(a, v, 0, 100000000, &o->keyframe_interval), i++;
        } else if (strcmp(a, "--chunk-ticks") == 0 && v) {
            ok = replay_cli_number(a, v, 1, LS_REPLAY_MAX_CHUNK_TICKS, &o->chunk_ticks), i++;
        } else if (strcmp(a, "--input-size") == 0 && v) {
            ok = replay_cli_number(a, v, 1, LS_REPLAY_MAX_INPUT_SIZE, &o->input_size), i++;
        } else if ((strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0) && v) {
            o->out = v, i++;
        } else if (strcmp(a, "--fsync") == 0) {
            o->fsync = true;
        } else if (a[0] != '-' && !o->scene_path) {
            o->scene_path = a;
        } else {
            fprintf(stderr, "lockstep replay record: unexpected argument '%s'\n", a);
            return 2;
        }
        if (!ok) {
            return 2;
        }
    }
    if (!o->scene_path || !have_ticks || !have_seed) {
        fprintf(stderr, "usage: lockstep replay record SCENE --ticks N --seed S [--players P] "
                        "[--out FILE]\n");
        return 2;
    }
    return 0;
}

static char *read_text(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(LS_REPLAY_MAX_SCENE + 1) : NULL;
    *size = buf ? fread(buf, 1, LS_REPLAY_MAX_SCENE + 1, f) : 0;
    if (f) {
        fclose(f);
    }
    if (buf && *size > LS_REPLAY_MAX_SCENE) {
        free(buf);
        buf = NULL;
    }
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
    }
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
        return 1;
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
    ls_replay_recorder *rec = ls_replay_recorder_create(o->out, &def, &err);
    int status = 1;
    if (!rec) {
        cli_print_error("lockstep replay record", &err);
    } else if (play(o, scene, w, rec) != LS_OK) {
        fprintf(stderr, "lockstep replay record: %s: %s\n", o->out,
                ls_replay_recorder_error(rec)->message);
    } else {
        uint64_t bytes = ls_replay_recorder_bytes(rec);
        printf("recorded %s: %u ticks, %u players, %llu bytes (%.3f bytes/player/tick), final "
               "checksum %016llx\n",
               o->out, ls_replay_recorder_ticks(rec), def.players, (unsigned long long)bytes,
               o->ticks ? (double)bytes / (double)(o->ticks * o->players) : 0.0,
               (unsigned long long)ls_world_checksum(w));
        status = 0;
    }
    ls_replay_recorder_destroy(rec);
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
    size_t size;
    char *text = read_text(o.scene_path, &size);
    if (!text) {
        fprintf(stderr, "lockstep replay record: %s: cannot read (missing or over 16 MiB)\n",
                o.scene_path);
        return 1;
    }
    ls_scene scene;
    ls_error e;
    if (ls_scene_parse(text, size, &scene, &e) != LS_OK) {
        ls_error_set_path(&e, o.scene_path);
        cli_print_error("lockstep replay record", &e);
        free(text);
        return 1;
    }
    if (o.players == 0) {
        o.players = scene.player_count ? scene.player_count : 1;
    }
    int status = record(&o, text, size, &scene);
    ls_scene_free(&scene);
    free(text);
    return status;
}
