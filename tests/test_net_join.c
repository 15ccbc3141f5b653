// SPDX-License-Identifier: MIT
// Spectators in-process, on a simulated network with a fake clock (SPEC.md
// §17.10): several spectators (one joining late) simulate the final ticks and
// end on the players' checksums; a spectator that stops acknowledging never
// slows the match and is dropped; a spectator credential can never act as a
// player (every attempt is refused and counted).
#include "ls/checksum.h"
#include "ls/net_auth.h"
#include "ls/net_fault.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"
#include "ls/net_spectator.h"
#include "net_fake_game.h"

#include "net_trace.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define MAXP       8
#define MAXV       4
#define MAXT       4096
#define RELAY_PORT 9000

// ---- a fake game: the state is a hash chain of every tick's inputs ----

typedef struct game {
    uint32_t slot;
    uint64_t state;
    uint64_t sums[MAXT];
    uint32_t ticks;
    // Switch ticks this peer saw, per slot (UINT32_MAX: none), and snapshots loaded.
    uint32_t gone_at[MAXP], back_at[MAXP];
    uint32_t match_ticks; // departures from here on are finished slots' goodbyes
    uint32_t loads, loaded_tick;
    bool lie; // a modified client: the states it uploads for rejoiners are perturbed
    uint32_t refused, refused_source; // snapshots this peer refused, and the last one's source
    // Network interruptions this peer reported per slot (count, fake time of the latest),
    // and when it saw each slot disconnect.
    const uint64_t *clock;
    uint32_t interrupted[MAXP], resumed[MAXP];
    uint64_t interrupted_us[MAXP], gone_us[MAXP];
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
    if (tick < MAXT) {
        g->sums[tick] = g->state;
    }
    g->ticks = tick + 1;
    return g->state;
}

static bool g_load(void *user, uint32_t tick, const uint8_t *data, size_t len);

static void g_event(void *user, const ls_peer_event *ev)
{
    game *g = user;
    if (ev->type == LS_PEER_EV_DISCONNECTED && ev->slot < MAXP && ev->tick < g->match_ticks) {
        g->gone_at[ev->slot] = ev->tick;
        g->gone_us[ev->slot] = *g->clock;
    } else if (ev->type == LS_PEER_EV_INTERRUPTED && ev->slot < MAXP) {
        g->interrupted[ev->slot]++;
        g->interrupted_us[ev->slot] = *g->clock;
    } else if (ev->type == LS_PEER_EV_RESUMED && ev->slot < MAXP) {
        g->resumed[ev->slot]++;
    } else if (ev->type == LS_PEER_EV_REJOINED && ev->slot < MAXP) {
        g->back_at[ev->slot] = ev->tick;
    } else if (ev->type == LS_PEER_EV_SNAPSHOT_REFUSED) {
        g->refused++;
        g->refused_source = ev->slot;
    }
}

typedef struct watcher {
    game g;
    uint32_t mismatches, dropped, finished, snapshots, loaded_tick;
} watcher;

#define SNAP_SIZE 3000 // three STATE_CHUNKs: the state, then a checkable pattern

static void snap_fill(uint8_t *buf, uint64_t state)
{
    for (uint32_t i = 0; i < 8; i++) {
        buf[i] = (uint8_t)(state >> (8 * i));
    }
    for (uint32_t i = 8; i < SNAP_SIZE; i++) {
        buf[i] = (uint8_t)(i * 31u + 7u);
    }
}

static bool w_load(void *user, uint32_t tick, const uint8_t *data, size_t len)
{
    watcher *w = user;
    if (len != SNAP_SIZE) {
        return false;
    }
    uint64_t state = 0;
    for (uint32_t i = 0; i < 8; i++) {
        state |= (uint64_t)data[i] << (8 * i);
    }
    uint8_t want[SNAP_SIZE];
    snap_fill(want, state);
    if (memcmp(want, data, len) != 0) {
        return false;
    }
    w->g.state = state;
    w->snapshots++;
    w->loaded_tick = tick;
    return true;
}

static bool g_load(void *user, uint32_t tick, const uint8_t *data, size_t len)
{
    game *g = user;
    watcher w;
    memset(&w, 0, sizeof w);
    if (!w_load(&w, tick, data, len)) {
        return false;
    }
    g->state = w.g.state;
    g->loads++;
    g->loaded_tick = tick;
    return true;
}

static size_t g_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    game *g = user;
    (void)tick;
    if (cap < SNAP_SIZE) {
        return SNAP_SIZE;
    }
    snap_fill(buf, g->state ^ (g->lie ? 0x5A5Au : 0u)); // valid-looking, but not the state
    return SNAP_SIZE;
}

static uint64_t g_state_checksum(void *user, uint32_t tick)
{
    const game *g = user;
    (void)tick;
    return g->state;
}

static uint64_t w_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                          uint32_t isz)
{
    watcher *w = user;
    return g_advance(&w->g, tick, inputs, slots, isz);
}

static void w_event(void *user, const ls_spectator_event *ev)
{
    watcher *w = user;
    w->mismatches += ev->type == LS_SPECTATOR_EV_MISMATCH;
    w->dropped += ev->type == LS_SPECTATOR_EV_DROPPED;
    w->finished += ev->type == LS_SPECTATOR_EV_FINISHED;
}

// ---- the simulated network: peers at 20000+i, spectators at 21000+i ----

typedef struct packet {
    uint64_t at;
    int dest;         // -1 relay, 0.. peers, 100.. spectators
    uint16_t to_port; // a peer's port (a restarted peer at a new port never gets the old's)
    ls_net_addr from;
    size_t len;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} packet;

typedef struct sim {
    ls_relay *relay;
    uint32_t session;
    ls_session_def sdef;
    net_trace trace; // every datagram sent (tests/net_trace.h)
    uint32_t n, nv;
    ls_peer *peer[MAXP];
    game g[MAXP];
    ls_spectator *spec[MAXV];
    watcher w[MAXV];
    bool spec_started[MAXV];
    bool spec_muted[MAXV];  // neither polled nor delivered to
    bool spec_no_ack[MAXV]; // receives everything, everything it sends is lost
    bool serve_state;       // answer LS_RELAY_EV_STATE_NEEDED from peer 0's states
    bool muted[MAXP];       // a peer in an outage: nothing it sends or is sent arrives
    bool frozen[MAXP];      // a game that stopped calling its peer: not polled, nothing delivered
                            // (datagrams to it wait, as in a socket's buffer)
    bool moved[MAXP];       // peer i was started again at port 22000 + i (a new socket)
    uint64_t epoch[MAXP];   // peer i's clock reads now - epoch[i] (a page's starts at its load)
    uint32_t state_requests;
    // The relay's last DISCONNECTED event of each slot before the end of the match (a
    // finished slot's goodbye, at the match length, comes after): tick and reason.
    uint32_t gone_tick[MAXP];
    uint8_t gone_reason[MAXP];
    ls_net_fault fault;
    packet *q;
    size_t qlen, qcap;
    uint64_t now;
    uint64_t rec_sums[MAXT];
    uint8_t rec_inputs[MAXT][MAXP]; // the recorded inputs (input size 1)
    uint32_t rec_ticks;
    bool rollback;          // peers in rollback mode (set before sim_init through sim_mode)
    ls_relay_event ev[256]; // the relay's events but STATE_NEEDED (first 256)
    uint32_t nev;
    bool trace_unpinned; // a seeded soak run: its traffic is not in tests/net_traces.txt
} sim;

static bool next_rollback; // sim_init's mode for the next sim (tests run one at a time)

static ls_net_addr addr_of(int dest)
{
    return ls_net_addr_ipv4(127, 0, 0, 1,
                            (uint16_t)(dest < 0     ? RELAY_PORT
                                       : dest < 100 ? 20000 + dest
                                                    : 21000 + dest - 100));
}

static uint16_t peer_port(const sim *s, uint32_t i)
{
    return (uint16_t)(s->moved[i] ? 22000 + i : 20000 + i);
}

static void enqueue(sim *s, int dest, const ls_net_addr *from, const uint8_t *data, size_t len,
                    uint16_t to_port)
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
        p->at = when[c] > s->now ? when[c] : s->now + 1;
        p->dest = dest;
        p->to_port = to_port;
        p->from = *from;
        p->len = len;
        memcpy(p->data, data, len);
    }
}

