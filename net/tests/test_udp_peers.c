// SPDX-License-Identifier: MIT
// Loopback tests with real UDP sockets and in-process peers (SPEC.md §17.7, §17.8,
// §17.10): the libuv relay in a thread (udp_relay.h) and peers built from the
// public API, each an ls_peer on its own ls_uv transport (its own socket and fault
// injection), all on one libuv loop in the test's thread, playing a fake game whose
// state is a hash chain of the inputs. Some are modified clients: one uploads a
// perturbed snapshot to a rejoiner, one lies in its checksums from a tick on, one
// loses its INPUT datagrams (a send filter on what its core produces) and leaves;
// and an honest player goes silent for 4 s under 20 % loss and jitter and rejoins.
// Functional outcomes only, generous deadlines, ephemeral ports.
#include "../../tests/net_fake_game.h"
#include "ls/checksum.h"
#include "ls/net_peer.h"
#include "udp_relay.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define MAXP      4
#define MAXT      RT_MAX_TICKS
#define SNAP_SIZE 3000    // three STATE_CHUNKs: the state, then a checkable pattern
#define GRACE_US  300000u // the loop runs this long after the script says "over"

// ---- a fake game: the state is a hash chain of every tick's inputs ----

typedef struct game {
    uint32_t slot;
    uint64_t state;
    uint64_t sums[MAXT]; // checksum after each tick
    uint32_t ticks;
    int64_t perturb_tick; // a modified client: its state diverges at this tick (-1: never)
    bool lie;             // a modified client: every snapshot it saves is perturbed
    uint32_t loads, loaded_tick;
    uint32_t gone_at[MAXP], back_at[MAXP]; // switch ticks seen per slot (UINT32_MAX: none)
    uint32_t desync_events, disputed_events, first_disputed;
    uint32_t refused, refused_source; // snapshots we refused, and the last one's source
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
        g->state ^= 1; // a silent local divergence: every later checksum differs too
    }
    if (tick < MAXT) {
        g->sums[tick] = g->state;
    }
    g->ticks = tick + 1;
    return g->state;
}

static void snap_fill(uint8_t *buf, uint64_t state)
{
    for (uint32_t i = 0; i < 8; i++) {
        buf[i] = (uint8_t)(state >> (8 * i));
    }
    for (uint32_t i = 8; i < SNAP_SIZE; i++) {
        buf[i] = (uint8_t)(i * 31u + 7u);
    }
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

static bool g_load(void *user, uint32_t tick, const uint8_t *data, size_t len)
{
    game *g = user;
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
    g->state = state;
    g->loads++;
    g->loaded_tick = tick;
    return true;
}

static uint64_t g_state_checksum(void *user, uint32_t tick)
{
    const game *g = user;
    (void)tick;
    return g->state;
}

static void g_event(void *user, const ls_peer_event *ev)
{
    game *g = user;
    switch (ev->type) {
    case LS_PEER_EV_DISCONNECTED:
        if (ev->slot < MAXP) {
            if (g->gone_at[ev->slot] == UINT32_MAX) { // the first (an outage), not the goodbye
                g->gone_at[ev->slot] = ev->tick;
            }
        }
        break;
    case LS_PEER_EV_REJOINED:
        if (ev->slot < MAXP) {
            g->back_at[ev->slot] = ev->tick;
        }
        break;
    case LS_PEER_EV_SNAPSHOT_REFUSED:
        g->refused++;
        g->refused_source = ev->slot;
        break;
    case LS_PEER_EV_DESYNC:
        g->desync_events++;
        break;
    case LS_PEER_EV_DISPUTED:
        if (g->disputed_events++ == 0) {
            g->first_disputed = ev->tick;
        }
        break;
    default:
        break;
    }
}

// ---- peers on one loop, driven by a script ----

typedef struct udp_match udp_match;

typedef struct upeer {
    ls_peer *peer;
    ls_uv *uv;
    ls_net_addr relay;
    game g;
    bool muted;       // an outage: not polled, hears nothing, sends nothing
    bool drop_inputs; // a send filter: the INPUT datagrams its core produces are lost
    uint32_t inputs_dropped;
} upeer;

// Called every millisecond on the loop; returns true once the match is over.
typedef bool (*script_fn)(udp_match *m, uint64_t now);

struct udp_match {
    relay_thread rt;
    ls_uv *clock; // owns the loop; its timer runs the script
    uint32_t n;
    bool rollback;
    upeer p[MAXP];
    script_fn script;
    void *user; // the script's state
    uint64_t started, deadline_us, over_at;
    bool over, timed_out;
};

static void up_pump(upeer *u)
{
    ls_net_datagram d;
    while (ls_peer_next_datagram(u->peer, &d)) {
        if (u->muted) {
            continue;
        }
        ls_net_header h;
        if (u->drop_inputs && ls_net_decode_header(d.data, d.len, &h, NULL) == LS_OK &&
            h.type == LS_NET_INPUT) {
            u->inputs_dropped++;
            continue;
        }
        ls_uv_send(u->uv, &d.to, d.data, d.len);
    }
}

static void up_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                    uint64_t now)
{
    upeer *u = user;
    if (u->muted || !ls_net_addr_equal(from, &u->relay)) {
        return;
    }
    ls_peer_receive(u->peer, data, len, now);
    ls_peer_poll(u->peer, now);
    up_pump(u);
}

