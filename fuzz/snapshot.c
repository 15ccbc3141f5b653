// SPDX-License-Identifier: MIT
// libFuzzer harness: keyframes are ls_world_snapshot_save bytes, and a replay
// from a stranger carries them. Restore must refuse what a world never wrote
// (naming why) and accept only states that step without a crash; an accepted
// state saves back to the same bytes.
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// The worlds inputs are restored into: tools/scenes/arena.scene's definition
// (17 bodies) and tests/shapes/every_kind.scene's (hulls, meshes, compound
// bodies: its snapshots carry a geometry table). An input goes to the world
// whose max_bodies and max_shapes its header names (SPEC.md §13 words 2, 3),
// else to the arena (which refuses it). Seeds in fuzz/corpus/snapshot are
// snapshots of both, saved at several ticks.
static ls_world *world_for(const uint8_t *data, size_t size)
{
    static const char *const paths[2] = {"tools/scenes/arena.scene",
                                         "tests/shapes/every_kind.scene"};
    static ls_scene scenes[2];
    static bool loaded;
    if (!loaded) {
        for (int i = 0; i < 2; i++) {
            ls_error err;
            if (ls_scene_load(paths[i], &scenes[i], &err) != LS_OK) {
                fprintf(stderr, "run from the repository root: %s\n", err.message);
                abort();
            }
        }
        loaded = true;
    }
    int pick = 0;
    if (size >= 16) {
        ls_world_def d = ls_scene_world_def(&scenes[1]);
        uint32_t max_shapes = d.max_shapes ? d.max_shapes : d.max_bodies;
        pick = ls_get_u32le(data + 8) == d.max_bodies && ls_get_u32le(data + 12) == max_shapes;
    }
    return ls_scene_instantiate(&scenes[pick], NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_world *w = world_for(data, size);
    ls_error err;
    if (ls_world_snapshot_restore(w, data, size, &err) != LS_OK) {
        if (err.code == LS_OK || err.message[0] == '\0') {
            abort(); // every refusal says why
        }
    } else {
        size_t n = ls_world_snapshot_size(w);
        uint8_t *again = malloc(n);
        if (ls_world_snapshot_save(w, again, n) != n || n != size || memcmp(again, data, n) != 0) {
            abort(); // restore then save is the identity on accepted states
        }
        free(again);
        for (int i = 0; i < 3; i++) {
            ls_world_step(w);
        }
        (void)ls_world_checksum(w);
    }
    ls_world_destroy(w);
    return 0;
}
