// SPDX-License-Identifier: MIT
// Private to the tool: the Agones lifecycle of `lockstep relay` (SPEC.md §17.14).
// When AGONES_SDK_HTTP_PORT is set, the relay tells the Agones SDK sidecar's
// local REST gateway (127.0.0.1:PORT) that it is Ready once its UDP socket is
// bound and its sessions exist, sends Health every 2 s, Allocates itself and
// labels the GameServer with the session ids when sessions start (their first
// player joins), and asks for Shutdown when it exits.
//
// Why its own tiny HTTP client, on plain non-blocking sockets driven by the
// relay's 1 ms poll timer: the requests are five fixed ones, one at a time,
// and only the status line of a response matters. A library (libcurl) or a
// thread would be more code to trust than the few lines here, and nothing may
// block the relay's loop. Failures of the gateway are logged on `err` and never
// stop the relay; every request has a deadline and a bounded number of tries.
#ifndef LS_TOOLS_AGONES_H
#define LS_TOOLS_AGONES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/// The label key the relay sets (Agones stores it as agones.dev/sdk-lockstep-sessions).
#define AGONES_LABEL_KEY "lockstep-sessions"
/// Period of the Health pings, milliseconds.
#define AGONES_HEALTH_MS 2000u
/// Time for one request (connect, send, status line), milliseconds.
#define AGONES_REQUEST_MS 1000u
/// Time agones_shutdown may take at exit, at most, milliseconds.
#define AGONES_EXIT_MS 3000u

/// The client (opaque). Every function accepts NULL and then does nothing, so
/// the relay calls them whether Agones is there or not.
typedef struct agones agones;

/// A client for the gateway named by $AGONES_SDK_HTTP_PORT, or NULL when the
/// variable is unset or empty. A value that is not a port 1..65535 is reported
/// on err and gives NULL too (the relay then runs without Agones). Successes
/// are logged on log ("agones ready", ...), failures on err. max_sessions: the
/// highest session id that agones_session_started will be given.
agones *agones_from_env(FILE *log, FILE *err, uint32_t max_sessions);

/// The same for an explicit gateway port (1..65535); NULL if out of memory.
agones *agones_create(uint16_t port, FILE *log, FILE *err, uint32_t max_sessions);

/// Queue Ready (POST /ready) and start the Health pings (POST /health, the
/// first right after Ready's answer, then every AGONES_HEALTH_MS).
void agones_ready(agones *a);

/// Session `session` (1..max_sessions) started: the first time any session
/// does, queue a self-Allocate (POST /allocate); each time, (re)queue the label
/// (PUT /metadata/label) listing every session started so far. Repeated calls
/// for one session do nothing.
void agones_session_started(agones *a, uint32_t session);

/// Make progress on the request in flight or start the next one that is due.
/// Never blocks: call it from the relay's poll timer.
void agones_poll(agones *a);

/// At exit: drop what is queued (Ready, Health, Allocate, a label), let the
/// request in flight finish, then Shutdown (POST /shutdown, up to 3 tries).
/// Blocks for at most AGONES_EXIT_MS.
void agones_shutdown(agones *a);

/// Close the socket (if any) and free the client.
void agones_destroy(agones *a);

#endif
