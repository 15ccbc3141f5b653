// SPDX-License-Identifier: MIT
// The relay state machine (SPEC.md §17 "Relay protocol"). Everything is driven by
// ls_relay_receive and ls_relay_poll; outputs are queued datagrams and events.
//
// Trust: a datagram is acted on only after its header decodes, its tag verifies
// under its slot's key, its sequence number is fresh in the slot's replay window
// and (but for JOIN) it comes from the slot's verified address. Acknowledgements
// are hints bounded by what was really sent: the relay keeps re-sending every
// input a peer has not confirmed, so no single datagram can stop a match; and a
// peer whose acknowledgements stay behind the final ticks (they hold the ring for
// everyone) is kicked after timeout_ms, so no peer's claims can either.
//
// This file owns the relay and its sessions (creation, credentials, the public
// getters), the players' match (JOIN and cookies, inputs and their fan-out and
// re-sending, ACKs, checksums, final ticks and desyncs, disconnects, pings:
// SPEC.md §17.3-§17.9; finalize also writes the spectators' history rows), and the
// one receive dispatch and poll loop. That loop hands two concerns to files of
// their own, because each is a protocol with its own messages and timers layered
// on the players' one: relay_rejoin.c, a slot that comes back (§17.10 "Reconnect
// and late players"), and relay_spectator.c, those who watch (§17.10). The layout
// they share and the functions called across files (named ls_relay_*_) are in
// relay_internal.h.
#include "ls/net_relay.h"

#include "relay_internal.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

ls_relay_def ls_default_relay_def(void)
{
    ls_relay_def d = {64, 2000, 400, 20000, 250000, 10000000, 65536, 256};
    return d;
}

ls_session_def ls_default_session_def(void)
{
    ls_session_def d = {4, 60, 1, 3, 0, 3000, 30000, 4, 1024, 256u << 10, 30000};
    return d;
}

ls_relay *ls_relay_create(const ls_relay_def *def, ls_error *err)
{
    if (!def || def->max_sessions < 1 || def->max_sessions > 65536 || def->rate_limit_pps < 1 ||
        def->rate_burst < 1 || def->resend_us < 1000 || def->ping_interval_us < 1000 ||
        def->cookie_period_us < 1000000) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "%s",
                     !def ? "no relay definition"
                     : def->max_sessions < 1 || def->max_sessions > 65536
                         ? "max_sessions must be 1..65536"
                     : def->rate_limit_pps < 1 || def->rate_burst < 1
                         ? "rate_limit_pps and rate_burst must be positive"
                     : def->cookie_period_us < 1000000
                         ? "cookie_period_us must be at least 1000000"
                         : "resend_us and ping_interval_us must be at least 1000");
        return NULL;
    }
    ls_relay *r = calloc(1, sizeof *r);
    if (!r) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    r->def = *def;
    r->sessions = calloc(def->max_sessions, sizeof *r->sessions);
    if (!r->sessions || ls_net_ratelimit_init_(&r->limit, ls_net_ratelimit_size_(def->max_sessions),
                                               def->rate_limit_pps, def->rate_burst) != LS_OK) {
        ls_relay_destroy(r);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory for %u sessions", def->max_sessions);
        return NULL;
    }
    if (!ls_net_auth_init_()) {
        ls_relay_destroy(r);
        ls_error_set(err, LS_ERR_IO, "libsodium failed to initialise");
        return NULL;
    }
    crypto_shorthash_keygen(r->secret);
    ls_error_clear(err);
    ls_net_outbox_init_(&r->out, def->max_outbox);
    return r;
}

void ls_relay_destroy(ls_relay *r)
{
    if (!r) {
        return;
    }
    for (uint32_t i = 0; r->sessions && i < r->session_count; i++) {
        free(r->sessions[i].inputs);
        free(r->sessions[i].csum);
        free(r->sessions[i].hist);
        free(r->sessions[i].snap);
        free(r->sessions[i].up);
        for (uint32_t k = 0; k < LS_NET_MAX_SLOTS; k++) {
            ls_net_auth_wipe_(r->sessions[i].slot[k].key, LS_NET_KEY_SIZE);
            ls_net_auth_wipe_(r->sessions[i].spec[k].key, LS_NET_KEY_SIZE);
        }
    }
    ls_net_auth_wipe_(r->secret, sizeof r->secret);
    free(r->sessions);
    ls_net_ratelimit_free_(&r->limit);
    ls_net_outbox_free_(&r->out);
    free(r);
}

static session_st *session_of(const ls_relay *r, uint32_t id)
{
    if (id < 1 || id > r->session_count || !r->sessions[id - 1].used) {
        return NULL;
    }
    return &r->sessions[id - 1];
}

static ls_result session_make(ls_relay *r, const ls_session_def *def, uint64_t now_us,
                              uint32_t index);

ls_result ls_relay_session_create(ls_relay *r, const ls_session_def *def, uint64_t now_us,
                                  uint32_t *id)
{
    if (r->session_count >= r->def.max_sessions) {
        return LS_ERR_CAPACITY;
    }
    uint32_t index = r->session_count;
    ls_result res = session_make(r, def, now_us, index);
    if (res == LS_OK) {
        *id = index + 1;
    }
    return res;
}

ls_result ls_relay_session_create_at(ls_relay *r, const ls_session_def *def, uint64_t now_us,
                                     uint32_t id)
{
    if (id < 1 || id > r->def.max_sessions) {
        return id < 1 ? LS_ERR_INVALID_ARGUMENT : LS_ERR_CAPACITY;
    }
    if (id <= r->session_count && r->sessions[id - 1].used) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    return session_make(r, def, now_us, id - 1);
}

