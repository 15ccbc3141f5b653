// SPDX-License-Identifier: MIT
/// @file
/// A peer's sans-IO core. The game plugs in through callbacks (like GGPO):
/// local_input(tick) asks for this peer's input, advance(tick, inputs)
/// simulates one tick with every slot's input and returns the state checksum.
/// In lockstep mode a tick is advanced only when every slot's input for it is
/// known; inputs are sent D ticks ahead (input delay) and the peer paces itself
/// to stay within a bounded lead of what it has simulated. In rollback mode
/// (ls/net_rollback.h) the peer runs one frame per clock tick, predicts the
/// inputs it lacks, and when they arrive different it loads the state saved
/// for that tick (save/load callbacks) and re-simulates; only confirmed ticks'
/// checksums go to the relay. The core sends inputs with redundancy
/// (everything unacknowledged, every time), checksums, acks and pings. Every
/// datagram is sealed with the slot's secret key (from its credential,
/// ls/net_auth.h) and every received one is verified and checked against a
/// replay window before anything in it is used (SPEC.md §17.3).
#ifndef LS_NET_PEER_H
#define LS_NET_PEER_H

#include "ls/net_auth.h"
#include "ls/net_rollback.h"

LS_EXTERN_C_BEGIN

/// Synchronisation model.
typedef enum ls_peer_mode {
    LS_PEER_LOCKSTEP = 0, ///< Advance a tick only when all its inputs are confirmed.
    LS_PEER_ROLLBACK = 1, ///< Predict missing inputs; correct by rollback (needs save/load).
} ls_peer_mode;

/// Peer lifecycle.
typedef enum ls_peer_state {
    LS_PEER_JOINING = 0,   ///< Sending JOIN until the relay welcomes us.
    LS_PEER_RUNNING = 1,   ///< In the match.
    LS_PEER_FINISHED = 2,  ///< All ticks simulated and acknowledged by the relay. The peer
                           ///< said goodbye (DISCONNECT LEFT, three copies) as it finished
                           ///< and sends nothing more: the relay releases the slot without
                           ///< ls_peer_leave (SPEC.md §17.8). The other peers see it as
                           ///< DISCONNECTED (LEFT) at the match length, past every tick.
    LS_PEER_LEFT = 3,      ///< Disconnected (left, or declared gone by the relay).
    LS_PEER_REJOINING = 4, ///< Timed out; rejoining (REJOIN, then a snapshot), see ls_peer_rejoin.
} ls_peer_state;

/// What a peer does when the relay times it out (silent for the session's timeout: a
/// network outage, or a game that stopped calling ls_peer_poll / ls_peer_receive for
/// that long), or when it joins after the session's join timeout (SPEC.md §17.10).
/// Rejoining loads a snapshot of a confirmed tick and proves it against the agreed
/// checksum, so it needs the `load` and `state_checksum` callbacks; with `save` the peer
/// also serves snapshots to others. A peer that does not rejoin is LEFT for the rest of
/// the match (its slot plays the empty input). `ls_peer_def.rejoin` was a bool: `false`
/// is LS_PEER_REJOIN_OFF and `true` LS_PEER_REJOIN_ON, as before.
typedef enum ls_peer_rejoin {
    LS_PEER_REJOIN_OFF = 0, ///< Never rejoin: timed out means LEFT.
    LS_PEER_REJOIN_ON = 1,  ///< Always; ls_peer_create refuses a definition without the callbacks.
    /// The default: rejoin when cb.load and cb.state_checksum are both given, else as OFF
    /// (ls_peer_rejoins tells which one a peer got).
    LS_PEER_REJOIN_AUTO = 2,
} ls_peer_rejoin;

