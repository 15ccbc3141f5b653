// SPDX-License-Identifier: MIT
/// @file
/// The rollback (prediction-correction) core, sans-IO and physics-agnostic
/// (SPEC.md "Rollback and SyncTest"). The game plugs in GGPO-style through
/// callbacks: save(tick) stores the state at the start of a tick, load(tick)
/// brings it back, advance(tick, inputs) simulates one tick and returns the
/// checksum of the state after it. Remote inputs are added as they arrive, in
/// any order; missing ones are predicted (repeat the last known input, or a
/// game-supplied predictor). When an input turns out to differ from what a
/// simulated tick used, the core loads the newest saved state at or before that
/// tick and re-simulates to the present with the corrected inputs. Checksums are
/// final (and compared with other peers') only for confirmed ticks, so
/// prediction never causes a false desync.
#ifndef LS_NET_ROLLBACK_H
#define LS_NET_ROLLBACK_H

#include "ls/base.h"

LS_EXTERN_C_BEGIN

/// Most slots a rollback session has.
#define LS_ROLLBACK_MAX_SLOTS 16
/// Most bytes of one slot's input for one tick.
#define LS_ROLLBACK_MAX_INPUT 64
/// Largest prediction window (ticks simulated beyond the confirmed frontier).
#define LS_ROLLBACK_MAX_PREDICTION 64
/// Largest input delay.
#define LS_ROLLBACK_MAX_DELAY 64
/// Inputs are accepted for ticks below (confirmed frontier) + this; later ones are refused.
#define LS_ROLLBACK_INPUT_WINDOW 256
/// Frames averaged by time sync.
#define LS_ROLLBACK_TIME_SYNC_SAMPLES 16
/// `local_slot` value for a core that produces no input itself.
#define LS_ROLLBACK_NO_SLOT 0xFFFFFFFFu

/// Kinds of rollback events.
typedef enum ls_rollback_event_type {
    LS_ROLLBACK_EV_ROLLBACK =
        1, ///< Loaded the state of `tick` to re-simulate `count` ticks up to `present`.
    LS_ROLLBACK_EV_WAITING =
        2, ///< Prediction window full at `present`: waiting for `slot`'s input for `tick`.
    LS_ROLLBACK_EV_DESYNC =
        3, ///< Confirmed `tick`: our checksum `local` differs from `slot`'s `remote`.
    LS_ROLLBACK_EV_TIME_SYNC =
        4,                    ///< Skipped a frame: `frames_ahead` (mean) of the slowest live slot.
    LS_ROLLBACK_EV_ERROR = 5, ///< save or load failed at `tick` (`count` 0: save, 1: load).
} ls_rollback_event_type;

/// One rollback event.
typedef struct ls_rollback_event {
    ls_rollback_event_type type; ///< What happened.
    uint32_t slot;               ///< WAITING: slot waited for; DESYNC: remote slot.
    uint32_t tick;               ///< Tick concerned (see the type).
    uint32_t present;            ///< Next tick to simulate for the first time, at the event.
    uint32_t count;              ///< ROLLBACK: ticks to re-simulate (present - tick).
    int32_t frames_ahead;        ///< TIME_SYNC: the estimate that triggered the skip.
    uint64_t local;              ///< DESYNC: our checksum of `tick`.
    uint64_t remote;             ///< DESYNC: the remote slot's checksum of `tick`.
} ls_rollback_event;

/// The game, driven by the core. Every callback runs inside ls_rollback_advance.
typedef struct ls_rollback_callbacks {
    void *user; ///< Passed to every callback.
    /// Write the local slot's input for `tick` (input_size bytes, zeroed beforehand).
    /// Called once per tick, in tick order, when the core is about to simulate
    /// tick - input_delay for the first time. Required when local_slot is set.
    void (*local_input)(void *user, uint32_t tick, uint8_t *out, uint32_t input_size);
    /// Save the state at the start of `tick` (after tick - 1) into buf (cap bytes).
    /// Return the bytes written, or the size needed if cap is too small (the core
    /// grows its buffer and calls again), or 0 on failure. Required unless max_prediction is 0.
    size_t (*save)(void *user, uint32_t tick, uint8_t *buf, size_t cap);
    /// Restore the state saved for `tick`; false on failure. Required unless max_prediction is 0.
    bool (*load)(void *user, uint32_t tick, const uint8_t *buf, size_t size);
    /// Simulate `tick` with every slot's input (slot k at inputs + k * input_size);
    /// bit k of `predicted` is set when slot k's input is a prediction. Return the
    /// checksum of the state after the tick. Required.
    uint64_t (*advance)(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                        uint32_t input_size, uint32_t predicted);
    /// Optional predictor: `inout` holds the default guess for slot's input at
    /// `tick` (its last known input); change it to predict otherwise. Must be a
    /// function of its arguments only.
    void (*predict)(void *user, uint32_t slot, uint32_t tick, uint8_t *inout, uint32_t input_size);
    /// Optional: an event happened (see ls_rollback_event_type).
    void (*on_event)(void *user, const ls_rollback_event *ev);
} ls_rollback_callbacks;

