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
    "--relay HOST:PORT --session ID --slot K --token HEX --scene FILE [--seed S]\n"
    "       [--max-lead N] [--deadline SECONDS] [--perturb-tick T] [fault options]\n\n"
    "  --relay HOST:PORT  the relay\n"
    "  --session ID       session id (printed by the relay)\n"
    "  --slot K           our slot; we push the scene's player K body\n"
    "  --token HEX        our slot's 128-bit token (32 hex digits, printed by the relay)\n"
    "  --scene FILE       the scene every peer simulates (e.g. tools/scenes/arena.scene)\n"
    "  --seed S           seed of the scripted pushes (default 1)\n"
    "  --max-lead N       ticks of input we may produce beyond what we simulated (default 8)\n"
    "  --deadline S       give up after S seconds (default 300)\n"
    "  --relay-timeout S  give up when the relay is silent for S seconds (default 10)\n"
    "  --perturb-tick T   diverge on purpose at tick T (desync demo)\n" NET_FAULT_USAGE,
    cmd_bot};

typedef struct bot_app {
    ls_peer *peer;
    ls_uv *uv;
    net_game game;
    ls_net_addr relay;
    uint64_t deadline_us, started, last_heard, relay_timeout_us;
    bool timed_out, finished, relay_silent;
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
        } else if (!v) {
            fprintf(stderr, "lockstep bot: unexpected argument '%s'\n", a);
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
        } else if (strcmp(a, "--perturb-tick") == 0) {
            ok = net_cli_u64("bot", a, v, 0, UINT32_MAX, &n), i++;
            o->perturb = (int64_t)n;
        } else {
            fprintf(stderr, "lockstep bot: unexpected argument '%s'\n", a);
            return false;
        }
        if (!ok) {
            return false;
        }
    }
    if (!o->relay || !o->scene || !o->token || !o->session || o->slot == UINT64_MAX) {
        fprintf(stderr, "lockstep bot: --relay, --session, --slot, --token and --scene are "
                        "required (see --help)\n");
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

int cmd_bot(int argc, char **argv)
{
    bot_opts o;
    if (!parse(argc, argv, &o)) {
        return 2;
    }
    bot_app b;
    memset(&b, 0, sizeof b);
    ls_peer_def pd = ls_default_peer_def();
    if (!ls_uv_parse_addr(o.relay, &b.relay) || !net_token_parse(o.token, pd.token)) {
        fprintf(stderr, "lockstep bot: bad --relay (HOST:PORT) or --token (32 hex digits)\n");
        return 2;
    }
    // The slot count arrives with WELCOME; the script covers every scene player.
    if (!net_game_init(&b.game, o.scene, o.seed, (uint32_t)o.slot, LS_SCENE_MAX_PLAYERS)) {
        return 1;
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
    b.peer = ls_peer_create(&pd, NULL);
    char msg[256];
    ls_uv_def ud = {"0.0.0.0", 0, o.fault, 1000, true, &b, on_recv, on_timer, on_signal};
    ud.bind_host = b.relay.ip[0] == 127 ? "127.0.0.1" : "0.0.0.0";
    b.uv = b.peer ? ls_uv_create(&ud, msg, sizeof msg) : NULL;
    int status = 1;
    if (!b.uv) {
        fprintf(stderr, "lockstep bot: %s\n", b.peer ? msg : "bad peer settings");
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
        status = b.finished ? 0 : 1;
    }
    ls_uv_destroy(b.uv);
    ls_peer_destroy(b.peer);
    net_game_free(&b.game);
    return status;
}
