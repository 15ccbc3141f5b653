// SPDX-License-Identifier: MIT
// The distance projection shared by sticks, ranges and angle limits (SPEC.md
// §25.4), inline: it is the inner loop of every cloth (a 64 x 64 cloth runs
// it 190 000 times a tick at 8 iterations).
//
// Both modes move the particles along d = x_b - x_a by a fraction k of d:
//   exact  (Jakobsen §4, the sign corrected): k = (L - r) / L, L = |d|;
//   approx (the sqrt-free stick, seed §5.6):  k = (|d|^2 - r^2) / (|d|^2 + r^2);
// then x_a += wa k d and x_b -= wb k d. The article prints the exact form
// with the opposite signs (x1 -= ..., x2 += ...): that doubles the error
// instead of removing it (a stick of rest 1 at length 2 goes to 3);
// tests/test_particles.c proves both. The approximation is one Newton step
// of the square root around r, so with wa + wb = 1 an isolated stick goes to
// L' = 2 r^2 L / (r^2 + L^2) <= r: it never overshoots, and converges
// quadratically near r.
//
// Fixed point (seed §5.1, §5.6): d is clamped to +-2^30 raw per component
// (16384 m; only an exploded state gets near it, and the range check reports
// it), so |d|^2 and r^2 are exact Q32.32 integers that fit int64 (a Q16.16
// square overflows past 181 m and vanishes below 2.8 mm). Particle a's share
// of k is one rounded division, k_a = round(num w_a 2^14 / den) in Q2.30
// (approx: num = |d|^2 - r^2, den = |d|^2 + r^2, both first shifted right
// together until den < 2^32; exact: num = L - r, den = L, L = |d| rounded),
// and a moves round(d_i k_a / 2^30) per component (both roundings half away
// from zero); b likewise with w_b and the opposite sign. Equal weights give
// both particles the same rounded move, so their sum is conserved bit for
// bit (seed §4 item 6). Coincident particles (d = 0) are pushed apart along
// +x by the rest length (as if d = (1 raw, 0, 0), num = -r, den = 1).
#ifndef LS_PARTICLES_DISTANCE_H
#define LS_PARTICLES_DISTANCE_H

#include "particles_internal.h"

#define LS_PCON_DELTA_MAX ((int64_t)1 << 30)

/// The projection is forced inline into each kind's loop (gcc and clang
/// otherwise keep it out of line, a call per constraint).
#if defined(__GNUC__) || defined(__clang__)
#define LS_PCON_INLINE static inline __attribute__((always_inline))
#else
#define LS_PCON_INLINE static inline
#endif

static inline int64_t ls_pcon_clamp_delta_(int64_t d)
{
    return d > LS_PCON_DELTA_MAX    ? LS_PCON_DELTA_MAX
           : d < -LS_PCON_DELTA_MAX ? -LS_PCON_DELTA_MAX
                                    : d;
}

// round(num * w * 2^14 / den), ties away from zero: the fraction num / den
// times a weight w (Q16.16, 0..1), as Q2.30. den > 0; when den >= 2^32 both
// are first shifted right (arithmetically) until den < 2^32. Callers keep
// |num| < 2^32 after the shift (|num| <= den, or exact mode's |L - r| <
// 2^31), so |num * w * 2^14| < 2^62.
static inline int64_t ls_pcon_ratio_w_(int64_t num, int64_t den, ls_fx w)
{
    if (den >= ((int64_t)1 << 32)) {
        int s = 32 - __builtin_clzll((uint64_t)den);
        num >>= s;
        den >>= s;
    }
    int64_t n = num * w * ((int64_t)1 << 14);
    int64_t sign = n >> 63;                          // 0 or -1: no branch on the sign
    return (n + (((den >> 1) ^ sign) - sign)) / den; // n +- den/2, truncated
}

// A particle's move along one axis: d_i * k_w (Q2.30) rounded half away from zero.
static inline int64_t ls_pcon_share_(int64_t d, int64_t kw)
{
    int64_t p = d * kw;
    return (p + 0x1FFFFFFF + (p >= 0)) >> 30;
}

