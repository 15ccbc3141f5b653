// SPDX-License-Identifier: MIT
// Rollback (net/src/rollback.c, and its use by net/src/peer.c). Part 1: one core driven by hand —
// seed 000's off-by-one (a correction at tick s re-simulates exactly
// present - s ticks and lands on the states of a run that knew the input at
// s), input-buffer preservation, future inputs, arrival order, the window,
// disconnects, the budget. Part 2: N cores on a simulated network with a fake
// clock (latency 0..200 ms, 30 % loss, duplicates, reordering; full mesh,
// inputs re-sent until acknowledged): every peer ends on the checksums of a
// lockstep run with the same inputs, with zero false desyncs, on a toy game
// and on the arena with ls_game_tick and world snapshots; time sync. Part 3:
// real ls_peer (LS_PEER_ROLLBACK) + ls_relay cores on the same kind of network:
// the relay's recording (agreed checksums of confirmed ticks) equals the
// lockstep reference, no desync, a perturbed peer named at its tick, a late
// peer, lockstep and rollback peers recording the same match.
#include "ls/checksum.h"
#include "ls/game.h"
#include "ls/net_fault.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"
#include "ls/net_rollback.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP  8
#define MAXT  4096
#define MAXIN 4

// ---- inputs: each slot "holds a key" for 12 ticks, then picks another ----

static uint8_t held_input(uint64_t seed, uint32_t slot, uint32_t tick)
{
    uint32_t words[3] = {(uint32_t)seed, slot, tick / 12};
    return (uint8_t)(ls_hash64(words, sizeof words) & 0x0F);
}

static void fill_input(uint64_t seed, uint32_t slot, uint32_t tick, uint8_t *out, uint32_t isz)
{
    for (uint32_t i = 0; i < isz; i++) {
        out[i] = (uint8_t)(held_input(seed, slot, tick) ^ (i * 17u));
    }
}

// ---- games: a hash chain (cheap) or the arena (physics) ----

typedef struct game {
    uint32_t slot;
    uint64_t seed;
    uint32_t isz;
    bool arena;
    uint64_t h; // toy state
    ls_world *world;
    const ls_scene *scene;
    int64_t perturb_tick; // -1: never
    uint64_t advances;
    // events seen
    uint32_t rollbacks, desyncs, first_desync, waits, time_syncs, errors;
    uint32_t last_rollback_tick, last_rollback_count, wait_slot;
} game;

static void g_local(void *user, uint32_t tick, uint8_t *out, uint32_t isz)
{
    game *g = user;
    fill_input(g->seed, g->slot, tick, out, isz);
}

static size_t g_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    game *g = user;
    (void)tick;
    if (g->arena) {
        size_t need = ls_world_snapshot_size(g->world);
        return buf && cap >= need ? ls_world_snapshot_save(g->world, buf, cap) : need;
    }
    if (buf && cap >= 8) {
        ls_put_u64le(buf, g->h);
    }
    return 8;
}

static bool g_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    game *g = user;
    (void)tick;
    if (g->arena) {
        return ls_world_snapshot_restore(g->world, buf, size, NULL) == LS_OK;
    }
    g->h = ls_get_u64le(buf);
    return size == 8;
}

static uint64_t toy_step(uint64_t h, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                         uint32_t isz)
{
    ls_hasher hs;
    ls_hasher_init(&hs);
    ls_hasher_put_u64(&hs, h);
    ls_hasher_put_u32(&hs, tick);
    ls_hasher_put_bytes(&hs, inputs, (size_t)slots * isz);
    return ls_hasher_digest(&hs);
}

static uint64_t g_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                          uint32_t isz, uint32_t predicted)
{
    game *g = user;
    (void)predicted;
    g->advances++;
    if (g->arena) {
        uint64_t c = ls_game_tick(g->world, g->scene, inputs, slots, isz);
        cr_assert((int64_t)tick != g->perturb_tick, "no perturbation in the arena game");
        return c;
    }
    g->h = toy_step(g->h, tick, inputs, slots, isz);
    if ((int64_t)tick == g->perturb_tick) {
        g->h ^= 1; // a silent local divergence
    }
    return g->h;
}

static void g_event(void *user, const ls_rollback_event *ev)
{
    game *g = user;
    switch (ev->type) {
    case LS_ROLLBACK_EV_ROLLBACK:
        g->rollbacks++;
        g->last_rollback_tick = ev->tick;
        g->last_rollback_count = ev->count;
        cr_assert_eq(ev->count, ev->present - ev->tick);
        break;
    case LS_ROLLBACK_EV_DESYNC:
        if (g->desyncs++ == 0) {
            g->first_desync = ev->tick;
        }
        break;
    case LS_ROLLBACK_EV_WAITING:
        g->waits++;
        g->wait_slot = ev->slot;
        break;
    case LS_ROLLBACK_EV_TIME_SYNC:
        g->time_syncs++;
        break;
    case LS_ROLLBACK_EV_ERROR:
        g->errors++;
        break;
    }
}

static ls_rollback_callbacks callbacks(game *g)
{
    ls_rollback_callbacks cb = {g, g_local, g_save, g_load, g_advance, NULL, g_event};
    return cb;
}

// Lockstep reference: every tick with every slot's real input (empty below the
// delay and from a slot's disconnect tick on). sums[t] = checksum after tick t.
typedef struct reference {
    uint64_t sums[MAXT];
} reference;

static void make_reference(reference *r, bool arena, uint64_t seed, uint32_t slots, uint32_t isz,
                           uint32_t delay, uint32_t ticks, const uint32_t *gone_tick)
{
    uint64_t h = 0;
    ls_scene scene;
    ls_world *w = NULL;
    if (arena) {
        cr_assert_eq(ls_scene_load("tools/scenes/arena.scene", &scene, NULL), LS_OK);
        w = ls_scene_instantiate(&scene, NULL);
        cr_assert_not_null(w);
    }
    uint8_t row[MAXP * MAXIN];
    for (uint32_t t = 0; t < ticks; t++) {
        for (uint32_t k = 0; k < slots; k++) {
            uint8_t *dst = row + k * isz;
            if (t < delay || (gone_tick && t >= gone_tick[k])) {
                memset(dst, 0, isz);
            } else {
                fill_input(seed, k, t, dst, isz);
            }
        }
        r->sums[t] = arena ? ls_game_tick(w, &scene, row, slots, isz)
                           : (h = toy_step(h, t, row, slots, isz));
    }
    if (arena) {
        ls_world_destroy(w);
        ls_scene_free(&scene);
    }
}

// ---- part 1: one core driven by hand ----

// Slot 0 is local (inputs from the callback), slot 1 remote (added by the test).
static ls_rollback *hand_core(game *g, uint32_t window, uint32_t delay, uint32_t budget)
{
    memset(g, 0, sizeof *g);
    g->slot = 0;
    g->seed = 7;
    g->isz = 1;
    g->perturb_tick = -1;
    ls_rollback_def d = ls_default_rollback_def();
    d.slots = 2;
    d.input_size = 1;
    d.local_slot = 0;
    d.input_delay = delay;
    d.max_prediction = window;
    d.resim_budget = budget;
    d.time_sync_threshold = 0;
    d.cb = callbacks(g);
    ls_error err;
    ls_rollback *rb = ls_rollback_create(&d, &err);
    cr_assert_not_null(rb, "%s", err.message);
    return rb;
}

static void add_remote(ls_rollback *rb, uint32_t tick)
{
    uint8_t in;
    fill_input(7, 1, tick, &in, 1);
    cr_assert_eq(ls_rollback_add_input(rb, 1, tick, &in), LS_OK);
}

static void add_remote_value(ls_rollback *rb, uint32_t tick, uint8_t v)
{
    cr_assert_eq(ls_rollback_add_input(rb, 1, tick, &v), LS_OK);
}

