// SPDX-License-Identifier: MIT
/// @file
/// 3x3 matrices of Q16.16 (rotations and inertia tensors), row-major.
#ifndef LS_MAT3_H
#define LS_MAT3_H

#include "ls/quat.h"
#include "ls/vec3.h"

LS_EXTERN_C_BEGIN

/// A 3x3 matrix stored as three rows.
typedef struct ls_mat3 {
    ls_vec3 row[3]; ///< Rows 0..2.
} ls_mat3;

/// The diagonal matrix diag(d.x, d.y, d.z).
static inline ls_mat3 ls_mat3_diag(ls_vec3 d)
{
    ls_mat3 m = {{ls_vec3_make(d.x, 0, 0), ls_vec3_make(0, d.y, 0), ls_vec3_make(0, 0, d.z)}};
    return m;
}

/// The identity matrix.
static inline ls_mat3 ls_mat3_identity(void)
{
    return ls_mat3_diag(ls_vec3_make(LS_FX_ONE, LS_FX_ONE, LS_FX_ONE));
}

/// Column j as a vector.
static inline ls_vec3 ls_mat3_col(ls_mat3 m, int j)
{
    return j == 0   ? ls_vec3_make(m.row[0].x, m.row[1].x, m.row[2].x)
           : j == 1 ? ls_vec3_make(m.row[0].y, m.row[1].y, m.row[2].y)
                    : ls_vec3_make(m.row[0].z, m.row[1].z, m.row[2].z);
}

/// The transpose.
static inline ls_mat3 ls_mat3_transpose(ls_mat3 m)
{
    ls_mat3 t = {{ls_mat3_col(m, 0), ls_mat3_col(m, 1), ls_mat3_col(m, 2)}};
    return t;
}

/// m * v.
static inline ls_vec3 ls_mat3_mul_vec(ls_mat3 m, ls_vec3 v)
{
    return ls_vec3_make(ls_vec3_dot(m.row[0], v), ls_vec3_dot(m.row[1], v),
                        ls_vec3_dot(m.row[2], v));
}

/// transpose(m) * v.
static inline ls_vec3 ls_mat3_mul_tvec(ls_mat3 m, ls_vec3 v)
{
    // Accumulate exactly in Q32.32 instead of adding three rounded products.
    int64_t x = ls_i64_add_sat(ls_i64_add_sat((int64_t)m.row[0].x * v.x, (int64_t)m.row[1].x * v.y),
                               (int64_t)m.row[2].x * v.z);
    int64_t y = ls_i64_add_sat(ls_i64_add_sat((int64_t)m.row[0].y * v.x, (int64_t)m.row[1].y * v.y),
                               (int64_t)m.row[2].y * v.z);
    int64_t z = ls_i64_add_sat(ls_i64_add_sat((int64_t)m.row[0].z * v.x, (int64_t)m.row[1].z * v.y),
                               (int64_t)m.row[2].z * v.z);
    return ls_vec3_make(ls_fx_from_q32(x), ls_fx_from_q32(y), ls_fx_from_q32(z));
}

/// a * b.
static inline ls_mat3 ls_mat3_mul(ls_mat3 a, ls_mat3 b)
{
    ls_mat3 bt = ls_mat3_transpose(b);
    ls_mat3 r;
    for (int i = 0; i < 3; i++) {
        r.row[i] = ls_mat3_mul_vec(bt, a.row[i]);
    }
    return r;
}

/// The rotation matrix of unit quaternion q (|q| <= ~1.4 keeps the sums in range).
static inline ls_mat3 ls_mat3_from_quat(ls_quat q)
{
    // Entries are 1 - 2(..) or 2(..); each (..) is an exact Q32.32 sum.
    int64_t xx = (int64_t)q.x * q.x, yy = (int64_t)q.y * q.y, zz = (int64_t)q.z * q.z;
    int64_t xy = (int64_t)q.x * q.y, xz = (int64_t)q.x * q.z, yz = (int64_t)q.y * q.z;
    int64_t wx = (int64_t)q.w * q.x, wy = (int64_t)q.w * q.y, wz = (int64_t)q.w * q.z;
    const int64_t one = (int64_t)1 << 32;
    ls_mat3 m;
    // Every component below 2 in magnitude (any unit quaternion): each entry
    // is below 2^37 in Q32.32, where ls_fx_round_q32 is ls_fx_from_q32's
    // rounding without the wide-sum care, and its result (below 2^21) is
    // never clamped: the same bits with less work (integration does this
    // for every turning body in every sub-step).
    uint32_t mag = (uint32_t)(q.x ^ (q.x >> 31)) | (uint32_t)(q.y ^ (q.y >> 31)) |
                   (uint32_t)(q.z ^ (q.z >> 31)) | (uint32_t)(q.w ^ (q.w >> 31));
    if (mag < (1u << 17)) {
        m.row[0] = ls_vec3_make((ls_fx)ls_fx_round_q32(one - 2 * (yy + zz)),
                                (ls_fx)ls_fx_round_q32(2 * (xy - wz)),
                                (ls_fx)ls_fx_round_q32(2 * (xz + wy)));
        m.row[1] = ls_vec3_make((ls_fx)ls_fx_round_q32(2 * (xy + wz)),
                                (ls_fx)ls_fx_round_q32(one - 2 * (xx + zz)),
                                (ls_fx)ls_fx_round_q32(2 * (yz - wx)));
        m.row[2] = ls_vec3_make((ls_fx)ls_fx_round_q32(2 * (xz - wy)),
                                (ls_fx)ls_fx_round_q32(2 * (yz + wx)),
                                (ls_fx)ls_fx_round_q32(one - 2 * (xx + yy)));
        return m;
    }
    m.row[0] = ls_vec3_make(ls_fx_from_q32(one - 2 * (yy + zz)), ls_fx_from_q32(2 * (xy - wz)),
                            ls_fx_from_q32(2 * (xz + wy)));
    m.row[1] = ls_vec3_make(ls_fx_from_q32(2 * (xy + wz)), ls_fx_from_q32(one - 2 * (xx + zz)),
                            ls_fx_from_q32(2 * (yz - wx)));
    m.row[2] = ls_vec3_make(ls_fx_from_q32(2 * (xz - wy)), ls_fx_from_q32(2 * (yz + wx)),
                            ls_fx_from_q32(one - 2 * (xx + yy)));
    return m;
}

/// r * diag(d) * transpose(r): a body-frame diagonal tensor in world frame.
static inline ls_mat3 ls_mat3_rotate_diag(ls_mat3 r, ls_vec3 d)
{
    ls_mat3 out;
    ls_vec3 rd[3];
    for (int i = 0; i < 3; i++) {
        rd[i] = ls_vec3_mul(r.row[i], d);
    }
    for (int i = 0; i < 3; i++) {
        out.row[i] = ls_vec3_make(ls_vec3_dot(rd[i], r.row[0]), ls_vec3_dot(rd[i], r.row[1]),
                                  ls_vec3_dot(rd[i], r.row[2]));
    }
    return out;
}

/// Inverse of a symmetric positive-definite matrix (an inertia tensor).
/// Returns false, leaving *out untouched, when m is not positive definite or
/// the inverse does not fit Q16.16.
LS_API bool ls_mat3_inverse_spd(ls_mat3 m, ls_mat3 *out);

LS_EXTERN_C_END

#endif
