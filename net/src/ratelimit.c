// SPDX-License-Identifier: MIT
// Per-source token buckets in an open-addressed table with a short probe.
#include "ratelimit.h"

#include <stdlib.h>
#include <string.h>

#define PROBE 16
#define UNIT  1000000u

ls_result ls_net_ratelimit_init_(ls_net_ratelimit *l, uint32_t size, uint32_t rate_pps,
                                 uint32_t burst)
{
    memset(l, 0, sizeof *l);
    l->b = calloc(size, sizeof *l->b);
    if (!l->b) {
        return LS_ERR_NO_MEMORY;
    }
    l->size = size;
    l->rate_pps = rate_pps;
    l->burst = burst;
    return LS_OK;
}

uint32_t ls_net_ratelimit_size_(uint32_t max_sessions)
{
    uint64_t want = (uint64_t)max_sessions * 16u;
    uint32_t size = 1024;
    while (size < want && size < (1u << 20)) {
        size <<= 1;
    }
    return size;
}

void ls_net_ratelimit_free_(ls_net_ratelimit *l)
{
    free(l->b);
    memset(l, 0, sizeof *l);
}

static uint32_t hash_addr(const ls_net_addr *a)
{
    uint32_t h = 2166136261u; // FNV-1a over the address bytes and port
    for (int i = 0; i < 16; i++) {
        h = (h ^ a->ip[i]) * 16777619u;
    }
    h = (h ^ (a->port & 0xFFu)) * 16777619u;
    h = (h ^ (uint32_t)(a->port >> 8)) * 16777619u;
    h ^= a->family;
    // FNV-1a's low bits mix poorly for keys that differ in their last bytes
    // (addresses of one subnet): finish with murmur3's avalanche.
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    return h ^ (h >> 16);
}

bool ls_net_ratelimit_allow_(ls_net_ratelimit *l, const ls_net_addr *from, uint64_t now)
{
    uint32_t start = hash_addr(from) % l->size;
    ls_net_bucket *b = NULL, *victim = NULL;
    for (uint32_t i = 0; i < PROBE && !b; i++) {
        ls_net_bucket *c = &l->b[(start + i) % l->size];
        if (c->used && ls_net_addr_equal(&c->addr, from)) {
            b = c;
        } else if (!victim || !c->used || (victim->used && c->last_us < victim->last_us)) {
            victim = !victim || victim->used ? c : victim;
        }
    }
    if (!b) {
        b = victim;
        l->evicted += b->used;
        b->used = true;
        b->addr = *from;
        b->tokens = l->burst * UNIT;
        b->last_us = now;
    }
    if (now > b->last_us) {
        uint64_t add = (now - b->last_us) * l->rate_pps;
        b->tokens = b->tokens + add > l->burst * UNIT ? l->burst * UNIT : b->tokens + add;
        b->last_us = now;
    }
    if (b->tokens < UNIT) {
        return false;
    }
    b->tokens -= UNIT;
    return true;
}
