// SPDX-License-Identifier: MIT
// `lockstep relay --bind 127.0.0.1:PORT`: the UDP relay. Creates sessions from
// the command line, issues a credential (secret key) per slot, as files in a
// private directory (--credentials DIR) or on stdout, relays inputs, checks
// checksums, records each session as a replay, prints stats on SIGUSR1 and at exit
// (with --json, a JSON summary on stdout at exit and the line log on stderr).
//
// --workers N: N relay cores, each with its own UDP socket (port), libuv loop and
// sessions. Worker 0 runs on the main thread with the control API, Agones and the
// signals; workers 1..N-1 on threads of their own. A session belongs to one worker
// for its life (least loaded at creation, ties to the lowest index); its players
// talk to that worker's port. Nothing on a datagram path takes a lock: a worker
// keeps the events and finished recordings it has for the main thread and hands
// them over in its timer (a mutex-protected queue and a uv_async). The main thread
// reads or changes a worker's core (the API's handlers, the drain, SIGUSR1) only
// while that worker is held: parked in a uv_async callback on a condition variable.
#define _POSIX_C_SOURCE 200809L // access, lstat
#include "agones.h"
#include "cli.h"
#include "json.h"
#include "log_line.h"
#include "ls/checksum.h"
#include "ls/net_relay.h"
#include "ls/net_uv.h"
#include "ls/replay.h"
#include "net_tool.h"
#include "relay_api.h"
#include "relay_metrics.h"
#include "relay_result.h"
#include "relay_ws.h"
#include "relay_ws_frame.h"
#include "replay_glue.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

// The rest of the usage (C's 4095-character limit on one string literal).
static const char usage_tail[] =
    "  --ws HOST:PORT    also accept WebSocket clients there (SPEC.md 17.16), port 0: any;\n"
    "                    prints `ws HOST:PORT` (worker K: PORT+K). Each binary message\n"
    "                    carries one datagram, as over UDP; text messages and messages\n"
    "                    over 1200 bytes close the connection (1003, 1009)\n"
    "  --ws-origin O     allow browser pages of origin O (e.g. https://game.example;\n"
    "                    repeatable; * allows any). Clients that send no Origin header\n"
    "                    (native ones) are always allowed; without --ws-origin every\n"
    "                    browser origin is refused\n"
    "  --ws-cert PEM, --ws-key PEM  serve wss:// (TLS) with this certificate and key\n"
    "  --ws-max-connections N  open WebSocket connections per worker (default 256)\n"
    "  --ws-send-queue BYTES   queued per connection before a slow reader is cut off\n"
    "                    (its socket shut down), 4096..16777216 (default 65536)\n" NET_FAULT_USAGE
    "\nWith --record and a scene whose game keeps words (game soccer), the relay re-simulates\n"
    "each finished recording for the game's result (`result session=ID ... score=A-B`, and\n"
    "the API's match_result event).\n"
    "\nSIGUSR1 prints stats; SIGINT, SIGTERM (not draining) finish the recordings, exit 0.\n"
    "Exit status 1 when the address cannot be bound, a file cannot be read or the\n"
    "--credentials directory is missing, not a directory or not writable.";

const cli_command cmd_relay_def = {
    "relay", "run the UDP input relay (sessions, credentials, desync detection, recording)",
    "[--bind HOST:PORT] [--credentials DIR] [--sessions N] [--slots N] [--tick-rate HZ]\n"
    "       [--input-size B] [--delay D] [--ticks N] [--timeout MS] [--join-timeout MS]\n"
    "       [--spectators N] [--history TICKS] [--rejoin-ms MS] [--workers N]\n"
    "       [--scene FILE --seed S --record PATH [--sign-key KEY]] [--exit-when-done]\n"
    "       [--api HOST:PORT [--api-token-file FILE] [--api-sessions N]] [--drain-seconds N]\n"
    "       [--ws HOST:PORT [--ws-origin ORIGIN]... [--ws-cert PEM --ws-key PEM]\n"
    "        [--ws-max-connections N] [--ws-send-queue BYTES]]\n"
    "       [--json] [--log-json] [fault options]\n\n"
    "  --bind HOST:PORT  where to listen (default 127.0.0.1:0, an ephemeral port)\n"
    "  --workers N       relay threads, 1..64 (default: the number of cores), each with\n"
    "                    its own UDP port: PORT+K for worker K (any free port with 0). A\n"
    "                    session stays on one worker (the least loaded when it is made);\n"
    "                    players use its port, printed with the credentials (`session ID\n"
    "                    relay HOST:PORT worker K`) and in the API's answers\n"
    "  --credentials DIR write each slot's credential (its secret key) to\n"
    "                    DIR/session-ID-slot-K.cred (mode 0600, never overwritten:\n"
    "                    DIR must exist and be writable) and print `credential SESSION\n"
    "                    SLOT PATH`; without it the relay prints the whole credential\n"
    "                    instead. Each player gets its own: `lockstep bot --credential\n"
    "                    PATH`\n"
    "  --sessions N      sessions to create (default 1; 0 with --api)\n"
    "  --slots N         slots per session, 2..16 (default 4)\n"
    "  --tick-rate HZ    ticks per second (default 60)\n"
    "  --input-size B    bytes per slot per tick, 1..64 (default 1)\n"
    "  --delay D         input delay in ticks (default 3)\n"
    "  --ticks N         match length, 0 = open-ended (default 0)\n"
    "  --timeout MS      silence that disconnects a peer (default 3000)\n"
    "  --join-timeout MS time for every slot to join, 0 = forever (default 30000)\n"
    "  --spectators N    spectator credentials per session, 0..16 (default 0), as\n"
    "                    DIR/session-ID-spectator-I.cred: `lockstep bot` watches with one\n"
    "  --history TICKS   final ticks kept for spectators, 64..65536 (default 1024): a\n"
    "                    spectator that falls further behind is dropped\n"
    "  --rejoin-ms MS    a slot disconnected by timeout may rejoin within MS (default 0:\n"
    "                    never); it loads a snapshot that a connected player uploads\n"
    "  --scene FILE      scene embedded in the recordings (default tools/scenes/arena.scene,\n"
    "                    else the installed arena.scene)\n"
    "  --seed S          seed written into the recordings (default 0)\n"
    "  --record PATH     record session 1 to PATH (session N to PATH.N), flushed per chunk\n"
    "  --sign-key KEY    sign the recordings with KEY (a .key file from `lockstep keygen`);\n"
    "                    players check them with `replay verify FILE --pubkey KEY.pub`\n"
    "  --rate-limit PPS  datagrams/s per source address (default max(2000, 16 x tick rate))\n"
    "  --exit-when-done  exit once every session has ended and its peers are gone\n"
    "  --api HOST:PORT   serve the control API (HTTP, JSON: SPEC.md 17.13) there, port 0:\n"
    "                    any; prints `api HOST:PORT`. Its token: the first line of\n"
    "  --api-token-file F, else $LOCKSTEP_API_TOKEN (16..256 characters)\n"
    "  --api-sessions N  sessions the API may create (default 256)\n"
    "  --drain-seconds N SIGTERM drains: no new sessions, matches end (N s at most),\n"
    "                    exit 0. Default 300 with --api, else 0 (SIGTERM stops at once)\n"
    "  --json            at exit, one JSON summary on stdout: per session its ticks,\n"
    "                    desync_events, dispute_events, snapshots_refused, disconnects,\n"
    "                    rejoins, peers[], spectators[], replay; relay-wide counters;\n"
    "                    the line log then goes to stderr\n"
    "  --log-json        the line log as JSON lines: "
    "{\"t_ms\",\"event\",key:value...}\n",
    cmd_relay, usage_tail};

#define MAX_SESSIONS     1024
#define MAX_WORKERS      64
#define RELAY_WS_ORIGINS 32

typedef struct relay_opts {
    const char *bind, *scene, *record, *sign_key, *credentials;
    const char *api, *api_token_file; ///< --api HOST:PORT; the token's file.
    char host[64], api_host[64];
    uint16_t port, api_port;
    uint64_t api_sessions, drain_seconds;
    bool sessions_given, drain_given;
    char scene_buf[4096];
    uint64_t sessions, seed, rate_limit, workers;
    ls_session_def sd;
    bool exit_when_done, json, log_json;
    ls_net_fault_def fault;
    const char *ws, *ws_cert, *ws_key;        ///< --ws HOST:PORT; wss:// files.
    const char *ws_origins[RELAY_WS_ORIGINS]; ///< --ws-origin, n_ws_origins of them.
    size_t n_ws_origins;
    char ws_host[64];
    uint16_t ws_port;
    uint64_t ws_max_connections, ws_send_queue;
} relay_opts;

/// What the relay saw of one session: the event lists of the --json summary, and
/// who may need a snapshot (for naming state_needed events).
typedef struct session_log {
    net_event_list desyncs, disputes, refusals, disconnects, rejoins;
    uint32_t rejoined;     ///< Slots back by REJOIN and not disconnected since (bit per slot).
    uint32_t watching;     ///< Spectators joined and not dropped since (bit per index).
    uint32_t state_needed; ///< LS_RELAY_EV_STATE_NEEDED events.
    ls_session_def sd;     ///< Its settings (the command line's, or an API request's).
    uint64_t seed;         ///< The seed of its recording.
    bool recorded;         ///< The recording was finished ...
    uint32_t replay_ticks; ///< ... with this many ticks.
    bool done_seen;        ///< Its SESSION_DONE reached the main thread.
    bool has_result;       ///< The game's result was re-simulated: ...
    relay_result result;   ///< ... this.
} session_log;

typedef struct relay_app relay_app;

/// What a worker thread (or a result thread) hands the main thread.
typedef enum main_msg_kind {
    MSG_EVENT = 1,     ///< A relay event to log, count and publish.
    MSG_RECORDING = 2, ///< A recording was finished.
    MSG_RESULT = 3,    ///< A game result was re-simulated.
} main_msg_kind;

typedef struct main_msg {
    main_msg_kind kind;
    ls_relay_event ev;      ///< MSG_EVENT.
    const char *key;        ///< MSG_EVENT, STATE_NEEDED: how the log line names ev.slot.
    uint32_t session;       ///< MSG_RECORDING, MSG_RESULT.
    uint32_t ticks;         ///< MSG_RECORDING: its ticks ...
    bool ok;                ///< ... finished without an error.
    struct result_job *job; ///< MSG_RESULT.
} main_msg;

typedef struct msg_list {
    main_msg *v;
    size_t n, cap;
} msg_list;

/// One re-simulation of a finished recording, on a thread of its own.
typedef struct result_job {
    relay_app *app;
    uint32_t session;
    char path[4096 + 16];
    pthread_t thread;
    bool started, joined; ///< Its thread was started; joined (at exit).
    bool ok;
    relay_result res;
    struct result_job *next; ///< In app->jobs (started) or app->queued (waiting).
} result_job;

/// One relay core with its socket and loop. Worker 0 runs on the main thread.
typedef struct relay_worker {
    relay_app *app;
    uint32_t index;
    ls_relay *relay;
    ls_uv *uv;
    relay_ws *ws; ///< Its WebSocket listener (--ws), or NULL.
    pthread_t thread;
    bool thread_started;
    uv_async_t wake; ///< Workers 1..: the main thread wants it held or stopped.
    bool wake_init;
    pthread_mutex_t mu; ///< Guards hold_req, held, stop_req.
    pthread_cond_t cv;
    bool hold_req, held, stop_req;
    msg_list pending; ///< Its thread only: for the main thread, handed over in the timer.
    uint32_t *ids;    ///< The sessions it owns (written while held or before it runs) ...
    uint32_t nids;    ///< ... how many.
    uint32_t active;  ///< Main thread: its sessions not done yet (least-loaded choice).
    atomic_uint seen; ///< Sessions all_done/all_idle were computed over.
    atomic_bool all_done, all_idle;
    /// Workers 1..: their own datagram-handling histogram (GET /metrics adds it).
    uint64_t latency[RELAY_API_LATENCY_BUCKETS + 1], latency_count, latency_sum_ns;
} relay_worker;

