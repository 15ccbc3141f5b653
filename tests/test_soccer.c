// SPDX-License-Identifier: MIT
// Car soccer (SPEC.md §15.2, §15.3) on tools/scenes/soccer.scene: input bits
// become vehicle controls, a goal scores for the right team and resets the
// kick-off poses exactly, the countdown ignores inputs, the match state
// survives snapshot/restore, a 4-bot match is deterministic and the bots
// play the ball; the push game still reproduces its recording.
#include "ls/game.h"
#include "ls/replay.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define SCENE   "tools/scenes/soccer.scene"
#define PLAYERS 4

static ls_scene scene;
static ls_world *world;

static void load(void)
{
    ls_error err;
    cr_assert_eq(ls_scene_load(SCENE, &scene, &err), LS_OK, "%s", err.message);
    cr_assert_eq(scene.game, LS_SCENE_GAME_SOCCER);
    cr_assert_eq(scene.player_count, PLAYERS);
    world = ls_scene_instantiate(&scene, &err);
    cr_assert_not_null(world, "%s", err.message);
}

static void unload(void)
{
    ls_world_destroy(world);
    world = NULL;
    ls_scene_free(&scene);
}

static ls_body_id ball_id(const ls_world *w)
{
    return ls_world_body_at(w, scene.soccer.ball_body);
}

static uint64_t tick_all(ls_world *w, uint8_t bits)
{
    uint8_t in[PLAYERS];
    memset(in, bits, sizeof in);
    return ls_game_tick(w, &scene, in, PLAYERS, 1);
}

TestSuite(soccer, .init = load, .fini = unload, .timeout = 600);

Test(soccer, input_bits_become_vehicle_controls)
{
    ls_vehicle_controls c = ls_soccer_controls_of(LS_INPUT_THROTTLE | LS_INPUT_STEER_LEFT);
    cr_expect_eq(c.throttle, LS_FX_ONE);
    cr_expect_eq(c.steer, -LS_FX_ONE);
    cr_expect(!c.handbrake && !c.boost);
    c = ls_soccer_controls_of(LS_INPUT_REVERSE | LS_INPUT_STEER_RIGHT | LS_INPUT_HANDBRAKE |
                              LS_INPUT_BOOST);
    cr_expect_eq(c.throttle, -LS_FX_ONE);
    cr_expect_eq(c.steer, LS_FX_ONE);
    cr_expect(c.handbrake && c.boost);
    c = ls_soccer_controls_of(LS_INPUT_THROTTLE | LS_INPUT_REVERSE | LS_INPUT_STEER_LEFT |
                              LS_INPUT_STEER_RIGHT);
    cr_expect_eq(c.throttle, 0);
    cr_expect_eq(c.steer, 0);
    cr_expect_eq(c.brake, 0);

    // Through the game: each player's own byte reaches its own car.
    const uint8_t in[PLAYERS] = {LS_INPUT_THROTTLE, LS_INPUT_REVERSE, LS_INPUT_STEER_RIGHT,
                                 LS_INPUT_BOOST};
    ls_game_tick(world, &scene, in, PLAYERS, 1);
    for (uint32_t p = 0; p < PLAYERS; p++) {
        ls_vehicle_id v = ls_soccer_player_vehicle(world, &scene, p);
        cr_assert(ls_vehicle_is_valid(world, v), "player %u has no car", p);
        ls_vehicle_controls want = ls_soccer_controls_of(in[p]);
        ls_vehicle_controls got = ls_vehicle_get_controls(world, v);
        cr_expect_eq(got.throttle, want.throttle, "player %u", p);
        cr_expect_eq(got.steer, want.steer, "player %u", p);
        cr_expect_eq(got.boost, want.boost, "player %u", p);
    }
    // Full throttle for a second moves player 0's car forward (+z for team 0).
    ls_body_id car0 = ls_world_body_at(world, scene.player_body[0]);
    ls_fx z0 = ls_body_position(world, car0).z;
    for (int t = 0; t < 60; t++) {
        tick_all(world, LS_INPUT_THROTTLE);
    }
    ls_fx moved = ls_body_position(world, car0).z - z0;
    cr_expect_gt(moved, LS_FX_INT(2), "car 0 moved %.3f m in 1 s of throttle", moved / 65536.0);
}

