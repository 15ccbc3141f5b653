// SPDX-License-Identifier: MIT
// `lockstep relay --ws` (SPEC.md §17.16), end to end on 127.0.0.1 with real
// sockets: the tool next to this binary runs the relay and the bots (`lockstep
// bot --ws URL` talks to the relay over a WebSocket), and build/ws_probe
// (tests/ws/ws_probe.c, a libwebsockets client) carries a UDP bot's datagrams
// over a WebSocket (a bridge), or sends bad input. A match with a WebSocket peer
// and a UDP peer ends equal and its recording verifies (on one worker and on two,
// and over wss://); text, oversized and garbage messages, a reader that stops
// reading and a refused Origin are each counted while the UDP peers play on;
// without --ws nothing changes. Issue 31.
#define _GNU_SOURCE
#include "test_proc.h"
#include "test_tool.h"
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static char tool[4096], probe[4096];
static char dir[256];
static char root[4096];

static void setup(void)
{
    test_find_tool(tool, sizeof tool);
    snprintf(probe, sizeof probe, "%s", tool);
    char *slash = strrchr(probe, '/');
    snprintf(slash + 1, sizeof probe - (size_t)(slash + 1 - probe), "ws_probe");
    cr_assert_eq(access(probe, X_OK), 0, "%s is built (make test builds it)", probe);
    cr_assert_not_null(getcwd(root, sizeof root)); // tests run from the repository root
    snprintf(dir, sizeof dir, "/tmp/ls_test_relay_ws_%ld", (long)getpid());
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

TestSuite(relay_ws, .init = setup, .fini = teardown);

static char *path_in_dir(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static char *slurp(const char *name)
{
    return tp_slurp(path_in_dir(name));
}

// Start exe in the background (in dir), stdout and stderr to files in dir.
static pid_t spawn(const char *exe, const char *out_name, const char *err_name,
                   const char *const *args)
{
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/%s", dir, out_name);
    snprintf(err, sizeof err, "%s/%s", dir, err_name);
    return tp_spawn(exe, dir, NULL, out, err, args);
}

#define TOOL(out, err, ...)  spawn(tool, out, err, (const char *const[]){__VA_ARGS__, NULL})
#define PROBE(out, err, ...) spawn(probe, out, err, (const char *const[]){__VA_ARGS__, NULL})

#define wait_status tp_wait_status

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

// Wait (up to 10 s) for `prefix` at the start of a line of file name; the rest of
// that line (up to a space or the end) in out.
static void wait_line(const char *name, const char *prefix, char *out, size_t size)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\n%s", prefix);
    for (int i = 0; i < 1000; i++) {
        char *log = slurp(name);
        size_t n = strlen(log);
        char *text = malloc(n + 2);
        cr_assert_not_null(text);
        text[0] = '\n';
        memcpy(text + 1, log, n + 1);
        free(log);
        const char *at = strstr(text, pat);
        if (at && strchr(at + 1, '\n')) {
            at += strlen(pat);
            size_t k = strcspn(at, " \n");
            snprintf(out, size, "%.*s", (int)k, at);
            free(text);
            return;
        }
        free(text);
        usleep(10000);
    }
    char *log = slurp(name);
    cr_assert_fail("%s never printed '%s': %s", name, prefix, log);
}

// The value of `key=` on the last line of name that starts with `line`.
static unsigned long long stat_of(const char *name, const char *line, const char *key)
{
    char *log = slurp(name);
    const char *at = NULL;
    for (const char *p = strstr(log, line); p; p = strstr(p + 1, line)) {
        at = p;
    }
    cr_assert_not_null(at, "no '%s' in %s: %s", line, name, log);
    char k[64];
    snprintf(k, sizeof k, " %s=", key);
    const char *v = strstr(at, k);
    const char *eol = strchr(at, '\n');
    cr_assert(v && (!eol || v < eol), "no %s in: %s", key, at);
    unsigned long long x = strtoull(v + strlen(k), NULL, 10);
    free(log);
    return x;
}

// The checksum= of a bot's result line (its whole value, hex).
static void bot_checksum(const char *name, char *out, size_t size)
{
    char *log = slurp(name);
    const char *r = strstr(log, "result slot=");
    cr_assert_not_null(r, "%s: %s", name, log);
    const char *c = strstr(r, " checksum=");
    cr_assert_not_null(c);
    c += 10;
    snprintf(out, size, "%.*s", (int)strcspn(c, " \n"), c);
    cr_assert(strstr(r, " desyncs=0 "), "%s", r);
    free(log);
}

static const char *scene(void)
{
    static char s[4200];
    snprintf(s, sizeof s, "%s/tools/scenes/arena.scene", root);
    return s;
}

// Run `replay verify` on a recording in dir; assert it verifies `ticks`.
static void verify(const char *rec, const char *ticks)
{
    pid_t v = TOOL("v.out", "v.err", "replay", "verify", path_in_dir(rec));
    cr_assert_eq(wait_status(v, 60), 0);
    char *out = slurp("v.out");
    char want[64];
    snprintf(want, sizeof want, "verified %s ticks", ticks);
    cr_assert(strstr(out, want), "%s", out);
    free(out);
}

// A bridge to the WebSocket url for one bot: its UDP address in udp.
static pid_t bridge(const char *url, const char *tag, const char *const *extra, char *udp,
                    size_t size)
{
    char out[32], err[32];
    snprintf(out, sizeof out, "%s.out", tag);
    snprintf(err, sizeof err, "%s.err", tag);
    const char *args[12] = {url, "--bridge", "--seconds", "60"};
    int n = 4;
    for (int i = 0; extra && extra[i] && n < 11; i++) {
        args[n++] = extra[i];
    }
    args[n] = NULL;
    pid_t p = spawn(probe, out, err, args);
    wait_line(out, "udp ", udp, size);
    return p;
}

static pid_t bot(const char *relay, const char *cred, const char *tag)
{
    char out[32], err[32];
    snprintf(out, sizeof out, "%s.out", tag);
    snprintf(err, sizeof err, "%s.err", tag);
    return TOOL(out, err, "bot", "--relay", relay, "--credential", path_in_dir(cred), "--scene",
                scene());
}

// One session's match on relay address udp / WebSocket url: slot 0 over UDP, slot 1
// over the WebSocket. Both bots end equal with 0 desyncs.
static void play_mixed(const char *udp, const char *url, uint32_t session, const char *tag)
{
    char c0[64], c1[64], t0[32], t1[32], tb[32], via[64];
    snprintf(c0, sizeof c0, "session-%u-slot-0.cred", session);
    snprintf(c1, sizeof c1, "session-%u-slot-1.cred", session);
    snprintf(t0, sizeof t0, "%s-b0", tag);
    snprintf(t1, sizeof t1, "%s-b1", tag);
    snprintf(tb, sizeof tb, "%s-br", tag);
    pid_t br = bridge(url, tb, NULL, via, sizeof via);
    pid_t b0 = bot(udp, c0, t0), b1 = bot(via, c1, t1);
    cr_assert_eq(wait_status(b0, 60), 0);
    cr_assert_eq(wait_status(b1, 60), 0);
    char k0[32], k1[32], f0[40], f1[40];
    snprintf(f0, sizeof f0, "%s.out", t0);
    snprintf(f1, sizeof f1, "%s.out", t1);
    bot_checksum(f0, k0, sizeof k0);
    bot_checksum(f1, k1, sizeof k1);
    cr_assert_str_eq(k0, k1, "the UDP and the WebSocket peer end equal");
    stop(br);
}

Test(relay_ws, a_websocket_peer_and_a_udp_peer_play_one_match, .timeout = 90)
{
    // `lockstep bot --ws URL`: the native bot with its datagrams over a WebSocket;
    // both in rollback mode.
    pid_t r = TOOL("relay.out", "relay.err", "relay", "--ws", "127.0.0.1:0", "--workers", "1",
                   "--slots", "2", "--ticks", "240", "--credentials", ".", "--record", "m.lsr",
                   "--scene", scene(), "--exit-when-done");
    char udp[64], ws[64], url[96];
    wait_line("relay.out", "listening ", udp, sizeof udp);
    wait_line("relay.out", "ws ", ws, sizeof ws);
    wait_line("relay.out", "ready", url, sizeof url);
    snprintf(url, sizeof url, "ws://%s", ws);
    pid_t b0 = TOOL("b0.out", "b0.err", "bot", "--relay", udp, "--credential",
                    path_in_dir("session-1-slot-0.cred"), "--scene", scene(), "--mode", "rollback");
    pid_t b1 = TOOL("b1.out", "b1.err", "bot", "--ws", url, "--credential",
                    path_in_dir("session-1-slot-1.cred"), "--scene", scene(), "--mode", "rollback");
    cr_assert_eq(wait_status(b0, 60), 0);
    cr_assert_eq(wait_status(b1, 60), 0);
    char k0[32], k1[32];
    bot_checksum("b0.out", k0, sizeof k0);
    bot_checksum("b1.out", k1, sizeof k1);
    cr_assert_str_eq(k0, k1, "the UDP and the WebSocket peer end equal");
    cr_assert_eq(wait_status(r, 30), 0);
    verify("m.lsr", "240");
    cr_assert_eq(stat_of("relay.out", "stats relay", "desyncs"), 0);
    cr_assert_eq(stat_of("relay.out", "stats ws", "accepted"), 1);
    cr_assert_gt(stat_of("relay.out", "stats ws", "frames_in"), 240);
    cr_assert_gt(stat_of("relay.out", "stats ws", "frames_out"), 240);
    // The WebSocket peer's address in the core: 100::/64, port 0.
    cr_assert_eq(
        stat_of("relay.out", "stats session=1 slot=1 addr=[100:0:0:0:0:0:0:1]:0", "inputs"), 240);
    // --ws and --relay: one of them; a spectator watches over UDP.
    pid_t u = TOOL("u.out", "u.err", "bot", "--ws", url, "--relay", udp, "--credential", "x");
    cr_assert_eq(wait_status(u, 10), 2);
    char *err = slurp("u.err");
    cr_assert(strstr(err, "--relay and --ws: give one of them"), "%s", err);
    free(err);
}

Test(relay_ws, two_workers_each_take_their_sessions_websocket_peers, .timeout = 90)
{
    // One WebSocket port per worker (PORT+K, or any free port with 0), printed
    // with the session's UDP address: session 2's players go to worker 1's.
    pid_t r = TOOL("relay.out", "relay.err", "relay", "--ws", "127.0.0.1:0", "--workers", "2",
                   "--sessions", "2", "--slots", "2", "--ticks", "180", "--credentials", ".",
                   "--record", "m.lsr", "--scene", scene(), "--exit-when-done");
    char u1[64], w1[64], u2[64], w2[64], ready[8], url1[96], url2[96];
    wait_line("relay.out", "session 1 relay ", u1, sizeof u1);
    wait_line("relay.out", "session 2 relay ", u2, sizeof u2);
    wait_line("relay.out", "ready", ready, sizeof ready);
    char *log = slurp("relay.out");
    const char *s1 = strstr(log, "session 1 relay "), *s2 = strstr(log, "session 2 relay ");
    cr_assert(strstr(s1, " worker 0 ws ") && strstr(s2, " worker 1 ws "), "%s", log);
    sscanf(strstr(s1, " ws ") + 4, "%63s", w1);
    sscanf(strstr(s2, " ws ") + 4, "%63s", w2);
    free(log);
    cr_assert_str_neq(w1, w2);
    snprintf(url1, sizeof url1, "ws://%s", w1);
    snprintf(url2, sizeof url2, "ws://%s", w2);
    play_mixed(u1, url1, 1, "s1");
    play_mixed(u2, url2, 2, "s2");
    cr_assert_eq(wait_status(r, 30), 0);
    verify("m.lsr", "180");
    verify("m.lsr.2", "180");
    cr_assert_eq(stat_of("relay.out", "stats ws", "accepted"), 2);
}

Test(relay_ws, wss_carries_a_match_with_a_self_signed_certificate, .timeout = 90)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
             "-keyout %s/key.pem -out %s/cert.pem >/dev/null 2>&1",
             dir, dir);
    cr_assert_eq(system(cmd), 0, "openssl made a self-signed certificate");
    pid_t r =
        TOOL("relay.out", "relay.err", "relay", "--ws", "127.0.0.1:0", "--ws-cert", "cert.pem",
             "--ws-key", "key.pem", "--workers", "1", "--slots", "2", "--ticks", "120",
             "--credentials", ".", "--record", "m.lsr", "--scene", scene(), "--exit-when-done");
    char udp[64], ws[64], url[96];
    wait_line("relay.out", "listening ", udp, sizeof udp);
    wait_line("relay.out", "wss ", ws, sizeof ws);
    wait_line("relay.out", "ready", url, sizeof url);
    snprintf(url, sizeof url, "wss://%s", ws);
    play_mixed(udp, url, 1, "t");
    cr_assert_eq(wait_status(r, 30), 0);
    verify("m.lsr", "120");
    cr_assert_eq(stat_of("relay.out", "stats ws", "accepted"), 1);
}

