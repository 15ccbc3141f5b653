// SPDX-License-Identifier: MIT
// Private: |q|^2 of a quaternion read from a file or a snapshot, where any
// raw values can appear.
#ifndef LS_QUAT_CHECK_H
#define LS_QUAT_CHECK_H

#include "ls/quat.h"

#include <stdbool.h>
#include <stdint.h>

/// |q|^2 in Q32.32, summed unsigned: four squares of up to 2^62 each cannot
/// overflow a signed 64-bit sum by design (only all four at INT32_MIN wrap,
/// to 0, which every caller refuses).
static inline uint64_t ls_quat_len_sq_wide(ls_quat q)
{
    return (uint64_t)((int64_t)q.x * q.x) + (uint64_t)((int64_t)q.y * q.y) +
           (uint64_t)((int64_t)q.z * q.z) + (uint64_t)((int64_t)q.w * q.w);
}

/// A stored orientation is unit: no component at INT32_MIN and |q|^2 within
/// 1 +- 1/256 (orientations are kept unit by SPEC.md §4 normalize).
static inline bool ls_quat_is_stored_unit(ls_quat q)
{
    uint64_t q2 = ls_quat_len_sq_wide(q);
    return q.x != INT32_MIN && q.y != INT32_MIN && q.z != INT32_MIN && q.w != INT32_MIN &&
           q2 >= ((uint64_t)1 << 32) - ((uint64_t)1 << 24) &&
           q2 <= ((uint64_t)1 << 32) + ((uint64_t)1 << 24);
}

#endif
