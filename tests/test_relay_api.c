// SPDX-License-Identifier: MIT
// The control API of `lockstep relay --api` (SPEC.md §17.13), end to end on
// 127.0.0.1 with real sockets: the tool next to this binary runs the relay and
// the bots; requests are written by hand over a TCP socket (no HTTP library).
// A session made through the API is played by two bots with the credentials it
// returned, its match result arrives on a long-polled /v1/events, its signed
// recording is fetched and verified; SIGTERM drains a running match to its end;
// every bad request gets its status and a reason naming where. Issue 30.
#define _GNU_SOURCE
#include "test_proc.h"
#include "test_tool.h"
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOKEN "test-token-0123456789abcdef"

static char tool[4096];
static char dir[256];
static char root[4096];

static void setup(void)
{
    test_find_tool(tool, sizeof tool);
    cr_assert_not_null(getcwd(root, sizeof root)); // tests run from the repository root
    snprintf(dir, sizeof dir, "/tmp/ls_test_relay_api_%ld", (long)getpid());
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

TestSuite(relay_api, .init = setup, .fini = teardown);

static char *path_in_dir(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(path_in_dir(name), "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *name)
{
    return tp_slurp(path_in_dir(name));
}

// Start the tool in the background, stdout and stderr to files in dir; env
// ("NAME=VALUE") or NULL. LOCKSTEP_API_TOKEN is never inherited.
static pid_t spawn_env(const char *env, const char *out_name, const char *err_name,
                       const char *const *args)
{
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/%s", dir, out_name);
    snprintf(err, sizeof err, "%s/%s", dir, err_name);
    const char *const envs[] = {"LOCKSTEP_API_TOKEN", env, NULL};
    return tp_spawn(tool, NULL, envs, out, err, args);
}

#define SPAWN(out, err, ...) spawn_env(NULL, out, err, (const char *const[]){__VA_ARGS__, NULL})
#define SPAWN_ENV(env, out, err, ...)                                                              \
    spawn_env(env, out, err, (const char *const[]){__VA_ARGS__, NULL})

#define wait_status tp_wait_status

typedef struct relay_run {
    pid_t pid;
    char udp[64]; // "127.0.0.1:PORT"
    uint16_t api; // the API's port
} relay_run;

// Wait (up to 10 s) for the relay's `api` and `ready` lines.
static void wait_ready(relay_run *r, const char *log_name)
{
    for (int i = 0; i < 1000; i++) {
        char *log = slurp(log_name);
        const char *l = strstr(log, "listening 127.0.0.1:");
        const char *a = strstr(log, "\napi 127.0.0.1:");
        unsigned port = 0, api = 0;
        if (l && a && strstr(log, "\nready\n") && sscanf(l, "listening 127.0.0.1:%u", &port) == 1 &&
            sscanf(a, "\napi 127.0.0.1:%u", &api) == 1) {
            snprintf(r->udp, sizeof r->udp, "127.0.0.1:%u", port);
            r->api = (uint16_t)api;
            free(log);
            return;
        }
        free(log);
        usleep(10000);
    }
    cr_assert_fail("the relay never printed api and ready");
}

// ---- a hand-written HTTP/1.1 client ----

typedef struct reply {
    int status;
    char *head; // status line and headers
    char *body; // NUL-terminated (binary bodies: len)
    size_t len;
} reply;

static int connect_api(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0, "%s", strerror(errno));
    struct timeval tv = {40, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) {
            return; // the server answered early and closed: read what it said
        }
        p += k, n -= (size_t)k;
    }
}

// Read the whole reply (the server closes: Connection: close).
static reply read_reply(int fd)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (;;) {
        if (len + 8192 + 1 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
        ssize_t k = recv(fd, buf + len, 8192, 0);
        if (k <= 0) {
            break;
        }
        len += (size_t)k;
    }
    close(fd);
    buf[len] = '\0';
    reply r = {0, buf, NULL, 0};
    char *end = strstr(buf, "\r\n\r\n");
    cr_assert_not_null(end, "a whole HTTP reply: '%s'", buf);
    *end = '\0';
    r.body = end + 4;
    r.len = len - (size_t)(r.body - buf);
    cr_assert_eq(sscanf(buf, "HTTP/1.1 %d", &r.status), 1, "%s", buf);
    return r;
}

// METHOD path with an optional bearer token and body.
static reply http(uint16_t port, const char *method, const char *path, const char *token,
                  const char *body)
{
    int fd = connect_api(port);
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s"
                     "Content-Length: %zu\r\n\r\n",
                     method, path, token ? "Authorization: Bearer " : "", token ? token : "",
                     token ? "\r\n" : "", body ? strlen(body) : 0);
    send_all(fd, head, (size_t)n);
    if (body) {
        send_all(fd, body, strlen(body));
    }
    return read_reply(fd);
}

static void reply_free(reply *r)
{
    free(r->head);
}

// The string value of "key":"..." after `from` in a JSON text (no escapes in it).
static void json_string_at(const char *from, const char *key, char *out, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(from, pat);
    cr_assert_not_null(p, "%s in %s", pat, from);
    p += strlen(pat);
    const char *q = strchr(p, '"');
    cr_assert_not_null(q);
    cr_assert_lt((size_t)(q - p), size);
    memcpy(out, p, (size_t)(q - p));
    out[q - p] = '\0';
}

