// SPDX-License-Identifier: MIT
// The relay and peer state machines in-process, on a simulated network with a
// fake clock: ordering, redundancy under loss, duplicates, reordering, late and
// early inputs, timeouts, disconnect at an agreed tick, desync detection,
// keys and address checks, no amplification, rate limits, malformed input; a
// match through bit corruption, forged and lying acknowledgements (wire v2).
#define _POSIX_C_SOURCE 200809L // getpid
#include "ls/checksum.h"
#include "ls/net_auth.h"
#include "ls/net_fault.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"
#include "ls/replay.h"
#include "net_fake_game.h"

#include "net_trace.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXP       16
#define RELAY_PORT 9000

// ---- a fake game: the state is a hash chain of every tick's inputs ----

typedef struct game {
    uint32_t slot;
    uint64_t state;
    int64_t perturb_tick; // -1: never
    uint64_t sums[4096];  // checksum after each tick
    uint32_t ticks;
    uint32_t desync_events, first_desync;
    uint32_t disputed_events, first_disputed;
    uint32_t disc_slot, disc_tick, disc_events; // the first DISCONNECTED event; how many
    // Network interruptions this peer reported per slot: counts, and the fake time of the
    // latest (and of the latest DISCONNECTED).
    const uint64_t *clock;
    uint32_t intr[MAXP], resumed[MAXP], resumed_ms[MAXP];
    uint64_t intr_us[MAXP], resumed_us[MAXP], disc_us;
} game;

static void g_input(void *user, uint32_t tick, uint8_t *out, uint32_t n)
{
    game *g = user;
    (void)n;
    out[0] = fake_input(g->slot, tick);
}

static uint64_t g_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                          uint32_t isz)
{
    game *g = user;
    g->state = fake_advance(g->state, tick, inputs, (size_t)slots * isz);
    if ((int64_t)tick == g->perturb_tick) {
        g->state ^= 1; // a silent local divergence
    }
    if (tick < 4096) {
        g->sums[tick] = g->state;
    }
    g->ticks = tick + 1;
    return g->state;
}

static void g_event(void *user, const ls_peer_event *ev)
{
    game *g = user;
    if (ev->type == LS_PEER_EV_DISPUTED && g->disputed_events++ == 0) {
        g->first_disputed = ev->tick;
    }
    if (ev->type == LS_PEER_EV_DESYNC && g->desync_events++ == 0) {
        g->first_desync = ev->tick;
    }
    if (ev->type == LS_PEER_EV_DISCONNECTED && g->disc_events++ == 0) {
        g->disc_slot = ev->slot; // the first (the others' goodbyes at the end come later)
        g->disc_tick = ev->tick;
        g->disc_us = *g->clock;
    }
    if (ev->type == LS_PEER_EV_INTERRUPTED && ev->slot < MAXP) {
        g->intr[ev->slot]++;
        g->intr_us[ev->slot] = *g->clock;
    }
    if (ev->type == LS_PEER_EV_RESUMED && ev->slot < MAXP) {
        g->resumed[ev->slot]++;
        g->resumed_us[ev->slot] = *g->clock;
        g->resumed_ms[ev->slot] = ev->count;
    }
}

// ---- the simulated network ----

typedef struct packet {
    uint64_t at;
    int dest; // -1: relay, else peer index
    ls_net_addr from;
    size_t len;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} packet;

typedef struct recorded {
    uint32_t claims_ticks[16]; // ticks whose claims the recorder got (first 16)
    uint16_t claims_reported[16];
    uint64_t claims[16][MAXP];
    bool claims_disputed[16];
    uint32_t nclaims;
    uint32_t ticks;
    uint8_t inputs[4096][MAXP];
    uint64_t sums[4096];
    bool ended;
} recorded;

typedef struct sim {
    ls_relay *relay;
    uint32_t session;
    ls_session_def sdef;
    net_trace trace; // every datagram sent (tests/net_trace.h)
    uint32_t n;
    ls_peer *peer[MAXP];
    game g[MAXP];
    bool muted[MAXP]; // a muted peer is neither polled nor delivered to (crashed)
    bool cut[MAXP];   // a cut link: the peer is polled, nothing reaches it or leaves it
    int no_checksums; // this peer's CHECKSUM datagrams are lost (-1: none)
    int no_inputs;    // this peer's INPUT datagrams are lost (-1: none)
    int silent_acks;  // this peer's ACK datagrams are lost (-1: none)
    int lying_acks;   // this peer's ACKs claim tick 0 for every slot, resealed (-1: none)
    bool lose_byes;   // every DISCONNECT a peer sends is lost
    ls_net_credential cred[MAXP]; // the slots' credentials (to reseal a lying ACK)
    uint64_t corrupted;           // datagrams delivered with a flipped bit
    ls_net_fault fault;
    packet *q;
    size_t qlen, qcap;
    uint64_t now;
    recorded rec;
    ls_relay_event ev[256];
    uint32_t nev;
} sim;

static ls_net_addr peer_addr(int i)
{
    return ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(20000 + i));
}

static ls_net_addr relay_addr(void)
{
    return ls_net_addr_ipv4(127, 0, 0, 1, RELAY_PORT);
}

static void enqueue(sim *s, int dest, const ls_net_addr *from, const uint8_t *data, size_t len)
{
    net_trace_put(&s->trace, s->now, dest, data, len);
    uint64_t when[2];
    uint32_t copies = ls_net_fault_apply(&s->fault, s->now, when);
    for (uint32_t c = 0; c < copies; c++) {
        if (s->qlen == s->qcap) {
            s->qcap = s->qcap ? s->qcap * 2 : 1024;
            s->q = realloc(s->q, s->qcap * sizeof *s->q);
            cr_assert_not_null(s->q);
        }
        packet *p = &s->q[s->qlen++];
        p->at = when[c] > s->now ? when[c] : s->now + 1; // never delivered in the same instant
        p->dest = dest;
        p->from = *from;
        p->len = len;
        memcpy(p->data, data, len);
        s->corrupted += ls_net_fault_corrupt(&s->fault, p->data, len);
    }
}

static void rec_tick(void *user, uint32_t session, uint32_t tick, const uint8_t *inputs,
                     uint64_t checksum)
{
    sim *s = user;
    (void)session;
    cr_assert_eq(tick, s->rec.ticks, "recorder gets ticks in order");
    if (tick < 4096) {
        memcpy(s->rec.inputs[tick], inputs, (size_t)s->sdef.slots * s->sdef.input_size);
        s->rec.sums[tick] = checksum;
    }
    s->rec.ticks = tick + 1;
}

static void rec_claims(void *user, uint32_t session, uint32_t tick, uint16_t reported,
                       const uint64_t *claims, bool disputed)
{
    sim *s = user;
    (void)session;
    cr_assert_eq(tick, s->rec.ticks, "claims come just before their tick");
    if (s->rec.nclaims < 16) {
        uint32_t i = s->rec.nclaims++;
        s->rec.claims_ticks[i] = tick;
        s->rec.claims_reported[i] = reported;
        memcpy(s->rec.claims[i], claims, (size_t)s->sdef.slots * sizeof *claims);
        s->rec.claims_disputed[i] = disputed;
    }
}

static void rec_end(void *user, uint32_t session, uint32_t ticks)
{
    sim *s = user;
    (void)session;
    cr_assert_eq(ticks, s->rec.ticks);
    s->rec.ended = true;
}

static void drain(sim *s)
{
    ls_net_datagram d;
    ls_net_addr ra = relay_addr();
    while (ls_relay_next_datagram(s->relay, &d)) {
        int dest = d.to.port - 20000;
        cr_assert(dest >= 0 && dest < (int)s->n, "relay sends only to peers");
        enqueue(s, dest, &ra, d.data, d.len);
    }
    for (uint32_t i = 0; i < s->n; i++) {
        ls_net_addr pa = peer_addr((int)i);
        while (ls_peer_next_datagram(s->peer[i], &d)) {
            cr_assert(ls_net_addr_equal(&d.to, &ra));
            ls_net_msg m;
            uint8_t type = ls_net_decode(d.data, d.len, &m, NULL) == LS_OK ? m.h.type : 0;
            bool lost = (type == LS_NET_CHECKSUM && (int)i == s->no_checksums) ||
                        (type == LS_NET_INPUT && (int)i == s->no_inputs) ||
                        (type == LS_NET_ACK && (int)i == s->silent_acks) ||
                        (type == LS_NET_DISCONNECT && s->lose_byes);
            if (type == LS_NET_ACK && (int)i == s->lying_acks) {
                // A modified client: the same ACK (same sequence number), every other
                // slot claimed at tick 0, sealed with the slot's own key (authentic).
                for (uint32_t k = 0; k < m.u.ack.count; k++) {
                    m.u.ack.input_next[k] = k == i ? m.u.ack.input_next[k] : 0;
                }
                size_t n = ls_net_encode(&m, d.data, sizeof d.data);
                cr_assert_eq(n, d.len);
                cr_assert_eq(ls_net_seal(d.data, n, s->cred[i].key, LS_NET_TO_RELAY), LS_OK);
            }
            if (!s->muted[i] && !s->cut[i] && !lost) {
                enqueue(s, -1, &pa, d.data, d.len);
            }
        }
    }
    ls_relay_event ev;
    while (ls_relay_next_event(s->relay, &ev)) {
        if (s->nev < 256) {
            s->ev[s->nev++] = ev;
        }
    }
}

static void sim_init(sim *s, uint32_t n, const ls_session_def *sd, const ls_net_fault_def *fd)
{
    memset(s, 0, sizeof *s);
    s->now = 1000000;
    s->no_checksums = -1;
    s->no_inputs = -1;
    s->silent_acks = -1;
    s->lying_acks = -1;
    ls_relay_def rd = ls_default_relay_def();
    s->relay = ls_relay_create(&rd, NULL);
    cr_assert_not_null(s->relay);
    s->sdef = *sd;
    cr_assert_eq(ls_relay_session_create(s->relay, sd, s->now, &s->session), LS_OK);
    ls_relay_recorder rec = {s, rec_tick, rec_end, rec_claims};
    ls_relay_session_set_recorder(s->relay, s->session, &rec);
    ls_net_fault_def none = {0, 0, 0, 0, 0, 0, 0};
    ls_net_fault_init(&s->fault, fd ? fd : &none);
    s->n = n;
    for (uint32_t i = 0; i < n; i++) {
        s->g[i].slot = i;
        s->g[i].perturb_tick = -1;
        s->g[i].clock = &s->now;
        ls_peer_def pd = ls_default_peer_def();
        ls_net_credential *cred = &s->cred[i];
        cr_assert_eq(ls_relay_session_credential(s->relay, s->session, i, cred), LS_OK);
        cr_assert_eq(ls_peer_def_set_credential(&pd, cred), LS_OK);
        pd.relay = relay_addr();
        pd.cb.user = &s->g[i];
        pd.cb.local_input = g_input;
        pd.cb.advance = g_advance;
        pd.cb.on_event = g_event;
        s->peer[i] = ls_peer_create(&pd, NULL);
        cr_assert_not_null(s->peer[i]);
    }
}

