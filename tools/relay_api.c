// SPDX-License-Identifier: MIT
// The control API of `lockstep relay --api` (tools/relay_api.h, SPEC.md §17.13).
//
// Why libmicrohttpd in "external select" mode on the relay's libuv loop, and no
// thread: the relay core (ls_relay) is single-threaded and sans-IO. With MHD's
// internal thread every handler would need a lock around the core and a
// uv_async handoff for whatever the core produces. Instead MHD runs with
// MHD_USE_EPOLL and no thread of its own: its one epoll descriptor is watched
// by a uv_poll handle on the relay's loop and MHD_run is called when it is
// readable (and from a uv timer for MHD's connection timeouts and the long-poll
// deadlines). Every handler therefore runs on the loop thread between two
// datagrams, calls the core directly, and the core never sees two callers.
// A handler is short (no file is read into memory: a recording is streamed from
// its descriptor by MHD), so the relay's pacing is not disturbed.
//
// Why long-polls are suspended connections: GET /v1/events waits for the next
// match result without a thread by MHD_suspend_connection; publishing an event
// resumes the waiters, and the timer resumes those whose time is up.
#define _POSIX_C_SOURCE 200809L // open_memstream
#include "relay_api.h"

#include "json.h"
#include "ls/net_relay.h"
#include "net_tool.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#define MAX_ROUTES      32
#define MAX_SEGMENTS    8
#define PATH_MAX_LEN    256
#define EVENTS_KEPT     1024 ///< Published events kept for /v1/events (older ones are gone).
#define EVENTS_PAGE     100  ///< Most events in one answer.
#define VERDICTS_KEPT   32   ///< Verdicts kept per session (all are counted).
#define DEFAULT_POLL_MS 30000

typedef struct route {
    const char *method, *pattern;
    bool auth;
    relay_api_route_fn fn;
} route;

// One verdict the relay reached about a session (ls_relay_event, the kinds that name someone).
typedef struct verdict {
    ls_relay_event_type type;
    uint32_t slot, tick;
    uint16_t slots;
    uint8_t reason;
} verdict;

typedef struct api_session {
    bool known, via_api, done, ended_by_operator;
    bool awaits_result; ///< match_result waits for relay_api_match_result ...
    bool published;     ///< ... until it was published.
    bool has_result;
    relay_result result;  ///< The game's result (has_result).
    uint32_t final_ticks; ///< At SESSION_DONE.
    ls_session_def sd;
    uint64_t seed;
    char *recording; ///< Its path (NULL: not recorded).
    bool recorded, recording_ok;
    uint32_t recording_ticks;
    uint32_t desyncs, disputes, disconnects, rejoins;
    verdict v[VERDICTS_KEPT];
    uint32_t nv;
} api_session;

typedef struct api_event {
    uint64_t seq;
    char *json; ///< The event object, no newline.
} api_event;

struct relay_api_request {
    relay_api *a;
    struct MHD_Connection *c;
    const route *rt;
    char path[PATH_MAX_LEN];
    char *seg[MAX_SEGMENTS];
    uint32_t nseg;
    char *body;
    size_t len, cap;
    bool too_big, answered;
    char allow[64]; ///< 405: the methods the path has.
    // GET /v1/events while it waits.
    bool suspended, resumed;
    uint64_t deadline_ms;
    relay_api_request *next_waiter;
};

struct relay_api {
    relay_api_def def;
    char host[64];
    struct MHD_Daemon *d;
    uv_loop_t *loop;
    uv_poll_t *poll;
    uv_timer_t *timer;
    uint16_t port;
    uint8_t token_hash[crypto_generichash_BYTES];
    route routes[MAX_ROUTES];
    uint32_t nroutes;
    api_session *sess; ///< def.max_sessions of them, by id - 1.
    api_event ev[EVENTS_KEPT];
    uint64_t next_seq; ///< The next event's number (the first is 1).
    relay_api_request *waiters;
    bool draining;
    uint64_t latency[RELAY_API_LATENCY_BUCKETS + 1];
    uint64_t latency_count, latency_sum_ns;
};

const uint32_t relay_api_latency_bounds_us[RELAY_API_LATENCY_BUCKETS] = {10,  25,   50,   100,  250,
                                                                         500, 1000, 2500, 10000};

// ---- answering ----

static void add_common_headers(struct MHD_Response *r, const char *content_type)
{
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
}

void relay_api_respond(relay_api_request *rq, unsigned status, const char *content_type,
                       const char *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
    if (!r) {
        return; // out of memory: MHD closes the connection
    }
    add_common_headers(r, content_type);
    if (status == MHD_HTTP_UNAUTHORIZED) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"lockstep relay\"");
    }
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED && rq->allow[0]) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rq->allow);
    }
    MHD_queue_response(rq->c, status, r);
    MHD_destroy_response(r);
    rq->answered = true;
}

// A JSON body written with json_out into memory.
typedef struct membuf {
    char *p;
    size_t n;
    FILE *f;
} membuf;

static FILE *mb_open(membuf *m)
{
    m->p = NULL;
    m->n = 0;
    m->f = open_memstream(&m->p, &m->n);
    return m->f;
}

static void mb_respond(relay_api_request *rq, unsigned status, membuf *m, bool secret)
{
    if (!m->f) {
        return;
    }
    fclose(m->f);
    relay_api_respond(rq, status, "application/json", m->p, m->n);
    if (secret) {
        sodium_memzero(m->p, m->n);
    }
    free(m->p);
}

