// SPDX-License-Identifier: MIT
/// @file
/// The relay's sans-IO core: feed it datagrams and the time, drain the datagrams
/// and events it produces. It issues a credential (secret key) per slot, joins
/// peers (authenticated JOIN + address cookie), drops every datagram whose tag,
/// sequence number or source is wrong before acting on it, fans every input out
/// to the other peers and re-sends what they have not acknowledged, keeps each
/// session's confirmed input stream, compares per-tick checksums, disconnects
/// silent peers at an announced tick and hands every final tick to a recorder.
/// Spectators (their own credentials, SPEC.md §17.10) receive the final ticks
/// (every slot's input and the agreed checksum) from a bounded history; the
/// relay never waits for them: one that falls out of the history gets the
/// host's snapshot of a confirmed tick (ls_relay_session_put_state) or is dropped.
/// No sockets, no clock, no allocation after session creation.
#ifndef LS_NET_RELAY_H
#define LS_NET_RELAY_H

#include "ls/net_auth.h"

LS_EXTERN_C_BEGIN

/// Relay settings. Start from ls_default_relay_def().
typedef struct ls_relay_def {
    uint32_t max_sessions;     ///< Sessions the relay can hold (1..65536), default 64.
    uint32_t rate_limit_pps;   ///< Packets per second allowed per source address, default 2000.
    uint32_t rate_burst;       ///< Burst allowance per source, packets, default 400.
    uint32_t resend_us;        ///< Re-send unacknowledged inputs/notices after this, default 20 ms.
    uint32_t ping_interval_us; ///< Ping every peer this often, default 250 ms.
    uint32_t cookie_period_us; ///< Cookie time bucket, default 10 s (a cookie lives 1-2 buckets).
    uint32_t max_outbox;       ///< Most queued datagrams before dropping, default 65536.
    /// Most re-sent INPUT datagrams one ls_relay_poll produces (0: no limit), default 256.
    /// The rest wait for the next poll, which starts with the session that waited: past
    /// capacity (peers behind on their ACKs) re-sends cannot fill the poll and starve
    /// the reads.
    uint32_t max_resends_per_poll;
} ls_relay_def;

/// Session settings. Start from ls_default_session_def().
typedef struct ls_session_def {
    uint32_t slots;      ///< Peers (2..16), default 4.
    uint32_t tick_rate;  ///< Ticks per second (1..1000), default 60.
    uint32_t input_size; ///< Bytes per slot per tick (1..64), default 1.
    uint32_t delay;      ///< Input delay D (0..32): ticks below D have empty inputs. Default 3.
    uint32_t ticks;      ///< Match length in ticks (0: open-ended), default 0.
    uint32_t timeout_ms; ///< Silence that disconnects a joined peer, default 3000.
    uint32_t
        join_timeout_ms; ///< Time for a slot to join after creation (0: forever), default 30000.
    uint32_t spectators; ///< Spectator credentials (0..16), default 4.
    uint32_t history;    ///< Final ticks kept for spectators (64..65536), default 1024.
    uint32_t state_max;  ///< Snapshot bytes kept for late spectators (0: none), default 256 KiB.
    uint32_t rejoin_ms;  ///< A slot disconnected by timeout may REJOIN this long after (0: never),
                         ///< default 30000 (needs state_max: the rejoiner loads a snapshot).
} ls_session_def;

