// SPDX-License-Identifier: MIT
// `make bench-net`: relay throughput and added latency on loopback.
//
// For each S in the list: a relay process (libuv transport + relay core) with S
// sessions of 4 slots at 60 Hz, and 4*S client sockets in this process that join
// through the challenge, then every tick send an INPUT carrying its send time, a
// CHECKSUM and an ACK. Wire v2: every datagram is sealed and verified (the
// relay verifies each one it receives and seals each one it sends; the clients
// do what a peer does, sealing theirs and verifying the relay's). Latency = time from a peer's send
// until another peer receives that input (peer -> relay -> peer). In the same run, a raw UDP echo
// server (recvmmsg/sendmmsg, no protocol) serves the same sockets at the same
// rate; its round trip (client -> echo -> client) has the same two hops, so
// relay p50/p99 minus echo p50/p99 is the latency the relay adds.
// Tools may use floating point for reporting.
#define _GNU_SOURCE
#include "ls/net_auth.h"
#include "ls/net_relay.h"
#include "ls/net_uv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 4
#define RATE  60
#define ISZ   8
#define BATCH 32

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int make_socket(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("socket");
        exit(1);
    }
    int sz = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    return fd;
}

static void send_to(int fd, uint16_t port, const uint8_t *d, size_t n)
{
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    sendto(fd, d, n, 0, (struct sockaddr *)&a, sizeof a);
}

// ---- latency samples ----

typedef struct samples {
    uint32_t *v;
    size_t n, cap;
} samples;

static void add_sample(samples *s, uint64_t us)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 65536;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t pct(samples *s, unsigned p)
{
    if (!s->n) {
        return 0;
    }
    qsort(s->v, s->n, sizeof *s->v, cmp_u32);
    return s->v[(s->n - 1) * p / 100];
}

// ---- the raw echo baseline (recvmmsg/sendmmsg) ----

static void echo_server(int fd)
{
    int fl = 0;
    (void)fl;
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_in addrs[BATCH];
    static uint8_t bufs[BATCH][2048];
    for (;;) {
        for (int i = 0; i < BATCH; i++) {
            iov[i].iov_base = bufs[i];
            iov[i].iov_len = sizeof bufs[i];
            memset(&msgs[i], 0, sizeof msgs[i]);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &addrs[i];
            msgs[i].msg_hdr.msg_namelen = sizeof addrs[i];
        }
        int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
        if (n <= 0) {
            continue;
        }
        for (int i = 0; i < n; i++) {
            iov[i].iov_len = msgs[i].msg_len;
        }
        sendmmsg(fd, msgs, (unsigned)n, 0);
    }
}

typedef struct result {
    double pps_in, pps_out, cpu_pct;
    uint32_t p50, p99;
    size_t samples;
} result;

static double child_cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static result run_echo(uint32_t peers, double seconds)
{
    int srv = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(srv, (struct sockaddr *)&a, sizeof a);
    socklen_t al = sizeof a;
    getsockname(srv, (struct sockaddr *)&a, &al);
    uint16_t port = ntohs(a.sin_port);
    double cpu0 = child_cpu_seconds();
    pid_t pid = fork();
    if (pid == 0) {
        echo_server(srv);
        _exit(0);
    }
    close(srv);
    int *fd = malloc(peers * sizeof *fd);
    int ep = epoll_create1(0);
    for (uint32_t i = 0; i < peers; i++) {
        fd[i] = make_socket();
        struct epoll_event ev = {EPOLLIN, {.u32 = i}};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev);
    }
    samples s = {0};
    uint64_t start = now_us(), end = start + (uint64_t)(seconds * 1e6);
    uint64_t sent = 0, got = 0, *next = malloc(peers * sizeof *next);
    for (uint32_t i = 0; i < peers; i++) {
        next[i] = start + (uint64_t)i * (1000000 / RATE) / peers;
    }
    while (now_us() < end) {
        uint64_t t = now_us();
        for (uint32_t i = 0; i < peers; i++) {
            if (t >= next[i]) {
                uint8_t pkt[64] = {0};
                uint64_t ts = now_us();
                memcpy(pkt, &ts, 8);
                send_to(fd[i], port, pkt, 45); // the size of a one-input INPUT datagram
                sent++;
                next[i] += 1000000 / RATE;
            }
        }
        struct epoll_event evs[256];
        int ready = epoll_wait(ep, evs, 256, 1);
        for (int e = 0; e < ready; e++) {
            uint8_t buf[2048];
            ssize_t n;
            while ((n = recv(fd[evs[e].data.u32], buf, sizeof buf, 0)) >= 8) {
                uint64_t ts;
                memcpy(&ts, buf, 8);
                add_sample(&s, now_us() - ts);
                got++;
            }
        }
    }
    close(ep);
    free(next);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    double el = (double)(now_us() - start) / 1e6;
    result r = {(double)sent / el, (double)got / el, 100.0 * (child_cpu_seconds() - cpu0) / el,
                pct(&s, 50),       pct(&s, 99),      s.n};
    for (uint32_t i = 0; i < peers; i++) {
        close(fd[i]);
    }
    free(fd);
    free(s.v);
    return r;
}

