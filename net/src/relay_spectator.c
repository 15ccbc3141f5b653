// SPDX-License-Identifier: MIT
// The relay's spectators (SPEC.md §17.10 "Spectators" and "Late spectators:
// snapshot of a confirmed tick").
//
// Spectators (SPEC.md §17.10) have their own keys (role spectator, header slot =
// spectator index). Each final tick becomes a row (present mask, every slot's
// input, agreed checksum) in a ring of def.history rows; spectators get rows
// from what they acknowledged, a bounded number in flight, and nothing they send
// but SPECTATE, ACK, STATE_ACK, PING, PONG and DISCONNECT is acted on (anything
// else from a spectator key, or a player header sealed with one, is a refused
// takeover). The relay never waits for a spectator: one whose next row left the
// ring gets the host's snapshot of a confirmed tick (LS_RELAY_EV_STATE_NEEDED,
// ls_relay_session_put_state) in STATE_CHUNKs, or is dropped.
//
// Apart from relay.c because a spectator is never a player: its own keys, replay
// window, timers and messages, and the match never waits for it. relay.c writes
// the rows (finalize), hands this file every datagram with the spectator role and
// polls each bound spectator; this file never touches a player's slot.
#include "relay_internal.h"
#include "state_send.h"

#include <string.h>

// Rows a spectator may have unacknowledged; rows per CONFIRMED datagram are batch-capped.
#define SPEC_INFLIGHT 128u

static void spec_send(ls_relay *r, session_st *s, uint32_t index, const ls_net_addr *to,
                      ls_net_msg *m)
{
    spec_st *v = &s->spec[index];
    size_t len = ls_net_outbox_send_(&r->out, to, m, LS_NET_ROLE_SPECTATOR, m->h.session, index,
                                     &v->tx_seq, v->key, LS_NET_TO_PEER);
    if (len) {
        r->st.packets_out++;
        r->st.bytes_out += len;
        v->st.packets_out++;
        v->st.bytes_out += len;
    } else {
        r->st.outbox_dropped++;
    }
}

// The oldest final tick the history still holds.
uint32_t ls_relay_hist_base_(const session_st *s)
{
    return s->final_next > s->def.history ? s->final_next - s->def.history : 0;
}

static void spec_drop(ls_relay *r, session_st *s, uint32_t id, uint32_t index, uint8_t reason,
                      bool tell)
{
    spec_st *v = &s->spec[index];
    if (v->dropped || !v->bound) {
        return;
    }
    if (tell) {
        ls_net_msg m;
        ls_relay_header_(&m, LS_NET_DISCONNECT, id);
        m.u.disconnect.tick = v->next;
        m.u.disconnect.reason = reason;
        m.u.disconnect.slot = (uint8_t)index;
        spec_send(r, s, index, &v->addr, &m);
    }
    v->dropped = true;
    v->st.disconnected = true;
    v->st.disconnect_tick = v->next;
    v->st.reason = reason;
    r->st.spectators_dropped++;
    ls_relay_event ev = {LS_RELAY_EV_SPECTATOR_DROPPED, id, index, v->next, 0, reason, 0, 0};
    ls_relay_emit_(r, &ev);
}

// Send final rows [from, to) in CONFIRMED datagrams.
static void spec_rows(ls_relay *r, session_st *s, uint32_t id, uint32_t index, uint32_t from,
                      uint32_t to, uint64_t now)
{
    spec_st *v = &s->spec[index];
    uint32_t cap = (LS_NET_MAX_DATAGRAM - LS_NET_OVERHEAD - 8) / s->row_size;
    cap = cap < LS_NET_MAX_BATCH ? cap : LS_NET_MAX_BATCH;
    while (from < to) {
        uint32_t n = to - from < cap ? to - from : cap;
        uint8_t rows[LS_NET_MAX_DATAGRAM];
        for (uint32_t i = 0; i < n; i++) {
            memcpy(rows + (size_t)i * s->row_size,
                   s->hist + (size_t)((from + i) % s->def.history) * s->row_size, s->row_size);
        }
        ls_net_msg m;
        ls_relay_header_(&m, LS_NET_CONFIRMED, id);
        m.u.confirmed.first_tick = from;
        m.u.confirmed.count = (uint16_t)n;
        m.u.confirmed.slots = (uint8_t)s->def.slots;
        m.u.confirmed.input_size = (uint8_t)s->def.input_size;
        m.u.confirmed.rows = rows;
        spec_send(r, s, index, &v->addr, &m);
        from += n;
    }
    v->sent_next = to > v->sent_next ? to : v->sent_next;
    v->last_sent = now;
}

static void spec_send_rows(ls_relay *r, session_st *s, uint32_t id, uint32_t index, uint64_t now);

typedef struct to_spectator {
    ls_relay *r;
    session_st *s;
    uint32_t id, index;
} to_spectator;

static void chunk_to_spectator(void *user, ls_net_msg *m)
{
    to_spectator *t = user;
    m->h.session = t->id;
    spec_send(t->r, t->s, t->index, &t->s->spec[t->index].addr, m);
}

