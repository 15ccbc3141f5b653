// SPDX-License-Identifier: MIT
// The gyroscopic rotation of four bodies at once on x86 AVX2 (rotate.h): the
// integers of the scalar reference (solver.c ls_rotate_gyro_), one body per
// 64-bit lane. Every step below is one of the scalar code's short paths,
// taken only where the scalar code takes it or where it gives the same bits:
//
// - the rotation integration (integrate_q): |w h| below 2^31 (one 32-bit
//   product per term), its four Q28 components below 2^30, the square root
//   (ls_isqrt64_near56_) and the reciprocal (ls_recip60_near28_) in their
//   fast ranges, each ending with the exactness test that proves it;
// - a matrix times a vector within +-2^30 (mat_vec, mat_tvec) whose rounded
//   components fit 32 bits (no clamp acts);
// - sums of two values that fit 32 bits (no saturation acts);
// - quaternions within +-2^17 (ls_mat3_from_quat, ls_joint_quat_mul_);
// - the energy guard not cutting.
//
// A lane outside any of these is marked and left to the scalar reference,
// which computes it from the same, untouched inputs. Arithmetic: products of
// two values that fit 32 bits are exact (vpmuldq); AVX2 has no arithmetic
// 64-bit shift, so sra64 moves to unsigned order, shifts and moves back.
#include "rotate.h"

#if defined(LS_LANES_512)
#define NL    8 // bodies per call
#define ENTRY ls_rotate_gyro8_avx512_
#else
#define NL    4
#define ENTRY ls_rotate_gyro4_avx2_
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#if defined(LS_LANES_512)
// The same integers eight bodies at once in 512-bit registers (AVX-512 F and
// DQ: arithmetic 64-bit shifts, compares into masks).
#define R4    __attribute__((target("avx2,avx512f,avx512vl,avx512dq"), always_inline)) static inline
#define R4_FN __attribute__((target("avx2,avx512f,avx512vl,avx512dq"))) static
typedef __m512i Q; // eight signed 64-bit lanes
#define X_SET1(x)   _mm512_set1_epi64(x)
#define X(op)       _mm512_##op##_epi64
#define X_MUL(s)    _mm512_mul_ep##s##32
#define X_BIT(op)   _mm512_##op##_si512
#define X_SRA(x, c) _mm512_sra_epi64(x, c)
#else
#define R4        __attribute__((target("avx2"), always_inline)) static inline
#define R4_FN     __attribute__((target("avx2"))) static
typedef __m256i Q; // four signed 64-bit lanes
#define X_SET1(x) _mm256_set1_epi64x(x)
#define X(op)     _mm256_##op##_epi64
#define X_MUL(s)  _mm256_mul_ep##s##32
#define X_BIT(op) _mm256_##op##_si256
// x >> n, arithmetic, without the instruction: moved to unsigned order,
// shifted logically and moved back (floor division by 2^n).
#define X_SRA(x, c)                                                                                \
    _mm256_sub_epi64(_mm256_srl_epi64(_mm256_xor_si256(x, _mm256_set1_epi64x(INT64_MIN)), c),      \
                     _mm256_srl_epi64(_mm256_set1_epi64x(INT64_MIN), c))
#endif

R4 Q k64(int64_t x)
{
    return X_SET1(x);
}

// The lane-wise operations: add, sub; mul (a * b for lanes that fit 32 bits,
// signed, exact), mulu (lanes below 2^32, unsigned); or_, and_, xor_; sra
// (x >> n, arithmetic: floor division by 2^n), srl (logical), sll (x << n).
#define LANE_OP(name, op)                                                                          \
    R4 Q name(Q a, Q b)                                                                            \
    {                                                                                              \
        return op(a, b);                                                                           \
    }
#define LANE_SHIFT(name, op)                                                                       \
    R4 Q name(Q x, int n)                                                                          \
    {                                                                                              \
        return op(x, _mm_cvtsi32_si128(n));                                                        \
    }
LANE_OP(add, X(add))
LANE_OP(sub, X(sub))
LANE_OP(mul, X_MUL(i))
LANE_OP(mulu, X_MUL(u))
LANE_OP(or_, X_BIT(or))
LANE_OP(and_, X_BIT(and))
LANE_OP(xor_, X_BIT(xor))
LANE_SHIFT(sra, X_SRA)
LANE_SHIFT(srl, X(srl))
LANE_SHIFT(sll, X(sll))

#if defined(LS_LANES_512)
// All ones where a > b.
R4 Q gt(Q a, Q b)
{
    return _mm512_movm_epi64(_mm512_cmpgt_epi64_mask(a, b));
}

