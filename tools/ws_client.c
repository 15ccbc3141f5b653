// SPDX-License-Identifier: MIT
// The bot's WebSocket to the relay (ws_client.h, SPEC.md §17.16): libwebsockets'
// client on the bot's libuv loop, like the relay's listener (tools/relay_ws.c).
#define _GNU_SOURCE // libuv and lws need POSIX types under -std=c11
#include "ws_client.h"

#include "ls/net_wire.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define QCAP 256

typedef struct qmsg {
    size_t len;
    unsigned char buf[LWS_PRE + LS_NET_MAX_DATAGRAM];
} qmsg;

struct ws_client {
    struct lws_context *ctx;
    struct lws *wsi;
    void *loops[1];
    void *user;
    ws_client_recv_fn on_recv;
    const char *state;
    bool closing;
    uint64_t dropped;
    qmsg *q; // QCAP, a ring
    size_t qhead, qlen;
    unsigned char rx[LS_NET_MAX_DATAGRAM]; // a message in fragments
    size_t rx_len;
    bool rx_bad; // the message being received is over one datagram: dropped
};

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    (void)user;
    struct lws_context *ctx = lws_get_context(wsi);
    ws_client *c = ctx ? lws_context_user(ctx) : NULL;
    if (!c) {
        return 0;
    }
    switch (reason) {
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        c->wsi = wsi;
        c->state = "open";
        if (c->qlen) {
            lws_callback_on_writable(wsi);
        }
        return 0;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
    case LWS_CALLBACK_CLIENT_CLOSED:
        c->wsi = NULL;
        c->state = "closed";
        return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE:
        if (c->closing || !lws_frame_is_binary(wsi)) {
            return 0; // the relay sends binary messages only
        }
        if (len > sizeof c->rx - c->rx_len) {
            c->rx_bad = true;
        } else if (!c->rx_bad) {
            memcpy(c->rx + c->rx_len, in, len);
            c->rx_len += len;
        }
        if (lws_is_final_fragment(wsi)) {
            if (!c->rx_bad) {
                c->on_recv(c->user, c->rx, c->rx_len);
            }
            c->rx_len = 0;
            c->rx_bad = false;
        }
        return 0;
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (c->qlen) {
            qmsg *m = &c->q[c->qhead];
            c->qhead = (c->qhead + 1) % QCAP;
            c->qlen--;
            if (lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_BINARY) < (int)m->len) {
                return -1;
            }
            if (c->qlen) {
                lws_callback_on_writable(wsi);
            }
        }
        return 0;
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"lockstep-wire-v2", callback, 0, LS_NET_MAX_DATAGRAM, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void log_emit(int level, const char *line)
{
    (void)level;
    fprintf(stderr, "lockstep bot: ws: %s", line);
}

ws_client *ws_client_create(const char *url, void *loop, void *user, ws_client_recv_fn on_recv,
                            char *msg, size_t size)
{
    char buf[512];
    const char *prot, *host, *path;
    int port;
    if (!url || strlen(url) >= sizeof buf - 1) {
        snprintf(msg, size, "--ws wants ws://HOST:PORT or wss://HOST:PORT");
        return NULL;
    }
    snprintf(buf, sizeof buf, "%s", url);
    if (lws_parse_uri(buf, &prot, &host, &port, &path) ||
        (strcmp(prot, "ws") != 0 && strcmp(prot, "wss") != 0) || !host[0]) {
        snprintf(msg, size, "--ws wants ws://HOST:PORT or wss://HOST:PORT, got '%s'", url);
        return NULL;
    }
    ws_client *c = calloc(1, sizeof *c);
    qmsg *q = calloc(QCAP, sizeof *q);
    if (!c || !q) {
        free(c);
        free(q);
        snprintf(msg, size, "out of memory");
        return NULL;
    }
    c->q = q;
    c->user = user;
    c->on_recv = on_recv;
    c->state = "connecting";
    c->loops[0] = loop;
    lws_set_log_level(LLL_ERR, log_emit);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT |
                   LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN;
    info.foreign_loops = c->loops;
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.user = c;
    info.gid = -1;
    info.uid = -1;
    info.pcontext = &c->ctx;
    c->ctx = lws_create_context(&info);
    if (!c->ctx) {
        snprintf(msg, size,
                 "ws: libwebsockets could not start on the libuv loop (is libwebsockets-evlib-uv "
                 "installed?)");
        free(q);
        free(c);
        return NULL;
    }
    char fullpath[520];
    snprintf(fullpath, sizeof fullpath, "/%s", path);
    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = c->ctx;
    ci.address = host;
    ci.port = port;
    ci.path = fullpath;
    ci.host = host;
    ci.ssl_connection = strcmp(prot, "wss") == 0 ? LCCSCF_USE_SSL : 0;
    if (!lws_client_connect_via_info(&ci)) {
        c->state = "closed";
    }
    return c;
}

void ws_client_send(ws_client *c, const uint8_t *data, size_t len)
{
    if (!c->wsi || c->closing || len > LS_NET_MAX_DATAGRAM || c->qlen == QCAP) {
        c->dropped++;
        return;
    }
    qmsg *m = &c->q[(c->qhead + c->qlen++) % QCAP];
    m->len = len;
    memcpy(m->buf + LWS_PRE, data, len);
    lws_callback_on_writable(c->wsi);
}

const char *ws_client_state(const ws_client *c)
{
    return c->state;
}

uint64_t ws_client_dropped(const ws_client *c)
{
    return c->dropped;
}

void ws_client_close(ws_client *c)
{
    if (!c || c->closing) {
        return;
    }
    c->closing = true;
    // libwebsockets 4.1 on a foreign loop: the first lws_context_destroy closes the
    // connection and its handles, which the loop must then run to finish (the bot's
    // own handles keep it busy, so it runs without waiting); a second call frees the
    // context (lws writes NULL to c->ctx). Without it the context stayed allocated
    // at exit (LeakSanitizer, relay_ws/a_websocket_peer_and_a_udp_peer_play_one_match).
    lws_context_destroy(c->ctx);
    for (int i = 0; i < 8; i++) {
        uv_run(c->loops[0], UV_RUN_NOWAIT);
    }
    for (int i = 0; i < 8 && c->ctx; i++) {
        lws_context_destroy(c->ctx);
        uv_run(c->loops[0], UV_RUN_NOWAIT);
    }
}

void ws_client_free(ws_client *c)
{
    if (!c) {
        return;
    }
    ws_client_close(c);
    if (c->ctx) { // the loop never ran again: lws may still use c, keep it
        return;
    }
    free(c->q);
    free(c);
}
