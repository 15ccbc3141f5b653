// SPDX-License-Identifier: MIT
// The fake game of the net suites (tests/test_net_core.c, test_net_join.c,
// net/tests/test_udp_peers.c): no physics; each slot's input of a tick is one
// byte that changes every tick, and the state is a hash chained over every tick's
// inputs, so any divergence shows in every later checksum.
#ifndef LS_TEST_NET_FAKE_GAME_H
#define LS_TEST_NET_FAKE_GAME_H

#include "ls/checksum.h"

#include <stddef.h>
#include <stdint.h>

/// Slot's input byte of tick (never 0: the empty input is all zero).
static inline uint8_t fake_input(uint32_t slot, uint32_t tick)
{
    return (uint8_t)(1u + ((tick * 7u + slot * 3u) % 15u));
}

/// The state after tick, from the state before it and every slot's inputs.
static inline uint64_t fake_advance(uint64_t state, uint32_t tick, const uint8_t *inputs,
                                    size_t bytes)
{
    ls_hasher h;
    ls_hasher_init(&h);
    ls_hasher_put_u64(&h, state);
    ls_hasher_put_u32(&h, tick);
    ls_hasher_put_bytes(&h, inputs, bytes);
    return ls_hasher_digest(&h);
}

#endif