void relay_api_respond_error(relay_api_request *rq, unsigned status, const relay_api_error *err)
{
    membuf m;
    json_out j;
    if (!mb_open(&m)) {
        return;
    }
    json_init(&j, m.f);
    json_object_begin(&j);
    json_key(&j, "error"), json_str(&j, err->error);
    json_key(&j, "where"), json_str(&j, err->where);
    json_object_end(&j);
    json_finish(&j);
    mb_respond(rq, status, &m, false);
}

static void fail(relay_api_request *rq, unsigned status, const char *where, const char *what)
{
    relay_api_error e;
    relay_api_fail(&e, where, "%s", what);
    relay_api_respond_error(rq, status, &e);
}

// ---- routes ----

static bool pattern_matches(const char *pattern, const relay_api_request *rq)
{
    uint32_t i = 0;
    const char *p = pattern;
    while (*p == '/') {
        p++;
        size_t n = strcspn(p, "/");
        if (i >= rq->nseg) {
            return false;
        }
        if (!(n == 1 && p[0] == '*') &&
            (strlen(rq->seg[i]) != n || memcmp(rq->seg[i], p, n) != 0)) {
            return false;
        }
        i++;
        p += n;
    }
    return i == rq->nseg;
}

bool relay_api_route_add(relay_api *a, const char *method, const char *pattern, bool auth,
                         relay_api_route_fn fn)
{
    if (a->nroutes == MAX_ROUTES) {
        return false;
    }
    a->routes[a->nroutes++] = (route){method, pattern, auth, fn};
    return true;
}

const char *relay_api_segment(const relay_api_request *rq, uint32_t i)
{
    return i < rq->nseg ? rq->seg[i] : NULL;
}

// Split the path into segments (empty ones are refused: "//" is no route).
static bool split_path(relay_api_request *rq, const char *url)
{
    size_t n = strlen(url);
    if (n >= sizeof rq->path || url[0] != '/') {
        return false;
    }
    memcpy(rq->path, url, n + 1);
    rq->nseg = 0;
    if (n == 1) {
        return true; // "/": no segments
    }
    char *p = rq->path + 1;
    for (;;) {
        if (rq->nseg == MAX_SEGMENTS || *p == '/' || *p == '\0') {
            return false;
        }
        rq->seg[rq->nseg++] = p;
        char *slash = strchr(p, '/');
        if (!slash) {
            return true;
        }
        *slash = '\0';
        p = slash + 1;
    }
}

// The token check: the BLAKE2b-256 of what was sent against that of the token,
// compared in constant time (sodium_memcmp), so neither the token's bytes nor its
// length leak through the time a refusal takes.
static bool token_ok(const relay_api *a, const char *sent)
{
    uint8_t h[crypto_generichash_BYTES];
    crypto_generichash(h, sizeof h, (const unsigned char *)sent, strlen(sent), NULL, 0);
    bool ok = sodium_memcmp(h, a->token_hash, sizeof h) == 0;
    sodium_memzero(h, sizeof h);
    return ok;
}

// The first call for a request (headers read, no body yet): route, token, size.
// True when it was answered already.
static bool begin(relay_api *a, relay_api_request *rq, const char *url, const char *method)
{
    bool split = split_path(rq, url);
    bool open_route = false, path_known = false;
    for (uint32_t i = 0; split && i < a->nroutes; i++) {
        const route *r = &a->routes[i];
        if (!pattern_matches(r->pattern, rq)) {
            continue;
        }
        path_known = true;
        open_route |= !r->auth;
        if (strcmp(r->method, method) == 0) {
            rq->rt = r;
        } else if (!strstr(rq->allow, r->method) &&
                   strlen(rq->allow) + strlen(r->method) + 3 < sizeof rq->allow) {
            if (rq->allow[0]) {
                strcat(rq->allow, ", ");
            }
            strcat(rq->allow, r->method);
        }
    }
    if (!open_route || (rq->rt && rq->rt->auth)) {
        const char *h =
            MHD_lookup_connection_value(rq->c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (!h) {
            fail(rq, MHD_HTTP_UNAUTHORIZED, "header Authorization",
                 "missing token: send the header 'Authorization: Bearer TOKEN'");
            return true;
        }
        if (strncasecmp(h, "Bearer ", 7) != 0) { // the scheme's name is case-insensitive
            fail(rq, MHD_HTTP_UNAUTHORIZED, "header Authorization",
                 "the Authorization header wants the Bearer scheme: 'Bearer TOKEN'");
            return true;
        }
        if (!token_ok(a, h + 7)) {
            fail(rq, MHD_HTTP_UNAUTHORIZED, "header Authorization", "wrong token");
            return true;
        }
    }
    if (!path_known) {
        relay_api_error e;
        relay_api_fail(&e, "path",
                       "no such route: %.100s (routes: /healthz, /readyz, /v1/sessions, "
                       "/v1/sessions/ID, /v1/sessions/ID/recording, /v1/events)",
                       url);
        relay_api_respond_error(rq, MHD_HTTP_NOT_FOUND, &e);
        return true;
    }
    if (!rq->rt) {
        relay_api_error e;
        relay_api_fail(&e, "method", "%.16s is not allowed here (allowed: %s)", method, rq->allow);
        relay_api_respond_error(rq, MHD_HTTP_METHOD_NOT_ALLOWED, &e);
        return true;
    }
    const char *cl =
        MHD_lookup_connection_value(rq->c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && (strlen(cl) > 9 || strtoul(cl, NULL, 10) > RELAY_API_BODY_MAX)) {
        fail(rq, MHD_HTTP_CONTENT_TOO_LARGE, "body",
             "the body is larger than 16384 bytes (the most a request may send)");
        return true;
    }
    return false;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    relay_api *a = cls;
    relay_api_request *rq = *con_cls;
    (void)c, (void)toe;
    if (!rq) {
        return;
    }
    for (relay_api_request **w = &a->waiters; *w; w = &(*w)->next_waiter) {
        if (*w == rq) {
            *w = rq->next_waiter;
            break;
        }
    }
    free(rq->body);
    free(rq);
    *con_cls = NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    relay_api *a = cls;
    relay_api_request *rq = *con_cls;
    (void)version;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq) {
            return MHD_NO;
        }
        rq->a = a;
        rq->c = c;
        *con_cls = rq;
        begin(a, rq, url, method);
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (rq->answered || rq->too_big) {
            return MHD_YES; // the rest of a refused body is read and dropped
        }
        if (rq->len + n > RELAY_API_BODY_MAX) {
            rq->too_big = true; // chunked, or a Content-Length that lied
            return MHD_YES;
        }
        if (rq->len + n > rq->cap) {
            size_t cap = rq->cap ? rq->cap * 2 : 1024;
            cap = cap < rq->len + n ? rq->len + n : cap;
            char *b = realloc(rq->body, cap);
            if (!b) {
                return MHD_NO;
            }
            rq->body = b, rq->cap = cap;
        }
        memcpy(rq->body + rq->len, upload, n);
        rq->len += n;
        return MHD_YES;
    }
    if (rq->answered) {
        return MHD_YES;
    }
    if (rq->too_big) {
        fail(rq, MHD_HTTP_CONTENT_TOO_LARGE, "body",
             "the body is larger than 16384 bytes (the most a request may send)");
        return MHD_YES;
    }
    const relay_api_host *h = &a->def.host_fns;
    if (h->hold) {
        h->hold(h->user, true); // the relay cores on other threads, stopped for the handler
    }
    rq->rt->fn(a, rq);
    if (h->hold) {
        h->hold(h->user, false);
    }
    return MHD_YES;
}

