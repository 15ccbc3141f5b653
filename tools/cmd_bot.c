// SPDX-License-Identifier: MIT
// `lockstep bot`: one peer over UDP. It reads its slot's credential (a file or
// an inherited file descriptor: the secret key is never on the command line nor
// on the wire), simulates the scene with the other peers in lockstep or in
// rollback mode (predicting, and correcting from world snapshots), pushes its
// own body with a seeded script, reports checksums of confirmed ticks and
// prints its final checksum and stats. Given a spectator credential it watches
// instead: it simulates the relay's final ticks and checks the agreed checksums.
// With --json the summary is one JSON object on stdout, the line log on stderr.
#define _POSIX_C_SOURCE 200809L // nanosleep
#include "cli.h"
#include "json.h"
#include "ls/net_peer.h"
#include "ls/net_spectator.h"
#include "ls/net_uv.h"
#include "net_tool.h"
#include "ws_client.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const cli_command cmd_bot_def = {
    "bot", "a lockstep peer: plays the scene through the relay, prints its final checksum",
    "(--relay HOST:PORT | --ws URL) (--credential FILE | --credential-fd N)\n"
    "       [--scene FILE] [--seed S] [--mode lockstep|rollback] [--max-prediction W]\n"
    "       [--max-lead N] [--deadline S] [--relay-timeout S] [--perturb-tick T]\n"
    "       [--outage TICK:MS] [--first-seq N|clock] [--restarted] [--json]\n"
    "       [fault options]\n\n"
    "  --relay HOST:PORT  the relay\n"
    "  --ws URL           the relay's WebSocket (ws://HOST:PORT or wss://, `relay --ws`)\n"
    "                     instead of UDP: one datagram per binary message (players)\n"
    "  --credential FILE  our slot's credential (session, slot, secret key), as written by\n"
    "                     `lockstep relay --credentials DIR`; we push the scene's player\n"
    "                     body of that slot\n"
    "  --credential-fd N  read the credential from inherited file descriptor N instead\n"
    "                     (a spectator credential makes us a spectator: we simulate the\n"
    "                     relay's final ticks behind the players and check every agreed\n"
    "                     checksum; `result spectator=I ... mismatches=M state=...`)\n"
    "  --scene FILE       the scene every peer simulates (default tools/scenes/arena.scene,\n"
    "                     else the installed arena.scene)\n"
    "  --seed S           seed of the scripted pushes (default 1)\n"
    "  --mode M           lockstep (default): simulate a tick once every input is known;\n"
    "                     rollback: predict missing inputs, correct by rollback (the input\n"
    "                     delay is the relay session's, 0 allowed)\n"
    "  --max-prediction W rollback: ticks simulated beyond the confirmed ones, 0..64\n"
    "                     (default 8)\n"
    "  --max-lead N       lockstep: ticks of input we may produce beyond what we simulated\n"
    "                     (default 8)\n"
    "  --deadline S       give up after S seconds (default 300)\n"
    "  --relay-timeout S  give up when the relay is silent for S seconds (default 10)\n"
    "  --perturb-tick T   diverge on purpose at tick T (desync demo)\n"
    "  --start-delay-ms MS join MS milliseconds after starting (a late spectator or player)\n"
    "  --outage TICK:MS   at tick TICK go silent (send and receive nothing) for MS ms, then\n"
    "                     come back; a lockstep bot timed out by the relay rejoins (REJOIN,\n"
    "                     snapshot) when the relay allows it (relay --rejoin-ms)\n"
    "  --first-seq N|clock our first datagram's number (default 1); clock: Unix time in us\n"
    "                     x 4096, above any an earlier process of ours sent (SPEC 17.3)\n"
    "  --restarted        an earlier process of ours may hold the slot: after WELCOME\n"
    "                     keep silent for the session's timeout, then rejoin (with\n"
    "                     --first-seq clock; relay --rejoin-ms)\n"
    "  --json             at exit, one JSON object on stdout (the `result` line and the\n"
    "                     event lines go to stderr):\n"
    "                     role, slot (or index), mode, status, ticks, final_checksum,\n"
    "                     desyncs (desync_events: tick, slots_mask, expected), disconnects\n"
    "                     (slot, tick, reason), rejoins (slot, tick, snapshot_tick), stats\n"
    "                     (rtt_ms, packets, rollbacks, ...), result, reason; a spectator:\n"
    "                     mismatches (mismatch_events)\n" NET_FAULT_USAGE
    "\nExit status 0 when the match finished and this bot was never named (other slots a\n"
    "majority named are reported, not our failure), 3 when it finished but a majority named\n"
    "this bot's slot or a tick it reported was disputed (no majority: `replay verify` names\n"
    "who was wrong), 1 when the relay went silent, the deadline passed or we were\n"
    "disconnected.",
    cmd_bot, NULL};

typedef struct bot_app {
    ls_peer *peer;
    ls_uv *uv;
    ws_client *ws; ///< --ws: the datagrams go over this WebSocket instead.
    net_game game;
    ls_net_addr relay;
    uint64_t deadline_us, started, last_heard, relay_timeout_us;
    bool timed_out, finished, relay_silent, heard, rollback;
    int64_t outage_tick;              ///< Go silent at this tick (-1: never) ...
    uint64_t outage_ms, silent_until; ///< ... for outage_ms; silent while now < silent_until.
    bool outage_done;
    int signal; ///< SIGINT/SIGTERM that stopped us (0: none).
    FILE *log;  ///< The line log: stdout, or stderr with --json.
    bool json;
    net_event_list desyncs, disconnects, rejoins; ///< For --json.
    /// Gaps between two datagrams from the relay once the match runs (ticks > 0):
    /// the longest, and how many exceeded 100 ms (a WebSocket's head-of-line stall).
    uint64_t last_recv, max_gap_us, gaps_100ms;
} bot_app;