// Seed 000 test 34 and its off-by-one: with W ticks predicted, a differing
// input for tick s = present - j (j = 1..W) loads the state at the start of s
// and re-simulates exactly j ticks; the checksums of s..present-1 are then those
// of a run that knew the input at s.
Test(rollback, a_correction_at_tick_s_resimulates_exactly_present_minus_s_ticks)
{
    const uint32_t W = 8, base = 40;
    for (uint32_t j = 1; j <= W; j++) {
        game g;
        ls_rollback *rb = hand_core(&g, W, 0, 0);
        // Inputs of slot 1 known up to `base`; then W ticks predicted.
        for (uint32_t t = 0; t < base; t++) {
            add_remote(rb, t);
        }
        while (ls_rollback_present(rb) < base + W) {
            cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_ADVANCED);
        }
        cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_WAITING, "the window is full");
        cr_assert_eq(g.wait_slot, 1);
        // Slot 1 "pressed a key" at s: every tick from s on differs from the
        // prediction (which repeats its input at base - 1).
        uint32_t s = base + W - j;
        uint8_t pressed = 0x80;
        uint8_t prev;
        fill_input(7, 1, base - 1, &prev, 1);
        for (uint32_t t = base; t < s; t++) {
            add_remote_value(rb, t, prev); // as predicted: no correction
        }
        ls_rollback_stats before = ls_rollback_stats_get(rb);
        cr_assert_eq(before.rollbacks, 0);
        add_remote_value(rb, s, pressed);
        uint64_t adv0 = g.advances;
        cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_ADVANCED);
        ls_rollback_stats st = ls_rollback_stats_get(rb);
        cr_assert_eq(st.rollbacks, 1);
        cr_assert_eq(g.last_rollback_tick, s);
        cr_assert_eq(g.last_rollback_count, j, "rolled back exactly %u ticks", j);
        cr_assert_eq(st.resimulated, j);
        cr_assert_eq(g.advances - adv0, j + 1, "j re-simulated + 1 new tick");
        // The reference: the same inputs, known from the start.
        uint64_t h = 0;
        for (uint32_t t = 0; t <= base + W; t++) {
            uint8_t row[2];
            fill_input(7, 0, t, &row[0], 1);
            row[1] = t < base ? 0 : prev;
            if (t < base) {
                fill_input(7, 1, t, &row[1], 1);
            }
            if (t >= s) {
                row[1] = pressed; // predicted from s on: repeat the last known input
            }
            h = toy_step(h, t, row, 2, 1);
            uint64_t c;
            cr_assert(ls_rollback_checksum(rb, t, &c));
            cr_assert_eq(c, h, "j=%u tick %u", j, t);
        }
        ls_rollback_destroy(rb);
    }
}

// Seed 000 test 35: a local input at T-2 exists when a remote input for T-5
// arrives; after the correction both are in effect.
Test(rollback, the_input_buffer_keeps_later_inputs_through_a_correction)
{
    game g;
    ls_rollback *rb = hand_core(&g, 8, 0, 0);
    for (uint32_t t = 0; t < 20; t++) {
        add_remote(rb, t);
    }
    while (ls_rollback_present(rb) < 26) {
        ls_rollback_advance(rb);
    }
    // Local inputs of 20..25 come from the callback (they changed at 24: tick / 12).
    uint8_t local24, local23;
    fill_input(7, 0, 24, &local24, 1);
    fill_input(7, 0, 23, &local23, 1);
    cr_assert_neq(local24, local23, "the local key changed at T-2");
    add_remote_value(rb, 21, 0x55); // T-5
    ls_rollback_advance(rb);
    cr_assert_eq(g.last_rollback_tick, 21);
    // Reference: remote known up to 20, 0x55 from 21 on (predicted), local as produced.
    uint64_t h = 0;
    for (uint32_t t = 0; t < 27; t++) {
        uint8_t row[2];
        fill_input(7, 0, t, &row[0], 1);
        fill_input(7, 1, t < 20 ? t : 19, &row[1], 1);
        if (t >= 21) {
            row[1] = 0x55;
        } else if (t == 20) {
            fill_input(7, 1, 19, &row[1], 1); // predicted: repeat 19
        }
        h = toy_step(h, t, row, 2, 1);
    }
    uint64_t c;
    cr_assert(ls_rollback_checksum(rb, 26, &c));
    cr_assert_eq(c, h);
    ls_rollback_destroy(rb);
}

// Seed 000 test 37: an input for a tick not yet simulated causes no rollback
// and takes effect exactly at its tick.
Test(rollback, a_future_input_is_queued_without_a_rollback)
{
    game g;
    ls_rollback *rb = hand_core(&g, 8, 0, 0);
    for (uint32_t t = 0; t < 10; t++) {
        add_remote(rb, t);
    }
    add_remote_value(rb, 14, 0x33); // future, out of order
    while (ls_rollback_present(rb) < 18) {
        ls_rollback_advance(rb);
    }
    cr_assert_eq(ls_rollback_stats_get(rb).rollbacks, 0);
    cr_assert_eq(ls_rollback_frontier(rb, 1), 10, "14 is held above the gap");
    // Tick 14 used 0x33; ticks 15.. predict from it (nearest known earlier input).
    uint8_t prev;
    fill_input(7, 1, 9, &prev, 1);
    for (uint32_t t = 10; t < 14; t++) {
        add_remote_value(rb, t, prev); // right predictions: still no rollback
    }
    ls_rollback_advance(rb);
    cr_assert_eq(ls_rollback_stats_get(rb).rollbacks, 0);
    cr_assert_eq(ls_rollback_frontier(rb, 1), 15);
    ls_rollback_stats st = ls_rollback_stats_get(rb);
    cr_assert_eq(st.predicted, 4);
    cr_assert_eq(st.predicted_hits, 4);
    ls_rollback_destroy(rb);
}

// Seed 000 test 36 (Fig. 4.2): the same inputs delivered in different orders
// end on the same confirmed checksums.
Test(rollback, arrival_order_does_not_change_confirmed_checksums)
{
    uint64_t first[64];
    for (int order = 0; order < 4; order++) {
        game g;
        ls_rollback *rb = hand_core(&g, 8, 0, 0);
        ls_rng rng = ls_rng_make(99, (uint64_t)order);
        uint32_t next = 0;
        while (ls_rollback_final(rb) < 64) {
            // Deliver a shuffled batch of the next few remote inputs.
            uint32_t batch[4], n = 0;
            for (; n < 4 && next < 64; n++) {
                batch[n] = next++;
            }
            for (uint32_t i = n; i > 1; i--) {
                uint32_t j = ls_rng_below(&rng, i);
                uint32_t x = batch[i - 1];
                batch[i - 1] = batch[j];
                batch[j] = x;
            }
            for (uint32_t i = 0; i < n; i++) {
                add_remote(rb, batch[i]);
            }
            for (uint32_t f = 0; f < 1 + (uint32_t)order; f++) {
                ls_rollback_advance(rb);
            }
        }
        for (uint32_t t = 0; t < 64; t++) {
            uint64_t c;
            cr_assert(ls_rollback_checksum(rb, t, &c));
            if (order == 0) {
                first[t] = c;
            }
            cr_assert_eq(c, first[t], "order %d tick %u", order, t);
        }
        ls_rollback_destroy(rb);
    }
}

Test(rollback, the_window_bounds_prediction_and_zero_means_lockstep)
{
    game g;
    ls_rollback *rb = hand_core(&g, 0, 0, 0);
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_WAITING, "W = 0: wait for every input");
    add_remote(rb, 0);
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_ADVANCED);
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_WAITING);
    cr_assert_eq(ls_rollback_stats_get(rb).predicted, 0);
    ls_rollback_destroy(rb);
    // W = 3 with delay 2: ticks 0, 1 are empty (known), 2..4 predicted, then wait.
    rb = hand_core(&g, 3, 2, 0);
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_ADVANCED, "frame %d", i);
    }
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_WAITING);
    cr_assert_eq(ls_rollback_confirmed(rb), 2);
    cr_assert_eq(ls_rollback_frontier(rb, 0), 8, "local inputs run D ticks ahead");
    uint8_t z = 0xEE;
    cr_assert_eq(ls_rollback_add_input(rb, 1, 1, &z), LS_OK, "below the delay: ignored");
    cr_assert_eq(ls_rollback_add_input(rb, 1, 2 + LS_ROLLBACK_INPUT_WINDOW, &z),
                 LS_ERR_OUT_OF_RANGE);
    cr_assert_eq(ls_rollback_add_input(rb, 2, 3, &z), LS_ERR_INVALID_ARGUMENT);
    add_remote(rb, 2);
    uint8_t other;
    fill_input(7, 1, 2, &other, 1);
    other ^= 1;
    cr_assert_eq(ls_rollback_add_input(rb, 1, 2, &other), LS_ERR_CORRUPT, "contradiction");
    ls_rollback_stats st = ls_rollback_stats_get(rb);
    cr_assert_eq(st.conflicts, 1);
    cr_assert_eq(st.refused, 1);
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_ADVANCED);
    ls_rollback_destroy(rb);
}