// ---- the loop ----

static uint64_t now_ms(const relay_api *a)
{
    uv_update_time(a->loop);
    return uv_now(a->loop);
}

static void on_timer(uv_timer_t *t);

// Run MHD once, then arm the timer for its next timeout (and the long-poll deadlines).
static void run_mhd(relay_api *a)
{
    MHD_run(a->d);
    MHD_UNSIGNED_LONG_LONG ms = 0;
    bool has = MHD_get_timeout(a->d, &ms) == MHD_YES;
    if (a->waiters && (!has || ms > 100)) {
        ms = 100, has = true; // long-poll deadlines are checked every 100 ms
    }
    if (has) {
        uv_timer_start(a->timer, on_timer, ms > 1000 ? 1000 : ms, 0);
    } else {
        uv_timer_stop(a->timer);
    }
}

static void resume(relay_api *a, relay_api_request *rq)
{
    rq->suspended = false;
    rq->resumed = true;
    MHD_resume_connection(rq->c);
    (void)a;
}

static void on_timer(uv_timer_t *t)
{
    relay_api *a = t->data;
    uint64_t now = now_ms(a);
    for (relay_api_request **w = &a->waiters; *w;) {
        relay_api_request *rq = *w;
        if (rq->deadline_ms <= now) {
            *w = rq->next_waiter;
            resume(a, rq);
        } else {
            w = &rq->next_waiter;
        }
    }
    run_mhd(a);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    (void)status, (void)events;
    run_mhd(h->data);
}

// Resume every waiter and let the timer run MHD (never MHD_run from inside a
// handler: this is called while one runs, e.g. DELETE ending a session).
static void wake_all(relay_api *a)
{
    if (!a->waiters) {
        return;
    }
    while (a->waiters) {
        relay_api_request *rq = a->waiters;
        a->waiters = rq->next_waiter;
        resume(a, rq);
    }
    uv_timer_start(a->timer, on_timer, 0, 0);
}

// ---- sessions ----

static api_session *session_at(relay_api *a, const char *text)
{
    if (!text || !*text || strlen(text) > 10) {
        return NULL;
    }
    uint64_t id = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') {
            return NULL;
        }
        id = id * 10 + (uint64_t)(*p - '0');
    }
    if (id < 1 || id > a->def.max_sessions || !a->sess[id - 1].known) {
        return NULL;
    }
    return &a->sess[id - 1];
}

static uint32_t id_of(const relay_api *a, const api_session *s)
{
    return (uint32_t)(s - a->sess) + 1;
}

static const ls_relay *relay_of(const relay_api *a, uint32_t id)
{
    return a->def.host_fns.relay_of(a->def.host_fns.user, id);
}

static const char *state_of(const relay_api *a, uint32_t id)
{
    const ls_relay *r = relay_of(a, id);
    if (ls_relay_session_done(r, id)) {
        return "done";
    }
    for (uint32_t k = 0; k < a->sess[id - 1].sd.slots; k++) {
        if (ls_relay_peer_stats_get(r, id, k).joined) {
            return "running";
        }
    }
    return "waiting";
}

static void json_mask(json_out *j, uint16_t mask)
{
    json_array_begin(j);
    for (uint32_t k = 0; k < 16; k++) {
        if (mask & (1u << k)) {
            json_u64(j, k);
        }
    }
    json_array_end(j);
}