static void pump(bot_app *b)
{
    ls_net_datagram d;
    bool silent = ls_uv_now_us(b->uv) < b->silent_until;
    while (ls_peer_next_datagram(b->peer, &d)) {
        if (silent) { // an outage loses everything we send
        } else if (b->ws) {
            ws_client_send(b->ws, d.data, d.len);
        } else {
            ls_uv_send(b->uv, &d.to, d.data, d.len);
        }
    }
}

static void on_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                    uint64_t now)
{
    bot_app *b = user;
    if (!ls_net_addr_equal(from, &b->relay) || now < b->silent_until) {
        return; // only the relay talks to us (and nothing arrives during an outage)
    }
    if (b->last_recv != 0 && ls_peer_ticks(b->peer) > 0 && now > b->last_recv) {
        uint64_t gap = now - b->last_recv;
        b->max_gap_us = gap > b->max_gap_us ? gap : b->max_gap_us;
        b->gaps_100ms += gap > 100000;
    }
    b->last_recv = now;
    b->last_heard = now;
    b->heard = true;
    ls_peer_receive(b->peer, data, len, now);
    ls_peer_poll(b->peer, now);
    pump(b);
}

// --ws: a message from the relay's WebSocket is a datagram from the relay.
static void on_ws_recv(void *user, const uint8_t *data, size_t len)
{
    bot_app *b = user;
    on_recv(b, &b->relay, data, len, ls_uv_now_us(b->uv));
}

static void on_timer(void *user, uint64_t now)
{
    bot_app *b = user;
    if (!b->outage_done && b->outage_tick >= 0 &&
        ls_peer_ticks(b->peer) >= (uint64_t)b->outage_tick) {
        b->outage_done = true;
        b->silent_until = now + b->outage_ms * 1000u;
        fprintf(b->log, "bot: outage at tick %u for %llu ms\n", ls_peer_ticks(b->peer),
                (unsigned long long)b->outage_ms);
    }
    if (now < b->silent_until) {
        b->last_heard = now; // our own outage, not the relay's silence
    }
    ls_peer_poll(b->peer, now);
    ls_peer_state st = ls_peer_state_get(b->peer);
    if (st == LS_PEER_FINISHED) {
        b->finished = true;
        ls_peer_leave(b->peer);
    }
    pump(b);
    if (st == LS_PEER_FINISHED || st == LS_PEER_LEFT) {
        ls_uv_stop(b->uv);
    } else if (now - b->started > b->deadline_us) {
        b->timed_out = true;
        ls_uv_stop(b->uv);
    } else if (now - b->last_heard > b->relay_timeout_us) {
        b->relay_silent = true; // the relay is gone: do not wait for the deadline
        ls_uv_stop(b->uv);
    }
}

static void on_signal(void *user, int signum)
{
    bot_app *b = user;
    if (signum != SIGUSR1) {
        b->signal = signum;
        ls_peer_leave(b->peer);
        pump(b);
        ls_uv_stop(b->uv);
    }
}

static void on_event(void *user, const ls_peer_event *ev)
{
    net_game *g = user;
    bot_app *b = g->owner;
    FILE *f = b->log;
    net_event_rec e = {ev->slot, ev->tick, 0, ev->slots, ev->reason, ev->expected, 0};
    switch (ev->type) {
    case LS_PEER_EV_WELCOME:
        fprintf(f, "bot %u: joined\n", g->slot);
        break;
    case LS_PEER_EV_DESYNC:
        fprintf(f, "bot %u: relay reports desync at tick %u (slots 0x%04x, majority %016llx)\n",
                g->slot, ev->tick, ev->slots, (unsigned long long)ev->expected);
        if (b->json) {
            net_event_list_add(&b->desyncs, &e);
        }
        break;
    case LS_PEER_EV_DISPUTED:
        printf("bot %u: relay reports disputed checksums at tick %u (slots 0x%04x): no majority, "
               "nobody named\n",
               g->slot, ev->tick, ev->slots);
        break;
    case LS_PEER_EV_DISCONNECTED:
        fprintf(f, "bot %u: slot %u disconnected from tick %u (%s)\n", g->slot, ev->slot, ev->tick,
                ev->reason == LS_NET_LEFT      ? "left"
                : ev->reason == LS_NET_TIMEOUT ? "timeout"
                                               : "kicked");
        if (b->json) {
            net_event_list_add(&b->disconnects, &e);
        }
        break;
    case LS_PEER_EV_REJOINED:
        if (ev->slot == g->slot) {
            fprintf(f, "bot %u: rejoined, snapshot of tick %u, our inputs count from tick %u\n",
                    g->slot, ev->count, ev->tick);
        } else {
            fprintf(f, "bot %u: slot %u is back from tick %u\n", g->slot, ev->slot, ev->tick);
        }
        e.extra = ev->slot == g->slot ? ev->count : UINT32_MAX;
        if (b->json) {
            net_event_list_add(&b->rejoins, &e);
        }
        break;
    case LS_PEER_EV_FINISHED:
    case LS_PEER_EV_ROLLBACK:
    case LS_PEER_EV_WAITING:
    case LS_PEER_EV_TIME_SYNC:
    case LS_PEER_EV_INTERRUPTED: // counted in the peer's stats
    case LS_PEER_EV_RESUMED:
        break;
    case LS_PEER_EV_SNAPSHOT_REFUSED:
        printf("bot %u: refused the snapshot of tick %u from %s%u: its state is not the agreed "
               "one\n",
               g->slot, ev->tick, ev->slot == LS_NET_SOURCE_HOST ? "the relay's host " : "slot ",
               ev->slot == LS_NET_SOURCE_HOST ? 0u : ev->slot);
        break;
    case LS_PEER_EV_STATE_ERROR:
        fprintf(f, "bot %u: the game's save/load failed at tick %u\n", g->slot, ev->tick);
        break;
    }
    fflush(f);
}