// ---- the relay under test, in a child process ----

typedef struct relay_child {
    ls_relay *relay;
    ls_uv *uv;
} relay_child;

static void rc_pump(relay_child *c)
{
    ls_net_datagram d;
    while (ls_relay_next_datagram(c->relay, &d)) {
        ls_uv_send(c->uv, &d.to, d.data, d.len);
    }
    ls_relay_event ev;
    while (ls_relay_next_event(c->relay, &ev)) {
    }
}

static void rc_recv(void *u, const ls_net_addr *from, const uint8_t *d, size_t n, uint64_t now)
{
    relay_child *c = u;
    ls_relay_receive(c->relay, from, d, n, now);
    rc_pump(c);
}

static void rc_timer(void *u, uint64_t now)
{
    relay_child *c = u;
    ls_relay_poll(c->relay, now);
    rc_pump(c);
}

static void relay_main(uint32_t sessions, int out)
{
    relay_child c;
    ls_relay_def rd = ls_default_relay_def();
    rd.max_sessions = sessions;
    rd.rate_limit_pps = 100000;
    rd.rate_burst = 10000;
    c.relay = ls_relay_create(&rd, NULL);
    ls_uv_def ud = ls_default_uv_def();
    ud.bind_host = "127.0.0.1";
    ud.user = &c;
    ud.on_recv = rc_recv;
    ud.on_timer = rc_timer;
    char msg[256];
    c.uv = ls_uv_create(&ud, msg, sizeof msg);
    if (!c.relay || !c.uv) {
        fprintf(stderr, "relay: %s\n", msg);
        _exit(1);
    }
    ls_session_def sd = ls_default_session_def();
    sd.slots = SLOTS;
    sd.input_size = ISZ;
    sd.delay = 0;
    sd.timeout_ms = 60000;
    sd.join_timeout_ms = 0;
    uint16_t port = ls_uv_port(c.uv);
    if (write(out, &port, sizeof port) != sizeof port) {
        _exit(1);
    }
    for (uint32_t s = 0; s < sessions; s++) {
        uint32_t id;
        ls_relay_session_create(c.relay, &sd, ls_uv_now_us(c.uv), &id);
        for (uint32_t k = 0; k < SLOTS; k++) {
            ls_net_credential cred;
            ls_relay_session_credential(c.relay, id, k, &cred);
            if (write(out, cred.key, LS_NET_KEY_SIZE) != LS_NET_KEY_SIZE) {
                _exit(1);
            }
        }
    }
    close(out);
    ls_uv_run(c.uv);
    _exit(0);
}

typedef struct client {
    int fd;
    uint32_t session, slot, tick;
    uint8_t key[LS_NET_KEY_SIZE];
    uint64_t seq;          // sequence number of our last datagram
    uint32_t have[SLOTS];  // inputs received per slot (contiguous)
    uint32_t acked_in;     // the relay holds our inputs below this tick
    uint32_t acked_cs;     // ... and our checksums below this tick
    uint64_t sent_at[256]; // send time of tick t at t % 256 (the input's payload)
    uint64_t next_us;      // when to send the next tick
} client;

static size_t encode(client *c, ls_net_msg *m, uint8_t type, uint8_t *buf)
{
    m->h.type = type;
    m->h.session = c->session;
    m->h.slot = (uint8_t)c->slot;
    m->h.seq = ++c->seq;
    size_t n = ls_net_encode(m, buf, LS_NET_MAX_DATAGRAM);
    ls_net_seal(buf, n, c->key, LS_NET_TO_RELAY);
    return n;
}