struct relay_app {
    relay_opts o;
    relay_worker w[MAX_WORKERS]; ///< o.workers of them.
    uint32_t workers;
    uint8_t *owner;         ///< The worker of each session id (cap of them).
    ls_uv *uv;              ///< Worker 0's: the main loop (signals, API, Agones).
    pthread_t main_thread;  ///< Who may log and publish directly.
    bool threads_running;   ///< Workers 1.. run on their threads.
    uint32_t holds;         ///< Nesting of hold_all(true).
    pthread_mutex_t qmu;    ///< Guards q.
    msg_list q;             ///< For the main thread.
    uv_async_t qwake;       ///< Wakes the main loop for q.
    bool qwake_init;        ///< qwake is initialised.
    atomic_bool watch_done; ///< Workers compute all_done/all_idle.
    atomic_bool stopping;   ///< Result threads give up (the relay is stopping).
    bool want_results;      ///< Re-simulate recordings for the game's result.
    result_job *jobs;       ///< Result threads started, their results not handled.
    result_job *queued;     ///< Re-simulations waiting for a thread (oldest first).
    uint32_t jobs_active;   ///< Result threads running (at most app->workers).
    uint32_t jobs_running;  ///< Results not handled yet (running or queued).
    ls_replay_recorder *rec[MAX_SESSIONS];
    ls_replay_signer *signer[MAX_SESSIONS]; ///< One per recording (each hashes its own file).
    uint8_t sign_secret[LS_REPLAY_SECRET_KEY_SIZE];
    bool signing;
    char *scene_text;
    size_t scene_size;
    uint32_t scene_tick_rate; ///< The embedded scene's tick rate (the recordings' header copy).
    uint64_t done_since;
    int status;
    FILE *log;         ///< The line log: stdout, or stderr with --json.
    log_sink sink;     ///< The line log as text or (--log-json) JSON lines.
    session_log *sess; ///< One per session id (cap of them), count created.
    uint32_t count, cap;
    int signal;              ///< SIGINT/SIGTERM that stopped the relay (0: none).
    relay_api *api;          ///< The control API (--api), or NULL.
    bool draining;           ///< SIGTERM with --drain-seconds: no new sessions.
    uint64_t drain_deadline; ///< Stop at this time even if matches still run.
    agones *agones;          ///< The Agones SDK gateway (AGONES_SDK_HTTP_PORT), or NULL.
};

static const char *const value_options[] = {"--bind",
                                            "--scene",
                                            "--record",
                                            "--seed",
                                            "--rate-limit",
                                            "--credentials",
                                            "--sign-key",
                                            "--sessions",
                                            "--slots",
                                            "--tick-rate",
                                            "--input-size",
                                            "--delay",
                                            "--ticks",
                                            "--timeout",
                                            "--join-timeout",
                                            "--loss",
                                            "--dup",
                                            "--reorder",
                                            "--corrupt",
                                            "--delay-ms",
                                            "--jitter",
                                            "--fault-seed",
                                            "--spectators",
                                            "--history",
                                            "--rejoin-ms",
                                            "--api",
                                            "--api-token-file",
                                            "--api-sessions",
                                            "--drain-seconds",
                                            "--workers",
                                            "--ws",
                                            "--ws-origin",
                                            "--ws-cert",
                                            "--ws-key",
                                            "--ws-max-connections",
                                            "--ws-send-queue"};

static bool takes_value(const char *a)
{
    return cli_is_one_of(a, value_options, sizeof value_options / sizeof value_options[0]);
}

// HOST:PORT with an IPv4 HOST and PORT 0..65535 (0: any free port).
static bool parse_bind(const char *opt, const char *text, char *host, size_t host_size,
                       uint16_t *port)
{
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text) {
        cli_usage_error(&cmd_relay_def, "%s wants HOST:PORT (e.g. 127.0.0.1:7777), got '%s'", opt,
                        text);
        return false;
    }
    char *end;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (!colon[1] || colon[1] == '-' || colon[1] == '+' || *end != '\0' || p > 65535) {
        cli_usage_error(&cmd_relay_def,
                        "%s %s: the port must be 0..65535 (0: any free port), "
                        "got '%s'",
                        opt, text, colon + 1);
        return false;
    }
    size_t n = (size_t)(colon - text);
    char probe[96];
    ls_net_addr addr;
    snprintf(probe, sizeof probe, "%.*s:1", (int)(n < 64 ? n : 64), text);
    if (n >= host_size || !ls_uv_parse_addr(probe, &addr)) {
        cli_usage_error(&cmd_relay_def, "%s %s: '%.*s' is not an IPv4 address", opt, text,
                        (int)(n < 64 ? n : 64), text);
        return false;
    }
    memcpy(host, text, n);
    host[n] = '\0';
    *port = (uint16_t)p;
    return true;
}

static bool parse(int argc, char **argv, relay_opts *o)
{
    memset(o, 0, sizeof *o);
    o->bind = "127.0.0.1:0";
    o->sessions = 1;
    o->sd = ls_default_session_def();
    o->sd.spectators = 0; // none unless asked for
    o->sd.state_max = 0;  // it simulates nothing, so it has no snapshot for late spectators
    o->sd.rejoin_ms = 0;  // unless --rejoin-ms (players then upload the rejoiner's snapshot)
    o->fault.seed = 1;
    o->api_sessions = 256;
    o->ws_max_connections = 256;
    o->ws_send_queue = 65536;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->workers = cores < 1 ? 1 : cores > MAX_WORKERS ? MAX_WORKERS : (uint64_t)cores;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t n = 0;
        bool ok = true;
        if (net_cli_fault_option("relay", argc, argv, &i, &o->fault, &ok)) {
        } else if (strcmp(a, "--exit-when-done") == 0) {
            o->exit_when_done = true;
        } else if (strcmp(a, "--log-json") == 0) {
            o->log_json = true;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (!v || !takes_value(a)) {
            if (takes_value(a)) {
                cli_usage_error(&cmd_relay_def, "%s needs a value", a);
            } else {
                cli_unexpected(&cmd_relay_def, a);
            }
            return false;
        } else if (strcmp(a, "--bind") == 0) {
            o->bind = v, i++;
        } else if (strcmp(a, "--scene") == 0) {
            o->scene = v, i++;
        } else if (strcmp(a, "--record") == 0) {
            o->record = v, i++;
        } else if (strcmp(a, "--sign-key") == 0) {
            o->sign_key = v, i++;
        } else if (strcmp(a, "--credentials") == 0) {
            o->credentials = v, i++;
        } else if (strcmp(a, "--seed") == 0) {
            ok = net_cli_u64("relay", a, v, 0, UINT64_MAX, &o->seed), i++;
        } else if (strcmp(a, "--rate-limit") == 0) {
            ok = net_cli_u64("relay", a, v, 1, 10000000, &o->rate_limit), i++;
        } else if (strcmp(a, "--sessions") == 0) {
            ok = net_cli_u64("relay", a, v, 0, MAX_SESSIONS, &o->sessions), i++;
            o->sessions_given = true;
        } else if (strcmp(a, "--api") == 0) {
            o->api = v, i++;
        } else if (strcmp(a, "--ws") == 0) {
            o->ws = v, i++;
        } else if (strcmp(a, "--ws-origin") == 0) {
            if (o->n_ws_origins == RELAY_WS_ORIGINS) {
                cli_usage_error(&cmd_relay_def, "--ws-origin: at most %d", RELAY_WS_ORIGINS);
                return false;
            }
            o->ws_origins[o->n_ws_origins++] = v, i++;
        } else if (strcmp(a, "--ws-cert") == 0) {
            o->ws_cert = v, i++;
        } else if (strcmp(a, "--ws-key") == 0) {
            o->ws_key = v, i++;
        } else if (strcmp(a, "--ws-max-connections") == 0) {
            ok = net_cli_u64("relay", a, v, 1, 65535, &o->ws_max_connections), i++;
        } else if (strcmp(a, "--ws-send-queue") == 0) {
            ok = net_cli_u64("relay", a, v, 4096, 16777216, &o->ws_send_queue), i++;
        } else if (strcmp(a, "--workers") == 0) {
            ok = net_cli_u64("relay", a, v, 1, MAX_WORKERS, &o->workers), i++;
        } else if (strcmp(a, "--api-token-file") == 0) {
            o->api_token_file = v, i++;
        } else if (strcmp(a, "--api-sessions") == 0) {
            ok = net_cli_u64("relay", a, v, 1, MAX_SESSIONS, &o->api_sessions), i++;
        } else if (strcmp(a, "--drain-seconds") == 0) {
            ok = net_cli_u64("relay", a, v, 0, 86400, &o->drain_seconds), i++;
            o->drain_given = true;
        } else if (strcmp(a, "--slots") == 0) {
            ok = net_cli_u64("relay", a, v, 2, LS_NET_MAX_SLOTS, &n), i++;
            o->sd.slots = (uint32_t)n;
        } else if (strcmp(a, "--tick-rate") == 0) {
            ok = net_cli_u64("relay", a, v, 1, 1000, &n), i++;
            o->sd.tick_rate = (uint32_t)n;
        } else if (strcmp(a, "--input-size") == 0) {
            ok = net_cli_u64("relay", a, v, 1, LS_NET_MAX_INPUT_SIZE, &n), i++;
            o->sd.input_size = (uint32_t)n;
        } else if (strcmp(a, "--delay") == 0) {
            ok = net_cli_u64("relay", a, v, 0, LS_NET_MAX_DELAY, &n), i++;
            o->sd.delay = (uint32_t)n;
        } else if (strcmp(a, "--ticks") == 0) {
            ok = net_cli_u64("relay", a, v, 0, 100000000, &n), i++;
            o->sd.ticks = (uint32_t)n;
        } else if (strcmp(a, "--timeout") == 0) {
            ok = net_cli_u64("relay", a, v, 10, 3600000, &n), i++;
            o->sd.timeout_ms = (uint32_t)n;
        } else if (strcmp(a, "--spectators") == 0) {
            ok = net_cli_u64("relay", a, v, 0, LS_NET_MAX_SLOTS, &n), i++;
            o->sd.spectators = (uint32_t)n;
        } else if (strcmp(a, "--history") == 0) {
            ok = net_cli_u64("relay", a, v, 64, 65536, &n), i++;
            o->sd.history = (uint32_t)n;
        } else if (strcmp(a, "--rejoin-ms") == 0) {
            ok = net_cli_u64("relay", a, v, 0, 3600000, &n), i++;
            o->sd.rejoin_ms = (uint32_t)n;
            o->sd.state_max = n ? 4u << 20 : 0; // room for the uploaded snapshot
        } else {
            ok = net_cli_u64("relay", a, v, 0, 3600000, &n), i++; // --join-timeout
            o->sd.join_timeout_ms = (uint32_t)n;
        }
        if (!ok) {
            return false;
        }
    }
    if (o->sign_key && !o->record) {
        cli_usage_error(&cmd_relay_def, "--sign-key signs recordings: it needs --record PATH");
        return false;
    }
    if (!o->api && (o->api_token_file || o->api_sessions != 256)) {
        cli_usage_error(&cmd_relay_def, "--api-token-file and --api-sessions need --api HOST:PORT");
        return false;
    }
    if (o->api) {
        o->sessions = o->sessions_given ? o->sessions : 0;
        o->drain_seconds = o->drain_given ? o->drain_seconds : 300;
        if (o->sessions + o->api_sessions > MAX_SESSIONS) {
            cli_usage_error(&cmd_relay_def, "--sessions plus --api-sessions is at most %d",
                            MAX_SESSIONS);
            return false;
        }
    } else if (o->sessions == 0) {
        cli_usage_error(&cmd_relay_def,
                        "--sessions 0 makes no session: only with --api, which makes them");
        return false;
    }
    if (!o->ws && (o->n_ws_origins || o->ws_cert || o->ws_key || o->ws_max_connections != 256 ||
                   o->ws_send_queue != 65536)) {
        cli_usage_error(&cmd_relay_def, "--ws-origin, --ws-cert, --ws-key, --ws-max-connections "
                                        "and --ws-send-queue need --ws HOST:PORT");
        return false;
    }
    if (!o->ws_cert != !o->ws_key) {
        cli_usage_error(&cmd_relay_def, "wss:// needs both --ws-cert and --ws-key");
        return false;
    }
    if (!parse_bind("--bind", o->bind, o->host, sizeof o->host, &o->port) ||
        (o->api && !parse_bind("--api", o->api, o->api_host, sizeof o->api_host, &o->api_port)) ||
        (o->ws && !parse_bind("--ws", o->ws, o->ws_host, sizeof o->ws_host, &o->ws_port))) {
        return false;
    }
    if (o->ws_port && o->ws_port + o->workers - 1 > 65535) {
        cli_usage_error(&cmd_relay_def, "--workers %llu binds WebSocket ports %u..%llu: past 65535",
                        (unsigned long long)o->workers, o->ws_port,
                        (unsigned long long)(o->ws_port + o->workers - 1));
        return false;
    }
    if (o->port && o->port + o->workers - 1 > 65535) {
        cli_usage_error(&cmd_relay_def,
                        "--workers %llu binds ports %u..%llu: past 65535 (a lower --bind port, "
                        "or port 0)",
                        (unsigned long long)o->workers, o->port,
                        (unsigned long long)(o->port + o->workers - 1));
        return false;
    }
    return true;
}

