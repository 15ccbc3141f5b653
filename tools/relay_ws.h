// SPDX-License-Identifier: MIT
/// @file
/// `lockstep relay --ws HOST:PORT` (SPEC.md §17.16): a WebSocket listener on one
/// relay worker's libuv loop (libwebsockets with its libuv event library, foreign
/// loop). Each binary message carries exactly one wire-v2 datagram; the relay core
/// sees it as a datagram from the connection's synthetic address
/// (relay_ws_frame.h) and its replies to that address go back as binary messages.
/// libwebsockets is linked into the `lockstep` tool only, and only relay_ws.c
/// includes <libwebsockets.h>.
#ifndef LS_TOOLS_RELAY_WS_H
#define LS_TOOLS_RELAY_WS_H

#include "ls/net_wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// A datagram arrived over a WebSocket connection, named by its synthetic address.
typedef void (*relay_ws_recv_fn)(void *user, const ls_net_addr *from, const uint8_t *data,
                                 size_t len);

/// Listener settings.
typedef struct relay_ws_def {
    const char *host;           ///< IPv4 address to listen on.
    uint16_t port;              ///< 0: any free port.
    void *loop;                 ///< The worker's uv_loop_t*.
    uint8_t worker;             ///< The worker's index (in the synthetic addresses).
    const char *const *origins; ///< Allowed Origin values ("*": any) ...
    size_t n_origins;           ///< ... how many (0: only clients without Origin).
    const char *cert, *key;     ///< PEM files for wss:// (both or neither).
    uint32_t max_connections;   ///< Open connections at most.
    uint32_t send_queue;        ///< Bytes queued per connection at most.
    void *user;                 ///< Passed to on_recv.
    relay_ws_recv_fn on_recv;   ///< Required.
} relay_ws_def;

/// WebSocket counters (one listener).
typedef struct relay_ws_stats {
    uint64_t accepted;        ///< Connections accepted (handshake done).
    uint64_t open;            ///< Connections open now.
    uint64_t frames_in;       ///< Datagrams received (whole binary messages).
    uint64_t bytes_in;        ///< Their bytes.
    uint64_t frames_out;      ///< Datagrams sent.
    uint64_t bytes_out;       ///< Their bytes.
    uint64_t origin_refused;  ///< Handshakes refused for their Origin.
    uint64_t full_refused;    ///< Connections refused: max_connections were open.
    uint64_t text_closed;     ///< Connections closed (1003) for a text message.
    uint64_t oversize_closed; ///< Connections closed (1009) for a message over one datagram.
    uint64_t slow_closed;     ///< Connections cut off when their send queue overflowed.
    uint64_t send_dropped;    ///< Datagrams for a connection that is gone (or being closed).
} relay_ws_stats;

/// Opaque listener.
typedef struct relay_ws relay_ws;

/// Listen. NULL on error with msg filled.
relay_ws *relay_ws_create(const relay_ws_def *def, char *msg, size_t msg_size);
/// Close every connection and the listener (nothing is received or sent after);
/// the loop finishes the closing the next time it runs.
void relay_ws_close(relay_ws *ws);
/// Free what the listener holds: after relay_ws_close and after its loop ran to the
/// end (ls_uv_destroy runs it). Closes first if needed.
void relay_ws_free(relay_ws *ws);
/// The port listened on.
uint16_t relay_ws_port(const relay_ws *ws);
/// Whether TLS (wss://) is on.
bool relay_ws_tls(const relay_ws *ws);
/// Send one datagram to the connection `to` names (a synthetic address of this
/// listener): queued, written when the socket is writable; counted and dropped when
/// the connection is gone; the connection is closed when its queue would overflow.
void relay_ws_send(relay_ws *ws, const ls_net_addr *to, const uint8_t *data, size_t len);
/// Counters.
relay_ws_stats relay_ws_stats_get(const relay_ws *ws);
/// Add b's counters to a.
void relay_ws_stats_add(relay_ws_stats *a, const relay_ws_stats *b);

#endif