static void json_verdicts(json_out *j, const api_session *s)
{
    json_key(j, "verdicts"), json_array_begin(j);
    for (uint32_t i = 0; i < s->nv; i++) {
        const verdict *v = &s->v[i];
        json_object_begin(j);
        switch (v->type) {
        case LS_RELAY_EV_DISCONNECTED:
            json_key(j, "kind"), json_str(j, "disconnect");
            json_key(j, "slot"), json_u64(j, v->slot);
            json_key(j, "tick"), json_u64(j, v->tick);
            json_key(j, "reason"), json_str(j, net_reason_name(v->reason));
            break;
        case LS_RELAY_EV_REJOINED:
            json_key(j, "kind"), json_str(j, "rejoin");
            json_key(j, "slot"), json_u64(j, v->slot);
            json_key(j, "tick"), json_u64(j, v->tick);
            break;
        case LS_RELAY_EV_DESYNC: // named: the slots that disagree with the majority
            json_key(j, "kind"), json_str(j, "desync");
            json_key(j, "tick"), json_u64(j, v->tick);
            json_key(j, "slots"), json_mask(j, v->slots);
            break;
        default: // LS_RELAY_EV_DISPUTED: no majority, nobody named; the slots that reported
            json_key(j, "kind"), json_str(j, "dispute");
            json_key(j, "tick"), json_u64(j, v->tick);
            json_key(j, "slots"), json_mask(j, v->slots);
            break;
        }
        json_object_end(j);
    }
    json_array_end(j);
    uint32_t total = s->desyncs + s->disputes + s->disconnects + s->rejoins;
    json_key(j, "verdicts_omitted"), json_u64(j, total - s->nv);
}

static void json_recording(json_out *j, const relay_api *a, const api_session *s)
{
    json_key(j, "recording");
    if (!s->recording) {
        json_null(j);
        return;
    }
    char url[64];
    snprintf(url, sizeof url, "/v1/sessions/%u/recording", id_of(a, s));
    json_object_begin(j);
    json_key(j, "path"), json_str(j, s->recording);
    json_key(j, "url"), json_str(j, url);
    json_key(j, "finished"), json_bool(j, s->recorded);
    json_key(j, "ticks");
    s->recorded ? json_u64(j, s->recording_ticks) : json_null(j);
    json_key(j, "signed"), json_bool(j, a->def.signing);
    json_object_end(j);
}

static void json_settings(json_out *j, const api_session *s)
{
    json_key(j, "players"), json_u64(j, s->sd.slots);
    json_key(j, "spectators"), json_u64(j, s->sd.spectators);
    json_key(j, "tick_rate"), json_u64(j, s->sd.tick_rate);
    json_key(j, "input_size"), json_u64(j, s->sd.input_size);
    json_key(j, "input_delay"), json_u64(j, s->sd.delay);
    json_key(j, "ticks"), json_u64(j, s->sd.ticks);
    json_key(j, "timeout_ms"), json_u64(j, s->sd.timeout_ms);
    json_key(j, "join_timeout_ms"), json_u64(j, s->sd.join_timeout_ms);
    json_key(j, "history"), json_u64(j, s->sd.history);
    json_key(j, "rejoin_ms"), json_u64(j, s->sd.rejoin_ms);
    json_key(j, "seed"), json_u64(j, s->seed);
}

// "result": the game's result, re-simulated by the relay (SPEC.md §17.13).
static void json_result(json_out *j, const api_session *s)
{
    const relay_result *res = &s->result;
    json_key(j, "result"), json_object_begin(j);
    json_key(j, "game"), json_str(j, res->game);
    json_key(j, "ticks"), json_u64(j, res->ticks);
    json_key(j, "verified"), json_bool(j, res->verified);
    json_key(j, "mismatch_tick");
    res->verified ? json_null(j) : json_u64(j, res->mismatch_tick);
    json_key(j, "score"), json_array_begin(j);
    for (uint32_t i = 0; i < res->score_count; i++) {
        json_i64(j, res->words[res->score_words[i]]);
    }
    json_array_end(j);
    json_key(j, "score_words"), json_array_begin(j);
    for (uint32_t i = 0; i < res->score_count; i++) {
        json_u64(j, res->score_words[i]);
    }
    json_array_end(j);
    json_key(j, "words"), json_array_begin(j);
    for (uint32_t i = 0; i < LS_WORLD_GAME_WORDS; i++) {
        json_i64(j, res->words[i]);
    }
    json_array_end(j);
    json_object_end(j);
}

// One session as GET /v1/sessions/ID shows it (full) or the list does.
static void json_session(json_out *j, relay_api *a, const api_session *s, bool full)
{
    uint32_t id = id_of(a, s);
    const ls_relay *r = relay_of(a, id);
    json_object_begin(j);
    json_key(j, "session"), json_u64(j, id);
    json_key(j, "state"), json_str(j, state_of(a, id));
    json_key(j, "created_by"), json_str(j, s->via_api ? "api" : "command_line");
    json_key(j, "final_ticks"), json_u64(j, ls_relay_session_final_ticks(r, id));
    json_settings(j, s);
    json_key(j, "desyncs"), json_u64(j, s->desyncs);
    json_key(j, "disputes"), json_u64(j, s->disputes);
    json_key(j, "disconnects"), json_u64(j, s->disconnects);
    if (full) {
        char where[96];
        a->def.host_fns.relay_addr(a->def.host_fns.user, id, where, sizeof where);
        json_key(j, "relay"), json_str(j, where);
        json_key(j, "peers"), json_array_begin(j);
        for (uint32_t k = 0; k < s->sd.slots; k++) {
            ls_relay_peer_stats p = ls_relay_peer_stats_get(r, id, k);
            char addr[64];
            json_object_begin(j);
            json_key(j, "slot"), json_u64(j, k);
            json_key(j, "joined"), json_bool(j, p.joined);
            json_key(j, "disconnected"), json_bool(j, p.disconnected);
            json_key(j, "addr");
            if (p.joined) {
                ls_net_addr_format(&p.addr, addr, sizeof addr);
                json_str(j, addr);
            } else {
                json_null(j);
            }
            json_key(j, "inputs"), json_u64(j, p.input_next);
            json_key(j, "checksums"), json_u64(j, p.checksum_next);
            json_key(j, "rtt_ms"), json_double(j, p.rtt_us / 1000.0, 3);
            json_key(j, "packets_in"), json_u64(j, p.packets_in);
            json_key(j, "packets_out"), json_u64(j, p.packets_out);
            json_key(j, "drops"), json_u64(j, p.drops);
            json_key(j, "rejoins"), json_u64(j, p.rejoins);
            json_key(j, "reason");
            p.disconnected ? json_str(j, net_reason_name(p.reason)) : json_null(j);
            json_object_end(j);
        }
        json_array_end(j);
        json_verdicts(j, s);
        json_recording(j, a, s);
        if (s->has_result) {
            json_result(j, s);
        }
    }
    json_object_end(j);
}

