// SPDX-License-Identifier: MIT
// Authenticated sessions (wire v2, SPEC.md §17.2-17.4): the tag construction,
// credentials, the replay window, and attacks on a relay and a peer with a
// fake clock: forged and lying ACKs, replayed, bit-flipped, truncated and
// wrong-key datagrams, a slot takeover with sniffed datagrams. Each must change
// nothing and be counted.
#include "../net/src/auth.h"
#include "ls/checksum.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"

#include <criterion/criterion.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// ---- the tag ----

static size_t sample_ping(uint8_t *buf)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_PING;
    m.h.session = 7;
    m.h.slot = 2;
    m.h.seq = 0x0102030405060708u;
    m.u.ping.time = 1000;
    m.u.ping.seq = 3;
    return ls_net_encode(&m, buf, LS_NET_MAX_DATAGRAM);
}

static void counting_key(uint8_t key[LS_NET_KEY_SIZE])
{
    for (int i = 0; i < LS_NET_KEY_SIZE; i++) {
        key[i] = (uint8_t)i;
    }
}

Test(net_auth, the_tag_is_rfc8439_aead_over_an_empty_plaintext)
{
    uint8_t buf[LS_NET_MAX_DATAGRAM], key[LS_NET_KEY_SIZE];
    counting_key(key);
    size_t n = sample_ping(buf);
    cr_assert_eq(ls_net_seal(buf, n, key, LS_NET_TO_RELAY), LS_OK);
    // The same tag straight from libsodium: nonce = dir, role, slot, 0, seq (u64 LE).
    uint8_t nonce[12] = {0, 0, 2, 0, 8, 7, 6, 5, 4, 3, 2, 1}, tag[16], none[1];
    unsigned long long tag_len;
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(none, tag, &tag_len, none, 0, buf,
                                                       n - LS_NET_TAG_SIZE, NULL, nonce, key);
    cr_assert_arr_eq(buf + n - LS_NET_TAG_SIZE, tag, 16);
    // Known answer for a second implementation (SPEC.md §17.3).
    char hex[33];
    sodium_bin2hex(hex, sizeof hex, buf + n - LS_NET_TAG_SIZE, 16);
    cr_assert_str_eq(hex, "6a5335a895811504ec2708fa44440399", "tag %s", hex);
    cr_assert(ls_net_verify(buf, n, key, LS_NET_TO_RELAY));
    cr_assert_not(ls_net_verify(buf, n, key, LS_NET_TO_PEER), "a reflected datagram fails");
    key[31] ^= 1;
    cr_assert_not(ls_net_verify(buf, n, key, LS_NET_TO_RELAY), "another key fails");
}

