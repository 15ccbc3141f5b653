// SPDX-License-Identifier: MIT
// The browser peer's API (issue 31): the sans-IO peer (net/src: peer, rollback
// core, wire codec, outbox, auth), the physics and the reference games, compiled
// for wasm32-wasi as a reactor module (mk/browser_peer.mk). The page or Node.js
// (peer.js) calls _initialize, then these exports; it owns the WebSocket and the
// clock, and hands bytes and times in and out, as `lockstep bot` does with UDP.
//
// One peer per module instance. Its game is the bot's (tools/net_tool.c): the
// scene's world stepped by ls_game_tick with every slot's input, snapshots for
// rollback and rejoin, the world checksum as the state checksum. Our slot's input
// is either the soccer bot's (ls_soccer_bot_input from the world as this peer has
// it, as `lockstep bot` plays) or the byte bp_set_input last set (a person's
// keys). Nothing here touches a float: the page divides Q16.16 integers itself.
#include "ls/game.h"
#include "ls/net_auth.h"
#include "ls/net_peer.h"
#include "ls/net_spectator.h"
#include "ls/world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __wasm__
#define BP_EXPORT(name) __attribute__((export_name(#name))) name
#else
#define BP_EXPORT(name) name
#endif

#include "api.h"

typedef struct bp_app {
    ls_scene scene;
    bool scene_loaded;
    ls_world *world;
    ls_soccer_bot bot;
    bool use_bot;
    uint8_t input; // our input byte when the bot does not play
    ls_input_script script;
    uint8_t row[LS_SCENE_MAX_PLAYERS * 64];
    uint32_t slot;
    ls_peer *peer;
    ls_spectator *spec; // a spectator credential: watch instead (no peer)
    ls_net_datagram out;
    uint32_t events[16]; // per ls_peer_event_type
    uint32_t last_event_tick[16];
} bp_app;

static bp_app app;
static char error_text[512];

static void set_error(const char *what, const ls_error *err)
{
    char line[LS_ERROR_PATH_MAX + LS_ERROR_MESSAGE_MAX + 32];
    if (err) {
        ls_error_format(err, line, sizeof line);
        snprintf(error_text, sizeof error_text, "%s: %s [%s]", what, line,
                 ls_result_name(err->code));
    } else {
        snprintf(error_text, sizeof error_text, "%s", what);
    }
}

// Zero a secret (volatile: not optimised away).
static void wipe(void *p, size_t n)
{
    volatile uint8_t *b = p;
    while (n--) {
        *b++ = 0;
    }
}

// ---- the game (as tools/net_tool.c's net_game_* callbacks) ----

static void local_input(void *user, uint32_t tick, uint8_t *out, uint32_t input_size)
{
    bp_app *a = user;
    (void)tick;
    memset(out, 0, input_size);
    if (input_size == 0) {
        return;
    }
    if (a->use_bot && a->scene.game == LS_SCENE_GAME_SOCCER) {
        out[0] = ls_soccer_bot_input(&a->bot, a->world, &a->scene);
    } else if (a->use_bot) { // the push game's seeded script, as the native bot
        uint32_t isz = input_size < 64 ? input_size : 64;
        ls_input_script_next(&a->script, a->row, isz);
        if (a->slot < a->script.players) {
            memcpy(out, a->row + (size_t)a->slot * isz, isz);
        }
    } else {
        out[0] = a->input;
    }
}

static uint64_t advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                        uint32_t input_size)
{
    bp_app *a = user;
    (void)tick;
    return ls_game_tick(a->world, &a->scene, inputs, slots, input_size);
}

static size_t save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    bp_app *a = user;
    (void)tick;
    size_t need = ls_world_snapshot_size(a->world);
    return buf && cap >= need ? ls_world_snapshot_save(a->world, buf, cap) : need;
}

static bool load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    bp_app *a = user;
    (void)tick;
    return ls_world_snapshot_restore(a->world, buf, size, NULL) == LS_OK;
}

