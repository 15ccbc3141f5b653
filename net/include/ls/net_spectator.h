// SPDX-License-Identifier: MIT
/// @file
/// A spectator's sans-IO core (SPEC.md §17.10): it joins a session with a
/// spectator credential, receives the final ticks (every slot's input and the
/// agreed checksum) from the relay, simulates them through the game's advance
/// callback behind the players, as fast as they arrive (a spectator that joins
/// late catches up faster than real time), and checks its own checksum against
/// the agreed one at every tick. It holds no slot key and sends no inputs: it
/// can watch, never act. The relay never waits for it.
#ifndef LS_NET_SPECTATOR_H
#define LS_NET_SPECTATOR_H

#include "ls/net_auth.h"

LS_EXTERN_C_BEGIN

/// Spectator life cycle.
typedef enum ls_spectator_state {
    LS_SPECTATOR_JOINING = 0,  ///< Sending SPECTATE until a WELCOME arrives.
    LS_SPECTATOR_WATCHING = 1, ///< Receiving and simulating final ticks.
    LS_SPECTATOR_FINISHED = 2, ///< Simulated every tick of the match.
    LS_SPECTATOR_DROPPED = 3,  ///< The relay dropped it (too far behind, or silent).
} ls_spectator_state;

/// Kinds of spectator events.
typedef enum ls_spectator_event_type {
    LS_SPECTATOR_EV_WELCOME = 1,  ///< Joined; the session's parameters are known.
    LS_SPECTATOR_EV_MISMATCH = 2, ///< Its checksum of `tick` differs from the agreed one.
    LS_SPECTATOR_EV_PRESENCE =
        3, ///< From `tick` on the slots present are `present` (bit per slot).
    LS_SPECTATOR_EV_FINISHED = 4,    ///< Every tick simulated.
    LS_SPECTATOR_EV_DROPPED = 5,     ///< The relay dropped it (`reason`).
    LS_SPECTATOR_EV_SNAPSHOT = 6,    ///< Loaded a snapshot: simulation goes on from `tick`.
    LS_SPECTATOR_EV_STATE_ERROR = 7, ///< A snapshot failed its hash or the load callback.
} ls_spectator_event_type;

/// One spectator event.
typedef struct ls_spectator_event {
    ls_spectator_event_type type; ///< What happened.
    uint32_t tick;                ///< Tick concerned.
    uint16_t present;             ///< PRESENCE: slots with a player (bit per slot).
    uint8_t reason;               ///< DROPPED: ls_net_disconnect_reason.
    uint64_t expected;            ///< MISMATCH: the agreed checksum.
    uint64_t got;                 ///< MISMATCH: this spectator's checksum.
} ls_spectator_event;

/// What the game provides.
typedef struct ls_spectator_callbacks {
    void *user; ///< Passed to every callback.
    /// Simulate `tick` with slots * input_size bytes of inputs; return the state's checksum.
    uint64_t (*advance)(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                        uint32_t input_size);
    /// Optional: an event.
    void (*on_event)(void *user, const ls_spectator_event *ev);
    /// Optional (late join beyond the relay's history): replace the game state with the
    /// snapshot of confirmed tick `tick` (the state before simulating it); false if it
    /// cannot. Without it a spectator that falls behind the history is dropped.
    bool (*load)(void *user, uint32_t tick, const uint8_t *data, size_t len);
} ls_spectator_callbacks;

/// Spectator settings. Start from ls_default_spectator_def().
typedef struct ls_spectator_def {
    uint32_t session;             ///< Session id.
    uint32_t index;               ///< Spectator index (the credential's slot).
    uint8_t key[LS_NET_KEY_SIZE]; ///< The spectator's key (ls_spectator_def_set_credential).
    ls_net_addr relay;            ///< The relay's address.
    uint32_t max_ticks_per_poll;  ///< Catch-up speed: ticks simulated per poll, default 64.
    uint32_t join_retry_us;       ///< Re-send SPECTATE this often until welcomed, default 250 ms.
    uint32_t ack_interval_us;     ///< Acknowledge at least this often, default 50 ms.
    uint32_t state_max;           ///< Largest snapshot it accepts, bytes, default 256 KiB.
    ls_spectator_callbacks cb;    ///< Callbacks (advance required).
} ls_spectator_def;

/// Spectator counters.
typedef struct ls_spectator_stats {
    uint32_t ticks;         ///< Ticks simulated.
    uint32_t received_next; ///< It holds every final tick below this.
    uint32_t mismatches;    ///< Ticks whose checksum differed from the agreed one.
    uint64_t packets_in;    ///< Datagrams accepted.
    uint64_t bytes_in;      ///< Their bytes.
    uint64_t packets_out;   ///< Datagrams sent.
    uint64_t bytes_out;     ///< Their bytes.
    uint64_t dropped;       ///< Datagrams rejected (malformed, bad tag, replayed, misplaced).
    uint64_t duplicates;    ///< Rows received again.
    uint32_t snapshots;     ///< Snapshots loaded.
    uint32_t snapshot_tick; ///< Tick of the last one.
} ls_spectator_stats;

/// Opaque spectator.
typedef struct ls_spectator ls_spectator;

/// Defaults (see ls_spectator_def).
LS_API ls_spectator_def ls_default_spectator_def(void);
/// Copy session, index and key from a spectator credential; LS_ERR_INVALID_ARGUMENT
/// if it is a player's.
LS_API ls_result ls_spectator_def_set_credential(ls_spectator_def *def,
                                                 const ls_net_credential *cred);
/// Create a spectator; NULL on bad settings or no memory, with *err (may be NULL) saying why.
LS_API ls_spectator *ls_spectator_create(const ls_spectator_def *def, ls_error *err);
/// Destroy a spectator (its key is wiped).
LS_API void ls_spectator_destroy(ls_spectator *v);
/// Handle one datagram from the relay at now_us.
LS_API void ls_spectator_receive(ls_spectator *v, const uint8_t *data, size_t len, uint64_t now_us);
/// Run timers and simulate what has arrived (up to max_ticks_per_poll ticks).
LS_API void ls_spectator_poll(ls_spectator *v, uint64_t now_us);
/// Pop the next datagram to send; false when none.
LS_API bool ls_spectator_next_datagram(ls_spectator *v, ls_net_datagram *out);
/// Current state.
LS_API ls_spectator_state ls_spectator_state_get(const ls_spectator *v);
/// Ticks simulated.
LS_API uint32_t ls_spectator_ticks(const ls_spectator *v);
/// The checksum its advance returned for the last tick (0 before any).
LS_API uint64_t ls_spectator_last_checksum(const ls_spectator *v);
/// Counters.
LS_API ls_spectator_stats ls_spectator_stats_get(const ls_spectator *v);

LS_EXTERN_C_END

#endif
