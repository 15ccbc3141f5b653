// SPDX-License-Identifier: MIT
// World behaviour: determinism, snapshots, validation, bouncing, statics,
// scene round trips. Tolerances are stated next to each assertion.
#define _POSIX_C_SOURCE 200809L
#include "ls/scene.h"
#include "ls/vehicle.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FX(i) ((ls_fx)((i)*65536))

static ls_world *load_scene(const char *text)
{
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_parse(text, strlen(text), &s, &err), LS_OK, "%u:%u %s", err.line,
                 err.column, err.message);
    ls_error ierr;
    ls_world *w = ls_scene_instantiate(&s, &ierr);
    cr_assert_not_null(w, "%s", ierr.message);
    ls_scene_free(&s);
    return w;
}

static const char *const BOUNCE = "world gravity 0 -9.81 0 tick_rate 60\n"
                                  "body static plane normal 0 1 0 d 0 restitution 0.7\n"
                                  "body dynamic sphere radius 0.5 pos 0 4.5 0 restitution 0.7\n";

static const char *const STACK =
    "world gravity 0 -9.81 0\n"
    "body static plane normal 0 1 0 d 0\n"
    "body dynamic box half 0.5 0.5 0.5 pos 0 0.5 0 density 100\n"
    "body dynamic box half 0.5 0.5 0.5 pos 0 1.5 0 density 100\n"
    "body dynamic sphere radius 0.4 pos 0 3 0 density 100\n"
    "body dynamic capsule radius 0.2 half_height 0.4 pos 3 1 0 quat 0 0 0.70711 0.70711\n";

Test(world, two_worlds_from_the_same_scene_produce_identical_checksums_every_tick)
{
    ls_world *a = load_scene(STACK), *b = load_scene(STACK);
    for (int t = 0; t < 600; t++) {
        ls_world_step(a);
        ls_world_step(b);
        cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b), "tick %d", t + 1);
    }
    ls_world_destroy(a);
    ls_world_destroy(b);
}

// A game's profile clock that counts its calls: each stage of a step then
// lasts exactly 1 and the step the number of stages.
static uint64_t counting_clock(void *context)
{
    uint64_t *calls = context;
    return ++*calls;
}

// ls_world_profile: every stage of a step is timed by the game's clock (the
// library reads none of its own), the stages add up to the step, a world
// without a clock reports zeros, and the clock never changes the bits.
Test(world, the_profile_times_every_stage_with_the_games_clock_and_changes_no_bits)
{
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_parse(STACK, strlen(STACK), &s, &err), LS_OK, "%s", err.message);
    ls_world *plain = ls_scene_instantiate(&s, &err);
    uint64_t calls = 0;
    s.world.profile_clock = counting_clock;
    s.world.profile_context = &calls;
    ls_world *timed = ls_scene_instantiate(&s, &err);
    cr_assert(plain && timed, "%s", err.message);
    ls_scene_free(&s);
    for (int t = 0; t < 120; t++) {
        uint64_t before = calls;
        ls_world_step(plain);
        ls_world_step(timed);
        cr_assert_eq(ls_world_checksum(plain), ls_world_checksum(timed), "tick %d", t + 1);
        ls_profile p = ls_world_profile(timed), z = ls_world_profile(plain);
        const uint64_t stage[] = {p.proxies,    p.vehicles,  p.pairs,    p.narrow,      p.contacts,
                                  p.wake,       p.prepare,   p.substeps, p.restitution, p.finish,
                                  p.continuous, p.particles, p.sleep};
        const size_t n = sizeof stage / sizeof stage[0];
        for (size_t k = 0; k < n; k++) {
            cr_assert_eq(stage[k], 1, "tick %d: stage %zu timed %llu", t + 1, k,
                         (unsigned long long)stage[k]);
        }
        cr_assert_eq(p.step, n, "tick %d: step %llu", t + 1, (unsigned long long)p.step);
        cr_assert_eq(calls - before, n + 1, "tick %d: %llu clock reads", t + 1,
                     (unsigned long long)(calls - before));
        cr_assert_eq(sizeof z, sizeof(uint64_t) * (n + 1), "a stage the test does not know");
        for (size_t k = 0; k < n + 1; k++) {
            cr_assert_eq(((const uint64_t *)&z)[k], 0, "no clock: field %zu", k);
        }
    }
    ls_world_destroy(plain);
    ls_world_destroy(timed);
}

