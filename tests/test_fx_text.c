// SPDX-License-Identifier: MIT
// Decimal text <-> Q16.16: rounding rules and exact round trips.
#include "ls/fx_text.h"
#include "ls/rng.h"

#include <criterion/criterion.h>
#include <string.h>

static ls_fx parse_ok(const char *s)
{
    ls_fx v;
    const char *end;
    cr_assert_eq(ls_fx_parse(s, &v, &end), LS_OK, "parse '%s'", s);
    cr_assert_eq(*end, '\0', "parse '%s' stops early", s);
    return v;
}

Test(fx_text, decimals_round_to_nearest_ties_away_from_zero)
{
    cr_assert_eq(parse_ok("1.5"), 0x18000);
    cr_assert_eq(parse_ok("-2.25"), -0x24000);
    cr_assert_eq(parse_ok(".5"), 0x8000);
    cr_assert_eq(parse_ok("0.1"), 6554);              // 6553.6 -> 6554
    cr_assert_eq(parse_ok("0.00000762939453125"), 1); // exactly 0.5 ulp: away from zero
    cr_assert_eq(parse_ok("-0.00000762939453125"), -1);
    cr_assert_eq(parse_ok("0.00000762939453124999999"), 0); // just below the tie
    cr_assert_eq(parse_ok("32767.99998"), 0x7FFFFFFF);
    cr_assert_eq(parse_ok("9.81"), 642908);
}

Test(fx_text, raw_literals_are_exact)
{
    cr_assert_eq(parse_ok("0x18000"), 0x18000);
    cr_assert_eq(parse_ok("-0x10000"), -65536);
    cr_assert_eq(parse_ok("raw:98304"), 98304);
    cr_assert_eq(parse_ok("raw:-1"), -1);
}

Test(fx_text, bad_text_is_refused_with_a_named_error)
{
    ls_fx v;
    const char *end;
    cr_assert_eq(ls_fx_parse("abc", &v, &end), LS_ERR_PARSE);
    cr_assert_eq(ls_fx_parse("-", &v, &end), LS_ERR_PARSE);
    cr_assert_eq(ls_fx_parse(".", &v, &end), LS_ERR_PARSE);
    cr_assert_eq(ls_fx_parse("0x", &v, &end), LS_ERR_PARSE);
    cr_assert_eq(ls_fx_parse("40000", &v, &end), LS_ERR_OUT_OF_RANGE);
    cr_assert_eq(ls_fx_parse("32768", &v, &end), LS_ERR_OUT_OF_RANGE);
    cr_assert_eq(ls_fx_parse("0x80000000", &v, &end), LS_ERR_OUT_OF_RANGE);
    cr_assert_eq(ls_fx_parse("12345678901234567890", &v, &end), LS_ERR_OUT_OF_RANGE);
}

Test(fx_text, format_is_shortest_and_round_trips_every_sampled_value)
{
    char buf[LS_FX_TEXT_MAX];
    ls_fx_format(0x18000, buf);
    cr_assert_str_eq(buf, "1.5");
    ls_fx_format(-65536 * 3, buf);
    cr_assert_str_eq(buf, "-3");
    ls_fx_format(6554, buf);
    cr_assert_str_eq(buf, "0.1");
    ls_rng r = ls_rng_make(9, 9);
    for (int i = 0; i < 300000; i++) {
        ls_fx v = (ls_fx)ls_rng_next_u32(&r);
        if (v == INT32_MIN) {
            continue;
        }
        ls_fx_format(v, buf);
        cr_assert_eq(parse_ok(buf), v, "'%s' does not parse back to %d", buf, v);
    }
    for (ls_fx v = -70000; v <= 70000; v++) {
        ls_fx_format(v, buf);
        cr_assert_eq(parse_ok(buf), v, "'%s' does not parse back to %d", buf, v);
    }
}
