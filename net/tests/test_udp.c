// SPDX-License-Identifier: MIT
// Loopback tests with real UDP sockets: the libuv relay in a thread (udp_relay.h)
// probed by plain POSIX sockets (keys, challenges, replays, no amplification,
// malformed input, a v1 peer refused),
// and the `lockstep` tool's relay and bot processes end to end (clean, lossy,
// a perturbed peer named at its tick, a relay killed with SIGKILL leaving a
// readable replay). In-process peers, honest and modified: test_udp_peers.c.
// Functional outcomes only, generous timeouts, ephemeral ports.
#define _GNU_SOURCE
#include "../../tests/test_tool.h"
#include "ls/net_auth.h"
#include "ls/net_relay.h"
#include "ls/net_uv.h"
#include "ls/replay.h"
#include "udp_relay.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int udp_socket(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct timeval tv = {2, 0}; // generous: "no reply" means nothing within 2 s
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_to_relay(int fd, uint16_t port, const uint8_t *data, size_t len)
{
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    cr_assert_eq(sendto(fd, data, len, 0, (struct sockaddr *)&a, sizeof a), (ssize_t)len);
}

static ssize_t recv_reply(int fd, uint8_t *buf, size_t cap)
{
    return recv(fd, buf, cap, 0);
}

// A JOIN for `slot` sealed with `key`, sequence number seq.
static size_t join_msg(const relay_thread *t, uint8_t slot, const uint8_t *key, uint64_t seq,
                       uint64_t cookie, uint8_t *buf)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_JOIN;
    m.h.session = t->session;
    m.h.slot = slot;
    m.h.seq = seq;
    m.u.cookie = cookie;
    size_t n = ls_net_encode(&m, buf, LS_NET_MAX_DATAGRAM);
    cr_assert_eq(ls_net_seal(buf, n, key, LS_NET_TO_RELAY), LS_OK);
    return n;
}

static ls_net_credential cred_of(const relay_thread *t, uint32_t slot)
{
    ls_net_credential c;
    cr_assert_eq(ls_relay_session_credential(t->relay, t->session, slot, &c), LS_OK);
    return c;
}

Test(net_udp, join_challenge_welcome_over_real_sockets_without_amplification)
{
    relay_thread t;
    rt_start(&t);
    int fd = udp_socket();
    uint8_t buf[LS_NET_MAX_DATAGRAM], reply[2048];
    ls_net_credential cred = cred_of(&t, 0);
    size_t n = join_msg(&t, 0, cred.key, 1, 0, buf);
    send_to_relay(fd, t.port, buf, n);
    ssize_t got = recv_reply(fd, reply, sizeof reply);
    cr_assert_gt(got, 0, "a challenge comes back");
    cr_assert_leq((size_t)got, n, "challenge %zd bytes <= join %zu bytes", got, n);
    cr_assert(ls_net_verify(reply, (size_t)got, cred.key, LS_NET_TO_PEER), "sealed by the relay");
    ls_net_msg c;
    cr_assert_eq(ls_net_decode(reply, (size_t)got, &c, NULL), LS_OK);
    cr_assert_eq(c.h.type, LS_NET_CHALLENGE);
    n = join_msg(&t, 0, cred.key, 2, c.u.cookie, buf);
    send_to_relay(fd, t.port, buf, n);
    got = recv_reply(fd, reply, sizeof reply);
    cr_assert_gt(got, 0);
    cr_assert_eq(ls_net_decode(reply, (size_t)got, &c, NULL), LS_OK);
    cr_assert_eq(c.h.type, LS_NET_WELCOME);
    cr_assert_eq(c.u.welcome.slots, 2);
    // The cookie is bound to the address: another socket cannot reuse it (a fresh
    // JOIN with it from there only earns a new challenge) ...
    int other = udp_socket();
    size_t n3 = join_msg(&t, 0, cred.key, 3, c.u.cookie, buf);
    send_to_relay(other, t.port, buf, n3);
    got = recv_reply(other, reply, sizeof reply);
    cr_assert_gt(got, 0);
    ls_net_decode(reply, (size_t)got, &c, NULL);
    cr_assert_eq(c.h.type, LS_NET_CHALLENGE, "a stolen cookie only earns a new challenge");
    // ... and the sniffed JOIN itself, replayed from there, earns nothing at all.
    n = join_msg(&t, 0, cred.key, 2, 0, buf);
    send_to_relay(other, t.port, buf, n);
    cr_assert_lt(recv_reply(other, reply, sizeof reply), 0, "a replayed JOIN gets no answer");
    close(other);
    close(fd);
    rt_stop(&t);
}

