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
    "  A, B: decimals (1.5) or raw literals (0x18000, raw:98304)\n\n"
    "Exit status 2 for an operand outside the operation's domain (sqrt of a negative,\n"
    "asin/acos outside -1..1, division by zero), 3 when the result overflowed (it is\n"
    "printed saturated).",
    cmd_fx, NULL};

static bool parse_arg(const char *name, const char *text, ls_fx *out)
{
    const char *end;
    ls_result r = ls_fx_parse(text, out, &end);
    if (r != LS_OK || *end != '\0') {
        cli_usage_error(&cmd_fx_def, "operand %s: '%s' is not a Q16.16 number (%s)", name, text,
                        r == LS_ERR_OUT_OF_RANGE ? "outside -32768..32767.99998"
                        : r != LS_OK             ? ls_result_text(r)
                                                 : "trailing characters");
        return false;
    }
    return true;
}

// Operands outside the operation's domain are refused, not clamped or mirrored.
static bool in_domain(const char *op, const char *text_a, ls_fx a, const char *text_b, ls_fx b)
{
    if (strcmp(op, "sqrt") == 0 && a < 0) {
        cli_usage_error(&cmd_fx_def, "sqrt wants A >= 0, got '%s'", text_a);
        return false;
    }
    if ((strcmp(op, "asin") == 0 || strcmp(op, "acos") == 0) && (a < -LS_FX_ONE || a > LS_FX_ONE)) {
        cli_usage_error(&cmd_fx_def, "%s wants A in -1..1, got '%s'", op, text_a);
        return false;
    }
    if (strcmp(op, "div") == 0 && b == 0) {
        cli_usage_error(&cmd_fx_def, "div: division by zero (B is '%s')", text_b);
        return false;
    }
    return true;
}

int cmd_fx(int argc, char **argv)
{
    static const char *const binary[] = {"add", "sub", "mul", "div", "atan2"};
    static const char *const unary[] = {"sqrt", "sin", "cos", "asin", "acos"};
    if (argc < 2) {
        return cli_usage_error(&cmd_fx_def, "missing OP");
    }
    const char *op = argv[1];
    bool is_binary = false, known = false;
    for (size_t i = 0; i < 5; i++) {
        is_binary |= strcmp(op, binary[i]) == 0;
        known |= strcmp(op, binary[i]) == 0 || strcmp(op, unary[i]) == 0;
    }
    if (!known) {
        return cli_usage_error(&cmd_fx_def, "unknown operation '%s'", op);
    }
    if (argc != (is_binary ? 4 : 3)) {
        return cli_usage_error(&cmd_fx_def, "%s takes %d operand%s, got %d", op, is_binary ? 2 : 1,
                               is_binary ? "s" : "", argc - 2);
    }
    ls_fx a, b = 0, r;
    if (!parse_arg("A", argv[2], &a) || (is_binary && !parse_arg("B", argv[3], &b)) ||
        !in_domain(op, argv[2], a, is_binary ? argv[3] : "", b)) {
        return CLI_EXIT_USAGE;
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
    return ovf ? CLI_EXIT_MISMATCH : CLI_EXIT_OK;
}
