// SPDX-License-Identifier: MIT
// `lockstep relay --bind 127.0.0.1:PORT`: the UDP relay. Creates sessions from
// the command line, issues a credential (secret key) per slot, as files in a
// private directory (--credentials DIR) or on stdout, relays inputs, checks
// checksums, records each session as a replay, prints stats on SIGUSR1 and at exit
// (with --json, a JSON summary on stdout at exit and the line log on stderr).
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
#include "replay_glue.h"

#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const cli_command cmd_relay_def = {
    "relay", "run the UDP input relay (sessions, credentials, desync detection, recording)",
    "[--bind HOST:PORT] [--credentials DIR] [--sessions N] [--slots N] [--tick-rate HZ]\n"
    "       [--input-size B] [--delay D] [--ticks N] [--timeout MS] [--join-timeout MS]\n"
    "       [--spectators N] [--history TICKS] [--rejoin-ms MS]\n"
    "       [--scene FILE --seed S --record PATH [--sign-key KEY]] [--exit-when-done]\n"
    "       [--api HOST:PORT [--api-token-file FILE] [--api-sessions N]] [--drain-seconds N]\n"
    "       [--json] [--log-json] [fault options]\n\n"
    "  --bind HOST:PORT  where to listen (default 127.0.0.1:0, an ephemeral port)\n"
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
    "{\"t_ms\",\"event\",key:value...}\n" NET_FAULT_USAGE
    "\nSIGUSR1 prints stats; SIGINT, SIGTERM (not draining) finish the recordings, exit 0.\n"
    "Exit status 1 when the address cannot be bound, a file cannot be read or the\n"
    "--credentials directory is missing, not a directory or not writable.",
    cmd_relay};

#define MAX_SESSIONS 1024

typedef struct relay_opts {
    const char *bind, *scene, *record, *sign_key, *credentials;
    const char *api, *api_token_file; ///< --api HOST:PORT; the token's file.
    char host[64], api_host[64];
    uint16_t port, api_port;
    uint64_t api_sessions, drain_seconds;
    bool sessions_given, drain_given;
    char scene_buf[4096];
    uint64_t sessions, seed, rate_limit;
    ls_session_def sd;
    bool exit_when_done, json, log_json;
    ls_net_fault_def fault;
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
} session_log;

typedef struct relay_app {
    relay_opts o;
    ls_relay *relay;
    ls_uv *uv;
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
} relay_app;

static const char *const value_options[] = {
    "--bind",         "--scene",       "--record",         "--seed",
    "--rate-limit",   "--credentials", "--sign-key",       "--sessions",
    "--slots",        "--tick-rate",   "--input-size",     "--delay",
    "--ticks",        "--timeout",     "--join-timeout",   "--loss",
    "--dup",          "--reorder",     "--corrupt",        "--delay-ms",
    "--jitter",       "--fault-seed",  "--spectators",     "--history",
    "--rejoin-ms",    "--api",         "--api-token-file", "--api-sessions",
    "--drain-seconds"};

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
    return parse_bind("--bind", o->bind, o->host, sizeof o->host, &o->port) &&
           (!o->api || parse_bind("--api", o->api, o->api_host, sizeof o->api_host, &o->api_port));
}

// The relay's clock for the log's t_ms (0 before the transport exists).
static uint64_t log_now(const relay_app *app)
{
    return app->uv ? ls_uv_now_us(app->uv) : 0;
}

