// SPDX-License-Identifier: MIT
// Particle-particle collisions between systems (SPEC.md §25.6): two particles
// of different systems that both collide with particles
// (LS_PSYS_F_COLLIDE_PARTICLES; particle bodies excepted) keep at least the
// sum of their radii apart. Within one system particles do not collide (the
// builders use one-sided sticks for self-collision, seed §2.6).
//
// Search, once per tick: a particle whose swept box meets another colliding
// system's box enters a uniform grid (cell = twice the largest reach, so a
// pair within reach lies in adjacent cells) hashed into a power-of-two bucket
// table and counting-sorted by bucket. Entries are made in canonical order
// (system slot, particle index) and the sort is stable; each entry looks at
// the 27 cells around it (an entry is compared with its own cell, never with
// the bucket alone, so a hash collision cannot list a pair twice) for
// partners later in canonical order, sorts them, and appends: the pair list
// comes out sorted by (a, b) in canonical order whatever the table size.
// Memory is pre-sized from the world definition; more pairs than the capacity
// keep the first in canonical order and set capacity_exceeded.
//
// Projection: in each iteration of either system, exact distance (an integer
// square root), the overlap split by the particles' effective inverse masses
// with ls_pcon_pair_weights_ (equal masses move by the same rounded vector, so
// the pair's momentum is exact). Coincident centres separate along +y.
#include "pcollide.h"

#include <string.h>

static bool collides_with_particles(const ls_particle_system *s)
{
    return s->alive && (s->flags & LS_PSYS_F_COLLIDE_PARTICLES) && s->kind != LS_PARTICLES_BODY &&
           s->count > 0;
}

static ls_fx norm1(ls_vec3 v)
{
    return ls_fx_add(ls_fx_add(ls_fx_abs(v.x), ls_fx_abs(v.y)), ls_fx_abs(v.z));
}

static ls_aabb swept_box(ls_vec3 xs, ls_vec3 x, ls_fx reach)
{
    ls_vec3 e = ls_vec3_make(reach, reach, reach);
    ls_aabb b = {ls_vec3_sub(ls_vec3_min(xs, x), e), ls_vec3_add(ls_vec3_max(xs, x), e)};
    return b;
}

static bool overlap(const ls_aabb *a, const ls_aabb *b)
{
    return a->min.x <= b->max.x && b->min.x <= a->max.x && a->min.y <= b->max.y &&
           b->min.y <= a->max.y && a->min.z <= b->max.z && b->min.z <= a->max.z;
}

static int32_t cell_of(ls_fx x, int64_t h)
{
    int64_t v = x;
    return (int32_t)(v >= 0 ? v / h : -((-v + h - 1) / h));
}

static uint32_t hash_cell(int32_t cx, int32_t cy, int32_t cz, uint32_t mask)
{
    uint32_t h =
        ((uint32_t)cx * 73856093u) ^ ((uint32_t)cy * 19349663u) ^ ((uint32_t)cz * 83492791u);
    return h & mask;
}

static uint64_t key_of(const ls_pgrid_entry *e)
{
    return ((uint64_t)e->slot << 32) | e->pi;
}

// Every particle of a colliding system whose swept box meets another
// colliding system's box, in canonical order; returns the largest reach.
static ls_fx fill_grid(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    uint32_t flagged = 0;
    for (uint32_t si = 0; si < ps->system_high; si++) {
        flagged += collides_with_particles(&ps->systems[si]);
    }
    if (flagged < 2) {
        return 0;
    }
    for (uint32_t si = 0; si < ps->system_high; si++) {
        const ls_particle_system *s = &ps->systems[si];
        if (!collides_with_particles(s)) {
            continue;
        }
        ls_aabb b = {ls_vec3_make(LS_FX_MAX, LS_FX_MAX, LS_FX_MAX),
                     ls_vec3_make(LS_FX_MIN, LS_FX_MIN, LS_FX_MIN)};
        for (uint32_t i = 0; i < s->count; i++) {
            uint32_t k = s->first + i;
            ls_fx reach =
                ls_fx_add(ls_fx_add(ps->p[k].radius, norm1(ls_vec3_sub(ps->x[k], ps->x_old[k]))),
                          LS_PCOLLIDE_SKIN);
            ls_aabb pb = swept_box(ps->x_old[k], ps->x[k], reach);
            b.min = ls_vec3_min(b.min, pb.min);
            b.max = ls_vec3_max(b.max, pb.max);
        }
        pc->sys_box[si] = b;
    }
    ls_fx widest = 0;
    for (uint32_t si = 0; si < ps->system_high; si++) {
        const ls_particle_system *s = &ps->systems[si];
        if (!collides_with_particles(s)) {
            continue;
        }
        for (uint32_t i = 0; i < s->count; i++) {
            uint32_t k = s->first + i;
            ls_fx reach =
                ls_fx_add(ls_fx_add(ps->p[k].radius, norm1(ls_vec3_sub(ps->x[k], ps->x_old[k]))),
                          LS_PCOLLIDE_SKIN);
            ls_aabb pb = swept_box(ps->x_old[k], ps->x[k], reach);
            bool near = false;
            for (uint32_t sj = 0; sj < ps->system_high && !near; sj++) {
                near = sj != si && collides_with_particles(&ps->systems[sj]) &&
                       overlap(&pb, &pc->sys_box[sj]);
            }
            if (!near) {
                continue;
            }
            ls_pgrid_entry *e = &pc->grid[pc->grid_count++];
            e->index = k;
            e->slot = si;
            e->pi = i;
            e->reach = reach;
            widest = ls_fx_max(widest, reach);
        }
    }
    return widest;
}