Test(rollback, the_budget_spreads_a_long_correction_over_frames)
{
    game g;
    ls_rollback *rb = hand_core(&g, 8, 0, 3);
    for (uint32_t t = 0; t < 8; t++) {
        ls_rollback_advance(rb);
    }
    add_remote_value(rb, 0, 0x77); // mispredicted: 8 ticks to redo
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_CATCHING_UP);
    cr_assert_eq(ls_rollback_final(rb), 1, "tick 0 is re-simulated with its real input");
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_CATCHING_UP);
    add_remote_value(rb, 1, 0x66); // another correction, behind the catch-up point
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_CATCHING_UP);
    ls_rollback_stats st = ls_rollback_stats_get(rb);
    cr_assert_eq(st.rollbacks, 2);
    cr_assert_eq(st.max_resim_frame, 3);
    while (ls_rollback_advance(rb) == LS_ROLLBACK_CATCHING_UP) {
    }
    st = ls_rollback_stats_get(rb);
    cr_assert_leq(st.max_resim_frame, 3);
    cr_assert_geq(st.budget_frames, 3);
    // Same result as knowing both inputs from the start.
    uint64_t h = 0, c;
    for (uint32_t t = 0; t < ls_rollback_present(rb); t++) {
        uint8_t row[2];
        fill_input(7, 0, t, &row[0], 1);
        row[1] = t == 0 ? 0x77 : 0x66;
        h = toy_step(h, t, row, 2, 1);
        cr_assert(ls_rollback_checksum(rb, t, &c));
        cr_assert_eq(c, h, "tick %u", t);
    }
    ls_rollback_destroy(rb);
}

Test(rollback, a_disconnect_turns_predictions_into_empty_inputs)
{
    game g;
    ls_rollback *rb = hand_core(&g, 8, 0, 0);
    for (uint32_t t = 0; t < 10; t++) {
        add_remote_value(rb, t, 0x21);
    }
    while (ls_rollback_present(rb) < 15) {
        ls_rollback_advance(rb);
    }
    ls_rollback_disconnect(rb, 1, 12); // 10, 11 still to come; empty from 12
    ls_rollback_advance(rb);
    cr_assert_eq(g.last_rollback_tick, 12);
    add_remote_value(rb, 10, 0x21);
    add_remote_value(rb, 11, 0x21);
    uint8_t late = 0x21;
    cr_assert_eq(ls_rollback_add_input(rb, 1, 13, &late), LS_OK, "after the disconnect: ignored");
    ls_rollback_advance(rb);
    cr_assert_eq(ls_rollback_frontier(rb, 1), UINT32_MAX, "every input of slot 1 is known");
    uint64_t h = 0, c;
    for (uint32_t t = 0; t < ls_rollback_present(rb); t++) {
        uint8_t row[2];
        fill_input(7, 0, t, &row[0], 1);
        row[1] = t < 12 ? 0x21 : 0;
        h = toy_step(h, t, row, 2, 1);
        cr_assert(ls_rollback_checksum(rb, t, &c));
        cr_assert_eq(c, h, "tick %u", t);
    }
    cr_assert_eq(ls_rollback_final(rb), ls_rollback_present(rb));
    ls_rollback_destroy(rb);
}

static size_t failing_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    (void)user, (void)buf, (void)cap;
    return tick == 3 ? 0 : 8;
}

Test(rollback, bad_definitions_and_failing_saves)
{
    game g;
    memset(&g, 0, sizeof g);
    ls_error err;
    ls_rollback_def d = ls_default_rollback_def();
    cr_assert_null(ls_rollback_create(&d, &err));
    cr_assert_eq(err.code, LS_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(err.field, "cb.advance");
    d.cb = callbacks(&g);
    d.slots = 0;
    cr_assert_null(ls_rollback_create(&d, &err));
    cr_assert_str_eq(err.field, "slots");
    d.slots = 2;
    d.max_prediction = LS_ROLLBACK_MAX_PREDICTION + 1;
    cr_assert_null(ls_rollback_create(&d, &err));
    cr_assert_str_eq(err.field, "max_prediction");
    d.max_prediction = 8;
    d.local_slot = 2;
    cr_assert_null(ls_rollback_create(&d, &err));
    cr_assert_str_eq(err.field, "local_slot");
    d.local_slot = 0;
    d.cb.save = failing_save;
    ls_rollback *rb = ls_rollback_create(&d, &err);
    cr_assert_not_null(rb, "%s", err.message);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_ADVANCED);
    }
    cr_assert_eq(ls_rollback_advance(rb), LS_ROLLBACK_ERROR, "saving tick 3 fails");
    cr_assert_eq(g.errors, 1);
    cr_assert_eq(ls_rollback_present(rb), 3, "the tick is not simulated without its state");
    ls_rollback_destroy(rb);
}

// ---- part 2: N cores on a simulated network ----

typedef struct msg {
    uint32_t from, to;
    uint32_t first, count; // inputs of `from` for ticks first..first+count-1
    uint8_t inputs[64 * MAXIN];
    uint32_t ack; // `from` holds `to`'s inputs below this
    int32_t adv;  // from's local advantage over `to`
    uint32_t csum_first, csum_count;
    uint64_t csums[16];
} msg;

typedef struct packet {
    uint64_t at;
    msg m;
} packet;

typedef struct net_peer {
    game g;
    ls_rollback *rb;
    uint64_t next_frame, period;
    uint32_t acked_by[MAXP]; // peer j holds our inputs below this
    uint32_t recorded;       // final checksums checked below this
    uint32_t statuses[6];
} net_peer;

typedef struct mesh {
    uint32_t n, ticks, isz, delay;
    bool arena;
    ls_scene scene;
    net_peer p[MAXP];
    ls_net_fault fault;
    packet *q;
    size_t qlen, qcap;
    uint64_t now;
    const reference *ref;
    uint64_t sent;
} mesh;

typedef struct mesh_opts {
    uint32_t n, ticks, isz, delay, window, budget, time_sync;
    bool arena;
    uint64_t seed;
    ls_net_fault_def fault;
    uint64_t start_us[MAXP]; // per-peer start time
    uint32_t period_us[MAXP];
    int64_t perturb[MAXP]; // 0: none, else tick + 1
} mesh_opts;

static void mesh_send(mesh *s, const msg *m)
{
    uint64_t when[2];
    uint32_t copies = ls_net_fault_apply(&s->fault, s->now, when);
    for (uint32_t c = 0; c < copies; c++) {
        if (s->qlen == s->qcap) {
            s->qcap = s->qcap ? s->qcap * 2 : 1024;
            s->q = realloc(s->q, s->qcap * sizeof *s->q);
            cr_assert_not_null(s->q);
        }
        s->q[s->qlen].at = when[c] > s->now ? when[c] : s->now + 1;
        s->q[s->qlen].m = *m;
        s->qlen++;
    }
    s->sent++;
}

// Everything `i` tells `j` after a frame: its unacknowledged inputs (up to 64),
// what it holds of j's, its advantage, its last final checksums.
static void send_state(mesh *s, uint32_t i, uint32_t j)
{
    net_peer *p = &s->p[i];
    msg m;
    memset(&m, 0, sizeof m);
    m.from = i;
    m.to = j;
    uint32_t from = p->acked_by[j] > s->delay ? p->acked_by[j] : s->delay;
    uint32_t to = ls_rollback_frontier(p->rb, i);
    to = to > s->ticks ? s->ticks : to;
    m.first = from;
    for (uint32_t t = from; t < to && m.count < 64; t++) {
        cr_assert(ls_rollback_input(p->rb, i, t, m.inputs + m.count * s->isz));
        m.count++;
    }
    m.ack = ls_rollback_frontier(p->rb, j);
    m.adv = ls_rollback_local_advantage(p->rb, j);
    uint32_t f = ls_rollback_final(p->rb);
    m.csum_first = f > 16 ? f - 16 : 0;
    for (uint32_t t = m.csum_first; t < f; t++) {
        cr_assert(ls_rollback_checksum(p->rb, t, &m.csums[m.csum_count++]));
    }
    mesh_send(s, &m);
}