// A probe that sends one kind of bad input and reports how the relay answered.
static char *probe_send(const char *url, const char *kind, const char *origin, const char *tag)
{
    char out[32], err[32];
    snprintf(out, sizeof out, "%s.out", tag);
    snprintf(err, sizeof err, "%s.err", tag);
    pid_t p = origin ? PROBE(out, err, url, "--send", kind, "--seconds", "3", "--origin", origin)
                     : PROBE(out, err, url, "--send", kind, "--seconds", "3");
    int st = wait_status(p, 20);
    cr_assert(st == 0 || st == 2, "ws_probe: %d", st);
    return slurp(out);
}

Test(relay_ws, bad_websocket_input_is_counted_and_the_udp_peers_play_on, .timeout = 120)
{
    // Three players: two over UDP, one over a WebSocket whose reader stops reading
    // after 1 s. Meanwhile text, oversized and garbage messages and a refused
    // Origin arrive on other connections.
    pid_t r = TOOL("relay.out", "relay.err", "relay", "--ws", "127.0.0.1:0", "--ws-origin",
                   "http://good.example", "--ws-send-queue", "4096", "--workers", "1", "--slots",
                   "3", "--ticks", "300", "--timeout", "6000", "--credentials", ".", "--record",
                   "m.lsr", "--scene", scene(), "--exit-when-done");
    char udp[64], ws[64], url[96], via[64];
    wait_line("relay.out", "listening ", udp, sizeof udp);
    wait_line("relay.out", "ws ", ws, sizeof ws);
    wait_line("relay.out", "ready", url, sizeof url);
    snprintf(url, sizeof url, "ws://%s", ws);
    pid_t br =
        bridge(url, "slow", (const char *const[]){"--slow-after", "1000", NULL}, via, sizeof via);
    pid_t b0 = bot(udp, "session-1-slot-0.cred", "b0");
    pid_t b1 = bot(udp, "session-1-slot-1.cred", "b1");
    pid_t b2 = bot(via, "session-1-slot-2.cred", "b2");
    char *o = probe_send(url, "text", NULL, "text");
    cr_assert(strstr(o, "connected\nclosed 1003\n"), "%s", o);
    free(o);
    o = probe_send(url, "big", NULL, "big");
    cr_assert(strstr(o, "connected\nclosed 1009\n"), "%s", o);
    free(o);
    o = probe_send(url, "garbage", NULL, "garbage");
    cr_assert(strstr(o, "connected\n"), "%s", o);
    cr_assert_null(strstr(o, "closed"), "garbage datagrams are dropped, not closed: %s", o);
    free(o);
    o = probe_send(url, "text", "evil.example", "evil"); // lws' client sends http://evil.example
    cr_assert(strstr(o, "error "), "%s", o);
    cr_assert_null(strstr(o, "connected"), "%s", o);
    free(o);
    o = probe_send(url, "big", "good.example", "good"); // listed: accepted (then 1009)
    cr_assert(strstr(o, "connected\nclosed 1009\n"), "%s", o);
    free(o);
    cr_assert_eq(wait_status(b0, 90), 0);
    cr_assert_eq(wait_status(b1, 90), 0);
    char k0[32], k1[32];
    bot_checksum("b0.out", k0, sizeof k0);
    bot_checksum("b1.out", k1, sizeof k1);
    cr_assert_str_eq(k0, k1);
    cr_assert_eq(wait_status(r, 30), 0);
    stop(b2);
    stop(br);
    verify("m.lsr", "300");
    cr_assert_eq(stat_of("relay.out", "stats ws", "text_closed"), 1);
    cr_assert_eq(stat_of("relay.out", "stats ws", "oversize_closed"), 2);
    cr_assert_eq(stat_of("relay.out", "stats ws", "origin_refused"), 1);
    cr_assert_eq(stat_of("relay.out", "stats ws", "slow_closed"), 1);
    cr_assert_eq(stat_of("relay.out", "stats ws", "open"), 0);
    // The 64 garbage messages are datagrams the core refused, as over UDP.
    unsigned long long refused = stat_of("relay.out", "stats relay", "malformed") +
                                 stat_of("relay.out", "stats relay", "truncated") +
                                 stat_of("relay.out", "stats relay", "wrong_version") +
                                 stat_of("relay.out", "stats relay", "bad_mac") +
                                 stat_of("relay.out", "stats relay", "no_session");
    cr_assert_geq(refused, 64);
    cr_assert_eq(stat_of("relay.out", "stats relay", "desyncs"), 0);
}

