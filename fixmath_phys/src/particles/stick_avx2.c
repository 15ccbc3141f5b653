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
    const V h = _mm256_set1_epi64x((int64_t)1 << (n - 1));
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
    const V h = _mm256_set1_epi64x((int64_t)1 << (n - 1));
    V e = _mm256_srl_epi64(_mm256_add_epi64(p.e, h), _mm_cvtsi32_si128(n));
    V o = _mm256_sll_epi64(_mm256_add_epi64(p.o, h), _mm_cvtsi32_si128(32 - n));
    return _mm256_blend_epi32(e, o, 0xAA);
}

// Project sticks c[0..8) (no two share a particle); false when the group must
// be left to the scalar reference (nothing stored then).
AVX2 bool group8(ls_vec3 *x, const ls_pcon *c)
{
    // The first 32 bytes of each stick, transposed: one register per field.
    V f[8];
    UNROLL
    for (int l = 0; l < 8; l++) {
        f[l] = _mm256_loadu_si256((const __m256i *)(const void *)&c[l]);
    }
    transpose8(f);
    int32_t ia[8], ib[8];
    st(ia, f[1]);
    st(ib, f[2]);
    V vr = f[3], vwa = f[4], vwb = f[5], vq = f[6];
    bool equal = _mm256_movemask_epi8(_mm256_cmpeq_epi32(vwa, vwb)) == -1;
    V vsh = _mm256_srli_epi32(f[0], 24); // ishift, the fourth byte
    const int *base = (const int *)(const void *)x;
    V via = _mm256_add_epi32(_mm256_add_epi32(f[1], f[1]), f[1]); // int32 offsets of x[a]
    V vib = _mm256_add_epi32(_mm256_add_epi32(f[2], f[2]), f[2]);
    V xa[3], xb[3], d[3];
    V chk = _mm256_setzero_si256();
    const V bias = splat(1 << 29);
    UNROLL
    for (int k = 0; k < 3; k++) {
        xa[k] = _mm256_i32gather_epi32(base + k, via, 4);
        xb[k] = _mm256_i32gather_epi32(base + k, vib, 4);
        chk = _mm256_or_si256(chk, _mm256_add_epi32(xa[k], bias));
        chk = _mm256_or_si256(chk, _mm256_add_epi32(xb[k], bias));
    }
    // Every component in [-2^29, 2^29): the bias moved it into [0, 2^30).
    if (!all_zero(_mm256_and_si256(chk, splat((int32_t)0xC0000000u)))) {
        return false;
    }
    V lim = _mm256_slli_epi32(vr, 2), nlim = _mm256_sub_epi32(_mm256_setzero_si256(), lim);
    P pv[3];
    UNROLL
    for (int k = 0; k < 3; k++) {
        d[k] = _mm256_sub_epi32(xb[k], xa[k]);
        V e = _mm256_min_epi32(_mm256_max_epi32(d[k], nlim), lim);
        pv[k] = prep(_mm256_sllv_epi32(e, vsh));
    }
    // s = min((min(rnd(|v|^2, 30), 15) q + 2^27) >> 28, 15) in Q26 (both < 2^32: unsigned min).
    const V smax = splat((int32_t)LS_STICK_S_MAX);
    V w26 = _mm256_min_epu32(rnd8(dot3p(pv[0], pv[1], pv[2], pv[0], pv[1], pv[2]), 30), smax);
    V s26 = _mm256_min_epu32(rnd8(mulp(prep(w26), prep(vq)), 28), smax);
    V vx = _mm256_add_epi32(s26, splat(1 << 26));
    V y = splat(1 << 26);
    y = _mm256_blendv_epi8(y, splat(1 << 27), _mm256_cmpgt_epi32(splat(LS_STICK_X4), vx));
    y = _mm256_blendv_epi8(y, splat(1 << 28), _mm256_cmpgt_epi32(splat(LS_STICK_X3), vx));
    y = _mm256_blendv_epi8(y, splat(1 << 29), _mm256_cmpgt_epi32(splat(LS_STICK_X2), vx));
    y = _mm256_blendv_epi8(y, splat(3 << 28), _mm256_cmpgt_epi32(splat(LS_STICK_X1), vx));
    P px = prep(vx);
    UNROLL
    for (int i = 0; i < 2; i++) {
        P py = prep(y);
        V t = rnd8(mulp(px, py), 26);
        y = rnd8(mulp(py, prep(_mm256_sub_epi32(splat(INT32_MIN), t))), 30);
    }
    V k = rhaz8(mulp(prep(_mm256_sub_epi32(s26, splat(1 << 26))), prep(y)), LS_STICK_Q);
    // No direction: d = (r, 0, 0) (b pushed away from a along +x by r).
    V zero_d = _mm256_cmpeq_epi32(_mm256_or_si256(_mm256_or_si256(d[0], d[1]), d[2]),
                                  _mm256_setzero_si256());
    d[0] = _mm256_blendv_epi8(d[0], vr, zero_d);
    P pk = prep(k);
    P ka = prep(rhaz8(mulp(pk, prep(vwa)), 16));
    V r[8];
    UNROLL
    for (int i = 0; i < 3; i++) {
        P pd = prep(d[i]);
        V ma = rhaz8(mulp(pd, ka), LS_STICK_Q);
        r[i] = _mm256_add_epi32(xa[i], ma);
        r[4 + i] = xb[i];
        if (equal) { // wa = wb in every lane: b moves by minus a's move
            r[4 + i] = _mm256_sub_epi32(xb[i], ma);
        }
    }
    if (!equal) {
        P kb = prep(rhaz8(mulp(pk, prep(vwb)), 16));
        UNROLL
        for (int i = 0; i < 3; i++) {
            r[4 + i] = _mm256_sub_epi32(xb[i], rhaz8(mulp(prep(d[i]), kb), LS_STICK_Q));
        }
    }
    // Back to one row per stick: x_a in the low half, x_b in the high half.
    r[3] = r[7] = _mm256_setzero_si256();
    transpose8(r);
    const __m128i m3 = _mm_setr_epi32(-1, -1, -1, 0);
    UNROLL
    for (int l = 0; l < 8; l++) {
        _mm_maskstore_epi32((int *)(void *)&x[ia[l]], m3, _mm256_castsi256_si128(r[l]));
        _mm_maskstore_epi32((int *)(void *)&x[ib[l]], m3, _mm256_extracti128_si256(r[l], 1));
    }
    return true;
}

// Every whole group of c[0..n) (group8 inlined: its constants stay loaded).
AVX2_FN uint32_t groups8(ls_vec3 *x, const ls_pcon *c, uint32_t n)
{
    uint32_t k = 0;
    for (; k + 8 <= n; k += 8) {
        if (!group8(x, c + k)) {
            ls_stick_project_scalar_(x, c + k, 8);
        }
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