// Write the credentials of a POST /v1/sessions reply to c0.cred, c1.cred, ...
static void save_credentials(const char *json, uint32_t players)
{
    const char *p = strstr(json, "\"credentials\":[");
    cr_assert_not_null(p, "%s", json);
    for (uint32_t k = 0; k < players; k++) {
        char text[256], name[32];
        json_string_at(p, "credential", text, sizeof text);
        strcat(text, "\n");
        snprintf(name, sizeof name, "c%u.cred", k);
        write_file(name, text);
        p = strstr(p, "\"credential\":\"") + 14;
    }
}

static pid_t start_bot(const relay_run *r, uint32_t k, const char *scene)
{
    char out[32], err[32];
    snprintf(out, sizeof out, "b%u.out", k);
    snprintf(err, sizeof err, "b%u.err", k);
    char cred[32];
    snprintf(cred, sizeof cred, "c%u.cred", k);
    return SPAWN(out, err, "bot", "--relay", r->udp, "--credential", path_in_dir(cred), "--scene",
                 scene);
}

// Run the tool to completion; its exit status and stdout+stderr in *out.
static int run_tool_status(const char *const *args, char **out)
{
    pid_t pid = SPAWN("run.out", "run.err", args[0], args[1], args[2], args[3], args[4], args[5]);
    int st = wait_status(pid, 30);
    char *o = slurp("run.out"), *e = slurp("run.err");
    *out = malloc(strlen(o) + strlen(e) + 1);
    cr_assert_not_null(*out);
    strcpy(*out, o);
    strcat(*out, e);
    free(o), free(e);
    return st;
}

Test(relay_api, a_session_made_through_the_api_is_played_recorded_and_verified, .timeout = 60)
{
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    char *out;
    int st = run_tool_status(
        (const char *const[]){"keygen", "--out", path_in_dir("relay"), NULL, NULL, NULL}, &out);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    write_file("token", TOKEN "\n");
    relay_run r;
    r.pid = SPAWN("relay.out", "relay.err", "relay", "--api", "127.0.0.1:0", "--api-token-file",
                  path_in_dir("token"), "--record", path_in_dir("m.lsr"), "--sign-key",
                  path_in_dir("relay.key"), "--scene", scene);
    wait_ready(&r, "relay.out");
    // No session until one is asked for.
    reply q = http(r.api, "GET", "/v1/sessions", TOKEN, NULL);
    cr_assert_eq(q.status, 200, "%s", q.body);
    cr_assert(strstr(q.body, "\"sessions\":[]"), "%s", q.body);
    reply_free(&q);
    q = http(r.api, "POST", "/v1/sessions", TOKEN,
             "{\"players\":2,\"ticks\":240,\"tick_rate\":120,\"input_delay\":2,\"seed\":9}");
    cr_assert_eq(q.status, 201, "%s", q.body);
    cr_assert(strstr(q.body, "{\"session\":1,\"relay\":\"127.0.0.1:"), "%s", q.body);
    cr_assert(strstr(q.body, "\"players\":2,"), "%s", q.body);
    cr_assert(strstr(q.body, "\"signed\":true"), "%s", q.body);
    cr_assert(strstr(q.body, "lockstep-credential 2 session=1 slot=1 role=player key="), "%s",
              q.body);
    save_credentials(q.body, 2);
    reply_free(&q);
    // Not finished yet: no recording to fetch.
    q = http(r.api, "GET", "/v1/sessions/1/recording", TOKEN, NULL);
    cr_assert_eq(q.status, 409, "%s", q.body);
    cr_assert(strstr(q.body, "is finished when the session ends"), "%s", q.body);
    reply_free(&q);
    pid_t b0 = start_bot(&r, 0, scene), b1 = start_bot(&r, 1, scene);
    // The long poll: session_created is event 1; the match result comes next.
    q = http(r.api, "GET", "/v1/events?after=1&timeout=30", TOKEN, NULL);
    cr_assert_eq(q.status, 200, "%s", q.body);
    cr_assert(strstr(q.body, "{\"events\":[{\"seq\":2,\"type\":\"match_result\",\"session\":1,"
                             "\"final_ticks\":240,\"ended_by\":\"ticks\",\"desyncs\":0,"),
              "%s", q.body);
    cr_assert(strstr(q.body, "\"finished\":true,\"ticks\":240,\"signed\":true"), "%s", q.body);
    reply_free(&q);
    cr_assert_eq(wait_status(b0, 30), 0);
    cr_assert_eq(wait_status(b1, 30), 0);
    q = http(r.api, "GET", "/v1/sessions/1", TOKEN, NULL);
    cr_assert_eq(q.status, 200, "%s", q.body);
    cr_assert(strstr(q.body, "\"state\":\"done\",\"created_by\":\"api\",\"final_ticks\":240,"),
              "%s", q.body);
    cr_assert(strstr(q.body, "\"peers\":[{\"slot\":0,\"joined\":true,"), "%s", q.body);
    reply_free(&q);
    // The recording, fetched and verified against the relay's public key.
    q = http(r.api, "GET", "/v1/sessions/1/recording", TOKEN, NULL);
    cr_assert_eq(q.status, 200, "%s", q.head);
    cr_assert(strstr(q.head, "application/octet-stream"), "%s", q.head);
    FILE *f = fopen(path_in_dir("fetched.lsr"), "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(q.body, 1, q.len, f), q.len);
    fclose(f);
    reply_free(&q);
    st = run_tool_status((const char *const[]){"replay", "verify", path_in_dir("fetched.lsr"),
                                               "--pubkey", path_in_dir("relay.pub"), NULL},
                         &out);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "verified 240 ticks"), "%s", out);
    free(out);
    kill(r.pid, SIGINT);
    cr_assert_eq(wait_status(r.pid, 10), 0);
    char *log = slurp("relay.out");
    cr_assert(strstr(log, "session 1 created by the api slots=2"), "%s", log);
    free(log);
}

