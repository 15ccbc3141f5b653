// SPDX-License-Identifier: MIT
// The soccer bot (SPEC.md §15.3): from the world as it is, drive to a point
// behind the ball on the line from the opponents' goal through the ball, then
// through the ball. Integer and Q16.16 arithmetic only, so a bot's inputs are
// the same on every machine for the same world; the seeded jitter makes bots
// with different seeds or players play differently.
#include "ls/game.h"

static ls_fx bot_range(ls_rng *r, int32_t lo_cm, int32_t hi_cm)
{
    return ls_rng_range(r, ls_fx_from_ratio(lo_cm, 100), ls_fx_from_ratio(hi_cm, 100));
}

static void redraw(ls_soccer_bot *bot)
{
    bot->aim_offset = bot_range(&bot->rng, -80, 80);
    bot->approach = bot_range(&bot->rng, 200, 450);
}

void ls_soccer_bot_init(ls_soccer_bot *bot, uint64_t seed, uint32_t player)
{
    *bot = (ls_soccer_bot){0};
    // Stream 0x50cce7 + player: apart from the input script's streams (= player).
    bot->rng = ls_rng_make(seed, 0x50cce7u + player);
    bot->player = player;
    redraw(bot);
}

// The horizontal (x, z) part of v.
static ls_vec3 flat(ls_vec3 v)
{
    return ls_vec3_make(v.x, 0, v.z);
}

// Steering towards `to` (horizontal, from the car) for heading f: the y component
// of f x to, in Q32.32, positive when the target is on the car's left (+x of a
// car facing +z: the chassis frame is right-handed with y up, so its right is -x).
static int64_t cross_y(ls_vec3 f, ls_vec3 to)
{
    return (int64_t)f.z * to.x - (int64_t)f.x * to.z;
}

static int64_t dot_xz(ls_vec3 a, ls_vec3 b)
{
    return (int64_t)a.x * b.x + (int64_t)a.z * b.z;
}