static void up_timer(void *user, uint64_t now)
{
    upeer *u = user;
    if (u->muted) {
        return;
    }
    ls_peer_poll(u->peer, now);
    up_pump(u);
}

static void clock_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                       uint64_t now)
{
    (void)user, (void)from, (void)data, (void)len, (void)now;
}

static void clock_timer(void *user, uint64_t now)
{
    udp_match *m = user;
    if (!m->over && m->script(m, now)) {
        m->over = true;
        m->over_at = now;
    }
    if (m->over && now - m->over_at >= GRACE_US) {
        ls_uv_stop(m->clock);
    } else if (now - m->started > m->deadline_us) {
        m->timed_out = true;
        ls_uv_stop(m->clock);
    }
}

// A relay with a session of n slots (sd) whose sends go through relay_fault, and n
// peers (every one may rejoin) whose sends go through peer_fault (NULL: none; each
// peer its own seed).
static void match_init(udp_match *m, const ls_session_def *sd, bool rollback,
                       const ls_net_fault_def *peer_fault, const ls_net_fault_def *relay_fault)
{
    memset(m, 0, sizeof *m);
    cr_assert_leq(sd->slots, MAXP);
    cr_assert_leq(sd->ticks, MAXT);
    m->n = sd->slots;
    m->rollback = rollback;
    rt_start_with(&m->rt, sd, relay_fault);
    char msg[256];
    ls_uv_def cd = ls_default_uv_def();
    cd.bind_host = "127.0.0.1";
    cd.user = m;
    cd.on_recv = clock_recv;
    cd.on_timer = clock_timer;
    m->clock = ls_uv_create(&cd, msg, sizeof msg);
    cr_assert_not_null(m->clock, "%s", msg);
    for (uint32_t i = 0; i < m->n; i++) {
        upeer *u = &m->p[i];
        u->g.slot = i;
        u->g.perturb_tick = -1;
        for (uint32_t k = 0; k < MAXP; k++) {
            u->g.gone_at[k] = u->g.back_at[k] = UINT32_MAX;
        }
        u->relay = ls_net_addr_ipv4(127, 0, 0, 1, m->rt.port);
        ls_peer_def pd = ls_default_peer_def();
        cr_assert_eq(ls_peer_def_set_credential(&pd, &m->rt.cred[i]), LS_OK);
        pd.relay = u->relay;
        pd.mode = rollback ? LS_PEER_ROLLBACK : LS_PEER_LOCKSTEP;
        pd.rejoin = true;
        pd.cb.user = &u->g;
        pd.cb.local_input = g_input;
        pd.cb.advance = g_advance;
        pd.cb.on_event = g_event;
        pd.cb.save = g_save;
        pd.cb.load = g_load;
        pd.cb.state_checksum = g_state_checksum;
        ls_error err;
        u->peer = ls_peer_create(&pd, &err);
        cr_assert_not_null(u->peer, "%s", err.message);
        ls_uv_def ud = ls_default_uv_def();
        ud.bind_host = "127.0.0.1";
        ud.user = u;
        ud.on_recv = up_recv;
        ud.on_timer = up_timer;
        ud.loop = ls_uv_loop(m->clock);
        if (peer_fault) {
            ud.fault = *peer_fault;
            ud.fault.seed = peer_fault->seed * 100u + i;
        }
        u->uv = ls_uv_create(&ud, msg, sizeof msg);
        cr_assert_not_null(u->uv, "%s", msg);
    }
}

