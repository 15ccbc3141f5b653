// SPDX-License-Identifier: MIT
/// @file
/// Q16.16 scalar arithmetic, inline and stateless.
///
/// The number type is libfixmath's fix16_t; only its header is used, never its
/// compiled code. mul, div and sqrt round exactly as libfixmath 0~20220222
/// (Debian 12) does for every input whose result is representable, so values
/// computed here and by the library agree bit for bit (tests/test_fx.c proves it
/// against the linked library). Where they differ is overflow: libfixmath
/// returns 0x80000000, a value that is also the real number -32768.0; we saturate
/// to +-LS_FX_MAX (0x7FFFFFFF) and never produce 0x80000000, and the *_chk
/// variants also raise a caller-owned sticky flag. See SPEC.md "Numbers".
#ifndef LS_FX_H
#define LS_FX_H

#include "ls/base.h"

// Why this check: libfixmath ships no pkg-config file, so lockstep.pc cannot
// require it; a build that lacks its headers gets this line instead of a bare
// "file not found".
#if defined(__has_include)
#if !__has_include(<libfixmath/fix16.h>)
#error "lockstep's headers need libfixmath's: install libfixmath-dev (Debian/Ubuntu)"
#endif
#endif
#include <libfixmath/fix16.h>
#include <stdbool.h>
#include <stdint.h>

LS_EXTERN_C_BEGIN

// Everything below relies on >> of a negative integer being an arithmetic
// shift (floor division by a power of two). gcc and clang guarantee it on every
// target; refuse to build anywhere that does not.
LS_STATIC_ASSERT((-1 >> 1) == -1 && ((int64_t)-3 >> 1) == -2, "arithmetic right shift required");

/// The Q16.16 scalar (libfixmath's type): value = raw / 65536.
typedef fix16_t ls_fx;

#define LS_FX_ONE ((ls_fx)0x10000) ///< 1.0
/// An integer constant as Q16.16 (a constant expression; |i| must be below 32768).
#define LS_FX_INT(i)  ((ls_fx)((i)*65536))
#define LS_FX_HALF    ((ls_fx)0x8000)      ///< 0.5
#define LS_FX_MAX     ((ls_fx)0x7FFFFFFF)  ///< Largest value, 32767.99998; overflow saturates here.
#define LS_FX_MIN     ((ls_fx)-0x7FFFFFFF) ///< Smallest value produced; -32768.0 is never produced.
#define LS_FX_PI      ((ls_fx)205887)      ///< pi, rounded to nearest (libfixmath's fix16_pi).
#define LS_FX_HALF_PI ((ls_fx)102944)      ///< pi/2 rounded to nearest.
#define LS_FX_TWO_PI  ((ls_fx)411775)      ///< 2*pi rounded to nearest.

/// An integer as Q16.16; saturates outside [-32767, 32767].
static inline ls_fx ls_fx_from_int(int32_t i)
{
    if (i > 32767) {
        return LS_FX_MAX;
    }
    if (i < -32767) {
        return LS_FX_MIN;
    }
    return (ls_fx)(i * 65536);
}

/// A rational num/den as Q16.16, rounded to nearest (ties away from zero); den > 0.
static inline ls_fx ls_fx_from_ratio(int32_t num, int32_t den)
{
    int64_t n = (int64_t)num * 65536;
    int64_t q = (n >= 0 ? n + den / 2 : n - den / 2) / den;
    return q > LS_FX_MAX ? LS_FX_MAX : q < LS_FX_MIN ? LS_FX_MIN : (ls_fx)q;
}

/// Nearest integer, ties away from zero (correct at the extremes, unlike libfixmath 2022).
static inline int32_t ls_fx_to_int(ls_fx a)
{
    int64_t v = a;
    return (int32_t)(v >= 0 ? (v + 0x8000) >> 16 : -((-v + 0x8000) >> 16));
}

/// Clamp a wide intermediate into [LS_FX_MIN, LS_FX_MAX]; sets *ovf when it had to.
static inline ls_fx ls_fx_sat64(int64_t v, bool *ovf)
{
    if (v > LS_FX_MAX) {
        *ovf = true;
        return LS_FX_MAX;
    }
    if (v < LS_FX_MIN) {
        *ovf = true;
        return LS_FX_MIN;
    }
    return (ls_fx)v;
}

/// a + b, saturating; raises *ovf on overflow.
static inline ls_fx ls_fx_add_chk(ls_fx a, ls_fx b, bool *ovf)
{
    return ls_fx_sat64((int64_t)a + b, ovf);
}

/// a - b, saturating; raises *ovf on overflow.
static inline ls_fx ls_fx_sub_chk(ls_fx a, ls_fx b, bool *ovf)
{
    return ls_fx_sat64((int64_t)a - b, ovf);
}