static ls_result session_make(ls_relay *r, const ls_session_def *def, uint64_t now_us,
                              uint32_t index)
{
    if (!def || def->slots < 2 || def->slots > LS_NET_MAX_SLOTS || def->tick_rate < 1 ||
        def->tick_rate > 1000 || def->input_size < 1 || def->input_size > LS_NET_MAX_INPUT_SIZE ||
        def->delay > LS_NET_MAX_DELAY || def->timeout_ms < 10 ||
        def->spectators > LS_NET_MAX_SLOTS || def->history < 64 || def->history > 65536 ||
        def->state_max > LS_NET_STATE_MAX) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    session_st *s = &r->sessions[index];
    memset(s, 0, sizeof *s);
    s->inputs = calloc((size_t)def->slots * W, def->input_size);
    s->csum = calloc((size_t)def->slots * W, sizeof *s->csum);
    s->row_size = LS_NET_CONFIRMED_ROW(def->slots, def->input_size);
    s->hist = def->spectators ? calloc(def->history, s->row_size) : NULL;
    bool want_snap = (def->spectators || def->rejoin_ms) && def->state_max;
    s->snap = want_snap ? malloc(def->state_max) : NULL;
    bool want_up = def->rejoin_ms && def->state_max;
    s->up = want_up ? malloc(def->state_max) : NULL;
    if (!s->inputs || !s->csum || (def->spectators && !s->hist) || (want_snap && !s->snap) ||
        (want_up && !s->up)) {
        free(s->up);
        s->up = NULL;
        free(s->inputs);
        free(s->csum);
        free(s->hist);
        free(s->snap);
        s->inputs = NULL;
        s->csum = NULL;
        s->hist = NULL;
        s->snap = NULL;
        return LS_ERR_NO_MEMORY;
    }
    s->def = *def;
    s->created = now_us;
    for (uint32_t k = 0; k < def->slots; k++) {
        slot_st *p = &s->slot[k];
        ls_net_auth_new_key_(p->key);
        p->input_next = def->delay;
        for (uint32_t j = 0; j < LS_NET_MAX_SLOTS; j++) {
            p->peer_has[j] = def->delay;
            p->peer_said[j] = def->delay;
            p->sent_next[j] = def->delay;
        }
    }
    for (uint32_t k = 0; k < def->spectators; k++) {
        ls_net_auth_new_key_(s->spec[k].key);
    }
    s->used = true;
    if (index >= r->session_count) {
        r->session_count = index + 1; // ids skipped below stay unused (session_of: NULL)
    }
    return LS_OK;
}

ls_result ls_relay_session_credential(const ls_relay *r, uint32_t id, uint32_t slot,
                                      ls_net_credential *out)
{
    const session_st *s = session_of(r, id);
    if (!s || slot >= s->def.slots || !out) {
        return LS_ERR_NOT_FOUND;
    }
    memset(out, 0, sizeof *out);
    out->session = id;
    out->slot = (uint8_t)slot;
    out->role = LS_NET_ROLE_PLAYER;
    memcpy(out->key, s->slot[slot].key, LS_NET_KEY_SIZE);
    return LS_OK;
}

ls_result ls_relay_session_spectator_credential(const ls_relay *r, uint32_t id, uint32_t index,
                                                ls_net_credential *out)
{
    const session_st *s = session_of(r, id);
    if (!s || index >= s->def.spectators || !out) {
        return LS_ERR_NOT_FOUND;
    }
    memset(out, 0, sizeof *out);
    out->session = id;
    out->slot = (uint8_t)index;
    out->role = LS_NET_ROLE_SPECTATOR;
    memcpy(out->key, s->spec[index].key, LS_NET_KEY_SIZE);
    return LS_OK;
}

ls_result ls_relay_session_put_state(ls_relay *r, uint32_t id, uint32_t tick, const uint8_t *data,
                                     size_t len)
{
    session_st *s = session_of(r, id);
    if (!s || !s->snap) {
        return LS_ERR_NOT_FOUND;
    }
    if (len > s->def.state_max) {
        return LS_ERR_CAPACITY;
    }
    if (!data || len < 1 || tick > s->final_next || tick < ls_relay_hist_base_(s)) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    s->quiet_until = 0;
    memcpy(s->snap, data, len);
    s->snap_len = (uint32_t)len;
    s->snap_tick = tick;
    crypto_generichash(s->snap_hash, sizeof s->snap_hash, s->snap, len, NULL, 0);
    s->snap_ready = true;
    s->snap_source = LS_NET_SOURCE_HOST;
    return LS_OK;
}

ls_result ls_relay_session_set_recorder(ls_relay *r, uint32_t id, const ls_relay_recorder *rec)
{
    session_st *s = session_of(r, id);
    if (!s || !rec) {
        return LS_ERR_NOT_FOUND;
    }
    s->rec = *rec;
    s->quiet_until = 0;
    return LS_OK;
}

bool ls_relay_session_done(const ls_relay *r, uint32_t id)
{
    const session_st *s = session_of(r, id);
    return s && s->done;
}

bool ls_relay_session_idle(const ls_relay *r, uint32_t id)
{
    const session_st *s = session_of(r, id);
    if (!s || !s->done) {
        return false;
    }
    for (uint32_t k = 0; k < s->def.slots; k++) {
        if (!s->slot[k].gone) {
            return false;
        }
    }
    for (uint32_t k = 0; k < s->def.spectators; k++) { // watching spectators get the end too
        const spec_st *v = &s->spec[k];
        if (v->bound && !v->dropped && v->next < s->final_next) {
            return false;
        }
    }
    return true;
}

uint32_t ls_relay_session_final_ticks(const ls_relay *r, uint32_t id)
{
    const session_st *s = session_of(r, id);
    return s ? s->final_next : 0;
}

void ls_relay_emit_(ls_relay *r, const ls_relay_event *ev)
{
    if (r->ev_count == EVENTS_MAX) { // drop the oldest: events are for logs, state is in stats
        r->ev_head = (r->ev_head + 1) % EVENTS_MAX;
        r->ev_count--;
    }
    r->events[(r->ev_head + r->ev_count) % EVENTS_MAX] = *ev;
    r->ev_count++;
}

