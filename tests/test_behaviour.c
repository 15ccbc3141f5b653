// SPDX-License-Identifier: MIT
// Physical behaviour of the shipped scenes, with the tolerance of every
// assertion stated next to it: stacks stand, friction holds or slides at the
// right rate, momentum is conserved, steps do not allocate, overflow is
// reported, and the reference push game moves its players.
#include "alloc_count.h"
#include "ls/game.h"
#include "ls/scene.h"

#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double to_m(ls_fx v)
{
    return (double)v / 65536.0;
}

static ls_world *open_scene(const char *path, ls_scene *s)
{
    ls_error err;
    cr_assert_eq(ls_scene_load(path, s, &err), LS_OK, "%s:%u:%u %s", path, err.line, err.column,
                 err.message);
    ls_error ierr;
    ls_world *w = ls_scene_instantiate(s, &ierr);
    cr_assert_not_null(w, "%s", ierr.message);
    return w;
}

static ls_world *world_from_text(const char *text, ls_scene *s)
{
    ls_error err;
    cr_assert_eq(ls_scene_parse(text, strlen(text), s, &err), LS_OK, "%u:%u %s", err.line,
                 err.column, err.message);
    ls_error ierr;
    ls_world *w = ls_scene_instantiate(s, &ierr);
    cr_assert_not_null(w, "%s", ierr.message);
    return w;
}