// b where m (all ones), else a.
R4 Q sel_(Q a, Q b, Q m)
{
    return _mm512_mask_blend_epi64(_mm512_movepi64_mask(m), a, b);
}

R4 bool none_(Q x)
{
    return _mm512_test_epi64_mask(x, x) == 0;
}
#else
R4 Q gt(Q a, Q b)
{
    return _mm256_cmpgt_epi64(a, b);
}

R4 Q sel_(Q a, Q b, Q m)
{
    return _mm256_blendv_epi8(a, b, m);
}

R4 bool none_(Q x)
{
    return _mm256_testz_si256(x, x) != 0;
}
#endif

R4 void store_(int64_t *p, Q x)
{
    memcpy(p, &x, sizeof x);
}

R4 Q load_(const int64_t *p)
{
    Q x;
    memcpy(&x, p, sizeof x);
    return x;
}

// Nonzero where x lies outside [-2^(bits-1), 2^(bits-1)).
R4 Q outside(Q x, int bits)
{
    return srl(add(x, k64((int64_t)1 << (bits - 1))), bits);
}

// ls_fx_round_q32: (p + 2^15 - [p < 0]) >> 16.
R4 Q round_q32(Q p)
{
    return sra(add(add(p, k64(0x8000)), gt(k64(0), p)), 16);
}

// Nonzero where a vector within +-2^30 (ls_vec3_magnitude_bits < 2^30) is not.
R4 Q not_small30(const Q *v)
{
    return or_(or_(outside(v[0], 31), outside(v[1], 31)), outside(v[2], 31));
}

// Rows of m (9 lanes: row-major) or, with `cols`, its columns, times v: the
// scalar row_dot (mat_vec, mat_tvec) for v within +-2^30, each component
// rounded once; a component that would need the clamp marks *bad.
R4 void mat_vec(const Q *m, const Q *v, Q *out, bool cols, Q *bad)
{
    *bad = or_(*bad, not_small30(v));
    for (int i = 0; i < 3; i++) {
        Q a0 = cols ? m[i] : m[3 * i], a1 = cols ? m[3 + i] : m[3 * i + 1],
          a2 = cols ? m[6 + i] : m[3 * i + 2];
        Q s = add(add(mul(a0, v[0]), mul(a1, v[1])), mul(a2, v[2]));
        out[i] = round_q32(s);
        *bad = or_(*bad, outside(out[i], 32));
    }
}

// ls_mat3_from_quat for quaternions within +-2^17 (its short path).
R4 void mat_of(const Q *q, Q *m, Q *bad)
{
    for (int k = 0; k < 4; k++) {
        *bad = or_(*bad, outside(q[k], 18));
    }
    Q x = q[0], y = q[1], z = q[2], w = q[3];
    Q xx = mul(x, x), yy = mul(y, y), zz = mul(z, z);
    Q xy = mul(x, y), xz = mul(x, z), yz = mul(y, z);
    Q wx = mul(w, x), wy = mul(w, y), wz = mul(w, z);
    const Q one = k64((int64_t)1 << 32);
    m[0] = round_q32(sub(one, sll(add(yy, zz), 1)));
    m[1] = round_q32(sll(sub(xy, wz), 1));
    m[2] = round_q32(sll(add(xz, wy), 1));
    m[3] = round_q32(sll(add(xy, wz), 1));
    m[4] = round_q32(sub(one, sll(add(xx, zz), 1)));
    m[5] = round_q32(sll(sub(yz, wx), 1));
    m[6] = round_q32(sll(sub(xz, wy), 1));
    m[7] = round_q32(sll(add(yz, wx), 1));
    m[8] = round_q32(sub(one, sll(add(xx, yy), 1)));
}