static void join_all(client *cl, uint32_t n, uint16_t port)
{
    for (int attempt = 0; attempt < 50; attempt++) {
        uint32_t pending = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (cl[i].tick == UINT32_MAX) {
                continue;
            }
            pending++;
            ls_net_msg m;
            memset(&m, 0, sizeof m);
            uint8_t buf[LS_NET_MAX_DATAGRAM], in[2048];
            send_to(cl[i].fd, port, buf, encode(&cl[i], &m, LS_NET_JOIN, buf));
            usleep(200);
            ssize_t k;
            while ((k = recv(cl[i].fd, in, sizeof in, 0)) > 0) {
                ls_net_msg r;
                if (ls_net_decode(in, (size_t)k, &r, NULL) != LS_OK) {
                    continue;
                }
                if (r.h.type == LS_NET_CHALLENGE) {
                    memset(&m, 0, sizeof m);
                    m.u.cookie = r.u.cookie;
                    send_to(cl[i].fd, port, buf, encode(&cl[i], &m, LS_NET_JOIN, buf));
                    usleep(200);
                } else if (r.h.type == LS_NET_WELCOME) {
                    cl[i].tick = UINT32_MAX;
                }
            }
        }
        if (!pending) {
            break;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (cl[i].tick != UINT32_MAX) {
            fprintf(stderr, "bench-net: client %u did not join\n", i);
            exit(1);
        }
        cl[i].tick = 0;
    }
}

// One tick of a well-behaved peer: every unacknowledged input (redundancy, as
// the protocol requires), every unacknowledged checksum, and an ACK.
static uint32_t client_tick(client *c, uint16_t port)
{
    uint8_t buf[LS_NET_MAX_DATAGRAM], payload[64 * ISZ] = {0}, sums[64 * 8] = {0};
    c->sent_at[c->tick % 256] = now_us();
    c->tick++;
    uint32_t from = c->acked_in + 64 < c->tick ? c->tick - 64 : c->acked_in;
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.u.input.first_tick = from;
    m.u.input.count = (uint16_t)(c->tick - from);
    m.u.input.input_size = ISZ;
    m.u.input.slot = (uint8_t)c->slot;
    for (uint32_t t = from; t < c->tick; t++) {
        memcpy(payload + (size_t)(t - from) * ISZ, &c->sent_at[t % 256], 8);
    }
    m.u.input.data = payload;
    send_to(c->fd, port, buf, encode(c, &m, LS_NET_INPUT, buf));
    from = c->acked_cs + 64 < c->tick ? c->tick - 64 : c->acked_cs;
    memset(&m, 0, sizeof m);
    m.u.checksum.first_tick = from;
    m.u.checksum.count = (uint16_t)(c->tick - from);
    m.u.checksum.data = sums;
    send_to(c->fd, port, buf, encode(c, &m, LS_NET_CHECKSUM, buf));
    memset(&m, 0, sizeof m);
    m.u.ack.count = SLOTS;
    for (uint32_t k = 0; k < SLOTS; k++) {
        m.u.ack.input_next[k] = c->have[k];
    }
    send_to(c->fd, port, buf, encode(c, &m, LS_NET_ACK, buf));
    return 3;
}

static void client_drain(client *c, samples *s, uint64_t *got)
{
    uint8_t in[2048];
    ssize_t k;
    while ((k = recv(c->fd, in, sizeof in, 0)) > 0) {
        (*got)++;
        ls_net_msg r;
        if (!ls_net_verify(in, (size_t)k, c->key, LS_NET_TO_PEER) ||
            ls_net_decode(in, (size_t)k, &r, NULL) != LS_OK) {
            continue;
        }
        if (r.h.type == LS_NET_ACK && r.u.ack.count == SLOTS) {
            uint32_t a = r.u.ack.input_next[c->slot], cs = r.u.ack.checksum_next;
            c->acked_in = a > c->acked_in && a <= c->tick ? a : c->acked_in;
            c->acked_cs = cs > c->acked_cs && cs <= c->tick ? cs : c->acked_cs;
        }
        uint8_t owner = r.u.input.slot;
        if (r.h.type != LS_NET_INPUT || owner >= SLOTS) {
            continue;
        }
        for (uint32_t i = 0; i < r.u.input.count; i++) {
            uint32_t t = r.u.input.first_tick + i;
            if (t == c->have[owner]) {
                uint64_t ts;
                memcpy(&ts, r.u.input.data + (size_t)i * ISZ, 8);
                add_sample(s, now_us() - ts);
                c->have[owner] = t + 1;
            }
        }
    }
}

