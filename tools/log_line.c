// SPDX-License-Identifier: MIT
// A program's line log as text or JSON lines (log_line.h). Why one converter
// and not a JSON writer per message: the relay's text lines are already
// "WORD key=value" records that tests, scripts and people read; turning each
// into an object keeps both forms saying exactly the same, field for field.
#include "log_line.h"

#include "json.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static bool all_digits(const char *s, size_t n)
{
    if (n == 0 || n > 19 || (n > 1 && s[0] == '0')) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
    }
    return true;
}

void log_line_json(FILE *f, uint64_t t_ms, const char *line)
{
    char buf[4096], key[128], msg[1024];
    size_t len = strcspn(line, "\n");
    len = len < sizeof buf - 1 ? len : sizeof buf - 1;
    memcpy(buf, line, len);
    buf[len] = '\0';
    json_out j;
    json_init(&j, f);
    json_object_begin(&j);
    json_key(&j, "t_ms"), json_u64(&j, t_ms);
    char *save = NULL, *w = strtok_r(buf, " ", &save);
    if (w && strcmp(w, "event") == 0) {
        w = strtok_r(NULL, " ", &save);
    }
    json_key(&j, "event"), json_str(&j, w ? w : "");
    msg[0] = '\0';
    size_t mn = 0;
    while ((w = strtok_r(NULL, " ", &save)) != NULL) {
        char *eq = strchr(w, '=');
        if (eq && eq != w && (size_t)(eq - w) < sizeof key) {
            memcpy(key, w, (size_t)(eq - w));
            key[eq - w] = '\0';
            json_key(&j, key);
            const char *v = eq + 1;
            if (all_digits(v, strlen(v))) {
                unsigned long long x = strtoull(v, NULL, 10);
                json_u64(&j, x);
            } else {
                json_str(&j, v);
            }
        } else {
            size_t n = strlen(w);
            if (mn + n + 2 < sizeof msg) {
                if (mn) {
                    msg[mn++] = ' ';
                }
                memcpy(msg + mn, w, n + 1);
                mn += n;
            }
        }
    }
    if (mn) {
        json_key(&j, "msg"), json_str(&j, msg);
    }
    json_object_end(&j);
    json_finish(&j); // the newline, flushed
}

void log_line(const log_sink *s, uint64_t now_us, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!s->json) {
        fputs(buf, s->f);
        return;
    }
    uint64_t t = now_us > s->t0 ? now_us - s->t0 : 0;
    log_line_json(s->f, t / 1000, buf);
}
