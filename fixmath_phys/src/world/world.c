// SPDX-License-Identifier: MIT
// World lifetime, definitions and the step pipeline (SPEC.md §11).
#include "../../../core/src/error_field.h"
#include "../collision/collide.h"
#include "../dynamics/joint.h"
#include "../dynamics/workers.h"
#include "../particles/particles_internal.h"
#include "../vehicle/vehicle_internal.h"
#include "query_tree.h"
#include "world_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ls_fx ls_tick_dt(uint32_t tick_rate)
{
    switch (tick_rate) {
    case 30:
        return 2185;
    case 60:
        return 1092;
    case 120:
        return 546;
    default:
        return 0;
    }
}

bool ls_def_missing_(uint32_t cookie, const char *name, ls_error *err)
{
    if (cookie == LS_DEF_COOKIE) {
        return false;
    }
    ls_error_set(err, LS_ERR_INVALID_ARGUMENT,
                 "the %s was not made by ls_default_%s() (its cookie is missing): start every "
                 "definition from its default, then set the fields you choose",
                 name, name);
    if (err) {
        snprintf(err->field, sizeof err->field, "cookie");
    }
    return true;
}

ls_world_def ls_default_world_def(void)
{
    ls_world_def d;
    memset(&d, 0, sizeof d);
    d.gravity = ls_vec3_make(0, -642908, 0); // -9.81
    d.tick_rate = 60;
    d.substeps = 8;
    d.velocity_iterations = 1;
    d.position_iterations = 1;
    d.max_bodies = 4096;
    d.max_contacts = 16384;
    d.sleep_linear = 3277;           // 0.05 m/s
    d.sleep_angular = 5243;          // 0.08 rad/s
    d.sleep_time = LS_FX_INT(1) / 2; // 0.5 s
    d.contact_margin = 1311;         // 0.02 m
    d.linear_slop = 328;             // 0.005 m
    d.contact_hertz = LS_FX_INT(100);
    d.contact_damping_ratio = LS_FX_INT(10);
    d.joint_hertz = LS_FX_INT(120); // a joint stretches F / (m w^2): SPEC.md §11
    d.joint_damping_ratio = LS_FX_INT(2);
    d.max_push_velocity = LS_FX_INT(3);
    d.restitution_threshold = LS_FX_INT(1); // 1 m/s
    d.rolling_resistance = 131;             // 0.002 m
    d.seed = 0;
    d.worker_count = 1;
    d.max_joints = 1024;
    d.max_particle_systems = 16;
    d.max_particles = 4096;
    d.max_particle_constraints = 16384;
    d.max_vehicles = 16;
    d.cookie = LS_DEF_COOKIE;
    return d;
}

// Fills err (may be NULL) with the field concerned; returns false for `return fail(...)`.
static bool refuse(ls_error *err, ls_result code, const char *field, const char *text)
{
    ls_error_set_field_(err, code, field, "%s", text);
    return false;
}

