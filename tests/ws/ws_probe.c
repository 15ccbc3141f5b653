// SPDX-License-Identifier: MIT
// The WebSocket client of tests/test_relay_ws.c (built as build/ws_probe; never
// installed): libwebsockets' client on a libuv loop, like the relay's listener.
//
//   ws_probe URL [--origin O] [--seconds N] --bridge [--slow-after MS]
//       Binds a UDP socket on 127.0.0.1 (prints `udp 127.0.0.1:PORT`) and carries
//       the datagrams of the one peer that talks to it (a `lockstep bot --relay`
//       pointed there) over the WebSocket, each as one binary message, and the
//       relay's messages back to that peer as datagrams. --slow-after MS: after MS
//       it stops reading the WebSocket (a small receive buffer, rx flow off).
//   ws_probe URL [--origin O] [--seconds N] --send text|big|garbage
//       Sends a text message, a binary message of 1201 bytes (one more than a
//       datagram), or 64 binary messages of seeded garbage, then waits.
//
// Prints `connected`, `closed CODE` (the relay's close frame), `error WHY` (the
// handshake failed, e.g. a refused Origin), `gone` (the connection ended); exits 0
// when the connection has ended, 2 after --seconds (default 30).
#define _GNU_SOURCE
#include <libwebsockets.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <uv.h>

#define MAX_MSG 2048
#define QCAP    256

typedef struct msg {
    size_t len;
    bool text;
    unsigned char buf[LWS_PRE + MAX_MSG];
} msg;

static struct {
    uv_loop_t loop;
    uv_udp_t udp;
    uv_timer_t deadline, slow;
    struct lws_context *ctx;
    struct lws *wsi;
    bool bridge, ended, have_peer, reading;
    struct sockaddr_storage peer;
    const char *send_kind;
    msg q[QCAP];
    size_t qhead, qlen;
    int status;
} P;

static void push(const void *data, size_t len, bool text)
{
    if (P.qlen == QCAP || len > MAX_MSG) {
        return; // dropped, as a datagram may be
    }
    msg *m = &P.q[(P.qhead + P.qlen++) % QCAP];
    m->len = len;
    m->text = text;
    memcpy(m->buf + LWS_PRE, data, len);
    if (P.wsi) {
        lws_callback_on_writable(P.wsi);
    }
}

static void queue_kind(void)
{
    static unsigned char b[1201];
    if (strcmp(P.send_kind, "text") == 0) {
        push("hello", 5, true);
    } else if (strcmp(P.send_kind, "big") == 0) {
        memset(b, 0x5a, sizeof b);
        push(b, sizeof b, false);
    } else { // garbage: seeded, sizes 1..1200
        uint32_t s = 12345;
        for (int i = 0; i < 64; i++) {
            size_t n = 1 + (s = s * 1103515245u + 12345u) % 1200;
            for (size_t k = 0; k < n; k++) {
                s = s * 1103515245u + 12345u;
                b[k] = (unsigned char)(s >> 16);
            }
            push(b, n, false);
        }
    }
}

static void end(int status)
{
    if (P.ended) {
        return;
    }
    P.ended = true;
    P.status = status;
    printf("gone\n");
    fflush(stdout);
    uv_stop(&P.loop);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    (void)user;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        P.wsi = wsi;
        P.reading = true;
        printf("connected\n");
        fflush(stdout);
        if (P.send_kind) {
            queue_kind();
        }
        if (P.qlen) {
            lws_callback_on_writable(wsi);
        }
        return 0;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        printf("error %s\n", in ? (const char *)in : "(none)");
        fflush(stdout);
        P.wsi = NULL;
        end(0);
        return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE:
        if (P.bridge && P.have_peer) {
            uv_buf_t b = uv_buf_init(in, (unsigned)len);
            uv_udp_try_send(&P.udp, &b, 1, (const struct sockaddr *)&P.peer);
        }
        return 0;
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (P.qlen) {
            msg *m = &P.q[P.qhead];
            P.qhead = (P.qhead + 1) % QCAP;
            P.qlen--;
            if (lws_write(wsi, m->buf + LWS_PRE, m->len,
                          m->text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY) < (int)m->len) {
                return -1;
            }
            if (P.qlen) {
                lws_callback_on_writable(wsi);
            }
        }
        return 0;
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if (len >= 2) {
            const unsigned char *c = in;
            printf("closed %u\n", (unsigned)(c[0] << 8 | c[1]));
        } else {
            printf("closed -\n");
        }
        fflush(stdout);
        return 0;
    case LWS_CALLBACK_CLIENT_CLOSED:
        P.wsi = NULL;
        end(0);
        return 0;
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"lockstep-wire-v2", callback, 0, MAX_MSG, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char rb[65536];
    (void)h, (void)suggested;
    *buf = uv_buf_init(rb, sizeof rb);
}