static void print_stats(relay_app *app)
{
    ls_relay_stats st = ls_relay_stats_get(app->relay);
    ls_uv_stats us = ls_uv_stats_get(app->uv);
    for (uint32_t id = 1; id <= app->count; id++) {
        for (uint32_t k = 0; k < app->sess[id - 1].sd.slots; k++) {
            ls_relay_peer_stats p = ls_relay_peer_stats_get(app->relay, id, k);
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
    fflush(app->log);
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
    relay_app *app = user;
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
    relay_app *app = user;
    ls_replay_recorder *rec = app->rec[session - 1];
    if (rec && ls_replay_recorder_claims(rec, tick, reported, claims, disputed) != LS_OK) {
        relay_recorder_error(app, session, "recording", rec);
    }
}

static void finish_recording(relay_app *app, uint32_t session)
{
    ls_replay_recorder *rec = app->rec[session - 1];
    if (!rec) {
        return;
    }
    bool ok = ls_replay_recorder_finish(rec) == LS_OK;
    if (!ok) {
        relay_recorder_error(app, session, "finishing", rec);
    }
    relay_api_recording_done(app->api, session, ls_replay_recorder_ticks(rec), ok);
    if (session == 1) {
        log_line(&app->sink, log_now(app), "replay session=%u ticks=%u path=%s\n", session,
                 ls_replay_recorder_ticks(rec), app->o.record);
    } else {
        log_line(&app->sink, log_now(app), "replay session=%u ticks=%u path=%s.%u\n", session,
                 ls_replay_recorder_ticks(rec), app->o.record, session);
    }
    app->sess[session - 1].recorded = true;
    app->sess[session - 1].replay_ticks = ls_replay_recorder_ticks(rec);
    ls_replay_recorder_destroy(rec);
    app->rec[session - 1] = NULL;
    ls_replay_signer_destroy(app->signer[session - 1]);
    app->signer[session - 1] = NULL;
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
static const char *state_needed_key(const relay_app *app, const ls_relay_event *ev)
{
    const session_log *l = &app->sess[ev->session - 1];
    uint32_t bit = ev->slot < 32 ? 1u << ev->slot : 0;
    ls_relay_peer_stats p = ls_relay_peer_stats_get(app->relay, ev->session, ev->slot);
    ls_relay_peer_stats v = ls_relay_spectator_stats_get(app->relay, ev->session, ev->slot);
    bool player = ev->slot < l->sd.slots &&
                  ((l->rejoined & bit) || (p.rejoins && p.joined && !p.disconnected));
    bool spectator =
        ev->slot < l->sd.spectators && ((l->watching & bit) || (v.joined && !v.disconnected));
    return player == spectator ? "slot_or_spectator" : player ? "slot" : "spectator";
}

static void log_event(relay_app *app, const ls_relay_event *ev)
{
    if (ev->session < 1 || ev->session > app->count) {
        return; // not one of ours (the relay numbers them 1..sessions)
    }
    note_event(app, ev);
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
                 ev->session, state_needed_key(app, ev), ev->slot, ev->tick);
        break;
    case LS_RELAY_EV_REJOINED:
        log_line(&app->sink, log_now(app), "event rejoined session=%u slot=%u tick=%u\n",
                 ev->session, ev->slot, ev->tick);
        break;
    }
    fflush(app->log);
}

static void pump(relay_app *app)
{
    ls_net_datagram d;
    while (ls_relay_next_datagram(app->relay, &d)) {
        ls_uv_send(app->uv, &d.to, d.data, d.len);
    }
    ls_relay_event ev;
    while (ls_relay_next_event(app->relay, &ev)) {
        log_event(app, &ev);
    }
}

static void on_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                    uint64_t now)
{
    relay_app *app = user;
    struct timespec t0, t1;
    if (app->api) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
    }
    ls_relay_receive(app->relay, from, data, len, now);
    pump(app);
    if (app->api) { // the latency the relay adds, for GET /metrics
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
        relay_api_observe_ns(app->api, ns > 0 ? (uint64_t)ns : 0);
    }
}

