// SPDX-License-Identifier: MIT
// Scene text (SPEC.md §14) pinned byte for byte: every shipped scene writes
// the same text as before and round-trips; every bad scene fails with the
// same code, line, column and message; an unknown keyword in any statement
// is refused at its line:column. The pins were computed before the scene
// properties moved into tables (issue 32), so these tests prove that move
// changed nothing.
#define _POSIX_C_SOURCE 200809L
#include "ls/checksum.h"
#include "ls/scene.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

// The sorted names of the files in dir ending in ext (at most cap).
static size_t list_files(const char *dir, const char *ext, char **names, size_t cap)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    struct dirent *e;
    size_t n = 0, elen = strlen(ext);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > elen && strcmp(e->d_name + len - elen, ext) == 0 && n < cap) {
            names[n] = malloc(len + 1);
            memcpy(names[n++], e->d_name, len + 1);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    return n;
}

static char *write_text(const ls_scene *s, size_t *len)
{
    *len = ls_scene_write(s, NULL, 0);
    char *text = malloc(*len + 1);
    cr_assert_not_null(text);
    cr_assert_eq(ls_scene_write(s, text, *len + 1), *len);
    return text;
}

// XXH3-64 of ls_scene_write's text of each tools/scenes/*.scene.
static const struct {
    const char *name;
    uint64_t hash;
} written[] = {
    {"arena.scene", 0xd546909b475deb0bull},
    {"ball_into_cloth.scene", 0x4af0bac722a878cdull},
    {"catapult.scene", 0x4d5bb4418b31761aull},
    {"ccd.scene", 0xd3bb7f8146bb7ce3ull},
    {"chain_50.scene", 0x544d0b14d52ff90dull},
    {"cloth_drape.scene", 0xf03a23aeb9408856ull},
    {"cloth_tear.scene", 0xe0a2ebf6ed7ef811ull},
    {"compound_stairs.scene", 0x608030f0b7a29f6cull},
    {"dominoes.scene", 0x2e8430d30ded64cdull},
    {"falling_hinges.scene", 0xff2fa57d8935780eull},
    {"flag.scene", 0x6948ef5d3e92cc74ull},
    {"heavy_light.scene", 0xd6a908212c945b22ull},
    {"hinge_net.scene", 0x4419054a598a7538ull},
    {"hull_pile.scene", 0xd56bf57143ce9a46ull},
    {"mesh_terrain.scene", 0x5d0751a7d6794f7bull},
    {"pile_1000.scene", 0xabe6a9b2b7cb7beaull},
    {"pyramid.scene", 0xcff72cd590b7459cull},
    {"ragdoll_stairs.scene", 0x63531232b2680e39ull},
    {"ragdolls.scene", 0x37ff562eb9bbfa97ull},
    {"rain_2000.scene", 0x45af82e2ab692bc3ull},
    {"rope_bridge.scene", 0x70737ceef5eea827ull},
    {"rope_bridge_loaded.scene", 0x23b1db9db3435d67ull},
    {"rope_swing.scene", 0xcd5c44b90b461781ull},
    {"six_box_tower.scene", 0x7c418a7e5ce34df0ull},
    {"slope.scene", 0xffa075351c4aebd9ull},
    {"soccer.scene", 0x168232f60277c869ull},
    {"sphere_bounce.scene", 0x58a5bb415bae358full},
    {"spinner.scene", 0x4128f5a074d3e028ull},
    {"tower_imperfect.scene", 0xfe2ef2436f017e79ull},
    {"tower_struck.scene", 0x3a511736c4e12589ull},
    {"trampoline.scene", 0x95c9049ec33c432dull},
    {"two_ramps.scene", 0x050c51bf76f02deaull},
    {"vehicle_flat.scene", 0x4fb3844aa4a0c32dull},
    {"vehicle_pile.scene", 0xf8b12b4f40265d0cull},
    {"vehicle_ramp.scene", 0x9b87a22648a1674dull},
    {"vehicle_slopes.scene", 0x40739d0f9201563bull},
};

