// SPDX-License-Identifier: MIT
/// @file
/// `lockstep bot --ws URL` (SPEC.md §17.16): a WebSocket to the relay on the bot's
/// libuv loop (libwebsockets' client with its libuv event library, foreign loop),
/// carrying the peer's datagrams, one per binary message, both ways. Only
/// ws_client.c and relay_ws.c include <libwebsockets.h>.
#ifndef LS_TOOLS_WS_CLIENT_H
#define LS_TOOLS_WS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// A datagram (one binary message) arrived from the relay.
typedef void (*ws_client_recv_fn)(void *user, const uint8_t *data, size_t len);

/// Opaque client.
typedef struct ws_client ws_client;

/// Connect to url (ws://HOST:PORT[/path] or wss://..., numeric or named host) on
/// loop (a uv_loop_t*). NULL with msg filled when the URL is bad or lws cannot
/// start; a connection that fails later just stays silent (ws_client_state says).
ws_client *ws_client_create(const char *url, void *loop, void *user, ws_client_recv_fn on_recv,
                            char *msg, size_t msg_size);
/// Send one datagram: queued (at most 256; more are dropped and counted, as a
/// datagram may be) until the socket is writable; dropped before the connection
/// is up or after it ended.
void ws_client_send(ws_client *c, const uint8_t *data, size_t len);
/// "connecting", "open", "closed" (the relay closed, or the connection failed).
const char *ws_client_state(const ws_client *c);
/// Datagrams dropped by ws_client_send.
uint64_t ws_client_dropped(const ws_client *c);
/// Close the connection; the loop finishes it when it runs next.
void ws_client_close(ws_client *c);
/// Free after ws_client_close and after the loop ran to the end (closes first if needed).
void ws_client_free(ws_client *c);

#endif
