// SPDX-License-Identifier: MIT
// Table-driven sine and arctangent; see ls/trig.h and SPEC.md "Trigonometry".
#include "ls/trig.h"

#include "trig_tables.h"

#define Q30_PI      INT64_C(3373259426) // round(pi * 2^30)
#define Q30_HALF_PI INT64_C(1686629713) // round(pi/2 * 2^30)
// round(2^48 / (2*pi)): radians in Q16.16 times this is turns in Q32.32.
#define TURNS_PER_RADIAN_Q48 UINT64_C(44798133900177)
#define FRAC_BITS            22 // 2^30 (a quarter turn, or 1.0) / LS_TRIG_SEGMENTS

// Q2.30 to Q16.16, rounded to nearest, ties away from zero.
static ls_fx q30_to_fx(int64_t v)
{
    return (ls_fx)(v >= 0 ? (v + 0x2000) >> 14 : -((-v + 0x2000) >> 14));
}

// Linear interpolation in a table; pos is in [0, 2^30], Q30 of the table span.
static int64_t table_lerp(const int32_t *t, uint32_t pos)
{
    uint32_t i = pos >> FRAC_BITS;
    int64_t f = pos & ((1u << FRAC_BITS) - 1);
    return t[i] + (((t[i + 1] - (int64_t)t[i]) * f) >> FRAC_BITS);
}

// sin of an angle given in 2^-32 turns, as Q2.30.
static int64_t sin_turns_q30(uint32_t t)
{
    uint32_t quadrant = t >> 30;
    uint32_t p = t & 0x3FFFFFFFu;
    if (quadrant & 1u) {
        p = 0x40000000u - p; // mirror: sin(pi - a) = sin(a)
    }
    int64_t v = table_lerp(ls_sin_table_, p);
    return quadrant >= 2 ? -v : v;
}

// The angle as 2^-32 turns. Unsigned multiplication wraps mod 2^64, which is
// exactly reduction mod one turn for bits 32..63: no division, no branches, and
// the same bits on every platform.
static uint32_t radians_to_turns(ls_fx x)
{
    uint64_t prod = (uint64_t)(int64_t)x * TURNS_PER_RADIAN_Q48;
    return (uint32_t)((prod + 0x80000000u) >> 32);
}

ls_fx ls_fx_sin(ls_fx x)
{
    return q30_to_fx(sin_turns_q30(radians_to_turns(x)));
}

ls_fx ls_fx_cos(ls_fx x)
{
    return q30_to_fx(sin_turns_q30(radians_to_turns(x) + 0x40000000u));
}

void ls_fx_sincos(ls_fx x, ls_fx *s, ls_fx *c)
{
    uint32_t t = radians_to_turns(x);
    *s = q30_to_fx(sin_turns_q30(t));
    *c = q30_to_fx(sin_turns_q30(t + 0x40000000u));
}

// atan2 of two non-negative magnitudes as Q2.30 in [0, pi/2]; not both zero.
static int64_t atan2_first_quadrant_q30(uint64_t ay, uint64_t ax)
{
    // Keep both below 2^32 so the ratio numerator (< 2^62) fits.
    while ((ay | ax) >> 32) {
        ay >>= 1;
        ax >>= 1;
    }
    bool steep = ay > ax;
    uint64_t num = steep ? ax : ay;
    uint64_t den = steep ? ay : ax;
    uint32_t ratio = (uint32_t)(((num << 30) + den / 2) / den); // Q30 in [0, 1]
    int64_t a = table_lerp(ls_atan_table_, ratio);
    return steep ? Q30_HALF_PI - a : a;
}

// Place a first-quadrant angle into the quadrant of (ysign, xneg).
static int64_t atan2_unfold_q30(int64_t a, bool yneg, bool xneg)
{
    if (xneg) {
        a = Q30_PI - a;
    }
    return yneg ? -a : a;
}

ls_fx ls_fx_atan2(ls_fx y, ls_fx x)
{
    if (x == 0 && y == 0) {
        return 0;
    }
    uint64_t ay = y < 0 ? 0u - (uint32_t)y : (uint32_t)y;
    uint64_t ax = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
    int64_t a = atan2_first_quadrant_q30(ay, ax);
    return q30_to_fx(atan2_unfold_q30(a, y < 0, x < 0));
}

// asin as Q2.30 via atan2(x, sqrt(1 - x^2)) with the root taken in Q30, so the
// steep ends near +-1 keep full precision.
static int64_t asin_q30(ls_fx x)
{
    ls_fx c = ls_fx_clamp(x, -LS_FX_ONE, LS_FX_ONE);
    uint64_t ax = c < 0 ? (uint64_t) - (int64_t)c : (uint64_t)c;
    uint64_t cos_q30 = ls_isqrt64((UINT64_C(1) << 60) - ((ax * ax) << 28));
    int64_t a = ax == 0 ? 0 : atan2_first_quadrant_q30(ax << 14, cos_q30);
    return c < 0 ? -a : a;
}

ls_fx ls_fx_asin(ls_fx x)
{
    return q30_to_fx(asin_q30(x));
}

ls_fx ls_fx_acos(ls_fx x)
{
    return q30_to_fx(Q30_HALF_PI - asin_q30(x));
}