/// Kinds of relay events.
typedef enum ls_relay_event_type {
    LS_RELAY_EV_JOINED = 1,       ///< A slot joined (or moved to a new address).
    LS_RELAY_EV_DISCONNECTED = 2, ///< A slot is gone from `tick` on (reason). KICKED with
                                  ///< `slots` set: its acknowledgements of those slots'
                                  ///< inputs stayed behind the first non-final tick for
                                  ///< timeout_ms (SPEC.md §17.5: it held the window).
    LS_RELAY_EV_DESYNC = 3, ///< Checksums of `tick` disagree; `slots` disagree with the majority.
    LS_RELAY_EV_SESSION_DONE = 4,      ///< Every tick is final (`tick` = ticks recorded).
    LS_RELAY_EV_SPECTATOR_JOINED = 5,  ///< Spectator `slot` (its index) joined.
    LS_RELAY_EV_SPECTATOR_DROPPED = 6, ///< Spectator `slot` left, went silent or fell behind.
    LS_RELAY_EV_STATE_NEEDED = 7,      ///< A spectator is behind the history: supply a snapshot of
                                       ///< a confirmed tick >= `tick` (ls_relay_session_put_state);
                                       ///< `slot`: the spectator index, or the rejoining slot.
    LS_RELAY_EV_REJOINED = 8,          ///< Slot `slot` is back: its inputs count from `tick` on.
    /// Checksums of `tick` disagree and no value has more reports than every other (two
    /// players, or a tie): nobody is named. `slots` = every slot that reported; the
    /// recorder gets every claim (`claims`), `replay verify` names who was wrong.
    LS_RELAY_EV_DISPUTED = 9,
    /// A rejoiner refused the snapshot of `tick`: its state's checksum (`got`) is not the
    /// agreed checksum of `tick` - 1 (`expected`). `slot` = who supplied it (the uploader,
    /// or LS_NET_SOURCE_HOST), `slots` = the rejoiner's bit. The relay asks another source;
    /// with none left the rejoiner is disconnected again (KICKED) at its timeout.
    LS_RELAY_EV_SNAPSHOT_REFUSED = 10,
} ls_relay_event_type;

/// One relay event.
typedef struct ls_relay_event {
    ls_relay_event_type type; ///< What happened.
    uint32_t session;         ///< Session id.
    uint32_t slot;            ///< Slot concerned (JOINED, DISCONNECTED).
    uint32_t tick;            ///< Tick concerned.
    uint16_t slots;    ///< DESYNC: disagreeing slots (bit per slot); DISPUTED: reporting slots.
                       ///< DISCONNECTED: the slots whose inputs it left unacknowledged
                       ///< (stale acknowledgements), else 0.
    uint8_t reason;    ///< DISCONNECTED: ls_net_disconnect_reason.
    uint64_t expected; ///< DESYNC: the majority checksum.
    uint64_t got;      ///< DESYNC: the checksum of the lowest disagreeing slot.
} ls_relay_event;

/// Where final ticks go (the replay recorder plugs in here).
typedef struct ls_relay_recorder {
    void *user; ///< Passed to the callbacks.
    /// Tick `tick` is final: slots * input_size bytes of inputs and the agreed checksum.
    void (*tick)(void *user, uint32_t session, uint32_t tick, const uint8_t *inputs,
                 uint64_t checksum);
    /// The session ended after `ticks` final ticks.
    void (*end)(void *user, uint32_t session, uint32_t ticks);
    /// Optional, called just before `tick` for a tick whose reported checksums disagree:
    /// `reported` (bit per slot) slots reported claims[slot]; `disputed` when no value had
    /// more reports than every other (the checksum given to `tick` is then the lowest
    /// reporting slot's, and names nobody). NULL: claims are not recorded.
    void (*claims)(void *user, uint32_t session, uint32_t tick, uint16_t reported,
                   const uint64_t *claims, bool disputed);
} ls_relay_recorder;

