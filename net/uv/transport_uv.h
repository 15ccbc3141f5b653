// SPDX-License-Identifier: MIT
// UDP transport on libuv for the relay and peer cores: one socket, a periodic
// poll timer on the loop clock, signal handling, and seeded fault injection on
// every send. The only part of net/ that touches <uv.h> (in transport_uv.c);
// this header keeps libuv opaque.
#ifndef LS_NET_TRANSPORT_UV_H
#define LS_NET_TRANSPORT_UV_H

#include "ls/net_fault.h"
#include "ls/net_wire.h"

/// A datagram arrived from `from` at now_us (monotonic microseconds).
typedef void (*ls_uv_recv_fn)(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                              uint64_t now_us);
/// The poll timer fired at now_us.
typedef void (*ls_uv_timer_fn)(void *user, uint64_t now_us);
/// SIGINT, SIGTERM or SIGUSR1 arrived.
typedef void (*ls_uv_signal_fn)(void *user, int signum);

/// Transport settings.
typedef struct ls_uv_def {
    const char *bind_host;     ///< Address to bind, e.g. "127.0.0.1".
    uint16_t bind_port;        ///< Port to bind (0: ephemeral).
    ls_net_fault_def fault;    ///< Impairment applied to every send (all zero: none).
    uint32_t poll_us;          ///< Poll timer period, microseconds (>= 1000).
    bool signals;              ///< Deliver SIGINT, SIGTERM and SIGUSR1 to on_signal.
    void *user;                ///< Passed to the callbacks.
    ls_uv_recv_fn on_recv;     ///< Required.
    ls_uv_timer_fn on_timer;   ///< Optional.
    ls_uv_signal_fn on_signal; ///< Optional.
} ls_uv_def;

/// Transport counters.
typedef struct ls_uv_stats {
    uint64_t sent;             ///< Datagrams handed to the kernel.
    uint64_t sent_bytes;       ///< Their bytes.
    uint64_t received;         ///< Datagrams received.
    uint64_t recv_bytes;       ///< Their bytes.
    uint64_t send_errors;      ///< Sends the kernel refused.
    uint64_t fault_dropped;    ///< Datagrams the fault injector dropped.
    uint64_t fault_duplicated; ///< Datagrams it duplicated.
    uint64_t fault_reordered;  ///< Datagrams it held back.
} ls_uv_stats;

/// Opaque transport (owns its loop).
typedef struct ls_uv ls_uv;

/// Create, bind and start receiving. NULL on error with msg filled.
ls_uv *ls_uv_create(const ls_uv_def *def, char *msg, size_t msg_size);
/// Close everything.
void ls_uv_destroy(ls_uv *t);
/// The bound port.
uint16_t ls_uv_port(const ls_uv *t);
/// Monotonic time, microseconds.
uint64_t ls_uv_now_us(const ls_uv *t);
/// Send (through the fault injector).
void ls_uv_send(ls_uv *t, const ls_net_addr *to, const uint8_t *data, size_t len);
/// Run the loop until ls_uv_stop. Returns 0.
int ls_uv_run(ls_uv *t);
/// Make ls_uv_run return after the current callback.
void ls_uv_stop(ls_uv *t);
/// Counters.
ls_uv_stats ls_uv_stats_get(const ls_uv *t);
/// Parse "a.b.c.d:port" into *out; false if malformed.
bool ls_uv_parse_addr(const char *text, ls_net_addr *out);

#endif
