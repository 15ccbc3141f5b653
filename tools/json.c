// SPDX-License-Identifier: MIT
// The tool's JSON writer (see json.h).
#include "json.h"

#include "ls/fx_text.h"

// Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one.
static int utf8_length(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c < 0x80             ? 1
            : (c & 0xE0) == 0xC0 ? 2
            : (c & 0xF0) == 0xE0 ? 3
            : (c & 0xF8) == 0xF0 ? 4
                                 : 0;
    if (n == 0 || (n == 2 && c < 0xC2) || (n == 4 && c > 0xF4)) {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
    }
    if ((n == 3 && c == 0xE0 && s[1] < 0xA0) || (n == 3 && c == 0xED && s[1] >= 0xA0) ||
        (n == 4 && c == 0xF0 && s[1] < 0x90) || (n == 4 && c == 0xF4 && s[1] >= 0x90)) {
        return 0; // overlong, surrogate or beyond U+10FFFF
    }
    return n;
}

void json_write_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', f), fputc((int)c, f), p++;
        } else if (c == '\n') {
            fputs("\\n", f), p++;
        } else if (c == '\t') {
            fputs("\\t", f), p++;
        } else if (c == '\r') {
            fputs("\\r", f), p++;
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c), p++;
        } else {
            int n = utf8_length(p);
            if (n == 0) {
                fputs("\\ufffd", f), p++;
            } else {
                fwrite(p, 1, (size_t)n, f), p += n;
            }
        }
    }
    fputc('"', f);
}

void json_init(json_out *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->after_key = false;
    j->has_items[0] = false;
}

// Before any value: the comma between array items (objects put it before keys).
static void before_value(json_out *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        // Deeper than JSON_MAX_DEPTH shares the last flag (never happens in the tool).
        int level = j->depth <= JSON_MAX_DEPTH ? j->depth - 1 : JSON_MAX_DEPTH - 1;
        if (j->has_items[level]) {
            fputc(',', j->f);
        }
        j->has_items[level] = true;
    }
}

static void open_container(json_out *j, int c)
{
    before_value(j);
    fputc(c, j->f);
    if (j->depth < JSON_MAX_DEPTH) {
        j->has_items[j->depth] = false;
    }
    j->depth++;
}

static void close_container(json_out *j, int c)
{
    j->depth--;
    fputc(c, j->f);
}

void json_object_begin(json_out *j)
{
    open_container(j, '{');
}

void json_object_end(json_out *j)
{
    close_container(j, '}');
}

void json_array_begin(json_out *j)
{
    open_container(j, '[');
}

void json_array_end(json_out *j)
{
    close_container(j, ']');
}

void json_key(json_out *j, const char *key)
{
    before_value(j);
    json_write_string(j->f, key);
    fputc(':', j->f);
    j->after_key = true;
}

void json_str(json_out *j, const char *s)
{
    before_value(j);
    json_write_string(j->f, s);
}

void json_u64(json_out *j, uint64_t v)
{
    before_value(j);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(json_out *j, int64_t v)
{
    before_value(j);
    fprintf(j->f, "%lld", (long long)v);
}

void json_double(json_out *j, double v, int decimals)
{
    before_value(j);
    // Finite: inf - inf and NaN - NaN are NaN. (mingw-w64's isfinite macro
    // also expands a float branch, which -Wconversion flags.)
    if (v - v == 0.0) {
        fprintf(j->f, "%.*f", decimals, v);
    } else {
        fputs("null", j->f);
    }
}

void json_bool(json_out *j, bool v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->f);
}

void json_null(json_out *j)
{
    before_value(j);
    fputs("null", j->f);
}

void json_hex64(json_out *j, uint64_t v)
{
    before_value(j);
    fprintf(j->f, "\"%016llx\"", (unsigned long long)v);
}

void json_fx(json_out *j, ls_fx v)
{
    char text[LS_FX_TEXT_MAX];
    ls_fx_format(v, text);
    before_value(j);
    fputs(text, j->f);
}

void json_finish(json_out *j)
{
    fputc('\n', j->f);
    fflush(j->f);
}
