// SPDX-License-Identifier: MIT
// Threads never change results (SPEC.md §11 "Threads"): every shipped scene
// gives the same checksum every tick with 1, 2, 3 and 8 workers, with the
// library's threads or a game's task system; two worlds step on two threads at
// once; and the pieces (worker pool, graph colouring) keep their contracts.
#define _POSIX_C_SOURCE 200809L // dirent, pthreads
#include "../fixmath_phys/src/dynamics/graph.h"
#include "../fixmath_phys/src/dynamics/workers.h"
#include "../fixmath_phys/src/world/world_internal.h"
#include "ls/scene.h"

#include <criterion/alloc.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// Scenes: 1 worker against 2, 3 and 8.

typedef struct scene_name {
    char name[48]; // inline: Criterion copies parameters into another process
} scene_name;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const scene_name *)a)->name, ((const scene_name *)b)->name);
}

static void free_names(struct criterion_test_params *p)
{
    cr_free(p->params);
}

ParameterizedTestParameters(threads, every_scene_steps_the_same_with_1_2_3_8_workers)
{
    DIR *d = opendir("tools/scenes");
    size_t n = 0, cap = 64;
    scene_name *names = cr_malloc(cap * sizeof *names);
    for (struct dirent *e; d && names && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 6 && len < sizeof names->name && strcmp(e->d_name + len - 6, ".scene") == 0) {
            if (n == cap) {
                cap *= 2;
                names = cr_realloc(names, cap * sizeof *names);
            }
            memset(&names[n], 0, sizeof names[n]);
            memcpy(names[n].name, e->d_name, len - 6);
            n++;
        }
    }
    if (d) {
        closedir(d);
    }
    qsort(names, n, sizeof *names, by_name);
    return cr_make_param_array(scene_name, names, n, free_names);
}

// Ticks to compare: the scene's own, capped at 300 (120 for the big piles).
static uint32_t ticks_of(const ls_scene *s)
{
    uint32_t cap = s->body_count >= 1000 ? 120 : 300;
    return s->ticks < cap ? s->ticks : cap;
}