typedef struct bot_opts {
    const char *relay, *scene, *credential, *ws;
    uint64_t credential_fd, seed, max_lead, deadline, relay_timeout, max_prediction, start_delay;
    int64_t perturb, outage_tick;
    uint64_t outage_ms;
    uint64_t first_seq; ///< --first-seq N (0: the default, 1)
    bool first_seq_clock, restarted;
    bool rollback, json;
    ls_net_fault_def fault;
} bot_opts;

static const char *const value_options[] = {
    "--relay",      "--scene",    "--credential",     "--credential-fd",  "--seed",
    "--max-lead",   "--deadline", "--relay-timeout",  "--perturb-tick",   "--loss",
    "--dup",        "--reorder",  "--corrupt",        "--delay-ms",       "--jitter",
    "--fault-seed", "--mode",     "--max-prediction", "--start-delay-ms", "--outage",
    "--ws",         "--first-seq"};

static bool takes_value(const char *a)
{
    return cli_is_one_of(a, value_options, sizeof value_options / sizeof value_options[0]);
}

static bool parse(int argc, char **argv, bot_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->max_lead = 8;
    o->max_prediction = 8;
    o->deadline = 300;
    o->relay_timeout = 10;
    o->perturb = -1;
    o->outage_tick = -1;
    o->credential_fd = UINT64_MAX;
    o->fault.seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        uint64_t n;
        if (net_cli_fault_option("bot", argc, argv, &i, &o->fault, &ok)) {
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--restarted") == 0) {
            o->restarted = true;
        } else if (!v || !takes_value(a)) {
            if (takes_value(a)) {
                cli_usage_error(&cmd_bot_def, "%s needs a value", a);
            } else {
                cli_unexpected(&cmd_bot_def, a);
            }
            return false;
        } else if (strcmp(a, "--relay") == 0) {
            o->relay = v, i++;
        } else if (strcmp(a, "--ws") == 0) {
            o->ws = v, i++;
        } else if (strcmp(a, "--scene") == 0) {
            o->scene = v, i++;
        } else if (strcmp(a, "--credential") == 0) {
            o->credential = v, i++;
        } else if (strcmp(a, "--credential-fd") == 0) {
            ok = net_cli_u64("bot", a, v, 0, 1024, &o->credential_fd), i++;
        } else if (strcmp(a, "--seed") == 0) {
            ok = net_cli_u64("bot", a, v, 0, UINT64_MAX, &o->seed), i++;
        } else if (strcmp(a, "--max-lead") == 0) {
            ok = net_cli_u64("bot", a, v, 1, LS_NET_MAX_LEAD, &o->max_lead), i++;
        } else if (strcmp(a, "--deadline") == 0) {
            ok = net_cli_u64("bot", a, v, 1, 86400, &o->deadline), i++;
        } else if (strcmp(a, "--relay-timeout") == 0) {
            ok = net_cli_u64("bot", a, v, 1, 86400, &o->relay_timeout), i++;
        } else if (strcmp(a, "--outage") == 0) {
            unsigned long long t, ms;
            char extra;
            ok = sscanf(v, "%llu:%llu%c", &t, &ms, &extra) == 2 && v[0] != '-' && !strchr(v, '-') &&
                 t <= UINT32_MAX && ms <= 3600000;
            if (!ok) {
                cli_usage_error(&cmd_bot_def, "--outage wants TICK:MS (e.g. 300:5000), got '%s'",
                                v);
            }
            o->outage_tick = (int64_t)t, o->outage_ms = ms, i++;
        } else if (strcmp(a, "--first-seq") == 0) {
            o->first_seq_clock = strcmp(v, "clock") == 0;
            ok = o->first_seq_clock ||
                 net_cli_u64("bot", a, v, 1, UINT64_MAX - ((uint64_t)1 << 32), &o->first_seq);
            i++;
        } else if (strcmp(a, "--start-delay-ms") == 0) {
            ok = net_cli_u64("bot", a, v, 0, 3600000, &o->start_delay), i++;
        } else if (strcmp(a, "--max-prediction") == 0) {
            ok = net_cli_u64("bot", a, v, 0, LS_ROLLBACK_MAX_PREDICTION, &o->max_prediction), i++;
        } else if (strcmp(a, "--mode") == 0) {
            if (strcmp(v, "rollback") != 0 && strcmp(v, "lockstep") != 0) {
                cli_usage_error(&cmd_bot_def, "--mode wants lockstep or rollback, got '%s'", v);
                return false;
            }
            o->rollback = strcmp(v, "rollback") == 0, i++;
        } else {
            ok = net_cli_u64("bot", a, v, 0, UINT32_MAX, &n), i++; // --perturb-tick
            o->perturb = (int64_t)n;
        }
        if (!ok) {
            return false;
        }
    }
    bool has_cred = o->credential || o->credential_fd != UINT64_MAX;
    const char *missing = !o->relay && !o->ws ? "--relay HOST:PORT"
                          : !has_cred         ? "--credential FILE"
                                              : NULL;
    if (missing) {
        cli_usage_error(&cmd_bot_def,
                        "missing %s (--relay and --credential FILE or --credential-fd N are "
                        "required)",
                        missing);
        return false;
    }
    if (o->relay && o->ws) {
        cli_usage_error(&cmd_bot_def, "--relay and --ws: give one of them");
        return false;
    }
    if (o->credential && o->credential_fd != UINT64_MAX) {
        cli_usage_error(&cmd_bot_def, "--credential and --credential-fd: give one of them");
        return false;
    }
    return true;
}