// Seal m with the recipient slot's key (header slot = recipient) and queue it to addr.
bool ls_relay_seal_to_(ls_relay *r, slot_st *p, uint32_t to, const ls_net_addr *addr, ls_net_msg *m,
                       size_t *len)
{
    *len = ls_net_outbox_send_(&r->out, addr, m, LS_NET_ROLE_PLAYER, m->h.session, to, &p->tx_seq,
                               p->key, LS_NET_TO_PEER);
    return *len != 0;
}

void ls_relay_send_to_(ls_relay *r, session_st *s, uint32_t to, ls_net_msg *m)
{
    slot_st *p = &s->slot[to];
    size_t len = 0;
    if (ls_relay_seal_to_(r, p, to, &p->addr, m, &len)) {
        r->st.packets_out++;
        r->st.bytes_out += len;
        p->st.packets_out++;
        p->st.bytes_out += len;
    } else {
        r->st.outbox_dropped++;
    }
}

void ls_relay_header_(ls_net_msg *m, uint8_t type, uint32_t session)
{
    memset(m, 0, sizeof *m);
    m->h.type = type;
    m->h.session = session;
}

// Inputs below D, and those of a gone slot from its disconnect tick, are empty.
static const uint8_t *input_at(const session_st *s, uint32_t k, uint32_t t)
{
    static const uint8_t empty[LS_NET_MAX_INPUT_SIZE];
    const slot_st *p = &s->slot[k];
    if (t < s->def.delay || (p->gone && t >= p->gone_tick) || (t >= p->gap_from && t < p->gap_to)) {
        return empty;
    }
    return s->inputs + ((size_t)k * W + t % W) * s->def.input_size;
}

// The oldest tick any connected peer may still need: the ring cannot slide past it.
static uint32_t window_base(const session_st *s)
{
    uint32_t base = s->final_next;
    for (uint32_t j = 0; j < s->def.slots; j++) {
        const slot_st *p = &s->slot[j];
        if (p->gone) {
            continue;
        }
        for (uint32_t k = 0; k < s->def.slots; k++) {
            const slot_st *q = &s->slot[k];
            uint32_t has = p->peer_said[k] < p->peer_has[k] ? p->peer_said[k] : p->peer_has[k];
            if (q->gone && has >= q->gone_tick) {
                continue; // holds everything the gone slot will ever have
            }
            if (k != j && has < base) {
                base = has;
            }
        }
    }
    return base;
}

static uint32_t batch_cap(uint32_t input_size)
{
    uint32_t n = (LS_NET_MAX_DATAGRAM - LS_NET_OVERHEAD - 8) / input_size;
    return n < LS_NET_MAX_BATCH ? n : LS_NET_MAX_BATCH;
}

// Send peer j slot k's inputs from tick `from` (as many as fit) up to what the relay holds.
static void send_inputs(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint32_t k,
                        uint32_t from, uint64_t now)
{
    slot_st *p = &s->slot[j];
    uint32_t to = s->slot[k].input_next;
    if (from >= to) {
        return;
    }
    uint32_t n = to - from, cap = batch_cap(s->def.input_size);
    n = n < cap ? n : cap;
    uint8_t data[LS_NET_MAX_DATAGRAM];
    for (uint32_t i = 0; i < n; i++) {
        memcpy(data + (size_t)i * s->def.input_size, input_at(s, k, from + i), s->def.input_size);
    }
    ls_net_msg m;
    ls_relay_header_(&m, LS_NET_INPUT, id);
    m.u.input.first_tick = from;
    m.u.input.count = (uint16_t)n;
    m.u.input.input_size = (uint8_t)s->def.input_size;
    m.u.input.slot = (uint8_t)k;
    m.u.input.data = data;
    ls_relay_send_to_(r, s, j, &m);
    p->last_sent[k] = now;
    if (from + n > p->sent_next[k]) {
        p->sent_next[k] = from + n;
    }
}

static void send_ack(ls_relay *r, session_st *s, uint32_t id, uint32_t j)
{
    ls_net_msg m;
    ls_relay_header_(&m, LS_NET_ACK, id);
    m.u.ack.checksum_next = s->slot[j].csum_next;
    m.u.ack.count = (uint8_t)s->def.slots;
    for (uint32_t k = 0; k < s->def.slots; k++) {
        m.u.ack.input_next[k] = s->slot[k].input_next;
        if (s->slot[k].gone) {
            m.u.ack.disconnected |= (uint16_t)(1u << k);
        }
    }
    ls_relay_send_to_(r, s, j, &m);
}

static void send_notice(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint32_t k)
{
    ls_net_msg m;
    ls_relay_header_(&m, LS_NET_DISCONNECT, id);
    m.u.disconnect.tick = s->slot[k].gone_tick;
    m.u.disconnect.reason = s->slot[k].reason;
    m.u.disconnect.slot = (uint8_t)k;
    ls_relay_send_to_(r, s, j, &m);
}

// The session's parameters, as every player and spectator is welcomed.
ls_net_msg ls_relay_welcome_(const session_st *s, uint32_t id)
{
    ls_net_msg m;
    ls_relay_header_(&m, LS_NET_WELCOME, id);
    m.u.welcome.slots = (uint8_t)s->def.slots;
    m.u.welcome.input_size = (uint8_t)s->def.input_size;
    m.u.welcome.delay = (uint8_t)s->def.delay;
    m.u.welcome.tick_rate = (uint16_t)s->def.tick_rate;
    m.u.welcome.ticks = s->def.ticks;
    m.u.welcome.timeout_ms = s->def.timeout_ms;
    return m;
}

static void send_welcome(ls_relay *r, session_st *s, uint32_t id, uint32_t j)
{
    ls_net_msg m = ls_relay_welcome_(s, id);
    ls_relay_send_to_(r, s, j, &m);
}

static void end_session(ls_relay *r, session_st *s, uint32_t id)
{
    s->done = true;
    if (s->rec.end) {
        s->rec.end(s->rec.user, id, s->final_next);
    }
    ls_relay_event ev = {LS_RELAY_EV_SESSION_DONE, id, 0, s->final_next, 0, 0, 0, 0};
    ls_relay_emit_(r, &ev);
}