// The relay's clock for the log's t_ms (0 before the transport exists).
static uint64_t log_now(const relay_app *app)
{
    return app->uv ? ls_uv_now_us(app->uv) : 0;
}

// ---- workers: who runs where ----

static bool on_main(const relay_app *app)
{
    return pthread_equal(pthread_self(), app->main_thread) != 0;
}

static relay_worker *owner_of(relay_app *app, uint32_t id)
{
    return &app->w[id >= 1 && id <= app->cap ? app->owner[id - 1] : 0];
}

static bool msg_push(msg_list *l, const main_msg *m)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        main_msg *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "lockstep relay: out of memory: a worker's event is lost\n");
            return false;
        }
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = *m;
    return true;
}

// Hand the main thread what one worker kept for it (its timer: off the datagram path).
static void flush_pending(relay_worker *w)
{
    relay_app *app = w->app;
    if (!w->pending.n) {
        return;
    }
    pthread_mutex_lock(&app->qmu);
    for (size_t i = 0; i < w->pending.n; i++) {
        msg_push(&app->q, &w->pending.v[i]);
    }
    pthread_mutex_unlock(&app->qmu);
    w->pending.n = 0;
    uv_async_send(&app->qwake);
}

// A message for the main thread from a thread that is not it (a result thread).
static void post_main(relay_app *app, const main_msg *m)
{
    pthread_mutex_lock(&app->qmu);
    msg_push(&app->q, m);
    pthread_mutex_unlock(&app->qmu);
    uv_async_send(&app->qwake);
}

// Stop (on) or restart the worker threads: while held, a worker is parked in its
// wake callback and the main thread may use its relay core and transport.
static void hold_all(relay_app *app, bool on)
{
    if (!app->threads_running || (on ? app->holds++ > 0 : --app->holds > 0)) {
        return;
    }
    for (uint32_t k = 1; k < app->workers; k++) {
        relay_worker *w = &app->w[k];
        pthread_mutex_lock(&w->mu);
        w->hold_req = on;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        if (on) {
            uv_async_send(&w->wake);
        }
    }
    for (uint32_t k = 1; on && k < app->workers; k++) {
        relay_worker *w = &app->w[k];
        pthread_mutex_lock(&w->mu);
        while (!w->held) {
            pthread_cond_wait(&w->cv, &w->mu);
        }
        pthread_mutex_unlock(&w->mu);
    }
}

static void pump(relay_worker *w);

// Workers 1..: the main thread wants the worker held, or stopped.
static void on_wake(uv_async_t *h)
{
    relay_worker *w = h->data;
    pthread_mutex_lock(&w->mu);
    if (w->hold_req) {
        w->held = true;
        pthread_cond_broadcast(&w->cv);
        while (w->hold_req) {
            pthread_cond_wait(&w->cv, &w->mu);
        }
        w->held = false;
    }
    bool stop = w->stop_req;
    pthread_mutex_unlock(&w->mu);
    pump(w); // what the main thread did meanwhile (a session made or ended)
    flush_pending(w);
    if (stop) {
        ls_uv_stop(w->uv);
    }
}

static void *worker_run(void *arg)
{
    relay_worker *w = arg;
    ls_uv_run(w->uv);
    flush_pending(w);
    return NULL;
}

// Workers 1..: whether every session of theirs is done and idle, for the main
// thread's --exit-when-done and drain (atomics: no lock).
static void publish_done(relay_worker *w)
{
    bool done = true, idle = true;
    uint32_t n = w->nids;
    for (uint32_t i = 0; i < n; i++) {
        done &= ls_relay_session_done(w->relay, w->ids[i]);
        idle &= ls_relay_session_idle(w->relay, w->ids[i]);
    }
    atomic_store(&w->all_done, done);
    atomic_store(&w->all_idle, idle);
    atomic_store(&w->seen, n);
}

// The worker for a new session: the one with the fewest sessions not done yet,
// ties to the lowest index (deterministic: session 1 on worker 0).
static relay_worker *least_loaded(relay_app *app)
{
    relay_worker *best = &app->w[0];
    for (uint32_t k = 1; k < app->workers; k++) {
        if (app->w[k].active < best->active) {
            best = &app->w[k];
        }
    }
    return best;
}

static void assign(relay_app *app, relay_worker *w, uint32_t id)
{
    app->owner[id - 1] = (uint8_t)w->index;
    w->ids[w->nids++] = id;
    w->active++;
}

static void format_addr(const relay_app *app, const relay_worker *w, char *buf, size_t size)
{
    snprintf(buf, size, "%s:%u", app->o.host, ls_uv_port(w->uv));
}

static void stats_add(ls_relay_stats *a, const ls_relay_stats *b)
{
    a->packets_in += b->packets_in, a->bytes_in += b->bytes_in;
    a->packets_out += b->packets_out, a->bytes_out += b->bytes_out;
    a->malformed += b->malformed, a->truncated += b->truncated;
    a->wrong_version += b->wrong_version, a->bad_mac += b->bad_mac;
    a->replayed += b->replayed, a->stale += b->stale, a->unverified += b->unverified;
    a->no_session += b->no_session, a->rate_limited += b->rate_limited;
    a->challenges += b->challenges, a->outbox_dropped += b->outbox_dropped;
    a->resends_deferred += b->resends_deferred;
    a->desyncs += b->desyncs, a->disputes += b->disputes;
    a->snapshots_refused += b->snapshots_refused;
    a->spectator_refused += b->spectator_refused;
    a->spectators_dropped += b->spectators_dropped;
    a->rejoins += b->rejoins, a->rejoin_refused += b->rejoin_refused;
}

// Relay-wide and transport counters summed over the workers (held, or stopped).
static void sum_stats(relay_app *app, ls_relay_stats *st, ls_uv_stats *us)
{
    memset(st, 0, sizeof *st);
    memset(us, 0, sizeof *us);
    for (uint32_t k = 0; k < app->workers; k++) {
        ls_relay_stats a = ls_relay_stats_get(app->w[k].relay);
        ls_uv_stats b = ls_uv_stats_get(app->w[k].uv);
        stats_add(st, &a);
        us->send_errors += b.send_errors;
        us->fault_dropped += b.fault_dropped;
        us->fault_corrupted += b.fault_corrupted;
    }
}

// The WebSocket counters summed over the workers (held, or stopped).
static relay_ws_stats sum_ws(const relay_app *app)
{
    relay_ws_stats t;
    memset(&t, 0, sizeof t);
    for (uint32_t k = 0; k < app->workers; k++) {
        relay_ws_stats s = relay_ws_stats_get(app->w[k].ws);
        relay_ws_stats_add(&t, &s);
    }
    return t;
}

static void print_stats(relay_app *app)
{
    hold_all(app, true);
    ls_relay_stats st;
    ls_uv_stats us;
    sum_stats(app, &st, &us);
    for (uint32_t id = 1; id <= app->count; id++) {
        for (uint32_t k = 0; k < app->sess[id - 1].sd.slots; k++) {
            ls_relay_peer_stats p = ls_relay_peer_stats_get(owner_of(app, id)->relay, id, k);
            char addr[64] = "-";
            if (p.joined) {
                ls_net_addr_format(&p.addr, addr, sizeof addr);
            }
            log_line(&app->sink, log_now(app),
                     "stats session=%u slot=%u addr=%s rtt_us=%u rtt_min_us=%u rtt_max_us=%u "
                     "packets_in=%llu bytes_in=%llu packets_out=%llu bytes_out=%llu drops=%llu "
                     "duplicates=%llu inputs=%u checksums=%u rejoins=%u rejoin_tick=%u "
                     "disconnect_tick=%u%s\n",
                     id, k, addr, p.rtt_us, p.rtt_min_us, p.rtt_max_us,
                     (unsigned long long)p.packets_in, (unsigned long long)p.bytes_in,
                     (unsigned long long)p.packets_out, (unsigned long long)p.bytes_out,
                     (unsigned long long)p.drops, (unsigned long long)p.duplicates, p.input_next,
                     p.checksum_next, p.rejoins, p.rejoin_tick, p.disconnect_tick,
                     p.disconnected ? " disconnected" : "");
        }
    }
    log_line(&app->sink, log_now(app),
             "stats relay packets_in=%llu bytes_in=%llu packets_out=%llu bytes_out=%llu "
             "malformed=%llu truncated=%llu wrong_version=%llu bad_mac=%llu replayed=%llu "
             "stale=%llu unverified=%llu no_session=%llu rate_limited=%llu "
             "challenges=%llu outbox_dropped=%llu send_errors=%llu fault_dropped=%llu "
             "fault_corrupted=%llu desyncs=%u disputes=%u snapshots_refused=%u "
             "spectator_refused=%llu spectators_dropped=%llu rejoins=%llu rejoin_refused=%llu\n",
             (unsigned long long)st.packets_in, (unsigned long long)st.bytes_in,
             (unsigned long long)st.packets_out, (unsigned long long)st.bytes_out,
             (unsigned long long)st.malformed, (unsigned long long)st.truncated,
             (unsigned long long)st.wrong_version, (unsigned long long)st.bad_mac,
             (unsigned long long)st.replayed, (unsigned long long)st.stale,
             (unsigned long long)st.unverified, (unsigned long long)st.no_session,
             (unsigned long long)st.rate_limited, (unsigned long long)st.challenges,
             (unsigned long long)st.outbox_dropped, (unsigned long long)us.send_errors,
             (unsigned long long)us.fault_dropped, (unsigned long long)us.fault_corrupted,
             st.desyncs, st.disputes, st.snapshots_refused,
             (unsigned long long)st.spectator_refused, (unsigned long long)st.spectators_dropped,
             (unsigned long long)st.rejoins, (unsigned long long)st.rejoin_refused);
    if (app->o.ws) {
        relay_ws_stats ws = sum_ws(app);
        log_line(&app->sink, log_now(app),
                 "stats ws accepted=%llu open=%llu frames_in=%llu bytes_in=%llu frames_out=%llu "
                 "bytes_out=%llu origin_refused=%llu full_refused=%llu text_closed=%llu "
                 "oversize_closed=%llu slow_closed=%llu send_dropped=%llu\n",
                 (unsigned long long)ws.accepted, (unsigned long long)ws.open,
                 (unsigned long long)ws.frames_in, (unsigned long long)ws.bytes_in,
                 (unsigned long long)ws.frames_out, (unsigned long long)ws.bytes_out,
                 (unsigned long long)ws.origin_refused, (unsigned long long)ws.full_refused,
                 (unsigned long long)ws.text_closed, (unsigned long long)ws.oversize_closed,
                 (unsigned long long)ws.slow_closed, (unsigned long long)ws.send_dropped);
    }
    fflush(app->log);
    hold_all(app, false);
}