/// Kinds of peer events.
typedef enum ls_peer_event_type {
    LS_PEER_EV_WELCOME = 1,      ///< Joined; the session parameters are known.
    LS_PEER_EV_DESYNC = 2,       ///< The relay reports disagreeing checksums at `tick`.
    LS_PEER_EV_DISCONNECTED = 3, ///< Slot `slot` is gone from `tick` on (empty input).
    LS_PEER_EV_FINISHED = 4,     ///< Every tick of the match is simulated and acknowledged
                                 ///< (the goodbye is queued: drain the datagrams as usual).
    LS_PEER_EV_ROLLBACK = 5,     ///< Rollback: loaded `tick`'s state to re-simulate `count` ticks.
    LS_PEER_EV_WAITING = 6,     ///< Rollback: prediction window full, waiting for `slot` at `tick`.
    LS_PEER_EV_TIME_SYNC = 7,   ///< Rollback: skipped a frame, `frames_ahead` of the slowest slot.
    LS_PEER_EV_STATE_ERROR = 8, ///< Rollback: save (`count` 0) or load (1) failed at `tick`;
                                ///< rejoin: the snapshot of `tick` failed its hash (0) or load (1).
    LS_PEER_EV_REJOINED = 9, ///< Slot `slot` is back from `tick` on (ours: snapshot tick `count`).
    /// The relay reports disagreeing checksums at `tick` with no majority (two players, or
    /// a tie): nobody is named; `slots` = every slot that reported (SPEC.md §17.7).
    LS_PEER_EV_DISPUTED = 10,
    /// Rejoin: the snapshot of `tick` did not prove out (its state's checksum is not the
    /// agreed `expected`): refused; `slot` = who supplied it (LS_NET_SOURCE_HOST: the
    /// relay's host). The relay tries another source or gives up (our slot is KICKED).
    LS_PEER_EV_SNAPSHOT_REFUSED = 11,
    /// The network is interrupted, well before the relay's timeout would disconnect anyone
    /// (`interrupt_us`, SPEC.md §17.9). `slot` = ours: nothing authentic came from the relay
    /// for interrupt_us. `slot` = another: its inputs stopped for interrupt_us while the
    /// relay kept talking to us and it is the slot everyone waits for (its input frontier
    /// is the lowest). `tick`: the first tick of the slot's inputs we lack (ours: ticks
    /// simulated); `count`: estimated milliseconds left before the relay's timeout
    /// disconnects it (0: due). Once per interruption; it ends with RESUMED, or with
    /// DISCONNECTED for that slot (then no RESUMED).
    LS_PEER_EV_INTERRUPTED = 12,
    /// The interruption of `slot` is over (ours: the relay is heard again; another: its
    /// inputs arrive again); `tick` as for INTERRUPTED, `count`: the interruption's length
    /// in milliseconds.
    LS_PEER_EV_RESUMED = 13,
} ls_peer_event_type;

/// One peer event.
typedef struct ls_peer_event {
    ls_peer_event_type type; ///< What happened.
    uint32_t slot;           ///< DISCONNECTED, REJOINED, INTERRUPTED, RESUMED: the slot.
    uint32_t tick;           ///< Tick concerned.
    uint16_t slots;          ///< DESYNC: slots that disagree with the majority; DISPUTED: all.
    uint8_t reason;          ///< DISCONNECTED: ls_net_disconnect_reason.
    uint64_t expected;       ///< DESYNC: the majority checksum.
    /// ROLLBACK: ticks re-simulated; STATE_ERROR: 0 save, 1 load; REJOINED (ours): the
    /// snapshot's tick; INTERRUPTED: estimated ms left before the relay's timeout;
    /// RESUMED: the interruption's length in ms.
    uint32_t count;
    int32_t frames_ahead; ///< TIME_SYNC: our lead that triggered the skip.
} ls_peer_event;

/// The game, driven by the peer.
typedef struct ls_peer_callbacks {
    void *user; ///< Passed to every callback.
    /// Write this peer's input for `tick` (input_size bytes, zeroed beforehand).
    void (*local_input)(void *user, uint32_t tick, uint8_t *out, uint32_t input_size);
    /// Simulate `tick` with every slot's input (slot k at inputs + k * input_size);
    /// return the checksum of the state after the tick. Rollback mode: some inputs may be
    /// predictions (ls_peer_predicted tells which, from inside this callback).
    uint64_t (*advance)(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                        uint32_t input_size);
    /// Optional: an event happened.
    void (*on_event)(void *user, const ls_peer_event *ev);
    /// Rollback mode (required there): save the state at the start of `tick` into buf
    /// (cap bytes); return the bytes written, the size needed if cap is too small, or 0.
    size_t (*save)(void *user, uint32_t tick, uint8_t *buf, size_t cap);
    /// Rollback mode (required there), and rejoin: restore the state saved for `tick` (rejoin:
    /// the snapshot of confirmed tick `tick`, the state before simulating it); false on failure.
    bool (*load)(void *user, uint32_t tick, const uint8_t *buf, size_t size);
    /// Rejoin (required there; with `load` it makes the default LS_PEER_REJOIN_AUTO rejoin):
    /// the checksum of the state the game holds, which is the state at the start of `tick`,
    /// i.e. what `advance` returned for `tick` - 1 (usually the same function of the state
    /// as `advance` returns). A rejoiner proves a loaded snapshot with it against the
    /// agreed checksum the relay sends, and refuses a snapshot that does not prove out
    /// (SPEC.md §17.10).
    uint64_t (*state_checksum)(void *user, uint32_t tick);
    /// Rollback mode, optional: predict slot's input at tick (inout holds its last known input).
    void (*predict)(void *user, uint32_t slot, uint32_t tick, uint8_t *inout, uint32_t input_size);
} ls_peer_callbacks;