// A profile clock that calls back into its own world while the step runs, as
// a game's task system or clock might: every call that changes the world is
// refused with LS_ERR_LOCKED and changes nothing (world_internal.h,
// ls_world_locked_; SPEC.md §19.1).
typedef struct reentry {
    ls_world *w;
    ls_body_id body;
    uint32_t calls, refused, accepted;
} reentry;

static uint64_t reentering_clock(void *context)
{
    reentry *r = context;
    if (!r->w) {
        return 0;
    }
    r->calls++;
    ls_error err;
    ls_body_def d = ls_default_body_def();
    d.type = LS_BODY_DYNAMIC;
    d.position = ls_vec3_make(0, FX(9), 0);
    ls_body_id made = ls_body_create(r->w, &d, &err);
    r->refused += made.index1 == 0 && err.code == LS_ERR_LOCKED;
    r->accepted += made.index1 != 0;
    const ls_result codes[] = {
        ls_body_apply_force(r->w, r->body, ls_vec3_make(FX(100), 0, 0)),
        ls_body_set_velocity(r->w, r->body, ls_vec3_make(FX(5), 0, 0), ls_vec3_zero()),
        ls_body_wake(r->w, r->body),
        ls_body_destroy(r->w, r->body),
        ls_world_set_game_word(r->w, 0, 7),
    };
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
        r->refused += codes[k] == LS_ERR_LOCKED;
        r->accepted += codes[k] != LS_ERR_LOCKED;
    }
    return r->calls;
}

Test(world, calls_that_change_the_world_from_inside_its_step_are_refused)
{
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_parse(STACK, strlen(STACK), &s, &err), LS_OK, "%s", err.message);
    ls_world *plain = ls_scene_instantiate(&s, &err);
    reentry r = {0};
    s.world.profile_clock = reentering_clock;
    s.world.profile_context = &r;
    ls_world *w = ls_scene_instantiate(&s, &err);
    cr_assert(plain && w, "%s", err.message);
    ls_scene_free(&s);
    r.w = w;
    r.body = ls_world_body_at(w, 2);
    for (int t = 0; t < 60; t++) {
        ls_world_step(plain);
        ls_world_step(w);
        cr_assert_eq(ls_world_checksum(plain), ls_world_checksum(w), "tick %d", t + 1);
    }
    cr_assert_gt(r.calls, 60u);
    cr_assert_eq(r.accepted, 0u, "a call changed the world during its step");
    cr_assert_eq(r.refused, r.calls * 6);
    cr_assert_eq(ls_world_body_count(w), ls_world_body_count(plain));
    // After the step the same calls work again.
    r.w = NULL;
    cr_assert_eq(ls_body_apply_force(w, r.body, ls_vec3_make(FX(1), 0, 0)), LS_OK);
    cr_assert_str_eq(ls_result_name(LS_ERR_LOCKED), "LS_ERR_LOCKED");
    ls_world_destroy(plain);
    ls_world_destroy(w);
}