// The agreed checksum of a tick: the value most slots reported; a tie goes to
// the value of the lowest slot among the tied (a total order, no hash order).
// The value reported by more slots than any other value, in *winner; false when the
// top is tied (no majority: checksums alone cannot tell who is wrong). The lowest
// reporting slot's value is in *winner then.
static bool majority(const uint64_t *v, const bool *have, uint32_t n, uint64_t *winner)
{
    uint32_t best = 0;
    bool tied = false;
    *winner = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!have[i]) {
            continue;
        }
        uint32_t c = 0;
        for (uint32_t j = 0; j < n; j++) {
            c += have[j] && v[j] == v[i];
        }
        if (c > best) {
            best = c;
            *winner = v[i];
            tied = false;
        } else if (c == best && v[i] != *winner) {
            tied = true;
        }
    }
    return !tied;
}

// Tell every live peer: a majority named `mask` (DESYNC), or the tick is disputed
// (flags LS_NET_DESYNC_DISPUTED, mask = every reporting slot, expected 0).
static void desync(ls_relay *r, session_st *s, uint32_t id, uint32_t t, uint16_t mask,
                   bool disputed, uint64_t agreed, uint64_t got)
{
    if (disputed) {
        r->st.disputes++;
        agreed = 0;
    } else {
        r->st.desyncs++;
    }
    ls_relay_event ev = {
        disputed ? LS_RELAY_EV_DISPUTED : LS_RELAY_EV_DESYNC, id, 0, t, mask, 0, agreed, got};
    ls_relay_emit_(r, &ev);
    for (uint32_t j = 0; j < s->def.slots; j++) {
        if (s->slot[j].bound && !s->slot[j].gone) {
            ls_net_msg m;
            ls_relay_header_(&m, LS_NET_DESYNC, id);
            m.u.desync.tick = t;
            m.u.desync.slots = mask;
            m.u.desync.flags = disputed ? LS_NET_DESYNC_DISPUTED : 0;
            m.u.desync.expected = agreed;
            ls_relay_send_to_(r, s, j, &m);
        }
    }
}

// Make every tick final whose inputs are all known and whose checksums every
// connected slot has reported; compare them and hand the tick to the recorder.
static void finalize(ls_relay *r, session_st *s, uint32_t id)
{
    uint32_t n = s->def.slots;
    while (!s->done) {
        uint32_t t = s->final_next;
        if (s->def.ticks && t >= s->def.ticks) {
            end_session(r, s, id);
            return;
        }
        bool any_live = false;
        uint64_t v[LS_NET_MAX_SLOTS];
        bool have[LS_NET_MAX_SLOTS];
        uint32_t nhave = 0;
        for (uint32_t k = 0; k < n; k++) {
            if (!s->slot[k].gone && s->slot[k].input_next <= t) {
                return; // wait for this slot's input
            }
        }
        for (uint32_t k = 0; k < n; k++) {
            const slot_st *p = &s->slot[k];
            any_live |= !p->gone;
            if (!p->gone && p->csum_next <= t) {
                if (p->input_next - t >= W / 2) {
                    // Every input of t has long been out, it keeps playing, but it does
                    // not vouch for its state: without this one peer stalls the session.
                    ls_relay_disconnect_(r, s, id, k, LS_NET_KICKED, s->now);
                }
                return; // wait for this slot's checksum
            }
            // A slot's checksum counts for the ticks it played with its own inputs only:
            // from its disconnect tick on everyone plays its empty input, so what it
            // computed there (with its real inputs) says nothing about the others.
            have[k] = p->csum_next > t && t >= p->csum_from && !(p->gone && t >= p->gone_tick);
            v[k] = have[k] ? s->csum[(size_t)k * W + t % W] : 0;
            nhave += have[k];
        }
        if (nhave == 0) {
            if (!any_live) {
                end_session(r, s, id);
            }
            return;
        }
        uint64_t agreed = 0, got = 0;
        bool disputed = !majority(v, have, n, &agreed);
        uint16_t mask = 0, reported = 0;
        for (uint32_t k = 0; k < n; k++) {
            reported |= (uint16_t)((have[k] ? 1u : 0u) << k);
            if (have[k] && v[k] != agreed) {
                got = mask ? got : v[k];
                mask |= (uint16_t)(1u << k);
            }
        }
        if (mask) {
            desync(r, s, id, t, disputed ? reported : mask, disputed, agreed, got);
            if (s->rec.claims) {
                s->rec.claims(s->rec.user, id, t, reported, v, disputed);
            }
        }
        if (s->rec.tick) {
            uint8_t row[LS_NET_MAX_SLOTS * LS_NET_MAX_INPUT_SIZE];
            for (uint32_t k = 0; k < n; k++) {
                memcpy(row + (size_t)k * s->def.input_size, input_at(s, k, t), s->def.input_size);
            }
            s->rec.tick(s->rec.user, id, t, row, agreed);
        }
        if (s->hist) { // the spectators' row: present mask, inputs, agreed checksum
            uint8_t *row = s->hist + (size_t)(t % s->def.history) * s->row_size;
            uint16_t present = 0;
            for (uint32_t k = 0; k < n; k++) {
                const slot_st *p = &s->slot[k];
                bool out = (p->gone && t >= p->gone_tick) || (t >= p->gap_from && t < p->gap_to);
                present |= (uint16_t)((out ? 0u : 1u) << k);
                memcpy(row + 2 + (size_t)k * s->def.input_size, input_at(s, k, t),
                       s->def.input_size);
            }
            ls_put_u16le(row, present);
            ls_put_u64le(row + 2 + (size_t)n * s->def.input_size, agreed);
        }
        // A disputed tick proves nothing (its recorded checksum names nobody).
        s->agreed[t % AGREED_RING] = agreed;
        s->agreed_tag[t % AGREED_RING] = disputed ? 0 : t + 1;
        s->final_next = t + 1;
    }
}

