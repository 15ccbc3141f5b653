// SPDX-License-Identifier: MIT
/// @file
/// Stateless, integer-only trigonometry in Q16.16 radians.
///
/// Replaces libfixmath's fix16_sin/cos/atan2/asin/acos, whose global caches make
/// results depend on call history and threads. Every function is a pure function
/// of its argument: table lookup with linear interpolation in Q2.30, rounded once
/// to Q16.16. Maximum error against the exact value of the Q16.16 input is stated
/// per function and asserted by tests/test_trig.c over a dense sweep.
#ifndef LS_TRIG_H
#define LS_TRIG_H

#include "ls/fx.h"

LS_EXTERN_C_BEGIN

/// sin(x), x in radians (any value; reduced exactly mod 2*pi). Max error 1 ulp.
LS_API ls_fx ls_fx_sin(ls_fx x);
/// cos(x), x in radians (any value). Max error 1 ulp.
LS_API ls_fx ls_fx_cos(ls_fx x);
/// sin and cos of the same angle in one call. Max error 1 ulp each.
LS_API void ls_fx_sincos(ls_fx x, ls_fx *s, ls_fx *c);
/// atan2(y, x) in [-pi, pi]; atan2(0, 0) = 0 (always). Max error 1 ulp.
LS_API ls_fx ls_fx_atan2(ls_fx y, ls_fx x);
/// asin(x) for x in [-1, 1] (clamped outside); asin(+-1) = +-pi/2. Max error 1 ulp.
LS_API ls_fx ls_fx_asin(ls_fx x);
/// acos(x) for x in [-1, 1] (clamped outside); acos(1) = 0. Max error 1 ulp.
LS_API ls_fx ls_fx_acos(ls_fx x);

LS_EXTERN_C_END

#endif