static ls_world *instantiate(const ls_scene *s, uint32_t workers)
{
    ls_scene copy = *s;
    copy.world.worker_count = workers;
    ls_error err;
    ls_world *w = ls_scene_instantiate(&copy, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

ParameterizedTest(scene_name *p, threads, every_scene_steps_the_same_with_1_2_3_8_workers)
{
    char path[96];
    snprintf(path, sizeof path, "tools/scenes/%s.scene", p->name);
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_load(path, &s, &err), LS_OK, "%s:%u:%u %s", path, err.line, err.column,
                 err.message);
    static const uint32_t counts[] = {1, 2, 3, 8};
    ls_world *w[4];
    for (int k = 0; k < 4; k++) {
        w[k] = instantiate(&s, counts[k]);
    }
    uint32_t ticks = ticks_of(&s);
    for (uint32_t t = 0; t < ticks; t++) {
        for (int k = 0; k < 4; k++) {
            ls_world_step(w[k]);
        }
        uint64_t want = ls_world_checksum(w[0]);
        ls_step_info i0 = ls_world_info(w[0]);
        ls_contact_events e0 = ls_world_contact_events(w[0]);
        for (int k = 1; k < 4; k++) {
            uint64_t got = ls_world_checksum(w[k]);
            cr_assert_eq(got, want, "%s tick %u: %u workers %016llx, 1 worker %016llx", p->name,
                         t + 1, counts[k], (unsigned long long)got, (unsigned long long)want);
            ls_step_info ik = ls_world_info(w[k]);
            cr_assert_eq(ik.contacts, i0.contacts, "%s tick %u: contacts", p->name, t + 1);
            cr_assert_eq(ik.max_penetration, i0.max_penetration, "%s tick %u", p->name, t + 1);
            cr_assert_eq(ik.overflow_count, i0.overflow_count, "%s tick %u", p->name, t + 1);
            ls_contact_events ek = ls_world_contact_events(w[k]);
            cr_assert_eq(ek.begin_count, e0.begin_count, "%s tick %u: begin events", p->name,
                         t + 1);
            cr_assert_eq(ek.end_count, e0.end_count, "%s tick %u: end events", p->name, t + 1);
            cr_assert_eq(memcmp(ek.begin, e0.begin, ek.begin_count * sizeof *ek.begin), 0);
            cr_assert_eq(memcmp(ek.end, e0.end, ek.end_count * sizeof *ek.end), 0);
        }
    }
    for (int k = 0; k < 4; k++) {
        ls_world_destroy(w[k]);
    }
    ls_scene_free(&s);
}

// ---------------------------------------------------------------------------
// Restitution chains (the impact pass, SPEC.md §11.2), which no shipped scene
// but vehicle_pile has: a cradle of 6 balls on frictionless ground, a ball
// dropped on a column of 3 bouncy boxes, and two balls hitting a resting one
// from both sides in the same tick; 1 worker against 2, 3 and 8, and the
// scalar path.

static const char chain_scene[] =
    "world gravity 0 -9.81 0 ticks 240\n"
    "body static plane normal 0 1 0 d 0 friction 0 restitution 0.5\n"
    "body dynamic sphere radius 0.5 pos -2.2 0.5 0 vel 3 0 0 density 100 friction 0 "
    "restitution 1 no_sleep\n"
    "body dynamic sphere radius 0.5 pos -1 0.5 0 density 100 friction 0 restitution 1 no_sleep\n"
    "body dynamic sphere radius 0.5 pos 0 0.5 0 density 100 friction 0 restitution 1 no_sleep\n"
    "body dynamic sphere radius 0.5 pos 1 0.5 0 density 100 friction 0 restitution 1 no_sleep\n"
    "body dynamic sphere radius 0.5 pos 2 0.5 0 density 100 friction 0 restitution 1 no_sleep\n"
    "body dynamic sphere radius 0.5 pos 3 0.5 0 density 100 friction 0 restitution 1 no_sleep\n"
    "body dynamic box half 0.5 0.5 0.5 pos 0 0.5 8 restitution 0.8\n"
    "body dynamic box half 0.5 0.5 0.5 pos 0 1.5 8 restitution 0.8\n"
    "body dynamic box half 0.5 0.5 0.5 pos 0 2.5 8 restitution 0.8\n"
    "body dynamic sphere radius 0.4 pos 0.1 5 8 restitution 0.9\n"
    "body dynamic sphere radius 0.5 pos 0 0.5 -8 friction 0 restitution 1\n"
    "body dynamic sphere radius 0.5 pos -1.3 0.5 -8 vel 6 0 0 friction 0 restitution 1\n"
    "body dynamic sphere radius 0.5 pos 1.3 0.5 -8 vel -4 0 0 friction 0 restitution 1\n";

Test(threads, restitution_chains_step_the_same_with_1_2_3_8_workers_and_the_scalar_path)
{
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_parse(chain_scene, strlen(chain_scene), &s, &err), LS_OK, "%u:%u %s",
                 err.line, err.column, err.message);
    static const uint32_t counts[] = {1, 2, 3, 8, 1};
    ls_world *w[5];
    for (int k = 0; k < 5; k++) {
        ls_scene copy = s;
        copy.world.worker_count = counts[k];
        copy.world.simd = k == 4 ? LS_SIMD_SCALAR : LS_SIMD_AUTO;
        w[k] = ls_scene_instantiate(&copy, &err);
        cr_assert_not_null(w[k], "%s", err.message);
    }
    for (uint32_t t = 0; t < s.ticks; t++) {
        for (int k = 0; k < 5; k++) {
            ls_world_step(w[k]);
        }
        uint64_t want = ls_world_checksum(w[0]);
        for (int k = 1; k < 5; k++) {
            uint64_t got = ls_world_checksum(w[k]);
            cr_assert_eq(got, want, "tick %u: world %d (%u workers%s) %016llx, 1 worker %016llx",
                         t + 1, k, counts[k], k == 4 ? ", scalar" : "", (unsigned long long)got,
                         (unsigned long long)want);
        }
    }
    // The cradle worked (else the test would not cover the chains): the last
    // ball (body 6) left with most of the striker's 3 m/s.
    double last = ls_body_linear_velocity(w[0], ls_world_body_at(w[0], 6)).x / 65536.0;
    cr_log_info("restitution chains: the cradle's last ball at %.4f m/s", last);
    cr_assert_gt(last, 2.7, "the cradle's last ball at %.4f m/s", last);
    for (int k = 0; k < 5; k++) {
        ls_world_destroy(w[k]);
    }
    ls_scene_free(&s);
}

