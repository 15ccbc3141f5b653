// SPDX-License-Identifier: MIT
// `lockstep relay --ws` (relay_ws.h, SPEC.md §17.16): libwebsockets on a relay
// worker's libuv loop. The only file that includes <libwebsockets.h>.
//
// Why libwebsockets' own libuv event library (LWS_SERVER_OPTION_LIBUV with a
// foreign loop) and not a uv_poll that services lws: Debian's build has it
// (LWS_WITH_LIBUV, the libwebsockets-evlib-uv plugin), so the sockets, timers
// and TLS of lws are watchers on the worker's loop like the UDP socket, with no
// polling period and no second event loop.
#define _GNU_SOURCE // libuv and lws need POSIX types under -std=c11
#include "relay_ws.h"

#include "relay_ws_frame.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct qitem {
    struct qitem *next;
    size_t len;
    uint8_t buf[LWS_PRE + LS_NET_MAX_DATAGRAM];
} qitem;

/// One connection (lws' per-session user data).
typedef struct conn {
    relay_ws *ws;
    struct lws *wsi;
    ls_net_addr addr;
    uint16_t slot;
    bool live, dead;    ///< In the table; being killed (queue overflow).
    qitem *head, *tail; ///< The send queue ...
    size_t queued;      ///< ... its bytes.
    relay_ws_frame rx;  ///< The message being received.
} conn;

struct relay_ws {
    relay_ws_def def;
    struct lws_context *ctx;
    struct lws_vhost *vh;
    void *loops[1];
    conn **table; ///< def.max_connections slots.
    uint32_t serial;
    uint16_t port;
    bool tls, closing;
    relay_ws_stats st;
};

static void queue_free(conn *c)
{
    while (c->head) {
        qitem *q = c->head;
        c->head = q->next;
        free(q);
    }
    c->tail = NULL;
    c->queued = 0;
}

// The Origin rule: no Origin header (a native client) is allowed; a browser's
// Origin only when listed (or "*" is).
static bool origin_ok(const relay_ws *ws, struct lws *wsi)
{
    int n = lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN);
    if (n <= 0) {
        return true;
    }
    char o[256];
    if (n >= (int)sizeof o || lws_hdr_copy(wsi, o, sizeof o, WSI_TOKEN_ORIGIN) < 0) {
        return false;
    }
    for (size_t i = 0; i < ws->def.n_origins; i++) {
        if (strcmp(ws->def.origins[i], "*") == 0 || strcmp(ws->def.origins[i], o) == 0) {
            return true;
        }
    }
    return false;
}

static int close_with(struct lws *wsi, int code, const char *why)
{
    lws_close_reason(wsi, (enum lws_close_status)code, (unsigned char *)(uintptr_t)why,
                     strlen(why));
    return -1;
}

static int on_established(relay_ws *ws, conn *c, struct lws *wsi)
{
    memset(c, 0, sizeof *c);
    uint32_t slot = 0;
    while (slot < ws->def.max_connections && ws->table[slot]) {
        slot++;
    }
    if (slot == ws->def.max_connections || ws->serial == UINT32_MAX) {
        ws->st.full_refused++;
        return close_with(wsi, RELAY_WS_CLOSE_FULL, "relay full");
    }
    c->ws = ws;
    c->wsi = wsi;
    c->slot = (uint16_t)slot;
    c->addr = relay_ws_addr(ws->def.worker, (uint16_t)slot, ++ws->serial);
    c->live = true;
    ws->table[slot] = c;
    ws->st.accepted++;
    ws->st.open++;
    // The kernel's share of the queue stays small too: a reader that stops reading
    // fills the relay's bounded queue soon after.
    int fd = (int)lws_get_socket_fd(wsi);
    int sndbuf = (int)ws->def.send_queue;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    }
    return 0;
}