static void deliver(mesh *s, const msg *m)
{
    net_peer *p = &s->p[m->to];
    for (uint32_t i = 0; i < m->count; i++) {
        ls_result r = ls_rollback_add_input(p->rb, m->from, m->first + i, m->inputs + i * s->isz);
        cr_assert(r == LS_OK || r == LS_ERR_OUT_OF_RANGE, "peer %u: %s", m->to, ls_result_name(r));
    }
    if (m->ack > p->acked_by[m->from]) {
        p->acked_by[m->from] = m->ack;
    }
    ls_rollback_remote_advantage(p->rb, m->from, m->adv);
    for (uint32_t i = 0; i < m->csum_count; i++) {
        ls_rollback_add_remote_checksum(p->rb, m->from, m->csum_first + i, m->csums[i]);
    }
}

static void mesh_init(mesh *s, const mesh_opts *o, const reference *ref)
{
    memset(s, 0, sizeof *s);
    s->n = o->n;
    s->ticks = o->ticks;
    s->isz = o->isz;
    s->delay = o->delay;
    s->arena = o->arena;
    s->ref = ref;
    ls_net_fault_init(&s->fault, &o->fault);
    if (o->arena) {
        cr_assert_eq(ls_scene_load("tools/scenes/arena.scene", &s->scene, NULL), LS_OK);
    }
    for (uint32_t i = 0; i < o->n; i++) {
        net_peer *p = &s->p[i];
        p->g.slot = i;
        p->g.seed = o->seed;
        p->g.isz = o->isz;
        p->g.arena = o->arena;
        p->g.perturb_tick = o->perturb[i] ? o->perturb[i] - 1 : -1;
        if (o->arena) {
            p->g.scene = &s->scene;
            p->g.world = ls_scene_instantiate(&s->scene, NULL);
            cr_assert_not_null(p->g.world);
        }
        ls_rollback_def d = ls_default_rollback_def();
        d.slots = o->n;
        d.input_size = o->isz;
        d.local_slot = i;
        d.input_delay = o->delay;
        d.max_prediction = o->window;
        d.resim_budget = o->budget;
        d.ticks = o->ticks;
        d.time_sync_threshold = o->time_sync;
        d.cb = callbacks(&p->g);
        ls_error err;
        p->rb = ls_rollback_create(&d, &err);
        cr_assert_not_null(p->rb, "%s", err.message);
        p->next_frame = o->start_us[i];
        p->period = o->period_us[i] ? o->period_us[i] : 16667;
    }
}

static void mesh_free(mesh *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        ls_rollback_destroy(s->p[i].rb);
        ls_world_destroy(s->p[i].g.world);
    }
    if (s->arena) {
        ls_scene_free(&s->scene);
    }
    free(s->q);
}

static bool peer_done(const mesh *s, const net_peer *p)
{
    return ls_rollback_present(p->rb) >= s->ticks && ls_rollback_final(p->rb) >= s->ticks;
}

// Checks every newly final checksum against the lockstep reference (unless the
// game is perturbed: then only desyncs are looked at).
static void check_final(mesh *s, net_peer *p, bool strict)
{
    uint32_t f = ls_rollback_final(p->rb);
    for (uint32_t t = p->recorded; t < f; t++) {
        uint64_t c;
        cr_assert(ls_rollback_checksum(p->rb, t, &c), "peer %u tick %u", p->g.slot, t);
        if (strict) {
            cr_assert_eq(c, s->ref->sums[t], "peer %u: final checksum of tick %u", p->g.slot, t);
        }
    }
    p->recorded = f > p->recorded ? f : p->recorded;
}

// Runs until every peer has simulated and confirmed every tick (1 ms steps).
static void mesh_run(mesh *s, bool strict)
{
    uint64_t limit = (uint64_t)s->ticks * 16667u * 4 + 20000000u;
    for (s->now = 0; s->now < limit; s->now += 1000) {
        // Deliver what is due, in queue order (the fault injector reorders).
        size_t keep = 0;
        for (size_t i = 0; i < s->qlen; i++) {
            if (s->q[i].at <= s->now) {
                deliver(s, &s->q[i].m);
            } else {
                s->q[keep++] = s->q[i];
            }
        }
        s->qlen = keep;
        bool all = true;
        for (uint32_t i = 0; i < s->n; i++) {
            net_peer *p = &s->p[i];
            while (p->next_frame <= s->now) {
                ls_rollback_status st = ls_rollback_advance(p->rb);
                p->statuses[st]++;
                p->next_frame += p->period;
                check_final(s, p, strict);
                for (uint32_t j = 0; j < s->n; j++) {
                    if (j != i) {
                        send_state(s, i, j);
                    }
                }
            }
            check_final(s, p, strict);
            all &= peer_done(s, p) && p->recorded >= s->ticks;
        }
        if (all) {
            return;
        }
    }
    cr_assert_fail("the match did not finish in simulated time");
}

static mesh_opts lossy_opts(uint32_t n, uint32_t ticks, uint64_t seed)
{
    mesh_opts o;
    memset(&o, 0, sizeof o);
    o.n = n;
    o.ticks = ticks;
    o.isz = 2;
    o.delay = 0;
    o.window = 8;
    o.time_sync = 2;
    o.seed = seed;
    // Latency uniform in 0..200 ms (so datagrams overtake each other), 30 % loss,
    // 5 % duplicated, 10 % held back behind later ones.
    o.fault = (ls_net_fault_def){.loss_ppm = 300000,
                                 .dup_ppm = 50000,
                                 .reorder_ppm = 100000,
                                 .jitter_us = 200000,
                                 .seed = seed * 7 + 1};
    for (uint32_t i = 0; i < n; i++) {
        o.start_us[i] = 1000u * (uint64_t)(i * 7 % 13); // peers start up to 12 ms apart
    }
    return o;
}

static void expect_agreement(mesh *s, const char *what)
{
    for (uint32_t i = 0; i < s->n; i++) {
        net_peer *p = &s->p[i];
        ls_rollback_stats st = ls_rollback_stats_get(p->rb);
        cr_assert_eq(st.desyncs, 0, "%s: peer %u: no false desync", what, i);
        cr_assert_eq(p->g.errors, 0);
        cr_assert_eq(p->recorded, s->ticks, "%s: peer %u checked every tick", what, i);
        uint64_t c;
        cr_assert(ls_rollback_checksum(p->rb, s->ticks - 1, &c));
        cr_assert_eq(c, s->ref->sums[s->ticks - 1], "%s: peer %u final checksum", what, i);
    }
}

static void log_stats(const mesh *s, const char *what)
{
    for (uint32_t i = 0; i < s->n; i++) {
        ls_rollback_stats st = ls_rollback_stats_get(s->p[i].rb);
        cr_log_info("%s peer %u: frames %llu rollbacks %llu resim/frame %.2f max %u hit %.1f%% "
                    "waits %llu skips %llu ahead %d",
                    what, i, (unsigned long long)st.frames, (unsigned long long)st.rollbacks,
                    (double)st.resimulated / (double)st.frames, st.max_resim_frame,
                    st.predicted ? 100.0 * (double)st.predicted_hits / (double)st.predicted : 100.0,
                    (unsigned long long)st.waits, (unsigned long long)st.time_sync_skips,
                    st.frames_ahead);
    }
}

Test(rollback, lossy_network_peers_end_on_the_lockstep_checksums, .timeout = 120)
{
    static const struct {
        uint32_t n, delay, window;
        uint64_t seed;
    } cases[] = {{2, 0, 8, 1}, {4, 0, 8, 2}, {4, 2, 8, 3}, {8, 0, 8, 4}, {3, 1, 4, 5}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        mesh_opts o = lossy_opts(cases[c].n, 900, cases[c].seed);
        o.delay = cases[c].delay;
        o.window = cases[c].window;
        static reference ref;
        make_reference(&ref, false, o.seed, o.n, o.isz, o.delay, o.ticks, NULL);
        static mesh s;
        mesh_init(&s, &o, &ref);
        mesh_run(&s, true);
        char what[64];
        snprintf(what, sizeof what, "%u peers, delay %u, window %u", o.n, o.delay, o.window);
        expect_agreement(&s, what);
        log_stats(&s, what);
        uint64_t rollbacks = 0;
        for (uint32_t i = 0; i < o.n; i++) {
            ls_rollback_stats st = ls_rollback_stats_get(s.p[i].rb);
            rollbacks += st.rollbacks;
            cr_assert_leq(st.max_rollback, o.window, "never beyond the window");
            cr_assert_gt(st.predicted, 0);
        }
        cr_assert_gt(rollbacks, 0, "%s: the network made predictions fail", what);
        cr_assert_gt(s.fault.dropped, 0);
        cr_assert_gt(s.fault.duplicated, 0);
        mesh_free(&s);
    }
}

