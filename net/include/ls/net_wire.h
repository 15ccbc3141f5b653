// SPDX-License-Identifier: MIT
/// @file
/// The relay wire protocol v2 (SPEC.md §17): every datagram is a 20-byte
/// little-endian header, one message body and a 16-byte authentication tag
/// (ls/net_auth.h seals and verifies it). The codec is pure and keyless: it
/// never allocates, every length is checked before use, and one field walk per
/// message serves both encoding and decoding, so the two cannot drift apart.
/// Inputs are opaque bytes stamped with a tick; nothing here knows about physics.
#ifndef LS_NET_WIRE_H
#define LS_NET_WIRE_H

#include "ls/base.h"

LS_EXTERN_C_BEGIN

/// Protocol version carried in every header (byte 2). Version 1 is refused.
#define LS_NET_VERSION 2
/// Bytes of the fixed header.
#define LS_NET_HEADER_SIZE 20
/// Bytes of the authentication tag that ends every datagram.
#define LS_NET_TAG_SIZE 16
/// Header plus tag: the bytes every datagram carries besides its body.
#define LS_NET_OVERHEAD (LS_NET_HEADER_SIZE + LS_NET_TAG_SIZE)
/// Bytes of a slot's secret key (ls/net_auth.h).
#define LS_NET_KEY_SIZE 32
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

/// Largest snapshot a late joiner can receive, bytes (16 MiB).
#define LS_NET_STATE_MAX (16u << 20)

/// Ticks of inputs and checksums a relay session or a peer buffers (bounded memory).
#define LS_NET_WINDOW 256

/// Largest input delay D, ticks. With LS_NET_MAX_LEAD it keeps a peer's inputs
/// well inside half a window of its checksums (the relay's kick rule).
#define LS_NET_MAX_DELAY 32
/// Largest peer lead bound, ticks.
#define LS_NET_MAX_LEAD 32

/// DESYNC flag: no value was reported by more slots than every other (SPEC.md §17.7),
/// so checksums alone name nobody; the recording keeps every claim (`replay verify` names
/// who was wrong by re-simulation).
#define LS_NET_DESYNC_DISPUTED 1u

/// Message types (header byte 3). 11..15 serve spectators, late join and
/// reconnect (SPEC.md §17.10).
typedef enum ls_net_type {
    LS_NET_JOIN = 1,         ///< peer -> relay: join (cookie 0) or answer a challenge.
    LS_NET_CHALLENGE = 2,    ///< relay -> peer: prove you receive at your source address.
    LS_NET_WELCOME = 3,      ///< relay -> peer: joined; the session's parameters.
    LS_NET_INPUT = 4,        ///< either way: consecutive inputs of one slot.
    LS_NET_ACK = 5,          ///< either way: what the sender holds so far.
    LS_NET_CHECKSUM = 6,     ///< peer -> relay: consecutive per-tick checksums.
    LS_NET_DESYNC = 7,       ///< relay -> peer: checksums disagree at a tick.
    LS_NET_DISCONNECT = 8,   ///< either way: a slot leaves (peer) / is gone from a tick (relay).
    LS_NET_PING = 9,         ///< either way: echo request.
    LS_NET_PONG = 10,        ///< either way: echo reply.
    LS_NET_REJOIN = 11,      ///< peer -> relay: a disconnected slot comes back (cookie as JOIN).
    LS_NET_SPECTATE = 12,    ///< spectator -> relay: join with a spectator credential (as JOIN).
    LS_NET_STATE_CHUNK = 13, ///< either way: one chunk of a confirmed-tick snapshot.
    LS_NET_STATE_ACK = 14,   ///< either way: snapshot bytes held so far (total 0: a request).
    LS_NET_CONFIRMED = 15,   ///< relay -> spectator: final ticks, every slot's input + checksum.
    LS_NET_STATE_PROOF = 16, ///< either way: a snapshot's proof (relay -> rejoiner: the agreed
                             ///< checksum of the tick before it) or its refusal (rejoiner).
} ls_net_type;