static void rec_tick(void *user, uint32_t session, uint32_t tick, const uint8_t *inputs,
                     uint64_t checksum)
{
    sim *s = user;
    (void)session;
    (void)inputs;
    if (tick < MAXT) {
        s->rec_sums[tick] = checksum;
        memcpy(s->rec_inputs[tick], inputs, s->sdef.slots);
    }
    s->rec_ticks = tick + 1;
}

static void drain(sim *s)
{
    ls_net_datagram d;
    ls_net_addr ra = addr_of(-1);
    while (ls_relay_next_datagram(s->relay, &d)) {
        int dest = d.to.port >= 22000   ? d.to.port - 22000
                   : d.to.port >= 21000 ? 100 + d.to.port - 21000
                                        : d.to.port - 20000;
        enqueue(s, dest, &ra, d.data, d.len, d.to.port);
    }
    for (uint32_t i = 0; i < s->n; i++) {
        ls_net_addr pa = ls_net_addr_ipv4(127, 0, 0, 1, peer_port(s, i));
        while (s->peer[i] && ls_peer_next_datagram(s->peer[i], &d)) {
            if (!s->muted[i]) {
                enqueue(s, -1, &pa, d.data, d.len, RELAY_PORT);
            }
        }
    }
    for (uint32_t i = 0; i < s->nv; i++) {
        ls_net_addr va = addr_of(100 + (int)i);
        while (s->spec_started[i] && ls_spectator_next_datagram(s->spec[i], &d)) {
            if (!s->spec_muted[i] && !s->spec_no_ack[i]) {
                enqueue(s, -1, &va, d.data, d.len, RELAY_PORT);
            }
        }
    }
    ls_relay_event ev;
    while (ls_relay_next_event(s->relay, &ev)) {
        if (ev.type != LS_RELAY_EV_STATE_NEEDED && s->nev < 256) {
            s->ev[s->nev++] = ev;
        }
        if (ev.type == LS_RELAY_EV_DISCONNECTED && ev.slot < MAXP && ev.tick < s->sdef.ticks) {
            s->gone_tick[ev.slot] = ev.tick;
            s->gone_reason[ev.slot] = ev.reason;
        }
        if (ev.type == LS_RELAY_EV_STATE_NEEDED) {
            s->state_requests++;
            // The host's answer: the state before tick T is the one after T - 1.
            if (s->serve_state && ev.tick >= 1 && s->g[0].ticks >= ev.tick) {
                uint8_t snap[SNAP_SIZE];
                snap_fill(snap, s->g[0].sums[ev.tick - 1]);
                cr_assert_eq(
                    ls_relay_session_put_state(s->relay, s->session, ev.tick, snap, sizeof snap),
                    LS_OK);
            }
        }
    }
}

// Peer i's game (fresh) and its peer. first_seq, restarted: as ls_peer_def (a peer started
// again for slot i: SPEC.md §17.3, §17.10).
static ls_peer *sim_peer(sim *s, uint32_t i, uint64_t first_seq, bool restarted)
{
    memset(&s->g[i], 0, sizeof s->g[i]);
    s->g[i].slot = i;
    s->g[i].clock = &s->now;
    for (uint32_t k = 0; k < MAXP; k++) {
        s->g[i].gone_at[k] = s->g[i].back_at[k] = UINT32_MAX;
        s->g[i].match_ticks = s->sdef.ticks;
    }
    // No rejoin setting: the default (LS_PEER_REJOIN_AUTO) rejoins since the game
    // gives load and state_checksum.
    ls_peer_def pd = ls_default_peer_def();
    pd.first_seq = first_seq;
    pd.restarted = restarted;
    pd.cb.load = g_load;
    pd.cb.state_checksum = g_state_checksum;
    pd.cb.save = g_save; // a bare relay asks a player for the rejoiner's snapshot
    pd.mode = s->rollback ? LS_PEER_ROLLBACK : LS_PEER_LOCKSTEP;
    pd.cb.on_event = g_event;
    ls_net_credential cred;
    cr_assert_eq(ls_relay_session_credential(s->relay, s->session, i, &cred), LS_OK);
    cr_assert_eq(ls_peer_def_set_credential(&pd, &cred), LS_OK);
    pd.relay = addr_of(-1);
    pd.cb.user = &s->g[i];
    pd.cb.local_input = g_input;
    pd.cb.advance = g_advance;
    return ls_peer_create(&pd, NULL);
}

static void sim_init(sim *s, uint32_t n, uint32_t nv, const ls_session_def *sd,
                     const ls_net_fault_def *fd)
{
    memset(s, 0, sizeof *s);
    s->rollback = next_rollback;
    next_rollback = false;
    s->now = 1000000;
    ls_relay_def rd = ls_default_relay_def();
    s->relay = ls_relay_create(&rd, NULL);
    cr_assert_not_null(s->relay);
    s->sdef = *sd;
    cr_assert_eq(ls_relay_session_create(s->relay, sd, s->now, &s->session), LS_OK);
    ls_relay_recorder rec = {s, rec_tick, NULL, NULL};
    ls_relay_session_set_recorder(s->relay, s->session, &rec);
    ls_net_fault_def none = {0, 0, 0, 0, 0, 0, 0};
    ls_net_fault_init(&s->fault, fd ? fd : &none);
    s->n = n;
    s->nv = nv;
    for (uint32_t i = 0; i < n; i++) {
        s->peer[i] = sim_peer(s, i, 0, false);
        cr_assert_not_null(s->peer[i]);
    }
    for (uint32_t i = 0; i < nv; i++) {
        ls_spectator_def vd = ls_default_spectator_def();
        ls_net_credential cred;
        cr_assert_eq(ls_relay_session_spectator_credential(s->relay, s->session, i, &cred), LS_OK);
        cr_assert_eq(cred.role, LS_NET_ROLE_SPECTATOR);
        cr_assert_eq(ls_spectator_def_set_credential(&vd, &cred), LS_OK);
        vd.relay = addr_of(-1);
        vd.cb.user = &s->w[i];
        vd.cb.advance = w_advance;
        vd.cb.on_event = w_event;
        vd.cb.load = w_load;
        s->spec[i] = ls_spectator_create(&vd, NULL);
        cr_assert_not_null(s->spec[i]);
        s->spec_started[i] = true;
    }
}

static void sim_free(sim *s)
{
    if (!s->trace_unpinned) {
        net_trace_check(&s->trace);
    }
    for (uint32_t i = 0; i < s->n; i++) {
        ls_peer_destroy(s->peer[i]);
    }
    for (uint32_t i = 0; i < s->nv; i++) {
        ls_spectator_destroy(s->spec[i]);
    }
    ls_relay_destroy(s->relay);
    free(s->q);
}

static void sim_step(sim *s)
{
    s->now += 1000;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < s->qlen; i++) {
            bool held = s->q[i].dest >= 0 && s->q[i].dest < 100 && s->frozen[s->q[i].dest];
            if (s->q[i].at <= s->now && !held && (best == SIZE_MAX || s->q[i].at < s->q[best].at)) {
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
        } else if (p.dest < 100) {
            if (s->peer[p.dest] && !s->muted[p.dest] &&
                p.to_port == peer_port(s, (uint32_t)p.dest)) {
                ls_peer_receive(s->peer[p.dest], p.data, p.len, s->now - s->epoch[p.dest]);
            }
        } else if (s->spec_started[p.dest - 100] && !s->spec_muted[p.dest - 100]) {
            ls_spectator_receive(s->spec[p.dest - 100], p.data, p.len, s->now);
        }
        drain(s);
    }
    ls_relay_poll(s->relay, s->now);
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->frozen[i] && s->peer[i]) {
            ls_peer_poll(s->peer[i], s->now - s->epoch[i]);
        }
    }
    for (uint32_t i = 0; i < s->nv; i++) {
        if (s->spec_started[i] && !s->spec_muted[i]) {
            ls_spectator_poll(s->spec[i], s->now);
        }
    }
    drain(s);
}

static bool players_finished(const sim *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        if (ls_peer_state_get(s->peer[i]) != LS_PEER_FINISHED) {
            return false;
        }
    }
    return true;
}

static ls_session_def sdef(uint32_t slots, uint32_t ticks)
{
    ls_session_def d = ls_default_session_def();
    d.slots = slots;
    d.ticks = ticks;
    d.delay = 3;
    d.tick_rate = 60;
    return d;
}

// Fake milliseconds until every player finished.
static uint64_t run_players(sim *s, uint64_t max_ms)
{
    uint64_t ms = 0;
    for (; ms < max_ms && !players_finished(s); ms++) {
        sim_step(s);
    }
    cr_assert(players_finished(s), "players finished within %llu ms", (unsigned long long)max_ms);
    return ms;
}