Test(relay_ws, without_ws_nothing_changes, .timeout = 30)
{
    pid_t r = TOOL("relay.out", "relay.err", "relay", "--workers", "1", "--json");
    char ready[8];
    wait_line("relay.err", "ready", ready, sizeof ready);
    kill(r, SIGINT);
    cr_assert_eq(wait_status(r, 10), 0);
    char *log = slurp("relay.err"), *json = slurp("relay.out");
    cr_assert_null(strstr(log, "\nws "), "%s", log);
    cr_assert_null(strstr(log, "wss "), "%s", log);
    cr_assert_null(strstr(log, "stats ws"), "%s", log);
    cr_assert_null(strstr(json, "\"ws\""), "%s", json);
    free(log), free(json);
    // The WebSocket options need --ws.
    pid_t u = TOOL("u.out", "u.err", "relay", "--ws-origin", "http://a.example");
    cr_assert_eq(wait_status(u, 10), 2);
    char *err = slurp("u.err");
    cr_assert(strstr(err, "need --ws HOST:PORT"), "%s", err);
    free(err);
    u = TOOL("u.out", "u.err", "relay", "--ws", "127.0.0.1:0", "--ws-cert", "c.pem");
    cr_assert_eq(wait_status(u, 10), 2);
    err = slurp("u.err");
    cr_assert(strstr(err, "both --ws-cert and --ws-key"), "%s", err);
    free(err);
}