/// Highest message type this version encodes and decodes.
#define LS_NET_TYPE_LAST LS_NET_STATE_PROOF
/// Highest type number reserved for later versions.
#define LS_NET_TYPE_RESERVED_LAST LS_NET_STATE_PROOF

/// STATE_PROOF kinds (SPEC.md §17.10).
typedef enum ls_net_proof_kind {
    LS_NET_PROOF_AGREED = 0,  ///< relay -> rejoiner: `checksum` = agreed checksum of tick - 1.
    LS_NET_PROOF_REFUSED = 1, ///< rejoiner -> relay: the loaded state's checksum differs.
    LS_NET_PROOF_NONE = 2,    ///< relay -> rejoiner: no agreed checksum to prove against.
} ls_net_proof_kind;

/// STATE_PROOF source: the snapshot came from the relay's host (ls_relay_session_put_state).
#define LS_NET_SOURCE_HOST 0xFFu

/// Who holds a credential (header byte 9, part of the nonce).
typedef enum ls_net_role {
    LS_NET_ROLE_PLAYER = 0,    ///< A player slot.
    LS_NET_ROLE_SPECTATOR = 1, ///< A spectator (header slot = spectator index).
} ls_net_role;

/// Why a slot was disconnected.
typedef enum ls_net_disconnect_reason {
    LS_NET_LEFT = 1,    ///< The peer said goodbye.
    LS_NET_TIMEOUT = 2, ///< The peer was silent for the session's timeout.
    LS_NET_KICKED = 3,  ///< The peer played on without reporting checksums or with its
                        ///< acknowledgements behind (SPEC.md §17.5, §17.8), or a rejoiner
                        ///< got no snapshot in time (§17.10). It cannot come back.
    LS_NET_REJOINED =
        4, ///< DISCONNECT as a notice: the slot is back, its inputs count from `tick`.
} ls_net_disconnect_reason;

/// Bytes of a snapshot hash (BLAKE2b-256, crypto_generichash).
#define LS_NET_STATE_HASH_SIZE 32
/// Most snapshot bytes in one STATE_CHUNK.
#define LS_NET_STATE_CHUNK_MAX (LS_NET_MAX_DATAGRAM - LS_NET_OVERHEAD - 16 - LS_NET_STATE_HASH_SIZE)
/// Bytes of one CONFIRMED row: present mask (u16), every slot's input, agreed checksum (u64).
#define LS_NET_CONFIRMED_ROW(slots, input_size) (10u + (uint32_t)(slots) * (uint32_t)(input_size))

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
    uint8_t data[LS_NET_MAX_DATAGRAM]; ///< The encoded, sealed message.
} ls_net_datagram;

/// The fixed header.
typedef struct ls_net_header {
    uint8_t type;     ///< ls_net_type.
    uint8_t role;     ///< ls_net_role of the credential whose key seals the datagram.
    uint8_t slot;     ///< The key's slot: the sender (peer -> relay) or recipient (relay -> peer).
    uint32_t session; ///< Session id (1-based).
    uint64_t seq;     ///< Sender's sequence number in this direction (1, 2, ...; never reused).
} ls_net_header;

