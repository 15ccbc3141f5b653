// SPDX-License-Identifier: MIT
// The lockstep peer state machine (SPEC.md "Relay protocol", "Lockstep peers").
#include "ls/net_peer.h"

#include "outbox.h"

#include <stdlib.h>
#include <string.h>

#define W LS_NET_WINDOW

struct ls_peer {
    ls_peer_def def;
    ls_peer_state state;
    ls_net_msg welcome;
    uint32_t slots, isz, delay, rate, ticks;
    uint64_t cookie;
    bool joined_once;
    uint64_t last_join, last_input_send, last_csum_send, last_ack_send, last_ping, origin;
    uint32_t ping_seq;
    bool ack_dirty;
    uint32_t produced;                    // our inputs exist for ticks below delay + produced
    uint32_t own_acked;                   // the relay holds our inputs below this tick
    uint32_t have[LS_NET_MAX_SLOTS];      // we hold slot k's inputs below this tick
    bool gone[LS_NET_MAX_SLOTS];          // slot k is disconnected ...
    uint32_t gone_tick[LS_NET_MAX_SLOTS]; // ... from this tick on
    uint32_t simulated;                   // ticks advanced
    uint32_t csum_acked;                  // the relay holds our checksums below this tick
    uint8_t *inputs;                      // [slot][W][isz]
    uint64_t csum[W];
    uint64_t last_csum;
    ls_net_outbox out;
    ls_peer_stats st;
};

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
    if (def->mode != LS_PEER_LOCKSTEP) {
        return "mode: only LS_PEER_LOCKSTEP is implemented";
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
    return NULL;
}

ls_peer *ls_peer_create(const ls_peer_def *def, ls_error *err)
{
    const char *problem = peer_def_problem(def);
    if (problem) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "%s", problem);
        return NULL;
    }
    ls_peer *p = calloc(1, sizeof *p);
    if (!p) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    p->def = *def;
    p->state = LS_PEER_JOINING;
    ls_net_outbox_init(&p->out, 4096);
    ls_error_clear(err);
    return p;
}

void ls_peer_destroy(ls_peer *p)
{
    if (!p) {
        return;
    }
    free(p->inputs);
    ls_net_outbox_free(&p->out);
    free(p);
}

static void emit(ls_peer *p, const ls_peer_event *ev)
{
    if (p->def.cb.on_event) {
        p->def.cb.on_event(p->def.cb.user, ev);
    }
}