Test(relay_api, sigterm_drains_a_running_match_to_its_end, .timeout = 60)
{
    // SIGTERM mid-match: /readyz and POST answer 503, the match plays on to its last
    // tick, the recording is finished whole, the relay exits 0. The token comes from
    // the environment this time.
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    relay_run r;
    r.pid = SPAWN_ENV("LOCKSTEP_API_TOKEN=" TOKEN, "relay.out", "relay.err", "relay", "--api",
                      "127.0.0.1:0", "--record", path_in_dir("d.lsr"), "--scene", scene,
                      "--drain-seconds", "30");
    wait_ready(&r, "relay.out");
    reply q = http(r.api, "GET", "/readyz", NULL, NULL);
    cr_assert_eq(q.status, 200, "%s", q.body);
    reply_free(&q);
    q = http(r.api, "POST", "/v1/sessions", TOKEN,
             "{\"players\":2,\"ticks\":480,\"tick_rate\":120}");
    cr_assert_eq(q.status, 201, "%s", q.body);
    save_credentials(q.body, 2);
    reply_free(&q);
    // A second session nobody joins: the drain ends it at once.
    q = http(r.api, "POST", "/v1/sessions", TOKEN, "{\"players\":2}");
    cr_assert_eq(q.status, 201, "%s", q.body);
    reply_free(&q);
    pid_t b0 = start_bot(&r, 0, scene), b1 = start_bot(&r, 1, scene);
    for (int i = 0; i < 1000; i++) { // until the match is well under way
        q = http(r.api, "GET", "/v1/sessions/1", TOKEN, NULL);
        unsigned ticks = 0;
        const char *t = strstr(q.body, "\"final_ticks\":");
        bool going = t && sscanf(t, "\"final_ticks\":%u", &ticks) == 1 && ticks >= 60;
        reply_free(&q);
        if (going) {
            break;
        }
        usleep(10000);
    }
    kill(r.pid, SIGTERM);
    usleep(100000);
    q = http(r.api, "GET", "/readyz", NULL, NULL);
    cr_assert_eq(q.status, 503, "%s", q.body);
    cr_assert(strstr(q.body, "{\"error\":\"draining: "), "%s", q.body);
    reply_free(&q);
    q = http(r.api, "POST", "/v1/sessions", TOKEN, "{\"players\":2}");
    cr_assert_eq(q.status, 503, "%s", q.body);
    cr_assert(strstr(q.body, "\"where\":\"relay\""), "%s", q.body);
    reply_free(&q);
    cr_assert_eq(wait_status(b0, 30), 0);
    cr_assert_eq(wait_status(b1, 30), 0);
    cr_assert_eq(wait_status(r.pid, 30), 0, "the drained relay exits 0");
    char *log = slurp("relay.out");
    cr_assert(strstr(log, "signal SIGTERM: draining (no new sessions; 1 running"), "%s", log);
    cr_assert(strstr(log, "event session_done session=1 ticks=480"), "%s", log);
    cr_assert(strstr(log, "replay session=1 ticks=480 path="), "%s", log);
    cr_assert(strstr(log, "event session_done session=2 ticks=0"), "%s", log);
    free(log);
    char *out;
    int st = run_tool_status(
        (const char *const[]){"replay", "verify", path_in_dir("d.lsr"), NULL, NULL, NULL}, &out);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "verified 480 ticks"), "%s", out);
    free(out);
}

// status and the error text of a reply, then free it.
static void expect(reply q, int status, const char *text)
{
    cr_assert_eq(q.status, status, "%d, wanted %d: %s", q.status, status, q.body);
    cr_assert(strstr(q.body, text), "'%s' in %s", text, q.body);
    reply_free(&q);
}

