// SPDX-License-Identifier: MIT
// `lockstep sim SCENE`: run a scene headless, optionally printing the canonical
// checksum of every tick, then a summary.
#include "cli.h"
#include "ls/fx_text.h"
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cli_command cmd_sim_def = {
    "sim", "run a scene file and print per-tick checksums and a summary",
    "SCENE [--ticks N] [--checksums]\n\n"
    "  --ticks N      ticks to run (default: the scene's `ticks`)\n"
    "  --checksums    print `tick checksum` (hex) for every tick\n"
    "  --trace I      print body I's position and velocity every tick (I = 1-based file order)",
    cmd_sim};

static void print_summary(const ls_world *w)
{
    ls_step_info info = ls_world_info(w);
    char pen[LS_FX_TEXT_MAX];
    ls_fx_format(info.max_penetration, pen);
    printf(
        "ticks %u  bodies %u  awake %u  asleep %u  contacts %u  max_penetration %s m  overflows %u",
        info.tick, ls_world_body_count(w), info.awake_bodies, info.asleep_bodies, info.contacts,
        pen, info.overflow_count);
    if (info.overflow_count) {
        printf(" (first: body %u at tick %u)", info.overflow_body.index1, info.overflow_tick);
    }
    printf("\nfinal checksum %016llx\n", (unsigned long long)ls_world_checksum(w));
}

static void print_trace(const ls_world *w, ls_body_id id)
{
    ls_vec3 p = ls_body_position(w, id), v = ls_body_linear_velocity(w, id);
    char t[6][LS_FX_TEXT_MAX];
    ls_fx_format(p.x, t[0]), ls_fx_format(p.y, t[1]), ls_fx_format(p.z, t[2]);
    ls_fx_format(v.x, t[3]), ls_fx_format(v.y, t[4]), ls_fx_format(v.z, t[5]);
    printf("%u pos %s %s %s vel %s %s %s%s\n", ls_world_tick(w), t[0], t[1], t[2], t[3], t[4], t[5],
           ls_body_is_asleep(w, id) ? " asleep" : "");
}

int cmd_sim(int argc, char **argv)
{
    const char *path = NULL;
    long ticks = -1;
    bool checksums = false;
    long trace = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            char *end;
            ticks = strtol(argv[++i], &end, 10);
            if (*end != '\0' || ticks < 0 || ticks > 100000000) {
                fprintf(stderr, "lockstep sim: --ticks wants 0..100000000\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
            trace = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--checksums") == 0) {
            checksums = true;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr, "lockstep sim: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!path) {
        cli_print_usage(&cmd_sim_def);
        return 2;
    }
    ls_scene scene;
    ls_error err;
    ls_result r = ls_scene_load(path, &scene, &err);
    if (r != LS_OK) {
        cli_print_error("lockstep sim", &err);
        return 1;
    }
    ls_world *w = ls_scene_instantiate(&scene, &err);
    if (!w) {
        ls_error_set_path(&err, path);
        cli_print_error("lockstep sim", &err);
        ls_scene_free(&scene);
        return 1;
    }
    if (trace > 0 && (uint64_t)trace > scene.body_count) {
        fprintf(stderr, "lockstep sim: --trace %ld: %s has %u bodies (1..%u)\n", trace, path,
                scene.body_count, scene.body_count);
        ls_world_destroy(w);
        ls_scene_free(&scene);
        return 2;
    }
    long n = ticks >= 0 ? ticks : (long)scene.ticks;
    for (long t = 0; t < n; t++) {
        ls_world_step(w);
        if (checksums) {
            printf("%u %016llx\n", ls_world_tick(w), (unsigned long long)ls_world_checksum(w));
        }
        if (trace > 0) {
            print_trace(w, ls_world_body_at(w, (uint32_t)(trace - 1)));
        }
    }
    print_summary(w);
    int status = ls_world_info(w).overflow_count ? 3 : 0;
    ls_world_destroy(w);
    ls_scene_free(&scene);
    return status;
}