/// Rollback settings. Start from ls_default_rollback_def().
typedef struct ls_rollback_def {
    uint32_t slots;          ///< Slots (1..LS_ROLLBACK_MAX_SLOTS), default 2.
    uint32_t input_size;     ///< Bytes per slot per tick (1..LS_ROLLBACK_MAX_INPUT), default 1.
    uint32_t local_slot;     ///< Slot whose input local_input produces, or LS_ROLLBACK_NO_SLOT.
    uint32_t input_delay;    ///< D (0..LS_ROLLBACK_MAX_DELAY): ticks below D have the empty input.
    uint32_t max_prediction; ///< W (0..LS_ROLLBACK_MAX_PREDICTION), default 8; 0 = lockstep.
    uint32_t resim_budget;   ///< Most re-simulated ticks per frame (0: no limit), default 0.
    uint32_t ticks;          ///< Match length in ticks (0: open-ended), default 0.
    uint32_t time_sync_threshold; ///< Mean frames ahead that make a frame skip (0: off), default 2.
    uint32_t time_sync_interval;  ///< Frames between two time-sync skips (>= 1), default 16.
    ls_rollback_callbacks cb;     ///< The game.
} ls_rollback_def;

/// What one call of ls_rollback_advance did.
typedef enum ls_rollback_status {
    LS_ROLLBACK_ADVANCED = 0,    ///< Simulated a new tick (after any correction).
    LS_ROLLBACK_WAITING = 1,     ///< Prediction window full: no new tick.
    LS_ROLLBACK_SKIPPED = 2,     ///< Time sync held this frame back: no new tick.
    LS_ROLLBACK_CATCHING_UP = 3, ///< The re-simulation budget ran out mid-correction: no new tick.
    LS_ROLLBACK_FINISHED = 4,    ///< Every tick of the match is simulated (corrections still run).
    LS_ROLLBACK_ERROR = 5,       ///< save or load failed (see the ERROR event); retried next frame.
} ls_rollback_status;

/// Counters. Mean re-simulated ticks per frame = resimulated / frames.
typedef struct ls_rollback_stats {
    uint64_t frames;          ///< ls_rollback_advance calls.
    uint64_t advanced;        ///< Ticks simulated for the first time.
    uint64_t rollbacks;       ///< State loads (corrections).
    uint64_t resimulated;     ///< Ticks simulated again after a load.
    uint32_t max_resim_frame; ///< Most ticks re-simulated in one frame.
    uint32_t max_rollback;    ///< Longest rollback (present - loaded tick).
    uint64_t predicted;       ///< Simulated-with-a-prediction inputs whose real value arrived.
    uint64_t
        predicted_hits; ///< ... of which the prediction was right (hit rate = hits / predicted).
    uint64_t waits;     ///< Frames that waited on the prediction window.
    uint64_t budget_frames;   ///< Frames stopped by the re-simulation budget.
    uint64_t time_sync_skips; ///< Frames skipped by time sync (adjustments).
    int32_t frames_ahead;     ///< Latest time-sync estimate (mean; 0 without samples).
    uint64_t duplicates;      ///< Inputs received again (same value).
    uint64_t conflicts;       ///< Inputs contradicting a known one (ignored).
    uint64_t refused;         ///< Inputs beyond the input window (refused; send again later).
    uint32_t desyncs;         ///< DESYNC events.
    uint32_t first_desync;    ///< Tick of the first one (valid if desyncs > 0).
    uint64_t errors;          ///< save/load failures.
} ls_rollback_stats;

/// Opaque rollback core.
typedef struct ls_rollback ls_rollback;

