// SPDX-License-Identifier: MIT
// The relay state machine (SPEC.md "Relay protocol"). Everything is driven by
// ls_relay_receive and ls_relay_poll; outputs are queued datagrams and events.
#include "ls/net_relay.h"

#include "ls/checksum.h"
#include "outbox.h"
#include "ratelimit.h"

#include <stdlib.h>
#include <string.h>

#define W          LS_NET_WINDOW
#define EVENTS_MAX 1024u

typedef struct slot_st {
    uint8_t token[LS_NET_TOKEN_SIZE];
    bool bound, gone;
    ls_net_addr addr;
    uint32_t gone_tick;
    uint8_t reason;
    uint32_t input_next;                 // relay holds this slot's inputs below this tick
    uint32_t csum_next;                  // relay holds this slot's checksums below this tick
    uint32_t peer_has[LS_NET_MAX_SLOTS]; // the peer holds slot s's inputs below this tick
    uint16_t peer_knows_gone;            // slots the peer acknowledged as gone
    uint64_t last_heard, last_ping, last_notice;
    uint64_t last_sent[LS_NET_MAX_SLOTS]; // last INPUT of slot s sent to this peer
    uint32_t ping_seq;
    bool ack_due; // an ACK is owed; sent once per poll, however many packets arrived
    ls_relay_peer_stats st;
} slot_st;

typedef struct session_st {
    bool used, done;
    ls_session_def def;
    uint64_t created;
    slot_st slot[LS_NET_MAX_SLOTS];
    uint8_t *inputs; // [slot][W][input_size]
    uint64_t *csum;  // [slot][W]
    uint32_t final_next;
    uint64_t now; // time of the latest receive or poll (for events raised inside finalize)
    ls_relay_recorder rec;
} session_st;

struct ls_relay {
    ls_relay_def def;
    session_st *sessions;
    uint32_t session_count;
    uint8_t secret[32];
    ls_net_outbox out;
    ls_relay_event events[EVENTS_MAX];
    uint32_t ev_head, ev_count;
    ls_net_ratelimit limit;
    ls_relay_stats st;
};

ls_relay_def ls_default_relay_def(void)
{
    ls_relay_def d = {64, 2000, 400, 20000, 250000, 10000000, 65536};
    return d;
}

ls_session_def ls_default_session_def(void)
{
    ls_session_def d = {4, 60, 1, 3, 0, 3000, 30000};
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
    if (!r->sessions ||
        ls_net_ratelimit_init(&r->limit, 1024, def->rate_limit_pps, def->rate_burst) != LS_OK) {
        ls_relay_destroy(r);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory for %u sessions", def->max_sessions);
        return NULL;
    }
    ls_result rr = ls_net_random_bytes(r->secret, sizeof r->secret);
    if (rr != LS_OK) {
        ls_relay_destroy(r);
        ls_error_set(err, rr, "no system randomness for the cookie secret");
        return NULL;
    }
    ls_error_clear(err);
    ls_net_outbox_init(&r->out, def->max_outbox);
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
    }
    free(r->sessions);
    ls_net_ratelimit_free(&r->limit);
    ls_net_outbox_free(&r->out);
    free(r);
}

static session_st *session_of(const ls_relay *r, uint32_t id)
{
    if (id < 1 || id > r->session_count || !r->sessions[id - 1].used) {
        return NULL;
    }
    return &r->sessions[id - 1];
}