static bool world_def_valid(const ls_world_def *d, ls_error *err)
{
    if (ls_tick_dt(d->tick_rate) == 0) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "tick_rate", "tick_rate must be 30, 60 or 120");
    }
    if (d->substeps < 1 || d->substeps > 16) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "substeps", "substeps must be 1..16");
    }
    if (d->contact_hertz < 0 || d->contact_hertz > LS_FX_INT(1000) || d->joint_hertz < 0 ||
        d->joint_hertz > LS_FX_INT(1000) || d->contact_damping_ratio < 0 ||
        d->contact_damping_ratio > LS_FX_INT(100) || d->joint_damping_ratio < 0 ||
        d->joint_damping_ratio > LS_FX_INT(100)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "contact_hertz",
                      "contact/joint hertz must be 0..1000 and damping ratios 0..100");
    }
    if (d->max_push_velocity < 0 || d->max_push_velocity > LS_FX_INT(100)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_push_velocity",
                      "max_push_velocity must be 0..100 m/s");
    }
    if (d->velocity_iterations < 1 || d->velocity_iterations > 64 || d->position_iterations > 64) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "velocity_iterations",
                      "velocity_iterations must be 1..64 and position_iterations 0..64");
    }
    if (d->max_bodies < 1 || d->max_bodies > (1u << 20) || d->max_contacts < 1 ||
        d->max_contacts > (1u << 22)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_bodies",
                      "max_bodies must be 1..2^20 and max_contacts 1..2^22");
    }
    if (d->max_joints > (1u << 20)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_joints", "max_joints must be 0..2^20");
    }
    if (d->max_particle_systems > 4096) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_particle_systems",
                      "max_particle_systems must be 0..4096");
    }
    if (d->max_particles > (1u << 22)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_particles", "max_particles must be 0..2^22");
    }
    if (d->max_particle_constraints > (1u << 24)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_particle_constraints",
                      "max_particle_constraints must be 0..2^24");
    }
    if (d->max_vehicles > 1024) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_vehicles", "max_vehicles must be 0..1024");
    }
    if (d->max_shapes > (1u << 22)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "max_shapes", "max_shapes must be 0..2^22");
    }
    if (d->rolling_resistance < 0 || d->rolling_resistance > LS_FX_INT(1)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "rolling_resistance",
                      "rolling_resistance must be 0..1 m");
    }
    if (ls_fx_abs(d->gravity.x) > LS_FX_INT(1000) || ls_fx_abs(d->gravity.y) > LS_FX_INT(1000) ||
        ls_fx_abs(d->gravity.z) > LS_FX_INT(1000)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "gravity",
                      "gravity components must be within +-1000");
    }
    if (!ls_simd_available(d->simd)) {
        return refuse(err, LS_ERR_INVALID_ARGUMENT, "simd",
                      "simd: that vector path is not available in this build or on this CPU");
    }
    if (d->worker_count < 1 || d->worker_count > LS_WORKERS_MAX) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, "worker_count", "worker_count must be 1..64");
    }
    if (!d->enqueue_task != !d->finish_task) {
        return refuse(err, LS_ERR_INVALID_ARGUMENT, "enqueue_task",
                      "enqueue_task and finish_task must be given together");
    }
    return true;
}

// The step's worker pool: none for one worker; a game's task system when it
// gives one, else the library's threads (workers.c).
// The broad phase's sweep segments (collision/broadphase.c): one per worker,
// at most LS_BROADPHASE_MAX_SEGMENTS (each keeps its own open lists).
static uint32_t broadphase_segments(const ls_world_def *def)
{
    return def->worker_count < LS_BROADPHASE_MAX_SEGMENTS ? def->worker_count
                                                          : LS_BROADPHASE_MAX_SEGMENTS;
}

static ls_workers *create_workers(const ls_world_def *def)
{
    if (def->worker_count <= 1) {
        return NULL;
    }
    if (def->enqueue_task) {
        return ls_workers_create_tasks_(def->worker_count, def->enqueue_task, def->finish_task,
                                        def->task_context);
    }
    return ls_workers_create_(def->worker_count);
}

// Joint slots (joint.c): at least one, so every allocation is non-empty.
static uint32_t max_joint_slots(const ls_world_def *def)
{
    return def->max_joints ? def->max_joints : 1;
}

// Constraints the solver may colour in one tick: every contact and joint.
static uint32_t max_constraints(const ls_world_def *def)
{
    return def->max_contacts + max_joint_slots(def);
}

// Vehicle slots: at least one, so every allocation is non-empty.
static uint32_t max_vehicle_slots(const ls_world_def *def)
{
    return def->max_vehicles ? def->max_vehicles : 1;
}

// max_shapes 0 means one shape per body.
static uint32_t shape_capacity(const ls_world_def *def)
{
    return def->max_shapes ? def->max_shapes : def->max_bodies;
}

