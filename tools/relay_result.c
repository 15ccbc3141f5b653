// SPDX-License-Identifier: MIT
// The game's result of a recorded match: re-simulate the recording (see relay_result.h).
#include "relay_result.h"

#include "ls/game.h"
#include "ls/replay.h"
#include "ls/scene.h"
#include "replay_glue.h"

#include <stdio.h>
#include <string.h>

bool relay_result_wanted(int game)
{
    return game == LS_SCENE_GAME_SOCCER;
}

bool relay_result_compute(const char *path, relay_result *out, const atomic_bool *cancel)
{
    memset(out, 0, sizeof *out);
    out->verified = true;
    ls_error err;
    memset(&err, 0, sizeof err);
    replay_glue g;
    bool glued = false, ok = false;
    ls_world *w = NULL;
    ls_replay_cursor *c = NULL;
    ls_replay_reader *r = ls_replay_reader_open(path, &err);
    if (r && (glued = replay_glue_init(&g, ls_replay_reader_header(r), &err))) {
        w = replay_glue_load(&g, NULL, 0, &err);
        c = w ? ls_replay_cursor_create(r) : NULL;
    }
    if (!c) {
        snprintf(out->error, sizeof out->error, "re-simulating %.70s: %.160s", path,
                 err.message[0] ? err.message : "out of memory");
        goto done;
    }
    if (g.scene.game == LS_SCENE_GAME_SOCCER) {
        out->game = "soccer";
        out->score_words[0] = LS_SOCCER_WORD_SCORE0;
        out->score_words[1] = LS_SOCCER_WORD_SCORE1;
        out->score_count = 2;
    } else {
        out->game = "push";
    }
    out->ticks = ls_replay_reader_ticks(r);
    for (uint32_t t = 0; t < out->ticks; t++) {
        const uint8_t *inputs;
        uint64_t recorded;
        if ((t & 255) == 0 && cancel && atomic_load(cancel)) {
            snprintf(out->error, sizeof out->error, "re-simulation cancelled (the relay stopped)");
            goto done;
        }
        ls_result rr = ls_replay_cursor_read(c, t, &inputs, &recorded);
        if (rr != LS_OK) {
            snprintf(out->error, sizeof out->error, "re-simulating %.80s: tick %u: %s", path, t,
                     ls_result_text(rr));
            goto done;
        }
        uint64_t computed = replay_glue_advance(&g, w, inputs);
        if (out->verified && !ls_replay_reader_judge(r, t, computed, NULL)) {
            out->verified = false;
            out->mismatch_tick = t;
        }
    }
    for (uint32_t i = 0; i < LS_WORLD_GAME_WORDS; i++) {
        out->words[i] = ls_world_game_word(w, i);
    }
    ok = true;
done:
    ls_replay_cursor_destroy(c);
    ls_world_destroy(w);
    if (glued) {
        replay_glue_free(&g);
    }
    ls_replay_reader_destroy(r);
    return ok;
}