Test(rollback, the_arena_with_physics_ends_on_the_lockstep_checksums, .timeout = 120)
{
    mesh_opts o = lossy_opts(4, 600, 11);
    o.arena = true;
    o.isz = 1;
    static reference ref;
    make_reference(&ref, true, o.seed, o.n, o.isz, o.delay, o.ticks, NULL);
    static mesh s;
    mesh_init(&s, &o, &ref);
    mesh_run(&s, true);
    expect_agreement(&s, "arena");
    log_stats(&s, "arena");
    for (uint32_t i = 0; i < o.n; i++) {
        cr_assert_gt(ls_rollback_stats_get(s.p[i].rb).rollbacks, 0);
        // The world each peer holds at the end is the lockstep world.
        cr_assert_eq(ls_world_checksum(s.p[i].g.world), ref.sums[o.ticks - 1]);
    }
    mesh_free(&s);
}

Test(rollback, a_perturbed_peer_is_a_desync_at_exactly_its_tick, .timeout = 60)
{
    mesh_opts o = lossy_opts(4, 300, 21);
    o.perturb[2] = 37 + 1;
    static reference ref;
    make_reference(&ref, false, o.seed, o.n, o.isz, o.delay, o.ticks, NULL);
    static mesh s;
    mesh_init(&s, &o, &ref);
    mesh_run(&s, false);
    for (uint32_t i = 0; i < o.n; i++) {
        ls_rollback_stats st = ls_rollback_stats_get(s.p[i].rb);
        cr_assert_gt(st.desyncs, 0, "peer %u sees the desync", i);
        cr_assert_eq(st.first_desync, 37, "peer %u: first desync at tick %u", i, st.first_desync);
    }
    mesh_free(&s);
}

Test(rollback, a_resimulation_budget_still_ends_on_the_lockstep_checksums, .timeout = 60)
{
    mesh_opts o = lossy_opts(4, 600, 31);
    o.budget = 2;
    static reference ref;
    make_reference(&ref, false, o.seed, o.n, o.isz, o.delay, o.ticks, NULL);
    static mesh s;
    mesh_init(&s, &o, &ref);
    mesh_run(&s, true);
    expect_agreement(&s, "budget 2");
    log_stats(&s, "budget 2");
    uint64_t catching = 0;
    for (uint32_t i = 0; i < o.n; i++) {
        cr_assert_leq(ls_rollback_stats_get(s.p[i].rb).max_resim_frame, 2);
        catching += s.p[i].statuses[LS_ROLLBACK_CATCHING_UP];
    }
    cr_assert_gt(catching, 0, "some corrections needed more than one frame");
    mesh_free(&s);
}

// One peer starts 150 ms (9 frames) before the other, on a network with a
// steady 30 ms latency. Without time sync it stays ahead at the edge of its
// window, and every misprediction costs a rollback of the whole window. With
// time sync it skips a few frames until it is level, and its rollbacks only
// cover the latency.
static void time_sync_run(mesh *s, reference *ref, uint32_t threshold)
{
    mesh_opts o = lossy_opts(2, 1200, 41);
    o.fault = (ls_net_fault_def){.delay_us = 30000, .seed = 5};
    o.start_us[0] = 0;
    o.start_us[1] = 150000;
    o.time_sync = threshold;
    make_reference(ref, false, o.seed, o.n, o.isz, o.delay, o.ticks, NULL);
    mesh_init(s, &o, ref);
    mesh_run(s, true);
    expect_agreement(s, threshold ? "time sync" : "no time sync");
    log_stats(s, threshold ? "time sync" : "no time sync");
}

Test(rollback, time_sync_slows_a_peer_that_runs_ahead, .timeout = 60)
{
    static reference ref;
    static mesh off, on;
    time_sync_run(&off, &ref, 0);
    time_sync_run(&on, &ref, 2);
    ls_rollback_stats a = ls_rollback_stats_get(off.p[0].rb);
    ls_rollback_stats b = ls_rollback_stats_get(on.p[0].rb);
    cr_assert_eq(a.time_sync_skips, 0);
    cr_assert_gt(b.time_sync_skips, 0, "the early peer was slowed");
    cr_assert_gt(on.p[0].g.time_syncs, 0, "with TIME_SYNC events");
    cr_assert_eq(ls_rollback_stats_get(on.p[1].rb).time_sync_skips, 0, "the late one was not");
    cr_assert_geq(a.frames_ahead, 3, "without time sync it stays ahead");
    cr_assert_leq(b.frames_ahead, 1, "with time sync it ends level");
    // Same mispredictions, shorter rollbacks: a third fewer re-simulated ticks.
    cr_assert_lt(b.resimulated * 3, a.resimulated * 2, "%llu vs %llu re-simulated ticks",
                 (unsigned long long)b.resimulated, (unsigned long long)a.resimulated);
    mesh_free(&off);
    mesh_free(&on);
}

Test(rollback, a_disconnected_slot_plays_empty_inputs_on_every_peer, .timeout = 60)
{
    mesh_opts o = lossy_opts(3, 400, 51);
    uint32_t gone[MAXP] = {UINT32_MAX, UINT32_MAX, 200};
    static reference ref;
    make_reference(&ref, false, o.seed, o.n, o.isz, o.delay, o.ticks, gone);
    static mesh s;
    mesh_init(&s, &o, &ref);
    // Slot 2's core stops producing at 200 (ticks = 200); the others learn of
    // the disconnect at tick 200 (as a relay would announce it) once they hold
    // its inputs below 200.
    ls_rollback_destroy(s.p[2].rb);
    ls_rollback_def d = ls_default_rollback_def();
    d.slots = 3;
    d.input_size = o.isz;
    d.local_slot = 2;
    d.ticks = 200;
    d.time_sync_threshold = 0;
    d.cb = callbacks(&s.p[2].g);
    s.p[2].rb = ls_rollback_create(&d, NULL);
    bool told[MAXP] = {false};
    uint64_t limit = 60000000;
    for (s.now = 0; s.now < limit; s.now += 1000) {
        size_t keep = 0;
        for (size_t i = 0; i < s.qlen; i++) {
            if (s.q[i].at <= s.now) {
                deliver(&s, &s.q[i].m);
            } else {
                s.q[keep++] = s.q[i];
            }
        }
        s.qlen = keep;
        bool all = true;
        for (uint32_t i = 0; i < 3; i++) {
            net_peer *p = &s.p[i];
            if (i < 2 && !told[i] && ls_rollback_frontier(p->rb, 2) >= 200) {
                ls_rollback_disconnect(p->rb, 2, 200);
                told[i] = true;
            }
            while (p->next_frame <= s.now) {
                ls_rollback_advance(p->rb);
                p->next_frame += p->period;
                if (i < 2) {
                    check_final(&s, p, true);
                }
                for (uint32_t j = 0; j < 3; j++) {
                    if (j != i) {
                        send_state(&s, i, j);
                    }
                }
            }
            if (i < 2) {
                check_final(&s, p, true);
            }
            all &= i == 2 || (peer_done(&s, p) && p->recorded >= 400);
        }
        if (all) {
            break;
        }
    }
    for (uint32_t i = 0; i < 2; i++) {
        cr_assert(told[i]);
        cr_assert_eq(s.p[i].recorded, 400, "peer %u", i);
        cr_assert_eq(ls_rollback_stats_get(s.p[i].rb).desyncs, 0);
    }
    mesh_free(&s);
}

// ---- part 3: real peers in rollback mode and a real relay ----

#define RELAY_PORT 9000

typedef struct rpacket {
    uint64_t at;
    int dest; // -1: relay, else peer index
    ls_net_addr from;
    size_t len;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} rpacket;

