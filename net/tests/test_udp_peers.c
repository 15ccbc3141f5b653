// SPDX-License-Identifier: MIT
// Loopback tests with real UDP sockets and in-process peers (SPEC.md §17.5, §17.7 to
// §17.10): the libuv relay in a thread (udp_relay.h) and peers built from the
// public API, each an ls_peer on its own ls_uv transport (its own socket and fault
// injection), all on one libuv loop in the test's thread, playing a fake game whose
// state is a hash chain of the inputs. Some are modified clients: one uploads a
// perturbed snapshot to a rejoiner, one lies in its checksums from a tick on, one
// loses its INPUT datagrams (a send filter on what its core produces) and leaves, one
// acknowledges tick 0 of every slot (its ACKs altered and resealed), one loses every
// ACK; an honest player goes silent for 4 s under 20 % loss and jitter and rejoins, a
// default peer's game stalls for 4 s and it rejoins by itself; finished peers release
// the session without ls_peer_leave; and a clean match's network stats are checked.
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
    uint32_t refused, refused_source;      // snapshots we refused, and the last one's source
    uint64_t now;                          // the loop's time of the peer call under way
    uint64_t gone_us[MAXP], back_us[MAXP]; // when those first DISCONNECTED, last REJOINED came
    uint8_t gone_reason[MAXP];             // the first DISCONNECTED's reason, per slot
    uint32_t intr[MAXP], resumed[MAXP];    // INTERRUPTED and RESUMED events per slot ...
    uint64_t intr_us[MAXP];                // ... and when the last INTERRUPTED came
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
                g->gone_us[ev->slot] = g->now;
                g->gone_reason[ev->slot] = ev->reason;
            }
        }
        break;
    case LS_PEER_EV_REJOINED:
        if (ev->slot < MAXP) {
            g->back_at[ev->slot] = ev->tick;
            g->back_us[ev->slot] = g->now;
        }
        break;
    case LS_PEER_EV_INTERRUPTED:
        if (ev->slot < MAXP) {
            g->intr[ev->slot]++;
            g->intr_us[ev->slot] = g->now;
        }
        break;
    case LS_PEER_EV_RESUMED:
        if (ev->slot < MAXP) {
            g->resumed[ev->slot]++;
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

#define HELD_MAX 4096 // datagrams a frozen peer's socket keeps for it (the rest are lost)

typedef struct held_datagram {
    size_t len;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} held_datagram;

typedef struct upeer {
    ls_peer *peer;
    ls_uv *uv;
    ls_net_addr relay;
    const uint8_t *key; // its slot's key (a modified client reseals what it alters)
    game g;
    bool muted;         // an outage: not polled, hears nothing, sends nothing
    bool drop_inputs;   // a send filter: the INPUT datagrams its core produces are lost
    bool drop_acks;     // a send filter: its ACK datagrams are lost
    bool drop_goodbyes; // a send filter: its DISCONNECT datagrams are lost
    bool lie_acks;      // a modified client: its ACKs claim tick 0 of every other slot
    bool frozen;        // a stalled game: not polled; what arrives waits in `held`
    uint32_t inputs_dropped, acks_altered; // ACKs dropped or lied in
    uint64_t first_altered_at;             // when the first of those went out (0: none)
    bool pumped_finished;                  // FINISHED at the end of a pump already
    uint32_t sent_finished, goodbyes;      // datagrams produced once FINISHED; DISCONNECTs produced
    held_datagram *held;
    uint32_t nheld, held_lost;
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

static void up_pump(upeer *u, uint64_t now)
{
    ls_net_datagram d;
    bool was_finished = u->pumped_finished;
    while (ls_peer_next_datagram(u->peer, &d)) {
        ls_net_header h;
        uint8_t type = ls_net_decode_header(d.data, d.len, &h, NULL) == LS_OK ? h.type : 0;
        u->sent_finished += was_finished;
        u->goodbyes += type == LS_NET_DISCONNECT;
        if (u->muted) {
            continue;
        }
        if (u->drop_inputs && type == LS_NET_INPUT) {
            u->inputs_dropped++;
            continue;
        }
        if (u->drop_goodbyes && type == LS_NET_DISCONNECT) {
            continue;
        }
        if ((u->drop_acks || u->lie_acks) && type == LS_NET_ACK) {
            u->first_altered_at = u->first_altered_at ? u->first_altered_at : now;
            u->acks_altered++;
            if (u->drop_acks) {
                continue;
            }
            // A modified client: the same ACK (same sequence number), every other slot
            // claimed at tick 0, sealed with the slot's own key (authentic).
            ls_net_msg m;
            cr_assert_eq(ls_net_decode(d.data, d.len, &m, NULL), LS_OK);
            for (uint32_t k = 0; k < m.u.ack.count; k++) {
                m.u.ack.input_next[k] = k == h.slot ? m.u.ack.input_next[k] : 0;
            }
            cr_assert_eq(ls_net_encode(&m, d.data, sizeof d.data), d.len);
            cr_assert_eq(ls_net_seal(d.data, d.len, u->key, LS_NET_TO_RELAY), LS_OK);
        }
        ls_uv_send(u->uv, &d.to, d.data, d.len);
    }
    u->pumped_finished = ls_peer_state_get(u->peer) == LS_PEER_FINISHED;
}

static void up_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                    uint64_t now)
{
    upeer *u = user;
    if (u->muted || !ls_net_addr_equal(from, &u->relay)) {
        return;
    }
    if (u->frozen) { // nobody reads the socket: the datagram waits there
        if (u->nheld < HELD_MAX && len <= LS_NET_MAX_DATAGRAM) {
            u->held[u->nheld].len = len;
            memcpy(u->held[u->nheld++].data, data, len);
        } else {
            u->held_lost++;
        }
        return;
    }
    u->g.now = now;
    ls_peer_receive(u->peer, data, len, now);
    ls_peer_poll(u->peer, now);
    up_pump(u, now);
}

static void up_timer(void *user, uint64_t now)
{
    upeer *u = user;
    if (u->muted || u->frozen) {
        return;
    }
    u->g.now = now;
    ls_peer_poll(u->peer, now);
    up_pump(u, now);
}

// A stalled game (SPEC.md §17.9): from now on its peer is neither polled nor given what
// arrives, which waits in the socket ...
static void up_freeze(upeer *u)
{
    if (!u->held) {
        u->held = malloc(HELD_MAX * sizeof *u->held);
        cr_assert_not_null(u->held);
    }
    u->nheld = 0;
    u->frozen = true;
}

// ... until the game comes back: everything that waited is read before its next poll.
static void up_thaw(upeer *u, uint64_t now)
{
    u->frozen = false;
    u->g.now = now;
    for (uint32_t i = 0; i < u->nheld; i++) {
        ls_peer_receive(u->peer, u->held[i].data, u->held[i].len, now);
    }
    u->nheld = 0;
    ls_peer_poll(u->peer, now);
    up_pump(u, now);
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

// Slot i's peer: the game's callbacks, set to rejoin (LS_PEER_REJOIN_ON) or left at
// the default of ls_default_peer_def() (set_rejoin false: LS_PEER_REJOIN_AUTO).
static void up_create_peer(udp_match *m, uint32_t i, bool set_rejoin)
{
    upeer *u = &m->p[i];
    ls_peer_def pd = ls_default_peer_def();
    cr_assert_eq(ls_peer_def_set_credential(&pd, &m->rt.cred[i]), LS_OK);
    pd.relay = u->relay;
    pd.mode = m->rollback ? LS_PEER_ROLLBACK : LS_PEER_LOCKSTEP;
    if (set_rejoin) {
        pd.rejoin = true;
    }
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
        u->key = m->rt.cred[i].key;
        up_create_peer(m, i, true);
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
        free(m->p[i].held);
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
        up_pump(u, now);
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

// ---- acknowledgements that must keep up (SPEC.md §17.5) ----

// From at_tick on, slot `slot` misbehaves in its ACKs: lying ones (every other slot
// claimed at tick 0) or none (dropped, while its inputs, checksums and pings still go).
// Tracks the longest time an honest peer's simulation did not move.
typedef struct ack_script {
    uint32_t slot, at_tick;
    bool lie, started;
    uint32_t ticks[MAXP];
    uint64_t moved[MAXP], longest_stall;
} ack_script;

static bool ack_step(udp_match *m, uint64_t now)
{
    ack_script *s = m->user;
    upeer *b = &m->p[s->slot];
    if (!s->started && ls_peer_ticks(b->peer) >= s->at_tick) {
        s->started = true;
        b->lie_acks = s->lie;
        b->drop_acks = !s->lie;
        for (uint32_t i = 0; i < m->n; i++) {
            s->ticks[i] = ls_peer_ticks(m->p[i].peer);
            s->moved[i] = now;
        }
    }
    if (!s->started) {
        return false;
    }
    bool over = ls_peer_state_get(b->peer) == LS_PEER_LEFT;
    for (uint32_t i = 0; i < m->n; i++) {
        if (i == s->slot) {
            continue;
        }
        over &= finished(m, i);
        if (ls_peer_state_get(m->p[i].peer) != LS_PEER_RUNNING) {
            continue;
        }
        if (ls_peer_ticks(m->p[i].peer) != s->ticks[i]) {
            s->ticks[i] = ls_peer_ticks(m->p[i].peer);
            s->moved[i] = now;
        } else if (now - s->moved[i] > s->longest_stall) {
            s->longest_stall = now - s->moved[i];
        }
    }
    return over;
}

// Three players, timeout_ms 1000; slot `bad` misbehaves from at_tick. The relay kicks
// it (KICKED, `slots` = the slots whose inputs it left unacknowledged, here every other
// one) about timeout_ms after its first altered ACK; the honest players are told, at
// the relay's tick, and finish on the same checksums with the slot empty from there.
// Returns the kick's delay after the first altered ACK (us) and the longest stall.
static void ack_run(bool lie, uint32_t ticks, uint32_t at_tick, uint64_t *kick_us,
                    uint64_t *stall_us)
{
    const uint32_t bad = 2, timeout_ms = 1000;
    ls_session_def d = sdef(3, ticks);
    d.timeout_ms = timeout_ms;
    udp_match m;
    match_init(&m, &d, false, NULL, NULL);
    ack_script s = {bad, at_tick, lie, false, {0}, {0}, 0};
    uint64_t ms = match_run(&m, ack_step, &s, 20);
    cr_assert_not(m.timed_out, "the match ended within 20 s (honest peers at %u and %u ticks)",
                  ls_peer_ticks(m.p[0].peer), ls_peer_ticks(m.p[1].peer));
    upeer *b = &m.p[bad];
    cr_assert_gt(b->acks_altered, 0u);
    cr_assert_eq(ls_peer_state_get(b->peer), LS_PEER_LEFT, "the kicked client is out");
    ls_relay_event ev;
    memset(&ev, 0, sizeof ev);
    uint64_t at = 0;
    for (uint32_t e = 0; e < m.rt.nev; e++) {
        if (m.rt.ev[e].type == LS_RELAY_EV_DISCONNECTED && m.rt.ev[e].slot == bad) {
            ev = m.rt.ev[e];
            at = m.rt.ev_at[e];
            break;
        }
    }
    cr_assert_eq(ev.type, LS_RELAY_EV_DISCONNECTED, "the relay disconnected slot %u", bad);
    cr_assert_eq(ev.reason, LS_NET_KICKED, "kicked, not %u", ev.reason);
    cr_assert_eq(ev.slots, 3u, "the unacknowledged slots: both others (mask 0x%x)", ev.slots);
    cr_assert_gt(at, b->first_altered_at);
    *kick_us = at - b->first_altered_at;
    *stall_us = s.longest_stall;
    cr_assert(*kick_us >= (uint64_t)timeout_ms * 900u && *kick_us <= (uint64_t)timeout_ms * 1600u,
              "kicked %llu ms after its first %s ACK", (unsigned long long)*kick_us / 1000,
              lie ? "lying" : "dropped");
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(m.rt.relay, m.rt.session, bad);
    cr_assert(rs.disconnected);
    cr_assert_eq(rs.reason, LS_NET_KICKED);
    cr_assert_eq(rs.disconnect_tick, ev.tick);
    // The kick's tick is the relay's final frontier then: at_tick + 1 when the
    // misbehaving peer's last honest ACK covered at_tick, at_tick when a loaded
    // machine let its first altered ACK go out before that one (seen under asan in
    // CI). Either way it played until the kick (its last input is checked below).
    uint32_t dt = ev.tick;
    cr_assert_geq(dt, at_tick, "it played until the kick (tick %u)", dt);
    for (uint32_t i = 0; i < 2; i++) {
        cr_assert(finished(&m, i), "honest peer %u finished", i);
        cr_assert_eq(ls_peer_ticks(m.p[i].peer), ticks);
        cr_assert_eq(ls_peer_last_checksum(m.p[i].peer), m.p[0].g.sums[ticks - 1],
                     "peer %u ends on the same checksum", i);
        cr_assert_eq(m.p[i].g.gone_at[bad], dt, "peer %u saw slot %u kicked at %u", i, bad,
                     m.p[i].g.gone_at[bad]);
        cr_assert_eq(m.p[i].g.gone_reason[bad], LS_NET_KICKED);
        for (uint32_t t = 0; t < ticks; t++) {
            cr_assert_eq(m.p[i].g.sums[t], m.p[0].g.sums[t], "peer %u tick %u", i, t);
        }
    }
    assert_no_verdict(&m);
    assert_record(&m, ticks, &m.p[0].g);
    cr_assert_neq(m.rt.rec_inputs[dt - 1][bad], 0, "slot %u played tick %u", bad, dt - 1);
    for (uint32_t t = dt; t < ticks; t++) {
        cr_assert_eq(m.rt.rec_inputs[t][bad], 0, "slot %u is empty from tick %u (at %u)", bad, dt,
                     t);
    }
    cr_log_info("%s ACKs from tick %u: kicked at tick %u, %llu ms after the first, slots 0x%x; "
                "honest peers' longest stall %llu ms; match %llu ms",
                lie ? "lying" : "dropped", at_tick, dt, (unsigned long long)*kick_us / 1000,
                ev.slots, (unsigned long long)*stall_us / 1000, (unsigned long long)ms);
    match_free(&m);
}

// A modified client whose every ACK claims tick 0 of every other slot (decoded,
// altered and resealed with its own key: authentic). From tick 260 its claim, clamped
// to input_next - 256, holds the relay's window: every slot's next input is refused
// and the honest players stand still, until the relay kicks it about timeout_ms later;
// then they go on and finish without it.
Test(net_udp, a_peer_that_always_acks_tick_0_is_kicked_and_the_match_goes_on, .timeout = 60)
{
    uint64_t kick, stall;
    ack_run(true, 360, 260, &kick, &stall);
    cr_assert_lt(stall, 1600000u, "the others stood still %llu ms",
                 (unsigned long long)stall / 1000);
    cr_assert_gt(stall, 500000u, "(the window did hold them: %llu ms)",
                 (unsigned long long)stall / 1000);
}

// A client whose ACKs are all lost from tick 100 while its inputs, checksums and pings
// arrive: it is heard from all along (no timeout), its claims stay behind, and the relay
// kicks it about timeout_ms after the first non-final tick passed them.
Test(net_udp, a_peer_whose_acks_are_all_lost_is_kicked_and_the_match_goes_on, .timeout = 60)
{
    uint64_t kick, stall;
    ack_run(false, 300, 100, &kick, &stall);
    cr_assert_lt(stall, 1000000u, "the others stood still %llu ms",
                 (unsigned long long)stall / 1000);
}

// ---- the end of a match: finishing releases the slot (SPEC.md §17.8) ----

// Play until every peer is FINISHED (none calls ls_peer_leave), then `after` us more,
// counting what the relay sends from `count_after` us after the last FINISHED on.
typedef struct finish_script {
    uint64_t fin_at, count_after, after;
} finish_script;

static bool finish_step(udp_match *m, uint64_t now)
{
    finish_script *s = m->user;
    if (!s->fin_at && all_finished(m)) {
        s->fin_at = now;
        rt_count_from(&m->rt, now + s->count_after);
    }
    return s->fin_at && now - s->fin_at >= s->after;
}

static void assert_finished_silently(const udp_match *m, uint32_t ticks, uint8_t reason)
{
    for (uint32_t i = 0; i < m->n; i++) {
        cr_assert(finished(m, i), "peer %u finished", i);
        cr_assert_eq(ls_peer_ticks(m->p[i].peer), ticks);
        cr_assert_eq(ls_peer_last_checksum(m->p[i].peer), m->p[0].g.sums[ticks - 1]);
        cr_assert_eq(m->p[i].goodbyes, 3u, "peer %u said goodbye three times (%u)", i,
                     m->p[i].goodbyes);
        cr_assert_eq(m->p[i].sent_finished, 0u, "and sent nothing more once FINISHED (%u)",
                     m->p[i].sent_finished);
        ls_relay_peer_stats rs = ls_relay_peer_stats_get(m->rt.relay, m->rt.session, i);
        cr_assert(rs.disconnected, "slot %u released", i);
        cr_assert_eq(rs.reason, reason, "slot %u: reason %u", i, rs.reason);
        cr_assert_eq(rs.disconnect_tick, ticks);
    }
    assert_no_verdict(m);
    assert_record(m, ticks, &m->p[0].g);
}

// A game that never calls ls_peer_leave: each peer says goodbye as it becomes FINISHED
// and then sends nothing, so the relay releases every slot at once: the session is idle
// as soon as the last goodbye arrives, and after the answers to the goodbyes the relay
// sends nobody anything (no re-sends, no pings, no notices) for the 1.2 s watched.
Test(net_udp, finished_peers_release_the_session_without_leave, .timeout = 60)
{
    const uint32_t ticks = 180;
    ls_session_def d = sdef(3, ticks);
    udp_match m;
    match_init(&m, &d, false, NULL, NULL);
    finish_script s = {0, 50000, 1200000};
    uint64_t ms = match_run(&m, finish_step, &s, 20);
    cr_assert_not(m.timed_out, "the match ended within 20 s");
    assert_finished_silently(&m, ticks, LS_NET_LEFT);
    cr_assert_neq(m.rt.idle_at, 0u, "the session went idle");
    cr_assert_leq(m.rt.idle_at, s.fin_at + 100000u, "idle %lld us after the last FINISHED",
                  (long long)(m.rt.idle_at - s.fin_at));
    cr_assert_eq(m.rt.sent_after, 0u, "the relay sent %u datagrams from 50 ms on", m.rt.sent_after);
    for (uint32_t k = 0; k < 3; k++) {
        cr_assert_eq(m.rt.sent_after_slot[k], 0u);
    }
    cr_assert_leq(m.rt.last_sent_at, s.fin_at + 50000u, "its last datagram %lld us after",
                  (long long)(m.rt.last_sent_at - s.fin_at));
    cr_log_info("finished without leave: idle %lld us and the relay's last datagram %lld us "
                "after the last FINISHED; match %llu ms",
                (long long)(m.rt.idle_at - s.fin_at), (long long)(m.rt.last_sent_at - s.fin_at),
                (unsigned long long)ms);
    match_free(&m);
}

// Every goodbye lost (a send filter on DISCONNECT): the relay holds every checksum of the
// finished slots, so it sends them nothing unasked (no re-sent inputs, no pings) and
// times each out timeout_ms after its last datagram (TIMEOUT at the match length), each
// timeout's notice going once to the slots still connected and to itself.
Test(net_udp, finished_peers_whose_goodbyes_are_lost_are_released_at_the_timeout, .timeout = 60)
{
    const uint32_t ticks = 150;
    ls_session_def d = sdef(3, ticks);
    d.timeout_ms = 1000;
    udp_match m;
    match_init(&m, &d, false, NULL, NULL);
    for (uint32_t i = 0; i < 3; i++) {
        m.p[i].drop_goodbyes = true;
    }
    finish_script s = {0, 0, 1600000};
    uint64_t ms = match_run(&m, finish_step, &s, 20);
    cr_assert_not(m.timed_out, "the match ended within 20 s");
    assert_finished_silently(&m, ticks, LS_NET_TIMEOUT);
    cr_assert_neq(m.rt.idle_at, 0u, "the session went idle");
    int64_t idle = (int64_t)(m.rt.idle_at - s.fin_at);
    cr_assert(idle >= 700000 && idle <= 1300000, "idle %lld ms after the last FINISHED",
              (long long)idle / 1000);
    const uint32_t *ty = m.rt.sent_after_type;
    cr_assert_eq(ty[LS_NET_INPUT] + ty[LS_NET_PING], 0u,
                 "no re-sent inputs or pings to finished peers (%u %u)", ty[LS_NET_INPUT],
                 ty[LS_NET_PING]);
    cr_assert_leq(ty[LS_NET_DISCONNECT], 6u, "%u notices (3 + 2 + 1 at most)",
                  ty[LS_NET_DISCONNECT]);
    cr_assert_leq(m.rt.last_sent_at, m.rt.idle_at, "nothing sent once idle");
    cr_log_info("goodbyes lost: idle %lld us after the last FINISHED, %u datagrams since (%u "
                "notices); match %llu ms",
                (long long)idle, m.rt.sent_after, ty[LS_NET_DISCONNECT], (unsigned long long)ms);
    match_free(&m);
}

// ---- a default peer whose game stalls for 4 s (SPEC.md §17.9, §17.10) ----

static bool freeze_step(udp_match *m, uint64_t now)
{
    outage *o = m->user;
    upeer *u = &m->p[o->slot];
    if (!o->started && ls_peer_ticks(u->peer) >= o->at_tick) {
        o->started = true;
        o->from = now;
        up_freeze(u);
    }
    if (o->started && !o->done && now - o->from >= o->ms * 1000u) {
        o->done = true;
        up_thaw(u, now);
    }
    o->saw_rejoining |= ls_peer_state_get(u->peer) == LS_PEER_REJOINING;
    return o->done && all_finished(m);
}

// Three rollback players; slot 2's peer is made from ls_default_peer_def() and the game's
// callbacks only (save, load, state_checksum: no rejoin setting), and its game stops
// calling it for 4 s at tick 60 (neither poll nor receive; what arrives waits in the
// socket): longer than the session's default 3 s timeout. The others are told it is
// interrupted 0.5 s into the stall, long before the relay times it out; it comes back by
// itself from a connected player's snapshot (a bare relay) and ends on the same checksum.
Test(net_udp, a_default_peer_stopped_for_4s_rejoins_by_itself, .timeout = 60)
{
    const uint32_t ticks = 300, k = 2;
    ls_session_def d = sdef(3, ticks);
    cr_assert_eq(d.timeout_ms, 3000u, "the default timeout");
    udp_match m;
    match_init(&m, &d, true, NULL, NULL);
    ls_peer_destroy(m.p[k].peer);
    up_create_peer(&m, k, false);
    cr_assert(ls_peer_rejoins(m.p[k].peer), "the default (AUTO) rejoins with load and proof");
    outage o = {k, 60, 4000, 0, false, false, false};
    uint64_t ms = match_run(&m, freeze_step, &o, 30);
    cr_assert_not(m.timed_out, "the match ended within 30 s");
    cr_assert(o.saw_rejoining, "the stalled peer was timed out and rejoined");
    cr_assert_eq(m.p[k].held_lost, 0u);
    ls_relay_event gone = first_disconnect(&m, k);
    cr_assert_eq(gone.reason, LS_NET_TIMEOUT);
    assert_no_verdict(&m);
    assert_rejoined(&m, k, 0, ticks);
    ls_relay_peer_stats rs = ls_relay_peer_stats_get(m.rt.relay, m.rt.session, k);
    for (uint32_t i = 0; i < 2; i++) {
        const game *g = &m.p[i].g;
        cr_assert_eq(g->intr[k], 1u, "peer %u: slot %u interrupted once (%u)", i, k, g->intr[k]);
        int64_t intr = (int64_t)(g->intr_us[k] - o.from);
        cr_assert(intr >= 400000 && intr <= 1500000, "peer %u: interrupted %lld ms into the stall",
                  i, (long long)intr / 1000);
        cr_assert_eq(g->gone_reason[k], LS_NET_TIMEOUT);
        cr_assert_gt(g->gone_us[k], g->intr_us[k] + 1500000u,
                     "peer %u: told %lld ms before the timeout", i,
                     (long long)(g->gone_us[k] - g->intr_us[k]) / 1000);
        cr_assert_gt(g->back_us[k], g->gone_us[k], "then REJOINED");
        cr_assert_eq(g->resumed[k], 0u, "the disconnect ended the interruption: no RESUMED");
        cr_assert_eq(g->intr[0] + g->intr[1], 0u, "peer %u named nobody else", i);
        ls_peer_remote_stats r = ls_peer_remote_stats_get(m.p[i].peer, k);
        cr_assert_eq(r.interruptions, 1u);
        cr_assert_not(r.interrupted);
        cr_assert_eq(r.rejoins, 1u);
        cr_assert_eq(r.rejoin_tick, rs.rejoin_tick);
    }
    cr_assert_eq(ls_peer_stats_get(m.p[k].peer).interruptions, 0u,
                 "a stalled game's peer never saw its link silent");
    cr_log_info("default rollback peer stalled 4 s at tick 60: others told %lld ms into it, "
                "gone at tick %u (%lld ms in), back at %u; match %llu ms",
                (long long)(m.p[0].g.intr_us[k] - o.from) / 1000, gone.tick,
                (long long)(m.p[0].g.gone_us[k] - o.from) / 1000, rs.rejoin_tick,
                (unsigned long long)ms);
    match_free(&m);
}

// ---- the network watch: rates, frontiers, the send queue (SPEC.md §17.9) ----

#define STATS_TICKS 32 // confirmed ticks checked

// Peer 0's stats at two instants a second apart, and the confirmed inputs it holds then.
typedef struct stats_script {
    uint64_t a_at, b_at;
    ls_peer_stats a, b;
    ls_peer_remote_stats r[MAXP];
    uint32_t ticks, confirmed;
    uint32_t inputs_ok, inputs_checked; // confirmed inputs that are the slot's real input
    bool early_empty, beyond_refused;   // below the delay: empty; far ahead / not a slot: false
} stats_script;

static void stats_sample(udp_match *m, stats_script *s)
{
    ls_peer *p = m->p[0].peer;
    s->b = ls_peer_stats_get(p);
    s->ticks = ls_peer_ticks(p);
    for (uint32_t k = 0; k < m->n; k++) {
        s->r[k] = ls_peer_remote_stats_get(p, k);
    }
    s->confirmed = ls_peer_confirmed(p);
    uint32_t from = s->confirmed > STATS_TICKS ? s->confirmed - STATS_TICKS : 0;
    for (uint32_t t = from; t < s->confirmed; t++) {
        for (uint32_t k = 0; k < m->n; k++) {
            uint8_t in = 0xEE;
            bool ok = ls_peer_confirmed_input(p, k, t, &in);
            s->inputs_checked++;
            s->inputs_ok += ok && in == (t < 3 ? 0 : fake_input(k, t));
        }
    }
    uint8_t in = 0xEE;
    s->early_empty = ls_peer_confirmed_input(p, 1, 1, &in) && in == 0;
    s->beyond_refused = !ls_peer_confirmed_input(p, 1, s->confirmed + 300, &in) &&
                        !ls_peer_confirmed_input(p, m->n, s->confirmed - 1, &in);
}

static bool stats_step(udp_match *m, uint64_t now)
{
    stats_script *s = m->user;
    if (!s->a_at && ls_peer_ticks(m->p[0].peer) >= 60) {
        s->a_at = now;
        s->a = ls_peer_stats_get(m->p[0].peer);
    }
    if (s->a_at && !s->b_at && now - s->a_at >= 1000000u) {
        s->b_at = now;
        stats_sample(m, s);
    }
    return s->b_at && all_finished(m);
}

// A clean three-player match: peer 0's traffic rates (a mean over about the last second)
// match the bytes it counted over the last second, every slot's frontier is near its
// own, a few frames behind at most, its inputs fresh, the outbox empty (the transport
// takes everything at once), and ls_peer_confirmed_input gives every slot's real input of
// the confirmed ticks. No interruption is ever reported.
static void stats_run(bool rollback)
{
    const uint32_t ticks = 180, delay = 3;
    ls_session_def d = sdef(3, ticks);
    cr_assert_eq(d.delay, delay);
    udp_match m;
    match_init(&m, &d, rollback, NULL, NULL);
    stats_script s;
    memset(&s, 0, sizeof s);
    uint64_t ms = match_run(&m, stats_step, &s, 20);
    cr_assert_not(m.timed_out, "the match ended within 20 s");
    cr_assert_neq(s.b_at, 0u, "sampled");
    uint64_t span = s.b_at - s.a_at;
    uint64_t in = (s.b.bytes_in - s.a.bytes_in) * 8000u / span,
             out = (s.b.bytes_out - s.a.bytes_out) * 8000u / span;
    cr_log_info("%s peer 0: %u kbps in (%llu over the last second), %u kbps out (%llu), rtt %u "
                "us, confirmed %u of %u ticks",
                rollback ? "rollback" : "lockstep", s.b.kbps_in, (unsigned long long)in,
                s.b.kbps_out, (unsigned long long)out, s.b.rtt_us, s.confirmed, s.ticks);
    for (uint32_t k = 0; k < 3; k++) {
        cr_log_info("  slot %u: frontier %u (relay %u), %d frames behind, last input %llu us ago",
                    k, s.r[k].frontier, s.r[k].relay_frontier, s.r[k].frames_behind,
                    (unsigned long long)s.r[k].since_input_us);
    }
    cr_assert_gt(s.b.kbps_in, 0u);
    cr_assert_gt(s.b.kbps_out, 0u);
    cr_assert(s.b.kbps_in * 10 >= in * 6 && s.b.kbps_in * 10 <= in * 14, "kbps_in %u vs %llu",
              s.b.kbps_in, (unsigned long long)in);
    cr_assert(s.b.kbps_out * 10 >= out * 6 && s.b.kbps_out * 10 <= out * 14, "kbps_out %u vs %llu",
              s.b.kbps_out, (unsigned long long)out);
    cr_assert_gt(s.b.rtt_us, 0u, "a round trip was measured");
    cr_assert_lt(s.b.rtt_us, 100000u, "loopback: %u us", s.b.rtt_us);
    cr_assert_eq(s.b.send_queue, 0u, "the transport took everything");
    cr_assert_leq(s.b.unacked_inputs, 10u);
    cr_assert_not(s.b.interrupted);
    uint32_t own = s.r[0].frontier;
    cr_assert_gt(own, 60u);
    for (uint32_t k = 0; k < 3; k++) {
        const ls_peer_remote_stats *r = &s.r[k];
        cr_assert_leq(r->frontier, own + 10, "slot %u's frontier %u near ours %u", k, r->frontier,
                      own);
        cr_assert_geq(r->frontier + 10, own, "slot %u's frontier %u near ours %u", k, r->frontier,
                      own);
        cr_assert_eq(r->frames_behind, (int32_t)s.ticks - ((int32_t)r->frontier - (int32_t)delay));
        cr_assert(r->frames_behind >= -10 && r->frames_behind <= 10, "slot %u: %d frames behind", k,
                  r->frames_behind);
        cr_assert_lt(r->since_input_us, 300000u, "slot %u: last input %llu us ago", k,
                     (unsigned long long)r->since_input_us);
        cr_assert_not(r->interrupted);
        cr_assert_not(r->gone);
        cr_assert_eq(r->reason, 0);
        if (k == 0) { // ours: what the relay acknowledged
            cr_assert_eq(r->frontier - r->relay_frontier, s.b.unacked_inputs);
        } else {
            cr_assert_leq(r->frontier, r->relay_frontier + 16);
            cr_assert_leq(r->relay_frontier, r->frontier + 16);
        }
    }
    cr_assert_gt(s.confirmed, 60u);
    // Inputs are sent `delay` ticks ahead: they may be confirmed a little beyond what is
    // simulated (rollback: every slot's, a frame after it was produced).
    cr_assert_leq(s.confirmed, s.ticks + delay + 4, "confirmed %u, simulated %u", s.confirmed,
                  s.ticks);
    cr_assert_geq(s.confirmed + 10, s.ticks, "confirmed %u, simulated %u", s.confirmed, s.ticks);
    cr_assert_eq(s.inputs_checked, STATS_TICKS * 3u);
    cr_assert_eq(s.inputs_ok, s.inputs_checked, "%u of %u confirmed inputs are the real ones",
                 s.inputs_ok, s.inputs_checked);
    cr_assert(s.early_empty, "below the input delay: the empty input");
    cr_assert(s.beyond_refused, "not confirmed, or not a slot: false");
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert(finished(&m, i));
        cr_assert_eq(ls_peer_last_checksum(m.p[i].peer), m.p[0].g.sums[ticks - 1]);
        ls_peer_stats st = ls_peer_stats_get(m.p[i].peer);
        cr_assert_eq(st.interruptions, 0u);
        cr_assert_eq(st.unacked_inputs, 0u);
        for (uint32_t k = 0; k < 3; k++) {
            cr_assert_eq(m.p[i].g.intr[k], 0u, "peer %u: no interruption of slot %u", i, k);
        }
    }
    assert_no_verdict(&m);
    assert_record(&m, ticks, &m.p[0].g);
    cr_log_info("%s stats match: %llu ms", rollback ? "rollback" : "lockstep",
                (unsigned long long)ms);
    match_free(&m);
}

Test(net_udp, peer_stats_report_rates_frontiers_and_the_send_queue, .timeout = 60)
{
    stats_run(false);
    stats_run(true);
}
