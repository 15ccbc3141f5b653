// SPDX-License-Identifier: MIT
// Decimal <-> Q16.16 conversion with exact, documented rounding (SPEC.md "Text").
#include "ls/fx_text.h"

#include <stdio.h>
#include <string.h>

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (is_digit(c)) {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// "0x..." (hex raw) or "raw:..." (decimal raw integer), after the sign.
static ls_result parse_raw(const char *s, bool neg, ls_fx *out, const char **end)
{
    bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    s += hex ? 2 : 4;
    if (!hex && (*s == '-' || *s == '+')) { // "raw:-5" reads like the integer it is
        neg = (*s == '-') != neg;
        s++;
    }
    int64_t v = 0;
    int digits = 0;
    for (;; s++, digits++) {
        int d = hex ? hex_value(*s) : (is_digit(*s) ? *s - '0' : -1);
        if (d < 0) {
            break;
        }
        v = v * (hex ? 16 : 10) + d;
        if (v > INT64_C(0x7FFFFFFF)) {
            return LS_ERR_OUT_OF_RANGE;
        }
    }
    if (digits == 0) {
        return LS_ERR_PARSE;
    }
    *out = (ls_fx)(neg ? -v : v);
    *end = s;
    return LS_OK;
}

ls_result ls_fx_parse(const char *s, ls_fx *out, const char **end)
{
    bool neg = false;
    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) || strncmp(s, "raw:", 4) == 0) {
        return parse_raw(s, neg, out, end);
    }
    // With the fraction's first 17 digits as the integer D (zero-padded),
    // fraction * 2^17 = D / 5^17 exactly, because 10^17 = 2^17 * 5^17. Rounding
    // to nearest Q16.16 (ties away) is then (floor(D / 5^17) + 1) >> 1, and any
    // later digit cannot change floor(D / 5^17), so it is read and ignored.
    int64_t int_part = 0, frac = 0;
    int digits = 0, frac_digits = 0;
    for (; is_digit(*s); s++, digits++) {
        int_part = int_part * 10 + (*s - '0');
        if (int_part > 32768) {
            return LS_ERR_OUT_OF_RANGE;
        }
    }
    if (*s == '.') {
        s++;
        for (; is_digit(*s); s++, digits++) {
            if (frac_digits < 17) {
                frac = frac * 10 + (*s - '0');
                frac_digits++;
            }
        }
    }
    if (digits == 0) {
        return LS_ERR_PARSE;
    }
    for (; frac_digits < 17; frac_digits++) {
        frac *= 10;
    }
    int64_t raw = int_part * 65536 + ((frac / INT64_C(762939453125) + 1) >> 1);
    if (raw > INT64_C(0x7FFFFFFF)) {
        return LS_ERR_OUT_OF_RANGE;
    }
    *out = (ls_fx)(neg ? -raw : raw);
    *end = s;
    return LS_OK;
}

// v with exactly `digits` fractional digits, rounded to nearest (ties away).
static size_t format_digits(ls_fx v, int digits, char *buf)
{
    uint64_t a = v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v;
    uint64_t pow = 1;
    for (int i = 0; i < digits; i++) {
        pow *= 10;
    }
    uint64_t scaled = (a * pow + 32768) >> 16; // value * 10^digits, rounded
    uint64_t ip = scaled / pow, fp = scaled % pow;
    int n;
    if (digits == 0) {
        n = snprintf(buf, LS_FX_TEXT_MAX, "%s%llu", v < 0 ? "-" : "", (unsigned long long)ip);
    } else {
        n = snprintf(buf, LS_FX_TEXT_MAX, "%s%llu.%0*llu", v < 0 ? "-" : "", (unsigned long long)ip,
                     digits, (unsigned long long)fp);
    }
    return (size_t)n;
}

size_t ls_fx_format(ls_fx v, char *buf)
{
    for (int d = 0; d < 5; d++) {
        size_t n = format_digits(v, d, buf);
        ls_fx back;
        const char *end;
        if (ls_fx_parse(buf, &back, &end) == LS_OK && back == v) {
            return n;
        }
    }
    return format_digits(v, 5, buf); // 5 digits always round-trip: 1e-5 < 2^-16 / 2 * 2
}