/// Peer settings. Start from ls_default_peer_def().
typedef struct ls_peer_def {
    uint32_t session;             ///< Session id.
    uint32_t slot;                ///< Our slot.
    uint8_t key[LS_NET_KEY_SIZE]; ///< Our slot's secret key (from its credential; never sent).
    ls_net_addr relay;            ///< Relay address (every datagram goes there).
    ls_peer_mode mode;            ///< LS_PEER_LOCKSTEP (default) or LS_PEER_ROLLBACK.
    uint32_t max_lead;            ///< Lockstep: lead bound in ticks (1..32), default 8.
    uint32_t resend_us;           ///< Re-send unacknowledged data after this, default 20 ms.
    uint32_t join_retry_us;       ///< Re-send JOIN after this, default 200 ms.
    uint32_t ping_interval_us;    ///< Ping the relay this often, default 250 ms.
    /// LS_PEER_EV_INTERRUPTED after this much silence (of the relay, or of a slot's inputs),
    /// default 500 ms (0: no such events). Keep it above the relay's ping interval (250 ms)
    /// and ping_interval_us (PINGs and PONGs are what a quiet link carries) and below the
    /// session's timeout (3 s by default).
    uint32_t interrupt_us;
    uint32_t max_prediction; ///< Rollback: prediction window W (0..64), default 8.
    uint32_t resim_budget;   ///< Rollback: re-simulated ticks per frame (0: no limit), default 0.
    uint32_t
        time_sync_threshold; ///< Rollback: frames ahead that make a frame skip (0: off), default 2.
    /// When timed out, rejoin (REJOIN, load a proven snapshot), default LS_PEER_REJOIN_AUTO:
    /// whenever cb.load and cb.state_checksum are given (see ls_peer_rejoin).
    ls_peer_rejoin rejoin;
    /// The sequence number of the first datagram this peer seals (peer -> relay); the next
    /// ones count up from it (SPEC.md §17.3). 0 (the default) means 1, as every fresh
    /// session's first peer. A peer started again for a slot an earlier process of the
    /// same credential already used (a page that reloads, a bot restarted) MUST start
    /// above every number that process sent, or the relay drops its datagrams as replayed
    /// and a (key, direction, number) would repeat a ChaCha20-Poly1305 nonce: take it from
    /// the clock, e.g. Unix time in microseconds x 4096 (see SPEC.md §17.3 for the bound).
    /// ls_peer_create refuses a value above 2^64 - 1 - 2^32 (fewer than 2^32 numbers left).
    uint64_t first_seq;
    /// This peer replaces an earlier process of the same credential that may still hold
    /// the slot at the relay (a page that reloads mid-match, SPEC.md §17.10): after WELCOME
    /// it does not play from tick 0 but stays silent for the session's timeout (the relay
    /// then times the old process out), then rejoins as a timed-out peer (REJOIN, a proven
    /// snapshot). Needs rejoin (cb.load and cb.state_checksum); set first_seq with it.
    /// Default false.
    bool restarted;
    ls_peer_callbacks cb; ///< The game.
} ls_peer_def;