Test(net_join, spectators_and_a_late_spectator_end_on_the_players_checksum)
{
    ls_session_def d = sdef(4, 900);
    ls_net_fault_def f = {100000, 50000, 50000, 5000, 10000, 11, 0}; // 10% loss, dup, reorder
    sim s;
    sim_init(&s, 4, 3, &d, &f);
    s.spec_started[2] = false; // joins at tick ~600 (10 s in), inside the relay's history
    uint64_t ms = 0;
    for (; ms < 60000 && !players_finished(&s); ms++) {
        if (!s.spec_started[2] && ls_peer_ticks(s.peer[0]) >= 600) {
            s.spec_started[2] = true;
        }
        sim_step(&s);
    }
    cr_assert(players_finished(&s));
    cr_assert(s.spec_started[2]);
    uint64_t after = 0;
    for (; after < 5000; after++) {
        bool all = true;
        for (uint32_t i = 0; i < 3; i++) {
            all &= ls_spectator_state_get(s.spec[i]) == LS_SPECTATOR_FINISHED;
        }
        if (all) {
            break;
        }
        sim_step(&s);
    }
    cr_assert_lt(after, 2000u, "the spectators finish soon after the players (%llu ms)",
                 (unsigned long long)after);
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(ls_spectator_ticks(s.spec[i]), 900u);
        cr_assert_eq(s.w[i].mismatches, 0u);
        cr_assert_eq(s.w[i].finished, 1u);
        cr_assert_eq(ls_spectator_last_checksum(s.spec[i]), ls_peer_last_checksum(s.peer[0]),
                     "spectator %u ends on the players' final checksum", i);
        for (uint32_t t = 0; t < 900; t++) {
            cr_assert_eq(s.w[i].g.sums[t], s.g[0].sums[t], "spectator %u tick %u", i, t);
        }
    }
    cr_assert_eq(s.rec_ticks, 900u);
    cr_assert_eq(s.rec_sums[899], s.g[0].sums[899]);
    ls_relay_stats st = ls_relay_stats_get(s.relay);
    cr_assert_eq(st.spectators_dropped, 0u);
    cr_assert_eq(st.spectator_refused, 0u);
    for (int i = 0; i < 300; i++) {
        sim_step(&s);
    }
    cr_assert_eq(ls_relay_spectator_stats_get(s.relay, s.session, 2).input_next, 900u,
                 "the relay knows the late spectator has everything");
    sim_free(&s);
}

Test(net_join, a_spectator_that_stops_acknowledging_never_slows_the_match)
{
    // Reference: the same match with no spectator.
    ls_session_def d = sdef(3, 1200);
    d.history = 64;
    d.state_max = 0;      // no snapshot store: behind the history means dropped
    d.timeout_ms = 60000; // long: the history bound, not the silence, must drop them
    sim ref;
    sim_init(&ref, 3, 0, &d, NULL);
    uint64_t ref_ms = run_players(&ref, 60000);
    sim_free(&ref);

    sim s;
    sim_init(&s, 3, 3, &d, NULL);
    for (int i = 0; i < 500; i++) {
        sim_step(&s);
    }
    s.spec_muted[0] = true;  // crashed: receives and sends nothing
    s.spec_no_ack[1] = true; // receives everything, its ACKs never arrive
    uint64_t ms = 500 + run_players(&s, 60000);
    cr_assert_leq(ms, ref_ms + 20, "match with stalled spectators: %llu ms, without: %llu ms",
                  (unsigned long long)ms, (unsigned long long)ref_ms);
    for (int i = 0; i < 500; i++) {
        sim_step(&s);
    }
    ls_relay_stats st = ls_relay_stats_get(s.relay);
    cr_assert_eq(st.spectators_dropped, 2u, "both stalled spectators dropped");
    cr_assert(ls_relay_spectator_stats_get(s.relay, s.session, 0).disconnected);
    cr_assert(ls_relay_spectator_stats_get(s.relay, s.session, 1).disconnected);
    cr_assert_not(ls_relay_spectator_stats_get(s.relay, s.session, 2).disconnected);
    cr_assert_eq(ls_spectator_state_get(s.spec[1]), LS_SPECTATOR_DROPPED, "told it was dropped");
    cr_assert_eq(ls_spectator_state_get(s.spec[2]), LS_SPECTATOR_FINISHED);
    cr_assert_eq(ls_spectator_last_checksum(s.spec[2]), ls_peer_last_checksum(s.peer[0]));
    sim_free(&s);
}

// Seal m with key as the given role/slot and hand it to the relay from addr.
static void forge(sim *s, const ls_net_addr *from, ls_net_msg *m, uint8_t role, uint8_t slot,
                  const uint8_t *key, uint64_t seq)
{
    m->h.session = s->session;
    m->h.role = role;
    m->h.slot = slot;
    m->h.seq = seq;
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(m, buf, sizeof buf);
    cr_assert_gt(n, 0u);
    cr_assert_eq(ls_net_seal(buf, n, key, LS_NET_TO_RELAY), LS_OK);
    ls_relay_receive(s->relay, from, buf, n, s->now);
}

Test(net_join, a_spectator_credential_cannot_act_as_a_player)
{
    ls_session_def d = sdef(2, 300);
    d.spectators = 2; // spectator 0 watches; spectator 1's credential is the attacker's
    sim s;
    sim_init(&s, 2, 1, &d, NULL);
    for (int i = 0; i < 300; i++) {
        sim_step(&s);
    }
    ls_net_credential cred;
    cr_assert_eq(ls_relay_session_spectator_credential(s.relay, s.session, 2, &cred),
                 LS_ERR_NOT_FOUND, "two spectator credentials only");
    cr_assert_eq(ls_relay_session_spectator_credential(s.relay, s.session, 1, &cred), LS_OK);
    ls_peer_def pd = ls_default_peer_def();
    cr_assert_eq(ls_peer_def_set_credential(&pd, &cred), LS_ERR_INVALID_ARGUMENT,
                 "a peer refuses a spectator credential");
    ls_net_addr va = addr_of(101);
    uint8_t in[64];
    memset(in, 9, sizeof in);
    ls_net_msg m;
    uint64_t seq = 1000000;
    // 1. As itself: INPUT for slot 0, CHECKSUM, JOIN, REJOIN, STATE_CHUNK are refused.
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_INPUT;
    m.u.input.first_tick = ls_relay_peer_stats_get(s.relay, s.session, 0).input_next;
    m.u.input.count = 8;
    m.u.input.input_size = 1;
    m.u.input.slot = 0;
    m.u.input.data = in;
    forge(&s, &va, &m, LS_NET_ROLE_SPECTATOR, 1, cred.key, seq++);
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_CHECKSUM;
    m.u.checksum.first_tick = 0;
    m.u.checksum.count = 1;
    m.u.checksum.data = in;
    forge(&s, &va, &m, LS_NET_ROLE_SPECTATOR, 1, cred.key, seq++);
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_JOIN;
    forge(&s, &va, &m, LS_NET_ROLE_SPECTATOR, 1, cred.key, seq++);
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_REJOIN;
    forge(&s, &va, &m, LS_NET_ROLE_SPECTATOR, 1, cred.key, seq++);
    ls_relay_stats st = ls_relay_stats_get(s.relay);
    cr_assert_eq(st.spectator_refused, 4u);
    // 2. Posing as player slot 0 (or 1), sealed with the spectator's key: bad tag, counted.
    for (uint8_t slot = 0; slot < 2; slot++) {
        memset(&m, 0, sizeof m);
        m.h.type = LS_NET_INPUT;
        m.u.input.first_tick = ls_relay_peer_stats_get(s.relay, s.session, slot).input_next;
        m.u.input.count = 8;
        m.u.input.input_size = 1;
        m.u.input.slot = slot;
        m.u.input.data = in;
        forge(&s, &va, &m, LS_NET_ROLE_PLAYER, slot, cred.key, seq++);
        memset(&m, 0, sizeof m);
        m.h.type = LS_NET_DISCONNECT;
        m.u.disconnect.reason = LS_NET_LEFT;
        m.u.disconnect.slot = slot;
        forge(&s, &va, &m, LS_NET_ROLE_PLAYER, slot, cred.key, seq++);
    }
    st = ls_relay_stats_get(s.relay);
    cr_assert_eq(st.spectator_refused, 8u);
    cr_assert_eq(st.bad_mac, 4u);
    // Nothing of it reached the match: it ends in agreement, nobody disconnected before
    // the end.
    run_players(&s, 30000);
    for (int i = 0; i < 300; i++) {
        sim_step(&s);
    }
    cr_assert_eq(s.rec_ticks, 300u);
    for (uint32_t t = 0; t < 300; t++) {
        cr_assert_eq(s.g[0].sums[t], s.rec_sums[t]);
        cr_assert_eq(s.g[1].sums[t], s.rec_sums[t]);
        cr_assert_eq(s.w[0].g.sums[t], s.rec_sums[t]);
    }
    for (uint32_t k = 0; k < 2; k++) { // but by its own goodbye as it finished
        ls_relay_peer_stats ps = ls_relay_peer_stats_get(s.relay, s.session, k);
        cr_assert_eq(ps.reason, LS_NET_LEFT);
        cr_assert_eq(ps.disconnect_tick, 300u);
    }
    sim_free(&s);
}

