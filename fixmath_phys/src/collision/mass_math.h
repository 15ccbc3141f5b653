// SPDX-License-Identifier: MIT
// Arithmetic of the shapes' mass properties: exact products rounded once.
//
// Why: a shape's mass and inertia used to be built from Q16.16 products
// rounded at every step (x*y, then *z, then *density), so a 5 cm box of
// water weighed 0.977 kg instead of 1 kg and a small sphere lost 4 %. Here
// the volume is formed in Q32.32 from exact 128-bit products, the mass
// `volume * density` is kept exact in Q16.48 (at most 2^58 once the 1000 kg
// limit is checked), and the published numbers are rounded once each: the
// mass to Q16.16, the inertia to Q32.32 (SPEC.md §5.1).
#ifndef LS_COLLISION_MASS_MATH_H
#define LS_COLLISION_MASS_MATH_H

#include "gjk.h"
#include "shape_kind.h"

/// pi in Q2.61 and 4/3 pi in Q3.60, rounded to nearest.
#define LS_MASS_PI_Q61             UINT64_C(7244019458077122842)
#define LS_MASS_FOUR_THIRDS_PI_Q60 UINT64_C(4829346305384748562)

/// round(a * b / 2^s), half up, for 0 < s < 64; the caller keeps the result
/// below 2^63.
static inline int64_t ls_mass_mul_shr(uint64_t a, uint64_t b, int s)
{
    ls_i128 p = ls_u128_mul_u64(a, b);
    p = ls_i128_add(p, ls_i128_from_i64((int64_t)1 << (s - 1)));
    return ls_i128_lo64(ls_i128_shr(p, s));
}

/// Mass (Q16.48, exact) of a shape of volume `volume_q32` (m^3, Q32.32) and
/// density `density` (Q16.16, > 0); false when it exceeds the 1000 kg shape
/// limit, with `*approx` the mass in Q16.16 (for the error message).
static inline bool ls_mass_of_volume(int64_t volume_q32, ls_fx density, uint64_t *mass_q48,
                                     int64_t *approx)
{
    *mass_q48 = 0;
    *approx = 0;
    if (volume_q32 <= 0) {
        return false;
    }
    if (volume_q32 > (LS_SHAPE_MASS_MAX_RAW << 32) / density) {
        *approx = ls_mass_mul_shr((uint64_t)volume_q32, (uint64_t)density, 32); // < 2^53
        return false;
    }
    *mass_q48 = (uint64_t)volume_q32 * (uint64_t)density; // <= 2^58 + 2^31
    return true;
}

/// A Q16.48 mass rounded to Q16.16.
static inline int64_t ls_mass_q16(uint64_t mass_q48)
{
    return (int64_t)((mass_q48 + (UINT64_C(1) << 31)) >> 32);
}

/// Inertia (Q32.32) of a mass (Q16.48) times a unit inertia (m^2, Q32.32,
/// >= 0): round(unit * mass / 2^48).
static inline int64_t ls_mass_inertia(int64_t unit_q32, uint64_t mass_q48)
{
    return ls_mass_mul_shr((uint64_t)unit_q32, mass_q48, 48);
}

#endif
