// SPDX-License-Identifier: MIT
// Private to the tool: the control API of `lockstep relay --api HOST:PORT`
// (SPEC.md §17.13). An HTTP server (libmicrohttpd, linked into the `lockstep`
// tool only, never into liblockstep) on the relay's own libuv loop: sessions
// created, listed, inspected and ended; recordings fetched; match results as
// long-polled events; /healthz and /readyz for orchestrators. Every route but
// the two probes wants `Authorization: Bearer TOKEN`.
//
// The relay program (tools/cmd_relay.c) owns the relay core, the recordings and
// the drain; it tells the API what happens (relay_api_session_added,
// relay_api_relay_event, relay_api_recording_done, relay_api_set_draining) and
// the API asks it to create sessions (relay_api_host.create).
#ifndef LS_TOOLS_RELAY_API_H
#define LS_TOOLS_RELAY_API_H

#include "relay_api_json.h"
#include "relay_result.h"
#include "relay_ws.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The API server.
typedef struct relay_api relay_api;

typedef struct relay_api_totals relay_api_totals;

/// What the API needs of the relay program. Its relay cores may run on other
/// threads (--workers): every handler runs between hold(user, true) and
/// hold(user, false), which stop those threads where they touch nothing.
typedef struct relay_api_host {
    void *user; ///< Passed to the callbacks.
    /// The relay core that holds session id (sessions, credentials, counters).
    ls_relay *(*relay_of)(void *user, uint32_t id);
    /// Its UDP address, "a.b.c.d:port" (the worker's port: the players' --relay).
    void (*relay_addr)(void *user, uint32_t id, char *buf, size_t size);
    /// Stop (true) or restart (false) the threads that run relay cores (may be NULL).
    void (*hold)(void *user, bool on);
    /// Relay-wide counters summed over every core; adds the datagram-handling
    /// histogram of cores the API does not observe (relay_api_observe_ns) to *tot.
    void (*counters)(void *user, ls_relay_stats *st, relay_api_totals *tot);
    /// Create the session *req asks for (and its recording); *id its id. False with
    /// *status (400, 409, 500, 503) and *err when it cannot.
    bool (*create)(void *user, const relay_api_session_req *req, uint32_t *id, int *status,
                   relay_api_error *err);
    /// The core produced datagrams or events (a session was ended): send and log them.
    void (*pump)(void *user);
    /// The relay's clock, microseconds.
    uint64_t (*now_us)(void *user);
} relay_api_host;

/// API settings.
typedef struct relay_api_def {
    const char *host;         ///< IPv4 address to listen on (127.0.0.1 unless asked).
    uint16_t port;            ///< Port (0: any free one; relay_api_port says which).
    const char *token;        ///< The operator's bearer token (hashed, then forgotten).
    void *loop;               ///< The uv_loop_t* of the relay (ls_uv_loop).
    uint32_t max_sessions;    ///< Session ids the relay can hand out (1..).
    ls_session_def defaults;  ///< POST /v1/sessions fields not given (the command line's).
    uint64_t default_seed;    ///< Seed of a session that names none (--seed).
    uint64_t scene_hash;      ///< XXH3-64 of the recordings' scene (0 with has_scene) ...
    bool has_scene;           ///< ... when the relay records.
    bool signing;             ///< Recordings are signed.
    uint32_t poll_timeout_ms; ///< Longest /v1/events wait (default 30000 when 0).
    relay_api_host host_fns;  ///< The relay program.
} relay_api_def;

/// Start listening; NULL with msg filled on error (address in use, bad host).
relay_api *relay_api_create(const relay_api_def *def, char *msg, size_t msg_size);
/// The port it listens on.
uint16_t relay_api_port(const relay_api *a);
/// Close every connection and the listening socket (on the uv loop: before ls_uv_destroy).
void relay_api_destroy(relay_api *a);

/// Session id exists (made on the command line, or by host.create): its settings, the
/// seed and path of its recording (NULL: not recorded), and who made it.
void relay_api_session_added(relay_api *a, uint32_t id, const ls_session_def *sd, uint64_t seed,
                             const char *recording, bool via_api);
