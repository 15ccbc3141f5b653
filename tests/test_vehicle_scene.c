// Vehicle and game statements in scene files (issue 15, SPEC.md §14): parse,
// write back, instantiate as the same vehicles built in code, error positions.
#include "ls/scene.h"
#include "ls/vehicle.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char CARS[] =
    "world tick_rate 60 substeps 4 ticks 120\n"
    "body static plane normal 0 1 0 d 0 friction 0.8\n"
    "body dynamic box half 0.9 0.35 2 pos 0 0.9 0 density 150 no_sleep label a\n"
    "vehicle a car engine 5000 throttle 1 steer 0.25 steer_rate 3.5\n"
    "body dynamic box half 0.8 0.3 1.8 pos 6 0.9 0 density 150 no_sleep\n"
    "# a comment between the vehicle line and its wheels\n"
    "vehicle 2 probe sphere max_steer 0.4 boost 1500 filter 1 65535 braking 0.5 handbrake "
    "boosting\n"
    "wheel mount 0.8 -0.3 1.4 radius 0.32 steer 1 drive 0.5 anti_roll 1 4000\n"
    "\n"
    "wheel mount -0.8 -0.3 1.4 radius 0.32 steer 1 drive 0.5 friction 1.2 0.9 slip 0.1 0.3\n"
    "wheel mount 0.8 -0.3 -1.4 handbrake rest 0.25 travel 0.15 spring 15000 damper 1500\n"
    "wheel mount -0.8 -0.3 -1.4 handbrake axis 0 -1 0 forward 0 0 1 inertia 2 rolling 0.02\n"
    "body dynamic sphere radius 0.5 pos 0 0.5 8 density 100 label ball\n"
    "game soccer ball ball goal_z 20 goal_half_width 4 goal_height 2.5 kickoff 30\n";

static void parse_ok(const char *text, ls_scene *s)
{
    ls_error err;
    cr_assert_eq(ls_scene_parse(text, strlen(text), s, &err), LS_OK, "%u:%u %s", err.line,
                 err.column, err.message);
}

static char *write_scene(const ls_scene *s)
{
    size_t n = ls_scene_write(s, NULL, 0);
    char *buf = malloc(n + 1);
    cr_assert_eq(ls_scene_write(s, buf, n + 1), n);
    return buf;
}

Test(vehicle_scene, statements_fill_the_definitions)
{
    ls_scene s;
    parse_ok(CARS, &s);
    cr_assert_eq(s.vehicle_count, 2u);
    const ls_scene_vehicle *a = &s.vehicles[0], *b = &s.vehicles[1];
    // `car`: ls_default_car_def of the chassis box, then the overrides.
    ls_vehicle_def car = ls_default_car_def((ls_body_id){2, 0}, s.bodies[1].shape.half_extents);
    cr_assert_eq(a->def.chassis.index1, 2u, "1-based file index until instantiated");
    cr_assert_eq(a->def.wheel_count, car.wheel_count);
    for (uint32_t i = 0; i < car.wheel_count; i++) {
        cr_assert(ls_vec3_equal(a->def.wheels[i].mount, car.wheels[i].mount));
        cr_assert_eq(a->def.wheels[i].steer_share, car.wheels[i].steer_share);
    }
    cr_assert_eq(a->def.engine_force, LS_FX_INT(5000));
    cr_assert_eq(a->controls.throttle, LS_FX_ONE);
    cr_assert_eq(a->controls.steer, LS_FX_ONE / 4);
    cr_assert_eq(a->def.steer_rate, LS_FX_INT(7) / 2, "`steer_rate` after `car` overrides it");
    cr_assert_eq(a->line, 4u);
    // Explicit wheels, in order; comments and blank lines do not end them.
    cr_assert_eq(b->def.chassis.index1, 3u);
    cr_assert_eq(b->def.wheel_count, 4u);
    cr_assert_eq(b->def.probe, LS_WHEEL_SPHERE);
    cr_assert_eq(b->def.boost_force, LS_FX_INT(1500));
    cr_assert_eq(b->def.filter.category, 1u);
    cr_assert_eq(b->def.filter.mask, 65535u);
    cr_assert_eq(b->controls.brake, LS_FX_HALF);
    cr_assert(b->controls.handbrake && b->controls.boost);
    cr_assert_eq(b->def.wheels[0].anti_roll_pair, 2u, "J is 0-based, the field J + 1");
    cr_assert_eq(b->def.wheels[0].anti_roll_stiffness, LS_FX_INT(4000));
    cr_assert_eq(b->def.wheels[1].static_friction, 78643);  // 1.2
    cr_assert_eq(b->def.wheels[1].dynamic_friction, 58982); // 0.9
    cr_assert_eq(b->def.wheels[1].peak_slip, 6554);         // 0.1
    cr_assert_eq(b->def.wheels[1].slide_slip, 19661);       // 0.3
    cr_assert_eq(b->def.steer_rate, ls_default_vehicle_def().steer_rate);
    cr_assert_eq(b->def.wheels[2].stiffness, LS_FX_INT(15000));
    cr_assert(b->def.wheels[3].handbrake);
    cr_assert_eq(b->def.wheels[3].inertia, LS_FX_INT(2));
    ls_wheel_def wd = ls_default_wheel_def();
    cr_assert_eq(b->def.wheels[3].radius, wd.radius, "absent properties keep the default");
    cr_assert_eq(b->def.wheels[3].peak_slip, wd.peak_slip);
    cr_assert_eq(b->def.wheels[3].slide_slip, wd.slide_slip);
    // Game rules.
    cr_assert_eq(s.game, LS_SCENE_GAME_SOCCER);
    cr_assert_eq(s.soccer.ball_body, 3u);
    cr_assert_eq(s.soccer.goal_z, LS_FX_INT(20));
    cr_assert_eq(s.soccer.goal_half_width, LS_FX_INT(4));
    cr_assert_eq(s.soccer.goal_height, LS_FX_INT(5) / 2);
    cr_assert_eq(s.soccer.kickoff_ticks, 30u);
    ls_world_def d = ls_scene_world_def(&s);
    cr_assert_geq(d.max_vehicles, 2u);
    ls_scene_free(&s);
    cr_assert_null(s.vehicles);
    cr_assert_eq(s.vehicle_count, 0u);
}