typedef struct rsim {
    ls_relay *relay;
    uint32_t session, n, ticks, delay;
    bool arena;
    ls_scene scene;
    ls_peer *peer[MAXP];
    game g[MAXP];         // its event counters count the peer's events
    uint64_t start[MAXP]; // a peer is polled (and hears datagrams) from this time on ...
    uint64_t stop[MAXP];  // ... until this time (0: never stops; a crash)
    ls_net_fault fault;
    rpacket *q;
    size_t qlen, qcap;
    uint64_t now;
    uint32_t rec_ticks;
    uint64_t rec_sums[MAXT];
    uint8_t rec_inputs[MAXT][MAXP * MAXIN];
    bool rec_ended;
    uint32_t relay_desyncs, first_relay_desync;
} rsim;

// Set by a test: every advance through a peer checks ls_peer_predicted against
// ls_peer_confirmed_input (rs_probe_tick, below).
static rsim *rs_probe;
static void rs_probe_tick(rsim *s, const game *g, uint32_t tick, const uint8_t *inputs,
                          uint32_t slots, uint32_t isz);

static uint64_t p_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                          uint32_t isz)
{
    if (rs_probe) {
        rs_probe_tick(rs_probe, user, tick, inputs, slots, isz);
    }
    return g_advance(user, tick, inputs, slots, isz, 0);
}

static void rs_event(void *user, const ls_peer_event *ev)
{
    game *g = user;
    switch (ev->type) {
    case LS_PEER_EV_ROLLBACK:
        g->rollbacks++;
        cr_assert_gt(ev->count, 0);
        break;
    case LS_PEER_EV_WAITING:
        g->waits++;
        break;
    case LS_PEER_EV_TIME_SYNC:
        g->time_syncs++;
        break;
    case LS_PEER_EV_DESYNC:
        if (g->desyncs++ == 0) {
            g->first_desync = ev->tick;
        }
        break;
    case LS_PEER_EV_STATE_ERROR:
        g->errors++;
        break;
    default:
        break;
    }
}

static ls_net_addr rs_peer_addr(int i)
{
    return ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(20000 + i));
}

static ls_net_addr rs_relay_addr(void)
{
    return ls_net_addr_ipv4(127, 0, 0, 1, RELAY_PORT);
}

static void rs_enqueue(rsim *s, int dest, const ls_net_addr *from, const uint8_t *data, size_t len)
{
    uint64_t when[2];
    uint32_t copies = ls_net_fault_apply(&s->fault, s->now, when);
    for (uint32_t c = 0; c < copies; c++) {
        if (s->qlen == s->qcap) {
            s->qcap = s->qcap ? s->qcap * 2 : 1024;
            s->q = realloc(s->q, s->qcap * sizeof *s->q);
            cr_assert_not_null(s->q);
        }
        rpacket *p = &s->q[s->qlen++];
        p->at = when[c] > s->now ? when[c] : s->now + 1;
        p->dest = dest;
        p->from = *from;
        p->len = len;
        memcpy(p->data, data, len);
        ls_net_fault_corrupt(&s->fault, p->data, len);
    }
}

static void rs_rec_tick(void *user, uint32_t session, uint32_t tick, const uint8_t *inputs,
                        uint64_t checksum)
{
    rsim *s = user;
    (void)session;
    cr_assert_eq(tick, s->rec_ticks, "recorder gets ticks in order");
    memcpy(s->rec_inputs[tick], inputs, (size_t)s->n * (s->arena ? 1 : 2));
    s->rec_sums[tick] = checksum;
    s->rec_ticks = tick + 1;
}

static void rs_rec_end(void *user, uint32_t session, uint32_t ticks)
{
    rsim *s = user;
    (void)session;
    cr_assert_eq(ticks, s->rec_ticks);
    s->rec_ended = true;
}

static void rs_drain(rsim *s)
{
    ls_net_datagram d;
    ls_net_addr ra = rs_relay_addr();
    while (ls_relay_next_datagram(s->relay, &d)) {
        rs_enqueue(s, d.to.port - 20000, &ra, d.data, d.len);
    }
    for (uint32_t i = 0; i < s->n; i++) {
        ls_net_addr pa = rs_peer_addr((int)i);
        while (ls_peer_next_datagram(s->peer[i], &d)) {
            rs_enqueue(s, -1, &pa, d.data, d.len);
        }
    }
    ls_relay_event ev;
    while (ls_relay_next_event(s->relay, &ev)) {
        if (ev.type == LS_RELAY_EV_DESYNC && s->relay_desyncs++ == 0) {
            s->first_relay_desync = ev.tick;
        }
    }
}

typedef struct rsim_opts {
    uint32_t n, ticks, delay, window;
    bool arena;
    uint64_t seed;
    ls_net_fault_def fault;
    uint64_t start_us[MAXP];
    int64_t perturb[MAXP]; // 0: none, else tick + 1
    bool lockstep[MAXP];   // this peer plays lockstep
} rsim_opts;

static void rs_init(rsim *s, const rsim_opts *o)
{
    memset(s, 0, sizeof *s);
    s->n = o->n;
    s->ticks = o->ticks;
    s->delay = o->delay;
    s->arena = o->arena;
    s->now = 1000000;
    ls_relay_def rd = ls_default_relay_def();
    s->relay = ls_relay_create(&rd, NULL);
    cr_assert_not_null(s->relay);
    ls_session_def sd = ls_default_session_def();
    sd.slots = o->n;
    sd.ticks = o->ticks;
    sd.delay = o->delay;
    sd.input_size = o->arena ? 1 : 2;
    sd.tick_rate = 60;
    cr_assert_eq(ls_relay_session_create(s->relay, &sd, s->now, &s->session), LS_OK);
    ls_relay_recorder rec = {s, rs_rec_tick, rs_rec_end, NULL};
    ls_relay_session_set_recorder(s->relay, s->session, &rec);
    ls_net_fault_init(&s->fault, &o->fault);
    if (o->arena) {
        cr_assert_eq(ls_scene_load("tools/scenes/arena.scene", &s->scene, NULL), LS_OK);
    }
    for (uint32_t i = 0; i < o->n; i++) {
        game *g = &s->g[i];
        g->slot = i;
        g->seed = o->seed;
        g->isz = sd.input_size;
        g->arena = o->arena;
        g->perturb_tick = o->perturb[i] ? o->perturb[i] - 1 : -1;
        if (o->arena) {
            g->scene = &s->scene;
            g->world = ls_scene_instantiate(&s->scene, NULL);
            cr_assert_not_null(g->world);
        }
        s->start[i] = s->now + o->start_us[i];
        ls_peer_def pd = ls_default_peer_def();
        ls_net_credential cred;
        cr_assert_eq(ls_relay_session_credential(s->relay, s->session, i, &cred), LS_OK);
        cr_assert_eq(ls_peer_def_set_credential(&pd, &cred), LS_OK);
        pd.relay = rs_relay_addr();
        pd.mode = o->lockstep[i] ? LS_PEER_LOCKSTEP : LS_PEER_ROLLBACK;
        pd.max_prediction = o->window;
        pd.cb.user = g;
        pd.cb.local_input = g_local;
        pd.cb.advance = p_advance;
        pd.cb.on_event = rs_event;
        pd.cb.save = g_save;
        pd.cb.load = g_load;
        ls_error err;
        s->peer[i] = ls_peer_create(&pd, &err);
        cr_assert_not_null(s->peer[i], "%s", err.message);
    }
}

static void rs_free(rsim *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        ls_peer_destroy(s->peer[i]);
        ls_world_destroy(s->g[i].world);
    }
    if (s->arena) {
        ls_scene_free(&s->scene);
    }
    ls_relay_destroy(s->relay);
    free(s->q);
}

static bool rs_alive(const rsim *s, uint32_t i)
{
    return s->now >= s->start[i] && (!s->stop[i] || s->now < s->stop[i]);
}

// 1 ms of fake time: deliver what is due (earliest first), poll the relay and
// every peer that has started (and not crashed).
static void rs_step(rsim *s)
{
    s->now += 1000;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < s->qlen; i++) {
            if (s->q[i].at <= s->now && (best == SIZE_MAX || s->q[i].at < s->q[best].at)) {
                best = i;
            }
        }
        if (best == SIZE_MAX) {
            break;
        }
        rpacket p = s->q[best];
        s->q[best] = s->q[--s->qlen];
        if (p.dest < 0) {
            ls_relay_receive(s->relay, &p.from, p.data, p.len, s->now);
        } else if (rs_alive(s, (uint32_t)p.dest)) {
            ls_peer_receive(s->peer[p.dest], p.data, p.len, s->now);
        }
        rs_drain(s);
    }
    ls_relay_poll(s->relay, s->now);
    for (uint32_t i = 0; i < s->n; i++) {
        if (rs_alive(s, i)) {
            ls_peer_poll(s->peer[i], s->now);
        }
    }
    rs_drain(s);
}

