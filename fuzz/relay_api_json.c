// SPDX-License-Identifier: MIT
// libFuzzer harness for the control API's request bodies (tools/relay_api_json.c):
// the flat-object parser and the POST /v1/sessions reader. Any input either
// parses, giving members whose names and strings are NUL-terminated within
// their bounds, or fails with a message and a place; a session request that is
// accepted has every field in its range. Nothing may crash or read past the
// body (the input is copied to an exact-size buffer without a NUL).
#include "relay_api_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > RELAY_API_BODY_MAX) {
        return 0; // the server answers 413 before parsing
    }
    char *body = malloc(size ? size : 1);
    if (!body) {
        return 0;
    }
    memcpy(body, data, size);
    static relay_api_json_object obj;
    relay_api_error err;
    if (relay_api_json_parse(body, size, &obj, &err)) {
        if (obj.n > RELAY_API_JSON_MEMBERS) {
            abort();
        }
        for (uint32_t i = 0; i < obj.n; i++) {
            if (memchr(obj.m[i].key, 0, sizeof obj.m[i].key) == NULL ||
                memchr(obj.m[i].text, 0, sizeof obj.m[i].text) == NULL) {
                abort();
            }
        }
    } else if (!err.error[0] || !err.where[0]) {
        abort(); // every refusal says what and where
    }
    // The library's defaults (ls_default_session_def), spelled out: the harness links
    // the parser alone.
    ls_session_def d = {4, 60, 1, 3, 0, 3000, 30000, 0, 1024, 0, 0};
    relay_api_session_req req;
    if (relay_api_session_request(body, size, &d, 7, &req, &err)) {
        const ls_session_def *s = &req.sd;
        if (s->slots < 2 || s->slots > LS_NET_MAX_SLOTS || s->tick_rate < 1 ||
            s->tick_rate > 1000 || s->input_size < 1 || s->input_size > LS_NET_MAX_INPUT_SIZE ||
            s->delay > LS_NET_MAX_DELAY || s->timeout_ms < 10 || s->history < 64 ||
            s->history > 65536 || s->spectators > LS_NET_MAX_SLOTS) {
            abort();
        }
    } else if (!err.error[0] || !err.where[0]) {
        abort();
    }
    free(body);
    return 0;
}
