// SPDX-License-Identifier: MIT
// libuv UDP transport (ls/net_uv.h): the one file of net/ that includes <uv.h>.
// Built into the library; on the game's loop (def.loop) or on its own.
#define _GNU_SOURCE // libuv needs POSIX types (pthread_rwlock_t) under -std=c11
#include "ls/net_uv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#if defined(__linux__)
#include <sys/socket.h>
#define LS_UV_SENDMMSG 1
#endif

typedef struct delayed {
    uint64_t at;
    ls_net_addr to;
    size_t len;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} delayed;

struct ls_uv {
    ls_uv_def def;
    uv_loop_t own_loop; // used when def.loop is NULL
    uv_loop_t *loop;
    int closing; // handles whose close callback is still due
    uv_udp_t udp;
    uv_timer_t timer;
    uv_signal_t sig[3];
    bool signals_on;
    ls_net_fault fault;
    delayed *held;
    size_t held_len, held_cap;
    uint16_t port;
    ls_uv_stats st;
    char *rbuf; // RBUF_SLOTS datagram slots of 64 KiB: libuv reads with recvmmsg
    // Datagrams sent from inside our own callbacks wait here and leave together
    // (one sendmmsg) when the callback batch ends; see ls_uv_send.
    int batching; // > 0 while one of our callbacks runs
    size_t out_len;
    struct outgoing *out; // OUT_SLOTS
};

#define RBUF_SLOTS 16
#define RBUF_SIZE  (RBUF_SLOTS * 65536)
#define OUT_SLOTS  64 // datagrams per sendmmsg; a fuller queue is flushed at once

typedef struct outgoing {
    struct sockaddr_storage to;
    size_t len;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} outgoing;

typedef struct send_req {
    uv_udp_send_t req;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} send_req;

uint64_t ls_uv_now_us(const ls_uv *t)
{
    (void)t;
    return uv_hrtime() / 1000u;
}

static void to_sockaddr(const ls_net_addr *a, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (a->family == 6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        memcpy(&s6->sin6_addr, a->ip, 16);
        s6->sin6_port = htons(a->port);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        memcpy(&s4->sin_addr, a->ip, 4);
        s4->sin_port = htons(a->port);
    }
}

static bool from_sockaddr(const struct sockaddr *sa, ls_net_addr *a)
{
    memset(a, 0, sizeof *a);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;
        a->family = 4;
        memcpy(a->ip, &s4->sin_addr, 4);
        a->port = ntohs(s4->sin_port);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)sa;
        a->family = 6;
        memcpy(a->ip, &s6->sin6_addr, 16);
        a->port = ntohs(s6->sin6_port);
        return true;
    }
    return false;
}

static void on_sent(uv_udp_send_t *req, int status)
{
    (void)status;
    free(req);
}

static void count_sent(ls_uv *t, int r, size_t len)
{
    if (r < 0) {
        t->st.send_errors++;
        return;
    }
    t->st.sent++;
    t->st.sent_bytes += len;
}

// Through libuv's own send queue: after EAGAIN (the kernel buffer is full), and
// for everything after it while that queue is not empty, so the order holds.
static int queued_send(ls_uv *t, const struct sockaddr_storage *ss, const uint8_t *data, size_t len)
{
    send_req *q = malloc(sizeof *q);
    if (!q) {
        return UV_ENOMEM;
    }
    memcpy(q->data, data, len);
    uv_buf_t b = uv_buf_init((char *)q->data, (unsigned)len);
    int r = uv_udp_send(&q->req, &t->udp, &b, 1, (const struct sockaddr *)ss, on_sent);
    if (r < 0) {
        free(q);
    }
    return r;
}

static void send_now(ls_uv *t, const struct sockaddr_storage *ss, const uint8_t *data, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)(uintptr_t)data, (unsigned)len);
    int r = uv_udp_try_send(&t->udp, &b, 1, (const struct sockaddr *)ss);
    if (r == UV_EAGAIN || r == UV_ENOSYS) { // kernel buffer full: queue through libuv
        r = queued_send(t, ss, data, len);
    }
    count_sent(t, r, len);
}

