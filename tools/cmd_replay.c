// SPDX-License-Identifier: MIT
// `lockstep replay record|info|verify|dump|diff|tamper`: match recordings
// (SPEC.md "Replay files"). This file dispatches and holds shared helpers.
#include "cli.h"
#include "replay_glue.h"

#include <stdlib.h>
#include <string.h>

const cli_command cmd_replay_def = {
    "replay", "record, inspect and verify match replays (first divergent tick and body)",
    "record|info|verify|dump|diff|tamper ...\n\n"
    "  replay record SCENE --ticks N --seed S [--players P] [--out FILE]\n"
    "                [--keyframe-interval K] [--chunk-ticks C] [--input-size B] [--fsync]\n"
    "      play SCENE with a seeded scripted input stream and record it (default out: "
    "replay.lsr)\n"
    "  replay info FILE            header, ticks, players, size, bytes/player/tick, keyframes\n"
    "  replay verify FILE [--jobs N] [--stats] [--no-progress]\n"
    "      re-simulate; exit 0 with `verified N ticks`, 1 with `DESYNC at tick T: ...` and\n"
    "      a field-by-field diff of the first divergent body\n"
    "  replay dump FILE [--json] [--from T] [--to T]\n"
    "      inputs and checksum of ticks [T, T') (default: all), keyframes\n"
    "  replay diff A B             the first divergent tick between two recordings\n"
    "  replay tamper IN OUT --tick T [--player P] [--xor X]\n"
    "      rewrite IN with one input byte changed (a valid file that must fail verify)",
    cmd_replay};

bool replay_cli_number(const char *option, const char *text, uint64_t min, uint64_t max,
                       uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 0);
    if (!text[0] || text[0] == '-' || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "lockstep replay: %s wants %llu..%llu, got '%s'\n", option,
                (unsigned long long)min, (unsigned long long)max, text);
        return false;
    }
    *out = v;
    return true;
}

ls_replay_reader *replay_cli_open(const char *path)
{
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open(path, &err);
    if (!r) {
        cli_print_error("lockstep replay", &err);
    }
    return r;
}

bool replay_cli_compatible(const char *path, const ls_replay_reader *r)
{
    ls_error err;
    if (ls_replay_reader_require_fingerprint(r, ls_game_fingerprint(), &err) == LS_OK) {
        return true;
    }
    ls_error_set_path(&err, path);
    cli_print_error("lockstep replay", &err);
    return false;
}

int cmd_replay(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } subs[] = {{"record", cmd_replay_record}, {"info", cmd_replay_info},
                {"verify", cmd_replay_verify}, {"dump", cmd_replay_dump},
                {"diff", cmd_replay_diff},     {"tamper", cmd_replay_tamper}};
    if (argc >= 2) {
        for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
            if (strcmp(argv[1], subs[i].name) == 0) {
                return subs[i].run(argc - 1, argv + 1);
            }
        }
        fprintf(stderr, "lockstep replay: unknown subcommand '%s'\n", argv[1]);
    }
    cli_print_usage(&cmd_replay_def);
    return 2;
}