static void on_timer(void *user, uint64_t now)
{
    relay_app *app = user;
    ls_relay_poll(app->relay, now);
    pump(app);
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
    bool done = true, idle = true;
    for (uint32_t id = 1; id <= app->count; id++) {
        done &= ls_relay_session_done(app->relay, id);
        idle &= ls_relay_session_idle(app->relay, id);
    }
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
    uint32_t running = 0;
    for (uint32_t id = 1; id <= app->count; id++) {
        bool joined = false;
        for (uint32_t k = 0; k < app->sess[id - 1].sd.slots; k++) {
            ls_relay_peer_stats p = ls_relay_peer_stats_get(app->relay, id, k);
            joined |= p.joined || p.disconnected;
        }
        if (!joined) {
            ls_relay_session_end(app->relay, id, now);
        }
        running += joined && !ls_relay_session_done(app->relay, id);
    }
    log_line(&app->sink, log_now(app),
             "signal SIGTERM: draining (no new sessions; %u running, up to %llu s; SIGINT or "
             "SIGTERM again stops now)\n",
             running, (unsigned long long)app->o.drain_seconds);
    fflush(app->log);
    pump(app);
}

static void on_signal(void *user, int signum)
{
    relay_app *app = user;
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

static bool start_recording(relay_app *app, uint32_t id)
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
    ls_relay_recorder hook = {app, on_rec_tick, on_rec_end, on_rec_claims};
    ls_relay_session_set_recorder(app->relay, id, &hook);
    return true;
}