static void sim_free(sim *s)
{
    net_trace_check(&s->trace);
    for (uint32_t i = 0; i < s->n; i++) {
        ls_peer_destroy(s->peer[i]);
    }
    ls_relay_destroy(s->relay);
    free(s->q);
}

// Advance the fake clock by 1 ms: deliver what is due (in due order), poll everyone.
static void sim_step(sim *s)
{
    s->now += 1000;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < s->qlen; i++) {
            if (s->q[i].at <= s->now && (best == SIZE_MAX || s->q[i].at < s->q[best].at)) {
                best = i;
            }
        }
        if (best == SIZE_MAX) {
            break;
        }
        packet p = s->q[best];
        s->q[best] = s->q[--s->qlen];
        if (p.dest < 0) {
            ls_relay_receive(s->relay, &p.from, p.data, p.len, s->now);
        } else if (!s->muted[p.dest] && !s->cut[p.dest]) {
            ls_peer_receive(s->peer[p.dest], p.data, p.len, s->now);
        }
        drain(s);
    }
    ls_relay_poll(s->relay, s->now);
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->muted[i]) {
            ls_peer_poll(s->peer[i], s->now);
        }
    }
    drain(s);
}

static bool all_finished(const sim *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->muted[i] && ls_peer_state_get(s->peer[i]) != LS_PEER_FINISHED) {
            return false;
        }
    }
    return true;
}

static void run_until_finished(sim *s, uint64_t max_ms)
{
    for (uint64_t ms = 0; ms < max_ms && !all_finished(s); ms++) {
        sim_step(s);
    }
    for (uint32_t i = 0; getenv("ZZ") && i < s->n; i++) {
        ls_relay_peer_stats rs = ls_relay_peer_stats_get(s->relay, s->session, i);
        ls_peer_stats ps = ls_peer_stats_get(s->peer[i]);
        fprintf(stderr,
                "peer %u state %d ticks %u | relay: in %u csum %u disc %d reason %d tick %u | peer "
                "in %llu out %llu\n",
                i, ls_peer_state_get(s->peer[i]), ls_peer_ticks(s->peer[i]), rs.input_next,
                rs.checksum_next, rs.disconnected, rs.reason, rs.disconnect_tick,
                (unsigned long long)ps.packets_in, (unsigned long long)ps.packets_out);
    }
    cr_assert(all_finished(s), "every peer finished within %llu ms of fake time",
              (unsigned long long)max_ms);
    for (int i = 0; i < 200; i++) { // let the relay finalize the last ticks
        sim_step(s);
    }
}

static void assert_agreement(const sim *s, uint32_t ticks)
{
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->muted[i]) {
            continue;
        }
        cr_assert_eq(ls_peer_ticks(s->peer[i]), ticks, "peer %u simulated %u ticks", i,
                     ls_peer_ticks(s->peer[i]));
        for (uint32_t t = 0; t < ticks; t++) {
            cr_assert_eq(s->g[i].sums[t], s->rec.sums[t], "peer %u tick %u checksum", i, t);
        }
    }
    cr_assert_eq(s->rec.ticks, ticks, "relay recorded %u ticks", s->rec.ticks);
    cr_assert(s->rec.ended);
}

static ls_session_def sdef(uint32_t slots, uint32_t ticks, uint32_t delay)
{
    ls_session_def d = ls_default_session_def();
    d.slots = slots;
    d.ticks = ticks;
    d.delay = delay;
    d.tick_rate = 60;
    return d;
}

Test(net_core, four_peers_agree_on_a_clean_network)
{
    sim s;
    ls_session_def d = sdef(4, 300, 3);
    sim_init(&s, 4, &d, NULL);
    run_until_finished(&s, 20000);
    assert_agreement(&s, 300);
    // The recorded inputs are each slot's script; ticks below D are empty.
    for (uint32_t t = 0; t < 300; t++) {
        for (uint32_t k = 0; k < 4; k++) {
            uint8_t want = t < 3 ? 0 : (uint8_t)(1u + ((t * 7u + k * 3u) % 15u));
            cr_assert_eq(s.rec.inputs[t][k], want, "tick %u slot %u", t, k);
        }
    }
    cr_assert_eq(ls_relay_stats_get(s.relay).desyncs, 0u);
    ls_relay_peer_stats ps = ls_relay_peer_stats_get(s.relay, s.session, 1);
    cr_assert(ps.joined);
    cr_assert_gt(ps.packets_in, 300u);
    sim_free(&s);
}

Test(net_core, redundancy_survives_loss_duplication_reordering_and_jitter)
{
    sim s;
    ls_session_def d = sdef(4, 300, 4);
    ls_net_fault_def f = {200000, 100000, 100000, 5000, 30000, 7, 0};
    sim_init(&s, 4, &d, &f);
    run_until_finished(&s, 60000);
    assert_agreement(&s, 300);
    cr_assert_gt(s.fault.dropped, 100u, "the fault injector did drop packets");
    cr_assert_gt(s.fault.duplicated, 50u);
    cr_assert_gt(s.fault.reordered, 50u);
    uint64_t dups = 0;
    for (uint32_t k = 0; k < 4; k++) {
        dups += ls_relay_peer_stats_get(s.relay, s.session, k).duplicates;
    }
    cr_assert_gt(dups, 0u, "duplicates were seen and ignored");
    sim_free(&s);
}

Test(net_core, sixteen_slots_with_delay_zero)
{
    sim s;
    ls_session_def d = sdef(16, 120, 0);
    sim_init(&s, 16, &d, NULL);
    run_until_finished(&s, 20000);
    assert_agreement(&s, 120);
    sim_free(&s);
}

Test(net_core, a_perturbed_peer_is_named_at_the_exact_tick)
{
    sim s;
    ls_session_def d = sdef(4, 200, 3);
    sim_init(&s, 4, &d, NULL);
    s.g[2].perturb_tick = 37;
    run_until_finished(&s, 20000);
    uint32_t found = 0;
    for (uint32_t i = 0; i < s.nev; i++) {
        if (s.ev[i].type == LS_RELAY_EV_DESYNC) {
            if (found++ == 0) {
                cr_assert_eq(s.ev[i].tick, 37u, "first desync at tick %u", s.ev[i].tick);
                cr_assert_eq(s.ev[i].slots, 1u << 2, "slot 2 named, mask %x", s.ev[i].slots);
                cr_assert_eq(s.ev[i].expected, s.g[0].sums[37]);
                cr_assert_eq(s.ev[i].got, s.g[2].sums[37]);
            }
        }
    }
    cr_assert_gt(found, 0u);
    for (uint32_t i = 0; i < 4; i++) {
        cr_assert_gt(s.g[i].desync_events, 0u, "peer %u was told", i);
        cr_assert_eq(s.g[i].first_desync, 37u);
    }
    cr_assert_eq(s.rec.sums[37], s.g[0].sums[37], "the majority checksum is recorded");
    sim_free(&s);
}

Test(net_core, a_silent_peer_is_disconnected_at_an_agreed_tick)
{
    sim s;
    ls_session_def d = sdef(4, 400, 3);
    d.timeout_ms = 500;
    sim_init(&s, 4, &d, NULL);
    while (ls_peer_ticks(s.peer[3]) < 100) {
        sim_step(&s);
    }
    s.muted[3] = true; // crashes: sends and hears nothing
    run_until_finished(&s, 30000);
    uint32_t disc_tick = UINT32_MAX;
    for (uint32_t i = 0; i < s.nev; i++) {
        if (s.ev[i].type == LS_RELAY_EV_DISCONNECTED && s.ev[i].slot == 3) {
            cr_assert_eq(s.ev[i].reason, LS_NET_TIMEOUT);
            disc_tick = s.ev[i].tick;
        }
    }
    cr_assert_neq(disc_tick, UINT32_MAX, "the relay declared slot 3 gone");
    cr_assert_geq(disc_tick, 100u);
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(s.g[i].disc_slot, 3u);
        cr_assert_eq(s.g[i].disc_tick, disc_tick, "peer %u agrees on the tick", i);
    }
    assert_agreement(&s, 400);
    for (uint32_t t = disc_tick; t < 400; t++) {
        cr_assert_eq(s.rec.inputs[t][3], 0, "slot 3 is empty from tick %u (at %u)", disc_tick, t);
    }
    cr_assert_neq(s.rec.inputs[disc_tick - 1][3], 0, "and had input just before");
    sim_free(&s);
}

// Two players whose checksums differ: nothing tells who is wrong, so nobody is named
// (a liar in slot 0 must not get slot 1 blamed by a tie rule); the recorder keeps both
// claims, and re-simulation offline (`replay verify`) tells.
Test(net_core, two_players_who_disagree_are_disputed_never_blamed)
{
    sim s;
    ls_session_def d = sdef(2, 200, 3);
    sim_init(&s, 2, &d, NULL);
    s.g[0].perturb_tick = 37; // the liar is slot 0: the old tie rule blamed slot 1
    run_until_finished(&s, 20000);
    uint32_t disputed = 0;
    for (uint32_t i = 0; i < s.nev; i++) {
        cr_assert_neq(s.ev[i].type, LS_RELAY_EV_DESYNC, "nobody named (tick %u)", s.ev[i].tick);
        if (s.ev[i].type == LS_RELAY_EV_DISPUTED && disputed++ == 0) {
            cr_assert_eq(s.ev[i].tick, 37u);
            cr_assert_eq(s.ev[i].slots, 3u, "both reported");
        }
    }
    cr_assert_gt(disputed, 0u);
    cr_assert_eq(ls_relay_stats_get(s.relay).disputes, disputed);
    cr_assert_eq(ls_relay_stats_get(s.relay).desyncs, 0u);
    for (uint32_t i = 0; i < 2; i++) {
        cr_assert_eq(s.g[i].desync_events, 0u);
        cr_assert_gt(s.g[i].disputed_events, 0u, "peer %u was told", i);
        cr_assert_eq(s.g[i].first_disputed, 37u);
        cr_assert_eq(ls_peer_stats_get(s.peer[i]).named, 0u);
        cr_assert_eq(ls_peer_stats_get(s.peer[i]).disputes, s.g[i].disputed_events);
    }
    cr_assert_gt(s.rec.nclaims, 0u);
    cr_assert_eq(s.rec.claims_ticks[0], 37u);
    cr_assert_eq(s.rec.claims_reported[0], 3u);
    cr_assert(s.rec.claims_disputed[0]);
    cr_assert_eq(s.rec.claims[0][0], s.g[0].sums[37]);
    cr_assert_eq(s.rec.claims[0][1], s.g[1].sums[37]);
    sim_free(&s);
}