static result run_relay(uint32_t sessions, double seconds)
{
    int p[2];
    if (pipe(p) != 0) {
        exit(1);
    }
    double cpu0 = child_cpu_seconds();
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        relay_main(sessions, p[1]);
    }
    close(p[1]);
    uint16_t port;
    uint32_t n = sessions * SLOTS;
    client *cl = calloc(n, sizeof *cl);
    if (read(p[0], &port, sizeof port) != sizeof port) {
        exit(1);
    }
    for (uint32_t i = 0; i < n; i++) {
        cl[i].fd = make_socket();
        cl[i].session = i / SLOTS + 1;
        cl[i].slot = i % SLOTS;
        size_t off = 0;
        while (off < LS_NET_KEY_SIZE) {
            ssize_t k = read(p[0], cl[i].key + off, LS_NET_KEY_SIZE - off);
            if (k <= 0) {
                exit(1);
            }
            off += (size_t)k;
        }
    }
    close(p[0]);
    join_all(cl, n, port);
    int ep = epoll_create1(0);
    for (uint32_t i = 0; i < n; i++) {
        struct epoll_event ev = {EPOLLIN, {.u32 = i}};
        epoll_ctl(ep, EPOLL_CTL_ADD, cl[i].fd, &ev);
    }
    samples s = {0};
    uint64_t sent = 0, got = 0;
    uint64_t start = now_us(), end = start + (uint64_t)(seconds * 1e6);
    for (uint32_t i = 0; i < n; i++) { // peers' ticks are spread over the period, not in step
        cl[i].next_us = start + (uint64_t)i * (1000000 / RATE) / n;
    }
    while (now_us() < end) {
        uint64_t t = now_us();
        for (uint32_t i = 0; i < n; i++) {
            if (t >= cl[i].next_us) {
                sent += client_tick(&cl[i], port);
                cl[i].next_us += 1000000 / RATE;
            }
        }
        struct epoll_event evs[256];
        int ready = epoll_wait(ep, evs, 256, 1);
        for (int e = 0; e < ready; e++) {
            client_drain(&cl[evs[e].data.u32], &s, &got);
        }
    }
    close(ep);
    double el = (double)(now_us() - start) / 1e6;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    result r = {(double)sent / el, (double)got / el, 100.0 * (child_cpu_seconds() - cpu0) / el,
                pct(&s, 50),       pct(&s, 99),      s.n};
    for (uint32_t i = 0; i < n; i++) {
        close(cl[i].fd);
    }
    free(cl);
    free(s.v);
    return r;
}

// ---- the relay core alone: no sockets, no clock, datagrams per CPU second ----

// Encode and seal m as slot k's next datagram.
static size_t core_seal(ls_net_msg *m, const uint8_t *key, uint64_t *seq, uint8_t *buf)
{
    m->h.seq = ++*seq;
    size_t n = ls_net_encode(m, buf, LS_NET_MAX_DATAGRAM);
    ls_net_seal(buf, n, key, LS_NET_TO_RELAY);
    return n;
}

static void core_join(ls_relay *r, uint32_t id, uint32_t k, const ls_net_addr *a,
                      const uint8_t *key, uint64_t *seq)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = LS_NET_JOIN;
    m.h.session = id;
    m.h.slot = (uint8_t)k;
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    ls_net_datagram d;
    ls_relay_receive(r, a, buf, core_seal(&m, key, seq, buf), 1);
    while (ls_relay_next_datagram(r, &d)) {
        ls_net_msg c;
        if (ls_net_decode(d.data, d.len, &c, NULL) == LS_OK && c.h.type == LS_NET_CHALLENGE) {
            m.u.cookie = c.u.cookie;
        }
    }
    ls_relay_receive(r, a, buf, core_seal(&m, key, seq, buf), 2);
    while (ls_relay_next_datagram(r, &d)) {
    }
}

