// SPDX-License-Identifier: MIT
// Ray-cast vehicles (SPEC.md §26): suspension at rest, acceleration, braking,
// steering, steps and ramps, tick rates, the impulse split, car-car momentum,
// snapshots, checksums, game words and definition errors. Worlds are built
// in code. Floating point here is only for measuring.
#define _POSIX_C_SOURCE 200809L
#include "ls/mesh.h"
#include "ls/vehicle.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX(i) ((ls_fx)((i)*65536))

static const double G = 9.81;
static const double MASS = 800.0; // chassis: box 2 x 0.8 x 4 m at density 125

static ls_world *new_world(uint32_t rate, ls_vec3 gravity, uint32_t workers)
{
    ls_world_def wd = ls_default_world_def();
    wd.max_bodies = 64;
    wd.max_contacts = 512;
    wd.tick_rate = rate;
    wd.gravity = gravity;
    wd.worker_count = workers;
    ls_error err;
    ls_world *w = ls_world_create(&wd, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

static ls_world *flat_world(uint32_t rate)
{
    return new_world(rate, v3(0, -G, 0), 1);
}

// Static box ground: top face at y = 0, 120 m square, friction `mu`.
static void add_ground(ls_world *w, double mu)
{
    ls_body_def d = ls_default_body_def();
    d.type = LS_BODY_STATIC;
    d.shape.type = LS_SHAPE_BOX;
    d.shape.half_extents = v3(60, 1, 60);
    d.shape.friction = fx_of(mu);
    d.position = v3(0, -1, 0);
    ls_error err;
    ls_body_id id = ls_body_create(w, &d, &err);
    cr_assert_neq(id.index1, 0, "%s", err.message);
}

static const ls_vec3 HALF = {65536, 26214, 131072}; // 1 x 0.4 x 2 m

static ls_body_id add_chassis(ls_world *w, ls_vec3 p)
{
    ls_body_def d = ls_default_body_def();
    d.shape.type = LS_SHAPE_BOX;
    d.shape.half_extents = HALF;
    d.shape.density = FX(125);
    d.shape.friction = fx_of(0.5);
    d.position = p;
    d.allow_sleep = false;
    ls_error err;
    ls_body_id id = ls_body_create(w, &d, &err);
    cr_assert_neq(id.index1, 0, "%s", err.message);
    return id;
}

static ls_vehicle_id add_car(ls_world *w, ls_vec3 p, ls_vehicle_def *out)
{
    ls_body_id c = add_chassis(w, p);
    ls_vehicle_def d = ls_default_car_def(c, HALF);
    if (out) {
        d.filter = out->filter;
        d.wheels[0].static_friction = out->wheels[0].static_friction;
    }
    ls_error err;
    ls_vehicle_id id = ls_vehicle_create(w, &d, &err);
    cr_assert_neq(id.index1, 0, "%s (%s)", err.message, err.field);
    if (out) {
        *out = d;
    }
    return id;
}

static void steps(ls_world *w, int n)
{
    for (int i = 0; i < n; i++) {
        ls_world_step(w);
    }
}

static double compression(const ls_world *w, ls_vehicle_id v, uint32_t i)
{
    ls_wheel_state st;
    cr_assert_eq(ls_vehicle_get_wheel(w, v, i, &st), LS_OK);
    return d_of(st.compression);
}

static void set_controls(ls_world *w, ls_vehicle_id v, double throttle, double brake, double steer)
{
    ls_vehicle_controls c;
    memset(&c, 0, sizeof c);
    c.throttle = fx_of(throttle);
    c.brake = fx_of(brake);
    c.steer = fx_of(steer);
    cr_assert_eq(ls_vehicle_set_controls(w, v, &c), LS_OK);
}

// Static compression m g / 4 / k at rest, within 1 mm, after 4 s; and the
// chassis has stopped bouncing (|v_y| < 1 cm/s).
static void rest_case(uint32_t rate)
{
    ls_world *w = flat_world(rate);
    add_ground(w, 1.0);
    ls_vehicle_id v = add_car(w, v3(0, 1.0, 0), NULL);
    steps(w, 4 * (int)rate);
    double expect = MASS * G / 4 / 20000.0;
    for (uint32_t i = 0; i < 4; i++) {
        double s = compression(w, v, i);
        cr_log_info("rate %u wheel %u compression %.5f expected %.5f", rate, i, s, expect);
        cr_expect(fabs(s - expect) < 0.001, "rate %u wheel %u: compression %.5f, expected %.5f",
                  rate, i, s, expect);
    }
    ls_vec3 vel = ls_body_linear_velocity(w, ls_vehicle_chassis(w, v));
    cr_expect(fabs(d_of(vel.y)) < 0.01, "rate %u: still bouncing, v_y %.4f", rate, d_of(vel.y));
    cr_expect_eq(ls_world_info(w).overflow_count, 0);
    ls_world_destroy(w);
}

Test(vehicle, rest_compression_60hz)
{
    rest_case(60);
}

// Sphere-cast wheels rest at the same compression (the sphere touches the
// flat ground where the ray would).
Test(vehicle, sphere_probe_rest_compression)
{
    ls_world *w = flat_world(60);
    add_ground(w, 1.0);
    ls_body_id c = add_chassis(w, v3(0, 1.0, 0));
    ls_vehicle_def d = ls_default_car_def(c, HALF);
    d.probe = LS_WHEEL_SPHERE;
    ls_vehicle_id v = ls_vehicle_create(w, &d, NULL);
    cr_assert_neq(v.index1, 0);
    steps(w, 240);
    double expect = MASS * G / 4 / 20000.0;
    for (uint32_t i = 0; i < 4; i++) {
        double s = compression(w, v, i);
        cr_expect(fabs(s - expect) < 0.002, "wheel %u: compression %.5f, expected %.5f", i, s,
                  expect);
    }
    ls_world_destroy(w);
}

Test(vehicle, rest_compression_30_and_120hz)
{
    rest_case(30);
    rest_case(120);
}

// Settle a car on flat ground for 1 s; returns its id.
static ls_vehicle_id settled_car(ls_world *w, ls_vehicle_def *d)
{
    add_ground(w, 1.0);
    ls_vehicle_id v = add_car(w, v3(0, 1.0, 0), d);
    steps(w, 60);
    return v;
}

static double speed_z(const ls_world *w, ls_vehicle_id v)
{
    return d_of(ls_body_linear_velocity(w, ls_vehicle_chassis(w, v)).z);
}

// Constant drive 0.5 x 4000 N on 800 kg: a = F/m - c_rr g = 2.5 - 0.098 = 2.402 m/s^2,
// measured between t = 1 s and t = 3 s after the throttle, within 5 %.
Test(vehicle, straight_line_acceleration)
{
    ls_world *w = flat_world(60);
    ls_vehicle_id v = settled_car(w, NULL);
    set_controls(w, v, 0.5, 0, 0);
    steps(w, 60);
    double v1 = speed_z(w, v);
    steps(w, 120);
    double v3_ = speed_z(w, v);
    double a = (v3_ - v1) / 2.0, expect = 2000.0 / MASS - 0.01 * G;
    cr_log_info("acceleration %.4f m/s^2, expected %.4f", a, expect);
    cr_expect(fabs(a - expect) < 0.05 * expect, "acceleration %.4f, expected %.4f", a, expect);
    cr_expect(fabs(d_of(ls_vehicle_forward_speed(w, v)) - v3_) < 0.01);
    ls_world_destroy(w);
}

// Braking from 20 m/s with 30000 N of brake (7500 N per wheel, above
// mu_s N = 1962 N): the tyres slide at mu_d = 0.8, distance v^2 / (2 mu_d g)
// = 25.48 m within 10 %.
Test(vehicle, saturated_braking_distance)
{
    ls_world *w = flat_world(60);
    add_ground(w, 1.0);
    ls_body_id c = add_chassis(w, v3(0, 1.0, 0));
    ls_vehicle_def d = ls_default_car_def(c, HALF);
    d.brake_force = FX(30000);
    ls_vehicle_id v = ls_vehicle_create(w, &d, NULL);
    cr_assert_neq(v.index1, 0);
    steps(w, 60);
    ls_vec3 p0 = ls_body_position(w, c);
    cr_assert_eq(ls_body_set_velocity(w, c, v3(0, 0, 20), ls_vec3_zero()), LS_OK);
    set_controls(w, v, 0, 1, 0);
    bool slid = false;
    int t = 0;
    for (; t < 600 && speed_z(w, v) > 0.01; t++) {
        ls_world_step(w);
        ls_wheel_state st;
        ls_vehicle_get_wheel(w, v, 0, &st);
        slid |= st.sliding;
    }
    double dist = d_of(ls_body_position(w, c).z) - d_of(p0.z);
    double expect = 400.0 / (2 * 0.8 * G);
    cr_log_info("stopping distance %.3f m, expected %.3f", dist, expect);
    cr_expect(slid, "the tyres never slid");
    cr_expect(fabs(dist - expect) < 0.1 * expect, "stopping distance %.3f m, expected %.3f", dist,
              expect);
    ls_world_destroy(w);
}

// Steady low-speed turn (3 m/s, steer 0.1 rad): radius = wheelbase / tan(steer)
// = 3.2 / tan(0.1) = 31.9 m within 10 % (measured as speed / yaw rate).
Test(vehicle, low_speed_turning_radius)
{
    ls_world *w = flat_world(60);
    ls_vehicle_id v = settled_car(w, NULL);
    ls_body_id c = ls_vehicle_chassis(w, v);
    ls_body_set_velocity(w, c, v3(0, 0, 3), ls_vec3_zero());
    set_controls(w, v, 0.05, 0, 0.2);
    steps(w, 120);
    ls_vec3 vel = ls_body_linear_velocity(w, c), om = ls_body_angular_velocity(w, c);
    double sp = sqrt(d_of(vel.x) * d_of(vel.x) + d_of(vel.z) * d_of(vel.z));
    double r = sp / fabs(d_of(om.y));
    double expect = 3.2 / tan(0.1);
    cr_log_info("turn radius %.3f m, expected %.3f", r, expect);
    cr_expect(fabs(r - expect) < 0.1 * expect, "radius %.3f m (speed %.3f), expected %.3f", r, sp,
              expect);
    // Positive steer turns right: forward +z, right is -x.
    cr_expect(d_of(om.y) < 0, "yaw rate %.4f should turn right", d_of(om.y));
    ls_world_destroy(w);
}

// Roll and pitch of the chassis, rad (from its up axis).
static void tilt(const ls_world *w, ls_body_id c, double *roll, double *pitch)
{
    ls_quat q = ls_body_orientation(w, c);
    ls_vec3 up = ls_quat_rotate(q, ls_vec3_make(0, LS_FX_ONE, 0));
    *roll = fabs(atan2(d_of(up.x), d_of(up.y)));
    *pitch = fabs(atan2(d_of(up.z), d_of(up.y)));
}

// Drive over obstacles for 5 s at throttle 0.5 (about 30 m): roll and pitch stay below
// 0.35 rad, the chassis centre stays within [0.3 m above the surface, 2 m
// above the top] (no launch), never below the ground.
static void drive_over(ls_world *w, ls_vehicle_id v, double top)
{
    ls_body_id c = ls_vehicle_chassis(w, v);
    set_controls(w, v, 0.5, 0, 0);
    double max_roll = 0, max_pitch = 0, max_y = 0, min_y = 1e9;
    for (int t = 0; t < 300; t++) {
        ls_world_step(w);
        double r, p, y = d_of(ls_body_position(w, c).y);
        tilt(w, c, &r, &p);
        max_roll = fmax(max_roll, r);
        max_pitch = fmax(max_pitch, p);
        max_y = fmax(max_y, y);
        min_y = fmin(min_y, y);
    }
    cr_log_info("roll %.3f pitch %.3f y %.3f..%.3f", max_roll, max_pitch, min_y, max_y);
    cr_expect(max_roll < 0.35 && max_pitch < 0.35, "roll %.3f pitch %.3f", max_roll, max_pitch);
    cr_expect(max_y < top + 2.0, "launched: centre reached %.3f m", max_y);
    cr_expect(min_y > 0.3, "sank: centre at %.3f m", min_y);
    cr_expect(speed_z(w, v) > 3.0, "stuck at %.3f m/s", speed_z(w, v));
}

Test(vehicle, step_10cm_no_flip_no_launch)
{
    ls_world *w = flat_world(60);
    ls_vehicle_id v = settled_car(w, NULL);
    ls_body_def d = ls_default_body_def();
    d.type = LS_BODY_STATIC;
    d.shape.type = LS_SHAPE_BOX;
    d.shape.half_extents = v3(5, 0.05, 20);
    d.position = v3(0, 0.05, 26); // 0.1 m high from z = 6 to 46
    cr_assert_neq(ls_body_create(w, &d, NULL).index1, 0);
    drive_over(w, v, 0.1);
    ls_world_destroy(w);
}

Test(vehicle, triangulated_ramp_no_flip_no_launch)
{
    ls_world *w = flat_world(60);
    ls_vehicle_id v = settled_car(w, NULL);
    // A 1:8 ramp from z = 8 up to 1 m at z = 16, then flat to z = 60.
    ls_vec3 vert[6] = {v3(-3, 0, 8), v3(-3, 1, 16), v3(3, 1, 16),
                       v3(3, 0, 8),  v3(-3, 1, 60), v3(3, 1, 60)};
    uint32_t idx[12] = {0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 2};
    ls_error err;
    ls_mesh *m = ls_mesh_create(vert, 6, idx, 4, &err);
    cr_assert_not_null(m, "%s", err.message);
    ls_body_def d = ls_default_body_def();
    d.type = LS_BODY_STATIC;
    d.shape.type = LS_SHAPE_MESH;
    d.shape.mesh = m;
    cr_assert_neq(ls_body_create(w, &d, &err).index1, 0, "%s", err.message);
    ls_mesh_destroy(m);
    drive_over(w, v, 1.0);
    ls_world_destroy(w);
}

// Seed 004 §5.12. Perpendicular (tyre) impulses reach the chassis in the same
// step: a car sliding sideways at 2 m/s loses lateral speed in one tick.
// Parallel ones only through the spring: a kinematic platform rising at
// 1 m/s under the wheels changes the chassis's vertical speed in that tick by
// the spring/damper force only (4 c 1 m/s dt / m = 0.167 m/s), not rigidly.
Test(vehicle, impulse_split)
{
    ls_world *w = flat_world(60);
    ls_vehicle_id v = settled_car(w, NULL);
    ls_body_id c = ls_vehicle_chassis(w, v);
    ls_body_set_velocity(w, c, v3(2, 0, 0), ls_vec3_zero());
    ls_world_step(w);
    double vx = d_of(ls_body_linear_velocity(w, c).x);
    cr_expect(vx < 1.9, "lateral speed %.4f after one tick (tyres should act at once)", vx);
    ls_world_destroy(w);

    w = flat_world(60);
    ls_body_def pd = ls_default_body_def();
    pd.type = LS_BODY_KINEMATIC;
    pd.shape.type = LS_SHAPE_BOX;
    pd.shape.half_extents = v3(5, 0.5, 5);
    pd.position = v3(0, -0.5, 0);
    ls_body_id plat = ls_body_create(w, &pd, NULL);
    cr_assert_neq(plat.index1, 0);
    v = add_car(w, v3(0, 1.0, 0), NULL);
    c = ls_vehicle_chassis(w, v);
    steps(w, 120);
    double vy0 = d_of(ls_body_linear_velocity(w, c).y);
    ls_body_set_velocity(w, plat, v3(0, 1, 0), ls_vec3_zero());
    ls_world_step(w);
    double dvy = d_of(ls_body_linear_velocity(w, c).y) - vy0;
    double expect = 4 * 2000.0 * 1.0 / MASS / 60.0;
    cr_log_info("lateral v after one tick %.4f; platform: chassis dv_y %.4f, predicted %.4f", vx,
                dvy, expect);
    cr_expect(fabs(dvy - expect) < 0.25 * expect, "chassis dv_y %.4f, spring/damper predicts %.4f",
              dvy, expect);
    ls_world_destroy(w);
}

// Two cars in zero gravity collide head on (no ground: wheels touch nothing):
// total linear momentum is conserved within 1 %.
Test(vehicle, car_car_collision_momentum)
{
    ls_world *w = new_world(60, ls_vec3_zero(), 1);
    ls_vehicle_id a = add_car(w, v3(0, 1, 0), NULL), b = add_car(w, v3(0.3, 1, 8), NULL);
    ls_body_id ca = ls_vehicle_chassis(w, a), cb = ls_vehicle_chassis(w, b);
    ls_body_set_velocity(w, ca, v3(0, 0, 5), ls_vec3_zero());
    ls_body_set_velocity(w, cb, v3(0, 0, -3), ls_vec3_zero());
    double p0 = MASS * (5 - 3);
    bool touched = false;
    for (int t = 0; t < 180; t++) {
        ls_world_step(w);
        touched |= ls_world_info(w).contacts > 0;
    }
    ls_vec3 va = ls_body_linear_velocity(w, ca), vb = ls_body_linear_velocity(w, cb);
    double p1 = MASS * (d_of(va.z) + d_of(vb.z));
    cr_log_info("momentum %.3f before, %.3f after", p0, p1);
    cr_expect(touched, "the cars never met");
    cr_expect(d_of(va.z) < 4.5, "car a kept %.3f m/s: no collision", d_of(va.z));
    cr_expect(fabs(p1 - p0) < 0.01 * fabs(p0) + 1.0, "momentum %.2f before, %.2f after", p0, p1);
    ls_world_destroy(w);
}

// A car in zero gravity hits a resting ball off centre: total linear momentum
// (car + ball, from the bodies' own masses) is conserved within 1 %.
Test(vehicle, car_ball_collision_momentum)
{
    ls_world *w = new_world(60, ls_vec3_zero(), 1);
    ls_vehicle_id a = add_car(w, v3(0, 1, 0), NULL);
    ls_body_id ca = ls_vehicle_chassis(w, a);
    ls_body_def d = ls_default_body_def();
    d.shape.type = LS_SHAPE_SPHERE;
    d.shape.radius = fx_of(0.5);
    d.shape.density = FX(60);
    d.shape.restitution = fx_of(0.5);
    d.position = v3(0.4, 1, 6);
    d.allow_sleep = false;
    ls_error err;
    ls_body_id ball = ls_body_create(w, &d, &err);
    cr_assert_neq(ball.index1, 0, "%s", err.message);
    ls_body_set_velocity(w, ca, v3(0, 0, 5), ls_vec3_zero());
    double mc = d_of(ls_body_mass(w, ca)), mb = d_of(ls_body_mass(w, ball));
    double px0 = 0, pz0 = mc * 5;
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
    }
    ls_vec3 vc = ls_body_linear_velocity(w, ca), vb = ls_body_linear_velocity(w, ball);
    double px1 = mc * d_of(vc.x) + mb * d_of(vb.x), pz1 = mc * d_of(vc.z) + mb * d_of(vb.z);
    cr_log_info("car %.1f kg, ball %.1f kg: momentum (%.3f, %.3f) before, (%.3f, %.3f) after; "
                "ball %.3f m/s",
                mc, mb, px0, pz0, px1, pz1, d_of(vb.z));
    cr_expect(d_of(vb.z) > 5.0, "the ball was not hit: %.3f m/s", d_of(vb.z));
    cr_expect(fabs(pz1 - pz0) < 0.01 * pz0, "z momentum %.2f before, %.2f after", pz0, pz1);
    cr_expect(fabs(px1 - px0) < 0.01 * pz0, "x momentum %.2f before, %.2f after", px0, px1);
    ls_world_destroy(w);
}

// A driving, steering world for the state tests.
static ls_world *busy_world(uint32_t workers, ls_vehicle_id *out)
{
    ls_world *w = new_world(60, v3(0, -G, 0), workers);
    ls_vehicle_id v = settled_car(w, NULL);
    add_car(w, v3(5, 1.0, 0), NULL);
    set_controls(w, v, 0.7, 0, 0.4);
    cr_assert_eq(ls_world_set_game_word(w, 3, -42), LS_OK);
    if (out) {
        *out = v;
    }
    return w;
}

Test(vehicle, snapshot_restore_equals_uninterrupted_run)
{
    ls_world *a = busy_world(1, NULL);
    steps(a, 30);
    size_t n = ls_world_snapshot_size(a);
    uint8_t *buf = malloc(n);
    cr_assert_eq(ls_world_snapshot_save(a, buf, n), n);
    cr_expect_eq(ls_get_u32le(buf + 4), 6u, "one format (version 6, Solver v3)");
    ls_world *b = new_world(60, v3(0, -G, 0), 1);
    ls_error err;
    cr_assert_eq(ls_world_snapshot_restore(b, buf, n, &err), LS_OK, "%s", err.message);
    cr_expect_eq(ls_world_vehicle_count(b), 2);
    cr_expect_eq(ls_world_game_word(b, 3), -42);
    for (int t = 0; t < 120; t++) {
        cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b), "tick %d", t);
        ls_world_step(a);
        ls_world_step(b);
    }
    // Every truncation and single flipped byte is refused or restores
    // something, never crashes.
    for (size_t k = 0; k < n; k += 7) {
        cr_expect_neq(ls_world_snapshot_restore(b, buf, k, NULL), LS_OK);
        uint8_t keep = buf[k];
        buf[k] ^= 0x5A;
        (void)ls_world_snapshot_restore(b, buf, n, NULL);
        ls_world_step(b);
        buf[k] = keep;
    }
    free(buf);
    ls_world_destroy(a);
    ls_world_destroy(b);
}

