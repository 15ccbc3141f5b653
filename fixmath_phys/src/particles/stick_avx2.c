// SPDX-License-Identifier: MIT
// Sticks on x86 AVX2: eight sticks of one batch projected at once, the same
// integers as the scalar reference (stick.h, SPEC.md §25.4).
//
// Why: the sticks are most of a cloth's step, and a batch is a run of sticks
// no two of which share a particle (step.c), so eight consecutive ones can be
// projected side by side. Each lane holds one stick (structure of arrays:
// one register per field, filled from the sticks and gathered from the
// positions); the products are exact 64-bit ones on the even and the odd
// lanes (lanes_avx2.h), every rounding is the scalar one. Two cases are left
// to the scalar code for the whole group before anything is stored: a
// position component beyond +-2^29 raw (8192 m, only an exploded state gets
// there: the scalar code clamps d and saturates the sum, which the lanes do
// not), and a tail of fewer than eight sticks. The groups of a batch do not
// interact, so their order, or which path takes a group, cannot change a bit.
#include "stick.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))

#include "../dynamics/lanes_avx2.h"

#include <stddef.h>

// group8 reads the first eight 32-bit words of a stick as one register.
_Static_assert(offsetof(ls_pcon, ishift) == 3 && offsetof(ls_pcon, a) == 4 &&
                   offsetof(ls_pcon, b) == 8 && offsetof(ls_pcon, rest) == 12 &&
                   offsetof(ls_pcon, wa) == 16 && offsetof(ls_pcon, wb) == 20 &&
                   offsetof(ls_pcon, inv_rest) == 24 && sizeof(ls_pcon) >= 32,
               "ls_pcon layout");

// Every fixed loop of a group is unrolled: its arrays then live in registers.
#define UNROLL _Pragma("GCC unroll 8")

// round(p / 2^n) half away from zero of exact 64-bit lanes, narrowed to 32
// bits (the callers' results fit: n <= 32, so the low word of the logical
// shift is that of the arithmetic one).
AVX2 V rhaz8(W p, int n)
{
    const V zero = _mm256_setzero_si256();
    const V h = _mm256_set1_epi64x((long long)1 << (n - 1));
    V e = _mm256_add_epi64(_mm256_add_epi64(p.e, h), _mm256_cmpgt_epi64(zero, p.e));
    V o = _mm256_add_epi64(_mm256_add_epi64(p.o, h), _mm256_cmpgt_epi64(zero, p.o));
    e = _mm256_srl_epi64(e, _mm_cvtsi32_si128(n));
    o = _mm256_sll_epi64(o, _mm_cvtsi32_si128(32 - n));
    return _mm256_blend_epi32(e, o, 0xAA);
}

// round(p / 2^n) half up of exact non-negative 64-bit lanes, narrowed to 32
// bits (the low word: exact for results below 2^32).
AVX2 V rnd8(W p, int n)
{
    const V h = _mm256_set1_epi64x((long long)1 << (n - 1));
    V e = _mm256_srl_epi64(_mm256_add_epi64(p.e, h), _mm_cvtsi32_si128(n));
    V o = _mm256_sll_epi64(_mm256_add_epi64(p.o, h), _mm_cvtsi32_si128(32 - n));
    return _mm256_blend_epi32(e, o, 0xAA);
}

/// Most groups projected side by side: their dependency chains (gather,
/// products, Newton steps, store: some 120 cycles) interleave, which one
/// group's cannot.
#define GROUPS 4

/// G(stmt): stmt for every group g < ng.
#define G(stmt)                                                                                    \
    UNROLL for (int g = 0; g < ng; g++)                                                            \
    {                                                                                              \
        stmt;                                                                                      \
    }