Test(relay_api, bad_requests_get_their_status_and_a_reason, .timeout = 30)
{
    write_file("token", TOKEN "\n");
    relay_run r;
    r.pid = SPAWN("relay.out", "relay.err", "relay", "--api", "127.0.0.1:0", "--api-token-file",
                  path_in_dir("token"));
    wait_ready(&r, "relay.out");
    // The probes want no token; everything else does.
    expect(http(r.api, "GET", "/healthz", NULL, NULL), 200, "{\"status\":\"ok\"}");
    expect(http(r.api, "GET", "/v1/sessions", NULL, NULL), 401,
           "{\"error\":\"missing token: send the header 'Authorization: Bearer TOKEN'\","
           "\"where\":\"header Authorization\"}");
    expect(http(r.api, "GET", "/v1/sessions", "not-the-token-at-all", NULL), 401,
           "{\"error\":\"wrong token\",\"where\":\"header Authorization\"}");
    expect(http(r.api, "GET", "/nowhere", NULL, NULL), 401, "missing token");
    expect(http(r.api, "GET", "/nowhere", TOKEN, NULL), 404, "\"error\":\"no such route: /nowhere");
    expect(http(r.api, "PUT", "/v1/sessions", TOKEN, NULL), 405,
           "{\"error\":\"PUT is not allowed here (allowed: POST, GET)\",\"where\":\"method\"}");
    expect(http(r.api, "GET", "/v1/sessions/99", TOKEN, NULL), 404,
           "{\"error\":\"no session 99\",\"where\":\"path\"}");
    expect(http(r.api, "DELETE", "/v1/sessions/x1", TOKEN, NULL), 404, "no session x1");
    // Bodies: malformed JSON (the byte), a bad field (its name), unknown fields.
    expect(http(r.api, "POST", "/v1/sessions", TOKEN, "{\"players\":2,}"), 400,
           "{\"error\":\"a member name in quotes wanted, found '}'\",\"where\":\"byte 13\"}");
    expect(http(r.api, "POST", "/v1/sessions", TOKEN, ""), 400, "the body is empty");
    expect(http(r.api, "POST", "/v1/sessions", TOKEN, "{\"players\":99}"), 400,
           "{\"error\":\"players (player slots) wants a whole number 2..16\","
           "\"where\":\"field players\"}");
    expect(http(r.api, "POST", "/v1/sessions", TOKEN, "{\"players\":2,\"mode\":\"rollback\"}"), 400,
           "\"where\":\"field mode\"");
    expect(http(r.api, "POST", "/v1/sessions", TOKEN, "{\"ticks\":60}"), 400,
           "\"where\":\"field players\"");
    expect(http(r.api, "POST", "/v1/sessions", TOKEN,
                "{\"players\":2,\"scene_hash\":\"0123456789abcdef\"}"),
           400, "this relay records no scene");
    expect(http(r.api, "GET", "/v1/events?after=x", TOKEN, NULL), 400,
           "{\"error\":\"after wants a whole number");
    // Oversized: a Content-Length over 16 KiB is refused before the body is read ...
    int fd = connect_api(r.api);
    const char *big = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                      "Authorization: Bearer " TOKEN "\r\nContent-Length: 20000\r\n\r\n";
    send_all(fd, big, strlen(big));
    expect(read_reply(fd), 413, "\"where\":\"body\"");
    // ... and a chunked body that grows past it when it does.
    fd = connect_api(r.api);
    const char *chunked = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                          "Authorization: Bearer " TOKEN "\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "4e20\r\n";
    send_all(fd, chunked, strlen(chunked));
    static char filler[20000];
    memset(filler, ' ', sizeof filler);
    send_all(fd, filler, sizeof filler);
    send_all(fd, "\r\n0\r\n\r\n", 7);
    expect(read_reply(fd), 413, "the body is larger than 16384 bytes");
    // A good session, ended by the operator; it was not recorded.
    reply q = http(r.api, "POST", "/v1/sessions", TOKEN, "{\"players\":3,\"spectators\":1}");
    cr_assert_eq(q.status, 201, "%s", q.body);
    cr_assert(strstr(q.body, "\"spectator_credentials\":[{\"index\":0,\"credential\":"
                             "\"lockstep-credential 2 session=1 slot=0 role=spectator key="),
              "%s", q.body);
    reply_free(&q);
    expect(http(r.api, "GET", "/v1/sessions/1/recording", TOKEN, NULL), 404,
           "session 1 is not recorded");
    expect(http(r.api, "DELETE", "/v1/sessions/1", TOKEN, NULL), 200,
           "\"state\":\"done\",\"created_by\":\"api\"");
    expect(http(r.api, "GET", "/v1/events?after=1&timeout=0", TOKEN, NULL), 200,
           "{\"seq\":2,\"type\":\"match_result\",\"session\":1,\"final_ticks\":0,"
           "\"ended_by\":\"operator\"");
    // Nothing new: a short long poll comes back empty.
    expect(http(r.api, "GET", "/v1/events?after=2&timeout=1", TOKEN, NULL), 200,
           "{\"events\":[],\"next\":2,");
    kill(r.pid, SIGINT);
    cr_assert_eq(wait_status(r.pid, 10), 0);
}