Test(net_udp, wrong_tokens_garbage_and_short_joins_get_no_reply)
{
    relay_thread t;
    rt_start(&t);
    int fd = udp_socket();
    uint8_t buf[LS_NET_MAX_DATAGRAM], reply[2048];
    ls_net_credential c1 = cred_of(&t, 1), c0 = cred_of(&t, 0);
    size_t n = join_msg(&t, 0, c1.key, 1, 0, buf); // slot 0 sealed with slot 1's key
    send_to_relay(fd, t.port, buf, n);
    n = join_msg(&t, 0, c0.key, 1, 0, buf);
    send_to_relay(fd, t.port, buf, n - 1);              // short join
    send_to_relay(fd, t.port, (const uint8_t *)"x", 1); // garbage
    uint8_t big[1400];
    memset(big, 0xEE, sizeof big);
    send_to_relay(fd, t.port, big, sizeof big); // oversized
    // A version 1 JOIN (28-byte header with a token, padded to 128 bytes).
    uint8_t v1[128] = {'L', 'S', 1, LS_NET_JOIN, 1, 0, 0, 0, 0, 0, 100, 0};
    send_to_relay(fd, t.port, v1, sizeof v1);
    cr_assert_lt(recv_reply(fd, reply, sizeof reply), 0, "silence");
    // Barrier: the relay reads its socket in order, so once a valid JOIN from
    // another socket is answered, every datagram above has been handled.
    int other = udp_socket();
    n = join_msg(&t, 0, c0.key, 1, 0, buf);
    send_to_relay(other, t.port, buf, n);
    cr_assert_gt(recv_reply(other, reply, sizeof reply), 0);
    close(other);
    close(fd);
    rt_join(&t);
    ls_relay_stats st = ls_relay_stats_get(t.relay);
    cr_assert_eq(st.bad_mac, 1u);
    cr_assert_eq(st.truncated, 2u, "the short join and the 1-byte datagram");
    cr_assert_eq(st.malformed, 1u, "the oversized datagram");
    cr_assert_eq(st.wrong_version, 1u, "the v1 JOIN");
    cr_assert_eq(st.packets_out, 1u, "only the barrier's challenge");
    rt_free(&t);
}

Test(net_udp, fault_injection_drops_exactly_as_seeded)
{
    // Two transports on loopback: one sends 200 datagrams through 50% loss.
    ls_net_fault_def f = {500000, 0, 0, 0, 0, 42, 0};
    ls_net_fault ref;
    ls_net_fault_init(&ref, &f);
    uint32_t expect = 0;
    for (int i = 0; i < 200; i++) {
        uint64_t w[2];
        expect += ls_net_fault_apply(&ref, 0, w);
    }
    relay_thread t; // only used as a receiver here
    rt_start(&t);
    ls_uv_def ud = ls_default_uv_def();
    ud.bind_host = "127.0.0.1";
    ud.fault = f;
    ud.on_recv = rt_recv;
    char msg[256];
    ls_uv *u = ls_uv_create(&ud, msg, sizeof msg);
    cr_assert_not_null(u);
    ls_net_addr to = ls_net_addr_ipv4(127, 0, 0, 1, t.port);
    uint8_t junk[40] = {0};
    for (int i = 0; i < 200; i++) {
        ls_uv_send(u, &to, junk, sizeof junk);
    }
    ls_uv_stats st = ls_uv_stats_get(u);
    cr_assert_eq(st.sent, expect);
    cr_assert_eq(st.fault_dropped, 200u - expect);
    ls_uv_destroy(u);
    rt_stop(&t);
}

typedef struct shared_rx {
    ls_uv *self;
    uint32_t got;
    char text[64];
} shared_rx;

static void shared_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                        uint64_t now_us)
{
    shared_rx *rx = user;
    (void)from;
    (void)now_us;
    rx->got++;
    memcpy(rx->text, data, len < sizeof rx->text ? len : sizeof rx->text - 1);
    ls_uv_stop(rx->self);
}