// Run the loop until the script says the match is over (then GRACE_US more) or
// max_s seconds passed; then stop the relay thread (its records are readable).
// Returns the wall time in milliseconds.
static uint64_t match_run(udp_match *m, script_fn script, void *user, uint32_t max_s)
{
    m->script = script;
    m->user = user;
    m->started = ls_uv_now_us(m->clock);
    m->deadline_us = (uint64_t)max_s * 1000000u;
    ls_uv_run(m->clock);
    rt_join(&m->rt);
    return (ls_uv_now_us(m->clock) - m->started) / 1000u;
}

static void match_free(udp_match *m)
{
    for (uint32_t i = 0; i < m->n; i++) {
        ls_uv_destroy(m->p[i].uv); // on the clock's loop: closed when it runs below
    }
    ls_uv_destroy(m->clock);
    for (uint32_t i = 0; i < m->n; i++) {
        ls_peer_destroy(m->p[i].peer);
    }
    rt_free(&m->rt);
}

static bool finished(const udp_match *m, uint32_t i)
{
    return ls_peer_state_get(m->p[i].peer) == LS_PEER_FINISHED;
}

static bool all_finished(const udp_match *m)
{
    for (uint32_t i = 0; i < m->n; i++) {
        if (!finished(m, i)) {
            return false;
        }
    }
    return true;
}

// A player silent both ways (not polled) for ms milliseconds once it reached at_tick.
typedef struct outage {
    uint32_t slot, at_tick;
    uint64_t ms, from;
    bool started, done, saw_rejoining;
} outage;

static void outage_step(udp_match *m, outage *o, uint64_t now)
{
    upeer *u = &m->p[o->slot];
    if (!o->started && ls_peer_ticks(u->peer) >= o->at_tick) {
        o->started = true;
        o->from = now;
        u->muted = true;
    }
    if (o->started && !o->done && now - o->from >= o->ms * 1000u) {
        o->done = true;
        u->muted = false;
    }
    o->saw_rejoining |= ls_peer_state_get(u->peer) == LS_PEER_REJOINING;
}

static ls_session_def sdef(uint32_t slots, uint32_t ticks)
{
    ls_session_def d = ls_default_session_def();
    d.slots = slots;
    d.ticks = ticks;
    d.delay = 3;
    d.tick_rate = 60;
    d.spectators = 0;
    return d;
}

static uint32_t count_events(const udp_match *m, ls_relay_event_type type)
{
    return m->rt.ev_count[type];
}