Test(net_auth, every_flipped_bit_fails_verification)
{
    uint8_t buf[LS_NET_MAX_DATAGRAM], key[LS_NET_KEY_SIZE];
    counting_key(key);
    size_t n = sample_ping(buf);
    ls_net_seal(buf, n, key, LS_NET_TO_PEER);
    for (size_t bit = 0; bit < n * 8; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        cr_assert_not(ls_net_verify(buf, n, key, LS_NET_TO_PEER), "bit %zu flipped still verifies",
                      bit);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    cr_assert(ls_net_verify(buf, n, key, LS_NET_TO_PEER));
    for (size_t len = 0; len < n; len++) {
        cr_assert_not(ls_net_verify(buf, len, key, LS_NET_TO_PEER));
    }
}

// ---- the replay window ----

Test(net_auth, the_replay_window_accepts_each_sequence_number_once)
{
    ls_net_replay w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(ls_net_replay_check_(&w, 0), LS_NET_STALE, "0 is never valid");
    for (uint64_t s = 1; s <= 3000; s += 2) { // odd numbers first
        cr_assert_eq(ls_net_replay_check_(&w, s), LS_NET_FRESH);
        ls_net_replay_accept_(&w, s);
        cr_assert_eq(ls_net_replay_check_(&w, s), LS_NET_REPLAYED);
    }
    // The even ones arrive late: inside the window they are fresh, once.
    for (uint64_t s = 3000; s > 3000 - LS_NET_REPLAY_WINDOW + 2; s -= 2) {
        cr_assert_eq(ls_net_replay_check_(&w, s), LS_NET_FRESH, "seq %llu", (unsigned long long)s);
        ls_net_replay_accept_(&w, s);
        cr_assert_eq(ls_net_replay_check_(&w, s), LS_NET_REPLAYED);
    }
    cr_assert_eq(ls_net_replay_check_(&w, 2999 - LS_NET_REPLAY_WINDOW), LS_NET_STALE);
    cr_assert_eq(ls_net_replay_check_(&w, 1), LS_NET_STALE);
    // A jump far ahead forgets everything behind the new window.
    ls_net_replay_accept_(&w, 1000000);
    cr_assert_eq(ls_net_replay_check_(&w, 2999), LS_NET_STALE);
    cr_assert_eq(ls_net_replay_check_(&w, 1000000 - 5), LS_NET_FRESH);
    cr_assert_eq(ls_net_replay_check_(&w, 1000000), LS_NET_REPLAYED);
}

// ---- credentials ----

Test(net_auth, credentials_round_trip_as_text_and_files)
{
    ls_net_credential c, back;
    memset(&c, 0, sizeof c);
    c.session = 4000000000u;
    c.slot = 15;
    c.role = LS_NET_ROLE_PLAYER;
    counting_key(c.key);
    char text[LS_NET_CREDENTIAL_TEXT_SIZE];
    size_t n = ls_net_credential_format(&c, text, sizeof text);
    cr_assert_str_eq(text,
                     "lockstep-credential 2 session=4000000000 slot=15 role=player "
                     "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n");
    cr_assert_eq(n, strlen(text));
    ls_error err;
    cr_assert_eq(ls_net_credential_parse(text, &back, &err), LS_OK, "%s", err.message);
    cr_assert_eq(memcmp(&back, &c, sizeof c), 0);
    text[n - 1] = '\0'; // without the newline too
    cr_assert_eq(ls_net_credential_parse(text, &back, &err), LS_OK);

    static const char *const bad[] = {
        "",
        "lockstep-credential 1 session=1 slot=0 role=player key=00",
        "lockstep-credential 2 session=0 slot=0 role=player "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        "lockstep-credential 2 session=1 slot=16 role=player "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        "lockstep-credential 2 session=1 slot=0 role=king "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        "lockstep-credential 2 session=1 slot=0 role=player "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e",
        "lockstep-credential 2 session=1 slot=0 role=player "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f00",
        "lockstep-credential 2 session=1 slot=0 role=player "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n\n",
        "lockstep-credential 2 session=99999999999 slot=0 role=player "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(ls_net_credential_parse(bad[i], &back, &err), LS_ERR_PARSE, "accepted: %s",
                     bad[i]);
        cr_assert(strstr(err.message, "not a credential"), "%s", err.message);
    }

    char path[128];
    snprintf(path, sizeof path, "/tmp/ls-test-cred-%ld", (long)getpid());
    unlink(path);
    cr_assert_eq(ls_net_credential_write(path, &c, &err), LS_OK, "%s", err.message);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "only the owner reads a credential");
    cr_assert_eq(ls_net_credential_write(path, &c, &err), LS_ERR_IO, "never overwritten");
    memset(&back, 0, sizeof back);
    cr_assert_eq(ls_net_credential_read(path, &back, &err), LS_OK, "%s", err.message);
    cr_assert_eq(memcmp(&back, &c, sizeof c), 0);
    unlink(path);
    cr_assert_eq(ls_net_credential_read(path, &back, &err), LS_ERR_IO);
    ls_net_credential_wipe(&back);
    uint8_t zero[LS_NET_KEY_SIZE] = {0};
    cr_assert_arr_eq(back.key, zero, sizeof zero);
}

static void in_cb(void *u, uint32_t t, uint8_t *out, uint32_t n)
{
    (void)u, (void)n;
    out[0] = (uint8_t)(1 + t % 7);
}

static uint64_t adv_cb(void *u, uint32_t t, const uint8_t *in, uint32_t s, uint32_t n)
{
    (void)u;
    return ls_hash64(in, (size_t)s * n) ^ t;
}

Test(net_auth, a_peer_needs_a_key_and_a_player_credential)
{
    ls_peer_def pd = ls_default_peer_def();
    pd.cb.local_input = in_cb;
    pd.cb.advance = adv_cb;
    ls_error err;
    cr_assert_null(ls_peer_create(&pd, &err), "an all-zero key is refused");
    cr_assert(strstr(err.message, "key"), "%s", err.message);
    ls_net_credential c;
    memset(&c, 0, sizeof c);
    c.session = 1;
    c.role = LS_NET_ROLE_SPECTATOR;
    cr_assert_eq(ls_peer_def_set_credential(&pd, &c), LS_ERR_INVALID_ARGUMENT);
}

