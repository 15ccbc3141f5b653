// SPDX-License-Identifier: MIT
// `lockstep bot`: one lockstep peer over UDP. It simulates the scene in
// lockstep with the other peers, pushes its own body with a seeded script,
// reports a checksum every tick and prints its final checksum and stats.
#include "../net/uv/transport_uv.h"
#include "cli.h"
#include "ls/net_peer.h"
#include "net_tool.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cli_command cmd_bot_def = {
    "bot", "a lockstep peer: plays the scene through the relay, prints its final checksum",
    "--relay HOST:PORT --session ID --slot K --token HEX [--scene FILE] [--seed S]\n"
    "       [--max-lead N] [--deadline S] [--relay-timeout S] [--perturb-tick T] [fault "
    "options]\n\n"
    "  --relay HOST:PORT  the relay\n"
    "  --session ID       session id (printed by the relay)\n"
    "  --slot K           our slot; we push the scene's player K body\n"
    "  --token HEX        our slot's 128-bit token (32 hex digits, printed by the relay)\n"
    "  --scene FILE       the scene every peer simulates (default tools/scenes/arena.scene,\n"
    "                     else the installed arena.scene)\n"
    "  --seed S           seed of the scripted pushes (default 1)\n"
    "  --max-lead N       ticks of input we may produce beyond what we simulated (default 8)\n"
    "  --deadline S       give up after S seconds (default 300)\n"
    "  --relay-timeout S  give up when the relay is silent for S seconds (default 10)\n"
    "  --perturb-tick T   diverge on purpose at tick T (desync demo)\n" NET_FAULT_USAGE
    "\nExit status 0 when the match finished, 3 when it finished but the relay reported a\n"
    "desync, 1 when the relay went silent, the deadline passed or we were disconnected.",
    cmd_bot};

typedef struct bot_app {
    ls_peer *peer;
    ls_uv *uv;
    net_game game;
    ls_net_addr relay;
    uint64_t deadline_us, started, last_heard, relay_timeout_us;
    bool timed_out, finished, relay_silent, heard;
    int signal; ///< SIGINT/SIGTERM that stopped us (0: none).
} bot_app;

static void pump(bot_app *b)
{
    ls_net_datagram d;
    while (ls_peer_next_datagram(b->peer, &d)) {
        ls_uv_send(b->uv, &d.to, d.data, d.len);
    }
}

static void on_recv(void *user, const ls_net_addr *from, const uint8_t *data, size_t len,
                    uint64_t now)
{
    bot_app *b = user;
    if (!ls_net_addr_equal(from, &b->relay)) {
        return; // only the relay talks to us
    }
    b->last_heard = now;
    b->heard = true;
    ls_peer_receive(b->peer, data, len, now);
    ls_peer_poll(b->peer, now);
    pump(b);
}

static void on_timer(void *user, uint64_t now)
{
    bot_app *b = user;
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
    switch (ev->type) {
    case LS_PEER_EV_WELCOME:
        printf("bot %u: joined\n", g->slot);
        break;
    case LS_PEER_EV_DESYNC:
        printf("bot %u: relay reports desync at tick %u (slots 0x%04x, majority %016llx)\n",
               g->slot, ev->tick, ev->slots, (unsigned long long)ev->expected);
        break;
    case LS_PEER_EV_DISCONNECTED:
        printf("bot %u: slot %u disconnected from tick %u (%s)\n", g->slot, ev->slot, ev->tick,
               ev->reason == LS_NET_LEFT      ? "left"
               : ev->reason == LS_NET_TIMEOUT ? "timeout"
                                              : "kicked");
        break;
    case LS_PEER_EV_FINISHED:
        break;
    }
    fflush(stdout);
}

typedef struct bot_opts {
    const char *relay, *scene, *token;
    uint64_t session, slot, seed, max_lead, deadline, relay_timeout;
    int64_t perturb;
    ls_net_fault_def fault;
} bot_opts;

static const char *const value_options[] = {
    "--relay",    "--scene",    "--token",         "--session",      "--slot", "--seed",
    "--max-lead", "--deadline", "--relay-timeout", "--perturb-tick", "--loss", "--dup",
    "--reorder",  "--delay-ms", "--jitter",        "--fault-seed"};