Test(vehicle, one_lsb_control_changes_later_checksums)
{
    ls_vehicle_id va, vb;
    ls_world *a = busy_world(1, &va), *b = busy_world(1, &vb);
    ls_vehicle_controls c = ls_vehicle_get_controls(b, vb);
    c.throttle += 1;
    ls_vehicle_set_controls(b, vb, &c);
    cr_expect_neq(ls_world_checksum(a), ls_world_checksum(b));
    ls_world_destroy(a);
    ls_world_destroy(b);
}

Test(vehicle, workers_1_and_2_agree)
{
    ls_world *a = busy_world(1, NULL), *b = busy_world(2, NULL);
    for (int t = 0; t < 120; t++) {
        ls_world_step(a);
        ls_world_step(b);
        cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b), "tick %d", t);
    }
    ls_world_destroy(a);
    ls_world_destroy(b);
}

Test(vehicle, destroy_create_reuses_slots_with_generation)
{
    ls_world *w = flat_world(60);
    add_ground(w, 1.0);
    ls_vehicle_id a = add_car(w, v3(0, 1, 0), NULL);
    ls_vehicle_id b = add_car(w, v3(5, 1, 0), NULL);
    cr_expect_eq(ls_world_vehicle_count(w), 2);
    cr_expect_eq(ls_vehicle_destroy(w, a), LS_OK);
    cr_expect_eq(ls_vehicle_destroy(w, a), LS_ERR_INVALID_ID);
    cr_expect(!ls_vehicle_is_valid(w, a));
    ls_vehicle_id c = add_car(w, v3(-5, 1, 0), NULL);
    cr_expect_eq(c.index1, a.index1);
    cr_expect_eq(c.generation, a.generation + 1);
    cr_expect_eq(ls_world_vehicle_at(w, 1).index1, b.index1);
    cr_expect_eq(ls_world_vehicle_at(w, 2).index1, 0);
    // Chassis destroyed: the vehicle stays but is inert.
    cr_expect_eq(ls_body_destroy(w, ls_vehicle_chassis(w, b)), LS_OK);
    steps(w, 10);
    cr_expect(ls_vehicle_is_valid(w, b));
    ls_world_destroy(w);
}

