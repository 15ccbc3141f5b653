// SPDX-License-Identifier: MIT
// The control API's request bodies: one flat JSON object, read with bounds on
// every length and count (tools/relay_api_json.h).
//
// Why our own parser and not a library: the API takes one small flat object of
// numbers and a few strings; a general JSON library would accept what we then
// have to refuse anyway (nesting, floats, huge numbers), and its errors would
// not name the byte or the field. This one is ~300 lines, allocates nothing,
// and is fuzzed (fuzz/relay_api_json.c).
#include "relay_api_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool relay_api_fail(relay_api_error *e, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->error, sizeof e->error, fmt, ap);
    va_end(ap);
    snprintf(e->where, sizeof e->where, "%s", where);
    return false;
}

typedef struct reader {
    const char *s;
    size_t len, i;
    relay_api_error *err;
} reader;

static bool at_fail(reader *r, const char *fmt, const char *what)
{
    char where[32];
    snprintf(where, sizeof where, "byte %zu", r->i);
    return relay_api_fail(r->err, where, fmt, what);
}

static void skip_ws(reader *r)
{
    while (r->i < r->len &&
           (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' || r->s[r->i] == '\r')) {
        r->i++;
    }
}

// The character at the cursor, for messages: 'x', or "byte 0xNN", or "the end".
static const char *shown(const reader *r, char *buf, size_t size)
{
    if (r->i >= r->len) {
        return "the end of the body";
    }
    unsigned char c = (unsigned char)r->s[r->i];
    if (c >= 0x20 && c < 0x7f) {
        snprintf(buf, size, "'%c'", c);
    } else {
        snprintf(buf, size, "byte 0x%02x", c);
    }
    return buf;
}

static bool expect_fail(reader *r, const char *wanted)
{
    char b[16], msg[128];
    snprintf(msg, sizeof msg, "%s wanted, found %%s", wanted);
    return at_fail(r, msg, shown(r, b, sizeof b));
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

// Length of the UTF-8 sequence at s[0..avail) (no overlongs, surrogates or
// > U+10FFFF), 0 if invalid.
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || n > avail || (n == 2 && c < 0xC2) || (n == 4 && c > 0xF4)) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
    }
    if ((n == 3 && c == 0xE0 && s[1] < 0xA0) || (n == 3 && c == 0xED && s[1] >= 0xA0) ||
        (n == 4 && c == 0xF0 && s[1] < 0x90) || (n == 4 && c == 0xF4 && s[1] >= 0x90)) {
        return 0;
    }
    return n;
}

// A string at the cursor (on its '"') into out[cap] (NUL-terminated); `what`
// names it in messages ("a name", "a value").
static bool parse_string(reader *r, char *out, size_t cap, const char *what)
{
    size_t n = 0;
    r->i++; // the opening quote
    for (;;) {
        if (r->i >= r->len) {
            return at_fail(r, "%s: the string is not closed", what);
        }
        unsigned char c = (unsigned char)r->s[r->i];
        char tmp[4];
        size_t add = 0;
        if (c == '"') {
            r->i++;
            out[n] = '\0';
            return true;
        } else if (c < 0x20) {
            return at_fail(r, "%s: control characters must be escaped in a string", what);
        } else if (c == '\\') {
            if (r->i + 1 >= r->len) {
                return at_fail(r, "%s: the string is not closed", what);
            }
            char e = r->s[r->i + 1];
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *hit = e ? strchr(from, e) : NULL;
            if (hit) {
                tmp[0] = to[hit - from];
                add = 1;
                r->i += 2;
            } else if (e == 'u') {
                unsigned v = 0;
                for (size_t k = 0; k < 4; k++) {
                    int d = r->i + 2 + k < r->len ? hex_digit(r->s[r->i + 2 + k]) : -1;
                    if (d < 0) {
                        return at_fail(r, "%s: \\u wants four hex digits", what);
                    }
                    v = v * 16 + (unsigned)d;
                }
                if (v == 0 || (v >= 0xD800 && v <= 0xDFFF)) {
                    return at_fail(r, "%s: \\u0000 and surrogate escapes are not accepted", what);
                }
                if (v < 0x80) {
                    tmp[0] = (char)v, add = 1;
                } else if (v < 0x800) {
                    tmp[0] = (char)(0xC0 | (v >> 6)), tmp[1] = (char)(0x80 | (v & 0x3F)), add = 2;
                } else {
                    tmp[0] = (char)(0xE0 | (v >> 12)), tmp[1] = (char)(0x80 | ((v >> 6) & 0x3F));
                    tmp[2] = (char)(0x80 | (v & 0x3F)), add = 3;
                }
                r->i += 6;
            } else {
                return at_fail(r, "%s: unknown escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
                               what);
            }
        } else if (c >= 0x80) {
            add = utf8_len((const unsigned char *)r->s + r->i, r->len - r->i);
            if (!add) {
                return at_fail(r, "%s: the string is not valid UTF-8", what);
            }
            memcpy(tmp, r->s + r->i, add);
            r->i += add;
        } else {
            tmp[0] = (char)c, add = 1;
            r->i++;
        }
        if (n + add >= cap) {
            char msg[96];
            snprintf(msg, sizeof msg, "%%s: longer than %zu bytes", cap - 1);
            return at_fail(r, msg, what);
        }
        memcpy(out + n, tmp, add);
        n += add;
    }
}