void ls_relay_disconnect_(ls_relay *r, session_st *s, uint32_t id, uint32_t k, uint8_t reason,
                          uint64_t now)
{
    slot_st *p = &s->slot[k];
    if (p->gone) {
        return;
    }
    p->gone = true;
    p->gone_at = now;
    p->xfer = false;
    p->gone_tick = p->input_next;
    p->reason = reason;
    p->st.disconnected = true;
    p->st.disconnect_tick = p->gone_tick;
    p->st.reason = reason;
    ls_relay_event ev = {LS_RELAY_EV_DISCONNECTED, id, k, p->gone_tick, p->unacked, reason, 0, 0};
    ls_relay_emit_(r, &ev);
    for (uint32_t j = 0; j < s->def.slots; j++) {
        if (s->slot[j].bound && (j == k || !s->slot[j].gone)) {
            send_notice(r, s, id, j, k);
            s->slot[j].last_notice = now;
        }
    }
    finalize(r, s, id);
}

// Ending a session from outside (an operator): every slot still in it is
// KICKED at its next input tick, which tells the others and ends the session
// the way "everyone gone" does (final ticks kept, recorder ended, SESSION_DONE).
ls_result ls_relay_session_end(ls_relay *r, uint32_t id, uint64_t now_us)
{
    session_st *s = r ? session_of(r, id) : NULL;
    if (!s) {
        return LS_ERR_NOT_FOUND;
    }
    s->now = now_us > s->now ? now_us : s->now;
    s->quiet_until = 0;
    for (uint32_t k = 0; k < s->def.slots && !s->done; k++) {
        ls_relay_disconnect_(r, s, id, k, LS_NET_KICKED, s->now);
    }
    finalize(r, s, id);
    return LS_OK;
}

// SipHash-2-4 under the relay's secret of (address, session, slot, time bucket).
uint64_t ls_relay_cookie_for_(const ls_relay *r, const ls_net_addr *a, uint32_t id, uint32_t slot,
                              uint64_t bucket)
{
    uint8_t msg[32], out[crypto_shorthash_BYTES];
    msg[0] = a->family;
    memcpy(msg + 1, a->ip, 16);
    ls_put_u16le(msg + 17, a->port);
    ls_put_u32le(msg + 19, id);
    msg[23] = (uint8_t)slot;
    ls_put_u64le(msg + 24, bucket);
    crypto_shorthash(out, msg, sizeof msg, r->secret);
    uint64_t c = ls_get_u64le(out);
    return c ? c : 1;
}

static void on_join(ls_relay *r, session_st *s, uint32_t id, const ls_net_addr *from,
                    const ls_net_msg *m, uint64_t now)
{
    slot_st *p = &s->slot[m->h.slot];
    if (p->bound && ls_net_addr_equal(&p->addr, from)) {
        p->last_heard = now;
        send_welcome(r, s, id, m->h.slot);
        return;
    }
    uint64_t bucket = now / r->def.cookie_period_us;
    bool ok =
        m->u.cookie != 0 &&
        (m->u.cookie == ls_relay_cookie_for_(r, from, id, m->h.slot, bucket) ||
         (bucket > 0 && m->u.cookie == ls_relay_cookie_for_(r, from, id, m->h.slot, bucket - 1)));
    if (!ok) {
        // Unverified source: answer with a CHALLENGE, smaller than the padded JOIN,
        // to the claimed address only (no amplification).
        ls_net_msg c;
        ls_relay_header_(&c, LS_NET_CHALLENGE, id);
        c.u.cookie = ls_relay_cookie_for_(r, from, id, m->h.slot, bucket);
        size_t len = 0;
        if (ls_relay_seal_to_(r, p, m->h.slot, from, &c, &len)) {
            r->st.packets_out++;
            r->st.bytes_out += len;
        }
        r->st.challenges++;
        return;
    }
    p->bound = true;
    p->addr = *from;
    p->last_heard = now;
    p->st.joined = true;
    p->st.addr = *from;
    ls_relay_event ev = {LS_RELAY_EV_JOINED, id, m->h.slot, 0, 0, 0, 0, 0};
    ls_relay_emit_(r, &ev);
    send_welcome(r, s, id, m->h.slot);
}

static void on_input(ls_relay *r, session_st *s, uint32_t id, uint32_t k, const ls_net_msg *m,
                     uint64_t now)
{
    slot_st *p = &s->slot[k];
    if (m->u.input.input_size != s->def.input_size || m->u.input.slot != k) {
        r->st.malformed++;
        p->st.drops++;
        return;
    }
    uint32_t limit = window_base(s) + W, before = p->input_next;
    for (uint32_t i = 0; i < m->u.input.count; i++) {
        uint32_t t = m->u.input.first_tick + i;
        if (t < p->input_next) {
            p->st.duplicates++;
            continue;
        }
        if (t > p->input_next || t >= limit) {
            break; // a gap (cannot happen with acks) or beyond the window: the peer re-sends
        }
        memcpy(s->inputs + ((size_t)k * W + t % W) * s->def.input_size,
               m->u.input.data + (size_t)i * s->def.input_size, s->def.input_size);
        p->input_next = t + 1;
    }
    p->st.input_next = p->input_next;
    p->ack_due = true;
    if (p->input_next == before) {
        return;
    }
    for (uint32_t j = 0; j < s->def.slots; j++) { // fan out as it arrives
        if (j != k && s->slot[j].bound && !s->slot[j].gone && !s->slot[j].xfer) {
            send_inputs(r, s, id, j, k, s->slot[j].peer_has[k], now);
        }
    }
    finalize(r, s, id);
}

static void on_checksum(ls_relay *r, session_st *s, uint32_t id, uint32_t k, const ls_net_msg *m)
{
    slot_st *p = &s->slot[k];
    for (uint32_t i = 0; i < m->u.checksum.count; i++) {
        uint32_t t = m->u.checksum.first_tick + i;
        if (t < p->csum_next) {
            p->st.duplicates++;
            continue;
        }
        if (t > p->csum_next || t >= s->final_next + W) {
            break;
        }
        if (t >= s->final_next) {
            s->csum[(size_t)k * W + t % W] = ls_get_u64le(m->u.checksum.data + 8 * i);
        }
        p->csum_next = t + 1;
    }
    p->st.checksum_next = p->csum_next;
    p->ack_due = true;
    finalize(r, s, id);
}

