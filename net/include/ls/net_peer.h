// SPDX-License-Identifier: MIT
// A lockstep peer's sans-IO core. The game plugs in through callbacks (like
// GGPO): local_input(tick) asks for this peer's input, advance(tick, inputs)
// simulates one tick with every slot's input and returns the state checksum.
// A tick is advanced only when every slot's input for it is known; inputs are
// sent D ticks ahead (input delay) and the peer paces itself to stay within a
// bounded lead of what it has simulated. The core sends inputs with redundancy
// (everything unacknowledged, every time), checksums, acks and pings.
#ifndef LS_NET_PEER_H
#define LS_NET_PEER_H

#include "ls/net_wire.h"

LS_EXTERN_C_BEGIN

/// Synchronisation model. Only lockstep exists; rollback is the seam for a later version
/// (it will add save/load callbacks and predicted advances).
typedef enum ls_peer_mode {
    LS_PEER_LOCKSTEP = 0, ///< Advance a tick only when all its inputs are confirmed.
} ls_peer_mode;

/// Peer lifecycle.
typedef enum ls_peer_state {
    LS_PEER_JOINING = 0,  ///< Sending JOIN until the relay welcomes us.
    LS_PEER_RUNNING = 1,  ///< In the match.
    LS_PEER_FINISHED = 2, ///< All ticks simulated and acknowledged by the relay.
    LS_PEER_LEFT = 3,     ///< Disconnected (left, or declared gone by the relay).
} ls_peer_state;

/// Kinds of peer events.
typedef enum ls_peer_event_type {
    LS_PEER_EV_WELCOME = 1,      ///< Joined; the session parameters are known.
    LS_PEER_EV_DESYNC = 2,       ///< The relay reports disagreeing checksums at `tick`.
    LS_PEER_EV_DISCONNECTED = 3, ///< Slot `slot` is gone from `tick` on (empty input).
    LS_PEER_EV_FINISHED = 4,     ///< Every tick of the match is simulated and acknowledged.
} ls_peer_event_type;

/// One peer event.
typedef struct ls_peer_event {
    ls_peer_event_type type; ///< What happened.
    uint32_t slot;           ///< DISCONNECTED: the slot.
    uint32_t tick;           ///< Tick concerned.
    uint16_t slots;          ///< DESYNC: slots that disagree with the majority.
    uint8_t reason;          ///< DISCONNECTED: ls_net_disconnect_reason.
    uint64_t expected;       ///< DESYNC: the majority checksum.
} ls_peer_event;

/// The game, driven by the peer.
typedef struct ls_peer_callbacks {
    void *user; ///< Passed to every callback.
    /// Write this peer's input for `tick` (input_size bytes, zeroed beforehand).
    void (*local_input)(void *user, uint32_t tick, uint8_t *out, uint32_t input_size);
    /// Simulate `tick` with every slot's input (slot k at inputs + k * input_size);
    /// return the checksum of the state after the tick.
    uint64_t (*advance)(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                        uint32_t input_size);
    /// Optional: an event happened.
    void (*on_event)(void *user, const ls_peer_event *ev);
} ls_peer_callbacks;

/// Peer settings. Start from ls_default_peer_def().
typedef struct ls_peer_def {
    uint32_t session;                 ///< Session id.
    uint32_t slot;                    ///< Our slot.
    uint8_t token[LS_NET_TOKEN_SIZE]; ///< Our slot's token.
    ls_net_addr relay;                ///< Relay address (copied into every datagram).
    ls_peer_mode mode;                ///< LS_PEER_LOCKSTEP.
    uint32_t max_lead;                ///< Lead bound in ticks (1..32), default 8.
    uint32_t resend_us;               ///< Re-send unacknowledged data after this, default 20 ms.
    uint32_t join_retry_us;           ///< Re-send JOIN after this, default 200 ms.
    uint32_t ping_interval_us;        ///< Ping the relay this often, default 250 ms.
    ls_peer_callbacks cb;             ///< The game.
} ls_peer_def;

/// Peer-side counters.
typedef struct ls_peer_stats {
    uint32_t rtt_us;       ///< Smoothed RTT to the relay (0: no sample).
    uint64_t packets_in;   ///< Datagrams accepted.
    uint64_t bytes_in;     ///< Bytes accepted.
    uint64_t packets_out;  ///< Datagrams produced.
    uint64_t bytes_out;    ///< Bytes produced.
    uint64_t dropped;      ///< Datagrams rejected (malformed, wrong token or session).
    uint64_t duplicates;   ///< Inputs received again.
    uint64_t stalls;       ///< Polls that wanted to advance but lacked an input.
    uint32_t desyncs;      ///< DESYNC notices received.
    uint32_t first_desync; ///< Tick of the first one (valid if desyncs > 0).
    uint32_t clock_shifts; ///< Time-sync corrections (catch-up ticks).
} ls_peer_stats;

/// Opaque peer.
typedef struct ls_peer ls_peer;

/// Defaults (see ls_peer_def).
LS_API ls_peer_def ls_default_peer_def(void);
/// Create a peer; NULL on bad settings, with *err (may be NULL) naming the setting.
LS_API ls_peer *ls_peer_create(const ls_peer_def *def, ls_error *err);
/// Destroy a peer.
LS_API void ls_peer_destroy(ls_peer *p);
/// Handle one datagram received from the relay at now_us (bad input is counted, never fatal).
LS_API void ls_peer_receive(ls_peer *p, const uint8_t *data, size_t len, uint64_t now_us);
/// Run timers, produce local inputs, advance every tick whose inputs are known, send.
LS_API void ls_peer_poll(ls_peer *p, uint64_t now_us);
/// Say goodbye (sends DISCONNECT); the peer then stays LEFT.
LS_API void ls_peer_leave(ls_peer *p);
/// Pop the next datagram to send to the relay; false when none.
LS_API bool ls_peer_next_datagram(ls_peer *p, ls_net_datagram *out);
/// Lifecycle state.
LS_API ls_peer_state ls_peer_state_get(const ls_peer *p);
/// Ticks simulated so far.
LS_API uint32_t ls_peer_ticks(const ls_peer *p);
/// Checksum returned by advance for the last simulated tick (0 before the first).
LS_API uint64_t ls_peer_last_checksum(const ls_peer *p);
/// Session parameters from WELCOME (slots 0 before it).
LS_API ls_net_msg ls_peer_welcome(const ls_peer *p);
/// Counters.
LS_API ls_peer_stats ls_peer_stats_get(const ls_peer *p);

LS_EXTERN_C_END

#endif