ls_result ls_relay_session_create(ls_relay *r, const ls_session_def *def, uint64_t now_us,
                                  uint32_t *id)
{
    if (!def || def->slots < 2 || def->slots > LS_NET_MAX_SLOTS || def->tick_rate < 1 ||
        def->tick_rate > 1000 || def->input_size < 1 || def->input_size > LS_NET_MAX_INPUT_SIZE ||
        def->delay > LS_NET_MAX_DELAY || def->timeout_ms < 10) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    if (r->session_count >= r->def.max_sessions) {
        return LS_ERR_CAPACITY;
    }
    session_st *s = &r->sessions[r->session_count];
    memset(s, 0, sizeof *s);
    s->inputs = calloc((size_t)def->slots * W, def->input_size);
    s->csum = calloc((size_t)def->slots * W, sizeof *s->csum);
    if (!s->inputs || !s->csum) {
        free(s->inputs);
        free(s->csum);
        s->inputs = NULL;
        s->csum = NULL;
        return LS_ERR_NO_MEMORY;
    }
    s->def = *def;
    s->created = now_us;
    for (uint32_t k = 0; k < def->slots; k++) {
        slot_st *p = &s->slot[k];
        if (ls_net_random_bytes(p->token, sizeof p->token) != LS_OK) {
            free(s->inputs);
            free(s->csum);
            s->inputs = NULL;
            s->csum = NULL;
            return LS_ERR_IO;
        }
        p->input_next = def->delay;
        for (uint32_t j = 0; j < LS_NET_MAX_SLOTS; j++) {
            p->peer_has[j] = def->delay;
        }
    }
    s->used = true;
    r->session_count++;
    *id = r->session_count;
    return LS_OK;
}

ls_result ls_relay_session_token(const ls_relay *r, uint32_t id, uint32_t slot,
                                 uint8_t out[LS_NET_TOKEN_SIZE])
{
    const session_st *s = session_of(r, id);
    if (!s || slot >= s->def.slots) {
        return LS_ERR_NOT_FOUND;
    }
    memcpy(out, s->slot[slot].token, LS_NET_TOKEN_SIZE);
    return LS_OK;
}

ls_result ls_relay_session_set_recorder(ls_relay *r, uint32_t id, const ls_relay_recorder *rec)
{
    session_st *s = session_of(r, id);
    if (!s || !rec) {
        return LS_ERR_NOT_FOUND;
    }
    s->rec = *rec;
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
    return true;
}

uint32_t ls_relay_session_final_ticks(const ls_relay *r, uint32_t id)
{
    const session_st *s = session_of(r, id);
    return s ? s->final_next : 0;
}

static void emit(ls_relay *r, const ls_relay_event *ev)
{
    if (r->ev_count == EVENTS_MAX) { // drop the oldest: events are for logs, state is in stats
        r->ev_head = (r->ev_head + 1) % EVENTS_MAX;
        r->ev_count--;
    }
    r->events[(r->ev_head + r->ev_count) % EVENTS_MAX] = *ev;
    r->ev_count++;
}

static void send_to(ls_relay *r, session_st *s, uint32_t to, ls_net_msg *m)
{
    slot_st *p = &s->slot[to];
    memcpy(m->h.token, p->token, LS_NET_TOKEN_SIZE);
    size_t before = r->out.count;
    if (ls_net_outbox_push(&r->out, &p->addr, m)) {
        size_t len = r->out.items[(r->out.head + before) % r->out.cap].len;
        r->st.packets_out++;
        r->st.bytes_out += len;
        p->st.packets_out++;
        p->st.bytes_out += len;
    } else {
        r->st.outbox_dropped++;
    }
}

static void header(ls_net_msg *m, uint8_t type, uint32_t session, uint32_t slot)
{
    memset(m, 0, sizeof *m);
    m->h.type = type;
    m->h.session = session;
    m->h.slot = (uint8_t)slot;
}

// Inputs below D, and those of a gone slot from its disconnect tick, are empty.
static const uint8_t *input_at(const session_st *s, uint32_t k, uint32_t t)
{
    static const uint8_t empty[LS_NET_MAX_INPUT_SIZE];
    const slot_st *p = &s->slot[k];
    if (t < s->def.delay || (p->gone && t >= p->gone_tick)) {
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
            if (q->gone && p->peer_has[k] >= q->gone_tick) {
                continue; // holds everything the gone slot will ever have
            }
            if (k != j && p->peer_has[k] < base) {
                base = p->peer_has[k];
            }
        }
    }
    return base;
}

static uint32_t batch_cap(uint32_t input_size)
{
    uint32_t n = (LS_NET_MAX_DATAGRAM - LS_NET_HEADER_SIZE - 8) / input_size;
    return n < LS_NET_MAX_BATCH ? n : LS_NET_MAX_BATCH;
}