// Zero the copy of the key in a peer definition (the peer keeps its own).
static void wipe_key(ls_peer_def *pd)
{
    ls_net_credential c;
    memset(&c, 0, sizeof c);
    memcpy(c.key, pd->key, sizeof c.key);
    ls_net_credential_wipe(&c);
    memset(pd->key, 0, sizeof pd->key);
}

// The credential from --credential FILE or --credential-fd N (read once, then closed).
static bool read_credential(const bot_opts *o, ls_net_credential *out)
{
    ls_error err;
    if (o->credential) {
        if (ls_net_credential_read(o->credential, out, &err) != LS_OK) {
            cli_print_error("lockstep bot: --credential", &err);
            return false;
        }
        return true;
    }
    char text[LS_NET_CREDENTIAL_TEXT_SIZE + 2];
    size_t len = 0;
    int fd = (int)o->credential_fd;
    for (;;) {
        ssize_t n = read(fd, text + len, sizeof text - 1 - len);
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
        if (len == sizeof text - 1) {
            break;
        }
    }
    close(fd);
    text[len] = '\0';
    ls_result r = ls_net_credential_parse(text, out, &err);
    memset(text, 0, sizeof text);
    if (r != LS_OK) {
        fprintf(stderr, "lockstep bot: --credential-fd %d: %s\n", fd, err.message);
        return false;
    }
    return true;
}

static void print_result(bot_app *b, uint32_t slot)
{
    ls_peer_stats st = ls_peer_stats_get(b->peer);
    ls_uv_stats us = ls_uv_stats_get(b->uv);
    ls_peer_state state = ls_peer_state_get(b->peer);
    char score[32]; // "A-B" for soccer scenes (printed last, parsed by key), "" otherwise
    net_game_summary(&b->game, score, sizeof score);
    fprintf(b->log,
            "result slot=%u ticks=%u checksum=%016llx desyncs=%u named=%u disputes=%u rtt_us=%u "
            "packets_out=%llu "
            "bytes_out=%llu packets_in=%llu bytes_in=%llu duplicates=%llu stalls=%llu "
            "clock_shifts=%u dropped=%llu bad_mac=%llu replayed=%llu stale=%llu malformed=%llu "
            "fault_dropped=%llu fault_corrupted=%llu mode=%s frames=%llu rollbacks=%llu "
            "resimulated=%llu resim_max=%u predicted=%llu predicted_hits=%llu waits=%llu "
            "time_sync=%llu rejoins=%u snapshot_tick=%u rejoin_tick=%u "
            "max_gap_us=%llu gaps_100ms=%llu state=%s%s%s\n",
            slot, ls_peer_ticks(b->peer), (unsigned long long)ls_peer_last_checksum(b->peer),
            st.desyncs, st.named, st.disputes, st.rtt_us, (unsigned long long)us.sent,
            (unsigned long long)us.sent_bytes, (unsigned long long)st.packets_in,
            (unsigned long long)st.bytes_in, (unsigned long long)st.duplicates,
            (unsigned long long)st.stalls, st.clock_shifts, (unsigned long long)st.dropped,
            (unsigned long long)st.bad_mac, (unsigned long long)st.replayed,
            (unsigned long long)st.stale, (unsigned long long)st.malformed,
            (unsigned long long)us.fault_dropped, (unsigned long long)us.fault_corrupted,
            b->rollback ? "rollback" : "lockstep", (unsigned long long)st.frames,
            (unsigned long long)st.rollbacks, (unsigned long long)st.resimulated,
            st.max_resim_frame, (unsigned long long)st.predicted,
            (unsigned long long)st.predicted_hits, (unsigned long long)st.waits,
            (unsigned long long)st.time_sync_skips + st.clock_shifts, st.rejoins, st.snapshot_tick,
            st.rejoin_tick, (unsigned long long)b->max_gap_us, (unsigned long long)b->gaps_100ms,
            b->timed_out                               ? "timeout"
            : b->finished || state == LS_PEER_FINISHED ? "finished"
            : state == LS_PEER_LEFT                    ? "disconnected"
                                                       : "running",
            score[0] ? " score=" : "", score);
    fflush(b->log);
}

// Why the bot stopped, when it did not finish (or why it failed when it did).
static void explain(const bot_app *b, const bot_opts *o, char *buf, size_t size)
{
    ls_peer_stats st = ls_peer_stats_get(b->peer);
    if (b->finished && st.named) {
        snprintf(buf, size, "finished, but a majority named this slot as desynced %u time%s",
                 st.named, st.named == 1 ? "" : "s");
    } else if (b->finished) {
        snprintf(buf, size,
                 "finished, but %u tick%s this slot reported %s disputed (no majority: "
                 "`replay verify` of the recording names who was wrong)",
                 st.disputes, st.disputes == 1 ? "" : "s", st.disputes == 1 ? "was" : "were");
    } else if (b->relay_silent && !b->heard) {
        snprintf(buf, size,
                 "no answer from the relay at %s in %llu s (is it running? is the credential "
                 "this relay's? see --relay-timeout)",
                 o->relay, (unsigned long long)o->relay_timeout);
    } else if (b->relay_silent) {
        snprintf(buf, size, "the relay at %s went silent for %llu s at tick %u", o->relay,
                 (unsigned long long)o->relay_timeout, ls_peer_ticks(b->peer));
    } else if (b->signal) {
        snprintf(buf, size, "stopped by %s at tick %u", b->signal == SIGINT ? "SIGINT" : "SIGTERM",
                 ls_peer_ticks(b->peer));
    } else if (b->timed_out) {
        snprintf(buf, size, "gave up after %llu s (--deadline) at tick %u",
                 (unsigned long long)o->deadline, ls_peer_ticks(b->peer));
    } else {
        snprintf(buf, size, "disconnected at tick %u before the match finished",
                 ls_peer_ticks(b->peer));
    }
}