// GET path on 127.0.0.1:port with the bearer token; the whole answer (headers and
// body). A few lines of HTTP/1.1 written by hand, as tests/test_relay_api.c does.
static char *http_get(uint16_t port, const char *path, const char *token)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                     "Connection: close\r\n\r\n",
                     path, token);
    cr_assert_eq(write(fd, req, (size_t)n), n);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            cr_assert_not_null(out);
        }
        ssize_t got = read(fd, out + len, 4096);
        if (got <= 0) {
            break;
        }
        len += (size_t)got;
    }
    close(fd);
    out[len] = '\0';
    return out;
}

Test(relay_ws, the_websocket_counters_are_in_the_metrics, .timeout = 30)
{
    FILE *f = fopen(path_in_dir("token"), "w");
    cr_assert_not_null(f);
    fputs("ws-test-token-0123456789\n", f);
    fclose(f);
    pid_t r = TOOL("relay.out", "relay.err", "relay", "--ws", "127.0.0.1:0", "--workers", "1",
                   "--api", "127.0.0.1:0", "--api-token-file", "token", "--sessions", "1");
    char ws[64], api[64], ready[8], url[96];
    wait_line("relay.out", "ws ", ws, sizeof ws);
    wait_line("relay.out", "api ", api, sizeof api);
    wait_line("relay.out", "ready", ready, sizeof ready);
    snprintf(url, sizeof url, "ws://%s", ws);
    char *o = probe_send(url, "text", NULL, "text");
    cr_assert(strstr(o, "closed 1003"), "%s", o);
    free(o);
    o = probe_send(url, "garbage", NULL, "garbage");
    free(o);
    char *m =
        http_get((uint16_t)atoi(strchr(api, ':') + 1), "/metrics", "ws-test-token-0123456789");
    cr_assert(strstr(m, "\nlockstep_relay_ws_connections_accepted_total 2\n"), "%s", m);
    cr_assert(strstr(m, "\nlockstep_relay_ws_messages_received_total 64\n"), "%s", m);
    cr_assert(strstr(m, "\nlockstep_relay_ws_refused_total{reason=\"text\"} 1\n"), "%s", m);
    cr_assert(strstr(m, "\nlockstep_relay_ws_refused_total{reason=\"slow_reader\"} 0\n"), "%s", m);
    free(m);
    kill(r, SIGINT);
    cr_assert_eq(wait_status(r, 10), 0);
}
