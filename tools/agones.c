// SPDX-License-Identifier: MIT
// The Agones SDK client of `lockstep relay` (see agones.h, SPEC.md §17.14).
#define _POSIX_C_SOURCE 200809L // clock_gettime, nanosleep, MSG_NOSIGNAL
#include "agones.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// The requests, in the order they are preferred when several are due. Tries
// are bounded: Ready gets the most (the SDK sidecar may start after the relay,
// the Agones documentation says), Health none (the next ping is its retry).
typedef enum req_kind {
    REQ_READY,
    REQ_HEALTH,
    REQ_ALLOCATE,
    REQ_LABEL,
    REQ_SHUTDOWN,
    REQ_COUNT
} req_kind;

typedef struct req_info {
    const char *method, *path;
    const char *done; ///< Logged on success (NULL: nothing, for Health).
    uint32_t tries;
} req_info;

static const req_info requests[REQ_COUNT] = {
    {"POST", "/ready", "agones ready", 8},
    {"POST", "/health", NULL, 1},
    {"POST", "/allocate", "agones allocated", 3},
    {"PUT", "/metadata/label", "agones label " AGONES_LABEL_KEY "=", 3},
    {"POST", "/shutdown", "agones shutdown", 3},
};

typedef enum phase { IDLE, CONNECTING, SENDING, RECEIVING } phase;

// Kubernetes label values: at most 63 characters.
#define LABEL_MAX 63
// The status line must arrive within this many bytes (it is ~20).
#define STATUS_MAX 255

struct agones {
    uint16_t port;
    FILE *log, *err;
    bool pending[REQ_COUNT];
    uint32_t failed[REQ_COUNT];     ///< Failed tries of the queued request.
    uint64_t not_before[REQ_COUNT]; ///< Its next try, ms.
    bool health_on, health_failing, allocate_queued, exiting;
    uint64_t next_health;
    uint32_t label_gen, label_sent_gen; ///< Label changes; the one in flight.
    // The request in flight.
    int fd;
    phase ph;
    req_kind kind;
    uint64_t deadline;
    char out[512];
    size_t out_len, out_sent;
    char in[STATUS_MAX + 1];
    size_t in_len;
    char label[LABEL_MAX + 1];
    uint32_t max_sessions;
    uint8_t started[]; ///< Bit s: session s started.
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

agones *agones_create(uint16_t port, FILE *log, FILE *err, uint32_t max_sessions)
{
    agones *a = calloc(1, sizeof *a + max_sessions / 8 + 1);
    if (!a) {
        return NULL;
    }
    a->port = port;
    a->log = log;
    a->err = err;
    a->fd = -1;
    a->max_sessions = max_sessions;
    return a;
}

agones *agones_from_env(FILE *log, FILE *err, uint32_t max_sessions)
{
    const char *v = getenv("AGONES_SDK_HTTP_PORT");
    if (!v || !*v) {
        return NULL;
    }
    char *end;
    unsigned long p = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || p < 1 || p > 65535) {
        fprintf(err,
                "lockstep relay: agones: AGONES_SDK_HTTP_PORT='%.32s' is not a port 1..65535; "
                "running without Agones\n",
                v);
        return NULL;
    }
    agones *a = agones_create((uint16_t)p, log, err, max_sessions);
    if (!a) {
        fprintf(err, "lockstep relay: agones: out of memory; running without Agones\n");
    }
    return a;
}

void agones_destroy(agones *a)
{
    if (!a) {
        return;
    }
    if (a->fd >= 0) {
        close(a->fd);
    }
    free(a);
}

void agones_ready(agones *a)
{
    if (!a) {
        return;
    }
    a->pending[REQ_READY] = true;
    a->health_on = true;
    a->next_health = 0; // right after Ready (which goes first)
}