// The rotation integration (solver.c integrate_q) of q by w over h, on the
// fast paths of its square root and reciprocal.
R4 void integrate_q(const Q *q, const Q *w_in, Q h, Q *out, Q *bad)
{
    const Q lim = k64((int64_t)128 << 16), nlim = k64(-((int64_t)128 << 16));
    Q t[3];
    for (int k = 0; k < 3; k++) {
        Q w = sel_(w_in[k], lim, gt(w_in[k], lim));
        w = sel_(w, nlim, gt(nlim, w));
        t[k] = mul(w, h); // w within 2^23, h 32 bits: exact
        *bad = or_(*bad, outside(t[k], 32));
    }
    Q c[4];
    c[0] =
        sra(add(sra(sub(add(mul(t[0], q[3]), mul(t[1], q[2])), mul(t[2], q[1])), 1), sll(q[0], 32)),
            20);
    c[1] =
        sra(add(sra(sub(add(mul(t[1], q[3]), mul(t[2], q[0])), mul(t[0], q[2])), 1), sll(q[1], 32)),
            20);
    c[2] =
        sra(add(sra(sub(add(mul(t[2], q[3]), mul(t[0], q[1])), mul(t[1], q[0])), 1), sll(q[2], 32)),
            20);
    Q dot = add(add(mul(t[0], q[0]), mul(t[1], q[1])), mul(t[2], q[2]));
    c[3] = sra(add(sra(sub(k64(0), dot), 1), sll(q[3], 32)), 20);
    Q sum = k64(0);
    for (int k = 0; k < 4; k++) {
        *bad = or_(*bad, outside(c[k], 31)); // within 2^30: squares below 2^60
        sum = add(sum, mul(c[k], c[k]));
    }
    // floor(sqrt(sum)) near 2^56 (ls_isqrt64_near56_): d within 2^44.
    Q d = sub(sum, k64((int64_t)1 << 56));
    Q u = add(d, k64((int64_t)1 << 44));
    Q far = or_(gt(k64(1), u), srl(u, 45));
    Q x = add(k64((int64_t)1 << 28), sra(d, 29));
    x = and_(x, k64(0xFFFFFFFF)); // a far lane may hold anything: keep it small
    for (int i = 0; i < 3; i++) {
        x = add(x, gt(mulu(x, x), sum)); // x - 1 where x^2 > s
    }
    for (int i = 0; i < 3; i++) {
        Q y = add(x, k64(1));
        x = sub(x, xor_(gt(mulu(y, y), sum), k64(-1))); // x + 1 where (x+1)^2 <= s
    }
    Q y = add(x, k64(1));
    far = or_(far, or_(gt(mulu(x, x), sum), xor_(gt(mulu(y, y), sum), k64(-1))));
    Q len = x;
    // floor(2^60 / len) near 2^28 (ls_recip60_near28_): e within 2^15.
    Q e = sub(len, k64((int64_t)1 << 28));
    far = or_(far, outside(e, 16)); // the remainder test below proves the rest
    e = and_(e, k64(0x1FFFF));      // keep a far lane small (its result is replaced)
    e = sub(e, and_(gt(e, k64(0xFFFF)), k64(0x20000)));
    Q m = add(sub(k64((int64_t)1 << 32), sll(e, 4)), srl(mul(e, e), 24));
    Q m_lo = and_(m, k64(0xFFFFFFFF)), m_hi = srl(m, 32);
    Q r = sub(k64((int64_t)1 << 60), add(mulu(m_lo, len), sll(mulu(m_hi, len), 32)));
    for (int i = 0; i < 2; i++) {
        Q neg = gt(k64(0), r);
        m = add(m, neg);
        r = add(r, and_(neg, len));
    }
    for (int i = 0; i < 2; i++) {
        Q ge = xor_(gt(len, r), k64(-1));
        m = sub(m, ge);
        r = sub(r, and_(ge, len));
    }
    far = or_(far, or_(gt(k64(0), r), xor_(gt(len, r), k64(-1))));
    if (!none_(far)) {
        // A fast turn or a quaternion far from unit length: those lanes' root
        // and reciprocal by the scalar functions (ls_isqrt64, the division),
        // whose values the two fast paths reproduce where they apply.
        int64_t fl[NL], sl[NL], ll[NL], ml[NL], zero[NL];
        store_(fl, far);
        store_(sl, sum);
        store_(ll, len);
        store_(ml, m);
        for (int l = 0; l < NL; l++) {
            zero[l] = 0;
            if (fl[l] != 0) {
                uint64_t root = ls_isqrt64((uint64_t)sl[l]);
                ll[l] = (int64_t)root;
                ml[l] = root != 0 ? (int64_t)(((uint64_t)1 << 60) / root) : 0;
                zero[l] = root == 0 ? -1 : 0; // the identity: the scalar code's
            }
        }
        len = load_(ll);
        m = load_(ml);
        *bad = or_(*bad, load_(zero));
    }
    m_lo = and_(m, k64(0xFFFFFFFF));
    m_hi = srl(m, 32);
    // c 2^16 / len rounded (ls_unit_div_q16_): |c| <= len since sum >= c^2.
    Q b = srl(len, 1);
    Q bm = add(mulu(b, m_lo), sll(mulu(b, m_hi), 32));
    Q bm16 = srl(bm, 16);
    for (int k = 0; k < 4; k++) {
        Q sg = gt(k64(0), c[k]);
        Q a = and_(sub(xor_(c[k], sg), sg), k64(0x7FFFFFFF));
        Q am = add(mulu(a, m_lo), sll(mulu(a, m_hi), 32));
        Q qq = srl(add(am, bm16), 44);
        Q rr = sub(add(sll(a, 16), b), mulu(qq, len));
        qq = sub(qq, xor_(gt(len, rr), k64(-1))); // + 1 where rr >= len
        out[k] = sub(xor_(qq, sg), sg);
    }
}

