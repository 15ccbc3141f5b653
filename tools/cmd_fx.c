// SPDX-License-Identifier: MIT
// `lockstep fx OP A [B]`: evaluate one fixed-point operation exactly as the
// simulation does and print the decimal and raw result.
#include "cli.h"
#include "ls/fx_text.h"
#include "ls/trig.h"

#include <stdio.h>
#include <string.h>

const cli_command cmd_fx_def = {
    "fx", "evaluate one Q16.16 operation as the engine does (decimal and raw)",
    "OP A [B]\n\n  OP: add sub mul div sqrt sin cos atan2 asin acos\n"
    "  A, B: decimals (1.5) or raw literals (0x18000, raw:98304)",
    cmd_fx};

static bool parse_arg(const char *text, ls_fx *out)
{
    const char *end;
    ls_result r = ls_fx_parse(text, out, &end);
    if (r != LS_OK || *end != '\0') {
        fprintf(stderr, "lockstep fx: '%s' is not a Q16.16 number (%s)\n", text,
                r != LS_OK ? ls_result_text(r) : "trailing characters");
        return false;
    }
    return true;
}

int cmd_fx(int argc, char **argv)
{
    static const char *const binary[] = {"add", "sub", "mul", "div", "atan2"};
    static const char *const unary[] = {"sqrt", "sin", "cos", "asin", "acos"};
    if (argc < 3) {
        cli_print_usage(&cmd_fx_def);
        return 2;
    }
    const char *op = argv[1];
    bool is_binary = false, known = false;
    for (size_t i = 0; i < 5; i++) {
        is_binary |= strcmp(op, binary[i]) == 0;
        known |= strcmp(op, binary[i]) == 0 || strcmp(op, unary[i]) == 0;
    }
    if (!known || argc != (is_binary ? 4 : 3)) {
        fprintf(stderr, "lockstep fx: %s\n",
                known ? "wrong number of operands" : "unknown operation");
        return 2;
    }
    ls_fx a, b = 0, r;
    if (!parse_arg(argv[2], &a) || (is_binary && !parse_arg(argv[3], &b))) {
        return 2;
    }
    bool ovf = false;
    if (strcmp(op, "add") == 0) {
        r = ls_fx_add_chk(a, b, &ovf);
    } else if (strcmp(op, "sub") == 0) {
        r = ls_fx_sub_chk(a, b, &ovf);
    } else if (strcmp(op, "mul") == 0) {
        r = ls_fx_mul_chk(a, b, &ovf);
    } else if (strcmp(op, "div") == 0) {
        r = ls_fx_div_chk(a, b, &ovf);
    } else if (strcmp(op, "atan2") == 0) {
        r = ls_fx_atan2(a, b);
    } else if (strcmp(op, "sqrt") == 0) {
        r = ls_fx_sqrt(a);
    } else if (strcmp(op, "sin") == 0) {
        r = ls_fx_sin(a);
    } else if (strcmp(op, "cos") == 0) {
        r = ls_fx_cos(a);
    } else if (strcmp(op, "asin") == 0) {
        r = ls_fx_asin(a);
    } else {
        r = ls_fx_acos(a);
    }
    char text[LS_FX_TEXT_MAX];
    ls_fx_format(r, text);
    printf("%s  (raw 0x%08x = %d)%s\n", text, (unsigned)r, (int)r,
           ovf ? "  OVERFLOW (saturated)" : "");
    return ovf ? 1 : 0;
}
