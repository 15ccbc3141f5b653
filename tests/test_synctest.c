// SPDX-License-Identifier: MIT
// SyncTest (net/src/synctest.c) on every shipped scene with the reference game
// (ls_game_tick, world snapshots as save/load, the seeded input script for
// scenes with players): every tick is rolled back k = 1..8 ticks (cycling) and
// re-simulated, and checksums and saved states must equal the first
// simulation's. Deliberately broken games are caught at the exact tick.
#include "ls/checksum.h"
#include "ls/game.h"
#include "ls/net_synctest.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

// ---- the reference game as SyncTest callbacks ----

typedef struct scene_game {
    ls_scene scene;
    ls_world *world;
    ls_input_script script;
    uint32_t players;
} scene_game;

static void sg_inputs(void *user, uint32_t tick, uint8_t *out, uint32_t slots, uint32_t isz)
{
    scene_game *g = user;
    (void)tick, (void)slots;
    ls_input_script_next(&g->script, out, isz);
}

static size_t sg_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    scene_game *g = user;
    (void)tick;
    size_t need = ls_world_snapshot_size(g->world);
    return buf && cap >= need ? ls_world_snapshot_save(g->world, buf, cap) : need;
}

static bool sg_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    scene_game *g = user;
    (void)tick;
    return ls_world_snapshot_restore(g->world, buf, size, NULL) == LS_OK;
}

static uint64_t sg_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                           uint32_t isz)
{
    scene_game *g = user;
    (void)tick;
    return ls_game_tick(g->world, &g->scene, inputs, slots, isz);
}

static void sg_open(scene_game *g, const char *path)
{
    memset(g, 0, sizeof *g);
    ls_error err;
    cr_assert_eq(ls_scene_load(path, &g->scene, &err), LS_OK, "%s: %s", path, err.message);
    g->world = ls_scene_instantiate(&g->scene, &err);
    cr_assert_not_null(g->world, "%s: %s", path, err.message);
    g->players = g->scene.player_count;
    ls_input_script_init(&g->script, 20240601, g->players ? g->players : 1);
}

static void sg_close(scene_game *g)
{
    ls_world_destroy(g->world);
    ls_scene_free(&g->scene);
}

static ls_synctest_def sg_def(scene_game *g)
{
    ls_synctest_def d = ls_default_synctest_def();
    d.slots = g->players;
    d.input_size = 1;
    d.min_distance = 1;
    d.max_distance = 8;
    d.cb = (ls_synctest_callbacks){g, g->players ? sg_inputs : NULL, sg_save, sg_load, sg_advance};
    return d;
}

// Plays `lead` ticks normally (the checksums are then those of a plain run),
// then SyncTest for `ticks` ticks with k = 1..8, and checks that the
// first-simulation stream equals a plain run of the same ticks.
static void synctest_scene(const char *name, uint32_t lead, uint32_t ticks)
{
    char path[256];
    snprintf(path, sizeof path, "tools/scenes/%.200s.scene", name);
    if (SANITIZED) {
        ticks = ticks / 4 > 16 ? ticks / 4 : 16;
        lead /= 4;
    }
    scene_game g, plain;
    sg_open(&g, path);
    sg_open(&plain, path);
    uint32_t scene_ticks = g.scene.ticks ? g.scene.ticks : 600;
    ticks = ticks < scene_ticks ? ticks : scene_ticks;
    uint8_t in[LS_SCENE_MAX_PLAYERS];
    for (uint32_t t = 0; t < lead; t++) {
        if (g.players) {
            ls_input_script_next(&g.script, in, 1);
        }
        ls_game_tick(g.world, &g.scene, g.players ? in : NULL, g.players, 1);
    }
    // SyncTest numbers its own ticks from 0; the game does not need the tick.
    ls_synctest_def d = sg_def(&g);
    ls_synctest *st = ls_synctest_create(&d, NULL);
    cr_assert_not_null(st);
    ls_error err;
    ls_result r = ls_synctest_run(st, ticks, &err);
    cr_assert_eq(r, LS_OK, "%s after %u lead ticks: %s", name, lead, err.message);
    ls_synctest_report rep = ls_synctest_report_get(st);
    cr_assert_eq(rep.ticks, ticks);
    // Ticks 0..7 roll back min(k, t + 1); every later tick k = 1 + t % 8.
    uint64_t want = 0;
    for (uint32_t t = 0; t < ticks; t++) {
        uint32_t k = 1 + t % 8;
        want += k < t + 1 ? k : t + 1;
    }
    cr_assert_eq(rep.resimulated, want);
    // The same ticks played plainly end on the same checksum.
    uint64_t c = 0;
    for (uint32_t t = 0; t < lead + ticks; t++) {
        if (plain.players) {
            ls_input_script_next(&plain.script, in, 1);
        }
        c = ls_game_tick(plain.world, &plain.scene, plain.players ? in : NULL, plain.players, 1);
    }
    cr_assert_eq(rep.last_checksum, c, "%s: SyncTest's first simulation is a plain run", name);
    cr_assert_eq(ls_world_checksum(g.world), c, "%s: the re-simulated present is the same", name);
    ls_synctest_destroy(st);
    sg_close(&g);
    sg_close(&plain);
}