size_t ls_world_memory_size(const ls_world_def *def)
{
    // Keep in step with the allocations of ls_world_create below. Hull and
    // mesh data are allocated when a body first uses them (never in a step).
    const ls_world *w = NULL; // sizeof only
    size_t nb = def->max_bodies, nc = def->max_contacts, ns = shape_capacity(def);
    return sizeof *w +
           nb * (sizeof *w->bodies + sizeof *w->next_free + sizeof *w->island_awake +
                 sizeof *w->island_min_timer + sizeof *w->island_parent +
                 sizeof *w->island_dynamic) +
           ns * (sizeof *w->shapes + sizeof *w->shape_next_free) +
           LS_MESH_PAIR_MAX * sizeof *w->children + ls_solver_scratch_size_(def) +
           nc * (sizeof *w->pairs + 2 * sizeof *w->contacts + sizeof *w->begin_events +
                 sizeof *w->end_events) +
           max_constraints(def) * sizeof *w->edges +
           max_joint_slots(def) * sizeof *w->active_joints +
           ls_graph_memory_size_(max_constraints(def), def->max_bodies) +
           ls_workers_memory_size_(def->worker_count, def->enqueue_task != NULL) +
           nc * (sizeof *w->pair_manifolds + 2 * sizeof *w->ccd_toi + sizeof *w->ccd_pairs) +
           (size_t)def->max_contacts * sizeof *w->contact_from + ls_mesh_arenas_memory_size_(def) +
           nb * sizeof *w->body_reach +
           ls_broadphase_memory_size_segmented_(shape_capacity(def), def->max_contacts,
                                                broadphase_segments(def)) +
           ls_query_tree_memory_size_(shape_capacity(def), def->max_bodies) +
           max_joint_slots(def) *
               (sizeof *w->joints + sizeof *w->joint_next_free + sizeof *w->joint_events) +
           nb * (sizeof *w->body_joint_head + sizeof *w->body_joint_filter) +
           ls_particles_memory_size_(def) +
           max_vehicle_slots(def) * (sizeof(ls_vehicle) + sizeof *w->vehicle_next_free);
}

ls_world *ls_world_create(const ls_world_def *def, ls_error *err)
{
    if (!def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world definition");
        return NULL;
    }
    if (ls_def_missing_(def->cookie, "world_def", err)) {
        return NULL;
    }
    if (!world_def_valid(def, err)) {
        return NULL;
    }
    ls_world *w = calloc(1, sizeof *w);
    if (!w) {
        ls_error_set(err, LS_ERR_NO_MEMORY,
                     "out of memory for a world of %u bodies and %u contacts", def->max_bodies,
                     def->max_contacts);
        return NULL;
    }
    w->def = *def;
    w->def.max_shapes = shape_capacity(def);
    w->dt = ls_tick_dt(def->tick_rate);
    w->rng = ls_rng_make(def->seed, 0x6c6f636b73746570u); // stream "lockstep"
    w->max_pairs = def->max_contacts;
    w->bodies = calloc(def->max_bodies, sizeof *w->bodies);
    w->next_free = calloc(def->max_bodies, sizeof *w->next_free);
    w->shapes = calloc(w->def.max_shapes, sizeof *w->shapes);
    w->shape_next_free = calloc(w->def.max_shapes, sizeof *w->shape_next_free);
    w->children = calloc(LS_MESH_PAIR_MAX, sizeof *w->children);
    w->bp =
        ls_broadphase_create_segmented_(w->def.max_shapes, w->max_pairs, broadphase_segments(def));
    w->qt = ls_query_tree_create_(w->def.max_shapes, def->max_bodies);
    w->pairs = calloc(w->max_pairs, sizeof *w->pairs);
    w->contacts = calloc(def->max_contacts, sizeof *w->contacts);
    w->contacts_old = calloc(def->max_contacts, sizeof *w->contacts_old);
    bool solver_ok = ls_solver_scratch_init_(&w->solver, def);
    w->edges = calloc(max_constraints(def), sizeof *w->edges);
    w->active_joints = calloc(max_joint_slots(def), sizeof *w->active_joints);
    w->workers = create_workers(def);
    w->pair_manifolds = calloc(w->max_pairs, sizeof *w->pair_manifolds);
    w->ccd_toi = calloc(2 * (size_t)w->max_pairs, sizeof *w->ccd_toi);
    w->ccd_pairs = calloc(w->max_pairs, sizeof *w->ccd_pairs);
    bool arenas_ok = ls_mesh_arenas_init_(w, ls_workers_count_(w->workers));
    w->contact_from = calloc(def->max_contacts, sizeof *w->contact_from);
    w->body_reach = calloc(def->max_bodies, sizeof *w->body_reach);
    bool graph_ok = ls_graph_init_(&w->graph, max_constraints(def), def->max_bodies);
    w->begin_events = calloc(def->max_contacts, sizeof *w->begin_events);
    w->end_events = calloc(def->max_contacts, sizeof *w->end_events);
    w->island_awake = calloc(def->max_bodies, sizeof *w->island_awake);
    w->island_parent = calloc(def->max_bodies, sizeof *w->island_parent);
    w->island_dynamic = calloc(def->max_bodies, sizeof *w->island_dynamic);
    w->island_min_timer = calloc(def->max_bodies, sizeof *w->island_min_timer);
    w->joints = calloc(max_joint_slots(def), sizeof *w->joints);
    w->joint_next_free = calloc(max_joint_slots(def), sizeof *w->joint_next_free);
    w->joint_events = calloc(max_joint_slots(def), sizeof *w->joint_events);
    w->body_joint_head = malloc(def->max_bodies * sizeof *w->body_joint_head);
    w->body_joint_filter = calloc(def->max_bodies, sizeof *w->body_joint_filter);
    if (!w->joints || !w->joint_next_free || !w->joint_events || !w->body_joint_head ||
        !w->body_joint_filter) {
        ls_world_destroy(w);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory for %u joints", def->max_joints);
        return NULL;
    }
    memset(w->body_joint_head, 0xFF, def->max_bodies * sizeof *w->body_joint_head);
    bool particles_ok;
    w->particles = ls_particles_create_(def, &particles_ok);
    if (!particles_ok) {
        ls_world_destroy(w);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory for %u particles", def->max_particles);
        return NULL;
    }
    w->joint_free_head = UINT32_MAX;
    w->vehicles = calloc(max_vehicle_slots(def), sizeof *w->vehicles);
    w->vehicle_next_free = calloc(max_vehicle_slots(def), sizeof *w->vehicle_next_free);
    w->vehicle_free_head = UINT32_MAX;
    if (!w->vehicles || !w->vehicle_next_free) {
        ls_world_destroy(w);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory for %u vehicles", def->max_vehicles);
        return NULL;
    }
    if (!w->shapes || !w->shape_next_free || !w->children || !w->island_awake ||
        !w->island_min_timer || !w->island_parent || !w->island_dynamic || !w->bodies ||
        !w->next_free || !w->bp || !w->qt || !w->pairs || !w->contacts || !w->contacts_old ||
        !solver_ok || !w->begin_events || !w->end_events || !w->edges || !w->active_joints ||
        !graph_ok || !w->pair_manifolds || !w->ccd_toi || !w->ccd_pairs || !w->contact_from ||
        !w->body_reach || !arenas_ok || (def->worker_count > 1 && !w->workers)) {
        ls_world_destroy(w);
        ls_error_set(err, LS_ERR_NO_MEMORY,
                     "out of memory for a world of %u bodies and %u contacts", def->max_bodies,
                     def->max_contacts);
        return NULL;
    }
    w->free_head = UINT32_MAX;
    w->shape_free_head = UINT32_MAX;
    ls_error_clear(err);
    return w;
}