// ---- attacks on a relay with two joined slots ----

#define RELAY_PORT 9000

typedef struct rig {
    ls_relay *relay;
    uint32_t id;
    ls_net_credential cred[2];
    uint64_t seq[2]; // hand-made datagrams of each slot (a real peer is not used for them)
    ls_net_addr addr[2], attacker;
    uint64_t now;
} rig;

static size_t make(rig *g, uint32_t slot, ls_net_msg *m, uint8_t type, uint8_t *buf)
{
    m->h.type = type;
    m->h.session = g->id;
    m->h.slot = (uint8_t)slot;
    m->h.seq = ++g->seq[slot];
    size_t n = ls_net_encode(m, buf, LS_NET_MAX_DATAGRAM);
    cr_assert_gt(n, 0u);
    ls_net_seal(buf, n, g->cred[slot].key, LS_NET_TO_RELAY);
    return n;
}

// Everything the relay sends, decoded and verified; returns how many datagrams went to `to`.
static uint32_t drain(rig *g, const ls_net_addr *to, ls_net_msg *last_input)
{
    ls_net_datagram d;
    uint32_t n = 0;
    while (ls_relay_next_datagram(g->relay, &d)) {
        ls_net_msg m;
        cr_assert_eq(ls_net_decode(d.data, d.len, &m, NULL), LS_OK);
        cr_assert(ls_net_verify(d.data, d.len, g->cred[m.h.slot].key, LS_NET_TO_PEER));
        if (to && ls_net_addr_equal(&d.to, to)) {
            n++;
            if (last_input && m.h.type == LS_NET_INPUT) {
                *last_input = m;
            }
        }
    }
    return n;
}

static void rig_join(rig *g, uint32_t k)
{
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    ls_relay_receive(g->relay, &g->addr[k], buf, make(g, k, &m, LS_NET_JOIN, buf), g->now);
    ls_net_datagram d;
    cr_assert(ls_relay_next_datagram(g->relay, &d));
    ls_net_msg c;
    cr_assert_eq(ls_net_decode(d.data, d.len, &c, NULL), LS_OK);
    cr_assert_eq(c.h.type, LS_NET_CHALLENGE);
    memset(&m, 0, sizeof m);
    m.u.cookie = c.u.cookie;
    ls_relay_receive(g->relay, &g->addr[k], buf, make(g, k, &m, LS_NET_JOIN, buf), g->now);
    drain(g, NULL, NULL);
    cr_assert(ls_relay_peer_stats_get(g->relay, g->id, k).joined);
}

static void rig_init(rig *g)
{
    memset(g, 0, sizeof *g);
    ls_relay_def rd = ls_default_relay_def();
    rd.rate_limit_pps = 1000000; // thousands of datagrams in a few fake microseconds
    rd.rate_burst = 1000000;
    g->relay = ls_relay_create(&rd, NULL);
    cr_assert_not_null(g->relay);
    ls_session_def sd = ls_default_session_def();
    sd.slots = 2;
    sd.delay = 2;
    g->now = 1000000;
    cr_assert_eq(ls_relay_session_create(g->relay, &sd, g->now, &g->id), LS_OK);
    for (uint32_t k = 0; k < 2; k++) {
        cr_assert_eq(ls_relay_session_credential(g->relay, g->id, k, &g->cred[k]), LS_OK);
        g->addr[k] = ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(20000 + k));
    }
    g->attacker = ls_net_addr_ipv4(10, 6, 6, 6, 666);
    rig_join(g, 0);
    rig_join(g, 1);
}