static void relay_recorder_error(const relay_app *app, uint32_t session, const char *what,
                                 const ls_replay_recorder *rec)
{
    char path[4096 + 16], prefix[64];
    if (session == 1) {
        snprintf(path, sizeof path, "%s", app->o.record);
    } else {
        snprintf(path, sizeof path, "%s.%u", app->o.record, session);
    }
    snprintf(prefix, sizeof prefix, "lockstep relay: %s session %u", what, session);
    cli_print_error_at(prefix, path, ls_replay_recorder_error(rec));
}

static void on_rec_tick(void *user, uint32_t session, uint32_t tick, const uint8_t *inputs,
                        uint64_t checksum)
{
    relay_app *app = ((relay_worker *)user)->app;
    (void)tick;
    ls_replay_recorder *rec = app->rec[session - 1];
    if (rec && ls_replay_recorder_append(rec, inputs, checksum) != LS_OK) {
        relay_recorder_error(app, session, "recording", rec);
    }
}

// The players' claims at a tick whose checksums disagreed (SPEC.md §17.7): kept in
// the recording (§16.2 CLMS) so that `replay verify` names who was wrong.
static void on_rec_claims(void *user, uint32_t session, uint32_t tick, uint16_t reported,
                          const uint64_t *claims, bool disputed)
{
    relay_app *app = ((relay_worker *)user)->app;
    ls_replay_recorder *rec = app->rec[session - 1];
    if (rec && ls_replay_recorder_claims(rec, tick, reported, claims, disputed) != LS_OK) {
        relay_recorder_error(app, session, "recording", rec);
    }
}

static const char *recording_path(const relay_app *app, uint32_t id, char *buf, size_t size);

static void *result_run(void *arg)
{
    result_job *job = arg;
#ifdef __linux__
    // Below the workers: a re-simulation may wait, a datagram should not (on Linux
    // a nice value is the calling thread's; who = 0 names it).
    int nice_now = getpriority(PRIO_PROCESS, 0);
    setpriority(PRIO_PROCESS, 0, nice_now + 10 > 19 ? 19 : nice_now + 10);
#endif
    job->ok = relay_result_compute(job->path, &job->res, &job->app->stopping);
    main_msg m = {.kind = MSG_RESULT, .session = job->session, .job = job};
    post_main(job->app, &m);
    return NULL;
}

// Main thread: start queued re-simulations while fewer than one per worker run
// (so that they never take every core from the workers).
static void start_jobs(relay_app *app)
{
    while (app->queued && app->jobs_active < app->workers) {
        result_job *job = app->queued;
        app->queued = job->next;
        if (pthread_create(&job->thread, NULL, result_run, job) != 0) {
            fprintf(stderr, "lockstep relay: session %u: no thread to re-simulate its result\n",
                    job->session);
            app->jobs_running--;
            relay_api_match_result(app->api, job->session, NULL);
            free(job);
            continue;
        }
        job->started = true;
        job->next = app->jobs;
        app->jobs = job;
        app->jobs_active++;
    }
}

// Main thread: session's recording is finished (ok: without an error). With a game
// that keeps words, its result is re-simulated on a thread of its own.
static void recording_done(relay_app *app, uint32_t session, uint32_t ticks, bool ok)
{
    relay_api_recording_done(app->api, session, ticks, ok);
    char path[4096 + 16];
    log_line(&app->sink, log_now(app), "replay session=%u ticks=%u path=%s\n", session, ticks,
             recording_path(app, session, path, sizeof path));
    if (!app->want_results) {
        return;
    }
    result_job *job = ok && !atomic_load(&app->stopping) ? calloc(1, sizeof *job) : NULL;
    if (!job) {
        relay_api_match_result(app->api, session, NULL); // no result after all
        return;
    }
    job->app = app;
    job->session = session;
    recording_path(app, session, job->path, sizeof job->path);
    result_job **tail = &app->queued;
    while (*tail) {
        tail = &(*tail)->next;
    }
    *tail = job;
    app->jobs_running++;
    start_jobs(app);
}

// Main thread: a re-simulated result (job's thread has ended or is ending).
static void result_done(relay_app *app, result_job *job)
{
    if (!job->joined) {
        pthread_join(job->thread, NULL); // it posted this as its last act
    }
    for (result_job **p = &app->jobs; *p; p = &(*p)->next) {
        if (*p == job) {
            *p = job->next;
            break;
        }
    }
    app->jobs_running--;
    app->jobs_active--;
    start_jobs(app);
    uint32_t id = job->session;
    if (!job->ok) {
        if (!atomic_load(&app->stopping)) {
            fprintf(stderr, "lockstep relay: session %u: no result: %s\n", id, job->res.error);
        }
        relay_api_match_result(app->api, id, NULL);
        free(job);
        return;
    }
    session_log *l = &app->sess[id - 1];
    l->has_result = true;
    l->result = job->res;
    free(job);
    const relay_result *r = &l->result;
    char score[64] = "", mismatch[48] = "";
    if (r->score_count == 2) {
        snprintf(score, sizeof score, " score=%d-%d", (int)r->words[r->score_words[0]],
                 (int)r->words[r->score_words[1]]);
    }
    if (!r->verified) {
        snprintf(mismatch, sizeof mismatch, " mismatch_tick=%u", r->mismatch_tick);
    }
    log_line(&app->sink, log_now(app), "result session=%u game=%s ticks=%u%s verified=%s%s\n", id,
             r->game, r->ticks, score, r->verified ? "yes" : "no", mismatch);
    fflush(app->log);
    relay_api_match_result(app->api, id, r);
}

static void finish_recording(relay_worker *w, uint32_t session)
{
    relay_app *app = w->app;
    ls_replay_recorder *rec = app->rec[session - 1];
    if (!rec) {
        return;
    }
    bool ok = ls_replay_recorder_finish(rec) == LS_OK;
    if (!ok) {
        relay_recorder_error(app, session, "finishing", rec);
    }
    uint32_t ticks = ls_replay_recorder_ticks(rec);
    app->sess[session - 1].recorded = true;
    app->sess[session - 1].replay_ticks = ticks;
    ls_replay_recorder_destroy(rec);
    app->rec[session - 1] = NULL;
    ls_replay_signer_destroy(app->signer[session - 1]);
    app->signer[session - 1] = NULL;
    if (on_main(app)) {
        recording_done(app, session, ticks, ok);
    } else {
        main_msg m = {.kind = MSG_RECORDING, .session = session, .ticks = ticks, .ok = ok};
        msg_push(&w->pending, &m);
    }
}

static void on_rec_end(void *user, uint32_t session, uint32_t ticks)
{
    (void)ticks;
    finish_recording(user, session);
}

// Keep what the --json summary reports, and who may need a snapshot.
static void note_event(relay_app *app, const ls_relay_event *ev)
{
    session_log *l = &app->sess[ev->session - 1];
    uint32_t bit = ev->slot < 32 ? 1u << ev->slot : 0;
    net_event_rec e = {ev->slot, ev->tick, 0, ev->slots, ev->reason, ev->expected, ev->got};
    switch (ev->type) {
    case LS_RELAY_EV_DISCONNECTED:
        l->rejoined &= ~bit;
        if (app->o.json) {
            net_event_list_add(&l->disconnects, &e);
        }
        break;
    case LS_RELAY_EV_REJOINED:
        l->rejoined |= bit;
        if (app->o.json) {
            net_event_list_add(&l->rejoins, &e);
        }
        break;
    case LS_RELAY_EV_DESYNC:
        if (app->o.json) {
            net_event_list_add(&l->desyncs, &e);
        }
        break;
    case LS_RELAY_EV_DISPUTED:
        if (app->o.json) {
            net_event_list_add(&l->disputes, &e);
        }
        break;
    case LS_RELAY_EV_SNAPSHOT_REFUSED:
        if (app->o.json) {
            net_event_list_add(&l->refusals, &e);
        }
        break;
    case LS_RELAY_EV_SPECTATOR_JOINED:
        l->watching |= bit;
        break;
    case LS_RELAY_EV_SPECTATOR_DROPPED:
        l->watching &= ~bit;
        break;
    case LS_RELAY_EV_STATE_NEEDED:
        l->state_needed++;
        break;
    case LS_RELAY_EV_JOINED:
    case LS_RELAY_EV_SESSION_DONE:
        break;
    }
}

// LS_RELAY_EV_STATE_NEEDED names a spectator index or a rejoining player slot in
// the same field (ls/net_relay.h). A rejoiner needs the state after its REJOINED
// event and before it is disconnected again; a spectator between its JOINED and
// DROPPED events. When exactly one of them fits (the event stream, or the
// counters should an event have been lost) the line names it: "slot=N" or
// "spectator=N"; when both or neither fit, "slot_or_spectator=N".
static const char *state_needed_key(const relay_worker *w, const ls_relay_event *ev)
{
    const session_log *l = &w->app->sess[ev->session - 1];
    uint32_t bit = ev->slot < 32 ? 1u << ev->slot : 0;
    ls_relay_peer_stats p = ls_relay_peer_stats_get(w->relay, ev->session, ev->slot);
    ls_relay_peer_stats v = ls_relay_spectator_stats_get(w->relay, ev->session, ev->slot);
    bool player = ev->slot < l->sd.slots &&
                  ((l->rejoined & bit) || (p.rejoins && p.joined && !p.disconnected));
    bool spectator =
        ev->slot < l->sd.spectators && ((l->watching & bit) || (v.joined && !v.disconnected));
    return player == spectator ? "slot_or_spectator" : player ? "slot" : "spectator";
}

