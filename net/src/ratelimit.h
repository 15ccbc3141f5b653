// SPDX-License-Identifier: MIT
// Private: a per-source token bucket over a fixed-size table, so a flood from
// many addresses costs bounded memory (the stalest entry is evicted).
#ifndef LS_NET_RATELIMIT_H
#define LS_NET_RATELIMIT_H

#include "ls/net_wire.h"

typedef struct ls_net_bucket {
    ls_net_addr addr;
    uint64_t tokens; // in millionths of a packet
    uint64_t last_us;
    bool used;
} ls_net_bucket;

typedef struct ls_net_ratelimit {
    ls_net_bucket *b;
    uint32_t size;
    uint64_t rate_pps, burst;
    uint64_t
        evicted; ///< buckets of another source replaced (their source restarts with a full burst)
} ls_net_ratelimit;

/// The table size for a relay of max_sessions sessions: a power of two with 16
/// entries per session (4 peers in a usual match, spectators; a quarter full),
/// so that a relay at capacity evicts nobody's bucket. At least 1024, at most 2^20.
uint32_t ls_net_ratelimit_size_(uint32_t max_sessions);

ls_result ls_net_ratelimit_init_(ls_net_ratelimit *l, uint32_t size, uint32_t rate_pps,
                                 uint32_t burst);
void ls_net_ratelimit_free_(ls_net_ratelimit *l);
/// True if one more packet from `from` at now_us is within its rate.
bool ls_net_ratelimit_allow_(ls_net_ratelimit *l, const ls_net_addr *from, uint64_t now_us);

#endif