void ls_world_destroy(ls_world *w)
{
    LS_ASSERT(!w || !w->locked); // not from inside its own step
    if (w && w->locked) {
        return;
    }
    if (!w) {
        return;
    }
    free(w->bodies);
    free(w->next_free);
    free(w->shapes);
    free(w->shape_next_free);
    free(w->children);
    ls_world_geometry_clear_(w);
    ls_broadphase_destroy_(w->bp);
    ls_query_tree_destroy_(w->qt);
    free(w->pairs);
    free(w->contacts);
    free(w->contacts_old);
    ls_solver_scratch_free_(&w->solver);
    free(w->edges);
    free(w->active_joints);
    ls_graph_free_(&w->graph);
    ls_workers_destroy_(w->workers);
    free(w->pair_manifolds);
    free(w->ccd_toi);
    free(w->ccd_pairs);
    ls_mesh_arenas_free_(w);
    free(w->contact_from);
    free(w->body_reach);
    free(w->begin_events);
    free(w->end_events);
    free(w->island_awake);
    free(w->island_parent);
    free(w->island_dynamic);
    free(w->island_min_timer);
    free(w->joints);
    free(w->joint_next_free);
    free(w->joint_events);
    free(w->body_joint_head);
    free(w->body_joint_filter);
    ls_particles_destroy_(w->particles);
    free(w->vehicles);
    free(w->vehicle_next_free);
    free(w);
}

uint32_t ls_world_tick(const ls_world *w)
{
    return w->tick;
}