static uint64_t state_checksum(void *user, uint32_t tick)
{
    const bp_app *a = user;
    (void)tick;
    return ls_world_checksum(a->world);
}

static void on_event(void *user, const ls_peer_event *ev)
{
    bp_app *a = user;
    uint32_t t = (uint32_t)ev->type;
    if (t < 16) {
        a->events[t]++;
        a->last_event_tick[t] = ev->tick;
    }
}

static void on_spectator_event(void *user, const ls_spectator_event *ev)
{
    bp_app *a = user;
    uint32_t t = (uint32_t)ev->type;
    if (t < 16) {
        a->events[t]++;
        a->last_event_tick[t] = ev->tick;
    }
}

// ---- exports ----

uint8_t *BP_EXPORT(bp_alloc)(uint32_t size)
{
    return malloc(size ? size : 1);
}

void BP_EXPORT(bp_free)(uint8_t *p)
{
    free(p);
}

const char *BP_EXPORT(bp_error)(void)
{
    return error_text;
}

void BP_EXPORT(bp_destroy)(void)
{
    ls_peer_destroy(app.peer);
    ls_spectator_destroy(app.spec);
    ls_world_destroy(app.world);
    if (app.scene_loaded) {
        ls_scene_free(&app.scene);
    }
    memset(&app, 0, sizeof app);
}

int32_t BP_EXPORT(bp_create)(const char *scene, uint32_t scene_len, const char *cred,
                             uint32_t cred_len, uint32_t rollback, uint32_t max_prediction,
                             uint32_t seed, uint32_t bot, uint64_t first_seq, uint32_t restarted)
{
    bp_destroy();
    error_text[0] = '\0';
    if (!scene || !cred) {
        set_error("bp_create: no scene or credential", NULL);
        return -1;
    }
    char text[LS_NET_CREDENTIAL_TEXT_SIZE + 2];
    if (cred_len >= sizeof text) {
        set_error("credential: too long for one", NULL);
        return -1;
    }
    memcpy(text, cred, cred_len);
    text[cred_len] = '\0';
    ls_net_credential c;
    ls_error err;
    ls_result r = ls_net_credential_parse(text, &c, &err);
    wipe(text, sizeof text);
    if (r != LS_OK) {
        set_error("credential", &err);
        return -1;
    }
    if (ls_scene_parse(scene, scene_len, &app.scene, &err) != LS_OK) {
        ls_net_credential_wipe(&c);
        set_error("scene", &err);
        return -1;
    }
    app.scene_loaded = true;
    app.world = ls_scene_instantiate(&app.scene, &err);
    if (!app.world) {
        ls_net_credential_wipe(&c);
        set_error("scene", &err);
        bp_destroy();
        return -1;
    }
    app.slot = c.slot;
    app.use_bot = bot != 0;
    if (c.role == LS_NET_ROLE_SPECTATOR) { // watch: simulate the relay's final ticks
        ls_spectator_def sd = ls_default_spectator_def();
        ls_spectator_def_set_credential(&sd, &c);
        ls_net_credential_wipe(&c);
        sd.relay.family = 6;
        sd.cb.user = &app;
        sd.cb.advance = advance;
        sd.cb.load = load;
        sd.cb.on_event = on_spectator_event;
        app.spec = ls_spectator_create(&sd, &err);
        wipe(sd.key, sizeof sd.key);
        if (!app.spec) {
            set_error("spectator", &err);
            bp_destroy();
            return -1;
        }
        return 0;
    }
    ls_soccer_bot_init(&app.bot, seed, c.slot);
    ls_input_script_init(&app.script, seed, LS_SCENE_MAX_PLAYERS);
    ls_peer_def pd = ls_default_peer_def();
    ls_peer_def_set_credential(&pd, &c);
    ls_net_credential_wipe(&c);
    pd.relay.family = 6; // a WebSocket carries every datagram to the relay: the address is unused
    pd.mode = rollback ? LS_PEER_ROLLBACK : LS_PEER_LOCKSTEP;
    pd.max_prediction = max_prediction;
    pd.first_seq = first_seq;      // from the page's clock: above any a previous load sent
    pd.restarted = restarted != 0; // a reload: our previous load may still hold the slot
    pd.cb.user = &app;
    pd.cb.local_input = local_input;
    pd.cb.advance = advance;
    pd.cb.on_event = on_event;
    pd.cb.save = save;
    pd.cb.load = load;
    pd.cb.state_checksum = state_checksum;
    app.peer = ls_peer_create(&pd, &err);
    wipe(pd.key, sizeof pd.key);
    if (!app.peer) {
        set_error("peer", &err);
        bp_destroy();
        return -1;
    }
    return 0;
}

