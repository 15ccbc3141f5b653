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

/// floor(2^60 / len), exactly as the division, for 1 <= len < 2^32; fast
/// for len within 2^15 of 2^28 (the length of a unit quaternion held in Q28:
/// ls_isqrt64_near56_'s fast range gives it). Why it is exact: with len =
/// 2^28 + e, 2^60 / len = 2^32 - 16 e + e^2 / 2^24 - e^3 / 2^52 + ..., and
/// |e| < 2^15 keeps the neglected terms below 1, so x = 2^32 - 16 e +
/// floor(e^2 / 2^24) is within 2 of the quotient, and the remainder 2^60 - x
/// len steps it onto it.
static inline uint64_t ls_recip60_near28_(uint64_t len)
{
    int64_t e = (int64_t)len - ((int64_t)1 << 28);
    if (e <= -((int64_t)1 << 15) || e >= ((int64_t)1 << 15)) {
        return ((uint64_t)1 << 60) / len;
    }
    int64_t x = ((int64_t)1 << 32) - 16 * e + ((e * e) >> 24);
    int64_t r = ((int64_t)1 << 60) - x * (int64_t)len; // |r| < 2^31: no wrap
    while (r < 0) {
        x--;
        r += (int64_t)len;
    }
    while (r >= (int64_t)len) {
        x++;
        r -= (int64_t)len;
    }
    return (uint64_t)x;
}

#endif
