// SPDX-License-Identifier: MIT
// Tyres on slopes (issue 29; SPEC.md §26.5): a braked car below its grip
// holds still and sleeps; above it, it slides with the Coulomb deceleration.
// A slope is flat ground under tilted gravity (g sin a along the slope,
// g cos a into the ground): the same forces without a rotated body.
// Floating point here is only for measuring.
#include "ls/vehicle.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PI 3.14159265358979323846
static const double G = 9.81;
static const ls_vec3 HALF = {65536, 26214, 131072}; // 1 x 0.4 x 2 m, 800 kg at density 125

typedef struct slope_case {
    double degrees;    // slope angle
    int across;        // 0: the car faces down the slope; 1: it stands across it
    int all_brakes;    // 0: handbrake (rear wheels); 1: handbrake on all four + brake 1
    double mu_s, mu_d; // tyre friction
} slope_case;

typedef struct slope_run {
    ls_world *w;
    ls_body_id chassis;
    ls_vehicle_id car;
} slope_run;

static slope_run parked(const slope_case *c)
{
    double a = c->degrees * PI / 180;
    ls_world_def wd = ls_default_world_def();
    wd.max_bodies = 16;
    wd.max_contacts = 64;
    double gs = G * sin(a), gn = G * cos(a);
    wd.gravity = c->across ? v3(gs, -gn, 0) : v3(0, -gn, -gs);
    ls_error err;
    slope_run r;
    r.w = ls_world_create(&wd, &err);
    cr_assert_not_null(r.w, "%s", err.message);
    ls_body_def g = ls_default_body_def();
    g.type = LS_BODY_STATIC;
    g.shape.type = LS_SHAPE_BOX;
    g.shape.half_extents = v3(60, 1, 60);
    g.shape.friction = fx(1);
    g.position = v3(0, -1, 0);
    cr_assert(ls_body_is_valid(r.w, ls_body_create(r.w, &g, &err)), "%s", err.message);
    ls_body_def d = ls_default_body_def();
    d.shape.type = LS_SHAPE_BOX;
    d.shape.half_extents = HALF;
    d.shape.density = fx(125);
    d.shape.friction = fx(0.5);
    d.position = v3(0, 0.75, 0);
    r.chassis = ls_body_create(r.w, &d, &err);
    cr_assert(ls_body_is_valid(r.w, r.chassis), "%s", err.message);
    ls_vehicle_def vd = ls_default_car_def(r.chassis, HALF);
    for (uint32_t i = 0; i < vd.wheel_count; i++) {
        vd.wheels[i].static_friction = fx(c->mu_s);
        vd.wheels[i].dynamic_friction = fx(c->mu_d);
        vd.wheels[i].handbrake = c->all_brakes ? true : vd.wheels[i].handbrake;
    }
    r.car = ls_vehicle_create(r.w, &vd, &err);
    cr_assert_neq(r.car.index1, 0, "%s (%s)", err.message, err.field);
    ls_vehicle_controls ctl;
    memset(&ctl, 0, sizeof ctl);
    ctl.handbrake = true;
    ctl.brake = c->all_brakes ? fx(1) : 0;
    cr_assert_eq(ls_vehicle_set_controls(r.w, r.car, &ctl), LS_OK);
    return r;
}

static double dist(ls_vec3 a, ls_vec3 b)
{
    double dx = d_of(a.x) - d_of(b.x), dy = d_of(a.y) - d_of(b.y), dz = d_of(a.z) - d_of(b.z);
    return sqrt(dx * dx + dy * dy + dz * dz);
}

static slope_case holds[] = {
    {5, 0, 0, 1, 0.8},  {10, 0, 0, 1, 0.8}, {15, 0, 0, 1, 0.8}, {15, 0, 1, 1, 0.8},
    {20, 0, 1, 1, 0.8}, {10, 1, 0, 1, 0.8}, {15, 1, 1, 1, 0.8}, {10, 0, 1, 0.3, 0.25},
};

ParameterizedTestParameters(vehicle_slope, a_braked_car_below_its_grip_holds_still_and_sleeps)
{
    return cr_make_param_array(slope_case, holds, sizeof holds / sizeof holds[0]);
}