// A player whose last inputs are lost while its checksums arrive, then leaves: the
// relay disconnects it at its own input_next d, below what it played. Its checksums of
// ticks from d on were computed with inputs nobody else plays, so they count for nothing:
// no desync, no blame, and every recorded checksum matches the recorded inputs.
Test(net_core, a_player_that_leaves_after_losing_inputs_is_never_a_desync)
{
    sim s;
    ls_session_def d = sdef(3, 300, 2);
    sim_init(&s, 3, &d, NULL);
    while (ls_peer_ticks(s.peer[1]) < 60) {
        sim_step(&s);
    }
    s.no_inputs = 1;
    for (int i = 0; i < 60; i++) {
        sim_step(&s);
    }
    ls_peer_leave(s.peer[1]);
    for (int i = 0; i < 20; i++) {
        sim_step(&s);
    }
    s.muted[1] = true;
    run_until_finished(&s, 20000);
    uint32_t left = 0;
    for (uint32_t i = 0; i < s.nev; i++) {
        cr_assert(s.ev[i].type != LS_RELAY_EV_DESYNC && s.ev[i].type != LS_RELAY_EV_DISPUTED,
                  "no verdict at tick %u", s.ev[i].tick);
        if (s.ev[i].type == LS_RELAY_EV_DISCONNECTED && s.ev[i].slot == 1) {
            left = s.ev[i].tick;
        }
    }
    cr_assert_gt(left, 0u);
    cr_assert_lt(left, s.g[1].ticks, "disconnected below what it played (%u < %u)", left,
                 s.g[1].ticks);
    for (uint32_t t = 0; t < 300; t++) {
        cr_assert_eq(s.rec.sums[t], s.g[0].sums[t], "recorded tick %u", t);
    }
    cr_assert_eq(s.rec.nclaims, 0u);
    sim_free(&s);
}

Test(net_core, a_peer_that_leaves_is_disconnected_with_reason_left)
{
    sim s;
    ls_session_def d = sdef(2, 300, 2);
    sim_init(&s, 2, &d, NULL);
    while (ls_peer_ticks(s.peer[1]) < 50) {
        sim_step(&s);
    }
    ls_peer_leave(s.peer[1]);
    // Deliver the goodbye, then keep peer 1 out of the finish condition.
    for (int i = 0; i < 20; i++) {
        sim_step(&s);
    }
    s.muted[1] = true;
    run_until_finished(&s, 20000);
    bool seen = false;
    for (uint32_t i = 0; i < s.nev; i++) {
        if (s.ev[i].type == LS_RELAY_EV_DISCONNECTED && s.ev[i].slot == 1) {
            cr_assert_eq(s.ev[i].reason, LS_NET_LEFT);
            cr_assert_eq(s.ev[i].tick, s.g[0].disc_tick);
            seen = true;
        }
    }
    cr_assert(seen);
    cr_assert_eq(ls_peer_ticks(s.peer[0]), 300u);
    cr_assert_eq(s.rec.ticks, 300u);
    sim_free(&s);
}

Test(net_core, a_slot_that_never_joins_times_out_and_the_match_goes_on)
{
    sim s;
    ls_session_def d = sdef(3, 100, 3);
    d.join_timeout_ms = 300;
    sim_init(&s, 3, &d, NULL);
    s.muted[2] = true;
    run_until_finished(&s, 20000);
    cr_assert_eq(s.rec.ticks, 100u);
    cr_assert_eq(s.g[0].disc_slot, 2u);
    cr_assert_eq(s.g[0].disc_tick, 3u, "gone from the first tick that needed its input");
    cr_assert_eq(s.g[0].sums[99], s.g[1].sums[99]);
    sim_free(&s);
}

Test(net_core, an_ended_session_kicks_every_slot_and_keeps_its_final_ticks)
{
    // An operator ends an open-ended match (the control API's DELETE): every slot is
    // KICKED, the recorder's end runs once with the ticks final so far, SESSION_DONE
    // follows, and the peers learn they are gone. Ending it again changes nothing.
    sim s;
    ls_session_def d = sdef(2, 0, 2);
    sim_init(&s, 2, &d, NULL);
    while (ls_peer_ticks(s.peer[0]) < 80 || ls_peer_ticks(s.peer[1]) < 80) {
        sim_step(&s);
    }
    cr_assert_not(ls_relay_session_done(s.relay, s.session));
    cr_assert_eq(ls_relay_session_end(s.relay, s.session, s.now), LS_OK);
    drain(&s);
    cr_assert(ls_relay_session_done(s.relay, s.session));
    cr_assert(s.rec.ended);
    uint32_t final_ticks = ls_relay_session_final_ticks(s.relay, s.session);
    cr_assert_eq(s.rec.ticks, final_ticks);
    cr_assert_geq(final_ticks, 70u, "the ticks played stay final (%u)", final_ticks);
    uint32_t kicked = 0, done = 0;
    for (uint32_t i = 0; i < s.nev; i++) {
        kicked += s.ev[i].type == LS_RELAY_EV_DISCONNECTED && s.ev[i].reason == LS_NET_KICKED;
        done += s.ev[i].type == LS_RELAY_EV_SESSION_DONE;
    }
    cr_assert_eq(kicked, 2u);
    cr_assert_eq(done, 1u);
    for (int i = 0; i < 200; i++) {
        sim_step(&s);
    }
    cr_assert_eq(ls_peer_state_get(s.peer[0]), LS_PEER_LEFT);
    cr_assert_eq(ls_peer_state_get(s.peer[1]), LS_PEER_LEFT);
    cr_assert_eq(ls_relay_session_end(s.relay, s.session, s.now), LS_OK);
    cr_assert_eq(ls_relay_session_end(s.relay, s.session + 1, s.now), LS_ERR_NOT_FOUND);
    sim_free(&s);
}

// ---- handcrafted datagrams against the relay ----

// A hand-driven sender: its credential and the sequence number of its last datagram.
typedef struct sender {
    ls_net_credential cred;
    uint64_t seq;
} sender;

static sender sender_of(const ls_relay *r, uint32_t id, uint32_t slot)
{
    sender c;
    memset(&c, 0, sizeof c);
    cr_assert_eq(ls_relay_session_credential(r, id, slot, &c.cred), LS_OK);
    return c;
}

// Encode m as `type` from c's slot with the next sequence number, sealed with key
// (NULL: c's own key).
static size_t make_with(sender *c, ls_net_msg *m, uint8_t type, const uint8_t *key, uint8_t *buf)
{
    m->h.type = type;
    m->h.session = c->cred.session;
    m->h.slot = c->cred.slot;
    m->h.role = LS_NET_ROLE_PLAYER;
    m->h.seq = ++c->seq;
    size_t n = ls_net_encode(m, buf, LS_NET_MAX_DATAGRAM);
    cr_assert_gt(n, 0u, "%s encodes", ls_net_type_name(type));
    cr_assert_eq(ls_net_seal(buf, n, key ? key : c->cred.key, LS_NET_TO_RELAY), LS_OK);
    return n;
}

static size_t make(sender *c, ls_net_msg *m, uint8_t type, uint8_t *buf)
{
    return make_with(c, m, type, NULL, buf);
}

// Join c's slot from `from` through the challenge (both answers verified with c's key).
static void join(ls_relay *r, sender *c, const ls_net_addr *from, uint64_t now)
{
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    size_t n = make(c, &m, LS_NET_JOIN, buf);
    ls_relay_receive(r, from, buf, n, now);
    ls_net_datagram d;
    cr_assert(ls_relay_next_datagram(r, &d));
    ls_net_msg ch;
    cr_assert_eq(ls_net_decode(d.data, d.len, &ch, NULL), LS_OK);
    cr_assert_eq(ch.h.type, LS_NET_CHALLENGE);
    cr_assert(ls_net_verify(d.data, d.len, c->cred.key, LS_NET_TO_PEER), "the challenge is sealed");
    cr_assert_leq(d.len, n, "challenge %zu bytes for a %zu-byte join", d.len, n);
    memset(&m, 0, sizeof m);
    m.u.cookie = ch.u.cookie;
    n = make(c, &m, LS_NET_JOIN, buf);
    ls_relay_receive(r, from, buf, n, now);
    cr_assert(ls_relay_next_datagram(r, &d));
    cr_assert_eq(ls_net_decode(d.data, d.len, &ch, NULL), LS_OK);
    cr_assert_eq(ch.h.type, LS_NET_WELCOME);
    cr_assert(ls_net_verify(d.data, d.len, c->cred.key, LS_NET_TO_PEER));
    while (ls_relay_next_datagram(r, &d)) {
    }
}

static ls_relay *one_session(uint32_t *id)
{
    ls_relay_def rd = ls_default_relay_def();
    ls_relay *r = ls_relay_create(&rd, NULL);
    ls_session_def d = sdef(2, 0, 2);
    cr_assert_eq(ls_relay_session_create(r, &d, 0, id), LS_OK);
    return r;
}

