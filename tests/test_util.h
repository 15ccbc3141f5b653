// SPDX-License-Identifier: MIT
// Helpers shared by the test suites: Q16.16 <-> double for building worlds
// and measuring them (floating point is fine in tests, never in the library).
#ifndef LS_TEST_UTIL_H
#define LS_TEST_UTIL_H

#include "ls/vec3.h"

#include <math.h>

/// Nearest Q16.16 value of d.
static inline ls_fx fx(double d)
{
    return (ls_fx)lround(d * 65536.0);
}

/// Same as fx (the name some suites use).
static inline ls_fx fx_of(double d)
{
    return fx(d);
}

/// A Q16.16 value as a double (exact).
static inline double d_of(ls_fx v)
{
    return v / 65536.0;
}

/// A vector of nearest Q16.16 components.
static inline ls_vec3 v3(double x, double y, double z)
{
    return ls_vec3_make(fx(x), fx(y), fx(z));
}

#endif