// Main thread: log, count and publish one event (key: how a STATE_NEEDED line names
// its slot, worked out by the session's worker).
static void publish_event(relay_app *app, const ls_relay_event *ev, const char *key)
{
    session_log *l = &app->sess[ev->session - 1];
    if (ev->type == LS_RELAY_EV_SESSION_DONE && !l->done_seen) {
        l->done_seen = true;
        owner_of(app, ev->session)->active--;
    }
    relay_api_relay_event(app->api, ev);
    switch (ev->type) {
    case LS_RELAY_EV_JOINED:
        log_line(&app->sink, log_now(app), "event joined session=%u slot=%u\n", ev->session,
                 ev->slot);
        agones_session_started(app->agones, ev->session);
        break;
    case LS_RELAY_EV_DISCONNECTED:
        log_line(&app->sink, log_now(app),
                 "event disconnected session=%u slot=%u tick=%u reason=%s\n", ev->session, ev->slot,
                 ev->tick,
                 ev->reason == LS_NET_LEFT      ? "left"
                 : ev->reason == LS_NET_TIMEOUT ? "timeout"
                                                : "kicked");
        break;
    case LS_RELAY_EV_DESYNC:
        log_line(&app->sink, log_now(app),
                 "event desync session=%u tick=%u slots=0x%04x expected=%016llx got=%016llx\n",
                 ev->session, ev->tick, ev->slots, (unsigned long long)ev->expected,
                 (unsigned long long)ev->got);
        break;
    case LS_RELAY_EV_DISPUTED:
        log_line(&app->sink, log_now(app), "event disputed session=%u tick=%u slots=0x%04x\n",
                 ev->session, ev->tick, ev->slots);
        break;
    case LS_RELAY_EV_SNAPSHOT_REFUSED:
        log_line(&app->sink, log_now(app),
                 "event snapshot_refused session=%u tick=%u source=%s%u refused_by=0x%04x "
                 "agreed=%016llx got=%016llx\n",
                 ev->session, ev->tick, ev->slot == LS_NET_SOURCE_HOST ? "host" : "slot",
                 ev->slot == LS_NET_SOURCE_HOST ? 0u : ev->slot, ev->slots,
                 (unsigned long long)ev->expected, (unsigned long long)ev->got);
        break;
    case LS_RELAY_EV_SESSION_DONE:
        log_line(&app->sink, log_now(app), "event session_done session=%u ticks=%u\n", ev->session,
                 ev->tick);
        break;
    case LS_RELAY_EV_SPECTATOR_JOINED:
        log_line(&app->sink, log_now(app),
                 "event spectator_joined session=%u spectator=%u tick=%u\n", ev->session, ev->slot,
                 ev->tick);
        break;
    case LS_RELAY_EV_SPECTATOR_DROPPED:
        log_line(&app->sink, log_now(app),
                 "event spectator_dropped session=%u spectator=%u tick=%u reason=%s\n", ev->session,
                 ev->slot, ev->tick,
                 ev->reason == LS_NET_LEFT      ? "left"
                 : ev->reason == LS_NET_TIMEOUT ? "timeout"
                                                : "behind");
        break;
    case LS_RELAY_EV_STATE_NEEDED: // the CLI relay simulates nothing: it has no snapshot
        log_line(&app->sink, log_now(app), "event state_needed session=%u %s=%u tick=%u\n",
                 ev->session, key, ev->slot, ev->tick);
        break;
    case LS_RELAY_EV_REJOINED:
        log_line(&app->sink, log_now(app), "event rejoined session=%u slot=%u tick=%u\n",
                 ev->session, ev->slot, ev->tick);
        break;
    }
    fflush(app->log);
}

// On the session's worker: what it keeps of the event; then the main thread logs
// and publishes it (at once on the main thread, else at the worker's next timer).
static void log_event(relay_worker *w, const ls_relay_event *ev)
{
    relay_app *app = w->app;
    if (ev->session < 1 || ev->session > app->count) {
        return; // not one of ours (the relay numbers them 1..sessions)
    }
    note_event(app, ev);
    const char *key = ev->type == LS_RELAY_EV_STATE_NEEDED ? state_needed_key(w, ev) : NULL;
    if (on_main(app)) {
        publish_event(app, ev, key);
    } else {
        main_msg m = {.kind = MSG_EVENT, .ev = *ev, .key = key};
        msg_push(&w->pending, &m);
    }
}

static void handle_queue(relay_app *app);
static void handle_msg(relay_app *app, const main_msg *m);

static void pump(relay_worker *w)
{
    if (w->index > 0 && on_main(w->app)) {
        // The main thread pumps a held worker: what the worker kept or handed over
        // comes first, so the events stay in order.
        handle_queue(w->app);
        for (size_t i = 0; i < w->pending.n; i++) {
            handle_msg(w->app, &w->pending.v[i]);
        }
        w->pending.n = 0;
    }
    ls_net_datagram d;
    while (ls_relay_next_datagram(w->relay, &d)) {
        if (relay_ws_addr_is(&d.to)) { // a WebSocket connection's synthetic address
            relay_ws_send(w->ws, &d.to, d.data, d.len);
        } else {
            ls_uv_send(w->uv, &d.to, d.data, d.len);
        }
    }
    ls_relay_event ev;
    while (ls_relay_next_event(w->relay, &ev)) {
        log_event(w, &ev);
    }
}

static void pump_all(relay_app *app)
{
    for (uint32_t k = 0; k < app->workers; k++) {
        pump(&app->w[k]);
    }
}

// Main thread: what the workers and result threads handed over.
static void handle_queue(relay_app *app)
{
    pthread_mutex_lock(&app->qmu);
    msg_list l = app->q;
    memset(&app->q, 0, sizeof app->q);
    pthread_mutex_unlock(&app->qmu);
    for (size_t i = 0; i < l.n; i++) {
        handle_msg(app, &l.v[i]);
    }
    free(l.v);
}

static void handle_msg(relay_app *app, const main_msg *m)
{
    if (m->kind == MSG_EVENT) {
        publish_event(app, &m->ev, m->key);
    } else if (m->kind == MSG_RECORDING) {
        recording_done(app, m->session, m->ticks, m->ok);
    } else {
        result_done(app, m->job);
    }
}

static void on_queue(uv_async_t *h)
{
    handle_queue(h->data);
}

// One datagram for the core, from UDP or a WebSocket connection.
static void relay_datagram(relay_worker *w, const ls_net_addr *from, const uint8_t *data,
                           size_t len, uint64_t now)
{
    relay_app *app = w->app;
    struct timespec t0, t1;
    if (app->api) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
    }
    ls_relay_receive(w->relay, from, data, len, now);
    pump(w);
    if (app->api) { // the latency the relay adds, for GET /metrics
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
        uint64_t u = ns > 0 ? (uint64_t)ns : 0;
        if (w->index == 0) {
            relay_api_observe_ns(app->api, u);
        } else { // its own histogram: no lock
            w->latency[relay_api_latency_bucket(u)]++;
            w->latency_count++;
            w->latency_sum_ns += u;
        }
    }
}

static void on_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                    uint64_t now)
{
    if (relay_ws_addr_is(from)) {
        return; // reserved for WebSocket connections: never a source on the IPv4 socket
    }
    relay_datagram(user, from, data, len, now);
}

// A datagram from a WebSocket connection: the same path as a UDP one.
static void on_ws_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len)
{
    relay_worker *w = user;
    relay_datagram(w, from, data, len, ls_uv_now_us(w->uv));
}

// Whether every session is done (and every peer gone: idle), over all workers.
static void all_done(relay_app *app, bool *done, bool *idle)
{
    *done = true, *idle = true;
    relay_worker *w0 = &app->w[0];
    for (uint32_t i = 0; i < w0->nids; i++) {
        *done &= ls_relay_session_done(w0->relay, w0->ids[i]);
        *idle &= ls_relay_session_idle(w0->relay, w0->ids[i]);
    }
    for (uint32_t k = 1; k < app->workers; k++) {
        relay_worker *w = &app->w[k];
        bool current = atomic_load(&w->seen) == w->nids;
        *done &= current && atomic_load(&w->all_done);
        *idle &= current && atomic_load(&w->all_idle);
    }
    // What the workers handed over before those flags (finished recordings start
    // result threads), then the results to wait for.
    handle_queue(app);
    *done &= app->jobs_running == 0;
}

static void on_timer(void *user, uint64_t now)
{
    relay_worker *w = user;
    relay_app *app = w->app;
    ls_relay_poll(w->relay, now);
    pump(w);
    if (w->index > 0) { // a worker thread
        flush_pending(w);
        if (atomic_load(&app->watch_done)) {
            publish_done(w);
        }
        return;
    }
    agones_poll(app->agones);
    if (app->draining && now >= app->drain_deadline) {
        log_line(&app->sink, log_now(app), "drain: --drain-seconds %llu are over: finishing\n",
                 (unsigned long long)app->o.drain_seconds);
        fflush(app->log);
        ls_uv_stop(app->uv);
        return;
    }
    // With --api, --exit-when-done waits for a first session.
    if ((!app->o.exit_when_done && !app->draining) || (app->count == 0 && !app->draining)) {
        return;
    }
    bool done, idle;
    all_done(app, &done, &idle);
    if (!done) {
        return;
    }
    if (!app->done_since) {
        app->done_since = now;
    }
    // Linger until the peers said goodbye (they may still need our last inputs),
    // but not forever: a peer that vanished is not waited for.
    if (idle || now - app->done_since > 3000000u) {
        ls_uv_stop(app->uv);
    }
}

// SIGTERM with --drain-seconds (the default with --api): what an orchestrator sends
// before it replaces the relay. Why not stop at once: the matches in progress would
// end for their players with a network error and their recordings would stop
// mid-match. Instead: no new sessions (/readyz and POST /v1/sessions answer 503, so a
// matchmaker sends players elsewhere), sessions nobody joined yet are ended (there is
// no match to finish, and their players would otherwise hold the drain until their
// join timeout), the running matches play to their end, and the relay exits 0 once they
// are done and their peers gone (as --exit-when-done), or when the time is up. SIGINT,
// or a second SIGTERM, stops at once (recordings still finished and signed).
static void start_drain(relay_app *app)
{
    uint64_t now = ls_uv_now_us(app->uv);
    app->draining = true;
    app->signal = SIGTERM; // what --json reports as stopped_by
    app->done_since = 0;
    app->drain_deadline = now + app->o.drain_seconds * 1000000u;
    relay_api_set_draining(app->api, true);
    atomic_store(&app->watch_done, true);
    hold_all(app, true);
    uint32_t running = 0;
    for (uint32_t id = 1; id <= app->count; id++) {
        ls_relay *r = owner_of(app, id)->relay;
        bool joined = false;
        for (uint32_t k = 0; k < app->sess[id - 1].sd.slots; k++) {
            ls_relay_peer_stats p = ls_relay_peer_stats_get(r, id, k);
            joined |= p.joined || p.disconnected;
        }
        if (!joined) {
            ls_relay_session_end(r, id, now);
        }
        running += joined && !ls_relay_session_done(r, id);
    }
    log_line(&app->sink, log_now(app),
             "signal SIGTERM: draining (no new sessions; %u running, up to %llu s; SIGINT or "
             "SIGTERM again stops now)\n",
             running, (unsigned long long)app->o.drain_seconds);
    fflush(app->log);
    pump_all(app);
    hold_all(app, false);
}

static void on_signal(void *user, int signum)
{
    relay_app *app = ((relay_worker *)user)->app;
    if (signum == SIGUSR1) {
        print_stats(app);
        return;
    }
    if (signum == SIGTERM && app->o.drain_seconds && !app->draining) {
        start_drain(app);
        return;
    }
    log_line(&app->sink, log_now(app), "signal %s: finishing\n",
             signum == SIGINT ? "SIGINT" : "SIGTERM");
    fflush(app->log);
    app->signal = signum;
    ls_uv_stop(app->uv);
}

static bool start_recording(relay_app *app, relay_worker *w, uint32_t id)
{
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.tick_rate = app->scene_tick_rate;
    def.players = app->sess[id - 1].sd.slots;
    def.input_size = app->sess[id - 1].sd.input_size;
    def.keyframe_interval = 0; // the relay does not simulate: inputs and checksums only
    def.seed = app->sess[id - 1].seed;
    def.fingerprint = ls_game_fingerprint();
    def.scene = (const uint8_t *)app->scene_text;
    def.scene_size = app->scene_size;
    def.claims = true; // format version 2: the claims of ticks whose checksums disagree
    char path[4096];
    if (id == 1) {
        snprintf(path, sizeof path, "%s", app->o.record);
    } else {
        snprintf(path, sizeof path, "%s.%u", app->o.record, id);
    }
    ls_error err;
    if (app->signing) {
        app->signer[id - 1] = ls_replay_signer_create(app->sign_secret, &err);
        if (!app->signer[id - 1]) {
            cli_print_error("lockstep relay", &err);
            return false;
        }
        def.signer = app->signer[id - 1];
    }
    app->rec[id - 1] = ls_replay_recorder_create(path, &def, &err);
    if (!app->rec[id - 1]) {
        cli_print_error("lockstep relay", &err);
        ls_replay_signer_destroy(app->signer[id - 1]);
        app->signer[id - 1] = NULL;
        return false;
    }
    ls_relay_recorder hook = {w, on_rec_tick, on_rec_end, on_rec_claims};
    ls_relay_session_set_recorder(w->relay, id, &hook);
    return true;
}