// An ACK can never claim more than the relay actually sent. Its claim raises
// peer_has (fan-out start) and replaces peer_said (re-send start), so a lower ACK
// after a higher one (reordering) only costs a redundant re-send, and a wrong one
// is corrected by the peer's next ACK: poll_peer keeps re-sending from peer_said
// until the peer confirms, as far back as the ring still holds the inputs.
static void on_ack(session_st *s, uint32_t j, const ls_net_msg *m)
{
    slot_st *p = &s->slot[j];
    if (m->u.ack.count != s->def.slots) {
        p->st.drops++;
        return;
    }
    if (p->xfer) {
        return; // a rejoiner's ACKs before it loads are from before its rejoin: stale
    }
    for (uint32_t k = 0; k < s->def.slots; k++) {
        if (k == j) {
            continue; // a peer is never sent its own inputs
        }
        const slot_st *q = &s->slot[k];
        uint32_t v = m->u.ack.input_next[k];
        v = v < p->sent_next[k] ? v : p->sent_next[k];
        uint32_t held = q->input_next > W ? q->input_next - W : 0; // oldest tick in the ring
        held = held > s->def.delay ? held : s->def.delay;
        held = held > p->said_floor ? held : p->said_floor; // a rejoiner holds nothing older
        v = v > held ? v : held;
        p->peer_said[k] = v;
        p->peer_has[k] = v > p->peer_has[k] ? v : p->peer_has[k];
    }
    p->peer_knows_gone = m->u.ack.disconnected;
}

static void on_pong(slot_st *p, const ls_net_msg *m, uint64_t now)
{
    if (m->u.ping.time > now || now - m->u.ping.time > 60000000u) {
        return;
    }
    uint32_t rtt = (uint32_t)(now - m->u.ping.time);
    p->st.rtt_us = p->st.rtt_us ? (uint32_t)(((uint64_t)p->st.rtt_us * 7 + rtt) / 8) : rtt;
    p->st.rtt_min_us = p->st.rtt_min_us && p->st.rtt_min_us < rtt ? p->st.rtt_min_us : rtt;
    p->st.rtt_max_us = p->st.rtt_max_us > rtt ? p->st.rtt_max_us : rtt;
}

static void dispatch(ls_relay *r, session_st *s, uint32_t id, const ls_net_msg *m, uint64_t now)
{
    uint32_t k = m->h.slot;
    slot_st *p = &s->slot[k];
    switch (m->h.type) {
    case LS_NET_INPUT:
        on_input(r, s, id, k, m, now);
        break;
    case LS_NET_CHECKSUM:
        on_checksum(r, s, id, k, m);
        break;
    case LS_NET_ACK:
        on_ack(s, k, m);
        break;
    case LS_NET_DISCONNECT:
        if (m->u.disconnect.slot != k) { // a peer can only take its own slot out
            r->st.malformed++;
            p->st.drops++;
            break;
        }
        ls_relay_disconnect_(r, s, id, k, LS_NET_LEFT, now);
        break;
    case LS_NET_PING: {
        ls_net_msg pong;
        ls_relay_header_(&pong, LS_NET_PONG, id);
        pong.u.ping = m->u.ping;
        ls_relay_send_to_(r, s, k, &pong);
        break;
    }
    case LS_NET_PONG:
        on_pong(p, m, now);
        break;
    case LS_NET_STATE_ACK:
        ls_relay_on_state_ack_(r, s, id, k, m);
        break;
    case LS_NET_STATE_PROOF:
        ls_relay_on_state_proof_(r, s, id, k, m, now);
        break;
    case LS_NET_STATE_CHUNK:
        ls_relay_on_state_chunk_(r, s, id, k, m);
        break;
    default:
        r->st.malformed++;
        p->st.drops++;
        break;
    }
}

void ls_relay_receive(ls_relay *r, const ls_net_addr *from, const uint8_t *data, size_t len,
                      uint64_t now)
{
    r->st.packets_in++;
    r->st.bytes_in += len;
    if (!ls_net_ratelimit_allow_(&r->limit, from, now)) {
        r->st.rate_limited++;
        return;
    }
    ls_net_header h;
    ls_result hr = ls_net_decode_header(data, len, &h, NULL);
    if (hr != LS_OK) {
        r->st.wrong_version += hr == LS_ERR_INCOMPATIBLE;
        r->st.truncated += hr == LS_ERR_TRUNCATED;
        r->st.malformed += hr != LS_ERR_INCOMPATIBLE && hr != LS_ERR_TRUNCATED;
        return;
    }
    session_st *s = session_of(r, h.session);
    if (!s) {
        r->st.no_session++;
        return;
    }
    s->now = now;
    s->quiet_until = 0; // whatever this datagram does, the next poll is a full one
    if (h.role == LS_NET_ROLE_SPECTATOR) {
        ls_relay_on_spectator_datagram_(r, s, &h, from, data, len, now);
        return;
    }
    if (h.slot >= s->def.slots) {
        r->st.malformed++;
        return;
    }
    slot_st *p = &s->slot[h.slot];
    if (!ls_net_auth_verify_(data, len, p->key, LS_NET_TO_RELAY)) {
        r->st.bad_mac++;
        p->st.drops++;
        r->st.spectator_refused += ls_relay_sealed_by_spectator_(s, data, len);
        return;
    }
    ls_net_fresh fresh = ls_net_replay_check_(&p->rx, h.seq);
    if (fresh != LS_NET_FRESH) {
        r->st.replayed += fresh == LS_NET_REPLAYED;
        r->st.stale += fresh == LS_NET_STALE;
        p->st.drops++;
        return;
    }
    ls_net_replay_accept_(&p->rx, h.seq);
    ls_net_msg m;
    if (ls_net_decode(data, len, &m, NULL) != LS_OK) {
        r->st.malformed++; // authentic but undecodable: a peer bug, never acted on
        p->st.drops++;
        return;
    }
    if (m.h.type == LS_NET_JOIN) {
        on_join(r, s, m.h.session, from, &m, now);
        return;
    }
    if (m.h.type == LS_NET_REJOIN) {
        ls_relay_on_rejoin_(r, s, m.h.session, from, &m, now);
        return;
    }
    if (!p->bound || !ls_net_addr_equal(&p->addr, from)) {
        r->st.unverified++;
        p->st.drops++;
        return;
    }
    p->last_heard = now;
    p->st.packets_in++;
    p->st.bytes_in += len;
    if (p->gone) {
        if (m.h.type == LS_NET_PING) {
            dispatch(r, s, m.h.session, &m, now);
        } else if (now - p->last_notice >= r->def.resend_us) {
            send_notice(r, s, m.h.session, m.h.slot, m.h.slot); // you are out: stop sending
            p->last_notice = now;
        }
        return;
    }
    dispatch(r, s, m.h.session, &m, now);
}

