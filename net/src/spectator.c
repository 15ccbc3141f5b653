// SPDX-License-Identifier: MIT
// The spectator's state machine (ls/net_spectator.h, SPEC.md §17.10). Every
// datagram is verified (tag under the spectator's key, replay window, session
// and index) before it is used; rows of final ticks are held in a fixed ring
// and simulated in tick order. No allocation after creation.
#include "ls/net_spectator.h"

#include "auth.h"
#include "outbox.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define RING    256u // rows held ahead of the simulation (the relay keeps fewer in flight)
#define ROW_MAX LS_NET_CONFIRMED_ROW(LS_NET_MAX_SLOTS, LS_NET_MAX_INPUT_SIZE)

struct ls_spectator {
    ls_spectator_def def;
    ls_spectator_state state;
    ls_net_outbox out;
    ls_net_replay rx;
    uint64_t tx_seq, cookie, last_join, last_ack;
    bool ack_due;
    uint32_t slots, input_size, ticks; // from WELCOME (ticks 0: open-ended)
    uint32_t row_size;
    uint32_t sim_next;  // next tick to simulate
    uint32_t recv_next; // every row below this is held
    uint16_t present;   // presence of the last simulated tick
    uint64_t last_checksum;
    uint32_t held[RING]; // tick stored in each ring position (UINT32_MAX: none)
    uint8_t *rows;       // [RING][ROW_MAX]
    uint8_t *snap;       // [def.state_max]: a snapshot being received (NULL without cb.load)
    uint32_t snap_tick, snap_total, snap_next;
    uint8_t snap_hash[LS_NET_STATE_HASH_SIZE];
    bool state_ack_due;
    ls_spectator_stats st;
};

ls_spectator_def ls_default_spectator_def(void)
{
    ls_spectator_def d;
    memset(&d, 0, sizeof d);
    d.max_ticks_per_poll = 64;
    d.join_retry_us = 250000;
    d.ack_interval_us = 50000;
    d.state_max = 256u << 10;
    return d;
}

ls_result ls_spectator_def_set_credential(ls_spectator_def *def, const ls_net_credential *cred)
{
    if (!def || !cred || cred->role != LS_NET_ROLE_SPECTATOR || cred->slot >= LS_NET_MAX_SLOTS) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    def->session = cred->session;
    def->index = cred->slot;
    memcpy(def->key, cred->key, LS_NET_KEY_SIZE);
    return LS_OK;
}

ls_spectator *ls_spectator_create(const ls_spectator_def *def, ls_error *err)
{
    static const uint8_t zero[LS_NET_KEY_SIZE];
    const char *problem = !def                                       ? "no spectator definition"
                          : !def->cb.advance                         ? "cb.advance is required"
                          : def->session < 1                         ? "session must be >= 1"
                          : def->index >= LS_NET_MAX_SLOTS           ? "index must be 0..15"
                          : memcmp(def->key, zero, sizeof zero) == 0 ? "key is all zero"
                          : def->max_ticks_per_poll < 1 ? "max_ticks_per_poll must be >= 1"
                          : def->join_retry_us < 1000 || def->ack_interval_us < 1000
                              ? "join_retry_us and ack_interval_us must be >= 1000"
                          : def->state_max > LS_NET_STATE_MAX ? "state_max must be <= 16 MiB"
                                                              : NULL;
    if (problem) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "%s", problem);
        return NULL;
    }
    if (!ls_net_auth_init_()) {
        ls_error_set(err, LS_ERR_IO, "libsodium failed to initialise");
        return NULL;
    }
    ls_spectator *v = calloc(1, sizeof *v);
    uint8_t *rows = malloc((size_t)RING * ROW_MAX);
    bool want_snap = def->cb.load && def->state_max;
    uint8_t *snap = want_snap ? malloc(def->state_max) : NULL;
    if (!v || !rows || (want_snap && !snap)) {
        free(v);
        free(rows);
        free(snap);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    v->def = *def;
    v->rows = rows;
    v->snap = snap;
    for (uint32_t i = 0; i < RING; i++) {
        v->held[i] = UINT32_MAX;
    }
    ls_net_outbox_init_(&v->out, 4096);
    v->last_join = UINT64_MAX; // send the first SPECTATE at the first poll
    ls_error_clear(err);
    return v;
}

void ls_spectator_destroy(ls_spectator *v)
{
    if (!v) {
        return;
    }
    ls_net_auth_wipe_(v->def.key, LS_NET_KEY_SIZE);
    ls_net_outbox_free_(&v->out);
    free(v->rows);
    free(v->snap);
    free(v);
}

static void emit(ls_spectator *v, const ls_spectator_event *ev)
{
    if (v->def.cb.on_event) {
        v->def.cb.on_event(v->def.cb.user, ev);
    }
}

static void send_msg(ls_spectator *v, ls_net_msg *m)
{
    size_t len =
        ls_net_outbox_send_(&v->out, &v->def.relay, m, LS_NET_ROLE_SPECTATOR, v->def.session,
                            v->def.index, &v->tx_seq, v->def.key, LS_NET_TO_RELAY);
    if (len) {
        v->st.packets_out++;
        v->st.bytes_out += len;
    }
}