// A definition not started from its ls_default_*_def() (memset, an aggregate
// initialiser) is refused, naming the field "cookie"; one from the default
// (or handed back by ls_body_shape) is taken (SPEC.md §19.1).
static void assert_cookie_refused(const ls_error *err, const char *name)
{
    cr_assert_eq(err->code, LS_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(err->field, "cookie");
    cr_assert_not_null(strstr(err->message, name), "%s", err->message);
}

Test(world, definitions_not_made_by_their_default_are_refused_by_cookie)
{
    ls_error err;
    ls_world_def wd;
    memset(&wd, 0, sizeof wd);
    wd = ls_default_world_def();
    wd.cookie = 0;
    cr_assert_null(ls_world_create(&wd, &err));
    assert_cookie_refused(&err, "ls_default_world_def()");
    ls_world_def good = ls_default_world_def();
    ls_world *w = ls_world_create(&good, &err);
    cr_assert_not_null(w, "%s", err.message);

    ls_body_def bd = {.type = LS_BODY_DYNAMIC, .orientation = {0, 0, 0, LS_FX_ONE}};
    cr_assert_eq(ls_body_create(w, &bd, &err).index1, 0u);
    assert_cookie_refused(&err, "ls_default_body_def()");
    bd = ls_default_body_def();
    bd.shape = (ls_shape_def){.type = LS_SHAPE_SPHERE, .radius = LS_FX_ONE / 2};
    cr_assert_eq(ls_body_create(w, &bd, &err).index1, 0u);
    assert_cookie_refused(&err, "ls_default_shape_def()");
    ls_shape_def parts[2] = {ls_default_shape_def(), {.type = LS_SHAPE_BOX}};
    bd.shape = ls_default_shape_def();
    bd.shapes = parts;
    bd.shape_count = 2;
    cr_assert_eq(ls_body_create(w, &bd, &err).index1, 0u);
    assert_cookie_refused(&err, "ls_default_shape_def()");
    bd.shape_count = 0;
    ls_body_id a = ls_body_create(w, &bd, &err);
    cr_assert_neq(a.index1, 0u, "%s", err.message);
    // A shape handed back by the world carries the cookie: it can be reused.
    bd.shape = ls_body_shape(w, a);
    bd.position = ls_vec3_make(FX(3), 0, 0);
    ls_body_id b = ls_body_create(w, &bd, &err);
    cr_assert_neq(b.index1, 0u, "%s", err.message);

    ls_joint_def jd = {.type = LS_JOINT_BALL, .body_a = a, .body_b = b};
    cr_assert_eq(ls_joint_create(w, &jd, &err).index1, 0u);
    assert_cookie_refused(&err, "ls_default_joint_def()");
    ls_vehicle_def vd = {.chassis = a, .wheel_count = 4};
    cr_assert_eq(ls_vehicle_create(w, &vd, &err).index1, 0u);
    assert_cookie_refused(&err, "ls_default_vehicle_def()");
    ls_world_destroy(w);
}

Test(world, snapshot_at_tick_500_then_restore_replays_ticks_501_to_1000_identically)
{
    ls_world *w = load_scene(STACK);
    for (int t = 0; t < 500; t++) {
        ls_world_step(w);
    }
    size_t n = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(n);
    cr_assert_eq(ls_world_snapshot_save(w, buf, n), n);
    uint64_t first[500];
    for (int t = 0; t < 500; t++) {
        ls_world_step(w);
        first[t] = ls_world_checksum(w);
    }
    cr_assert_eq(ls_world_snapshot_restore(w, buf, n, NULL), LS_OK);
    cr_assert_eq(ls_world_tick(w), 500u);
    for (int t = 0; t < 500; t++) {
        ls_world_step(w);
        cr_assert_eq(ls_world_checksum(w), first[t], "tick %d after restore", 501 + t);
    }
    // A fresh world restored from the same bytes continues identically too.
    ls_world *fresh = load_scene(STACK);
    cr_assert_eq(ls_world_snapshot_restore(fresh, buf, n, NULL), LS_OK);
    for (int t = 0; t < 500; t++) {
        ls_world_step(fresh);
    }
    cr_assert_eq(ls_world_checksum(fresh), first[499]);
    free(buf);
    ls_world_destroy(w);
    ls_world_destroy(fresh);
}

Test(world, corrupt_or_short_snapshots_are_refused)
{
    ls_world *w = load_scene(STACK);
    size_t n = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(n);
    ls_world_snapshot_save(w, buf, n);
    cr_assert_eq(ls_world_snapshot_save(w, buf, n - 1), 0u);
    ls_error err;
    cr_assert_eq(ls_world_snapshot_restore(w, buf, n - 1, &err), LS_ERR_CORRUPT);
    cr_assert_eq(err.code, LS_ERR_CORRUPT);
    cr_assert(strstr(err.message, "corrupt") != NULL, "%s", err.message);
    cr_assert_eq(ls_world_snapshot_restore(w, buf, 5, &err), LS_ERR_TRUNCATED);
    buf[0] ^= 1;
    cr_assert_eq(ls_world_snapshot_restore(w, buf, n, &err), LS_ERR_INCOMPATIBLE);
    cr_assert(strstr(err.message, "snapshot") != NULL, "%s", err.message);
    free(buf);
    ls_world_destroy(w);
}

Test(world, sphere_rebounds_to_about_e_squared_times_the_drop_height)
{
    // Dropped from h = 4 m (bottom to ground) with e = 0.7: apex e^2 h = 1.96 m.
    // Tolerance 10 %: the impact is resolved at tick granularity (v dt = 0.15 m
    // per tick at impact) and the sphere penetrates up to one tick's travel.
    ls_world *w = load_scene(BOUNCE);
    ls_body_id ball = ls_world_body_at(w, 1);
    ls_fx apex = 0;
    bool bounced = false;
    for (int t = 0; t < 150; t++) {
        ls_world_step(w);
        ls_fx vy = ls_body_linear_velocity(w, ball).y;
        bounced |= vy > 0;
        if (bounced) {
            apex = ls_fx_max(apex, ls_body_position(w, ball).y - FX(1) / 2);
        }
    }
    double h = (double)apex / 65536.0;
    cr_assert(bounced);
    cr_assert(h > 1.96 * 0.9 && h < 1.96 * 1.1, "apex %.3f m, expected 1.96 +- 10 %%", h);
    ls_world_destroy(w);
}

Test(world, static_bodies_never_move_and_falling_bodies_come_to_rest)
{
    ls_world *w = load_scene(STACK);
    ls_body_id ground = ls_world_body_at(w, 0);
    for (int t = 0; t < 1200; t++) {
        ls_world_step(w);
        cr_assert(ls_vec3_equal(ls_body_position(w, ground), ls_vec3_zero()));
    }
    ls_step_info info = ls_world_info(w);
    cr_assert_eq(info.overflow_count, 0u);
    cr_assert_eq(info.asleep_bodies, 4u, "everything rests and sleeps within 20 s");
    cr_assert_lt(info.max_penetration, 1311, "penetration < 2 cm");
    ls_world_destroy(w);
}

Test(world, a_sleeping_body_wakes_when_hit)
{
    ls_world *w = load_scene("body static plane normal 0 1 0 d 0\n"
                             "body dynamic box pos 0 0.5 0 asleep\n"
                             "body dynamic sphere radius 0.25 pos 0 3 0\n");
    ls_body_id box = ls_world_body_at(w, 1);
    cr_assert(ls_body_is_asleep(w, box));
    bool woke = false;
    for (int t = 0; t < 90; t++) {
        ls_world_step(w);
        woke |= !ls_body_is_asleep(w, box);
    }
    cr_assert(woke, "the falling sphere must wake the box");
    ls_world_destroy(w);
}

Test(world, out_of_range_bodies_are_refused_with_a_named_error)
{
    ls_world_def d = ls_default_world_def();
    ls_world *w = ls_world_create(&d, NULL);
    ls_body_def b = ls_default_body_def();
    ls_error err;
    b.position = ls_vec3_make(0, 0, -FX(3000));
    cr_assert_eq(ls_body_create(w, &b, &err).index1, 0u);
    cr_assert_eq(err.code, LS_ERR_OUT_OF_RANGE);
    cr_assert_str_eq(err.message, "position.z outside +-2048 m (got -3000)");
    cr_assert_str_eq(err.field, "position.z");
    b = ls_default_body_def();
    b.shape.half_extents = ls_vec3_make(FX(1), FX(1) / 64, FX(1));
    cr_assert_eq(ls_body_create(w, &b, &err).index1, 0u);
    cr_assert_str_eq(err.message, "shape.half_extents.y outside 0.05..64 m (got 0.01563)");
    cr_assert_str_eq(err.field, "shape.half_extents.y");
    b = ls_default_body_def();
    b.shape.half_extents = ls_vec3_make(FX(10), FX(10), FX(10)); // 8000 m^3 of water: 8e6 kg
    cr_assert_eq(ls_body_create(w, &b, &err).index1, 0u);
    cr_assert(strstr(err.message, "mass") != NULL, "%s", err.message);
    b = ls_default_body_def();
    b.linear_velocity = ls_vec3_make(FX(1000), 0, 0);
    cr_assert_eq(ls_body_create(w, &b, &err).index1, 0u);
    cr_assert_str_eq(err.message, "linear_velocity faster than 512 m/s (got 1000)");
    b = ls_default_body_def();
    b.shape.type = LS_SHAPE_PLANE;
    cr_assert_eq(ls_body_create(w, &b, &err).index1, 0u);
    cr_assert_eq(err.code, LS_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ls_world_body_count(w), 0u, "nothing was created");
    ls_world_destroy(w);
}

Test(world, body_ids_carry_a_generation_and_stale_ids_are_invalid)
{
    ls_world_def d = ls_default_world_def();
    ls_world *w = ls_world_create(&d, NULL);
    ls_body_def b = ls_default_body_def();
    ls_body_id first = ls_body_create(w, &b, NULL);
    ls_body_destroy(w, first);
    ls_body_id second = ls_body_create(w, &b, NULL);
    cr_assert_eq(second.index1, first.index1, "the slot is reused");
    cr_assert_neq(second.generation, first.generation);
    cr_assert(!ls_body_is_valid(w, first));
    cr_assert(ls_body_is_valid(w, second));
    // A stale id is an error, never a silent zero.
    ls_body_state st;
    ls_error err;
    cr_assert_eq(ls_body_get_state(w, first, &st, &err), LS_ERR_INVALID_ID);
    cr_assert_eq(err.code, LS_ERR_INVALID_ID);
    cr_assert(strstr(err.message, "stale") != NULL, "%s", err.message);
    cr_assert_eq(ls_body_apply_force(w, first, ls_vec3_make(FX(1), 0, 0)), LS_ERR_INVALID_ID);
    cr_assert_eq(ls_body_set_velocity(w, first, ls_vec3_zero(), ls_vec3_zero()), LS_ERR_INVALID_ID);
    cr_assert_eq(ls_body_destroy(w, first), LS_ERR_INVALID_ID);
    cr_assert_eq(ls_body_get_state(w, second, &st, &err), LS_OK);
    cr_assert_eq(st.position.y, b.position.y);
    cr_assert_eq(st.shape.type, b.shape.type);
    cr_assert_eq(st.shape.half_extents.x, b.shape.half_extents.x);
    ls_world_destroy(w);
}

// The single-field getters assert on a stale id (SPEC.md §19): a programming
// error stops the program instead of reading as position 0. Checked in a child
// process (Criterion's .signal leaks an allocation of its own under LSan).
Test(world, reading_a_destroyed_body_aborts)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        ls_world_def d = ls_default_world_def();
        ls_world *w = ls_world_create(&d, NULL);
        ls_body_def b = ls_default_body_def();
        ls_body_id id = ls_body_create(w, &b, NULL);
        ls_body_destroy(w, id);
        (void)ls_body_position(w, id);
        _exit(0); // not reached when the assert fires
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d", status);
}

