// SPDX-License-Identifier: MIT
// Persistent contacts. Contacts and determinism: the broad phase yields pairs
// sorted by (a, b); contacts are created in exactly that order and kept sorted,
// so the solver (which is order-dependent) visits them in an order that depends
// only on body ids. Last step's contacts are matched by a merge walk over the
// two sorted lists, and points by feature id, to carry impulses (warm start).
#include "../collision/collide.h"
#include "../world/world_internal.h"

#include <string.h>

static bool pair_less(uint32_t a0, uint32_t b0, uint32_t a1, uint32_t b1)
{
    return a0 < a1 || (a0 == a1 && b0 < b1);
}

static bool body_active(const ls_body *b)
{
    return b->type == LS_BODY_KINEMATIC || (b->type == LS_BODY_DYNAMIC && !b->asleep);
}

static void push_event(ls_world *w, bool begin, uint32_t a, uint32_t b)
{
    ls_contact_event e = {ls_world_id_of_(w, a), ls_world_id_of_(w, b)};
    if (begin) {
        w->begin_events[w->begin_count++] = e;
    } else {
        w->end_events[w->end_count++] = e;
    }
}

// A contact that existed last step is gone: report it and wake sleepers it held.
static void contact_ended(ls_world *w, const ls_contact *old)
{
    push_event(w, false, old->a, old->b);
    ls_body *a = &w->bodies[old->a], *b = &w->bodies[old->b];
    if (a->asleep) {
        ls_body_wake_(a);
    }
    if (b->asleep) {
        ls_body_wake_(b);
    }
}

// The old point to warm-start point i from: the one with the same feature id,
// else the nearest old point within 2 cm (feature ids of clipped vertices can
// flip when faces are exactly aligned, as in stacks). Ties go to the lower index.
static int matching_point(const ls_contact *c, int i, const ls_contact *old)
{
    for (int j = 0; j < old->m.count; j++) {
        if (old->m.points[j].feature == c->m.points[i].feature) {
            return j;
        }
    }
    const uint64_t reach = (uint64_t)1311 * 1311; // (0.02 m)^2 in Q32.32
    uint64_t best = reach + 1;
    int found = -1;
    for (int j = 0; j < old->m.count; j++) {
        uint64_t d = ls_vec3_len_sq_q32(ls_vec3_sub(old->m.points[j].point, c->m.points[i].point));
        if (d < best) {
            best = d;
            found = j;
        }
    }
    return found;
}

// Copy cached impulses from the old manifold (warm starting).
static void warm_start_from(ls_contact *c, const ls_contact *old)
{
    for (int i = 0; i < c->m.count; i++) {
        int j = old ? matching_point(c, i, old) : -1;
        c->normal_impulse[i] = j >= 0 ? old->normal_impulse[j] : 0;
        c->tangent_impulse[i][0] = j >= 0 ? old->tangent_impulse[j][0] : 0;
        c->tangent_impulse[i][1] = j >= 0 ? old->tangent_impulse[j][1] : 0;
    }
}

// Narrow phase for one broad-phase pair; returns false when the buffer is full.
static bool process_pair(ls_world *w, ls_pair pr, const ls_contact *old)
{
    if (w->contact_count == w->def.max_contacts) {
        w->info.capacity_exceeded = true;
        return false;
    }
    const ls_body *a = &w->bodies[pr.a], *b = &w->bodies[pr.b];
    ls_contact *c = &w->contacts[w->contact_count];
    if (!body_active(a) && !body_active(b)) {
        if (old) { // both at rest: keep the contact exactly as it was
            *c = *old;
            w->contact_count++;
        }
        return true;
    }
    memset(c, 0, sizeof *c);
    c->a = pr.a;
    c->b = pr.b;
    if (ls_collide(&a->geom, &a->xf, &b->geom, &b->xf, w->def.contact_margin, &c->m) == 0) {
        if (old) {
            contact_ended(w, old);
        }
        return true;
    }
    warm_start_from(c, old);
    if (!old) {
        push_event(w, true, pr.a, pr.b);
    }
    w->contact_count++;
    return true;
}

void ls_world_update_contacts_(ls_world *w)
{
    bool overflow = false;
    uint32_t npairs = ls_broadphase_pairs(w->bp, w->pairs, w->max_pairs, &overflow);
    w->info.capacity_exceeded |= overflow;
    ls_contact *old = w->contacts;
    uint32_t old_count = w->contact_count;
    w->contacts = w->contacts_old;
    w->contacts_old = old;
    w->contact_count = 0;
    w->begin_count = w->end_count = 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < npairs; i++) {
        ls_pair pr = w->pairs[i];
        while (j < old_count && pair_less(old[j].a, old[j].b, pr.a, pr.b)) {
            contact_ended(w, &old[j++]); // its AABBs no longer overlap
        }
        const ls_contact *match = NULL;
        if (j < old_count && old[j].a == pr.a && old[j].b == pr.b) {
            match = &old[j++];
        }
        if (!process_pair(w, pr, match)) {
            break;
        }
    }
    for (; j < old_count; j++) {
        contact_ended(w, &old[j]);
    }
    ls_fx deepest = 0;
    for (uint32_t c = 0; c < w->contact_count; c++) {
        for (int k = 0; k < w->contacts[c].m.count; k++) {
            deepest = ls_fx_max(deepest, w->contacts[c].m.points[k].depth);
        }
    }
    w->info.contacts = w->contact_count;
    w->info.max_penetration = deepest;
}