// ---------------------------------------------------------------------------
// Mesh pairs in the parallel narrow phase (SPEC.md §11.1, item 3): each
// worker's arena holds at most max_contacts / (2 workers), at least 256,
// contacts; a pair that does not fit is computed in the serial walk. 36
// boxes resting on a finely cut mesh (about 30 touching triangles each) fill
// the arenas of 3 and 8 workers several times over: the results stay those
// of 1 worker, and both kinds of pair occur.

// A 32 x 32 grid of 0.25 m cells (2,048 triangles) and 6 x 6 boxes above it.
static char *mesh_pile_scene(void)
{
    size_t cap = 200000;
    char *text = malloc(cap), *p = text;
    p += sprintf(p, "world gravity 0 -9.81 0 max_contacts 1536 ticks 90\n"
                    "body static mesh vertices 1089");
    for (int i = 0; i <= 32; i++) {
        for (int k = 0; k <= 32; k++) {
            p += sprintf(p, " %.2f %.3f %.2f", -4 + 0.25 * k, 0.01 * ((i * 7 + k * 3) % 5),
                         -4 + 0.25 * i);
        }
    }
    p += sprintf(p, " triangles 2048");
    for (int i = 0; i < 32; i++) {
        for (int k = 0; k < 32; k++) {
            int v = i * 33 + k;
            p += sprintf(p, " %d %d %d %d %d %d", v, v + 33, v + 1, v + 1, v + 33, v + 34);
        }
    }
    p += sprintf(p, " friction 0.6\n");
    for (int i = 0; i < 36; i++) {
        p += sprintf(p, "body dynamic box half 0.35 0.2 0.35 pos %.2f %.2f %.2f\n",
                     -3.0 + 1.2 * (i % 6), 0.3 + 0.05 * (i % 4), -3.0 + 1.2 * (i / 6));
    }
    cr_assert_lt((size_t)(p - text), cap);
    return text;
}

