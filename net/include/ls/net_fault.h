// SPDX-License-Identifier: MIT
/// @file
/// Seeded fault injection for transports, tests and demos: loss, duplication,
/// reordering, delay, jitter and bit corruption. Sans-IO: it only decides when (and how many
/// times) a datagram is delivered; the caller holds the datagram until then.
#ifndef LS_NET_FAULT_H
#define LS_NET_FAULT_H

#include "ls/rng.h"

LS_EXTERN_C_BEGIN

/// Fault settings; all zero means a perfect network.
typedef struct ls_net_fault_def {
    uint32_t loss_ppm;    ///< Probability of dropping, parts per million.
    uint32_t dup_ppm;     ///< Probability of delivering twice, parts per million.
    uint32_t reorder_ppm; ///< Probability of holding a datagram back behind later ones.
    uint32_t delay_us;    ///< Fixed one-way delay.
    uint32_t jitter_us;   ///< Extra uniform delay in [0, jitter].
    uint64_t seed;        ///< Seed of the decisions (same seed, same fates).
    uint32_t corrupt_ppm; ///< Probability of flipping one random bit of a datagram.
} ls_net_fault_def;

/// Fault injector state.
typedef struct ls_net_fault {
    ls_net_fault_def def; ///< Settings.
    ls_rng rng;           ///< Decision stream.
    uint64_t dropped;     ///< Datagrams dropped.
    uint64_t duplicated;  ///< Datagrams delivered twice.
    uint64_t reordered;   ///< Datagrams held back.
    uint64_t corrupted;   ///< Datagrams with a flipped bit.
} ls_net_fault;

/// Start an injector.
LS_API void ls_net_fault_init(ls_net_fault *f, const ls_net_fault_def *def);
/// True when the settings change anything.
LS_API bool ls_net_fault_active(const ls_net_fault *f);
/// Decide the fate of a datagram sent at now_us: writes 0, 1 or 2 delivery times
/// into when[] and returns how many.
LS_API uint32_t ls_net_fault_apply(ls_net_fault *f, uint64_t now_us, uint64_t when[2]);
/// With probability corrupt_ppm flip one random bit of data (a copy about to be
/// delivered); true if it did. Draws nothing when corrupt_ppm is 0.
LS_API bool ls_net_fault_corrupt(ls_net_fault *f, uint8_t *data, size_t len);

LS_EXTERN_C_END

#endif