static void expect_field(ls_world *w, const ls_vehicle_def *d, const char *field)
{
    ls_error err;
    ls_vehicle_id id = ls_vehicle_create(w, d, &err);
    cr_expect_eq(id.index1, 0, "%s accepted", field);
    cr_expect_str_eq(err.field, field, "%s", err.message);
}

Test(vehicle, definition_errors_name_the_field)
{
    ls_world *w = flat_world(60);
    ls_body_id c = add_chassis(w, v3(0, 1, 0));
    ls_vehicle_def d = ls_default_car_def(c, HALF);
    ls_vehicle_def e = d;
    e.chassis.index1 = 40;
    expect_field(w, &e, "chassis");
    e = d;
    e.wheel_count = 1;
    expect_field(w, &e, "wheel_count");
    e = d;
    e.wheels[2].stiffness = 0;
    expect_field(w, &e, "wheels[2].stiffness");
    e = d;
    e.wheels[1].dynamic_friction = FX(2);
    expect_field(w, &e, "wheels[1].dynamic_friction");
    e = d;
    e.wheels[3].axis = v3(0, -2, 0);
    expect_field(w, &e, "wheels[3].axis");
    e = d;
    e.wheels[0].stiffness = FX(30000); // omega dt = sqrt(30000/200)/60 = 0.2: fine at 60 Hz
    e.wheels[0].damping = FX(20000);   // c dt / m = 20000/60/200 = 1.67: refused
    expect_field(w, &e, "wheels[0].damping");
    e = d;
    e.engine_force = -1;
    expect_field(w, &e, "engine_force");
    ls_world_destroy(w);

    // The stiffness bound at 30 Hz: k dt^2 < 2.25 m/n refuses k = 20000 on a 32 kg chassis.
    w = flat_world(30);
    ls_body_def bd = ls_default_body_def();
    bd.shape.half_extents = v3(0.5, 0.2, 1);
    bd.shape.density = FX(40); // 32 kg: 8 kg per wheel, bound k < 2.25 * 8 * 900 = 16200
    c = ls_body_create(w, &bd, NULL);
    e = ls_default_car_def(c, v3(0.5, 0.2, 1));
    for (uint32_t i = 0; i < 4; i++) {
        e.wheels[i].stiffness = FX(5000);
        e.wheels[i].damping = FX(100);
    }
    cr_assert_neq(ls_vehicle_create(w, &e, NULL).index1, 0, "k 5000 is within the bound");
    e.wheels[1].stiffness = FX(20000);
    expect_field(w, &e, "wheels[1].stiffness");
    ls_world_destroy(w);
}