static const char *bot_state(const bot_app *b)
{
    ls_peer_state state = ls_peer_state_get(b->peer);
    return b->timed_out                               ? "timeout"
           : b->finished || state == LS_PEER_FINISHED ? "finished"
           : state == LS_PEER_LEFT                    ? "disconnected"
                                                      : "running";
}

// The kept events of a list as JSON objects (kind: the ls_peer_event_type they are).
static void json_bot_events(json_out *j, const char *key, const net_event_list *l,
                            ls_peer_event_type kind)
{
    json_key(j, key), json_array_begin(j);
    for (uint32_t i = 0; i < l->n; i++) {
        const net_event_rec *e = &l->v[i];
        json_object_begin(j);
        if (kind != LS_PEER_EV_DESYNC) {
            json_key(j, "slot"), json_u64(j, e->slot);
        }
        json_key(j, "tick"), json_u64(j, e->tick);
        if (kind == LS_PEER_EV_DESYNC) {
            json_key(j, "slots_mask"), json_u64(j, e->slots);
            json_key(j, "expected"), json_hex64(j, e->expected);
        } else if (kind == LS_PEER_EV_DISCONNECTED) {
            json_key(j, "reason"), json_str(j, net_reason_name(e->reason));
        } else {
            json_key(j, "snapshot_tick");
            e->extra != UINT32_MAX ? json_u64(j, e->extra) : json_null(j);
        }
        json_object_end(j);
    }
    json_array_end(j);
}

// The --json summary of a player bot.
static void print_json(bot_app *b, uint32_t slot, int status, const char *why)
{
    ls_peer_stats st = ls_peer_stats_get(b->peer);
    ls_uv_stats us = ls_uv_stats_get(b->uv);
    char score[32];
    net_game_summary(&b->game, score, sizeof score);
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "role"), json_str(&j, "player");
    json_key(&j, "slot"), json_u64(&j, slot);
    json_key(&j, "mode"), json_str(&j, b->rollback ? "rollback" : "lockstep");
    json_key(&j, "status"), json_str(&j, bot_state(b));
    json_key(&j, "ticks"), json_u64(&j, ls_peer_ticks(b->peer));
    json_key(&j, "final_checksum"), json_hex64(&j, ls_peer_last_checksum(b->peer));
    json_key(&j, "desyncs"), json_u64(&j, st.desyncs);
    json_key(&j, "first_desync_tick");
    st.desyncs ? json_u64(&j, st.first_desync) : json_null(&j);
    json_key(&j, "named"), json_u64(&j, st.named);
    json_key(&j, "disputes"), json_u64(&j, st.disputes);
    json_bot_events(&j, "desync_events", &b->desyncs, LS_PEER_EV_DESYNC);
    json_bot_events(&j, "disconnects", &b->disconnects, LS_PEER_EV_DISCONNECTED);
    json_bot_events(&j, "rejoins", &b->rejoins, LS_PEER_EV_REJOINED);
    json_key(&j, "events_omitted");
    json_u64(&j, (b->desyncs.total - b->desyncs.n) + (b->disconnects.total - b->disconnects.n) +
                     (b->rejoins.total - b->rejoins.n));
    if (score[0]) {
        json_key(&j, "score"), json_str(&j, score);
    }
    json_key(&j, "stats"), json_object_begin(&j);
    json_key(&j, "rtt_ms"), json_double(&j, st.rtt_us / 1000.0, 3);
    json_key(&j, "packets_out"), json_u64(&j, us.sent);
    json_key(&j, "bytes_out"), json_u64(&j, us.sent_bytes);
    json_key(&j, "packets_in"), json_u64(&j, st.packets_in);
    json_key(&j, "bytes_in"), json_u64(&j, st.bytes_in);
    json_key(&j, "duplicates"), json_u64(&j, st.duplicates);
    json_key(&j, "stalls"), json_u64(&j, st.stalls);
    json_key(&j, "clock_shifts"), json_u64(&j, st.clock_shifts);
    json_key(&j, "dropped"), json_u64(&j, st.dropped);
    json_key(&j, "malformed"), json_u64(&j, st.malformed);
    json_key(&j, "bad_mac"), json_u64(&j, st.bad_mac);
    json_key(&j, "replayed"), json_u64(&j, st.replayed);
    json_key(&j, "stale"), json_u64(&j, st.stale);
    json_key(&j, "fault_dropped"), json_u64(&j, us.fault_dropped);
    json_key(&j, "fault_corrupted"), json_u64(&j, us.fault_corrupted);
    json_key(&j, "frames"), json_u64(&j, st.frames);
    json_key(&j, "rollbacks"), json_u64(&j, st.rollbacks);
    json_key(&j, "resimulated"), json_u64(&j, st.resimulated);
    json_key(&j, "resim_per_frame_max"), json_u64(&j, st.max_resim_frame);
    json_key(&j, "predicted"), json_u64(&j, st.predicted);
    json_key(&j, "predicted_hits"), json_u64(&j, st.predicted_hits);
    json_key(&j, "waits"), json_u64(&j, st.waits);
    json_key(&j, "time_sync_adjustments"), json_u64(&j, st.time_sync_skips + st.clock_shifts);
    json_key(&j, "rejoins"), json_u64(&j, st.rejoins);
    json_key(&j, "snapshot_tick");
    st.rejoins ? json_u64(&j, st.snapshot_tick) : json_null(&j);
    json_key(&j, "rejoin_tick");
    st.rejoins ? json_u64(&j, st.rejoin_tick) : json_null(&j);
    json_object_end(&j);
    json_key(&j, "result"), json_str(&j, status == CLI_EXIT_OK ? "ok" : "failed");
    json_key(&j, "reason");
    why ? json_str(&j, why) : json_null(&j);
    json_object_end(&j);
    json_finish(&j);
}

