// SPDX-License-Identifier: MIT
// The particle stage of a tick (SPEC.md §11 stage 6c, §25.5).
//
// Where: after the rigid bodies' solve, finish and continuous collision, and
// before sleeping. Particles then see this tick's final rigid poses (pins on
// bodies, collisions); the coupling impulses they give dynamic bodies change
// those bodies' velocities, which the next tick integrates; and a body pushed
// by particles is woken before the sleep stage could freeze it.
//
// Order: 1. every live system in slot order is integrated (Verlet, pins);
// 2. collide_prepare gathers candidate shapes once for all particles;
// 3. each system in slot order: `iterations` times { its constraints in
//    creation order, runs of one kind dispatched to the kind table; then
//    collide_iteration }, then friction, then tearing (stick and range
//    constraints with a tear ratio, index order), then the range check
//    (positions beyond +-2048 m are clamped, stopped and reported as an
//    overflow (system, particle, tick));
// 4. couple: impulses to dynamic bodies.
// A world without particle systems does nothing here.
#include "../dynamics/workers.h"
#include "distance.h"
#include "pcollide.h"

// The particles a constraint writes (pin: a; angle: its arms b, c).
static uint32_t written(const ls_pcon *c, uint32_t out[2])
{
    switch (c->type) {
    case LS_PARTICLE_PIN:
        out[0] = c->a;
        return 1;
    case LS_PARTICLE_ANGLE:
        out[0] = c->b;
        out[1] = c->c;
        return 2;
    default:
        out[0] = c->a;
        out[1] = c->b;
        return 2;
    }
}

// Mark where batches start: a batch is a run of constraints of one kind no
// two of which write the same particle, so its members can be projected in
// any order, or split over workers, with the same result. Greedy in creation
// order (the builders create their constraints in such batches).
static void build_batches(ls_world *w, ls_particle_system *s)
{
    ls_particle *p = w->particles->p + s->first;
    ls_pcon *c = w->particles->con + s->con_first;
    for (uint32_t i = 0; i < s->count; i++) {
        p[i].stamp = 0;
    }
    uint32_t batch = 0;
    for (uint32_t k = 0; k < s->con_count; k++) {
        uint32_t idx[2], n = written(&c[k], idx);
        bool start = k == 0 || c[k].type != c[k - 1].type;
        for (uint32_t i = 0; i < n && !start; i++) {
            start = p[idx[i]].stamp == batch;
        }
        if (start) {
            batch++;
        }
        c[k].batch = start;
        for (uint32_t i = 0; i < n; i++) {
            p[idx[i]].stamp = batch;
        }
    }
    s->batches_dirty = false;
}

/// Batches at least this long are split over the world's workers (results
/// are the same bits for any worker count: the members are independent).
#define PARALLEL_BATCH 1024
#define PARALLEL_BLOCK 256

typedef struct relax_job {
    ls_world *w;
    ls_particle_system *s;
    ls_pcon *c;
    const ls_pcon_kind *kind;
} relax_job;

static void relax_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    (void)worker;
    relax_job *job = ctx;
    job->kind->project(job->w, job->s, job->c + begin, end - begin);
}

// Relax constraints [i, j) of s once: one batch, on the workers when long.
static void relax_batch(ls_world *w, ls_particle_system *s, ls_pcon *c, uint32_t i, uint32_t j)
{
    const ls_pcon_kind *kind = ls_pcon_kind_of_(c[i].type);
    if (w->workers && j - i >= PARALLEL_BATCH) {
        relax_job job = {w, s, c + i, kind};
        ls_workers_for_(w->workers, j - i, PARALLEL_BLOCK, relax_block, &job);
    } else {
        kind->project(w, s, c + i, j - i);
    }
}

/// Batches whose bounds relax() keeps on the stack (more are found by scanning).
#define BATCHES_MAX 64