Test(relay_api, the_token_is_required_and_never_a_flag)
{
    // No token anywhere: exit 1 before listening. A short token is refused. The
    // API's options without --api are usage errors.
    pid_t p = SPAWN("a.out", "a.err", "relay", "--api", "127.0.0.1:0");
    cr_assert_eq(wait_status(p, 10), 1);
    char *err = slurp("a.err"), *out = slurp("a.out");
    cr_assert(strstr(err, "--api needs the operator's token: --api-token-file FILE or the "
                          "environment variable LOCKSTEP_API_TOKEN"),
              "%s", err);
    cr_assert_null(strstr(out, "ready"), "%s", out);
    free(err), free(out);
    write_file("short", "abc\n");
    p = SPAWN("a.out", "a.err", "relay", "--api", "127.0.0.1:0", "--api-token-file",
              path_in_dir("short"));
    cr_assert_eq(wait_status(p, 10), 1);
    err = slurp("a.err");
    cr_assert(strstr(err, "the token must be 16..256 printable characters"), "%s", err);
    free(err);
    p = SPAWN("a.out", "a.err", "relay", "--api-token-file", path_in_dir("short"));
    cr_assert_eq(wait_status(p, 10), 2);
    err = slurp("a.err");
    cr_assert(strstr(err, "--api-token-file and --api-sessions need --api HOST:PORT"), "%s", err);
    free(err);
    p = SPAWN("a.out", "a.err", "relay", "--help");
    cr_assert_eq(wait_status(p, 10), 0);
    out = slurp("a.out");
    for (const char *const *f =
             (const char *const[]){"--api HOST:PORT", "--api-token-file", "$LOCKSTEP_API_TOKEN",
                                   "--api-sessions N", "--drain-seconds N", NULL};
         *f; f++) {
        cr_assert(strstr(out, *f), "%s in %s", *f, out);
    }
    free(out);
    p = SPAWN("a.out", "a.err", "relay", "--api", "localhost:1");
    cr_assert_eq(wait_status(p, 10), 2);
    err = slurp("a.err");
    cr_assert(strstr(err, "--api localhost:1: 'localhost' is not an IPv4 address"), "%s", err);
    free(err);
}

// ---- GET /metrics, scraped by a real Prometheus server ----

// A free TCP port on 127.0.0.1 (bound, read, closed: free again right after).
static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t n = sizeof a;
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    close(fd);
    return ntohs(a.sin_port);
}

// The sample value of `line` ("name{labels} value") in a Prometheus text page.
static double sample(const char *page, const char *line)
{
    const char *p = page;
    size_t n = strlen(line);
    while ((p = strstr(p, line)) != NULL) {
        if ((p == page || p[-1] == '\n') && p[n] == ' ') {
            return strtod(p + n + 1, NULL);
        }
        p += n;
    }
    cr_assert_fail("no sample %s in:\n%s", line, page);
    return -1;
}

// A Prometheus instant query's single value (the string in "value":[t,"V"]), or -1.
static double prom_query(uint16_t port, const char *query)
{
    char path[512];
    snprintf(path, sizeof path, "/api/v1/query?query=%s", query);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1; // not listening yet
    }
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char head[1024];
    int k = snprintf(head, sizeof head,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
    send_all(fd, head, (size_t)k);
    reply q = read_reply(fd);
    double v = -1;
    const char *p = q.status == 200 ? strstr(q.body, "\"value\":[") : NULL;
    if (p && (p = strchr(p, ',')) != NULL && p[1] == '"') {
        v = strtod(p + 2, NULL);
    }
    reply_free(&q);
    return v;
}