// Slot j reported its checksums of every tick of the match (not merely the empty ones
// of a rejoin at the end), so it simulated them all: it holds every input and has seen
// every departure (SPEC.md §17.8 "End of a match"). It needs no more than answers.
static bool complete(const session_st *s, const slot_st *p)
{
    return s->def.ticks && p->csum_next >= s->def.ticks && p->csum_from < s->def.ticks;
}

// Acknowledgements must keep up (SPEC.md §17.5): a peer's claim of another slot's inputs
// below the first non-final tick is stale (it simulated those ticks, or they could not be
// final), and it holds the ring back for everyone. Kicked once that lasted timeout_ms.
static bool kick_if_stale(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint64_t now)
{
    slot_st *p = &s->slot[j];
    uint16_t behind = 0;
    for (uint32_t k = 0; k < s->def.slots && !p->xfer && !complete(s, p); k++) {
        const slot_st *q = &s->slot[k];
        uint32_t has = p->peer_said[k] < p->peer_has[k] ? p->peer_said[k] : p->peer_has[k];
        if (k != j && has < s->final_next && !(q->gone && has >= q->gone_tick)) {
            behind |= (uint16_t)(1u << k);
        }
    }
    if (!behind) {
        p->stale = false;
        return false;
    }
    // Only a peer that keeps talking is kicked: one gone quiet (for half the timeout) is
    // left to the timeout, which it may come back from (§17.10), and its clock starts
    // again when it talks (it gets a whole timeout to catch up).
    bool talking = now < p->last_heard || now - p->last_heard <= (uint64_t)s->def.timeout_ms * 500;
    if (!p->stale || !talking) {
        p->stale = true;
        p->stale_since = now;
    }
    if (now < p->stale_since || now - p->stale_since <= (uint64_t)s->def.timeout_ms * 1000) {
        return false;
    }
    p->unacked = behind;
    ls_relay_disconnect_(r, s, id, j, LS_NET_KICKED, now);
    return true;
}

static void poll_peer(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint64_t now)
{
    slot_st *p = &s->slot[j];
    if (p->ack_due) {
        send_ack(r, s, id, j);
        p->ack_due = false;
    }
    if (now >= p->last_heard && now - p->last_heard > (uint64_t)s->def.timeout_ms * 1000) {
        ls_relay_disconnect_(r, s, id, j, LS_NET_TIMEOUT, now);
        return;
    }
    if (kick_if_stale(r, s, id, j, now) || complete(s, p)) {
        return; // a complete peer is only answered: it goes silent once it is FINISHED
    }
    if (p->xfer) { // rejoining: the snapshot first, then the inputs after it
        ls_relay_peer_state_(r, s, id, j, now);
    }
    for (uint32_t k = 0; k < s->def.slots && !p->xfer; k++) {
        if (k != j && p->peer_said[k] < s->slot[k].input_next &&
            now - p->last_sent[k] >= r->def.resend_us) {
            if (r->resend_left == 0) {
                r->resend_held = true; // still due: the next poll starts here
                break;
            }
            r->resend_left--;
            send_inputs(r, s, id, j, k, p->peer_said[k], now);
        }
    }
    if (!p->xfer && now - p->last_notice >= r->def.resend_us) {
        for (uint32_t k = 0; k < s->def.slots; k++) {
            if (k != j && s->slot[k].gone && !(p->peer_knows_gone & (1u << k))) {
                send_notice(r, s, id, j, k);
                p->last_notice = now;
            } else if (k != j && !s->slot[k].gone && s->slot[k].gap_to &&
                       (p->peer_knows_gone & (1u << k))) {
                ls_relay_send_rejoined_(r, s, id, j, k); // it still thinks k is gone
                p->last_notice = now;
            }
        }
    }
    if (now - p->last_ping >= r->def.ping_interval_us) {
        ls_net_msg m;
        ls_relay_header_(&m, LS_NET_PING, id);
        m.u.ping.time = now;
        m.u.ping.seq = ++p->ping_seq;
        ls_relay_send_to_(r, s, j, &m);
        p->last_ping = now;
    }
}

