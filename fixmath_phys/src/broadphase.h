// SPDX-License-Identifier: MIT
// Broad phase: the set of proxy pairs whose AABBs overlap, in canonical order.
#ifndef LS_BROADPHASE_H
#define LS_BROADPHASE_H

#include "geom.h"

/// A candidate pair of proxies, a < b.
typedef struct ls_pair {
    uint32_t a;
    uint32_t b;
} ls_pair;

/// Broad-phase object; created with a fixed capacity, never allocates afterwards.
typedef struct ls_broadphase ls_broadphase;

#endif