// Put the ball just short of the goal at `sign` * z, rolling in at 10 m/s.
static void shoot(ls_world *w, int sign)
{
    ls_fx z = ls_fx_sub(scene.soccer.goal_z, LS_FX_ONE);
    ls_body_set_transform(w, ball_id(w), ls_vec3_make(0, LS_FX_ONE * 2, sign * z),
                          ls_quat_identity());
    ls_body_set_velocity(w, ball_id(w), ls_vec3_make(0, 0, sign * LS_FX_INT(10)), ls_vec3_zero());
}

// Tick with no input until a goal (or `limit` ticks); returns the ticks taken.
static int until_goal(ls_world *w, int limit)
{
    int32_t goals = ls_soccer_score(w, 0) + ls_soccer_score(w, 1);
    for (int t = 1; t <= limit; t++) {
        tick_all(w, 0);
        if (ls_soccer_score(w, 0) + ls_soccer_score(w, 1) != goals) {
            return t;
        }
    }
    return -1;
}

static void expect_kickoff_poses(const ls_world *w)
{
    uint32_t idx[PLAYERS + 1];
    for (uint32_t p = 0; p < PLAYERS; p++) {
        idx[p] = scene.player_body[p];
    }
    idx[PLAYERS] = scene.soccer.ball_body;
    for (uint32_t k = 0; k <= PLAYERS; k++) {
        const ls_body_def *d = &scene.bodies[idx[k]];
        ls_body_id id = ls_world_body_at(w, idx[k]);
        cr_expect(ls_vec3_equal(ls_body_position(w, id), d->position), "body %u position", idx[k]);
        cr_expect(ls_quat_equal(ls_body_orientation(w, id), ls_quat_normalize(d->orientation)),
                  "body %u orientation", idx[k]);
        cr_expect(ls_vec3_equal(ls_body_linear_velocity(w, id), ls_vec3_zero()), "body %u v",
                  idx[k]);
        cr_expect(ls_vec3_equal(ls_body_angular_velocity(w, id), ls_vec3_zero()), "body %u w",
                  idx[k]);
    }
}

Test(soccer, a_goal_scores_for_the_attacking_team_and_resets_the_kickoff)
{
    for (int t = 0; t < 30; t++) {
        tick_all(world, LS_INPUT_THROTTLE); // move the cars off their poses
    }
    shoot(world, 1);
    int took = until_goal(world, 60);
    cr_assert(took > 0 && took <= 20, "the ball rolling in at 10 m/s scored after %d ticks", took);
    ls_soccer_state s = ls_soccer_state_get(world);
    cr_expect_eq(s.score[0], 1, "the goal at +z is team 0's");
    cr_expect_eq(s.score[1], 0);
    cr_expect_eq(s.last_goal_team, 0);
    cr_expect_eq(s.last_goal_tick, (int32_t)ls_world_tick(world));
    cr_expect_eq(s.kickoff, scene.soccer.kickoff_ticks);
    expect_kickoff_poses(world);

    // The other goal scores for team 1.
    for (uint32_t t = 0; t < scene.soccer.kickoff_ticks; t++) {
        tick_all(world, 0);
    }
    cr_assert_eq(ls_soccer_state_get(world).kickoff, 0);
    shoot(world, -1);
    took = until_goal(world, 60);
    cr_assert(took > 0, "no goal at -z");
    cr_expect_eq(ls_soccer_score(world, 0), 1);
    cr_expect_eq(ls_soccer_score(world, 1), 1);
    cr_expect_eq(ls_soccer_state_get(world).last_goal_team, 1);
    expect_kickoff_poses(world);

    // A ball beside the goal (outside the mouth) does not score.
    for (uint32_t t = 0; t < scene.soccer.kickoff_ticks; t++) {
        tick_all(world, 0);
    }
    ls_fx wide = ls_fx_add(scene.soccer.goal_half_width, LS_FX_INT(3));
    ls_body_set_transform(
        world, ball_id(world),
        ls_vec3_make(wide, LS_FX_INT(2), ls_fx_sub(scene.soccer.goal_z, LS_FX_INT(3))),
        ls_quat_identity());
    ls_body_set_velocity(world, ball_id(world), ls_vec3_make(0, 0, LS_FX_INT(10)), ls_vec3_zero());
    cr_expect_eq(until_goal(world, 60), -1, "a shot wide of the post scored");
}

