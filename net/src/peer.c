// SPDX-License-Identifier: MIT
// The peer state machine (SPEC.md §17 "Relay protocol", §17.6 "Lockstep peers",
// "Rollback and SyncTest"). Datagrams from the relay are verified (tag, then
// replay window) before anything in them is used; every datagram sent is sealed
// with the slot's key.
//
// One input path for both modes: the rollback core (net/src/rollback.c) holds
// every slot's inputs, the empty inputs of departures and outages, and the
// checksums; lockstep is the core at max_prediction 0 (it simulates a tick only
// once every input of it is known, and never saves or loads a state). Why one
// path: gaps, departures, rejoins and late joins are then decided once, by the
// core's frontier rules, and a fix to them is made in one place. The modes
// differ only in what drives the ticks:
//
// - Lockstep (§17.6): the peer makes its own inputs as its clock reaches them,
//   up to `max_lead` ticks beyond what it simulated, adds them to the core and
//   simulates as far as the known inputs allow (no tick is ever lost; time sync
//   moves the clock's origin).
// - Rollback (§24): one core frame per clock tick (a frame that waits on the
//   prediction window or is skipped by time sync is lost, so a peer held back
//   falls in step with the others); our own inputs are made by the core
//   (through local_input). Time sync uses the relay's ACK, which says how far
//   each slot's inputs have reached at the relay at one instant: our lead is our
//   input frontier there minus the slowest live slot's.
//
// In both, remote inputs go into the core as the relay fans them out; our own
// inputs are kept here until the relay holds them; only final checksums
// (confirmed ticks, corrections done) go to the relay, so prediction never shows
// up as a desync. A slot that timed out may come back (§17.10): its empty inputs
// are confirmed tick by tick (relay ACKs, then the REJOINED tick), never
// open-ended, so no peer simulates or predicts across its return tick.
#include "ls/net_peer.h"

#include "auth.h"
#include "outbox.h"
#include "state_send.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define W            LS_NET_WINDOW
#define RATE_SAMPLES 10 // traffic samples, one per 100 ms: the rates average the last second

struct ls_peer {
    ls_peer_def def;
    ls_peer_state state;
    ls_net_msg welcome;
    uint32_t slots, isz, delay, rate, ticks;
    uint64_t cookie;
    uint64_t tx_seq;  // sequence number of the last datagram sent
    ls_net_replay rx; // relay -> peer sequence numbers seen
    bool joined_once;
    uint64_t last_join, last_input_send, last_csum_send, last_ack_send, last_ping, origin;
    uint64_t clock_base; // ticks on the clock at `origin` (0 but after a rejoin at an early now)
    uint32_t ping_seq;
    bool ack_dirty;
    uint32_t produced;                    // our inputs exist for ticks below delay + produced
    uint32_t own_acked;                   // the relay holds our inputs below this tick
    uint32_t have[LS_NET_MAX_SLOTS];      // we hold slot k's inputs below this tick (ACK)
    bool gone[LS_NET_MAX_SLOTS];          // slot k is disconnected ...
    uint32_t gone_tick[LS_NET_MAX_SLOTS]; // ... from this tick on
    uint32_t back_tick[LS_NET_MAX_SLOTS]; // slot k's last outage ended at this tick (REJOINED)
    uint32_t csum_acked;                  // the relay holds our checksums below this tick
    uint8_t *own;                         // [W][isz] our inputs, until the relay holds them
    uint64_t csum[W];                     // final checksums below csum_final, by tick % W
    uint64_t last_csum;
    ls_rollback *rb;      // the core: every slot's inputs, the game's ticks (from WELCOME on)
    uint32_t csum_final;  // final checksums below this are in csum[]
    uint64_t frames_done; // rollback mode: clock frames run
    bool catching_up;     // rollback mode, after a rejoin: extra frames until present = clock
    // A slot timed out (it may come back, SPEC.md §17.10, §24.8): its empty inputs are
    // confirmed up to empty_to (relay ACKs, then the REJOINED tick) and added to the core
    // below empty_next so far (the core refuses what is beyond its input window).
    bool soft[LS_NET_MAX_SLOTS];
    uint32_t empty_next[LS_NET_MAX_SLOTS], empty_to[LS_NET_MAX_SLOTS];
    uint64_t rj_since, last_state_ack; // REJOINING since; last STATE_ACK sent
    uint64_t rj_hold; // restarted: silent until then (our old process times out at the relay)
    uint32_t rj_tick; // our inputs count again from here (relay's notice) ...
    bool rj_known;    // ... once known
    uint8_t *sbuf;    // the snapshot being received (in-order bytes)
    uint32_t s_tick, s_total, s_next;
    uint8_t s_hash[LS_NET_STATE_HASH_SIZE];
    // The relay's proof of the snapshot of s_tick (STATE_PROOF), and a refusal of ours
    // being repeated until a new transfer starts (SPEC.md §17.10).
    bool proof_known, refusing;
    uint8_t proof_kind, proof_source;
    uint32_t proof_tick;
    uint64_t proof_sum, refused_sum, last_refusal;
    uint8_t refused_hash[LS_NET_STATE_HASH_SIZE];
    // Our upload of the state of up_tick, asked by the relay for a rejoiner.
    uint8_t *up;
    uint32_t up_tick, up_total, up_acked, up_sent;
    uint8_t up_hash[LS_NET_STATE_HASH_SIZE];
    uint64_t up_last, up_heard; // last chunk sent; last word from the relay about it
    ls_net_outbox out;
    ls_peer_stats st;
    // The network watch (SPEC.md §17.9): interruptions, per-slot timing and traffic rates.
    uint64_t heard_at, cut_at, last_poll;    // last datagram from the relay; INTERRUPTED at
    uint64_t linked_at;                      // our link came back (RESUMED of our slot) at
    bool watching;                           // the per-slot timers below run (RUNNING)
    uint64_t input_at[LS_NET_MAX_SLOTS];     // slot k's frontier last moved (or watch start)
    uint64_t waited_at[LS_NET_MAX_SLOTS];    // since then (or later) everyone waits for slot k
    bool low[LS_NET_MAX_SLOTS];              // slot k had the lowest frontier at the last poll
    bool armed[LS_NET_MAX_SLOTS];            // slot k sent inputs since the watch (re)started
    uint64_t quiet_at[LS_NET_MAX_SLOTS];     // slot k INTERRUPTED at (while quiet[k])
    uint32_t seen_have[LS_NET_MAX_SLOTS];    // have[k] at the previous poll
    bool seen_gone[LS_NET_MAX_SLOTS];        // gone[k] at the previous poll
    bool quiet[LS_NET_MAX_SLOTS];            // slot k INTERRUPTED, not yet RESUMED
    uint32_t relay_has[LS_NET_MAX_SLOTS];    // the relay's input_next[k] (its ACKs, highest)
    uint32_t quiet_count[LS_NET_MAX_SLOTS];  // INTERRUPTED events per slot
    uint8_t gone_reason[LS_NET_MAX_SLOTS];   // latest DISCONNECTED of slot k: reason ...
    uint32_t gone_at_tick[LS_NET_MAX_SLOTS]; // ... and tick
    uint32_t back_count[LS_NET_MAX_SLOTS];   // REJOINED events per slot
    uint64_t rate_t[RATE_SAMPLES], rate_in[RATE_SAMPLES], rate_out[RATE_SAMPLES];
    uint32_t rate_at, rate_n;
    uint32_t predicted; // the predicted mask of the tick being (or last) simulated
};

ls_result ls_peer_def_set_credential(ls_peer_def *def, const ls_net_credential *cred)
{
    if (!def || !cred || cred->role != LS_NET_ROLE_PLAYER || cred->slot >= LS_NET_MAX_SLOTS) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    def->session = cred->session;
    def->slot = cred->slot;
    memcpy(def->key, cred->key, LS_NET_KEY_SIZE);
    return LS_OK;
}

ls_peer_def ls_default_peer_def(void)
{
    ls_peer_def d;
    memset(&d, 0, sizeof d);
    d.session = 1;
    d.mode = LS_PEER_LOCKSTEP;
    d.max_lead = 8;
    d.resend_us = 20000;
    d.join_retry_us = 200000;
    d.ping_interval_us = 250000;
    d.interrupt_us = 500000;
    d.max_prediction = 8;
    d.resim_budget = 0;
    d.time_sync_threshold = 2;
    d.rejoin = LS_PEER_REJOIN_AUTO;
    return d;
}

