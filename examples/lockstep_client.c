// SPDX-License-Identifier: MIT
// A lockstep client on the game's own loop: the sans-IO peer (ls/net_peer.h)
// plays the reference push game against a `lockstep relay`, over a plain
// POSIX UDP socket that this program owns. The library never touches the
// network or the clock: the loop below feeds it datagrams and the time, and
// sends what it produces. Every peer prints the same final checksum.
//
// Reconnect comes with the callbacks: a client that can save, load and checksum its
// world (save / load / state_checksum below) rejoins by itself when the relay timed it
// out (a network outage, or the process stopped for longer than the session's timeout):
// ls_default_peer_def()'s `rejoin` is LS_PEER_REJOIN_AUTO. The relay must allow it
// (`lockstep relay --rejoin-ms MS`).
//
//     cc lockstep_client.c $(pkg-config --cflags --libs lockstep) -o lockstep_client
//     lockstep relay --slots 2 --ticks 300 --credentials .   # prints the port; one
//                                                             # credential file per slot
//     ./lockstep_client 127.0.0.1 PORT session-1-slot-0.cred arena.scene &
//     ./lockstep_client 127.0.0.1 PORT session-1-slot-1.cred arena.scene rollback
//
// A fifth argument `rollback` plays in rollback mode: the peer predicts the inputs it
// lacks for up to max_prediction ticks and, when one arrives different, loads the state
// saved at that tick (the same save / load callbacks) and re-simulates. Both modes play
// in one match and end on the same checksum: only confirmed ticks are compared.
#define _POSIX_C_SOURCE 200809L
#include <ls/game.h>
#include <ls/net_auth.h>
#include <ls/net_peer.h>
#include <ls/scene.h>
#include <ls/world.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// [game]
// The game the peer drives: a world, its scene and a scripted "player".
typedef struct game {
    ls_scene scene;
    ls_world *world;
    ls_input_script script;
    uint32_t slot;
    uint8_t row[LS_SCENE_MAX_PLAYERS];
} game;

static void local_input(void *user, uint32_t tick, uint8_t *out, uint32_t input_size)
{
    (void)tick, (void)input_size;
    game *g = user;
    ls_input_script_next(&g->script, g->row, 1); // a person holding keys
    out[0] = g->row[g->slot];
}

static uint64_t advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                        uint32_t input_size)
{
    (void)tick;
    game *g = user;
    return ls_game_tick(g->world, &g->scene, inputs, slots, input_size);
}
// [game]

// [save_load]
// Rollback, rejoin (and serving a rejoiner's snapshot): the world's snapshot and checksum. The
// checksum of the state at the start of `tick` is the one advance returned for tick - 1.
static size_t save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    (void)tick;
    game *g = user;
    size_t need = ls_world_snapshot_size(g->world);
    return buf && cap >= need ? ls_world_snapshot_save(g->world, buf, cap) : need;
}

static bool load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    (void)tick;
    game *g = user;
    return ls_world_snapshot_restore(g->world, buf, size, NULL) == LS_OK;
}

static uint64_t state_checksum(void *user, uint32_t tick)
{
    (void)tick;
    const game *g = user;
    return ls_world_checksum(g->world);
}
// [save_load]

