// SPDX-License-Identifier: MIT
// The wire traffic of a simulated match (tests/test_net_core.c, test_net_join.c)
// as one digest, pinned per test in tests/net_traces.txt.
//
// Why: the net layer is refactored in steps that promise "same wire traffic"
// (one lockstep path on the rollback core, the relay split by concern, one send
// preamble). The simulated network runs on a fake clock with seeded faults, so
// every datagram a relay or peer sends, when and to whom, is a pure function of
// the code: a digest of them all proves a step changed nothing on the wire.
// What is left out is what is random by design: the 16-byte tags (fresh keys per
// run) and the cookies of JOIN, CHALLENGE, REJOIN and SPECTATE.
//
// A deliberate change of traffic updates the file (LS_NET_TRACE_PRINT=1 prints
// every test's line) with a CHANGELOG line saying why, like the checksum goldens.
#ifndef LS_TEST_NET_TRACE_H
#define LS_TEST_NET_TRACE_H

#include "ls/net_wire.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct net_trace {
    uint64_t hash;  // FNV-1a 64 of every datagram's (time, destination, bytes), in send order
    uint64_t count; // datagrams
} net_trace;

static inline void net_trace_bytes(net_trace *t, const void *p, size_t n)
{
    const uint8_t *b = p;
    if (t->count == 0 && t->hash == 0) {
        t->hash = 1469598103934665603ull;
    }
    for (size_t i = 0; i < n; i++) {
        t->hash = (t->hash ^ b[i]) * 1099511628211ull;
    }
}

/// One datagram sent at `now` (us) to `dest` (-1: the relay, else a peer's index).
static inline void net_trace_put(net_trace *t, uint64_t now, int32_t dest, const uint8_t *data,
                                 size_t len)
{
    const size_t header = 20, tag = 16;
    uint8_t type = len > 3 ? data[3] : 0;
    size_t n = len >= header + tag ? len - tag : len;
    if (type == LS_NET_JOIN || type == LS_NET_CHALLENGE || type == LS_NET_REJOIN ||
        type == LS_NET_SPECTATE) {
        n = n < header ? n : header; // the body is a random cookie (and padding)
    }
    uint8_t head[12];
    for (int i = 0; i < 8; i++) {
        head[i] = (uint8_t)(now >> (8 * i));
    }
    for (int i = 0; i < 4; i++) {
        head[8 + i] = (uint8_t)((uint32_t)dest >> (8 * i));
    }
    net_trace_bytes(t, head, sizeof head);
    net_trace_bytes(t, data, n);
    t->count++;
}

/// Compare with the current test's line in tests/net_traces.txt ("name hash count"); a
/// test that runs several matches has a line per match, in order.
static inline void net_trace_check(const net_trace *t)
{
    static unsigned calls; // per test: Criterion runs each test in its own process
    unsigned nth = calls++, seen = 0;
    const char *name = criterion_current_test->name;
    if (getenv("LS_NET_TRACE_PRINT")) {
        fprintf(stderr, "NET_TRACE %s %016llx %llu\n", name, (unsigned long long)t->hash,
                (unsigned long long)t->count);
        return;
    }
    FILE *f = fopen("tests/net_traces.txt", "r");
    cr_assert_not_null(f, "tests/net_traces.txt: run the tests from the repository root");
    char line[512], want[256];
    unsigned long long hash = 0, count = 0;
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%255s %llx %llu", want, &hash, &count) == 3 && strcmp(want, name) == 0 &&
            seen++ == nth) {
            found = true;
            break;
        }
    }
    fclose(f);
    cr_assert(found, "no line %u for %s in tests/net_traces.txt (LS_NET_TRACE_PRINT=1 prints it)",
              nth + 1, name);
    cr_assert(hash == t->hash && count == t->count,
              "%s: the wire traffic changed: %016llx over %llu datagrams, pinned %016llx over "
              "%llu (tests/net_traces.txt; a deliberate change updates it with a CHANGELOG line)",
              name, (unsigned long long)t->hash, (unsigned long long)t->count, hash, count);
}

#endif