// The relay core with no sockets and no clock: every tick, each of the 4*S peers
// sends an INPUT, a CHECKSUM and an ACK. The datagrams of a tick are encoded and
// sealed first (the peers' work, timed apart: *seal_ns per datagram), then fed
// to the relay, which verifies each one, fans the inputs out and seals what it
// sends (the relay's work: *in_per_s and *out_per_s).
static void run_core(uint32_t sessions, uint32_t ticks, double *in_per_s, double *out_per_s,
                     double *seal_ns)
{
    ls_relay_def rd = ls_default_relay_def();
    rd.max_sessions = sessions;
    rd.rate_limit_pps = 1000000;
    rd.rate_burst = 1000000;
    ls_relay *r = ls_relay_create(&rd, NULL);
    ls_session_def sd = ls_default_session_def();
    sd.slots = SLOTS;
    sd.input_size = ISZ;
    sd.delay = 0;
    sd.timeout_ms = 3600000;
    uint32_t n = sessions * SLOTS;
    ls_net_addr *addr = calloc(n, sizeof *addr);
    uint8_t(*key)[LS_NET_KEY_SIZE] = calloc(n, LS_NET_KEY_SIZE);
    uint64_t *seq = calloc(n, sizeof *seq);
    typedef struct pending {
        size_t len;
        uint8_t data[128];
    } pending;
    pending *tick_dgrams = calloc((size_t)n * 3, sizeof *tick_dgrams);
    for (uint32_t s = 0; s < sessions; s++) {
        uint32_t id;
        ls_relay_session_create(r, &sd, 0, &id);
        for (uint32_t k = 0; k < SLOTS; k++) {
            uint32_t i = s * SLOTS + k;
            addr[i] = ls_net_addr_ipv4(127, 0, (uint8_t)(i >> 8), (uint8_t)i, 40000);
            ls_net_credential cred;
            ls_relay_session_credential(r, id, k, &cred);
            memcpy(key[i], cred.key, LS_NET_KEY_SIZE);
            core_join(r, id, k, &addr[i], key[i], &seq[i]);
        }
    }
    uint64_t in = 0, out = 0, relay_us = 0, peer_us = 0;
    uint8_t payload[ISZ] = {1}, sum[8] = {0};
    ls_net_datagram d;
    for (uint32_t t = 0; t < ticks; t++) {
        uint64_t now = 10 + (uint64_t)t * (1000000 / RATE), t0 = now_us();
        for (uint32_t i = 0; i < n; i++) {
            pending *p = &tick_dgrams[(size_t)i * 3];
            ls_net_msg m;
            memset(&m, 0, sizeof m);
            m.h.session = i / SLOTS + 1;
            m.h.slot = (uint8_t)(i % SLOTS);
            m.h.type = LS_NET_INPUT;
            m.u.input.first_tick = t;
            m.u.input.count = 1;
            m.u.input.input_size = ISZ;
            m.u.input.slot = (uint8_t)(i % SLOTS);
            m.u.input.data = payload;
            p[0].len = core_seal(&m, key[i], &seq[i], p[0].data);
            memset(&m.u, 0, sizeof m.u);
            m.h.type = LS_NET_CHECKSUM;
            m.u.checksum.first_tick = t;
            m.u.checksum.count = 1;
            m.u.checksum.data = sum;
            p[1].len = core_seal(&m, key[i], &seq[i], p[1].data);
            memset(&m.u, 0, sizeof m.u);
            m.h.type = LS_NET_ACK;
            m.u.ack.count = SLOTS;
            for (uint32_t k = 0; k < SLOTS; k++) {
                m.u.ack.input_next[k] = t + (k == i % SLOTS ? 0 : 1);
            }
            p[2].len = core_seal(&m, key[i], &seq[i], p[2].data);
        }
        uint64_t t1 = now_us();
        for (uint32_t i = 0; i < n; i++) {
            for (uint32_t j = 0; j < 3; j++) {
                const pending *p = &tick_dgrams[(size_t)i * 3 + j];
                ls_relay_receive(r, &addr[i], p->data, p->len, now);
            }
            in += 3;
            while (ls_relay_next_datagram(r, &d)) {
                out++;
            }
        }
        ls_relay_poll(r, now + 1000);
        while (ls_relay_next_datagram(r, &d)) {
            out++;
        }
        uint64_t t2 = now_us();
        peer_us += t1 - t0;
        relay_us += t2 - t1;
    }
    *in_per_s = (double)in / ((double)relay_us / 1e6);
    *out_per_s = (double)out / ((double)relay_us / 1e6);
    *seal_ns = (double)peer_us * 1000.0 / (double)in;
    ls_relay_destroy(r);
    free(addr);
    free(key);
    free(seq);
    free(tick_dgrams);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    uint32_t list[8] = {1, 16, 64}, count = 3;
    if (argc > 2) {
        count = 0;
        for (char *tok = strtok(argv[2], ","); tok && count < 8; tok = strtok(NULL, ",")) {
            list[count++] = (uint32_t)atoi(tok);
        }
    }
    FILE *csv = argc > 3 ? fopen(argv[3], "w") : NULL;
    printf("S sessions x %d peers at %d Hz on loopback, %.1f s each; latency is\n"
           "peer -> relay -> peer for the relay and client -> echo -> client for the raw\n"
           "recvmmsg/sendmmsg echo (same two hops), measured in this run.\n\n",
           SLOTS, RATE, seconds);
    printf("%8s %10s %12s %12s %9s %9s %9s | %9s %9s %9s | %9s %9s\n", "sessions", "peers",
           "relay in/s", "relay out/s", "cpu %", "p50 us", "p99 us", "echo/s", "p50 us", "p99 us",
           "+p50 us", "+p99 us");
    for (uint32_t i = 0; i < count; i++) {
        result rl = run_relay(list[i], seconds);
        result ec = run_echo(list[i] * SLOTS, seconds);
        printf("%8u %10u %12.0f %12.0f %9.1f %9u %9u | %9.0f %9u %9u | %9d %9d\n", list[i],
               list[i] * SLOTS, rl.pps_in, rl.pps_out, rl.cpu_pct, rl.p50, rl.p99, ec.pps_out,
               ec.p50, ec.p99, (int)rl.p50 - (int)ec.p50, (int)rl.p99 - (int)ec.p99);
        fflush(stdout);
        if (csv) {
            fprintf(csv, "relay,sessions_%u,ours,in_pps,%.0f,1/s\n", list[i], rl.pps_in);
            fprintf(csv, "relay,sessions_%u,ours,out_pps,%.0f,1/s\n", list[i], rl.pps_out);
            fprintf(csv, "relay,sessions_%u,ours,cpu,%.1f,%%\n", list[i], rl.cpu_pct);
            fprintf(csv, "relay,sessions_%u,ours,p50,%u,us\n", list[i], rl.p50);
            fprintf(csv, "relay,sessions_%u,ours,p99,%u,us\n", list[i], rl.p99);
            fprintf(csv, "relay,sessions_%u,echo,p50,%u,us\n", list[i], ec.p50);
            fprintf(csv, "relay,sessions_%u,echo,p99,%u,us\n", list[i], ec.p99);
            fprintf(csv, "relay,sessions_%u,ours,added_p50,%d,us\n", list[i],
                    (int)rl.p50 - (int)ec.p50);
            fprintf(csv, "relay,sessions_%u,ours,added_p99,%d,us\n", list[i],
                    (int)rl.p99 - (int)ec.p99);
        }
    }
    double cin, cout;
    double seal_ns;
    run_core(64, 600, &cin, &cout, &seal_ns);
    printf("\nrelay core alone (64 sessions x 4 peers, 600 ticks, no sockets; every datagram\n"
           "verified on the way in and sealed on the way out):\n"
           "  %.0f datagrams/s in, %.0f datagrams/s out on one core\n"
           "  a peer's encode + seal: %.0f ns per datagram\n",
           cin, cout, seal_ns);
    if (csv) {
        fprintf(csv, "relay,core_64_sessions,ours,in_pps,%.0f,1/s\n", cin);
        fprintf(csv, "relay,core_64_sessions,ours,out_pps,%.0f,1/s\n", cout);
        fprintf(csv, "relay,peer_encode_seal,ours,time,%.0f,ns\n", seal_ns);
        fclose(csv);
    }
    return 0;
}