static bool rs_all_finished(const rsim *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->stop[i] && ls_peer_state_get(s->peer[i]) != LS_PEER_FINISHED) {
            return false;
        }
    }
    return true;
}

static void rs_run(rsim *s, uint64_t max_ms)
{
    for (uint64_t ms = 0; ms < max_ms && !(s->rec_ended && rs_all_finished(s)); ms++) {
        rs_step(s);
    }
    cr_assert(s->rec_ended, "the relay recorded the whole match within %llu ms (%u ticks)",
              (unsigned long long)max_ms, s->rec_ticks);
    cr_assert(rs_all_finished(s), "every peer finished");
}

// The relay's recording is the lockstep reference, tick by tick: the same
// inputs, the same agreed checksums; no desync anywhere.
static void rs_expect_reference(rsim *s, const reference *ref, const char *what)
{
    cr_assert_eq(s->rec_ticks, s->ticks);
    uint32_t isz = s->arena ? 1 : 2;
    for (uint32_t t = 0; t < s->ticks; t++) {
        for (uint32_t k = 0; k < s->n; k++) {
            uint8_t want[MAXIN];
            if (t < s->delay) {
                memset(want, 0, isz);
            } else {
                fill_input(s->g[k].seed, k, t, want, isz);
            }
            cr_assert_eq(memcmp(s->rec_inputs[t] + k * isz, want, isz), 0, "%s: input %u/%u", what,
                         t, k);
        }
        cr_assert_eq(s->rec_sums[t], ref->sums[t], "%s: agreed checksum of tick %u", what, t);
    }
    cr_assert_eq(s->relay_desyncs, 0, "%s: the relay saw no desync", what);
    for (uint32_t i = 0; i < s->n; i++) {
        cr_assert_eq(s->g[i].desyncs, 0, "%s: peer %u", what, i);
        cr_assert_eq(s->g[i].errors, 0);
        cr_assert_eq(ls_peer_last_checksum(s->peer[i]), ref->sums[s->ticks - 1],
                     "%s: peer %u final checksum", what, i);
    }
}

static void rs_log(rsim *s, const char *what)
{
    for (uint32_t i = 0; i < s->n; i++) {
        ls_peer_stats st = ls_peer_stats_get(s->peer[i]);
        cr_log_info(
            "%s peer %u: frames %llu rollbacks %llu resim/frame %.2f max %u hit %.1f%% "
            "waits %llu time-sync %llu+%u dropped %llu (bad mac %llu)",
            what, i, (unsigned long long)st.frames, (unsigned long long)st.rollbacks,
            st.frames ? (double)st.resimulated / (double)st.frames : 0.0, st.max_resim_frame,
            st.predicted ? 100.0 * (double)st.predicted_hits / (double)st.predicted : 100.0,
            (unsigned long long)st.waits, (unsigned long long)st.time_sync_skips, st.clock_shifts,
            (unsigned long long)st.dropped, (unsigned long long)st.bad_mac);
    }
}

static rsim_opts rs_lossy(uint32_t n, uint32_t ticks, uint32_t delay, uint64_t seed)
{
    rsim_opts o;
    memset(&o, 0, sizeof o);
    o.n = n;
    o.ticks = ticks;
    o.delay = delay;
    o.window = 8;
    o.seed = seed;
    // Every datagram, both ways: latency uniform 0..100 ms on each hop (so up
    // to 200 ms peer to peer), 30 % loss, 5 % duplicated, 10 % reordered, 1 %
    // with a flipped bit (dropped by authentication, never acted on).
    o.fault = (ls_net_fault_def){.loss_ppm = 300000,
                                 .dup_ppm = 50000,
                                 .reorder_ppm = 100000,
                                 .jitter_us = 100000,
                                 .seed = seed,
                                 .corrupt_ppm = 10000};
    return o;
}

Test(rollback, peers_through_the_relay_record_the_lockstep_match, .timeout = 120)
{
    static const struct {
        uint32_t n, delay;
        uint64_t seed;
    } cases[] = {{4, 0, 61}, {4, 2, 62}, {2, 0, 63}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        rsim_opts o = rs_lossy(cases[c].n, 600, cases[c].delay, cases[c].seed);
        static reference ref;
        make_reference(&ref, false, o.seed, o.n, 2, o.delay, o.ticks, NULL);
        static rsim s;
        rs_init(&s, &o);
        rs_run(&s, 60000);
        char what[64];
        snprintf(what, sizeof what, "relay, %u peers, delay %u", o.n, o.delay);
        rs_expect_reference(&s, &ref, what);
        rs_log(&s, what);
        uint64_t rollbacks = 0;
        for (uint32_t i = 0; i < o.n; i++) {
            ls_peer_stats st = ls_peer_stats_get(s.peer[i]);
            rollbacks += st.rollbacks;
            cr_assert_eq(s.g[i].rollbacks, st.rollbacks, "one ROLLBACK event per correction");
            cr_assert_leq(st.max_rollback, 8);
            cr_assert_eq(ls_peer_state_get(s.peer[i]), LS_PEER_FINISHED);
        }
        cr_assert_gt(rollbacks, 0, "%s: predictions failed and were corrected", what);
        cr_assert_gt(s.fault.corrupted, 0);
        rs_free(&s);
    }
}

Test(rollback, the_arena_through_the_relay_in_rollback_mode, .timeout = 120)
{
    rsim_opts o = rs_lossy(4, 600, 0, 71);
    o.arena = true;
    static reference ref;
    make_reference(&ref, true, o.seed, o.n, 1, o.delay, o.ticks, NULL);
    static rsim s;
    rs_init(&s, &o);
    rs_run(&s, 60000);
    rs_expect_reference(&s, &ref, "arena via relay");
    rs_log(&s, "arena via relay");
    for (uint32_t i = 0; i < o.n; i++) {
        cr_assert_eq(ls_world_checksum(s.g[i].world), ref.sums[o.ticks - 1]);
    }
    rs_free(&s);
}

Test(rollback, the_relay_names_a_perturbed_rollback_peer_at_its_tick, .timeout = 60)
{
    rsim_opts o = rs_lossy(4, 300, 0, 81);
    o.perturb[2] = 37 + 1;
    static rsim s;
    rs_init(&s, &o);
    rs_run(&s, 60000);
    cr_assert_gt(s.relay_desyncs, 0);
    cr_assert_eq(s.first_relay_desync, 37, "the relay names tick 37 (it compares final ticks)");
    for (uint32_t i = 0; i < o.n; i++) {
        // DESYNC notices travel like any datagram (30 % are lost): each peer
        // hears of the divergence, at 37 or at one of the ticks after it.
        cr_assert_gt(s.g[i].desyncs, 0, "peer %u told", i);
        cr_assert_geq(s.g[i].first_desync, 37, "peer %u", i);
    }
    rs_free(&s);
}

Test(rollback, lockstep_and_rollback_peers_record_the_same_match, .timeout = 60)
{
    rsim_opts o = rs_lossy(4, 400, 2, 91);
    o.lockstep[1] = o.lockstep[3] = true;
    static reference ref;
    make_reference(&ref, false, o.seed, o.n, 2, o.delay, o.ticks, NULL);
    static rsim s;
    rs_init(&s, &o);
    rs_run(&s, 60000);
    rs_expect_reference(&s, &ref, "mixed modes");
    cr_assert_eq(ls_peer_stats_get(s.peer[1]).frames, 0, "lockstep peers run no rollback frames");
    cr_assert_gt(ls_peer_stats_get(s.peer[0]).frames, 0);
    rs_free(&s);
}