ls_rng *ls_world_rng(ls_world *w)
{
    return &w->rng;
}

ls_result ls_world_set_game_word(ls_world *w, uint32_t index, int32_t value)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    if (index >= LS_WORLD_GAME_WORDS) {
        return LS_ERR_OUT_OF_RANGE;
    }
    w->game_words[index] = value;
    w->game_words_used = true; // from now on the words are saved and hashed
    return LS_OK;
}

int32_t ls_world_game_word(const ls_world *w, uint32_t index)
{
    return index < LS_WORLD_GAME_WORDS ? w->game_words[index] : 0;
}

ls_step_info ls_world_info(const ls_world *w)
{
    return w->info;
}

ls_profile ls_world_profile(const ls_world *w)
{
    return w->profile;
}

ls_contact_events ls_world_contact_events(const ls_world *w)
{
    ls_contact_events e = {w->begin_events, w->begin_count, w->end_events, w->end_count};
    return e;
}

void ls_world_report_overflow_(ls_world *w, uint32_t i)
{
    if (w->info.overflow_count == 0) {
        w->info.overflow_body = ls_world_id_of_(w, i);
        w->info.overflow_tick = w->tick + 1;
    }
    w->info.overflow_count++;
}

static bool in_position_range(ls_vec3 p)
{
    return ls_fx_abs(p.x) <= LS_FX_INT(2048) && ls_fx_abs(p.y) <= LS_FX_INT(2048) &&
           ls_fx_abs(p.z) <= LS_FX_INT(2048);
}

/// Bodies per block of the parallel pose update (a body costs ~1 us).
#define FINISH_MIN_BLOCK 64

static bool finishes(const ls_body *b)
{
    return b->alive && b->type != LS_BODY_STATIC && !b->asleep;
}

// Transforms, world inertia and shapes of bodies [begin, end): each writes
// only its body and that body's shapes, so any split gives the same bits.
static void finish_poses(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    ls_world *w = ctx;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        if (finishes(&w->bodies[i])) {
            ls_body_update_pose_(w, &w->bodies[i]);
        }
    }
}

// After the solver's sub-steps: clear the force accumulators, check the
// position range (in slot order: the first overflow is reported), then bring
// transforms, world inertia and shapes up to date, in parallel.
static void finish_bodies(ls_world *w)
{
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (!finishes(b)) {
            continue;
        }
        b->force = ls_vec3_zero();
        b->torque = ls_vec3_zero();
        if (!in_position_range(b->p)) {
            ls_world_report_overflow_(w, i);
            b->p = ls_vec3_make(ls_fx_clamp(b->p.x, -LS_FX_INT(2048), LS_FX_INT(2048)),
                                ls_fx_clamp(b->p.y, -LS_FX_INT(2048), LS_FX_INT(2048)),
                                ls_fx_clamp(b->p.z, -LS_FX_INT(2048), LS_FX_INT(2048)));
            b->linear_velocity = ls_vec3_zero();
        }
    }
    ls_workers_for_(w->workers, w->body_high, FINISH_MIN_BLOCK, finish_poses, w);
    ls_query_tree_invalidate_(w->qt); // queries see the new poses
}

// A fast body (ccd.c) moves farther than half its thinnest width in a step.
static bool is_fast(const ls_world *w, const ls_body *b)
{
    if (b->type != LS_BODY_DYNAMIC || b->asleep) {
        return false;
    }
    uint64_t reach = (uint64_t)ls_fx_mul(b->thickness, LS_FX_ONE / 2);
    uint64_t step2 = ls_vec3_len_sq_q32(ls_vec3_scale(b->linear_velocity, w->dt));
    return step2 > reach * reach;
}

// Only bodies whose transform changed (moved, created, teleported, restored)
// get new boxes, one per shape: sleeping and static bodies cost nothing here.
// A fast body's box also covers where its velocity takes it this step, so the
// pairs include what continuous collision must sweep against (ccd.c).
// Bodies [begin, end) on worker `worker`: each writes only its own body and
// its shapes' proxies (ls_broadphase_set_proxy_), and notes in high[worker]
// one past the highest proxy whose sweep input changed; the broad phase's
// shared fields are marked once after the loop (update_broadphase).
typedef struct proxy_stage {
    ls_world *w;
    uint32_t high[LS_WORKERS_MAX];
} proxy_stage;