Test(net_join, a_spectator_beyond_the_history_loads_a_snapshot_and_catches_up)
{
    // History of 64 ticks; the spectator joins at tick ~600: it receives a snapshot of a
    // confirmed tick in chunks (hash checked), then the rows after it, under 10 % loss.
    ls_session_def d = sdef(3, 1200);
    d.history = 64;
    d.spectators = 1;
    ls_net_fault_def f = {100000, 0, 50000, 2000, 5000, 5, 0};
    sim s;
    sim_init(&s, 3, 1, &d, &f);
    s.serve_state = true;
    s.spec_started[0] = false;
    uint64_t ms = 0;
    for (; ms < 60000 && !players_finished(&s); ms++) {
        if (!s.spec_started[0] && ls_peer_ticks(s.peer[0]) >= 600) {
            s.spec_started[0] = true;
        }
        sim_step(&s);
    }
    cr_assert(players_finished(&s));
    for (int i = 0; i < 3000 && ls_spectator_state_get(s.spec[0]) != LS_SPECTATOR_FINISHED; i++) {
        sim_step(&s);
    }
    cr_assert_eq(ls_spectator_state_get(s.spec[0]), LS_SPECTATOR_FINISHED);
    cr_assert_geq(s.state_requests, 1u);
    cr_assert_eq(s.w[0].snapshots, 1u, "one snapshot loaded");
    uint32_t t0 = s.w[0].loaded_tick;
    cr_assert_geq(t0, 600u - 64u, "a tick inside the history when it joined (%u)", t0);
    ls_spectator_stats st = ls_spectator_stats_get(s.spec[0]);
    cr_assert_eq(st.snapshots, 1u);
    cr_assert_eq(st.snapshot_tick, t0);
    cr_assert_eq(s.w[0].mismatches, 0u);
    for (uint32_t t = t0; t < 1200; t++) {
        cr_assert_eq(s.w[0].g.sums[t], s.g[0].sums[t], "tick %u", t);
    }
    cr_assert_eq(ls_spectator_last_checksum(s.spec[0]), ls_peer_last_checksum(s.peer[0]));
    cr_assert_eq(ls_relay_stats_get(s.relay).spectators_dropped, 0u);
    sim_free(&s);
}

Test(net_join, put_state_checks_its_tick_and_size)
{
    ls_session_def d = sdef(2, 300);
    d.state_max = 1000;
    sim s;
    sim_init(&s, 2, 0, &d, NULL);
    uint8_t snap[1001] = {0};
    cr_assert_eq(ls_relay_session_put_state(s.relay, s.session, 0, snap, 1001), LS_ERR_CAPACITY);
    cr_assert_eq(ls_relay_session_put_state(s.relay, s.session, 5, snap, 10),
                 LS_ERR_INVALID_ARGUMENT, "tick 5 is not final yet");
    cr_assert_eq(ls_relay_session_put_state(s.relay, s.session, 0, snap, 10), LS_OK);
    cr_assert_eq(ls_relay_session_put_state(s.relay, 99, 0, snap, 10), LS_ERR_NOT_FOUND);
    sim_free(&s);
}

// ---- reconnect and late join of players (SPEC.md §17.10) ----

// Every peer saw slot k leave at the relay's disconnect tick and come back at its
// return tick; every player ends on the same checksums (the rejoiner from its snapshot on).
// refused: snapshots the rejoiner loaded and refused before the one that proved out.
static void check_rejoined(sim *s, uint32_t k, uint32_t refused)
{
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(s->relay, s->session, k);
    cr_assert_eq(rs.rejoins, 1u);
    cr_assert_eq(ls_relay_stats_get(s->relay).rejoins, 1u);
    for (uint32_t i = 0; i < s->n; i++) {
        if (i != k) {
            cr_assert_eq(s->g[i].gone_at[k], s->gone_tick[k], "peer %u saw %u leave at %u", i, k,
                         s->g[i].gone_at[k]);
            cr_assert_eq(s->g[i].back_at[k], rs.rejoin_tick, "peer %u saw %u back at %u", i, k,
                         s->g[i].back_at[k]);
        }
        cr_assert_eq(ls_peer_last_checksum(s->peer[i]), ls_peer_last_checksum(s->peer[0]));
        cr_assert_eq(ls_peer_stats_get(s->peer[i]).desyncs, 0u);
    }
    cr_assert_eq(s->g[k].back_at[k], rs.rejoin_tick, "the rejoiner agrees on its return tick");
    ls_peer_stats ps = ls_peer_stats_get(s->peer[k]);
    cr_assert_eq(ps.rejoins, 1u);
    cr_assert_eq(ps.rejoin_tick, rs.rejoin_tick);
    // Rollback peers also load states to correct predictions: count only the snapshot.
    cr_assert(s->rollback ? s->g[k].loads >= 1u : s->g[k].loads == 1u + refused);
    uint32_t t0 = s->rollback ? ps.snapshot_tick : s->g[k].loaded_tick;
    cr_assert_leq(t0, rs.rejoin_tick);
    for (uint32_t t = t0; t < s->sdef.ticks; t++) {
        cr_assert_eq(s->g[k].sums[t], s->g[0].sums[t], "tick %u", t);
        cr_assert_eq(s->rec_sums[t], s->g[0].sums[t], "recorded tick %u", t);
    }
    cr_assert_eq(s->rec_ticks, s->sdef.ticks);
    cr_assert_eq(ls_relay_stats_get(s->relay).desyncs, 0u);
    // The lockstep checksum of the same inputs: the recorded inputs replayed tick by tick.
    game ref;
    memset(&ref, 0, sizeof ref);
    for (uint32_t t = 0; t < s->sdef.ticks; t++) {
        g_advance(&ref, t, s->rec_inputs[t], s->sdef.slots, 1);
        cr_assert_eq(ref.state, s->rec_sums[t], "replayed tick %u", t);
    }
    cr_assert_eq(ref.state, ls_peer_last_checksum(s->peer[k]));
    cr_log_info("%s: slot %u: gone at tick %u, back at %u, snapshot of tick %u",
                s->rollback ? "rollback" : "lockstep", k, s->gone_tick[k], rs.rejoin_tick, t0);
}

static void outage_run(const ls_net_fault_def *f, bool host_state, bool rollback)
{
    next_rollback = rollback;
    ls_session_def d = sdef(3, 1500);
    d.spectators = 0;
    sim s;
    sim_init(&s, 3, 0, &d, f);
    s.serve_state = host_state;
    uint64_t ms = 0;
    bool saw_rejoining = false;
    for (; ms < 90000 && !players_finished(&s); ms++) {
        s.muted[2] = ms >= 4000 && ms < 9000; // 5 s of silence both ways
        saw_rejoining |= ls_peer_state_get(s.peer[2]) == LS_PEER_REJOINING;
        sim_step(&s);
    }
    cr_assert(players_finished(&s), "finished (%llu ms)", (unsigned long long)ms);
    cr_assert(saw_rejoining);
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(s.relay, s.session, 2);
    cr_assert_eq(s.gone_reason[2], LS_NET_TIMEOUT);
    cr_assert_gt(rs.rejoin_tick, s.gone_tick[2]);
    check_rejoined(&s, 2, 0);
    cr_log_info("outage match: %llu ms for 1500 ticks (25 s of play)", (unsigned long long)ms);
    sim_free(&s);
}

Test(net_join, a_5s_outage_then_reconnect_ends_on_the_same_checksums)
{
    outage_run(NULL, true, false);
}