// Hand out slot k's credential (spectator k's when spectator): a private file
// (--credentials DIR) or a stdout line.
static bool issue_credential(relay_app *app, uint32_t id, uint32_t k, bool spectator)
{
    ls_net_credential cred;
    if (spectator) {
        ls_relay_session_spectator_credential(app->relay, id, k, &cred);
    } else {
        ls_relay_session_credential(app->relay, id, k, &cred);
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
    ls_result r = ls_relay_session_create(app->relay, &req->sd, ls_uv_now_us(app->uv), id);
    if (r != LS_OK) {
        *status = r == LS_ERR_INVALID_ARGUMENT ? 400 : 503;
        return relay_api_fail(err, "body", "the relay refused the session: %s", ls_result_text(r));
    }
    app->count = *id;
    session_log *l = &app->sess[*id - 1];
    l->sd = req->sd;
    l->seed = req->seed;
    if (app->o.record && !start_recording(app, *id)) {
        ls_relay_session_end(app->relay, *id, ls_uv_now_us(app->uv));
        pump(app);
        *status = 500;
        return relay_api_fail(err, "recording", "cannot start the recording of session %u", *id);
    }
    char path[4096 + 16];
    relay_api_session_added(app->api, *id, &req->sd, req->seed,
                            recording_path(app, *id, path, sizeof path), true);
    log_line(&app->sink, log_now(app),
             "session %u created by the api slots=%u spectators=%u ticks=%u\n", *id, req->sd.slots,
             req->sd.spectators, req->sd.ticks);
    fflush(app->log);
    return true;
}

static void api_pump(void *user)
{
    pump(user);
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
    char token[300], msg[256], relay_addr[96];
    if (!read_token(app, token, sizeof token)) {
        sodium_memzero(token, sizeof token);
        return false;
    }
    snprintf(relay_addr, sizeof relay_addr, "%s:%u", app->o.host, ls_uv_port(app->uv));
    relay_api_def d;
    memset(&d, 0, sizeof d);
    d.host = app->o.api_host;
    d.port = app->o.api_port;
    d.token = token;
    d.relay_addr = relay_addr;
    d.loop = ls_uv_loop(app->uv);
    d.max_sessions = app->cap;
    d.defaults = app->o.sd;
    d.default_seed = app->o.seed;
    d.has_scene = app->scene_text != NULL;
    d.scene_hash = app->scene_text ? ls_hash64(app->scene_text, app->scene_size) : 0;
    d.signing = app->signing;
    d.host_fns = (relay_api_host){app, app->relay, api_create, api_pump, api_now};
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

static bool setup(relay_app *app)
{
    char msg[256];
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
    ls_error err;
    app->relay = ls_relay_create(&rd, &err);
    if (!app->relay) {
        cli_print_error("lockstep relay", &err);
        return false;
    }
    ls_uv_def ud = ls_default_uv_def();
    ud.bind_host = app->o.host;
    ud.bind_port = app->o.port;
    ud.fault = app->o.fault;
    ud.signals = true;
    ud.user = app;
    ud.on_recv = on_recv;
    ud.on_timer = on_timer;
    ud.on_signal = on_signal;
    app->uv = ls_uv_create(&ud, msg, sizeof msg);
    app->sink.t0 = app->uv ? ls_uv_now_us(app->uv) : 0;
    if (!app->uv) {
        fprintf(stderr, "lockstep relay: --bind %s: %s\n", app->o.bind, msg);
        return false;
    }
    log_line(&app->sink, log_now(app), "listening %s:%u\n", app->o.host, ls_uv_port(app->uv));
    uint64_t now = ls_uv_now_us(app->uv);
    if (app->o.api && !start_api(app)) {
        return false;
    }
    for (uint32_t s = 0; s < app->o.sessions; s++) {
        uint32_t id;
        ls_result r = ls_relay_session_create(app->relay, &app->o.sd, now, &id);
        if (r != LS_OK) {
            fprintf(stderr, "lockstep relay: creating session %u: %s\n", s + 1, ls_result_text(r));
            return false;
        }
        app->count = id;
        app->sess[id - 1].sd = app->o.sd;
        app->sess[id - 1].seed = app->o.seed;
        if (app->o.record && !start_recording(app, id)) {
            return false;
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
static void print_json(relay_app *app)
{
    ls_relay_stats st = ls_relay_stats_get(app->relay);
    ls_uv_stats us = ls_uv_stats_get(app->uv);
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j);
    char listen[96];
    snprintf(listen, sizeof listen, "%s:%u", app->o.host, ls_uv_port(app->uv));
    json_key(&j, "listen"), json_str(&j, listen);
    json_key(&j, "stopped_by");
    app->signal ? json_str(&j, app->signal == SIGINT ? "SIGINT" : "SIGTERM") : json_null(&j);
    json_key(&j, "sessions"), json_array_begin(&j);
    for (uint32_t id = 1; id <= app->count; id++) {
        const session_log *l = &app->sess[id - 1];
        json_object_begin(&j);
        json_key(&j, "session"), json_u64(&j, id);
        json_key(&j, "ticks"), json_u64(&j, ls_relay_session_final_ticks(app->relay, id));
        json_key(&j, "done"), json_bool(&j, ls_relay_session_done(app->relay, id));
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
            ls_relay_peer_stats p = ls_relay_peer_stats_get(app->relay, id, k);
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
            ls_relay_peer_stats v = ls_relay_spectator_stats_get(app->relay, id, k);
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
    app.sess = calloc(app.cap, sizeof *app.sess);
    if (!app.sess) {
        fprintf(stderr, "lockstep relay: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    int status = CLI_EXIT_ERROR;
    if (setup(&app)) {
        app.agones = agones_from_env(app.log, stderr, app.cap); // API sessions too
        agones_ready(app.agones);
        ls_uv_run(app.uv);
        ls_relay_poll(app.relay, ls_uv_now_us(app.uv));
        pump(&app);
        for (uint32_t id = 1; id <= app.count; id++) {
            finish_recording(&app, id); // clean close on SIGINT/SIGTERM too
        }
        print_stats(&app);
        if (app.o.json) {
            print_json(&app);
        }
        agones_shutdown(app.agones); // after the last match: the GameServer may go
        status = CLI_EXIT_OK;
    }
    relay_api_destroy(app.api); // before the loop it watches on is closed
    agones_destroy(app.agones);
    ls_uv_destroy(app.uv);
    ls_relay_destroy(app.relay);
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
    return status;
}