// Peer 3 starts 400 ms (24 ticks) late. The others run into their window and
// lose those frames waiting; time sync (from the relay's ACKs) then keeps the
// early ones from running ahead again. Every tick is still the lockstep one.
Test(rollback, a_late_peer_through_the_relay_time_sync, .timeout = 60)
{
    rsim_opts o = rs_lossy(4, 600, 0, 101);
    o.fault = (ls_net_fault_def){.delay_us = 15000, .jitter_us = 10000, .seed = 101};
    o.start_us[3] = 400000;
    static reference ref;
    make_reference(&ref, false, o.seed, o.n, 2, o.delay, o.ticks, NULL);
    static rsim s;
    rs_init(&s, &o);
    rs_run(&s, 60000);
    rs_expect_reference(&s, &ref, "late peer");
    rs_log(&s, "late peer");
    for (uint32_t i = 0; i < 3; i++) {
        ls_peer_stats st = ls_peer_stats_get(s.peer[i]);
        cr_assert_gt(st.waits, 0, "peer %u waited for the late one", i);
        cr_assert_gt(s.g[i].waits, 0);
        cr_assert_leq(st.frames_ahead, 2, "peer %u ends level (ahead %d)", i, st.frames_ahead);
    }
    rs_free(&s);
}

Test(rollback, peer_definitions_for_rollback_mode)
{
    game g;
    memset(&g, 0, sizeof g);
    ls_peer_def pd = ls_default_peer_def();
    cr_assert_eq(pd.max_prediction, 8);
    memset(pd.key, 7, sizeof pd.key);
    pd.cb.user = &g;
    pd.cb.local_input = g_local;
    pd.cb.advance = p_advance;
    pd.mode = LS_PEER_ROLLBACK;
    ls_error err;
    cr_assert_null(ls_peer_create(&pd, &err), "rollback without save/load");
    cr_assert(strstr(err.message, "save") != NULL, "%s", err.message);
    pd.cb.save = g_save;
    pd.cb.load = g_load;
    pd.max_prediction = LS_ROLLBACK_MAX_PREDICTION + 1;
    cr_assert_null(ls_peer_create(&pd, &err));
    pd.max_prediction = 8;
    ls_peer *p = ls_peer_create(&pd, &err);
    cr_assert_not_null(p, "%s", err.message);
    cr_assert_eq(ls_peer_ticks(p), 0);
    cr_assert_eq(ls_peer_stats_get(p).frames, 0);
    ls_peer_destroy(p);
}

// Peer 2 crashes 2 s into the match. The relay disconnects it after its
// timeout at a tick d it announces to everyone; the others had been predicting
// its last input and roll back to the empty input from d on. The recording is
// the lockstep match in which slot 2 plays empty inputs from d.
Test(rollback, a_crashed_peer_is_disconnected_at_a_tick_every_rollback_peer_agrees_on,
     .timeout = 60)
{
    rsim_opts o = rs_lossy(4, 600, 1, 111);
    o.fault.loss_ppm = 100000;
    static rsim s;
    rs_init(&s, &o);
    s.stop[2] = s.now + 2000000;
    rs_run(&s, 60000);
    // d: the first tick (past the delay) where slot 2's recorded input is empty.
    uint32_t d = UINT32_MAX;
    for (uint32_t t = o.delay; t < o.ticks && d == UINT32_MAX; t++) {
        if (s.rec_inputs[t][2 * 2] == 0 && s.rec_inputs[t][2 * 2 + 1] == 0) {
            d = t;
        }
    }
    cr_assert_lt(d, o.ticks, "slot 2 was disconnected");
    cr_assert_gt(d, 60, "after it had played for a while");
    uint32_t gone[MAXP] = {UINT32_MAX, UINT32_MAX, d, UINT32_MAX};
    static reference ref;
    make_reference(&ref, false, o.seed, o.n, 2, o.delay, o.ticks, gone);
    for (uint32_t t = 0; t < o.ticks; t++) {
        cr_assert_eq(s.rec_sums[t], ref.sums[t], "agreed checksum of tick %u", t);
    }
    cr_assert_eq(s.relay_desyncs, 0);
    for (uint32_t i = 0; i < 4; i++) {
        if (i != 2) {
            cr_assert_eq(s.g[i].desyncs, 0);
            cr_assert_eq(ls_peer_last_checksum(s.peer[i]), ref.sums[o.ticks - 1]);
        }
    }
    rs_free(&s);
}

// ---- the predicted mask and confirmed inputs through the peer (SPEC.md §24.6) ----

static uint64_t probe_predicted[MAXP], probe_confirmed[MAXP];

// Inside advance: bit k of ls_peer_predicted is set exactly when slot k's input of the tick
// is not confirmed yet (ls_peer_confirmed_input says no); a clear bit's input is the
// confirmed one, which is the input the slot's player made. Our own input is never a
// prediction; a lockstep peer never predicts.
static void rs_probe_tick(rsim *s, const game *g, uint32_t tick, const uint8_t *inputs,
                          uint32_t slots, uint32_t isz)
{
    ls_peer *p = s->peer[g->slot];
    uint32_t mask = ls_peer_predicted(p);
    cr_assert_eq(mask >> g->slot & 1u, 0u, "peer %u tick %u: our input is known", g->slot, tick);
    cr_assert_eq(mask >> slots, 0u);
    if (mask) {
        cr_assert_geq(tick, ls_peer_confirmed(p), "a predicted tick is not confirmed");
    }
    for (uint32_t k = 0; k < slots; k++) {
        uint8_t got[MAXIN], want[MAXIN];
        bool known = ls_peer_confirmed_input(p, k, tick, got);
        if (mask >> k & 1u) {
            cr_assert_not(known, "peer %u tick %u slot %u: predicted, not confirmed", g->slot, tick,
                          k);
            probe_predicted[g->slot]++;
            continue;
        }
        cr_assert(known, "peer %u tick %u slot %u: not predicted, so confirmed", g->slot, tick, k);
        cr_assert_eq(memcmp(got, inputs + (size_t)k * isz, isz), 0, "the input advance got");
        if (tick < s->delay) {
            memset(want, 0, isz);
        } else {
            fill_input(g->seed, k, tick, want, isz);
        }
        cr_assert_eq(memcmp(got, want, isz), 0, "peer %u tick %u slot %u: the player's", g->slot,
                     tick, k);
        probe_confirmed[g->slot]++;
    }
}

Test(rollback, the_predicted_mask_and_confirmed_inputs_through_the_peer, .timeout = 60)
{
    rsim_opts o = rs_lossy(3, 400, 1, 131);
    o.lockstep[2] = true; // a lockstep peer in the same match: its mask is always 0
    static reference ref;
    make_reference(&ref, false, o.seed, o.n, 2, o.delay, o.ticks, NULL);
    static rsim s;
    rs_init(&s, &o);
    uint8_t buf[MAXIN];
    cr_assert_not(ls_peer_confirmed_input(s.peer[0], 0, 0, buf), "nothing before WELCOME");
    cr_assert_eq(ls_peer_confirmed(s.peer[0]), 0u);
    rs_probe = &s;
    rs_run(&s, 60000);
    rs_probe = NULL;
    rs_expect_reference(&s, &ref, "probed");
    for (uint32_t i = 0; i < 3; i++) {
        cr_log_info("peer %u (%s): %llu predicted and %llu confirmed inputs simulated", i,
                    i == 2 ? "lockstep" : "rollback", (unsigned long long)probe_predicted[i],
                    (unsigned long long)probe_confirmed[i]);
        cr_assert_eq(ls_peer_confirmed(s.peer[i]), 400u);
        // The last LS_ROLLBACK_INPUT_WINDOW ticks' inputs are kept: the recorded ones.
        for (uint32_t t = 400 - 200; t < 400; t++) {
            for (uint32_t k = 0; k < 3; k++) {
                cr_assert(ls_peer_confirmed_input(s.peer[i], k, t, buf), "peer %u %u/%u", i, t, k);
                cr_assert_eq(memcmp(buf, s.rec_inputs[t] + k * 2, 2), 0);
            }
        }
        cr_assert_not(ls_peer_confirmed_input(s.peer[i], 0, 100, buf), "too old");
        cr_assert_not(ls_peer_confirmed_input(s.peer[i], 0, 400, buf), "beyond the match");
        cr_assert_not(ls_peer_confirmed_input(s.peer[i], 3, 399, buf), "not a slot");
    }
    cr_assert_gt(probe_predicted[0] + probe_predicted[1], 0u, "the rollback peers predicted");
    cr_assert_eq(probe_predicted[2], 0u, "lockstep never predicts");
    cr_assert_eq(probe_confirmed[2], 400u * 3u);
    rs_free(&s);
}
