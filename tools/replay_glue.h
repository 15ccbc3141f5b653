// SPDX-License-Identifier: MIT
// Private to the tool: binds the physics-agnostic replay module to the
// reference push game (SPEC.md "Replay files", tick convention): per tick t,
// apply t's inputs with ls_game_apply_inputs, ls_world_step, then the recorded
// checksum is ls_world_checksum; keyframes are ls_world_snapshot_save bytes.
#ifndef LS_TOOLS_REPLAY_GLUE_H
#define LS_TOOLS_REPLAY_GLUE_H

#include "cli.h"
#include "json.h"
#include "ls/game.h"
#include "ls/replay.h"
#include "ls/replay_sign.h"
#include "ls/scene.h"

#include <stdio.h>

/// A game bound to one scene; states are ls_world pointers.
typedef struct replay_glue {
    ls_scene scene;                              ///< Parsed embedded scene.
    uint32_t players;                            ///< Players in the replay.
    uint32_t input_size;                         ///< Bytes per player per tick.
    void (*progress)(void *ctx, uint32_t ticks); ///< Optional progress sink.
    void *progress_ctx;                          ///< Passed to progress.
    size_t max_memory; ///< Budget of one world, bytes (set by init to the default).
} replay_glue;

/// Default budget of one re-simulated world from a file (`--max-memory`), MiB.
#define REPLAY_DEFAULT_MAX_MEMORY_MB 256
/// Parse `--max-memory MB` (1..65536) into bytes; prints the usage error.
bool replay_cli_max_memory(const cli_command *cmd, const char *text, size_t *out);
/// Check the recording's signatures against the key in `key` (a .pub file or hex);
/// prints what they prove (text, or into j) and returns CLI_EXIT_OK, CLI_EXIT_ERROR
/// (unreadable key) or CLI_EXIT_MISMATCH (unsigned, another key, or modified).
int replay_cli_check_signature(const cli_command *cmd, const char *path, const ls_replay_reader *r,
                               const char *key, json_out *j);
/// Load NAME.key for --sign-key and make a signer (NULL after printing why).
ls_replay_signer *replay_cli_signer(const cli_command *cmd, const char *key_path);

/// Parse the replay's embedded scene. Returns false with *err filled on error.
bool replay_glue_init(replay_glue *g, const ls_replay_header *h, ls_error *err);
/// Free the scene.
void replay_glue_free(replay_glue *g);
/// The verifier callbacks for this game (user = g).
ls_replay_sim replay_glue_sim(replay_glue *g);
/// A world loaded from the scene and, if keyframe is non-NULL, the keyframe.
ls_world *replay_glue_load(const replay_glue *g, const uint8_t *keyframe, size_t size,
                           ls_error *err);
/// One tick: apply the inputs, step, return the checksum.
uint64_t replay_glue_advance(const replay_glue *g, ls_world *w, const uint8_t *inputs);
/// Print a field-by-field diff of the first bodies that differ between `recorded`
/// and `computed` (column titles labels[0], labels[1]) and list the other
/// differing bodies. Returns how many differ.
uint32_t replay_glue_diff(const replay_glue *g, const ls_world *recorded, const ls_world *computed,
                          const char *const labels[2], FILE *out);

/// The same diff as JSON: an array of {"body", "slot", "player", "type",
/// "fields": [{"field", labels[0], labels[1]}]} for every differing body.
/// Returns how many differ.
uint32_t replay_glue_diff_json(const replay_glue *g, const ls_world *recorded,
                               const ls_world *computed, const char *const labels[2], json_out *j);

/// Open a replay, printing "lockstep CMD: the reader's error (what and where)" to
/// stderr on failure.
ls_replay_reader *replay_cli_open(const cli_command *cmd, const char *path);
/// Refuse a replay recorded by a build with another fingerprint: prints why to
/// stderr (naming both engines, SPEC.md §16.8) and, with json, a document
/// {"result": "incompatible", "message", "recorded_by", "this_build"} on stdout.
bool replay_cli_compatible(const cli_command *cmd, const char *path, const ls_replay_reader *r,
                           bool json);
/// The engine behind `fingerprint` as a JSON object value: {"engine" (in words),
/// "known", "version", "solver", "snapshot", "physics"} (null when unknown or absent).
void replay_cli_json_engine(json_out *j, const char *fingerprint);

/// `--png FILE [--size WxH] [--camera VIEW] [--ahead N]` of replay diff, as given
/// (NULL: absent), and what replay_picture_parse makes of them.
typedef struct replay_picture_opts {
    const char *png, *size, *camera, *ahead; ///< The option values.
    int width, height;                       ///< Each half, pixels (default 480x360).
    uint32_t ticks_after;                    ///< --ahead: draw this many ticks later.
} replay_picture_opts;

/// Check the picture options (the others need --png); prints the usage error.
bool replay_picture_parse(const cli_command *cmd, replay_picture_opts *o);
/// Re-simulate both recordings from their own inputs to the state after tick
/// `tick` (+ ticks_after) and write them side by side (A left, B right) with
/// the bodies whose state differs in magenta and labelled with their ids. Prints
/// `wrote FILE ...` (or adds a "picture" member to j). Returns a CLI_EXIT_* code.
int replay_picture_write(const char *prog, const char *const paths[2], uint32_t tick,
                         const replay_picture_opts *o, json_out *j);
/// The picture of two states of the scene after tick `shown`: w[0] left, w[1] right
/// (`sides` names them in the printed line, e.g. "recorded | computed").
int replay_picture_worlds(const char *prog, const ls_scene *scene, ls_world *const w[2],
                          uint32_t shown, const char *sides, const replay_picture_opts *o,
                          json_out *j);

extern const cli_command cmd_replay_record_def;
extern const cli_command cmd_replay_info_def;
extern const cli_command cmd_replay_verify_def;
extern const cli_command cmd_replay_dump_def;
extern const cli_command cmd_replay_diff_def;
extern const cli_command cmd_replay_tamper_def;

/// `lockstep replay` (dispatches to the functions below).
int cmd_replay(int argc, char **argv);
/// `lockstep replay record`.
int cmd_replay_record(int argc, char **argv);
/// `lockstep replay verify`.
int cmd_replay_verify(int argc, char **argv);
/// `lockstep replay info`.
int cmd_replay_info(int argc, char **argv);
/// `lockstep replay dump`.
int cmd_replay_dump(int argc, char **argv);
/// `lockstep replay diff`.
int cmd_replay_diff(int argc, char **argv);
/// `lockstep replay tamper`.
int cmd_replay_tamper(int argc, char **argv);

#endif
