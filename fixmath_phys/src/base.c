// SPDX-License-Identifier: MIT
// Result names, version string and the assertion handler.
#include "ls/base.h"

#include <stdio.h>
#include <stdlib.h>

#define LS_STR2_(x) #x
#define LS_STR_(x)  LS_STR2_(x)

const char *ls_result_name(ls_result r)
{
    switch (r) {
#define LS_RESULT_NAME_(name, value, text)                                                         \
    case name:                                                                                     \
        return #name;
        LS_RESULT_MAP(LS_RESULT_NAME_)
#undef LS_RESULT_NAME_
    }
    return "LS_ERR_UNKNOWN";
}

const char *ls_result_text(ls_result r)
{
    switch (r) {
#define LS_RESULT_TEXT_(name, value, text)                                                         \
    case name:                                                                                     \
        return text;
        LS_RESULT_MAP(LS_RESULT_TEXT_)
#undef LS_RESULT_TEXT_
    }
    return "unknown error";
}

const char *ls_version_string(void)
{
    return LS_STR_(LS_VERSION_MAJOR) "." LS_STR_(LS_VERSION_MINOR) "." LS_STR_(LS_VERSION_PATCH);
}

void ls_assert_fail_(const char *cond, const char *file, int line)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, cond);
    abort();
}
