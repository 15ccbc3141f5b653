// SPDX-License-Identifier: MIT
// `lockstep relay` under Agones (SPEC.md §17.14): with AGONES_SDK_HTTP_PORT set
// the relay calls the SDK's REST gateway. The real gateway (the Agones SDK
// sidecar) cannot run here, so a stand-in HTTP server on 127.0.0.1, in a thread
// of this test, records every request (method, path, body) and answers 200, 500,
// nothing (it closes the connection) or garbage. A relay and two bots play a
// short match against it; a gateway that fails, or is not there at all, must
// not stop the match. Issue 30.
#define _GNU_SOURCE
#include "test_proc.h"
#include "test_tool.h"
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tool[4096];
static char dir[256];
static char root[4096];

static void setup(void)
{
    test_find_tool(tool, sizeof tool);
    cr_assert_not_null(getcwd(root, sizeof root)); // tests run from the repository root
    snprintf(dir, sizeof dir, "/tmp/ls_test_agones_%ld", (long)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(agones, .init = setup, .fini = teardown);

// ---- the stand-in SDK gateway ----

typedef enum standin_mode {
    ANSWER_200,     // what the real gateway answers: 200 and "{}"
    ANSWER_500,     // an internal error
    ANSWER_CLOSE,   // closes the connection without a word
    ANSWER_GARBAGE, // "HTTP/1.1 2" and 1000 digits: no status line within any bound
    ANSWER_NOTHING, // reads the request and keeps the connection open, silent
} standin_mode;

typedef struct standin {
    int fd;
    uint16_t port;
    standin_mode mode;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t mu;
    char log[65536]; // one "METHOD PATH BODY" line per request
    size_t log_len;
    int without_json_type; // requests without Content-Type: application/json
} standin;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Read one request from c (2 s at most, bounded sizes) and record it.
static void standin_serve(standin *s, int c)
{
    char buf[8192];
    size_t len = 0;
    double end = now_s() + 2.0;
    char *head_end = NULL;
    size_t body_len = 0;
    while (now_s() < end && len < sizeof buf - 1) {
        struct pollfd p = {c, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) {
            continue;
        }
        ssize_t n = read(c, buf + len, sizeof buf - 1 - len);
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
        buf[len] = '\0';
        if (!head_end && (head_end = strstr(buf, "\r\n\r\n"))) {
            for (char *h = strstr(buf, "\r\n"); h && h < head_end; h = strstr(h + 2, "\r\n")) {
                if (strncasecmp(h + 2, "Content-Length:", 15) == 0) {
                    body_len = strtoul(h + 17, NULL, 10);
                }
            }
        }
        if (head_end && len >= (size_t)(head_end + 4 - buf) + body_len) {
            break;
        }
    }
    // No cr_assert in this thread: a request that is not one is recorded as
    // "BAD ..." and the test's checks of the sequence fail on it.
    char method[16] = "", path[128] = "";
    if (!head_end || sscanf(buf, "%15s %127s HTTP/1.1\r\n", method, path) != 2) {
        snprintf(method, sizeof method, "BAD");
        snprintf(path, sizeof path, "%.60s", buf);
        head_end = NULL;
    }
    const char *body = head_end ? head_end + 4 : "";
    body_len = strnlen(body, body_len); // what arrived of it
    bool json = false;
    for (char *h = strstr(buf, "\r\n"); h && h < head_end; h = strstr(h + 2, "\r\n")) {
        json |= strncasecmp(h + 2, "Content-Type: application/json\r\n", 32) == 0;
    }
    pthread_mutex_lock(&s->mu);
    int k = snprintf(s->log + s->log_len, sizeof s->log - s->log_len, "%s %s %.*s\n", method, path,
                     (int)body_len, body);
    if (k > 0 && (size_t)k < sizeof s->log - s->log_len) {
        s->log_len += (size_t)k;
    }
    s->without_json_type += !json;
    pthread_mutex_unlock(&s->mu);
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
    static const char err[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n"
                              "Connection: close\r\n\r\n";
    char garbage[1024] = "HTTP/1.1 2";
    memset(garbage + 10, '0', sizeof garbage - 10);
    switch (s->mode) {
    case ANSWER_200:
        (void)!write(c, ok, sizeof ok - 1);
        break;
    case ANSWER_500:
        (void)!write(c, err, sizeof err - 1);
        break;
    case ANSWER_CLOSE:
        break;
    case ANSWER_GARBAGE:
        (void)!send(c, garbage, sizeof garbage, MSG_NOSIGNAL);
        break;
    case ANSWER_NOTHING: // until the client gives up (or 3 s)
        for (double until = now_s() + 3.0; now_s() < until && !atomic_load(&s->stop);) {
            struct pollfd p = {c, POLLIN, 0};
            if (poll(&p, 1, 20) > 0 && read(c, buf, sizeof buf) <= 0) {
                break;
            }
        }
        break;
    }
}

static void *standin_main(void *arg)
{
    standin *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, 20) <= 0) {
            continue;
        }
        int c = accept(s->fd, NULL, NULL);
        if (c >= 0) {
            standin_serve(s, c);
            close(c);
        }
    }
    return NULL;
}