static bool takes_value(const char *a)
{
    return cli_is_one_of(a, value_options, sizeof value_options / sizeof value_options[0]);
}

static bool parse(int argc, char **argv, bot_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->max_lead = 8;
    o->deadline = 300;
    o->relay_timeout = 10;
    o->perturb = -1;
    o->slot = UINT64_MAX;
    o->fault.seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        uint64_t n;
        if (net_cli_fault_option("bot", argc, argv, &i, &o->fault, &ok)) {
        } else if (!v || !takes_value(a)) {
            if (takes_value(a)) {
                cli_usage_error(&cmd_bot_def, "%s needs a value", a);
            } else {
                cli_unexpected(&cmd_bot_def, a);
            }
            return false;
        } else if (strcmp(a, "--relay") == 0) {
            o->relay = v, i++;
        } else if (strcmp(a, "--scene") == 0) {
            o->scene = v, i++;
        } else if (strcmp(a, "--token") == 0) {
            o->token = v, i++;
        } else if (strcmp(a, "--session") == 0) {
            ok = net_cli_u64("bot", a, v, 1, UINT32_MAX, &o->session), i++;
        } else if (strcmp(a, "--slot") == 0) {
            ok = net_cli_u64("bot", a, v, 0, LS_NET_MAX_SLOTS - 1, &o->slot), i++;
        } else if (strcmp(a, "--seed") == 0) {
            ok = net_cli_u64("bot", a, v, 0, UINT64_MAX, &o->seed), i++;
        } else if (strcmp(a, "--max-lead") == 0) {
            ok = net_cli_u64("bot", a, v, 1, LS_NET_MAX_LEAD, &o->max_lead), i++;
        } else if (strcmp(a, "--deadline") == 0) {
            ok = net_cli_u64("bot", a, v, 1, 86400, &o->deadline), i++;
        } else if (strcmp(a, "--relay-timeout") == 0) {
            ok = net_cli_u64("bot", a, v, 1, 86400, &o->relay_timeout), i++;
        } else {
            ok = net_cli_u64("bot", a, v, 0, UINT32_MAX, &n), i++; // --perturb-tick
            o->perturb = (int64_t)n;
        }
        if (!ok) {
            return false;
        }
    }
    const char *missing = !o->relay               ? "--relay HOST:PORT"
                          : !o->session           ? "--session ID"
                          : o->slot == UINT64_MAX ? "--slot K"
                          : !o->token             ? "--token HEX"
                                                  : NULL;
    if (missing) {
        cli_usage_error(&cmd_bot_def,
                        "missing %s (--relay, --session, --slot and --token are "
                        "required)",
                        missing);
        return false;
    }
    return true;
}

static void print_result(bot_app *b, uint32_t slot)
{
    ls_peer_stats st = ls_peer_stats_get(b->peer);
    ls_uv_stats us = ls_uv_stats_get(b->uv);
    ls_peer_state state = ls_peer_state_get(b->peer);
    printf("result slot=%u ticks=%u checksum=%016llx desyncs=%u rtt_us=%u packets_out=%llu "
           "bytes_out=%llu packets_in=%llu bytes_in=%llu duplicates=%llu stalls=%llu "
           "clock_shifts=%u fault_dropped=%llu state=%s\n",
           slot, ls_peer_ticks(b->peer), (unsigned long long)ls_peer_last_checksum(b->peer),
           st.desyncs, st.rtt_us, (unsigned long long)us.sent, (unsigned long long)us.sent_bytes,
           (unsigned long long)st.packets_in, (unsigned long long)st.bytes_in,
           (unsigned long long)st.duplicates, (unsigned long long)st.stalls, st.clock_shifts,
           (unsigned long long)us.fault_dropped,
           b->timed_out                               ? "timeout"
           : b->finished || state == LS_PEER_FINISHED ? "finished"
           : state == LS_PEER_LEFT                    ? "disconnected"
                                                      : "running");
    fflush(stdout);
}