void relay_api_session_added(relay_api *a, uint32_t id, const ls_session_def *sd, uint64_t seed,
                             const char *recording, bool via_api)
{
    if (!a || id < 1 || id > a->def.max_sessions) {
        return;
    }
    api_session *s = &a->sess[id - 1];
    memset(s, 0, sizeof *s);
    s->known = true;
    s->via_api = via_api;
    s->sd = *sd;
    s->seed = seed;
    s->recording = recording ? strdup(recording) : NULL;
}

void relay_api_recording_done(relay_api *a, uint32_t id, uint32_t ticks, bool ok)
{
    if (a && id >= 1 && id <= a->def.max_sessions && a->sess[id - 1].known) {
        a->sess[id - 1].recorded = true;
        a->sess[id - 1].recording_ok = ok;
        a->sess[id - 1].recording_ticks = ticks;
    }
}

void relay_api_counters(relay_api *a, ls_relay_stats *stats, relay_api_totals *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t id = 1; id <= a->def.max_sessions; id++) {
        const api_session *s = &a->sess[id - 1];
        if (!s->known) {
            continue;
        }
        const ls_relay *r = relay_of(a, id);
        const char *st = state_of(a, id);
        if (strcmp(st, "done") == 0) {
            out->done++;
        } else if (strcmp(st, "running") == 0) {
            out->running++;
            for (uint32_t k = 0; k < s->sd.slots; k++) {
                out->peers += ls_relay_peer_stats_get(r, id, k).joined ? 1u : 0u;
            }
        } else {
            out->waiting++;
        }
        if (s->recorded) {
            *(s->recording_ok ? &out->recordings_ok : &out->recordings_failed) += 1;
        }
    }
    out->draining = a->draining;
    memcpy(out->latency, a->latency, sizeof out->latency);
    out->latency_count = a->latency_count;
    out->latency_sum_ns = a->latency_sum_ns;
    a->def.host_fns.counters(a->def.host_fns.user, stats, out);
}

uint32_t relay_api_latency_bucket(uint64_t ns)
{
    uint32_t b = 0;
    while (b < RELAY_API_LATENCY_BUCKETS && ns > (uint64_t)relay_api_latency_bounds_us[b] * 1000) {
        b++;
    }
    return b;
}

void relay_api_observe_ns(relay_api *a, uint64_t ns)
{
    if (!a) {
        return;
    }
    a->latency[relay_api_latency_bucket(ns)]++;
    a->latency_count++;
    a->latency_sum_ns += ns;
}

void relay_api_set_draining(relay_api *a, bool draining)
{
    if (a) {
        a->draining = draining;
    }
}

// ---- events ----

// Publish an event: `fill` writes its members after "seq" and "type".
static void publish(relay_api *a, const char *type, uint32_t id,
                    void (*fill)(json_out *j, relay_api *a, api_session *s))
{
    membuf m;
    json_out j;
    if (!mb_open(&m)) {
        return;
    }
    uint64_t seq = a->next_seq++;
    json_init(&j, m.f);
    json_object_begin(&j);
    json_key(&j, "seq"), json_u64(&j, seq);
    json_key(&j, "type"), json_str(&j, type);
    json_key(&j, "session"), json_u64(&j, id);
    if (fill) {
        fill(&j, a, &a->sess[id - 1]);
    }
    json_object_end(&j);
    json_finish(&j);
    fclose(m.f);
    if (m.n && m.p[m.n - 1] == '\n') {
        m.p[--m.n] = '\0';
    }
    api_event *e = &a->ev[seq % EVENTS_KEPT];
    free(e->json);
    e->seq = seq;
    e->json = m.p;
    wake_all(a);
}

static void fill_result(json_out *j, relay_api *a, api_session *s)
{
    uint32_t ticks = s->final_ticks;
    json_key(j, "final_ticks"), json_u64(j, ticks);
    // Why it ended: its length reached, everyone gone (left, timed out, kicked), or an
    // operator's DELETE.
    json_key(j, "ended_by");
    json_str(j, s->ended_by_operator                  ? "operator"
                : s->sd.ticks && ticks >= s->sd.ticks ? "ticks"
                                                      : "players_gone");
    json_key(j, "desyncs"), json_u64(j, s->desyncs);
    json_key(j, "disputes"), json_u64(j, s->disputes);
    json_key(j, "disconnects"), json_u64(j, s->disconnects);
    json_verdicts(j, s);
    json_recording(j, a, s);
    if (s->has_result) {
        json_result(j, s);
    }
}

static void fill_created(json_out *j, relay_api *a, api_session *s)
{
    (void)a;
    json_key(j, "created_by"), json_str(j, s->via_api ? "api" : "command_line");
    json_settings(j, s);
}

