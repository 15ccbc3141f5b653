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
    {"arena", 0xe7d6df040750efe3ull},
    {"catapult", 0x727d7822ab49a868ull},
    {"ccd", 0x8a454c29f8dc42bcull},
    {"chain_50", 0x83c93a3652fa1211ull},
    {"cloth_drape", 0x339c222ce5cda7d5ull},
    {"cloth_tear", 0x45af4ff17deed0f2ull},
    {"compound_stairs", 0x12ed4aa9eb632709ull},
    {"dominoes", 0x73ca022b307f10b9ull},
    {"falling_hinges", 0xed192a97ea8899deull},
    {"flag", 0x2ac87e6c6e84da0dull},
    {"heavy_light", 0x6b149b17e9a2434cull},
    {"hull_pile", 0xb518212a1c11905bull},
    {"mesh_terrain", 0xa19e9c76730651e0ull},
    {"pile_1000", 0x7fa9459c8b705d07ull},
    {"pyramid", 0x5631cfe2cf64791full},
    {"ragdoll_stairs", 0x9b90ef6301bb84a0ull},
    {"ragdolls", 0x262aa09090137f62ull},
    {"rain_2000", 0x13a3c2588085f57dull},
    {"rope_bridge", 0xc3b64c5e0dd538ccull},
    {"rope_swing", 0xd3dfade841815ffaull},
    {"six_box_tower", 0x64f20720157d402dull},
    {"slope", 0x58cbac8d3f4606ceull},
    {"soccer", 0xf8b89edccfee6b92ull},
    {"sphere_bounce", 0xb3f02259687672c6ull},
    {"spinner", 0x5eb4a6822025d8c2ull},
    {"tower_imperfect", 0x00afe88ae528fc29ull},
    {"tower_struck", 0x91afad4f5f9ca72aull},
    {"trampoline", 0x5ca8c796ae7f832full},
    {"two_ramps", 0xeb54631d3d7652fdull},
    {"vehicle_flat", 0x82119d32dc7c6408ull},
    {"vehicle_pile", 0x4db6853ff2fa9ff6ull},
    {"vehicle_ramp", 0xcf96574c54004481ull},
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