void BP_EXPORT(bp_receive)(const uint8_t *data, uint32_t len, uint64_t now_us)
{
    if (app.peer && data) {
        ls_peer_receive(app.peer, data, len, now_us);
    } else if (app.spec && data) {
        ls_spectator_receive(app.spec, data, len, now_us);
    }
}

void BP_EXPORT(bp_poll)(uint64_t now_us)
{
    if (app.peer) {
        ls_peer_poll(app.peer, now_us);
    } else if (app.spec) {
        ls_spectator_poll(app.spec, now_us);
    }
}

void BP_EXPORT(bp_leave)(void)
{
    if (app.peer) {
        ls_peer_leave(app.peer);
    }
}

uint32_t BP_EXPORT(bp_next_datagram)(void)
{
    bool got = app.peer   ? ls_peer_next_datagram(app.peer, &app.out)
               : app.spec ? ls_spectator_next_datagram(app.spec, &app.out)
                          : false;
    return got ? (uint32_t)app.out.len : 0;
}

const uint8_t *BP_EXPORT(bp_datagram)(void)
{
    return app.out.data;
}

void BP_EXPORT(bp_set_input)(uint32_t input, uint32_t bot)
{
    app.input = (uint8_t)input;
    app.use_bot = bot != 0;
}

int32_t BP_EXPORT(bp_state)(void)
{
    return app.peer   ? (int32_t)ls_peer_state_get(app.peer)
           : app.spec ? (int32_t)ls_spectator_state_get(app.spec)
                      : -1;
}

uint32_t BP_EXPORT(bp_slot)(void)
{
    return app.slot;
}

uint32_t BP_EXPORT(bp_spectator)(void)
{
    return app.spec != NULL;
}

uint32_t BP_EXPORT(bp_ticks)(void)
{
    return app.peer ? ls_peer_ticks(app.peer) : app.spec ? ls_spectator_ticks(app.spec) : 0;
}

uint32_t BP_EXPORT(bp_confirmed)(void)
{
    return app.peer   ? ls_peer_confirmed(app.peer)
           : app.spec ? ls_spectator_stats_get(app.spec).received_next
                      : 0;
}

uint64_t BP_EXPORT(bp_checksum)(void)
{
    return app.peer   ? ls_peer_last_checksum(app.peer)
           : app.spec ? ls_spectator_last_checksum(app.spec)
                      : 0;
}

uint64_t BP_EXPORT(bp_world_checksum)(void)
{
    return app.world ? ls_world_checksum(app.world) : 0;
}

uint32_t BP_EXPORT(bp_session)(uint32_t what)
{
    if (!app.peer) {
        return 0;
    }
    ls_net_msg m = ls_peer_welcome(app.peer);
    switch (what) {
    case 0:
        return m.u.welcome.slots;
    case 1:
        return m.u.welcome.input_size;
    case 2:
        return m.u.welcome.delay;
    case 3:
        return m.u.welcome.tick_rate;
    case 4:
        return m.u.welcome.ticks;
    default:
        return 0;
    }
}