static bool parse_number(reader *r, uint64_t *out)
{
    size_t start = r->i;
    uint64_t v = 0;
    while (r->i < r->len && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
        unsigned d = (unsigned)(r->s[r->i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            r->i = start;
            return at_fail(r, "%s", "the number is larger than 18446744073709551615");
        }
        v = v * 10 + d;
        r->i++;
    }
    if (r->i - start > 1 && r->s[start] == '0') {
        r->i = start;
        return at_fail(r, "%s", "a number may not start with 0");
    }
    if (r->i < r->len && (r->s[r->i] == '.' || r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
        return at_fail(r, "%s", "a whole number is wanted (no fraction or exponent)");
    }
    *out = v;
    return true;
}

static bool literal(reader *r, const char *word)
{
    size_t n = strlen(word);
    if (r->len - r->i < n || memcmp(r->s + r->i, word, n) != 0) {
        return at_fail(r, "%s", "a value wanted (a string, a whole number, true, false or null)");
    }
    r->i += n;
    return true;
}

static bool parse_value(reader *r, relay_api_json_member *m)
{
    char c = r->i < r->len ? r->s[r->i] : '\0';
    if (c == '"') {
        m->kind = RELAY_API_JSON_STRING;
        return parse_string(r, m->text, sizeof m->text, "a value");
    } else if (c >= '0' && c <= '9') {
        m->kind = RELAY_API_JSON_NUMBER;
        return parse_number(r, &m->number);
    } else if (c == '-') {
        return at_fail(r, "%s", "negative numbers are not accepted");
    } else if (c == '{' || c == '[') {
        return at_fail(r, "%s", "nested objects and arrays are not accepted");
    } else if (c == 't' || c == 'f') {
        m->kind = RELAY_API_JSON_BOOL;
        m->boolean = c == 't';
        return literal(r, c == 't' ? "true" : "false");
    } else if (c == 'n') {
        m->kind = RELAY_API_JSON_NULL;
        return literal(r, "null");
    }
    return expect_fail(r, "a value (a string, a whole number, true, false or null)");
}

bool relay_api_json_parse(const char *body, size_t len, relay_api_json_object *out,
                          relay_api_error *err)
{
    reader r = {body, body ? len : 0, 0, err};
    memset(out, 0, sizeof *out);
    skip_ws(&r);
    if (r.i >= r.len) {
        return relay_api_fail(err, "body", "the body is empty: a JSON object is wanted");
    }
    if (r.s[r.i] != '{') {
        return expect_fail(&r, "'{' (a JSON object)");
    }
    r.i++;
    skip_ws(&r);
    if (r.i < r.len && r.s[r.i] == '}') {
        r.i++;
    } else {
        for (;;) {
            skip_ws(&r);
            if (r.i >= r.len || r.s[r.i] != '"') {
                return expect_fail(&r, "a member name in quotes");
            }
            if (out->n == RELAY_API_JSON_MEMBERS) {
                return at_fail(&r, "more than %s members", "32");
            }
            relay_api_json_member *m = &out->m[out->n];
            size_t key_at = r.i;
            if (!parse_string(&r, m->key, sizeof m->key, "a member name")) {
                return false;
            }
            for (uint32_t k = 0; k < out->n; k++) {
                if (strcmp(out->m[k].key, m->key) == 0) {
                    r.i = key_at;
                    char where[64];
                    snprintf(where, sizeof where, "field %.40s", m->key);
                    return relay_api_fail(err, where, "the field is given twice");
                }
            }
            skip_ws(&r);
            if (r.i >= r.len || r.s[r.i] != ':') {
                return expect_fail(&r, "':' after the member name");
            }
            r.i++;
            skip_ws(&r);
            if (!parse_value(&r, m)) {
                return false;
            }
            out->n++;
            skip_ws(&r);
            if (r.i < r.len && r.s[r.i] == ',') {
                r.i++;
                continue;
            }
            if (r.i < r.len && r.s[r.i] == '}') {
                r.i++;
                break;
            }
            return expect_fail(&r, "',' or '}'");
        }
    }
    skip_ws(&r);
    if (r.i < r.len) {
        return expect_fail(&r, "nothing after the object");
    }
    return true;
}

// ---- POST /v1/sessions ----

typedef struct session_field {
    const char *name;
    uint64_t min, max;
    size_t offset; // into ls_session_def
    const char *means;
} session_field;

#define SD_FIELD(f) offsetof(ls_session_def, f)

static const session_field session_fields[] = {
    {"players", 2, LS_NET_MAX_SLOTS, SD_FIELD(slots), "player slots"},
    {"spectators", 0, LS_NET_MAX_SLOTS, SD_FIELD(spectators), "spectator credentials"},
    {"tick_rate", 1, 1000, SD_FIELD(tick_rate), "ticks per second"},
    {"input_size", 1, LS_NET_MAX_INPUT_SIZE, SD_FIELD(input_size), "bytes per slot per tick"},
    {"input_delay", 0, LS_NET_MAX_DELAY, SD_FIELD(delay), "input delay in ticks"},
    {"ticks", 0, 100000000, SD_FIELD(ticks), "match length in ticks, 0 = open-ended"},
    {"timeout_ms", 10, 3600000, SD_FIELD(timeout_ms), "silence that disconnects a peer"},
    {"join_timeout_ms", 0, 3600000, SD_FIELD(join_timeout_ms), "time to join, 0 = forever"},
    {"history", 64, 65536, SD_FIELD(history), "final ticks kept for spectators"},
    {"rejoin_ms", 0, 3600000, SD_FIELD(rejoin_ms), "rejoin window after a timeout, 0 = never"},
};

#define N_SESSION_FIELDS (sizeof session_fields / sizeof session_fields[0])
#define FIELD_LIST                                                                                 \
    "players, spectators, tick_rate, input_size, input_delay, ticks, timeout_ms, "                 \
    "join_timeout_ms, history, rejoin_ms, seed, scene_hash"

static bool field_fail(relay_api_error *err, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool field_fail(relay_api_error *err, const char *name, const char *fmt, ...)
{
    snprintf(err->where, sizeof err->where, "field %.40s", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->error, sizeof err->error, fmt, ap);
    va_end(ap);
    return false;
}

bool relay_api_session_request(const char *body, size_t len, const ls_session_def *defaults,
                               uint64_t default_seed, relay_api_session_req *out,
                               relay_api_error *err)
{
    static relay_api_json_object obj; // 5 KiB: not on the stack of the event loop
    memset(out, 0, sizeof *out);
    out->sd = *defaults;
    out->seed = default_seed;
    if (!relay_api_json_parse(body, len, &obj, err)) {
        return false;
    }
    bool players = false;
    for (uint32_t k = 0; k < obj.n; k++) {
        const relay_api_json_member *m = &obj.m[k];
        if (strcmp(m->key, "seed") == 0) {
            if (m->kind != RELAY_API_JSON_NUMBER) {
                return field_fail(err, m->key, "seed wants a whole number 0..2^64-1");
            }
            out->seed = m->number;
            continue;
        }
        if (strcmp(m->key, "scene_hash") == 0) {
            uint64_t v = 0;
            bool ok = m->kind == RELAY_API_JSON_STRING && strlen(m->text) == 16;
            for (size_t i = 0; ok && i < 16; i++) {
                int d = hex_digit(m->text[i]);
                ok = d >= 0;
                v = v << 4 | (uint64_t)(d < 0 ? 0 : d);
            }
            if (!ok) {
                return field_fail(err, m->key,
                                  "scene_hash wants 16 hex digits (the XXH3-64 of the scene, as "
                                  "`lockstep replay info` prints it)");
            }
            out->has_scene_hash = true;
            out->scene_hash = v;
            continue;
        }
        const session_field *f = NULL;
        for (size_t i = 0; i < N_SESSION_FIELDS && !f; i++) {
            f = strcmp(m->key, session_fields[i].name) == 0 ? &session_fields[i] : NULL;
        }
        if (!f) {
            return field_fail(err, m->key, "unknown field (a session has: " FIELD_LIST ")");
        }
        if (m->kind != RELAY_API_JSON_NUMBER || m->number < f->min || m->number > f->max) {
            return field_fail(err, m->key, "%s (%s) wants a whole number %llu..%llu", f->name,
                              f->means, (unsigned long long)f->min, (unsigned long long)f->max);
        }
        uint32_t v = (uint32_t)m->number;
        memcpy((char *)&out->sd + f->offset, &v, sizeof v);
        players |= f == &session_fields[0];
    }
    if (!players) {
        return field_fail(err, "players", "missing: players (2..16 player slots) is required");
    }
    // As `lockstep relay --rejoin-ms`: room for the snapshot a player uploads for the
    // rejoiner (the relay simulates nothing, so it has no state of its own to give).
    out->sd.state_max = out->sd.rejoin_ms ? 4u << 20 : 0;
    return true;
}
