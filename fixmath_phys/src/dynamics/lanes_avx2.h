// SPDX-License-Identifier: MIT
// AVX2 arithmetic of the wide sweeps (lane_math.h), shared by the contact and
// joint kernels: eight 32-bit lanes per register, exact 64-bit products on the
// even and the odd lanes, rounding and range checks exactly as the scalar
// reference, and the gather/scatter of body states. Include only from files
// built for x86 (every function carries the AVX2 target attribute).
#ifndef LS_DYNAMICS_LANES_AVX2_H
#define LS_DYNAMICS_LANES_AVX2_H

#include "lane_math.h"
#include "solver_body.h"

#include <immintrin.h>

#if defined(LS_LANES_512)
// The same sweeps on x86 AVX-512 (F, VL, DQ, BW; contact_avx512.c): the
// eight 32-bit lanes stay in 256-bit registers, and the exact 64-bit domain
// (products, their sums, the rounding) holds all eight lanes in one 512-bit
// register instead of two 256-bit ones (even and odd lanes), with arithmetic
// 64-bit shifts and a narrowing move; the 32 vector registers keep a group's
// bodies out of memory. The integers are the same.
#define AVX2                                                                                       \
    __attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw"), always_inline)) static inline
#define AVX2_FN __attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw"))) static
#else
#define AVX2    __attribute__((target("avx2"), always_inline)) static inline
#define AVX2_FN __attribute__((target("avx2"))) static
#endif

typedef __m256i V;

#if defined(LS_LANES_512)
/// A value in the exact 64-bit domain: the eight lanes, sign-extended.
typedef struct W {
    __m512i q;
} W;

/// An operand prepared for products: the eight lanes, sign-extended.
typedef struct P {
    __m512i q;
} P;
#else
/// A value in the exact 64-bit domain: even lanes (0, 2, 4, 6) and odd lanes.
typedef struct W {
    V e, o;
} W;

/// An operand prepared for products: the lanes and the odd lanes moved down.
typedef struct P {
    V e, o;
} P;
#endif