Test(threads, mesh_pairs_give_the_same_results_when_the_workers_arenas_overflow)
{
    char *text = mesh_pile_scene();
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_parse(text, strlen(text), &s, &err), LS_OK, "%u:%u %s", err.line,
                 err.column, err.message);
    static const uint32_t counts[] = {1, 2, 3, 8};
    ls_world *w[4];
    for (int k = 0; k < 4; k++) {
        w[k] = instantiate(&s, counts[k]);
    }
    uint32_t parallel = 0, walked = 0, most = 0;
    for (uint32_t t = 0; t < s.ticks; t++) {
        for (int k = 0; k < 4; k++) {
            ls_world_step(w[k]);
        }
        uint64_t want = ls_world_checksum(w[0]);
        ls_step_info i0 = ls_world_info(w[0]);
        most = i0.contacts > most ? i0.contacts : most;
        cr_assert(!i0.capacity_exceeded, "tick %u: %u contacts", t + 1, i0.contacts);
        for (int k = 1; k < 4; k++) {
            cr_assert_eq(ls_world_checksum(w[k]), want, "tick %u: %u workers", t + 1, counts[k]);
            cr_assert_eq(ls_world_info(w[k]).contacts, i0.contacts, "tick %u", t + 1);
        }
        const ls_world *w8 = w[3];
        for (uint32_t i = 0; i < w8->pair_count; i++) {
            const ls_pair_manifold *r = &w8->pair_manifolds[i];
            bool mesh = w8->shapes[w8->pairs[i].a].geom.kind == LS_SHAPE_MESH ||
                        w8->shapes[w8->pairs[i].b].geom.kind == LS_SHAPE_MESH;
            parallel += mesh && r->computed;
            walked += mesh && !r->computed;
        }
    }
    cr_log_info("mesh pile: up to %u contacts; mesh pairs with 8 workers: %u in parallel, %u in "
                "the walk",
                most, parallel, walked);
    cr_assert_gt(most, 600u, "the boxes touch many triangles");
    cr_assert_gt(parallel, 0u);
    cr_assert_gt(walked, 0u, "some arena overflowed");
    for (int k = 0; k < 4; k++) {
        ls_world_destroy(w[k]);
    }
    ls_scene_free(&s);
    free(text);
}

// ---------------------------------------------------------------------------
// Two worlds on two threads at once, each with 2 workers.

#define TWO_WORLDS_TICKS 90

typedef struct world_run {
    const ls_scene *scene;
    uint32_t workers;
    uint64_t sums[TWO_WORLDS_TICKS];
    bool ok;
} world_run;

static void *run_world(void *arg)
{
    world_run *r = arg;
    ls_scene copy = *r->scene;
    copy.world.worker_count = r->workers;
    ls_world *w = ls_scene_instantiate(&copy, NULL);
    r->ok = w != NULL;
    for (uint32_t t = 0; w && t < TWO_WORLDS_TICKS; t++) {
        ls_world_step(w);
        r->sums[t] = ls_world_checksum(w);
    }
    ls_world_destroy(w);
    return NULL;
}

Test(threads, two_worlds_on_two_threads_each_with_two_workers)
{
    ls_scene a, b;
    ls_error err;
    cr_assert_eq(ls_scene_load("tools/scenes/pyramid.scene", &a, &err), LS_OK, "%s", err.message);
    cr_assert_eq(ls_scene_load("tools/scenes/hull_pile.scene", &b, &err), LS_OK, "%s", err.message);
    static world_run ref[2], par[2];
    ref[0] = (world_run){.scene = &a, .workers = 1};
    ref[1] = (world_run){.scene = &b, .workers = 1};
    run_world(&ref[0]);
    run_world(&ref[1]);
    par[0] = (world_run){.scene = &a, .workers = 2};
    par[1] = (world_run){.scene = &b, .workers = 2};
    pthread_t t[2];
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(pthread_create(&t[k], NULL, run_world, &par[k]), 0);
    }
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        cr_assert(ref[k].ok && par[k].ok);
        for (uint32_t i = 0; i < TWO_WORLDS_TICKS; i++) {
            cr_assert_eq(par[k].sums[i], ref[k].sums[i], "world %d tick %u", k, i + 1);
        }
    }
    ls_scene_free(&a);
    ls_scene_free(&b);
}

// ---------------------------------------------------------------------------
// A game's task system: one thread of its own (worker 1) that takes the upper
// half of a task while the caller runs the lower half (worker 0); every third
// task instead runs inline, item by item backwards, and returns NULL.

typedef struct game_tasks {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    ls_task_fn *task; // the half given to the game thread (NULL: none)
    void *data;
    uint32_t start, end;
    bool busy, quit;
    uint32_t enqueued, finished, inline_only;
} game_tasks;