Test(scene_text, every_shipped_scene_round_trips_byte_for_byte)
{
    char *names[256];
    size_t n = list_files("tools/scenes", ".scene", names, 256);
    cr_assert_eq(n, sizeof written / sizeof written[0], "%zu scenes, %zu pinned", n,
                 sizeof written / sizeof written[0]);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "tools/scenes/%s", names[i]);
        ls_scene s, again;
        ls_error err;
        cr_assert_eq(ls_scene_load(path, &s, &err), LS_OK, "%s: %u:%u %s", path, err.line,
                     err.column, err.message);
        size_t len1, len2;
        char *first = write_text(&s, &len1);
        cr_assert_eq(ls_scene_parse(first, len1, &again, &err), LS_OK, "%s rewritten: %u:%u %s",
                     path, err.line, err.column, err.message);
        char *second = write_text(&again, &len2);
        cr_assert_eq(len1, len2, "%s", path);
        cr_assert(memcmp(first, second, len1) == 0, "%s: written text does not round-trip", path);
        uint64_t h = ls_hash64(first, len1);
        cr_assert_str_eq(written[i].name, names[i]);
        cr_assert_eq(h, written[i].hash, "%s: XXH3 0x%016llx, pinned 0x%016llx", path,
                     (unsigned long long)h, (unsigned long long)written[i].hash);
        free(first);
        free(second);
        ls_scene_free(&s);
        ls_scene_free(&again);
        free(names[i]);
    }
}