Test(relay_api, prometheus_scrapes_the_metrics_of_a_match, .timeout = 90)
{
    cr_assert_eq(access("/usr/bin/prometheus", X_OK), 0,
                 "Prometheus is not installed (make deps installs Debian's prometheus)");
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    write_file("token", TOKEN "\n");
    relay_run r;
    r.pid = SPAWN("relay.out", "relay.err", "relay", "--api", "127.0.0.1:0", "--api-token-file",
                  path_in_dir("token"), "--record", path_in_dir("m.lsr"), "--scene", scene);
    wait_ready(&r, "relay.out");
    // The page wants the token, like every /v1 route.
    reply q = http(r.api, "GET", "/metrics", NULL, NULL);
    cr_assert_eq(q.status, 401, "%s", q.body);
    reply_free(&q);
    // Prometheus, scraping /metrics every second with the token.
    uint16_t prom = free_port();
    char cfg[2048];
    snprintf(cfg, sizeof cfg,
             "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
             "scrape_configs:\n  - job_name: relay\n"
             "    authorization:\n      credentials_file: %s\n"
             "    static_configs:\n      - targets: ['127.0.0.1:%u']\n",
             path_in_dir("token"), r.api);
    write_file("prometheus.yml", cfg);
    char cfg_arg[600], db_arg[600], web_arg[64];
    snprintf(cfg_arg, sizeof cfg_arg, "--config.file=%s", path_in_dir("prometheus.yml"));
    snprintf(db_arg, sizeof db_arg, "--storage.tsdb.path=%s", path_in_dir("tsdb"));
    snprintf(web_arg, sizeof web_arg, "--web.listen-address=127.0.0.1:%u", prom);
    pid_t pp = fork();
    cr_assert_geq(pp, 0);
    if (pp == 0) {
        int o = open(path_in_dir("prometheus.log"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(o, 2);
        execl("/usr/bin/prometheus", "prometheus", cfg_arg, db_arg, web_arg, (char *)NULL);
        _exit(127);
    }
    // A match of two bots through a session made by the API.
    q = http(r.api, "POST", "/v1/sessions", TOKEN,
             "{\"players\":2,\"ticks\":240,\"tick_rate\":120,\"input_delay\":2}");
    cr_assert_eq(q.status, 201, "%s", q.body);
    save_credentials(q.body, 2);
    reply_free(&q);
    pid_t b0 = start_bot(&r, 0, scene), b1 = start_bot(&r, 1, scene);
    cr_assert_eq(wait_status(b0, 30), 0);
    cr_assert_eq(wait_status(b1, 30), 0);
    // The page itself: the session done, datagrams both ways, no drops of a
    // forged kind, the recording written, a histogram over every datagram.
    q = http(r.api, "GET", "/metrics", TOKEN, NULL);
    cr_assert_eq(q.status, 200, "%s", q.body);
    cr_assert(strstr(q.head, "text/plain; version=0.0.4"), "%s", q.head);
    const char *page = q.body;
    cr_assert_eq(sample(page, "lockstep_relay_sessions{state=\"done\"}"), 1);
    cr_assert_eq(sample(page, "lockstep_relay_sessions{state=\"running\"}"), 0);
    double in = sample(page, "lockstep_relay_datagrams_received_total");
    cr_assert_gt(in, 400, "two peers at 120 Hz for 2 s");
    cr_assert_gt(sample(page, "lockstep_relay_datagrams_sent_total"), 400);
    cr_assert_eq(sample(page, "lockstep_relay_datagrams_dropped_total{reason=\"bad_tag\"}"), 0);
    cr_assert_eq(sample(page, "lockstep_relay_recordings_total{result=\"ok\"}"), 1);
    cr_assert_eq(sample(page, "lockstep_relay_datagram_handling_seconds_count"), in,
                 "every datagram received is timed");
    cr_assert_eq(sample(page, "lockstep_relay_datagram_handling_seconds_bucket{le=\"+Inf\"}"), in);
    cr_assert(strstr(page, "# TYPE lockstep_relay_datagram_handling_seconds histogram\n"), "%s",
              page);
    reply_free(&q);
    // And back through Prometheus' own query API, once it has scraped (<= 30 s).
    double done = -1, got = -1;
    for (int i = 0; i < 300 && (done != 1 || got < in); i++) {
        done = prom_query(prom, "lockstep_relay_sessions%7Bstate%3D%22done%22%7D");
        got = prom_query(prom, "lockstep_relay_datagrams_received_total");
        usleep(100000);
    }
    kill(pp, SIGTERM);
    waitpid(pp, NULL, 0);
    char *plog = slurp("prometheus.log");
    cr_assert_eq(done, 1, "Prometheus never saw the finished session:\n%s", plog);
    cr_assert_geq(got, in, "Prometheus: %.0f datagrams, the page %.0f:\n%s", got, in, plog);
    free(plog);
    kill(r.pid, SIGINT);
    cr_assert_eq(wait_status(r.pid, 10), 0);
}

// ---- --workers: sessions sharded over worker threads, one UDP port each ----

// The soccer arena with the ball rolling into the +z goal at the start: team 0
// (players 0, 2, ...) scores in the first second whatever the bots do.
static void write_goal_scene(char *path, size_t size)
{
    char src[4200];
    snprintf(src, sizeof src, "%s/tools/scenes/soccer.scene", root);
    char *text = NULL;
    FILE *f = fopen(src, "r");
    cr_assert_not_null(f, "%s", src);
    size_t cap = 1 << 16, n = 0;
    text = malloc(cap);
    cr_assert_not_null(text);
    for (size_t k; (k = fread(text + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            cap *= 2;
            text = realloc(text, cap);
            cr_assert_not_null(text);
        }
    }
    fclose(f);
    text[n] = '\0';
    const char *from = "sphere radius 1.000 pos 0 1.000 0 ";
    char *at = strstr(text, from);
    cr_assert_not_null(at, "the ball's line of soccer.scene changed");
    snprintf(path, size, "%s", path_in_dir("goal.scene"));
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs("sphere radius 1.000 pos 0 1.000 19.000 vel 0 0 10 ", f);
    fputs(at + strlen(from), f);
    fclose(f);
    free(text);
}

// POST a session; its "relay" address into addr and its credentials to
// PREFIXk.cred (k < players).
static void create_session(const relay_run *r, const char *body, uint32_t players,
                           const char *prefix, char *addr, size_t addr_size)
{
    reply q = http(r->api, "POST", "/v1/sessions", TOKEN, body);
    cr_assert_eq(q.status, 201, "%s", q.body);
    json_string_at(q.body, "relay", addr, addr_size);
    const char *p = strstr(q.body, "\"credentials\":[");
    cr_assert_not_null(p, "%s", q.body);
    for (uint32_t k = 0; k < players; k++) {
        char text[256], name[32];
        json_string_at(p, "credential", text, sizeof text);
        strcat(text, "\n");
        snprintf(name, sizeof name, "%s%u.cred", prefix, k);
        write_file(name, text);
        p = strstr(p, "\"credential\":\"") + 14;
    }
    reply_free(&q);
}

static pid_t start_bot_at(const char *addr, const char *prefix, uint32_t k, const char *scene)
{
    char out[32], err[32], cred[32];
    snprintf(out, sizeof out, "%s%u.out", prefix, k);
    snprintf(err, sizeof err, "%s%u.err", prefix, k);
    snprintf(cred, sizeof cred, "%s%u.cred", prefix, k);
    return SPAWN(out, err, "bot", "--relay", addr, "--credential", path_in_dir(cred), "--scene",
                 scene);
}

// The "score=A-B" a bot printed last.
static void bot_score(const char *prefix, uint32_t k, int *a, int *b)
{
    char name[32];
    snprintf(name, sizeof name, "%s%u.out", prefix, k);
    char *out = slurp(name);
    const char *s = strstr(out, " score=");
    cr_assert_not_null(s, "%s", out);
    cr_assert_eq(sscanf(s, " score=%d-%d", a, b), 2, "%s", out);
    free(out);
}

static void verify_signed(const char *name, const char *ticks)
{
    char *out;
    int st = run_tool_status((const char *const[]){"replay", "verify", path_in_dir(name),
                                                   "--pubkey", path_in_dir("relay.pub"), NULL},
                             &out);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, ticks), "%s", out);
    cr_assert(strstr(out, "signed"), "%s", out);
    free(out);
}

Test(relay_api, two_workers_shard_sessions_and_each_result_carries_the_score, .timeout = 90)
{
    // --workers 2: session 1 on worker 0 (the --bind port), session 2 on worker 1
    // (its own port, in the answer). Two soccer matches, one per worker, played at
    // once by bots; each match_result carries the score the relay re-simulated from
    // its recording, equal to what the bots saw; /metrics sums both workers.
    char scene[4200];
    write_goal_scene(scene, sizeof scene);
    char *out;
    int st = run_tool_status(
        (const char *const[]){"keygen", "--out", path_in_dir("relay"), NULL, NULL, NULL}, &out);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    write_file("token", TOKEN "\n");
    relay_run r;
    r.pid = SPAWN("relay.out", "relay.err", "relay", "--workers", "2", "--api", "127.0.0.1:0",
                  "--api-token-file", path_in_dir("token"), "--record", path_in_dir("m.lsr"),
                  "--sign-key", path_in_dir("relay.key"), "--scene", scene);
    wait_ready(&r, "relay.out");
    char *log = slurp("relay.out");
    unsigned port1 = 0;
    const char *w1 = strstr(log, "\nworker 1 listening 127.0.0.1:");
    cr_assert(w1 && sscanf(w1, "\nworker 1 listening 127.0.0.1:%u", &port1) == 1, "%s", log);
    free(log);
    const char *body = "{\"players\":2,\"ticks\":240,\"tick_rate\":120,\"input_delay\":2}";
    char a1[64], a2[64], expect2[64];
    create_session(&r, body, 2, "s1c", a1, sizeof a1);
    create_session(&r, body, 2, "s2c", a2, sizeof a2);
    snprintf(expect2, sizeof expect2, "127.0.0.1:%u", port1);
    cr_assert_str_eq(a1, r.udp, "session 1 on worker 0");
    cr_assert_str_eq(a2, expect2, "session 2 on worker 1, its port in the answer");
    reply q = http(r.api, "GET", "/v1/sessions/2", TOKEN, NULL);
    cr_assert_eq(q.status, 200, "%s", q.body);
    char a2get[64];
    json_string_at(q.body, "relay", a2get, sizeof a2get);
    cr_assert_str_eq(a2get, expect2);
    reply_free(&q);
    pid_t b[4] = {start_bot_at(a1, "s1c", 0, scene), start_bot_at(a1, "s1c", 1, scene),
                  start_bot_at(a2, "s2c", 0, scene), start_bot_at(a2, "s2c", 1, scene)};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(wait_status(b[i], 40), 0, "bot %d", i);
    }
    // Events 1 and 2: session_created; then a match_result per session, each once
    // its recording is re-simulated.
    char *results[2] = {NULL, NULL};
    for (int i = 0; i < 200 && (!results[0] || !results[1]); i++) {
        q = http(r.api, "GET", "/v1/events?after=2&timeout=5", TOKEN, NULL);
        cr_assert_eq(q.status, 200, "%s", q.body);
        for (int s = 0; s < 2; s++) {
            char pat[80];
            snprintf(pat, sizeof pat, "\"type\":\"match_result\",\"session\":%d,", s + 1);
            const char *e = strstr(q.body, pat);
            if (e && !results[s]) {
                results[s] = strndup(e, 4000);
            }
        }
        reply_free(&q);
        usleep(50000);
    }
    for (int s = 0; s < 2; s++) {
        cr_assert_not_null(results[s], "no match_result for session %d", s + 1);
        const char *e = results[s];
        cr_assert(strstr(e, "\"final_ticks\":240,\"ended_by\":\"ticks\",\"desyncs\":0,"), "%s", e);
        int x0, y0, x1, y1;
        char prefix[8];
        snprintf(prefix, sizeof prefix, "s%dc", s + 1);
        bot_score(prefix, 0, &x0, &y0);
        bot_score(prefix, 1, &x1, &y1);
        cr_assert(x0 == x1 && y0 == y1, "the bots agree");
        cr_assert_geq(x0, 1, "the ball rolls into team 0's goal");
        char want[160];
        snprintf(want, sizeof want,
                 "\"result\":{\"game\":\"soccer\",\"ticks\":240,\"verified\":true,"
                 "\"mismatch_tick\":null,\"score\":[%d,%d],\"score_words\":[0,1],\"words\":[%d,%d,",
                 x0, y0, x0, y0);
        cr_assert(strstr(e, want), "want %s in %s", want, e);
        free(results[s]);
    }
    // The session in full keeps it.
    q = http(r.api, "GET", "/v1/sessions/2", TOKEN, NULL);
    cr_assert(strstr(q.body, "\"result\":{\"game\":\"soccer\",\"ticks\":240,\"verified\":true,"),
              "%s", q.body);
    reply_free(&q);
    // Both listed; /metrics sums the workers: every datagram received (both
    // workers' cores) is timed (both workers' histograms).
    q = http(r.api, "GET", "/v1/sessions", TOKEN, NULL);
    cr_assert(strstr(q.body, "{\"session\":1,\"state\":\"done\""), "%s", q.body);
    cr_assert(strstr(q.body, "{\"session\":2,\"state\":\"done\""), "%s", q.body);
    reply_free(&q);
    double peers_in = 0;
    for (int s = 1; s <= 2; s++) {
        char path[32];
        snprintf(path, sizeof path, "/v1/sessions/%d", s);
        q = http(r.api, "GET", path, TOKEN, NULL);
        for (const char *p = q.body; (p = strstr(p, "\"packets_in\":")) != NULL; p++) {
            peers_in += strtod(p + 13, NULL);
        }
        reply_free(&q);
    }
    q = http(r.api, "GET", "/metrics", TOKEN, NULL);
    cr_assert_eq(q.status, 200, "%s", q.body);
    double in = sample(q.body, "lockstep_relay_datagrams_received_total");
    cr_assert_eq(sample(q.body, "lockstep_relay_sessions{state=\"done\"}"), 2);
    cr_assert_geq(in, peers_in, "the relay-wide count covers both workers' peers");
    cr_assert_eq(sample(q.body, "lockstep_relay_datagram_handling_seconds_count"), in,
                 "both workers' datagrams are timed");
    cr_assert_eq(sample(q.body, "lockstep_relay_recordings_total{result=\"ok\"}"), 2);
    reply_free(&q);
    kill(r.pid, SIGINT);
    cr_assert_eq(wait_status(r.pid, 10), 0);
    log = slurp("relay.out");
    cr_assert(strstr(log, "session 2 created by the api slots=2 spectators=0 ticks=240 worker=1 "
                          "relay=127.0.0.1:"),
              "%s", log);
    cr_assert(strstr(log, "result session=2 game=soccer ticks=240 score="), "%s", log);
    free(log);
    verify_signed("m.lsr", "verified 240 ticks");
    verify_signed("m.lsr.2", "verified 240 ticks");
}