uint64_t BP_EXPORT(bp_stat)(uint32_t what)
{
    if (app.spec) { // a spectator: its counters where a peer has the same ones
        ls_spectator_stats v = ls_spectator_stats_get(app.spec);
        const uint64_t w[] = {
            0, v.packets_in, v.packets_out, v.bytes_in, v.bytes_out, v.dropped, 0, 0, 0, 0,
            0, v.mismatches};
        return what < sizeof w / sizeof w[0] ? w[what] : 0;
    }
    if (!app.peer) {
        return 0;
    }
    ls_peer_stats s = ls_peer_stats_get(app.peer);
    const uint64_t v[] = {
        s.rtt_us,         s.packets_in,      s.packets_out,     s.bytes_in,
        s.bytes_out,      s.dropped,         s.malformed,       s.bad_mac,
        s.replayed,       s.stale,           s.stalls,          s.desyncs,
        s.named,          s.disputes,        s.frames,          s.rollbacks,
        s.resimulated,    s.max_resim_frame, s.max_rollback,    s.predicted,
        s.predicted_hits, s.waits,           s.time_sync_skips, (uint64_t)(int64_t)s.frames_ahead,
        s.rejoins,        s.interruptions,   s.kbps_in,         s.kbps_out};
    return what < sizeof v / sizeof v[0] ? v[what] : 0;
}

uint32_t BP_EXPORT(bp_events)(uint32_t type)
{
    return type < 16 ? app.events[type] : 0;
}

int32_t BP_EXPORT(bp_score)(uint32_t team)
{
    return app.world && app.scene.game == LS_SCENE_GAME_SOCCER && team < 2
               ? ls_soccer_score(app.world, team)
               : 0;
}

uint32_t BP_EXPORT(bp_body_count)(void)
{
    return app.world ? ls_world_body_count(app.world) : 0;
}

int32_t BP_EXPORT(bp_body_pose)(uint32_t index, int32_t *out)
{
    if (!app.world || !out || index >= ls_world_body_count(app.world)) {
        return 0;
    }
    ls_body_id id = ls_world_body_at(app.world, index);
    ls_vec3 p = ls_body_position(app.world, id);
    ls_quat q = ls_body_orientation(app.world, id);
    const int32_t v[7] = {p.x, p.y, p.z, q.w, q.x, q.y, q.z};
    memcpy(out, v, sizeof v);
    return 1;
}

int32_t BP_EXPORT(bp_player_body)(uint32_t slot)
{
    return app.scene_loaded && slot < app.scene.player_count ? (int32_t)app.scene.player_body[slot]
                                                             : -1;
}

uint64_t BP_EXPORT(bp_bench)(const char *scene, uint32_t scene_len, uint32_t ticks, uint32_t scalar)
{
    ls_scene s;
    ls_error err;
    if (!scene || ls_scene_parse(scene, scene_len, &s, &err) != LS_OK) {
        return 0;
    }
    if (scalar) {
        s.world.simd = LS_SIMD_SCALAR;
    }
    ls_world *w = ls_scene_instantiate(&s, &err);
    uint64_t sum = 0;
    if (w) {
        uint32_t players = s.player_count < LS_SCENE_MAX_PLAYERS ? s.player_count : 0;
        ls_soccer_bot bots[LS_SCENE_MAX_PLAYERS];
        uint8_t inputs[LS_SCENE_MAX_PLAYERS] = {0};
        for (uint32_t k = 0; k < players; k++) {
            ls_soccer_bot_init(&bots[k], 1, k);
        }
        for (uint32_t t = 0; t < ticks; t++) {
            for (uint32_t k = 0; k < players && s.game == LS_SCENE_GAME_SOCCER; k++) {
                inputs[k] = ls_soccer_bot_input(&bots[k], w, &s);
            }
            sum = ls_game_tick(w, &s, inputs, players, 1);
        }
        ls_world_destroy(w);
    }
    ls_scene_free(&s);
    return sum;
}
