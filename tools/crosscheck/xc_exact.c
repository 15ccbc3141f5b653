// SPDX-License-Identifier: MIT
// Crosscheck exactness checker: the checks of tests/test_fx.c (our inline
// ls_fx_mul/div/sqrt against the linked libfixmath fix16_mul/div/sqrt, the
// oracle) without Criterion, so that it runs on every target that has a
// libfixmath build (x86-64, i386, and aarch64 and s390x under qemu-user).
// Each check prints `exact NAME checked N mismatches M`; exit status 1 if any
// mismatch. Sample sizes are options so emulated targets can run fewer.
#include "ls/fx.h"
#include "ls/rng.h"

#include <libfixmath/fix16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xc_tally {
    long checked;
    long mismatches;
    char first[160]; // the first mismatch, for the report
} xc_tally;

static void tally(xc_tally *t, bool ok, const char *what, int32_t a, int32_t b, int32_t lib,
                  int32_t mine)
{
    t->checked++;
    if (!ok && t->mismatches++ == 0) {
        snprintf(t->first, sizeof t->first, "%s(%d, %d): libfixmath %d, ours %d", what, (int)a,
                 (int)b, (int)lib, (int)mine);
    }
}

// 0, +-1, +-max, min, powers of two and +-1 ulp around each (as tests/test_fx.c).
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

// A random raw value with a random magnitude (as tests/test_fx.c).
static ls_fx random_fx(ls_rng *r)
{
    int32_t v = (int32_t)ls_rng_next_u32(r);
    return v >> ls_rng_below(r, 31);
}

// In range: bit-identical to fix16_mul. Out of range: we saturate and flag.
static void check_mul(xc_tally *t, ls_fx a, ls_fx b)
{
    fix16_t lib = fix16_mul(a, b);
    bool ovf = false;
    ls_fx mine = ls_fx_mul_chk(a, b, &ovf);
    int64_t w = ls_fx_round_q32((int64_t)a * b);
    bool ok;
    if (w >= LS_FX_MIN && w <= LS_FX_MAX && lib != INT32_MIN) {
        ok = !ovf && mine == lib;
    } else {
        ok = ovf && (mine == LS_FX_MAX || mine == LS_FX_MIN);
    }
    tally(t, ok, "mul", a, b, lib, mine);
}

// Bit-identical to fix16_div wherever neither overflows; far inside the range
// we must not saturate, far outside we must (the thresholds of test_fx.c, on
// the exact truncated quotient instead of a double).
static void check_div(xc_tally *t, ls_fx a, ls_fx b)
{
    if (b == 0) {
        return;
    }
    fix16_t lib = fix16_div(a, b);
    bool ovf = false;
    ls_fx mine = ls_fx_div_chk(a, b, &ovf);
    bool ok = ovf || lib == INT32_MIN || mine == lib;
    int64_t q = (int64_t)a * 65536 / b;
    if (q < 2000000000 && q > -2000000000) {
        ok = ok && !ovf && mine == lib;
    } else if (q > 2200000000 || q < -2200000000) {
        ok = ok && ovf;
    }
    tally(t, ok, "div", a, b, lib, mine);
}

static void check_sqrt(xc_tally *t, ls_fx a)
{
    fix16_t lib = fix16_sqrt(a);
    ls_fx mine = ls_fx_sqrt(a);
    tally(t, mine == lib, "sqrt", a, 0, lib, mine);
}

static int report(const char *name, const xc_tally *t, xc_tally *total)
{
    printf("exact %-14s checked %10ld mismatches %ld%s%s\n", name, t->checked, t->mismatches,
           t->mismatches ? "  first: " : "", t->mismatches ? t->first : "");
    total->checked += t->checked;
    total->mismatches += t->mismatches;
    return t->mismatches != 0;
}

// |b| >= 16 takes libfixmath's estimate path, sometimes 1 ulp above the
// correctly rounded quotient: we must agree on every such case, and the
// sweep must contain some (else it proves nothing).
static void check_div_high(xc_tally *t, ls_fx b_step, long *high)
{
    for (ls_fx b = 16 << 16; b < (16 << 16) + 200000; b += b_step) {
        for (ls_fx a = 1; a < (1 << 24); a += 99991) {
            int64_t exact = (((int64_t)a << 17) / b + 1) >> 1;
            fix16_t lib = fix16_div(a, b);
            ls_fx mine = ls_fx_div(a, b);
            tally(t, mine == lib, "div", a, b, lib, mine);
            *high += lib == exact + 1;
        }
    }
}