/// A relay event (every one the program pops): verdicts are kept per session, and
/// LS_RELAY_EV_SESSION_DONE publishes the session's match_result event.
void relay_api_relay_event(relay_api *a, const ls_relay_event *ev);
/// Session id's recording was finished with `ticks` ticks (ok: without an error).
void relay_api_recording_done(relay_api *a, uint32_t id, uint32_t ticks, bool ok);
/// Session id's match_result waits for its game's result (the relay re-simulates
/// its recording): published at relay_api_match_result, not at SESSION_DONE.
void relay_api_expect_result(relay_api *a, uint32_t id);
/// Session id's game result (NULL: none after all, e.g. the recording failed):
/// the match_result event carries it as "result" (SPEC.md §17.13).
void relay_api_match_result(relay_api *a, uint32_t id, const relay_result *res);
/// Draining (SIGTERM): /readyz answers 503 and POST /v1/sessions 503.
void relay_api_set_draining(relay_api *a, bool draining);

// ---- what the API knows, for /metrics (tools/relay_metrics.c) ----

/// Upper bounds (microseconds) of the relay's datagram-handling histogram;
/// a last bucket counts everything (+Inf).
#define RELAY_API_LATENCY_BUCKETS 9
extern const uint32_t relay_api_latency_bounds_us[RELAY_API_LATENCY_BUCKETS];

/// Totals over the sessions the relay has made.
struct relay_api_totals {
    uint32_t waiting, running, done; ///< Sessions by state (as GET /v1/sessions says).
    uint32_t peers;                  ///< Player slots joined now (running sessions).
    uint32_t recordings_ok;          ///< Recordings finished without an error.
    uint32_t recordings_failed;      ///< Recordings that ended with an error.
    bool draining;                   ///< SIGTERM: no new sessions.
    /// Datagram handling, receive to the datagrams it produced sent: counts per
    /// bucket (cumulative is the reader's job), the last is +Inf.
    uint64_t latency[RELAY_API_LATENCY_BUCKETS + 1];
    uint64_t latency_count;  ///< Observations.
    uint64_t latency_sum_ns; ///< Their sum, nanoseconds.
    bool ws;                 ///< WebSocket listeners run (--ws): ws_stats counts.
    relay_ws_stats ws_stats; ///< Their counters, summed over the workers.
};

/// The totals now.
void relay_api_totals_get(const relay_api *a, relay_api_totals *out);
/// Relay-wide counters over every core, and the totals with every core's histogram
/// (call it from a route handler: the cores are held).
void relay_api_counters(relay_api *a, ls_relay_stats *st, relay_api_totals *tot);
/// One datagram handled in `ns` nanoseconds (receive, the core, the sends).
void relay_api_observe_ns(relay_api *a, uint64_t ns);
/// The histogram bucket of `ns` (RELAY_API_LATENCY_BUCKETS: +Inf), for cores that
/// keep their own histogram (worker threads).
uint32_t relay_api_latency_bucket(uint64_t ns);

// ---- routes: the extension point (/metrics registers here) ----

/// One request being answered.
typedef struct relay_api_request relay_api_request;

/// A route handler: answer with relay_api_respond / relay_api_respond_error.
typedef void (*relay_api_route_fn)(relay_api *a, relay_api_request *rq);

/// Register `method` `pattern` (segments; "*" matches one path segment, e.g.
/// "/v1/sessions/*/recording"); `auth`: wants the bearer token. False when the
/// table is full (16 routes beyond the built-in ones).
bool relay_api_route_add(relay_api *a, const char *method, const char *pattern, bool auth,
                         relay_api_route_fn fn);
/// The request's path segment `i` (0-based: "/v1/sessions/7" has "v1", "sessions", "7").
const char *relay_api_segment(const relay_api_request *rq, uint32_t i);
/// Answer with `status` and a body (copied) of `content_type`.
void relay_api_respond(relay_api_request *rq, unsigned status, const char *content_type,
                       const char *body, size_t len);
/// Answer with `status` and {"error": err->error, "where": err->where}.
void relay_api_respond_error(relay_api_request *rq, unsigned status, const relay_api_error *err);

#endif