Test(net_core, wrong_keys_and_spoofed_slots_are_dropped_silently)
{
    uint32_t id;
    ls_relay *r = one_session(&id);
    sender c0 = sender_of(r, id, 0), c1 = sender_of(r, id, 1);
    cr_assert_neq(memcmp(c0.cred.key, c1.cred.key, LS_NET_KEY_SIZE), 0, "keys are random per slot");
    uint8_t buf[LS_NET_MAX_DATAGRAM], bent[LS_NET_KEY_SIZE];
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 5000);
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    size_t n = make_with(&c1, &m, LS_NET_JOIN, c0.cred.key, buf); // slot 1 with slot 0's key
    ls_relay_receive(r, &a, buf, n, 10);
    memcpy(bent, c1.cred.key, sizeof bent);
    bent[5] ^= 0x40;
    n = make_with(&c1, &m, LS_NET_JOIN, bent, buf); // one bit of the key wrong
    ls_relay_receive(r, &a, buf, n, 10);
    ls_net_datagram d;
    cr_assert_not(ls_relay_next_datagram(r, &d), "no answer to a bad tag");
    ls_relay_stats st = ls_relay_stats_get(r);
    cr_assert_eq(st.bad_mac, 2u);
    cr_assert_eq(ls_relay_peer_stats_get(r, id, 1).drops, 2u);
    // A joined slot's key used from another address is unverified: dropped.
    join(r, &c0, &a, 20);
    ls_net_addr b = ls_net_addr_ipv4(127, 0, 0, 1, 5001);
    memset(&m, 0, sizeof m);
    uint8_t in[1] = {9};
    m.u.input.first_tick = 2;
    m.u.input.count = 1;
    m.u.input.input_size = 1;
    m.u.input.data = in;
    n = make(&c0, &m, LS_NET_INPUT, buf);
    ls_relay_receive(r, &b, buf, n, 30);
    cr_assert_not(ls_relay_next_datagram(r, &d));
    cr_assert_eq(ls_relay_stats_get(r).unverified, 1u);
    cr_assert_eq(ls_relay_peer_stats_get(r, id, 0).input_next, 2u, "the input was not taken");
    // A JOIN with the right key but a forged cookie: challenged again, not rebound.
    memset(&m, 0, sizeof m);
    m.u.cookie = 12345;
    n = make(&c0, &m, LS_NET_JOIN, buf);
    ls_relay_receive(r, &b, buf, n, 40);
    cr_assert(ls_relay_next_datagram(r, &d));
    ls_net_msg c;
    ls_net_decode(d.data, d.len, &c, NULL);
    cr_assert_eq(c.h.type, LS_NET_CHALLENGE);
    ls_relay_peer_stats ps = ls_relay_peer_stats_get(r, id, 0);
    cr_assert(ls_net_addr_equal(&ps.addr, &a), "not rebound");
    ls_relay_destroy(r);
}

Test(net_core, the_relay_never_answers_an_unverified_source_with_more_bytes)
{
    uint32_t id;
    ls_relay *r = one_session(&id);
    sender c = sender_of(r, id, 0);
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    ls_rng rng = ls_rng_make(99, 1);
    uint64_t in = 0, out = 0;
    for (int i = 0; i < 3000; i++) {
        ls_net_addr a = ls_net_addr_ipv4(127, 0, 1, (uint8_t)(i >> 8), (uint16_t)(3000 + i));
        size_t n;
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        if (i % 3 == 0) { // valid key, fresh address: a JOIN gets only a CHALLENGE
            n = make(&c, &m, LS_NET_JOIN, buf);
        } else if (i % 3 == 1) { // valid key, other types from unverified addresses
            m.u.ping.time = 1;
            n = make(&c, &m, LS_NET_PING, buf);
        } else { // garbage
            n = 1 + ls_rng_below(&rng, LS_NET_MAX_DATAGRAM);
            for (size_t j = 0; j < n; j++) {
                buf[j] = (uint8_t)ls_rng_next_u32(&rng);
            }
            buf[0] = 'L', buf[1] = 'S', buf[2] = LS_NET_VERSION;
        }
        in += n;
        ls_relay_receive(r, &a, buf, n, (uint64_t)i * 1000);
        ls_net_datagram d;
        size_t replied = 0;
        while (ls_relay_next_datagram(r, &d)) {
            cr_assert(ls_net_addr_equal(&d.to, &a), "replies only to the sender");
            replied += d.len;
        }
        cr_assert_leq(replied, n, "datagram %d: %zu bytes answered with %zu", i, n, replied);
        out += replied;
    }
    cr_assert_gt(out, 0u);
    cr_assert_lt(out * 3, in, "total out %llu vs in %llu", (unsigned long long)out,
                 (unsigned long long)in);
    ls_relay_destroy(r);
}

Test(net_core, malformed_datagrams_are_counted_never_fatal)
{
    uint32_t id;
    ls_relay *r = one_session(&id);
    sender c = sender_of(r, id, 0);
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 7000);
    join(r, &c, &a, 0);
    ls_rng rng = ls_rng_make(5, 5);
    uint8_t buf[LS_NET_MAX_DATAGRAM + 100];
    ls_relay_stats before = ls_relay_stats_get(r);
    for (int i = 0; i < 2000; i++) {
        size_t n = ls_rng_below(&rng, sizeof buf);
        for (size_t j = 0; j < n; j++) {
            buf[j] = (uint8_t)ls_rng_next_u32(&rng);
        }
        if (n > 3) {
            buf[0] = 'L', buf[1] = 'S', buf[2] = LS_NET_VERSION; // past the magic most of the time
        }
        ls_net_addr src = ls_net_addr_ipv4(10, 0, (uint8_t)(i >> 8), (uint8_t)i, 1);
        ls_relay_receive(r, &src, buf, n, 1000000 + (uint64_t)i);
    }
    ls_relay_stats st = ls_relay_stats_get(r);
    uint64_t counted = st.malformed + st.no_session + st.bad_mac + st.truncated + st.wrong_version -
                       (before.malformed + before.no_session + before.bad_mac + before.truncated +
                        before.wrong_version);
    cr_assert_eq(counted, 2000u);
    cr_assert_eq(st.packets_out, before.packets_out, "nothing answered");
    ls_relay_destroy(r);
}

Test(net_core, early_inputs_wait_and_duplicates_are_ignored)
{
    uint32_t id;
    ls_relay *r = one_session(&id);
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 7001);
    sender c = sender_of(r, id, 0);
    join(r, &c, &a, 0);
    uint8_t buf[LS_NET_MAX_DATAGRAM], in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.input.first_tick = 5; // delay is 2: ticks 2..4 are missing (early input)
    m.u.input.count = 3;
    m.u.input.input_size = 1;
    m.u.input.data = in;
    size_t n = make(&c, &m, LS_NET_INPUT, buf);
    ls_relay_receive(r, &a, buf, n, 10);
    cr_assert_eq(ls_relay_peer_stats_get(r, id, 0).input_next, 2u);
    m.u.input.first_tick = 2;
    m.u.input.count = 3;
    n = make(&c, &m, LS_NET_INPUT, buf);
    ls_relay_receive(r, &a, buf, n, 20);
    ls_relay_receive(r, &a, buf, n, 21); // the same datagram again: a replay, dropped
    cr_assert_eq(ls_relay_stats_get(r).replayed, 1u);
    n = make(&c, &m, LS_NET_INPUT, buf); // the same inputs in a new datagram: duplicates
    ls_relay_receive(r, &a, buf, n, 21);
    ls_relay_peer_stats ps = ls_relay_peer_stats_get(r, id, 0);
    cr_assert_eq(ps.input_next, 5u);
    cr_assert_eq(ps.duplicates, 3u);
    // The ACK (one per poll, however many packets arrived) tells the peer what the relay holds.
    ls_relay_poll(r, 22);
    ls_net_datagram d;
    ls_net_msg ack;
    uint32_t last_ack = 0;
    while (ls_relay_next_datagram(r, &d)) {
        if (ls_net_decode(d.data, d.len, &ack, NULL) == LS_OK && ack.h.type == LS_NET_ACK) {
            last_ack = ack.u.ack.input_next[0];
        }
    }
    cr_assert_eq(last_ack, 5u);
    // Inputs of the wrong size are refused.
    m.u.input.first_tick = 5;
    m.u.input.input_size = 2;
    m.u.input.count = 1;
    n = make(&c, &m, LS_NET_INPUT, buf);
    ls_relay_receive(r, &a, buf, n, 30);
    cr_assert_eq(ls_relay_peer_stats_get(r, id, 0).input_next, 5u);
    ls_relay_destroy(r);
}

Test(net_core, inputs_beyond_the_window_are_refused)
{
    uint32_t id;
    ls_relay *r = one_session(&id);
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 7002);
    sender c = sender_of(r, id, 0);
    join(r, &c, &a, 0);
    uint8_t buf[LS_NET_MAX_DATAGRAM], in[64] = {0};
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    uint8_t sums[16] = {0}; // a well-behaved peer vouches for the empty ticks 0 and 1
    m.u.checksum.count = 2;
    m.u.checksum.data = sums;
    size_t cn = make(&c, &m, LS_NET_CHECKSUM, buf);
    ls_relay_receive(r, &a, buf, cn, 5);
    memset(&m, 0, sizeof m);
    m.u.input.count = 64;
    m.u.input.input_size = 1;
    m.u.input.data = in;
    for (uint32_t t = 2; t < 2 + 10 * 64; t += 64) {
        m.u.input.first_tick = t;
        size_t n = make(&c, &m, LS_NET_INPUT, buf);
        ls_relay_receive(r, &a, buf, n, 10 + t);
    }
    // Slot 1 never joined, so nothing is final: slot 0 may run one window ahead only.
    cr_assert_eq(ls_relay_peer_stats_get(r, id, 0).input_next, (uint32_t)LS_NET_WINDOW);
    cr_assert_not(ls_relay_peer_stats_get(r, id, 0).disconnected);
    ls_relay_destroy(r);
}

Test(net_core, a_flooding_source_is_rate_limited)
{
    uint32_t id;
    ls_relay *r = one_session(&id);
    ls_relay_def rd = ls_default_relay_def();
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 7003);
    uint8_t buf[64] = {0};
    for (int i = 0; i < 1000; i++) {
        ls_relay_receive(r, &a, buf, sizeof buf, 5000); // all in the same instant
    }
    ls_relay_stats st = ls_relay_stats_get(r);
    cr_assert_eq(st.rate_limited, 1000u - rd.rate_burst);
    cr_assert_eq(st.malformed, rd.rate_burst);
    // One second later the bucket has refilled.
    ls_relay_receive(r, &a, buf, sizeof buf, 1005000);
    cr_assert_eq(ls_relay_stats_get(r).malformed, rd.rate_burst + 1u);
    ls_relay_destroy(r);
}

