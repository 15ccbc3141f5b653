// SPDX-License-Identifier: MIT
// Result names, version string and the assertion handler.
#include "ls/base.h"

#include "error_field.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void ls_assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, cond);
    abort();
}

void ls_error_clear(ls_error *err)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->offset = -1;
        err->tick = -1;
    }
}

ls_result ls_error_setv(ls_error *err, ls_result code, const char *fmt, va_list ap)
{
    if (err) {
        ls_error_clear(err);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    }
    return code;
}

ls_result ls_error_set(ls_error *err, ls_result code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_error_setv(err, code, fmt, ap);
    va_end(ap);
    return code;
}

ls_result ls_error_set_fieldv_(ls_error *err, ls_result code, const char *field, const char *fmt,
                               va_list ap)
{
    ls_error_setv(err, code, fmt, ap);
    if (err && field) {
        snprintf(err->field, sizeof err->field, "%s", field);
    }
    return code;
}

ls_result ls_error_set_field_(ls_error *err, ls_result code, const char *field, const char *fmt,
                              ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_error_set_fieldv_(err, code, field, fmt, ap);
    va_end(ap);
    return code;
}

void ls_error_set_path(ls_error *err, const char *path)
{
    if (!err || !path) {
        return;
    }
    // Why the tail: the file name at the end is what tells a user which file.
    size_t n = strlen(path);
    size_t skip = n >= sizeof err->path ? n - (sizeof err->path - 1) : 0;
    memcpy(err->path, path + skip, n - skip + 1);
}

size_t ls_error_format(const ls_error *err, char *buf, size_t size)
{
    char tmp[1];
    if (!buf || size == 0) {
        buf = tmp;
        size = sizeof tmp;
    }
    const char *msg = err->message[0] ? err->message : ls_result_text(err->code);
    int n;
    if (err->path[0] && err->line) {
        n = snprintf(buf, size, "%s:%u:%u: %s", err->path, err->line, err->column, msg);
    } else if (err->path[0]) {
        n = snprintf(buf, size, "%s: %s", err->path, msg);
    } else if (err->line) {
        n = snprintf(buf, size, "%u:%u: %s", err->line, err->column, msg);
    } else {
        n = snprintf(buf, size, "%s", msg);
    }
    return n < 0 ? 0 : (size_t)n;
}
