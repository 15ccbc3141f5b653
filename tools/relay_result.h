// SPDX-License-Identifier: MIT
// Private to the tool: the game's result of a match the relay recorded (SPEC.md
// §17.13, the match_result event's "result"). The relay simulates nothing while
// a match runs; when its recording is finished it re-simulates the recording (the
// inputs every peer agreed on, from the embedded scene, on a thread of its own:
// never on a datagram path) and reads the game words of the last state. Peers are
// not asked: the result is the deterministic consequence of the recorded inputs,
// and every re-simulated checksum is compared with the recorded (agreed) one, so
// a result whose recording the peers' checksums contradict says so (verified false).
#ifndef LS_TOOLS_RELAY_RESULT_H
#define LS_TOOLS_RELAY_RESULT_H

#include "ls/world.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// A match's result, re-simulated.
typedef struct relay_result {
    const char *game;                   ///< The scene's game rules ("soccer"), static text.
    uint32_t ticks;                     ///< Ticks re-simulated (the recording's).
    bool verified;                      ///< Every re-simulated checksum matched the recording's.
    uint32_t mismatch_tick;             ///< Not verified: the first tick whose checksum did not.
    int32_t words[LS_WORLD_GAME_WORDS]; ///< The game words after the last tick.
    uint32_t score_words[2];            ///< The words that are the score ...
    uint32_t score_count;               ///< ... (how many: 2 for soccer).
    char error[256]; ///< Why there is no result (re-simulation failed), "" when there is.
} relay_result;

/// True when scenes played with `game` (ls_scene_game) keep game words: the relay
/// re-simulates their recordings for a result. The push game keeps none.
bool relay_result_wanted(int game);
/// Re-simulate the recording at `path` into *out. False with out->error set when it
/// cannot be read or simulated, or *cancel became true (checked every 256 ticks).
bool relay_result_compute(const char *path, relay_result *out, const atomic_bool *cancel);

#endif
