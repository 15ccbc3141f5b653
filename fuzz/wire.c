// SPDX-License-Identifier: MIT
// libFuzzer harness for the wire decoder and the relay and peer state machines.
// Each input is a sequence of datagrams (2-byte little-endian length prefixes).
// Any datagram either fails to decode or re-encodes to exactly the same bytes.
// The datagrams are then fed to a relay with one joined peer and to a running
// peer, with the session id and token patched in so the fuzzer reaches the
// stateful paths; nothing may crash, and the relay's replies to an unverified
// source are never larger than what it received.
#include "ls/net_peer.h"
#include "ls/net_relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const uint8_t *d, size_t n)
{
    ls_net_msg m;
    if (ls_net_decode(d, n, &m, NULL) != LS_OK) {
        return;
    }
    uint8_t again[LS_NET_MAX_DATAGRAM];
    size_t k = ls_net_encode(&m, again, sizeof again);
    if (k != n || memcmp(again, d, n) != 0) {
        fprintf(stderr, "wire: %s does not re-encode to the same %zu bytes (%zu)\n",
                ls_net_type_name(m.h.type), n, k);
        abort();
    }
}

static void in_cb(void *u, uint32_t t, uint8_t *out, uint32_t n)
{
    (void)u, (void)t, (void)n;
    out[0] = 1;
}

static uint64_t adv_cb(void *u, uint32_t t, const uint8_t *in, uint32_t s, uint32_t n)
{
    (void)u, (void)in, (void)s, (void)n;
    return t * 0x9E3779B97F4A7C15u;
}

static void drain_relay(ls_relay *r, const ls_net_addr *unverified, size_t in_len)
{
    ls_net_datagram d;
    size_t to_unverified = 0;
    while (ls_relay_next_datagram(r, &d)) {
        if (ls_net_addr_equal(&d.to, unverified)) {
            to_unverified += d.len;
        }
    }
    if (to_unverified > in_len) {
        fprintf(stderr, "wire: %zu bytes answered with %zu to an unverified source\n", in_len,
                to_unverified);
        abort();
    }
}

// Join slot 0 of session `id` from `a` the legitimate way.
static void join(ls_relay *r, uint32_t id, const ls_net_addr *a, const uint8_t *tok)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_JOIN;
    m.h.session = id;
    memcpy(m.h.token, tok, 16);
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    ls_relay_receive(r, a, buf, n, 1000);
    ls_net_datagram d;
    ls_net_msg c;
    while (ls_relay_next_datagram(r, &d)) {
        if (ls_net_decode(d.data, d.len, &c, NULL) == LS_OK && c.h.type == LS_NET_CHALLENGE) {
            m.u.cookie = c.u.cookie;
        }
    }
    n = ls_net_encode(&m, buf, sizeof buf);
    ls_relay_receive(r, a, buf, n, 2000);
    while (ls_relay_next_datagram(r, &d)) {
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_relay_def rd = ls_default_relay_def();
    rd.max_sessions = 1;
    ls_relay *r = ls_relay_create(&rd, NULL);
    ls_session_def sd = ls_default_session_def();
    sd.slots = 3;
    sd.ticks = 50;
    uint32_t id;
    if (!r || ls_relay_session_create(r, &sd, 0, &id) != LS_OK) {
        abort();
    }
    uint8_t tok[3][16];
    for (uint32_t k = 0; k < 3; k++) {
        ls_relay_session_token(r, id, k, tok[k]);
    }
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 1000), stranger = a;
    stranger.port = 1001;
    join(r, id, &a, tok[0]);

    ls_peer_def pd = ls_default_peer_def();
    pd.session = id;
    memcpy(pd.token, tok[1], 16);
    pd.slot = 1;
    pd.relay = ls_net_addr_ipv4(127, 0, 0, 1, 9);
    pd.cb.local_input = in_cb;
    pd.cb.advance = adv_cb;
    ls_peer *p = ls_peer_create(&pd, NULL);
    ls_net_msg w;
    memset(&w, 0, sizeof w);
    w.h.type = LS_NET_WELCOME;
    w.h.session = id;
    w.h.slot = 1;
    memcpy(w.h.token, tok[1], 16);
    w.u.welcome.slots = 3;
    w.u.welcome.input_size = 1;
    w.u.welcome.delay = 2;
    w.u.welcome.tick_rate = 60;
    w.u.welcome.ticks = 50;
    uint8_t buf[LS_NET_MAX_DATAGRAM + 64];
    size_t wn = ls_net_encode(&w, buf, sizeof buf);
    ls_peer_receive(p, buf, wn, 0);

    uint64_t now = 3000;
    size_t i = 0;
    while (i + 2 <= size) {
        size_t n = (size_t)data[i] | ((size_t)data[i + 1] << 8);
        i += 2;
        n = n < size - i ? n : size - i;
        n = n < sizeof buf ? n : sizeof buf;
        memcpy(buf, data + i, n);
        i += n;
        check_round_trip(buf, n);
        // As sent by a stranger, untouched.
        ls_relay_receive(r, &stranger, buf, n, now);
        drain_relay(r, &stranger, n);
        // As sent by the joined peer, with the session and its slot's token patched in.
        if (n >= LS_NET_HEADER_SIZE) {
            ls_put_u32le(buf + 4, id);
            uint8_t slot = buf[8] < 3 ? buf[8] : 0;
            memcpy(buf + 12, tok[slot], 16);
        }
        ls_relay_receive(r, &a, buf, n, now);
        drain_relay(r, &stranger, 0);
        ls_relay_poll(r, now);
        drain_relay(r, &stranger, 0);
        // As received by the running peer (token patched to its own).
        if (n >= LS_NET_HEADER_SIZE) {
            memcpy(buf + 12, tok[1], 16);
        }
        ls_peer_receive(p, buf, n, now);
        ls_peer_poll(p, now);
        ls_net_datagram d;
        while (ls_peer_next_datagram(p, &d)) {
        }
        ls_relay_event ev;
        while (ls_relay_next_event(r, &ev)) {
        }
        now += 7000;
    }
    ls_peer_destroy(p);
    ls_relay_destroy(r);
    return 0;
}
