// SPDX-License-Identifier: MIT
// Rejoin (SPEC.md §17.10 "Reconnect and late players"; §24.8 for rollback peers): a
// slot disconnected by timeout comes back with a REJOIN within the session's
// rejoin_ms. The relay picks its return tick R (no peer can have simulated R),
// tells every peer (DISCONNECT, reason REJOINED, tick R), makes the slot's inputs
// of the outage empty, and has it load a snapshot of a final tick before it gets
// any input: the host's (LS_RELAY_EV_STATE_NEEDED, ls_relay_session_put_state) or,
// lacking one, the state of R uploaded by a connected slot on request (STATE_ACK
// with total 0, answered in STATE_CHUNKs); with none within timeout_ms the slot is
// disconnected again.
//
// Apart from relay.c because it is a protocol of its own on top of the players'
// one: relay.c calls in on REJOIN, on a player's STATE_CHUNK or STATE_ACK and from
// poll while a slot loads (slot_st.xfer), and this file uses relay.c only through
// the helpers of relay_internal.h.
#include "relay_internal.h"
#include "state_send.h"

#include <sodium.h>
#include <string.h>

// A snapshot source's bit in slot_st.refused: its slot, or bit 16 for the host.
static uint32_t source_bit(uint8_t source)
{
    return source == LS_NET_SOURCE_HOST ? 1u << LS_NET_MAX_SLOTS : 1u << source;
}

// Tell peer j that slot k is back: DISCONNECT(slot k, reason REJOINED, tick = its return tick).
void ls_relay_send_rejoined_(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint32_t k)
{
    ls_net_msg m;
    ls_relay_header_(&m, LS_NET_DISCONNECT, id);
    m.u.disconnect.tick = s->slot[k].gap_to;
    m.u.disconnect.reason = LS_NET_REJOINED;
    m.u.disconnect.slot = (uint8_t)k;
    ls_relay_send_to_(r, s, j, &m);
}

// The first tick a rejoiner's snapshot may have: its inputs from there on must all
// still be in the relay's rings, and its own inputs below it must not matter.
static uint32_t rejoin_floor(const session_st *s, uint32_t j)
{
    const slot_st *p = &s->slot[j];
    uint32_t f = p->gap_to > W ? p->gap_to - W : 0;
    f = f > p->gap_from ? f : p->gap_from;
    return f > s->def.delay ? f : s->def.delay;
}