Test(world, ray_cast_hits_the_nearest_body_with_its_normal)
{
    ls_world *w = load_scene("body static plane normal 0 1 0 d 0\n"
                             "body static box half 1 1 1 pos 0 1 0\n"
                             "body static sphere radius 0.5 pos 5 0.5 0\n");
    ls_ray_hit hit;
    cr_assert(ls_world_ray_cast(w, ls_vec3_make(0, FX(10), 0), ls_vec3_make(0, -FX(10), 0), &hit));
    cr_assert_eq(hit.body.index1, 2u);
    // The hit fraction has 2^-16 resolution over a 20 m ray: 10 ulp of position.
    cr_assert_leq(abs(hit.point.y - FX(2)), 10, "box top at y = 2 within 10 ulp");
    cr_assert(ls_vec3_equal(hit.normal, ls_vec3_make(0, LS_FX_ONE, 0)));
    cr_assert(ls_world_ray_cast(w, ls_vec3_make(FX(5), FX(10), 0), ls_vec3_make(FX(5), -FX(10), 0),
                                &hit));
    cr_assert_eq(hit.body.index1, 3u);
    cr_assert_leq(abs(hit.point.y - FX(1)), 12, "sphere top at y = 1 within 12 ulp");
    ls_world_destroy(w);
}