// Hand out slot k's credential (spectator k's when spectator): a private file
// (--credentials DIR) or a stdout line.
static bool issue_credential(relay_app *app, uint32_t id, uint32_t k, bool spectator)
{
    ls_net_credential cred;
    ls_relay *relay = owner_of(app, id)->relay;
    if (spectator) {
        ls_relay_session_spectator_credential(relay, id, k, &cred);
    } else {
        ls_relay_session_credential(relay, id, k, &cred);
    }
    const char *kind = spectator ? "spectator" : "slot";
    const char *label = spectator ? "spectator-credential" : "credential";
    bool ok = true;
    if (app->o.credentials) {
        char path[4096 + 64];
        snprintf(path, sizeof path, "%s/session-%u-%s-%u.cred", app->o.credentials, id, kind, k);
        ls_error err;
        ok = ls_net_credential_write(path, &cred, &err) == LS_OK;
        if (ok) {
            log_line(&app->sink, log_now(app), "%s %u %u %s\n", label, id, k, path);
        } else {
            cli_print_error("lockstep relay: --credentials", &err);
        }
    } else {
        char text[LS_NET_CREDENTIAL_TEXT_SIZE];
        ls_net_credential_format(&cred, text, sizeof text);
        log_line(&app->sink, log_now(app), "%s %u %u %s", label, id, k, text);
        sodium_memzero(text, sizeof text);
    }
    ls_net_credential_wipe(&cred);
    return ok;
}

// --credentials DIR, before anything is bound or printed: an existing, writable
// directory that holds none of the files the relay is about to write. One line
// naming DIR (and the file) when it is not.
static bool check_credentials_dir(const relay_app *app)
{
    const char *dir = app->o.credentials;
    struct stat st;
    const char *why = NULL;
    if (stat(dir, &st) != 0) {
        why = strerror(errno);
    } else if (!S_ISDIR(st.st_mode)) {
        why = "not a directory";
    } else if (access(dir, W_OK | X_OK) != 0) {
        why = errno == EACCES ? "not writable (Permission denied)" : strerror(errno);
    }
    if (why) {
        fprintf(stderr,
                "lockstep relay: --credentials %s: %s (it must be an existing directory you can "
                "write to)\n",
                dir, why);
        return false;
    }
    for (uint32_t id = 1; id <= app->o.sessions; id++) {
        for (uint32_t k = 0; k < app->o.sd.slots + app->o.sd.spectators; k++) {
            bool spectator = k >= app->o.sd.slots;
            char path[4096 + 64];
            snprintf(path, sizeof path, "%s/session-%u-%s-%u.cred", dir, id,
                     spectator ? "spectator" : "slot", spectator ? k - app->o.sd.slots : k);
            if (lstat(path, &st) == 0) {
                fprintf(stderr,
                        "lockstep relay: --credentials %s: %s already exists (credentials are "
                        "never overwritten: remove the old ones or use another directory)\n",
                        dir, path);
                return false;
            }
        }
    }
    return true;
}

// The path session id records to (--record PATH: session 1 to PATH, N to PATH.N),
// NULL when the relay does not record.
static const char *recording_path(const relay_app *app, uint32_t id, char *buf, size_t size)
{
    if (!app->o.record) {
        return NULL;
    }
    if (id == 1) {
        snprintf(buf, size, "%s", app->o.record);
    } else {
        snprintf(buf, size, "%s.%u", app->o.record, id);
    }
    return buf;
}

// ---- the control API's hooks (--api; tools/relay_api.c does the HTTP) ----

// POST /v1/sessions, read and checked: a session as the command line makes one.
static bool api_create(void *user, const relay_api_session_req *req, uint32_t *id, int *status,
                       relay_api_error *err)
{
    relay_app *app = user;
    *status = 503;
    if (app->draining) {
        return relay_api_fail(err, "relay", "draining: the relay accepts no new sessions");
    }
    if (app->count >= app->cap) {
        return relay_api_fail(err, "relay",
                              "full: the relay made all its %u sessions (--api-sessions; ids are "
                              "never reused)",
                              app->cap);
    }
    // Held (every handler runs with the workers held): the session is made on its
    // worker's core from here.
    relay_worker *w = least_loaded(app);
    *id = app->count + 1;
    ls_result r = ls_relay_session_create_at(w->relay, &req->sd, ls_uv_now_us(app->uv), *id);
    if (r != LS_OK) {
        *status = r == LS_ERR_INVALID_ARGUMENT ? 400 : 503;
        return relay_api_fail(err, "body", "the relay refused the session: %s", ls_result_text(r));
    }
    app->count = *id;
    assign(app, w, *id);
    session_log *l = &app->sess[*id - 1];
    l->sd = req->sd;
    l->seed = req->seed;
    if (app->o.record && !start_recording(app, w, *id)) {
        ls_relay_session_end(w->relay, *id, ls_uv_now_us(app->uv));
        pump(w);
        *status = 500;
        return relay_api_fail(err, "recording", "cannot start the recording of session %u", *id);
    }
    char path[4096 + 16];
    relay_api_session_added(app->api, *id, &req->sd, req->seed,
                            recording_path(app, *id, path, sizeof path), true);
    if (app->want_results) {
        relay_api_expect_result(app->api, *id);
    }
    char where[128] = "";
    if (app->workers > 1) {
        snprintf(where, sizeof where, " worker=%u relay=", w->index);
        format_addr(app, w, where + strlen(where), sizeof where - strlen(where));
    }
    log_line(&app->sink, log_now(app),
             "session %u created by the api slots=%u spectators=%u ticks=%u%s\n", *id,
             req->sd.slots, req->sd.spectators, req->sd.ticks, where);
    fflush(app->log);
    return true;
}

static void api_pump(void *user)
{
    pump_all(user); // held: the main thread may pump every worker
}

static ls_relay *api_relay_of(void *user, uint32_t id)
{
    return owner_of(user, id)->relay;
}

static void api_relay_addr(void *user, uint32_t id, char *buf, size_t size)
{
    relay_app *app = user;
    format_addr(app, owner_of(app, id), buf, size);
}

static void api_hold(void *user, bool on)
{
    hold_all(user, on);
}

static void api_counters(void *user, ls_relay_stats *st, relay_api_totals *tot)
{
    relay_app *app = user;
    ls_uv_stats us;
    sum_stats(app, st, &us);
    for (uint32_t k = 1; k < app->workers; k++) {
        const relay_worker *w = &app->w[k];
        for (uint32_t b = 0; b <= RELAY_API_LATENCY_BUCKETS; b++) {
            tot->latency[b] += w->latency[b];
        }
        tot->latency_count += w->latency_count;
        tot->latency_sum_ns += w->latency_sum_ns;
    }
    tot->ws = app->o.ws != NULL;
    tot->ws_stats = sum_ws(app);
}

static uint64_t api_now(void *user)
{
    relay_app *app = user;
    return ls_uv_now_us(app->uv);
}

// The operator's token: the first line of --api-token-file, else $LOCKSTEP_API_TOKEN;
// never a command-line value (other users see a process's arguments in ps).
static bool read_token(const relay_app *app, char *token, size_t size)
{
    const char *from = app->o.api_token_file;
    if (from) {
        FILE *f = fopen(from, "r");
        if (!f) {
            fprintf(stderr, "lockstep relay: --api-token-file %s: %s\n", from, strerror(errno));
            return false;
        }
        if (!fgets(token, (int)size, f)) {
            token[0] = '\0';
        }
        fclose(f);
    } else if (getenv("LOCKSTEP_API_TOKEN")) {
        snprintf(token, size, "%s", getenv("LOCKSTEP_API_TOKEN"));
        from = "LOCKSTEP_API_TOKEN";
    } else {
        fprintf(stderr, "lockstep relay: --api needs the operator's token: --api-token-file FILE "
                        "or the environment variable LOCKSTEP_API_TOKEN\n");
        return false;
    }
    size_t n = strcspn(token, "\r\n");
    token[n] = '\0';
    bool ok = n >= 16 && n <= 256;
    for (size_t i = 0; ok && i < n; i++) {
        ok = token[i] > 0x20 && token[i] < 0x7f;
    }
    if (!ok) {
        fprintf(stderr,
                "lockstep relay: %s: the token must be 16..256 printable characters without "
                "spaces (e.g. `head -c 24 /dev/urandom | base64`)\n",
                from);
    }
    return ok;
}

static bool start_api(relay_app *app)
{
    char token[300], msg[256];
    if (!read_token(app, token, sizeof token)) {
        sodium_memzero(token, sizeof token);
        return false;
    }
    relay_api_def d;
    memset(&d, 0, sizeof d);
    d.host = app->o.api_host;
    d.port = app->o.api_port;
    d.token = token;
    d.loop = ls_uv_loop(app->uv);
    d.max_sessions = app->cap;
    d.defaults = app->o.sd;
    d.default_seed = app->o.seed;
    d.has_scene = app->scene_text != NULL;
    d.scene_hash = app->scene_text ? ls_hash64(app->scene_text, app->scene_size) : 0;
    d.signing = app->signing;
    d.host_fns = (relay_api_host){app,          api_relay_of, api_relay_addr, api_hold,
                                  api_counters, api_create,   api_pump,       api_now};
    app->api = relay_api_create(&d, msg, sizeof msg);
    sodium_memzero(token, sizeof token);
    if (!app->api) {
        fprintf(stderr, "lockstep relay: --api %s: %s\n", app->o.api, msg);
        return false;
    }
    relay_metrics_register(app->api);
    log_line(&app->sink, log_now(app), "api %s:%u\n", app->o.api_host, relay_api_port(app->api));
    return true;
}

// Worker w's WebSocket listener (--ws's port + its index, or any free port), on
// its loop: each worker takes its own sessions' WebSocket players, as on UDP.
static bool start_ws(relay_app *app, relay_worker *w)
{
    char msg[256];
    relay_ws_def d;
    memset(&d, 0, sizeof d);
    d.host = app->o.ws_host;
    d.port = (uint16_t)(app->o.ws_port ? app->o.ws_port + w->index : 0);
    d.loop = ls_uv_loop(w->uv);
    d.worker = (uint8_t)w->index;
    d.origins = app->o.ws_origins;
    d.n_origins = app->o.n_ws_origins;
    d.cert = app->o.ws_cert;
    d.key = app->o.ws_key;
    d.max_connections = (uint32_t)app->o.ws_max_connections;
    d.send_queue = (uint32_t)app->o.ws_send_queue;
    d.user = w;
    d.on_recv = on_ws_recv;
    w->ws = relay_ws_create(&d, msg, sizeof msg);
    if (!w->ws) {
        fprintf(stderr, "lockstep relay: --ws %s, worker %u: %s\n", app->o.ws, w->index, msg);
        return false;
    }
    return true;
}