uint8_t ls_soccer_bot_input(ls_soccer_bot *bot, const ls_world *w, const ls_scene *scene)
{
    const ls_scene_soccer *s = &scene->soccer;
    ls_vehicle_id car = ls_soccer_player_vehicle(w, scene, bot->player);
    ls_body_id ball_id = ls_world_body_at(w, s->ball_body);
    if (car.index1 == 0 || ball_id.index1 == 0) {
        return 0;
    }
    if (ls_world_game_word(w, LS_SOCCER_WORD_KICKOFF) > 0) {
        // Inputs are ignored in the countdown: forget being stuck, pick a new line.
        bot->stuck = 0;
        bot->reversing = 0;
        if (ls_rng_below(&bot->rng, 16) == 0) {
            redraw(bot);
        }
        bot->last = LS_INPUT_THROTTLE;
        return bot->last;
    }
    ls_body_id chassis = ls_vehicle_chassis(w, car);
    ls_vec3 p = ls_body_position(w, chassis);
    ls_vec3 f =
        flat(ls_quat_rotate(ls_body_orientation(w, chassis), ls_vec3_make(0, 0, LS_FX_ONE)));
    ls_fx speed = ls_vehicle_forward_speed(w, car);

    // Where the ball will be in a quarter of a second.
    ls_vec3 ball = ls_vec3_mad(ls_body_position(w, ball_id), ls_body_linear_velocity(w, ball_id),
                               LS_FX_ONE / 4);
    ball = flat(ball);
    ls_fx goal = ls_soccer_team(bot->player) == 0 ? s->goal_z : ls_fx_neg(s->goal_z);
    // d: unit direction from the opponents' goal through the ball; behind the ball is +d.
    ls_vec3 d = ls_vec3_normalize(ls_vec3_sub(ball, ls_vec3_make(0, 0, goal)),
                                  ls_vec3_make(0, 0, goal > 0 ? -LS_FX_ONE : LS_FX_ONE));
    ls_vec3 side = ls_vec3_make(ls_fx_neg(d.z), 0, d.x); // d turned 90 degrees about y
    ls_vec3 rel = ls_vec3_sub(flat(p), ball);            // ball to car
    ls_fx along = ls_vec3_dot(rel, d);                   // > 0: car behind the ball
    ls_fx across = ls_vec3_dot(rel, side);

    ls_vec3 target;
    if (along > 0 && ls_fx_abs(across) < ls_fx_add(LS_FX_ONE * 2, along / 2)) {
        // Lined up behind the ball: drive through it towards the goal.
        target = ls_vec3_mad(ball, side, bot->aim_offset / 2);
    } else if (along > ls_fx_neg(LS_FX_ONE)) {
        // Beside or behind but off the line: the point behind the ball.
        target = ls_vec3_mad(ls_vec3_mad(ball, d, bot->approach), side, bot->aim_offset);
    } else {
        // Between the ball and the goal it attacks: go round the ball on the side
        // the car is on, never through it towards its own goal.
        ls_fx round = across < 0 ? ls_fx_from_int(-3) : ls_fx_from_int(3);
        target = ls_vec3_mad(ls_vec3_mad(ball, side, round), d, bot->approach);
    }
    // Stay on the pitch: never aim beyond the goal lines.
    ls_fx zmax = ls_fx_sub(s->goal_z, LS_FX_ONE * 2);
    target.z = ls_fx_clamp(target.z, ls_fx_neg(zmax), zmax);

    ls_vec3 to = ls_vec3_sub(target, flat(p));
    ls_fx dist = ls_vec3_len(to);
    int64_t c = cross_y(f, to);
    int64_t ahead = dot_xz(f, to);
    // |sin| of the angle to the target above 0.1 steers.
    int64_t dead = (int64_t)(LS_FX_ONE / 10) * dist;

    uint8_t bits = 0;
    if (bot->reversing > 0) {
        // Backing out: reverse with the wheels turned away from the target.
        bot->reversing--;
        bits = LS_INPUT_REVERSE | (c > 0 ? LS_INPUT_STEER_RIGHT : LS_INPUT_STEER_LEFT);
        bot->last = bits;
        return bits;
    }
    bits = LS_INPUT_THROTTLE;
    if (c > dead) {
        bits |= LS_INPUT_STEER_LEFT;
    } else if (c < -dead) {
        bits |= LS_INPUT_STEER_RIGHT;
    }
    if (ahead < 0 && dist < ls_fx_from_int(6)) {
        // Close and behind: a three-point turn is quicker than a circle.
        bits = LS_INPUT_REVERSE | (c > 0 ? LS_INPUT_STEER_RIGHT : LS_INPUT_STEER_LEFT);
    } else if (ahead < 0 && speed > ls_fx_from_int(8)) {
        bits |= LS_INPUT_HANDBRAKE; // fast and facing away: slide round
    } else if (c <= dead && c >= -dead && ahead > 0 && dist > ls_fx_from_int(8) &&
               ls_rng_below(&bot->rng, 4) != 0) {
        bits |= LS_INPUT_BOOST; // lined up and far: boost (now and then)
    }

    // Stuck: asking to move and crawling (below 1.5 m/s: pinned against a wall,
    // a car or the ball in a shoving match) for 40 ticks starts a reverse of
    // 30..59 ticks, which also gives the next charge a run-up.
    if ((bot->last & (LS_INPUT_THROTTLE | LS_INPUT_REVERSE)) &&
        ls_fx_abs(speed) < LS_FX_ONE + LS_FX_HALF) {
        bot->stuck++;
    } else {
        bot->stuck = 0;
    }
    if (bot->stuck > 40) {
        bot->stuck = 0;
        bot->reversing = 30 + ls_rng_below(&bot->rng, 30);
    }
    if (ls_rng_below(&bot->rng, 180) == 0) {
        redraw(bot);
    }
    bot->last = bits;
    return bits;
}
