// SPDX-License-Identifier: MIT
// Q16.16 scalar ops: bit-identity with the linked libfixmath (the oracle) for
// every non-overflowing input tested, and the saturating overflow policy.
#include "../fixmath_phys/src/math/isqrt_near.h"
#include "ls/fx.h"
#include "ls/rng.h"

#include <criterion/criterion.h>
#include <libfixmath/fix16.h>

#define RANDOM_PAIRS 10000000L

// 0, +-1, +-max, min, powers of two and +-1 ulp around each of them.
static size_t edge_values(ls_fx *out)
{
    size_t n = 0;
    int64_t base[80];
    size_t nb = 0;
    base[nb++] = 0;
    base[nb++] = INT32_MAX;
    base[nb++] = INT32_MIN;
    for (int k = 0; k < 31; k++) {
        base[nb++] = (int64_t)1 << k;
        base[nb++] = -((int64_t)1 << k);
    }
    for (size_t i = 0; i < nb; i++) {
        for (int d = -1; d <= 1; d++) {
            int64_t v = base[i] + d;
            if (v >= INT32_MIN && v <= INT32_MAX) {
                out[n++] = (ls_fx)v;
            }
        }
    }
    return n;
}

// A random raw value with a random magnitude, so small and large values are
// both well covered (uniform raw values would almost always overflow a product).
static ls_fx random_fx(ls_rng *r)
{
    int32_t v = (int32_t)ls_rng_next_u32(r);
    return v >> ls_rng_below(r, 31);
}

// The exact value of fix16_mul's rounding, or "out of range" (returns false).
static bool mul_in_range(ls_fx a, ls_fx b, ls_fx lib)
{
    int64_t w = ls_fx_round_q32((int64_t)a * b);
    return w >= LS_FX_MIN && w <= LS_FX_MAX && lib != INT32_MIN;
}

static void check_mul(ls_fx a, ls_fx b)
{
    fix16_t lib = fix16_mul(a, b);
    bool ovf = false;
    ls_fx mine = ls_fx_mul_chk(a, b, &ovf);
    if (mul_in_range(a, b, lib)) {
        cr_assert(!ovf && mine == lib, "mul(%d, %d): lib %d, ours %d", a, b, lib, mine);
    } else {
        cr_assert(ovf && (mine == LS_FX_MAX || mine == LS_FX_MIN), "mul(%d, %d) must saturate", a,
                  b);
    }
}

static void check_div(ls_fx a, ls_fx b)
{
    if (b == 0) {
        return;
    }
    fix16_t lib = fix16_div(a, b);
    bool ovf = false;
    ls_fx mine = ls_fx_div_chk(a, b, &ovf);
    if (!ovf && lib != INT32_MIN) {
        cr_assert(mine == lib, "div(%d, %d): lib %d, ours %d", a, b, lib, mine);
    }
    // Where the exact quotient is far inside the range, we must not saturate.
    double q = (double)a / (double)b * 65536.0;
    if (q < 2.0e9 && q > -2.0e9) {
        cr_assert(!ovf && mine == lib, "div(%d, %d) in range: lib %d, ours %d", a, b, lib, mine);
    } else if (q > 2.2e9 || q < -2.2e9) {
        cr_assert(ovf, "div(%d, %d) must report overflow", a, b);
    }
}

Test(fx, mul_matches_libfixmath_on_edge_values)
{
    ls_fx e[300];
    size_t n = edge_values(e);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            check_mul(e[i], e[j]);
        }
    }
}

Test(fx, mul_matches_libfixmath_on_ten_million_random_pairs, .timeout = 120)
{
    ls_rng r = ls_rng_make(2024, 1);
    for (long i = 0; i < RANDOM_PAIRS; i++) {
        ls_fx a = random_fx(&r), b = random_fx(&r);
        check_mul(a, b);
    }
}

Test(fx, div_matches_libfixmath_on_edge_values)
{
    ls_fx e[300];
    size_t n = edge_values(e);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            check_div(e[i], e[j]);
        }
    }
}

Test(fx, div_matches_libfixmath_on_ten_million_random_pairs, .timeout = 120)
{
    ls_rng r = ls_rng_make(2025, 2);
    for (long i = 0; i < RANDOM_PAIRS; i++) {
        ls_fx a = random_fx(&r), b = random_fx(&r);
        check_div(a, b);
    }
}

