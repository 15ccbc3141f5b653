// SPDX-License-Identifier: MIT
/// @file
/// 3-vectors of Q16.16, inline. Sums of products (dot, cross, lengths) are
/// accumulated exactly in 64 bits and rounded once, so they are both more
/// accurate than chained fix16_mul calls and independent of evaluation order.
#ifndef LS_VEC3_H
#define LS_VEC3_H

#include "ls/fx.h"

LS_EXTERN_C_BEGIN

/// A 3-vector (x, y, z) of Q16.16 scalars.
typedef struct ls_vec3 {
    ls_fx x; ///< X component.
    ls_fx y; ///< Y component (up, by convention of the shipped scenes).
    ls_fx z; ///< Z component.
} ls_vec3;

/// The vector (x, y, z).
static inline ls_vec3 ls_vec3_make(ls_fx x, ls_fx y, ls_fx z)
{
    ls_vec3 v = {x, y, z};
    return v;
}

/// The zero vector.
static inline ls_vec3 ls_vec3_zero(void)
{
    return ls_vec3_make(0, 0, 0);
}

/// a + b, saturating per component.
static inline ls_vec3 ls_vec3_add(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make(ls_fx_add(a.x, b.x), ls_fx_add(a.y, b.y), ls_fx_add(a.z, b.z));
}

/// a - b, saturating per component.
static inline ls_vec3 ls_vec3_sub(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make(ls_fx_sub(a.x, b.x), ls_fx_sub(a.y, b.y), ls_fx_sub(a.z, b.z));
}

/// -a.
static inline ls_vec3 ls_vec3_neg(ls_vec3 a)
{
    return ls_vec3_make(ls_fx_neg(a.x), ls_fx_neg(a.y), ls_fx_neg(a.z));
}

/// a * s.
static inline ls_vec3 ls_vec3_scale(ls_vec3 a, ls_fx s)
{
    return ls_vec3_make(ls_fx_mul(a.x, s), ls_fx_mul(a.y, s), ls_fx_mul(a.z, s));
}

/// a + b * s, with each component's product rounded once.
static inline ls_vec3 ls_vec3_mad(ls_vec3 a, ls_vec3 b, ls_fx s)
{
    return ls_vec3_add(a, ls_vec3_scale(b, s));
}

/// Component-wise product.
static inline ls_vec3 ls_vec3_mul(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make(ls_fx_mul(a.x, b.x), ls_fx_mul(a.y, b.y), ls_fx_mul(a.z, b.z));
}

/// Component-wise minimum.
static inline ls_vec3 ls_vec3_min(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make(ls_fx_min(a.x, b.x), ls_fx_min(a.y, b.y), ls_fx_min(a.z, b.z));
}

/// Component-wise maximum.
static inline ls_vec3 ls_vec3_max(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make(ls_fx_max(a.x, b.x), ls_fx_max(a.y, b.y), ls_fx_max(a.z, b.z));
}

/// Component-wise absolute value.
static inline ls_vec3 ls_vec3_abs(ls_vec3 a)
{
    return ls_vec3_make(ls_fx_abs(a.x), ls_fx_abs(a.y), ls_fx_abs(a.z));
}

/// True when all components are equal.
static inline bool ls_vec3_equal(ls_vec3 a, ls_vec3 b)
{
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

/// a + b for wide (Q32.32) intermediates, saturating at +-INT64_MAX.
static inline int64_t ls_i64_add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        return a > 0 ? INT64_MAX : -INT64_MAX;
    }
    return r;
}

/// The Q32.32 product a*b - c*d, saturating (the difference can exceed int64).
static inline int64_t ls_fx_cross_q32(ls_fx a, ls_fx b, ls_fx c, ls_fx d)
{
    return ls_i64_add_sat((int64_t)a * b, -((int64_t)c * d));
}

/// Exact dot product in Q32.32, saturating at +-INT64_MAX.
static inline int64_t ls_vec3_dot_q32(ls_vec3 a, ls_vec3 b)
{
    int64_t s = ls_i64_add_sat((int64_t)a.x * b.x, (int64_t)a.y * b.y);
    return ls_i64_add_sat(s, (int64_t)a.z * b.z);
}

