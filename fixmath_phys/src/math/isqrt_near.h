// SPDX-License-Identifier: MIT
// floor(sqrt(s)) near 2^56 without a division (math layer, internal).
#ifndef LS_MATH_ISQRT_NEAR_H
#define LS_MATH_ISQRT_NEAR_H

#include "ls/fx.h"

#include <stdint.h>

/// floor(sqrt(s)), exactly as ls_isqrt64, for s below 2^63; fast for s
/// within 2^44 of 2^56 -- the squared length of a unit quaternion held in
/// Q28, as the rotation integration makes it (a turn w h below about 0.05
/// rad on a quaternion within 2^-12 of unit length: every body at rest or
/// turning slowly). Why it is exact: with d = s - 2^56, sqrt(2^56 + d) =
/// 2^28 + d / 2^29 - d^2 / 2^87 + ..., and |d| < 2^44 keeps the neglected
/// terms below 2, so x = 2^28 + floor(d / 2^29) is within 3 of the root and
/// a few exact steps (x^2 <= s < (x + 1)^2, every square below 2^57) end on
/// it. Elsewhere it is ls_isqrt64.
static inline uint64_t ls_isqrt64_near56_(uint64_t s)
{
    const int64_t one = (int64_t)1 << 56, reach = (int64_t)1 << 44;
    int64_t d = (int64_t)(s & (((uint64_t)1 << 63) - 1)) - one;
    if (s >= ((uint64_t)1 << 63) || d <= -reach || d >= reach) {
        return ls_isqrt64(s);
    }
    uint64_t x = (uint64_t)(((int64_t)1 << 28) + (d >> 29));
    while (x * x > s) {
        x--;
    }
    while ((x + 1) * (x + 1) <= s) {
        x++;
    }
    return x;
}

#endif