Test(vehicle_scene, write_then_parse_is_a_fixed_point)
{
    ls_scene s, t;
    parse_ok(CARS, &s);
    char *one = write_scene(&s);
    parse_ok(one, &t);
    char *two = write_scene(&t);
    cr_assert_str_eq(one, two);
    cr_assert(strstr(one, "game soccer ball ball") != NULL, "%s", one);
    cr_assert(strstr(one, "vehicle a") != NULL, "chassis by label: %s", one);
    cr_assert(strstr(one, " steer_rate 3.5") != NULL, "%s", one);
    cr_assert(strstr(one, " slip 0.1 0.3") != NULL, "%s", one);
    cr_assert_eq(t.vehicle_count, 2u);
    for (uint32_t v = 0; v < 2; v++) {
        const ls_vehicle_def *x = &s.vehicles[v].def, *y = &t.vehicles[v].def;
        cr_assert_eq(x->wheel_count, y->wheel_count);
        cr_assert_eq(x->engine_force, y->engine_force);
        cr_assert_eq(x->max_steer, y->max_steer);
        cr_assert_eq(x->steer_rate, y->steer_rate);
        for (uint32_t i = 0; i < x->wheel_count; i++) {
            cr_assert_eq(memcmp(&x->wheels[i].mount, &y->wheels[i].mount, sizeof(ls_vec3)), 0);
            cr_assert_eq(x->wheels[i].stiffness, y->wheels[i].stiffness);
            cr_assert_eq(x->wheels[i].anti_roll_pair, y->wheels[i].anti_roll_pair);
            cr_assert_eq(x->wheels[i].handbrake, y->wheels[i].handbrake);
            cr_assert_eq(x->wheels[i].dynamic_friction, y->wheels[i].dynamic_friction);
            cr_assert_eq(x->wheels[i].peak_slip, y->wheels[i].peak_slip);
            cr_assert_eq(x->wheels[i].slide_slip, y->wheels[i].slide_slip);
        }
        cr_assert_eq(s.vehicles[v].controls.steer, t.vehicles[v].controls.steer);
        cr_assert_eq(s.vehicles[v].controls.boost, t.vehicles[v].controls.boost);
    }
    free(one);
    free(two);
    ls_scene_free(&s);
    ls_scene_free(&t);
}

