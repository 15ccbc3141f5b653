// SPDX-License-Identifier: MIT
// `lockstep replay record|info|verify|dump|diff|tamper`: match recordings
// (SPEC.md "Replay files"). This file dispatches and holds shared helpers.
#include "cli.h"
#include "replay_glue.h"

#include <stdlib.h>
#include <string.h>

const cli_command cmd_replay_def = {
    "replay", "record, inspect and verify match replays (first divergent tick and body)",
    "record|info|verify|dump|diff|tamper ...   (lockstep replay SUB --help for each)\n\n"
    "  replay record SCENE --ticks N --seed S [--players P] [--out FILE] ...\n"
    "      play SCENE with a seeded scripted input stream and record it\n"
    "  replay info FILE [--json]\n"
    "      header, ticks, players, size, bytes/player/tick, keyframes\n"
    "  replay verify FILE [--jobs N] [--strict] [--stats] [--json] [--no-progress]\n"
    "      re-simulate; `verified N ticks`, or (exit 3) `DESYNC at tick T: ...` and\n"
    "      a field-by-field diff of the first divergent body; exit 4 when the file is\n"
    "      incomplete (cut short) and verified up to where it ends (1 with --strict)\n"
    "  replay dump FILE [--json] [--from T] [--to T]\n"
    "      inputs and checksum of ticks [T, T') (default: all), keyframes\n"
    "  replay diff A B [--json]\n"
    "      the first divergent tick between two recordings (exit 3 if any)\n"
    "  replay tamper IN OUT --tick T [--player P] [--xor X]\n"
    "      rewrite IN with one input byte changed (a valid file that must fail verify)",
    cmd_replay, NULL};

static const cli_command *const subs[] = {&cmd_replay_record_def, &cmd_replay_info_def,
                                          &cmd_replay_verify_def, &cmd_replay_dump_def,
                                          &cmd_replay_diff_def,   &cmd_replay_tamper_def};

ls_replay_reader *replay_cli_open(const cli_command *cmd, const char *path)
{
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open(path, &err);
    if (!r) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "lockstep %s", cmd->name);
        cli_print_error(prefix, &err);
    }
    return r;
}

void replay_cli_json_engine(json_out *j, const char *fingerprint)
{
    ls_replay_engine e = ls_replay_fingerprint_engine(fingerprint);
    char words[160];
    ls_replay_fingerprint_describe(fingerprint, words, sizeof words);
    json_object_begin(j);
    json_key(j, "engine"), json_str(j, words);
    json_key(j, "known"), json_bool(j, e.known);
    json_key(j, "version");
    e.known ? json_str(j, e.version) : json_null(j);
    json_key(j, "solver");
    e.known ? json_str(j, e.solver) : json_null(j);
    json_key(j, "snapshot");
    e.snapshot[0] ? json_str(j, e.snapshot) : json_null(j);
    json_key(j, "physics");
    e.physics[0] ? json_str(j, e.physics) : json_null(j);
    json_object_end(j);
}

bool replay_cli_compatible(const cli_command *cmd, const char *path, const ls_replay_reader *r,
                           bool json)
{
    ls_error err;
    if (ls_replay_reader_require_fingerprint(r, ls_game_fingerprint(), &err) == LS_OK) {
        return true;
    }
    ls_error_set_path(&err, path);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "lockstep %s", cmd->name);
    cli_print_error(prefix, &err);
    if (json) { // the refusal is the whole document: which engine the file needs
        const char *fingerprint = ls_replay_reader_header(r)->fingerprint;
        json_out j;
        json_init(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "file"), json_str(&j, path);
        json_key(&j, "result"), json_str(&j, "incompatible");
        json_key(&j, "message"), json_str(&j, err.message);
        json_key(&j, "offset"), json_i64(&j, err.offset);
        json_key(&j, "recorded_by"), replay_cli_json_engine(&j, fingerprint);
        json_key(&j, "this_build"), replay_cli_json_engine(&j, ls_game_fingerprint());
        json_object_end(&j);
        json_finish(&j);
    }
    return false;
}

int cmd_replay(int argc, char **argv)
{
    if (argc < 2) {
        return cli_usage_error(&cmd_replay_def, "missing subcommand (record, info, verify, dump, "
                                                "diff or tamper)");
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        cli_print_usage(&cmd_replay_def);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (strcmp(argv[1], subs[i]->name + strlen("replay ")) == 0) {
            if (cli_wants_help(argc - 1, argv + 1)) {
                cli_print_usage(subs[i]);
                return CLI_EXIT_OK;
            }
            return subs[i]->run(argc - 1, argv + 1);
        }
    }
    return cli_usage_error(&cmd_replay_def, "unknown subcommand '%s'", argv[1]);
}