Test(net_udp, transport_runs_on_a_shared_loop_and_parses_addresses)
{
    // A game's loop hosting two transports (ls_uv_def.loop): one sends to the other.
    shared_rx a = {0}, b = {0};
    ls_uv_def ud = ls_default_uv_def();
    ud.bind_host = "127.0.0.1";
    ud.user = &a;
    ud.on_recv = shared_recv;
    char msg[256];
    a.self = ls_uv_create(&ud, msg, sizeof msg);
    cr_assert_not_null(a.self, "%s", msg);
    ud.user = &b;
    ud.loop = ls_uv_loop(a.self);
    b.self = ls_uv_create(&ud, msg, sizeof msg);
    cr_assert_not_null(b.self, "%s", msg);
    cr_assert_eq(ls_uv_loop(b.self), ls_uv_loop(a.self));
    char text[64];
    snprintf(text, sizeof text, "127.0.0.1:%u", (unsigned)ls_uv_port(b.self));
    ls_net_addr to;
    cr_assert(ls_uv_parse_addr(text, &to));
    char back[64];
    cr_assert_str_eq(ls_net_addr_format(&to, back, sizeof back), text);
    ls_uv_send(a.self, &to, (const uint8_t *)"hello", 6);
    ls_uv_run(b.self); // the one loop: b's callback stops it
    cr_assert_eq(b.got, 1u);
    cr_assert_str_eq(b.text, "hello");
    ls_uv_destroy(b.self); // closes on the shared loop, freed when a's loop runs
    ls_uv_destroy(a.self);
    // Address forms: IPv6 in brackets round-trips; malformed text is refused.
    ls_net_addr v6;
    cr_assert(ls_uv_parse_addr("[::1]:7777", &v6));
    cr_assert_eq(v6.family, 6);
    cr_assert_eq(v6.port, 7777);
    cr_assert_eq(v6.ip[15], 1);
    ls_net_addr v6b;
    cr_assert(ls_uv_parse_addr(ls_net_addr_format(&v6, back, sizeof back), &v6b));
    cr_assert(ls_net_addr_equal(&v6, &v6b));
    const char *bad[] = {"",       "1.2.3.4", "1.2.3.4:", "1.2.3.4:0",  "1.2.3.4:65536",
                         "::1:80", "[::1]",   "host:80",  "1.2.3.4:+5", ":80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_not(ls_uv_parse_addr(bad[i], &to), "%s", bad[i]);
    }
}

typedef struct echo_side {
    ls_uv *self;
    uint32_t got;
    uint64_t deadline_us;
} echo_side;

static void echo_back(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                      uint64_t now_us)
{
    echo_side *e = user;
    (void)now_us;
    e->got++;
    ls_uv_send(e->self, from, data, len); // from inside the callback: leaves with the batch
}

static void count_echo(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                       uint64_t now_us)
{
    echo_side *e = user;
    (void)from;
    (void)now_us;
    cr_assert_eq(len, 8u);
    uint64_t i;
    memcpy(&i, data, 8);
    cr_assert_lt(i, 40u);
    if (++e->got == 40) {
        ls_uv_stop(e->self);
    }
}

static void echo_deadline(void *user, uint64_t now_us)
{
    echo_side *e = user;
    if (now_us > e->deadline_us) {
        ls_uv_stop(e->self);
    }
}

Test(net_udp, batched_sends_deliver_every_datagram)
{
    // B echoes from inside on_recv (its sends leave in one sendmmsg per read
    // batch): every datagram A sends comes back, each once, and the counters
    // agree.
    echo_side a = {0}, b = {0};
    ls_uv_def ud = ls_default_uv_def();
    ud.bind_host = "127.0.0.1";
    ud.user = &a;
    ud.on_recv = count_echo;
    ud.on_timer = echo_deadline;
    char msg[256];
    a.self = ls_uv_create(&ud, msg, sizeof msg);
    cr_assert_not_null(a.self, "%s", msg);
    a.deadline_us = ls_uv_now_us(a.self) + 5000000;
    ud.user = &b;
    ud.on_recv = echo_back;
    ud.on_timer = NULL;
    ud.loop = ls_uv_loop(a.self);
    b.self = ls_uv_create(&ud, msg, sizeof msg);
    cr_assert_not_null(b.self, "%s", msg);
    ls_net_addr to = ls_net_addr_ipv4(127, 0, 0, 1, ls_uv_port(b.self));
    for (uint64_t i = 0; i < 40; i++) {
        uint8_t d[8];
        memcpy(d, &i, 8);
        ls_uv_send(a.self, &to, d, sizeof d);
    }
    ls_uv_run(a.self);
    cr_assert_eq(a.got, 40u);
    cr_assert_eq(b.got, 40u);
    ls_uv_stats sa = ls_uv_stats_get(a.self), sb = ls_uv_stats_get(b.self);
    cr_assert_eq(sa.sent, 40u);
    cr_assert_eq(sb.received, 40u);
    cr_assert_eq(sb.sent, 40u);
    cr_assert_eq(sb.send_errors, 0u);
    cr_assert_eq(sa.received, 40u);
    ls_uv_destroy(b.self);
    ls_uv_destroy(a.self);
}

