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

// The world every input is restored into: tools/scenes/arena.scene's
// definition (17 bodies: seeds in fuzz/corpus/snapshot are its snapshots).
static ls_world *arena(void)
{
    static ls_scene scene;
    static bool loaded;
    if (!loaded) {
        ls_error err;
        if (ls_scene_load("tools/scenes/arena.scene", &scene, &err) != LS_OK) {
            fprintf(stderr, "run from the repository root: %s\n", err.message);
            abort();
        }
        loaded = true;
    }
    return ls_scene_instantiate(&scene, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_world *w = arena();
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