/// Round a Q32.32 wide value to Q16.16 (like fix16_mul) and saturate.
static inline ls_fx ls_fx_from_q32(int64_t v)
{
    // Wide sums saturate at the int64 limits, where ls_fx_round_q32 (v +
    // 2^15) would overflow: round the low 16 bits apart, floor(v / 2^16) +
    // floor((v mod 2^16 + 2^15 - [v < 0]) / 2^16), the same integer without
    // the overflow (and so without clamping v first).
    int64_t r = (v >> 16) + (((v & 0xFFFF) + 0x8000 + (v >> 63)) >> 16);
    bool o = false;
    return ls_fx_sat64(r, &o);
}

/// Dot product, rounded once, saturating.
static inline ls_fx ls_vec3_dot(ls_vec3 a, ls_vec3 b)
{
    return ls_fx_from_q32(ls_vec3_dot_q32(a, b));
}

/// Cross product a x b, each component rounded once, saturating.
static inline ls_vec3 ls_vec3_cross(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make(ls_fx_from_q32(ls_fx_cross_q32(a.y, b.z, a.z, b.y)),
                        ls_fx_from_q32(ls_fx_cross_q32(a.z, b.x, a.x, b.z)),
                        ls_fx_from_q32(ls_fx_cross_q32(a.x, b.y, a.y, b.x)));
}

/// |a|^2 exactly, in Q32.32 as an unsigned 64-bit integer (never overflows).
static inline uint64_t ls_vec3_len_sq_q32(ls_vec3 a)
{
    uint64_t x = (uint64_t)ls_fx_abs(a.x), y = (uint64_t)ls_fx_abs(a.y),
             z = (uint64_t)ls_fx_abs(a.z);
    return x * x + y * y + z * z;
}

/// |a|^2, rounded, saturating at LS_FX_MAX (a component above ~106 saturates).
static inline ls_fx ls_vec3_len_sq(ls_vec3 a)
{
    uint64_t s = ls_vec3_len_sq_q32(a);
    uint64_t r = (s + 0x8000) >> 16;
    return r > (uint64_t)LS_FX_MAX ? LS_FX_MAX : (ls_fx)r;
}

/// |a|, exact to nearest ulp (never overflows below 37837 in any component).
static inline ls_fx ls_vec3_len(ls_vec3 a)
{
    uint64_t s = ls_vec3_len_sq_q32(a);
    uint64_t r = ls_isqrt64(s);
    r += (s - r * r) > r; // round to nearest
    return r > (uint64_t)LS_FX_MAX ? LS_FX_MAX : (ls_fx)r;
}

/// Distance between two points.
static inline ls_fx ls_vec3_distance(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_len(ls_vec3_sub(a, b));
}

/// Shift amount that brings max |component| of a vector with maximum m into
/// [2^29, 2^30): positive is a left shift. m must be non-zero.
static inline int ls_norm_shift_(uint32_t m)
{
    return 29 - (31 - __builtin_clz(m));
}

/// Scale a component by 2^shift (shift may be negative; rounds to nearest).
static inline int64_t ls_shift_round_(int64_t v, int shift)
{
    if (shift >= 0) {
        return v * ((int64_t)1 << shift);
    }
    int64_t half = (int64_t)1 << (-shift - 1);
    return v >= 0 ? (v + half) >> -shift : -((-v + half) >> -shift);
}

/// a / |a|, to nearest ulp even for tiny vectors (the vector is rescaled by a
/// power of two first). Returns fallback when a is exactly zero.
static inline ls_vec3 ls_vec3_normalize(ls_vec3 a, ls_vec3 fallback)
{
    uint32_t m = (uint32_t)ls_fx_max(ls_fx_abs(a.x), ls_fx_max(ls_fx_abs(a.y), ls_fx_abs(a.z)));
    if (m == 0) {
        return fallback;
    }
    int sh = ls_norm_shift_(m);
    int64_t x = ls_shift_round_(a.x, sh), y = ls_shift_round_(a.y, sh),
            z = ls_shift_round_(a.z, sh);
    uint64_t len = ls_isqrt64((uint64_t)(x * x + y * y + z * z)); // < 2^31
    // component * 2^16 / len, rounded to nearest (ties away from zero); len
    // >= 2^29 (the largest component is at least 2^29), |x|, |y|, |z| <= len.
    ls_unit_div_ u = ls_unit_div_make_(len);
    ls_vec3 r;
    r.x = ls_unit_div_q16_(&u, x);
    r.y = ls_unit_div_q16_(&u, y);
    r.z = ls_unit_div_q16_(&u, z);
    return r;
}

LS_EXTERN_C_END

#endif