// ---- spectator mode ----

typedef struct watch_app {
    ls_spectator *spec;
    ls_uv *uv;
    net_game game;
    ls_net_addr relay;
    uint64_t deadline_us, started, last_heard, relay_timeout_us;
    bool timed_out, relay_silent, heard;
    int signal;
} watch_app;

/// What the spectator's event callback needs.
typedef struct watch_ctx {
    uint32_t index;
    net_game *game;
    FILE *log; ///< stdout, or stderr with --json.
    bool json;
    net_event_list mismatches; ///< For --json.
} watch_ctx;

static void watch_pump(watch_app *w)
{
    ls_net_datagram d;
    while (ls_spectator_next_datagram(w->spec, &d)) {
        ls_uv_send(w->uv, &d.to, d.data, d.len);
    }
}

static void watch_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                       uint64_t now)
{
    watch_app *w = user;
    if (!ls_net_addr_equal(from, &w->relay)) {
        return;
    }
    w->last_heard = now;
    w->heard = true;
    ls_spectator_receive(w->spec, data, len, now);
    watch_pump(w);
}

static void watch_timer(void *user, uint64_t now)
{
    watch_app *w = user;
    ls_spectator_poll(w->spec, now);
    watch_pump(w);
    ls_spectator_state st = ls_spectator_state_get(w->spec);
    if (st == LS_SPECTATOR_FINISHED || st == LS_SPECTATOR_DROPPED) {
        ls_uv_stop(w->uv);
    } else if (now - w->started > w->deadline_us) {
        w->timed_out = true;
        ls_uv_stop(w->uv);
    } else if (now - w->last_heard > w->relay_timeout_us) {
        w->relay_silent = true;
        ls_uv_stop(w->uv);
    }
}

static void watch_signal(void *user, int signum)
{
    watch_app *w = user;
    if (signum != SIGUSR1) {
        w->signal = signum;
        ls_uv_stop(w->uv);
    }
}

static void watch_event(watch_ctx *c, const ls_spectator_event *ev)
{
    FILE *f = c->log;
    if (ev->type == LS_SPECTATOR_EV_WELCOME) {
        fprintf(f, "spectator %u: watching\n", c->index);
    } else if (ev->type == LS_SPECTATOR_EV_MISMATCH) {
        fprintf(f, "spectator %u: checksum of tick %u is %016llx, the players agreed on %016llx\n",
                c->index, ev->tick, (unsigned long long)ev->got, (unsigned long long)ev->expected);
        if (c->json) {
            net_event_rec e = {0, ev->tick, 0, 0, 0, ev->expected, ev->got};
            net_event_list_add(&c->mismatches, &e);
        }
    } else if (ev->type == LS_SPECTATOR_EV_PRESENCE) {
        fprintf(f, "spectator %u: from tick %u the slots present are 0x%04x\n", c->index, ev->tick,
                ev->present);
    } else if (ev->type == LS_SPECTATOR_EV_DROPPED) {
        fprintf(f, "spectator %u: dropped by the relay at tick %u (reason %u)\n", c->index,
                ev->tick, ev->reason);
    }
}

static uint64_t watch_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                              uint32_t input_size)
{
    watch_ctx *c = user;
    return net_game_advance(c->game, tick, inputs, slots, input_size);
}

static void watch_ctx_event(void *user, const ls_spectator_event *ev)
{
    watch_event(user, ev);
}

// The --json summary of a spectator.
static void watch_json(const watch_app *w, const watch_ctx *c, const ls_spectator_stats *st,
                       int status, const char *why)
{
    ls_uv_stats us = ls_uv_stats_get(w->uv);
    ls_spectator_state state = ls_spectator_state_get(w->spec);
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "role"), json_str(&j, "spectator");
    json_key(&j, "index"), json_u64(&j, c->index);
    json_key(&j, "status");
    json_str(&j, state == LS_SPECTATOR_FINISHED  ? "finished"
                 : state == LS_SPECTATOR_DROPPED ? "dropped"
                 : w->timed_out                  ? "timeout"
                                                 : "running");
    json_key(&j, "ticks"), json_u64(&j, ls_spectator_ticks(w->spec));
    json_key(&j, "final_checksum"), json_hex64(&j, ls_spectator_last_checksum(w->spec));
    json_key(&j, "mismatches"), json_u64(&j, st->mismatches);
    json_key(&j, "mismatch_events"), json_array_begin(&j);
    for (uint32_t i = 0; i < c->mismatches.n; i++) {
        json_object_begin(&j);
        json_key(&j, "tick"), json_u64(&j, c->mismatches.v[i].tick);
        json_key(&j, "expected"), json_hex64(&j, c->mismatches.v[i].expected);
        json_key(&j, "got"), json_hex64(&j, c->mismatches.v[i].got);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_key(&j, "events_omitted"), json_u64(&j, c->mismatches.total - c->mismatches.n);
    json_key(&j, "stats"), json_object_begin(&j);
    json_key(&j, "packets_out"), json_u64(&j, us.sent);
    json_key(&j, "packets_in"), json_u64(&j, st->packets_in);
    json_key(&j, "bytes_in"), json_u64(&j, st->bytes_in);
    json_key(&j, "duplicates"), json_u64(&j, st->duplicates);
    json_key(&j, "dropped"), json_u64(&j, st->dropped);
    json_key(&j, "snapshots"), json_u64(&j, st->snapshots);
    json_object_end(&j);
    json_key(&j, "result"), json_str(&j, status == CLI_EXIT_OK ? "ok" : "failed");
    json_key(&j, "reason");
    why ? json_str(&j, why) : json_null(&j);
    json_object_end(&j);
    json_finish(&j);
}