static void standin_start(standin *s, standin_mode mode)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_geq(s->fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    cr_assert_eq(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(s->fd, 16), 0);
    cr_assert_eq(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&s->thread, NULL, standin_main, s), 0);
}

static void standin_stop(standin *s)
{
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    close(s->fd);
    pthread_mutex_destroy(&s->mu);
}

// ---- running the relay and two bots ----

static pid_t spawn_to(const char *out_name, const char *err_name, const char *agones_port,
                      const char *const *args)
{
    char out[512], err[512], port[64];
    snprintf(out, sizeof out, "%s/%s", dir, out_name);
    snprintf(err, sizeof err, "%s/%s", dir, err_name);
    snprintf(port, sizeof port, "AGONES_SDK_HTTP_PORT=%s", agones_port ? agones_port : "");
    const char *const envs[] = {"AGONES_SDK_HTTP_PORT", agones_port ? port : NULL, NULL};
    return tp_spawn(tool, NULL, envs, out, err, args);
}

static char *slurp(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return tp_slurp(path);
}

static int wait_status(pid_t pid)
{
    return tp_wait_status(pid, 0);
}

// Wait (up to 10 s) for the relay's `ready` line; its address.
static void wait_ready(const char *log_name, char *addr, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, log_name);
    tp_wait_relay_ready(path, addr, size);
}

typedef struct match_result {
    char *out, *err; // the relay's stdout (its line log) and stderr
    double relay_s;  // from starting the relay to its exit
} match_result;

// A relay (gateway port agones_port) and two bots play `ticks` ticks at 120 Hz;
// both bots and the relay must exit 0 and the session must be done.
static match_result play(const char *agones_port, const char *ticks)
{
    char scene[4200], addr[64], creds[512], c0[600], c1[600];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    snprintf(creds, sizeof creds, "%s/creds", dir);
    cr_assert_eq(mkdir(creds, 0700), 0);
    double t0 = now_s();
    pid_t relay = spawn_to("relay.out", "relay.err", agones_port,
                           (const char *const[]){"relay", "--credentials", creds, "--slots", "2",
                                                 "--ticks", ticks, "--tick-rate", "120",
                                                 "--exit-when-done", "--scene", scene, NULL});
    wait_ready("relay.out", addr, sizeof addr);
    snprintf(c0, sizeof c0, "%s/session-1-slot-0.cred", creds);
    snprintf(c1, sizeof c1, "%s/session-1-slot-1.cred", creds);
    pid_t b0 = spawn_to(
        "b0.out", "b0.err", NULL,
        (const char *const[]){"bot", "--relay", addr, "--credential", c0, "--scene", scene, NULL});
    pid_t b1 = spawn_to(
        "b1.out", "b1.err", NULL,
        (const char *const[]){"bot", "--relay", addr, "--credential", c1, "--scene", scene, NULL});
    int s0 = wait_status(b0), s1 = wait_status(b1), sr = wait_status(relay);
    match_result r = {slurp("relay.out"), slurp("relay.err"), now_s() - t0};
    char *e0 = slurp("b0.err"), *e1 = slurp("b1.err");
    cr_assert_eq(s0, 0, "bot 0: %s", e0);
    cr_assert_eq(s1, 0, "bot 1: %s", e1);
    cr_assert_eq(sr, 0, "relay: %s\n%s", r.out, r.err);
    char done[64];
    snprintf(done, sizeof done, "event session_done session=1 ticks=%s\n", ticks);
    cr_assert(strstr(r.out, done), "the match was played: %s", r.out);
    free(e0), free(e1);
    return r;
}

static void match_free(match_result *r)
{
    free(r->out);
    free(r->err);
}