void relay_api_relay_event(relay_api *a, const ls_relay_event *ev)
{
    if (!a || ev->session < 1 || ev->session > a->def.max_sessions ||
        !a->sess[ev->session - 1].known) {
        return;
    }
    api_session *s = &a->sess[ev->session - 1];
    bool keep = false;
    switch (ev->type) {
    case LS_RELAY_EV_DISCONNECTED:
        s->disconnects++, keep = true;
        break;
    case LS_RELAY_EV_REJOINED:
        s->rejoins++, keep = true;
        break;
    case LS_RELAY_EV_DESYNC:
        s->desyncs++, keep = true;
        break;
    case LS_RELAY_EV_DISPUTED:
        s->disputes++, keep = true;
        break;
    case LS_RELAY_EV_SESSION_DONE:
        if (!s->done) {
            s->done = true;
            s->final_ticks = ev->tick;
            if (!s->awaits_result) {
                s->published = true;
                publish(a, "match_result", ev->session, fill_result);
            }
        }
        break;
    default:
        break;
    }
    if (keep && s->nv < VERDICTS_KEPT) {
        s->v[s->nv++] = (verdict){ev->type, ev->slot, ev->tick, ev->slots, ev->reason};
    }
}

void relay_api_expect_result(relay_api *a, uint32_t id)
{
    if (a && id >= 1 && id <= a->def.max_sessions && a->sess[id - 1].known) {
        a->sess[id - 1].awaits_result = true;
    }
}

void relay_api_match_result(relay_api *a, uint32_t id, const relay_result *res)
{
    if (!a || id < 1 || id > a->def.max_sessions || !a->sess[id - 1].known) {
        return;
    }
    api_session *s = &a->sess[id - 1];
    if (res) {
        s->result = *res;
        s->has_result = true;
    }
    s->awaits_result = false;
    if (s->done && !s->published) {
        s->published = true;
        publish(a, "match_result", id, fill_result);
    }
}

// ---- handlers ----

static bool full(const relay_api *a)
{
    for (uint32_t i = 0; i < a->def.max_sessions; i++) {
        if (!a->sess[i].known) {
            return false;
        }
    }
    return true;
}

static void h_healthz(relay_api *a, relay_api_request *rq)
{
    static const char ok[] = "{\"status\":\"ok\"}\n";
    (void)a;
    relay_api_respond(rq, MHD_HTTP_OK, "application/json", ok, sizeof ok - 1);
}

static void h_readyz(relay_api *a, relay_api_request *rq)
{
    static const char ok[] = "{\"ready\":true}\n";
    if (a->draining) {
        fail(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "relay",
             "draining: the relay accepts no new sessions and exits when its matches end");
    } else if (full(a)) {
        fail(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "relay",
             "full: every session id of this relay is used (--api-sessions)");
    } else {
        relay_api_respond(rq, MHD_HTTP_OK, "application/json", ok, sizeof ok - 1);
    }
}

static void json_credential(json_out *j, const ls_net_credential *c)
{
    char text[LS_NET_CREDENTIAL_TEXT_SIZE];
    size_t n = ls_net_credential_format(c, text, sizeof text);
    if (n && text[n - 1] == '\n') {
        text[n - 1] = '\0';
    }
    json_str(j, text);
    sodium_memzero(text, sizeof text);
}