// The started sessions as ranges ("1-4_7_9-10": '_' and '-' are allowed in a
// label value, ',' is not), as many whole ranges as fit in LABEL_MAX.
static void label_value(const agones *a, char *out)
{
    size_t n = 0;
    out[0] = '\0';
    for (uint32_t s = 1; s <= a->max_sessions; s++) {
        if (!(a->started[s / 8] & (1u << (s % 8)))) {
            continue;
        }
        uint32_t e = s;
        while (e + 1 <= a->max_sessions && (a->started[(e + 1) / 8] & (1u << ((e + 1) % 8)))) {
            e++;
        }
        char item[32];
        int k = e == s ? snprintf(item, sizeof item, "%s%u", n ? "_" : "", s)
                       : snprintf(item, sizeof item, "%s%u-%u", n ? "_" : "", s, e);
        if (k < 0 || n + (size_t)k > LABEL_MAX) {
            break;
        }
        memcpy(out + n, item, (size_t)k + 1);
        n += (size_t)k;
        s = e;
    }
}

void agones_session_started(agones *a, uint32_t session)
{
    if (!a || session < 1 || session > a->max_sessions ||
        (a->started[session / 8] & (1u << (session % 8)))) {
        return;
    }
    a->started[session / 8] |= (uint8_t)(1u << (session % 8));
    if (!a->allocate_queued) {
        a->allocate_queued = true;
        a->pending[REQ_ALLOCATE] = true;
    }
    a->label_gen++;
    a->pending[REQ_LABEL] = true;
    a->failed[REQ_LABEL] = 0;
    a->not_before[REQ_LABEL] = 0;
}

static void end_request(agones *a)
{
    if (a->fd >= 0) {
        close(a->fd);
    }
    a->fd = -1;
    a->ph = IDLE;
}

// A try failed: log it, and retry later or give up (bounded either way).
static void fail(agones *a, const char *why, uint64_t now)
{
    req_kind k = a->kind;
    const req_info *r = &requests[k];
    end_request(a);
    if (k == REQ_HEALTH) { // logged once per run of failures
        a->pending[k] = false;
        if (!a->health_failing) {
            fprintf(a->err,
                    "lockstep relay: agones: %s %s: %s (not logged again until a ping "
                    "succeeds)\n",
                    r->method, r->path, why);
        }
        a->health_failing = true;
        fflush(a->err);
        return;
    }
    a->failed[k]++;
    if (a->exiting && k != REQ_SHUTDOWN) { // the one in flight at exit: no retry
        a->pending[k] = false;
        a->failed[k] = 0;
        fprintf(a->err, "lockstep relay: agones: %s %s: %s (not retried: the relay is exiting)\n",
                r->method, r->path, why);
    } else if (a->failed[k] < r->tries) {
        uint64_t wait = 250u << (a->failed[k] - 1 < 4 ? a->failed[k] - 1 : 4);
        a->not_before[k] = now + wait;
        fprintf(a->err, "lockstep relay: agones: %s %s: %s (try %u of %u; again in %llu ms)\n",
                r->method, r->path, why, a->failed[k], r->tries, (unsigned long long)wait);
    } else {
        a->pending[k] = false;
        a->failed[k] = 0;
        fprintf(a->err, "lockstep relay: agones: %s %s: %s (gave up after %u tries%s)\n", r->method,
                r->path, why, r->tries, k == REQ_SHUTDOWN ? "" : "; the relay runs on without it");
    }
    fflush(a->err);
}

static void succeed(agones *a)
{
    req_kind k = a->kind;
    end_request(a);
    a->failed[k] = 0;
    if (k == REQ_HEALTH) {
        a->pending[k] = false;
        if (a->health_failing) {
            fprintf(a->err, "lockstep relay: agones: POST /health: answered again\n");
            fflush(a->err);
        }
        a->health_failing = false;
        return;
    }
    // A label that changed while this one was in flight is sent again.
    a->pending[k] = k == REQ_LABEL && a->label_sent_gen != a->label_gen;
    fprintf(a->log, "%s%s\n", requests[k].done, k == REQ_LABEL ? a->label : "");
    fflush(a->log);
}

