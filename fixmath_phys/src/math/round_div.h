// SPDX-License-Identifier: MIT
// Private: a 64-bit sum divided by a small count, rounded half away from
// zero: (sum + count/2) / count for sum >= 0, (sum - count/2) / count below
// (C's truncating division). Why a switch: the manifold's point mean (the
// friction centre, computed in the narrow phase and again in every contact's
// prepare) divides by its point count, 1 to 4; with the count a variable each
// of the three components took a 64-bit hardware division (a tenth of the
// prepare's gather in a settled box pile), with it a constant the compiler
// multiplies and shifts. The quotients are the same integers.
#ifndef LS_ROUND_DIV_H
#define LS_ROUND_DIV_H

#include <stdint.h>

/// round(sum / count), halves away from zero; count >= 1.
static inline int64_t ls_round_div_small(int64_t sum, int count)
{
    switch (count) {
    case 1:
        return sum;
    case 2:
        return sum >= 0 ? (sum + 1) / 2 : (sum - 1) / 2;
    case 3:
        return sum >= 0 ? (sum + 1) / 3 : (sum - 1) / 3;
    case 4:
        return sum >= 0 ? (sum + 2) / 4 : (sum - 2) / 4;
    default:
        return sum >= 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
    }
}

#endif
