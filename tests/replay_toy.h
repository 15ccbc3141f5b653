// SPDX-License-Identifier: MIT
// The toy game the replay suites verify recordings of (tests/test_replay.c,
// test_replay_claims.c): no physics, the state is a 64-bit hash chained over
// every tick's inputs of TOY_FRAME bytes (define it before including).
#ifndef LS_TEST_REPLAY_TOY_H
#define LS_TEST_REPLAY_TOY_H

#include "ls/checksum.h"
#include "ls/replay.h"

#include <stdlib.h>

#ifndef TOY_FRAME
#error "define TOY_FRAME (bytes of one tick's inputs) before including replay_toy.h"
#endif

typedef struct toy {
    uint64_t h;
} toy;

static uint64_t toy_step(uint64_t h, const uint8_t *inputs)
{
    return ls_hash64(inputs, TOY_FRAME) ^ (h * 0x9E3779B97F4A7C15ull);
}

static void *toy_load(void *user, const uint8_t *scene, size_t scene_size, const uint8_t *kf,
                      size_t kf_size, ls_error *err)
{
    (void)user;
    if (kf && kf_size != 8) {
        ls_error_set(err, LS_ERR_CORRUPT, "keyframe of %zu bytes", kf_size);
        return NULL;
    }
    toy *t = malloc(sizeof *t);
    t->h = kf ? ls_get_u64le(kf) : ls_hash64(scene, scene_size);
    return t;
}

static uint64_t toy_advance(void *user, void *state, uint32_t tick, const uint8_t *inputs)
{
    (void)user, (void)tick;
    toy *t = state;
    t->h = toy_step(t->h, inputs);
    return t->h;
}

static uint64_t toy_checksum(void *user, const void *state)
{
    (void)user;
    return ((const toy *)state)->h;
}

static void toy_destroy(void *user, void *state)
{
    (void)user;
    free(state);
}

#endif
