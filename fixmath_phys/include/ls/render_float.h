// SPDX-License-Identifier: MIT
/// @file
/// Q16.16 to float and double for a game's renderer, audio or UI: scalars,
/// vectors, quaternions, 3x3 matrices and a body's pose as a 4x4 column-major
/// matrix (OpenGL, Vulkan and three.js order), all `static inline`.
///
/// Why this is the one public header with floating point (`make lint` exempts
/// it by name): a renderer wants floats, and without these helpers every game
/// would write its own, and some would round twice or feed a float back into
/// the world. The conversions go one way only. Nothing here is ever
/// converted back to ls_fx, and nothing the simulation computes reads them:
/// the world, its snapshots and its checksums stay integer, so drawing with
/// these values cannot desynchronise a match.
///
/// Exactness: ls_render_double() is exact for every ls_fx (a 32-bit integer
/// times 2^-16 fits a double's 53-bit significand). ls_render_float() rounds
/// once, to nearest: it is exact while |v| < 256 (24 significant bits, the
/// float's significand), and off by at most half a float ulp beyond, e.g.
/// 32767.99998 (raw 0x7fffffff) becomes 32768.0f. The vector, quaternion and
/// matrix functions convert each component the same way; the pose matrix
/// computes its rotation in double and rounds each entry once.
#ifndef LS_RENDER_FLOAT_H
#define LS_RENDER_FLOAT_H

#include "ls/mat3.h"
#include "ls/quat.h"
#include "ls/vec3.h"

LS_EXTERN_C_BEGIN

/// A Q16.16 value as a double: exact (raw / 65536).
static inline double ls_render_double(ls_fx v)
{
    return (double)v * (1.0 / 65536.0);
}

/// A Q16.16 value as a float, rounded once to nearest (exact while |v| < 256).
static inline float ls_render_float(ls_fx v)
{
    // int32 -> float rounds to nearest; the power-of-two scale is exact.
    return (float)v * (1.0f / 65536.0f);
}

/// A vector as out[0..2] = x, y, z in float.
static inline void ls_render_vec3f(ls_vec3 v, float out[3])
{
    out[0] = ls_render_float(v.x);
    out[1] = ls_render_float(v.y);
    out[2] = ls_render_float(v.z);
}

/// A vector as out[0..2] = x, y, z in double (exact).
static inline void ls_render_vec3d(ls_vec3 v, double out[3])
{
    out[0] = ls_render_double(v.x);
    out[1] = ls_render_double(v.y);
    out[2] = ls_render_double(v.z);
}

/// A quaternion as out[0..3] = x, y, z, w in float (three.js, Unity and Godot
/// take x, y, z, w; glm::quat's constructor takes w first).
static inline void ls_render_quatf(ls_quat q, float out[4])
{
    out[0] = ls_render_float(q.x);
    out[1] = ls_render_float(q.y);
    out[2] = ls_render_float(q.z);
    out[3] = ls_render_float(q.w);
}

/// A quaternion as out[0..3] = x, y, z, w in double (exact).
static inline void ls_render_quatd(ls_quat q, double out[4])
{
    out[0] = ls_render_double(q.x);
    out[1] = ls_render_double(q.y);
    out[2] = ls_render_double(q.z);
    out[3] = ls_render_double(q.w);
}

/// A 3x3 matrix (ls_mat3 is row-major) as out[0..8] column-major in float:
/// out[col * 3 + row] = m.row[row] component col.
static inline void ls_render_mat3f(ls_mat3 m, float out[9])
{
    for (int r = 0; r < 3; r++) {
        out[0 * 3 + r] = ls_render_float(m.row[r].x);
        out[1 * 3 + r] = ls_render_float(m.row[r].y);
        out[2 * 3 + r] = ls_render_float(m.row[r].z);
    }
}

/// The pose (position, orientation) as a 4x4 rigid transform in double,
/// column-major: out[col * 4 + row], translation in out[12..14], out[15] = 1.
/// It maps body-local points to world points, as a model matrix does.
///
/// Why the rotation is built here in double and not from ls_mat3_from_quat():
/// a Q16.16 matrix rounds every entry to 1/65536 first. Why it divides by
/// |q|^2: a Q16.16 orientation is unit only to about 1e-5, and the divided
/// form gives a pure rotation for any non-zero q (no scale or shear in the
/// drawing). A zero quaternion, which a world never holds, gives the identity.
static inline void ls_render_transformd(ls_vec3 position, ls_quat orientation, double out[16])
{
    double x = ls_render_double(orientation.x), y = ls_render_double(orientation.y);
    double z = ls_render_double(orientation.z), w = ls_render_double(orientation.w);
    double n = x * x + y * y + z * z + w * w;
    double s = n > 0.0 ? 2.0 / n : 0.0;
    double xx = x * x * s, yy = y * y * s, zz = z * z * s;
    double xy = x * y * s, xz = x * z * s, yz = y * z * s;
    double wx = w * x * s, wy = w * y * s, wz = w * z * s;
    out[0] = 1.0 - (yy + zz); // column 0: the body's x axis in the world
    out[1] = xy + wz;
    out[2] = xz - wy;
    out[3] = 0.0;
    out[4] = xy - wz; // column 1: its y axis
    out[5] = 1.0 - (xx + zz);
    out[6] = yz + wx;
    out[7] = 0.0;
    out[8] = xz + wy; // column 2: its z axis
    out[9] = yz - wx;
    out[10] = 1.0 - (xx + yy);
    out[11] = 0.0;
    out[12] = ls_render_double(position.x); // column 3: the translation
    out[13] = ls_render_double(position.y);
    out[14] = ls_render_double(position.z);
    out[15] = 1.0;
}

/// The pose (position, orientation) as a 4x4 rigid transform in float,
/// column-major, ready for glUniformMatrix4fv(..., GL_FALSE, out) or
/// THREE.Matrix4.fromArray: ls_render_transformd() with each entry rounded
/// once to float.
static inline void ls_render_transformf(ls_vec3 position, ls_quat orientation, float out[16])
{
    double d[16];
    ls_render_transformd(position, orientation, d);
    for (int i = 0; i < 16; i++) {
        out[i] = (float)d[i];
    }
}

LS_EXTERN_C_END

#endif
