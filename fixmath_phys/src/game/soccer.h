// SPDX-License-Identifier: MIT
// Private: the car soccer rules' hooks into the game loop (game.c).
#ifndef LS_GAME_SOCCER_H
#define LS_GAME_SOCCER_H

#include "ls/game.h"

/// Set every player's vehicle controls from the tick's inputs (SPEC.md §15.2).
void ls_soccer_apply_inputs_(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                             uint32_t players, uint32_t input_size);
/// The rules after the step: countdown, goals, kick-off, respawns (SPEC.md §15.2).
void ls_soccer_after_step_(ls_world *w, const ls_scene *scene);

#endif