Test(net_join, a_bare_relay_gets_the_rejoiners_snapshot_from_a_connected_player)
{
    ls_net_fault_def f = {50000, 0, 20000, 2000, 3000, 11, 0};
    outage_run(&f, false, false);
}

Test(net_join, a_5s_outage_then_reconnect_under_loss_reordering_and_duplicates)
{
    ls_net_fault_def f = {100000, 50000, 50000, 2000, 5000, 7, 0};
    outage_run(&f, true, false);
}

// ---- the same in rollback mode (SPEC.md §24.8) ----

Test(net_join, rollback_a_5s_outage_then_reconnect_ends_on_the_lockstep_checksum)
{
    outage_run(NULL, true, true);
}

Test(net_join, rollback_a_bare_relay_gets_the_snapshot_from_a_rollback_player)
{
    ls_net_fault_def f = {50000, 0, 20000, 2000, 3000, 11, 0};
    outage_run(&f, false, true);
}

Test(net_join, rollback_a_5s_outage_under_loss_reordering_and_duplicates)
{
    ls_net_fault_def f = {100000, 50000, 50000, 2000, 5000, 7, 0};
    outage_run(&f, true, true);
}

// A rejoiner forgets who is gone and learns it again from the relay, whose notice
// carries the departure tick d: below the snapshot tick T when a slot left before T.
// Such a notice must still count (its inputs are empty from T on for the rejoiner),
// or the rejoiner waits for that slot's input of T forever and stalls the match.
static void rejoin_after_a_departure_run(bool rollback)
{
    next_rollback = rollback;
    ls_session_def d = sdef(4, 1200);
    d.spectators = 0;
    sim s;
    sim_init(&s, 4, 0, &d, NULL);
    s.serve_state = true;
    uint64_t ms = 0;
    bool left = false;
    for (; ms < 90000; ms++) {
        if (!left && ls_peer_ticks(s.peer[3]) >= 33) {
            ls_peer_leave(s.peer[3]); // slot 3 leaves for good at tick 33 or so
            left = true;
        }
        s.muted[2] = ms >= 4000 && ms < 9000; // slot 2: 5 s of silence, then rejoins
        sim_step(&s);
        bool done = true;
        for (uint32_t i = 0; i < 3; i++) {
            done &= ls_peer_state_get(s.peer[i]) == LS_PEER_FINISHED;
        }
        if (done) {
            break;
        }
    }
    ls_relay_peer_stats r2 = ls_relay_peer_stats_get(s.relay, s.session, 2);
    ls_relay_peer_stats r3 = ls_relay_peer_stats_get(s.relay, s.session, 3);
    cr_assert_eq(r3.reason, LS_NET_LEFT);
    cr_assert_eq(r2.rejoins, 1u);
    cr_assert_lt(r3.disconnect_tick, ls_peer_stats_get(s.peer[2]).snapshot_tick,
                 "slot 3 left before the snapshot's tick");
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(ls_peer_state_get(s.peer[i]), LS_PEER_FINISHED, "peer %u finished (%u ticks)",
                     i, ls_peer_ticks(s.peer[i]));
        cr_assert_eq(ls_peer_last_checksum(s.peer[i]), ls_peer_last_checksum(s.peer[0]));
        cr_assert_eq(ls_peer_stats_get(s.peer[i]).desyncs, 0u);
    }
    cr_assert_eq(s.g[2].gone_at[3], r3.disconnect_tick, "the rejoiner learnt slot 3 is gone");
    cr_assert_eq(s.rec_ticks, d.ticks);
    cr_assert_eq(ls_relay_stats_get(s.relay).desyncs, 0u);
    sim_free(&s);
}

Test(net_join, a_rejoin_after_another_slot_left_before_the_snapshot_tick)
{
    rejoin_after_a_departure_run(false);
}

Test(net_join, rollback_a_rejoin_after_another_slot_left_before_the_snapshot_tick)
{
    rejoin_after_a_departure_run(true);
}

// A modified client uploads a valid-looking snapshot whose state is not the one every
// honest peer agreed on. The rejoiner proves the loaded state against the agreed checksum
// of the tick before it, refuses the lie and names the uploader; the relay asks another
// player (3 players: the rejoin succeeds) or has none left (2 players: the rejoin fails,
// the uploader named), never a silent divergence blamed on the honest rejoiner.
static void poisoned_upload_run(uint32_t players, bool rollback)
{
    next_rollback = rollback;
    ls_session_def d = sdef(players, 1500);
    d.spectators = 0;
    sim s;
    sim_init(&s, players, 0, &d, NULL);
    s.serve_state = false; // a bare relay: the snapshot comes from a player
    // The rejoiner is the last slot; the liar is the player the relay asks first (it asks
    // the slots in turn from slot 1).
    uint32_t k = players - 1, liar = players > 2 ? 1 : 0;
    s.g[liar].lie = true;
    uint64_t ms = 0;
    bool saw_rejoining = false;
    for (; ms < 90000; ms++) {
        s.muted[k] = ms >= 4000 && ms < 9000;
        saw_rejoining |= ls_peer_state_get(s.peer[k]) == LS_PEER_REJOINING;
        sim_step(&s);
        bool done = true;
        for (uint32_t i = 0; i < players; i++) {
            ls_peer_state st = ls_peer_state_get(s.peer[i]);
            done &= st == LS_PEER_FINISHED || (i == k && st == LS_PEER_LEFT);
        }
        if (done) {
            break;
        }
    }
    cr_assert(saw_rejoining);
    cr_assert_geq(s.g[k].refused, 1u, "the rejoiner refused the lie");
    cr_assert_eq(s.g[k].refused_source, liar, "and named its uploader");
    uint32_t refused_events = 0;
    for (uint32_t i = 0; i < s.nev; i++) {
        if (s.ev[i].type == LS_RELAY_EV_SNAPSHOT_REFUSED) {
            cr_assert_eq(s.ev[i].slot, liar, "the relay names the uploader");
            cr_assert_eq(s.ev[i].slots, 1u << k, "refused by the rejoiner");
            refused_events++;
        }
        cr_assert_neq(s.ev[i].type, LS_RELAY_EV_DESYNC, "nobody desynced (tick %u)", s.ev[i].tick);
    }
    cr_assert_geq(refused_events, 1u);
    cr_assert_eq(ls_relay_stats_get(s.relay).snapshots_refused, refused_events);
    for (uint32_t i = 0; i < players; i++) {
        cr_assert_eq(ls_peer_stats_get(s.peer[i]).named, 0u, "peer %u never named", i);
    }
    if (players > 2) { // another player's snapshot proves out: the rejoin succeeds
        check_rejoined(&s, k, s.g[k].refused);
        cr_assert_eq(ls_peer_state_get(s.peer[k]), LS_PEER_FINISHED);
    } else { // no other source: the rejoin fails, the rejoiner out for good
        cr_assert_eq(ls_peer_state_get(s.peer[k]), LS_PEER_LEFT);
        ls_relay_peer_stats rs = ls_relay_peer_stats_get(s.relay, s.session, k);
        cr_assert_eq(rs.reason, LS_NET_KICKED);
        cr_assert_eq(ls_peer_state_get(s.peer[0]), LS_PEER_FINISHED, "the match goes on");
        cr_assert_eq(s.rec_ticks, d.ticks);
    }
    sim_free(&s);
}

Test(net_join, a_poisoned_upload_is_refused_and_another_player_serves_the_rejoiner)
{
    poisoned_upload_run(3, false);
}

Test(net_join, a_poisoned_upload_in_a_two_player_match_fails_the_rejoin_naming_the_uploader)
{
    poisoned_upload_run(2, false);
}

static void late_join_run(bool rollback)
{
    next_rollback = rollback;
    ls_session_def d = sdef(3, 1500);
    d.spectators = 0;
    d.join_timeout_ms = 1000; // the match starts without slot 2 ...
    sim s;
    sim_init(&s, 3, 0, &d, NULL);
    s.serve_state = true;
    s.muted[2] = true;
    uint64_t ms = 0;
    for (; ms < 90000 && !players_finished(&s); ms++) {
        if (s.muted[2] && ls_peer_ticks(s.peer[0]) >= 600) {
            s.muted[2] = false; // ... which comes in at tick 600
        }
        sim_step(&s);
    }
    cr_assert(players_finished(&s), "finished (%llu ms)", (unsigned long long)ms);
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(s.relay, s.session, 2);
    cr_assert_eq(s.gone_tick[2], d.delay, "gone from the start");
    cr_assert_geq(rs.rejoin_tick, 600u);
    cr_assert_geq(ls_peer_stats_get(s.peer[2]).snapshot_tick, 600u - LS_NET_WINDOW);
    check_rejoined(&s, 2, 0);
    sim_free(&s);
}