static void *game_thread(void *arg)
{
    game_tasks *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->task && !g->quit) {
            pthread_cond_wait(&g->cv, &g->mu);
        }
        if (g->quit) {
            break;
        }
        pthread_mutex_unlock(&g->mu);
        g->task(g->start, g->end, 1, g->data);
        pthread_mutex_lock(&g->mu);
        g->task = NULL;
        g->busy = false;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void *game_enqueue(ls_task_fn *task, uint32_t count, uint32_t min_range, void *data,
                          void *context)
{
    game_tasks *g = context;
    cr_assert(!g->busy, "one task at a time");
    cr_assert_geq(min_range, 1u);
    g->enqueued++;
    if (g->enqueued % 3 == 0 || count < 2) {
        for (uint32_t i = count; i-- > 0;) {
            task(i, i + 1, 0, data);
        }
        g->inline_only++;
        return NULL;
    }
    uint32_t half = count / 2;
    pthread_mutex_lock(&g->mu);
    g->data = data;
    g->start = half;
    g->end = count;
    g->busy = true;
    g->task = task;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    task(0, half, 0, data);
    return g;
}

static void game_finish(void *task, void *context)
{
    game_tasks *g = context;
    cr_assert_eq(task, g);
    pthread_mutex_lock(&g->mu);
    while (g->busy) {
        pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    g->finished++;
}

Test(threads, a_games_task_system_gives_the_same_results)
{
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_load("tools/scenes/pyramid.scene", &s, &err), LS_OK, "%s", err.message);
    ls_world *ref = instantiate(&s, 1);
    static game_tasks g;
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    cr_assert_eq(pthread_create(&g.thread, NULL, game_thread, &g), 0);
    ls_scene copy = s;
    copy.world.worker_count = 2;
    copy.world.enqueue_task = game_enqueue;
    copy.world.finish_task = game_finish;
    copy.world.task_context = &g;
    ls_world *w = ls_scene_instantiate(&copy, &err);
    cr_assert_not_null(w, "%s", err.message);
    for (uint32_t t = 0; t < 60; t++) {
        ls_world_step(ref);
        ls_world_step(w);
        cr_assert_eq(ls_world_checksum(w), ls_world_checksum(ref), "tick %u", t + 1);
    }
    cr_assert_gt(g.enqueued, 0u, "the game's task system was used");
    cr_assert_gt(g.inline_only, 0u);
    cr_assert_eq(g.finished + g.inline_only, g.enqueued);
    pthread_mutex_lock(&g.mu);
    g.quit = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    pthread_join(g.thread, NULL);
    ls_world_destroy(w);
    ls_world_destroy(ref);
    ls_scene_free(&s);
}

Test(threads, the_world_definition_checks_worker_count_and_task_callbacks)
{
    ls_world_def d = ls_default_world_def();
    cr_assert_eq(d.worker_count, 1u);
    ls_error err;
    d.worker_count = 0;
    cr_assert_null(ls_world_create(&d, &err));
    cr_assert_str_eq(err.field, "worker_count");
    d.worker_count = 65;
    cr_assert_null(ls_world_create(&d, &err));
    cr_assert_str_eq(err.field, "worker_count");
    d.worker_count = 64;
    d.max_bodies = 16;
    d.max_contacts = 64;
    ls_world *w = ls_world_create(&d, &err);
    cr_assert_not_null(w, "%s", err.message);
    ls_world_destroy(w);
    d.enqueue_task = game_enqueue;
    cr_assert_null(ls_world_create(&d, &err));
    cr_assert_str_eq(err.field, "enqueue_task");
    ls_world_def one = ls_default_world_def();
    ls_world_def many = one;
    many.worker_count = 8;
    cr_assert_gt(ls_world_memory_size(&many), ls_world_memory_size(&one));
}

// ---------------------------------------------------------------------------
// The worker pool.

typedef struct cover {
    uint32_t *hits;
    uint32_t size; // expected block size
    uint32_t n, workers;
    _Bool bad;
} cover;

static void count_items(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    cover *c = ctx;
    // Every block but the last has exactly `size` items and starts on a multiple of it.
    if (worker >= c->workers || begin % c->size != 0 || (end != c->n && end - begin != c->size)) {
        __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
    }
    for (uint32_t i = begin; i < end; i++) {
        __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
    }
}