static void update_proxies(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    proxy_stage *st = ctx;
    ls_world *w = st->w;
    uint32_t high = st->high[worker];
    for (uint32_t i = begin; i < end; i++) {
        ls_body *b = &w->bodies[i];
        if (!b->alive) {
            continue;
        }
        bool fast = is_fast(w, b);
        if (!b->proxy_dirty && !fast && !b->fast) {
            continue;
        }
        b->fast = fast;
        b->proxy_dirty = false;
        ls_vec3 step = ls_vec3_scale(b->linear_velocity, w->dt);
        for (uint32_t k = b->shape_head; k != UINT32_MAX; k = w->shapes[k].next) {
            const ls_shape *s = &w->shapes[k];
            ls_aabb box = ls_geom_aabb_(&s->geom, &s->xf, w->def.contact_margin);
            if (fast) {
                box.min = ls_vec3_min(box.min, ls_vec3_add(box.min, step));
                box.max = ls_vec3_max(box.max, ls_vec3_add(box.max, step));
            }
            if (ls_broadphase_set_proxy_(w->bp, k, box, s->category, s->mask,
                                         b->type == LS_BODY_STATIC, i)) {
                high = k + 1 > high ? k + 1 : high;
            }
        }
    }
    st->high[worker] = high;
}

/// Bodies per block of the parallel box update.
#define PROXY_MIN_BLOCK 256

static void update_broadphase(ls_world *w)
{
    proxy_stage st;
    st.w = w;
    uint32_t workers = ls_workers_count_(w->workers);
    for (uint32_t k = 0; k < workers; k++) {
        st.high[k] = 0;
    }
    ls_workers_for_(w->workers, w->body_high, PROXY_MIN_BLOCK, update_proxies, &st);
    uint32_t high = 0;
    for (uint32_t k = 0; k < workers; k++) {
        high = st.high[k] > high ? st.high[k] : high;
    }
    if (high > 0) {
        ls_broadphase_mark_(w->bp, high);
    }
}

static void count_bodies(ls_world *w)
{
    w->info.awake_bodies = 0;
    w->info.asleep_bodies = 0;
    for (uint32_t i = 0; i < w->body_high; i++) {
        const ls_body *b = &w->bodies[i];
        if (b->alive && b->type == LS_BODY_DYNAMIC) {
            w->info.awake_bodies += !b->asleep;
            w->info.asleep_bodies += b->asleep;
        }
    }
}

void ls_world_step(ls_world *w)
{
    LS_ASSERT(!w || !w->locked); // not from inside its own step
    if (w && w->locked) {
        return;
    }
    w->locked = true; // until the step returns: ls_world_locked_ (world_internal.h)
    ls_profile *pr = &w->profile;
    memset(pr, 0, sizeof *pr);
    uint64_t start = w->def.profile_clock ? w->def.profile_clock(w->def.profile_context) : 0;
    w->profile_mark = start;
    ls_workers_hot_(w->workers, true); // woken now, ready when the first loop comes
    w->info.capacity_exceeded = false;
    update_broadphase(w);
    ls_world_lap_(w, &pr->proxies);
    ls_world_step_vehicles_(w); // SPEC.md §26.3: needs the query tree, before the solve
    ls_world_lap_(w, &pr->vehicles);
    ls_world_update_contacts_(w); // laps pairs, narrow and contacts
    ls_world_wake_islands_(w);
    ls_world_lap_(w, &pr->wake);
    ls_world_solve_(w); // laps prepare, substeps and restitution
    finish_bodies(w);
    ls_world_lap_(w, &pr->finish);
    ls_world_continuous_(w);
    ls_world_lap_(w, &pr->continuous);
    ls_particles_step_(w); // SPEC.md §25.5: after CCD, before sleeping
    ls_world_lap_(w, &pr->particles);
    ls_world_sleep_islands_(w);
    w->tick++;
    w->info.tick = w->tick;
    count_bodies(w);
    ls_query_tree_invalidate_(w->qt);
    ls_workers_hot_(w->workers, false);
    ls_world_lap_(w, &pr->sleep);
    pr->step = w->profile_mark - start; // 0 without a clock
    w->locked = false;
}