// Below the grip (tan a < mu_s, with the load on the braked wheels): after 2 s
// to settle on its springs, the chassis moves at most 1 mm over the next 10 s
// and is asleep at the end.
ParameterizedTest(slope_case *c, vehicle_slope, a_braked_car_below_its_grip_holds_still_and_sleeps)
{
    slope_run r = parked(c);
    for (int t = 0; t < 120; t++) {
        ls_world_step(r.w);
    }
    ls_vec3 p0 = ls_body_position(r.w, r.chassis);
    double worst = 0;
    for (int t = 0; t < 600; t++) {
        ls_world_step(r.w);
        worst = fmax(worst, dist(ls_body_position(r.w, r.chassis), p0));
    }
    bool asleep = ls_body_is_asleep(r.w, r.chassis);
    fprintf(stderr, "slope %.0f deg %s, %s, mu %.2f: moved %.3f mm in 10 s (at most), asleep %d\n",
            c->degrees, c->across ? "across" : "down", c->all_brakes ? "all brakes" : "handbrake",
            c->mu_s, worst * 1000, asleep);
    cr_expect_leq(worst, 0.001, "slope %.0f deg: the parked car moved %.4f m in 10 s", c->degrees,
                  worst);
    cr_expect(asleep, "slope %.0f deg: the parked car never sleeps", c->degrees);
    cr_expect_eq(ls_world_info(r.w).overflow_count, 0);
    ls_world_destroy(r.w);
}

static slope_case slides[] = {
    {25, 0, 1, 0.3, 0.25}, {25, 0, 1, 0.01, 0.0}, {25, 0, 1, 0.1, 0.1},
    {35, 0, 1, 0.5, 0.4},  {20, 0, 1, 0.2, 0.2},
};

ParameterizedTestParameters(vehicle_slope,
                            above_its_grip_a_locked_car_slides_with_coulomb_deceleration)
{
    return cr_make_param_array(slope_case, slides, sizeof slides / sizeof slides[0]);
}

// Above the grip with every wheel locked, the car slides down with
// a = g (sin a - mu_d cos a), measured over 2 s after 1 s: within 1 %
// (measured 0.01..0.1 %). Also mu 0 (the slope's own g sin a).
ParameterizedTest(slope_case *c, vehicle_slope,
                  above_its_grip_a_locked_car_slides_with_coulomb_deceleration)
{
    slope_run r = parked(c);
    for (int t = 0; t < 60; t++) {
        ls_world_step(r.w);
    }
    double v0 = -d_of(ls_body_linear_velocity(r.w, r.chassis).z);
    for (int t = 0; t < 120; t++) {
        ls_world_step(r.w);
    }
    double v1 = -d_of(ls_body_linear_velocity(r.w, r.chassis).z);
    double a = (v1 - v0) / 2, ang = c->degrees * PI / 180;
    double want = G * (sin(ang) - c->mu_d * cos(ang));
    fprintf(stderr, "slope %.0f deg, mu %.2f/%.2f: slides at %.4f m/s^2, Coulomb %.4f\n",
            c->degrees, c->mu_s, c->mu_d, a, want);
    cr_expect_leq(fabs(a - want), 0.01 * want, "slope %.0f deg: %.4f m/s^2, Coulomb %.4f",
                  c->degrees, a, want);
    ls_world_destroy(r.w);
}

