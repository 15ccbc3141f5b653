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
//
// Sessions per core (issue 30): the relay (and the echo) run pinned to CPU 0,
// the load generator (this process) to CPU 1. A ramp over S finds the largest S
// at which the relay's added p99 stays under 1 ms, measuring the relay's CPU
// time over each window (clock_getcpuclockid of the child), hence its CPU per
// session; the generator's own CPU is measured too, so a ramp stopped by the
// generator (its core full, the offered rate not sent) says so.
// Tools may use floating point for reporting.
#define _GNU_SOURCE
#include "ls/net_auth.h"
#include "ls/net_relay.h"
#include "ls/net_uv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
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

// Pin the calling process to one CPU (0: the server under test, 1: the load
// generator), so the relay's CPU share is a share of one core. Skipped on a
// single-CPU machine. Also raise its priority (nice -10) when allowed, against
// other jobs of the same session; with autogroup scheduling (Linux desktops,
// shells) other sessions' processes still take their share, which the ramp
// sees as wait% and reports. Returns whether the priority was raised.
static bool pin_to(int cpu)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((size_t)cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    return setpriority(PRIO_PROCESS, 0, -10) == 0;
}

// CPU seconds used so far by process pid (its clock_getcpuclockid clock).
static double cpu_seconds_of(pid_t pid)
{
    clockid_t id;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &id) != 0 || clock_gettime(id, &ts) != 0) {
        return 0.0;
    }
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// Seconds process pid (its main thread) spent runnable but waiting for a CPU
// (/proc/PID/schedstat, second field): time other processes took from it.
static double wait_seconds_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    unsigned long long run = 0, wait = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &run, &wait) != 2) {
            wait = 0;
        }
        fclose(f);
    }
    return (double)wait / 1e9;
}

static uint64_t cpu_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double self_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
    pin_to(0);
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
    double pps_in, pps_out;
    double cpu_pct;      // the server's CPU over the measured window, % of one core
    double gen_pct;      // the load generator's (this process), % of one core
    double offered;      // datagrams/s the generator should send
    double wait_pct;     // the server waited for its CPU (taken by others), % of the window
    double gen_wait_pct; // the generator waited for its CPU, % of the window
    uint32_t p50, p99;
    size_t samples;
} result;

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
    double cpu0 = cpu_seconds_of(pid), gen0 = self_cpu_seconds();
    double wait0 = wait_seconds_of(pid), gwait0 = wait_seconds_of(getpid());
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
    double el = (double)(now_us() - start) / 1e6;
    double cpu = cpu_seconds_of(pid) - cpu0, gen = self_cpu_seconds() - gen0;
    double wait = wait_seconds_of(pid) - wait0, gwait = wait_seconds_of(getpid()) - gwait0;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    result r = {(double)sent / el,    (double)got / el,
                100.0 * cpu / el,     100.0 * gen / el,
                (double)peers * RATE, 100.0 * wait / el,
                100.0 * gwait / el,   pct(&s, 50),
                pct(&s, 99),          s.n};
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