// Index of the first line of `log` equal to `line` at or after `from`, or -1.
static int line_index(const char *log, const char *line, int from)
{
    int i = 0;
    size_t n = strlen(line);
    for (const char *p = log; *p; i++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (i >= from && len == n && memcmp(p, line, n) == 0) {
            return i;
        }
        if (!nl) {
            break;
        }
        p = nl + 1;
    }
    return -1;
}

static int count_lines(const char *log)
{
    int n = 0;
    for (const char *p = log; *p; p++) {
        n += *p == '\n';
    }
    return n;
}

Test(agones, the_gateway_sees_ready_health_label_and_shutdown_in_order, .timeout = 60)
{
    standin s;
    standin_start(&s, ANSWER_200);
    char port[16];
    snprintf(port, sizeof port, "%u", s.port);
    match_result r = play(port, "240");
    standin_stop(&s);
    const char *log = s.log;
    cr_log_info("the stand-in gateway saw:\n%s", log);
    int n = count_lines(log);
    cr_assert_geq(n, 5, "%s", log);
    // Ready first (once), Health at least once before the label, Allocate once
    // with the first session, the label naming session 1, Shutdown last.
    cr_assert_eq(line_index(log, "POST /ready {}", 0), 0, "%s", log);
    cr_assert_eq(line_index(log, "POST /ready {}", 1), -1, "%s", log);
    int health = line_index(log, "POST /health {}", 0);
    int allocate = line_index(log, "POST /allocate {}", 0);
    int label =
        line_index(log, "PUT /metadata/label {\"key\":\"lockstep-sessions\",\"value\":\"1\"}", 0);
    int shutdown = line_index(log, "POST /shutdown {}", 0);
    cr_assert_gt(health, 0, "%s", log);
    cr_assert_gt(allocate, health, "%s", log);
    cr_assert_gt(label, allocate, "%s", log);
    cr_assert_eq(line_index(log, "POST /allocate {}", allocate + 1), -1, "%s", log);
    cr_assert_eq(shutdown, n - 1, "Shutdown is the last request: %s", log);
    // Nothing else, and every request says it carries JSON.
    for (int i = 0; i < n; i++) {
        cr_assert(i == 0 || i == allocate || i == label || i == shutdown ||
                      line_index(log, "POST /health {}", i) == i,
                  "request %d is unexpected: %s", i, log);
    }
    cr_assert_eq(s.without_json_type, 0);
    // The relay logs each step on its line log; nothing on stderr.
    cr_assert(strstr(r.out, "\nagones ready\n"), "%s", r.out);
    cr_assert(strstr(r.out, "\nagones allocated\n"), "%s", r.out);
    cr_assert(strstr(r.out, "\nagones label lockstep-sessions=1\n"), "%s", r.out);
    cr_assert(strstr(r.out, "\nagones shutdown\n"), "%s", r.out);
    cr_assert_str_empty(r.err, "%s", r.err);
    match_free(&r);
}

// A gateway answering `mode`: the match is played, the relay exits 0, and the
// failure is on its stderr (`why`, with bounded tries).
static void failing_gateway(standin_mode mode, const char *why)
{
    standin s;
    standin_start(&s, mode);
    char port[16];
    snprintf(port, sizeof port, "%u", s.port);
    match_result r = play(port, "120");
    standin_stop(&s);
    cr_assert_eq(line_index(s.log, "POST /ready {}", 0), 0, "%s", s.log);
    cr_assert_neq(line_index(s.log, "POST /shutdown {}", 0), -1, "%s", s.log);
    cr_assert(strstr(r.err, "lockstep relay: agones: POST /ready: "), "%s", r.err);
    cr_assert(strstr(r.err, why), "'%s' in %s", why, r.err);
    cr_assert(strstr(r.err, "lockstep relay: agones: POST /shutdown: "), "%s", r.err);
    cr_assert(strstr(r.err, "(gave up after 3 tries)\n"), "%s", r.err);
    cr_assert_null(strstr(r.out, "agones ready"), "%s", r.out);
    // Bounded: Ready is tried at most 8 times, the label and Shutdown 3 each.
    cr_assert_leq(count_lines(r.err), 8 + 1 + 3 + 3 + 3, "%s", r.err);
    match_free(&r);
}

Test(agones, a_gateway_answering_500_does_not_stop_the_match, .timeout = 60)
{
    failing_gateway(ANSWER_500, "HTTP status 500");
}