// Per scene: lead ticks played plainly, then SyncTest ticks (capped at the
// scene's length). Small scenes run (nearly) their whole length; the big ones
// run a prefix after a lead into the contact-rich part. Measured on the 2-core
// machine at -O2 (-j2, shared): about 40 s for all 28 scenes (SPEC.md §24.7).
typedef struct scene_plan {
    const char *name;
    uint32_t lead, ticks;
} scene_plan;

static const scene_plan PLANS[] = {
    {"arena", 0, 1200},
    {"catapult", 0, 600},
    {"ccd", 0, 600},
    {"chain_50", 0, 480},
    {"compound_stairs", 0, 600},
    {"dominoes", 0, 600},
    {"falling_hinges", 0, 240},
    {"heavy_light", 0, 600},
    {"hinge_net", 0, 300},
    {"hull_pile", 60, 24},
    {"mesh_terrain", 0, 600},
    {"pile_1000", 60, 16},
    {"pyramid", 0, 16},
    {"ragdolls", 0, 320},
    {"rain_2000", 60, 16},
    {"rope_bridge", 0, 480},
    {"six_box_tower", 0, 600},
    {"slope", 0, 600},
    {"sphere_bounce", 0, 300},
    {"spinner", 0, 160},
    {"tower_imperfect", 0, 600},
    {"tower_struck", 0, 600},
    {"two_ramps", 0, 600},
    // Particles (ls/particles.h): the cloth scenes after a lead into the draping,
    // tearing and flapping.
    {"cloth_drape", 120, 24},
    {"cloth_tear", 120, 32},
    {"flag", 60, 32},
    {"ragdoll_stairs", 0, 480},
    {"rope_swing", 0, 480},
    {"trampoline", 60, 120},
    {"ball_into_cloth", 20, 60},
    {"rope_bridge_loaded", 20, 60},
};

static const scene_plan *plan_of(const char *name)
{
    for (size_t i = 0; i < sizeof PLANS / sizeof *PLANS; i++) {
        if (strcmp(PLANS[i].name, name) == 0) {
            return &PLANS[i];
        }
    }
    return NULL;
}

// Scenes added after this file get a default plan (no lead; 16..240 ticks by
// the size of the initial snapshot), so every shipped scene is SyncTested; give a new scene its own
// plan (and test) above when it needs a lead or is slow.
Test(synctest, every_other_shipped_scene, .timeout = 300)
{
    DIR *d = opendir("tools/scenes");
    cr_assert_not_null(d);
    struct dirent *e;
    char names[64][128];
    unsigned n_new = 0;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 7 || strcmp(e->d_name + n - 6, ".scene") != 0 || n - 6 >= 128) {
            continue;
        }
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(n - 6), e->d_name);
        if (!plan_of(name) && n_new < 64) {
            snprintf(names[n_new++], sizeof names[0], "%s", name);
        }
    }
    closedir(d);
    for (unsigned i = 0; i < n_new; i++) {
        char path[256];
        snprintf(path, sizeof path, "tools/scenes/%.127s.scene", names[i]);
        scene_game g;
        sg_open(&g, path);
        size_t bytes = ls_world_snapshot_size(g.world); // a proxy for the work per tick
        sg_close(&g);
        size_t ticks = 4000000 / (bytes ? bytes : 1);
        ticks = ticks < 16 ? 16 : ticks > 240 ? 240 : ticks;
        cr_log_info("synctest: %s (no plan of its own): %zu ticks", names[i], ticks);
        synctest_scene(names[i], 0, (uint32_t)ticks);
    }
}