static void assert_no_verdict(const udp_match *m)
{
    for (uint32_t i = 0; i < m->rt.nev; i++) {
        cr_assert(m->rt.ev[i].type != LS_RELAY_EV_DESYNC &&
                      m->rt.ev[i].type != LS_RELAY_EV_DISPUTED,
                  "no verdict (event %d at tick %u, slots 0x%x)", m->rt.ev[i].type,
                  m->rt.ev[i].tick, m->rt.ev[i].slots);
    }
    cr_assert_eq(count_events(m, LS_RELAY_EV_DESYNC), 0u);
    cr_assert_eq(count_events(m, LS_RELAY_EV_DISPUTED), 0u);
    ls_relay_stats st = ls_relay_stats_get(m->rt.relay);
    cr_assert_eq(st.desyncs, 0u);
    cr_assert_eq(st.disputes, 0u);
    for (uint32_t i = 0; i < m->n; i++) {
        ls_peer_stats ps = ls_peer_stats_get(m->p[i].peer);
        cr_assert_eq(ps.desyncs, 0u, "peer %u told of a desync", i);
        cr_assert_eq(ps.disputes, 0u, "peer %u told of a dispute", i);
        cr_assert_eq(ps.named, 0u, "peer %u named", i);
    }
}

// The relay recorded every tick, and its checksums are the hash chain of the inputs it
// recorded: what an honest player computes from them (ref: the checksums to match).
static void assert_record(const udp_match *m, uint32_t ticks, const game *ref)
{
    cr_assert_eq(m->rt.rec_ticks, ticks, "the relay recorded %u ticks", m->rt.rec_ticks);
    cr_assert(m->rt.rec_ended);
    game replay;
    memset(&replay, 0, sizeof replay);
    replay.perturb_tick = -1;
    for (uint32_t t = 0; t < ticks; t++) {
        g_advance(&replay, t, m->rt.rec_inputs[t], m->n, 1);
        cr_assert_eq(replay.state, m->rt.rec_sums[t], "recorded tick %u replays", t);
        cr_assert_eq(ref->sums[t], m->rt.rec_sums[t], "recorded tick %u is the players'", t);
    }
}

// The relay's first DISCONNECTED event of slot k (its per-slot stats end on the goodbye
// a finished peer says, SPEC.md §17.8): the outage.
static ls_relay_event first_disconnect(const udp_match *m, uint32_t k)
{
    for (uint32_t e = 0; e < m->rt.nev; e++) {
        if (m->rt.ev[e].type == LS_RELAY_EV_DISCONNECTED && m->rt.ev[e].slot == k) {
            return m->rt.ev[e];
        }
    }
    cr_assert_fail("slot %u was never disconnected", k);
    ls_relay_event none;
    memset(&none, 0, sizeof none);
    return none;
}