// Project sticks c[0..8 ng) (no two share a particle; ng <= GROUPS, a
// constant where inlined). Returns a bit per group that must be left to the
// scalar reference (nothing of it is stored).
AVX2 unsigned groups_of8(ls_vec3 *x, const ls_pcon *c, const int ng)
{
    // The first 32 bytes of each stick, transposed: one register per field.
    V f[GROUPS][8];
    G(UNROLL for (int l = 0; l < 8; l++) {
        f[g][l] = _mm256_loadu_si256((const __m256i *)(const void *)&c[8 * g + l]);
    })
    G(transpose8(f[g]))
    int32_t ia[GROUPS][8], ib[GROUPS][8];
    G(st(ia[g], f[g][1]))
    G(st(ib[g], f[g][2]))
    bool equal = true;
    G(equal &= _mm256_movemask_epi8(_mm256_cmpeq_epi32(f[g][4], f[g][5])) == -1)
    const int *base = (const int *)(const void *)x;
    V via[GROUPS], vib[GROUPS];
    G(via[g] = _mm256_add_epi32(_mm256_add_epi32(f[g][1], f[g][1]), f[g][1])) // int32 offsets
    G(vib[g] = _mm256_add_epi32(_mm256_add_epi32(f[g][2], f[g][2]), f[g][2]))
    V xa[GROUPS][3], xb[GROUPS][3], d[GROUPS][3], chk[GROUPS];
    const V bias = splat(1 << 29);
    G(UNROLL for (int k = 0; k < 3; k++) {
        xa[g][k] = _mm256_i32gather_epi32(base + k, via[g], 4);
        xb[g][k] = _mm256_i32gather_epi32(base + k, vib[g], 4);
    })
    // Every component in [-2^29, 2^29): the bias moves it into [0, 2^30).
    unsigned scalar = 0;
    G(chk[g] = _mm256_or_si256(_mm256_add_epi32(xa[g][0], bias), _mm256_add_epi32(xb[g][0], bias));
      chk[g] = _mm256_or_si256(chk[g], _mm256_add_epi32(xa[g][1], bias));
      chk[g] = _mm256_or_si256(chk[g], _mm256_add_epi32(xb[g][1], bias));
      chk[g] = _mm256_or_si256(chk[g], _mm256_add_epi32(xa[g][2], bias));
      chk[g] = _mm256_or_si256(chk[g], _mm256_add_epi32(xb[g][2], bias));
      scalar |= (unsigned)!all_zero(_mm256_and_si256(chk[g], splat((int32_t)0xC0000000u))) << g)
    V lim[GROUPS], nlim[GROUPS];
    G(lim[g] = _mm256_slli_epi32(f[g][3], 2))
    G(nlim[g] = _mm256_sub_epi32(_mm256_setzero_si256(), lim[g]))
    P pv[GROUPS][3];
    G(UNROLL for (int k = 0; k < 3; k++) {
        d[g][k] = _mm256_sub_epi32(xb[g][k], xa[g][k]);
        V e = _mm256_min_epi32(_mm256_max_epi32(d[g][k], nlim[g]), lim[g]);
        pv[g][k] = prep(_mm256_sllv_epi32(e, _mm256_srli_epi32(f[g][0], 24))); // by ishift
    })
    // s = min((min(rnd(|v|^2, 30), 15) q + 2^27) >> 28, 15) in Q26 (both < 2^32: unsigned min).
    const V smax = splat((int32_t)LS_STICK_S_MAX);
    V w26[GROUPS], s26[GROUPS], vx[GROUPS], y[GROUPS];
    P px[GROUPS];
    G(w26[g] = _mm256_min_epu32(
          rnd8(dot3p(pv[g][0], pv[g][1], pv[g][2], pv[g][0], pv[g][1], pv[g][2]), 30), smax))
    G(s26[g] = _mm256_min_epu32(rnd8(mulp(prep(w26[g]), prep(f[g][6])), 28), smax))
    G(vx[g] = _mm256_add_epi32(s26[g], splat(1 << 26)))
    G(y[g] = _mm256_blendv_epi8(splat(1 << 26), splat(1 << 27),
                                _mm256_cmpgt_epi32(splat(LS_STICK_X4), vx[g])))
    G(y[g] =
          _mm256_blendv_epi8(y[g], splat(1 << 28), _mm256_cmpgt_epi32(splat(LS_STICK_X3), vx[g])))
    G(y[g] =
          _mm256_blendv_epi8(y[g], splat(1 << 29), _mm256_cmpgt_epi32(splat(LS_STICK_X2), vx[g])))
    G(y[g] =
          _mm256_blendv_epi8(y[g], splat(3 << 28), _mm256_cmpgt_epi32(splat(LS_STICK_X1), vx[g])))
    G(px[g] = prep(vx[g]))
    UNROLL
    for (int i = 0; i < 2; i++) {
        P py[GROUPS];
        V t[GROUPS];
        G(py[g] = prep(y[g]))
        G(t[g] = rnd8(mulp(px[g], py[g]), 26))
        G(y[g] = rnd8(mulp(py[g], prep(_mm256_sub_epi32(splat(INT32_MIN), t[g]))), 30))
    }
    P pk[GROUPS], ka[GROUPS];
    G(pk[g] =
          prep(rhaz8(mulp(prep(_mm256_sub_epi32(s26[g], splat(1 << 26))), prep(y[g])), LS_STICK_Q)))
    // No direction: d = (r, 0, 0) (b pushed away from a along +x by r).
    G(d[g][0] = _mm256_blendv_epi8(
          d[g][0], f[g][3],
          _mm256_cmpeq_epi32(_mm256_or_si256(_mm256_or_si256(d[g][0], d[g][1]), d[g][2]),
                             _mm256_setzero_si256())))
    G(ka[g] = prep(rhaz8(mulp(pk[g], prep(f[g][4])), 16)))
    V r[GROUPS][8];
    G(UNROLL for (int i = 0; i < 3; i++) {
        V ma = rhaz8(mulp(prep(d[g][i]), ka[g]), LS_STICK_Q);
        r[g][i] = _mm256_add_epi32(xa[g][i], ma);
        r[g][4 + i] = _mm256_sub_epi32(xb[g][i], ma); // b's move when wa = wb
    })
    if (!equal) {
        UNROLL
        for (int g = 0; g < ng; g++) {
            P kb = prep(rhaz8(mulp(pk[g], prep(f[g][5])), 16));
            UNROLL
            for (int i = 0; i < 3; i++) {
                V mb = rhaz8(mulp(prep(d[g][i]), kb), LS_STICK_Q);
                r[g][4 + i] = _mm256_sub_epi32(xb[g][i], mb);
            }
        }
    }
    // Back to one row per stick: x_a in the low half, x_b in the high half.
    G(r[g][3] = r[g][7] = _mm256_setzero_si256())
    G(transpose8(r[g]))
    const __m128i m3 = _mm_setr_epi32(-1, -1, -1, 0);
    UNROLL
    for (int g = 0; g < ng; g++) {
        if (scalar >> g & 1) {
            continue;
        }
        UNROLL
        for (int l = 0; l < 8; l++) {
            __m128i pa = _mm256_castsi256_si128(r[g][l]), pb = _mm256_extracti128_si256(r[g][l], 1);
            _mm_maskstore_epi32((int *)(void *)&x[ia[g][l]], m3, pa);
            _mm_maskstore_epi32((int *)(void *)&x[ib[g][l]], m3, pb);
        }
    }
    return scalar;
}