// Hand every waiting datagram to the kernel, in order: sendmmsg on Linux (one
// system call for up to OUT_SLOTS datagrams instead of one each), else one
// uv_udp_try_send each.
static void flush_out(ls_uv *t)
{
    size_t i = 0;
#if LS_UV_SENDMMSG
    uv_os_fd_t fd;
    if (t->udp.send_queue_count == 0 && uv_fileno((const uv_handle_t *)&t->udp, &fd) == 0) {
        struct mmsghdr msgs[OUT_SLOTS];
        struct iovec iov[OUT_SLOTS];
        for (size_t k = 0; k < t->out_len; k++) {
            outgoing *o = &t->out[k];
            iov[k].iov_base = o->data;
            iov[k].iov_len = o->len;
            memset(&msgs[k], 0, sizeof msgs[k]);
            msgs[k].msg_hdr.msg_name = &o->to;
            msgs[k].msg_hdr.msg_namelen = o->to.ss_family == AF_INET6
                                              ? (socklen_t)sizeof(struct sockaddr_in6)
                                              : (socklen_t)sizeof(struct sockaddr_in);
            msgs[k].msg_hdr.msg_iov = &iov[k];
            msgs[k].msg_hdr.msg_iovlen = 1;
        }
        while (i < t->out_len) {
            int n = sendmmsg(fd, msgs + i, (unsigned)(t->out_len - i), 0);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                break; // the rest through libuv's queue, below
            }
            if (n <= 0) { // this datagram is refused (as sendto would): count it, go on
                t->st.send_errors++;
                i++;
                continue;
            }
            for (int k = 0; k < n; k++) {
                count_sent(t, 0, t->out[i + (size_t)k].len);
            }
            i += (size_t)n;
        }
    }
#endif
    for (; i < t->out_len; i++) {
        outgoing *o = &t->out[i];
        if (t->udp.send_queue_count != 0) {
            count_sent(t, queued_send(t, &o->to, o->data, o->len), o->len);
        } else {
            send_now(t, &o->to, o->data, o->len);
        }
    }
    t->out_len = 0;
}

static void raw_send(ls_uv *t, const ls_net_addr *to, const uint8_t *data, size_t len)
{
    if (t->batching > 0 && t->out) { // inside our callback: leaves when it returns
        if (t->out_len == OUT_SLOTS) {
            flush_out(t);
        }
        outgoing *o = &t->out[t->out_len++];
        to_sockaddr(to, &o->to);
        o->len = len;
        memcpy(o->data, data, len);
        return;
    }
    struct sockaddr_storage ss;
    to_sockaddr(to, &ss);
    send_now(t, &ss, data, len);
}

static void hold(ls_uv *t, uint64_t at, const ls_net_addr *to, const uint8_t *data, size_t len)
{
    if (t->held_len == t->held_cap) {
        size_t cap = t->held_cap ? t->held_cap * 2 : 64;
        delayed *n = realloc(t->held, cap * sizeof *n);
        if (!n) {
            t->st.send_errors++;
            return;
        }
        t->held = n;
        t->held_cap = cap;
    }
    delayed *d = &t->held[t->held_len++];
    d->at = at;
    d->to = *to;
    d->len = len;
    memcpy(d->data, data, len);
}

// Send every held datagram that is due, earliest first.
static void flush_held(ls_uv *t, uint64_t now)
{
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < t->held_len; i++) {
            if (t->held[i].at <= now && (best == SIZE_MAX || t->held[i].at < t->held[best].at)) {
                best = i;
            }
        }
        if (best == SIZE_MAX) {
            return;
        }
        raw_send(t, &t->held[best].to, t->held[best].data, t->held[best].len);
        t->held[best] = t->held[--t->held_len];
    }
}

void ls_uv_send(ls_uv *t, const ls_net_addr *to, const uint8_t *data, size_t len)
{
    if (len > LS_NET_MAX_DATAGRAM) {
        t->st.send_errors++;
        return;
    }
    if (!ls_net_fault_active(&t->fault)) {
        raw_send(t, to, data, len);
        return;
    }
    uint64_t now = ls_uv_now_us(t), when[2];
    uint32_t n = ls_net_fault_apply(&t->fault, now, when);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t copy[LS_NET_MAX_DATAGRAM]; // each delivered copy may be corrupted on its own
        memcpy(copy, data, len);
        ls_net_fault_corrupt(&t->fault, copy, len);
        if (when[i] <= now) {
            raw_send(t, to, copy, len);
        } else {
            hold(t, when[i], to, copy, len);
        }
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    ls_uv *t = h->data;
    (void)suggested;
    *buf = uv_buf_init(t->rbuf, RBUF_SIZE);
}