static void send_type(ls_spectator *v, uint8_t type)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = type;
    if (type == LS_NET_SPECTATE) {
        m.u.cookie = v->cookie;
    } else if (type == LS_NET_ACK) {
        m.u.ack.count = 1;
        m.u.ack.input_next[0] = v->recv_next;
    }
    send_msg(v, &m);
}

static void on_rows(ls_spectator *v, const ls_net_msg *m)
{
    if (m->u.confirmed.slots != v->slots || m->u.confirmed.input_size != v->input_size) {
        v->st.dropped++;
        return;
    }
    for (uint32_t i = 0; i < m->u.confirmed.count; i++) {
        uint32_t t = m->u.confirmed.first_tick + i;
        if (t < v->recv_next || v->held[t % RING] == t) {
            v->st.duplicates++;
            continue;
        }
        if (t >= v->sim_next + RING) {
            break; // beyond the ring: the relay re-sends once we acknowledge
        }
        memcpy(v->rows + (size_t)(t % RING) * ROW_MAX,
               m->u.confirmed.rows + (size_t)i * v->row_size, v->row_size);
        v->held[t % RING] = t;
    }
    while (v->held[v->recv_next % RING] == v->recv_next) {
        v->recv_next++;
    }
    v->st.received_next = v->recv_next;
    v->ack_due = true;
}

// One chunk of the relay's snapshot; once whole and its hash right, load it and go
// on from its tick (rows below it are no longer needed).
static void on_chunk(ls_spectator *v, const ls_net_msg *m)
{
    if (!v->snap || m->u.state.total > v->def.state_max) {
        v->st.dropped++;
        return;
    }
    if (m->u.state.tick != v->snap_tick || m->u.state.total != v->snap_total ||
        memcmp(m->u.state.hash, v->snap_hash, LS_NET_STATE_HASH_SIZE) != 0) {
        v->snap_tick = m->u.state.tick; // a new snapshot: start over
        v->snap_total = m->u.state.total;
        v->snap_next = 0;
        memcpy(v->snap_hash, m->u.state.hash, LS_NET_STATE_HASH_SIZE);
    }
    v->state_ack_due = true;
    if (m->u.state.offset != v->snap_next || v->snap_next == v->snap_total) {
        return; // out of order or already whole: the acknowledgement says where we are
    }
    memcpy(v->snap + v->snap_next, m->u.state.data, m->u.state.len);
    v->snap_next += m->u.state.len;
    if (v->snap_next < v->snap_total) {
        return;
    }
    uint8_t hash[LS_NET_STATE_HASH_SIZE];
    crypto_generichash(hash, sizeof hash, v->snap, v->snap_total, NULL, 0);
    bool ok = sodium_memcmp(hash, v->snap_hash, sizeof hash) == 0 &&
              v->def.cb.load(v->def.cb.user, v->snap_tick, v->snap, v->snap_total);
    if (!ok) {
        v->snap_next = 0; // ask for it again from the start
        ls_spectator_event ev = {LS_SPECTATOR_EV_STATE_ERROR, v->snap_tick, v->present, 0, 0, 0};
        emit(v, &ev);
        return;
    }
    for (uint32_t i = 0; i < RING; i++) {
        v->held[i] = UINT32_MAX;
    }
    v->sim_next = v->recv_next = v->snap_tick;
    v->st.ticks = v->sim_next;
    v->st.received_next = v->recv_next;
    v->st.snapshots++;
    v->st.snapshot_tick = v->snap_tick;
    ls_spectator_event ev = {LS_SPECTATOR_EV_SNAPSHOT, v->snap_tick, v->present, 0, 0, 0};
    emit(v, &ev);
}