/// Per-peer counters as the relay sees them (drops: every datagram naming the slot that
/// was dropped, whatever the reason; the reasons are counted relay-wide).
typedef struct ls_relay_peer_stats {
    bool joined;              ///< The slot has a verified address.
    bool disconnected;        ///< The slot is gone.
    uint32_t disconnect_tick; ///< From this tick its input is empty.
    uint8_t reason;           ///< ls_net_disconnect_reason.
    ls_net_addr addr;         ///< Verified address.
    uint32_t rtt_us;          ///< Smoothed round-trip time (0: no sample yet).
    uint32_t rtt_min_us;      ///< Smallest sample.
    uint32_t rtt_max_us;      ///< Largest sample.
    uint64_t packets_in;      ///< Packets accepted from the peer.
    uint64_t bytes_in;        ///< Bytes accepted from the peer.
    uint64_t packets_out;     ///< Packets sent to the peer.
    uint64_t bytes_out;       ///< Bytes sent to the peer.
    uint64_t drops;           ///< Packets naming this slot that were dropped.
    uint64_t duplicates;      ///< Inputs/checksums received again (redundancy at work).
    uint32_t input_next;      ///< The relay holds this slot's inputs below this tick.
    uint32_t checksum_next;   ///< The relay holds this slot's checksums below this tick.
    uint32_t rejoins;         ///< Times the slot came back (REJOIN accepted).
    uint32_t rejoin_tick;     ///< Its inputs count again from this tick (latest rejoin).
} ls_relay_peer_stats;

/// Relay-wide counters.
typedef struct ls_relay_stats {
    uint64_t packets_in;     ///< Datagrams received.
    uint64_t bytes_in;       ///< Bytes received.
    uint64_t packets_out;    ///< Datagrams produced.
    uint64_t bytes_out;      ///< Bytes produced.
    uint64_t malformed;      ///< Datagrams that failed to decode or made no sense.
    uint64_t truncated;      ///< Datagrams shorter than their header or body length says.
    uint64_t wrong_version;  ///< Datagrams of another wire version (v1 peers).
    uint64_t bad_mac;        ///< Datagrams whose tag is wrong: forged, corrupted or wrong key.
    uint64_t replayed;       ///< Authentic datagrams received before (replay window).
    uint64_t stale;          ///< Authentic datagrams older than the replay window.
    uint64_t unverified;     ///< Authentic datagrams from an address that has not joined the slot.
    uint64_t no_session;     ///< Datagrams naming an unknown session.
    uint64_t rate_limited;   ///< Datagrams over the per-source rate.
    uint64_t challenges;     ///< CHALLENGEs sent.
    uint64_t outbox_dropped; ///< Datagrams dropped because the outbox was full.
    uint32_t desyncs;        ///< Desynced ticks with a majority (all sessions).
    uint32_t disputes;       ///< Desynced ticks without one: nobody named (all sessions).
    uint32_t snapshots_refused;  ///< Rejoin snapshots refused by their rejoiner (proof failed).
    uint64_t spectator_refused;  ///< Takeover attempts: a spectator credential acting as a player.
    uint64_t spectators_dropped; ///< Spectators dropped (silent, or behind the history).
    uint64_t rejoins;            ///< REJOINs accepted.
    uint64_t
        rejoin_refused; ///< Authentic REJOINs refused (slot live, left or kicked, window over).
    uint64_t resends_deferred; ///< Polls in which max_resends_per_poll held re-sends back.
} ls_relay_stats;

/// Opaque relay.
typedef struct ls_relay ls_relay;

/// Defaults (see ls_relay_def).
LS_API ls_relay_def ls_default_relay_def(void);
/// Defaults (see ls_session_def).
LS_API ls_session_def ls_default_session_def(void);
/// Create a relay; NULL on bad settings or no memory, with *err (may be NULL) saying why.
LS_API ls_relay *ls_relay_create(const ls_relay_def *def, ls_error *err);
/// Destroy a relay.
LS_API void ls_relay_destroy(ls_relay *r);
/// Create a session with a random secret key per slot; *id receives its id (1-based).
LS_API ls_result ls_relay_session_create(ls_relay *r, const ls_session_def *def, uint64_t now_us,
                                         uint32_t *id);
/// Create a session with the id the caller chooses (1..max_sessions, not in use):
/// a host that shards sessions over several relays (one per thread) numbers them
/// across all of them, so a credential's session id names one relay's session.
/// Ids skipped stay free for later. LS_ERR_INVALID_ARGUMENT for an id in use (or
/// 0, or bad settings), LS_ERR_CAPACITY beyond max_sessions.
LS_API ls_result ls_relay_session_create_at(ls_relay *r, const ls_session_def *def, uint64_t now_us,
                                            uint32_t id);