static void on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr,
                    unsigned flags)
{
    ls_uv *t = h->data;
    // The buffer is ours and reused: UV_UDP_MMSG_FREE has nothing to free. It
    // ends a recvmmsg batch: whatever the batch made us send leaves then, in
    // one sendmmsg. A call without UV_UDP_MMSG_CHUNK (FREE, a plain recvmsg, an
    // empty read) ends a batch too.
    if (nread > 0 && addr) {
        ls_net_addr from;
        if (from_sockaddr(addr, &from)) {
            t->st.received++;
            t->st.recv_bytes += (uint64_t)nread;
            t->batching++;
            t->def.on_recv(t->def.user, &from, (const uint8_t *)buf->base, (size_t)nread,
                           ls_uv_now_us(t));
            t->batching--;
        }
    }
    if (!(flags & UV_UDP_MMSG_CHUNK) && t->batching == 0 && t->out_len) {
        flush_out(t);
    }
}

static void on_timer(uv_timer_t *h)
{
    ls_uv *t = h->data;
    uint64_t now = ls_uv_now_us(t);
    t->batching++;
    flush_held(t, now);
    if (t->def.on_timer) {
        t->def.on_timer(t->def.user, now);
    }
    if (--t->batching == 0 && t->out_len) {
        flush_out(t);
    }
}

static void on_signal(uv_signal_t *h, int signum)
{
    ls_uv *t = h->data;
    if (t->def.on_signal) {
        t->def.on_signal(t->def.user, signum);
    }
}

static bool fail(char *msg, size_t size, const char *what, int r)
{
    snprintf(msg, size, "%s: %s", what, uv_strerror(r));
    return false;
}

static bool is_v6(const char *host)
{
    return strchr(host, ':') != NULL;
}