// Slot k left at the relay's disconnect tick and came back at its return tick, every
// peer saw both, and everyone ends on the same checksums (the rejoiner from its snapshot
// on). refused: snapshots the rejoiner loaded and refused before the one that proved out.
static void assert_rejoined(const udp_match *m, uint32_t k, uint32_t refused, uint32_t ticks)
{
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(m->rt.relay, m->rt.session, k);
    cr_assert_eq(rs.rejoins, 1u);
    cr_assert_eq(ls_relay_stats_get(m->rt.relay).rejoins, 1u);
    cr_assert_gt(rs.rejoin_tick, first_disconnect(m, k).tick);
    const game *g0 = &m->p[k == 0 ? 1 : 0].g;
    for (uint32_t i = 0; i < m->n; i++) {
        cr_assert(finished(m, i), "peer %u finished (state %d, %u ticks)", i,
                  ls_peer_state_get(m->p[i].peer), ls_peer_ticks(m->p[i].peer));
        cr_assert_eq(ls_peer_ticks(m->p[i].peer), ticks);
        cr_assert_eq(ls_peer_last_checksum(m->p[i].peer), g0->sums[ticks - 1],
                     "peer %u ends on the same checksum", i);
        if (i != k) {
            cr_assert_eq(m->p[i].g.gone_at[k], first_disconnect(m, k).tick,
                         "peer %u saw %u leave at %u", i, k, m->p[i].g.gone_at[k]);
            cr_assert_eq(m->p[i].g.back_at[k], rs.rejoin_tick, "peer %u saw %u back at %u", i, k,
                         m->p[i].g.back_at[k]);
            for (uint32_t t = 0; t < ticks; t++) {
                cr_assert_eq(m->p[i].g.sums[t], g0->sums[t], "peer %u tick %u", i, t);
            }
        }
    }
    const game *gk = &m->p[k].g;
    cr_assert_eq(gk->back_at[k], rs.rejoin_tick, "the rejoiner agrees on its return tick");
    ls_peer_stats ps = ls_peer_stats_get(m->p[k].peer);
    cr_assert_eq(ps.rejoins, 1u);
    cr_assert_eq(ps.rejoin_tick, rs.rejoin_tick);
    cr_assert_eq(ps.snapshots_refused, refused);
    // Rollback peers also load states to correct predictions: count only the snapshot.
    cr_assert(m->rollback ? gk->loads >= 1u + refused : gk->loads == 1u + refused,
              "%u loads, %u refused", gk->loads, refused);
    uint32_t t0 = m->rollback ? ps.snapshot_tick : gk->loaded_tick;
    cr_assert_eq(t0, ps.snapshot_tick);
    cr_assert_leq(t0, rs.rejoin_tick);
    for (uint32_t t = t0; t < ticks; t++) {
        cr_assert_eq(gk->sums[t], g0->sums[t], "the rejoiner's tick %u", t);
    }
    assert_record(m, ticks, g0);
    cr_log_info("%s: slot %u gone at tick %u, back at %u, snapshot of tick %u, %u refused",
                m->rollback ? "rollback" : "lockstep", k, first_disconnect(m, k).tick,
                rs.rejoin_tick, t0, refused);
}

// ---- a poisoned rejoin snapshot ----

typedef struct poison_script {
    outage o;
    uint32_t players;
} poison_script;

static bool poison_step(udp_match *m, uint64_t now)
{
    poison_script *s = m->user;
    outage_step(m, &s->o, now);
    if (!s->o.done) {
        return false;
    }
    for (uint32_t i = 0; i < m->n; i++) {
        ls_peer_state st = ls_peer_state_get(m->p[i].peer);
        bool out = st == LS_PEER_FINISHED || (i == s->o.slot && st == LS_PEER_LEFT);
        if (!out) {
            return false;
        }
    }
    return true;
}

// The rejoiner is the last slot, silent for 2.5 s (the session's timeout is 1.5 s);
// the liar is the player the relay asks first for an upload (it asks the slots in turn
// from slot 1), and it uploads a valid-looking snapshot whose state is not the agreed
// one. The rejoiner proves the loaded state against the agreed checksum of the tick
// before it, refuses it and names the uploader; the relay names it too and asks another
// player (3 players: the rejoin succeeds) or has none left (2 players: the rejoin fails,
// the rejoiner is KICKED), never a divergence blamed on anybody.
static void poisoned_upload_run(uint32_t players)
{
    ls_session_def d = sdef(players, 360);
    d.timeout_ms = 1500;
    udp_match m;
    match_init(&m, &d, false, NULL, NULL);
    uint32_t k = players - 1, liar = players > 2 ? 1 : 0;
    m.p[liar].g.lie = true;
    poison_script s = {{k, 60, 2500, 0, false, false, false}, players};
    uint64_t ms = match_run(&m, poison_step, &s, 30);
    cr_assert_not(m.timed_out, "the match ended within 30 s");
    cr_assert(s.o.saw_rejoining, "the silent player was timed out and rejoined");
    const game *gk = &m.p[k].g;
    cr_assert_geq(gk->refused, 1u, "the rejoiner refused the lie");
    cr_assert_eq(gk->refused_source, liar, "and named its uploader");
    uint32_t refused_events = 0;
    for (uint32_t i = 0; i < m.rt.nev; i++) {
        if (m.rt.ev[i].type == LS_RELAY_EV_SNAPSHOT_REFUSED) {
            cr_assert_eq(m.rt.ev[i].slot, liar, "the relay names the uploader");
            cr_assert_eq(m.rt.ev[i].slots, 1u << k, "refused by the rejoiner");
            cr_assert_eq(m.rt.ev[i].expected, m.p[0].g.sums[m.rt.ev[i].tick - 1],
                         "the agreed checksum of the tick before the snapshot");
            cr_assert_neq(m.rt.ev[i].got, m.rt.ev[i].expected);
            refused_events++;
        }
    }
    cr_assert_geq(refused_events, 1u);
    cr_assert_eq(refused_events, count_events(&m, LS_RELAY_EV_SNAPSHOT_REFUSED));
    cr_assert_eq(ls_relay_stats_get(m.rt.relay).snapshots_refused, refused_events);
    assert_no_verdict(&m);
    if (players > 2) { // another player's snapshot proves out: the rejoin succeeds
        assert_rejoined(&m, k, gk->refused, d.ticks);
    } else { // no other source: the rejoin fails, the rejoiner out for good
        cr_assert_eq(ls_peer_state_get(m.p[k].peer), LS_PEER_LEFT);
        ls_relay_peer_stats rs = ls_relay_peer_stats_get(m.rt.relay, m.rt.session, k);
        cr_assert_eq(rs.reason, LS_NET_KICKED);
        cr_assert(rs.disconnected);
        cr_assert(finished(&m, 0), "the match goes on");
        assert_record(&m, d.ticks, &m.p[0].g);
    }
    cr_log_info("poisoned upload, %u players: %llu ms", players, (unsigned long long)ms);
    match_free(&m);
}

