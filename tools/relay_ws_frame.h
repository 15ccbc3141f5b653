// SPDX-License-Identifier: MIT
/// @file
/// The part of `lockstep relay --ws` the project owns between libwebsockets and
/// the relay core (SPEC.md §17.16): what one received WebSocket fragment does
/// (deliver a datagram, wait for the rest of the message, or close the
/// connection with a code), and the synthetic source addresses that name a
/// WebSocket connection to the relay core. No socket, no libwebsockets: the
/// fuzz harness (fuzz/relay_ws_frame.c) drives it directly.
#ifndef LS_TOOLS_RELAY_WS_FRAME_H
#define LS_TOOLS_RELAY_WS_FRAME_H

#include "ls/net_wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Close codes the relay sends (RFC 6455 §7.4.1).
enum {
    RELAY_WS_CLOSE_NORMAL = 1000,     ///< The relay is stopping.
    RELAY_WS_CLOSE_NOT_BINARY = 1003, ///< A text frame: the binding carries binary frames only.
    RELAY_WS_CLOSE_TOO_BIG = 1009,    ///< A message longer than one datagram.
    RELAY_WS_CLOSE_FULL = 1013,       ///< No room: --ws-max-connections are open.
};

/// What a fragment does.
typedef enum relay_ws_action {
    RELAY_WS_WAIT,       ///< Part of a message: wait for the rest.
    RELAY_WS_DELIVER,    ///< A whole message: relay_ws_frame.buf[0..len) is one datagram.
    RELAY_WS_CLOSE_TEXT, ///< A text message: close with RELAY_WS_CLOSE_NOT_BINARY.
    RELAY_WS_CLOSE_BIG,  ///< Longer than max: close with RELAY_WS_CLOSE_TOO_BIG.
} relay_ws_action;

/// One connection's message being received (a message may come in fragments).
typedef struct relay_ws_frame {
    size_t len;                       ///< Bytes of the message so far.
    bool in_message;                  ///< A first fragment came, its final one not yet.
    uint8_t buf[LS_NET_MAX_DATAGRAM]; ///< The message so far.
} relay_ws_frame;

/// Take one received fragment: data[0..n), binary or text, whether it is the final
/// fragment of its message (the fragment after a final one starts a message); max (<=
/// LS_NET_MAX_DATAGRAM) is the largest message accepted. Memory stays within relay_ws_frame
/// whatever the input.
relay_ws_action relay_ws_frame_take(relay_ws_frame *f, const uint8_t *data, size_t n, bool binary,
                                    bool final, size_t max);

/// The synthetic source address of WebSocket connection `serial` (1.., never reused by
/// a worker) held in table slot `slot` of worker `worker`: IPv6 in 100::/64 (the
/// discard-only prefix, RFC 6666), port 0. The relay's UDP socket is IPv4, so no
/// datagram it receives has such a source; it drops any that would (relay_ws_addr_is).
ls_net_addr relay_ws_addr(uint8_t worker, uint16_t slot, uint32_t serial);
/// Whether a is a synthetic WebSocket address (100::/64, port 0).
bool relay_ws_addr_is(const ls_net_addr *a);
/// The worker, slot and serial of a synthetic address (false if it is none).
bool relay_ws_addr_split(const ls_net_addr *a, uint8_t *worker, uint16_t *slot, uint32_t *serial);

#endif