// Past capacity the re-sends wait for later polls instead of filling one
// (ls_relay_def.max_resends_per_poll): 6 sessions whose slot 1 never
// acknowledges slot 0's inputs, a budget of 4 INPUT re-sends per poll. The
// first due poll re-sends for sessions 1..4; session 5 waits, and the next poll
// starts with it and serves 5 and 6.
static uint32_t polled_inputs(ls_relay *r, uint64_t now, uint32_t *sessions)
{
    ls_relay_poll(r, now);
    ls_net_datagram d;
    uint32_t n = 0;
    while (ls_relay_next_datagram(r, &d)) {
        ls_net_msg m;
        cr_assert_eq(ls_net_decode(d.data, d.len, &m, NULL), LS_OK);
        if (m.h.type == LS_NET_INPUT) {
            sessions[n++] = m.h.session;
        }
    }
    return n;
}

Test(net_core, re_sends_past_the_budget_wait_for_the_next_poll)
{
    ls_relay_def rd = ls_default_relay_def();
    rd.max_resends_per_poll = 4;
    ls_relay *r = ls_relay_create(&rd, NULL);
    cr_assert_not_null(r);
    ls_session_def sd = sdef(2, 0, 2);
    uint8_t buf[LS_NET_MAX_DATAGRAM], in[4] = {1, 2, 3, 4};
    for (uint16_t k = 0; k < 6; k++) {
        uint32_t id;
        cr_assert_eq(ls_relay_session_create(r, &sd, 0, &id), LS_OK);
        sender c0 = sender_of(r, id, 0), c1 = sender_of(r, id, 1);
        ls_net_addr a0 = ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(6000 + 2 * k));
        ls_net_addr a1 = ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(6001 + 2 * k));
        join(r, &c0, &a0, 10);
        join(r, &c1, &a1, 10);
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        m.u.input.first_tick = 2;
        m.u.input.count = 4;
        m.u.input.input_size = 1;
        m.u.input.data = in;
        size_t n = make(&c0, &m, LS_NET_INPUT, buf);
        ls_relay_receive(r, &a0, buf, n, 1000);
        uint32_t fanned = 0;
        ls_net_datagram d;
        while (ls_relay_next_datagram(r, &d)) {
            ls_net_msg out;
            cr_assert_eq(ls_net_decode(d.data, d.len, &out, NULL), LS_OK);
            fanned += out.h.type == LS_NET_INPUT;
        }
        cr_assert_eq(fanned, 1u, "session %u: the input went to slot 1 (not a re-send)", id);
    }
    uint32_t sessions[64];
    cr_assert_eq(polled_inputs(r, 1000, sessions), 0u, "nothing is due yet");
    // Due again after resend_us: 4 in the first poll, the other 2 in the next.
    uint64_t t = 1000 + rd.resend_us;
    cr_assert_eq(polled_inputs(r, t, sessions), 4u);
    cr_assert_eq(sessions[0], 1u);
    cr_assert_eq(sessions[3], 4u);
    cr_assert_eq(ls_relay_stats_get(r).resends_deferred, 1u);
    cr_assert_eq(polled_inputs(r, t + 1000, sessions), 2u);
    cr_assert_eq(sessions[0], 5u, "the next poll starts with the session that waited");
    cr_assert_eq(sessions[1], 6u);
    cr_assert_eq(ls_relay_stats_get(r).resends_deferred, 1u);
    ls_relay_destroy(r);
}

Test(net_core, ping_measures_round_trip_on_both_sides)
{
    sim s;
    ls_session_def d = sdef(2, 120, 2);
    ls_net_fault_def f = {0, 0, 0, 10000, 0, 1, 0}; // 10 ms each way
    sim_init(&s, 2, &d, &f);
    run_until_finished(&s, 20000);
    uint32_t rtt = ls_relay_peer_stats_get(s.relay, s.session, 0).rtt_us;
    cr_assert(rtt >= 20000 && rtt <= 22000, "relay-side rtt %u us for 2 x 10 ms", rtt);
    rtt = ls_peer_stats_get(s.peer[1]).rtt_us;
    cr_assert(rtt >= 20000 && rtt <= 22000, "peer-side rtt %u us", rtt);
    sim_free(&s);
}

Test(net_core, peers_never_run_more_than_the_lead_bound_ahead)
{
    sim s;
    ls_session_def d = sdef(3, 300, 3);
    sim_init(&s, 3, &d, NULL);
    s.muted[2] = true; // slot 2 has not shown up: nobody can simulate past tick D
    for (int ms = 0; ms < 2000; ms++) {
        sim_step(&s);
    }
    ls_peer_def pd = ls_default_peer_def();
    for (uint32_t k = 0; k < 2; k++) {
        cr_assert_eq(ls_peer_ticks(s.peer[k]), 3u, "simulated only the empty ticks");
        uint32_t in = ls_relay_peer_stats_get(s.relay, s.session, k).input_next;
        // Inputs for ticks D.. are produced while (clock ticks produced) < simulated + lead.
        cr_assert_eq(in, 3u + 3u + pd.max_lead, "slot %u produced up to tick %u", k, in);
    }
    sim_free(&s);
}

Test(net_core, a_late_peer_catches_up_through_time_sync)
{
    sim s;
    ls_session_def d = sdef(4, 300, 3);
    sim_init(&s, 4, &d, NULL);
    s.muted[3] = true;
    for (int ms = 0; ms < 1000; ms++) { // slot 3 starts one second late
        sim_step(&s);
    }
    s.muted[3] = false;
    uint64_t t0 = s.now;
    run_until_finished(&s, 20000);
    assert_agreement(&s, 300);
    ls_peer_stats st = ls_peer_stats_get(s.peer[3]);
    cr_assert_gt(st.clock_shifts, 0u, "the late peer moved its clock forward");
    // 300 ticks at 60 Hz are 5 s of play from the early peers' start, 4 s after the
    // late start; without catching up the late peer would hold everyone back to 5 s.
    uint64_t played_ms = (s.now - t0) / 1000 - 200;
    cr_assert_lt(played_ms, 4600u, "finished %llu ms after the late start",
                 (unsigned long long)played_ms);
    cr_assert_gt(played_ms, 3500u, "never faster than the early peers' clocks");
    sim_free(&s);
}

Test(net_core, a_peer_that_plays_without_reporting_checksums_is_kicked)
{
    sim s;
    ls_session_def d = sdef(3, 600, 3);
    sim_init(&s, 3, &d, NULL);
    s.no_checksums = 2;
    bool kicked = false;
    for (int ms = 0; ms < 20000 && !kicked; ms++) {
        sim_step(&s);
        for (uint32_t i = 0; i < s.nev; i++) {
            if (s.ev[i].type == LS_RELAY_EV_DISCONNECTED && s.ev[i].slot == 2) {
                cr_assert_eq(s.ev[i].reason, LS_NET_KICKED);
                kicked = true;
            }
        }
    }
    cr_assert(kicked, "the relay kicked slot 2");
    s.muted[2] = true;
    run_until_finished(&s, 30000);
    assert_agreement(&s, 600);
    sim_free(&s);
}

// ---- wire v2: corruption, forged and lying acknowledgements in a running match ----

Test(net_core, two_percent_corruption_with_loss_and_reordering_gives_no_desync)
{
    sim s;
    ls_session_def d = sdef(4, 300, 4);
    ls_net_fault_def f = {100000, 0, 100000, 2000, 20000, 11, 20000}; // 10 % loss, 2 % corrupt
    sim_init(&s, 4, &d, &f);
    run_until_finished(&s, 60000);
    assert_agreement(&s, 300);
    ls_relay_stats st = ls_relay_stats_get(s.relay);
    cr_assert_eq(st.desyncs, 0u, "corruption is never blamed as a desync");
    cr_assert_gt(s.corrupted, 100u, "the injector did corrupt datagrams (%llu)",
                 (unsigned long long)s.corrupted);
    uint64_t peer_rejected = 0;
    for (uint32_t i = 0; i < 4; i++) {
        ls_peer_stats ps = ls_peer_stats_get(s.peer[i]);
        cr_assert_eq(ps.desyncs, 0u);
        peer_rejected += ps.bad_mac + ps.malformed;
    }
    uint64_t relay_rejected =
        st.bad_mac + st.malformed + st.truncated + st.no_session + st.wrong_version;
    cr_assert_eq(relay_rejected + peer_rejected, s.corrupted,
                 "every corrupted datagram was dropped and counted (relay %llu + peers %llu)",
                 (unsigned long long)relay_rejected, (unsigned long long)peer_rejected);
    cr_assert_gt(st.bad_mac, 0u);
    sim_free(&s);
}

// Play until every peer simulated `ticks` ticks.
static void run_until_ticks(sim *s, uint32_t ticks)
{
    for (int ms = 0; ms < 60000; ms++) {
        bool all = true;
        for (uint32_t i = 0; i < s->n; i++) {
            all = all && ls_peer_ticks(s->peer[i]) >= ticks;
        }
        if (all) {
            return;
        }
        sim_step(s);
    }
    cr_assert_fail("the peers did not reach tick %u", ticks);
}

Test(net_core, a_forged_ack_in_a_lossy_match_freezes_nothing)
{
    sim s;
    ls_session_def d = sdef(4, 400, 3);
    ls_net_fault_def f = {150000, 0, 0, 2000, 5000, 3, 0};
    sim_init(&s, 4, &d, &f);
    run_until_ticks(&s, 100);
    // The v1 attack: an ACK "from" slot 2's address claiming it holds everything.
    // Without slot 2's key its tag is wrong whatever the attacker puts in it.
    uint8_t buf[LS_NET_MAX_DATAGRAM], guess[LS_NET_KEY_SIZE];
    memset(guess, 0x5A, sizeof guess);
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_ACK;
    m.h.session = s.session;
    m.h.slot = 2;
    m.h.seq = 1000000;
    m.u.ack.count = 4;
    for (uint32_t k = 0; k < 4; k++) {
        m.u.ack.input_next[k] = 100000;
    }
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    ls_net_seal(buf, n, guess, LS_NET_TO_RELAY);
    ls_net_addr spoofed = peer_addr(2);
    for (int i = 0; i < 50; i++) {
        ls_relay_receive(s.relay, &spoofed, buf, n, s.now);
    }
    cr_assert_eq(ls_relay_stats_get(s.relay).bad_mac, 50u);
    // And one authentic but lying ACK (a buggy peer): it claims everything was received
    // while 15 % of the datagrams are lost. The next real ACK undoes it.
    ls_net_credential cred;
    ls_relay_session_credential(s.relay, s.session, 2, &cred);
    // A little ahead of the peer's own counter: its next datagrams stay inside the
    // replay window (an authentic sequence number far ahead would cut the slot off,
    // which only the key's holder can do: SPEC.md §17.3).
    m.h.seq = ls_peer_stats_get(s.peer[2]).packets_out + 100;
    n = ls_net_encode(&m, buf, sizeof buf);
    ls_net_seal(buf, n, cred.key, LS_NET_TO_RELAY);
    ls_relay_receive(s.relay, &spoofed, buf, n, s.now);
    run_until_finished(&s, 60000);
    assert_agreement(&s, 400);
    cr_assert_eq(ls_relay_stats_get(s.relay).desyncs, 0u);
    sim_free(&s);
}