Test(world, ray_cast_hits_a_capsule_wall_between_its_end_caps)
{
    // A lying capsule (axis along x after a 90 degree turn about z), radius 0.5,
    // half height 2, centre (0, 3, 0). A vertical ray at x = 1.2 meets the wall,
    // not an end cap, at y = 3.5 with normal +y; one at x = 2.3 meets the cap
    // centred at x = 2 where y = 3 + sqrt(0.25 - 0.09) = 3.4.
    ls_world *w = load_scene("body static capsule radius 0.5 half_height 2 pos 0 3 0 "
                             "quat 0 0 0.70711 0.70711\n");
    ls_ray_hit hit;
    cr_assert(ls_world_ray_cast(w, ls_vec3_make(FX(6) / 5, FX(10), 0),
                                ls_vec3_make(FX(6) / 5, -FX(10), 0), &hit));
    cr_assert_leq(abs(hit.point.y - FX(7) / 2), 12, "wall top at y = 3.5 within 12 ulp");
    cr_assert_leq(abs(hit.normal.y - LS_FX_ONE), 8, "normal +y within 8 ulp");
    cr_assert(ls_world_ray_cast(w, ls_vec3_make(FX(23) / 10, FX(10), 0),
                                ls_vec3_make(FX(23) / 10, -FX(10), 0), &hit));
    cr_assert_leq(abs(hit.point.y - FX(17) / 5), 40, "cap at y = 3.4 within 40 ulp");
    cr_assert_gt(hit.normal.x, 0, "cap normal leans outwards");
    cr_assert(!ls_world_ray_cast(w, ls_vec3_make(FX(3), FX(10), 0), ls_vec3_make(FX(3), -FX(10), 0),
                                 &hit),
              "x = 3 passes beyond the cap (ends at 2.5)");
    ls_world_destroy(w);
}