static void send_inputs(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint32_t k,
                        uint64_t now)
{
    slot_st *p = &s->slot[j];
    uint32_t from = p->peer_has[k], to = s->slot[k].input_next;
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
    header(&m, LS_NET_INPUT, id, k);
    m.u.input.first_tick = from;
    m.u.input.count = (uint16_t)n;
    m.u.input.input_size = (uint8_t)s->def.input_size;
    m.u.input.data = data;
    send_to(r, s, j, &m);
    p->last_sent[k] = now;
}

static void send_ack(ls_relay *r, session_st *s, uint32_t id, uint32_t j)
{
    ls_net_msg m;
    header(&m, LS_NET_ACK, id, j);
    m.u.ack.checksum_next = s->slot[j].csum_next;
    m.u.ack.count = (uint8_t)s->def.slots;
    for (uint32_t k = 0; k < s->def.slots; k++) {
        m.u.ack.input_next[k] = s->slot[k].input_next;
        if (s->slot[k].gone) {
            m.u.ack.disconnected |= (uint16_t)(1u << k);
        }
    }
    send_to(r, s, j, &m);
}

static void send_notice(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint32_t k)
{
    ls_net_msg m;
    header(&m, LS_NET_DISCONNECT, id, k);
    m.u.disconnect.tick = s->slot[k].gone_tick;
    m.u.disconnect.reason = s->slot[k].reason;
    send_to(r, s, j, &m);
}

static void send_welcome(ls_relay *r, session_st *s, uint32_t id, uint32_t j)
{
    ls_net_msg m;
    header(&m, LS_NET_WELCOME, id, j);
    m.u.welcome.slots = (uint8_t)s->def.slots;
    m.u.welcome.input_size = (uint8_t)s->def.input_size;
    m.u.welcome.delay = (uint8_t)s->def.delay;
    m.u.welcome.tick_rate = (uint16_t)s->def.tick_rate;
    m.u.welcome.ticks = s->def.ticks;
    m.u.welcome.timeout_ms = s->def.timeout_ms;
    send_to(r, s, j, &m);
}

static void end_session(ls_relay *r, session_st *s, uint32_t id)
{
    s->done = true;
    if (s->rec.end) {
        s->rec.end(s->rec.user, id, s->final_next);
    }
    ls_relay_event ev = {LS_RELAY_EV_SESSION_DONE, id, 0, s->final_next, 0, 0, 0, 0};
    emit(r, &ev);
}

// The agreed checksum of a tick: the value most slots reported; a tie goes to
// the value of the lowest slot among the tied (a total order, no hash order).
static uint64_t majority(const uint64_t *v, const bool *have, uint32_t n)
{
    uint32_t best_count = 0;
    uint64_t best = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!have[i]) {
            continue;
        }
        uint32_t c = 0;
        for (uint32_t j = 0; j < n; j++) {
            c += have[j] && v[j] == v[i];
        }
        if (c > best_count) {
            best_count = c;
            best = v[i];
        }
    }
    return best;
}

static void desync(ls_relay *r, session_st *s, uint32_t id, uint32_t t, uint16_t mask,
                   uint64_t agreed, uint64_t got)
{
    r->st.desyncs++;
    ls_relay_event ev = {LS_RELAY_EV_DESYNC, id, 0, t, mask, 0, agreed, got};
    emit(r, &ev);
    for (uint32_t j = 0; j < s->def.slots; j++) {
        if (s->slot[j].bound && !s->slot[j].gone) {
            ls_net_msg m;
            header(&m, LS_NET_DESYNC, id, j);
            m.u.desync.tick = t;
            m.u.desync.slots = mask;
            m.u.desync.expected = agreed;
            send_to(r, s, j, &m);
        }
    }
}

