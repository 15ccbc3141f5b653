// SPDX-License-Identifier: MIT
// Private to the tool: a program's line log as text or as JSON lines
// (`lockstep relay --log-json`, SPEC.md §17.13). Every line is written as
// text ("WORD key=value ... [words]") and, in JSON mode, turned into one
// object: {"t_ms":T,"event":WORD, key:value ..., "msg":"words"}.
#ifndef LS_TOOLS_LOG_LINE_H
#define LS_TOOLS_LOG_LINE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/// Where a log goes and how.
typedef struct log_sink {
    FILE *f;     ///< The stream.
    bool json;   ///< One JSON object per line.
    uint64_t t0; ///< Clock origin of t_ms (the caller's microseconds).
} log_sink;

/// Write one line (printf format, one line, newline optional) at time now_us.
void log_line(const log_sink *s, uint64_t now_us, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/// The JSON object of one text line (no newline) to f: the first word is the
/// event ("event NAME ..." lines: NAME), key=value words are members (digits
/// only: a number; anything else: a string), the other words join into "msg".
void log_line_json(FILE *f, uint64_t t_ms, const char *line);

#endif