// Relax every constraint of s `iterations` times in creation order, batch
// by batch, with the collision projection after each pass.
static void relax(ls_world *w, ls_particle_system *s)
{
    ls_pcon *c = w->particles->con + s->con_first;
    uint32_t n = s->con_count, end[BATCHES_MAX], nb = 0;
    for (uint32_t k = 1; k <= n && nb < BATCHES_MAX; k++) {
        if (k == n || c[k].batch) {
            end[nb++] = k;
        }
    }
    for (uint32_t it = 0; it < s->iterations; it++) {
        uint32_t i = 0;
        for (uint32_t b = 0; b < nb; b++) {
            relax_batch(w, s, c, i, end[b]);
            i = end[b];
        }
        while (i < n) { // beyond BATCHES_MAX batches: find each end
            uint32_t j = i + 1;
            while (j < n && !c[j].batch) {
                j++;
            }
            relax_batch(w, s, c, i, j);
            i = j;
        }
        ls_particles_collide_iteration_(w, s, it);
    }
}

// Tear sticks and ranges stretched beyond tear x rest (range: x max).
static void tear(ls_world *w, uint32_t si, ls_particle_system *s)
{
    ls_particle_store *ps = w->particles;
    ls_pcon *c = ps->con + s->con_first;
    const ls_vec3 *x = ps->x + s->first;
    for (uint32_t k = 0; k < s->con_count; k++) {
        ls_pcon *ck = &c[k];
        if (ck->tear == 0 || !ls_pcon_active_(ck) ||
            (ck->type != LS_PARTICLE_STICK && ck->type != LS_PARTICLE_RANGE)) {
            continue;
        }
        ls_fx rest = ck->type == LS_PARTICLE_STICK ? ck->rest : ck->rest_max;
        int64_t limit = ((int64_t)ck->tear * rest + 0x8000) >> 16; // < 2^29
        int64_t d0 = ls_pcon_clamp_delta_((int64_t)x[ck->b].x - x[ck->a].x);
        int64_t d1 = ls_pcon_clamp_delta_((int64_t)x[ck->b].y - x[ck->a].y);
        int64_t d2 = ls_pcon_clamp_delta_((int64_t)x[ck->b].z - x[ck->a].z);
        if (d0 * d0 + d1 * d1 + d2 * d2 <= limit * limit) {
            continue;
        }
        ck->flags |= LS_PCON_F_TORN;
        ck->wa = ck->wb = 0;
        if (ps->event_count < LS_PARTICLE_EVENTS_MAX) {
            ls_particle_event *e = &ps->events[ps->event_count++];
            e->system = ls_particle_system_id_of_(w, si);
            e->constraint = k;
            e->a = ck->a;
            e->b = ck->b;
        } else {
            w->info.capacity_exceeded = true;
        }
    }
}

static bool in_range(ls_vec3 v)
{
    return ls_fx_abs(v.x) <= LS_PARTICLE_POS_MAX && ls_fx_abs(v.y) <= LS_PARTICLE_POS_MAX &&
           ls_fx_abs(v.z) <= LS_PARTICLE_POS_MAX;
}

static ls_vec3 clamp_pos(ls_vec3 v)
{
    const ls_fx m = LS_PARTICLE_POS_MAX;
    return ls_vec3_make(ls_fx_clamp(v.x, -m, m), ls_fx_clamp(v.y, -m, m), ls_fx_clamp(v.z, -m, m));
}

static void check_range(ls_world *w, uint32_t si, ls_particle_system *s)
{
    ls_particle_store *ps = w->particles;
    ls_vec3 *x = ps->x + s->first, *xo = ps->x_old + s->first;
    for (uint32_t i = 0; i < s->count; i++) {
        if (!in_range(x[i])) {
            ls_particles_report_overflow_(w, si, i);
            x[i] = clamp_pos(x[i]);
            xo[i] = x[i];
        }
    }
}

void ls_particles_step_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    if (!ps || ps->system_count == 0) {
        return;
    }
    ps->event_count = 0;
    ps->event_tick = w->tick + 1;
    for (uint32_t si = 0; si < ps->system_high; si++) {
        if (ps->systems[si].alive) {
            ls_particles_integrate_(w, &ps->systems[si]);
        }
    }
    ls_particles_collide_prepare_(w);
    for (uint32_t si = 0; si < ps->system_high; si++) {
        ls_particle_system *s = &ps->systems[si];
        if (!s->alive) {
            continue;
        }
        if (s->batches_dirty) {
            build_batches(w, s);
        }
        relax(w, s);
        ls_particles_friction_(w, s);
        tear(w, si, s);
        check_range(w, si, s);
    }
    ls_pcollide_pair_friction_(w);
    ls_particles_couple_(w);
}