static int on_receive(relay_ws *ws, conn *c, struct lws *wsi, const void *in, size_t len)
{
    if (!c->live || c->dead || ws->closing) {
        return 0;
    }
    relay_ws_action a = relay_ws_frame_take(&c->rx, in, len, lws_frame_is_binary(wsi) != 0,
                                            lws_is_final_fragment(wsi) != 0, LS_NET_MAX_DATAGRAM);
    if (a == RELAY_WS_CLOSE_TEXT) {
        ws->st.text_closed++;
        return close_with(wsi, RELAY_WS_CLOSE_NOT_BINARY, "binary frames only");
    }
    if (a == RELAY_WS_CLOSE_BIG) {
        ws->st.oversize_closed++;
        return close_with(wsi, RELAY_WS_CLOSE_TOO_BIG, "one datagram per message");
    }
    if (a == RELAY_WS_DELIVER) {
        ws->st.frames_in++;
        ws->st.bytes_in += c->rx.len;
        ws->def.on_recv(ws->def.user, &c->addr, c->rx.buf, c->rx.len);
    }
    return 0;
}

static int on_writeable(relay_ws *ws, conn *c, struct lws *wsi)
{
    qitem *q = c->head;
    if (!c->live || c->dead || !q) {
        return 0;
    }
    c->head = q->next;
    if (!c->head) {
        c->tail = NULL;
    }
    c->queued -= q->len;
    int n = lws_write(wsi, q->buf + LWS_PRE, q->len, LWS_WRITE_BINARY);
    size_t len = q->len;
    free(q);
    if (n < (int)len) {
        return -1;
    }
    ws->st.frames_out++;
    ws->st.bytes_out += len;
    if (c->head) {
        lws_callback_on_writable(wsi);
    }
    return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    struct lws_context *ctx = lws_get_context(wsi);
    relay_ws *ws = ctx ? lws_context_user(ctx) : NULL;
    conn *c = user;
    if (!ws) {
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        if (!origin_ok(ws, wsi)) {
            ws->st.origin_refused++;
            return 1;
        }
        if (ws->st.open >= ws->def.max_connections) {
            ws->st.full_refused++;
            return 1;
        }
        return 0;
    case LWS_CALLBACK_ESTABLISHED:
        return on_established(ws, c, wsi);
    case LWS_CALLBACK_RECEIVE:
        return on_receive(ws, c, wsi, in, len);
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return on_writeable(ws, c, wsi);
    case LWS_CALLBACK_CLOSED:
        if (c && c->live) {
            queue_free(c);
            ws->table[c->slot] = NULL;
            c->live = false;
            ws->st.open--;
        }
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols protocols[] = {
    // No subprotocol is needed: a client that names none gets this one.
    {"lockstep-wire-v2", callback, sizeof(conn), LS_NET_MAX_DATAGRAM, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void log_emit(int level, const char *line)
{
    (void)level;
    fprintf(stderr, "lockstep relay: ws: %s", line);
}

static void say(char *msg, size_t size, const char *what, const relay_ws_def *def)
{
    snprintf(msg, size, "%s (%s:%u)", what, def->host, def->port);
}

relay_ws *relay_ws_create(const relay_ws_def *def, char *msg, size_t size)
{
    if (!def || !def->on_recv || !def->loop || !def->host || !def->max_connections ||
        def->max_connections > 65535 || def->send_queue < LS_NET_MAX_DATAGRAM ||
        !def->cert != !def->key) {
        snprintf(msg, size, "ws: invalid settings");
        return NULL;
    }
    relay_ws *ws = calloc(1, sizeof *ws);
    conn **table = calloc(def->max_connections, sizeof *table);
    if (!ws || !table) {
        free(ws);
        free(table);
        snprintf(msg, size, "ws: out of memory");
        return NULL;
    }
    ws->def = *def;
    ws->table = table;
    ws->loops[0] = def->loop;
    lws_set_log_level(LLL_ERR, log_emit);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
                   LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN;
    if (def->cert) {
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    }
    info.foreign_loops = ws->loops;
    info.user = ws;
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.gid = -1;
    info.uid = -1;
    info.count_threads = 1;
    info.fd_limit_per_thread = def->max_connections + 16;
    info.pcontext = &ws->ctx;
    ws->ctx = lws_create_context(&info);
    if (!ws->ctx) {
        say(msg, size,
            "ws: libwebsockets could not start on the libuv loop (is libwebsockets-evlib-uv "
            "installed?)",
            def);
        free(table);
        free(ws);
        return NULL;
    }
    memset(&info, 0, sizeof info);
    info.options = def->cert ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0;
    info.port = def->port;
    info.iface = def->host;
    info.protocols = protocols;
    info.ssl_cert_filepath = def->cert;
    info.ssl_private_key_filepath = def->key;
    info.vhost_name = "lockstep";
    ws->vh = lws_create_vhost(ws->ctx, &info);
    if (!ws->vh) {
        say(msg, size,
            def->cert ? "ws: cannot listen (the address, or --ws-cert/--ws-key)"
                      : "ws: cannot listen on that address",
            def);
        relay_ws_free(ws);
        return NULL;
    }
    ws->port = (uint16_t)lws_get_vhost_listen_port(ws->vh);
    ws->tls = def->cert != NULL;
    return ws;
}

void relay_ws_close(relay_ws *ws)
{
    if (!ws || ws->closing) {
        return;
    }
    // Connections still open are closed by lws; their handles finish closing when
    // the loop runs next, and lws writes NULL to ws->ctx then (pcontext).
    ws->closing = true;
    lws_context_destroy(ws->ctx);
}

void relay_ws_free(relay_ws *ws)
{
    if (!ws) {
        return;
    }
    relay_ws_close(ws);
    if (ws->ctx) {
        // lws 4.1 on a foreign loop frees its context only on a second
        // lws_context_destroy once the loop has closed its handles (tools/ws_client.c
        // does that dance); the relay's loops are gone by now, so the context and ws
        // stay allocated (still reachable) until the process exits, which follows.
        return;
    }
    free(ws->table);
    free(ws);
}

uint16_t relay_ws_port(const relay_ws *ws)
{
    return ws->port;
}

bool relay_ws_tls(const relay_ws *ws)
{
    return ws->tls;
}

void relay_ws_send(relay_ws *ws, const ls_net_addr *to, const uint8_t *data, size_t len)
{
    uint8_t worker;
    uint16_t slot;
    uint32_t serial;
    conn *c = NULL;
    if (ws && !ws->closing && relay_ws_addr_split(to, &worker, &slot, &serial) &&
        worker == ws->def.worker && slot < ws->def.max_connections) {
        c = ws->table[slot];
    }
    if (!c || !c->live || c->dead || !ls_net_addr_equal(&c->addr, to) ||
        len > LS_NET_MAX_DATAGRAM) {
        if (ws) {
            ws->st.send_dropped++;
        }
        return;
    }
    if (c->queued + len > ws->def.send_queue) {
        // A reader too slow (or one that never reads): close it rather than let the
        // queue grow.
        ws->st.slow_closed++;
        ws->st.send_dropped++;
        c->dead = true;
        queue_free(c);
        // Its socket is full, so no close frame would get out: shut the socket down (the
        // unsent bytes go with it) and lws closes the connection when it sees that.
        int fd = (int)lws_get_socket_fd(c->wsi);
        if (fd >= 0) {
            shutdown(fd, SHUT_RDWR);
        }
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
        return;
    }
    qitem *q = malloc(sizeof *q);
    if (!q) {
        ws->st.send_dropped++;
        return;
    }
    q->next = NULL;
    q->len = len;
    memcpy(q->buf + LWS_PRE, data, len);
    if (c->tail) {
        c->tail->next = q;
    } else {
        c->head = q;
    }
    c->tail = q;
    c->queued += len;
    lws_callback_on_writable(c->wsi);
}

relay_ws_stats relay_ws_stats_get(const relay_ws *ws)
{
    relay_ws_stats st;
    memset(&st, 0, sizeof st);
    return ws ? ws->st : st;
}

void relay_ws_stats_add(relay_ws_stats *a, const relay_ws_stats *b)
{
    a->accepted += b->accepted, a->open += b->open;
    a->frames_in += b->frames_in, a->bytes_in += b->bytes_in;
    a->frames_out += b->frames_out, a->bytes_out += b->bytes_out;
    a->origin_refused += b->origin_refused, a->full_refused += b->full_refused;
    a->text_closed += b->text_closed, a->oversize_closed += b->oversize_closed;
    a->slow_closed += b->slow_closed, a->send_dropped += b->send_dropped;
}