// The request to send now, or REQ_COUNT. Ready first; while Ready is still to
// be retried only Health may go (the sidecar may be late, and the pings keep
// the GameServer healthy meanwhile); then Allocate, the label, Shutdown, in
// that order (a request waiting for its retry holds back those after it).
static req_kind next_due(agones *a, uint64_t now)
{
    if (a->health_on && !a->exiting && now >= a->next_health) {
        a->pending[REQ_HEALTH] = true;
    }
    if (a->pending[REQ_READY] && now >= a->not_before[REQ_READY]) {
        return REQ_READY;
    }
    if (a->pending[REQ_HEALTH]) {
        return REQ_HEALTH;
    }
    if (a->pending[REQ_READY]) {
        return REQ_COUNT;
    }
    for (int k = REQ_ALLOCATE; k < REQ_COUNT; k++) {
        if (a->pending[k]) {
            return now >= a->not_before[k] ? (req_kind)k : REQ_COUNT;
        }
    }
    return REQ_COUNT;
}

static void start(agones *a, req_kind k, uint64_t now)
{
    char body[128] = "{}";
    if (k == REQ_LABEL) {
        label_value(a, a->label);
        a->label_sent_gen = a->label_gen;
        snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", AGONES_LABEL_KEY,
                 a->label);
    }
    if (k == REQ_HEALTH) {
        a->next_health = now + AGONES_HEALTH_MS;
    }
    int n = snprintf(a->out, sizeof a->out,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                     requests[k].method, requests[k].path, a->port, strlen(body), body);
    a->out_len = n > 0 && (size_t)n < sizeof a->out ? (size_t)n : 0;
    a->out_sent = 0;
    a->in_len = 0;
    a->kind = k;
    a->deadline = now + AGONES_REQUEST_MS;
    a->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (a->fd < 0) {
        fail(a, strerror(errno), now);
        return;
    }
    int fl = fcntl(a->fd, F_GETFL, 0);
    if (fl < 0 || fcntl(a->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
        fcntl(a->fd, F_SETFD, FD_CLOEXEC) < 0) {
        fail(a, strerror(errno), now);
        return;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(a->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(a->fd, (const struct sockaddr *)&sa, sizeof sa) == 0) {
        a->ph = SENDING;
    } else if (errno == EINPROGRESS || errno == EINTR) {
        a->ph = CONNECTING;
    } else {
        fail(a, strerror(errno), now);
    }
}

// The status code of "HTTP/1.x NNN ...\r\n" in a->in: 1 found (*code), 0 not
// yet complete, -1 not HTTP (why in *why).
static int status_line(const agones *a, int *code, const char **why)
{
    static const char prefix[] = "HTTP/1.";
    size_t m = a->in_len < 7 ? a->in_len : 7;
    if (memcmp(a->in, prefix, m) != 0) {
        *why = "the answer is not HTTP";
        return -1;
    }
    const char *nl = memchr(a->in, '\n', a->in_len);
    if (!nl) {
        if (a->in_len >= STATUS_MAX) {
            *why = "no status line in the answer's first 255 bytes";
            return -1;
        }
        return 0;
    }
    const char *p = a->in + 7;
    if (nl - a->in < 12 || (p[0] != '0' && p[0] != '1') || p[1] != ' ' || p[2] < '1' ||
        p[2] > '5' || p[3] < '0' || p[3] > '9' || p[4] < '0' || p[4] > '9' ||
        (p[5] != ' ' && p[5] != '\r' && p[5] != '\n')) {
        *why = "malformed status line";
        return -1;
    }
    *code = (p[2] - '0') * 100 + (p[3] - '0') * 10 + (p[4] - '0');
    return 1;
}

// One step of the request in flight (or start the next). True if it changed
// state, so the caller may step again at once.
static bool step(agones *a, uint64_t now)
{
    if (a->ph == IDLE) {
        req_kind k = next_due(a, now);
        if (k == REQ_COUNT) {
            return false;
        }
        start(a, k, now);
        return true;
    }
    if (now > a->deadline) {
        char why[64];
        snprintf(why, sizeof why, "no answer within %u ms", AGONES_REQUEST_MS);
        fail(a, why, now);
        return true;
    }
    if (a->ph == CONNECTING) {
        struct pollfd pfd = {a->fd, POLLOUT, 0};
        if (poll(&pfd, 1, 0) <= 0) {
            return false;
        }
        int e = 0;
        socklen_t len = sizeof e;
        if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) {
            e = errno;
        }
        if (e) {
            fail(a, strerror(e), now);
        } else {
            a->ph = SENDING;
        }
        return true;
    }
    if (a->ph == SENDING) {
        if (!a->out_len) {
            fail(a, "request too long", now);
            return true;
        }
        ssize_t n = send(a->fd, a->out + a->out_sent, a->out_len - a->out_sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                return false;
            }
            fail(a, strerror(errno), now);
            return true;
        }
        a->out_sent += (size_t)n;
        if (a->out_sent == a->out_len) {
            a->ph = RECEIVING;
        }
        return true;
    }
    // RECEIVING: only the status line is read; the rest is left unread.
    ssize_t n = recv(a->fd, a->in + a->in_len, STATUS_MAX - a->in_len, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            return false;
        }
        fail(a, strerror(errno), now);
        return true;
    }
    if (n == 0) {
        fail(a, "the gateway closed the connection without an answer", now);
        return true;
    }
    a->in_len += (size_t)n;
    int code = 0;
    const char *why = NULL;
    int got = status_line(a, &code, &why);
    if (got < 0) {
        fail(a, why, now);
    } else if (got > 0 && code >= 200 && code < 300) {
        succeed(a);
    } else if (got > 0) {
        char msg[32];
        snprintf(msg, sizeof msg, "HTTP status %d", code);
        fail(a, msg, now);
    }
    return true;
}