// Snapshot chunks to a late spectator: up to 16 chunks beyond its acknowledgement,
// re-sent from there when it has been silent about them for resend_us.
static void spec_state(ls_relay *r, session_st *s, uint32_t id, uint32_t index, uint64_t now)
{
    spec_st *v = &s->spec[index];
    if (v->xfer_tick != s->snap_tick) { // a newer snapshot replaced it: start over
        v->xfer_tick = s->snap_tick;
        v->state_next = v->state_sent = 0;
    }
    ls_net_state_out out = {s->snap_tick, s->snap_len, s->snap, s->snap_hash};
    ls_net_state_progress at = {&v->state_next, &v->state_sent, &v->last_sent};
    to_spectator to = {r, s, id, index};
    ls_net_state_send_(&out, at, now, r->def.resend_us, chunk_to_spectator, &to);
}

// A spectator behind the history: send it the snapshot if there is a usable one,
// else ask the host for one (LS_RELAY_EV_STATE_NEEDED, at most every 250 ms); drop
// it when there is no snapshot store or none came within timeout_ms. False if dropped.
static bool spec_behind(ls_relay *r, session_st *s, uint32_t id, uint32_t index, uint64_t now)
{
    spec_st *v = &s->spec[index];
    if (s->snap_ready && s->snap_tick >= ls_relay_hist_base_(s)) {
        v->xfer = true;
        v->waiting = false;
        v->xfer_tick = s->snap_tick;
        v->state_next = v->state_sent = 0;
        v->last_sent = 0;
        return true;
    }
    if (!v->waiting) {
        v->waiting = true;
        v->wait_since = now;
    }
    if (!s->snap || now - v->wait_since > (uint64_t)s->def.timeout_ms * 1000) {
        spec_drop(r, s, id, index, LS_NET_KICKED, true); // the match does not wait
        return false;
    }
    if (!s->snap_asked || now - s->snap_asked >= 250000) {
        s->snap_asked = now;
        ls_relay_event ev = {LS_RELAY_EV_STATE_NEEDED, id, index, s->final_next, 0, 0, 0, 0};
        ls_relay_emit_(r, &ev);
    }
    return true;
}

// Spectator timers: drop the silent or hopelessly late, re-send from the ACK,
// send new rows (a bounded number in flight) or the snapshot, ping.
void ls_relay_poll_spectator_(ls_relay *r, session_st *s, uint32_t id, uint32_t index, uint64_t now)
{
    spec_st *v = &s->spec[index];
    if (now >= v->last_heard && now - v->last_heard > (uint64_t)s->def.timeout_ms * 1000) {
        spec_drop(r, s, id, index, LS_NET_TIMEOUT, false);
        return;
    }
    if (!v->xfer && v->next < ls_relay_hist_base_(s) && !spec_behind(r, s, id, index, now)) {
        return;
    }
    if (v->xfer) {
        spec_state(r, s, id, index, now);
    } else if (!v->waiting) {
        spec_send_rows(r, s, id, index, now);
    }
    if (now - v->last_ping >= r->def.ping_interval_us) {
        ls_net_msg m;
        ls_relay_header_(&m, LS_NET_PING, id);
        m.u.ping.time = now;
        m.u.ping.seq = ++v->ping_seq;
        spec_send(r, s, index, &v->addr, &m);
        v->last_ping = now;
    }
}

static void spec_send_rows(ls_relay *r, session_st *s, uint32_t id, uint32_t index, uint64_t now)
{
    spec_st *v = &s->spec[index];
    uint32_t limit =
        v->next + SPEC_INFLIGHT < s->final_next ? v->next + SPEC_INFLIGHT : s->final_next;
    if (v->sent_next < v->next) {
        v->sent_next = v->next;
    }
    if (v->next < v->sent_next && now - v->last_sent >= r->def.resend_us) {
        spec_rows(r, s, id, index, v->next, v->sent_next < limit ? v->sent_next : limit, now);
    }
    if (v->sent_next < limit) {
        spec_rows(r, s, id, index, v->sent_next, limit, now);
    }
}

static void on_spectate(ls_relay *r, session_st *s, uint32_t id, uint32_t index,
                        const ls_net_addr *from, const ls_net_msg *m, uint64_t now)
{
    spec_st *v = &s->spec[index];
    if (v->bound && !v->dropped && ls_net_addr_equal(&v->addr, from)) {
        v->last_heard = now;
    } else {
        uint64_t bucket = now / r->def.cookie_period_us;
        uint32_t tag = 0x80u | index; // spectator cookies differ from slot cookies
        bool ok =
            m->u.cookie != 0 &&
            (m->u.cookie == ls_relay_cookie_for_(r, from, id, tag, bucket) ||
             (bucket > 0 && m->u.cookie == ls_relay_cookie_for_(r, from, id, tag, bucket - 1)));
        if (!ok) {
            ls_net_msg c;
            ls_relay_header_(&c, LS_NET_CHALLENGE, id);
            c.u.cookie = ls_relay_cookie_for_(r, from, id, tag, bucket);
            spec_send(r, s, index, from, &c);
            r->st.challenges++;
            return;
        }
        // A (re)join: watch from where it left off, or from tick 0.
        v->bound = true;
        v->dropped = false;
        v->addr = *from;
        v->last_heard = now;
        v->last_sent = 0;
        v->sent_next = v->next;
        v->st.joined = true;
        v->st.disconnected = false;
        v->st.addr = *from;
        ls_relay_event ev = {LS_RELAY_EV_SPECTATOR_JOINED, id, index, v->next, 0, 0, 0, 0};
        ls_relay_emit_(r, &ev);
    }
    ls_net_msg w = ls_relay_welcome_(s, id);
    spec_send(r, s, index, from, &w);
}