#define SYNCTEST_SCENE(id)                                                                         \
    Test(synctest, scene_##id, .timeout = 300)                                                     \
    {                                                                                              \
        const scene_plan *p = plan_of(#id);                                                        \
        cr_assert_not_null(p);                                                                     \
        synctest_scene(#id, p->lead, p->ticks);                                                    \
    }

SYNCTEST_SCENE(arena)
SYNCTEST_SCENE(catapult)
SYNCTEST_SCENE(ccd)
SYNCTEST_SCENE(chain_50)
SYNCTEST_SCENE(compound_stairs)
SYNCTEST_SCENE(dominoes)
SYNCTEST_SCENE(falling_hinges)
SYNCTEST_SCENE(heavy_light)
SYNCTEST_SCENE(hinge_net)
SYNCTEST_SCENE(hull_pile)
SYNCTEST_SCENE(mesh_terrain)
SYNCTEST_SCENE(pile_1000)
SYNCTEST_SCENE(pyramid)
SYNCTEST_SCENE(ragdolls)
SYNCTEST_SCENE(rain_2000)
SYNCTEST_SCENE(rope_bridge)
SYNCTEST_SCENE(six_box_tower)
SYNCTEST_SCENE(slope)
SYNCTEST_SCENE(sphere_bounce)
SYNCTEST_SCENE(spinner)
SYNCTEST_SCENE(tower_imperfect)
SYNCTEST_SCENE(tower_struck)
SYNCTEST_SCENE(two_ramps)
SYNCTEST_SCENE(cloth_drape)
SYNCTEST_SCENE(cloth_tear)
SYNCTEST_SCENE(flag)
SYNCTEST_SCENE(ragdoll_stairs)
SYNCTEST_SCENE(rope_swing)
SYNCTEST_SCENE(trampoline)
SYNCTEST_SCENE(ball_into_cloth)
SYNCTEST_SCENE(rope_bridge_loaded)

// ---- deliberately broken games ----

// The arena plus a score that the checksum covers but the snapshot forgets:
// it goes up at tick 36 (and every 37 ticks). Rolling back over tick 36 keeps
// the score, so the first re-simulated tick already differs.
typedef struct forgetful {
    scene_game g;
    uint32_t score;
    uint32_t calls; // advance calls: saved, but never restored by load
    bool save_calls;
} forgetful;

static uint64_t fg_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                           uint32_t isz)
{
    forgetful *f = user;
    uint64_t c = sg_advance(&f->g, tick, inputs, slots, isz);
    f->calls++;
    if (tick % 37 == 36) {
        f->score++;
    }
    ls_hasher h;
    ls_hasher_init(&h);
    ls_hasher_put_u64(&h, c);
    ls_hasher_put_u32(&h, f->score);
    return ls_hasher_digest(&h);
}

static size_t fg_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    forgetful *f = user;
    size_t n = sg_save(&f->g, tick, buf, cap);
    if (!f->save_calls) {
        return n;
    }
    if (buf && cap >= n + 4) {
        ls_put_u32le(buf + n, f->calls);
    }
    return n + 4;
}

static bool fg_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    forgetful *f = user;
    return sg_load(&f->g, tick, buf, f->save_calls ? size - 4 : size);
}

static void fg_inputs(void *user, uint32_t tick, uint8_t *out, uint32_t slots, uint32_t isz)
{
    forgetful *f = user;
    sg_inputs(&f->g, tick, out, slots, isz);
}

Test(synctest, state_missing_from_the_snapshot_is_caught_at_the_first_resimulated_tick)
{
    for (uint32_t k = 1; k <= 8; k++) {
        forgetful f;
        memset(&f, 0, sizeof f);
        sg_open(&f.g, "tools/scenes/arena.scene");
        ls_synctest_def d = sg_def(&f.g);
        d.cb = (ls_synctest_callbacks){&f, fg_inputs, fg_save, fg_load, fg_advance};
        d.min_distance = k;
        d.max_distance = k;
        ls_synctest *st = ls_synctest_create(&d, NULL);
        cr_assert_not_null(st);
        ls_error err;
        cr_assert_eq(ls_synctest_run(st, 200, &err), LS_ERR_DESYNC, "k=%u", k);
        ls_synctest_report rep = ls_synctest_report_get(st);
        // The score changes in tick 36; the rollback after it starts at 37 - k.
        cr_assert_eq(rep.failure, LS_SYNCTEST_CHECKSUM);
        cr_assert_eq(rep.tick, 37 - k, "k=%u: named tick %u", k, rep.tick);
        cr_assert_eq(rep.distance, k);
        cr_assert_eq(err.tick, (int64_t)(37 - k));
        cr_assert_eq(rep.ticks, 37, "found in the step that simulated tick 36");
        cr_assert_neq(rep.first, rep.again);
        cr_assert(strstr(err.message, "tick ") != NULL, "%s", err.message);
        // The failure is sticky.
        cr_assert_eq(ls_synctest_step(st, NULL), LS_ERR_DESYNC);
        ls_synctest_destroy(st);
        sg_close(&f.g);
    }
}