/// A decoded message. Pointers point into the decoded datagram.
typedef struct ls_net_msg {
    ls_net_header h; ///< Header.
    union {
        uint64_t cookie; ///< JOIN, REJOIN, SPECTATE, CHALLENGE: the cookie (0 at first).
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
            uint8_t slot;        ///< Owner of the inputs (peer -> relay: the sender's slot).
            const uint8_t *data; ///< count * input_size bytes.
        } input;                 ///< INPUT.
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
            uint16_t slots;    ///< Slots that disagree with the majority (bit per slot);
                               ///< disputed: every slot that reported the tick.
            uint16_t flags;    ///< LS_NET_DESYNC_DISPUTED or 0.
            uint64_t expected; ///< The majority checksum (disputed: 0).
        } desync;              ///< DESYNC.
        struct {
            uint32_t tick;  ///< From this tick the slot's input is empty (relay -> peer).
            uint8_t reason; ///< ls_net_disconnect_reason.
            uint8_t slot;   ///< The slot concerned (peer -> relay: the sender's slot).
        } disconnect;       ///< DISCONNECT.
        struct {
            uint64_t time; ///< Sender's clock, echoed unchanged.
            uint32_t seq;  ///< Sender's ping number, echoed unchanged.
        } ping;            ///< PING, PONG.
        struct {
            uint32_t tick;   ///< The snapshot is the state before this confirmed tick.
            uint32_t total;  ///< Bytes of the whole snapshot (1..LS_NET_STATE_MAX).
            uint32_t offset; ///< Offset of this chunk in the snapshot.
            uint16_t len;    ///< Bytes in this chunk (1..LS_NET_STATE_CHUNK_MAX).
            uint8_t hash[LS_NET_STATE_HASH_SIZE]; ///< BLAKE2b-256 of the whole snapshot.
            const uint8_t *data;                  ///< len bytes.
        } state;                                  ///< STATE_CHUNK.
        struct {
            uint32_t tick;  ///< Snapshot tick.
            uint32_t total; ///< Its size (0: a request for the sender's snapshot of `tick`).
            uint32_t next;  ///< The sender holds bytes [0, next) of it.
        } state_ack;        ///< STATE_ACK.
        struct {
            uint32_t tick;     ///< Snapshot tick T.
            uint8_t source;    ///< Who supplied it: a slot, or LS_NET_SOURCE_HOST.
            uint8_t kind;      ///< ls_net_proof_kind.
            uint64_t checksum; ///< AGREED: of tick T - 1; REFUSED: the loaded state's.
        } proof;               ///< STATE_PROOF.
        struct {
            uint32_t first_tick; ///< Tick of the first row.
            uint16_t count;      ///< Rows (1..LS_NET_MAX_BATCH).
            uint8_t slots;       ///< Slots per row (2..16).
            uint8_t input_size;  ///< Bytes per input (1..64).
            const uint8_t *rows; ///< count rows of LS_NET_CONFIRMED_ROW(slots, input_size) bytes.
        } confirmed;             ///< CONFIRMED.
    } u;                         ///< Body by type.
} ls_net_msg;

/// Encode m into buf with a zero tag (seal it with ls_net_seal before sending).
/// Returns the datagram length, or 0 if m is invalid or cap too small.
LS_API size_t ls_net_encode(const ls_net_msg *m, uint8_t *buf, size_t cap);
/// Decode one datagram's header and body (the tag is not checked: ls_net_verify does).
/// LS_ERR_TRUNCATED / LS_ERR_CORRUPT / LS_ERR_INCOMPATIBLE on bad input, with *err (may
/// be NULL) naming the offending field in err->field; a version 1 datagram is
/// LS_ERR_INCOMPATIBLE with field "version".
LS_API ls_result ls_net_decode(const uint8_t *buf, size_t len, ls_net_msg *out, ls_error *err);
/// Decode and check the header only (magic, version, type, lengths): what a receiver
/// needs to find the key before it verifies the tag. Same errors as ls_net_decode.
LS_API ls_result ls_net_decode_header(const uint8_t *buf, size_t len, ls_net_header *out,
                                      ls_error *err);
/// The name of a message type ("JOIN", ...), or "?" if unknown.
LS_API const char *ls_net_type_name(uint8_t type);

/// True when a and b are the same address and port.
LS_API bool ls_net_addr_equal(const ls_net_addr *a, const ls_net_addr *b);
/// An IPv4 address from four bytes and a port.
LS_API ls_net_addr ls_net_addr_ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port);
/// Format as "a.b.c.d:port" or "[x:x:x:x:x:x:x:x]:port" (IPv6, hex groups); returns buf.
LS_API const char *ls_net_addr_format(const ls_net_addr *a, char *buf, size_t size);

/// Fill buf with n bytes from the operating system's random source.
LS_API ls_result ls_net_random_bytes(void *buf, size_t n);

LS_EXTERN_C_END

#endif