// The groups of c[0..) the lanes left to the scalar reference (bits of scalar).
static void leftovers(ls_vec3 *x, const ls_pcon *c, unsigned scalar)
{
    for (uint32_t g = 0; scalar != 0; g++, scalar >>= 1) {
        if (scalar & 1) {
            ls_stick_project_scalar_(x, c + 8 * g, 8);
        }
    }
}

// Every whole group of c[0..n): GROUPS at a time, then one at a time; returns
// how many sticks were done.
AVX2_FN uint32_t groups8(ls_vec3 *x, const ls_pcon *c, uint32_t n)
{
    uint32_t k = 0;
    for (; k + 8 * GROUPS <= n; k += 8 * GROUPS) {
        leftovers(x, c + k, groups_of8(x, c + k, GROUPS));
    }
    for (; k + 8 <= n; k += 8) {
        leftovers(x, c + k, groups_of8(x, c + k, 1));
    }
    return k;
}

void ls_stick_project_avx2_(ls_vec3 *x, const ls_pcon *c, uint32_t n)
{
    uint32_t k = groups8(x, c, n);
    ls_stick_project_scalar_(x, c + k, n - k);
}

bool ls_stick_avx2_supported_(void)
{
    return __builtin_cpu_supports("avx2");
}

#else

void ls_stick_project_avx2_(ls_vec3 *x, const ls_pcon *c, uint32_t n)
{
    ls_stick_project_scalar_(x, c, n);
}

bool ls_stick_avx2_supported_(void)
{
    return false;
}

#endif