Test(threads, a_pool_runs_every_item_once_in_blocks_cut_by_n_min_block_and_count)
{
    static const uint32_t counts[] = {1, 2, 3, 8};
    static const uint32_t sizes[] = {0, 1, 7, 31, 32, 33, 100, 1000, 4099};
    uint32_t *hits = calloc(4099, sizeof *hits);
    for (int k = 0; k < 4; k++) {
        ls_workers *p = ls_workers_create_(counts[k]);
        cr_assert_not_null(p);
        cr_assert_eq(ls_workers_count_(p), counts[k]);
        for (int s = 0; s < 9; s++) {
            for (uint32_t min_block = 1; min_block <= 64; min_block *= 8) {
                uint32_t n = sizes[s];
                memset(hits, 0, 4099 * sizeof *hits);
                uint32_t size = ls_workers_block_size_(p, n, min_block);
                uint32_t want = n;
                if (counts[k] > 1) {
                    uint32_t target = counts[k] * LS_WORKERS_BLOCKS_PER_WORKER;
                    want = (n + target - 1) / target;
                    want = want < min_block ? min_block : want;
                }
                cr_assert_eq(size, want, "n %u min %u workers %u", n, min_block, counts[k]);
                cover c = {hits, size ? size : 1, n, counts[k], 0};
                for (int rep = 0; rep < 20; rep++) {
                    ls_workers_for_(p, n, min_block, count_items, &c);
                }
                cr_assert(!c.bad, "n %u min %u workers %u", n, min_block, counts[k]);
                for (uint32_t i = 0; i < n; i++) {
                    cr_assert_eq(hits[i], 20u, "item %u of %u", i, n);
                }
            }
        }
        ls_workers_destroy_(p);
    }
    // NULL is a serial pool.
    cr_assert_eq(ls_workers_count_(NULL), 1u);
    memset(hits, 0, 4099 * sizeof *hits);
    cover c = {hits, 10, 10, 1, 0};
    ls_workers_for_(NULL, 10, 1, count_items, &c);
    cr_assert(!c.bad);
    cr_assert_eq(hits[9], 1u);
    free(hits);
}

// Many tiny loops back to back (the solver's pattern) on more workers than cores.
static void add_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    uint64_t *sum = ctx;
    (void)worker;
    uint64_t s = 0;
    for (uint32_t i = begin; i < end; i++) {
        s += i;
    }
    __atomic_fetch_add(sum, s, __ATOMIC_RELAXED);
}

Test(threads, a_pool_of_eight_runs_thousands_of_small_loops)
{
    ls_workers *p = ls_workers_create_(8);
    for (uint32_t k = 0; k < 5000; k++) {
        uint64_t sum = 0;
        uint32_t n = 64 + k % 200;
        ls_workers_for_(p, n, 8, add_block, &sum);
        cr_assert_eq(sum, (uint64_t)n * (n - 1) / 2);
    }
    ls_workers_destroy_(p);
}

// ---------------------------------------------------------------------------
// Graph colouring.

