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
    {"catapult", 0x92eecf11190f8cdcull},
    {"ccd", 0x17f76be63c9e40ccull},
    {"chain_50", 0x48b74fd3ab9614d6ull},
    {"cloth_drape", 0x79dc12c6643614fbull},
    {"cloth_tear", 0x668b53ce20cf5719ull},
    {"compound_stairs", 0xb2190e21dee8620cull},
    {"dominoes", 0x6da04442f538d1f1ull},
    {"falling_hinges", 0x95e4745eabc3f006ull},
    {"flag", 0xf7635b1d79f44d36ull},
    {"heavy_light", 0x42b7d83e1802e8b8ull},
    {"hinge_net", 0x609d0970f7e1a82eull},
    {"hull_pile", 0xb5d0ee9ddff508cdull},
    {"mesh_terrain", 0x1503df9a5f33c03cull},
    {"pile_1000", 0x2df09c1e34ccadb9ull},
    {"pyramid", 0x81629c318dfca708ull},
    {"ragdoll_stairs", 0xf2c1bba48baad740ull},
    {"ragdolls", 0x15946c2acfd0bd38ull},
    {"rain_2000", 0x52f05cd13c61eb2full},
    {"rope_bridge", 0x7c549befdb8d7a20ull},
    {"rope_bridge_loaded", 0xfff38cac1326a4c2ull},
    {"rope_swing", 0x6f000853a6c67ae2ull},
    {"six_box_tower", 0xb1d74ff63dc9be3aull},
    {"slope", 0x14b81844a5891030ull},
    {"soccer", 0x22a52cf1fd26d2edull},
    {"sphere_bounce", 0x072a3e9a18c547c2ull},
    {"spinner", 0xfba36d0eab88dae7ull},
    {"tower_imperfect", 0x787e99f4a0d6a0cdull},
    {"tower_struck", 0xe6e29dfa746f421full},
    {"trampoline", 0xa8a7ed9a8c2bc6f7ull},
    {"two_ramps", 0x83199a7771154cd4ull},
    {"vehicle_flat", 0x568eade3afb7cab5ull},
    {"vehicle_pile", 0x0995eccb1b3c170cull},
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
