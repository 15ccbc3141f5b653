// SPDX-License-Identifier: MIT
// Golden checksums: every shipped scene, run for its own tick count, must end
// on exactly this world checksum. A change here is a change of simulation
// results: update it deliberately and add a CHANGELOG line saying why.
// (`make crosscheck` compares the whole per-tick stream on every target.)
#define _POSIX_C_SOURCE 200809L // dirent
#include "ls/scene.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

typedef struct golden {
    char scene[24];    // inline: Criterion copies parameters into another process
    uint64_t checksum; // after the scene's `ticks`
} golden;

static golden goldens[] = {
    {"arena", 0xe9e178482fa9200full},
    {"ball_into_cloth", 0x2a2bcbd20fd469a3ull},
    {"catapult", 0xe660c70a729758f7ull},
    {"ccd", 0xb031b02bbc05b591ull},
    {"chain_50", 0x69ad6342d36b936cull},
    {"cloth_drape", 0x79dc12c6643614fbull},
    {"cloth_tear", 0x6b5b698ca3edfa9aull},
    {"compound_stairs", 0x9bdb1ed0d3395b71ull},
    {"dominoes", 0x189721bc8c1735abull},
    {"falling_hinges", 0xcb9ac5fb52635784ull},
    {"flag", 0xf7635b1d79f44d36ull},
    {"heavy_light", 0x42b7d83e1802e8b8ull},
    {"hinge_net", 0x609d0970f7e1a82eull},
    {"hull_pile", 0x656fb89838277a27ull},
    {"mesh_terrain", 0xf11587a586ac5df3ull},
    {"pile_1000", 0x73dbd1aec81c6310ull},
    {"pyramid", 0x81629c318dfca708ull},
    {"ragdoll_stairs", 0xf2c1bba48baad740ull},
    {"ragdolls", 0x5b3e8e299d36e0b5ull},
    {"rain_2000", 0x3c6c5f866e74cfa9ull},
    {"rope_bridge", 0x5851f8a744020576ull},
    {"rope_bridge_loaded", 0xf04e61b2607a13deull},
    {"rope_swing", 0x1cff5dd39079d235ull},
    {"six_box_tower", 0xb1d74ff63dc9be3aull},
    {"slope", 0x14b81844a5891030ull},
    {"soccer", 0x22a52cf1fd26d2edull},
    {"sphere_bounce", 0x072a3e9a18c547c2ull},
    {"spinner", 0xb82a295e6610e651ull},
    {"tower_imperfect", 0x787e99f4a0d6a0cdull},
    {"tower_struck", 0x064804efc808a637ull},
    {"trampoline", 0xa8a7ed9a8c2bc6f7ull},
    {"two_ramps", 0x19ae54bd6f2b09bcull},
    {"vehicle_flat", 0xe0cf03bfce412e8full},
    {"vehicle_pile", 0x33cea8780634e27full},
    {"vehicle_ramp", 0x0e04027bd5c5923cull},
    {"vehicle_slopes", 0xe47ca067e96b1c4dull},
};

ParameterizedTestParameters(goldens, shipped_scene_ends_on_its_golden_checksum)
{
    return cr_make_param_array(golden, goldens, sizeof goldens / sizeof goldens[0]);
}

ParameterizedTest(golden *g, goldens, shipped_scene_ends_on_its_golden_checksum)
{
    char path[128];
    snprintf(path, sizeof path, "tools/scenes/%s.scene", g->scene);
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_load(path, &s, &err), LS_OK, "%s:%u:%u %s", path, err.line, err.column,
                 err.message);
    ls_error ierr;
    ls_world *w = ls_scene_instantiate(&s, &ierr);
    cr_assert_not_null(w, "%s", ierr.message);
    for (uint32_t t = 0; t < s.ticks; t++) {
        ls_world_step(w);
    }
    uint64_t got = ls_world_checksum(w);
    cr_assert_eq(ls_world_info(w).overflow_count, 0u, "%s overflowed (or was buried)", g->scene);
    // No body ends below a static plane (its centre of mass on the wrong side).
    for (uint32_t i = 0; i < ls_world_body_count(w); i++) {
        ls_body_id pid = ls_world_body_at(w, i);
        ls_shape_def ps = ls_body_shape(w, pid);
        if (ps.type != LS_SHAPE_PLANE) {
            continue;
        }
        for (uint32_t j = 0; j < ls_world_body_count(w); j++) {
            ls_body_id id = ls_world_body_at(w, j);
            if (ls_body_type_of(w, id) != LS_BODY_DYNAMIC) {
                continue;
            }
            ls_vec3 p = ls_body_position(w, id);
            ls_fx side = ls_fx_sub(ls_vec3_dot(ps.normal, p), ps.plane_d);
            cr_assert_geq(side, 0, "%s: body %u ends below the plane of body %u", g->scene, j + 1,
                          i + 1);
        }
    }
    cr_assert_eq(got, g->checksum, "%s after %u ticks: %016llx, golden %016llx", g->scene, s.ticks,
                 (unsigned long long)got, (unsigned long long)g->checksum);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(goldens, every_shipped_scene_has_a_golden)
{
    // A new scene under tools/scenes/ must get a line above.
    DIR *d = opendir("tools/scenes");
    cr_assert_not_null(d);
    unsigned n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        n += len > 6 && strcmp(e->d_name + len - 6, ".scene") == 0;
    }
    closedir(d);
    cr_assert_eq(n, sizeof goldens / sizeof goldens[0], "%u scenes, %zu goldens", n,
                 sizeof goldens / sizeof goldens[0]);
}
