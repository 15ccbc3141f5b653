// SPDX-License-Identifier: MIT
// The reference games' loop (SPEC.md §15): dispatch on the scene's `game`.
// The push game lives here (input bits become forces at the player's centre);
// car soccer in ../game/.
#include "ls/game.h"

#include "../game/soccer.h"
#include "state.h"

#include <string.h>

static ls_vec3 push_of(uint8_t bits)
{
    const ls_fx f = ls_fx_from_int(LS_GAME_PUSH_NEWTONS);
    ls_fx x = 0, z = 0;
    x = ls_fx_add(x, (bits & LS_INPUT_PUSH_XP) ? f : 0);
    x = ls_fx_sub(x, (bits & LS_INPUT_PUSH_XN) ? f : 0);
    z = ls_fx_add(z, (bits & LS_INPUT_PUSH_ZP) ? f : 0);
    z = ls_fx_sub(z, (bits & LS_INPUT_PUSH_ZN) ? f : 0);
    return ls_vec3_make(x, 0, z);
}

ls_result ls_game_apply_inputs(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                               uint32_t players, uint32_t input_size)
{
    if (input_size == 0) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    if (scene->game == LS_SCENE_GAME_SOCCER) {
        ls_soccer_apply_inputs_(w, scene, inputs, players, input_size);
        return LS_OK;
    }
    uint32_t n = players < scene->player_count ? players : scene->player_count;
    for (uint32_t p = 0; p < n; p++) {
        uint8_t bits = inputs[(size_t)p * input_size];
        if (bits & 0x0F) { // no input applies no force, so an idle player never wakes its body
            ls_body_id id = ls_world_body_at(w, scene->player_body[p]);
            ls_body_apply_force(w, id, push_of(bits));
        }
    }
    return LS_OK;
}

const char *ls_game_fingerprint(void)
{
    // Everything a replay's bits depend on: number format, libfixmath build,
    // checksum definition, snapshot layout (keyframes) and the game rules.
    // `game=` names the push game's rules only: the rules a replay is played
    // with are the recorded scene's `game` statement (SPEC.md §15, §16.8), and
    // the embedded scene is part of the replay, so a soccer recording needs no
    // other string and every push recording (crosscheck's arena.lsr) still verifies.
    // `snapshot=` is made from the version the snapshot code writes, so the two
    // cannot drift apart (tests: replay_game/fingerprint_names_the_snapshot_version).
    return "fx=Q16.16;libfixmath=0~20220222,no-FIXMATH-defines;checksum=xxh3-64,SPEC-8+12;"
           "snapshot=LSSN-" LS_SNAPSHOT_VERSION_TEXT ";physics=solver-v3;game=push-20N-v1";
}

uint64_t ls_game_tick(ls_world *w, const ls_scene *scene, const uint8_t *inputs, uint32_t players,
                      uint32_t input_size)
{
    // The one game loop every tool, test and example shares (SPEC.md §16.7):
    // inputs of tick t, then the step, then the checksum of the state after t.
    if (scene->game == LS_SCENE_GAME_SOCCER) {
        // Soccer sets every car's controls each tick, inputs or not (the controls
        // are state: a car without input must not keep the last tick's throttle).
        ls_soccer_apply_inputs_(w, scene, players > 0 ? inputs : NULL, players,
                                input_size ? input_size : 1);
        ls_world_step(w);
        ls_soccer_after_step_(w, scene);
        return ls_world_checksum(w);
    }
    if (inputs && players > 0) {
        ls_game_apply_inputs(w, scene, inputs, players, input_size);
    }
    ls_world_step(w);
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