// ---- acknowledgements that do not keep up (SPEC.md §17.5, §17.8) ----

// What a match with one misbehaving peer looked like to the honest ones.
typedef struct dropped_run {
    ls_relay_event ev;      // the relay's DISCONNECTED event of the bad slot
    uint64_t at;            // when it came
    uint64_t longest_stall; // longest time an honest peer's tick count did not move (us)
} dropped_run;

// Play to the end with peer `bad` misbehaving (the caller set how); once the relay
// disconnects it, it is muted (the others finish without it).
static dropped_run run_until_dropped(sim *s, uint32_t bad)
{
    dropped_run out;
    memset(&out, 0, sizeof out);
    uint32_t ticks[MAXP];
    uint64_t moved[MAXP];
    for (uint32_t i = 0; i < s->n; i++) {
        ticks[i] = ls_peer_ticks(s->peer[i]);
        moved[i] = s->now;
    }
    for (int ms = 0; ms < 60000 && !all_finished(s); ms++) {
        sim_step(s);
        for (uint32_t e = 0; e < s->nev && !out.at; e++) {
            if (s->ev[e].type == LS_RELAY_EV_DISCONNECTED && s->ev[e].slot == bad) {
                out.ev = s->ev[e];
                out.at = s->now;
                s->muted[bad] = true;
            }
        }
        for (uint32_t i = 0; i < s->n; i++) {
            if (i == bad || ls_peer_state_get(s->peer[i]) != LS_PEER_RUNNING) {
                continue;
            }
            if (ls_peer_ticks(s->peer[i]) != ticks[i]) {
                ticks[i] = ls_peer_ticks(s->peer[i]);
                moved[i] = s->now;
            } else if (s->now - moved[i] > out.longest_stall) {
                out.longest_stall = s->now - moved[i];
            }
        }
    }
    cr_assert(all_finished(s), "the honest peers finished (peer 0 at tick %u, %u events)",
              ls_peer_ticks(s->peer[0]), s->nev);
    for (int i = 0; i < 200; i++) {
        sim_step(s);
    }
    return out;
}

// The others finished on the recording's checksums; the bad slot is empty from its d on
// and every honest peer was told so, at d; the relay named it KICKED with the slots
// whose inputs it left unacknowledged.
static void assert_dropped(const sim *s, const dropped_run *run, uint32_t bad, uint32_t ticks)
{
    cr_assert_eq(run->ev.type, LS_RELAY_EV_DISCONNECTED, "the relay disconnected slot %u", bad);
    cr_assert_eq(run->ev.reason, LS_NET_KICKED);
    uint16_t others = (uint16_t)(((1u << s->n) - 1u) & ~(1u << bad));
    cr_assert_neq(run->ev.slots, 0, "the event names the slots it left unacknowledged");
    cr_assert_eq(run->ev.slots & ~others, 0, "only other slots (mask %x)", run->ev.slots);
    uint32_t d = run->ev.tick;
    for (uint32_t i = 0; i < s->n; i++) {
        if (i != bad) {
            cr_assert_eq(s->g[i].disc_slot, bad);
            cr_assert_eq(s->g[i].disc_tick, d, "peer %u agrees on the tick", i);
        }
    }
    assert_agreement(s, ticks);
    for (uint32_t t = d; t < ticks; t++) {
        cr_assert_eq(s->rec.inputs[t][bad], 0, "slot %u is empty from tick %u (at %u)", bad, d, t);
    }
    cr_assert_neq(s->rec.inputs[d - 1][bad], 0, "and had input just before");
    cr_assert_eq(ls_relay_stats_get(s->relay).desyncs, 0u);
}

// A modified client that acknowledges tick 0 of every slot in every ACK (authentic:
// sealed with its own key). The relay clamps the claim to the oldest tick its ring holds,
// input_next - 256, and the ring cannot slide past a live peer's claim: every slot's next
// input is refused, and without a rule nobody ever moves again (no event, no kick). Its
// acknowledgements stay below the first non-final tick: timeout_ms later it is kicked.
Test(net_core, a_peer_that_always_acks_tick_0_is_dropped_and_the_match_goes_on)
{
    sim s;
    ls_session_def d = sdef(4, 600, 3);
    d.timeout_ms = 1000;
    sim_init(&s, 4, &d, NULL);
    run_until_ticks(&s, 300);
    uint64_t began = s.now;
    uint32_t from = ls_peer_ticks(s.peer[2]);
    s.lying_acks = 2;
    dropped_run run = run_until_dropped(&s, 2);
    cr_log_info("lying ACKs from tick %u: kicked %llu us later at tick %u, others frozen %llu us",
                from, (unsigned long long)(run.at - began), run.ev.tick,
                (unsigned long long)run.longest_stall);
    assert_dropped(&s, &run, 2, 600);
    uint64_t after = run.at - began;
    cr_assert(after > 1000000u && after < 1100000u, "kicked %llu ms after it began lying",
              (unsigned long long)after / 1000);
    cr_assert_lt(run.longest_stall, 1100000u, "the others were frozen %llu ms",
                 (unsigned long long)run.longest_stall / 1000);
    cr_assert_gt(run.longest_stall, 900000u, "(the window did freeze them: %llu ms)",
                 (unsigned long long)run.longest_stall / 1000);
    sim_free(&s);
}

// A client that stops acknowledging (its ACKs never arrive) but keeps sending inputs,
// checksums and pings: its claims stay where they were while the match moves on, the
// relay sends it at most one batch (64 ticks) beyond them, so it soon stops simulating
// and everyone waits for its checksums and inputs, for ever (it is heard from: no
// timeout, no event). It is kicked timeout_ms after the first non-final tick passed its
// claims, about when it would have stalled.
Test(net_core, a_peer_that_stops_acknowledging_is_dropped_and_the_match_goes_on)
{
    sim s;
    ls_session_def d = sdef(4, 600, 3);
    d.timeout_ms = 1000;
    sim_init(&s, 4, &d, NULL);
    run_until_ticks(&s, 100);
    uint64_t began = s.now;
    s.silent_acks = 1;
    dropped_run run = run_until_dropped(&s, 1);
    cr_log_info("no ACKs from tick 100: kicked %llu us later at tick %u, longest wait %llu us",
                (unsigned long long)(run.at - began), run.ev.tick,
                (unsigned long long)run.longest_stall);
    assert_dropped(&s, &run, 1, 600);
    uint64_t after = run.at - began;
    cr_assert(after > 1000000u && after < 1100000u, "kicked %llu ms after its last ACK",
              (unsigned long long)after / 1000);
    cr_assert_lt(run.longest_stall, 100000u, "the others never waited (%llu ms)",
                 (unsigned long long)run.longest_stall / 1000);
    sim_free(&s);
}

// ---- the end of a match (SPEC.md §17.8) ----

// Play until every peer is FINISHED, none calling ls_peer_leave, then 5 s more (the
// game keeps polling its finished peer). Returns the relay's datagrams of each type
// after the last FINISHED, and when (us after it) the relay sent its last one and the
// session became idle.
typedef struct after_finish {
    uint64_t types[16];
    uint64_t last_sent, idle; // UINT64_MAX: never
} after_finish;

static after_finish finish_without_leave(sim *s)
{
    for (int ms = 0; ms < 60000 && !all_finished(s); ms++) {
        sim_step(s);
    }
    cr_assert(all_finished(s));
    after_finish out;
    memset(&out, 0, sizeof out);
    out.last_sent = 0;
    out.idle = UINT64_MAX;
    uint64_t t0 = s->now;
    for (int ms = 0; ms < 5000; ms++) {
        s->now += 1000;
        for (size_t i = 0; i < s->qlen;) { // sim_step, with the relay's datagrams counted
            if (s->q[i].at > s->now) {
                i++;
                continue;
            }
            packet p = s->q[i];
            s->q[i] = s->q[--s->qlen];
            if (p.dest < 0) {
                ls_relay_receive(s->relay, &p.from, p.data, p.len, s->now);
            } else {
                ls_peer_receive(s->peer[p.dest], p.data, p.len, s->now);
            }
        }
        ls_relay_poll(s->relay, s->now);
        for (uint32_t i = 0; i < s->n; i++) {
            ls_peer_poll(s->peer[i], s->now);
        }
        ls_net_datagram d;
        ls_net_addr ra = relay_addr();
        while (ls_relay_next_datagram(s->relay, &d)) {
            out.types[d.data[3] & 15]++;
            out.last_sent = s->now - t0;
            enqueue(s, d.to.port - 20000, &ra, d.data, d.len);
        }
        for (uint32_t i = 0; i < s->n; i++) {
            ls_net_addr pa = peer_addr((int)i);
            while (ls_peer_next_datagram(s->peer[i], &d)) {
                cr_assert_neq(d.data[3], LS_NET_DISCONNECT, "a finished peer said goodbye once");
                enqueue(s, -1, &pa, d.data, d.len);
            }
        }
        if (out.idle == UINT64_MAX && ls_relay_session_idle(s->relay, s->session)) {
            out.idle = s->now - t0;
        }
    }
    drain(s);
    return out;
}