Test(vehicle, game_words_round_trip_and_hash)
{
    ls_world *w = flat_world(60);
    add_ground(w, 1.0);
    uint64_t before = ls_world_checksum(w);
    size_t n0 = ls_world_snapshot_size(w);
    uint8_t *b0 = malloc(n0);
    ls_world_snapshot_save(w, b0, n0);
    cr_expect_eq(ls_get_u32le(b0 + 4), 6u, "one format (version 6, Solver v3)");
    cr_expect_eq(ls_get_u32le(b0 + n0 - 4), 0u,
                 "no vehicles, no words: the section word is 0, last");
    cr_expect_eq(ls_world_game_word(w, 5), 0);
    cr_expect_eq(ls_world_set_game_word(w, 32, 1), LS_ERR_OUT_OF_RANGE);
    cr_expect_eq(ls_world_set_game_word(w, 5, 7), LS_OK);
    uint64_t after = ls_world_checksum(w);
    cr_expect_neq(before, after);
    size_t n = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(n);
    ls_world_snapshot_save(w, buf, n);
    ls_world *v = flat_world(60);
    cr_assert_eq(ls_world_snapshot_restore(v, buf, n, NULL), LS_OK);
    cr_expect_eq(ls_world_game_word(v, 5), 7);
    cr_expect_eq(ls_world_checksum(v), after);
    // Restoring the old snapshot clears the words again.
    cr_assert_eq(ls_world_snapshot_restore(v, b0, n0, NULL), LS_OK);
    cr_expect_eq(ls_world_game_word(v, 5), 0);
    cr_expect_eq(ls_world_checksum(v), before);
    free(b0);
    free(buf);
    ls_world_destroy(v);
    ls_world_destroy(w);
}
