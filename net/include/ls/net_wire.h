// SPDX-License-Identifier: MIT
// The relay wire protocol (SPEC.md "Relay protocol"): every datagram is a
// 28-byte little-endian header followed by one message body. The codec is
// pure: it never allocates, and every length is checked before use. Inputs are
// opaque bytes stamped with a tick; nothing here knows about physics.
#ifndef LS_NET_WIRE_H
#define LS_NET_WIRE_H

#include "ls/base.h"

LS_EXTERN_C_BEGIN

/// Protocol version carried in every header.
#define LS_NET_VERSION 1
/// Bytes of the fixed header.
#define LS_NET_HEADER_SIZE 28
/// Bytes of a session token.
#define LS_NET_TOKEN_SIZE 16
/// Largest datagram the protocol produces or accepts.
#define LS_NET_MAX_DATAGRAM 1200
/// Exact size of a JOIN datagram: padded so the relay's answers are never larger.
#define LS_NET_JOIN_SIZE 128
/// Most slots in a session.
#define LS_NET_MAX_SLOTS 16
/// Largest input per slot per tick, bytes.
#define LS_NET_MAX_INPUT_SIZE 64
/// Most ticks of inputs or checksums in one message.
#define LS_NET_MAX_BATCH 64

/// Ticks of inputs and checksums a relay session or a peer buffers (bounded memory).
#define LS_NET_WINDOW 256

/// Largest input delay D, ticks. With LS_NET_MAX_LEAD it keeps a peer's inputs
/// well inside half a window of its checksums (the relay's kick rule).
#define LS_NET_MAX_DELAY 32
/// Largest peer lead bound, ticks.
#define LS_NET_MAX_LEAD 32

/// Message types (header byte 3).
typedef enum ls_net_type {
    LS_NET_JOIN = 1,       ///< peer -> relay: join (cookie 0) or answer a challenge.
    LS_NET_CHALLENGE = 2,  ///< relay -> peer: prove you receive at your source address.
    LS_NET_WELCOME = 3,    ///< relay -> peer: joined; the session's parameters.
    LS_NET_INPUT = 4,      ///< either way: consecutive inputs of one slot.
    LS_NET_ACK = 5,        ///< either way: what the sender holds so far.
    LS_NET_CHECKSUM = 6,   ///< peer -> relay: consecutive per-tick checksums.
    LS_NET_DESYNC = 7,     ///< relay -> peer: checksums disagree at a tick.
    LS_NET_DISCONNECT = 8, ///< either way: a slot leaves (peer) / is gone from a tick (relay).
    LS_NET_PING = 9,       ///< either way: echo request.
    LS_NET_PONG = 10,      ///< either way: echo reply.
} ls_net_type;

/// Why a slot was disconnected.
typedef enum ls_net_disconnect_reason {
    LS_NET_LEFT = 1,    ///< The peer said goodbye.
    LS_NET_TIMEOUT = 2, ///< The peer was silent for the session's timeout.
    LS_NET_KICKED = 3,  ///< The peer sent inputs but stopped reporting checksums.
} ls_net_disconnect_reason;

/// An IPv4 or IPv6 UDP address as plain bytes (compare with ls_net_addr_equal).
typedef struct ls_net_addr {
    uint8_t family; ///< 4 or 6 (0: unset).
    uint8_t ip[16]; ///< Address bytes in network order (IPv4 uses the first 4).
    uint16_t port;  ///< Port in host order.
} ls_net_addr;

/// One outgoing datagram.
typedef struct ls_net_datagram {
    ls_net_addr to;                    ///< Destination (peers: always the relay).
    size_t len;                        ///< Bytes in data.
    uint8_t data[LS_NET_MAX_DATAGRAM]; ///< The encoded message.
} ls_net_datagram;

/// The fixed header.
typedef struct ls_net_header {
    uint8_t type;                     ///< ls_net_type.
    uint32_t session;                 ///< Session id (1-based).
    uint8_t slot;                     ///< Sender's slot (peer -> relay) or subject slot.
    uint8_t token[LS_NET_TOKEN_SIZE]; ///< The peer's token (the recipient's, relay -> peer).
} ls_net_header;