Test(net_join, a_late_player_joins_at_tick_600_and_ends_on_the_players_checksum)
{
    late_join_run(false);
}

Test(net_join, rollback_a_late_player_joins_at_tick_600_and_ends_on_the_lockstep_checksum)
{
    late_join_run(true);
}

// ---- a peer started again with no memory of its earlier process (SPEC.md §17.3, §17.10) ----
//
// A page that reloads or a bot restarted mid-match: the new process has the slot's
// credential and nothing else. It must number its datagrams above every number the old
// one sent (first_seq: here the fake clock in microseconds x 4096, as SPEC.md §17.3
// recommends) and, with `restarted`, it keeps silent after WELCOME until the relay has
// timed the old process out, then rejoins through the ordinary REJOIN and snapshot.

// Peer k is destroyed at its tick 300 and, gap_ms later, a new peer is created for slot k
// (when moved: at a new port, a new socket or WebSocket, and with a clock that starts at 0
// as a reloaded page's performance.now()). Returns the fake milliseconds from the old
// peer's death to the new one's REJOINED (0: it never rejoined).
static uint64_t rejoin_clock; // the new peer's clock when it rejoined (restart_run)

static uint64_t restart_run(sim *s, uint32_t k, bool moved, uint64_t gap_ms, bool clock_seq)
{
    uint64_t ms = 0, created_at = 0, rejoined_at = 0;
    bool killed = false, started = false;
    for (; ms < 90000; ms++) {
        if (!killed && ls_peer_ticks(s->peer[k]) >= 300) {
            ls_peer_destroy(s->peer[k]); // the process dies: its memory, socket and all
            s->peer[k] = NULL;
            s->muted[k] = true;
            killed = true;
            created_at = ms + gap_ms;
        }
        if (killed && !started && ms >= created_at) {
            s->moved[k] = moved;
            s->epoch[k] = moved ? s->now : 0;
            s->muted[k] = false;
            s->peer[k] = sim_peer(s, k, clock_seq ? s->now * 4096u : 0, true);
            cr_assert_not_null(s->peer[k]);
            started = true;
        }
        sim_step(s); // no process for slot k between the two: nothing polled nor delivered
        if (started && !rejoined_at && ls_peer_stats_get(s->peer[k]).rejoins) {
            rejoined_at = ms;
            rejoin_clock = s->now - s->epoch[k];
        }
        bool done = true;
        for (uint32_t i = 0; i < s->n && started; i++) {
            ls_peer_state st = ls_peer_state_get(s->peer[i]);
            done &= st == LS_PEER_FINISHED || (i == k && !clock_seq && ms > created_at + 20000);
        }
        if (done && started) {
            break;
        }
    }
    return rejoined_at ? rejoined_at - (created_at - gap_ms) : 0;
}

static void restarted_peer_run(bool rollback, bool moved, bool host_state)
{
    next_rollback = rollback;
    ls_session_def d = sdef(3, 1500);
    d.spectators = 0;
    sim s;
    sim_init(&s, 3, 0, &d, NULL);
    s.serve_state = host_state;
    uint64_t took = restart_run(&s, 2, moved, 50, true);
    cr_assert_gt(took, 0u, "the restarted peer rejoined");
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(ls_peer_state_get(s.peer[i]), LS_PEER_FINISHED, "peer %u finished", i);
    }
    cr_assert_eq(s.gone_reason[2], LS_NET_TIMEOUT, "the old process timed out");
    check_rejoined(&s, 2, 0);
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(s.relay, s.session, 2);
    cr_assert_eq(rs.addr.port, moved ? 22002 : 20002);
    if (moved) {
        cr_assert_lt(rejoin_clock, (uint64_t)(rs.rejoin_tick - d.delay) * 1000000u / d.tick_rate,
                     "its clock read less than the return tick's span when it rejoined");
    }
    // The session's timeout (3 s) after its WELCOME, then the snapshot: well inside 5 s.
    cr_assert_lt(took, 5000u, "%llu ms from the kill to REJOINED", (unsigned long long)took);
    cr_log_info("%s: restarted slot 2 rejoined %llu ms after its old process died, at tick %u",
                rollback ? "rollback" : "lockstep", (unsigned long long)took, rs.rejoin_tick);
    sim_free(&s);
}

Test(net_join, a_peer_restarted_mid_match_at_its_old_address_rejoins_and_ends_equal)
{
    restarted_peer_run(false, false, true);
}

// A page reloaded: a new address, and a clock from 0 that is still below the return
// tick's span when the snapshot loads (the peer once wrapped its clock around there).
Test(net_join, rollback_a_page_reloaded_mid_match_rejoins_from_an_upload_with_a_clock_from_0)
{
    restarted_peer_run(true, true, false);
}

// Why first_seq exists: a new process numbering from 1 again under the same key is
// dropped by the relay before anything in it is read (its numbers are below the replay
// window, or in it and seen), so it never even gets a CHALLENGE; the others play on
// without it once the relay times the old process out.
Test(net_join, a_restarted_peer_numbering_from_1_again_is_dropped_and_never_gets_in)
{
    ls_session_def d = sdef(3, 1500);
    d.spectators = 0;
    sim s;
    sim_init(&s, 3, 0, &d, NULL);
    s.serve_state = true;
    restart_run(&s, 2, true, 50, false);
    ls_relay_stats st = ls_relay_stats_get(s.relay);
    ls_peer_stats ps = ls_peer_stats_get(s.peer[2]);
    cr_assert_eq(ls_peer_state_get(s.peer[2]), LS_PEER_JOINING, "never welcomed");
    cr_assert_eq(ps.packets_in, 0u, "the relay never answered");
    cr_assert_geq(ps.packets_out, 50u, "it kept sending JOIN");
    cr_assert_geq(st.replayed + st.stale, ps.packets_out, "every one dropped as replayed or stale");
    cr_assert_eq(st.rejoins, 0u);
    cr_assert_eq(s.gone_reason[2], LS_NET_TIMEOUT);
    cr_assert_eq(ls_peer_state_get(s.peer[0]), LS_PEER_FINISHED);
    cr_assert_eq(ls_peer_state_get(s.peer[1]), LS_PEER_FINISHED);
    cr_assert_eq(ls_peer_last_checksum(s.peer[0]), ls_peer_last_checksum(s.peer[1]));
    cr_assert_eq(st.desyncs, 0u);
    cr_log_info("numbering from 1 again: %llu replayed, %llu stale at the relay",
                (unsigned long long)st.replayed, (unsigned long long)st.stale);
    sim_free(&s);
}

// first_seq numbers the first datagram (0: 1), and ls_peer_create refuses a value that
// leaves fewer than 2^32 numbers; restarted needs what a rejoin needs.
Test(net_join, first_seq_numbers_the_first_datagram_and_is_checked)
{
    ls_session_def d = sdef(2, 300);
    sim s;
    sim_init(&s, 2, 0, &d, NULL);
    s.trace_unpinned = true; // nothing sent through the simulated network
    const uint64_t room = (uint64_t)1 << 32;
    const uint64_t firsts[] = {0, 1, 7, 1764000000000000ull * 4096u /* 2025 in us x 4096 */,
                               UINT64_MAX - room};
    for (size_t i = 0; i < sizeof firsts / sizeof firsts[0]; i++) {
        ls_peer *p = sim_peer(&s, 0, firsts[i], false);
        cr_assert_not_null(p);
        ls_peer_poll(p, s.now); // its first JOIN
        ls_peer_poll(p, s.now + 300000);
        ls_net_datagram dg;
        ls_net_header h;
        uint64_t want = firsts[i] ? firsts[i] : 1;
        for (uint64_t n = 0; ls_peer_next_datagram(p, &dg); n++) {
            cr_assert_eq(ls_net_decode_header(dg.data, dg.len, &h, NULL), LS_OK);
            cr_assert_eq(h.seq, want + n, "first_seq %llu: datagram %llu",
                         (unsigned long long)firsts[i], (unsigned long long)n);
        }
        ls_peer_destroy(p);
    }
    ls_error err;
    ls_peer_def pd = ls_default_peer_def();
    cr_assert_eq(pd.first_seq, 0u);
    cr_assert(!pd.restarted);
    ls_net_credential cred;
    cr_assert_eq(ls_relay_session_credential(s.relay, s.session, 0, &cred), LS_OK);
    cr_assert_eq(ls_peer_def_set_credential(&pd, &cred), LS_OK);
    pd.cb.local_input = g_input;
    pd.cb.advance = g_advance;
    pd.first_seq = UINT64_MAX - room + 1;
    cr_assert_null(ls_peer_create(&pd, &err));
    cr_assert_eq(err.code, LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "first_seq"), "%s", err.message);
    pd.first_seq = UINT64_MAX;
    cr_assert_null(ls_peer_create(&pd, &err));
    pd.first_seq = 1;
    pd.restarted = true; // without load and state_checksum it could never rejoin
    cr_assert_null(ls_peer_create(&pd, &err));
    cr_assert(strstr(err.message, "restarted"), "%s", err.message);
    pd.cb.load = g_load;
    pd.cb.state_checksum = g_state_checksum;
    pd.rejoin = LS_PEER_REJOIN_OFF;
    cr_assert_null(ls_peer_create(&pd, &err));
    pd.rejoin = LS_PEER_REJOIN_AUTO;
    ls_peer *p = ls_peer_create(&pd, &err);
    cr_assert_not_null(p, "%s", err.message);
    ls_peer_destroy(p);
    sim_free(&s);
}