// Names the first bad setting of a peer definition, or NULL when all are valid.
static const char *peer_def_problem(const ls_peer_def *def)
{
    if (!def) {
        return "no peer definition";
    }
    if (def->slot >= LS_NET_MAX_SLOTS) {
        return "slot must be below LS_NET_MAX_SLOTS";
    }
    if (def->mode != LS_PEER_LOCKSTEP && def->mode != LS_PEER_ROLLBACK) {
        return "mode must be LS_PEER_LOCKSTEP or LS_PEER_ROLLBACK";
    }
    if (def->mode == LS_PEER_ROLLBACK && (!def->cb.save || !def->cb.load)) {
        return "rollback mode needs the save and load callbacks";
    }
    if ((unsigned)def->rejoin > LS_PEER_REJOIN_AUTO) {
        return "rejoin must be LS_PEER_REJOIN_OFF, LS_PEER_REJOIN_ON or LS_PEER_REJOIN_AUTO";
    }
    if (def->rejoin == LS_PEER_REJOIN_ON && (!def->cb.load || !def->cb.state_checksum)) {
        return "rejoin needs the load and state_checksum callbacks (a snapshot is proven)";
    }
    if (def->restarted &&
        (def->rejoin == LS_PEER_REJOIN_OFF || !def->cb.load || !def->cb.state_checksum)) {
        return "restarted needs rejoin: the load and state_checksum callbacks, rejoin not OFF";
    }
    if (def->first_seq > UINT64_MAX - ((uint64_t)1 << 32)) {
        return "first_seq must leave at least 2^32 sequence numbers (at most 2^64 - 1 - 2^32)";
    }
    if (def->max_prediction > LS_ROLLBACK_MAX_PREDICTION) {
        return "max_prediction must be 0..LS_ROLLBACK_MAX_PREDICTION";
    }
    if (def->max_lead < 1 || def->max_lead > LS_NET_MAX_LEAD) {
        return "max_lead must be 1..LS_NET_MAX_LEAD";
    }
    if (def->resend_us < 1000 || def->join_retry_us < 1000 || def->ping_interval_us < 1000) {
        return "resend_us, join_retry_us and ping_interval_us must be at least 1000";
    }
    if (!def->cb.local_input || !def->cb.advance) {
        return "callbacks local_input and advance are required";
    }
    uint8_t any = 0;
    for (size_t i = 0; i < LS_NET_KEY_SIZE; i++) {
        any |= def->key[i];
    }
    if (!any) {
        return "key is all zero: copy it from the slot's credential (ls_peer_def_set_credential)";
    }
    return NULL;
}

ls_peer *ls_peer_create(const ls_peer_def *def, ls_error *err)
{
    const char *problem = peer_def_problem(def);
    if (problem) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "%s", problem);
        return NULL;
    }
    if (!ls_net_auth_init_()) {
        ls_error_set(err, LS_ERR_IO, "libsodium failed to initialise");
        return NULL;
    }
    ls_peer *p = calloc(1, sizeof *p);
    if (!p) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    p->def = *def;
    if (def->rejoin == LS_PEER_REJOIN_AUTO) { // resolved once: the peer sees ON or OFF only
        bool can = def->cb.load && def->cb.state_checksum;
        p->def.rejoin = can ? LS_PEER_REJOIN_ON : LS_PEER_REJOIN_OFF;
    }
    p->tx_seq = def->first_seq ? def->first_seq - 1 : 0; // the last one "sent"
    p->state = LS_PEER_JOINING;
    ls_net_outbox_init_(&p->out, 4096);
    ls_error_clear(err);
    return p;
}

void ls_peer_destroy(ls_peer *p)
{
    if (!p) {
        return;
    }
    free(p->own);
    free(p->sbuf);
    free(p->up);
    ls_rollback_destroy(p->rb);
    ls_net_outbox_free_(&p->out);
    ls_net_auth_wipe_(p->def.key, sizeof p->def.key);
    free(p);
}

static void watch_event(ls_peer *p, const ls_peer_event *ev);

static void emit(ls_peer *p, const ls_peer_event *ev)
{
    watch_event(p, ev);
    if (p->def.cb.on_event) {
        p->def.cb.on_event(p->def.cb.user, ev);
    }
}

static void send_msg(ls_peer *p, ls_net_msg *m, uint8_t type)
{
    m->h.type = type;
    size_t len = ls_net_outbox_send_(&p->out, &p->def.relay, m, LS_NET_ROLE_PLAYER, p->def.session,
                                     p->def.slot, &p->tx_seq, p->def.key, LS_NET_TO_RELAY);
    if (len) {
        p->st.packets_out++;
        p->st.bytes_out += len;
    }
}

static void send_join(ls_peer *p, uint64_t now)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.cookie = p->cookie;
    send_msg(p, &m, LS_NET_JOIN);
    p->last_join = now;
}

static void send_rejoin(ls_peer *p, uint64_t now)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.cookie = p->cookie;
    send_msg(p, &m, LS_NET_REJOIN);
    p->last_join = now;
}

// Our own input of tick t (kept until the relay acknowledges it).
static uint8_t *own_input(ls_peer *p, uint32_t t)
{
    return p->own + (size_t)(t % W) * p->isz;
}

static uint32_t batch_cap(uint32_t input_size)
{
    uint32_t n = (LS_NET_MAX_DATAGRAM - LS_NET_OVERHEAD - 8) / input_size;
    return n < LS_NET_MAX_BATCH ? n : LS_NET_MAX_BATCH;
}

// ---- the core's callbacks (the core's user is the peer) ----

// Rollback mode: the core asks for our input of tick delay + produced (once per tick, in order):
// the game writes it, and it is kept here until the relay acknowledges it.
static void rb_local_input(void *user, uint32_t tick, uint8_t *out, uint32_t input_size)
{
    ls_peer *p = user;
    p->def.cb.local_input(p->def.cb.user, tick, out, input_size);
    memcpy(own_input(p, tick), out, input_size);
    p->produced = tick + 1 - p->delay;
    p->have[p->def.slot] = tick + 1;
}

static size_t rb_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    ls_peer *p = user;
    return p->def.cb.save(p->def.cb.user, tick, buf, cap);
}

static bool rb_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    ls_peer *p = user;
    return p->def.cb.load(p->def.cb.user, tick, buf, size);
}

static uint64_t rb_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                           uint32_t input_size, uint32_t predicted)
{
    ls_peer *p = user;
    p->predicted = predicted;
    return p->def.cb.advance(p->def.cb.user, tick, inputs, slots, input_size);
}

static void rb_predict(void *user, uint32_t slot, uint32_t tick, uint8_t *inout,
                       uint32_t input_size)
{
    ls_peer *p = user;
    p->def.cb.predict(p->def.cb.user, slot, tick, inout, input_size);
}

static void rb_event(void *user, const ls_rollback_event *rev)
{
    ls_peer *p = user;
    ls_peer_event ev = {LS_PEER_EV_ROLLBACK, rev->slot, rev->tick, 0, 0, 0, rev->count, 0};
    switch (rev->type) {
    case LS_ROLLBACK_EV_ROLLBACK:
        break;
    case LS_ROLLBACK_EV_WAITING:
        ev.type = LS_PEER_EV_WAITING;
        break;
    case LS_ROLLBACK_EV_TIME_SYNC:
        ev.type = LS_PEER_EV_TIME_SYNC;
        ev.frames_ahead = rev->frames_ahead;
        break;
    case LS_ROLLBACK_EV_ERROR:
        ev.type = LS_PEER_EV_STATE_ERROR;
        break;
    case LS_ROLLBACK_EV_DESYNC: // checksums are compared by the relay, not by the core
        return;
    }
    emit(p, &ev);
}