static void send_msg(ls_peer *p, ls_net_msg *m, uint8_t type)
{
    m->h.type = type;
    m->h.session = p->def.session;
    m->h.slot = (uint8_t)p->def.slot;
    memcpy(m->h.token, p->def.token, LS_NET_TOKEN_SIZE);
    size_t before = p->out.count;
    if (ls_net_outbox_push(&p->out, &p->def.relay, m)) {
        p->st.packets_out++;
        p->st.bytes_out += p->out.items[(p->out.head + before) % p->out.cap].len;
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

static uint8_t *slot_input(ls_peer *p, uint32_t k, uint32_t t)
{
    return p->inputs + ((size_t)k * W + t % W) * p->isz;
}

static uint32_t batch_cap(uint32_t input_size)
{
    uint32_t n = (LS_NET_MAX_DATAGRAM - LS_NET_HEADER_SIZE - 8) / input_size;
    return n < LS_NET_MAX_BATCH ? n : LS_NET_MAX_BATCH;
}

static void on_welcome(ls_peer *p, const ls_net_msg *m, uint64_t now)
{
    if (p->state != LS_PEER_JOINING || p->def.slot >= m->u.welcome.slots) {
        return;
    }
    p->inputs = calloc((size_t)m->u.welcome.slots * W, m->u.welcome.input_size);
    if (!p->inputs) {
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
    p->origin = now;
    p->state = LS_PEER_RUNNING;
    ls_peer_event ev = {LS_PEER_EV_WELCOME, p->def.slot, 0, 0, 0, 0};
    emit(p, &ev);
}

static void on_input(ls_peer *p, const ls_net_msg *m)
{
    uint32_t k = m->h.slot;
    if (k >= p->slots || k == p->def.slot || m->u.input.input_size != p->isz) {
        p->st.dropped++;
        return;
    }
    for (uint32_t i = 0; i < m->u.input.count; i++) {
        uint32_t t = m->u.input.first_tick + i;
        if (t < p->have[k]) {
            p->st.duplicates++;
            continue;
        }
        if (t > p->have[k] || t >= p->simulated + W) {
            break;
        }
        memcpy(slot_input(p, k, t), m->u.input.data + (size_t)i * p->isz, p->isz);
        p->have[k] = t + 1;
    }
    p->ack_dirty = true;
}

static void on_ack(ls_peer *p, const ls_net_msg *m)
{
    if (m->u.ack.count != p->slots) {
        p->st.dropped++;
        return;
    }
    uint32_t mine = m->u.ack.input_next[p->def.slot], own_end = p->delay + p->produced;
    mine = mine < own_end ? mine : own_end;
    p->own_acked = mine > p->own_acked ? mine : p->own_acked;
    uint32_t c = m->u.ack.checksum_next < p->simulated ? m->u.ack.checksum_next : p->simulated;
    p->csum_acked = c > p->csum_acked ? c : p->csum_acked;
}

static void on_disconnect(ls_peer *p, const ls_net_msg *m)
{
    uint32_t k = m->h.slot;
    p->ack_dirty = true;
    if (k >= p->slots) {
        return;
    }
    if (k == p->def.slot) {
        if (p->state != LS_PEER_LEFT) {
            p->state = LS_PEER_LEFT;
            ls_peer_event ev = {LS_PEER_EV_DISCONNECTED, k, m->u.disconnect.tick, 0,
                                m->u.disconnect.reason,  0};
            emit(p, &ev);
        }
        return;
    }
    if (p->gone[k] || m->u.disconnect.tick < p->have[k]) {
        return; // known already, or a tick before inputs we hold (cannot be: ignore)
    }
    p->gone[k] = true;
    p->gone_tick[k] = m->u.disconnect.tick;
    ls_peer_event ev = {LS_PEER_EV_DISCONNECTED, k, m->u.disconnect.tick, 0,
                        m->u.disconnect.reason,  0};
    emit(p, &ev);
}

void ls_peer_receive(ls_peer *p, const uint8_t *data, size_t len, uint64_t now)
{
    ls_net_msg m;
    if (ls_net_decode(data, len, &m, NULL) != LS_OK || m.h.session != p->def.session ||
        memcmp(m.h.token, p->def.token, LS_NET_TOKEN_SIZE) != 0) {
        p->st.dropped++;
        return;
    }
    p->st.packets_in++;
    p->st.bytes_in += len;
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
    switch (m.h.type) {
    case LS_NET_INPUT:
        on_input(p, &m);
        break;
    case LS_NET_ACK:
        on_ack(p, &m);
        break;
    case LS_NET_DESYNC:
        if (p->st.desyncs++ == 0) {
            p->st.first_desync = m.u.desync.tick;
        }
        {
            ls_peer_event ev = {LS_PEER_EV_DESYNC, 0, m.u.desync.tick,
                                m.u.desync.slots,  0, m.u.desync.expected};
            emit(p, &ev);
        }
        break;
    case LS_NET_DISCONNECT:
        on_disconnect(p, &m);
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

// Time sync: if the other peers' inputs run ahead of ours, our clock is late
// (we joined later); move its origin back one tick so we catch up gradually.
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
        p->produced < p->simulated + p->def.max_lead) {
        p->origin -= 1000000u / p->rate;
        p->st.clock_shifts++;
    }
}

static bool produce(ls_peer *p, uint64_t now)
{
    uint64_t clock = now > p->origin ? (now - p->origin) * p->rate / 1000000u : 0;
    bool any = false;
    for (;;) {
        uint32_t t = p->delay + p->produced;
        if ((p->ticks && t >= p->ticks) || p->produced > clock ||
            p->produced >= p->simulated + p->def.max_lead || t >= p->own_acked + W ||
            t >= p->simulated + W) {
            return any;
        }
        uint8_t *buf = slot_input(p, p->def.slot, t);
        memset(buf, 0, p->isz);
        p->def.cb.local_input(p->def.cb.user, t, buf, p->isz);
        p->produced++;
        p->have[p->def.slot] = t + 1;
        any = true;
    }
}

static bool known(const ls_peer *p, uint32_t k, uint32_t t)
{
    return t < p->delay || (p->gone[k] && t >= p->gone_tick[k]) || t < p->have[k];
}

static bool advance(ls_peer *p)
{
    bool any = false;
    uint8_t row[LS_NET_MAX_SLOTS * LS_NET_MAX_INPUT_SIZE];
    while ((!p->ticks || p->simulated < p->ticks) && p->simulated < p->csum_acked + W) {
        uint32_t t = p->simulated;
        for (uint32_t k = 0; k < p->slots; k++) {
            if (!known(p, k, t)) {
                p->st.stalls++;
                return any;
            }
            uint8_t *dst = row + (size_t)k * p->isz;
            if (t < p->delay || (p->gone[k] && t >= p->gone_tick[k])) {
                memset(dst, 0, p->isz); // the defined empty input
            } else {
                memcpy(dst, slot_input(p, k, t), p->isz);
            }
        }
        uint64_t c = p->def.cb.advance(p->def.cb.user, t, row, p->slots, p->isz);
        p->csum[t % W] = c;
        p->last_csum = c;
        p->simulated = t + 1;
        any = true;
    }
    return any;
}

static void send_inputs(ls_peer *p, uint64_t now)
{
    uint32_t from = p->own_acked, to = p->delay + p->produced;
    if (from >= to) {
        return;
    }
    uint32_t n = to - from, cap = batch_cap(p->isz);
    n = n < cap ? n : cap;
    uint8_t data[LS_NET_MAX_DATAGRAM];
    for (uint32_t i = 0; i < n; i++) {
        memcpy(data + (size_t)i * p->isz, slot_input(p, p->def.slot, from + i), p->isz);
    }
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.input.first_tick = from;
    m.u.input.count = (uint16_t)n;
    m.u.input.input_size = (uint8_t)p->isz;
    m.u.input.data = data;
    send_msg(p, &m, LS_NET_INPUT);
    p->last_input_send = now;
}

static void send_checksums(ls_peer *p, uint64_t now)
{
    uint32_t from = p->csum_acked, to = p->simulated;
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

static void check_finished(ls_peer *p)
{
    if (p->state == LS_PEER_RUNNING && p->ticks && p->simulated >= p->ticks &&
        p->csum_acked >= p->ticks && p->own_acked >= p->ticks) {
        p->state = LS_PEER_FINISHED;
        ls_peer_event ev = {LS_PEER_EV_FINISHED, p->def.slot, p->simulated, 0, 0, 0};
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
    if (p->state != LS_PEER_RUNNING) {
        return;
    }
    time_sync(p);
    bool new_input = produce(p, now);
    bool new_csum = advance(p);
    new_input |= produce(p, now); // advancing may have lifted the lead bound
    if (new_input || now - p->last_input_send >= p->def.resend_us) {
        send_inputs(p, now);
    }
    if (new_csum || now - p->last_csum_send >= p->def.resend_us) {
        send_checksums(p, now);
    }
    if (p->ack_dirty || now - p->last_ack_send >= 5u * p->def.resend_us) {
        send_ack(p, now);
    }
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
    if (p->state == LS_PEER_LEFT) {
        return;
    }
    for (int i = 0; i < 3; i++) { // no ack for goodbye: send it redundantly
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        m.u.disconnect.tick = p->delay + p->produced;
        m.u.disconnect.reason = LS_NET_LEFT;
        send_msg(p, &m, LS_NET_DISCONNECT);
    }
    p->state = LS_PEER_LEFT;
}

bool ls_peer_next_datagram(ls_peer *p, ls_net_datagram *out)
{
    return ls_net_outbox_pop(&p->out, out);
}

ls_peer_state ls_peer_state_get(const ls_peer *p)
{
    return p->state;
}

uint32_t ls_peer_ticks(const ls_peer *p)
{
    return p->simulated;
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
    return p->st;
}