static bool start(ls_uv *t, char *msg, size_t size)
{
    struct sockaddr_storage a;
    memset(&a, 0, sizeof a);
    int r = is_v6(t->def.bind_host)
                ? uv_ip6_addr(t->def.bind_host, t->def.bind_port, (struct sockaddr_in6 *)&a)
                : uv_ip4_addr(t->def.bind_host, t->def.bind_port, (struct sockaddr_in *)&a);
    if (r < 0) {
        return fail(msg, size, "bind address", r);
    }
    r = uv_udp_bind(&t->udp, (const struct sockaddr *)&a, 0);
    if (r < 0) {
        return fail(msg, size, "bind", r);
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    uv_udp_getsockname(&t->udp, (struct sockaddr *)&ss, &len);
    ls_net_addr bound;
    t->port = from_sockaddr((const struct sockaddr *)&ss, &bound) ? bound.port : 0;
    int bufsize = 4 << 20; // room for bursts; the kernel may clamp it
    uv_send_buffer_size((uv_handle_t *)&t->udp, &bufsize);
    bufsize = 4 << 20;
    uv_recv_buffer_size((uv_handle_t *)&t->udp, &bufsize);
    r = uv_udp_recv_start(&t->udp, on_alloc, on_recv);
    if (r < 0) {
        return fail(msg, size, "recv", r);
    }
    uint64_t ms = (t->def.poll_us + 999) / 1000;
    uv_timer_start(&t->timer, on_timer, ms, ms);
    if (t->def.signals) {
        static const int sigs[3] = {SIGINT, SIGTERM, SIGUSR1};
        for (int i = 0; i < 3; i++) {
            uv_signal_init(t->loop, &t->sig[i]);
            t->sig[i].data = t;
            uv_signal_start(&t->sig[i], on_signal, sigs[i]);
        }
        t->signals_on = true;
    }
    return true;
}

ls_uv_def ls_default_uv_def(void)
{
    ls_uv_def d;
    memset(&d, 0, sizeof d);
    d.bind_host = "0.0.0.0";
    d.poll_us = 1000;
    return d;
}

static void say(char *msg, size_t size, const char *what)
{
    if (msg && size) {
        snprintf(msg, size, "%s", what);
    }
}

ls_uv *ls_uv_create(const ls_uv_def *def, char *msg, size_t size)
{
    char scratch[256];
    if (!msg || !size) {
        msg = scratch;
        size = sizeof scratch;
    }
    if (!def || !def->on_recv || !def->bind_host || def->poll_us < 1000) {
        say(msg, size, "transport: invalid settings");
        return NULL;
    }
    ls_uv *t = calloc(1, sizeof *t);
    if (!t) {
        say(msg, size, "transport: out of memory");
        return NULL;
    }
    t->def = *def;
    ls_net_fault_init(&t->fault, &def->fault);
    t->rbuf = malloc(RBUF_SIZE);
    t->out = malloc(OUT_SLOTS * sizeof *t->out);
    if (!t->rbuf || !t->out) {
        free(t->rbuf);
        free(t->out);
        free(t);
        say(msg, size, "transport: out of memory");
        return NULL;
    }
    if (def->loop) {
        t->loop = def->loop;
    } else {
        uv_loop_init(&t->own_loop);
        t->loop = &t->own_loop;
    }
    // recvmmsg: up to RBUF_SLOTS datagrams per system call under load.
    uv_udp_init_ex(t->loop, &t->udp,
                   (unsigned)(is_v6(def->bind_host) ? AF_INET6 : AF_INET) | UV_UDP_RECVMMSG);
    uv_timer_init(t->loop, &t->timer);
    t->udp.data = t;
    t->timer.data = t;
    if (!start(t, msg, size)) {
        ls_uv_destroy(t);
        return NULL;
    }
    return t;
}

static void release(ls_uv *t)
{
    free(t->held);
    free(t->rbuf);
    free(t->out);
    free(t);
}

// On the game's loop the last close callback frees the transport.
static void close_cb(uv_handle_t *h)
{
    ls_uv *t = h->data;
    if (--t->closing == 0 && t->loop != &t->own_loop) {
        release(t);
    }
}

void ls_uv_destroy(ls_uv *t)
{
    if (!t) {
        return;
    }
    if (t->out_len) { // destroyed from inside one of our callbacks
        flush_out(t);
    }
    t->closing = 2 + (t->signals_on ? 3 : 0);
    uv_close((uv_handle_t *)&t->udp, close_cb);
    uv_close((uv_handle_t *)&t->timer, close_cb);
    for (int i = 0; t->signals_on && i < 3; i++) {
        uv_close((uv_handle_t *)&t->sig[i], close_cb);
    }
    if (t->loop == &t->own_loop) {
        uv_run(&t->own_loop, UV_RUN_DEFAULT);
        uv_loop_close(&t->own_loop);
        release(t);
    }
}

void *ls_uv_loop(const ls_uv *t)
{
    return t->loop;
}

uint16_t ls_uv_port(const ls_uv *t)
{
    return t->port;
}

int ls_uv_run(ls_uv *t)
{
    uv_run(t->loop, UV_RUN_DEFAULT);
    return 0;
}

void ls_uv_stop(ls_uv *t)
{
    uv_stop(t->loop);
}

ls_uv_stats ls_uv_stats_get(const ls_uv *t)
{
    ls_uv_stats st = t->st;
    st.fault_dropped = t->fault.dropped;
    st.fault_duplicated = t->fault.duplicated;
    st.fault_reordered = t->fault.reordered;
    st.fault_corrupted = t->fault.corrupted;
    return st;
}

bool ls_uv_parse_addr(const char *text, ls_net_addr *out)
{
    if (!text || !out) {
        return false;
    }
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= 64) {
        return false;
    }
    char host[64];
    size_t hl = (size_t)(colon - text);
    bool v6 = text[0] == '[';
    if (v6) { // "[v6]:port"
        if (hl < 3 || text[hl - 1] != ']') {
            return false;
        }
        memcpy(host, text + 1, hl - 2);
        host[hl - 2] = '\0';
    } else {
        memcpy(host, text, hl);
        host[hl] = '\0';
        if (strchr(host, ':')) {
            return false; // a bare v6 address needs brackets
        }
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || port < 1 || port > 65535) {
        return false;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    int r = v6 ? uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)&ss)
               : uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&ss);
    if (r < 0) {
        return false;
    }
    return from_sockaddr((const struct sockaddr *)&ss, out);
}
