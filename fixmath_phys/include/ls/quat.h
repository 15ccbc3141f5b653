// SPDX-License-Identifier: MIT
/// @file
/// Unit quaternions of Q16.16 for orientation, inline. Products are accumulated
/// in 64 bits and rounded once per component.
#ifndef LS_QUAT_H
#define LS_QUAT_H

#include "ls/trig.h"
#include "ls/vec3.h"

LS_EXTERN_C_BEGIN

/// A quaternion x*i + y*j + z*k + w; orientations are kept unit length.
typedef struct ls_quat {
    ls_fx x; ///< i component.
    ls_fx y; ///< j component.
    ls_fx z; ///< k component.
    ls_fx w; ///< Real part.
} ls_quat;

/// The quaternion (x, y, z, w).
static inline ls_quat ls_quat_make(ls_fx x, ls_fx y, ls_fx z, ls_fx w)
{
    ls_quat q = {x, y, z, w};
    return q;
}

/// The identity rotation.
static inline ls_quat ls_quat_identity(void)
{
    return ls_quat_make(0, 0, 0, LS_FX_ONE);
}

/// Sum of four Q32.32 products a0*b0 + a1*b1 + a2*b2 + a3*b3 rounded to Q16.16.
static inline ls_fx ls_fx_dot4_(ls_fx a0, ls_fx b0, ls_fx a1, ls_fx b1, ls_fx a2, ls_fx b2,
                                ls_fx a3, ls_fx b3)
{
    int64_t s = ls_i64_add_sat((int64_t)a0 * b0, (int64_t)a1 * b1);
    s = ls_i64_add_sat(s, (int64_t)a2 * b2);
    return ls_fx_from_q32(ls_i64_add_sat(s, (int64_t)a3 * b3));
}

/// Hamilton product a * b (apply b, then a).
static inline ls_quat ls_quat_mul(ls_quat a, ls_quat b)
{
    return ls_quat_make(
        ls_fx_dot4_(a.w, b.x, a.x, b.w, a.y, b.z, a.z, ls_fx_neg(b.y)),
        ls_fx_dot4_(a.w, b.y, a.y, b.w, a.z, b.x, a.x, ls_fx_neg(b.z)),
        ls_fx_dot4_(a.w, b.z, a.z, b.w, a.x, b.y, a.y, ls_fx_neg(b.x)),
        ls_fx_dot4_(a.w, b.w, a.x, ls_fx_neg(b.x), a.y, ls_fx_neg(b.y), a.z, ls_fx_neg(b.z)));
}

/// Conjugate (the inverse of a unit quaternion).
static inline ls_quat ls_quat_conj(ls_quat q)
{
    return ls_quat_make(ls_fx_neg(q.x), ls_fx_neg(q.y), ls_fx_neg(q.z), q.w);
}

/// Rotate v by unit quaternion q: v + w*t + u x t with t = 2 (u x v), u = (x, y, z).
static inline ls_vec3 ls_quat_rotate(ls_quat q, ls_vec3 v)
{
    ls_vec3 u = ls_vec3_make(q.x, q.y, q.z);
    ls_vec3 t = ls_vec3_cross(u, v);
    t = ls_vec3_add(t, t);
    return ls_vec3_add(ls_vec3_add(v, ls_vec3_scale(t, q.w)), ls_vec3_cross(u, t));
}

/// Rotate v by the inverse of unit quaternion q.
static inline ls_vec3 ls_quat_rotate_inv(ls_quat q, ls_vec3 v)
{
    return ls_quat_rotate(ls_quat_conj(q), v);
}

/// q / |q| to nearest ulp (rescaled by a power of two first, so tiny
/// quaternions normalise accurately); the identity when q is exactly zero.
static inline ls_quat ls_quat_normalize(ls_quat q)
{
    uint32_t m = (uint32_t)ls_fx_max(ls_fx_max(ls_fx_abs(q.x), ls_fx_abs(q.y)),
                                     ls_fx_max(ls_fx_abs(q.z), ls_fx_abs(q.w)));
    if (m == 0) {
        return ls_quat_identity();
    }
    int sh = ls_norm_shift_(m);
    int64_t c[4] = {ls_shift_round_(q.x, sh), ls_shift_round_(q.y, sh), ls_shift_round_(q.z, sh),
                    ls_shift_round_(q.w, sh)};
    uint64_t sum = 0;
    for (int i = 0; i < 4; i++) {
        sum += (uint64_t)(c[i] * c[i]); // each < 2^60, sum < 2^62
    }
    // Each component * 2^16 / len, to nearest; len >= 2^29 (the largest
    // component is at least 2^29) and every |c| <= len.
    ls_unit_div_ u = ls_unit_div_make_(ls_isqrt64(sum));
    return ls_quat_make(ls_unit_div_q16_(&u, c[0]), ls_unit_div_q16_(&u, c[1]),
                        ls_unit_div_q16_(&u, c[2]), ls_unit_div_q16_(&u, c[3]));
}

/// Rotation of `angle` radians about the unit vector `axis`.
static inline ls_quat ls_quat_from_axis_angle(ls_vec3 axis, ls_fx angle)
{
    ls_fx s, c;
    ls_fx_sincos(angle / 2, &s, &c); // angle/2 truncates toward zero: part of the definition
    return ls_quat_make(ls_fx_mul(axis.x, s), ls_fx_mul(axis.y, s), ls_fx_mul(axis.z, s), c);
}

/// Advance orientation q by angular velocity w (rad/s) over dt seconds:
/// q' = normalize(q + (w*dt/2, 0) * q).
static inline ls_quat ls_quat_integrate(ls_quat q, ls_vec3 w, ls_fx dt)
{
    ls_vec3 h = ls_vec3_scale(w, dt / 2);
    ls_quat d = ls_quat_mul(ls_quat_make(h.x, h.y, h.z, 0), q);
    return ls_quat_normalize(ls_quat_make(ls_fx_add(q.x, d.x), ls_fx_add(q.y, d.y),
                                          ls_fx_add(q.z, d.z), ls_fx_add(q.w, d.w)));
}

/// True when all components are equal.
static inline bool ls_quat_equal(ls_quat a, ls_quat b)
{
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}

LS_EXTERN_C_END

#endif