/// The credential of a slot of session id (hand it to that slot's player only, never
/// over the relay protocol); LS_ERR_NOT_FOUND if no such slot.
LS_API ls_result ls_relay_session_credential(const ls_relay *r, uint32_t id, uint32_t slot,
                                             ls_net_credential *out);
/// The credential of spectator `index` (0..spectators-1) of session id (role
/// LS_NET_ROLE_SPECTATOR: it can watch, never send inputs); LS_ERR_NOT_FOUND if none.
LS_API ls_result ls_relay_session_spectator_credential(const ls_relay *r, uint32_t id,
                                                       uint32_t index, ls_net_credential *out);
/// Supply the snapshot (the game's serialised state before confirmed tick `tick`, as
/// every peer has it) that late spectators load (LS_RELAY_EV_STATE_NEEDED). `tick`
/// must be a final tick still in the history (or the next one); the relay copies
/// the bytes, hashes them (BLAKE2b-256) and sends them in STATE_CHUNKs.
/// LS_ERR_CAPACITY if len > state_max, LS_ERR_INVALID_ARGUMENT for a tick it cannot use.
LS_API ls_result ls_relay_session_put_state(ls_relay *r, uint32_t id, uint32_t tick,
                                            const uint8_t *data, size_t len);
/// Attach a recorder to a session (before peers join).
LS_API ls_result ls_relay_session_set_recorder(ls_relay *r, uint32_t id,
                                               const ls_relay_recorder *rec);
/// True when session id has ended (all ticks final, or everyone gone).
LS_API bool ls_relay_session_done(const ls_relay *r, uint32_t id);
/// True when session id has ended, every slot is gone and every watching spectator
/// acknowledged the last final tick (nothing more to serve). A peer says goodbye as it
/// becomes FINISHED, so this follows the last one by a round trip; a finished peer whose
/// goodbye was lost is sent nothing more and is gone timeout_ms after its last datagram.
LS_API bool ls_relay_session_idle(const ls_relay *r, uint32_t id);
/// End session id now (an operator's decision): every slot still in it is disconnected
/// (LS_NET_KICKED, LS_RELAY_EV_DISCONNECTED each) at the tick it would send next, so the
/// session ends as when everyone is gone: its final ticks stay final, the recorder's `end`
/// runs and LS_RELAY_EV_SESSION_DONE follows. LS_OK also when it had ended already;
/// LS_ERR_NOT_FOUND for no such session.
LS_API ls_result ls_relay_session_end(ls_relay *r, uint32_t id, uint64_t now_us);
/// Ticks of session id that are final (recorded).
LS_API uint32_t ls_relay_session_final_ticks(const ls_relay *r, uint32_t id);
/// Handle one received datagram from `from` at time now_us (never fails; bad input is counted).
LS_API void ls_relay_receive(ls_relay *r, const ls_net_addr *from, const uint8_t *data, size_t len,
                             uint64_t now_us);
/// Run timers: re-sends, pings, disconnect timeouts.
LS_API void ls_relay_poll(ls_relay *r, uint64_t now_us);
/// Pop the next datagram to send; false when none.
LS_API bool ls_relay_next_datagram(ls_relay *r, ls_net_datagram *out);
/// Pop the next event; false when none.
LS_API bool ls_relay_next_event(ls_relay *r, ls_relay_event *out);
/// Relay-wide counters.
LS_API ls_relay_stats ls_relay_stats_get(const ls_relay *r);
/// Counters of spectator `index` (input_next: the final ticks it acknowledged;
/// disconnected: dropped). Zeroed if no such spectator.
LS_API ls_relay_peer_stats ls_relay_spectator_stats_get(const ls_relay *r, uint32_t id,
                                                        uint32_t index);
/// Counters of one peer (zeroed if no such slot).
LS_API ls_relay_peer_stats ls_relay_peer_stats_get(const ls_relay *r, uint32_t id, uint32_t slot);

LS_EXTERN_C_END

#endif