/// A decoded message. Pointers point into the decoded datagram.
typedef struct ls_net_msg {
    ls_net_header h; ///< Header.
    union {
        uint64_t cookie; ///< JOIN, CHALLENGE: the cookie (0 in a first JOIN).
        struct {
            uint8_t slots;       ///< Slots in the session (2..16).
            uint8_t input_size;  ///< Bytes per slot per tick (1..64).
            uint8_t delay;       ///< Input delay D: ticks below D have empty inputs.
            uint16_t tick_rate;  ///< Ticks per second (1..1000).
            uint32_t ticks;      ///< Match length in ticks (0: open-ended).
            uint32_t timeout_ms; ///< Silence after which a peer is disconnected.
        } welcome;               ///< WELCOME.
        struct {
            uint32_t first_tick; ///< Tick of the first input.
            uint16_t count;      ///< Inputs (1..LS_NET_MAX_BATCH).
            uint8_t input_size;  ///< Bytes per input (1..64).
            const uint8_t *data; ///< count * input_size bytes.
        } input;                 ///< INPUT (slot = owner of the inputs).
        struct {
            uint32_t checksum_next; ///< Sender holds the receiver's checksums below this.
            uint16_t disconnected;  ///< Slots the sender knows are disconnected.
            uint8_t count;          ///< Entries of input_next (= session slots).
            uint32_t
                input_next[LS_NET_MAX_SLOTS]; ///< Sender holds slot s's inputs below this tick.
        } ack;                                ///< ACK.
        struct {
            uint32_t first_tick; ///< Tick of the first checksum.
            uint16_t count;      ///< Checksums (1..LS_NET_MAX_BATCH).
            const uint8_t *data; ///< count little-endian u64.
        } checksum;              ///< CHECKSUM.
        struct {
            uint32_t tick;     ///< First tick whose checksums disagree.
            uint16_t slots;    ///< Slots that disagree with the majority (bit per slot).
            uint64_t expected; ///< The majority checksum.
        } desync;              ///< DESYNC.
        struct {
            uint32_t tick;  ///< From this tick the slot's input is empty (relay -> peer).
            uint8_t reason; ///< ls_net_disconnect_reason.
        } disconnect;       ///< DISCONNECT (slot = the slot concerned).
        struct {
            uint64_t time; ///< Sender's clock, echoed unchanged.
            uint32_t seq;  ///< Sender's sequence number, echoed unchanged.
        } ping;            ///< PING, PONG.
    } u;                   ///< Body by type.
} ls_net_msg;

/// Encode m into buf. Returns the datagram length, or 0 if m is invalid or cap too small.
LS_API size_t ls_net_encode(const ls_net_msg *m, uint8_t *buf, size_t cap);
/// Decode one datagram. LS_ERR_TRUNCATED / LS_ERR_CORRUPT / LS_ERR_INCOMPATIBLE on bad input,
/// with *err (may be NULL) naming the offending field in err->field.
LS_API ls_result ls_net_decode(const uint8_t *buf, size_t len, ls_net_msg *out, ls_error *err);
/// The name of a message type ("JOIN", ...), or "?" if unknown.
LS_API const char *ls_net_type_name(uint8_t type);

/// True when a and b are the same address and port.
LS_API bool ls_net_addr_equal(const ls_net_addr *a, const ls_net_addr *b);
/// An IPv4 address from four bytes and a port.
LS_API ls_net_addr ls_net_addr_ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port);
/// Format as "a.b.c.d:port" (or "[v6]:port"); returns buf.
LS_API const char *ls_net_addr_format(const ls_net_addr *a, char *buf, size_t size);

/// Fill buf with n bytes from the operating system's random source.
LS_API ls_result ls_net_random_bytes(void *buf, size_t n);

LS_EXTERN_C_END

#endif