// Lockstep is the core at max_prediction 0 with no local slot: the peer adds its
// own inputs as its clock makes them, the core never saves, loads or skips.
static bool create_core(ls_peer *p)
{
    bool rollback = p->def.mode == LS_PEER_ROLLBACK;
    ls_rollback_def d = ls_default_rollback_def();
    d.slots = p->slots;
    d.input_size = p->isz;
    d.local_slot = rollback ? p->def.slot : LS_ROLLBACK_NO_SLOT;
    d.input_delay = p->delay;
    d.max_prediction = rollback ? p->def.max_prediction : 0;
    d.resim_budget = p->def.resim_budget;
    d.ticks = p->ticks;
    d.time_sync_threshold = rollback ? p->def.time_sync_threshold : 0;
    d.cb.user = p;
    d.cb.local_input = rb_local_input;
    d.cb.save = p->def.cb.save ? rb_save : NULL;
    d.cb.load = p->def.cb.load ? rb_load : NULL;
    d.cb.advance = rb_advance;
    d.cb.predict = p->def.cb.predict ? rb_predict : NULL;
    d.cb.on_event = rb_event;
    p->rb = ls_rollback_create(&d, NULL);
    return p->rb != NULL;
}

// What we hold of slot k (for ACK): the core's frontier; below the disconnect
// tick for a slot whose every input is known.
static uint32_t rb_have(const ls_peer *p, uint32_t k)
{
    uint32_t f = ls_rollback_frontier(p->rb, k);
    return f == UINT32_MAX ? p->gone_tick[k] : f;
}

// Add slot k's confirmed empty inputs of [empty_next, empty_to) to the core.
static void rb_fill_empty(ls_peer *p, uint32_t k)
{
    static const uint8_t zero[LS_NET_MAX_INPUT_SIZE];
    while (p->empty_next[k] < p->empty_to[k]) {
        if (ls_rollback_add_input(p->rb, k, p->empty_next[k], zero) == LS_ERR_OUT_OF_RANGE) {
            break; // beyond the input window: again at the next poll
        }
        p->empty_next[k]++;
    }
    p->have[k] = rb_have(p, k);
}

// ---- the network watch (SPEC.md §17.9): interruptions, per-slot timing, traffic rates ----
//
// Nothing here sends a datagram: it reads what the peer already does and tells the game.
// Our link: no authentic datagram from the relay for interrupt_us (the relay pings us every
// 250 ms and answers our pings) is an interruption of our own slot. Another slot: through a
// relay no peer hears another directly, so a slot is interrupted when its inputs stop for
// interrupt_us *while the relay keeps talking to us* (a datagram from the relay after that
// much of its silence, counted from our own link's last return) and its input frontier has
// been the lowest of every live slot, ours included, all that time: a live peer that waits
// for someone (lockstep lead bound, rollback window) has produced inputs beyond the
// frontier of the one it waits for, so only the slot everyone waits for is named, never
// the ones merely held up by it (when that one leaves, theirs move again at once). A slot
// is watched once it has sent an input (one that never joined is not "interrupted": the
// relay's join timeout disconnects it).

static uint64_t since(uint64_t now, uint64_t t)
{
    return now > t ? now - t : 0;
}

static uint64_t timeout_us(const ls_peer *p)
{
    uint32_t ms = p->welcome.u.welcome.timeout_ms ? p->welcome.u.welcome.timeout_ms : 3000;
    return (uint64_t)ms * 1000;
}

static void watch_emit(ls_peer *p, ls_peer_event_type type, uint32_t slot, uint64_t count_us)
{
    uint32_t tick = slot == p->def.slot ? ls_peer_ticks(p) : p->have[slot];
    uint64_t ms = count_us / 1000;
    ls_peer_event ev = {type, slot, tick, 0, 0, 0, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms, 0};
    emit(p, &ev);
}

// Every event the peer emits passes here: what the per-slot stats keep of it.
static void watch_event(ls_peer *p, const ls_peer_event *ev)
{
    if (ev->slot >= LS_NET_MAX_SLOTS) {
        return;
    }
    if (ev->type == LS_PEER_EV_DISCONNECTED) {
        p->gone_reason[ev->slot] = ev->reason;
        p->gone_at_tick[ev->slot] = ev->tick;
        p->quiet[ev->slot] = false; // the interruption ends with the disconnect (no RESUMED)
    } else if (ev->type == LS_PEER_EV_REJOINED) {
        p->back_count[ev->slot]++;
    }
}

// An authentic datagram from the relay (ls_peer_receive): our link works.
static void watch_heard(ls_peer *p, uint64_t now)
{
    p->heard_at = now;
    if (p->st.interrupted) {
        p->st.interrupted = false;
        p->linked_at = now; // the others' silence while we heard nothing says nothing
        watch_emit(p, LS_PEER_EV_RESUMED, p->def.slot, since(now, p->cut_at));
    }
}

// The relay's ACK: how far it holds every slot's inputs.
static void watch_ack(ls_peer *p, const ls_net_msg *m)
{
    for (uint32_t k = 0; k < p->slots; k++) {
        if (m->u.ack.input_next[k] > p->relay_has[k]) {
            p->relay_has[k] = m->u.ack.input_next[k];
        }
    }
}