static void disconnect(ls_relay *r, session_st *s, uint32_t id, uint32_t k, uint8_t reason,
                       uint64_t now);

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
                    disconnect(r, s, id, k, LS_NET_KICKED, s->now);
                }
                return; // wait for this slot's checksum
            }
            have[k] = p->csum_next > t;
            v[k] = have[k] ? s->csum[(size_t)k * W + t % W] : 0;
            nhave += have[k];
        }
        if (nhave == 0) {
            if (!any_live) {
                end_session(r, s, id);
            }
            return;
        }
        uint64_t agreed = majority(v, have, n), got = 0;
        uint16_t mask = 0;
        for (uint32_t k = 0; k < n; k++) {
            if (have[k] && v[k] != agreed) {
                got = mask ? got : v[k];
                mask |= (uint16_t)(1u << k);
            }
        }
        if (mask) {
            desync(r, s, id, t, mask, agreed, got);
        }
        if (s->rec.tick) {
            uint8_t row[LS_NET_MAX_SLOTS * LS_NET_MAX_INPUT_SIZE];
            for (uint32_t k = 0; k < n; k++) {
                memcpy(row + (size_t)k * s->def.input_size, input_at(s, k, t), s->def.input_size);
            }
            s->rec.tick(s->rec.user, id, t, row, agreed);
        }
        s->final_next = t + 1;
    }
}

static void disconnect(ls_relay *r, session_st *s, uint32_t id, uint32_t k, uint8_t reason,
                       uint64_t now)
{
    slot_st *p = &s->slot[k];
    if (p->gone) {
        return;
    }
    p->gone = true;
    p->gone_tick = p->input_next;
    p->reason = reason;
    p->st.disconnected = true;
    p->st.disconnect_tick = p->gone_tick;
    p->st.reason = reason;
    ls_relay_event ev = {LS_RELAY_EV_DISCONNECTED, id, k, p->gone_tick, 0, reason, 0, 0};
    emit(r, &ev);
    for (uint32_t j = 0; j < s->def.slots; j++) {
        if (s->slot[j].bound && (j == k || !s->slot[j].gone)) {
            send_notice(r, s, id, j, k);
            s->slot[j].last_notice = now;
        }
    }
    finalize(r, s, id);
}

