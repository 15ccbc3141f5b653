// SPDX-License-Identifier: MIT
// The arithmetic of the constraint sweeps (SPEC.md §11.4), scalar reference.
//
// Why not ls_fx_*: those saturate every operation, which costs a compare and
// a select per add and per product in the hottest loop of the engine, and
// cannot be written as a few integer SIMD instructions. Here the sweeps work
// on raw two's-complement integers with a range proved where values are made:
//   - every product is exact in 64 bits (both factors fit 32 bits);
//   - a sum of products is exact in 64 bits (the solver's ranges keep it
//     below 2^63) and rounded once, `rnd(x, s) = (x + 2^(s-1)) >> s`
//     (arithmetic shift: round half up);
//   - every value a sweep keeps (velocities, impulses, separations) is
//     *narrowed*: if it lies outside the solver range [-2^30, 2^30) it is
//     saturated to the nearest end and the sweep's overflow flag is raised.
// The flag is checked once per constraint group; a raised flag reports an
// overflow for the group's first body, with the tick (SPEC.md §2). A vector
// path computes the same exact values lane by lane; where a narrowing would
// saturate it redoes the whole group with these functions, so every path
// gives the same bits (dynamics/contact_avx2.c).
#ifndef LS_DYNAMICS_LANE_MATH_H
#define LS_DYNAMICS_LANE_MATH_H

#include <stdbool.h>
#include <stdint.h>

/// Lanes of one constraint group (structure of arrays, SPEC.md §11.4).
#ifndef LS_LANES
#define LS_LANES 8 // a test build may set 4 (scalar only): the bits must not change
#endif
/// Fraction bits of the solver's inverse masses (Q10.22, SPEC.md §11.4): 1/m up
/// to 256 kg^-1 stays in the solver range, so every mass of SPEC.md §5 (from
/// 0.01 kg) fits with room (Q8.24 overflowed below 1/64 kg).
#define LS_INV_MASS_BITS 22
/// The solver range: values kept by a sweep lie in [-LS_LANE_LIMIT, LS_LANE_LIMIT).
#define LS_LANE_LIMIT ((int64_t)1 << 30)

#if defined(__GNUC__)
#define LS_LANE_INLINE static inline __attribute__((always_inline))
#else
#define LS_LANE_INLINE static inline
#endif

/// x rounded to nearest after dropping s fraction bits (ties up), exact.
LS_LANE_INLINE int64_t ls_rnd(int64_t x, int s)
{
    return (x + ((int64_t)1 << (s - 1))) >> s;
}

/// x narrowed into the solver range; saturates and raises *ovf outside it.
LS_LANE_INLINE int32_t ls_nar(int64_t x, uint32_t *ovf)
{
    if (x < -LS_LANE_LIMIT) {
        *ovf = 1;
        return (int32_t)-LS_LANE_LIMIT;
    }
    if (x >= LS_LANE_LIMIT) {
        *ovf = 1;
        return (int32_t)(LS_LANE_LIMIT - 1);
    }
    return (int32_t)x;
}

/// max(x, 0) narrowed into [0, 2^31): an accumulated normal impulse, which
/// is never negative, so the whole positive 32-bit range is its range (the
/// difference of two of them still fits 32 bits). Only the upper end can
/// saturate and raise *ovf.
LS_LANE_INLINE int32_t ls_nar_pos(int64_t x, uint32_t *ovf)
{
    if (x < 0) {
        return 0;
    }
    if (x > INT32_MAX) {
        *ovf = 1;
        return INT32_MAX;
    }
    return (int32_t)x;
}

/// x clamped into [0, 2^30): a friction, twist or rolling limit (no flag:
/// the cone is capped at the solver range, SPEC.md §11.4).
LS_LANE_INLINE int32_t ls_cap(int64_t x)
{
    return x >= LS_LANE_LIMIT ? (int32_t)(LS_LANE_LIMIT - 1) : x < 0 ? 0 : (int32_t)x;
}

/// Exact product of two 32-bit values.
LS_LANE_INLINE int64_t ls_mul(int32_t a, int32_t b)
{
    return (int64_t)a * b;
}

/// Exact a . b of two 3-vectors of 32-bit components.
LS_LANE_INLINE int64_t ls_dot3(int32_t ax, int32_t ay, int32_t az, int32_t bx, int32_t by,
                               int32_t bz)
{
    return (int64_t)ax * bx + (int64_t)ay * by + (int64_t)az * bz;
}

/// The larger of a and b.
LS_LANE_INLINE int32_t ls_max32(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

/// The smaller of a and b.
LS_LANE_INLINE int32_t ls_min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

#endif