void ls_relay_on_rejoin_(ls_relay *r, session_st *s, uint32_t id, const ls_net_addr *from,
                         const ls_net_msg *m, uint64_t now)
{
    uint32_t k = m->h.slot;
    slot_st *p = &s->slot[k];
    // A repeat: our answer (the REJOINED notice with R) was lost. The rejoiner repeats
    // REJOIN until it has R, which may be after it already holds the whole snapshot (the
    // transfer is over then, xfer false): answer for as long as it asks.
    if (!p->gone && p->bound && p->st.rejoins && ls_net_addr_equal(&p->addr, from)) {
        p->last_heard = now;
        ls_relay_send_rejoined_(r, s, id, k, k);
        return;
    }
    if (!p->gone || p->reason != LS_NET_TIMEOUT || !s->def.rejoin_ms || !s->snap || s->done ||
        now - p->gone_at > (uint64_t)s->def.rejoin_ms * 1000) {
        r->st.rejoin_refused++;
        p->st.drops++;
        if (p->gone && now - p->last_notice >= r->def.resend_us) {
            ls_net_msg n; // you are out (smaller than the padded REJOIN: no amplification)
            ls_relay_header_(&n, LS_NET_DISCONNECT, id);
            n.u.disconnect.tick = p->gone_tick;
            n.u.disconnect.reason = p->reason;
            n.u.disconnect.slot = (uint8_t)k;
            size_t len = 0;
            if (ls_relay_seal_to_(r, p, k, from, &n, &len)) {
                r->st.packets_out++;
                r->st.bytes_out += len;
            }
            p->last_notice = now;
        }
        return;
    }
    uint64_t bucket = now / r->def.cookie_period_us;
    bool ok = m->u.cookie != 0 &&
              (m->u.cookie == ls_relay_cookie_for_(r, from, id, k, bucket) ||
               (bucket > 0 && m->u.cookie == ls_relay_cookie_for_(r, from, id, k, bucket - 1)));
    if (!ok) {
        ls_net_msg c;
        ls_relay_header_(&c, LS_NET_CHALLENGE, id);
        c.u.cookie = ls_relay_cookie_for_(r, from, id, k, bucket);
        size_t len = 0;
        if (ls_relay_seal_to_(r, p, k, from, &c, &len)) {
            r->st.packets_out++;
            r->st.bytes_out += len;
        }
        r->st.challenges++;
        return;
    }
    // Back from tick R: above every tick it was fanned out as gone for (no peer can
    // have simulated R: every live slot's inputs stop below R) and every final tick.
    uint32_t R = p->gone_tick > s->final_next ? p->gone_tick : s->final_next;
    for (uint32_t j = 0; j < s->def.slots; j++) {
        // Gone slots too (their input_next is their disconnect tick): then R is at least
        // every other slot's input_next in any ACK sent while k was gone, which is what
        // lets rollback peers confirm k's empty inputs up to there (SPEC.md §24.8).
        if (j != k && s->slot[j].input_next > R) {
            R = s->slot[j].input_next;
        }
    }
    // A peer that acknowledged k as gone holds k's empty inputs as far as it confirmed
    // them (SPEC.md §24.8), up to R at most, without a row from us: its claims up to R
    // count (else its ACKs stay clamped at d, the window's base with them, and the others
    // cannot reach R to upload the rejoiner's snapshot).
    for (uint32_t j = 0; j < s->def.slots; j++) {
        slot_st *q = &s->slot[j];
        if (j != k && ((uint32_t)q->peer_knows_gone >> k & 1u) && q->sent_next[k] < R) {
            q->sent_next[k] = R;
        }
    }
    p->gone = false;
    p->gap_from = p->gone_tick;
    p->gap_to = R;
    p->input_next = R;
    p->csum_next = R;
    p->csum_from = R;
    p->bound = true;
    p->addr = *from;
    p->last_heard = now;
    p->xfer = true;
    p->xfer_ok = false;
    p->refused = 0;
    p->wait_since = now;
    p->peer_knows_gone = 0;
    p->ack_due = false;
    uint32_t f = rejoin_floor(s, k);
    for (uint32_t j = 0; j < s->def.slots; j++) { // holds the others' rings until it loads
        p->peer_has[j] = p->peer_said[j] = p->sent_next[j] = f;
    }
    p->st.joined = true;
    p->st.disconnected = false;
    p->st.addr = *from;
    p->st.rejoins++;
    p->st.rejoin_tick = R;
    r->st.rejoins++;
    ls_relay_event ev = {LS_RELAY_EV_REJOINED, id, k, R, 0, 0, 0, 0};
    ls_relay_emit_(r, &ev);
    for (uint32_t j = 0; j < s->def.slots; j++) {
        if (s->slot[j].bound && !s->slot[j].gone) {
            ls_relay_send_rejoined_(r, s, id, j, k);
            s->slot[j].last_notice = now;
        }
    }
}

// No usable snapshot for rejoiner j: once every tick below its return tick R is
// final (the others wait at R, with the state of R), ask the lowest connected slot
// for its state of R (STATE_ACK, total 0), every 250 ms, a next slot each time.
// The uploader we turn away from: tell it to stop (its whole upload acknowledged), so an
// abandoned uploader does not keep sending its snapshot into the void.
static void stop_upload(ls_relay *r, session_st *s, uint32_t id)
{
    const slot_st *q = &s->slot[s->up_slot];
    if (!s->up_asked || !s->up_total || !q->bound || q->gone) {
        return; // nothing arrived from it (it stops on its own when it hears nothing)
    }
    ls_net_msg m;
    ls_relay_header_(&m, LS_NET_STATE_ACK, id);
    m.u.state_ack.tick = s->up_tick;
    m.u.state_ack.total = m.u.state_ack.next = s->up_total;
    ls_relay_send_to_(r, s, s->up_slot, &m);
}

// Ask a connected player for its state of the rejoiner's return tick R. The request is
// repeated to the same player while its upload moves (new in-order bytes within the last
// UPLOAD_STALL_US: under loss and jitter a 12 KB upload takes longer than one request
// period), and moves on to the next player not refused only when it stalls; a request
// restarts the upload from byte 0 on both sides.
#define UPLOAD_STALL_US 500000u
static void ask_upload(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint64_t now)
{
    slot_st *p = &s->slot[j];
    if (!s->up || s->final_next < p->gap_to || (s->up_asked && now - s->up_asked < 250000)) {
        return;
    }
    const slot_st *cur = &s->slot[s->up_slot];
    bool same = s->up_asked && s->up_tick == p->gap_to && s->up_slot != j && cur->bound &&
                !cur->gone && !cur->xfer && !(p->refused >> s->up_slot & 1u);
    if (same && now - s->up_progress < UPLOAD_STALL_US) {
        return; // it is coming
    }
    for (uint32_t i = 1; i <= s->def.slots; i++) {
        uint32_t u = (s->up_slot + i) % s->def.slots;
        const slot_st *q = &s->slot[u];
        if (u != j && q->bound && !q->gone && !q->xfer && !(p->refused >> u & 1u)) {
            if (u != s->up_slot) {
                stop_upload(r, s, id);
            }
            s->up_slot = u;
            s->up_tick = p->gap_to;
            s->up_total = s->up_next = 0;
            s->up_asked = s->up_progress = now;
            ls_net_msg m;
            ls_relay_header_(&m, LS_NET_STATE_ACK, id);
            m.u.state_ack.tick = s->up_tick;
            ls_relay_send_to_(r, s, u, &m);
            return;
        }
    }
}