static int run_spectator(const bot_opts *o, ls_net_credential *cred, const char *scene,
                         const ls_net_addr *relay)
{
    watch_app w;
    memset(&w, 0, sizeof w);
    w.relay = *relay;
    ls_spectator_def vd = ls_default_spectator_def();
    ls_spectator_def_set_credential(&vd, cred);
    ls_net_credential_wipe(cred);
    // A spectator pushes nothing: slot LS_SCENE_MAX_PLAYERS owns no body.
    if (!net_game_init(&w.game, "bot", scene, o->seed, LS_SCENE_MAX_PLAYERS,
                       LS_SCENE_MAX_PLAYERS)) {
        memset(vd.key, 0, sizeof vd.key);
        return CLI_EXIT_ERROR;
    }
    watch_ctx ctx = {vd.index, &w.game, o->json ? stderr : stdout, o->json, {0}};
    vd.relay = *relay;
    vd.cb.user = &ctx;
    vd.cb.advance = watch_advance;
    vd.cb.on_event = watch_ctx_event;
    ls_error err;
    w.spec = ls_spectator_create(&vd, &err);
    memset(vd.key, 0, sizeof vd.key);
    ls_uv_def ud = ls_default_uv_def();
    ud.fault = o->fault;
    ud.signals = true;
    ud.user = &w;
    ud.on_recv = watch_recv;
    ud.on_timer = watch_timer;
    ud.on_signal = watch_signal;
    ud.bind_host = relay->ip[0] == 127 ? "127.0.0.1" : "0.0.0.0";
    char msg[256];
    w.uv = w.spec ? ls_uv_create(&ud, msg, sizeof msg) : NULL;
    int status = CLI_EXIT_ERROR;
    if (!w.spec) {
        cli_print_error("lockstep bot", &err);
    } else if (!w.uv) {
        fprintf(stderr, "lockstep bot: %s\n", msg);
    } else {
        setvbuf(stdout, NULL, _IOLBF, 0);
        w.started = ls_uv_now_us(w.uv);
        w.deadline_us = o->deadline * 1000000u;
        w.relay_timeout_us = o->relay_timeout * 1000000u;
        w.last_heard = w.started;
        ls_spectator_poll(w.spec, w.started);
        watch_pump(&w);
        ls_uv_run(w.uv);
        ls_spectator_stats st = ls_spectator_stats_get(w.spec);
        ls_uv_stats us = ls_uv_stats_get(w.uv);
        ls_spectator_state state = ls_spectator_state_get(w.spec);
        fprintf(ctx.log,
                "result spectator=%u ticks=%u checksum=%016llx mismatches=%u packets_out=%llu "
                "packets_in=%llu bytes_in=%llu duplicates=%llu dropped=%llu state=%s\n",
                vd.index, ls_spectator_ticks(w.spec),
                (unsigned long long)ls_spectator_last_checksum(w.spec), st.mismatches,
                (unsigned long long)us.sent, (unsigned long long)st.packets_in,
                (unsigned long long)st.bytes_in, (unsigned long long)st.duplicates,
                (unsigned long long)st.dropped,
                state == LS_SPECTATOR_FINISHED  ? "finished"
                : state == LS_SPECTATOR_DROPPED ? "dropped"
                : w.timed_out                   ? "timeout"
                                                : "running");
        fflush(ctx.log);
        status = state != LS_SPECTATOR_FINISHED ? CLI_EXIT_ERROR
                 : st.mismatches                ? CLI_EXIT_MISMATCH
                                                : CLI_EXIT_OK;
        char why[128] = "";
        if (state != LS_SPECTATOR_FINISHED) {
            snprintf(why, sizeof why, "spectator %u stopped at tick %u (%s)", vd.index,
                     ls_spectator_ticks(w.spec),
                     w.relay_silent ? "the relay went silent"
                     : w.signal     ? "signal"
                     : w.timed_out  ? "--deadline"
                                    : "dropped by the relay");
            fprintf(stderr, "lockstep bot: %s\n", why);
        } else if (st.mismatches) {
            snprintf(why, sizeof why, "%u tick%s did not end on the players' agreed checksum",
                     st.mismatches, st.mismatches == 1 ? "" : "s");
        }
        if (o->json) {
            watch_json(&w, &ctx, &st, status, why[0] ? why : NULL);
        }
    }
    ls_uv_destroy(w.uv);
    ls_spectator_destroy(w.spec);
    net_game_free(&w.game);
    net_event_list_free(&ctx.mismatches);
    return status;
}