Test(agones, a_gateway_closing_the_connection_does_not_stop_the_match, .timeout = 60)
{
    failing_gateway(ANSWER_CLOSE, "the gateway closed the connection without an answer");
}

Test(agones, a_gateway_answering_garbage_does_not_stop_the_match, .timeout = 60)
{
    failing_gateway(ANSWER_GARBAGE, "no status line in the answer's first 255 bytes");
}

Test(agones, no_gateway_listening_does_not_stop_the_match, .timeout = 60)
{
    // A port that was just free: nothing listens there.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd);
    char port[16];
    snprintf(port, sizeof port, "%u", ntohs(a.sin_port));
    match_result r = play(port, "120");
    cr_assert(strstr(r.err, "lockstep relay: agones: POST /ready: Connection refused (try 1 of 8;"),
              "%s", r.err);
    cr_assert(strstr(r.err, "lockstep relay: agones: POST /shutdown: Connection refused (gave up "
                            "after 3 tries)\n"),
              "%s", r.err);
    match_free(&r);
}

Test(agones, a_port_that_is_not_a_port_is_a_warning, .timeout = 60)
{
    match_result r = play("http://x", "60");
    cr_assert(strstr(r.err, "lockstep relay: agones: AGONES_SDK_HTTP_PORT='http://x' is not a "
                            "port 1..65535; running without Agones\n"),
              "%s", r.err);
    cr_assert_null(strstr(r.out, "\nagones "), "%s", r.out);
    match_free(&r);
}

Test(agones, a_silent_gateway_costs_the_relay_at_most_3_s_at_exit, .timeout = 60)
{
    // Every request times out (1 s each): the match is played as usual and the
    // exit gives up on Shutdown after AGONES_EXIT_MS (3 s).
    standin s;
    standin_start(&s, ANSWER_NOTHING);
    char port[16];
    snprintf(port, sizeof port, "%u", s.port);
    match_result r = play(port, "60");
    standin_stop(&s);
    cr_assert(strstr(r.err, "lockstep relay: agones: POST /ready: no answer within 1000 ms ("),
              "%s", r.err);
    cr_assert(strstr(r.err, "lockstep relay: agones: exiting without Shutdown: the gateway did "
                            "not answer within 3000 ms\n"),
              "%s", r.err);
    // 0.5 s of match, the relay's linger, 3 s for the gateway at most.
    cr_assert_lt(r.relay_s, 10.0, "the relay took %.1f s", r.relay_s);
    match_free(&r);
}

Test(agones, sigterm_still_says_shutdown, .timeout = 60)
{
    // No --exit-when-done: the relay runs until Kubernetes stops the pod (SIGTERM),
    // and then tells Agones too.
    standin s;
    standin_start(&s, ANSWER_200);
    char port[16], addr[64], creds[512];
    snprintf(port, sizeof port, "%u", s.port);
    snprintf(creds, sizeof creds, "%s/creds", dir);
    cr_assert_eq(mkdir(creds, 0700), 0);
    pid_t relay = spawn_to("relay.out", "relay.err", port,
                           (const char *const[]){"relay", "--credentials", creds, "--slots", "2",
                                                 "--join-timeout", "0", NULL});
    wait_ready("relay.out", addr, sizeof addr);
    bool pinged = false;
    for (int i = 0; i < 500 && !pinged; i++) {
        pthread_mutex_lock(&s.mu);
        pinged = strstr(s.log, "POST /health {}\n") != NULL;
        pthread_mutex_unlock(&s.mu);
        usleep(10000);
    }
    cr_assert(pinged, "Health within 5 s: %s", s.log);
    cr_assert_eq(kill(relay, SIGTERM), 0);
    int st = wait_status(relay);
    standin_stop(&s);
    char *out = slurp("relay.out"), *err = slurp("relay.err");
    cr_assert_eq(st, 0, "%s%s", out, err);
    cr_assert(strstr(out, "signal SIGTERM: finishing\n"), "%s", out);
    cr_assert(strstr(out, "\nagones shutdown\n"), "%s", out);
    cr_assert_eq(line_index(s.log, "POST /ready {}", 0), 0, "%s", s.log);
    cr_assert_eq(line_index(s.log, "POST /shutdown {}", 0), count_lines(s.log) - 1, "%s", s.log);
    cr_assert_eq(line_index(s.log, "POST /allocate {}", 0), -1, "nobody joined: %s", s.log);
    cr_assert_str_empty(err, "%s", err);
    free(out), free(err);
}