Test(scene, text_round_trips_exactly)
{
    ls_scene a, b;
    ls_error err;
    cr_assert_eq(ls_scene_parse(STACK, strlen(STACK), &a, &err), LS_OK);
    size_t n = ls_scene_write(&a, NULL, 0);
    char *text = malloc(n + 1);
    cr_assert_eq(ls_scene_write(&a, text, n + 1), n);
    cr_assert_eq(ls_scene_parse(text, n, &b, &err), LS_OK, "%u:%u %s", err.line, err.column,
                 err.message);
    cr_assert_eq(a.body_count, b.body_count);
    for (uint32_t i = 0; i < a.body_count; i++) {
        cr_assert(ls_vec3_equal(a.bodies[i].position, b.bodies[i].position));
        cr_assert(ls_quat_equal(a.bodies[i].orientation, b.bodies[i].orientation));
        cr_assert(ls_vec3_equal(a.bodies[i].shape.half_extents, b.bodies[i].shape.half_extents));
        cr_assert_eq(a.bodies[i].shape.radius, b.bodies[i].shape.radius);
        cr_assert_eq(a.bodies[i].shape.density, b.bodies[i].shape.density);
    }
    size_t n2 = ls_scene_write(&b, NULL, 0);
    char *text2 = malloc(n2 + 1);
    ls_scene_write(&b, text2, n2 + 1);
    cr_assert_str_eq(text, text2, "writing is a fixed point");
    free(text);
    free(text2);
    ls_scene_free(&a);
    ls_scene_free(&b);
}

Test(scene, errors_name_line_and_column)
{
    ls_scene s;
    ls_error err;
    const char *bad = "world tick_rate 60\n# comment\nbody dynamic box pos 1 two 3\n";
    cr_assert_eq(ls_scene_parse(bad, strlen(bad), &s, &err), LS_ERR_PARSE);
    cr_assert_eq(err.line, 3u);
    cr_assert_eq(err.column, 24u);
    cr_assert(strstr(err.message, "pos") != NULL, "%s", err.message);
    const char *bad2 = "body dynamic blob\n";
    cr_assert_eq(ls_scene_parse(bad2, strlen(bad2), &s, &err), LS_ERR_PARSE);
    cr_assert_eq(err.column, 14u);
    const char *bad3 = "world tick_rate 61x\n";
    cr_assert_eq(ls_scene_parse(bad3, strlen(bad3), &s, &err), LS_ERR_PARSE);
}

Test(scene, a_token_longer_than_the_parser_reads_is_refused_not_cut)
{
    // 1.000...0 (70 zeros) then junk: the junk lies past the 63 bytes read.
    char text[160] = "body dynamic box pos 1.";
    for (int i = 0; i < 70; i++) {
        strcat(text, "0");
    }
    strcat(text, "junk 0 0\n");
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_parse(text, strlen(text), &s, &err), LS_ERR_PARSE);
    cr_assert_eq(err.column, 22u);
}

Test(scene, loading_a_directory_is_an_io_error_naming_it)
{
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_load("tools/scenes", &s, &err), LS_ERR_IO);
    cr_assert_str_eq(err.path, "tools/scenes");
    cr_assert(strstr(err.message, "directory") != NULL, "%s", err.message);
    char line[512];
    ls_error_format(&err, line, sizeof line);
    cr_assert(strncmp(line, "tools/scenes: cannot read", 25) == 0, "%s", line);
    cr_assert_eq(ls_scene_load("/nonexistent.scene", &s, NULL), LS_ERR_IO, "err may be NULL");
}