void agones_poll(agones *a)
{
    if (!a) {
        return;
    }
    uint64_t now = now_ms();
    for (int i = 0; i < 8 && step(a, now); i++) {
    }
}

static bool busy(const agones *a)
{
    if (a->ph != IDLE) {
        return true;
    }
    for (int k = 0; k < REQ_COUNT; k++) {
        if (a->pending[k]) {
            return true;
        }
    }
    return false;
}

void agones_shutdown(agones *a)
{
    if (!a) {
        return;
    }
    // Only Shutdown matters now: what is still queued (Ready, Health, Allocate,
    // a label) is dropped, so that a slow gateway spends the exit budget on
    // Shutdown. A request in flight finishes (within its deadline).
    a->exiting = true;
    a->health_on = false;
    for (int k = 0; k < REQ_SHUTDOWN; k++) {
        a->pending[k] = false;
    }
    a->pending[REQ_SHUTDOWN] = true;
    uint64_t end = now_ms() + AGONES_EXIT_MS;
    while (busy(a)) {
        uint64_t now = now_ms();
        if (now >= end) {
            fprintf(a->err,
                    "lockstep relay: agones: exiting without Shutdown: the gateway did not "
                    "answer within %u ms\n",
                    AGONES_EXIT_MS);
            fflush(a->err);
            break;
        }
        for (int i = 0; i < 8 && step(a, now); i++) {
        }
        if (a->fd >= 0) {
            struct pollfd pfd = {a->fd, (short)(a->ph == RECEIVING ? POLLIN : POLLOUT), 0};
            poll(&pfd, 1, 5);
        } else {
            struct timespec ts = {0, 5000000}; // a retry is due later
            nanosleep(&ts, NULL);
        }
    }
    end_request(a);
}