Test(vehicle_scene, a_scene_without_vehicles_writes_as_before)
{
    static const char text[] = "body static plane normal 0 1 0 d 0\nbody dynamic sphere\n";
    ls_scene s;
    parse_ok(text, &s);
    char *out = write_scene(&s);
    cr_assert_null(strstr(out, "vehicle"));
    cr_assert_null(strstr(out, "game"), "push, the default, is not written");
    cr_assert_eq(s.game, LS_SCENE_GAME_PUSH);
    ls_world_def d = ls_scene_world_def(&s);
    cr_assert_eq(d.max_vehicles, ls_default_world_def().max_vehicles);
    free(out);
    ls_scene_free(&s);
}

// The scene's vehicles are the same as the same vehicles built in code: the
// checksum of every tick matches.
Test(vehicle_scene, instantiate_equals_building_in_code)
{
    ls_scene s;
    parse_ok(CARS, &s);
    ls_error err;
    ls_world *w = ls_scene_instantiate(&s, &err);
    cr_assert_not_null(w, "%s", err.message);
    cr_assert_eq(ls_world_vehicle_count(w), 2u);
    // The same world without the vehicle statements, vehicles added by hand.
    ls_scene bare = s;
    bare.vehicle_count = 0;
    ls_world *c = ls_scene_instantiate(&bare, &err);
    cr_assert_not_null(c, "%s", err.message);
    for (uint32_t i = 0; i < 2; i++) {
        ls_vehicle_def d = s.vehicles[i].def;
        d.chassis = ls_world_body_at(c, d.chassis.index1 - 1);
        ls_vehicle_id id = ls_vehicle_create(c, &d, &err);
        cr_assert_neq(id.index1, 0u, "%s", err.message);
        cr_assert_eq(ls_vehicle_set_controls(c, id, &s.vehicles[i].controls), LS_OK);
    }
    cr_assert_eq(ls_world_checksum(w), ls_world_checksum(c));
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
        ls_world_step(c);
        cr_assert_eq(ls_world_checksum(w), ls_world_checksum(c), "tick %d", t);
    }
    // The chassis is the file's body, and the controls are the file's.
    ls_vehicle_id v0 = ls_world_vehicle_at(w, 0), v1 = ls_world_vehicle_at(w, 1);
    cr_assert_eq(ls_vehicle_chassis(w, v0).index1, ls_world_body_at(w, 1).index1);
    cr_assert_eq(ls_vehicle_chassis(w, v1).index1, ls_world_body_at(w, 2).index1);
    ls_vehicle_controls k0 = ls_vehicle_get_controls(w, v0), k1 = ls_vehicle_get_controls(w, v1);
    cr_assert_eq(k0.throttle, LS_FX_ONE);
    cr_assert_eq(k0.steer, LS_FX_ONE / 4);
    cr_assert_eq(k1.brake, LS_FX_HALF);
    cr_assert(k1.handbrake && k1.boost);
    // Car a drove off under full throttle: 2 s at 5000 N on ~900 kg.
    ls_fx speed = ls_vehicle_forward_speed(w, v0);
    cr_assert_gt(speed, LS_FX_INT(2), "forward speed %d raw", speed);
    ls_world_destroy(w);
    ls_world_destroy(c);
    ls_scene_free(&s);
}

// Errors that the parser cannot see (a wheel axis that is not unit) come from
// ls_vehicle_create at instantiation, naming the vehicle and its line.
Test(vehicle_scene, creation_errors_name_the_vehicle_and_its_line)
{
    static const char text[] = "body dynamic box half 1 0.4 2 pos 0 1 0 density 100\n"
                               "body dynamic box half 1 0.4 2 pos 5 1 0 density 100\n"
                               "vehicle 0 car\n"
                               "vehicle 1\n"
                               "wheel mount 1 -0.4 1.6 forward 0 0 3\n"
                               "wheel mount -1 -0.4 1.6\n";
    ls_scene s;
    parse_ok(text, &s);
    ls_error err;
    cr_assert_null(ls_scene_instantiate(&s, &err));
    cr_assert_eq(err.line, 4u);
    cr_assert_eq(err.column, 1u);
    cr_assert(strncmp(err.message, "vehicle 2: ", 11) == 0, "%s", err.message);
    cr_assert(strstr(err.field, "forward") != NULL, "field %s", err.field);
    ls_scene_free(&s);
}