static uint32_t kbps(uint64_t bytes, uint64_t us)
{
    uint64_t v = bytes / us * 8000u + bytes % us * 8000u / us;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

// A sample of the byte counters every 100 ms; the rates are over the last RATE_SAMPLES.
static void watch_rates(ls_peer *p, uint64_t now)
{
    uint32_t last = (p->rate_at + RATE_SAMPLES - 1) % RATE_SAMPLES;
    if (p->rate_n && since(now, p->rate_t[last]) < 100000) {
        return;
    }
    if (p->rate_n) {
        uint32_t old = p->rate_n < RATE_SAMPLES ? 0 : p->rate_at;
        uint64_t dt = since(now, p->rate_t[old]);
        if (dt) {
            p->st.kbps_in = kbps(p->st.bytes_in - p->rate_in[old], dt);
            p->st.kbps_out = kbps(p->st.bytes_out - p->rate_out[old], dt);
        }
    }
    p->rate_t[p->rate_at] = now;
    p->rate_in[p->rate_at] = p->st.bytes_in;
    p->rate_out[p->rate_at] = p->st.bytes_out;
    p->rate_at = (p->rate_at + 1) % RATE_SAMPLES;
    p->rate_n += p->rate_n < RATE_SAMPLES;
}

// Every poll after WELCOME: our link, then (while running and the link works) each slot.
static void watch_poll(ls_peer *p, uint64_t now)
{
    p->last_poll = now;
    watch_rates(p, now);
    const uint32_t me = p->def.slot;
    const uint64_t iv = p->def.interrupt_us;
    bool running = p->state == LS_PEER_RUNNING;
    if (!running && p->state != LS_PEER_REJOINING) { // finished or left: nothing to tell
        p->watching = p->st.interrupted = false;
        memset(p->quiet, 0, sizeof p->quiet);
        return;
    }
    if (iv && !p->st.interrupted && since(now, p->heard_at) >= iv) {
        p->st.interrupted = true;
        p->st.interruptions++;
        p->cut_at = p->heard_at;
        uint64_t silent = since(now, p->heard_at), limit = timeout_us(p);
        watch_emit(p, LS_PEER_EV_INTERRUPTED, me, silent < limit ? limit - silent : 0);
    }
    if (!running) {
        p->watching = false; // rejoining: the timers start again once we play
        return;
    }
    if (!p->watching) {
        p->watching = true;
        for (uint32_t k = 0; k < p->slots; k++) {
            p->input_at[k] = p->waited_at[k] = now;
            p->seen_have[k] = p->have[k];
            p->seen_gone[k] = p->gone[k];
            p->low[k] = p->armed[k] = false;
        }
    }
    uint32_t low = UINT32_MAX; // the lowest input frontier of a live slot, ours included
    bool moved[LS_NET_MAX_SLOTS];
    for (uint32_t k = 0; k < p->slots; k++) {
        moved[k] = p->have[k] > p->seen_have[k];
        if (moved[k] || p->gone[k] != p->seen_gone[k]) {
            p->input_at[k] = now; // new inputs, or a departure or return: its clock restarts
        }
        p->armed[k] = (p->armed[k] || moved[k]) && p->gone[k] == p->seen_gone[k];
        p->seen_have[k] = p->have[k];
        p->seen_gone[k] = p->gone[k];
        if (!p->gone[k] && p->have[k] < low) {
            low = p->have[k];
        }
    }
    for (uint32_t k = 0; k < p->slots; k++) {
        bool done = p->ticks && p->have[k] >= p->ticks, was_low = p->low[k];
        p->low[k] = !p->gone[k] && p->have[k] == low;
        if (p->low[k] && (!was_low || moved[k])) {
            p->waited_at[k] = now; // its silence counts from here
        }
        if (k == me || p->gone[k]) {
            continue;
        }
        if (p->quiet[k]) {
            if (moved[k] || done) {
                p->quiet[k] = false;
                watch_emit(p, LS_PEER_EV_RESUMED, k, since(now, p->quiet_at[k]));
            }
            continue;
        }
        uint64_t from = p->waited_at[k] > p->linked_at ? p->waited_at[k] : p->linked_at;
        if (iv && !p->st.interrupted && !done && p->armed[k] && p->low[k] &&
            p->heard_at >= from + iv) {
            p->quiet[k] = true;
            p->quiet_at[k] = p->waited_at[k];
            p->quiet_count[k]++;
            uint64_t silent = since(now, p->input_at[k]), limit = timeout_us(p);
            watch_emit(p, LS_PEER_EV_INTERRUPTED, k, silent < limit ? limit - silent : 0);
        }
    }
}

static void on_welcome(ls_peer *p, const ls_net_msg *m, uint64_t now)
{
    if (p->state != LS_PEER_JOINING || p->def.slot >= m->u.welcome.slots) {
        return;
    }
    p->own = calloc(W, m->u.welcome.input_size);
    if (!p->own) {
        return; // stay JOINING; the next WELCOME retries
    }
    p->welcome = *m;
    p->slots = m->u.welcome.slots;
    p->isz = m->u.welcome.input_size;
    p->delay = m->u.welcome.delay;
    p->rate = m->u.welcome.tick_rate;
    p->ticks = m->u.welcome.ticks;
    p->own_acked = p->delay;
    for (uint32_t k = 0; k < p->slots; k++) {
        p->have[k] = p->delay;
    }
    if (!create_core(p)) {
        free(p->own);
        p->own = NULL;
        return; // stay JOINING; the next WELCOME retries
    }
    p->origin = now;
    p->state = LS_PEER_RUNNING;
    if (p->def.restarted) {
        // An earlier process of ours may hold the slot (SPEC.md §17.10): say nothing for
        // the session's timeout, counted from this WELCOME (the relay heard our JOIN just
        // before; two JOIN periods more for a later JOIN and the way there), so the relay
        // times the slot out, then rejoin it. A slot already timed out costs the wait.
        uint32_t timeout_ms = m->u.welcome.timeout_ms ? m->u.welcome.timeout_ms : 3000;
        p->rj_hold = now + (uint64_t)timeout_ms * 1000 + 2u * (uint64_t)p->def.join_retry_us;
        p->state = LS_PEER_REJOINING;
        p->rj_known = false;
        p->rj_since = p->rj_hold;
        p->s_total = p->s_next = 0;
    }
    ls_peer_event ev = {LS_PEER_EV_WELCOME, p->def.slot, 0, 0, 0, 0, 0, 0};
    emit(p, &ev);
}

static void on_input(ls_peer *p, const ls_net_msg *m)
{
    uint32_t k = m->u.input.slot;
    if (k >= p->slots || k == p->def.slot || m->u.input.input_size != p->isz) {
        p->st.dropped++;
        return;
    }
    // Into the core (rollback: which compares them with what it predicted).
    for (uint32_t i = 0; i < m->u.input.count; i++) {
        uint32_t t = m->u.input.first_tick + i;
        p->st.duplicates += t < p->have[k];
        if (ls_rollback_add_input(p->rb, k, t, m->u.input.data + (size_t)i * p->isz) ==
            LS_ERR_OUT_OF_RANGE) {
            break; // beyond the input window: the relay sends it again
        }
    }
    p->have[k] = rb_have(p, k);
    p->ack_dirty = true;
}

static void on_ack(ls_peer *p, const ls_net_msg *m)
{
    if (m->u.ack.count != p->slots) {
        p->st.dropped++;
        return;
    }
    watch_ack(p, m);
    uint32_t mine = m->u.ack.input_next[p->def.slot], own_end = p->delay + p->produced;
    mine = mine < own_end ? mine : own_end;
    p->own_acked = mine > p->own_acked ? mine : p->own_acked;
    uint32_t c = m->u.ack.checksum_next < p->csum_final ? m->u.ack.checksum_next : p->csum_final;
    p->csum_acked = c > p->csum_acked ? c : p->csum_acked;
    if (p->def.mode == LS_PEER_ROLLBACK) {
        // Time sync: every slot's input frontier at the relay at one instant.
        int64_t slowest = INT64_MAX;
        for (uint32_t k = 0; k < p->slots; k++) {
            bool gone = p->gone[k] || (m->u.ack.disconnected >> k & 1u);
            if (k != p->def.slot && !gone && m->u.ack.input_next[k] < slowest) {
                slowest = m->u.ack.input_next[k];
            }
        }
        if (slowest != INT64_MAX) {
            int64_t ahead = (int64_t)m->u.ack.input_next[p->def.slot] - slowest;
            ahead = ahead > 100000 ? 100000 : ahead < -100000 ? -100000 : ahead;
            ls_rollback_set_frames_ahead(p->rb, (int32_t)ahead);
        }
    }
    // A timed-out slot k: while this ACK shows it gone (same outage: its input_next is
    // the disconnect tick we know), the relay's future return tick R is at least every
    // other slot's input_next here (SPEC.md §17.10), so k's empties are confirmed below.
    for (uint32_t k = 0; k < p->slots; k++) {
        if (!p->soft[k] || !p->gone[k] || !(m->u.ack.disconnected >> k & 1u) ||
            m->u.ack.input_next[k] != p->gone_tick[k]) {
            continue;
        }
        for (uint32_t j = 0; j < p->slots; j++) {
            if (j != k && m->u.ack.input_next[j] > p->empty_to[k]) {
                p->empty_to[k] = m->u.ack.input_next[j];
            }
        }
        rb_fill_empty(p, k);
    }
}

static void on_disconnect(ls_peer *p, const ls_net_msg *m, uint64_t now)
{
    uint32_t k = m->u.disconnect.slot;
    p->ack_dirty = true;
    if (k >= p->slots) {
        return;
    }
    if (k == p->def.slot) {
        if (m->u.disconnect.reason == LS_NET_REJOINED) {
            if (p->state == LS_PEER_REJOINING && m->u.disconnect.tick >= p->delay) {
                p->rj_tick = m->u.disconnect.tick;
                p->rj_known = true;
            }
            return;
        }
        if (p->state == LS_PEER_REJOINING && m->u.disconnect.reason == LS_NET_KICKED) {
            p->state = LS_PEER_LEFT; // the rejoin failed (no snapshot proved out in time)
            ls_peer_event ev = {
                LS_PEER_EV_DISCONNECTED, k, m->u.disconnect.tick, 0, LS_NET_KICKED, 0, 0, 0};
            emit(p, &ev);
            return;
        }
        if (p->state == LS_PEER_REJOINING ||
            (p->st.rejoins && m->u.disconnect.tick < p->st.rejoin_tick)) {
            return; // notices of our timeout still in flight, or of the one we came back from
        }
        if (p->state == LS_PEER_LEFT || p->state == LS_PEER_FINISHED) {
            return; // FINISHED: the relay's answer to our goodbye
        }
        if (p->state == LS_PEER_RUNNING && m->u.disconnect.reason == LS_NET_TIMEOUT &&
            p->def.rejoin) {
            p->state = LS_PEER_REJOINING;
            p->cookie = 0;
            p->rj_known = false;
            p->rj_since = now;
            p->s_total = p->s_next = 0;
            send_rejoin(p, now);
        } else {
            p->state = LS_PEER_LEFT;
        }
        ls_peer_event ev = {
            LS_PEER_EV_DISCONNECTED, k, m->u.disconnect.tick, 0, m->u.disconnect.reason, 0, 0, 0};
        emit(p, &ev);
        return;
    }
    if (m->u.disconnect.reason == LS_NET_REJOINED) {
        // Slot k is back from tick R: empty inputs in [gone_tick, R). A peer that never
        // saw it go gets those empties from the relay as ordinary inputs.
        uint32_t R = m->u.disconnect.tick;
        if (!p->gone[k] || R < p->gone_tick[k] || !p->soft[k]) {
            return;
        }
        // The empties of [d, R) are confirmed, the player's inputs follow.
        p->empty_to[k] = R > p->empty_to[k] ? R : p->empty_to[k];
        p->soft[k] = false;
        p->gone[k] = false;
        p->back_tick[k] = R;
        rb_fill_empty(p, k);
        ls_peer_event ev = {LS_PEER_EV_REJOINED, k, R, 0, 0, 0, 0, 0};
        emit(p, &ev);
        return;
    }
    // After our rejoin from the snapshot of T we hold no input of k below max(T, D): the
    // relay's re-announcement of a slot gone before T carries its departure tick d < T
    // (its inputs are empty from T on for us; the core starts them at its frontier).
    uint32_t reset_from = p->st.snapshot_tick > p->delay ? p->st.snapshot_tick : p->delay;
    bool reannounced = p->st.rejoins && p->have[k] == reset_from;
    if (p->gone[k] || (m->u.disconnect.tick < p->have[k] && !reannounced) ||
        m->u.disconnect.tick < p->back_tick[k]) {
        return; // known already, a tick before inputs we hold, or a stale notice of an outage
    }           // slot k came back from (cannot be otherwise: ignore)
    p->gone[k] = true;
    p->gone_tick[k] = m->u.disconnect.tick;
    if (m->u.disconnect.reason == LS_NET_TIMEOUT) {
        // It may come back: its empty inputs are confirmed tick by tick (relay ACKs, the
        // REJOINED tick), never open-ended, so no peer simulates (lockstep) or predicts
        // (rollback) across its return tick R before it knows R.
        p->soft[k] = true;
        p->empty_next[k] = p->empty_to[k] = m->u.disconnect.tick;
    } else {
        ls_rollback_disconnect(p->rb, k, m->u.disconnect.tick);
        p->have[k] = rb_have(p, k);
    }
    ls_peer_event ev = {
        LS_PEER_EV_DISCONNECTED, k, m->u.disconnect.tick, 0, m->u.disconnect.reason, 0, 0, 0};
    emit(p, &ev);
}

// ---- rejoin and late join (SPEC.md §17.10, §24.8) ----

static void send_state_ack(ls_peer *p, uint64_t now)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.state_ack.tick = p->s_tick;
    m.u.state_ack.total = p->s_total;
    m.u.state_ack.next = p->s_next;
    send_msg(p, &m, LS_NET_STATE_ACK);
    p->last_state_ack = now;
}

