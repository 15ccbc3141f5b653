// SPDX-License-Identifier: MIT
// Private to the tool: the one JSON writer behind every `--json` output.
// Strings are escaped (quotes, backslashes, control characters; bytes that are
// not UTF-8 become U+FFFD), commas and nesting are tracked, so the output is
// valid JSON whatever the data.
#ifndef LS_TOOLS_JSON_H
#define LS_TOOLS_JSON_H

#include "ls/fx.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

/// A JSON document being written to a stream.
typedef struct json_out {
    FILE *f;
    int depth;
    bool has_items[JSON_MAX_DEPTH]; ///< Per open container: a value was written.
    bool after_key;                 ///< A key was written: the next value follows it.
} json_out;

/// Write s as a JSON string literal (with quotes).
void json_write_string(FILE *f, const char *s);

/// Start a document on f.
void json_init(json_out *j, FILE *f);
void json_object_begin(json_out *j);
void json_object_end(json_out *j);
void json_array_begin(json_out *j);
void json_array_end(json_out *j);
/// The key of the next member of the current object.
void json_key(json_out *j, const char *key);
void json_str(json_out *j, const char *s);
void json_u64(json_out *j, uint64_t v);
void json_i64(json_out *j, int64_t v);
/// A finite double with `decimals` fraction digits (null if not finite).
void json_double(json_out *j, double v, int decimals);
void json_bool(json_out *j, bool v);
void json_null(json_out *j);
/// A 64-bit value as a string of 16 lowercase hex digits (checksums).
void json_hex64(json_out *j, uint64_t v);
/// A Q16.16 value as its shortest exact decimal number (ls_fx_format).
void json_fx(json_out *j, ls_fx v);
/// End the document: a newline, flushed.
void json_finish(json_out *j);

#endif