static void on_event(void *user, const ls_peer_event *ev)
{
    game *g = user;
    if (ev->type == LS_PEER_EV_DESYNC) {
        printf("desync at tick %u\n", ev->tick);
    } else if (ev->type == LS_PEER_EV_DISCONNECTED) {
        printf("slot %u left at tick %u\n", ev->slot, ev->tick);
    } else if (ev->type == LS_PEER_EV_REJOINED) {
        printf("slot %u is back from tick %u\n", ev->slot, ev->tick);
    } else if (ev->type == LS_PEER_EV_INTERRUPTED) { // long before the relay's timeout
        printf("%s interrupted (%u ms to the timeout)\n",
               ev->slot == g->slot ? "network" : "player", ev->count);
    } else if (ev->type == LS_PEER_EV_RESUMED) {
        printf("slot %u resumed after %u ms\n", ev->slot, ev->count);
    }
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int main(int argc, char **argv)
{
    if (argc != 5 && !(argc == 6 && strcmp(argv[5], "rollback") == 0)) {
        fprintf(stderr, "usage: lockstep_client RELAY_IP PORT CREDENTIAL_FILE SCENE [rollback]\n");
        return 2;
    }
    // The slot's credential (session, slot, secret key): it never goes on the wire.
    ls_peer_def pd = ls_default_peer_def();
    ls_net_credential cred;
    ls_error err;
    if (ls_net_credential_read(argv[3], &cred, &err) != LS_OK ||
        ls_peer_def_set_credential(&pd, &cred) != LS_OK) {
        fprintf(stderr, "lockstep_client: %s: %s\n", argv[3], err.message);
        return 2;
    }
    ls_net_credential_wipe(&cred);
    struct sockaddr_in relay;
    memset(&relay, 0, sizeof relay);
    relay.sin_family = AF_INET;
    relay.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &relay.sin_addr) != 1) {
        fprintf(stderr, "lockstep_client: RELAY_IP must be an IPv4 address\n");
        return 2;
    }

    game g;
    memset(&g, 0, sizeof g);
    if (ls_scene_load(argv[4], &g.scene, &err) != LS_OK ||
        !(g.world = ls_scene_instantiate(&g.scene, &err))) {
        char line[LS_ERROR_PATH_MAX + LS_ERROR_MESSAGE_MAX + 8];
        ls_error_format(&err, line, sizeof line);
        fprintf(stderr, "lockstep_client: %s\n", line);
        return 1;
    }
    g.slot = pd.slot;
    ls_input_script_init(&g.script, 1, LS_SCENE_MAX_PLAYERS);

    // [callbacks]
    pd.relay.family = 4;
    memcpy(pd.relay.ip, &relay.sin_addr, 4);
    pd.relay.port = ntohs(relay.sin_port);
    pd.cb.user = &g;
    pd.cb.local_input = local_input;
    pd.cb.advance = advance;
    pd.cb.on_event = on_event;
    pd.cb.save = save;
    pd.cb.load = load;
    pd.cb.state_checksum = state_checksum; // with load: this client rejoins (AUTO)
    // [callbacks]
    // [rollback_mode]
    if (argc == 6) {
        pd.mode = LS_PEER_ROLLBACK; // save and load are required in this mode
        pd.max_prediction = 8;      // ticks simulated ahead on predicted inputs (0..64)
    }
    // [rollback_mode]
    ls_peer *peer = ls_peer_create(&pd, &err);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (!peer || fd < 0) {
        fprintf(stderr, "lockstep_client: %s\n", peer ? "no UDP socket" : err.message);
        return 1;
    }

    // [loop]
    // The game's loop: wait up to 1 ms for a datagram, hand it to the peer, let
    // the peer advance and produce datagrams, send them. 60 s at most.
    uint64_t start = now_us();
    while (ls_peer_state_get(peer) != LS_PEER_FINISHED && ls_peer_state_get(peer) != LS_PEER_LEFT &&
           now_us() - start < 60000000u) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 1) > 0) {
            uint8_t buf[LS_NET_MAX_DATAGRAM];
            ssize_t n;
            while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
                ls_peer_receive(peer, buf, (size_t)n, now_us());
            }
        }
        ls_peer_poll(peer, now_us());
        ls_net_datagram d;
        while (ls_peer_next_datagram(peer, &d)) {
            sendto(fd, d.data, d.len, 0, (const struct sockaddr *)&relay, sizeof relay);
        }
    }
    // [loop]
    bool finished = ls_peer_state_get(peer) == LS_PEER_FINISHED;
    printf("slot %u: %s after %u ticks, checksum %016llx\n", g.slot,
           finished ? "finished" : "stopped", ls_peer_ticks(peer),
           (unsigned long long)ls_peer_last_checksum(peer));
    ls_peer_stats st = ls_peer_stats_get(peer);
    printf("network: rtt to the relay %u us, %u kbps in, %u kbps out, rejoins %s (%u)\n", st.rtt_us,
           st.kbps_in, st.kbps_out, ls_peer_rejoins(peer) ? "on" : "off", st.rejoins);
    if (pd.mode == LS_PEER_ROLLBACK) {
        printf("rollback: %llu rollbacks, %llu ticks re-simulated in %llu frames, "
               "%llu of %llu predictions right\n",
               (unsigned long long)st.rollbacks, (unsigned long long)st.resimulated,
               (unsigned long long)st.frames, (unsigned long long)st.predicted_hits,
               (unsigned long long)st.predicted);
    }
    for (uint32_t k = 0; k < ls_peer_welcome(peer).u.welcome.slots; k++) {
        ls_peer_remote_stats r = ls_peer_remote_stats_get(peer, k);
        printf("  slot %u: inputs below tick %u, %d frames behind us, %u interruptions\n", k,
               r.frontier, r.frames_behind, r.interruptions);
    }
    close(fd);
    ls_peer_destroy(peer);
    ls_world_destroy(g.world);
    ls_scene_free(&g.scene);
    return finished ? 0 : 1;
}
