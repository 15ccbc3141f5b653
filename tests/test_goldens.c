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
    {"arena", 0x5b85756d2012ec6aull},
    {"catapult", 0x1a59a4e142f6c6fbull},
    {"ccd", 0xd8d8f16d546cdfc7ull},
    {"chain_50", 0xc4d592967831c4acull},
    {"cloth_drape", 0x1bf8fc17fe6e8efbull},
    {"cloth_tear", 0x2d536146a3ab99b8ull},
    {"compound_stairs", 0x3beefc16634e211dull},
    {"dominoes", 0x362b1243d0936c60ull},
    {"falling_hinges", 0xb99a2a799f36a32aull},
    {"flag", 0x2ac87e6c6e84da0dull},
    {"heavy_light", 0x7950ecf493cb67b8ull},
    {"hull_pile", 0x2f6673874ac4b175ull},
    {"mesh_terrain", 0x30cbd0616fdc9150ull},
    {"pile_1000", 0x605c10fdf93779e1ull},
    {"pyramid", 0xadd15927fcbd47d3ull},
    {"ragdoll_stairs", 0x9b90ef6301bb84a0ull},
    {"ragdolls", 0x6e127c94491e279bull},
    {"rain_2000", 0x15dfcc22181158e1ull},
    {"rope_bridge", 0xee4c7d8060cf20aeull},
    {"rope_swing", 0x868ed660e0172a04ull},
    {"six_box_tower", 0xb1d74ff63dc9be3aull},
    {"slope", 0x0f1f5fcbbea06397ull},
    {"soccer", 0x14f7f4db2e47da69ull},
    {"sphere_bounce", 0x072a3e9a18c547c2ull},
    {"spinner", 0x71ec71a0221d8490ull},
    {"tower_imperfect", 0xc5aaf49d647266c2ull},
    {"tower_struck", 0x4f686e2336bec165ull},
    {"trampoline", 0xd1fa8b83080b7318ull},
    {"two_ramps", 0x8c9fe65cfe285407ull},
    {"vehicle_flat", 0x0a66ed19cd7fda31ull},
    {"vehicle_pile", 0xe16748e01a3603c4ull},
    {"vehicle_ramp", 0xbab9d078aa9c7996ull},
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