static void on_udp(uv_udp_t *h, ssize_t n, const uv_buf_t *buf, const struct sockaddr *addr,
                   unsigned flags)
{
    (void)h, (void)flags;
    if (n <= 0 || !addr) {
        return;
    }
    memcpy(&P.peer, addr,
           addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    P.have_peer = true;
    push(buf->base, (size_t)n, false);
}

static void on_deadline(uv_timer_t *t)
{
    (void)t;
    printf("timeout\n");
    fflush(stdout);
    P.status = 2;
    P.ended = true;
    uv_stop(&P.loop);
}

static void on_slow(uv_timer_t *t)
{
    (void)t;
    if (P.wsi) {
        int small = 2048;
        setsockopt((int)lws_get_socket_fd(P.wsi), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        lws_rx_flow_control(P.wsi, 0);
        printf("stopped reading\n");
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    const char *url = NULL, *origin = NULL;
    long seconds = 30, slow_after = -1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--bridge") == 0) {
            P.bridge = true;
        } else if (strcmp(argv[i], "--origin") == 0 && v) {
            origin = v, i++;
        } else if (strcmp(argv[i], "--seconds") == 0 && v) {
            seconds = atol(v), i++;
        } else if (strcmp(argv[i], "--slow-after") == 0 && v) {
            slow_after = atol(v), i++;
        } else if (strcmp(argv[i], "--send") == 0 && v) {
            P.send_kind = v, i++;
        } else if (!url && argv[i][0] != '-') {
            url = argv[i];
        } else {
            fprintf(stderr, "ws_probe: unexpected %s\n", argv[i]);
            return 64;
        }
    }
    if (!url || P.bridge == (P.send_kind != NULL)) {
        fprintf(stderr, "usage: ws_probe URL [--origin O] [--seconds N] (--bridge [--slow-after "
                        "MS] | --send text|big|garbage)\n");
        return 64;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    lws_set_log_level(LLL_ERR, NULL);
    uv_loop_init(&P.loop);
    if (P.bridge) {
        struct sockaddr_in a;
        uv_ip4_addr("127.0.0.1", 0, &a);
        uv_udp_init(&P.loop, &P.udp);
        if (uv_udp_bind(&P.udp, (const struct sockaddr *)&a, 0) != 0) {
            fprintf(stderr, "ws_probe: cannot bind UDP\n");
            return 1;
        }
        struct sockaddr_in got;
        int glen = sizeof got;
        uv_udp_getsockname(&P.udp, (struct sockaddr *)&got, &glen);
        printf("udp 127.0.0.1:%u\n", ntohs(got.sin_port));
        uv_udp_recv_start(&P.udp, on_alloc, on_udp);
    }
    uv_timer_init(&P.loop, &P.deadline);
    uv_timer_start(&P.deadline, on_deadline, (uint64_t)seconds * 1000u, 0);
    uv_timer_init(&P.loop, &P.slow);
    if (slow_after >= 0) {
        uv_timer_start(&P.slow, on_slow, (uint64_t)slow_after, 0);
    }
    void *loops[1] = {&P.loop};
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT |
                   LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN;
    info.foreign_loops = loops;
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.gid = -1;
    info.uid = -1;
    P.ctx = lws_create_context(&info);
    if (!P.ctx) {
        fprintf(stderr, "ws_probe: no lws context\n");
        return 1;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", url);
    const char *prot, *host, *path;
    int port;
    if (lws_parse_uri(buf, &prot, &host, &port, &path)) {
        fprintf(stderr, "ws_probe: bad URL %s\n", url);
        return 64;
    }
    char fullpath[520];
    snprintf(fullpath, sizeof fullpath, "/%s", path);
    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = P.ctx;
    ci.address = host;
    ci.port = port;
    ci.path = fullpath;
    ci.host = host;
    ci.origin = origin;
    ci.protocol = NULL;
    if (strcmp(prot, "wss") == 0) {
        ci.ssl_connection = LCCSCF_USE_SSL | LCCSCF_ALLOW_SELFSIGNED |
                            LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK | LCCSCF_ALLOW_INSECURE;
    }
    if (!lws_client_connect_via_info(&ci)) {
        printf("error connect\n");
        return 0;
    }
    uv_run(&P.loop, UV_RUN_DEFAULT);
    int status = P.status;
    lws_context_destroy(P.ctx);
    if (P.bridge) {
        uv_close((uv_handle_t *)&P.udp, NULL);
    }
    uv_close((uv_handle_t *)&P.deadline, NULL);
    uv_close((uv_handle_t *)&P.slow, NULL);
    uv_run(&P.loop, UV_RUN_DEFAULT);
    uv_loop_close(&P.loop);
    return status;
}