// Insert partner q into the sorted list of n partners (by canonical key).
static void insert_sorted(const ls_pgrid_entry *grid, uint32_t *list, uint32_t n, uint32_t q)
{
    uint32_t j = n;
    while (j > 0 && key_of(&grid[list[j - 1]]) > key_of(&grid[q])) {
        list[j] = list[j - 1];
        j--;
    }
    list[j] = q;
}

void ls_pcollide_find_pairs_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    pc->pair_count = 0;
    pc->grid_count = 0;
    if (pc->bucket_count == 0) {
        return;
    }
    ls_fx widest = fill_grid(w);
    if (pc->grid_count < 2) {
        return;
    }
    int64_t h = 2 * (int64_t)widest + 1; // cell: pairs within reach_a + reach_b <= h
    uint32_t mask = pc->bucket_count - 1;
    memset(pc->bucket, 0, ((size_t)pc->bucket_count + 1) * sizeof *pc->bucket);
    for (uint32_t g = 0; g < pc->grid_count; g++) {
        ls_pgrid_entry *e = &pc->grid[g];
        ls_vec3 x = ps->x[e->index];
        e->cell[0] = cell_of(x.x, h);
        e->cell[1] = cell_of(x.y, h);
        e->cell[2] = cell_of(x.z, h);
        pc->bucket[hash_cell(e->cell[0], e->cell[1], e->cell[2], mask) + 1]++;
    }
    for (uint32_t b = 0; b < pc->bucket_count; b++) {
        pc->bucket[b + 1] += pc->bucket[b];
    }
    // Stable scatter (canonical order within a bucket); bucket[b] ends at the
    // start of bucket b + 1, so shift back afterwards.
    for (uint32_t g = 0; g < pc->grid_count; g++) {
        const ls_pgrid_entry *e = &pc->grid[g];
        pc->sorted[pc->bucket[hash_cell(e->cell[0], e->cell[1], e->cell[2], mask)]++] = *e;
    }
    for (uint32_t b = pc->bucket_count; b > 0; b--) {
        pc->bucket[b] = pc->bucket[b - 1];
    }
    pc->bucket[0] = 0;
    uint32_t partners[LS_PCOLLIDE_PARTNERS];
    for (uint32_t g = 0; g < pc->grid_count; g++) {
        const ls_pgrid_entry *e = &pc->grid[g];
        uint64_t ke = key_of(e);
        ls_vec3 xe = ps->x[e->index];
        uint32_t n = 0;
        for (int dz = -1; dz <= 1; dz++) {
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    int32_t c[3] = {e->cell[0] + dx, e->cell[1] + dy, e->cell[2] + dz};
                    uint32_t b = hash_cell(c[0], c[1], c[2], mask);
                    for (uint32_t q = pc->bucket[b]; q < pc->bucket[b + 1]; q++) {
                        const ls_pgrid_entry *f = &pc->sorted[q];
                        if (f->cell[0] != c[0] || f->cell[1] != c[1] || f->cell[2] != c[2] ||
                            f->slot == e->slot || key_of(f) <= ke) {
                            continue;
                        }
                        uint64_t reach = (uint64_t)e->reach + (uint64_t)f->reach;
                        ls_vec3 d = ls_vec3_sub(ps->x[f->index], xe);
                        if (ls_vec3_len_sq_q32(d) > reach * reach) {
                            continue;
                        }
                        if (n == LS_PCOLLIDE_PARTNERS) {
                            w->info.capacity_exceeded = true;
                            continue;
                        }
                        insert_sorted(pc->sorted, partners, n++, q);
                    }
                }
            }
        }
        for (uint32_t j = 0; j < n; j++) {
            const ls_pgrid_entry *f = &pc->sorted[partners[j]];
            ls_fx wa, wb;
            ls_pcon_pair_weights_(ps->p[e->index].w, ps->p[f->index].w, LS_FX_ONE, &wa, &wb);
            if (wa == 0 && wb == 0) {
                continue; // both immovable
            }
            if (pc->pair_count == pc->pair_cap) {
                w->info.capacity_exceeded = true;
                return;
            }
            ls_ppair *p = &pc->pairs[pc->pair_count++];
            p->a = e->index;
            p->b = f->index;
            p->sa = e->slot;
            p->sb = f->slot;
            p->rsum = ls_fx_add(ps->p[e->index].radius, ps->p[f->index].radius);
            p->wa = wa;
            p->wb = wb;
            p->depth_sum = 0;
            p->n = ls_vec3_zero();
        }
    }
}

