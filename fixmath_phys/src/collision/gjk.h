// SPDX-License-Identifier: MIT
// GJK distance, EPA penetration and linear shape casts between convex
// proxies (a point set plus a radius), in exact integer arithmetic where a
// sign decides something and in rounded fixed point where a value is
// reported. See SPEC.md §20 for the algorithms, tolerances and
// caps (SPEC.md §20).
#ifndef LS_COLLISION_GJK_H
#define LS_COLLISION_GJK_H

#include "geom.h"
#include "ls/hull.h"

// ------------------------------------------------ exact 128-bit integers
//
// A portable two's-complement 128-bit integer (no __int128: i386 and wasm32
// have none). Only what the exact predicates need: products of two int64,
// sums, signs and comparisons, and arithmetic right shifts. All operations
// wrap through unsigned arithmetic, so nothing is undefined.

/// Signed 128-bit integer, two's complement: value = hi * 2^64 + lo with hi
/// read as signed.
typedef struct ls_i128 {
    uint64_t hi;
    uint64_t lo;
} ls_i128;

/// v as a 128-bit integer.
static inline ls_i128 ls_i128_from_i64(int64_t v)
{
    ls_i128 r = {v < 0 ? UINT64_MAX : 0, (uint64_t)v};
    return r;
}

/// a + b (exact while the result fits 128 bits).
static inline ls_i128 ls_i128_add(ls_i128 a, ls_i128 b)
{
    ls_i128 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo);
    return r;
}

/// -a.
static inline ls_i128 ls_i128_neg(ls_i128 a)
{
    ls_i128 r;
    r.lo = ~a.lo + 1;
    r.hi = ~a.hi + (r.lo == 0);
    return r;
}

/// a - b.
static inline ls_i128 ls_i128_sub(ls_i128 a, ls_i128 b)
{
    return ls_i128_add(a, ls_i128_neg(b));
}

/// The exact unsigned 128-bit product of two 64-bit magnitudes.
static inline ls_i128 ls_u128_mul_u64(uint64_t a, uint64_t b)
{
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    ls_i128 r;
    r.lo = (p00 & 0xFFFFFFFFu) | (mid << 32);
    r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return r;
}

/// The exact product a * b.
static inline ls_i128 ls_i128_mul(int64_t a, int64_t b)
{
    uint64_t ua = a < 0 ? 0u - (uint64_t)a : (uint64_t)a;
    uint64_t ub = b < 0 ? 0u - (uint64_t)b : (uint64_t)b;
    ls_i128 r = ls_u128_mul_u64(ua, ub);
    return (a < 0) != (b < 0) ? ls_i128_neg(r) : r;
}

/// -1, 0 or +1.
static inline int ls_i128_sign(ls_i128 a)
{
    if (a.hi >> 63) {
        return -1;
    }
    return (a.hi | a.lo) != 0;
}

/// -1, 0 or +1 as a < b, a == b, a > b.
static inline int ls_i128_cmp(ls_i128 a, ls_i128 b)
{
    uint64_t ah = a.hi ^ ((uint64_t)1 << 63), bh = b.hi ^ ((uint64_t)1 << 63);
    if (ah != bh) {
        return ah < bh ? -1 : 1;
    }
    return a.lo < b.lo ? -1 : a.lo > b.lo;
}

/// floor(a / 2^s) for 0 <= s < 128 (arithmetic shift).
static inline ls_i128 ls_i128_shr(ls_i128 a, int s)
{
    uint64_t fill = (a.hi >> 63) ? UINT64_MAX : 0;
    ls_i128 r;
    if (s == 0) {
        return a;
    }
    if (s < 64) {
        r.lo = (a.lo >> s) | (a.hi << (64 - s));
        r.hi = (a.hi >> s) | (fill << (64 - s));
    } else {
        r.lo = s == 64 ? a.hi : (a.hi >> (s - 64)) | (fill << (128 - s));
        r.hi = fill;
    }
    return r;
}

/// The low 64 bits as a signed value (exact when a fits int64).
static inline int64_t ls_i128_lo64(ls_i128 a)
{
    // Two's-complement reinterpretation without an implementation-defined cast.
    return a.lo >> 63 ? -(int64_t)(~a.lo) - 1 : (int64_t)a.lo;
}

