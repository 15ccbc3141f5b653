// SPDX-License-Identifier: MIT
// The division-free stick projection (SPEC.md §25.4 "Sticks in approx
// mode"), the scalar reference of the stick kernels.
//
// Why: the sqrt-free stick of distance.h needs one 64-bit division per
// stick, k = (L2 - r^2) / (L2 + r^2). That division was most of the cost of a
// cloth (a 64 x 64 cloth projects 191 504 sticks a tick) and it has no
// integer SIMD instruction, so the sticks of a batch could not be projected
// eight at a time. Here the division is replaced by what can be precomputed
// per stick (the reciprocal of the rest length, once, when the weights are
// derived) and by two Newton steps of 1/(1 + s), seeded per band of s:
//
//   s = min(|e|^2 / r^2, 15) (Q26) with e = d clamped to +-4 r per
//       component: |e|^2 / 2^2b exact, times q = (2^b / r)^2 (b = bitlen(r)),
//   y = 1/(1 + s) after two Newton steps y <- y (2 - (1 + s) y) from a
//       seed within 1/3 (relative) of it, exact at s = 1,
//   k = (s - 1) y        (the sqrt-free stick's (s - 1)/(s + 1), to 1.2 %)
//
// and x_a += wa k d, x_b -= wb k d as before. Every product has two factors
// of at most 32 bits, every rounding is a shift and every band a compare, so
// stick_avx2.c computes the same integers eight sticks at a time
// (_mm256_mul_epi32 on the even and the odd lanes).
#ifndef LS_PARTICLES_STICK_H
#define LS_PARTICLES_STICK_H

#include "distance.h"

/// Fraction bits of k (s and x = 1 + s have 26, y has 30).
#define LS_STICK_Q 28
/// The largest s (Q26): 15.
#define LS_STICK_S_MAX ((int64_t)15 << 26)

/// round(p / 2^n) half away from zero (1 <= n <= 62, arithmetic shift).
static inline int64_t ls_stick_rhaz_(int64_t p, int n)
{
    return (p + ((int64_t)1 << (n - 1)) - 1 + (p >= 0)) >> n;
}

/// The reciprocal of a rest length r (66..2^23 raw), squared: with b =
/// bitlen(r) (7..24), *sh = 28 - b (4..21) and the result q = round((2^b /
/// r)^2) in Q28, (2^28, 2^30]: m = floor((2^(b+30) + floor(r/2)) / r) (Q30,
/// (2^30, 2^31]), q = (m^2 + 2^31) >> 32. The one division of a stick, done
/// when its weights are derived.
static inline int32_t ls_stick_inv_rest_(ls_fx r, uint8_t *sh)
{
    int b = 32 - __builtin_clz((uint32_t)r);
    int64_t m = (((int64_t)1 << (b + 30)) + r / 2) / r;
    *sh = (uint8_t)(28 - b);
    return (int32_t)((m * m + ((int64_t)1 << 31)) >> 32);
}

/// s (Q26, (L / r)^2 capped at 15) of a stick from its clamped delta e
/// (|e_i| <= 4 r): v = e 2^sh exact (|v_i| < 2^30), V = |v|^2 (Q56 of
/// |e|^2 / 2^2b, exact), w = min((V + 2^29) >> 30, 15 2^26), s = min((w q +
/// 2^27) >> 28, 15 2^26).
static inline int64_t ls_stick_s_(int64_t e0, int64_t e1, int64_t e2, int sh, int64_t q)
{
    int64_t v0 = e0 * ((int64_t)1 << sh), v1 = e1 * ((int64_t)1 << sh);
    int64_t v2 = e2 * ((int64_t)1 << sh);
    int64_t w = (v0 * v0 + v1 * v1 + v2 * v2 + ((int64_t)1 << 29)) >> 30;
    w = w < LS_STICK_S_MAX ? w : LS_STICK_S_MAX;
    int64_t s = (w * q + ((int64_t)1 << 27)) >> 28;
    return s < LS_STICK_S_MAX ? s : LS_STICK_S_MAX;
}

/// Seeds y0 of 1/x (Q30) by the band of x = 1 + s (Q26): x < 4/3: 3/4;
/// < 8/3: 1/2; < 16/3: 1/4; < 32/3: 1/8; else 1/16 (|1 - x y0| <= 1/3).
#define LS_STICK_X1 89478485  ///< 4/3 in Q26, rounded
#define LS_STICK_X2 178956971 ///< 8/3
#define LS_STICK_X3 357913941 ///< 16/3
#define LS_STICK_X4 715827883 ///< 32/3

