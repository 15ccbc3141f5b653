// SPDX-License-Identifier: MIT
// The reference push game (SPEC.md §15): how a tick's input bytes move the
// players' bodies, and a seeded scripted input stream. The replay recorder,
// the crosscheck runner and the network bots all play this one game, so a
// match recorded anywhere re-simulates everywhere.
#ifndef LS_GAME_H
#define LS_GAME_H

#include "ls/rng.h"
#include "ls/scene.h"

LS_EXTERN_C_BEGIN

/// Input bits of the first byte of a player's input (the other bytes are ignored).
enum {
    LS_INPUT_PUSH_XP = 1, ///< Push towards +x.
    LS_INPUT_PUSH_XN = 2, ///< Push towards -x.
    LS_INPUT_PUSH_ZP = 4, ///< Push towards +z.
    LS_INPUT_PUSH_ZN = 8, ///< Push towards -z.
};

/// Push force per direction bit, N (seed_000 §5.2: WASD pushes with 20 N at the centre).
#define LS_GAME_PUSH_NEWTONS 20

/// Apply one tick of inputs (player p's bytes at inputs + p * input_size) as forces
/// on the scene's player bodies; call before ls_world_step. Players beyond the
/// scene's player count are ignored. Returns LS_ERR_INVALID_ARGUMENT if input_size is 0.
LS_API ls_result ls_game_apply_inputs(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                                      uint32_t players, uint32_t input_size);

/// One tick of the game loop (SPEC.md §16.7): apply the tick's inputs (as
/// ls_game_apply_inputs; inputs may be NULL or players 0 for none), step the world,
/// and return the checksum of the state after the tick, which peers compare and
/// replays record.
LS_API uint64_t ls_game_tick(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                             uint32_t players, uint32_t input_size);

/// The build fingerprint (SPEC.md §16.8): what a replay's bits depend on (number
/// format, libfixmath build, checksum, snapshot layout, game rules). Recorders write
/// it; verifiers require it (ls_replay_reader_require_fingerprint).
LS_API const char *ls_game_fingerprint(void);

/// Seeded scripted input stream: each player holds a direction and changes it on
/// average every 32 ticks, like a person holding keys.
typedef struct ls_input_script {
    ls_rng rng[LS_SCENE_MAX_PLAYERS];   ///< One stream per player (stream = player).
    uint8_t held[LS_SCENE_MAX_PLAYERS]; ///< Input byte each player holds now.
    uint32_t players;                   ///< Number of players (1..LS_SCENE_MAX_PLAYERS).
} ls_input_script;

/// Start a script for `players` players (clamped to 1..LS_SCENE_MAX_PLAYERS).
LS_API void ls_input_script_init(ls_input_script *s, uint64_t seed, uint32_t players);
/// Write the next tick's inputs: one byte per player, then input_size - 1 zero bytes each.
LS_API void ls_input_script_next(ls_input_script *s, uint8_t *out, uint32_t input_size);

LS_EXTERN_C_END

#endif
