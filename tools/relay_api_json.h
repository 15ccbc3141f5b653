// SPDX-License-Identifier: MIT
// Private to the tool: the request bodies of `lockstep relay --api` (SPEC.md
// §17.13). A bounded parser for one flat JSON object (string, whole-number,
// true/false/null members; at most RELAY_API_JSON_MEMBERS of them), and the
// reading of a POST /v1/sessions body into an ls_session_def. Every problem is
// one message naming what is wrong and where (a byte offset, or the field).
// It allocates nothing and reads at most `len` bytes: the body comes from
// whoever reached the port (the token is checked first, but even an operator's
// script may send garbage). fuzz/relay_api_json.c drives it.
#ifndef LS_TOOLS_RELAY_API_JSON_H
#define LS_TOOLS_RELAY_API_JSON_H

#include "ls/net_relay.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Largest request body accepted, bytes (larger: 413).
#define RELAY_API_BODY_MAX 16384
/// Most members of a request object.
#define RELAY_API_JSON_MEMBERS 32
/// Longest member name, bytes (NUL not counted: 31).
#define RELAY_API_JSON_KEY 32
/// Longest string value, bytes (NUL not counted: 127).
#define RELAY_API_JSON_TEXT 128

/// What a member's value is.
typedef enum relay_api_json_kind {
    RELAY_API_JSON_NUMBER = 1, ///< A whole number 0..2^64-1 (no sign, fraction or exponent).
    RELAY_API_JSON_STRING = 2, ///< A string (escapes decoded, valid UTF-8).
    RELAY_API_JSON_BOOL = 3,   ///< true or false.
    RELAY_API_JSON_NULL = 4,   ///< null.
} relay_api_json_kind;

/// One member of the object.
typedef struct relay_api_json_member {
    char key[RELAY_API_JSON_KEY];   ///< Its name.
    relay_api_json_kind kind;       ///< Its value's kind.
    uint64_t number;                ///< NUMBER: the value.
    bool boolean;                   ///< BOOL: the value.
    char text[RELAY_API_JSON_TEXT]; ///< STRING: the value, NUL-terminated.
} relay_api_json_member;

/// A parsed flat object.
typedef struct relay_api_json_object {
    relay_api_json_member m[RELAY_API_JSON_MEMBERS]; ///< In document order.
    uint32_t n;                                      ///< How many.
} relay_api_json_object;

/// Why a request was refused: the `error` and `where` of the 4xx body.
typedef struct relay_api_error {
    char error[256]; ///< What is wrong, one sentence.
    char where[64];  ///< "body", "byte N", "field NAME", "path", "query after", ...
} relay_api_error;

/// Fill *e (returns false, for `return relay_api_fail(...)`).
bool relay_api_fail(relay_api_error *e, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/// Parse body[0..len) as one flat JSON object; false with *err (where: "byte N").
bool relay_api_json_parse(const char *body, size_t len, relay_api_json_object *out,
                          relay_api_error *err);

/// A POST /v1/sessions request, read.
typedef struct relay_api_session_req {
    ls_session_def sd;   ///< The session (defaults: the relay's command line).
    uint64_t seed;       ///< Seed written into its recording.
    bool has_scene_hash; ///< The caller named the scene it expects ...
    uint64_t scene_hash; ///< ... by its XXH3-64 (the recordings' scene hash).
} relay_api_session_req;

/// Read a POST /v1/sessions body: `players` is required; spectators, tick_rate,
/// input_size, input_delay, ticks, timeout_ms, join_timeout_ms, history, rejoin_ms,
/// seed and scene_hash are optional (defaults from *defaults and default_seed).
/// Unknown fields, wrong kinds and values out of range are refused naming the field.
bool relay_api_session_request(const char *body, size_t len, const ls_session_def *defaults,
                               uint64_t default_seed, relay_api_session_req *out,
                               relay_api_error *err);

#endif