Test(synctest, state_saved_but_not_restored_is_caught_by_the_state_comparison)
{
    forgetful f;
    // The call counter is in the saved bytes but load ignores it (and the
    // checksum does not cover it): only the state comparison can see it.
    memset(&f, 0, sizeof f);
    sg_open(&f.g, "tools/scenes/arena.scene");
    f.save_calls = true;
    ls_synctest_def d = sg_def(&f.g);
    d.cb = (ls_synctest_callbacks){&f, fg_inputs, fg_save, fg_load, fg_advance};
    d.min_distance = 3;
    d.max_distance = 3;
    ls_synctest *st = ls_synctest_create(&d, NULL);
    cr_assert_not_null(st);
    ls_error err;
    cr_assert_eq(ls_synctest_run(st, 30, &err), LS_ERR_DESYNC);
    ls_synctest_report rep = ls_synctest_report_get(st);
    cr_assert_eq(rep.failure, LS_SYNCTEST_STATE, "%s", err.message);
    cr_assert_eq(rep.tick, 0, "the first re-simulated tick (tick 0, rolled back from tick 1)");
    cr_assert_eq(rep.distance, 1, "tick 0 can roll back only 1 tick");
    ls_synctest_destroy(st);
    sg_close(&f.g);
    // Without the state comparison the same game passes (the checksum never sees it).
    memset(&f, 0, sizeof f);
    sg_open(&f.g, "tools/scenes/arena.scene");
    f.save_calls = true;
    d = sg_def(&f.g);
    d.cb = (ls_synctest_callbacks){&f, fg_inputs, fg_save, fg_load, fg_advance};
    d.compare_states = false;
    st = ls_synctest_create(&d, NULL);
    cr_assert_eq(ls_synctest_run(st, 30, &err), LS_OK, "%s", err.message);
    ls_synctest_destroy(st);
    sg_close(&f.g);
}

static bool failing_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    (void)user, (void)buf, (void)size;
    return tick != 5;
}

static size_t tiny_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    (void)user;
    if (buf && cap >= 4) {
        ls_put_u32le(buf, tick);
    }
    return 4;
}

static uint64_t counter_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                                uint32_t isz)
{
    (void)user, (void)inputs, (void)slots, (void)isz;
    return ls_hash64(&tick, sizeof tick);
}

Test(synctest, a_failing_load_is_reported_with_its_tick)
{
    ls_synctest_def d = ls_default_synctest_def();
    d.cb = (ls_synctest_callbacks){NULL, NULL, tiny_save, failing_load, counter_advance};
    d.min_distance = d.max_distance = 2;
    ls_synctest *st = ls_synctest_create(&d, NULL);
    cr_assert_not_null(st);
    ls_error err;
    cr_assert_eq(ls_synctest_run(st, 100, &err), LS_ERR_IO);
    ls_synctest_report rep = ls_synctest_report_get(st);
    cr_assert_eq(rep.failure, LS_SYNCTEST_LOAD_FAILED);
    cr_assert_eq(rep.tick, 5);
    cr_assert_eq(rep.ticks, 7, "tick 5 is loaded after tick 6's first simulation");
    ls_synctest_destroy(st);
}

Test(synctest, bad_definitions_are_refused)
{
    ls_error err;
    ls_synctest_def d = ls_default_synctest_def();
    cr_assert_null(ls_synctest_create(&d, &err), "no callbacks");
    cr_assert_eq(err.code, LS_ERR_INVALID_ARGUMENT);
    d.cb = (ls_synctest_callbacks){NULL, NULL, tiny_save, failing_load, counter_advance};
    d.min_distance = 0;
    cr_assert_null(ls_synctest_create(&d, &err));
    d.min_distance = 9;
    cr_assert_null(ls_synctest_create(&d, &err), "min above max");
    d.min_distance = 1;
    d.max_distance = LS_SYNCTEST_MAX_DISTANCE + 1;
    cr_assert_null(ls_synctest_create(&d, &err));
    d.max_distance = LS_SYNCTEST_MAX_DISTANCE;
    ls_synctest *st = ls_synctest_create(&d, &err);
    cr_assert_not_null(st, "%s", err.message);
    cr_assert_eq(err.code, LS_OK);
    cr_assert_eq(ls_synctest_run(st, 100, NULL), LS_OK, "a deterministic toy game passes");
    cr_assert_eq(ls_synctest_report_get(st).failure, LS_SYNCTEST_OK);
    ls_synctest_destroy(st);
}