// gyro_omega (solver.c): rn (wb + M (rtl - lb)), each sum checked.
R4 void gyro_omega(const Q *gm, const Q *rn, const Q *wb, const Q *lb, const Q *rtl, Q *out, Q *bad)
{
    Q dl[3], u[3], v[3];
    for (int k = 0; k < 3; k++) {
        dl[k] = sub(rtl[k], lb[k]);
        *bad = or_(*bad, outside(dl[k], 32));
    }
    mat_vec(gm, dl, u, false, bad);
    for (int k = 0; k < 3; k++) {
        v[k] = add(wb[k], u[k]);
        *bad = or_(*bad, outside(v[k], 32));
    }
    mat_vec(rn, v, out, false, bad);
}

// a . b exactly, for vectors within +-2^30 (ls_vec3_dot_q32 saturates nothing).
R4 Q dot_q32(const Q *a, const Q *b)
{
    return add(add(mul(a[0], b[0]), mul(a[1], b[1])), mul(a[2], b[2]));
}

// ls_fx_round_q32 of the sum of four products (ls_joint_dot4_small_).
R4 Q dot4(Q a0, Q b0, Q a1, Q b1, Q a2, Q b2, Q a3, Q b3)
{
    return round_q32(add(add(mul(a0, b0), mul(a1, b1)), add(mul(a2, b2), mul(a3, b3))));
}

