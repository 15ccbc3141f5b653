// SPDX-License-Identifier: MIT
// Private: the reference games' rules as hooks of the game loop (game.c,
// SPEC.md §15, §16.7). A game is one entry of game.c's table and one file
// here; every game uses the public API only (lint-enforced).
#ifndef LS_GAME_RULES_H
#define LS_GAME_RULES_H

#include "ls/game.h"

/// One game's hooks.
typedef struct ls_game_rules {
    /// Apply tick t's inputs before the step (inputs NULL when no player sent
    /// any, only for a game with every_tick).
    void (*apply_inputs)(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                         uint32_t players, uint32_t input_size);
    /// The rules after the step (NULL: none).
    void (*after_step)(ls_world *w, const ls_scene *scene);
    /// apply_inputs runs every tick, inputs or not. Why: soccer's car
    /// controls are state, so a car without input must not keep last tick's
    /// throttle; the push game applies nothing without inputs.
    bool every_tick;
} ls_game_rules;

/// The push game (SPEC.md §15.1): input bits become forces at the player's centre.
void ls_push_apply_inputs_(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                           uint32_t players, uint32_t input_size);

/// Set every player's vehicle controls from the tick's inputs (SPEC.md §15.2).
void ls_soccer_apply_inputs_(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                             uint32_t players, uint32_t input_size);
/// The rules after the step: countdown, goals, kick-off, respawns (SPEC.md §15.2).
void ls_soccer_after_step_(ls_world *w, const ls_scene *scene);

#endif
