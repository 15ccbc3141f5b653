// SPDX-License-Identifier: MIT
// The reference games' loop (SPEC.md §15, §16.7): dispatch on the scene's
// `game` through one table of rules (rules.h): the push game (push.c), car
// soccer (soccer.c). The build fingerprint is the world's (world/fingerprint.c).
#include "ls/game.h"

#include "rules.h"

#include <string.h>

// The games by ls_scene_game: one entry each.
static const ls_game_rules games[] = {
    [LS_SCENE_GAME_PUSH] = {ls_push_apply_inputs_, NULL, false},
    [LS_SCENE_GAME_SOCCER] = {ls_soccer_apply_inputs_, ls_soccer_after_step_, true},
};

static const ls_game_rules *rules_of(const ls_scene *scene)
{
    uint32_t g = (uint32_t)scene->game;
    return g < sizeof games / sizeof games[0] ? &games[g] : &games[LS_SCENE_GAME_PUSH];
}

ls_result ls_game_apply_inputs(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                               uint32_t players, uint32_t input_size)
{
    if (input_size == 0) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    rules_of(scene)->apply_inputs(w, scene, inputs, players, input_size);
    return LS_OK;
}

uint64_t ls_game_tick(ls_world *w, const ls_scene *scene, const uint8_t *inputs, uint32_t players,
                      uint32_t input_size)
{
    // The one game loop every tool, test and example shares (SPEC.md §16.7):
    // inputs of tick t, then the step, then the checksum of the state after t.
    const ls_game_rules *g = rules_of(scene);
    if (g->every_tick) {
        g->apply_inputs(w, scene, players > 0 ? inputs : NULL, players,
                        input_size ? input_size : 1);
    } else if (inputs && players > 0) {
        ls_game_apply_inputs(w, scene, inputs, players, input_size);
    }
    ls_world_step(w);
    if (g->after_step) {
        g->after_step(w, scene);
    }
    return ls_world_checksum(w);
}

void ls_input_script_init(ls_input_script *s, uint64_t seed, uint32_t players)
{
    memset(s, 0, sizeof *s);
    s->players = players < 1 ? 1 : players > LS_SCENE_MAX_PLAYERS ? LS_SCENE_MAX_PLAYERS : players;
    for (uint32_t p = 0; p < s->players; p++) {
        s->rng[p] = ls_rng_make(seed, p);
    }
}

void ls_input_script_next(ls_input_script *s, uint8_t *out, uint32_t input_size)
{
    static const uint8_t choices[5] = {0, LS_INPUT_PUSH_XP, LS_INPUT_PUSH_XN, LS_INPUT_PUSH_ZP,
                                       LS_INPUT_PUSH_ZN};
    for (uint32_t p = 0; p < s->players; p++) {
        if (ls_rng_below(&s->rng[p], 32) == 0) {
            s->held[p] = choices[ls_rng_below(&s->rng[p], 5)];
        }
        uint8_t *slot = out + (size_t)p * input_size;
        memset(slot, 0, input_size);
        if (input_size) {
            slot[0] = s->held[p];
        }
    }
}
