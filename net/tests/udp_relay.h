// SPDX-License-Identifier: MIT
// The loopback tests' relay (net/tests/test_udp*.c): the sans-IO relay on its own
// libuv transport, run in a thread, on an ephemeral port of 127.0.0.1. It keeps the
// first RT_MAX_EVENTS events (and when each came), counts every event by type, records
// the final ticks (inputs and agreed checksums), when the session first was idle, and
// the datagrams it sent from an instant the test sets (rt_count_from). The relay thread
// writes those: read them after rt_stop (or rt_join), never while it runs. Times are
// ls_uv_now_us (uv_hrtime: the same clock on every thread and loop).
#ifndef LS_NET_TESTS_UDP_RELAY_H
#define LS_NET_TESTS_UDP_RELAY_H

#include "ls/net_auth.h"
#include "ls/net_relay.h"
#include "ls/net_uv.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define RT_MAX_EVENTS  512
#define RT_MAX_TICKS   4096
#define RT_EVENT_KINDS 16
#define RT_MSG_KINDS   32

typedef struct relay_thread {
    ls_relay *relay;
    ls_uv *uv;
    uint32_t session;
    uint16_t port;
    atomic_bool stop;
    _Atomic uint64_t count_from; // set by the test (rt_count_from): count sends from then on
    pthread_t th;
    uint32_t slots;
    ls_net_credential cred[LS_NET_MAX_SLOTS]; // every slot's, taken before the thread starts
    // Written by the relay thread:
    ls_relay_event ev[RT_MAX_EVENTS]; // the first RT_MAX_EVENTS events
    uint64_t ev_at[RT_MAX_EVENTS];    // when each came
    uint32_t nev;
    uint32_t ev_count[RT_EVENT_KINDS]; // every event, by type
    uint64_t rec_sums[RT_MAX_TICKS];   // the recorder's final ticks: agreed checksums ...
    uint8_t rec_inputs[RT_MAX_TICKS][LS_NET_MAX_SLOTS]; // ... and inputs (input size 1)
    uint32_t rec_ticks;
    bool rec_ended;
    uint64_t idle_at;                       // the first poll that found the session idle (0: never)
    uint64_t last_sent_at;                  // the last datagram sent
    uint32_t sent_after;                    // datagrams sent from count_from on ...
    uint32_t sent_after_type[RT_MSG_KINDS]; // ... by message type
    uint32_t sent_after_slot[LS_NET_MAX_SLOTS]; // ... by recipient (the header's slot)
} relay_thread;

// From the instant at (the test's thread), count every datagram the relay sends.
static inline void rt_count_from(relay_thread *t, uint64_t at)
{
    atomic_store(&t->count_from, at);
}

static inline void rt_pump(relay_thread *t, uint64_t now)
{
    ls_net_datagram d;
    while (ls_relay_next_datagram(t->relay, &d)) {
        ls_uv_send(t->uv, &d.to, d.data, d.len);
        t->last_sent_at = now;
        ls_net_header h;
        if (now >= atomic_load(&t->count_from) &&
            ls_net_decode_header(d.data, d.len, &h, NULL) == LS_OK) {
            t->sent_after++;
            t->sent_after_type[h.type % RT_MSG_KINDS]++;
            t->sent_after_slot[h.slot % LS_NET_MAX_SLOTS]++;
        }
    }
    ls_relay_event ev;
    while (ls_relay_next_event(t->relay, &ev)) {
        if (t->nev < RT_MAX_EVENTS) {
            t->ev_at[t->nev] = now;
            t->ev[t->nev++] = ev;
        }
        if ((uint32_t)ev.type < RT_EVENT_KINDS) {
            t->ev_count[ev.type]++;
        }
    }
}

static inline void rt_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                           uint64_t now)
{
    relay_thread *t = user;
    ls_relay_receive(t->relay, from, data, len, now);
    rt_pump(t, now);
}

static inline void rt_timer(void *user, uint64_t now)
{
    relay_thread *t = user;
    ls_relay_poll(t->relay, now);
    rt_pump(t, now);
    if (!t->idle_at && ls_relay_session_idle(t->relay, t->session)) {
        t->idle_at = now;
    }
    if (atomic_load(&t->stop)) {
        ls_uv_stop(t->uv);
    }
}

static inline void *rt_main(void *arg)
{
    relay_thread *t = arg;
    ls_uv_run(t->uv);
    return NULL;
}

static inline void rt_rec_tick(void *user, uint32_t session, uint32_t tick, const uint8_t *inputs,
                               uint64_t checksum)
{
    relay_thread *t = user;
    (void)session;
    if (tick < RT_MAX_TICKS) {
        t->rec_sums[tick] = checksum;
        memcpy(t->rec_inputs[tick], inputs, t->slots);
        t->rec_ticks = tick + 1;
    }
}

static inline void rt_rec_end(void *user, uint32_t session, uint32_t ticks)
{
    relay_thread *t = user;
    (void)session;
    (void)ticks;
    t->rec_ended = true;
}

// Start a relay with one session of settings sd (input size 1) whose transport applies
// fault (NULL: none) to everything it sends.
static inline void rt_start_with(relay_thread *t, const ls_session_def *sd,
                                 const ls_net_fault_def *fault)
{
    memset(t, 0, sizeof *t);
    cr_assert_eq(sd->input_size, 1u, "the recorder keeps one byte per slot");
    ls_relay_def rd = ls_default_relay_def();
    t->relay = ls_relay_create(&rd, NULL);
    cr_assert_not_null(t->relay);
    ls_uv_def ud = ls_default_uv_def();
    ud.bind_host = "127.0.0.1";
    ud.user = t;
    ud.on_recv = rt_recv;
    ud.on_timer = rt_timer;
    if (fault) {
        ud.fault = *fault;
    }
    char msg[256];
    t->uv = ls_uv_create(&ud, msg, sizeof msg);
    cr_assert_not_null(t->uv, "%s", msg);
    t->port = ls_uv_port(t->uv);
    cr_assert_neq(t->port, 0);
    t->slots = sd->slots;
    cr_assert_eq(ls_relay_session_create(t->relay, sd, ls_uv_now_us(t->uv), &t->session), LS_OK);
    ls_relay_recorder rec = {t, rt_rec_tick, rt_rec_end, NULL};
    cr_assert_eq(ls_relay_session_set_recorder(t->relay, t->session, &rec), LS_OK);
    for (uint32_t k = 0; k < sd->slots; k++) {
        cr_assert_eq(ls_relay_session_credential(t->relay, t->session, k, &t->cred[k]), LS_OK);
    }
    atomic_store(&t->stop, false);
    atomic_store(&t->count_from, UINT64_MAX);
    cr_assert_eq(pthread_create(&t->th, NULL, rt_main, t), 0);
}

// A relay with one default session of two slots, no faults.
static inline void rt_start(relay_thread *t)
{
    ls_session_def sd = ls_default_session_def();
    sd.slots = 2;
    rt_start_with(t, &sd, NULL);
}

// Stop the relay thread (the relay and its counters stay readable).
static inline void rt_join(relay_thread *t)
{
    atomic_store(&t->stop, true);
    pthread_join(t->th, NULL);
}

static inline void rt_free(relay_thread *t)
{
    ls_uv_destroy(t->uv);
    ls_relay_destroy(t->relay);
    for (uint32_t k = 0; k < LS_NET_MAX_SLOTS; k++) {
        ls_net_credential_wipe(&t->cred[k]);
    }
}

static inline void rt_stop(relay_thread *t)
{
    rt_join(t);
    rt_free(t);
}

#endif