static void rejoin_finish(ls_peer *p, uint64_t now);

static void send_refusal(ls_peer *p, uint64_t now)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.proof.tick = p->s_tick;
    m.u.proof.source = p->proof_source;
    m.u.proof.kind = LS_NET_PROOF_REFUSED;
    m.u.proof.checksum = p->refused_sum;
    send_msg(p, &m, LS_NET_STATE_PROOF);
    p->last_refusal = now;
}

// The loaded snapshot's state is not the agreed one (a lying uploader, SPEC.md §17.10):
// say so, name its source, and wait for another (the transfer starts from byte 0).
static void refuse_snapshot(ls_peer *p, uint64_t got, uint64_t now)
{
    ls_peer_event ev = {
        LS_PEER_EV_SNAPSHOT_REFUSED, p->proof_source, p->s_tick, 0, 0, p->proof_sum, 0, 0};
    emit(p, &ev);
    p->st.snapshots_refused++;
    p->refusing = true;
    p->refused_sum = got;
    memcpy(p->refused_hash, p->s_hash, LS_NET_STATE_HASH_SIZE);
    send_refusal(p, now);
    p->s_total = p->s_next = 0;
    p->proof_known = false;
}

// The relay's proof of the snapshot of its tick (answer to our STATE_ACK of the whole).
static void on_proof(ls_peer *p, const ls_net_msg *m, uint64_t now)
{
    if (m->u.proof.kind == LS_NET_PROOF_REFUSED || !p->s_total || m->u.proof.tick != p->s_tick) {
        return;
    }
    p->proof_known = true;
    p->proof_tick = m->u.proof.tick;
    p->proof_kind = m->u.proof.kind;
    p->proof_source = m->u.proof.source;
    p->proof_sum = m->u.proof.checksum;
    rejoin_finish(p, now);
}

// The snapshot is whole and our return tick R is known: check the hash, load it,
// and play on from its tick T (our own inputs are empty up to R, sent from R on).
static void rejoin_finish(ls_peer *p, uint64_t now)
{
    if (!p->rj_known || !p->s_total || p->s_next != p->s_total || !p->proof_known ||
        p->proof_tick != p->s_tick) {
        return; // the proof comes in answer to our STATE_ACK of the whole snapshot
    }
    uint8_t hash[LS_NET_STATE_HASH_SIZE];
    crypto_generichash(hash, sizeof hash, p->sbuf, p->s_total, NULL, 0);
    uint32_t T = p->s_tick, R = p->rj_tick;
    bool hash_ok = memcmp(hash, p->s_hash, sizeof hash) == 0;
    if (!hash_ok || T > R || !p->def.cb.load(p->def.cb.user, T, p->sbuf, p->s_total)) {
        ls_peer_event ev = {LS_PEER_EV_STATE_ERROR, p->def.slot, T, 0, 0, 0, hash_ok ? 1u : 0u, 0};
        emit(p, &ev);
        p->s_next = 0; // fetch it again
        p->proof_known = false;
        send_state_ack(p, now);
        return;
    }
    if (p->proof_kind == LS_NET_PROOF_AGREED) {
        uint64_t c = p->def.cb.state_checksum(p->def.cb.user, T);
        if (c != p->proof_sum) {
            refuse_snapshot(p, c, now);
            return;
        }
    }
    // The core starts from the snapshot: our own inputs of [T, R) are the empty input,
    // the others' arrive from T on (the relay re-announces who is gone: we forget).
    ls_rollback_reset(p->rb, T);
    for (uint32_t k = 0; k < p->slots; k++) {
        p->have[k] = T > p->delay ? T : p->delay;
        p->gone[k] = p->soft[k] = false;
        p->back_tick[k] = 0;
        p->empty_next[k] = p->empty_to[k] = 0;
    }
    // Rollback: the core produces our input for present + D first, so when T + D > R our
    // inputs of [R, T + D) are the empty input too (sent to the relay as ours). Lockstep
    // produces from R on as its clock, set so that R - D is due now, reaches them.
    uint32_t me = p->def.slot;
    bool rollback = p->def.mode == LS_PEER_ROLLBACK;
    uint32_t own_to = rollback && T + p->delay > R ? T + p->delay : R;
    p->back_tick[me] = R;
    p->empty_next[me] = T > p->delay ? T : p->delay;
    p->empty_to[me] = own_to;
    rb_fill_empty(p, me);
    for (uint32_t t = R; t < own_to; t++) {
        memset(own_input(p, t), 0, p->isz);
    }
    p->produced = own_to - p->delay;
    p->have[me] = own_to;
    p->own_acked = R;
    p->csum_final = T;
    p->csum_acked = R; // the relay does not await our checksums below R
    // A clock that started late (a page's performance.now() counts from its load) may be
    // below the span: then the clock starts at R - D from now instead of going negative.
    uint64_t span = (uint64_t)(R - p->delay) * 1000000u / p->rate;
    p->origin = now >= span ? now - span : now;
    p->clock_base = now >= span ? 0 : R - p->delay;
    // Rollback: extra frames catch up to the clock (R - D) faster than real time (lockstep
    // simulates as fast as the inputs arrive).
    p->frames_done = R - p->delay;
    p->catching_up = rollback;
    p->state = LS_PEER_RUNNING;
    p->st.rejoins++;
    p->st.snapshot_tick = T;
    p->st.rejoin_tick = R;
    p->ack_dirty = true;
    free(p->sbuf);
    p->sbuf = NULL;
    ls_peer_event ev = {LS_PEER_EV_REJOINED, me, R, 0, 0, 0, T, 0};
    emit(p, &ev);
}