// A game that never calls ls_peer_leave: its peer says goodbye as it becomes FINISHED
// (DISCONNECT LEFT, tick N, three times), so the relay releases every slot at once: the
// session is idle as soon as the last goodbye arrives and the relay sends nothing more.
// Under 10 % loss, 5 ms jitter. Were every goodbye lost, the relay would still send a
// finished peer nothing unasked (no re-sends, no pings: it reported every checksum), so
// it falls silent and is released timeout_ms after its last datagram (second match).
Test(net_core, finished_peers_release_the_session_without_leave)
{
    sim s;
    ls_session_def d = sdef(4, 300, 3);
    ls_net_fault_def f = {100000, 0, 0, 2000, 5000, 13, 0};
    sim_init(&s, 4, &d, &f);
    after_finish a = finish_without_leave(&s);
    cr_assert_lt(a.idle, 50000u, "idle %llu ms after the last peer finished",
                 (unsigned long long)a.idle / 1000);
    cr_log_info("goodbyes: relay's last datagram %llu us, idle %llu us after the last FINISHED",
                (unsigned long long)a.last_sent, (unsigned long long)a.idle);
    cr_assert_leq(a.last_sent, a.idle, "nothing sent once idle (last at %llu ms)",
                  (unsigned long long)a.last_sent / 1000);
    for (uint32_t k = 0; k < 4; k++) {
        ls_relay_peer_stats ps = ls_relay_peer_stats_get(s.relay, s.session, k);
        cr_assert_eq(ps.reason, LS_NET_LEFT, "slot %u left", k);
        cr_assert_eq(ps.disconnect_tick, 300u);
        cr_assert_eq(ls_peer_state_get(s.peer[k]), LS_PEER_FINISHED, "and is FINISHED");
    }
    assert_agreement(&s, 300);
    sim_free(&s);

    d.timeout_ms = 1000;
    sim_init(&s, 4, &d, &f);
    s.lose_byes = true;
    a = finish_without_leave(&s);
    cr_assert_eq(a.types[LS_NET_INPUT] + a.types[LS_NET_PING], 0u,
                 "no re-sends or pings after the last FINISHED (%llu %llu)",
                 (unsigned long long)a.types[LS_NET_INPUT],
                 (unsigned long long)a.types[LS_NET_PING]);
    // Each timeout's notice, once to each slot still connected and to itself: 4 + 3 + 2 + 1,
    // never re-sent (a finished peer sends no ACK to confirm it).
    cr_assert_leq(a.types[LS_NET_DISCONNECT], 10u, "%llu notices",
                  (unsigned long long)a.types[LS_NET_DISCONNECT]);
    cr_assert(a.idle > 900000u && a.idle <= 1001000u, "idle %llu ms after the last FINISHED",
              (unsigned long long)a.idle / 1000);
    cr_log_info("goodbyes lost: relay's last datagram %llu us, idle %llu us after the last "
                "FINISHED",
                (unsigned long long)a.last_sent, (unsigned long long)a.idle);
    for (uint32_t k = 0; k < 4; k++) {
        ls_relay_peer_stats ps = ls_relay_peer_stats_get(s.relay, s.session, k);
        cr_assert_eq(ps.reason, LS_NET_TIMEOUT, "slot %u timed out", k);
        cr_assert_eq(ps.disconnect_tick, 300u);
    }
    assert_agreement(&s, 300);
    sim_free(&s);
}

// ---- the network watch (SPEC.md §17.9): interruptions, per-slot stats, rates ----

// Step until the fake clock reads t (us).
static void run_to(sim *s, uint64_t t)
{
    while (s->now < t) {
        sim_step(s);
    }
}

// GGRS-style NetworkInterrupted / NetworkResumed. Peer 2's link is cut for 1.5 s (below
// the session's 3 s timeout), later for 5 s. The cut peer reports its own slot interrupted
// interrupt_us (500 ms) after the relay went silent and resumed when it hears the relay
// again; the others report slot 2 (the one they all wait for, never each other) 500..800
// ms after its last input, resumed when its inputs come again. The second time the relay's
// timeout disconnects it: INTERRUPTED came 2 s before, and the disconnect ends the
// interruption (no RESUMED for it). Each event comes once per interruption.
Test(net_core, interrupted_and_resumed_events_come_before_the_timeout)
{
    sim s;
    ls_session_def d = sdef(3, 1500, 3);
    sim_init(&s, 3, &d, NULL);
    const uint64_t t0 = s.now, ms = 1000;
    run_to(&s, t0 + 1000 * ms);
    s.cut[2] = true;
    run_to(&s, t0 + 2400 * ms); // 1.4 s into the cut: everyone was told, nobody is gone
    cr_assert_eq(s.g[2].intr[2], 1u, "the cut peer: its own link");
    cr_assert_geq(s.g[2].intr_us[2], t0 + 1450 * ms);
    cr_assert_leq(s.g[2].intr_us[2], t0 + 1500 * ms);
    ls_peer_stats st = ls_peer_stats_get(s.peer[2]);
    cr_assert(st.interrupted);
    cr_assert_eq(st.interruptions, 1u);
    cr_assert(ls_peer_remote_stats_get(s.peer[2], 2).interrupted);
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(s.g[i].intr[0] + s.g[i].intr[1], 0u, "peer %u named nobody else", i);
        cr_assert_eq(s.g[i].disc_events, 0u);
        if (i == 2) {
            continue;
        }
        cr_assert_eq(s.g[i].intr[2], 1u, "peer %u: slot 2 interrupted", i);
        cr_assert_geq(s.g[i].intr_us[2], t0 + 1500 * ms);
        cr_assert_leq(s.g[i].intr_us[2], t0 + 1800 * ms, "peer %u: at %llu ms", i,
                      (unsigned long long)((s.g[i].intr_us[2] - t0) / ms));
        ls_peer_remote_stats r = ls_peer_remote_stats_get(s.peer[i], 2);
        cr_assert(r.interrupted);
        cr_assert_eq(r.interruptions, 1u);
        cr_assert_geq(r.since_input_us, 1300 * ms);
        cr_assert_not(r.gone);
        cr_assert_leq(r.frames_behind, 3, "lockstep waits for it: at most the input delay");
        cr_assert_not(ls_peer_remote_stats_get(s.peer[i], 1 - i).interrupted);
        cr_assert_not(ls_peer_stats_get(s.peer[i]).interrupted, "peer %u hears the relay", i);
    }
    run_to(&s, t0 + 2500 * ms);
    s.cut[2] = false;
    run_to(&s, t0 + 2700 * ms);
    cr_assert_eq(s.g[2].resumed[2], 1u);
    cr_assert_geq(s.g[2].resumed_us[2], t0 + 2500 * ms);
    cr_assert_leq(s.g[2].resumed_us[2], t0 + 2510 * ms);
    cr_assert_geq(s.g[2].resumed_ms[2], 1500u, "its length: %u ms", s.g[2].resumed_ms[2]);
    cr_assert_leq(s.g[2].resumed_ms[2], 1530u);
    cr_assert_not(ls_peer_stats_get(s.peer[2]).interrupted);
    for (uint32_t i = 0; i < 2; i++) {
        cr_assert_eq(s.g[i].resumed[2], 1u, "peer %u: slot 2 resumed", i);
        cr_assert_geq(s.g[i].resumed_us[2], t0 + 2500 * ms);
        cr_assert_leq(s.g[i].resumed_us[2], t0 + 2600 * ms);
        cr_assert_not(ls_peer_remote_stats_get(s.peer[i], 2).interrupted);
    }
    // A cut longer than the timeout.
    run_to(&s, t0 + 6000 * ms);
    s.cut[2] = true;
    run_to(&s, t0 + 11000 * ms);
    for (uint32_t i = 0; i < 2; i++) {
        cr_assert_eq(s.g[i].intr[2], 2u);
        cr_assert_geq(s.g[i].intr_us[2], t0 + 6500 * ms);
        cr_assert_leq(s.g[i].intr_us[2], t0 + 6800 * ms);
        cr_assert_eq(s.g[i].disc_events, 1u);
        cr_assert_eq(s.g[i].disc_slot, 2u);
        cr_assert_gt(s.g[i].disc_us, s.g[i].intr_us[2] + 2000 * ms, "told 2 s before the timeout");
        cr_assert_eq(s.g[i].resumed[2], 1u, "the disconnect ended it: no RESUMED");
        ls_peer_remote_stats r = ls_peer_remote_stats_get(s.peer[i], 2);
        cr_assert(r.gone);
        cr_assert_not(r.interrupted);
        cr_assert_eq(r.reason, LS_NET_TIMEOUT);
        cr_assert_eq(r.gone_tick, s.g[i].disc_tick);
        cr_assert_eq(r.interruptions, 2u);
        cr_assert_eq(s.g[i].intr[0] + s.g[i].intr[1], 0u);
    }
    cr_assert_eq(s.g[2].intr[2], 2u);
    cr_assert_eq(s.g[2].resumed[2], 1u);
    cr_assert_not(ls_peer_rejoins(s.peer[2]), "no load/state_checksum: it does not rejoin");
    s.cut[2] = false;
    run_to(&s, t0 + 11100 * ms);
    cr_assert_eq(s.g[2].resumed[2], 2u, "it hears the relay again ...");
    cr_assert_eq(s.g[2].disc_events, 1u, "... which says it is gone");
    cr_assert_leq(s.g[2].resumed_us[2], s.g[2].disc_us);
    cr_assert_eq(ls_peer_state_get(s.peer[2]), LS_PEER_LEFT);
    s.muted[2] = true;
    run_until_finished(&s, 60000);
    assert_agreement(&s, 1500);
    sim_free(&s);
}