// Slot 0 sends its inputs for ticks [from, to) in one datagram (not delivered).
static size_t inputs_of_0(rig *g, uint32_t from, uint32_t to, uint8_t *buf)
{
    static const uint8_t vals[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.input.first_tick = from;
    m.u.input.count = (uint16_t)(to - from);
    m.u.input.input_size = 1;
    m.u.input.slot = 0;
    m.u.input.data = vals;
    return make(g, 0, &m, LS_NET_INPUT, buf);
}

static uint64_t dropped_total(const ls_relay_stats *st)
{
    return st->malformed + st->truncated + st->wrong_version + st->bad_mac + st->replayed +
           st->stale + st->unverified + st->no_session;
}

Test(net_auth, replayed_bit_flipped_truncated_and_wrong_key_datagrams_change_nothing)
{
    rig g;
    rig_init(&g);
    uint8_t buf[LS_NET_MAX_DATAGRAM], copy[LS_NET_MAX_DATAGRAM];
    size_t n = inputs_of_0(&g, 2, 6, buf);
    // Every single-bit corruption of the datagram, from slot 0's own address.
    ls_relay_stats before = ls_relay_stats_get(g.relay);
    for (size_t bit = 0; bit < n * 8; bit++) {
        memcpy(copy, buf, n);
        copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        ls_relay_receive(g.relay, &g.addr[0], copy, n, ++g.now);
        cr_assert_eq(drain(&g, NULL, NULL), 0u);
        cr_assert_eq(ls_relay_peer_stats_get(g.relay, g.id, 0).input_next, 2u, "bit %zu", bit);
    }
    ls_relay_stats st = ls_relay_stats_get(g.relay);
    cr_assert_eq(dropped_total(&st) - dropped_total(&before), n * 8, "each flip counted once");
    cr_assert_gt(st.bad_mac - before.bad_mac, n * 8 * 3 / 4, "most flips fail the tag");
    cr_assert_eq(st.desyncs, 0u);
    // Every truncation.
    before = st;
    for (size_t len = 0; len < n; len++) {
        ls_relay_receive(g.relay, &g.addr[0], buf, len, ++g.now);
    }
    st = ls_relay_stats_get(g.relay);
    cr_assert_eq(st.truncated - before.truncated, n, "every prefix is truncated");
    cr_assert_eq(ls_relay_peer_stats_get(g.relay, g.id, 0).input_next, 2u);
    // The same bytes sealed with slot 1's key (or a random one): bad tag.
    memcpy(copy, buf, n);
    ls_net_seal(copy, n, g.cred[1].key, LS_NET_TO_RELAY);
    ls_relay_receive(g.relay, &g.addr[0], copy, n, ++g.now);
    uint8_t other[LS_NET_KEY_SIZE];
    randombytes_buf(other, sizeof other);
    ls_net_seal(copy, n, other, LS_NET_TO_RELAY);
    ls_relay_receive(g.relay, &g.addr[0], copy, n, ++g.now);
    cr_assert_eq(ls_relay_stats_get(g.relay).bad_mac, st.bad_mac + 2);
    cr_assert_eq(ls_relay_peer_stats_get(g.relay, g.id, 0).input_next, 2u);
    // The genuine datagram is taken once; its replays are counted and ignored.
    ls_relay_receive(g.relay, &g.addr[0], buf, n, ++g.now);
    cr_assert_eq(ls_relay_peer_stats_get(g.relay, g.id, 0).input_next, 6u);
    ls_net_msg fan;
    cr_assert_geq(drain(&g, &g.addr[1], &fan), 1u, "fanned out to slot 1");
    cr_assert_eq(fan.u.input.slot, 0);
    for (int i = 0; i < 5; i++) {
        ls_relay_receive(g.relay, &g.addr[0], buf, n, ++g.now);
        cr_assert_eq(drain(&g, &g.addr[1], NULL), 0u, "a replay is not fanned out again");
    }
    st = ls_relay_stats_get(g.relay);
    cr_assert_eq(st.replayed, 5u);
    cr_assert_eq(ls_relay_peer_stats_get(g.relay, g.id, 0).duplicates, 0u);
    // A version 1 datagram: counted, never answered.
    uint8_t v1[40] = {'L', 'S', 1, LS_NET_PING, 1, 0, 0, 0, 0, 0, 12, 0};
    ls_relay_receive(g.relay, &g.attacker, v1, sizeof v1, ++g.now);
    cr_assert_eq(ls_relay_stats_get(g.relay).wrong_version, st.wrong_version + 1);
    cr_assert_eq(drain(&g, &g.attacker, NULL), 0u);
    ls_relay_destroy(g.relay);
}

Test(net_auth, forged_and_lying_acks_cannot_stop_the_resending)
{
    rig g;
    rig_init(&g);
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = inputs_of_0(&g, 2, 12, buf);
    ls_relay_receive(g.relay, &g.addr[0], buf, n, ++g.now);
    cr_assert_geq(drain(&g, &g.addr[1], NULL), 1u); // the fan-out to slot 1 (say it is lost)

    // A forged ACK "from" slot 1 claiming every input: wrong key, dropped, counted.
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.ack.count = 2;
    m.u.ack.input_next[0] = 12;
    m.u.ack.input_next[1] = 2;
    n = make(&g, 1, &m, LS_NET_ACK, buf);
    buf[n - 1] ^= 0x80; // not the key's tag
    ls_relay_receive(g.relay, &g.addr[1], buf, n, ++g.now);
    cr_assert_eq(ls_relay_stats_get(g.relay).bad_mac, 1u);
    g.now += 25000;
    ls_relay_poll(g.relay, g.now);
    ls_net_msg again;
    memset(&again, 0, sizeof again);
    drain(&g, &g.addr[1], &again);
    cr_assert_eq(again.h.type, LS_NET_INPUT, "the relay re-sends what slot 1 did not confirm");
    cr_assert_eq(again.u.input.first_tick, 2u);
    cr_assert_eq(again.u.input.count, 10u);

    // An authentic ACK claiming more than was ever sent is bounded by what was sent.
    memset(&m, 0, sizeof m);
    m.u.ack.count = 2;
    m.u.ack.input_next[0] = 5000;
    m.u.ack.input_next[1] = 2;
    ls_relay_receive(g.relay, &g.addr[1], buf, make(&g, 1, &m, LS_NET_ACK, buf), ++g.now);
    n = inputs_of_0(&g, 12, 14, buf);
    ls_relay_receive(g.relay, &g.addr[0], buf, n, ++g.now);
    memset(&again, 0, sizeof again);
    drain(&g, &g.addr[1], &again);
    cr_assert_eq(again.u.input.first_tick, 12u, "new inputs start where the sent ones ended");
    cr_assert_eq(again.u.input.count, 2u);

    // The lie is undone by the next ACK: slot 1 really holds inputs below 4 only.
    memset(&m, 0, sizeof m);
    m.u.ack.count = 2;
    m.u.ack.input_next[0] = 4;
    m.u.ack.input_next[1] = 2;
    ls_relay_receive(g.relay, &g.addr[1], buf, make(&g, 1, &m, LS_NET_ACK, buf), ++g.now);
    g.now += 25000;
    ls_relay_poll(g.relay, g.now);
    memset(&again, 0, sizeof again);
    drain(&g, &g.addr[1], &again);
    cr_assert_eq(again.h.type, LS_NET_INPUT);
    cr_assert_eq(again.u.input.first_tick, 4u, "re-sent from what the newest ACK says");
    cr_assert_eq(again.u.input.count, 10u);

    // Confirmed at last: no more re-sends of slot 0 to slot 1.
    memset(&m, 0, sizeof m);
    m.u.ack.count = 2;
    m.u.ack.input_next[0] = 14;
    m.u.ack.input_next[1] = 2;
    ls_relay_receive(g.relay, &g.addr[1], buf, make(&g, 1, &m, LS_NET_ACK, buf), ++g.now);
    g.now += 25000;
    ls_relay_poll(g.relay, g.now);
    memset(&again, 0, sizeof again);
    drain(&g, &g.addr[1], &again);
    cr_assert_neq(again.h.type, LS_NET_INPUT);
    // A lower ACK after it (an old one overtaken on the way) is not an error.
    uint64_t malformed = ls_relay_stats_get(g.relay).malformed;
    memset(&m, 0, sizeof m);
    m.u.ack.count = 2;
    m.u.ack.input_next[0] = 8;
    m.u.ack.input_next[1] = 2;
    ls_relay_receive(g.relay, &g.addr[1], buf, make(&g, 1, &m, LS_NET_ACK, buf), ++g.now);
    cr_assert_eq(ls_relay_stats_get(g.relay).malformed, malformed);
    cr_assert_eq(ls_relay_peer_stats_get(g.relay, g.id, 1).drops, 1u, "only the forged one");
    ls_relay_destroy(g.relay);
}

Test(net_auth, a_sniffed_join_and_the_slot_number_do_not_take_a_slot)
{
    rig g;
    memset(&g, 0, sizeof g);
    ls_relay_def rd = ls_default_relay_def();
    g.relay = ls_relay_create(&rd, NULL);
    ls_session_def sd = ls_default_session_def();
    sd.slots = 2;
    g.now = 1000000;
    cr_assert_eq(ls_relay_session_create(g.relay, &sd, g.now, &g.id), LS_OK);
    for (uint32_t k = 0; k < 2; k++) {
        ls_relay_session_credential(g.relay, g.id, k, &g.cred[k]);
        g.addr[k] = ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(20000 + k));
    }
    g.attacker = ls_net_addr_ipv4(10, 6, 6, 6, 666);
    // Slot 1 joins; the attacker sniffs both JOINs and a PING.
    uint8_t join0[LS_NET_MAX_DATAGRAM], join1[LS_NET_MAX_DATAGRAM], ping[LS_NET_MAX_DATAGRAM];
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    size_t n0 = make(&g, 1, &m, LS_NET_JOIN, join0);
    ls_relay_receive(g.relay, &g.addr[1], join0, n0, g.now);
    ls_net_datagram d;
    cr_assert(ls_relay_next_datagram(g.relay, &d));
    ls_net_msg c;
    ls_net_decode(d.data, d.len, &c, NULL);
    memset(&m, 0, sizeof m);
    m.u.cookie = c.u.cookie;
    size_t n1 = make(&g, 1, &m, LS_NET_JOIN, join1);
    ls_relay_receive(g.relay, &g.addr[1], join1, n1, g.now);
    drain(&g, NULL, NULL);
    memset(&m, 0, sizeof m);
    m.u.ping.time = 5;
    size_t np = make(&g, 1, &m, LS_NET_PING, ping);
    ls_relay_receive(g.relay, &g.addr[1], ping, np, ++g.now);
    drain(&g, NULL, NULL);
    ls_relay_stats before = ls_relay_stats_get(g.relay);

    // 1. Replay the sniffed datagrams from the attacker's address: replays, no answer.
    ls_relay_receive(g.relay, &g.attacker, join0, n0, ++g.now);
    ls_relay_receive(g.relay, &g.attacker, join1, n1, ++g.now);
    ls_relay_receive(g.relay, &g.attacker, ping, np, ++g.now);
    // 2. Change the sequence number (or the cookie) to make them fresh: the tag breaks.
    uint8_t forged[LS_NET_MAX_DATAGRAM];
    memcpy(forged, join1, n1);
    ls_put_u64le(forged + 12, 1000);
    ls_relay_receive(g.relay, &g.attacker, forged, n1, ++g.now);
    memcpy(forged, join0, n0);
    ls_put_u64le(forged + LS_NET_HEADER_SIZE, 42);
    ls_relay_receive(g.relay, &g.attacker, forged, n0, ++g.now);
    // 3. A JOIN of its own for slot 1 (it knows session and slot, but not the key).
    uint8_t guess[LS_NET_KEY_SIZE];
    randombytes_buf(guess, sizeof guess);
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_JOIN;
    m.h.session = g.id;
    m.h.slot = 1;
    m.h.seq = 1u << 20;
    size_t nj = ls_net_encode(&m, forged, sizeof forged);
    ls_net_seal(forged, nj, guess, LS_NET_TO_RELAY);
    ls_relay_receive(g.relay, &g.attacker, forged, nj, ++g.now);
    // 4. The same with the spoofed source address of the real peer.
    ls_relay_receive(g.relay, &g.addr[1], join1, n1, ++g.now);
    ls_relay_receive(g.relay, &g.addr[1], forged, nj, ++g.now);

    cr_assert_eq(drain(&g, &g.attacker, NULL), 0u, "the attacker hears nothing");
    ls_relay_stats st = ls_relay_stats_get(g.relay);
    cr_assert_eq(st.replayed - before.replayed, 4u);
    cr_assert_eq(st.bad_mac - before.bad_mac, 4u);
    cr_assert_eq(st.challenges, before.challenges);
    ls_relay_peer_stats ps = ls_relay_peer_stats_get(g.relay, g.id, 1);
    cr_assert(ls_net_addr_equal(&ps.addr, &g.addr[1]), "slot 1 stays with its player");
    cr_assert_eq(ps.drops, 8u);
    cr_assert_not(ls_relay_peer_stats_get(g.relay, g.id, 0).joined, "slot 0 is still free");
    ls_relay_destroy(g.relay);
}