// The fixed cases of test_fx.c: saturation instead of wrapping or the
// -32768 sentinel, divide by zero, rounding helpers.
static void check_spots(xc_tally *t)
{
    bool o1 = false, o2 = false, o3 = false, o4 = false, o5 = false, o6 = false;
    struct {
        int32_t got, want;
    } c[] = {
        {ls_fx_add_chk(LS_FX_MAX, 1, &o1), LS_FX_MAX},
        {ls_fx_sub_chk(LS_FX_MIN, 1, &o2), LS_FX_MIN},
        {ls_fx_mul_chk(256 << 16, -(128 << 16), &o3), LS_FX_MIN},
        {fix16_mul(256 << 16, -(128 << 16)), INT32_MIN},
        {ls_fx_div_chk(5, 0, &o4), LS_FX_MAX},
        {ls_fx_div_chk(-5, 0, &o5), LS_FX_MIN},
        {ls_fx_div_chk(0, 0, &o6), 0},
        {o1 && o2 && o3 && o4 && o5 && o6, 1},
        {ls_fx_floor(-(3 << 15)), -(2 << 16)},
        {ls_fx_ceil(-(3 << 15)), -(1 << 16)},
        {ls_fx_floor(0x12345), fix16_floor(0x12345)},
        {ls_fx_abs(INT32_MIN), LS_FX_MAX},
        {ls_fx_to_int(-(3 << 15)), -2},
        {ls_fx_from_ratio(1, 3), 21845},
        {ls_fx_from_ratio(-1, 60), -1092},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        tally(t, c[i].got == c[i].want, "spot", (int32_t)i, 0, c[i].want, c[i].got);
    }
}

static bool parse_count(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1 || v > 1000000000) {
        return false;
    }
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    long pairs = 10000000, div_step = 7, sqrt_step = 61;
    for (int i = 1; i < argc; i++) {
        bool has = i + 1 < argc;
        if (strcmp(argv[i], "--random") == 0 && has && parse_count(argv[i + 1], &pairs)) {
            i++;
        } else if (strcmp(argv[i], "--div-step") == 0 && has &&
                   parse_count(argv[i + 1], &div_step)) {
            i++;
        } else if (strcmp(argv[i], "--sqrt-step") == 0 && has &&
                   parse_count(argv[i + 1], &sqrt_step)) {
            i++;
        } else {
            fprintf(stderr, "usage: xc_exact [--random N] [--div-step S] [--sqrt-step S]\n"
                            "  defaults are tests/test_fx.c's: 10000000 random pairs per op,\n"
                            "  div sweep step 7, sqrt sweep step 61 above 2^30\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    ls_fx e[300];
    size_t ne = edge_values(e);
    xc_tally total = {0, 0, ""};
    int bad = 0;
    xc_tally t = {0, 0, ""};
    for (size_t i = 0; i < ne; i++) {
        for (size_t j = 0; j < ne; j++) {
            check_mul(&t, e[i], e[j]);
        }
    }
    bad |= report("mul_edges", &t, &total);
    t = (xc_tally){0, 0, ""};
    ls_rng r = ls_rng_make(2024, 1);
    for (long i = 0; i < pairs; i++) {
        ls_fx a = random_fx(&r), b = random_fx(&r);
        check_mul(&t, a, b);
    }
    bad |= report("mul_random", &t, &total);
    t = (xc_tally){0, 0, ""};
    for (size_t i = 0; i < ne; i++) {
        for (size_t j = 0; j < ne; j++) {
            check_div(&t, e[i], e[j]);
        }
    }
    bad |= report("div_edges", &t, &total);
    t = (xc_tally){0, 0, ""};
    r = ls_rng_make(2025, 2);
    for (long i = 0; i < pairs; i++) {
        ls_fx a = random_fx(&r), b = random_fx(&r);
        check_div(&t, a, b);
    }
    bad |= report("div_random", &t, &total);
    t = (xc_tally){0, 0, ""};
    long high = 0;
    check_div_high(&t, (ls_fx)div_step, &high);
    bad |= report("div_1ulp_high", &t, &total);
    printf("exact div_1ulp_high: %ld libfixmath results 1 ulp above the rounded quotient\n", high);
    if (high == 0) {
        printf("exact div_1ulp_high: FAILED, the sweep must include such cases\n");
        bad = 1;
    }
    t = (xc_tally){0, 0, ""};
    for (size_t i = 0; i < ne; i++) {
        check_sqrt(&t, e[i]);
    }
    r = ls_rng_make(7, 3);
    for (long i = 0; i < pairs; i++) {
        check_sqrt(&t, random_fx(&r));
    }
    bad |= report("sqrt_random", &t, &total);
    t = (xc_tally){0, 0, ""};
    for (int64_t a = 1 << 30; a <= INT32_MAX; a += sqrt_step) {
        check_sqrt(&t, (ls_fx)a);
    }
    bad |= report("sqrt_above_2^30", &t, &total);
    t = (xc_tally){0, 0, ""};
    check_spots(&t);
    bad |= report("spot_cases", &t, &total);
    printf("exact total checked %ld mismatches %ld\n", total.checked, total.mismatches);
    return bad ? 1 : 0;
}