AVX2 V ld(const int32_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

AVX2 void st(int32_t *p, V v)
{
    _mm256_storeu_si256((__m256i *)(void *)p, v);
}

AVX2 V splat(int32_t x)
{
    return _mm256_set1_epi32(x);
}

#if defined(LS_LANES_512)
AVX2 P prep(V a)
{
    P p = {_mm512_cvtepi32_epi64(a)};
    return p;
}

AVX2 W mulp(P a, P b)
{
    W r = {_mm512_mul_epi32(a.q, b.q)};
    return r;
}

AVX2 W addw(W a, W b)
{
    W r = {_mm512_add_epi64(a.q, b.q)};
    return r;
}

AVX2 W subw(W a, W b)
{
    W r = {_mm512_sub_epi64(a.q, b.q)};
    return r;
}

/// The lanes of p as eight 32-bit lanes.
AVX2 V unprep(P p)
{
    return _mm512_cvtepi64_epi32(p.q);
}
#else
AVX2 P prep(V a)
{
    P p = {a, _mm256_srli_epi64(a, 32)};
    return p;
}

AVX2 W mulp(P a, P b)
{
    W r = {_mm256_mul_epi32(a.e, b.e), _mm256_mul_epi32(a.o, b.o)};
    return r;
}

AVX2 W addw(W a, W b)
{
    W r = {_mm256_add_epi64(a.e, b.e), _mm256_add_epi64(a.o, b.o)};
    return r;
}

AVX2 W subw(W a, W b)
{
    W r = {_mm256_sub_epi64(a.e, b.e), _mm256_sub_epi64(a.o, b.o)};
    return r;
}

/// The lanes of p as eight 32-bit lanes.
AVX2 V unprep(P p)
{
    return p.e;
}
#endif

AVX2 W dot3p(P ax, P ay, P az, P bx, P by, P bz)
{
    return addw(addw(mulp(ax, bx), mulp(ay, by)), mulp(az, bz));
}

/// The sticky range check of a group. A value is in the solver range when a
/// biased sum of it has no bit at or above some position: bit 31 of a 32-bit
/// lane for a sum (chk32), bit 31 + s of a 64-bit lane for a product rounded
/// by s bits (NAR). Why the sums are kept apart by that position: or-ing the
/// biased sums and shifting once when the group is judged (k_bad) is the same
/// test as shifting each, and it takes two instructions off every rounding of
/// the sweeps (the rounding is most of their work). `bad` holds tests already
/// reduced to "nonzero means out of range".
#if defined(LS_LANES_512)
typedef struct K {
    V c32, bad32;               ///< 32-bit sums; tests reduced to "nonzero: out of range"
    __m512i c16, c20, c22, bad; ///< biased 64-bit roundings by 16, 20, 22 bits; reduced tests
} K;

AVX2 K k_zero(void)
{
    const V z = _mm256_setzero_si256();
    const __m512i zq = _mm512_setzero_si512();
    K k = {z, z, zq, zq, zq, zq};
    return k;
}

/// Some value of the group left the solver range (or would have saturated).
AVX2 bool k_bad(const K *k)
{
    V x = _mm256_or_si256(k->bad32, _mm256_srli_epi32(k->c32, 31));
    __m512i q = _mm512_or_si512(k->bad, _mm512_srli_epi64(k->c16, 31 + 16));
    q = _mm512_or_si512(q, _mm512_srli_epi64(k->c20, 31 + 20));
    q = _mm512_or_si512(q, _mm512_srli_epi64(k->c22, 31 + 22));
    return _mm256_testz_si256(x, x) == 0 || _mm512_test_epi64_mask(q, q) != 0;
}

// rnd(x, S) as eight 32-bit lanes, checking it lies in the solver range:
// x + 2^(S-1) + 2^(30+S) must lie in [0, 2^(31+S)).
#define NAR(x, S, chk) nar_((x), S, &(chk))
AVX2 V nar_(W x, int s, K *k)
{
    const __m512i r = _mm512_set1_epi64((long long)((int64_t)1 << (s - 1)));
    const __m512i c = _mm512_set1_epi64((long long)((int64_t)1 << (30 + s)));
    __m512i t = _mm512_add_epi64(x.q, r);
    __m512i biased = _mm512_add_epi64(t, c);
    if (s == 16) {
        k->c16 = _mm512_or_si512(k->c16, biased);
    } else if (s == 20) {
        k->c20 = _mm512_or_si512(k->c20, biased);
    } else if (s == 22) {
        k->c22 = _mm512_or_si512(k->c22, biased);
    } else {
        k->bad = _mm512_or_si512(k->bad, _mm512_srl_epi64(biased, _mm_cvtsi32_si128(31 + s)));
    }
    return _mm512_cvtepi64_epi32(_mm512_sra_epi64(t, _mm_cvtsi32_si128(s)));
}

#else
typedef struct K {
    V c32, c16, c20, c22, bad;
} K;

AVX2 K k_zero(void)
{
    const V z = _mm256_setzero_si256();
    K k = {z, z, z, z, z};
    return k;
}

/// Some value of the group left the solver range (or would have saturated).
AVX2 bool k_bad(const K *k)
{
    V x = _mm256_or_si256(k->bad, _mm256_srli_epi32(k->c32, 31));
    x = _mm256_or_si256(x, _mm256_srli_epi64(k->c16, 31 + 16));
    x = _mm256_or_si256(x, _mm256_srli_epi64(k->c20, 31 + 20));
    x = _mm256_or_si256(x, _mm256_srli_epi64(k->c22, 31 + 22));
    return _mm256_testz_si256(x, x) == 0;
}

// rnd(x, S) as eight 32-bit lanes, checking it lies in the solver range:
// x + 2^(S-1) + 2^(30+S) must lie in [0, 2^(31+S)).
#define NAR(x, S, chk) nar_((x), S, &(chk))
AVX2 V nar_(W x, int s, K *k)
{
    const V r = _mm256_set1_epi64x((long long)((int64_t)1 << (s - 1)));
    const V c = _mm256_set1_epi64x((long long)((int64_t)1 << (30 + s)));
    V te = _mm256_add_epi64(x.e, r), to = _mm256_add_epi64(x.o, r);
    V biased = _mm256_or_si256(_mm256_add_epi64(te, c), _mm256_add_epi64(to, c));
    if (s == 16) {
        k->c16 = _mm256_or_si256(k->c16, biased);
    } else if (s == 20) {
        k->c20 = _mm256_or_si256(k->c20, biased);
    } else if (s == 22) {
        k->c22 = _mm256_or_si256(k->c22, biased);
    } else {
        k->bad = _mm256_or_si256(k->bad, _mm256_srl_epi64(biased, _mm_cvtsi32_si128(31 + s)));
    }
    V e = _mm256_srl_epi64(te, _mm_cvtsi32_si128(s));
    V o = _mm256_sll_epi64(to, _mm_cvtsi32_si128(32 - s));
    return _mm256_blend_epi32(e, o, 0xAA);
}

#endif

// ls_fx_round_q32(x) (ties away from zero, the rounding of the ls_fx
// functions) as eight 32-bit lanes, checked as NAR(x, 16): rnd(x - [x < 0], 16).
#define NARF(x, chk) narf_((x), &(chk))
AVX2 V narf_(W x, K *k)
{
#if defined(LS_LANES_512)
    W y = {_mm512_add_epi64(x.q, _mm512_srai_epi64(x.q, 63))};
#else
    const V z = _mm256_setzero_si256();
    W y = {_mm256_add_epi64(x.e, _mm256_cmpgt_epi64(z, x.e)),
           _mm256_add_epi64(x.o, _mm256_cmpgt_epi64(z, x.o))};
#endif
    return nar_(y, 16, k);
}

// Check a 32-bit sum lies in the solver range.
AVX2 V chk32(V x, K *k)
{
    k->c32 = _mm256_or_si256(k->c32, _mm256_add_epi32(x, splat(1 << 30)));
    return x;
}

// v + rnd(d * m, S) (sign +1) or v - rnd(d * m, S), checked.
AVX2 V upd(V v, P d, V m, int s, int sign, K *chk)
{
    V t = nar_(mulp(d, prep(m)), s, chk);
    V r = sign > 0 ? _mm256_add_epi32(v, t) : _mm256_sub_epi32(v, t);
    return chk32(r, chk);
}

// v +- rnd(d1 * m1 + d2 * m2, S), checked.
AVX2 V upd2(V v, P d1, V m1, P d2, V m2, int s, int sign, K *chk)
{
    V t = nar_(addw(mulp(d1, prep(m1)), mulp(d2, prep(m2))), s, chk);
    V r = sign > 0 ? _mm256_add_epi32(v, t) : _mm256_sub_epi32(v, t);
    return chk32(r, chk);
}

// ---- bodies ------------------------------------------------------------------

typedef struct B {
    V v[3], w[3];
    V flags;
    V dp[3], dq[4];
} B;

// Transpose 8 rows of 8 int32 (in place).
AVX2 void transpose8(V *r)
{
    V t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    V t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    V t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    V t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    V u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    V u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    V u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    V u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    r[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
    r[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
    r[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
    r[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
    r[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
    r[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
    r[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
    r[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

// Velocities (and, with motion, dp and dq) of the bodies of eight lanes.
AVX2 void gather(const ls_solver_body *states, const uint32_t *idx, B *b, bool motion)
{
    V r[8];
    for (int i = 0; i < 8; i++) {
        r[i] = _mm256_load_si256((const __m256i *)(const void *)&states[idx[i]]);
    }
    transpose8(r);
    for (int k = 0; k < 3; k++) {
        b->v[k] = r[k];
        b->w[k] = r[3 + k];
    }
    b->flags = r[6];
    if (!motion) {
        return;
    }
    for (int i = 0; i < 8; i++) {
        r[i] =
            _mm256_load_si256((const __m256i *)(const void *)((const char *)&states[idx[i]] + 32));
    }
    transpose8(r);
    for (int k = 0; k < 3; k++) {
        b->dp[k] = r[k];
    }
    for (int k = 0; k < 4; k++) {
        b->dq[k] = r[3 + k];
    }
}

// Velocities back to the writable bodies of eight lanes.
AVX2 void scatter(ls_solver_body *states, const uint32_t *idx, const B *b)
{
    V r[8] = {b->v[0], b->v[1], b->v[2], b->w[0], b->w[1], b->w[2], b->flags, splat(0)};
    transpose8(r);
    int32_t fl[8];
    st(fl, b->flags);
    for (int i = 0; i < 8; i++) {
        if (fl[i] & LS_STATE_WRITABLE) {
            // Only v and w (the first 24 bytes) change; flags and body stay.
            int32_t row[8];
            st(row, r[i]);
            ls_solver_body *s = &states[idx[i]];
            s->v = ls_vec3_make(row[0], row[1], row[2]);
            s->w = ls_vec3_make(row[3], row[4], row[5]);
        }
    }
}

// rnd(x, 16) of exact 64-bit lanes, as exact 64-bit lanes: AVX2 has no
// arithmetic 64-bit shift, so x + 2^15 is moved to unsigned order (its sign
// bit flipped), shifted logically and moved back (- 2^47): floor division.
AVX2 V rnd16_64(V x)
{
    const V half = _mm256_set1_epi64x((int64_t)1 << 15);
    const V sign = _mm256_set1_epi64x(INT64_MIN);
    const V back = _mm256_set1_epi64x((int64_t)1 << 47);
    V u = _mm256_xor_si256(_mm256_add_epi64(x, half), sign);
    return _mm256_sub_epi64(_mm256_srli_epi64(u, 16), back);
}

AVX2 bool all_zero(V x)
{
    return _mm256_testz_si256(x, x) != 0;
}

// ---- the exact 64-bit domain, lane-wise ----------------------------------------

#if defined(LS_LANES_512)
/// The low 32 bits of each lane.
AVX2 V w_low32(W x)
{
    return _mm512_cvtepi64_epi32(x.q);
}

/// rnd(x, 16), exact.
AVX2 W w_rnd16(W x)
{
    W r = {_mm512_srai_epi64(_mm512_add_epi64(x.q, _mm512_set1_epi64((int64_t)1 << 15)), 16)};
    return r;
}

/// min(max(x, 0), 2^30 - 1) (ls_cap).
AVX2 W w_cap(W x)
{
    const __m512i top = _mm512_set1_epi64((1 << 30) - 1);
    W r = {_mm512_min_epi64(_mm512_max_epi64(x.q, _mm512_setzero_si512()), top)};
    return r;
}

/// x sign-extended.
AVX2 W w_of(V x)
{
    W r = {_mm512_cvtepi32_epi64(x)};
    return r;
}

/// Some lane of a is greater than the same lane of b.
AVX2 bool w_any_gt(W a, W b)
{
    return _mm512_cmpgt_epi64_mask(a.q, b.q) != 0;
}

/// Some lane lies outside [-2^30, 2^30).
AVX2 bool w_any_far(W x)
{
    __m512i t = _mm512_srli_epi64(_mm512_add_epi64(x.q, _mm512_set1_epi64((int64_t)1 << 30)), 31);
    return _mm512_test_epi64_mask(t, t) != 0;
}

/// x (lanes as unsigned 32-bit integers) times 2^s.
AVX2 W w_zext_shl(V x, int s)
{
    W r = {_mm512_sll_epi64(_mm512_cvtepu32_epi64(x), _mm_cvtsi32_si128(s))};
    return r;
}

/// The lanes in lane order.
AVX2 void w_st64(int64_t *out, W x)
{
    _mm512_storeu_si512((void *)out, x.q);
}

/// max(old - rnd(x, 16), 0) for old >= 0, checked below 2^31 (ls_nar_pos).
AVX2 V w_clamp_impulse(V old, W x, K *k)
{
    __m512i n = _mm512_sub_epi64(_mm512_cvtepi32_epi64(old), w_rnd16(x).q);
    n = _mm512_max_epi64(n, _mm512_setzero_si512());
    k->bad = _mm512_or_si512(k->bad, _mm512_srli_epi64(n, 31));
    return _mm512_cvtepi64_epi32(n);
}
#else
AVX2 V w_low32(W x)
{
    return _mm256_blend_epi32(x.e, _mm256_slli_epi64(x.o, 32), 0xAA);
}

AVX2 W w_rnd16(W x)
{
    W r = {rnd16_64(x.e), rnd16_64(x.o)};
    return r;
}

AVX2 V cap64_(V x)
{
    const V zero = _mm256_setzero_si256(), top = _mm256_set1_epi64x((1 << 30) - 1);
    return _mm256_blendv_epi8(_mm256_andnot_si256(_mm256_cmpgt_epi64(zero, x), x), top,
                              _mm256_cmpgt_epi64(x, top));
}

AVX2 W w_cap(W x)
{
    W r = {cap64_(x.e), cap64_(x.o)};
    return r;
}

AVX2 W w_of(V x)
{
    return mulp(prep(x), prep(splat(1)));
}

AVX2 bool w_any_gt(W a, W b)
{
    return !all_zero(_mm256_or_si256(_mm256_cmpgt_epi64(a.e, b.e), _mm256_cmpgt_epi64(a.o, b.o)));
}

AVX2 bool w_any_far(W x)
{
    const V bias = _mm256_set1_epi64x((int64_t)1 << 30);
    V t = _mm256_or_si256(_mm256_srli_epi64(_mm256_add_epi64(x.e, bias), 31),
                          _mm256_srli_epi64(_mm256_add_epi64(x.o, bias), 31));
    return !all_zero(t);
}

AVX2 W w_zext_shl(V x, int s)
{
    const V low = _mm256_set1_epi64x(0xFFFFFFFF);
    const __m128i sh = _mm_cvtsi32_si128(s);
    W r = {_mm256_sll_epi64(_mm256_and_si256(x, low), sh),
           _mm256_sll_epi64(_mm256_srli_epi64(x, 32), sh)};
    return r;
}

AVX2 void w_st64(int64_t *out, W x)
{
    V lo = _mm256_unpacklo_epi64(x.e, x.o), hi = _mm256_unpackhi_epi64(x.e, x.o);
    _mm256_storeu_si256((__m256i *)(void *)out, _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(out + 4), _mm256_permute2x128_si256(lo, hi, 0x31));
}

AVX2 V w_clamp_impulse(V old, W x, K *k)
{
    // old is >= 0, so its zero-extension is exact.
    const V zero = _mm256_setzero_si256();
    V old_e = _mm256_and_si256(old, _mm256_set1_epi64x(0xFFFFFFFF));
    V old_o = _mm256_srli_epi64(old, 32);
    V ne = _mm256_sub_epi64(old_e, rnd16_64(x.e)), no = _mm256_sub_epi64(old_o, rnd16_64(x.o));
    // Negative: 0 (sign bit set). Above INT32_MAX: a lane that would saturate.
    ne = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, ne), ne);
    no = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, no), no);
    k->bad = _mm256_or_si256(k->bad,
                             _mm256_or_si256(_mm256_srli_epi64(ne, 31), _mm256_srli_epi64(no, 31)));
    return _mm256_blend_epi32(ne, _mm256_slli_epi64(no, 32), 0xAA);
}
#endif

/// cap(rnd(x, 16)) as eight 32-bit lanes.
AVX2 V w_cap_rnd16(W x)
{
    return w_low32(w_cap(w_rnd16(x)));
}

#endif