static void on_chunk(ls_peer *p, const ls_net_msg *m, uint64_t now)
{
    if (p->refusing && memcmp(p->refused_hash, m->u.state.hash, LS_NET_STATE_HASH_SIZE) != 0) {
        p->refusing = false; // another snapshot: the relay heard us
    }
    const uint32_t total = m->u.state.total, off = m->u.state.offset, len = m->u.state.len;
    if (!p->sbuf || p->s_tick != m->u.state.tick || p->s_total != total ||
        memcmp(p->s_hash, m->u.state.hash, LS_NET_STATE_HASH_SIZE) != 0) {
        uint8_t *b = realloc(p->sbuf, total);
        if (!b) {
            return;
        }
        p->sbuf = b;
        p->s_tick = m->u.state.tick;
        p->s_total = total;
        p->s_next = 0;
        p->proof_known = false;
        memcpy(p->s_hash, m->u.state.hash, LS_NET_STATE_HASH_SIZE);
    }
    if (off == p->s_next && off + len <= total) {
        memcpy(p->sbuf + off, m->u.state.data, len);
        p->s_next += len;
    }
    send_state_ack(p, now);
    rejoin_finish(p, now);
}

// The relay asks for our state of `tick` (STATE_ACK, total 0) or acknowledges our
// upload. Rollback: the core's saved state of a final tick (S_R, the others wait
// within W of R), copied as it is. Otherwise (lockstep, or a state the core no
// longer holds) we have the state of tick T only while the present is T and final
// (the others wait there for the rejoiner), saved once through the save callback.
static void on_upload_ack(ls_peer *p, const ls_net_msg *m, uint64_t now)
{
    const uint32_t tick = m->u.state_ack.tick;
    if (m->u.state_ack.total == 0) {
        if (p->up && p->up_tick == tick) { // asked again: the relay starts over from byte 0
            p->up_acked = p->up_sent = 0;
            p->up_last = 0;
            p->up_heard = now;
            return;
        }
        if (!p->def.cb.save) {
            return;
        }
        size_t cap = 64u << 10, n = 0;
        uint8_t *b = NULL;
        const uint8_t *saved = NULL;
        if (ls_rollback_saved_state(p->rb, tick, &saved, &n)) {
            b = n && n <= LS_NET_STATE_MAX ? malloc(n) : NULL;
            if (!b) {
                return;
            }
            memcpy(b, saved, n);
            cap = n;
        } else if (ls_rollback_present(p->rb) != tick || ls_rollback_final(p->rb) < tick) {
            return;
        }
        for (int tries = 0; tries < 2 && !saved; tries++) {
            uint8_t *nb = realloc(b, cap);
            if (!nb) {
                break;
            }
            b = nb;
            n = p->def.cb.save(p->def.cb.user, tick, b, cap);
            if (n <= cap || n > LS_NET_STATE_MAX) {
                break;
            }
            cap = n;
        }
        if (!b || n == 0 || n > cap || n > LS_NET_STATE_MAX) {
            free(b);
            return;
        }
        free(p->up);
        p->up = b;
        p->up_tick = tick;
        p->up_total = (uint32_t)n;
        p->up_acked = p->up_sent = 0;
        p->up_last = 0;
        p->up_heard = now;
        crypto_generichash(p->up_hash, sizeof p->up_hash, b, n, NULL, 0);
        return;
    }
    if (p->up && tick == p->up_tick && m->u.state_ack.total == p->up_total) {
        // The relay's word on what it holds, even below what it said before: it keeps only
        // in-order bytes and starts over when it asks again or takes a new uploader.
        uint32_t said = m->u.state_ack.next < p->up_sent ? m->u.state_ack.next : p->up_sent;
        p->up_acked = said;
        p->up_heard = now;
        if (p->up_acked == p->up_total) {
            free(p->up);
            p->up = NULL;
        }
    }
}

static void send_chunk(void *user, ls_net_msg *m)
{
    send_msg(user, m, LS_NET_STATE_CHUNK);
}

static void send_upload(ls_peer *p, uint64_t now)
{
    if (!p->up) {
        return;
    }
    uint32_t timeout_ms = p->welcome.u.welcome.timeout_ms ? p->welcome.u.welcome.timeout_ms : 3000;
    if (now - p->up_heard > (uint64_t)timeout_ms * 1000) {
        free(p->up); // the relay has said nothing about it for a timeout: it took another
        p->up = NULL;
        return;
    }
    ls_net_state_out out = {p->up_tick, p->up_total, p->up, p->up_hash};
    ls_net_state_progress at = {&p->up_acked, &p->up_sent, &p->up_last};
    ls_net_state_send_(&out, at, now, p->def.resend_us, send_chunk, p);
}

static void on_rejoining(ls_peer *p, const ls_net_msg *m, uint64_t now)
{
    if (now < p->rj_hold) {
        return; // restarted, waiting: even a PONG would keep the slot alive at the relay
    }
    switch (m->h.type) {
    case LS_NET_CHALLENGE:
        p->cookie = m->u.cookie;
        send_rejoin(p, now);
        break;
    case LS_NET_DISCONNECT:
        if (m->u.disconnect.slot == p->def.slot) {
            on_disconnect(p, m, now);
            rejoin_finish(p, now);
        }
        break;
    case LS_NET_STATE_CHUNK:
        on_chunk(p, m, now);
        break;
    case LS_NET_STATE_PROOF:
        on_proof(p, m, now);
        break;
    case LS_NET_PING: {
        ls_net_msg pong = *m;
        send_msg(p, &pong, LS_NET_PONG);
        break;
    }
    default: // inputs and acks come again once we have loaded the snapshot
        break;
    }
}

static void poll_rejoining(ls_peer *p, uint64_t now)
{
    if (now < p->rj_hold) {
        return; // restarted: silent until the relay timed our old process out
    }
    uint32_t timeout_ms = p->welcome.u.welcome.timeout_ms ? p->welcome.u.welcome.timeout_ms : 3000;
    if (!p->rj_known && now - p->rj_since > 2u * (uint64_t)timeout_ms * 1000) {
        p->state = LS_PEER_LEFT; // refused (window over, or the slot left): give up
        return;
    }
    if (!p->rj_known && now - p->last_join >= p->def.join_retry_us) {
        send_rejoin(p, now);
    }
    if (p->s_total && now - p->last_state_ack >= p->def.resend_us) {
        send_state_ack(p, now);
    }
    if (p->refusing && now - p->last_refusal >= p->def.resend_us) {
        send_refusal(p, now);
    }
    if (now - p->last_ping >= p->def.ping_interval_us) {
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        m.u.ping.time = now;
        m.u.ping.seq = ++p->ping_seq;
        send_msg(p, &m, LS_NET_PING);
        p->last_ping = now;
    }
}

// The relay's verdict on a tick whose checksums disagree (SPEC.md §17.7): a majority
// named `slots`, or the tick is disputed (nobody named).
static void on_desync(ls_peer *p, const ls_net_msg *m)
{
    bool disputed = m->u.desync.flags & LS_NET_DESYNC_DISPUTED;
    if (disputed) {
        p->st.disputes++;
    } else if (p->st.desyncs++ == 0) {
        p->st.first_desync = m->u.desync.tick;
    }
    p->st.named += !disputed && (m->u.desync.slots >> p->def.slot & 1u);
    ls_peer_event ev = {disputed ? LS_PEER_EV_DISPUTED : LS_PEER_EV_DESYNC,
                        0,
                        m->u.desync.tick,
                        m->u.desync.slots,
                        0,
                        m->u.desync.expected,
                        0,
                        0};
    emit(p, &ev);
}

