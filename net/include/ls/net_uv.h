// SPDX-License-Identifier: MIT
/// @file
/// The UDP transport on libuv, part of the library (SPEC.md §17.12): one socket,
/// a periodic poll timer on the loop clock, optional signal handling, and seeded
/// fault injection (ls/net_fault.h) on every send. It carries datagrams for the
/// sans-IO cores (ls/net_relay.h, ls/net_peer.h) and knows nothing of them: a
/// game hosts a relay or a peer by calling ls_relay_receive / ls_peer_receive
/// from on_recv, ls_*_poll from on_timer, and sending every datagram the core
/// produces with ls_uv_send. It runs on its own loop, or on the game's uv loop
/// (ls_uv_def.loop). libuv stays opaque here: only net/uv/transport_uv.c includes
/// <uv.h>. The cores remain usable without it, with the game's own sockets.
#ifndef LS_NET_UV_H
#define LS_NET_UV_H

#include "ls/net_fault.h"
#include "ls/net_wire.h"

LS_EXTERN_C_BEGIN

/// A datagram arrived from `from` at now_us (monotonic microseconds).
typedef void (*ls_uv_recv_fn)(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                              uint64_t now_us);
/// The poll timer fired at now_us.
typedef void (*ls_uv_timer_fn)(void *user, uint64_t now_us);
/// SIGINT, SIGTERM or SIGUSR1 arrived.
typedef void (*ls_uv_signal_fn)(void *user, int signum);

/// Transport settings. Start from ls_default_uv_def().
typedef struct ls_uv_def {
    const char *bind_host;     ///< Address to bind, IPv4 or IPv6 text; default "0.0.0.0".
    uint16_t bind_port;        ///< Port to bind (0: ephemeral), default 0.
    ls_net_fault_def fault;    ///< Impairment applied to every send (all zero: none).
    uint32_t poll_us;          ///< Poll timer period, microseconds (>= 1000), default 1000.
    bool signals;              ///< Deliver SIGINT, SIGTERM and SIGUSR1 to on_signal.
    void *user;                ///< Passed to the callbacks.
    ls_uv_recv_fn on_recv;     ///< Required.
    ls_uv_timer_fn on_timer;   ///< Optional.
    ls_uv_signal_fn on_signal; ///< Optional.
    void *loop; ///< The game's uv_loop_t* to run on (NULL: the transport owns a loop).
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
    uint64_t fault_corrupted;  ///< Datagrams it corrupted (one bit flipped).
} ls_uv_stats;

/// Opaque transport.
typedef struct ls_uv ls_uv;

/// Defaults (see ls_uv_def).
LS_API ls_uv_def ls_default_uv_def(void);
/// Create, bind and start receiving. NULL on error with msg (may be NULL) filled.
LS_API ls_uv *ls_uv_create(const ls_uv_def *def, char *msg, size_t msg_size);
/// Close everything. On the game's loop the handles finish closing (and the
/// memory is freed) the next time that loop runs; on its own loop at once.
LS_API void ls_uv_destroy(ls_uv *t);
/// The bound port.
LS_API uint16_t ls_uv_port(const ls_uv *t);
/// The uv_loop_t* the transport runs on (its own or def.loop): another transport
/// can share it (def.loop = ls_uv_loop(t)).
LS_API void *ls_uv_loop(const ls_uv *t);
/// Monotonic time, microseconds.
LS_API uint64_t ls_uv_now_us(const ls_uv *t);
/// Send (through the fault injector). Called from inside one of this transport's
/// callbacks (on_recv, on_timer), the datagram waits and leaves with the others
/// sent in the same batch (every datagram of one recvmmsg batch, or one timer
/// callback) in one sendmmsg when the batch ends, in the order sent; called
/// anywhere else, at once. Either way the bytes are the same.
LS_API void ls_uv_send(ls_uv *t, const ls_net_addr *to, const uint8_t *data, size_t len);
/// Run the loop (its own or the game's) until ls_uv_stop. Returns 0.
LS_API int ls_uv_run(ls_uv *t);
/// Make ls_uv_run return after the current callback.
LS_API void ls_uv_stop(ls_uv *t);
/// Counters.
LS_API ls_uv_stats ls_uv_stats_get(const ls_uv *t);
/// Parse "a.b.c.d:port" or "[v6]:port" (numeric hosts only) into *out; false if
/// malformed. ls_net_addr_format (ls/net_wire.h) writes the same forms back.
LS_API bool ls_uv_parse_addr(const char *text, ls_net_addr *out);

LS_EXTERN_C_END

#endif