static void relay_main(uint32_t sessions, int out, int cpu)
{
    pin_to(cpu);
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
    uint32_t worker;       // the relay process (port) that holds its session
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

static void join_all(client *cl, uint32_t n, const uint16_t *ports)
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
            send_to(cl[i].fd, ports[cl[i].worker], buf, encode(&cl[i], &m, LS_NET_JOIN, buf));
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
                    send_to(cl[i].fd, ports[cl[i].worker], buf,
                            encode(&cl[i], &m, LS_NET_JOIN, buf));
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
// the protocol requires), every unacknowledged checksum, and an ACK. The three
// leave in one sendmmsg: the generator's system calls are what limits the
// ramp (a real peer's are spread over many machines).
static uint32_t client_tick(client *c, uint16_t port)
{
    uint8_t buf[3][LS_NET_MAX_DATAGRAM], payload[64 * ISZ] = {0}, sums[64 * 8] = {0};
    size_t len[3];
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
    len[0] = encode(c, &m, LS_NET_INPUT, buf[0]);
    from = c->acked_cs + 64 < c->tick ? c->tick - 64 : c->acked_cs;
    memset(&m, 0, sizeof m);
    m.u.checksum.first_tick = from;
    m.u.checksum.count = (uint16_t)(c->tick - from);
    m.u.checksum.data = sums;
    len[1] = encode(c, &m, LS_NET_CHECKSUM, buf[1]);
    memset(&m, 0, sizeof m);
    m.u.ack.count = SLOTS;
    for (uint32_t k = 0; k < SLOTS; k++) {
        m.u.ack.input_next[k] = c->have[k];
    }
    len[2] = encode(c, &m, LS_NET_ACK, buf[2]);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    struct mmsghdr msgs[3];
    struct iovec iov[3];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < 3; i++) {
        iov[i].iov_base = buf[i];
        iov[i].iov_len = len[i];
        msgs[i].msg_hdr.msg_name = &a;
        msgs[i].msg_hdr.msg_namelen = sizeof a;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    sendmmsg(c->fd, msgs, 3, 0);
    return 3;
}

static void client_handle(client *c, samples *s, const uint8_t *in, size_t k)
{
    ls_net_msg r;
    if (!ls_net_verify(in, k, c->key, LS_NET_TO_PEER) || ls_net_decode(in, k, &r, NULL) != LS_OK) {
        return;
    }
    if (r.h.type == LS_NET_ACK && r.u.ack.count == SLOTS) {
        uint32_t a = r.u.ack.input_next[c->slot], cs = r.u.ack.checksum_next;
        c->acked_in = a > c->acked_in && a <= c->tick ? a : c->acked_in;
        c->acked_cs = cs > c->acked_cs && cs <= c->tick ? cs : c->acked_cs;
    }
    uint8_t owner = r.u.input.slot;
    if (r.h.type != LS_NET_INPUT || owner >= SLOTS) {
        return;
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

// Everything waiting on the client's socket, up to 8 datagrams per recvmmsg.
static void client_drain(client *c, samples *s, uint64_t *got)
{
    enum { RB = 8 };
    static uint8_t in[RB][2048];
    struct mmsghdr msgs[RB];
    struct iovec iov[RB];
    for (;;) {
        memset(msgs, 0, sizeof msgs);
        for (int i = 0; i < RB; i++) {
            iov[i].iov_base = in[i];
            iov[i].iov_len = sizeof in[i];
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(c->fd, msgs, RB, MSG_DONTWAIT, NULL);
        if (n <= 0) {
            return;
        }
        for (int i = 0; i < n; i++) {
            (*got)++;
            client_handle(c, s, in[i], msgs[i].msg_len);
        }
        if (n < RB) {
            return;
        }
    }
}

// The relay under test as `workers` processes (1: one relay pinned to CPU 0; 2:
// two relays, each a core of its own with its own port and half the sessions,
// pinned to CPU 0 and 1 as `lockstep relay --workers 2` shards them, SPEC.md
// §17.15). Session g (0-based) is worker g % workers' session g / workers + 1.
#define MAX_WORKERS 2

// The generator on CPU 1 only (one relay on CPU 0) or on any CPU (a relay on each).
static void generator_cpus(uint32_t workers)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2) {
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    for (long c = workers > 1 ? 0 : 1; c < (workers > 1 ? ncpu : 2); c++) {
        CPU_SET((size_t)c, &set);
    }
    sched_setaffinity(0, sizeof set, &set);
}

static result run_relay_on(uint32_t sessions, double seconds, uint32_t workers)
{
    int p[MAX_WORKERS][2];
    generator_cpus(workers);
    pid_t pid[MAX_WORKERS];
    uint16_t port[MAX_WORKERS];
    for (uint32_t w = 0; w < workers; w++) {
        if (pipe(p[w]) != 0) {
            exit(1);
        }
        pid[w] = fork();
        if (pid[w] == 0) {
            close(p[w][0]);
            relay_main(sessions / workers + (w < sessions % workers), p[w][1], (int)w);
        }
        close(p[w][1]);
        if (read(p[w][0], &port[w], sizeof port[w]) != sizeof port[w]) {
            exit(1);
        }
    }
    uint32_t n = sessions * SLOTS;
    client *cl = calloc(n, sizeof *cl);
    for (uint32_t i = 0; i < n; i++) { // each worker writes its sessions' keys in order
        uint32_t g = i / SLOTS, w = g % workers;
        cl[i].fd = make_socket();
        cl[i].session = g / workers + 1;
        cl[i].slot = i % SLOTS;
        cl[i].worker = w;
        size_t off = 0;
        while (off < LS_NET_KEY_SIZE) {
            ssize_t k = read(p[w][0], cl[i].key + off, LS_NET_KEY_SIZE - off);
            if (k <= 0) {
                exit(1);
            }
            off += (size_t)k;
        }
    }
    for (uint32_t w = 0; w < workers; w++) {
        close(p[w][0]);
    }
    join_all(cl, n, port);
    int ep = epoll_create1(0);
    for (uint32_t i = 0; i < n; i++) {
        struct epoll_event ev = {EPOLLIN, {.u32 = i}};
        epoll_ctl(ep, EPOLL_CTL_ADD, cl[i].fd, &ev);
    }
    samples s = {0};
    uint64_t sent = 0, got = 0;
    double cpu0 = 0, wait0 = 0, gen0 = self_cpu_seconds();
    for (uint32_t w = 0; w < workers; w++) {
        cpu0 += cpu_seconds_of(pid[w]);
        wait0 += wait_seconds_of(pid[w]);
    }
    double gwait0 = wait_seconds_of(getpid());
    uint64_t start = now_us(), end = start + (uint64_t)(seconds * 1e6);
    for (uint32_t i = 0; i < n; i++) { // peers' ticks are spread over the period, not in step
        cl[i].next_us = start + (uint64_t)i * (1000000 / RATE) / n;
    }
    while (now_us() < end) {
        uint64_t t = now_us();
        for (uint32_t i = 0; i < n; i++) {
            if (t >= cl[i].next_us) {
                sent += client_tick(&cl[i], port[cl[i].worker]);
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
    double cpu = -cpu0, wait = -wait0, gen = self_cpu_seconds() - gen0;
    double gwait = wait_seconds_of(getpid()) - gwait0;
    for (uint32_t w = 0; w < workers; w++) {
        cpu += cpu_seconds_of(pid[w]);
        wait += wait_seconds_of(pid[w]);
        kill(pid[w], SIGKILL);
        waitpid(pid[w], NULL, 0);
    }
    wait /= workers; // the workers' mean
    generator_cpus(1);
    result r = {(double)sent / el,    (double)got / el,
                100.0 * cpu / el,     100.0 * gen / el,
                (double)n * 3 * RATE, 100.0 * wait / el,
                100.0 * gwait / el,   pct(&s, 50),
                pct(&s, 99),          s.n};
    for (uint32_t i = 0; i < n; i++) {
        close(cl[i].fd);
    }
    free(cl);
    free(s.v);
    return r;
}

static result run_relay(uint32_t sessions, double seconds)
{
    return run_relay_on(sessions, seconds, 1);
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
        // CPU time, not wall time: other processes' load does not count
        uint64_t now = 10 + (uint64_t)t * (1000000 / RATE), t0 = cpu_now_us();
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
        uint64_t t1 = cpu_now_us();
        // As on a socket: peer i's datagrams arrive at its own point of the tick
        // (spread like the load generator's), and the relay is polled every
        // millisecond (ls_uv_def.poll_us), so the per-poll work is counted at the
        // rate the real relay pays it.
        const uint64_t period = 1000000 / RATE;
        uint32_t i = 0;
        for (uint64_t ms = 1000; ms < period + 1000; ms += 1000) {
            for (; i < n && (uint64_t)i * period / n < ms; i++) {
                uint64_t at = now + (uint64_t)i * period / n;
                for (uint32_t j = 0; j < 3; j++) {
                    const pending *p = &tick_dgrams[(size_t)i * 3 + j];
                    ls_relay_receive(r, &addr[i], p->data, p->len, at);
                }
                in += 3;
                while (ls_relay_next_datagram(r, &d)) {
                    out++;
                }
            }
            ls_relay_poll(r, now + (ms < period ? ms : period));
            while (ls_relay_next_datagram(r, &d)) {
                out++;
            }
        }
        uint64_t t2 = cpu_now_us();
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

// One point of the ramp: the relay and the echo at S sessions, judged.
typedef enum verdict { V_OK, V_OVER, V_GENERATOR, V_BUSY } verdict;
static const char *const verdict_text[] = {"ok", "over 1 ms", "generator limited", "machine busy"};

typedef struct ramp_point {
    uint32_t sessions;
    result rl, ec;
    int added_p99;      // relay p99 - echo p99, us
    double us_per_sess; // relay CPU microseconds per session-second
    verdict v;
} ramp_point;

// Relay CPU microseconds per session-second: per session served, i.e. scaled by
// the share of the offered datagrams that arrived (a starved generator sends
// fewer, and the relay then does less work per session than a real one).
static double cpu_per_session(const result *r, uint32_t sessions)
{
    double served = r->offered > 0 && r->pps_in < r->offered ? r->pps_in / r->offered : 1.0;
    return served > 0 ? r->cpu_pct / 100.0 * 1e6 / (sessions * served) : 0.0;
}

static verdict judge(const result *rl, int added_p99)
{
    bool short_sent = rl->pps_in < 0.97 * rl->offered;
    bool busy = rl->wait_pct > 10.0 || rl->gen_wait_pct > 10.0;
    if (!short_sent && added_p99 < 1000) {
        return V_OK;
    }
    if (rl->gen_pct > 85.0 && rl->cpu_pct < 85.0) {
        return V_GENERATOR;
    }
    return busy ? V_BUSY : V_OVER;
}

static ramp_point ramp_run(uint32_t sessions, double seconds)
{
    ramp_point p;
    memset(&p, 0, sizeof p);
    p.sessions = sessions;
    p.rl = run_relay(sessions, seconds);
    p.ec = run_echo(sessions * SLOTS, seconds);
    p.added_p99 = (int)p.rl.p99 - (int)p.ec.p99;
    p.us_per_sess = cpu_per_session(&p.rl, sessions);
    // The generator keeps its schedule (sends what is due, late or not). When
    // it falls short of the offered rate, or the added p99 is over 1 ms, the
    // cause is named: the generator's own core full (its limit, not the
    // relay's), or the relay or the generator kept off its CPU by other
    // processes for over 10 % of the window (the machine, not the relay).
    p.v = judge(&p.rl, p.added_p99);
    printf("  %8u %10.0f %10.0f %9.1f %9.1f %9.1f %9.1f %9u %9u %9d  %s\n", sessions, p.rl.offered,
           p.rl.pps_in, p.rl.cpu_pct, p.us_per_sess, p.rl.gen_pct,
           p.rl.wait_pct > p.rl.gen_wait_pct ? p.rl.wait_pct : p.rl.gen_wait_pct, p.rl.p99,
           p.ec.p99, p.added_p99, verdict_text[p.v]);
    fflush(stdout);
    return p;
}

// The ramp: double S from `first` while the point is ok (up to `max`), then
// bisect twice between the last ok S and the first failing one (not when the
// generator or the machine, rather than the relay, failed it).
static uint32_t ramp(double seconds, uint32_t first, uint32_t max, FILE *csv)
{
    printf(
        "\nsessions per core: relay pinned to CPU 0, load generator to CPU 1, %.1f s per point;\n"
        "relay cpu%% is the relay's own CPU (user + system) over the window, us/sess-s that\n"
        "per session served (scaled by the share of the offered datagrams that arrived),\n"
        "gen cpu%% the generator's CPU, wait%% the larger share of the window either waited\n"
        "for its CPU (taken by other processes). ok = added p99 < 1 ms and the offered load\n"
        "delivered.\n\n",
        seconds);
    printf("  %8s %10s %10s %9s %9s %9s %9s %9s %9s %9s\n", "sessions", "offered/s", "relay in/s",
           "relay cpu%", "us/sess-s", "gen cpu%", "wait%", "p99 us", "echo p99", "+p99 us");
    ramp_point best, fail;
    memset(&best, 0, sizeof best);
    memset(&fail, 0, sizeof fail);
    for (uint32_t s = first; s <= max; s *= 2) {
        ramp_point p = ramp_run(s, seconds);
        if (p.v != V_OK) {
            fail = p;
            break;
        }
        best = p;
    }
    for (int step = 0; step < 2 && fail.sessions && fail.v == V_OVER; step++) {
        uint32_t lo = best.sessions ? best.sessions : 1, mid = lo + (fail.sessions - lo) / 2;
        mid = mid / 16 * 16;
        if (mid <= lo || mid >= fail.sessions) {
            break;
        }
        ramp_point p = ramp_run(mid, seconds);
        if (p.v == V_OK) {
            best = p;
        } else {
            fail = p;
        }
    }
    printf("\n");
    const ramp_point *at = best.sessions ? &best : &fail; // CPU per session from here
    double core = at->us_per_sess > 0 ? 1e6 / at->us_per_sess : 0;
    if (best.sessions) {
        printf("sessions per core: %u (added p99 %.2f ms at %u sessions; relay CPU %.1f %% of a "
               "core, %.0f us per session-second)\n",
               best.sessions, best.added_p99 / 1000.0, best.sessions, best.rl.cpu_pct,
               best.us_per_sess);
    } else {
        printf("sessions per core: below %u (no point of the ramp passed)\n", first);
    }
    if (fail.v == V_GENERATOR) {
        printf(
            "  limited by the load generator at %u sessions (it used %.0f %% of its core and sent "
            "%.0f of %.0f datagrams/s; the relay used %.0f %% of its core)\n",
            fail.sessions, fail.rl.gen_pct, fail.rl.pps_in, fail.rl.offered, fail.rl.cpu_pct);
    } else if (fail.v == V_BUSY) {
        printf("  stopped at %u sessions by other processes: the relay waited %.0f %% and the "
               "generator %.0f %% of the window for their CPUs (rerun on a quiet machine)\n",
               fail.sessions, fail.rl.wait_pct, fail.rl.gen_wait_pct);
    } else if (fail.sessions) {
        printf("  limited by the relay's added p99 at %u sessions (+%.2f ms, relay CPU %.0f %%)\n",
               fail.sessions, fail.added_p99 / 1000.0, fail.rl.cpu_pct);
    } else {
        printf("  the ramp's ceiling (%u sessions) was reached\n", max);
    }
    printf("  CPU-extrapolated: one full core of relay CPU carries ~%.0f sessions x %d peers at "
           "%d Hz (%.0f us per session-second at %u sessions; goal >= 1000)\n",
           core, SLOTS, RATE, at->us_per_sess, at->sessions);
    if (csv) {
        fprintf(csv, "relay,sessions_per_core,ours,sessions,%u,sessions\n", best.sessions);
        fprintf(csv, "relay,sessions_per_core,ours,added_p99,%d,us\n", best.added_p99);
        fprintf(csv, "relay,sessions_per_core,ours,cpu,%.1f,%%\n", best.rl.cpu_pct);
        fprintf(csv, "relay,sessions_per_core,ours,cpu_per_session,%.1f,us/s\n", at->us_per_sess);
        fprintf(csv, "relay,sessions_per_core,ours,cpu_extrapolated,%.0f,sessions\n", core);
        fprintf(csv, "relay,sessions_per_core,ours,stopped_at,%u,sessions\n", fail.sessions);
        fprintf(csv, "relay,sessions_per_core,ours,stopped_by,%d,0 none 1 p99 2 generator 3 busy\n",
                (int)fail.v);
    }
    return best.sessions;
}

// Two workers (SPEC.md §17.15: a relay process per core, its own port, half the
// sessions each) at the 1-worker figure S and at 2 S. Why only this far: a 2-core
// machine has no third core for the load generator, which needs about as much
// CPU as the relay it drives (gen cpu% above), so the two workers and the
// generator share the two cores (the generator is unpinned, each worker pinned to
// its core): the row shows that per-session CPU holds with two workers (no shared
// lock, no shared socket), not the 2x capacity a relay with its own cores has.
// Its wait% is mostly the workers and the generator waiting for each other (not
// other processes), so the row is not judged "machine busy": short (the offered
// load not sent), over 1 ms or ok.
static void two_workers(double seconds, uint32_t per_core, uint32_t max, FILE *csv)
{
    printf("\n2 workers (a relay process pinned to each of CPU 0 and 1, half the sessions each;\n"
           "the load generator unpinned, sharing both cores with them):\n\n");
    printf("  %8s %10s %10s %9s %9s %9s %9s %9s %9s %9s\n", "sessions", "offered/s", "relay in/s",
           "relay cpu%", "us/sess-s", "gen cpu%", "wait%", "p99 us", "echo p99", "+p99 us");
    uint32_t points[2] = {per_core, 2 * per_core < max ? 2 * per_core : max};
    for (int i = 0; i < 2; i++) {
        result rl = run_relay_on(points[i], seconds, 2);
        result ec = run_echo(points[i] * SLOTS, seconds);
        int added = (int)rl.p99 - (int)ec.p99;
        double us = cpu_per_session(&rl, points[i]);
        printf("  %8u %10.0f %10.0f %9.1f %9.1f %9.1f %9.1f %9u %9u %9d  %s\n", points[i],
               rl.offered, rl.pps_in, rl.cpu_pct, us, rl.gen_pct,
               rl.wait_pct > rl.gen_wait_pct ? rl.wait_pct : rl.gen_wait_pct, rl.p99, ec.p99, added,
               rl.pps_in < 0.97 * rl.offered ? "short"
               : added < 1000                ? "ok"
                                             : "over 1 ms");
        fflush(stdout);
        if (csv) {
            fprintf(csv, "relay,two_workers_%u,ours,cpu_per_session,%.1f,us/s\n", points[i], us);
            fprintf(csv, "relay,two_workers_%u,ours,added_p99,%d,us\n", points[i], added);
        }
    }
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    uint32_t list[8] = {1, 16, 64}, count = 3;
    if (argc > 2 && strcmp(argv[2], "-") != 0) {
        count = 0;
        for (char *tok = strtok(argv[2], ","); tok && count < 8; tok = strtok(NULL, ",")) {
            list[count++] = (uint32_t)atoi(tok);
        }
    }
    FILE *csv = argc > 3 && strcmp(argv[3], "-") != 0 ? fopen(argv[3], "w") : NULL;
    double ramp_seconds = argc > 4 ? atof(argv[4]) : 2.0;
    uint32_t ramp_max = argc > 5 ? (uint32_t)atoi(argv[5]) : 2048;
    // The core-alone run's sessions (default 64); SECONDS 0 skips the socket table,
    // and ramp 0 the ramp, so `bench_net 0 - - 0 0 512` runs the core alone (profiling).
    uint32_t core_sessions = argc > 6 ? (uint32_t)atoi(argv[6]) : 64;
    core_sessions = core_sessions ? core_sessions : 64;
    count = seconds > 0 ? count : 0;
    // 4 sockets per session and a few more: raise the descriptor limit.
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && ramp_max * SLOTS + 64 > rl.rlim_cur) {
        ramp_max = (uint32_t)((rl.rlim_cur - 64) / SLOTS);
    }
    bool raised = pin_to(1);
    printf("S sessions x %d peers at %d Hz on loopback, %.1f s each; latency is\n"
           "peer -> relay -> peer for the relay and client -> echo -> client for the raw\n"
           "recvmmsg/sendmmsg echo (same two hops), measured in this run. The relay and the\n"
           "echo run on CPU 0, the load generator on CPU 1 (%s); cpu %% is the\n"
           "server's over the window.\n\n",
           SLOTS, RATE, seconds, raised ? "at nice -10" : "at normal priority");
    printf("%8s %10s %12s %12s %9s %9s %9s | %9s %9s %9s | %9s %9s\n", "sessions", "peers",
           "relay in/s", "relay out/s", "cpu %", "p50 us", "p99 us", "echo/s", "p50 us", "p99 us",
           "+p50 us", "+p99 us");
    for (uint32_t i = 0; i < count; i++) {
        result rl_ = run_relay(list[i], seconds);
        result ec = run_echo(list[i] * SLOTS, seconds);
        printf("%8u %10u %12.0f %12.0f %9.1f %9u %9u | %9.0f %9u %9u | %9d %9d\n", list[i],
               list[i] * SLOTS, rl_.pps_in, rl_.pps_out, rl_.cpu_pct, rl_.p50, rl_.p99, ec.pps_out,
               ec.p50, ec.p99, (int)rl_.p50 - (int)ec.p50, (int)rl_.p99 - (int)ec.p99);
        fflush(stdout);
        if (csv) {
            fprintf(csv, "relay,sessions_%u,ours,in_pps,%.0f,1/s\n", list[i], rl_.pps_in);
            fprintf(csv, "relay,sessions_%u,ours,out_pps,%.0f,1/s\n", list[i], rl_.pps_out);
            fprintf(csv, "relay,sessions_%u,ours,cpu,%.1f,%%\n", list[i], rl_.cpu_pct);
            fprintf(csv, "relay,sessions_%u,ours,p50,%u,us\n", list[i], rl_.p50);
            fprintf(csv, "relay,sessions_%u,ours,p99,%u,us\n", list[i], rl_.p99);
            fprintf(csv, "relay,sessions_%u,echo,p50,%u,us\n", list[i], ec.p50);
            fprintf(csv, "relay,sessions_%u,echo,p99,%u,us\n", list[i], ec.p99);
            fprintf(csv, "relay,sessions_%u,ours,added_p50,%d,us\n", list[i],
                    (int)rl_.p50 - (int)ec.p50);
            fprintf(csv, "relay,sessions_%u,ours,added_p99,%d,us\n", list[i],
                    (int)rl_.p99 - (int)ec.p99);
            fprintf(csv, "relay,sessions_%u,ours,cpu_per_session,%.1f,us/s\n", list[i],
                    cpu_per_session(&rl_, list[i]));
            fprintf(csv, "relay,sessions_%u,ours,generator_cpu,%.1f,%%\n", list[i], rl_.gen_pct);
        }
    }
    if (ramp_seconds > 0) {
        uint32_t per_core = ramp(ramp_seconds, 64, ramp_max, csv);
        if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) { // from the ramp's first point if none passed
            two_workers(ramp_seconds, per_core ? per_core : 64, ramp_max, csv);
        }
    }
    double cin, cout;
    double seal_ns;
    run_core(core_sessions, 600, &cin, &cout, &seal_ns);
    printf("\nrelay core alone (%u sessions x 4 peers, 600 ticks, no sockets, polled every ms;\n"
           "every datagram verified on the way in and sealed on the way out; CPU time):\n"
           "  %.0f datagrams/s in, %.0f datagrams/s out on one core (%.0f us per "
           "session-second:\n"
           "  ~%.0f sessions per core without sockets)\n"
           "  a peer's encode + seal: %.0f ns per datagram\n",
           core_sessions, cin, cout, 1e6 * SLOTS * 3 * RATE / cin, cin / (SLOTS * 3 * RATE),
           seal_ns);
    if (csv) {
        fprintf(csv, "relay,core_%u_sessions,ours,in_pps,%.0f,1/s\n", core_sessions, cin);
        fprintf(csv, "relay,core_%u_sessions,ours,out_pps,%.0f,1/s\n", core_sessions, cout);
        fprintf(csv, "relay,peer_encode_seal,ours,time,%.0f,ns\n", seal_ns);
        fclose(csv);
    }
    return 0;
}