Test(fx, div_reproduces_libfixmath_one_ulp_high_quotients)
{
    // 1/24 and 100/17.5: |b| >= 16 takes libfixmath's estimate path, whose
    // results are sometimes 1 ulp above the correctly rounded quotient. Count
    // such cases over a sweep: we must agree with the library on every one.
    long high = 0;
    for (ls_fx b = 16 << 16; b < (16 << 16) + 200000; b += 7) {
        for (ls_fx a = 1; a < (1 << 24); a += 99991) {
            int64_t exact = (((int64_t)a << 17) / b + 1) >> 1;
            fix16_t lib = fix16_div(a, b);
            cr_assert_eq(ls_fx_div(a, b), lib);
            high += lib == exact + 1;
        }
    }
    cr_assert_gt(high, 0, "the sweep must include libfixmath's 1-ulp-high cases");
}

Test(fx, sqrt_matches_libfixmath_on_edge_and_random_values, .timeout = 120)
{
    ls_fx e[300];
    size_t n = edge_values(e);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(ls_fx_sqrt(e[i]), fix16_sqrt(e[i]), "sqrt(%d)", e[i]);
    }
    ls_rng r = ls_rng_make(7, 3);
    for (long i = 0; i < RANDOM_PAIRS; i++) {
        ls_fx a = random_fx(&r);
        cr_assert_eq(ls_fx_sqrt(a), fix16_sqrt(a), "sqrt(%d)", a);
    }
}

Test(fx, sqrt_matches_libfixmath_on_every_input_above_2_pow_30_step_61)
{
    // The library's approximate branch (first remainder > 65535) lives here.
    for (int64_t a = 1 << 30; a <= INT32_MAX; a += 61) {
        cr_assert_eq(ls_fx_sqrt((ls_fx)a), fix16_sqrt((fix16_t)a), "sqrt(%lld)", (long long)a);
    }
}

Test(fx, add_sub_saturate_and_flag_instead_of_wrapping)
{
    bool ovf = false;
    cr_assert_eq(ls_fx_add_chk(LS_FX_MAX, 1, &ovf), LS_FX_MAX);
    cr_assert(ovf);
    ovf = false;
    cr_assert_eq(ls_fx_sub_chk(LS_FX_MIN, 1, &ovf), LS_FX_MIN);
    cr_assert(ovf);
    ovf = false;
    cr_assert_eq(ls_fx_add_chk(3 << 16, -(5 << 16), &ovf), -(2 << 16));
    cr_assert(!ovf);
}

Test(fx, overflow_never_returns_the_minus_32768_sentinel)
{
    bool ovf = false;
    cr_assert_eq(ls_fx_mul_chk(LS_FX_MIN, LS_FX_ONE * 2, &ovf), LS_FX_MIN);
    cr_assert(ovf);
    cr_assert_eq(LS_FX_MIN, -0x7FFFFFFF);
    // libfixmath: 256 * -128 = -32768.0 is returned as 0x80000000 (== its
    // overflow value); we saturate to LS_FX_MIN and flag it.
    ovf = false;
    cr_assert_eq(fix16_mul(256 << 16, -(128 << 16)), INT32_MIN);
    cr_assert_eq(ls_fx_mul_chk(256 << 16, -(128 << 16), &ovf), LS_FX_MIN);
    cr_assert(ovf);
}

Test(fx, divide_by_zero_saturates_by_sign_and_flags)
{
    bool ovf = false;
    cr_assert_eq(ls_fx_div_chk(5, 0, &ovf), LS_FX_MAX);
    cr_assert(ovf);
    ovf = false;
    cr_assert_eq(ls_fx_div_chk(-5, 0, &ovf), LS_FX_MIN);
    cr_assert(ovf);
    ovf = false;
    cr_assert_eq(ls_fx_div_chk(0, 0, &ovf), 0);
    cr_assert(ovf);
}

Test(fx, floor_ceil_abs_clamp_and_conversions)
{
    cr_assert_eq(ls_fx_floor(-(3 << 15)), -(2 << 16)); // floor(-1.5) = -2
    cr_assert_eq(ls_fx_ceil(-(3 << 15)), -(1 << 16));  // ceil(-1.5) = -1
    cr_assert_eq(ls_fx_ceil(LS_FX_MAX), LS_FX_MAX);    // saturates
    cr_assert_eq(ls_fx_floor(0x12345), fix16_floor(0x12345));
    cr_assert_eq(ls_fx_abs(INT32_MIN), LS_FX_MAX);
    cr_assert_eq(ls_fx_abs(-5), 5);
    cr_assert_eq(ls_fx_clamp(9 << 16, 0, 4 << 16), 4 << 16);
    cr_assert_eq(ls_fx_from_int(40000), LS_FX_MAX);
    cr_assert_eq(ls_fx_from_int(-7), -7 * 65536);
    cr_assert_eq(ls_fx_to_int(LS_FX_MAX), 32768); // libfixmath 2022 gives -32768 here
    cr_assert_eq(ls_fx_to_int(-(3 << 15)), -2);   // ties away from zero
    cr_assert_eq(ls_fx_from_ratio(1, 3), 21845);
    cr_assert_eq(ls_fx_from_ratio(-1, 60), -1092);
}

