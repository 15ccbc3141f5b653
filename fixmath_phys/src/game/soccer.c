// SPDX-License-Identifier: MIT
// Car soccer rules (SPEC.md §15.2): input bits become vehicle controls; after
// the step a ball past a goal line inside the mouth scores, and the kick-off
// puts everything back. All match state lives in the world's game words, so
// snapshots, rollback, replays and the checksum carry it with the physics.
#include "rules.h"

static bool body_id_equal(ls_body_id a, ls_body_id b)
{
    return a.index1 == b.index1 && a.generation == b.generation;
}

uint32_t ls_soccer_team(uint32_t player)
{
    return player % 2u;
}

int32_t ls_soccer_score(const ls_world *w, uint32_t team)
{
    return team < 2 ? ls_world_game_word(w, LS_SOCCER_WORD_SCORE0 + team) : 0;
}

ls_soccer_state ls_soccer_state_get(const ls_world *w)
{
    ls_soccer_state s;
    s.score[0] = ls_world_game_word(w, LS_SOCCER_WORD_SCORE0);
    s.score[1] = ls_world_game_word(w, LS_SOCCER_WORD_SCORE1);
    int32_t k = ls_world_game_word(w, LS_SOCCER_WORD_KICKOFF);
    s.kickoff = k > 0 ? (uint32_t)k : 0;
    s.last_goal_tick = ls_world_game_word(w, LS_SOCCER_WORD_LAST_GOAL_TICK);
    s.last_goal_team = ls_world_game_word(w, LS_SOCCER_WORD_LAST_GOAL_TEAM) - 1;
    int32_t r = ls_world_game_word(w, LS_SOCCER_WORD_BALL_RESETS);
    s.ball_resets = r > 0 ? (uint32_t)r : 0;
    return s;
}

ls_vehicle_id ls_soccer_player_vehicle(const ls_world *w, const ls_scene *scene, uint32_t player)
{
    ls_vehicle_id none = {0, 0};
    if (player >= scene->player_count) {
        return none;
    }
    ls_body_id chassis = ls_world_body_at(w, scene->player_body[player]);
    // The first vehicle in slot order whose chassis is the player's body (a scene
    // gives each chassis one vehicle; the first wins if not).
    uint32_t n = ls_world_vehicle_count(w);
    for (uint32_t i = 0; i < n; i++) {
        ls_vehicle_id v = ls_world_vehicle_at(w, i);
        if (body_id_equal(ls_vehicle_chassis(w, v), chassis)) {
            return v;
        }
    }
    return none;
}

ls_vehicle_controls ls_soccer_controls_of(uint8_t bits)
{
    ls_vehicle_controls c = {0};
    c.throttle =
        ((bits & LS_INPUT_THROTTLE) ? LS_FX_ONE : 0) - ((bits & LS_INPUT_REVERSE) ? LS_FX_ONE : 0);
    c.steer = ((bits & LS_INPUT_STEER_RIGHT) ? LS_FX_ONE : 0) -
              ((bits & LS_INPUT_STEER_LEFT) ? LS_FX_ONE : 0);
    c.brake = 0;
    c.handbrake = (bits & LS_INPUT_HANDBRAKE) != 0;
    c.boost = (bits & LS_INPUT_BOOST) != 0;
    return c;
}

// The controls of a car that waits: no throttle, full brake and handbrake, so it
// stays on its kick-off pose.
static ls_vehicle_controls held_controls(void)
{
    ls_vehicle_controls c = {0};
    c.brake = LS_FX_ONE;
    c.handbrake = true;
    return c;
}

void ls_soccer_apply_inputs_(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                             uint32_t players, uint32_t input_size)
{
    bool waiting = ls_world_game_word(w, LS_SOCCER_WORD_KICKOFF) > 0;
    for (uint32_t p = 0; p < scene->player_count; p++) {
        ls_vehicle_id v = ls_soccer_player_vehicle(w, scene, p);
        if (v.index1 == 0) {
            continue;
        }
        ls_vehicle_controls c;
        if (waiting) {
            c = held_controls();
        } else {
            // A player without an input this tick (beyond `players`) releases everything,
            // like the all-zero input of a disconnected player.
            uint8_t bits = (inputs && p < players) ? inputs[(size_t)p * input_size] : 0;
            c = ls_soccer_controls_of(bits);
        }
        ls_vehicle_set_controls(w, v, &c);
    }
}

static void place(ls_world *w, uint32_t file_index, ls_vec3 position, ls_quat orientation)
{
    ls_body_id id = ls_world_body_at(w, file_index);
    if (id.index1 == 0) {
        return;
    }
    ls_body_set_transform(w, id, position, orientation);
    ls_body_set_velocity(w, id, ls_vec3_zero(), ls_vec3_zero());
}

static void place_at_start(ls_world *w, const ls_scene *scene, uint32_t file_index)
{
    if (file_index < scene->body_count) {
        const ls_body_def *d = &scene->bodies[file_index];
        // ls_body_set_transform normalises the quaternion exactly as ls_body_create did.
        place(w, file_index, d->position, d->orientation);
    }
}