// Worker k: its relay core and its socket (--bind's port + k, or any free port),
// on the main loop (k = 0: with the signals) or a loop of its own (its thread
// starts later, in start_threads).
static bool start_worker(relay_app *app, uint32_t k, const ls_relay_def *rd)
{
    char msg[256];
    relay_worker *w = &app->w[k];
    w->app = app;
    w->index = k;
    w->ids = calloc(app->cap ? app->cap : 1, sizeof *w->ids);
    ls_error err;
    w->relay = w->ids ? ls_relay_create(rd, &err) : NULL;
    if (!w->relay) {
        if (!w->ids) {
            ls_error_set(&err, LS_ERR_NO_MEMORY, "out of memory");
        }
        cli_print_error("lockstep relay", &err);
        return false;
    }
    ls_uv_def ud = ls_default_uv_def();
    ud.bind_host = app->o.host;
    ud.bind_port = (uint16_t)(app->o.port ? app->o.port + k : 0);
    ud.fault = app->o.fault;
    ud.fault.seed = app->o.fault.seed + k; // each worker's impairment its own stream
    ud.signals = k == 0;
    ud.user = w;
    ud.on_recv = on_recv;
    ud.on_timer = on_timer;
    ud.on_signal = k == 0 ? on_signal : NULL;
    w->uv = ls_uv_create(&ud, msg, sizeof msg);
    if (k == 0) {
        app->uv = w->uv;
        app->sink.t0 = app->uv ? ls_uv_now_us(app->uv) : 0;
    }
    if (!w->uv) {
        if (k == 0) {
            fprintf(stderr, "lockstep relay: --bind %s: %s\n", app->o.bind, msg);
        } else {
            fprintf(stderr, "lockstep relay: --bind %s, worker %u (port %u): %s\n", app->o.bind, k,
                    ud.bind_port, msg);
        }
        return false;
    }
    if (app->o.ws && !start_ws(app, w)) {
        return false;
    }
    if (k == 0) {
        log_line(&app->sink, log_now(app), "listening %s:%u\n", app->o.host, ls_uv_port(w->uv));
        if (w->ws) {
            log_line(&app->sink, log_now(app), "%s %s:%u\n", relay_ws_tls(w->ws) ? "wss" : "ws",
                     app->o.ws_host, relay_ws_port(w->ws));
        }
        return true;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    uv_async_init(ls_uv_loop(w->uv), &w->wake, on_wake);
    w->wake.data = w;
    w->wake_init = true;
    atomic_store(&w->all_done, true);
    atomic_store(&w->all_idle, true);
    return true;
}

static bool start_threads(relay_app *app)
{
    app->threads_running = app->workers > 1;
    for (uint32_t k = 1; k < app->workers; k++) {
        relay_worker *w = &app->w[k];
        if (pthread_create(&w->thread, NULL, worker_run, w) != 0) {
            fprintf(stderr, "lockstep relay: cannot start worker %u's thread\n", k);
            return false;
        }
        w->thread_started = true;
    }
    return true;
}

// After the main loop: stop the worker threads (each finishes its loop), then the
// result threads (cancelled when the relay was stopped), and handle what they left.
static void stop_threads(relay_app *app)
{
    for (uint32_t k = 1; k < app->workers; k++) {
        relay_worker *w = &app->w[k];
        if (!w->thread_started) {
            continue;
        }
        pthread_mutex_lock(&w->mu);
        w->stop_req = true;
        pthread_mutex_unlock(&w->mu);
        uv_async_send(&w->wake);
        pthread_join(w->thread, NULL);
        w->thread_started = false;
    }
    app->threads_running = false;
    atomic_store(&app->stopping, true); // --exit-when-done and drains waited for them
    while (app->queued) {               // never started: no result
        result_job *j = app->queued;
        app->queued = j->next;
        app->jobs_running--;
        relay_api_match_result(app->api, j->session, NULL);
        free(j);
    }
    for (result_job *j = app->jobs; j; j = j->next) {
        pthread_join(j->thread, NULL); // cancelled: they stop within 256 ticks
        j->joined = true;
    }
    handle_queue(app); // their results (result_done frees them)
}

static bool setup(relay_app *app)
{
    if (app->o.credentials && !check_credentials_dir(app)) {
        return false;
    }
    if (app->o.record) {
        const char *scene =
            app->o.scene
                ? cli_find_scene(app->o.scene, app->o.scene_buf, sizeof app->o.scene_buf)
                : cli_default_scene(&cmd_relay_def, app->o.scene_buf, sizeof app->o.scene_buf);
        if (!scene || !(app->scene_text = net_read_file("relay", scene, &app->scene_size))) {
            return false;
        }
        // A replay's header repeats its scene's tick rate (SPEC.md §16.1), whatever
        // rate the relay paces the match at (--tick-rate).
        ls_scene parsed;
        ls_error err;
        if (cli_scene_parse_portable(scene, &app->scene_text, &app->scene_size, &parsed, &err) !=
            LS_OK) {
            ls_error_set_path(&err, scene);
            cli_print_error("lockstep relay", &err);
            return false;
        }
        app->scene_tick_rate = parsed.world.tick_rate;
        app->want_results = relay_result_wanted((int)parsed.game);
        ls_scene_free(&parsed);
        if (app->o.sign_key) {
            if (ls_replay_key_read(app->o.sign_key, app->sign_secret, sizeof app->sign_secret,
                                   &err) != LS_OK) {
                cli_print_error("lockstep relay", &err);
                return false;
            }
            app->signing = true;
            char name[32];
            uint8_t pk[LS_REPLAY_PUBLIC_KEY_SIZE];
            ls_replay_key_public(app->sign_secret, pk);
            ls_replay_key_fingerprint(pk, name);
            log_line(&app->sink, log_now(app), "signing recordings with %s\n", name);
        }
    }
    ls_relay_def rd = ls_default_relay_def();
    rd.max_sessions = app->cap;
    // A peer sends about 4 datagrams per tick (input, checksum, ack, ping): leave room.
    uint64_t rate = app->o.rate_limit ? app->o.rate_limit : 16u * app->o.sd.tick_rate;
    rd.rate_limit_pps =
        (uint32_t)(rate > rd.rate_limit_pps || app->o.rate_limit ? rate : rd.rate_limit_pps);
    rd.rate_burst = rd.rate_limit_pps / 5 > rd.rate_burst ? rd.rate_limit_pps / 5 : rd.rate_burst;
    for (uint32_t k = 0; k < app->workers; k++) {
        if (!start_worker(app, k, &rd)) {
            return false;
        }
    }
    uv_async_init(ls_uv_loop(app->uv), &app->qwake, on_queue);
    app->qwake.data = app;
    app->qwake_init = true;
    for (uint32_t k = 1; k < app->workers; k++) {
        log_line(&app->sink, log_now(app), "worker %u listening %s:%u\n", k, app->o.host,
                 ls_uv_port(app->w[k].uv));
        if (app->w[k].ws) {
            log_line(&app->sink, log_now(app), "worker %u %s %s:%u\n", k,
                     relay_ws_tls(app->w[k].ws) ? "wss" : "ws", app->o.ws_host,
                     relay_ws_port(app->w[k].ws));
        }
    }
    uint64_t now = ls_uv_now_us(app->uv);
    if (app->o.api && !start_api(app)) {
        return false;
    }
    for (uint32_t s = 0; s < app->o.sessions; s++) {
        uint32_t id = app->count + 1;
        relay_worker *w = least_loaded(app);
        ls_result r = ls_relay_session_create_at(w->relay, &app->o.sd, now, id);
        if (r != LS_OK) {
            fprintf(stderr, "lockstep relay: creating session %u: %s\n", s + 1, ls_result_text(r));
            return false;
        }
        app->count = id;
        assign(app, w, id);
        app->sess[id - 1].sd = app->o.sd;
        app->sess[id - 1].seed = app->o.seed;
        if (app->o.record && !start_recording(app, w, id)) {
            return false;
        }
        if (app->workers > 1) { // where its players go (worker 0's port is not theirs)
            char addr[96];
            format_addr(app, w, addr, sizeof addr);
            if (w->ws) {
                log_line(&app->sink, log_now(app), "session %u relay %s worker %u ws %s:%u\n", id,
                         addr, w->index, app->o.ws_host, relay_ws_port(w->ws));
            } else {
                log_line(&app->sink, log_now(app), "session %u relay %s worker %u\n", id, addr,
                         w->index);
            }
        }
        for (uint32_t k = 0; k < app->o.sd.slots; k++) {
            if (!issue_credential(app, id, k, false)) {
                return false;
            }
        }
        for (uint32_t k = 0; k < app->o.sd.spectators; k++) {
            if (!issue_credential(app, id, k, true)) {
                return false;
            }
        }
        char path[4096 + 16];
        relay_api_session_added(app->api, id, &app->o.sd, app->o.seed,
                                recording_path(app, id, path, sizeof path), false);
        if (app->want_results) {
            relay_api_expect_result(app->api, id);
        }
    }
    log_line(&app->sink, log_now(app), "ready\n");
    fflush(app->log);
    return true;
}

static void json_events(json_out *j, const char *key, const net_event_list *l,
                        ls_relay_event_type t)
{
    json_key(j, key), json_array_begin(j);
    for (uint32_t i = 0; i < l->n; i++) {
        const net_event_rec *e = &l->v[i];
        json_object_begin(j);
        if (t == LS_RELAY_EV_SNAPSHOT_REFUSED) { // who supplied it (255: the host)
            json_key(j, "source"), json_u64(j, e->slot);
        } else if (t != LS_RELAY_EV_DESYNC && t != LS_RELAY_EV_DISPUTED) {
            json_key(j, "slot"), json_u64(j, e->slot);
        }
        json_key(j, "tick"), json_u64(j, e->tick);
        if (t == LS_RELAY_EV_DISCONNECTED) {
            json_key(j, "reason"), json_str(j, net_reason_name(e->reason));
        } else if (t == LS_RELAY_EV_DESYNC || t == LS_RELAY_EV_SNAPSHOT_REFUSED) {
            json_key(j, "slots_mask"), json_u64(j, e->slots);
            json_key(j, "expected"), json_hex64(j, e->expected);
            json_key(j, "got"), json_hex64(j, e->got);
        } else if (t == LS_RELAY_EV_DISPUTED) {
            json_key(j, "slots_mask"), json_u64(j, e->slots);
        }
        json_object_end(j);
    }
    json_array_end(j);
}

static void json_peer(json_out *j, const ls_relay_peer_stats *p)
{
    char addr[64];
    json_key(j, "joined"), json_bool(j, p->joined);
    json_key(j, "disconnected"), json_bool(j, p->disconnected);
    json_key(j, "addr");
    if (p->joined) {
        ls_net_addr_format(&p->addr, addr, sizeof addr);
        json_str(j, addr);
    } else {
        json_null(j);
    }
    json_key(j, "rtt_ms"), json_double(j, p->rtt_us / 1000.0, 3);
    json_key(j, "rtt_min_ms"), json_double(j, p->rtt_min_us / 1000.0, 3);
    json_key(j, "rtt_max_ms"), json_double(j, p->rtt_max_us / 1000.0, 3);
    json_key(j, "packets_in"), json_u64(j, p->packets_in);
    json_key(j, "bytes_in"), json_u64(j, p->bytes_in);
    json_key(j, "packets_out"), json_u64(j, p->packets_out);
    json_key(j, "bytes_out"), json_u64(j, p->bytes_out);
    json_key(j, "drops"), json_u64(j, p->drops);
    json_key(j, "duplicates"), json_u64(j, p->duplicates);
}

// The --json summary: one object on stdout.
static void json_game_result(json_out *j, const relay_result *r)
{
    json_object_begin(j);
    json_key(j, "game"), json_str(j, r->game);
    json_key(j, "ticks"), json_u64(j, r->ticks);
    json_key(j, "verified"), json_bool(j, r->verified);
    json_key(j, "mismatch_tick");
    r->verified ? json_null(j) : json_u64(j, r->mismatch_tick);
    json_key(j, "score"), json_array_begin(j);
    for (uint32_t i = 0; i < r->score_count; i++) {
        json_i64(j, r->words[r->score_words[i]]);
    }
    json_array_end(j);
    json_key(j, "words"), json_array_begin(j);
    for (uint32_t i = 0; i < LS_WORLD_GAME_WORDS; i++) {
        json_i64(j, r->words[i]);
    }
    json_array_end(j);
    json_object_end(j);
}

static void print_json(relay_app *app)
{
    ls_relay_stats st;
    ls_uv_stats us;
    sum_stats(app, &st, &us);
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j);
    char listen[96];
    format_addr(app, &app->w[0], listen, sizeof listen);
    json_key(&j, "listen"), json_str(&j, listen);
    json_key(&j, "stopped_by");
    app->signal ? json_str(&j, app->signal == SIGINT ? "SIGINT" : "SIGTERM") : json_null(&j);
    json_key(&j, "sessions"), json_array_begin(&j);
    for (uint32_t id = 1; id <= app->count; id++) {
        const session_log *l = &app->sess[id - 1];
        const relay_worker *w = owner_of(app, id);
        json_object_begin(&j);
        json_key(&j, "session"), json_u64(&j, id);
        json_key(&j, "ticks"), json_u64(&j, ls_relay_session_final_ticks(w->relay, id));
        json_key(&j, "done"), json_bool(&j, ls_relay_session_done(w->relay, id));
        json_key(&j, "desyncs"), json_u64(&j, l->desyncs.total);
        json_events(&j, "desync_events", &l->desyncs, LS_RELAY_EV_DESYNC);
        json_key(&j, "disputes"), json_u64(&j, l->disputes.total);
        json_events(&j, "dispute_events", &l->disputes, LS_RELAY_EV_DISPUTED);
        json_events(&j, "snapshots_refused", &l->refusals, LS_RELAY_EV_SNAPSHOT_REFUSED);
        json_events(&j, "disconnects", &l->disconnects, LS_RELAY_EV_DISCONNECTED);
        json_events(&j, "rejoins", &l->rejoins, LS_RELAY_EV_REJOINED);
        json_key(&j, "events_omitted");
        json_u64(&j, (l->desyncs.total - l->desyncs.n) + (l->disputes.total - l->disputes.n) +
                         (l->refusals.total - l->refusals.n) +
                         (l->disconnects.total - l->disconnects.n) +
                         (l->rejoins.total - l->rejoins.n));
        json_key(&j, "state_needed"), json_u64(&j, l->state_needed);
        json_key(&j, "peers"), json_array_begin(&j);
        for (uint32_t k = 0; k < l->sd.slots; k++) {
            ls_relay_peer_stats p = ls_relay_peer_stats_get(w->relay, id, k);
            json_object_begin(&j);
            json_key(&j, "slot"), json_u64(&j, k);
            json_peer(&j, &p);
            json_key(&j, "inputs"), json_u64(&j, p.input_next);
            json_key(&j, "checksums"), json_u64(&j, p.checksum_next);
            json_key(&j, "rejoins"), json_u64(&j, p.rejoins);
            json_key(&j, "rejoin_tick");
            p.rejoins ? json_u64(&j, p.rejoin_tick) : json_null(&j);
            json_key(&j, "disconnect_tick");
            p.disconnected ? json_u64(&j, p.disconnect_tick) : json_null(&j);
            json_key(&j, "reason");
            p.disconnected ? json_str(&j, net_reason_name(p.reason)) : json_null(&j);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_key(&j, "spectators"), json_array_begin(&j);
        for (uint32_t k = 0; k < l->sd.spectators; k++) {
            ls_relay_peer_stats v = ls_relay_spectator_stats_get(w->relay, id, k);
            json_object_begin(&j);
            json_key(&j, "index"), json_u64(&j, k);
            json_peer(&j, &v);
            json_key(&j, "ticks"), json_u64(&j, v.input_next);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_key(&j, "replay");
        if (l->recorded) {
            char path[4096 + 16];
            if (id == 1) {
                snprintf(path, sizeof path, "%s", app->o.record);
            } else {
                snprintf(path, sizeof path, "%s.%u", app->o.record, id);
            }
            json_object_begin(&j);
            json_key(&j, "path"), json_str(&j, path);
            json_key(&j, "ticks"), json_u64(&j, l->replay_ticks);
            json_object_end(&j);
        } else {
            json_null(&j);
        }
        if (l->has_result) { // the game's result, re-simulated (scenes with game words)
            json_key(&j, "game_result"), json_game_result(&j, &l->result);
        }
        if (app->workers > 1) { // where it ran (--workers)
            json_key(&j, "worker"), json_u64(&j, w->index);
        }
        json_object_end(&j);
    }
    json_array_end(&j);
    json_key(&j, "relay"), json_object_begin(&j);
    json_key(&j, "packets_in"), json_u64(&j, st.packets_in);
    json_key(&j, "bytes_in"), json_u64(&j, st.bytes_in);
    json_key(&j, "packets_out"), json_u64(&j, st.packets_out);
    json_key(&j, "bytes_out"), json_u64(&j, st.bytes_out);
    json_key(&j, "malformed"), json_u64(&j, st.malformed);
    json_key(&j, "truncated"), json_u64(&j, st.truncated);
    json_key(&j, "wrong_version"), json_u64(&j, st.wrong_version);
    json_key(&j, "bad_mac"), json_u64(&j, st.bad_mac);
    json_key(&j, "replayed"), json_u64(&j, st.replayed);
    json_key(&j, "stale"), json_u64(&j, st.stale);
    json_key(&j, "unverified"), json_u64(&j, st.unverified);
    json_key(&j, "no_session"), json_u64(&j, st.no_session);
    json_key(&j, "rate_limited"), json_u64(&j, st.rate_limited);
    json_key(&j, "challenges"), json_u64(&j, st.challenges);
    json_key(&j, "outbox_dropped"), json_u64(&j, st.outbox_dropped);
    json_key(&j, "send_errors"), json_u64(&j, us.send_errors);
    json_key(&j, "fault_dropped"), json_u64(&j, us.fault_dropped);
    json_key(&j, "fault_corrupted"), json_u64(&j, us.fault_corrupted);
    json_key(&j, "desyncs"), json_u64(&j, st.desyncs);
    json_key(&j, "spectator_refused"), json_u64(&j, st.spectator_refused);
    json_key(&j, "spectators_dropped"), json_u64(&j, st.spectators_dropped);
    json_key(&j, "rejoins"), json_u64(&j, st.rejoins);
    json_key(&j, "rejoin_refused"), json_u64(&j, st.rejoin_refused);
    json_object_end(&j);
    if (app->o.ws) { // the WebSocket listeners' counters (--ws)
        relay_ws_stats ws = sum_ws(app);
        json_key(&j, "ws"), json_object_begin(&j);
        json_key(&j, "accepted"), json_u64(&j, ws.accepted);
        json_key(&j, "frames_in"), json_u64(&j, ws.frames_in);
        json_key(&j, "bytes_in"), json_u64(&j, ws.bytes_in);
        json_key(&j, "frames_out"), json_u64(&j, ws.frames_out);
        json_key(&j, "bytes_out"), json_u64(&j, ws.bytes_out);
        json_key(&j, "origin_refused"), json_u64(&j, ws.origin_refused);
        json_key(&j, "full_refused"), json_u64(&j, ws.full_refused);
        json_key(&j, "text_closed"), json_u64(&j, ws.text_closed);
        json_key(&j, "oversize_closed"), json_u64(&j, ws.oversize_closed);
        json_key(&j, "slow_closed"), json_u64(&j, ws.slow_closed);
        json_key(&j, "send_dropped"), json_u64(&j, ws.send_dropped);
        json_object_end(&j);
    }
    if (app->workers > 1) { // every worker's address, worker 0's first
        json_key(&j, "workers"), json_array_begin(&j);
        for (uint32_t k = 0; k < app->workers; k++) {
            format_addr(app, &app->w[k], listen, sizeof listen);
            json_str(&j, listen);
        }
        json_array_end(&j);
    }
    json_key(&j, "result"), json_str(&j, "ok");
    json_object_end(&j);
    json_finish(&j);
}

int cmd_relay(int argc, char **argv)
{
    static relay_app app; // large (recorder table); one relay per process
    memset(&app, 0, sizeof app);
    if (!parse(argc, argv, &app.o)) {
        return CLI_EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    app.log = app.o.json ? stderr : stdout;
    app.sink = (log_sink){app.log, app.o.log_json, 0};
    app.cap = (uint32_t)(app.o.sessions + (app.o.api ? app.o.api_sessions : 0));
    app.workers = (uint32_t)app.o.workers;
    app.main_thread = pthread_self();
    pthread_mutex_init(&app.qmu, NULL);
    atomic_store(&app.watch_done, app.o.exit_when_done);
    app.sess = calloc(app.cap, sizeof *app.sess);
    app.owner = calloc(app.cap ? app.cap : 1, sizeof *app.owner);
    if (!app.sess || !app.owner) {
        fprintf(stderr, "lockstep relay: out of memory\n");
        free(app.sess);
        free(app.owner);
        return CLI_EXIT_ERROR;
    }
    int status = CLI_EXIT_ERROR;
    if (setup(&app) && start_threads(&app)) {
        app.agones = agones_from_env(app.log, stderr, app.cap); // API sessions too
        agones_ready(app.agones);
        ls_uv_run(app.uv);
        stop_threads(&app);
        for (uint32_t k = 0; k < app.workers; k++) { // the threads are gone: all on main
            ls_relay_poll(app.w[k].relay, ls_uv_now_us(app.uv));
            pump(&app.w[k]);
        }
        for (uint32_t id = 1; id <= app.count; id++) {
            finish_recording(owner_of(&app, id), id); // clean close on SIGINT/SIGTERM too
        }
        print_stats(&app);
        if (app.o.json) {
            print_json(&app);
        }
        agones_shutdown(app.agones); // after the last match: the GameServer may go
        status = CLI_EXIT_OK;
    } else {
        stop_threads(&app);
    }
    relay_api_destroy(app.api); // before the loop it watches on is closed
    agones_destroy(app.agones);
    if (app.qwake_init) {
        uv_close((uv_handle_t *)&app.qwake, NULL); // closed as ls_uv_destroy runs the loop
    }
    for (uint32_t k = 0; k < app.workers; k++) {
        relay_worker *w = &app.w[k];
        if (w->wake_init) {
            uv_close((uv_handle_t *)&w->wake, NULL);
            pthread_mutex_destroy(&w->mu);
            pthread_cond_destroy(&w->cv);
        }
        relay_ws_close(w->ws); // its handles close as ls_uv_destroy runs the loop
        ls_uv_destroy(w->uv);
        relay_ws_free(w->ws);
        ls_relay_destroy(w->relay);
        free(w->ids);
        free(w->pending.v);
    }
    free(app.q.v);
    pthread_mutex_destroy(&app.qmu);
    free(app.scene_text);
    memset(app.sign_secret, 0, sizeof app.sign_secret);
    for (uint32_t id = 1; id <= app.count; id++) {
        net_event_list_free(&app.sess[id - 1].desyncs);
        net_event_list_free(&app.sess[id - 1].disputes);
        net_event_list_free(&app.sess[id - 1].refusals);
        net_event_list_free(&app.sess[id - 1].disconnects);
        net_event_list_free(&app.sess[id - 1].rejoins);
    }
    free(app.sess);
    free(app.owner);
    return status;
}