void ls_spectator_receive(ls_spectator *v, const uint8_t *data, size_t len, uint64_t now)
{
    ls_net_header h;
    if (ls_net_decode_header(data, len, &h, NULL) != LS_OK || h.role != LS_NET_ROLE_SPECTATOR ||
        h.session != v->def.session || h.slot != v->def.index ||
        !ls_net_auth_verify_(data, len, v->def.key, LS_NET_TO_PEER) ||
        ls_net_replay_check_(&v->rx, h.seq) != LS_NET_FRESH) {
        v->st.dropped++;
        return;
    }
    ls_net_replay_accept_(&v->rx, h.seq);
    ls_net_msg m;
    if (ls_net_decode(data, len, &m, NULL) != LS_OK) {
        v->st.dropped++;
        return;
    }
    v->st.packets_in++;
    v->st.bytes_in += len;
    switch (m.h.type) {
    case LS_NET_CHALLENGE:
        if (v->state == LS_SPECTATOR_JOINING) {
            v->cookie = m.u.cookie;
            send_type(v, LS_NET_SPECTATE);
            v->last_join = now;
        }
        break;
    case LS_NET_WELCOME:
        if (v->state == LS_SPECTATOR_JOINING) {
            v->slots = m.u.welcome.slots;
            v->input_size = m.u.welcome.input_size;
            v->ticks = m.u.welcome.ticks;
            v->row_size = LS_NET_CONFIRMED_ROW(v->slots, v->input_size);
            v->present = (uint16_t)((1u << v->slots) - 1u);
            v->state = LS_SPECTATOR_WATCHING;
            ls_spectator_event ev = {LS_SPECTATOR_EV_WELCOME, 0, v->present, 0, 0, 0};
            emit(v, &ev);
        }
        break;
    case LS_NET_CONFIRMED:
        if (v->state == LS_SPECTATOR_WATCHING || v->state == LS_SPECTATOR_FINISHED) {
            on_rows(v, &m);
        }
        break;
    case LS_NET_STATE_CHUNK:
        if (v->state == LS_SPECTATOR_WATCHING) {
            on_chunk(v, &m);
        }
        break;
    case LS_NET_PING: {
        ls_net_msg pong;
        memset(&pong, 0, sizeof pong);
        pong.h.type = LS_NET_PONG;
        pong.u.ping = m.u.ping;
        send_msg(v, &pong);
        break;
    }
    case LS_NET_DISCONNECT:
        if (v->state != LS_SPECTATOR_DROPPED && v->state != LS_SPECTATOR_FINISHED) {
            v->state = LS_SPECTATOR_DROPPED;
            ls_spectator_event ev = {
                LS_SPECTATOR_EV_DROPPED, m.u.disconnect.tick, 0, m.u.disconnect.reason, 0, 0};
            emit(v, &ev);
        }
        break;
    default:
        v->st.dropped++;
        break;
    }
}

static void simulate(ls_spectator *v)
{
    uint8_t inputs[LS_NET_MAX_SLOTS * LS_NET_MAX_INPUT_SIZE];
    uint32_t n = 0;
    while (v->state == LS_SPECTATOR_WATCHING && v->sim_next < v->recv_next &&
           n < v->def.max_ticks_per_poll) {
        uint32_t t = v->sim_next;
        if (v->ticks && t >= v->ticks) {
            break;
        }
        const uint8_t *row = v->rows + (size_t)(t % RING) * ROW_MAX;
        uint16_t present = ls_get_u16le(row);
        size_t bytes = (size_t)v->slots * v->input_size;
        memcpy(inputs, row + 2, bytes);
        uint64_t agreed = ls_get_u64le(row + 2 + bytes);
        if (present != v->present) {
            v->present = present;
            ls_spectator_event ev = {LS_SPECTATOR_EV_PRESENCE, t, present, 0, 0, 0};
            emit(v, &ev);
        }
        uint64_t sum = v->def.cb.advance(v->def.cb.user, t, inputs, v->slots, v->input_size);
        v->last_checksum = sum;
        if (sum != agreed) {
            v->st.mismatches++;
            ls_spectator_event ev = {LS_SPECTATOR_EV_MISMATCH, t, present, 0, agreed, sum};
            emit(v, &ev);
        }
        v->held[t % RING] = UINT32_MAX;
        v->sim_next = t + 1;
        v->st.ticks = v->sim_next;
        n++;
    }
    if (v->state == LS_SPECTATOR_WATCHING && v->ticks && v->sim_next >= v->ticks) {
        v->state = LS_SPECTATOR_FINISHED;
        ls_spectator_event ev = {LS_SPECTATOR_EV_FINISHED, v->sim_next, v->present, 0, 0, 0};
        emit(v, &ev);
    }
}

void ls_spectator_poll(ls_spectator *v, uint64_t now)
{
    if (v->state == LS_SPECTATOR_JOINING) {
        if (v->last_join == UINT64_MAX || now - v->last_join >= v->def.join_retry_us) {
            send_type(v, LS_NET_SPECTATE);
            v->last_join = now;
        }
        return;
    }
    if (v->state == LS_SPECTATOR_DROPPED) {
        return;
    }
    simulate(v);
    if (v->state_ack_due) {
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        m.h.type = LS_NET_STATE_ACK;
        m.u.state_ack.tick = v->snap_tick;
        m.u.state_ack.total = v->snap_total;
        m.u.state_ack.next = v->snap_next;
        send_msg(v, &m);
        v->state_ack_due = false;
    }
    if (v->ack_due || now - v->last_ack >= v->def.ack_interval_us) {
        send_type(v, LS_NET_ACK);
        v->ack_due = false;
        v->last_ack = now;
    }
}

bool ls_spectator_next_datagram(ls_spectator *v, ls_net_datagram *out)
{
    return ls_net_outbox_pop_(&v->out, out);
}

ls_spectator_state ls_spectator_state_get(const ls_spectator *v)
{
    return v->state;
}

uint32_t ls_spectator_ticks(const ls_spectator *v)
{
    return v->sim_next;
}

uint64_t ls_spectator_last_checksum(const ls_spectator *v)
{
    return v->last_checksum;
}

ls_spectator_stats ls_spectator_stats_get(const ls_spectator *v)
{
    return v->st;
}