/// Number of significant bits of |a| (0 for 0); at most 128.
static inline int ls_i128_bits(ls_i128 a)
{
    if (a.hi >> 63) {
        a = ls_i128_neg(a);
    }
    if (a.hi) {
        return 128 - __builtin_clzll(a.hi);
    }
    return a.lo ? 64 - __builtin_clzll(a.lo) : 0;
}

/// A 3-vector of int64 (exact cross products, scaled directions).
typedef struct ls_i3 {
    int64_t x, y, z;
} ls_i3;

/// v as int64 components.
static inline ls_i3 ls_i3_of(ls_vec3 v)
{
    ls_i3 r = {v.x, v.y, v.z};
    return r;
}

/// a - b (the caller keeps components far from the int64 limits).
static inline ls_i3 ls_i3_sub(ls_i3 a, ls_i3 b)
{
    ls_i3 r = {a.x - b.x, a.y - b.y, a.z - b.z};
    return r;
}

/// Exact a x b (components below 2^31 keep it within int64).
static inline ls_i3 ls_i3_cross(ls_i3 a, ls_i3 b)
{
    ls_i3 r = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
    return r;
}

/// a . b in int64 (the caller keeps the sum below 2^63).
static inline int64_t ls_i3_dot(ls_i3 a, ls_i3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

/// a . b exactly, in 128 bits.
static inline ls_i128 ls_i3_dot_wide(ls_i3 a, ls_i3 b)
{
    return ls_i128_add(ls_i128_add(ls_i128_mul(a.x, b.x), ls_i128_mul(a.y, b.y)),
                       ls_i128_mul(a.z, b.z));
}

/// True when all components are zero.
static inline bool ls_i3_is_zero(ls_i3 a)
{
    return (a.x | a.y | a.z) == 0;
}

/// Sign of the orientation of p against the plane through a, b, c:
/// sign(((b - a) x (c - a)) . (p - a)), exact for Q16.16 inputs whose
/// pairwise differences stay below 2^30.
int ls_orient3d_(ls_vec3 a, ls_vec3 b, ls_vec3 c, ls_vec3 p);

/// v scaled by a power of two so that its largest component magnitude lies in
/// [2^(bits-1), 2^bits) (right shifts floor); the zero vector stays zero.
/// bits <= 31. Used to turn wide exact directions into support directions.
ls_i3 ls_i3_fit_(ls_i3 v, int bits);

/// Unit vector along v with components scaled by 2^bits (bits <= 30),
/// each rounded to nearest as ls_vec3_normalize does; `fallback` (already
/// scaled) when v is zero. v's components must be below 2^62 in magnitude.
ls_i3 ls_i3_unit_(ls_i3 v, int bits, ls_i3 fallback);

/// As ls_i3_unit_ with bits = 16: a Q16.16 unit vector.
ls_vec3 ls_i3_unit_fx_(ls_i3 v, ls_vec3 fallback);

// ----------------------------------------------------------------- proxies

/// A convex proxy: the convex hull of `count` local points (1..64) swept by a
/// sphere of `radius`. GJK and EPA work on the core (radius 0); the radius is
/// added by the caller.
typedef struct ls_proxy {
    const ls_vec3 *points;
    uint32_t count;
    ls_fx radius;
} ls_proxy;

/// The proxy of a sphere, box, capsule or hull shape, with points in the
/// body's local frame (offset applied). storage holds the generated points
/// (sphere 1, capsule 2, box 8); a hull's proxy points at its vertices.
/// Any other kind gives a proxy of count 0.
ls_proxy ls_proxy_of_geom_(const ls_geom *g, ls_vec3 storage[8]);

/// Iteration cap of GJK (each iteration adds one support point).
#define LS_GJK_MAX_ITERS 64
/// GJK stops when the new support point is less than LS_GJK_TOL * 2^-16 raw
/// units (2^-31 m) closer to the origin than the current closest point, or
/// repeats a simplex vertex, or the closest point stops getting closer. The
/// tolerance is tiny on purpose: the closest point (and so the normal) is
/// only accurate to sqrt(2 * distance * tolerance).
#define LS_GJK_TOL 1
/// EPA caps: iterations (support points added), polytope faces, vertices.
#define LS_EPA_MAX_ITERS 48
#define LS_EPA_MAX_FACES 256
#define LS_EPA_MAX_VERTS (4 + LS_EPA_MAX_ITERS)
/// EPA stops when the support along the nearest face's normal is less than
/// this much (raw units) beyond that face.
#define LS_EPA_TOL 2
/// Shape cast: iteration cap of the conservative advancement.
#define LS_CAST_MAX_ITERS 32

/// Result of ls_gjk_distance_. Points are world coordinates.
typedef struct ls_gjk_result {
    ls_vec3 point_a;      ///< Closest point on A's core (world).
    ls_vec3 point_b;      ///< Closest point on B's core (world).
    ls_vec3 normal;       ///< Unit normal from A to B (separated); the fallback when overlapping.
    ls_fx distance;       ///< Distance between the cores, radii NOT subtracted; 0 when overlapping.
    bool overlap;         ///< The cores intersect or touch (distance 0 exactly).
    bool converged;       ///< Stopped by a tolerance, not by LS_GJK_MAX_ITERS.
    int iterations;       ///< Support points added (0..LS_GJK_MAX_ITERS).
    int simplex_count;    ///< 1..4 vertices of the final simplex.
    uint8_t simplex_a[4]; ///< Point index in A of each simplex vertex.
    uint8_t simplex_b[4]; ///< Point index in B of each simplex vertex.
} ls_gjk_result;

/// GJK distance between the cores of a (on xa) and b (on xb). Fills *out and
/// returns true when the cores are separated (out->overlap false). Exact
/// region tests (128-bit), closest point weights rounded to 2^-30; bounded by
/// LS_GJK_MAX_ITERS; deterministic for any input, including repeated
/// support points, collinear/coplanar simplices, touching, identical and
/// tiny shapes. Both proxies need count >= 1; world positions within
/// +-2048 m, proxy points within +-111 m of their body.
bool ls_gjk_distance_(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b, const ls_xform *xb,
                      ls_gjk_result *out);

/// Result of ls_epa_penetration_.
typedef struct ls_epa_result {
    ls_vec3 normal;    ///< Unit normal from A to B: moving B by depth * normal separates the cores.
    ls_fx depth;       ///< Penetration depth of the cores (>= 0).
    ls_vec3 point_a;   ///< Deepest point of A's core inside B (world).
    ls_vec3 point_b;   ///< Deepest point of B's core inside A (world).
    int iterations;    ///< Support points added (0..LS_EPA_MAX_ITERS).
    int faces;         ///< Faces created (<= LS_EPA_MAX_FACES).
    uint8_t face_a[3]; ///< Point indices in A of the final face's vertices.
    uint8_t face_b[3]; ///< Point indices in B of the final face's vertices.
} ls_epa_result;

/// EPA from the simplex of an overlapping ls_gjk_distance_ result. Returns
/// true when converged within tolerance; false when a cap stopped it (the
/// result is the best face found) or the Minkowski difference is flat (no
/// volume: depth 0, normal from A's points' mean towards B's, or +Y).
bool ls_epa_penetration_(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b,
                         const ls_xform *xb, const ls_gjk_result *gjk, ls_epa_result *out);

/// Result of ls_shape_cast_.
typedef struct ls_cast_result {
    ls_fx fraction; ///< 0..1 of translation_b at the hit.
    ls_vec3 point;  ///< Hit point on A's surface (radius included), world, at the hit.
    ls_vec3 normal; ///< Unit normal from A to B at the hit (A's surface normal).
    int iterations; ///< Distance evaluations made.
} ls_cast_result;

/// Sweep b by translation_b (a fixed) and find the first fraction in [0, 1]
/// at which the distance between the shapes (radii included) falls to
/// target_separation (within 1/4096 m), by conservative advancement along
/// the GJK normal. Returns false when there is no hit (b moves apart or never
/// gets that close). Shapes closer than target at the start hit at fraction 0.
bool ls_shape_cast_(const ls_proxy *a, const ls_xform *xa, const ls_proxy *b, const ls_xform *xb,
                    ls_vec3 translation_b, ls_fx target_separation, ls_cast_result *out);

#endif