Test(soccer, the_countdown_ignores_inputs)
{
    shoot(world, 1);
    cr_assert(until_goal(world, 60) > 0);
    ls_body_id car0 = ls_world_body_at(world, scene.player_body[0]);
    ls_vec3 start = ls_body_position(world, car0);
    uint32_t k = scene.soccer.kickoff_ticks;
    cr_assert_gt(k, 10u);
    for (uint32_t t = 0; t < k; t++) {
        tick_all(world, LS_INPUT_THROTTLE | LS_INPUT_BOOST | LS_INPUT_STEER_LEFT);
        ls_vehicle_controls c =
            ls_vehicle_get_controls(world, ls_soccer_player_vehicle(world, &scene, 0));
        cr_expect_eq(c.throttle, 0, "tick %u of the countdown: throttle", t);
        cr_expect_eq(c.steer, 0);
        cr_expect(!c.boost);
        cr_expect_eq(ls_soccer_state_get(world).kickoff, k - 1 - t);
    }
    ls_vec3 d = ls_vec3_sub(ls_body_position(world, car0), start);
    ls_fx horiz = ls_fx_add(ls_fx_abs(d.x), ls_fx_abs(d.z));
    cr_expect_lt(horiz, LS_FX_ONE / 10, "the car crept %.4f m in the countdown", horiz / 65536.0);
    // Then the inputs count again.
    tick_all(world, LS_INPUT_THROTTLE);
    cr_expect_eq(
        ls_vehicle_get_controls(world, ls_soccer_player_vehicle(world, &scene, 0)).throttle,
        LS_FX_ONE);
}

// Play `ticks` ticks with one bot per player, writing every tick's checksum.
static void play_bots(ls_world *w, ls_soccer_bot *bots, uint32_t ticks, uint64_t *sums)
{
    for (uint32_t t = 0; t < ticks; t++) {
        uint8_t in[PLAYERS];
        for (uint32_t p = 0; p < PLAYERS; p++) {
            in[p] = ls_soccer_bot_input(&bots[p], w, &scene);
        }
        uint64_t c = ls_game_tick(w, &scene, in, PLAYERS, 1);
        if (sums) {
            sums[t] = c;
        }
    }
}

static void bots_init(ls_soccer_bot *bots, uint64_t seed)
{
    for (uint32_t p = 0; p < PLAYERS; p++) {
        ls_soccer_bot_init(&bots[p], seed, p);
    }
}

Test(soccer, snapshot_and_restore_mid_match_equals_the_uninterrupted_match)
{
    // A goal first, so that the snapshot is taken with scores and a countdown running.
    shoot(world, -1);
    cr_assert(until_goal(world, 60) > 0);
    ls_soccer_bot bots[PLAYERS];
    bots_init(bots, 7);
    play_bots(world, bots, 40, NULL);
    cr_assert_gt(ls_soccer_state_get(world).kickoff, 0u);
    size_t size = ls_world_snapshot_size(world);
    uint8_t *snap = malloc(size);
    cr_assert_eq(ls_world_snapshot_save(world, snap, size), size);
    ls_soccer_bot saved[PLAYERS];
    memcpy(saved, bots, sizeof bots);

    enum { N = 400 };
    uint64_t a[N], b[N];
    play_bots(world, bots, N, a);
    ls_soccer_state end = ls_soccer_state_get(world);

    ls_error err;
    ls_world *w2 = ls_scene_instantiate(&scene, &err);
    cr_assert_not_null(w2);
    cr_assert_eq(ls_world_snapshot_restore(w2, snap, size, &err), LS_OK, "%s", err.message);
    cr_expect_eq(ls_soccer_score(w2, 1), 1, "the score is in the snapshot");
    play_bots(w2, saved, N, b);
    for (int t = 0; t < N; t++) {
        cr_assert_eq(a[t], b[t], "tick %d after the restore differs", t);
    }
    ls_soccer_state end2 = ls_soccer_state_get(w2);
    cr_expect(memcmp(&end, &end2, sizeof end) == 0);
    for (uint32_t i = 0; i < LS_WORLD_GAME_WORDS; i++) {
        cr_expect_eq(ls_world_game_word(world, i), ls_world_game_word(w2, i), "word %u", i);
    }
    ls_world_destroy(w2);
    free(snap);
}

typedef struct match_stats {
    uint64_t stream;  ///< FNV-1a over every tick's checksum.
    double ball_path; ///< Metres the ball travelled (sum of per-tick moves).
    int crossings;    ///< Times the ball's centre crossed z = 0.
    int32_t score[2]; ///< Final score.
    uint32_t touches; ///< Ticks at which a car was within 3.5 m of the ball's centre.
} match_stats;