// A chunk of the state we asked slot k for: keep the in-order bytes, acknowledge;
// once whole and its hash checks, it is the session's snapshot (a final tick's).
void ls_relay_on_state_chunk_(ls_relay *r, session_st *s, uint32_t id, uint32_t k,
                              const ls_net_msg *m)
{
    slot_st *p = &s->slot[k];
    if (!s->up || !s->up_asked || k != s->up_slot || m->u.state.tick != s->up_tick ||
        m->u.state.total > s->def.state_max || m->u.state.tick > s->final_next) {
        p->st.drops++;
        return;
    }
    if (s->up_total != m->u.state.total ||
        memcmp(s->up_hash, m->u.state.hash, LS_NET_STATE_HASH_SIZE) != 0) {
        s->up_total = m->u.state.total; // (re)start
        s->up_next = 0;
        memcpy(s->up_hash, m->u.state.hash, LS_NET_STATE_HASH_SIZE);
    }
    if (m->u.state.offset == s->up_next && s->up_next < s->up_total) {
        memcpy(s->up + s->up_next, m->u.state.data, m->u.state.len);
        s->up_next += m->u.state.len;
        s->up_progress = s->now;
        if (s->up_next == s->up_total) {
            uint8_t h[LS_NET_STATE_HASH_SIZE];
            crypto_generichash(h, sizeof h, s->up, s->up_total, NULL, 0);
            if (memcmp(h, s->up_hash, sizeof h) == 0 && s->snap) {
                memcpy(s->snap, s->up, s->up_total);
                memcpy(s->snap_hash, h, sizeof h);
                s->snap_len = s->up_total;
                s->snap_tick = s->up_tick;
                s->snap_ready = true;
                s->snap_source = (uint8_t)s->up_slot;
            } else {
                s->up_next = 0; // corrupt upload: take it again
            }
        }
    }
    ls_net_msg a;
    ls_relay_header_(&a, LS_NET_STATE_ACK, id);
    a.u.state_ack.tick = s->up_tick;
    a.u.state_ack.total = s->up_total;
    a.u.state_ack.next = s->up_next;
    ls_relay_send_to_(r, s, k, &a);
}

typedef struct to_slot {
    ls_relay *r;
    session_st *s;
    uint32_t id, j;
} to_slot;

static void chunk_to_slot(void *user, ls_net_msg *m)
{
    to_slot *t = user;
    m->h.session = t->id;
    ls_relay_send_to_(t->r, t->s, t->j, m);
}

// A rejoining slot: send it the snapshot (a usable one: a final tick at or above
// rejoin_floor), else ask the host for one (at most every 250 ms); with none within
// timeout_ms it is disconnected again, at its return tick.
void ls_relay_peer_state_(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint64_t now)
{
    slot_st *p = &s->slot[j];
    bool usable = s->snap_ready && s->snap_tick >= rejoin_floor(s, j) &&
                  s->snap_tick <= s->final_next && s->snap_tick <= p->gap_to &&
                  !(p->refused & source_bit(s->snap_source));
    if (p->xfer_ok && (!usable || p->xfer_tick != s->snap_tick)) {
        p->xfer_ok = false; // the snapshot was replaced: start over
    }
    if (!p->xfer_ok) {
        if (usable) {
            p->xfer_ok = true;
            p->xfer_tick = s->snap_tick;
            p->xfer_source = s->snap_source;
            p->state_next = p->state_sent = 0;
            p->last_state = 0;
        } else {
            if (now - p->wait_since > (uint64_t)s->def.timeout_ms * 1000) {
                ls_relay_disconnect_(r, s, id, j, LS_NET_KICKED, now);
                return;
            }
            if (!s->snap_asked || now - s->snap_asked >= 250000) {
                s->snap_asked = now;
                ls_relay_event ev = {LS_RELAY_EV_STATE_NEEDED, id, j, s->final_next, 0, 0, 0, 0};
                ls_relay_emit_(r, &ev);
            }
            ask_upload(r, s, id, j, now);
            return;
        }
    }
    ls_net_state_out out = {s->snap_tick, s->snap_len, s->snap, s->snap_hash};
    ls_net_state_progress at = {&p->state_next, &p->state_sent, &p->last_state};
    to_slot to = {r, s, id, j};
    ls_net_state_send_(&out, at, now, r->def.resend_us, chunk_to_slot, &to);
}

