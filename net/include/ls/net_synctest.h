// SPDX-License-Identifier: MIT
/// @file
/// SyncTest (as GGPO's and GGRS's): proves that a game's save/load/advance
/// callbacks are fit for rollback. Every tick is simulated, then the game is
/// rolled back k ticks (1..8 by default, cycling) and re-simulated; every
/// re-simulated tick's checksum must equal the first simulation's, and (by
/// default) the state saved after the re-simulation must be byte-identical to
/// the one saved the first time. A mismatch names the tick and k. Pure
/// callbacks, no I/O, no clock (SPEC.md "Rollback and SyncTest").
#ifndef LS_NET_SYNCTEST_H
#define LS_NET_SYNCTEST_H

#include "ls/base.h"

LS_EXTERN_C_BEGIN

/// Largest rollback distance SyncTest accepts.
#define LS_SYNCTEST_MAX_DISTANCE 64

/// The game, driven by SyncTest (the same contract as ls_rollback_callbacks).
typedef struct ls_synctest_callbacks {
    void *user; ///< Passed to every callback.
    /// Write every slot's input for `tick` (slot k at out + k * input_size, zeroed
    /// beforehand). Called once per tick, in tick order. Optional (no inputs).
    void (*inputs)(void *user, uint32_t tick, uint8_t *out, uint32_t slots, uint32_t input_size);
    /// Save the state at the start of `tick` into buf (cap bytes); return the bytes
    /// written, the size needed if cap is too small, or 0 on failure. Required.
    size_t (*save)(void *user, uint32_t tick, uint8_t *buf, size_t cap);
    /// Restore a state saved for `tick`; false on failure. Required.
    bool (*load)(void *user, uint32_t tick, const uint8_t *buf, size_t size);
    /// Simulate `tick` with the inputs; return the checksum of the state after it. Required.
    uint64_t (*advance)(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                        uint32_t input_size);
} ls_synctest_callbacks;

/// SyncTest settings. Start from ls_default_synctest_def().
typedef struct ls_synctest_def {
    uint32_t slots;           ///< Slots (0..16), default 0 (no inputs).
    uint32_t input_size;      ///< Bytes per slot per tick (0..64; >= 1 when slots > 0), default 1.
    uint32_t min_distance;    ///< Smallest rollback k (1..LS_SYNCTEST_MAX_DISTANCE), default 1.
    uint32_t max_distance;    ///< Largest k (>= min_distance), default 8. Tick t uses
                              ///< k = min + t mod (max - min + 1), at most t + 1.
    bool compare_states;      ///< Also compare the saved state bytes, default true.
    ls_synctest_callbacks cb; ///< The game.
} ls_synctest_def;

/// What a mismatch was.
typedef enum ls_synctest_failure {
    LS_SYNCTEST_OK = 0,          ///< No mismatch so far.
    LS_SYNCTEST_CHECKSUM = 1,    ///< A re-simulated tick's checksum differs.
    LS_SYNCTEST_STATE = 2,       ///< The state saved after a re-simulated tick differs.
    LS_SYNCTEST_SAVE_FAILED = 3, ///< save returned 0 (or memory ran out).
    LS_SYNCTEST_LOAD_FAILED = 4, ///< load returned false.
} ls_synctest_failure;

/// Where SyncTest stands.
typedef struct ls_synctest_report {
    ls_synctest_failure failure; ///< LS_SYNCTEST_OK while every check passed.
    uint32_t tick;               ///< Failure: the tick (CHECKSUM/STATE: the re-simulated tick).
    uint32_t distance;           ///< Failure: k, the rollback that exposed it.
    uint64_t first;              ///< CHECKSUM: the first simulation's checksum of `tick`.
    uint64_t again;              ///< CHECKSUM: the re-simulation's.
    uint32_t ticks;              ///< Ticks simulated (first simulations).
    uint64_t resimulated;        ///< Ticks re-simulated.
    uint64_t last_checksum;      ///< First-simulation checksum of the last tick.
} ls_synctest_report;

/// Opaque SyncTest runner.
typedef struct ls_synctest ls_synctest;

/// Defaults (see ls_synctest_def).
LS_API ls_synctest_def ls_default_synctest_def(void);
/// Create a runner; NULL on bad settings, with *err (may be NULL) naming the field.
LS_API ls_synctest *ls_synctest_create(const ls_synctest_def *def, ls_error *err);
/// Destroy a runner.
LS_API void ls_synctest_destroy(ls_synctest *st);
/// Simulate the next tick, roll back its k and re-simulate them, comparing. LS_OK, or
/// LS_ERR_DESYNC (mismatch; *err names tick and k, err->tick = the tick), LS_ERR_IO (save or
/// load failed). After a failure every further call returns the same code.
LS_API ls_result ls_synctest_step(ls_synctest *st, ls_error *err);
/// ls_synctest_step `ticks` times, stopping at the first failure.
LS_API ls_result ls_synctest_run(ls_synctest *st, uint32_t ticks, ls_error *err);
/// Where it stands (counters and the first failure).
LS_API ls_synctest_report ls_synctest_report_get(const ls_synctest *st);

LS_EXTERN_C_END

#endif