// ---- the tool's processes end to end ----

static char tool[4096];

static void find_tool(void)
{
    test_find_tool(tool, sizeof tool);
}

// Run the tool with args; capture stdout; return the exit status.
static int run_tool(char *const *args, char **out)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execv(tool, args);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        ssize_t r = read(fds[0], buf + len, 4096);
        if (r <= 0) {
            break;
        }
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void tmp_path(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/ls-net-test-%ld-%s.lsr", (long)getpid(), tag);
}

Test(net_udp, a_match_of_relay_and_bot_processes_agrees_and_verifies, .timeout = 120)
{
    find_tool();
    char path[256], *out;
    tmp_path(path, sizeof path, "clean");
    char *args[] = {tool,  "match",    "--peers", "3",         "--ticks", "240", "--tick-rate",
                    "240", "--replay", path,      "--timeout", "10000",   NULL};
    int rc = run_tool(args, &out);
    cr_assert_eq(rc, 0, "match failed:\n%s", out);
    cr_assert_not_null(strstr(out, "all 3 final checksums equal: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "desyncs: 0"), "%s", out);
    cr_assert_not_null(strstr(out, "verified 240 ticks"), "%s", out);
    free(out);
    unlink(path);
}

Test(net_udp, a_lossy_jittery_match_still_agrees, .timeout = 120)
{
    find_tool();
    char path[256], *out;
    tmp_path(path, sizeof path, "lossy");
    char *args[] = {tool,          "match", "--peers",   "4",     "--ticks", "240",
                    "--tick-rate", "240",   "--loss",    "0.2",   "--dup",   "0.1",
                    "--reorder",   "0.1",   "--jitter",  "20",    "--delay", "4",
                    "--replay",    path,    "--timeout", "10000", NULL};
    int rc = run_tool(args, &out);
    cr_assert_eq(rc, 0, "match failed:\n%s", out);
    cr_assert_not_null(strstr(out, "all 4 final checksums equal: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "verify result: OK"), "%s", out);
    free(out);
    unlink(path);
}

Test(net_udp, a_rollback_match_with_spectators_one_joining_late, .timeout = 120)
{
    // Rollback mode over lossy loopback, two spectator processes that join when the
    // players are at tick ~120 and catch up from the relay's history.
    find_tool();
    char path[256], *out;
    tmp_path(path, sizeof path, "spectators");
    char *args[] = {tool,
                    "match",
                    "--peers",
                    "4",
                    "--ticks",
                    "360",
                    "--tick-rate",
                    "120",
                    "--mode",
                    "rollback",
                    "--delay",
                    "0",
                    "--loss",
                    "0.05",
                    "--spectators",
                    "2",
                    "--spectator-join",
                    "120",
                    "--replay",
                    path,
                    "--timeout",
                    "10000",
                    NULL};
    int rc = run_tool(args, &out);
    cr_assert_eq(rc, 0, "match failed:\n%s", out);
    cr_assert_not_null(strstr(out, "all 4 final checksums equal: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "spectators on the players' final checksum: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "verify result: OK"), "%s", out);
    free(out);
    unlink(path);
}

Test(net_udp, two_percent_corruption_is_dropped_by_the_tag_not_blamed, .timeout = 120)
{
    find_tool();
    char path[256], *out;
    tmp_path(path, sizeof path, "corrupt");
    char *args[] = {tool,          "match", "--peers",   "4",     "--ticks", "240",
                    "--tick-rate", "240",   "--corrupt", "0.02",  "--loss",  "0.1",
                    "--reorder",   "0.1",   "--jitter",  "10",    "--delay", "4",
                    "--replay",    path,    "--timeout", "10000", NULL};
    int rc = run_tool(args, &out);
    cr_assert_eq(rc, 0, "match failed:\n%s", out);
    cr_assert_not_null(strstr(out, "all 4 final checksums equal: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "desyncs: 0"), "%s", out);
    cr_assert_null(strstr(out, "bad tag 0, replayed 0; peers: bad tag 0"),
                   "corrupted datagrams were counted:\n%s", out);
    free(out);
    unlink(path);
}

Test(net_udp, a_perturbed_bot_is_named_by_the_relay_at_its_exact_tick, .timeout = 120)
{
    find_tool();
    char path[256], *out;
    tmp_path(path, sizeof path, "desync");
    char *args[] = {tool,       "match",       "--peers",   "3",         "--ticks",
                    "120",      "--tick-rate", "240",       "--perturb", "1:57",
                    "--replay", path,          "--timeout", "10000",     NULL};
    int rc = run_tool(args, &out);
    cr_assert_eq(rc, 3, "a desynced match is a verification failure (exit 3):\n%s", out);
    cr_assert_not_null(strstr(out, "event desync session=1 tick=57 slots=0x0002"), "%s", out);
    cr_assert_null(strstr(out, "tick=56 slots"), "nothing before tick 57:\n%s", out);
    // Only bot 1 was named (its own exit status 3); bots 0 and 2 finished clean (exit 0):
    // the peer table's "named" column says so.
    for (int k = 0; k < 3; k++) {
        char row[32];
        snprintf(row, sizeof row, "\n%d    120 ", k);
        const char *line = strstr(out, row);
        cr_assert_not_null(line, "peer %d row:\n%s", k, out);
        char sum[32], rtt1[32], rtt2[32], u1[8], u2[8], po[32], pi[32], drops[32], named[32];
        cr_assert_eq(sscanf(line, " %*d %*d %31s %31s %7s %31s %7s %31s %31s %31s %31s", sum, rtt1,
                            u1, rtt2, u2, po, pi, drops, named),
                     9, "%s", line);
        cr_assert(k == 1 ? strtoul(named, NULL, 10) > 0 : strcmp(named, "0") == 0,
                  "peer %d named %s times", k, named);
    }
    free(out);
    unlink(path);
}

static void kill_relay_mid_match(int sig, const char *tag)
{
    find_tool();
    char path[256], dir[64];
    tmp_path(path, sizeof path, tag);
    snprintf(dir, sizeof dir, "/tmp/ls-net-test-creds-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t relay = fork();
    if (relay == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        char *args[] = {tool,          "relay", "--slots",       "2",
                        "--tick-rate", "240",   "--scene",       "tools/scenes/arena.scene",
                        "--record",    path,    "--credentials", dir,
                        NULL};
        execv(tool, args);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[256], port[16] = "", creds[2][128];
    while (fgets(line, sizeof line, f) && strncmp(line, "ready", 5) != 0) {
        sscanf(line, "listening 127.0.0.1:%15s", port);
        unsigned s, k;
        char file[128];
        if (sscanf(line, "credential %u %u %127s", &s, &k, file) == 3 && k < 2) {
            strcpy(creds[k], file);
        }
    }
    cr_assert_neq(port[0], '\0');
    char relay_addr[64];
    snprintf(relay_addr, sizeof relay_addr, "127.0.0.1:%s", port);
    pid_t bots[2];
    for (int k = 0; k < 2; k++) {
        bots[k] = fork();
        if (bots[k] == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            char *args[] = {tool,
                            "bot",
                            "--relay",
                            relay_addr,
                            "--credential",
                            creds[k],
                            "--scene",
                            "tools/scenes/arena.scene",
                            NULL};
            execv(tool, args);
            _exit(127);
        }
    }
    usleep(2500000); // ~500 ticks at 240 Hz once joined: several 60-tick chunks
    if (sig != SIGKILL) {
        kill(relay, SIGUSR1); // stats on demand, the relay keeps going
        usleep(200000);
    }
    kill(relay, sig);
    waitpid(relay, NULL, 0);
    for (int k = 0; k < 2; k++) {
        kill(bots[k], SIGTERM);
        waitpid(bots[k], NULL, 0);
    }
    char rest[8192] = "";
    size_t got = fread(rest, 1, sizeof rest - 1, f);
    rest[got] = '\0';
    fclose(f);
    if (sig != SIGKILL) {
        cr_assert_not_null(strstr(rest, "replay session=1"), "%s", rest);
        const char *first = strstr(rest, "stats relay");
        cr_assert_not_null(first, "stats on SIGUSR1:\n%s", rest);
        cr_assert_not_null(strstr(first + 1, "stats relay"), "and at exit:\n%s", rest);
    }
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open(path, &err);
    cr_assert_not_null(r, "replay unreadable after SIGKILL: %s", err.message);
    const ls_replay_info *info = ls_replay_reader_info(r);
    if (sig == SIGKILL) {
        cr_assert_not(info->complete, "no index: the relay never finished");
    } else {
        cr_assert(info->complete, "SIGTERM finishes the recording (index + trailer)");
    }
    cr_assert_geq(info->ticks, 60u, "at least one chunk survived (%u ticks)", info->ticks);
    ls_replay_reader_destroy(r);
    char *out;
    char *args[] = {tool, "replay", "verify", path, NULL};
    int rc = run_tool(args, &out);
    // After SIGKILL the file has no index: every surviving tick verifies, exit 4 (partial).
    cr_assert_eq(rc, sig == SIGKILL ? 4 : 0, "the surviving ticks verify:\n%s", out);
    cr_assert_not_null(strstr(out, "verified "), "%s", out);
    free(out);
    unlink(path);
    unlink(creds[0]);
    unlink(creds[1]);
    rmdir(dir);
}

Test(net_udp, a_relay_killed_with_sigkill_leaves_a_readable_replay, .timeout = 120)
{
    kill_relay_mid_match(SIGKILL, "killed");
}

Test(net_udp, sigterm_closes_the_recording_cleanly_and_prints_stats, .timeout = 120)
{
    kill_relay_mid_match(SIGTERM, "terminated");
}

Test(net_udp, a_bot_silent_for_4_s_rejoins_and_ends_on_the_same_checksum, .timeout = 120)
{
    // Real sockets: bot 2 goes silent at tick 120 for 4 s, the relay times it out
    // (3 s), it rejoins with its credential, loads a snapshot uploaded by a connected
    // bot and plays on; every bot agrees on both switch ticks.
    find_tool();
    char path[256], *out;
    tmp_path(path, sizeof path, "rejoin");
    char *args[] = {
        tool, "match",    "--peers",    "3",        "--ticks", "480",           "--tick-rate",
        "60", "--outage", "2@120+4000", "--replay", path,      "--no-progress", NULL};
    int rc = run_tool(args, &out);
    cr_assert_eq(rc, 0, "match failed:\n%s", out);
    cr_assert_not_null(strstr(out, "all 3 final checksums equal: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "every bot saw these switch ticks: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "rejoins 1"), "%s", out);
    cr_assert_not_null(strstr(out, "verify result: OK"), "%s", out);
    free(out);
    unlink(path);
}

Test(net_udp, a_rollback_bot_silent_for_4_s_rejoins_and_ends_on_the_same_checksum, .timeout = 120)
{
    // As above in rollback mode (SPEC.md §24.8): the rejoiner's core restarts from the
    // snapshot a connected rollback bot uploaded and catches up faster than real time.
    find_tool();
    char path[256], *out;
    tmp_path(path, sizeof path, "rb-rejoin");
    char *args[] = {tool,       "match",    "--peers",       "3",          "--ticks",     "480",
                    "--mode",   "rollback", "--outage",      "2@120+4000", "--tick-rate", "60",
                    "--replay", path,       "--no-progress", NULL};
    int rc = run_tool(args, &out);
    cr_assert_eq(rc, 0, "match failed:\n%s", out);
    cr_assert_not_null(strstr(out, "all 3 final checksums equal: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "every bot saw these switch ticks: yes"), "%s", out);
    cr_assert_not_null(strstr(out, "rejoins 1"), "%s", out);
    cr_assert_not_null(strstr(out, "verify result: OK"), "%s", out);
    free(out);
    unlink(path);
}