void ls_pcollide_project_pairs_(ls_world *w, uint32_t si)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    ls_vec3 *x = ps->x;
    for (uint32_t k = 0; k < pc->pair_count; k++) {
        ls_ppair *p = &pc->pairs[k];
        if (p->sa != si && p->sb != si) {
            continue;
        }
        ls_vec3 d = ls_vec3_sub(x[p->b], x[p->a]);
        uint64_t r = (uint64_t)(p->rsum > 0 ? p->rsum : 0);
        if (ls_vec3_len_sq_q32(d) >= r * r) {
            continue;
        }
        ls_fx corr = ls_fx_sub(p->rsum, ls_vec3_len(d));
        ls_vec3 n = ls_vec3_normalize(d, ls_vec3_make(0, LS_FX_ONE, 0));
        ls_vec3 t = ls_vec3_scale(n, corr);
        x[p->a] = ls_vec3_sub(x[p->a], ls_vec3_scale(t, p->wa));
        x[p->b] = ls_vec3_add(x[p->b], ls_vec3_scale(t, p->wb));
        p->depth_sum = ls_fx_add(p->depth_sum, corr);
        p->n = n;
    }
}

// Friction of the pairs (SPEC.md §25.6), once per tick after every system, in
// pair order: the shape friction's rule (friction.c) between two particles.
// With mu = sqrt(mu_a mu_b) (the systems' frictions), D the pair's projected
// overlap this tick and t the tangential part (to the last projection's n) of
// b's displacement over the tick relative to a's, (x_b - x*_b) - (x_a - x*_a):
// |t| <= mu D sticks (t is removed), else |t| is shortened by mu D; the
// correction c is shared as the overlap is (a += c wa, b -= c wb), so equal
// masses move by the same rounded vector and the pair's momentum is kept.
void ls_pcollide_pair_friction_(ls_world *w)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps ? ps->collide : NULL;
    if (!pc) {
        return;
    }
    ls_vec3 *x = ps->x, *xo = ps->x_old;
    for (uint32_t k = 0; k < pc->pair_count; k++) {
        const ls_ppair *p = &pc->pairs[k];
        ls_fx fa = ps->systems[p->sa].friction, fb = ps->systems[p->sb].friction;
        if (p->depth_sum <= 0 || fa <= 0 || fb <= 0) {
            continue;
        }
        ls_fx limit = ls_fx_mul(ls_fx_sqrt(ls_fx_mul(fa, fb)), p->depth_sum);
        if (limit <= 0) {
            continue;
        }
        ls_vec3 dx = ls_vec3_sub(ls_vec3_sub(x[p->b], xo[p->b]), ls_vec3_sub(x[p->a], xo[p->a]));
        ls_vec3 c;
        if (!ls_pcollide_friction_correction_(dx, p->n, limit, &c)) {
            continue;
        }
        x[p->a] = ls_vec3_add(x[p->a], ls_vec3_scale(c, p->wa));
        x[p->b] = ls_vec3_sub(x[p->b], ls_vec3_scale(c, p->wb));
    }
}
