// SPDX-License-Identifier: MIT
// libFuzzer harness for the scene parser: any bytes either parse or give an
// error with a line and column; a parsed scene writes back to text that
// parses to the same text again (exact round trip), and instantiates or is
// refused with a message.
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const ls_scene *s)
{
    size_t n = ls_scene_write(s, NULL, 0);
    char *a = malloc(n + 1), *b = NULL;
    ls_scene_write(s, a, n + 1);
    ls_scene again;
    ls_error err;
    if (ls_scene_parse(a, n, &again, &err) != LS_OK) {
        fprintf(stderr, "written scene does not parse: %u:%u %s\n", err.line, err.column,
                err.message);
        abort();
    }
    size_t m = ls_scene_write(&again, NULL, 0);
    b = malloc(m + 1);
    ls_scene_write(&again, b, m + 1);
    if (m != n || memcmp(a, b, n) != 0) {
        fprintf(stderr, "round trip changed the scene\n");
        abort();
    }
    ls_scene_free(&again);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_scene s;
    ls_error err;
    if (ls_scene_parse((const char *)data, size, &s, &err) != LS_OK) {
        if (err.line == 0 || err.column == 0 || err.message[0] == '\0') {
            abort(); // every parse error names where and what
        }
        return 0;
    }
    check_round_trip(&s);
    // Step small scenes a few ticks: parsing is what a stranger controls most,
    // but every accepted scene must also instantiate or be refused with a
    // reason, within a budget (SPEC.md §14), and step without a crash. The
    // declared max_bodies is lowered to the body count so a run stays fast
    // (capacities are tested by tests/test_world.c). Particle statements are
    // stepped up to the default pools (4096 particles, 16384 constraints): a
    // 256 x 256 cloth at 64 iterations takes about 10 s a tick here.
    ls_world_def pools = ls_scene_world_def(&s);
    if (s.body_count <= 256 && pools.max_particles <= 4096 &&
        pools.max_particle_constraints <= 16384) {
        if (s.world.max_bodies > s.body_count) {
            s.world.max_bodies = s.body_count ? s.body_count : 1;
        }
        ls_error why;
        ls_world *w = ls_scene_instantiate_within(&s, (size_t)64 << 20, &why);
        if (w) {
            for (int i = 0; i < 4; i++) {
                ls_world_step(w);
            }
            ls_world_destroy(w);
        } else if (why.code == LS_OK || why.message[0] == '\0') {
            abort(); // every refusal says why
        }
    }
    ls_scene_free(&s);
    return 0;
}