// The digit-by-digit definition of floor(sqrt(v)) (ls_isqrt64 until Solver
// v3's rain work): the reference the interpolated table and Newton step of
// math/isqrt.c must equal.
static uint64_t isqrt_digits(uint64_t v)
{
    if (v == 0) {
        return 0;
    }
    uint64_t bit = (uint64_t)1 << ((63 - __builtin_clzll(v)) & ~1);
    uint64_t res = 0;
    while (bit != 0) {
        if (v >= res + bit) {
            v -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    return res;
}

// The division-free root of the rotation integration near 2^56 (math/isqrt_near.h)
// is ls_isqrt64 on its whole fast range (every fix-up step count), at its
// edges and beyond them.
Test(fx, isqrt64_near56_equals_isqrt64)
{
    const int64_t one = (int64_t)1 << 56, reach = (int64_t)1 << 44;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < 2000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // d uniform in bits 0..46 of magnitude, either sign: inside and just outside.
        int shift = 17 + (int)(x % 30);
        int64_t d = (int64_t)(x >> shift);
        d = (x & 1) ? -d : d;
        uint64_t s = (uint64_t)(one + d);
        cr_assert_eq(ls_isqrt64_near56_(s), ls_isqrt64(s), "s = 2^56 %+lld", (long long)d);
    }
    // Around the perfect squares of the fast range and at its edges.
    for (uint64_t r = ((uint64_t)1 << 28) - (1u << 16); r <= ((uint64_t)1 << 28) + (1u << 16);
         r += 7) {
        const uint64_t v[3] = {r * r - 1, r * r, r * r + 2 * r};
        for (int k = 0; k < 3; k++) {
            cr_assert_eq(ls_isqrt64_near56_(v[k]), ls_isqrt64(v[k]), "v = %llu",
                         (unsigned long long)v[k]);
        }
    }
    const uint64_t edge[8] = {(uint64_t)(one - reach),
                              (uint64_t)(one - reach + 1),
                              (uint64_t)(one + reach - 1),
                              (uint64_t)(one + reach),
                              0,
                              UINT64_MAX,
                              (uint64_t)1 << 63,
                              ((uint64_t)1 << 63) - 1};
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(ls_isqrt64_near56_(edge[i]), ls_isqrt64(edge[i]), "edge %d", i);
    }
}

// The division it replaces: (c 2^16 +- floor(len / 2)) / len, truncated.
static int32_t unit_div_reference(uint64_t len, int64_t c)
{
    int64_t n = c * 65536, h = (int64_t)(len / 2);
    return (int32_t)((n >= 0 ? n + h : n - h) / (int64_t)len);
}

static void check_unit_div(uint64_t len, int64_t c)
{
    ls_unit_div_ u = ls_unit_div_make_(len);
    cr_assert_eq(ls_unit_div_q16_(&u, c), unit_div_reference(len, c), "len %llu, c %lld",
                 (unsigned long long)len, (long long)c);
}