Test(relay_api, sigterm_drains_the_matches_of_every_worker, .timeout = 60)
{
    // Two running matches on two workers: SIGTERM waits for both, the relay exits 0
    // and both recordings are whole and signed.
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    char *out;
    int st = run_tool_status(
        (const char *const[]){"keygen", "--out", path_in_dir("relay"), NULL, NULL, NULL}, &out);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    write_file("token", TOKEN "\n");
    relay_run r;
    r.pid =
        SPAWN("relay.out", "relay.err", "relay", "--workers", "2", "--api", "127.0.0.1:0",
              "--api-token-file", path_in_dir("token"), "--record", path_in_dir("d.lsr"),
              "--sign-key", path_in_dir("relay.key"), "--scene", scene, "--drain-seconds", "30");
    wait_ready(&r, "relay.out");
    const char *body = "{\"players\":2,\"ticks\":480,\"tick_rate\":120}";
    char a1[64], a2[64];
    create_session(&r, body, 2, "s1c", a1, sizeof a1);
    create_session(&r, body, 2, "s2c", a2, sizeof a2);
    cr_assert_str_neq(a1, a2, "one port per worker");
    pid_t b[4] = {start_bot_at(a1, "s1c", 0, scene), start_bot_at(a1, "s1c", 1, scene),
                  start_bot_at(a2, "s2c", 0, scene), start_bot_at(a2, "s2c", 1, scene)};
    for (int i = 0; i < 1000; i++) { // until both matches are under way
        unsigned t1 = 0, t2 = 0;
        reply q = http(r.api, "GET", "/v1/sessions/1", TOKEN, NULL);
        const char *t = strstr(q.body, "\"final_ticks\":");
        if (t) {
            sscanf(t, "\"final_ticks\":%u", &t1);
        }
        reply_free(&q);
        q = http(r.api, "GET", "/v1/sessions/2", TOKEN, NULL);
        t = strstr(q.body, "\"final_ticks\":");
        if (t) {
            sscanf(t, "\"final_ticks\":%u", &t2);
        }
        reply_free(&q);
        if (t1 >= 60 && t2 >= 60) {
            break;
        }
        usleep(10000);
    }
    kill(r.pid, SIGTERM);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(wait_status(b[i], 30), 0, "bot %d", i);
    }
    cr_assert_eq(wait_status(r.pid, 30), 0, "the drained relay exits 0");
    char *log = slurp("relay.out");
    cr_assert(strstr(log, "signal SIGTERM: draining (no new sessions; 2 running"), "%s", log);
    cr_assert(strstr(log, "replay session=1 ticks=480 path="), "%s", log);
    cr_assert(strstr(log, "replay session=2 ticks=480 path="), "%s", log);
    free(log);
    verify_signed("d.lsr", "verified 480 ticks");
    verify_signed("d.lsr.2", "verified 480 ticks");
}