/// Round a Q32.32 product to Q16.16 exactly as libfixmath's fix16_mul does:
/// to nearest, ties away from zero. Not saturated.
static inline int64_t ls_fx_round_q32(int64_t p)
{
    // floor((p - [p < 0]) / 2^16 + 1/2): the -1 for negatives makes -x.5 round
    // away from zero, as fix16_mul does. Branch-free: p >> 63 is -[p < 0].
    return (p + 0x8000 + (p >> 63)) >> 16;
}

/// a * b rounded like fix16_mul, saturating; raises *ovf on overflow.
static inline ls_fx ls_fx_mul_chk(ls_fx a, ls_fx b, bool *ovf)
{
    return ls_fx_sat64(ls_fx_round_q32((int64_t)a * b), ovf);
}

/// |a| / |b| in Q16.16 before sign, rounded like fix16_div (b != 0). Wide, not saturated.
static inline uint64_t ls_fx_udiv_(uint32_t n, uint32_t d)
{
    uint64_t q; // quotient in units of 2^-17
    if (d >= (1u << 20)) {
        // libfixmath first estimates the quotient with a divisor rounded up at
        // 2^17 granularity and then finishes the remainder exactly; the estimate's
        // truncated product makes the result 1 ulp high in ~0.4 % of cases with
        // |b| >= 16. We reproduce that on purpose: bit-identity with the library
        // is the contract (SPEC.md "Numbers").
        uint32_t q0 = n / ((d >> 17) + 1);
        uint32_t r = n - (uint32_t)(((uint64_t)q0 * d) >> 17);
        q = q0 + (((uint64_t)r << 17) / d);
    } else {
        q = ((uint64_t)n << 17) / d;
    }
    return (q + 1) >> 1;
}

/// a / b rounded like fix16_div, saturating; b == 0 saturates by the sign of a
/// (0/0 is 0) and raises *ovf.
static inline ls_fx ls_fx_div_chk(ls_fx a, ls_fx b, bool *ovf)
{
    if (b == 0) {
        *ovf = true;
        return a > 0 ? LS_FX_MAX : a < 0 ? LS_FX_MIN : 0;
    }
    uint32_t n = a < 0 ? 0u - (uint32_t)a : (uint32_t)a;
    uint32_t d = b < 0 ? 0u - (uint32_t)b : (uint32_t)b;
    uint64_t q = ls_fx_udiv_(n, d);
    if (q > (uint64_t)LS_FX_MAX) {
        *ovf = true;
        q = (uint64_t)LS_FX_MAX;
    }
    return ((a < 0) != (b < 0)) ? -(ls_fx)q : (ls_fx)q;
}

/// floor(sqrt(v)) of a 64-bit unsigned integer, exact, integer-only
/// (math/isqrt.c: Newton's iteration from a table start).
LS_API uint64_t ls_isqrt64(uint64_t v);

/// One digit-by-digit square-root pass over 32-bit state: for each bit
/// position consumes one root bit. Shared by the two passes of ls_fx_sqrt.
static inline void ls_fx_sqrt_pass_(uint32_t *num, uint32_t *res, uint32_t bit)
{
    while (bit != 0) {
        if (*num >= *res + bit) {
            *num -= *res + bit;
            *res = (*res >> 1) + bit;
        } else {
            *res >>= 1;
        }
        bit >>= 2;
    }
}

/// sqrt(a) with fix16_sqrt's exact rounding; like it, returns -sqrt(-a) for a < 0.
static inline ls_fx ls_fx_sqrt(ls_fx a)
{
    // The library computes the root in two 32-bit digit-by-digit passes: the
    // integer root of the raw value (16 bits), then 8 more bits. When the first
    // remainder does not fit in 16 bits it takes the next root bit as 1 and
    // approximates the remainder (low by 2^14 units), which makes ~0.001 % of
    // large inputs 1 ulp low. Bit-identity is the contract, so we do the same.
    uint32_t num = a < 0 ? 0u - (uint32_t)a : (uint32_t)a;
    uint32_t res = 0;
    uint32_t bit = num ? (uint32_t)1 << ((31 - __builtin_clz(num)) & ~1) : 0;
    ls_fx_sqrt_pass_(&num, &res, bit);
    if (num > 65535) {
        num = ((num - res) << 16) - 0x8000;
        res = (res << 16) + 0x8000;
    } else {
        num <<= 16;
        res <<= 16;
    }
    ls_fx_sqrt_pass_(&num, &res, (uint32_t)1 << 14);
    res += num > res; // round to nearest
    return a < 0 ? -(ls_fx)res : (ls_fx)res;
}

