// SPDX-License-Identifier: MIT
// Subcommands of the `lockstep` tool. Each returns the process exit status.
#ifndef LS_TOOLS_CLI_H
#define LS_TOOLS_CLI_H

#include "ls/base.h"

#include <stdbool.h>

/// One subcommand: name, one-line summary, usage text, entry point.
typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv);
} cli_command;

/// True when argv holds -h or --help.
bool cli_wants_help(int argc, char **argv);
/// Print "usage: lockstep <usage>" for cmd to stdout.
void cli_print_usage(const cli_command *cmd);
/// Print "PREFIX: path:line:column: message [LS_ERR_NAME]" (ls_error_format) to
/// stderr, naming the file and the problem once.
void cli_print_error(const char *prefix, const ls_error *err);

int cmd_fx(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_relay(int argc, char **argv);
int cmd_bot(int argc, char **argv);
int cmd_match(int argc, char **argv);
int cmd_render(int argc, char **argv);

extern const cli_command cmd_fx_def;
extern const cli_command cmd_demo_def;
extern const cli_command cmd_sim_def;
extern const cli_command cmd_replay_def;
extern const cli_command cmd_relay_def;
extern const cli_command cmd_bot_def;
extern const cli_command cmd_match_def;
extern const cli_command cmd_render_def;

#endif