// A car on a 960 kg platform that rests on frictionless ground: the tyres
// push the platform back (the pair's effective mass), so the horizontal
// momentum of car + platform stays zero while the car drives off (within
// 1 % of the car's momentum); and a parked car (handbrake on all wheels) on
// a platform set moving at 1 m/s moves with it: after 1 s its speed is the
// platform's within 1 cm/s.
static slope_run on_platform(double platform_speed, bool drive)
{
    ls_world_def wd = ls_default_world_def();
    wd.max_bodies = 16;
    wd.max_contacts = 64;
    ls_error err;
    slope_run r;
    r.w = ls_world_create(&wd, &err);
    cr_assert_not_null(r.w, "%s", err.message);
    ls_body_def g = ls_default_body_def();
    g.type = LS_BODY_STATIC;
    g.shape.type = LS_SHAPE_BOX;
    g.shape.half_extents = v3(60, 1, 60);
    g.shape.friction = 0;
    g.position = v3(0, -1, 0);
    cr_assert(ls_body_is_valid(r.w, ls_body_create(r.w, &g, &err)), "%s", err.message);
    ls_body_def pd = ls_default_body_def();
    pd.shape.type = LS_SHAPE_BOX;
    pd.shape.half_extents = v3(4, 0.1, 6);
    pd.shape.density = fx(50); // 8 x 0.2 x 12 m: 960 kg
    pd.shape.friction = fx(1);
    pd.position = v3(0, 0.1, 0);
    pd.linear_velocity = v3(0, 0, platform_speed);
    pd.allow_sleep = false;
    ls_body_id platform = ls_body_create(r.w, &pd, &err);
    cr_assert(ls_body_is_valid(r.w, platform), "%s", err.message);
    ls_body_def d = ls_default_body_def();
    d.shape.type = LS_SHAPE_BOX;
    d.shape.half_extents = HALF;
    d.shape.density = fx(125);
    d.shape.friction = fx(0.5);
    d.position = v3(0, 0.95, 0);
    d.linear_velocity = v3(0, 0, platform_speed);
    d.allow_sleep = false;
    r.chassis = ls_body_create(r.w, &d, &err);
    cr_assert(ls_body_is_valid(r.w, r.chassis), "%s", err.message);
    ls_vehicle_def vd = ls_default_car_def(r.chassis, HALF);
    for (uint32_t i = 0; i < vd.wheel_count; i++) {
        vd.wheels[i].handbrake = true;
    }
    r.car = ls_vehicle_create(r.w, &vd, &err);
    cr_assert_neq(r.car.index1, 0, "%s (%s)", err.message, err.field);
    ls_vehicle_controls ctl;
    memset(&ctl, 0, sizeof ctl);
    ctl.throttle = drive ? fx(1) : 0;
    ctl.handbrake = !drive;
    cr_assert_eq(ls_vehicle_set_controls(r.w, r.car, &ctl), LS_OK);
    return r;
}

Test(vehicle_slope, a_car_driving_off_a_free_platform_pushes_it_back)
{
    slope_run r = on_platform(0, false);
    for (int t = 0; t < 60; t++) { // settle on the springs, parked
        ls_world_step(r.w);
    }
    ls_vehicle_controls ctl;
    memset(&ctl, 0, sizeof ctl);
    ctl.throttle = fx(1);
    cr_assert_eq(ls_vehicle_set_controls(r.w, r.car, &ctl), LS_OK);
    for (int t = 0; t < 45; t++) { // 0.75 s: still on the 12 m platform
        ls_world_step(r.w);
    }
    ls_body_id platform = ls_world_body_at(r.w, 1);
    double mc = d_of(ls_body_mass(r.w, r.chassis)), mp = d_of(ls_body_mass(r.w, platform));
    double vc = d_of(ls_body_linear_velocity(r.w, r.chassis).z);
    double vp = d_of(ls_body_linear_velocity(r.w, platform).z);
    double p = mc * vc + mp * vp;
    fprintf(stderr,
            "platform: car %.0f kg at %.4f m/s, platform %.0f kg at %.4f m/s, momentum %.3f\n", mc,
            vc, mp, vp, p);
    cr_expect_gt(vc, 0.5, "the car drives off (%.4f m/s)", vc);
    cr_expect_lt(vp, 0, "the platform moves back (%.4f m/s)", vp);
    cr_expect_leq(fabs(p), 0.01 * mc * vc, "momentum %.3f kg m/s", p);
    ls_world_destroy(r.w);
}

Test(vehicle_slope, a_parked_car_moves_with_its_platform)
{
    slope_run r = on_platform(1, false);
    for (int t = 0; t < 60; t++) {
        ls_world_step(r.w);
    }
    ls_body_id platform = ls_world_body_at(r.w, 1);
    double vc = d_of(ls_body_linear_velocity(r.w, r.chassis).z);
    double vp = d_of(ls_body_linear_velocity(r.w, platform).z);
    fprintf(stderr, "platform: parked car %.4f m/s, platform %.4f m/s\n", vc, vp);
    cr_expect_leq(fabs(vc - vp), 0.01, "car %.4f m/s, platform %.4f m/s", vc, vp);
    ls_world_destroy(r.w);
}