Test(behaviour, six_box_tower_stands_2000_ticks_with_top_drift_under_1_cm_and_sleeps)
{
    ls_scene s;
    ls_world *w = open_scene("tools/scenes/six_box_tower.scene", &s);
    ls_body_id top = ls_world_body_at(w, 6);
    ls_vec3 start = ls_body_position(w, top);
    for (uint32_t t = 0; t < 2000; t++) {
        ls_world_step(w);
    }
    ls_vec3 end = ls_body_position(w, top);
    double dx = to_m(end.x - start.x), dz = to_m(end.z - start.z), dy = to_m(end.y - start.y);
    double drift = sqrt(dx * dx + dy * dy + dz * dz); // includes the settling sag
    cr_assert_lt(drift, 0.01, "top box moved %.4f m (limit 1 cm)", drift);
    cr_assert_eq(ls_world_info(w).asleep_bodies, 6u, "all six boxes asleep by tick 2000");
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(behaviour, ten_level_pyramid_stands_1000_ticks_with_no_box_moved_over_2_cm)
{
    ls_scene s;
    ls_world *w = open_scene("tools/scenes/pyramid.scene", &s);
    uint32_t n = ls_world_body_count(w);
    ls_vec3 *start = malloc(n * sizeof *start);
    for (uint32_t i = 0; i < n; i++) {
        start[i] = ls_body_position(w, ls_world_body_at(w, i));
    }
    for (uint32_t t = 0; t < 1000; t++) {
        ls_world_step(w);
    }
    double worst = 0;
    uint32_t worst_body = 0;
    for (uint32_t i = 0; i < n; i++) {
        ls_vec3 p = ls_body_position(w, ls_world_body_at(w, i));
        double dx = to_m(p.x - start[i].x), dy = to_m(p.y - start[i].y);
        double dz = to_m(p.z - start[i].z);
        double d = sqrt(dx * dx + dy * dy + dz * dz);
        if (d > worst) {
            worst = d, worst_body = i + 1;
        }
    }
    cr_assert_lt(worst, 0.02, "body %u moved %.4f m (limit 2 cm)", worst_body, worst);
    cr_assert_eq(ls_world_info(w).overflow_count, 0u);
    free(start);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

// Distance between two points (or speed difference of two velocities), m.
static double slide(ls_vec3 a, ls_vec3 b)
{
    double dx = to_m(b.x - a.x), dy = to_m(b.y - a.y), dz = to_m(b.z - a.z);
    return sqrt(dx * dx + dy * dy + dz * dz);
}

Test(behaviour, block_on_30_degree_slope_holds_when_mu_exceeds_tan_and_slides_at_g_sin_minus_mu_cos)
{
    // slope.scene: body 3 has mu = sqrt(1 * 0.49) = 0.7 > tan 30 = 0.577, body 4
    // has mu = sqrt(1 * 0.09) = 0.3 and must accelerate at g (sin 30 - 0.3 cos 30).
    ls_scene s;
    ls_world *w = open_scene("tools/scenes/slope.scene", &s);
    ls_body_id hold = ls_world_body_at(w, 2), slider = ls_world_body_at(w, 3);
    for (int t = 0; t < 60; t++) { // 1 s to settle onto the ramp
        ls_world_step(w);
    }
    ls_vec3 hold0 = ls_body_position(w, hold), v0 = ls_body_linear_velocity(w, slider);
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
    }
    ls_vec3 v1 = ls_body_linear_velocity(w, slider);
    for (int t = 0; t < 540; t++) { // 10 s of holding in all
        ls_world_step(w);
    }
    double creep = slide(hold0, ls_body_position(w, hold));
    cr_assert_lt(creep, 0.001, "mu 0.7 block crept %.5f m in 10 s (limit 1 mm)", creep);
    // Acceleration from the speed gained over one second.
    double expected = 9.81 * (0.5 - 0.3 * sqrt(3.0) / 2.0);
    double a = slide(ls_vec3_zero(), v1) - slide(ls_vec3_zero(), v0);
    cr_assert(fabs(a - expected) <= 0.1 * expected, "slides at %.4f m/s^2, expected %.4f +- 10 %%",
              a, expected);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

static double momentum_axis(const ls_world *w, int axis)
{
    double total = 0;
    for (uint32_t i = 0; i < ls_world_body_count(w); i++) {
        ls_body_id id = ls_world_body_at(w, i);
        ls_vec3 v = ls_body_linear_velocity(w, id);
        ls_fx c = axis == 0 ? v.x : axis == 1 ? v.y : v.z;
        total += to_m(ls_body_mass(w, id)) * to_m(c);
    }
    return total;
}

Test(behaviour, linear_momentum_is_conserved_in_free_collisions)
{
    // No gravity, no statics: a heavy sphere hits a light one off-centre and a
    // spinning box hits a capsule. Bound per axis: 0.1 % of the initial |P| plus
    // 1e-3 kg m/s, which covers Q16.16 rounding of each applied impulse (one
    // ulp of velocity is 1.5e-5 m/s, times ~100 impulses, times masses <= 50 kg).
    ls_scene s;
    ls_world *w = world_from_text("world gravity 0 0 0\n"
                                  "body dynamic sphere radius 0.5 pos -3 0 0 vel 4 0 0 density 80\n"
                                  "body dynamic sphere radius 0.3 pos 0 0.35 0 density 20\n"
                                  "body dynamic box half 0.4 0.3 0.2 pos 0 0 -3 vel 0 0 3 "
                                  "angvel 1 2 0 density 50\n"
                                  "body dynamic capsule radius 0.2 half_height 0.5 pos 0.1 0 0 "
                                  "density 30\n",
                                  &s);
    double p0[3] = {momentum_axis(w, 0), momentum_axis(w, 1), momentum_axis(w, 2)};
    double p0_len = sqrt(p0[0] * p0[0] + p0[1] * p0[1] + p0[2] * p0[2]);
    uint32_t touching = 0;
    for (int t = 0; t < 180; t++) {
        ls_world_step(w);
        touching += ls_world_info(w).contacts;
    }
    cr_assert_gt(touching, 0u, "the bodies must actually collide");
    for (int k = 0; k < 3; k++) {
        double p1 = momentum_axis(w, k);
        double bound = 0.001 * p0_len + 1e-3;
        cr_assert_leq(fabs(p1 - p0[k]), bound, "axis %d: P %.5f -> %.5f (bound %.5f)", k, p0[k], p1,
                      bound);
    }
    ls_world_destroy(w);
    ls_scene_free(&s);
}

// Kinetic energy (translation only: frictionless spheres never spin), joules.
static double kinetic_energy(const ls_world *w)
{
    double e = 0;
    for (uint32_t i = 0; i < ls_world_body_count(w); i++) {
        ls_body_id id = ls_world_body_at(w, i);
        ls_vec3 v = ls_body_linear_velocity(w, id);
        double vx = to_m(v.x), vy = to_m(v.y), vz = to_m(v.z);
        e += 0.5 * to_m(ls_body_mass(w, id)) * (vx * vx + vy * vy + vz * vz);
    }
    return e;
}

// A "gas" of 20 frictionless spheres with restitution 1 in a closed box, no gravity,
// for 10 s: each bounce should keep its energy. Glancing contacts close slower than the
// restitution threshold (default 1 m/s) and do not bounce, so the gas cools; the world
// statement's `restitution_threshold` (SPEC.md §14) lets such a scene keep its energy.
static double gas_energy_kept(const char *threshold, int seed)
{
    char text[4096];
    int n = snprintf(text, sizeof text, "world gravity 0 0 0 ticks 600%s%s\n", threshold ? " " : "",
                     threshold ? threshold : "");
    static const char *const walls[] = {"1 0 0", "-1 0 0", "0 1 0", "0 -1 0", "0 0 1", "0 0 -1"};
    for (int k = 0; k < 6; k++) {
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "body static plane normal %s d -2 friction 0 restitution 1\n", walls[k]);
    }
    for (int i = 0; i < 20; i++) {
        int x = i % 3, y = (i / 3) % 3, z = i / 9;
        n +=
            snprintf(text + n, sizeof text - (size_t)n,
                     "body dynamic sphere radius 0.2 pos %d %d %d vel %d.%d %d.%d %d.%d friction 0 "
                     "restitution 1 no_sleep\n",
                     x - 1, y - 1, z - 1, (i * 7 + seed) % 5 - 2, (i * 3 + seed) % 10,
                     (i * 5 + 2 * seed) % 5 - 2, (i * 9 + seed) % 10, (i * 3 + 3 * seed) % 5 - 2,
                     (i * 11 + seed) % 10);
    }
    ls_scene s;
    ls_world *w = world_from_text(text, &s);
    double e0 = kinetic_energy(w);
    cr_assert_gt(e0, 1.0);
    for (int t = 0; t < 600; t++) {
        ls_world_step(w);
    }
    double kept = kinetic_energy(w) / e0;
    ls_world_destroy(w);
    ls_scene_free(&s);
    return kept;
}

Test(behaviour, a_gas_with_restitution_1_keeps_its_energy_with_a_small_threshold)
{
    // Eight gases (different starting velocities): which contacts come glancing is
    // chaotic, so one gas is a poor measure. Measured (2026-11-29, with the impact
    // pass, contact_solver.c): kept 0.995..1.000 with 0.05 m/s (mean 0.9994), 0.84..0.96
    // with the default (mean 0.920). Before the impact pass a sphere hit while it
    // touched another body or a wall shared the hit inelastically: 0.92..1.00 (mean
    // 0.963) and 0.54..0.88 (mean 0.730).
    double cooled = 0, kept = 0, worst = 1;
    for (int seed = 0; seed < 8; seed++) {
        double c = gas_energy_kept(NULL, seed),
               k = gas_energy_kept("restitution_threshold 0.05", seed);
        cr_log_info("gas %d of 20 spheres, restitution 1, 10 s: energy kept %.4f with the default "
                    "threshold (1 m/s), %.4f with 0.05 m/s",
                    seed, c, k);
        cooled += c / 8;
        kept += k / 8;
        worst = fmin(worst, k);
    }
    cr_assert_lt(cooled, 0.95, "the default threshold cools the gases (mean %.4f)", cooled);
    cr_assert_geq(kept, 0.99, "a small threshold keeps the energy (mean %.4f)", kept);
    cr_assert_geq(worst, 0.98, "a small threshold keeps every gas's energy (worst %.4f)", worst);
}

Test(scene, restitution_threshold_round_trips_and_is_checked)
{
    ls_scene s;
    const char *text = "world gravity 0 0 0 restitution_threshold 0.05\n"
                       "body dynamic sphere radius 1\n";
    cr_assert_eq(ls_scene_parse(text, strlen(text), &s, NULL), LS_OK);
    cr_assert_eq(s.world.restitution_threshold, LS_FX_INT(1) / 20 + 1, "0.05 rounds to nearest");
    char out[4096];
    ls_scene_write(&s, out, sizeof out);
    cr_assert_not_null(strstr(out, " restitution_threshold 0.05"), "%s", out);
    ls_scene_free(&s);
    text = "world\nbody dynamic sphere radius 1\n";
    cr_assert_eq(ls_scene_parse(text, strlen(text), &s, NULL), LS_OK);
    ls_scene_write(&s, out, sizeof out);
    cr_assert_null(strstr(out, "restitution_threshold"), "the default is not written: %s", out);
    ls_scene_free(&s);
    ls_error err;
    text = "world restitution_threshold -1\n";
    cr_assert_neq(ls_scene_parse(text, strlen(text), &s, &err), LS_OK);
    cr_assert_not_null(strstr(err.message, "restitution_threshold"), "%s", err.message);
    cr_assert_eq(err.line, 1u);
}

Test(behaviour, steps_after_warm_up_allocate_nothing)
{
    ls_scene s;
    alloc_count_reset();
    ls_world *w = open_scene("tools/scenes/pile_1000.scene", &s);
    cr_assert_gt(alloc_count_get(), 0u, "the counter sees the library's allocations");
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
    }
    alloc_count_reset();
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
        (void)ls_world_checksum(w);
        (void)ls_world_contact_events(w);
    }
    cr_assert_eq(alloc_count_get(), 0u, "%llu heap allocations inside 120 steps",
                 (unsigned long long)alloc_count_get());
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(behaviour, leaving_the_position_range_is_reported_with_body_and_tick)
{
    // From y = -2000 m at -120 m/s the body crosses -2048 m during tick 24
    // (2000 + 120 t / 60 + g-term > 2048 first at t = 24).
    ls_scene s;
    ls_world *w = world_from_text("world gravity 0 -9.81 0\n"
                                  "body dynamic sphere radius 0.5 pos 5 5 5\n"
                                  "body dynamic sphere radius 0.5 pos 0 -2000 0 vel 0 -120 0\n",
                                  &s);
    for (int t = 0; t < 40; t++) {
        ls_world_step(w);
    }
    ls_step_info info = ls_world_info(w);
    cr_assert_geq(info.overflow_count, 1u);
    cr_assert_eq(info.overflow_body.index1, 2u, "the second body overflowed");
    cr_assert(info.overflow_tick >= 23 && info.overflow_tick <= 25, "tick %u, expected 24",
              info.overflow_tick);
    cr_assert_geq(ls_body_position(w, ls_world_body_at(w, 1)).y, -2048 * 65536, "clamped");
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(behaviour, push_game_moves_each_player_along_its_input_and_idle_players_stay)
{
    ls_scene s;
    ls_world *w = open_scene("tools/scenes/arena.scene", &s);
    cr_assert_eq(s.player_count, 4u);
    ls_vec3 start[4];
    for (uint32_t p = 0; p < 4; p++) {
        start[p] = ls_body_position(w, ls_world_body_at(w, s.player_body[p]));
    }
    const uint8_t inputs[4] = {LS_INPUT_PUSH_XP, LS_INPUT_PUSH_ZN, 0,
                               LS_INPUT_PUSH_XN | LS_INPUT_PUSH_ZP};
    for (int t = 0; t < 60; t++) {
        cr_assert_eq(ls_game_apply_inputs(w, &s, inputs, 4, 1), LS_OK);
        ls_world_step(w);
    }
    ls_vec3 d[4];
    for (uint32_t p = 0; p < 4; p++) {
        ls_vec3 e = ls_body_position(w, ls_world_body_at(w, s.player_body[p]));
        d[p] = ls_vec3_sub(e, start[p]);
    }
    // 20 N on 2 kg against 0.4 * 2 * g of friction: a = 6.1 m/s^2, ~3 m in 1 s;
    // assert the direction and at least 1 m, the idle player within 1 mm.
    cr_assert_gt(to_m(d[0].x), 1.0);
    cr_assert_lt(fabs(to_m(d[0].z)), 0.01);
    cr_assert_lt(to_m(d[1].z), -1.0);
    cr_assert_lt(fabs(to_m(d[2].x)) + fabs(to_m(d[2].z)), 0.001);
    cr_assert(to_m(d[3].x) < -0.5 && to_m(d[3].z) > 0.5);
    cr_assert_eq(ls_game_apply_inputs(w, &s, inputs, 4, 0), LS_ERR_INVALID_ARGUMENT);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(behaviour, scripted_inputs_are_seeded_and_mostly_held)
{
    ls_input_script a, b, c;
    ls_input_script_init(&a, 42, 4);
    ls_input_script_init(&b, 42, 4);
    ls_input_script_init(&c, 43, 4);
    uint8_t ia[8], ib[8], ic[8], prev[8] = {0};
    uint32_t changes = 0, differs = 0, nonzero = 0;
    for (int t = 0; t < 3600; t++) {
        ls_input_script_next(&a, ia, 2);
        ls_input_script_next(&b, ib, 2);
        ls_input_script_next(&c, ic, 2);
        cr_assert_arr_eq(ia, ib, 8, "same seed, same stream");
        differs += memcmp(ia, ic, 8) != 0;
        for (int p = 0; p < 4; p++) {
            cr_assert_eq(ia[2 * p + 1], 0, "padding bytes are zero");
            changes += ia[2 * p] != prev[2 * p];
            nonzero += ia[2 * p] != 0;
        }
        memcpy(prev, ia, 8);
    }
    // A change is drawn with probability 1/32 and picks the held value again 1/5
    // of the time: expect 3600 * 4 / 32 * 4/5 = 360 changes; allow 250..470.
    cr_assert(changes >= 250 && changes <= 470, "%u changes", changes);
    cr_assert_gt(nonzero, 3600u * 4u / 2u, "players mostly push");
    cr_assert_gt(differs, 1000u, "another seed gives another stream");
}

Test(scene, players_are_numbered_without_gaps_and_round_trip)
{
    ls_scene s;
    ls_error err;
    const char *dup = "body dynamic sphere player 0\nbody dynamic sphere player 0\n";
    cr_assert_eq(ls_scene_parse(dup, strlen(dup), &s, &err), LS_ERR_PARSE);
    cr_assert_eq(err.line, 2u);
    cr_assert(strstr(err.message, "player") != NULL, "%s", err.message);
    const char *gap = "body dynamic sphere player 1\n";
    cr_assert_eq(ls_scene_parse(gap, strlen(gap), &s, &err), LS_ERR_PARSE);
    cr_assert(strstr(err.message, "0 has no body") != NULL, "%s", err.message);
    const char *big = "body dynamic sphere player 16\n";
    cr_assert_eq(ls_scene_parse(big, strlen(big), &s, &err), LS_ERR_PARSE);
    const char *ok = "body dynamic sphere player 1\nbody static plane\nbody dynamic box player 0\n";
    cr_assert_eq(ls_scene_parse(ok, strlen(ok), &s, &err), LS_OK, "%s", err.message);
    cr_assert_eq(s.player_count, 2u);
    cr_assert_eq(s.player_body[0], 2u);
    cr_assert_eq(s.player_body[1], 0u);
    char text[2048];
    ls_scene_write(&s, text, sizeof text);
    ls_scene back;
    cr_assert_eq(ls_scene_parse(text, strlen(text), &back, &err), LS_OK, "%s", err.message);
    cr_assert_eq(back.player_count, 2u);
    cr_assert_eq(back.player_body[0], 2u);
    cr_assert_eq(back.player_body[1], 0u);
    ls_scene_free(&s);
    ls_scene_free(&back);
}

Test(behaviour, a_sleeping_stack_wakes_when_its_support_is_destroyed)
{
    ls_scene s;
    ls_world *w = world_from_text("body static plane normal 0 1 0 d 0\n"
                                  "body dynamic box half 0.5 0.5 0.5 pos 0 0.5 0\n"
                                  "body dynamic box half 0.5 0.5 0.5 pos 0 1.5 0\n",
                                  &s);
    ls_body_id bottom = ls_world_body_at(w, 1), top = ls_world_body_at(w, 2);
    for (int t = 0; t < 300; t++) {
        ls_world_step(w);
    }
    cr_assert(ls_body_is_asleep(w, top), "the stack sleeps within 5 s");
    ls_fx y0 = ls_body_position(w, top).y;
    ls_body_destroy(w, bottom);
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    cr_assert(!ls_body_is_asleep(w, top), "losing its support wakes the top box");
    // Falling 0.5 s from rest: 1.2 m, so it must have dropped to the ground (0.5 m).
    cr_assert_lt(to_m(ls_body_position(w, top).y), to_m(y0) - 0.5);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

typedef struct threaded_run {
    const char *path;
    uint64_t checksums[600];
} threaded_run;

static void *run_scene(void *arg)
{
    threaded_run *r = arg;
    ls_scene s;
    ls_error err;
    if (ls_scene_load(r->path, &s, &err) != LS_OK) {
        return NULL;
    }
    ls_world *w = ls_scene_instantiate(&s, NULL);
    for (int t = 0; w && t < 600; t++) {
        ls_world_step(w);
        r->checksums[t] = ls_world_checksum(w);
    }
    ls_world_destroy(w);
    ls_scene_free(&s);
    return NULL;
}

Test(behaviour, two_worlds_stepping_on_two_threads_match_a_single_threaded_run)
{
    static threaded_run a = {"tools/scenes/tower_struck.scene", {0}};
    static threaded_run b = {"tools/scenes/tower_struck.scene", {0}};
    static threaded_run solo = {"tools/scenes/tower_struck.scene", {0}};
    pthread_t ta, tb;
    cr_assert_eq(pthread_create(&ta, NULL, run_scene, &a), 0);
    cr_assert_eq(pthread_create(&tb, NULL, run_scene, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    run_scene(&solo);
    for (int t = 0; t < 600; t++) {
        cr_assert_eq(a.checksums[t], solo.checksums[t], "thread A differs at tick %d", t + 1);
        cr_assert_eq(b.checksums[t], solo.checksums[t], "thread B differs at tick %d", t + 1);
    }
    cr_assert_neq(solo.checksums[599], 0u);
}

Test(behaviour, a_rolling_ball_slows_by_rolling_resistance_and_sleeps)
{
    // r = 0.25 m at 2 m/s on the ground. Rolling resistance (lever 2 mm) gives a
    // deceleration of about g * 0.002 / 0.25 * 5/7 = 0.056 m/s^2: ~36 s to stop.
    // Without it the ball would roll forever (pure rolling needs no friction).
    ls_scene s;
    ls_world *w = world_from_text("body static plane normal 0 1 0 d 0\n"
                                  "body dynamic sphere radius 0.25 pos 0 0.25 0 vel 2 0 0 "
                                  "angvel 0 0 -8\n",
                                  &s);
    ls_body_id ball = ls_world_body_at(w, 1);
    for (int t = 0; t < 600; t++) {
        ls_world_step(w);
    }
    double v10 = to_m(ls_body_linear_velocity(w, ball).x);
    double expected = 2.0 - 10 * 9.81 * 0.002 / 0.25 * 5.0 / 7.0;
    cr_assert(fabs(v10 - expected) < 0.15, "after 10 s: %.3f m/s, expected %.3f +- 0.15", v10,
              expected);
    for (int t = 0; t < 3600 && !ls_body_is_asleep(w, ball); t++) {
        ls_world_step(w);
    }
    cr_assert(ls_body_is_asleep(w, ball), "the ball stops and sleeps within 70 s");
    ls_world_destroy(w);
    ls_scene_free(&s);
}

// A capsule lying on the ground (along z, radius 0.15 m, segment 1 m), set
// spinning: it must settle and sleep. A round shape's contact point is
// carried by its core point, which turns with the body: before, the
// separation ignored the turn, so a seesawing capsule's ends sank and rose
// unseen within a tick and the push-out fed the rocking (0.2 m/s for ever).
// `extra`: more shapes of the body (a compound: the capsule off the centre of
// mass, or resting on two offset spheres); `rest`: the centre's height at
// rest. Measured: every case sleeps within 37-108 ticks (the roll about
// the axis last); before, all but the spin about the vertical were still
// rocking after 400.
static void capsule_settles(const char *angvel, const char *extra, double rest)
{
    char text[1024];
    snprintf(text, sizeof text,
             "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1\n"
             "body static plane normal 0 1 0 d 0 friction 0.6\n"
             "body dynamic capsule radius 0.15 half_height 0.5 pos 0 %.2f 0 "
             "quat 0.7071068 0 0 0.7071068 angvel %s density 400 friction 0.5\n%s",
             rest + 0.05, angvel, extra);
    ls_scene s;
    ls_world *w = world_from_text(text, &s);
    ls_body_id cap = ls_world_body_at(w, 1);
    int t = 0;
    for (; t < 360 && !ls_body_is_asleep(w, cap); t++) {
        ls_world_step(w);
    }
    cr_assert(ls_body_is_asleep(w, cap), "angvel %s%s: still awake after 6 s (v %.3f m/s)", angvel,
              extra, to_m(ls_body_linear_velocity(w, cap).y));
    double y = to_m(ls_body_position(w, cap).y);
    cr_assert(fabs(y - rest) < 0.005, "angvel %s%s: rests at %.4f m, expected %.3f +- 0.005",
              angvel, extra, y, rest);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(behaviour, a_capsule_lying_on_the_ground_set_spinning_comes_to_rest_and_sleeps)
{
    capsule_settles("0.5 0 0.3", "", 0.15); // end over end and about the vertical
    capsule_settles("1 0 0", "", 0.15);     // end over end
    capsule_settles("2 0 0", "", 0.15);
    capsule_settles("0 0 2", "", 0.15); // rolling about its own axis
    capsule_settles("0 2 0", "", 0.15); // about the vertical
    // A heavy sphere inside one end: the capsule's segment is off the centre
    // of mass.
    capsule_settles("1 0 0.5", "shape sphere radius 0.1 at 0 0.35 0 density 3000\n", 0.15);
    // Two larger spheres at the ends carry it: offset spheres, whose centres
    // turn with the body.
    capsule_settles("1 0 0.5",
                    "shape sphere radius 0.2 at 0 0.5 0 density 400 friction 0.5\n"
                    "shape sphere radius 0.2 at 0 -0.5 0 density 400 friction 0.5\n",
                    0.2);
}