Test(net_join, a_rejoin_with_a_wrong_key_or_after_the_window_is_refused_and_counted)
{
    ls_session_def d = sdef(3, 900);
    d.spectators = 0;
    d.rejoin_ms = 1000;
    sim s;
    sim_init(&s, 3, 0, &d, NULL);
    s.serve_state = true;
    for (uint64_t ms = 0; ms < 60000 && ls_peer_state_get(s.peer[0]) != LS_PEER_FINISHED; ms++) {
        s.muted[2] = ms >= 2000 && ms < 7000; // back 4 s after its disconnect: too late
        if (ms == 6000) {                     // a stranger tries to take slot 2 back
            uint8_t key[LS_NET_KEY_SIZE];
            memset(key, 0x5a, sizeof key);
            ls_net_msg m;
            memset(&m, 0, sizeof m);
            m.h.type = LS_NET_REJOIN;
            ls_net_addr a = ls_net_addr_ipv4(10, 0, 0, 9, 4000);
            uint64_t bad = ls_relay_stats_get(s.relay).bad_mac;
            forge(&s, &a, &m, LS_NET_ROLE_PLAYER, 2, key, 1u << 20);
            cr_assert_eq(ls_relay_stats_get(s.relay).bad_mac, bad + 1);
        }
        sim_step(&s);
    }
    cr_assert_eq(ls_peer_state_get(s.peer[0]), LS_PEER_FINISHED);
    cr_assert_eq(ls_peer_state_get(s.peer[1]), LS_PEER_FINISHED);
    for (int i = 0; i < 20000 && ls_peer_state_get(s.peer[2]) == LS_PEER_REJOINING; i++) {
        sim_step(&s);
    }
    cr_assert_eq(ls_peer_state_get(s.peer[2]), LS_PEER_LEFT, "refused: it gives up");
    ls_relay_stats st = ls_relay_stats_get(s.relay);
    cr_assert_eq(st.rejoins, 0u);
    cr_assert_geq(st.rejoin_refused, 1u);
    cr_assert_eq(st.desyncs, 0u);
    cr_assert_eq(ls_peer_last_checksum(s.peer[0]), ls_peer_last_checksum(s.peer[1]));
    cr_assert_eq(ls_relay_peer_stats_get(s.relay, s.session, 2).rejoins, 0u);
    sim_free(&s);
}

// ---- the soak: reconnect and late join under the full fault mix ----
//
// 35 % loss, 10 % duplicates, 10 % reordering, 2 ms + 0..150 ms jitter on every
// datagram both ways, seeded: a bare relay (the snapshot uploaded by a player) on
// even seeds, the host's snapshot on odd ones. A run succeeds when every player
// finishes the match, the rejoiner came back exactly once, everyone ends on the same
// checksum, nobody desynced and the recording is whole. The others must never stand
// still beyond the rejoin window: the timeout that notices the outage, then at most the
// timeout while the rejoiner loads (plus a second of jitter and loss).

typedef struct soak {
    bool ok;
    const char *why;
    uint64_t max_stall_ms; // longest time peer 0 did not advance (after the start)
} soak;

static soak soak_run(bool rollback, bool late, uint64_t seed)
{
    ls_net_fault_def f = {350000, 100000, 100000, 2000, 150000, seed, 0};
    next_rollback = rollback;
    ls_session_def d = sdef(3, 900);
    d.spectators = 0;
    if (late) {
        // Joining takes four one-way trips (JOIN, CHALLENGE, JOIN, WELCOME), 18 % of tries
        // at 35 % loss: the others get 8 s, slot 2 is then late by design.
        d.join_timeout_ms = 8000;
    }
    sim s;
    sim_init(&s, 3, 0, &d, &f);
    s.trace_unpinned = true;
    s.serve_state = seed % 2 == 1;
    soak r = {false, "did not finish", 0};
    uint64_t last_progress = 0;
    uint32_t last_ticks = 0;
    s.muted[2] = late;
    for (uint64_t ms = 0; ms < 240000; ms++) {
        if (late) {
            s.muted[2] = s.muted[2] && ls_peer_ticks(s.peer[0]) < 300;
        } else {
            s.muted[2] = ms >= 4000 && ms < 9000;
        }
        sim_step(&s);
        // The window is measured from the outage (reconnect) or the late player's first word.
        bool measured = late ? !s.muted[2] : ms >= 4000;
        uint32_t t = ls_peer_ticks(s.peer[0]);
        if (t != last_ticks || ls_peer_state_get(s.peer[0]) != LS_PEER_RUNNING || !measured) {
            last_ticks = t;
            last_progress = ms;
        }
        r.max_stall_ms = ms - last_progress > r.max_stall_ms ? ms - last_progress : r.max_stall_ms;
        if (players_finished(&s)) {
            r.ok = true;
            break;
        }
    }
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(s.relay, s.session, 2);
    if (getenv("LS_SOAK_DEBUG")) {
        for (uint32_t i = 0; i < 3; i++) {
            ls_peer_stats ps = ls_peer_stats_get(s.peer[i]);
            fprintf(stderr, "  peer %u state %d ticks %u rejoins %u refused %u\n", i,
                    (int)ls_peer_state_get(s.peer[i]), ls_peer_ticks(s.peer[i]), ps.rejoins,
                    ps.snapshots_refused);
        }
        fprintf(stderr, "  relay slot 2: rejoins %u reason %u gone at %u back at %u final %u\n",
                rs.rejoins, rs.reason, rs.disconnect_tick, rs.rejoin_tick,
                ls_relay_session_final_ticks(s.relay, s.session));
        for (uint32_t i = 0; i < s.nev; i++) {
            fprintf(stderr, "  ev %u slot %u tick %u reason %u\n", s.ev[i].type, s.ev[i].slot,
                    s.ev[i].tick, s.ev[i].reason);
        }
    }
    if (r.ok && rs.rejoins != 1) {
        r = (soak){false, "the rejoiner did not come back exactly once", r.max_stall_ms};
    }
    for (uint32_t i = 0; r.ok && i < 3; i++) {
        if (ls_peer_last_checksum(s.peer[i]) != ls_peer_last_checksum(s.peer[0])) {
            r = (soak){false, "checksums differ", r.max_stall_ms};
        }
    }
    if (r.ok && (ls_relay_stats_get(s.relay).desyncs || ls_relay_stats_get(s.relay).disputes)) {
        r = (soak){false, "a desync", r.max_stall_ms};
    }
    if (r.ok && s.rec_ticks != d.ticks) {
        r = (soak){false, "the recording is not whole", r.max_stall_ms};
    }
    // A silent rejoiner holds the others until the relay times it out (timeout_ms), and
    // the rejoin holds them at R at most while it loads (timeout_ms again): the window.
    if (r.ok && r.max_stall_ms > 2u * d.timeout_ms + 1000u) {
        r = (soak){false, "the others stood still beyond the rejoin window", r.max_stall_ms};
    }
    sim_free(&s);
    return r;
}