/// One length's reciprocal, to divide several components by it
/// (ls_unit_div_make_, ls_unit_div_q16_): the normalisations' last step.
typedef struct ls_unit_div_ {
    uint64_t len; ///< the divisor, 1 <= len < 2^31.5
    uint64_t m;   ///< floor(2^60 / len)
} ls_unit_div_;

/// The reciprocal of `len` (1 <= len < 2^31.5): one division.
static inline ls_unit_div_ ls_unit_div_make_(uint64_t len)
{
    ls_unit_div_ u = {len, ((uint64_t)1 << 60) / len};
    return u;
}

/// c 2^16 / len rounded to nearest, ties away from zero -- exactly
/// (c 2^16 +- floor(len / 2)) / len with C's truncation -- for |c| <= len,
/// without a division. Why it is exact: with a = |c|, b = floor(len / 2) and
/// N = a 2^16 + b < 2^48, the estimate floor(N m / 2^60) (computed as
/// floor((a m + floor(b m / 2^16)) / 2^44), the same value; a m <= 2^60 and
/// b m <= 2^59 because m <= 2^60 / len) lies below N / len by less than
/// N / 2^60 < 1, so it is the quotient or one less, and one remainder test
/// settles it. tests/test_fx.c compares it with the division.
static inline int32_t ls_unit_div_q16_(const ls_unit_div_ *u, int64_t c)
{
    uint64_t a = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c, b = u->len >> 1;
    uint64_t q = (a * u->m + ((b * u->m) >> 16)) >> 44;
    uint64_t r = (a << 16) + b - q * u->len;
    q += r >= u->len;
    return c < 0 ? -(int32_t)q : (int32_t)q;
}

/// Saturate a wide value to Q16.16 with selects, not branches (the solver's hot path).
static inline ls_fx ls_fx_clamp64_(int64_t r)
{
    r = r > LS_FX_MAX ? LS_FX_MAX : r;
    r = r < LS_FX_MIN ? LS_FX_MIN : r;
    return (ls_fx)r;
}

/// a + b, saturating.
static inline ls_fx ls_fx_add(ls_fx a, ls_fx b)
{
    return ls_fx_clamp64_((int64_t)a + b);
}

/// a - b, saturating.
static inline ls_fx ls_fx_sub(ls_fx a, ls_fx b)
{
    return ls_fx_clamp64_((int64_t)a - b);
}

/// a * b, rounded like fix16_mul, saturating.
static inline ls_fx ls_fx_mul(ls_fx a, ls_fx b)
{
    return ls_fx_clamp64_(ls_fx_round_q32((int64_t)a * b));
}

/// a / b, rounded like fix16_div, saturating (see ls_fx_div_chk for b == 0).
static inline ls_fx ls_fx_div(ls_fx a, ls_fx b)
{
    bool o = false;
    return ls_fx_div_chk(a, b, &o);
}

/// -a (never overflows: LS_FX_MIN == -LS_FX_MAX; 0x80000000 maps to LS_FX_MAX).
static inline ls_fx ls_fx_neg(ls_fx a)
{
    return a == INT32_MIN ? LS_FX_MAX : -a;
}

/// |a|; 0x80000000 (never produced by these ops) maps to LS_FX_MAX.
static inline ls_fx ls_fx_abs(ls_fx a)
{
    return a >= 0 ? a : ls_fx_neg(a);
}

/// The smaller of a and b.
static inline ls_fx ls_fx_min(ls_fx a, ls_fx b)
{
    return a < b ? a : b;
}

/// The larger of a and b.
static inline ls_fx ls_fx_max(ls_fx a, ls_fx b)
{
    return a > b ? a : b;
}

/// a clamped into [lo, hi].
static inline ls_fx ls_fx_clamp(ls_fx a, ls_fx lo, ls_fx hi)
{
    return a < lo ? lo : a > hi ? hi : a;
}

/// Largest integer value <= a (same as fix16_floor).
static inline ls_fx ls_fx_floor(ls_fx a)
{
    return (ls_fx)((uint32_t)a & 0xFFFF0000u);
}

/// Smallest integer value >= a; saturates above 32767.
static inline ls_fx ls_fx_ceil(ls_fx a)
{
    int64_t f = (int64_t)ls_fx_floor(a) + (((uint32_t)a & 0xFFFFu) ? 65536 : 0);
    return f > LS_FX_MAX ? LS_FX_MAX : (ls_fx)f;
}

/// Sign: -1, 0 or +1 as an integer.
static inline int ls_fx_sign(ls_fx a)
{
    return (a > 0) - (a < 0);
}

LS_EXTERN_C_END

#endif