int cmd_bot(int argc, char **argv)
{
    bot_opts o;
    if (!parse(argc, argv, &o)) {
        return CLI_EXIT_USAGE;
    }
    bot_app b;
    memset(&b, 0, sizeof b);
    ls_peer_def pd = ls_default_peer_def();
    if (o.ws) { // the peer core's destination: never used for sending (the WebSocket is)
        b.relay = ls_net_addr_ipv4(127, 0, 0, 1, 1);
    } else if (!ls_uv_parse_addr(o.relay, &b.relay)) {
        cli_usage_error(&cmd_bot_def, "--relay wants IPv4:PORT with PORT 1..65535, got '%s'",
                        o.relay);
        return CLI_EXIT_USAGE;
    }
    ls_net_credential cred;
    if (!read_credential(&o, &cred)) {
        return CLI_EXIT_ERROR;
    }
    char found[4096];
    const char *scene = o.scene ? cli_find_scene(o.scene, found, sizeof found)
                                : cli_default_scene(&cmd_bot_def, found, sizeof found);
    if (!scene) {
        ls_net_credential_wipe(&cred);
        return CLI_EXIT_ERROR;
    }
    if (o.start_delay) {
        struct timespec ts = {(time_t)(o.start_delay / 1000),
                              (long)(o.start_delay % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    if (cred.role == LS_NET_ROLE_SPECTATOR && o.ws) {
        ls_net_credential_wipe(&cred);
        cli_usage_error(&cmd_bot_def, "--ws is for players: a spectator watches over UDP");
        return CLI_EXIT_USAGE;
    }
    if (cred.role == LS_NET_ROLE_SPECTATOR) {
        return run_spectator(&o, &cred, scene, &b.relay);
    }
    ls_peer_def_set_credential(&pd, &cred);
    ls_net_credential_wipe(&cred);
    // The slot count arrives with WELCOME; the script covers every scene player.
    if (!net_game_init(&b.game, "bot", scene, o.seed, pd.slot, LS_SCENE_MAX_PLAYERS)) {
        wipe_key(&pd);
        return CLI_EXIT_ERROR;
    }
    b.game.perturb_tick = o.perturb;
    b.game.owner = &b;
    b.log = o.json ? stderr : stdout;
    b.json = o.json;
    pd.relay = b.relay;
    pd.max_lead = (uint32_t)o.max_lead;
    pd.mode = o.rollback ? LS_PEER_ROLLBACK : LS_PEER_LOCKSTEP;
    pd.max_prediction = (uint32_t)o.max_prediction;
    pd.cb.save = net_game_save;
    pd.cb.load = net_game_load;
    pd.cb.state_checksum = net_game_state_checksum;
    pd.rejoin = true; // if the relay times us out, come back (when it allows rejoins)
    pd.first_seq = o.first_seq;
    if (o.first_seq_clock) { // Unix time in us x 4096: above what an earlier process sent
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        pd.first_seq = ((uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u) * 4096u;
    }
    pd.restarted = o.restarted;
    b.outage_tick = o.outage_tick;
    b.outage_ms = o.outage_ms;
    b.rollback = o.rollback;
    pd.cb.user = &b.game;
    pd.cb.local_input = net_game_local_input;
    pd.cb.advance = net_game_advance;
    pd.cb.on_event = on_event;
    ls_error err;
    b.peer = ls_peer_create(&pd, &err);
    wipe_key(&pd);
    char msg[256];
    ls_uv_def ud = ls_default_uv_def();
    ud.fault = o.fault;
    ud.signals = true;
    ud.user = &b;
    ud.on_recv = on_recv;
    ud.on_timer = on_timer;
    ud.on_signal = on_signal;
    ud.bind_host = b.relay.ip[0] == 127 ? "127.0.0.1" : "0.0.0.0";
    b.uv = b.peer ? ls_uv_create(&ud, msg, sizeof msg) : NULL;
    int status = CLI_EXIT_ERROR;
    if (!b.peer) {
        cli_print_error("lockstep bot", &err);
    } else if (!b.uv) {
        fprintf(stderr, "lockstep bot: %s\n", msg);
    } else if (o.ws && !(b.ws = ws_client_create(o.ws, ls_uv_loop(b.uv), &b, on_ws_recv, msg,
                                                 sizeof msg))) {
        fprintf(stderr, "lockstep bot: %s\n", msg);
    } else {
        setvbuf(stdout, NULL, _IOLBF, 0);
        b.started = ls_uv_now_us(b.uv);
        b.deadline_us = o.deadline * 1000000u;
        b.relay_timeout_us = o.relay_timeout * 1000000u;
        b.last_heard = b.started;
        ls_peer_poll(b.peer, b.started);
        pump(&b);
        ls_uv_run(b.uv);
        print_result(&b, pd.slot);
        // Only our own failure fails us: a slot a majority named, or a disputed tick.
        ls_peer_stats fin = ls_peer_stats_get(b.peer);
        status = !b.finished                 ? CLI_EXIT_ERROR
                 : fin.named || fin.disputes ? CLI_EXIT_MISMATCH
                                             : CLI_EXIT_OK;
        char why[256];
        if (status != CLI_EXIT_OK) {
            explain(&b, &o, why, sizeof why);
            fprintf(stderr, "lockstep bot: %s\n", why);
        }
        if (o.json) {
            print_json(&b, pd.slot, status, status != CLI_EXIT_OK ? why : NULL);
        }
    }
    ws_client_close(b.ws); // its handles close as ls_uv_destroy runs the loop
    ls_uv_destroy(b.uv);
    ws_client_free(b.ws);
    ls_peer_destroy(b.peer);
    net_game_free(&b.game);
    net_event_list_free(&b.desyncs);
    net_event_list_free(&b.disconnects);
    net_event_list_free(&b.rejoins);
    return status;
}