// The 32-bit field at byte offset `off` of each lane's record, sign-extended:
// one gather, the records' distances from the first one as indices.
R4 Q field_(Q dist, const void *first, size_t off)
{
    const int *base = (const int *)(const void *)((const char *)first + off);
#if defined(LS_LANES_512)
    // Two AVX2 gathers of four (the AVX-512 one's mask argument trips
    // -Wsign-conversion in gcc's -O0 macro form).
    __m128i lo = _mm256_i64gather_epi32(base, _mm512_castsi512_si256(dist), 1);
    __m128i hi = _mm256_i64gather_epi32(base, _mm512_extracti64x4_epi64(dist, 1), 1);
    return _mm512_cvtepi32_epi64(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
#else
    return _mm256_cvtepi32_epi64(_mm256_i64gather_epi32(base, dist, 1));
#endif
}

// The records' byte distances from the first one.
R4 Q dists_(const void *const *rec)
{
    int64_t t[NL];
    for (int l = 0; l < NL; l++) {
        t[l] = (const char *)rec[l] - (const char *)rec[0];
    }
    return load_(t);
}

R4_FN uint32_t rotate_n(ls_body *const bo[NL], ls_solver_body *const s[NL], ls_fx h_fx)
{
    const Q db = dists_((const void *const *)bo), ds = dists_((const void *const *)s);
#define L4(f) field_(db, bo[0], offsetof(ls_body, f))
#define S4(f) field_(ds, s[0], offsetof(ls_solver_body, f))
    Q bad = k64(0);
    const Q h = k64(h_fx);
    Q q[4] = {L4(q.x), L4(q.y), L4(q.z), L4(q.w)};
    for (int k = 0; k < 4; k++) {
        bad = or_(bad, outside(q[k], 18)); // integrate_q's bounds hold for these
    }
    Q w[3] = {S4(w.x), S4(w.y), S4(w.z)};
    Q r[9], gi[9], gm[9];
    for (int i = 0; i < 3; i++) {
        r[3 * i] = L4(xf.r.row[i].x), r[3 * i + 1] = L4(xf.r.row[i].y);
        r[3 * i + 2] = L4(xf.r.row[i].z);
        gi[3 * i] = L4(gyro_i.row[i].x), gi[3 * i + 1] = L4(gyro_i.row[i].y);
        gi[3 * i + 2] = L4(gyro_i.row[i].z);
        gm[3 * i] = L4(gyro_m.row[i].x), gm[3 * i + 1] = L4(gyro_m.row[i].y);
        gm[3 * i + 2] = L4(gyro_m.row[i].z);
    }
    Q wb[3], lb[3], lw[3];
    mat_vec(r, w, wb, true, &bad);    // body frame
    mat_vec(gi, wb, lb, false, &bad); // scaled angular momentum
    mat_vec(r, lb, lw, false, &bad);  // world
    Q q1[4], r1[9], rtl1[3], w1[3];
    integrate_q(q, w, h, q1, &bad);
    mat_of(q1, r1, &bad);
    mat_vec(r1, lw, rtl1, true, &bad);
    gyro_omega(gm, r1, wb, lb, rtl1, w1, &bad);
    Q wm[3];
    for (int k = 0; k < 3; k++) {
        Q sum = add(w[k], w1[k]); // ls_fx_add, then C's division by 2 (toward zero)
        bad = or_(bad, outside(sum, 32));
        wm[k] = sra(sub(sum, gt(k64(0), sum)), 1);
    }
    Q qn[4], rn[9], rtl[3], w2[3], wb2[3];
    integrate_q(q, wm, h, qn, &bad);
    mat_of(qn, rn, &bad);
    mat_vec(rn, lw, rtl, true, &bad);
    gyro_omega(gm, rn, wb, lb, rtl, w2, &bad);
    // Energy guard: a lane it would cut is the scalar code's.
    bad = or_(bad, not_small30(wb));
    bad = or_(bad, not_small30(lb));
    bad = or_(bad, not_small30(rtl));
    mat_vec(rn, w2, wb2, true, &bad);
    bad = or_(bad, not_small30(wb2));
    Q e0 = dot_q32(wb, lb), e1 = dot_q32(wb2, rtl);
    bad = or_(bad, and_(gt(e0, k64(0)), gt(sub(e1, e0), sra(e0, 10))));
    // dq = qn conj(q0) (ls_joint_quat_mul_'s short path).
    Q q0[4] = {L4(q0.x), L4(q0.y), L4(q0.z), L4(q0.w)};
    for (int k = 0; k < 3; k++) {
        bad = or_(bad, outside(sub(q0[k], k64(1)), 18)); // -q0 within [-2^17, 2^17)
    }
    bad = or_(bad, outside(q0[3], 18));
    Q bx = sub(k64(0), q0[0]), by = sub(k64(0), q0[1]), bz = sub(k64(0), q0[2]), bw = q0[3];
    Q ax = qn[0], ay = qn[1], az = qn[2], aw = qn[3];
    Q dq[4] = {dot4(aw, bx, ax, bw, ay, bz, az, sub(k64(0), by)),
               dot4(aw, by, ay, bw, az, bx, ax, sub(k64(0), bz)),
               dot4(aw, bz, az, bw, ax, by, ay, sub(k64(0), bx)),
               dot4(aw, bw, ax, sub(k64(0), bx), ay, sub(k64(0), by), az, sub(k64(0), bz))};
#undef L4
#undef S4
    int64_t badl[NL], o_q[4][NL], o_r[9][NL], o_w[3][NL], o_dq[4][NL];
    store_(badl, bad);
    for (int k = 0; k < 4; k++) {
        store_(o_q[k], qn[k]);
        store_(o_dq[k], dq[k]);
    }
    for (int k = 0; k < 9; k++) {
        store_(o_r[k], rn[k]);
    }
    for (int k = 0; k < 3; k++) {
        store_(o_w[k], w2[k]);
    }
    uint32_t done = 0;
    for (int l = 0; l < NL; l++) {
        if (badl[l] != 0) {
            continue;
        }
        ls_body *b = bo[l];
        b->q = ls_quat_make((ls_fx)o_q[0][l], (ls_fx)o_q[1][l], (ls_fx)o_q[2][l], (ls_fx)o_q[3][l]);
        for (int i = 0; i < 3; i++) {
            b->xf.r.row[i] = ls_vec3_make((ls_fx)o_r[3 * i][l], (ls_fx)o_r[3 * i + 1][l],
                                          (ls_fx)o_r[3 * i + 2][l]);
        }
        s[l]->w = ls_vec3_make((ls_fx)o_w[0][l], (ls_fx)o_w[1][l], (ls_fx)o_w[2][l]);
        s[l]->dq = ls_quat_make((ls_fx)o_dq[0][l], (ls_fx)o_dq[1][l], (ls_fx)o_dq[2][l],
                                (ls_fx)o_dq[3][l]);
        done |= 1u << l;
    }
    return done;
}

uint32_t ENTRY(ls_body *const b[NL], ls_solver_body *const s[NL], ls_fx h)
{
    return rotate_n(b, s, h);
}

#else

uint32_t ENTRY(ls_body *const b[NL], ls_solver_body *const s[NL], ls_fx h)
{
    (void)b;
    (void)s;
    (void)h;
    return 0;
}

#endif