// Per-slot stats (frontier, the relay's frontier, frames behind, the age of the last
// input), the traffic rates (a mean over about the last second), the outbox and the
// unacknowledged inputs, in a match with 10 % loss and 20..30 ms of one-way delay: no
// interruption is ever reported there.
Test(net_core, per_slot_stats_traffic_rates_and_the_send_queue)
{
    sim s;
    ls_session_def d = sdef(3, 600, 3);
    ls_net_fault_def f = {.loss_ppm = 100000, .delay_us = 20000, .jitter_us = 10000, .seed = 5};
    sim_init(&s, 3, &d, &f);
    cr_assert_eq(ls_peer_remote_stats_get(s.peer[0], 0).frontier, 0u, "nothing before WELCOME");
    ls_peer_poll(s.peer[0], s.now); // JOIN waits in the outbox until the transport takes it
    cr_assert_eq(ls_peer_stats_get(s.peer[0]).send_queue, 1u);
    drain(&s);
    cr_assert_eq(ls_peer_stats_get(s.peer[0]).send_queue, 0u);
    const uint64_t t0 = s.now, ms = 1000;
    run_to(&s, t0 + 4000 * ms);
    ls_peer_stats a = ls_peer_stats_get(s.peer[0]);
    run_to(&s, t0 + 5000 * ms);
    ls_peer_stats b = ls_peer_stats_get(s.peer[0]);
    uint64_t in = (b.bytes_in - a.bytes_in) * 8 / 1000,
             out = (b.bytes_out - a.bytes_out) * 8 / 1000;
    cr_log_info("peer 0: %u kbps in (%llu over the last second), %u kbps out (%llu), rtt %u us",
                b.kbps_in, (unsigned long long)in, b.kbps_out, (unsigned long long)out, b.rtt_us);
    cr_assert_gt(in, 0u);
    cr_assert(b.kbps_in * 10 >= in * 8 && b.kbps_in * 10 <= in * 12, "kbps_in %u", b.kbps_in);
    cr_assert(b.kbps_out * 10 >= out * 8 && b.kbps_out * 10 <= out * 12, "kbps_out %u", b.kbps_out);
    cr_assert_geq(b.rtt_us, 40000u);
    cr_assert_leq(b.rtt_us, 60000u);
    cr_assert_eq(b.send_queue, 0u, "the simulated transport takes everything");
    cr_assert_leq(b.unacked_inputs, 10u);
    uint32_t ticks = ls_peer_ticks(s.peer[0]);
    for (uint32_t k = 0; k < 3; k++) {
        ls_peer_remote_stats r = ls_peer_remote_stats_get(s.peer[0], k);
        cr_assert_gt(r.frontier, 250u, "slot %u: %u", k, r.frontier);
        cr_assert_eq(r.frames_behind, (int32_t)ticks - ((int32_t)r.frontier - 3));
        cr_assert_leq(r.frames_behind, 3);
        cr_assert_geq(r.frames_behind, -8 - 1, "within the lead bound");
        cr_assert_lt(r.since_input_us, 300 * ms, "slot %u: %llu us", k,
                     (unsigned long long)r.since_input_us);
        cr_assert_not(r.interrupted);
        cr_assert_not(r.gone);
        cr_assert_eq(r.reason, 0);
        cr_assert_eq(r.rejoins, 0u);
        if (k == 0) { // ours: what the relay acknowledged
            cr_assert_eq(r.frontier - r.relay_frontier, b.unacked_inputs);
        } else {
            cr_assert_gt(r.relay_frontier + 16, r.frontier);
            cr_assert_lt(r.relay_frontier, r.frontier + 16);
        }
    }
    cr_assert_eq(ls_peer_remote_stats_get(s.peer[0], 3).frontier, 0u, "not a slot");
    run_until_finished(&s, 60000);
    for (uint32_t i = 0; i < 3; i++) {
        ls_peer_stats st = ls_peer_stats_get(s.peer[i]);
        cr_assert_eq(st.interruptions, 0u);
        cr_assert_eq(st.unacked_inputs, 0u);
        for (uint32_t k = 0; k < 3; k++) {
            cr_assert_eq(s.g[i].intr[k], 0u, "peer %u: no interruption of slot %u", i, k);
        }
    }
    assert_agreement(&s, 600);
    sim_free(&s);
}

// ---- the relay's recording, verified offline (SPEC.md §16.9) ----

// The relay's recorder hook feeding a replay recorder (as `lockstep relay --record`
// does), and the test's own record.
typedef struct replay_hook {
    sim *s;
    ls_replay_recorder *rec;
} replay_hook;

static void hook_tick(void *user, uint32_t session, uint32_t tick, const uint8_t *inputs,
                      uint64_t checksum)
{
    replay_hook *h = user;
    rec_tick(h->s, session, tick, inputs, checksum);
    cr_assert_eq(ls_replay_recorder_append(h->rec, inputs, checksum), LS_OK, "%s",
                 ls_replay_recorder_error(h->rec)->message);
}

static void hook_claims(void *user, uint32_t session, uint32_t tick, uint16_t reported,
                        const uint64_t *claims, bool disputed)
{
    replay_hook *h = user;
    rec_claims(h->s, session, tick, reported, claims, disputed);
    cr_assert_eq(ls_replay_recorder_claims(h->rec, tick, reported, claims, disputed), LS_OK, "%s",
                 ls_replay_recorder_error(h->rec)->message);
}

static void hook_end(void *user, uint32_t session, uint32_t ticks)
{
    replay_hook *h = user;
    rec_end(h->s, session, ticks);
    cr_assert_eq(ls_replay_recorder_finish(h->rec), LS_OK);
}

// Re-simulation of the fake game from the recorded inputs alone (g_advance
// without a perturbation).
static void *chain_load(void *user, const uint8_t *scene, size_t scene_size, const uint8_t *kf,
                        size_t kf_size, ls_error *err)
{
    (void)user, (void)scene, (void)scene_size, (void)kf, (void)kf_size, (void)err;
    return calloc(1, sizeof(uint64_t));
}

static uint64_t chain_advance(void *user, void *state, uint32_t tick, const uint8_t *inputs)
{
    const uint32_t *slots = user;
    uint64_t *h = state;
    ls_hasher hs;
    ls_hasher_init(&hs);
    ls_hasher_put_u64(&hs, *h);
    ls_hasher_put_u32(&hs, tick);
    ls_hasher_put_bytes(&hs, inputs, *slots);
    *h = ls_hasher_digest(&hs);
    return *h;
}

static uint64_t chain_checksum(void *user, const void *state)
{
    (void)user;
    return *(const uint64_t *)state;
}

static void chain_destroy(void *user, void *state)
{
    (void)user;
    free(state);
}

// Item 2 of "net you can ship a competitive game on": with two players nobody can
// tell who lied from checksums alone, but the recording can. Slot 0 diverges at
// tick 37: the relay names nobody, records slot 0's (the lowest) claim as each
// tick's checksum and keeps both claims; re-simulating the recorded inputs
// verifies the recording and names player 0 at every tick from 37 on.
Test(net_core, the_relays_recording_of_a_dispute_names_the_liar_offline)
{
    sim s;
    ls_session_def d = sdef(2, 200, 3);
    sim_init(&s, 2, &d, NULL);
    s.g[0].perturb_tick = 37;
    char path[128];
    snprintf(path, sizeof path, "/tmp/ls_test_net_core_claims_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.players = 2;
    def.keyframe_interval = 0;
    def.fingerprint = "net-core-hash-chain";
    def.claims = true;
    replay_hook hook = {&s, ls_replay_recorder_create(path, &def, NULL)};
    cr_assert_not_null(hook.rec);
    ls_relay_recorder rr = {&hook, hook_tick, hook_end, hook_claims};
    cr_assert_eq(ls_relay_session_set_recorder(s.relay, s.session, &rr), LS_OK);
    run_until_finished(&s, 20000);
    cr_assert(s.rec.ended);
    ls_replay_recorder_destroy(hook.rec);

    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open(path, &err);
    cr_assert_not_null(r, "%s", err.message);
    remove(path);
    cr_assert_eq(ls_replay_reader_header(r)->format_version, 2);
    cr_assert_eq(ls_replay_reader_ticks(r), 200);
    cr_assert_eq(ls_replay_reader_claims_count(r), 200 - 37, "every tick from 37 disagrees");
    cr_assert_eq(ls_replay_reader_checksum(r, 37), s.g[0].sums[37], "the liar's claim");
    uint32_t slots = 2;
    ls_replay_sim sim_def = {&slots,        chain_load, chain_advance, chain_checksum,
                             chain_destroy, NULL,       NULL};
    ls_replay_verify_result res;
    ls_replay_verify_segments(r, &sim_def, 0, 1, false, &res);
    cr_assert_eq(res.code, LS_OK, "%s", res.message);
    cr_assert_eq(res.ticks_verified, 200);
    cr_assert_eq(res.verdict_count, 200 - 37);
    for (uint32_t i = 0; i < res.verdict_count; i++) {
        const ls_replay_verdict *v = &res.verdicts[i];
        cr_assert_eq(v->tick, 37 + i);
        cr_assert(v->disputed, "tick %u", v->tick);
        cr_assert_eq(v->reported, 3u);
        cr_assert_eq(v->wrong, 1u, "tick %u: player 0 was wrong", v->tick);
        cr_assert_eq(v->computed, s.g[1].sums[v->tick], "the truth is player 1's");
        cr_assert_neq(v->recorded, v->computed);
    }
    ls_replay_verify_result_release(&res);
    ls_replay_reader_destroy(r);
    sim_free(&s);
}

Test(net_core, sessions_created_at_chosen_ids_skip_the_ids_between)
{
    // A relay sharded over threads (lockstep relay --workers) numbers sessions across
    // its relays: each relay makes the ids it is given, the ones between stay free.
    ls_relay_def rd = ls_default_relay_def();
    rd.max_sessions = 8;
    ls_relay *r = ls_relay_create(&rd, NULL);
    cr_assert_not_null(r);
    ls_session_def d = sdef(2, 0, 2);
    cr_assert_eq(ls_relay_session_create_at(r, &d, 0, 3), LS_OK);
    ls_net_credential c;
    cr_assert_eq(ls_relay_session_credential(r, 3, 1, &c), LS_OK);
    cr_assert_eq(c.session, 3u, "the credential carries the chosen id");
    cr_assert_eq(ls_relay_session_credential(r, 2, 0, &c), LS_ERR_NOT_FOUND, "2 was skipped");
    cr_assert_not(ls_relay_session_done(r, 2));
    cr_assert_eq(ls_relay_session_end(r, 2, 0), LS_ERR_NOT_FOUND);
    ls_relay_poll(r, 1000); // the skipped ids are passed over
    cr_assert_eq(ls_relay_session_create_at(r, &d, 0, 3), LS_ERR_INVALID_ARGUMENT, "in use");
    cr_assert_eq(ls_relay_session_create_at(r, &d, 0, 0), LS_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ls_relay_session_create_at(r, &d, 0, 9), LS_ERR_CAPACITY);
    ls_session_def bad = d;
    bad.slots = 1;
    cr_assert_eq(ls_relay_session_create_at(r, &bad, 0, 2), LS_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ls_relay_session_create_at(r, &d, 0, 2), LS_OK, "a skipped id, made later");
    uint32_t id = 0;
    cr_assert_eq(ls_relay_session_create(r, &d, 0, &id), LS_OK);
    cr_assert_eq(id, 4u, "ls_relay_session_create goes on after the highest id");
    cr_assert_eq(ls_relay_session_create_at(r, &d, 0, 8), LS_OK);
    cr_assert_eq(ls_relay_session_create(r, &d, 0, &id), LS_ERR_CAPACITY);
    ls_relay_destroy(r);
}