/// Defaults (see ls_rollback_def).
LS_API ls_rollback_def ls_default_rollback_def(void);
/// Create a core; NULL on bad settings, with *err (may be NULL) naming the field.
LS_API ls_rollback *ls_rollback_create(const ls_rollback_def *def, ls_error *err);
/// Destroy a core.
LS_API void ls_rollback_destroy(ls_rollback *rb);
/// Add slot's input for tick (input_size bytes), in any order. LS_OK when stored or a
/// harmless duplicate; LS_ERR_OUT_OF_RANGE beyond the input window or the match (refused:
/// add it again later); LS_ERR_CORRUPT when it contradicts the known input (ignored);
/// LS_ERR_INVALID_ARGUMENT for a bad slot.
LS_API ls_result ls_rollback_add_input(ls_rollback *rb, uint32_t slot, uint32_t tick,
                                       const uint8_t *input);
/// Slot is disconnected from tick on: its input is the empty input (confirmed) there.
/// A second notice for the slot is ignored.
LS_API void ls_rollback_disconnect(ls_rollback *rb, uint32_t slot, uint32_t tick);
/// Start over from the state of confirmed tick `tick` (a snapshot the game has just loaded):
/// every input, saved state and checksum is forgotten, present = tick, every slot's inputs
/// are expected from max(tick, input_delay) on (add them with ls_rollback_add_input); the
/// stats are kept. Used by a rejoining peer (SPEC.md §24.8).
LS_API void ls_rollback_reset(ls_rollback *rb, uint32_t tick);
/// The saved state of `tick` when it is final (tick below the present and at or below
/// ls_rollback_final): *buf and *len point into the core (valid until the next call).
LS_API bool ls_rollback_saved_state(const ls_rollback *rb, uint32_t tick, const uint8_t **buf,
                                    size_t *len);
/// One frame: apply pending corrections (within the budget), then simulate the next
/// tick unless the prediction window is full or time sync holds the frame back.
LS_API ls_rollback_status ls_rollback_advance(ls_rollback *rb);
/// Record slot's checksum of tick (reported by that peer); compared once the tick is confirmed.
LS_API void ls_rollback_add_remote_checksum(ls_rollback *rb, uint32_t slot, uint32_t tick,
                                            uint64_t checksum);
/// Time sync input, GGPO-style: what slot reports as its own local advantage over us
/// (its ls_rollback_local_advantage for our slot). Our lead over slot is then
/// (our advantage - theirs) / 2, which cancels the transit time.
LS_API void ls_rollback_remote_advantage(ls_rollback *rb, uint32_t slot, int32_t frames);
/// Time sync input measured by the driver (e.g. at a relay: our input frontier minus the
/// slowest live slot's). Overrides the estimate from advantages from now on.
LS_API void ls_rollback_set_frames_ahead(ls_rollback *rb, int32_t frames);
/// Our local advantage over slot: present - (slot's input frontier - input_delay).
LS_API int32_t ls_rollback_local_advantage(const ls_rollback *rb, uint32_t slot);
/// Next tick to simulate for the first time (ticks below it have been simulated).
LS_API uint32_t ls_rollback_present(const ls_rollback *rb);
/// Confirmed frontier: every tick below it has every slot's input known and, once no
/// correction is pending below it, its final checksum.
LS_API uint32_t ls_rollback_confirmed(const ls_rollback *rb);
/// Ticks below it have a final checksum (confirmed and re-simulated): min(confirmed,
/// first tick a pending correction will re-simulate).
LS_API uint32_t ls_rollback_final(const ls_rollback *rb);
/// Checksum of the latest simulation of tick (final when tick < ls_rollback_final);
/// false when the tick is not simulated or too old (the last LS_ROLLBACK_INPUT_WINDOW).
LS_API bool ls_rollback_checksum(const ls_rollback *rb, uint32_t tick, uint64_t *out);
/// Slot's known input for tick into out (input_size bytes); false when not known or
/// too old. Ticks below input_delay and after a disconnect give the empty input.
LS_API bool ls_rollback_input(const ls_rollback *rb, uint32_t slot, uint32_t tick, uint8_t *out);
/// First tick of slot whose input is not known (inputs below it are all known).
LS_API uint32_t ls_rollback_frontier(const ls_rollback *rb, uint32_t slot);
/// Counters.
LS_API ls_rollback_stats ls_rollback_stats_get(const ls_rollback *rb);

LS_EXTERN_C_END

#endif