/// The seed of 1/x (Q30) for x (Q26) in [1, 16].
static inline int64_t ls_stick_seed_(int64_t x)
{
    return x < LS_STICK_X1   ? (int64_t)3 << 28
           : x < LS_STICK_X2 ? (int64_t)1 << 29
           : x < LS_STICK_X3 ? (int64_t)1 << 28
           : x < LS_STICK_X4 ? (int64_t)1 << 27
                             : (int64_t)1 << 26;
}

/// The fraction k (Q28) of d removed by a stick of s (Q26, 0..15 2^26): k =
/// rhaz((s - 1) y, 28) with y two Newton steps toward 1 / (1 + s).
static inline int64_t ls_stick_k_(int64_t s)
{
    int64_t x = s + ((int64_t)1 << 26);
    int64_t y = ls_stick_seed_(x);
    for (int i = 0; i < 2; i++) {
        int64_t t = (x * y + ((int64_t)1 << 25)) >> 26;
        y = (y * (((int64_t)1 << 31) - t) + ((int64_t)1 << 29)) >> 30;
    }
    return ls_stick_rhaz_((s - ((int64_t)1 << 26)) * y, LS_STICK_Q);
}

/// Project one stick (approx mode) with its weights wa, wb (not both 0):
/// the scalar reference, SPEC.md §25.4.
LS_PCON_INLINE void ls_stick_project_one_(ls_vec3 *xa, ls_vec3 *xb, const ls_pcon *c)
{
    int64_t d0 = (int64_t)xb->x - xa->x;
    int64_t d1 = (int64_t)xb->y - xa->y;
    int64_t d2 = (int64_t)xb->z - xa->z;
    if (ls_pcon_wide_(d0, d1, d2)) {
        d0 = ls_pcon_clamp_delta_(d0);
        d1 = ls_pcon_clamp_delta_(d1);
        d2 = ls_pcon_clamp_delta_(d2);
    }
    int64_t lim = (int64_t)c->rest * 4;
    int64_t e0 = d0 > lim ? lim : d0 < -lim ? -lim : d0;
    int64_t e1 = d1 > lim ? lim : d1 < -lim ? -lim : d1;
    int64_t e2 = d2 > lim ? lim : d2 < -lim ? -lim : d2;
    int64_t k = ls_stick_k_(ls_stick_s_(e0, e1, e2, c->ishift, c->inv_rest));
    if ((d0 | d1 | d2) == 0) { // no direction: b pushed away from a along +x by r
        d0 = c->rest;
    }
    int64_t ka = ls_stick_rhaz_(k * c->wa, 16);
    int64_t m0 = ls_stick_rhaz_(d0 * ka, LS_STICK_Q), m1 = ls_stick_rhaz_(d1 * ka, LS_STICK_Q);
    int64_t m2 = ls_stick_rhaz_(d2 * ka, LS_STICK_Q);
    if (c->wa != 0) {
        ls_pcon_add3_(xa, m0, m1, m2);
    }
    if (c->wb != c->wa) { // equal weights: b moves by exactly minus a's move
        int64_t kb = ls_stick_rhaz_(k * c->wb, 16);
        m0 = ls_stick_rhaz_(d0 * kb, LS_STICK_Q);
        m1 = ls_stick_rhaz_(d1 * kb, LS_STICK_Q);
        m2 = ls_stick_rhaz_(d2 * kb, LS_STICK_Q);
    }
    if (c->wb != 0) {
        ls_pcon_add3_(xb, -m0, -m1, -m2);
    }
}

/// The scalar stick kernel: sticks c[0..n) in order, those with a weight.
void ls_stick_project_scalar_(ls_vec3 *x, const ls_pcon *c, uint32_t n);
/// The AVX2 stick kernel (stick_avx2.c): eight sticks at a time, which must
/// share no particle (one batch); the same bits as the scalar one. On
/// targets without AVX2 it is the scalar kernel.
void ls_stick_project_avx2_(ls_vec3 *x, const ls_pcon *c, uint32_t n);
/// True when this build and CPU can run ls_stick_project_avx2_ with AVX2.
bool ls_stick_avx2_supported_(void);

#endif
