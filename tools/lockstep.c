// SPDX-License-Identifier: MIT
// `lockstep`: one command-line tool, one subcommand per job.
#include "cli.h"
#include "ls/base.h"

#include <stdio.h>
#include <string.h>

static const cli_command *const commands[] = {&cmd_sim_def,    &cmd_demo_def,  &cmd_fx_def,
                                              &cmd_replay_def, &cmd_relay_def, &cmd_bot_def,
                                              &cmd_match_def,  &cmd_render_def};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            return true;
        }
    }
    return false;
}

void cli_print_usage(const cli_command *cmd)
{
    printf("usage: lockstep %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
}

void cli_print_error(const char *prefix, const ls_error *err)
{
    char line[LS_ERROR_PATH_MAX + LS_ERROR_MESSAGE_MAX + 32];
    ls_error_format(err, line, sizeof line);
    fprintf(stderr, "%s: %s [%s]\n", prefix, line, ls_result_name(err->code));
}

static void print_help(FILE *f)
{
    fprintf(f, "usage: lockstep <command> [options]   (lockstep <command> --help "
               "for details)\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    }
    fprintf(f, "  %-10s %s\n", "version", "print the library version");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        print_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        printf("%s\n", ls_version_string());
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(argv[1], commands[i]->name) == 0) {
            if (cli_wants_help(argc - 1, argv + 1)) {
                cli_print_usage(commands[i]);
                return 0;
            }
            return commands[i]->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "lockstep: unknown command '%s'\n\n", argv[1]);
    print_help(stderr);
    return 2;
}