// The exact length |d| rounded to nearest (§4 len) of d2 = |d|^2 < 2^62.
static inline int64_t ls_pcon_length_(int64_t d2)
{
    uint64_t s = (uint64_t)d2;
    uint64_t r = ls_isqrt64(s);
    r += (s - r * r) > r;
    return (int64_t)r;
}

// True when any of the three values lies outside [-2^30, 2^30).
static inline bool ls_pcon_wide_(int64_t a, int64_t b, int64_t c)
{
    const uint64_t bias = (uint64_t)1 << 30;
    return (((uint64_t)a + bias) | ((uint64_t)b + bias) | ((uint64_t)c + bias)) >> 31 != 0;
}

// v + m saturated to Q16.16, three components at once (one rare branch).
static inline void ls_pcon_add3_(ls_vec3 *v, int64_t m0, int64_t m1, int64_t m2)
{
    int64_t r0 = (int64_t)v->x + m0, r1 = (int64_t)v->y + m1, r2 = (int64_t)v->z + m2;
    const uint64_t bias = (uint64_t)1 << 31;
    if ((((uint64_t)r0 + bias) | ((uint64_t)r1 + bias) | ((uint64_t)r2 + bias)) >> 32) {
        r0 = ls_fx_clamp64_(r0);
        r1 = ls_fx_clamp64_(r1);
        r2 = ls_fx_clamp64_(r2);
    }
    v->x = (ls_fx)r0;
    v->y = (ls_fx)r1;
    v->z = (ls_fx)r2;
}

/// Move x_a and x_b toward distance `rest` (0 < rest <= 2^23 raw) by the
/// weights wa, wb; `test` < 0: only when shorter than rest, > 0: only when
/// longer, 0: always (a stick). Returns true when it moved them.
LS_PCON_INLINE bool ls_pcon_project_(ls_vec3 *xa, ls_vec3 *xb, ls_fx rest, ls_fx wa, ls_fx wb,
                                     uint8_t mode, int test)
{
    int64_t d0 = (int64_t)xb->x - xa->x;
    int64_t d1 = (int64_t)xb->y - xa->y;
    int64_t d2 = (int64_t)xb->z - xa->z;
    if (ls_pcon_wide_(d0, d1, d2)) {
        d0 = ls_pcon_clamp_delta_(d0);
        d1 = ls_pcon_clamp_delta_(d1);
        d2 = ls_pcon_clamp_delta_(d2);
    }
    int64_t len2 = d0 * d0 + d1 * d1 + d2 * d2;
    int64_t r2 = (int64_t)rest * rest;
    if ((test < 0 && len2 >= r2) || (test > 0 && len2 <= r2)) {
        return false;
    }
    // num / den is the fraction k of d that a moves toward b and b toward a.
    int64_t num, den;
    if (len2 == 0) {
        d0 = 1; // no direction: push b away from a along +x by the rest length
        num = -(int64_t)rest;
        den = 1;
    } else if (mode == LS_STICK_EXACT) {
        den = ls_pcon_length_(len2);
        num = den - rest;
    } else {
        num = len2 - r2;
        den = len2 + r2;
    }
    int64_t ka = ls_pcon_ratio_w_(num, den, wa);
    int64_t m0 = ls_pcon_share_(d0, ka), m1 = ls_pcon_share_(d1, ka), m2 = ls_pcon_share_(d2, ka);
    if (wa != 0) {
        ls_pcon_add3_(xa, m0, m1, m2);
    }
    if (wb != wa) {
        int64_t kb = ls_pcon_ratio_w_(num, den, wb);
        m0 = ls_pcon_share_(d0, kb);
        m1 = ls_pcon_share_(d1, kb);
        m2 = ls_pcon_share_(d2, kb);
    }
    if (wb != 0) {
        ls_pcon_add3_(xb, -m0, -m1, -m2);
    }
    return true;
}

#endif
