// SPDX-License-Identifier: MIT
// libFuzzer harness for the wire v2 decoder and the relay and peer state
// machines. Each input is a sequence of datagrams (2-byte little-endian length
// prefixes). Any datagram either fails to decode or re-encodes to exactly the
// same bytes (but its tag, which the codec leaves to ls_net_seal). The
// datagrams are then fed to a relay with one joined peer and to a running peer:
// untouched (as a stranger would send them, so they must fail the tag), and
// with the session, slot and a fresh sequence number patched in and sealed with
// the right key, so the fuzzer reaches the authenticated, stateful paths. The
// same goes for spectators (SPECTATE, CONFIRMED, STATE_*): each datagram is
// also sealed as a joined spectator's to the relay, and as the relay's to a
// watching spectator core.
// Nothing may crash, and the relay's replies to an unverified source are never
// larger than what it received.
#include "ls/net_auth.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"
#include "ls/net_spectator.h"

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
    if (k != n || memcmp(again, d, n - LS_NET_TAG_SIZE) != 0) {
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

static bool load_cb(void *u, uint32_t t, const uint8_t *d, size_t n)
{
    (void)u, (void)t;
    return n > 0 && d[0] != 0; // accept some snapshots, refuse others
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

// Encode and seal m (relay -> peer or peer -> relay) into buf; returns its length.
static size_t sealed(ls_net_msg *m, const uint8_t *key, ls_net_dir dir, uint8_t *buf)
{
    size_t n = ls_net_encode(m, buf, LS_NET_MAX_DATAGRAM);
    if (n == 0 || ls_net_seal(buf, n, key, dir) != LS_OK) {
        abort();
    }
    return n;
}

// Join slot 0 (or a spectator) of session `id` from `a` the legitimate way.
static void join(ls_relay *r, const ls_net_credential *c, const ls_net_addr *a, uint64_t *seq)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = c->role == LS_NET_ROLE_SPECTATOR ? LS_NET_SPECTATE : LS_NET_JOIN;
    m.h.role = c->role;
    m.h.session = c->session;
    m.h.slot = c->slot;
    m.h.seq = ++*seq;
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    ls_relay_receive(r, a, buf, sealed(&m, c->key, LS_NET_TO_RELAY, buf), 1000);
    ls_net_datagram d;
    ls_net_msg c2;
    while (ls_relay_next_datagram(r, &d)) {
        if (ls_net_decode(d.data, d.len, &c2, NULL) == LS_OK && c2.h.type == LS_NET_CHALLENGE) {
            m.u.cookie = c2.u.cookie;
        }
    }
    m.h.seq = ++*seq;
    ls_relay_receive(r, a, buf, sealed(&m, c->key, LS_NET_TO_RELAY, buf), 2000);
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
    sd.spectators = 2;
    sd.history = 64;
    uint32_t id;
    if (!r || ls_relay_session_create(r, &sd, 0, &id) != LS_OK) {
        abort();
    }
    ls_net_credential cred[3];
    uint64_t seq[3] = {0, 0, 0}; // peer -> relay sequence numbers of each slot
    for (uint32_t k = 0; k < 3; k++) {
        ls_relay_session_credential(r, id, k, &cred[k]);
    }
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 1000), stranger = a;
    stranger.port = 1001;
    join(r, &cred[0], &a, &seq[0]);
    ls_net_credential vcred[2];
    uint64_t vseq = 0, to_spec = 0;
    ls_relay_session_spectator_credential(r, id, 0, &vcred[0]);
    ls_relay_session_spectator_credential(r, id, 1, &vcred[1]);
    ls_net_addr va = ls_net_addr_ipv4(127, 0, 0, 1, 1002);
    join(r, &vcred[0], &va, &vseq);

    ls_peer_def pd = ls_default_peer_def();
    ls_peer_def_set_credential(&pd, &cred[1]);
    pd.relay = ls_net_addr_ipv4(127, 0, 0, 1, 9);
    pd.cb.local_input = in_cb;
    pd.cb.advance = adv_cb;
    ls_peer *p = ls_peer_create(&pd, NULL);
    uint64_t to_peer = 0; // relay -> peer sequence numbers
    ls_net_msg w;
    memset(&w, 0, sizeof w);
    w.h.type = LS_NET_WELCOME;
    w.h.session = id;
    w.h.slot = 1;
    w.h.seq = ++to_peer;
    w.u.welcome.slots = 3;
    w.u.welcome.input_size = 1;
    w.u.welcome.delay = 2;
    w.u.welcome.tick_rate = 60;
    w.u.welcome.ticks = 50;
    uint8_t buf[LS_NET_MAX_DATAGRAM + 64];
    size_t wn = sealed(&w, cred[1].key, LS_NET_TO_PEER, buf);
    ls_peer_receive(p, buf, wn, 0);
    ls_spectator_def vd = ls_default_spectator_def();
    ls_spectator_def_set_credential(&vd, &vcred[1]);
    vd.relay = pd.relay;
    vd.cb.advance = adv_cb;
    vd.cb.load = load_cb;
    vd.state_max = 4096;
    ls_spectator *v = ls_spectator_create(&vd, NULL);
    w.h.role = LS_NET_ROLE_SPECTATOR;
    w.h.seq = ++to_spec;
    ls_spectator_receive(v, buf, sealed(&w, vcred[1].key, LS_NET_TO_PEER, buf), 0);

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
        ls_net_header h;
        bool framed = ls_net_decode_header(buf, n, &h, NULL) == LS_OK;
        // As sent by the joined peer's slot (or a neighbour's), authentic and fresh.
        if (framed) {
            uint8_t slot = buf[8] < 3 ? buf[8] : 0;
            ls_put_u32le(buf + 4, id);
            buf[8] = slot;
            ls_put_u64le(buf + 12, ++seq[slot]);
            ls_net_seal(buf, n, cred[slot].key, LS_NET_TO_RELAY);
        }
        ls_relay_receive(r, &a, buf, n, now);
        drain_relay(r, &stranger, 0);
        ls_relay_poll(r, now);
        drain_relay(r, &stranger, 0);
        // As received by the running peer from the relay, authentic and fresh.
        if (framed) {
            buf[8] = 1;
            ls_put_u64le(buf + 12, ++to_peer);
            ls_net_seal(buf, n, cred[1].key, LS_NET_TO_PEER);
        }
        ls_peer_receive(p, buf, n, now);
        ls_peer_poll(p, now);
        ls_net_datagram d;
        while (ls_peer_next_datagram(p, &d)) {
        }
        // As a joined spectator's datagram to the relay, and the relay's to a spectator.
        if (framed) {
            buf[8] = 0;
            buf[9] = LS_NET_ROLE_SPECTATOR;
            ls_put_u64le(buf + 12, ++vseq);
            ls_net_seal(buf, n, vcred[0].key, LS_NET_TO_RELAY);
        }
        ls_relay_receive(r, &va, buf, n, now);
        ls_relay_poll(r, now);
        drain_relay(r, &stranger, 0);
        if (framed) {
            buf[8] = 1;
            ls_put_u64le(buf + 12, ++to_spec);
            ls_net_seal(buf, n, vcred[1].key, LS_NET_TO_PEER);
        }
        ls_spectator_receive(v, buf, n, now);
        ls_spectator_poll(v, now);
        while (ls_spectator_next_datagram(v, &d)) {
        }
        ls_relay_event ev;
        while (ls_relay_next_event(r, &ev)) {
            if (ev.type == LS_RELAY_EV_STATE_NEEDED && n > 0) { // the host answers with bytes
                ls_relay_session_put_state(r, id, ev.tick, data + i - n, n);
            }
        }
        now += 7000;
    }
    ls_spectator_destroy(v);
    ls_peer_destroy(p);
    ls_relay_destroy(r);
    return 0;
}