void ls_soccer_kickoff(ls_world *w, const ls_scene *scene)
{
    place_at_start(w, scene, scene->soccer.ball_body);
    const ls_vehicle_controls held = held_controls();
    for (uint32_t p = 0; p < scene->player_count; p++) {
        place_at_start(w, scene, scene->player_body[p]);
        ls_world_set_game_word(w, LS_SOCCER_WORD_FLIPPED + p, 0);
        ls_vehicle_id v = ls_soccer_player_vehicle(w, scene, p);
        if (v.index1 != 0) {
            ls_vehicle_set_controls(w, v, &held);
        }
    }
    ls_world_set_game_word(w, LS_SOCCER_WORD_KICKOFF, (int32_t)scene->soccer.kickoff_ticks);
}

// Which team the ball's position scores for: 0 past +goal_z, 1 past -goal_z,
// -1 when it is not inside either goal.
static int goal_of(const ls_scene *scene, ls_vec3 ball)
{
    const ls_scene_soccer *s = &scene->soccer;
    if (ls_fx_abs(ball.x) >= s->goal_half_width || ball.y >= s->goal_height) {
        return -1;
    }
    if (ball.z > s->goal_z) {
        return 0;
    }
    if (ball.z < ls_fx_neg(s->goal_z)) {
        return 1;
    }
    return -1;
}

// The yaw-only orientation whose +z axis points along (fx, fz) (not both zero):
// q = (0, sin(a/2), 0, cos(a/2)) with cos a = fz / |f|, sin a = fx / |f|, by the
// half-angle formulas (square roots only, no trigonometry).
static ls_quat yaw_of(ls_fx fx, ls_fx fz)
{
    ls_vec3 f = ls_vec3_normalize(ls_vec3_make(fx, 0, fz), ls_vec3_make(0, 0, LS_FX_ONE));
    ls_fx c = ls_fx_sqrt(ls_fx_max(0, (LS_FX_ONE + f.z) / 2));
    ls_fx s = ls_fx_sqrt(ls_fx_max(0, (LS_FX_ONE - f.z) / 2));
    return ls_quat_make(0, f.x < 0 ? ls_fx_neg(s) : s, 0, c);
}

// A car that has been stranded for LS_SOCCER_FLIP_TICKS (its up axis below 30°
// of level, or fallen out) is put back on its wheels: same x, z and heading,
// at its kick-off height, at rest. Without it a car on its roof ends its match.
static void respawn_stranded(ls_world *w, const ls_scene *scene)
{
    const ls_fx up_min = LS_FX_HALF;
    const ls_fx floor_y = ls_fx_from_int(LS_SOCCER_FLOOR_Y);
    for (uint32_t p = 0;
         p < scene->player_count && p < LS_WORLD_GAME_WORDS - LS_SOCCER_WORD_FLIPPED; p++) {
        uint32_t file_index = scene->player_body[p];
        ls_body_id id = ls_world_body_at(w, file_index);
        if (id.index1 == 0) {
            continue;
        }
        ls_vec3 pos = ls_body_position(w, id);
        ls_quat q = ls_body_orientation(w, id);
        ls_vec3 up = ls_quat_rotate(q, ls_vec3_make(0, LS_FX_ONE, 0));
        uint32_t word = LS_SOCCER_WORD_FLIPPED + p;
        if (pos.y < floor_y) {
            place_at_start(w, scene, file_index);
            ls_world_set_game_word(w, word, 0);
            continue;
        }
        int32_t t = up.y < up_min ? ls_world_game_word(w, word) + 1 : 0;
        if (t >= LS_SOCCER_FLIP_TICKS) {
            ls_vec3 fwd = ls_quat_rotate(q, ls_vec3_make(0, 0, LS_FX_ONE));
            ls_vec3 at = ls_vec3_make(pos.x, scene->bodies[file_index].position.y, pos.z);
            place(w, file_index, at, yaw_of(fwd.x, fwd.z));
            t = 0;
        }
        ls_world_set_game_word(w, word, t);
    }
}

void ls_soccer_after_step_(ls_world *w, const ls_scene *scene)
{
    int32_t countdown = ls_world_game_word(w, LS_SOCCER_WORD_KICKOFF);
    if (countdown > 0) {
        // The countdown runs down before anything else: no goal can be scored in it
        // (the ball waits at the centre spot).
        ls_world_set_game_word(w, LS_SOCCER_WORD_KICKOFF, countdown - 1);
        return;
    }
    ls_body_id ball = ls_world_body_at(w, scene->soccer.ball_body);
    if (ball.index1 != 0) {
        ls_vec3 b = ls_body_position(w, ball);
        int team = goal_of(scene, b);
        if (team >= 0) {
            uint32_t word = LS_SOCCER_WORD_SCORE0 + (uint32_t)team;
            ls_world_set_game_word(w, word, ls_world_game_word(w, word) + 1);
            ls_world_set_game_word(w, LS_SOCCER_WORD_LAST_GOAL_TICK, (int32_t)ls_world_tick(w));
            ls_world_set_game_word(w, LS_SOCCER_WORD_LAST_GOAL_TEAM, team + 1);
            ls_soccer_kickoff(w, scene);
            return;
        }
        if (b.y < ls_fx_from_int(LS_SOCCER_FLOOR_Y)) {
            int32_t r = ls_world_game_word(w, LS_SOCCER_WORD_BALL_RESETS);
            ls_world_set_game_word(w, LS_SOCCER_WORD_BALL_RESETS, r + 1);
            ls_soccer_kickoff(w, scene);
            return;
        }
    }
    respawn_stranded(w, scene);
}