// Verify a datagram from the relay: header, session and slot, tag, replay window,
// body, in that order; nothing in it is used before all pass. Each failure is counted.
static bool accept(ls_peer *p, const uint8_t *data, size_t len, ls_net_msg *m)
{
    ls_net_header h;
    if (ls_net_decode_header(data, len, &h, NULL) != LS_OK || h.session != p->def.session ||
        h.slot != p->def.slot) {
        p->st.malformed++;
        return false;
    }
    if (!ls_net_auth_verify_(data, len, p->def.key, LS_NET_TO_PEER)) {
        p->st.bad_mac++;
        return false;
    }
    ls_net_fresh fresh = ls_net_replay_check_(&p->rx, h.seq);
    if (fresh != LS_NET_FRESH) {
        p->st.replayed += fresh == LS_NET_REPLAYED;
        p->st.stale += fresh == LS_NET_STALE;
        return false;
    }
    ls_net_replay_accept_(&p->rx, h.seq);
    if (ls_net_decode(data, len, m, NULL) != LS_OK) {
        p->st.malformed++; // authentic but undecodable: a relay bug, never acted on
        return false;
    }
    return true;
}

void ls_peer_receive(ls_peer *p, const uint8_t *data, size_t len, uint64_t now)
{
    ls_net_msg m;
    if (!accept(p, data, len, &m)) {
        p->st.dropped++;
        return;
    }
    p->st.packets_in++;
    p->st.bytes_in += len;
    watch_heard(p, now);
    if (p->state == LS_PEER_JOINING) {
        if (m.h.type == LS_NET_CHALLENGE) {
            p->cookie = m.u.cookie;
            send_join(p, now);
        } else if (m.h.type == LS_NET_WELCOME) {
            on_welcome(p, &m, now);
        }
        return;
    }
    if (p->state == LS_PEER_LEFT) {
        return;
    }
    if (p->state == LS_PEER_REJOINING) {
        on_rejoining(p, &m, now);
        return;
    }
    switch (m.h.type) {
    case LS_NET_INPUT:
        on_input(p, &m);
        break;
    case LS_NET_ACK:
        on_ack(p, &m);
        break;
    case LS_NET_DESYNC:
        on_desync(p, &m);
        break;
    case LS_NET_DISCONNECT:
        on_disconnect(p, &m, now);
        break;
    case LS_NET_STATE_ACK:
        on_upload_ack(p, &m, now);
        break;
    case LS_NET_PING: {
        ls_net_msg pong = m;
        send_msg(p, &pong, LS_NET_PONG);
        break;
    }
    case LS_NET_PONG:
        if (m.u.ping.time <= now && now - m.u.ping.time < 60000000u) {
            uint32_t rtt = (uint32_t)(now - m.u.ping.time);
            p->st.rtt_us = p->st.rtt_us ? (uint32_t)(((uint64_t)p->st.rtt_us * 7 + rtt) / 8) : rtt;
        }
        break;
    default: // JOIN, CHALLENGE, WELCOME, CHECKSUM are not for a running peer
        break;
    }
}

// ---- the ticks: lockstep (SPEC.md §17.6) and rollback (§24) ----

// Clock ticks due at now: from the WELCOME (or the rejoin that set origin and clock_base).
static uint64_t clock_ticks(const ls_peer *p, uint64_t now)
{
    return p->clock_base + (now > p->origin ? (now - p->origin) * p->rate / 1000000u : 0);
}

// Lockstep time sync: if the other peers' inputs run ahead of ours, our clock is
// late (we joined later); move its origin back one tick so we catch up gradually.
static void time_sync(ls_peer *p)
{
    uint32_t next = p->delay + p->produced, frontier = UINT32_MAX;
    for (uint32_t k = 0; k < p->slots; k++) {
        if (k != p->def.slot && !p->gone[k] && p->have[k] < frontier) {
            frontier = p->have[k];
        }
    }
    // Only when we could produce more now: a peer held back by its lead bound
    // is waiting for inputs, not late, and must not run its clock away.
    if (frontier != UINT32_MAX && frontier > next + 1 &&
        p->produced < ls_rollback_present(p->rb) + p->def.max_lead) {
        if (p->origin >= 1000000u / p->rate) {
            p->origin -= 1000000u / p->rate;
        } else {
            p->clock_base++; // an early clock: the same tick, without wrapping around
        }
        p->st.clock_shifts++;
    }
}

// Lockstep: our inputs as the clock reaches them, within the lead bound and the
// rings of what the relay has not acknowledged; into the core like anyone's.
static bool produce(ls_peer *p, uint64_t now)
{
    uint64_t clock = clock_ticks(p, now);
    uint32_t simulated = ls_rollback_present(p->rb);
    bool any = false;
    for (;;) {
        uint32_t t = p->delay + p->produced;
        if ((p->ticks && t >= p->ticks) || p->produced > clock ||
            p->produced >= simulated + p->def.max_lead || t >= p->own_acked + W ||
            t >= simulated + W) {
            return any;
        }
        uint8_t *buf = own_input(p, t);
        memset(buf, 0, p->isz);
        p->def.cb.local_input(p->def.cb.user, t, buf, p->isz);
        if (ls_rollback_add_input(p->rb, p->def.slot, t, buf) != LS_OK) {
            return any; // cannot be (t is inside the core's window): produce it again later
        }
        p->produced++;
        p->have[p->def.slot] = t + 1;
        any = true;
    }
}

// Lockstep: simulate every tick whose inputs are all known (the core at
// max_prediction 0), up to the ring of checksums the relay has not acknowledged.
static bool advance(ls_peer *p)
{
    bool any = false;
    for (;;) {
        uint32_t t = ls_rollback_present(p->rb);
        if ((p->ticks && t >= p->ticks) || t >= p->csum_acked + W) {
            return any;
        }
        if (ls_rollback_confirmed(p->rb) <= t) {
            p->st.stalls++;
            return any;
        }
        ls_rollback_advance(p->rb);
        any = true;
    }
}

static bool lockstep_frames(ls_peer *p, uint64_t now)
{
    time_sync(p);
    bool new_input = produce(p, now);
    advance(p);
    return produce(p, now) || new_input; // advancing may have lifted the lead bound
}

// Rollback mode: one core frame per clock tick due. Our unacknowledged inputs
// and checksums live in W-tick rings, so frames also stop (and are lost, like
// waiting ones) while the relay is that far behind in acknowledging them.
// Returns whether new inputs were produced.
static bool rollback_frames(ls_peer *p, uint64_t now)
{
    uint64_t clock = clock_ticks(p, now);
    uint32_t produced = p->produced;
    for (uint32_t extra = 0; p->catching_up && extra < 64; extra++) {
        uint32_t present = ls_rollback_present(p->rb);
        if (present >= p->frames_done || ls_rollback_advance(p->rb) != LS_ROLLBACK_ADVANCED) {
            p->catching_up = present < p->frames_done;
            break;
        }
    }
    while (p->frames_done <= clock) {
        uint32_t present = ls_rollback_present(p->rb);
        if ((uint64_t)present + p->delay + 1 >= (uint64_t)p->own_acked + W ||
            (uint64_t)present + 1 >= (uint64_t)p->csum_acked + W) {
            p->st.stalls++;
            p->frames_done = clock + 1;
            break;
        }
        ls_rollback_advance(p->rb);
        p->frames_done++;
    }
    return p->produced != produced;
}

// The core's new final checksums (confirmed ticks, corrections done) into our ring
// for the relay. Returns whether there were any.
static bool collect_checksums(ls_peer *p)
{
    bool any = false;
    for (uint32_t f = ls_rollback_final(p->rb); p->csum_final < f; p->csum_final++) {
        uint64_t c = 0;
        ls_rollback_checksum(p->rb, p->csum_final, &c);
        p->csum[p->csum_final % W] = c;
        p->last_csum = c;
        any = true;
    }
    return any;
}

// force: send our last input again even if acknowledged (the relay answers every INPUT
// with an ACK, which confirms a timed-out slot's empty inputs in rollback mode).
static void send_inputs(ls_peer *p, uint64_t now, bool force)
{
    uint32_t from = p->own_acked, to = p->delay + p->produced;
    if (from >= to && force && to > p->delay) {
        from = to - 1;
    }
    if (from >= to) {
        return;
    }
    uint32_t n = to - from, cap = batch_cap(p->isz);
    n = n < cap ? n : cap;
    uint8_t data[LS_NET_MAX_DATAGRAM];
    for (uint32_t i = 0; i < n; i++) {
        memcpy(data + (size_t)i * p->isz, own_input(p, from + i), p->isz);
    }
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.input.first_tick = from;
    m.u.input.count = (uint16_t)n;
    m.u.input.input_size = (uint8_t)p->isz;
    m.u.input.slot = (uint8_t)p->def.slot;
    m.u.input.data = data;
    send_msg(p, &m, LS_NET_INPUT);
    p->last_input_send = now;
}