Test(net_udp, a_poisoned_upload_is_refused_and_another_player_serves_the_rejoiner, .timeout = 60)
{
    poisoned_upload_run(3);
}

Test(net_udp, a_poisoned_upload_in_a_two_player_match_fails_the_rejoin_naming_the_uploader,
     .timeout = 60)
{
    poisoned_upload_run(2);
}

// ---- two players who disagree ----

static bool finished_step(udp_match *m, uint64_t now)
{
    (void)now;
    return all_finished(m);
}

// Slot 0's checksums lie from tick 60 on (its state diverges there): with two players
// nothing tells who is wrong, so the relay names nobody (DISPUTED, never DESYNC), and
// both peers are told so.
Test(net_udp, two_players_who_disagree_are_disputed_never_blamed, .timeout = 60)
{
    const uint32_t lie_at = 60;
    ls_session_def d = sdef(2, 180);
    udp_match m;
    match_init(&m, &d, false, NULL, NULL);
    m.p[0].g.perturb_tick = lie_at;
    uint64_t ms = match_run(&m, finished_step, NULL, 30);
    cr_assert_not(m.timed_out, "the match ended within 30 s");
    cr_assert_neq(m.p[0].g.sums[lie_at], m.p[1].g.sums[lie_at], "the lie is real");
    cr_assert_eq(m.p[0].g.sums[lie_at - 1], m.p[1].g.sums[lie_at - 1]);
    uint32_t disputed = 0;
    for (uint32_t i = 0; i < m.rt.nev; i++) {
        cr_assert_neq(m.rt.ev[i].type, LS_RELAY_EV_DESYNC, "nobody named (tick %u, slots 0x%x)",
                      m.rt.ev[i].tick, m.rt.ev[i].slots);
        if (m.rt.ev[i].type == LS_RELAY_EV_DISPUTED && disputed++ == 0) {
            cr_assert_eq(m.rt.ev[i].tick, lie_at, "first disputed tick %u", m.rt.ev[i].tick);
            cr_assert_eq(m.rt.ev[i].slots, 3u, "both reported");
        }
    }
    cr_assert_gt(disputed, 0u);
    cr_assert_eq(count_events(&m, LS_RELAY_EV_DESYNC), 0u);
    ls_relay_stats st = ls_relay_stats_get(m.rt.relay);
    cr_assert_eq(st.disputes, count_events(&m, LS_RELAY_EV_DISPUTED));
    cr_assert_eq(st.desyncs, 0u);
    for (uint32_t i = 0; i < 2; i++) {
        cr_assert(finished(&m, i), "peer %u finished", i);
        ls_peer_stats ps = ls_peer_stats_get(m.p[i].peer);
        cr_assert_eq(m.p[i].g.desync_events, 0u, "peer %u: no DESYNC", i);
        cr_assert_gt(m.p[i].g.disputed_events, 0u, "peer %u was told", i);
        cr_assert_eq(m.p[i].g.first_disputed, lie_at, "peer %u: first disputed tick %u", i,
                     m.p[i].g.first_disputed);
        cr_assert_eq(ps.named, 0u, "peer %u never named", i);
        cr_assert_eq(ps.desyncs, 0u);
        cr_assert_eq(ps.disputes, m.p[i].g.disputed_events);
    }
    // The ticks before the lie are agreed; the disputed ones carry the lowest slot's claim.
    cr_assert_eq(m.rt.rec_ticks, d.ticks);
    for (uint32_t t = 0; t < lie_at; t++) {
        cr_assert_eq(m.rt.rec_sums[t], m.p[1].g.sums[t], "tick %u", t);
    }
    cr_log_info("disputed match: %llu ms, %u disputed ticks", (unsigned long long)ms,
                count_events(&m, LS_RELAY_EV_DISPUTED));
    match_free(&m);
}