static uint64_t cookie_for(const ls_relay *r, const ls_net_addr *a, uint32_t id, uint32_t slot,
                           uint64_t bucket)
{
    ls_hasher h;
    ls_hasher_init(&h);
    ls_hasher_put_bytes(&h, r->secret, sizeof r->secret);
    ls_hasher_put_bytes(&h, &a->family, 1);
    ls_hasher_put_bytes(&h, a->ip, sizeof a->ip);
    ls_hasher_put_u32(&h, a->port);
    ls_hasher_put_u32(&h, id);
    ls_hasher_put_u32(&h, slot);
    ls_hasher_put_u64(&h, bucket);
    uint64_t c = ls_hasher_digest(&h);
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
    bool ok = m->u.cookie != 0 &&
              (m->u.cookie == cookie_for(r, from, id, m->h.slot, bucket) ||
               (bucket > 0 && m->u.cookie == cookie_for(r, from, id, m->h.slot, bucket - 1)));
    if (!ok) {
        // Unverified source: answer with a CHALLENGE, smaller than the padded JOIN,
        // to the claimed address only (no amplification).
        ls_net_msg c;
        header(&c, LS_NET_CHALLENGE, id, m->h.slot);
        memcpy(c.h.token, m->h.token, LS_NET_TOKEN_SIZE);
        c.u.cookie = cookie_for(r, from, id, m->h.slot, bucket);
        if (ls_net_outbox_push(&r->out, from, &c)) {
            r->st.packets_out++;
            r->st.bytes_out += LS_NET_HEADER_SIZE + 8;
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
    emit(r, &ev);
    send_welcome(r, s, id, m->h.slot);
}

static void on_input(ls_relay *r, session_st *s, uint32_t id, uint32_t k, const ls_net_msg *m,
                     uint64_t now)
{
    slot_st *p = &s->slot[k];
    if (m->u.input.input_size != s->def.input_size) {
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
        if (j != k && s->slot[j].bound && !s->slot[j].gone) {
            send_inputs(r, s, id, j, k, now);
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

static void on_ack(session_st *s, uint32_t j, const ls_net_msg *m)
{
    slot_st *p = &s->slot[j];
    if (m->u.ack.count != s->def.slots) {
        p->st.drops++;
        return;
    }
    for (uint32_t k = 0; k < s->def.slots; k++) {
        uint32_t v = m->u.ack.input_next[k];
        v = v < s->slot[k].input_next ? v : s->slot[k].input_next; // never beyond what exists
        if (v > p->peer_has[k]) {
            p->peer_has[k] = v;
        }
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

static bool token_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0; // constant time: no early exit that would time the token byte by byte
    for (int i = 0; i < LS_NET_TOKEN_SIZE; i++) {
        d |= (uint8_t)(a[i] ^ b[i]);
    }
    return d == 0;
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
        disconnect(r, s, id, k, LS_NET_LEFT, now);
        break;
    case LS_NET_PING: {
        ls_net_msg pong = *m;
        pong.h.type = LS_NET_PONG;
        send_to(r, s, k, &pong);
        break;
    }
    case LS_NET_PONG:
        on_pong(p, m, now);
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
    if (!ls_net_ratelimit_allow(&r->limit, from, now)) {
        r->st.rate_limited++;
        return;
    }
    ls_net_msg m;
    if (ls_net_decode(data, len, &m, NULL) != LS_OK) {
        r->st.malformed++;
        return;
    }
    session_st *s = session_of(r, m.h.session);
    if (!s) {
        r->st.no_session++;
        return;
    }
    if (m.h.slot >= s->def.slots) {
        r->st.malformed++;
        return;
    }
    slot_st *p = &s->slot[m.h.slot];
    s->now = now;
    if (!token_equal(m.h.token, p->token)) {
        r->st.bad_token++;
        p->st.drops++;
        return;
    }
    if (m.h.type == LS_NET_JOIN) {
        on_join(r, s, m.h.session, from, &m, now);
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

static void poll_peer(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint64_t now)
{
    slot_st *p = &s->slot[j];
    if (p->ack_due) {
        send_ack(r, s, id, j);
        p->ack_due = false;
    }
    if (now >= p->last_heard && now - p->last_heard > (uint64_t)s->def.timeout_ms * 1000) {
        disconnect(r, s, id, j, LS_NET_TIMEOUT, now);
        return;
    }
    for (uint32_t k = 0; k < s->def.slots; k++) {
        if (k != j && p->peer_has[k] < s->slot[k].input_next &&
            now - p->last_sent[k] >= r->def.resend_us) {
            send_inputs(r, s, id, j, k, now);
        }
    }
    if (now - p->last_notice >= r->def.resend_us) {
        for (uint32_t k = 0; k < s->def.slots; k++) {
            if (k != j && s->slot[k].gone && !(p->peer_knows_gone & (1u << k))) {
                send_notice(r, s, id, j, k);
                p->last_notice = now;
            }
        }
    }
    if (now - p->last_ping >= r->def.ping_interval_us) {
        ls_net_msg m;
        header(&m, LS_NET_PING, id, j);
        m.u.ping.time = now;
        m.u.ping.seq = ++p->ping_seq;
        send_to(r, s, j, &m);
        p->last_ping = now;
    }
}

void ls_relay_poll(ls_relay *r, uint64_t now)
{
    for (uint32_t i = 0; i < r->session_count; i++) {
        session_st *s = &r->sessions[i];
        uint32_t id = i + 1;
        s->now = now;
        for (uint32_t j = 0; j < s->def.slots; j++) {
            slot_st *p = &s->slot[j];
            if (p->gone) {
                continue;
            }
            if (p->bound) {
                poll_peer(r, s, id, j, now);
            } else if (s->def.join_timeout_ms &&
                       now - s->created > (uint64_t)s->def.join_timeout_ms * 1000) {
                disconnect(r, s, id, j, LS_NET_TIMEOUT, now);
            }
        }
    }
}

bool ls_relay_next_datagram(ls_relay *r, ls_net_datagram *out)
{
    return ls_net_outbox_pop(&r->out, out);
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
