// SPDX-License-Identifier: MIT
// Subcommands of the `lockstep` tool. Each returns the process exit status,
// one of CLI_EXIT_* (the same meaning in every command, listed by `lockstep --help`).
#ifndef LS_TOOLS_CLI_H
#define LS_TOOLS_CLI_H

#include "ls/base.h"
#include "ls/scene.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Exit statuses of every command.
enum {
    CLI_EXIT_OK = 0,       ///< Success.
    CLI_EXIT_ERROR = 1,    ///< Runtime error: I/O, unreadable or invalid file, network failure.
    CLI_EXIT_USAGE = 2,    ///< Usage error: unknown option, missing or bad argument value.
    CLI_EXIT_MISMATCH = 3, ///< Verification failure: desync, difference, overflow.
    CLI_EXIT_PARTIAL = 4,  ///< replay verify: every readable tick verified, but the file is
                           ///< incomplete (truncated); --strict makes that CLI_EXIT_ERROR.
};

/// The exit-status table printed by `lockstep --help` (and shown in README.md).
#define CLI_EXIT_HELP                                                                              \
    "exit status (every command):\n"                                                               \
    "  0  success\n"                                                                               \
    "  1  runtime error: I/O, unreadable or invalid file, network failure\n"                       \
    "  2  usage error: unknown option, missing or bad argument value\n"                            \
    "  3  verification failure: replay verify desync or keyframe mismatch, replay diff\n"          \
    "     found a difference, match desync or unequal checksums, bot saw a desync,\n"              \
    "     fixed-point overflow (sim, fx)\n"                                                        \
    "  4  partial: replay verify checked every readable tick, but the recording is\n"              \
    "     incomplete (cut short, no index); with --strict that is status 1 instead\n"

/// One subcommand: name, one-line summary, usage text, entry point.
typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv);
    /// More usage text printed right after `usage` (NULL: none): C bounds one string
    /// literal to 4095 characters, and some commands have more to say.
    const char *usage_more;
} cli_command;

/// True when argv holds -h or --help.
bool cli_wants_help(int argc, char **argv);
/// Print "usage: lockstep <name> <synopsis>", the summary, then the options
/// (the part of cmd->usage after its first blank line) to stdout.
void cli_print_usage(const cli_command *cmd);
/// Print "PREFIX: path:line:column: message [LS_ERR_NAME]" (ls_error_format) to
/// stderr, naming the file and the problem once.
void cli_print_error(const char *prefix, const ls_error *err);
/// As cli_print_error, naming `path` when the error names no file.
void cli_print_error_at(const char *prefix, const char *path, const ls_error *err);
/// Print "lockstep NAME: MESSAGE" and a pointer to `lockstep NAME --help` to
/// stderr; returns CLI_EXIT_USAGE.
int cli_usage_error(const cli_command *cmd, const char *fmt, ...) LS_PRINTF(2, 3);
/// If argv[*i] is `name`: returns true and sets *value to the next argument
/// (consumed), or to NULL after printing "NAME needs a value".
bool cli_option(const cli_command *cmd, int argc, char **argv, int *i, const char *name,
                const char **value);
/// Parse a decimal integer in [min, max]; on failure print "OPTION wants an
/// integer min..max, got 'TEXT'" (naming cmd) and return false.
bool cli_parse_u64(const cli_command *cmd, const char *option, const char *text, uint64_t min,
                   uint64_t max, uint64_t *out);
/// Parse a solver vector path name (auto, scalar, avx2) that this build and
/// CPU can run; on failure print what is wrong (naming cmd) and return false.
bool cli_parse_simd(const cli_command *cmd, const char *text, ls_simd *out);
/// True when `arg` is one of the n strings of `list` (e.g. the options that take a value).
bool cli_is_one_of(const char *arg, const char *const *list, size_t n);
/// Report an unknown option or an extra operand; returns CLI_EXIT_USAGE.
int cli_unexpected(const cli_command *cmd, const char *arg);

/// Where a scene named on the command line (or a default) lives: `path` itself
/// if it exists; else <data>/scenes/<basename of path>, where <data> is
/// $LOCKSTEP_DATA when set, or the installed LS_DATADIR, if that file exists;
/// else `path` unchanged, so that the error names what the user gave. The
/// result is `path` or buf.
const char *cli_find_scene(const char *path, char *buf, size_t size);
/// Parse scene text read from `path` (`mesh obj` files resolve next to it).
/// When the scene loads meshes, *text (malloc'd) is replaced by the scene
/// written back with its meshes inline (ls_scene_write: the same values), so
/// a replay or a peer that receives the text needs no other file.
ls_result cli_scene_parse_portable(const char *path, char **text, size_t *size, ls_scene *out,
                                   ls_error *err);
/// The scene of match, relay, bot when none is given.
#define CLI_DEFAULT_SCENE "tools/scenes/arena.scene"
/// CLI_DEFAULT_SCENE found with cli_find_scene, or NULL after printing one
/// message saying where it was looked for (for commands given no --scene).
const char *cli_default_scene(const cli_command *cmd, char *buf, size_t size);

int cmd_fx(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_relay(int argc, char **argv);
int cmd_bot(int argc, char **argv);
int cmd_match(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_keygen(int argc, char **argv);

extern const cli_command cmd_fx_def;
extern const cli_command cmd_demo_def;
extern const cli_command cmd_sim_def;
extern const cli_command cmd_replay_def;
extern const cli_command cmd_relay_def;
extern const cli_command cmd_bot_def;
extern const cli_command cmd_match_def;
extern const cli_command cmd_render_def;
extern const cli_command cmd_timeline_def;
extern const cli_command cmd_keygen_def;

#endif