// ---- attacks on a running peer ----

Test(net_auth, a_peer_drops_forged_replayed_and_corrupted_datagrams)
{
    ls_relay_def rd = ls_default_relay_def();
    ls_relay *r = ls_relay_create(&rd, NULL);
    ls_session_def sd = ls_default_session_def();
    sd.slots = 2;
    sd.delay = 2;
    uint64_t now = 1000000;
    uint32_t id;
    cr_assert_eq(ls_relay_session_create(r, &sd, now, &id), LS_OK);
    ls_peer *p[2];
    ls_net_credential cred[2];
    for (uint32_t k = 0; k < 2; k++) {
        ls_relay_session_credential(r, id, k, &cred[k]);
        ls_peer_def pd = ls_default_peer_def();
        ls_peer_def_set_credential(&pd, &cred[k]);
        pd.relay = ls_net_addr_ipv4(127, 0, 0, 1, RELAY_PORT);
        pd.cb.local_input = in_cb;
        pd.cb.advance = adv_cb;
        p[k] = ls_peer_create(&pd, NULL);
        cr_assert_not_null(p[k]);
    }
    // Run until both play, keeping one INPUT the relay sent to peer 1.
    uint8_t kept[LS_NET_MAX_DATAGRAM];
    size_t kept_len = 0;
    for (int ms = 0; ms < 1000; ms++) {
        now += 1000;
        ls_relay_poll(r, now);
        ls_net_datagram d;
        while (ls_relay_next_datagram(r, &d)) {
            uint32_t k = d.to.port - 20000u;
            if (k == 1 && d.data[3] == LS_NET_INPUT && ls_peer_ticks(p[1]) > 20 && !kept_len) {
                memcpy(kept, d.data, d.len);
                kept_len = d.len;
            }
            ls_peer_receive(p[k], d.data, d.len, now);
        }
        for (uint32_t k = 0; k < 2; k++) {
            ls_peer_poll(p[k], now);
            ls_net_addr from = ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(20000 + k));
            while (ls_peer_next_datagram(p[k], &d)) {
                ls_relay_receive(r, &from, d.data, d.len, now);
            }
        }
    }
    cr_assert_gt(kept_len, 0u);
    cr_assert_gt(ls_peer_ticks(p[1]), 20u);
    ls_peer_stats before = ls_peer_stats_get(p[1]);
    uint32_t ticks = ls_peer_ticks(p[1]);
    // Replayed: the INPUT was delivered once already.
    ls_peer_receive(p[1], kept, kept_len, now);
    // Every bit flipped.
    uint8_t copy[LS_NET_MAX_DATAGRAM];
    for (size_t bit = 0; bit < kept_len * 8; bit++) {
        memcpy(copy, kept, kept_len);
        copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        ls_peer_receive(p[1], copy, kept_len, now);
    }
    // Forged as the relay: the bytes resealed under slot 0's key; a DESYNC made up.
    memcpy(copy, kept, kept_len);
    ls_put_u64le(copy + 12, 1u << 30);
    ls_net_seal(copy, kept_len, cred[0].key, LS_NET_TO_PEER);
    ls_peer_receive(p[1], copy, kept_len, now);
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_DESYNC;
    m.h.session = id;
    m.h.slot = 1;
    m.h.seq = 1u << 30;
    m.u.desync.tick = 3;
    size_t n = ls_net_encode(&m, copy, sizeof copy);
    ls_net_seal(copy, n, cred[1].key, LS_NET_TO_RELAY); // the other direction's nonce
    ls_peer_receive(p[1], copy, n, now);
    ls_peer_stats st = ls_peer_stats_get(p[1]);
    cr_assert_eq(st.replayed - before.replayed, 1u);
    cr_assert_eq(st.bad_mac - before.bad_mac + st.malformed - before.malformed, kept_len * 8 + 2);
    cr_assert_eq(st.dropped - before.dropped, kept_len * 8 + 3);
    cr_assert_eq(st.packets_in, before.packets_in, "nothing accepted");
    cr_assert_eq(st.desyncs, 0u, "never blamed as a desync");
    cr_assert_eq(ls_peer_ticks(p[1]), ticks);
    for (uint32_t k = 0; k < 2; k++) {
        ls_peer_destroy(p[k]);
    }
    ls_relay_destroy(r);
}