// tests/scenes_bad/*.scene: each file's first line says what it must give,
// `# expect parse|instantiate LINE:COLUMN FRAGMENT` (issue 18: every kind of
// nonsense is refused with line:column and, for ranges, the value given).
Test(scene, bad_scene_corpus)
{
    DIR *d = opendir("tests/scenes_bad");
    cr_assert_not_null(d);
    struct dirent *e;
    unsigned files = 0;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 7 || strcmp(e->d_name + n - 6, ".scene") != 0) {
            continue;
        }
        char path[512], head[256], kind[16], fragment[200];
        snprintf(path, sizeof path, "tests/scenes_bad/%s", e->d_name);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(head, sizeof head, f));
        fclose(f);
        head[strcspn(head, "\n")] = '\0';
        unsigned line, column;
        int used = 0;
        cr_assert_eq(sscanf(head, "# expect %15s %u:%u %n", kind, &line, &column, &used), 3, "%s",
                     path);
        snprintf(fragment, sizeof fragment, "%s", head + used);
        ls_scene s;
        ls_error err;
        ls_result r = ls_scene_load(path, &s, &err);
        if (strcmp(kind, "instantiate") == 0) {
            cr_assert_eq(r, LS_OK, "%s: %s", path, err.message);
            ls_world *w = ls_scene_instantiate(&s, &err);
            cr_assert_null(w, "%s was accepted", path);
            ls_scene_free(&s);
        } else {
            cr_assert_eq(r, LS_ERR_PARSE, "%s: %s", path, err.message);
            cr_assert_str_eq(err.path, path);
        }
        cr_assert_eq(err.line, line, "%s: line %u:%u, %s", path, err.line, err.column, err.message);
        cr_assert_eq(err.column, column, "%s: column %u, %s", path, err.column, err.message);
        cr_assert(strstr(err.message, fragment) != NULL, "%s: '%s' lacks '%s'", path, err.message,
                  fragment);
        files++;
    }
    closedir(d);
    cr_assert_geq(files, 20u);
}

// Issue 18: a contact bomb (3000 spheres in one spot, max_contacts 4194304:
// 4.5 GB and 34 s a tick before) gets a bounded world: capacity is capped at
// 32 pairs per body, the memory is known before allocating, and a budget
// refuses what does not fit.
Test(scene, a_contact_bomb_is_bounded_and_a_budget_refuses_what_does_not_fit)
{
    size_t cap = 200 + 3000 * 48;
    char *text = malloc(cap), *p = text;
    p += sprintf(p, "world max_contacts 4194304\nbody static plane normal 0 1 0 d 0\n");
    for (int i = 0; i < 3000; i++) {
        p += sprintf(p, "body dynamic sphere radius 0.1 pos 0 1 0\n");
    }
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_parse(text, (size_t)(p - text), &s, &err), LS_OK, "%s", err.message);
    ls_world_def d = ls_scene_world_def(&s);
    cr_assert_eq(d.max_contacts, 32u * 3001u);
    size_t need = ls_world_memory_size(&d);
    cr_assert_lt(need, (size_t)256 << 20, "%zu bytes", need);
    cr_assert_null(ls_scene_instantiate_within(&s, (size_t)16 << 20, &err));
    cr_assert_eq(err.code, LS_ERR_CAPACITY);
    cr_assert(strstr(err.message, "over the budget of 16 MiB") != NULL, "%s", err.message);
    ls_world *w = ls_scene_instantiate_within(&s, (size_t)256 << 20, &err);
    cr_assert_not_null(w, "%s", err.message);
    ls_world_step(w);
    ls_step_info info = ls_world_info(w);
    cr_assert(info.capacity_exceeded, "the bomb fills the capped capacity");
    cr_assert_leq(info.contacts, d.max_contacts);
    ls_world_destroy(w);
    ls_scene_free(&s);
    // A declared max_bodies far beyond the bodies is refused by a budget.
    const char *big = "world max_bodies 1048576\nbody dynamic box\n";
    cr_assert_eq(ls_scene_parse(big, strlen(big), &s, &err), LS_OK);
    cr_assert_null(ls_scene_instantiate_within(&s, (size_t)256 << 20, &err));
    cr_assert(strstr(err.message, "max_bodies 1048576") != NULL, "%s", err.message);
    ls_scene_free(&s);
    free(text);
}