static match_stats bot_match(uint64_t seed, uint32_t ticks)
{
    match_stats m = {.stream = 1469598103934665603ull};
    ls_error err;
    ls_world *w = ls_scene_instantiate(&scene, &err);
    cr_assert_not_null(w, "%s", err.message);
    ls_soccer_bot bots[PLAYERS];
    bots_init(bots, seed);
    ls_vec3 last = ls_body_position(w, ball_id(w));
    for (uint32_t t = 0; t < ticks; t++) {
        uint64_t c;
        play_bots(w, bots, 1, &c);
        for (int k = 0; k < 8; k++) {
            m.stream = (m.stream ^ ((c >> (8 * k)) & 0xFF)) * 1099511628211ull;
        }
        ls_vec3 now = ls_body_position(w, ball_id(w));
        if (ls_soccer_state_get(w).kickoff == 0 || t == 0) {
            m.ball_path += ls_vec3_distance(now, last) / 65536.0;
            if ((now.z > 0) != (last.z > 0)) {
                m.crossings++;
            }
        }
        for (uint32_t p = 0; p < PLAYERS; p++) {
            ls_vec3 cp = ls_body_position(w, ls_world_body_at(w, scene.player_body[p]));
            if (ls_vec3_distance(cp, now) < LS_FX_INT(7) / 2) {
                m.touches++;
                break;
            }
        }
        last = now;
    }
    m.score[0] = ls_soccer_score(w, 0);
    m.score[1] = ls_soccer_score(w, 1);
    ls_world_destroy(w);
    return m;
}

Test(soccer, a_four_bot_match_is_deterministic_and_the_bots_play_the_ball)
{
    const uint32_t ticks = scene.ticks; // 3600: one minute at 60 Hz
    match_stats a = bot_match(1, ticks);
    match_stats b = bot_match(1, ticks);
    cr_expect_eq(a.stream, b.stream, "two runs of the same match differ");
    cr_expect_eq(a.score[0], b.score[0]);
    cr_expect_eq(a.score[1], b.score[1]);
    cr_log_info("soccer bots, seed 1, %u ticks: score %d-%d, ball path %.1f m, %d midfield "
                "crossings, %u ticks with a car within 3.5 m of the ball",
                ticks, a.score[0], a.score[1], a.ball_path, a.crossings, a.touches);
    // Purposeful play: the ball travels (> 50 m), and it crosses midfield several
    // times or someone scores.
    cr_expect_gt(a.ball_path, 50.0, "the ball only travelled %.1f m", a.ball_path);
    cr_expect_gt(a.touches, 100u, "cars near the ball in only %u ticks", a.touches);
    cr_expect(a.crossings >= 3 || a.score[0] + a.score[1] >= 1,
              "no goal and only %d midfield crossings", a.crossings);
}

Test(soccer, bots_with_other_seeds_play_other_matches)
{
    match_stats a = bot_match(1, 600);
    match_stats b = bot_match(2, 600);
    cr_expect_neq(a.stream, b.stream);
}

// The push game is untouched: its recording (crosscheck's arena.lsr, made before
// car soccer existed) re-simulates tick for tick with ls_game_tick.
Test(soccer_push, the_arena_recording_still_verifies)
{
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open("tools/crosscheck/arena.lsr", &err);
    cr_assert_not_null(r, "%s", err.message);
    cr_assert_eq(ls_replay_reader_require_fingerprint(r, ls_game_fingerprint(), &err), LS_OK, "%s",
                 err.message);
    const ls_replay_header *h = ls_replay_reader_header(r);
    ls_scene s;
    cr_assert_eq(ls_scene_parse((const char *)h->scene, h->scene_size, &s, &err), LS_OK);
    cr_assert_eq(s.game, LS_SCENE_GAME_PUSH);
    ls_world *w = ls_scene_instantiate(&s, &err);
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    cr_assert(w && c);
    uint32_t ticks = ls_replay_reader_ticks(r);
    cr_assert_gt(ticks, 0u);
    for (uint32_t t = 0; t < ticks; t++) {
        const uint8_t *inputs = NULL;
        uint64_t recorded = 0;
        cr_assert_eq(ls_replay_cursor_read(c, t, &inputs, &recorded), LS_OK);
        uint64_t computed = ls_game_tick(w, &s, inputs, h->players, h->input_size);
        cr_assert_eq(computed, recorded, "tick %u: recorded %016llx computed %016llx", t,
                     (unsigned long long)recorded, (unsigned long long)computed);
    }
    ls_replay_cursor_destroy(c);
    ls_world_destroy(w);
    ls_scene_free(&s);
    ls_replay_reader_destroy(r);
}