Test(vehicle_scene, errors_name_line_and_column)
{
    static const struct {
        const char *text;
        uint32_t line, column;
        const char *fragment;
    } cases[] = {
        {"body dynamic box\nvehicle 0\nwheel mount 0 0 0\n", 2, 1, "needs 2..8 `wheel` lines"},
        {"body dynamic box\nvehicle 0\nwheel mount 0 0 0\nwheel mount 1 0 0 anti_roll 1 5\n", 4, 29,
         "share a bar with itself"},
        {"body dynamic box\nvehicle 0 car\nwheel mount 0 0 0\n", 3, 1, "must follow a 'vehicle'"},
        {"body dynamic box\nvehicle 0\nwheel mount 0 0 0 mount 1 1 1\n", 3, 19,
         "repeated on this line: mount"},
        {"body dynamic box\nvehicle 0 car steer -1.5\n", 2, 21, "steer (got -1.5; allowed -1..1)"},
        {"body dynamic box\nvehicle 0 car probe laser\n", 2, 21, "got laser; allowed ray, sphere"},
        {"body dynamic box\nvehicle 1 car\n", 2, 9, "unknown body: chassis"},
        {"body kinematic box\nvehicle 0 car\n", 2, 9, "is kinematic"},
        {"game soccer goal_z 10 goal_half_width 3 goal_height 2\n", 1, 6, "needs `ball`"},
        {"body dynamic sphere\ngame soccer ball 0 goal_z 0.1 goal_half_width 3 goal_height 2\n", 2,
         27, "goal_z (got 0.1; allowed 0.5..1000)"},
        {"body dynamic sphere\ngame soccer ball 0 kickoff 100001\n", 2, 28, "kickoff"},
        {"vehicle\n", 1, 8, "missing body (index or label) for: chassis"},
        {"body dynamic box\nvehicle 0 car steer_rate 65\n", 2, 26,
         "steer_rate (got 65; allowed 0..64)"},
        {"body dynamic box\nvehicle 0 car steer_rate -1\n", 2, 26, "steer_rate (got -1;"},
        {"body dynamic box\nvehicle 0\nwheel mount 0 0 0 slip 0.3 0.2\n", 3, 19,
         "slip: slide angle below the peak angle"},
        {"body dynamic box\nvehicle 0\nwheel mount 0 0 0 slip 2 2\n", 3, 24,
         "slip (got 2; allowed 0..1.5)"},
        {"body dynamic box\nvehicle 0\nwheel mount 0 0 0 slip 0.1\n", 3, 27,
         "missing number after: slip"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ls_scene s;
        ls_error err;
        cr_assert_eq(ls_scene_parse(cases[i].text, strlen(cases[i].text), &s, &err), LS_ERR_PARSE,
                     "case %zu accepted", i);
        cr_assert_eq(err.line, cases[i].line, "case %zu: %u:%u %s", i, err.line, err.column,
                     err.message);
        cr_assert_eq(err.column, cases[i].column, "case %zu: %u:%u %s", i, err.line, err.column,
                     err.message);
        cr_assert(strstr(err.message, cases[i].fragment) != NULL, "case %zu: '%s' lacks '%s'", i,
                  err.message, cases[i].fragment);
    }
}

// The shipped vehicle scenes write back to themselves (as values) and run the
// same from the written text.
Test(vehicle_scene, shipped_vehicle_scenes_round_trip)
{
    static const char *const names[] = {
        "tools/scenes/vehicle_flat.scene", "tools/scenes/vehicle_ramp.scene",
        "tools/scenes/vehicle_pile.scene", "tools/scenes/vehicle_slopes.scene"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        ls_scene s, t;
        ls_error err;
        cr_assert_eq(ls_scene_load(names[n], &s, &err), LS_OK, "%s: %s", names[n], err.message);
        cr_assert_gt(s.vehicle_count, 0u);
        char *one = write_scene(&s);
        parse_ok(one, &t);
        char *two = write_scene(&t);
        cr_assert_str_eq(one, two, "%s", names[n]);
        ls_world *a = ls_scene_instantiate(&s, &err), *b = ls_scene_instantiate(&t, &err);
        cr_assert(a && b, "%s", err.message);
        for (int k = 0; k < 60; k++) {
            ls_world_step(a);
            ls_world_step(b);
        }
        cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b), "%s", names[n]);
        ls_world_destroy(a);
        ls_world_destroy(b);
        free(one);
        free(two);
        ls_scene_free(&s);
        ls_scene_free(&t);
    }
}