void ls_relay_on_spectator_datagram_(ls_relay *r, session_st *s, const ls_net_header *h,
                                     const ls_net_addr *from, const uint8_t *data, size_t len,
                                     uint64_t now)
{
    if (h->slot >= s->def.spectators) {
        r->st.malformed++;
        return;
    }
    uint32_t id = h->session, index = h->slot;
    spec_st *v = &s->spec[index];
    if (!ls_net_auth_verify_(data, len, v->key, LS_NET_TO_RELAY)) {
        r->st.bad_mac++;
        v->st.drops++;
        return;
    }
    ls_net_fresh fresh = ls_net_replay_check_(&v->rx, h->seq);
    if (fresh != LS_NET_FRESH) {
        r->st.replayed += fresh == LS_NET_REPLAYED;
        r->st.stale += fresh == LS_NET_STALE;
        v->st.drops++;
        return;
    }
    ls_net_replay_accept_(&v->rx, h->seq);
    ls_net_msg m;
    if (ls_net_decode(data, len, &m, NULL) != LS_OK) {
        r->st.malformed++;
        v->st.drops++;
        return;
    }
    if (m.h.type == LS_NET_SPECTATE) {
        on_spectate(r, s, id, index, from, &m, now);
        return;
    }
    if (m.h.type != LS_NET_ACK && m.h.type != LS_NET_PING && m.h.type != LS_NET_PONG &&
        m.h.type != LS_NET_DISCONNECT && m.h.type != LS_NET_STATE_ACK) {
        r->st.spectator_refused++; // INPUT, CHECKSUM, JOIN, REJOIN, STATE_*: it acts for nobody
        v->st.drops++;
        return;
    }
    if (!v->bound || v->dropped || !ls_net_addr_equal(&v->addr, from)) {
        r->st.unverified++;
        v->st.drops++;
        return;
    }
    v->last_heard = now;
    v->st.packets_in++;
    v->st.bytes_in += len;
    switch (m.h.type) {
    case LS_NET_ACK: { // input_next[0]: the spectator holds every row below it
        uint32_t said = m.u.ack.input_next[0];
        said = said < v->sent_next ? said : v->sent_next;
        v->next = said > v->next ? said : v->next;
        v->st.input_next = v->next;
        break;
    }
    case LS_NET_PING: {
        ls_net_msg pong;
        ls_relay_header_(&pong, LS_NET_PONG, id);
        pong.u.ping = m.u.ping;
        spec_send(r, s, index, &v->addr, &pong);
        break;
    }
    case LS_NET_PONG:
        if (m.u.ping.time <= now && now - m.u.ping.time < 60000000u) {
            uint32_t rtt = (uint32_t)(now - m.u.ping.time);
            v->st.rtt_us = v->st.rtt_us ? (uint32_t)(((uint64_t)v->st.rtt_us * 7 + rtt) / 8) : rtt;
        }
        break;
    case LS_NET_DISCONNECT:
        spec_drop(r, s, id, index, LS_NET_LEFT, false);
        break;
    case LS_NET_STATE_ACK: // how much of the snapshot it holds
        if (v->xfer && m.u.state_ack.tick == v->xfer_tick && m.u.state_ack.tick == s->snap_tick &&
            m.u.state_ack.total == s->snap_len) {
            uint32_t said = m.u.state_ack.next < v->state_sent ? m.u.state_ack.next : v->state_sent;
            v->state_next = said > v->state_next ? said : v->state_next;
            if (v->state_next == s->snap_len) { // loaded: rows from the snapshot's tick on
                v->xfer = false;
                v->next = v->sent_next = s->snap_tick;
                v->st.input_next = v->next;
                v->last_sent = 0;
            }
        }
        break;
    default:
        break;
    }
}

// A player header whose tag fails: was it sealed with one of the session's
// spectator keys (a spectator trying to act as a player)? Only on this failure path.
bool ls_relay_sealed_by_spectator_(const session_st *s, const uint8_t *data, size_t len)
{
    for (uint32_t i = 0; i < s->def.spectators; i++) {
        if (ls_net_auth_verify_(data, len, s->spec[i].key, LS_NET_TO_RELAY)) {
            return true;
        }
    }
    return false;
}