// Why the bot stopped, when it did not finish: one line on stderr.
static void explain(const bot_app *b, const bot_opts *o)
{
    if (b->relay_silent && !b->heard) {
        fprintf(stderr,
                "lockstep bot: no answer from the relay at %s in %llu s (is it running? is the "
                "session/token right? see --relay-timeout)\n",
                o->relay, (unsigned long long)o->relay_timeout);
    } else if (b->relay_silent) {
        fprintf(stderr, "lockstep bot: the relay at %s went silent for %llu s at tick %u\n",
                o->relay, (unsigned long long)o->relay_timeout, ls_peer_ticks(b->peer));
    } else if (b->signal) {
        fprintf(stderr, "lockstep bot: stopped by %s at tick %u\n",
                b->signal == SIGINT ? "SIGINT" : "SIGTERM", ls_peer_ticks(b->peer));
    } else if (b->timed_out) {
        fprintf(stderr, "lockstep bot: gave up after %llu s (--deadline) at tick %u\n",
                (unsigned long long)o->deadline, ls_peer_ticks(b->peer));
    } else {
        fprintf(stderr, "lockstep bot: disconnected at tick %u before the match finished\n",
                ls_peer_ticks(b->peer));
    }
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
    if (!ls_uv_parse_addr(o.relay, &b.relay)) {
        cli_usage_error(&cmd_bot_def, "--relay wants IPv4:PORT with PORT 1..65535, got '%s'",
                        o.relay);
        return CLI_EXIT_USAGE;
    }
    if (!net_token_parse(o.token, pd.token)) {
        cli_usage_error(&cmd_bot_def,
                        "--token wants 32 hex digits (as printed by the relay), "
                        "got '%s'",
                        o.token);
        return CLI_EXIT_USAGE;
    }
    char found[4096];
    const char *scene = o.scene ? cli_find_scene(o.scene, found, sizeof found)
                                : cli_default_scene(&cmd_bot_def, found, sizeof found);
    if (!scene) {
        return CLI_EXIT_ERROR;
    }
    // The slot count arrives with WELCOME; the script covers every scene player.
    if (!net_game_init(&b.game, "bot", scene, o.seed, (uint32_t)o.slot, LS_SCENE_MAX_PLAYERS)) {
        return CLI_EXIT_ERROR;
    }
    b.game.perturb_tick = o.perturb;
    pd.session = (uint32_t)o.session;
    pd.slot = (uint32_t)o.slot;
    pd.relay = b.relay;
    pd.max_lead = (uint32_t)o.max_lead;
    pd.cb.user = &b.game;
    pd.cb.local_input = net_game_local_input;
    pd.cb.advance = net_game_advance;
    pd.cb.on_event = on_event;
    ls_error err;
    b.peer = ls_peer_create(&pd, &err);
    char msg[256];
    ls_uv_def ud = {"0.0.0.0", 0, o.fault, 1000, true, &b, on_recv, on_timer, on_signal};
    ud.bind_host = b.relay.ip[0] == 127 ? "127.0.0.1" : "0.0.0.0";
    b.uv = b.peer ? ls_uv_create(&ud, msg, sizeof msg) : NULL;
    int status = CLI_EXIT_ERROR;
    if (!b.peer) {
        cli_print_error("lockstep bot", &err);
    } else if (!b.uv) {
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
        print_result(&b, (uint32_t)o.slot);
        if (!b.finished) {
            explain(&b, &o);
        } else if (ls_peer_stats_get(b.peer).desyncs) {
            fprintf(stderr, "lockstep bot: finished, but the relay reported %u desync%s\n",
                    ls_peer_stats_get(b.peer).desyncs,
                    ls_peer_stats_get(b.peer).desyncs == 1 ? "" : "s");
        }
        status = !b.finished                         ? CLI_EXIT_ERROR
                 : ls_peer_stats_get(b.peer).desyncs ? CLI_EXIT_MISMATCH
                                                     : CLI_EXIT_OK;
    }
    ls_uv_destroy(b.uv);
    ls_peer_destroy(b.peer);
    net_game_free(&b.game);
    return status;
}