static void h_create(relay_api *a, relay_api_request *rq)
{
    relay_api_session_req req;
    relay_api_error err;
    if (a->draining) {
        fail(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "relay",
             "draining: the relay accepts no new sessions and exits when its matches end");
        return;
    }
    if (!relay_api_session_request(rq->body, rq->len, &a->def.defaults, a->def.default_seed, &req,
                                   &err)) {
        relay_api_respond_error(rq, MHD_HTTP_BAD_REQUEST, &err);
        return;
    }
    if (req.has_scene_hash && !a->def.has_scene) {
        relay_api_fail(&err, "field scene_hash",
                       "this relay records no scene to compare (it runs without --record)");
        relay_api_respond_error(rq, MHD_HTTP_BAD_REQUEST, &err);
        return;
    }
    if (req.has_scene_hash && req.scene_hash != a->def.scene_hash) {
        relay_api_fail(&err, "field scene_hash",
                       "this relay records the scene whose hash is %016llx, not %016llx",
                       (unsigned long long)a->def.scene_hash, (unsigned long long)req.scene_hash);
        relay_api_respond_error(rq, MHD_HTTP_CONFLICT, &err);
        return;
    }
    uint32_t id = 0;
    int status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    const relay_api_host *h = &a->def.host_fns;
    if (!h->create(h->user, &req, &id, &status, &err)) {
        relay_api_respond_error(rq, (unsigned)status, &err);
        return;
    }
    api_session *s = &a->sess[id - 1];
    publish(a, "session_created", id, fill_created);
    membuf m;
    json_out j;
    if (!mb_open(&m)) {
        return;
    }
    json_init(&j, m.f);
    json_object_begin(&j);
    char addr[96];
    h->relay_addr(h->user, id, addr, sizeof addr);
    json_key(&j, "session"), json_u64(&j, id);
    json_key(&j, "relay"), json_str(&j, addr);
    json_settings(&j, s);
    json_recording(&j, a, s);
    // The credentials, this once: the relay keeps the keys, never shows them again.
    json_key(&j, "credentials"), json_array_begin(&j);
    for (uint32_t k = 0; k < s->sd.slots; k++) {
        ls_net_credential c;
        ls_relay_session_credential(h->relay_of(h->user, id), id, k, &c);
        json_object_begin(&j);
        json_key(&j, "slot"), json_u64(&j, k);
        json_key(&j, "credential"), json_credential(&j, &c);
        json_object_end(&j);
        ls_net_credential_wipe(&c);
    }
    json_array_end(&j);
    json_key(&j, "spectator_credentials"), json_array_begin(&j);
    for (uint32_t k = 0; k < s->sd.spectators; k++) {
        ls_net_credential c;
        ls_relay_session_spectator_credential(h->relay_of(h->user, id), id, k, &c);
        json_object_begin(&j);
        json_key(&j, "index"), json_u64(&j, k);
        json_key(&j, "credential"), json_credential(&j, &c);
        json_object_end(&j);
        ls_net_credential_wipe(&c);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    mb_respond(rq, MHD_HTTP_CREATED, &m, true);
}

static void h_list(relay_api *a, relay_api_request *rq)
{
    membuf m;
    json_out j;
    if (!mb_open(&m)) {
        return;
    }
    json_init(&j, m.f);
    json_object_begin(&j);
    json_key(&j, "draining"), json_bool(&j, a->draining);
    json_key(&j, "sessions"), json_array_begin(&j);
    for (uint32_t i = 0; i < a->def.max_sessions; i++) {
        if (a->sess[i].known) {
            json_session(&j, a, &a->sess[i], false);
        }
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    mb_respond(rq, MHD_HTTP_OK, &m, false);
}

// The session named by path segment 2, or a 404 answered.
static api_session *session_or_404(relay_api *a, relay_api_request *rq)
{
    const char *text = relay_api_segment(rq, 2);
    api_session *s = session_at(a, text);
    if (!s) {
        relay_api_error e;
        relay_api_fail(&e, "path", "no session %.20s", text ? text : "");
        relay_api_respond_error(rq, MHD_HTTP_NOT_FOUND, &e);
    }
    return s;
}

static void respond_session(relay_api *a, relay_api_request *rq, const api_session *s)
{
    membuf m;
    json_out j;
    if (!mb_open(&m)) {
        return;
    }
    json_init(&j, m.f);
    json_session(&j, a, s, true);
    json_finish(&j);
    mb_respond(rq, MHD_HTTP_OK, &m, false);
}

static void h_get(relay_api *a, relay_api_request *rq)
{
    api_session *s = session_or_404(a, rq);
    if (s) {
        respond_session(a, rq, s);
    }
}

static void h_delete(relay_api *a, relay_api_request *rq)
{
    api_session *s = session_or_404(a, rq);
    if (!s) {
        return;
    }
    const relay_api_host *h = &a->def.host_fns;
    uint32_t id = id_of(a, s);
    ls_relay *r = h->relay_of(h->user, id);
    if (!ls_relay_session_done(r, id)) {
        s->ended_by_operator = true;
        ls_relay_session_end(r, id, h->now_us(h->user));
        h->pump(h->user); // the kicks go out, the recording is finished, the events logged
    }
    respond_session(a, rq, s);
}

static void h_recording(relay_api *a, relay_api_request *rq)
{
    api_session *s = session_or_404(a, rq);
    if (!s) {
        return;
    }
    relay_api_error e;
    uint32_t id = id_of(a, s);
    if (!s->recording) {
        relay_api_fail(&e, "path",
                       "session %u is not recorded (the relay records with --record PATH)", id);
        relay_api_respond_error(rq, MHD_HTTP_NOT_FOUND, &e);
        return;
    }
    if (!s->recorded) {
        relay_api_fail(&e, "path",
                       "the recording of session %u is finished when the session ends (it is %s)",
                       id, state_of(a, id));
        relay_api_respond_error(rq, MHD_HTTP_CONFLICT, &e);
        return;
    }
    int fd = open(s->recording, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        relay_api_fail(&e, "recording", "%.200s: %s", s->recording,
                       fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0) {
            close(fd);
        }
        relay_api_respond_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, &e);
        return;
    }
    // Streamed from the descriptor (MHD closes it): never the whole file in memory.
    struct MHD_Response *r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
    if (!r) {
        close(fd);
        return;
    }
    char disp[64];
    snprintf(disp, sizeof disp, "attachment; filename=\"session-%u.lsr\"", id);
    add_common_headers(r, "application/octet-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
    MHD_queue_response(rq->c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    rq->answered = true;
}

// A query parameter as a whole number in [0, max]; false with a 400 answered.
static bool query_u64(relay_api_request *rq, const char *name, uint64_t max, uint64_t *out)
{
    const char *v = MHD_lookup_connection_value(rq->c, MHD_GET_ARGUMENT_KIND, name);
    if (!v) {
        return true;
    }
    uint64_t x = 0;
    bool ok = *v && strlen(v) <= 19;
    for (const char *p = v; ok && *p; p++) {
        ok = *p >= '0' && *p <= '9';
        x = x * 10 + (uint64_t)(*p - '0');
    }
    if (!ok || x > max) {
        relay_api_error e;
        char where[32];
        snprintf(where, sizeof where, "query %s", name);
        relay_api_fail(&e, where, "%s wants a whole number 0..%llu", name, (unsigned long long)max);
        relay_api_respond_error(rq, MHD_HTTP_BAD_REQUEST, &e);
        return false;
    }
    *out = x;
    return true;
}

static void h_events(relay_api *a, relay_api_request *rq)
{
    uint64_t after = 0, limit = EVENTS_PAGE;
    uint64_t max_wait = a->def.poll_timeout_ms ? a->def.poll_timeout_ms : DEFAULT_POLL_MS;
    uint64_t wait_s = max_wait / 1000;
    if (!query_u64(rq, "after", UINT64_MAX / 2, &after) ||
        !query_u64(rq, "timeout", max_wait / 1000, &wait_s) ||
        !query_u64(rq, "limit", EVENTS_PAGE, &limit)) {
        return;
    }
    uint64_t last = a->next_seq - 1;
    if (last <= after && wait_s > 0 && !rq->resumed) {
        // Nothing new yet: wait (suspended, no thread) for an event or the deadline.
        rq->deadline_ms = now_ms(a) + wait_s * 1000;
        rq->suspended = true;
        rq->next_waiter = a->waiters;
        a->waiters = rq;
        MHD_suspend_connection(rq->c);
        uv_timer_start(a->timer, on_timer, 100, 0);
        return;
    }
    uint64_t oldest = a->next_seq > EVENTS_KEPT ? a->next_seq - EVENTS_KEPT : 1;
    uint64_t from = after + 1 > oldest ? after + 1 : oldest;
    membuf m;
    if (!mb_open(&m)) {
        return;
    }
    fputs("{\"events\":[", m.f);
    uint64_t next = after, n = 0;
    for (uint64_t s = from; s <= last && n < limit; s++, n++) {
        fputs(n ? "," : "", m.f);
        fputs(a->ev[s % EVENTS_KEPT].json, m.f);
        next = s;
    }
    // "missed": events published after `after` that are no longer kept.
    fprintf(m.f, "],\"next\":%llu,\"oldest\":%llu,\"missed\":%llu}\n", (unsigned long long)next,
            (unsigned long long)oldest,
            (unsigned long long)(after + 1 < oldest && last >= oldest ? oldest - after - 1 : 0));
    mb_respond(rq, MHD_HTTP_OK, &m, false);
}

// ---- life ----

static void close_free(uv_handle_t *h)
{
    free(h);
}

relay_api *relay_api_create(const relay_api_def *def, char *msg, size_t msg_size)
{
    relay_api *a = calloc(1, sizeof *a);
    if (!a || !(a->sess = calloc(def->max_sessions ? def->max_sessions : 1, sizeof *a->sess))) {
        snprintf(msg, msg_size, "out of memory");
        free(a);
        return NULL;
    }
    a->def = *def;
    a->next_seq = 1;
    a->loop = def->loop;
    snprintf(a->host, sizeof a->host, "%s", def->host);
    a->def.host = a->host;
    a->def.token = NULL; // only its hash is kept
    crypto_generichash(a->token_hash, sizeof a->token_hash, (const unsigned char *)def->token,
                       strlen(def->token), NULL, 0);
    relay_api_route_add(a, "GET", "/healthz", false, h_healthz);
    relay_api_route_add(a, "GET", "/readyz", false, h_readyz);
    relay_api_route_add(a, "POST", "/v1/sessions", true, h_create);
    relay_api_route_add(a, "GET", "/v1/sessions", true, h_list);
    relay_api_route_add(a, "GET", "/v1/sessions/*", true, h_get);
    relay_api_route_add(a, "DELETE", "/v1/sessions/*", true, h_delete);
    relay_api_route_add(a, "GET", "/v1/sessions/*/recording", true, h_recording);
    relay_api_route_add(a, "GET", "/v1/events", true, h_events);
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(def->port);
    if (inet_pton(AF_INET, def->host, &sin.sin_addr) != 1) {
        snprintf(msg, msg_size, "'%s' is not an IPv4 address", def->host);
        relay_api_destroy(a);
        return NULL;
    }
    // Bounded per connection: 32 KiB for headers and the read buffer, 64 connections,
    // 60 s of idleness (a long-poll is suspended, not idle).
    a->d =
        MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, def->port, NULL, NULL,
                         on_request, a, MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&sin,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT,
                         (unsigned)60, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, a, MHD_OPTION_END);
    if (!a->d) {
        snprintf(msg, msg_size, "cannot listen on %s:%u (%s)", def->host, def->port,
                 errno ? strerror(errno) : "libmicrohttpd refused");
        relay_api_destroy(a);
        return NULL;
    }
    const union MHD_DaemonInfo *port = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
    const union MHD_DaemonInfo *ep = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_EPOLL_FD);
    a->poll = malloc(sizeof *a->poll);
    a->timer = malloc(sizeof *a->timer);
    if (!port || !ep || !a->poll || !a->timer || uv_poll_init(a->loop, a->poll, ep->epoll_fd)) {
        snprintf(msg, msg_size, "cannot watch the HTTP server on the event loop");
        free(a->poll), free(a->timer);
        a->poll = NULL, a->timer = NULL;
        relay_api_destroy(a);
        return NULL;
    }
    a->port = port->port;
    uv_timer_init(a->loop, a->timer);
    a->poll->data = a;
    a->timer->data = a;
    uv_poll_start(a->poll, UV_READABLE, on_poll);
    run_mhd(a);
    return a;
}

uint16_t relay_api_port(const relay_api *a)
{
    return a->port;
}

void relay_api_destroy(relay_api *a)
{
    if (!a) {
        return;
    }
    while (a->waiters) { // MHD closes resumed connections only
        relay_api_request *rq = a->waiters;
        a->waiters = rq->next_waiter;
        resume(a, rq);
    }
    if (a->d) {
        MHD_run(a->d);
        MHD_stop_daemon(a->d);
    }
    // The handles are freed by their close callbacks, when the loop next runs
    // (ls_uv_destroy runs it to close its own).
    if (a->poll) {
        uv_close((uv_handle_t *)a->poll, close_free);
    }
    if (a->timer) {
        uv_close((uv_handle_t *)a->timer, close_free);
    }
    for (uint32_t i = 0; a->sess && i < a->def.max_sessions; i++) {
        free(a->sess[i].recording);
    }
    for (size_t i = 0; i < EVENTS_KEPT; i++) {
        free(a->ev[i].json);
    }
    free(a->sess);
    sodium_memzero(a->token_hash, sizeof a->token_hash);
    free(a);
}