static void check_colouring(const ls_graph *g, const ls_graph_edge *e, uint32_t n)
{
    cr_assert_leq(g->colour_count, (uint32_t)LS_GRAPH_MAX_COLOURS);
    cr_assert_eq(g->start[0], 0u);
    cr_assert_eq(g->start[g->colour_count + 1], n);
    uint8_t *seen = calloc(n ? n : 1, 1);
    for (uint32_t c = 0; c <= g->colour_count; c++) {
        cr_assert_leq(g->start[c], g->start[c + 1]);
        for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++) {
            uint32_t i = g->order[k];
            cr_assert_lt(i, n);
            cr_assert(!seen[i], "constraint %u twice", i);
            seen[i] = 1;
            if (k > g->start[c]) {
                cr_assert_lt(g->order[k - 1], i, "ascending within a group");
            }
            if (c == g->colour_count) {
                continue; // the overflow group may share bodies
            }
            cr_assert_lt(g->start[c], g->start[c + 1], "no empty colour");
            for (uint32_t m = g->start[c]; m < k; m++) {
                const ls_graph_edge *x = &e[g->order[m]], *y = &e[i];
                uint32_t xs[2] = {x->a, x->b}, ys[2] = {y->a, y->b};
                for (int u = 0; u < 2; u++) {
                    for (int v = 0; v < 2; v++) {
                        cr_assert(xs[u] == UINT32_MAX || xs[u] != ys[v],
                                  "colour %u: constraints %u and %u share body %u", c, g->order[m],
                                  i, xs[u]);
                    }
                }
            }
        }
    }
    free(seen);
}

Test(threads, colours_share_no_moving_body_and_depend_only_on_the_constraints)
{
    enum { N = 3000, BODIES = 500 };
    ls_graph g;
    cr_assert(ls_graph_init_(&g, N, BODIES));
    ls_graph_edge *e = malloc(N * sizeof *e);
    uint64_t x = 12345;
    for (uint32_t i = 0; i < N; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        uint32_t a = (uint32_t)(x >> 33) % BODIES, b = (uint32_t)(x >> 13) % BODIES;
        e[i].a = (x & 7) == 0 ? UINT32_MAX : a;
        e[i].b = (x & 24) == 0 ? UINT32_MAX : b;
    }
    ls_graph_colour_(&g, e, N);
    check_colouring(&g, e, N);
    // The same constraints again give the same colouring (the bit sets are left clean).
    uint32_t *first = malloc(N * sizeof *first);
    memcpy(first, g.order, N * sizeof *first);
    uint32_t colours = g.colour_count;
    ls_graph_colour_(&g, e, N / 2);
    check_colouring(&g, e, N / 2);
    ls_graph_colour_(&g, e, N);
    cr_assert_eq(g.colour_count, colours);
    cr_assert_eq(memcmp(first, g.order, N * sizeof *first), 0);
    free(first);
    free(e);
    ls_graph_free_(&g);
}

Test(threads, a_crowded_body_overflows_and_static_contacts_fill_from_the_top)
{
    enum { N = 60 };
    ls_graph g;
    cr_assert(ls_graph_init_(&g, N, 100));
    ls_graph_edge e[N];
    // Body 0 touches bodies 1..40, then 20 constraints against the ground.
    for (uint32_t i = 0; i < 40; i++) {
        e[i] = (ls_graph_edge){0, i + 1};
    }
    for (uint32_t i = 40; i < N; i++) {
        e[i] = (ls_graph_edge){UINT32_MAX, i - 39};
    }
    ls_graph_colour_(&g, e, N);
    check_colouring(&g, e, N);
    // Body-body: one colour each for the first LS_GRAPH_MAX_COLOURS - 4, the rest overflow.
    uint32_t dynamic = LS_GRAPH_MAX_COLOURS - 4;
    uint32_t overflow = g.start[g.colour_count + 1] - g.start[g.colour_count];
    cr_assert_eq(overflow, 40 - dynamic);
    for (uint32_t k = g.start[g.colour_count]; k < N; k++) {
        cr_assert_geq(g.order[k], dynamic);
        cr_assert_lt(g.order[k], 40u);
    }
    // The ground contacts of bodies 1..20 all share the last colour.
    uint32_t last = g.colour_count - 1;
    cr_assert_eq(g.start[last + 1] - g.start[last], 20u);
    for (uint32_t k = g.start[last]; k < g.start[last + 1]; k++) {
        cr_assert_geq(g.order[k], 40u);
    }
    // Nothing at all.
    ls_graph_colour_(&g, e, 0);
    cr_assert_eq(g.colour_count, 0u);
    cr_assert_eq(g.start[1], 0u);
    ls_graph_free_(&g);
}