/// Peer-side counters.
typedef struct ls_peer_stats {
    uint32_t rtt_us;       ///< Smoothed RTT to the relay (0: no sample).
    uint64_t packets_in;   ///< Datagrams accepted.
    uint64_t bytes_in;     ///< Bytes accepted.
    uint64_t packets_out;  ///< Datagrams produced.
    uint64_t bytes_out;    ///< Bytes produced.
    uint64_t dropped;      ///< Datagrams rejected, for any reason (sum of the four below and more).
    uint64_t malformed;    ///< Datagrams that failed to decode or named another session/slot.
    uint64_t bad_mac;      ///< Datagrams whose tag is wrong (forged, corrupted, wrong key).
    uint64_t replayed;     ///< Authentic datagrams seen before (replay window).
    uint64_t stale;        ///< Authentic datagrams older than the replay window.
    uint64_t duplicates;   ///< Inputs received again.
    uint64_t stalls;       ///< Polls that wanted to advance but lacked an input.
    uint32_t desyncs;      ///< DESYNC notices received (a majority named `slots`).
    uint32_t first_desync; ///< Tick of the first one (valid if desyncs > 0).
    uint32_t named;        ///< DESYNC notices that named this peer's slot.
    uint32_t disputes;     ///< Disputed DESYNC notices (no majority: nobody named).
    uint32_t clock_shifts; ///< Lockstep time-sync corrections (catch-up ticks).
    uint64_t frames;       ///< Rollback: frames run (one per clock tick).
    uint64_t rollbacks;    ///< Rollback: corrections (state loads).
    uint64_t resimulated;  ///< Rollback: ticks re-simulated (mean per frame: / frames).
    uint32_t max_resim_frame;   ///< Rollback: most ticks re-simulated in one frame.
    uint32_t max_rollback;      ///< Rollback: longest rollback in ticks.
    uint64_t predicted;         ///< Rollback: predicted inputs whose real value arrived ...
    uint64_t predicted_hits;    ///< ... and were right (hit rate: predicted_hits / predicted).
    uint64_t waits;             ///< Rollback: frames lost waiting on the prediction window.
    uint64_t time_sync_skips;   ///< Rollback: frames skipped by time sync (adjustments).
    int32_t frames_ahead;       ///< Rollback: latest time-sync estimate of our lead.
    uint32_t rejoins;           ///< Times we rejoined (snapshot loaded).
    uint32_t snapshots_refused; ///< Rejoin snapshots that did not prove out (refused).
    uint32_t snapshot_tick;     ///< Tick of the latest snapshot loaded on rejoin.
    uint32_t rejoin_tick;       ///< Our inputs count again from this tick (latest rejoin).
    uint32_t kbps_in;  ///< Kilobits per second accepted (bytes_in), mean of about the last second.
    uint32_t kbps_out; ///< Kilobits per second produced (bytes_out), mean of about the last second.
    uint32_t send_queue;     ///< Datagrams produced and not yet taken by ls_peer_next_datagram.
    uint32_t unacked_inputs; ///< Our inputs the relay has not acknowledged (re-sent until it does).
    uint32_t interruptions;  ///< LS_PEER_EV_INTERRUPTED for our own slot (the relay went silent).
    bool interrupted;        ///< Between such an INTERRUPTED and its RESUMED.
} ls_peer_stats;

/// One slot as this peer sees it (ls_peer_remote_stats_get). Through a relay a peer hears
/// no other peer directly: its round trip to another peer is not measurable (rtt_us in
/// ls_peer_stats is the round trip to the relay; a remote input's age adds the remote's
/// own link, unknown, which frames_behind and since_input_us show together).
typedef struct ls_peer_remote_stats {
    uint32_t frontier; ///< We hold the slot's inputs below this tick (its first missing one).
    /// The relay held the slot's inputs below this tick at its latest acknowledgement to us
    /// (our own slot: the relay holds our inputs below it); the inputs between frontier and
    /// relay_frontier are on their way from the relay to us.
    uint32_t relay_frontier;
    /// Frames the slot is behind us: our ticks simulated - (frontier - input delay), i.e. how
    /// far its newest input trails our simulation (its own present, as far as we can know;
    /// negative: ahead). GGRS's local_frames_behind with the opposite sign.
    int32_t frames_behind;
    /// Microseconds from the slot's last new input (our own: the last input we produced)
    /// to the last ls_peer_poll (0 while we are not RUNNING).
    uint64_t since_input_us;
    bool interrupted;       ///< Between LS_PEER_EV_INTERRUPTED and RESUMED for the slot.
    bool gone;              ///< Disconnected: its input is empty from gone_tick on.
    uint8_t reason;         ///< ls_net_disconnect_reason of its latest disconnect (0: none).
    uint32_t gone_tick;     ///< Tick of its latest disconnect (valid when reason != 0).
    uint32_t rejoins;       ///< Times it came back (LS_PEER_EV_REJOINED).
    uint32_t rejoin_tick;   ///< Its inputs count again from this tick (latest return).
    uint32_t interruptions; ///< LS_PEER_EV_INTERRUPTED for the slot.
} ls_peer_remote_stats;