static void send_checksums(ls_peer *p, uint64_t now)
{
    uint32_t from = p->csum_acked, to = p->csum_final;
    if (from >= to) {
        return;
    }
    uint32_t n = to - from;
    n = n < LS_NET_MAX_BATCH ? n : LS_NET_MAX_BATCH;
    uint8_t data[8 * LS_NET_MAX_BATCH];
    for (uint32_t i = 0; i < n; i++) {
        ls_put_u64le(data + 8 * i, p->csum[(from + i) % W]);
    }
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.checksum.first_tick = from;
    m.u.checksum.count = (uint16_t)n;
    m.u.checksum.data = data;
    send_msg(p, &m, LS_NET_CHECKSUM);
    p->last_csum_send = now;
}

static void send_ack(ls_peer *p, uint64_t now)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.ack.count = (uint8_t)p->slots;
    for (uint32_t k = 0; k < p->slots; k++) {
        m.u.ack.input_next[k] = p->have[k];
        if (p->gone[k]) {
            m.u.ack.disconnected |= (uint16_t)(1u << k);
        }
    }
    send_msg(p, &m, LS_NET_ACK);
    p->last_ack_send = now;
    p->ack_dirty = false;
}

// DISCONNECT(slot = ours, LEFT, tick = one past our last own input), three times: nothing
// acknowledges a goodbye (SPEC.md §17.8).
static void say_goodbye(ls_peer *p)
{
    for (int i = 0; i < 3; i++) {
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        m.u.disconnect.tick = p->delay + p->produced;
        m.u.disconnect.reason = LS_NET_LEFT;
        m.u.disconnect.slot = (uint8_t)p->def.slot;
        send_msg(p, &m, LS_NET_DISCONNECT);
    }
}

// Finished (SPEC.md §17.8): the relay holds everything of ours and we hold everything of
// the match, so we say goodbye at once; the relay releases the slot without ls_peer_leave.
static void check_finished(ls_peer *p)
{
    uint32_t done = p->csum_final;
    if (p->state == LS_PEER_RUNNING && p->ticks && done >= p->ticks && p->csum_acked >= p->ticks &&
        p->own_acked >= p->ticks) {
        p->state = LS_PEER_FINISHED;
        say_goodbye(p);
        ls_peer_event ev = {LS_PEER_EV_FINISHED, p->def.slot, done, 0, 0, 0, 0, 0};
        emit(p, &ev);
    }
}

void ls_peer_poll(ls_peer *p, uint64_t now)
{
    if (p->state == LS_PEER_JOINING) {
        if (!p->joined_once || now - p->last_join >= p->def.join_retry_us) {
            p->joined_once = true;
            send_join(p, now);
        }
        return;
    }
    watch_poll(p, now);
    if (p->state == LS_PEER_REJOINING) {
        poll_rejoining(p, now);
        return;
    }
    if (p->state != LS_PEER_RUNNING) {
        return;
    }
    for (uint32_t k = 0; k < p->slots; k++) {
        if (p->empty_next[k] < p->empty_to[k]) {
            rb_fill_empty(p, k);
        }
    }
    bool new_input =
        p->def.mode == LS_PEER_ROLLBACK ? rollback_frames(p, now) : lockstep_frames(p, now);
    bool new_csum = collect_checksums(p);
    bool resend = now - p->last_input_send >= p->def.resend_us, soft = false;
    for (uint32_t k = 0; k < p->slots; k++) {
        soft |= p->soft[k] && p->gone[k];
    }
    if (new_input || resend) {
        send_inputs(p, now, soft && resend);
    }
    if (new_csum || now - p->last_csum_send >= p->def.resend_us) {
        send_checksums(p, now);
    }
    if (p->ack_dirty || now - p->last_ack_send >= 5u * p->def.resend_us) {
        send_ack(p, now);
    }
    send_upload(p, now);
    if (now - p->last_ping >= p->def.ping_interval_us) {
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        m.u.ping.time = now;
        m.u.ping.seq = ++p->ping_seq;
        send_msg(p, &m, LS_NET_PING);
        p->last_ping = now;
    }
    check_finished(p);
}

void ls_peer_leave(ls_peer *p)
{
    if (p->state == LS_PEER_LEFT || p->state == LS_PEER_FINISHED) {
        return; // a finished peer said goodbye as it finished
    }
    say_goodbye(p);
    p->state = LS_PEER_LEFT;
}

bool ls_peer_next_datagram(ls_peer *p, ls_net_datagram *out)
{
    return ls_net_outbox_pop_(&p->out, out);
}

ls_peer_state ls_peer_state_get(const ls_peer *p)
{
    return p->state;
}

uint32_t ls_peer_ticks(const ls_peer *p)
{
    return p->rb ? ls_rollback_present(p->rb) : 0;
}

uint64_t ls_peer_last_checksum(const ls_peer *p)
{
    return p->last_csum;
}

ls_net_msg ls_peer_welcome(const ls_peer *p)
{
    return p->welcome;
}

ls_peer_stats ls_peer_stats_get(const ls_peer *p)
{
    ls_peer_stats st = p->st;
    if (p->rb && p->def.mode == LS_PEER_ROLLBACK) {
        ls_rollback_stats r = ls_rollback_stats_get(p->rb);
        st.frames = r.frames;
        st.rollbacks = r.rollbacks;
        st.resimulated = r.resimulated;
        st.max_resim_frame = r.max_resim_frame;
        st.max_rollback = r.max_rollback;
        st.predicted = r.predicted;
        st.predicted_hits = r.predicted_hits;
        st.waits = r.waits;
        st.time_sync_skips = r.time_sync_skips;
        st.frames_ahead = r.frames_ahead;
    }
    st.send_queue = p->out.count;
    uint32_t own_end = p->delay + p->produced;
    st.unacked_inputs = p->rb && own_end > p->own_acked ? own_end - p->own_acked : 0;
    return st;
}

ls_peer_remote_stats ls_peer_remote_stats_get(const ls_peer *p, uint32_t slot)
{
    ls_peer_remote_stats r;
    memset(&r, 0, sizeof r);
    if (!p->rb || slot >= p->slots) {
        return r;
    }
    const bool mine = slot == p->def.slot;
    r.frontier = p->have[slot];
    r.relay_frontier = mine ? p->own_acked : p->relay_has[slot];
    int64_t behind =
        (int64_t)ls_rollback_present(p->rb) - ((int64_t)p->have[slot] - (int64_t)p->delay);
    r.frames_behind = (int32_t)(behind < INT32_MIN   ? INT32_MIN
                                : behind > INT32_MAX ? INT32_MAX
                                                     : behind);
    r.since_input_us = p->watching ? since(p->last_poll, p->input_at[slot]) : 0;
    r.interrupted = mine ? p->st.interrupted : p->quiet[slot];
    r.gone = mine ? p->state == LS_PEER_LEFT || p->state == LS_PEER_REJOINING : p->gone[slot];
    r.reason = p->gone_reason[slot];
    r.gone_tick = p->gone_at_tick[slot];
    r.rejoins = p->back_count[slot];
    r.rejoin_tick = mine ? p->st.rejoin_tick : p->back_tick[slot];
    r.interruptions = mine ? p->st.interruptions : p->quiet_count[slot];
    return r;
}

bool ls_peer_rejoins(const ls_peer *p)
{
    return p->def.rejoin == LS_PEER_REJOIN_ON;
}

uint32_t ls_peer_predicted(const ls_peer *p)
{
    return p->predicted;
}

uint32_t ls_peer_confirmed(const ls_peer *p)
{
    if (!p->rb) {
        return 0;
    }
    uint32_t c = ls_rollback_confirmed(p->rb);
    return p->ticks && c > p->ticks ? p->ticks : c;
}

bool ls_peer_confirmed_input(const ls_peer *p, uint32_t slot, uint32_t tick, uint8_t *out)
{
    if (!p->rb || !out || slot >= p->slots || (p->ticks && tick >= p->ticks)) {
        return false;
    }
    return ls_rollback_input(p->rb, slot, tick, out);
}