// Code, line, column and message of each tests/scenes_bad/*.scene.
static const struct {
    const char *name;
    ls_result code;
    uint32_t line, column;
    const char *message;
} refused[] = {
    {"bad_statement.scene", LS_ERR_PARSE, 2, 1,
     "expected 'world', 'body', 'shape' or 'joint', got: bodies; particle systems: cloth, rope, "
     "ragdoll_particles, particle_body; vehicle, wheel, game"},
    {"box_points.scene", LS_ERR_PARSE, 2, 18,
     "points, vertices, triangles and obj: belong to hull and mesh shapes only"},
    {"cloth_bad_pins.scene", LS_ERR_PARSE, 2, 21,
     "cloth pin: middle (unknown; names joined by '+': corner00, corner10, corner01, corner11, "
     "edge_v0, edge_v1, edge_u0, edge_u1, corners, edges; or none)"},
    {"cloth_beyond_world.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "cloth 1: the cloth reaches beyond +-2048 m"},
    {"cloth_grid_range.scene", LS_ERR_PARSE, 2, 12,
     "integer out of range for: grid (got 1; allowed 2..256)"},
    {"cloth_light_particles.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "cloth 1: cloth mass / 10000 particles must be 0.001..1000 kg"},
    {"cloth_parallel_axes.scene", LS_ERR_INVALID_ARGUMENT, 3, 1,
     "cloth 1: axis_v is zero or within 30 degrees of axis_u"},
    {"cloth_spacing_range.scene", LS_ERR_PARSE, 3, 15,
     "number out of range for: spacing (got 100; allowed 0.01..64)"},
    {"cloth_tear_range.scene", LS_ERR_PARSE, 2, 21,
     "number out of range for: tear (got 0.5; allowed 0 (never) or 1..64)"},
    {"cloth_zero_axis.scene", LS_ERR_PARSE, 2, 7, "axis_u: zero vector has no direction"},
    {"dynamic_mesh.scene", LS_ERR_INVALID_ARGUMENT, 2, 1,
     "body 1: a mesh must be on a static body"},
    {"dynamic_plane.scene", LS_ERR_INVALID_ARGUMENT, 2, 1,
     "body 1: a plane must be on a static body"},
    {"far_body.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "body 1: position.z outside +-2048 m (got -3000)"},
    {"fast_body.scene", LS_ERR_OUT_OF_RANGE, 3, 1,
     "body 2: linear_velocity faster than 512 m/s (got 1000)"},
    {"game_push_property.scene", LS_ERR_PARSE, 2, 11, "unknown push property: ball"},
    {"game_soccer_missing_goal.scene", LS_ERR_PARSE, 3, 6, "soccer: needs `goal_height`"},
    {"game_soccer_static_ball.scene", LS_ERR_PARSE, 3, 18, "ball: body 0 is not dynamic"},
    {"game_twice.scene", LS_ERR_PARSE, 3, 1, "a second 'game' line: the first is on line 2"},
    {"game_unknown.scene", LS_ERR_PARSE, 2, 6,
     "unknown word for: game (got hockey; allowed push, soccer)"},
    {"heavy_box.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "body 1: mass (kg) 8000000 outside the supported range (SPEC.md section 5)"},
    {"heavy_capsule.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "body 1: mass (kg) 282743338 outside the supported range (SPEC.md section 5)"},
    {"heavy_sphere.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "body 1: mass (kg) 523598775 outside the supported range (SPEC.md section 5)"},
    {"hull_coplanar.scene", LS_ERR_PARSE, 2, 19,
     "hull points: all 4 points are coplanar: a hull needs volume"},
    {"hull_far_point.scene", LS_ERR_PARSE, 2, 19,
     "hull points: point 1: x = 100 is outside the hull coordinate range +-64 m"},
    {"hull_no_points.scene", LS_ERR_PARSE, 2, 1, "hull: needs `points N x y z ...` (4..256)"},
    {"hull_three_points.scene", LS_ERR_PARSE, 2, 26,
     "integer out of range for: points (got 3; allowed 4..256)"},
    {"int_out_of_range.scene", LS_ERR_PARSE, 2, 17,
     "integer out of range for: tick_rate (got 500; allowed 30..120)"},
    {"joint_cone_range.scene", LS_ERR_OUT_OF_RANGE, 4, 1,
     "joint 1: cone_angle outside 0..pi rad (got 3.49066)"},
    {"joint_distance_motor.scene", LS_ERR_PARSE, 4, 33,
     "motor: does not apply to a distance joint"},
    {"joint_duplicate_label.scene", LS_ERR_PARSE, 3, 35,
     "duplicate label: arm already names body 0"},
    {"joint_limits_reversed.scene", LS_ERR_PARSE, 4, 41, "limits: lower above upper"},
    {"joint_missing_axis.scene", LS_ERR_PARSE, 4, 7, "hinge: needs `axis X Y Z`"},
    {"joint_same_body.scene", LS_ERR_PARSE, 3, 15,
     "same body twice: a joint joins two different bodies"},
    {"joint_unknown_label.scene", LS_ERR_PARSE, 4, 18,
     "unknown body: body b (no earlier body is labelled wheel)"},
    {"long_token.scene", LS_ERR_PARSE, 2, 22, "not a number for: pos"},
    {"mesh_bad_index.scene", LS_ERR_PARSE, 2, 18,
     "mesh: triangle 0: vertex index 7 is out of range (the mesh has 3 vertices)"},
    {"mesh_bad_obj.scene", LS_ERR_PARSE, 2, 22,
     "mesh obj: bad_mesh.obj:2:3: vertex index 1 is out of range: 0 vertices are defined so far"},
    {"mesh_degenerate.scene", LS_ERR_PARSE, 2, 18,
     "mesh: triangle 0 (vertices 0 1 2) is degenerate: its area is below 2^-11 m^2"},
    {"mesh_missing_obj.scene", LS_ERR_PARSE, 2, 22, "mesh obj: missing.obj: cannot open the file"},
    {"mesh_obj_escape.scene", LS_ERR_PARSE, 2, 22,
     "mesh obj: ../x.obj: the path must be relative to the scene file and stay below it (no '..')"},
    {"missing_number.scene", LS_ERR_PARSE, 2, 25, "missing number after: pos"},
    {"negative_int.scene", LS_ERR_PARSE, 2, 12,
     "integer out of range for: seed (got -1; allowed 0..4294967295)"},
    {"not_a_number.scene", LS_ERR_PARSE, 2, 24, "not a number for: pos"},
    {"number_out_of_range.scene", LS_ERR_PARSE, 2, 26,
     "number out of range for: pos (got 40000; Q16.16 holds -32768..32767.99998)"},
    {"particle_body_hull_points.scene", LS_ERR_PARSE, 2, 1,
     "hull: needs `points N x y z ...` (4..256)"},
    {"particle_body_plane.scene", LS_ERR_PARSE, 2, 15,
     "plane: a particle_body embeds a sphere, box, capsule or hull"},
    {"particle_body_repeated_radius.scene", LS_ERR_PARSE, 2, 54, "repeated on this line: radius"},
    {"particles_damping_range.scene", LS_ERR_PARSE, 2, 27,
     "number out of range for: damping (got 1.5; allowed 0..1)"},
    {"particles_iterations.scene", LS_ERR_PARSE, 2, 18,
     "integer out of range for: iterations (got 0; allowed 1..64)"},
    {"particles_not_applicable.scene", LS_ERR_PARSE, 2, 17, "grid: does not apply to rope"},
    {"particles_pinned_order.scene", LS_ERR_PARSE, 2, 18,
     "pinned: indices must be strictly ascending"},
    {"particles_pinned_range.scene", LS_ERR_PARSE, 2, 17,
     "pinned: index 9, but the rope has 5 particles (0..4)"},
    {"particles_repeated.scene", LS_ERR_PARSE, 2, 19, "repeated on this line: spacing"},
    {"particles_seed_range.scene", LS_ERR_PARSE, 2, 12,
     "integer out of range for: seed (got 18446744073709551616; allowed 0..18446744073709551615)"},
    {"particles_stick_mode.scene", LS_ERR_PARSE, 2, 13,
     "unknown word for: stick (got fast; allowed approx, exact)"},
    {"particles_unknown_property.scene", LS_ERR_PARSE, 2, 16, "unknown particle property: wobble"},
    {"particles_wind_range.scene", LS_ERR_PARSE, 2, 16,
     "number out of range for: wind (got 2000; allowed -1000..1000)"},
    {"player_gap.scene", LS_ERR_PARSE, 4, 1, "player: 0 has no body"},
    {"player_twice.scene", LS_ERR_PARSE, 3, 1, "player: 0 already belongs to body 1"},
    {"ragdoll_height_range.scene", LS_ERR_PARSE, 2, 26,
     "number out of range for: height (got 20; allowed 0.2..10)"},
    {"repeated_keyword.scene", LS_ERR_PARSE, 2, 28, "repeated on this line:: pos"},
    {"repeated_world_key.scene", LS_ERR_PARSE, 2, 20, "repeated on this line:: tick_rate"},
    {"rope_bad_pin.scene", LS_ERR_PARSE, 2, 10,
     "unknown word for: pin (got top; allowed none, start, end, both)"},
    {"rope_unknown_attach.scene", LS_ERR_PARSE, 3, 37,
     "unknown body: attach_end (no earlier body is labelled crane)"},
    {"second_world.scene", LS_ERR_PARSE, 3, 1, "a second 'world' line: the first is on line 2"},
    {"shape_before_body.scene", LS_ERR_PARSE, 2, 1,
     "a 'shape' line: must follow the 'body' line it adds to"},
    {"shape_body_property.scene", LS_ERR_PARSE, 3, 23, "unknown shape property: pos"},
    {"thin_box.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "body 1: shape.half_extents.y outside 0.05..64 m (got 0.01)"},
    {"tiny_quat.scene", LS_ERR_PARSE, 2, 18,
     "quat: length below 1/256 (all zero?): cannot be normalised"},
    {"two_shapes.scene", LS_ERR_PARSE, 2, 18, "repeated on this line:: sphere"},
    {"two_types.scene", LS_ERR_PARSE, 2, 14, "repeated on this line:: static"},
    {"unknown_property.scene", LS_ERR_PARSE, 2, 18, "unknown body property: colour"},
    {"unknown_world_property.scene", LS_ERR_PARSE, 2, 7, "unknown world property: speed"},
    {"vehicle_car_not_box.scene", LS_ERR_PARSE, 3, 11,
     "car: the chassis (body 0) must be a box for `car` (got sphere)"},
    {"vehicle_car_not_first.scene", LS_ERR_PARSE, 3, 23, "car: must come right after the chassis"},
    {"vehicle_chassis_twice.scene", LS_ERR_PARSE, 4, 9,
     "chassis: body 0 already carries vehicle 1 (line 3)"},
    {"vehicle_nine_wheels.scene", LS_ERR_PARSE, 12, 1,
     "a 'wheel' line: a vehicle has at most 8 wheels"},
    {"vehicle_one_wheel.scene", LS_ERR_PARSE, 3, 1,
     "vehicle: needs 2..8 `wheel` lines right after it (got 1)"},
    {"vehicle_static_chassis.scene", LS_ERR_PARSE, 3, 9,
     "chassis: body 0 is static; a vehicle drives a dynamic body"},
    {"vehicle_throttle_range.scene", LS_ERR_PARSE, 3, 24,
     "number out of range for: throttle (got 2; allowed -1..1)"},
    {"vehicle_unknown_chassis.scene", LS_ERR_PARSE, 3, 9,
     "unknown body: chassis (got 3; 1 bodies so far, numbered from 0)"},
    {"vehicle_unknown_property.scene", LS_ERR_PARSE, 3, 15, "unknown vehicle property: turbo"},
    {"very_fast_body.scene", LS_ERR_OUT_OF_RANGE, 2, 1,
     "body 1: linear_velocity faster than 512 m/s (got 32000)"},
    {"wheel_anti_roll_range.scene", LS_ERR_PARSE, 4, 34,
     "anti_roll: wheel 5, but the vehicle has 2 wheels (0..1)"},
    {"wheel_axis_not_unit.scene", LS_ERR_OUT_OF_RANGE, 3, 1,
     "vehicle 1: wheel axis must be a unit vector"},
    {"wheel_friction_order.scene", LS_ERR_PARSE, 4, 24, "friction: dynamic (sliding) above static"},
    {"wheel_missing_mount.scene", LS_ERR_PARSE, 4, 1, "wheel: needs `mount X Y Z`"},
    {"wheel_radius_range.scene", LS_ERR_PARSE, 4, 31,
     "number out of range for: radius (got 5; allowed 0.05..4)"},
    {"wheel_without_vehicle.scene", LS_ERR_PARSE, 3, 1,
     "a 'wheel' line: must follow a 'vehicle' line (not a `car`: it has its wheels) or its other "
     "wheels"},
    {"wheel_zero_axis.scene", LS_ERR_PARSE, 4, 24, "axis: zero vector has no direction"},
    {"zero_normal.scene", LS_ERR_PARSE, 2, 19, "normal: zero vector has no direction"},
    {"zero_quat.scene", LS_ERR_PARSE, 2, 18,
     "quat: length below 1/256 (all zero?): cannot be normalised"},
};

Test(scene_text, every_bad_scene_fails_as_before)
{
    char *names[256];
    size_t n = list_files("tests/scenes_bad", ".scene", names, 256);
    cr_assert_eq(n, sizeof refused / sizeof refused[0], "%zu bad scenes, %zu pinned", n,
                 sizeof refused / sizeof refused[0]);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "tests/scenes_bad/%s", names[i]);
        ls_scene s;
        ls_error err;
        ls_result r = ls_scene_load(path, &s, &err);
        if (r == LS_OK) {
            ls_world *w = ls_scene_instantiate(&s, &err);
            cr_assert_null(w, "%s was accepted", path);
            r = err.code;
            ls_scene_free(&s);
        }
        cr_assert_str_eq(refused[i].name, names[i]);
        cr_assert_eq(r, refused[i].code, "%s: %d", path, (int)r);
        cr_assert_eq(err.line, refused[i].line, "%s: line %u", path, err.line);
        cr_assert_eq(err.column, refused[i].column, "%s: column %u", path, err.column);
        cr_assert_str_eq(err.message, refused[i].message, "%s", path);
        free(names[i]);
    }
}

// An unknown keyword in every kind of statement: LS_ERR_PARSE at its line:column.
Test(scene_text, an_unknown_keyword_is_refused_in_every_statement)
{
    static const char base[] = "body static box half 5 1 5 label ground\n"
                               "body dynamic box half 1 0.5 2 pos 0 2 0 label car\n"
                               "body dynamic sphere radius 0.5 pos 4 2 0\n";
    static const struct {
        const char *line; // appended to base (line 4); the unknown word is `bogus`
        const char *message;
    } cases[] = {
        {"world tick_rate 60 bogus 1", "unknown world property: bogus"},
        {"body dynamic sphere radius 1 bogus", "unknown body property: bogus"},
        {"shape sphere radius 1 bogus", "unknown shape property: bogus"},
        {"joint ball ground car anchor 0 1 0 bogus", "unknown joint property: bogus"},
        {"joint hinge ground car anchor 0 1 0 axis 0 1 0 bogus 1", "unknown joint property: bogus"},
        {"cloth grid 4 4 bogus", "unknown particle property: bogus"},
        {"rope segments 4 bogus", "unknown particle property: bogus"},
        {"ragdoll_particles pos 0 3 0 bogus", "unknown particle property: bogus"},
        {"particle_body sphere radius 0.5 pos 0 3 0 bogus", "unknown particle property: bogus"},
        {"vehicle car engine 100 bogus", "unknown vehicle property: bogus"},
        {"vehicle car\nwheel mount 1 0 1 bogus", "unknown wheel property: bogus"},
        {"game push bogus", "unknown push property: bogus"},
        {"game soccer ball 2 goal_z 10 bogus", "unknown soccer property: bogus"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s\n", base, cases[i].line);
        const char *last = strrchr(text, '\n');
        while (last > text && last[-1] != '\n') {
            last--;
        }
        uint32_t line = 1;
        for (const char *p = text; p < last; p++) {
            line += *p == '\n';
        }
        uint32_t column = (uint32_t)(strstr(last, "bogus") - last) + 1;
        ls_scene s;
        ls_error err;
        cr_assert_eq(ls_scene_parse(text, strlen(text), &s, &err), LS_ERR_PARSE, "%s",
                     cases[i].line);
        cr_assert_eq(err.line, line, "%s: line %u", cases[i].line, err.line);
        cr_assert_eq(err.column, column, "%s: column %u", cases[i].line, err.column);
        cr_assert_str_eq(err.message, cases[i].message, "%s", cases[i].line);
    }
}