// ---- a player that leaves after losing its last inputs ----

typedef struct leave_script {
    uint32_t slot, at_tick;
    uint64_t drop_from, left_at;
    bool dropping, left;
} leave_script;

// Slot 1's INPUT datagrams are lost from tick 60 while its CHECKSUMs arrive; it plays
// on with the others' inputs (they wait for its input), then leaves. The relay
// disconnects it at its own input_next d, below what it played: its checksums of ticks
// from d on were computed with inputs nobody else plays and count for nothing.
static bool leave_step(udp_match *m, uint64_t now)
{
    leave_script *s = m->user;
    upeer *u = &m->p[s->slot];
    if (!s->dropping && ls_peer_ticks(u->peer) >= s->at_tick) {
        s->dropping = true;
        s->drop_from = now;
        u->drop_inputs = true;
    }
    if (s->dropping && !s->left && now - s->drop_from >= 250000u) {
        s->left = true;
        s->left_at = now;
        ls_peer_leave(u->peer); // its goodbye passes the filter (DISCONNECT, three times)
        up_pump(u);
    }
    if (s->left && now - s->left_at >= 50000u) {
        u->muted = true;
    }
    for (uint32_t i = 0; i < m->n; i++) {
        if (i != s->slot && !finished(m, i)) {
            return false;
        }
    }
    return s->left;
}