// The earliest time after a full poll at `now` at which polling session s again could
// do anything, if nothing else touches it first (0: it may at once; UINT64_MAX: never).
// Why: ls_relay_poll runs every millisecond over every session, and at a few hundred
// sessions that scan (a dozen cache lines per slot) was the relay's largest cost of
// its own (perf: ~5 % of its CPU at 128 sessions, the rest being the kernel and the
// tags), while about half the sessions get no datagram in a given millisecond.
// Skipping must not change a byte or a time the relay emits, so this is the exact
// complement of poll_peer's conditions: a peer owing an ACK or receiving a snapshot, a
// slot gone or rejoined (notices), a spectator, or a clock earlier than a stored time
// (whose unsigned differences wrap) makes the answer 0; otherwise the answer is the
// first due timeout, re-send, ping, join timeout or, for a peer behind on its
// acknowledgements (kick_if_stale), the time it stops counting as talking or is
// kicked. What decides "behind" is state only a datagram or the host changes (a
// disconnect inside this poll leaves a slot gone: answer 0). Each condition is
// "now - t >= d" with t <= now, monotonic in now, so false at every time in
// [now, min(t + d)) as it is at now.
static uint64_t session_quiet_until(const ls_relay *r, const session_st *s, uint64_t now)
{
    uint64_t until = UINT64_MAX;
#define DUE(t, d)                                                                                  \
    do {                                                                                           \
        if ((t) > now) {                                                                           \
            return 0;                                                                              \
        }                                                                                          \
        until = (t) + (d) < until ? (t) + (d) : until;                                             \
    } while (0)
    for (uint32_t j = 0; j < s->def.spectators; j++) {
        if (s->spec[j].bound && !s->spec[j].dropped) {
            return 0;
        }
    }
    for (uint32_t j = 0; j < s->def.slots; j++) {
        const slot_st *p = &s->slot[j];
        if (p->gone || p->gap_to) {
            return 0; // the others owe notices (gone, rejoined) on their own clocks
        }
        if (!p->bound) {
            if (s->def.join_timeout_ms) {
                DUE(s->created, (uint64_t)s->def.join_timeout_ms * 1000 + 1);
            }
            continue;
        }
        if (p->ack_due || p->xfer) {
            return 0;
        }
        DUE(p->last_heard, (uint64_t)s->def.timeout_ms * 1000 + 1);
        if (p->stale) { // behind (kick_if_stale): common, a peer acks before the last input
            DUE(p->last_heard, (uint64_t)s->def.timeout_ms * 500 + 1);   // stops "talking"
            DUE(p->stale_since, (uint64_t)s->def.timeout_ms * 1000 + 1); // kicked
        }
        DUE(p->last_ping, r->def.ping_interval_us);
        for (uint32_t k = 0; k < s->def.slots; k++) {
            if (k != j && p->peer_said[k] < s->slot[k].input_next) {
                DUE(p->last_sent[k], r->def.resend_us);
            }
        }
    }
#undef DUE
    return until;
}

// Why a re-send budget: past capacity (peers behind on their ACKs) every
// unacknowledged input is due again every resend_us, all in the same poll; a
// poll that sends thousands of datagrams outlasts its millisecond and the loop
// reads only a few times a second, so the ACKs that would end the re-sends are
// read late (measured at 512 sessions: 37 epoll_wait against 3,400 sendmmsg in
// 2 s). With the budget a poll re-sends at most max_resends_per_poll INPUT
// datagrams; the next poll starts with the session that waited (then in id
// order, wrapping), so every session gets its turn. While the budget is never
// reached the order is the id order, as before.
void ls_relay_poll(ls_relay *r, uint64_t now)
{
    r->resend_left = r->def.max_resends_per_poll ? r->def.max_resends_per_poll : UINT32_MAX;
    r->resend_held = false;
    uint32_t start = r->poll_start < r->session_count ? r->poll_start : 0, held_at = UINT32_MAX;
    for (uint32_t n = 0; n < r->session_count; n++) {
        uint32_t i = (start + n) % r->session_count;
        session_st *s = &r->sessions[i];
        uint32_t id = i + 1;
        if (!s->used) {
            continue; // an id skipped by ls_relay_session_create_at
        }
        s->now = now;
        if (s->quiet_until && now >= s->quiet_from && now < s->quiet_until) {
            continue; // nothing is due and nothing changed since (session_quiet_until)
        }
        for (uint32_t j = 0; j < s->def.slots; j++) {
            slot_st *p = &s->slot[j];
            if (p->gone) {
                continue;
            }
            if (p->bound) {
                poll_peer(r, s, id, j, now);
            } else if (s->def.join_timeout_ms &&
                       now - s->created > (uint64_t)s->def.join_timeout_ms * 1000) {
                ls_relay_disconnect_(r, s, id, j, LS_NET_TIMEOUT, now);
            }
        }
        for (uint32_t j = 0; j < s->def.spectators; j++) {
            if (s->spec[j].bound && !s->spec[j].dropped) {
                ls_relay_poll_spectator_(r, s, id, j, now);
            }
        }
        s->quiet_from = now;
        s->quiet_until = session_quiet_until(r, s, now);
        if (r->resend_held && held_at == UINT32_MAX) {
            held_at = i;
        }
    }
    r->poll_start = held_at == UINT32_MAX ? 0 : held_at;
    r->st.resends_deferred += r->resend_held;
}

bool ls_relay_next_datagram(ls_relay *r, ls_net_datagram *out)
{
    return ls_net_outbox_pop_(&r->out, out);
}

bool ls_relay_next_event(ls_relay *r, ls_relay_event *out)
{
    if (r->ev_count == 0) {
        return false;
    }
    *out = r->events[r->ev_head];
    r->ev_head = (r->ev_head + 1) % EVENTS_MAX;
    r->ev_count--;
    return true;
}

ls_relay_stats ls_relay_stats_get(const ls_relay *r)
{
    ls_relay_stats st = r->st;
    st.outbox_dropped = r->out.dropped;
    return st;
}

ls_relay_peer_stats ls_relay_spectator_stats_get(const ls_relay *r, uint32_t id, uint32_t index)
{
    ls_relay_peer_stats z;
    memset(&z, 0, sizeof z);
    const session_st *s = session_of(r, id);
    if (!s || index >= s->def.spectators) {
        return z;
    }
    ls_relay_peer_stats st = s->spec[index].st;
    st.input_next = s->spec[index].next;
    return st;
}

ls_relay_peer_stats ls_relay_peer_stats_get(const ls_relay *r, uint32_t id, uint32_t slot)
{
    ls_relay_peer_stats z;
    memset(&z, 0, sizeof z);
    const session_st *s = session_of(r, id);
    if (!s || slot >= s->def.slots) {
        return z;
    }
    ls_relay_peer_stats st = s->slot[slot].st;
    st.input_next = s->slot[slot].input_next;
    st.checksum_next = s->slot[slot].csum_next;
    return st;
}