/// Opaque peer.
typedef struct ls_peer ls_peer;

/// Defaults (see ls_peer_def).
LS_API ls_peer_def ls_default_peer_def(void);
/// Copy a player credential's session, slot and key into def; LS_ERR_INVALID_ARGUMENT
/// for a spectator credential (reserved).
LS_API ls_result ls_peer_def_set_credential(ls_peer_def *def, const ls_net_credential *cred);
/// Create a peer; NULL on bad settings, with *err (may be NULL) naming the setting.
LS_API ls_peer *ls_peer_create(const ls_peer_def *def, ls_error *err);
/// Destroy a peer.
LS_API void ls_peer_destroy(ls_peer *p);
/// Handle one datagram received from the relay at now_us (bad input is counted, never fatal).
LS_API void ls_peer_receive(ls_peer *p, const uint8_t *data, size_t len, uint64_t now_us);
/// Run timers, produce local inputs, advance every tick whose inputs are known, send.
LS_API void ls_peer_poll(ls_peer *p, uint64_t now_us);
/// Say goodbye (sends DISCONNECT LEFT three times); the peer then stays LEFT. Not needed at
/// the end of a match: a peer says goodbye by itself as it becomes FINISHED, and this call
/// then sends nothing and it stays FINISHED.
LS_API void ls_peer_leave(ls_peer *p);
/// Pop the next datagram to send to the relay; false when none.
LS_API bool ls_peer_next_datagram(ls_peer *p, ls_net_datagram *out);
/// Lifecycle state.
LS_API ls_peer_state ls_peer_state_get(const ls_peer *p);
/// Ticks simulated so far (rollback: including predicted ones).
LS_API uint32_t ls_peer_ticks(const ls_peer *p);
/// Checksum returned by advance for the last simulated tick (rollback: the last confirmed
/// tick, the last one sent to the relay; 0 before the first).
LS_API uint64_t ls_peer_last_checksum(const ls_peer *p);
/// Session parameters from WELCOME (slots 0 before it).
LS_API ls_net_msg ls_peer_welcome(const ls_peer *p);
/// Counters.
LS_API ls_peer_stats ls_peer_stats_get(const ls_peer *p);
/// Slot `slot` (ours included) as this peer sees it; all zero before WELCOME and for a slot
/// beyond the session's.
LS_API ls_peer_remote_stats ls_peer_remote_stats_get(const ls_peer *p, uint32_t slot);
/// Whether this peer rejoins when the relay times it out (ls_peer_rejoin: ON, or AUTO with
/// cb.load and cb.state_checksum given).
LS_API bool ls_peer_rejoins(const ls_peer *p);
/// Inside the advance callback: bit k set when slot k's input for the tick being simulated
/// is a prediction (rollback mode; its real input has not arrived), clear when it is
/// confirmed (ls_peer_confirmed_input has it). Outside the callback: the mask the last
/// call used (a tick simulated with predictions that all proved right is not simulated
/// again). Lockstep: always 0.
LS_API uint32_t ls_peer_predicted(const ls_peer *p);
/// Every slot's input is confirmed (known for good) for every tick below this one.
LS_API uint32_t ls_peer_confirmed(const ls_peer *p);
/// Slot's confirmed input of `tick` into out (the session's input_size bytes): the input
/// the relay delivered (ours: the one we produced), or the empty input where the slot is
/// disconnected or below the input delay. false when it is not confirmed yet, the tick is
/// too old (inputs are kept for LS_ROLLBACK_INPUT_WINDOW ticks) or the slot is not one.
LS_API bool ls_peer_confirmed_input(const ls_peer *p, uint32_t slot, uint32_t tick, uint8_t *out);

LS_EXTERN_C_END

#endif