static void soak_loop(bool late)
{
    // 50 per mode; LS_SOAK_RUNS=N runs more (a longer campaign by hand).
    const uint32_t runs = getenv("LS_SOAK_RUNS") ? (uint32_t)atoi(getenv("LS_SOAK_RUNS")) : 50;
    uint32_t ok[2] = {0, 0};
    uint64_t worst = 0;
    for (uint32_t mode = 0; mode < 2; mode++) {
        for (uint64_t seed = 1; seed <= runs; seed++) {
            const char *only = getenv("LS_SOAK_ONLY"); // "MODE:SEED" (debugging one run)
            if (only &&
                (strtoul(only, NULL, 10) != mode ||
                 strtoull(strchr(only, ':') ? strchr(only, ':') + 1 : "0", NULL, 10) != seed)) {
                ok[mode]++;
                continue;
            }
            soak r = soak_run(mode == 1, late, seed);
            ok[mode] += r.ok;
            worst = r.max_stall_ms > worst ? r.max_stall_ms : worst;
            if (!r.ok) {
                cr_log_warn("%s %s seed %llu: %s (others stood still %llu ms at most)",
                            late ? "late join" : "reconnect", mode ? "rollback" : "lockstep",
                            (unsigned long long)seed, r.why, (unsigned long long)r.max_stall_ms);
            }
        }
    }
    cr_log_info("%s under the full fault mix: lockstep %u/%u, rollback %u/%u; the others stood "
                "still %llu ms at most",
                late ? "late join" : "reconnect", ok[0], runs, ok[1], runs,
                (unsigned long long)worst);
    fprintf(stderr, "soak %s: lockstep %u/%u rollback %u/%u worst stall %llu ms\n",
            late ? "late_join" : "reconnect", ok[0], runs, ok[1], runs, (unsigned long long)worst);
    cr_assert_geq(100u * (ok[0] + ok[1]), 99u * 2 * runs, "at least 99 in 100 succeed (%u of %u)",
                  ok[0] + ok[1], 2 * runs);
}

Test(net_join, soak_reconnect_under_the_full_fault_mix_both_modes, .timeout = 600)
{
    soak_loop(false);
}

Test(net_join, soak_late_join_under_the_full_fault_mix_both_modes, .timeout = 600)
{
    soak_loop(true);
}

// ---- rejoin from the API: the default peer (ls_peer_rejoin, SPEC.md §17.10 "Peer side") ----

Test(net_join, rejoin_is_the_default_when_the_game_can_load_and_prove_a_snapshot)
{
    game g;
    memset(&g, 0, sizeof g);
    ls_peer_def pd = ls_default_peer_def();
    cr_assert_eq(pd.rejoin, LS_PEER_REJOIN_AUTO);
    memset(pd.key, 7, sizeof pd.key);
    pd.cb.user = &g;
    pd.cb.local_input = g_input;
    pd.cb.advance = g_advance;
    ls_error err;
    // Without load and state_checksum: created, leaves when timed out (as before).
    ls_peer *p = ls_peer_create(&pd, &err);
    cr_assert_not_null(p, "%s", err.message);
    cr_assert_not(ls_peer_rejoins(p));
    ls_peer_destroy(p);
    // A rollback game has save and load; without state_checksum it cannot prove a snapshot.
    pd.mode = LS_PEER_ROLLBACK;
    pd.cb.save = g_save;
    pd.cb.load = g_load;
    p = ls_peer_create(&pd, &err);
    cr_assert_not_null(p, "%s", err.message);
    cr_assert_not(ls_peer_rejoins(p));
    ls_peer_destroy(p);
    // With it: rejoins, with no setting at all.
    pd.cb.state_checksum = g_state_checksum;
    p = ls_peer_create(&pd, &err);
    cr_assert_not_null(p, "%s", err.message);
    cr_assert(ls_peer_rejoins(p));
    ls_peer_destroy(p);
    // OFF (the old `false`) never rejoins; ON (the old `true`) insists on the callbacks.
    pd.rejoin = false;
    p = ls_peer_create(&pd, &err);
    cr_assert_not(ls_peer_rejoins(p));
    ls_peer_destroy(p);
    pd.rejoin = true;
    cr_assert_eq(pd.rejoin, LS_PEER_REJOIN_ON);
    p = ls_peer_create(&pd, &err);
    cr_assert(ls_peer_rejoins(p));
    ls_peer_destroy(p);
    pd.cb.state_checksum = NULL;
    cr_assert_null(ls_peer_create(&pd, &err), "ON without state_checksum is refused");
    cr_assert(strstr(err.message, "state_checksum") != NULL, "%s", err.message);
    pd.rejoin = (ls_peer_rejoin)3;
    cr_assert_null(ls_peer_create(&pd, &err));
    cr_assert(strstr(err.message, "LS_PEER_REJOIN_AUTO") != NULL, "%s", err.message);
}

// A game's peer made from ls_default_peer_def() and the game's callbacks only (load and
// state_checksum among them, no rejoin setting) whose game stops calling it for 4 s
// (neither ls_peer_poll nor ls_peer_receive: a stall longer than the session's 3 s
// timeout) comes back by itself, like `lockstep bot` after `--outage`, and ends on the
// same checksums. The others were told before the timeout (INTERRUPTED, then
// DISCONNECTED, no RESUMED); the frozen peer itself saw no silence.
static void frozen_run(bool rollback)
{
    next_rollback = rollback;
    ls_session_def d = sdef(3, 1500);
    d.spectators = 0;
    sim s;
    sim_init(&s, 3, 0, &d, NULL);
    s.serve_state = false; // a bare relay: a connected default peer uploads the snapshot
    cr_assert(ls_peer_rejoins(s.peer[2]));
    const uint64_t from = 4000, to = 8000; // fake ms
    uint64_t ms = 0, frozen_at = 0;
    bool saw_rejoining = false;
    for (; ms < 90000 && !players_finished(&s); ms++) {
        s.frozen[2] = ms >= from && ms < to;
        frozen_at = ms == from ? s.now : frozen_at;
        saw_rejoining |= ls_peer_state_get(s.peer[2]) == LS_PEER_REJOINING;
        sim_step(&s);
    }
    cr_assert(players_finished(&s), "finished (%llu ms)", (unsigned long long)ms);
    cr_assert(saw_rejoining);
    cr_assert_eq(s.gone_reason[2], LS_NET_TIMEOUT, "timed out (the stats end on its goodbye)");
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(s.relay, s.session, 2);
    check_rejoined(&s, 2, 0);
    for (uint32_t i = 0; i < 2; i++) {
        const game *g = &s.g[i];
        cr_assert_eq(g->interrupted[2], 1u, "peer %u: slot 2 interrupted once", i);
        cr_assert_geq(g->interrupted_us[2], frozen_at + 500000);
        cr_assert_leq(g->interrupted_us[2], frozen_at + 800000, "peer %u: %llu us after", i,
                      (unsigned long long)(g->interrupted_us[2] - frozen_at));
        cr_assert_gt(g->gone_us[2], g->interrupted_us[2] + 2000000, "well before the timeout");
        cr_assert_eq(g->resumed[2], 0u, "the disconnect ended the interruption");
        cr_assert_eq(g->interrupted[i], 0u);
        cr_assert_eq(g->interrupted[1 - i], 0u, "nobody else was named");
        ls_peer_remote_stats r = ls_peer_remote_stats_get(s.peer[i], 2);
        cr_assert_eq(r.interruptions, 1u);
        cr_assert_not(r.interrupted);
        // The outage is over; what the stats keep last is its goodbye at the end (a finished
        // peer says goodbye, SPEC.md §17.8), if that came before this peer finished.
        cr_assert(!r.gone || (r.reason == LS_NET_LEFT && r.gone_tick == s.sdef.ticks),
                  "peer %u: slot 2 gone %d reason %u at %u", i, r.gone, r.reason, r.gone_tick);
        cr_assert_eq(r.rejoins, 1u);
        cr_assert_eq(r.rejoin_tick, rs.rejoin_tick);
    }
    ls_peer_stats st = ls_peer_stats_get(s.peer[2]);
    cr_assert_eq(st.interruptions, 0u, "a frozen game's peer never saw its link silent");
    cr_assert_eq(ls_peer_remote_stats_get(s.peer[2], 2).rejoins, 1u);
    cr_log_info("%s: frozen 4 s, slot 2 gone at %u, back at %u", rollback ? "rollback" : "lockstep",
                rs.disconnect_tick, rs.rejoin_tick);
    sim_free(&s);
}

Test(net_join, a_default_peer_not_polled_for_4s_rejoins_by_itself)
{
    frozen_run(false);
}

Test(net_join, rollback_a_default_peer_not_polled_for_4s_rejoins_by_itself)
{
    frozen_run(true);
}
