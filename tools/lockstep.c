// SPDX-License-Identifier: MIT
// `lockstep`: one command-line tool, one subcommand per job.
#include "cli.h"
#include "json.h"
#include "ls/base.h"
#include "ls/game.h"
#include "ls/net_wire.h"
#include "ls/replay.h"

#include <stdio.h>
#include <string.h>

// LS_CLI_CORE: the commands that need the core library alone (the Windows
// build, mk/windows.mk): no networking (libuv, libsodium), keys or PNG.
#ifdef LS_CLI_CORE
static const cli_command *const commands[] = {&cmd_sim_def, &cmd_demo_def, &cmd_fx_def,
                                              &cmd_replay_def};
#else
static const cli_command *const commands[] = {
    &cmd_sim_def, &cmd_demo_def,  &cmd_fx_def,     &cmd_replay_def,   &cmd_relay_def,
    &cmd_bot_def, &cmd_match_def, &cmd_render_def, &cmd_timeline_def, &cmd_keygen_def};
#endif
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int cmd_version(int argc, char **argv);

static const cli_command cmd_version_def = {
    "version", "print the library version (and, with --json, the formats it reads and writes)",
    "[--json]\n\n"
    "  --json   {\"version\", \"fingerprint\", \"engine\", \"replay_format\", \"wire_version\"}",
    cmd_version, NULL};

static void print_help(FILE *f)
{
    fprintf(f, "usage: lockstep <command> [options]   (lockstep <command> --help "
               "for details)\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    }
    fprintf(f, "  %-10s %s\n", "version", "print the library version");
    fprintf(f, "\n--json (sim, replay info|verify|diff|dump, match, relay, bot, version) prints\n"
               "one JSON document on stdout (relay and bot: a summary at exit, their line log\n"
               "then on stderr); errors always go to stderr. Progress lines appear on stderr\n"
               "only when it is a terminal.\n\n" CLI_EXIT_HELP);
}

static int cmd_version(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            return cli_unexpected(&cmd_version_def, argv[i]);
        }
    }
    if (!json) {
        printf("%s\n", ls_version_string());
        return CLI_EXIT_OK;
    }
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "version"), json_str(&j, ls_version_string());
    json_key(&j, "fingerprint"), json_str(&j, ls_game_fingerprint());
    char engine[160];
    ls_replay_fingerprint_describe(ls_game_fingerprint(), engine, sizeof engine);
    json_key(&j, "engine"), json_str(&j, engine);
    json_key(&j, "replay_format"), json_u64(&j, LS_REPLAY_FORMAT_VERSION);
    json_key(&j, "wire_version"), json_u64(&j, LS_NET_VERSION);
    json_object_end(&j);
    json_finish(&j);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        print_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("%s\n", ls_version_string());
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "version") == 0) {
        if (cli_wants_help(argc - 1, argv + 1)) {
            cli_print_usage(&cmd_version_def);
            return CLI_EXIT_OK;
        }
        return cmd_version(argc - 1, argv + 1);
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(argv[1], commands[i]->name) == 0) {
            // `replay SUB --help` is the subcommand's own help: replay decides.
            if (commands[i] != &cmd_replay_def && cli_wants_help(argc - 1, argv + 1)) {
                cli_print_usage(commands[i]);
                return CLI_EXIT_OK;
            }
            return commands[i]->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "lockstep: unknown command '%s'\n\n", argv[1]);
    print_help(stderr);
    return CLI_EXIT_USAGE;
}
