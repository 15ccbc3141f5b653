// SPDX-License-Identifier: MIT
// Stateless trigonometry: maximum error against libm over dense sweeps, exact
// boundary values, and independence from call history (libfixmath's bug).
#include "ls/trig.h"

#include <criterion/criterion.h>
#include <libfixmath/fix16.h>
#include <math.h>

#define ULP         (1.0 / 65536.0)
#define MAX_ERR_ULP 1.0 // the documented bound for every function here

static double val(ls_fx v)
{
    return (double)v / 65536.0;
}

Test(trig, sin_cos_within_one_ulp_on_every_input_in_minus_8pi_to_8pi, .timeout = 60)
{
    double worst_s = 0, worst_c = 0;
    for (ls_fx x = -(ls_fx)(8 * 205887); x <= 8 * 205887; x++) {
        double es = fabs(val(ls_fx_sin(x)) - sin(val(x))) / ULP;
        double ec = fabs(val(ls_fx_cos(x)) - cos(val(x))) / ULP;
        worst_s = es > worst_s ? es : worst_s;
        worst_c = ec > worst_c ? ec : worst_c;
    }
    cr_assert_leq(worst_s, MAX_ERR_ULP, "sin worst error %.3f ulp", worst_s);
    cr_assert_leq(worst_c, MAX_ERR_ULP, "cos worst error %.3f ulp", worst_c);
}

Test(trig, sin_cos_within_one_ulp_for_large_arguments)
{
    for (int64_t x = INT32_MIN + 1; x <= INT32_MAX; x += 9973) {
        double e = fabs(val(ls_fx_sin((ls_fx)x)) - sin(val((ls_fx)x))) / ULP;
        cr_assert_leq(e, MAX_ERR_ULP, "sin(%lld) error %.3f ulp", (long long)x, e);
    }
}

Test(trig, sincos_equals_separate_calls)
{
    for (ls_fx x = -500000; x < 500000; x += 37) {
        ls_fx s, c;
        ls_fx_sincos(x, &s, &c);
        cr_assert(s == ls_fx_sin(x) && c == ls_fx_cos(x));
    }
}

Test(trig, atan2_within_one_ulp_on_a_dense_grid, .timeout = 60)
{
    double worst = 0;
    for (int i = -400; i <= 400; i++) {
        for (int j = -400; j <= 400; j++) {
            // Mixed magnitudes: small, unit and large coordinates.
            ls_fx y = (ls_fx)(i * (i % 3 == 0 ? 7919 : 61));
            ls_fx x = (ls_fx)(j * (j % 5 == 0 ? 5003 : 97));
            if (x == 0 && y == 0) {
                continue;
            }
            double e = fabs(val(ls_fx_atan2(y, x)) - atan2(val(y), val(x))) / ULP;
            worst = e > worst ? e : worst;
        }
    }
    cr_assert_leq(worst, MAX_ERR_ULP, "atan2 worst error %.3f ulp", worst);
}

Test(trig, atan2_of_origin_is_zero_regardless_of_history)
{
    cr_assert_eq(ls_fx_atan2(0, 0), 0);
    (void)ls_fx_atan2(LS_FX_ONE, LS_FX_ONE);
    cr_assert_eq(ls_fx_atan2(0, 0), 0);
}

Test(trig, asin_acos_within_one_ulp_on_every_input_in_minus_1_to_1)
{
    double worst_s = 0, worst_c = 0;
    for (ls_fx x = -LS_FX_ONE; x <= LS_FX_ONE; x++) {
        double es = fabs(val(ls_fx_asin(x)) - asin(val(x))) / ULP;
        double ec = fabs(val(ls_fx_acos(x)) - acos(val(x))) / ULP;
        worst_s = es > worst_s ? es : worst_s;
        worst_c = ec > worst_c ? ec : worst_c;
    }
    cr_assert_leq(worst_s, MAX_ERR_ULP, "asin worst error %.3f ulp", worst_s);
    cr_assert_leq(worst_c, MAX_ERR_ULP, "acos worst error %.3f ulp", worst_c);
}

Test(trig, boundaries_where_libfixmath_2022_is_wrong)
{
    cr_assert_eq(ls_fx_asin(LS_FX_ONE), LS_FX_HALF_PI);
    cr_assert_eq(ls_fx_asin(-LS_FX_ONE), -LS_FX_HALF_PI);
    cr_assert_eq(ls_fx_acos(LS_FX_ONE), 0);
    cr_assert_eq(ls_fx_acos(-LS_FX_ONE), LS_FX_PI);
    cr_assert_eq(ls_fx_asin(2 * LS_FX_ONE), LS_FX_HALF_PI); // clamped
    cr_assert_eq(ls_fx_sin(0), 0);
    cr_assert_eq(ls_fx_cos(0), LS_FX_ONE);
}

Test(trig, results_do_not_depend_on_call_history)
{
    // libfixmath's fix16_exp/atan2 caches make a call's result depend on the
    // calls before it. Ours are pure: interleave with other arguments and
    // compare with a fresh evaluation order.
    ls_fx first[512], again[512];
    for (int i = 0; i < 512; i++) {
        first[i] = ls_fx_atan2((ls_fx)(i * 977 - 250000), (ls_fx)(i * 313 - 80000));
    }
    for (int i = 511; i >= 0; i--) {
        (void)ls_fx_sin((ls_fx)(i * 12345));
        again[i] = ls_fx_atan2((ls_fx)(i * 977 - 250000), (ls_fx)(i * 313 - 80000));
    }
    cr_assert_arr_eq(first, again, sizeof first);
}
