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
    {"arena", 0xe7d6df040750efe3ull},         {"catapult", 0x2672844c4d652576ull},
    {"ccd", 0xc2896dc3900aecbfull},           {"compound_stairs", 0x7f9d8c56487c3dc1ull},
    {"dominoes", 0x6671574379d12df5ull},      {"hull_pile", 0x0f1a0e84b71ca894ull},
    {"mesh_terrain", 0x41b05489af1551cdull},  {"pile_1000", 0x3466a0ea7e85e43aull},
    {"pyramid", 0x4a66ecea115f8a79ull},       {"rain_2000", 0xae3c794551439eccull},
    {"six_box_tower", 0xcc84b38901a95fd5ull}, {"slope", 0x4a21c3f67035a572ull},
    {"sphere_bounce", 0xb29e1bcbb4e17577ull}, {"tower_struck", 0xbdadf8785dc7fbffull},
    {"two_ramps", 0x61a1148262a88819ull},
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