Test(net_udp, a_player_that_leaves_after_losing_inputs_is_never_a_desync, .timeout = 60)
{
    ls_session_def d = sdef(3, 240);
    d.delay = 2;
    udp_match m;
    match_init(&m, &d, false, NULL, NULL);
    leave_script s = {1, 60, 0, 0, false, false};
    uint64_t ms = match_run(&m, leave_step, &s, 30);
    cr_assert_not(m.timed_out, "the match ended within 30 s");
    cr_assert_gt(m.p[1].inputs_dropped, 0u);
    assert_no_verdict(&m);
    uint32_t left = UINT32_MAX;
    for (uint32_t i = 0; i < m.rt.nev; i++) {
        if (m.rt.ev[i].type == LS_RELAY_EV_DISCONNECTED && m.rt.ev[i].slot == 1) {
            cr_assert_eq(m.rt.ev[i].reason, LS_NET_LEFT);
            left = m.rt.ev[i].tick;
        }
    }
    cr_assert_neq(left, UINT32_MAX, "the relay saw slot 1 leave");
    cr_assert_lt(left, m.p[1].g.ticks, "disconnected below what it played (%u < %u)", left,
                 m.p[1].g.ticks);
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(m.rt.relay, m.rt.session, 1);
    cr_assert_eq(rs.disconnect_tick, left);
    cr_assert_gt(rs.checksum_next, left, "its checksums of ticks from %u on arrived (to %u)", left,
                 rs.checksum_next);
    for (uint32_t i = 0; i < 3; i += 2) {
        cr_assert(finished(&m, i), "peer %u finished", i);
        cr_assert_eq(ls_peer_ticks(m.p[i].peer), d.ticks);
        cr_assert_eq(m.p[i].g.gone_at[1], left, "peer %u saw slot 1 leave at %u", i,
                     m.p[i].g.gone_at[1]);
        cr_assert_eq(ls_peer_last_checksum(m.p[i].peer), m.p[0].g.sums[d.ticks - 1]);
    }
    assert_record(&m, d.ticks, &m.p[0].g);
    for (uint32_t t = left; t < d.ticks; t++) {
        cr_assert_eq(m.rt.rec_inputs[t][1], 0, "slot 1 is empty from tick %u (at %u)", left, t);
    }
    cr_log_info("departure: slot 1 left at tick %u having played %u ticks, %u INPUTs lost; %llu ms",
                left, m.p[1].g.ticks, m.p[1].inputs_dropped, (unsigned long long)ms);
    match_free(&m);
}

// ---- a reconnect under loss and jitter ----

static bool reconnect_step(udp_match *m, uint64_t now)
{
    outage *o = m->user;
    outage_step(m, o, now);
    return o->done && all_finished(m);
}

// Slot 2 goes silent for 4 s at tick 30 (the relay times it out after 3 s) while every
// datagram, the relay's and the peers', crosses 20 % loss and up to 20 ms of jitter; it
// rejoins from a connected player's snapshot and ends on the same checksum. Lockstep
// peers catch up with their clock after the stall of the timeout: 480 ticks (8 s) leave
// them 3.5 s of play after the outage, for the rejoin (the session must not be done
// before); rollback peers are held while the relay waits, 360 ticks do.
static void reconnect_run(bool rollback)
{
    ls_session_def d = sdef(3, rollback ? 360 : 480);
    ls_net_fault_def f = {200000, 0, 0, 2000, 20000, 7, 0};
    udp_match m;
    match_init(&m, &d, rollback, &f, &f);
    outage o = {2, 30, 4000, 0, false, false, false};
    uint64_t ms = match_run(&m, reconnect_step, &o, 40);
    cr_assert_not(m.timed_out, "the match ended within 40 s");
    cr_assert(o.saw_rejoining, "the silent player was timed out and rejoined");
    cr_assert_eq(first_disconnect(&m, 2).reason, LS_NET_TIMEOUT);
    assert_no_verdict(&m);
    assert_rejoined(&m, 2, 0, d.ticks);
    uint64_t lost = ls_uv_stats_get(m.rt.uv).fault_dropped;
    for (uint32_t i = 0; i < m.n; i++) {
        uint64_t n = ls_uv_stats_get(m.p[i].uv).fault_dropped;
        cr_assert_gt(n, 0u, "peer %u's datagrams were lost too", i);
        lost += n;
    }
    cr_assert_gt(ls_uv_stats_get(m.rt.uv).fault_dropped, 0u);
    cr_log_info("%s reconnect under loss: %llu ms, %llu datagrams lost",
                rollback ? "rollback" : "lockstep", (unsigned long long)ms,
                (unsigned long long)lost);
    match_free(&m);
}

Test(net_udp, a_reconnect_under_loss_and_jitter_succeeds, .timeout = 60)
{
    reconnect_run(false);
}

Test(net_udp, rollback_a_reconnect_under_loss_and_jitter_succeeds, .timeout = 60)
{
    reconnect_run(true);
}