Test(fx, unit_div_equals_the_division)
{
    uint64_t x = 0xD1B54A32D192ED03ull;
    const uint64_t top = (uint64_t)3037000499u; // 2^31.5
    for (int i = 0; i < 2000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // len of every magnitude up to 2^31.5, c anywhere in [-len, len].
        uint64_t len = (x >> (33 + (int)(x % 31))) % top + 1;
        uint64_t y = x * 0x9E3779B97F4A7C15ull;
        int64_t c = (int64_t)(y % (2 * len + 1)) - (int64_t)len;
        check_unit_div(len, c);
    }
    // Every c of the lengths up to 1500 (every remainder and tie occurs).
    for (uint64_t len = 1; len <= 1500; len++) {
        for (int64_t c = -(int64_t)len; c <= (int64_t)len; c++) {
            ls_unit_div_ u = ls_unit_div_make_(len);
            if (ls_unit_div_q16_(&u, c) != unit_div_reference(len, c)) {
                check_unit_div(len, c); // names the case
            }
        }
    }
    // Ties and the ends: c = +-len, 0, +-1, and c 2^16 + len / 2 at a
    // multiple of len, for small lengths, powers of two and the largest.
    const uint64_t lens[] = {1,
                             2,
                             3,
                             4,
                             5,
                             7,
                             65535,
                             65536,
                             65537,
                             (uint64_t)1 << 28,
                             ((uint64_t)1 << 28) + 1,
                             ((uint64_t)1 << 29) - 1,
                             (uint64_t)1 << 29,
                             (uint64_t)1 << 30,
                             ((uint64_t)1 << 31) + 12345,
                             top - 1,
                             top};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint64_t len = lens[i];
        const int64_t cs[5] = {0, 1, (int64_t)len, (int64_t)len / 2, (int64_t)len - 1};
        for (int k = 0; k < 5; k++) {
            check_unit_div(len, cs[k]);
            check_unit_div(len, -cs[k]);
        }
        for (int64_t q = 0; q <= 65536; q += 4093) {
            // c 2^16 + len / 2 = q len + e, e in {-1, 0, 1}: the rounding edges.
            for (int e = -1; e <= 1; e++) {
                int64_t num = q * (int64_t)len + e - (int64_t)(len / 2);
                if (num >= 0 && num % 65536 == 0 && num / 65536 <= (int64_t)len) {
                    check_unit_div(len, num / 65536);
                    check_unit_div(len, -(num / 65536));
                }
            }
        }
        for (int64_t c = (int64_t)len; c >= 0 && c > (int64_t)len - 3000; c--) {
            check_unit_div(len, c);
            check_unit_div(len, -c);
        }
    }
}

Test(fx, recip60_near28_equals_the_division)
{
    // Every length of the fast range and beyond its ends, then random ones.
    for (uint64_t len = ((uint64_t)1 << 28) - (1u << 15) - 64;
         len <= ((uint64_t)1 << 28) + (1u << 15) + 64; len++) {
        cr_assert_eq(ls_recip60_near28_(len), ((uint64_t)1 << 60) / len, "len %llu",
                     (unsigned long long)len);
    }
    uint64_t x = 0x5851F42D4C957F2Dull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t len = (x >> 32) | 1u;
        cr_assert_eq(ls_recip60_near28_(len), ((uint64_t)1 << 60) / len, "len %llu",
                     (unsigned long long)len);
    }
}

Test(fx, isqrt64_equals_the_digit_by_digit_root)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 400000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t v = x >> (i % 64);
        cr_assert_eq(ls_isqrt64(v), isqrt_digits(v), "v = %llu", (unsigned long long)v);
        uint64_t r = isqrt_digits(v);
        cr_assert_eq(ls_isqrt64(r * r), r);
        if (r > 0) {
            cr_assert_eq(ls_isqrt64(r * r - 1), r - 1);
        }
    }
    const uint64_t edge[8] = {
        0, 1, 2, 3, 4, UINT64_MAX, (uint64_t)1 << 62, ((uint64_t)1 << 62) - 1};
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(ls_isqrt64(edge[i]), isqrt_digits(edge[i]));
    }
    for (uint64_t v = 0; v < 100000; v++) {
        cr_assert_eq(ls_isqrt64(v), isqrt_digits(v), "v = %llu", (unsigned long long)v);
    }
    // Around perfect squares over the whole range (the largest root is 2^32 - 1).
    for (uint64_t r = 1; r < ((uint64_t)1 << 32); r += 999983) {
        cr_assert_eq(ls_isqrt64(r * r), r);
        cr_assert_eq(ls_isqrt64(r * r - 1), r - 1);
        cr_assert_eq(ls_isqrt64(r * r + 2 * r), r);
    }
    cr_assert_eq(ls_isqrt64(0xFFFFFFFE00000001ull), 0xFFFFFFFFull);
    cr_assert_eq(ls_isqrt64(0xFFFFFFFE00000000ull), 0xFFFFFFFEull);
    // The ends of the table's intervals (math/isqrt.c), scaled down by every
    // power of 4, and their neighbours.
    for (uint64_t j = 0; j < 384; j++) {
        for (int k = 0; k < 62; k += 2) {
            uint64_t v = ((j + 128) << 55) >> k;
            for (uint64_t d = 0; d < 3; d++) {
                uint64_t u = v - 1 + d;
                cr_assert_eq(ls_isqrt64(u), isqrt_digits(u), "v = %llu", (unsigned long long)u);
            }
        }
    }
}
