// SPDX-License-Identifier: MIT
// The relay's per-source token buckets (net/src/ratelimit.c, SPEC.md §17.4): the
// table is sized from max_sessions so that a relay at capacity keeps every
// peer's bucket, and its buckets limit each source to its rate and burst.
#include "../net/src/ratelimit.h"

#include <criterion/criterion.h>

// Source k: 10.(k >> 16).(k >> 8).k, a port that varies with k as a NAT's would.
static ls_net_addr source(uint32_t k)
{
    ls_net_addr a = {.family = 4, .port = (uint16_t)(40000u + (k * 7919u) % 20000u)};
    a.ip[0] = 10;
    a.ip[1] = (uint8_t)(k >> 16);
    a.ip[2] = (uint8_t)(k >> 8);
    a.ip[3] = (uint8_t)k;
    return a;
}

Test(net_ratelimit, the_table_has_16_entries_per_session)
{
    cr_assert_eq(ls_net_ratelimit_size_(1), 1024u);
    cr_assert_eq(ls_net_ratelimit_size_(64), 1024u);
    cr_assert_eq(ls_net_ratelimit_size_(65), 2048u);
    cr_assert_eq(ls_net_ratelimit_size_(1000), 16384u);
    cr_assert_eq(ls_net_ratelimit_size_(65536), 1u << 20);
}

// Sessions x 4 peers, each sending 60 datagrams a second for 2 s, interleaved as
// a relay's poll would see them: nobody's bucket is evicted, nobody is limited.
static void full_relay(uint32_t sessions)
{
    ls_net_ratelimit l;
    cr_assert_eq(ls_net_ratelimit_init_(&l, ls_net_ratelimit_size_(sessions), 2000, 400), LS_OK);
    uint32_t peers = sessions * 4;
    uint64_t refused = 0;
    for (uint32_t t = 0; t < 120; t++) {
        for (uint32_t k = 0; k < peers; k++) {
            ls_net_addr a = source(k);
            refused += !ls_net_ratelimit_allow_(&l, &a, (uint64_t)t * 16667u + k);
        }
    }
    cr_log_info("net_ratelimit: %u sessions x 4 peers in a table of %u: %llu evicted, %llu refused",
                sessions, l.size, (unsigned long long)l.evicted, (unsigned long long)refused);
    cr_expect_eq(l.evicted, 0u, "%u sessions: %llu buckets evicted", sessions,
                 (unsigned long long)l.evicted);
    cr_expect_eq(refused, 0u);
    ls_net_ratelimit_free_(&l);
}

Test(net_ratelimit, a_relay_at_capacity_evicts_no_peer_bucket)
{
    full_relay(64);
    full_relay(256);
    full_relay(1024);
    full_relay(4096);
}

// The fixed table of before (1024 entries) at 1024 sessions: peers' buckets are
// evicted (each restarts with a full burst, so a flood from many addresses would
// be limited by nothing). Kept as the reason for the sizing.
Test(net_ratelimit, a_fixed_1024_entry_table_evicts_live_peers_above_256_sessions)
{
    ls_net_ratelimit l;
    cr_assert_eq(ls_net_ratelimit_init_(&l, 1024, 2000, 400), LS_OK);
    for (uint32_t t = 0; t < 4; t++) {
        for (uint32_t k = 0; k < 1024 * 4; k++) {
            ls_net_addr a = source(k);
            ls_net_ratelimit_allow_(&l, &a, (uint64_t)t * 16667u + k);
        }
    }
    cr_expect_gt(l.evicted, 0u);
    ls_net_ratelimit_free_(&l);
}

Test(net_ratelimit, a_source_gets_its_burst_then_its_rate)
{
    ls_net_ratelimit l;
    cr_assert_eq(ls_net_ratelimit_init_(&l, ls_net_ratelimit_size_(1), 1000, 50), LS_OK);
    ls_net_addr a = source(7), b = source(8);
    int ok = 0;
    for (int i = 0; i < 100; i++) {
        ok += ls_net_ratelimit_allow_(&l, &a, 1000);
    }
    cr_assert_eq(ok, 50, "the burst");
    cr_assert(ls_net_ratelimit_allow_(&l, &b, 1000), "another source has its own bucket");
    // 1000 per second: 10 more after 10 ms.
    ok = 0;
    for (int i = 0; i < 100; i++) {
        ok += ls_net_ratelimit_allow_(&l, &a, 1000 + 10000);
    }
    cr_assert_eq(ok, 10, "the rate");
    ls_net_ratelimit_free_(&l);
}