// The proof of the snapshot a rejoiner holds whole: the agreed checksum of the tick
// before it (SPEC.md §17.10), or NONE when there is none to prove against (tick 0, a
// disputed tick, or one no longer kept).
static void send_proof(ls_relay *r, session_st *s, uint32_t id, uint32_t j)
{
    const slot_st *p = &s->slot[j];
    uint32_t t = p->xfer_tick, i = (t - 1) % AGREED_RING;
    ls_net_msg m;
    ls_relay_header_(&m, LS_NET_STATE_PROOF, id);
    m.u.proof.tick = t;
    m.u.proof.source = p->xfer_source;
    m.u.proof.kind = LS_NET_PROOF_NONE;
    if (t > 0 && s->agreed_tag[i] == t) {
        m.u.proof.kind = LS_NET_PROOF_AGREED;
        m.u.proof.checksum = s->agreed[i];
    }
    ls_relay_send_to_(r, s, j, &m);
}

// The rejoiner's STATE_ACK: once it holds every byte, it gets every slot's inputs
// from the snapshot's tick on (the normal re-send from peer_said), and the proof; it
// repeats that ACK until it has loaded the snapshot, so each repeat gets the proof again.
void ls_relay_on_state_ack_(ls_relay *r, session_st *s, uint32_t id, uint32_t j,
                            const ls_net_msg *m)
{
    slot_st *p = &s->slot[j];
    if (!p->xfer_ok || m->u.state_ack.tick != p->xfer_tick) {
        return;
    }
    if (p->xfer) {
        if (m->u.state_ack.tick != s->snap_tick || m->u.state_ack.total != s->snap_len) {
            return;
        }
        uint32_t said = m->u.state_ack.next < p->state_sent ? m->u.state_ack.next : p->state_sent;
        p->state_next = said > p->state_next ? said : p->state_next;
        if (p->state_next == s->snap_len) {
            p->xfer = false;
            for (uint32_t k = 0; k < s->def.slots; k++) {
                p->peer_has[k] = p->peer_said[k] = p->sent_next[k] = p->xfer_tick;
                p->last_sent[k] = 0;
            }
            p->last_notice = 0;
            p->said_floor = p->xfer_tick; // a late ACK from before the load claims less
        }
    }
    if (!p->xfer && m->u.state_ack.total && m->u.state_ack.next == m->u.state_ack.total) {
        send_proof(r, s, id, j);
    }
}

// The rejoiner refused the snapshot: its state does not prove out against the agreed
// checksum. Never that source again for this rejoin; the session's snapshot is dropped
// if it is that one (late spectators would get the same lie); the rejoiner loads again,
// from another source, within a new timeout.
void ls_relay_on_state_proof_(ls_relay *r, session_st *s, uint32_t id, uint32_t j,
                              const ls_net_msg *m, uint64_t now)
{
    slot_st *p = &s->slot[j];
    if (m->u.proof.kind != LS_NET_PROOF_REFUSED || !p->xfer_ok || p->xfer ||
        m->u.proof.tick != p->xfer_tick || m->u.proof.source != p->xfer_source) {
        p->st.drops++;
        return;
    }
    uint32_t t = p->xfer_tick, i = (t - 1) % AGREED_RING;
    p->refused |= source_bit(p->xfer_source);
    ls_relay_event ev = {LS_RELAY_EV_SNAPSHOT_REFUSED,
                         id,
                         p->xfer_source,
                         t,
                         (uint16_t)(1u << j),
                         0,
                         t > 0 && s->agreed_tag[i] == t ? s->agreed[i] : 0,
                         m->u.proof.checksum};
    ls_relay_emit_(r, &ev);
    r->st.snapshots_refused++;
    if (s->snap_ready && s->snap_tick == t && s->snap_source == p->xfer_source) {
        s->snap_ready = false;
    }
    p->xfer = true;
    p->xfer_ok = false;
    p->wait_since = now;
    uint32_t f = rejoin_floor(s, j);
    for (uint32_t k = 0; k < s->def.slots; k++) { // holds the others' rings until it loads
        p->peer_has[k] = p->peer_said[k] = p->sent_next[k] = f;
    }
}
