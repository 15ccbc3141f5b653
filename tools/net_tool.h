// SPDX-License-Identifier: MIT
// Private to the tool: helpers shared by `lockstep relay`, `bot` and `match`
// (numbers, fault options), and the bot's game: the scene played with its
// rules (push or car soccer, SPEC.md §15), one player per slot.
#ifndef LS_TOOLS_NET_TOOL_H
#define LS_TOOLS_NET_TOOL_H

#include "ls/game.h"
#include "ls/net_fault.h"
#include "ls/net_wire.h"

/// Parse an integer in [min, max] for `option`, or print an error naming the command.
bool net_cli_u64(const char *cmd, const char *option, const char *text, uint64_t min, uint64_t max,
                 uint64_t *out);
/// Parse a probability 0..1 into parts per million.
bool net_cli_ppm(const char *cmd, const char *option, const char *text, uint32_t *out);
/// If argv[*i] is a fault option (--loss, --dup, --reorder, --corrupt, --delay-ms,
/// --jitter, --fault-seed), consume it and its value into *f; *ok is false on a bad value.
bool net_cli_fault_option(const char *cmd, int argc, char **argv, int *i, ls_net_fault_def *f,
                          bool *ok);
/// Usage lines of the fault options.
#define NET_FAULT_USAGE                                                                            \
    "  --loss P        drop each sent datagram with probability P (0..1)\n"                        \
    "  --dup P         send it twice with probability P\n"                                         \
    "  --reorder P     hold it back behind later ones with probability P\n"                        \
    "  --corrupt P     flip one random bit of it with probability P (the tag catches it)\n"        \
    "  --delay-ms MS   fixed one-way delay on sends\n"                                             \
    "  --jitter MS     extra uniform delay 0..MS on sends\n"                                       \
    "  --fault-seed S  seed of the fault decisions (default 1)\n"
/// Read a whole file (NUL-terminated, *size without the NUL); NULL with one
/// message "lockstep CMD: path: what" on error.
char *net_read_file(const char *cmd, const char *path, size_t *size);

/// "left", "timeout", "kicked", "rejoined" (ls_net_disconnect_reason), or "unknown".
const char *net_reason_name(uint8_t reason);

/// One network event kept for a --json summary (which fields mean something
/// depends on the list it is in).
typedef struct net_event_rec {
    uint32_t slot, tick;
    uint32_t extra;         ///< Bot rejoin: the snapshot tick.
    uint16_t slots;         ///< Desync: the disagreeing slots (bit per slot).
    uint8_t reason;         ///< Disconnect: ls_net_disconnect_reason.
    uint64_t expected, got; ///< Desync: the majority checksum, the lowest disagreeing slot's.
} net_event_rec;

/// The first NET_EVENTS_KEPT events of a kind, and how many there were.
typedef struct net_event_list {
    net_event_rec *v;
    uint32_t n, cap;
    uint64_t total;
} net_event_list;

#define NET_EVENTS_KEPT 256

/// Count e, and keep it if fewer than NET_EVENTS_KEPT are kept (out of memory: only counted).
void net_event_list_add(net_event_list *l, const net_event_rec *e);
void net_event_list_free(net_event_list *l);

/// The bot's game: the scene's world, stepped with every slot's input.
typedef struct net_game {
    ls_scene scene;                         ///< The arena.
    ls_world *world;                        ///< Current state.
    ls_input_script script;                 ///< Seeded pushes for this bot's slot (push game).
    ls_soccer_bot bot;                      ///< This slot's soccer bot (soccer scenes).
    uint32_t slot;                          ///< This bot's slot.
    void *owner;                            ///< The command's own state (its event callback).
    int64_t perturb_tick;                   ///< Tick at which to diverge on purpose (-1: never).
    uint8_t row[LS_SCENE_MAX_PLAYERS * 64]; ///< Scratch for the script.
} net_game;

/// Load the scene and instantiate it; false with a message "lockstep CMD: ..."
/// printed on error.
bool net_game_init(net_game *g, const char *cmd, const char *scene_path, uint64_t seed,
                   uint32_t slot, uint32_t slots);
/// Free the world and scene.
void net_game_free(net_game *g);
/// ls_peer local_input callback (user = net_game): the push game's scripted inputs,
/// or in a soccer scene the soccer bot's input from the current (maybe predicted) world.
void net_game_local_input(void *user, uint32_t tick, uint8_t *out, uint32_t input_size);
/// ls_peer advance callback: ls_game_tick (the replay verifier's convention).
uint64_t net_game_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                          uint32_t input_size);
/// ls_peer save callback (rollback mode): the world snapshot (the size it needs if cap is short).
size_t net_game_save(void *user, uint32_t tick, uint8_t *buf, size_t cap);
/// ls_peer load callback (rollback mode): restore a world snapshot.
bool net_game_load(void *user, uint32_t tick, const uint8_t *buf, size_t size);
/// ls_peer state_checksum callback (rejoin proof): the world checksum, which is what
/// ls_game_tick returned for the tick before the state.
uint64_t net_game_state_checksum(void *user, uint32_t tick);

/// The game's summary for the bot's result line: "A-B" (goals of team 0 and team 1)
/// in a soccer scene, "" otherwise.
void net_game_summary(const net_game *g, char *buf, size_t size);

#endif
