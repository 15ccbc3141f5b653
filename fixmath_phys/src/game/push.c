// SPDX-License-Identifier: MIT
// The push game (SPEC.md §15.1): each player's body is pushed by 20 N per
// input bit (the low 4 bits of its first input byte) at its centre.
#include "rules.h"

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

void ls_push_apply_inputs_(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                           uint32_t players, uint32_t input_size)
{
    uint32_t n = players < scene->player_count ? players : scene->player_count;
    for (uint32_t p = 0; p < n; p++) {
        uint8_t bits = inputs[(size_t)p * input_size];
        if (bits & 0x0F) { // no input applies no force, so an idle player never wakes its body
            ls_body_id id = ls_world_body_at(w, scene->player_body[p]);
            ls_body_apply_force(w, id, push_of(bits));
        }
    }
}
